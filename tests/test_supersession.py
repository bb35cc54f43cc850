"""Which notes were superseded (recall/supersession.py), found without reading every note.

The first query of every recaller asks for the successors. It used to read every note's
frontmatter and build a name resolver over the whole vault — 0.55 s and ~95 MB at 100,000
notes that say nothing about supersession. Now the store hands over only notes whose
frontmatter holds a supersession word, and their targets are resolved against the notes they
can name. The answers must be those of the whole-vault resolution, in the present and in a
past slice.
"""

from __future__ import annotations

import json
import random
import time
from pathlib import Path

import pytest
from conftest import FakeEmbedder, write

from brain import config, links
from brain.index.indexer import index_vault
from brain.index.store import IndexStore
from brain.links import Link, Resolver
from brain.recall.past import PastIndex
from brain.recall.supersession import _BACKWARD, _DEAD_STATUS, _FORWARD, _targets, successors


def _whole_vault_successors(store: IndexStore) -> dict[int, int]:
    """The rules as they were: every note read, one Resolver over every note."""
    notes = store.frontmatter_rows()
    id_by_path = {path: note_id for note_id, path, _, _ in notes}
    date_by_id = {note_id: date for note_id, _, date, _ in notes}
    resolver = Resolver(id_by_path, store.aliases_by_path())

    def resolve(target: str, source: str) -> int | None:
        path = resolver.resolve(Link(target, "wikilink", None, None, 0), source)
        return id_by_path.get(path) if path else None

    result: dict[int, int] = {}
    dead: set[int] = set()
    for note_id, path, _, frontmatter in notes:
        meta = json.loads(frontmatter)
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


NAMES = ["Plan", "plan v2", "Décision", "Roadmap", "Old", "Draft"]
FOLDERS = ["", "a/", "b/", "a/deep/"]


def _random_vault(root: Path, rng: random.Random, notes: int = 40) -> None:
    """Notes with colliding names in several folders, aliases, and every supersession form."""
    paths = sorted({f"{rng.choice(FOLDERS)}{rng.choice(NAMES)} {rng.randrange(4)}.md" for _ in range(notes)})
    stems = [p.rsplit("/", 1)[-1][:-3] for p in paths]
    for path in paths:
        front: list[str] = [f"date: 2024-{rng.randint(1, 12):02d}-{rng.randint(1, 28):02d}"]
        if rng.random() < 0.3:
            front.append(f"aliases: [{rng.choice(NAMES)} alias]")
        roll = rng.random()
        target = rng.choice(stems + [f"{n} alias" for n in NAMES] + ["Nowhere"])
        if roll < 0.15:
            front.append(f'{rng.choice(_FORWARD)}: "[[{target}]]"')
        elif roll < 0.3:
            front.append(f"{rng.choice(_BACKWARD)}: [{target}, '[[{rng.choice(stems)}|shown]]']")
        elif roll < 0.45:
            front.append(f"status: {rng.choice(sorted(_DEAD_STATUS)).upper()}")
        elif roll < 0.5:
            front.append("status: draft")  # a word near the rules that the rules ignore
        body = " ".join(f"[[{rng.choice(stems)}]]" for _ in range(rng.randint(0, 3)))
        write(root, path, "---\n" + "\n".join(front) + "\n---\n" + f"text {body}\n")


@pytest.mark.parametrize("seed", range(6))
def test_successors_are_the_whole_vault_resolutions(tmp_path, seed):
    rng = random.Random(seed)
    root = tmp_path / "vault"
    _random_vault(root, rng)
    index_vault(root, embedder=FakeEmbedder(), progress=False)
    store = IndexStore.open(config.index_dir(root), create=False)
    try:
        expected = _whole_vault_successors(store)
        assert successors(store) == expected
        assert expected  # the generator makes some (4-16 of ~33 notes)
        recorded = time.time()
    finally:
        store.close()
    # The past: change the vault, then ask the slice before the change.
    time.sleep(0.01)
    for path in sorted(root.rglob("*.md"))[::3]:
        path.unlink()
    index_vault(root, embedder=FakeEmbedder(), progress=False)
    store = IndexStore.open(config.index_dir(root), create=False)
    past = PastIndex(store, as_of=recorded)
    try:
        assert successors(past) == _whole_vault_successors(past) == expected
    finally:
        past.close()


def test_a_vault_without_supersession_reads_no_note_for_it(tmp_path, monkeypatch):
    """Nothing read, no resolver built over the vault's notes (the old code read all 30)."""
    root = tmp_path / "vault"
    for i in range(30):
        write(
            root, f"Note {i}.md", f"---\ndate: 2024-01-{i % 28 + 1:02d}\nstatus: draft\n---\nabout [[Note {i + 1}]]\n"
        )
    write(root, "Old.md", '---\nsuperseded_by: "[[Note 3]]"\n---\nold\n')
    index_vault(root, embedder=FakeEmbedder(), progress=False)
    built: list[int] = []

    class Counting(Resolver):
        def __init__(self, paths, aliases=None):  # type: ignore[no-untyped-def]
            paths = list(paths)
            built.append(len(paths))
            super().__init__(paths, aliases)

    monkeypatch.setattr(links, "Resolver", Counting)
    import brain.recall.supersession as supersession

    monkeypatch.setattr(supersession, "Resolver", Counting, raising=False)
    store = IndexStore.open(config.index_dir(root), create=False)
    try:
        names = {path: note_id for note_id, path, _, _ in store.frontmatter_rows()}
        assert successors(store) == {names["Old.md"]: names["Note 3.md"]}
        assert built and max(built) <= 2, built  # Old.md and the note it names
        assert len(store.frontmatter_rows(containing=("supersed",))) == 1
    finally:
        store.close()


def test_frontmatter_words_match_case_aside_and_literally(tmp_path):
    root = tmp_path / "vault"
    write(root, "A.md", "---\nStatus: DEPRECATED\n---\na\n")
    write(root, "B.md", "---\ntitle: 100% done_here\n---\nb\n")
    write(root, "C.md", "---\ntitle: plain\n---\nc\n")
    index_vault(root, embedder=FakeEmbedder(), progress=False)
    store = IndexStore.open(config.index_dir(root), create=False)
    try:
        assert [r[1] for r in store.frontmatter_rows(containing=("deprecated",))] == ["A.md"]
        assert [r[1] for r in store.frontmatter_rows(containing=("0% done_",))] == ["B.md"]
        assert [r[1] for r in store.frontmatter_rows(containing=("0%_done",))] == []  # % and _ are literal
        assert len(store.frontmatter_rows()) == 3
    finally:
        store.close()


def test_supersession_keys_are_read_in_any_case(tmp_path):
    # "Status: superseded" and "Superseded_By:" were read by their lower-case keys alone, where a
    # note's dates, status, aliases and tags are read from a key in any case, the usual first
    root = tmp_path / "vault"
    write(root, "Old.md", "---\ndate: 2024-01-01\nStatus: Superseded\n---\nold plan\n")
    write(root, "New.md", "---\ndate: 2024-06-01\n---\nafter [[Old]]\n")
    write(root, "Gone.md", '---\nSuperseded_By: "[[New]]"\n---\ngone\n')
    write(root, "Kept.md", '---\nsuperseded_by: "[[New]]"\nSuperseded_By: "[[Gone]]"\n---\nkept\n')
    index_vault(root, embedder=FakeEmbedder(), progress=False)
    store = IndexStore.open(config.index_dir(root), create=False)
    try:
        names = {path: note_id for note_id, path, _, _ in store.frontmatter_rows()}
        assert successors(store) == {
            names["Old.md"]: names["New.md"],
            names["Gone.md"]: names["New.md"],
            names["Kept.md"]: names["New.md"],  # the usual key first
        }
    finally:
        store.close()
