"""What a view of the past holds (`brain serve` keeps a few, each for minutes): its past chunks'
vectors once, not once in numpy and again in FAISS, found as they were found before."""

from __future__ import annotations

import tracemalloc

import numpy as np
from conftest import write
from index_helpers import index_then_moment, open_store

from brain.index.vectors import VectorIndex, load_current
from brain.recall.past import PAST, LayeredVectors, PastIndex, slice_vectors

DIM = 1024  # wide vectors: what a view holds of them stands well above the bookkeeping around it


def _vault(root, notes: int, edited: int) -> float:
    """``notes`` notes of three chunks each, indexed; then the first ``edited`` rewritten and
    indexed again: the moment between."""
    for i in range(notes):
        sections = "".join(
            f"## Part {j}\n\n" + f"Kiln {i} log part {j}: glaze batch fired, crawled. " * 5 + "\n\n" for j in range(3)
        )
        write(root, f"Note {i:03d}.md", f"# Note {i}\n\n{sections}")
    moment = index_then_moment(root)
    for i in range(edited):
        write(root, f"Note {i:03d}.md", f"# Note {i}\n\nRewritten: only the slag was kept.\n")
    index_then_moment(root)
    return moment


def test_a_view_holds_its_past_vectors_once(tmp_path, monkeypatch):
    monkeypatch.setenv("BRAIN_EMBED_MODEL", f"fake:{DIM}")
    root = tmp_path / "vault"
    moment = _vault(root, notes=40, edited=15)
    store = open_store(root)
    try:
        past = PastIndex(store, as_of=moment)
        present = load_current(store, DIM)
        chunks = len(past.past_chunk_ids())
        assert chunks >= 45
        tracemalloc.start()
        try:
            before = tracemalloc.get_traced_memory()[0]
            vectors = slice_vectors(past, DIM, present)
            held = tracemalloc.get_traced_memory()[0] - before
        finally:
            tracemalloc.stop()
        assert isinstance(vectors, LayeredVectors) and vectors.past.size == chunks
        # FAISS holds them (out of tracemalloc's sight); a numpy copy beside it was chunks × DIM × 4 more
        assert held < chunks * DIM * 4 / 4
        past.close()
    finally:
        store.close()


def test_past_vectors_are_found_as_a_vector_index_found_them():
    """Same ids, same scores, ties in the same order, for every k (the answers of a view of the
    past, in `brain serve` and in-process, rank its past chunks by these)."""
    from brain.recall.past import FlatVectors

    rng = np.random.default_rng(3)
    vectors = rng.standard_normal((300, 32)).astype(np.float32)
    vectors[100:120] = vectors[5]  # ties
    vectors /= np.linalg.norm(vectors, axis=1, keepdims=True)
    ids = PAST + rng.permutation(10_000)[:300].astype(np.int64)
    before = VectorIndex.empty(32, version=-1)  # what a view held its past chunks in
    before.add(ids, vectors)
    flat = FlatVectors(32, ids, vectors)
    assert flat.size == before.size == 300
    for query in (vectors[5], vectors[7], rng.standard_normal(32).astype(np.float32)):
        for k in (1, 10, 25, 300, 500):
            got, want = flat.search(query, k), before.search(query, k)
            assert np.array_equal(got[0], want[0]) and np.array_equal(got[1], want[1])
    empty = FlatVectors(32, np.zeros(0, np.int64), np.zeros((0, 32), np.float32))
    assert empty.size == 0 and len(empty.search(vectors[0], 5)[0]) == 0
