"""`brain serve` while it loads: `--detach` says where its log is and what it loads as it goes,
and waits until the server answers (or returns at once with --no-wait); `brain status` says
"starting (loading the model, 12 s)", where it said "up (starting, …, indexing changes)"; a
question the server cannot answer yet says what it is doing. The model's load is held by the
test (an event in-process, FAKE_LOAD_AFTER for a process): no timed assertion."""

from __future__ import annotations

import os
import threading
from pathlib import Path

import pytest
from click.testing import CliRunner
from conftest import FakeEmbedder
from serve_helpers import BrainProcess, kill_recorded_server, request, run_brain, wait_until

from brain.cli import cli
from brain.server import client, runtime
from brain.server.daemon import Daemon
from brain.server.service import Service


class HeldLoad(FakeEmbedder):
    """The fake embedder whose model loads once the test says so."""

    def __init__(self) -> None:
        super().__init__()
        self.go = threading.Event()

    def ensure_loaded(self) -> None:
        self.go.wait(120)


def _server_line(vault: Path) -> str:
    result = CliRunner().invoke(cli, ["status", "--vault", str(vault)])
    assert result.exit_code == 0, result.output
    return next(line for line in result.output.splitlines() if line.startswith("server:"))


def test_status_of_a_server_loading_its_model_says_so_not_up(toy_vault):
    embedder = HeldLoad()
    root = toy_vault.resolve()
    service = Service(root, embedder=embedder, settle_ms=150)
    daemon = Daemon(root, service, http=None)
    daemon.start()
    try:
        wait_until(lambda: (service.status()["loading"] or {}).get("doing") == "loading the model", 30, "the load")
        line = _server_line(toy_vault)
        # before: "server: up (starting, pid N, up 0s, 0 queries, indexing changes)"
        assert line.startswith(f"server: starting (pid {service.status()['pid']}, loading the model, "), line
        assert "asks wait up to" in line and "up (" not in line and "indexing" not in line, line
        reply = request(daemon, "note", note="Home", wait=0.2)
        assert reply["ok"] is False and reply["error"]["code"] == "starting", reply
        assert "still starting (loading the model, " in reply["error"]["message"], reply
        embedder.go.set()
        assert service.wait_ready(60) and service.state == "ready"
        assert service.status()["loading"] is None
        assert _server_line(toy_vault).startswith("server: up (pid "), _server_line(toy_vault)
    finally:
        embedder.go.set()
        daemon.stop()


@pytest.fixture
def detached():
    """Servers started by a test's `brain serve --detach`: killed at its end, whatever happened."""
    vaults: list[Path] = []
    started: list[BrainProcess] = []

    def start(vault: Path, *args: str, **env: str) -> BrainProcess:
        vaults.append(vault)
        proc = BrainProcess(["serve", "--vault", str(vault), "--detach", *args], **env)
        started.append(proc)
        return proc

    yield start
    for proc in started:
        proc.close()
    for vault in vaults:
        kill_recorded_server(vault)


def _lines(stream) -> list[str]:  # type: ignore[no-untyped-def]
    """The stream's lines as they come, read on a thread (a test waits on them, never blocks)."""
    lines: list[str] = []

    def read() -> None:
        for raw in stream:
            lines.append(raw.decode("utf-8", "replace").rstrip("\n"))

    threading.Thread(target=read, daemon=True).start()
    return lines


@pytest.mark.slow
def test_detach_says_where_the_log_is_and_what_it_loads_then_returns_once_it_answers(toy_vault, tmp_path, detached):
    flag = tmp_path / "load"
    start = detached(toy_vault, FAKE_LOAD_AFTER=str(flag))
    said = _lines(start.proc.stderr)
    wait_until(lambda: "brain serve: loading the model…" in said, 60, "the loading line")
    first = said[0]  # before: nothing at all until the index was loaded
    assert first.startswith(f"brain serve: starting for {toy_vault.resolve()} (pid ") and "serve.log" in first, said
    status = run_brain(["status", "--vault", str(toy_vault)], timeout=60)
    line = next(line for line in status.stdout.decode().splitlines() if line.startswith("server:"))
    assert line.startswith("server: starting (pid ") and "loading the model, " in line, line
    assert start.proc.poll() is None  # it waits while the server loads
    flag.touch()
    assert start.proc.wait(60) == 0
    out = start.proc.stdout.read().decode()
    assert out.startswith(f"brain serve started for {toy_vault.resolve()} (pid "), out
    assert "still loading" not in out, out
    assert client.status(toy_vault.resolve())["state"] == "ready"
    stopped = run_brain(["serve", "--vault", str(toy_vault), "--stop"])
    assert stopped.returncode == 0 and b"stopped brain serve" in stopped.stdout


@pytest.mark.slow
def test_detach_no_wait_returns_while_the_model_loads(toy_vault, tmp_path, detached):
    flag = tmp_path / "load"
    start = detached(toy_vault, "--no-wait", FAKE_LOAD_AFTER=str(flag))
    assert start.proc.wait(60) == 0  # the load is held: only --no-wait returns
    out = start.proc.stdout.read().decode()
    assert out.startswith(f"brain serve started for {toy_vault.resolve()} (pid "), out
    assert "`brain status` says when it answers" in out and "serve.log" in out, out
    assert runtime.lock_is_held(toy_vault.resolve())
    status = client.status(toy_vault.resolve(), timeout=5.0)
    assert status is not None and status["state"] == "starting", status
    flag.touch()
    wait_until(lambda: (client.status(toy_vault.resolve(), timeout=1.0) or {}).get("state") == "ready", 60, "the index")
    stopped = run_brain(["serve", "--vault", str(toy_vault), "--stop"])
    assert stopped.returncode == 0


def test_no_wait_without_detach_is_a_usage_error(toy_vault):
    result = CliRunner().invoke(cli, ["serve", "--vault", str(toy_vault), "--no-wait"])
    assert result.exit_code == 2 and "--no-wait is for --detach" in result.output, result.output
    stop = CliRunner().invoke(cli, ["serve", "--vault", str(toy_vault), "--stop", "--no-wait"])
    assert stop.exit_code == 2 and "--no-wait shapes one to start: drop it" in stop.output, stop.output


def test_the_last_error_a_start_logged_is_its_own_and_a_fifo_is_not_waited_on(tmp_path):
    from brain.server.daemon import _last_error

    log = tmp_path / "serve.log"
    log.write_text(
        "2026-12-07 21:49:04,306 pid=11 [v] ERROR the index of /v could not be opened\n"
        "2026-12-07 21:49:04,307 pid=12 [v] ERROR another server's line\n"
        "2026-12-07 21:49:04,308 pid=11 [v] INFO a line that is no error\n"
    )
    assert _last_error(log, "11") == "the index of /v could not be opened"
    assert _last_error(log, "13") is None and _last_error(log, None) is None
    fifo = tmp_path / "fifo.log"
    os.mkfifo(fifo)
    found: list[str | None] = []
    reader = threading.Thread(target=lambda: found.append(_last_error(fifo, "11")), daemon=True)
    reader.start()
    reader.join(30)  # a guard against the hang (an open of a FIFO waits for a writer), not a speed bound
    assert found == [None]
