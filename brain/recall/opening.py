"""Opening a ``Recaller`` over a vault: the one place where recall meets the indexer.

``brain ask``, ``brain eval`` and the server all open their recaller here. Before answering,
notes changed since the last index are indexed (``update=True``), sharing one model load with
the recaller; with ``update=False``, or when the index cannot be written now (another writer,
a read-only brain home), the index answers as it is and the result says how many notes are
stale. Nothing is ever answered silently from a stale index.
"""

from __future__ import annotations

import logging
import os
import time
from collections.abc import Callable, Sequence
from pathlib import Path
from typing import TYPE_CHECKING

from .. import config
from ..embed import Embedder, LazyEmbedder
from ..errors import EmptyIndexError, IndexBusyError, IndexDamagedError, NoIndexError, NotWritableError
from ..index.files import INDEX_FILE
from ..index.health import CHUNKS_FTS_TABLES, built_index_dir, index_errors, missing_table_message, refuse_lost_meta
from ..index.store import IndexStore
from ..text import plural, shell_word
from ..vault import resolve_vault
from .pipeline import GRAPH_FAILURES, LANE_FAILURES, DiskCache, Recaller

if TYPE_CHECKING:
    from ..index.changes import Plan

log = logging.getLogger("brain")


def open_recaller(
    vault: str | os.PathLike[str] | None,
    *,
    update: bool = True,
    build: bool = False,
    progress: bool = False,
    embedder: Embedder | None = None,
    rerank_model: str | bool | None = True,
    as_of: float | None = None,
    valid_at: str | None = None,
) -> Recaller:
    """A ``Recaller`` over ``vault``'s index, brought up to date first when ``update``.

    ``build`` indexes a vault that has no index yet (``brain eval``); otherwise a missing index
    is a ``NoIndexError`` telling the user to run ``brain index``. ``embedder`` is used as is
    (tests, benchmarks); by default the index's own model is loaded on first use.
    ``as_of`` (Unix time) recalls over the vault as brain knew it then; ``valid_at`` (an ISO
    date) only over notes that say they held on that day (``recall/past.py``).
    """
    root = resolve_vault(vault)
    directory = config.index_dir(root)
    lazy = embedder or LazyEmbedder(config.embed_model_name())
    if build and not (directory / INDEX_FILE).exists():
        _index(root, lazy, embedder, progress)
    built_index_dir(root)
    with index_errors(directory, root):
        store = IndexStore.open(directory, create=False, readonly_ok=True)
        try:
            return _open(root, store, lazy, embedder, update or build, progress, rerank_model, as_of, valid_at)
        except BaseException:
            store.close()
            raise


def _open(
    root: Path,
    store: IndexStore,
    lazy: Embedder,
    embedder: Embedder | None,
    update: bool,
    progress: bool,
    rerank_model: str | bool | None,
    as_of: float | None = None,
    valid_at: str | None = None,
) -> Recaller:
    from ..index import changes
    from ..index.indexer import link_fences_changed
    from ..index.settings_fit import check_model

    timings: dict[str, float] = {}
    warnings: list[str] = []
    stale = 0
    started = time.perf_counter()
    refuse_lost_meta(store, root)
    check_model(store, lazy.name)
    # A table the present's answer does not read (a history's, tags) gone: answered, exit 0,
    # without a word; the answer now says it and its fix (--as-of fails: ``_history_warnings``).
    # One it reads fails the answer with that line: not said twice
    missing = store.missing_tables() if as_of is None else []
    if missing and not ANSWER_FAILS_WITHOUT.intersection(missing):
        warnings.append(missing_table_message(store.directory / INDEX_FILE, root, missing))
    plan = changes.plan(root, store, meanwhile=_import_search)
    pending = plan.pending
    gone: set[int] = set()  # notes whose file is gone, while the index still holds them
    relink = link_fences_changed(store)  # the links are read again, though no note changed
    if (pending or relink) and update:
        why = _update(root, store, lazy, embedder, progress)
        if why and pending:
            stale, gone = _stale(plan, store), set(plan.deleted.values())
            warnings.append(
                f"{plural(stale, 'note')} changed since the last index and it cannot be updated now ({why}); "
                "answering from the index as it is" + _left_out(gone, plan)
            )
        elif why:
            warnings.append(
                f"BRAIN_LINK_FENCES changed since the last index and its links cannot be read again now ({why}); "
                "answering with the links as they were"
            )
    elif pending:
        stale, gone = _stale(plan, store), set(plan.deleted.values())
        warnings.append(
            f"{plural(stale, 'note')} changed since the last index (--no-update): results may be stale"
            + _left_out(gone, plan)
            + "; run `brain index`"
        )
    elif relink:
        warnings.append(
            "BRAIN_LINK_FENCES changed since the last index: its links are as they were read then; run `brain index`"
        )
    if not store.get_meta("model"):  # nothing embedded: the vault has no notes, or they wait
        raise NoIndexError(_empty_message(root, store, warnings))
    for message in warnings:
        log.warning("%s", message)
    timings["update"] = _ms(started)
    started = time.perf_counter()
    from ..index.vectors import load_current

    dim = int(store.get_meta("dim") or 0)
    view: IndexStore = store
    if as_of is not None or valid_at is not None:
        from .past import PastIndex, slice_vectors

        warnings += _history_warnings(store, root, as_of)
        view = PastIndex(store, as_of=as_of, valid_at=valid_at)
        vectors = slice_vectors(view, dim) if as_of is not None else load_current(store, dim)
    else:
        vectors = load_current(store, dim)
    timings["load_index"] = _ms(started)
    # The names and link graph an earlier run kept (recall/cache.py), kept again only where the
    # index can be written: the present's, which a view of the past takes over and patches
    # (recall/past_carry.py).
    disk_cache: DiskCache = "read" if store.readonly else "write"
    recaller = Recaller(
        view,
        vectors,
        lazy,
        root=root,
        rerank_model=rerank_model,
        stale=stale,
        warnings=warnings,
        disk_cache=disk_cache,
    )
    recaller.timings_ms.update(timings)
    if view is store:  # the present: a note whose file is gone is never an answer (a past view had it then)
        recaller.gone = gone
    if isinstance(lazy, LazyEmbedder):  # a newer engine than the index's vectors: say so on every result
        lazy.after_load = lambda loaded: _engine_changed(store, loaded, recaller)
        if lazy.is_loaded:  # loaded already by the update above
            _engine_changed(store, lazy.loaded(), recaller)
    return recaller


def _import_search() -> None:
    """What searching the vectors imports (0.1 s at the least), done in the update check's walk
    while its helper process walks in this one's place."""
    import faiss  # noqa: F401  (and numpy)


def _left_out(gone: set[int], plan: Plan) -> str:
    """The notes left out of the answer, by why: a note this user may no longer read (chmod 000)
    was said to be one "whose file is gone, deleted or renamed"."""
    if not gone:
        return ""
    denied = len(plan.unreadable())
    missing = len(gone) - denied
    said = []
    if missing:
        said.append(
            "the one whose file is gone, deleted or renamed"
            if missing == 1 and not denied
            else f"{missing} whose file is gone, deleted or renamed"
        )
    if denied:
        said.append(
            "the one this user may no longer read"
            if denied == 1 and not missing
            else f"{denied} this user may no longer read"
        )
    comma = "," if said[-1].endswith("renamed") else ""  # "the one whose file is gone, …, is"
    return f" ({' and '.join(said)}{comma} {'is' if len(gone) == 1 else 'are'} left out)"


# Tables whose loss fails a `brain ask` of the present with ``missing_table_message`` (its
# names, its chunks, its BM25 index; note_versions, read for the answer's dates)
ANSWER_FAILS_WITHOUT = frozenset(["aliases", "chunks", "note_versions"]) | CHUNKS_FTS_TABLES


def _history_warnings(store: IndexStore, root: Path, as_of: float | None) -> list[str]:
    """What ``--as-of`` cannot see: before what was pruned (a warning, each answer says it);
    before history began nothing is known, which is an error (``before_history``), and so is
    an index short of a table (``missing_tables``)."""
    from ..index.history import before_history
    from ..moments import local_time

    if as_of is None:
        return []
    # Without tags, or the texts of past versions, the past was answered in silence, read
    # wrong (no tags then, a version's text unread): the fix named instead
    lacking = store.missing_tables_message(root)
    if lacking:
        raise IndexDamagedError(lacking)
    before_history(store, as_of)
    out = []
    pruned = float(store.get_meta("history_pruned_before", "0") or 0)
    if pruned and as_of < pruned:
        out.append(
            f"history before {local_time(pruned)} was pruned (`brain prune`, BRAIN_KEEP_VERSIONS): what was replaced before is gone"
        )
    for message in out:
        log.warning("%s", message)
    return out


def _engine_changed(store: IndexStore, loaded: Embedder, recaller: Recaller) -> None:
    from ..index.indexer import warn_if_engine_changed

    message = warn_if_engine_changed(store, loaded)
    if message and message not in recaller.warnings:
        recaller.warnings.append(message)


def _update(root: Path, store: IndexStore, lazy: Embedder, embedder: Embedder | None, progress: bool) -> str | None:
    """Index what changed; None when done, else why it could not be done now."""
    from ..index.indexer import VaultEmptied
    from ..index.writer_lock import VaultLocked

    if store.readonly:
        return store.why_readonly
    try:
        _index(root, lazy, embedder, progress)
    except VaultLocked:
        return "another brain process is indexing this vault"
    except IndexBusyError:  # a writer without the vault's lock (a migration, a brain of another version)
        return "another brain process is writing the index"
    except (NotWritableError, VaultEmptied) as exc:
        return str(exc)
    return None


def open_snapshot(
    root: Path, embedder: Embedder, *, rerank_model: str | bool | None = True, previous: Recaller | None = None
) -> Recaller:
    """A ``Recaller`` pinned to the index state committed now, warmed, for a long-lived process.

    Its store holds one read transaction (``IndexStore.open_snapshot``), its vectors are the
    FAISS index of exactly that state, and the link graph, names, name index and successors are built
    from it before it is returned: a query through it never mixes two index states. It never
    indexes: ``brain serve``'s watcher does, then opens a new snapshot and swaps it in.
    ``previous``, the snapshot it replaces, lends what this state would build the same
    (``recall/carry.py``): after an edit that changed no names, the names and the link graph.
    """
    from ..index.settings_fit import check_model
    from ..index.vectors import snapshot_vectors

    directory = built_index_dir(root)
    store = IndexStore.open_snapshot(directory, split_searches=True)
    try:
        refuse_lost_meta(store, root)
        check_model(store, embedder.name)
        if not store.get_meta("model"):  # what brain ask says of it, word for word
            raise EmptyIndexError(_empty_message(root, store, []))
        started = time.perf_counter()
        vectors = snapshot_vectors(store, int(store.get_meta("dim") or 0))
        load_ms = _ms(started)
        # The first snapshot may take what a one-shot run kept on disk; the next ones take over
        # from the snapshot before them, and leave the file to one-shot runs.
        recaller = Recaller(
            store, vectors, embedder, root=root, rerank_model=rerank_model, disk_cache="off" if previous else "read"
        )
        started = time.perf_counter()
        recaller.basis(previous.basis() if previous is not None else None)  # the next snapshot compares against it
        if previous is not None:
            try:
                taken = recaller.carry_over(previous.built())
            except Exception as exc:  # noqa: BLE001 - built afresh below: slower, never wrong
                log.warning("could not take over the last snapshot's names and links (%s: %s)", type(exc).__name__, exc)
                taken = []
            log.info("new snapshot: %s taken over from the last one", ", ".join(taken) or "nothing")
        recaller.timings_ms["carry_over"] = _ms(started)
        recaller.names()
        recaller.name_index()
        try:
            recaller.folder_index().sorted_paths()  # before the swap: no query after a save waits for it
        except LANE_FAILURES as exc:  # the folders lane falls back on its own, and says so
            log.warning("could not read the folders of the snapshot (%s: %s)", type(exc).__name__, exc)
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


def open_past_view(
    present: Recaller, *, as_of: float | None = None, valid_at: str | None = None, beside: Sequence[Recaller] = ()
) -> Recaller:
    """A view of the past over the snapshot ``present`` answers from (``open_snapshot``), for a
    long-lived process: ``brain serve`` keeps a few, so a second question about the same moment
    is answered warm.

    It reads the snapshot's own read transaction (one state, the present's, however long it is
    kept), shares its FAISS index as the dense lane's base where the slice is mostly the present,
    and takes the present's names, name index and link graph from it, in memory, applying the
    difference (``recall/past_carry.py``) rather than reading them from the disk. It must go
    before ``present`` closes (its store is the snapshot's: closing the view leaves it open).
    What it answers is what ``open_recaller(as_of=..., valid_at=...)`` answers over that state.
    ``beside``: other views kept over ``present``, whose versions of unchanged notes it shares.
    """
    from ..index.vectors import VectorIndex
    from .past import PastIndex, slice_vectors

    store = present.store
    assert isinstance(present.vectors, VectorIndex)  # a snapshot of the present
    started = time.perf_counter()
    warnings = _history_warnings(store, present.root, as_of)
    others = [other.store for other in beside if isinstance(other.store, PastIndex)]
    view = PastIndex(store, as_of=as_of, valid_at=valid_at, borrowed=True, held=present.held_strings(), beside=others)
    try:
        dim = int(store.get_meta("dim") or 0)
        vectors = slice_vectors(view, dim, present.vectors) if as_of is not None else present.vectors
        recaller = Recaller(
            view,
            vectors,
            present.embedder,
            root=present.root,
            rerank_model=present.rerank_model,
            warnings=warnings,
        )
    except BaseException:
        view.close()
        raise
    recaller.lend_present(present)
    recaller.timings_ms["load_index"] = _ms(started)
    return recaller


def _stale(plan: Plan, store: IndexStore) -> int:
    """The notes changed since the index, a rename once: ``Plan.pending`` counts it twice (its
    new path and its deleted one), where `brain status` says 1 renamed."""
    from ..index import changes

    return plan.pending - changes.renamed(plan, store)


def _index(root: Path, lazy: Embedder, embedder: Embedder | None, progress: bool) -> None:
    from ..index.indexer import index_vault

    # a note whose read failed or parse raised stays skipped, as the staleness check (``_open``) left it
    index_vault(root, embedder=embedder, model_name=lazy.name, progress=progress, load=_shared(lazy), retry=False)


def _shared(lazy: Embedder) -> Callable[[str], Embedder]:
    """The indexer's model loader: the recaller's own model, loaded once for both."""

    def load(_name: str) -> Embedder:
        return lazy.loaded() if isinstance(lazy, LazyEmbedder) else lazy

    return load


def _empty_message(root: Path, store: IndexStore, warnings: list[str]) -> str:
    first = store.get_meta("indexed_at") is None
    if first:
        from ..index.writer_lock import indexing_now

        # a first `brain index` under way: "run `brain index`" sent the user to wait behind it, and
        # an ask that would update said "could not be updated now; answering from the index as it
        # is", an error that said it answered; both say whose run it is, with or without --no-update
        building = indexing_now(store.directory)
        if building is not None:
            by = f" (pid {building['pid']})" if building["pid"] else ""
            return (
                f"the index for {root} holds no notes yet: another brain process{by} is building it now; "
                f"ask again once it is done (`brain status --vault {shell_word(root)}` counts what it has left)"
            )
    if warnings and "cannot be updated" in warnings[0]:  # notes are waiting, but the update could not run
        said = warnings[0].removesuffix("; answering from the index as it is")  # nothing to answer from
        return f"the index for {root} holds no notes yet and could not be updated now: {said}"
    if first:
        return f"the index for {root} is empty: run `brain index --vault {shell_word(root)}`"
    skipped = len(store.skipped())
    return f"the vault {root} has no notes to search: `brain index` found no markdown notes in it" + (
        f" ({skipped} files skipped; `brain status --vault {shell_word(root)} -v` lists them)" if skipped else ""
    )


def _ms(started: float) -> float:
    return round((time.perf_counter() - started) * 1000, 2)
