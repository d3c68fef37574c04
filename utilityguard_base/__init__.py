"""What every package of utilityguard shares, below all of them: it imports none of them.

* :mod:`~utilityguard_base.exceptions` — every error class, one tree under
  ``UtilityGuardError`` (drawn in its docstring); standard library only.
* :mod:`~utilityguard_base.checks` — the checks of one value (cost, ``C_R``, probability),
  each naming the argument, and the default ``C_R``; standard library only.
* :mod:`~utilityguard_base.options` — the command line's ``--c-r`` option (argparse).
* :mod:`~utilityguard_base.jsonl` — reading and writing JSONL, a bad line named in an error.
* :mod:`~utilityguard_base.progress` — the progress display of the long commands (rich).
* :mod:`~utilityguard_base.bounds` — the pydantic field types of bounded numbers.
* :mod:`~utilityguard_base.wellformed` — well-formed text and standard JSON.
* :mod:`~utilityguard_base.upstream` — the one OpenAI-compatible chat client (httpx), where
  httpx errors enter the tree.

Importing this package imports none of its modules: each loads only what it needs.
"""
