"""Issue 13: can a query tell, at run time, whether it describes one note or asks through a link?

For every query of the labelled sets: the default's lanes (their first notes and scores), the
query-time signals that might tell the two sides apart, and the nDCG@10 of the default, of
dense alone and of a few per-query alternatives (the graph's link lanes off, the dense lane's
first note put first). No label is read to compute a signal; the labels only score the rows.

    python bench/choice_signals.py --sets mini,13th-age,vok,13th-age-blind,vok-blind --out DIR

writes DIR/choice_signals.json (one record per query) and prints, for each signal, how the
queries the default loses against dense alone and those it wins look under it.
"""

from __future__ import annotations

import argparse
import json
import sys
from dataclasses import replace
from pathlib import Path

HERE = Path(__file__).resolve().parent
sys.path.insert(0, str(HERE))

from quality_ablation import SETS, CachedEmbedder, default_copies, settings_for, vault_to_index  # noqa: E402

LINK_LANES = ("anchor_lex", "anchor_dense", "bridge")
ALTERNATIVES = {
    "no_link_lanes": {"weights": {"anchor_lex": 0.0, "anchor_dense": 0.0, "bridge": 0.0}},
    "no_ppr": {"weights": {"ppr": 0.0}},
    "no_link_lanes_no_ppr": {"weights": {"anchor_lex": 0.0, "anchor_dense": 0.0, "bridge": 0.0, "ppr": 0.0}},
}


def first(lanes: dict, name: str, i: int = 0):
    ranking = lanes.get(name) or []
    return ranking[i] if len(ranking) > i else None


def signals(recaller, query: str, result) -> dict:
    """What the query and its lanes say, with no label."""
    from brain.recall import anchors, query_form

    lanes = result.lanes
    d0, d1 = first(lanes, "dense"), first(lanes, "dense", 1)
    l0 = first(lanes, "lexical")
    out: dict = {
        "words": len(query.split()),
        "question": query_form.is_question(query),
        "asks": query_form.asks(query),
        "compares": query_form.compares(query),
        "dense_first": d0.path if d0 else None,
        "lexical_first": l0.path if l0 else None,
        "dense_lexical_agree": bool(d0 and l0 and d0.path == l0.path),
        "dense_margin": (d0.score - d1.score) / d0.score if d0 and d1 and d0.score else None,
        "names_first": (first(lanes, "names").path if first(lanes, "names") else None),
        "fused_first": result.results[0].path if result.results else None,
    }
    linked = anchors.linked_from_chunks(recaller.store, [d0.chunk_id]).get(d0.chunk_id, []) if d0 else []
    for lane in LINK_LANES:
        c = first(lanes, lane)
        out[f"{lane}_first"] = c.path if c else None
        # the dense lane's first passage links to this lane's first note: the answer mentions it
        out[f"dense_passage_links_{lane}"] = bool(c and c.note_id in linked)
        out[f"{lane}_is_dense_first"] = bool(c and d0 and c.path == d0.path)
    out["dense_passage_links"] = len(linked)
    # the link lanes' first note, where one of them puts a note first that is not the dense lane's
    out["link_first_other"] = any(out[f"{lane}_first"] and not out[f"{lane}_is_dense_first"] for lane in LINK_LANES)
    out["dense_first_fused_rank"] = next((i for i, c in enumerate(result.results, 1) if d0 and c.path == d0.path), None)
    return out


SIGNALS = {
    "the dense lane's first passage links to a link lane's first note": lambda r: any(
        r[f"dense_passage_links_{lane}"] for lane in LINK_LANES
    ),
    "the query asks (a question mark or word)": lambda r: r["asks"],
    "the query compares": lambda r: r["compares"],
    "the dense and BM25 lanes' first notes agree": lambda r: r["dense_lexical_agree"],
    "the dense lane's first note leads its second by 5%": lambda r: (r["dense_margin"] or 0) >= 0.05,
    "the names lane names a note": lambda r: r["names_first"] is not None,
    "12 words or more": lambda r: r["words"] >= 12,
    "links, agree, asks nothing (described_first)": lambda r: (
        any(r[f"dense_passage_links_{lane}"] for lane in LINK_LANES) and r["dense_lexical_agree"] and not r["asks"]
    ),
}


def summary(records: list[dict]) -> str:
    """Each signal's share of the queries the default loses against dense alone, and of those it wins."""
    loss = [r for r in records if r["ndcg"]["default"] < r["ndcg"]["vector"] - 1e-9]
    win = [r for r in records if r["ndcg"]["default"] > r["ndcg"]["vector"] + 1e-9]
    lines = [f"| signal | below dense ({len(loss)}) | above dense ({len(win)}) |", "|---|--:|--:|"]
    for name, test in SIGNALS.items():
        a, b = sum(bool(test(r)) for r in loss), sum(bool(test(r)) for r in win)
        lines.append(f"| {name} | {a} ({a / max(1, len(loss)):.2f}) | {b} ({b / max(1, len(win)):.2f}) |")
    return "\n".join(lines)


def main() -> None:
    from brain.evaluation.metrics import query_metrics
    from brain.evaluation.queries import load_queries
    from brain.recall.opening import open_recaller

    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--sets", default="mini,13th-age,vok,13th-age-blind,vok-blind")
    parser.add_argument("--out", type=Path, default=HERE / "out")
    parser.add_argument("--summary", type=Path, help="only print the table of an earlier run's choice_signals.json")
    args = parser.parse_args()
    if args.summary:
        print(summary(json.loads(args.summary.read_text())))
        return
    records = []
    for name in args.sets.split(","):
        queries_file, vault = SETS[name]
        vault = vault_to_index(vault, default_copies())
        queries = load_queries(queries_file, vault)
        recaller = open_recaller(vault, build=True, progress=False, rerank_model=None)
        recaller.embedder = CachedEmbedder(recaller.embedder)
        base = settings_for({})
        wide = replace(base, k=max(base.k, base.pool))
        try:
            for q in queries:
                result = recaller.ask(q.query, "hybrid+ppr", wide)
                ranked = [c.path for c in result.results]
                rec = {"set": name, "id": q.id, "type": q.type, "query": q.query}
                rec |= signals(recaller, q.query, result)
                ndcg = {"default": query_metrics(ranked[:10], q.relevant)["ndcg@10"]}
                vec = [c.path for c in recaller.ask(q.query, "vector", wide).results]
                ndcg["vector"] = query_metrics(vec[:10], q.relevant)["ndcg@10"]
                d0 = rec["dense_first"]
                moved = ([d0] + [p for p in ranked if p != d0]) if d0 else ranked
                ndcg["dense_first_first"] = query_metrics(moved[:10], q.relevant)["ndcg@10"]
                for alt, overrides in ALTERNATIVES.items():
                    alt_ranked = [
                        c.path
                        for c in recaller.ask(q.query, "hybrid+ppr", replace(settings_for(overrides), k=wide.k)).results
                    ]
                    ndcg[alt] = query_metrics(alt_ranked[:10], q.relevant)["ndcg@10"]
                rec["ndcg"] = ndcg
                rec["relevant_is_dense_first"] = d0 in q.relevant
                records.append(rec)
        finally:
            recaller.close()
        print(f"{name}: {len(queries)} queries", file=sys.stderr, flush=True)
    args.out.mkdir(parents=True, exist_ok=True)
    (args.out / "choice_signals.json").write_text(json.dumps(records, indent=1))
    print(summary(records))


if __name__ == "__main__":
    main()
