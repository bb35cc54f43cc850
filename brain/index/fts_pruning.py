"""An exact shortcut for a BM25 search that matches much of the index.

``bm25()`` scores every chunk the lexical lane's ``"a" OR "b" OR …`` matches (~0.7 µs each;
110,000 matches for a five-word query at 100,000 notes), yet the best few hundred almost
always hold two of the words or one rare one. A chunk holding one word ``t`` alone scores
below ``idf(t) × (k1 + 1)``, whatever its length or column weights (FTS5's formula,
``fts5_aux.c``: idf × f × (k1 + 1) / (f + k1 × (1 − b + b × D / avgdl)) grows towards it with
the weighted frequency f). So the search first asks for the chunks that hold two of the words
or one of the rare ones alone, and keeps that answer when its last hit scores above every
left-out chunk's bound; otherwise it searches everything (``IndexStore.fts_search``).

The narrower search is one statement per branch. FTS5 sums one term per phrase of the
expression, in the expression's order, and a phrase counts where its own iterator stands on the
row (``branches_score_alike`` checks this SQLite does so). Branch i is "word i and a later one"
(``t_i AND (t_i+1 OR …)``); a rare word is also a branch alone (``r``). A chunk's own branch is
the one of the first word it holds (or its rare word, if it holds no other): that branch names
every word the chunk holds, in the OR's order, so it scores the chunk with the same double as
the OR (the words it does not name would add exactly 0.0). A later branch may hold the chunk
too, scored without its earlier words: lower. So each chunk's best score over the branches is
its score, and each branch's best ``limit`` holds every chunk of the whole answer whose own
branch it is (whatever ranks above such a chunk there scores above it in the OR as well): the
merged answer, kept once per chunk by its best score, is the OR's, hits, order and ties. A
branch names only its own and the later words, not the earlier ones behind a NOT: ``bm25()``
counts the chunks of every phrase in a statement for its IDF, and a NOT added that work (at
100,000 notes, bench/scale.py's queries: a search 38.2 ms with it, 34.5 ms without, p50).
The branches are separate statements, not one OR of them: in one, the iterators of a branch
that had run out stay where they stopped, and a row they stopped on counted their words twice
(found by tests/test_lexical_pruning.py).
"""

from __future__ import annotations

import functools
import math
import sqlite3
from collections.abc import Mapping, Sequence
from dataclasses import dataclass

K1 = 1.2  # FTS5's bm25() constant
MAX_TERMS = 6  # the branches name n × (n - 1) phrases, and bm25() counts the rows of each
RARE_SHARE = 0.1  # the rarest words, up to this share of all matches, may stand alone
WORTH = 0.5  # searched only when it leaves out over half of the matches (expected)
MARGIN = 1e-9  # the bound is raised by this share: never a left-out chunk at the edge


@dataclass(frozen=True)
class Pruning:
    branches: tuple[str, ...]  # together: the chunks that hold two of the words, or a rare one
    bound: float  # every chunk it leaves out scores below this (higher is better)


def pruning(
    terms: Sequence[str], counts: Mapping[str, int], rows: int, limit: int, weights: Sequence[float]
) -> Pruning | None:
    """The narrower search for ``"t1" OR "t2" OR …`` over ``terms`` (each held by ``counts[t]``
    of the table's ``rows`` chunks), or None where it cannot pay: one word or too many, a
    negative column weight (the bound needs f ≥ 0), or expected to keep too few chunks to fill
    ``limit`` (words held together as often as by chance) or too many to save work."""
    n = len(terms)
    if not 2 <= n <= MAX_TERMS or len(set(terms)) != n or limit <= 0 or rows <= 0:
        return None
    if any(not weight >= 0 for weight in weights) or any(counts.get(t, 0) <= 0 for t in terms):
        return None
    total = sum(counts[t] for t in terms)
    rare: set[str] = set()
    held = 0
    for term in sorted(terms, key=lambda t: counts[t]):
        if held + counts[term] > RARE_SHARE * total:
            break
        rare.add(term)
        held += counts[term]
    common = [t for t in terms if t not in rare]
    together = sum(counts[a] * counts[b] for i, a in enumerate(terms) for b in terms[i + 1 :]) / rows
    expected = held + together
    if not common or expected < 2 * limit or expected > WORTH * total:
        return None
    bound = max(_idf(counts[t], rows) for t in common) * (K1 + 1) * (1 + MARGIN)
    return Pruning(branches(list(terms), rare), bound)


def _idf(holding: int, rows: int) -> float:
    idf = math.log((rows - holding + 0.5) / (holding + 0.5))
    return idf if idf > 0 else 1e-6  # as fts5_aux.c floors it


def branches(terms: list[str], rare: set[str]) -> tuple[str, ...]:
    """The MATCH expressions of the narrower search: "word i and a later one" for each word but
    the last, and each rare word alone. A chunk may be in several; its best score is the OR's."""
    quoted = [quote(t) for t in terms]
    out = [f"{quoted[i]} AND ({' OR '.join(quoted[i + 1 :])})" for i in range(len(terms) - 1)]
    out += [quoted[i] for i, term in enumerate(terms) if term in rare]
    return tuple(out)


def quote(term: str) -> str:
    return '"' + term.replace('"', '""') + '"'


@functools.cache
def branches_score_alike() -> bool:
    """Whether this SQLite's FTS5 scores each chunk, at best over the branches, as it scores it in
    the OR, and never above (see the module docstring): asked once per process, of six rows in memory."""
    rows = [("a b", ""), ("a a", ""), ("b", ""), ("a b c", "c"), ("c", "a"), ("c c", "")]
    terms = ["a", "b", "c"]
    plain = " OR ".join(quote(t) for t in terms)
    try:
        conn = sqlite3.connect(":memory:")
        try:
            conn.execute("CREATE VIRTUAL TABLE t USING fts5(x, y)")
            conn.executemany("INSERT INTO t (x, y) VALUES (?, ?)", rows)
            sql = "SELECT rowid, bm25(t, 2.0, 1.0) FROM t WHERE t MATCH ?"
            everything = dict(conn.execute(sql, (plain,)).fetchall())
            found = [conn.execute(sql, (branch,)).fetchall() for branch in branches(terms, {"b"})]
        finally:
            conn.close()
    except sqlite3.Error:
        return False
    kept: dict[int, float] = {}
    for rowid, rank in (hit for hits in found for hit in hits):  # bm25() is lower-better
        kept[rowid] = min(rank, kept.get(rowid, rank))
    # two of the words (rows 1, 4, 5: across columns too) or the rare "b" (rows 1, 3, 4)
    return set(kept) == {1, 3, 4, 5} and all(kept[r] == everything[r] for r in kept)
