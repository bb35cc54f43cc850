"""The FAISS index over chunk vectors: inner product on normalised vectors, ids = chunk ids.

It is a cache of what the index database holds. The file is written atomically
(temporary file, then rename) and a sidecar records the ``vectors_version`` it matches;
a reader that finds a different version rebuilds it from the database, so the FAISS file
and the SQLite state can never disagree in what a search returns.
"""

from __future__ import annotations

import json
import logging
import os
from pathlib import Path
from typing import TYPE_CHECKING

if TYPE_CHECKING:
    import numpy as np

    from .store import IndexStore

log = logging.getLogger("brain")

FAISS_FILE = "vectors.faiss"
SIDECAR_FILE = "vectors.json"
_READ_BATCH = 50_000


class VectorIndex:
    def __init__(self, index, dim: int, version: int):  # index: faiss.IndexIDMap2
        self.index = index
        self.dim = dim
        self.version = version

    @classmethod
    def empty(cls, dim: int, version: int = 0) -> VectorIndex:
        import faiss

        return cls(faiss.IndexIDMap2(faiss.IndexFlatIP(dim)), dim, version)

    @property
    def size(self) -> int:
        return int(self.index.ntotal)

    def add(self, ids: np.ndarray, vectors: np.ndarray) -> None:
        import numpy as np

        if len(ids):
            self.index.add_with_ids(np.ascontiguousarray(vectors, dtype=np.float32), np.asarray(ids, dtype=np.int64))

    def remove(self, ids: list[int] | np.ndarray) -> None:
        import numpy as np

        if len(ids):
            self.index.remove_ids(np.asarray(ids, dtype=np.int64))

    def search(self, query: np.ndarray, k: int) -> tuple[np.ndarray, np.ndarray]:
        """(chunk ids, scores) of the k nearest chunks, best first; -1 ids dropped."""
        import numpy as np

        import faiss

        k = min(k, self.size)
        if k <= 0:
            return np.zeros(0, dtype=np.int64), np.zeros(0, dtype=np.float32)
        # One query: OpenMP threads only contend (bench/scale.py, 500k chunks: 168 ms p50 on
        # the default threads, 51 ms on one).
        threads = faiss.omp_get_max_threads()
        faiss.omp_set_num_threads(1)
        try:
            scores, ids = self.index.search(np.ascontiguousarray(query.reshape(1, -1), dtype=np.float32), k)
        finally:
            faiss.omp_set_num_threads(threads)
        keep = ids[0] >= 0
        return ids[0][keep], scores[0][keep]

    def save(self, directory: Path) -> None:
        import faiss

        tmp = directory / (FAISS_FILE + ".tmp")
        faiss.write_index(self.index, str(tmp))
        _fsync_replace(tmp, directory / FAISS_FILE)
        sidecar = directory / (SIDECAR_FILE + ".tmp")
        sidecar.write_text(json.dumps({"version": self.version, "dim": self.dim, "count": self.size}))
        _fsync_replace(sidecar, directory / SIDECAR_FILE)

    @staticmethod
    def saved_version(directory: Path) -> int | None:
        """The version the saved file matches, from the sidecar alone (no faiss import)."""
        try:
            return int(json.loads((directory / SIDECAR_FILE).read_text())["version"])
        except (OSError, ValueError, KeyError, TypeError):
            return None

    @classmethod
    def load_file(cls, directory: Path) -> VectorIndex | None:
        """The saved index, or None when missing or unreadable."""
        import faiss

        try:
            meta = json.loads((directory / SIDECAR_FILE).read_text())
            index = faiss.read_index(str(directory / FAISS_FILE))
        except (OSError, ValueError, RuntimeError):
            return None
        return cls(index, int(meta["dim"]), int(meta["version"]))

    @classmethod
    def rebuild(cls, store: IndexStore, dim: int) -> VectorIndex:
        """A fresh index from the vectors stored in the database (no model needed)."""
        import numpy as np

        index = cls.empty(dim, store.vectors_version())
        cursor = store.conn.execute("SELECT id, vector FROM chunks ORDER BY id")
        while True:
            rows = cursor.fetchmany(_READ_BATCH)
            if not rows:
                break
            ids = np.fromiter((r[0] for r in rows), dtype=np.int64, count=len(rows))
            vectors = np.frombuffer(b"".join(r[1] for r in rows), dtype=np.float32).reshape(len(rows), dim)
            index.add(ids, vectors)
        return index


def load_current(store: IndexStore, dim: int) -> VectorIndex:
    """The FAISS index matching the database now: the saved file, or a rebuild (then saved)."""
    version = store.vectors_version()
    loaded = VectorIndex.load_file(store.directory)
    if loaded is not None and loaded.version == version and loaded.dim == dim:
        return loaded
    if loaded is not None:
        log.warning("vector index is behind the database (version %s, expected %s); rebuilding it", loaded.version, version)
    index = VectorIndex.rebuild(store, dim)
    try:
        index.save(store.directory)
    except OSError as exc:  # a read-only home still answers, from memory
        log.warning("could not save the rebuilt vector index: %s", exc)
    return index


SNAPSHOT_SAMPLE = 32  # stored vectors compared with the saved file's before it is trusted


def snapshot_vectors(store: IndexStore, dim: int) -> VectorIndex:
    """The FAISS index of exactly the chunks ``store`` sees, for a reader pinned to one state.

    The saved file is used when it holds exactly those chunk ids and, on a sample, their
    vectors: an indexer may replace the file at any moment, and a rebuilt database numbers its
    chunks from 1 again, so neither the sidecar's version nor the ids alone prove it matches.
    Otherwise it is rebuilt in memory from the store. Never saved: the writer owns the file.
    """
    import numpy as np

    import faiss

    expected = np.asarray(store.chunk_ids(), dtype=np.int64)
    loaded = VectorIndex.load_file(store.directory)
    if loaded is not None and loaded.dim == dim and loaded.size == len(expected):
        ids = np.sort(faiss.vector_to_array(loaded.index.id_map).astype(np.int64))
        if np.array_equal(ids, expected) and _sample_matches(loaded, store, expected):
            loaded.version = store.vectors_version()
            return loaded
    log.info("vector index file does not match this snapshot of the database; rebuilding it in memory")
    return VectorIndex.rebuild(store, dim)


def _sample_matches(index: VectorIndex, store: IndexStore, ids: np.ndarray) -> bool:
    import numpy as np

    if not len(ids):
        return True
    picks = np.unique(np.concatenate([ids[:1], ids[-1:], ids[:: max(1, len(ids) // SNAPSHOT_SAMPLE)]]))
    for chunk_id, blob in store.chunk_vectors([int(i) for i in picks]):
        stored = np.frombuffer(blob, dtype=np.float32)
        try:
            saved = index.index.reconstruct(int(chunk_id))
        except RuntimeError:
            return False
        if not np.array_equal(stored, saved):
            return False
    return True


def _fsync_replace(tmp: Path, final: Path) -> None:
    with open(tmp, "rb+") as handle:
        os.fsync(handle.fileno())
    os.replace(tmp, final)
