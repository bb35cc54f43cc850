"""Query-side salience for the BM25 lane: each query word weighted by what the query means without it.

BM25 weighs a query's words by their rarity in the vault alone: in "holding a blade in each
hand - do I get anything if the d20 comes up 2?" the rare "comes" and "holding" count as much
as "blade" and "hand", and a note whose title holds a common word of the query outranked the
answer (bench/outrankers.py: a note sharing a title word with the query was above the answer in
30 of the 43 paraphrase and theme queries of the two labelled sets it read). Here each word's
salience is how far the query's embedding moves when the word is left out (1 − the cosine of the
query with and without it); a word's weight is ``1 − strength + strength × salience / mean
salience``, so the weights average 1 and BM25's own IDF still counts. FTS5's bm25() takes no
per-word weight, so the lane's deeper hits are scored again with FTS5's formula (``bm25.py``),
each word's part times its weight, and the best kept. One embedding per query word.
"""

from __future__ import annotations

import re
from collections.abc import Sequence
from typing import TYPE_CHECKING

from ..index.schema import FTS_TOKENIZERS
from ..index.tokens import index_words
from ..text import word_pattern
from . import bm25

if TYPE_CHECKING:
    import numpy as np

    from ..embed import Embedder
    from ..index.store import IndexStore

# The lane's hits scored again: this many times what it reads, so a chunk a salient word lifts
# can come from below the first search_depth hits of the unweighted search.
DEEPER = 2


def without_term(query: str, term: str, tokenizer: str = "unicode61") -> str | None:
    """``query`` without the words that are ``term`` to the index's tokenizer (each
    occurrence), or None where no word of it is (a respelled word: the query does not hold it)."""
    spec = FTS_TOKENIZERS[tokenizer]
    spans = [m.span() for m in word_pattern().finditer(query) if term in index_words(m.group(), spec)]
    if not spans:
        return None
    out, last = [], 0
    for start, end in spans:
        out.append(query[last:start])
        last = end
    out.append(query[last:])
    return re.sub(r"\s+", " ", "".join(out)).strip()


def saliences(
    embedder: Embedder, query: str, vector: np.ndarray, terms: Sequence[str], tokenizer: str = "unicode61"
) -> dict[str, float]:
    """Each term's salience: 1 − the cosine of the query's vector with that of the query without
    it (vectors are unit length); a term the query does not hold as a word is left out."""
    out: dict[str, float] = {}
    for term in terms:
        rest = without_term(query, term, tokenizer)
        if rest is None:
            continue
        cosine = float(embedder.embed_query(rest) @ vector) if rest else 0.0
        out[term] = max(0.0, 1.0 - cosine)
    return out


def term_weights(salience: dict[str, float], terms: Sequence[str], strength: float) -> dict[str, float]:
    """Each term's weight, ``1 − strength + strength × salience / mean salience``: 1 for a term
    of no measured salience (a respelled word), all 1 where no term moved the query."""
    if not salience or strength <= 0:
        return dict.fromkeys(terms, 1.0)
    mean = sum(salience.values()) / len(salience)
    if mean <= 0:
        return dict.fromkeys(terms, 1.0)
    return {t: (1 - strength + strength * salience[t] / mean) if t in salience else 1.0 for t in terms}


def reweighted(
    store: IndexStore,
    hits: Sequence[tuple[int, float]],
    expression: str,
    column_weights: Sequence[float],
    weights: dict[str, float],
) -> list[tuple[int, float]]:
    """``hits`` (chunk id, BM25) scored again with each term's part of BM25 times its weight in
    ``weights`` (FTS5's formula and the table's own statistics), best first; equal scores by
    chunk id, as ``fts_search`` orders them."""
    query = bm25.phrases(expression)
    if not hits or not query:
        return list(hits)
    rows, total = store.fts_totals()
    terms = sorted({token for phrase in query for token in phrase})
    held = store.term_chunk_counts(terms)
    frequency = {phrase: min(held.get(token, 0) for token in phrase) for phrase in query}
    stats = bm25.TableStats(rows, total / rows if rows else 0.0, frequency)
    by_phrase = {tuple(bm25.tokens(term)): weight for term, weight in weights.items()}
    fields = {r[0]: r[1:] for r in store.fts_source_rows([c for c, _ in hits])}
    scored = [
        (chunk_id, bm25.score(fields[chunk_id], query, column_weights, stats, by_phrase))
        for chunk_id, _ in hits
        if chunk_id in fields
    ]
    scored.sort(key=lambda hit: (-hit[1], hit[0]))
    return scored
