"""BM25 as SQLite FTS5 computes it, for chunks scored against another table's statistics.

A past slice (``past.py``) finds past chunks in their own FTS table, whose statistics (how many
chunks, their average length, how many hold a term) are not the present table's: its BM25
scores would not compare with the present's. So past chunks are scored here, with FTS5's own
formula (``fts5_aux.c``: k1 = 1.2, b = 0.75, IDF = ln((N - n + 0.5) / (n + 0.5)), at least
1e-6; term frequency summed over the columns times their weights; the row's length over all
columns) and the present table's statistics, and so rank among the present's hits as they
would if they were still there.

The tokenizer follows unicode61 as the index uses it (``schema.FTS_TOKENIZERS``): a token is a
run of letters, digits, private-use characters and combining marks, lowercased, with the
diacritics of Latin letters removed.
"""

from __future__ import annotations

import functools
import math
import re
import unicodedata
from collections.abc import Sequence
from dataclasses import dataclass

K1, B = 1.2, 0.75
_PHRASE = re.compile(r'"((?:[^"]|"")*)"')
# The combining marks remove_diacritics 2 drops (asked of FTS5 for U+0300-036F; every other
# mark stays in its word): a letter with one it has no composed form for, "x\u0301".
_DROPPED_MARKS = frozenset(
    "\u0300\u0301\u0302\u0303\u0304\u0306\u0307\u0308\u0309\u030a\u030b\u030c\u030f"
    "\u0311\u031b\u0323\u0324\u0325\u0326\u0327\u0328\u032d\u032e\u0330\u0331"
)


@functools.cache
def marks() -> str:
    """The combining marks (Mn, Mc) but U+FE0E and U+FE0F (the tokenizer's separators), as the
    body of a regular expression's character class: ``\\w`` has none, and a Hindi word would be
    cut at each vowel sign. Read from ``unicodedata`` once (~20 ms; none lies outside these ranges)."""
    found = [
        cp
        for span in (range(0x300, 0x20000), range(0xE0100, 0xE01F0))
        for cp in span
        if unicodedata.category(chr(cp)) in ("Mn", "Mc") and cp not in (0xFE0E, 0xFE0F)
    ]
    runs: list[list[int]] = []
    for cp in found:
        if runs and runs[-1][1] == cp - 1:
            runs[-1][1] = cp
        else:
            runs.append([cp, cp])
    return "".join(f"{chr(a)}-{chr(b)}" for a, b in runs)


@functools.cache
def _token() -> re.Pattern[str]:
    """A token: letters and digits (``\\w`` less ``_``), private use and combining marks."""
    return re.compile(f"(?:[^\\W_]|[{marks()}\ue000-\uf8ff\U000f0000-\U0010fffd])+")


@dataclass(frozen=True)
class TableStats:
    rows: int  # chunks in the table
    average_length: float  # tokens per chunk, all columns
    document_frequency: dict[tuple[str, ...], int]  # phrase → chunks that hold it


def tokens(text: str) -> list[str]:
    return [_fold(token) for token in _token().findall(text)]


def _fold(token: str) -> str:
    lowered = token.lower()
    if lowered.isascii():
        return lowered
    out = []
    for char in lowered:
        if char in _DROPPED_MARKS:
            continue
        decomposed = unicodedata.normalize("NFD", char)
        out.append(decomposed[0] if ord(decomposed[0]) < 0x250 else char)  # Latin: drop the marks
    return "".join(out)


def phrases(expression: str) -> list[tuple[str, ...]]:
    """The phrases of an FTS5 expression of quoted terms OR-ed together (the lexical lane's)."""
    found = [tuple(tokens(p.replace('""', '"'))) for p in _PHRASE.findall(expression)]
    return [p for p in dict.fromkeys(found) if p]


def score(
    fields: Sequence[str], query: Sequence[tuple[str, ...]], weights: Sequence[float], stats: TableStats
) -> float:
    """BM25 of one chunk (its columns' text, in the table's column order); higher is better."""
    columns = [tokens(text) for text in fields]
    length = sum(len(c) for c in columns)
    total = 0.0
    for phrase in query:
        frequency = sum(weight * _count(column, phrase) for weight, column in zip(weights, columns))
        if not frequency:
            continue
        hits = stats.document_frequency.get(phrase, 0)
        idf = math.log((stats.rows - hits + 0.5) / (hits + 0.5)) if stats.rows else 0.0
        idf = idf if idf > 0 else 1e-6
        norm = K1 * (1 - B + B * length / stats.average_length) if stats.average_length else K1
        total += idf * frequency * (K1 + 1) / (frequency + norm)
    return total


def _count(column: list[str], phrase: tuple[str, ...]) -> int:
    if len(phrase) == 1:
        return column.count(phrase[0])
    n = len(phrase)
    return sum(1 for i in range(len(column) - n + 1) if tuple(column[i : i + n]) == phrase)
