"""A running `brain serve` whose files are removed under it (a cleanup of /tmp or of its folder,
an `rm -rf`) makes them again within seconds: its socket, its record, its lock file, and the
private folders they are in; never through a symlink put there, and never over a server that
took the vault meanwhile."""

from __future__ import annotations

import fcntl
import json
import logging
import os
import shutil
import signal
import socket
import subprocess
import tempfile
import threading
from pathlib import Path

import pytest
from conftest import TOY_VAULT
from serve_helpers import kill_recorded_server, run_brain, run_s_own, served, wait_until

from brain.server import client, daemon, runtime

QUESTION = "how should agent memory work"
HEALED = 15  # seconds: a check every 2 s, on a machine shared with other tests


@pytest.fixture
def servers():
    """Start `brain serve --detach` for a vault; every server started is killed at the test's
    end, by its pid (its record may be gone: that is what these tests do)."""
    pids: list[int] = []
    vaults: list[Path] = []

    def start(vault: Path, **env: str) -> int:
        vaults.append(vault)
        started = run_brain(["serve", "--vault", str(vault), "--detach"], timeout=120, **env)
        assert started.returncode == 0, started.stderr
        status = wait_until(lambda: client.status(vault.resolve(), timeout=1.0), 60, "the server to answer")
        pids.append(status["pid"])
        return status["pid"]

    yield start
    for vault in vaults:
        kill_recorded_server(vault)
    for pid in pids:
        if run_s_own(pid):
            os.kill(pid, signal.SIGKILL)


def _answers(vault: Path, pid: int) -> bool:
    status = client.status(vault.resolve(), timeout=1.0)
    return bool(status) and status["pid"] == pid


def _asked_by_the_server(vault: Path) -> None:
    before = client.status(vault.resolve())["queries"]
    ask = run_brain(["ask", "--vault", str(vault), "--json", QUESTION])
    assert ask.returncode == 0 and json.loads(ask.stdout)["results"], ask.stderr
    assert b"answering in this process" not in ask.stderr, ask.stderr
    assert client.status(vault.resolve())["queries"] == before + 1  # the server answered it


@pytest.mark.slow
def test_a_server_whose_socket_was_removed_listens_again(toy_vault, servers, brain_home, tmp_path):
    # The server heals only once told (FAKE_HEAL_AFTER): the ask below raced its check 2 s on,
    # and at load 23 `brain ask` started after the socket was back and asked the server.
    told = tmp_path / "heal now"
    pid = servers(toy_vault, FAKE_HEAL_AFTER=str(told))
    sock = runtime.runtime_dir(toy_vault.resolve()) / runtime.SOCKET_FILE
    sock.unlink()
    ask = run_brain(["ask", "--vault", str(toy_vault), QUESTION])  # until it heals: in-process, and said
    assert ask.returncode == 0 and b"did not answer (FileNotFoundError" in ask.stderr, ask.stderr
    assert not sock.exists()
    told.touch()
    wait_until(lambda: _answers(toy_vault, pid), HEALED, "the server to listen again")
    _asked_by_the_server(toy_vault)
    # the line is written once the socket listens again: a client can be answered before it is
    # (a CI run with two suites side by side read the log a moment early)
    healed = f"the files of this server for {toy_vault.resolve()} were removed or replaced (socket); made again"
    log = brain_home / "logs" / "serve.log"
    wait_until(lambda: healed in log.read_text(), HEALED, "the log to say the socket was made again")


@pytest.mark.slow
def test_a_server_whose_record_was_removed_is_found_and_stopped_again(toy_vault, servers):
    pid = servers(toy_vault)
    runtime.record_path(toy_vault.resolve()).unlink()
    wait_until(lambda: runtime.read_record(toy_vault.resolve()), HEALED, "the record to be written again")
    assert runtime.read_record(toy_vault.resolve())["pid"] == pid
    _asked_by_the_server(toy_vault)
    stopped = run_brain(["serve", "--vault", str(toy_vault), "--stop"])
    assert stopped.returncode == 0 and f"(pid {pid})".encode() in stopped.stdout, stopped.stderr
    wait_until(lambda: not runtime.pid_alive(pid), 20, "the server process to exit")


@pytest.mark.slow
def test_a_server_whose_record_cannot_be_made_again_is_found_by_its_lock_and_stopped(toy_vault, servers):
    # --stop said the server "did not answer ... and its pid is unknown; kill it by hand", the
    # pid nowhere to be found. A folder where serve.json stands (root writes a read-only folder
    # too): the record cannot be written again.
    pid = servers(toy_vault)
    root = toy_vault.resolve()
    record = runtime.record_path(root)
    record.unlink()
    record.mkdir()
    try:
        assert runtime.read_record(root) is None and runtime.lock_is_held(root)
        ask = run_brain(["ask", "--vault", str(toy_vault), QUESTION])  # answered here, and said why
        assert ask.returncode == 0, ask.stderr
        assert f"holds the vault's lock (pid {pid}), but its record (serve.json) is gone".encode() in ask.stderr
        status = run_brain(["status", "--vault", str(toy_vault)])
        assert f"server: not answering (pid {pid}, it holds the vault's lock".encode() in status.stdout, status.stdout
        assert runtime.lock_holder(root) == pid and runtime.read_record(root) is None
        stopped = run_brain(["serve", "--vault", str(toy_vault), "--stop"])
        assert stopped.returncode == 0, stopped.stderr
        assert f"stopped brain serve for {root} (pid {pid})".encode() in stopped.stdout
        wait_until(lambda: not runtime.pid_alive(pid), 20, "the server process to exit")
        assert not runtime.lock_is_held(root) and runtime.lock_path(root).read_text() == ""  # its pid let go too
    finally:
        record.rmdir()


@pytest.mark.slow
def test_a_server_whose_folder_was_removed_makes_it_again_and_keeps_the_vault(toy_vault, servers):
    # Before, a second `brain serve` started beside the first (the lock file had gone with the
    # folder), and the first ran on, found by nothing, until killed by hand.
    pid = servers(toy_vault)
    folder = runtime.runtime_dir(toy_vault.resolve())
    shutil.rmtree(folder)
    wait_until(lambda: _answers(toy_vault, pid), HEALED, "the server to listen again")
    wait_until(lambda: runtime.read_record(toy_vault.resolve()), HEALED, "the record")
    assert runtime.is_private(folder) and (folder / runtime.LOCK_FILE).exists()
    second = run_brain(["serve", "--vault", str(toy_vault), "--detach"], timeout=120)
    assert second.returncode == 1 and f"already running for {toy_vault.resolve()} (pid {pid}".encode() in second.stderr
    _asked_by_the_server(toy_vault)


@pytest.mark.slow
def test_a_long_path_server_whose_tmp_folder_was_removed_listens_again(tmp_path, servers):
    vault = tmp_path / ("a vault whose name is long enough " + "x" * 80)
    shutil.copytree(TOY_VAULT, vault)
    short = Path(tempfile.mkdtemp(prefix="t", dir="/tmp"))  # sun_path is short: not tmp_path
    try:
        os.chmod(short, 0o1777)  # as /tmp is
        pid = servers(vault, TMPDIR=str(short))
        folder = short / f"brain-{os.getuid()}"
        assert Path(runtime.read_record(vault.resolve())["socket"]).parent == folder
        shutil.rmtree(folder)  # systemd-tmpfiles leaves a live socket, but not every cleaner does
        wait_until(lambda: _answers(vault, pid), HEALED, "the server to listen again")
        assert runtime.is_private(folder)
        assert Path(runtime.read_record(vault.resolve())["socket"]).parent == folder
        _asked_by_the_server(vault)
    finally:
        shutil.rmtree(short)


def _take_vault_as_another_server(root: Path) -> tuple[socket.socket, object]:
    """What a second server started after the files went holds: the lock, a socket, its record."""
    runtime.make_private(runtime.runtime_dir(root))
    path = runtime.socket_path(root)
    other = socket.socket(socket.AF_UNIX, socket.SOCK_STREAM)
    other.bind(str(path))
    other.listen(1)
    lock = open(runtime.lock_path(root), "a")  # noqa: SIM115 - held until the test closes it
    fcntl.flock(lock, fcntl.LOCK_EX | fcntl.LOCK_NB)
    runtime.write_record(root, {"pid": os.getppid(), "socket": str(path), "vault": str(root)})
    return other, lock


def test_a_server_that_finds_another_holding_the_vault_stops_and_leaves_its_files(toy_vault, caplog):
    root = toy_vault.resolve()
    with served(toy_vault, watch=False) as daemon:
        shutil.rmtree(runtime.runtime_dir(root))
        other, lock = _take_vault_as_another_server(root)
        try:
            theirs = runtime.identity(daemon.socket_path)
            with caplog.at_level(logging.WARNING, logger="brain"):
                daemon.heal()
            assert daemon.stopping.is_set()
            assert "another brain serve (pid" in caplog.text and "stopping" in caplog.text
            daemon.stop()  # as it does once asked to: the other server's socket and record stay
            assert runtime.identity(daemon.socket_path) == theirs
            assert runtime.read_record(root)["pid"] == os.getppid()
        finally:
            other.close()
            lock.close()  # type: ignore[attr-defined]


def test_a_symlink_put_where_the_folder_was_is_not_followed(toy_vault, tmp_path, caplog):
    root = toy_vault.resolve()
    elsewhere = tmp_path / "elsewhere"
    elsewhere.mkdir(mode=0o700)
    with served(toy_vault, watch=False) as daemon:
        folder = runtime.runtime_dir(root)
        shutil.rmtree(folder)
        folder.symlink_to(elsewhere)
        with caplog.at_level(logging.WARNING, logger="brain"):
            daemon.heal()
            daemon.heal()
        assert list(elsewhere.iterdir()) == []  # no lock, socket or record made through it
        assert caplog.text.count("cannot be made again") == 1  # said once, not every check
        assert "is not a private folder of this user" in caplog.text
        folder.unlink()
        daemon.heal()
        assert runtime.is_private(folder) and runtime.read_record(root)["socket"] == str(daemon.socket_path)
        assert client.status(root)["pid"] == os.getpid()


def test_nothing_moved_is_one_lstat_a_path_and_no_log(toy_vault, caplog):
    with served(toy_vault, watch=False) as daemon:
        ids = dict(daemon._ids)
        with caplog.at_level(logging.DEBUG, logger="brain"):
            daemon.heal()
        assert caplog.text == "" and daemon._ids == ids and not daemon.stopping.is_set()


def test_a_record_written_over_with_another_servers_is_made_again(toy_vault, tmp_path, caplog):
    # `cp` of a backup keeps the file (and a file removed and made again at once takes its inode
    # on ext4): the check of which file it is saw nothing, and every client read another server's
    # socket, token and pid (--stop's SIGTERM, when the server does not answer) for good.
    root = toy_vault.resolve()
    with served(toy_vault, watch=False) as daemon:
        path = runtime.record_path(root)
        ours = runtime.read_record(root)
        stale = {**ours, "pid": 1, "socket": str(tmp_path / "gone.sock"), "token": "an old one"}
        with open(path, "r+", encoding="utf-8") as handle:  # as cp writes over a file: in place
            handle.write(json.dumps(stale))
            handle.truncate()
        assert runtime.identity(path) == daemon._ids["record"]  # the same file
        assert client.status(root, timeout=1.0) is None  # no client finds it
        with caplog.at_level(logging.WARNING, logger="brain"):
            daemon.heal()
        assert runtime.read_record(root) == ours and client.status(root)["pid"] == os.getpid()
        assert "were removed or replaced (record); made again" in caplog.text
        caplog.clear()
        os.utime(path)  # touched, not changed: nothing to make again
        daemon.heal()
        assert caplog.text == ""


def test_ask_says_so_when_a_running_server_has_no_record(toy_vault):
    # It answered in-process in silence: a server that runs but cannot be found is news.
    with served(toy_vault, watch=False):
        runtime.record_path(toy_vault.resolve()).unlink()
        ask = run_brain(["ask", "--vault", str(toy_vault), QUESTION])
        assert ask.returncode == 0, ask.stderr
        assert (
            f"brain serve for {toy_vault.resolve()} holds the vault's lock (pid {os.getpid()}), but its record"
            " (serve.json) is gone; answering in this process"
        ).encode() in ask.stderr


def test_a_long_path_server_whose_tmp_name_another_took_listens_in_a_folder_of_its_own(tmp_path, monkeypatch):
    # After a cleanup removed <tmp>/brain-<uid>, anyone may make that name first (here a file,
    # as another user could): the server listens in a new folder made for it alone, and says so
    # in its record, never in theirs.
    vault = tmp_path / ("a vault whose name is long enough " + "x" * 80)
    shutil.copytree(TOY_VAULT, vault)
    short = Path(tempfile.mkdtemp(prefix="t", dir="/tmp"))  # sun_path is short: not tmp_path
    monkeypatch.setattr(tempfile, "tempdir", str(short))
    try:
        with served(vault, watch=False) as daemon:
            taken = short / f"brain-{os.getuid()}"
            assert daemon.socket_path.parent == taken
            shutil.rmtree(taken)
            taken.write_text("theirs\n")
            daemon.heal()
            folder = daemon.socket_path.parent
            assert folder.parent == short and folder.name.startswith(taken.name + "-") and runtime.is_private(folder)
            assert runtime.read_record(vault.resolve())["socket"] == str(daemon.socket_path)
            assert client.status(vault.resolve())["pid"] == os.getpid()
        assert sorted(p.name for p in short.iterdir()) == [taken.name] and taken.read_text() == "theirs\n"
    finally:
        shutil.rmtree(short)


@pytest.mark.slow
def test_a_server_whose_lock_file_cannot_be_opened_is_still_stopped(toy_vault, servers):
    # --stop said "no brain serve is running" and exit 0, while the server ran on: it went by the
    # lock alone, and a lock file that cannot be opened (here a folder where it was; a removed
    # one until heal made it again) read as no lock held.
    pid = servers(toy_vault)
    root = toy_vault.resolve()
    lock = runtime.lock_path(root)
    lock.unlink()
    lock.mkdir()  # heal cannot make it again: the window stays open
    try:
        assert not runtime.lock_is_held(root) and _answers(toy_vault, pid)
        status = run_brain(["status", "--vault", str(toy_vault)])
        assert f"server: up (pid {pid}".encode() in status.stdout, status.stdout
        stopped = run_brain(["serve", "--vault", str(toy_vault), "--stop"])
        assert stopped.returncode == 0, stopped.stderr
        assert f"stopped brain serve for {root} (pid {pid})".encode() in stopped.stdout, stopped.stdout
        assert not runtime.pid_alive(pid)  # gone before --stop said so
    finally:
        lock.rmdir()


@pytest.mark.slow
def test_asking_whether_a_server_runs_does_not_make_its_lock_file(toy_vault, servers):
    # A removed lock file was made again by the asking client (open for appending) and taken at
    # once: the server, which holds the removed one, looked stopped to --stop until heal.
    pid = servers(toy_vault)
    root = toy_vault.resolve()
    runtime.lock_path(root).unlink()
    result = daemon.stop_server(root)  # before heal (2 s) makes the lock file again
    assert result == daemon.Stopped(True, True, f"stopped brain serve for {root} (pid {pid})")
    assert not runtime.pid_alive(pid)
    assert not runtime.lock_path(root).exists()  # nobody made it


def test_a_server_starting_while_a_client_asks_whether_one_runs_starts(toy_vault):
    # `brain status` or `brain ask` holds the free lock for the moment it asks (lock_is_held):
    # a server starting in that moment said "already running (starting)" and did not start.
    root = toy_vault.resolve()
    runtime.make_private(runtime.runtime_dir(root))
    asking = os.open(runtime.lock_path(root), os.O_WRONLY | os.O_CREAT, 0o600)
    fcntl.flock(asking, fcntl.LOCK_EX | fcntl.LOCK_NB)
    threading.Timer(0.15, os.close, (asking,)).start()  # a slow moment of a client's: it lets go
    with served(toy_vault, watch=False) as server:
        assert runtime.lock_holder(root) == os.getpid() and server.service.state == "ready"


@pytest.mark.slow
def test_stop_signals_the_lock_holder_not_the_pid_a_record_put_back_names(toy_vault, servers, tmp_path):
    # An older server's record copied back over the server's (cp of a backup) names another
    # pid and a socket nobody listens on: until heal wrote the record again, --stop sent its
    # SIGTERM to that pid, and the server ran on.
    pid = servers(toy_vault)
    root = toy_vault.resolve()
    decoy = subprocess.Popen(["sleep", "60"])
    try:
        runtime.write_record(root, {"pid": decoy.pid, "socket": str(tmp_path / "gone.sock"), "vault": str(root)})
        result = daemon.stop_server(root, timeout=60)  # under load (CI on both cores) a stop took past 10 s
        assert result == daemon.Stopped(True, True, f"stopped brain serve for {root} (pid {pid})")
        assert decoy.poll() is None  # not signalled
    finally:
        decoy.kill()
        decoy.wait()
