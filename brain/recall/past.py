"""The index as it was: a read-only slice of history that every recall lane reads unchanged.

``PastIndex`` answers the store's read methods that recall uses (notes, chunks, vectors, BM25,
links, frontmatter) for one moment of the index's own time (``as_of``: the vault as brain
knew it then) and/or for one day of world time (``valid_at``: only notes whose frontmatter
says they held then). The ``Recaller`` runs over it as over the present, so the dense,
lexical, graph and PageRank lanes and freshness are all sliced without a line of their own.

Where things come from:

- notes: the version of each note current at ``as_of`` (``note_versions``);
- chunks: a version whose content is still the note's current one reads ``chunks`` (ids as
  they are); any other reads ``chunk_history`` (ids offset by ``PAST``, so the two never
  collide);
- dense: the present's FAISS index where most of the slice is the present, its hits outside
  the slice dropped, else the slice's present vectors read from SQLite into a flat index; the
  slice's past chunks added on top either way (``slice_vectors``): no FAISS file is kept for
  the past; a slice is loaded once per ``Recaller``;
- lexical: the present FTS table and the past one, each filtered to the slice; past chunks
  are scored with FTS5's formula and the present table's statistics (``bm25.py``), so the
  two merge by score;
- links: the edges of ``link_history`` recorded at ``as_of``.

With ``valid_at`` alone the present is sliced by world time and FAISS still serves the dense
lane (it searches deeper until enough notes of the slice are found).
"""

from __future__ import annotations

import json
import logging
from collections import Counter
from collections.abc import Callable, Iterable, Iterator, Mapping, Sequence
from contextlib import contextmanager
from dataclasses import dataclass
from typing import TYPE_CHECKING, Any

from ..index.schema import FTS_TOKENIZERS, TITLED_CHUNKS, as_indexed
from ..index.store import ChunkRow, IndexStore
from ..index.vectors import VectorIndex, best_first, load_current, one_thread
from ..links import alias_key, note_keys
from . import bm25

if TYPE_CHECKING:
    import numpy as np

log = logging.getLogger("brain")

PAST = 1 << 40  # past chunk ids are offset by this in a slice (chunks' own ids never get near it)
_READ = 5000
_PAST_HITS = 2  # past chunks rescored per result wanted (picked by the past table's own BM25 first)
_PAST_WORDS = 4  # past terms counted in the slice per term a prefix stands for (the past table's of every moment)
# From this share of the present's notes reading the present's chunks in a slice, the dense lane
# searches the present's FAISS index (the rest of its hits dropped) rather than a copy of the slice.
SHARED_FROM = 0.5


_EMPTY: dict[tuple[type, object], Any] = {(str, "[]"): "[]", (str, "{}"): "{}"}  # one for every view


@dataclass(frozen=True, slots=True)
class SliceVersion:
    """What a view of the past keeps of a note's version (``IndexStore.slice_rows_at``): what
    recall reads of it. A ``VersionRow`` each was 830 bytes at 20,000 notes (its content hash,
    event, sizes, and a dict for its fields), this some 500 (``brain serve`` keeps a few views)."""

    note_id: int
    path: str
    title: str
    aliases: str  # JSON list
    date: str | None
    frontmatter: str  # JSON
    world_date: str | None
    valid_from: str | None
    valid_to: str | None
    recorded_from: float
    recorded_to: float | None

    @classmethod
    def of(cls, row: tuple, held: Mapping[str, str], seen: dict[tuple[type, object], Any]) -> SliceVersion:
        """``row`` as kept: a path or title equal to one in ``held`` is that object (the present's),
        and every other field one object for all equal values (``seen``: dates, the JSON of
        aliases and frontmatter, times recorded repeat from note to note)."""
        one = seen.setdefault  # by type too: an int and a float of one value are two
        return cls(
            row[0],
            held.get(row[1], row[1]),
            held.get(row[2], row[2]),
            *(one((type(value), value), value) for value in row[3:11]),
        )


class PastIndex(IndexStore):
    """A slice of one index's history; shares (and closes) the store's connection. ``borrowed``:
    the store stays open when the slice closes (``brain serve``'s views of the past, over the
    snapshot the server answers the present from: recall/opening.py ``open_past_view``)."""

    def __init__(
        self,
        store: IndexStore,
        *,
        as_of: float | None = None,
        valid_at: str | None = None,
        borrowed: bool = False,
        held: Mapping[str, str] | None = None,
        beside: Sequence[PastIndex] = (),
    ):
        """``held``: strings the present keeps (``Recaller.held_strings``), each by itself: the
        slice's equal paths and titles are those objects, not copies of their own. ``beside``:
        other slices of the same store kept open (``brain serve``'s views of the past): a version
        one of them holds too (a note unchanged between their moments) is the same object."""
        self._share(store)
        self.base = store
        self.borrowed = borrowed
        self.as_of = as_of
        self.valid_at = valid_at
        seen = dict(_EMPTY)
        self.versions: dict[int, SliceVersion] = {}
        # Notes whose content then is their content now read the present chunks.
        self._current: set[int] = set()
        wanted: set[tuple[int, str]] = set()
        others = [other.versions for other in beside if other.base is store]
        for row in store.slice_rows_at(as_of):  # by note id: ``versions`` keeps that order (not sorted again each read)
            version = SliceVersion.of(row, held or {}, seen)
            for other in others:
                if (same := other.get(row[0])) == version:
                    version = same
                    break
            self.versions[row[0]] = version
            if row[11]:
                self._current.add(row[0])
            else:
                wanted.add((row[0], row[12]))
        del seen
        self._past_chunks: dict[int, int] = {}  # past chunk id → note id
        # Each past content's first TITLED_CHUNKS chunks: BM25 reads the note's title there alone,
        # as in the present (m022_title_in_first_chunks); chunk_history's rows hold it in every chunk.
        self._past_titled: set[int] = set()
        self._past_counts: Counter[int] | None = None  # note id → its past chunks, once asked
        if wanted:
            place: Counter[tuple[int, str]] = Counter()
            for chunk_id, note_id, digest in store.history_chunks_of(sorted({n for n, _ in wanted})):
                if (note_id, digest) in wanted:
                    self._past_chunks[chunk_id] = note_id
                    if place[note_id, digest] < TITLED_CHUNKS:  # a content's chunks come in order
                        self._past_titled.add(chunk_id)
                    place[note_id, digest] += 1
        if as_of is None:
            edges = _Edges([(s, t, k, 1) for s, t, k in store.resolved_edges()])
        else:
            edges = _Edges(store.edges_at(as_of))
        self._edges = edges
        if valid_at is not None:
            self._keep_valid_at(valid_at)
        self._edges = edges.between(self.note_ids())
        self._pruned_at_open = store.get_meta("history_pruned_before")

    def past_warnings(self) -> list[str]:
        """A `brain prune` (or BRAIN_KEEP_VERSIONS) that dropped some of this slice after it was
        read: the rows it reads as it answers may be gone, so each answer says so."""
        from ..moments import local_time

        pruned = self.base.get_meta("history_pruned_before")
        if self.as_of is None or pruned == self._pruned_at_open or float(pruned or 0) <= self.as_of:
            return []
        return [
            f"history before {local_time(float(pruned or 0))} was pruned after this view of the past was opened "
            "(`brain prune`, BRAIN_KEEP_VERSIONS): some of what it held may be missing; open it again"
        ]

    def close(self) -> None:
        if not self.borrowed:
            super().close()

    @contextmanager
    def one_query(self) -> Iterator[None]:
        """The store's: this slice reads its present chunks through it."""
        with self.base.one_query():
            yield

    # ----- the slice ----------------------------------------------------------------------------

    def _keep_valid_at(self, day: str) -> None:
        """Leave out the notes that say they did not hold on ``day``: begun after it (valid_from,
        else their frontmatter date), ended on or before it (valid_to), or superseded by then
        (their successor had begun). A note that says nothing about world time stays."""
        from .supersession import successors

        starts = {n: _start(v) for n, v in self.versions.items()}
        gone = set()
        for note_id, version in self.versions.items():
            start, end = starts[note_id], version.valid_to
            if (start and start[:10] > day) or (end and end[:10] <= day):
                gone.add(note_id)
        for old, new in successors(self).items():
            begun = starts.get(new)
            if begun and begun[:10] <= day:
                gone.add(old)
        for note_id in gone:
            del self.versions[note_id]
        self._current -= gone
        self._past_chunks = {c: n for c, n in self._past_chunks.items() if n not in gone}

    def paths_are(self, notes: Sequence[tuple[int, str]]) -> bool:
        """Whether the slice's notes are these (id, path), by id: the same notes at the same paths."""
        versions = self.versions
        return len(notes) == len(versions) and all(
            n == v.note_id and path == v.path for (n, path), v in zip(notes, versions.values(), strict=True)
        )

    def slice_note_ids(self) -> list[int]:
        return sorted(self.versions)

    def current_note_ids(self) -> list[int]:
        """Notes of the slice that read the present chunks."""
        return sorted(self._current)

    def past_chunk_ids(self) -> list[int]:
        """Past chunks of the slice (ids as in ``chunk_history``, not offset)."""
        return sorted(self._past_chunks)

    # ----- what recall reads --------------------------------------------------------------------

    def note_paths(self) -> set[str]:
        return {v.path for v in self.versions.values()}

    def note_ids(self) -> list[int]:
        return sorted(self.versions)

    def note_titles(self) -> list[tuple[str, str]]:
        return [(v.path, v.title) for _, v in self.versions.items()]

    def alias_pairs(self) -> list[tuple[str, str]]:
        return [(path, alias) for path, aliases in self.aliases_by_path().items() for alias in aliases]

    def aliases_by_path(self) -> dict[str, list[str]]:
        out: dict[str, list[str]] = {}
        for _, version in self.versions.items():
            aliases = _json_list(version.aliases)
            if aliases:
                out[version.path] = aliases
        return out

    def note_names(self) -> list[tuple[int, str, str]]:
        return [(n, v.path, v.title) for n, v in self.versions.items()]

    def note_paths_by_id(self) -> list[tuple[int, str]]:
        return [(n, v.path) for n, v in self.versions.items()]

    def name_row(self, note_id: int) -> tuple[str, str, tuple[str, ...]] | None:
        """(path, title, aliases) of a note of the slice, what its names are built from
        (``recall/past_carry.py`` compares them with the present's); None: not in the slice."""
        v = self.versions.get(note_id)
        return (v.path, v.title, tuple(_json_list(v.aliases))) if v is not None else None

    def aliases_then(self, note_id: int) -> tuple[str, ...]:
        """A note's aliases in the slice (none for a note not in it)."""
        v = self.versions.get(note_id)
        return tuple(_json_list(v.aliases)) if v is not None else ()

    def alias_rows(self) -> list[tuple[int, str]]:
        return [(n, alias) for n, v in self.versions.items() for alias in _json_list(v.aliases)]

    def notes_brief(self, note_ids: Sequence[int]) -> dict[int, tuple[str, str]]:
        return {n: (self.versions[n].path, self.versions[n].title) for n in note_ids if n in self.versions}

    def frontmatter_rows(self, containing: Sequence[str] = ()) -> list[tuple[int, str, str, str]]:
        versions: Iterable[SliceVersion] = self.versions.values()
        if containing:
            versions = _containing(versions, [word.lower() for word in containing])
        return [(v.note_id, v.path, v.date or "", v.frontmatter or "{}") for v in versions]

    def note_dates(self, note_ids: Iterable[int]) -> dict[int, str]:
        return {n: self.versions[n].date or "" for n in note_ids if n in self.versions}

    def notes_named(
        self, path_keys: Iterable[str], name_keys: Iterable[str], alias_keys: Iterable[str]
    ) -> dict[str, int]:
        paths, names, aliases = set(path_keys), set(name_keys), set(alias_keys)
        out: dict[str, int] = {}
        for n, version in self.versions.items():
            path_key, name_key = note_keys(version.path)
            if (
                path_key in paths
                or name_key in names
                or any(alias_key(alias) in aliases for alias in _json_list(version.aliases))
            ):
                out[version.path] = n
        return out

    def aliases_of(self, note_ids: Iterable[int]) -> dict[str, list[str]]:
        out: dict[str, list[str]] = {}
        for n in sorted(set(note_ids)):
            version = self.versions.get(n)
            aliases = _json_list(version.aliases) if version is not None else []
            if version is not None and aliases:
                out[version.path] = aliases
        return out

    def version_spans(self, note_ids: Sequence[int]) -> dict[int, tuple[float, float | None]]:
        return {
            n: (self.versions[n].recorded_from, self.versions[n].recorded_to) for n in note_ids if n in self.versions
        }

    # Term statistics (the lexical lane drops terms in over a quarter of the chunks): the
    # present table's counts, plus the slice's own past chunks counted exactly. As of now
    # that is the present's figures; further back, notes created since still count.

    def whereabouts_now(self, notes: Sequence[tuple[int, str]]) -> dict[int, tuple[str | None, str | None, bool]]:
        """The present, on purpose: where each note the slice names by its path then is today."""
        return self.base.whereabouts_now(notes)

    def fts_tokenizer(self) -> str:
        """The lexical table's tokenizer: one for the present and the past (a change needs a rebuild)."""
        return self.base.fts_tokenizer()

    def vocabulary_with_prefix(self, prefix: str, limit: int) -> list[str]:
        """Terms that begin with ``prefix`` (only CJK queries ask, with trigram), the most widespread
        in the slice first: the present's, and those the slice's past chunks hold. The present's
        alone stood in for them: a word of a note deleted or changed since was none, and "長城"
        asked as of when a note on it existed found nothing by its words."""
        present = self.base.vocabulary_with_prefix(prefix, limit)
        if not self._past_chunks:
            return present
        past = [t for t in self.base.history_vocabulary_with_prefix(prefix, _PAST_WORDS * limit) if t not in present]
        if not past:
            return present
        terms = present + past
        # the present table's count and the slice's past chunks holding it (a ranking: not the
        # title-exact ``_past_holding``, which reads and splits every later chunk holding a term)
        counts = self.base.term_chunk_counts(terms)
        for term in terms:
            counts[term] += sum(c in self._past_chunks for c in self.base.history_term_chunk_ids(term))
        ranked = sorted(terms, key=lambda term: -counts[term])  # stable: the present's order among equals
        return [term for term in ranked if counts[term]][:limit]

    def chunk_count(self) -> int:
        return self.base.chunk_count() + len(self._past_chunks)

    def fts_row_count(self) -> int:
        return self.base.fts_row_count() + len(self._past_chunks)

    def term_chunk_counts(self, terms: Sequence[str]) -> dict[str, int]:
        present = self.base.term_chunk_counts(terms)
        if not self._past_chunks:
            return present
        return {term: present.get(term, 0) + self._past_holding(term) for term in terms}

    def _past_holding(self, term: str) -> int:
        """How many of the slice's past chunks hold ``term`` as the present's index would hold
        them (``_as_indexed``): one not first in its content, less the title it holds anyway."""
        held = [c for c in self.base.history_term_chunk_ids(term) if c in self._past_chunks]
        later = [c for c in held if c not in self._past_titled]
        if not later:
            return len(held)
        fields = self.base.history_chunk_fields(later)
        tokenize = FTS_TOKENIZERS[self.fts_tokenizer()]
        kept = 0
        for chunk_id in later:
            columns = self._as_indexed(chunk_id, fields[chunk_id]) if chunk_id in fields else ("", "", "")
            if any(term in bm25.index_tokens(c, tokenize) for c in columns):
                kept += 1
        return len(held) - len(later) + kept

    def chunk_note_ids(self, chunk_ids: Sequence[int]) -> dict[int, int]:
        present = [c for c in chunk_ids if c < PAST]
        out = {c: n for c, n in self.base.chunk_note_ids(present).items() if n in self._current}
        for chunk_id in chunk_ids:
            if chunk_id >= PAST and chunk_id - PAST in self._past_chunks:
                out[chunk_id] = self._past_chunks[chunk_id - PAST]
        return out

    def note_chunk_counts(self, note_ids: Sequence[int]) -> dict[int, int]:
        out = self.base.note_chunk_counts([n for n in note_ids if n in self._current])
        if self._past_counts is None:
            self._past_counts = Counter(self._past_chunks.values())
        out.update((n, self._past_counts[n]) for n in note_ids if n not in self._current and n in self._past_counts)
        return out

    def chunk_rows(self, chunk_ids: Sequence[int]) -> dict[int, ChunkRow]:
        out: dict[int, ChunkRow] = {}
        for chunk_id, row in self.base.chunk_rows([c for c in chunk_ids if c < PAST]).items():
            if row.note_id in self._current:
                out[chunk_id] = self._row(chunk_id, row.note_id, row.heading, row.text)
        past = [c - PAST for c in chunk_ids if c >= PAST and c - PAST in self._past_chunks]
        for chunk_id, (note_id, heading, text) in self.base.history_chunk_rows(past).items():
            out[PAST + chunk_id] = self._row(PAST + chunk_id, note_id, heading, text)
        return out

    def _row(self, chunk_id: int, note_id: int, heading: str, text: str) -> ChunkRow:
        version = self.versions[note_id]
        return ChunkRow(chunk_id, note_id, version.path, version.title, heading, text, version.date)

    def note_chunk_codes(self, note_ids: Sequence[int]) -> list[tuple[int, int, bytes]]:
        present = [n for n in note_ids if n in self._current]
        out = list(self.base.note_chunk_codes(present))
        wanted = set(note_ids)
        past = [c for c, n in self._past_chunks.items() if n in wanted]
        out += [(PAST + c, n, vector) for c, n, vector in self.base.history_chunk_codes(past)]
        return out

    def fts_search(self, expression: str, weights: Sequence[float], limit: int) -> list[tuple[int, float]]:
        """BM25 over the slice: the present table's hits on notes that read the present, and the
        past table's hits on past chunks of the slice, scored as the present table would score
        them (``bm25.py``), merged by score."""
        hits = self._present_hits(expression, weights, limit)
        past: list[int] = []
        for chunk_id, _ in self.base.fts_hits(expression, weights, past=True):
            if chunk_id in self._past_chunks:
                past.append(chunk_id)
                if len(past) >= _PAST_HITS * limit:
                    break
        if past:
            tokenize = FTS_TOKENIZERS[self.fts_tokenizer()]
            query = bm25.phrases(expression, tokenize)
            stats = self._present_stats(query, tokenize)
            fields = self.base.history_chunk_fields(past)
            hits += [
                (PAST + c, bm25.score(self._as_indexed(c, fields[c]), query, weights, stats))
                for c in past
                if c in fields
            ]
        hits.sort(key=lambda hit: -hit[1])
        return hits[:limit]

    def _as_indexed(self, chunk_id: int, fields: tuple[str, str, str]) -> tuple[str, str, str]:
        """A past chunk's (title, heading, text) as the present's index would hold them: the
        title in its content's first ``TITLED_CHUNKS`` only, nor after them in a heading repeating it."""
        return (*as_indexed(fields[0], fields[1], chunk_id in self._past_titled), fields[2])

    def _present_stats(self, query: list[tuple[str, ...]], tokenize: str) -> bm25.TableStats:
        """The present table's statistics (its tokenizer ``tokenize``: a past chunk's length and
        counts are that tokenizer's); a term only the past holds counts its past chunks."""
        rows, total = self.base.fts_totals()
        terms = sorted({token for phrase in query for token in phrase})
        present = self.base.term_chunk_counts(terms)
        frequency: dict[tuple[str, ...], int] = {}
        for phrase in query:
            counts = []
            for token in phrase:
                count = present.get(token, 0)
                if not count:
                    count = self._past_holding(token)
                counts.append(count)
            frequency[phrase] = min(counts)
        return bm25.TableStats(rows, total / rows if rows else 0.0, frequency, tokenize)

    def _present_hits(self, expression: str, weights: Sequence[float], limit: int) -> list[tuple[int, float]]:
        """The present table's best hits on chunks the slice reads from the present: asked with a
        limit (FTS5 ranks the top cheaply), deeper while the filter leaves too few."""
        depth = limit
        while True:
            hits = self.base.fts_search(expression, weights, depth)
            notes = self.base.chunk_note_ids([c for c, _ in hits])
            kept = [(c, s) for c, s in hits if notes.get(c) in self._current]
            if len(kept) >= limit or len(hits) < depth:
                return kept[:limit]
            depth *= 4

    def resolved_edges(self) -> list[tuple[int, int, str]]:
        return self._edges.rows()

    def resolved_edges_from(self, note_ids: Iterable[int]) -> list[tuple[int, int, int]]:
        wanted = set(note_ids)
        return [(s, t, int(kind == "embed")) for s, t, kind in self.resolved_edges() if s in wanted]

    def edge_array(self) -> np.ndarray:
        """``resolved_edge_batches``' rows at once, as a (links, 3) array: what the link graph is
        built from, without a tuple for each (``recall/past_carry.py``)."""
        return self._edges.array()

    def resolved_edge_batches(self, batch: int = 65_536) -> Iterator[list[tuple[int, int, int]]]:
        edges = [(source, target, int(kind == "embed")) for source, target, kind in self.resolved_edges()]
        for start in range(0, len(edges), batch):
            yield edges[start : start + batch]

    def neighbour_edges(self, note_ids: Sequence[int]) -> list[tuple[int, int, str, str]]:
        edges = self._edges
        out = [(s, t, "links to", k) for s, t, k in edges.rows(edges.src_in(note_ids))]
        back = [(t, s, "linked from", k) for s, t, k in edges.rows(edges.dst_in(note_ids))]
        return out + back

    def written_link_targets(self, note_ids: Sequence[int]) -> dict[tuple[int, str], int]:
        """The links as they were written then (``link_history`` at ``as_of``), between notes of the slice."""
        sources = [n for n in note_ids if n in self.versions]
        if self.as_of is None:
            found = self.base.written_link_targets(sources)
        else:
            found = self.base.written_link_targets_at(self.as_of, sources)
        return {key: target for key, target in found.items() if target in self.versions}

    def out_degrees(self, note_ids: Sequence[int]) -> dict[int, int]:
        edges = self._edges
        targets: dict[int, set[int]] = {}
        for source, target, _ in edges.rows(edges.src_in(note_ids), repeat=False):
            targets.setdefault(source, set()).add(target)
        return {source: len(found) for source, found in targets.items()}

    def linkers(self, note_id: int) -> list[int]:
        edges = self._edges
        return list(dict.fromkeys(s for s, _, _ in edges.rows(edges.dst_in([note_id]), repeat=False)))


class _Edges:
    """A slice's edges (source id, target id, kind, times written), in link order, as columns:
    500,000 of them as tuples were 60 MB, and every query's lookups (a note's neighbours, out
    degrees, linkers) walked them all in Python (85 ms each at 100,000 notes). Note ids in 32
    bits where they fit, a kind in 8, times written in 32: 13 bytes an edge, not 32 (a view of
    100,000 notes holds some 560,000)."""

    def __init__(self, rows: Sequence[tuple[int, int, str, int]]):
        import numpy as np

        count = len(rows)
        codes: dict[str, int] = {}
        self.src = _narrow(np.fromiter((r[0] for r in rows), dtype=np.int64, count=count))
        self.dst = _narrow(np.fromiter((r[1] for r in rows), dtype=np.int64, count=count))
        kind = np.fromiter((codes.setdefault(r[2], len(codes)) for r in rows), dtype=np.int64, count=count)
        self.kind = kind.astype(np.int8) if len(codes) <= 127 else kind
        self.times = np.fromiter((min(max(1, r[3]), 2**31 - 1) for r in rows), dtype=np.int32, count=count)
        self.kinds = list(codes)  # code → kind

    def between(self, note_ids: Sequence[int]) -> _Edges:
        """The edges whose two ends are among ``note_ids``."""
        import numpy as np

        ids = np.asarray(note_ids, dtype=np.int64)
        keep = np.isin(self.src, ids) & np.isin(self.dst, ids)
        if keep.all():
            return self
        out = _Edges.__new__(_Edges)
        out.src, out.dst, out.kind, out.times = self.src[keep], self.dst[keep], self.kind[keep], self.times[keep]
        out.kinds = self.kinds
        return out

    def src_in(self, note_ids: Iterable[int]) -> np.ndarray:
        """Positions of the edges from these notes, in link order."""
        import numpy as np

        return np.flatnonzero(np.isin(self.src, np.fromiter(note_ids, dtype=np.int64)))

    def dst_in(self, note_ids: Iterable[int]) -> np.ndarray:
        import numpy as np

        return np.flatnonzero(np.isin(self.dst, np.fromiter(note_ids, dtype=np.int64)))

    def rows(self, at: np.ndarray | None = None, *, repeat: bool = True) -> list[tuple[int, int, str]]:
        """(source, target, kind) of the edges at these positions (all), in link order, each as
        many times as it is written (once each, without ``repeat``)."""
        import numpy as np

        src, dst, kind, times = (
            (self.src, self.dst, self.kind, self.times)
            if at is None
            else (self.src[at], self.dst[at], self.kind[at], self.times[at])
        )
        if repeat and len(times) and times.max() > 1:
            src, dst, kind = np.repeat(src, times), np.repeat(dst, times), np.repeat(kind, times)
        kinds = self.kinds
        return [(s, t, kinds[k]) for s, t, k in zip(src.tolist(), dst.tolist(), kind.tolist(), strict=True)]

    def array(self) -> np.ndarray:
        """(source, target, 1 for an embed) rows, each as many times as it is written."""
        import numpy as np

        embed = self.kind == (self.kinds.index("embed") if "embed" in self.kinds else -1)
        columns = np.stack([self.src.astype(np.int64), self.dst.astype(np.int64), embed.astype(np.int64)], axis=1)
        return np.repeat(columns.reshape(-1, 3), self.times, axis=0)


def _narrow(ids: np.ndarray) -> np.ndarray:
    """Note ids in 32 bits where every one fits (SQLite's row ids may go beyond)."""
    import numpy as np

    if len(ids) and (ids.min() < -(2**31) or ids.max() >= 2**31):
        return ids
    return ids.astype(np.int32)


class FlatVectors:
    """Vectors searched exactly (FAISS inner product over float32), as ``VectorIndex`` searches
    what is added to it (``dim``, ``size``, ``search``), but held once: a ``VectorIndex`` keeps
    what is added to it twice, in numpy for its delta and again for FAISS to search (a view of
    the past's 18,832 past chunks at 20,000 notes: 29 MB each)."""

    def __init__(self, dim: int, ids: np.ndarray, vectors: np.ndarray):
        import faiss

        self.dim = dim
        self.index = faiss.IndexIDMap(faiss.IndexFlatIP(dim))
        if len(ids):
            self.index.add_with_ids(vectors, ids)

    @property
    def size(self) -> int:
        return int(self.index.ntotal)

    def search(self, query: np.ndarray, k: int) -> tuple[np.ndarray, np.ndarray]:
        """(ids, scores) of the k nearest, best first, ties in the order added (``VectorIndex.search``)."""
        import numpy as np

        k = min(k, self.size)
        if k <= 0:
            return np.zeros(0, dtype=np.int64), np.zeros(0, dtype=np.float32)
        query = np.ascontiguousarray(query.reshape(1, -1), dtype=np.float32)
        with one_thread():
            scores, ids = self.index.search(query, k)
        return best_first(ids, scores, k)


class LayeredVectors:
    """The present's vector index and a slice's past chunks beside it, searched as one (what
    ``VectorIndex`` answers the dense lane: ``dim``, ``size``, ``search``). The present's is used
    as it is, not copied: its delta put under the past chunks was a copy of every vector added
    since the last compaction, and another for FAISS to search (60 MB a view at 100,000 chunks)."""

    def __init__(self, present: VectorIndex, past: FlatVectors):
        self.present = present
        self.past = past
        self.dim = present.dim

    @property
    def size(self) -> int:
        return self.present.size + self.past.size

    def search(self, query: np.ndarray, k: int) -> tuple[np.ndarray, np.ndarray]:
        """(chunk ids, scores) of the k nearest of both, best first (as ``VectorIndex.search``)."""
        import numpy as np

        ids, scores = self.present.search(query, k)
        if self.past.size:
            more_ids, more_scores = self.past.search(query, k)
            ids, scores = np.concatenate([ids, more_ids]), np.concatenate([scores, more_scores])
            order = np.argsort(-scores, kind="stable")[: min(k, self.size)]
            ids, scores = ids[order], scores[order]
        return ids, scores


def slice_vectors(past: PastIndex, dim: int, present: VectorIndex | None = None) -> FlatVectors | LayeredVectors:
    """The dense lane's index over a slice, with every past chunk of it added on top.

    Where most of the slice reads the present's chunks (``--as-of`` a day or a month ago: few
    notes changed since), the present's own FAISS index is the base, searched beside an index of
    the slice's past chunks (``LayeredVectors``): a hit on a chunk outside the slice (a note
    changed or made since) is dropped by the slice's chunk lookups, and the dense lane searches
    deeper until it has enough notes. ``present``: the FAISS index of exactly the state
    ``past.base`` reads (a server's snapshot), taken as it is, else the saved one is loaded. Else
    the slice's present vectors are read from SQLite into a flat index. At 100,000 notes, reading
    the whole slice from SQLite took 25 s and 3.5 GB to open for a moment when nothing had
    changed (bench/history.py).
    """
    chunks = past.past_chunk_ids()
    current = past.current_note_ids()
    past_part = _Source(past.base.history_chunk_vectors, chunks, len(chunks), PAST)
    if current and len(current) >= SHARED_FROM * past.base.note_count():
        return LayeredVectors(present if present is not None else load_current(past.base, dim), _flat(dim, [past_part]))
    count = sum(past.base.note_chunk_counts(current).values())
    return _flat(dim, [_Source(past.base.note_chunk_vectors, current, count, 0), past_part])


@dataclass
class _Source:
    """Vectors to read: ``read(keys)`` gives (id, note id, float32 bytes) rows, at most ``count``
    in all; their ids are offset by ``offset``."""

    read: Callable[[Sequence[int]], list[tuple[int, int, bytes]]]
    keys: list[int]
    count: int
    offset: int


def _flat(dim: int, sources: list[_Source]) -> FlatVectors:
    """A ``FlatVectors`` of the sources' vectors, in their order, read a few thousand at a time
    into one array that FAISS copies at once (a ``VectorIndex`` kept its own copy, and each of
    its adds copied those added before)."""
    import numpy as np

    matrix = np.empty((sum(source.count for source in sources), dim), dtype=np.float32)
    ids = np.empty(len(matrix), dtype=np.int64)
    filled = 0
    for source in sources:
        for start in range(0, len(source.keys), _READ):
            rows = source.read(source.keys[start : start + _READ])
            end = filled + len(rows)
            if end > len(matrix):  # more than counted (the index changed between the two reads)
                matrix = np.concatenate([matrix, np.empty((end - len(matrix), dim), dtype=np.float32)])
                ids = np.concatenate([ids, np.empty(end - len(ids), dtype=np.int64)])
            matrix[filled:end] = np.frombuffer(b"".join(r[2] for r in rows), dtype=np.float32).reshape(len(rows), dim)
            ids[filled:end] = [source.offset + r[0] for r in rows]
            filled = end
    return FlatVectors(dim, ids[:filled], matrix[:filled])


def _start(version: SliceVersion) -> str | None:
    return version.valid_from or version.world_date


def _containing(versions: Iterable[SliceVersion], words: list[str]) -> list[SliceVersion]:
    """The versions whose frontmatter holds one of ``words`` (lower case), case aside: each
    frontmatter lowered once (100,000 of them, five words: 0.4 s lowered for each word)."""
    out = []
    for version in versions:
        text = version.frontmatter
        if text and text != "{}":
            lowered = text.lower()
            for word in words:
                if word in lowered:
                    out.append(version)
                    break
    return out


def _json_list(text: str) -> list[str]:
    if text == "[]":  # most notes have no aliases: not parsed 100,000 times
        return []
    try:
        value = json.loads(text)
    except ValueError:
        return []
    return [str(item) for item in value] if isinstance(value, list) else []
