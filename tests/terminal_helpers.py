"""brain's text for a person as a terminal shows it: the cells a row takes (tabs expanded as a
terminal does), and what in it a terminal would act on. Cells are counted here on their own,
not with brain.output's code under test."""

from __future__ import annotations

import re
import unicodedata

# A value of each kind a vault or the ledger may hold that a column has to survive.
HOSTILE = [
    "Tab\there",
    "Line\nbreak",
    "Red \x1b[31mflag\x1b[0m",
    "東京の会議メモ",  # each character two cells
    "Cafe\u0301 menus",  # an e and a combining acute: one cell
]

# A word from the start and the end of each, as a row shows it: the two on one row.
ENDS = [("Tab", "here"), ("Line", "break"), ("Red", "flag"), ("東京", "メモ"), ("Cafe", "menus")]

# What a terminal acts on, but the line break that ends a row: C0 controls (a tab moves to a
# stop, CR back to the start, ESC begins a sequence), DEL, C1, and the line separators.
_ACTS = re.compile("[\x00-\x09\x0b-\x1f\x7f-\x9f\u2028\u2029]")


def cells(text: str) -> int:
    """Terminal cells ``text`` takes: wide and full-width characters two, marks that combine none."""
    return sum(
        0 if unicodedata.category(ch) in ("Mn", "Me", "Cf") else 2 if unicodedata.east_asian_width(ch) in "WF" else 1
        for ch in text
    )


def acting(text: str) -> list[str]:
    """The characters of ``text`` a terminal would act on, other than a line break."""
    return _ACTS.findall(text)


def start(row: str, marker: str) -> int:
    """The cell at which ``marker`` begins in ``row``, a tab moving to its next stop of eight."""
    shown = row.expandtabs()
    return cells(shown[: shown.index(marker)])
