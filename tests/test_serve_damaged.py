"""An index with a table dropped (by hand, or by a tool): `brain serve` answers as well as
`brain ask --no-server` does over it, says the damage once, in one line naming the command
that mends it, and every command says that command too. No test here waits long: a server
that never loads fails in seconds."""

from __future__ import annotations

import json
import logging
import os
import sqlite3
from pathlib import Path

import pytest
from click.testing import CliRunner
from index_helpers import index_into
from serve_helpers import served, wait_until

from brain import config
from brain.cli import cli
from brain.server import service as service_module
from brain.server.service import Service

QUESTION = "how should agent memory work"


def _indexed(vault: Path) -> Path:
    from conftest import FakeEmbedder

    return index_into(Path(os.environ["BRAIN_HOME"]), vault, FakeEmbedder())[1] / "index.db"


def _damage(database: Path, sql: str) -> None:
    conn = sqlite3.connect(database)
    try:
        conn.execute(sql)
        conn.commit()
    finally:
        conn.close()


def _brain(*args: str) -> tuple[int, str, str]:
    result = CliRunner().invoke(cli, list(args), catch_exceptions=False)
    return result.exit_code, result.stdout, result.stderr


def _paths(stdout: str) -> list[str]:
    return [r["path"] for r in json.loads(stdout)["results"]]


def test_a_server_over_an_index_without_its_links_answers_as_brain_ask_does(toy_vault, caplog, monkeypatch):
    _damage(_indexed(toy_vault), "DROP TABLE links")
    code, local, _ = _brain("ask", "--vault", str(toy_vault), "--json", "--no-server", QUESTION)
    assert code == 0 and _paths(local)  # in-process: the graph stages fall back
    caplog.set_level(logging.INFO, logger="brain")
    monkeypatch.setattr(service_module, "PROBE_EVERY", 0.1)  # an idle probe at each quiet moment
    with served(toy_vault, ready_within=20) as daemon:
        probes = []
        moved = daemon.service._moved
        daemon.service._moved = lambda: probes.append(1) or moved()  # type: ignore[method-assign]
        before = daemon.service.queries
        code, out, err = _brain("ask", "--vault", str(toy_vault), "--json", QUESTION)
        assert code == 0, err
        assert daemon.service.queries == before + 1  # the server answered it
        assert _paths(out) == _paths(local)
        # idle probes: the damage is not said again on each (it slept 2.5 s for one or more)
        wait_until(lambda: len(probes) >= 3, 30, "three idle probes")
    failures = [r for r in caplog.records if r.levelno >= logging.ERROR]
    assert failures and all(r.exc_info is None for r in failures)  # one line each, no traceback
    assert all(f"brain index --rebuild --vault {toy_vault.resolve()}" in r.getMessage() for r in failures)
    assert len(failures) <= 2  # the first pass (and the one its own writes woke), not one every probe


@pytest.mark.parametrize("args", [["index"], ["status"], ["index", "--repair"]])
def test_every_command_over_an_index_without_its_links_names_the_rebuild(toy_vault, args):
    _damage(_indexed(toy_vault), "DROP TABLE links")
    code, _, err = _brain(*args, "--vault", str(toy_vault))
    assert code == 1
    assert err.count("\n") == 1 and "no such table: links" in err
    assert f"`brain index --rebuild --vault {toy_vault}`" in err


def test_the_rebuild_it_names_mends_it_and_keeps_the_damaged_index(toy_vault):
    # the history a rebuild carries over is gone too: it once failed on it, naming itself
    _damage(_indexed(toy_vault), "DROP TABLE note_versions")
    code, _, err = _brain("index", "--rebuild", "--yes", "--vault", str(toy_vault))
    assert code == 0, err
    assert "is damaged (no such table: note_versions)" in err and "was moved to" in err
    assert _brain("status", "--vault", str(toy_vault))[0] == 0
    moved = [p for p in config.index_dir(toy_vault).parent.iterdir() if ".damaged-" in p.name]
    assert len(moved) == 1 and (moved[0] / "index.db").exists()


def _served_failure(vault: Path) -> str:
    """Why a server over ``vault``'s index failed to load it (it must, within seconds)."""
    from conftest import FakeEmbedder

    service = Service(vault.resolve(), embedder=FakeEmbedder(), settle_ms=150)
    service.start()
    try:
        assert service.wait_ready(20)
        assert service.state == "failed"
        wait_until(lambda: not service.watcher.busy, 20, "the first pass")
        assert service.failure is not None
        return service.failure
    finally:
        service.stop()


def test_a_server_over_an_index_without_its_notes_says_so_in_one_line_and_does_not_hang(toy_vault):
    _damage(_indexed(toy_vault), "DROP TABLE notes")
    failure = _served_failure(toy_vault)
    assert "no such table: notes" in failure
    assert f"`brain index --rebuild --vault {toy_vault.resolve()}`" in failure


@pytest.mark.parametrize("key", ["model", "dim"])
def test_an_index_whose_model_rows_are_lost_is_damage_not_an_empty_vault(toy_vault, key):
    _damage(_indexed(toy_vault), f"DELETE FROM meta WHERE key = '{key}'")
    for args in (["ask", "--no-server", QUESTION], ["index"]):
        code, _, err = _brain(args[0], "--vault", str(toy_vault), *args[1:])
        assert code == 1, err
        # it said the vault had none, and brain index left it so; or a traceback (dim: 0)
        assert err.startswith("Error: ") and err.count("\n") == 1 and "no notes" not in err
        assert f"`brain index --rebuild --vault {toy_vault}`" in err
    # not a server serving an empty vault ("its notes are served as they are written")
    assert f"`brain index --rebuild --vault {toy_vault.resolve()}`" in _served_failure(toy_vault)


@pytest.mark.parametrize("table", ["chunks_fts", "chunks_fts_idx"])
def test_a_dropped_search_index_is_made_again_by_the_repair_its_error_names(toy_vault, table):
    _damage(_indexed(toy_vault), f"DROP TABLE {table}")
    code, _, err = _brain("ask", "--vault", str(toy_vault), "--no-server", QUESTION)
    assert code == 1 and err.count("\n") == 1
    assert f"no such table: {table}" in err  # not FTS5's "SQL logic error" alone
    assert f"`brain index --repair --vault {toy_vault}`" in err  # no re-embedding: not --rebuild
    code, out, err = _brain("index", "--repair", "--vault", str(toy_vault))
    assert code == 0, err
    assert "chunks_fts was gone: made again" in out
    code, out, err = _brain("ask", "--vault", str(toy_vault), "--no-server", "--json", "--mode", "hybrid", QUESTION)
    assert code == 0, err
    assert _paths(out) and "WARNING" not in err  # its lexical lane ran, no stage fell back


def test_a_server_that_cannot_load_a_damaged_index_says_what_mends_it_in_one_line(toy_vault, caplog):
    _damage(_indexed(toy_vault), "DROP TABLE chunks_fts")  # brain ask --no-server fails on it too
    caplog.set_level(logging.INFO, logger="brain")
    failure = _served_failure(toy_vault)
    assert f"`brain index --repair --vault {toy_vault.resolve()}`" in failure
    assert not [r for r in caplog.records if r.exc_info]  # no traceback in serve.log
