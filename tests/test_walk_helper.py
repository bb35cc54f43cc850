"""The walk's helper process (brain/walk_helper.py): it takes the notes of some folders, and
what the walk finds with it is what it finds alone, whatever the vault holds; a helper that
fails costs only time, and none is left running."""

from __future__ import annotations

import logging
import os
import sys
from pathlib import Path

import pytest
from conftest import FakeEmbedder, write
from index_helpers import open_store

from brain import vault as vault_module
from brain import walk_helper
from brain.index import changes
from brain.index.indexer import index_vault
from brain.vault import Walk, load_ignore, walk
from brain.walk_helper import WalkHelper


@pytest.fixture
def every_folder(monkeypatch):
    """The helper takes every folder, the root too."""
    monkeypatch.setattr(vault_module, "HELPER_HEAD", -(10**9))
    monkeypatch.setattr(vault_module, "HELPER_MIN_FOLDER", 0)


def _hostile_vault(root: Path) -> None:
    """Every kind of entry the walk has a rule for, spread over folders."""
    write(root, ".brainignore", "ignored.md\nprivate/\n/notes/secret/\n*.draft.md\n")
    for i in range(6):
        write(root, f"f{i}/note {i}.md", f"# Note {i}\n")
        write(root, f"f{i}/deep/inner {i}.MD", "upper-case extension")
        write(root, f"f{i}/.hidden {i}.md", "dot-file")
        write(root, f"f{i}/n{i}.sync-conflict-20260101-abc.md", "conflict copy")
        write(root, f"f{i}/plan {i}.draft.md", "ignored by a pattern")
        write(root, f"f{i}/readme.txt", "not a note")
    write(root, "ignored.md", "IGNORED")
    write(root, "private/p.md", "PRIVATE")
    write(root, ".trash/old.md", "deleted")
    write(root, "notes/secret/s.md", "SECRET")
    write(root, "notes/open.md", "kept")
    write(root, "real/n.md", "kept")
    (root / "folder.md").mkdir()  # a folder named like a note is walked as a folder
    write(root, "folder.md/inside.md", "kept")
    (root / "links").mkdir()
    os.symlink("../ignored.md", root / "links" / "to-ignored.md")
    os.symlink("../.trash", root / "links" / "trash-dir")
    os.symlink("../private", root / "links" / "private-dir")
    os.symlink("../notes", root / "links" / "notes-dir")
    os.symlink("../real/n.md", root / "links" / "alias.md")
    os.symlink("missing.md", root / "links" / "broken.md")
    os.symlink("loop-a.md", root / "links" / "loop-b.md")
    os.symlink("loop-b.md", root / "links" / "loop-a.md")
    os.symlink("..", root / "links" / "up")  # back to the root: a loop
    if hasattr(os, "mkfifo"):
        os.mkfifo(root / "links" / "pipe.md")
    if sys.platform.startswith("linux"):  # any bytes make a name there: these are not UTF-8
        with open(os.path.join(os.fsencode(root / "f0"), b"bad \xff name.md"), "w") as handle:
            handle.write("x")


def _same(alone: Walk, helped: Walk) -> None:
    assert helped.notes == alone.notes
    assert helped.skipped == alone.skipped
    assert sorted(helped.unchanged) == sorted(alone.unchanged)


@pytest.mark.skipif(os.name == "nt", reason="symlinks need privileges on Windows")
def test_a_walk_with_the_helper_finds_what_it_finds_alone(tmp_path, every_folder):
    _hostile_vault(tmp_path)
    ignore = load_ignore(tmp_path)
    notes = walk(tmp_path, ignore).notes
    # Known: some notes as they are, one by another size, one by another mtime, one gone.
    known = {f.path: (i, f.size, f.mtime_ns) for i, f in enumerate(notes)}
    known[notes[0].path] = (0, notes[0].size + 1, notes[0].mtime_ns)
    known[notes[1].path] = (1, notes[1].size, notes[1].mtime_ns - 1)
    del known[notes[2].path]
    known["gone.md"] = (99, 1, 1)
    alone = walk(tmp_path, ignore, known=known)
    with WalkHelper.start(os.path.realpath(tmp_path), ignore.spec) as helper:
        helped = walk(tmp_path, ignore, known=known, helper=helper)
        assert len(helper.given) >= 15  # every folder walked
    assert helper.process is not None and helper.process.returncode is not None  # stopped
    _same(alone, helped)
    assert len(alone.unchanged) == len(notes) - 3 and len(alone.notes) == 3
    reasons = {s.reason for s in alone.skipped}
    assert {"dot-file", "dot-folder", "sync-conflict", "brainignore", "broken-symlink", "symlink-loop"} <= reasons


@pytest.mark.parametrize(
    "command",
    [
        [sys.executable, "-c", "import sys; sys.exit(3)"],  # gone before the first folder
        [sys.executable, "-c", "import sys, pickle; sys.stdin.buffer.read(); pickle.dump(42, sys.stdout.buffer)"],
        [sys.executable, "-c", "import sys; sys.stdin.buffer.read(); sys.stdout.buffer.write(b'not a pickle')"],
        [str(Path(sys.executable).parent / "no-such-python")],  # cannot start at all
    ],
)
def test_a_helper_that_fails_costs_only_time(tmp_path, every_folder, monkeypatch, caplog, command):
    for i in range(5):
        write(tmp_path, f"f{i}/note {i}.md", f"# Note {i}\n")
    ignore = load_ignore(tmp_path)
    alone = walk(tmp_path, ignore, known={})
    monkeypatch.setattr(walk_helper, "COMMAND", command)
    with (
        caplog.at_level(logging.WARNING, logger="brain"),
        WalkHelper.start(os.path.realpath(tmp_path), ignore.spec) as helper,
    ):
        helped = walk(tmp_path, ignore, known={}, helper=helper)
    _same(alone, helped)
    assert len(helped.notes) == 5
    assert "walking its folders in this one" in caplog.text or "walking in this one" in caplog.text
    assert helper.process is None or helper.process.returncode is not None


def test_the_update_check_of_a_large_vault_takes_a_helper_and_plans_the_same(tmp_path, monkeypatch, every_folder):
    for i in range(8):
        for j in range(3):
            write(tmp_path, f"f{i}/note {i}-{j}.md", f"# Note {i} {j}\n\nlinks [[note {j}-{i}]]\n")
    index_vault(tmp_path, embedder=FakeEmbedder(), progress=False)
    write(tmp_path, "f1/note 1-0.md", "# Edited\n\nother words\n")  # changed
    write(tmp_path, "f2/new.md", "# New\n")  # new
    (tmp_path / "f3" / "note 3-1.md").unlink()  # deleted
    (tmp_path / "f4" / "note 4-2.md").rename(tmp_path / "f5" / "moved.md")  # renamed

    def summary() -> tuple:
        store = open_store(tmp_path)
        try:
            plan = changes.plan(tmp_path, store)
        finally:
            store.close()
        return (
            sorted(plan.unchanged),
            sorted((f, note_id) for f, note_id in plan.candidates),
            sorted(plan.deleted.items()),
        )

    monkeypatch.setattr(os, "getloadavg", lambda: (0.2, 0.2, 0.2))  # a CPU to spare
    alone = summary()
    started = []
    start = WalkHelper.start.__func__  # type: ignore[attr-defined]
    monkeypatch.setattr(WalkHelper, "start", classmethod(lambda cls, *a: started.append(1) or start(cls, *a)))
    monkeypatch.setattr(walk_helper, "HELPER_FROM", 1)
    assert summary() == alone
    assert started == [1]
    monkeypatch.setenv("BRAIN_WALK_WORKERS", "0")  # switched off: walked in this process only
    assert summary() == alone
    assert started == [1]
    monkeypatch.delenv("BRAIN_WALK_WORKERS")
    monkeypatch.setattr(os, "getloadavg", lambda: (float(os.cpu_count() or 1), 0.2, 0.2))  # every CPU busy
    assert summary() == alone
    assert started == [1]
    monkeypatch.setattr(os, "getloadavg", lambda: (0.2, 0.2, 0.2))
    assert summary() == alone
    assert started == [1, 1]
    assert len(alone[0]) == 24 - 3 and len(alone[1]) == 3 and len(alone[2]) == 2


def test_the_helpers_answer_goes_whole_through_a_stream_that_takes_part_of_each_write(tmp_path):
    """Under PYTHONUNBUFFERED the helper's stdout is a raw pipe end, whose write may take part
    of a large answer (stopped and continued as it waited for room): all of it is written."""
    import io
    import marshal
    import pickle

    class Trickle:
        def __init__(self) -> None:
            self.data = bytearray()

        def write(self, data) -> int:
            self.data += bytes(data[:1000])
            return min(len(data), 1000)

        def flush(self) -> None:
            pass

    for i in range(300):
        write(tmp_path, f"folder/a fairly long note name {i:04}.md", "x")
    given = io.BytesIO()
    pickle.dump((str(tmp_path), None), given)
    pickle.dump((str(tmp_path / "folder"), "folder/", None), given)
    given.seek(0)
    out = Trickle()
    walk_helper.serve(given, out)
    notes, skipped = marshal.loads(bytes(out.data))
    assert len(notes) == 300 and skipped == [] and len(out.data) > 10_000
