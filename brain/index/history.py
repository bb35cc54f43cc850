"""Memory over time, the writing side: every change the indexer makes is recorded beside it.

Each content of a note the index sees is a *version* (``note_versions``), current from when
brain first saw it (``recorded_from``) until it was replaced (``recorded_to``): edited,
renamed, or deleted. A replaced version keeps its bytes (compressed) and its chunks with
their vectors (``chunk_history``), so the past can be searched without embedding anything
again. Every link of a note is an *edge* (``link_history``) with a recorded span too: a link
the note no longer writes is closed, never deleted, and one that comes back opens a new edge.
Each edge carries the world time its note states (frontmatter ``date``, ``valid_from``,
``valid_to``, ``status``).

Everything here runs inside the transaction of the change it records, so a crash leaves
history and the present in step: no version without its note's state, no open edge of a
version that was replaced.

Identity: a note's id is kept across renames (same bytes at a new path) and, through history,
across a delete and a restore: a new file whose bytes a deleted note once held, or that sits
where a deleted note last was, continues that note.

``BRAIN_KEEP_VERSIONS`` bounds how many past versions a note keeps (all by default; 0 keeps only
the present); ``prune`` applies it, or a date, to the whole index (`brain prune`).
"""

from __future__ import annotations

import json
import time
from collections import Counter
from collections.abc import Sequence
from dataclasses import dataclass
from typing import TYPE_CHECKING

from ..errors import BrainError
from ..notes import Note, WorldTime, content_hash, world_time
from .linking import resolve_as_now
from .store import NAMES_CLOCK
from .version_text import compress

if TYPE_CHECKING:
    from .store import IndexStore, VersionRow


# How far the clock may be behind history's latest moment (a run's moments step a millisecond
# apart within one tick of a coarse clock) and saves still fold (``Recorder._folds_into``).
CLOCK_SLACK = 1.0


@dataclass
class Prior:
    """What a note was before this write: its open version, and the id history gives a new path."""

    version: VersionRow | None
    restore_id: int | None = None
    unseen: bool = False  # a new note history has never seen (``Recorder.before_write``)
    fold_into: VersionRow | None = None  # the version before ``version``, which takes its time


class Recorder:
    """Records history for one indexing run; call it inside the run's transactions."""

    def __init__(self, store: IndexStore, keep: int | None, interval: float = 0.0):
        self.store = store
        self.keep = keep  # past versions kept per note; None: all
        self.interval = interval  # seconds within which a note's saves are one version
        self._history_was_empty: bool | None = None  # when this run first wrote a new note
        self._latest: float | None = None  # the latest moment history holds or this run recorded
        self._began = False  # this run wrote the first version of an empty history
        self._names_noted: float | None = None  # the moment this run last noted names moving

    def now(self) -> float:
        """The moment to record a change at: the clock, but always after every moment history
        already holds. A clock set back (by hand, by NTP, a laptop's flat battery) would open a
        version before the one it replaces closed: versions listed out of order, a current note
        read as deleted, the wrong versions pruned, two versions of a note at one ``--as-of``."""
        if self._latest is None:
            self._latest = self.store.history_latest()
            if self.store.names_moved_at() is None:  # not noted before: names may have moved until now
                self.store.set_meta(NAMES_CLOCK, repr(self._latest))
        moment = time.time()
        self._latest = moment if moment > self._latest else self._latest + 0.001
        # in the transaction that records at it: committed with what it dates, or not at all
        self.store.record_history_clock(self._latest)
        return self._latest

    def names_moved(self, now: float) -> None:
        """A note came, went, or took another path or other aliases at ``now`` (in that
        transaction): noted once a moment, for ``_graph_stays``."""
        if self._names_noted != now:
            self.store.set_meta(NAMES_CLOCK, repr(now))
            self._names_noted = now

    @property
    def keeps_past(self) -> bool:
        return self.keep is None or self.keep > 0

    def before_write(self, note_id: int | None, note: Note) -> Prior:
        """Call before the note's row and chunks are written. For a known note whose content
        changes, its current chunks are copied to history first (they are about to go); for a
        new path, the identity history keeps for it, if any."""
        if note_id is None:
            if self._history_was_empty is None:
                self._history_was_empty = not self.store.has_any_version()
            if self._history_was_empty:
                # Nothing in history for a new note to continue, nor any version, edge or past
                # chunk under a new id: a first build skips six lookups a note (100,000 notes:
                # 7 of the 101 CPU seconds its SQL took). Versions written since are of notes still
                # there: this run deletes notes only after it has written them all.
                return Prior(None, unseen=True)
            restore_id = self.store.identity_in_history(note.path, note.content_hash)
            version = self.store.current_version(restore_id) if restore_id is not None else None
            return Prior(version, restore_id)
        version = self.store.current_version(note_id)
        fold_into = self._folds_into(version, note)
        if fold_into is not None:  # its text goes with it, and its chunks unless another version holds them
            assert version is not None
            if self.store.content_held_elsewhere(version):
                self.store.retire_chunks(note_id, version.hash, version.title)
            return Prior(version, fold_into=fold_into)
        self.store.settle_version_text(note_id)  # while its chunks are still those of its content
        if version is not None and self.keeps_past and version.hash not in (note.content_hash, ""):
            self.store.retire_chunks(note_id, version.hash, version.title)
        return Prior(version)

    def _folds_into(self, version: VersionRow | None, note: Note) -> VersionRow | None:
        """The version before ``version`` when this write replaces ``version`` so soon after that
        one began (under ``interval``) that ``version`` is not kept: an editor saving every few
        seconds while its user types would otherwise leave a version, with its text and its
        changed chunks, per save (600 saves of a 27 KB note: 3.5 MB of history). So is an empty
        ``version`` replaced under ``interval`` after it began. A delete never folds: a note's
        last content stays."""
        if self.interval <= 0 or not self.keeps_past or version is None or version.hash == "":
            return None
        if version.hash == note.content_hash and version.path == note.path:
            return None  # the same version, parsed again
        before = self.store.version_before(version)
        if before is None:
            return None
        clock = time.time()
        latest = self._latest if self._latest is not None else self.store.history_latest()
        if clock < latest - CLOCK_SLACK:
            # The clock is behind what history holds (set back): its moments step a millisecond
            # past the latest, so saves an hour apart look a millisecond apart. Each is kept.
            return None
        moment = max(clock, latest)
        # An empty version replaced soon after it began held nothing: a sync client rewriting
        # the note in place (truncated, then written) read between the two, however old the
        # version before it is.
        passing_empty = version.size == 0 and moment - version.recorded_from < self.interval
        if moment - before.recorded_from >= self.interval and not passing_empty:
            return None
        return before if self._graph_stays(before, version) else None

    def _graph_stays(self, before: VersionRow, version: VersionRow) -> bool:
        """Whether the graph over ``version``'s time, ``before``'s once ``version`` is folded
        into it, is the graph brain had then: ``before``'s links resolved as they were then,
        and every other note's links resolved against ``before``'s names. Not when ``version``
        had other names (path, aliases: the links written or resolved then met those), nor when
        something in its time may have made ``before``'s links resolve otherwise (a note
        renamed, deleted or created): its links ``version`` wrote too were recorded again then
        (``sync_edge_targets``); for those it no longer wrote nothing was, so any other note's
        change of names since, or another answer now, keeps it. Such a version is kept."""
        if (version.path, version.aliases) != (before.path, before.aliases):
            return False
        note_id, since = version.note_id, version.recorded_from
        if self.store.edges_moved_since(note_id, since):
            return False
        dropped = self.store.edges_closed_at(note_id, since)
        if not dropped:
            return True
        moved = self.store.names_moved_at()
        if moved is None or moved > since:  # they may have resolved otherwise for a while
            return False
        now = resolve_as_now(self.store, note_id, before.path, [(edge.target, edge.kind) for edge in dropped])
        return now == [(edge.target_id, edge.status) for edge in dropped]

    def after_write(
        self,
        note_id: int,
        note: Note,
        size: int,
        data: bytes | None,
        prior: Prior,
        now: float,
        text: bytes | None = None,
    ) -> str:
        """Record the note's new state (its chunks and links are written): a new version unless
        the bytes and path are the version's already, and its edges. Returns the event.

        Its bytes are kept compressed against the chunks just written (version_text.py; settled
        before they change): ``text`` when the parse made them so (parsing.py), else made here."""
        world = world_time(note.frontmatter)
        content = text
        if content is None and data is not None:
            content = compress(data, self.store.chunk_dictionary(note_id))
        version = prior.version
        same_bytes = version is not None and version.hash in (note.content_hash, "")
        kept = prior.fold_into
        if version is None or version.path != note.path or json.loads(version.aliases or "[]") != note.aliases:
            self.names_moved(now)
        if version is not None and same_bytes and version.path == note.path:
            self.store.refresh_version(version.id, note, size, content, world)  # parsed again, same version
            event = "unchanged"
        elif kept is not None and kept.hash == note.content_hash and kept.path == note.path:
            assert version is not None  # folded away, and back as the version before it was: that one goes on
            self.store.fold_version(version, kept, None, None)
            self.store.refresh_version(kept.id, note, size, content, world)
            event = "unchanged"
        else:
            if version is not None:
                event = "renamed" if same_bytes else "changed"
                if kept is not None:  # what this content is to the version kept before
                    event = "renamed" if kept.hash == note.content_hash else "changed"
                    self.store.fold_version(version, kept, now, event)
                else:
                    self.store.close_version(version.id, now, event)
            elif prior.restore_id is not None or (not prior.unseen and self.store.has_versions(note_id)):
                event = "restored"
            else:
                event = "created"
            self.store.add_version(note_id, note, size, content, world, event, now)
        if not prior.unseen:
            self.store.drop_history_chunks(note_id, note.content_hash)  # current again: its chunks stand for it
        elif not self._began:
            # History begins with its first version, not when index.db was made: a first build
            # embeds for a while before it writes one, and `--as-of` in between found nothing
            # without saying that nothing before was known.
            self._began = True
            self.store.set_meta("history_since", repr(now))
        self._sync_edges(note_id, note, world, now, prior.unseen)
        if kept is not None and version is not None:
            self.store.fold_edges(note_id, version.recorded_from, now)
        if event != "unchanged" and self.keep is not None:
            self.store.prune_versions_of(note_id, self.keep)
        return event

    def touched(self, note_id: int, data: bytes) -> None:
        """Same bytes, new stat: the file was read anyway, so a current version recorded without
        its text (history began after it was indexed) gets it now."""
        self.store.fill_version_content(
            note_id, content_hash(data), compress(data, self.store.chunk_dictionary(note_id))
        )

    def deleted(self, note_ids: Sequence[int], now: float, ended: str = "deleted") -> None:
        """Call before the notes are deleted: their versions end (``ended``: deleted, or
        unreadable for a file still there that brain may not read), their chunks go to history,
        their edges close."""
        if note_ids:
            self.names_moved(now)
        for note_id in note_ids:
            self.store.settle_version_text(note_id)
            version = self.store.current_version(note_id)
            if version is not None:
                if self.keeps_past:
                    self.store.retire_chunks(note_id, version.hash, version.title)
                self.store.close_version(version.id, now, ended)
            self.store.close_edges([edge.id for edge in self.store.open_edges(note_id)], now)
            if self.keep is not None:
                self.store.prune_versions_of(note_id, self.keep)

    def _sync_edges(self, note_id: int, note: Note, world: WorldTime, now: float, unseen: bool = False) -> None:
        """Close the open edges the note no longer writes (or writes with other world time);
        open edges for the links that are new (all of them for an ``unseen`` note: it has none)."""
        wanted = Counter((link.target, link.kind) for link in note.links)
        stamp = (world.date, world.valid_from, world.valid_to, world.status)
        closing = []
        for edge in [] if unseen else self.store.open_edges(note_id):
            key = (edge.target, edge.kind)
            same = (edge.world_date, edge.valid_from, edge.valid_to, edge.note_status) == stamp
            if same and wanted.get(key) == edge.count:
                del wanted[key]  # still written, as often, under the same world time: stays open
            else:
                closing.append(edge.id)
        self.store.close_edges(closing, now)
        self.store.add_edges(note_id, [(target, kind, count) for (target, kind), count in wanted.items()], world, now)


# ----- pruning -------------------------------------------------------------------------------


@dataclass
class PruneReport:
    versions: int = 0
    chunks: int = 0
    links: int = 0
    notes: int = 0  # notes whose past was cut to BRAIN_KEEP_VERSIONS
    before: str | None = None  # UTC
    before_local: str | None = None  # the same moment in local time, with its offset
    keep: int | None = None
    bytes_before: int | None = None
    bytes_after: int | None = None
    vacuumed: bool = False
    wal_folded: bool | None = None  # after the vacuum: False while a reader holds the state before
    disk_bytes_before: int = 0  # index.db and its WAL on the disk, before and after the run
    disk_bytes_after: int = 0

    def as_dict(self) -> dict[str, object]:
        return dict(self.__dict__)


def prune(store: IndexStore, *, before: float | None, keep: int | None) -> PruneReport:
    """Drop history replaced before ``before`` and past versions beyond ``keep`` per note.
    The caller holds the writer lock. Records ``history_pruned_before`` so that ``--as-of``
    earlier than it says the past there is incomplete."""
    report = PruneReport(keep=keep)
    counts_before = store.history_counts()
    with store.transaction():
        if before is not None:
            store.prune_before(before)
            # nothing was replaced after now, nor after the latest moment history holds (later
            # than now while the clock is behind it: ``Recorder.now``)
            store.note_pruned_before(min(before, max(time.time(), store.history_latest())))
            from ..moments import iso_time, local_iso  # here: an index pass reads no date (brain/moments.py)

            report.before, report.before_local = iso_time(before), local_iso(before)
        if keep is not None:
            over = store.notes_over_keep(keep)
            for note_id in over:
                store.prune_versions_of(note_id, keep)
            report.notes = len(over)
    after = store.history_counts()
    report.versions = counts_before["past_versions"] - after["past_versions"]
    report.chunks = counts_before["past_chunks"] - after["past_chunks"]
    if report.chunks:
        store.optimize_history_search()
    report.links = counts_before["closed_edges"] - after["closed_edges"]
    return report


def before_history(store: IndexStore, as_of: float) -> None:
    """A ``BrainError`` when ``as_of`` is before brain began keeping the index's history: a view
    of it would be empty, and an empty answer reads as "nothing in the notes" (the same line from
    `brain ask`, `brain serve` and `brain mcp`)."""
    since = float(store.get_meta("history_since", "0") or 0)
    if since and as_of < since:
        from ..moments import local_time  # here: an index pass reads no date (brain/moments.py)

        then, began = local_time(as_of), local_time(since)
        for finer in ("seconds", "milliseconds"):  # the same minute, or second: finer tells them apart
            if then == began:
                then, began = _to_the(finer, as_of), _to_the(finer, since)
        raise BrainError(f"as of {then} nothing is known: brain began keeping this vault's history on {began}")


def _to_the(timespec: str, moment: float) -> str:
    from ..moments import local_datetime

    return local_datetime(moment).isoformat(sep=" ", timespec=timespec)
