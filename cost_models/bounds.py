"""The pydantic field types of bounded numbers: :mod:`utilityguard_base.bounds`, re-exported under
its older home."""

from __future__ import annotations

from utilityguard_base.bounds import *  # noqa: F403 - re-exported
from utilityguard_base.bounds import __all__ as __all__
