"""Opening a ``Recaller`` over a vault: the one place where recall meets the indexer.

``brain ask``, ``brain eval`` and the server all open their recaller here. Before answering,
notes changed since the last index are indexed (``update=True``), sharing one model load with
the recaller; with ``update=False`` the index answers as it is and the result says how many
notes are stale. Nothing is ever answered silently from a stale index.
"""

from __future__ import annotations

import logging
import os
import time
from pathlib import Path

from .. import config
from ..embed import Embedder, LazyEmbedder
from ..errors import NoIndexError
from ..vault import resolve_vault
from .pipeline import GRAPH_FAILURES, Recaller

log = logging.getLogger("brain")


def open_recaller(
    vault: str | os.PathLike[str] | None,
    *,
    update: bool = True,
    build: bool = False,
    progress: bool = False,
    embedder: Embedder | None = None,
    rerank_model: str | None | bool = True,
) -> Recaller:
    """A ``Recaller`` over ``vault``'s index, brought up to date first when ``update``.

    ``build`` indexes a vault that has no index yet (``brain eval``); otherwise a missing index
    is a ``NoIndexError`` telling the user to run ``brain index``. ``embedder`` is used as is
    (tests, benchmarks); by default the index's own model is loaded on first use.
    """
    from ..indexer import VaultLocked, check_model, index_vault, pending_changes
    from ..store import IndexStore
    from ..vectors import load_current

    root = resolve_vault(vault)
    directory = config.index_dir(root)
    model = embedder.name if embedder else config.embed_model_name()
    lazy = embedder or LazyEmbedder(model)
    if build and not (directory / "index.db").exists():
        index_vault(root, embedder=embedder, model_name=model, progress=progress, load=_shared(lazy))
    if not (directory / "index.db").exists():
        raise NoIndexError(f"no index for {root} yet: run `brain index --vault {root}` first")
    warnings: list[str] = []
    stale = 0
    timings: dict[str, float] = {}
    started = time.perf_counter()
    store = IndexStore.open(directory, create=False)
    try:
        check_model(store, model)
        if build and store.get_meta("model") is None:  # an empty index: a build that embedded nothing yet
            index_vault(root, embedder=embedder, model_name=model, progress=progress, load=_shared(lazy))
        if not store.get_meta("model"):
            raise NoIndexError(f"the index for {root} is empty: run `brain index --vault {root}`")
        pending = pending_changes(root, store)
        if pending and update:
            try:
                index_vault(root, embedder=embedder, model_name=model, progress=progress, load=_shared(lazy))
            except VaultLocked:
                stale = pending
                warnings.append(
                    f"{pending} notes changed since the last index and another `brain index` is running; "
                    "answering from the index as it is"
                )
        elif pending:
            stale = pending
            warnings.append(
                f"{pending} notes changed since the last index (--no-update): results may be stale; run `brain index`"
            )
        for message in warnings:
            log.warning("%s", message)
        timings["update"] = _ms(started)
        started = time.perf_counter()
        vectors = load_current(store, int(store.get_meta("dim") or 0))
        timings["load_index"] = _ms(started)
    except BaseException:
        store.close()
        raise
    recaller = Recaller(store, vectors, lazy, root=root, rerank_model=rerank_model, stale=stale, warnings=warnings)
    recaller.timings_ms.update(timings)
    return recaller


def open_snapshot(root: Path, embedder: Embedder, *, rerank_model: str | None | bool = True) -> Recaller:
    """A ``Recaller`` pinned to the index state committed now, warmed, for a long-lived process.

    Its store holds one read transaction (``IndexStore.open_snapshot``), its vectors are the
    FAISS index of exactly that state, and the link graph, names and successors are built
    from it before it is returned: a query through it never mixes two index states. It never
    indexes: ``brain serve``'s watcher does, then opens a new snapshot and swaps it in.
    """
    from ..indexer import check_model
    from ..store import IndexStore
    from ..vectors import snapshot_vectors

    directory = config.index_dir(root)
    if not (directory / "index.db").exists():
        raise NoIndexError(f"no index for {root} yet: run `brain index --vault {root}` first")
    store = IndexStore.open_snapshot(directory)
    try:
        check_model(store, embedder.name)
        if not store.get_meta("model"):
            raise NoIndexError(f"the index for {root} is empty: run `brain index --vault {root}`")
        started = time.perf_counter()
        vectors = snapshot_vectors(store, int(store.get_meta("dim") or 0))
        load_ms = _ms(started)
        recaller = Recaller(store, vectors, embedder, root=root, rerank_model=rerank_model)
        recaller.names()
        try:
            recaller.link_graph()
            recaller.successors()
        except GRAPH_FAILURES as exc:  # the queries fall back on their own, and say so
            log.warning("could not build the link graph of the snapshot (%s: %s)", type(exc).__name__, exc)
    except BaseException:
        store.close()
        raise
    recaller.timings_ms["load_index"] = load_ms
    return recaller


def _ms(started: float) -> float:
    return round((time.perf_counter() - started) * 1000, 2)


def _shared(lazy: Embedder):  # -> Callable[[str], Embedder]
    """The indexer's model loader: the recaller's own model, loaded once for both."""
    def load(_name: str) -> Embedder:
        return lazy.loaded() if isinstance(lazy, LazyEmbedder) else lazy

    return load
