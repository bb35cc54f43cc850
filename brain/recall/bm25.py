"""BM25 as SQLite FTS5 computes it, for chunks scored against another table's statistics.

A past slice (``past.py``) finds past chunks in their own FTS table, whose statistics (how many
chunks, their average length, how many hold a term) are not the present table's: its BM25
scores would not compare with the present's. So past chunks are scored here, with FTS5's own
formula (``fts5_aux.c``: k1 = 1.2, b = 0.75, IDF = ln((N - n + 0.5) / (n + 0.5)), at least
1e-6; term frequency summed over the columns times their weights; the row's length over all
columns) and the present table's statistics, and so rank among the present's hits as they
would if they were still there.

A chunk's length and its term counts are the index's tokenizer's own (``index_tokens``: SQLite's
tokenizer asked, ``tokens.index_words``): a mimic of unicode61 counted what SQLite's Unicode tables
do not know (an emoji newer than them: a word to SQLite, a separator to Python) as nothing, kept a
final sigma that SQLite folds ("Σίσυφος" held "σίσυφοσ": the query's word missed), and scored a
trigram index's chunks by words, not trigrams (scores 3 to 4 times off; tests/test_past_bm25.py).

``tokens`` stays the mimic of ``unicode61 remove_diacritics 2`` (a token: a run of letters and
digits, lowercased, Latin diacritics removed) that ``index/postings.py`` builds its base with
(checked there against FTS5's own counts, term by term).
"""

from __future__ import annotations

import math
import re
import unicodedata
from collections.abc import Sequence
from dataclasses import dataclass

from ..index.tokens import index_words

K1, B = 1.2, 0.75
UNICODE61 = "unicode61 remove_diacritics 2"  # schema.FTS_TOKENIZERS["unicode61"]
# ASCII bytes: letters and digits lowered, everything else a separator (unicode61 on ASCII).
_ASCII_WORDS = bytes(c if chr(c).isalnum() else 32 for c in range(128)).lower() + b" " * 128
_TOKEN = re.compile(r"[^\W_]+", re.UNICODE)
_PHRASE = re.compile(r'"((?:[^"]|"")*)"')


@dataclass(frozen=True)
class TableStats:
    rows: int  # chunks in the table
    average_length: float  # tokens per chunk, all columns
    document_frequency: dict[tuple[str, ...], int]  # phrase → chunks that hold it
    tokenize: str = UNICODE61  # the table's FTS5 tokenizer (``schema.FTS_TOKENIZERS``)


def tokens(text: str) -> list[str]:
    return [_fold(token) for token in _TOKEN.findall(text)]


def index_tokens(text: str, tokenize: str = UNICODE61) -> list[str]:
    """``text``'s tokens as the FTS5 tokenizer ``tokenize`` makes them, in order: ASCII under
    unicode61 split here (most chunks: 5 µs a 1 KB chunk, SQLite asked 100), anything else asked
    of SQLite's own tokenizer."""
    if not text:
        return []
    if tokenize == UNICODE61 and text.isascii():
        return text.encode("ascii").translate(_ASCII_WORDS).decode("ascii").split()
    return index_words(text, tokenize)


def _fold(token: str) -> str:
    lowered = token.lower()
    if lowered.isascii():
        return lowered
    out = []
    for char in lowered:
        decomposed = unicodedata.normalize("NFD", char)
        out.append(decomposed[0] if ord(decomposed[0]) < 0x250 else char)  # Latin: drop the marks
    return "".join(out)


def phrases(expression: str, tokenize: str = UNICODE61) -> list[tuple[str, ...]]:
    """The phrases of an FTS5 expression of quoted terms OR-ed together (the lexical lane's), as
    the tokenizer ``tokenize`` reads them."""
    found = [tuple(index_tokens(p.replace('""', '"'), tokenize)) for p in _PHRASE.findall(expression)]
    return [p for p in dict.fromkeys(found) if p]


def score(
    fields: Sequence[str], query: Sequence[tuple[str, ...]], weights: Sequence[float], stats: TableStats
) -> float:
    """BM25 of one chunk (its columns' text as the table holds it, in its column order; tokens as
    ``stats.tokenize`` makes them); higher is better."""
    columns = [index_tokens(text, stats.tokenize) for text in fields]
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
