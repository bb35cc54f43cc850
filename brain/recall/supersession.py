"""Which notes were superseded, and by what.

Evidence, strongest first:
1. the old note's frontmatter names its successor (``superseded_by``, ``replaced_by``);
2. a newer note's frontmatter names what it replaces (``supersedes``, ``replaces``);
3. the old note says ``status: superseded`` (or deprecated, obsolete) and a newer note links
   to it: the newest such note is taken as its successor.
"""

from __future__ import annotations

import json
import re
from typing import TYPE_CHECKING

from ..links import Link, candidate_resolver

if TYPE_CHECKING:
    from ..index.store import IndexStore

_FORWARD = ("superseded_by", "superseded-by", "supersededby", "replaced_by", "replaced-by")
_BACKWARD = ("supersedes", "replaces")
_DEAD_STATUS = {"superseded", "deprecated", "obsolete", "replaced", "outdated"}
_WIKILINK = re.compile(r"\[\[([^\]|#]+)")


def _field(meta: dict[str, object], name: str) -> object:
    """The ``name`` property (lower case), else the first key that is ``name`` in other case
    (``Status:``, ``Superseded_By:``): as notes.py reads dates, status, aliases and tags."""
    if name in meta:
        return meta[name]
    return next((value for key, value in meta.items() if str(key).lower() == name), None)


def _targets(value: object) -> list[str]:
    values = value if isinstance(value, list) else [value]
    out: list[str] = []
    for item in values:
        if not isinstance(item, str):
            continue
        found = _WIKILINK.findall(item)
        out.extend(found if found else [item.strip()])
    return [t.strip() for t in out if t.strip()]


# What the frontmatter of every note the rules act on holds, case aside: a key above or a dead
# status. The store hands over only those notes (a vault of 100,000 notes without any: none),
# and their targets are resolved against only the notes they can name.
_WORDS = ("supersed", "replace", "deprecated", "obsolete", "outdated")


def successors(store: IndexStore) -> dict[int, int]:
    """Superseded note id → successor note id."""
    notes: list[tuple[int, str, dict[str, object]]] = []
    for note_id, path, _, frontmatter in store.frontmatter_rows(containing=_WORDS):
        try:
            meta = json.loads(frontmatter)
        except ValueError:
            continue
        if isinstance(meta, dict):
            notes.append((note_id, path, meta))
    if not notes:
        return {}
    named = [
        (Link(target, "wikilink", None, None, 0), path)
        for _, path, meta in notes
        for key in (*_FORWARD, *_BACKWARD)
        for target in _targets(_field(meta, key))
    ]
    resolver, id_by_path = candidate_resolver(store, named, {path: note_id for note_id, path, _ in notes})

    def resolve(target: str, source: str) -> int | None:
        path = resolver.resolve(Link(target, "wikilink", None, None, 0), source)
        return id_by_path.get(path) if path else None

    result: dict[int, int] = {}
    dead: set[int] = set()
    # By path: of two notes that say they replace one, the first by path is its successor, not
    # the first the index met (ids follow that order: another after a fresh index or a rebuild).
    for note_id, path, meta in sorted(notes, key=lambda note: note[1]):
        for key in _FORWARD:
            for target in _targets(_field(meta, key)):
                new = resolve(target, path)
                if new is not None and new != note_id:
                    result[note_id] = new
        for key in _BACKWARD:
            for target in _targets(_field(meta, key)):
                old = resolve(target, path)
                if old is not None and old != note_id:
                    result.setdefault(old, note_id)
        if str(_field(meta, "status") or "").strip().lower() in _DEAD_STATUS:
            dead.add(note_id)
    for old in sorted(dead - set(result)):
        linkers = store.linkers(old)
        dates = store.note_dates([old, *linkers])
        newer = [i for i in linkers if dates.get(i, "") > dates.get(old, "")]
        if newer:
            newest = max(dates.get(i, "") for i in newer)
            tied = [i for i in newer if dates.get(i, "") == newest]
            paths = store.notes_brief(tied) if len(tied) > 1 else {}
            result[old] = min(tied, key=lambda i: paths.get(i, ("",))[0])  # of equal dates, the first by path
    return result
