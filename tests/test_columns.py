"""Every table and padded row brain prints for a person, as a terminal shows it, whatever the
vault or the ledger holds: a tab (one code point, up to eight cells), a line break (the row
ends), an escape sequence (acted on, its characters taking no cells), wide CJK characters (two
cells each) and a combining mark (none). The right column starts at one cell on every row, and
nothing reaches the terminal that it would act on. --json keeps every value as it is."""

from __future__ import annotations

from terminal_helpers import ENDS, HOSTILE, acting, cells, start

from brain.output import result_text
from brain.recall.types import Candidate, Gate, RecallResult, Via

CJK_TEXT = "東京の会議では長い議題について話し合いました" * 8  # no space to break a line at


def test_ask_keeps_each_result_in_its_columns():
    """A title or heading holding a line break ended its line, the rest at the terminal's
    first cell, under the rank; a tab moved what followed it; and the snippet was wrapped by
    code points: a line of CJK took twice the cells counted and the terminal wrapped it again,
    under the rank."""
    notes = [
        Candidate(
            i,
            f"{v}/{v}.md",
            v,
            i,
            v,
            f"{v} {CJK_TEXT}",
            0.5,
            0.5,
            date="2026-01-02",
            via=Via("x.md", v, "links to", "wikilink"),
        )
        for i, v in enumerate(HOSTILE)
    ]
    result = RecallResult("東京 会議", "hybrid", Gate(False, "x"), notes)
    # 100: a path is never cut (it is what a user copies), and "Red \x1b[31mflag\x1b[0m" twice, its
    # controls shown as escapes, is a row of 87 cells
    shown = result_text(result, width=100)
    assert not acting(shown), shown
    lines = shown.splitlines()
    ranks = [line for line in lines if line[:3].strip().rstrip(".").isdigit()]
    assert len(ranks) == len(HOSTILE), shown
    # the rest of each result under its title, at one cell: none under the rank
    assert all(line.startswith(" " * 11) and line[11] != " " for line in lines if line not in ranks), shown
    assert [lines[lines.index(rank) + 1].count(" › ") for rank in ranks] == [1] * len(HOSTILE), shown
    assert max(cells(line) for line in lines) <= 100, shown
    assert notes[1].title == "Line\nbreak"


def test_history_keeps_its_versions_in_their_columns():
    """`brain history`: a path or a section heading (in what changed) holding a line break ended
    its row, the rest at the terminal's first cell, and a tab was left for the terminal to act
    on; a link's target, a title in the header or in the supersession chain the same."""
    from brain.recall.timeline import LinkSpan, NoteHistory, VersionEntry, history_text

    versions = [
        VersionEntry("changed", None, "2026-01-02T10:00:00Z", None, f"{v}.md", v, 10, "h", None, True, f"sections: {v}")
        for v in HOSTILE
    ]
    links = [LinkSpan(f"{v}.md", v, v, "wikilink", "2026-01-02T10:00:00Z", None, then=f"{v} then.md") for v in HOSTILE]
    # where each is now too (a path another note took, or its own path since): a field of its own
    chain = [
        {"path": f"{v}.md", "title": v, "date": "2026-01-01", "note_id": 2, "now": f"{v} since.md"} for v in HOSTILE
    ]
    history = NoteHistory(1, HOSTILE[1] + ".md", HOSTILE[0], True, versions, links, links, chain, chain)
    shown = history_text(history)
    assert not acting(shown), shown
    lines = shown.splitlines()
    n = len(HOSTILE)
    assert len(lines) == 3 + 2 * n + 2 * (2 + n) + 2 + 2 * n, shown  # no row broken in two
    rows = lines[3 : 3 + 2 * n]
    assert all(row.startswith("  2026-") and row.endswith(".md") for row in rows[::2]), shown
    assert [start(row, "sections: ") for row in rows[1::2]] == [40] * n, shown  # under the path
    assert all(line.startswith(("  + [[", "  replace")) for line in lines[3 + 2 * n :] if line[:1] == " "), shown
    assert versions[1].path == "Line\nbreak.md"


def _turn(v: str, n: int) -> dict:
    return {
        "started_at": "2026-01-02T10:00:00Z",
        "project": v,
        "git_branch": v,
        "session_id": f"{n}{v}",
        "cwd": "/w",
        "ask": v + " " + CJK_TEXT,
        "summary": v,
        "files_written": [f"/w/{v}.md"],
        "files_read": [f"/w/{v}.txt"],
        "tools": {v: 2},
        "commands": [v],
        "decisions": [v],
        "subagents": [{"type": v, "description": v}],
    }


def test_turns_keep_each_field_on_its_row():
    """`brain turns`: a project, branch, written or read path or tool name holding a line break
    ended its row, the rest at the terminal's first cell; a tab was left for the terminal; an
    ask clipped by code points took twice its cells in CJK (the terminal wrapped it under the
    field names)."""
    from brain.ledger.cli import _format_stats, _format_turn

    for n, v in enumerate(HOSTILE):
        shown = _format_turn(_turn(v, n))
        assert not acting(shown), shown
        lines = shown.splitlines()
        names = ["ask", "summary", "wrote", "read", "tools", "$", "decided", "subagent"]
        assert [line[2:11].strip() for line in lines[1:]] == names, shown
        assert all(line[:2] == "  " and line[10] == " " and line[11] != " " for line in lines[1:]), shown
        assert max(cells(line) for line in lines) <= 11 + 110, shown
    stats = {
        "turns": 5,
        "per_day": [{"day": "2026-01-02", "turns": 1, "project": v} for v in HOSTILE],
        "top_tools": [{"uses": 1, "turns": 1, "tool": v} for v in HOSTILE],
        "top_files": [{"turns": 1, "file": v} for v in HOSTILE],
    }
    shown = _format_stats(stats, 14)
    assert not acting(shown), shown
    assert len(shown.splitlines()) == 3 + 3 * (2 + len(HOSTILE)) - 2, shown  # no row broken in two


def test_recalls_keep_each_field_on_its_row():
    """`brain recalls`: a prompt, path or reason cut by code points took twice its cells in CJK
    (the terminal wrapped it under the field names)."""
    from brain.autorecall.cli import _format_recall

    for v in HOSTILE:
        row = {
            "created_at": "2026-01-02T10:00:00Z",
            "session_id": v,
            "latency_ms": 12,
            "shown": 1,
            "chars": 10,
            "prompt": f"{v} {CJK_TEXT}",
            "notes": [{"path": f"{v}/{CJK_TEXT}.md", "via": v, "dense_score": 0.5}],
            "detail": f"{v} {CJK_TEXT}",
        }
        shown = _format_recall(row)
        assert not acting(shown), shown
        lines = shown.splitlines()
        assert [line[2:10].strip() for line in lines[1:]] == ["prompt", "shown", "why"], shown
        assert all(line[:2] == "  " and line[9] == " " and line[10] != " " for line in lines[1:]), shown
        assert cells(lines[1]) <= 10 + 100 and cells(lines[3]) <= 10 + 100, shown
    assert "Tab\\there/a  b.md" in _format_recall(
        {**row, "notes": [{"path": "Tab\there/a  b.md"}]}
    )  # a path as written


def test_status_lists_each_file_on_its_row(toy_vault, brain_home):
    """`brain status -v`: a pending or skipped file whose name holds a line break ended its row,
    the rest at the terminal's first cell, and a tab was left for the terminal; the output was
    cleaned for the terminal, which keeps both."""
    from click.testing import CliRunner

    from brain.cli import cli
    from brain.index.indexer import index_vault

    for v in HOSTILE:
        (toy_vault / f"{v} bin.md").write_bytes(b"\x00\x01binary")
    index_vault(toy_vault, progress=False)
    for v in HOSTILE:
        (toy_vault / f"{v}.md").write_text(f"# {v}\n\ntext\n", encoding="utf-8")
    result = CliRunner().invoke(cli, ["status", "--vault", str(toy_vault), "-v"], catch_exceptions=False)
    assert result.exit_code == 0, result.output
    shown = result.stdout
    assert not acting(shown), shown
    lines = shown.splitlines()
    for head, tail in ENDS:
        new = [line for line in lines if line.startswith("  new ") and head in line]
        skipped = [line for line in lines if line.startswith("  binary ") and head in line]
        assert len(new) == len(skipped) == 1 and tail in new[0] and tail in skipped[0], shown
        assert start(new[0], head) == 11 and start(skipped[0], head) == 17, shown


def test_ab_report_keeps_titles_and_sources_on_their_lines(brain_home):
    """`brain ab report`: a promoted note's title or a source label holding a line break ended
    its line in the middle of the list, and a tab was left for the terminal (terminal_safe
    keeps both)."""
    from click.testing import CliRunner

    from brain.cli import cli
    from brain.db import connection
    from brain.telemetry import ABRow, log_ab

    with connection() as conn:
        for v in HOSTILE:
            row = ABRow("q", "vector", "graph", 10, False, "", 3, [v], [v], [], [], False, {}, [])
            log_ab(conn, row, source=v, vault="/v")
    result = CliRunner().invoke(cli, ["ab", "report"], catch_exceptions=False)
    assert result.exit_code == 0, result.output
    shown = result.stdout
    assert not acting(shown), shown
    for label in ("rows from: ", "most promoted via links: "):
        (line,) = [line for line in shown.splitlines() if line.startswith(label)]
        assert all(head in line and tail in line for head, tail in ENDS), shown


def test_neighbours_and_note_keep_each_link_on_its_row(tmp_path, brain_home, monkeypatch):
    """`brain neighbours` and `brain note`'s header on a terminal: a note whose file name holds a
    line break ended its row, the rest at the terminal's first cell, and a tab was left for the
    terminal (terminal_safe keeps both)."""
    from click.testing import CliRunner

    from brain import cli as cli_module
    from brain.cli import cli
    from brain.index.indexer import index_vault

    vault = tmp_path / "v"
    vault.mkdir()
    (vault / "Hub.md").write_text("# Hub\n\n" + " ".join(f"[[{v}]]" for v in HOSTILE if "\n" not in v) + "\n")
    for v in HOSTILE:
        (vault / f"{v}.md").write_text(f"# {v}\n\nback to [[Hub]]\n", encoding="utf-8")
    index_vault(vault, progress=False)
    result = CliRunner().invoke(cli, ["neighbours", "--vault", str(vault), "Hub"], catch_exceptions=False)
    assert result.exit_code == 0, result.output
    shown = result.stdout
    assert not acting(shown), shown
    lines = shown.splitlines()
    links, backlinks = (int(line.split("(")[1].split(")")[0]) for line in lines if line.endswith("):"))
    assert backlinks == len(HOSTILE) and lines[3 : 3 + links] and lines[5 + links :], shown
    rows = lines[3 : 3 + links] + lines[5 + links :]  # one a link: no row broken in two
    assert len(lines) == 5 + links + backlinks and all(row.startswith(("  → [[", "  ← ")) for row in rows), shown
    for terminal in (False, True):  # into a pipe the header was printed raw: a name's line break forged a line
        monkeypatch.setattr(cli_module, "_stdout_is_terminal", lambda terminal=terminal: terminal)
        for v in HOSTILE:
            result = CliRunner().invoke(cli, ["note", "--vault", str(vault), f"{v}.md"], catch_exceptions=False)
            assert result.exit_code == 0, result.output
            header, blank, *_ = result.stdout.splitlines()
            assert not acting(header) and header.endswith(".md)") and blank == "", result.stdout


def test_ask_keeps_its_title_column_past_rank_99_and_for_any_score():
    """The rank was padded to two digits and the score to six characters: from rank 100 (-k up
    to 200), and for a reranker's score of -10 or less, the title started a cell later on that
    row than on the others."""
    scores = [0.5, -10.25, 3.125, -0.5] * 26
    notes = [Candidate(i, f"n{i}.md", f"T{i}", i, "", "text", 0.5, s) for i, s in enumerate(scores)]
    shown = result_text(RecallResult("q", "hybrid", Gate(False, "x"), notes), width=80)
    lines = shown.splitlines()
    ranks = [line for line in lines if line.lstrip()[:1].isdigit()]
    assert len(ranks) == len(scores)
    title = {start(line, f"T{i}") for i, line in enumerate(ranks)}
    assert len(title) == 1, shown
    assert {start(line, "n") for line in lines if line.endswith(".md")} == {title.pop() - 1}, shown


def test_history_keeps_its_path_column_for_a_note_of_megabytes():
    """A version's size was padded to eight characters: a note of 1,000 KB or more (up to the
    10 MB BRAIN_MAX_NOTE_MB allows by default) took nine, and its path started a cell later
    than the others' and than what changed under it."""
    from brain.recall.timeline import NoteHistory, VersionEntry, history_text

    sizes = [10, 2048, 9 * 1024 * 1024]
    versions = [
        VersionEntry(
            "changed", None, "2026-01-02T10:00:00Z", None, f"p{i}.md", "t", size, "h", None, True, "+1 −0 lines"
        )
        for i, size in enumerate(sizes)
    ]
    shown = history_text(NoteHistory(1, "p.md", "t", True, versions, [], []))
    lines = shown.splitlines()
    paths = {
        start(line, f"p{i}.md")
        for i, line in enumerate(line for line in lines if line.endswith(".md") and "  " in line[:3])
    }
    changes = {start(line, "+1") for line in lines if "+1 −0" in line}
    assert len(paths) == 1 and changes == paths, shown


def test_context_keeps_each_passage_header_on_its_line():
    """`brain ask --context`: a path or heading holding a line break ended its `### ` header,
    the rest read as the passage's text; a tab was left in it (terminal_safe keeps both). The
    passage's own text keeps its lines."""
    from brain.output import context_bundle

    notes = [Candidate(i, f"{v}.md", v, i, v, f"line one\n\tline two {i}", 0.5, 0.5) for i, v in enumerate(HOSTILE)]
    bundle = context_bundle(RecallResult("q", "hybrid", Gate(False, "x"), notes), 100_000)
    headers = [line for line in bundle.splitlines() if line.startswith("### ")]
    assert len(headers) == len(HOSTILE) and not acting("".join(headers)), bundle
    assert all(f"\tline two {i}" in bundle for i in range(len(HOSTILE)))
