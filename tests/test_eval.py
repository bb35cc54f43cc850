"""`brain eval`: metric code against hand-computed values, query-file validation, the JSON schema."""

from __future__ import annotations

import json
import math
import sqlite3

import pytest
from click.testing import CliRunner
from conftest import FakeEmbedder, write

from brain.cli import cli
from brain.evaluation.metrics import aggregate, ndcg_at_k, query_metrics, recall_at_k, reciprocal_rank
from brain.evaluation.queries import QUERY_TYPES, QueryFileError, load_queries, parse_queries
from brain.evaluation.runner import run_eval
from brain.recall.types import DEFAULT_MODE

# ----- metrics ----------------------------------------------------------------------------


def test_no_relevant_note_in_the_top_k():
    ranked = [f"n{i}.md" for i in range(1, 13)] + ["rel.md"]  # relevant at rank 13
    assert recall_at_k(ranked, ["rel.md"], 5) == 0.0
    assert recall_at_k(ranked, ["rel.md"], 10) == 0.0
    assert ndcg_at_k(ranked, ["rel.md"], 10) == 0.0
    assert reciprocal_rank(ranked, ["rel.md"]) == pytest.approx(1 / 13)  # MRR reads the whole list
    assert reciprocal_rank(ranked[:10], ["rel.md"]) == 0.0


def test_single_relevant_at_rank_one_and_three():
    assert query_metrics(["rel.md", "a.md", "b.md"], ["rel.md"]) == {
        "recall@5": 1.0,
        "recall@10": 1.0,
        "ndcg@10": 1.0,
        "mrr": 1.0,
    }
    at3 = query_metrics(["a.md", "b.md", "rel.md", "c.md"], ["rel.md"])
    # DCG = 1/log2(3+1) = 0.5, IDCG = 1/log2(2) = 1
    assert at3 == {"recall@5": 1.0, "recall@10": 1.0, "ndcg@10": 0.5, "mrr": pytest.approx(1 / 3)}


def test_several_relevant_notes():
    ranked = ["a.md", "x1.md", "b.md", "x2.md", "x3.md", "c.md", "x4.md"]
    relevant = ["a.md", "b.md", "c.md"]
    assert recall_at_k(ranked, relevant, 5) == pytest.approx(2 / 3)
    assert recall_at_k(ranked, relevant, 10) == 1.0
    # DCG = 1/log2(2) + 1/log2(4) + 1/log2(7) = 1 + 0.5 + 0.356207 = 1.856207
    # IDCG = 1/log2(2) + 1/log2(3) + 1/log2(4) = 1 + 0.630930 + 0.5 = 2.130930
    assert ndcg_at_k(ranked, relevant, 10) == pytest.approx(1.856207 / 2.130930, abs=1e-6)
    assert ndcg_at_k(ranked, relevant, 10) == pytest.approx(0.871079, abs=1e-6)
    assert reciprocal_rank(ranked, relevant) == 1.0
    assert reciprocal_rank(["x.md", "y.md", "b.md", "a.md"], relevant) == pytest.approx(1 / 3)


def test_ndcg_ideal_is_over_min_of_relevant_and_k():
    relevant = [f"r{i}.md" for i in range(12)]
    # Ten relevant notes fill the top 10: perfect, although two relevant notes are missing.
    assert ndcg_at_k(relevant[:10] + ["x.md"], relevant, 10) == pytest.approx(1.0)
    assert recall_at_k(relevant[:10], relevant, 10) == pytest.approx(10 / 12)
    # One relevant note of two, at rank 2: DCG = 1/log2(3); IDCG = 1 + 1/log2(3).
    expected = (1 / math.log2(3)) / (1 + 1 / math.log2(3))
    assert ndcg_at_k(["x.md", "r0.md"], ["r0.md", "r1.md"], 10) == pytest.approx(expected)
    assert ndcg_at_k(["x.md", "r0.md"], ["r0.md", "r1.md"], 10) == pytest.approx(0.386853, abs=1e-6)


def test_a_repeated_path_counts_once():
    assert recall_at_k(["a.md", "a.md", "x.md"], ["a.md", "b.md"], 5) == 0.5
    # The duplicate is dropped, so b.md is at rank 2, not 3.
    assert reciprocal_rank(["x.md", "x.md", "b.md"], ["b.md"]) == 0.5


def test_metrics_refuse_an_empty_relevant_set():
    with pytest.raises(ValueError):
        recall_at_k(["a.md"], [], 5)
    with pytest.raises(ValueError):
        ndcg_at_k(["a.md"], [], 10)


def test_aggregate_overall_and_by_type():
    rows = [
        ("entity", {"mrr": 1.0, "recall@5": 1.0}),
        ("theme", {"mrr": 0.5, "recall@5": 0.0}),
        ("entity", {"mrr": 0.0, "recall@5": 0.5}),
    ]
    out = aggregate(rows, ["mrr", "recall@5"])
    assert out["all"] == {"mrr": 0.5, "recall@5": 0.5}
    assert out["by_type"] == {"entity": {"mrr": 0.5, "recall@5": 0.75}, "theme": {"mrr": 0.5, "recall@5": 0.0}}
    assert list(out["by_type"]) == ["entity", "theme"]


# ----- the query file ---------------------------------------------------------------------


def _line(**fields) -> str:
    record = {"id": "q", "query": "how", "type": "theme", "relevant": ["a.md"], **fields}
    return json.dumps({k: v for k, v in record.items() if v is not None})


def test_parse_a_good_file_with_partial_and_extra_fields():
    text = "\n".join(
        [
            _line(id="q1", partial=["b.md"], note="ignored"),
            "",
            _line(id="q2", type="entity", relevant=["dir/c.md", "./d.md"]),
        ]
    )
    q1, q2 = parse_queries(text)
    assert (q1.id, q1.type, q1.relevant, q1.partial, q1.line) == ("q1", "theme", ("a.md",), ("b.md",), 1)
    assert (q2.id, q2.relevant, q2.line) == ("q2", ("dir/c.md", "d.md"), 3)


def test_a_line_nested_too_deeply_is_reported_not_a_traceback():
    text = "\n".join([_line(id="q1"), "[" * 100_000 + "]" * 100_000])
    with pytest.raises(QueryFileError, match=r"line 2: not valid JSON \(nested too deeply\)"):
        parse_queries(text, "q.jsonl")


def test_bad_json_lines_are_reported_by_number():
    text = "\n".join([_line(id="q1"), "{not json", "", '{"id": "q3", "query": ', _line(id="q5"), "[1, 2]"])
    with pytest.raises(QueryFileError) as err:
        parse_queries(text, "q.jsonl")
    message = str(err.value)
    assert "line 2: not valid JSON" in message
    assert "line 4: not valid JSON" in message
    assert "line 6: expected a JSON object" in message
    assert "line 1" not in message and "line 5" not in message
    assert len(err.value.problems) == 3


def test_unknown_type_lists_the_allowed_types():
    with pytest.raises(QueryFileError) as err:
        parse_queries(_line(type="trivia"))
    message = str(err.value)
    assert "line 1: unknown type 'trivia'" in message
    assert ", ".join(QUERY_TYPES) in message


def test_missing_fields_and_bad_values_are_all_listed():
    text = "\n".join(
        [
            json.dumps({"id": "q1", "query": "x"}),
            _line(id="q2", relevant=[]),
            _line(id="q3", relevant="a.md"),
            _line(id="q4", query="  "),
            _line(id="q5", relevant=["/etc/passwd.md", "../up.md"]),
            _line(id="q2"),
        ]
    )
    with pytest.raises(QueryFileError) as err:
        parse_queries(text)
    message = str(err.value)
    assert "line 1: missing field(s): type, relevant" in message
    assert "line 2: relevant is empty" in message
    assert "line 3: relevant must be a list" in message
    assert "line 4: query must be a non-empty string" in message
    assert "line 5: relevant path '/etc/passwd.md'" in message and "line 5: relevant path '../up.md'" in message
    # An invalid line still takes its id: the duplicate is reported now, not after line 2 is fixed.
    assert "line 6: duplicate id 'q2' (first on line 2)" in message
    assert len(err.value.problems) == 7


def test_duplicate_id_on_a_line_with_another_problem_is_reported():
    """Issue 9, item 18: both problems of line 2 in one pass."""
    text = _line(id="q1") + "\n" + _line(id="q1", type="trivia", query="")
    with pytest.raises(QueryFileError) as err:
        parse_queries(text)
    assert err.value.problems == [
        "line 2: query must be a non-empty string",
        f"line 2: unknown type 'trivia': use one of {', '.join(QUERY_TYPES)}",
        "line 2: duplicate id 'q1' (first on line 1)",
    ]


def test_missing_relevant_paths_are_listed_with_the_other_problems(tmp_path):
    """Issue 9, item 18: paths missing from the vault come in the same error as bad lines,
    including the paths of a bad line."""
    vault = tmp_path / "vault"
    write(vault, "a.md", "# A\n")
    path = write(
        tmp_path,
        "q.jsonl",
        "\n".join(
            [
                _line(id="q1", relevant=["a.md", "gone.md"]),
                "{not json",
                _line(id="q1", type="trivia", relevant=["also-gone.md", "a.md"]),
                _line(id="q4", relevant=["/abs.md", "third-gone.md"]),
            ]
        ),
    )
    with pytest.raises(QueryFileError) as err:
        load_queries(path, vault)
    assert err.value.problems == [
        "line 2: not valid JSON (Expecting property name enclosed in double quotes at column 2)",
        f"line 3: unknown type 'trivia': use one of {', '.join(QUERY_TYPES)}",
        "line 3: duplicate id 'q1' (first on line 1)",
        "line 4: relevant path '/abs.md' must be relative to the vault, without '..'",
        "line 1 (q1): gone.md",
        "line 3 (q1): also-gone.md",
        "line 4 (q4): third-gone.md",
    ]
    message = str(err.value)
    assert "4 problem(s) in the query file" in message
    assert f"3 relevant path(s) are not notes in the vault {vault.resolve()}" in message
    result = CliRunner().invoke(cli, ["eval", str(path), "--vault", str(vault)])
    assert result.exit_code == 1
    for problem in err.value.problems:
        assert f"  {problem}" in result.output
    assert "Traceback" not in result.output


def test_duplicate_ids_are_rejected():
    with pytest.raises(QueryFileError, match="line 2: duplicate id 'q1' \\(first on line 1\\)"):
        parse_queries(_line(id="q1") + "\n" + _line(id="q1"))


def test_an_empty_file_is_an_error(tmp_path):
    path = write(tmp_path, "q.jsonl", "\n\n")
    with pytest.raises(QueryFileError, match="no queries"):
        load_queries(path)
    with pytest.raises(QueryFileError, match="not found"):
        load_queries(tmp_path / "missing.jsonl")


def test_every_missing_relevant_path_is_listed(tmp_path):
    vault = tmp_path / "vault"
    write(vault, "a.md", "# A\n")
    write(vault, "dir/b.md", "# B\n")
    path = write(
        tmp_path,
        "q.jsonl",
        "\n".join(
            [
                _line(id="q1", relevant=["a.md", "nope.md"]),
                _line(id="q2", relevant=["dir/b.md"]),
                _line(id="q3", relevant=["dir/gone.md", "Dir/B2.md", "a.md"]),
            ]
        ),
    )
    assert len(load_queries(path)) == 3  # without a vault, paths are not checked
    with pytest.raises(QueryFileError) as err:
        load_queries(path, vault)
    message = str(err.value)
    assert "3 relevant path(s) are not notes in the vault" in message
    for expected in ("line 1 (q1): nope.md", "line 3 (q3): dir/gone.md", "line 3 (q3): Dir/B2.md"):
        assert expected in message
    assert "a.md\n" not in message.split(":", 1)[1] and "dir/b.md" not in message


# ----- brain eval, end to end on a small vault --------------------------------------------


@pytest.fixture
def eval_vault(tmp_path):
    """A vault whose ranking the fake (lexical) embedder makes predictable."""
    vault = tmp_path / "vault"
    for i in range(12):
        write(
            vault,
            f"Fishing/Fishing {i:02d}.md",
            f"# Fishing {i:02d}\n\nRiver boat fishing: trout, river, boat, fishing, river boat. Day {i}.\n",
        )
    write(vault, "Animals/Quokka.md", "# Quokka\n\nThe quokka is a small marsupial of Rottnest island. [[Wombat]]\n")
    write(vault, "Animals/Wombat.md", "# Wombat\n\nA wombat digs a burrow; a marsupial with cube droppings.\n")
    write(vault, "Coast/Lighthouse.md", "# Lighthouse\n\nThe lighthouse keeper tends the lamp in a storm.\n")
    write(vault, "Work/Taxes.md", "# Taxes\n\nAccounting ledger and spreadsheet for the yearly return.\n")
    queries = [
        {"id": "e1", "query": "quokka rottnest", "type": "entity", "relevant": ["Animals/Quokka.md"]},
        {"id": "e2", "query": "wombat burrow", "type": "entity", "relevant": ["Animals/Wombat.md"]},
        # Twelve fishing notes outrank the (unrelated) relevant note: a certain miss.
        {"id": "t1", "query": "river boat fishing", "type": "theme", "relevant": ["Work/Taxes.md"]},
        {
            "id": "t2",
            "query": "lighthouse keeper storm",
            "type": "theme",
            "relevant": ["Coast/Lighthouse.md"],
            "partial": ["Work/Taxes.md"],
        },
    ]
    path = write(tmp_path, "queries.jsonl", "\n".join(json.dumps(q) for q in queries) + "\n")
    return vault, path


def _invoke(*args):
    return CliRunner().invoke(cli, ["eval", *map(str, args)], catch_exceptions=False)


def test_eval_scores_dense_alone_against_brain_asks_default_mode_by_default(eval_vault):
    """The default modes were vector,graph,gated: three equal columns without a reranker, and
    not the mode `brain ask` answers in."""
    vault, queries = eval_vault
    result = _invoke(queries, "--vault", vault, "--json")
    assert result.exit_code == 0, result.output
    assert list(json.loads(result.stdout)["modes"]) == ["vector", DEFAULT_MODE]


def test_eval_json_says_what_produced_its_figures(eval_vault, monkeypatch):
    """It carried neither k nor the embedding model nor the reranker: a script comparing two
    runs' files could not tell a model's change from a fault's."""
    vault, queries = eval_vault
    data = json.loads(_invoke(queries, "--vault", vault, "--modes", "vector", "-k", "12", "--json").stdout)
    assert (data["k"], data["model"], data["reranker"]) == (12, "fake:64", None)
    monkeypatch.setenv("BRAIN_RERANK_MODEL", "some/reranker")  # not loaded: no +rerank mode runs
    data = json.loads(_invoke(queries, "--vault", vault, "--modes", "vector", "--json").stdout)
    assert (data["k"], data["reranker"]) == (10, "some/reranker")


def test_eval_json_schema_and_per_type_breakdown(eval_vault):
    vault, queries = eval_vault
    result = _invoke(queries, "--vault", vault, "--modes", "vector,graph,gated", "--json")
    assert result.exit_code == 0, result.output
    data = json.loads(result.stdout)
    assert list(data) == ["queries", "notes", "k", "model", "reranker", "modes"]
    assert data["queries"] == 4 and data["notes"] == 16
    assert list(data["modes"]) == ["vector", "graph", "gated"]
    keys = ["recall@5", "recall@10", "ndcg@10", "mrr", "latency_ms"]
    for mode, summary in data["modes"].items():
        assert list(summary) == ["all", "by_type"]
        assert list(summary["all"]) == keys
        assert list(summary["by_type"]) == ["entity", "theme"]
        for part in [summary["all"], *summary["by_type"].values()]:
            assert list(part) == keys
            assert all(isinstance(v, float) for v in part.values())
            assert part["latency_ms"] > 0
        by_type = summary["by_type"]
        # entity: both found first; theme: one found first, one certain miss.
        assert {k: by_type["entity"][k] for k in keys[:4]} == dict.fromkeys(keys[:4], 1.0), mode
        assert {k: by_type["theme"][k] for k in keys[:4]} == dict.fromkeys(keys[:4], 0.5), mode
        assert {k: summary["all"][k] for k in keys[:4]} == dict.fromkeys(keys[:4], 0.75), mode


def test_eval_builds_the_index_once_and_reports_per_query(eval_vault):
    vault, queries = eval_vault
    embedder = FakeEmbedder("fake:64")
    report = run_eval(load_queries(queries, vault), vault, ["vector", "dense", "gated"], embedder=embedder)
    assert list(report.modes) == ["vector", "gated"]  # "dense" is the pipeline's other name for vector
    assert report.k == 10
    assert len(embedder.embedded) == 16  # every note's one chunk, embedded once
    outcomes = {(o.query.id, o.mode): o for o in report.outcomes}
    assert len(outcomes) == 8
    assert outcomes[("t1", "vector")].metrics["recall@10"] == 0.0
    assert "Work/Taxes.md" not in outcomes[("t1", "vector")].ranked
    assert outcomes[("e1", "gated")].ranked[0] == "Animals/Quokka.md"
    assert len(outcomes[("e1", "gated")].ranked) == 10
    embedded = len(embedder.embedded)
    run_eval(load_queries(queries, vault), vault, ["vector"], embedder=embedder)
    assert len(embedder.embedded) == embedded  # nothing changed: nothing re-embedded
    write(vault, "Work/Taxes.md", "# Taxes\n\n" + "river boat fishing " * 20 + "\n")
    report = run_eval(load_queries(queries, vault), vault, ["vector"], embedder=embedder)
    assert len(embedder.embedded) == embedded + 1  # the changed note, before the first query
    t1 = next(o for o in report.outcomes if o.query.id == "t1")
    assert "Work/Taxes.md" in t1.ranked


def test_eval_text_table_puts_modes_side_by_side(eval_vault):
    vault, queries = eval_vault
    result = _invoke(queries, "--vault", vault, "--modes", "vector,gated")
    assert result.exit_code == 0, result.output
    lines = result.stdout.splitlines()
    assert lines[0].startswith("4 queries over 16 notes")
    header = next(line for line in lines if line.startswith("nDCG@10"))
    assert header.split() == ["nDCG@10", "n", "vector", "gated"]
    theme = lines[lines.index(header) + 3]
    assert theme.split() == ["theme", "2", "0.500", "0.500"]


def test_a_rerank_mode_without_a_reranker_is_flagged_not_passed_off(eval_vault, monkeypatch):
    monkeypatch.setenv("BRAIN_RERANK_MODEL", "none")
    vault, queries = eval_vault
    result = _invoke(queries, "--vault", vault, "--modes", "vector,vector+rerank", "--json")
    assert result.exit_code == 0, result.output
    data = json.loads(result.stdout)  # stdout is the JSON object alone
    assert list(data["modes"]) == ["vector", "vector+rerank"]
    assert data["not_reranked"] == {"vector+rerank": 4}  # a script reading stdout alone is told too
    assert "vector+rerank: the reranker did not run for 4 of 4 queries" in result.stderr
    assert "BRAIN_RERANK_MODEL=none" in result.stderr
    text = _invoke(queries, "--vault", vault, "--modes", "vector,vector+rerank")
    assert "vector+rerank*" in text.stdout
    assert "* not reranked: vector+rerank fell back to the order before reranking for 4 of 4" in text.stdout


def test_eval_ab_log_writes_one_row_per_query(eval_vault, brain_home, closing):
    vault, queries = eval_vault
    result = _invoke(queries, "--vault", vault, "--modes", "gated", "--json", "--ab-log", "minibench")
    assert result.exit_code == 0, result.output
    conn = closing(sqlite3.connect(brain_home / "brain.db"))
    rows = conn.execute("SELECT source, mode_a, mode_b, query FROM ab_recall ORDER BY id").fetchall()
    # the pair `brain ask --ab` compares: brain ask's mode without the lanes that read the links, and with them
    assert [r[:3] for r in rows] == [("minibench", "hybrid", "hybrid+ppr")] * 4
    assert [r[3] for r in rows] == ["quokka rottnest", "wombat burrow", "river boat fishing", "lighthouse keeper storm"]
    assert "logged 4 rows to ab_recall (source 'minibench')" in result.stderr


def test_eval_errors_are_one_clear_line(eval_vault, tmp_path):
    vault, queries = eval_vault
    bad_mode = _invoke(queries, "--vault", vault, "--modes", "vector,bogus")
    assert bad_mode.exit_code != 0 and "unknown mode 'bogus'" in bad_mode.output
    missing = write(tmp_path, "missing.jsonl", _line(id="m1", relevant=["Animals/Koala.md", "Animals/Quokka.md"]))
    result = _invoke(missing, "--vault", vault)
    assert result.exit_code != 0
    assert "line 1 (m1): Animals/Koala.md" in result.output
    assert "Traceback" not in result.output
    k_low = _invoke(queries, "--vault", vault, "-k", "5")
    assert k_low.exit_code != 0


# ----- brain eval --explain -----------------------------------------------------------------


def test_explain_shows_each_lane_for_labelled_notes_and_the_top_10(eval_vault):
    vault, queries = eval_vault
    result = _invoke(queries, "--vault", vault, "--explain", "t2", "--json")
    assert result.exit_code == 0, result.output
    [ex] = json.loads(result.stdout)
    assert ex["id"] == "t2" and ex["mode"] == "hybrid+ppr"  # the default mode unless --modes is given
    assert ex["lanes"] == [
        "dense",
        "lexical",
        "names",
        "dates",
        "folders",
        "anchor_dense",
        "anchor_lex",
        "bridge",
        "ppr",
    ]
    relevant, partial = ex["labelled"]
    assert relevant["path"] == "Coast/Lighthouse.md" and relevant["label"] == "relevant"
    assert relevant["fused_rank"] == 1 and relevant["lanes"]["dense"]["rank"] == 1
    assert relevant["lanes"]["lexical"]["rank"] == 1
    assert partial["path"] == "Work/Taxes.md" and partial["label"] == "partial"
    assert partial["lanes"]["lexical"] is None  # no query word in it: BM25 never saw it
    assert len(ex["top"]) == 10 and ex["top"][0]["path"] == "Coast/Lighthouse.md"
    assert ex["metrics"]["ndcg@10"] == 1.0
    assert ex["bm25_searched"] == '"lighthouse" OR "keeper" OR "storm"'  # what the lexical lane was asked


def test_explain_shows_what_bm25_searched_respelt(eval_vault, tmp_path):
    vault, _ = eval_vault
    queries = write(tmp_path, "typo.jsonl", _line(id="y1", query="wombatt", relevant=["Animals/Wombat.md"]) + "\n")
    result = _invoke(queries, "--vault", vault, "--explain", "y1")
    assert result.exit_code == 0, result.output
    assert 'BM25 searched: "wombat"' in result.stdout  # no chunk holds "wombatt"; a note's name is one edit away
    vector = _invoke(queries, "--vault", vault, "--explain", "y1", "--modes", "vector")
    assert "BM25 searched" not in vector.stdout  # no lexical lane, nothing to say


def test_explain_prints_each_searched_term_on_its_line(tmp_path, monkeypatch):
    """A trigram index holds the characters around a word too: "长城有多长" searched "长城\n" (a
    trigram that ends a line of the note), and `--explain` printed it with its newline, cutting
    the BM25 line in two. Such a character is shown escaped; --json keeps the term as it is."""
    monkeypatch.setenv("BRAIN_FTS_TOKENIZER", "trigram")
    vault = tmp_path / "vault"
    write(vault, "Great Wall.md", "# 长城\n\n长城\n很长, 好几千公里。\n")
    for i in range(6):
        write(vault, f"Other {i}.md", f"# Other {i}\n\nNothing about walls here, note {i}.\n")
    queries = write(tmp_path, "q.jsonl", _line(id="c1", query="长城有多长", relevant=["Great Wall.md"]) + "\n")
    data = json.loads(_invoke(queries, "--vault", vault, "--explain", "c1", "--json").stdout)
    assert '"长城\n"' in data[0]["bm25_searched"]  # the term as the index holds it
    text = _invoke(queries, "--vault", vault, "--explain", "c1").stdout
    [searched] = [line for line in text.splitlines() if line.startswith("BM25 searched: ")]
    assert '"长城\\n"' in searched and searched.count('"') == data[0]["bm25_searched"].count('"')


def test_explain_columns_line_up_whatever_the_paths_hold():
    """The table was padded by code points, then its whole text cleaned for the terminal: a path
    holding an escape sequence (a file name may) lost those characters after it was padded, and
    a wide (CJK) one took more cells than were counted; the columns after them moved. --json
    keeps the paths as they are."""
    import unicodedata

    from brain.evaluation.explain import Explanation, LaneHit, Row, format_explanation
    from brain.evaluation.queries import EvalQuery
    from brain.text import terminal_safe

    def cells(text: str) -> int:
        return sum(
            0
            if unicodedata.category(ch) in ("Mn", "Me", "Cf")
            else 2
            if unicodedata.east_asian_width(ch) in "WF"
            else 1
            for ch in text
        )

    paths = [
        "Plain/note.md",
        "Red \x1b[31mflag\x1b[0m.md",
        "東京/会議メモ.md",
        "Tab\there.md",
        "Cafe\u0301 menus.md",
        "x/" + "長い" * 40 + ".md",  # cut to the column
        "a/" + "e\u0301" * 70 + ".md",  # cut, no accent left without its letter
    ]
    rows = [Row(p, "", i, 0.5, {"dense": LaneHit(i, 0.9), "lexical": None}) for i, p in enumerate(paths, 1)]
    query = EvalQuery("q1", "query \x1b]0;a title\x07here", "theme", (paths[1],))
    metrics = {"recall@10": 1.0, "ndcg@10": 1.0, "mrr": 1.0}
    ex = Explanation(query, "hybrid", ["dense", "lexical"], rows[1:2], rows, metrics)
    shown = format_explanation(ex)  # as brain eval --explain prints it
    assert shown == terminal_safe(shown)  # each field cleaned as it was formatted
    table = [line for line in shown.splitlines() if "(0.5000)" in line]
    assert len(table) == len(paths) + 1
    ends = {cells(line[: line.index("(0.5000)")]) + len("(0.5000)") for line in table}
    header = next(line for line in shown.splitlines() if "fused" in line)
    assert ends == {cells(header[: header.index("fused")]) + len("fused")}, shown
    assert "…\u0301" not in shown and ex.as_dict()["top"][1]["path"] == paths[1]


def test_explain_text_for_a_miss_and_several_modes(eval_vault):
    vault, queries = eval_vault
    result = _invoke(queries, "--vault", vault, "--explain", "t1", "--modes", "vector,hybrid")
    assert result.exit_code == 0, result.output
    blocks = result.stdout.split("\n\n\n")
    assert len(blocks) == 2
    assert blocks[0].startswith("t1 (theme): river boat fishing\nmode vector; recall@10 0.00")
    assert "mode hybrid;" in blocks[1]
    miss = next(line for line in blocks[1].splitlines() if "Work/Taxes.md" in line)
    assert miss.split()[0] == "R" and int(miss.split()[2]) > 10  # fused rank shown beyond the top 10
    assert "Fishing/Fishing" in blocks[1].split("fused top 10")[1]


def test_explain_says_when_the_query_is_a_notes_name(eval_vault, tmp_path):
    vault, _ = eval_vault
    queries = write(
        tmp_path,
        "named.jsonl",
        _line(id="n1", query="Wombat", relevant=["Animals/Wombat.md"])
        + "\n"
        + _line(id="n2", query="wombat droppings", relevant=["Animals/Wombat.md"])
        + "\n",
    )
    named = _invoke(queries, "--vault", vault, "--explain", "n1")
    assert named.exit_code == 0, named.output
    assert "the query is the name of Animals/Wombat.md, and only of it: put first" in named.stdout
    data = json.loads(_invoke(queries, "--vault", vault, "--explain", "n1", "--json").stdout)
    assert data[0]["named"] == "Animals/Wombat.md"
    other = _invoke(queries, "--vault", vault, "--explain", "n2", "--json")
    assert json.loads(other.stdout)[0]["named"] is None  # a word more: not its name


def test_explain_an_unknown_id_is_one_clear_line(eval_vault):
    vault, queries = eval_vault
    result = _invoke(queries, "--vault", vault, "--explain", "nope")
    assert result.exit_code != 0
    assert "no query with id 'nope' in the query file" in result.output


def test_a_query_longer_than_ask_takes_is_asked_as_ask_asks_it(eval_vault, tmp_path, monkeypatch):
    """`brain ask` asks a query of more than 10,000 characters by its first words up to that;
    eval asked all of it, every lane of every mode reading a query of 1 MB (17 s a run over
    one note, ask 0.1 s), and scored what ask never answers. Now cut as ask cuts it, and said."""
    from brain.recall.pipeline import Recaller
    from brain.server.protocol import MAX_QUERY_CHARS, cut_query

    vault, _ = eval_vault
    long_query = "quokka rottnest " * 60_000
    queries = write(tmp_path, "long.jsonl", _line(id="l1", query=long_query, relevant=["Animals/Quokka.md"]) + "\n")
    asked: list[str] = []
    ask = Recaller.ask

    def counted(self, query, *args, **kwargs):
        asked.append(query)
        return ask(self, query, *args, **kwargs)

    monkeypatch.setattr(Recaller, "ask", counted)
    result = _invoke(queries, "--vault", vault, "--json")
    assert result.exit_code == 0, result.output
    assert asked and all(query == cut_query(long_query.strip()) for query in asked), {len(q) for q in asked}
    assert all(len(query) <= MAX_QUERY_CHARS for query in asked)
    assert json.loads(result.stdout)["queries"] == 1
    assert "1 query(ies) over the 10,000 characters a query takes" in result.stderr, result.stderr
    assert "l1 (959,999)" in result.stderr, result.stderr
