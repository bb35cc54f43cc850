"""`brain index --repair`: mend what the index derives from its own rows, without embedding.

The BM25 indexes (FTS5 over the chunks and the past chunks) keep no copy of the text they
index: a 'delete' handed other values than were indexed leaves entries behind, and a search
that meets one fails with "database disk image is malformed" while the database itself is
sound (`brain ask` then answers without BM25 and says so). `--rebuild` would embed every note
again: hours for a large vault on a CPU. Repair checks the database file (SQLite's
quick_check), refills each search index from its rows and has FTS5 check it (about 25 s at
100,000 notes), makes the indexes a first build stopped before making, and drops the names and
link graph kept for the next run (recall-cache.npz).
A damaged database file is a ``IndexDamagedError`` that says to rebuild.
"""

from __future__ import annotations

import contextlib
import os
import stat
import time
from collections.abc import Callable
from dataclasses import asdict, dataclass, field

from ..errors import IndexDamagedError
from ..text import shell_word
from ..vault import resolve_vault
from .files import INDEX_FILE, RECALL_CACHE_FILE
from .health import DERIVED_TABLES, built_index_dir, index_errors, rebuild_advice, refuse_lost_meta
from .store import IndexStore
from .upgrades import MIGRATIONS_TABLE
from .writer_lock import vault_lock


@dataclass
class RepairReport:
    vault: str
    rebuilt: dict[str, int] = field(default_factory=dict)  # search index → rows indexed
    indexes_made: int = 0  # those a first build stopped before making (``IndexStore.defer_indexes``)
    remade: list[str] = field(default_factory=list)  # tables dropped, made again (``DERIVED_TABLES``)
    seconds: float = 0.0  # the repair's own, the wait for another writer apart (``waited``)
    waited: float = 0.0

    def as_dict(self) -> dict:
        return asdict(self)


def repair_vault(
    vault: str | os.PathLike[str] | None, *, wait: float = 0.0, waiting: Callable[[int | None], None] | None = None
) -> RepairReport:
    """``wait`` and ``waiting``: for another writer at work (``writer_lock.vault_lock``)."""
    root = resolve_vault(vault)
    directory = built_index_dir(root)
    report = RepairReport(vault=str(root))
    missing: list[str] = []
    lost_meta: IndexDamagedError | None = None
    # an unwritable home: one line, as `index` says it
    with index_errors(directory, root), vault_lock(directory, wait=wait, waiting=waiting) as held:
        # the repair's time: one that waited for a `brain index` said "in 42.3 s" for seconds of work
        started = time.perf_counter()
        try:
            with index_errors(directory, root):
                store = IndexStore.open(directory, create=False, rerecord=True)
                try:
                    if store.recorded_again:
                        report.remade.append(MIGRATIONS_TABLE)
                    problems = store.database_problems()
                    missing = store.missing_tables()
                    if not problems and missing and set(missing) <= DERIVED_TABLES:
                        with store.transaction():  # nothing that only this index held: made again, filled below
                            report.remade += store.remake_derived_tables(missing)
                        missing = []
                    if problems:
                        raise IndexDamagedError("; ".join(problems))
                    try:  # chunks without the model of their vectors: not "repaired", and said whole
                        if not missing:
                            refuse_lost_meta(store, root)
                    except IndexDamagedError as exc:
                        lost_meta = exc
                    if not missing and lost_meta is None:
                        report.indexes_made = store.restore_indexes()
                        report.rebuilt = store.rebuild_search_indexes()
                finally:
                    store.close()
        except IndexDamagedError as exc:  # not a search index out of step: a repair cannot mend it
            raise IndexDamagedError(
                f"the index database {directory / INDEX_FILE} is damaged beyond its search index ({_reason(exc)}):"
                f" run `brain index --rebuild --vault {shell_word(root)}` to build a new one; this one's history cannot"
                " be read to carry over, and stays in it, moved aside (not deleted)"
            ) from exc
        if lost_meta is not None:
            raise lost_meta
        if missing:  # rows went with a table: only a new index has them, this one's history carried
            raise IndexDamagedError(
                f"the index database {directory / INDEX_FILE} lacks a table whose rows it cannot make again"
                f" (no such table: {', '.join(missing)}); {rebuild_advice(root, missing)}"
            )
        cache_file = directory / RECALL_CACHE_FILE  # derived from the rows
        with contextlib.suppress(FileNotFoundError):
            if not stat.S_ISDIR(os.lstat(cache_file).st_mode):  # a folder is the user's: `brain ask` names it
                cache_file.unlink()
    report.seconds = round(time.perf_counter() - started, 2)
    report.waited = round(held.waited, 2)
    return report


def _reason(exc: IndexDamagedError) -> str:
    cause = exc.__cause__
    return str(cause) if cause is not None else str(exc)
