"""Pathological vault content costs in step with itself, not with the whole vault at once
(bench/pathological.py measures the full-size cases)."""

from __future__ import annotations

import os
import sys
import tracemalloc
from pathlib import Path

from conftest import FakeEmbedder, write
from index_helpers import environ, index_into

from brain.index import indexer, linking
from brain.index.indexer import index_vault
from brain.index.linking import resolve_links
from brain.index.store import IndexStore


def _complete_graph(root: Path, notes: int) -> None:
    names = [f"k{i:03d}" for i in range(notes)]
    for name in names:
        write(root, f"{name}.md", f"# {name}\n\n" + " ".join(f"[[{other}]]" for other in names if other != name))


def _resolution_peak(tmp_path: Path, notes: int) -> int:
    """Bytes traced at the peak of a full resolution of a vault whose notes all link each other."""
    root = tmp_path / f"vault-{notes}"
    _complete_graph(root, notes)
    _, directory = index_into(tmp_path / f"home-{notes}", root)
    store = IndexStore.open(directory)
    try:
        assert store.conn.execute("SELECT count(*) FROM links WHERE status = 'resolved'").fetchone()[0] == notes * (
            notes - 1
        )
        tracemalloc.start()
        try:
            resolve_links(store, full=True)
            return tracemalloc.get_traced_memory()[1]
        finally:
            tracemalloc.stop()
    finally:
        store.close()


def test_resolving_links_holds_a_part_of_them_not_all_of_the_vaults(tmp_path, monkeypatch):
    """Every link of the vault (as written, resolved, and its open edge) was read into memory at
    once: 2,000 notes linking each other (4M links) took `brain index` to 4 GB. Four times the
    links now cost about the memory of one part (the notes' names grow, not the links')."""
    monkeypatch.setattr(linking, "RESOLVE_PART", 300, raising=False)
    small = _resolution_peak(tmp_path, 40)  # 1,560 links
    large = _resolution_peak(tmp_path, 80)  # 6,320 links
    assert large < 1.8 * small, (small, large)


def test_a_note_of_more_chunks_than_a_batch_shows_its_embedding(tmp_path, monkeypatch):
    """The bar counts notes, moved after each batch is embedded: a note of 10 MB (11,600 chunks of
    prose, minutes of a real model's time) held it still, nothing said. A batch of more chunks
    than one holds asks the embedder for its own bar; a batch of the usual size does not."""
    asked: list[tuple[int, bool]] = []

    class Recording(FakeEmbedder):
        def embed_documents(self, texts, *, progress: bool = False):
            asked.append((len(texts), progress))
            return super().embed_documents(texts, progress=progress)

    monkeypatch.setattr(indexer, "CHUNKS_PER_BATCH", 8)
    monkeypatch.setattr(sys.stderr, "isatty", lambda: True)
    root = tmp_path / "vault"
    write(root, "big.md", "\n\n".join(f"## Part {i}\n\n" + "words " * 300 for i in range(20)))
    write(root, "small.md", "# Small\n\nA short note.")
    with environ(BRAIN_HOME=str(tmp_path / "home")):
        index_vault(root, embedder=Recording(), progress=True)
    assert [progress for chunks, progress in sorted(asked)] == [False, True] and max(asked)[0] > 8

    asked.clear()
    write(root, "big.md", "# Big\n\nsmall now")
    with environ(BRAIN_HOME=str(tmp_path / "home")):
        index_vault(root, embedder=Recording(), progress=False)  # --quiet, --json: no bar
    assert asked == [(1, False)]


def test_a_folder_too_deep_for_the_system_to_open_is_named_in_a_warning(tmp_path):
    """A folder whose path is over the system's limit (4,096 bytes on Linux: 200 folders of 24
    letters) cannot be listed: its notes were skipped as a read error that `brain index` only
    counted ("1 files skipped"), naming neither the folder nor why."""
    root = tmp_path / "vault"
    write(root, "top.md", "# Top")
    folder = os.open(root, os.O_RDONLY | os.O_DIRECTORY)
    try:
        for level in range(200):  # made a level at a time: a path this long cannot be opened whole
            name = f"folder-level-{level:03d}-abcdef"
            os.mkdir(name, dir_fd=folder)
            inner = os.open(name, os.O_RDONLY | os.O_DIRECTORY, dir_fd=folder)
            os.close(folder)
            folder = inner
        note = os.open("deep.md", os.O_WRONLY | os.O_CREAT, 0o644, dir_fd=folder)
        os.write(note, b"# Deep\n\nwritten where no path reaches")
        os.close(note)
    finally:
        os.close(folder)
    report, _ = index_into(tmp_path / "home", root)
    assert report.new == 1 and report.skipped == 1
    warned = [w["message"] for w in report.warnings if w["path"].startswith("folder-level-000-abcdef/")]
    assert warned == ["skipped (read-error): File name too long"], report.warnings
