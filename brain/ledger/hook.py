"""The Claude Code Stop hook: record the turn that just ended, and never hurt the agent.

Claude Code runs ``brain hook stop`` after every assistant turn with a JSON object on
stdin (``session_id``, ``transcript_path``, ``cwd``, ``hook_event_name``,
``stop_hook_active``, newer versions also ``prompt_id`` and ``last_assistant_message``).
The hook always exits 0, prints nothing, logs its own errors to ``<brain home>/logs/
hook.log`` and gives up quietly after a time budget (``BRAIN_HOOK_BUDGET``, 2 s), counted
from before it reads the same ``.env`` files as the CLI (``config.load_dotenv_files``) and
its input (at most ``MAX_STDIN`` bytes). When reading the turn takes most of the budget (a
long turn, a loaded machine), it stops with ``FALLBACK_RESERVE`` left and records a partial
row instead: what its input says, which a later full row of the same turn replaces.
Standard library only, and no click: this runs on every turn of every session.
"""

from __future__ import annotations

import json
import os
import stat
import sys
import threading
import time
import zlib
from collections.abc import Callable
from pathlib import Path
from typing import Any

from .. import config, settings
from ..db import UpgradeDeferred, connection
from ..errors import BrainError, ConfigError
from ..text import log_record
from .redact import redact
from .store import last_cut, recorded_before, turn_row, utc_now, write_turn
from .transcript import MAX_READ, SUMMARY_CHARS, OutOfTime, Turn, clip, read_last_turn

LOG_MAX_BYTES = 1_000_000
MAX_STDIN = 16 * 1024 * 1024  # the hook input of either hook; more is not a hook payload
# An id or a path of the hook input longer than this is not one (ids are UUIDs, Linux paths at
# most 4,096 bytes; a longer path is still recorded, unread): masking a 10 MB session id took
# 1.3 s, past the prompt hook's budget, where 64 KiB takes milliseconds.
MAX_FIELD_CHARS = 65_536
FIELDS = ("session_id", "prompt_id", "cwd", "transcript_path", "agent_transcript_path")
# Seconds of the budget (at most a quarter of it) kept to record a partial row when reading
# the turn runs late: opening the database and one small write, on a loaded machine.
FALLBACK_RESERVE = 0.5
# Seconds of the budget (at most a tenth of it) kept to write the row aside when an upgrade of
# the database does not fit before them (``deferred``): a file of a few KB and a line of log.
KEEP_ASIDE_RESERVE = 0.1
# Seconds the watchdog gives its last line of log before it ends the hook regardless.
LAST_LINE_SECONDS = 0.2
# How far back a Stop goes for the turns of its session no Stop recorded (a full disk, a hook
# killed at its timeout, brain not installed for an hour): at most this many turns, and no
# further back than this many bytes before its own turn. The common Stop reads only the few
# lines between the last row's end and its prompt; these bound the rare one after a gap, which
# reads each lost turn as a Stop reads its own (a turn of tool output is MBs at worst).
BACKFILL_TURNS = 10
BACKFILL_BYTES = 4 * 1024 * 1024


def run_stop_hook() -> int:
    """The whole ``brain hook stop`` process: stdin JSON in, one row out, exit code 0."""
    started = time.monotonic()
    # The settings `brain turns` reads, BRAIN_DB above all, under the watchdog already.
    budget, watchdog = load_settings_under_watchdog(_budget, "BRAIN_HOOK_BUDGET", started=started)
    try:
        if sys.stdin is None or sys.stdin.isatty():
            return 0  # run by hand in a terminal: there is no hook input to wait for
        raw = read_input(sys.stdin.buffer)
        if len(raw) > MAX_STDIN:
            log(f"ignored stdin over {MAX_STDIN} bytes: not a Stop hook payload")
            return 0
        try:
            payload = hook_json(raw) if raw.strip() else None
        except (ValueError, RecursionError):  # nested too deeply is not a payload either
            payload = None
        if not isinstance(payload, dict) or not (
            _text(payload.get("session_id")) or _text(payload.get("transcript_path"))
        ):
            log(f"ignored stdin that is not a Stop hook payload ({len(raw)} bytes)")
            return 0
        refusal = oversized_field(payload)
        if refusal:
            log(f"ignored a Stop hook payload whose {refusal}")
            return 0
        record_stop(
            payload,
            deadline=started + budget - min(FALLBACK_RESERVE, budget / 4),
            migrate_until=started + budget - min(KEEP_ASIDE_RESERVE, budget / 10),
        )
    except BaseException as exc:  # noqa: BLE001 - nothing may reach the agent
        _log_exception(exc)
    finally:
        watchdog.cancel()
    return 0


def record_stop(
    payload: dict[str, Any],
    *,
    db_path: Path | None = None,
    deadline: float | None = None,
    migrate_until: float | None = None,
) -> dict[str, Any]:
    """Read the last turn named by a Stop hook ``payload`` and upsert its row; returns it.

    Still reading at ``deadline`` (a ``time.monotonic()``), it records a partial row instead
    (``partial_row``); a transcript that gave no line (missing, a folder, empty) gives one too,
    and one whose prompt is past the read cap a full row flagged partial. An upgrade of the
    database still running at ``migrate_until`` is rolled back and the row kept aside (``deferred``).
    """
    path = payload.get("transcript_path")
    if payload.get("hook_event_name") == "SubagentStop" and payload.get("agent_transcript_path"):
        path = payload["agent_transcript_path"]
    path = path if isinstance(path, str) and path else None
    last_message = payload.get("last_assistant_message")
    progress = Turn()  # what the reader knows so far, should it run out of time
    try:
        turn = read_last_turn(
            path,
            last_assistant_message=last_message if isinstance(last_message, str) else None,
            progress=progress,
            deadline=deadline,
        )
    except OutOfTime:
        row = partial_row(payload, path, progress)
        try:
            with connection(db_path, migrate_until=migrate_until) as conn:
                if not row["ask"] and payload.get("hook_event_name") != "SubagentStop":
                    # What was asked, as the prompt hook recorded it when the turn began.
                    from ..autorecall.store import recalled_prompt

                    row["ask"] = recalled_prompt(conn, row["session_id"], row["prompt_id"])
                write_turn(conn, row, partial=True)
            done = "recorded a partial row"
        except UpgradeDeferred as exc:
            # the line says where the row went: in brain.db, waiting aside, or nowhere
            kept = _keep_aside(db_path, row, exc, partial=True)
            done = "a partial row kept aside" if kept else "a partial row not recorded (lost)"
        log(f"out of time reading {path}: {done}, {row['turn_key']}")
        return row
    session = _text(payload.get("session_id")) or turn.session_id or "unknown"
    cwd = _text(payload.get("cwd")) or turn.cwd
    root = git_root(cwd)
    project = root.name if root else (Path(cwd).name if cwd else None)
    prompt_id = _text(payload.get("prompt_id")) or turn.prompt_id
    # Not one line of the transcript read (missing, a folder, empty, unreadable): the row holds
    # what the hook input says, a partial row, as out of time.
    unread = turn.byte_end is None
    if unread:
        said = "recorded a partial row of what the hook input says"
        if path:
            log(f"cannot read the transcript {path} ({turn.unreadable or _why_unread(path)}): {said}")
        else:
            log(f"no transcript path in the hook input: {said}")
    elif turn.cut:
        log(f"no prompt in the last {MAX_READ:,} bytes of {path}: recorded the turn's end as a partial row")
    row = turn_row(turn, turn_key=turn_key(session, prompt_id, turn), project=project or None)
    row.update(
        session_id=session,
        prompt_id=prompt_id,
        cwd=cwd,
        git_branch=turn.git_branch or (git_branch(root) if root else None),
    )
    if turn.lagging:
        row["ended_at"] = utc_now()  # the final text is newer than anything in the file
    try:
        with connection(db_path, migrate_until=migrate_until) as conn:
            if (unread or turn.cut) and not row["ask"] and payload.get("hook_event_name") != "SubagentStop":
                from ..autorecall.store import recalled_prompt

                row["ask"] = recalled_prompt(conn, row["session_id"], row["prompt_id"])
            write_turn(conn, row, partial=unread, cut=turn.cut)
            if not (unread or turn.cut) and path and payload.get("hook_event_name") != "SubagentStop":
                backfill(conn, row, path, deadline=deadline)
    except UpgradeDeferred as exc:
        _keep_aside(db_path, row, exc, partial=unread, cut=turn.cut)
    return row


# Where the session's rows of this transcript end, the row just written aside.
_RECORDED_END = (
    "SELECT max(byte_end) FROM turns WHERE session_id = :session_id AND transcript_path = :transcript_path "
    "AND turn_key != :turn_key"
)


def backfill(conn: Any, row: dict[str, Any], path: str, *, deadline: float | None = None) -> int:
    """Record the turns of ``row``'s session that lie between the last row of its transcript and
    ``row``'s prompt: turns whose own Stop recorded nothing. Each by its key, as its Stop would
    have made it, so none is recorded twice; the newest ``BACKFILL_TURNS`` within
    ``BACKFILL_BYTES``. A session with no earlier row is backfilled only when all of it is within
    that reach and the ledger's first row was recorded before its first turn began (the hook was
    in place: its first Stop failed); not when the hook meets it mid-way (installed into a
    session: its past is not recorded unasked). Past ``deadline`` it records the ones it found.
    Returns how many it recorded; never raises (the Stop's own row is written already)."""
    start = row.get("byte_start")
    if not isinstance(start, int) or start <= 0:
        return 0
    try:
        (floor,) = conn.execute(_RECORDED_END, row).fetchone()
        if isinstance(floor, int) and floor >= start:
            return 0  # the common Stop: the turn before it is recorded
        first_stop = not isinstance(floor, int)
        if first_stop and start > BACKFILL_BYTES:
            return 0
        reach = max(0 if first_stop else floor, start - BACKFILL_BYTES)
        found: list[Turn] = []
        pos = start
        late = False
        while pos > reach and len(found) <= BACKFILL_TURNS:
            try:
                # From the byte before the floor, a line's end: the reader keeps a window's first
                # line back as torn, and the prompt just after the last row is one.
                turn = read_last_turn(path, max_read=pos - reach + (reach > 0), deadline=deadline, end=pos)
            except OutOfTime:  # the ones found are recorded: the next Stop starts after this one
                late = True
                break
            if turn.ask is None or turn.byte_start is None or turn.byte_start >= pos:
                break  # no prompt between the last row and this one
            if turn.session_id and turn.session_id != row["session_id"]:
                break  # another session's lines (a resumed one's history): its own Stops' to record
            pos = turn.byte_start
            if turn.summary or turn.tools:  # a prompt the assistant never answered is no turn
                found.append(turn)
        left = len(found) - BACKFILL_TURNS
        if first_stop and (
            late or left > 0 or not _recorded_before(conn, found[-1].started_at if found else None, row["turn_key"])
        ):
            return 0  # more than a first Stop's reach, or older than the ledger: met mid-way
        # Turns left before those: more than it goes back, bytes it did not read, out of time.
        beyond = left > 0 or late or (not first_stop and reach > floor)
        lost = (
            "; any before them, out of the hook's time, are not"
            if late
            else f"; any before them, past the {BACKFILL_TURNS} turns or {BACKFILL_BYTES >> 20} MB a Stop reads back, are not"
        )
        recorded = 0
        cut = last_cut(conn)
        for turn in reversed(found[:BACKFILL_TURNS]):
            if cut is not None and _ended_before(conn, turn, cut):
                continue  # the ledger was cut there: the turns of that time were dropped, not lost
            earlier = turn_row(turn, turn_key=turn_key(row["session_id"], turn.prompt_id, turn), project=row["project"])
            earlier.update(session_id=row["session_id"], cwd=turn.cwd or row["cwd"], prompt_id=turn.prompt_id)
            known = conn.execute("SELECT 1 FROM turns WHERE turn_key = ?", (earlier["turn_key"],)).fetchone()
            if known is None:
                write_turn(conn, earlier)
                recorded += 1
        if recorded or beyond:
            log(
                f"recorded {recorded} turn{'s' if recorded != 1 else ''} of session {row['session_id']} "
                f"no Stop had recorded{lost if beyond else ''}"
            )
        return recorded
    except Exception as exc:  # noqa: BLE001 - the Stop's own row is written: only these are not
        log(f"could not record the turns before {row['turn_key']} no Stop had recorded ({exc!r})")
    return 0


def _ended_before(conn: Any, turn: Turn, cut: float) -> bool:
    """Whether ``turn`` ended before the ledger's last cut (``last_cut``): its row, had its Stop
    written it, was written before the cut and dropped with it. A row of the same session written
    after the cut (a turn kept aside, caught up later) left the look back's floor below it, and it
    came back (chaos seed 79)."""
    when = turn.ended_at or turn.started_at
    if not isinstance(when, str):
        return False
    return bool(conn.execute(f"SELECT {recorded_before(':when')}", {"when": when, "cutoff": cut}).fetchone()[0])


def _recorded_before(conn: Any, started: str | None, key: str) -> bool:
    """Whether the ledger's first row (not the Stop's own, ``key``) was recorded before
    ``started`` (a session's first turn began): the hook was in place when the session began, so
    the session's turns are its to record. Its first row by id (``created_at`` has no index)."""
    if not started:
        return False
    first = conn.execute("SELECT created_at FROM turns WHERE turn_key != ? ORDER BY id LIMIT 1", (key,)).fetchone()
    return first is not None and isinstance(first[0], str) and first[0] < started


def _why_unread(path: str) -> str:
    """Why a transcript gave no line: the words for the hook's log."""
    try:
        if not os.path.lexists(path):
            return "no such file"
        if not Path(path).is_file():
            return "not a regular file"
        return "empty" if os.stat(path).st_size == 0 else "no line of it parses"
    except (OSError, ValueError) as exc:
        return str(exc)


def _keep_aside(
    db_path: Path | None, row: dict[str, Any], why: UpgradeDeferred, *, partial: bool = False, cut: bool = False
) -> bool:
    """Write the turn beside the database, for ``brain turns`` or ``brain status`` to record once
    they have applied the upgrade a hook's budget cannot hold; whether it was (else it is lost)."""
    from .deferred import TURN, keep_aside, who_records

    path = db_path or config.db_path()
    try:
        kept = keep_aside(path, TURN, row, partial=partial, cut=cut)
    except OSError as exc:  # a full disk: the turn is lost, said in one line (the agent goes on)
        log(f"{why}: turn {row['turn_key']} not recorded: it could not be kept aside either ({exc})")
        return False
    log(f"{why}: turn {row['turn_key']} kept aside in {kept.parent}; {who_records(path, why)}")
    return True


def read_input(stream: Any) -> bytes:
    """The hook input from ``stream``: its first ``MAX_STDIN`` + 1 bytes (more is no payload), the
    rest read through to its end and dropped. A hook that exits with its input unread gives the
    agent still writing it a broken pipe (a 20 MB prompt did), where the hook must never fail it."""
    raw = stream.read(MAX_STDIN + 1)
    if len(raw) > MAX_STDIN:
        while stream.read(1 << 20):
            pass
    return raw


def hook_json(raw: bytes) -> Any:
    """A hook's input as JSON (``ValueError`` or ``RecursionError`` when it is none), read as
    both hooks read it: a UTF-8 BOM before it is not part of it (json refused it, and the
    prompt was ignored), and a whole number too long for Python's int (over 4,300 digits, a
    ValueError) is kept as its text: in a field the hooks never read it failed the payload."""
    text = raw.decode("utf-8-sig", "replace")
    try:
        return json.loads(text)
    except json.JSONDecodeError:
        raise  # not JSON
    except ValueError:  # JSON, with a number past the int limit: again, reading each number here
        # Only then: a parse_int of Python's own made 16 MB of small numbers 3 times as slow.
        return json.loads(text, parse_int=_int_or_text)


def _int_or_text(digits: str) -> int | str:
    try:
        return int(digits)
    except ValueError:  # over sys.get_int_max_str_digits()
        return digits


def oversized_field(payload: dict[str, Any]) -> str | None:
    """What makes ``payload`` no hook input: an id or a path over ``MAX_FIELD_CHARS``; or None."""
    for name in FIELDS:
        value = payload.get(name)
        if isinstance(value, str) and len(value) > MAX_FIELD_CHARS:
            return f"{name} is {len(value):,} characters (at most {MAX_FIELD_CHARS:,})"
    return None


def partial_row(payload: dict[str, Any], path: str | None, progress: Turn) -> dict[str, Any]:
    """The row of a Stop that ran out of time reading its turn: what the hook input says
    (session, prompt id, cwd, the final text) and the prompt if the reader had found it.

    Its key is the full row's whenever a prompt id is known; else ``<session>:partial:<size>``,
    the size of the transcript at this Stop, by which the full row of the turn finds it.
    """
    session = _text(payload.get("session_id")) or "unknown"
    cwd = _text(payload.get("cwd"))
    root = git_root(cwd)
    prompt_id = _text(payload.get("prompt_id")) or progress.prompt_id
    last_message = payload.get("last_assistant_message")
    summary = clip(last_message.strip(), SUMMARY_CHARS) if isinstance(last_message, str) else ""
    size = _file_size(path)
    if prompt_id or progress.prompt_uuid or size is None:
        key = turn_key(session, prompt_id, Turn(prompt_uuid=progress.prompt_uuid, summary=summary))
    else:
        key = f"{session}:partial:{size}"
    return {
        "turn_key": key,
        "session_id": session,
        "prompt_id": prompt_id,
        "cwd": cwd,
        "project": (root.name if root else (Path(cwd).name if cwd else None)) or None,
        "git_branch": git_branch(root) if root else None,
        "ask": progress.ask,
        "summary": summary,
        "started_at": progress.started_at,
        "ended_at": utc_now(),
        "transcript_path": path,
        "byte_end": size,
    }


def _file_size(path: str | None) -> int | None:
    try:
        return os.stat(path).st_size if path and Path(path).is_file() else None
    except (OSError, ValueError):
        return None


def turn_key(session: str, prompt_id: str | None, turn: Turn) -> str:
    """The identity of a turn: a repeated Stop for the same turn maps to the same key."""
    if prompt_id:
        return f"{session}:{prompt_id}"
    if turn.prompt_uuid:
        return f"{session}:{turn.prompt_uuid}"
    # No prompt in sight (a turn longer than the read cap, a prompt not read as one): the turn's
    # last user line. Its final text alone merged two turns that ended alike ("Done.").
    if turn.anchor:
        return f"{session}:after:{turn.anchor}"
    # No line of the transcript read (missing, a folder): the text the turn ended with, all the
    # hook input says of it, so a Stop hook fired twice for the turn still counts on one row.
    if turn.summary:
        return f"{session}:text:{zlib.crc32(turn.summary.encode('utf-8', 'replace')):08x}"
    # Not even that: nothing tells this turn from another of the session (the text of none
    # was one key, and every such turn of a session merged into one row), so it is its own.
    return f"{session}:unknown:{os.urandom(16).hex()}"  # not uuid: its import (platform) costs every hook 2-3 ms


def _text(value: Any) -> str | None:
    return value if isinstance(value, str) and value else None


def git_root(cwd: str | None) -> Path | None:
    """The nearest folder at or above ``cwd`` holding ``.git`` (no git subprocess)."""
    if not cwd:
        return None
    path = Path(cwd)
    for candidate in (path, *path.parents):
        try:
            if (candidate / ".git").exists():
                return candidate
        except OSError:  # a name too long, a folder not ours to look in: no repository there
            continue
    return None


def git_branch(root: Path) -> str | None:
    """The checked-out branch read from ``.git/HEAD`` (worktrees included), else None."""
    try:
        git = root / ".git"
        if git.is_file():  # a worktree or submodule: "gitdir: <path>"
            target = _head_text(git).removeprefix("gitdir:").strip()
            git = (root / target) if not os.path.isabs(target) else Path(target)
        head = _head_text(git / "HEAD")
    except (OSError, ValueError):  # ValueError: not UTF-8, or too long to be what git writes
        return None
    if head.startswith("ref:"):
        return head.split("refs/heads/", 1)[-1] if "refs/heads/" in head else None
    return head[:12] or None  # detached: the short commit


def _head_text(path: Path) -> str:
    """The text of a file git keeps a line in (``.git``, ``HEAD``), read no further than a line
    git writes can be: a HEAD of GBs in a project was read whole by every Stop hook and became
    its row's branch (``deferred.MAX_ROW_BYTES`` counts on it being short). A regular file
    only: opened without O_NONBLOCK, a FIFO there held the hook until its watchdog, the turn lost;
    a device (a symlink to /dev/tty) is no line of git's either."""
    fd = os.open(path, os.O_RDONLY | os.O_NONBLOCK)
    with os.fdopen(fd, "rb") as handle:
        if not stat.S_ISREG(os.fstat(fd).st_mode):
            raise ValueError(f"{path} is not a regular file")
        data = handle.read(MAX_FIELD_CHARS + 1)
    if len(data) > MAX_FIELD_CHARS:
        raise ValueError(f"{path} is over {MAX_FIELD_CHARS} bytes")
    return data.decode("utf-8").strip()


def _budget() -> float:
    try:
        return config.hook_budget()
    except ConfigError as exc:  # the hook never fails on a setting: say so in its log, use the default
        log(f"{exc}; using {config.DEFAULT_HOOK_BUDGET:g} s")
        return config.DEFAULT_HOOK_BUDGET


def load_settings_under_watchdog(
    budget_of: Callable[[], float],
    variable: str,
    *,
    started: float,
    label: str = "",
    hold: threading.Lock | None = None,
) -> tuple[float, threading.Timer]:
    """Start a hook's watchdog, then load the ``.env`` files under it; returns the budget and
    the watchdog.

    The budget is the one the environment sets (``budget_of()``, reading ``variable``); when a
    ``.env`` file sets ``variable``, the watchdog moves to that budget, still counted from
    ``started``. So reading the files is inside the budget, whatever they hold.
    """
    budget = budget_of()
    watchdog = start_watchdog(budget, label=label, hold=hold)
    before = os.environ.get(variable)
    try:
        for skipped in config.load_dotenv_files():
            log(f"{label}{skipped}")
        _log_unknown_settings(label)
    except Exception as exc:  # noqa: BLE001 - e.g. BRAIN_HOME=~nosuchuser
        _log_exception(exc, label=label)
    if os.environ.get(variable) != before:
        watchdog.cancel()
        budget = budget_of()
        watchdog = start_watchdog(budget, label=label, hold=hold, elapsed=time.monotonic() - started)
    return budget, watchdog


UNKNOWN_SETTINGS_SEEN = "hook-unknown-settings"  # beside hook.log: the names last logged


def _log_unknown_settings(label: str) -> None:
    """Log each ``BRAIN_*`` variable that is no setting (a typo left a default in force), never
    printing: once, not on every turn, until the set of such names changes (or is empty a
    while: the same typo made again is logged again)."""
    lines = settings.unknown_variables()
    seen = config.log_dir() / UNKNOWN_SETTINGS_SEEN
    if not lines:
        try:  # a failed unlink when there is nothing to forget: microseconds
            seen.unlink()
        except OSError:
            pass
        return
    said = "\n".join(lines)
    wrote = said.encode("utf-8", "backslashreplace")
    try:
        # O_NONBLOCK, and only a regular file: a FIFO there held the hook until its watchdog.
        # O_NOFOLLOW: a symlink there is not brain's note (it is replaced below).
        fd = os.open(seen, os.O_RDONLY | os.O_NONBLOCK | os.O_NOFOLLOW)
        with os.fdopen(fd, "rb") as handle:
            st = os.fstat(fd)
            if stat.S_ISREG(st.st_mode) and handle.read(len(wrote) + 1) == wrote:
                return
    except OSError:
        pass
    for line in lines:
        log(f"{label}{line}")
    try:  # after the log: its folder is made (owner-only) there
        _note_unknown_settings(seen, wrote)
    except OSError as exc:
        log(
            f"{label}cannot note which settings were said in {seen} ({exc.strerror or exc}): "
            "move what is there away, or they are said again on every turn"
        )


def _note_unknown_settings(seen: Path, wrote: bytes) -> None:
    """Put ``wrote`` at ``seen`` as a regular file of its own: written beside it, then renamed
    over it. Whatever held the name is replaced, not written through: a FIFO (written to, it
    never kept the note, so every turn logged the names again), a symlink (written through, it
    truncated the file it led to, or made one where it led nowhere), an empty folder (removed:
    ``rmdir`` takes only an empty one). A folder with something in it stays, an OSError."""
    spare = seen.with_name(f".{seen.name}.{os.getpid()}")
    fd = os.open(spare, os.O_WRONLY | os.O_CREAT | os.O_TRUNC | os.O_NOFOLLOW | os.O_NONBLOCK, 0o600)
    try:
        with os.fdopen(fd, "wb") as handle:
            handle.write(wrote)
        try:
            os.replace(spare, seen)
        except IsADirectoryError:
            os.rmdir(seen)  # ENOTEMPTY when it holds anything: never removed then
            os.replace(spare, seen)
    except BaseException:
        try:
            os.unlink(spare)
        except OSError:
            pass
        raise


def start_watchdog(
    seconds: float, *, label: str = "", hold: threading.Lock | None = None, elapsed: float = 0.0
) -> threading.Timer:
    """End the process (exit code 0) ``seconds`` from now unless cancelled (less ``elapsed``, the
    part of the budget already spent); ``hold``, when given, is taken first, so whatever runs
    under it (printing the prompt hook's answer) ends whole."""

    # A hung filesystem or a locked database must not hold the agent: past the budget
    # the process ends at once, exit code 0. SQLite rolls back an unfinished write.
    def give_up() -> None:
        if hold is not None:
            hold.acquire()
        # The line is made first (masking it is CPU alone, but most of its cost, which a loaded
        # machine stretched past the moment below: the hook ended without saying why).
        try:
            line = log_line(f"{label}gave up after the {seconds:g} s budget")
        except Exception:  # noqa: BLE001 - nothing may keep the watchdog from ending the hook
            line = b""
        # Nor may writing it hold it (a log on a network disk that hung): a moment later the
        # process ends, the line written or not.
        last = threading.Timer(LAST_LINE_SECONDS, os._exit, (0,))
        last.daemon = True
        last.start()
        write_log_line(line)
        os._exit(0)

    timer = threading.Timer(max(seconds - elapsed, 0.0), give_up)
    timer.daemon = True
    timer.start()
    return timer


def log(message: str, traceback: str = "") -> None:
    """Append ``message`` to the hook's log file as one line, and ``traceback``, if given, on
    indented lines under it (``text.log_record``: a path in the hook input holding a line break
    or an escape sequence neither splits the line nor acts on a terminal following the log);
    secrets masked as a row's are; never raises."""
    try:
        line = log_line(message, traceback)
    except Exception:  # noqa: BLE001 - a broken log must not break the hook
        return
    write_log_line(line)


def log_line(message: str, traceback: str = "") -> bytes:
    """The line ``log`` appends for ``message`` (and ``traceback``): made in memory alone."""
    # A path, an error or a traceback may hold what the row masks (a key in a folder's name):
    # masked before it is escaped, which makes a "\n" before a token part of its word.
    record = log_record(redact(message), redact(traceback))
    return f"{utc_now()} pid={os.getpid()} {record}\n".encode("utf-8", "backslashreplace")


def write_log_line(line: bytes) -> None:
    """Append ``line`` (``log_line``'s) to the hook's log file; never raises."""
    try:
        path = config.log_file("hook.log", LOG_MAX_BYTES)
        # O_NONBLOCK: a FIFO there (made to follow the log) held every hook that logged until a
        # reader came, for good: the watchdog's own line too, so it never ended the hook. With no
        # reader the open fails; with one, a line that does not fit is dropped, not waited on.
        # 0600: prompts and paths, the user's alone (not the umask's 0644)
        fd = os.open(path, os.O_WRONLY | os.O_APPEND | os.O_CREAT | os.O_NONBLOCK, 0o600)
        with os.fdopen(fd, "ab") as f:  # which writes all of it, or raises
            f.write(line)
    except Exception:  # noqa: BLE001 - a broken log must not break the hook
        pass


def _log_exception(exc: BaseException, *, label: str = "") -> None:
    if isinstance(exc, BrainError):  # foreseen: its one line says what to do, as brain turns prints it
        log(f"{label}error: {exc}")
        return
    import traceback  # only on the error path

    log(f"{label}error: {exc!r}", "".join(traceback.format_exception(type(exc), exc, exc.__traceback__)))
