"""`brain ask --ab`'s two columns, as a terminal shows them."""

from __future__ import annotations

import re
import unicodedata

import pytest

from brain.output import side_by_side
from brain.recall.pipeline import EXTRA_LANES
from brain.recall.types import Candidate, Gate, RecallResult
from brain.telemetry import diff


def cells(text: str) -> int:
    """Terminal cells ``text`` takes: wide and full-width characters two, marks that combine none."""
    return sum(
        0 if unicodedata.category(ch) in ("Mn", "Me", "Cf") else 2 if unicodedata.east_asian_width(ch) in "WF" else 1
        for ch in text
    )


def _result(mode: str, titles: list[str]) -> RecallResult:
    notes = [Candidate(i, f"{t}.md", t, i, "", "text", 0.5, 0.5) for i, t in enumerate(titles)]
    return RecallResult("q", mode, Gate(False, "x"), notes)


LEFT = [
    "Plain ASCII note",
    "東京の会議メモ",  # each character two cells
    "Cafe\u0301 menus",  # e and a combining acute: one cell
    "🚀 launch checklist",  # an emoji: two cells
    "Zero\u200bwidth",  # a zero-width space: none
    "東京の会議メモ、長い長い長い長い長い長い長い長い長い長い長い長い長いタイトル",  # cut to the column
    "Cafe\u0301" * 30,  # cut, each é whole
]


@pytest.mark.parametrize("width", [28, 40, 60, 80, 120])
def test_the_right_column_starts_at_one_cell_on_every_row(width):
    right = [f"R{i} note" for i in range(len(LEFT))]
    text = side_by_side(_result("vector", LEFT), _result("graph", right), width=width)
    rows = [line for line in text.splitlines() if line[:4].strip().rstrip(".").isdigit()]
    assert len(rows) == len(LEFT)
    starts = {cells(row[: row.index(f"R{i} note")]) for i, row in enumerate(rows)}
    assert len(starts) == 1, text  # by code point, each wide title pushed its row's right column out
    header = text.splitlines()[0]
    assert cells(header[: header.index("graph")]) == starts.pop() - 2  # the mark and its space
    assert "e…" not in rows[6]  # a cut keeps each combining accent with its letter ("Café me…" is a cut word)


def test_a_tab_or_a_line_break_in_a_title_is_a_space_in_its_column():
    """The terminal filter keeps tabs and line breaks: a title holding a tab (counted one cell,
    shown up to eight) pushed its row's right column out, and one holding a line break ended
    its row in the middle. In the columns they are spaces; the titles are as they were."""
    left = ["Plain", "Tab\there", "Line\nbreak", "Para\u2028sep"]
    a, b = _result("vector", left), _result("graph", [f"R{i}\tnote" for i in range(len(left))])
    text = side_by_side(a, b, width=80)
    rows = text.splitlines()[2 : 2 + len(left)]
    assert [row[4:].split("  ")[0] for row in rows] == ["Plain", "Tab here", "Line break", "Para sep"], text
    starts = {row.expandtabs().index(f"R{i} note") for i, row in enumerate(rows)}  # as a terminal shows it
    assert len(starts) == 1, text
    assert "\t" not in text and a.results[1].title == "Tab\there"


def test_a_cut_title_fills_its_column_and_no_more():
    text = side_by_side(_result("vector", LEFT), _result("graph", ["R"] * len(LEFT)), width=80)
    column = max(30, (80 - 8) // 2)
    for line in text.splitlines()[2:]:
        if "…" in line:
            left = line[4 : line.index("…") + 1]
            assert column - 3 <= cells(left) <= column - 2, line


@pytest.mark.parametrize(
    ("past", "header"),
    [
        (["--as-of", "0h"], r"as of \d{4}-\d\d-\d\d \d\d:\d\d\S*: the vault as brain knew it then\n"),
        (["--valid-at", "2020-01-01"], r"valid at 2020-01-01: notes whose frontmatter says they held then"),
    ],
)
def test_ab_over_the_past_says_which_moment_as_ask_does(toy_vault, past, header):
    """`brain ask --as-of` says the moment it answers for above its list; `--ab --as-of` printed its
    two columns with no word that they were the past."""
    import re

    from click.testing import CliRunner

    from brain.cli import cli

    assert CliRunner().invoke(cli, ["index", "--vault", str(toy_vault), "-q"]).exit_code == 0
    one = CliRunner().invoke(cli, ["ask", "--vault", str(toy_vault), *past, "graph memory"])
    ab = CliRunner().invoke(cli, ["ask", "--vault", str(toy_vault), "--ab", *past, "graph memory"])
    assert one.exit_code == 0 and ab.exit_code == 0, one.output + ab.output
    assert re.match(header, one.stdout), one.stdout  # the header brain ask prints
    assert re.match(header, ab.stdout), ab.stdout
    # the same words, then a blank line (the two runs of "0h" may fall either side of a minute's turn)
    minute = re.compile(r"\d{4}-\d\d-\d\d \d\d:\d\d(?=\S*: the vault)")
    assert minute.sub("then", ab.stdout.split("\n\n")[0]) == minute.sub("then", one.stdout.split("\n\n")[0])
    plain = CliRunner().invoke(cli, ["ask", "--vault", str(toy_vault), "--ab", "graph memory"])
    assert plain.stdout.startswith("    hybrid"), plain.stdout  # the present: no header


@pytest.mark.parametrize("columns", [40, 60, 80])
def test_ab_fits_the_terminal_it_is_printed_on(toy_vault, columns):
    """Each column took at least 30 cells, a row 66, the legend 92 and the gate's line over 100: on
    a terminal narrower than a line, the terminal wrapped it under the rank, mid-word. Each line
    now fits, the columns narrowed and the long lines broken at spaces, nothing left out."""
    from click.testing import CliRunner

    from brain.cli import cli

    assert CliRunner().invoke(cli, ["index", "--vault", str(toy_vault), "-q"]).exit_code == 0
    for past in ([], ["--valid-at", "2020-01-01"]):
        ask = ["ask", "--vault", str(toy_vault), "--ab", *past, "how should agent memory work"]
        out = CliRunner().invoke(cli, ask, env={"COLUMNS": str(columns)})
        assert out.exit_code == 0, out.output
        lines = out.stdout.splitlines()
        assert max(cells(line) for line in lines) <= columns, out.stdout
        flat = " ".join(out.stdout.split())
        assert "+ new in the top k * new, brought by the links (the hop, PageRank, anchor or bridge lanes)" in flat
        assert re.search(r"gate: not entity \(.*\); hybrid\+ppr added \d+ candidates, \d+ new in the top 12", flat)
        rows = [line for line in lines if re.match(r" ?\d+\. ", line)]
        assert len(rows) >= 6 and lines[lines.index(rows[0]) - 2].startswith("    hybrid "), out.stdout


def test_both_columns_start_at_one_cell_past_rank_99():
    """The rank was padded to two digits: from rank 100 (-k goes to 200) both columns of a row
    started a cell later than the header's and the other rows'."""
    titles = [f"L{i}" for i in range(120)]
    text = side_by_side(_result("vector", titles), _result("graph", [f"R{i}" for i in range(120)]), width=80)
    lines = text.splitlines()
    rows = [line for line in lines if line.lstrip()[:1].isdigit()]
    assert len(rows) == 120
    assert {cells(row[: row.index(f"L{i}")]) for i, row in enumerate(rows)} == {lines[0].index("vector")}, text
    assert len({cells(row[: row.index(f"R{i}")]) for i, row in enumerate(rows)}) == 1, text


def _lanes(mode: str, notes: list[tuple[str, list[str]]]) -> RecallResult:
    found = [Candidate(i, f"{t}.md", t, i, "", "text", 0.5, 0.5, sources=lanes) for i, (t, lanes) in enumerate(notes)]
    return RecallResult("q", mode, Gate(False, "x"), found)


def test_a_note_only_the_links_brought_is_marked_and_counted_as_via_the_graph():
    """In a fused mode the graph works through lanes (PageRank, the anchor and bridge lanes),
    recorded in each note's sources: a note they brought into the top k was marked + and
    counted as no note via the graph, for only the hop's notes carry ``via``."""
    a = _lanes("hybrid", [("Alpha", ["dense"]), ("Beta", ["dense", "lexical"]), ("Gamma", ["lexical"])])
    b = _lanes(
        "hybrid+ppr",
        [("Alpha", ["dense"]), ("Delta", ["dense", "anchor_lex", "ppr"]), ("Epsilon", ["lexical"])],
    )
    text = side_by_side(a, b, width=120)
    assert "* Delta  (anchors, ppr)" in text, text  # the links voted for it: they lifted it
    assert "+ Epsilon" in text  # new, but no lane that reads the links found it
    assert diff(a, b, 3).via_graph == ["Delta"] and diff(a, b, 3).new_in_top_k == ["Delta.md", "Epsilon.md"]
    # Against a mode that runs those lanes too, their vote is no difference: only the bridge
    # lane (hybrid+ppr's, not ppr's) would be.
    ppr = _lanes("ppr", [("Alpha", ["dense"])])
    assert diff(ppr, b, 3).via_graph == []
    assert "* Delta" not in side_by_side(ppr, b, width=120)
    bridged = _lanes("hybrid+ppr", [("Delta", ["dense", "bridge", "ppr"])])
    assert diff(ppr, bridged, 3).via_graph == ["Delta"]


def test_the_graph_lanes_are_the_lanes_of_the_pagerank_family():
    """What the A/B log counts as the graph's: PageRank and every extra lane of its family."""
    from brain.recall.types import GRAPH_LANES

    pagerank_family = {"ppr"} | {name for name, lane in EXTRA_LANES.items() if "ppr" in lane.family}
    assert pagerank_family == GRAPH_LANES
