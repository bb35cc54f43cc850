"""`brain index` and `brain prune` under another writer of the vault's index (`brain serve`'s
watcher, another `brain index`): they wait for it, bounded by --wait, and say so once."""

from __future__ import annotations

import contextlib
import os
import signal
import subprocess
import sys
import threading
import time
from collections.abc import Iterator
from pathlib import Path

import pytest
from click.testing import CliRunner
from conftest import FakeEmbedder, write
from serve_helpers import LAUNCHER, FakeClock, holding, served, wait_until

from brain import config
from brain.cli import cli
from brain.index import writer_lock
from brain.index.indexer import index_vault
from brain.index.writer_lock import VaultLocked, flock_holder, lock_path, vault_lock
from brain.server import runtime

WAITING = "waiting for another brain process indexing this vault"
LOCKED = "another brain process"  # then who, when the system says: " (pid 4242) is indexing this vault"


@pytest.fixture
def indexed(toy_vault: Path) -> Path:
    index_vault(toy_vault, embedder=FakeEmbedder(), progress=False)
    write(toy_vault, "Pending.md", "# Pending\n\nA note saved while another writer held the index.\n")
    return toy_vault


@contextlib.contextmanager
def held_elsewhere(vault: Path, seconds: float = 120.0, *, server_lock: bool = False) -> Iterator[subprocess.Popen]:
    """The vault's writer lock, held by another process (as a `brain index` in another shell holds
    it) for ``seconds``, then let go by its exit; killed at the end whatever happens.
    ``server_lock``: it holds the vault's serve.lock too, its pid written there, as a `brain
    serve` does."""
    serve_lock = ""
    if server_lock:
        runtime.make_private(runtime.runtime_dir(vault.resolve()))
        serve_lock = str(runtime.lock_path(vault.resolve()))
    with holding(
        "import fcntl, os, sys, time\n"
        "if sys.argv[3]:\n"
        "    s = open(sys.argv[3], 'a'); fcntl.flock(s, fcntl.LOCK_EX); s.write(f'{os.getpid()}\\n'); s.flush()\n"
        "f = open(sys.argv[1], 'a'); fcntl.flock(f, fcntl.LOCK_EX)\n"
        "print('held', flush=True); time.sleep(float(sys.argv[2]))",
        str(lock_path(config.index_dir(vault.resolve()))),
        str(seconds),
        serve_lock,
    ) as holder:
        yield holder


def _invoke(*args: str):
    return CliRunner().invoke(cli, list(args))


@pytest.mark.parametrize(
    "command",
    [["index"], ["index", "--repair"], ["index", "--rebuild", "--yes"], ["prune", "--vacuum"]],
    ids=["index", "repair", "rebuild", "prune"],
)
def test_a_writer_command_waits_for_the_other_writer_then_runs(indexed, command):
    with held_elsewhere(indexed, seconds=1.5) as holder:
        started = time.monotonic()
        result = _invoke(*command, "--vault", str(indexed))
        took = time.monotonic() - started
    assert result.exit_code == 0, result.output
    # one line, when the wait began, naming the holder by the pid the system gives
    assert result.stderr.count(WAITING) == 1
    assert f"{WAITING} (pid {holder.pid})…\n" in result.stderr
    assert took >= 1.0  # it did wait for the holder to let go
    if command == ["index"]:
        assert "1 new" in result.stdout


def test_a_server_whose_record_is_gone_is_named_by_the_pid_in_its_lock(indexed):
    """serve.json gone (and not made again: a full disk), the pid the server wrote into
    serve.lock still names it."""
    with held_elsewhere(indexed, seconds=1.0, server_lock=True) as holder:
        assert runtime.read_record(indexed.resolve()) is None
        result = _invoke("index", "--vault", str(indexed))
    assert result.exit_code == 0, result.output
    assert f"{WAITING} (brain serve, pid {holder.pid})…" in result.stderr


def test_wait_0_fails_at_once_with_the_one_line_error(indexed, monkeypatch):
    # on a clock of its own: "at once" is never a sleep (it was bounded at 5 s of wall time)
    clock = FakeClock()
    monkeypatch.setattr(writer_lock, "time", clock)
    with held_elsewhere(indexed) as holder:
        result = _invoke("index", "--vault", str(indexed), "--wait", "0")
    assert clock.slept == []
    assert result.exit_code == 1
    # the holder named in the error, as no waiting line named it
    assert result.stderr.startswith(f"Error: {LOCKED} (pid {holder.pid}) is indexing this vault (")
    assert result.stderr.count("\n") == 1
    assert "try again when it is done" in result.stderr and WAITING not in result.stderr


@pytest.mark.parametrize(
    "command",
    [["index", "--wait", "0"], ["index", "--repair", "-q", "--wait", "0.2"], ["prune", "--vacuum", "--wait", "0"]],
    ids=["index", "repair-quiet", "prune"],
)
def test_giving_up_names_the_server_holding_the_lock(indexed, command):
    """With --wait 0, or --quiet, no waiting line named the holder, and the error said only
    "another brain process": it names `brain serve` now, as the waiting line does."""
    with held_elsewhere(indexed, server_lock=True) as holder:
        result = _invoke(*command, "--vault", str(indexed))
    assert result.exit_code == 1
    assert result.stderr.startswith(f"Error: {LOCKED} (brain serve, pid {holder.pid}) is indexing this vault (")
    assert result.stderr.count("\n") == 1, result.stderr


@pytest.mark.parametrize("command", [["index"], ["prune", "--vacuum"]], ids=["index", "prune"])
def test_a_wait_that_runs_out_ends_in_the_error(indexed, command, monkeypatch):
    # on a clock of its own, which moves only as the wait sleeps: it waits to the end of its
    # 0.5 s, a look every LOOK_EVERY, and not beyond (it was bounded at 5 s of wall time)
    clock = FakeClock()
    monkeypatch.setattr(writer_lock, "time", clock)
    with held_elsewhere(indexed):
        result = _invoke(*command, "--vault", str(indexed), "--wait", "0.5")
    assert result.exit_code == 1
    lines = result.stderr.splitlines()
    assert len(lines) == 2 and lines[0].startswith(WAITING), result.stderr
    assert lines[1].startswith(f"Error: {LOCKED}") and "waited 0.5 s for it" in lines[1]
    assert clock.slept == pytest.approx([writer_lock.LOOK_EVERY] * 5)


def test_quiet_waits_without_the_line(indexed):
    with held_elsewhere(indexed, seconds=0.5):
        result = _invoke("index", "--vault", str(indexed), "-q")
    assert result.exit_code == 0 and result.stderr == ""


# A test run started in the background by a script (`./scripts/test &` in a non-interactive
# shell): its processes inherit SIGINT ignored, and a process that exec's brain keeps it so
IGNORING_CTRL_C = (
    "import os, signal, sys; signal.signal(signal.SIGINT, signal.SIG_IGN); os.execv(sys.executable, sys.argv[1:])"
)


@pytest.mark.parametrize("started", ["in-a-terminal", "in-the-background"])
def test_ctrl_c_while_waiting_is_aborted_not_a_traceback(indexed, started):
    """Also in a test run whose SIGINT is ignored: brain ignored the key there and waited for the
    holder (120 s), then indexed."""
    launch = [sys.executable, str(LAUNCHER), "index", "--vault", str(indexed)]
    if started == "in-the-background":
        launch = [sys.executable, "-c", IGNORING_CTRL_C, *launch]
    with held_elsewhere(indexed, seconds=3600):  # held past the guard below: a wait for it fails
        env = dict(os.environ, PYTHONPATH=os.pathsep.join(sys.path))
        proc = subprocess.Popen(
            launch,
            stdout=subprocess.PIPE,
            stderr=subprocess.PIPE,
            text=True,
            env=env,
        )
        try:
            assert proc.stderr is not None
            first = proc.stderr.readline()
            assert first.startswith(WAITING), first
            proc.send_signal(signal.SIGINT)
            # a guard longer than a loaded machine takes to end (30 s ran out at load 20, "Aborted!"
            # said, the process still ending); a brain that waited for the holder cannot end in it
            _, rest = proc.communicate(timeout=300)
        finally:
            proc.kill()
    assert proc.returncode == 1
    assert rest.strip() == "Aborted!", rest


def test_brain_index_waits_for_the_pass_of_brain_serve_and_names_it(indexed):
    """End to end: the server's watcher is indexing a burst of notes (slowly: each embedding
    call takes 0.5 s, so the pass holds the lock over a second) when `brain index` starts; it
    waits, names the server, then finds nothing left to do."""

    class Slow(FakeEmbedder):
        def embed_documents(self, texts, *, progress=False):
            time.sleep(0.5)
            return super().embed_documents(texts, progress=progress)

    with served(indexed, embedder=Slow()) as daemon:
        directory = config.index_dir(indexed.resolve())
        for i in range(20):
            write(indexed, f"Burst/Note {i}.md", f"# Note {i}\n\nA burst of notes about otters, number {i}.\n")
        with open(lock_path(directory), "a") as probe:
            wait_until(lambda: flock_holder(probe.fileno()) is not None, 30, "the server's pass to take the lock")
        result = _invoke("index", "--vault", str(indexed), "--json")
        assert daemon.service.last_update is not None
    assert result.exit_code == 0, result.output
    assert f"{WAITING} (brain serve, pid {os.getpid()})…" in result.stderr  # the served daemon runs in this process
    assert '"new": 0' in result.stdout  # the server's pass had indexed them all


def test_wait_is_refused_with_prune_ledger():
    """--ledger prunes brain.db, which takes no vault's lock: a --wait there would look applied."""
    result = _invoke("prune", "--ledger", "--vacuum", "--wait", "5")
    assert result.exit_code == 2 and "--wait is for a vault's index" in result.output


@pytest.mark.parametrize("command", [["index"], ["prune", "--vacuum"]])
def test_a_wait_of_nan_seconds_is_refused(indexed, command):
    # nan passed FloatRange (it is neither below 0 nor above anything) and waited for ever.
    result = _invoke(*command, "--vault", str(indexed), "--wait", "nan")
    assert result.exit_code == 2 and "'nan' is not a number of seconds" in result.output


def test_a_writer_waiting_on_a_lock_file_its_holder_removed_takes_the_file_there_now(tmp_path):
    """A first `brain index` that fails removes the lock file it made; a second one waiting on that
    file meanwhile was given the lock on a file no longer at its path, while a third made a new file
    there and held it too: two writers of one index. The waiter takes the file at the path."""
    directory = tmp_path / "vaults" / "notes-0123456789"
    waiting, holding, done = threading.Event(), threading.Event(), threading.Event()

    def second() -> None:
        with vault_lock(directory, wait=60, waiting=lambda _pid: waiting.set()):
            holding.set()
            done.wait(60)

    first = vault_lock(directory)
    first.__enter__()
    thread = threading.Thread(target=second, daemon=True)
    thread.start()
    try:
        assert waiting.wait(60)  # the second has the file open, waiting for it
        lock_path(directory).unlink()  # as the first removes it (HeldLock.drop_file), still held
        first.__exit__(None, None, None)
        assert holding.wait(60)
        with pytest.raises(VaultLocked), vault_lock(directory):  # a third writer finds the index held
            pass
    finally:
        done.set()
        thread.join(60)
    with vault_lock(directory):  # and free once the second is done
        pass


@pytest.mark.skipif(os.name == "nt", reason="symlinks need privileges on Windows")
def test_a_lock_file_that_is_a_symlink_is_taken_not_spun_on(tmp_path):
    """The lock file taken was checked to be the file at its path by the path's own identity
    (lstat): a symbolic link there (BRAIN_HOME's vaults/ kept by a dotfiles manager, a restore
    that keeps links) never was, and every writer (`brain index`, `brain ask`'s update, a pass of
    `brain serve`) took it, let it go and took it again, for ever, at 100% of a core, even with
    --wait 0. The file the link leads to is the lock; a second writer is still turned away."""
    directory = tmp_path / "vaults" / "notes-0123456789"
    directory.parent.mkdir(parents=True)
    target = tmp_path / "elsewhere" / "notes.lock"
    target.parent.mkdir()
    target.touch()
    lock_path(directory).symlink_to(target)
    script = (
        "import sys\n"
        "from pathlib import Path\n"
        "from brain.index.writer_lock import VaultLocked, vault_lock\n"
        "with vault_lock(Path(sys.argv[1])):\n"
        "    try:\n"
        "        with vault_lock(Path(sys.argv[1])):\n"
        "            print('two writers')\n"
        "    except VaultLocked:\n"
        "        print('one writer')\n"
    )
    run = subprocess.run(  # a guard: the second lock, were it waited for, would never come
        [sys.executable, "-c", script, str(directory)], capture_output=True, text=True, timeout=120, check=False
    )
    assert run.returncode == 0 and run.stdout == "one writer\n", run.stderr[-2000:]


@pytest.mark.skipif(os.name == "nt", reason="symlinks need privileges on Windows")
def test_status_sees_a_writer_holding_a_lock_file_that_is_a_symlink(tmp_path):
    """Writers take a lock file that is a symbolic link (the file it leads to), but `brain status`
    opened it with O_NOFOLLOW, failed, and said no one indexed while one did. It follows the link
    as writers do (the folder is private: the link is the user's own); one leading to no regular
    file (a FIFO: never waited on) is no writer's lock."""
    from brain.index.writer_lock import indexing_now

    directory = tmp_path / "vaults" / "notes-0123456789"
    config.private_folder(directory.parent)
    target = tmp_path / "elsewhere" / "notes.lock"
    target.parent.mkdir()
    target.touch()
    lock_path(directory).symlink_to(target)
    assert indexing_now(directory) is None
    holder = subprocess.Popen([sys.executable, "-c", HOLD, str(directory)], stdout=subprocess.PIPE, text=True)
    try:
        assert holder.stdout is not None and holder.stdout.readline() == "held\n"
        assert indexing_now(directory) in ({"pid": holder.pid}, {"pid": None})  # pid: where the system says
    finally:
        holder.kill()
        holder.wait(20)
    assert indexing_now(directory) is None
    if hasattr(os, "mkfifo"):
        target.unlink()
        os.mkfifo(target)
        assert indexing_now(directory) is None


HOLD = (
    "import sys, time\n"
    "from pathlib import Path\n"
    "from brain.index.writer_lock import vault_lock\n"
    "with vault_lock(Path(sys.argv[1])):\n"
    "    print('held', flush=True)\n"
    "    time.sleep(60)\n"
)
