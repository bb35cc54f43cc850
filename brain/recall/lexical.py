"""Lexical lane: BM25 over chunks with SQLite FTS5, folded to notes by their best chunk.

Dense models miss exact titles, aliases, error strings and rare names; BM25 finds them.
The query becomes an OR of its terms (each quoted, so punctuation cannot break the FTS5
syntax); BM25's IDF then does the weighting. Titles weigh more than headings, headings more
than text.
"""

from __future__ import annotations

import re
from collections.abc import Callable, Sequence
from typing import TYPE_CHECKING

from ..index.schema import FTS_TOKENIZERS
from ..index.tokens import index_words
from ..text import CJK, lookalikes_as_cyrillic, marks, unpointed, word_pattern, yo_as_ye
from .dense import candidates_for, decayed
from .stop_words import RUSSIAN
from .ties import top_notes
from .types import DEFAULT_BM25_WEIGHTS, DEFAULT_DEPTH, Candidate

if TYPE_CHECKING:
    from ..index.store import IndexStore

# Column weights for bm25(): title, heading, text (``RecallSettings.lexical_weights``).
WEIGHTS = DEFAULT_BM25_WEIGHTS
COMMON_SHARE = 0.25  # a term in more chunks than this adds little to BM25 and costs a scan
RESPELL_MAX_WORDS = 3  # a query of this many words or fewer is a lookup: its unknown words may be typos
# Very common words add nothing but time; BM25 would give them ~0 weight anyway. Russian's
# too: in a small or mostly English vault "что" is in few chunks and was searched as a word.
_ENGLISH_STOP = set(
    """
    a an the and or of to in on for with is are was
    what how why when where which who do does did i we my
    our it this that be about from at by as can should
    """.split()
)
_STOP = _ENGLISH_STOP | RUSSIAN


def fold(text: str) -> str:
    """Case folded, ё as е: what the index holds (schema.py m006) and what unicode61 does."""
    return yo_as_ye(text.casefold())


def fts_terms(query: str, tokenizer: str = "unicode61") -> list[str]:
    """The query's terms as the index's tokenizer holds them: words, or (trigram) their trigrams.

    Words are the tokenizer's own (``index_words``: "Ruairí" is "ruairi", "wpa_supplicant" two
    words), or the vocabulary would not know them. Stop words are left out unless nothing else
    is left. A trigram index only matches runs of three or more characters, and a Chinese or
    Japanese query is one run with no spaces: its trigrams, OR-ed, let BM25 score partial overlaps.
    """
    if tokenizer == "trigram":
        every = word_pattern().findall(fold(query))
    else:
        every = index_words(query, FTS_TOKENIZERS[tokenizer])
        # unicode61 cuts pointed Hebrew or Arabic at each point ("שָׁלוֹם": "ש", "לו", "ם"), and most
        # notes are written unpointed ("שלום"): a pointed query (a verse, a quote) asks for both. The
        # index keeps a note's points: dropping them made vaultofknowledge's pointed chunks fewer
        # words to BM25, which moved an English query's near-tie (README, Languages in the BM25 lane).
        bare = unpointed(query)
        if bare != query:
            every += index_words(bare, FTS_TOKENIZERS[tokenizer])
        # A Russian word typed with a Latin look-alike ("кaрамазовы" with a Latin "a") is no word of
        # any note written in Cyrillic: it asks for both, as a pointed word does.
        cyrillic = lookalikes_as_cyrillic(query)
        if cyrillic != query:
            every += index_words(cyrillic, FTS_TOKENIZERS[tokenizer])
    words = [t for t in every if t not in _STOP] or every
    if tokenizer == "trigram":
        words = [w[i : i + 3] for w in words for i in range(len(w) - 2)]
        return list(dict.fromkeys(words))[:64]
    return list(dict.fromkeys(words))[:32]


def fts_query(query: str, tokenizer: str = "unicode61") -> str | None:
    """An FTS5 MATCH expression: the query's terms, quoted, OR-ed; None when nothing is left."""
    return _match(fts_terms(query, tokenizer))


# Han, kana and Hangul: scripts where a word is often two characters, too short for a trigram.
_CJK_RUN = re.compile(f"[{CJK}]{{2,}}")
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
    total = store.fts_row_count() or 1
    frequency = store.term_chunk_counts(terms)
    kept = [t for t in terms if 0 < frequency[t] <= COMMON_SHARE * total]
    if not kept:
        present = [t for t in terms if frequency[t] > 0]
        kept = [min(present, key=lambda t: frequency[t])] if present else []
    return kept


def match_expression(
    store: IndexStore, query: str, respell: Callable[[str], Sequence[str]] | None = None
) -> str | None:
    """The FTS5 MATCH expression the lexical lanes search with: the query's informative terms
    as the index's tokenizer holds them, OR-ed; None when nothing is left. ``respell``: the
    words a word may misspell, closer first (``respelled``)."""
    tokenizer = store.fts_tokenizer()
    terms = fts_terms(query, tokenizer)
    if tokenizer == "trigram":
        terms = list(dict.fromkeys(terms + cjk_bigram_terms(store, query)))
    elif respell is not None:
        terms = respelled(store, terms, respell, query_words(query, terms))
    return _match(informative_terms(store, terms))


def query_words(query: str, terms: list[str]) -> int:
    """How many words the query's ``terms`` (unicode61's) are: a word the tokenizer cut at its
    combining marks ("देखो": "द", "ख") counts once, its pieces read without the marks."""
    if len(terms) <= RESPELL_MAX_WORDS:  # fewer pieces than that are fewer words too
        return len(terms)
    unmarked = re.sub(f"[{marks()}]", "", query)
    return len(terms) if unmarked == query else len(fts_terms(unmarked))


def respelled(
    store: IndexStore, terms: list[str], respell: Callable[[str], Sequence[str]], words: int | None = None
) -> list[str]:
    """``terms``, where the query is a lookup of a few words, with each word no chunk holds
    replaced by the indexed word it misspells ("owlbare stats": *owlbear*).

    A word the index lacks adds nothing to BM25, so only such words change. ``respell`` offers
    the candidates (the names lane's: words of note names, one edit away, two in long words),
    closer first; the first held by some chunk and beginning with the same letter is taken
    (people rarely mistype a word's first letter, and "hotline" is no misspelt "outline"). In a
    longer query an unknown word is more likely a word the vault does not use than a typo:
    "picking which lorry visits which customers" does not mean *pricing*. ``words``: how many
    words the query is (``query_words``; ``terms``' count by default).
    """
    if (len(terms) if words is None else words) > RESPELL_MAX_WORDS:
        return terms
    counts = store.term_chunk_counts(terms)
    out = []
    for term in terms:
        if counts[term] == 0 and term.isalpha():
            offered = [w for w in respell(term) if w[:1] == term[:1]]
            held = store.term_chunk_counts(offered) if offered else {}
            term = next((w for w in offered if held[w] > 0), term)
        out.append(term)
    return list(dict.fromkeys(out))


def search_depth(depth: int) -> int:
    """How many chunks the lane asks FTS5 for to find ``depth`` distinct notes."""
    return depth * 5


def lexical_search(
    store: IndexStore,
    query: str,
    depth: int = DEFAULT_DEPTH,
    decay: float = 0.0,
    weights: tuple[float, ...] = WEIGHTS,
    *,
    expression: str | None = None,
    hits: list[tuple[int, float]] | None = None,
) -> list[Candidate]:
    """The top ``depth`` notes by their best chunk's BM25 score, best first (with ``decay``, plus
    decay × the second chunk's, ... as ``dense_search`` does). ``weights``: the bm25() column
    weights; ``expression``: ``match_expression(store, query)`` when the caller has it already;
    ``hits``: the ``search_depth(depth)`` chunks ``fts_search`` gives for them, when the caller
    has searched already (the pipeline shares them with anchor_lex)."""
    if depth <= 0:
        return []
    if hits is None:
        expression = expression or match_expression(store, query)
        if expression is None:
            return []
        hits = store.fts_search(expression, weights, search_depth(depth))
    note_of = store.chunk_note_ids([chunk_id for chunk_id, _ in hits])
    best: dict[int, tuple[int, float]] = {}
    more: dict[int, list[float]] = {}  # note id -> its further chunks' scores, best first
    last = None  # the best chunk's score of the depth-th note: a note that ties it competes for its place
    for chunk_id, score in hits:  # best first
        note_id = note_of.get(chunk_id)
        if note_id is None:
            continue
        if note_id in best:
            if decay > 0:
                more.setdefault(note_id, []).append(score)
        elif len(best) < depth or score == last:
            best[note_id] = (chunk_id, score)
            if len(best) == depth:
                last = score
        elif decay <= 0:
            break
    total = {note_id: score + decayed(more.get(note_id, []), decay) for note_id, (_, score) in best.items()}
    top = top_notes(store, best, lambda n: -total[n], depth)
    return candidates_for(store, [(n, best[n][0], total[n]) for n in top], "lexical")  # score = BM25
