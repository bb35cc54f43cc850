"""`brain prune --ledger`: bound the brain database (turns, prompts, A/B rows) by age.

Nothing trims ``brain.db`` as it is written: a year of heavy use is about 1.5 GB. This drops
the rows of ``turns``, ``recalls`` and ``ab_recall`` recorded before a moment, in small
batches, each its own short transaction: the Stop and prompt hooks write here on every turn
and give up after their budget (2 s), so the write lock is never held for long, and between
two batches it is left free for longer than a waiting hook sleeps between its tries. A kill
at any point leaves whole batches done and the rest kept. ``vacuum`` then gives the freed
pages back to the disk; that rewrites the file and holds the lock while it runs.

Not imported by the hooks (they stay standard library only, and quick to start).
"""

from __future__ import annotations

import contextlib
import json
import sqlite3
import time
from collections.abc import Callable
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from .. import config
from ..db import NewerLedger, connection, refuse_foreign, written
from ..migrations import disk_bytes
from ..moments import local_iso
from .deferred import catch_up
from .store import recorded_before, utc_now

# Each table and the column that says when its row was recorded. turns.created_at is when the
# Stop hook first wrote the row (started_at is when the prompt was typed, which a resumed
# transcript may put long before); recalls and ab_recall have only created_at.
TABLES: tuple[tuple[str, str], ...] = (
    ("turns", "created_at"),
    ("recalls", "created_at"),
    ("ab_recall", "created_at"),
)
BATCH_ROWS = 2000  # the first batch; then sized so each holds the lock about TARGET_HOLD
MIN_BATCH_ROWS, MAX_BATCH_ROWS = 50, 20_000
TARGET_HOLD = 0.05  # seconds of write lock per batch: a fortieth of a hook's 2 s budget
# Seconds the lock is left free after each batch: SQLite's busy handler sleeps at most 100 ms
# between tries, so a hook waiting behind a batch gets the lock in the pause that follows it
# (without one, the next batch would take the lock back first, batch after batch).
PAUSE = 0.12
BUSY_TIMEOUT_MS = 60_000  # the prune waits behind hooks and readers; it is in no hurry
_UNIX_EPOCH_JD = 2440587.5


@dataclass
class LedgerPruneReport:
    """What ``prune_ledger`` dropped, and what the file takes before and after."""

    path: str
    before: float | None  # Unix time: rows recorded before it were dropped (None: none were, a vacuum alone)
    dropped: dict[str, int] = field(default_factory=dict)  # table -> rows
    bytes_before: int = 0  # brain.db and its WAL, on the disk
    bytes_after: int = 0
    free_bytes: int = 0  # pages free inside brain.db after the prune (reused; --vacuum returns them)
    batches: int = 0
    longest_hold: float = 0.0  # seconds, the longest a batch held the write lock
    seconds: float = 0.0  # the whole prune, vacuum included
    vacuumed: bool = False
    vacuum_seconds: float | None = None  # how long VACUUM held the database
    wal_folded: bool | None = None  # after the vacuum: False while a reader holds the state before
    existed: bool = True  # False: no brain.db there, nothing recorded (none was created)

    def as_dict(self) -> dict[str, Any]:
        return {
            "database": self.path,
            "before": self.before,
            "before_utc": None if self.before is None else _utc(self.before),
            "before_local": local_iso(self.before),
            "dropped": dict(self.dropped),
            "rows": sum(self.dropped.values()),
            "bytes_before": self.bytes_before,
            "bytes_after": self.bytes_after,
            "free_bytes": self.free_bytes,
            "batches": self.batches,
            "longest_hold_ms": round(self.longest_hold * 1000, 1),
            "seconds": round(self.seconds, 2),
            "vacuumed": self.vacuumed,
            "vacuum_seconds": None if self.vacuum_seconds is None else round(self.vacuum_seconds, 2),
            "wal_folded": self.wal_folded,
            "existed": self.existed,
        }


def prune_ledger(
    before: float | None,
    *,
    path: Path | None = None,
    vacuum: bool = False,
    batch_rows: int = BATCH_ROWS,
    pause: float = PAUSE,
    on_batch: Callable[[str, int], None] | None = None,
) -> LedgerPruneReport:
    """Delete the turns, recalls and ab_recall rows recorded before ``before`` (Unix time; None
    drops nothing, for a ``vacuum`` alone).

    A row whose time cannot be read as a date (a hand-edited row, an empty value) is kept. Each
    batch of at most a few thousand rows is one transaction; ``on_batch(table, rows)`` is
    called after each commit. ``path``: the brain database (default ``BRAIN_DB``); a missing
    one is not created. Raises ``BrainDatabaseError`` (one line) when it cannot be used.
    """
    path = path or config.db_path()
    started = time.monotonic()
    report = LedgerPruneReport(path=str(path), before=before, dropped={table: 0 for table, _ in TABLES})
    with contextlib.suppress(OSError):
        if not path.exists() or (path.is_file() and path.stat().st_size == 0):
            refuse_foreign(path)  # /proc/self/status: 0 bytes to stat, text to read, no database
            report.existed = False  # `brain turns` reads these as nothing recorded: none is made
            return report
    if before is not None:
        # What the hooks kept aside while an upgrade waited is recorded first: recorded after
        # the prune, a row takes the time it was kept, and one from before WHEN was back.
        with contextlib.suppress(NewerLedger):  # the prune's own open says it, in its words
            catch_up(path)
    report.bytes_before = disk_bytes(path)
    with connection(path) as conn:
        conn.execute(f"PRAGMA busy_timeout = {BUSY_TIMEOUT_MS}")
        # Checkpoints run in the pauses, not at our commits: a hook that commits after a
        # batch would otherwise copy that batch's pages into brain.db inside its own budget.
        conn.execute("PRAGMA wal_autocheckpoint = 0")
        try:
            if before is not None:
                _record_cut(conn, before)
            for table, column in TABLES:
                if before is None:  # a vacuum alone: nothing to drop
                    break
                cutoff = before / 86400 + _UNIX_EPOCH_JD
                ids = _old_ids(conn, table, column, before, cutoff)
                size = max(MIN_BATCH_ROWS, min(batch_rows, MAX_BATCH_ROWS))
                done = 0
                while done < len(ids):
                    chunk = ids[done : done + size]
                    dropped, held = _delete_batch(conn, table, column, chunk, cutoff)
                    done += len(chunk)
                    report.dropped[table] += dropped
                    report.batches += 1
                    report.longest_hold = max(report.longest_hold, held)
                    if on_batch is not None:
                        on_batch(table, dropped)
                    size = _next_size(size, held)
                    _let_others_write(conn, pause)
            if vacuum:
                began = time.monotonic()
                conn.execute("VACUUM")
                # In WAL mode VACUUM writes the new file through the WAL: only the checkpoint
                # moves it into brain.db, shrinks the file and empties the WAL. A reader of the
                # state before (brain turns, brain mcp) holds it there: not waited for (the busy
                # timeout, a minute), the last connection to close folds it in.
                report.wal_folded = _fold_now(conn)
                report.vacuum_seconds = time.monotonic() - began
                report.vacuumed = True
            else:
                conn.execute("PRAGMA wal_checkpoint(PASSIVE)")
            free = conn.execute("PRAGMA freelist_count").fetchone()[0]
            report.free_bytes = free * conn.execute("PRAGMA page_size").fetchone()[0]
        finally:
            with contextlib.suppress(sqlite3.Error):
                conn.execute("PRAGMA wal_autocheckpoint = 1000")
    report.bytes_after = disk_bytes(path)
    report.seconds = time.monotonic() - started
    return report


def ledger_preview(before: float, *, path: Path | None = None) -> dict[str, Any]:
    """What ``prune_ledger(before)`` would drop, before it does: each table's rows recorded before
    it (``dropped``) and all it holds (``rows``), and when the first and the last of those to go
    were recorded (Unix time). All empty when there is no brain.db (none is made)."""
    path = path or config.db_path()
    preview: dict[str, Any] = {
        "dropped": {table: 0 for table, _ in TABLES},
        "rows": {table: 0 for table, _ in TABLES},
        "first": None,
        "last": None,
    }
    with contextlib.suppress(OSError):
        if not path.exists() or (path.is_file() and path.stat().st_size == 0):
            refuse_foreign(path)  # /proc/self/status: 0 bytes to stat, text to read, no database
            return preview
    cutoff = before / 86400 + _UNIX_EPOCH_JD
    firsts: list[float] = []
    lasts: list[float] = []
    # opened as the prune opens it: an older brain.db upgraded, a newer one's error its
    with connection(path) as conn:
        for table, column in TABLES:
            count, first, last = conn.execute(
                f"SELECT count(*), min(julianday({column})), max(julianday({column})) FROM {table}"
                f" WHERE {recorded_before(column)}",
                {"cutoff": cutoff},
            ).fetchone()
            preview["dropped"][table] = int(count)
            preview["rows"][table] = int(conn.execute(f"SELECT count(*) FROM {table}").fetchone()[0])
            firsts += [first] if first is not None else []
            lasts += [last] if last is not None else []
    preview["first"] = (min(firsts) - _UNIX_EPOCH_JD) * 86400 if firsts else None
    preview["last"] = (max(lasts) - _UNIX_EPOCH_JD) * 86400 if lasts else None
    return preview


def _record_cut(conn: sqlite3.Connection, before: float) -> None:
    """Record the moment the prune cuts at, before it reads what to drop: ``before``, or now when
    that is ahead (a row recorded after now is one written during the prune, kept as one written
    straight into brain.db after the prune read its ids). A row kept aside from before it, that
    lands after the catch-up above (its hook's time taken before, its file written after), is
    dropped by the catch-up that meets it (``deferred``) instead of coming back after the prune."""
    cut = _utc_ms(min(before, time.time()))
    if cut is None:  # a moment no time string holds: none of brain's rows is older
        return
    with written(conn):
        conn.execute("INSERT INTO ledger_prunes (cut, pruned_at) VALUES (?, ?)", (cut, utc_now()))


def _fold_now(conn: sqlite3.Connection) -> bool:
    """Fold the WAL into brain.db and empty it, without waiting for a reader; whether it did."""
    timeout = conn.execute("PRAGMA busy_timeout").fetchone()[0]
    conn.execute("PRAGMA busy_timeout = 0")
    try:
        busy = conn.execute("PRAGMA wal_checkpoint(TRUNCATE)").fetchone()[0]
    finally:
        conn.execute(f"PRAGMA busy_timeout = {int(timeout)}")
    return not busy


def _old_ids(conn: sqlite3.Connection, table: str, column: str, before: float, cutoff: float) -> list[int]:
    """The ids of the rows recorded before ``cutoff`` (a Julian day), read without the write lock.

    The text bound (any time before the cutoff starts with a date at most a day after it)
    lets the index on created_at, where there is one, answer.
    """
    where = recorded_before(column)
    bound = _text_bound(before)
    if bound is not None:
        where = f"{column} < :bound AND {where}"
    rows = conn.execute(f"SELECT id FROM {table} WHERE {where} ORDER BY id", {"cutoff": cutoff, "bound": bound})
    return [row[0] for row in rows]


def _delete_batch(
    conn: sqlite3.Connection, table: str, column: str, ids: list[int], cutoff: float
) -> tuple[int, float]:
    """Delete ``ids`` (still recorded before ``cutoff``) in one transaction: rows, seconds held."""
    with written(conn):  # a newer brain's upgrade during the prune: refused, nothing dropped by older rules
        held_from = time.monotonic()
        # The time is asked again: an id read before the lock may have been deleted and reused
        # by a new row since (INTEGER PRIMARY KEY reuses the largest).
        cursor = conn.execute(
            f"DELETE FROM {table} WHERE id IN (SELECT value FROM json_each(:ids)) AND {recorded_before(column)}",
            {"ids": json.dumps(ids), "cutoff": cutoff},
        )
    return cursor.rowcount, time.monotonic() - held_from


def _next_size(size: int, held: float) -> int:
    """The next batch's rows: about TARGET_HOLD of lock whatever the rows weigh and the disk does."""
    if held > TARGET_HOLD:
        return max(MIN_BATCH_ROWS, size // 2)
    if held < TARGET_HOLD / 2:
        return min(MAX_BATCH_ROWS, size * 2)
    return size


def _let_others_write(conn: sqlite3.Connection, pause: float) -> None:
    """Leave the write lock free for ``pause`` seconds, copying the WAL into brain.db meanwhile
    (a passive checkpoint waits for no one and blocks no writer)."""
    began = time.monotonic()
    with contextlib.suppress(sqlite3.OperationalError):  # busy: the next pause does it
        conn.execute("PRAGMA wal_checkpoint(PASSIVE)")
    time.sleep(max(0.0, pause - (time.monotonic() - began)))


def _text_bound(before: float) -> str | None:
    try:
        day = time.gmtime(before + 2 * 86400)
    except (OverflowError, OSError, ValueError):  # past year 9999: no bound, julianday() alone
        return None
    return f"{day.tm_year:04d}-{day.tm_mon:02d}-{day.tm_mday:02d}"  # %Y leaves year 999 unpadded


def _utc_ms(moment: float) -> str | None:
    """``moment`` as ``utc_now`` writes a time (ISO 8601 UTC, milliseconds); None out of range."""
    try:
        return utc_now(moment)
    except (OverflowError, OSError, ValueError):
        return None


def _utc(moment: float) -> str | None:
    try:
        return time.strftime("%Y-%m-%dT%H:%M:%SZ", time.gmtime(moment))
    except (OverflowError, OSError, ValueError):
        return None
