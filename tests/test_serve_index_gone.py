"""The index folder deleted (or another index put in its place) under a running `brain serve`:
the server says so in one line at its next idle check, starts a pass over the whole vault at
once (it waited for the next note saved, or the rescan five minutes on), and meanwhile every
question is answered in one line saying the index is being rebuilt, not held to its timeout.
The vault is only read."""

from __future__ import annotations

import contextlib
import json
import logging
import os
import shutil
import threading
from pathlib import Path

from click.testing import CliRunner
from index_helpers import index_into
from serve_helpers import request, served, wait_until

from brain import config
from brain.cli import cli
from brain.errors import BrainError
from brain.server import service as service_module

QUESTION = "how should agent memory work"


def _files(vault: Path) -> dict[str, bytes]:
    return {str(p.relative_to(vault)): p.read_bytes() for p in sorted(vault.rglob("*")) if p.is_file()}


def _status_lines(vault: Path) -> dict[str, str]:
    """`brain status`'s lines, by what each begins with ("notes", "index", "pending")."""
    result = CliRunner().invoke(cli, ["status", "--vault", str(vault)])
    assert result.exit_code == 0, result.output
    return {line.split(":", 1)[0]: line for line in result.output.splitlines()}


@contextlib.contextmanager
def _rebuild_held(service, monkeypatch, vault: Path, put_in_its_place: Path | None = None):  # type: ignore[no-untyped-def]
    """The vault's index folder deleted under the running server (another index put in its
    place, if given), and the pass that rebuilds it held once begun, so what the server says
    meanwhile is seen; then let go, and waited for to the index rebuilt."""
    release, begun = threading.Event(), threading.Event()
    index = service._index

    def held(recheck: frozenset[str] = frozenset()):  # type: ignore[no-untyped-def]
        begun.set()
        release.wait(60)
        return index(recheck)

    monkeypatch.setattr(service, "_index", held)
    directory = config.index_dir(vault)
    shutil.rmtree(directory)
    if put_in_its_place is not None:
        shutil.copytree(put_in_its_place, directory)
    try:
        wait_until(begun.is_set, 30, "a pass begun for the deleted or replaced index")
        yield
    finally:
        release.set()
    wait_until(lambda: service.rebuilding is None and not service.watcher.busy, 60, "the index rebuilt")


def test_an_index_deleted_under_the_server_is_said_and_rebuilt_at_once(toy_vault, caplog, monkeypatch):
    caplog.set_level(logging.INFO, logger="brain")
    monkeypatch.setattr(service_module, "PROBE_EVERY", 0.1)  # an idle probe at each quiet moment
    before = _files(toy_vault)
    # rescans far off: only the idle check can start the pass
    with served(toy_vault, rescan_seconds=3600) as daemon:
        service = daemon.service
        notes = service.status()["index"]["notes"]
        assert notes > 0
        directory = config.index_dir(toy_vault)
        with _rebuild_held(service, monkeypatch, toy_vault):
            said = [r.getMessage() for r in caplog.records if "was deleted" in r.getMessage()]
            assert len(said) == 1 and str(directory) in said[0], said
            failing = service.status()["indexing_failing"]
            assert failing is not None and "deleted" in failing["why"], failing
            reply = request(daemon, "ask", query=QUESTION, modes=["hybrid"], wait=15, update=False)
            assert reply["ok"] is False, reply
            message = reply["error"]["message"]
            assert "rebuilding it" in message and "0 of about" in message and "\n" not in message, message
        assert service.status()["indexing_failing"] is None
        assert (directory / "index.db").exists()
        assert service.status()["index"]["notes"] == notes
        reply = request(daemon, "ask", query=QUESTION, modes=["hybrid"], wait=15)
        assert reply["ok"] is True and reply["result"]["results"], reply
    assert _files(toy_vault) == before


def test_another_vault_s_index_put_in_its_place_is_not_answered_from(toy_vault, tmp_path, caplog, monkeypatch):
    other = tmp_path / "other"
    other.mkdir()
    (other / "Elsewhere.md").write_text("# Elsewhere\n\nAgent memory lives in another vault.\n")
    _, theirs = index_into(Path(os.environ["BRAIN_HOME"]), other)
    caplog.set_level(logging.INFO, logger="brain")
    monkeypatch.setattr(service_module, "PROBE_EVERY", 0.1)
    with served(toy_vault, rescan_seconds=3600) as daemon:
        service = daemon.service
        with _rebuild_held(service, monkeypatch, toy_vault, theirs):
            said = [r.getMessage() for r in caplog.records if "was replaced by one of" in r.getMessage()]
            assert len(said) == 1 and str(other.resolve()) in said[0], said
            reply = request(daemon, "ask", query=QUESTION, modes=["hybrid"], wait=15)
            assert reply["ok"] is False and "rebuilding it" in reply["error"]["message"], reply
        reply = request(daemon, "ask", query=QUESTION, modes=["hybrid"], wait=15)
        assert reply["ok"] is True, reply
        paths = [c["path"] for r in reply["result"]["results"] for c in r["results"]]
        assert paths and "Elsewhere.md" not in paths
    assert (other / "Elsewhere.md").exists()


def test_a_rebuild_whose_pass_fails_says_why_not_to_ask_again_later(toy_vault, monkeypatch):
    monkeypatch.setattr(service_module, "PROBE_EVERY", 0.1)
    with served(toy_vault, rescan_seconds=3600) as daemon:
        service = daemon.service

        def full(*args, **kwargs):  # type: ignore[no-untyped-def]
            raise BrainError("the disk is full")

        monkeypatch.setattr(service_module, "index_vault", full)
        passes = service.watcher.passes
        shutil.rmtree(config.index_dir(toy_vault))
        wait_until(lambda: service.watcher.passes > passes and not service.watcher.busy, 30, "the failed pass")
        reply = request(daemon, "ask", query=QUESTION, modes=["hybrid"], wait=15)
        message = reply["error"]["message"]
        assert "rebuilding it" in message and "the disk is full" in message and "ask again" not in message, message
        line = _status_lines(toy_vault)["notes"]
        assert "(brain serve is rebuilding the index, but its pass failed: see server:)" in line, line


def test_brain_status_says_the_server_is_rebuilding_not_that_the_vault_is_empty(toy_vault, monkeypatch):
    # `brain status` reads its notes line from the index: "notes: 0" while the server rebuilt it
    monkeypatch.setattr(service_module, "PROBE_EVERY", 0.1)
    with served(toy_vault, rescan_seconds=3600) as daemon:
        service = daemon.service
        chunks = service.status()["index"]["chunks"]
        with _rebuild_held(service, monkeypatch, toy_vault):
            line = _status_lines(toy_vault)["notes"]
            assert f"(brain serve is rebuilding the index: 0 of about {chunks} chunks embedded)" in line, line
            result = CliRunner().invoke(cli, ["status", "--vault", str(toy_vault), "--json"])
            assert result.exit_code == 0, result.output
            rebuilding = json.loads(result.output)["server"]["rebuilding"]
            assert rebuilding["embedded"] == 0 and rebuilding["of_about"] == chunks, rebuilding
            assert rebuilding["failed"] is False and "deleted" in rebuilding["why"], rebuilding
        result = CliRunner().invoke(cli, ["status", "--vault", str(toy_vault), "--json"])
        assert json.loads(result.output)["server"]["rebuilding"] is None
        result = CliRunner().invoke(cli, ["status", "--vault", str(toy_vault)])
        assert "rebuilding" not in result.output, result.output


def test_a_server_that_does_not_watch_rebuilds_a_deleted_index_at_once(toy_vault, monkeypatch):
    # with no watch the watching thread only idles: pass_now's pass is the one it runs, no rescan
    monkeypatch.setattr(service_module, "PROBE_EVERY", 0.1)
    with served(toy_vault, watch=False, rescan_seconds=3600) as daemon:
        service = daemon.service
        notes, passes = service.status()["index"]["notes"], service.watcher.passes
        directory = config.index_dir(toy_vault)
        shutil.rmtree(directory)
        wait_until(lambda: service.watcher.passes > passes, 30, "a pass begun for the deleted index")
        wait_until(lambda: service.rebuilding is None and not service.watcher.busy, 60, "the index rebuilt")
        assert (directory / "index.db").exists()
        assert service.status()["index"]["notes"] == notes
        reply = request(daemon, "ask", query=QUESTION, modes=["hybrid"], wait=15)
        assert reply["ok"] is True and reply["result"]["results"], reply


def test_note_history_and_neighbours_during_a_rebuild_say_it_as_ask_does(toy_vault, monkeypatch):
    # Through the server they answered from the deleted index's snapshot, in silence; in-process
    # `brain note` said "no index … yet: run `brain index`" while `brain ask` said "rebuilding"
    monkeypatch.setattr(service_module, "PROBE_EVERY", 0.1)
    with served(toy_vault, rescan_seconds=3600) as daemon:
        service = daemon.service
        chunks = service.status()["index"]["chunks"]
        with _rebuild_held(service, monkeypatch, toy_vault):
            asked = request(daemon, "ask", query=QUESTION, modes=["hybrid"], wait=15, update=False)
            line = asked["error"]["message"]
            assert f"rebuilding it from the vault (0 of about {chunks} chunks embedded)" in line, line
            for op in ("note", "history", "neighbours"):
                reply = request(daemon, op, note="Home", wait=5)
                assert reply["ok"] is False and reply["error"]["message"] == line, (op, reply)
            for command in ("note", "history", "neighbours"):
                result = CliRunner().invoke(cli, [command, "Home", "--vault", str(toy_vault)])
                assert result.exit_code == 1 and result.output == f"Error: {line}\n", (command, result.output)
        for op in ("note", "history", "neighbours"):
            assert request(daemon, op, note="Home", wait=5)["ok"] is True, op
        for command in ("note", "history", "neighbours"):
            result = CliRunner().invoke(cli, [command, "Home", "--vault", str(toy_vault)])
            assert result.exit_code == 0 and "Home" in result.output, (command, result.output)


def test_status_during_a_rebuild_does_not_send_the_user_to_brain_index(toy_vault, monkeypatch):
    # "index: … (none yet)" and "pending: 35 new … (run `brain index`)" beside the notes line saying
    # the server rebuilds it: a vault never indexed, and a second writer asked for
    monkeypatch.setattr(service_module, "PROBE_EVERY", 0.1)
    with served(toy_vault, rescan_seconds=3600) as daemon:
        service = daemon.service
        notes = service.status()["index"]["notes"]
        with _rebuild_held(service, monkeypatch, toy_vault):
            lines = _status_lines(toy_vault)
            assert lines["index"].endswith("(none: brain serve is rebuilding it)"), lines["index"]
            assert lines["pending"] == (
                f"pending: {notes} new, 0 changed, 0 renamed, 0 deleted  "
                "(brain serve is rebuilding the index; these are not in it yet)"
            ), lines["pending"]
        result = CliRunner().invoke(cli, ["status", "--vault", str(toy_vault)])
        assert "pending: 0 new, 0 changed, 0 renamed, 0 deleted  (up to date)" in result.output, result.output
