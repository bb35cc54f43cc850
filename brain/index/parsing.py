"""Parsing and chunking the notes an index run reads: in this process, or, when there are
many, in worker processes beside it.

Parsing is pure Python and CPU-bound. In workers it runs while the main process embeds and
writes SQLite, instead of between its batches (bench/scale.py measures a first build both
ways). A small run never starts workers: their start-up (a fresh interpreter that imports
the parser) would cost more than it saves. Results come back in the order the changes went
in, so an index built either way is the same, ids included.

The workers are plain ``python`` processes running this module (``child_process.py``) fed batches over a pipe,
not ``multiprocessing``: a forked worker would inherit this process's SQLite connections and
a model's threads, and a spawned one imports the caller's main script (which, without its
``if __name__ == "__main__"`` guard, starts indexing again). A worker that fails costs only
its batch, which is then parsed here: never worse than no workers.

A note whose parse raises (a bug of brain's: no note should) costs only itself, here or in a
worker: it comes back as a ``ParseFailed`` naming the exception, which the run skips and warns
about, and the rest of the batch and of the run goes on.
"""

from __future__ import annotations

import logging
import pickle
import struct
import subprocess
import sys
import threading
from collections import deque
from collections.abc import Iterable, Iterator
from concurrent.futures import Future, ThreadPoolExecutor
from dataclasses import dataclass
from typing import IO, Any, Generic, TypeVar

from .. import config
from ..child_process import python_module_command, write_all
from ..chunking import Chunk, chunk_note, is_drawing, without_drawing
from ..errors import bug_summary
from ..links import Link
from ..notes import Note, parse_note
from .version_text import chunk_dictionary, compress

log = logging.getLogger("brain")

PARALLEL_FROM = 2_000  # notes to parse before workers pay for their start-up
NOTES_PER_TASK = 64
# Parsing runs ahead of the writes: while the main process embeds and writes a batch (a first
# build's is 4,096 chunks, ~800 notes), the workers parse the next. 4 tasks (256 notes) ahead
# left a worker idle most of each write: at 20,000 notes the main process waited 10 s on it.
# The lead is bounded by tasks and by the bytes of the notes in flight.
TASKS_AHEAD = 24  # per worker
BYTES_AHEAD = 64 * 1024 * 1024

WORKER = python_module_command("brain.index.parsing")  # a worker process's command line
K = TypeVar("K")
# (vault-relative path, bytes, mtime in seconds, BRAIN_LINK_FENCES, chunking strategy)
Work = tuple[str, bytes, float, frozenset[str], str]
# (the note, its body left out: its chunks hold it; its chunks; its bytes as history keeps
# them: compressed against those chunks' texts)
Parsed = tuple[Note, list[Chunk], bytes]
# A parse as a worker sends it: plain tuples (``_to_wire``). Unpickled in this process while it
# holds the GIL, the dataclasses cost ~130 µs a note (13 s of a 100,000-note first build), half
# of it the body no one here reads; these tuples, with the objects rebuilt from them, ~27 µs.
LinkWire = tuple[str, str, str | None, str | None, int]
NoteWire = tuple[str, str, list[str], list[str], str, dict[str, Any], list[LinkWire], str, list[str]]
Wire = tuple[NoteWire, list[tuple[int, tuple[str, ...], str]], bytes]


@dataclass(frozen=True)
class ParseFailed:
    """A note whose parse or chunking raised: ``error`` names the exception (``bug_summary``)."""

    error: str  # a worker sends this string alone


def _parse_one(item: Work) -> Parsed | ParseFailed:
    try:
        return parse_and_chunk(*item)
    except MemoryError:  # the process's, not the note's: not one note to skip
        raise
    except Exception as exc:  # noqa: BLE001 - a bug must cost its note, not a run of 100,000
        return ParseFailed(bug_summary(exc))


def parse_and_chunk(
    path: str,
    data: bytes,
    mtime: float,
    link_fences: frozenset[str] = frozenset(),
    strategy: str = config.DEFAULT_CHUNKING,
) -> Parsed:
    """One note's parse and chunks (its title alone when it has no body: still findable), and
    its bytes compressed for its version (``version_text.py``): here, so that workers do it."""
    note = parse_note(path, data, mtime, link_fences)
    body = without_drawing(note.body) if is_drawing(path, note.frontmatter) else note.body
    chunks = chunk_note(body, strategy) or [Chunk(0, (), note.title)]
    texts = (chunk.text for chunk in sorted(chunks, key=lambda chunk: chunk.ordinal))
    note.body = ""  # in its chunks: the same whether a worker parsed the note or this process did
    return note, chunks, compress(data, chunk_dictionary(texts))


def _parse_many(items: list[Work]) -> list[Parsed | ParseFailed]:
    return [_parse_one(item) for item in items]


def _to_wire(parsed: Parsed | ParseFailed) -> Wire | str:
    if isinstance(parsed, ParseFailed):
        return parsed.error  # plain data, as the rest: no class of brain's pickled by name
    note, chunks, compressed = parsed
    links = [(k.target, k.kind, k.anchor, k.display, k.line) for k in note.links]
    head = (
        note.path,
        note.title,
        note.aliases,
        note.tags,
        note.date,
        note.frontmatter,
        links,
        note.content_hash,
        note.warnings,
    )
    return head, [(c.ordinal, c.heading_path, c.text) for c in chunks], compressed


def _from_wire(wire: Wire | str) -> Parsed | ParseFailed:
    if isinstance(wire, str):
        return ParseFailed(wire)
    (path, title, aliases, tags, date, frontmatter, links, content_hash, warnings), chunks, compressed = wire
    note = Note(path, title, aliases, tags, date, "", frontmatter, [Link(*k) for k in links], content_hash, warnings)
    return note, [Chunk(*c) for c in chunks], compressed


class _Workers:
    """Worker processes, one per thread of a thread pool: each thread sends its worker a batch
    and waits for the answer (the GIL is released while it waits)."""

    def __init__(self, count: int):
        self._local = threading.local()
        self._started: list[subprocess.Popen[bytes]] = []
        self._lock = threading.Lock()
        self.threads = ThreadPoolExecutor(count, thread_name_prefix="brain-parse")

    def submit(self, items: list[Work]) -> Future[list[Parsed | ParseFailed]]:
        return self.threads.submit(self._run, items)

    def _run(self, items: list[Work]) -> list[Parsed | ParseFailed]:
        try:
            worker = self._worker()
            assert worker.stdin is not None and worker.stdout is not None
            _send(worker.stdin, items)
            results = _receive(worker.stdout)
            if not isinstance(results, list) or len(results) != len(items):
                raise RuntimeError("a parse worker answered with something else")
            return [_from_wire(result) for result in results]
        except (OSError, EOFError, RuntimeError, pickle.PickleError, struct.error, TypeError, ValueError) as exc:
            self._local.worker = None  # not used again
            log.warning("a parse worker failed (%s); parsing its notes here", exc)
            return _parse_many(items)

    def _worker(self) -> subprocess.Popen[bytes]:
        worker = getattr(self._local, "worker", None)
        if worker is None:
            worker = subprocess.Popen(
                WORKER,
                stdin=subprocess.PIPE,
                stdout=subprocess.PIPE,
            )
            with self._lock:
                self._started.append(worker)
            self._local.worker = worker
        return worker

    def close(self) -> None:
        self.threads.shutdown(wait=True, cancel_futures=True)
        for worker in self._started:
            for stream in (worker.stdin, worker.stdout):
                if stream is not None:
                    stream.close()  # the worker stops at the end of its input
            try:
                worker.wait(timeout=10)
            except subprocess.TimeoutExpired:
                worker.kill()
                worker.wait()


class _Task:
    def __init__(self) -> None:
        self.items: list[Work] = []
        self.size = 0  # bytes of the notes
        self.future: Future[list[Parsed | ParseFailed]] | None = None


class Parser(Generic[K]):
    """``parsed(items)``: for each (key, work or None) in order, (key, its parse or None): a
    ``ParseFailed`` for a note whose parse raised.
    A context manager: workers, when there are any, stop on exit."""

    def __init__(self, expected: int, workers: int | None = None):
        workers = config.parse_workers() if workers is None else workers
        self.workers = workers if expected >= PARALLEL_FROM else 0
        self._pool = _Workers(self.workers) if self.workers > 0 else None

    def __enter__(self) -> Parser[K]:
        return self

    def __exit__(self, *exc: object) -> None:
        if self._pool is not None:
            self._pool.close()

    def parsed(self, items: Iterable[tuple[K, Work | None]]) -> Iterator[tuple[K, Parsed | ParseFailed | None]]:
        if self._pool is None:
            for key, work in items:
                yield key, (_parse_one(work) if work is not None else None)
            return
        pool = self._pool
        queue: deque[tuple[K, _Task | None, int]] = deque()  # in input order
        open_task = _Task()
        in_flight = 0  # tasks submitted and not yet read to their end
        bytes_ahead = 0  # the bytes of their notes

        def submit(task: _Task) -> None:
            nonlocal in_flight, bytes_ahead, open_task
            task.future = pool.submit(task.items)
            in_flight += 1
            bytes_ahead += task.size
            if task is open_task:
                open_task = _Task()

        def head() -> tuple[K, Parsed | ParseFailed | None]:
            nonlocal in_flight, bytes_ahead
            key, task, position = queue.popleft()
            if task is None:
                return key, None
            if task.future is None:
                submit(task)
            assert task.future is not None
            results = task.future.result()
            if position == len(task.items) - 1:
                in_flight -= 1
                bytes_ahead -= task.size
            return key, results[position]

        for key, work in items:
            if work is None:
                queue.append((key, None, 0))
            else:
                open_task.items.append(work)
                open_task.size += len(work[1])
                queue.append((key, open_task, len(open_task.items) - 1))
                if len(open_task.items) >= NOTES_PER_TASK:
                    submit(open_task)
            while queue and (
                queue[0][1] is None or in_flight >= TASKS_AHEAD * self.workers or bytes_ahead >= BYTES_AHEAD
            ):
                yield head()
        while queue:
            yield head()


def _send(stream: IO[bytes], value: object) -> None:
    data = pickle.dumps(value, protocol=pickle.HIGHEST_PROTOCOL)
    write_all(stream, struct.pack("<Q", len(data)) + data)


def _receive(stream: IO[bytes]) -> object:
    head = stream.read(8)
    if len(head) < 8:
        raise EOFError("the other end closed the pipe")
    (size,) = struct.unpack("<Q", head)
    data = stream.read(size)
    if len(data) < size:
        raise EOFError("the other end closed the pipe mid-message")
    return pickle.loads(data)


def serve(stdin: IO[bytes], stdout: IO[bytes]) -> None:
    """A worker: batches of ``Work`` in, their parses out, until the input ends."""
    while True:
        try:
            items = _receive(stdin)
        except EOFError:
            return
        assert isinstance(items, list)
        _send(stdout, [_to_wire(parsed) for parsed in _parse_many(items)])


if __name__ == "__main__":
    serve(sys.stdin.buffer, sys.stdout.buffer)
