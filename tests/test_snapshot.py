"""A recaller pinned to one committed index state (what `brain serve` answers from)."""

from __future__ import annotations

import json
import os
import time
from pathlib import Path

import numpy as np
import pytest
from conftest import FakeEmbedder, write
from index_helpers import index_into

from brain import config
from brain.index.store import IndexStore
from brain.index.vectors import FAISS_FILE, VectorIndex, snapshot_vectors
from brain.recall.opening import open_snapshot
from brain.vault import excluded


def _home() -> Path:
    return Path(os.environ["BRAIN_HOME"])


def test_a_snapshot_keeps_answering_from_its_state_while_the_index_moves_on(toy_vault):
    embedder = FakeEmbedder()
    index_into(_home(), toy_vault, embedder)
    old = open_snapshot(toy_vault.resolve(), embedder)
    try:
        write(toy_vault, "Walrus.md", "# Walrus\n\nThe walrus doctrine of memory.\n")
        (toy_vault / "Home.md").unlink()
        index_into(_home(), toy_vault, embedder)
        paths = old.store.note_paths()
        assert "Home.md" in paths and "Walrus.md" not in paths
        hits = [c.path for c in old.ask("walrus doctrine", "hybrid+ppr").results]
        assert "Walrus.md" not in hits
        assert old.vectors.size == old.store.chunk_count()  # vectors and rows: one state
        new = open_snapshot(toy_vault.resolve(), embedder)
        try:
            assert new.ask("walrus doctrine", "hybrid+ppr").results[0].path == "Walrus.md"
            assert "Home.md" not in new.store.note_paths()
        finally:
            new.close()
    finally:
        old.close()


def test_a_snapshot_is_built_warm(toy_vault):
    embedder = FakeEmbedder()
    index_into(_home(), toy_vault, embedder)
    recaller = open_snapshot(toy_vault.resolve(), embedder)
    try:
        assert recaller._link_graph is not None and recaller._names is not None and recaller._successors is not None
        assert recaller._folder_index is not None  # the folders lane's, too: no query after a save waits for it
    finally:
        recaller.close()


def test_a_snapshot_whose_folders_cannot_be_read_still_opens(toy_vault, monkeypatch, caplog):
    import sqlite3

    from brain.recall.folders import FolderIndex

    def broken(cls, store):
        raise sqlite3.OperationalError("database disk image is malformed")

    monkeypatch.setattr(FolderIndex, "from_store", classmethod(broken))
    embedder = FakeEmbedder()
    index_into(_home(), toy_vault, embedder)
    recaller = open_snapshot(toy_vault.resolve(), embedder)
    try:
        assert recaller._folder_index is None and recaller._link_graph is not None
        assert any("could not read the folders" in r.getMessage() for r in caplog.records)
    finally:
        recaller.close()


def test_snapshot_vectors_never_trust_a_file_from_another_build(toy_vault):
    """Same chunk ids, other vectors (a rebuilt database numbers chunks from 1 again)."""
    index_into(_home(), toy_vault, FakeEmbedder())
    directory = config.index_dir(toy_vault)
    store = IndexStore.open_snapshot(directory)
    try:
        dim = int(store.get_meta("dim"))
        ids = np.asarray(store.chunk_ids(), dtype=np.int64)
        other = VectorIndex.empty(dim, store.vectors_version())
        rng = np.random.default_rng(7)
        vectors = rng.standard_normal((len(ids), dim)).astype(np.float32)
        other.add(ids, vectors / np.linalg.norm(vectors, axis=1, keepdims=True))
        other.save(directory)
        saved = (directory / FAISS_FILE).read_bytes()
        index = snapshot_vectors(store, dim)
        stored = {
            cid: np.frombuffer(blob, dtype=np.float32) for cid, blob in store.chunk_vectors([int(i) for i in ids])
        }
        for cid in ids[:: max(1, len(ids) // 10)]:
            assert np.array_equal(index.index.reconstruct(int(cid)), stored[int(cid)])
        assert (directory / FAISS_FILE).read_bytes() == saved  # a reader never writes the writer's file
        assert json.loads((directory / "vectors.json").read_text())["count"] == len(ids)
    finally:
        store.close()


def test_snapshot_vectors_use_the_saved_file_when_it_matches(toy_vault, monkeypatch):
    index_into(_home(), toy_vault, FakeEmbedder())
    store = IndexStore.open_snapshot(config.index_dir(toy_vault))
    try:
        monkeypatch.setattr(VectorIndex, "rebuild", classmethod(lambda cls, *a: pytest.fail("rebuilt")))
        index = snapshot_vectors(store, int(store.get_meta("dim")))
        assert index.size == store.chunk_count()
    finally:
        store.close()


@pytest.mark.parametrize(
    "rel, is_dir, reason",
    [
        ("Notes/a.md", False, None),
        (".obsidian/workspace.json", False, "dot-folder"),
        ("Notes/.hidden.md", False, "dot-file"),
        ("Deep/.git/HEAD", False, "dot-folder"),
        ("Templates/Daily.md", False, "brainignore"),
        ("Templates", True, "brainignore"),
        ("Notes/a.sync-conflict-20260101-x.md", False, "sync-conflict"),
        ("Notes", True, None),
    ],
)
def test_excluded_applies_the_scans_rules_to_one_path(rel, is_dir, reason):
    import pathspec

    from brain.vault import IgnoreRules

    rules = IgnoreRules(pathspec.GitIgnoreSpec.from_lines(["Templates/"]))
    assert excluded(rel, rules, is_dir=is_dir) == reason


# What each child below starts with: brain's sqlite3.connect of the path ending in ``HELD_AT`` is
# held between SQLite's open of the file and its first read of it (its WAL and shared memory,
# opened by name), until the test's word; argv: the index folder, "ready", "go", then its own.
HELD_PREAMBLE = """
import json, logging, sqlite3, sys, time
from pathlib import Path
from brain.index.health import integrity_problem
from brain.index.upgrades import replace_unless_newer
from brain.index.store import IndexStore
directory, ready, go = Path(sys.argv[1]), Path(sys.argv[2]), Path(sys.argv[3])
opened = sqlite3.connect

def held(path, *args, **kwargs):
    conn = opened(path, *args, **kwargs)
    if str(path).endswith(HELD_AT) and not ready.exists():
        ready.touch()
        deadline = time.monotonic() + 600  # a guard: the test says "go" in its finally
        while not go.exists() and time.monotonic() < deadline:
            time.sleep(0.01)
    return conn

sqlite3.connect = held
"""


def _held(at: str, then: str) -> str:
    """A child script: HELD_PREAMBLE holding the open of the path ending in ``at``, then ``then``."""
    return f"HELD_AT = {at!r}\n" + HELD_PREAMBLE + then


def _swap_while_held(vault: Path, script: str, *args: str, during=None, newer: bool = False) -> tuple[str, str]:
    """``script`` run in a child held at its open of the index of ``vault``, while ``during()``
    (if any: changes the vault) and a rebuild of it swap in a new index (``newer``: made as a
    newer brain upgrades it), then a commit is held in the new one's WAL (the connection open, no
    checkpoint); the child's stdout and stderr."""
    import sqlite3
    import subprocess
    import sys

    from brain.index.indexer import index_vault

    directory = config.index_dir(vault)
    ready, go = vault.parent / "ready", vault.parent / "go"
    root = str(Path(__file__).resolve().parents[1])
    env = {**os.environ, "PYTHONPATH": f"{root}{os.pathsep}{os.environ.get('PYTHONPATH', '')}"}
    child = subprocess.Popen(
        [sys.executable, "-c", script, str(directory), str(ready), str(go), *args],
        env=env,
        stdout=subprocess.PIPE,
        stderr=subprocess.PIPE,
    )
    writer = None
    try:
        # guards, not figures: at load 20 a rebuild here took over 60 s, and the child, no longer
        # held, opened the index before the swap ([writable] said current: True)
        deadline = time.monotonic() + 300
        while not ready.exists() and child.poll() is None:
            assert time.monotonic() < deadline, "timed out"
            time.sleep(0.01)
        assert child.poll() is None, child.stderr.read().decode() if child.stderr else ""
        if during is not None:
            during()
        index_vault(vault, embedder=FakeEmbedder(), rebuild=True, progress=False)
        if newer:
            _made_newer(directory)
        writer = sqlite3.connect(directory / "index.db", isolation_level=None)
        writer.execute("PRAGMA wal_autocheckpoint = 0")
        writer.execute("CREATE TABLE after_rebuild (x)")
    finally:
        go.touch()
        out, err = child.communicate(timeout=300)
        if writer is not None:
            writer.close()
    assert child.returncode == 0, err.decode()
    return out.decode(), err.decode()


def _made_newer(directory: Path) -> None:
    """The index in ``directory`` as a newer brain upgraded it (a migration this brain lacks)."""
    import sqlite3

    from brain.index.schema import INDEX_MIGRATIONS

    db = sqlite3.connect(directory / "index.db", isolation_level=None)
    try:
        db.execute("INSERT INTO _migrations VALUES (?, 'm999_of_a_newer_brain', 0)", (INDEX_MIGRATIONS.name,))
    finally:
        db.close()


# An index snapshot opened (IndexStore.open_snapshot, what brain ask and brain serve answer from);
# then what it reads, as JSON.
HELD_SNAPSHOT = _held(
    "index.db",
    """
store = IndexStore.open_snapshot(directory)
check = [row[0] for row in store.conn.execute("PRAGMA integrity_check")]
tables = [row[0] for row in store.conn.execute("SELECT name FROM sqlite_master WHERE name = 'after_rebuild'")]
print(json.dumps({"check": check, "tables": tables, "current": store.still_at_its_path()}))
""",
)


def test_a_rebuild_swapping_the_index_while_a_snapshot_opens_gives_it_one_whole_index(toy_vault):
    # SQLite opens the database file when it connects, its WAL and shared memory by name at the
    # first read: a rebuild's swap in between gave brain ask / brain serve the old file read
    # through the new index's WAL, pages of two databases (and said it was the index in place)
    index_into(_home(), toy_vault, FakeEmbedder())
    out, _ = _swap_while_held(toy_vault, HELD_SNAPSHOT)
    assert json.loads(out) == {"check": ["ok"], "tables": ["after_rebuild"], "current": True}


# A process that opens the index to write it (IndexStore.open: the background BM25 postings and
# FTS5 merges, which a pass starts and which take no writer lock), then writes a row.
HELD_THEN_WRITES = _held(
    "index.db",
    """
store = IndexStore.open(directory, create=False)
store.conn.execute("BEGIN IMMEDIATE")
store.conn.execute("INSERT OR REPLACE INTO meta (key, value) VALUES ('written_after', 'yes')")
store.conn.execute("COMMIT")
store.close()
""",
)


def test_a_process_opening_the_index_to_write_it_as_a_rebuild_swaps_it_leaves_the_new_index_sound(toy_vault):
    # It opened the old database file and, at its first read, the new index's WAL: what it wrote
    # went into the new index's WAL as pages of the old one, and the index in place was damaged
    import sqlite3

    index_into(_home(), toy_vault, FakeEmbedder())
    _swap_while_held(toy_vault, HELD_THEN_WRITES)
    db = sqlite3.connect(config.index_dir(toy_vault) / "index.db")
    try:
        assert db.execute("PRAGMA integrity_check").fetchall() == [("ok",)]
        assert db.execute("SELECT value FROM meta WHERE key = 'written_after'").fetchall() == [("yes",)]
    finally:
        db.close()


# An index opened to read it, held at its read-only open; then what it reads, as JSON. "open": an
# index a newer brain upgraded (IndexStore.open with readonly_ok, as brain status, recall's
# opening and timeline do: ``store_open.open_readonly``); "integrity": health.integrity_problem
# (``open_read_only``, as `brain index --rebuild` and the MCP server read).
HELD_READ_ONLY = _held(
    "index.db?mode=ro",
    """
if sys.argv[4] == "integrity":
    print(json.dumps({"problem": integrity_problem(directory)}))
    sys.exit()
store = IndexStore.open(directory, create=False, readonly_ok=True, warn_newer=False)
check = [row[0] for row in store.conn.execute("PRAGMA integrity_check")]
tables = [row[0] for row in store.conn.execute("SELECT name FROM sqlite_master WHERE name = 'after_rebuild'")]
print(json.dumps({"check": check, "tables": tables, "notes": len(store.note_paths()), "readonly": store.readonly}))
""",
)


def _read_during_a_rebuild(vault: Path, what: str, *, newer: bool) -> dict[str, object]:
    """HELD_READ_ONLY's ``what`` read of the index of ``vault`` (``newer``: one a newer brain
    upgraded), a rebuild swapping in an index unlike it before its first read, a commit held in
    the new one's WAL; with the new index's note count."""
    index_into(_home(), vault, FakeEmbedder())
    directory = config.index_dir(vault)
    fresh = IndexStore.open(directory, create=False)
    old_notes = len(fresh.note_paths())
    fresh.close()
    if newer:
        _made_newer(directory)

    def unlike_the_old_one() -> None:  # page for page
        for n in range(40):
            write(vault, f"Added {n}.md", f"# Added {n}\n\nNote {n} of those the rebuild finds. [[Home]]\n")

    out, _ = _swap_while_held(vault, HELD_READ_ONLY, what, during=unlike_the_old_one, newer=newer)
    fresh = IndexStore.open(directory, create=False, readonly_ok=True, warn_newer=False)
    notes = len(fresh.note_paths())
    fresh.close()
    return {**json.loads(out), "new_notes": notes, "old_notes": old_notes}


def test_a_rebuild_swapping_a_newer_index_while_it_opens_read_only_gives_one_whole_index(toy_vault):
    # The read-only open (a newer brain's index, or a folder that cannot be written) connected
    # and read without comparing the file: a rebuild's swap between gave the old file read
    # through the new index's WAL, pages of two databases (integrity_check failing, old notes)
    read = _read_during_a_rebuild(toy_vault, "open", newer=True)
    assert read["new_notes"] != read["old_notes"]  # the two indexes told apart
    assert {k: read[k] for k in ("check", "tables", "notes", "readonly")} == {
        "check": ["ok"],
        "tables": ["after_rebuild"],
        "notes": read["new_notes"],
        "readonly": True,
    }


def test_a_rebuild_swapping_the_index_while_its_integrity_is_read_finds_no_damage(toy_vault):
    # health.integrity (`brain index --rebuild`'s look at the index it replaces, the MCP
    # server's note count beside it: ``open_read_only``) read the old file through the new index's
    # WAL and took the sound index for a damaged one ("Page 99 is never used")
    assert _read_during_a_rebuild(toy_vault, "integrity", newer=False)["problem"] is None


# replace_unless_newer (how the vector index and the recall cache put their files in the index
# folder) held at its open of index.db to take the write lock (its first read); then whether it
# kept the file, as JSON.
HELD_REPLACING = _held(
    "index.db?mode=rw",
    """
logging.basicConfig(level=logging.INFO, stream=sys.stderr)
temporary = Path(sys.argv[4])
kept = replace_unless_newer(directory, [(temporary, directory / "put_there")], "a test file")
print(json.dumps({"kept": kept, "there": (directory / "put_there").exists()}))
""",
)


def test_a_rebuild_swapping_a_newer_index_as_a_file_is_put_beside_it_reads_the_new_one(toy_vault):
    # replace_unless_newer connected and read the migrations at BEGIN IMMEDIATE without comparing
    # the file: a rebuild's swap in between (of an index a newer brain upgraded, for one this
    # brain owns) read them from the old file through the new index's WAL, pages of two
    # databases, found the newer brain's migration there, and left the file out of the new index
    index_into(_home(), toy_vault, FakeEmbedder())
    _made_newer(config.index_dir(toy_vault))
    temporary = toy_vault.parent / "put.tmp"
    temporary.write_bytes(b"derived")
    out, err = _swap_while_held(toy_vault, HELD_REPLACING, str(temporary))
    assert json.loads(out) == {"kept": True, "there": True}, err
    assert "not kept" not in err


# An index opened (IndexStore.open; with ``readonly_ok``, an index a newer brain upgraded opens
# read-only: ``store_open.open_readonly``), held after its connection is made and before the store is built
# on it, until the test's word; then whether the store says it is the index at its path, as JSON.
HELD_BUILDING = """
import json, sys, time
from pathlib import Path
from brain.index.store import IndexStore
directory, ready, go = Path(sys.argv[1]), Path(sys.argv[2]), Path(sys.argv[3])
built = IndexStore.__init__

def held(self, *args, **kwargs):
    if not ready.exists():
        ready.touch()
        deadline = time.monotonic() + 600  # a guard: the test says "go" in its finally
        while not go.exists() and time.monotonic() < deadline:
            time.sleep(0.01)
    built(self, *args, **kwargs)

IndexStore.__init__ = held
store = IndexStore.open(directory, create=False, readonly_ok=True, warn_newer=False)
print(json.dumps({"current": store.still_at_its_path(), "readonly": store.readonly}))
"""


@pytest.mark.parametrize("newer", [False, True], ids=["writable", "newer-read-only"])
def test_a_rebuild_swapping_the_index_as_its_store_is_built_leaves_the_store_saying_it_was_replaced(toy_vault, newer):
    # The store took its file's identity from a stat as it was built, after the connection was
    # made: a rebuild's swap in between gave a store on the old file the new one's identity, and
    # still_at_its_path() said True (brain serve went on answering from the replaced index)
    index_into(_home(), toy_vault, FakeEmbedder())
    if newer:
        _made_newer(config.index_dir(toy_vault))
    out, err = _swap_while_held(toy_vault, HELD_BUILDING, newer=newer)
    assert json.loads(out) == {"current": False, "readonly": newer}, err
