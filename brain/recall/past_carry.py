"""What a view of the past takes over from the present: its names and its link graph.

The first query of ``brain ask --as-of`` builds the slice's names (the entity gate's table and
the names lane's index) and its link graph: 3.5 s at 100,000 notes, in every process, where
the present reads its own from the disk cache (``recall/cache.py``). But a slice is mostly the
present: only the notes made, deleted, renamed, re-titled, re-aliased or relinked since its
moment differ. So a slice takes the present's (from the disk cache, else built and kept there
for the next run) and applies the difference, exactly:

- names: every note's (path, title, aliases) then against now (``names_difference``); the
  names of the notes that differ are taken out of the present's and theirs then put in where
  a build puts them (``NameIndex.patched``; the gate's table: ``gate_names``, knowing from the
  present's ``Holders`` which other notes hold a name they held or hold);
- the link graph: the slice's links against the present's graph, compared whole (a numpy
  comparison, in one order: ``LinkGraph.of_links``); the present's where they are the same,
  else built from the slice's links (they are in memory as arrays: no reading, no tuples).

What is taken must be of one state of the present: the present's names and the rows they are
compared with are read in one read transaction, and a present built before it is used only if
the index has not changed since (``carry.read_basis``). Anything else is built from the slice
as before. tests/test_history_from_present.py checks each structure, and the answers, against
a build from the slice at every moment of a timeline of every kind of change.
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass
from typing import TYPE_CHECKING

from .gate import Holders, normalise_name, title_keys
from .names import Entry, NameIndex, name_entries

if TYPE_CHECKING:
    from .past import PastIndex
    from .ppr import LinkGraph

# Off: a slice builds its own names and link graph from its rows (the tests compare the two).
TAKE_FROM_PRESENT = True

Row = tuple[str, str, tuple[str, ...]]  # a note's path, title and aliases


@dataclass(frozen=True)
class Difference:
    """The notes whose names differ between a slice and the present (in one of the two only,
    or with another path, title or aliases), with their rows in each."""

    changed: frozenset[int]
    before: dict[int, Row]  # the present's rows of the changed notes it has
    after: dict[int, Row]  # the slice's rows of the changed notes it has


def names_difference(past: PastIndex) -> Difference:
    """Every note's names in ``past`` against the present's (``past.base``): 0.15 s at 100,000 notes."""
    present = past.base
    paths = {n: (path, title) for n, path, title in present.note_names()}
    aliases: dict[int, list[str]] = {}
    for n, alias in present.alias_rows():
        aliases.setdefault(n, []).append(alias)
    changed = set(paths.keys() - past.versions.keys())
    changed |= aliases.keys() - paths.keys()  # aliases of no note: a build of the present reads them too
    for n, version in past.versions.items():
        now = paths.get(n)
        if (
            now is None
            or now[0] != version.path
            or now[1] != version.title
            or ((version.aliases != "[]" or n in aliases) and tuple(aliases.get(n, ())) != past.aliases_then(n))
        ):
            changed.add(n)
    before = {n: (*paths[n], tuple(aliases.get(n, ()))) for n in changed if n in paths}
    for n in changed - paths.keys():  # aliases of no note: their names, without a title or a path
        if n in aliases:
            before[n] = ("", "", tuple(aliases[n]))
    after = {n: row for n in sorted(changed) if (row := past.name_row(n)) is not None}
    return Difference(frozenset(changed), before, after)


def name_index(present: NameIndex, difference: Difference) -> NameIndex:
    """The slice's name index: ``NameIndex.from_store(past)`` exactly, from the present's."""
    if not difference.changed:
        return present
    titled, aliased = _entries(difference.after)
    return present.patched(set(difference.changed), titled, aliased)


def _entries(rows: dict[int, Row]) -> tuple[list[Entry], list[Entry]]:
    ordered = sorted(rows.items())
    return name_entries(
        ((n, path, title) for n, (path, title, _) in ordered),
        ((n, alias) for n, (_, _, aliases) in ordered for alias in aliases),
    )


def gate_names(
    present: dict[str, str],
    holders: Holders,
    difference: Difference,
    note_id_of: Callable[[str], int | None],
    row_of: Callable[[int], Row | None],
) -> dict[str, str]:
    """The slice's table of names for the entity gate: ``gate.name_table`` of the slice exactly,
    from the present's ``present`` and ``holders``. A name no changed note held or holds names
    what it named. One that one did names the first of its holders then (titles and file
    names before aliases, each by note id): of the notes that did not change, those the
    present's ``holders`` list, or the one its table names when no other note had the name;
    and the changed ones, from their rows then. ``note_id_of``: the present's note at a path;
    ``row_of``: a note's row in the slice (an unchanged note's is the present's)."""
    if not difference.changed:
        return present
    changed = difference.changed
    then: dict[str, list[tuple[int, int]]] = {}  # name → its changed holders then, as (part, note id)
    for n, row in difference.after.items():
        for key, part in _held(row).items():
            then.setdefault(key, []).append((part, n))
    touched = set(then)
    for row in difference.before.values():
        touched.update(_held(row))
    out = dict(present)
    for key in touched:
        found = list(then.get(key, ()))
        if key in holders:
            found += [h for h in holders[key] if h[1] not in changed]
        elif key in present:
            holder = note_id_of(present[key])
            if holder is None:
                raise ValueError(f"{present[key]!r} holds {key!r} but is no note now")
            if holder not in changed:
                found.append((_part(row_of(holder), holder, key), holder))
        if found:
            first = min(found)[1]
            named = difference.after[first] if first in changed else row_of(first)
            if named is None:
                raise ValueError(f"note {first} holds {key!r} now but is in no row of the slice")
            out[key] = named[0]
        else:
            out.pop(key, None)
    return out


def _part(row: Row | None, note_id: int, key: str) -> int:
    """The part in which an unchanged note holds ``key``: the present's table says it does, so
    its row, the same then, must (else the table is not of the rows compared: a ValueError, and
    the slice builds its own)."""
    part = _held(row).get(key) if row is not None else None
    if part is None:
        raise ValueError(f"note {note_id} holds {key!r} now but not in its row")
    return part


def _held(row: Row) -> dict[str, int]:
    """The names a note's row holds, each with its part: 0 as its title or file name, 1 only
    as an alias (``gate.name_table``'s order). A row without a path (aliases of no note) holds none."""
    path, title, aliases = row
    if not path:
        return {}
    out = dict.fromkeys(title_keys(path, title), 0)
    for alias in aliases:
        out.setdefault(normalise_name(alias), 1)
    return out


def link_graph(past: PastIndex, present: LinkGraph | None) -> LinkGraph:
    """The slice's link graph: ``LinkGraph(past)`` exactly; ``present`` itself where the slice's
    notes and links are the present's."""
    from .ppr import LinkGraph

    return LinkGraph.of_links(past.note_ids(), past.edge_array(), like=present)
