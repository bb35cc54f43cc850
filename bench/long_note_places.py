"""Issue 13: the long notes in the default's top 10s, and what taking them out could be worth.

For every query of the sets: the default's fused top 30 (`hybrid+ppr`, as `brain ask` runs it),
each note's chunk count, and each lane's share of its fused score (its RRF vote plus its top-rank
bonus). Prints, per set, how many top-10 places notes of over ``--chunks`` chunks take and how
many of those are relevant; for those that are not, in queries below ``--miss`` nDCG@10, which
lane gives them most; and two bounds on any long-note remedy: the nDCG@10 with every long note
the labels do not name taken out of the top 30 (an oracle: no rule does better), and with every
long note taken out. The labels only score and sort the rows; nothing here ranks by them.

    python bench/long_note_places.py --sets 13th-age,vok --chunks 16
"""

from __future__ import annotations

import argparse
import math
import sys
from collections import Counter, defaultdict
from dataclasses import replace
from pathlib import Path

HERE = Path(__file__).resolve().parent
sys.path.insert(0, str(HERE))

from quality_ablation import SETS, CachedEmbedder, default_copies, settings_for, vault_to_index  # noqa: E402


def ndcg10(ranked: list[str], relevant: set[str]) -> float:
    dcg = sum(1 / math.log2(i + 2) for i, path in enumerate(ranked[:10]) if path in relevant)
    ideal = sum(1 / math.log2(i + 2) for i in range(min(len(relevant), 10)))
    return dcg / ideal if ideal else 0.0


def lane_shares(result, query: str, settings) -> dict[int, dict[str, float]]:
    """Each note's fused score by lane (RRF vote + top-rank bonus), as the pipeline sums them."""
    from brain.recall import bridge, fusion, query_form

    lane_k = dict(settings.lane_rrf_k)
    if settings.note_dense_rrf_k > 0 and query_form.seeks_note(query):
        lane_k["dense"] = settings.note_dense_rrf_k
    bonus_weights = {lane: w * settings.bonus_scale.get(lane, 1.0) for lane, w in settings.weights.items()}
    out: dict[int, dict[str, float]] = defaultdict(dict)
    for lane, found in result.lanes.items():
        ranking = [c.note_id for c in found]
        votes = fusion.rrf({lane: ranking}, settings.rrf_k, settings.weights, lane_k)
        sure = bridge.sure_first(found, settings.bridge_margin, query) if lane == "bridge" else ranking
        scores = None if lane == "bridge" else {lane: [c.score for c in found]}
        bonus = fusion.rank_bonus({lane: sure}, settings.top_bonus, bonus_weights, None, scores, settings.bonus_margin)
        for note_id in set(votes) | set(bonus):
            out[note_id][lane] = votes.get(note_id, 0.0) + bonus.get(note_id, 0.0)
    return out


def run_set(name: str, chunks: int, miss: float) -> dict:
    from brain.evaluation.queries import load_queries
    from brain.recall.opening import open_recaller

    queries_file, vault = SETS[name]
    vault = vault_to_index(vault, default_copies())
    queries = load_queries(queries_file, vault)
    recaller = open_recaller(vault, build=True, progress=False, rerank_model=None)
    recaller.embedder = CachedEmbedder(recaller.embedder)
    settings = replace(settings_for({}), k=30)
    places = relevant_places = miss_places = 0
    most: Counter[str] = Counter()
    share: Counter[str] = Counter()
    gain = {"oracle": 0.0, "none": 0.0}
    try:
        for q in queries:
            result = recaller.ask(q.query, "hybrid+ppr", settings)
            sizes = recaller.store.note_chunk_counts([c.note_id for c in result.results])
            relevant = set(q.relevant)
            ranked = [c.path for c in result.results]
            base = ndcg10(ranked, relevant)
            long = {c.path for c in result.results if sizes.get(c.note_id, 0) > chunks}
            gain["oracle"] += ndcg10([p for p in ranked if p not in long or p in relevant], relevant) - base
            gain["none"] += ndcg10([p for p in ranked if p not in long], relevant) - base
            shares = lane_shares(result, q.query, settings)
            for c in result.results[:10]:
                if c.path not in long:
                    continue
                places += 1
                relevant_places += c.path in relevant
                if c.path in relevant or base >= miss:
                    continue
                miss_places += 1
                lanes = shares.get(c.note_id, {})
                total = sum(lanes.values()) or 1.0
                if lanes:
                    most[max(lanes, key=lambda lane: lanes[lane])] += 1
                for lane, value in lanes.items():
                    share[lane] += value / total
    finally:
        recaller.close()
    n = len(queries)
    return {
        "queries": n,
        "places": places,
        "relevant": relevant_places,
        "miss_places": miss_places,
        "most": most.most_common(),
        "share": {lane: value / max(1, miss_places) for lane, value in share.most_common()},
        "oracle": gain["oracle"] / n,
        "none": gain["none"] / n,
    }


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--sets", default="13th-age,vok")
    parser.add_argument("--chunks", type=int, default=16, help="a long note has more chunks than this")
    parser.add_argument("--miss", type=float, default=0.6, help="a query below this nDCG@10 is a miss")
    args = parser.parse_args()
    print(
        f"| set | queries | top-10 places of notes over {args.chunks} chunks | relevant | in misses, not relevant "
        "| lane giving most there | mean share of their fused score | nDCG@10, oracle | nDCG@10, all out |"
    )
    print("|---|--:|--:|--:|--:|---|---|--:|--:|")
    for name in args.sets.split(","):
        r = run_set(name, args.chunks, args.miss)
        most = ", ".join(f"{lane} {count}" for lane, count in r["most"])
        share = ", ".join(f"{lane} {value:.2f}" for lane, value in r["share"].items() if value >= 0.01)
        print(
            f"| {name} | {r['queries']} | {r['places']} | {r['relevant']} | {r['miss_places']} | {most} | {share} "
            f"| {r['oracle']:+.3f} | {r['none']:+.3f} |"
        )


if __name__ == "__main__":
    main()
