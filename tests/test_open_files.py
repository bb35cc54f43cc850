"""Files left open: what brain opens, it closes, on its failure paths too.

A sqlite3 connection refers to its own statement cache and back (CPython's sqlite3 module), so
one dropped without ``close()`` is freed only when Python's cycle collector runs, which a long
process (`brain serve`, a test run of 3,600 tests) may put off until it holds hundreds of files
and meets its open-files limit. Each test here counts this process's open files with the
collector off: what a path leaves to it shows.
"""

from __future__ import annotations

import contextlib
import gc
import os
import sqlite3
from collections.abc import Iterator
from pathlib import Path

import pytest
from click.testing import CliRunner
from conftest import FakeEmbedder

from brain import config
from brain.cli import cli
from brain.index.indexer import index_vault
from brain.index.store import IndexStore
from brain.migrations import connect


def open_files() -> list[str]:
    """What this process holds open (the targets of /proc/self/fd), sorted."""
    targets = []
    for fd in os.listdir("/proc/self/fd"):
        with contextlib.suppress(OSError):  # the listing's own fd, gone already
            targets.append(os.readlink(f"/proc/self/fd/{fd}"))
    return sorted(targets)


@contextlib.contextmanager
def no_cycle_collector() -> Iterator[None]:
    """The cycle collector off (as it is, in effect, between its rare full runs): a connection
    only it would close stays open."""
    gc.collect()
    enabled = gc.isenabled()
    gc.disable()
    try:
        yield
    finally:
        if enabled:
            gc.enable()
        gc.collect()


def _not_a_database(path: Path) -> None:
    path.write_bytes(b"not SQLite at all, " * 512)
    for suffix in ("-wal", "-shm"):
        path.with_name(path.name + suffix).unlink(missing_ok=True)


@pytest.fixture
def indexed(toy_vault: Path) -> Path:
    index_vault(toy_vault, embedder=FakeEmbedder(), progress=False)
    return toy_vault


def test_a_connection_to_a_file_that_is_not_a_database_is_closed_as_it_fails(tmp_path):
    database = tmp_path / "x.db"
    _not_a_database(database)
    with no_cycle_collector():
        before = open_files()
        with pytest.raises(sqlite3.DatabaseError) as raised:
            connect(str(database))
        assert open_files() == before, raised.value  # not held by the traceback pytest keeps


def test_a_connection_to_a_locked_database_is_closed_as_it_fails(tmp_path):
    """Counted once the holder let go: SQLite keeps the fd of a connection closed while another
    in the same process holds a lock on the file (closing it would drop that lock) until then."""
    database = tmp_path / "x.db"
    with no_cycle_collector():
        before = open_files()
        holder = sqlite3.connect(database, isolation_level=None)
        try:
            holder.execute("PRAGMA locking_mode = EXCLUSIVE")
            holder.execute("BEGIN EXCLUSIVE")
            holder.execute("CREATE TABLE t (x)")
            with pytest.raises(sqlite3.OperationalError, match="locked"):
                connect(str(database), busy_timeout_ms=50)
        finally:
            holder.close()
        assert open_files() == before


def test_opening_a_damaged_index_leaves_no_file_open(indexed):
    _not_a_database(config.index_dir(indexed.resolve()) / "index.db")
    with no_cycle_collector():
        before = open_files()
        with pytest.raises(sqlite3.DatabaseError):
            IndexStore.open(config.index_dir(indexed.resolve()), create=False, readonly_ok=True)
        assert open_files() == before


def test_an_unreadable_interrupted_rebuild_started_over_leaves_no_file_open(tmp_path):
    """A rebuild resumes the folder an interrupted one left; one it opens but cannot read is
    started over, and its connection was left open (on files then deleted, their space held)."""
    from brain.index import rebuild

    staging = tmp_path / "vault-x.rebuild"
    IndexStore.open(staging).close()
    with contextlib.closing(sqlite3.connect(staging / "index.db")) as conn:
        conn.execute("DROP TABLE links")
    (staging / rebuild.REBUILD_MARKER).write_text('{"model": "fake:64", "history": null}', encoding="utf-8")
    with no_cycle_collector():
        before = open_files()
        store, resumed = rebuild._open_staging(staging, "fake:64", None, [])
        store.close()
        assert not resumed  # started over
        assert open_files() == before


@pytest.mark.parametrize("args", [["status"], ["ask", "how should agent memory work"], ["note", "Vannevar Bush"]])
def test_a_command_on_a_damaged_index_leaves_no_file_open(indexed, args):
    _not_a_database(config.index_dir(indexed.resolve()) / "index.db")
    runner = CliRunner()
    with no_cycle_collector():
        before = open_files()
        result = runner.invoke(cli, [*args, "--vault", str(indexed)])
        assert result.exit_code == 1 and "is damaged" in result.output, result.output
        assert open_files() == before


def test_searching_many_indexes_keeps_the_postings_of_a_few_open(tmp_path, monkeypatch):
    """Each BM25 postings file searched stayed open (a cache by index folder, never emptied):
    a process that searched a thousand indexes, a test run, held a thousand files."""
    from index_helpers import CheapEmbedder, index_into

    from brain.index import postings

    monkeypatch.setenv("BRAIN_LEXICAL_POSTINGS", "1")  # from one chunk: every index here has postings
    vault = tmp_path / "vault"
    for i in range(3):
        (vault / f"n{i}.md").parent.mkdir(exist_ok=True)
        (vault / f"n{i}.md").write_text(f"# n{i}\n\namber basil fjord {i}\n", encoding="utf-8")
    answered = 0
    for i in range(10):
        _, directory = index_into(tmp_path / f"home{i}", vault, CheapEmbedder())
        assert (directory / "postings.bin").exists()
        store = IndexStore.open_snapshot(directory)
        try:
            answered += postings.search(store, ["amber"], (1.0, 1.0, 1.0), 5) is not None
        finally:
            store.close()
    assert answered == 10
    # (each base holds its file open twice: once to read the postings, once by its map)
    held = {target for target in open_files() if target.endswith("/postings.bin")}
    assert len(held) <= 4, held


def test_a_postings_base_holds_its_file_open_twice_and_lets_it_go_when_dropped(tmp_path, monkeypatch):
    """Each array memory-mapped from postings.bin held a descriptor of its own (np.memmap maps
    the file per array, and a map keeps a duplicate of the file's): 9 a base, 36 for the 4
    folders the process keeps. Now one read descriptor and one map, the arrays as they were,
    read-only, and nothing held once the base is dropped (no cycle collection needed)."""
    import numpy as np
    from index_helpers import CheapEmbedder, index_into

    from brain.index import postings

    monkeypatch.setenv("BRAIN_LEXICAL_POSTINGS", "1")  # from one chunk
    vault = tmp_path / "vault"
    vault.mkdir()
    for i in range(3):
        (vault / f"n{i}.md").write_text(f"# n{i}\n\namber basil fjord {i}\n", encoding="utf-8")
    _, directory = index_into(tmp_path / "home", vault, CheapEmbedder())
    path = directory / "postings.bin"

    def held() -> int:
        return sum(target == str(path) for target in open_files())

    with no_cycle_collector():
        assert held() == 0
        base = postings.load(directory)
        assert base is not None
        assert held() <= 2
        mapped = {
            "doc_ids": base.doc_ids,
            "doc_len": base.doc_len,
            "term_bytes": base.term_bytes,
            "term_at": base.term_at,
            **{f"start_{c}": a for c, a in zip(postings.COLUMNS, base.starts)},
            "chunk_count": base.chunk_count,
        }
        raw = path.read_bytes()
        for name, array in mapped.items():
            offset, dtype, count = base.header["arrays"][name]
            assert array.dtype == np.dtype(dtype) and array.shape == (count,), name
            assert array.tobytes() == raw[offset : offset + array.nbytes], name
            assert not array.flags.writeable, name
        assert base.term("amber") is not None and base.term("nowhere") is None
        del base, mapped, array
        assert held() == 0


def test_a_test_file_that_drops_connections_unclosed_leaves_no_files_to_the_next(tmp_path):
    """The suite's files_given_back (conftest.py): what one test file let go unclosed is freed
    before the next runs. Two files in a pytest run of their own, with this suite's conftest."""
    import subprocess
    import sys

    tests = tmp_path / "inner"
    tests.mkdir()
    (tests / "test_first.py").write_text(
        "import gc, sqlite3\n\n\n"
        "def test_drops_connections(tmp_path):\n"
        "    gc.disable()  # only an explicit collection frees them\n"
        "    for i in range(80):\n"
        "        conn = sqlite3.connect(tmp_path / f'{i}.db')\n"
        "        conn.execute('CREATE TABLE t (x)')\n"
        "        del conn\n",
        encoding="utf-8",
    )
    (tests / "test_second.py").write_text(
        "from test_open_files import open_files\n\n\n"
        "def test_finds_none_of_them_open():\n"
        "    assert not [t for t in open_files() if t.endswith('.db')]\n",
        encoding="utf-8",
    )
    env = dict(os.environ, PYTHONPATH=os.pathsep.join([str(Path(__file__).parent), *sys.path]))
    done = subprocess.run(
        [
            sys.executable,
            "-m",
            "pytest",
            "-q",
            "-p",
            "no:cacheprovider",
            "-p",
            "conftest",
            "--rootdir",
            str(tests),
            str(tests / "test_first.py"),
            str(tests / "test_second.py"),
        ],
        env=env,
        capture_output=True,
        text=True,
        timeout=300,
        cwd=tests,
    )
    assert done.returncode == 0 and "2 passed" in done.stdout, done.stdout + done.stderr
