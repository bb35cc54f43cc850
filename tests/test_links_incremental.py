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
from index_helpers import IndexView, environ, index_db_before, index_into, open_store

from brain import config
from brain import links as links_module
from brain.index import indexer, linking
from brain.index import store as store_module
from brain.index.indexer import index_vault
from brain.index.linking import resolve_links
from brain.index.schema import INDEX_MIGRATIONS, stem_hash
from brain.index.store import IndexStore
from brain.links import Link, Resolver, alias_key, key_stem, link_stem, lookup_keys, note_keys

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


VAULT_FOLDERS = ["", "A/", "a/", "B/", "A/deep/", "Ёлки/"]
VAULT_STEMS = ["Alpha", "alpha", "beta", "Gamma ray", "Ёж", "ЁЖ", "Delta", unicodedata.normalize("NFD", "café")]
ALIAS_POOL = ["Sea", "Alpha", "Nowhere", "ray", "ёж", "Delta", "B/Sea"]
LINK_NAMES = [
    "Alpha",
    "beta",
    "Gamma ray",
    "A/Alpha",
    "B/alpha",
    "A/deep/Beta",
    "Ёж",
    "B/ЁЖ",
    "Delta",
    "café",
] + ALIAS_POOL


def _notes_on_disk(root: Path) -> list[str]:
    return sorted(p.relative_to(root).as_posix() for p in root.rglob("*.md"))


def _move(root: Path, old: str, new: str) -> None:
    (root / new).parent.mkdir(parents=True, exist_ok=True)
    (root / old).rename(root / new)


def _random_step(rng: random.Random, root: Path, op: str) -> bool:
    """Apply one random change of kind ``op`` to the vault; False when it cannot apply now."""
    notes = _notes_on_disk(root)
    taken = set(notes)
    fresh = [f + s + ".md" for f in VAULT_FOLDERS for s in VAULT_STEMS if f + s + ".md" not in taken]
    if op == "add" and fresh:
        write(root, rng.choice(fresh), _note(rng, LINK_NAMES, rng.sample(ALIAS_POOL, rng.randint(0, 1))))
    elif op == "delete" and len(notes) > 2:
        (root / rng.choice(notes)).unlink()
    elif op == "rename" and fresh:  # another name, maybe another folder
        _move(root, rng.choice(notes), rng.choice(fresh))
    elif op == "move":  # the same file name into another folder
        note = rng.choice(notes)
        name = note.rpartition("/")[2]
        places = [f + name for f in VAULT_FOLDERS if f + name not in taken]
        if not places:
            return False
        _move(root, note, rng.choice(places))
    elif op == "folder":  # a whole folder moves, or changes only its case
        folders = sorted({n.rpartition("/")[0] for n in notes if "/" in n})
        if not folders:
            return False
        folder = rng.choice(folders)
        leaf = folder.rpartition("/")[2]
        new = folder.rpartition("/")[0] + ("/" if "/" in folder else "") + rng.choice([leaf.swapcase(), "C", "Moved"])
        if (root / new).exists():
            return False
        _move(root, folder, new)
    elif op == "case":  # the same path in another case: a case-sensitive file system keeps both apart
        note = rng.choice(notes)
        folder, _, name = note.rpartition("/")
        stem = name[:-3]
        other = (folder + "/" if folder else "") + rng.choice([stem.swapcase(), stem.upper(), stem.lower()]) + ".md"
        if other in taken:
            return False
        _move(root, note, other)
    elif op == "aliases":
        note = rng.choice(notes)
        write(root, note, _note(rng, LINK_NAMES, rng.sample(ALIAS_POOL, rng.randint(0, 2))))
    elif op == "edit":
        for note in rng.sample(notes, min(len(notes), rng.randint(1, 2))):
            text = (root / note).read_text(encoding="utf-8")
            front = text[: text.index("---\n", 4) + 4] if text.startswith("---\n") else ""
            write(root, note, front + _body(rng, LINK_NAMES))
    else:
        return False
    return True


def _history(conn: sqlite3.Connection) -> list[tuple]:
    """Every edge of the link history, open and closed, without its times and ids."""
    rows = conn.execute(
        "SELECT source_id, target, kind, count, target_id, status, recorded_to IS NULL AS open FROM link_history"
        " ORDER BY source_id, target, kind, count, target_id, status, open"
    )
    return [tuple(r) for r in rows]


@pytest.mark.parametrize(
    ("seed", "limit"),
    [(0, linking.CANDIDATE_LIMIT), (1, linking.CANDIDATE_LIMIT), (2, linking.CANDIDATE_LIMIT), (3, 0)],
)
def test_after_random_changes_the_links_and_their_history_are_what_full_resolutions_make(
    tmp_path, monkeypatch, seed, limit
):
    """Random edits, adds, deletes, renames, moves (a note's, a folder's), case-only renames and
    alias changes, each indexed by itself: after every step the links and the link history are
    what resolving every link against every note makes of them, both now (on a copy) and at every
    step (a twin index of the same vault that resolved in full each time), though no step but
    the first did a full pass. limit 0: the links to resolve go against every note (what a run
    with many of them does), still not every link."""
    monkeypatch.setattr(linking, "CANDIDATE_LIMIT", limit)
    rng = random.Random(seed)
    root = tmp_path / "v"
    for path in rng.sample([f + s + ".md" for f in VAULT_FOLDERS for s in VAULT_STEMS], 8):
        write(root, path, _note(rng, LINK_NAMES, rng.sample(ALIAS_POOL, rng.randint(0, 1))))
    twin_home = tmp_path / "twin"

    def index_both() -> None:
        index_vault(root, progress=False)
        monkeypatch.setattr(indexer, "resolve_links", lambda store, **kw: resolve_links(store, full=True, **kw))
        index_into(twin_home, root)
        monkeypatch.setattr(indexer, "resolve_links", resolve_links)

    index_both()
    full_passes = []
    original = IndexStore.links_to_resolve
    monkeypatch.setattr(
        IndexStore,
        "links_to_resolve",
        lambda store, *, every, **kw: full_passes.append(every) or original(store, every=every, **kw),
    )
    kinds = ["edit", "add", "delete", "rename", "move", "folder", "case", "aliases"]
    applied = []
    resolved = closed = 0
    for step, op in enumerate(rng.sample(kinds, len(kinds)) + rng.choices(kinds, k=16)):
        if not _random_step(rng, root, op):
            continue
        applied.append(op)
        full_passes.clear()
        index_both()
        assert full_passes and not any(full_passes[:1]), (step, op)  # the indexed run: no full pass
        store = open_store(root)
        try:
            got, history = _state(store.conn), _history(store.conn)
        finally:
            store.close()
        with environ(BRAIN_HOME=str(twin_home)), IndexView(config.index_dir(root)) as twin:
            assert (got, history) == (_state(twin.conn), _history(twin.conn)), (step, op)
        assert got == _full_resolution_of_a_copy(config.index_dir(root), tmp_path / f"copy-{step}"), (step, op)
        assert all(status != "pending" for *_, status in got[0])
        resolved += sum(status == "resolved" for *_, status in got[0])
        closed += sum(not is_open for *_, is_open in history)
    assert set(applied) == set(kinds) and resolved and closed, (applied, resolved, closed)


def test_a_full_pass_hands_its_resolution_to_the_link_history_rather_than_reading_it_back(tmp_path, monkeypatch):
    """A first build resolves every link, then every open edge takes its link's target: from
    the resolution just made, not from every link read again (100,000 notes: ~500,000 rows).
    The edges are the links' all the same."""
    read_back: list[object] = []
    original = IndexStore._link_resolution
    monkeypatch.setattr(
        IndexStore, "_link_resolution", lambda store, sources: read_back.append(sources) or original(store, sources)
    )
    root = tmp_path / "v"
    for i in range(6):
        write(root, f"n{i}.md", f"# {i}\n\n[[n{(i + 1) % 6}]] [[n{(i + 2) % 6}|two]] [[gone]] ![[pic.png]]\n")
    _, directory = index_into(tmp_path / "home", root)
    assert None not in read_back
    with IndexView(directory) as view:
        links, edges = _state(view.conn)
    assert sorted((r[1], r[2], r[3], r[4], r[5]) for r in links) == edges and len(edges) == 24
    assert {r[5] for r in links} == {"resolved", "dangling", "attachment"}


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


def _resolved_links(root: Path) -> dict[tuple[str, str], str | None]:
    """(source path, target as written) → the path it resolves to (None: not a note)."""
    store = open_store(root)
    try:
        rows = store.conn.execute(
            "SELECT s.path, l.target, t.path FROM links l JOIN notes s ON s.id = l.source_id"
            " LEFT JOIN notes t ON t.id = l.target_id"
        )
        return {(r[0], r[1]): r[2] for r in rows}
    finally:
        store.close()


def test_each_change_of_names_resolves_only_the_links_it_can_move(tmp_path, monkeypatch):
    """On the old code every one of these runs resolved every link (85 to 87) against every note: a note
    added, renamed or deleted, or an alias changed, made the whole vault's links pending."""
    root = tmp_path / "v"
    for i in range(40):
        write(root, f"Folder {i % 4}/Note {i}.md", f"[[Note {(i + 1) % 40}]] [[Note {(i + 7) % 40}]]")
    write(root, "Hub.md", "[[Target]] [[The alias]] [[Another]] [[Note 1]] [[Folder 3/Note 3]] [x](Elsewhere.md)")
    index_vault(root, progress=False)
    visited: list[str] = []
    original = links_module.Resolver.resolve
    monkeypatch.setattr(
        links_module.Resolver,
        "resolve",
        lambda self, link, source: visited.append(link.target) or original(self, link, source),
    )

    def step(change, expected_visits: list[str]) -> dict[tuple[str, str], str | None]:
        change()
        visited.clear()
        index_vault(root, progress=False)
        assert sorted(visited) == sorted(expected_visits)
        got = _resolved_links(root)
        store = open_store(root)
        try:
            state = _state(store.conn)
        finally:
            store.close()
        assert state == _full_resolution_of_a_copy(config.index_dir(root), tmp_path / f"copy-{len(steps)}")
        steps.append(got)
        return got

    steps: list[dict] = []
    # A note added: its own link, and the one link that named it before it was there.
    got = step(lambda: write(root, "Target.md", "[[Note 2]]"), ["Note 2", "Target"])
    assert got[("Hub.md", "Target")] == "Target.md"
    # A note added with an alias: the links to its name (none) and to its alias.
    got = step(lambda: write(root, "Other/Aliased.md", "---\naliases: [The alias]\n---\nno links"), ["The alias"])
    assert got[("Hub.md", "The alias")] == "Other/Aliased.md"
    # Renamed: its own link (its note moved) and the links to its old and new names.
    got = step(lambda: _move(root, "Target.md", "Sub/Renamed.md"), ["Note 2", "Target"])
    assert got[("Hub.md", "Target")] is None
    # An alias changed: the links to the old alias and to the new one.
    got = step(
        lambda: write(root, "Other/Aliased.md", "---\naliases: [Another]\n---\nno links"), ["The alias", "Another"]
    )
    assert (got[("Hub.md", "The alias")], got[("Hub.md", "Another")]) == (None, "Other/Aliased.md")
    # Deleted: the links to its name and to its alias.
    got = step(lambda: (root / "Other/Aliased.md").unlink(), ["Another"])
    assert got[("Hub.md", "Another")] is None
    # A note deleted that others link to by name and by path.
    got = step(lambda: (root / "Folder 3/Note 3.md").unlink(), ["Note 3", "Note 3", "Folder 3/Note 3"])
    assert got[("Folder 2/Note 2.md", "Note 3")] is None and got[("Hub.md", "Folder 3/Note 3")] is None
    # Only the case of its name: its own links and the links to it.
    got = step(
        lambda: _move(root, "Folder 1/Note 9.md", "Folder 1/note 9.md"), ["Note 10", "Note 16", "Note 9", "Note 9"]
    )
    assert got[("Folder 0/Note 8.md", "Note 9")] == "Folder 1/note 9.md"
    # A folder moved: its notes' own links, and the links to them (by name, as here, they still find them).
    before = steps[-1]
    expected = [
        target
        for (source, target), path in before.items()
        if source.startswith("Folder 0/") or (path or "").startswith("Folder 0/")
    ]
    got = step(lambda: _move(root, "Folder 0", "Archive/Folder 0"), expected)
    assert got[("Folder 3/Note 39.md", "Note 0")] == "Archive/Folder 0/Note 0.md"
    assert len(expected) == 39 and len(before) == 85


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


# ----- m012: the links a change of names can move ----------------------------------------------


@pytest.mark.parametrize("seed", range(20))
def test_every_key_a_link_is_looked_up_by_has_the_links_stem(seed):
    """links.link_stem is read off the target without building the keys; the links a change of
    names re-resolves are found by it, so it must be the stem of each key (even for odd
    Unicode: NFD, ß and ſ that casefold to ASCII, a Kelvin sign; backslashes, ../, .md twice)."""
    rng = random.Random(seed)
    parts = [*STEMS, "ß", "ſ", "\u212a", "İ", ".md", ".MD", "..", ".", "", "a\\b", "x.md", "x.MD.md", " ", "Ёлки"]
    for _ in range(2000):
        target = "".join(rng.choice(parts) + rng.choice(["", "/", "\\", "../", "./"]) for _ in range(rng.randint(0, 4)))
        kind = rng.choice(["wikilink", "embed", "markdown"])
        if kind == "markdown" and not target.lower().endswith(".md"):
            target += rng.choice([".md", ".MD", ".Md"])
        source = rng.choice(["", "a/b.md", "A/deep/x.md", "Ёлки/Палки/y.md"])
        keys = lookup_keys(Link(target=target, kind=kind, anchor=None, display=None, line=1), source)
        stems = {key_stem(key) for key in keys.paths | keys.names | keys.aliases}
        assert stems == ({link_stem(target, kind)} if stems else set()), (target, kind, source)
        assert (link_stem(target, kind) is None) == (not stems)
        path = target.replace("\\", "/").strip("/ ") + ".md"
        assert len({key_stem(key) for key in note_keys(path)}) == 1  # a note's two keys too


def _full_passes(monkeypatch) -> list[bool]:
    """Records, for each resolution, whether it resolved every link."""
    passes: list[bool] = []
    original = IndexStore.links_to_resolve
    monkeypatch.setattr(
        IndexStore,
        "links_to_resolve",
        lambda store, *, every, **kw: passes.append(every) or original(store, every=every, **kw),
    )
    return passes


def _assert_as_full(root: Path, scratch: Path) -> None:
    store = open_store(root)
    try:
        state = _state(store.conn)
        assert store.conn.execute("SELECT count(*) FROM links WHERE stem_hash IS NULL").fetchone()[0] == 0
    finally:
        store.close()
    assert state == _full_resolution_of_a_copy(config.index_dir(root), scratch)


def test_more_changed_names_than_the_log_keeps_fall_back_to_a_full_resolution(tmp_path, monkeypatch):
    root = tmp_path / "v"
    write(root, "a.md", "[[b]] [[c]] [[Cee]]")
    write(root, "b.md", "---\naliases: [Cee]\n---\n[[a]]")
    index_vault(root, progress=False)
    store = open_store(root)
    try:
        assert store.get_meta("name_changes_from") == store.get_meta("resolver_key") == store.names_version()
        with store.transaction():  # as if 700 notes had been renamed since
            store.conn.executemany(
                "INSERT INTO name_changes (note_id, key) VALUES (?, ?)", [(i, f"k{i}") for i in range(2000)]
            )
            assert store.get_meta("name_changes_from") is not None
            store.conn.execute("INSERT INTO name_changes (note_id, key) VALUES (1, 'one too many')")
            assert store.conn.execute("SELECT count(*) FROM name_changes").fetchone()[0] == 0
            assert store.get_meta("name_changes_from") is None  # the log no longer says what changed
            assert store.changed_stems(store.get_meta("resolver_key")) is None
    finally:
        store.close()
    passes = _full_passes(monkeypatch)
    _move(root, "b.md", "c.md")
    index_vault(root, progress=False)
    assert passes == [True]
    _assert_as_full(root, tmp_path / "copy-1")
    assert _resolved_links(root)[("a.md", "c")] == "c.md"
    passes.clear()
    _move(root, "c.md", "b.md")  # the log runs again: the next change of names is resolved in part
    index_vault(root, progress=False)
    assert passes == [False]
    _assert_as_full(root, tmp_path / "copy-2")
    assert _resolved_links(root)[("a.md", "Cee")] == "b.md"


def test_an_index_built_before_m012_migrates_and_then_resolves_in_part(tmp_path, monkeypatch):
    if sqlite3.sqlite_version_info < (3, 35):
        pytest.skip("ALTER TABLE ... DROP COLUMN (to make an older index) needs SQLite 3.35")
    root = tmp_path / "v"
    for i in range(6):
        write(root, f"n{i}.md", f"[[n{(i + 1) % 6}]] [[Later]] [x](n{(i + 2) % 6}.md) [[#here]]")
    index_vault(root, progress=False)
    store = open_store(root)
    try:  # what a brain from before m012 left: no stems, no log, no triggers
        conn = store.conn
        with store.transaction():
            for trigger in ("note_insert", "note_update", "note_delete", "alias_insert", "full"):
                conn.execute(f"DROP TRIGGER name_changes_{trigger}")
            conn.execute("DROP TABLE name_changes")
            conn.execute("DROP INDEX links_stem")
            conn.execute("ALTER TABLE links DROP COLUMN stem_hash")
            conn.execute("DELETE FROM meta WHERE key = 'name_changes_from'")
            conn.execute("DELETE FROM _migrations WHERE name = 'm012_name_changes'")
    finally:
        store.close()
    store = open_store(root)  # migrates
    try:
        assert "m012_name_changes" in INDEX_MIGRATIONS.applied(store.conn)
        assert store.conn.execute("SELECT count(*) FROM links WHERE stem_hash IS NULL").fetchone()[0] == 24
        assert store.get_meta("name_changes_from") is None
    finally:
        store.close()
    passes = _full_passes(monkeypatch)
    write(root, "Later.md", "[[n0]]")  # the first change of names after: in full (nothing was logged)
    index_vault(root, progress=False)
    assert passes == [True]
    _assert_as_full(root, tmp_path / "copy-1")
    passes.clear()
    _move(root, "Later.md", "sub/Later.md")  # then in part
    (root / "n5.md").unlink()
    index_vault(root, progress=False)
    assert passes == [False]
    _assert_as_full(root, tmp_path / "copy-2")
    got = _resolved_links(root)
    assert got[("n0.md", "Later")] == "sub/Later.md" and got[("n4.md", "n5")] is None


def test_links_an_older_brain_wrote_get_their_stems_before_a_change_of_names_needs_them(tmp_path, monkeypatch):
    """A brain from before m012 writing into a migrated index leaves links.stem_hash NULL; those
    links are filed under their stems at the next resolution, before the changed names are
    looked up, so a change of names that moves them is not missed."""
    root = tmp_path / "v"
    write(root, "a.md", "[[b]]")
    write(root, "b.md", "plain")
    write(root, "c.md", "[[New]]")
    index_vault(root, progress=False)
    store = open_store(root)
    try:
        with store.transaction():
            store.conn.execute("UPDATE links SET stem_hash = NULL")
    finally:
        store.close()
    passes = _full_passes(monkeypatch)
    write(root, "New.md", "new")
    (root / "b.md").unlink()
    index_vault(root, progress=False)
    assert passes == [False]
    _assert_as_full(root, tmp_path / "copy")
    got = _resolved_links(root)
    assert (got[("a.md", "b")], got[("c.md", "New")]) == (None, "New.md")


def test_m012_adds_the_stem_column_and_the_log_to_an_older_index(tmp_path):
    directory = tmp_path / "old-index"
    conn = index_db_before(directory, "m012_name_changes")
    conn.execute(
        "INSERT INTO notes (id, path, title, size, mtime_ns, hash, indexed_at, path_key, name_key)"
        " VALUES (1, 'A/Note.md', 'Note', 1, 1, 'h', 0, 'a/note', 'note')"
    )
    conn.execute("INSERT INTO links (source_id, target, kind, status) VALUES (1, 'A/Note', 'wikilink', 'resolved')")
    conn.execute("INSERT OR REPLACE INTO meta (key, value) VALUES ('resolver_key', '3'), ('names_version', '3')")
    conn.close()
    store = IndexStore.open(directory)
    try:
        assert store.conn.execute("SELECT stem_hash FROM links").fetchone()[0] is None
        assert store.changed_stems("3") is None  # nothing logged yet: a change of names now resolves in full
        with store.transaction():
            store.conn.execute("UPDATE notes SET path = 'B/Note.md' WHERE id = 1")
        assert store.conn.execute("SELECT count(*) FROM name_changes").fetchone()[0] == 0
        resolve_links(store)
        assert store.conn.execute("SELECT stem_hash FROM links").fetchone()[0] == stem_hash("note")
        assert store.get_meta("name_changes_from") == store.names_version()
        with store.transaction():
            store.conn.execute("UPDATE notes SET path = 'C/Note.md', name_key = 'note' WHERE id = 1")
        assert store.changed_stems(store.get_meta("resolver_key")) == {"note"}
    finally:
        store.close()


def _indexes(conn: sqlite3.Connection) -> list[tuple]:
    return [
        tuple(r)
        for r in conn.execute("SELECT name, tbl_name, sql FROM sqlite_master WHERE type = 'index' ORDER BY name")
    ]


def test_resolving_most_links_at_once_remakes_their_indexes_and_answers_the_same(tmp_path, monkeypatch):
    """A first build resolves every link: the indexes over the columns it sets are dropped and
    made again from their own SQL (store._update_rows) rather than updated row by row. The
    links, their history and the indexes come out as a twin index's, which updated row by row;
    the drops really happened (each DDL moves SQLite's schema_version)."""
    rng = random.Random(7)
    root = tmp_path / "v"
    for path in rng.sample([f + s + ".md" for f in VAULT_FOLDERS for s in VAULT_STEMS], 20):
        write(root, path, _note(rng, LINK_NAMES, rng.sample(ALIAS_POOL, rng.randint(0, 1))))
    index_into(tmp_path / "twin", root)  # a few dozen links: row by row
    monkeypatch.setattr(store_module, "_BULK_UPDATE_FROM", 1)
    index_vault(root, progress=False)
    store = open_store(root)
    try:
        got, history, indexes = _state(store.conn), _history(store.conn), _indexes(store.conn)
        schema_version = store.conn.execute("PRAGMA schema_version").fetchone()[0]
    finally:
        store.close()
    with environ(BRAIN_HOME=str(tmp_path / "twin")), IndexView(config.index_dir(root)) as twin:
        assert (got, history) == (_state(twin.conn), _history(twin.conn))
        assert indexes == _indexes(twin.conn)
        assert schema_version == twin.conn.execute("PRAGMA schema_version").fetchone()[0] + 8  # 2 tables × 2 × 2
    assert sum(status == "resolved" for *_, status in got[0]) > 10


def test_a_bulk_resolution_that_fails_leaves_the_links_and_their_indexes_as_they_were(tmp_path, monkeypatch):
    rng = random.Random(8)
    root = tmp_path / "v"
    for path in rng.sample([f + s + ".md" for f in VAULT_FOLDERS for s in VAULT_STEMS], 12):
        write(root, path, _note(rng, LINK_NAMES, []))
    index_vault(root, progress=False)
    monkeypatch.setattr(store_module, "_BULK_UPDATE_FROM", 1)
    store = open_store(root)
    try:
        before, indexes = _state(store.conn), _indexes(store.conn)
        ids = [row[0] for row in before[0]]
        with pytest.raises(sqlite3.ProgrammingError), store.transaction():  # the last row is short of a value
            store.set_link_targets([(None, "dangling", i) for i in ids] + [(None, "dangling")], "x")
        assert (_state(store.conn), _indexes(store.conn)) == (before, indexes)
    finally:
        store.close()
