"""`brain status`: what is indexed, what changed since the last run, what is skipped and why."""

from __future__ import annotations

import os
from dataclasses import asdict, dataclass, field
from pathlib import Path
from typing import Any

from .. import config
from ..errors import IndexDamagedError
from ..moments import iso_recorded
from ..vault import IGNORE_FILE, resolve_vault
from . import background, changes
from .files import INDEX_FILE
from .health import index_errors, refuse_hidden_index, refuse_lost_meta
from .moved import left_behind, made_before_recording
from .rebuild import rebuild_status
from .settings_fit import index_mismatches
from .store import IndexStore
from .upgrades import newer_index_message
from .writer_lock import indexing_now


@dataclass
class VaultStatus:
    vault: str
    index_dir: str
    model: str | None
    dim: int | None
    notes: int
    chunks: int
    links: dict[str, int]
    pending: dict[str, int]
    pending_paths: dict[str, list[str]]
    skipped: list[dict[str, str]]
    warnings: list[dict[str, str]]
    rebuild: dict[str, Any] | None = None  # a `--rebuild` running or stopped: {"path", "model", "notes"}
    history: dict[str, Any] | None = None  # what history holds and what it costs on disk
    background: list[str] | None = None  # work a run left to a process of its own, under way now
    # what `brain index` and `brain ask` would refuse: this process's model, prefixes, tokenizer
    # or chunking against the index's, each a message ending in its fix; empty when they fit
    settings_mismatch: list[str] = field(default_factory=list)
    # another process indexing this vault now (`brain index`, `brain serve`'s watcher): {"pid"}
    indexing: dict[str, int | None] | None = None
    # a newer brain upgraded the index: what is said of it (read as it is, never written)
    newer: str | None = None
    # an index is there (index.db, as `brain ask` asks): False before the first `brain index`,
    # which a script tells by this key (`jq -e .indexed`), not by the text or the exit status
    indexed: bool = True
    # no index here, but the one of the path this vault had before (moved.py): `brain index` takes it over
    moved_from: str | None = None
    # none of that, but the one index of the home that records no vault path (a brain's from before
    # it recorded one) holds these notes: the vault may have moved from its path (`brain index` asks)
    unrecorded_index: str | None = None

    def as_dict(self) -> dict[str, Any]:
        return asdict(self)


def vault_status(vault: str | os.PathLike[str] | None) -> VaultStatus:
    """What is indexed, what changed since (new, changed, renamed, deleted), and what is skipped.

    Read-only: before any `brain index` nothing is created, and a read-only brain home is read.
    """
    root = resolve_vault(vault)
    directory = config.index_dir(root)
    with index_errors(directory, root):
        indexed = os.path.exists(directory / INDEX_FILE)
        if not indexed:
            refuse_hidden_index(directory, root)  # a link to a disk not mounted is not "nothing indexed"
        if indexed:
            store = IndexStore.open(directory, create=False, readonly_ok=True, warn_newer=False)
        else:
            store = IndexStore.in_memory(directory)
        try:
            status = _status(root, store, indexed=indexed)
        finally:
            store.close()
    if not indexed:
        found = left_behind(root, directory)
        status.moved_from = found[0].vault if len(found) == 1 else None
        if not found:
            unrecorded = made_before_recording(root, directory)
            status.unrecorded_index = str(unrecorded[0]) if len(unrecorded) == 1 else None
    return status


def _status(root: Path, store: IndexStore, *, indexed: bool = True) -> VaultStatus:
    # chunks without their model read as nothing indexed yet: damage, said as ask and index say it
    refuse_lost_meta(store, root)
    # a table dropped that none of these reads touch (a BM25 index, a log, the history): said
    # with what mends it, as the commands that read it fail (a constant's lookup: under 1 ms)
    lacking = store.missing_tables_message(root)
    if lacking:
        raise IndexDamagedError(lacking)
    mismatches = index_mismatches(store, config.embed_model_name())  # a bad setting: its one-line error
    # a note whose parse raised, unchanged since, is skipped by the plan, not pending: the next
    # `brain ask` does not parse it again (an explicit `brain index` does, and a new brain)
    plan = changes.plan(root, store)
    pending: dict[str, list[str]] = {"new": [], "changed": [], "renamed": []}
    for change in changes.read(plan, store):
        if change.kind in pending:
            pending[change.kind].append(change.file.path)
    pending["deleted"] = sorted(plan.deleted)
    counts = store.counts()
    dim = store.get_meta("dim")
    warnings = [{"path": IGNORE_FILE, "message": message} for message in plan.ignore_warnings] + [
        {"path": path, "message": message} for path, messages in store.note_warnings() for message in messages
    ]
    return VaultStatus(
        vault=str(root),
        index_dir=str(store.directory),
        model=store.get_meta("model"),
        dim=int(dim) if dim else None,
        notes=counts["notes"],
        chunks=counts["chunks"],
        links={k: counts[k] for k in ("resolved", "dangling", "attachment")},
        pending={kind: len(paths) for kind, paths in pending.items()},
        pending_paths=pending,
        # the errno is the index's to tell denied from gone, not shown (status --json as it was)
        skipped=sorted(
            {s.path: {"path": s.path, "reason": s.reason, "detail": s.detail} for s in plan.skipped}.values(),
            key=lambda e: e["path"],
        ),
        warnings=warnings,
        rebuild=rebuild_status(store.directory),
        history=_history(store) if indexed else None,  # an in-memory stand-in holds no history and no index.db
        background=_background(store.directory),
        settings_mismatch=mismatches,
        indexing=indexing_now(store.directory),
        newer=newer_index_message(store.directory / INDEX_FILE, store.newer, reading=True) if store.newer else None,
        indexed=indexed,
    )


def _background(directory: Path) -> list[str]:
    """What a process of its own is doing for this index now (``background``)."""
    under_way = []
    for work in background.KINDS:
        try:
            if background.busy(directory, work.name):
                under_way.append(work.doing)
        except OSError:  # a lock file this reader may not open (a read-only home): none known
            continue
    return under_way


def _history(store: IndexStore) -> dict[str, Any]:
    """Counts of what history keeps, and its cost: the bytes its tables and indexes take in
    index.db (SQLite's dbstat; None where SQLite lacks it) against the whole database."""
    counts: dict[str, Any] = dict(store.history_counts())
    sizes = store.history_bytes()
    counts["bytes"], counts["database_bytes"] = sizes if sizes else (None, None)
    since, pruned = store.get_meta("history_since"), store.get_meta("history_pruned_before")
    counts["since"] = iso_recorded(float(since)) if since else None
    counts["pruned_before"] = iso_recorded(float(pruned)) if pruned else None
    keep = config.keep_versions()
    counts["keep_versions"] = "all" if keep is None else keep
    counts["version_interval"] = config.version_interval()
    return counts
