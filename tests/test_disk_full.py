"""A full disk under the index: each failure is one honest line, `brain ask` still answers from
the index as it was, and the next run with room finishes the work with nothing lost.

SQLite's own "database or disk is full" is real here: every connection of the index is held
to the pages its file has now (``PRAGMA max_page_count``), as a disk with no room left does.
"""

from __future__ import annotations

import json
import sqlite3
from pathlib import Path

import pytest
from click.testing import CliRunner
from conftest import write
from test_hardening_index import _fresh_cli_logging  # noqa: F401 - autouse: CliRunner's logging handler

from brain.cli import cli
from brain.index import store as store_module
from brain.index.store import INDEX_FILE

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
    real = store_module.connect

    def connect(path: str, *args, **kwargs) -> sqlite3.Connection:
        conn = real(path, *args, **kwargs)
        if Path(path).name == INDEX_FILE:
            conn.execute(f"PRAGMA max_page_count = {conn.execute('PRAGMA page_count').fetchone()[0]}")
        return conn

    class Disk:
        def fill(self) -> None:
            monkeypatch.setattr(store_module, "connect", connect)

        def room(self) -> None:
            monkeypatch.setattr(store_module, "connect", real)

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
