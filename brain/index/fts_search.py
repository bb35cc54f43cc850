"""The BM25 searches of the present chunks (``chunks_fts``), and the readers they run on in parts.

``IndexStore.fts_search`` is answered here (``FtsSearch``, one a store, made with it): from the
lexical postings where they give FTS5's very answer (``postings.py``), else from the narrower
statements that may hold the whole answer (``fts_pruning.py``), else in one statement, or split
into rowid ranges searched at once on the store's connection and on its readers (``readers.py``:
the connections and threads, none of the SQL). A snapshot's readers are pinned to its state
(``pin``). Part of the store: the SQL here reads the lexical table the store owns, through the
store's connection and its readers, and the store's reads of its sizes (``fts_row_count``,
``term_chunk_counts``); nothing outside brain/index calls it but through the store.
"""

from __future__ import annotations

import logging
import re
import sqlite3
from collections.abc import Callable, Sequence
from functools import partial
from itertools import pairwise
from typing import TYPE_CHECKING, TypeVar

from .. import config
from . import fts_pruning
from .files import INDEX_FILE
from .fts_pruning import Pruning
from .readers import OPEN_FAILURES, ReaderFailed, ReaderPool
from .store_open import begin_read

if TYPE_CHECKING:
    from .store import IndexStore

log = logging.getLogger("brain")

_T = TypeVar("_T")
_LOWEST_ROWID, _HIGHEST_ROWID = -(2**63), 2**63 - 1
_QUOTED = re.compile(r'"((?:[^"]|"")*)"')
# A BM25 search's best ``limit`` (weights, expression, limit): the FTS table alone, nothing joined.
_BM25_BEST = (
    "SELECT rowid, bm25(chunks_fts, ?, ?, ?) AS rank FROM chunks_fts WHERE chunks_fts MATCH ?"
    " ORDER BY rank, rowid LIMIT ?"
)


class FtsSearch:
    """One store's BM25 searches and their readers: ``reader`` opens another connection to the
    store's database (made read-only here, ``query_only``), None: searches are never split.

    Each call is given the store it searches for; only the readers' opener holds it (as the
    store's own readers did), so a store with no readers is in no reference cycle and goes,
    with what its cache holds (a postings base's open file), as soon as it is dropped."""

    def __init__(self, store: IndexStore, reader: Callable[[], sqlite3.Connection] | None):
        self._reader = reader
        opener = partial(self._open_reader, store) if reader else None
        self._readers = ReaderPool(opener, lambda: config.lexical_threads() - 1)
        self._split_at: int | None = None  # BRAIN_LEXICAL_SPLIT_MATCHES, read when first needed

    @property
    def pinned(self) -> bool:
        """Whether the readers hold a read transaction on the store's snapshot (``pin``)."""
        return self._readers.pinned

    def pinned_readers(self) -> list[sqlite3.Connection]:
        """The readers' connections while they are pinned to the store's snapshot, else none."""
        return (self._readers.connections() or []) if self._readers.pinned else []

    def close(self) -> None:
        """Join the readers' threads and close their connections."""
        self._readers.close()

    def _open_reader(self, store: IndexStore) -> sqlite3.Connection:
        """Another connection to the store's database (``reader``), or OPEN_FAILURES: only
        while the file at the path is still the one the store opened (``--rebuild`` swaps)."""
        assert self._reader is not None
        conn = query_only(self._reader())
        if not store.still_at_its_path():
            conn.close()
            raise sqlite3.DatabaseError(f"{store.directory / INDEX_FILE} was replaced since this index was opened")
        return conn

    def pin(self, store: IndexStore) -> None:
        """Open the BM25 readers of the store (a snapshot), each in a read transaction on its state;
        or close them when the index is too small to split a search or the state cannot be
        pinned (one statement then, as always before).

        SQLite gives no way to start a connection at another's state, only to tell whether a
        commit came between two of its reads (``data_version``). So: each reader reads it; the
        store's snapshot starts again; each reader's snapshot starts and reads it again.
        Unchanged everywhere: no commit came between, and all read the same state. A writer
        committing meanwhile: try again, twice, then give up for this snapshot.
        """
        readers = self._readers
        self._split_at = config.lexical_split_matches()
        if not readers.usable or store.fts_row_count() < self._split_at:
            readers.close()
            return
        for _ in range(3):
            try:
                conns = readers.connections()
            except OPEN_FAILURES as exc:
                log.warning("BM25 searches of this snapshot run in one statement (%s)", exc)
                return
            assert conns is not None
            before = [data_version(c) for c in conns]
            store.conn.execute("ROLLBACK")
            for c in (store.conn, *conns):
                begin_read(c)
            if [data_version(c) for c in conns] == before:
                readers.pinned = True
                return
            for c in conns:
                c.execute("ROLLBACK")
        log.info("the index kept changing while this snapshot opened: its BM25 searches run in one statement")
        readers.close()

    def search(
        self, store: IndexStore, expression: str, weights: Sequence[float], limit: int
    ) -> list[tuple[int, float]]:
        """(chunk id, BM25 score, higher is better) for an FTS5 MATCH expression, best first;
        equal scores by chunk id.

        ``weights`` are the bm25() column weights: title, heading, text. The FTS table alone,
        nothing joined before the limit. (FTS5's own ``ORDER BY rank`` sorts every match in a
        nested query: slower here, 0.92 s against 0.55 s at 110,000 matches on SQLite 3.40.)

        bm25() scores every match (~0.7 µs each), so a search of the lexical lane's form (``"a"
        OR "b" OR …``) that may match many chunks first asks for the chunks that can be among the
        best (two of its words, or a rare one alone: ``fts_pruning``) and keeps that answer when
        its last hit outscores every chunk left out; and a search is split into rowid ranges
        searched at once, on the store's connection and the readers' (``_split_search``). Either way:
        the same rows, the same scores, in the same order.
        """
        hits = self._postings_search(store, expression, weights, limit)
        if hits is not None:
            return hits
        narrower = self._pruning(store, expression, weights, limit)
        if narrower is not None:
            hits = self._search_branches(store, narrower.branches, weights, limit)
            if hits is not None and len(hits) >= limit and hits[limit - 1][1] > narrower.bound:
                log.debug("BM25 search narrowed: %d hits, the last above %.3f", len(hits), narrower.bound)
                return hits
            log.debug("BM25 search not narrowed: the last hit not above %.3f", narrower.bound)
        return self._search(store, expression, weights, limit)

    def _postings_search(
        self, store: IndexStore, expression: str, weights: Sequence[float], limit: int
    ) -> list[tuple[int, float]] | None:
        """``fts_search`` from the lexical postings (``postings.py``: the same hits and scores,
        without bm25()'s cost a matched row) for a search of the lexical lane's form on an index
        of BRAIN_LEXICAL_POSTINGS chunks or more; None where FTS5 must answer."""
        terms = _expression_terms(expression)
        if not terms or expression != " OR ".join(map(fts_pruning.quote, terms)) or not store._postings_on():
            return None
        from . import postings

        return postings.search(store, terms, weights, limit)

    def _search_branches(
        self, store: IndexStore, branches: Sequence[str], weights: Sequence[float], limit: int
    ) -> list[tuple[int, float]] | None:
        """The best ``limit`` of the ``branches`` together: each branch's best ``limit``, one
        statement each, on the store's connection and the readers' at once, a chunk found by several
        kept once by its best score (``fts_pruning``); None when a reader failed."""

        def branch(conn: sqlite3.Connection, expression: str) -> list[tuple[int, float]]:
            return [(r[0], r[1]) for r in conn.execute(_BM25_BEST, (*weights, expression, limit))]

        found = self._at_once(store, [partial(branch, expression=b) for b in branches])
        if found is None:
            return None
        rows = sorted((row for rows in found for row in rows), key=lambda row: (row[1], row[0]))
        # A chunk of several words is in several branches, scored whole only in its own. (Each
        # statement reads the state committed as it starts: a chunk a writer re-titled in
        # between, same rowid with new words, may be in two. Kept once, by its better score.)
        seen: set[int] = set()
        hits = []
        for rowid, rank in rows:
            if rowid not in seen:
                seen.add(rowid)
                hits.append((rowid, -float(rank)))  # bm25() is lower-better
        return hits[:limit]

    def _pruning(self, store: IndexStore, expression: str, weights: Sequence[float], limit: int) -> Pruning | None:
        """The narrower search for a search of the lexical lane's form that may match
        BRAIN_LEXICAL_SPLIT_MATCHES chunks or more (below, the whole search is quick), on an
        SQLite whose FTS5 scores it alike; else None."""
        terms = _expression_terms(expression)
        if not 2 <= len(terms) <= fts_pruning.MAX_TERMS or expression != " OR ".join(map(fts_pruning.quote, terms)):
            return None
        counts = store.term_chunk_counts(terms)
        if sum(counts.values()) < self._split_threshold() or not fts_pruning.branches_score_alike():
            return None
        return fts_pruning.pruning(terms, counts, store.fts_row_count(), limit, weights)

    def _search(
        self, store: IndexStore, expression: str, weights: Sequence[float], limit: int
    ) -> list[tuple[int, float]]:
        """``fts_search`` of exactly this expression: in parts where that pays, else one statement."""
        bounds = self._split_bounds(store, expression, limit)
        if bounds is not None:
            hits = self._split_search(store, expression, weights, limit, bounds)
            if hits is not None:
                return hits
        rows = store.conn.execute(_BM25_BEST, (*weights, expression, limit))
        return [(r[0], -float(r[1])) for r in rows]  # bm25() is lower-better

    def _split_bounds(self, store: IndexStore, expression: str, limit: int) -> list[int] | None:
        """The chunk ids that split this search into parts of equal numbers of chunks, or None
        to search in one statement: no readers (BRAIN_LEXICAL_THREADS=1, an in-memory index),
        a transaction the readers cannot see into, or a search that cannot match
        BRAIN_LEXICAL_SPLIT_MATCHES chunks (every search of a small index): bounded by the sum
        of its terms' chunk counts (which the lexical lane has just read) and by the chunks."""
        if limit <= 0 or not self._readers_usable(store):
            return None
        threshold = self._split_threshold()
        chunks = store.fts_row_count()
        if chunks < threshold:
            return None
        counts = store.term_chunk_counts(_expression_terms(expression))
        if min(chunks, sum(counts.values())) < threshold:
            return None
        return self._fts_bounds(store, self._readers.size + 1) or None

    def _split_threshold(self) -> int:
        """BRAIN_LEXICAL_SPLIT_MATCHES: the possible matches from which a search is narrowed or split."""
        if self._split_at is None:
            self._split_at = config.lexical_split_matches()
        return self._split_at

    def _readers_usable(self, store: IndexStore) -> bool:
        """Whether the readers may search now: they are open or can be, and see what the
        store's connection sees (not inside a transaction of its own, unless pinned to a snapshot)."""
        readers = self._readers
        return readers.usable and not (store.conn.in_transaction and not readers.pinned)

    def _at_once(self, store: IndexStore, work: Sequence[Callable[[sqlite3.Connection], _T]]) -> list[_T] | None:
        """Each of ``work`` run with a connection: shared out between the store's and the readers',
        which run at once, or all on the store's when the readers may not search; the results in
        order. None when a reader failed (said in the log; searches run on the store's connection from
        then on)."""
        if len(work) <= 1 or not self._readers_usable(store):
            return [job(store.conn) for job in work]
        lanes = min(len(work), self._readers.size + 1)
        shares = [list(work[i::lanes]) for i in range(lanes)]

        def run(share: list[Callable[[sqlite3.Connection], _T]], conn: sqlite3.Connection) -> list[_T]:
            return [job(conn) for job in share]

        try:
            mine, theirs = self._readers.run(partial(run, shares[0], store.conn), [partial(run, s) for s in shares[1:]])
        except ReaderFailed as exc:  # a reader's trouble, not the search's: one connection from now on
            self._readers.close()
            log.warning("BM25 searches run in one statement from now on (%s)", exc)
            return None
        results: dict[int, _T] = {}
        for lane, done in enumerate([mine, *theirs]):
            for step, result in enumerate(done):
                results[lane + step * lanes] = result  # shares[lane][step] is work[lane + step × lanes]
        return [results[i] for i in range(len(work))]

    def _fts_bounds(self, store: IndexStore, parts: int) -> list[int]:
        """``parts - 1`` ascending chunk ids at equal steps through the lexical table (fewer when
        it is short); kept until the database changes. Each step walks only its own rows of the
        table's small per-row sizes, not the chunks."""
        cache = store._unchanged_cache()
        key = f"fts_bounds:{parts}"
        found = cache.get(key)
        if isinstance(found, list):
            return found
        step = store.fts_row_count() // parts
        bounds: list[int] = []
        if step > 0:
            last = _LOWEST_ROWID
            for _ in range(parts - 1):
                row = store.conn.execute(
                    "SELECT id FROM chunks_fts_docsize WHERE id > ? ORDER BY id LIMIT 1 OFFSET ?", (last, step - 1)
                ).fetchone()
                if row is None:
                    break
                last = int(row[0])
                bounds.append(last)
        cache[key] = bounds
        return bounds

    def _split_search(
        self, store: IndexStore, expression: str, weights: Sequence[float], limit: int, bounds: list[int]
    ) -> list[tuple[int, float]] | None:
        """The search in rowid ranges cut at ``bounds``: the first on the store's connection, the rest on
        the readers, at once; each range's best ``limit``, merged. None when a reader failed
        (said in the log; the caller searches in one statement).

        The same rows as one statement: bm25() takes its statistics (rows, average lengths, each
        term's chunk count) from the whole table whatever the range, so a chunk scores the same
        in its range as in the whole, and the best ``limit`` of the ranges' best ``limit`` are the
        best ``limit`` of all; equal scores go by rowid in both. Each reader reads the committed
        state when its part starts (a snapshot's readers: the snapshot's): a chunk a writer
        deleted meanwhile is dropped by the reads after (``chunk_note_ids``, ``chunk_rows``),
        and ids are never reused (AUTOINCREMENT).
        """
        sql = (
            "SELECT rowid, bm25(chunks_fts, ?, ?, ?) AS rank FROM chunks_fts"
            " WHERE chunks_fts MATCH ? AND rowid > ? AND rowid <= ? ORDER BY rank, rowid LIMIT ?"
        )

        def part(conn: sqlite3.Connection, low: int, high: int) -> list[tuple[int, float]]:
            return [(r[0], r[1]) for r in conn.execute(sql, (*weights, expression, low, high, limit))]

        found = self._at_once(
            store,
            [partial(part, low=low, high=high) for low, high in pairwise([_LOWEST_ROWID, *bounds, _HIGHEST_ROWID])],
        )
        if found is None:
            return None
        rows = [row for rows in found for row in rows]
        rows.sort(key=lambda row: (row[1], row[0]))
        return [(rowid, -float(rank)) for rowid, rank in rows[:limit]]  # bm25() is lower-better


def _expression_terms(expression: str) -> list[str]:
    """The quoted terms of an FTS5 MATCH expression (``"a" OR "b"``, as the lexical lane writes it)."""
    return [m.replace('""', '"') for m in _QUOTED.findall(expression)]


def query_only(conn: sqlite3.Connection) -> sqlite3.Connection:
    """A connection opened for reading only (``query_only``: it could not write by mistake): each
    reader, as it is opened (``FtsSearch._open_reader``)."""
    try:
        conn.execute("PRAGMA query_only = 1")
    except BaseException:
        conn.close()
        raise
    return conn


def data_version(conn: sqlite3.Connection) -> int:
    """SQLite's ``data_version``: it moves when another connection commits (``FtsSearch.pin``)."""
    return int(conn.execute("PRAGMA data_version").fetchone()[0])
