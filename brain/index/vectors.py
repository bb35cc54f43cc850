"""The FAISS index over chunk vectors: inner product on normalised vectors, ids = chunk ids.

It is a cache of what the index database holds, kept in up to three files:

- ``vectors.faiss``, the base, read by memory map (nothing is copied; the kernel pages it in
  as searches touch it): an exact ``IndexIDMap2(IndexScalarQuantizer)``, or above
  ``EXACT_UP_TO`` chunks an approximate ``IndexIVFScalarQuantizer`` (``BRAIN_DENSE_INDEX``;
  bench/scale.py prints its recall@10 against exact search). Both keep float16 codes: the
  database's vectors are float16 values (float16 since m009; since m015 a byte a value times
  a step, vector_blobs.py, each value still exactly a float16), so the codes hold exactly what a
  float32 file would, in half the bytes and half the resident pages, and inner products
  still accumulate in float32 (bench/vector_codes.py: the same ids and scores, and no
  slower). An IVF base is trained once, when it is built whole; folding a delta in adds and
  removes in place. A float32 base written before (``IndexFlatIP``, ``IndexIVFFlat``: the
  sidecar says ``"codes": "float32"``, or nothing) is still read, and the next indexing run
  rebuilds it from the database with float16 codes, as a change of kind does;
- ``vectors.delta``, the changes since the base was written: chunk ids removed from it, and
  chunks added (ids and vectors). A run that changes a few notes writes only this small file;
  once it holds ``COMPACT_SHARE`` of the vectors it is folded into a new base;
- ``vectors.json``, the sidecar: which database state the pair matches (the database's
  ``index_id`` and ``vectors_version``) and a description of both files (the base's size,
  count and a digest of its ids; the delta's size and digest).

A reader trusts the files only when all of it agrees; anything else (missing, unreadable, the
wrong shape, behind, from another save) is rebuilt from the database, which needs no model.

Every file is written under a unique temporary name, then renamed into place, the sidecar
last: a reader never pairs files of two states. Two saves racing, or a save killed between
its renames, can leave a file of one state beside the sidecar of another for a moment; the
sizes and digests tell, and the reader tries again (then rebuilds).
"""

from __future__ import annotations

import errno
import hashlib
import json
import logging
import os
import time
from collections.abc import Iterator
from contextlib import contextmanager
from dataclasses import dataclass
from pathlib import Path
from typing import TYPE_CHECKING, Any

from .. import config
from .tempfiles import remove_orphans, temp_name

if TYPE_CHECKING:
    import numpy as np

    from .store import IndexStore
    from .vector_blobs import Codes

log = logging.getLogger("brain")

FAISS_FILE = "vectors.faiss"
DELTA_FILE = "vectors.delta"
SIDECAR_FILE = "vectors.json"
SIDECAR_FORMAT = 3  # 2: the base alone (read as a base without a delta); 1: version, dim, count only
CODES = "fp16"  # what a base is saved with; "float32": written before, still read, converted by sync
_BASE_KEYS = ("bytes", "base_count", "ids", "kind", "codes")  # the sidecar's description of the base
COMPACT_SHARE = 0.1  # the delta is folded into a new base once it holds this share of the base's vectors
_DELTA_MAGIC = b"BRAINVD1"
# Exact search up to this many chunks: one query scans them all, ~10 ms at 100,000 (384
# dimensions, one thread; bench/scale.py: 51 ms at 500,000 on a quiet machine).
EXACT_UP_TO = 100_000
IVF_NPROBE = 32  # lists an IVF search visits (of about 2 * sqrt(chunks): 2.3% of 500,000)
_READ_BATCH = 50_000
_READ_ATTEMPTS = 3  # a save racing the read can pair files of two saves for a moment


@dataclass(frozen=True)
class Delta:
    """Changes on top of a saved base: ids removed from it, and vectors added (ids never reused)."""

    removed: np.ndarray  # int64, sorted: ids of the base no longer there
    ids: np.ndarray  # int64: ids added
    vectors: np.ndarray  # float32 (len(ids), dim)

    @classmethod
    def empty(cls, dim: int) -> Delta:
        import numpy as np

        return cls(np.zeros(0, np.int64), np.zeros(0, np.int64), np.zeros((0, dim), np.float32))

    @property
    def size(self) -> int:
        return len(self.removed) + len(self.ids)

    def then(self, removed: Any, ids: Any, vectors: Any) -> Delta:
        """This delta followed by more changes. A removed id that this delta added is simply
        dropped; any other is one of the base's."""
        import numpy as np

        removed = np.asarray(removed, dtype=np.int64)
        ids = np.asarray(ids, dtype=np.int64)
        vectors = np.asarray(vectors, dtype=np.float32).reshape(len(ids), self.vectors.shape[1])
        keep = ~np.isin(self.ids, removed)
        from_base = removed[~np.isin(removed, self.ids)]
        return Delta(
            np.union1d(self.removed, from_base),
            np.concatenate([self.ids[keep], ids]),
            np.concatenate([self.vectors[keep], vectors]),
        )

    def encode(self) -> bytes:
        import numpy as np

        header = np.array([self.vectors.shape[1], len(self.removed), len(self.ids)], dtype=np.int64)
        parts = (self.removed, self.ids, np.ascontiguousarray(self.vectors, dtype=np.float32))
        return _DELTA_MAGIC + header.tobytes() + b"".join(p.tobytes() for p in parts)

    @classmethod
    def decode(cls, data: bytes, dim: int) -> Delta | None:
        """The delta in ``data``, or None when it is not one of ``dim`` dimensions."""
        import numpy as np

        head = len(_DELTA_MAGIC) + 24
        if len(data) < head or not data.startswith(_DELTA_MAGIC):
            return None
        d, n_removed, n_added = (int(x) for x in np.frombuffer(data, np.int64, 3, len(_DELTA_MAGIC)))
        if d != dim or min(n_removed, n_added) < 0 or len(data) != head + 8 * (n_removed + n_added) + 4 * dim * n_added:
            return None
        removed = np.frombuffer(data, np.int64, n_removed, head)
        ids = np.frombuffer(data, np.int64, n_added, head + 8 * n_removed)
        vectors = np.frombuffer(data, np.float32, n_added * dim, head + 8 * (n_removed + n_added))
        return cls(removed, ids, vectors.reshape(n_added, dim))


def wanted_kind(count: int, current: str | None = None) -> str:
    """``flat`` (exact) or ``ivf`` for an index of ``count`` chunks, as ``BRAIN_DENSE_INDEX``
    says: ``exact``, ``ivf``, or ``auto``: IVF above ``EXACT_UP_TO`` chunks, and back to
    exact only below 80% of it, so a vault around the threshold is not rebuilt back and forth."""
    setting = config.dense_index()
    if setting != "auto":
        return "flat" if setting == "exact" else "ivf"
    if current == "ivf":
        return "ivf" if count >= 0.8 * EXACT_UP_TO else "flat"
    return "ivf" if count > EXACT_UP_TO else "flat"


def _kind(index: Any) -> str:
    return "flat" if hasattr(index, "id_map") else "ivf"


def _codes(index: Any) -> str:
    """``fp16`` (a scalar quantizer of float16 codes) or ``float32`` (flat codes): how the
    base stores its vectors."""
    import faiss

    inner = faiss.downcast_index(index.index if hasattr(index, "id_map") else faiss.extract_index_ivf(index))
    if isinstance(inner, (faiss.IndexScalarQuantizer, faiss.IndexIVFScalarQuantizer)):
        return "fp16" if inner.sq.qtype == faiss.ScalarQuantizer.QT_fp16 else "other"
    return "float32" if isinstance(inner, (faiss.IndexFlat, faiss.IndexIVFFlat)) else "other"


def _exact(dim: int) -> Any:
    """An empty exact index of float16 codes, ids mapped: every search scans all of them."""
    import faiss

    return faiss.IndexIDMap2(faiss.IndexScalarQuantizer(dim, faiss.ScalarQuantizer.QT_fp16, faiss.METRIC_INNER_PRODUCT))


def _base_ids(index: Any) -> np.ndarray:
    """The base's chunk ids in storage order (an IVF index: list by list)."""
    import faiss
    import numpy as np

    if hasattr(index, "id_map"):
        return faiss.vector_to_array(index.id_map)
    lists: Any = faiss.extract_index_ivf(index).invlists
    parts = [np.zeros(0, np.int64)]
    for number in range(lists.nlist):
        size = lists.list_size(number)
        if size:
            parts.append(faiss.rev_swig_ptr(lists.get_ids(number), size).copy())
    return np.concatenate(parts)


def _ids_digest(index: Any, base_ids: np.ndarray | None = None) -> str:
    """The digest of the base's chunk ids in storage order (``base_ids`` when they are at hand).
    An IVF index's lists are hashed where they lie, one after another (the digest of their
    concatenation): copying 500,000 ids out of 1,400 lists first was 0.03 s of opening a recaller."""
    import faiss

    digest = hashlib.blake2b(digest_size=16)
    if base_ids is not None or hasattr(index, "id_map"):
        digest.update((_base_ids(index) if base_ids is None else base_ids).tobytes())
        return digest.hexdigest()
    lists: Any = faiss.extract_index_ivf(index).invlists
    for number in range(lists.nlist):
        size = lists.list_size(number)
        if size:
            digest.update(faiss.rev_swig_ptr(lists.get_ids(number), size).data)
    return digest.hexdigest()


def _ivf(ids: np.ndarray, vectors: np.ndarray | Codes, dim: int) -> Any:
    """An IVF index over these vectors (float32 rows, or stored ``Codes`` read batch by batch):
    about 2 * sqrt(n) lists, trained on a sample (64 per list)."""
    import faiss
    import numpy as np

    n = len(ids)
    lists = max(1, min(int(2 * n**0.5), n // 39))  # k-means wants ~39 points per centroid
    # Codes of the vectors themselves (not of their residuals from the list's centroid): float16
    # holds a stored vector exactly, so scores are those of exact search over the lists visited.
    by_residual = False
    index = faiss.IndexIVFScalarQuantizer(
        faiss.IndexFlatIP(dim), dim, lists, faiss.ScalarQuantizer.QT_fp16, faiss.METRIC_INNER_PRODUCT, by_residual
    )
    if n:
        sample = np.sort(np.random.default_rng(0).choice(n, size=min(n, 64 * lists), replace=False))
        index.train(np.ascontiguousarray(vectors[sample]))
        for start in range(0, n, _READ_BATCH):
            index.add_with_ids(
                np.ascontiguousarray(vectors[start : start + _READ_BATCH]), ids[start : start + _READ_BATCH]
            )
    else:
        index.train(np.zeros((1, dim), np.float32))
    index.nprobe = IVF_NPROBE
    return index


class VectorIndex:
    """A base FAISS index and the delta on top of it, searched as one."""

    def __init__(
        self,
        index: Any,  # faiss.IndexIDMap2 (exact) or an IVF index
        dim: int,
        version: int,
        index_id: str | None = None,
        *,
        delta: Delta | None = None,
        base_file: dict | None = None,
        writable: bool = True,
    ):
        self.index = index  # the base
        self.dim = dim
        self.version = version
        self.index_id = index_id
        self.base_file = base_file  # the sidecar's description of the base file it was read from
        self.writable = writable  # False: the base is a read-only memory map
        self.delta = Delta.empty(dim)
        self._added: Any = None  # the delta's vectors, searchable
        self._exclude: Any = None  # search parameters leaving out the delta's removed ids
        self._selectors: tuple[Any, ...] = ()
        if delta is not None:
            self._set_delta(delta)

    @classmethod
    def empty(cls, dim: int, version: int = 0, index_id: str | None = None) -> VectorIndex:
        return cls(_exact(dim), dim, version, index_id)

    @property
    def size(self) -> int:
        return int(self.index.ntotal) - len(self.delta.removed) + len(self.delta.ids)

    @property
    def kind(self) -> str:
        """``flat`` (exact) or ``ivf`` (approximate): the base's kind."""
        return _kind(self.index)

    @property
    def codes(self) -> str:
        """``fp16`` or ``float32`` (a base written before float16 codes): how the base stores vectors."""
        return _codes(self.index)

    def add(self, ids: np.ndarray, vectors: np.ndarray) -> None:
        import numpy as np

        if len(ids):
            self._set_delta(self.delta.then(np.zeros(0, np.int64), ids, vectors))

    def remove(self, ids: list[int] | np.ndarray) -> None:
        import numpy as np

        if len(ids):
            self._set_delta(self.delta.then(ids, np.zeros(0, np.int64), np.zeros((0, self.dim), np.float32)))

    def _set_delta(self, delta: Delta) -> None:
        import faiss
        import numpy as np

        self.delta = delta
        self._added = None
        if len(delta.ids):
            self._added = faiss.IndexIDMap2(faiss.IndexFlatIP(self.dim))
            self._added.add_with_ids(np.ascontiguousarray(delta.vectors), delta.ids)
        # Search parameters: an IVF base's lists to visit, and the ids the delta removed.
        self._exclude = faiss.SearchParametersIVF() if self.kind == "ivf" else None
        if self._exclude is not None:
            self._exclude.nprobe = IVF_NPROBE
        self._selectors = ()
        if len(delta.removed):
            batch = faiss.IDSelectorBatch(delta.removed)
            selector = faiss.IDSelectorNot(batch)
            self._exclude = self._exclude or faiss.SearchParameters()
            self._exclude.sel = selector
            self._selectors = (batch, selector)  # the parameters point into both: keep them alive

    def search(self, query: np.ndarray, k: int) -> tuple[np.ndarray, np.ndarray]:
        """(chunk ids, scores) of the k nearest chunks, best first; -1 ids dropped."""
        import numpy as np

        k = min(k, self.size)
        if k <= 0:
            return np.zeros(0, dtype=np.int64), np.zeros(0, dtype=np.float32)
        query = np.ascontiguousarray(query.reshape(1, -1), dtype=np.float32)
        with one_thread():
            scores, ids = self.index.search(query, min(k, int(self.index.ntotal)) or 1, params=self._exclude)
            if self._added is not None:
                more_scores, more_ids = self._added.search(query, min(k, int(self._added.ntotal)))
                scores, ids = np.concatenate([scores, more_scores], 1), np.concatenate([ids, more_ids], 1)
        return best_first(ids, scores, k)

    def ids(self) -> np.ndarray:
        """Every chunk id this index holds (the base's, less those removed, and the delta's)."""
        import numpy as np

        base = _base_ids(self.index)
        return np.concatenate([base[~np.isin(base, self.delta.removed)], self.delta.ids])

    def ids_digest(self) -> str:
        """A digest of the base's chunk ids in index order: ids are never reused for other
        vectors within one index database, so with its ``index_id`` this pins down the content."""
        return _ids_digest(self.index)

    def merged(self) -> VectorIndex:
        """This index with its delta folded into the base (which must be writable)."""
        if not self.delta.size:
            return self
        if not self.writable:
            raise ValueError("the base is a read-only memory map: load it with mmap=False to fold a delta in")
        import numpy as np

        if len(self.delta.removed):
            self.index.remove_ids(self.delta.removed)
        if len(self.delta.ids):
            self.index.add_with_ids(np.ascontiguousarray(self.delta.vectors), self.delta.ids)
        self._set_delta(Delta.empty(self.dim))
        self.base_file = None
        return self

    def save(self, directory: Path) -> None:
        """Write the whole index as the base, with no delta, atomically, under names no other save uses."""
        self.merged()
        remove_orphans(directory, (FAISS_FILE, DELTA_FILE, SIDECAR_FILE))
        faiss_tmp, sidecar_tmp = temp_name(directory, FAISS_FILE), temp_name(directory, SIDECAR_FILE)
        try:
            _write_faiss(self.index, faiss_tmp)
            _fsync(faiss_tmp)
            base = {
                "bytes": faiss_tmp.stat().st_size,
                "base_count": int(self.index.ntotal),
                "ids": self.ids_digest(),
                "kind": self.kind,
                "codes": self.codes,
            }
            _write_new(sidecar_tmp, json.dumps(self._sidecar(base, None)).encode())
            # FAISS first: a reader pairing the new file with the old sidecar sees the
            # digests disagree and reads again, never a wrong pair.
            moves = [(faiss_tmp, directory / FAISS_FILE), (sidecar_tmp, directory / SIDECAR_FILE)]
            if not _replace_unless_newer(directory, moves):
                return  # kept in memory; the delta file is still the saved base's
            self.base_file = base
        finally:
            for tmp in (faiss_tmp, sidecar_tmp):
                tmp.unlink(missing_ok=True)
        (directory / DELTA_FILE).unlink(missing_ok=True)  # no sidecar names it any more

    def save_delta(self, directory: Path) -> None:
        """Write only the delta (and the sidecar) over the base file this index was read from."""
        if self.base_file is None:
            raise ValueError("no saved base to write a delta over: save() the whole index")
        write_delta(directory, self.base_file, self.delta, self.version, self.index_id, self.size)

    def _sidecar(self, base: dict, delta: dict | None) -> dict:
        return _sidecar(self.index_id, self.version, self.dim, self.size, base, delta)

    @staticmethod
    def read_sidecar(directory: Path) -> dict | None:
        """The saved sidecar when it is one this version reads (no faiss import), else None.
        A format 2 sidecar describes a base without a delta."""
        try:
            meta = json.loads(_read_file(directory / SIDECAR_FILE).decode("utf-8"))
        except (OSError, ValueError):
            return None
        if isinstance(meta, dict) and meta.get("format") == 2:
            meta = {**meta, "format": SIDECAR_FORMAT, "base_count": meta.get("count"), "delta": None}
        if isinstance(meta, dict) and "kind" not in meta:
            meta = {**meta, "kind": "flat"}
        if isinstance(meta, dict) and "codes" not in meta:  # written before float16 codes
            meta = {**meta, "codes": "float32"}
        return meta if _valid_sidecar(meta) else None

    @staticmethod
    def saved_matches(directory: Path, version: int, index_id: str | None, dim: int) -> bool:
        """True when the saved files are the cache of exactly this state, judged without faiss:
        the sidecar names it, and the files on disk are the sizes it records."""
        meta = VectorIndex.read_sidecar(directory)
        if meta is None or (meta["version"], meta["index_id"], meta["dim"]) != (version, index_id, dim):
            return False
        try:
            if (directory / FAISS_FILE).stat().st_size != meta["bytes"]:
                return False
            return meta["delta"] is None or (directory / DELTA_FILE).stat().st_size == meta["delta"]["bytes"]
        except OSError:
            return False

    @classmethod
    def load_file(cls, directory: Path, *, mmap: bool = True) -> tuple[VectorIndex | None, str | None]:
        """(the saved index, None), or (None, why it cannot be used; None when never saved).

        ``mmap``: map the base read-only rather than read it (recall); writers that fold the
        delta in read it (``mmap=False``)."""
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
                delta, problem = _read_delta(directory, meta)
                if problem is not None:
                    continue
                # Not on Windows: a mapped file there cannot be replaced by the next save.
                mapped = mmap and os.name != "nt"
                flags = (faiss.IO_FLAG_MMAP_IFC if meta["kind"] == "flat" else faiss.IO_FLAG_MMAP) if mapped else 0
                index = faiss.read_index(str(faiss_path), flags)
            except FileNotFoundError:
                return None, f"{faiss_path} is missing"
            except (OSError, RuntimeError, MemoryError) as exc:
                return None, f"{faiss_path} is unreadable ({_first_line(exc)})"
            base = {k: meta[k] for k in _BASE_KEYS}
            loaded = cls(index, meta["dim"], meta["version"], meta["index_id"], base_file=base, writable=not mapped)
            try:
                described = (
                    index.ntotal == meta["base_count"]
                    and index.d == meta["dim"]
                    and loaded.kind == meta["kind"]
                    and loaded.codes == meta["codes"]
                )
                # With a delta the base's ids are needed as one array anyway: hashed from it.
                base_ids = _base_ids(loaded.index) if described and delta is not None else None
                described = described and _ids_digest(loaded.index, base_ids) == meta["ids"]
            except (AttributeError, RuntimeError):  # neither an IndexIDMap2 nor an IVF index
                described = False
            if described and delta is not None and base_ids is not None:
                described = bool(_isin_all(delta.removed, base_ids)) and not _isin_any(delta.ids, base_ids)
                if described:
                    loaded._set_delta(delta)
            if described and loaded.size == meta["count"]:
                return loaded, None
            problem = f"{faiss_path} is not the file its sidecar describes"
        return None, problem

    @classmethod
    def rebuild(cls, store: IndexStore, dim: int, kind: str | None = None) -> VectorIndex:
        """A fresh index from the vectors stored in the database (no model needed), of
        ``kind`` (by default ``wanted_kind`` for its size)."""
        from .vector_blobs import Codes

        kind = kind or wanted_kind(store.chunk_count())
        index = cls.empty(dim, store.vectors_version(), store.index_id())
        ids, rows = store.chunk_vector_codes(_READ_BATCH)
        codes = Codes(rows)
        if kind == "ivf":  # trained on a sample of all the vectors
            index.index = _ivf(ids, codes, dim)
            index._set_delta(Delta.empty(dim))
            return index
        for start in range(0, len(ids), _READ_BATCH):
            vectors = codes[start : start + _READ_BATCH].reshape(-1, dim)
            index.index.add_with_ids(vectors, ids[start : start + _READ_BATCH])
        return index


def write_delta(directory: Path, base: dict, delta: Delta, version: int, index_id: str | None, count: int) -> None:
    """Write ``delta`` over the saved ``base`` (the sidecar's description of it) for ``version``:
    the delta file, then the sidecar, each atomically. Needs numpy only, not faiss."""
    remove_orphans(directory, (FAISS_FILE, DELTA_FILE, SIDECAR_FILE))
    data = delta.encode()
    described = {
        "bytes": len(data),
        "digest": hashlib.blake2b(data, digest_size=16).hexdigest(),
        "removed": len(delta.removed),
        "added": len(delta.ids),
    }
    delta_tmp, sidecar_tmp = temp_name(directory, DELTA_FILE), temp_name(directory, SIDECAR_FILE)
    try:
        _write_new(delta_tmp, data)
        meta = _sidecar(index_id, version, int(delta.vectors.shape[1]), count, base, described)
        _write_new(sidecar_tmp, json.dumps(meta).encode())
        _replace_unless_newer(directory, [(delta_tmp, directory / DELTA_FILE), (sidecar_tmp, directory / SIDECAR_FILE)])
    finally:
        for tmp in (delta_tmp, sidecar_tmp):
            tmp.unlink(missing_ok=True)


def _sidecar(index_id: str | None, version: int, dim: int, count: int, base: dict, delta: dict | None) -> dict:
    return {
        "format": SIDECAR_FORMAT,
        "index_id": index_id,
        "version": version,
        "dim": dim,
        "count": count,
        "bytes": base["bytes"],
        "base_count": base["base_count"],
        "ids": base["ids"],
        "kind": base["kind"],
        "codes": base["codes"],
        "delta": delta,
    }


def _read_delta(directory: Path, meta: dict) -> tuple[Delta | None, str | None]:
    """(the delta the sidecar names, None) or (None, why not); (None, None) when it names none."""
    described = meta["delta"]
    if described is None:
        return None, None
    path = directory / DELTA_FILE
    try:
        data = _read_file(path)
    except OSError:
        return None, f"{path} is missing or unreadable"
    if len(data) != described["bytes"] or hashlib.blake2b(data, digest_size=16).hexdigest() != described["digest"]:
        return None, f"{path} is not the file its sidecar describes"
    delta = Delta.decode(data, meta["dim"])
    if delta is None or (len(delta.removed), len(delta.ids)) != (described["removed"], described["added"]):
        return None, f"{path} is not a delta this version reads"
    return delta, None


def load_current(store: IndexStore, dim: int) -> VectorIndex:
    """The FAISS index matching the database now: the saved files, or a rebuild (then saved)."""
    refuse_what_is_in_the_way(store.directory)
    version, index_id = store.vectors_version(), store.index_id()
    loaded, problem = VectorIndex.load_file(store.directory)
    level = loaded is not None and (loaded.version, loaded.index_id, loaded.dim) == (version, index_id, dim)
    wanted: str | None = None  # the kind to rebuild as (None: as the size says)
    if loaded is not None and level:
        wanted = wanted_kind(loaded.size, loaded.kind)
        if loaded.kind == wanted:
            return loaded
        # BRAIN_DENSE_INDEX changed since the last `brain index`: search as it now says, not
        # silently with the other kind until the next run converts the file.
        log.warning(
            "BRAIN_DENSE_INDEX asks for %s search, the saved vector index is %s; rebuilding it",
            "exact" if wanted == "flat" else "IVF",
            "exact" if loaded.kind == "flat" else "IVF",
        )
    elif loaded is not None and loaded.index_id != index_id:
        log.warning("the vector index in %s belongs to another index database; rebuilding it", store.directory)
    elif loaded is not None:
        log.warning(
            "vector index is out of step with the database (version %s, expected %s); rebuilding it",
            loaded.version,
            version,
        )
    elif problem is not None:
        said = _unusable_file(store.directory)
        log.warning("%s; rebuilding the vector index from the database", said or problem)
    index = VectorIndex.rebuild(store, dim, wanted)
    if store.vectors_version() != version:
        pass  # a writer moved on meanwhile and saves its own: do not put an older cache over it
    elif store.readonly:
        log.warning("%s: the rebuilt vector index is kept in memory only", store.why_readonly)
    elif not store.still_at_its_path():
        pass  # another index took this folder (a rebuild swapped in): its cache is not ours to write
    else:
        try:
            index.save(store.directory)
        except OSError as exc:
            log.warning("could not save the rebuilt vector index: %s", _save_failure(store.directory, exc))
    return index


def _replace_unless_newer(directory: Path, moves: list[tuple[Path, Path]]) -> bool:
    """The written files renamed into place, unless a newer brain upgraded the index: its vector
    files are the newer brain's then (it may stamp them otherwise)."""
    from .upgrades import replace_unless_newer

    return replace_unless_newer(directory, moves, "the vector index")


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
    """Bring the saved vector files level with the database after an indexing run.

    When they are the state the run started from, the run's changes (removed and added chunk
    ids) are added to the delta, and only the delta file is written (numpy, no faiss);
    once the delta holds ``COMPACT_SHARE`` of the base, it is folded into a new base.
    Otherwise the index is rebuilt from the database. A no-op run finds the sidecar level and
    never imports faiss (nor numpy).
    """
    dim_text = store.get_meta("dim")
    if dim_text is None:
        return  # nothing was ever embedded
    version, index_id, dim = store.vectors_version(), store.index_id(), int(dim_text)
    directory = store.directory
    refuse_what_is_in_the_way(directory)
    meta = VectorIndex.read_sidecar(directory)
    if meta is not None and meta["kind"] != wanted_kind(meta["count"], meta["kind"]):
        _save_rebuilt(store, dim)  # BRAIN_DENSE_INDEX, or the vault's size, asks for the other kind
        return
    if meta is not None and meta["codes"] != CODES:
        log.info("converting the vector index in %s to %s codes", directory, CODES)
        _save_rebuilt(store, dim)  # a float32 base written before: rebuilt once, as for a kind
        return
    if VectorIndex.saved_matches(directory, version, index_id, dim):
        return  # level already
    at_start = meta is not None and (meta["index_id"], meta["dim"], meta["version"]) == (index_id, dim, start_version)
    delta, problem = _read_delta(directory, meta) if meta is not None and at_start else (None, "")
    if meta is None or not at_start or problem is not None or not _base_there(directory, meta):
        load_current(store, dim)
        return
    import numpy as np

    delta = delta or Delta.empty(dim)
    ids, vectors = _stored_vectors(store, added_ids, dim)
    delta = delta.then(np.asarray(removed_ids, dtype=np.int64), ids, vectors)
    if delta.size <= COMPACT_SHARE * max(meta["base_count"], 1):
        count = meta["base_count"] - len(delta.removed) + len(delta.ids)
        write_delta(directory, {k: meta[k] for k in _BASE_KEYS}, delta, version, index_id, count)
        return
    existing, _ = VectorIndex.load_file(directory, mmap=False)
    if existing is None or (existing.index_id, existing.dim, existing.version) != (index_id, dim, start_version):
        load_current(store, dim)
        return
    existing.remove(removed_ids)
    existing.add(ids, vectors)
    existing.version = version
    existing.save(directory)


def _save_rebuilt(store: IndexStore, dim: int) -> None:
    index = VectorIndex.rebuild(store, dim)
    if store.vectors_version() == index.version:
        index.save(store.directory)


def _stored_vectors(store: IndexStore, chunk_ids: list[int] | None, dim: int) -> tuple[np.ndarray, np.ndarray]:
    """(ids, float32 vectors) of these chunks (None: every chunk), as the database holds them."""
    import numpy as np

    if chunk_ids is None:
        from .vector_blobs import decode_rows

        ids, codes = store.chunk_vector_codes(_READ_BATCH)
        return ids, decode_rows(codes).reshape(len(ids), dim)
    ids_parts, vector_parts = [np.zeros(0, np.int64)], [np.zeros((0, dim), np.float32)]
    for start in range(0, len(chunk_ids), _READ_BATCH):
        rows = store.chunk_vectors(chunk_ids[start : start + _READ_BATCH])
        ids_parts.append(np.fromiter((r[0] for r in rows), dtype=np.int64, count=len(rows)))
        vector_parts.append(np.frombuffer(b"".join(r[1] for r in rows), dtype=np.float32).reshape(len(rows), dim))
    return np.concatenate(ids_parts), np.concatenate(vector_parts)


def _base_there(directory: Path, meta: dict) -> bool:
    try:
        return (directory / FAISS_FILE).stat().st_size == meta["bytes"]
    except OSError:
        return False


def _isin_all(values: np.ndarray, pool: np.ndarray) -> bool:
    import numpy as np

    return bool(np.isin(values, pool).all())


def _isin_any(values: np.ndarray, pool: np.ndarray) -> bool:
    import numpy as np

    return bool(np.isin(values, pool).any())


def _valid_sidecar(meta: object) -> bool:
    if not isinstance(meta, dict) or meta.get("format") != SIDECAR_FORMAT:
        return False
    ints = ("version", "dim", "count", "bytes", "base_count")
    if not all(type(meta.get(key)) is int and meta[key] >= 0 for key in ints):
        return False
    if not (
        isinstance(meta.get("ids"), str) and isinstance(meta.get("index_id"), (str, type(None))) and meta["dim"] > 0
    ):
        return False
    if meta.get("kind") not in ("flat", "ivf") or meta.get("codes") not in ("fp16", "float32"):
        return False
    delta = meta.get("delta")
    if delta is None:
        return True
    return (
        isinstance(delta, dict)
        and all(type(delta.get(key)) is int and delta[key] >= 0 for key in ("bytes", "removed", "added"))
        and isinstance(delta.get("digest"), str)
    )


def _write_new(path: Path, data: bytes) -> None:
    """Write ``data`` to a new file and flush it to disk before it is renamed into place."""
    # note text's vectors: the owner's alone, as index.db is (not the umask's 0644)
    with os.fdopen(os.open(path, os.O_WRONLY | os.O_CREAT | os.O_EXCL, 0o600), "wb") as handle:
        handle.write(data)
        handle.flush()
        os.fsync(handle.fileno())


def _write_faiss(index: Any, path: Path) -> None:
    """``faiss.write_index``, whose failures (a full disk, a quota) are a bare RuntimeError
    naming the C++ line: an OSError here, with the errno its message names, as Python's own
    writes raise it."""
    import faiss

    try:
        faiss.write_index(index, str(path))
        os.chmod(path, 0o600)  # faiss creates it with the umask's mode; it is renamed into place after
    except RuntimeError as exc:
        text = str(exc)
        code = next(
            (c for c in (errno.ENOSPC, errno.EDQUOT, errno.EFBIG, errno.EACCES, errno.EROFS) if os.strerror(c) in text),
            errno.EIO,
        )
        raise OSError(code, f"{os.strerror(code)} (writing {path.name})", str(path)) from exc


def _save_failure(directory: Path, exc: OSError) -> str:
    """What stopped a save of the vector files: the file size limit named, where it is the cause
    (it read "Input/output error", on a disk with room)."""
    from ..file_state import file_size_limit
    from .health import file_size_limit_message

    limit = file_size_limit() if exc.errno == errno.EFBIG else None
    if limit is None:
        return str(exc)
    return file_size_limit_message(directory, exc.strerror or str(exc), limit)


def _fsync(path: Path) -> None:
    with open(path, "rb+") as handle:
        os.fsync(handle.fileno())


def _first_line(exc: BaseException) -> str:
    text = str(exc).strip()
    return text.splitlines()[0][:200] if text else type(exc).__name__


@contextmanager
def one_thread() -> Iterator[None]:
    """FAISS on one OpenMP thread for the block: one query's threads only contend (bench/scale.py,
    500k chunks: 168 ms p50 on the default threads, 51 ms on one)."""
    import faiss

    threads = faiss.omp_get_max_threads()
    faiss.omp_set_num_threads(1)
    try:
        yield
    finally:
        faiss.omp_set_num_threads(threads)


def best_first(ids: np.ndarray, scores: np.ndarray, k: int) -> tuple[np.ndarray, np.ndarray]:
    """One query's FAISS answer (rows of ids and scores) as (ids, scores), -1 ids dropped, the
    best k first, ties in the order found."""
    import numpy as np

    keep = ids[0] >= 0
    ids, scores = ids[0][keep], scores[0][keep]
    order = np.argsort(-scores, kind="stable")[:k]
    return ids[order], scores[order]


def _unusable_file(directory: Path) -> str | None:
    """What the vector index's own files say of why they could not be read: this user may not
    read one, or a folder, a FIFO, a link to nowhere stands in its place. FAISS said "Error in
    faiss::MmappedFileMappingOwner::PImpl::PImpl(…) … could not open" of the first, and of a
    folder "not the file its sidecar describes (size)"."""
    from ..file_state import unusable

    for name in (SIDECAR_FILE, FAISS_FILE, DELTA_FILE):
        problem = unusable(directory / name, "the vector index file", "brain saves a new one in its place")
        if problem:
            return problem
    return None


def refuse_what_is_in_the_way(directory: Path) -> None:
    """BrainError, one line, when a folder or a symbolic link stands where a vector index file
    goes (``file_state.in_the_way``): a save would fail on it, or drop the user's link. Else each
    run would rebuild the vectors in memory and say so twice, one line untrue ("saves a new one")."""
    from ..errors import BrainError
    from ..file_state import in_the_way

    for name in (SIDECAR_FILE, FAISS_FILE, DELTA_FILE):
        said = in_the_way(directory / name, "the vector index file", "brain saves a new one in its place")
        if said:
            raise BrainError(said)


def _read_file(path: Path) -> bytes:
    """The bytes of the regular file at ``path``; OSError for anything else: a FIFO in its place
    was waited on for a writer forever (`brain ask` hung on a FIFO named vectors.json)."""
    import stat

    fd = os.open(path, os.O_RDONLY | os.O_NONBLOCK)
    try:
        if not stat.S_ISREG(os.fstat(fd).st_mode):
            raise OSError(errno.EINVAL, "not a regular file", str(path))
        with os.fdopen(fd, "rb", closefd=False) as handle:
            return handle.read()
    finally:
        os.close(fd)
