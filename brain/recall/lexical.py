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


def fold(text: str) -> str:
    """Case folded, ё as е: what the index holds (schema.py m006) and what unicode61 does."""
    return text.casefold().replace("ё", "е")


def fts_terms(query: str, tokenizer: str = "unicode61") -> list[str]:
    """The query's terms as the index's tokenizer holds them: words, or (trigram) their trigrams.

    Stop words are left out unless nothing else is left. A trigram index only matches runs of
    three or more characters, and a Chinese or Japanese query is one run with no spaces: its
    trigrams, OR-ed, let BM25 score partial overlaps.
    """
    words = [t for t in _TERM.findall(fold(query)) if t not in _STOP] or _TERM.findall(fold(query))
    if tokenizer == "trigram":
        words = [w[i : i + 3] for w in words for i in range(len(w) - 2)]
        return list(dict.fromkeys(words))[:64]
    return list(dict.fromkeys(words))[:32]


def fts_query(query: str, tokenizer: str = "unicode61") -> str | None:
    """An FTS5 MATCH expression: the query's terms, quoted, OR-ed; None when nothing is left."""
    return _match(fts_terms(query, tokenizer))


# Han, kana and Hangul: scripts where a word is often two characters, too short for a trigram.
_CJK_RUN = re.compile(r"[\u3040-\u30ff\u3400-\u4dbf\u4e00-\u9fff\uf900-\ufaff\uac00-\ud7af]{2,}")
PER_BIGRAM = 8  # indexed trigrams a two-character piece of a query may stand for


def cjk_bigram_terms(store: IndexStore, query: str) -> list[str]:
    """Indexed trigrams that begin with a two-character piece of a CJK run in the query.

    "长城有多长" ("how long is the Great Wall") shares no trigram with a note on 长城, and a
    trigram index cannot match two characters: the trigrams starting with 长城 ("长城是", …)
    stand in for it, the most widespread first.
    """
    out: list[str] = []
    for run in _CJK_RUN.findall(fold(query)):
        for i in range(len(run) - 1):
            out.extend(store.vocabulary_with_prefix(run[i : i + 2], PER_BIGRAM))
    return list(dict.fromkeys(out))


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
    tokenizer = store.fts_tokenizer()
    terms = fts_terms(query, tokenizer)
    if tokenizer == "trigram":
        terms = list(dict.fromkeys(terms + cjk_bigram_terms(store, query)))
    expression = _match(informative_terms(store, terms))
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
