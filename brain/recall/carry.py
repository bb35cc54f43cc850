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
    from .names import NameIndex
    from .ppr import LinkGraph


@dataclass(frozen=True)
class Basis:
    """What a snapshot's names and link graph were built from."""

    index_id: str | None
    names_version: str
    link_fences: str | None
    note_ids: np.ndarray  # ascending
    written_at: np.ndarray  # each note's indexed_at (NaN when unknown: never equal)
    titles: np.ndarray  # each note's title's CRC-32 (stable across processes: recall/cache.py keeps it)

    def same(self, other: Basis) -> bool:
        """Exactly the same state of notes (nothing written in between)."""
        import numpy as np

        return (
            (self.index_id, self.names_version, self.link_fences)
            == (other.index_id, other.names_version, other.link_fences)
            and np.array_equal(self.note_ids, other.note_ids)
            and np.array_equal(self.written_at, other.written_at, equal_nan=True)
            and np.array_equal(self.titles, other.titles)
        )


@dataclass
class Built:
    """What a recaller built from one state of the index (None: not built)."""

    basis: Basis
    names: dict[str, str] | None
    name_index: NameIndex | None
    link_graph: LinkGraph | None


def read_basis(store: IndexStore) -> Basis:
    import numpy as np

    rows = store.note_basis()
    ids, written, titles = zip(*rows) if rows else ((), (), ())
    return Basis(
        index_id=store.index_id(),
        names_version=store.names_version(),
        link_fences=store.get_meta("link_fences"),
        note_ids=np.array(ids, dtype=np.int64),
        written_at=np.array([float("nan") if t is None else t for t in written], dtype=np.float64),
        titles=np.array([zlib.crc32(t.encode("utf-8", "surrogatepass")) for t in titles], dtype=np.int64),
    )


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


def written_since(old: Basis, new: Basis) -> list[int] | None:
    """The notes written between the two states, whose links alone can differ; None when
    the link graph cannot be carried over (other notes, names or link setting)."""
    if not _same_notes(old, new) or old.link_fences != new.link_fences:
        return None
    moved = old.written_at != new.written_at  # NaN != NaN: an unknown time counts as written
    return [int(i) for i in new.note_ids[moved]]
