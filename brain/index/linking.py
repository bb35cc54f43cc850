"""Resolving the links of the index against the notes now in it (see ``links.Resolver``)."""

from __future__ import annotations

import time
from collections.abc import Callable, Sequence

from ..links import Link, Resolver, candidate_resolver, is_attachment
from .store import IndexStore

# Above this many links to resolve, one Resolver over every note is quicker than finding
# each link's candidates (both give the same answers).
CANDIDATE_LIMIT = 5_000


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
        todo = store.links_to_resolve(every=full)
        if stems:
            pending = {row[0] for row in todo}
            todo += [row for row in store.links_under_stems(stems) if row[0] not in pending]
        if full:
            store.fill_name_keys()
        if not todo:
            resolver, id_by_path, path_by_id = Resolver(()), {}, {}
        elif full or len(todo) > CANDIDATE_LIMIT:
            stats = store.note_stats()  # path → (id, size, mtime_ns)
            resolver = Resolver(stats.keys(), store.aliases_by_path())
            id_by_path = {path: row[0] for path, row in stats.items()}
            path_by_id = {row[0]: path for path, row in stats.items()}
        else:
            resolver, id_by_path, path_by_id = _candidates_resolver(store, todo)
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
        # Link history follows, in the same step. Without a change of names, a pending link
        # answers as the link it replaced did (same notes, same source path): only pending
        # edges need their targets; after one, the edges of the links that moved are compared.
        store.sync_edge_targets(
            now(), full=full, sources=moved if stems is not None else (), resolved=every if full else None
        )
    return counts


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
