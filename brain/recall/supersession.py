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

from ..links import Link, Resolver
from ..store import IndexStore

_FORWARD = ("superseded_by", "superseded-by", "supersededby", "replaced_by", "replaced-by")
_BACKWARD = ("supersedes", "replaces")
_DEAD_STATUS = {"superseded", "deprecated", "obsolete", "replaced", "outdated"}
_WIKILINK = re.compile(r"\[\[([^\]|#]+)")


def _targets(value: object) -> list[str]:
    values = value if isinstance(value, list) else [value]
    out = []
    for item in values:
        if not isinstance(item, str):
            continue
        found = _WIKILINK.findall(item)
        out.extend(found if found else [item.strip()])
    return [t.strip() for t in out if t.strip()]


def successors(store: IndexStore) -> dict[int, int]:
    """Superseded note id → successor note id."""
    notes = store.conn.execute("SELECT id, path, date, frontmatter FROM notes").fetchall()
    if not notes:
        return {}
    id_by_path = {r["path"]: r["id"] for r in notes}
    date_by_id = {r["id"]: r["date"] or "" for r in notes}
    resolver = Resolver(id_by_path, store.aliases_by_path())

    def resolve(target: str, source: str) -> int | None:
        path = resolver.resolve(Link(target, "wikilink", None, None, 0), source)
        return id_by_path.get(path) if path else None

    result: dict[int, int] = {}
    dead: set[int] = set()
    for row in notes:
        try:
            meta = json.loads(row["frontmatter"] or "{}")
        except ValueError:
            continue
        if not isinstance(meta, dict):
            continue
        for key in _FORWARD:
            for target in _targets(meta.get(key)):
                new = resolve(target, row["path"])
                if new is not None and new != row["id"]:
                    result[row["id"]] = new
        for key in _BACKWARD:
            for target in _targets(meta.get(key)):
                old = resolve(target, row["path"])
                if old is not None and old != row["id"]:
                    result.setdefault(old, row["id"])
        if str(meta.get("status", "")).strip().lower() in _DEAD_STATUS:
            dead.add(row["id"])
    for old in dead - set(result):
        linkers = store.conn.execute(
            "SELECT DISTINCT source_id FROM links WHERE target_id = ? AND source_id != ?", (old, old)
        ).fetchall()
        newer = [r[0] for r in linkers if date_by_id[r[0]] > date_by_id[old]]
        if newer:
            result[old] = max(newer, key=lambda i: date_by_id[i])
    return result
