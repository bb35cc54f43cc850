"""Folders lane: a query that names a folder asks for the notes filed in it.

"chaos mage spells that give temp hp", "which conditions give you a -4 penalty", "latest
decision on temperature alert thresholds": the query names a kind of note, and a vault files
its notes by kind (Spells/, Conditions/, Decisions/, Meetings/, Projects/). Embeddings read
"spells" as one more word of the topic, so a monster whose name shares the topic's words can
outrank every spell. This lane ranks the notes filed in the folders the query names by their
best chunk for the query: a vote for the kind of note asked for. Folders of more than
``MAX_NOTES`` notes between them are not read whole: then the lane is the dense lane's notes
that lie in them, in dense's order.

A folder is named when every word of its name is in the query (case- and accent-folded,
plurals folded as the names lane folds them, Russian words by their stems; its numbers left out: "01. Personal" is
*personal*). Folders of a single note say nothing of a kind, a folder holding half the vault
or more does not narrow anything, and a hidden folder (".obsidian", ".trash") is an app's, not
a kind the person files notes by: none of them is matched.
"""

from __future__ import annotations

import bisect
import dataclasses
from collections import Counter
from collections.abc import Iterable, Sequence
from operator import itemgetter
from typing import TYPE_CHECKING

from .dense import scored_candidates
from .names import STOP, russian_stem, words
from .types import Candidate

if TYPE_CHECKING:
    import numpy as np

    from ..index.store import IndexStore

MIN_NOTES = 2  # a folder of one note is that note, not a kind of note
MAX_SHARE = 0.5  # a folder holding this share of the vault or more narrows nothing
MAX_NOTES = 1_000  # named folders holding more notes than this are read through the dense lane's hits


def _matched_words(text: str) -> list[str]:
    """``text``'s words as folders are matched: the names lane's, a Russian word by its stem
    (a folder's name is a plural, "Решения", "Встречи", and a query says "решение по…",
    "встреча с…", as English folds "decisions" to *decision*)."""
    return [russian_stem(w) or w for w in words(text)]


def folder_words(name: str) -> frozenset[str]:
    """The words a folder's name is matched by: "Racial-Feats" → {racial, feat}; "01. Personal"
    → {personal}; "Решения" → {решен}; small words and numbers are left out."""
    return frozenset(w for w in _matched_words(name) if w not in STOP and not w.isdigit())


class FolderIndex:
    """Every folder that can be named (its path, and the words of its own name), and every
    note by path, so that a folder's notes are one slice of them."""

    def __init__(
        self,
        folders: dict[str, frozenset[str]],
        notes: Iterable[tuple[int, str]] = (),
        order: Sequence[int] | None = None,
    ):
        self.folders = folders
        self._notes = list(notes)
        # Positions in ``notes`` by path (kept by recall/cache.py): the paths sorted without a sort.
        self._order = order
        self._paths: list[str] | None = None  # sorted at the first query that names a folder:
        self._ids: list[int] = []  # most name none (100,000 paths: 34 ms)
        self._by_word: dict[str, list[str]] = {}
        for path, names in folders.items():
            for word in names:
                self._by_word.setdefault(word, []).append(path)

    @classmethod
    def from_notes(cls, notes: Iterable[tuple[int, str]]) -> FolderIndex:
        """From every note's (id, vault-relative path): (7, "Compendium/Spells/Holy-Spark.md")."""
        every = list(notes)
        own: Counter[str] = Counter(path.rpartition("/")[0] for _, path in every)  # notes right in each folder
        total = len(every)
        counts: Counter[str] = Counter()
        for folder, count in own.items():  # a vault has far fewer folders than notes
            while folder:
                counts[folder] += count
                folder = folder.rpartition("/")[0]
        folders = {}
        for folder, count in counts.items():
            if count < MIN_NOTES or count >= MAX_SHARE * total or folder.startswith(".") or "/." in folder:
                continue
            names = folder_words(folder.rsplit("/", 1)[-1])
            if names:
                folders[folder] = names
        return cls(folders, every)

    @property
    def notes(self) -> list[tuple[int, str]]:
        """Every note's (id, path), as given (by id from a store)."""
        return self._notes

    @classmethod
    def from_store(cls, store: IndexStore) -> FolderIndex:
        return cls.from_notes(store.note_paths_by_id())

    def state(self) -> tuple[dict[str, frozenset[str]], list[str], list[int]]:
        """What ``from_state`` takes again with the notes' ids (``recall/cache.py`` keeps it):
        the folders, every note's path (as given) and their order by path (sorted here if not yet)."""
        self.sorted_paths()
        order = self._order
        if order is None:
            place = {note_id: i for i, (note_id, _) in enumerate(self._notes)}
            order = [place[note_id] for note_id in self._ids]
        return self.folders, [path for _, path in self._notes], list(order)

    @classmethod
    def from_state(
        cls, state: tuple[dict[str, frozenset[str]], list[str], list[int]], note_ids: Sequence[int]
    ) -> FolderIndex:
        """The index ``state`` was taken of, whose notes' ids are ``note_ids`` (in the same order)."""
        folders, paths, order = state
        if not isinstance(folders, dict) or len(paths) != len(note_ids) or len(order) != len(paths):
            raise ValueError("the folder index is not of the notes it is stamped with")
        return cls(folders, zip(note_ids, paths, strict=True), order)

    def named_by(self, query: str) -> list[str]:
        """The folders every word of whose name is in the query, by path."""
        said = set(_matched_words(query))
        seen = {path for word in said for path in self._by_word.get(word, ())}
        return sorted(path for path in seen if self.folders[path] <= said)

    def notes_in(self, folders: Sequence[str]) -> list[int]:
        """The ids of the notes anywhere under these folders (a folder inside another counted once)."""
        paths = self.sorted_paths()
        out: set[int] = set()
        for folder in folders:  # "/" sorts just before "0": the folder's notes are one slice
            low = bisect.bisect_left(paths, folder + "/")
            high = bisect.bisect_left(paths, folder + "0")
            out.update(self._ids[low:high])
        return sorted(out)

    def sorted_paths(self) -> list[str]:
        """Every note's path, sorted (once; ``brain serve`` sorts a new state's before it answers)."""
        if self._paths is None and self._order is not None:
            notes = self._notes
            self._ids = [notes[i][0] for i in self._order]
            self._paths = [notes[i][1] for i in self._order]
        if self._paths is None:
            by_path = sorted(self._notes, key=itemgetter(1))
            self._ids = [note_id for note_id, _ in by_path]  # first: a thread that sees the paths sees these
            self._paths = [path for _, path in by_path]
        return self._paths


def folders_search(
    store: IndexStore,
    index: FolderIndex,
    query: str,
    query_vector: np.ndarray,
    dense: Sequence[Candidate],
    depth: int,
) -> list[Candidate]:
    """The notes in the folders the query names, each by its best chunk for the query, best
    first; past ``MAX_NOTES`` of them, the dense lane's notes (``dense``, best first) among them,
    in its order. Nothing when the query names no folder."""
    named = index.named_by(query)
    if not named or depth <= 0:
        return []
    notes = index.notes_in(named)
    if len(notes) > MAX_NOTES:
        inside = set(notes)
        return [dataclasses.replace(c, sources=["folders"]) for c in dense if c.note_id in inside][:depth]
    found = scored_candidates(store, notes, query_vector, "folders")
    found.sort(key=lambda c: (-c.dense_score, c.path))
    return found[:depth]
