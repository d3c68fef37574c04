"""Well-formed text and standard JSON: :mod:`utilityguard_base.wellformed`, re-exported under its
older home."""

from __future__ import annotations

from utilityguard_base.wellformed import *  # noqa: F403 - re-exported
from utilityguard_base.wellformed import __all__ as __all__
