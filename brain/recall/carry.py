"""What a new snapshot of the index takes over from the one before it (``brain serve``).

After each save the server indexes, opens a snapshot of the new state and, before answering
from it, builds what queries read whole: the vault's names (the entity gate), the name index
(the names lane) and the link graph (PPR). At 100,000 notes that was 2.4 s of every save,
nearly all of it for a note whose names and links had not changed, which is what typing in a
note does. Each snapshot records what those were built from (``Basis``), and the next one
takes them over where that is unchanged:

- names and name index: the same database (``index_id``), no note added, deleted, renamed or
  re-aliased (``names_version``, moved by triggers in the same transaction), and every note's
  title as it was (compared: a title changes with an edit of the note);
- the folder index (the folders lane: every note's id and path, the folders a query can name,
  the paths sorted): the same database and no note added, deleted or renamed, so every note at
  the path it had (a title changed or not: a folder is not named by titles);
- the link graph: the same database, names and link setting (``link_fences``), so the same
  notes, and the links of every note not written since (``indexed_at``) resolve as they did:
  a link resolves elsewhere only after a change of names. The links of the notes written
  since are read and compared (``LinkGraph.carried``): the graph is kept when they are as
  they were, and patched with them when not.

Anything else is built afresh. tests/test_carry.py checks every structure against a fresh
build after random sequences of changes of every kind.
"""

from __future__ import annotations

import zlib
from dataclasses import dataclass
from typing import TYPE_CHECKING

if TYPE_CHECKING:
    import numpy as np

    from ..index.store import IndexStore
    from .folders import FolderIndex
    from .gate import Holders
    from .names import NameIndex
    from .ppr import LinkGraph


@dataclass(frozen=True)
class Basis:
    """What a snapshot's names and link graph were built from."""

    index_id: str | None
    names_version: str
    link_fences: str | None
    note_ids: np.ndarray  # ascending
    written_at: np.ndarray  # each note's indexed_at (NOT NULL: set by every write of the note)
    titles: np.ndarray  # each note's title's CRC-32 (stable across processes: recall/cache.py keeps it)

    def same(self, other: Basis) -> bool:
        """Exactly the same state of notes (nothing written in between)."""
        import numpy as np

        return (
            (self.index_id, self.names_version, self.link_fences)
            == (other.index_id, other.names_version, other.link_fences)
            and np.array_equal(self.note_ids, other.note_ids)
            and np.array_equal(self.written_at, other.written_at)
            and np.array_equal(self.titles, other.titles)
        )


@dataclass
class Built:
    """What a recaller built from one state of the index (None: not built)."""

    basis: Basis
    names: dict[str, str] | None
    name_index: NameIndex | None
    link_graph: LinkGraph | None
    holders: Holders | None = None  # the names several notes have (``gate.name_table``), with ``names``
    # The name index as kept on disk (``NameIndex.state``, marshalled), read into one only when
    # first asked for: a query that needs only the names (``--mode vector``) spares 0.3 s.
    kept_name_index: bytes | None = None
    folder_index: FolderIndex | None = None


def read_basis(store: IndexStore, previous: Basis | None = None) -> Basis:
    """The state of ``store``'s notes. With ``previous`` (an earlier basis of the same index),
    only the titles of notes written since are read: a title changes only with a write of its
    note (``IndexStore.write_note`` sets ``indexed_at``), so the others are ``previous``'s."""
    import numpy as np

    rows = store.note_write_times()
    table = np.array(rows, dtype=np.float64).reshape(-1, 2)  # ids are far below 2**53: exact
    note_ids, written_at = table[:, 0].astype(np.int64), np.ascontiguousarray(table[:, 1])
    if previous is not None and np.array_equal(previous.note_ids, note_ids):
        titles = previous.titles.copy()
        moved = np.flatnonzero(previous.written_at != written_at)
        if len(moved):
            read = store.titles_of(note_ids[moved].tolist())
            titles[moved] = [_crc(read[int(note_ids[i])]) for i in moved]
    else:
        read = store.titles_of()
        titles = np.array([_crc(read[int(i)]) for i in note_ids], dtype=np.int64)
    return Basis(
        index_id=store.index_id(),
        names_version=store.names_version(),
        link_fences=store.get_meta("link_fences"),
        note_ids=note_ids,
        written_at=written_at,
        titles=titles,
    )


def _crc(title: str) -> int:
    return zlib.crc32(title.encode("utf-8", "surrogatepass"))


def _same_notes(old: Basis, new: Basis) -> bool:
    import numpy as np

    return (
        new.index_id is not None
        and (old.index_id, old.names_version) == (new.index_id, new.names_version)
        and np.array_equal(old.note_ids, new.note_ids)
    )


def names_unchanged(old: Basis, new: Basis) -> bool:
    """Whether every note's names (path, title, aliases) are what they were."""
    import numpy as np

    return _same_notes(old, new) and np.array_equal(old.titles, new.titles)


def paths_unchanged(old: Basis, new: Basis) -> bool:
    """Whether the same notes are at the same paths (``names_version`` moves with a path)."""
    return _same_notes(old, new)


def written_since(old: Basis, new: Basis) -> list[int] | None:
    """The notes written between the two states, whose links alone can differ; None when
    the link graph cannot be carried over (other notes, names or link setting)."""
    if not _same_notes(old, new) or old.link_fences != new.link_fences:
        return None
    moved = old.written_at != new.written_at
    return [int(i) for i in new.note_ids[moved]]
