"""float16 codes in the FAISS vector file. The database stores each vector as float16, so a
base of float16 codes (``IndexScalarQuantizer``, ``IndexIVFScalarQuantizer``) holds exactly
what a float32 one did, in half the bytes: searches must find the same ids with the same
scores as exact float32 search over the stored vectors. A float32 file written before is
still read, and the next indexing run converts it once."""

from __future__ import annotations

import json
import logging
from pathlib import Path

import numpy as np
import pytest
from conftest import FakeEmbedder, write
from index_helpers import assert_faiss_matches, write_float32_base

from brain import config
from brain.index import vectors
from brain.index.indexer import index_vault
from brain.index.store import IndexStore
from brain.index.vectors import FAISS_FILE, SIDECAR_FILE, VectorIndex, load_current, snapshot_vectors

QUERIES = ["sqlite wal checkpoint", "sourdough starter", "agent memory graph"]


def _index(vault: Path):
    return index_vault(vault, embedder=FakeEmbedder(), progress=False)


def _sidecar(directory: Path) -> dict:
    return json.loads((directory / SIDECAR_FILE).read_text())


def _stored(n: int, dim: int, seed: int = 0) -> tuple[np.ndarray, np.ndarray]:
    """(ids, unit vectors as the database gives them back: float16 values as float32)."""
    rng = np.random.default_rng(seed)
    data = rng.standard_normal((n, dim)).astype(np.float32)
    data /= np.linalg.norm(data, axis=1, keepdims=True)
    return np.arange(n, dtype=np.int64) * 7 + 3, data.astype(np.float16).astype(np.float32)


def _exact(ids: np.ndarray, data: np.ndarray, query: np.ndarray, k: int) -> tuple[np.ndarray, np.ndarray]:
    """Exact float32 search: every inner product, best first."""
    scores = data @ query
    order = np.argsort(-scores, kind="stable")[:k]
    return ids[order], scores[order]


@pytest.mark.parametrize("kind", ["flat", "ivf"])
def test_the_cache_finds_what_exact_float32_search_finds(tmp_path, monkeypatch, kind):
    """Ids and scores of the saved (memory-mapped) base, against exact float32 search over the
    same stored vectors; IVF visiting every list must be exact too (its codes are the vectors'
    own, not residuals from a centroid, which float16 would round)."""
    monkeypatch.setattr(vectors, "IVF_NPROBE", 10_000)  # every list: IVF is then exact search
    dim, n, k = 48, 3000, 50
    ids, data = _stored(n, dim)
    index = VectorIndex.empty(dim, 1, "x")
    if kind == "ivf":
        index.index = vectors._ivf(ids, data, dim)
        index._set_delta(vectors.Delta.empty(dim))
    else:
        index.index.add_with_ids(data, ids)
    index.save(tmp_path)
    loaded, problem = VectorIndex.load_file(tmp_path)
    assert loaded is not None, problem
    assert (loaded.kind, loaded.codes, loaded.writable) == (kind, "fp16", False)
    assert _sidecar(tmp_path)["codes"] == "fp16"
    for query in np.random.default_rng(1).standard_normal((20, dim)).astype(np.float32):
        query /= np.linalg.norm(query)
        got_ids, got_scores = loaded.search(query, k)
        want_ids, want_scores = _exact(ids, data, query, k)
        assert got_ids.tolist() == want_ids.tolist()
        np.testing.assert_allclose(got_scores, want_scores, rtol=0, atol=2e-6)


def test_the_base_file_is_half_a_float32_one(tmp_path):
    dim = 384
    ids, data = _stored(2000, dim)
    index = VectorIndex.empty(dim, 1, "x")
    index.index.add_with_ids(data, ids)
    index.save(tmp_path)
    fp16 = (tmp_path / FAISS_FILE).stat().st_size
    assert fp16 < 0.53 * 2000 * (4 * dim + 8)  # float32 codes and the id map: 4 * dim + 8 bytes a vector


@pytest.mark.parametrize("kind", ["exact", "ivf"])
def test_a_float32_file_written_before_is_read_then_converted_once(toy_vault, monkeypatch, caplog, kind):
    monkeypatch.setenv("BRAIN_DENSE_INDEX", kind)
    caplog.set_level(logging.INFO, logger="brain")
    directory = config.index_dir(toy_vault)
    _index(toy_vault)
    new = _sidecar(directory)
    store = IndexStore.open(directory, create=False)
    try:
        fresh = VectorIndex.rebuild(store, 64)
        want = {q: fresh.search(FakeEmbedder().embed_query(q), 8) for q in QUERIES}
        write_float32_base(directory)
        old_bytes = (directory / FAISS_FILE).stat().st_size
        assert old_bytes > 1.5 * new["bytes"]
        # Readers take the float32 file as it is: no rebuild, and they never write it.
        for reader in (load_current(store, 64), snapshot_vectors(store, 64)):
            assert (reader.codes, reader.kind, reader.writable) == ("float32", new["kind"], False)
            for query, (ids, scores) in want.items():
                got_ids, got_scores = reader.search(FakeEmbedder().embed_query(query), 8)
                assert got_ids.tolist() == ids.tolist()
                np.testing.assert_allclose(got_scores, scores, rtol=0, atol=2e-6)
        assert "codes" not in _sidecar(directory) and (directory / FAISS_FILE).stat().st_size == old_bytes
    finally:
        store.close()
    # The next run, though nothing changed, converts it: rebuilt from the database, not re-embedded.
    assert _index(toy_vault).embedded == 0
    converted = _sidecar(directory)
    assert (converted["codes"], converted["kind"], converted["bytes"]) == ("fp16", new["kind"], new["bytes"])
    assert any("converting the vector index" in r.getMessage() for r in caplog.records)
    loaded, problem = VectorIndex.load_file(directory)
    assert loaded is not None and loaded.codes == "fp16", problem
    assert_faiss_matches(directory)
    # Once: the run after leaves the file alone, and a change goes to the delta as before.
    inode = (directory / FAISS_FILE).stat().st_ino
    _index(toy_vault)
    write(toy_vault, "After.md", "# After\n\nconverted\n")
    _index(toy_vault)
    assert (directory / FAISS_FILE).stat().st_ino == inode
    assert _sidecar(directory)["delta"] is not None
    assert_faiss_matches(directory)


def test_a_sidecar_naming_other_codes_than_the_file_is_not_trusted(toy_vault):
    directory = config.index_dir(toy_vault)
    _index(toy_vault)
    sidecar = _sidecar(directory)
    (directory / SIDECAR_FILE).write_text(json.dumps({**sidecar, "codes": "float32"}))
    loaded, problem = VectorIndex.load_file(directory)
    assert loaded is None and "not the file its sidecar describes" in (problem or "")
    (directory / SIDECAR_FILE).write_text(json.dumps({**sidecar, "codes": "int8"}))
    assert VectorIndex.read_sidecar(directory) is None
