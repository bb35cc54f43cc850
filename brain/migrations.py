"""Named, recorded schema migrations (the pattern of simonw/llm's ``migrations.py``).

Each database has one ``Migrations`` registry. A migration is a function taking a
connection, registered under a unique name; ``apply`` runs the ones not yet recorded in
the ``_migrations`` table, in registration order, each in its own transaction.
Never edit or reorder a released migration: add a new one.
"""

from __future__ import annotations

import contextlib
import sqlite3
import time
from collections.abc import Callable, Iterator
from pathlib import Path
from typing import Any

_SQLITE_BUSY = 5  # the primary result code; sqlite3.SQLITE_BUSY is missing from the stubs
Migration = Callable[[Any], None]  # takes a sqlite3.Connection (inside a transaction: _InTransaction)


_MIGRATIONS_TABLE = (
    "CREATE TABLE IF NOT EXISTS _migrations ("
    " db TEXT NOT NULL, name TEXT NOT NULL, applied_at REAL NOT NULL,"
    " PRIMARY KEY (db, name))"
)


class Migrations:
    # A plain class, not a dataclass: the Stop hook imports this module, and dataclasses
    # (with inspect) costs it ~9 ms of start-up.
    def __init__(self, name: str):
        self.name = name
        self.steps: list[tuple[str, Migration]] = []
        self._tables: dict[str, frozenset[str]] | None = None
        self._definitions: dict[str, tuple[str, str, str]] | None = None
        self._schemas: list[frozenset[tuple[str, str, str, str]]] | None = None
        # migrations that change only rows and give the same rows when run again: a lost record
        # may leave them to run again (``applied_from_schema``)
        self.safe_to_run_again: set[str] = set()

    def __call__(self, fn: Migration) -> Migration:
        """Register ``fn`` as the next migration, named after the function."""
        if any(existing == fn.__name__ for existing, _ in self.steps):
            raise ValueError(f"duplicate migration name {fn.__name__!r} in {self.name}")
        self.steps.append((fn.__name__, fn))
        return fn

    def applied(self, conn: sqlite3.Connection) -> list[str]:
        if not has_table(conn, "_migrations"):
            return []
        rows = conn.execute("SELECT name FROM _migrations WHERE db = ? ORDER BY applied_at, rowid", (self.name,))
        return [row[0] for row in rows]

    def unknown(self, conn: sqlite3.Connection) -> list[str]:
        """The migrations recorded as applied that this code does not have: a newer brain's
        (an upgrade, then an older brain run on the same database, or a process that outlived it)."""
        known = {name for name, _ in self.steps}
        return [name for name in self.applied(conn) if name not in known]

    def pending(self, conn: sqlite3.Connection) -> list[str]:
        done = set(self.applied(conn))
        return [name for name, _ in self.steps if name not in done]

    def tables_made(self) -> dict[str, frozenset[str]]:
        """Migration name → the tables a database holds once it and those before it ran
        (applied in order to one in memory, once): what a database short of one lost."""
        if self._tables is None:
            conn = sqlite3.connect(":memory:", isolation_level=None)
            try:
                made, schemas = {}, []
                for name, fn in self.steps:
                    with write_transaction(conn):
                        fn(_InTransaction(conn))
                    rows = conn.execute(
                        "SELECT name FROM sqlite_master WHERE type = 'table' AND name NOT LIKE 'sqlite_%'"
                    )
                    made[name] = frozenset(row[0] for row in rows)
                    schemas.append(_schema(conn))
                self._schemas = schemas
                rows = conn.execute("SELECT name, type, tbl_name, sql FROM sqlite_master WHERE sql IS NOT NULL")
                self._definitions = {row[0]: (row[1], row[2], row[3]) for row in rows}
            finally:
                conn.close()
            self._tables = made
        return self._tables

    def definitions(self) -> dict[str, tuple[str, str, str]]:
        """Name → (type, table, SQL) of each table, index, view and trigger a database holds
        once every migration ran: what makes one of them again after it was dropped."""
        self.tables_made()
        assert self._definitions is not None
        return self._definitions

    def lost_record(self, conn: sqlite3.Connection) -> bool:
        """Whether the ``_migrations`` table is gone from a database that holds tables: no
        migration is recorded, and applying them would run the first over its own tables."""
        if has_table(conn, "_migrations"):
            return False
        return (
            conn.execute("SELECT 1 FROM sqlite_master WHERE type = 'table' AND name NOT LIKE 'sqlite_%'").fetchone()
            is not None
        )

    def applied_from_schema(self, conn: sqlite3.Connection) -> list[str] | None:
        """The migrations a database whose record of them is gone has had, read from its schema:
        those up to the one after which a database holds exactly its tables, indexes, views and
        triggers (as SQLite keeps their SQL). None where no step gives that schema, or several in
        a row do (a migration that only changes rows leaves it as it was: whether it ran cannot
        be told, and running it twice is not safe to assume, unless it is in ``safe_to_run_again``)."""
        self.tables_made()
        assert self._schemas is not None
        present = _schema(conn)
        matches = [i for i, schema in enumerate(self._schemas) if schema == present]
        if not matches or any(self.steps[i][0] not in self.safe_to_run_again for i in matches[1:]):
            return None
        # several in a row, all but the first safe to run again: they run again
        return [name for name, _ in self.steps[: matches[0] + 1]]

    def record(self, conn: sqlite3.Connection, names: list[str]) -> None:
        """Record ``names`` as applied (``applied_from_schema``: a lost record made again)."""
        with write_transaction(conn):
            conn.execute(_MIGRATIONS_TABLE)
            now = time.time()
            conn.executemany(
                "INSERT OR IGNORE INTO _migrations (db, name, applied_at) VALUES (?, ?, ?)",
                [(self.name, name, now) for name in names],
            )

    def apply(
        self, conn: sqlite3.Connection, *, wait: float = 0.0, waiting: Callable[[], None] | None = None
    ) -> list[str]:
        """Apply every pending migration; returns the names applied.

        ``wait``: seconds a pending migration may wait for the write lock another process holds
        (it is upgrading the same database, or writing it for long), when longer than the
        connection's busy timeout; ``waiting`` is told once, when that wait has lasted a second."""
        conn.execute(_MIGRATIONS_TABLE)
        done = set(self.applied(conn))
        ran = []
        told: list[bool] = []

        def tell() -> None:
            if not told and waiting is not None:
                told.append(True)
                waiting()

        for name, fn in self.steps:
            if name in done:
                continue
            # The write lock first, then the record read again: of two processes that both saw
            # this migration pending (two opening an index an upgrade left older), the second
            # to take the lock finds it ran and skips it.
            with write_transaction(conn, wait=wait, waiting=tell):
                already = conn.execute(
                    "SELECT 1 FROM _migrations WHERE db = ? AND name = ?", (self.name, name)
                ).fetchone()
                if not already:
                    fn(_InTransaction(conn))
                    conn.execute(
                        "INSERT INTO _migrations (db, name, applied_at) VALUES (?, ?, ?)",
                        (self.name, name, time.time()),
                    )
                    ran.append(name)
        return ran


@contextlib.contextmanager
def write_transaction(
    conn: sqlite3.Connection, *, wait: float = 0.0, waiting: Callable[[], None] | None = None
) -> Iterator[sqlite3.Connection]:
    """``BEGIN IMMEDIATE`` (the write lock first) … ``COMMIT``; rolled back on any exception.
    ``wait`` and ``waiting``: see ``_until_not_busy``."""
    if wait > 0:
        _until_not_busy(conn, "BEGIN IMMEDIATE", wait, waiting)
    else:
        conn.execute("BEGIN IMMEDIATE")
    try:
        yield conn
        conn.execute("COMMIT")
    except BaseException:
        # SQLite may have rolled back already (a full disk, an I/O error): a ROLLBACK then
        # fails with "no transaction is active", which must not hide the cause.
        if conn.in_transaction:
            with contextlib.suppress(sqlite3.Error):
                conn.execute("ROLLBACK")
        raise


_WAIT_SLICE_MS = 250  # each try's own wait: Ctrl-C is seen between them
_TELL_AFTER = 1.0  # seconds of waiting before ``waiting`` is told: a pass's commit is not news


def _until_not_busy(
    conn: sqlite3.Connection,
    statement: str,
    wait: float,
    waiting: Callable[[], None] | None,
    *,
    pause: bool = False,
) -> None:
    """``statement``, tried again while SQLite says another process holds the lock it needs, up
    to ``wait`` seconds (or the connection's busy timeout, if longer); ``waiting`` is told once
    the wait has lasted ``_TELL_AFTER``. Past the wait, SQLite's "database is locked".

    SQLite's own wait is cut into ``_WAIT_SLICE_MS`` slices: one long busy timeout does not
    return to Python, so Ctrl-C would not end it, nor could ``waiting`` be told in time. A wait
    of 0 on a busy timeout of 0 (a connection that must never wait) keeps the 0. ``pause``: a
    short growing sleep between tries, for a statement SQLite may answer "locked" at once (its
    deadlock rule skips the busy handler). The connection's busy timeout is put back."""
    busy_ms = int(conn.execute("PRAGMA busy_timeout").fetchone()[0])
    started = time.monotonic()
    deadline = started + max(wait, busy_ms / 1000)
    delay = 0.002
    told = False
    try:
        while True:
            left_ms = int((deadline - time.monotonic()) * 1000)
            conn.execute(f"PRAGMA busy_timeout = {min(_WAIT_SLICE_MS, max(1, left_ms)) if deadline > started else 0}")
            try:
                conn.execute(statement)
                return
            except sqlite3.OperationalError as exc:
                if not _is_busy(exc) or time.monotonic() >= deadline:
                    raise
            if not told and waiting is not None and time.monotonic() - started >= _TELL_AFTER:
                told = True
                waiting()
            if pause:
                time.sleep(delay)
                delay = min(delay * 2, 0.05)
    finally:
        conn.execute(f"PRAGMA busy_timeout = {busy_ms}")


def disk_bytes(path: Path) -> int:
    """What the SQLite database at ``path`` takes on the disk: its file and its WAL."""
    total = 0
    for name in (path, path.with_name(path.name + "-wal")):
        with contextlib.suppress(OSError):
            total += name.stat().st_size
    return total


class _InTransaction:
    """The connection a migration sees: ``executescript`` runs statement by statement.

    sqlite3's own ``executescript`` COMMITs first, which would break the migration's
    transaction (and its all-or-nothing promise).
    """

    def __init__(self, conn: sqlite3.Connection):
        self._conn = conn

    def __getattr__(self, name: str) -> Any:
        return getattr(self._conn, name)

    def executescript(self, script: str) -> None:
        # Split at semicolons, but only where a statement is complete (trigger bodies and
        # string literals hold semicolons of their own).
        statement = ""
        for piece in script.split(";"):
            statement += piece + ";"
            if sqlite3.complete_statement(statement):
                if statement.strip(" \t\r\n;"):
                    self.execute(statement)  # the connection's, or a subclass's (bench/upgrade_cost.py times each)
                statement = ""


def _schema(conn: sqlite3.Connection) -> frozenset[tuple[str, str, str, str]]:
    """Each table, index, view and trigger a database holds, with its SQL, the record of the
    migrations aside."""
    rows = conn.execute(
        "SELECT type, name, tbl_name, sql FROM sqlite_master WHERE name NOT LIKE 'sqlite_%' AND name != '_migrations'"
    )
    return frozenset((row[0], row[1], row[2], row[3] or "") for row in rows)


def has_table(conn: sqlite3.Connection, table: str, schema: str = "main") -> bool:
    """Whether ``schema`` (the main database, or one attached) holds ``table``."""
    row = conn.execute(f"SELECT 1 FROM {schema}.sqlite_master WHERE type = 'table' AND name = ?", (table,)).fetchone()
    return row is not None


def connect(
    path: str,
    *,
    busy_timeout_ms: int = 5000,
    check_same_thread: bool = True,
    page_size: int | None = None,
    waiting: Callable[[], None] | None = None,
) -> sqlite3.Connection:
    """Open a SQLite database in WAL mode with a busy timeout, autocommit off by hand.

    ``isolation_level=None`` leaves transactions to explicit BEGIN/COMMIT, which is what
    the migrations and the writers here want. ``check_same_thread=False`` is for a connection
    handed from one thread to another, never used by two at once (a server's index snapshot).
    ``page_size``: the page size of a database this creates (SQLite fixes it when the file is
    first written, here by the switch to WAL; an existing database keeps its own).
    ``waiting``: told once when the open has waited ``_TELL_AFTER`` for a lock another process
    holds (an exclusive one: the whole busy timeout, silent, then "database is locked").
    """
    conn = sqlite3.connect(
        path, timeout=busy_timeout_ms / 1000, isolation_level=None, check_same_thread=check_same_thread
    )
    try:
        conn.execute(f"PRAGMA busy_timeout = {int(busy_timeout_ms)}")
        if page_size:
            conn.execute(f"PRAGMA page_size = {int(page_size)}")
        _switch_to_wal(conn, busy_timeout_ms / 1000, waiting)
        conn.execute("PRAGMA synchronous = NORMAL")
        conn.execute("PRAGMA foreign_keys = ON")
    except BaseException:
        # a damaged file ("not a database"), one locked by another writer: closed now, not left
        # to the cycle collector (a connection and its statement cache refer to each other), which
        # a server probing a damaged index every few seconds may not run for hours
        conn.close()
        raise
    return conn


def _switch_to_wal(conn: sqlite3.Connection, timeout: float, waiting: Callable[[], None] | None = None) -> None:
    """``PRAGMA journal_mode = WAL``, waiting up to ``timeout`` seconds for the lock it needs;
    ``waiting`` is told once the wait has lasted ``_TELL_AFTER``.

    Switching a new database needs it alone, and while another process writes it (its first
    migration, twenty Stop hooks meeting a new brain.db) SQLite answers "database is locked"
    at once: its deadlock rule skips the busy handler. So wait here as the handler would.
    Where the handler does wait (an exclusive lock held: no read either), its wait is cut into
    slices (``_until_not_busy``), so ``waiting`` is told in time and Ctrl-C is seen.
    """
    # (connect's busy timeout is ``timeout``: a wait of 0 keeps a busy timeout of 0)
    _until_not_busy(conn, "PRAGMA journal_mode = WAL", timeout, waiting, pause=True)


def _is_busy(exc: sqlite3.OperationalError) -> bool:
    code = getattr(exc, "sqlite_errorcode", None)  # Python 3.11+; the message before that
    return (code & 0xFF) == _SQLITE_BUSY if isinstance(code, int) else "database is locked" in str(exc)
