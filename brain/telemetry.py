"""A/B telemetry: one ``ab_recall`` row per `brain ask --ab`, and the weekly report over them.

Whether the graph earns its keep is then a SQL query, not a belief (README: "A/B log").
"""

from __future__ import annotations

import datetime as dt
import json
import sqlite3
from dataclasses import dataclass

from .db import storable, written
from .ledger.redact import redact, redact_value
from .moments import window_start
from .recall.types import Candidate, Mode, RecallResult


@dataclass
class ABRow:
    query: str
    mode_a: str
    mode_b: str
    k: int
    gate_entity: bool
    gate_reason: str
    candidates_added: int
    new_in_top_k: list[str]  # paths in B's top k and not in A's
    via_graph: list[str]  # titles of those that came via the graph
    top_a: list[str]
    top_b: list[str]
    reranked: bool
    latency_ms: dict
    warnings: list[str]


def via_graph(a: RecallResult, b: RecallResult, k: int) -> list[Candidate]:
    """The notes in B's top k, not in A's, that came via the graph. For the hop (graph, gated)
    the notes it added (they carry ``via``). For a fused mode the notes a lane of B that reads
    the links (``GRAPH_LANES``: PageRank, anchors, bridge) found, where A ran no such lane: its
    vote is what B has and A has not. With B's other lanes the same as A's (hybrid against
    hybrid+ppr) that vote is the difference; where B adds other lanes too (vector against
    hybrid+ppr) a note BM25 found as well counts, as the graph voted for it."""
    top_a = {c.path for c in a.results[:k]}
    mode_a, mode_b = Mode.parse(a.mode), Mode.parse(b.mode)
    if mode_b.hop:
        return [c for c in b.results[:k] if c.path not in top_a and c.via is not None]
    lanes = mode_b.graph_lanes - mode_a.graph_lanes
    return [c for c in b.results[:k] if c.path not in top_a and lanes.intersection(c.sources)]


def diff(a: RecallResult, b: RecallResult, k: int) -> ABRow:
    """What B (usually with the graph) changed in the top k relative to A."""
    top_a = [c.path for c in a.results[:k]]
    top_b = [c.path for c in b.results[:k]]
    new = [c for c in b.results[:k] if c.path not in set(top_a)]
    return ABRow(
        query=a.query,
        mode_a=a.mode,
        mode_b=b.mode,
        k=k,
        gate_entity=a.gate.entity,
        gate_reason=a.gate.reason,
        candidates_added=b.candidates_added,
        new_in_top_k=[c.path for c in new],
        via_graph=[c.title for c in via_graph(a, b, k)],
        top_a=top_a,
        top_b=top_b,
        reranked=a.reranked or b.reranked,
        latency_ms={"a": a.timings_ms, "b": b.timings_ms},
        warnings=sorted(set(a.warnings + b.warnings)),
    )


def now_utc() -> str:
    """SQLite's own datetime format, so `created_at >= datetime('now', '-7 days')` works."""
    return dt.datetime.now(dt.timezone.utc).strftime("%Y-%m-%d %H:%M:%S")


def log_ab(conn: sqlite3.Connection, row: ABRow, *, source: str, vault: str) -> int:
    # Lone surrogates (a query typed in a non-UTF-8 terminal) would fail at SQLite. Every text is
    # masked as the ledger masks a turn's: a token pasted into the query, a key in a note's path
    # or title (the top notes, the titles promoted), in the vault's path or a warning naming it.
    row = ABRow(**redact_value(storable(vars(row))))
    source, vault = stored_source(source), redact(storable(vault))
    with written(conn):  # a newer brain's upgrade since the open: refused, not written by older rules
        cursor = conn.execute(
            "INSERT INTO ab_recall (created_at, source, vault, query, mode_a, mode_b, k, gate_entity,"
            " gate_reason, candidates_added, new_in_top_k, via_graph_in_top_k, via_graph_titles, top_a,"
            " top_b, reranked, latency_ms, warnings) VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?)",
            (
                now_utc(),
                source,
                vault,
                row.query,
                row.mode_a,
                row.mode_b,
                row.k,
                int(row.gate_entity),
                row.gate_reason,
                row.candidates_added,
                len(row.new_in_top_k),
                len(row.via_graph),
                json.dumps(row.via_graph, ensure_ascii=False),
                json.dumps(row.top_a, ensure_ascii=False),
                json.dumps(row.top_b, ensure_ascii=False),
                int(row.reranked),
                json.dumps(row.latency_ms),
                json.dumps(row.warnings, ensure_ascii=False),
            ),
        )
    return int(cursor.lastrowid or 0)


def stored_source(source: str) -> str:
    """A source label as ``log_ab`` stores it, and as ``report`` looks it up."""
    return redact(storable(source))


def sqlite_time(moment: dt.datetime) -> str:
    """A UTC time in SQLite's format, which compares as text: the year always four digits
    (strftime's ``%Y`` writes 999, and "999-…" sorts after "1000-…")."""
    return moment.isoformat(sep=" ", timespec="seconds")


def parse_since(text: str, *, name: str = "--since") -> str:
    """What a user typed for the start of a window (``moments.FORMS``: ``7d``, ``30m``, ``2h ago``,
    ``today``, ``2026-11-01``, ``2026-11-01T09:00+03``) → a UTC timestamp in SQLite's format
    (``moments.window_start``: a date is the start of that day, in local time unless it names a
    zone). A moment before year 1 is everything, one after 9999 nothing. ``name`` is what the
    error calls the value (``since`` for the MCP tool's argument)."""
    return sqlite_time(window_start(text, name))


# The rows a report is over: logged since the window's start, of one source or of every one.
# Each figure of ``report`` reads these alone (one that read another window would not add up),
# and ``rows_before`` those of the same source before it.
_OF_SOURCE = "(:source IS NULL OR source = :source)"
_IN_WINDOW = f"created_at >= :since AND {_OF_SOURCE}"

# The weekly figures. The README shows this same SQL. A row records the modes that ran: one
# whose B ran as A (B's graph stage fell back: graph ran as vector) compared nothing, and would
# count as a graph that changed nothing; it is left out, and counted apart (``not_compared``).
REPORT_SQL = f"""
SELECT
  CASE gate_entity WHEN 1 THEN 'entity' ELSE 'not entity' END AS gate,
  count(*) AS queries,
  sum(new_in_top_k > 0) AS changed_top_k,
  round(avg(new_in_top_k > 0), 3) AS share_changed,
  sum(via_graph_in_top_k) AS promoted_via_graph,
  round(avg(candidates_added), 1) AS avg_candidates_added
FROM ab_recall
WHERE {_IN_WINDOW} AND mode_a <> mode_b
GROUP BY gate_entity = 1
ORDER BY gate_entity = 1
"""


def rows_before(conn: sqlite3.Connection, since: str, source: str | None = None) -> int:
    """How many ab_recall rows (of ``source``, looked up as ``report`` does) were logged before
    ``since``: what an empty report's window left out."""
    source = None if source is None else stored_source(source)
    return int(
        conn.execute(
            f"SELECT count(*) FROM ab_recall WHERE created_at < :since AND {_OF_SOURCE}",
            {"since": since, "source": source},
        ).fetchone()[0]
    )


def report(conn: sqlite3.Connection, since: str, source: str | None = None) -> dict:
    """Figures over ab_recall since a time: overall and split by gate decision; ``source`` is
    looked up as ``log_ab`` stored it (``stored_source``: a lone surrogate, from a terminal that
    is not UTF-8, as U+FFFD; a secret in it masked)."""
    source = None if source is None else stored_source(source)
    rows = [dict(r) for r in conn.execute(REPORT_SQL, {"since": since, "source": source})]
    total = {
        "queries": sum(r["queries"] for r in rows),
        "changed_top_k": sum(r["changed_top_k"] or 0 for r in rows),
        "promoted_via_graph": sum(r["promoted_via_graph"] or 0 for r in rows),
    }
    total["share_changed"] = round(total["changed_top_k"] / total["queries"], 3) if total["queries"] else 0.0
    # A row whose titles are not a JSON list (written by hand or another tool) adds no title:
    # json_each would fail on it with "malformed JSON", which reads as a damaged database.
    top = conn.execute(
        "SELECT value AS title, count(*) AS times FROM ab_recall, json_each("
        "CASE WHEN json_valid(via_graph_titles) AND json_type(via_graph_titles) = 'array'"
        " THEN via_graph_titles ELSE '[]' END)"
        f" WHERE {_IN_WINDOW} AND mode_a <> mode_b"
        " GROUP BY value ORDER BY times DESC, title LIMIT 10",
        {"since": since, "source": source},
    ).fetchall()
    # What the figures are over: a benchmark's rows (eval --ab-log), another pair of modes
    # (--ab-modes) or another top k (-k: "changed the top 20" is not "the top 10") land in the
    # same table as everyday `brain ask --ab`.
    rows_from = conn.execute(
        "SELECT source, mode_a, mode_b, k, count(*) AS queries FROM ab_recall"
        f" WHERE {_IN_WINDOW}"
        " GROUP BY source, mode_a, mode_b, k ORDER BY source, mode_a, mode_b, k",
        {"since": since, "source": source},
    ).fetchall()
    not_compared = conn.execute(
        f"SELECT count(*) FROM ab_recall WHERE {_IN_WINDOW} AND mode_a = mode_b",
        {"since": since, "source": source},
    ).fetchone()[0]
    return {
        "since": since,
        "source": source,
        "all": total,
        "not_compared": not_compared,
        "by_gate": rows,
        "top_promoted": [dict(r) for r in top],
        "rows_from": [dict(r) for r in rows_from],
    }
