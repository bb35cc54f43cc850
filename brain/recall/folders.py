"""Folders lane: a query that names a folder asks for the notes filed in it.

"chaos mage spells that give temp hp", "which conditions give you a -4 penalty", "latest
decision on temperature alert thresholds": the query names a kind of note, and a vault files
its notes by kind (Spells/, Conditions/, Decisions/, Meetings/, Projects/). Embeddings read
"spells" as one more word of the topic, so a monster whose name shares the topic's words can
outrank every spell. This lane gives the dense lane's notes that sit in a folder the query
names a vote of their own, in the dense lane's order: it adds no note, it only says which of
dense's notes are of the kind asked for.

A folder is named when every word of its name is in the query (case- and accent-folded,
plurals folded as the names lane folds them; its numbers left out: "01. Personal" is
*personal*). Folders of a single note say nothing of a kind, a folder holding half the vault
or more does not narrow anything, and a hidden folder (".obsidian", ".trash") is an app's, not
a kind the person files notes by: none of them is matched.
"""

from __future__ import annotations

import dataclasses
from collections import Counter
from collections.abc import Iterable, Sequence
from typing import TYPE_CHECKING

from .names import STOP, words
from .types import Candidate

if TYPE_CHECKING:
    from ..index.store import IndexStore

MIN_NOTES = 2  # a folder of one note is that note, not a kind of note
MAX_SHARE = 0.5  # a folder holding this share of the vault or more narrows nothing


def folder_words(name: str) -> frozenset[str]:
    """The words a folder's name is matched by: "Racial-Feats" → {racial, feat}; "01. Personal"
    → {personal}; small words and numbers are left out."""
    return frozenset(w for w in words(name) if w not in STOP and not w.isdigit())


class FolderIndex:
    """Every folder that can be named: its path, and the words of its own name."""

    def __init__(self, folders: dict[str, frozenset[str]]):
        self.folders = folders
        self._by_word: dict[str, list[str]] = {}
        for path, names in folders.items():
            for word in names:
                self._by_word.setdefault(word, []).append(path)

    def __len__(self) -> int:
        return len(self.folders)

    @classmethod
    def from_paths(cls, paths: Iterable[str]) -> FolderIndex:
        """From the vault-relative paths of every note ("Compendium/Spells/Holy-Spark.md")."""
        own: Counter[str] = Counter(path.rpartition("/")[0] for path in paths)  # notes right in each folder
        notes = sum(own.values())
        counts: Counter[str] = Counter()
        for folder, count in own.items():  # a vault has far fewer folders than notes
            while folder:
                counts[folder] += count
                folder = folder.rpartition("/")[0]
        folders = {}
        for folder, count in counts.items():
            if count < MIN_NOTES or count >= MAX_SHARE * notes or folder.startswith(".") or "/." in folder:
                continue
            names = folder_words(folder.rsplit("/", 1)[-1])
            if names:
                folders[folder] = names
        return cls(folders)

    @classmethod
    def from_store(cls, store: IndexStore) -> FolderIndex:
        return cls.from_paths(path for _, path, _ in store.note_names())

    def named_by(self, query: str) -> list[str]:
        """The folders every word of whose name is in the query, by path."""
        said = set(words(query))
        seen = {path for word in said for path in self._by_word.get(word, ())}
        return sorted(path for path in seen if self.folders[path] <= said)


def folders_search(index: FolderIndex, query: str, dense: Sequence[Candidate]) -> list[Candidate]:
    """The dense lane's notes (``dense``, best first) that lie in a folder the query names, in
    the same order; nothing when it names none."""
    named = index.named_by(query)
    if not named:
        return []
    prefixes = tuple(folder + "/" for folder in named)
    return [dataclasses.replace(c, sources=["folders"]) for c in dense if c.path.startswith(prefixes)]
