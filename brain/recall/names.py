"""Names lane: the query's words against note titles, file names and aliases.

A person asking for "the flame demon" or "escalaton die" means a note by its name. Dense
retrieval blurs names and BM25 drowns them in the notes that mention them; this lane looks
only at names. Names and query are case- and accent-folded and lightly stemmed (plurals,
possessives); a query word of five letters or more also matches a name word one edit away
(a typo, a missing letter), and one of seven or more a name word two edits away ("owlbare":
*Owlbear*). A note scores by its best name:

    score = matched · coverage² · (½ + ½ · query share)

where ``matched`` is the IDF mass (over all names) of the name's words found in the query,
``coverage`` the share of the name's own IDF mass that was found, and ``query share`` the
share of the query's IDF mass the name accounts for. A whole name in the query ranks first; a
name half in the query still counts; a name's one common word alone barely does. Fuzzy
matches count 0.8 of an exact one (0.6 at two edits); a name whose words appear in the query in
order gets 1.2×.
A name of several words also answers to its initials when the query writes them in capitals
("SS7" is *Signalling System 7*, "PAM" *Pluggable Authentication Module*, "COGS" *Cost of Goods
Sold*): a word in lower case is a word, not an acronym ("cat" is no *Common Assessment Test*).
A query that is one note's name and no other's, whole ("SS7", "escalation die", "Sofia
Castano"), puts that note first in the fused modes (``RecallSettings.name_first``): on the
three labelled sets 38 queries were such a name, and in each that note was the one asked for.
A question gets nothing from this lane: the names it holds are its topic, not the note wanted.
"""

from __future__ import annotations

import math
import re
import unicodedata
from collections.abc import Iterable
from dataclasses import dataclass
from typing import TYPE_CHECKING, NamedTuple

from ..text import for_search, lookalikes_as_cyrillic, word_pattern, yo_as_ye
from . import stop_words
from .dense import best_chunks, candidates_for
from .query_form import compares, is_question
from .ties import cut, top_notes
from .types import DEFAULT_NAMES_COMPARE_SHARE, Candidate

if TYPE_CHECKING:
    import numpy as np

    from ..index.store import IndexStore

# A word with its combining marks (a Hindi name was cut at each vowel sign).
_WORD = word_pattern()
# Words that carry no name on their own (articles, prepositions, question words).
STOP = set(
    """
    a an the and or of to in on for with is are was be by at as from about what how why when
    where which who do does did i my me we our you your it its this that vs versus can s
    """.split()
)
FUZZY_MIN = 5  # shorter words must match exactly: one edit away is another word
FUZZY_WEIGHT = 0.8
# Words this long also match a name word two edits away ("owlbare" → owlbear), for less.
FUZZY2_MIN = 7
FUZZY2_WEIGHT = 0.6
# A word longer than this is an identifier or a pasted blob, not a word to misspell: it matches as
# written (its variants, the word less one letter each, cost its length squared to build).
FUZZY_MAX = 40
ORDER_BONUS = 1.2
MIN_COVERAGE = 0.5  # a name less than half present is not that name
MIN_QUERY_SHARE = 0.25  # a name that accounts for less of the query is a word in passing, not what is asked for
# ... of a query that compares, less (RecallSettings.names_compare_share): it names two things at
# least, each a share of what one name would be ("linear vs shortcut for issue tracking").
# A product's or a site's name as its note's title gives it, domain and all ("Linear.app",
# "Shortcut.com", "Eraser.io"): the domain is how the site is written, not a word the user says
# ("linear vs shortcut"). Such a name is whole without it (RecallSettings.names_site_domains).
SITE_DOMAINS = frozenset("app io com org net ai dev co so sh me xyz".split())
_SITE_NAME = re.compile(r"\w\.([a-z]{2,3})\s*$", re.IGNORECASE)
ACRONYM_LENGTH = 8  # characters at most


def fold(text: str) -> str:
    """Case- and accent-folded: "Crème Brûlée" → "creme brulee"; as the index searches it
    (``for_search``: a soft hyphen or zero-width space no longer splits a name's word); a Russian
    word with a Latin look-alike in it ("Кaрамазовы") as the Cyrillic word."""
    if text.isascii():  # nothing to decompose, no marks: the same answer, without the walk
        return text.lower()
    decomposed = unicodedata.normalize("NFKD", lookalikes_as_cyrillic(for_search(text)).casefold())
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


# Russian case endings, as ``fold`` leaves them (й as и), longest first. A Russian name is
# inflected where an English one takes a plural or a possessive ("про Карамазовых", "с Машей",
# "в Москве", "Анну Каренину"), and the query's form of it matched no name. The surname
# suffixes -ов, -ев, -ин are no ending ("Петров" is no "Пётр"); a stem keeps three letters.
_RU_ENDINGS = tuple(
    sorted(
        """
        ьями ями ами иями ого его ому ему ыми ими ьев ием иям иях ьям ьях
        ых их ым им ои еи ии ыи ом ем ам ям ах ях ую юю ая яя ое ее ые ие ью ья ье ьи ия
        а я ы и у ю е о ь
        """.split(),
        key=len,
        reverse=True,
    )
)
_RU_STEM_MIN = 3
# The names a respelt word's form as indexed is looked for in: a word of thousands of titles
# ("история") is written the same in its first few.
_AS_INDEXED_NAMES = 20
_CYRILLIC = re.compile(r"[а-яё]+")


def russian_stem(word: str) -> str | None:
    """A folded Russian word less its case ending ("карамазовых" → карамазов, "москвои" → москв),
    what its other forms share; None for a word not in Cyrillic."""
    if not _CYRILLIC.fullmatch(word):
        return None
    for ending in _RU_ENDINGS:
        if word.endswith(ending) and len(word) - len(ending) >= _RU_STEM_MIN:
            root = word[: -len(ending)].removesuffix("ь")
            # A stem in -й or -и keeps its е or и before some endings and not others: "сергеи"
            # (Сергей) → серг, but "сергеем" → серге; "мария" → мар, "марию" → мари.
            return root[:-1] if root[-1] in "еи" and len(root) > _RU_STEM_MIN else root
    return word


def words(text: str) -> list[str]:
    return [stem(w) for w in _WORD.findall(fold(text))]


# Russian's small words (stop_words.py), as ``words`` reads them ("какой" folds to "какои"): an
# unknown word of the query counts against every name's share of it, so "эпишура и спирогира:
# что общего" had found neither name.
STOP.update(w for word in stop_words.RUSSIAN for w in words(word))


def acronyms(text: str) -> set[str]:
    """The initials a name of several words answers to: "Signalling System 7" → ss7 (a number
    stays whole), "Cost of Goods Sold" → cogs and cgs (with and without its small words)."""
    every = words(text)
    return _initials(every, [w for w in every if w not in STOP])


def _initials(every: list[str], content: list[str]) -> set[str]:
    out = set()
    for part in (every, content):  # stemming keeps a word's first letter
        initials = "".join(w if w.isdigit() else w[0] for w in part)
        letters = sum(ch.isalpha() for ch in initials)  # dates and numbers are not acronyms
        if len(part) >= 2 and letters >= 2 and len(initials) <= ACRONYM_LENGTH:
            out.add(initials)
    return out


def query_acronyms(query: str) -> list[str]:
    """The query's words written as acronyms (two capitals or more, no small letter: "SS7",
    "PAM", "ГОСТ"), folded as ``acronyms`` gives them."""
    out = []
    for word in _WORD.findall(query):
        if sum(ch.isupper() for ch in word) >= 2 and not any(ch.islower() for ch in word):
            out.append(fold(word))
    return out


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


class NameMatch(NamedTuple):
    note_id: int
    score: float
    name: str  # the name that matched
    whole: bool  # the name is the whole query: every word of each, none fuzzy (or its initials, "SS7")


# A name as the index holds it, and the initials it answers to (sorted; none for one word).
Entry = tuple[Name, tuple[str, ...]]


def name_entries(
    notes: Iterable[tuple[int, str, str]], aliases: Iterable[tuple[int, str]]
) -> tuple[list[Entry], list[Entry]]:
    """The names of these notes ((id, path, title), by id) and of their aliases ((note id,
    alias), by note id) as the index holds them: each note's title and file name, then every
    alias; a name whose words another name of the same note has is left out."""
    seen: set[tuple[int, tuple[str, ...]]] = set()

    def entry(note_id: int, text: str) -> Entry | None:
        every = words(text)
        content = tuple(w for w in every if w not in STOP) or tuple(every)
        if not content or (note_id, content) in seen:
            return None
        seen.add((note_id, content))
        return Name(note_id, text, content), tuple(sorted(_initials(every, list(content)))) if len(every) > 1 else ()

    titled: list[Entry] = []
    for note_id, path, title in notes:
        found = entry(note_id, title)
        if found is not None:
            titled.append(found)
        file_name = path.rsplit("/", 1)[-1]
        stem = file_name[:-3] if file_name.lower().endswith(".md") else file_name
        if stem != title:  # most titles are the file name: the same words, already added
            found = entry(note_id, stem)
            if found is not None:
                titled.append(found)
    aliased = [found for note_id, alias in aliases if (found := entry(note_id, alias)) is not None]
    return titled, aliased


class NameIndex:
    """Every note's title, file name and aliases, ready for matching queries against."""

    def __init__(
        self, names: list[Name], initials: dict[str, tuple[int, ...]] | None = None, *, titled: int | None = None
    ):
        self.names = names
        # names[:titled] are titles and file names, by note id; the rest aliases, by note id
        # (``patched`` puts a note's names back where a build would).
        self.titled = len(names) if titled is None else titled
        # initials → the names (indices) of several words they stand for ("ss7"): kept apart
        # from the name words, which they would otherwise dilute (every name's IDF).
        self.initials: dict[str, tuple[int, ...]] = initials or {}
        self._index_words()
        # a Russian stem → the name words of it: "москве" and "москвои" find *Москва* as a
        # plural finds an English name (a word written as a name has it is matched as itself first).
        self.by_stem: dict[str, tuple[str, ...]] = {}
        # variant → the name words it stands for; tuples, not sets: nearly every variant stands
        # for one word, and 200,000 sets of one were 40 MB at 100,000 notes.
        self._fuzzy: dict[str, tuple[str, ...]] = {}
        self._index_variants(self.by_word, ())

    def _index_words(self) -> None:
        """The names of each word (indices, ascending) and each word's IDF."""
        self.by_word: dict[str, list[int]] = {}
        for i, name in enumerate(self.names):
            for w in set(name.words):
                self.by_word.setdefault(w, []).append(i)
        total = max(1, len(self.names))
        self.idf = {w: math.log(1 + total / len(ids)) for w, ids in self.by_word.items()}
        self.max_idf = math.log(1 + total)

    def _index_variants(self, added: Iterable[str], removed: Iterable[str]) -> None:
        """``by_stem`` and the fuzzy variants with the words ``added`` to the names and those ``removed``."""
        by_stem, fuzzy = self.by_stem, self._fuzzy
        for w in removed:
            root = russian_stem(w)
            if root is not None:
                _drop(by_stem, root, w)
            if FUZZY_MIN <= len(w) <= FUZZY_MAX:
                for variant in _deletions(w) | {w}:
                    _drop(fuzzy, variant, w)
        get = fuzzy.get
        for w in added:
            root = russian_stem(w)
            if root is not None:
                by_stem[root] = by_stem.get(root, ()) + (w,)
            if FUZZY_MIN <= len(w) <= FUZZY_MAX:
                variants = _deletions(w)
                variants.add(w)
                for variant in variants:
                    fuzzy[variant] = get(variant, ()) + (w,)

    def state(self) -> tuple:
        """Everything the index holds, as plain values (``recall/cache.py`` marshals it)."""
        names = [(n.note_id, n.text, n.words) for n in self.names]
        return (names, self.by_word, self.idf, self.max_idf, self._fuzzy, self.initials, self.by_stem, self.titled)

    @classmethod
    def from_state(cls, state: tuple) -> NameIndex:
        """The index ``state`` describes, without building it again."""
        names, by_word, idf, max_idf, fuzzy, initials, by_stem, titled = state
        if not (isinstance(names, list) and isinstance(by_word, dict) and isinstance(idf, dict)):
            raise ValueError("not the state of a name index")
        if not (isinstance(max_idf, float) and isinstance(fuzzy, dict) and isinstance(initials, dict)):
            raise ValueError("not the state of a name index")
        if not (isinstance(by_stem, dict) and isinstance(titled, int) and 0 <= titled <= len(names)):
            raise ValueError("not the state of a name index")
        index = cls.__new__(cls)
        index.names = [Name(note_id, text, tuple(words)) for note_id, text, words in names]
        index.by_word, index.idf, index.max_idf, index._fuzzy = by_word, idf, max_idf, fuzzy
        index.initials, index.by_stem, index.titled = initials, by_stem, titled
        return index

    @classmethod
    def from_store(cls, store: IndexStore) -> NameIndex:
        return cls.from_entries(*name_entries(store.note_names(), store.alias_rows()))

    @classmethod
    def from_entries(cls, titled: list[Entry], aliased: list[Entry]) -> NameIndex:
        """The index of these names (``name_entries``)."""
        initials: dict[str, tuple[int, ...]] = {}
        for i, (_, keys) in enumerate(titled + aliased):
            for key in keys:
                initials[key] = initials.get(key, ()) + (i,)
        return cls([name for name, _ in titled] + [name for name, _ in aliased], initials, titled=len(titled))

    def patched(self, changed: set[int], titled: list[Entry], aliased: list[Entry]) -> NameIndex:
        """This index with the names of the notes ``changed`` replaced by ``titled`` and
        ``aliased`` (theirs, ``name_entries``; a note changed into none has none): the index
        ``from_entries`` builds of the whole, without reading every other note's names again
        (``recall/past_carry.py``: a past slice from the present's). ``self`` is left as it was."""
        old = self.names
        # (note id, 0 for a name of this index or 1 for a new one, where it comes from) per
        # part, by note id: a note's names come from one side, in their order (a stable sort).
        first = [(n.note_id, 0, i) for i, n in enumerate(old[: self.titled]) if n.note_id not in changed]
        first += [(e[0].note_id, 1, j) for j, e in enumerate(titled)]
        second = [(n.note_id, 0, i) for i, n in enumerate(old[self.titled :], self.titled) if n.note_id not in changed]
        second += [(e[0].note_id, 1, j) for j, e in enumerate(aliased)]
        first.sort(key=_by_note)
        second.sort(key=_by_note)
        new_entries = titled + aliased
        moved: dict[int, int] = {}  # old index → new index
        names: list[Name] = []
        initials: dict[str, list[int]] = {}
        for position, (_, side, i) in enumerate(first + second):
            if side == 0:
                moved[i] = position
                names.append(old[i])
            else:
                entry = new_entries[i if position < len(first) else len(titled) + i]
                names.append(entry[0])
                for key in entry[1]:
                    initials.setdefault(key, []).append(position)
        for key, found in self.initials.items():
            kept = [moved[i] for i in found if i in moved]
            if kept:
                initials.setdefault(key, []).extend(kept)
        index = NameIndex.__new__(NameIndex)
        index.names, index.titled = names, len(first)
        index.initials = {key: tuple(sorted(found)) for key, found in initials.items()}
        index._index_words()
        index.by_stem, index._fuzzy = dict(self.by_stem), dict(self._fuzzy)
        before, after = self.by_word.keys(), index.by_word.keys()
        index._index_variants([w for w in after if w not in before], [w for w in before if w not in after])
        return index

    def _matches(self, word: str) -> dict[str, float]:
        """Name words this query word matches, with the weight of the match."""
        if word in self.by_word:  # a word names use as such is meant as itself, not as a typo
            return {word: 1.0}
        root = russian_stem(word)
        if root is not None and root in self.by_stem:  # another case of a name's word: that word
            return dict.fromkeys(self.by_stem[root], 1.0)
        out: dict[str, float] = {}
        if FUZZY_MIN <= len(word) <= FUZZY_MAX + 2:  # two edits from the longest name word with variants
            # A name word sharing a variant with this one (itself or one letter deleted, each
            # side) is at most two edits away: one, or two for words of FUZZY2_MIN letters.
            for variant in _deletions(word) | {word}:
                for candidate in self._fuzzy.get(variant, ()):
                    if candidate in out:
                        continue
                    if _within_one_edit(word, candidate):
                        out[candidate] = FUZZY_WEIGHT
                    elif len(word) >= FUZZY2_MIN and len(candidate) >= FUZZY2_MIN:
                        out[candidate] = FUZZY2_WEIGHT
        return out

    def _query_idf(self, word: str) -> float:
        """A query word's IDF: its own, or (another case of a name's word) that word's; an
        unknown word weighs as the rarest."""
        if word in self.idf:
            return self.idf[word]
        root = russian_stem(word)
        forms = self.by_stem.get(root, ()) if root is not None else ()
        return max((self.idf[form] for form in forms), default=self.max_idf)

    def respellings(self, word: str) -> list[str]:
        """The name words ``word`` (a folded word, as the lexical index holds it) may misspell,
        the closer first (one edit, then two), as the index holds them; none for a word names use
        as it is written, but where that word's й is an и or out of place."""
        key = stem(fold(word))  # as names hold it: the index keeps й, names read it as и
        found = self._matches(key)
        ranked = [self._as_indexed(w) for w in sorted((w for w in found if w != key), key=lambda w: (-found[w], w))]
        if key in found:  # a name's word as names read it: its й typed as и or out of place ("чайковскйи")
            indexed = self._as_indexed(key)
            if indexed not in (key, word):
                ranked.insert(0, indexed)
        return ranked

    def _as_indexed(self, word: str) -> str:
        """A name word as the lexical index holds it: with its й, which names read as и ("баикал"
        is no word of any chunk, "байкал" is); the word itself where it has no и to be one."""
        if "и" not in word:
            return word
        for i in self.by_word.get(word, ())[:_AS_INDEXED_NAMES]:
            for written in _WORD.findall(yo_as_ye(self.names[i].text.casefold())):
                if "й" in written and stem(fold(written)) == word:
                    return written
        return word

    def search(
        self, query: str, depth: int, *, min_share: float = MIN_QUERY_SHARE, site_domains: bool = True
    ) -> list[NameMatch]:
        """The notes whose names the query holds, best first: ``depth`` of them, and those that tie
        the last. A name must account for ``min_share`` of the query's IDF mass; with
        ``site_domains`` a name written as a site ("Linear.app") is whole without its domain
        (``SITE_DOMAINS``) where the query does not hold that."""
        query_words = [w for w in words(query) if w not in STOP]
        if not query_words or depth <= 0:
            return []
        matched: dict[str, tuple[float, int]] = {}  # name word -> (weight, position in the query)
        for position, word in enumerate(query_words):
            for name_word, weight in self._matches(word).items():
                if weight > matched.get(name_word, (0.0, 0))[0]:
                    matched[name_word] = (weight, position)
        query_mass = sum(self._query_idf(w) for w in set(query_words)) or 1.0
        best: dict[int, tuple[float, str]] = {}
        whole: set[int] = set()  # notes with a name that is the whole query, word for word
        for i in {i for w in matched for i in self.by_word[w]}:
            name = self.names[i]
            mass = sum(self.idf[w] for w in name.words)
            hits = [(w, *matched[w]) for w in name.words if w in matched]
            found = sum(self.idf[w] * weight for w, weight, _ in hits)
            domain = _site_domain(name) if site_domains else None
            unsaid = domain is not None and domain not in matched
            if domain is not None and unsaid:
                mass -= self.idf[domain]  # "Linear.app" said as "linear"
            coverage = found / mass if mass else 0.0
            share = min(1.0, found / query_mass)
            if coverage < MIN_COVERAGE or share < min_share:
                continue
            score = found * coverage**2 * (0.5 + 0.5 * share)
            # Whole only as written: "linear" is a word too ("Linear.app" is whole, put first).
            if coverage > 0.999 and share > 0.999 and all(weight == 1.0 for _, weight, _ in hits) and not unsaid:
                whole.add(name.note_id)
            positions = [p for _, _, p in hits]
            if len(positions) > 1 and positions == sorted(positions):
                score *= ORDER_BONUS
            if score > best.get(name.note_id, (0.0, ""))[0]:
                best[name.note_id] = (score, name.text)
        # A query word in capitals may be a name's initials: that name found whole, as one word
        # as rare as the notes they stand for (no more query mass: another reading of its word).
        for word in query_acronyms(query):
            named = self.initials.get(word, ())
            notes = {self.names[i].note_id for i in named}
            found = math.log(1 + max(1, len(self.names)) / max(1, len(notes)))
            share = min(1.0, found / query_mass)
            if not named or share < MIN_QUERY_SHARE:
                continue
            for i in named:
                name = self.names[i]
                score = found * (0.5 + 0.5 * share)
                if share > 0.999:
                    whole.add(name.note_id)
                if score > best.get(name.note_id, (0.0, ""))[0]:
                    best[name.note_id] = (score, name.text)
        # The notes tied at the cut as well: names_search orders ties by path (ties.top_notes).
        ranked = cut(sorted(best.items(), key=lambda item: -item[1][0]), lambda item: -item[1][0], depth)
        return [NameMatch(note_id, score, text, note_id in whole) for note_id, (score, text) in ranked]


def _site_domain(name: Name) -> str | None:
    """The domain a name written as a site ends in ("Linear.app": app), as its words hold it."""
    if len(name.words) < 2 or name.words[-1] not in SITE_DOMAINS:  # most names: no regex
        return None
    found = _SITE_NAME.search(name.text)
    return name.words[-1] if found is not None and found.group(1).lower() == name.words[-1] else None


def names_search(
    store: IndexStore,
    index: NameIndex,
    query: str,
    query_vector: np.ndarray,
    depth: int,
    *,
    compare_share: float = DEFAULT_NAMES_COMPARE_SHARE,
    site_domains: bool = True,
) -> list[Candidate]:
    """The names lane: notes whose name the query holds, each shown by its best chunk; nothing
    for a question, unless it compares: "TimescaleDB or ClickHouse, what's the difference for
    us?" names the notes it asks about; or unless it is a note's name as written, which may open
    as a question does (a book's note, "Why Nations Fail"; a person's, "Will Larson"). ``score``
    is the name score, ``dense_score`` the shown chunk's cosine."""
    question = is_question(query) and not compares(query)
    if question and not all(w in index.by_word for w in words(query) if w not in STOP):  # a word no name has
        return []  # (no search: a question that is no name is most)
    # Two deep at least: whether the query names one note whole or two is not judged from the
    # first alone (--depth 1 listed one of two notes of that name, and it was put first as the only one).
    min_share = compare_share if compares(query) else MIN_QUERY_SHARE
    found = index.search(query, max(depth, 2), min_share=min_share, site_domains=site_domains)
    if question and not any(m.whole and fold(m.name) == fold(query.strip()) for m in found):
        return []
    whole = {m.note_id for m in found if m.whole}
    found = found[:depth]
    if len(whole) > 1 and sum(m.whole for m in found) < 2:  # one listed of two: not the only one
        whole = set()
    if not found:
        return []
    by_id = {m.note_id: m for m in found}
    found = [by_id[n] for n in top_notes(store, by_id, lambda n: -by_id[n].score, depth)]
    chunks = best_chunks(store, [match.note_id for match in found], query_vector)
    picks = [(m.note_id, chunks[m.note_id][0], m.score) for m in found if m.note_id in chunks]
    out = candidates_for(store, picks, "names")
    for c in out:
        c.dense_score = chunks[c.note_id][1]
        c.named = c.note_id in whole
    return out


def _by_note(item: tuple[int, int, int]) -> int:
    return item[0]


def _drop(table: dict[str, tuple[str, ...]], key: str, word: str) -> None:
    left = tuple(w for w in table.get(key, ()) if w != word)
    if left:
        table[key] = left
    else:
        table.pop(key, None)


def named_note(lane: list[Candidate]) -> int | None:
    """The one note the query names whole (``NameMatch.whole``) among the names lane's, if only one."""
    whole = [c.note_id for c in lane if c.named]
    return whole[0] if len(whole) == 1 else None
