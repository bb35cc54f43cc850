"""Run recall modes over labelled queries: metrics per query, per type, per mode, and latency.

One ``Recaller`` answers every query; the index is built or updated once, before the first
query. Each mode is run on its own through ``Recaller.ask`` (not ``compare``, which shares work
between modes), so a mode's latency is what a user of that mode pays. Modes are plain strings:
whatever ``Recaller`` accepts.
"""

from __future__ import annotations

import contextlib
import logging
import os
import sqlite3
import time
from collections.abc import Callable, Iterator, Sequence
from dataclasses import dataclass, field, replace
from pathlib import Path
from typing import TYPE_CHECKING

from ..embed import Embedder
from ..errors import BrainError, ConfigError
from ..recall.types import AB_MODES, RecallResult, RecallSettings
from .metrics import METRIC_KEYS, aggregate, query_metrics
from .queries import QUERY_TYPES, EvalQuery

if TYPE_CHECKING:
    from ..recall.pipeline import Recaller

log = logging.getLogger("brain")

SUMMARY_KEYS = (*METRIC_KEYS, "latency_ms")
MIN_K = 10  # recall@10 and nDCG@10 need ten results


@dataclass
class QueryOutcome:
    query: EvalQuery
    mode: str
    ranked: list[str]
    metrics: dict[str, float]
    latency_ms: float
    reranked: bool
    fallbacks: dict[str, bool]


@dataclass
class EvalReport:
    vault: str
    model: str
    k: int
    queries: int
    notes: int
    modes: dict[str, dict]  # mode -> {"all": {...}, "by_type": {type: {...}}}
    counts_by_type: dict[str, int]
    outcomes: list[QueryOutcome] = field(default_factory=list)
    warnings: list[str] = field(default_factory=list)
    not_reranked: dict[str, int] = field(default_factory=dict)  # mode -> queries that fell back to dense order
    ab_rows: int = 0
    ab_error: str | None = None  # why --ab-log stopped logging mid-run (the figures stand)
    # mode -> {stage: queries where it fell back} (a damaged BM25 index, a failed graph stage):
    # those figures are the mode's without that stage. The reranker's are in not_reranked.
    fell_back: dict[str, dict[str, int]] = field(default_factory=dict)
    reranker: str | None = None  # the one configured for +rerank modes; None: none is

    def as_json(self) -> dict:
        """The `brain eval --json` object, exactly: queries, notes, k, model, reranker, modes; and
        not_reranked when a +rerank mode fell back for some queries (its figures are not reranked
        ones), fell_back when another stage did. k and the models say what produced the figures:
        the same file scores otherwise with another model."""
        out: dict = {
            "queries": self.queries,
            "notes": self.notes,
            "k": self.k,
            "model": self.model,
            "reranker": self.reranker,
            "modes": self.modes,
        }
        if self.not_reranked:
            out["not_reranked"] = dict(self.not_reranked)
        if self.fell_back:
            out["fell_back"] = {mode: dict(stages) for mode, stages in self.fell_back.items()}
        return out


def canonical_modes(modes: Sequence[str]) -> list[str]:
    """Modes as the pipeline spells them, validated by it, duplicates dropped, order kept."""
    from ..recall.types import Mode

    out: list[str] = []
    for text in modes:
        if not text.strip():
            continue
        name = str(Mode.parse(text))
        if name not in out:
            out.append(name)
    if not out:
        raise ConfigError("no modes given: e.g. --modes vector,hybrid+ppr")
    return out


def run_eval(
    queries: Sequence[EvalQuery],
    vault: str | os.PathLike[str] | None,
    modes: Sequence[str],
    settings: RecallSettings | None = None,  # k below 10 is raised to 10
    *,
    embedder: Embedder | None = None,
    rerank_model: str | bool | None = True,
    progress: bool = False,
    on_step: Callable[[int], None] | None = None,
    ab_source: str | None = None,
) -> EvalReport:
    """Run every mode over every query; see ``EvalReport``."""
    from ..recall.opening import open_recaller

    if not queries:
        raise ConfigError("no queries to evaluate")
    mode_names = canonical_modes(modes)
    settings = replace(settings or RecallSettings(), k=max(MIN_K, (settings.k if settings else MIN_K)))
    recaller = open_recaller(vault, build=True, embedder=embedder, progress=progress, rerank_model=rerank_model)
    try:
        return _run(recaller, list(queries), mode_names, settings, on_step, ab_source)
    finally:
        recaller.close()


def _run(
    recaller: Recaller,
    queries: list[EvalQuery],
    modes: list[str],
    settings: RecallSettings,
    on_step: Callable[[int], None] | None,
    ab_source: str | None,
) -> EvalReport:
    warnings = list(recaller.warnings)
    cut = [q for q in queries if q.cut_from]
    if cut:
        from ..server.protocol import MAX_QUERY_CHARS

        warnings.append(
            f"{len(cut)} query(ies) over the {MAX_QUERY_CHARS:,} characters a query takes, asked with their "
            f"first words up to that as `brain ask` asks them: {', '.join(f'{q.id} ({q.cut_from:,})' for q in cut)}"
        )
    indexed = recaller.store.note_paths()
    unindexed = sorted({p for q in queries for p in q.relevant if p not in indexed})
    if unindexed:
        warnings.append(
            f"{len(unindexed)} relevant note(s) are in the vault but not in the index (skipped: too large, "
            f"ignored, unreadable), so no mode can find them: {', '.join(unindexed)}"
        )
    # Warm up outside the timings: the model load, torch's first call, the reranker load.
    with _quiet_log():
        for mode in modes:
            recaller.ask(queries[0].query, mode, settings)

    outcomes: list[QueryOutcome] = []
    seen: dict[str, int] = {}  # per-query warnings, counted here instead of logged per query
    ab_rows = 0
    ab_error = None
    with contextlib.ExitStack() as stack:
        conn = None
        if ab_source:  # a damaged or read-only brain.db at open is one line, before any query
            from ..db import connection

            conn = stack.enter_context(connection())
        logged: list[int] = []  # this run's ab_recall rows: a run stopped by Ctrl-C takes them back
        with _quiet_log(), _taken_back_on_interrupt(lambda: conn, logged):
            for q in queries:
                by_mode = {}
                for mode in modes:
                    started = time.perf_counter()
                    result = recaller.ask(q.query, mode, settings)
                    latency = (time.perf_counter() - started) * 1000
                    by_mode[mode] = result
                    ranked = [c.path for c in result.results]
                    outcomes.append(
                        QueryOutcome(
                            query=q,
                            mode=mode,
                            ranked=ranked,
                            metrics=query_metrics(ranked, q.relevant),
                            latency_ms=latency,
                            reranked=result.reranked,
                            fallbacks=dict(result.fallbacks),
                        )
                    )
                    for message in result.warnings:
                        if result.fallbacks.get("rerank") and "rerank" in message:
                            continue  # summed up per mode below, with the reason
                        if message not in recaller.warnings:
                            seen[message] = seen.get(message, 0) + 1
                    if on_step:
                        on_step(1)
                if conn is not None and ab_source:
                    try:
                        logged.append(_log_ab(conn, recaller, q, by_mode, settings, ab_source))
                        ab_rows += 1
                    except sqlite3.Error as exc:  # mid-run: the run's figures stand; logging stops
                        from .. import config
                        from ..db import database_error

                        ab_error, conn = str(database_error(config.db_path(), exc)), None
                    except BrainError as exc:  # a newer brain upgraded brain.db meanwhile: logging stops
                        ab_error, conn = str(exc), None

    warnings.extend(f"{message} (×{n})" if n > 1 else message for message, n in seen.items())
    order = {t: i for i, t in enumerate(QUERY_TYPES)}
    summary, not_reranked, fell_back = _per_mode(recaller, outcomes, modes, order, warnings)
    counts: dict[str, int] = {}
    for q in sorted(queries, key=lambda q: order.get(q.type, len(order))):
        counts[q.type] = counts.get(q.type, 0) + 1
    return EvalReport(
        vault=str(recaller.root),
        model=recaller.model_name,
        k=settings.k,
        queries=len(queries),
        notes=len(indexed),
        modes=summary,
        counts_by_type=counts,
        outcomes=outcomes,
        warnings=warnings,
        not_reranked=not_reranked,
        ab_rows=ab_rows,
        ab_error=ab_error,
        fell_back=fell_back,
        reranker=recaller.rerank_model or None,
    )


def _per_mode(
    recaller: Recaller, outcomes: list[QueryOutcome], modes: list[str], order: dict[str, int], warnings: list[str]
) -> tuple[dict[str, dict], dict[str, int], dict[str, dict[str, int]]]:
    """Each mode's figures over its outcomes (per query type, in ``order``), how many of its
    queries the reranker did not run for, and which stages fell back how often; a line in
    ``warnings`` for each mode whose reranker or graph stage did not run for every query."""
    summary: dict[str, dict] = {}
    not_reranked: dict[str, int] = {}
    fell_back: dict[str, dict[str, int]] = {}
    for mode in modes:
        rows = [(o.query.type, {**o.metrics, "latency_ms": o.latency_ms}) for o in outcomes if o.mode == mode]
        rows.sort(key=lambda r: order.get(r[0], len(order)))
        summary[mode] = aggregate(rows, SUMMARY_KEYS)
        for part in [summary[mode]["all"], *summary[mode]["by_type"].values()]:
            part["latency_ms"] = round(part["latency_ms"], 2)
        mine = [o for o in outcomes if o.mode == mode]
        if "rerank" in mode:
            missed = sum(1 for o in mine if not o.reranked)
            if missed:
                not_reranked[mode] = missed
                warnings.append(
                    f"{mode}: the reranker did not run for {missed} of {len(mine)} queries "
                    f"({_reason(recaller)}); those figures are the order before reranking, not reranked ones"
                )
        failed_graph = sum(1 for o in mine if o.fallbacks.get("graph"))
        if failed_graph:
            warnings.append(
                f"{mode}: the graph stage failed for {failed_graph} of {len(mine)} queries (dense result used)"
            )
        stages: dict[str, int] = {}
        for o in mine:
            for stage in (s for s, failed in o.fallbacks.items() if failed and s != "rerank"):
                stages[stage] = stages.get(stage, 0) + 1
        if stages:
            fell_back[mode] = stages
    return summary, not_reranked, fell_back


@contextlib.contextmanager
def _taken_back_on_interrupt(conn: Callable[[], sqlite3.Connection | None], ids: list[int]) -> Iterator[None]:
    """A run stopped by Ctrl-C prints no figures; the ab_recall rows it had logged went on
    standing under its source label, half a benchmark that `brain ab report` mixed with the
    next run's whole one. They are deleted, by id, before the interrupt goes on."""
    try:
        yield
    except KeyboardInterrupt:
        current = conn()
        if current is not None and ids:
            with contextlib.suppress(sqlite3.Error):  # the rows stay; the interrupt is what is reported
                current.execute("BEGIN IMMEDIATE")
                for start in range(0, len(ids), 500):  # SQLite's limit on a statement's variables
                    part = ids[start : start + 500]
                    current.execute(f"DELETE FROM ab_recall WHERE id IN ({','.join('?' * len(part))})", part)
                current.execute("COMMIT")
        raise


@contextlib.contextmanager
def _quiet_log():
    """Per-query warnings (e.g. "no reranker") would repeat once per query: count them instead."""
    previous = log.level
    log.setLevel(logging.ERROR)
    try:
        yield
    finally:
        log.setLevel(previous)


def _reason(recaller: Recaller) -> str:
    if not recaller.rerank_model:
        return "no reranker configured: BRAIN_RERANK_MODEL=none"
    return recaller.reranker_error or f"reranker {recaller.rerank_model!r} unavailable"


def _log_ab(
    conn: sqlite3.Connection,
    recaller: Recaller,
    q: EvalQuery,
    by_mode: dict[str, RecallResult],
    settings: RecallSettings,
    source: str,
) -> int:
    """One ab_recall row (its id), the pair `brain ask --ab` compares (``AB_MODES``, each +rerank when a
    reranker is configured, as there), reusing this query's results when those modes ran."""
    from ..telemetry import diff, log_ab

    modes = [m + "+rerank" if recaller.rerank_model else m for m in AB_MODES]
    a, b = (by_mode.get(m) for m in modes)
    if a is None or b is None:
        a, b = recaller.compare(q.query, modes, settings)
    return log_ab(conn, diff(a, b, settings.k), source=source, vault=str(recaller.root))


# ----- presentation -------------------------------------------------------------------------

_LABELS = {
    "recall@5": "recall@5",
    "recall@10": "recall@10",
    "ndcg@10": "nDCG@10",
    "mrr": "MRR",
    "latency_ms": "latency ms (mean)",
}


def model_label(name: str) -> str:
    """A model's name as printed: a hub name as is, a local folder by its last two parts."""
    path = Path(name)
    return "/".join(path.parts[-2:]) if path.is_absolute() or os.path.isdir(name) else name


def format_table(report: EvalReport, *, markdown: bool = False) -> str:
    """One block per metric: rows are all queries then each type, columns the modes side by side."""
    modes = list(report.modes)
    heads = [m + "*" if m in report.not_reranked or m in report.fell_back else m for m in modes]
    rows = [("all", report.queries)] + list(report.counts_by_type.items())
    first = max(len(label) for label in [*_LABELS.values(), *(name for name, _ in rows)]) + 2
    widths = [max(9, len(h) + 2) for h in heads]
    lines = [
        (
            f"{report.queries} queries over {report.notes} notes; model {model_label(report.model)}; "
            f"top {report.k} per query"
        )
    ]
    for key in SUMMARY_KEYS:
        lines.append("")
        cells = []
        for name, n in rows:
            values = []
            for mode in modes:
                part = report.modes[mode]["all"] if name == "all" else report.modes[mode]["by_type"][name]
                values.append(f"{part[key]:.1f}" if key == "latency_ms" else f"{part[key]:.3f}")
            cells.append((name, str(n), values))
        if markdown:
            lines.append("| " + " | ".join([_LABELS[key], "n", *heads]) + " |")
            lines.append("|---|" + "--:|" * (1 + len(modes)))
            lines.extend("| " + " | ".join([name, n, *values]) + " |" for name, n, values in cells)
        else:
            lines.append(f"{_LABELS[key]:<{first}}{'n':>5}" + "".join(f"{h:>{w}}" for h, w in zip(heads, widths)))
            lines.extend(
                f"{name:<{first}}{n:>5}" + "".join(f"{v:>{w}}" for v, w in zip(values, widths))
                for name, n, values in cells
            )
    if report.not_reranked:
        lines.append("")
        lines.append(
            "* not reranked: "
            + "; ".join(
                f"{m} fell back to the order before reranking for {n} of {report.queries} queries"
                for m, n in report.not_reranked.items()
            )
        )
    if report.fell_back:
        if not report.not_reranked:
            lines.append("")
        lines.append(
            "* fell back: "
            + "; ".join(
                f"{m} without its {stage} stage for {n} of {report.queries} queries"
                for m, stages in report.fell_back.items()
                for stage, n in stages.items()
            )
            + " (see the warnings)"
        )
    return "\n".join(lines)
