"""Integrations of the guard with other frameworks, each in its own module (optional extras).

* :mod:`guard.integrations.litellm` — a LiteLLM proxy guardrail (``pip install
  'utilityguard[litellm]'``), configured in LiteLLM's ``config.yaml``;
* :mod:`guard.integrations.langchain` — a LangChain runnable around any chat model
  (``pip install 'utilityguard[langchain]'``).

Nothing is imported here: each module imports its framework, which is only installed with
its extra.
"""
