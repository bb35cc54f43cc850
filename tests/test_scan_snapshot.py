"""The scan snapshot: a compact copy of every note's path, id, size and mtime that the walk
compares the vault with. It must never hide a change: any write to those columns is logged
in the same transaction (m011_scan_snapshot_log), and a new one is stored only under the
write lock, from the rows as they are then. Whenever it exists, it corrected by its log
equals the rows."""

from __future__ import annotations

import logging
import os
import pickle
import sqlite3
import struct
import subprocess
import sys
from pathlib import Path

import pytest
from conftest import FakeEmbedder, write
from index_helpers import open_store

from brain import config
from brain.index import changes, scan_snapshot
from brain.index.indexer import index_vault
from brain.index.store import IndexStore

TESTS = Path(__file__).resolve().parent


def _index(vault: Path):
    return index_vault(vault, embedder=FakeEmbedder(), progress=False)


def _stored(store: IndexStore) -> bool:
    return store.conn.execute("SELECT count(*) FROM scan_snapshot").fetchone()[0] == 1


def _rows(store: IndexStore) -> dict[str, tuple[int, int, int]]:
    return {r[0]: (r[1], r[2], r[3]) for r in store.conn.execute("SELECT path, id, size, mtime_ns FROM notes")}


def _plan_summary(vault: Path, store: IndexStore) -> tuple:
    plan = changes.plan(vault, store)
    return (
        sorted(plan.unchanged),
        sorted((f.path, note_id) for f, note_id in plan.candidates),
        sorted(plan.deleted.items()),
    )


@pytest.fixture
def indexed(toy_vault):
    _index(toy_vault)
    with open_store(toy_vault) as store:
        yield toy_vault, store


def _blob(store: IndexStore) -> bytes:
    return store.conn.execute("SELECT data FROM scan_snapshot").fetchone()[0]


def test_every_write_to_the_notes_is_seen_through_the_snapshot_and_its_log(indexed):
    """The snapshot is not stored again after a write: the log of changed notes corrects it."""
    _vault, store = indexed
    note = next(iter(_rows(store)))
    note_id = _rows(store)[note][0]
    store.conn.execute("DELETE FROM scan_snapshot")
    store.note_stats()  # one of the notes as they are, with an empty log
    assert store.conn.execute("SELECT count(*) FROM scan_snapshot_log").fetchone()[0] == 0
    blob = _blob(store)

    insert = "INSERT INTO notes (id, path, title, size, mtime_ns, hash, indexed_at) VALUES (?, ?, 'n', 1, 2, 'h', 0)"
    writes = {
        "touch": lambda: store.touch_note(note_id, 1, 2),
        "size by hand": lambda: store.conn.execute("UPDATE notes SET size = size + 1"),
        "mtime by hand": lambda: store.conn.execute("UPDATE notes SET mtime_ns = -1 WHERE id = ?", (note_id,)),
        "path by hand": lambda: store.conn.execute("UPDATE notes SET path = 'moved.md' WHERE id = ?", (note_id,)),
        "path back": lambda: store.conn.execute("UPDATE notes SET path = ? WHERE id = ?", (note, note_id)),
        "insert": lambda: store.conn.execute(insert, (100001, "new.md")),
        "id by hand": lambda: store.conn.execute("UPDATE notes SET id = 100002 WHERE id = 100001"),
        "delete": lambda: store.delete_notes([note_id]),
        "its path taken": lambda: store.conn.execute("UPDATE notes SET path = ? WHERE id = 100002", (note,)),
        "its id taken": lambda: store.conn.execute(insert, (note_id, "again.md")),  # as history's restore does
    }
    for name, change in writes.items():
        with store.transaction():
            change()
        assert store.note_stats() == _rows(store), name
        assert _blob(store) == blob, name
        # What the walk's helper process is sent, decoded there, says the same.
        stats, snapshot = store.note_stats_and_snapshot()
        assert snapshot is not None and snapshot.data == blob and snapshot.logged, name
        assert scan_snapshot.notes(scan_snapshot.Snapshot(*pickle.loads(pickle.dumps(tuple(snapshot))))) == stats, name
    with store.transaction():  # a column the walk does not read: nothing logged
        before = store.conn.execute("SELECT count(*) FROM scan_snapshot_log").fetchone()[0]
        store.conn.execute("UPDATE notes SET title = 'Another title'")
    assert store.conn.execute("SELECT count(*) FROM scan_snapshot_log").fetchone()[0] == before


def test_the_snapshot_handed_on_is_the_one_stored_or_none_where_none_could_be(indexed, toy_vault):
    """``note_stats_and_snapshot`` gives the walk's helper the bytes the stats came from: the
    stored snapshot, the one it has just stored, or None when it read the rows and could not
    store one (a read-only index)."""
    _vault, store = indexed
    store.conn.execute("DELETE FROM scan_snapshot")
    stats, snapshot = store.note_stats_and_snapshot()
    assert snapshot is not None and snapshot.data == _blob(store) and snapshot.logged == snapshot.current == []
    assert scan_snapshot.notes(snapshot) == stats == _rows(store)
    store.conn.execute("DELETE FROM scan_snapshot")
    writer = sqlite3.connect(config.index_dir(toy_vault) / "index.db", isolation_level=None)
    try:
        writer.execute("BEGIN IMMEDIATE")  # another process writing: no snapshot can be stored now
        stats, snapshot = store.note_stats_and_snapshot()
        assert snapshot is None and stats == _rows(store) and not _stored(store)
    finally:
        writer.close()


@pytest.mark.parametrize(
    "damage",
    [
        lambda blob: blob[: len(blob) - 3] + b"\xff\xfe\xfd",  # paths that are not UTF-8
        lambda blob: blob[:20],  # cut short
        lambda blob: b"NOTASNAP" + blob[8:],  # another format
        lambda blob: blob + b"\0extra.md",  # more paths than its count
    ],
    ids=["bad-utf8", "truncated", "magic", "extra-path"],
)
def test_a_damaged_snapshot_is_read_from_the_rows_and_stored_again(indexed, damage):
    """A snapshot whose bytes were damaged (a bad sector, a tool that rewrote the row) is not
    one this version wrote: the walk reads the rows instead, never a traceback, and the next
    reader has a good one."""
    _vault, store = indexed
    store.conn.execute("DELETE FROM scan_snapshot")
    store.note_stats()
    blob = _blob(store)
    with store.transaction():
        store.conn.execute("UPDATE scan_snapshot SET data = ?", (damage(blob),))
    assert store.note_stats() == _rows(store)
    assert scan_snapshot.decode(_blob(store)) == _rows(store)


def test_a_long_log_drops_the_snapshot_and_the_next_reader_stores_a_new_one(indexed):
    _vault, store = indexed
    store.note_stats()
    note_id = next(iter(_rows(store).values()))[0]
    with store.transaction():
        for mtime in range(1001):  # two log rows each
            store.touch_note(note_id, 1, mtime)
    assert not _stored(store)
    assert store.conn.execute("SELECT count(*) FROM scan_snapshot_log").fetchone()[0] == 0
    with store.transaction():
        store.touch_note(note_id, 1, 5)  # no snapshot: nothing to correct, nothing logged
    assert store.conn.execute("SELECT count(*) FROM scan_snapshot_log").fetchone()[0] == 0
    assert store.note_stats() == _rows(store) and _stored(store)


def test_index_runs_and_the_snapshot_agree_with_the_rows(indexed):
    """Through every kind of change the plan made from the snapshot is the plan made from the rows."""
    vault, store = indexed
    steps = [
        lambda: write(vault, "Fresh.md", "# Fresh\n\nnew\n"),
        lambda: (vault / "Fresh.md").write_text("# Fresh\n\nnew, and longer\n", encoding="utf-8"),
        lambda: os.utime(vault / "Fresh.md", ns=(1, 1)),  # same bytes, another mtime
        lambda: (vault / "Fresh.md").rename(vault / "Renamed.md"),
        lambda: (vault / "Renamed.md").unlink(),
    ]
    for step in steps:
        step()
        with_snapshot = _plan_summary(vault, store)
        assert _stored(store)
        store.conn.execute("DELETE FROM scan_snapshot")
        assert _plan_summary(vault, store) == with_snapshot
        _index(vault)
        assert store.note_stats() == _rows(store)
        assert _plan_summary(vault, store)[1:] == ([], [])  # level


def test_a_file_put_back_with_its_old_stat_is_still_seen(indexed):
    """What a stale snapshot would hide: the index moved on, the file went back to the size and
    mtime an older snapshot recorded."""
    vault, store = indexed
    path = vault / "Home.md"
    old_text, old_stat = path.read_text(encoding="utf-8"), path.stat()
    store.note_stats()  # a snapshot of the old state
    assert _stored(store)
    path.write_text(old_text.upper(), encoding="utf-8")  # same size, new bytes and mtime
    _index(vault)
    path.write_text(old_text, encoding="utf-8")
    os.utime(path, ns=(old_stat.st_atime_ns, old_stat.st_mtime_ns))  # restored, as `cp -p` would
    candidates = _plan_summary(vault, store)[1]
    assert [p for p, _ in candidates] == ["Home.md"]


def test_a_reader_that_cannot_take_the_write_lock_reads_the_rows_and_stores_nothing(indexed):
    vault, store = indexed
    store.conn.execute("DELETE FROM scan_snapshot")
    other = sqlite3.connect(config.index_dir(vault) / "index.db", isolation_level=None)
    try:
        other.execute("BEGIN IMMEDIATE")  # another writer, mid-transaction
        assert store.note_stats() == _rows(store)
        assert not _stored(store)
        other.execute("ROLLBACK")
    finally:
        other.close()
    assert store.note_stats() == _rows(store) and _stored(store)


def test_a_snapshot_this_version_cannot_read_is_replaced(indexed):
    _vault, store = indexed
    store.conn.execute("INSERT OR REPLACE INTO scan_snapshot (id, data) VALUES (1, x'00ff')")
    assert store.note_stats() == _rows(store)
    assert store.conn.execute("SELECT data FROM scan_snapshot").fetchone()[0] != b"\x00\xff"


_WRITER = """
import sys, fakes
from pathlib import Path
from brain.index.indexer import index_vault
vault = Path(sys.argv[1])
for i in range(int(sys.argv[2])):
    (vault / f"w{i % 7}.md").write_text(f"# W\\n\\nround {i}\\n" * (1 + i % 3), encoding="utf-8")
    if i % 5 == 4:
        (vault / f"w{i % 7}.md").unlink()
    index_vault(vault, embedder=fakes.FakeEmbedder(), progress=False)
"""


@pytest.mark.slow  # a subprocess
def test_whenever_the_snapshot_exists_it_and_its_log_equal_the_rows_while_a_writer_runs(indexed):
    vault, store = indexed
    writer = subprocess.Popen(
        [sys.executable, "-c", _WRITER, str(vault), "40"],
        cwd=TESTS,
        env={**os.environ},
        stdout=subprocess.PIPE,
        stderr=subprocess.PIPE,
        text=True,
    )
    checks = 0
    try:
        while writer.poll() is None:
            store.note_stats()  # stores one whenever it can
            store.conn.execute("BEGIN")  # one read transaction: the snapshot and the rows of one state
            try:
                snapshot = store._snapshot()
                stats = scan_snapshot.notes(snapshot) if snapshot is not None else None
                if stats is not None:
                    assert stats == _rows(store)
                    checks += 1
            finally:
                store.conn.execute("COMMIT")
    finally:
        if writer.poll() is None:
            writer.kill()
        writer.wait()
    _, err = writer.communicate()
    assert writer.returncode == 0, err
    assert checks > 0
    assert store.note_stats() == _rows(store)


def test_the_walk_leaves_the_garbage_collector_as_it_found_it(indexed):
    """The walk pauses the cyclic collector and thaws what it made into the oldest generation:
    after it the collector is on, nothing it froze stays frozen, and a cycle made before is
    still found (by a full collection); with the collector off before, it stays off. What was
    frozen before stays so: the thaw thawed it too (an app's objects, frozen before a fork; on
    Python 3.12 the few hundred the interpreter starts with, where this test failed)."""
    import gc
    import weakref

    vault, store = indexed

    class Node:
        pass

    a, b = Node(), Node()
    a.other, b.other = b, a  # a cycle: only the collector frees it
    alive = weakref.ref(a)
    del a, b
    assert gc.isenabled()
    frozen = gc.get_freeze_count()  # 0, or Python 3.12's own
    changes.plan(vault, store)
    assert gc.isenabled() and gc.get_freeze_count() == frozen
    gc.collect()
    assert alive() is None
    gc.disable()
    try:
        changes.plan(vault, store)
        assert not gc.isenabled() and gc.get_freeze_count() == frozen
    finally:
        gc.enable()
    kept = [[n] for n in range(100)]
    gc.freeze()  # as an app does before it forks
    try:
        before = gc.get_freeze_count()
        assert before >= frozen + len(kept)
        changes.plan(vault, store)
        assert gc.isenabled() and gc.get_freeze_count() == before
    finally:
        gc.unfreeze()


@pytest.mark.parametrize(
    "steps, gone",
    [
        (["edit"], []),
        (["add"], []),
        (["edit", "add"], []),
        (["delete"], ["B.md"]),
        (["delete", "add"], ["B.md"]),  # as many notes as before, one of them new
        (["rename"], ["C.md"]),
        (["delete", "rename", "add", "edit"], ["B.md", "C.md"]),
    ],
)
def test_the_plan_finds_exactly_the_notes_whose_file_is_gone(tmp_path, steps, gone):
    """Deleted notes are looked for only when fewer indexed notes were found than the index
    holds; counted right whatever else changed alongside (a new note where one went)."""
    for name in ("A", "B", "C", "D"):
        write(tmp_path, f"{name}.md", f"# {name}\n\nabout {name}\n")
    _index(tmp_path)
    actions = {
        "edit": lambda: write(tmp_path, "A.md", "# A\n\nother words entirely\n"),
        "add": lambda: write(tmp_path, "E.md", "# E\n\nnew\n"),
        "delete": lambda: (tmp_path / "B.md").unlink(),
        "rename": lambda: (tmp_path / "C.md").rename(tmp_path / "C moved.md"),
    }
    for step in steps:
        actions[step]()
    store = open_store(tmp_path)
    try:
        plan = changes.plan(tmp_path, store)
        assert sorted(plan.deleted) == gone
        assert plan.pending == len(plan.candidates) + len(gone)
    finally:
        store.close()


def _folders_vault(root: Path) -> None:
    for folder in ("", "a/", "a/b/", "Заметки/", "deep/er/still/"):
        for i in range(3):
            write(root, f"{folder}n{i} é.md", f"# {folder} {i}\n\ntext {i}\n")


@pytest.mark.parametrize(
    "stats",
    [
        {},
        {"one.md": (1, 2, 3)},
        {"a/x.md": (1, 10, -(2**63)), "x.md": (2, 0, 2**63 - 1), "a/b/y.md": (3, 5, 7), "a/z.md": (4, 1, 1)},
        {f"f{i % 13}/é {i}.md": (i, i * 3, i * 7) for i in range(500)},
    ],
    ids=["empty", "one", "nested", "many"],
)
def test_a_blob_grouped_by_folder_gives_back_every_note(stats):
    blob = scan_snapshot.encode(stats)
    assert scan_snapshot.decode(blob) == stats
    lazy = scan_snapshot.notes(scan_snapshot.Snapshot(blob, [], []))
    assert lazy is not None and len(lazy) == len(stats) and dict(lazy.items()) == stats
    for path, row in stats.items():
        assert lazy.get(path) == row and lazy[path] == row
    assert lazy.get("nowhere/x.md") is None and not lazy.damaged


def test_each_folder_is_decoded_only_when_one_of_its_notes_is_asked_for():
    stats = {
        f"{folder}n{i}.md": (k * 10 + i, i, i) for k, folder in enumerate(["", "a/", "a/b/", "c/"]) for i in range(3)
    }
    # The log: a note of a/ renamed into c/, one of c/ deleted, a new one in a new folder.
    logged = [(10, "a/n0.md"), (10, None), (31, "c/n1.md"), (99, None)]
    current = [("c/moved.md", 10, 0, 0), ("new/n.md", 99, 1, 1)]
    lazy = scan_snapshot.notes(scan_snapshot.Snapshot(scan_snapshot.encode(stats), logged, current))
    assert lazy is not None
    expected = {k: v for k, v in stats.items() if k not in ("a/n0.md", "c/n1.md")}
    expected |= {"c/moved.md": (10, 0, 0), "new/n.md": (99, 1, 1)}
    assert len(lazy) == len(expected)
    decoded = set(lazy._decoded)
    assert decoded <= {"a/", "c/", "new/"}  # only the folders the log touched, to count them
    assert lazy.get("a/b/n2.md") == (22, 2, 2)
    assert set(lazy._decoded) == decoded | {"a/b/"}
    assert lazy.get("a/n0.md") is None and lazy.get("c/moved.md") == (10, 0, 0)
    assert lazy.as_dict() == expected and lazy == expected


def _damage(blob: bytes, path: str) -> bytes:
    """The first byte of one note's path made not UTF-8, the layout left as it was."""
    at = blob.index(path.encode())
    return blob[:at] + b"\xff" + blob[at + 1 :]


def test_a_folder_found_damaged_mid_walk_hides_no_change(indexed, caplog):
    """The layout reads, but one folder's bytes are damaged: that folder's notes are taken for
    changed, never unchanged; the plan compares them with the rows instead, the deleted note
    there is found, and a good snapshot is stored for the next run."""
    vault, store = indexed
    _folders_vault(vault)
    _index(vault)
    (vault / "a" / "b" / "n1 é.md").write_text("# changed\n\nother\n", encoding="utf-8")
    (vault / "a" / "b" / "n2 é.md").unlink()
    store.conn.execute("DELETE FROM scan_snapshot")
    good = _plan_summary(vault, store)
    blob = _blob(store)
    with store.transaction():
        store.conn.execute("UPDATE scan_snapshot SET data = ?", (_damage(blob, "a/b/n0 é.md"),))
    lazy = scan_snapshot.notes(scan_snapshot.Snapshot(_blob(store), [], []))
    assert lazy is not None and lazy.get("a/b/n0 é.md") is None and lazy.damaged
    assert scan_snapshot.decode(_blob(store)) is None
    with caplog.at_level(logging.WARNING, logger="brain"):
        unchanged, candidates, deleted = _plan_summary(vault, store)
    assert "scan snapshot was damaged" in caplog.text
    assert deleted == good[2] and [path for path, _ in deleted] == ["a/b/n2 é.md"]
    assert set(candidates) >= set(good[1]) and {p for p, _ in candidates} - {p for p, _ in good[1]} == {"a/b/n0 é.md"}
    assert set(unchanged) == set(good[0]) - {"a/b/n0 é.md"}
    assert scan_snapshot.decode(_blob(store)) == _rows(store)  # stored again, whole
    assert _plan_summary(vault, store) == good


def test_a_snapshot_of_the_format_before_folders_is_read_from_the_rows_and_replaced(indexed):
    _vault, store = indexed
    rows = _rows(store)
    columns = [b"".join(struct.pack("<q", row[i]) for row in rows.values()) for i in range(3)]
    old = b"BRAINSS1" + struct.pack("<q", len(rows)) + b"".join(columns) + "\0".join(rows).encode()
    with store.transaction():
        store.conn.execute("INSERT OR REPLACE INTO scan_snapshot (id, data) VALUES (1, ?)", (old,))
    assert store.note_stats() == rows
    assert _blob(store).startswith(b"BRAINSS2") and scan_snapshot.decode(_blob(store)) == rows


@pytest.mark.skipif(os.name == "nt", reason="the helper's folders")
def test_the_walk_decodes_only_the_folders_it_walks_itself(indexed, monkeypatch):
    """With the helper comparing every folder it is given, the walk decodes none of those."""
    from brain import vault as vault_module
    from brain.vault import load_ignore, walk
    from brain.walk_helper import WalkHelper

    vault, store = indexed
    _folders_vault(vault)
    _index(vault)
    monkeypatch.setattr(vault_module, "HELPER_HEAD", -(10**9))  # every folder to the helper
    monkeypatch.setattr(vault_module, "HELPER_MIN_FOLDER", 0)
    store.conn.execute("DELETE FROM scan_snapshot")
    store.note_stats()  # stored again: no log to count
    stats, snapshot = store.note_stats_and_snapshot()
    assert isinstance(stats, scan_snapshot.FolderStats) and snapshot is not None and not stats._decoded
    ignore = load_ignore(vault)
    with WalkHelper.start(os.path.realpath(vault), ignore.spec) as helper:
        helper.compare_with(snapshot)
        helper._sending.join()  # type: ignore[union-attr]
        found = walk(vault, ignore, known=stats, helper=helper)
        assert len(helper.given) >= 6
    assert stats._decoded == {}  # the helper compared them all
    assert found.notes == [] and sorted(found.unchanged) == sorted(_rows(store))


def test_a_first_build_past_the_logs_length_leaves_a_snapshot_for_the_next_run(tmp_path):
    """A first build logs each note it adds into the snapshot its plan stored (empty), and past
    2,000 rows the log drops it: the build stores one at its end, so the next update check
    reads the snapshot, not every row (0.5 s at 100,000 notes, the first `brain ask` after)."""
    for i in range(2100):
        write(tmp_path, f"f{i % 10}/n{i}.md", f"# N {i}\n")
    _index(tmp_path)
    store = open_store(tmp_path)
    try:
        assert _stored(store)
        assert store.conn.execute("SELECT count(*) FROM scan_snapshot_log").fetchone()[0] == 0
        assert scan_snapshot.decode(_blob(store)) == _rows(store)
    finally:
        store.close()


def test_no_damage_to_a_blob_raises(tmp_path):
    """Bytes flipped, cut, inserted or zeroed anywhere in a blob: reading it gives a snapshot,
    None, or folders that read as damaged, never an exception (it is read on every update
    check, and by the walk's helper process)."""
    import random

    stats = {f"{'sub/' * (i % 3)}f{i % 7}/é {i}.md": (i, i * 3 + 1, -i * 7) for i in range(200)}
    blob = scan_snapshot.encode(stats)
    rng = random.Random(37)
    for attempt in range(600):
        data = bytearray(blob)
        kind = attempt % 4
        at = rng.randrange(len(data))
        if kind == 0:
            data[at] ^= 1 << rng.randrange(8)
        elif kind == 1:
            del data[at:]
        elif kind == 2:
            data[at:at] = bytes(rng.randrange(256) for _ in range(rng.randrange(1, 9)))
        else:
            data[at : at + 8] = bytes(8)
        damaged = bytes(data)
        whole = scan_snapshot.decode(damaged)
        assert whole is None or isinstance(whole, dict)
        lazy = scan_snapshot.notes(scan_snapshot.Snapshot(damaged, [(3, "f3/é 3.md")], [("new/x.md", 999, 1, 2)]))
        if lazy is None:
            continue
        for path in stats:
            row = lazy.get(path)
            assert row is None or (isinstance(row, tuple) and len(row) == 3)
        assert lazy.get("new/x.md") == (999, 1, 2)
        len(lazy)
        lazy.as_dict()
