"""The lexical lane's BM25 from our own postings: FTS5's hits and scores without its per-row cost.

FTS5's ``bm25()`` costs ~2.3 µs a matched row; a five-word query at 100,000 notes matches
~110,000 chunks. Here each term's chunks and their per-column counts are numpy arrays in
``postings.bin`` (read a term at a time; the chunks' ids and lengths and the terms memory-mapped
and read ahead), and a query computes FTS5's own formula (``fts5_aux.c``: k1 1.2,
b 0.75, IDF floored at 1e-6, f = Σ column weight × hits, D = the row's tokens over all columns,
in the same order of operations, so the same doubles) over the few postings of its terms.

FTS5 stays the source of truth; the postings are used only where they give its very answer:

- The file is a base, read from one committed state of the database, stamped with a random
  nonce that the database's ``meta.postings_stamp`` takes only after the file is renamed into
  place (a kill between the two, or an index.db restored from a backup: stamps differ, FTS5).
- Since the base, the ``postings_log`` table (m017) holds the chunks deleted or re-titled, and
  chunks added have ids past the base's last: a query drops the base's entries for those and
  scores their present text (tokenized by SQLite's own tokenizer, ``tokens.index_words``).
- IDF, N and the average length come from the present FTS5 table at every query; a row's
  length from FTS5's own docsize record.
- The base is tokenized by a mimic of unicode61 (``recall/bm25.tokens``: SQLite's tokenizer per
  call would take minutes); every term whose per-column chunk and hit counts differ from FTS5's
  own (fts5vocab) is left to FTS5, as is any query naming it.
- Column weights must add up exactly (multiples of 1/1024): FTS5 sums a weight per hit.
Otherwise (no base, another tokenizer, a stale or damaged file, too many changes, a phrase
query) the search is FTS5's, and the log says why, once per reason.

Whether an index pass is due to build a new base is postings_due.py's (with the file's header):
a `brain index` with nothing to do imports none of this.
"""

from __future__ import annotations

import itertools
import json
import logging
import math
import os
import secrets
from collections import Counter, defaultdict
from collections.abc import Callable, Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import TYPE_CHECKING, Any, NamedTuple

from ..numeric import sorted_distinct
from .postings_due import FILE, FORMAT, MAGIC, TOKENIZER, buildable, parse_header, stamped
from .tempfiles import fsync_folder, remove_orphans, temp_name
from .tokens import index_words

if TYPE_CHECKING:
    import numpy as np

    from .store import IndexStore

log = logging.getLogger(__name__)

COLUMNS = ("title", "heading", "text")
K1, B = 1.2, 0.75
MAX_TF = 255  # hits of a term in one column of one chunk that the file can hold (uint8); more: FTS5
QUERY_MAX_CHANGED = 20_000  # more changed chunks than this: FTS5 (tokenizing them costs more)
_READ_AT_ONCE = 20_000  # chunks read in one transaction while a run writes
_warned: set[str] = set()


def _say(reason: str) -> None:
    """Why a search went to FTS5, once a process per reason."""
    if reason not in _warned:
        _warned.add(reason)
        log.info("lexical postings not used (%s): searching FTS5", reason)


# ----- the file ---------------------------------------------------------------------------


@dataclass(frozen=True)
class _Chunk:
    """A chunk changed since the base, as it is now."""

    counts: tuple[Counter[str], ...]  # each column's terms and their hits
    length: int  # tokens over all columns
    terms: frozenset[str]


class _Slices:
    """One array of postings in the file, read a term's slice at a time (``os.pread``). Not a
    memory map: a map's pages stay resident once read, and a server's queries touched 200 MB
    of them at 100,000 notes (its peak RSS 530 → 730 MB); the kernel keeps them cached anyway.
    Read through the file opened at load: a file renamed over it later is not this base."""

    def __init__(self, file: _File, offset: int, dtype: np.dtype[Any], count: int):
        self.file, self.offset, self.dtype, self.count = file, offset, dtype, count
        if offset + count * dtype.itemsize > file.size:
            raise ValueError("the postings file is shorter than its header says")

    def __len__(self) -> int:
        return self.count

    def __getitem__(self, span: slice) -> np.ndarray:
        import numpy as np

        start, stop = max(0, span.start), min(self.count, span.stop)
        if stop <= start:
            return np.zeros(0, self.dtype)
        size = self.dtype.itemsize
        data = os.pread(self.file.fd, (stop - start) * size, self.offset + start * size)
        if len(data) != (stop - start) * size:
            raise ValueError("the postings file ended early")
        return np.frombuffer(data, dtype=self.dtype)


class _File:
    """An open postings file, closed with the last base reading it."""

    def __init__(self, path: Path):
        self.fd = os.open(path, os.O_RDONLY)
        self.size = os.fstat(self.fd).st_size

    def __del__(self) -> None:
        if getattr(self, "fd", None) is not None:
            os.close(self.fd)


@dataclass(frozen=True)
class Base:
    """A postings file, memory-mapped."""

    path: Path
    header: dict[str, Any]
    doc_ids: np.ndarray  # int64, ascending: the chunks of the base
    doc_len: np.ndarray  # int32: each chunk's tokens over all columns (FTS5's docsize)
    term_bytes: np.ndarray  # uint8: the terms' UTF-8, ascending by bytes, end to end
    term_at: np.ndarray  # int64[terms + 1]: where each term starts in term_bytes
    starts: tuple[np.ndarray, ...]  # per column, int64[terms + 1]: where a term's postings start
    chunk_count: np.ndarray  # int32[terms]: the chunks holding each term in any column (fts5vocab's doc)
    docs: tuple[_Slices, ...]  # per column, int32: positions in doc_ids
    hits: tuple[_Slices, ...]  # per column, uint8: the term's hits in that column
    excluded: frozenset[str]  # terms whose counts differ from FTS5's: never answered here
    # zeroed score arrays a chunk, kept between searches: a fresh one's pages fault in at
    # first touch (~5 ms at 500,000 chunks); a search takes one, zeroes what it touched, puts it back
    buffers: list[np.ndarray] = field(default_factory=list, compare=False, repr=False)
    # chunks changed since, as tokenized, by (chunk id, the last log position naming it): a
    # server's new snapshot after a pass tokenizes only the chunks changed since the last
    changed: dict[tuple[int, int], _Chunk] = field(default_factory=dict, compare=False, repr=False)

    @property
    def nonce(self) -> str:
        return str(self.header["nonce"])

    def answers(self, term: str) -> bool:
        """Whether the base answers for ``term`` as FTS5 would: a term FTS5 tokenized otherwise at
        the build (``excluded``), or one SQLite's own tokenizer does not keep as one token of
        itself, is FTS5's to count and score."""
        return term not in self.excluded and _one_token(term) == term

    def term(self, term: str) -> int | None:
        """The term's number, or None when no chunk of the base holds it."""
        key = term.encode("utf-8", "surrogatepass")
        low, high = 0, len(self.term_at) - 1
        at, blob = self.term_at, self.term_bytes
        while low < high:
            mid = (low + high) // 2
            if blob[at[mid] : at[mid + 1]].tobytes() < key:
                low = mid + 1
            else:
                high = mid
        if low < len(at) - 1 and blob[at[low] : at[low + 1]].tobytes() == key:
            return low
        return None


def load(directory: Path) -> Base | None:
    """The postings file in ``directory``, memory-mapped; None when absent or not one. The file
    is open twice while the base lives: once to read the postings (``_File``) and once by the one
    map of it that every mapped array views (``mmap`` keeps a descriptor of its own; an
    ``np.memmap`` per array held one each, 9 a base)."""
    import mmap  # here: a no-op `brain index` reads no base

    import numpy as np

    path = directory / FILE
    try:
        file = _File(path)
        with os.fdopen(os.dup(file.fd), "rb") as f:
            header = parse_header(f, file.size)
        if header is None:
            return None
        whole = mmap.mmap(file.fd, 0, access=mmap.ACCESS_READ)  # ValueError for an empty file
        arrays: dict[str, np.ndarray] = {}
        slices: dict[str, _Slices] = {}
        for name, (offset, dtype, count) in header["arrays"].items():
            kind = np.dtype(dtype)
            if name.startswith(("docs_", "hits_")):
                slices[name] = _Slices(file, offset, kind, count)
            elif not count:
                arrays[name] = np.zeros(0, kind)
            else:  # read-only, as the map is; ValueError past the file's end. The last array
                # dropped unmaps it and closes its descriptor.
                arrays[name] = np.frombuffer(whole, dtype=kind, count=count, offset=offset)
                _read_ahead(whole, offset, count * kind.itemsize)
        base = Base(
            path,
            header,
            arrays["doc_ids"],
            arrays["doc_len"],
            arrays["term_bytes"],
            arrays["term_at"],
            tuple(arrays[f"start_{c}"] for c in COLUMNS),
            arrays["chunk_count"],
            tuple(slices[f"docs_{c}"] for c in COLUMNS),
            tuple(slices[f"hits_{c}"] for c in COLUMNS),
            frozenset(header.get("excluded", [])),
        )
    except (OSError, ValueError, KeyError, TypeError, AttributeError, OverflowError, UnicodeDecodeError):
        return None  # not a file this brain wrote whole: FTS5 answers
    terms = len(base.term_at) - 1
    if (
        terms < 0
        or any(len(s) != terms + 1 for s in base.starts)
        or len(base.chunk_count) != terms
        or len(base.doc_len) != len(base.doc_ids)
    ):
        return None
    if any(int(s[-1]) != len(d) or len(d) != len(h) for s, d, h in zip(base.starts, base.docs, base.hits)):
        return None
    return base


def _read_ahead(whole: Any, offset: int, length: int) -> None:
    """Ask the kernel to read a mapped array in now, in one sequential pass. A search touches
    these arrays all over (a chunk's length for each of 100,000 matches, a binary search over
    the terms): read page by page from a cold disk that was 89 / 201 ms p50 / p95 a first search
    at 100,000 notes, 43 / 56 with this (FTS5's: 110 / 130). Warm, it costs nothing measurable.
    Only the array's pages: the postings (``_Slices``) are read, not mapped."""
    import mmap

    flag = getattr(mmap, "MADV_WILLNEED", None)
    advise = getattr(whole, "madvise", None)
    if advise is None or flag is None:  # not on Windows
        return
    start = offset - offset % mmap.PAGESIZE  # madvise's start is a page's
    try:
        advise(flag, start, length + offset - start)
    except (OSError, ValueError):
        pass


def _write_file(directory: Path, header: dict[str, Any], arrays: dict[str, np.ndarray]) -> Path:
    """The file at a temporary name, flushed to disk; ``install`` renames it into place."""
    import numpy as np

    names = list(arrays)
    offsets: dict[str, list[Any]] = {}
    # The header holds the arrays' offsets, which depend on its own length: reserve room.
    header = {**header, "arrays": {n: [0, arrays[n].dtype.str, len(arrays[n])] for n in names}}
    room = len(json.dumps(header).encode()) + 64 * len(names) + 64
    at = len(MAGIC) + 8 + room
    for name in names:
        at = (at + 7) // 8 * 8
        offsets[name] = [at, arrays[name].dtype.str, len(arrays[name])]
        at += arrays[name].nbytes
    header["arrays"] = offsets
    encoded = json.dumps(header).encode()
    assert len(encoded) <= room
    remove_orphans(directory, [FILE])
    tmp = temp_name(directory, FILE)
    try:
        # the vault's words: the owner's alone, as the notes are (not the umask's 0644)
        with os.fdopen(os.open(tmp, os.O_WRONLY | os.O_CREAT | os.O_EXCL, 0o600), "wb") as f:
            f.write(MAGIC + room.to_bytes(8, "little") + encoded.ljust(room))
            for name in names:
                f.seek(offsets[name][0])
                f.write(np.ascontiguousarray(arrays[name]).tobytes())
            f.flush()
            os.fsync(f.fileno())
    except BaseException:
        tmp.unlink(missing_ok=True)
        raise
    return tmp


def _rename_into_place(written: Written, directory: Path) -> None:
    os.replace(written.file, directory / FILE)


def install(store: IndexStore, written: Written) -> bool:
    """Put a written base in place and stamp it, in one write transaction (``IndexStore.
    install_postings``), when the postings are as they were when it was read and the index
    is the same file; else (a newer base stamped, the postings cleared, the index rebuilt
    beside and swapped in) remove it: False."""
    directory = store.directory

    def place() -> None:
        if store.database_inode() != written.index_inode:
            raise _Superseded
        _rename_into_place(written, directory)

    try:
        installed = store.install_postings(written.nonce, written.log_at, written.read_as, place)
    except _Superseded:
        installed = False
    except BaseException:  # refused (a newer brain upgraded the index): not left in its folder
        written.file.unlink(missing_ok=True)
        raise
    if not installed:
        written.file.unlink(missing_ok=True)
        log.info("lexical postings: the base built is not installed (the index changed otherwise meanwhile)")
        return False
    fsync_folder(directory)
    return True


class _Superseded(Exception):
    """The index file was replaced while the base was built."""


# ----- building ---------------------------------------------------------------------------


# ASCII bytes: letters and digits lowered, everything else a separator (unicode61 on ASCII).
_ASCII_WORDS = bytes(c if chr(c).isalnum() else 32 for c in range(128)).lower() + b" " * 128


def _column_tokens(text: str) -> list[bytes]:
    """unicode61 remove_diacritics 2's tokens, UTF-8, as ``recall/bm25.tokens`` mimics them; an
    ASCII text (most) split by a byte table, ~10 times faster than the regular expression."""
    from ..recall import bm25

    if text.isascii():
        return text.encode("ascii").translate(_ASCII_WORDS).split()
    return [t.encode("utf-8", "surrogatepass") for t in bm25.tokens(text)]


class _Column:
    """One column's postings as they are read, chunk by chunk: numbered terms and their hits,
    turned into arrays a batch at a time (millions of small Python objects otherwise)."""

    def __init__(self, number: Callable[[bytes], int]):
        self.number = number  # a term's number, shared by the columns; a new term takes the next
        self.ids: list[int] = []
        self.hits: list[int] = []
        self.per_chunk: list[int] = []
        self.parts: list[tuple[np.ndarray, np.ndarray]] = []

    def add(self, counts: Counter[bytes]) -> None:
        self.ids.extend(map(self.number, counts))
        self.hits.extend(counts.values())
        self.per_chunk.append(len(counts))

    def flush(self) -> None:
        import numpy as np

        hits = np.minimum(np.asarray(self.hits, dtype=np.int64), 65_535).astype(np.uint16)
        self.parts.append((np.asarray(self.ids, dtype=np.int32), hits))
        self.ids, self.hits = [], []


def build(store: IndexStore) -> bool:
    """Write a new base from the database's committed state, in this process, and stamp it;
    False (and no stamp) where there is nothing to build or it cannot be (another tokenizer,
    inside a transaction)."""
    if not buildable(store):
        return False
    written = write_base(store)
    if written is None:
        store.clear_postings()
        return False
    return install(store, written)  # only now does the database name the file: a kill before leaves it stale


class Reader:
    """A base's chunks as read so far, tokenized: their ids, lengths and each column's postings.

    The child of a large run reads the chunks as the run commits them (``read_committed``), on
    the CPU the run leaves spare, so that at the end only what came last is left to read; a
    first build at 100,000 notes otherwise waited ~25 s for its postings after its last write."""

    def __init__(self) -> None:
        # Numbered as first met, by a defaultdict's C lookup: a set of each batch's new terms and
        # a second lookup cost a quarter more (at 20,000 notes, 3.4 against 2.4 s CPU of 9).
        self.numbering: defaultdict[bytes, int] = defaultdict(itertools.count().__next__)
        self.columns = [_Column(self.numbering.__getitem__) for _ in COLUMNS]
        self.ids: list[int] = []
        self.lengths: list[int] = []
        self.log_at: int | None = None  # the log's position at the first read
        self._title: str | None = None
        self._title_counts: Counter[bytes] = Counter()

    def add(self, rows: list[tuple[int, str, str, str, int]]) -> None:
        """Chunks (``IndexStore.postings_source``'s rows) after those read before."""
        columns = self.columns
        for chunk_id, title, heading, text, length in rows:
            self.ids.append(chunk_id)
            self.lengths.append(length)
            if title != self._title:  # a note's chunks share its title
                self._title, self._title_counts = title, Counter(_column_tokens(title))
            columns[0].add(self._title_counts)
            columns[1].add(Counter(_column_tokens(heading)))
            columns[2].add(Counter(_column_tokens(text)))
        for column in columns:
            column.flush()

    @property
    def last(self) -> int:
        return self.ids[-1] if self.ids else 0

    def read_committed(self, store: IndexStore) -> None:
        """The chunks committed since the last read, each read in a short transaction (a long
        one would hold the writer's checkpoints back), tokenized after it."""
        while True:
            with store.postings_snapshot() as (log_at, _):
                if self.log_at is None:
                    self.log_at = log_at
                rows = store.postings_rows(self.last, _READ_AT_ONCE)
            if not rows:
                return
            self.add(rows)

    def still_holds(self, store: IndexStore) -> bool:
        """Whether every chunk read is as it was read, in ``store``'s present read transaction:
        none deleted or changed since (the log names every such change since ``log_at``), none
        missing. If not, the base is read again whole."""
        if not self.ids:
            return True
        assert self.log_at is not None
        return store.postings_unchanged(self.log_at, self.last, len(self.ids))


class Written(NamedTuple):
    """A base written at a temporary name, not stamped (``install``)."""

    nonce: str
    log_at: int  # the log position it was read at
    kept: int  # chunks read before the last read, as the run wrote them (``Reader``)
    file: Path  # where it was written
    read_as: tuple[str | None, str | None, str | None]  # ``IndexStore.postings_state`` as read
    index_inode: int | None  # the index file it was read from


def write_base(store: IndexStore, reader: Reader | None = None) -> Written | None:
    """Write a new postings file from the database's committed state, at a temporary name
    (``install`` puts it in place); None when the vault is past what the file can hold. ``reader``: the chunks read so far, kept where
    they are still as read."""
    import numpy as np

    # One read transaction: the chunks, their sizes, FTS5's counts and the log position agree.
    with store.postings_snapshot() as (log_at, last_chunk):
        if reader is None or not reader.still_holds(store):
            if reader is not None:
                log.info("lexical postings: chunks changed since they were read; reading them again")
            reader = Reader()
        kept = len(reader.ids)
        read_as = store.postings_state()
        index_id = read_as[2]
        index_inode = store.database_inode()
        for rows in store.postings_source(after=reader.last):
            reader.add(rows)
        vocab = store.fts_column_counts()
    columns, ids, lengths = reader.columns, reader.ids, reader.lengths
    numbers = dict(reader.numbering)  # looked up below: a missing term must not take a number
    reader.numbering.clear()
    ordered = sorted(numbers)  # by UTF-8 bytes: how ``Base.term`` looks a term up
    rank = np.empty(len(ordered), dtype=np.int32)
    rank[np.fromiter(map(numbers.__getitem__, ordered), dtype=np.int64, count=len(ordered))] = np.arange(
        len(ordered), dtype=np.int32
    )
    arrays: dict[str, np.ndarray] = {
        "doc_ids": np.asarray(ids, dtype=np.int64),
        "doc_len": np.asarray(lengths, dtype=np.int32),
        "term_bytes": np.frombuffer(b"".join(ordered), dtype=np.uint8),
        "term_at": np.concatenate([[0], np.cumsum([len(t) for t in ordered], dtype=np.int64)]).astype(np.int64),
    }
    if len(ordered) >= 1 << 24 or len(ids) >= 1 << 32:
        log.info("lexical postings not built: %d terms, %d chunks is past what the file holds", len(ordered), len(ids))
        return None
    # FTS5's own counts (fts5vocab): per column, each term's chunks and hits.
    excluded: set[bytes] = set()
    fts_docs = np.zeros((len(COLUMNS), len(ordered)), dtype=np.int64)
    fts_hits = np.zeros((len(COLUMNS), len(ordered)), dtype=np.int64)
    column_number = {name: c for c, name in enumerate(COLUMNS)}
    for term, column_name, doc, cnt in vocab:
        key = term.encode("utf-8", "surrogatepass")
        number = numbers.get(key)
        if number is None or column_name not in column_number:
            excluded.add(key)  # FTS5 holds it, the mimic never made it
            continue
        fts_docs[column_number[column_name], number] = doc
        fts_hits[column_number[column_name], number] = cnt
    fts_docs, fts_hits = fts_docs[:, np.argsort(rank)], fts_hits[:, np.argsort(rank)]  # by rank
    assert COLUMNS[-1] == "text"  # the largest column, last: the others' (term, chunk) pairs are looked up in it
    others: list[np.ndarray] = []  # the (term, chunk) pairs of the columns before the text, as term << 32 | chunk
    for c, column in enumerate(columns):
        term_rank = rank[np.concatenate([p[0] for p in column.parts])] if column.parts else np.zeros(0, np.int32)
        tf = np.concatenate([p[1] for p in column.parts]) if column.parts else np.zeros(0, np.uint16)
        column.parts = []
        counted = np.bincount(term_rank, minlength=len(ordered))
        total = np.bincount(term_rank, weights=tf, minlength=len(ordered)).astype(np.int64)
        # The mimic's counts against FTS5's: a term it tokenizes otherwise is left to FTS5, in
        # this column and so in every query naming it; so is one with more hits than a byte holds.
        wrong = (counted != fts_docs[c]) | (total != fts_hits[c])
        wrong[term_rank[tf > MAX_TF]] = True
        excluded.update(ordered[r] for r in np.flatnonzero(wrong))
        # One key a posting, sorted: the term, then the chunk (so each term's chunks in id
        # order), then its hits; an unstable sort of unique keys, ~5 times a stable argsort's speed.
        key = term_rank.astype(np.uint64) << np.uint64(40)
        key |= np.repeat(np.arange(len(ids), dtype=np.uint64), column.per_chunk) << np.uint64(8)
        key |= np.minimum(tf, MAX_TF).astype(np.uint64)
        del term_rank, tf
        key.sort()
        arrays[f"start_{COLUMNS[c]}"] = np.concatenate([[0], np.cumsum(counted)]).astype(np.int64)
        arrays[f"docs_{COLUMNS[c]}"] = ((key >> np.uint64(8)) & np.uint64(0xFFFFFFFF)).astype(np.int32)
        arrays[f"hits_{COLUMNS[c]}"] = (key & np.uint64(0xFF)).astype(np.uint8)
        if c < len(COLUMNS) - 1:
            others.append(key >> np.uint64(8))
        else:  # each term's chunks in any column: the text's, and the others' pairs the text lacks
            arrays["chunk_count"] = (counted + _pairs_missing_from(key, others, len(ordered))).astype(np.int32)
        del key
    nonce = secrets.token_hex(8)
    header = {
        "format": FORMAT,
        "nonce": nonce,
        "index_id": index_id,
        "tokenizer": TOKENIZER,
        "log_at": log_at,
        "last_chunk": last_chunk,
        "excluded": sorted(t.decode("utf-8", "surrogatepass") for t in excluded),
    }
    file = _write_file(store.directory, header, arrays)
    if excluded:
        log.info("lexical postings: %d terms tokenized otherwise than FTS5 left to it", len(excluded))
    return Written(nonce, log_at, kept, file, read_as, index_inode)


def _pairs_missing_from(text_keys: np.ndarray, others: list[np.ndarray], terms: int) -> np.ndarray:
    """For each term, the chunks that hold it in another column but not in the text: the
    distinct (term << 32 | chunk) pairs of ``others`` absent from the sorted text keys (the pair
    << 8, with its hits in the low byte)."""
    import numpy as np

    pairs = sorted_distinct(np.concatenate(others)) if others else np.zeros(0, np.uint64)
    if not len(text_keys):
        return np.bincount((pairs >> np.uint64(32)).astype(np.int64), minlength=terms)
    at = np.minimum(np.searchsorted(text_keys, pairs << np.uint64(8)), len(text_keys) - 1)
    absent = pairs[(text_keys[at] >> np.uint64(8)) != pairs]
    return np.bincount((absent >> np.uint64(32)).astype(np.int64), minlength=terms)


# ----- searching --------------------------------------------------------------------------

# One base per index folder, shared by the stores that read it (a server opens a snapshot
# after every pass): loaded again only when the file is replaced. The one before is kept
# beside it: a base is put in place by a process in the background, and a server's snapshot
# opened before reads that one until its next pass opens a snapshot that names the new.
# Each base holds its file open: the folders last searched are kept, not every folder the
# process ever searched (a test run's thousands of indexes held as many files open).
_bases: dict[Path, tuple[tuple[int, int], Base | None]] = {}
_before: dict[Path, Base] = {}
_FOLDERS_KEPT = 4


def _base(store: IndexStore) -> Base | None:
    """The base in this store's folder, or None."""
    path = store.directory / FILE
    try:
        stat = path.stat()
    except OSError:
        _bases.pop(path, None)
        _before.pop(path, None)
        return None
    identity = (stat.st_ino, stat.st_mtime_ns)
    known = _bases.pop(path, None)  # put back last: the folder searched most recently
    if known is not None and known[0] == identity:
        _bases[path] = known
        return known[1]
    base = load(store.directory)
    if known is not None and known[1] is not None:
        _before[path] = known[1]
    _bases[path] = (identity, base)
    for folder in list(_bases)[:-_FOLDERS_KEPT]:  # dicts keep their order: the oldest first
        _bases.pop(folder)
        _before.pop(folder, None)
    return base


def _stamped_base(store: IndexStore) -> Base | None:
    """The base this store's state names: the file in place or, for a snapshot opened before
    it was replaced, the one before; None (and why, once) when neither."""
    base = _base(store)
    if base is None:
        _say("no postings file, or not one this brain reads")
        return None
    if stamped(store, base.header):
        return base
    before = _before.get(store.directory / FILE)
    if before is not None and stamped(store, before.header):
        return before
    _say("the postings file is not this index's state (stale, or the index restored)")
    return None


@dataclass(frozen=True)
class _State:
    """What a query needs beside the base, for one state of the database."""

    base: Base
    dropped: np.ndarray  # positions in the base of chunks changed since
    changed: dict[int, _Chunk]  # present chunks changed since the base
    changed_count: Counter[str]  # each term's chunks among ``changed``


_CHUNKS_KEPT = 50_000  # changed chunks a base keeps tokenized


def _state(store: IndexStore) -> _State | None:
    import numpy as np

    cache = store._unchanged_cache()
    known = cache.get("postings_state")
    if isinstance(known, _State):  # made for this very state of the database, its base stamped then
        return known
    base = _stamped_base(store)
    if base is None:
        return None
    changed = store.postings_changes(base.header["log_at"], base.header["last_chunk"])
    if len(changed) > QUERY_MAX_CHANGED:
        _say(f"over {QUERY_MAX_CHANGED} chunks changed since the postings were built")
        return None
    ids = np.asarray(sorted(changed), dtype=np.int64)
    where = np.searchsorted(base.doc_ids, ids)
    inside = where < len(base.doc_ids)
    dropped = where[inside][base.doc_ids[where[inside]] == ids[inside]]
    # The chunks tokenized for this state, taken from the base's cache or tokenized now. A local
    # dict: a server's other thread may clear the cache meanwhile (a chunk left out would be
    # dropped from the base and never scored).
    kept = base.changed
    if len(kept) > _CHUNKS_KEPT:
        kept.clear()
    now: dict[int, _Chunk] = {}
    missing: list[int] = []
    for chunk_id, seq in changed.items():
        chunk = kept.get((chunk_id, seq))
        if chunk is None:
            missing.append(chunk_id)
        else:
            now[chunk_id] = chunk
    for chunk_id, *values in store.fts_source_rows(missing):  # a deleted chunk has no row: nothing to score
        words = [_exact_tokens(value) for value in values]
        counts = tuple(Counter(w) for w in words)
        chunk = _Chunk(counts, sum(len(w) for w in words), frozenset(t for c in counts for t in c))
        kept[(chunk_id, changed[chunk_id])] = now[chunk_id] = chunk
    state = _State(base, dropped, now, Counter(t for chunk in now.values() for t in chunk.terms))
    cache["postings_state"] = state
    return state


def _exact_tokens(text: str) -> list[str]:
    """FTS5's very tokens of a column: an ASCII text split as unicode61 splits ASCII (runs of
    letters and digits, lowered); any other asked of SQLite's own tokenizer."""
    if text.isascii():
        return text.encode("ascii").translate(_ASCII_WORDS).decode("ascii").split()
    return index_words(text, "unicode61 remove_diacritics 2")


def exact_weights(weights: Sequence[float]) -> bool:
    """Whether Σ weight × hits equals FTS5's sum of a weight per hit, to the last bit."""
    return all(math.isfinite(w) and abs(w) < 2**20 and float(w * 1024).is_integer() for w in weights)


def chunk_counts(store: IndexStore, terms: Sequence[str]) -> dict[str, int] | None:
    """FTS5's count of the chunks holding each term (fts5vocab's ``doc``), from the base and the
    chunks changed since it; None where FTS5 must count. FTS5 counts a word by reading its
    whole list of chunks: a few milliseconds a query at 100,000 notes for the common words that
    the lexical lane then leaves out (``lexical.informative_terms``)."""
    try:
        state = _state(store)
        if state is None:
            return None
        base = state.base
        out: dict[str, int] = {}
        for term in terms:
            if not base.answers(term):
                return None
            count = state.changed_count.get(term, 0)
            number = base.term(term)
            if number is not None:
                count += int(base.chunk_count[number])
                if len(state.dropped):
                    count -= _dropped_holding(base, number, state.dropped)
            out[term] = count
        return out
    except (IndexError, ValueError, OSError) as exc:  # a file damaged past what load() checks
        _say(f"the postings file is damaged: {type(exc).__name__}: {exc}")
        return None


def _dropped_holding(base: Base, number: int, dropped: np.ndarray) -> int:
    """How many of the chunks changed since the base (``dropped``: their positions, ascending)
    held term ``number`` in some column of the base."""
    import numpy as np

    held = []
    for c in range(len(COLUMNS)):
        start, end = int(base.starts[c][number]), int(base.starts[c][number + 1])
        if end > start:
            docs = base.docs[c][start:end]
            at = np.minimum(np.searchsorted(docs, dropped), len(docs) - 1)
            held.append(dropped[docs[at] == dropped])
    return len(sorted_distinct(np.concatenate(held))) if held else 0


def search(
    store: IndexStore, terms: Sequence[str], weights: Sequence[float], limit: int
) -> list[tuple[int, float]] | None:
    """``fts_search`` of ``"t1" OR "t2" OR …`` from the postings: (chunk id, BM25 score, higher
    is better), best first, equal scores by chunk id; None where FTS5 must answer."""
    try:
        return _search(store, terms, weights, limit)
    except (IndexError, ValueError, OSError) as exc:  # a file damaged past what load() checks
        _say(f"the postings file is damaged: {type(exc).__name__}: {exc}")
        return None


def _search(
    store: IndexStore, terms: Sequence[str], weights: Sequence[float], limit: int
) -> list[tuple[int, float]] | None:
    import numpy as np

    if not terms or limit <= 0:
        return None
    column_weights = [float(weights[c]) if c < len(weights) else 1.0 for c in range(len(COLUMNS))]
    if not exact_weights(column_weights):
        _say("column weights that FTS5 does not sum exactly as a product")
        return None
    state = _state(store)
    if state is None:
        return None
    base = state.base
    for term in terms:
        if not base.answers(term):
            _say("a query term the postings may hold otherwise than FTS5")
            return None
    rows, tokens = store.fts_totals()
    if rows <= 0:
        return []
    average = tokens / rows  # as fts5_aux.c: (double)nToken / (double)nRow
    held = store.term_chunk_counts(list(terms))
    idfs = []
    for term in terms:
        idf = math.log((rows - held[term] + 0.5) / (held[term] + 0.5))
        idfs.append(idf if idf > 0.0 else 1e-6)
    # The base: each term's chunks, its weighted frequency, its share of the score.
    try:
        score = base.buffers.pop()
    except IndexError:
        score = np.zeros(len(base.doc_ids), dtype=np.float64)
    # With every weight above 0 a matched chunk scores above 0 (IDF ≥ 1e-6): no other mark needed.
    matched = None if min(column_weights) > 0 else np.zeros(len(base.doc_ids), dtype=bool)
    scratch: np.ndarray | None = None  # a term's weighted frequency a chunk, for terms in several columns
    for term, idf in zip(terms, idfs):
        number = base.term(term)
        if number is None:
            continue
        held_in = [c for c in range(len(COLUMNS)) if base.starts[c][number + 1] > base.starts[c][number]]
        spans = {c: slice(int(base.starts[c][number]), int(base.starts[c][number + 1])) for c in held_in}
        if len(held_in) == 1:  # most terms: the text alone
            c = held_in[0]
            docs = base.docs[c][spans[c]]
            frequency = column_weights[c] * base.hits[c][spans[c]].astype(np.float64)
        else:  # Σ weight × hits, column by column (a chunk once per column)
            if scratch is None:
                scratch = np.zeros(len(base.doc_ids), dtype=np.float64)
            for c in held_in:
                scratch[base.docs[c][spans[c]]] += column_weights[c] * base.hits[c][spans[c]].astype(np.float64)
            docs = sorted_distinct(np.concatenate([base.docs[c][spans[c]] for c in held_in]))
            frequency = scratch[docs]
            scratch[docs] = 0.0
        length = base.doc_len[docs].astype(np.float64)
        score[docs] += idf * ((frequency * (K1 + 1.0)) / (frequency + K1 * (1 - B + B * length / average)))
        if matched is not None:
            matched[docs] = True
    score[state.dropped] = 0.0
    if matched is None:
        found = np.flatnonzero(score)
    else:
        matched[state.dropped] = False
        found = np.flatnonzero(matched)
    scores = score[found]
    score[found] = 0.0  # every chunk touched is found, or dropped and zeroed above
    base.buffers.append(score)
    if len(scores) > 8 * limit:
        # The best `limit` of every eighth are real scores: the best `limit` of all score at
        # least their last. Only the chunks above it are ranked (of 110,000: ~2,000).
        floor = np.partition(scores[::8], len(scores[::8]) - limit)[len(scores[::8]) - limit]
        above = np.flatnonzero(scores >= floor)
        found, scores = found[above], scores[above]
    ids = base.doc_ids[found]
    # The chunks changed since the base, as they are now.
    extra_ids, extra_scores = [], []
    for chunk_id, chunk in state.changed.items():
        if chunk.terms.isdisjoint(terms):
            continue
        counts, length_now = chunk.counts, float(chunk.length)
        total = 0.0
        for term, idf in zip(terms, idfs):
            frequency_now = float(sum(w * column.get(term, 0) for w, column in zip(column_weights, counts)))
            total += idf * ((frequency_now * (K1 + 1.0)) / (frequency_now + K1 * (1 - B + B * length_now / average)))
        extra_ids.append(chunk_id)
        extra_scores.append(total)
    if extra_ids:
        ids = np.concatenate([ids, np.asarray(extra_ids, dtype=np.int64)])
        scores = np.concatenate([scores, np.asarray(extra_scores, dtype=np.float64)])
    if len(scores) > limit:  # the best `limit`, and every chunk tied with the last of them
        edge = np.partition(-scores, limit - 1)[limit - 1]
        keep = -scores <= edge
        ids, scores = ids[keep], scores[keep]
    order = np.lexsort((ids, -scores))[:limit]
    return [(int(ids[i]), float(scores[i])) for i in order]


_single: dict[str, str | None] = {}


def _one_token(term: str) -> str | None:
    """The term's one token under SQLite's own tokenizer, or None when it is not one token."""
    if term not in _single:
        if len(_single) > 10_000:
            _single.clear()
        words = index_words(term, "unicode61 remove_diacritics 2")
        _single[term] = words[0] if len(words) == 1 else None
    return _single[term]
