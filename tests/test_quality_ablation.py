"""bench/quality_ablation.py's report: which queries a row moves against the reference (no index, no model)."""

from __future__ import annotations

from bench_helpers import bench_script


def _script():
    return bench_script("quality_ablation")


def _row(per_query: list[tuple[str, str, float, float]]) -> dict:
    queries: list[dict] = [{"id": i, "type": t, "recall@10": r, "ndcg@10": n} for i, t, r, n in per_query]
    mean = {m: sum(q[m] for q in queries) / len(queries) for m in ("recall@10", "ndcg@10")}
    by_type = {t: mean for _, t, _, _ in per_query}
    return {"all": mean, "by_type": by_type, "per_query": queries, "latency_ms": {"p50": 1.0, "p95": 2.0}}


def _set(name: str, new: list, probe: list) -> dict:
    rows = {"new": _row(new), "probe": _row(probe)}
    types = sorted({t for _, t, _, _ in new})
    return {"set": name, "queries": len(new), "types": types, "counts": {t: 1 for t in types}, "rows": rows}


DATA = [
    _set(
        "mini",
        [("q1", "bridge", 1.0, 0.5), ("q2", "theme", 1.0, 1.0), ("q3", "entity", 0.0, 0.0)],
        [("q1", "bridge", 1.0, 0.631), ("q2", "theme", 1.0, 1.0), ("q3", "entity", 1.0, 0.3)],
    ),
    _set(
        "srd",
        [("s1", "paraphrase", 1.0, 1.0), ("s2", "bridge", 0.5, 0.4)],
        [("s1", "paraphrase", 0.0, 0.0), ("s2", "bridge", 0.5, 0.4)],
    ),
]


def test_moved_lists_the_queries_a_row_changes_most_lost_first_per_set():
    qa = _script()
    changes = qa.moved(DATA, "probe", "new")
    assert [(name, qid) for name, qid, *_ in changes] == [("mini", "q1"), ("mini", "q3"), ("srd", "s1")]
    _, _, qtype, before, after = changes[2]
    assert (qtype, before["ndcg@10"], after["ndcg@10"]) == ("paraphrase", 1.0, 0.0)
    assert qa.moved(DATA, "new", "new") == []


def test_the_report_counts_queries_up_and_down_and_names_them_in_the_file_only():
    qa = _script()
    text = qa.markdown(DATA, "new", "t")
    summary = [line for line in text.splitlines() if line.startswith("| probe |")][-1]  # the change table
    assert "(2↑ 0↓)" in summary and "(0↑ 1↓)" in summary
    assert "- srd s1 (paraphrase): recall@10 1.00 → 0.00, nDCG@10 1.000 → 0.000" in text
    assert "- mini q2" not in text  # unchanged queries are not listed
    short = qa.markdown(DATA, "new", "t", queries=False)
    assert "(2↑ 0↓)" in short and "- srd s1" not in short
