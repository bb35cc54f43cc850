"""FTS5's segment merges, done in the background rather than inside a save.

Every statement that writes words adds a segment to FTS5's level 0, and FTS5 merges as it
writes: a little at each write (``automerge``), and a whole level at once when it holds 16
segments (``crisismerge``). At 100,000 notes that policy stalls saves: a merge under way on a
level of big segments (a first build leaves them) is continued only when no level below has
more segments than it takes, so it starves while the levels below fill, until one reaches 16
and is merged whole inside a save: 0.5 s, and ~9 s when it holds the build's segments
(stop 37). So a pass that leaves a level of ``START_AT`` segments or more, enough pages among
them for a merge to be felt, starts a process in the background (``background``) that
finishes every merge in steps of ``STEP_PAGES`` pages, each its own short write transaction,
with pauses between them long enough for a waiting writer to take its turn; FTS5's own
merging goes on as before for the rest.
"""

from __future__ import annotations

import time

from . import background
from .store import IndexStore

MERGE = background.FTS_MERGE
START_AT = 8  # segments on one level (FTS5 merges a level whole, inside a save, at 16)
MIN_PAGES = 2_000  # ... holding this many leaf pages (~8 MB, ~0.2 s of merging): less is quick anyway
STEP_PAGES = 500  # pages merged in one write transaction
PAUSE_S = 0.12  # between steps: longer than SQLite's longest sleep waiting for a lock (100 ms)


def wanted(levels: list[tuple[int, list[int]]]) -> bool:
    """Whether FTS5's levels call for the background merger."""
    return any(len(pages) >= START_AT and sum(pages) >= MIN_PAGES for _, pages in levels)


def start_if_wanted(store: IndexStore) -> None:
    """At the end of an index pass: the merger started if FTS5's levels call for it."""
    if store.readonly or store.in_transaction:
        return
    background.report_failure(MERGE, store.directory)
    if wanted(store.fts_levels()):
        background.start(MERGE, store.directory)


def merge_all(store: IndexStore, *, step_pages: int | None = None, pause_s: float | None = None) -> int:
    """Every merge FTS5 has to do, in steps (``STEP_PAGES``, ``PAUSE_S`` between them); the
    steps taken. Stops when the index file at this folder is no longer the one opened (a
    rebuild swapped another in)."""
    pages = STEP_PAGES if step_pages is None else step_pages
    pause = PAUSE_S if pause_s is None else pause_s
    inode = store.database_inode()
    steps = 0
    while store.database_inode() == inode and store.fts_merge_step(pages):
        steps += 1
        time.sleep(pause)
    return steps
