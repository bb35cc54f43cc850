"""Rows the hooks keep aside while an upgrade of the brain database waits for a run without a budget.

A hook that opens the database under its budget (``db.open_db(migrate_until=...)``) and finds
a migration that does not fit (m004 scans every turn: seconds at 1,000,000) rolls it back and
writes its row here instead, one small file a row in ``<brain.db>.kept-aside/``, named so they
sort in the order they were written. While any is there, later hooks write here too, without
trying the upgrade again (each try would hold the database's write lock for its whole budget).
``catch_up`` (no watchdog) applies the upgrade, then writes the rows in that order, in one
transaction with each row's id (``kept_aside_recorded``), and removes their files, then the
ids: a catch-up killed before the files were gone skips those rows next time. It is run by a
process of its own that the hook keeping a row aside starts (``start_catch_up``: the ledger
mends itself within seconds, with no command typed), and by ``brain turns`` and ``brain recalls``.

A row from before the latest `brain prune --ledger` cut (``ledger_prunes``) is dropped, not
recorded: its hook took its time before the prune and wrote its file after the prune's own
catch-up, and recorded, it was back in the ledger the prune had cut.

A file there that holds no row that can be written (not JSON, no ``turn_key``, a kind of row
brain does not know, one its table's constraints refuse, larger than any row brain writes, not
a regular file) is moved to ``rejected/`` in the folder,
never deleted, and the others are recorded: left in place it failed every catch-up, and while
it was there every later hook kept its row aside too, so the ledger stopped for good.

Rows are masked before they are kept (as ``write_turn`` and ``write_recall`` would store them)
and the files are the user's alone. Standard library only: the hooks write here.
"""

from __future__ import annotations

import contextlib
import errno
import fcntl
import json
import os
import sqlite3
import stat
import subprocess
import time
from pathlib import Path
from typing import Any, NamedTuple

from .. import config
from ..db import NEWER_RECORDS, NewerLedger, connection, storable
from ..kept_aside import REJECTED, is_kept_row, kept_aside_dir, rejected, rejected_line, waiting  # noqa: F401
from ..migrations import write_transaction
from .redact import redact_value
from .store import last_cut, recorded_before, utc_now, write_turn
from .transcript import MAX_READ

TURN = "turn"
RECALL = "recall"
# A catch-up that failed less than this many seconds ago (a damaged database, a full disk) is not
# started again: not retried by every hook; `brain turns` still can. One running holds the lock.
RETRY_SECONDS = 60.0
# The file a failed catch-up leaves in the kept-aside folder, when it failed (its time).
FAILED = ".catch-up-failed"
# The largest file a catch-up reads (it read each whole: a file of GBs put here ran it out of
# memory). A row holds what a hook read: the Stop hook's transcript, at most ``MAX_READ`` bytes,
# each value written back no longer than it was read (JSON in, JSON out, secrets masked
# shorter), a few fields of its input (ids and paths of at most 64 K characters, text clipped to
# 4,000) and the branch (``hook.git_branch``, as short); a prompt's row, its prompt clipped. So a
# row is under 17 MB; twice that leaves room for what this sum misses. A larger file is no row
# brain wrote.
MAX_ROW_BYTES = 2 * MAX_READ
_UNIX_EPOCH_JD = 2440587.5
# What writing a row raises when the row is at fault (a field missing or of the wrong type, a
# constraint it breaks): that file is set aside. Anything else (a full disk, a damaged database)
# fails the catch-up, every row kept for the next try.
_ROW_FAULTS = (
    KeyError,
    TypeError,
    ValueError,
    AttributeError,
    OverflowError,
    sqlite3.IntegrityError,
    sqlite3.InterfaceError,
    sqlite3.ProgrammingError,
    sqlite3.DataError,
)


class CaughtUp(NamedTuple):
    """What a ``catch_up`` did: the rows it wrote, the files it moved to ``rejected/`` (there),
    and the rows it dropped as recorded before the last ledger prune's cut (``cut``, Unix time)."""

    written: int
    rejected: list[Path]
    pruned: int = 0
    cut: float | None = None


def keep_aside(db_path: Path, kind: str, row: dict[str, Any], *, partial: bool = False, cut: bool = False) -> Path:
    """Write one row of ``kind`` (``TURN``, ``RECALL``) to the database's kept-aside folder; its file."""
    folder = kept_aside_dir(db_path)
    if not folder.is_dir():
        config.private_folder(folder)
    name = f"{time.time_ns():020d}-{os.getpid()}"
    # The id a catch-up records with the row: random, so unique beyond this folder and machine.
    row_id = f"{name}-{os.urandom(8).hex()}"
    entry = {
        "id": row_id,
        "kind": kind,
        "partial": partial,
        "cut": cut,
        "at": utc_now(),
        "row": redact_value(storable(row)),
    }
    data = json.dumps(entry, ensure_ascii=False).encode("utf-8", "replace")
    tmp = folder / f".{name}.tmp"  # hidden until whole: a reader never sees half a row
    fd = os.open(tmp, os.O_WRONLY | os.O_CREAT | os.O_EXCL, 0o600)
    try:
        try:
            _write_all(fd, data)
        finally:
            os.close(fd)
    except BaseException:
        # a file cut short (a full disk) would be renamed a row, then set aside as none
        with contextlib.suppress(OSError):
            os.unlink(tmp)
        raise
    target = folder / f"{name}.json"
    os.replace(tmp, target)
    return target


def _write_all(fd: int, data: bytes) -> None:
    """Write all of ``data``: ``os.write`` may write less (a disk filling up, a signal)."""
    view = memoryview(data)
    while view:
        written = os.write(fd, view)
        if written <= 0:  # nothing taken and no error: no room, as the next try would say
            raise OSError(errno.ENOSPC, os.strerror(errno.ENOSPC))
        view = view[written:]


def catch_up(db_path: Path | None = None, *, locked: bool = False) -> CaughtUp:
    """Apply the pending upgrade and write the rows kept aside for it: how many were written,
    and the files that hold no row it can write, moved to ``rejected/``.

    One process at a time (a lock file in the folder; ``locked``: the caller holds it). Each row is written with its id in
    ``kept_aside_recorded``, in one transaction; then the files go, then the ids. A run killed
    between the commit and the removal finds the ids next time and skips those rows (it wrote
    them twice: a turn counted that Stop twice, a prompt was listed twice).
    """
    db_path = db_path or config.db_path()
    folder = kept_aside_dir(db_path)
    _remove_orphans(folder)
    if not waiting(db_path):
        return CaughtUp(0, [])
    if locked:
        return _record_kept(db_path, folder)
    with open(folder / ".lock", "a+b") as lock:
        fcntl.flock(lock, fcntl.LOCK_EX)
        return _record_kept(db_path, folder)


def _record_kept(db_path: Path, folder: Path) -> CaughtUp:
    """``catch_up``'s work, its lock held."""
    from ..autorecall.store import write_recall

    files = sorted(p for p in folder.iterdir() if is_kept_row(p.name))
    if not files:
        return CaughtUp(0, [])
    written = pruned = 0
    ids = []
    done: list[Path] = []
    refused: list[Path] = []
    with connection(db_path) as conn:
        with write_transaction(conn):  # the whole upgrade, with no budget
            # Read under the write lock: a prune that records its cut after this commit reads
            # what to drop after it too, so it drops what this records.
            cut = last_cut(conn)
            for path in files:
                # Read inside the transaction: a run that finds the file gone finds its id
                # gone with it, and one that finds the file finds the id recorded.
                entry = _entry(path)
                if entry is None:
                    refused.append(path)
                    continue
                if cut is not None and _pruned(conn, entry, cut):
                    done.append(path)  # the prune dropped its like; dropped again if this run is killed
                    pruned += 1
                    continue
                row_id = entry.get("id") if isinstance(entry.get("id"), str) else path.stem  # an older brain's
                if conn.execute("SELECT 1 FROM kept_aside_recorded WHERE id = ?", (row_id,)).fetchone():
                    ids.append(row_id)
                    done.append(path)
                    continue  # recorded by a run killed before it removed the file
                conn.execute("SAVEPOINT kept_row")  # a row refused takes nothing of itself along
                try:
                    if entry["kind"] == TURN:
                        write_turn(
                            conn,
                            entry["row"],
                            now=entry["at"],
                            partial=bool(entry.get("partial")),
                            cut=bool(entry.get("cut")),
                        )
                    else:
                        write_recall(conn, entry["row"])
                    conn.execute("INSERT INTO kept_aside_recorded (id, recorded_at) VALUES (?, ?)", (row_id, utc_now()))
                except _ROW_FAULTS:
                    conn.execute("ROLLBACK TO kept_row")
                    conn.execute("RELEASE kept_row")
                    refused.append(path)
                    continue
                conn.execute("RELEASE kept_row")
                ids.append(row_id)
                done.append(path)
                written += 1
        for path in done:
            path.unlink(missing_ok=True)
        moved = [_set_aside(path, folder / REJECTED) for path in refused]
        with write_transaction(conn):  # their files gone, no run can read these rows again
            conn.executemany("DELETE FROM kept_aside_recorded WHERE id = ?", [(i,) for i in ids])
    return CaughtUp(written, moved, pruned, None if cut is None else (cut - _UNIX_EPOCH_JD) * 86400)


def _pruned(conn: sqlite3.Connection, entry: dict[str, Any], cut: float) -> bool:
    """Whether the row kept in ``entry`` would be recorded before the last ledger prune's ``cut``
    (a Julian day), by the prune's rule: a turn takes the time it was kept, a prompt its own.
    A hook that took its row's time before a `brain prune --ledger --before WHEN` and wrote its
    file after the prune's catch-up: recorded, that row was back in the ledger the prune had cut."""
    when = entry["at"] if entry["kind"] == TURN else entry["row"].get("created_at")
    if not isinstance(when, str):  # a prompt with no time takes the catch-up's, after any cut
        return False
    return bool(conn.execute(f"SELECT {recorded_before(':when')}", {"when": when, "cutoff": cut}).fetchone()[0])


def _remove_orphans(folder: Path) -> None:
    """The hidden files of hooks killed while they kept a row aside (``.<time>-<pid>.tmp``, whose
    process is gone): no reader looks at them, so nothing else would ever remove them."""
    from ..index.tempfiles import alive

    try:
        orphans = list(folder.glob(".*.tmp"))
    except OSError:  # a folder that cannot be read (a home not to be searched): opening the database says so
        return
    for tmp in orphans:
        pid = tmp.name[1 : -len(".tmp")].rpartition("-")[2]
        if pid.isascii() and pid.isdigit() and not alive(int(pid)):  # '²' is a digit int() cannot read
            with contextlib.suppress(OSError):
                tmp.unlink()


def _set_aside(path: Path, into: Path) -> Path:
    """Move ``path`` into the owner-only folder ``into`` under a name no file there has; where."""
    if not into.is_dir():
        config.private_folder(into)
    target = into / path.name
    n = 0
    while target.exists() or target.is_symlink():  # never over another file set aside: both are the user's
        n += 1
        target = into / f"{path.name}.{n}"
    os.rename(path, target)
    return target


def who_records(db_path: Path, why: Exception) -> str:
    """What records a row a hook just kept aside for ``why``, for its log line: a catch-up
    started now, else a later command (the newer brain's, for a database it upgraded: a
    catch-up by this code would be refused too)."""
    if isinstance(why, NewerLedger):
        return NEWER_RECORDS
    if start_catch_up(db_path):
        return "a process of its own upgrades it and records it"
    return "`brain turns` or `brain recalls` records it"


def start_catch_up(db_path: Path) -> bool:
    """Start ``catch_up`` for ``db_path`` in a process of its own, with no budget, unless one runs
    or one failed within ``RETRY_SECONDS``; whether one was started. Never raises: a hook calls it.

    The process is handed the folder's lock, taken here: it holds it from the start (no second
    one starts while it starts up) until it ends, however it ends. A marker of its start held off
    the next for a minute, and one killed (``kill -9``, the OOM killer) left it behind: its rows
    waited for a hook after that minute, or a command."""
    try:
        folder = kept_aside_dir(db_path)
        with open(folder / ".lock", "a+b") as lock:
            try:  # held: a catch-up is running, and records what is kept aside when it began
                fcntl.flock(lock, fcntl.LOCK_EX | fcntl.LOCK_NB)
            except BlockingIOError:
                return False
            if recently_failed(folder):
                return False
            from ..child_process import python_module_command

            # Not `python -m`: it put the hook's working directory (the project Claude Code runs
            # in) first on the path, and a `sqlite3.py` or a `brain/` there ran in brain's place.
            subprocess.Popen(
                [*python_module_command("brain.ledger.catch_up"), str(db_path), str(lock.fileno())],
                stdin=subprocess.DEVNULL,
                stdout=subprocess.DEVNULL,
                stderr=subprocess.DEVNULL,
                start_new_session=True,  # not the hook's: Claude Code waits for neither it nor its end
                close_fds=True,
                pass_fds=(lock.fileno(),),  # the same open file, so the same lock: the child's now
            )
        return True
    except Exception:  # noqa: BLE001 - the row is kept; `brain turns` records it
        return False


def recently_failed(folder: Path) -> bool:
    """Whether a catch-up failed less than ``RETRY_SECONDS`` ago (``FAILED``'s time). A time
    ahead of the clock (the clock set back since) is no reason to wait: it would for hours."""
    try:
        age = time.time() - (folder / FAILED).stat().st_mtime
    except FileNotFoundError:
        return False
    return 0 <= age < RETRY_SECONDS


def _entry(path: Path) -> dict[str, Any] | None:
    """The row kept in ``path``; None when it holds none (not a regular file, over
    ``MAX_ROW_BYTES``, not UTF-8 JSON, a field missing or of the wrong type)."""
    try:
        data = _read_at_most(path, MAX_ROW_BYTES)
        entry = json.loads(data.decode("utf-8")) if data is not None else None
    except (OSError, ValueError):  # not one of ours, empty, or not UTF-8 (UnicodeDecodeError)
        return None
    if (
        not isinstance(entry, dict)
        or entry.get("kind") not in (TURN, RECALL)
        or not isinstance(entry.get("row"), dict)
        or not isinstance(entry.get("at"), str)
    ):
        return None
    return entry


def _read_at_most(path: Path, limit: int) -> bytes | None:
    """The bytes of the regular file ``path``, or None when it holds more than ``limit``."""
    # O_NOFOLLOW: brain keeps no symlink here (one to /dev/zero was read for ever); O_NONBLOCK:
    # a FIFO put here is not waited on for a writer.
    fd = os.open(path, os.O_RDONLY | os.O_NONBLOCK | os.O_NOFOLLOW)
    with os.fdopen(fd, "rb") as handle:
        st = os.fstat(fd)
        if not stat.S_ISREG(st.st_mode) or st.st_size > limit:
            return None
        # Its size and a byte more (to tell one grown since), never the limit: a read of n
        # bytes sets aside n first, 32 MB for each row of a few KB.
        data = handle.read(st.st_size + 1)
        if len(data) > st.st_size:
            data += handle.read(limit + 1 - len(data))
    return data if len(data) <= limit else None


def caught_up_lines(db_path: Path | None = None) -> list[str]:
    """``catch_up``, and the lines a command prints when it recorded rows or set files aside."""
    db_path = db_path or config.db_path()
    try:
        caught = catch_up(db_path)
    except NewerLedger as exc:  # the command reads on; the rows wait for the newer brain
        return [f"{exc}; the rows the hooks kept aside wait for it"]
    written, moved, pruned, cut = caught
    said = []
    if pruned:
        said.append(pruned_line(pruned, cut))
    if written:
        said.append(
            f"upgraded {db_path} and recorded {written} row{'s' if written != 1 else ''} the hooks had kept aside "
            "(its upgrade did not fit their budget)"
        )
    if moved:
        said.append(rejected_line(len(moved), moved[0].parent))
    return said


def pruned_line(count: int, cut: float | None) -> str:
    """One line: ``count`` rows kept aside were dropped, recorded before the last ledger prune's ``cut``."""
    from ..moments import local_time

    return (
        f"dropped {count} row{'s' if count != 1 else ''} the hooks kept aside from before the last "
        f"`brain prune --ledger` cut ({local_time(cut)} local): recorded, {'they' if count != 1 else 'it'} came back after it"
    )
