"""`brain history NOTE`: one note's life as the index saw it.

Its versions (when brain saw each, how it began and ended, its size, and a short summary of
what changed against the one before), the links it gained and lost and when, the backlinks
other notes gained and lost to it, and its supersession chain: what it replaced and what
replaced it, as the notes' frontmatter says. A renamed note is one history; a deleted note is
found by its last path or title, and a restored one continues where it stopped.
"""

from __future__ import annotations

import bisect
import contextlib
import datetime as dt
import json
import os
from dataclasses import asdict, dataclass, field
from pathlib import Path
from typing import Any

from ..errors import BrainError, EmptyNoteName
from ..index.health import built_index_dir, index_errors
from ..index.history import before_history
from ..index.store import EdgeRow, IndexStore, VersionRow
from ..index.version_text import SegmentCache
from ..links import Heading, Link, Resolver, outline, pasted_link_target
from ..moments import iso_recorded, iso_time, local_datetime, local_time
from ..notes import decode, split_frontmatter
from ..reading import (
    DEFAULT_MAX_CHARS,
    NamesThen,
    NoteMatch,
    NoteNotFound,
    OutsideVault,
    check_reference,
    inside_vault,
    match_note,
    no_note_named,
    shaped_note,
)
from ..text import in_column, literal, shell_word
from ..vault import resolve_vault
from .line_diff import changed_ranges
from .past import PastIndex
from .supersession import successors


@dataclass
class VersionEntry:
    event: str  # created, changed, renamed, restored, recorded (there when history began)
    ended: str | None  # changed, renamed, deleted, unreadable (still there, denied to brain); None while current
    recorded_from: str  # ISO 8601, UTC
    recorded_to: str | None
    path: str
    title: str
    size: int
    hash: str
    date: str | None  # the note's own date
    text_kept: bool
    changes: str  # a short summary against the version before
    added_lines: int | None = None
    removed_lines: int | None = None


@dataclass
class LinkSpan:
    """A link the note wrote (or, for backlinks, that another note wrote to it) over one span."""

    path: str | None  # the other note (None: dangling, or an attachment)
    title: str | None
    target: str  # as written
    kind: str
    gained: str  # ISO 8601, UTC
    lost: str | None  # None: still there
    # ``path`` is the other note's latest: for one deleted since, the path it had, which another
    # note may hold now; these say which note it was and where it is now.
    note_id: int | None = None  # None: dangling, or an attachment
    now: str | None = None  # its path now; None: it left the index (or dangling)
    ended: str | None = None  # how it left: deleted, unreadable (as a version's ``ended``); None: still there
    ended_at: str | None = None  # when (ISO 8601, UTC)
    other_at_path: int | None = None  # the different note at ``path`` now, if any
    then: str | None = None  # its path when the span began: a note renamed since is named by its path now
    # No note at the other end: "dangling" (a note not written yet) or "attachment", the words
    # of `brain neighbours` and `brain status`; None: a note.
    status: str | None = None


@dataclass
class NoteHistory:
    note_id: int
    path: str
    title: str
    current: bool
    versions: list[VersionEntry]
    links: list[LinkSpan]
    backlinks: list[LinkSpan]
    replaces: list[dict[str, Any]] = field(
        default_factory=list
    )  # oldest first: {"path", "title", "date", "note_id", "now"}
    replaced_by: list[dict[str, Any]] = field(default_factory=list)  # next first
    history_since: str | None = None
    earlier_versions: int = 0  # versions older than those listed (``note_history(last=N)``)
    ambiguous: list[str] = field(default_factory=list)  # other notes the name fits now (as `brain note`'s)
    # Other notes that lived at the path the name was found at, each with a moment it lived there
    # (``as_of``): a path another note took named only the note there now, and the one before
    # was out of reach. {"note_id", "path", "title", "now" (its path now; None: gone), "until", "as_of"}
    others_at_path: list[dict[str, Any]] = field(default_factory=list)
    as_of: str | None = None  # the moment the name was read at (`brain history --as-of`); None: now

    def as_dict(self) -> dict[str, Any]:
        return asdict(self)


def note_history(
    vault: str | os.PathLike[str] | None, name: str, *, last: int | None = None, as_of: float | None = None
) -> NoteHistory:
    """The history of the note ``name`` (a path, title, file name or alias, as a wikilink names
    it; a deleted note by its last path or title) in ``vault``'s index. ``last``: only the
    newest ``last`` versions are listed (``earlier_versions`` counts the others); None or 0: all.
    ``as_of`` (Unix time): the note ``name`` named then (``read_note_at``'s lookup), such as
    one that lived at a path another note holds now."""
    root = resolve_vault(vault)
    directory = built_index_dir(root)
    with index_errors(directory, root):
        store = IndexStore.open(directory, create=False, readonly_ok=True)
        try:
            return history_of(store, name, last=last, as_of=as_of)
        finally:
            store.close()


def history_of(store: IndexStore, name: str, *, last: int | None = None, as_of: float | None = None) -> NoteHistory:
    """``note_history`` over an index open already (``brain serve``'s snapshot)."""
    ambiguous: list[str] = []
    if as_of is None:
        note_id, found_at = _find(store, {v.note_id: v for v in store.latest_versions()}, name, ambiguous)
    else:
        note_id, found_at = _find_at(store, name, as_of, ambiguous)
    versions = store.versions_of(note_id)
    newest = versions[-1]
    current = newest.recorded_to is None
    # Only the versions listed are read and compared (and the one before the first of them):
    # a daily log of 800 versions is not decompressed whole for `--last 20`.
    earlier = max(len(versions) - last, 0) if last else 0  # 0: all, as `--last 0` (the protocol passes it)
    entries = _versions(store, versions, earlier)
    outgoing, incoming = store.edges_from(note_id), store.edges_into(note_id)
    others = {e.target_id for e in outgoing if e.target_id is not None} | {e.source_id for e in incoming}
    names = _whereabouts(store, sorted(others))
    links = _spans(outgoing, names, lambda e: e.target_id)
    backlinks = _spans(incoming, names, lambda e: e.source_id)
    # Supersession as the notes said it when this one was last seen.
    past = PastIndex(store, as_of=None if current else (newest.recorded_to or 0) - 1e-6, borrowed=True)
    chain = successors(past)
    replaces, replaced_by = _chain(store, note_id, chain, past)
    since = store.get_meta("history_since")
    return NoteHistory(
        note_id=note_id,
        path=newest.path,
        title=newest.title,
        current=current,
        versions=entries,
        links=links,
        backlinks=backlinks,
        replaces=replaces,
        replaced_by=replaced_by,
        history_since=iso_recorded(float(since)) if since else None,
        earlier_versions=earlier,
        ambiguous=ambiguous,
        others_at_path=_others_at(store, [found_at, _as_path(name)], note_id),
        as_of=iso_time(as_of) if as_of is not None else None,
    )


def _find_at(store: IndexStore, name: str, as_of: float, others: list[str]) -> tuple[int, str]:
    """(note id, path then) of the note ``name`` named at ``as_of``: by its names then, else by
    a name it has now or had, if it existed then (``get_note``'s ``as_of`` lookup)."""
    before_history(store, as_of)
    if not name.strip():
        raise EmptyNoteName()
    names = NamesThen(store.names_at(as_of))
    with contextlib.suppress(NoteNotFound, OutsideVault):
        match = match_note(names, name.strip())
        others.extend(match.others)
        return names.ids[match.path], match.path
    _, version = _by_its_history(store, name, as_of)
    assert version is not None
    return version.note_id, version.path


def _as_path(name: str) -> str:
    """The path ``name`` is, typed as one (``Plan`` and ``Plan.md``: Plan.md at the vault's top)."""
    wanted = name.strip()
    return wanted if wanted.casefold().endswith(".md") else f"{wanted}.md"


def _others_at(store: IndexStore, paths: list[str], note_id: int) -> list[dict[str, Any]]:
    """The other notes that lived at ``paths`` (the one the name was found at; the name itself,
    typed as a path, which a note elsewhere answers to by its file name once the note whose
    path it was left), by when they left it: each with the moment its last version there began
    (``as_of`` it, the path names that note)."""
    last: dict[tuple[int, str], VersionRow] = {}
    for path in dict.fromkeys(paths):
        for version in store.versions_at_path(path):  # oldest first: the last one kept per note
            if version.note_id != note_id:
                last[version.note_id, path] = version
    latest = store.latest_of(sorted({other for other, _ in last}))
    out = []
    for (other, path), version in sorted(last.items(), key=lambda item: item[1].id):
        gone = latest[other].recorded_to is not None
        out.append(
            {
                "note_id": other,
                "path": path,
                "title": version.title,
                "now": None if gone else latest[other].path,
                "until": iso_recorded(version.recorded_to),
                "as_of": iso_recorded(version.recorded_from),
            }
        )
    return out


def find_in_history(store: IndexStore, name: str) -> int:
    """The id of the note ``name`` names now, or named before (``brain history``'s lookup)."""
    return _find(store, {v.note_id: v for v in store.latest_versions()}, name)[0]


def _find(
    store: IndexStore, latest: dict[int, VersionRow], name: str, others: list[str] | None = None
) -> tuple[int, str]:
    """(id, the path the name was found at) of the note ``name`` names: among the notes now (as
    a wikilink would resolve it, or by title), else among deleted ones (by their last path, file
    name, alias or title), else by any name a note had before (a renamed note answers to its old
    names). ``others`` is given the other notes of now that the name fits as well (`brain note`'s
    ``ambiguous``)."""
    wanted = name.strip()
    if not wanted:
        raise EmptyNoteName()
    # A note there now is the one `brain note` reads by that name (spelled as typed first); a
    # name that is no path (an absolute one, "..") may still be a title or an old name below.
    with contextlib.suppress(NoteNotFound, OutsideVault):
        match = match_note(store, wanted)
        note_id = store.note_id(match.path)
        if note_id is not None and note_id in latest:
            if others is not None:
                others.extend(match.others)
            return note_id, match.path
    present = [(v.note_id, v.path, v.title, v.aliases) for v in latest.values() if v.recorded_to is None]
    # Deleted notes newest first (by their last version's id): a path two deleted notes had is
    # the one that held it last, as a new file there would continue it (``identity_in_history``).
    gone = [
        (v.note_id, v.path, v.title, v.aliases)
        for v in sorted(latest.values(), key=lambda v: -v.id)
        if v.recorded_to is not None
    ]
    for pool in (present, gone, store.version_names()):
        by_path: dict[str, int] = {}
        aliases: dict[str, list[str]] = {}
        for note_id, path, _, alias_json in pool:
            if path not in by_path:  # newest first: a path later taken by another note is its
                by_path[path] = note_id
                aliases[path] = _json_list(alias_json)
        found = Resolver(by_path, aliases).resolve(Link(wanted, "wikilink", None, None, 0), "")
        if found is not None:
            return by_path[found], found
        titled = [(note_id, path) for note_id, path, title, _ in pool if title.casefold() == wanted.casefold()]
        if titled:
            return titled[0]
    target = pasted_link_target(wanted)  # [[Note#Heading|shown]] pasted from a note
    if target is not None and target != wanted:
        try:
            return _find(store, latest, target)
        except BrainError:
            pass  # the error names what was typed
    # No title or old name either: an absolute path, a `..` step or a NUL is refused as get_note
    # and `brain note` refuse it, not "no note" (as if brain had looked for it there).
    check_reference(wanted)
    where = "in this index or its history (a path, title, file name or alias)"
    raise no_note_named(wanted, where, (v.title for v in latest.values()))


def where_it_went(store: IndexStore, ref: str) -> tuple[str, str | None, str] | None:
    """For a name no note answers to now (`brain note`, `brain neighbours`): what became of the
    note it named, from the history kept: (its path now, None: renamed to it; else its last path,
    how it left the index ("deleted", …) and when, in local time); None where no note had the
    name. "no note 'Alpha'" for a note deleted an hour ago sent the user to `brain ask`."""
    try:
        note_id = find_in_history(store, ref)
    except BrainError:
        return None
    versions = store.versions_of(note_id)
    if not versions:
        return None
    last = versions[-1]
    if last.recorded_to is None:  # there now, under another name: it was renamed
        return last.path, None, ""
    return last.path, _LEFT.get(last.ended or "", "deleted"), told_apart(last.recorded_to)[0]


def _versions(store: IndexStore, versions: list[VersionRow], start: int = 0) -> list[VersionEntry]:
    """Entries for ``versions[start:]``, each compared with the version before it."""
    out = []
    # Each text is read and split once (the next version is compared with it too), from the
    # segments the one before it read where it shares them.
    cache = SegmentCache()
    previous: VersionRow | None = versions[start - 1] if start > 0 else None
    previous_lines = _body(store, previous, cache) if previous is not None else None
    for version in versions[start:]:
        lines = _body(store, version, cache)
        added = removed = None
        if previous is None:
            # A first version that was not created (changed, renamed, restored) had versions
            # before it, which a prune dropped: "first seen" said it began there.
            changes = {"recorded": "there when brain began keeping history", "created": "first seen"}.get(
                version.event, "the oldest version kept (those before it were pruned)"
            )
        elif version.hash == previous.hash:
            changes = "same content" + (f"; moved from {previous.path}" if version.path != previous.path else "")
        else:
            changes, added, removed = _summary(previous, previous_lines, version, lines)
            if version.path != previous.path:
                changes += f"; moved from {previous.path}"
        if version.event == "restored":
            back = (
                "readable again"
                if previous is not None and previous.ended == "unreadable"
                else "back after being deleted"
            )
            changes = f"{back}; {changes}"
        out.append(
            VersionEntry(
                event=version.event,
                ended=version.ended,
                recorded_from=iso_recorded(version.recorded_from) or "",
                recorded_to=iso_recorded(version.recorded_to),
                path=version.path,
                title=version.title,
                size=version.size,
                hash=version.hash[:12],
                date=version.date,
                text_kept=bool(version.has_content),  # SQLite's `IS NOT NULL` is 1 or 0: JSON said 1
                changes=changes,
                added_lines=added,
                removed_lines=removed,
            )
        )
        previous, previous_lines = version, lines
    return out


def _body(store: IndexStore, version: VersionRow, cache: SegmentCache) -> list[str] | None:
    """The lines of the version's text below its frontmatter; None when its text was not kept
    (or does not read back)."""
    data = store.version_bytes(version.id, cache) if version.has_content else None
    return _lines(data) if data is not None else None


def _lines(data: bytes) -> list[str]:
    _, body, _ = split_frontmatter(decode(data)[0])
    return body.splitlines()


def _summary(
    old: VersionRow, old_lines: list[str] | None, new: VersionRow, new_lines: list[str] | None
) -> tuple[str, int, int]:
    """'+3 −1 lines; sections: Risks, Dates; frontmatter: date' (0, 0 when a text was not kept)."""
    if old_lines is None or new_lines is None:
        return "content changed (the earlier text was not kept)", 0, 0
    added = removed = 0
    sections: list[str] = []
    # The headings as chunks and `brain note` read them: none in a code block or an HTML
    # comment (a "# comment" line in a shell block was taken for a section), setext ones too.
    old_outline, new_outline = outline("\n".join(old_lines)), outline("\n".join(new_lines))
    for i1, i2, j1, j2 in changed_ranges(old_lines, new_lines):  # difflib's opcodes but 'equal'
        removed += i2 - i1
        added += j2 - j1
        # The sections a change touches: those it adds or removes, else the one it sits in.
        inside = _headings_in(new_outline, j1, j2) + _headings_in(old_outline, i1, i2)
        if not inside:
            above = _heading_above(new_outline, j1) if j2 > j1 else _heading_above(old_outline, i1)
            inside = [above] if above else []
        sections += [heading for heading in inside if heading not in sections]
    parts = [f"+{added} −{removed} lines"]
    if sections:
        parts.append(
            "sections: " + ", ".join(sections[:3]) + (f" and {len(sections) - 3} more" if len(sections) > 3 else "")
        )
    keys = _changed_keys(old.frontmatter, new.frontmatter)
    if keys:
        parts.append("frontmatter: " + ", ".join(keys[:5]))
    if new.title != old.title:
        parts.append(f"title was {old.title!r}")
    return "; ".join(parts), added, removed


def _headings_in(headings: list[Heading], start: int, end: int) -> list[str]:
    """The headings with a line in lines ``start`` to ``end`` (not included)."""
    return [heading.text for heading in headings if heading.first < end and heading.line >= start]


def _heading_above(headings: list[Heading], index: int) -> str | None:
    """The heading of the section line ``index`` is in (its own, on a heading's line)."""
    found = bisect.bisect_right([heading.first for heading in headings], index)
    return headings[found - 1].text if found else None


def _changed_keys(old: str, new: str) -> list[str]:
    before, after = _json_dict(old), _json_dict(new)
    return sorted(key for key in before.keys() | after.keys() if before.get(key) != after.get(key))


@dataclass
class _Whereabouts:
    """What a link row says of the note at its other end (``LinkSpan``'s fields)."""

    path: str
    title: str
    now: str | None
    ended: str | None
    ended_at: str | None
    other_at_path: int | None
    moves: list[tuple[float, str]]  # (from when, path) of each of its versions, oldest first

    def path_at(self, moment: float) -> str:
        """Its path at ``moment`` (its first, before it was seen)."""
        at = bisect.bisect_right([start for start, _ in self.moves], moment)
        return self.moves[max(at - 1, 0)][1]


def _whereabouts(store: IndexStore, note_ids: list[int]) -> dict[int, _Whereabouts]:
    """note id → its latest path and title, and, for one no longer in the index, how and when it
    left and which note holds that path now: named by its last path alone, a deleted note read
    as the note there today."""
    out: dict[int, _Whereabouts] = {}
    moves = store.paths_over_time(note_ids)
    for note_id, version in store.latest_of(note_ids).items():
        gone = version.recorded_to is not None
        holder = store.note_id(version.path) if gone else None
        out[note_id] = _Whereabouts(
            version.path,
            version.title,
            None if gone else version.path,
            (version.ended or "deleted") if gone else None,
            iso_recorded(version.recorded_to),
            holder if holder != note_id else None,
            moves.get(note_id, [(version.recorded_from, version.path)]),
        )
    return out


def _spans(edges: list[EdgeRow], names: dict[int, _Whereabouts], other: Any) -> list[LinkSpan]:
    """Edges as spans per (other note or target, link as written, kind): an edge closed and
    reopened at the same moment (another count, world time, or status) continues its span. A
    link written otherwise is another span, even to the same note: `[[Projects/Target]]`
    replaced by `[[Target]]` is one link lost and one gained, not the first still there."""
    spans: list[LinkSpan] = []
    last: dict[tuple[Any, str, str], tuple[LinkSpan, float | None]] = {}  # the latest span, and when it ended
    for edge in edges:  # oldest first
        other_id = other(edge)
        key = (other_id, edge.target, edge.kind)
        if key in last and last[key][1] == edge.recorded_from:  # closed and reopened in one step
            last[key][0].lost = iso_recorded(edge.recorded_to)
            last[key] = (last[key][0], edge.recorded_to)
            continue
        span = LinkSpan(
            None, None, edge.target, edge.kind, iso_recorded(edge.recorded_from) or "", iso_recorded(edge.recorded_to)
        )
        known = names.get(other_id) if other_id is not None else None
        if known is not None:
            span.path, span.title, span.note_id = known.path, known.title, other_id
            span.now, span.ended, span.ended_at, span.other_at_path = (
                known.now,
                known.ended,
                known.ended_at,
                known.other_at_path,
            )
            span.then = known.path_at(edge.recorded_from)
        elif other_id is None:
            span.status = "attachment" if edge.status == "attachment" else "dangling"
        spans.append(span)
        last[key] = (span, edge.recorded_to)
    return spans


def _chain(
    store: IndexStore, note_id: int, chain: dict[int, int], past: PastIndex
) -> tuple[list[dict[str, Any]], list[dict[str, Any]]]:
    """(what the note replaced, oldest first; what replaced it, next first), following chains.
    Each by its path then (a deleted note's chain is as it was when last seen), with its id and
    its path now (``now``; None: no longer in the index), which may be another."""
    latest: dict[int, VersionRow] = {}

    def brief(other: int) -> dict[str, Any]:
        version = past.versions.get(other)
        now = latest[other].path if other in latest and latest[other].recorded_to is None else None
        if version is None:
            return {"path": None, "title": None, "date": None, "note_id": other, "now": now}
        return {"path": version.path, "title": version.title, "date": version.date, "note_id": other, "now": now}

    later: list[int] = []
    step = note_id
    while step in chain and chain[step] not in later and chain[step] != note_id:
        step = chain[step]
        later.append(step)
    earlier: list[int] = []
    frontier = [note_id]
    while frontier:
        found = [old for old, new in chain.items() if new in frontier and old not in earlier and old != note_id]
        earlier = found + earlier
        frontier = found
    latest.update(store.latest_of(earlier + later))
    return [brief(n) for n in earlier], [brief(n) for n in later]


def _json_dict(text: str) -> dict[str, Any]:
    try:
        value = json.loads(text or "{}")
    except ValueError:
        return {}
    return value if isinstance(value, dict) else {}


def _json_list(text: str) -> list[str]:
    try:
        value = json.loads(text or "[]")
    except ValueError:
        return []
    return [str(item) for item in value] if isinstance(value, list) else []


OTHERS_SHOWN = 3  # notes that lived at a path, the latest, `brain history` names for a person

# How a note left the index: deleted, or still there but denied to brain (a chmod).
_LEFT = {"deleted": "deleted", "unreadable": "made unreadable (out of the index; the file is still there)"}


def history_text(history: NoteHistory) -> str:
    """``brain history`` for a person."""

    def when(iso: str | None) -> str:
        if iso is None:
            return "now"
        return local_time(dt.datetime.fromisoformat(iso.replace("Z", "+00:00")).timestamp())

    ended = history.versions[-1].ended if history.versions else None
    state = "current" if history.current else "unreadable" if ended == "unreadable" else "deleted"
    # Each of the vault's fields cleaned on its own: cleaned as one line, a title ending in an
    # escape's first bytes took the words after it ("Plan\x9b" + ")  note 1" read as one CSI).
    # And each kept to its row: a line break in a path or a heading ended the row, the rest at
    # the terminal's first cell. Paths and link targets as written (breaks escaped), titles and
    # what changed spaced.
    lines = [f"{literal(history.path)}  ({in_column(history.title)})  note {history.note_id}, {state}"]
    # The latest few: an `Untitled.md` every new note is made at and renamed from names dozens.
    others = history.others_at_path
    lines += [_other_line(other) for other in others[-OTHERS_SHOWN:]]
    if len(others) > OTHERS_SHOWN:
        lines.append(f"  … and {len(others) - OTHERS_SHOWN} more before them (`--json` lists every one)")
    lines += ["", "versions"]
    if history.earlier_versions:
        lines.append(f"  … {history.earlier_versions} earlier (`--last 0` lists every version)")
    # As wide as the widest size: padded to 8, a note of 1,000 KB or more moved its path a cell on.
    sizes = max([8, *(len(_size(v.size)) for v in history.versions)])
    for v in history.versions:
        lines.append(f"  {when(v.recorded_from)}  {v.event:<9} {_size(v.size):>{sizes}}  {literal(v.path)}")
        lines.append(f"  {'':16}  {'':9} {'':>{sizes}}  {in_column(v.changes)}")
        if v.ended in _LEFT:
            lines.append(f"  {when(v.recorded_to)}  {_LEFT[v.ended]}")
    lines += ["", "links (written by this note)"]
    lines += [_span_line(s, when, "→") for s in history.links] or ["  none"]
    lines += ["", "backlinks (other notes linking here)"]
    lines += [_span_line(s, when, "←") for s in history.backlinks] or ["  none"]
    if history.replaces or history.replaced_by:
        lines += ["", "supersession"]
        for label, entries in (("replaces   ", history.replaces), ("replaced by", history.replaced_by)):
            for entry in entries:
                dated = in_column((entry["date"] or "?")[:10])
                # its path then: the note may have left it since, for another note to take
                if entry.get("now") is None:
                    dated += f"; note {entry['note_id']}, deleted since"
                elif entry["now"] != entry["path"]:
                    dated += f"; now at {literal(entry['now'])}"
                lines.append(f"  {label}  {in_column(entry['title'])}  ({literal(entry['path'])}, dated {dated})")
    return "\n".join(lines)


def _other_line(other: dict[str, Any]) -> str:
    """One line for a note that lived at this path too, naming the command that shows it."""
    path = literal(other["path"])
    if other["until"] is None:  # the note there now (this one was read --as-of)
        return (
            f"a different note lives at {path} now ({in_column(other['title'])}, note {other['note_id']}): "
            f"brain history {shell_word(path)}"
        )
    until = local_time(dt.datetime.fromisoformat(other["until"].replace("Z", "+00:00")).timestamp())
    where = f"now at {literal(other['now'])}" if other["now"] else "deleted since"
    # its id: notes that held a path in turn share its file name, and often their title with it
    return (
        f"a different note lived at {path} until {until} ({in_column(other['title'])}, note {other['note_id']}, {where}): "
        f"brain history {shell_word(path)} --as-of {other['as_of']}"
    )


_GONE = {"deleted": "deleted", "unreadable": "made unreadable"}  # a link row's word for how a note left


def _span_line(span: LinkSpan, when: Any, arrow: str) -> str:
    mark = "+" if span.lost is None else "−"
    # an embed of a note not written yet was "not a note", and a link to a PDF "dangling"
    where = literal(span.path) if span.path else (span.status or "dangling")
    said = []
    if span.ended is not None:  # the note that was there: by its path alone it read as the one there now
        # its id: a path three notes held in turn has rows of two deleted notes, alike but for it
        said.append(f"note {span.note_id}, {_GONE.get(span.ended, span.ended)} {when(span.ended_at)}")
        if span.other_at_path is not None:
            said.append("a different note is there now")
    if span.then is not None and span.then != span.path:  # renamed since: the link led to another path then
        said.append(f"then at {literal(span.then)}")
    if said:
        where += f" ({'; '.join(said)})"
    # The kind, as `brain neighbours` shows it: a property link and a wikilink to the same note
    # (`superseded_by: "[[X]]"` and `[[X]]` in the body) were two identical rows.
    kind = f"  ({span.kind})" if span.kind != "wikilink" else ""
    return f"  {mark} [[{literal(span.target)}]] {arrow} {where}{kind}  {when(span.gained)} – {when(span.lost)}"


def _size(size: int) -> str:
    return f"{size} B" if size < 1024 else f"{size / 1024:.1f} KB"


# ----- a note as it was (MCP get_note with as_of, brain serve's note with as_of) ----------------


def read_note_at(
    store: IndexStore,
    root: Path,
    ref: str,
    as_of: float,
    *,
    heading: str | None = None,
    max_chars: int = DEFAULT_MAX_CHARS,
) -> dict[str, Any]:
    """One note as it was at ``as_of`` (Unix time), from the text history kept: what
    ``read_note`` gives, with ``as_of`` and the ``version`` read (when brain saw it begin and
    end), and ``path`` and ``title`` as they were then: ``now`` is its path today (None: it left
    the index) and ``path_reused`` says a different note is at ``path`` now.

    ``ref`` names the note by its names then (a path, title or alias), else by a name it has now
    or had (a renamed note is read under its name then). The same refusals as ``read_note``: an
    absolute path or ``..`` (``OutsideVault``), a path brain now leaves out (.brainignore, a
    dot-folder) or that now leads out of the vault. A note that did not exist then, whose versions
    then a prune dropped, or whose text history did not keep (an index from before history), is
    ``NoteNotFound`` saying so."""
    before_history(store, as_of)
    names = NamesThen(store.names_at(as_of))
    try:
        match = match_note(names, ref)
        version = store.version_at(names.ids[match.path], as_of)
    except NoteNotFound:
        match, version = _by_its_history(store, ref, as_of)
    assert version is not None
    path = version.path
    inside_vault(root, path)  # where that path leads now (if anywhere) must still be in the vault, and read
    data = store.version_bytes(version.id) if version.has_content else None
    if data is None:
        raise NoteNotFound(
            f"{path} as of {local_time(as_of)}: its text then was not kept (indexed before brain kept history); "
            "`brain history` lists its versions"
        )
    found = shaped_note(path, match, data, version.recorded_from, heading, max_chars)
    found["date"] = version.date  # as recall showed it then (the file's mtime is not kept)
    found["as_of"] = iso_time(as_of)
    found["version"] = {
        "event": version.event,
        "recorded_from": iso_recorded(version.recorded_from),
        "recorded_to": iso_recorded(version.recorded_to),
        "ended": version.ended,
    }
    # ``path`` is the note's then: a note deleted since, read by it, was read as the one there today
    moved, gone, reused = store.whereabouts_now([(version.note_id, path)])[version.note_id]
    found["now"] = None if gone else (moved or path)
    found["path_reused"] = reused
    return found


_ENDED = {"changed": "changed", "renamed": "renamed", **_LEFT}


def told_apart(*moments: float) -> list[str]:
    """Each moment in local time, to the minute, or to the second or millisecond where two that
    differ would read the same: "did not exist as of 08:14: it was deleted on 08:14" told nothing
    (a note read as of the moment it was deleted, a version saved and replaced within a minute)."""
    said: list[str] = []
    for timespec in ("minutes", "seconds", "milliseconds"):
        said = [local_datetime(each).isoformat(sep=" ", timespec=timespec) for each in moments]
        if len(set(said)) == len(set(moments)):
            break
    return said


def version_line(found: dict[str, Any], as_of: float) -> str:
    """``brain note --as-of``'s line under its header: the moment asked about, which version of
    the note that is (when brain saw it begin and end, and how it ended), and where the note is
    now, from ``read_note_at``'s answer (``version``, ``path``, ``now``, ``path_reused``)."""

    def moment(iso: str) -> float:
        return dt.datetime.fromisoformat(iso.replace("Z", "+00:00")).timestamp()

    version = found["version"]
    ended_at = None if version["recorded_to"] is None else moment(version["recorded_to"])
    then, began, *ended_then = told_apart(as_of, moment(version["recorded_from"]), *[ended_at] if ended_at else [])
    line = f"as of {then}: the version brain saw from {began}"
    if not ended_then:
        line += " on, the latest indexed"
    else:
        ended = _ENDED.get(version["ended"] or "", "changed")
        line += f" to {ended_then[0]}, when it was {ended}"
    if found["now"] is None:
        line += "; deleted since"
    elif found["now"] != found["path"]:
        line += f"; now at {literal(found['now'])}"
    if found["path_reused"]:
        line += f"; a different note is at {literal(found['path'])} now"
    return line


def _by_its_history(store: IndexStore, ref: str, as_of: float) -> tuple[NoteMatch, VersionRow | None]:
    """The note ``ref`` names now or by a name it had (``brain history``'s lookup), as it was at
    ``as_of``: a note renamed since is read under its name then; one that did not exist then is
    ``NoteNotFound`` saying when it did."""
    try:
        note_id = find_in_history(store, ref)
    except NoteNotFound:
        raise  # NoNoteNamed stays one: the CLI adds how to find the note by what it says (search_hint)
    except BrainError as exc:
        raise NoteNotFound(str(exc)) from None
    version = store.version_at(note_id, as_of)
    if version is not None:
        return NoteMatch(version.path), version
    versions = store.versions_of(note_id)
    newest = versions[-1]
    before = [v for v in versions if v.recorded_from <= as_of]
    if not before and versions[0].event not in ("created", "recorded"):
        # its first version kept began otherwise: what it was then is what a prune dropped
        then, kept = told_apart(as_of, versions[0].recorded_from)
        raise NoteNotFound(
            f"{newest.path} as of {then}: its versions before {kept} were pruned "
            "(`brain prune`, BRAIN_KEEP_VERSIONS); `brain history` lists those kept"
        )
    if not before:
        then, first = told_apart(as_of, versions[0].recorded_from)
        said = f"brain first saw it on {first}"
    else:
        later = [v.recorded_from for v in versions if v.recorded_from > as_of][:1]
        ended_at = before[-1].recorded_to  # it did not exist then: the version before it had ended
        then, left, *back = told_apart(as_of, as_of if ended_at is None else ended_at, *later)
        said = f"it was {_LEFT.get(before[-1].ended or '', 'deleted')} on {left}"
        if back:
            said += f" and back on {back[0]}"
    raise NoteNotFound(f"{newest.path} did not exist as of {then}: {said}")
