"""Lexical lane: BM25 over chunks with SQLite FTS5, folded to notes by their best chunk.

Dense models miss exact titles, aliases, error strings and rare names; BM25 finds them.
The query becomes an OR of its terms (each quoted, so punctuation cannot break the FTS5
syntax); BM25's IDF then does the weighting. Titles weigh more than headings, headings more
than text.
"""

from __future__ import annotations

import re

from ..store import IndexStore
from .dense import candidates_for
from .types import Candidate

DEFAULT_DEPTH = 60
# Column weights for bm25(): title, heading, text.
WEIGHTS = (4.0, 2.0, 1.0)
_TERM = re.compile(r"\w+", re.UNICODE)
# Very common words add nothing but time; BM25 would give them ~0 weight anyway.
_STOP = {
    "a", "an", "the", "and", "or", "of", "to", "in", "on", "for", "with", "is", "are", "was",
    "what", "how", "why", "when", "where", "which", "who", "do", "does", "did", "i", "we", "my",
    "our", "it", "this", "that", "be", "about", "from", "at", "by", "as", "can", "should",
}


def fts_query(query: str) -> str | None:
    """An FTS5 MATCH expression: the query's terms, quoted, OR-ed; None when nothing is left."""
    terms = [t for t in _TERM.findall(query.casefold()) if t not in _STOP]
    if not terms:
        terms = _TERM.findall(query.casefold())
    unique = list(dict.fromkeys(terms))[:32]
    return " OR ".join(f'"{t}"' for t in unique) if unique else None


def lexical_search(store: IndexStore, query: str, depth: int = DEFAULT_DEPTH) -> list[Candidate]:
    """The top ``depth`` notes by their best chunk's BM25 score, best first."""
    expression = fts_query(query)
    if expression is None or depth <= 0:
        return []
    rows = store.conn.execute(
        "SELECT c.id AS chunk_id, c.note_id, bm25(chunks_fts, ?, ?, ?) AS rank FROM chunks_fts"
        " JOIN chunks c ON c.id = chunks_fts.rowid WHERE chunks_fts MATCH ? ORDER BY rank LIMIT ?",
        (*WEIGHTS, expression, depth * 5),
    ).fetchall()
    best: dict[int, tuple[int, float]] = {}
    for row in rows:
        if row["note_id"] not in best:  # rows come best first
            best[row["note_id"]] = (row["chunk_id"], -float(row["rank"]))  # bm25() is lower-better
        if len(best) >= depth:
            break
    picks = [(note_id, chunk_id, score) for note_id, (chunk_id, score) in best.items()]
    return candidates_for(store, picks, "lexical")  # score = BM25; dense_score set by fusion
