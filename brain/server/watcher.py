"""Watching a vault with ``watchfiles`` and turning what changed into index passes.

What file systems report is a hint, not a record: an editor's atomic save arrives as "added",
a renamed or moved-in folder only as the folder, files written right after ``mkdir`` can be
missed, and the order of events is lost. So an event only decides *when* to index, never
*what*: each pass is ``index_vault`` over the whole vault (the same function as ``brain
index``), which re-plans from disk by size, mtime and hash and so gets renames, folders and
missed files right. A pass is cheap when little changed (a stat walk, then only the changed
notes are read and embedded).

Batches: events are gathered until the vault has been quiet for ``settle_ms`` (or for at most
``max_wait_seconds`` of continuous change), so a ``git checkout`` of a thousand files is one
pass. Events in dot-folders (``.obsidian``, ``.git``, ``.trash``), in ``.brainignore``d paths,
sync-conflict copies and files that are neither notes nor folders never wake the indexer
(the rules are ``vault.excluded``, the same as the scan's). A full pass runs at start and every
``rescan_seconds`` as a safety net. When the kernel's watches run out, it falls back to
polling, loudly in the log; when no watch works at all, a full pass every few seconds, and one
for a question that wants the vault as it is (``catch_up_now``: no event can say it changed),
which waits for a pass begun after it asked; questions that come while one runs share the next,
and the passes are spaced to take at most ``CATCH_UP_SHARE`` of a CPU (``_may_begin``).

A burst the kernel may have dropped events of: inotify queues at most
``fs.inotify.max_queued_events`` events (16384 on most systems) for the watch to read; past that
it drops them and says only "overflow", with no path, which ``watchfiles`` drops in turn (it keeps
events that have one). A pass after the burst finds what changed, since each pass re-plans the
whole vault, but a folder made while the queue was full was never watched, so its notes saved
later were heard by nothing and waited for the rescan, minutes on, the server saying it was idle.
So a burst of ``_burst_limit()`` events or more (as many as a full queue holds of new notes'
events, four each, halved) starts the watch again (every folder watched as it is then) and a pass
over the whole vault, said in the log and in the status (``bursts``, ``last_burst``).

A rescan that finds changes under a watch: no event told of them, so the watch missed something
(a folder made in an overflow under that limit, a create event lost otherwise), and a folder it
missed stays unwatched, every note saved there waiting for the next rescan, until the server
restarts. So such a rescan (``on_batch`` returns how many notes its pass found changed) starts
the watch again, as a burst does, said in the log (the first whole, the others counted) and in
the status (``unheard``, ``last_unheard``); unless an event came while it ran (a note saved then
is found by the rescan and heard just after, which says nothing of a folder missed). A vault
that gets no events for some changes (a network or FUSE mount edited from elsewhere: inotify
hears only this machine's writes) had every rescan find changes and start the watch again, with
a pass over the whole vault, for as long as the server ran: after ``NO_EVENTS_AFTER`` such
restarts in a row with no event heard between them, the watcher says once that the vault looks
like it gets no events, names ``WATCHFILES_FORCE_POLLING=1``, and starts the watch again no more
for them (the rescan found the changes; ``no_events`` in the status). When an event is heard
again (the mount remounted, a note saved on this machine), ``no_events`` is cleared, said in the
log, and rescans that find changes no event told of start the watch again as before.

Symlinks out of the vault, which the scan follows: no event in the vault's tree says that a
note kept elsewhere was saved, or that a folder linked in after the watch began changed (inotify
follows only the links there when it starts). So the watch also takes each folder the last
pass's walk followed out of the vault (and starts again, with a pass, when that set changes),
and every ``settle_ms`` the watcher compares each such link's target (and each link that led
nowhere) with what the walk saw of it: one ``stat`` a link, at most 2% of a CPU.
"""

from __future__ import annotations

import logging
import os
import threading
import time
from collections.abc import Callable, Iterable
from dataclasses import dataclass, field
from functools import partial
from pathlib import Path
from typing import Any

from ..text import plural
from ..vault import IGNORE_FILE, Link, excluded, link_stat, load_ignore, name_rule, walk_tree

log = logging.getLogger("brain")

STEP_MS = 50  # how often watchfiles looks for new events while a batch grows
MAX_DEBOUNCE_MS = 2000  # watchfiles hands over a growing batch at least this often


class _VaultReplaced(Exception):
    """The vault's path no longer leads to the folder being watched."""


class _Rewatch(Exception):
    """The folders out of the vault to watch are no longer those being watched."""


class _Burst(Exception):
    """So many events came that the kernel may have dropped some (``_burst_limit``)."""


class _Unheard(Exception):
    """A rescan under the watch found changes that no event told of: the watch missed some."""


POLL_SHARE = 0.02  # of a CPU, at most, for comparing the symlinks' targets with what the walk saw
MODES_SHARE = 0.02  # of a CPU, at most, for looking for changes of mode under polling (``_poll_modes``)
RETRY_SECONDS = 5.0  # between tries to watch again after watching failed
CATCH_UP_SHARE = 0.05  # of a CPU, at most, for indexing the vault again while it cannot be watched
QUEUE_FILE = "/proc/sys/fs/inotify/max_queued_events"
EVENTS_PER_NOTE = 8  # a new note is four inotify events (create, open, modify, close), twice over for margin
# Rescans in a row that found changes no event told of, each starting the watch again, with no
# event heard between them: past these the vault is taken for one that gets no events for its
# changes (a network or FUSE mount), said once, and the watch is not started again for them
NO_EVENTS_AFTER = 3


def _burst_limit() -> int:
    """Events heard in one burst from which the kernel's queue may have overflowed: a full queue
    of new notes' events, four a note, is ``max_queued_events / 4`` changes heard (4,096 of 16,384,
    measured); half that, for notes with more events each (an mtime set, writes in chunks)."""
    try:
        with open(QUEUE_FILE) as f:
            queued = int(f.read())
    except (OSError, ValueError):
        queued = 16384
    return max(64, queued // EVENTS_PER_NOTE)


@dataclass
class Batch:
    reason: str  # start | changes | rescan | burst (changes the kernel may have dropped some of: ``_Burst``)
    paths: frozenset[str] = frozenset()  # vault-relative notes and folders ("Folder/", "." the vault) that changed
    first_seen: float = field(default_factory=time.monotonic)  # when the first of them was noticed
    # When the first event (or changed symlink or mode) among them was heard; None when none told
    # of a change: the start pass, a rescan, a look after watching began again. What changed then
    # changed some time before, unknown, so no lag is measured from it.
    first_event: float | None = None


def log_failure(what: str, exc: BaseException) -> None:
    """A failure said with its whole traceback (``brain serve``'s daemon says the first of each
    kind whole and counts the others: ``daemon._Said.failed``)."""
    log.error("%s", what, exc_info=exc)


class Failing:
    """Something done again and again (an index pass, an idle check) that may fail the same way
    every time: a read-only index folder, a full disk, a vault folder at mode 000. Each failure
    is handed to ``say`` (``Service.on_failure``: in the daemon, the first traceback of a kind
    whole, the others counted), and the first success after is said with how many there were:
    one traceback a pass wrote the same lines every few seconds for as long as it lasted."""

    def __init__(self, what: str, say: Callable[[str, BaseException], None] = log_failure):
        self.what = what
        self.say = say
        self.failures = 0  # since the last success
        self.since: float | None = None  # time.time() of the first of them
        self.why: str | None = None  # the last of them, one line

    def failed(self, exc: BaseException | None = None, *, why: str | None = None) -> None:
        """One more failure: ``exc`` is said (``say``); ``why`` alone, already said, is counted."""
        self.failures += 1
        if self.since is None:
            self.since = time.time()
        self.why = why if why is not None else f"{type(exc).__name__}: {exc}"
        if exc is not None:
            self.say(f"{self.what} failed", exc)

    def worked(self) -> None:
        """A success: said when failures came before it."""
        if self.failures:
            log.warning(
                "%s works again after %d failure%s since %s",
                self.what,
                self.failures,
                "" if self.failures == 1 else "s",
                time.strftime("%Y-%m-%d %H:%M:%S", time.localtime(self.since or time.time())),
            )
        self.failures, self.since, self.why = 0, None, None


class VaultWatcher:
    """Runs ``on_batch`` on its own thread: once at start, then for every settled batch.
    ``on_batch`` returns how many notes its pass found changed (None: not known), which for a
    rescan is what no event told of (``_Unheard``)."""

    def __init__(
        self,
        root: Path,
        on_batch: Callable[[Batch], int | None],
        *,
        on_idle: Callable[[], None] = lambda: None,
        known_folder: Callable[[str], bool] = lambda rel: False,
        watch: bool = True,
        settle_ms: int = 300,
        max_wait_seconds: float = 10.0,
        rescan_seconds: float = 300.0,
        force_polling: bool | None = None,
        on_failure: Callable[[str, BaseException], None] = log_failure,
    ):
        self.root = root
        self.on_batch = on_batch
        self.on_idle = on_idle
        # a pass or idle check that raised: its traceback said once, repeats counted (``Failing``)
        self.pass_failing = Failing("an index pass", on_failure)
        self.idle_failing = Failing("the idle check", on_failure)
        self.known_folder = known_folder
        self.watch_enabled = watch
        self.settle_ms = settle_ms
        self.max_wait_seconds = max_wait_seconds
        self.rescan_seconds = rescan_seconds
        self.force_polling = force_polling
        # events heard in a burst from which the kernel may have dropped some (``_Burst``)
        self.burst_events = _burst_limit()
        self._heard = 0  # events watchfiles handed over since the last pass was handed its batch or a quiet moment
        self._burst_pass = False  # the next pass is for a burst (its batch's reason: "burst")
        self.bursts = 0  # such bursts so far
        self.last_burst: dict[str, Any] | None = None  # the last: when, how many events, the limit
        self._bursts_since: str | None = None  # when the first was (the log counts the others)
        self._found = 0  # notes the last pass found changed (``on_batch``'s answer)
        self.unheard = 0  # rescans that found changes no event told of (``_missed``)
        self.last_unheard: dict[str, Any] | None = None  # the last: when, how many changes
        self._unheard_since: str | None = None  # when the first was (the log counts the others)
        self._unheard_row = 0  # such rescans since an event was last heard
        # once ``NO_EVENTS_AFTER`` of them did not help: since when, and how many rescans found
        # changes no event told of since (the watch is no longer started again for them)
        self.no_events: dict[str, Any] | None = None
        self._no_events_said = False  # the whole warning said (a later time is one line)
        self.mode = "starting" if watch else "off"
        self.gone: str | None = None  # while the vault's path leads nowhere: what every answer says
        self._failing: str | None = None  # why watching failed, until it works again (said once)
        self._modes_changed = False  # a folder's mode changed: watch again after its pass
        self.batches = 0  # batches of changes seen
        self.passes = 0  # index passes run (start and rescans included)
        self.stopping = threading.Event()
        # Passes begun and ended (``_pass``), and the pass the last question waits for: the
        # first to begin after it asked (``catch_up_now``), under ``_turns``
        self._turns = threading.Condition()
        self._begun = self._ended = self._wanted = 0
        # While no watch hears changes: when the last pass began, and how long each pass is to
        # stand for so that passes take at most CATCH_UP_SHARE of a CPU (``_may_begin``)
        self._last_begun = 0.0
        self._spacing = 0.0
        self._owed = 0.0  # the moment the passes so far have paid for, in ``_spacing``s
        self._pending: set[str] = set()
        self._first_seen: float | None = None
        self._first_event: float | None = None  # when the first change heard of in ``_pending`` was
        self._running = False  # a pass is running
        self._draining = False  # a pass under the watch ended; its events not yet gathered (``busy``)
        self._in_flight: frozenset[str] = frozenset()  # paths of the batch that pass is indexing
        self._in_flight_event: float | None = None  # when the first change of that batch was heard
        self._started = False
        self._spec = load_ignore(root)
        # From the last pass's walk (``follow``): each symlink out of the vault or nowhere →
        # what it led to then; and each folder it followed out of the vault → the link's path.
        self._links: dict[str, tuple[int, ...] | None] = {}
        self._outside: dict[str, str] = {}
        self._next_poll = 0.0
        # Under polling: each note's and folder's ctime less its mtime at the last look (``_poll_modes``)
        self._modes: dict[str, int] | None = None
        self._next_modes = 0.0
        self._thread = threading.Thread(target=self._run, name="brain-watch", daemon=True)

    # ----- what the service reads -----------------------------------------------------------

    @property
    def busy(self) -> bool:
        """Changes seen (or the first scan, or a question's pass) not yet in the served index,
        or a pass just ended whose events watchfiles has not handed over yet: a note saved while
        a pass ran was taken for served (``brain ask`` answered without it, `brain status` said
        fresh) until watchfiles next yielded, 50 to 300 ms on."""
        return not self._started or self._running or self._draining or bool(self._pending) or self._wanted > self._ended

    @property
    def pending(self) -> int:
        """Changed paths not yet served: gathered, and in the pass now running."""
        return len(self._pending) + len(self._in_flight)

    def pending_paths(self) -> set[str]:
        """The changed paths not yet served (``pending``'s), as a copy."""
        while True:
            try:
                return set(self._pending) | self._in_flight
            except RuntimeError:  # the watching thread added one while this copied: again
                continue

    @property
    def unwatched(self) -> bool:
        """No watch hears changes now (it failed, or the vault's path cannot be watched): the
        vault is indexed again every so often instead, and a change since the last pass is
        nothing ``busy`` knows of."""
        return self.mode == "rescans" or (self._failing is not None and not self.stopping.is_set())

    def catch_up_now(self) -> int | None:
        """A question wants the vault as it is now (``brain ask``'s freshness rule) while no
        watch can say what changed: the number of the pass over the whole vault that answers it
        (``served``), the first to begin from now, as one that began before may have missed a
        save made just before the question. Questions asking while a pass runs share the next
        one, and the passes are spaced (``_may_begin``): a stream of questions made them back to
        back, a CPU's worth. None when a watch is on (its events are what ``busy`` waits for)."""
        if not self.unwatched:
            return None
        with self._turns:
            if self._first_seen is None:
                self._first_seen = time.monotonic()
            self._wanted = self._begun + 1
            self._turns.notify_all()
            return self._wanted

    def pass_now(self) -> None:
        """A pass over the whole vault at once (the service's idle check found its index gone):
        on the watching thread (``on_idle``), as the next quiet moment's batch under a watch, the
        next pass when none is on."""
        self._again()
        with self._turns:
            self._wanted = self._begun + 1
            self._turns.notify_all()

    def served(self, turn: int, wait: float = 0.0) -> bool:
        """Whether pass number ``turn`` (``catch_up_now``'s) has ended, its state served; waiting
        up to ``wait`` seconds for it (woken as it ends: a stream's hundreds of questions each
        looking every 50 ms held the interpreter's lock from the pass and the answers)."""
        with self._turns:
            return self._turns.wait_for(lambda: self._ended >= turn or self.stopping.is_set(), wait)

    def behind(self) -> float | None:
        """Seconds since the first change heard that is not yet served (gathered, or in the pass
        now running), or None: level, or a pass no event told of (the start, a rescan), whose
        changes changed some time before, unknown (``Batch.first_event``, ``last_update.lag_s``).
        It counted from when such a pass began, as if a change had been heard then."""
        heard = [when for when in (self._in_flight_event, self._first_event) if when is not None]
        return round(time.monotonic() - min(heard), 3) if heard else None

    # ----- life -------------------------------------------------------------------------------

    def start(self) -> None:
        self._thread.start()

    def stop(self, timeout: float = 10.0) -> None:
        self.stopping.set()
        with self._turns:
            self._turns.notify_all()
        if self._thread.is_alive():
            self._thread.join(timeout)
            if self._thread.is_alive():
                log.warning("the indexing thread did not stop within %.0f s; leaving it", timeout)

    def _run(self) -> None:
        self._first_seen = time.monotonic()
        self._pass(Batch("start", first_seen=self._first_seen))
        utf8 = _utf8(self.root)
        if self.watch_enabled and utf8:
            # The start pass walked the vault before the watch began, and no event tells of a
            # note saved in between (a walk of the vault for changes of mode under polling, a
            # loaded machine: seconds): it was served only after the next full pass, minutes
            # on. A pass once the watch is on finds it; until then the watcher is busy.
            self._again()
        self._started = True
        if not self.watch_enabled:
            while not self.stopping.wait(1.0):
                self._idle()
                if self._pending:  # a pass asked for (``pass_now``)
                    self._catch_up()
            return
        if not utf8:
            # watchfiles takes only UTF-8 paths: it failed on every try, a traceback every 5 s
            log.warning(
                "cannot watch %s: its path is not UTF-8, which watchfiles cannot take; "
                "the vault is indexed again every %.0f s instead",
                self.root,
                self.rescan_seconds,
            )
            self.mode = "rescans"
            self._rescan_only()
            return
        force = self.force_polling
        folder = self._identity()
        while not self.stopping.is_set():
            trying = time.thread_time()
            try:
                self._watch(force)
                return
            except _Burst:
                self._restart_burst()
            except _Unheard as unheard:
                self._restart_unheard(unheard.args[0])
            except _Rewatch:
                # Folders linked in or out, or made readable: the events the old watch held are
                # lost with it
                log.info("watching %s again, with %s out of it", self.root, plural(len(self._outside), "folder"))
                self._again()
            except (FileNotFoundError, _VaultReplaced) as exc:
                if isinstance(exc, FileNotFoundError) and self._identity() == folder:
                    # not the vault: a folder linked out of it, gone before the watch began
                    log.info("a folder linked into %s went before it was watched; watching again", self.root)
                    self._again()
                    if self.stopping.wait(0.2):
                        return
                    continue
                # inotify follows the folder, not its name: a vault moved away is still watched
                # where it went, and one deleted or swapped for another is not watched at all
                log.error("the vault %s was moved, deleted or replaced; watching again when it is back", self.root)
                if not self.root.is_dir():
                    # local, as `brain ask` says its other times (it said UTC: two clocks)
                    since = time.strftime("%Y-%m-%d %H:%M:%S local", time.localtime())
                    self.gone = f"the vault {self.root} was moved or deleted at {since}"
                while not self.root.is_dir():
                    if self.stopping.wait(1.0):
                        return
                self.gone = None
                log.info("the vault %s is back; indexing it", self.root)
                folder = self._identity()
                self._again()
            except Exception as exc:  # noqa: BLE001 - said in the log below, once a kind
                if "Unable to decode path" in str(exc):
                    # watchfiles gives up on a file name that is not UTF-8 (the scan skips such a
                    # file); polling fails on it the same way, so watch again and index the vault
                    # for the events lost with the watch
                    log.warning("watching %s: %s (not UTF-8; skipped); watching again", self.root, exc)
                    self._again()
                    if self.stopping.wait(0.5):
                        return
                    continue
                if force:
                    # The poller gives up on the whole vault for one symlink loop in it (a note's
                    # or a folder's) for as long as the loop is there: it was tried again every
                    # 5 s, a traceback each time, and nothing was indexed until the loop went
                    problem = f"{type(exc).__name__}: {exc}"
                    if problem != self._failing:
                        log.error(
                            "watching %s failed (%s); indexing it again every few seconds until it can be watched",
                            self.root,
                            problem,
                        )
                        self._failing = problem
                    self.mode = "rescans"
                    # trying to watch walked the vault too (the poller's first look): its CPU is
                    # paid for as a pass's is, and it is tried again as often as the passes run
                    self._owed = max(self._owed, time.monotonic()) + (time.thread_time() - trying) / CATCH_UP_SHARE
                    if self._unwatched(RETRY_SECONDS, max(RETRY_SECONDS, self._spacing)):
                        return
                else:
                    log.warning(
                        "watching %s with file-system events failed (%s: %s); polling instead "
                        "(raise fs.inotify.max_user_watches to go back to events)",
                        self.root,
                        type(exc).__name__,
                        exc,
                    )
                    force = True

    def _restart_burst(self) -> None:
        """A burst of ``_heard`` events, as many as the kernel may have dropped some of: the watch
        starts again (a folder made while its queue was full would never be heard of) with a pass
        over the whole vault. Said whole the first time, then one line with the count: a sync tool
        writing 3,000 notes a minute wrote the whole warning every minute."""
        self.bursts += 1
        at = time.strftime("%Y-%m-%dT%H:%M:%SZ", time.gmtime())
        self.last_burst = {"at": at, "events": self._heard, "limit": self.burst_events}
        if self._bursts_since is None:
            self._bursts_since = at
            log.warning(
                "%s events heard in one burst, as many as the kernel may have dropped some of "
                "(fs.inotify.max_queued_events %s); watching %s again and indexing all of it "
                "(a folder made while its queue was full would never be heard of; said once: "
                "brain status --json counts them: watch.bursts)",
                self._heard,
                _queue_size(),
                self.root,
            )
        else:
            log.info(
                "%s events heard in one burst (%d bursts since %s); watching %s again and indexing all of it",
                self._heard,
                self.bursts,
                self._bursts_since,
                self.root,
            )
        self._burst_pass = True
        self._again()

    def _missed(self, found: int) -> bool:
        """A rescan found ``found`` notes changed that no event told of: counted (the status's
        ``unheard``); True when the watch is to start again for it (``_restart_unheard``). Not
        once ``NO_EVENTS_AFTER`` such restarts in a row, no event heard between them, did not
        help: the vault looks like it gets no events for its changes (a network or FUSE mount
        edited from another machine), which a new watch does not mend, and each restart cost a
        pass over the whole vault after the rescan's, every rescan, for as long as the server ran.
        Said once, naming the polling setting."""
        self.unheard += 1
        at = time.strftime("%Y-%m-%dT%H:%M:%SZ", time.gmtime())
        self.last_unheard = {"at": at, "changes": found}
        self._unheard_row += 1
        if self.no_events is not None:
            self.no_events["rescans"] += 1
            return False
        if self._unheard_row <= NO_EVENTS_AFTER:
            return True
        self.no_events = {"since": at, "rescans": 1}
        if self._no_events_said:
            log.info(
                "%s rescans in a row of %s found changes no event told of again; the watch is no longer "
                "started again for them (brain status --json: watch.no_events)",
                self._unheard_row,
                self.root,
            )
            return False
        self._no_events_said = True
        log.warning(
            "%s rescans in a row of %s found changes no event told of, and watching it again did not help: "
            "the vault looks like it gets no file-system events for them (a network or FUSE mount edited "
            "elsewhere?); they wait for the rescan every %.0f s. Set WATCHFILES_FORCE_POLLING=1 for brain "
            "serve to poll it. The watch is no longer started again for them (said once; brain status "
            "--json: watch.no_events)",
            self._unheard_row,
            self.root,
            self.rescan_seconds,
        )
        return False

    def _heard_again(self, deaf: dict[str, Any]) -> None:
        """An event heard in a vault taken for one that gets none (``no_events``): it does now (a
        mount remounted), so the status says so no more and a rescan finding changes no event told
        of starts the watch again, as before. Said in the log."""
        log.info(
            "an event heard in %s, taken since %s for a vault that gets none (%s): rescans that find "
            "changes no event told of start the watch again",
            self.root,
            deaf["since"],
            plural(deaf["rescans"], "unheard rescan"),
        )
        self.no_events = None

    def _restart_unheard(self, found: int) -> None:
        """A rescan found ``found`` notes changed that no event told of (``_missed``): the watch
        missed them (a folder made while the kernel's queue was full, under ``_burst_limit``; a
        create event lost), so a folder may be unwatched, its saves heard by nothing until the
        next rescan. The watch starts again (every folder watched as it is then), as after a
        burst; said whole the first time, then one line with the count."""
        if self._unheard_since is None:
            self._unheard_since = self.last_unheard["at"] if self.last_unheard else "?"
            log.warning(
                "a rescan of %s found %s no event told of, so the watch is missing something (a folder "
                "made while the kernel dropped events, a lost event): a note saved in a folder it missed "
                "waits for the next rescan; watching it again (said once; brain status --json counts "
                "them: watch.unheard)",
                self.root,
                plural(found, "change"),
            )
        else:
            log.info(
                "a rescan found %s no event told of (%d times since %s); watching %s again",
                plural(found, "change"),
                self.unheard,
                self._unheard_since,
                self.root,
            )
        self._again()

    def follow(self, links: Iterable[Link]) -> None:
        """The symlinks the walk of the pass now running took out of the vault (or nowhere):
        ``on_batch`` hands them over (on this thread) once its pass has indexed them."""
        links = list(links)
        self._links = {rel: seen for rel, seen, _ in links}
        self._outside = {real: rel for rel, _, real in links if real is not None}

    def _rescan_only(self) -> None:
        """No events: a full pass every ``rescan_seconds``, and for questions."""
        self._unwatched(self.rescan_seconds, None)

    def _unwatched(self, every: float, until: float | None) -> bool:
        """While no watch hears changes: a pass over the whole vault every ``every`` seconds and
        for the questions that want one (``catch_up_now``), all spaced by ``_may_begin``; for
        ``until`` seconds (None: for good), then False (time to try watching again), or True
        once stopping."""
        ends = None if until is None else time.monotonic() + until
        while not self.stopping.is_set():
            now = time.monotonic()
            if ends is not None and now >= ends:
                return False
            with self._turns:
                asked = self._wanted > self._begun
            due = now if asked else self._last_begun + every
            begin = max(due, self._may_begin())
            if now >= begin:
                self._catch_up()
                continue
            wake = begin if ends is None else min(begin, ends)
            with self._turns:
                self._turns.wait_for(partial(self._woken, asked), timeout=min(1.0, wake - now))
            self._idle()
        return True

    def _woken(self, asked: bool) -> bool:
        """Stopping, or a question's wish when that is what was missing (else: the spacing)."""
        return self.stopping.is_set() or (not asked and self._wanted > self._begun)

    def _may_begin(self) -> float:
        """When the next pass may begin while no watch hears changes: each pass stands for
        ``_spacing`` (its time over ``CATCH_UP_SHARE``), so they take at most that share of a
        CPU, and one may come at once after a quiet spell (a question just after a rescan)."""
        return self._owed - self._spacing

    def _again(self) -> None:
        """A new watch: what changed while none was on is found by a pass over the whole vault,
        at its first quiet moment."""
        if not self._pending:
            self._first_seen = time.monotonic()
        self._pending.add(".")

    def _catch_up(self) -> None:
        """A pass over the whole vault for what no watch heard (the gathered paths with it)."""
        started, cpu = time.monotonic(), time.thread_time()
        self._pending.clear()
        self._first_event = None
        self._first_seen = started
        self._pass(Batch("rescan", first_seen=started))
        # its CPU, not its wall time: on a busy machine a pass waits for a CPU too, and spacing
        # by that left a stream's questions waiting out their timeout
        self._spacing = (time.thread_time() - cpu) / CATCH_UP_SHARE
        self._owed = max(self._owed, started) + self._spacing

    def _rescan(self, now: float) -> float:
        """A pass over the whole vault; returns when it ended (the next is due from then)."""
        self._pending.clear()
        self._first_event = None
        self._first_seen = now
        self._pass(Batch("rescan", first_seen=now), draining=True)
        return time.monotonic()

    def _watch(self, force_polling: bool | None) -> None:
        from watchfiles import watch

        polling = bool(force_polling or os.environ.get("WATCHFILES_FORCE_POLLING"))
        self._draining = False  # the last watch's events are lost with it: ``_again`` has a pass for them
        self._modes = None
        if polling:
            self._poll_modes()  # what a change of mode is news against, from before the watch
        self.mode = "polling" if polling else "events"
        last_pass = last_change = time.monotonic()
        folder = self._identity()
        if folder is None:
            raise FileNotFoundError(self.root)
        watching = set(self._outside)
        outside = sorted(path for path in watching if os.path.isdir(path))
        self._modes_changed = False
        self._heard = 0
        unheard = 0  # changes the last rescan found, until the events heard while it ran are gathered
        for changes in watch(
            self.root,
            *outside,
            watch_filter=self._wakes,
            debounce=MAX_DEBOUNCE_MS,
            step=STEP_MS,
            stop_event=self.stopping,
            rust_timeout=self.settle_ms,
            yield_on_timeout=True,
            raise_interrupt=False,
            force_polling=force_polling,
            # a folder that cannot be read (another user's, chmod 000) failed the whole watch,
            # and then polling, which fails on it too; now it is left out until its mode changes
            ignore_permission_denied=True,
        ):
            if self._identity() != folder:
                raise _VaultReplaced(self.root)
            if self._failing:
                log.info("watching %s again", self.root)
                self._failing = None
                self._again()  # what changed since the last pass, and a question waiting for one
            now = time.monotonic()
            paths = self._relevant(changes) if changes else set()
            if paths:
                self._unheard_row = 0  # an event heard: the watch hears this vault
                if self.no_events is not None:
                    self._heard_again(self.no_events)
            if self._links and now >= self._next_poll:
                paths |= self._poll_links()
            if self.mode == "polling" and now >= self._next_modes:
                paths |= self._poll_modes()
            if not changes and not paths and not self._pending:
                # quiet for settle_ms with nothing gathered: what was heard before (a dot-folder's
                # events, .git's or Obsidian's workspace, no batch came of) ended there and was no
                # burst; counted on, a day of them made the next note saved a "burst"
                self._heard = 0
            if unheard:
                # none heard while the rescan ran: what it found, no event told of (a note saved
                # during it is found by it and heard just after, which is no sign of a missed folder)
                found, unheard = unheard, 0
                if not paths and self._missed(found):
                    raise _Unheard(found)
            if paths:
                if not self._pending:
                    self._first_seen = now
                if self._first_event is None:
                    self._first_event = now
                self._pending |= paths
                self._draining = False
                last_change = now
                if now - (self._first_seen or now) < self.max_wait_seconds:
                    continue  # still changing: gather more before indexing
            else:
                self._draining = False
                if changes and self._pending and now - last_change < self.settle_ms / 1000:
                    continue  # only events that change nothing (an attachment being written): not quiet yet
            if self._pending:  # quiet for settle_ms, or changing for too long
                if self._heard >= self.burst_events and not polling:
                    raise _Burst()  # a new watch, then this batch with a pass over the whole vault
                self._heard = 0
                self.batches += 1
                batch, self._pending = frozenset(self._pending), set()
                heard, self._first_event = self._first_event, None
                reason = "burst" if self._burst_pass else "changes"
                self._burst_pass = False
                self._pass(Batch(reason, batch, self._first_seen or now, heard), draining=True)
                last_pass = time.monotonic()
            elif now - last_pass >= self.rescan_seconds:
                last_pass = self._rescan(now)
                if not polling:  # a poller looks at every folder: none is left out
                    unheard = self._found  # said when the events of the pass's time are gathered
            else:
                self._idle()
                continue
            if set(self._outside) != watching or self._modes_changed:
                raise _Rewatch()

    def _poll_links(self) -> set[str]:
        """The symlinks whose target is not what the last walk saw of it (saved, replaced, gone,
        come back, led elsewhere). Each is said once: the next pass's walk says it again."""
        started = time.perf_counter()
        changed = set()
        for rel, seen in self._links.items():
            try:
                now = link_stat(os.stat(os.path.join(self.root, *rel.split("/"))))
            except OSError:
                now = None
            if now != seen:
                self._links[rel] = now
                changed.add(rel)
                if rel == IGNORE_FILE:  # kept elsewhere: new rules for the events to come
                    self._spec = load_ignore(self.root)
        took = time.perf_counter() - started
        self._next_poll = time.monotonic() + max(self.settle_ms / 1000, took / POLL_SHARE)
        return changed

    def _poll_modes(self) -> set[str]:
        """Under polling: the notes and folders whose mode (or owner, or ACL) changed since the
        last look. watchfiles' poller compares mtimes, which chmod leaves as they were, so a note
        made unreadable was served until the rescan, five minutes on; each change of mode moves
        the ctime away from the mtime, where a write moves both to the same moment (and is the
        poller's to hear). A walk of the vault (no dot-folder, no symlinked folder: ``_poll_links`` has those): one
        ``stat`` a note and a folder, at most ``MODES_SHARE`` of a CPU (42 ms of CPU at 10,000
        notes: a look every 2 s)."""
        started = time.thread_time()
        seen: dict[str, int] = {}  # 0 for a note last written: one int object for them all
        stack = [("", str(self.root))]
        while stack:
            prefix, folder = stack.pop()
            try:
                with os.scandir(folder) as listing:
                    entries = list(listing)
            except OSError:
                continue
            for entry in entries:
                name = entry.name
                if name.startswith("."):
                    continue
                try:
                    if entry.is_dir(follow_symlinks=False):
                        st = entry.stat(follow_symlinks=False)
                        stack.append((f"{prefix}{name}/", entry.path))
                        seen[f"{prefix}{name}/"] = st.st_ctime_ns - st.st_mtime_ns
                    elif name.lower().endswith(".md"):
                        st = entry.stat()  # a linked note's target: its mode is what is read
                        seen[prefix + name] = st.st_ctime_ns - st.st_mtime_ns
                except OSError:
                    continue
        before, self._modes = self._modes, seen
        changed = set()
        if before is not None:
            for rel, apart in seen.items():
                was = before.get(rel, apart)
                if was != apart and not excluded(rel.rstrip("/"), self._spec, is_dir=rel.endswith("/")):
                    changed.add(rel)
        took = time.thread_time() - started
        self._next_modes = time.monotonic() + max(self.settle_ms / 1000, took / MODES_SHARE)
        return changed

    def _identity(self) -> tuple[int, int] | None:
        """The vault folder itself (device, inode) now, or None when nothing is at its path."""
        try:
            st = os.stat(self.root)
        except OSError:
            return None
        return (st.st_dev, st.st_ino)

    def _pass(self, batch: Batch, *, draining: bool = False) -> None:
        """``on_batch`` for ``batch``. ``draining``: under a watch, whose events from while the
        pass ran are not in ``_pending`` until ``watch`` next yields (``busy`` till then)."""
        self._running = True
        self._draining = draining
        self._in_flight, self._in_flight_event = batch.paths, batch.first_event
        with self._turns:  # before anything of the vault is read: it serves the questions asked so far
            self._begun += 1
            self._last_begun = time.monotonic()
        self._found = 0
        try:
            self.passes += 1
            self._found = self.on_batch(batch) or 0
        except Exception as exc:  # noqa: BLE001 - said (once whole, then counted), tried again at the next pass
            self.pass_failing.failed(exc)
        else:
            self.pass_failing.worked()
        finally:
            with self._turns:
                self._ended += 1
                self._turns.notify_all()
            self._running = False
            self._in_flight, self._in_flight_event = frozenset(), None
            if not self._pending and self._wanted <= self._ended:
                self._first_seen = None

    def _idle(self) -> None:
        try:
            self.on_idle()
        except Exception as exc:  # noqa: BLE001 - said (once whole, then counted), tried again in a moment
            self.idle_failing.failed(exc)
        else:
            self.idle_failing.worked()

    # ----- which events matter ----------------------------------------------------------------

    def _wakes(self, _change: object, path: str) -> bool:
        """The cheap first filter (inside watchfiles): nothing under a dot-folder wakes us."""
        self._heard += 1  # every event takes a place in the kernel's queue, a dot-folder's too
        rel = self._rel(path)
        return rel is not None and (_is_ignore_file(rel) or not any(p.startswith(".") for p in rel.split("/")))

    def _relevant(self, changes: Iterable[tuple[Any, str]]) -> set[str]:
        """The changed paths that can change the index: notes, folders, ``.brainignore``."""
        from watchfiles import Change

        out: set[str] = set()
        for change, path in changes:
            rel = self._rel(path)
            if rel is None:
                continue
            if change == Change.deleted and os.path.lexists(path):
                # no deletion: the poller says this of a dangling symlink on every poll, and a
                # path deleted then written again is reported as added or modified as well
                continue
            if _is_ignore_file(rel):
                self._spec = load_ignore(self.root)
                out.add(rel)
                continue
            is_dir = os.path.isdir(path)
            if excluded(rel, self._spec, is_dir=is_dir):
                continue
            if is_dir and change == Change.modified and self.mode == "events":
                # its mode changed (only that is a folder's own event here): one that could not
                # be read when the watch began has no watch of its own
                self._modes_changed = True
            if rel.lower().endswith(".md"):
                out.add(rel)
            elif is_dir and (self.known_folder(rel) or self._holds_notes(path)):
                # a folder renamed or moved in (its notes are not reported), or one of the
                # index's whose mode changed (chmod 000: none of its notes can be read now)
                out.add(rel + "/")
            elif (os.path.islink(path) or not os.path.lexists(path)) and self.known_folder(rel):
                # a folder deleted or renamed away, or a symlinked one pointed elsewhere (an
                # empty folder, nowhere): no event says its notes went
                out.add(rel + "/")
        return out

    def _holds_notes(self, path: str, limit: int = 20_000) -> bool:
        """Whether a folder holds a note the scan would index (an empty new folder is no news).

        ``path`` is one that ``excluded`` lets in (``_relevant`` asked). The walk goes top-down
        and prunes as it goes, as the scan does, so each entry's own name is all left to ask:
        asking ``excluded`` again of every folder above it, and ``_rel`` again of each folder's
        whole path, cost a folder d deep d²/2 rule checks and as many joins (1,100 deep: 2-3 s)."""
        seen = 0
        rels = {path: self._rel(path) or ""}  # each folder the walk will list, as the vault's
        for dirpath, dirnames, filenames in walk_tree(path):
            rel_dir = rels.pop(dirpath)  # walk_tree names a folder as os.path.join does below
            prefix = f"{rel_dir}/" if rel_dir else ""
            dirnames[:] = [d for d in dirnames if not name_rule(prefix + d, self._spec, is_dir=True)]
            rels.update((os.path.join(dirpath, d), prefix + d) for d in dirnames)
            for name in filenames:
                if name.lower().endswith(".md") and not name_rule(prefix + name, self._spec, is_dir=False):
                    return True
            seen += len(filenames) + len(dirnames)
            if seen > limit:
                return True  # too big to look through here: let the pass decide
        return False

    def _rel(self, path: str) -> str | None:
        """A watched path as the vault's: under the vault, or under a folder linked out of it."""
        try:
            rel = os.path.relpath(path, self.root)
        except ValueError:
            return None
        if rel == "." or rel.startswith(".." + os.sep) or rel == "..":
            return self._linked_rel(path) if self._outside else None
        return rel.replace(os.sep, "/")

    def _linked_rel(self, path: str) -> str | None:
        """A path in a folder linked out of the vault, as the vault's (the nearest link's)."""
        folder, rest = path, ""
        while True:
            prefix = self._outside.get(folder)
            if prefix is not None:
                return (prefix + rest.replace(os.sep, "/")).rstrip("/")
            parent, name = os.path.split(folder)
            if parent == folder or not name:
                return None
            folder, rest = parent, name + (os.sep + rest if rest else "")


def _is_ignore_file(rel: str) -> bool:
    """Whether an event's path is ``.brainignore``. In any case: on macOS and Windows the events
    name the file as it was saved (``.BrainIgnore``), which brain reads as ``.brainignore``
    there; an edit of it was taken for a dot-file's and the rules stayed as they were. (On
    Linux such a file is another one, and its edit costs one pass.)"""
    return rel.lower() == IGNORE_FILE


def _queue_size() -> str:
    """The kernel's ``max_queued_events``, as said in the log ("?" where it cannot be read)."""
    try:
        with open(QUEUE_FILE) as f:
            return f.read().strip()
    except OSError:
        return "?"


def _utf8(path: Path) -> bool:
    """Whether watchfiles can take ``path``: it takes only UTF-8 paths."""
    try:
        str(path).encode("utf-8")
    except UnicodeEncodeError:
        return False
    return True
