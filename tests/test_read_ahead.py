"""Reading the changed notes ahead in a thread (``changes._reads``, from READ_AHEAD_FROM files):
the same changes, in the same order, as reading each in turn; and a reader stopped early stops
the reads."""

from __future__ import annotations

import os
import threading
from pathlib import Path

import pytest
from conftest import FakeEmbedder, write
from index_helpers import open_store

from brain.index import changes
from brain.index.indexer import index_vault
from brain.vault import VaultFile


def _changes(vault: Path) -> list[tuple]:
    store = open_store(vault)
    try:
        plan = changes.plan(vault, store, verify=True)
        out = [(c.kind, c.file.path, c.data, c.skip and c.skip.reason, c.old_path) for c in changes.read(plan, store)]
        return out + [("deleted", *sorted(plan.deleted)), ("skipped", *sorted(s.path for s in plan.skipped))]
    finally:
        store.close()


@pytest.fixture
def vault(tmp_path, monkeypatch):
    monkeypatch.setenv("BRAIN_MAX_NOTE_MB", "0.01")
    root = tmp_path / "vault"
    for i in range(30):
        write(root, f"d{i % 3}/n{i}.md", f"# n{i}\n\nwords {i} " * (1 + i % 4))
    index_vault(root, embedder=FakeEmbedder(), progress=False)
    # Every kind of change: new, changed, touched, renamed, binary, too large, unreadable, gone.
    write(root, "d0/new.md", "# new\n\nfresh")
    write(root, "d1/n4.md", "# n4\n\nchanged")
    os.utime(root / "d2/n5.md", ns=(10**18, 10**18))
    (root / "d0/n3.md").rename(root / "d2/moved.md")
    (root / "d1/binary.md").write_bytes(b"\x00\x01 not text")
    write(root, "d1/large.md", "x" * 20_000)
    write(root, "d2/locked.md", "# locked")
    (root / "d2/locked.md").chmod(0)
    (root / "d0/n6.md").unlink()
    yield root
    (root / "d2/locked.md").chmod(0o644)


def test_reading_ahead_finds_the_same_changes_in_the_same_order(vault, monkeypatch):
    one_by_one = _changes(vault)
    readers: set[str] = set()
    real = changes.read_note_bytes

    def read(file: VaultFile, limit: int):
        readers.add(threading.current_thread().name)
        return real(file, limit)

    monkeypatch.setattr(changes, "read_note_bytes", read)
    monkeypatch.setattr(changes, "READ_AHEAD_FROM", 0)
    monkeypatch.setattr(changes, "_BATCH_FILES", 2)
    ahead = _changes(vault)
    assert ahead == one_by_one
    kinds = {change[0] for change in ahead}
    assert {"new", "changed", "touched", "renamed", "skipped", "same"} <= kinds
    assert readers and all(name.startswith("brain-read") for name in readers)


def test_a_reader_stopped_early_stops_reading(tmp_path, monkeypatch):
    for i in range(100):
        write(tmp_path, f"n{i}.md", f"note {i}")
    files = [VaultFile(f"n{i}.md", str(tmp_path / f"n{i}.md"), len(f"note {i}"), 0) for i in range(100)]
    count = 0
    real = changes.read_note_bytes

    def read(file: VaultFile, limit: int):
        nonlocal count
        count += 1
        return real(file, limit)

    monkeypatch.setattr(changes, "read_note_bytes", read)
    monkeypatch.setattr(changes, "READ_AHEAD_FROM", 0)
    monkeypatch.setattr(changes, "_BATCH_FILES", 1)
    reads = changes._reads(files, 10**6)
    assert next(reads) == (b"note 0", None)
    reads.close()
    assert count <= 2 + changes._BATCHES_AHEAD  # the one read, those ahead, at most one under way
    assert [data for data, _ in changes._reads(files, 10**6)] == [f"note {i}".encode() for i in range(100)]
