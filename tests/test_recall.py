"""Recall: dense, gated graph hop, fallbacks, JSON shape, A/B log. Fake embedder throughout."""

from __future__ import annotations

import json
import sqlite3
import time
from pathlib import Path

import pytest
from click.testing import CliRunner
from conftest import write

from brain import config
from brain.cli import cli
from brain.db import open_db
from brain.errors import ConfigError, EmptyQuery, IndexMismatchError, ModelLoadError, NoIndexError
from brain.index.indexer import index_vault
from brain.recall import graph as graph_stage
from brain.recall.gate import entity_gate
from brain.recall.opening import open_recaller
from brain.recall.types import RecallSettings

QUESTION = "which harbour crane schedule applies during winter storms"
# What `brain ask --json` prints, in order (brain/output.py result_json; the README shows it).
TOP_KEYS = [
    "query",
    "mode",
    "gate",
    "results",
    "as_of",
    "valid_at",
    "graph",
    "reranked",
    "fallbacks",
    "stale_notes",
    "timings_ms",
    "warnings",
]
RESULT_KEYS = [
    "rank",
    "path",
    "title",
    "heading",
    "score",
    "dense_score",
    "rerank_score",
    "snippet",
    "via",
    "lanes",
    "date",
    "recorded_from",
    "recorded_to",
    "now",
    "path_reused",
]


@pytest.fixture
def bridge_vault(tmp_path):
    """A note matching the question's words links to the note holding the answer.

    The answer note shares no word with the question, so the (lexical) fake embedder ranks
    it low; only the hop along [[Tide tables]] can bring it in.
    """
    root = tmp_path / "bridge"
    write(
        root,
        "Harbour operations.md",
        "# Harbour operations\n\nThe harbour crane schedule during winter storms is decided by "
        "the [[Tide tables]] note, not here. Cranes stop when storms come.\n",
    )
    write(
        root,
        "Tide tables.md",
        "# Tide tables\n\nOperators consult the almanac: lifting pauses once gusts exceed "
        "forty knots, resuming after the ebb.\n",
    )
    write(
        root,
        "Crane maintenance.md",
        "# Crane maintenance\n\nCrane gearboxes get oil every winter. Schedule it with the harbour master.\n",
    )
    write(root, "Storm log.md", "# Storm log\n\nWinter storms in the harbour: 2024 had six.\n")
    for i in range(12):
        write(root, f"Filler {i}.md", f"# Filler {i}\n\nA note about apples, pears and plums number {i}.\n")
    write(
        root,
        "Ada Lovelace.md",
        "---\naliases: [Countess of Lovelace]\n---\n# Ada\n\nSee [[Harbour operations]] and [[Storm log]].\n",
    )
    index_vault(root, progress=False)
    return root


def small(k: int = 5) -> RecallSettings:
    return RecallSettings(k=k, depth=3, seeds=3, max_new=10, pool=5)


def test_graph_promotes_linked_note_with_via(bridge_vault, closing):
    recaller = closing(open_recaller(bridge_vault))
    dense = recaller.ask(QUESTION, "vector", small())
    assert "Tide tables.md" not in [c.path for c in dense.results]
    assert dense.results[0].path == "Harbour operations.md"

    graph = recaller.ask(QUESTION, "graph", small())
    paths = [c.path for c in graph.results]
    assert "Tide tables.md" in paths
    promoted = graph.results[paths.index("Tide tables.md")]
    assert promoted.via is not None
    assert promoted.via.from_path == "Harbour operations.md"
    assert promoted.via.direction == "links to"
    assert promoted.via.kind == "wikilink"
    assert graph.graph_used and graph.candidates_added >= 1
    # Dense hits carry no via.
    assert all(c.via is None for c in graph.results if c.path != "Tide tables.md" and "graph" not in c.sources)


def test_a_recaller_and_an_index_store_close_at_the_end_of_a_with_block(bridge_vault):
    # Dropped unclosed, their sqlite3 connections (each refers to itself through its statement
    # cache) hold their files open until a full garbage collection.
    from brain.index.store import IndexStore
    from brain.vault import resolve_vault

    with open_recaller(bridge_vault) as recaller:
        assert recaller.ask(QUESTION, "vector", small()).results
    with pytest.raises(sqlite3.ProgrammingError, match="closed"):
        recaller.store.conn.execute("SELECT 1")
    with pytest.raises(KeyError), IndexStore.open(config.index_dir(resolve_vault(bridge_vault))) as store:
        assert store.note_names()
        raise KeyError("a failure inside the block")
    with pytest.raises(sqlite3.ProgrammingError, match="closed"):
        store.conn.execute("SELECT 1")


def test_backlinks_are_followed(bridge_vault, closing):
    # "Ada Lovelace" links to Storm log; a query matching Storm log reaches Ada via a backlink.
    recaller = closing(open_recaller(bridge_vault))
    result = recaller.ask("storm log six", "graph", RecallSettings(k=10, depth=1, seeds=1, max_new=10))
    via = {c.path: c.via for c in result.results if c.via}
    assert via["Ada Lovelace.md"].direction == "linked from"
    assert via["Ada Lovelace.md"].from_path == "Storm log.md"


def test_name_query_is_gated(bridge_vault, closing):
    recaller = closing(open_recaller(bridge_vault))
    for query in ("Ada Lovelace", "countess of lovelace", "Tide tables"):
        result = recaller.ask(query, "gated", small())
        assert result.gate.entity, query
        assert "title or alias" in result.gate.reason
        assert not result.graph_used and result.candidates_added == 0
        assert all(c.via is None for c in result.results)
    question = recaller.ask(QUESTION, "gated", small())
    assert not question.gate.entity and question.graph_used


def test_a_name_typed_without_its_accents_is_gated_as_the_names_lane_reads_it(tmp_path):
    """The names lane folds accents ("creme brulee" is *Crème brûlée*), the gate did not: the
    query that names a note was a phrase to it, and mode `gated` followed the note's links."""
    root = tmp_path / "kitchen"
    write(root, "Crème brûlée.md", "# Crème brûlée\n\nCustard under burnt sugar. See [[Custard]].\n")
    write(root, "Custard.md", "# Custard\n\nEggs, milk and sugar, stirred over low heat.\n")
    write(root, "Zoë.md", "---\naliases: [Señora Núñez]\n---\n# Zoë\n\nA cook.\n")
    write(root, "Cafe society.md", "# Cafe society\n\nWho met whom, over coffee.\n")
    index_vault(root, progress=False)
    recaller = open_recaller(root)
    try:
        for query, path in [
            ("creme brulee", "Crème brûlée.md"),
            ("zoe", "Zoë.md"),
            ("senora nunez", "Zoë.md"),
            ("café society", "Cafe society.md"),  # and the other way: accents the title has not
        ]:
            result = recaller.ask(query, "gated", small())
            assert result.gate.entity, (query, result.gate.reason)
            assert result.gate.reason == f"the query is the title or alias of [[{path}]]"
            assert not result.graph_used
    finally:
        recaller.close()


@pytest.mark.parametrize(
    "query, entity",
    [
        ("Ada Lovelace", True),
        ("RecallSettings", True),
        ("vault_status", True),
        ("sentence-transformers", True),
        ("faiss", True),
        ("how should agent memory work", False),
        ("what did we decide about the deadline?", False),
        ("compare sqlite and postgres", False),
        ("notes about winter storms and cranes in the harbour", False),
        ("agent memory", False),
        ("как работает память агента", False),
        ("Ёлкин Пётр", True),
        ("Нижний Новгород", True),
        # Russian of the English words that make a phrase no name: "Compare Elasticsearch FTS5"
        # was a request, "Сравни Elasticsearch FTS5" a name of three capitalised words
        ("Сравни Elasticsearch FTS5", False),
        ("Разница Kafka RabbitMQ", False),
        ("Кто Иван", False),
        ("Последнее Решение Kafka", False),
        ("Моё Kafka", False),
        ("Покажи Kafka", False),
    ],
)
def test_entity_gate_shapes(query, entity):
    gate = entity_gate(query, {})
    assert gate.entity is entity, gate.reason
    assert gate.reason


def test_graph_failure_falls_back_to_dense(bridge_vault, monkeypatch, caplog, closing):
    def broken(*args, **kwargs):
        raise sqlite3.OperationalError("links table on fire")

    recaller = closing(open_recaller(bridge_vault))
    dense = recaller.ask(QUESTION, "vector", small())
    monkeypatch.setattr(graph_stage, "expand", broken)
    with caplog.at_level("WARNING", logger="brain"):
        result = recaller.ask(QUESTION, "graph", small())
    assert [c.path for c in result.results] == [c.path for c in dense.results]
    assert result.fallbacks["graph"] is True
    assert any("graph stage failed" in w and "links table on fire" in w for w in result.warnings)
    assert "graph stage failed" in caplog.text
    assert result.mode == "vector"  # what ran: it said graph, every note found by the dense lane
    # A gated run the gate keeps off the graph asked for no hop: nothing fell back, gated it is.
    named = recaller.ask("Ada Lovelace", "gated", small())
    assert named.mode == "gated" and not named.fallbacks["graph"]

    out = CliRunner().invoke(cli, ["ask", "--vault", str(bridge_vault), "--graph", "--json", QUESTION])
    assert out.exit_code == 0, out.output
    data = json.loads(out.stdout)
    assert data["fallbacks"]["graph"] is True and data["mode"] == "vector"
    assert "Traceback" not in out.output


def test_ab_logs_the_modes_that_ran_and_its_report_leaves_out_a_graph_that_fell_back(
    bridge_vault, monkeypatch, closing
):
    """A graph whose hop failed was logged as graph and counted in the weekly figures as a graph
    that changed nothing (the dense result): "does the graph earn its keep" read a failure as no."""

    def broken(*args, **kwargs):
        raise sqlite3.OperationalError("links table on fire")

    args = ["ask", "--vault", str(bridge_vault), "--ab", "--ab-modes", "vector,graph", "--depth", "3", "--seeds", "3"]
    args += ["-k", "5", QUESTION]
    assert CliRunner().invoke(cli, args).exit_code == 0  # the graph ran: one row that counts
    monkeypatch.setattr(graph_stage, "expand", broken)
    out = CliRunner().invoke(cli, args)
    assert out.exit_code == 0, out.output
    rows = (
        closing(open_db())
        .execute("SELECT mode_a, mode_b, new_in_top_k, warnings FROM ab_recall ORDER BY id")
        .fetchall()
    )
    assert [(r["mode_a"], r["mode_b"]) for r in rows] == [("vector", "graph"), ("vector", "vector")]
    assert "graph stage failed" in rows[1]["warnings"]
    report = json.loads(CliRunner().invoke(cli, ["ab", "report", "--json"]).stdout)
    assert report["all"]["queries"] == 1 and report["all"]["changed_top_k"] == 1 and report["not_compared"] == 1
    text = CliRunner().invoke(cli, ["ab", "report"]).stdout
    assert "queries: 1 " in text and "left out: 1 where B ran as A" in text


@pytest.mark.parametrize("mode, stage", [("graph", "expand"), ("ppr", "first_via")])
def test_a_bug_in_the_graph_stages_is_raised_not_hidden(bridge_vault, monkeypatch, mode, stage, closing):
    """Only the failures a graph stage expects fall back; a bug in our own code fails loudly."""

    def buggy(*args, **kwargs):
        raise TypeError("a bug in brain, not a missing graph")

    recaller = closing(open_recaller(bridge_vault))
    monkeypatch.setattr(graph_stage, stage, buggy)
    monkeypatch.setattr(
        "brain.recall.ppr.LinkGraph.top", lambda self, scores, depth: [(i, 1.0) for i in self.note_ids[:depth].tolist()]
    )
    with pytest.raises(TypeError, match="a bug in brain"):
        recaller.ask(QUESTION, mode, small())


def test_pagerank_failure_falls_back_in_every_mode_that_uses_it(bridge_vault, monkeypatch, closing):
    def broken(*args, **kwargs):
        raise MemoryError("no room for the graph")

    recaller = closing(open_recaller(bridge_vault))
    monkeypatch.setattr("brain.recall.ppr.LinkGraph.personalized_pagerank", broken)
    hybrid = recaller.ask(QUESTION, "hybrid", small())
    # The anchor lanes read links from the index, not the graph: they fuse on; weighed out here
    # so that what is left is hybrid's own result.
    no_anchors = small()
    no_anchors.weights.update(anchor_dense=0.0, anchor_lex=0.0)
    first, second = recaller.compare(QUESTION, ["hybrid+ppr", "hybrid+ppr"], no_anchors)
    for result in (first, second):  # the second mode reuses the failed lane and says so too
        assert result.fallbacks["graph"] is True
        assert any("PageRank stage failed" in w for w in result.warnings)
        assert [c.path for c in result.results] == [c.path for c in hybrid.results]
        assert result.mode == "hybrid"  # what ran: it said hybrid+ppr, no graph in it
    only_ppr = recaller.ask(QUESTION, "ppr", no_anchors)
    assert only_ppr.mode == "vector" and only_ppr.fallbacks["graph"]  # the dense lane alone was fused
    # The anchor lanes fused, the links did their part: still a graph run, PageRank said missing.
    anchored = recaller.ask(QUESTION, "hybrid+ppr", small())
    assert anchored.mode == "hybrid+ppr" and anchored.fallbacks["graph"] and "anchor_dense" in anchored.lanes


def test_a_bm25_lane_that_fell_back_is_not_in_the_mode_when_no_lexical_lane_ran(bridge_vault, monkeypatch):
    """BM25 over a damaged index fused nothing, yet the result said hybrid (hybrid+ppr):
    with the names, dates and folders lanes weighed out, nothing lexical ran."""

    def damaged(*args, **kwargs):
        raise sqlite3.DatabaseError("database disk image is malformed")

    recaller = open_recaller(bridge_vault)
    monkeypatch.setattr(recaller.store, "fts_search", damaged)
    no_words = small()
    no_words.weights.update(names=0.0, dates=0.0, folders=0.0)
    hybrid, both = recaller.compare(QUESTION, ["hybrid", "hybrid+ppr"], no_words)
    assert hybrid.fallbacks["lexical"] and both.fallbacks["lexical"]
    assert (hybrid.mode, both.mode) == ("vector", "ppr")
    # The names lane searched (it reads no BM25 index): lexical evidence, hybrid still, BM25 said missing.
    named = recaller.ask(QUESTION, "hybrid", small())
    assert named.mode == "hybrid" and named.fallbacks["lexical"] and "names" in named.lanes
    recaller.close()


def test_json_schema(bridge_vault):
    out = CliRunner().invoke(
        cli, ["ask", "--vault", str(bridge_vault), "--graph", "--depth", "3", "--seeds", "3", "--json", QUESTION]
    )
    assert out.exit_code == 0, out.output
    data = json.loads(out.stdout)
    assert data["query"] == QUESTION
    assert data["mode"] == "gated"
    assert set(data["gate"]) == {"entity", "reason"} and data["gate"]["entity"] is False
    assert isinstance(data["warnings"], list)
    assert 1 <= len(data["results"]) <= 12
    assert list(data) == TOP_KEYS
    for rank, item in enumerate(data["results"], 1):
        assert list(item) == RESULT_KEYS
        assert item["rank"] == rank
        assert isinstance(item["score"], float)
    by_path = {r["path"]: r for r in data["results"]}
    assert by_path["Tide tables.md"]["via"]["path"] == "Harbour operations.md"
    assert list(by_path["Tide tables.md"]["via"]) == ["path", "title", "direction", "kind"]
    assert by_path["Harbour operations.md"]["via"] is None
    assert by_path["Harbour operations.md"]["snippet"].startswith("The harbour crane schedule")
    assert data["as_of"] is data["valid_at"] is None and by_path["Tide tables.md"]["recorded_to"] is None


def test_json_names_the_lanes_that_found_each_note(bridge_vault):
    """--json said a note's score, not which lanes found it (what --ab's columns and
    `brain eval --explain` show): an agent could not tell BM25's note from PageRank's."""
    ask = ["ask", "--vault", str(bridge_vault), "--depth", "3", "--seeds", "3", "--json"]
    out = CliRunner().invoke(cli, [*ask, "--graph", QUESTION])
    by_path = {r["path"]: r for r in json.loads(out.stdout)["results"]}
    assert by_path["Harbour operations.md"]["lanes"] == ["dense"]
    assert by_path["Tide tables.md"]["lanes"] == ["graph"]  # the hop's, via Harbour operations
    out = CliRunner().invoke(cli, [*ask, "--mode", "hybrid+ppr", QUESTION])
    lanes = {r["path"]: r["lanes"] for r in json.loads(out.stdout)["results"]}
    assert lanes["Harbour operations.md"][:2] == ["dense", "lexical"], lanes
    assert all(found and len(set(found)) == len(found) for found in lanes.values()), lanes
    assert any(set(found) <= {"ppr", "anchor_dense", "anchor_lex", "bridge"} for found in lanes.values()), lanes


@pytest.mark.parametrize("how", [["--mode", "hybrid+ppr"], ["--graph"], ["--ab"], ["--json"]])
def test_seeds_0_with_a_mode_of_the_graph_is_one_line_saying_why(bridge_vault, how):
    """--seeds 0 left PageRank empty (the hop too) while the result still said mode hybrid+ppr
    and graph used: a mode that starts the graph from its seeds refuses it."""
    out = CliRunner().invoke(cli, ["ask", "--vault", str(bridge_vault), "--seeds", "0", *how, QUESTION])
    assert out.exit_code == 1 and len(out.output.strip().splitlines()) == 1, out.output
    assert "--seeds 0 gives the graph no note to start from" in out.output
    assert "Traceback" not in out.output


def test_seeds_0_is_no_matter_to_a_mode_without_the_graph(bridge_vault):
    ask = ["ask", "--vault", str(bridge_vault), "--seeds", "0", "--json"]
    out = CliRunner().invoke(cli, [*ask, "--mode", "hybrid", QUESTION])
    assert out.exit_code == 0 and json.loads(out.stdout)["mode"] == "hybrid", out.output
    out = CliRunner().invoke(cli, [*ask, "--ab", "--ab-modes", "vector,hybrid", QUESTION])
    assert out.exit_code == 0, out.output


DEPTH_SHORT = "fewer notes than the 4 asked for (-k): each lane gives at most --depth 1; give --depth 4 or more"


@pytest.mark.parametrize("mode", ["vector", "hybrid", "hybrid+ppr"])
def test_a_depth_below_k_that_cut_the_list_short_is_said_once(bridge_vault, mode):
    """`--depth 1 -k 4` answered one or two notes of four with nothing said (each lane gives at
    most --depth notes); a warning line says why, in --json's warnings too, once for --ab."""
    ask = ["ask", "--vault", str(bridge_vault), "--depth", "1", "-k", "4", "--mode", mode, QUESTION]
    out = CliRunner().invoke(cli, ask)
    assert out.exit_code == 0, out.output
    assert out.stderr.count(DEPTH_SHORT) == 1, out.stderr
    data = json.loads(CliRunner().invoke(cli, [*ask, "--json"]).stdout)
    assert len(data["results"]) < 4 and any(w.startswith(DEPTH_SHORT) for w in data["warnings"]), data["warnings"]
    other = "hybrid" if mode == "vector" else "vector"
    ab = ["ask", "--vault", str(bridge_vault), "--depth", "1", "-k", "4", "--ab", "--ab-modes", f"{other},{mode}"]
    out = CliRunner().invoke(cli, [*ab, QUESTION])
    assert out.exit_code == 0 and out.stderr.count(DEPTH_SHORT) == 1, out.output
    # deep enough, or the list full: nothing to say
    for enough in (["--depth", "4"], ["-k", "1"]):
        out = CliRunner().invoke(cli, [*ask, *enough])
        assert out.exit_code == 0 and "fewer notes than" not in out.stderr, out.stderr


def test_k_past_the_default_depth_fills_the_list(tmp_path):
    """The lanes' depth (60) capped a list: `--mode vector -k 70` answered 60 notes of 70. Not
    given, the depth is at least -k."""
    root = tmp_path / "many"
    for i in range(70):
        write(root, f"Note {i}.md", f"# Note {i}\n\nHarbour crane note number {i}.\n")
    index_vault(root, progress=False)
    out = CliRunner().invoke(cli, ["ask", "--vault", str(root), "--mode", "vector", "-k", "70", "--json", "crane"])
    assert out.exit_code == 0, out.output
    assert len(json.loads(out.stdout)["results"]) == 70


def test_the_readme_json_example_is_what_brain_ask_json_prints(bridge_vault):
    """The README's `brain ask --json` example lacked as_of, valid_at, recorded_from and
    recorded_to, which the text beside it lists: it is checked key by key against real output."""
    readme = (Path(__file__).resolve().parents[1] / "README.md").read_text(encoding="utf-8")
    example = json.loads(readme.split("For agents, `--json`")[1].split("```json\n", 1)[1].split("```", 1)[0])
    out = CliRunner().invoke(cli, ["ask", "--vault", str(bridge_vault), "--graph", "--json", QUESTION])
    data = json.loads(out.stdout)
    assert list(example) == list(data) == TOP_KEYS
    assert all(list(item) == RESULT_KEYS for item in example["results"])
    via = [item["via"] for item in example["results"] if item["via"]]
    assert via and all(list(v) == ["path", "title", "direction", "kind"] for v in via)
    for key in ("gate", "graph", "fallbacks"):
        assert list(example[key]) == list(data[key]), key
    assert set(example["timings_ms"]) <= set(data["timings_ms"]) | {"load_embedder"}


def test_every_result_has_every_fallback_flag(bridge_vault, closing):
    # An agent reads `fallbacks["lexical"]` as it reads the others: the key is there, false,
    # when BM25 answered (it was there only when it fell back, a KeyError otherwise).
    recaller = closing(open_recaller(bridge_vault))
    for mode in ("vector", "graph", "hybrid", "hybrid+ppr"):
        result = recaller.ask(QUESTION, mode, small())
        assert result.fallbacks == dict.fromkeys(("graph", "lexical", "names", "dates", "folders", "rerank"), False)


def test_human_output_marks_via(bridge_vault):
    out = CliRunner().invoke(cli, ["ask", "--vault", str(bridge_vault), "--graph", "--depth", "3", QUESTION])
    assert out.exit_code == 0, out.output
    assert "Harbour operations" in out.stdout
    assert "Tide tables  via [[Harbour operations]]" in out.stdout


def test_ab_logs_the_difference(bridge_vault, closing):
    """The pilot's pair: the hop's notes carry `via`, and that is what came via the graph."""
    out = CliRunner().invoke(
        cli,
        [
            "ask",
            "--vault",
            str(bridge_vault),
            "--ab",
            "--ab-modes",
            "vector,graph",
            "--depth",
            "3",
            "--seeds",
            "3",
            "-k",
            "5",
            "--source",
            "test-src",
            QUESTION,
        ],
    )
    assert out.exit_code == 0, out.output
    assert "* Tide tables  via [[Harbour operations]]" in out.stdout
    conn = closing(open_db())
    row = conn.execute("SELECT * FROM ab_recall").fetchone()
    assert row["query"] == QUESTION
    assert row["source"] == "test-src"
    assert row["mode_a"] == "vector" and row["mode_b"] == "graph"
    assert row["gate_entity"] == 0
    assert row["candidates_added"] >= 1
    top_a, top_b = json.loads(row["top_a"]), json.loads(row["top_b"])
    new = [p for p in top_b if p not in top_a]
    assert row["new_in_top_k"] == len(new) >= 1
    assert "Tide tables" in json.loads(row["via_graph_titles"])
    assert row["via_graph_in_top_k"] == len(json.loads(row["via_graph_titles"]))
    latency = json.loads(row["latency_ms"])
    assert latency["a"]["dense"] >= 0 and "graph" in latency["b"]

    report = CliRunner().invoke(cli, ["ab", "report", "--since", "1d", "--json"])
    data = json.loads(report.stdout)
    assert data["all"]["queries"] == 1 and data["all"]["changed_top_k"] == 1
    assert data["by_gate"][0]["gate"] == "not entity"
    assert {"title": "Tide tables", "times": 1} in data["top_promoted"]
    text = CliRunner().invoke(cli, ["ab", "report"])
    assert "queries: 1" in text.stdout and "not entity" in text.stdout


def test_ab_by_default_compares_brain_asks_mode_without_and_with_the_links(bridge_vault, closing):
    """`--ab` compared vector with graph, the pilot's pair: without a reranker the hop's notes did
    not reach the top k (two equal columns, a log that measured nothing), and brain ask runs
    hybrid+ppr. With hybrid against hybrid+ppr, Tide tables (no word of the question: only the
    anchor lanes and PageRank find it) was marked + and not counted as via the graph, for it
    carries no ``via``; nor among the notes the graph added, which were PageRank's newcomers alone."""
    args = ["ask", "--vault", str(bridge_vault), "--ab", "--depth", "3", "--seeds", "3", "-k", "5", QUESTION]
    out = CliRunner().invoke(cli, args)
    assert out.exit_code == 0, out.output
    assert "* Tide tables  (anchors, ppr)" in out.stdout
    assert "* Ada Lovelace  via [[Harbour operations]]" in out.stdout  # PageRank alone reached it
    flat = " ".join(out.stdout.split())  # the gate's line is broken to the width (a pipe's: 120)
    assert "hybrid+ppr added 2 candidates, 2 new in the top 5, 2 via links" in flat
    row = closing(open_db()).execute("SELECT * FROM ab_recall").fetchone()
    assert (row["mode_a"], row["mode_b"]) == ("hybrid", "hybrid+ppr")
    assert json.loads(row["via_graph_titles"]) == ["Tide tables", "Ada Lovelace"]
    assert row["via_graph_in_top_k"] == row["new_in_top_k"] == 2 and row["candidates_added"] == 2
    report = json.loads(CliRunner().invoke(cli, ["ab", "report", "--json"]).stdout)
    assert report["all"]["promoted_via_graph"] == 2 and report["by_gate"][0]["avg_candidates_added"] == 2
    assert {"title": "Tide tables", "times": 1} in report["top_promoted"]


def test_the_notes_the_links_add_to_a_fused_pool_include_the_anchor_lanes(bridge_vault, closing):
    """A fused mode's candidates_added counted the notes PageRank brought that no lane before it
    had: Tide tables, which the anchor lanes bring (PageRank too, after them), was not among them."""
    recaller = closing(open_recaller(bridge_vault))
    hybrid, fused = recaller.compare(QUESTION, ["hybrid", "hybrid+ppr"], small())
    assert hybrid.candidates_added == 0
    tide = next(c for c in fused.results if c.path == "Tide tables.md")
    assert set(tide.sources) == {"anchor_dense", "anchor_lex", "ppr"}
    assert fused.candidates_added == 2  # Tide tables, and Ada Lovelace (PageRank's alone)


def test_ab_with_a_name_records_the_gate(bridge_vault, closing):
    out = CliRunner().invoke(cli, ["ask", "--vault", str(bridge_vault), "--ab", "Ada Lovelace"])
    assert out.exit_code == 0, out.output
    row = closing(open_db()).execute("SELECT gate_entity, gate_reason, mode_b FROM ab_recall").fetchone()
    # The gate's decision is recorded beside the two runs (a fused mode applies no gate).
    assert row["gate_entity"] == 1 and "title or alias" in row["gate_reason"] and row["mode_b"] == "hybrid+ppr"


def test_ab_masks_a_secret_in_the_query_as_the_ledger_does(bridge_vault, closing):
    """The query is stored in ab_recall: a token pasted into it must not be (the ledger masks it)."""
    query = "Ada Lovelace deploy with GITHUB_TOKEN=ghp_abcdefghijklmnopqrstuvwxyz0123456789"
    out = CliRunner().invoke(cli, ["ask", "--vault", str(bridge_vault), "--ab", query])
    assert out.exit_code == 0, out.output
    row = closing(open_db()).execute("SELECT query, gate_reason FROM ab_recall").fetchone()
    assert "ghp_abc" not in row["query"] + row["gate_reason"]
    assert row["query"].startswith("Ada Lovelace deploy with GITHUB_TOKEN=")


def test_ab_stores_no_secret_a_note_path_or_title_holds(bridge_vault, closing):
    """ab_recall keeps the top notes' paths and the titles promoted via links: a key in a folder's
    name or a note's title was stored as it was (the ledger masks the paths of files a turn wrote)."""
    key, password = "sk-ant-api03-" + "Zq8xW2vN7pL4kR9tY6uB3mC1dF5gH0jKaS", "hunter2-correct-horse"
    write(
        bridge_vault,
        f"keys {key}/Storm deploy.md",
        f"# Storm deploy password={password}\n\nWinter storms stop the harbour cranes. See [[Tide tables]].\n",
    )
    out = CliRunner().invoke(cli, ["ask", "--vault", str(bridge_vault), "--ab", "-k", "20", "winter storms harbour"])
    assert out.exit_code == 0, out.output
    row = closing(open_db()).execute("SELECT top_a, top_b, new_in_top_k, via_graph_titles FROM ab_recall").fetchone()
    assert any(path.startswith("keys sk-ant-***") for path in json.loads(row["top_a"]))  # the note was in the top k
    raw = sqlite3.connect(config.db_path())
    dump = "\n".join(raw.iterdump())
    raw.close()
    assert key not in dump and password not in dump


def test_bad_input_messages(bridge_vault, tmp_path, monkeypatch, closing):
    runner = CliRunner()
    empty = "Error: an empty query asks nothing: give words or a question, e.g. 'how should agent memory work'\n"
    for query in ("   ", "", "\u200b"):  # the line the MCP tool search and brain serve give (test_mcp: EMPTY_QUERY)
        out = runner.invoke(cli, ["ask", "--vault", str(bridge_vault), query])
        assert out.exit_code == 1 and out.output == empty
    # Punctuation alone (FTS5's syntax too) asks nothing either: it ranked a dozen notes by chance.
    alone = empty.replace("an empty query", "a query of punctuation alone")
    for query in ("?!.,;:", '"', "*", "-", "« … »"):
        out = runner.invoke(cli, ["ask", "--vault", str(bridge_vault), "--", query])
        assert out.exit_code == 1 and out.output == alone, query
    recaller = open_recaller(bridge_vault)
    with pytest.raises(EmptyQuery, match="punctuation alone"):  # the library's line, as the MCP tool's
        recaller.ask("?", "vector")
    recaller.close()
    for query in ("🙂", "c++", "$"):  # a symbol means something: an emoji is searched
        assert runner.invoke(cli, ["ask", "--vault", str(bridge_vault), "--json", query]).exit_code == 0

    fresh = tmp_path / "never-indexed"
    write(fresh, "a.md", "hello")
    out = runner.invoke(cli, ["ask", "--vault", str(fresh), "hello"])
    assert out.exit_code != 0 and "brain index" in out.output
    with pytest.raises(NoIndexError):
        open_recaller(fresh)

    monkeypatch.setenv("BRAIN_EMBED_MODEL", "fake:32")
    with pytest.raises(IndexMismatchError):
        open_recaller(bridge_vault)
    out = runner.invoke(cli, ["ask", "--vault", str(bridge_vault), "hello"])
    assert out.exit_code != 0 and "--rebuild" in out.output and "Traceback" not in out.output

    monkeypatch.setenv("BRAIN_EMBED_MODEL", "fake:64")
    with pytest.raises(ConfigError):
        closing(open_recaller(bridge_vault)).ask("x", "sideways")


def test_stale_index_is_updated_before_answering(bridge_vault, closing):
    write(bridge_vault, "Late note.md", "# Late note\n\nzephyr quokka marmalade\n")
    stale = open_recaller(bridge_vault, update=False)
    assert stale.stale == 1 and any("1 note changed since" in w for w in stale.warnings)
    result = stale.ask("zephyr quokka marmalade", "vector", small())
    assert result.stale == 1 and "Late note.md" not in [c.path for c in result.results]
    stale.close()

    fresh = closing(open_recaller(bridge_vault))
    assert fresh.stale == 0
    assert fresh.ask("zephyr quokka marmalade", "vector", small()).results[0].path == "Late note.md"

    out = CliRunner().invoke(cli, ["ask", "--vault", str(bridge_vault), "--no-update", "--json", "quokka"])
    assert json.loads(out.stdout)["stale_notes"] == 0  # the update above already ran


def test_a_note_whose_file_is_gone_is_never_an_answer_from_a_stale_index(bridge_vault, closing):
    """The index cannot be updated (another process holds it, or --no-update): a deleted
    note is left out of the answer, and the warning says so and names the real cause."""
    from brain.index.writer_lock import vault_lock

    query = "harbour crane schedule during winter storms"
    assert (
        closing(open_recaller(bridge_vault)).ask(query, "hybrid+ppr", small()).results[0].path
        == "Harbour operations.md"
    )
    (bridge_vault / "Harbour operations.md").unlink()
    with vault_lock(config.index_dir(bridge_vault)):  # a writer is at work: the update must wait
        held = open_recaller(bridge_vault)
        warning = " ".join(held.warnings)
        assert "another brain process is indexing this vault" in warning
        assert "the one whose file is gone, deleted or renamed, is left out" in warning  # not "the 1 … are"
        for mode in ("vector", "hybrid", "hybrid+ppr", "graph"):
            paths = [c.path for c in held.ask(query, mode, small()).results]
            assert paths and "Harbour operations.md" not in paths, (mode, paths)
        held.close()
    out = CliRunner().invoke(cli, ["ask", "--vault", str(bridge_vault), "--no-update", "--json", query])
    answer = json.loads(out.stdout)
    assert answer["stale_notes"] == 1 and "Harbour operations.md" not in [r["path"] for r in answer["results"]]
    past = open_recaller(bridge_vault, update=False, as_of=time.time())  # a past view had it, and shows it
    assert "Harbour operations.md" in [c.path for c in past.ask(query, "vector", small()).results]
    past.close()


class _Scores:
    """A reranker that keeps the order it is given, and records how many passages it scored."""

    def __init__(self):
        self.scored: list[str] = []

    def score(self, query, candidates):
        self.scored += [c.path for c in candidates]
        return [-float(i) for i in range(len(candidates))]


@pytest.mark.parametrize("mode", ["vector", "graph", "hybrid", "hybrid+ppr", "vector+rerank", "hybrid+rerank"])
def test_notes_whose_files_are_gone_leave_no_hole_in_the_answer(bridge_vault, monkeypatch, mode, closing):
    """A note whose file is gone was dropped after the lanes, the fusion and the reranker had
    cut the pool (to --depth, to max(depth, k), to --pool): `--no-update -k 3` answered one note
    of three, with nothing said, and the gone notes took the reranker's places. The notes below
    take their places, and the answer says how many of the notes it found were left out."""
    monkeypatch.setenv("BRAIN_RERANK_MODEL", "a-cross-encoder")
    reranker = _Scores()
    monkeypatch.setattr("brain.recall.pipeline.load_reranker", lambda name: reranker)
    settings = RecallSettings(k=3, depth=3, seeds=3, max_new=10, pool=3)
    before = closing(open_recaller(bridge_vault)).ask(QUESTION, "vector", settings)
    gone = [c.path for c in before.results[:2]]
    for path in gone:
        (bridge_vault / path).unlink()
    held = open_recaller(bridge_vault, update=False)
    try:
        result = held.ask(QUESTION, mode, settings)
    finally:
        held.close()
    paths = [c.path for c in result.results]
    assert len(paths) == 3 and not set(paths) & set(gone), (mode, paths)
    assert not set(reranker.scored) & set(gone)
    assert (
        "2 notes this query found were left out: their files deleted, renamed or no longer readable since the last index"
        in result.warnings
    )


def test_a_renamed_note_counts_once_in_the_stale_count(bridge_vault):
    """--no-update's stale count took a rename for two changes (a new note and a deleted one),
    where `brain status` says 1 renamed; an edited note of the same size is still a change."""
    from brain.index.status import vault_status

    open_recaller(bridge_vault).close()
    (bridge_vault / "Harbour operations.md").rename(bridge_vault / "Harbour.md")
    stale = open_recaller(bridge_vault, update=False)
    assert stale.stale == 1 and any(w.startswith("1 note changed since") for w in stale.warnings), stale.warnings
    stale.close()
    assert vault_status(bridge_vault).pending == {"new": 0, "changed": 0, "renamed": 1, "deleted": 0}
    tides = bridge_vault / "Tide tables.md"
    tides.write_bytes(tides.read_bytes().replace(b"e", b"E", 1))  # the same size, other bytes
    (bridge_vault / "Tide tables.md").rename(bridge_vault / "Tides.md")
    stale = open_recaller(bridge_vault, update=False)
    assert stale.stale == 3  # Harbour renamed; Tides new and Tide tables deleted
    stale.close()


def test_reranker_that_cannot_load_keeps_dense_order(bridge_vault, monkeypatch, closing):
    monkeypatch.setenv("BRAIN_RERANK_MODEL", str(bridge_vault / "no-such-model"))
    recaller = closing(open_recaller(bridge_vault))
    dense = recaller.ask(QUESTION, "vector", small())
    result = recaller.ask(QUESTION, "vector+rerank", small())
    assert [c.path for c in result.results] == [c.path for c in dense.results]
    assert result.fallbacks["rerank"] is True and not result.reranked
    assert any("reranker unavailable" in w for w in result.warnings)
    assert result.mode == "vector"  # what ran: it said vector+rerank, with no reranker score

    out = CliRunner().invoke(cli, ["ask", "--vault", str(bridge_vault), "--json", QUESTION])
    data = json.loads(out.stdout)
    assert out.exit_code == 0 and data["fallbacks"]["rerank"] is True and data["reranked"] is False
    assert data["mode"] == "hybrid+ppr" and all(r["rerank_score"] is None for r in data["results"])


@pytest.mark.parametrize("scores", ["nan", "inf", "short"])
def test_a_reranker_giving_no_number_or_too_few_keeps_the_earlier_order(bridge_vault, monkeypatch, scores, closing):
    """A model that loads but scores NaN (fp16 overflow), infinities or fewer passages than it
    was given: its order is no order, and NaN is no JSON. The earlier order stands, said."""

    class Broken:
        def score(self, query, candidates):
            return {
                "nan": [float("nan")] * len(candidates),
                "inf": [float("inf"), -float("inf")] * len(candidates),
                "short": [1.0] * (len(candidates) - 1),
            }[scores][: len(candidates)]

    monkeypatch.setenv("BRAIN_RERANK_MODEL", "a-broken-cross-encoder")
    monkeypatch.setattr("brain.recall.pipeline.load_reranker", lambda name: Broken())
    recaller = closing(open_recaller(bridge_vault))
    dense = recaller.ask(QUESTION, "vector", small())
    result = recaller.ask(QUESTION, "vector+rerank", small())
    assert [c.path for c in result.results] == [c.path for c in dense.results]
    assert result.fallbacks["rerank"] is True and not result.reranked
    assert any("reranker unavailable" in w for w in result.warnings)
    out = CliRunner().invoke(cli, ["ask", "--vault", str(bridge_vault), "--no-server", "--json", QUESTION])
    assert out.exit_code == 0, out.output
    json.loads(out.stdout, parse_constant=lambda c: pytest.fail(f"{c} in the JSON"))


def test_a_model_of_another_width_under_the_same_name_is_one_clear_error(bridge_vault):
    """A model folder replaced by another model: same name, vectors of another width. FAISS
    failed on a bare assertion (a traceback); it is an index mismatch, with how to mend it."""
    from conftest import FakeEmbedder

    recaller = open_recaller(bridge_vault, update=False, embedder=FakeEmbedder("fake:64", dim=32))
    try:
        with pytest.raises(
            IndexMismatchError, match=r"gives vectors of 32 dimensions.*holds 64.*brain index --rebuild"
        ):
            recaller.ask(QUESTION, "vector", small())
    finally:
        recaller.close()


def test_a_query_vector_that_is_not_a_number_is_one_clear_error(bridge_vault):
    """A broken model (fp16 overflow, damaged weights) giving a NaN query vector: FAISS ranked
    nothing and the answer was empty, unsaid, as if no note matched."""
    import numpy as np
    from conftest import FakeEmbedder

    class Broken(FakeEmbedder):
        def embed_query(self, text):
            return np.full(self.dim, np.nan, dtype=np.float32)

    recaller = open_recaller(bridge_vault, update=False, embedder=Broken("fake:64"))
    try:
        for mode in ("vector", "hybrid+ppr"):
            with pytest.raises(ModelLoadError, match=r"gave this query a vector that is not a number"):
                recaller.ask(QUESTION, mode, small())
    finally:
        recaller.close()


def test_a_links_table_the_index_lacks_falls_back_to_hybrid_and_says_how_to_mend_it(bridge_vault):
    def ask(mode: str) -> dict:
        out = CliRunner().invoke(
            cli, ["ask", "--vault", str(bridge_vault), "--json", "--no-rerank", "--mode", mode, QUESTION]
        )
        assert out.exit_code == 0, out.output
        return json.loads(out.stdout)

    hybrid = ask("hybrid")
    conn = sqlite3.connect(config.index_dir(bridge_vault.resolve()) / "index.db")
    conn.execute("ALTER TABLE links RENAME TO links_gone")
    conn.commit()
    conn.close()
    broken = ask("hybrid+ppr")
    assert broken["fallbacks"]["graph"] is True
    assert [r["path"] for r in broken["results"]] == [r["path"] for r in hybrid["results"]]
    assert broken["mode"] == "hybrid"  # what ran: it said hybrid+ppr
    assert broken["warnings"] and all(
        f"brain index --rebuild --vault {bridge_vault.resolve()}" in w for w in broken["warnings"]
    ), broken["warnings"]


def test_context_bundle_respects_budget(bridge_vault):
    out = CliRunner().invoke(cli, ["ask", "--vault", str(bridge_vault), "--context", "--budget", "400", QUESTION])
    assert out.exit_code == 0
    assert len(out.stdout) <= 400 + 2
    assert out.stdout.startswith("### Harbour operations.md")
    assert "harbour crane schedule" in out.stdout


def test_context_cuts_a_heading_no_budget_holds_and_leaves_out_a_path_that_long(tmp_path):
    """A note headed by a line of 2,000 characters first: `--context --budget 400` printed an
    empty bundle, exit 0, every note after it dropped too; its heading is cut now, and a note
    whose path alone is longer than the budget is left out, said on stderr (or in an error, all
    of them)."""
    root = tmp_path / "vault"
    write(root, "Long heading.md", "# " + "Harbour crane schedule " * 90 + "\n\nThe harbour crane works at dawn.\n")
    write(root, "Short.md", "# Short\n\nThe harbour crane rests at night.\n")
    index_vault(root, progress=False)
    out = CliRunner().invoke(cli, ["ask", "--vault", str(root), "--context", "--budget", "400", "harbour crane"])
    assert out.exit_code == 0, out.output
    assert out.stdout.startswith("### Long heading.md › Harbour crane schedule Harbour")
    assert len(out.stdout.splitlines()[0]) <= 200
    assert 300 < len(out.stdout) <= 400 + 2

    deep = tmp_path / "deep"
    path = "/".join(f"Folder {n:02d} of a deep archive tree" for n in range(12)) + "/P.md"  # 394 characters
    write(deep, path, "# P\n\nThe harbour crane in a note of a long name.\n")
    write(deep, "Short.md", "# Short\n\nThe harbour crane rests at night.\n")
    index_vault(deep, progress=False)
    out = CliRunner().invoke(cli, ["ask", "--vault", str(deep), "--context", "--budget", "400", "harbour crane"])
    assert out.exit_code == 0, out.output
    assert out.stdout.startswith("### Short.md › Short\n")
    assert "1 note of 2 left out of --context: the path alone is longer than --budget 400" in out.stderr

    (deep / "Short.md").unlink()
    out = CliRunner().invoke(cli, ["ask", "--vault", str(deep), "--context", "--budget", "400", "harbour crane"])
    assert out.exit_code == 1
    assert out.stdout == ""
    assert out.stderr.strip().splitlines() == [
        "Error: --budget 400 holds none of the 1 note found: the path of each is longer than it; give a larger --budget"
    ]


def test_ab_recall_table_matches_schema_doc(closing):
    conn = closing(open_db())
    columns = [r[1] for r in conn.execute("PRAGMA table_info(ab_recall)")]
    assert columns[:6] == ["id", "created_at", "source", "vault", "query", "mode_a"]
    assert isinstance(conn, sqlite3.Connection)


def test_links_to_no_note_are_left_out_of_pagerank_and_said(bridge_vault):
    """A links table whose target ids name no note: PageRank runs without those links, says so
    with how to mend it, and the answer is no traceback."""
    before = json.loads(
        CliRunner()
        .invoke(cli, ["ask", "--vault", str(bridge_vault), "--json", "--no-rerank", "--mode", "hybrid+ppr", QUESTION])
        .stdout
    )
    database = config.index_dir(bridge_vault.resolve()) / "index.db"
    conn = sqlite3.connect(database)
    conn.execute("INSERT INTO links (source_id, target_id, target, kind) SELECT id, 999999, 'x', 'wikilink' FROM notes")
    conn.commit()
    conn.close()
    (database.parent / "recall-cache.npz").unlink(missing_ok=True)
    out = CliRunner().invoke(
        cli, ["ask", "--vault", str(bridge_vault), "--json", "--no-rerank", "--mode", "hybrid+ppr", QUESTION]
    )
    assert out.exit_code == 0, out.output
    data = json.loads(out.stdout)
    assert any("links point at no note of the index" in w and "brain index --rebuild" in w for w in data["warnings"])
    assert [r["path"] for r in data["results"]] == [r["path"] for r in before["results"]]
    assert (database.parent / "recall-cache.npz").exists()  # the next run takes the graph over, and says it too
    again = CliRunner().invoke(
        cli, ["ask", "--vault", str(bridge_vault), "--json", "--no-rerank", "--mode", "hybrid+ppr", QUESTION]
    )
    assert json.loads(again.stdout)["warnings"] == data["warnings"]


def test_every_result_shows_a_cosine_also_one_the_lexical_lane_found_first(tmp_path, closing):
    """A note the lexical lane found before a later lane (PageRank, the extra lanes) kept its BM25
    score as `dense_score` (5.49 shown as a cosine for a prompt about nothing in the vault), and the
    prompt hook, which adds a note whose `dense_score` reaches 0.35, would have added it."""
    from brain.recall import dense as dense_stage

    root = tmp_path / "v"
    # Short notes on the common word lead the dense lane; the rare word, deep in a long note that
    # links to one of them, leads the lexical lane (and PageRank reaches it through the link).
    for i in range(6):
        write(root, f"Quay {i}.md", f"# Quay {i}\n\nHarbour harbour quay {i}.\n")
    filler = " ".join(f"word{n}" for n in range(300))
    write(root, "Ledger.md", f"# Ledger\n\n{filler} zyxquartz {filler} [[Quay 0]]\n")
    write(root, "Quay 0.md", "# Quay 0\n\nHarbour harbour quay 0, see [[Ledger]].\n")
    index_vault(root, progress=False)
    query = "zyxquartz harbour"
    recaller = closing(open_recaller(root))
    result = recaller.ask(query, "hybrid+ppr", RecallSettings(k=8, depth=2, seeds=3, max_new=10, pool=8))
    assert any(c.sources[0] == "lexical" and len(c.sources) > 1 for c in result.results), "nothing to check"
    vector = recaller.embedder.embed_query(query)
    best = dense_stage.best_chunks(recaller.store, [c.note_id for c in result.results], vector)
    for c in result.results:
        assert c.dense_score == pytest.approx(best[c.note_id][1], abs=1e-5), (c.path, c.sources)


def test_the_graph_line_counts_one_note_in_the_singular(bridge_vault):
    """The graph's line said "(graph: 1 notes added …)": one note is "1 note"."""
    out = CliRunner().invoke(
        cli, ["ask", "--vault", str(bridge_vault), "--graph", "--depth", "3", "--max-new", "1", QUESTION]
    )
    assert out.exit_code == 0, out.output
    line = next(line for line in out.stderr.splitlines() if line.startswith("(graph: "))
    assert line.startswith("(graph: 1 note added one hop from the top hits"), line
