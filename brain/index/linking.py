"""Resolving the links of the index against the notes now in it (see ``links.Resolver``)."""

from __future__ import annotations

import hashlib
import time

from ..links import Link, Resolver, is_attachment
from .store import IndexStore


def resolve_links(store: IndexStore, *, full: bool | None = None) -> dict[str, int]:
    """Resolve links against the notes now in the index; clears ``links_dirty``.

    When the set of note paths and aliases is what the last resolution saw, only links still
    ``pending`` (those of new or changed notes) are resolved: any other link would resolve
    the same way again. Otherwise (a note added, removed, renamed, or an alias changed) every
    link is, since a dangling link may now resolve and a resolved one may now dangle.
    Returns how many of the links it looked at are resolved, dangling, or attachments.
    """
    rows = store.note_rows()
    aliases = store.aliases_by_path()
    key = resolver_key(list(rows), aliases)
    if full is None:
        full = store.get_meta("resolver_key") != key
    resolver = Resolver(rows.keys(), aliases)
    id_by_path = {path: row.id for path, row in rows.items()}
    path_by_id = {row.id: path for path, row in rows.items()}
    updates: list[tuple[int | None, str, int]] = []
    counts = {"resolved": 0, "dangling": 0, "attachment": 0}
    for link_id, source_id, target, kind in store.links_to_resolve(every=full):
        link = Link(target=target, kind=kind, anchor=None, display=None, line=0)
        resolved = resolver.resolve(link, path_by_id[source_id])
        target_id: int | None = None
        if resolved is not None:
            status, target_id = "resolved", id_by_path[resolved]
        elif is_attachment(target):
            status = "attachment"
        else:
            status = "dangling"
        counts[status] += 1
        updates.append((target_id, status, link_id))
    with store.transaction():
        store.set_link_targets(updates, key)
        store.sync_edge_targets(time.time(), full=full)  # link history follows, in the same step
    return counts


def resolver_key(paths: list[str], aliases: dict[str, list[str]]) -> str:
    """A fingerprint of everything resolution depends on: note paths and aliases."""
    digest = hashlib.sha1()
    for path in sorted(paths):
        digest.update(path.encode("utf-8", "surrogateescape") + b"\0")
        for alias in aliases.get(path, ()):
            digest.update(b"\1" + alias.encode("utf-8", "surrogateescape"))
    return digest.hexdigest()
