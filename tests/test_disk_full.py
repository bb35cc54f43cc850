"""A full disk under the index: each failure is one honest line, `brain ask` still answers from
the index as it was, and the next run with room finishes the work with nothing lost.

SQLite's own "database or disk is full" is real here: every connection of the index is held
to the pages its file has now (``PRAGMA max_page_count``), as a disk with no room left does.
FAISS's write is made to fail as it does on a full disk (a RuntimeError naming the C++ line).
"""

from __future__ import annotations

import errno
import json
import os
import sqlite3
import subprocess
import sys
from pathlib import Path

import pytest
from click.testing import CliRunner
from conftest import write

from brain import config
from brain.cli import cli
from brain.index import store_open
from brain.index.files import INDEX_FILE

QUERY = "sqlite wal checkpoint"


def _invoke(*args: str):
    return CliRunner().invoke(cli, list(args), catch_exceptions=False)


def _one_line(result) -> str:
    lines = result.output.strip().splitlines()
    assert len(lines) == 1, result.output
    assert "Traceback" not in result.output
    return lines[0]


@pytest.fixture
def full_disk(monkeypatch):
    """Call it to fill the disk: from then on, no connection of an index database can grow its
    file (SQLITE_FULL); ``room()`` gives the room back."""
    real = store_open.connect

    def connect(path: str, *args, **kwargs) -> sqlite3.Connection:
        conn = real(path, *args, **kwargs)
        if Path(path).name == INDEX_FILE:
            conn.execute(f"PRAGMA max_page_count = {conn.execute('PRAGMA page_count').fetchone()[0]}")
        return conn

    class Disk:
        def fill(self) -> None:
            monkeypatch.setattr(store_open, "connect", connect)

        def room(self) -> None:
            monkeypatch.setattr(store_open, "connect", real)

    return Disk()


def _notes(vault: Path, n: int) -> None:
    for i in range(n):
        write(vault, f"Filler/Note {i}.md", f"# Note {i}\n\n" + f"paragraph {i} about sqlite wal checkpoints. " * 60)


def _fresh_counts(vault: Path, monkeypatch, tmp_path: Path) -> dict:
    monkeypatch.setenv("BRAIN_HOME", str(tmp_path / "fresh-home"))
    result = _invoke("index", "--vault", str(vault), "--json")
    assert result.exit_code == 0, result.output
    data = json.loads(result.stdout)
    return {k: data[k] for k in ("notes", "chunks", "links")}


def test_a_full_disk_during_index_is_one_line_naming_it(toy_vault, full_disk, monkeypatch, tmp_path):
    assert _invoke("index", "--vault", str(toy_vault)).exit_code == 0
    _notes(toy_vault, 40)
    full_disk.fill()
    result = _invoke("index", "--vault", str(toy_vault))
    assert result.exit_code == 1
    line = _one_line(result)
    # Not SQLite's "cannot rollback - no transaction is active", which hid the cause.
    assert "no room left" in line and "disk is full" in line and "cannot rollback" not in line, line

    # `brain ask` answers from the index as it was, and says why it is stale.
    result = _invoke("ask", "--vault", str(toy_vault), "--json", QUERY)
    assert result.exit_code == 0, result.output
    data = json.loads(result.stdout)
    assert data["results"]
    assert any("40 notes changed" in w and "no room left" in w for w in data["warnings"]), data["warnings"]

    # With room again, the next run finishes: the index is the one a fresh run builds.
    full_disk.room()
    result = _invoke("index", "--vault", str(toy_vault), "--json")
    assert result.exit_code == 0, result.output
    data = json.loads(result.stdout)
    assert data["new"] == 40
    got = {k: data[k] for k in ("notes", "chunks", "links")}
    assert got == _fresh_counts(toy_vault, monkeypatch, tmp_path)


def _faiss_cannot_write(monkeypatch) -> None:
    import faiss

    def write_index(index, path):
        raise RuntimeError(
            "Error in void faiss::write_index(const Index*, IOWriter*, int) at index_write.cpp:699: "
            f"Error: 'ret == (size)' failed: write error in {path}: 3978 != 3148800 (No space left on device)"
        )

    monkeypatch.setattr(faiss, "write_index", write_index)


def test_a_vector_file_that_cannot_be_written_is_a_warning_not_a_traceback(toy_vault, monkeypatch, caplog):
    assert _invoke("index", "--vault", str(toy_vault)).exit_code == 0
    directory = config.index_dir(toy_vault)
    (directory / "vectors.faiss").unlink()  # a reader must rebuild it, and save it if it can
    _faiss_cannot_write(monkeypatch)
    for extra in ((), ("--no-update",)):
        result = _invoke("ask", "--vault", str(toy_vault), *extra, QUERY)
        assert result.exit_code == 0, result.output
        assert "Traceback" not in result.output and " 1. " in result.output, result.output
    assert "could not save the rebuilt vector index: [Errno 28] No space left on device" in caplog.text
    assert not list(directory.glob("vectors.faiss.*"))  # no temporary file left behind


def test_a_vector_file_that_cannot_be_written_by_index_is_one_line(toy_vault, monkeypatch):
    assert _invoke("index", "--vault", str(toy_vault)).exit_code == 0
    directory = config.index_dir(toy_vault)
    _faiss_cannot_write(monkeypatch)
    monkeypatch.setenv("BRAIN_DENSE_INDEX", "ivf")  # the next run must write a new vector file
    result = _invoke("index", "--vault", str(toy_vault))
    assert result.exit_code == 1
    line = _one_line(result)
    assert "no room left" in line and "No space left on device" in line, line
    assert not list(directory.glob("vectors.faiss.*"))


def test_a_disk_too_full_for_sqlite_shared_memory_file_still_answers(toy_vault, monkeypatch):
    # On a disk with no room left, opening the database fails before reading a page: SQLite
    # cannot make the 32 KB -shm file beside it (SQLITE_IOERR_SHMSIZE, "disk I/O error").
    # `brain ask` failed with that line, though the index was complete and readable.
    assert _invoke("index", "--vault", str(toy_vault)).exit_code == 0
    real = store_open.connect

    def connect(path: str, *args, **kwargs) -> sqlite3.Connection:
        if Path(path).name == INDEX_FILE:
            exc = sqlite3.OperationalError("disk I/O error")
            exc.sqlite_errorname = "SQLITE_IOERR_SHMSIZE"  # type: ignore[attr-defined]
            raise exc
        return real(path, *args, **kwargs)

    monkeypatch.setattr(store_open, "connect", connect)
    result = _invoke("ask", "--vault", str(toy_vault), "--json", QUERY)
    assert result.exit_code == 0, result.output
    data = json.loads(result.stdout)
    assert data["results"] and data["warnings"] == [] and data["stale_notes"] == 0

    write(toy_vault, "Inbox/New.md", "# New\n\nabout sqlite wal checkpoints\n")
    data = json.loads(_invoke("ask", "--vault", str(toy_vault), "--json", QUERY).stdout)
    assert data["results"] and data["stale_notes"] == 1
    assert any("cannot be updated now (no room left" in w for w in data["warnings"]), data["warnings"]

    result = _invoke("index", "--vault", str(toy_vault))  # a writer cannot: one line that says why
    assert result.exit_code == 1
    assert "no room left" in _one_line(result)


def test_a_rebuild_stopped_by_a_full_disk_says_what_it_takes_of_it_and_resumes(toy_vault, monkeypatch):
    # The rebuild folder a full disk stopped stays for --rebuild to resume, and takes room
    # itself: freeing space "on that disk" was no help while it was not said.
    from brain.index.indexer import index_vault
    from brain.index.rebuild import rebuild_dir
    from brain.index.store import IndexStore

    assert _invoke("index", "--vault", str(toy_vault)).exit_code == 0
    with monkeypatch.context() as m:  # every note is in the new index when its WAL is folded in
        m.setattr(
            IndexStore,
            "checkpoint",
            lambda self: (_ for _ in ()).throw(sqlite3.OperationalError("database or disk is full")),
        )
        result = _invoke("index", "--vault", str(toy_vault), "--rebuild", "--yes")
    assert result.exit_code == 1
    staging = rebuild_dir(config.index_dir(toy_vault))
    line = _one_line(result)
    assert "no room left" in line and f"the stopped rebuild in {staging} takes" in line and " MB " in line, line

    from conftest import FakeEmbedder

    report = index_vault(toy_vault, embedder=FakeEmbedder(), progress=False, rebuild=True, keep_history=False)
    assert report.embedded == 0 and not staging.exists()  # resumed: nothing embedded again


def _brain_limited(
    args: list[str], home: Path, limit: int | None, model: str = "fake:64"
) -> subprocess.CompletedProcess:
    """`brain ARGS` in a process of its own whose files may grow to ``limit`` bytes at most
    (``ulimit -f``; None: no limit). Python ignores SIGXFSZ, so a write past it fails (EFBIG)."""
    import resource

    def limited() -> None:
        if limit is not None:
            resource.setrlimit(resource.RLIMIT_FSIZE, (limit, resource.getrlimit(resource.RLIMIT_FSIZE)[1]))

    env = {**os.environ, "BRAIN_HOME": str(home), "BRAIN_EMBED_MODEL": model, "BRAIN_RERANK_MODEL": "none"}
    return subprocess.run(
        [sys.executable, str(Path(__file__).with_name("brain_with_fakes.py")), *args],
        env=env,
        preexec_fn=limited,
        capture_output=True,
        text=True,
        timeout=300,
        check=False,
    )


@pytest.mark.slow
@pytest.mark.skipif(sys.platform == "win32", reason="no file size limit (RLIMIT_FSIZE) on Windows")
@pytest.mark.parametrize("limit", [20_000, 300_000])
def test_the_file_size_limit_under_index_is_named_and_nothing_is_lost(toy_vault, tmp_path, limit):
    """A file size limit (`ulimit -f`) that stops the index's database: SQLite says only "disk I/O
    error", and `brain index` said "the index database … could not be used (disk I/O error)" (or,
    under 32 KB, "no room left … free some space on that disk", on a disk with room). The line
    names the limit and the fix; the next run without it indexes everything, and a `brain ask`
    under the limit answers, its warning naming the limit (it said to free space on the disk)."""
    home = tmp_path / "home"
    vault = ["--vault", str(toy_vault)]
    for _ in range(2):  # a second run finds what the first left behind it
        done = _brain_limited(["index", *vault], home, limit)
        assert done.returncode == 1 and done.stdout == "", done
        line = done.stderr.strip()
        assert "\n" not in line and "Traceback" not in line, line
        assert "file size limit" in line and "ulimit -f" in line, line
        assert "free some space" not in line and "could not be used" not in line, line
    done = _brain_limited(["index", "--json", *vault], home, None)
    assert done.returncode == 0, done.stderr
    data = json.loads(done.stdout)
    assert (data["notes"], data["chunks"]) == (35, 185), data
    done = _brain_limited(["ask", "--no-update", "--json", "how should agent memory work", *vault], home, None)
    assert done.returncode == 0 and json.loads(done.stdout)["results"], done.stderr
    # `brain ask` under the limit answers from the index; a warning names the limit, not the disk
    for name in ("vectors.faiss", "vectors.json", "recall-cache.npz"):
        for stale in (home / "vaults").glob(f"*/{name}"):
            stale.unlink()
    done = _brain_limited(["ask", "--json", "how should agent memory work", *vault], home, limit)
    assert done.returncode == 0 and json.loads(done.stdout)["results"], done.stderr
    assert "free some space" not in done.stderr and "Traceback" not in done.stderr, done.stderr


@pytest.mark.skipif(sys.platform == "win32", reason="no file size limit (RLIMIT_FSIZE) on Windows")
def test_the_file_size_limit_under_the_vector_files_is_named(toy_vault, tmp_path):
    """FAISS's write past `ulimit -f` fails with "File too large" in its message; it was made an
    OSError "Input/output error", so the vector files the index database fitted under the limit
    could not be saved, said as a broken disk. Here the database (2.1 MB, already there) takes
    its few writes and the vector file (1.5 MB at 4,096 dimensions) meets the 1 MB limit: the
    warning names the limit and the fix, and the index still answers."""
    import resource

    import faiss
    import numpy as np

    from brain.index.vectors import _write_faiss

    home = tmp_path / "home"
    vault = ["--vault", str(toy_vault)]
    assert _brain_limited(["index", *vault], home, None, "fake:4096").returncode == 0
    for stale in (home / "vaults").glob("*/vectors.faiss"):
        stale.unlink()
    done = _brain_limited(["index", *vault], home, 1_000_000, "fake:4096")
    assert done.returncode == 0, done.stderr
    warning = [line for line in done.stderr.splitlines() if "could not save" in line]
    assert len(warning) == 1 and "Traceback" not in done.stderr, done.stderr
    assert "file size limit" in warning[0] and "ulimit -f" in warning[0], warning[0]
    assert "Input/output error" not in warning[0], warning[0]
    # FAISS's own failure, in this process: EFBIG, as Python's writes raise it
    index = faiss.IndexFlatIP(64)
    index.add(np.zeros((2000, 64), dtype="float32"))
    before = resource.getrlimit(resource.RLIMIT_FSIZE)
    resource.setrlimit(resource.RLIMIT_FSIZE, (100_000, before[1]))
    try:
        with pytest.raises(OSError) as raised:
            _write_faiss(index, tmp_path / "vectors.faiss")
    finally:
        resource.setrlimit(resource.RLIMIT_FSIZE, before)
    assert raised.value.errno == errno.EFBIG, raised.value


@pytest.mark.skipif(sys.platform == "win32", reason="no file size limit (RLIMIT_FSIZE) on Windows")
def test_a_vector_file_write_past_the_file_size_limit_is_the_limit_named_by_index_errors(tmp_path):
    """A vector file (FAISS's write, or Python's for the delta) stopped by `ulimit -f` is EFBIG:
    it passed `index_errors` as a bare OSError (FAISS's was "Input/output error" before), saying
    nothing of the limit; it is the line that names the limit and the fix, as SQLite's failure
    under it is."""
    import resource

    from brain.errors import NoSpaceError
    from brain.index.health import index_errors

    before = resource.getrlimit(resource.RLIMIT_FSIZE)
    resource.setrlimit(resource.RLIMIT_FSIZE, (50_000_000, before[1]))
    try:
        with pytest.raises(NoSpaceError) as raised, index_errors(tmp_path, tmp_path / "vault"):
            raise OSError(errno.EFBIG, "File too large (writing vectors.faiss)", str(tmp_path / "vectors.faiss"))
    finally:
        resource.setrlimit(resource.RLIMIT_FSIZE, before)
    line = str(raised.value)
    assert "\n" not in line and "file size limit" in line and "ulimit -f unlimited" in line, line
    assert "47.7 MB" in line, line


def test_a_full_disk_under_the_brain_database_is_one_line_with_its_fix(tmp_path, monkeypatch):
    """`brain prune --ledger` with brain.db on a full disk said "Error: …/brain.db: database or
    disk is full" and nothing to do. SQLite's own SQLITE_FULL here (the file held to its pages,
    as a full disk holds it), and the OSError of a folder that cannot be made: both name the disk
    and the fix, and what was recorded before is kept."""
    from brain.db import database_error

    path = tmp_path / "brain.db"
    conn = sqlite3.connect(path)
    conn.execute("CREATE TABLE t (x)")
    conn.execute(f"PRAGMA max_page_count = {conn.execute('PRAGMA page_count').fetchone()[0]}")
    with pytest.raises(sqlite3.OperationalError) as raised:
        conn.execute("INSERT INTO t VALUES (?)", ("x" * 100_000,))
    conn.close()
    for exc in (raised.value, OSError(errno.ENOSPC, os.strerror(errno.ENOSPC), str(tmp_path / "logs"))):
        line = str(database_error(path, exc))
        assert line.startswith(f"no room left to write {path} ("), line
        assert "free some space on that disk" in line and "nothing recorded before was lost" in line, line
        assert "make it writable" not in line and "\n" not in line, line


def test_a_first_index_on_a_full_disk_does_not_promise_an_index_that_answers(toy_vault, full_disk):
    """No index before the run: the line says there is none yet, not that "the index as it was
    still answers" (there was none to answer)."""
    full_disk.fill()
    result = _invoke("index", "--vault", str(toy_vault))
    assert result.exit_code == 1
    line = _one_line(result)
    assert "no room left" in line and "still answers" not in line, line
    assert "no index yet" in line, line
