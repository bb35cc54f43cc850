"""Retrieval metrics at note level, binary relevance.

    recall@k  = |relevant ∩ top k| / |relevant|
    nDCG@k    = DCG@k / IDCG@k,  DCG@k = Σ_{i≤k, hit} 1/log2(i+1),  IDCG@k over min(|relevant|, k) hits
    RR        = 1/rank of the first relevant note in the returned list (0 when none); MRR is its mean

A ranked list is read once: a path that repeats counts at its first rank only.
"""

from __future__ import annotations

import math
from collections.abc import Iterable, Mapping, Sequence

RECALL_CUTS = (5, 10)
NDCG_CUT = 10
METRIC_KEYS = ("recall@5", "recall@10", "ndcg@10", "mrr")


def _distinct(ranked: Iterable[str]) -> list[str]:
    seen: set[str] = set()
    out = []
    for path in ranked:
        if path not in seen:
            seen.add(path)
            out.append(path)
    return out


def recall_at_k(ranked: Sequence[str], relevant: Iterable[str], k: int) -> float:
    relevant = set(relevant)
    if not relevant:
        raise ValueError("recall is undefined without relevant notes")
    return len(relevant.intersection(_distinct(ranked)[:k])) / len(relevant)


def ndcg_at_k(ranked: Sequence[str], relevant: Iterable[str], k: int) -> float:
    relevant = set(relevant)
    if not relevant:
        raise ValueError("nDCG is undefined without relevant notes")
    dcg = sum(1.0 / math.log2(rank + 1) for rank, path in enumerate(_distinct(ranked)[:k], start=1) if path in relevant)
    ideal = sum(1.0 / math.log2(rank + 1) for rank in range(1, min(len(relevant), k) + 1))
    return dcg / ideal


def reciprocal_rank(ranked: Sequence[str], relevant: Iterable[str]) -> float:
    relevant = set(relevant)
    for rank, path in enumerate(_distinct(ranked), start=1):
        if path in relevant:
            return 1.0 / rank
    return 0.0


def query_metrics(ranked: Sequence[str], relevant: Iterable[str]) -> dict[str, float]:
    """recall@5, recall@10, ndcg@10 and reciprocal rank for one query."""
    relevant = set(relevant)
    out = {f"recall@{k}": recall_at_k(ranked, relevant, k) for k in RECALL_CUTS}
    out[f"ndcg@{NDCG_CUT}"] = ndcg_at_k(ranked, relevant, NDCG_CUT)
    out["mrr"] = reciprocal_rank(ranked, relevant)
    return out


def mean_rows(rows: Sequence[Mapping[str, float]], keys: Sequence[str], digits: int = 4) -> dict[str, float]:
    """The mean of each key over rows (0.0 for no rows), rounded."""
    if not rows:
        return {key: 0.0 for key in keys}
    return {key: round(sum(float(r[key]) for r in rows) / len(rows), digits) for key in keys}


def aggregate(rows: Sequence[tuple[str, Mapping[str, float]]], keys: Sequence[str], digits: int = 4) -> dict[str, dict]:
    """``{"all": means, "by_type": {type: means}}`` from (query type, per-query values) pairs.

    Types appear in the order they first occur.
    """
    by_type: dict[str, list[Mapping[str, float]]] = {}
    for qtype, values in rows:
        by_type.setdefault(qtype, []).append(values)
    return {
        "all": mean_rows([values for _, values in rows], keys, digits),
        "by_type": {qtype: mean_rows(values, keys, digits) for qtype, values in by_type.items()},
    }
