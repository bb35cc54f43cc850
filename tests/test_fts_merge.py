"""FTS5's merges in the background (``brain/index/fts_merge.py``): the structure read right,
every merge finished in steps that never starve a save, started by a pass only when the levels
call for it, one at a time, its failures reported, `kill -9` of it harmless."""

from __future__ import annotations

import logging
import os
import random
import signal
import sqlite3
import sys
import threading
import time
from pathlib import Path

import pytest
from conftest import write
from index_helpers import CheapEmbedder, environ, index_into

from brain.child_process import python_module_command
from brain.index import background, fts_merge, indexer
from brain.index.files import INDEX_FILE
from brain.index.store import IndexStore

WORDS = "amber basil cedar delta ember fjord garnet harbor island jasper".split()
QUERIES = ["amber", "basil cedar", "fjord OR harbor", "edit7", "jasper island"]


@pytest.fixture
def index(tmp_path) -> tuple[Path, Path, Path]:
    """An index whose FTS5 data spans ~100 pages: a merge of it takes many small steps."""
    vault, home = tmp_path / "vault", tmp_path / "home"
    rng = random.Random(5)
    for i in range(300):
        words = " ".join(rng.choice(WORDS) if k % 5 == 0 else f"w{rng.randrange(4000)}" for k in range(120))
        write(vault, f"d{i % 3}/note {i}.md", f"# note {i}\n\n{words}\n\n## part\n\n{words[::-1]} {i}\n")
    _, directory = index_into(home, vault, CheapEmbedder())
    return vault, home, directory


def _no_automerge(directory: Path) -> None:
    """FTS5 merging nothing by itself: each write's segment stays on level 0."""
    store = IndexStore.open(directory)
    try:
        with store.transaction():
            store.conn.execute("INSERT INTO chunks_fts (chunks_fts, rank) VALUES ('automerge', 0)")
            store.conn.execute("INSERT INTO chunks_fts (chunks_fts, rank) VALUES ('crisismerge', 1000)")
    finally:
        store.close()


def _levels(directory: Path) -> list[tuple[int, list[int]]]:
    store = IndexStore.open_snapshot(directory)
    try:
        return store.fts_levels()
    finally:
        store.close()


def _edits(vault: Path, home: Path, count: int, start: int = 0) -> None:
    """``count`` passes, each after one note's words changed (the merger not started)."""
    for i in range(start, start + count):
        path = vault / f"d{i % 3}/note {i}.md"
        path.write_text(path.read_text(encoding="utf-8") + f"\nedit{i} amber\n", encoding="utf-8")
        index_into(home, vault, CheapEmbedder())


def _segments_to_merge(vault: Path, home: Path, directory: Path, monkeypatch, passes: int) -> None:
    """Level 0 left with the segments of ``passes`` passes (no pass starting the merger), then
    the merger's thresholds low enough for it to be wanted."""
    monkeypatch.setattr(fts_merge, "MIN_PAGES", 0)
    monkeypatch.setattr(fts_merge, "START_AT", 10**6)
    _no_automerge(directory)
    _edits(vault, home, passes)
    monkeypatch.setattr(fts_merge, "START_AT", 8)


def _answers(directory: Path) -> list[list[tuple[int, float]]]:
    store = IndexStore.open_snapshot(directory)
    try:
        return [
            store.conn.execute(
                "SELECT rowid, bm25(chunks_fts) FROM chunks_fts WHERE chunks_fts MATCH ? ORDER BY rank, rowid", (q,)
            ).fetchall()
            for q in QUERIES
        ]
    finally:
        store.close()


def _stored(directory: Path) -> tuple[int, int]:
    """(segments, leaf pages) as FTS5's data table holds them: a leaf's rowid is its segment id
    << 37 plus its page number; bit 36 marks a doclist-index page, not a leaf."""
    store = IndexStore.open_snapshot(directory)
    try:
        row = store.conn.execute(
            "SELECT count(DISTINCT id >> 37), count(*) FROM chunks_fts_data WHERE id >= (1 << 37) AND (id >> 36) & 1 = 0"
        ).fetchone()
        return int(row[0]), int(row[1])
    finally:
        store.close()


def _read(levels: list[tuple[int, list[int]]]) -> tuple[int, int]:
    return sum(len(level) for _, level in levels), sum(sum(level) for _, level in levels)


def test_the_levels_read_are_fts5s(index, monkeypatch):
    """The segments and pages read from the structure record are those FTS5's data table
    holds; with FTS5 merging nothing by itself, each pass adds segments to level 0 only; an
    `optimize` leaves one segment."""
    vault, home, directory = index
    monkeypatch.setattr(fts_merge, "START_AT", 10**6)  # the merger never started here
    _no_automerge(directory)
    before = _levels(directory)
    assert before and all(merging == 0 for merging, _ in before)
    assert _read(before) == _stored(directory)
    previous = before
    for n in range(1, 6):
        _edits(vault, home, 1, start=n)
        now = _levels(directory)
        assert _read(now) == _stored(directory)
        assert len(now[0][1]) > len(previous[0][1])
        assert [level for _, level in now[1:]] == [level for _, level in previous[1:]]
        previous = now
    store = IndexStore.open(directory)
    try:
        with store.transaction():
            store.conn.execute("INSERT INTO chunks_fts (chunks_fts) VALUES ('optimize')")
        after = store.fts_levels()
    finally:
        store.close()
    assert _read(after) == _stored(directory)
    assert _read(after)[0] == 1


def test_merging_in_steps_finishes_every_merge_and_changes_no_answer(index, monkeypatch):
    vault, home, directory = index
    monkeypatch.setattr(fts_merge, "START_AT", 10**6)
    _no_automerge(directory)
    _edits(vault, home, 12)
    levels = _levels(directory)
    assert len(levels[0][1]) >= 12
    monkeypatch.setattr(fts_merge, "START_AT", 8)
    monkeypatch.setattr(fts_merge, "MIN_PAGES", 0)
    assert fts_merge.wanted(levels)
    answers = _answers(directory)
    store = IndexStore.open(directory)
    try:
        steps = fts_merge.merge_all(store, step_pages=8, pause_s=0)  # many small steps
        assert steps > 5
        merged = store.fts_levels()
        store.conn.execute("INSERT INTO chunks_fts (chunks_fts, rank) VALUES ('integrity-check', 1)")
    finally:
        store.close()
    assert all(merging == 0 and len(level) < 4 for merging, level in merged)
    assert not fts_merge.wanted(merged)
    assert _answers(directory) == answers


def test_a_pass_starts_the_merger_in_the_background_when_the_levels_call_for_it(index, monkeypatch):
    """A pass that leaves a level of START_AT segments starts the merger (in the background, as
    ``background`` starts the postings' builds), which finishes every merge; one that leaves
    fewer starts none."""
    vault, home, directory = index
    started: list[object] = []
    real_start = background.start

    def start(work, folder):
        process = real_start(work, folder)
        started.append((work.name, process))
        return process

    monkeypatch.setattr(background, "start", start)
    monkeypatch.setattr(fts_merge, "MIN_PAGES", 0)
    _no_automerge(directory)
    _edits(vault, home, 3)  # two segments a pass: the delete, the insert
    assert started == [] and len(_levels(directory)[0][1]) == 7  # level 0 below START_AT
    _edits(vault, home, 1, start=3)
    assert [name for name, _ in started] == ["fts-merge"]
    background.wait_for_all(60)
    assert all(merging == 0 and len(level) < 4 for merging, level in _levels(directory))


def test_a_writer_is_never_starved_by_the_merger(index):
    """Between its steps the merger pauses longer than SQLite's longest sleep waiting for a
    lock: a save waiting meanwhile gets its turn after at most one step, not after the whole
    merge. Without the pause, the same writer waits for every step."""
    _, _, directory = index
    steps = 25

    def waits(pause_s: float) -> float:
        begun = threading.Event()  # the merger holds the write lock in its first step

        def merge() -> None:
            merger = IndexStore.open(directory)
            count = 0

            def step(pages: int) -> bool:  # a slow step holding the write lock
                nonlocal count
                with merger.transaction():
                    merger.conn.execute("UPDATE meta SET value = value WHERE key = 'index_id'")
                    begun.set()
                    time.sleep(0.15)
                count += 1
                return count < steps

            merger.fts_merge_step = step  # type: ignore[method-assign]
            try:
                fts_merge.merge_all(merger, pause_s=pause_s)
            finally:
                merger.close()

        thread = threading.Thread(target=merge)
        writer = sqlite3.connect(directory / INDEX_FILE, timeout=30, isolation_level=None)
        longest = 0.0
        try:
            thread.start()
            assert begun.wait(60), "the merger did not begin"
            for _ in range(5):
                began = time.monotonic()
                writer.execute("BEGIN IMMEDIATE")
                longest = max(longest, time.monotonic() - began)
                writer.execute("COMMIT")
                time.sleep(0.05)
        finally:
            thread.join()
            writer.close()
        return longest

    assert waits(fts_merge.PAUSE_S) < 1.0
    assert waits(0.0) > 1.0


def test_the_merger_stops_when_a_rebuild_swaps_another_index_in(index, monkeypatch):
    _, _, directory = index
    store = IndexStore.open(directory)
    inodes = iter([1, 1, 1, 2])
    monkeypatch.setattr(store, "database_inode", lambda: next(inodes))
    monkeypatch.setattr(store, "fts_merge_step", lambda pages: True)
    try:
        assert fts_merge.merge_all(store, pause_s=0) == 2
    finally:
        store.close()


def test_one_merger_at_a_time_and_its_failure_is_reported(index, monkeypatch, caplog):
    vault, home, directory = index
    _segments_to_merge(vault, home, directory, monkeypatch, passes=8)
    store = IndexStore.open(directory)
    try:
        with background.held(directory, fts_merge.MERGE.name, wait=False) as held:
            assert held
            with caplog.at_level(logging.INFO, logger="brain"):
                fts_merge.start_if_wanted(store)
            assert "merging FTS5's segments: already under way in another process" in caplog.text
            assert background._started == []
        failing = "raise RuntimeError('no room for the merge')"
        monkeypatch.setattr(
            background,
            "python_module_command",
            lambda module: [
                sys.executable,
                "-c",
                "import sys; from brain.index import background, fts_merge\n"
                "def body(directory):\n"
                f"    {failing}\n"
                "sys.exit(background.main(fts_merge.MERGE, body, sys.argv))",
            ],
        )
        fts_merge.start_if_wanted(store)
        background.wait_for_all(60)
        assert background.failure_file(directory, "fts-merge").exists()
        monkeypatch.setattr(background, "python_module_command", python_module_command)
        with caplog.at_level(logging.WARNING):
            fts_merge.start_if_wanted(store)
        background.wait_for_all(60)
    finally:
        store.close()
    assert (
        "merging FTS5's segments failed in the background (RuntimeError: no room for the merge): FTS5 merges"
        " inside saves until a later pass" in caplog.text
    )
    assert not background.failure_file(directory, "fts-merge").exists()
    assert all(merging == 0 and len(level) < 4 for merging, level in _levels(directory))


@pytest.mark.skipif(not Path("/proc/locks").exists(), reason="elsewhere the lock is taken for a moment to look")
@pytest.mark.parametrize("linked", [False, True], ids=["file", "symlinked lock file"])
def test_a_look_at_whether_the_work_is_under_way_turns_no_worker_away(tmp_path, monkeypatch, linked):
    """``busy`` (`brain status`, a pass deciding whether to start the merger) took the work's lock
    for a moment to see whether a worker held it: a worker starting in that moment found it held
    and left, its work undone until a later pass. The look takes no lock; a worker at work is
    still seen. A lock file that is a symlink (an index folder put together by hand) is the
    worker's lock too (it follows the link), so the look reads it through the link as well."""
    import fcntl

    directory = tmp_path / "index"
    directory.mkdir()
    name = fts_merge.MERGE.name
    if linked:
        (tmp_path / "elsewhere").write_bytes(b"")
        background.lock_file(directory, name).symlink_to(tmp_path / "elsewhere")
    with background.held(directory, name, wait=True) as mine:
        assert mine and background.busy(directory, name)
    assert not background.busy(directory, name)
    monkeypatch.setattr(os, "nice", lambda increment: 0)  # the worker's, run here: not this process's
    real = fcntl.flock
    turned_away: list[str] = []

    def flock(fd, operation):
        real(fd, operation)
        if not turned_away and operation & fcntl.LOCK_EX and operation & fcntl.LOCK_NB:  # the look holds it
            done: list[Path] = []
            assert background.main(fts_merge.MERGE, done.append, ["worker", str(directory)]) == 0
            if not done:
                turned_away.append("a worker starting while busy() looked")

    monkeypatch.setattr(fcntl, "flock", flock)
    assert not background.busy(directory, name)
    assert turned_away == []


@pytest.mark.skipif(not hasattr(signal, "SIGKILL"), reason="kill -9")
def test_kill_9_of_the_merger_mid_merge_leaves_fts5_whole(index, monkeypatch):
    """`kill -9` of the merger between or inside its steps: each is one transaction, so FTS5 is
    whole (its integrity check passes), answers as before, and the next merger finishes."""
    vault, home, directory = index
    _segments_to_merge(vault, home, directory, monkeypatch, passes=14)
    answers = _answers(directory)
    slow = (
        "import sys\nfrom brain.index import background, fts_merge\n"
        "fts_merge.STEP_PAGES = 1\n"
        "import brain.index.fts_merge_child as child\n"
        "sys.exit(background.main(fts_merge.MERGE, child._merge, sys.argv))"
    )
    monkeypatch.setattr(background, "python_module_command", lambda module: [sys.executable, "-c", slow])
    store = IndexStore.open(directory)
    try:
        fts_merge.start_if_wanted(store)
        process = background._started[-1]
        deadline = time.monotonic() + 60
        while _levels(directory)[0][0] == 0 and process.poll() is None and time.monotonic() < deadline:
            time.sleep(0.01)
        assert _levels(directory)[0][0] > 0  # a merge under way
        os.killpg(process.pid, signal.SIGKILL)
        background.wait_for_all(60)
        assert not background.busy(directory, "fts-merge")
        store.conn.execute("INSERT INTO chunks_fts (chunks_fts, rank) VALUES ('integrity-check', 1)")
        assert _answers(directory) == answers
        assert store.fts_levels()[0][0] > 0  # still under way: the next merger finishes it
        monkeypatch.setattr(background, "python_module_command", python_module_command)
        fts_merge.merge_all(store, pause_s=0)
    finally:
        store.close()
    assert all(merging == 0 and len(level) < 4 for merging, level in _levels(directory))
    assert _answers(directory) == answers


def test_indexes_too_small_to_matter_start_no_merger(index):
    """The default threshold: a level of START_AT small segments is merged quickly by FTS5
    itself, so the merger (a process) is not started for it."""
    vault, home, directory = index
    _no_automerge(directory)
    _edits(vault, home, 10)
    levels = _levels(directory)
    assert len(levels[0][1]) >= fts_merge.START_AT
    assert not fts_merge.wanted(levels)
    assert background._started == []


def test_a_pass_whose_merger_cannot_start_still_succeeds(index, monkeypatch, caplog):
    vault, home, _ = index

    def cannot(store):
        raise OSError("no more processes")

    monkeypatch.setattr(fts_merge, "start_if_wanted", cannot)
    path = vault / "d0/note 0.md"
    path.write_text(path.read_text(encoding="utf-8") + "\nmore\n", encoding="utf-8")
    with caplog.at_level(logging.WARNING), environ(BRAIN_HOME=str(home)):
        report = indexer.index_vault(vault, embedder=CheapEmbedder(), progress=False)
    assert report.changed == 1
    assert "FTS5's merges not started in the background (no more processes)" in caplog.text
