"""What is wrong with a vault's index, and the one line that says what to do about it.

``index_errors`` turns SQLite's and the file system's failures on the index into a
``BrainError`` naming the file or folder (unusable, read-only, no room, past `ulimit -f`, busy,
damaged, short of a table, upgraded by a newer brain); the refusals before an open (an emptied
database, an index that is hidden or not built) and after it (lost meta rows); which tables
an index can lose and make again (``DERIVED_TABLES``), which hold the history a rebuild
carries (``HISTORY_TABLES``), and what each loss is told; and whether an index file can be
trusted, read without opening it as a store (``integrity``, ``uncarried_history``)."""

from __future__ import annotations

import errno
import os
import sqlite3
from collections.abc import Collection, Iterator, Sequence
from contextlib import contextmanager
from pathlib import Path
from typing import TYPE_CHECKING, Any

from .. import config
from ..errors import (
    BrainError,
    IndexBusyError,
    IndexDamagedError,
    NoIndexError,
    NoSpaceError,
    NotWritableError,
    UnusableFileError,
)
from ..file_state import file_size_limit, file_size_limit_met, size_limit_words
from ..text import shell_word
from .connections import open_read_only
from .files import INDEX_FILE, RETIRED_SUFFIX
from .schema import INDEX_MIGRATIONS, LATEST_TABLES
from .upgrades import MIGRATIONS_TABLE, newer_index_message, newer_migrations, refuse_newer_unread

if TYPE_CHECKING:
    from .store import IndexStore


def no_room(exc: sqlite3.OperationalError) -> bool:
    """SQLite's way of saying the disk is full: a write that found no room, or a -shm file
    (32 KB, made beside a database when it is opened) that could not be made its size."""
    name = getattr(exc, "sqlite_errorname", "")
    return name in ("SQLITE_FULL", "SQLITE_IOERR_SHMSIZE") or "disk is full" in str(exc)


def files_in(directory: Path) -> Iterator[str]:
    """The paths of what is in ``directory``, read as they are asked for (none if it cannot be
    read): the files of an index ``file_state.file_size_limit_met`` looks at."""
    try:
        with os.scandir(directory) as entries:
            for entry in entries:
                yield entry.path
    except OSError:
        return


def file_size_limit_message(directory: Path, reason: str, limit: int) -> str:
    size = size_limit_words(limit)
    return (
        f"cannot write the index in {directory} ({reason}): the file size limit (`ulimit -f`) stops a file at "
        f"{size}; raise it (`ulimit -f unlimited`) and run again; {_what_answers(directory)}"
    )


def is_not_writable(exc: sqlite3.OperationalError) -> bool:
    """SQLite's way of saying the file or its folder cannot be written (or created)."""
    name = getattr(exc, "sqlite_errorname", "")  # Python 3.11+
    if name:
        return name.startswith(("SQLITE_READONLY", "SQLITE_CANTOPEN"))
    text = str(exc).lower()
    return "readonly" in text or "read-only" in text or "unable to open database file" in text


def refuse_emptied(path: Path) -> None:
    """An index database emptied to 0 bytes beside the files an index had (its vectors, its
    cache) is a damaged index, not a new one: SQLite would take it for new, and the next
    `brain index` would start over, the history gone, without a word. Raised as SQLite's
    damage, which ``index_errors`` turns into the one line that says what to do."""
    try:
        if path.stat().st_size != 0:
            return
        others = [p.name for p in path.parent.iterdir() if not p.name.startswith(path.name)]
    except OSError:
        return  # no database yet, or a folder that cannot be read: opening says what is wrong
    if others:
        raise sqlite3.DatabaseError(f"the database file is empty (0 bytes) beside {', '.join(sorted(others))}")


def built_index_dir(root: Path) -> Path:
    """The folder of ``root``'s index; ``NoIndexError`` (saying how to build it) when it has none."""
    directory = config.index_dir(root)
    if not os.path.exists(directory / INDEX_FILE):
        refuse_hidden_index(directory, root)
        if (directory.with_name(directory.name + RETIRED_SUFFIX) / INDEX_FILE).exists():
            raise NoIndexError(
                f"a `brain index --rebuild` of {root} stopped while it swapped in the new index: run "
                f"`brain index --vault {shell_word(root)}` to put the previous one back, or `brain index --rebuild"
                f" --vault {shell_word(root)}` to finish the new one"
            )
        raise NoIndexError(f"no index for {root} yet: run `brain index --vault {shell_word(root)}` first")
    return directory


@contextmanager
def index_errors(directory: Path, vault: Path) -> Iterator[None]:
    """One place that turns SQLite and file-system failures on a vault's index into a
    ``BrainError`` naming the file or folder and what to do; anything else passes through."""
    database = directory / INDEX_FILE
    try:
        yield
    except BrainError:
        raise
    except sqlite3.OperationalError as exc:
        _refuse_unusable(database, vault, exc)  # unreadable, a folder, a FIFO: not "cannot write"
        if is_not_writable(exc):
            _refuse_read_only_file(database, exc)  # the file, not its folder: "make the folder writable" did nothing
            raise NotWritableError(not_writable_message(directory, str(exc))) from exc
        limit = file_size_limit_met(exc, files_in(directory))
        if limit is not None:
            raise NoSpaceError(file_size_limit_message(directory, str(exc), limit)) from exc
        if no_room(exc):
            raise NoSpaceError(no_space_message(directory, str(exc))) from exc
        if "locked" in str(exc) or "busy" in str(exc):
            raise IndexBusyError(
                f"the index database {database} is busy ({exc}): another brain process is writing it; try again"
            ) from exc
        refuse_newer_unread(directory, exc)  # not a disk I/O error, an interrupt, no memory: said below
        # A table dropped fails every later run too ("no such table", or FTS5's "SQL logic
        # error" for one of its own): looked for on this failure path alone
        missing = _missing_tables_at(database)
        if missing:
            raise IndexDamagedError(missing_table_message(database, vault, missing)) from exc
        raise BrainError(f"the index database {database} could not be used ({exc})") from exc  # disk full, I/O
    except sqlite3.DatabaseError as exc:
        if type(exc) is not sqlite3.DatabaseError:  # IntegrityError and the like: a bug, not damage
            raise
        _refuse_unusable(database, vault, exc)  # a FIFO is "not a database", and reading it waits for a writer
        refuse_newer_unread(directory, exc)  # not a corrupt page nor a file that is no database: damage
        missing = _missing_tables_at(database)  # FTS5 short of a table of its own: "vtable constructor failed"
        if missing:
            raise IndexDamagedError(missing_table_message(database, vault, missing)) from exc
        raise IndexDamagedError(damaged_message(database, vault, str(exc), newer_migrations(directory))) from exc
    except OSError as exc:
        if (
            exc.errno in (errno.EACCES, errno.EPERM, errno.EROFS)
            and exc.filename
            and _related(Path(exc.filename), directory)
        ):
            _refuse_unusable(Path(exc.filename), vault, exc)
            raise NotWritableError(not_writable_message(Path(exc.filename), exc.strerror or str(exc))) from exc
        if exc.errno in (errno.ENOSPC, errno.EDQUOT):
            raise NoSpaceError(no_space_message(directory, exc.strerror or str(exc))) from exc
        limit = file_size_limit() if exc.errno == errno.EFBIG else None
        if limit is not None:  # a vector file past `ulimit -f`: Python's writes and FAISS's say EFBIG
            raise NoSpaceError(file_size_limit_message(directory, exc.strerror or str(exc), limit)) from exc
        raise


def refuse_hidden_index(directory: Path, vault: Path) -> None:
    """``UnusableFileError`` when an index database not found at its path is there but cannot be
    reached: a folder above it may not be searched, or it is a symbolic link to nowhere (a disk
    not mounted). Both were "no index for <vault> yet: run `brain index`"."""
    from ..file_state import unusable

    remake = f"then `brain index --vault {shell_word(vault)}` builds the index again"
    problem = unusable(directory / INDEX_FILE, "the index database", remake)  # one lstat when it is not there
    if problem:
        raise UnusableFileError(problem)


def _refuse_unusable(path: Path, vault: Path, exc: BaseException) -> None:
    """Raise ``UnusableFileError`` when the failure is explained by a file of the index itself
    (``path``, or the database's -wal and -shm): this user may not read it, or it is a folder, a
    FIFO, a link to nowhere. SQLite's "unable to open database file" (or "disk I/O error") is
    said of these and of a folder it may not write alike; only the latter is "cannot write"."""
    if "locked" in str(exc) or "busy" in str(exc):
        return
    from ..file_state import unusable

    names = {
        INDEX_FILE: "the index database",
        f"{INDEX_FILE}-wal": "the index's log",
        f"{INDEX_FILE}-shm": "the index's shared memory file",
    }
    paths = [path.with_name(n) for n in names] if path.name == INDEX_FILE else [path]
    for each in paths:
        what = names.get(each.name, "the index file")
        remake = (
            f"then `brain index --vault {shell_word(vault)}` builds the index again"
            if each.name == INDEX_FILE
            else f"then `brain index --vault {shell_word(vault)}` makes it again"
        )
        problem = unusable(each, what, remake)
        if problem:
            raise UnusableFileError(problem) from exc


def _refuse_read_only_file(database: Path, exc: BaseException) -> None:
    """``NotWritableError`` naming the index database (or its -wal, -shm) when that file, not its
    folder, is what this user may not write (chmod a-w, another user's)."""
    from ..file_state import read_only

    if not os.access(database.parent, os.W_OK):  # the folder too (a read-only home): said of the folder
        return
    for name, what in (
        ("", "the index database"),
        ("-wal", "the index's log"),
        ("-shm", "the index's shared memory file"),
    ):
        problem = read_only(database.with_name(database.name + name), what)
        if problem:
            raise NotWritableError(problem) from exc


def damaged_message(database: Path, vault: Path, reason: str, newer: Sequence[str] = ()) -> str:
    """What is said of a damaged index; of one a newer brain upgraded (``newer``: its migrations
    this code lacks), this brain's `--repair` would be refused (it does not write it): that
    brain's is the one to run, or this one's `--rebuild`."""
    rebuild = f"`brain index --rebuild --vault {shell_word(vault)}`"
    if newer:
        return (
            f"the index database {database} is damaged ({reason}); a newer brain upgraded it ({', '.join(newer)}),"
            f" so this brain does not repair it: run `brain index --repair` with that brain, or {rebuild} with"
            " this one to build a new one (the damaged one is moved aside, not deleted)"
        )
    return (
        f"the index database {database} is damaged ({reason}); run `brain index --repair --vault {shell_word(vault)}` "
        "to rebuild its search index from its own rows (no re-embedding); if the database itself is damaged "
        f"it says so, and {rebuild} builds a new one (the damaged one is moved aside, not deleted)"
    )


def refuse_lost_meta(store: IndexStore, vault: Path) -> None:
    """Raise when the index holds chunks but not the model their vectors came from or their
    dimension (a meta row deleted). Without the model it read as nothing embedded: brain ask
    said the vault had no notes, and `brain index` left it so (a model is recorded only as a
    first batch is embedded); without the dimension the vectors were read as of size 0."""
    lost = [key for key in ("model", "dim") if not store.get_meta(key)]
    if lost and store.has_chunks():
        raise IndexDamagedError(
            f"the index database {store.directory / INDEX_FILE} holds chunks but not the {' and '.join(lost)} of"
            f" their vectors (its meta rows are gone); run `brain index --rebuild --vault {shell_word(vault)}` to"
            " build a new one"
        )


def _fts_tables(name: str) -> frozenset[str]:
    """An FTS5 table and the tables it keeps its index in."""
    return frozenset([name, *(f"{name}_{part}" for part in ("config", "data", "docsize", "idx"))])


# The BM25 indexes over the chunks and the past chunks, and the tables FTS5 keeps them in
SEARCH_INDEX_TABLES = {name: _fts_tables(name) for name in ("chunks_fts", "chunk_history_fts")}
CHUNKS_FTS_TABLES = SEARCH_INDEX_TABLES["chunks_fts"]
# What the index makes again from its own rows (the BM25 indexes) or keeps only to spare work
# (the scan snapshot and its log, the logs of changes since the postings base and since the
# last link resolution, the files skipped, read again by the next run): a dropped one loses
# nothing, and ``--repair`` makes it again
DERIVED_TABLES = frozenset().union(
    *SEARCH_INDEX_TABLES.values(), ["scan_snapshot", "scan_snapshot_log", "postings_log", "name_changes", "skipped"]
)
# What only brain holds: the notes' past versions, their texts and chunks, the links' history.
# A new index (``--rebuild``) carries them over from an index that lost another table
HISTORY_TABLES = frozenset(
    ["note_versions", "text_packs", "text_segments", "chunk_history", "version_chunks", "link_history"]
)
# Where the texts of past versions over 4 KB are kept (``version_text.py``): one gone, the others'
# texts are unreadable, the rest of the history is whole, and carried (those versions' texts
# marked as not kept, as those of versions from before brain kept texts)
TEXT_TABLES = frozenset(["text_packs", "text_segments"])
UNCARRIABLE_HISTORY = HISTORY_TABLES - TEXT_TABLES  # one of these gone, a rebuild cannot carry the history


def missing_table_message(database: Path, vault: Path, missing: Sequence[str]) -> str:
    reason = f"no such table: {', '.join(missing)}"
    newer = newer_migrations(database.parent)
    if newer:  # not damage: a newer brain's migration renamed or dropped it
        return newer_index_message(database, newer, unread=reason)
    if list(missing) == [MIGRATIONS_TABLE]:  # told again from the tables, by --repair (or it says why not)
        return (
            f"the index database {database} lost the record of the migrations it had ({reason}); run `brain index"
            f" --repair --vault {shell_word(vault)}` to record again those its tables show ran (no re-embedding)"
        )
    if set(missing) <= DERIVED_TABLES:  # made again from its own rows, or a cache
        return (
            f"the index database {database} lacks tables it makes from its own rows ({reason}); run `brain index"
            f" --repair --vault {shell_word(vault)}` to make them again (no re-embedding)"
        )
    return f"the index database {database} lacks a table it needs ({reason}); {rebuild_advice(vault, missing)}"


def rebuild_advice(vault: Path, missing: Collection[str]) -> str:
    """What `brain index --rebuild` does for an index short of ``missing``: rows dropped with a
    table are gone, only a new index has them; the history it holds goes with it, unless a
    table of the history itself is what went."""
    command = f"run `brain index --rebuild --vault {shell_word(vault)}` to build a new one"
    lost = sorted(UNCARRIABLE_HISTORY.intersection(missing))
    if lost:
        return (
            f"{command}; its history lost {', '.join(lost)} and cannot be carried into it: the damaged index is moved"
            " aside, not deleted, and keeps what history is left"
        )
    texts = sorted(TEXT_TABLES.intersection(missing))
    if texts:
        return (
            f"{command}, this one's history carried into it, without the texts of past versions over 4 KB (kept"
            f" with {', '.join(texts)}): those are marked as not kept (this one is moved aside, not deleted)"
        )
    return f"{command}, this one's history carried into it (this one is moved aside, not deleted)"


def _missing_tables_at(database: Path) -> list[str]:
    """``missing_tables`` of the database at this path, or none when it cannot be read."""
    try:
        conn = open_read_only(database, timeout=1)
        try:
            return missing_tables(conn)
        finally:
            conn.close()
    except sqlite3.Error:
        return []


def missing_tables(conn: sqlite3.Connection) -> list[str]:
    """The tables the migrations recorded as applied made that the database lacks (dropped by
    hand, or by a tool): quick_check finds nothing wrong with a database short of a table. An
    index from before a migration lacks none of its tables: it has not run there yet."""
    if INDEX_MIGRATIONS.lost_record(conn):  # none recorded: which of the others it lacks cannot be told
        return [MIGRATIONS_TABLE]
    applied = set(INDEX_MIGRATIONS.applied(conn))
    last = [name for name, _ in INDEX_MIGRATIONS.steps if name in applied]
    if not last:
        return []
    # a current index, the one every command opens once migrated: not the migrations run in memory
    made = LATEST_TABLES[1] if last[-1] == LATEST_TABLES[0] else INDEX_MIGRATIONS.tables_made()[last[-1]]
    present = {r[0] for r in conn.execute("SELECT name FROM sqlite_master WHERE type = 'table'")}
    return sorted(made - present)


def search_index_damaged(exc: BaseException) -> bool:
    """Whether a search failed on a damaged index: SQLite's "malformed" (SQLITE_CORRUPT, or
    FTS5's SQLITE_CORRUPT_VTAB). From an FTS5 statement that is the BM25 index out of step with
    the rows it indexes (a 'delete' handed other values than were indexed leaves entries
    behind), mended by ``rebuild_search_indexes``."""
    if type(exc) is not sqlite3.DatabaseError:
        return False
    return getattr(exc, "sqlite_errorcode", None) in (11, 267) or "malformed" in str(exc)


def no_space_message(directory: Path, reason: str) -> str:
    return (
        f"no room left to write the index in {directory} ({reason}): free some space on that disk (or set "
        f"BRAIN_HOME to a folder on one with room) and run again; {_what_answers(directory)}"
    )


def _what_answers(directory: Path) -> str:
    """What a failed write leaves to answer: the index as it was, or, when no run of `brain index`
    ever completed there and it holds no note (a first one on a full disk), none yet. (A note
    counts too: an index older than ``indexed_at`` has none.)"""
    try:
        conn = open_read_only(directory / INDEX_FILE, timeout=1)
        try:
            built = (
                conn.execute(
                    "SELECT 1 FROM meta WHERE key = 'indexed_at' UNION ALL SELECT 1 FROM (SELECT 1 FROM notes LIMIT 1)"
                ).fetchone()
                is not None
            )
        finally:
            conn.close()
    except sqlite3.Error:  # no file, no meta table: never built; anything else: as before
        built = not _never_built(directory)
    return "nothing was lost, the index as it was still answers" if built else "nothing was lost; there is no index yet"


def _never_built(directory: Path) -> bool:
    """No database there, or one with no ``meta`` table: no `brain index` run ever completed."""
    database = directory / INDEX_FILE
    if not database.exists():
        return True
    try:
        conn = open_read_only(database, timeout=1)
        try:
            return conn.execute("SELECT 1 FROM sqlite_master WHERE name = 'meta'").fetchone() is None
        finally:
            conn.close()
    except sqlite3.Error:
        return False


def not_writable_message(where: Path, reason: str) -> str:
    return (
        f"cannot write to {where} ({reason}): brain keeps each vault's index under the brain home "
        f"({config.brain_home()}); make it writable or set BRAIN_HOME to a folder that is"
    )


def _related(path: Path, directory: Path) -> bool:
    """``path`` is the index folder, inside it, beside it, or one of the folders above it."""
    try:
        path, directory = path.absolute(), directory.absolute()
    except OSError:
        return False
    return directory.is_relative_to(path) or path.is_relative_to(directory.parent)


def note_count_at(directory: Path) -> int | None:
    """How many notes the index database in ``directory`` holds, read-only; None if unreadable."""
    try:
        conn = open_read_only(directory / INDEX_FILE, timeout=1)
        try:
            return int(conn.execute("SELECT count(*) FROM notes").fetchone()[0])
        finally:
            conn.close()
    except sqlite3.Error:
        return None


def history_at(directory: Path) -> dict[str, Any] | None:
    """What history the index in ``directory`` holds, read-only (``{"damaged": True}`` when it
    cannot be read, or a table of it is gone; None when there is no index): past_versions, notes_with_past,
    closed_edges, since. Before m007_history, no history: zeros."""
    path = directory / INDEX_FILE
    if not path.exists():
        return None
    try:
        refuse_emptied(path)
        conn = open_read_only(path)
        try:
            # a table of the history gone first: its absence is then no index from before history
            if UNCARRIABLE_HISTORY.intersection(missing_tables(conn)):  # a rebuild cannot carry it
                return {"damaged": True}
            if not conn.execute("SELECT 1 FROM sqlite_master WHERE name = 'note_versions'").fetchone():
                return {"past_versions": 0, "notes_with_past": 0, "closed_edges": 0, "since": None}
            one = lambda sql: conn.execute(sql).fetchone()[0]
            since = conn.execute("SELECT value FROM meta WHERE key = 'history_since'").fetchone()
            return {
                "past_versions": one("SELECT count(*) FROM note_versions WHERE recorded_to IS NOT NULL"),
                "notes_with_past": one(
                    "SELECT count(DISTINCT note_id) FROM note_versions WHERE recorded_to IS NOT NULL"
                ),
                "closed_edges": one("SELECT count(*) FROM link_history WHERE recorded_to IS NOT NULL"),
                "since": float(since[0]) if since else None,
            }
        finally:
            conn.close()
    except sqlite3.DatabaseError:
        return {"damaged": True}


def integrity_problem(directory: Path) -> str | None:
    """Why the index database in ``directory`` cannot be trusted, or None (also when absent)."""
    damaged, missing = integrity(directory)
    if damaged:
        return damaged
    # its rows are gone with it: a new index, this one kept aside
    return f"no such table: {', '.join(missing)}" if missing else None


def integrity(directory: Path) -> tuple[str | None, list[str]]:
    """Why the index database file in ``directory`` is damaged (or None: sound, absent, or
    busy or unreadable here, no evidence of damage), and the tables this code reads that a
    sound file lacks: lost, or renamed by a newer brain (``newer_migrations`` tells which)."""
    path = directory / INDEX_FILE
    if not path.exists():
        return None, []
    try:
        refuse_emptied(path)
        conn = open_read_only(path)
        try:
            damage = quick_check(conn)
            missing = missing_tables(conn) if damage is None else []
        finally:
            conn.close()
    except sqlite3.OperationalError:  # busy, or not readable here: no evidence of damage
        return None, []
    except sqlite3.DatabaseError as exc:
        return str(exc), []
    return damage, missing


def quick_check(conn: sqlite3.Connection) -> str | None:
    """What SQLite's quick_check finds wrong with the database ``conn`` is open on, on one line
    of 200 characters at most, or None when nothing: a damaged file said alike by `brain index
    --rebuild` (the index it replaces, whether its history can be carried) and `brain backup`
    (the copy, and so its source)."""
    row = conn.execute("PRAGMA quick_check(1)").fetchone()
    verdict = str(row[0]) if row else "no answer from the integrity check"
    return None if verdict == "ok" else " ".join(verdict.split())[:200]


def uncarried_history(directory: Path) -> str | None:
    """Why the history of the damaged index in ``directory`` cannot be carried into a new
    one (the file itself damaged, or a table of the history gone), or None: it can, the
    tables it lost hold none of it."""
    path = directory / INDEX_FILE
    try:
        refuse_emptied(path)
        conn = open_read_only(path)
        try:
            damage = quick_check(conn)
            if damage is not None:
                return damage
            if INDEX_MIGRATIONS.lost_record(conn) and INDEX_MIGRATIONS.applied_from_schema(conn) is None:
                return f"no such table: {MIGRATIONS_TABLE}, and its tables are not those of any version brain made"
            lost = sorted(UNCARRIABLE_HISTORY.intersection(missing_tables(conn)))
        finally:
            conn.close()
    except sqlite3.DatabaseError as exc:
        return str(exc)
    return f"no such table: {', '.join(lost)}" if lost else None
