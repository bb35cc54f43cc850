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

from ..links import Link, Resolver

if TYPE_CHECKING:
    from ..index.store import IndexStore

_FORWARD = ("superseded_by", "superseded-by", "supersededby", "replaced_by", "replaced-by")
_BACKWARD = ("supersedes", "replaces")
_DEAD_STATUS = {"superseded", "deprecated", "obsolete", "replaced", "outdated"}
_WIKILINK = re.compile(r"\[\[([^\]|#]+)")


def _targets(value: object) -> list[str]:
    values = value if isinstance(value, list) else [value]
    out: list[str] = []
    for item in values:
        if not isinstance(item, str):
            continue
        found = _WIKILINK.findall(item)
        out.extend(found if found else [item.strip()])
    return [t.strip() for t in out if t.strip()]


def successors(store: IndexStore) -> dict[int, int]:
    """Superseded note id → successor note id."""
    notes = store.frontmatter_rows()
    if not notes:
        return {}
    id_by_path = {path: note_id for note_id, path, _, _ in notes}
    date_by_id = {note_id: date for note_id, _, date, _ in notes}
    resolver = Resolver(id_by_path, store.aliases_by_path())

    def resolve(target: str, source: str) -> int | None:
        path = resolver.resolve(Link(target, "wikilink", None, None, 0), source)
        return id_by_path.get(path) if path else None

    result: dict[int, int] = {}
    dead: set[int] = set()
    for note_id, path, _, frontmatter in notes:
        try:
            meta = json.loads(frontmatter)
        except ValueError:
            continue
        if not isinstance(meta, dict):
            continue
        for key in _FORWARD:
            for target in _targets(meta.get(key)):
                new = resolve(target, path)
                if new is not None and new != note_id:
                    result[note_id] = new
        for key in _BACKWARD:
            for target in _targets(meta.get(key)):
                old = resolve(target, path)
                if old is not None and old != note_id:
                    result.setdefault(old, note_id)
        if str(meta.get("status", "")).strip().lower() in _DEAD_STATUS:
            dead.add(note_id)
    for old in dead - set(result):
        newer = [i for i in store.linkers(old) if date_by_id[i] > date_by_id[old]]
        if newer:
            result[old] = max(newer, key=lambda i: date_by_id[i])
    return result
