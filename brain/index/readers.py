"""Extra read connections to one database, each run by a thread of a small pool.

``IndexStore.fts_search`` splits a large BM25 search into rowid ranges that run at once, one
on the store's own connection and one on each of these (sqlite3 releases the GIL while a
statement steps, so the parts use several cores). This module holds the machinery and none
of the SQL: connections opened on first use by the store's ``opener``, a thread pool, and a
lock so that each connection is used by one thread at a time. ``close`` joins the threads and
closes the connections; the store calls it when it closes.
"""

from __future__ import annotations

import sqlite3
import threading
from collections.abc import Callable, Sequence
from concurrent.futures import Future, ThreadPoolExecutor
from typing import TypeVar

R = TypeVar("R")

# What opening a reader may raise: the database or its folder is gone or unreadable, or the
# opener found another database at its path (a rebuild swapped one in).
OPEN_FAILURES = (sqlite3.Error, OSError)


class ReaderFailed(Exception):
    """A reader could not be opened, or its job raised (the cause is chained)."""


class ReaderPool:
    """``size()`` read connections to one database, opened by ``opener`` when first needed.

    ``opener`` returns a new connection or raises one of ``OPEN_FAILURES``. A pool that could
    not open its connections, or is closed, is not ``usable`` again: its store searches in one
    statement from then on. ``opener`` None: a pool of none (an in-memory database).
    """

    def __init__(self, opener: Callable[[], sqlite3.Connection] | None, size: Callable[[], int]):
        self._opener = opener
        self._size_of = size  # read on first use: a setting, read when it matters
        self._size: int | None = None
        self._conns: list[sqlite3.Connection] = []
        self._executor: ThreadPoolExecutor | None = None
        self._lock = threading.Lock()
        self._closed = False
        self.pinned = False  # each connection holds a read transaction the store started (a snapshot)

    @property
    def size(self) -> int:
        if self._size is None:
            self._size = max(0, self._size_of()) if self._opener is not None else 0
        return self._size

    @property
    def usable(self) -> bool:
        return not self._closed and self.size > 0

    def connections(self) -> list[sqlite3.Connection] | None:
        """The connections, opened now if they are not yet; None when the pool is not usable."""
        with self._lock:
            return self._open()

    def _open(self) -> list[sqlite3.Connection] | None:
        if not self.usable:
            return None
        if len(self._conns) < self.size:
            assert self._opener is not None
            try:
                while len(self._conns) < self.size:
                    self._conns.append(self._opener())
            except OPEN_FAILURES:
                self._shut()
                raise
        return self._conns

    def run(self, here: Callable[[], R], jobs: Sequence[Callable[[sqlite3.Connection], R]]) -> tuple[R, list[R]]:
        """``here()`` on the calling thread while each of ``jobs`` (at most ``size``) runs on a
        connection of its own on a pool thread; (here's result, the jobs' results in order).

        Returns or raises only once every job has finished, so no connection is still in use.
        ``here``'s exception is raised as it is; a job's, or a failure to open the connections,
        as ``ReaderFailed``.
        """
        with self._lock:
            try:
                conns = self._open()
            except OPEN_FAILURES as exc:
                raise ReaderFailed(f"could not open a reader: {exc}") from exc
            if conns is None or len(jobs) > len(conns):
                raise ReaderFailed("the readers are closed")
            if self._executor is None:
                self._executor = ThreadPoolExecutor(max_workers=self.size, thread_name_prefix="brain-fts")
            futures: list[Future[R]] = [self._executor.submit(job, conn) for job, conn in zip(jobs, conns)]
            try:
                mine = here()
            finally:
                for future in futures:  # wait for all, whatever happened here
                    future.exception()
            results = []
            for future in futures:
                failure = future.exception()
                if failure is not None:
                    raise ReaderFailed(f"{type(failure).__name__}: {failure}") from failure
                results.append(future.result())
            return mine, results

    def close(self) -> None:
        """Join the threads and close the connections; the pool is not usable after."""
        with self._lock:
            self._shut()

    def _shut(self) -> None:
        self._closed = True
        self.pinned = False
        if self._executor is not None:
            self._executor.shutdown(wait=True)
            self._executor = None
        conns, self._conns = self._conns, []
        for conn in conns:
            conn.close()
