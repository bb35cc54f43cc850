"""What the turn ledger holds and whether it is recording, read without writing a byte: the
``ledger_*`` figures ``brain status --json`` prints and ``brain mcp``'s ``status`` gives (one
function, ``ledger_state``, for both), and the warning ``recent_turns`` adds while turns wait
kept aside.

Opened read-only, never created, never upgraded: an older brain.db is read as it is (its
``turns`` table has had ``started_at`` and ``created_at`` since m001), a newer one too (what
its newer brain added left out), and the rows kept aside are counted, not recorded (``brain
turns`` records them). Standard library, ``config``, ``kept_aside`` and the migrations' names
only: ``brain status`` reads it without the ledger's writers or ``brain.db`` (the module).
"""

from __future__ import annotations

import os
import re
import sqlite3
import stat
from pathlib import Path
from typing import Any

from .. import config
from ..errors import BrainError, newer_than_this, read_only_failure
from ..kept_aside import is_kept_row, kept_aside_dir, rejected, waiting

# The keys ``ledger_state`` gives, in its order (``brain status --json`` and MCP ``status``).
KEYS = ("ledger_turns", "ledger_last_turn", "ledger_kept_aside", "ledger_rejected", "ledger_newer", "ledger_error")
# How far into a kept-aside file its kind is: ``keep_aside`` writes the id, then the kind, before the row.
_HEAD_BYTES = 512
_KIND = re.compile(rb'"kind":\s*"(\w+)"')


def ledger_state(db_path: Path | None = None) -> dict[str, Any]:
    """The ledger's figures: ``ledger_turns`` (turns recorded; None when brain.db cannot be read),
    ``ledger_last_turn`` (when the newest began, as ``brain turns`` lists it first: its start, else
    when it was recorded; None without one), ``ledger_kept_aside`` (rows the hooks kept aside, not
    in the ledger yet), ``ledger_rejected`` (files kept aside that held no row brain can record),
    ``ledger_newer`` (what is said of a brain.db a newer brain upgraded, else None) and
    ``ledger_error`` (why brain.db cannot be read, one line, else None). Never raises a
    ``BrainError``: `brain status` says the rest whatever the ledger's state."""
    state: dict[str, Any] = dict.fromkeys(KEYS)
    try:
        path = db_path or config.db_path()
    except BrainError as exc:  # BRAIN_DB relative, say
        state.update(ledger_kept_aside=0, ledger_rejected=0, ledger_error=str(exc))
        return state
    state["ledger_kept_aside"] = waiting(path)
    state["ledger_rejected"] = len(rejected(path))
    try:
        turns, last, newer = _read(path)
    except BrainError as exc:
        state["ledger_error"] = str(exc)
        return state
    state.update(ledger_turns=turns, ledger_last_turn=last, ledger_newer=newer)
    return state


def _read(path: Path) -> tuple[int, str | None, str | None]:
    """The turns in ``path``, when the newest began, and what is said when a newer brain upgraded it."""
    try:
        st = path.stat()
    except FileNotFoundError:
        return 0, None, None  # nothing recorded yet; not created here
    except OSError as exc:
        raise _error(path, exc) from exc
    if stat.S_ISREG(st.st_mode) and st.st_size == 0:
        return 0, None, None
    if not stat.S_ISREG(st.st_mode):
        raise _error(path, sqlite3.OperationalError("not a regular file"))
    # mode=ro reads a read-only file; a WAL database in a folder that cannot be written needs its
    # -shm file, which cannot be made there: then immutable=1 (nobody can be writing it).
    uri = path.resolve().as_uri()
    for flags in ("mode=ro", "immutable=1"):
        try:
            conn = sqlite3.connect(f"{uri}?{flags}", uri=True, isolation_level=None, timeout=5.0)
        except sqlite3.Error as exc:
            raise _error(path, exc) from exc
        try:
            return _figures(conn, path)
        except sqlite3.Error as exc:
            if flags == "immutable=1" or not read_only_failure(exc):
                raise _error(path, exc) from exc
        finally:
            conn.close()
    raise AssertionError("unreachable")


def _figures(conn: sqlite3.Connection, path: Path) -> tuple[int, str | None, str | None]:
    from ..db_migrations import MIGRATIONS
    from ..migrations import has_table

    newer = MIGRATIONS.unknown(conn)
    said = (
        f"{newer_than_this(path, newer)}: this brain reads it as it knows it, and its hooks keep their rows "
        "aside for the newer brain; upgrade brain to the version that made it"
        if newer
        else None
    )
    if not has_table(conn, "turns"):
        return 0, None, said
    conn.execute("BEGIN")  # one snapshot: the count and the newest of the same rows
    try:
        (turns,) = conn.execute("SELECT COUNT(*) FROM turns").fetchone()
        # newest first as recent_turns orders them, COALESCE(started_at, created_at), asked as two
        # parts the index on started_at answers: over the expression, every call read every row
        (started,) = conn.execute("SELECT MAX(started_at) FROM turns").fetchone()
        (unstarted,) = conn.execute("SELECT MAX(created_at) FROM turns WHERE started_at IS NULL").fetchone()
    finally:
        conn.execute("COMMIT")
    times = [str(t) for t in (started, unstarted) if t is not None]
    return int(turns), max(times) if times else None, said


def _error(path: Path, exc: BaseException) -> BrainError:
    """``db.database_error``'s one line (imported here only, when brain.db cannot be read)."""
    if isinstance(exc, NotADirectoryError):
        above = next((p for p in path.parents if os.path.lexists(p)), path.parent)
        return BrainError(
            f"cannot read {path}: {above} is a file, not a folder; BRAIN_HOME (and BRAIN_DB) must lead to a folder"
        )
    from ..db import database_error

    return database_error(path, exc)


def kept_aside_turns(db_path: Path | None = None) -> tuple[int, str | None]:
    """How many turns the hooks kept aside for ``db_path`` (rows of prompts not counted), and when
    the first of them was kept (local time to the minute, ``local`` after it; None without any).
    Read, never recorded: a row's kind is read from the head of its file, its time from its name
    (``keep_aside``'s ``<time_ns>-<pid>.json``)."""
    try:
        folder = kept_aside_dir(db_path or config.db_path())
        names = sorted(p.name for p in folder.iterdir() if is_kept_row(p.name))
    except (OSError, BrainError):
        return 0, None
    count, first = 0, None
    for name in names:
        try:
            fd = os.open(folder / name, os.O_RDONLY | os.O_NONBLOCK | os.O_NOFOLLOW)
            try:
                head = os.read(fd, _HEAD_BYTES) if stat.S_ISREG(os.fstat(fd).st_mode) else b""
            finally:
                os.close(fd)
        except OSError:  # recorded and removed meanwhile, or not a file brain wrote
            continue
        kind = _KIND.search(head)
        if kind is None or kind.group(1) != b"turn":
            continue
        count += 1
        if first is None:
            first = _kept_at(name)
    return count, first


def _kept_at(name: str) -> str | None:
    """When a kept-aside row was kept, from its file's name (``<time_ns>-<pid>.json``), in local
    time as `brain turns` lists turns (it was UTC: two clocks for one moment); None for a name
    whose time no clock reads. ASCII digits only: ``²`` is a digit to ``isdigit`` and not to
    ``int``, which failed the MCP answer on such a name."""
    stamp = name.split("-", 1)[0]
    if not (stamp.isascii() and stamp.isdigit()):
        return None
    from ..moments import local_time

    try:
        return local_time(int(stamp) / 1e9) + " local"
    except (ValueError, OverflowError, OSError):  # past the calendar's ends
        return None


def kept_aside_warning(db_path: Path | None = None, *, newer: bool = False) -> str | None:
    """What ``recent_turns`` says while turns wait kept aside (not in the ledger, so not in its
    answer), or None: who records them, ``brain turns`` or, for a ledger a newer brain upgraded
    (``newer``), that brain."""
    count, first = kept_aside_turns(db_path)
    if not count:
        return None
    since = f" (the first at {first})" if first else ""
    them = "them" if count != 1 else "it"
    who = (
        f"the newer brain that upgraded the ledger records {them}"
        if newer
        else f"an upgrade of the ledger did not fit the hook's budget; `brain turns` applies it and records {them}"
    )
    return (
        f"{count} turn{'s' if count != 1 else ''} the Stop hook recorded{since} "
        f"{'are' if count != 1 else 'is'} kept aside, not in the ledger yet, so not listed here: {who}"
    )
