"""The OpenAI-compatible chat client: :mod:`utilityguard_base.upstream`, re-exported under its
older home."""

from __future__ import annotations

from utilityguard_base.upstream import *  # noqa: F403 - re-exported
from utilityguard_base.upstream import __all__ as __all__
