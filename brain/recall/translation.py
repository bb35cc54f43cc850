"""Translation lane: BM25 with the query's words translated into the vault's words.

A paraphrase asks in other words than its answer ("a weak minion" for a note on *mooks*), and
BM25 only matches the words it is given. A translation model (Berger and Lafferty 1999) gives
P(w_doc | w_query): how likely a word of an answer is where a question has a given word. It is
estimated here with no labels, from pairs the vault's own structure makes:

    heading pairs   the words of a chunk's note title and headings → the chunk's text
                    ("Ogre Minion" → its stat block, which says "mook")
    link pairs      the words of the line around a ``[[X]]`` → X's first chunk (what the vault
                    says of X, in the linker's words → X's own words)

For each query word q, P(w | q) is read as the share of q's pairs whose target holds w; a word
w is offered when it is much likelier there than in any pair's target (P(w | q) / P(w), the
share of all pairs whose target holds it), in at least ``MIN_SUPPORT`` of q's pairs, and no word of the
query; the most telling first (P(w | q) × log of that lift). The lane scores
each chunk by its BM25 for the query (the lexical lane's hits) plus ``share`` × its BM25 for the
offered words (one more FTS5 search), and a note by its best chunk. A query offered no word
gives an empty lane: it adds no vote the lexical lane did not cast.
"""

from __future__ import annotations

import math
import re
from collections import Counter, defaultdict
from collections.abc import Sequence
from dataclasses import dataclass
from typing import TYPE_CHECKING

from .anchors import written_targets
from .bm25 import index_tokens
from .lexical import _STOP, _match, fts_terms, informative_terms, lexical_search, search_depth
from .types import Candidate

if TYPE_CHECKING:
    from ..index.store import IndexStore

MAX_PAIRS = 200  # pairs read per query word: a word in a thousand headings says little of each
MIN_PAIRS = 2  # a query word in fewer pairs is translated by one note's words: no evidence
MIN_SUPPORT = 3  # ... and an offered word is in at least this many of its pairs' targets
MIN_LIFT = 4.0  # ... and at least this much likelier there than in the vault's text at large
MIN_SHARE = 0.0  # ... and held by at least this share of q's pairs' targets
LINK_PAIRS = True  # pairs from the lines around links, beside those from headings
PER_WORD = 2  # words offered per query word
MAX_OFFERED = 8  # words offered per query
LINE_CHARS = 300  # a link's line longer than this is cut to this much around the link


_WIKI_SHOWN = re.compile(r"\[\[(?:[^\[\]|\n]*\|)?([^\[\]|\n]+?)\]\]")
_MD_SHOWN = re.compile(r"\[([^\]\n]*)\]\([^)\n]*\)")


def _shown(text: str) -> str:
    """``text`` with each link as Obsidian shows it: a link's path ("Compendium/13A/Combat-Rules/…")
    is words of every note that links, and would be offered as the translation of anything."""
    text = _MD_SHOWN.sub(r"\1", text)
    return _WIKI_SHOWN.sub(lambda m: m.group(1).rsplit("/", 1)[-1].split("#", 1)[0], text)


def _words(text: str) -> list[str]:
    """The content words of ``text`` as shown, as unicode61 holds them: three letters or more, no stop word."""
    return [w for w in index_tokens(_shown(text)) if len(w) > 2 and w.isalpha() and w not in _STOP]


@dataclass
class TranslationModel:
    pairs: dict[str, list[int]]  # source word → target chunk ids, one per pair
    background: dict[str, float]  # word → the share of pairs whose target holds it
    words: dict[int, frozenset[str]]  # chunk id → its text's words (the targets only)

    @classmethod
    def from_store(cls, store: IndexStore) -> TranslationModel:
        rows = store.chunk_rows(store.chunk_ids())
        pairs: dict[str, list[int]] = defaultdict(list)
        first: dict[int, int] = {}  # note id → its first chunk
        for chunk_id in sorted(rows):
            row = rows[chunk_id]
            first.setdefault(row.note_id, chunk_id)
            for word in set(_words(f"{row.title} {row.heading}")):
                pairs[word].append(chunk_id)
        resolved = store.written_link_targets(sorted(first)) if LINK_PAIRS else {}
        for chunk_id in sorted(rows) if LINK_PAIRS else ():
            row = rows[chunk_id]
            for line in row.text.splitlines():
                if "[[" not in line and "](" not in line:
                    continue
                for written in dict.fromkeys(written_targets(line)):
                    target = resolved.get((row.note_id, written))
                    if target is None or target not in first:
                        continue
                    at = max(line.find(written), 0)
                    around = line[max(0, at - LINE_CHARS // 2) : at + LINE_CHARS // 2]
                    # the link's own words are the target's name, not what is said of it
                    for word in set(_words(around.replace(f"[[{written}", "[["))) - set(_words(written)):
                        pairs[word].append(first[target])
        # The background is the pairs' own targets, as often as pairs point at them: a note linked
        # from everywhere (a class, an index) is in any word's pairs, and its words are no translation.
        targeted = Counter(chunk_id for ids in pairs.values() for chunk_id in ids)
        words = {chunk_id: frozenset(_words(rows[chunk_id].text)) for chunk_id in targeted}
        counts: Counter[str] = Counter()
        for chunk_id, n in targeted.items():
            for word in words[chunk_id]:
                counts[word] += n
        total = sum(targeted.values()) or 1
        return cls(dict(pairs), {w: n / total for w, n in counts.items()}, words)

    def offered(self, terms: Sequence[str]) -> list[str]:
        """The words the query's ``terms`` translate into, most telling first."""
        asked = set(terms)
        scored: dict[str, float] = {}
        for term in terms:
            ids = list(dict.fromkeys(self.pairs.get(term, ())))
            if len(ids) < MIN_PAIRS:
                continue
            if len(ids) > MAX_PAIRS:  # spread over the vault, not its first folder
                ids = ids[:: math.ceil(len(ids) / MAX_PAIRS)]
            support: Counter[str] = Counter()
            for chunk_id in ids:
                support.update(self.words.get(chunk_id, ()))
            best: list[tuple[float, str]] = []
            for word, held in support.items():
                p = held / len(ids)
                background = self.background.get(word, 0.0)
                if word in asked or held < MIN_SUPPORT or p < MIN_SHARE or not background:
                    continue
                lift = p / background
                if lift >= MIN_LIFT:
                    best.append((p * math.log(lift), word))
            for value, word in sorted(best, reverse=True)[:PER_WORD]:
                scored[word] = max(scored.get(word, 0.0), value)
        return sorted(scored, key=lambda w: (-scored[w], w))[:MAX_OFFERED]


def translation_search(
    store: IndexStore,
    model: TranslationModel,
    query: str,
    hits: Sequence[tuple[int, float]],
    depth: int,
    weights: tuple[float, ...],
    share: float,
) -> list[Candidate]:
    """The top ``depth`` notes by their best chunk's BM25 for the query (``hits``, the lexical
    lane's) plus ``share`` × its BM25 for the words the query translates into; none when it
    translates into none."""
    offered = model.offered(fts_terms(query, store.fts_tokenizer()))
    expression = _match(informative_terms(store, offered)) if offered else None
    if expression is None or depth <= 0:
        return []
    score = dict(hits)
    for chunk_id, value in store.fts_search(expression, weights, search_depth(depth)):
        score[chunk_id] = score.get(chunk_id, 0.0) + share * value
    ranked = sorted(score.items(), key=lambda hit: (-hit[1], hit[0]))
    found = lexical_search(store, query, depth, weights=weights, hits=ranked)
    for c in found:
        c.sources = ["translation"]
    return found
