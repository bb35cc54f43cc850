"""`brain prune`: bound what history keeps, under the vault's writer lock.

``--before DATE`` drops what stopped being current before DATE (past versions, the chunks only
they held, closed edges); ``BRAIN_KEEP_VERSIONS`` (when set to a number) is applied to every
note, including those no run has touched since it was lowered. SQLite reuses the pages freed;
``vacuum`` gives them back to the disk (it rewrites the database: slow on a big index, and it
needs room for a copy). ``vacuum`` alone drops nothing: it compacts what deleted notes and
earlier prunes left free.
"""

from __future__ import annotations

import os
import time
from collections.abc import Callable

from .. import config
from ..errors import ConfigError
from ..migrations import disk_bytes
from ..vault import resolve_vault
from .files import INDEX_FILE
from .health import built_index_dir, index_errors
from .history import PruneReport, prune
from .store import IndexStore
from .writer_lock import vault_lock

# Seconds a vacuum waits for a reader of the state before to let go: brain serve (and brain
# mcp) look for a changed index every 2 s (``server.service.PROBE_EVERY``), then load it.
LET_GO_SECONDS = 15.0
_LOOK_EVERY = 0.1


def _fold_wal(store: IndexStore, seconds: float) -> bool:
    """Fold the WAL into index.db once no reader holds an older state, within ``seconds``;
    whether it was."""
    deadline = time.monotonic() + seconds
    while not store.checkpoint(wait=False):
        if time.monotonic() >= deadline:
            return False
        time.sleep(_LOOK_EVERY)
    return True


def prune_vault(
    vault: str | os.PathLike[str] | None,
    *,
    before: float | None,
    vacuum: bool = False,
    wait: float = 0.0,
    waiting: Callable[[int | None], None] | None = None,
) -> PruneReport:
    """``wait`` and ``waiting``: for another writer at work (``writer_lock.vault_lock``)."""
    root = resolve_vault(vault)
    keep = config.keep_versions()
    if before is None and keep is None and not vacuum:
        raise ConfigError(
            "nothing to prune: give --before DATE, or set BRAIN_KEEP_VERSIONS to how many past versions to keep"
            " (--vacuum alone compacts index.db, dropping nothing)"
        )
    directory = built_index_dir(root)
    with index_errors(directory, root), vault_lock(directory, wait=wait, waiting=waiting):
        store = IndexStore.open(directory, create=False)
        try:
            disk_before = disk_bytes(directory / INDEX_FILE)
            start = store.history_bytes()
            report = prune(store, before=before, keep=keep) if before is not None or keep is not None else PruneReport()
            if vacuum:
                store.vacuum()
                # VACUUM writes the new pages into the WAL: the file shrinks when they are copied
                # back, now unless a reader (brain serve's snapshot) holds the state before. A
                # server sees the index changed within seconds, loads it and folds the WAL in:
                # waited for that long, no longer (another reader: the copy is made when it lets go)
                report.wal_folded = _fold_wal(store, LET_GO_SECONDS)
                report.vacuumed = True
            end = store.history_bytes()
            disk_after = disk_bytes(directory / INDEX_FILE)
        finally:
            store.close()
    report.bytes_before = start[0] if start else None
    report.bytes_after = end[0] if end else None
    report.disk_bytes_before, report.disk_bytes_after = disk_before, disk_after
    return report


def prune_preview(vault: str | os.PathLike[str] | None, *, before: float) -> dict[str, float | int | None]:
    """What ``prune_vault(before=before)`` would drop of the vault's history (the store's
    ``prune_preview``), read without the writer lock: `brain prune` asks about it first."""
    root = resolve_vault(vault)
    directory = built_index_dir(root)
    with index_errors(directory, root):
        store = IndexStore.open(directory, create=False)
        try:
            return store.prune_preview(before)
        finally:
            store.close()
