"""Is a note's first chunk a signal? For each labelled query, the dense lane's first 30 notes,
relevant and not: how many are of one chunk, and of the notes of several how often the chunk
nearest the query is the first and how far the first chunk's cosine is below the best one's
(the lead-chunk prior of the README's stage table, stop 55).

    python bench/lead_chunk.py [--sets mini,13th-age,...]

Uses the indexes quality_ablation.py builds (same BRAIN_HOME, BRAIN_EMBED_MODEL).
"""

from __future__ import annotations

import argparse
import statistics
import sys

import numpy as np
from quality_ablation import DEFAULT_SETS, SETS


def note_chunks(store, note_id: int) -> np.ndarray:
    """The note's chunk vectors, unit length, in the note's order (its first chunk first)."""
    order = [r[0] for r in store.conn.execute("SELECT id FROM chunks WHERE note_id = ? ORDER BY ordinal", (note_id,))]
    vectors = {
        chunk_id: np.frombuffer(blob, dtype=np.float32) for chunk_id, _, blob in store.note_chunk_vectors([note_id])
    }
    matrix = np.stack([vectors[c] for c in order])
    return matrix / np.linalg.norm(matrix, axis=1, keepdims=True)


def survey(name: str) -> tuple[dict[str, list[float]], dict[str, int]]:
    from brain.evaluation.queries import load_queries
    from brain.recall.opening import open_recaller
    from brain.recall.types import RecallSettings

    queries_file, vault = SETS[name]
    queries = load_queries(queries_file, vault)
    recaller = open_recaller(vault, build=True, progress=False, rerank_model=None)
    gaps: dict[str, list[float]] = {"relevant": [], "other": []}
    single = {"relevant": 0, "other": 0}  # notes of one chunk: their best chunk is their first anyway
    try:
        for q in queries:
            vector = np.asarray(recaller.embedder.embed_query(q.query), dtype=np.float32)
            vector = vector / np.linalg.norm(vector)
            top = recaller.ask(q.query, "vector", RecallSettings(k=30)).results
            pool = {c.note_id for c in top}
            relevant = {recaller.store.note_id(p) for p in q.relevant} & pool
            others = pool - relevant
            for kind, notes in (("relevant", relevant), ("other", others)):
                for note_id in notes:
                    matrix = note_chunks(recaller.store, note_id)
                    if len(matrix) < 2:
                        single[kind] += 1
                        continue
                    cosines = matrix @ vector
                    gaps[kind].append(float(cosines.max() - cosines[0]))
    finally:
        recaller.close()
    return gaps, single


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--sets", default=DEFAULT_SETS)
    args = parser.parse_args()
    print(
        "| set | notes of one chunk | of several | best chunk is the first | first within 0.02 | first within 0.05 | median gap |"
    )
    print("|---|--:|--:|--:|--:|--:|--:|")
    for name in args.sets.split(","):
        gaps, single = survey(name)
        for kind in ("relevant", "other"):
            g = gaps[kind]
            if not g:
                print(f"| {name} {kind} | {single[kind]} | 0 | | | | |")
                continue
            share = [sum(x <= t for x in g) / len(g) for t in (0.0, 0.02, 0.05)]
            print(
                f"| {name} {kind} | {single[kind]} | {len(g)} | {share[0]:.2f} | {share[1]:.2f} | {share[2]:.2f}"
                f" | {statistics.median(g):.3f} |",
                flush=True,
            )
    return 0


if __name__ == "__main__":
    sys.exit(main())
