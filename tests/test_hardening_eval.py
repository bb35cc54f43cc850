"""Measuring must not lie: `brain eval`, its query file, and the A/B log read back by
`brain ab report`. Each test reproduces one defect found by trying to break them. Fake
embedder throughout."""

from __future__ import annotations

import json
import os
import sqlite3
import unicodedata

import pytest
from click.testing import CliRunner
from conftest import write

from brain.cli import cli
from brain.db import connection
from brain.evaluation import queries as queries_module
from brain.evaluation.queries import QueryFileError, load_queries
from brain.telemetry import ABRow, log_ab


def _ab_row(conn, titles: list[str], *, gate_entity: bool = False) -> int:
    row = ABRow("q", "vector", "graph", 10, gate_entity, "", 3, titles, titles, [], [], False, {}, [])
    return log_ab(conn, row, source="work", vault="/v")


def test_ab_report_reads_past_a_row_whose_titles_are_not_json(brain_home):
    """One row written by hand or by another tool, its titles not a JSON list, made the whole
    report "damaged: move it aside" (the database with every turn in it)."""
    with connection() as conn:
        _ab_row(conn, ["Alpha", "Beta"])
        _ab_row(conn, ["Alpha"])
        odd = _ab_row(conn, ["Gamma"])
        conn.execute("UPDATE ab_recall SET via_graph_titles = 'Gamma, Delta' WHERE id = ?", (odd,))
        scalar = _ab_row(conn, ["Epsilon"])
        conn.execute("UPDATE ab_recall SET via_graph_titles = '\"Epsilon\"' WHERE id = ?", (scalar,))
    out = CliRunner().invoke(cli, ["ab", "report"])
    assert out.exit_code == 0, out.output
    assert "damaged" not in out.output
    assert "queries: 4" in out.output and "notes promoted via links: 5" in out.output
    assert "most promoted via links: Alpha (2), Beta (1)" in out.output
    data = json.loads(CliRunner().invoke(cli, ["ab", "report", "--json"]).stdout)
    assert data["all"]["queries"] == 4
    assert data["top_promoted"] == [{"title": "Alpha", "times": 2}, {"title": "Beta", "times": 1}]


LINE = {"id": "a", "query": "apples", "type": "entity", "relevant": ["a.md"]}


def test_a_query_file_saved_with_a_byte_order_mark_is_read(tmp_path):
    """Notepad and PowerShell save UTF-8 with a BOM: the first query was "not valid JSON
    (Unexpected UTF-8 BOM (decode using utf-8-sig))", a Python hint the user cannot act on."""
    write(tmp_path / "v", "a.md", "# A\n\napples\n")
    path = tmp_path / "q.jsonl"
    second = {**LINE, "id": "b"}
    path.write_bytes(b"\xef\xbb\xbf" + (json.dumps(LINE) + "\r\n" + json.dumps(second) + "\r\n").encode())
    assert [q.id for q in load_queries(path, tmp_path / "v")] == ["a", "b"]


def test_a_label_spelt_in_another_unicode_form_is_the_note_on_disk(tmp_path):
    """A title typed as "Zoë Café" (composed, NFC) labels a note saved decomposed (NFD, as macOS
    may write it): the two look the same, and the path was "not a note in the vault"."""
    nfd = unicodedata.normalize("NFD", "People/Zoë Café.md")
    nfc = unicodedata.normalize("NFC", nfd)
    assert nfd != nfc
    vault = tmp_path / "v"
    write(vault, nfd, "# Zoë Café\n\nZoë runs the café by the harbour.\n")
    if (vault / nfc).exists():
        pytest.skip("this file system treats the two forms as one name")
    write(vault, "Other.md", "# Other\n\nnothing to do with it\n")
    path = tmp_path / "q.jsonl"
    path.write_text(json.dumps({**LINE, "query": "Zoë", "relevant": [nfc]}, ensure_ascii=False) + "\n", "utf-8")
    assert load_queries(path, vault)[0].relevant == (nfd,)  # the indexed path, byte for byte
    out = CliRunner().invoke(cli, ["eval", str(path), "--vault", str(vault), "--modes", "vector", "--json"])
    assert out.exit_code == 0, out.output
    assert json.loads(out.stdout)["modes"]["vector"]["all"]["recall@10"] == 1.0  # two notes: always found


def test_a_missing_relevant_path_names_the_note_it_nearly_is(tmp_path):
    vault = tmp_path / "v"
    write(vault, "People/Mirela Okafor.md", "# Mirela\n")
    lines = [
        {**LINE, "id": "case", "relevant": ["people/mirela okafor.md"]},
        {**LINE, "id": "ext", "relevant": ["People/Mirela Okafor"]},
    ]
    path = tmp_path / "q.jsonl"
    path.write_text("\n".join(json.dumps(line) for line in lines) + "\n", "utf-8")
    with pytest.raises(QueryFileError) as caught:
        load_queries(path, vault)
    assert caught.value.problems == [
        "line 1 (case): people/mirela okafor.md (the vault has People/Mirela Okafor.md)",
        "line 2 (ext): People/Mirela Okafor (the vault has People/Mirela Okafor.md)",
    ]


def test_ab_report_says_when_its_figures_mix_sources_or_mode_pairs(brain_home):
    """`brain eval --ab-log minibench` and `brain ask --ab --ab-modes hybrid,hybrid+ppr` write to
    the same table as everyday `brain ask --ab`: the weekly figures took them all in, unsaid."""
    work = ABRow("q", "vector", "graph", 10, False, "", 3, [], [], [], [], False, {}, [])
    with connection() as conn:
        log_ab(conn, work, source="work", vault="/v")
        for _ in range(3):
            log_ab(conn, work, source="minibench", vault="/v")
        log_ab(conn, ABRow(**{**vars(work), "mode_a": "hybrid", "mode_b": "hybrid+ppr"}), source="work", vault="/v")
    out = CliRunner().invoke(cli, ["ab", "report"])
    assert out.exit_code == 0, out.output
    assert (
        "rows from: minibench vector vs graph (3), work hybrid vs hybrid+ppr (1), work vector vs graph (1);"
        " --source picks a source" in out.output
    )
    data = json.loads(CliRunner().invoke(cli, ["ab", "report", "--json"]).stdout)
    assert data["rows_from"] == [
        {"source": "minibench", "mode_a": "vector", "mode_b": "graph", "k": 10, "queries": 3},
        {"source": "work", "mode_a": "hybrid", "mode_b": "hybrid+ppr", "k": 10, "queries": 1},
        {"source": "work", "mode_a": "vector", "mode_b": "graph", "k": 10, "queries": 1},
    ]
    alone = CliRunner().invoke(cli, ["ab", "report", "--source", "minibench"])
    assert alone.exit_code == 0 and "queries: 3" in alone.output and "rows from" not in alone.output


def test_ab_report_names_the_pair_its_figures_are_over(brain_home):
    """The default pair changed (vector vs graph, then hybrid vs hybrid+ppr): a week of one pair's
    rows printed figures that named neither, so which comparison they were over was not said."""
    old = ABRow("q", "vector", "graph", 10, False, "", 3, [], [], [], [], False, {}, [])
    with connection() as conn:
        log_ab(conn, old, source="work", vault="/v")
        log_ab(conn, ABRow(**{**vars(old), "mode_a": "hybrid", "mode_b": "hybrid+ppr"}), source="bench", vault="/v")
    alone = CliRunner().invoke(cli, ["ab", "report", "--source", "work"])
    assert alone.exit_code == 0, alone.output
    assert alone.output.splitlines()[1].startswith("queries: 1 (vector vs graph)   graph changed"), alone.output
    both = CliRunner().invoke(cli, ["ab", "report"])
    assert both.output.splitlines()[1].startswith("queries: 2   graph changed")  # rows from: names each
    assert "rows from: bench hybrid vs hybrid+ppr (1), work vector vs graph (1)" in both.output


def test_ab_report_says_when_its_rows_are_over_different_top_ks(brain_home):
    """`brain ask --ab -k 20` logs whether the graph changed the top 20: the report counted it
    with everyday top-10 rows, one share over both, unsaid."""
    ten = ABRow("q", "vector", "graph", 10, False, "", 3, [], [], [], [], False, {}, [])
    with connection() as conn:
        for _ in range(2):
            log_ab(conn, ten, source="work", vault="/v")
        log_ab(conn, ABRow(**{**vars(ten), "k": 20}), source="work", vault="/v")
    out = CliRunner().invoke(cli, ["ab", "report"])
    assert out.exit_code == 0, out.output
    assert "rows from: work vector vs graph top 10 (2), work vector vs graph top 20 (1)\n" in out.output
    data = json.loads(CliRunner().invoke(cli, ["ab", "report", "--json"]).stdout)
    assert [(g["k"], g["queries"]) for g in data["rows_from"]] == [(10, 2), (20, 1)]


def test_eval_ab_log_failing_mid_run_still_prints_the_figures(tmp_path, monkeypatch):
    """brain.db failing at the second row threw the whole run away: the figures, correct and
    paid for, were never printed."""
    vault = tmp_path / "v"
    write(vault, "a.md", "# Alpha\n\napples and pears\n")
    write(vault, "b.md", "# Beta\n\nboats and rivers\n")
    queries = tmp_path / "q.jsonl"
    queries.write_text(json.dumps(LINE) + "\n" + json.dumps({**LINE, "id": "b", "relevant": ["b.md"]}) + "\n")
    db = tmp_path / "brain.db"
    monkeypatch.setenv("BRAIN_DB", str(db))
    with connection() as conn:  # the first row is written; the second fails, as a damaged page would
        conn.execute(
            "CREATE TRIGGER fail BEFORE INSERT ON ab_recall WHEN (SELECT count(*) FROM ab_recall) >= 1"
            " BEGIN SELECT RAISE(FAIL, 'database disk image is malformed'); END"
        )
    for as_json in (False, True):
        args = ["eval", str(queries), "--vault", str(vault), "--modes", "vector", "--ab-log", "x"]
        result = CliRunner().invoke(cli, args + (["--json"] if as_json else []))
        assert result.exit_code == 1, result.output
        if as_json:
            assert json.loads(result.stdout)["queries"] == 2
        else:
            assert result.stdout.startswith("2 queries over 2 notes") and "nDCG@10" in result.stdout
        error = result.stderr.splitlines()[-1]
        assert error.startswith("Error: ") and str(db) in error and "malformed" in error, result.stderr
        assert "1 of 2 rows were logged to ab_recall" in error
        assert "Traceback" not in result.stderr
        with connection() as conn:
            conn.execute("DELETE FROM ab_recall")


def test_a_query_file_with_a_million_problems_is_not_a_million_lines(tmp_path):
    """A 70 MB file of non-JSON (a CSV, a log passed by mistake) printed one error line per
    line of it: a million lines of terminal for one mistake."""
    path = tmp_path / "q.jsonl"
    path.write_text("id,query,type\n" * 5000 + json.dumps({**LINE, "relevant": ["gone.md"]}) + "\n" * 3)
    vault = tmp_path / "v"
    write(vault, "a.md", "# A\n")
    with pytest.raises(QueryFileError) as caught:
        load_queries(path, vault)
    assert len(caught.value.problems) == 5001  # every one kept for a caller
    message = str(caught.value).splitlines()
    assert message[0] == f"{path}: 5000 problem(s) in the query file:"
    csv = "not a JSON object: it looks like CSV (comma-separated values); write one JSON object per line"
    assert message[1] == f"  line 1: {csv}"
    assert message[50] == f"  line 50: {csv}"
    assert message[51] == "  … and 4950 more"
    assert message[52:] == [
        f"{path}: 1 relevant path(s) are not notes in the vault {vault.resolve()}:",
        "  line 5001 (a): gone.md",
    ]


def test_explain_refuses_the_options_it_would_drop(tmp_path):
    """`--explain ID --ab-log SOURCE` logged nothing and said nothing; --markdown was dropped too."""
    vault = tmp_path / "v"
    write(vault, "a.md", "# A\n\napples\n")
    queries = tmp_path / "q.jsonl"
    queries.write_text(json.dumps(LINE) + "\n")
    for extra in (["--ab-log", "bench"], ["--markdown"]):
        result = CliRunner().invoke(cli, ["eval", str(queries), "--vault", str(vault), "--explain", "a", *extra])
        assert result.exit_code == 2, result.output
        assert f"{extra[0]} does not go with --explain" in result.output
    with connection() as conn:
        assert conn.execute("SELECT count(*) FROM ab_recall").fetchone()[0] == 0


@pytest.mark.parametrize("past", [["--as-of", "0h"], ["--valid-at", "2020-01-01"]])
def test_ask_ab_over_the_past_is_shown_not_logged(toy_vault, past):
    """`--ab --as-of` was logged as an everyday query (before brain kept any history: two empty
    lists where the graph changed nothing), lowering the weekly share with recall nobody had. A
    moment before history is an error now; one since (`0h`: now) is a view of the past all the same."""
    assert CliRunner().invoke(cli, ["index", "--vault", str(toy_vault), "-q"]).exit_code == 0
    result = CliRunner().invoke(cli, ["ask", "--vault", str(toy_vault), "--ab", *past, "graph memory"])
    assert result.exit_code == 0, result.output
    assert "gate:" in result.stdout
    assert "not logged to ab_recall: recall over the past" in result.stderr
    data = json.loads(CliRunner().invoke(cli, ["ask", "--vault", str(toy_vault), "--ab", "--json", *past, "q"]).stdout)
    assert data["ab_recall_id"] is None and data["ab_recall_error"].startswith("recall over the past")
    with connection() as conn:
        assert conn.execute("SELECT count(*) FROM ab_recall").fetchone()[0] == 0


def test_a_query_file_in_utf16_is_read(tmp_path):
    """PowerShell 5's `>` writes UTF-16 with a BOM: "'utf-8' codec can't decode byte 0xff"."""
    write(tmp_path / "v", "a.md", "# A\n\napples\n")
    path = tmp_path / "q.jsonl"
    path.write_bytes((json.dumps({**LINE, "query": "pommes à l'été"}, ensure_ascii=False) + "\r\n").encode("utf-16"))
    assert [q.query for q in load_queries(path, tmp_path / "v")] == ["pommes à l'été"]


def test_a_query_file_that_is_one_json_array_says_so(tmp_path):
    """A pretty-printed JSON array was "not valid JSON" at its brackets and, for one query, the
    line between them taken as a query: the file's one mistake (its format) was never named."""
    path = tmp_path / "q.jsonl"
    for text in (
        json.dumps([LINE, {**LINE, "id": "b"}], indent=2),
        json.dumps([LINE]),
        "[\n" + json.dumps(LINE) + "\n]\n",
    ):
        path.write_text(text)
        with pytest.raises(QueryFileError) as caught:
            load_queries(path)
        assert caught.value.problems == [
            "the file is one JSON array, not JSON Lines: write one query object per line (jq -c '.[]' FILE)"
        ]


def test_a_mode_whose_stage_fell_back_is_marked_not_passed_off(tmp_path):
    """A damaged BM25 index: every `hybrid` query fused without its lexical lane, and the table
    and the JSON gave those figures as hybrid's (only a +rerank mode that fell back was marked)."""
    from brain import config

    vault = tmp_path / "v"
    for i, word in enumerate(["apples", "boats", "clouds", "dunes", "embers"]):
        write(vault, f"n{i}.md", f"# N{i}\n\n{word} and more {word}\n")
    queries = tmp_path / "q.jsonl"
    lines = [
        {**LINE, "id": word, "query": word, "relevant": [f"n{i}.md"]} for i, word in enumerate(["apples", "boats"])
    ]
    queries.write_text("\n".join(json.dumps(line) for line in lines) + "\n")
    assert CliRunner().invoke(cli, ["index", "--vault", str(vault), "-q"]).exit_code == 0
    conn = sqlite3.connect(config.index_dir(vault) / "index.db")
    conn.execute("DELETE FROM chunks_fts_data WHERE id > 1")  # the BM25 index's pages, gone
    conn.commit()
    conn.close()
    args = ["eval", str(queries), "--vault", str(vault), "--modes", "vector,hybrid"]
    data = json.loads(CliRunner().invoke(cli, [*args, "--json"]).stdout)
    failed = data["fell_back"]["hybrid"]["lexical"]  # the queries that searched BM25 at all
    assert list(data["fell_back"]) == ["hybrid"] and list(data["fell_back"]["hybrid"]) == ["lexical"] and failed >= 1
    text = CliRunner().invoke(cli, args)
    assert text.exit_code == 0, text.output
    assert next(line for line in text.stdout.splitlines() if line.startswith("MRR")).split() == [
        "MRR",
        "n",
        "vector",
        "hybrid*",
    ]
    assert f"* fell back: hybrid without its lexical stage for {failed} of 2 queries" in text.stdout


def test_explain_says_the_lexical_lane_failed_not_that_no_word_matched(tmp_path):
    """With the BM25 index damaged, --explain printed "BM25 searched: (no word of the query is in
    the index)" (bm25_searched null): the words were there, the lane had failed."""
    from brain import config

    vault = tmp_path / "v"
    for i, word in enumerate(["apples", "boats", "clouds"]):
        write(vault, f"n{i}.md", f"# N{i}\n\n{word} and more {word}\n")
    queries = tmp_path / "q.jsonl"
    queries.write_text(json.dumps({**LINE, "relevant": ["n0.md"]}) + "\n")
    assert CliRunner().invoke(cli, ["index", "--vault", str(vault), "-q"]).exit_code == 0
    conn = sqlite3.connect(config.index_dir(vault) / "index.db")
    conn.execute("DELETE FROM chunks_fts_data WHERE id > 1")
    conn.commit()
    conn.close()
    args = ["eval", str(queries), "--vault", str(vault), "--modes", "hybrid", "--explain", "a"]
    text = CliRunner().invoke(cli, args)
    assert text.exit_code == 0, text.output
    assert "no word of the query is in the index" not in text.stdout
    assert "BM25 searched: nothing, the lexical lane fell back (see the warning)" in text.stdout
    data = json.loads(CliRunner().invoke(cli, [*args, "--json"]).stdout)[0]
    assert data["fell_back"] == ["lexical"] and data["bm25_searched"] is None


def test_ab_report_has_one_line_per_gate_decision_whatever_the_rows_hold(brain_home):
    """A row with gate_entity 2 (written by hand) was a second "not entity" line."""
    with connection() as conn:
        _ab_row(conn, [])
        odd = _ab_row(conn, [])
        conn.execute("UPDATE ab_recall SET gate_entity = 2 WHERE id = ?", (odd,))
        _ab_row(conn, [], gate_entity=True)
    data = json.loads(CliRunner().invoke(cli, ["ab", "report", "--json"]).stdout)
    assert [(r["gate"], r["queries"]) for r in data["by_gate"]] == [("not entity", 2), ("entity", 1)]


def test_the_readmes_weekly_sql_gives_the_reports_figures(brain_home):
    """The README's plain SQL, run on rows as `brain ask --ab` writes them, says what
    `brain ab report` says (it is the promise that the figures are a query, not a belief)."""
    import re
    from pathlib import Path

    readme = (Path(__file__).resolve().parent.parent / "README.md").read_text(encoding="utf-8")
    sql = re.search(r"```sql\n(SELECT CASE gate_entity.*?)```", readme, re.S).group(1)
    with connection() as conn:
        _ab_row(conn, ["Alpha", "Beta"])  # changed, two via links
        _ab_row(conn, [])  # unchanged
        _ab_row(conn, ["Gamma"], gate_entity=True)
        old = _ab_row(conn, ["Old"])
        conn.execute("UPDATE ab_recall SET created_at = '2000-01-01 00:00:00' WHERE id = ?", (old,))
        # B's graph fell back: it ran as vector, compared nothing, and is left out of the figures.
        fell_back = _ab_row(conn, ["Fell back"])
        conn.execute("UPDATE ab_recall SET mode_b = 'vector' WHERE id = ?", (fell_back,))
        rows = [tuple(r) for r in conn.execute(sql)]
    assert rows == [("not entity", 2, 0.5, 2, 3.0), ("entity", 1, 1.0, 1, 3.0)]
    data = json.loads(CliRunner().invoke(cli, ["ab", "report", "--json"]).stdout)
    assert [
        (r["gate"], r["queries"], r["share_changed"], r["promoted_via_graph"], r["avg_candidates_added"])
        for r in data["by_gate"]
    ] == rows
    assert data["not_compared"] == 1 and {"title": "Fell back", "times": 1} not in data["top_promoted"]


@pytest.mark.parametrize("label", ["", "  "])
def test_eval_ab_log_with_an_empty_label_is_a_usage_error(tmp_path, label):
    """`--ab-log ""` (an unset shell variable) logged nothing and said nothing; "  " logged rows
    under a label no `--source` could be typed for."""
    write(tmp_path / "v", "a.md", "# A\n\napples\n")
    queries = tmp_path / "q.jsonl"
    queries.write_text(json.dumps(LINE) + "\n")
    result = CliRunner().invoke(cli, ["eval", str(queries), "--vault", str(tmp_path / "v"), "--ab-log", label])
    assert result.exit_code == 2 and "--ab-log needs a source label" in result.output, result.output


def test_a_query_with_a_unicode_line_separator_is_one_line(tmp_path):
    """json.dumps(ensure_ascii=False) leaves U+2028 and U+0085 raw inside a string (text pasted
    from a web page): lines were split there, so a valid file was "not valid JSON", and every
    later line number was off."""
    write(tmp_path / "v", "a.md", "# A\n\napples\n")
    queries = [{**LINE, "id": "ls", "query": "apples\u2028pears"}, {**LINE, "id": "nel", "query": "apples\x85pears"}]
    path = tmp_path / "q.jsonl"
    text = "\n".join(json.dumps(q, ensure_ascii=False) for q in queries) + "\n" + '{"id": "bad"}\n'
    path.write_text(text, encoding="utf-8")
    with pytest.raises(QueryFileError) as caught:
        load_queries(path, tmp_path / "v")
    assert caught.value.problems == ["line 3: missing field(s): query, type, relevant"]
    path.write_text(text.replace('{"id": "bad"}\n', ""), encoding="utf-8")
    assert [(q.line, q.query) for q in load_queries(path, tmp_path / "v")] == [
        (1, "apples\u2028pears"),
        (2, "apples\x85pears"),
    ]


def test_a_query_file_with_old_mac_line_endings_is_still_read(tmp_path):
    write(tmp_path / "v", "a.md", "# A\n\napples\n")
    path = tmp_path / "q.jsonl"
    path.write_bytes((json.dumps(LINE) + "\r" + json.dumps({**LINE, "id": "b"}) + "\r").encode())
    assert [(q.id, q.line) for q in load_queries(path, tmp_path / "v")] == [("a", 1), ("b", 2)]


def test_eval_warnings_reach_a_terminal_only_as_text(tmp_path):
    """A relevant note the index skips is named in a warning: its file name's escape sequence
    went to the terminal raw (click strips it only when stderr is not a terminal)."""
    vault = tmp_path / "v"
    name = "evil\x1b[31mRED.md"
    write(vault, "a.md", "# A\n\napples\n")
    # a note the indexer skips (one .brainignore'd is no note): binary, a NUL beside another control byte
    (vault / name).write_bytes(b"# E\n\x00\x01 binary\n")
    queries = tmp_path / "q.jsonl"
    queries.write_text(json.dumps({**LINE, "relevant": [name, "a.md"]}) + "\n")
    result = CliRunner().invoke(cli, ["eval", str(queries), "--vault", str(vault), "--modes", "vector"], color=True)
    assert result.exit_code == 0, result.output
    assert "not in the index" in result.stderr and "evil\\x1b[31mRED.md" in result.stderr  # shown as its escape
    assert "\x1b" not in result.stderr


def test_ask_ab_gate_line_reaches_a_terminal_only_as_text(tmp_path):
    """The gate's reason names the note a query is the alias of: that note's file name went to
    the terminal raw, escape sequence and all."""
    vault = tmp_path / "v"
    write(vault, "a.md", "# A\n\napples\n")
    write(vault, "Zed\x1b[31mRed.md", "---\naliases: [Zebulon]\n---\nhello\n")
    assert CliRunner().invoke(cli, ["index", "--vault", str(vault), "-q"]).exit_code == 0
    result = CliRunner().invoke(cli, ["ask", "--vault", str(vault), "--ab", "Zebulon"], color=True)
    assert result.exit_code == 0, result.output
    assert "gate: entity (the query is the title or alias of [[Zed\\x1b[31mRed.md]])" in result.stdout
    assert "\x1b" not in result.stdout
    graph = CliRunner().invoke(cli, ["ask", "--vault", str(vault), "--graph", "Zebulon"], color=True)
    assert graph.exit_code == 0, graph.output
    assert "(graph skipped: the query is the title or alias of [[Zed\\x1b[31mRed.md]])" in graph.stderr
    assert "\x1b" not in graph.stderr


def test_a_number_too_long_for_python_is_a_listed_problem(tmp_path):
    # Python refuses to read an integer of more than 4300 digits: a ValueError traceback.
    path = tmp_path / "q.jsonl"
    path.write_text('{"id": 1' + "0" * 5000 + ', "query": "a", "type": "entity", "relevant": ["a.md"]}\n')
    write(tmp_path / "v", "a.md", "# A\n")
    with pytest.raises(QueryFileError) as caught:
        load_queries(path, tmp_path / "v")
    assert caught.value.problems == ["line 1: not valid JSON (a number of more than 4300 digits)"]


def test_a_query_file_that_is_no_regular_file_or_too_large_is_one_line(tmp_path, monkeypatch):
    # `brain eval /dev/zero` read until memory ran out; a FIFO waited for a writer for good.
    fifo = tmp_path / "q.fifo"
    os.mkfifo(fifo)
    write(tmp_path / "v", "a.md", "# A\n")
    for source in ("/dev/zero", str(fifo)):
        result = CliRunner().invoke(cli, ["eval", source, "--vault", str(tmp_path / "v")])
        assert result.exit_code == 1 and result.output.count("\n") == 1, result.output
        assert f"Error: the query file {source} is not a regular file (a device, FIFO or socket)" in result.output
    monkeypatch.setattr(queries_module, "MAX_FILE_MB", 1)
    big = tmp_path / "big.jsonl"
    big.write_text((json.dumps(LINE) + "\n") * 20_000)  # 1.4 MB
    with pytest.raises(QueryFileError, match=r"^the query file .*big.jsonl is over 1 MB: a query file is not that"):
        load_queries(big)


def test_a_relevant_file_brain_leaves_out_is_listed_before_the_run(tmp_path):
    # Such a path was accepted, the query scored as a miss, and only a warning said why.
    vault = tmp_path / "v"
    for rel in ("a.md", ".hidden/H.md", "notes.txt", "Drafts/D.md", "a.sync-conflict-20240101-1234-ABC.md"):
        write(vault, rel, "# A\n\napples\n")
    write(vault, ".brainignore", "Drafts/\n")
    (vault / "Link.md").symlink_to(vault / ".hidden" / "H.md")
    left_out = [".hidden/H.md", "notes.txt", "Drafts/D.md", "a.sync-conflict-20240101-1234-ABC.md", "Link.md"]
    path = tmp_path / "q.jsonl"
    path.write_text(json.dumps({**LINE, "relevant": ["a.md", *left_out]}) + "\n")
    with pytest.raises(QueryFileError) as caught:
        load_queries(path, vault)
    assert caught.value.problems == [
        "line 1 (a): .hidden/H.md (a file brain leaves out: dot-folder)",
        "line 1 (a): notes.txt (a file brain leaves out: not .md)",
        "line 1 (a): Drafts/D.md (a file brain leaves out: brainignore)",
        "line 1 (a): a.sync-conflict-20240101-1234-ABC.md (a file brain leaves out: sync-conflict)",
        "line 1 (a): Link.md (a file brain leaves out: dot-folder)",
    ]
    result = CliRunner().invoke(cli, ["eval", str(path), "--vault", str(vault), "--modes", "vector"])
    assert result.exit_code == 1 and "5 relevant path(s) are not notes in the vault" in result.output
    assert "Indexing" not in result.output and "recall@" not in result.output  # nothing ran


def test_a_relevant_path_with_a_control_character_is_shown_escaped(tmp_path):
    # "a.md\u0000" was listed as "a.md": terminal_safe took the NUL out, and the label looked right.
    write(tmp_path / "v", "a.md", "# A\n")
    path = tmp_path / "q.jsonl"
    path.write_text(json.dumps({**LINE, "relevant": ["a.md\u0000", "a.md"]}) + "\n")
    result = CliRunner().invoke(cli, ["eval", str(path), "--vault", str(tmp_path / "v")])
    assert result.exit_code == 1
    assert result.output.splitlines()[-1] == "  line 1 (a): 'a.md\\x00'"


def test_a_line_that_is_no_object_is_named_in_jsons_words(tmp_path):
    # "got NoneType", "got list", "got str": Python's names, for a file the labeller wrote in JSON.
    path = tmp_path / "q.jsonl"
    path.write_text('null\n[1]\n"a"\n4.5\ntrue\n')
    with pytest.raises(QueryFileError) as caught:
        load_queries(path)
    assert caught.value.problems == [
        f"line {n}: expected a JSON object, got {kind}"
        for n, kind in enumerate(("null", "an array", "a string", "a number", "true"), start=1)
    ]


def test_a_relevant_note_labelled_by_its_title_or_link_names_the_note(tmp_path):
    # A label written as the note's title, its file name or a wikilink, not its path, was listed
    # bare ("line 1 (a): Mirela Okafor"): the note that name means was never named.
    vault = tmp_path / "v"
    write(vault, "People/Mirela Okafor.md", "# Mirela\n")
    write(vault, "Inbox/Plan.md", "# Plan\n")
    write(vault, "Projects/Plan.md", "# Plan\n")
    labels = [
        "Mirela Okafor",
        "mirela okafor.md",
        "[[Mirela Okafor|Mirela]]",
        "Old/Mirela Okafor#Role",
        "Plan",
        "Nobody",
    ]
    path = tmp_path / "q.jsonl"
    path.write_text("\n".join(json.dumps({**LINE, "id": f"q{i}", "relevant": [p]}) for i, p in enumerate(labels)))
    with pytest.raises(QueryFileError) as caught:
        load_queries(path, vault)
    has = "(the vault has People/Mirela Okafor.md)"
    assert caught.value.problems == [
        f"line 1 (q0): Mirela Okafor {has}",
        f"line 2 (q1): mirela okafor.md {has}",
        f"line 3 (q2): [[Mirela Okafor|Mirela]] {has}",
        f"line 4 (q3): Old/Mirela Okafor#Role {has}",
        "line 5 (q4): Plan (the vault has Inbox/Plan.md, Projects/Plan.md)",
        "line 6 (q5): Nobody",
    ]


def test_a_large_query_file_checks_each_labelled_note_once(tmp_path, monkeypatch):
    # 50,000 queries over a few hundred notes: each line's paths were looked up again, the
    # ignore rules and realpath for each, 52 s of checking before the index was opened.
    vault = tmp_path / "v"
    write(vault, "a.md", "# A\n")
    write(vault, "Sub/b.md", "# B\n")
    calls = []

    def counted(root, rel, ignore=None):
        calls.append(rel)
        return real(root, rel, ignore)

    real = queries_module.left_out_now
    monkeypatch.setattr(queries_module, "left_out_now", counted)
    path = tmp_path / "q.jsonl"
    lines = (json.dumps({**LINE, "id": i, "relevant": ["a.md", "Sub/b.md"]}) for i in range(2000))
    path.write_text("\n".join(lines))
    assert len(load_queries(path, vault)) == 2000
    assert sorted(calls) == ["Sub/b.md", "a.md"]


def test_eval_ab_log_stopped_by_ctrl_c_leaves_no_rows(tmp_path, monkeypatch):
    # Ctrl-C at the third query printed no figures but left the first two queries' rows in
    # ab_recall under the label: half a benchmark, mixed by `brain ab report` with the next run's.
    from brain.recall.pipeline import Recaller

    vault = tmp_path / "v"
    write(vault, "a.md", "# Alpha\n\napples and pears\n")
    write(vault, "b.md", "# Beta\n\nboats and rivers\n")
    queries = tmp_path / "q.jsonl"
    queries.write_text("\n".join(json.dumps({**LINE, "id": i}) for i in range(4)))
    monkeypatch.setenv("BRAIN_DB", str(tmp_path / "brain.db"))
    with connection() as conn:  # a row of another run, which stays
        _ab_row(conn, ["Alpha"])
    asked = []
    real_ask = Recaller.ask

    def ask(self, *args, **kwargs):
        asked.append(args[0])
        if len(asked) == 4:  # the warm-up, two queries, then Ctrl-C
            raise KeyboardInterrupt
        return real_ask(self, *args, **kwargs)

    monkeypatch.setattr(Recaller, "ask", ask)
    args = ["eval", str(queries), "--vault", str(vault), "--modes", "vector", "--ab-log", "bench"]
    result = CliRunner().invoke(cli, args)
    assert result.exit_code == 1 and result.output.strip().endswith("Aborted!"), result.output
    with connection() as conn:
        rows = conn.execute("SELECT source, count(*) FROM ab_recall GROUP BY source").fetchall()
        assert [tuple(row) for row in rows] == [("work", 1)]


def test_eval_refuses_markdown_with_json(tmp_path):
    # `--json --markdown` printed the JSON and dropped the markdown without a word.
    write(tmp_path / "v", "a.md", "# A\n")
    path = tmp_path / "q.jsonl"
    path.write_text(json.dumps(LINE) + "\n")
    result = CliRunner().invoke(cli, ["eval", str(path), "--vault", str(tmp_path / "v"), "--json", "--markdown"])
    assert result.exit_code == 2 and result.stdout == "", result.output
    assert result.stderr.count("\n") == 1 and "--markdown does not go with --json" in result.stderr


@pytest.mark.skipif(not os.path.exists("/dev/full"), reason="needs /dev/full")
@pytest.mark.parametrize("as_json", [False, True])
def test_figures_written_to_a_full_disk_are_one_error_line(tmp_path, monkeypatch, as_json):
    # `brain eval ... --json > out.json` on a full disk: Python's traceback of click.echo.
    import click

    write(tmp_path / "v", "a.md", "# A\n\napples\n")
    path = tmp_path / "q.jsonl"
    path.write_text(json.dumps(LINE) + "\n")
    with open("/dev/full", "w") as full:
        monkeypatch.setattr("sys.stdout", full)
        args = ["eval", str(path), "--vault", str(tmp_path / "v"), "--modes", "vector"]
        with pytest.raises(click.ClickException) as caught:
            cli.main([*args, *(["--json"] if as_json else [])], prog_name="brain", standalone_mode=False)
    assert caught.value.message == "cannot write the output: No space left on device"


def test_an_id_padded_with_spaces_is_the_id_without_them(tmp_path):
    # {"id": " q1"} was not found by `--explain q1`, and was no duplicate of "q1".
    write(tmp_path / "v", "a.md", "# A\n")
    path = tmp_path / "q.jsonl"
    path.write_text(json.dumps({**LINE, "id": " q1 "}) + "\n")
    assert [q.id for q in load_queries(path, tmp_path / "v")] == ["q1"]
    path.write_text(json.dumps({**LINE, "id": " q1 "}) + "\n" + json.dumps({**LINE, "id": "q1"}) + "\n")
    with pytest.raises(QueryFileError) as caught:
        load_queries(path, tmp_path / "v")
    assert caught.value.problems == ["line 2: duplicate id 'q1' (first on line 1)"]


def test_a_partial_note_not_in_the_vault_is_listed_before_the_run(tmp_path):
    # It was accepted, and --explain showed it as a labelled note no lane proposed: a miss of
    # the lanes', where it was a mistake in the label.
    write(tmp_path / "v", "a.md", "# A\n")
    write(tmp_path / "v", "People/Ines.md", "# Ines\n")
    path = tmp_path / "q.jsonl"
    path.write_text(json.dumps({**LINE, "partial": ["a.md", "Nobody.md", "Ines"]}) + "\n")
    result = CliRunner().invoke(cli, ["eval", str(path), "--vault", str(tmp_path / "v"), "--explain", "a"])
    assert result.exit_code == 1
    assert result.output.splitlines()[1:] == [
        "  line 1 (a), partial: Nobody.md",
        "  line 1 (a), partial: Ines (the vault has People/Ines.md)",
    ]
    assert "2 relevant or partial path(s) are not notes in the vault" in result.output.splitlines()[0]


def test_a_query_that_asks_nothing_is_a_listed_problem(tmp_path):
    # "???" passed the check; the run built the index, then stopped at it with brain ask's
    # line, which named no line or id, and no figure of the other queries was printed.
    write(tmp_path / "v", "a.md", "# A\n\napples\n")
    path = tmp_path / "q.jsonl"
    path.write_text(json.dumps(LINE) + "\n" + json.dumps({**LINE, "id": "b", "query": " ?! "}) + "\n")
    result = CliRunner().invoke(cli, ["eval", str(path), "--vault", str(tmp_path / "v"), "--modes", "vector"])
    assert result.exit_code == 1 and "recall@" not in result.output
    assert result.output.splitlines()[1:] == [
        "  line 2: query ' ?! ' asks nothing (no letter, digit or symbol): give words or a question"
    ]


def test_an_unknown_mode_is_a_usage_error(tmp_path):
    # `--modes vectr` exited 1, where every other usage error (-k 0, --json --markdown) exits 2;
    # brain ask --mode alike.
    write(tmp_path / "v", "a.md", "# A\n")
    path = tmp_path / "q.jsonl"
    path.write_text(json.dumps(LINE) + "\n")
    vault = str(tmp_path / "v")
    for args, option in (
        (["eval", str(path), "--vault", vault, "--modes", "vector,vectr"], "--modes"),
        (["eval", str(path), "--vault", vault, "--modes", ","], "--modes"),
        (["ask", "apples", "--vault", vault, "--mode", "vectr"], "--mode"),
        (["ask", "apples", "--vault", vault, "--ab", "--ab-modes", "vector,vectr"], "--ab-modes"),
    ):
        result = CliRunner().invoke(cli, args)
        assert result.exit_code == 2 and result.stdout == "", (args, result.output)
        assert result.stderr.count("\n") == 1 and f"Invalid value for {option}:" in result.stderr, result.stderr


def test_an_explained_id_padded_with_spaces_is_the_id_without_them(tmp_path):
    # The file's ids are trimmed, `--explain " a "` was not: "no query with id ' a '".
    write(tmp_path / "v", "a.md", "# A\n\napples\n")
    path = tmp_path / "q.jsonl"
    path.write_text(json.dumps(LINE) + "\n")
    args = ["eval", str(path), "--vault", str(tmp_path / "v"), "--modes", "vector", "--json", "--explain", " a "]
    result = CliRunner().invoke(cli, args)
    assert result.exit_code == 0, result.output
    assert [e["id"] for e in json.loads(result.stdout)] == ["a"]


def test_a_csv_line_or_two_objects_on_a_line_are_named_not_json_s_words(tmp_path):
    # A CSV line was "not valid JSON (Extra data at column 2)", the JSON decoder's words.
    write(tmp_path / "v", "a.md", "# A\n")
    path = tmp_path / "q.jsonl"
    lines = ["id,query,relevant", "1,apples,a.md", '"q1",apples', json.dumps(LINE) + " " + json.dumps(LINE), "{x"]
    path.write_text("\n".join(lines) + "\n")
    with pytest.raises(QueryFileError) as caught:
        load_queries(path, tmp_path / "v")
    csv = "not a JSON object: it looks like CSV (comma-separated values); write one JSON object per line"
    column = len(json.dumps(LINE)) + 2
    assert caught.value.problems == [
        f"line 1: {csv}",
        f"line 2: {csv}",
        f"line 3: {csv}",
        f"line 4: more than one JSON value: another begins at column {column} (write one query object per line)",
        "line 5: not valid JSON (Expecting property name enclosed in double quotes at column 2)",
    ]


def test_a_line_of_words_holding_a_comma_is_not_called_csv(tmp_path):
    """Any line with a comma was "it looks like CSV": a file of sentences, or one sentence among
    the JSON lines, was named a spreadsheet's; CSV is said of a file whose lines all are, as a
    spreadsheet writes them, quoted fields and all."""
    write(tmp_path / "v", "a.md", "# A\n")
    path = tmp_path / "q.jsonl"
    csv = "not a JSON object: it looks like CSV (comma-separated values); write one JSON object per line"
    cases = {
        "Which note says how memory works, and why?\nThe one on graphs, I think.\n": "not valid JSON (Expecting value",
        json.dumps(LINE) + "\nAlso this one, by the way\n": "not valid JSON (Expecting value",
        'id,query,relevant\nq1,"apples, pears",a.md\n': csv,
    }
    for text, said in cases.items():
        path.write_text(text)
        with pytest.raises(QueryFileError) as caught:
            load_queries(path, tmp_path / "v")
        problems = [p for p in caught.value.problems if p.startswith("line ")]
        assert problems and all(p.split(": ", 1)[1].startswith(said) for p in problems), (text, problems)


def test_a_relevant_note_linked_to_a_file_that_is_no_note_is_listed(tmp_path):
    """The walk skips a note whose link leads to a file that is no note (Key.md to a .txt out
    of the vault); the query file's check, a copy of older rules, took it for a note."""
    vault = tmp_path / "v"
    write(vault, "a.md", "# A\n\napples\n")
    (tmp_path / "secret.txt").write_text("not a note\n")
    (vault / "Key.md").symlink_to(tmp_path / "secret.txt")
    path = tmp_path / "q.jsonl"
    path.write_text(json.dumps({**LINE, "relevant": ["a.md", "Key.md"]}) + "\n")
    with pytest.raises(QueryFileError) as caught:
        load_queries(path, vault)
    assert caught.value.problems == ["line 1 (a): Key.md (a file brain leaves out: not-a-note)"]


@pytest.mark.parametrize("given", ["", "  "])
def test_a_blank_query_file_name_is_a_usage_error_not_the_working_folder(tmp_path, given):
    # Path("") is ".": `brain eval "$Q"` with Q unset said the query file "." is "not a regular
    # file (a device, FIFO or socket)"
    write(tmp_path / "v", "a.md", "# A\n")
    result = CliRunner().invoke(cli, ["eval", given, "--vault", str(tmp_path / "v")])
    assert result.exit_code == 2, result.output
    assert f"{given!r} names no file: give the query file (JSON Lines)" in result.output
    assert "FIFO" not in result.output


def test_a_folder_as_the_query_file_says_so(tmp_path):
    write(tmp_path / "v", "a.md", "# A\n")
    with pytest.raises(QueryFileError, match=r"^the query file .* is a folder: name the JSON Lines file in it$"):
        load_queries(tmp_path / "v")


def test_a_query_file_named_longer_than_the_system_takes_is_one_short_line(tmp_path):
    # a pasted 5,000-character path was printed whole, twice (brain's words and OSError's own)
    named = tmp_path / ("q" * 5000 + ".jsonl")
    out = CliRunner().invoke(cli, ["eval", str(named), "--vault", str(tmp_path)])
    assert out.exit_code == 1 and len(out.output.splitlines()) == 1, out.output
    assert len(out.output) < 300 and "File name too long" in out.output and "q.jsonl" in out.output, out.output
