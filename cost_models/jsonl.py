"""JSONL reading and writing: :mod:`utilityguard_base.jsonl`, re-exported under its older home."""

from __future__ import annotations

from utilityguard_base.jsonl import *  # noqa: F403 - re-exported
from utilityguard_base.jsonl import __all__ as __all__
