"""Incremental vector files: a run that changes a few notes writes a small delta beside the
FAISS base instead of rewriting it; the delta is folded into a new base once it is large.
The guarantees of a whole save hold for deltas too: a reader never pairs files of two states,
whether saves race it or are killed (SIGKILL) mid-way."""

from __future__ import annotations

import json
import os
import signal
import subprocess
import sys
import time
from pathlib import Path

import numpy as np
import pytest
from conftest import FakeEmbedder, write
from index_helpers import assert_faiss_matches, write_float32_base

from brain import config
from brain.index import vectors
from brain.index.indexer import index_vault
from brain.index.store import IndexStore
from brain.index.vectors import DELTA_FILE, FAISS_FILE, SIDECAR_FILE, Delta, VectorIndex, load_current

QUERIES = ["sqlite wal checkpoint", "sourdough starter", "agent memory graph"]


def _index(vault: Path):
    return index_vault(vault, embedder=FakeEmbedder(), progress=False)


def _stat(path: Path) -> tuple[int, int]:
    st = path.stat()
    return st.st_ino, st.st_mtime_ns


def _search_all(directory: Path) -> dict[str, list[int]]:
    """Each query's top chunks from the saved files, and from a rebuild out of the database."""
    store = IndexStore.open(directory, create=False)
    try:
        saved = load_current(store, 64)
        fresh = VectorIndex.rebuild(store, 64)
        out = {}
        for query in QUERIES:
            vector = FakeEmbedder().embed_query(query)
            got, want = saved.search(vector, 8)[0].tolist(), fresh.search(vector, 8)[0].tolist()
            assert got == want, query
            out[query] = got
        return out
    finally:
        store.close()


@pytest.fixture
def indexed(toy_vault):
    _index(toy_vault)
    return toy_vault, config.index_dir(toy_vault)


def test_a_small_change_writes_a_delta_and_leaves_the_base_alone(indexed):
    vault, directory = indexed
    base = _stat(directory / FAISS_FILE)
    assert not (directory / DELTA_FILE).exists()
    write(vault, "New note.md", "# New note\n\nabout sqlite and [[Home]]\n")
    (vault / "Home.md").write_text("# Home\n\nRewritten entirely: sourdough now.\n", encoding="utf-8")
    _index(vault)
    assert _stat(directory / FAISS_FILE) == base  # not rewritten
    sidecar = json.loads((directory / SIDECAR_FILE).read_text())
    assert sidecar["delta"]["added"] >= 2 and sidecar["delta"]["removed"] >= 1
    assert_faiss_matches(directory)
    _search_all(directory)
    # Deleting notes, including the one only the delta holds.
    (vault / "New note.md").unlink()
    (vault / "Home.md").unlink()
    _index(vault)
    assert _stat(directory / FAISS_FILE) == base
    assert_faiss_matches(directory)
    _search_all(directory)


def test_a_large_delta_is_folded_into_a_new_base(indexed, monkeypatch):
    vault, directory = indexed
    base = _stat(directory / FAISS_FILE)
    write(vault, "One.md", "# One\n\nfirst\n")
    _index(vault)
    assert (directory / DELTA_FILE).exists()
    monkeypatch.setattr(vectors, "COMPACT_SHARE", 0.0)  # any delta is now too large
    write(vault, "Two.md", "# Two\n\nsecond\n")
    _index(vault)
    assert _stat(directory / FAISS_FILE) != base
    assert not (directory / DELTA_FILE).exists()
    assert json.loads((directory / SIDECAR_FILE).read_text())["delta"] is None
    assert_faiss_matches(directory)
    _search_all(directory)


def test_the_delta_path_does_not_load_faiss(indexed):
    """A run that writes a delta needs numpy only: faiss is for readers and compaction."""
    vault, directory = indexed
    write(vault, "Small.md", "# Small\n\na small change\n")
    code = (
        "import sys, fakes; from brain.index.indexer import index_vault; "
        "index_vault(sys.argv[1], embedder=fakes.FakeEmbedder(), progress=False); "
        "print('faiss' in sys.modules)"
    )
    tests = Path(__file__).resolve().parent
    done = subprocess.run(
        [sys.executable, "-c", code, str(vault)], cwd=tests, capture_output=True, text=True, timeout=120, check=False
    )
    assert done.returncode == 0, done.stderr
    assert done.stdout.strip() == "False"
    assert json.loads((directory / SIDECAR_FILE).read_text())["delta"] is not None
    assert_faiss_matches(directory)


def test_a_sidecar_of_the_previous_format_is_read_as_a_base_without_delta(indexed, caplog):
    vault, directory = indexed
    write_float32_base(directory)  # format 2 was written with float32 codes
    sidecar = json.loads((directory / SIDECAR_FILE).read_text())
    old = {k: sidecar[k] for k in ("index_id", "version", "dim", "count", "bytes", "ids")}
    (directory / SIDECAR_FILE).write_text(json.dumps({**old, "format": 2}))
    loaded, problem = VectorIndex.load_file(directory)
    assert problem is None and loaded is not None and loaded.size == sidecar["count"]
    assert loaded.codes == "float32"
    write(vault, "After.md", "# After\n\nupgraded\n")
    _index(vault)  # converted to float16 codes (tests/test_vector_codes.py), then deltas as usual
    assert json.loads((directory / SIDECAR_FILE).read_text())["codes"] == "fp16"
    assert not [r for r in caplog.records if "rebuilding" in r.getMessage()]  # no warning: not damage
    assert_faiss_matches(directory)
    base = _stat(directory / FAISS_FILE)
    write(vault, "Later.md", "# Later\n\nafter the conversion\n")
    _index(vault)
    assert _stat(directory / FAISS_FILE) == base  # a delta, not a rebuild
    assert_faiss_matches(directory)


@pytest.mark.parametrize("damage", ["truncate", "flip", "missing"])
def test_a_damaged_delta_is_rebuilt_from_the_database(indexed, damage, caplog):
    vault, directory = indexed
    write(vault, "Extra.md", "# Extra\n\nsomething more\n")
    _index(vault)
    expected = _search_all(directory)
    path = directory / DELTA_FILE
    data = path.read_bytes()
    if damage == "truncate":
        path.write_bytes(data[:-4])
    elif damage == "flip":
        path.write_bytes(data[:-1] + bytes([data[-1] ^ 1]))
    else:
        path.unlink()
    assert _search_all(directory) == expected
    assert any("vectors.delta" in r.getMessage() and "rebuilding" in r.getMessage() for r in caplog.records)
    assert_faiss_matches(directory)


def test_delta_arithmetic():
    base_dim = 2
    first = Delta.empty(base_dim).then([1, 2], [10, 11], np.ones((2, base_dim)))
    assert first.removed.tolist() == [1, 2] and first.ids.tolist() == [10, 11]
    second = first.then([10, 3], [12], np.zeros((1, base_dim)))  # 10 was the delta's own: just dropped
    assert second.removed.tolist() == [1, 2, 3] and second.ids.tolist() == [11, 12]
    decoded = Delta.decode(second.encode(), base_dim)
    assert decoded is not None and decoded.removed.tolist() == [1, 2, 3] and decoded.ids.tolist() == [11, 12]
    assert np.array_equal(decoded.vectors, second.vectors)
    assert Delta.decode(second.encode(), 3) is None  # another dimension
    assert Delta.decode(second.encode()[:-1], base_dim) is None
    assert Delta.decode(b"not a delta", base_dim) is None


# ----- racing readers, killed writers ---------------------------------------------------------

# A writer process: version v holds target(v); every tenth version is a whole save (a new
# base), the others a delta over the last base. Ids are never reused for other vectors.
_WRITER = """
import sys
import numpy as np
from pathlib import Path
from brain.index.vectors import Delta, VectorIndex, write_delta
DIM = 8
def vec(ids):
    rows = np.stack([np.random.default_rng(int(i)).standard_normal(DIM) for i in ids]).astype(np.float32)
    return rows / np.linalg.norm(rows, axis=1, keepdims=True)
def target(v):
    return np.array([i for i in range(300) if (i + v) % 10] + [1000 * v + j for j in range(1 + v % 3)])
directory, first, count = Path(sys.argv[1]), int(sys.argv[2]), int(sys.argv[3])
base_ids = base = None
for v in range(first, first + count):
    ids = target(v)
    if base is None or v % 10 == 0:
        index = VectorIndex.empty(DIM, v, "the-index")
        index.index.add_with_ids(vec(ids), ids)
        index.save(directory)
        base_ids, base = ids, index.base_file
    else:
        removed, added = np.setdiff1d(base_ids, ids), np.setdiff1d(ids, base_ids)
        write_delta(directory, base, Delta(removed, added, vec(added)), v, "the-index", len(ids))
    print(v, flush=True)
"""


def _target(v: int) -> set[int]:
    return {i for i in range(300) if (i + v) % 10} | {1000 * v + j for j in range(1 + v % 3)}


def _vec(i: int) -> np.ndarray:
    row = np.random.default_rng(i).standard_normal(8).astype(np.float32)
    return row / np.linalg.norm(row)


def _check(directory: Path) -> int | None:
    """Load what is saved: either nothing usable, or exactly one version's content."""
    saved = (directory / SIDECAR_FILE).exists()  # before loading: the first save may land meanwhile
    loaded, problem = VectorIndex.load_file(directory)
    if loaded is None:  # never saved yet, or a pairing it refused (and says why)
        assert problem is not None or not saved
        return None
    ids = {int(i) for i in loaded.ids()}
    assert ids == _target(loaded.version), "files of two states paired"
    newest = 1000 * loaded.version
    assert loaded.search(_vec(newest), 1)[0].tolist() == [newest]
    return loaded.version


def _writer(directory: Path, first: int, count: int) -> subprocess.Popen:
    return subprocess.Popen(
        [sys.executable, "-c", _WRITER, str(directory), str(first), str(count)],
        stdout=subprocess.PIPE,
        stderr=subprocess.PIPE,
        text=True,
    )


@pytest.mark.slow  # subprocesses
def test_readers_racing_delta_saves_never_see_two_states(tmp_path):
    directory = tmp_path / "idx"
    directory.mkdir()
    writer = _writer(directory, 1, 299)  # the last one a delta
    seen: set[int] = set()
    try:
        while writer.poll() is None:
            version = _check(directory)
            if version is not None:
                seen.add(version)
    finally:
        if writer.poll() is None:
            writer.kill()
        writer.wait()
    _, err = writer.communicate()
    assert writer.returncode == 0, err
    assert len(seen) > 3 and any(v % 10 for v in seen)  # deltas were read, not only whole saves
    assert _check(directory) == 299
    assert sorted(p.name for p in directory.iterdir()) == [DELTA_FILE, FAISS_FILE, SIDECAR_FILE]


@pytest.mark.slow  # subprocesses
@pytest.mark.skipif(os.name == "nt", reason="POSIX signals")
def test_a_writer_killed_mid_save_leaves_one_state_or_none(tmp_path):
    directory = tmp_path / "idx"
    directory.mkdir()
    rng = np.random.default_rng(0)
    first = 1
    for _ in range(6):
        writer = _writer(directory, first, 10_000)
        assert writer.stdout is not None
        writer.stdout.readline()  # it has saved once
        time.sleep(float(rng.uniform(0.0, 0.3)))
        writer.send_signal(signal.SIGKILL)
        writer.wait()
        first += 10_000
        for _ in range(3):  # and again, in case it was killed between two renames
            _check(directory)
    # The next save clears what the killed ones left, and is read back whole.
    done = subprocess.run(
        [sys.executable, "-c", _WRITER, str(directory), str(first), "2"], capture_output=True, text=True, check=False
    )
    assert done.returncode == 0, done.stderr
    assert _check(directory) == first + 1
    assert not list(directory.glob("*.tmp"))
