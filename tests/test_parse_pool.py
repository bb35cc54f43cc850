"""Parsing in a pool of worker processes gives the same index as parsing in the main process:
same notes, chunks, links and ids, through first builds and runs that mix every kind of
change. The pool is forced on a small vault here (it starts at PARALLEL_FROM notes)."""

from __future__ import annotations

import dataclasses
import os
import pickle
import sqlite3
import sys
from pathlib import Path

import pytest
from conftest import write
from index_helpers import history_problems, index_into

from brain.index import parsing
from brain.index.parsing import Parser
from brain.notes import Note


def _vault(root: Path, round_: int) -> None:
    """40 notes with links, frontmatter, an empty one, a binary one; each round changes some."""
    for i in range(40):
        if round_ and i % 9 == 0:
            (root / "n" / f"Note {i}.md").unlink(missing_ok=True)  # deleted in later rounds
            continue
        body = f"# Note {i}\n\nAbout topic {i % 5} and [[Note {(i + 1) % 40}]].\n\n## More\n\n" + "words " * (20 + i)
        if round_ and i % 4 == 0:
            body += f"\nchanged in round {round_}\n"
        write(root, f"n/Note {i}.md", f"---\ntags: [t{i % 3}]\naliases: [alias {i}]\n---\n{body}")
    write(root, "empty.md", "")
    (root / "binary.md").write_bytes(b"\x00\x01 not text")
    if round_:
        old, new = root / "n" / "Note 1.md", root / "moved" / "Note 1.md"
        if old.exists():
            new.parent.mkdir(exist_ok=True)
            old.rename(new)  # a rename
        os.utime(root / "n" / "Note 2.md", ns=(10**18, 10**18))  # same bytes, new mtime


def _dump(directory: Path) -> dict:
    conn = sqlite3.connect(directory / "index.db")
    try:
        query = {
            "notes": "SELECT id, path, title, aliases, tags, frontmatter, hash, warnings FROM notes ORDER BY id",
            "chunks": "SELECT id, note_id, ordinal, heading, text, vector FROM chunks ORDER BY id",
            "links": "SELECT id, source_id, target_id, target, kind, status FROM links ORDER BY id",
            "skipped": "SELECT path, reason FROM skipped ORDER BY path",
            # their bytes, compressed in the workers against the chunks the index holds
            "versions": "SELECT id, note_id, hash, content, recorded_to IS NULL FROM note_versions ORDER BY id",
        }
        return {name: conn.execute(sql).fetchall() for name, sql in query.items()}
    finally:
        conn.close()


@pytest.mark.slow  # worker processes
def test_a_pool_builds_the_same_index_as_one_process(tmp_path, monkeypatch):
    vault = tmp_path / "vault"
    monkeypatch.setattr(parsing, "PARALLEL_FROM", 0)
    monkeypatch.setattr(parsing, "NOTES_PER_TASK", 3)  # many tasks, some in flight at once
    seen = {"renamed": 0, "removed": 0, "changed": 0, "unchanged": 0}
    for round_ in range(3):
        _vault(vault, round_)
        monkeypatch.setenv("BRAIN_PARSE_WORKERS", "0")
        one, one_dir = index_into(tmp_path / "one", vault)
        monkeypatch.setenv("BRAIN_PARSE_WORKERS", "2")
        pool, pool_dir = index_into(tmp_path / "pool", vault)
        assert one.as_dict() | {"seconds": 0} == pool.as_dict() | {"seconds": 0}
        assert _dump(one_dir) == _dump(pool_dir)
        assert history_problems(pool_dir / "index.db") == []  # every version's text reads back
        for kind in seen:
            seen[kind] += getattr(pool, kind)
    assert all(seen.values()), seen  # every kind of change went through the pool


def test_results_come_back_in_order_with_the_items_that_need_no_parse(monkeypatch):
    monkeypatch.setattr(parsing, "NOTES_PER_TASK", 2)
    items = [
        (i, (f"n{i}.md", f"# N{i}\n\ntext {i}".encode(), 0.0, frozenset(), "heading") if i % 3 else None)
        for i in range(20)
    ]
    with Parser[int](expected=20, workers=0) as inline:
        want = [(k, p[0].title if p else None) for k, p in inline.parsed(items)]
    monkeypatch.setattr(parsing, "PARALLEL_FROM", 0)
    with Parser[int](expected=20, workers=2) as pooled:
        assert pooled.workers == 2
        got = [(k, p[0].title if p else None) for k, p in pooled.parsed(items)]
    assert got == want
    assert [k for k, _ in got] == list(range(20))
    assert want[1] == (1, "n1") and want[3] == (3, None)


RICH = (
    "---\ntitle: Rich\naliases: [R, Реч]\ntags: [a, b/c]\ndate: 2024-05-06\nextra: {k: [1, 2.5, null]}\n---\n"
    "# Rich\n\nSee [[Other#Part|shown]], ![[pic.png]], [md](Other.md), [[#Local]] and #inline.\n\n"
    "## Part\n\nёжик café \x00 text\n\n### Deeper\n\nmore [[Third]]\n"
)


def test_a_parse_comes_back_from_a_worker_whole_as_plain_data(monkeypatch):
    """A worker answers in plain tuples, not brain's dataclasses (unpickling those here held
    this process's GIL ~130 µs a note); rebuilt here, each parse equals the one made here,
    field by field, the note's body left out of both (its chunks hold it)."""
    monkeypatch.setattr(parsing, "PARALLEL_FROM", 0)
    texts = [RICH.encode(), b"", b"plain", "# Только\n\nкириллица [[Ссылка]]".encode(), b"\xff\xfe bad bytes"]
    items = [(i, (f"d/n{i}.md", data, 1.7e9, frozenset({"statblock"}), "heading")) for i, data in enumerate(texts)]
    with Parser[int](expected=len(items), workers=0) as inline:
        want = list(inline.parsed(items))
    with Parser[int](expected=len(items), workers=1) as pooled:
        got = list(pooled.parsed(items))
    assert got == want
    rich = want[0][1]
    assert rich is not None and rich[0].body == "" and len(rich[0].links) >= 4 and rich[0].warnings
    assert rich[1] and rich[1][0].text
    wire = pickle.dumps([parsing._to_wire(parsed) for _, parsed in want if parsed is not None])
    assert b"brain" not in wire  # no class of brain's, pickled by name
    # The wire carries each of these: a field added to Note must join it.
    assert [f.name for f in dataclasses.fields(Note)] == [
        "path",
        "title",
        "aliases",
        "tags",
        "date",
        "body",
        "frontmatter",
        "links",
        "content_hash",
        "warnings",
    ]


def test_a_small_run_starts_no_pool(monkeypatch):
    monkeypatch.setenv("BRAIN_PARSE_WORKERS", "4")
    with Parser[int](expected=parsing.PARALLEL_FROM - 1) as parser:
        assert parser.workers == 0
    with Parser[int](expected=parsing.PARALLEL_FROM, workers=0) as parser:
        assert parser.workers == 0


def test_a_worker_that_fails_costs_only_its_batch_which_is_parsed_here(monkeypatch, caplog):
    import logging

    # Earlier tests may have left the brain logger quiet (--quiet) or not propagating (serve).
    monkeypatch.setattr(logging.getLogger("brain"), "propagate", True)
    caplog.set_level(logging.WARNING, logger="brain")
    monkeypatch.setattr(parsing, "NOTES_PER_TASK", 2)
    monkeypatch.setattr(parsing, "PARALLEL_FROM", 0)
    monkeypatch.setattr(parsing, "WORKER", [sys.executable, "-c", "import sys; sys.stdin.buffer.read(3)"])
    items = [(i, (f"n{i}.md", f"# N{i}\n\ntext {i}".encode(), 0.0, frozenset(), "heading")) for i in range(9)]
    with Parser[int](expected=9, workers=2) as parser:
        got = [(k, p[0].title if p else None) for k, p in parser.parsed(items)]
    assert got == [(i, f"n{i}") for i in range(9)]
    assert any("parse worker failed" in r.getMessage() for r in caplog.records)


@pytest.mark.slow  # worker processes
def test_the_pool_parses_with_the_runs_chunking_and_link_fences(tmp_path, monkeypatch):
    """Workers are other processes: the run's BRAIN_CHUNKING and BRAIN_LINK_FENCES travel with
    each note, so the pool cuts and links exactly as the main process does."""
    vault = tmp_path / "vault"
    for i in range(12):
        sections = "".join(f"\n\n## Part {p}\n\n" + f"words of part {p} " * 60 for p in range(4))
        fence = f"\n\n```statblock\nname: Beast {i}\nsee: [[Note {(i + 1) % 12}]]\n```\n"
        write(vault, f"Note {i}.md", f"# Note {i}{sections}{fence}")
    monkeypatch.setattr(parsing, "PARALLEL_FROM", 0)
    monkeypatch.setattr(parsing, "NOTES_PER_TASK", 4)
    monkeypatch.setenv("BRAIN_CHUNKING", "short")
    monkeypatch.setenv("BRAIN_LINK_FENCES", "statblock")
    monkeypatch.setenv("BRAIN_PARSE_WORKERS", "0")
    _, one_dir = index_into(tmp_path / "one", vault)
    monkeypatch.setenv("BRAIN_PARSE_WORKERS", "2")
    pool, pool_dir = index_into(tmp_path / "pool", vault)
    assert _dump(one_dir) == _dump(pool_dir)
    assert pool.links["resolved"] == 12  # the links inside the statblock fences count
    monkeypatch.delenv("BRAIN_CHUNKING")
    monkeypatch.setenv("BRAIN_LINK_FENCES", "none")
    plain, _ = index_into(tmp_path / "plain", vault)
    assert plain.links["resolved"] == 0 and plain.chunks < pool.chunks  # the settings made a difference


@pytest.mark.slow  # a worker process
def test_parsing_runs_ahead_of_the_writes_within_its_bounds(monkeypatch):
    """While the indexer writes a batch, the workers parse the next: the parser reads TASKS_AHEAD
    tasks ahead of what it has handed out (4 tasks, 256 notes, left the worker idle through most
    of each write), and no more than BYTES_AHEAD of notes."""
    monkeypatch.setattr(parsing, "NOTES_PER_TASK", 4)
    note = ("# A note\n\nwords and [[a link]]\n" * 20).encode()
    pulled = 0

    def works(count: int):
        nonlocal pulled
        for i in range(count):
            pulled += 1
            yield i, (f"n{i}.md", note, 0.0, frozenset(), "heading")

    def read_ahead() -> int:
        nonlocal pulled
        pulled = 0
        with Parser[int](parsing.PARALLEL_FROM, workers=1) as parser:
            results = parser.parsed(works(2_000))
            key, parsed = next(results)
            assert key == 0 and parsed is not None and parsed[0].path == "n0.md"
            return pulled

    assert read_ahead() == parsing.TASKS_AHEAD * parsing.NOTES_PER_TASK
    assert parsing.TASKS_AHEAD >= 16  # a bulk batch's worth of notes: ~800
    monkeypatch.setattr(parsing, "BYTES_AHEAD", 10 * parsing.NOTES_PER_TASK * len(note))
    assert read_ahead() == 10 * parsing.NOTES_PER_TASK  # ten tasks' bytes, then it waits


class _Trickle:
    """A raw pipe end as a child's ``sys.stdout.buffer`` is under PYTHONUNBUFFERED: each write
    may take only part of what it is given (a stop and continue while it waited for room)."""

    def __init__(self) -> None:
        self.data = bytearray()

    def write(self, data) -> int:
        taken = bytes(data[:1000])
        self.data += taken
        return len(taken)

    def flush(self) -> None:
        pass


def test_an_answer_goes_whole_through_a_stream_that_takes_part_of_each_write():
    import io

    stream = _Trickle()
    answer = [("n.md", "word " * 5000, list(range(300)))]
    parsing._send(stream, answer)
    assert parsing._receive(io.BytesIO(bytes(stream.data))) == answer


@pytest.mark.skipif(not sys.platform.startswith("linux"), reason="reads how full the pipe is (FIONREAD)")
def test_a_worker_stopped_and_continued_while_it_answers_still_answers_whole(tmp_path):
    """Ctrl-Z then `fg` stops and continues the run's whole process group: a worker blocked
    writing a large answer into a full pipe had its write cut short, and under
    PYTHONUNBUFFERED (its stdout a raw file) the rest of the answer was lost and the run
    waited for it for ever. Here the worker is stopped and continued in that very state."""
    import array
    import fcntl
    import signal
    import subprocess
    import termios
    import threading
    import time

    from brain.config import DEFAULT_CHUNKING

    env = {**os.environ, "PYTHONUNBUFFERED": "1"}
    worker = subprocess.Popen(parsing.WORKER, stdin=subprocess.PIPE, stdout=subprocess.PIPE, env=env)
    try:
        assert worker.stdin is not None and worker.stdout is not None
        body = ("# Note\n\n" + "word " * 40_000 + "\n").encode()  # each answer ~400 KB: many pipefuls
        parsing._send(worker.stdin, [(f"n{i}.md", body, 0.0, frozenset(), DEFAULT_CHUNKING) for i in range(4)])
        waiting = array.array("i", [0])
        room = fcntl.fcntl(worker.stdout.fileno(), getattr(fcntl, "F_GETPIPE_SZ", 1032))  # 64 KB, or less
        deadline = time.monotonic() + 30
        while time.monotonic() < deadline:  # until the worker waits for room in a full pipe
            fcntl.ioctl(worker.stdout.fileno(), termios.FIONREAD, waiting)
            if waiting[0] >= room and Path(f"/proc/{worker.pid}/stat").read_text().split(") ")[1][0] == "S":
                break
            time.sleep(0.01)
        assert waiting[0] >= room
        os.kill(worker.pid, signal.SIGSTOP)
        time.sleep(0.1)
        os.kill(worker.pid, signal.SIGCONT)
        got: list[object] = []
        reader = threading.Thread(target=lambda: got.append(parsing._receive(worker.stdout)), daemon=True)
        reader.start()
        reader.join(30)
        assert not reader.is_alive(), "the answer never came whole"
        assert isinstance(got[0], list) and [wire[0][0] for wire in got[0]] == [f"n{i}.md" for i in range(4)]
    finally:
        worker.kill()
        worker.wait()
