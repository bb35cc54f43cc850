"""Every table and padded row brain prints for a person, as a terminal shows it, whatever the
vault or the ledger holds: a tab (one code point, up to eight cells), a line break (the row
ends), an escape sequence (acted on, its characters taking no cells), wide CJK characters (two
cells each) and a combining mark (none). The right column starts at one cell on every row, and
nothing reaches the terminal that it would act on. --json keeps every value as it is."""

from __future__ import annotations

from terminal_helpers import HOSTILE, acting, cells

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
    shown = result_text(result, width=80)
    assert not acting(shown), shown
    lines = shown.splitlines()
    ranks = [line for line in lines if line[:3].strip().rstrip(".").isdigit()]
    assert len(ranks) == len(HOSTILE), shown
    # the rest of each result under its title, at one cell: none under the rank
    assert all(line.startswith(" " * 11) and line[11] != " " for line in lines if line not in ranks), shown
    assert [lines[lines.index(rank) + 1].count(" › ") for rank in ranks] == [1] * len(HOSTILE), shown
    assert max(cells(line) for line in lines) <= 80, shown
    assert notes[1].title == "Line\nbreak"
