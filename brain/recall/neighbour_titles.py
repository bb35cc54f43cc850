"""Neighbour-titles lane: a note found by the titles of the notes it links to and that link to it.

A question that names two related things ("the method my agile note contrasts with fast
feedback loops, what charts does it plan with") often asks for the note between them: the one
that links to *Agile* and *Gantt Charts*, whose own text says neither name as the question does.
This lane gives every note a field of its neighbours' titles (links either way, each title
once) and ranks the notes by BM25 over that field for the BM25 lane's terms (the same MATCH
expression), with FTS5's own BM25 (k1 1.2, b 0.75). The anchor lanes read the passage around a
link; this reads only the names at either end of it.

Hubs (notes linking to more than ``hub`` others: an index note lists everything) are left out
both ways: their title is no neighbour's word, and they get no field, or every query's words
would find them. Built once per index state from the links and titles (no schema of its own);
a trigram index (Chinese, Japanese) has no words to match titles by, and the lane is empty.
"""

from __future__ import annotations

import math
import re
from collections import Counter
from collections.abc import Iterable
from typing import TYPE_CHECKING

from ..index.schema import FTS_TOKENIZERS
from ..index.tokens import index_words
from .dense import scored_candidates
from .ties import top_notes
from .types import DEFAULT_ANCHOR_HUB, Candidate

if TYPE_CHECKING:
    import numpy as np

    from ..index.store import IndexStore

K1, B = 1.2, 0.75  # FTS5's bm25() constants
_TERM = re.compile(r'"((?:[^"]|"")*)"')


class NeighbourTitles:
    """Each note's neighbours' title words, as a BM25 field: postings and field lengths."""

    def __init__(self, fields: dict[int, Counter[str]]):
        self.lengths = {note_id: sum(words.values()) for note_id, words in fields.items()}
        self.postings: dict[str, dict[int, int]] = {}
        for note_id, words in fields.items():
            for word, count in words.items():
                self.postings.setdefault(word, {})[note_id] = count
        self.average = sum(self.lengths.values()) / len(self.lengths) if self.lengths else 0.0

    @classmethod
    def build(
        cls,
        titles: dict[int, str],
        edges: Iterable[tuple[int, int]],
        tokenizer: str = "unicode61",
        hub: int = DEFAULT_ANCHOR_HUB,
        out_only: bool = False,
    ) -> NeighbourTitles:
        """From every note's title and every resolved link (source, target) between two notes."""
        if tokenizer != "unicode61":
            return cls({})
        neighbours: dict[int, set[int]] = {}
        links_out: Counter[int] = Counter()
        pairs = {(source, target) for source, target in edges if source != target}
        for source, _ in pairs:
            links_out[source] += 1
        hubs = {note_id for note_id, count in links_out.items() if hub > 0 and count > hub}
        for source, target in pairs:
            if source in hubs or target in hubs:
                continue
            neighbours.setdefault(source, set()).add(target)
            if not out_only:
                neighbours.setdefault(target, set()).add(source)
        spec = FTS_TOKENIZERS[tokenizer]
        words_of: dict[int, list[str]] = {}
        fields: dict[int, Counter[str]] = {}
        for note_id, others in neighbours.items():
            field: Counter[str] = Counter()
            for other in others:
                if other not in titles:
                    continue
                if other not in words_of:
                    words_of[other] = index_words(titles[other], spec)
                field.update(words_of[other])
            if field:
                fields[note_id] = field
        return cls(fields)

    @classmethod
    def from_store(cls, store: IndexStore, hub: int = DEFAULT_ANCHOR_HUB, out_only: bool = False) -> NeighbourTitles:
        edges = ((source, target) for source, target, _ in store.resolved_edges())
        titles = {note_id: title for note_id, _, title in store.note_names()}
        return cls.build(titles, edges, store.fts_tokenizer(), hub, out_only)

    def scores(self, terms: Iterable[str]) -> dict[int, float]:
        """note id → BM25 of its field for these terms (notes matching none left out)."""
        total = len(self.lengths)
        out: dict[int, float] = {}
        for term in dict.fromkeys(terms):
            posting = self.postings.get(term)
            if not posting:
                continue
            idf = max(math.log((total - len(posting) + 0.5) / (len(posting) + 0.5)), 1e-6)
            for note_id, count in posting.items():
                norm = K1 * (1 - B + B * self.lengths[note_id] / self.average)
                out[note_id] = out.get(note_id, 0.0) + idf * count * (K1 + 1) / (count + norm)
        return out


def match_terms(expression: str | None) -> list[str]:
    """The quoted terms of a MATCH expression (``lexical.match_expression``'s: "a" OR "b")."""
    if not expression:
        return []
    return [term.replace('""', '"') for term in _TERM.findall(expression)]


def neighbour_titles_search(
    store: IndexStore,
    index: NeighbourTitles,
    expression: str | None,
    query_vector: np.ndarray,
    depth: int,
    listed: set[int] | None = None,
) -> list[Candidate]:
    """The ``depth`` notes whose neighbours' titles best match the expression's terms, each by its
    best chunk for the query; score = that BM25. Nothing when no term is a neighbour's word."""
    if depth <= 0:
        return []
    scored = index.scores(match_terms(expression))
    if listed is not None:  # a vote on the notes the text lanes list, none of its own
        scored = {n: v for n, v in scored.items() if n in listed}
    if not scored:
        return []
    top = top_notes(store, scored, lambda n: -scored[n], depth)
    found = scored_candidates(store, top, query_vector, "neighbour_titles")
    for c in found:
        c.score = scored[c.note_id]
    return found
