"""bench/quality_ablation.py: which queries a row moves, and what a reranker over its pool could reach (fake embedder, toy vault)."""

from __future__ import annotations

import json
import math
from pathlib import Path

import pytest
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


def test_pool_metrics_say_what_a_reranker_over_the_top_could_reach():
    qa = _script()
    ranked = ["a", "x", "a", "y", "b", "z"]  # a repeat counts once
    got = qa.pool_metrics(ranked, {"a", "b", "c"}, pool=4)
    assert got["pool_recall"] == 2 / 3  # a and b are in the first four distinct notes
    ideal = 1 + 1 / math.log2(3) + 1 / math.log2(4)
    assert got["pool_ceiling"] == (1 + 1 / math.log2(3)) / ideal  # a and b ordered first
    assert qa.pool_metrics(ranked, {"c"}, pool=4) == {"pool_recall": 0.0, "pool_ceiling": 0.0}


def test_a_row_asked_for_the_rerankers_pool_scores_its_top_10_as_brain_ask_does(toy_vault, tmp_path, monkeypatch):
    """run_set on a real (toy) vault with the fake embedder: the top-10 figures are those of the
    same ask cut at 10, and the pool's recall is never below recall@10."""
    from brain.evaluation.metrics import query_metrics
    from brain.evaluation.queries import load_queries
    from brain.recall.opening import open_recaller

    qa = _script()
    queries = [
        {
            "id": "q1",
            "query": "how do hooks run in Claude Code",
            "type": "entity",
            "relevant": ["AI/Claude Code hooks.md"],
        },
        {"id": "q2", "query": "sourdough starter", "type": "theme", "relevant": ["Cooking/Sourdough bread.md"]},
        {
            "id": "q3",
            "query": "WAL mode and the ledger",
            "type": "bridge",
            "relevant": ["Engineering/SQLite ledger.md"],
        },
    ]
    file = tmp_path / "queries.jsonl"
    file.write_text("".join(json.dumps(q) + "\n" for q in queries), encoding="utf-8")
    monkeypatch.setitem(qa.SETS, "toy", (file, toy_vault))
    out = qa.run_set("toy", {"new": ("hybrid+ppr", {})})
    row = out["rows"]["new"]
    assert row["pool"] == 30
    recaller = open_recaller(toy_vault, rerank_model=None)
    try:
        for q, got in zip(load_queries(file, toy_vault), row["per_query"]):
            top10 = [c.path for c in recaller.ask(q.query, "hybrid+ppr", qa.settings_for({})).results]
            assert len(top10) == 10
            expected = query_metrics(top10, q.relevant)
            assert (got["recall@10"], got["ndcg@10"]) == (expected["recall@10"], expected["ndcg@10"])
            assert got["pool_recall"] >= got["recall@10"] and got["pool_ceiling"] >= got["ndcg@10"]
    finally:
        recaller.close()
    assert set(row["all"]) == {"recall@10", "ndcg@10", "pool_recall", "pool_ceiling"}


@pytest.mark.parametrize(
    ("args", "says"),
    [
        (["--sets", "mini,nope"], "no set named 'nope': the sets are mini, 13th-age"),
        (["--rows", "new,newest"], "no row named 'newest': the rows are vector, old, new"),
        (["--row", "no colon here"], "--row 'no colon here': write it as 'name: mode {json overrides}'"),
        (["--row", "x: vectr"], "--row 'x: vectr': unknown mode 'vectr'"),
        (["--row", "x: vector {bad"], "--row 'x: vector {bad': Expecting property name"),
        (["--row", "x: vector [1]"], "the overrides are a JSON object of RecallSettings fields"),
        (["--row", 'x: vector {"nofield": 1}'], "RecallSettings has no field 'nofield'"),
    ],
)
def test_bad_arguments_are_one_line_before_any_index_is_opened(args, says, monkeypatch):
    qa = _script()
    monkeypatch.setenv("HF_HUB_OFFLINE", "1")  # main() sets it by default: keep the change to this test
    monkeypatch.setattr(qa, "run_set", lambda *a: pytest.fail("a set was run"))
    with pytest.raises(SystemExit) as exited:
        qa.main(["--rows", "new", *args] if "--rows" not in args else args)
    assert says in str(exited.value.code)
    assert "\n" not in str(exited.value.code)


def test_the_sets_in_the_repository_load_against_their_vaults_and_bilingual_is_asked_for_by_name():
    """Every set whose vault ships in the repository (mini, bilingual) parses, and each relevant
    path is a note of its vault; the bilingual set is one of --sets but not of the default."""
    from brain.evaluation.queries import load_queries

    qa = _script()
    for name in ("mini", "bilingual"):
        queries_file, vault = qa.SETS[name]
        queries = load_queries(queries_file, vault)
        assert len(queries) > 50 and all(q.relevant for q in queries), name
    bilingual = load_queries(*qa.SETS["bilingual"])
    assert any(any("\u0400" <= ch <= "\u04ff" for ch in q.query) for q in bilingual)  # Russian questions too
    assert "bilingual" not in qa.DEFAULT_SETS.split(",") and set(qa.DEFAULT_SETS.split(",")) < set(qa.SETS)


def _snapshot(where, notes: dict[str, str]):
    """A snapshot of the repository as `git archive | tar -x` makes one: the script and the mini set."""
    import importlib.util
    import shutil

    from bench_helpers import BENCH

    bench = where / "bench"
    (bench / "minivault" / "vault").mkdir(parents=True)
    shutil.copy(BENCH / "quality_ablation.py", bench)
    for rel, text in notes.items():
        (bench / "minivault" / "vault" / rel).write_text(text, encoding="utf-8")
    queries = [{"id": "q1", "query": "harbour crane", "type": "entity", "relevant": ["Harbour.md"]}]
    (bench / "minivault" / "queries.jsonl").write_text(json.dumps(queries[0]) + "\n", encoding="utf-8")
    spec = importlib.util.spec_from_file_location(f"qa_{where.name}", bench / "quality_ablation.py")
    assert spec and spec.loader
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module


NOTES = {"Harbour.md": "# Harbour\n\nThe harbour crane lifts [[Ferry]].\n", "Ferry.md": "# Ferry\n\nThe ferry.\n"}


def test_the_mini_vault_is_indexed_once_for_every_snapshot_of_the_same_bytes(tmp_path, brain_home):
    """The mini vault lives in the snapshot, and brain names an index folder after its vault's
    absolute path: each snapshot indexed it from scratch (525 s). Its copy's path is the same from
    two snapshots; so is its index, and the figures are those of the index made from scratch."""
    copies = tmp_path / "copies"
    first = _snapshot(tmp_path / "a", NOTES).run_set("mini", {"vector": ("vector", {})}, copies)
    second = _snapshot(tmp_path / "b", NOTES).run_set("mini", {"vector": ("vector", {})}, copies)
    assert first["vault"] == second["vault"] and first["vault"].startswith(str(copies))
    assert len([d for d in (brain_home / "vaults").iterdir() if d.is_dir()]) == 1  # one index, made once
    assert first["rows"]["vector"]["per_query"] == second["rows"]["vector"]["per_query"]
    assert second["rows"]["vector"]["per_query"][0]["recall@10"] == 1.0

    changed = _snapshot(tmp_path / "c", {**NOTES, "Ferry.md": "# Ferry\n\nThe ferry, changed.\n"})
    third = changed.run_set("mini", {"vector": ("vector", {})}, copies)
    assert third["vault"] != first["vault"]  # other bytes: another copy, another index
    assert (Path(third["vault"]) / "Ferry.md").read_text(encoding="utf-8").endswith("changed.\n")
    assert (Path(first["vault"]) / "Ferry.md").read_text(encoding="utf-8") == NOTES["Ferry.md"]  # untouched


def test_a_copy_whose_files_were_changed_is_never_indexed(tmp_path):
    copies = tmp_path / "copies"
    qa = _snapshot(tmp_path / "a", NOTES)
    copy = qa.vault_to_index(qa.SETS["mini"][1], copies)
    assert copy == qa.vault_to_index(qa.SETS["mini"][1], copies)
    (copy / "Ferry.md").write_text("# Ferry\n\nedited by hand\n", encoding="utf-8")
    with pytest.raises(SystemExit) as exited:
        qa.vault_to_index(qa.SETS["mini"][1], copies)
    assert "no longer holds the files of" in str(exited.value.code) and "delete it" in str(exited.value.code)
    assert qa.vault_to_index(qa.SETS["mini"][1], None) == qa.SETS["mini"][1]  # --vault-copies none


def test_an_index_a_newer_brain_upgraded_is_never_measured(tmp_path, brain_home):
    """A BRAIN_HOME copied from a run of a newer branch: brain reads its index as it is (its
    migrations may have read notes again by rules this branch lacks); the bench refuses it."""
    import sqlite3
    import time

    from brain import config
    from brain.index.indexer import index_vault
    from brain.index.schema import INDEX_MIGRATIONS

    qa = _snapshot(tmp_path / "a", NOTES)
    vault = qa.SETS["mini"][1]  # indexed where it is (--vault-copies none): the same for a copy
    index_vault(vault, progress=False)
    database = config.index_dir(vault) / "index.db"
    conn = sqlite3.connect(database, isolation_level=None)
    try:
        conn.execute(
            "INSERT INTO _migrations (db, name, applied_at) VALUES (?, ?, ?)",
            (INDEX_MIGRATIONS.name, "m999_from_a_newer_brain", time.time()),
        )
    finally:
        conn.close()
    with pytest.raises(SystemExit) as exited:
        qa.run_set("mini", {"vector": ("vector", {})})
    said = str(exited.value.code)
    assert "a newer brain upgraded it: m999_from_a_newer_brain" in said and "fresh BRAIN_HOME" in said, said
    assert "\n" not in said
