"""The telemetry and turn-ledger database (``BRAIN_DB``): one file for the user.

Tables are created by the named migrations in ``db_migrations``; ``schema.sql`` documents
the result. Standard library only: the Stop hook writes here.

Every failure to open or use the file becomes a ``BrainDatabaseError`` whose one line
names the file and says what to do (damaged, read-only, locked, a folder that cannot be
created). Commands that only read create nothing and change no file's mode (an older
database of brain's is upgraded in place): a missing or empty one reads as nothing recorded,
and a file that is not SQLite is refused as it is.
"""

from __future__ import annotations

import contextlib
import errno
import os
import re
import sqlite3
import stat
import time
from collections.abc import Iterator
from contextlib import contextmanager
from pathlib import Path
from typing import Any

from . import config
from .db_migrations import MIGRATIONS
from .errors import BrainError, newer_than_this, read_only_failure
from .kept_aside import is_kept_row, kept_aside_dir
from .migrations import connect

_SURROGATE = "[\ud800-\udfff]"  # compiled on first use, off the hook's start-up


class BrainDatabaseError(BrainError):
    """The brain database cannot be opened or used; the message names the file."""


class UpgradeDeferred(BrainDatabaseError):
    """A hook's open: the pending migrations did not fit its budget (rolled back, left to a
    run without one), or an earlier hook's did not and its rows wait in ``kept_aside_dir``."""


class NewerLedger(UpgradeDeferred):
    """A database a newer brain upgraded: this code writes nothing into it (its rows by older
    rules); a hook keeps its row aside, for the newer brain's catch-up to record."""


NEWER_RECORDS = "the newer brain's `brain turns` or `brain recalls` records it"  # the hooks' log line


def _refuse_newer(conn: sqlite3.Connection, path: Path) -> None:
    newer = MIGRATIONS.unknown(conn)
    if newer:
        raise NewerLedger(
            f"{newer_than_this(path, newer)}: this brain does not write it (its older rules would be mixed"
            " into the newer ones); upgrade brain to the version that made it"
        )


@contextmanager
def written(conn: sqlite3.Connection) -> Iterator[sqlite3.Connection]:
    """A write to the ledger: ``BEGIN IMMEDIATE`` (unless the caller's transaction holds it),
    then the record of migrations read again, under the write lock, before anything is written;
    ``COMMIT``, or rolled back on any exception.

    The open's look for a newer brain's migrations (``_refuse_newer``) is not enough: a newer
    brain's upgrade landing after it (while the open applied this code's, while a hook read,
    during a command's run) went unseen, and the row went into the newer ledger by this
    code's older rules. Seen here, it raises ``NewerLedger`` with nothing written (a hook keeps
    its row aside for the newer brain). One read of a table of a few rows a write."""
    own = not conn.in_transaction
    if own:
        conn.execute("BEGIN IMMEDIATE")
    try:
        if MIGRATIONS.unknown(conn):
            _refuse_newer(conn, Path(conn.execute("PRAGMA database_list").fetchone()[2]))
        yield conn
        if own:
            conn.execute("COMMIT")
    except BaseException:
        if own and conn.in_transaction:
            with contextlib.suppress(sqlite3.Error):  # SQLite may have rolled back already
                conn.execute("ROLLBACK")
        raise


def open_db(
    path: Path | None = None,
    *,
    read_only: bool = False,
    migrate_until: float | None = None,
    warn_newer: bool = True,
    upgrade: bool = True,
) -> sqlite3.Connection:
    """Open (creating and migrating as needed) the brain database.

    ``read_only`` is for commands that only read (``brain turns``, ``ab report``): they never
    create the file nor change its mode (``BRAIN_DB`` may name any file of the user's); a
    missing or empty one reads as nothing recorded yet, and when the file or its folder
    cannot be written it is opened read-only.

    ``migrate_until`` (a ``time.monotonic()``) is a hook's: pending migrations still running
    then are interrupted and rolled back, and ``UpgradeDeferred`` is raised, as it is at once
    while rows kept aside by an earlier hook wait for a run without a budget (a watchdog
    ending the hook mid-migration would roll it back too, on every hook, recording nothing).

    ``warn_newer``: a read-only open of a database a newer brain upgraded says so, once, in the
    log (not a hook's: its stderr is the agent's).

    ``upgrade=False`` (with ``read_only``): an older database is read as it is, never upgraded
    (`brain mcp`, which writes nothing): its ``turns`` have had what ``recent_turns`` reads since m001.
    """
    path = path or config.db_path()
    if read_only:
        return _open_for_reading(path, warn_newer, upgrade)
    if migrate_until is not None and _holds_files(kept_aside_dir(path)):
        raise UpgradeDeferred(f"{path}: its upgrade waits for a brain command (rows kept aside)")
    try:
        refuse_foreign(path)  # before private_file: a user's notes.txt is not made 0600
        return _open(path, migrate_until)
    except UpgradeDeferred:
        raise
    except (sqlite3.Error, OSError) as exc:
        raise database_error(path, exc) from exc


def _holds_files(folder: Path) -> bool:
    try:
        with os.scandir(folder) as entries:
            return any(is_kept_row(e.name) for e in entries)
    except OSError:  # none there, or one the hook cannot read: nothing of its own waits there
        return False


@contextmanager
def connection(
    path: Path | None = None,
    *,
    read_only: bool = False,
    migrate_until: float | None = None,
    warn_newer: bool = True,
    upgrade: bool = True,
) -> Iterator[sqlite3.Connection]:
    """``open_db`` for a ``with`` block: closed after it, and SQLite errors met inside it
    (a damaged page turns up in the middle of a query) become ``BrainDatabaseError``."""
    path = path or config.db_path()
    conn = open_db(path, read_only=read_only, migrate_until=migrate_until, warn_newer=warn_newer, upgrade=upgrade)
    try:
        yield conn
    except sqlite3.Error as exc:
        raise database_error(path, exc) from exc
    finally:
        conn.close()


def _open(path: Path, migrate_until: float | None = None) -> sqlite3.Connection:
    if not path.parent.exists():  # a folder brain makes is owner-only; one already there is the user's
        config.private_folder(path.parent)
    else:  # but not one where another user could plant the database, its -wal or its journal
        config.refuse_shared(path.parent)
    config.private_file(path)  # prompts and turns: the user's alone, not the umask's 0644
    conn = connect(str(path))
    try:
        conn.row_factory = sqlite3.Row
        _refuse_newer(conn, path)
        if migrate_until is None:
            MIGRATIONS.apply(conn)
        else:
            _apply_until(conn, path, migrate_until)
    except BaseException:
        conn.close()
        raise
    return conn


def _apply_until(conn: sqlite3.Connection, path: Path, deadline: float) -> None:
    """Apply the pending migrations, interrupting SQLite at ``deadline``: each is atomic, so an
    interrupted one is rolled back (those before it stay applied)."""
    pending = MIGRATIONS.pending(conn)
    if not pending:
        return
    if time.monotonic() >= deadline:  # no time left: a small migration would run to its end regardless
        raise UpgradeDeferred(f"{path}: no time left in the hook's budget for its upgrade ({', '.join(pending)})")
    conn.set_progress_handler(lambda: time.monotonic() >= deadline, 1000)
    # Another process upgrading (a command, with no budget) holds the write lock: wait for it
    # only as long as the budget lasts, not the busy timeout (SQLite's wait is not interrupted).
    busy_ms = conn.execute("PRAGMA busy_timeout").fetchone()[0]
    conn.execute(f"PRAGMA busy_timeout = {max(int((deadline - time.monotonic()) * 1000), 1)}")
    try:
        MIGRATIONS.apply(conn)
    except sqlite3.OperationalError as exc:
        busy = getattr(exc, "sqlite_errorname", "").startswith("SQLITE_BUSY") or "locked" in str(exc)
        if not busy and "interrupted" not in str(exc):
            raise
        why = "another process holds the database" if busy else "it did not fit the hook's budget (rolled back)"
        raise UpgradeDeferred(f"{path}: the upgrade ({', '.join(MIGRATIONS.pending(conn))}) waits: {why}") from exc
    finally:
        conn.set_progress_handler(None, 0)
        conn.execute(f"PRAGMA busy_timeout = {int(busy_ms)}")


def _open_for_reading(path: Path, warn_newer: bool = True, upgrade: bool = True) -> sqlite3.Connection:
    try:
        st = path.stat()
    except FileNotFoundError:
        return _nothing_recorded()
    except NotADirectoryError as exc:  # `brain turns` said "no turns recorded yet" of a BRAIN_HOME that is a file
        above = next((p for p in path.parents if os.path.lexists(p)), path.parent)
        raise BrainDatabaseError(
            f"cannot read {path}: {above} is a file, not a folder; BRAIN_HOME (and BRAIN_DB) must lead to a folder"
        ) from exc
    except OSError as exc:
        raise database_error(path, exc) from exc
    if not stat.S_ISREG(st.st_mode):
        raise database_error(path, sqlite3.OperationalError("not a regular file"))
    try:
        refuse_foreign(path)  # a procfs file is 0 bytes to stat and text to read: no database
    except OSError as exc:
        raise database_error(path, exc) from exc
    if st.st_size == 0:
        return _nothing_recorded()  # SQLite would write a whole database into it
    return _open_read_only(path, warn_newer, upgrade)


def _nothing_recorded() -> sqlite3.Connection:
    """An empty database in memory, with brain's tables: what a reader sees before the first write."""
    conn = sqlite3.connect(":memory:", isolation_level=None)
    conn.row_factory = sqlite3.Row
    MIGRATIONS.apply(conn)
    return conn


_SQLITE_HEADER = b"SQLite format 3\x00"


def refuse_foreign(path: Path) -> None:
    """Raise when ``path`` is a regular file with content that is not SQLite's: SQLite only
    says "not a database" after brain has made it 0600 (and would never be right about it).
    An empty file is read too: one of /proc or /sys (``/proc/self/status``) says 0 bytes and
    holds text, and was "no turns recorded yet"."""
    try:
        st = path.stat()
    except OSError:  # not there, or not to be reached: SQLite's error says which
        return
    if not stat.S_ISREG(st.st_mode):
        return
    try:
        with path.open("rb") as handle:
            head = handle.read(len(_SQLITE_HEADER))
    except FileNotFoundError:
        return
    except PermissionError:
        if st.st_size == 0:  # an empty file this user may not read: nothing recorded in it, as before
            return
        raise
    if head == _SQLITE_HEADER[: len(head)]:  # a header cut short is SQLite's, and damaged
        return
    if path == config.brain_home() / "brain.db":  # brain's own file, not one BRAIN_DB names: overwritten
        raise database_error(path, sqlite3.DatabaseError("file is not a database"))
    raise BrainDatabaseError(
        f"{path} is not an SQLite database (left as it is): BRAIN_DB must name brain's database, "
        "or a file not there yet"
    )


def _open_read_only(path: Path, warn_newer: bool = True, upgrade: bool = True) -> sqlite3.Connection:
    # mode=ro reads a read-only file; a WAL database in a read-only folder also needs its
    # -shm file, which cannot be created there: then immutable=1, which reads the file as
    # it is (nobody can be writing it: nobody can write the folder).
    uri = path.resolve().as_uri()
    for flags in ("mode=ro", "immutable=1"):
        conn = sqlite3.connect(f"{uri}?{flags}", uri=True, isolation_level=None)
        try:
            conn.row_factory = sqlite3.Row
            pending = MIGRATIONS.pending(conn)
        except sqlite3.Error as exc:
            conn.close()
            if flags == "immutable=1" or not read_only_failure(exc):
                raise database_error(path, exc) from exc
            continue
        if pending and upgrade:
            conn.close()
            return _upgrade(path)
        newer = MIGRATIONS.unknown(conn) if warn_newer else []
        if newer:  # reading what this code knows of it is safe: the newer brain only added to it
            import logging

            logging.getLogger("brain").warning("%s: read as it is", newer_than_this(path, newer))
        return conn
    raise AssertionError("unreachable")


def newer_ledger_warning(conn: sqlite3.Connection, path: Path | None = None) -> str | None:
    """What a reader's answer says of a ledger a newer brain upgraded (read as it is, as this
    code knows it: the newer brain only added to it), or None: `brain mcp`'s ``recent_turns``,
    as its index tools say ``SUPERSEDED_ANSWER``."""
    newer = MIGRATIONS.unknown(conn)
    if not newer:
        return None
    return (
        f"{newer_than_this(path or config.db_path(), newer)}: its turns are read as this brain knows them "
        "(what the newer brain added to them left out); restart the session with the newer brain"
    )


def _upgrade(path: Path) -> sqlite3.Connection:
    """brain's own database, written by an older brain: its tables are brought up to date
    (its mode left as it is), or, when it cannot be written, that is said."""
    try:
        conn = connect(str(path))
    except sqlite3.Error as exc:
        raise _older_or(path, exc) from exc
    try:
        conn.row_factory = sqlite3.Row
        MIGRATIONS.apply(conn)
    except sqlite3.Error as exc:
        conn.close()
        raise _older_or(path, exc) from exc
    return conn


def _older_or(path: Path, exc: sqlite3.Error) -> BrainDatabaseError:
    if not read_only_failure(exc):
        return database_error(path, exc)
    return BrainDatabaseError(
        f"{path} is read-only and older than this brain (its tables need an upgrade): "
        "make it and its folder writable once, then run this again"
    )


def database_error(path: Path, exc: BaseException) -> BrainDatabaseError:
    """One line for a failure on the brain database at ``path``: which file, what to do."""
    text = str(exc)
    name = getattr(exc, "sqlite_errorname", "")
    if isinstance(exc, OSError) or name.startswith(("SQLITE_CANTOPEN", "SQLITE_IOERR")) or "unable to open" in text:
        # the file itself, or the log beside it: not "cannot create" nor "check that the folder is writable"
        problem = _unreadable(path) or _unusable_beside(path)
        if problem:
            return BrainDatabaseError(problem)
    from .file_state import file_size_limit_met, size_limit_words

    # the database or its log reached the limit
    limit = file_size_limit_met(exc, (f"{path}{suffix}" for suffix in ("", "-wal", "-shm")))
    if limit is not None:
        return BrainDatabaseError(
            f"cannot write {path} ({text}): the file size limit (`ulimit -f`) stops a file at "
            f"{size_limit_words(limit)}; raise it (`ulimit -f unlimited`)"
        )
    full = name == "SQLITE_FULL" or "disk is full" in text
    if full or (isinstance(exc, OSError) and exc.errno in (errno.ENOSPC, errno.EDQUOT)):
        # `brain prune --ledger` on a full disk said "brain.db: database or disk is full", no more
        return BrainDatabaseError(
            f"no room left to write {path} ({exc.strerror if isinstance(exc, OSError) else text}): free some "
            "space on that disk (or set BRAIN_HOME to a folder on one with room) and run again; nothing "
            "recorded before was lost"
        )
    if isinstance(exc, OSError):
        folder = exc.filename or path.parent
        return BrainDatabaseError(
            f"cannot create {folder} for the brain database: {exc.strerror or exc}; "
            "make it writable, or set BRAIN_HOME (or BRAIN_DB) to a folder you can write"
        )
    if "malformed JSON" in text and name not in ("SQLITE_CORRUPT", "SQLITE_NOTADB"):
        # A JSON column edited by hand: one row is wrong, not the file; moving it aside would
        # set every turn and prompt aside for it.
        return BrainDatabaseError(
            f"{path} has a row whose JSON is not valid ({text}; edited by hand?): the file itself is "
            "sound, keep it; put that row's JSON right with sqlite3, or delete the row"
        )
    if name in ("SQLITE_CORRUPT", "SQLITE_NOTADB") or any(
        s in text for s in ("malformed", "not a database", "corrupt")
    ):
        return BrainDatabaseError(
            f"{path} is damaged ({text}): move it aside (mv '{path}' '{path}.damaged') and "
            f"brain starts a new one; `sqlite3 '{path}.damaged' .recover` may save its rows"
        )
    if name.startswith("SQLITE_READONLY") or "readonly" in text:
        return BrainDatabaseError(
            f"{path} cannot be written (the file or its folder {path.parent} is read-only): "
            "make them writable, or set BRAIN_DB to a file in a folder you can write"
        )
    if path.is_dir():
        return BrainDatabaseError(f"{path} is a folder, not a database file: move it, or set BRAIN_DB to a file")
    if path.exists() and not path.is_file():  # SQLite says "disk I/O error" of /dev/null or a FIFO
        return BrainDatabaseError(
            f"{path} is not a regular file (a device, FIFO or socket), so not a database: set BRAIN_DB to a file"
        )
    if name.startswith("SQLITE_CANTOPEN") or "unable to open" in text:
        what = "open" if path.exists() else "create"
        return BrainDatabaseError(
            f"cannot {what} {path} ({text}): check that {path.parent} is a folder you can "
            "write, or set BRAIN_DB to a file in one"
        )
    if name.startswith("SQLITE_BUSY") or "locked" in text:
        return BrainDatabaseError(f"{path} is locked by another process ({text}); try again")
    return BrainDatabaseError(f"{path}: {text}")


def _unreadable(path: Path) -> str | None:
    """What keeps this user from reading the brain database at ``path`` (its modes, its owner,
    a folder above it that may not be searched, a link to nowhere); a folder or a FIFO in its
    place is said below."""
    if os.path.isdir(path) or (os.path.exists(path) and not os.path.isfile(path)):
        return None
    from .file_state import unusable

    return unusable(path, "the brain database", "brain starts a new one")


def _unusable_beside(path: Path) -> str | None:
    """What is wrong with the -wal or -shm file SQLite keeps beside the database (this user may
    not open it; a folder or a FIFO in its place): it was blamed on the database file or its
    folder ("check that <folder> is a folder you can write", "disk I/O error")."""
    from .file_state import unusable

    for suffix, what in (
        ("-wal", "the brain database's write-ahead log"),
        ("-shm", "the brain database's shared memory file"),
    ):
        problem = unusable(path.with_name(path.name + suffix), what, "SQLite makes a new one")
        if problem:
            return problem
    return None


def storable(value: Any) -> Any:
    """``value`` with every string fit for SQLite: unpaired UTF-16 surrogates become U+FFFD.

    JSON may hold "\\ud83d" alone (JavaScript cuts strings inside emoji), and json.loads
    keeps it; SQLite's UTF-8 encoder refuses it. Walks lists and dicts (keys too), so a
    value can be cleaned before json.dumps.
    """
    if isinstance(value, str):
        if not re.search(_SURROGATE, value):
            return value
        # Through UTF-16: a real pair becomes its character, a lone half U+FFFD.
        return value.encode("utf-16", "surrogatepass").decode("utf-16", "replace")
    if isinstance(value, list):
        return [storable(v) for v in value]
    if isinstance(value, dict):
        return {storable(k): storable(v) for k, v in value.items()}
    return value
