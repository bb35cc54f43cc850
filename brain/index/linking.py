"""Resolving the links of the index against the notes now in it (see ``links.Resolver``)."""

from __future__ import annotations

import time
from collections.abc import Callable, Iterator, Sequence

from ..links import (
    Link,
    Resolver,
    candidate_resolver,
    is_attachment,
    key_stem,
    link_stem,
    note_keys,
    written_from_the_notes_folder,
)
from .store import IndexStore

# Above this many links to resolve, one Resolver over every note is quicker than finding
# each link's candidates (both give the same answers).
CANDIDATE_LIMIT = 5_000
RESOLVE_PART = 50_000  # links read and resolved at a time (``_parts``)
_LAST_ID = 2**63 - 1  # SQLite's largest rowid
# Set by a migration that changed how a link resolves (m037, m038): the next ``resolve_links`` reads the
# link history again by the new rule (``reread_link_history``) before it resolves the links.
REREAD_HISTORY = "links_history_reread"


def resolve_links(
    store: IndexStore, *, full: bool | None = None, now: Callable[[], float] = time.time
) -> dict[str, int]:
    """Resolve links against the notes now in the index; clears ``links_dirty``.

    The links resolved are those still ``pending`` (of new or changed notes) and, when names
    changed since the last resolution (a note added, deleted or renamed, or its aliases changed:
    ``store.names_version()`` is not what it recorded), those that can answer differently: the
    links filed under the stem of a key a note came, went or moved under (``links.key_stem``;
    the keys are logged by triggers, ``store.changed_stems``). Each is resolved against the few
    notes filed under the keys it can match (``links.lookup_keys``): any other link, or any other
    note, would change nothing. When the log cannot say (an index from before m012, a run that
    changed more names than it keeps) or ``full``, every link is resolved against every note.
    Returns how many of the links it looked at are resolved, dangling, or attachments. ``now``:
    the moment the link history records the changes at (the run's ``Recorder.now``).
    """
    counts = {"resolved": 0, "dangling": 0, "attachment": 0}
    # Read and written in one transaction: a change committed in between cannot be missed.
    with store.transaction():
        version = store.names_version()
        resolved_against = store.get_meta("resolver_key")
        stems: set[str] | None = None
        if full is None:
            if resolved_against != version:
                stems = store.changed_stems(resolved_against)
            full = resolved_against != version and stems is None
        store.fill_link_stems()  # links written by a brain from before m012
        by_source = store.links_by_source(every=full)
        under_stems: dict[int, list[_Row]] = {}
        for row in store.links_under_stems(stems) if stems else ():
            under_stems.setdefault(row[1], []).append(row)
        if full:
            store.fill_name_keys()
        total = sum(n for _, n, _ in by_source) + sum(map(len, under_stems.values()))
        everywhere: tuple[Resolver, dict[str, int], dict[int, str]] | None = None
        if not total:
            everywhere = Resolver(()), {}, {}
        elif full or total > CANDIDATE_LIMIT:
            stats = store.note_stats()  # path → (id, size, mtime_ns)
            everywhere = (
                Resolver(stats.keys(), store.aliases_by_path()),
                {path: row[0] for path, row in stats.items()},
                {row[0]: path for path, row in stats.items()},
            )
        moment = now()
        if store.get_meta(REREAD_HISTORY) is not None:
            reread_link_history(store)
            store.delete_meta(REREAD_HISTORY)
        with store.resolution_indexes_dropped(sum(p for _, _, p in by_source)):
            for within in _parts(by_source, under_stems):
                todo = store.links_to_resolve(every=full, within=within)
                if under_stems:
                    pending = {row[0] for row in todo}
                    todo += [
                        row
                        for source_id in sorted(under_stems)
                        if within[0] <= source_id <= within[1]
                        for row in under_stems[source_id]
                        if row[0] not in pending
                    ]
                resolver, id_by_path, path_by_id = everywhere or _candidates_resolver(store, todo)
                updates: list[tuple[int | None, str, int]] = []
                moved: set[int] = set()  # notes some of whose links now resolve elsewhere
                every: dict[tuple[int, str, str], tuple[int | None, str]] = {}  # each link's, when full
                for link_id, source_id, target, kind, was_target_id, was_status in todo:
                    link = Link(target=target, kind=kind, anchor=None, display=None, line=0)
                    target_id, status = _resolution(resolver, id_by_path, link, path_by_id[source_id])
                    counts[status] += 1
                    if full:
                        every[(source_id, target, kind)] = (target_id, status)
                    if (target_id, status) != (was_target_id, was_status):  # most of a full pass: none
                        updates.append((target_id, status, link_id))
                        moved.add(source_id)
                store.set_link_targets(updates, version)
                # Link history follows, in the same step: the edges of the notes whose links moved
                # are compared, with or without a change of names (a note an upgrade reads again,
                # m029's `[[../Note]]`, resolves otherwise with none: its edge stayed as it was).
                store.sync_edge_targets(
                    moment,
                    full=full,
                    sources=moved,
                    resolved=every if full else None,
                    within=within,
                )
    return counts


_Row = tuple[int, int, str, str, int | None, str]  # a row of ``IndexStore.links_to_resolve``


def _parts(by_source: list[tuple[int, int, int]], under_stems: dict[int, list[_Row]]) -> Iterator[tuple[int, int]]:
    """Ranges of note ids, each holding the sources of at most RESOLVE_PART links to resolve (or
    one note's, however many), that together cover every id: the vault's links are read,
    resolved and their edges brought in step a part at a time, not all at once (2,000 notes
    linking each other, 4M links, took `brain index` to 4 GB)."""
    counts = {source_id: n for source_id, n, _ in by_source}
    for source_id, rows in under_stems.items():
        counts[source_id] = counts.get(source_id, 0) + len(rows)
    start, held = 0, 0
    for source_id in sorted(counts):
        if held and held + counts[source_id] > RESOLVE_PART:
            yield start, source_id - 1
            start, held = source_id, 0
        held += counts[source_id]
    yield start, _LAST_ID


def resolve_as_now(
    store: IndexStore, source_id: int, source_path: str, links: Sequence[tuple[str, str]]
) -> list[tuple[int | None, str]]:
    """(target id, status) of each link (target as written, kind) of note ``source_id`` were it
    at ``source_path``, against the notes now in the index: what ``resolve_links`` would record."""
    written = [
        (Link(target=target, kind=kind, anchor=None, display=None, line=0), source_path) for target, kind in links
    ]
    if not written:
        return []
    resolver, id_by_path = candidate_resolver(store, written, {source_path: source_id})
    return [_resolution(resolver, id_by_path, link, source_path) for link, _ in written]


def _resolution(resolver: Resolver, id_by_path: dict[str, int], link: Link, source: str) -> tuple[int | None, str]:
    """(target id, status) of ``link`` written in the note at ``source``."""
    resolved = resolver.resolve(link, source)
    if resolved is not None:
        return id_by_path[resolved], "resolved"
    return None, "attachment" if is_attachment(link.target) else "dangling"


def _candidates_resolver(
    store: IndexStore, todo: list[tuple[int, int, str, str, int | None, str]]
) -> tuple[Resolver, dict[str, int], dict[int, str]]:
    """``candidate_resolver`` for links to resolve (rows of ``links_to_resolve``), and their
    sources' paths by id."""
    path_by_id = store.note_paths_of(row[1] for row in todo)
    links = [
        (Link(target=target, kind=kind, anchor=None, display=None, line=0), path_by_id[source_id])
        for _, source_id, target, kind, _, _ in todo
    ]
    resolver, id_by_path = candidate_resolver(store, links, {path: note_id for note_id, path in path_by_id.items()})
    return resolver, id_by_path, path_by_id


def reread_link_history(store: IndexStore) -> int:
    """The link history's targets of the links a rule changed in brain resolves otherwise, as the
    rule now reads them and by the notes of each moment: a name several notes held (m037: where
    Obsidian opens it, not the note fewest folders away), a wikilink written from its note's
    folder (m029, m035: ``[[../Other/Note]]``, ``[[..\\Other\\Note]]``, which brain left dangling).
    An edge's span is cut where a note of its name, or its own note, came, went or moved, and
    each piece takes the target the notes then give it. The rule changed in brain, not the vault:
    left to the next ``resolve_links``, each moved edge was closed and opened again at that run,
    a change of link the user never made (in `brain history`), and `--as-of` before it answered
    with the old rule's target, or none, where Obsidian opened a note from that link. Only the
    resolved edges the rule moves at their end (now, for an open one) are read again: an edge a
    first build recorded from before its target's version began (the build saw the notes one
    after another) is left as it was. A dangling edge is read again wherever the rule resolves it
    (its note may have been deleted since: the link dangles at its end by either rule). A piece
    no note of the name answers then keeps the edge's target (an alias may have: only the notes
    of the name are read), or stays dangling. An edge read again that ends where one alike begins
    (an upgrade run recorded the change: m038) is joined to it. Returns how many edges changed."""
    if not store.any_settled_edge():
        return 0  # a first build (m037 runs on a new index too): no edge resolved yet, no version read
    versions: dict[str, list[tuple[int, str, str, float, float | None]]] = {}  # name key -> versions
    by_note: dict[int, list[tuple[str, float, float | None]]] = {}
    for note_id, path, aliases, start, end in store.every_version_span():
        versions.setdefault(key_stem(note_keys(path)[1]), []).append((note_id, path, aliases, start, end))
        by_note.setdefault(note_id, []).append((path, start, end))
    shared = {stem for stem, rows in versions.items() if len({row[0] for row in rows}) > 1}
    edges = sorted(
        [row for row in (store.resolved_link_history() if shared else ()) if link_stem(row[2], row[3]) in shared]
        + [
            row
            for row in store.dangling_dotted_wikilink_history()
            if written_from_the_notes_folder(row[2]) and str(link_stem(row[2], row[3])) in versions
        ],
        key=lambda row: row[0],  # in the order they were written
    )
    changed, written = 0, []  # edges read otherwise; the ids of their pieces
    for edge_id, source_id, target, kind, target_id, start, end in edges:
        named = versions[str(link_stem(target, kind))]
        own = by_note.get(source_id, [])
        cuts = sorted(
            {start}
            | {
                moment
                for _, _, _, begun, ended in named
                for moment in (begun, ended)
                if moment is not None and start < moment and (end is None or moment < end)
            }
            | {
                moment
                for _, begun, ended in own
                for moment in (begun, ended)
                if moment is not None and start < moment and (end is None or moment < end)
            }
        )
        link = Link(target=target, kind=kind, anchor=None, display=None, line=0)
        pieces: list[tuple[float, int | None]] = []  # (from, target id)
        for moment in cuts:
            then = [(note_id, path) for note_id, path, _, begun, ended in named if _current(begun, ended, moment)]
            source = next((path for path, begun, ended in own if _current(begun, ended, moment)), None)
            found = Resolver([path for _, path in then]).resolve(link, source) if then and source else None
            answer = dict((path, note_id) for note_id, path in then).get(found or "", target_id)
            if not pieces or pieces[-1][1] != answer:
                pieces.append((moment, answer))
        if target_id is None and pieces == [(start, None)]:
            continue  # dangling all along by the rule too
        if target_id is not None and pieces[-1][1] == target_id:
            continue  # the rule gives what was recorded at the edge's end: it moved none of it
        changed += 1
        ends = [begun for begun, _ in pieces[1:]] + [end]
        written += store.cut_edge(
            edge_id,
            [
                (answer, "dangling" if answer is None else "resolved", begun, ended)
                for (begun, answer), ended in zip(pieces, ends, strict=True)
            ],
        )
    store.join_alike_edges(written)
    return changed


def _current(begun: float, ended: float | None, moment: float) -> bool:
    return begun <= moment and (ended is None or moment < ended)
