"""The ``recalls`` table: what the prompt hook showed the agent, or why nothing, and the report over it.

One row per prompt. The prompt is stored masked, then clipped (``ledger.transcript.clip``), and
every other text masked too. ``report`` answers, per day: how many prompts got notes, how many
got none and why, the hook's p50/p95 latency, and, joined with ``turns``, how often the agent then
read or edited a note it was shown. The README shows the same SQL (``PER_DAY_SQL`` and the rest).

Standard library only: the prompt hook writes here.
"""

from __future__ import annotations

import json
import sqlite3
from collections.abc import Sequence
from typing import Any

from ..db import storable, written
from ..ledger.redact import redact_value
from ..ledger.store import SQLITE_INT_MAX, utc_now

COLUMNS = (
    "created_at",
    "session_id",
    "prompt_id",
    "cwd",
    "vault",
    "prompt",
    "prompt_chars",
    "reason",
    "detail",
    "mode",
    "model",
    "min_cosine",
    "results",
    "above",
    "notes",
    "shown",
    "chars",
    "server_ms",
    "latency_ms",
)
MASKED = ("session_id", "prompt_id", "cwd", "detail", "notes")  # the prompt comes masked and clipped


def write_recall(conn: sqlite3.Connection, row: dict[str, Any]) -> int:
    """Insert one recall row; its id. ``notes`` is a list of dicts (stored as JSON)."""
    values = {c: storable(row.get(c)) for c in COLUMNS}
    for column in MASKED:
        values[column] = redact_value(values[column])
    values["created_at"] = values["created_at"] or utc_now()
    values["notes"] = json.dumps(values["notes"] or [], ensure_ascii=False)
    values["shown"] = values["shown"] or 0
    values["chars"] = values["chars"] or 0
    with written(conn):  # a newer brain's upgrade since the open: refused, not written by older rules
        cursor = conn.execute(
            f"INSERT INTO recalls ({', '.join(COLUMNS)}) VALUES ({', '.join(':' + c for c in COLUMNS)})", values
        )
    return int(cursor.lastrowid or 0)


def recalled_prompt(conn: sqlite3.Connection, session_id: str, prompt_id: str | None) -> str | None:
    """The prompt this hook recorded for a turn (masked and clipped, as stored): the session's
    last, with ``prompt_id`` when known; None without one (the prompt hook not installed). The
    ids are looked up as ``write_recall`` stored them (``storable``: half a UTF-16 pair as U+FFFD)."""
    session_id, prompt_id = storable(session_id), storable(prompt_id)
    row = conn.execute(
        "SELECT prompt FROM recalls WHERE session_id = ? AND (? IS NULL OR prompt_id = ?)"
        " ORDER BY created_at DESC, id DESC LIMIT 1",
        (session_id, prompt_id, prompt_id),
    ).fetchone()
    return str(row[0]) if row else None


# Slash commands after which the notes shown before are no longer in the conversation (the
# triggers of db_migrations.m005_recall_shown, which keep recall_shown, know them by these names).
FORGETTING = ("/compact", "/clear")


def shown_in_session(
    conn: sqlite3.Connection, session_id: str, paths: Sequence[str] | None = None
) -> dict[str, tuple[str | None, int | None]]:
    """Path → (file hash, chunk id) of every note shown in ``session_id`` since its last
    ``/compact`` or ``/clear`` (the latest showing wins): the notes the conversation still holds.
    ``paths``: only these (as stored: masked), looked up by key, whatever the session's length.
    The id is looked up as ``write_recall`` stored it (``storable``)."""
    session_id = storable(session_id)
    if paths is None:
        rows = conn.execute("SELECT path, hash, chunk_id FROM recall_shown WHERE session_id = ?", (session_id,))
    else:
        rows = conn.execute(
            "SELECT path, hash, chunk_id FROM recall_shown WHERE session_id = ? "
            "AND path IN (SELECT value FROM json_each(?))",
            (session_id, json.dumps(storable(list(paths)), ensure_ascii=False)),
        )
    return {
        path: (digest if isinstance(digest, str) else None, chunk if isinstance(chunk, int) else None)
        for path, digest, chunk in rows
        if isinstance(path, str)
    }


def recent_recalls(
    conn: sqlite3.Connection, *, limit: int = 10, session: str | None = None, since: str | None = None
) -> list[dict[str, Any]]:
    """The last ``limit`` recall rows, newest first; ``session`` may be a prefix of the id,
    looked up as ``write_recall`` stored it (``storable``); ``since``: an ISO 8601 UTC time
    (``2026-11-01T00:00:00``), the rows recorded at or after it."""
    session = storable(session)
    clauses, args = [], []
    if session:
        clauses.append("session_id LIKE ? ESCAPE '\\'")
        args.append(session.replace("\\", "\\\\").replace("%", "\\%").replace("_", "\\_") + "%")
    if since:
        clauses.append("created_at >= ?")
        args.append(since)
    where = "WHERE " + " AND ".join(clauses) if clauses else ""
    rows = conn.execute(
        f"SELECT * FROM recalls {where} ORDER BY created_at DESC, id DESC LIMIT ?",
        (*args, min(limit, SQLITE_INT_MAX)),
    ).fetchall()
    out = []
    for row in rows:
        item = dict(row)
        try:
            item["notes"] = json.loads(item["notes"] or "[]")
        except ValueError:
            pass  # a hand-edited row stays readable
        out.append(item)
    return out


# ----- the report (the README shows these same queries) -----------------------------------------

# Rows of the last :days days (by local date). The first test, a day wider than the window
# whatever the time zone, is what the index on created_at can answer: without it every report
# read every row ever recorded (500,000 prompts: 3.5 s for the last 14 days).
_SINCE = (
    "created_at >= strftime('%Y-%m-%dT%H:%M:%S', 'now', '-' || (:days + 1) || ' days') "
    "AND date(created_at, 'localtime') > date('now', 'localtime', '-' || :days || ' days')"
)

PER_DAY_SQL = f"""
SELECT date(created_at, 'localtime') AS day,
       count(*) AS prompts,
       sum(reason IS NULL) AS with_notes,
       sum(reason IS NOT NULL) AS without_notes,
       sum(shown) AS notes_shown,
       round(avg(CASE WHEN reason IS NULL THEN chars END)) AS avg_chars
FROM recalls
WHERE {_SINCE}
GROUP BY day
ORDER BY day DESC
"""

REASONS_SQL = f"""
SELECT date(created_at, 'localtime') AS day, reason, count(*) AS prompts
FROM recalls
WHERE reason IS NOT NULL AND {_SINCE}
GROUP BY day, reason
ORDER BY day DESC, prompts DESC, reason
"""

# Nearest-rank percentiles of the hook's time over the prompts that asked the server
# (server_ms is NULL for prompts skipped before asking).
LATENCY_SQL = f"""
WITH asked AS (
  SELECT date(created_at, 'localtime') AS day, latency_ms,
         row_number() OVER (PARTITION BY date(created_at, 'localtime') ORDER BY latency_ms) AS n,
         count(*) OVER (PARTITION BY date(created_at, 'localtime')) AS total
  FROM recalls
  WHERE server_ms IS NOT NULL AND {_SINCE}
)
SELECT day, count(*) AS asked,
       min(CASE WHEN n >= 0.50 * total THEN latency_ms END) AS p50_ms,
       min(CASE WHEN n >= 0.95 * total THEN latency_ms END) AS p95_ms
FROM asked
GROUP BY day
ORDER BY day DESC
"""

# A shown note counts as read (edited) when a later turn of the same session read (wrote) its
# file: the vault's path joined with the note's, as the agent's tools name files. Each turn of
# those sessions is read once, for the last time it read and wrote each file (asked per note,
# a year's report read every turn of a session again for each note shown in it: 81 s at
# 300,000 turns and 500,000 prompts). A row whose JSON is not valid (hand-edited) is passed
# over, not an error for the whole report.
USE_SQL = f"""
WITH shown AS (
  SELECT r.id, r.session_id, r.created_at, date(r.created_at, 'localtime') AS day,
         rtrim(r.vault, '/') || '/' || json_extract(n.value, '$.path') AS file
  FROM recalls AS r, json_each(CASE WHEN json_valid(r.notes) THEN r.notes END) AS n
  WHERE r.reason IS NULL AND n.type = 'object' AND {_SINCE.replace("created_at", "r.created_at")}
),
sessions AS (
  SELECT DISTINCT session_id FROM recalls WHERE reason IS NULL AND {_SINCE}
),
touched AS (
  SELECT t.session_id, f.value AS file, 1 AS wrote, COALESCE(t.ended_at, t.updated_at) AS at
  FROM turns AS t, json_each(CASE WHEN json_valid(t.files_written) THEN t.files_written END) AS f
  WHERE t.session_id IN sessions
  UNION ALL
  SELECT t.session_id, f.value, 0, COALESCE(t.ended_at, t.updated_at)
  FROM turns AS t, json_each(CASE WHEN json_valid(t.files_read) THEN t.files_read END) AS f
  WHERE t.session_id IN sessions
),
last_touched AS (
  SELECT session_id, file, max(CASE WHEN wrote = 0 THEN at END) AS read_at,
         max(CASE WHEN wrote = 1 THEN at END) AS written_at
  FROM touched
  GROUP BY session_id, file
),
used AS (
  SELECT shown.*,
         COALESCE(l.read_at >= shown.created_at, 0) AS was_read,
         COALESCE(l.written_at >= shown.created_at, 0) AS was_edited
  FROM shown LEFT JOIN last_touched AS l ON l.session_id = shown.session_id AND l.file = shown.file
)
SELECT day,
       count(*) AS notes_shown,
       sum(was_read) AS notes_read,
       sum(was_edited) AS notes_edited,
       count(DISTINCT CASE WHEN was_read OR was_edited THEN id END) AS prompts_used
FROM used
GROUP BY day
ORDER BY day DESC
"""


def report(conn: sqlite3.Connection, *, days: int = 14) -> dict[str, Any]:
    """Per day (newest first) over the last ``days`` days, and the totals."""
    params = {"days": min(max(days, 1), 1_000_000)}
    per_day: dict[str, dict[str, Any]] = {}
    for r in conn.execute(PER_DAY_SQL, params):
        per_day[r["day"]] = {
            **dict(r),
            "reasons": {},
            "asked": 0,
            "p50_ms": None,
            "p95_ms": None,
            "notes_read": 0,
            "notes_edited": 0,
            "prompts_used": 0,
        }
    for r in conn.execute(REASONS_SQL, params):
        per_day[r["day"]]["reasons"][r["reason"]] = r["prompts"]
    for r in conn.execute(LATENCY_SQL, params):
        per_day[r["day"]].update(asked=r["asked"], p50_ms=r["p50_ms"], p95_ms=r["p95_ms"])
    for r in conn.execute(USE_SQL, params):
        per_day[r["day"]].update(
            notes_read=r["notes_read"] or 0, notes_edited=r["notes_edited"] or 0, prompts_used=r["prompts_used"] or 0
        )
    days_list = list(per_day.values())
    totals: dict[str, Any] = {
        key: sum(d[key] or 0 for d in days_list)
        for key in (
            "prompts",
            "with_notes",
            "without_notes",
            "notes_shown",
            "notes_read",
            "notes_edited",
            "prompts_used",
            "asked",
        )
    }
    reasons: dict[str, int] = {}
    for d in days_list:
        for reason, n in d["reasons"].items():
            reasons[reason] = reasons.get(reason, 0) + n
    totals["reasons"] = dict(sorted(reasons.items(), key=lambda item: (-item[1], item[0])))
    latencies = sorted(  # numbers only: a hand-edited "abc" cannot be ordered with them
        r[0]
        for r in conn.execute(f"SELECT latency_ms FROM recalls WHERE server_ms IS NOT NULL AND {_SINCE}", params)
        if isinstance(r[0], (int, float))
    )
    totals["p50_ms"] = _nearest_rank(latencies, 0.50)
    totals["p95_ms"] = _nearest_rank(latencies, 0.95)
    return {"days": params["days"], "per_day": days_list, "all": totals}


def _nearest_rank(values: list[float], share: float) -> float | None:
    """The smallest value with at least ``share`` of the values at or below it (as LATENCY_SQL)."""
    for n, value in enumerate(values, 1):
        if n >= share * len(values):
            return value
    return None
