"""Lexical lane: BM25 over chunks with SQLite FTS5, folded to notes by their best chunk.

Dense models miss exact titles, aliases, error strings and rare names; BM25 finds them.
The query becomes an OR of its terms (each quoted, so punctuation cannot break the FTS5
syntax); BM25's IDF then does the weighting. Titles weigh more than headings, headings more
than text.
"""

from __future__ import annotations

import re
from typing import TYPE_CHECKING

from .dense import candidates_for
from .types import DEFAULT_DEPTH, Candidate

if TYPE_CHECKING:
    from ..index.store import IndexStore

# Column weights for bm25(): title, heading, text.
WEIGHTS = (4.0, 2.0, 1.0)
COMMON_SHARE = 0.25  # a term in more chunks than this adds little to BM25 and costs a scan
_TERM = re.compile(r"\w+", re.UNICODE)
# Very common words add nothing but time; BM25 would give them ~0 weight anyway.
_STOP = set(
    """
    a an the and or of to in on for with is are was
    what how why when where which who do does did i we my
    our it this that be about from at by as can should
    """.split()
)


def query_terms(query: str) -> list[str]:
    """The query's distinct terms, casefolded, without stop words (unless nothing else is left)."""
    terms = [t for t in _TERM.findall(query.casefold()) if t not in _STOP]
    if not terms:
        terms = _TERM.findall(query.casefold())
    return list(dict.fromkeys(terms))[:32]


def fts_query(query: str) -> str | None:
    """An FTS5 MATCH expression: the query's terms, quoted, OR-ed; None when nothing is left."""
    return _match(query_terms(query))


def _match(terms: list[str]) -> str | None:
    return " OR ".join(f'"{t}"' for t in terms) if terms else None


def informative_terms(store: IndexStore, terms: list[str]) -> list[str]:
    """Drop terms found in over COMMON_SHARE of the chunks (keeping the rarest if all are).

    Scoring a term means visiting every chunk that holds it; a word in half the vault adds
    almost nothing to BM25 but made each query visit most of the index (bench/scale.py).
    """
    total = store.chunk_count() or 1
    frequency = store.term_chunk_counts(terms)
    kept = [t for t in terms if 0 < frequency[t] <= COMMON_SHARE * total]
    if not kept:
        present = [t for t in terms if frequency[t] > 0]
        kept = [min(present, key=lambda t: frequency[t])] if present else []
    return kept


def lexical_search(store: IndexStore, query: str, depth: int = DEFAULT_DEPTH) -> list[Candidate]:
    """The top ``depth`` notes by their best chunk's BM25 score, best first."""
    if depth <= 0:
        return []
    expression = _match(informative_terms(store, query_terms(query)))
    if expression is None:
        return []
    hits = store.fts_search(expression, WEIGHTS, depth * 5)
    note_of = store.chunk_note_ids([chunk_id for chunk_id, _ in hits])
    best: dict[int, tuple[int, float]] = {}
    for chunk_id, score in hits:  # best first
        note_id = note_of.get(chunk_id)
        if note_id is not None and note_id not in best:
            best[note_id] = (chunk_id, score)
            if len(best) >= depth:
                break
    picks = [(note_id, chunk_id, score) for note_id, (chunk_id, score) in best.items()]
    return candidates_for(store, picks, "lexical")  # score = BM25; dense_score set by fusion
