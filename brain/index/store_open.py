"""How an ``IndexStore`` is opened: the index database in a folder made (or upgraded) and
opened to write (``open_store``), read-only where the folder cannot be written or a newer brain
upgraded it (``open_readonly``), empty in memory (``in_memory``), or pinned to one committed state
(``open_snapshot``). Each is given the class to construct; ``IndexStore``'s classmethods of the
same names delegate to them. The newer brain's migrations an open store then meets are
``upgrades.refuse_newer``'s."""

from __future__ import annotations

import logging
import sqlite3
from collections.abc import Callable, Iterable
from pathlib import Path
from typing import TYPE_CHECKING

from .. import config
from ..errors import NewerDatabaseError, NotWritableError
from ..file_state import file_size_limit_met
from ..migrations import connect
from .connections import open_unswapped, read_header
from .files import INDEX_FILE
from .health import file_size_limit_message, files_in, is_not_writable, no_room, no_space_message, refuse_emptied
from .schema import INDEX_MIGRATIONS
from .upgrades import migration_count, newer_index_message, record_again, refuse_lost_record, upgrade

if TYPE_CHECKING:
    from .store import IndexStore

log = logging.getLogger("brain")

# The page size of a new index database. A chunk row (text and a 768-byte vector) or a note's
# version (its compressed text) is often 2-3 KB: two never share a 4 KB page, and the rest of
# the page stays empty. At 8 KB the index is 5-8% smaller (bench/scale.py, the two real vaults);
# 16 KB gains little more and reads twice the bytes for each chunk recall fetches.
INDEX_PAGE_SIZE = 8192


def open_store(
    cls: type[IndexStore],
    directory: Path,
    *,
    create: bool = True,
    readonly_ok: bool = False,
    rerecord: bool = False,
    warn_newer: bool = True,
) -> IndexStore:
    """Open (creating and migrating as needed) the index database in ``directory``.

    ``rerecord`` (`--repair`): an index whose record of its migrations is gone has it made
    again from its schema (``Migrations.applied_from_schema``); without it, that is "no such
    table: _migrations", since applying them would run the first over its own tables.

    ``readonly_ok``: where the folder cannot be written (a read-only brain home, or a disk
    with no room for the shared-memory file SQLite makes beside a database it opens), open
    the database read-only instead, for commands that only read; so is an index a newer
    brain upgraded (``newer``: its migrations this code lacks), said once in the log unless
    ``warn_newer`` is False (`brain status` says it in its report).
    """
    config.private_folder(directory, create=create)  # note text: the user's alone, whatever the umask
    path = directory / INDEX_FILE
    refuse_emptied(path)
    conn = None
    recorded_again = False
    try:
        conn, identity = _connect_in_place(path, page_size=INDEX_PAGE_SIZE)
        config.private_file(path)  # SQLite made it (and its -wal, -shm) with the umask's 0644
        conn.row_factory = sqlite3.Row
        if INDEX_MIGRATIONS.lost_record(conn):
            record_again(conn, path) if rerecord else refuse_lost_record()
            recorded_again = True
        newer = INDEX_MIGRATIONS.unknown(conn)
        if not newer:
            upgrade(conn, path)
            # Counted, then the record read again: a newer brain's upgrade landing after the
            # look above (during this one, or just after it) is in the record read now, or
            # recorded after the count, where ``refuse_newer`` sees it. Counted after the one
            # look, an upgrade landing between them was counted as this code's own: the
            # store's writes went on into the newer index (a postings child's install did).
            migrations_seen = migration_count(conn)
            newer = INDEX_MIGRATIONS.unknown(conn)
        if newer:
            conn.close()
            conn = None
            if not readonly_ok:  # a command that writes it: never by this code's older rules
                raise NewerDatabaseError(newer_index_message(path, newer))
            # reads go on (the newer brain added to the schema; what this code reads is there),
            # said once, and the store is read-only: nothing of this code is written into it
            if warn_newer:
                log.warning("%s", newer_index_message(path, newer, reading=True))
            why = "this brain does not write an index a newer brain upgraded"
            store = open_readonly(cls, directory, why, written=True)
            store.newer = newer
            return store
    except sqlite3.OperationalError as exc:
        if conn is not None:
            conn.close()
        full = no_room(exc)
        if not (readonly_ok and path.exists() and (is_not_writable(exc) or full)):
            raise
        limit = file_size_limit_met(exc, files_in(directory)) if full else None
        why = (
            file_size_limit_message(directory, str(exc), limit)
            if limit is not None
            else no_space_message(directory, str(exc))
        )
        return open_readonly(cls, directory, why if full else None)
    except BaseException:
        if conn is not None:
            conn.close()
        raise
    store = cls(
        conn,
        directory,
        identity=identity,
        reader=lambda: connect(str(path), check_same_thread=False),
    )
    store.recorded_again = recorded_again  # the record of the migrations, lost: `--repair` says so
    store._migrations_seen = migrations_seen
    return store


def open_readonly(
    cls: type[IndexStore], directory: Path, why: str | None = None, *, written: bool = False
) -> IndexStore:
    """The index database in ``directory`` opened read-only: for a folder that cannot be written
    (``why`` says so, else the default), or an index a newer brain upgraded (``written``)."""
    path = (directory / INDEX_FILE).absolute()
    # With a -wal file, SQLite reads it through the -shm beside it. Without one, or with an
    # empty one (the last writer closed cleanly, or an open on a full disk made it), the
    # database file is the whole truth, and since this folder cannot be written (or has no
    # room for a -shm file, which every writer needs) nobody can change it: ``immutable``
    # reads it without the -shm file SQLite could not create.
    wal = path.with_name(path.name + "-wal")
    # ``written``: a folder others write (a newer brain's index): never immutable
    query = "mode=ro" if written or (wal.exists() and wal.stat().st_size) else "mode=ro&immutable=1"
    uri = f"{path.as_uri()}?{query}"
    conn, identity = open_unswapped(
        path, lambda: sqlite3.connect(uri, uri=True, isolation_level=None, timeout=5), read_header
    )
    try:
        conn.row_factory = sqlite3.Row  # (not query_only: the lexical lane needs a temp table)
        if INDEX_MIGRATIONS.lost_record(conn):
            refuse_lost_record()
        pending = INDEX_MIGRATIONS.pending(conn)
    except BaseException:
        conn.close()
        raise
    if pending:
        conn.close()
        raise NotWritableError(
            f"the index {path} was made by an older brain and must be upgraded, which needs "
            f"write access to {directory}: run `brain index` once where it is writable"
        )
    reader = lambda: sqlite3.connect(uri, uri=True, isolation_level=None, timeout=5, check_same_thread=False)
    return cls(conn, directory, identity=identity, readonly=True, reader=reader, why_readonly=why)


def in_memory(cls: type[IndexStore], directory: Path) -> IndexStore:
    """An empty index that is never saved: what `status` reads before any `brain index`."""
    conn = connect(":memory:")
    conn.row_factory = sqlite3.Row
    INDEX_MIGRATIONS.apply(conn)
    return cls(conn, directory, identity=None, readonly=True)  # of no file


def open_snapshot(cls: type[IndexStore], directory: Path, *, split_searches: bool = False) -> IndexStore:
    """A reader pinned to the state committed when it opens, until ``close()``.

    It holds one read transaction (SQLite WAL: writers go on committing; this reader keeps
    seeing the state it started from), so every query through it reads the rows its vectors
    were built from. The connection is not bound to the opening thread: a server builds a
    snapshot on one thread and queries it on another, never both at once.

    ``split_searches`` (a snapshot that answers queries): on an index large enough to split
    BM25 searches, open the readers that run the parts now, each pinned to the same state
    (``FtsSearch.pin``); a snapshot opened only to look at the index leaves them closed.
    """
    path = directory / INDEX_FILE
    refuse_emptied(path)
    reader = (lambda: connect(str(path), check_same_thread=False)) if split_searches else None
    # The file and its WAL one index's across a rebuild's swap (``open_unswapped``); on the
    # last try the snapshot is kept and says it was replaced (``still_at_its_path``).
    waiting = _waiting_for(path)
    conn, identity = open_unswapped(
        path,
        lambda: connect(str(path), check_same_thread=False, waiting=waiting),
        begin_read,
        keep_last=True,
    )
    conn.row_factory = sqlite3.Row
    store = cls(conn, directory, identity=identity, reader=reader)
    try:
        if split_searches:
            store._fts.pin(store)
    except BaseException:
        store.close()
        raise
    return store


def restart_reads(conns: Iterable[sqlite3.Connection]) -> None:
    """Start each snapshot connection's read transaction again, on the state committed now
    (``IndexStore.restart_snapshot``)."""
    for conn in conns:
        conn.execute("ROLLBACK")
        begin_read(conn)


def _connect_in_place(path: Path, *, page_size: int) -> tuple[sqlite3.Connection, tuple[int, int] | None]:
    """``connect`` to the database at ``path``, the file and its WAL one index's
    (``open_unswapped``: ``connect``'s switch to WAL is its first read), with the identity of
    the file opened. What was written through a connection torn by a rebuild's swap (a
    migration, the background postings and FTS5 merges, which take no writer lock) went into the
    new index as pages of the old one."""
    waiting = _waiting_for(path)
    return open_unswapped(path, lambda: connect(str(path), page_size=page_size, waiting=waiting))


def _waiting_for(path: Path) -> Callable[[], None]:
    """What an open of the index says, once (on stderr, or in the server's log), when it has
    waited a second for a lock another process holds: a command sat silent for the 5 s busy
    timeout, then said "busy". Said once across the opens of ``open_unswapped``. The hooks never
    open the index (the prompt hook asks the server)."""
    told: list[bool] = []

    def waiting() -> None:
        if not told:
            told.append(True)
            log.warning("another process holds the index %s locked: waiting for it…", path)

    return waiting


def begin_read(conn: sqlite3.Connection) -> None:
    """A snapshot's read transaction, begun: it starts at its first read (of meta)."""
    conn.execute("BEGIN")
    conn.execute("SELECT count(*) FROM meta").fetchone()
