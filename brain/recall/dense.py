"""Dense lane: nearest chunks in FAISS, folded to notes (each note by its best chunk).

A note is scored by its best chunk, so a document of a hundred chunks gets a hundred draws
at a query and its best is high by luck alone: the 13th Age SRD's 30-100 KB class notes
came up for questions about monsters, items and single rules. Past ``LONG_NOTE_CHUNKS``
chunks a note's score is lowered by ``discount × ln(chunks / LONG_NOTE_CHUNKS)`` (0.02: a
note of 40 chunks loses 0.018 of cosine, one of 150 loses 0.045); notes up to that size, what
people write, are scored as they were.

``max_of_n`` (λ, off by default) corrects for the draws by the query's own spread instead: the
best of N draws from a spread σ beats one draw by about σ × e(N), e(N) the expected maximum of N
standard normals, so a note of N chunks loses λ × σ_q × e(N), σ_q the standard deviation of the
cosines of the chunks this search reached: much where the query's neighbourhood is spread, little
where its cosines are flat.
"""

from __future__ import annotations

import math
from collections.abc import Collection, Sequence
from typing import TYPE_CHECKING

from .ties import top_notes
from .types import DEFAULT_DEPTH, LONG_NOTE_CHUNKS, Candidate

if TYPE_CHECKING:
    import numpy as np

    from ..index.store import IndexStore
    from ..index.vectors import VectorIndex
    from .past import FlatVectors, LayeredVectors


def dense_search(
    store: IndexStore,
    vectors: VectorIndex | LayeredVectors | FlatVectors,
    query_vector: np.ndarray,
    depth: int = DEFAULT_DEPTH,
    decay: float = 0.0,
    *,
    nearest: list[tuple[int, float]] | None = None,
    long_note_discount: float = 0.0,
    long_note_chunks: int = LONG_NOTE_CHUNKS,
    max_of_n: float = 0.0,
    max_of_n_reached: bool = False,
    gone: Collection[int] = frozenset(),
    left_out: set[int] | None = None,
) -> list[Candidate]:
    """The top ``depth`` distinct notes by their best chunk's similarity, best first.

    With ``decay`` > 0 a note scores its best chunk plus decay × its second, decay² × its
    third, ... (of the chunks this search reached): a note that answers across several
    passages rises. With ``long_note_discount`` > 0 a note of more than ``long_note_chunks``
    chunks scores that much less per unit of ln(chunks / long_note_chunks) (``long_note_cost``).
    With ``max_of_n`` (λ) > 0 a note of N chunks scores λ × σ × e(N) less, σ the standard
    deviation of the cosines of the chunks the search reached (``max_of_n_cost``); with
    ``max_of_n_reached`` only the share of its other chunks the search did not reach: a note
    near the query all through is no lucky draw.
    Its shown chunk and ``dense_score`` stay the best one's. ``nearest``, when given, receives
    the (chunk id, similarity) of the chunks the search reached, nearest first (the
    anchor_dense lane reads the first of them rather than searching again).
    The chunks of the notes in ``gone`` (``Recaller.gone``: their file is gone) count for no
    note: the search goes deeper until it has ``depth`` others; ``left_out``, when given,
    receives those of them met before the last note it needed.
    """
    if vectors.size == 0 or depth <= 0:
        return []
    k = min(vectors.size, depth * 4)
    while True:
        ids, scores = vectors.search(query_vector, k)
        if nearest is not None:
            nearest[:] = zip(ids.tolist(), scores.tolist())
        best: dict[int, tuple[int, float]] = {}  # note id -> (chunk id, score)
        more: dict[int, list[float]] = {}  # note id -> its other chunks' scores, best first
        reached: dict[int, int] = {}  # note id -> how many of its chunks the search reached
        met: set[int] = set()  # the gone notes met before the depth-th note
        note_of = store.chunk_note_ids([int(i) for i in ids])
        for chunk_id, score in zip(ids.tolist(), scores.tolist()):
            note_id = note_of.get(chunk_id)
            if note_id is None:
                continue
            if note_id in gone:
                if len(best) < depth:
                    met.add(note_id)
                continue
            reached[note_id] = reached.get(note_id, 0) + 1
            if note_id not in best:
                best[note_id] = (chunk_id, score)
            elif decay > 0:
                more.setdefault(note_id, []).append(score)
        # Notes with many chunks can crowd the list: search deeper until enough notes.
        if len(best) >= depth or k >= vectors.size:
            break
        k = min(vectors.size, k * 4)
    if left_out is not None:
        left_out.update(met)
    total = {n: score + decayed(more.get(n, []), decay) for n, (_, score) in best.items()}
    if long_note_discount > 0 or max_of_n > 0:
        sizes = store.note_chunk_counts(list(best))
        spread = float(scores.std()) if max_of_n > 0 and len(scores) > 1 else 0.0  # σ of the reached cosines
        for n in total:
            total[n] -= long_note_cost(sizes.get(n, 1), long_note_discount, long_note_chunks)
            share = unreached_share(sizes.get(n, 1), reached.get(n, 1)) if max_of_n_reached else 1.0
            total[n] -= share * max_of_n_cost(sizes.get(n, 1), spread, max_of_n)
    top = top_notes(store, best, lambda n: -total[n], depth)
    out = candidates_for(store, [(n, *best[n]) for n in top], "dense")
    if decay > 0 or long_note_discount > 0 or max_of_n > 0:
        for c in out:
            c.score = total[c.note_id]
    return out


def long_note_cost(chunks: int, discount: float, free: int = LONG_NOTE_CHUNKS) -> float:
    """What a note of ``chunks`` chunks loses from its dense score: nothing up to ``free`` chunks."""
    if discount <= 0 or chunks <= max(free, 1):
        return 0.0
    return discount * math.log(chunks / max(free, 1))


def expected_max(n: int) -> float:
    """E[max of n standard normals] (Blom's approximation, Φ⁻¹((n − 0.375) / (n + 0.25)): 0 for one,
    0.59 for two, 1.55 for ten, 2.50 for a hundred; exact to 0.03)."""
    if n <= 1:
        return 0.0
    import statistics

    return statistics.NormalDist().inv_cdf((n - 0.375) / (n + 0.25))


def max_of_n_cost(chunks: int, spread: float, weight: float) -> float:
    """What a note of ``chunks`` chunks loses from its dense score under ``max_of_n`` = ``weight``,
    for a query whose reached chunks' cosines spread by ``spread``."""
    return weight * spread * expected_max(chunks) if weight > 0 else 0.0


def unreached_share(chunks: int, reached: int) -> float:
    """The share of a note's chunks other than its best that the search did not reach (1 for one chunk)."""
    if chunks <= 1:
        return 1.0
    return min(1.0, max(0.0, (chunks - reached) / (chunks - 1)))


def decayed(scores: list[float], decay: float) -> float:
    """decay × s2 + decay² × s3 + ... for a note's further chunks (best first); 0 when decay is 0."""
    if decay <= 0:
        return 0.0
    return sum(max(s, 0.0) * decay**i for i, s in enumerate(scores, 1))


def candidates_for(store: IndexStore, picks: Sequence[tuple[int, int, float]], source: str) -> list[Candidate]:
    """Candidates for (note id, chunk id, score) triples, in the given order; ``source`` names the lane."""
    rows = store.chunk_rows([chunk_id for _, chunk_id, _ in picks])
    out = []
    for note_id, chunk_id, score in picks:
        row = rows.get(chunk_id)
        if row is None:  # deleted since the lane saw it
            continue
        out.append(
            Candidate(
                note_id=note_id,
                path=row.path,
                title=row.title,
                chunk_id=chunk_id,
                heading=row.heading,
                text=row.text,
                dense_score=float(score),
                score=float(score),
                date=row.date,
                sources=[source],
            )
        )
    return out


class ChunkVectors:
    """The stored chunk vectors of some notes, read once and scored against one vector or more
    (the bridge lane scores the same notes by the query and by what is left of it)."""

    def __init__(self, store: IndexStore, note_ids: Sequence[int]):
        from ..index.vector_blobs import decode_array

        rows = store.note_chunk_codes(note_ids)
        # decoded as stored, all at once: a float32 copy made of each row, then joined, was 6%
        # of a warm ask's CPU on the mini-benchmark (a thousand rows a query on the SRD)
        self.chunk_ids = [r[0] for r in rows]
        self.note_ids = [r[1] for r in rows]
        self.matrix = decode_array([r[2] for r in rows])

    def _best_rows(self, vector: np.ndarray) -> dict[int, tuple[int, float]]:
        """note id → (its best row, that row's score); the first of equal rows; the notes in the
        order of their first rows."""
        import numpy as np

        if not self.chunk_ids:
            return {}
        scores = self.matrix @ vector.astype(np.float32)
        if not np.isfinite(scores).all():  # a NaN is never better, nor worse: row by row, as written
            return _best_rows_one_by_one(self.note_ids, scores.tolist())
        # In numpy: a loop over the rows was 6% of a warm ask's CPU on the SRD (a thousand rows a
        # lane). By note, then best first, then by row (lexsort's last key is its first).
        notes = np.asarray(self.note_ids, dtype=np.int64)
        ranked = np.lexsort((np.arange(len(notes)), -scores, notes))
        first = np.ones(len(ranked), dtype=bool)
        first[1:] = notes[ranked[1:]] != notes[ranked[:-1]]
        best = ranked[first]  # each note's best row, by note id
        best = best[np.argsort(np.unique(notes, return_index=True)[1], kind="stable")]  # by first row
        return dict(zip(notes[best].tolist(), zip(best.tolist(), scores[best].tolist())))

    def best(self, vector: np.ndarray) -> dict[int, tuple[int, float]]:
        """Each note's best chunk for ``vector``: note id → (chunk id, score)."""
        return {note_id: (self.chunk_ids[row], score) for note_id, (row, score) in self._best_rows(vector).items()}

    def closest(self, vector: np.ndarray) -> dict[int, tuple[int, np.ndarray]]:
        """Each note's chunk closest to ``vector``: note id → (that chunk's id, its vector)."""
        return {
            note_id: (self.chunk_ids[row], self.matrix[row]) for note_id, (row, _) in self._best_rows(vector).items()
        }


def _best_rows_one_by_one(note_ids: Sequence[int], scores: Sequence[float]) -> dict[int, tuple[int, float]]:
    """``ChunkVectors._best_rows`` in plain Python."""
    best: dict[int, tuple[int, float]] = {}
    for row, (note_id, score) in enumerate(zip(note_ids, scores)):
        if note_id not in best or score > best[note_id][1]:
            best[note_id] = (row, score)
    return best


def best_chunks(store: IndexStore, note_ids: Sequence[int], query_vector: np.ndarray) -> dict[int, tuple[int, float]]:
    """Each note's best chunk for the query, from the stored vectors: note id → (chunk id, score)."""
    return ChunkVectors(store, note_ids).best(query_vector)


def scored_candidates(
    store: IndexStore, note_ids: Sequence[int], query_vector: np.ndarray, source: str
) -> list[Candidate]:
    """These notes as candidates, each by its best chunk for the query, in the given order."""
    best = best_chunks(store, note_ids, query_vector)
    return candidates_for(store, [(n, *best[n]) for n in note_ids if n in best], source)
