"""`brain eval --explain ID`: read a miss instead of guessing at it.

For one labelled query and one mode: every lane's own ranking (dense, lexical, PageRank and
whatever other lanes the mode fuses), the rank and score each lane gave every relevant and
partial note, where the fused order put them, and the fused top 10 with each lane's vote.
"""

from __future__ import annotations

from dataclasses import dataclass, field, replace
from typing import TYPE_CHECKING

from ..output import cells, display_width, pad
from ..text import literal
from .metrics import query_metrics
from .queries import EvalQuery

if TYPE_CHECKING:
    from ..recall.pipeline import Recaller
    from ..recall.types import RecallSettings

TOP = 10


@dataclass
class LaneHit:
    rank: int  # from 1
    score: float


@dataclass
class Row:
    path: str
    label: str  # "relevant", "partial" or ""
    fused_rank: int | None
    fused_score: float | None
    lanes: dict[str, LaneHit | None] = field(default_factory=dict)

    def as_dict(self) -> dict:
        return {
            "path": self.path,
            "label": self.label or None,
            "fused_rank": self.fused_rank,
            "fused_score": None if self.fused_score is None else round(self.fused_score, 5),
            "lanes": {
                name: None if hit is None else {"rank": hit.rank, "score": round(hit.score, 5)}
                for name, hit in self.lanes.items()
            },
        }


@dataclass
class Explanation:
    query: EvalQuery
    mode: str
    lanes: list[str]
    labelled: list[Row]  # relevant notes, then partial ones
    top: list[Row]  # the fused top 10
    metrics: dict[str, float]
    named: str | None = None  # the note the query is the name of, put first (``RecallSettings.name_first``)
    agreed: str | None = None  # the note the bridge lane and anchor_lex both put first (``bridge_agreed_first``)
    kept: tuple[str, str] | None = None  # (note, why) both lanes put first, left in place: the query's form
    searched: str | None = None  # what BM25 searched: the query's informative words, respelt (``lexical``)
    fell_back: list[str] = field(default_factory=list)  # stages that failed for this query (the log says why)
    described: str | None = None  # the note a description is of, put first (``described_first``)
    # the dense lane's RRF k where the query asks for a note by what it is (``note_dense_rrf_k``)
    note_dense_k: int | None = None

    def as_dict(self) -> dict:
        return {
            "id": self.query.id,
            "query": self.query.query,
            "type": self.query.type,
            "mode": self.mode,
            "lanes": self.lanes,
            "metrics": self.metrics,
            "named": self.named,
            "agreed": self.agreed,
            "described": self.described,
            "note_dense_rrf_k": self.note_dense_k,
            "agreed_kept_in_place": None if self.kept is None else {"note": self.kept[0], "because": self.kept[1]},
            "bm25_searched": self.searched,
            "fell_back": self.fell_back,
            "labelled": [r.as_dict() for r in self.labelled],
            "top": [r.as_dict() for r in self.top],
        }


def explain(recaller: Recaller, query: EvalQuery, mode: str, settings: RecallSettings) -> Explanation:
    """Run ``mode`` for ``query`` on ``recaller`` and lay out each lane's view of it."""
    from ..recall import bridge as bridge_stage  # the lanes' code: only once a query is explained
    from ..recall import query_form

    # The whole fused pool, not just the top k, so a relevant note's fused rank shows even at 40.
    wide = replace(settings, k=max(settings.k, settings.depth, TOP))
    result = recaller.ask(query.query, mode, wide)
    fused = {c.path: (rank, c.score) for rank, c in enumerate(result.results, 1)}
    by_lane: dict[str, dict[str, LaneHit]] = {}
    for name, ranking in result.lanes.items():
        by_lane[name] = {}
        for rank, c in enumerate(ranking, 1):
            by_lane[name].setdefault(c.path, LaneHit(rank, c.score))
    lanes = list(result.lanes)
    label = {p: "partial" for p in query.partial} | {p: "relevant" for p in query.relevant}

    def row(path: str) -> Row:
        rank, score = fused.get(path, (None, None))
        return Row(path, label.get(path, ""), rank, score, {name: by_lane[name].get(path) for name in lanes})

    labelled = [row(p) for p in query.relevant] + [row(p) for p in query.partial if p not in query.relevant]
    top = [row(c.path) for c in result.results[:TOP]]
    metrics = query_metrics([c.path for c in result.results[: settings.k]], query.relevant)
    named = next((c.path for c in result.results if c.named), None)
    agreed = next((c.path for c in result.results if c.agreed), None)
    described = next((c.path for c in result.results if c.described), None)
    kept = None
    if agreed is None and settings.bridge_agreed_first and {"bridge", "anchor_lex"} <= result.lanes.keys():
        both = bridge_stage.agreed(result.lanes["bridge"], result.lanes["anchor_lex"])
        why = bridge_stage.kept_in_place(query.query)
        if both is not None and why is not None:
            kept = (result.lanes["bridge"][0].path, why)
    fell_back = [stage for stage, failed in result.fallbacks.items() if failed]
    note_dense_k = None
    fused_rrf = len(result.lanes) > 1 and "dense" in result.lanes and settings.fusion_method == "rrf"
    if fused_rrf and settings.note_dense_rrf_k > 0 and query_form.seeks_note(result.query):
        note_dense_k = settings.note_dense_rrf_k
    return Explanation(
        query,
        str(mode),
        lanes,
        labelled,
        top,
        metrics,
        named,
        agreed,
        kept,
        result.lexical_match,
        fell_back,
        described,
        note_dense_k,
    )


def format_explanation(ex: Explanation) -> str:
    """A plain-text table: one line per note, one column per lane (rank and score). What the
    vault or the query file holds is shown escaped where it would break a line (``one_line``):
    a trigram index's terms hold the newline or tab beside a word; and without the control
    characters a terminal would act on shown as their escapes (``terminal_safe``)."""
    q = ex.query
    lines = [
        f"{literal(q.id)} ({q.type}): {literal(q.query)}",
        f"mode {ex.mode}; recall@10 {ex.metrics['recall@10']:.2f}, nDCG@10 {ex.metrics['ndcg@10']:.3f}, "
        f"MRR {ex.metrics['mrr']:.3f}",
    ]
    if ex.named:
        lines.append(f"the query is the name of {literal(ex.named)}, and only of it: put first")
    if ex.agreed:
        lines.append(
            f"the bridge lane and anchor_lex both put {literal(ex.agreed)} first, and the query asks: put first"
        )
    if ex.described:
        lines.append(
            f"the dense and BM25 lanes both put {literal(ex.described)} first, the query asks nothing, and its "
            "passage links to a link lane's first note: put first"
        )
    if ex.note_dense_k is not None:
        lines.append(
            f"the query asks for a note by what it is: the dense lane's order fused at RRF k {ex.note_dense_k}"
        )
    if ex.kept:
        note, why = ex.kept
        lines.append(
            f"the bridge lane and anchor_lex both put {literal(note)} first, but the query {why}: left where the "
            "fusion put it"
        )
    if "lexical" in ex.fell_back:  # searched is None then: not "no word matched"
        lines.append("BM25 searched: nothing, the lexical lane fell back (see the warning)")
    elif "lexical" in ex.lanes:
        lines.append(
            f"BM25 searched: {literal(ex.searched) if ex.searched else '(no word of the query is in the index)'}"
        )
    others = [stage for stage in ex.fell_back if stage != "lexical"]
    if others:
        lines.append(f"fell back (see the warnings): {', '.join(others)}")
    # The width in the cells each path takes as shown: padded by code points, a path holding an
    # escape sequence (taken out for the terminal after) or wide characters moved the columns.
    width = min(60, max([display_width(_short(r.path)) for r in ex.labelled + ex.top] + [10])) + 2
    head = f"{'':>4} {'note':<{width}}{'fused':>14}" + "".join(f"{name:>16}" for name in ex.lanes)

    def line(prefix: str, r: Row) -> str:
        fused = "—" if r.fused_rank is None else f"{r.fused_rank} ({r.fused_score:.4f})"
        cells = "".join(f"{_cell(r.lanes[name]):>16}" for name in ex.lanes)
        return f"{prefix:>4} {pad(_short(r.path), width)}{fused:>14}{cells}"

    lines += ["", "labelled notes (R relevant, p partial): rank (score) in each lane, — = not in it", head]
    lines += [line("R" if r.label == "relevant" else "p", r) for r in ex.labelled]
    lines += ["", f"fused top {TOP}", head]
    lines += [
        line(f"{i}{'R' if r.label == 'relevant' else 'p' if r.label == 'partial' else ''}", r)
        for i, r in enumerate(ex.top, 1)
    ]
    return "\n".join(lines)


def _cell(hit: LaneHit | None) -> str:
    if hit is None:
        return "—"
    score = f"{hit.score:.3f}" if abs(hit.score) < 100 else f"{hit.score:.0f}"
    return f"{hit.rank} ({score})"


def _short(path: str, width: int = 60) -> str:
    """``path`` as its column shows it (``text.literal``), cut from the left to ``width`` cells."""
    path = literal(path)
    if display_width(path) <= width:
        return path
    kept, used = [], 1
    for ch in reversed(path):
        used += cells(ch)
        if used > width:
            break
        kept.append(ch)
    while kept and not cells(kept[-1]):  # a mark whose letter was cut off
        kept.pop()
    return "…" + "".join(reversed(kept))
