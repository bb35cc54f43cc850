"""The small-notes lane: a note of a few lines read with the folders it sits in.

Over half of a messy vault's notes can be a few lines (1,545 of vaultofknowledge's 2,721 are one
chunk under 400 characters): ``Testing PM Software/Trello.md`` holds "Simple UI, Kanban boards,
Power-ups", and only its folders say it is a project-management app someone tried. Its chunk's
vector is that list's; the folders lane reads folders only where the query names one word for
word. This lane embeds each such note as its folders, title and text ("… > PM Software > Testing
PM Software > Trello", the index's ``heading+path`` form, on these notes alone) and ranks them by
the query's cosine with that.

Query time, a patch to measure (README, "What each stage is worth"): the texts are embedded at a
recaller's first query that runs the lane, and kept while the index is unchanged. Off by default
(its weight, ``RecallSettings.weights["small_notes"]``, is 0).
"""

from __future__ import annotations

from typing import TYPE_CHECKING

from .dense import candidates_for

if TYPE_CHECKING:
    import numpy as np

    from ..embed import Embedder
    from ..index.store import IndexStore
    from .types import Candidate


def _folders(path: str) -> str:
    """A path with each folder's leading number dropped ("06. Collected Knowledge" → "Collected
    Knowledge"): a number that orders folders in a file browser says nothing of what is in them."""
    parts = path.split("/")
    return "/".join([part.split(". ", 1)[1] if _numbered(part) else part for part in parts[:-1]] + parts[-1:])


def _numbered(part: str) -> bool:
    head, dot, rest = part.partition(". ")
    return bool(dot) and head.isdigit() and bool(rest)


class SmallNotes:
    """The notes of one chunk under ``max_chars`` characters, each embedded with its folders."""

    def __init__(self, notes: list[tuple[int, int]], vectors: np.ndarray, max_chars: int):
        self.notes = notes  # (note id, its one chunk's id), in the rows' order
        self.vectors = vectors
        self.max_chars = max_chars

    @classmethod
    def build(cls, store: IndexStore, embedder: Embedder, max_chars: int) -> SmallNotes:
        import numpy as np

        from ..chunking import Chunk, embedding_text

        rows = store.conn.execute(
            "SELECT n.id, n.path, n.title, MIN(c.id), MIN(c.heading), MIN(c.text) FROM notes n"
            " JOIN chunks c ON c.note_id = n.id GROUP BY n.id"
            " HAVING COUNT(c.id) = 1 AND LENGTH(MIN(c.text)) < ? ORDER BY n.id",
            (max_chars,),
        ).fetchall()
        texts = [
            embedding_text(title, Chunk(0, (heading,) if heading else (), text), _folders(path))
            for _, path, title, _, heading, text in rows
        ]
        dim = int(getattr(embedder, "dim", 0) or 0)
        vectors = (
            np.asarray(embedder.embed_documents(texts), dtype=np.float32) if texts else np.zeros((0, dim), np.float32)
        )
        return cls([(row[0], row[3]) for row in rows], vectors, max_chars)

    def search(self, store: IndexStore, query_vector: np.ndarray, depth: int) -> list[Candidate]:
        """The ``depth`` small notes nearest the query by their folders, title and text, best first."""
        import numpy as np

        if depth <= 0 or not self.notes:
            return []
        scores = self.vectors @ np.asarray(query_vector, dtype=np.float32)
        take = min(depth, len(scores))
        order = np.argpartition(-scores, take - 1)[:take]
        order = order[np.lexsort((order, -scores[order]))]  # best first, then by row: repeatable
        picks = [(self.notes[i][0], self.notes[i][1], float(scores[i])) for i in order]
        return candidates_for(store, picks, "small_notes")
