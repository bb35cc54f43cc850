"""Whether an index pass is due to build a new base of the lexical postings, apart from their
build and search code (postings.py): told from the file's header and the database's meta, so a
`brain index` with nothing to do imports neither that code nor numpy. ``Refresh`` is the pass's
side of a build, and ``_Child`` the builder's process (postings_child.py, which imports
postings.py), started only when one is due. postings.py says what the file holds and how a
query reads it.
"""

from __future__ import annotations

import json
import logging
import os
import sqlite3
from collections.abc import Iterator
from contextlib import contextmanager
from pathlib import Path
from typing import IO, TYPE_CHECKING, Any

from ..child_process import python_module_command
from . import background

if TYPE_CHECKING:
    import subprocess

    from .store import IndexStore

log = logging.getLogger(__name__)

FILE = "postings.bin"
MAGIC = b"brain-postings\x00\x01"  # 16 bytes
FORMAT = 2  # 2: each term's chunks over all columns (``Base.chunk_count``)
TOKENIZER = "unicode61"  # the only one the mimic follows; trigram indexes stay on FTS5
STAMP = "postings_stamp"  # the meta key naming the base the database's state is: its nonce
REBUILD_SHARE = 0.005  # a new base once the chunks changed since exceed this share of it
REBUILD_MIN = 1_000  # ... and this many (each new process tokenizes them again: ~0.1 s a thousand)
BUILD = background.POSTINGS


def read_header(directory: Path) -> dict[str, Any] | None:
    """The header of the postings file in ``directory`` (no numpy: what `brain index` reads
    at its end to tell whether the base is still good); None when absent or not one."""
    try:
        with open(directory / FILE, "rb") as f:
            return parse_header(f, os.fstat(f.fileno()).st_size)
    except OSError:
        return None


def parse_header(f: Any, file_size: int) -> dict[str, Any] | None:
    """The header of an open postings file, when it is one this brain wrote whole: the magic,
    this format, every array inside the file."""
    if f.read(len(MAGIC)) != MAGIC:
        return None
    size = int.from_bytes(f.read(8), "little")
    if size > file_size:  # a damaged length: reading it would ask for exabytes
        return None
    try:
        header = json.loads(f.read(size).decode("utf-8"))
        if not isinstance(header, dict) or header.get("format") != FORMAT:
            return None
        for offset, dtype, count in header["arrays"].values():  # dtype as numpy writes it: "<i8"
            if offset < 0 or count < 0 or offset + int(dtype[2:]) * count > file_size:
                return None
    except (ValueError, KeyError, TypeError, AttributeError, UnicodeDecodeError):
        return None
    return header


def stamped(store: IndexStore, header: dict[str, Any]) -> bool:
    """Whether the database names this file: its stamp, its index, its tokenizer."""
    return (
        store.get_meta(STAMP) == header.get("nonce")
        and header.get("index_id") == store.index_id()
        and header.get("tokenizer") == TOKENIZER == store.fts_tokenizer()
    )


def clear(store: IndexStore) -> None:
    """No base: the stamp and the log dropped (nothing reads a file without its stamp)."""
    if not (store.readonly or store.in_transaction):
        store.clear_postings()


def wanted(store: IndexStore, min_chunks: int | None) -> bool:
    """Whether to build a new base: none yet, or the changes since outgrew it; none at all
    below ``min_chunks`` chunks, or with ``min_chunks`` None (postings off), where any is
    cleared."""
    if store.readonly or store.in_transaction:
        return False
    rows = store.fts_row_count()
    if min_chunks is None or rows < min_chunks or store.fts_tokenizer() != TOKENIZER:
        clear(store)
        (store.directory / FILE).unlink(missing_ok=True)
        return False
    header = read_header(store.directory)  # not the arrays: a no-op `brain index` imports no numpy
    if header is not None and stamped(store, header):
        changed = store.postings_change_count(header["log_at"], header["last_chunk"])
        if changed <= max(REBUILD_MIN, REBUILD_SHARE * header["arrays"]["doc_ids"][2]):
            return False
    return True


def buildable(store: IndexStore) -> bool:
    """Whether a base can be built now: outside a transaction, on a writable index, of the
    tokenizer the postings follow (another: none, and the stamp and log dropped)."""
    if store.in_transaction or store.readonly:
        return False
    if store.fts_tokenizer() != TOKENIZER:
        store.clear_postings()
        return False
    return True


class _Child:
    """The child process writing a base (``postings_child.py``, as ``child_process`` starts
    it), which puts it in place and stamps it itself (``install``). An index pass builds a base
    this way: the build's Python loops would hold the lock every query thread of a server needs
    for most of a minute at 100,000 notes, and the memory they took (a peak of 2.6 GB there,
    155 MB of it kept by this process after a build at 20,000 notes) goes back with the child.

    Once a pass's chunks are written, the child is started in the background: the pass does
    not wait for it (at 100,000 notes a base takes ~50 s, every few hundred saves; meanwhile
    queries read the base before and its log, which is still exact). It outlives the pass (its
    own session) and says why it failed, if it does, for the next pass to report; one builder at
    a time (``background``).

    ``early``: a large first build's, started before the run writes and waited for (``finish``):
    it reads the chunks as they are committed (told ``more`` after each commit) and writes the
    base once told ``go`` (``Refresh``); the end of its input without ``go`` (the run stopped
    or killed) ends it without writing."""

    def __init__(self, store: IndexStore, process: subprocess.Popen[bytes], errors: IO[bytes] | None):
        self.store, self.process, self.errors = store, process, errors
        self.kept = 0  # chunks it read while the run wrote them

    @property
    def early(self) -> bool:
        return self.errors is not None

    @classmethod
    def start(cls, store: IndexStore, *, early: bool = False) -> _Child | None:
        """The child started, or None where no base can be built now (``buildable``) or
        another process is building one."""
        if not buildable(store):
            return None
        if early:
            import subprocess  # here: a pass that starts no builder (nothing due) imports none
            import tempfile

            command = [*python_module_command(BUILD.module), str(store.directory), "--early"]
            errors = tempfile.TemporaryFile()  # noqa: SIM115 (closed by stop); not a pipe: a child that logs much never waits on us
            try:
                process = subprocess.Popen(command, stdin=subprocess.PIPE, stdout=subprocess.PIPE, stderr=errors)
            except BaseException:
                errors.close()
                raise
            return cls(store, process, errors)
        started = background.start(BUILD, store.directory)
        return None if started is None else cls(store, started, None)

    def tell(self, word: bytes) -> None:
        """A line to an early child (``more``, ``go``). One that died cannot be told: its exit
        status says why at ``finish``."""
        if self.process.stdin is None:
            return
        try:
            self.process.stdin.write(word + b"\n")
            self.process.stdin.flush()
        except (BrokenPipeError, ValueError):
            pass

    def finish(self) -> bool:
        """An early child waited for (False, and a warning, if it failed); one in the
        background left to finish on its own."""
        if not self.early:
            log.info("lexical postings: a new base is being built in the background (process %d)", self.process.pid)
            return True
        assert self.errors is not None
        try:
            output, _ = self.process.communicate()
            self.errors.seek(0)
            stderr = self.errors.read()
        finally:
            self.stop()
        try:
            if self.process.returncode != 0:
                raise ValueError(f"it exited with status {self.process.returncode}: {_last_line(stderr)}")
            answer = json.loads(output)
            if answer is None:  # past what the file can hold
                return False
            self.kept = int(answer.get("kept", 0))
            if not answer["installed"]:
                return False
        except (ValueError, KeyError, TypeError) as exc:
            log.warning("lexical postings not built (the process building them failed: %s): BM25 searches FTS5", exc)
            return False
        if self.kept:
            log.info("lexical postings built, %d chunks of them read as the run wrote them", self.kept)
        return True

    def stop(self) -> None:
        """The child gone (killed if still running) and its streams closed."""
        if self.process.poll() is None:
            self.process.kill()
        self.process.wait()
        for stream in (self.process.stdin, self.process.stdout):
            if stream is not None:
                try:
                    stream.close()
                except BrokenPipeError:  # a line still buffered for a child gone
                    pass
        if self.errors is not None:
            self.errors.close()


def _last_line(data: bytes) -> str:
    lines = data.decode("utf-8", "replace").strip().splitlines()
    return lines[-1] if lines else "no message"


EARLY_FROM = 10_000  # notes a first build reads from which its child reads the chunks as they are written
_NOT_REBUILT = "lexical postings not rebuilt (%s): BM25 searches FTS5 until a later index pass"


def _not_rebuilt(store: IndexStore, vault: Path, exc: BaseException) -> None:
    """Say why the postings were not rebuilt: a table the index lacks fails every later pass
    the same way, so that names what mends it, not a later pass."""
    lacking = None
    if isinstance(exc, sqlite3.Error):
        try:
            lacking = store.missing_tables_message(vault)
        except sqlite3.Error:
            pass
    if lacking is None:
        log.warning(_NOT_REBUILT, exc)
    else:
        log.warning("lexical postings not rebuilt: %s", lacking)


class Refresh:
    """A new base for an index pass (``refreshing``), built by a child process beside the pass.

    Once the pass's chunks are all written (``chunks_written``) the child starts in the
    background, and the pass never waits for it (``_Child``). In a large first build it starts
    before the first write and reads the chunks as they are committed (``committed``), on the
    CPU the writing leaves spare, and the pass waits for it at its end: the first queries then
    find the base."""

    def __init__(self, store: IndexStore, vault: Path):
        self.store = store
        self.vault = vault  # named in what mends a failure (``_not_rebuilt``)
        self.child: _Child | None = None
        self.early = False
        self.written = False

    def start_early(self) -> None:
        from .. import config

        if config.lexical_postings_min_chunks() is not None:
            self.child = _Child.start(self.store, early=True)
            self.early = self.child is not None

    def committed(self) -> None:
        """The pass committed chunks: an early child reads them."""
        if self.early and self.child is not None:
            self.child.tell(b"more")

    def chunks_written(self) -> None:
        """Every chunk of the pass is written: a base if one is due (``wanted``), its child
        started now or, started early, told to read the rest and write it."""
        from .. import config

        self.written = True
        try:
            background.report_failure(BUILD, self.store.directory)
            due = wanted(self.store, config.lexical_postings_min_chunks())
            if self.early and self.child is not None:
                if due:
                    self.child.tell(b"go")
                else:
                    self.stop()
            elif due:
                self.child = _Child.start(self.store)
        except (OSError, sqlite3.Error, ValueError) as exc:
            self.stop()
            _not_rebuilt(self.store, self.vault, exc)

    def finish(self) -> None:
        if not self.written:
            self.chunks_written()
        if self.child is not None:
            self.child.finish()

    def stop(self) -> None:
        if self.child is not None:
            self.child.stop()
            self.child = None


@contextmanager
def refreshing(store: IndexStore, vault: Path, notes_to_read: int = 0) -> Iterator[Refresh]:
    """A new base when one is wanted, for `brain index` or a serve pass (``Refresh``): early
    when it reads ``EARLY_FROM`` notes or more into an index with no chunks. An error in the
    block stops the child. A failure of the build is only logged: BM25 then searches FTS5, as
    it would without postings, until a later pass builds them."""
    refresh = Refresh(store, vault)
    try:
        if notes_to_read >= EARLY_FROM and not store.has_chunks():
            refresh.start_early()
    except (OSError, sqlite3.Error, ValueError) as exc:
        _not_rebuilt(store, vault, exc)
    try:
        yield refresh
    except BaseException:
        refresh.stop()
        raise
    try:
        refresh.finish()
    except (OSError, sqlite3.Error, ValueError) as exc:
        refresh.stop()
        _not_rebuilt(store, vault, exc)
