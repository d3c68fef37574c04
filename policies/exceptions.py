"""The error tree of :mod:`utilityguard_base.exceptions` (drawn in its docstring), re-exported
under its older home: the errors the policy functions raise are
:class:`~utilityguard_base.exceptions.InvalidValueError`'s."""

from __future__ import annotations

from utilityguard_base.exceptions import *  # noqa: F403 - the whole tree, re-exported
from utilityguard_base.exceptions import __all__ as __all__
