"""Which files changed since the last index run, classified once for `index`, `status` and recall.

Two steps, the cheap one first:

1. ``plan``: walk the vault and compare each file's size and mtime with its row (read from
   the compact snapshot the index keeps of them, ``IndexStore.note_stats``). Matching
   files are unchanged without being read; a file skipped for its content before (binary, too
   large, unreadable; a read error or a parse that raised, unless ``retry``) with the same stat
   stays skipped without being read; notes whose file is gone are deleted. What is left are the
   candidates: ``Plan.pending`` counts them, and that is recall's staleness check (a rename
   twice, as a new note and a deleted one: ``renamed`` tells them).
2. ``read``: read each candidate and say what it is: ``touched`` (same bytes, new stat),
   ``new``, ``changed``, ``renamed`` (a new path holding the bytes of a deleted note), or
   ``skipped`` (binary, too large, unreadable); with ``verify``, the notes unchanged by their
   stat are read after them, each ``same`` or ``changed``. It updates the plan as it goes: a renamed note
   is no longer deleted, a note that became unreadable is.

Unreadable has two kinds (``vault.read_failure``). Denied (EACCES, EPERM: a chmod, another
user's file) is deliberate: the note leaves the index, as a fresh run leaves it out (the walk
finds a chmod by the note's mode bits, which size and mtime do not show). Any other failure
(EIO, a cloud-sync placeholder, a share timing out) is a ``read-error`` that may pass: an
indexed note (or the notes of a folder that failed so) keeps its indexed text; losing a note to
a passing fault would be worse than serving it a while longer. The note is read again by the
next `brain index`, or once its size or mtime changed (a placeholder fetched, an edit): not by
each `brain ask` and `brain serve` pass, where it only failed again (``plan``'s ``retry``).
"""

from __future__ import annotations

import functools
import gc
import hashlib
import logging
import os
from collections.abc import Callable, Collection, Iterator, Mapping
from contextlib import contextmanager
from dataclasses import dataclass, field, replace
from pathlib import Path
from typing import TypeVar

from .. import walk_helper
from ..notes import DECODING, content_hash
from ..vault import (
    NOT_DOWNLOADED,
    PARSE_ERROR,
    READ_ERROR,
    Link,
    PassingRetry,
    Skipped,
    VaultFile,
    Walk,
    load_ignore,
    max_note_bytes,
    read_note_bytes,
    vault_file,
    walk,
    will_read,
)
from .store import IndexStore, SkipRecord

TOUCHED, NEW, CHANGED, RENAMED, SKIPPED = "touched", "new", "changed", "renamed", "skipped"
SAME = "same"  # a recheck (``plan(verify=True)``) that found the bytes the index has
READ_AHEAD_FROM = 2_000  # candidates from which the kernel is asked to read notes ahead
LIMIT_KEY = "max_note_bytes"  # meta: BRAIN_MAX_NOTE_MB's bytes at the last completed run
PARSED_BY_KEY = "parsed_by"  # meta: ``parser_key`` of the last completed run: its parse-errors' parser
DECODED_BY_KEY = "decoded_by"  # meta: ``notes.DECODING`` of the last completed run
READ_AHEAD = 256  # notes asked for ahead of the one read (30,000 from a cold disk: 64 ahead 2.3 s, 256 1.8 s)
T = TypeVar("T")
log = logging.getLogger("brain")


@dataclass
class Plan:
    """What a walk of the vault found, by size and mtime only."""

    unchanged: list[str]  # paths of the notes whose size and mtime are their rows', in no particular order
    candidates: list[tuple[VaultFile, int | None]]  # (file, its note id, or None for a new path)
    deleted: dict[str, int]  # path → note id, for notes whose file is gone
    skipped: list[Skipped]
    stats: dict[str, tuple[int, int]]  # content skips: path → (size, mtime_ns) when read
    ignore_warnings: list[str] = field(default_factory=list)  # what was wrong with .brainignore
    # With ``verify``: the unchanged notes too, to be read and compared by their bytes.
    rechecks: list[tuple[VaultFile, int]] = field(default_factory=list)
    links: list[Link] = field(default_factory=list)  # the walk's symlinks out of the vault (``vault.Link``)
    deleted_sizes: frozenset[int] = frozenset()  # the indexed sizes of the deleted notes (``renamed``)
    # Indexed notes to parse again though their bytes are the same: decoded by older rules.
    redecode: frozenset[str] = frozenset()

    def unreadable(self) -> set[str]:
        """The deleted notes whose file (or a folder above it) is there but denied to brain:
        their history says they became unreadable, not that they were deleted."""
        files, folders = _failed([s for s in self.skipped if s.denied], "unreadable")
        return {path for path in self.deleted if path in files or path.startswith(folders)}

    @property
    def pending(self) -> int:
        """Notes that may have changed (new, changed, deleted) since the last index."""
        return len(self.candidates) + len(self.deleted)


@dataclass(frozen=True)
class Change:
    """One candidate, read: what it turned out to be."""

    kind: str  # TOUCHED, NEW, CHANGED, RENAMED or SKIPPED
    file: VaultFile
    note_id: int | None  # the note it updates (touched, changed), or the one it moves (renamed)
    data: bytes | None = None  # the file's bytes, unless skipped
    skip: Skipped | None = None
    old_path: str | None = None  # renamed: where the note was
    recheck: bool = False  # one of ``Plan.rechecks``: counted unchanged by its stat until read


def plan(
    root: Path,
    store: IndexStore,
    *,
    verify: bool | Collection[str] = False,
    meanwhile: Callable[[], object] | None = None,
    retry: bool = False,
) -> Plan:
    """Walk ``root`` and compare it with the index by size and mtime (nothing is read).

    ``verify``: the notes whose size and mtime match are to be read too (``Plan.rechecks``):
    a file replaced by other bytes of the same size and time (two notes swapped by name, a
    copy that kept its time) is found only by its bytes. A collection of paths: those notes
    only (what a watcher heard of while their size and mtime stayed: an ACL that refuses them).

    ``meanwhile``: work the caller does next, done during the walk if the walk's helper process
    runs and can walk in its place meanwhile (``vault.walk``); or not at all.

    ``retry``: a note whose read failed (``READ_ERROR``: EIO, a placeholder not fetched) or
    whose parse raised (``PARSE_ERROR``, a bug of brain's), unchanged since, is a candidate again
    (`brain index` reads and parses it again); otherwise it stays skipped, and is not pending
    (``brain ask``'s check, `brain serve`'s passes, `brain status`): read again at each, it only
    failed again, and said so. A parse-error is a candidate again all the same when another
    parser failed it (``parser_key``)."""
    # The walk and the comparison make a few hundred thousand tuples and no reference cycles:
    # the cyclic garbage collector, woken every 700 allocations, only walked them again and
    # again (a no-op `brain index` of 100,000 notes spent ~15% of its time in it).
    with _collector_paused():
        return _plan(root, store, verify, meanwhile, retry)


@contextmanager
def _collector_paused() -> Iterator[None]:
    enabled = gc.isenabled()
    frozen = gc.get_freeze_count()  # Python 3.12 starts with a few hundred objects frozen
    gc.disable()
    try:
        yield
    finally:
        if enabled and frozen:  # the thaw would thaw those too (an app's, frozen before a fork)
            gc.enable()
        elif enabled:
            # Back on, the collector's first pass would walk every tuple made meanwhile once
            # (40 ms at 100,000 notes) only to find them acyclic. Frozen, then thawed into the
            # oldest generation, they wait for a full collection instead; refcounts free them.
            gc.freeze()
            gc.enable()
            gc.unfreeze()


def _plan(
    root: Path,
    store: IndexStore,
    verify: bool | Collection[str],
    meanwhile: Callable[[], object] | None,
    retry: bool,
) -> Plan:
    ignore = load_ignore(root)
    # Read before the walk, not after: either way a file written in between has a stat that
    # differs from its row (the row has the stat of what was read), so it is a candidate.
    if walk_helper.wanted(store.note_count()):  # started first: it starts while the stats are read
        with walk_helper.WalkHelper.start(os.path.realpath(root), ignore.spec) as helper:
            rows, snapshot = store.note_stats_and_snapshot()  # path → (id, size, mtime_ns)
            if snapshot is not None:  # the helper compares its notes with it too
                helper.compare_with(snapshot)
            found = walk(root, ignore, known=rows, helper=helper, meanwhile=meanwhile)
    else:
        rows = store.note_stats_and_snapshot()[0]
        found = walk(root, ignore, known=rows)  # the notes whose stat matches their row are only paths
    held = store.skipped_for_content()
    if retry:  # `brain index`: a read error may have passed (a disk, a share), a parse be fixed
        held = {path: record for path, record in held.items() if record.reason not in (PARSE_ERROR, READ_ERROR)}
    elif (
        any(record.reason == PARSE_ERROR for record in held.values()) and store.get_meta(PARSED_BY_KEY) != parser_key()
    ):  # another brain failed them: this one may not (the digest only when it matters)
        held = {path: record for path, record in held.items() if record.reason != PARSE_ERROR}
    found = _over_a_lowered_limit(root, store, found, rows)
    found, held, redecode = _decoded_otherwise(root, store, found, held)
    candidates, stats, skipped, known_found = _sort_out(found, rows, held)
    deleted = _deleted(found, rows, known_found)
    if getattr(rows, "damaged", False):
        # A folder of the snapshot was damaged: its notes were walked as unknown (none taken
        # for unchanged, none for deleted). Sorted out again against the rows, read now (and a
        # good snapshot stored for the next run).
        log.warning("the index's scan snapshot was damaged: compared with the notes' rows instead")
        rows = store.note_stats_afresh()[0]
        candidates, stats, skipped, known_found = _sort_out(found, rows, held)
        deleted = _deleted(found, rows, known_found)
    skipped.sort(key=lambda s: s.path)
    rechecks: list[tuple[VaultFile, int]] = []
    if verify:
        unchanged = found.unchanged if isinstance(verify, bool) else set(verify).intersection(found.unchanged)
        for path in sorted(unchanged):
            again = vault_file(root, path)
            if again is not None:  # gone since the walk: the next run deletes it
                rechecks.append((again, rows[path][0]))
    sizes = frozenset(rows[path][1] for path in deleted)
    return Plan(
        found.unchanged, candidates, deleted, skipped, stats, ignore.warnings, rechecks, found.links, sizes, redecode
    )


def _over_a_lowered_limit(root: Path, store: IndexStore, found: Walk, rows: Mapping[str, tuple[int, int, int]]) -> Walk:
    """``found`` with the unchanged notes over ``BRAIN_MAX_NOTE_MB`` taken as changed, when the
    limit was lowered since the last run (``LIMIT_KEY``): they stayed indexed while `brain note`
    refused them and `brain status` said the index was up to date. Read again, they are skipped
    as too large and leave the index, as a fresh index would have them."""
    limit = max_note_bytes()
    recorded = store.get_meta(LIMIT_KEY)
    if recorded is None or limit >= int(recorded):
        return found
    over = {path for path in found.unchanged if rows[path][1] > limit}
    files = [f for f in (vault_file(root, path) for path in sorted(over)) if f is not None]
    if not files:
        return found
    notes = sorted([*found.notes, *files], key=lambda f: f.path)
    return found._replace(notes=notes, unchanged=[p for p in found.unchanged if p not in over])


def _decoded_otherwise(
    root: Path, store: IndexStore, found: Walk, held: dict[str, SkipRecord]
) -> tuple[Walk, dict[str, SkipRecord], frozenset[str]]:
    """When the rules that decode a note's bytes changed since the last run (``DECODED_BY_KEY``),
    the unchanged notes an older brain decoded with a warning (UTF-16, bytes not UTF-8) taken as
    changed, to be parsed again (``Plan.redecode``: their bytes are the same), and the files it
    took for binary read again: a cp1251 note stayed U+FFFDs, a note with one stray NUL stayed
    skipped, until its bytes changed."""
    if store.get_meta(DECODED_BY_KEY) == DECODING:
        return found, held, frozenset()
    decoded = {
        path
        for path, warnings in store.note_warnings()
        if any("UTF-16" in warning or "UTF-8" in warning for warning in warnings)
    }
    again = decoded.intersection(found.unchanged)
    files = [f for f in (vault_file(root, path) for path in sorted(again)) if f is not None]
    notes = sorted([*found.notes, *files], key=lambda f: f.path)
    found = found._replace(notes=notes, unchanged=[p for p in found.unchanged if p not in again])
    held = {path: record for path, record in held.items() if record.reason != "binary"}
    return found, held, frozenset(f.path for f in files)


def _sort_out(
    found: Walk, rows: Mapping[str, tuple[int, int, int]], held: dict[str, SkipRecord]
) -> tuple[list[tuple[VaultFile, int | None]], dict[str, tuple[int, int]], list[Skipped], int]:
    """The walk's notes that differ from the index as candidates (with their note id, if
    indexed), or still skipped for their content; and how many indexed notes the walk found."""
    limit = max_note_bytes()
    candidates: list[tuple[VaultFile, int | None]] = []
    stats: dict[str, tuple[int, int]] = {}
    skipped = list(found.skipped)
    known_found = len(found.unchanged)  # the indexed notes the walk found (paths are unique)
    for file in found.notes:
        row = rows.get(file.path)
        known_found += row is not None
        record = held.get(file.path)
        # an indexed note whose parse raised, or whose read failed, keeps its row (and its stat
        # then): held all the same
        if (row is None or (record is not None and record.reason in (PARSE_ERROR, READ_ERROR))) and _still_skipped(
            file, record, limit
        ):
            record = held[file.path]
            skipped.append(Skipped(file.path, record.reason, record.detail))
            stats[file.path] = (file.size, file.mtime_ns)
        else:
            candidates.append((file, row[0] if row else None))
    return candidates, stats, skipped, known_found


def _deleted(found: Walk, rows: Mapping[str, tuple[int, int, int]], known_found: int) -> dict[str, int]:
    """The indexed notes the walk did not find. Looked for only when it found fewer than the
    index holds: a set of every path found is 0.04 s at 100,000 notes, which an edit or a new
    note alone need not spend."""
    if len(rows) <= known_found:
        return {}
    present = set(found.unchanged).union(f.path for f in found.notes)
    kept, kept_folders = _failed(found.skipped, READ_ERROR)  # a fault that may pass
    kept |= {s.path for s in found.skipped if s.reason == NOT_DOWNLOADED}  # the user has it, in the cloud
    return {
        path: row[0]
        for path, row in rows.items()
        if path not in present and path not in kept and not path.startswith(kept_folders)
    }


def _failed(skipped: list[Skipped], reason: str) -> tuple[set[str], tuple[str, ...]]:
    """The paths skipped for ``reason``, and as folders (with their slash: a folder whose
    listing failed is named without it)."""
    paths = {s.path for s in skipped if s.reason == reason}
    return paths, tuple(path.rstrip("/") + "/" for path in paths)


def read(changes: Plan, store: IndexStore) -> Iterator[Change]:
    """Read each candidate of ``changes`` and classify it (see the module docstring)."""
    limit = max_note_bytes()
    deleted_by_hash = store.notes_by_hash(list(changes.deleted.values()))
    # the file names of the new paths: a deleted note whose bytes another file holds too goes to
    # one of its own name first (``_moved_from``)
    new_names = {_file_name(file.path) for file, note_id in changes.candidates if note_id is None}
    retry = _Retry()
    for file, note_id, fd in _read_ahead(changes.candidates, retry):
        data, skip = retry.read(file, limit, fd)
        if skip is not None:
            # its stat then: unchanged, it is not read again but by `brain index` (``plan``)
            changes.stats[skip.path] = (file.size, file.mtime_ns)
            if note_id is not None and skip.reason == READ_ERROR:  # a fault that may pass
                skip = replace(skip, detail=f"{skip.detail}; its indexed text is kept until it reads")
            elif note_id is not None:  # it was indexed before; it is not any more
                changes.deleted[file.path] = note_id
            changes.skipped.append(skip)
            yield Change(SKIPPED, file, note_id, skip=skip)
            continue
        assert data is not None
        digest = content_hash(data)
        if note_id is not None:
            same = store.note_hash(note_id) == digest and file.path not in changes.redecode
            kind = TOUCHED if same else CHANGED
            yield Change(kind, file, note_id, data)
        elif digest in deleted_by_hash:
            old_path, old_id = _moved_from(deleted_by_hash, digest, file.path, new_names)
            changes.deleted.pop(old_path, None)
            yield Change(RENAMED, file, old_id, data, old_path=old_path)
        else:
            yield Change(NEW, file, None, data)
    for file, note_id, fd in _read_ahead(changes.rechecks, retry):
        data, skip = retry.read(file, limit, fd)
        # "unreadable": denied (an ACL the mode bits hide), or gone since the walk; either leaves
        # the index, and Plan.unreadable (Skipped.denied) tells which its history says
        if skip is not None and skip.reason == "unreadable":
            changes.skipped.append(skip)
            changes.stats[skip.path] = (file.size, file.mtime_ns)
            changes.deleted[file.path] = note_id
            yield Change(SKIPPED, file, note_id, skip=skip, recheck=True)
        elif data is not None and store.note_hash(note_id) != content_hash(data):
            yield Change(CHANGED, file, note_id, data, recheck=True)
        else:  # the same bytes, or a read error that may pass: left as its stat said
            yield Change(SAME, file, note_id, recheck=True)


class _Retry(PassingRetry):
    """Reads a note, and again when it failed for a passing reason (``vault.PASSING``: EMFILE,
    ENFILE, ENOMEM, EAGAIN, EINTR), as ``PassingRetry`` says: the notes held open ahead
    (``_read_ahead`` sets ``release``) closed first. Read once, a vault met at its open-files
    limit lost its notes' reads one after another: a first `brain index` left them out
    (read-error) and went on."""

    def read(self, file: VaultFile, limit: int, fd: int | None) -> tuple[bytes | None, Skipped | None]:
        data, skip = read_note_bytes(file, limit, fd)
        tried = 0
        while skip is not None and self.again(tried, skip.errno):
            tried += 1
            data, skip = read_note_bytes(file, limit)
        return data, skip


def _file_name(path: str) -> str:
    return path.rpartition("/")[2]


def _moved_from(
    deleted_by_hash: dict[str, list[tuple[str, int]]], digest: str, path: str, new_names: set[str]
) -> tuple[str, int]:
    """(path, id) of the deleted note a new ``path`` holding its bytes (``digest``) moves, taken
    out of ``deleted_by_hash``: of several with those bytes (notes emptied, or left as their
    template made them), the one of the same file name (a folder moved), else one whose name no
    new path has. Taken as they came, two notes of the same bytes moved together swapped
    histories, or one lost its own to a new note. (A new file of those bytes under another name,
    read before a moved note of its own name, still takes the note first; the paths are read in
    order, and waiting to pair them would hold every change back until the last is read.)"""
    notes = deleted_by_hash[digest]
    name = _file_name(path)
    index = next((i for i, (old, _) in enumerate(notes) if _file_name(old) == name), None)
    if index is None:
        index = next((i for i, (old, _) in enumerate(notes) if _file_name(old) not in new_names), 0)
    found = notes.pop(index)
    if not notes:
        del deleted_by_hash[digest]
    return found


def renamed(changes: Plan, store: IndexStore) -> int:
    """How many of the plan's new paths hold the bytes of one of its deleted notes: renames,
    which ``Plan.pending`` counts twice (a new note and a deleted one), as `brain status` (which
    reads every candidate) does not. Only a new path of a deleted note's size is read."""
    if not changes.deleted:
        return 0
    sizes = changes.deleted_sizes
    maybe: list[tuple[VaultFile, int | None]] = [
        (f, None) for f, note_id in changes.candidates if note_id is None and f.size in sizes
    ]
    if not maybe:
        return 0
    trial = Plan([], maybe, dict(changes.deleted), [], {}, deleted_sizes=changes.deleted_sizes)
    return sum(change.kind == RENAMED for change in read(trial, store))


def _may_hold_open() -> bool:
    """Whether ``READ_AHEAD`` notes may stay open between the kernel's hint and their read: not
    where the limit on open files is low (a container's or a shell's `ulimit -n 256`), where they
    would leave SQLite and FAISS none; each note is then opened twice, as it was."""
    try:
        import resource

        soft, _ = resource.getrlimit(resource.RLIMIT_NOFILE)
    except (ImportError, OSError, ValueError):
        return False
    return soft == resource.RLIM_INFINITY or soft >= 4 * (READ_AHEAD + 1)


def _read_ahead(
    items: list[tuple[VaultFile, T]], retry: _Retry | None = None
) -> Iterator[tuple[VaultFile, T, int | None]]:
    """``items`` in order, each with its note open (or None), the kernel asked to read each note
    ``READ_AHEAD`` before its turn when there are ``READ_AHEAD_FROM`` or more
    (``vault.will_read``). The caller reads each file handed to it (``read_note_bytes(fd=)``),
    which closes it; those not handed out yet are closed here if the caller stops early. At
    most ``READ_AHEAD`` + 1 are open at once. ``retry``'s ``release`` closes those held and holds
    no more (a read failed for want of open files)."""
    advised = 0 if len(items) >= READ_AHEAD_FROM else len(items)
    hold = advised < len(items) and _may_hold_open()
    ahead: dict[int, int | None] = {}

    def release() -> None:
        nonlocal hold
        hold = False
        for at, fd in ahead.items():
            if fd is not None:
                os.close(fd)
                ahead[at] = None

    if retry is not None:
        retry.release = release
    try:
        for at, (file, item) in enumerate(items):
            while advised < len(items) and advised <= at + READ_AHEAD:
                fd = will_read(items[advised][0])
                if fd is not None and not hold:
                    os.close(fd)  # asked for, opened again when read
                    fd = None
                ahead[advised] = fd
                advised += 1
            yield file, item, ahead.pop(at, None)
    finally:
        for fd in ahead.values():
            if fd is not None:
                os.close(fd)


def _still_skipped(file: VaultFile, record: SkipRecord | None, limit: int) -> bool:
    """A file skipped for its content, unchanged since, that would be skipped again: not read,
    not pending. A raised size limit or a fixed permission brings it back."""
    if record is None or (record.size, record.mtime_ns) != (file.size, file.mtime_ns):
        return False
    if record.reason == "too-large":
        return file.size > limit
    if record.reason == "unreadable":  # chmod does not touch the mtime: look again
        try:
            os.close(os.open(file.abspath, os.O_RDONLY | os.O_NONBLOCK))  # never wait on a FIFO
        except OSError:
            return True
        return False
    # held only when not to be read or parsed again (``plan``)
    return record.reason in ("binary", READ_ERROR, PARSE_ERROR)


@functools.cache
def parser_key() -> str:
    """What parsed this run's notes: a digest of brain's source. ``brain.__version__`` stayed
    "0.1.0" through every change, so a note an old parser failed was never parsed again by the
    `brain ask` of a brain that fixed it. The whole package, not the parser's modules alone: the
    parse reaches text, config and the vault's modules, and a list of them would fall behind;
    an upgrade that left the parser as it was only parses the few notes that raised once more.
    Once a process: the code it runs, not what an upgrade has put on disk since."""
    package = Path(__file__).resolve().parents[1]
    digest = hashlib.sha256()
    try:
        for source in sorted(package.rglob("*.py")):
            digest.update(source.relative_to(package).as_posix().encode() + b"\0" + source.read_bytes())
    except OSError:  # unreadable or zipped: no source to read; then any parse-error is tried again
        digest.update(os.urandom(16))
    return digest.hexdigest()[:16]
