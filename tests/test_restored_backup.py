"""An index.db restored from a backup beside the files the index it replaced derived.

The vector files are a cache stamped with the database's ``index_id`` and ``vectors_version``,
the names and link graph a `brain ask` keeps (recall-cache.npz) with its ``index_id`` and
``names_version``. A backup restored and then changed again must never reach a stamp those
files were saved at from other changes: they would be taken for its own (its new chunks
searched with the vectors of chunks it never had; the link graph of notes renamed otherwise).
"""

from __future__ import annotations

import os
import sqlite3

import numpy as np
from click.testing import CliRunner
from conftest import FakeEmbedder, write

from brain import config
from brain.cli import cli
from brain.index.files import INDEX_FILE, RECALL_CACHE_FILE
from brain.index.indexer import index_vault
from brain.index.store import IndexStore
from brain.index.vectors import _stored_vectors, load_current


def _index(vault):
    return index_vault(vault, embedder=FakeEmbedder(), progress=False)


def _backup(source, target) -> None:
    src, dst = sqlite3.connect(source), sqlite3.connect(target)
    with dst:
        src.backup(dst)
    src.close()
    dst.close()


def test_a_restored_backup_changed_again_never_takes_the_replaced_index_vectors(toy_vault, tmp_path):
    _index(toy_vault)
    directory = config.index_dir(toy_vault)
    saved = tmp_path / "backup.db"
    _backup(directory / INDEX_FILE, saved)
    one, other = toy_vault / "Engineering/SQLite WAL mode.md", "Aardvarks.md"
    kept, stat = one.read_bytes(), one.stat()

    one.write_text("# SQLite WAL mode\n\nnothing about databases any more: aardvarks dig at night.\n", encoding="utf-8")
    _index(toy_vault)  # the index moves on, and its vector files with it

    # The backup comes back (its WAL and shared memory files are of the other database) ...
    for name in (INDEX_FILE, INDEX_FILE + "-wal", INDEX_FILE + "-shm"):
        (directory / name).unlink(missing_ok=True)
    _backup(saved, directory / INDEX_FILE)
    one.write_bytes(kept)
    os.utime(one, ns=(stat.st_atime_ns, stat.st_mtime_ns))
    # ... and takes another change: as many batches as the replaced index took since.
    write(toy_vault, other, "# Aardvarks\n\nzebras graze at dawn, far from any database.\n")
    _index(toy_vault)

    store = IndexStore.open(directory, create=False)
    try:
        dim = int(store.get_meta("dim") or 0)
        vectors = load_current(store, dim)
        rows = store.conn.execute(
            "SELECT c.id FROM chunks c JOIN notes n ON n.id = c.note_id WHERE n.path = ?", (other,)
        ).fetchall()
        assert rows
        ids, stored = _stored_vectors(store, [row[0] for row in rows], dim)
        for chunk_id, vector in zip(ids, stored, strict=True):
            found, scores = vectors.search(np.asarray(vector, dtype=np.float32), 1)
            # Its own vector finds the chunk itself, with its own score.
            assert int(found[0]) == int(chunk_id)
            assert abs(float(scores[0]) - float(vector @ vector)) < 1e-3
    finally:
        store.close()


def _answers(vault) -> list[tuple[str, float]]:
    result = CliRunner().invoke(cli, ["ask", "--vault", str(vault), "--json", "--no-update", "sqlite wal"])
    assert result.exit_code == 0, result.output
    import json

    return [(r["path"], r["score"]) for r in json.loads(result.stdout)["results"]]


def test_a_restored_backup_renamed_otherwise_never_takes_the_replaced_index_link_graph(toy_vault, tmp_path):
    _index(toy_vault)
    directory = config.index_dir(toy_vault)
    saved = tmp_path / "backup.db"
    _backup(directory / INDEX_FILE, saved)
    one, other = toy_vault / "Engineering/SQLite WAL mode.md", toy_vault / "AI/Graph RAG.md"

    one.rename(one.with_name("WAL.md"))  # the links to it dangle
    _index(toy_vault)
    _answers(toy_vault)  # keeps the names and link graph of this state
    assert (directory / RECALL_CACHE_FILE).exists()

    for name in (INDEX_FILE, INDEX_FILE + "-wal", INDEX_FILE + "-shm"):
        (directory / name).unlink(missing_ok=True)
    _backup(saved, directory / INDEX_FILE)  # the backup comes back, and takes another rename
    one.with_name("WAL.md").rename(one)
    other.rename(other.with_name("GraphRAG.md"))
    _index(toy_vault)

    kept = _answers(toy_vault)
    (directory / RECALL_CACHE_FILE).unlink()
    assert kept == _answers(toy_vault)  # as built from this index's own links


def test_vectors_version_moves_once_a_transaction_and_at_every_change_outside_one(tmp_path):
    """A run writes many notes' chunks in one transaction: the version moves once for it (no
    reader sees the steps between), moves again at the next transaction, and at every change
    made outside one; a transaction rolled back leaves it where it was."""
    vault = tmp_path / "vault"
    for i in range(3):
        write(vault, f"n{i}.md", f"# n{i}\n\nwords {i}\n")
    _index(vault)
    store = IndexStore.open(config.index_dir(vault))
    try:
        vector = np.ones(int(store.get_meta("dim")), np.float32).tobytes()
        notes = [r[0] for r in store.conn.execute("SELECT id FROM notes ORDER BY id")]
        versions = [store.vectors_version()]
        writes: list[str] = []
        store.conn.set_trace_callback(
            lambda sql: writes.append(sql) if "vectors_version" in sql and "INSERT" in sql else None
        )
        with store.transaction():
            for note in notes:
                store.replace_chunks(note, [(0, "", f"words {note}", vector)])
        versions.append(store.vectors_version())
        assert len(writes) == 1 and versions[1] != versions[0]
        with store.transaction():
            store.replace_chunks(notes[0], [(0, "", "again", vector)])
        versions.append(store.vectors_version())
        assert len(writes) == 2 and versions[2] != versions[1]
        try:
            with store.transaction():
                store.replace_chunks(notes[1], [(0, "", "rolled back", vector)])
                raise KeyError("stop")
        except KeyError:
            pass
        assert store.vectors_version() == versions[2]
        for note in notes:  # outside a transaction: each statement its own, each a change
            store.replace_chunks(note, [(0, "", f"alone {note}", vector)])
            versions.append(store.vectors_version())
        assert len(set(versions)) == len(versions) == 6
    finally:
        store.close()
