"""Connections to a database file that a rebuild (or a restore) may swap for another while
it is opened: the file SQLite connects to and the WAL it opens by name at the first read are
made one database's (``open_unswapped``), and a read-only open never writes, makes, nor waits on
what is not a regular file (``open_read_only``). The index's modules and ``brain backup`` open
their files through it."""

from __future__ import annotations

import os
import sqlite3
import stat
from collections.abc import Callable
from contextlib import suppress
from pathlib import Path

from ..errors import BrainError

# Opens of a snapshot whose index a rebuild swapped for another meanwhile (a rebuild takes
# minutes: two swaps within one open are not met).
SWAP_TRIES = 3


def connect_unswapped(
    path: Path,
    open_it: Callable[[], sqlite3.Connection],
    first_read: Callable[[sqlite3.Connection], object] | None = None,
    *,
    torn: type[BaseException] | tuple[type[BaseException], ...] = sqlite3.DatabaseError,
    replaced: Callable[[], BaseException] | None = None,
) -> sqlite3.Connection:
    """``open_it()``, a connection to the database at ``path``, whose file and WAL are one
    index's. SQLite opens the file when it connects and the WAL and shared memory by name at the
    first read (``first_read``, or one ``open_it`` made): a rebuild's swap (or a restore) in
    between gave the old file read through the new index's WAL, pages of two databases. The file
    at the path is the one opened when it is the same before the open and after the first read;
    else (or when the open or that read failed on the swap: ``torn``) it is opened again,
    ``SWAP_TRIES`` times, then ``replaced()`` is raised (by default a BrainError saying so)."""
    conn, _ = open_unswapped(path, open_it, first_read, torn=torn, replaced=replaced)
    return conn


def open_unswapped(
    path: Path,
    open_it: Callable[[], sqlite3.Connection],
    first_read: Callable[[sqlite3.Connection], object] | None = None,
    *,
    torn: type[BaseException] | tuple[type[BaseException], ...] = sqlite3.DatabaseError,
    replaced: Callable[[], BaseException] | None = None,
    keep_last: bool = False,
) -> tuple[sqlite3.Connection, tuple[int, int] | None]:
    """``connect_unswapped``, with the identity of the file it opened (``file_identity`` before
    the open). ``keep_last``: the connection of the last try is kept even when the file at the
    path changed meanwhile (its identity then no longer the path's: the caller says it was
    replaced, as ``IndexStore.still_at_its_path`` does) rather than ``replaced()`` raised."""
    for tries_left in range(SWAP_TRIES - 1, -1, -1):
        before = file_identity(path)
        conn: sqlite3.Connection | None = None
        try:
            conn = open_it()
            if before is None:  # made by the open (or put there since the look): the file opened
                before = file_identity(path)
            if first_read is not None:
                first_read(conn)
        except torn:
            if conn is not None:
                conn.close()
            if not tries_left or file_identity(path) == before:
                raise
            continue  # read torn by a swap: opened again
        except BaseException:
            if conn is not None:
                conn.close()
            raise
        if file_identity(path) == before or (keep_last and not tries_left):
            return conn, before
        conn.close()
    if replaced is not None:
        raise replaced()
    raise BrainError(f"{path} was replaced (`brain index --rebuild`) each time it was opened: run this again")


def read_header(conn: sqlite3.Connection) -> None:
    """A read of the database (its header, through the WAL): where SQLite opens the WAL by name."""
    conn.execute("PRAGMA schema_version").fetchone()


def file_identity(path: Path) -> tuple[int, int] | None:
    try:
        st = os.stat(path)
    except OSError:
        return None
    return (st.st_dev, st.st_ino)


def open_read_only(database: Path, timeout: float = 5) -> sqlite3.Connection:
    """A connection that reads the database at this path and never writes it (nor makes it).
    Not of a FIFO in its place, which a read-only open waits on for a writer forever (`brain mcp`
    hung as it started): SQLite's error for what cannot be opened instead."""
    try:
        regular = stat.S_ISREG(os.stat(database).st_mode)
    except OSError:
        regular = True  # not there, or not to be reached: SQLite's open says so
    if not regular:
        raise sqlite3.OperationalError(f"unable to open database file: {database} is not a regular file")
    uri = f"{database.absolute().as_uri()}?mode=ro"
    return connect_unswapped(database, lambda: sqlite3.connect(uri, uri=True, timeout=timeout), read_header)


def rollback(conn: sqlite3.Connection) -> None:
    """End a failed write transaction. SQLite may have rolled it back itself (a full disk, an
    I/O error): a ROLLBACK then fails with "no transaction is active", which must not hide
    the cause."""
    if conn.in_transaction:
        with suppress(sqlite3.Error):
            conn.execute("ROLLBACK")
