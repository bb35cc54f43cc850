"""The FAISS index over chunk vectors: inner product on normalised vectors, ids = chunk ids.

It is a cache of what the index database holds. A sidecar (``vectors.json``) says which
database state the FAISS file matches: the database's ``index_id`` (each index database has
its own, so a rebuilt index never takes another's cache) and ``vectors_version``, plus a
description of the file itself (its size, how many vectors, a digest of its ids). A reader
trusts the pair only when all of it agrees; anything else (missing, unreadable, the wrong
shape, behind, from another save) is rebuilt from the database, which needs no model.

Saves are atomic per file and never collide: each writes uniquely named temporary files,
then renames them into place. Two saves racing can leave the FAISS file of one beside the
sidecar of the other for a moment; the digest tells, and the reader tries again.
"""

from __future__ import annotations

import hashlib
import json
import logging
import os
import secrets
import time
from pathlib import Path
from typing import TYPE_CHECKING, Any

if TYPE_CHECKING:
    import numpy as np

    from .store import IndexStore

log = logging.getLogger("brain")

FAISS_FILE = "vectors.faiss"
SIDECAR_FILE = "vectors.json"
SIDECAR_FORMAT = 2  # 1: version, dim, count only
_READ_BATCH = 50_000
_READ_ATTEMPTS = 3  # a save racing the read can pair files of two saves for a moment


class VectorIndex:
    def __init__(self, index: Any, dim: int, version: int, index_id: str | None = None):  # faiss.IndexIDMap2
        self.index = index
        self.dim = dim
        self.version = version
        self.index_id = index_id

    @classmethod
    def empty(cls, dim: int, version: int = 0, index_id: str | None = None) -> VectorIndex:
        import faiss

        return cls(faiss.IndexIDMap2(faiss.IndexFlatIP(dim)), dim, version, index_id)

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
        import faiss
        import numpy as np

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

    def ids_digest(self) -> str:
        """A digest of the chunk ids in index order: ids are never reused for other vectors
        within one index database, so with its ``index_id`` this pins down the content."""
        import faiss

        ids = faiss.vector_to_array(self.index.id_map)
        return hashlib.blake2b(ids.tobytes(), digest_size=16).hexdigest()

    def save(self, directory: Path) -> None:
        """Write the FAISS file and its sidecar atomically, under names no other save uses."""
        import faiss

        _remove_orphan_temps(directory)
        faiss_tmp, sidecar_tmp = _temp_name(directory, FAISS_FILE), _temp_name(directory, SIDECAR_FILE)
        try:
            faiss.write_index(self.index, str(faiss_tmp))
            _fsync(faiss_tmp)
            meta = {
                "format": SIDECAR_FORMAT,
                "index_id": self.index_id,
                "version": self.version,
                "dim": self.dim,
                "count": self.size,
                "bytes": faiss_tmp.stat().st_size,
                "ids": self.ids_digest(),
            }
            sidecar_tmp.write_text(json.dumps(meta))
            _fsync(sidecar_tmp)
            # FAISS first: a reader pairing the new file with the old sidecar sees the
            # digests disagree and reads again, never a wrong pair.
            os.replace(faiss_tmp, directory / FAISS_FILE)
            os.replace(sidecar_tmp, directory / SIDECAR_FILE)
        finally:
            for tmp in (faiss_tmp, sidecar_tmp):
                tmp.unlink(missing_ok=True)

    @staticmethod
    def read_sidecar(directory: Path) -> dict | None:
        """The saved sidecar when it is one this version wrote (no faiss import), else None."""
        try:
            meta = json.loads((directory / SIDECAR_FILE).read_text(encoding="utf-8"))
        except (OSError, ValueError):
            return None
        return meta if _valid_sidecar(meta) else None

    @staticmethod
    def saved_matches(directory: Path, version: int, index_id: str | None, dim: int) -> bool:
        """True when the saved pair is the cache of exactly this state, judged without faiss:
        the sidecar names it, and the FAISS file on disk is the size the sidecar records."""
        meta = VectorIndex.read_sidecar(directory)
        if meta is None or (meta["version"], meta["index_id"], meta["dim"]) != (version, index_id, dim):
            return False
        try:
            return (directory / FAISS_FILE).stat().st_size == meta["bytes"]
        except OSError:
            return False

    @classmethod
    def load_file(cls, directory: Path) -> tuple[VectorIndex | None, str | None]:
        """(the saved index, None), or (None, why it cannot be used; None when never saved)."""
        import faiss

        faiss_path = directory / FAISS_FILE
        problem = None
        for attempt in range(_READ_ATTEMPTS):
            if attempt:  # only a pairing of two saves gets here: it passes once both are in
                time.sleep(0.05 * attempt)
            meta = cls.read_sidecar(directory)
            if meta is None:
                if not (directory / SIDECAR_FILE).exists() and not faiss_path.exists():
                    return None, None
                return None, f"{directory / SIDECAR_FILE} is missing, unreadable or not a sidecar this version writes"
            try:
                if faiss_path.stat().st_size != meta["bytes"]:
                    problem = f"{faiss_path} is not the file its sidecar describes (size)"
                    continue
                index = faiss.read_index(str(faiss_path))
            except FileNotFoundError:
                return None, f"{faiss_path} is missing"
            except (OSError, RuntimeError, MemoryError) as exc:
                return None, f"{faiss_path} is unreadable ({_first_line(exc)})"
            loaded = cls(index, meta["dim"], meta["version"], meta["index_id"])
            try:
                described = (
                    loaded.size == meta["count"] and index.d == meta["dim"] and loaded.ids_digest() == meta["ids"]
                )
            except (AttributeError, RuntimeError):  # not an IndexIDMap2
                described = False
            if described:
                return loaded, None
            problem = f"{faiss_path} is not the file its sidecar describes"
        return None, problem

    @classmethod
    def rebuild(cls, store: IndexStore, dim: int) -> VectorIndex:
        """A fresh index from the vectors stored in the database (no model needed)."""
        import numpy as np

        index = cls.empty(dim, store.vectors_version(), store.index_id())
        for rows in store.iter_chunk_vectors(_READ_BATCH):
            ids = np.fromiter((r[0] for r in rows), dtype=np.int64, count=len(rows))
            vectors = np.frombuffer(b"".join(r[1] for r in rows), dtype=np.float32).reshape(len(rows), dim)
            index.add(ids, vectors)
        return index


def load_current(store: IndexStore, dim: int) -> VectorIndex:
    """The FAISS index matching the database now: the saved file, or a rebuild (then saved)."""
    version, index_id = store.vectors_version(), store.index_id()
    loaded, problem = VectorIndex.load_file(store.directory)
    if loaded is not None and (loaded.version, loaded.index_id, loaded.dim) == (version, index_id, dim):
        return loaded
    if loaded is not None and loaded.index_id != index_id:
        log.warning("the vector index in %s belongs to another index database; rebuilding it", store.directory)
    elif loaded is not None:
        log.warning(
            "vector index is behind the database (version %s, expected %s); rebuilding it", loaded.version, version
        )
    elif problem is not None:
        log.warning("%s; rebuilding the vector index from the database", problem)
    index = VectorIndex.rebuild(store, dim)
    if store.vectors_version() != version:
        pass  # a writer moved on meanwhile and saves its own: do not put an older cache over it
    elif store.readonly:
        log.warning(
            "the index folder %s is read-only: the rebuilt vector index is kept in memory only", store.directory
        )
    elif not store.still_at_its_path():
        pass  # another index took this folder (a rebuild swapped in): its cache is not ours to write
    else:
        try:
            index.save(store.directory)
        except OSError as exc:
            log.warning("could not save the rebuilt vector index: %s", exc)
    return index


def snapshot_vectors(store: IndexStore, dim: int) -> VectorIndex:
    """The FAISS index of exactly the chunks ``store`` sees, for a reader pinned to one state.

    The saved file is used when its sidecar names this database (``index_id``) at this
    ``vectors_version`` and the file is the one the sidecar describes (``load_file`` checks its
    size, count and a digest of its ids); an indexer may replace it at any moment, and the
    reader keeps the state it opened. Otherwise it is rebuilt in memory from the store. Never
    saved: the writer owns the file.
    """
    loaded, _ = VectorIndex.load_file(store.directory)
    if loaded is not None and (loaded.index_id, loaded.version, loaded.dim) == (
        store.index_id(),
        store.vectors_version(),
        dim,
    ):
        return loaded
    log.info("the vector index file is not this snapshot's state; rebuilding it in memory")
    return VectorIndex.rebuild(store, dim)


def sync(store: IndexStore, start_version: int, removed_ids: list[int], added_ids: list[int]) -> None:
    """Bring the saved FAISS file level with the database after an indexing run.

    When the saved file is the state the run started from, the run's own changes are applied
    to it (removed and added chunk ids); otherwise it is rebuilt from the database. A no-op
    run finds the sidecar level and never imports faiss (nor numpy).
    """
    dim_text = store.get_meta("dim")
    if dim_text is None:
        return  # nothing was ever embedded
    version, index_id, dim = store.vectors_version(), store.index_id(), int(dim_text)
    if VectorIndex.saved_matches(store.directory, version, index_id, dim):
        return  # level already
    existing, _ = VectorIndex.load_file(store.directory)
    if existing is None or (existing.index_id, existing.dim, existing.version) != (index_id, dim, start_version):
        load_current(store, dim)
        return
    import numpy as np

    existing.remove(removed_ids)
    for start in range(0, len(added_ids), _READ_BATCH):
        rows = store.chunk_vectors(added_ids[start : start + _READ_BATCH])
        ids = np.fromiter((r[0] for r in rows), dtype=np.int64, count=len(rows))
        existing.add(ids, np.frombuffer(b"".join(r[1] for r in rows), dtype=np.float32).reshape(len(rows), dim))
    existing.version = version
    existing.save(store.directory)


def _valid_sidecar(meta: object) -> bool:
    if not isinstance(meta, dict) or meta.get("format") != SIDECAR_FORMAT:
        return False
    ints = ("version", "dim", "count", "bytes")
    if not all(type(meta.get(key)) is int and meta[key] >= 0 for key in ints):
        return False
    return isinstance(meta.get("ids"), str) and isinstance(meta.get("index_id"), (str, type(None))) and meta["dim"] > 0


def _temp_name(directory: Path, name: str) -> Path:
    """``<name>.<pid>.<random>.tmp``: unique per save; the pid lets a later save clear orphans."""
    return directory / f"{name}.{os.getpid()}.{secrets.token_hex(4)}.tmp"


def _remove_orphan_temps(directory: Path) -> None:
    """Temporary files of saves killed mid-way (their process is gone): they can be large."""
    for name in (FAISS_FILE, SIDECAR_FILE):
        for tmp in directory.glob(f"{name}.*.tmp"):
            parts = tmp.name[len(name) + 1 :].split(".")
            if len(parts) == 3 and parts[0].isdigit() and not _alive(int(parts[0])):
                tmp.unlink(missing_ok=True)


def _alive(pid: int) -> bool:
    if pid == os.getpid() or os.name == "nt":  # Windows: os.kill(pid, 0) is not a probe there
        return True
    try:
        os.kill(pid, 0)
    except ProcessLookupError:
        return False
    except (PermissionError, OSError):  # someone else's process, or no way to tell: leave it
        return True
    return True


def _fsync(path: Path) -> None:
    with open(path, "rb+") as handle:
        os.fsync(handle.fileno())


def _first_line(exc: BaseException) -> str:
    text = str(exc).strip()
    return text.splitlines()[0][:200] if text else type(exc).__name__
