"""The approximate dense index: BRAIN_DENSE_INDEX picks exact (flat) or IVF, ``auto`` switches
at a size (with a margin so a vault near it is not rebuilt back and forth), a change of kind
rebuilds the vector file at the next `brain index` without re-embedding, and an IVF base takes
deltas and compaction like a flat one."""

from __future__ import annotations

import json
import logging
from pathlib import Path

import pytest
from conftest import FakeEmbedder, write
from index_helpers import assert_faiss_matches

from brain import config
from brain.index import vectors
from brain.index.indexer import index_vault
from brain.index.store import IndexStore
from brain.index.vectors import DELTA_FILE, FAISS_FILE, SIDECAR_FILE, VectorIndex, load_current, wanted_kind

QUERIES = ["sqlite wal checkpoint", "sourdough starter", "agent memory graph"]


def _index(vault: Path):
    return index_vault(vault, embedder=FakeEmbedder(), progress=False)


def _kind(directory: Path) -> str:
    return json.loads((directory / SIDECAR_FILE).read_text())["kind"]


def _top(directory: Path, k: int = 8) -> dict[str, list[int]]:
    store = IndexStore.open(directory, create=False)
    try:
        index = load_current(store, 64)
        return {q: index.search(FakeEmbedder().embed_query(q), k)[0].tolist() for q in QUERIES}
    finally:
        store.close()


def test_the_setting_switches_the_kind_at_the_next_run_without_re_embedding(toy_vault, monkeypatch):
    directory = config.index_dir(toy_vault)
    _index(toy_vault)
    assert _kind(directory) == "flat"
    exact = _top(directory)
    monkeypatch.setenv("BRAIN_DENSE_INDEX", "ivf")
    report = _index(toy_vault)  # nothing changed in the vault
    assert report.embedded == 0
    assert _kind(directory) == "ivf"
    loaded, _ = VectorIndex.load_file(directory)
    assert loaded is not None and loaded.kind == "ivf"
    assert_faiss_matches(directory)
    assert _top(directory) == exact  # a small vault: every list is visited, the same answers
    monkeypatch.setenv("BRAIN_DENSE_INDEX", "exact")
    _index(toy_vault)
    assert _kind(directory) == "flat" and _top(directory) == exact


@pytest.mark.parametrize(("setting", "kind"), [("ivf", "ivf"), ("exact", "flat")])
def test_a_changed_setting_is_searched_as_it_says_before_the_next_run(toy_vault, monkeypatch, caplog, setting, kind):
    """`brain ask` after BRAIN_DENSE_INDEX changed, no `brain index` between: it searches the
    kind the setting asks for (saying so once), not the saved file's other kind."""
    directory = config.index_dir(toy_vault)
    monkeypatch.setenv("BRAIN_DENSE_INDEX", "exact" if kind == "ivf" else "ivf")
    _index(toy_vault)
    exact = _top(directory)
    monkeypatch.setenv("BRAIN_DENSE_INDEX", setting)
    store = IndexStore.open(directory, create=False)
    try:
        with caplog.at_level(logging.WARNING, logger="brain"):
            assert load_current(store, 64).kind == kind
        assert "BRAIN_DENSE_INDEX asks for" in caplog.text
        assert _kind(directory) == kind  # saved: the next open reads it as it is
        caplog.clear()
        with caplog.at_level(logging.WARNING, logger="brain"):
            assert load_current(store, 64).kind == kind
        assert caplog.text == ""
    finally:
        store.close()
    assert_faiss_matches(directory)
    assert _top(directory) == exact


def test_an_ivf_base_takes_deltas_and_compaction(toy_vault, monkeypatch):
    monkeypatch.setenv("BRAIN_DENSE_INDEX", "ivf")
    directory = config.index_dir(toy_vault)
    _index(toy_vault)
    base = (directory / FAISS_FILE).stat().st_mtime_ns
    write(toy_vault, "New.md", "# New\n\nabout sqlite checkpoints\n")
    (toy_vault / "Home.md").unlink()
    _index(toy_vault)
    assert (directory / DELTA_FILE).exists() and (directory / FAISS_FILE).stat().st_mtime_ns == base
    assert_faiss_matches(directory)
    monkeypatch.setattr(vectors, "COMPACT_SHARE", 0.0)
    write(toy_vault, "Newer.md", "# Newer\n\nmore\n")
    _index(toy_vault)
    assert not (directory / DELTA_FILE).exists() and _kind(directory) == "ivf"
    assert_faiss_matches(directory)
    store = IndexStore.open(directory, create=False)
    try:
        fresh = VectorIndex.rebuild(store, 64, "flat")
        saved = load_current(store, 64)
        for query in QUERIES:
            vector = FakeEmbedder().embed_query(query)
            assert saved.search(vector, 5)[0].tolist() == fresh.search(vector, 5)[0].tolist()
    finally:
        store.close()


def test_auto_switches_above_the_threshold_and_back_only_well_below(monkeypatch):
    monkeypatch.delenv("BRAIN_DENSE_INDEX", raising=False)
    monkeypatch.setattr(vectors, "EXACT_UP_TO", 1000)
    assert wanted_kind(1000) == "flat" and wanted_kind(1001) == "ivf"
    assert wanted_kind(900, "ivf") == "ivf"  # within the margin: stays
    assert wanted_kind(900, "flat") == "flat"
    assert wanted_kind(799, "ivf") == "flat"
    monkeypatch.setenv("BRAIN_DENSE_INDEX", "exact")
    assert wanted_kind(10**9, "ivf") == "flat"
    monkeypatch.setenv("BRAIN_DENSE_INDEX", "ivf")
    assert wanted_kind(1, "flat") == "ivf"


def test_auto_builds_ivf_for_a_vault_over_the_threshold(toy_vault, monkeypatch):
    monkeypatch.delenv("BRAIN_DENSE_INDEX", raising=False)
    monkeypatch.setattr(vectors, "EXACT_UP_TO", 5)
    _index(toy_vault)
    assert _kind(config.index_dir(toy_vault)) == "ivf"


@pytest.mark.parametrize("kind", ["flat", "ivf"])
def test_an_ivf_search_leaves_out_removed_ids(tmp_path, kind):
    import numpy as np

    rng = np.random.default_rng(0)
    vectors_ = rng.standard_normal((400, 8)).astype(np.float32)
    vectors_ /= np.linalg.norm(vectors_, axis=1, keepdims=True)
    ids = np.arange(400, dtype=np.int64) + 1
    index = VectorIndex.empty(8, 1, "x")
    index.index = vectors._ivf(ids, vectors_, 8) if kind == "ivf" else index.index
    if kind == "flat":
        index.index.add_with_ids(vectors_, ids)
    index._set_delta(vectors.Delta.empty(8))
    index.save(tmp_path)
    loaded, problem = VectorIndex.load_file(tmp_path)
    assert loaded is not None, problem
    assert loaded.kind == kind
    top = loaded.search(vectors_[0], 3)[0].tolist()
    assert top[0] == 1
    loaded.remove([1])
    assert 1 not in loaded.search(vectors_[0], 3)[0].tolist()
    assert loaded.size == 399


@pytest.mark.parametrize("kind", ["flat", "ivf"])
def test_the_ids_digest_is_that_of_the_ids_in_storage_order_and_a_wrong_one_is_caught(toy_vault, monkeypatch, kind):
    """The digest is hashed list by list where the ids lie (no copy): it must stay the digest of
    their concatenation, which sidecars written before hold, with a delta or without one."""
    import hashlib

    monkeypatch.setenv("BRAIN_DENSE_INDEX", "ivf" if kind == "ivf" else "exact")
    directory = config.index_dir(toy_vault)
    _index(toy_vault)
    store = IndexStore.open(directory, create=False)
    try:
        saved = load_current(store, 64)
    finally:
        store.close()
    ids = vectors._base_ids(saved.index)
    assert len(ids) == saved.index.ntotal > 0
    assert saved.ids_digest() == hashlib.blake2b(ids.tobytes(), digest_size=16).hexdigest()
    assert vectors._ids_digest(saved.index, ids) == saved.ids_digest()
    if kind == "ivf":  # many lists, some of them empty: hashed in the lists' order
        import numpy as np

        rng = np.random.default_rng(1)
        data = rng.standard_normal((4000, 16)).astype(np.float32)
        data /= np.linalg.norm(data, axis=1, keepdims=True)
        big = vectors._ivf(np.arange(4000, dtype=np.int64) * 5 + 1, data, 16)
        emptied = vectors._base_ids(big)[: big.invlists.list_size(0) + big.invlists.list_size(1)]
        big.remove_ids(emptied)  # the first two lists: empty
        sizes = [big.invlists.list_size(n) for n in range(big.nlist)]
        assert len(sizes) > 50 and sizes[:2] == [0, 0] and min(sizes[2:]) > 0
        concatenated = vectors._base_ids(big)
        assert sorted(concatenated.tolist()) == sorted(set(range(1, 20000, 5)) - set(emptied.tolist()))
        assert vectors._ids_digest(big) == hashlib.blake2b(concatenated.tobytes(), digest_size=16).hexdigest()
    sidecar = json.loads((directory / SIDECAR_FILE).read_text())
    assert sidecar["ids"] == saved.ids_digest()
    for with_delta in (False, True):
        if with_delta:
            write(toy_vault, "New.md", "# New\n\nabout sqlite checkpoints\n")
            _index(toy_vault)
            sidecar = json.loads((directory / SIDECAR_FILE).read_text())
            assert sidecar["delta"] is not None
        assert VectorIndex.load_file(directory)[0] is not None
        (directory / SIDECAR_FILE).write_text(json.dumps({**sidecar, "ids": "0" * 32}))
        loaded, problem = VectorIndex.load_file(directory)
        assert loaded is None and "not the file its sidecar describes" in (problem or "")
        (directory / SIDECAR_FILE).write_text(json.dumps(sidecar))
