"""`brain ask --ab`'s two columns, as a terminal shows them."""

from __future__ import annotations

import unicodedata

import pytest

from brain.output import side_by_side
from brain.recall.types import Candidate, Gate, RecallResult


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


@pytest.mark.parametrize("width", [80, 120])
def test_the_right_column_starts_at_one_cell_on_every_row(width):
    right = [f"R{i} note" for i in range(len(LEFT))]
    text = side_by_side(_result("vector", LEFT), _result("graph", right), width=width)
    rows = [line for line in text.splitlines() if line[:4].strip().rstrip(".").isdigit()]
    assert len(rows) == len(LEFT)
    starts = {cells(row[: row.index(f"R{i} note")]) for i, row in enumerate(rows)}
    assert len(starts) == 1, text  # by code point, each wide title pushed its row's right column out
    header = text.splitlines()[0]
    assert cells(header[: header.index("graph")]) == starts.pop() - 2  # the mark and its space
    assert "e…" not in text  # a cut keeps each combining accent with its letter


def test_a_cut_title_fills_its_column_and_no_more():
    text = side_by_side(_result("vector", LEFT), _result("graph", ["R"] * len(LEFT)), width=80)
    column = max(30, (80 - 8) // 2)
    for line in text.splitlines()[2:]:
        if "…" in line:
            left = line[4 : line.index("…") + 1]
            assert column - 3 <= cells(left) <= column - 2, line
