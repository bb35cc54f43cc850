"""The index's migrations as a command meets them: the upgrade an open makes (waiting for
another process's, ``UPGRADE_WAIT``), the record of them made again (`--repair`), and an index
a newer brain upgraded: refused to a command that writes it, read as it is by one that reads it,
never given this brain's derived files (``replace_unless_newer``), and told apart from damage
when a read fails on what the newer brain changed (``refuse_newer_unread``)."""

from __future__ import annotations

import logging
import os
import re
import sqlite3
from collections.abc import Sequence
from pathlib import Path

from ..errors import BrainError, IndexDamagedError, NewerDatabaseError, newer_than_this
from .connections import connect_unswapped, open_read_only, rollback
from .files import INDEX_FILE
from .schema import INDEX_MIGRATIONS

log = logging.getLogger("brain")


# Seconds a process opening an index that needs an upgrade waits for another one holding its write
# lock (upgrading it too, or writing it for long): the slowest migration measured, m021 at 100,000
# notes, held it 12.7 s (bench/upgrade_cost.py), a slow disk longer; and as --wait's default, a
# minute gives up within an agent's two-minute command budget rather than being killed by it
UPGRADE_WAIT = 60.0


# What SQLite says of a statement naming what the schema no longer holds as this code wrote it:
# a table, column, index, view's function, collation, FTS5 tokenizer or virtual table module
# gone or renamed; a column a newer table added that makes a join's name ambiguous; an INSERT
# whose columns are not the table's; the schema changed under a prepared statement.
_SCHEMA_CHANGED = re.compile(
    r"no such (?:table|column|index|function|collation sequence|module|tokenizer)|ambiguous column name"
    r"|has no column named|has \d+ columns but \d+ values were supplied|database schema has changed"
)


def schema_changed(exc: sqlite3.Error) -> bool:
    """Whether SQLite's error is one a changed schema explains (a newer brain's migration that
    renamed or dropped what this code reads), not damage, a lock, the disk or the file's modes:
    an error of SQL (SQLITE_ERROR, or SQLITE_SCHEMA) whose words name what is not there."""
    name = getattr(exc, "sqlite_errorname", "")  # Python 3.11+; the message alone before that
    if name and name not in ("SQLITE_ERROR", "SQLITE_SCHEMA"):
        return False
    return _SCHEMA_CHANGED.search(str(exc)) is not None


def refuse_newer_unread(directory: Path, exc: sqlite3.Error) -> None:
    """A read failing on an index a newer brain upgraded for what a changed schema explains is
    that schema, not damage: a migration of the newer brain renamed or dropped what this code
    reads (the readers take the newer schema for additive, which it need not be). Any other
    failure (a corrupt page, a disk I/O error) is what it is on any index, and said as such."""
    if not schema_changed(exc):
        return
    newer = newer_migrations(directory)
    if newer:
        raise NewerDatabaseError(newer_index_message(directory / INDEX_FILE, newer, unread=str(exc))) from exc


MIGRATIONS_TABLE = "_migrations"  # the record of the migrations applied (``Migrations.apply``)


def migration_count(conn: sqlite3.Connection) -> int:
    return int(conn.execute(f"SELECT count(*) FROM {MIGRATIONS_TABLE}").fetchone()[0])


def refuse_newer(conn: sqlite3.Connection, path: Path, seen: int | None) -> int | None:
    """Inside the write lock (nobody migrates meanwhile): when a newer brain upgraded the index at
    ``path`` since a store opened it with ``seen`` migrations recorded (None: never to be looked
    at), roll back and raise ``NewerDatabaseError``; else the count to hold from now on. One count
    of a table of a few dozen rows a transaction."""
    if seen is None or migration_count(conn) == seen:
        return seen
    newer = INDEX_MIGRATIONS.unknown(conn)
    if not newer:  # this code's own (another process applied one this store found pending)
        return migration_count(conn)
    rollback(conn)
    raise NewerDatabaseError(newer_index_message(path, newer))


def newer_migrations(directory: Path) -> list[str]:
    """The migrations a newer brain recorded in the index in ``directory`` (none when absent or
    unreadable): this code neither writes it nor reads its history."""
    path = directory / INDEX_FILE
    if not path.exists():
        return []
    try:
        conn = open_read_only(path, timeout=1)
        try:
            return INDEX_MIGRATIONS.unknown(conn)
        finally:
            conn.close()
    except sqlite3.Error:
        return []


def replace_unless_newer(directory: Path, moves: Sequence[tuple[Path, Path]], what: str) -> bool:
    """Rename each written ``(temporary, final)`` pair, in order, in the index folder ``directory``
    unless a newer brain upgraded its index; True when they were renamed.

    The look and the renames hold the database's write lock, which a migration takes to record
    itself, so no upgrade lands between them. Looked at before the file was written, one landing
    meanwhile (a newer brain's command opening the index: it takes no vault lock) left this
    code's file among the newer brain's. False, said in the log, when the index is newer or the
    lock is not had within the busy timeout: what is renamed here is derived, made again by the
    next run. The temporary files are the caller's to remove."""
    path = directory / INDEX_FILE
    newer: list[str] = []
    if not path.exists():  # no database (vector files alone): no brain upgraded it
        for temporary, final in moves:
            os.replace(temporary, final)
        return True
    uri = f"{path.absolute().as_uri()}?mode=rw"
    try:
        # The file and its WAL one index's (``connect_unswapped``: the write lock is the first
        # read): a rebuild's swap in between read the old index's migrations through the new
        # one's WAL, and a newer brain's old index left the file out of this brain's new one.
        conn = connect_unswapped(
            path,
            lambda: sqlite3.connect(uri, uri=True, isolation_level=None, timeout=5),
            lambda conn: conn.execute("BEGIN IMMEDIATE"),
            replaced=lambda: sqlite3.OperationalError(f"{path} was replaced each time it was opened"),
        )
        try:
            try:
                newer = INDEX_MIGRATIONS.unknown(conn)
                if not newer:
                    for temporary, final in moves:
                        os.replace(temporary, final)
            finally:
                conn.execute("ROLLBACK")
        finally:
            conn.close()
    except sqlite3.Error as exc:
        log.info("%s not kept in %s: the write lock of its index was not had (%s)", what, directory, exc)
        return False
    if newer:
        log.info("the index in %s was upgraded by a newer brain: %s not kept there", directory, what)
        return False
    return True


def newer_index_message(path: Path, newer: list[str], *, reading: bool = False, unread: str | None = None) -> str:
    """What is said of an index a newer brain upgraded: by a command that writes it (refused),
    by one that reads it (answers from it as it is), or by one whose read failed (``unread``:
    SQLite's error) on what the newer brain changed."""
    what = newer_than_this(f"the index {path}", newer)
    if reading:
        return f"{what}: read as it is, never updated by this brain (upgrade brain, or `brain index --rebuild`)"
    if unread is not None:
        why = f"this brain cannot read it ({unread}: the newer brain changed what this brain reads)"
    else:
        why = "this brain does not write it (its older rules would be mixed into the newer ones)"
    return (
        f"{what}: {why}; upgrade brain to the version that made it, or run `brain index --rebuild` to build a"
        " new index this brain owns (the upgraded one is moved aside, not deleted)"
    )


def refuse_lost_record() -> None:
    raise sqlite3.OperationalError(f"no such table: {MIGRATIONS_TABLE}")  # index_errors: says --repair


def record_again(conn: sqlite3.Connection, path: Path) -> None:
    applied = INDEX_MIGRATIONS.applied_from_schema(conn)
    if applied is None:  # tables changed or gone too: which migrations ran cannot be told
        raise IndexDamagedError(
            f"it lost the record of its migrations ({MIGRATIONS_TABLE}) and its tables are"
            " not those of any version brain made"
        )
    INDEX_MIGRATIONS.record(conn, applied)


def upgrade(conn: sqlite3.Connection, path: Path) -> None:
    """The pending migrations. Another process holding the write lock meanwhile is upgrading the
    index too (every command that opens it after a new brain is installed does) or writing it for
    long: waited for, up to ``UPGRADE_WAIT``, rather than SQLite's 5 s busy timeout, past which
    every command but the one upgrading failed (said once, on stderr or in the server's log);
    then its migrations are found done and skipped."""

    def waiting() -> None:
        log.warning(
            "the index %s needs an upgrade and another brain process is upgrading or writing it: "
            "waiting for it (up to %.0f s)…",
            path,
            UPGRADE_WAIT,
        )

    try:
        INDEX_MIGRATIONS.apply(conn, wait=UPGRADE_WAIT, waiting=waiting)
    except sqlite3.OperationalError as exc:
        if "locked" not in str(exc) and "busy" not in str(exc):
            raise
        raise BrainError(
            f"the index database {path} needs an upgrade and another brain process has held it for over"
            f" {UPGRADE_WAIT:.0f} s ({exc}); try again once it is done"
        ) from exc
