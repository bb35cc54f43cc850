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

from brain.recall import carry
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
    folders = recaller.folder_index()
    return {
        "names": (recaller.names(), recaller._holders),
        "name_index": (
            [(n.note_id, n.text, n.words) for n in index.names],
            index.titled,
            index.by_word,
            index.idf,
            index._fuzzy,
            index.initials,
        ),
        "graph": (graph.note_ids.tolist(), graph.dangling.tolist(), graph.edges),
        "matrix": matrix,
        "folders": (folders.folders, folders.notes, folders.sorted_paths(), folders._ids),
    }


def _assert_same(carried: Recaller, fresh: Recaller, step: str) -> None:
    a, b = _snapshot_state(carried), _snapshot_state(fresh)
    assert a["names"] == b["names"], step
    assert a["name_index"] == b["name_index"], step
    assert a["graph"] == b["graph"], step
    assert a["folders"] == b["folders"], step
    assert np.array_equal(a["matrix"], b["matrix"]), step  # bit for bit: the links in one order (LinkGraph._build)


def _assert_search_index_in_step(recaller: Recaller, step: str) -> None:
    """FTS5's own check of the BM25 index against the rows it indexes (it keeps no copy of them:
    a 'delete' handed other values than were indexed leaves entries behind)."""
    import sqlite3

    conn = sqlite3.connect(recaller.store.directory / "index.db")
    try:
        for table in ("chunks_fts", "chunk_history_fts"):
            conn.execute(f"INSERT INTO {table} ({table}, rank) VALUES ('integrity-check', 1)")
    except sqlite3.DatabaseError as exc:
        raise AssertionError(f"{step}: the BM25 index is out of step ({exc})") from exc
    finally:
        conn.close()


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
    taken: dict[str, int] = {"names": 0, "folder index": 0, "link graph": 0, "link graph (patched)": 0}
    try:
        for step in range(30):
            fences = "none" if rng.random() < 0.15 else "statblock"
            with environ(BRAIN_LINK_FENCES=fences):
                did = _change(rng, vault, notes)
                index_into(_home(), vault, embedder)
                current = open_snapshot(root, embedder, previous=previous)
                fresh = open_snapshot(root, embedder)
            try:
                _assert_same(current, fresh, f"step {step}: {did}")
                _assert_search_index_in_step(current, f"step {step}: {did}")
            finally:
                fresh.close()
            said = [r.getMessage() for r in caplog.records if "taken over" in r.getMessage()][-1]
            taken["names"] += "names," in said
            taken["folder index"] += "folder index" in said
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
            assert Recaller(new.store, new.vectors, new.embedder, root=root).carry_over(old.built()) == [
                "names",
                "name index",
                "folder index",
                "link graph",
            ]
            assert new._link_graph is old._link_graph and new._name_index is old._name_index
            assert new._folder_index is old._folder_index  # every note's path and the folders, sorted once
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
        assert Recaller(b.store, b.vectors, b.embedder, root=b.root).carry_over(a.built()) == []
        assert b._link_graph is not a._link_graph and b._names is not a._names
    finally:
        a.close()
        b.close()


# ----- kept on disk between runs (recall/cache.py) ----------------------------------------------


def _one_shot(root: Path, embedder, **kwargs):
    from brain.recall.opening import open_recaller

    return open_recaller(root, embedder=embedder, rerank_model=None, **kwargs)


def _fresh(root: Path, embedder) -> Recaller:
    recaller = _one_shot(root, embedder, update=False)
    recaller.disk_cache, recaller._disk_checked = "off", True  # builds everything itself
    return recaller


def _cache_file(root: Path) -> Path:
    from brain import config
    from brain.index.files import RECALL_CACHE_FILE

    return config.index_dir(root) / RECALL_CACHE_FILE


def _kept(vault: Path, *built: str) -> tuple[FakeEmbedder, Path]:
    """Index ``vault``, and keep on disk what a one-shot run builds of ``built`` (Recaller
    methods: names, name_index, link_graph). Returns the embedder and the vault's root."""
    embedder = FakeEmbedder()
    root = vault.resolve()
    index_into(_home(), vault, embedder)
    run = _one_shot(root, embedder)
    for name in built:
        getattr(run, name)()
    run.close()
    return embedder, root


@pytest.mark.parametrize("seed", range(4))
def test_what_one_run_keeps_the_next_takes_over_as_a_fresh_build_would(tmp_path, seed, caplog):
    caplog.set_level(logging.INFO, logger="brain")
    rng = random.Random(100 + seed)
    vault = tmp_path / "vault"
    notes: dict[str, tuple[str | None, list[str]]] = {}
    for i, name in enumerate(NAMES):
        notes[rng.choice(FOLDERS) + name + ".md"] = (
            rng.choice([None, f"Title {i}"]),
            rng.sample(NAMES, rng.randint(0, 1)),
        )
    for path, (title, aliases) in notes.items():
        write(vault, path, _text(rng, [Path(p).stem for p in notes], title, aliases))
    embedder = FakeEmbedder()
    root = vault.resolve()
    index_into(_home(), vault, embedder)
    first = _one_shot(root, embedder)
    first.ask("alpha beta", "hybrid+ppr")
    first.close()
    assert _cache_file(root).exists()
    taken = []
    for step in range(20):
        fences = "none" if rng.random() < 0.15 else "statblock"
        with environ(BRAIN_LINK_FENCES=fences):
            did = _change(rng, vault, notes)
            caplog.clear()
            run = _one_shot(root, embedder)  # indexes the change first, as `brain ask` does
            fresh = _fresh(root, embedder)
            try:
                _assert_same(run, fresh, f"step {step}: {did}")
                query = rng.choice(NAMES) + " words"
                assert [(c.path, round(c.score, 9)) for c in run.ask(query, "hybrid+ppr").results] == [
                    (c.path, round(c.score, 9)) for c in fresh.ask(query, "hybrid+ppr").results
                ], f"step {step}: {did}"
            finally:
                run.close()
                fresh.close()
        taken += [r.getMessage() for r in caplog.records if "from the last run" in r.getMessage()]
    everything = "names, name index, folder index, link graph"
    assert any(everything in m for m in taken), taken  # all of it, where nothing changed
    assert any("patched" in m for m in taken), taken


def _folder_vault(vault: Path) -> None:
    for path in ("Spells/Holy Spark.md", "Spells/Frost Ray.md", "Monsters/Ogre.md", "Monsters/Goblin.md"):
        write(vault, path, f"# {Path(path).stem}\n\nSome words about {Path(path).stem.lower()}.\n")
    for i in range(4):
        write(vault, f"Other {i}.md", f"# Other {i}\n\nUnfiled words.\n")


def test_the_kept_folder_index_is_taken_over_until_a_rename_moves_a_path(tmp_path, caplog, monkeypatch):
    """A one-shot run read every note's path and built the folders lane's index at its first
    query, every run; now the next run takes it from the kept file, and a note renamed (here
    into another folder) since it was kept makes it build the index again, never answer from
    the old paths."""
    from brain.recall.folders import FolderIndex

    caplog.set_level(logging.INFO, logger="brain")
    vault = tmp_path / "vault"
    _folder_vault(vault)
    embedder, root = _kept(vault, "names", "folder_index")
    built = []
    real = FolderIndex.from_store.__func__  # type: ignore[attr-defined]
    monkeypatch.setattr(FolderIndex, "from_store", classmethod(lambda cls, store: built.append(1) or real(cls, store)))
    run, fresh = _one_shot(root, embedder), _fresh(root, embedder)
    try:
        _assert_same(run, fresh, "nothing changed")
        assert built == [1]  # the fresh one's only
        assert run.folder_index().notes_in(["Spells"]) == fresh.folder_index().notes_in(["Spells"])
    finally:
        run.close()
        fresh.close()
    (vault / "Monsters").mkdir(exist_ok=True)
    (vault / "Spells/Frost Ray.md").rename(vault / "Monsters/Frost Ray.md")
    built.clear()
    caplog.clear()
    run, fresh = _one_shot(root, embedder), _fresh(root, embedder)  # the run indexes the rename first
    try:
        _assert_same(run, fresh, "a note moved to another folder")
        assert built == [1, 1]
        moved = run.store.note_id("Monsters/Frost Ray.md")
        assert moved in run.folder_index().notes_in(["Monsters"])
        assert moved not in run.folder_index().notes_in(["Spells"])
        assert not any("folder index" in r.getMessage() for r in caplog.records if "last run" in r.getMessage())
    finally:
        run.close()
        fresh.close()


def test_a_damaged_or_foreign_file_is_not_used_and_is_replaced(toy_vault, caplog, monkeypatch, closing):
    caplog.set_level(logging.INFO, logger="brain")
    embedder = FakeEmbedder()
    root = toy_vault.resolve()
    index_into(_home(), toy_vault, embedder)
    expected = _snapshot_state(closing(_fresh(root, embedder)))
    path = _cache_file(root)
    run = _one_shot(root, embedder)
    run.link_graph(), run.names(), run.name_index()
    run.close()
    good = path.read_bytes()
    for damage in (b"", b"not a zip", good[: len(good) // 2], good[:-40] + b"\0" * 40):
        path.write_bytes(damage)
        caplog.clear()
        run = _one_shot(root, embedder)
        try:
            state = _snapshot_state(run)
        finally:
            run.close()
        assert state["names"] == expected["names"] and state["graph"] == expected["graph"]
        assert np.allclose(state["matrix"], expected["matrix"])
        assert any("cannot be used" in r.getMessage() for r in caplog.records), damage[:20]
        assert path.read_bytes() != damage  # kept again by the run that built afresh
    from brain.recall import cache

    monkeypatch.setattr(cache, "code_stamp", lambda: 12345)  # another version of brain
    caplog.clear()
    run = _one_shot(root, embedder)
    run.names()
    run.close()
    assert any("another version" in r.getMessage() for r in caplog.records)


def test_the_code_stamp_reads_every_module_the_kept_names_are_built_with():
    """The name index drops the stop words of recall/stop_words.py from every name: a new list
    must not be read through an index kept by the old one, so its file is in the stamp."""
    import ast
    from pathlib import Path

    from brain.recall import cache

    here = Path(cache.__file__).parent
    tree = ast.parse((here / "names.py").read_text(encoding="utf-8"))
    siblings = {
        a.name
        for n in ast.walk(tree)
        if isinstance(n, ast.ImportFrom) and n.level == 1 and not n.module
        for a in n.names
    }
    assert "stop_words" in siblings and {f"{m}.py" for m in siblings} <= set(cache._SOURCES)


def test_the_code_stamp_reads_the_folding_the_kept_names_are_built_with():
    """The names are folded by brain/text.py (for_search, yo_as_ye, lookalikes_as_cyrillic): a
    brain that folds otherwise (a new look-alike rule) read names kept by the old folding, and a
    query's words no longer met them, until names.py itself changed."""
    import ast
    from pathlib import Path

    from brain.recall import cache

    here = Path(cache.__file__).parent
    for module in ("names.py", "gate.py"):
        tree = ast.parse((here / module).read_text(encoding="utf-8"))
        parents = {n.module for n in ast.walk(tree) if isinstance(n, ast.ImportFrom) and n.level == 2}
        assert "text" in parents, module
    read = []
    real = Path.read_bytes
    with pytest.MonkeyPatch.context() as patch:
        patch.setattr(Path, "read_bytes", lambda path: read.append(path.resolve()) or real(path))
        cache.code_stamp()
    assert (here.parent / "text.py").resolve() in read


def test_other_link_weights_rebuild_the_kept_graph_from_its_links(toy_vault):
    embedder, root = _kept(toy_vault, "link_graph")
    with environ(BRAIN_PPR_BACKLINK_WEIGHT="0.2", BRAIN_PPR_HUB_DAMPING="0.9"):
        run, fresh = _one_shot(root, embedder), _fresh(root, embedder)
        try:
            _assert_same(run, fresh, "other weights")
        finally:
            run.close()
            fresh.close()


def test_a_run_whose_index_changed_under_it_keeps_nothing(toy_vault):
    embedder = FakeEmbedder()
    root = toy_vault.resolve()
    index_into(_home(), toy_vault, embedder)
    run = _one_shot(root, embedder)
    run.link_graph()
    write(toy_vault, "Later.md", "# Later\n\nWritten while the run was reading. See [[Home]].\n")
    index_into(_home(), toy_vault, embedder)
    run.close()
    assert not _cache_file(root).exists()


@pytest.mark.slow  # a subprocess
def test_a_read_only_index_is_read_and_never_written(toy_vault, brain_home):
    """`brain ask` on an index it cannot write takes what an earlier run kept and leaves it."""
    import subprocess
    import sys

    from index_helpers import modes_binding_prefix
    from test_hardening_index import TESTS, _chmod_tree

    _, root = _kept(toy_vault, "names", "link_graph")
    path = _cache_file(root)
    kept = path.read_bytes()
    _chmod_tree(brain_home, writable=False)
    try:
        # `brain ask` with its log at INFO, in a process that file modes bind
        code = (
            "import logging, sys, fakes; import brain.cli as cli; setup = cli.setup_logging;"
            " cli.setup_logging = lambda quiet=False: (setup(quiet), logging.getLogger('brain').setLevel(logging.INFO));"
            " sys.argv[0] = 'brain'; from brain.__main__ import main; main()"
        )
        asked = subprocess.run(
            [
                *modes_binding_prefix(),
                sys.executable,
                "-c",
                code,
                "ask",
                "--vault",
                str(root),
                "--no-update",
                "memory graph",
            ],
            cwd=TESTS,
            env={**os.environ, "BRAIN_HOME": str(brain_home), "BRAIN_EMBED_MODEL": "fake:64"},
            capture_output=True,
            text=True,
            timeout=120,
            check=False,
        )
    finally:
        _chmod_tree(brain_home, writable=True)
    assert asked.returncode == 0 and "Traceback" not in asked.stderr, asked.stderr
    assert "taken over from the last run: names, link graph" in asked.stderr, asked.stderr
    assert path.read_bytes() == kept and not list(path.parent.glob(".recall-cache-*"))


def test_a_servers_first_snapshot_takes_what_a_run_kept_and_leaves_the_file(toy_vault, caplog):
    caplog.set_level(logging.INFO, logger="brain")
    embedder, root = _kept(toy_vault, "names", "name_index", "link_graph")
    kept = _cache_file(root).stat().st_mtime_ns
    write(toy_vault, "Home.md", (toy_vault / "Home.md").read_text(encoding="utf-8") + "\nSee [[Sourdough bread]].\n")
    index_into(_home(), toy_vault, embedder)
    caplog.clear()
    snapshot = open_snapshot(root, embedder)
    fresh = _fresh(root, embedder)
    try:
        _assert_same(snapshot, fresh, "first snapshot")
        said = [r.getMessage() for r in caplog.records if "from the last run" in r.getMessage()]
        assert said == ["taken over from the last run: names, name index, link graph (patched)"], said
    finally:
        snapshot.close()
        fresh.close()
    assert _cache_file(root).stat().st_mtime_ns == kept  # a snapshot's close never writes it (a server's stop may)


def test_what_a_killed_save_left_is_cleared_by_the_next(toy_vault):
    embedder = FakeEmbedder()
    root = toy_vault.resolve()
    index_into(_home(), toy_vault, embedder)
    directory = _cache_file(root).parent
    dead = directory / "recall-cache.npz.999999999.0badf00d.tmp"  # no such process
    alive = directory / f"recall-cache.npz.{os.getppid()}.0badf00d.tmp"  # a save in progress elsewhere
    dead.write_bytes(b"half a file")
    alive.write_bytes(b"being written")
    run = _one_shot(root, embedder)
    run.names()
    run.close()
    assert not dead.exists() and alive.exists() and _cache_file(root).exists()


def test_a_kept_graph_of_other_notes_than_its_stamp_is_not_used(toy_vault, caplog):
    caplog.set_level(logging.INFO, logger="brain")
    embedder, root = _kept(toy_vault, "link_graph")
    path = _cache_file(root)
    with np.load(path) as data:
        arrays = {k: data[k] for k in data.files}
    arrays["graph_note_ids"] = arrays["graph_note_ids"] + 1000  # a file put together from two others
    with open(path, "wb") as out:
        np.savez(out, **arrays)
    caplog.clear()
    run, fresh = _one_shot(root, embedder), _fresh(root, embedder)
    try:
        _assert_same(run, fresh, "foreign graph")
        assert any("not of the notes it is stamped with" in r.getMessage() for r in caplog.records)
    finally:
        run.close()
        fresh.close()


def test_what_cannot_be_taken_over_is_not_even_read(toy_vault, caplog, monkeypatch):
    """After a note is added nothing kept is valid: the names are not unmarshalled for nothing."""
    caplog.set_level(logging.INFO, logger="brain")
    embedder, root = _kept(toy_vault, "names", "name_index", "link_graph")
    write(toy_vault, "Newcomer.md", "# Newcomer\n\nA note added since. See [[Home]].\n")
    from brain.recall import cache

    def refuse(_data):
        raise AssertionError("the kept names were read")

    monkeypatch.setattr(cache.marshal, "loads", refuse)
    caplog.clear()
    run, fresh = _one_shot(root, embedder), _fresh(root, embedder)
    try:
        _assert_same(run, fresh, "a note added")
        assert not [r for r in caplog.records if "cannot be used" in r.getMessage()]
    finally:
        monkeypatch.undo()
        run.close()
        fresh.close()


def test_saves_racing_each_other_and_a_reader_never_leave_half_a_file(toy_vault):
    """Two runs keeping different states at once, a third reading: each read is one whole state."""
    import threading

    from brain.recall import cache

    _, root = _kept(toy_vault, "names", "name_index", "link_graph")
    first = cache.load(_cache_file(root).parent)
    assert first is not None
    other = carry.Built(
        carry.Basis(
            first.basis.index_id, "other", None, first.basis.note_ids, first.basis.written_at, first.basis.titles
        ),
        first.names,
        first.name_index,
        first.link_graph,
        first.holders,
        first.kept_name_index,
    )
    directory = _cache_file(root).parent
    stop, seen, errors = threading.Event(), set(), []

    def save(built: carry.Built) -> None:
        while not stop.is_set():
            if not cache.save(directory, built):
                errors.append("a save failed")

    def read() -> None:
        for _ in range(40):
            kept = cache.load(directory)
            if kept is None:
                errors.append("a read found no whole file")
            else:
                seen.add(kept.basis.names_version)

    writers = [threading.Thread(target=save, args=(b,)) for b in (first, other)]
    for t in writers:
        t.start()
    try:
        read()
    finally:
        stop.set()
        for t in writers:
            t.join()
    assert not errors and seen <= {first.basis.names_version, "other"} and seen, (errors, seen)
    assert not list(directory.glob(f"{cache.RECALL_CACHE_FILE}.*.tmp"))
