"""A new snapshot takes over from the last one only what it would build the same (recall/carry.py).

After every change of a random sequence (edits that leave names and links alone, links added
and removed, titles, aliases, renames, case-only renames, folder moves, notes added and
deleted, a touched file, the link-fence setting), the snapshot opened with the previous one
must hold exactly what a snapshot opened afresh builds: the vault's names, the name index and
the link graph's matrix. And the carrying must happen where it can (else the test would pass
on code that never carries anything).
"""

from __future__ import annotations

import logging
import os
import random
from pathlib import Path

import numpy as np
import pytest
from conftest import FakeEmbedder, write
from index_helpers import environ, index_into

from brain.recall.opening import open_snapshot
from brain.recall.pipeline import Recaller

NAMES = ["Alpha", "Beta", "Gamma", "Delta", "Ёлка", "Café", "Zeta notes", "Theta"]
FOLDERS = ["", "A/", "B/deep/"]


def _home() -> Path:
    return Path(os.environ["BRAIN_HOME"])


def _text(rng: random.Random, names: list[str], title: str | None, aliases: list[str]) -> str:
    front = []
    if title:
        front.append(f"title: {title}")
    if aliases:
        front.append("aliases: [" + ", ".join(aliases) + "]")
    head = "---\n" + "\n".join(front) + "\n---\n" if front else ""
    links = [
        rng.choice(["[[{}]]", "![[{}]]", "[[{}|shown]]"]).format(rng.choice(names)) for _ in range(rng.randint(0, 3))
    ]
    fence = f"\n```statblock\nsee [[{rng.choice(names)}]]\n```\n" if rng.random() < 0.3 else ""
    return f"{head}# Heading\n\nSome words {rng.random():.6f} about things. {' '.join(links)}\n{fence}"


def _snapshot_state(recaller: Recaller) -> dict:
    index = recaller.name_index()
    graph = recaller.link_graph()
    matrix = graph.transition_t().toarray()
    return {
        "names": recaller.names(),
        "name_index": (
            [(n.note_id, n.text, n.words) for n in index.names],
            index.by_word,
            index.idf,
            index._fuzzy,
        ),
        "graph": (graph.note_ids.tolist(), graph.dangling.tolist(), graph.edges),
        "matrix": matrix,
    }


def _assert_same(carried: Recaller, fresh: Recaller, step: str) -> None:
    a, b = _snapshot_state(carried), _snapshot_state(fresh)
    assert a["names"] == b["names"], step
    assert a["name_index"] == b["name_index"], step
    assert a["graph"] == b["graph"], step
    assert np.allclose(a["matrix"], b["matrix"], rtol=1e-12, atol=1e-15), step


def _change(rng: random.Random, vault: Path, notes: dict[str, tuple[str | None, list[str]]]) -> str:
    """One random change to the vault; ``notes``: path → (title, aliases). Returns what it did."""
    names = [Path(p).stem for p in notes] + ["Missing"]
    path = rng.choice(sorted(notes))
    title, aliases = notes[path]
    kind = rng.choice(
        ["body", "body", "body", "links", "title", "aliases", "rename", "case", "move", "add", "delete", "touch"]
    )
    if kind in ("body", "links"):
        # "body": new words, the same links (the text is regenerated from the same seed's links)
        text = (vault / path).read_text(encoding="utf-8")
        if kind == "body":
            text = text.replace("Some words", f"Some words {rng.random():.6f}", 1)
        else:
            text = _text(rng, names, title, aliases)
        write(vault, path, text)
    elif kind == "title":
        notes[path] = (rng.choice([None, "A title", rng.choice(NAMES)]), aliases)
        write(vault, path, _text(rng, names, notes[path][0], aliases))
    elif kind == "aliases":
        notes[path] = (title, rng.sample(NAMES, rng.randint(0, 2)))
        write(vault, path, _text(rng, names, title, notes[path][1]))
    elif kind in ("rename", "case", "move"):
        stem = Path(path).stem
        folder = path[: len(path) - len(Path(path).name)]
        if kind == "rename":
            new = folder + rng.choice(NAMES) + f" {rng.randint(1, 99)}.md"
        elif kind == "case":
            new = folder + (stem.swapcase() or stem) + ".md"
        else:
            new = rng.choice(FOLDERS) + Path(path).name
        if new in notes or new.lower() in {p.lower() for p in notes}:
            return "nothing"
        (vault / new).parent.mkdir(parents=True, exist_ok=True)
        (vault / path).rename(vault / new)
        notes[new] = notes.pop(path)
    elif kind == "add":
        new = rng.choice(FOLDERS) + rng.choice(NAMES) + f" {rng.randint(100, 999)}.md"
        if new in notes or new.lower() in {p.lower() for p in notes}:
            return "nothing"
        notes[new] = (None, [])
        write(vault, new, _text(rng, names, None, []))
    elif kind == "delete":
        if len(notes) <= 3:
            return "nothing"
        (vault / path).unlink()
        del notes[path]
    elif kind == "touch":
        stat = (vault / path).stat()
        os.utime(vault / path, ns=(stat.st_atime_ns, stat.st_mtime_ns + 1_000_000_000))
    return kind


@pytest.mark.parametrize("seed", range(6))
def test_a_carried_snapshot_holds_what_a_fresh_one_builds(tmp_path, seed, caplog):
    caplog.set_level(logging.INFO, logger="brain")
    rng = random.Random(seed)
    vault = tmp_path / "vault"
    notes: dict[str, tuple[str | None, list[str]]] = {}
    for i, name in enumerate(NAMES):
        path = rng.choice(FOLDERS) + name + ".md"
        notes[path] = (rng.choice([None, None, f"Title {i}"]), rng.sample(NAMES, rng.randint(0, 1)))
    names = [Path(p).stem for p in notes]
    for path, (title, aliases) in notes.items():
        write(vault, path, _text(rng, names, title, aliases))
    embedder = FakeEmbedder()
    index_into(_home(), vault, embedder)
    root = vault.resolve()
    previous = open_snapshot(root, embedder)
    taken: dict[str, int] = {"names": 0, "link graph": 0, "link graph (patched)": 0}
    try:
        for step in range(30):
            fences = "statblock" if rng.random() < 0.15 else None
            with environ(BRAIN_LINK_FENCES=fences):
                did = _change(rng, vault, notes)
                index_into(_home(), vault, embedder)
                current = open_snapshot(root, embedder, previous=previous)
                fresh = open_snapshot(root, embedder)
            try:
                _assert_same(current, fresh, f"step {step}: {did}")
            finally:
                fresh.close()
            said = [r.getMessage() for r in caplog.records if "taken over" in r.getMessage()][-1]
            taken["names"] += "names," in said
            taken["link graph"] += "link graph taken" in said
            taken["link graph (patched)"] += "link graph (patched)" in said
            previous.close()
            previous = current
    finally:
        previous.close()
    assert all(taken.values()), taken  # it does carry, and patch, where it can


def test_an_edit_that_leaves_names_and_links_alone_rebuilds_neither(toy_vault):
    embedder = FakeEmbedder()
    index_into(_home(), toy_vault, embedder)
    root = toy_vault.resolve()
    old = open_snapshot(root, embedder)
    try:
        note = next(p for p in sorted(toy_vault.rglob("*.md")) if "[[" in p.read_text(encoding="utf-8"))
        note.write_text(note.read_text(encoding="utf-8") + "\nA new line of plain words.\n", encoding="utf-8")
        index_into(_home(), toy_vault, embedder)
        new = open_snapshot(root, embedder, previous=old)
        fresh = open_snapshot(root, embedder)
        try:
            assert new.carry_over(old) == ["names", "name index", "link graph"]
            assert new._link_graph is old._link_graph and new._name_index is old._name_index
            for query in ("plain words", "memory graph", "Home"):
                assert [(c.path, round(c.score, 9)) for c in new.ask(query, "hybrid+ppr").results] == [
                    (c.path, round(c.score, 9)) for c in fresh.ask(query, "hybrid+ppr").results
                ]
        finally:
            new.close()
            fresh.close()
    finally:
        old.close()


def test_a_snapshot_of_another_index_takes_nothing(toy_vault, tmp_path):
    embedder = FakeEmbedder()
    other = tmp_path / "other"
    write(other, "Home.md", "# Home\n\nSee [[Other]].\n")
    write(other, "Other.md", "# Other\n")
    index_into(_home(), toy_vault, embedder)
    index_into(_home(), other, embedder)
    a = open_snapshot(toy_vault.resolve(), embedder)
    b = open_snapshot(other.resolve(), embedder, previous=a)
    try:
        assert b.carry_over(a) == []
        assert b._link_graph is not a._link_graph and b._names is not a._names
    finally:
        a.close()
        b.close()
