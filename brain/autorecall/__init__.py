"""Automatic recall: on every prompt, the notes of the vault that bear on it, put in front of the agent.

``brain hook prompt`` (``hook.py``) is Claude Code's UserPromptSubmit hook: it asks the running
``brain serve`` (never a model of its own), keeps the notes whose best passage is close enough to
the prompt (``select.py``), prints them as additional context, and records what it showed, or why
it showed nothing, in the ``recalls`` table (``store.py``); ``brain recalls`` reads it (``cli.py``).
"""
