"""Names lane: the query's words against note titles, file names and aliases.

A person asking for "the flame demon" or "escalaton die" means a note by its name. Dense
retrieval blurs names and BM25 drowns them in the notes that mention them; this lane looks
only at names. Names and query are case- and accent-folded and lightly stemmed (plurals,
possessives); a query word of five letters or more also matches a name word one edit away
(a typo, a missing letter). A note scores by its best name:

    score = matched · coverage² · (½ + ½ · query share)

where ``matched`` is the IDF mass (over all names) of the name's words found in the query,
``coverage`` the share of the name's own IDF mass that was found, and ``query share`` the
share of the query's IDF mass the name accounts for. A whole name in the query ranks first; a
name half in the query still counts; a name's one common word alone barely does. Fuzzy
matches count 0.8 of an exact one; a name whose words appear in the query in order gets 1.2×.
A question gets nothing from this lane: the names it holds are its topic, not the note wanted.
"""

from __future__ import annotations

import math
import re
import unicodedata
from dataclasses import dataclass
from typing import TYPE_CHECKING

from .dense import best_chunks, candidates_for
from .types import Candidate

if TYPE_CHECKING:
    import numpy as np

    from ..index.store import IndexStore

_WORD = re.compile(r"\w+", re.UNICODE)
# Words that carry no name on their own (articles, prepositions, question words).
STOP = set(
    """
    a an the and or of to in on for with is are was be by at as from about what how why when
    where which who do does did i my me we our you your it its this that vs versus can s
    """.split()
)
FUZZY_MIN = 5  # shorter words must match exactly: one edit away is another word
FUZZY_WEIGHT = 0.8
ORDER_BONUS = 1.2
MIN_COVERAGE = 0.5  # a name less than half present is not that name
MIN_QUERY_SHARE = 0.25  # a name that accounts for less of the query is a word in passing, not what is asked for


def fold(text: str) -> str:
    """Case- and accent-folded: "Crème Brûlée" → "creme brulee"."""
    if text.isascii():  # nothing to decompose, no marks: the same answer, without the walk
        return text.lower()
    decomposed = unicodedata.normalize("NFKD", text.casefold())
    return "".join(ch for ch in decomposed if not unicodedata.combining(ch))


def stem(word: str) -> str:
    """Plurals and possessives only: enough for names, never two names into one."""
    if len(word) > 4 and word.endswith("ies"):
        return word[:-3] + "y"
    if len(word) > 4 and word.endswith(("ses", "xes", "ches", "shes")):
        return word[:-2]
    if len(word) > 3 and word.endswith("s") and not word.endswith(("ss", "us", "is")):
        return word[:-1]
    return word


def words(text: str) -> list[str]:
    return [stem(w) for w in _WORD.findall(fold(text))]


def _deletions(word: str) -> set[str]:
    return {word[:i] + word[i + 1 :] for i in range(len(word))}


def _within_one_edit(a: str, b: str) -> bool:
    """Optimal string alignment distance ≤ 1 (insert, delete, substitute, swap two neighbours)."""
    if a == b:
        return True
    if abs(len(a) - len(b)) > 1:
        return False
    if len(a) == len(b):
        diff = [i for i in range(len(a)) if a[i] != b[i]]
        return len(diff) == 1 or (
            len(diff) == 2 and diff[1] == diff[0] + 1 and a[diff[0]] == b[diff[1]] and a[diff[1]] == b[diff[0]]
        )
    short, long_ = (a, b) if len(a) < len(b) else (b, a)
    return any(long_[:i] + long_[i + 1 :] == short for i in range(len(long_)))


@dataclass(frozen=True, slots=True)  # slots: a vault of 100,000 notes has twice as many names
class Name:
    note_id: int
    text: str
    words: tuple[str, ...]  # content words, folded and stemmed


class NameIndex:
    """Every note's title, file name and aliases, ready for matching queries against."""

    def __init__(self, names: list[Name]):
        self.names = names
        self.by_word: dict[str, list[int]] = {}
        for i, name in enumerate(names):
            for w in set(name.words):
                self.by_word.setdefault(w, []).append(i)
        total = max(1, len(names))
        self.idf = {w: math.log(1 + total / len(ids)) for w, ids in self.by_word.items()}
        self.max_idf = math.log(1 + total)
        # variant → the name words it stands for; tuples, not sets: nearly every variant stands
        # for one word, and 200,000 sets of one were 40 MB at 100,000 notes.
        self._fuzzy: dict[str, tuple[str, ...]] = {}
        fuzzy, get = self._fuzzy, self._fuzzy.get
        for w in self.by_word:
            if len(w) >= FUZZY_MIN:
                variants = _deletions(w)
                variants.add(w)
                for variant in variants:
                    fuzzy[variant] = get(variant, ()) + (w,)

    def state(self) -> tuple:
        """Everything the index holds, as plain values (``recall/cache.py`` marshals it)."""
        names = [(n.note_id, n.text, n.words) for n in self.names]
        return (names, self.by_word, self.idf, self.max_idf, self._fuzzy)

    @classmethod
    def from_state(cls, state: tuple) -> NameIndex:
        """The index ``state`` describes, without building it again."""
        names, by_word, idf, max_idf, fuzzy = state
        if not (isinstance(names, list) and isinstance(by_word, dict) and isinstance(idf, dict)):
            raise ValueError("not the state of a name index")
        if not (isinstance(max_idf, float) and isinstance(fuzzy, dict)):
            raise ValueError("not the state of a name index")
        index = cls.__new__(cls)
        index.names = [Name(note_id, text, tuple(words)) for note_id, text, words in names]
        index.by_word, index.idf, index.max_idf, index._fuzzy = by_word, idf, max_idf, fuzzy
        return index

    @classmethod
    def from_store(cls, store: IndexStore) -> NameIndex:
        names: list[Name] = []
        seen: set[tuple[int, tuple[str, ...]]] = set()

        def add(note_id: int, text: str) -> None:
            content = tuple(w for w in words(text) if w not in STOP) or tuple(words(text))
            if content and (note_id, content) not in seen:
                seen.add((note_id, content))
                names.append(Name(note_id, text, content))

        for note_id, path, title in store.note_names():
            add(note_id, title)
            file_name = path.rsplit("/", 1)[-1]
            stem = file_name[:-3] if file_name.lower().endswith(".md") else file_name
            if stem != title:  # most titles are the file name: the same words, already added
                add(note_id, stem)
        for note_id, alias in store.alias_rows():
            add(note_id, alias)
        return cls(names)

    def _matches(self, word: str) -> dict[str, float]:
        """Name words this query word matches, with the weight of the match."""
        if word in self.by_word:  # a word names use as such is meant as itself, not as a typo
            return {word: 1.0}
        out: dict[str, float] = {}
        if len(word) >= FUZZY_MIN:
            for variant in _deletions(word) | {word}:
                for candidate in self._fuzzy.get(variant, ()):
                    if candidate not in out and _within_one_edit(word, candidate):
                        out[candidate] = FUZZY_WEIGHT
        return out

    def search(self, query: str, depth: int) -> list[tuple[int, float, str]]:
        """(note id, score, the name that matched), best first, at most ``depth`` notes."""
        query_words = [w for w in words(query) if w not in STOP]
        if not query_words or depth <= 0:
            return []
        matched: dict[str, tuple[float, int]] = {}  # name word -> (weight, position in the query)
        for position, word in enumerate(query_words):
            for name_word, weight in self._matches(word).items():
                if weight > matched.get(name_word, (0.0, 0))[0]:
                    matched[name_word] = (weight, position)
        query_mass = sum(self.idf.get(w, self.max_idf) for w in set(query_words)) or 1.0
        best: dict[int, tuple[float, str]] = {}
        for i in {i for w in matched for i in self.by_word[w]}:
            name = self.names[i]
            mass = sum(self.idf[w] for w in name.words)
            hits = [(w, *matched[w]) for w in name.words if w in matched]
            found = sum(self.idf[w] * weight for w, weight, _ in hits)
            coverage = found / mass if mass else 0.0
            share = min(1.0, found / query_mass)
            if coverage < MIN_COVERAGE or share < MIN_QUERY_SHARE:
                continue
            score = found * coverage**2 * (0.5 + 0.5 * share)
            positions = [p for _, _, p in hits]
            if len(positions) > 1 and positions == sorted(positions):
                score *= ORDER_BONUS
            if score > best.get(name.note_id, (0.0, ""))[0]:
                best[name.note_id] = (score, name.text)
        ranked = sorted(best.items(), key=lambda item: (-item[1][0], item[0]))[:depth]
        return [(note_id, score, text) for note_id, (score, text) in ranked]


_QUESTION = re.compile(
    r"^\s*(what|what's|whats|how|why|when|where|which|who|whom|whose|is|are|was|were|does|do|did|can|could|"
    r"should|would|will|как|что|почему|зачем|когда|где|какой|какая|какие|кто)\b",
    re.IGNORECASE | re.UNICODE,
)


def is_question(query: str) -> bool:
    """A question asks about something; the names it holds are its topic, not the note wanted
    ("what is the current decision on the vector store?" wants the decision, not *Vector store*)."""
    return query.rstrip().endswith("?") or bool(_QUESTION.match(query))


def names_search(
    store: IndexStore, index: NameIndex, query: str, query_vector: np.ndarray, depth: int
) -> list[Candidate]:
    """The names lane: notes whose name the query holds, each shown by its best chunk; nothing
    for a question. ``score`` is the name score, ``dense_score`` the shown chunk's cosine."""
    if is_question(query):
        return []
    found = index.search(query, depth)
    if not found:
        return []
    chunks = best_chunks(store, [note_id for note_id, _, _ in found], query_vector)
    picks = [(note_id, chunks[note_id][0], score) for note_id, score, _ in found if note_id in chunks]
    out = candidates_for(store, picks, "names")
    for c in out:
        c.dense_score = chunks[c.note_id][1]
    return out
