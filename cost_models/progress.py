"""The progress display of the long commands: :mod:`utilityguard_base.progress`, re-exported under
its older home."""

from __future__ import annotations

from utilityguard_base.progress import *  # noqa: F403 - re-exported
from utilityguard_base.progress import __all__ as __all__
