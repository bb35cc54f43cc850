"""Write and read the ``turns`` table of the brain database.

``write_turn`` masks secrets in every text before it reaches SQLite (and replaces lone
UTF-16 surrogates, which SQLite cannot store) and upserts on ``turn_key``, so a repeated
Stop for one turn updates its row. A partial row (the hook ran out of time to read the turn,
or found no line of its transcript) never overwrites what is known, and the full row of its
turn takes its place. Standard library only.
"""

from __future__ import annotations

import json
import sqlite3
import time
from typing import Any

from ..db import storable, written
from .redact import redact_value
from .transcript import Turn

JSON_COLUMNS = (
    "files_written",
    "files_read",
    "tools",
    "commands",
    "decisions",
    "tool_errors",
    "subagents",
)
TEXT_COLUMNS = (
    "session_id",
    "prompt_id",
    "started_at",
    "ended_at",
    "cwd",
    "project",
    "git_branch",
    "ask",
    "summary",
    "transcript_path",
    "claude_version",
)
COLUMNS = ("turn_key", *TEXT_COLUMNS, *JSON_COLUMNS, "byte_start", "byte_end")
SQLITE_INT_MAX = 2**63 - 1  # a larger LIMIT overflows the binding; this one means "all"

_UPSERT = (
    f"INSERT INTO turns (created_at, updated_at, stops, partial, {', '.join(COLUMNS)}) "
    f"VALUES (:created, :now, :stops, :partial, {', '.join(':' + c for c in COLUMNS)}) "
    "ON CONFLICT(turn_key) DO UPDATE SET created_at = min(turns.created_at, excluded.created_at), "
    "updated_at = excluded.updated_at, stops = turns.stops + excluded.stops, partial = excluded.partial, "
    + ", ".join(
        # A later Stop may see less (a lagging file): never blank out what is known.
        f"{c} = COALESCE(excluded.{c}, turns.{c})" if c in TEXT_COLUMNS else f"{c} = excluded.{c}"
        for c in COLUMNS[1:]
    )
)
# The partial rows a full row replaces: the same session and transcript, and the size the
# transcript had at their Stop inside the bytes of this turn.
_PARTIALS_OF_TURN = (
    "SELECT id, stops, created_at FROM turns WHERE session_id = :session_id AND partial = 1 "
    "AND turn_key != :turn_key AND transcript_path = :transcript_path "
    "AND byte_end > COALESCE(:byte_start, 0) AND byte_end <= :byte_end"
)
# The row a partial row belongs to when its key is new: a full row whose bytes hold the size
# the transcript had at this Stop, or a partial row of a Stop that saw the same size.
_ROW_OF_PARTIAL = (
    "SELECT id FROM turns WHERE session_id = :session_id AND transcript_path = :transcript_path "
    "AND ((partial = 0 AND byte_start < :byte_end AND byte_end >= :byte_end) "
    "OR (partial = 1 AND byte_end = :byte_end)) ORDER BY partial, id DESC LIMIT 1"
)
_INSERT_PARTIAL = (
    f"INSERT INTO turns (created_at, updated_at, partial, {', '.join(COLUMNS)}) "
    f"VALUES (:now, :now, 1, {', '.join(':' + c for c in COLUMNS)})"
)
# A partial row only counts its Stop in a row that exists, and fills what that row lacks.
_MERGE_PARTIAL = (
    "UPDATE turns SET updated_at = :now, stops = stops + 1, "
    + ", ".join(f"{c} = COALESCE({c}, :{c})" for c in TEXT_COLUMNS)
    + " WHERE id = :id"
)


def recorded_before(column: str) -> str:
    """The condition "recorded before :cutoff" (a Julian day) on ``column``, the one rule of
    `brain prune --ledger` (``prune``) and of a catch-up after it (``deferred``). julianday()
    reads both formats the tables hold ('2026-03-01T10:00:00.000Z', SQLite's '2026-03-01
    10:00:00') and an offset a hand edit may add, and is NULL for what is no time; it also reads
    'now' and a bare number (a Julian day), which no row of brain's holds: only a value that
    starts with a date counts as one."""
    return f"{column} GLOB '[0-9][0-9][0-9][0-9]-[0-9][0-9]-[0-9][0-9]*' AND julianday({column}) < :cutoff"


def last_cut(conn: sqlite3.Connection) -> float | None:
    """The moment (a Julian day) the last `brain prune --ledger` cut at (``ledger_prunes``), or
    None: what a catch-up or a Stop's look back must not bring back from before it."""
    return conn.execute("SELECT max(julianday(cut)) FROM ledger_prunes").fetchone()[0]


def utc_now(moment: float | None = None) -> str:
    """Now (or ``moment``, Unix time) as ISO 8601 UTC with milliseconds, the format of transcript
    timestamps."""
    now = time.time() if moment is None else moment
    return time.strftime("%Y-%m-%dT%H:%M:%S", time.gmtime(now)) + f".{int(now % 1 * 1000):03d}Z"


def turn_row(turn: Turn, *, turn_key: str, project: str | None) -> dict[str, Any]:
    """The column values of ``turn`` (JSON columns still as Python values)."""
    row = {c: getattr(turn, c, None) for c in COLUMNS if c != "turn_key"}
    row["turn_key"] = turn_key
    row["project"] = project
    return row


def write_turn(
    conn: sqlite3.Connection, row: dict[str, Any], *, now: str | None = None, partial: bool = False, cut: bool = False
) -> None:
    """Insert the turn, or update the row of the same ``turn_key``. Secrets are masked.

    ``partial``: the row holds only what the Stop hook's input said (it ran out of time to
    read the transcript), and ``byte_end`` is the transcript's size then. It never overwrites
    a row of its turn (the same key, or a full row whose bytes hold that size): it counts its
    Stop there. A full row takes the place of the partial rows of its turn, and their stops.
    ``cut``: a full row of the turn's last part only (its prompt lies beyond the bytes the
    reader goes back), written as a full row is but flagged partial.
    """
    values = _values(row, now)
    with written(conn):
        if partial:
            found = conn.execute("SELECT id FROM turns WHERE turn_key = :turn_key", values).fetchone()
            if found is None and values["transcript_path"] is not None and values["byte_end"] is not None:
                found = conn.execute(_ROW_OF_PARTIAL, values).fetchone()
            if found is None:
                conn.execute(_INSERT_PARTIAL, values)
            else:
                conn.execute(_MERGE_PARTIAL, {**values, "id": found[0]})
        else:
            replaced = []
            if values["transcript_path"] is not None and values["byte_end"] is not None:
                replaced = conn.execute(_PARTIALS_OF_TURN, values).fetchall()
                conn.executemany("DELETE FROM turns WHERE id = ?", [(r[0],) for r in replaced])
            values["stops"] = 1 + sum(r[1] for r in replaced)
            values["created"] = min([values["now"], *(r[2] for r in replaced)])
            values["partial"] = int(cut)
            conn.execute(_UPSERT, values)


def _values(row: dict[str, Any], now: str | None) -> dict[str, Any]:
    values = {c: redact_value(storable(row.get(c))) for c in COLUMNS}
    for column in TEXT_COLUMNS:
        if not isinstance(values[column], str) or values[column] == "":
            # So the COALESCE on update keeps what an earlier Stop saw; a value of another
            # type (a transcript field that was not text) is absent, never a failed write.
            values[column] = None
    for column in JSON_COLUMNS:
        default: dict[str, Any] | list[Any] = {} if column == "tools" else []
        values[column] = json.dumps(values[column] or default, ensure_ascii=False)
    for column in ("byte_start", "byte_end"):
        if not isinstance(values[column], int) or isinstance(values[column], bool):
            values[column] = None
    values["now"] = now or utc_now()
    return values


def _decode(row: sqlite3.Row) -> dict[str, Any]:
    out = dict(row)
    for column in JSON_COLUMNS:
        try:
            out[column] = json.loads(out[column]) if out.get(column) else None
        except ValueError:
            pass  # hand-edited rows stay readable
    return out


def recent_turns(
    conn: sqlite3.Connection,
    *,
    limit: int = 10,
    session: str | None = None,
    project: str | None = None,
    text: str | None = None,
    since: str | None = None,
) -> list[dict[str, Any]]:
    """The last ``limit`` turns, newest first; ``session`` may be a prefix of the id.

    ``text``: every word appears in the ask or the summary (any case); ``since``: an ISO 8601
    UTC time (``2026-11-01T00:00:00``), turns that started at or after it.
    """
    text, since = storable(text), storable(since)  # matched as the rows were stored
    where, args = _filters(session=session, project=project)
    clauses = [where[len("WHERE ") :]] if where else []
    if text and text.split():
        # SQLite's lower() folds ASCII alone: "Парсер" stayed as it was, and no word of another
        # script with a capital was ever found, not even as typed.
        conn.create_function("brain_casefold", 1, _casefold, deterministic=True)
    for word in (text or "").split():
        clauses.append(
            "(instr(brain_casefold(COALESCE(ask, '')), ?) > 0 OR instr(brain_casefold(COALESCE(summary, '')), ?) > 0)"
        )
        args += [word.casefold(), word.casefold()]
    limit = min(limit, SQLITE_INT_MAX)
    # Newest first by COALESCE(started_at, created_at), asked as two parts that an index orders:
    # the turns with a start (turns_started) and the few without (a turn whose prompt was never
    # found). Ordered by the expression itself, every call sorted the whole ledger (300,000
    # turns: 1.0 s for the last ten, in `brain turns` and the MCP tool alike).
    started = [*clauses, "started_at IS NOT NULL"] + (["started_at >= ?"] if since else [])
    # A session's turns come through its index and are sorted: walked back along started_at to
    # them, a session of long ago read the ledger (the unary + keeps the planner off that index).
    order = "+started_at" if session else "started_at"
    unstarted = [*clauses, f"{order} IS NULL"] + (["created_at >= ?"] if since else [])
    parts_args = [*args, *([since] if since else [])]
    rows = conn.execute(
        f"SELECT * FROM (SELECT * FROM (SELECT * FROM turns WHERE {' AND '.join(started)} "
        f"ORDER BY {order} DESC, id DESC LIMIT ?) "
        f"UNION ALL SELECT * FROM (SELECT * FROM turns WHERE {' AND '.join(unstarted)} "
        "ORDER BY created_at DESC, id DESC LIMIT ?)) "
        "ORDER BY COALESCE(started_at, created_at) DESC, id DESC LIMIT ?",
        (*parts_args, limit, *parts_args, limit, limit),
    ).fetchall()
    return [_decode(r) for r in rows]


def _casefold(value: Any) -> Any:
    return value.casefold() if isinstance(value, str) else value


def _filters(*, session: str | None, project: str | None) -> tuple[str, list[Any]]:
    # Looked up as write_turn stored them: a filter typed in a terminal that is not UTF-8 holds
    # lone surrogates ("\udcff"), which SQLite refuses with a traceback.
    session, project = storable(session), storable(project)
    clauses, args = [], []
    if session:
        # LIKE folds ASCII case, so no index can answer it: bounded by the ranges every match lies
        # in, it reads the matching sessions' rows, not the ledger.
        ranges = _prefix_ranges(session)
        clauses.append(
            "("
            + " OR ".join(["session_id >= ? AND session_id < ?"] * len(ranges))
            + ") AND session_id LIKE ? ESCAPE '\\'"
        )
        args += [bound for pair in ranges for bound in pair]
        args.append(session.replace("\\", "\\\\").replace("%", "\\%").replace("_", "\\_") + "%")
    if project:
        clauses.append("project = ?")
        args.append(project)
    return ("WHERE " + " AND ".join(clauses)) if clauses else "", args


def _prefix_ranges(prefix: str, letters: int = 4) -> list[tuple[str, str]]:
    """Ranges of text that hold every string starting with ``prefix`` in any ASCII case: one for
    each case of its first ``letters`` letters, the rest spanning its upper to its lower case
    (upper-case letters sort first)."""
    heads = [""]
    cut = 0
    for cut, char in enumerate(prefix, 1):
        cases = {char.translate(_ASCII_UPPER), char.translate(_ASCII_LOWER)}
        heads = [head + case for head in heads for case in sorted(cases)]
        if sum(c.isascii() and c.isalpha() for c in prefix[:cut]) >= letters:
            break
    rest = prefix[cut:]
    return [(head + rest.translate(_ASCII_UPPER), head + rest.translate(_ASCII_LOWER) + "\U0010ffff") for head in heads]


_ASCII_UPPER = str.maketrans("abcdefghijklmnopqrstuvwxyz", "ABCDEFGHIJKLMNOPQRSTUVWXYZ")
_ASCII_LOWER = str.maketrans("ABCDEFGHIJKLMNOPQRSTUVWXYZ", "abcdefghijklmnopqrstuvwxyz")


def turn_stats(
    conn: sqlite3.Connection,
    *,
    project: str | None = None,
    session: str | None = None,
    days: int = 14,
    top: int = 10,
) -> dict[str, Any]:
    """The turns recorded; over the last ``days`` days with turns (local dates): turns per day
    and project, the top tools and the most-touched files.

    Each figure but the count reads the turns of those days alone, found through the index on
    ``started_at``: over the whole ledger, every call read every row's JSON (1,000,000 turns:
    seconds, and more each day).
    """
    where, args = _filters(session=session, project=project)
    total = conn.execute(f"SELECT COUNT(*) FROM turns {where}", args).fetchone()[0]
    # A session's turns are found through its index, never by walking the index on started_at
    # back to the session's (the unary + keeps the planner off it).
    start = "+started_at" if session else "started_at"
    kept, since = _last_days(conn, where, args, min(max(days, 1), 100_000), start)
    also = "AND" if where else "WHERE"
    # The turns of those days: those that started since the first of them (an index range), and
    # the few that never started (a turn whose prompt was never found), by when they were written.
    columns = "started_at, created_at, project, tools, files_written"
    window = (
        f"SELECT {columns} FROM turns {where} {also} {start} >= ? UNION ALL "
        f"SELECT {columns} FROM turns {where} {also} {start} IS NULL"
    )
    day = "date(COALESCE(started_at, created_at), 'localtime')"
    params = (*args, since or "\U0010ffff", *args, json.dumps(kept))
    in_days = f"{day} IN (SELECT value FROM json_each(?))"
    per_day = conn.execute(
        f"SELECT {day} AS day, COALESCE(project, '?') AS project, COUNT(*) AS turns "
        f"FROM ({window}) WHERE {in_days} GROUP BY 1, 2 ORDER BY 1 DESC, 3 DESC, 2",
        params,
    ).fetchall()
    tools = conn.execute(
        f"SELECT j.key AS tool, SUM(j.value) AS uses, COUNT(*) AS turns "
        f"FROM ({window}) AS t, json_each(CASE WHEN json_valid(t.tools) THEN t.tools END) AS j WHERE {in_days} "
        "GROUP BY j.key ORDER BY 2 DESC, 1 LIMIT ?",
        (*params, min(top, SQLITE_INT_MAX)),
    ).fetchall()
    files = conn.execute(
        f"SELECT j.value AS file, COUNT(*) AS turns FROM ({window}) AS t, "
        f"json_each(CASE WHEN json_valid(t.files_written) THEN t.files_written END) AS j WHERE {in_days} "
        "GROUP BY j.value ORDER BY 2 DESC, 1 LIMIT ?",
        (*params, min(top, SQLITE_INT_MAX)),
    ).fetchall()
    return {
        "turns": total,
        "per_day": [dict(r) for r in per_day],
        "top_tools": [dict(r) for r in tools],
        "top_files": [dict(r) for r in files],
    }


def _last_days(
    conn: sqlite3.Connection, where: str, args: list[Any], days: int, start: str
) -> tuple[list[str], str | None]:
    """The last ``days`` local dates with turns (newest first), and the UTC time (as stored) from
    which the turns that started on them lie; None when none did.

    Stepped back one day at a time through the index on ``started_at`` (each step: the latest
    start before the day found last), so it reads ``days`` index entries, not the ledger.
    """
    also = "AND" if where else "WHERE"
    found: set[str] = set()
    bound: str | None = None  # the turns still to look at started before this
    since: str | None = None
    while len(found) < days:
        latest = conn.execute(
            f"SELECT max({start}) FROM turns {where} {also} started_at IS NOT NULL"
            + (f" AND {start} < ?" if bound is not None else ""),
            (*args, *([bound] if bound is not None else [])),
        ).fetchone()[0]
        if latest is None:
            break
        date, midnight = conn.execute(
            "SELECT date(?, 'localtime'), strftime('%Y-%m-%dT%H:%M:%S', date(?, 'localtime'), 'utc')",
            (latest, latest),
        ).fetchone()
        if date is None or midnight is None or midnight >= latest:
            bound = latest  # not a time (edited by hand): passed over, as the day it has none
            continue
        found.add(date)
        bound = since = midnight
    # A turn that never started counts on the day it was written (few: read them all).
    unstarted = conn.execute(
        f"SELECT DISTINCT date(created_at, 'localtime') FROM turns {where} {also} {start} IS NULL", args
    ).fetchall()
    kept = sorted(found | {r[0] for r in unstarted if r[0] is not None}, reverse=True)[:days]
    return kept, since
