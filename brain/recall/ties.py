"""Ties broken by what the user sees: a note's vault-relative path.

Two notes may score exactly the same (a note copied to two folders, BM25 alone, PageRank on a
symmetric graph). A note's id follows the order the index first met it in (a vault indexed
afresh, a rename, ``--rebuild``, ``brain serve`` seeing files in another order), so a tie
broken by id, or left to a sort's or numpy's order, gave the same index's same answer in
another order elsewhere. Every ranked list is ordered, and cut, by its score then the path.
Paths are read only for the notes that tie: most lists have none, and cost nothing more.
"""

from __future__ import annotations

from collections.abc import Callable, Iterable, Sequence
from typing import TYPE_CHECKING, Any, TypeVar

if TYPE_CHECKING:
    from ..index.store import IndexStore
    from .types import Candidate

T = TypeVar("T")


def cut(ordered: list[T], key: Callable[[T], Any], depth: int) -> list[T]:
    """The first ``depth`` of ``ordered`` (sorted by ``key``) and every one after them that ties
    the last: which of those keeps the place is for the path to decide (``top_notes``)."""
    if depth <= 0:
        return []
    if len(ordered) <= depth:
        return ordered
    last, end = key(ordered[depth - 1]), depth
    while end < len(ordered) and key(ordered[end]) == last:
        end += 1
    return ordered[:end]


def top_notes(store: IndexStore, note_ids: Iterable[int], key: Callable[[int], Any], depth: int) -> list[int]:
    """The ``depth`` first of these notes by ``key`` (ascending: ``-score`` puts the best first),
    notes of an equal key by path."""
    ordered = cut(sorted(note_ids, key=key), key, depth)
    keys = [key(n) for n in ordered]
    if len(set(keys)) == len(keys):  # most lists: no tie, no path read
        return ordered[:depth]
    tied = [n for i, n in enumerate(ordered) if (i and keys[i - 1] == keys[i]) or keys[i + 1 : i + 2] == [keys[i]]]
    paths = {n: path for n, (path, _) in store.notes_brief(tied).items()}
    ordered.sort(key=lambda n: (key(n), paths.get(n, "")))
    return ordered[:depth]


def best_first(candidates: Sequence[Candidate]) -> list[Candidate]:
    """Candidates by score, best first, then by their shown chunk's cosine (as fusion orders them),
    then by path (a note is a candidate once: a total order)."""
    return sorted(candidates, key=lambda c: (-c.score, -c.dense_score, c.path))
