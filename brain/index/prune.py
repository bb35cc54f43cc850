"""`brain prune`: bound what history keeps, under the vault's writer lock.

``--before DATE`` drops what stopped being current before DATE (past versions, the chunks only
they held, closed edges); ``BRAIN_KEEP_VERSIONS`` (when set to a number) is applied to every
note, including those no run has touched since it was lowered. SQLite reuses the pages freed;
``vacuum`` gives them back to the disk (it rewrites the database: slow on a big index, and it
needs room for a copy).
"""

from __future__ import annotations

import os

from .. import config
from ..errors import ConfigError
from ..vault import resolve_vault
from .history import PruneReport, prune
from .indexer import vault_lock
from .store import IndexStore, built_index_dir, index_errors


def prune_vault(vault: str | os.PathLike[str] | None, *, before: float | None, vacuum: bool = False) -> PruneReport:
    root = resolve_vault(vault)
    keep = config.keep_versions()
    if before is None and keep is None:
        raise ConfigError(
            "nothing to prune: give --before DATE, or set BRAIN_KEEP_VERSIONS to how many past versions to keep"
        )
    directory = built_index_dir(root)
    with index_errors(directory, root), vault_lock(directory):
        store = IndexStore.open(directory, create=False)
        try:
            start = store.history_bytes()
            report = prune(store, before=before, keep=keep)
            if vacuum:
                store.vacuum()
            end = store.history_bytes()
        finally:
            store.close()
    report.bytes_before = start[0] if start else None
    report.bytes_after = end[0] if end else None
    return report
