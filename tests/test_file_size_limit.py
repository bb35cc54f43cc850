"""When the file size limit (`ulimit -f`) is what stopped a write: one rule
(``file_state.file_size_limit_met``) for the index (the files in its folder) and the brain
database (it, its -wal and -shm). A write that meets the limit is said by SQLite as "disk I/O
error" (or "disk is full"), on a disk with room; the limit is named when it is under 1 MiB (too
low for any index or ledger) or a file looked at is within 1 MiB of it."""

from __future__ import annotations

import errno
import sqlite3
import sys
from collections.abc import Iterator

import pytest

pytestmark = pytest.mark.skipif(sys.platform == "win32", reason="no file size limit (RLIMIT_FSIZE) on Windows")

MiB = 1 << 20
LIMIT = 3 * MiB


@pytest.fixture
def limited() -> Iterator[int]:
    """This process under a 3 MiB file size limit (files are made sparse, under it)."""
    import resource

    before = resource.getrlimit(resource.RLIMIT_FSIZE)
    resource.setrlimit(resource.RLIMIT_FSIZE, (LIMIT, before[1]))
    try:
        yield LIMIT
    finally:
        resource.setrlimit(resource.RLIMIT_FSIZE, before)


def _sized(path, size):
    with open(path, "wb") as f:
        f.truncate(size)
    return path


def test_a_file_within_a_mib_of_the_limit_is_the_limit_met(tmp_path, limited):
    from brain.file_state import file_size_limit_met

    small = _sized(tmp_path / "small", MiB)
    near = _sized(tmp_path / "near", LIMIT - MiB // 2)
    io_error = sqlite3.OperationalError("disk I/O error")
    assert file_size_limit_met(io_error, [small, near]) == LIMIT
    assert file_size_limit_met(io_error, [small]) is None
    # a name with nothing there is passed over, and a folder is not a file that met it
    assert file_size_limit_met(io_error, [tmp_path / "gone", tmp_path, near]) == LIMIT
    assert file_size_limit_met(io_error, [tmp_path / "gone", tmp_path]) is None
    assert file_size_limit_met(OSError(errno.EFBIG, "File too large"), [str(near)]) == LIMIT


def test_only_a_failure_the_limit_can_cause_is_put_on_it(tmp_path, limited):
    from brain.file_state import file_size_limit_met

    near = [_sized(tmp_path / "near", LIMIT - 1)]
    assert file_size_limit_met(sqlite3.OperationalError("database or disk is full"), near) == LIMIT
    assert file_size_limit_met(sqlite3.OperationalError("database is locked"), near) is None
    assert file_size_limit_met(sqlite3.DatabaseError("database disk image is malformed"), near) is None
    assert file_size_limit_met(OSError(errno.ENOSPC, "No space left on device"), near) is None


def test_a_limit_under_a_mib_is_met_whatever_the_files(tmp_path):
    import resource

    from brain.file_state import file_size_limit_met

    before = resource.getrlimit(resource.RLIMIT_FSIZE)
    resource.setrlimit(resource.RLIMIT_FSIZE, (300_000, before[1]))
    try:
        assert file_size_limit_met(sqlite3.OperationalError("disk I/O error"), []) == 300_000
    finally:
        resource.setrlimit(resource.RLIMIT_FSIZE, before)


def test_no_limit_is_never_the_cause(tmp_path):
    import resource

    from brain.file_state import file_size_limit_met

    if resource.getrlimit(resource.RLIMIT_FSIZE)[0] != resource.RLIM_INFINITY:
        pytest.skip("this process runs under a file size limit")
    assert file_size_limit_met(sqlite3.OperationalError("disk I/O error"), [tmp_path]) is None


def test_the_index_names_the_limit_a_file_in_its_folder_met(tmp_path, limited):
    from brain.errors import NoSpaceError
    from brain.index.health import index_errors

    _sized(tmp_path / "index.db-wal", LIMIT - MiB // 4)
    with pytest.raises(NoSpaceError) as raised, index_errors(tmp_path, tmp_path / "vault"):
        raise sqlite3.OperationalError("disk I/O error")
    assert "file size limit" in str(raised.value) and "3.0 MB" in str(raised.value), raised.value
    (tmp_path / "index.db-wal").unlink()
    with pytest.raises(Exception) as raised, index_errors(tmp_path, tmp_path / "vault"):
        raise sqlite3.OperationalError("disk I/O error")
    assert "file size limit" not in str(raised.value), raised.value


def test_the_brain_database_names_the_limit_its_log_met(tmp_path, limited):
    from brain.db import database_error

    path = tmp_path / "brain.db"
    _sized(path, MiB)
    assert "file size limit" not in str(database_error(path, sqlite3.OperationalError("disk I/O error")))
    _sized(tmp_path / "brain.db-wal", LIMIT - MiB // 4)
    line = str(database_error(path, sqlite3.OperationalError("disk I/O error")))
    assert "file size limit" in line and "3.0 MB" in line and "ulimit -f unlimited" in line, line
    # a file beside it that is not its own is not looked at
    (tmp_path / "brain.db-wal").rename(tmp_path / "other.db")
    assert "file size limit" not in str(database_error(path, sqlite3.OperationalError("disk I/O error")))
