"""The warm index of one vault: what ``brain serve`` answers from, and ``brain mcp`` without one.

Threads, and the one thing each owns:

- **The query thread** runs every operation that reads the index (``ask``, ``note``,
  ``neighbours``), one at a time in arrival order (the prompt hook's first: ``Service.run``). It is the only user of the current
  snapshot's SQLite connection. Callers (socket and HTTP handler threads, MCP tool threads)
  submit a job and wait for its result with a deadline. One thread is deliberate: queries take
  tens of milliseconds, the machine has few cores, and a SQLite connection is not shared.
- **The indexing thread** (``watcher.py``) runs the same ``index_vault`` as ``brain index``, on
  its own connection and under the vault's index lock, for a full scan at start and after every
  settled batch of changes. When a pass has committed, it opens a new snapshot
  (``recall.opening.open_snapshot``: a ``Recaller`` whose store holds one read transaction, with
  the FAISS index of exactly that state and the link graph, names and successors built from it)
  and swaps it in by replacing one reference. The old snapshot is closed by the query thread,
  after the query that may be using it.
- **The embedding model** is shared: ``SerialEmbedder`` lets one call in at a time and feeds the
  indexer in small slices, so a query waits for at most one slice of an indexing batch.

So every query reads one snapshot from start to end: its vectors, graph, names, successors and
every SQLite row come from one committed index state, never half of an update. Readers keep
answering from the last snapshot while a pass runs; ``ask`` with ``update`` waits (up to its
deadline) for changes the watcher has seen, as ``brain ask`` indexes them first in-process.
"""

from __future__ import annotations

import collections
import contextlib
import contextvars
import functools
import logging
import os
import queue
import sqlite3
import threading
import time
from collections.abc import Callable, Iterator, Sequence
from concurrent.futures import Future
from concurrent.futures import TimeoutError as FutureTimeout
from dataclasses import dataclass, field
from pathlib import Path
from typing import TYPE_CHECKING, Any, TypeVar

from .. import config
from ..embed import Embedder, LazyEmbedder
from ..errors import SUPERSEDED_ANSWER, BrainError, EmptyIndexError, IndexMismatchError, NewerDatabaseError, quoted
from ..index import changes
from ..index.files import INDEX_FILE
from ..index.health import index_errors
from ..index.indexer import index_vault  # the index modules: here, and only here
from ..index.moved import recorded_form
from ..index.settings_fit import check_model
from ..index.store import RELOAD, IndexStore, recorded_vault
from ..index.upgrades import newer_index_message
from ..index.writer_lock import VaultLocked
from ..migrations import connect
from ..recall.opening import open_snapshot
from ..recall.types import Mode, RecallResult, RecallSettings
from ..text import plural
from . import protocol
from .watcher import Batch, Failing, VaultWatcher

if TYPE_CHECKING:
    import numpy as np

    from ..recall.pipeline import Recaller

log = logging.getLogger("brain")

T = TypeVar("T")
EMBED_SLICE = 8  # texts the indexer embeds per turn of the model lock
QUERY_GRACE = 60.0  # seconds a caller waits for its turn on the query thread, beyond its own wait
PROBE_EVERY = 2.0  # seconds between checks for index changes made by another process
CHANGED_CHECKED = 2000  # gathered paths an answer checks for notes out of step (``_changed_notes``)


class Starting(BrainError):
    """No index state is loaded yet (the first scan or the model load is still running)."""


class Busy(BrainError):
    """The query thread did not get to the request in time."""


class CallerGone(Busy):
    """The client hung up before the query thread got to its request: it is not run."""


@dataclass(frozen=True)
class Caller:
    """Who a request came from: ``peer`` (a client process; requests of one peer take turns,
    one at a time on the query thread), ``gone`` (whether that request's client hung up) and
    ``urgent`` (the prompt hook's: it goes before other clients' requests, ``Service.run``)."""

    peer: Any
    gone: Callable[[], bool]
    urgent: bool = False


_caller: contextvars.ContextVar[Caller | None] = contextvars.ContextVar("caller", default=None)
GONE_CHECK_EVERY = 0.1  # seconds between checks that a waiting caller's client is still there


@contextlib.contextmanager
def caller(peer: Any, gone: Callable[[], bool], *, urgent: bool = False) -> Iterator[None]:
    """Within it, ``Service.run`` runs the request of ``peer`` after those of other clients
    that came meanwhile, and drops it when its client hung up before its turn. One client
    sending 64 questions at once had the prompt hook's wait behind all 64 (one query thread,
    first come first served); one asking and hanging up, again and again, had the query thread
    answer no one while the others waited. An ``urgent`` request (the prompt hook's) goes
    before the others waiting."""
    token = _caller.set(Caller(peer, gone, urgent))
    try:
        yield
    finally:
        _caller.reset(token)


class SerialEmbedder:
    """One model for the query thread and the indexer, one call at a time.

    Indexing goes through in slices of ``EMBED_SLICE`` texts, so a query waits for at most one
    slice. Serialising also keeps torch's process-wide thread setting (``embed_query`` lowers it
    for one query) from changing under an indexing batch. ``slice_seconds``: how long the last
    slice held the model; ``held_for``, what a question asked now may wait for it (``Service.ask``).
    A question asking goes before the indexer's next slice: let go of by one slice, the model was
    taken again by the next before the question's thread woke (11 times in 20), and a question
    waited two slices or more (11.3 s for two at load 27, MiniLM).
    """

    def __init__(self, inner: Embedder, *, clock: Callable[[], float] = time.monotonic):
        self.inner = inner
        self.name = inner.name
        self._lock = threading.RLock()
        self._clock = clock
        self.slice_seconds = 0.0
        self._slice_began: float | None = None
        # questions that have asked for the model, and those done with it: a slice waits for the
        # ones asking as it begins, never for ones that come after (a stream would hold it back)
        self._asked = self._answered = 0
        self._questions = threading.Condition()
        self.embedded = 0  # texts the indexer has had embedded (how far a rebuild is: ``Service.rebuilding``)

    def ensure_loaded(self) -> float | None:
        load = getattr(self.inner, "ensure_loaded", None)
        if load is None:
            return None
        with self._lock:
            return load()

    @property
    def dim(self) -> int:
        with self._lock:
            return self.inner.dim

    def embed_query(self, text: str) -> np.ndarray:
        with self._questions:
            self._asked += 1
        try:
            with self._lock:
                return self.inner.embed_query(text)
        finally:
            with self._questions:
                self._answered += 1
                self._questions.notify_all()

    def embed_documents(self, texts: Sequence[str], *, progress: bool = False) -> np.ndarray:
        import numpy as np

        texts = list(texts)
        if not texts:
            with self._lock:
                return self.inner.embed_documents(texts)
        parts = []
        for start in range(0, len(texts), EMBED_SLICE):
            with self._questions:
                asked = self._asked
                while self._answered < asked:
                    self._questions.wait()
            with self._lock:
                self._slice_began = began = self._clock()
                try:
                    parts.append(self.inner.embed_documents(texts[start : start + EMBED_SLICE]))
                finally:
                    self._slice_began = None
                    self.slice_seconds = self._clock() - began
                self.embedded += len(parts[-1])
        return np.concatenate(parts)

    def held_for(self) -> float:
        """Seconds a slice holds the model: the last one's, or the one under way's so far when
        longer (the first slice of a pass has no last one to go by)."""
        began = self._slice_began
        return max(self.slice_seconds, 0.0 if began is None else self._clock() - began)

    def __getattr__(self, name: str) -> Any:  # query_prefix, passage_prefix, ... of the model
        if name.startswith("_") or name == "inner":
            raise AttributeError(name)
        with self._lock:
            return getattr(self.inner, name)


@dataclass
class Snapshot:
    recaller: Recaller
    # (file identity, resolver_key, vectors_version, reload_at): which committed state it holds
    marker: tuple
    opened_at: float
    counts: dict[str, int]
    folders: frozenset[str]  # every folder holding an indexed note (the watcher's deleted-folder check)
    complete: bool = True  # its links were resolved (not the state of a pass killed before it resolved them)


@dataclass
class PastView:
    """A view of the past kept open (``open_past_view``) over the snapshot ``present`` answers from."""

    recaller: Recaller
    present: Recaller
    as_of: float | None
    valid_at: str | None
    used: float  # time.monotonic() of its last question


@dataclass
class _Job:
    fn: Callable[[Recaller], Any]
    future: Future = field(default_factory=Future)


@dataclass
class _Close:
    snapshot: Snapshot


_STOP = object()
_FOLD = object()  # fold the WAL in again (``fold_wal``), between queries
_URGENT = object()  # an urgent job waits (``Service._urgent``): the query thread wakes for it


class Service:
    """One vault's warm index and the operations on it (``handle`` takes protocol requests)."""

    def __init__(
        self,
        root: Path,
        *,
        embedder: Embedder | None = None,
        watch: bool = True,
        rerank_model: str | bool | None = True,
        settle_ms: int = 300,
        rescan_seconds: float = 300.0,
        force_polling: bool | None = None,
        answer_when_newer: bool = False,
    ):
        """``answer_when_newer`` (`brain mcp`'s own): an index a newer brain upgraded is answered
        from as it is, never written; else (`brain serve`) the start is refused."""
        self.root = root
        self.answer_when_newer = answer_when_newer
        self._resolved = root.resolve()  # where the vault's path led when the server started
        self.model = embedder.name if embedder is not None else config.embed_model_name()
        self.embedder = SerialEmbedder(embedder if embedder is not None else LazyEmbedder(self.model))
        self.rerank_model = rerank_model
        self.started_at = time.time()
        self.queries = 0
        self.errors = 0
        # how a request that failed on a bug is said (``handle``): its traceback in the log; the
        # socket's server says the first of each kind whole and counts the others (``daemon._Said``)
        self.on_failure: Callable[[str, BaseException], None] = _log_failure
        # how a line said again and again is said (a pass failing the same way): the daemon
        # counts repeats of a line as it counts the connection lines (``daemon._Said.say``)
        self.on_said: Callable[[int, str], None] = lambda level, text: log.log(level, "%s", text)
        # starting → ready; empty (``empty`` says so) while the index holds no notes, which is no
        # failure: the vault has none yet, and the watcher serves them as they are written; failed
        # (with ``failure``) when no state can load
        self.state = "starting"
        # what a starting server is doing and since when (time.monotonic()): loading the model,
        # the index, or indexing the vault (no index to load); `brain status` and `--detach` say it
        self.loading: tuple[str, float] = ("starting", time.monotonic())
        self.on_loading: Callable[[str], None] = lambda doing: None  # --detach's parent is told (daemon)
        self.failure: str | None = None
        self.empty: str | None = None  # what brain ask says of an index with no notes
        self.last_update: dict[str, Any] | None = None
        self._snapshot: Snapshot | None = None
        self._cond = threading.Condition()
        self._jobs: queue.SimpleQueue[Any] = queue.SimpleQueue()
        # the prompt hook's jobs, taken before ``_jobs``'s (``_next_job``); each puts ``_URGENT``
        # in ``_jobs`` to wake the query thread
        self._urgent: collections.deque[_Job] = collections.deque()
        self._after_urgent = False  # the query thread's last job was urgent
        self._query_thread = threading.Thread(target=self._query_loop, name="brain-query", daemon=True)
        self._last_probe = 0.0
        self.query_seconds = 0.0  # how long the last job took on the query thread (``_answer_reserve``)
        self._failed_marker: tuple | None = None  # a committed state that would not load
        self.blocked = False  # our pass waits for another process's `brain index`
        # why this server's code no longer writes the index: a newer brain upgraded it (its
        # watcher is stopped; `brain serve` stops, `brain mcp` answers from what it holds)
        self.superseded: str | None = None
        # (notes left unindexed, why) after a pass failed (a full disk): said on every answer
        # until a pass succeeds (the next change or rescan tries again).
        self.unindexed: tuple[int, str] | None = None
        # While a pass builds again the index that went from under this server (deleted, or
        # another vault's put in its place: ``_lost``): why, the texts embedded when it began
        # and the chunks the lost index held (how far it is); every question is told so in one line
        self.rebuilding: tuple[str, int, int] | None = None
        self._lost_seen: str | None = None  # the loss the last idle probe saw, to be seen again
        self._counter = threading.Lock()
        self._turns: dict[Any, tuple[threading.Semaphore, int]] = {}  # per client (``run``)
        self._fold_asked = threading.Event()  # a fold of the WAL waits on the query thread
        # Views of the past kept for the next question about the same moment, least recently
        # asked first; the query thread alone opens, reads and closes them.
        self.past_views: list[PastView] = []
        self.past_opened = 0  # views of the past opened (status: how often a question was not warm)
        self.watcher = VaultWatcher(
            root,
            self._on_batch,
            on_idle=self._on_idle,
            known_folder=self._known_folder,
            watch=watch,
            settle_ms=settle_ms,
            rescan_seconds=rescan_seconds,
            force_polling=force_polling,
            on_failure=lambda what, exc: self.on_failure(what, exc),  # the daemon sets it after
        )
        # passes of ``index_vault`` that failed in a row (``_index``): a traceback said once, the
        # failures counted for `brain status`, the first success after said
        self.indexing = Failing(f"indexing {root}", lambda what, exc: self.on_failure(what, exc))

    # ----- life -------------------------------------------------------------------------------

    def start(self) -> None:
        """Check the index's model now (a mismatch is an error before anything starts), then run."""
        try:
            self._check_model()
        except NewerDatabaseError:
            if not self.answer_when_newer:
                raise
            # the first pass loads its snapshot, then is refused, which stops the watcher (said once)
        self._query_thread.start()
        self.watcher.start()

    def stop(self, timeout: float = 10.0) -> None:
        self.watcher.stop(timeout)
        if self._query_thread.is_alive():
            self._jobs.put(_STOP)
            self._query_thread.join(timeout)

    def count_error(self) -> None:
        """One more request that failed unexpectedly (``status`` reports them)."""
        with self._counter:
            self.errors += 1

    def _loading(self, doing: str) -> None:
        """Say what the starting server does now (``loading``): the log, `brain status`, and
        `brain serve --detach`, which was silent for the model's load (10-30 s)."""
        self.loading = (doing, time.monotonic())
        log.info("starting: %s", doing)
        self.on_loading(doing)

    def loading_said(self) -> str:
        """What a starting server does, and for how long: "loading the model, 12 s"."""
        doing, since = self.loading
        return f"{doing}, {time.monotonic() - since:.0f} s"

    def wait_ready(self, timeout: float) -> bool:
        """True once a snapshot is loaded (or the index is empty, or loading failed for good);
        False on timeout."""
        deadline = time.monotonic() + timeout
        with self._cond:
            while self._snapshot is None and self.state == "starting":
                left = deadline - time.monotonic()
                if left <= 0:
                    return False
                self._cond.wait(min(left, 0.5))
        return True

    def _check_model(self) -> None:
        directory = config.index_dir(self.root)
        if not os.path.exists(directory / "index.db"):  # a folder not to be searched: said by what opens it
            return
        with index_errors(directory, self.root):  # a full disk, damage: one line, as `brain index` says it
            store = IndexStore.open(directory, create=False)
            try:
                check_model(store, self.model)
            finally:
                store.close()

    # ----- the indexing thread: passes and snapshots ------------------------------------------

    def _on_batch(self, batch: Batch) -> int | None:
        """Index what changed (the whole vault is re-planned: renames, folders, missed events),
        then swap in a snapshot of the new state; returns how many notes the pass found changed
        (a rescan's are what no event told of: the watcher watches again), None when it failed."""
        started = time.monotonic()
        if batch.reason == "start" and self._snapshot is None:
            self._loading("loading the model")
            self._warm_model()
            if os.path.exists(config.index_dir(self.root) / "index.db"):
                self._loading("loading the index")
                self._refresh(quiet=True)  # answer from the index as it is while the first pass runs
            if self._snapshot is None:  # no index yet (or one that would not load): the first pass builds it
                self._loading("building the index from the vault")
        # A note heard of whose size and mtime stayed (chmod, setfacl, chown) is opened again: an
        # ACL that refuses it shows in no mode bit, and the walk kept it, served, until its next save
        heard = frozenset(p for p in batch.paths if p.lower().endswith(".md"))
        try:
            report = self._index(heard)
        finally:
            self.blocked = False
        if report is None:
            return None
        self.watcher.follow(report.symlinks)
        changed = report.new + report.changed + report.removed + report.renamed + report.redated
        current = self._snapshot
        if (changed or current is None or not current.complete or self._moved()) and not self._refresh():
            return changed
        if self.rebuilding is not None:
            log.info("the index of %s is back, built again from the vault", self.root)
            self.rebuilding = None
        if changed or batch.reason == "start":
            now, wall = time.monotonic(), time.time()
            event = batch.first_event  # None: no event told of what this pass found (start, rescan)
            self.last_update = {
                "reason": batch.reason,
                "finished_at": _iso(wall),
                "took_s": round(now - started, 3),
                # first event heard → answerable; none when no event was heard: the start pass
                # and a rescan claimed the pass's own time as the change's lag
                "first_event_at": None if event is None else _iso(wall - (now - event)),
                "lag_s": None if event is None else round(now - event, 3),
                "new": report.new,
                "changed": report.changed,
                "removed": report.removed,
                "renamed": report.renamed,
                "redated": report.redated,
                "embedded": report.embedded,
            }
            counts = (report.new, report.changed, report.removed, report.renamed)
            if batch.reason == "start":  # no event came: the server looked at the vault as it found it
                log.info(
                    "start: the first look at the vault: %s new, %s changed, %s removed, %s renamed in %.2f s",
                    *counts,
                    now - started,
                )
            else:
                log.info(
                    "%s: %s new, %s changed, %s removed, %s renamed in %.2f s (%s)",
                    batch.reason,
                    *counts,
                    now - started,
                    "found by a pass over the whole vault: no event told of it"
                    if event is None
                    else f"{now - event:.2f} s after the first event"
                    + (
                        ", a pass over the whole vault: the kernel may have dropped events"
                        if batch.reason == "burst"
                        else ""
                    ),
                )
        return changed

    def led_elsewhere(self) -> str | None:
        """What to say when the vault's path now leads to another folder (a symlink put where the
        vault was, a folder above it swapped): that folder has an index and a server of its own."""
        try:
            now = self.root.resolve()
        except (OSError, RuntimeError):  # a symlink loop: nothing to index there either
            return f"the vault {self.root} cannot be followed now"
        if now == self._resolved:
            return None
        return f"the vault {self.root} now leads to {now}"

    def _index(self, recheck: frozenset[str] = frozenset()) -> Any:  # -> IndexReport | None (failed, or stopping)
        """``index_vault``, the same as `brain index`, the notes ``recheck`` read even when their
        size and mtime are as indexed; waits its turn behind another writer."""
        elsewhere = self.led_elsewhere()
        if elsewhere:  # index_vault would follow the path into another folder's index; said every pass: counted
            self.on_said(logging.ERROR, f"{elsewhere}; not indexing it here")
            return None
        while True:
            try:
                report = index_vault(  # a read error or a parse that raised: tried again only once it changed
                    self.root,
                    embedder=self.embedder,
                    model_name=self.model,
                    progress="log",  # a long pass (a `git checkout`, a folder of notes copied in) says how far it is
                    verify=recheck,
                    retry=False,
                )
            except VaultLocked:  # a `brain index` of the user's: ours runs once it is done
                self.blocked = True  # meanwhile queries do not wait for us
                if self.watcher.stopping.wait(0.5):
                    return None
                continue
            except NewerDatabaseError as exc:
                self._supersede(str(exc))
                return None
            except BrainError as exc:  # one line, counted as the connection lines are
                self.on_said(logging.ERROR, f"indexing {self.root} failed: {exc}")
                self.indexing.failed(why=str(exc))
                self._failed(str(exc))
                return None
            except Exception as exc:  # noqa: BLE001 - a traceback said once (on_failure), then counted
                self.indexing.failed(exc)
                self._failed(f"indexing failed ({type(exc).__name__}: {exc})")
                return None
            self.indexing.worked()
            self.unindexed = None
            return report

    def _supersede(self, why: str) -> None:
        """A newer brain upgraded the index under this server: it writes no more (its watcher
        stops); said once, in the log."""
        if self.superseded is not None:
            return
        self.superseded = why
        log.error("%s; this server runs older code: it stops indexing (start `brain serve` again)", why)
        self.watcher.stopping.set()
        if self._snapshot is None:  # no pass will load one: said now, or every call waited its whole wait
            self._refresh()  # an index it cannot read (the newer brain changed its schema): "failed", one line

    def _failed(self, why: str) -> None:
        """A pass failed: the notes it left are counted, for every answer to say until one succeeds."""
        self._fail_if_nothing_loaded(why)
        self.unindexed = (max(1, self._out_of_step()), why)

    def _out_of_step(self) -> int:
        """How many notes differ from the committed index (a scan of the vault); 1 when the index
        cannot be read."""
        try:
            store = IndexStore.open_snapshot(config.index_dir(self.root))
            try:
                return changes.plan(self.root, store).pending
            finally:
                store.close()
        except Exception:  # noqa: BLE001 - the index cannot be read now: at least one note
            return 1

    def _on_idle(self) -> None:
        """Every few seconds: an index changed by another process (`brain index`) is picked up."""
        now = time.monotonic()
        if now - self._last_probe < PROBE_EVERY or self._snapshot is None:
            return
        self._last_probe = now
        lost = self._lost()
        if lost is not None:
            if lost == self._lost_seen:  # seen twice: no rebuild's two renames between the looks
                self._rebuild(lost)
            self._lost_seen = lost
            return
        self._lost_seen = None
        if self._moved():
            log.info("the index changed outside this server; loading the new state")
            if self._refresh() and self.unindexed is not None and self._out_of_step() == 0:
                # `brain index --repair`/`--rebuild` (or a freed disk and `brain index`) brought it
                # level: answers stop saying it cannot be updated
                log.info("the index is level with the vault again")
                self.unindexed = None
        elif not self._fold_asked.is_set() and _wal_bytes(config.index_dir(self.root)):
            # The fold after the last swap found another reader (a `brain ask`, a prune
            # checkpointing) holding the WAL: tried again while idle, else it waited for the
            # next pass, days on a quiet vault, with a vacuum's whole copy in it
            self._fold_asked.set()
            self._jobs.put(_FOLD)

    def _lost(self) -> str | None:
        """What became of the index the snapshot reads when it is gone from its path: deleted (a
        `rm -rf` of its folder), or another vault's put in its place; None while it is there, or
        replaced by another of this vault's (`brain index --rebuild`: ``_moved`` loads it)."""
        current = self._snapshot
        if current is None or self.rebuilding is not None or current.recaller.store.still_at_its_path():
            return None
        directory = config.index_dir(self.root)
        database = directory / INDEX_FILE
        if not os.path.exists(database):
            return f"the index of {self.root} was deleted ({directory})"
        recorded = recorded_vault(database, 0)
        if recorded is not None and recorded[0] not in (recorded_form(self._resolved), recorded_form(self.root)):
            return f"the index of {self.root} was replaced by one of {recorded[0]} ({directory})"
        return None

    def _rebuild(self, lost: str) -> None:
        """Said once, in the log and in `brain status` (a pass failing: how many notes it left),
        and a pass over the whole vault asked for now: it waited for the next note saved, or
        the rescan five minutes on, and the server answered from the deleted files till then."""
        current = self._snapshot
        notes, chunks = (current.counts["notes"], current.counts["chunks"]) if current is not None else (1, 0)
        why = f"{lost}; brain serve is rebuilding it from the vault"
        log.error("%s", why)
        self.rebuilding = (why, self.embedder.embedded, chunks)
        self.indexing.failed(why=why)
        self.unindexed = (max(1, notes), why)
        self.watcher.pass_now()

    def rebuild_progress(self) -> dict[str, Any] | None:
        """How far the pass rebuilding a lost index is (``rebuilding``): why, the chunks embedded
        since it began, about how many the lost index held, and whether its pass failed (a full
        disk: the next change or rescan tries again); None while none is rebuilt."""
        rebuilding = self.rebuilding
        if rebuilding is None:
            return None
        why, began, chunks = rebuilding
        failed = self.indexing.failures > 1 and not self.watcher.busy  # the first is ``_rebuild``'s own
        return {"why": why, "embedded": self.embedder.embedded - began, "of_about": chunks, "failed": failed}

    def rebuilt_so_far(self) -> str | None:
        """What a question is told while ``rebuilding``, with how far the pass is, in one line."""
        progress = self.rebuild_progress()
        return None if progress is None else protocol.rebuild_said(progress, self.indexing.why)

    def _moved(self) -> bool:
        """Whether the committed index differs from the snapshot's and is complete (links
        resolved), and is not a state that already failed to load (it is said once, not every probe)."""
        current = self._snapshot
        directory = config.index_dir(self.root)
        try:
            store = IndexStore.open_snapshot(directory)
        except Exception:  # noqa: BLE001 - no index yet, or a rebuild swapping files: not now
            return False
        try:
            marker = _marker(store)
            complete = store.get_meta("links_dirty") in (None, "0")
            # a newer brain's `brain index` upgraded it: this code must not index into it (a
            # pass would be refused too, but the next may be hours away on a quiet vault)
            newer = store.unknown_migrations()
        except Exception:  # noqa: BLE001
            return False
        finally:
            store.close()
        if newer:
            self._supersede(newer_index_message(directory / "index.db", newer))
            return False
        if marker == self._failed_marker:
            return False
        return complete and (current is None or marker != current.marker)

    def _warm_model(self) -> None:
        """Load the model before the first snapshot is published, so no query pays for it."""
        try:
            self.embedder.ensure_loaded()
            self.embedder.embed_query("warm up")  # first call initialises the kernels
        except BrainError as exc:
            log.error("the embedding model did not load: %s", exc)

    def _refresh(self, *, quiet: bool = False) -> bool:
        """Open a snapshot of the committed index and swap it in. ``quiet``: a failure is not news
        (the index as it was before the first pass, which may not exist yet)."""
        current = self._snapshot
        try:
            # damage (a table dropped): one line naming what mends it, as brain ask says it
            with index_errors(config.index_dir(self.root), self.root):
                recaller = open_snapshot(
                    self.root,
                    self.embedder,
                    rerank_model=self.rerank_model,
                    # links unresolved then may resolve now in notes not written since: carry.py
                    # would take over a graph without them
                    previous=current.recaller if current is not None and current.complete else None,
                )
        except EmptyIndexError as exc:
            if quiet:
                log.info("no index to answer from before the first pass (%s)", exc)
                return False
            self._serve_empty(str(exc))
            return True
        except Exception as exc:
            if quiet:
                log.info("no index to answer from before the first pass (%s)", exc)
                return False
            if isinstance(exc, BrainError):
                log.error("could not load the index of %s: %s", self.root, exc)
                message = str(exc)
            else:
                log.exception("could not load the index of %s", self.root)
                message = f"could not load the index ({type(exc).__name__}: {exc})"
            self._fail_if_nothing_loaded(message)
            self._failed_marker = self._current_marker()
            return False
        self._failed_marker = None
        store = recaller.store
        snapshot = Snapshot(
            recaller=recaller,
            marker=_marker(store),
            opened_at=time.time(),
            # notes and chunks alone (status says no more): store.counts() reads the links too,
            # and an index whose links cannot be read still answers, as brain ask does, its
            # graph stages falling back
            counts={"notes": store.note_count(), "chunks": store.chunk_count()},
            # the same paths when the names were taken over (no note added, deleted or renamed)
            folders=current.folders
            if current is not None and recaller.names() is current.recaller.names()
            else _folders(store.note_paths()),
            complete=not store.links_dirty(),
        )
        with self._cond:
            old, self._snapshot = self._snapshot, snapshot
            self.state, self.failure, self.empty = "ready", None, None
            self._cond.notify_all()
        if old is not None:
            self._jobs.put(_Close(old))  # after any query still reading it
        return True

    def _serve_empty(self, message: str) -> None:
        """The committed index holds no notes: every read says so, as brain ask does, until the
        watcher indexes the first note."""
        self._failed_marker = None
        with self._cond:
            old, self._snapshot = self._snapshot, None
            news = self.state != "empty"
            self.state, self.failure, self.empty = "empty", None, message
            self._cond.notify_all()
        if old is not None:
            self._jobs.put(_Close(old))  # after any query still reading it
        if news:
            log.info("%s; serving the notes as they are written", message)

    def _current_marker(self) -> tuple | None:
        try:
            store = IndexStore.open_snapshot(config.index_dir(self.root))
        except Exception:  # noqa: BLE001
            return None
        try:
            return _marker(store)
        except Exception:  # noqa: BLE001
            return None
        finally:
            store.close()

    def _fail_if_nothing_loaded(self, message: str) -> None:
        with self._cond:
            if self._snapshot is None:
                self.state, self.failure, self.empty = "failed", message, None
                self._cond.notify_all()

    def _known_folder(self, rel: str) -> bool:
        snapshot = self._snapshot
        return snapshot is not None and rel in snapshot.folders

    # ----- the query thread -------------------------------------------------------------------

    def _next_job(self) -> Any:
        """The query thread's next job: an urgent one (the prompt hook's) first, though never
        two in a row while others wait in ``_jobs``, so that requests claiming to be urgent
        (any local process can) do not keep the others from their turns; else ``_jobs``'s
        first, or None after ``_past_wait`` seconds with none."""
        if self._urgent_turn():
            return self._urgent.popleft()
        try:
            job = self._jobs.get(timeout=self._past_wait())
        except queue.Empty:
            return None
        if job is not _URGENT:
            self._after_urgent = False
            return job
        # the wake-up of an urgent job: taken already, or not its turn (passed over on the way to
        # the other job waiting; taken as its turn, each let one more urgent job go before it)
        return self._urgent.popleft() if self._urgent_turn() else None

    def _urgent_turn(self) -> bool:
        """Whether the next job is an urgent one (and the query thread takes it)."""
        if not self._urgent or (self._after_urgent and not self._jobs.empty()):
            return False
        self._after_urgent = True
        return True

    def _query_loop(self) -> None:
        while True:
            job = self._next_job()
            # Views of the past unasked for their idle time go, between any two jobs: they went
            # only once the queue was quiet that long, so a job every few seconds (questions of
            # the present, the idle probe's WAL fold tried again) kept them until the index changed
            if self.past_views and self._let_go_of_past(idle=config.serve_past_idle()):
                release_free_memory()
            if job is None:
                continue
            if job is _STOP:
                break
            if job is _FOLD:
                self._fold()
                self._fold_asked.clear()
                continue
            closing = isinstance(job, _Close)
            opened = self.past_opened
            if isinstance(job, _Close):
                self._close(job.snapshot)
            else:
                self._answer(job)
            # Nothing of it kept while waiting for the next: a closed snapshot (its vectors,
            # graph and names) stayed beside the new one until the next request came.
            del job
            # What the pass that replaced it, and it, left free; or what opening a view of the
            # past and its first question read and let go (its rows, its past vectors as read:
            # 25 to 50 MB at 20,000 notes, held by malloc as long as the view was kept).
            if closing or self.past_opened != opened:
                release_free_memory()
        self._let_go_of_past()
        with self._cond:
            snapshot, self._snapshot = self._snapshot, None
        if snapshot is not None:
            try:  # the next start (or a one-shot `brain ask`) takes them over: recall/cache.py
                snapshot.recaller.keep_for_next_run()
            finally:
                snapshot.recaller.close()

    def _close(self, snapshot: Snapshot) -> None:
        """Close a replaced snapshot (no query reads it now), with the views of the past over it,
        and fold the WAL in."""
        self._let_go_of_past(present=snapshot.recaller)
        snapshot.recaller.close()
        self._fold()

    def _fold(self) -> None:
        """Fold the WAL in up to the served snapshot's state. The snapshot is named in this
        frame alone: named in the query loop's, the one a fold read stayed in memory once
        replaced and closed, until the next fold (none, when the swap's own fold emptied the WAL)."""
        current = self._snapshot
        if current is not None:
            fold_wal(current.recaller.store)

    def _answer(self, job: _Job) -> None:
        if not job.future.set_running_or_notify_cancel():
            return  # its caller gave up waiting
        snapshot = self._snapshot
        began = time.monotonic()
        try:
            if snapshot is None and self.empty:
                raise EmptyIndexError(self.empty)
            if snapshot is None:
                raise Starting(self.failure or f"brain serve is still starting ({self.loading_said()})")
            job.future.set_result(job.fn(snapshot.recaller))
        except BaseException as exc:  # noqa: BLE001 - handed to the caller
            job.future.set_exception(exc)
        finally:
            self.query_seconds = time.monotonic() - began

    def _answer_reserve(self) -> float:
        """Seconds an answer may take once a question stops waiting for a pass: the model's
        slice it waits for, while a pass embeds, and a question's own time (the last one's).
        The wait for a pass ends that much before the caller's: it waited all of it, then for
        the slice and the question, and `brain ask` (15 s) gave up on an answer that came 9 s
        late under a pass of 52 notes, loading the model itself beside it (52 s, as stale)."""
        slice_seconds = self.embedder.held_for() if self.watcher.busy else 0.0
        return slice_seconds + self.query_seconds

    def run(self, fn: Callable[[Recaller], T], *, timeout: float) -> T:
        """Run ``fn(recaller)`` on the query thread; its result, or ``Busy`` after ``timeout``.
        Within ``caller``, after the requests of other clients that came meanwhile; an urgent
        one (the prompt hook's, ``_next_job``) before them: behind four clients each keeping a
        heavy question waiting, the hook's waited for all four and missed its 0.8 s."""
        if self._snapshot is None:
            with self._cond:
                if self._snapshot is None and self.state == "failed":
                    raise BrainError(self.failure or "the index could not be loaded")
                if self._snapshot is None and self.state == "empty":
                    raise EmptyIndexError(self.empty or "the index holds no notes")
        deadline = time.monotonic() + timeout
        who = _caller.get()
        if who is None:
            return self._run(fn, deadline, None, timeout)
        turn = self._turn(who.peer, +1)
        try:
            # one request of a client on the query thread's queue at a time: a client's
            # questions take turns with other clients', not all of them before the next client's
            while not turn.acquire(timeout=max(0.0, min(deadline - time.monotonic(), GONE_CHECK_EVERY))):
                if who.gone():
                    raise CallerGone("the client hung up before its turn")
                if time.monotonic() >= deadline:
                    raise Busy(f"no answer within {timeout:.0f} s; the server is busy")
            try:
                return self._run(fn, deadline, who.gone, timeout, who.urgent)
            finally:
                turn.release()
        finally:
            self._turn(who.peer, -1)

    def _turn(self, peer: Any, users: int) -> threading.Semaphore:
        """The turn of ``peer``'s requests, counting those that wait for it (``users``: +1 to
        take it, -1 to let it go; the last one forgets it)."""
        with self._counter:
            turn, count = self._turns.get(peer, (threading.Semaphore(1), 0))
            if count + users > 0:
                self._turns[peer] = (turn, count + users)
            else:
                self._turns.pop(peer, None)
            return turn

    def _run(
        self,
        fn: Callable[[Recaller], T],
        deadline: float,
        gone: Callable[[], bool] | None,
        timeout: float,
        urgent: bool = False,
    ) -> T:
        job = _Job(fn)
        if urgent:
            self._urgent.append(job)
            self._jobs.put(_URGENT)
        else:
            self._jobs.put(job)
        while True:
            left = deadline - time.monotonic()
            try:
                return job.future.result(timeout=max(0.0, min(left, GONE_CHECK_EVERY) if gone else left))
            except FutureTimeout:
                if gone is not None and gone() and job.future.cancel():  # not begun: never will be
                    raise CallerGone("the client hung up before its turn") from None
                if time.monotonic() >= deadline:
                    job.future.cancel()
                    raise Busy(f"no answer within {timeout:.0f} s; the server is busy") from None

    # ----- views of the past (on the query thread) ----------------------------------------------

    def _past_view(self, present: Recaller, as_of: float | None, valid_at: str | None) -> tuple[Recaller, bool]:
        """A view of the past over ``present`` at ``as_of`` and/or ``valid_at``, and whether it is
        kept (else the caller closes it after its question).

        A view kept is taken again for the same moment, and for another moment whose slice of
        history is the same (no version or link began or ended between the two, the same side of
        a prune): ``--as-of 7d`` asked twice is two moments a few seconds apart. Views read the
        snapshot they were opened over, and go with it when the index changes (the snapshot is
        swapped: they would answer from a present that is no longer the index's), after
        ``BRAIN_SERVE_PAST_IDLE`` seconds unasked, and beyond ``BRAIN_SERVE_PAST_VIEWS``, the least
        recently asked first: each holds its slice of history in memory."""
        from ..recall.opening import open_past_view

        for view in self.past_views:
            if view.present is present and view.valid_at == valid_at and self._same_slice(view, as_of):
                view.used = time.monotonic()
                if view.as_of != as_of:  # its moment, for what each answer says and dates by
                    view.as_of = view.recaller.as_of = as_of
                    view.recaller.store.as_of = as_of  # type: ignore[attr-defined]
                self.past_views.remove(view)
                self.past_views.append(view)
                return view.recaller, True
        beside = [view.recaller for view in self.past_views if view.present is present]
        recaller = open_past_view(present, as_of=as_of, valid_at=valid_at, beside=beside)
        self.past_opened += 1
        keep = config.serve_past_views()
        if not keep:
            return recaller, False
        self.past_views.append(PastView(recaller, present, as_of, valid_at, time.monotonic()))
        if len(self.past_views) > keep:
            while len(self.past_views) > keep:
                self.past_views.pop(0).recaller.close()
            release_free_memory()
        return recaller, True

    @staticmethod
    def _same_slice(view: PastView, as_of: float | None) -> bool:
        if view.as_of == as_of:
            return True
        if view.as_of is None or as_of is None:
            return False
        store = view.present.store
        pruned = float(store.get_meta("history_pruned_before", "0") or 0)
        if pruned and (view.as_of < pruned) != (as_of < pruned):
            return False
        return not store.history_changed_between(min(view.as_of, as_of), max(view.as_of, as_of))

    def _past_wait(self) -> float | None:
        """Seconds until the view of the past asked least recently has been unasked for
        ``BRAIN_SERVE_PAST_IDLE``; None when none is kept."""
        if not self.past_views:
            return None
        due = min(view.used for view in self.past_views) + config.serve_past_idle()
        return max(0.01, due - time.monotonic())

    def _let_go_of_past(self, *, present: Recaller | None = None, idle: float | None = None) -> int:
        """Close the views of the past over ``present`` (a snapshot closing), or unasked for
        ``idle`` seconds, or (neither given) all of them; how many."""
        now = time.monotonic()
        going = [
            view
            for view in self.past_views
            if (present is None or view.present is present) and (idle is None or now - view.used >= idle)
        ]
        for view in going:
            self.past_views.remove(view)
            view.recaller.close()
        if going:
            log.info("let go of %s of the past", plural(len(going), "view"))
        return len(going)

    # ----- operations -------------------------------------------------------------------------

    def ask(
        self,
        query: str,
        modes: Sequence[str],
        settings: RecallSettings,
        *,
        update: bool = True,
        wait: float = 0.0,
        index: dict[str, str | None] | None = None,
        as_of: float | None = None,
        valid_at: str | None = None,
    ) -> list[RecallResult]:
        """``index``: the client's model, tokenizer, chunking and prefixes (``protocol.INDEX_SETTINGS``),
        checked against the snapshot's as ``brain ask`` checks them in-process:
        ``IndexMismatchError`` when the index was built otherwise. ``as_of`` (Unix time) and
        ``valid_at`` (an ISO date): over a view of the past, as ``brain ask --as-of``/``--valid-at``
        answers in-process (``_past_view``)."""
        parsed = [Mode.parse(m) for m in modes]  # a bad mode is the caller's error, at once
        rebuilding = self.rebuilt_so_far()
        if rebuilding is not None:  # no index to answer from: said at once, not after the whole wait
            raise BrainError(rebuilding)
        deadline = time.monotonic() + wait
        if update and self.state == "empty":  # the first notes may be on their way in
            self._wait_until_settled(deadline)
        self._wait_for_snapshot(deadline)
        turn = None
        if update:
            # No watch (it failed: the vault is indexed again every few seconds instead): no
            # change is held to wait for, and an answer was up to one interval stale, saying
            # nothing. The question has the vault indexed again, and waits for a pass begun after
            # it asked (not for every pass other questions ask for: a stream never settled).
            turn = self.watcher.catch_up_now()
            if turn is None:
                self._wait_until_settled(deadline)
            else:
                self._wait_for_pass(turn, deadline)
        busy = self.watcher.busy if turn is None else not self.watcher.served(turn)
        unwatched = busy and self.watcher.unwatched
        pending = 0

        def work(recaller: Recaller) -> list[RecallResult]:
            nonlocal pending
            if index is not None:
                check_model(
                    recaller.store,
                    index.get("model") or self.model,
                    fts_tokenizer=index.get("fts_tokenizer"),
                    chunking=index.get("chunking"),
                    # the client's prefix overrides (null: unset there), not this process's
                    prefixes=(index.get("query_prefix"), index.get("passage_prefix"))
                    if any(name in index for name in protocol.PREFIX_SETTINGS)
                    else None,
                )
            if busy:
                pending = max(1, self._changed_notes(recaller.store))
            if as_of is None and valid_at is None:
                return recaller.compare(query, parsed, settings)
            view, kept = self._past_view(recaller, as_of, valid_at)
            try:
                results = view.compare(query, parsed, settings)
            finally:
                if not kept:
                    view.close()
            return results

        results = self.run(work, timeout=wait + QUERY_GRACE)
        with self._counter:
            self.queries += 1
        unindexed = self.unindexed
        gone = self.watcher.gone
        if gone:  # whatever else is pending: nothing can be indexed until it is back
            pending = max(1, pending)
            message = f"{gone}; answering from the index as it was"
        elif unwatched and not self.blocked:
            pending = max(1, pending)
            message = (
                "the vault cannot be watched now and brain serve is indexing it again for what changed; "
                "answering from the index as it is"
            )
        elif pending:
            doing = "another `brain index` is running" if self.blocked else "brain serve is indexing them"
            message = (
                f"{plural(pending, 'note')} changed since the last index and {doing}; answering from the index as it is"
            )
        elif unindexed:  # not busy, and its last pass failed: stale all the same
            pending, why = unindexed
            message = (
                f"{plural(pending, 'note')} changed since the last index and it cannot be updated now ({why}); "
                "answering from the index as it is"
            )
        if pending:
            for result in results:
                result.stale = pending
                result.warnings.append(message)
        if self.superseded is not None:  # `brain mcp`'s own service: the agent is told, not only the log
            for result in results:
                result.warnings.append(SUPERSEDED_ANSWER)
        return results

    def _changed_notes(self, store: IndexStore) -> int:
        """How many of the paths the watcher gathered are notes out of step: one created and
        deleted again before a pass, which the index never held, is no change (an editor's 300
        swap files had answers say "302 notes changed"). A folder counts as one."""
        paths = self.watcher.pending_paths()
        if len(paths) > CHANGED_CHECKED:  # a stat and a lookup each: past this, the count as it is
            return len(paths)
        return sum(
            1
            for rel in paths
            if rel.endswith("/") or rel == "." or os.path.lexists(self.root / rel) or store.note_id(rel) is not None
        )

    def note(
        self,
        ref: str,
        heading: str | None = None,
        max_chars: int | None = None,
        *,
        wait: float = 0.0,
        as_of: float | None = None,
    ) -> dict[str, Any]:
        """``brain note --json``'s answer; with ``as_of``, the note as it was then (from history)."""
        from ..reading import DEFAULT_MAX_CHARS, read_note
        from ..recall.timeline import read_note_at

        self._not_rebuilding()
        self._wait_for_snapshot(time.monotonic() + wait)
        limit = max_chars or DEFAULT_MAX_CHARS
        if as_of is not None:
            moment = as_of
            return self._read(lambda r: read_note_at(r.store, self.root, ref, moment, heading=heading, max_chars=limit))
        return self._read(lambda r: read_note(r.store, self.root, ref, heading=heading, max_chars=limit))

    def history(
        self, ref: str, *, last: int | None = None, wait: float = 0.0, as_of: float | None = None
    ) -> dict[str, Any]:
        """``brain history --json``'s answer (``last``: only the newest versions; ``as_of``: the
        note ``ref`` named then)."""
        from ..recall.timeline import history_of

        self._not_rebuilding()
        self._wait_for_snapshot(time.monotonic() + wait)
        return self._read(lambda r: history_of(r.store, ref, last=last, as_of=as_of).as_dict())

    def neighbours(self, ref: str, *, wait: float = 0.0) -> dict[str, Any]:
        from ..reading import neighbours

        self._not_rebuilding()
        self._wait_for_snapshot(time.monotonic() + wait)
        return self._read(lambda r: neighbours(r.store, ref))

    def _not_rebuilding(self) -> None:
        """A note's reads while a lost index is rebuilt: the line `brain ask` says. They answered
        from the snapshot of the deleted index (or another vault's put in its place), in silence."""
        rebuilding = self.rebuilt_so_far()
        if rebuilding is not None:
            raise BrainError(rebuilding)

    def _read(self, fn: Callable[[Recaller], T]) -> T:
        """``run`` for a note's reads: SQLite's failure is one line naming its fix, as the CLI's
        (a newer brain's index whose schema changed was "internal: OperationalError: …")."""
        with index_errors(config.index_dir(self.root), self.root):
            return self.run(fn, timeout=QUERY_GRACE)

    def status(self) -> dict[str, Any]:
        snapshot = self._snapshot
        watcher = self.watcher
        return {
            "vault": str(self.root),
            "pid": os.getpid(),
            "started_at": _iso(self.started_at),
            "uptime_s": round(time.time() - self.started_at, 1),
            "state": self.state,
            # while starting: what it does and for how long (null once it answers)
            "loading": {"doing": self.loading[0], "for_s": round(time.monotonic() - self.loading[1], 1)}
            if self.state == "starting"
            else None,
            "failure": self.failure,
            "empty": self.empty,
            "model": self.model,
            "queries": self.queries,
            "errors": self.errors,
            "index": None
            if snapshot is None
            else {
                "notes": snapshot.counts["notes"],
                "chunks": snapshot.counts["chunks"],
                "vectors_version": snapshot.marker[2],
                "loaded_at": _iso(snapshot.opened_at),
            },
            "watch": {
                "mode": watcher.mode,
                "batches": watcher.batches,
                "passes": watcher.passes,
                "busy": watcher.busy,
                "pending": watcher.pending if watcher.busy else 0,
                "gone": watcher.gone,
                "behind_s": watcher.behind(),
                # bursts so large the kernel may have dropped events of them: each started the
                # watch again and a pass over the whole vault
                "bursts": watcher.bursts,
                "last_burst": watcher.last_burst,
                # rescans that found changes no event told of (the watch missed them: a folder
                # unwatched): each started the watch again, until ``no_events``
                "unheard": watcher.unheard,
                "last_unheard": watcher.last_unheard,
                # set once restarts for them did not help: the vault looks like it gets no events
                # for its changes (a network or FUSE mount); since when, how many rescans since
                "no_events": watcher.no_events,
            },
            "last_update": self.last_update,
            # the index went from under the server and a pass builds it again: `brain status`'s
            # notes line (read from the index, 0 meanwhile) says so, not that the vault is empty
            "rebuilding": self.rebuild_progress(),
            # passes failing in a row (a read-only index folder, a full disk), else the idle check
            # failing in a row (what picks up another process's `brain index`): None once it works
            "indexing_failing": _failing(
                self.indexing, self.watcher.pass_failing, self.watcher.idle_failing, self.unindexed
            ),
            "past": {
                "views": [
                    {
                        "as_of": None if view.as_of is None else _iso(view.as_of),
                        "valid_at": view.valid_at,
                        "idle_s": round(time.monotonic() - view.used, 1),
                    }
                    for view in list(self.past_views)
                ],
                "opened": self.past_opened,
            },
        }

    def _wait_for_snapshot(self, deadline: float) -> None:
        with self._cond:
            while self._snapshot is None:
                if self.state == "failed":
                    raise BrainError(self.failure or "the index could not be loaded")
                if self.state == "empty":
                    raise EmptyIndexError(self.empty or "the index holds no notes")
                left = deadline - time.monotonic()
                if left <= 0:
                    raise Starting(f"brain serve is still starting ({self.loading_said()})")
                self._cond.wait(min(left, 0.25))

    def _wait_until_settled(self, deadline: float) -> None:
        """Wait while the watcher holds changes not yet in the snapshot, up to ``deadline`` less
        the time the answer will take after (``_answer_reserve``)."""
        while self.watcher.busy and not self.blocked:
            left = deadline - self._answer_reserve() - time.monotonic()
            if left <= 0:
                return
            with self._cond:
                self._cond.wait(min(left, 0.05))

    def _wait_for_pass(self, turn: int, deadline: float) -> None:
        """Wait until the watcher's pass number ``turn`` is served, up to ``deadline`` less the
        time the answer will take after (``_answer_reserve``)."""
        while not self.blocked:
            left = deadline - self._answer_reserve() - time.monotonic()
            if left <= 0 or self.watcher.served(turn, min(left, 0.5)):
                return

    # ----- requests ---------------------------------------------------------------------------

    def handle(self, message: dict[str, Any]) -> dict[str, Any]:
        """One checked request (``protocol.parse_request``) → its reply. Never raises."""
        from ..reading import NoteNotFound, OutsideVault

        try:
            if not protocol.names_vault(message["vault"], str(self.root)):
                raise protocol.ProtocolError(
                    "wrong_vault", f"this server answers for {self.root}, not {quoted(message['vault'])}"
                )
            op = message["op"]
            if op == "ping":
                return protocol.ok({"pid": os.getpid(), "vault": str(self.root)})
            if op == "status":
                return protocol.ok(self.status())
            if op == "ask":
                as_of, valid_at = protocol.past_fields(message)
                results = self.ask(
                    message["query"],
                    message["modes"],
                    protocol.settings_from_dict(message.get("settings", {})),
                    update=message.get("update", True),
                    wait=float(message.get("wait", 0)),
                    index=message.get("index"),
                    as_of=as_of,
                    valid_at=valid_at,
                )
                if message.get("output") == "json":
                    from ..output import result_json

                    return protocol.ok({"results": [result_json(r) for r in results]})
                return protocol.ok({"results": [protocol.encode_result(r) for r in results]})
            wait = float(message.get("wait", 0))
            if op == "note":
                as_of, _ = protocol.past_fields(message, world=False)
                return protocol.ok(
                    self.note(message["note"], message.get("heading"), message.get("max_chars"), wait=wait, as_of=as_of)
                )
            if op == "history":
                as_of, _ = protocol.past_fields(message, world=False)
                return protocol.ok(self.history(message["note"], last=message.get("last"), wait=wait, as_of=as_of))
            if op == "neighbours":
                return protocol.ok(self.neighbours(message["note"], wait=wait))
            raise protocol.ProtocolError("bad_request", f"op {quoted(op)} is not answered here")
        except protocol.ProtocolError as exc:
            return protocol.error(exc.code, exc.message)
        except Starting as exc:
            return protocol.error("starting", str(exc))
        except Busy as exc:  # taken: the question was queued (and may run on), not refused a place
            return protocol.error("busy", str(exc), taken=True)
        except OutsideVault as exc:
            return protocol.error("refused", str(exc))
        except NoteNotFound as exc:
            return protocol.error("not_found", str(exc))
        except IndexMismatchError as exc:
            return protocol.error("index_mismatch", str(exc))
        except BrainError as exc:
            return protocol.error("brain_error", str(exc))
        except Exception as exc:  # noqa: BLE001 - a bug: said in the log (on_failure), answered internal
            self.count_error()
            self.on_failure(f"request {message.get('op')} failed", exc)
            return protocol.error("internal", f"{type(exc).__name__}: {exc}")


def _failing(
    indexing: Failing, passes: Failing, idle: Failing, unindexed: tuple[int, str] | None
) -> dict[str, Any] | None:
    """What `brain status` says of passes failing in a row: how many, since when, the last
    one's reason and the notes left unindexed; of the idle check failing in a row (``what``:
    "idle check") when no pass fails, as it picks up what another process's `brain index` wrote
    (and an idle check failing every time was said nowhere but the log); None while they work."""
    failing = indexing if indexing.failures else passes if passes.failures else idle
    if not failing.failures:
        return None
    return {
        "what": "idle check" if failing is idle else "passes",
        "failures": failing.failures,
        "since": _iso(failing.since or time.time()),
        "why": failing.why,
        "unindexed": unindexed[0] if unindexed else None,
    }


def _log_failure(what: str, exc: BaseException) -> None:
    log.error("%s", what, exc_info=exc)


def fold_wal(store: IndexStore) -> bool:
    """Let the index's WAL start again from its beginning, now that the snapshot before ``store``
    is closed; True when it did. Runs on the query thread, between queries.

    A snapshot holds a read transaction for its whole life and a new one opens before the old
    closes, so some reader always held a place in the WAL: SQLite copied the WAL into the
    database but could never start it afresh, and it grew by every pass (with MiniLM, 150 MB
    after 200 edits of a 1.6 MB index). So: copy the WAL in up to ``store``'s state; when that
    is all of it (no commit came after ``store`` opened: a reader's place bounds the copy) and no
    writer can commit (this holds the write lock), ``store``'s transactions start again on the
    same state, now reading the database file alone, and the WAL is truncated. Another reader or
    a writer at work: nothing is done, and the next swap tries again.
    """
    if not store.still_at_its_path():
        return False
    try:
        side = connect(str(store.directory / INDEX_FILE), busy_timeout_ms=0)
    except sqlite3.Error:
        return False
    try:
        side.execute("SELECT count(*) FROM meta").fetchone()
        seen = side.execute("PRAGMA data_version").fetchone()[0]
        busy, frames, copied = side.execute("PRAGMA wal_checkpoint(PASSIVE)").fetchone()
        if busy or frames <= 0 or copied != frames:
            return False  # empty already, or a reader (or a commit after store's) holds part of it
        side.execute("BEGIN IMMEDIATE")  # no commit until store has started again
        side.execute("SELECT count(*) FROM meta").fetchone()
        if side.execute("PRAGMA data_version").fetchone()[0] != seen:
            return False  # a commit came after the copy: store's state is no longer the last
        store.restart_snapshot()  # on the same state, now read from the database file alone
        side.execute("ROLLBACK")
        busy, _, _ = side.execute("PRAGMA wal_checkpoint(TRUNCATE)").fetchone()
        return not busy
    except sqlite3.Error as exc:
        log.debug("the index's WAL was not folded in: %s", exc)
        return False
    finally:
        if side.in_transaction:
            side.execute("ROLLBACK")
        side.close()


def _wal_bytes(directory: Path) -> int:
    """The size of the index's WAL (0 when it is empty or absent)."""
    try:
        return os.stat(directory / f"{INDEX_FILE}-wal").st_size
    except OSError:
        return 0


def release_free_memory() -> bool:
    """Give back to the system the memory malloc keeps free (glibc's ``malloc_trim``); False
    where the C library has no such call (macOS, musl), and nothing is done.

    Run on the query thread after each snapshot swap, once the replaced snapshot is let go.
    Otherwise glibc keeps what a pass frees for the process, and the embedding model frees a
    lot in pieces between what it keeps: PyTorch on the CPU keeps oneDNN's primitives for each
    new length of text it embeds (up to 1,024 of them). With MiniLM that was most of what a
    server gained as notes were edited (``bench/serve_memory.py``). A millisecond or a few.
    """
    trim = _malloc_trim()
    if trim is None:
        return False
    trim(0)
    return True


@functools.cache
def _malloc_trim() -> Callable[[int], int] | None:
    import ctypes

    try:
        trim = ctypes.CDLL(None).malloc_trim  # the process's C library
    except (OSError, AttributeError):
        return None
    trim.argtypes = [ctypes.c_size_t]
    trim.restype = ctypes.c_int
    return trim


def _marker(store: Any) -> tuple:
    try:
        st = os.stat(store.directory / "index.db")
        identity: tuple = (st.st_dev, st.st_ino)
    except OSError:
        identity = ()
    # RELOAD: a `brain prune --vacuum` changes no row, but its pages wait in the WAL while the
    # snapshot holds the state before; a prune changes no present row either, and the snapshot
    # and its views of the past kept answering about what it dropped. Either way the new state
    # is loaded, and the old one let go of and the WAL folded in (``_close``).
    return (identity, store.get_meta("resolver_key"), store.vectors_version(), store.get_meta(RELOAD))


def _folders(paths: set[str]) -> frozenset[str]:
    folders = set()
    for path in paths:
        parts = path.split("/")[:-1]
        for depth in range(1, len(parts) + 1):
            folders.add("/".join(parts[:depth]))
    return frozenset(folders)


def _iso(timestamp: float) -> str:
    return time.strftime("%Y-%m-%dT%H:%M:%SZ", time.gmtime(timestamp))
