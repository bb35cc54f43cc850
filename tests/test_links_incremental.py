"""Link resolution touches only what changed (linking.resolve_links, schema.py m010_name_keys)
and still answers exactly as a full resolution over every note does.

Two claims are tried here. ``links.lookup_keys``: a Resolver over the notes filed under a
link's keys (and its source) resolves the link as one over the whole vault does; tried on
random vaults built to collide (case, Unicode forms, folders, aliases, partial paths). And
the index: after random edits, adds, renames, deletes and alias changes, the links table
and the open link history are what ``resolve_links(full=True)`` makes of them.
"""

from __future__ import annotations

import random
import sqlite3
import unicodedata
from pathlib import Path

import pytest
from conftest import write
from index_helpers import index_db_before, open_store

from brain import config
from brain import links as links_module
from brain.index import linking
from brain.index.indexer import index_vault
from brain.index.linking import resolve_links
from brain.index.store import IndexStore
from brain.links import Link, Resolver, alias_key, lookup_keys, note_keys

FOLDERS = ["", "A/", "a/", "B/", "A/deep/", "Ёлки/", "ёлки/", "Ёлки/Палки/"]
STEMS = ["note", "Note", "NOTE", "café", unicodedata.normalize("NFD", "café"), "x y", "index", "ёлка", "Ёлка", "b.c"]


def _random_vault(rng: random.Random) -> tuple[list[str], dict[str, list[str]]]:
    paths = sorted({rng.choice(FOLDERS) + rng.choice(STEMS) + rng.choice([".md", ".md", ".MD"]) for _ in range(14)})
    aliases: dict[str, list[str]] = {}
    for path in paths:
        if rng.random() < 0.4:
            aliases[path] = [
                rng.choice(STEMS + [" Note ", "A/note", "Другое", "x Y"]) for _ in range(rng.randint(1, 2))
            ]
    return paths, aliases


def _random_link(rng: random.Random, paths: list[str]) -> Link:
    kind = rng.choice(["wikilink", "wikilink", "embed", "markdown"])
    stem = rng.choice(STEMS + ["Другое", "x Y", "missing"])
    shape = rng.randrange(9)
    if shape == 0:
        target = rng.choice(paths)  # a path as it is
    elif shape == 1:
        target = rng.choice(paths)[:-3]  # without .md
    elif shape == 2:
        target = rng.choice(FOLDERS).upper() + stem  # folder in another case
    elif shape == 3:
        target = rng.choice(["deep/", "Палки/", "../A/", "./", "/A/", "\\A\\"]) + stem
    elif shape == 4:
        target = rng.choice(["", " ", "img.png"])
    else:
        target = rng.choice(["", " ", "/"]) + stem + rng.choice(["", ".md", ".MD", " "])
    if kind == "markdown" and not target.lower().endswith(".md"):
        target += ".md"
    return Link(target=target, kind=kind, anchor=None, display=None, line=1)


def _candidates(paths: list[str], aliases: dict[str, list[str]], link: Link, source: str) -> list[str]:
    keys = lookup_keys(link, source)
    return [
        p
        for p in paths
        if p == source
        or note_keys(p)[0] in keys.paths
        or note_keys(p)[1] in keys.names
        or any(alias_key(a) in keys.aliases for a in aliases.get(p, []))
    ]


@pytest.mark.parametrize("seed", range(40))
def test_a_resolver_over_a_links_candidates_answers_as_one_over_every_note(seed):
    rng = random.Random(seed)
    paths, aliases = _random_vault(rng)
    everything = Resolver(paths, aliases)
    answered = 0
    for _ in range(150):
        link = _random_link(rng, paths)
        source = rng.choice(paths)
        few = _candidates(paths, aliases, link, source)
        expected = everything.resolve(link, source)
        assert Resolver(few, {p: a for p, a in aliases.items() if p in few}).resolve(link, source) == expected, (
            link,
            source,
        )
        answered += expected is not None and expected != source
    assert answered  # the links do find notes: the test is not comparing None with None


# ----- the index ------------------------------------------------------------------------------


def _state(conn: sqlite3.Connection) -> tuple[list[tuple], list[tuple]]:
    links = [
        tuple(r) for r in conn.execute("SELECT id, source_id, target, kind, target_id, status FROM links ORDER BY id")
    ]
    edges = [
        tuple(r)
        for r in conn.execute(
            "SELECT source_id, target, kind, target_id, status FROM link_history WHERE recorded_to IS NULL"
            " ORDER BY source_id, target, kind, id"
        )
    ]
    return links, edges


def _full_resolution_of_a_copy(directory: Path, scratch: Path) -> tuple[list[tuple], list[tuple]]:
    scratch.mkdir(parents=True, exist_ok=True)
    source, copy = sqlite3.connect(directory / "index.db"), sqlite3.connect(scratch / "index.db")
    source.backup(copy)
    source.close()
    copy.close()
    store = IndexStore.open(scratch)
    try:
        resolve_links(store, full=True)
        return _state(store.conn)
    finally:
        store.close()


def _body(rng: random.Random, names: list[str]) -> str:
    picks = []
    for _ in range(rng.randint(0, 5)):
        name = rng.choice(names + ["Nowhere", "pic.png"])
        form = rng.randrange(5)
        if form == 0:
            picks.append(f"[[{name}]]")
        elif form == 1:
            picks.append(f"[[{name.upper()}|shown]]")
        elif form == 2:
            picks.append(f"![[{name}#part]]")
        elif form == 3:
            picks.append(f"[text]({name.replace(' ', '%20')}.md)")
        else:
            picks.append(f"[[{rng.choice(['A/', 'B/', 'a/deep/'])}{name.split('/')[-1]}]]")
    return f"body {rng.random()}\n" + " ".join(picks) + "\n"


def _note(rng: random.Random, names: list[str], aliases: list[str]) -> str:
    front = f"---\naliases: [{', '.join(aliases)}]\n---\n" if aliases else ""
    return front + _body(rng, names)


@pytest.mark.parametrize(("seed", "limit"), [(0, linking.CANDIDATE_LIMIT), (1, linking.CANDIDATE_LIMIT), (2, 0)])
def test_after_random_edits_the_links_are_what_a_full_resolution_makes(tmp_path, monkeypatch, seed, limit):
    """limit 0: pending links resolved against every note (what a run with many changes does)."""
    monkeypatch.setattr(linking, "CANDIDATE_LIMIT", limit)
    rng = random.Random(seed)
    root = tmp_path / "v"
    names = ["Alpha", "beta", "Gamma ray", "A/Alpha", "B/alpha", "A/deep/Beta", "Ёж", "B/ЁЖ", "Delta"]
    alias_pool = ["Sea", "Alpha", "Nowhere", "ray", "ёж"]
    present: set[str] = set()
    for name in rng.sample(names, 6):
        write(root, name + ".md", _note(rng, names, rng.sample(alias_pool, rng.randint(0, 1))))
        present.add(name)
    index_vault(root, progress=False)

    candidate_runs = []
    original = linking._candidates_resolver
    monkeypatch.setattr(
        linking, "_candidates_resolver", lambda store, todo: candidate_runs.append(len(todo)) or original(store, todo)
    )
    applied = set()
    resolved = edges = 0
    kinds = ["edit", "add", "delete", "rename", "aliases"]
    for step, op in enumerate(rng.sample(kinds, len(kinds)) + rng.choices(kinds, k=15)):
        absent = sorted(set(names) - present)
        if op == "add" and absent:
            name = rng.choice(absent)
            write(root, name + ".md", _note(rng, names, []))
            present.add(name)
            applied.add(op)
        elif op == "delete" and len(present) > 2:
            name = rng.choice(sorted(present))
            (root / (name + ".md")).unlink()
            present.discard(name)
            applied.add(op)
        elif op == "rename" and absent:
            old, new = rng.choice(sorted(present)), rng.choice(absent)
            (root / (new + ".md")).parent.mkdir(parents=True, exist_ok=True)
            (root / (old + ".md")).rename(root / (new + ".md"))
            present.discard(old)
            present.add(new)
            applied.add(op)
        elif op == "aliases":
            name = rng.choice(sorted(present))
            write(root, name + ".md", _note(rng, names, rng.sample(alias_pool, rng.randint(0, 2))))
            applied.add(op)
        else:
            for name in rng.sample(sorted(present), rng.randint(1, 2)):
                text = (root / (name + ".md")).read_text(encoding="utf-8")
                front = text[: text.index("---\n", 4) + 4] if text.startswith("---\n") else ""
                write(root, name + ".md", front + _body(rng, names))
            applied.add("edit")
        index_vault(root, progress=False)
        directory = config.index_dir(root)
        store = open_store(root)
        try:
            got = _state(store.conn)
        finally:
            store.close()
        assert got == _full_resolution_of_a_copy(directory, tmp_path / f"copy-{step}"), (step, op)
        assert all(status != "pending" for *_, status in got[0])
        resolved += sum(status == "resolved" for *_, status in got[0])
        edges += len(got[1])
    assert bool(candidate_runs) == (limit > 0)  # content edits took the few-candidates path
    assert applied == {"edit", "add", "delete", "rename", "aliases"} and resolved and edges, (applied, resolved, edges)


def test_a_content_edit_resolves_against_the_few_notes_its_links_can_match(tmp_path, monkeypatch):
    """On the old code every content edit built a Resolver over every note in the vault."""
    root = tmp_path / "v"
    for i in range(40):
        write(root, f"Folder {i % 4}/Note {i}.md", f"[[Note {(i + 1) % 40}]]")
    write(root, "A/Target.md", "---\naliases: [The target]\n---\nhere")
    write(root, "B/target.md", "a second note of that name")
    write(root, "Linker.md", "[[Note 3]]")
    index_vault(root, progress=False)

    built: list[set[str]] = []
    original = links_module.Resolver.__init__

    def spy(self, paths, aliases=None):
        paths = list(paths)
        built.append(set(paths))
        original(self, paths, aliases)

    monkeypatch.setattr(links_module.Resolver, "__init__", spy)
    write(root, "Linker.md", "[[target]] [[The Target]] [[Nowhere]] [[A/Target]] [x](Folder%201/Note%201.md)")
    index_vault(root, progress=False)
    assert built == [{"Linker.md", "A/Target.md", "B/target.md", "Folder 1/Note 1.md"}]
    store = open_store(root)
    try:
        rows = store.conn.execute(
            "SELECT l.target, n.path, l.status FROM links l LEFT JOIN notes n ON n.id = l.target_id"
            " WHERE l.source_id = (SELECT id FROM notes WHERE path = 'Linker.md') ORDER BY l.id"
        )
        rows = [tuple(r) for r in rows]
    finally:
        store.close()
    assert rows == [
        ("target", "A/Target.md", "resolved"),  # nearest: both are one folder away, A/ sorts first
        ("The Target", "A/Target.md", "resolved"),
        ("Nowhere", None, "dangling"),
        ("A/Target", "A/Target.md", "resolved"),
        ("Folder 1/Note 1.md", "Folder 1/Note 1.md", "resolved"),
    ]

    built.clear()
    write(root, "Linker.md", "[[ the TARGET ]]")  # found by its alias alone
    index_vault(root, progress=False)
    assert built == [{"Linker.md", "A/Target.md"}]
    store = open_store(root)
    try:
        row = store.conn.execute(
            "SELECT n.path FROM links l JOIN notes n ON n.id = l.target_id"
            " WHERE l.source_id = (SELECT id FROM notes WHERE path = 'Linker.md')"
        ).fetchall()
    finally:
        store.close()
    assert [r[0] for r in row] == ["A/Target.md"]


def test_names_version_moves_with_names_and_only_with_names(tmp_path):
    root = tmp_path / "v"
    write(root, "a.md", "---\naliases: [Ay]\n---\n[[b]]")
    write(root, "b.md", "plain")
    index_vault(root, progress=False)

    def version() -> str:
        store = open_store(root)
        try:
            assert store.get_meta("resolver_key") == store.names_version()  # links resolved against it
            return store.names_version()
        finally:
            store.close()

    steps = [
        ("content", lambda: write(root, "a.md", "---\naliases: [Ay]\n---\n[[b]] more"), False),
        ("touch", lambda: (root / "b.md").touch(), False),
        ("alias", lambda: write(root, "a.md", "---\naliases: [Ay, Bee]\n---\n[[b]] more"), True),
        ("add", lambda: write(root, "c.md", "new"), True),
        ("rename", lambda: (root / "c.md").rename(root / "d.md"), True),
        ("delete", lambda: (root / "d.md").unlink(), True),
        ("content again", lambda: write(root, "b.md", "[[a]]"), False),
    ]
    before = version()
    for what, change, moves in steps:
        change()
        index_vault(root, progress=False)
        after = version()
        assert (after != before) == moves, what
        before = after


def test_m010_files_an_older_index_notes_and_aliases_under_their_keys(tmp_path):
    directory = tmp_path / "old-index"
    conn = index_db_before(directory, "m010_name_keys")
    path = unicodedata.normalize("NFD", "Ёлки/Café.MD")
    conn.execute(
        "INSERT INTO notes (id, path, title, size, mtime_ns, hash, indexed_at) VALUES (1, ?, 't', 1, 1, 'h', 0)",
        (path,),
    )
    conn.execute("INSERT INTO aliases (note_id, alias) VALUES (1, ' Straße ')")
    conn.execute("INSERT INTO meta (key, value) VALUES ('resolver_key', 'a0b1c2')")  # the old SHA-1
    conn.close()
    store = IndexStore.open(directory)
    try:
        assert store.conn.execute("SELECT path_key, name_key FROM notes").fetchone()[:] == ("ёлки/café", "café")
        assert store.conn.execute("SELECT key FROM aliases").fetchone()[:] == ("strasse",)
        assert store.notes_named({"ёлки/café"}, set(), set()) == {path: 1}
        assert store.notes_named(set(), {"café"}, set()) == {path: 1}
        assert store.notes_named(set(), set(), {"strasse"}) == {path: 1}
        assert store.names_version() != store.get_meta("resolver_key")  # the next run resolves every link
    finally:
        store.close()


def test_notes_written_without_keys_get_them_at_the_next_full_resolution(tmp_path):
    """A brain from before m010 writing into a migrated index leaves the keys empty; the
    names_version triggers still fire, so the next resolution is full, and fills them."""
    root = tmp_path / "v"
    write(root, "a.md", "[[b]]")
    write(root, "b.md", "plain")
    index_vault(root, progress=False)
    store = open_store(root)
    try:
        with store.transaction():
            store.conn.execute(
                "INSERT INTO notes (path, title, aliases, size, mtime_ns, hash, indexed_at)"
                " VALUES ('Old.md', 'Old', '[\"Ancient\"]', 1, 1, 'h', 0)"
            )
            store.conn.execute(
                "INSERT INTO aliases (note_id, alias) SELECT id, 'Ancient' FROM notes WHERE path = 'Old.md'"
            )
            store.set_meta("links_dirty", 1)
        assert store.names_version() != store.get_meta("resolver_key")
        resolve_links(store)
        assert store.conn.execute("SELECT path_key, name_key FROM notes WHERE path = 'Old.md'").fetchone()[:] == (
            "old",
            "old",
        )
        assert store.conn.execute("SELECT count(*) FROM aliases WHERE key IS NULL").fetchone()[:] == (0,)
        assert store.notes_named(set(), set(), {"ancient"}) == {"Old.md": store.note_id("Old.md")}
    finally:
        store.close()
