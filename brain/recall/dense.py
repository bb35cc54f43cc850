"""Dense stage: nearest chunks in FAISS, folded to notes (each note by its best chunk)."""

from __future__ import annotations

from typing import TYPE_CHECKING

from ..store import IndexStore
from .types import Candidate

if TYPE_CHECKING:
    import numpy as np

    from ..vectors import VectorIndex

DEFAULT_DEPTH = 60  # distinct notes wanted from the dense stage


def dense_search(
    store: IndexStore, vectors: VectorIndex, query_vector: np.ndarray, depth: int = DEFAULT_DEPTH
) -> list[Candidate]:
    """The top ``depth`` distinct notes by their best chunk's similarity, best first."""
    if vectors.size == 0 or depth <= 0:
        return []
    k = min(vectors.size, depth * 4)
    while True:
        ids, scores = vectors.search(query_vector, k)
        best: dict[int, tuple[int, float]] = {}  # note id -> (chunk id, score)
        note_of = note_ids_of_chunks(store, [int(i) for i in ids])
        for chunk_id, score in zip(ids.tolist(), scores.tolist()):
            note_id = note_of.get(chunk_id)
            if note_id is not None and note_id not in best:
                best[note_id] = (chunk_id, score)
        # Notes with many chunks can crowd the list: search deeper until enough notes.
        if len(best) >= depth or k >= vectors.size:
            break
        k = min(vectors.size, k * 4)
    top = sorted(best.items(), key=lambda item: -item[1][1])[:depth]
    return candidates_for(store, [(note_id, chunk_id, score) for note_id, (chunk_id, score) in top], "dense")


def note_ids_of_chunks(store: IndexStore, chunk_ids: list[int]) -> dict[int, int]:
    out: dict[int, int] = {}
    for start in range(0, len(chunk_ids), 900):
        part = chunk_ids[start:start + 900]
        rows = store.conn.execute(
            f"SELECT id, note_id FROM chunks WHERE id IN ({','.join('?' * len(part))})", part
        )
        out.update((r[0], r[1]) for r in rows)
    return out


def candidates_for(store: IndexStore, picks: list[tuple[int, int, float]], source: str) -> list[Candidate]:
    """Candidates for (note id, chunk id, score) triples, in the given order."""
    if not picks:
        return []
    chunk_ids = [chunk_id for _, chunk_id, _ in picks]
    rows = store.conn.execute(
        "SELECT c.id, c.heading, c.text, n.id AS note_id, n.path, n.title, n.date FROM chunks c "
        f"JOIN notes n ON n.id = c.note_id WHERE c.id IN ({','.join('?' * len(chunk_ids))})",
        chunk_ids,
    )
    by_chunk = {r["id"]: r for r in rows}
    out = []
    for note_id, chunk_id, score in picks:
        row = by_chunk.get(chunk_id)
        if row is None:
            continue
        out.append(
            Candidate(
                note_id=note_id, path=row["path"], title=row["title"], chunk_id=chunk_id,
                heading=row["heading"], text=row["text"], dense_score=float(score), score=float(score),
                date=row["date"], sources=[source],
            )
        )
    return out


def best_chunks(store: IndexStore, note_ids: list[int], query_vector: np.ndarray) -> dict[int, tuple[int, float]]:
    """Each note's best chunk for the query, from the stored vectors: note id → (chunk id, score)."""
    import numpy as np

    best: dict[int, tuple[int, float]] = {}
    query = query_vector.astype(np.float32)
    for start in range(0, len(note_ids), 900):
        part = note_ids[start:start + 900]
        rows = store.conn.execute(
            f"SELECT id, note_id, vector FROM chunks WHERE note_id IN ({','.join('?' * len(part))})", part
        ).fetchall()
        if not rows:
            continue
        matrix = np.frombuffer(b"".join(r[2] for r in rows), dtype=np.float32).reshape(len(rows), -1)
        scores = matrix @ query
        for (chunk_id, note_id, _), score in zip(rows, scores.tolist()):
            if note_id not in best or score > best[note_id][1]:
                best[note_id] = (chunk_id, score)
    return best
