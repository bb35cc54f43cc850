"""A second process that walks the notes of some of the vault's folders, beside the walk.

A no-op `brain index`, and the update check before `brain ask`, are one ``stat`` per note: at
100,000 notes most of their time, with each call too short for threads to overlap (each hands
the GIL over and back). This process takes whole folders: the walk (``vault.walk``) lists every
folder itself, in its order, and hands over some of them; for each, the helper lists it again
and applies the walk's own rules to its files (``vault.walk_files``), and at the end sends
back what it found. Given the index's scan snapshot (``compare_with``: the bytes the walk's
own comparison was decoded from, sent from a thread while the walk goes on), the helper
compares its notes with it too and answers only those that differ, and the others' paths as
one string: at 100,000 notes, unpacking, comparing and merging 40,000 records at the end of
the walk was ~0.1 s of a no-op `brain index` spent with both processes otherwise done. Else
the walk compares what it answers. A helper that fails or answers with something else costs
only time: its folders are walked in the main process, with a warning in the log.

Run as this module in a new interpreter (``child_process.py``): pickles in (the vault's real
path, ignore rules and the snapshot or None, then one folder at a time), one ``marshal`` of
plain values out when its input ends. Not
``multiprocessing``: a forked process would inherit the caller's SQLite connections and
threads (``parsing.py``). ``BRAIN_WALK_WORKERS=0`` walks without it.
"""

from __future__ import annotations

import gc
import logging
import marshal
import os
import sys
import threading
from typing import IO, TYPE_CHECKING, Any

from . import config
from .child_process import python_module_command, write_all
from .index import scan_snapshot
from .vault import Folder, Found, Link, Note, PassingRetry, SkippedTuple, failure, walk_files

if TYPE_CHECKING:  # subprocess and pickle are imported where a helper starts and is spoken to:
    import subprocess  # below HELPER_FROM notes (`brain status`, a no-op `brain index`), never

log = logging.getLogger("brain")

COMMAND = python_module_command("brain.walk_helper")
HELPER_FROM = 50_000  # notes in the index before a helper pays for its start and its answer


def wanted(known: int) -> bool:
    """Whether a walk comparing ``known`` notes takes a helper (``BRAIN_WALK_WORKERS``): only
    with a CPU to spare. On a busy machine the helper waits for a CPU while the walk waits for
    it (at load 8 on two CPUs a no-op `brain index` of 100,000 notes took 2.42 s with it, 2.00
    without); the load average of the last minute says whether one is likely free."""
    if known < HELPER_FROM or config.walk_workers() == 0:
        return False
    cpus = os.cpu_count() or 1
    try:
        load = os.getloadavg()[0]
    except (AttributeError, OSError):  # Windows: no load average
        return cpus > 1
    return load < cpus - 0.5


class WalkHelper:
    """The walk's end of one helper process."""

    def __init__(self, process: subprocess.Popen[bytes] | None, header: tuple[str, Any]):
        self.process = process
        self.given: list[Folder] = []
        self._header: tuple[str, Any] | None = header  # sent with the first folder, or by ``compare_with``
        self._failed = process is None
        self._sending: threading.Thread | None = None  # writing the header with the snapshot
        self._send_error: BaseException | None = None

    @classmethod
    def start(cls, real_root: str, spec: Any) -> WalkHelper:
        import subprocess

        try:
            process = subprocess.Popen(
                COMMAND, stdin=subprocess.PIPE, stdout=subprocess.PIPE, stderr=subprocess.DEVNULL
            )
        except OSError as exc:
            log.warning("could not start the walk's helper process (%s); walking in this one", exc)
            process = None
        return cls(process, (real_root, spec))

    def compare_with(self, snapshot: scan_snapshot.Snapshot) -> None:
        """Have the helper compare its notes with the index's ``snapshot`` too (the one the
        walk's ``known`` was made from). It is megabytes at 100,000 notes, more than a pipe
        holds, and the helper reads it only once started: a thread writes it, and no folder
        is handed over until it is written (the walk takes those itself meanwhile, so a
        helper that never reads costs no wait)."""
        if self._failed or self._header is None:
            return
        import pickle

        try:
            payload = pickle.dumps((*self._header, tuple(snapshot)), protocol=pickle.HIGHEST_PROTOCOL)
        except (pickle.PickleError, TypeError, AttributeError) as exc:  # rules that do not pickle
            self._fail(exc)
            return
        self._header = None
        self._sending = threading.Thread(target=self._send, args=(payload,), name="brain-walk-helper", daemon=True)
        self._sending.start()

    def _send(self, payload: bytes) -> None:
        assert self.process is not None and self.process.stdin is not None
        try:
            self.process.stdin.write(payload)
            self.process.stdin.flush()
        except (OSError, ValueError) as exc:  # the helper is gone; ValueError: its pipe closed here
            self._send_error = exc

    def _ready(self) -> bool:
        """Whether a folder can be handed over now: the snapshot, if any, written whole."""
        if self._sending is not None:
            if self._sending.is_alive():
                return False
            self._sending.join()
            self._sending = None
            if self._send_error is not None:
                self._fail(self._send_error)
        return not self._failed

    def take(self, dirpath: str, prefix: str, real_prefix: str | None) -> bool:
        """Hand the notes of one folder over; False when the helper cannot take it."""
        if not self._ready():
            return False
        assert self.process is not None and self.process.stdin is not None
        import pickle

        try:
            if self._header is not None:
                pickle.dump((*self._header, None), self.process.stdin, protocol=pickle.HIGHEST_PROTOCOL)
                self._header = None
            pickle.dump((dirpath, prefix, real_prefix), self.process.stdin, protocol=pickle.HIGHEST_PROTOCOL)
            self.process.stdin.flush()
        except (
            OSError,
            pickle.PickleError,
            TypeError,
            AttributeError,
        ) as exc:  # a pipe closed, rules that do not pickle
            self._fail(exc)
            return False
        self.given.append((dirpath, prefix, real_prefix))
        return True

    def finish(self) -> tuple[Found, list[Folder]]:
        """What the helper found, and the folders it was given but did not walk (all of them
        when it failed: the caller walks those)."""
        if self._failed or not self.given:
            return ([], [], None, []), list(self.given)
        assert self.process is not None and self.process.stdin is not None and self.process.stdout is not None
        try:
            self.process.stdin.close()
            answer = marshal.loads(self.process.stdout.read())
            if self.process.wait() != 0:
                raise RuntimeError(f"it exited with status {self.process.returncode}")
            notes, skipped, unchanged, links = answer
            if (
                not isinstance(notes, list)
                or not isinstance(skipped, list)
                or not (unchanged is None or isinstance(unchanged, str))
                or not isinstance(links, list)
            ):
                raise RuntimeError("it answered with something else")
        except (OSError, EOFError, RuntimeError, ValueError, TypeError) as exc:
            self._fail(exc)
            return ([], [], None, []), list(self.given)
        return (notes, skipped, unchanged, links), []

    def _fail(self, exc: BaseException) -> None:
        if not self._failed:
            log.warning("the walk's helper process failed (%s); walking its folders in this one", exc)
        self._failed = True

    def __enter__(self) -> WalkHelper:
        return self

    def __exit__(self, *exc: object) -> None:
        self.close()

    def close(self) -> None:
        """Stop the process, whatever happened (a walk cut short leaves none behind)."""
        process = self.process
        if process is None:
            return
        if self._sending is not None:
            if self._sending.is_alive():  # still writing the snapshot: the helper is not reading it
                process.kill()  # (the write then fails, and the thread ends)
            self._sending.join()
            self._sending = None
        for stream in (process.stdin, process.stdout):
            if stream is not None:
                try:
                    stream.close()
                except OSError:
                    pass
        if process.poll() is None:
            process.kill()
        process.wait()


def serve(stdin: IO[bytes], stdout: IO[bytes]) -> None:
    """The helper: the header, then folders until the input ends; then what it found."""
    import pickle

    try:
        real_root, spec, snapshot = pickle.load(stdin)
    except EOFError:
        return
    # Each folder's notes decoded as it is given (the walk decodes its own).
    known = scan_snapshot.notes(scan_snapshot.Snapshot(*snapshot)) if snapshot is not None else None
    notes: list[Note] = []
    skipped: list[SkippedTuple] = []
    unchanged: list[str] = []
    links: list[Link] = []
    retry = PassingRetry()  # a listing failed for a passing reason: listed again
    while True:
        try:
            dirpath, prefix, real_prefix = pickle.load(stdin)
        except EOFError:
            break
        try:
            lookup = known.folder(prefix).get if known is not None else None
            found = walk_files(dirpath, prefix, real_prefix, spec, real_root, lookup, retry)
        except OSError as exc:
            # Unreadable since the walk listed it: as the walk says of a folder it cannot list.
            skip = failure(prefix.rstrip("/"), exc)
            found = [], [(skip.path, skip.reason, skip.detail, skip.errno)], [], []
        notes += found[0]
        skipped += found[1]
        unchanged += found[2]
        links += found[3]
    # marshal, not pickle: tuples of strings and numbers only, and ~10 times faster both ways
    # (pickle remembers every string and tuple it wrote, in case it comes again).
    write_all(stdout, marshal.dumps((notes, skipped, "\0".join(unchanged) if known is not None else None, links)))


if __name__ == "__main__":
    # Tuples and strings that live until the process ends, no cycles: the collector would only
    # walk them again and again (as the walk's caller pauses it too, ``changes.plan``).
    gc.disable()
    serve(sys.stdin.buffer, sys.stdout.buffer)
    # Its answer written whole: exit without freeing 100,000 paths and a dict of them one by
    # one (~20 ms the walk waited for, reading the exit status).
    os._exit(0)
