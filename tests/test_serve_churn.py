"""`brain serve` under churn and through its life: what a watcher must survive (a vault swapped
under it, dangling symlinks, file names that are not UTF-8), and the server's folder and
record when something else got there first."""

from __future__ import annotations

import contextlib
import os
import signal
import stat
import subprocess
import sys
import time
from collections.abc import Iterator
from pathlib import Path

import pytest
from click.testing import CliRunner
from conftest import write
from index_helpers import index_into
from serve_helpers import FakeClock, served, wait_until

from brain import config
from brain.cli import cli
from brain.server import runtime
from brain.server.daemon import Daemon


def _index(vault: Path) -> None:
    from conftest import FakeEmbedder

    index_into(Path(os.environ["BRAIN_HOME"]), vault, FakeEmbedder())


def _paths(daemon: Daemon) -> set[str]:
    return daemon.service.run(lambda r: r.store.note_paths(), timeout=120)  # a guard against a hang


def test_a_dangling_symlink_does_not_keep_a_polling_watcher_busy(toy_vault):
    """The poller reports a dangling symlink as deleted on every poll: that is no change. Taken
    for one, it kept the watcher busy for good (an index pass every poll, every change served
    only after the longest batch, every ask waiting for it)."""
    os.symlink(toy_vault / "Nowhere" / "Gone.md", toy_vault / "Dangling.md")
    _index(toy_vault)
    with served(toy_vault, force_polling=True, settle_ms=300) as daemon:
        watcher = daemon.service.watcher
        write(toy_vault, "First.md", "# First\n\nThe okapi note.\n")
        wait_until(lambda: "First.md" in _paths(daemon), 30, "the first change")
        # never settled while the link is taken for a change; bounded at 3 s, a loaded machine's
        # pass could take longer, as the second change's bound of 4 s (both guards only, now)
        wait_until(lambda: not watcher.busy, 120, "the watcher to settle")
        batches = watcher.batches
        time.sleep(2)
        assert watcher.batches == batches and not watcher.busy
        write(toy_vault, "Second.md", "# Second\n\nThe tapir note.\n")
        wait_until(lambda: "Second.md" in _paths(daemon), 120, "the second change")


@pytest.mark.parametrize("polling", [False, True])
def test_a_note_saved_between_the_start_pass_and_the_watch_is_served(toy_vault, monkeypatch, polling):
    """The start pass walks the vault before the watch begins, and no event tells of a note
    saved in between (under polling a walk for changes of mode came first; on a loaded machine,
    seconds): it was served only after the full pass five minutes on (a CI run: not in 30 s).
    A pass once the watch is on finds it, and the server is busy until then."""
    from brain.server import watcher as watcher_module

    real = watcher_module.VaultWatcher._watch

    def saved_first(self, force_polling):  # the save lands in the gap, before any watch exists
        write(toy_vault, "In the gap.md", "# In the gap\n\nSaved while the watch was starting.\n")
        return real(self, force_polling)

    monkeypatch.setattr(watcher_module.VaultWatcher, "_watch", saved_first)
    _index(toy_vault)
    with served(toy_vault, force_polling=polling, settle_ms=150) as daemon:
        wait_until(lambda: "In the gap.md" in _paths(daemon), 15, "the note saved in the gap")


def test_a_file_written_on_and_on_beside_the_notes_does_not_hold_back_a_save(toy_vault):
    """Events that change nothing (an attachment being downloaded, a log in the vault) are not
    changes, but they are not quiet either: a note saved among them must still be served."""
    import threading

    _index(toy_vault)
    with served(toy_vault, settle_ms=300) as daemon:
        stop = threading.Event()

        def scribble() -> None:
            with open(toy_vault / "download.pdf.part", "a") as handle:
                while not stop.wait(0.05):
                    handle.write("x" * 100)
                    handle.flush()

        thread = threading.Thread(target=scribble)
        thread.start()
        try:
            time.sleep(0.5)
            write(toy_vault, "Saved.md", "# Saved\n\nThe pangolin note.\n")
            wait_until(lambda: "Saved.md" in _paths(daemon), 60, "the save, while the other file is written")
        finally:
            stop.set()
            thread.join()


def test_a_vault_swapped_for_another_folder_is_watched_again(toy_vault, tmp_path):
    """inotify watches a folder, not a path: after ``mv vault vault.old && mv new vault`` (a
    restore, a fresh clone, a sync tool's swap) the watcher heard only the old folder, and
    served the old notes until the next rescan, five minutes later."""
    import shutil

    _index(toy_vault)
    with served(toy_vault, settle_ms=300) as daemon:
        shutil.copytree(toy_vault, tmp_path / "new")
        write(tmp_path / "new", "Restored.md", "# Restored\n\nThe quokka note.\n")
        os.rename(toy_vault, tmp_path / "old")
        os.rename(tmp_path / "new", toy_vault)
        wait_until(lambda: "Restored.md" in _paths(daemon), 60, "the new folder's note")
        write(toy_vault, "After.md", "# After\n\nThe numbat note.\n")
        wait_until(lambda: "After.md" in _paths(daemon), 60, "a save in the new folder")

        shutil.rmtree(toy_vault)  # deleted, then made again (once the server has seen it gone)
        wait_until(lambda: daemon.service.watcher.gone, 60, "the server to see the vault gone")
        toy_vault.mkdir()
        write(toy_vault, "Again.md", "# Again\n\nThe wombat note.\n")
        wait_until(lambda: _paths(daemon) == {"Again.md"}, 60, "the vault made again")
        wait_until(lambda: not daemon.service.watcher.busy, 60, "the watcher to settle")


def test_a_file_name_that_is_not_utf8_does_not_cost_the_watcher_its_events(toy_vault, caplog):
    """watchfiles fails on such a name (``Unable to decode path``), in either mode: it was taken
    for running out of inotify watches, and the server fell back to polling for good."""
    _index(toy_vault)
    with served(toy_vault) as daemon:
        watcher = daemon.service.watcher
        wait_until(lambda: watcher.mode == "events", 60, "watching by events")
        with open(os.path.join(os.fsencode(toy_vault), b"Caf\xe9.md"), "wb") as handle:
            handle.write(b"# Cafe\n\nLatin-1 in the name.\n")
        write(toy_vault, "Beside.md", "# Beside\n\nThe axolotl note.\n")
        wait_until(lambda: "Beside.md" in _paths(daemon), 10, "the note saved beside it")
        time.sleep(1)  # time for watchfiles to fail on the name, and the watcher to fall back: it may not
        write(toy_vault, "Later.md", "# Later\n\nThe ocelot note.\n")
        wait_until(lambda: "Later.md" in _paths(daemon), 5, "a later save")
        assert watcher.mode == "events"
        assert not any("polling instead" in r.getMessage() for r in caplog.records)


def test_a_server_folder_others_can_write_to_is_made_private_before_anything_is_put_in_it(toy_vault):
    """Made 0777 beforehand (by hand, a restore, a umask of 0), others could swap the socket or
    the record for theirs and be sent every question: the server narrows it to 0700."""
    _index(toy_vault)
    folder = runtime.runtime_dir(toy_vault.resolve())
    folder.mkdir(parents=True)
    folder.chmod(0o777)
    with served(toy_vault, watch=False) as daemon:
        assert stat.S_IMODE(folder.stat().st_mode) == 0o700
        assert stat.S_IMODE(os.stat(daemon.socket_path).st_mode) == 0o600


def test_a_server_folder_that_is_not_a_private_folder_of_ours_is_one_line_not_a_traceback(
    toy_vault, tmp_path, brain_logger
):
    """A symlink where the server's folder goes is refused, in one line: it was a traceback.
    (The private folder in /tmp that a socket path too long for the platform goes to is not
    refused when taken: the server listens in a folder of its own then, test_serve's
    test_a_long_path_socket_starts_when_another_user_took_the_tmp_name.)"""
    _index(toy_vault)
    elsewhere = tmp_path / "elsewhere"
    elsewhere.mkdir(mode=0o700)
    folder = runtime.runtime_dir(toy_vault.resolve())
    folder.parent.mkdir(parents=True, exist_ok=True)
    folder.symlink_to(elsewhere)
    result = CliRunner().invoke(cli, ["serve", "--vault", str(toy_vault), "--no-watch"])  # logs to serve.log
    assert result.exit_code == 1, result.output
    assert "is not a private folder of this user" in result.stderr
    assert "Traceback" not in result.output + result.stderr
    assert not list(elsewhere.iterdir())


HANDLED = (signal.SIGTERM, signal.SIGINT, signal.SIGHUP)


def test_a_server_run_in_this_process_gives_the_signals_back_failed_or_stopped(toy_vault, tmp_path, brain_logger):
    """`brain serve` run in another program's process (a test's, by CliRunner) left its SIGTERM
    and SIGINT handlers there, bound to a server long gone, whether it failed to start or had
    served and stopped: that process ignored Ctrl-C and SIGTERM from then on (a run of the serve
    tests under load, past this one, could not be stopped but by kill -9)."""
    import threading

    from brain.server import client

    before = [signal.getsignal(signum) for signum in HANDLED]
    _index(toy_vault)
    folder = runtime.runtime_dir(toy_vault.resolve())
    folder.parent.mkdir(parents=True, exist_ok=True)
    folder.symlink_to(tmp_path)  # not a private folder of this user: the start fails
    result = CliRunner().invoke(cli, ["serve", "--vault", str(toy_vault), "--no-watch"])
    assert result.exit_code == 1 and "is not a private folder of this user" in result.stderr, result.output
    assert [signal.getsignal(signum) for signum in HANDLED] == before
    folder.unlink()

    def stop_by_sigterm() -> None:  # as `kill` would: the server's handler stops it
        root = toy_vault.resolve()
        deadline = time.monotonic() + 60
        while time.monotonic() < deadline and (client.status(root, timeout=1.0) or {}).get("state") != "ready":
            time.sleep(0.05)
        if signal.getsignal(signal.SIGTERM) is not before[0]:  # the server's: else it would end pytest
            os.kill(os.getpid(), signal.SIGTERM)

    stopper = threading.Thread(target=stop_by_sigterm, daemon=True)
    stopper.start()
    result = CliRunner().invoke(cli, ["serve", "--vault", str(toy_vault), "--no-watch"])
    stopper.join(60)
    assert result.exit_code == 0, result.output + result.stderr
    assert "stopped serving" in (config.log_dir() / "serve.log").read_text()
    assert [signal.getsignal(signum) for signum in HANDLED] == before


def _graph_edges(vault: Path) -> int:
    from conftest import FakeEmbedder

    from brain.recall.opening import open_snapshot

    recaller = open_snapshot(vault.resolve(), FakeEmbedder(), rerank_model=False)
    try:
        return recaller.link_graph().edges
    finally:
        recaller.close()


def _as_if_killed_before_its_links_were_resolved(vault: Path) -> None:
    """The state a pass killed mid-way leaves: notes committed, their links not yet resolved."""
    import sqlite3

    db = sqlite3.connect(config.index_dir(vault.resolve()) / "index.db")
    with db:
        db.execute("UPDATE links SET target_id = NULL, status = 'pending'")
        db.execute("UPDATE meta SET value = '1' WHERE key = 'links_dirty'")
    db.close()


@pytest.mark.parametrize("edited", [False, True])
def test_after_a_kill_mid_pass_the_server_serves_the_links_its_first_pass_resolves(toy_vault, edited):
    """The index as it was answers while the first pass runs; when that was a killed pass's
    state, its links unresolved, the pass resolved them but the server kept the graph without
    them: for good when nothing else changed, and taken over into the next snapshot when a note did."""
    _index(toy_vault)
    edges = _graph_edges(toy_vault)
    assert edges > 0
    _as_if_killed_before_its_links_were_resolved(toy_vault)
    if edited:
        note = toy_vault / "AI" / "Agent memory.md"
        note.write_text(note.read_text(encoding="utf-8") + "\nThe capybara clause applies.\n", encoding="utf-8")
    with served(toy_vault) as daemon:
        assert daemon.service._snapshot.recaller.link_graph().edges == edges
    assert _graph_edges(toy_vault) == edges


def test_status_says_a_server_that_holds_the_lock_but_does_not_answer_is_not_answering(toy_vault):
    """Hung, stopped (SIGSTOP) or still binding: `server: none` sent the user to start a second
    one, which is refused as already running."""
    import fcntl
    import json

    _index(toy_vault)
    root = toy_vault.resolve()
    runtime.make_private(runtime.runtime_dir(root))
    runtime.write_record(root, {"pid": os.getpid(), "socket": str(runtime.runtime_dir(root) / "serve.sock")})
    with open(runtime.lock_path(root), "a") as lock:
        fcntl.flock(lock, fcntl.LOCK_EX | fcntl.LOCK_NB)
        result = CliRunner().invoke(cli, ["status", "--vault", str(toy_vault)])
        as_json = CliRunner().invoke(cli, ["status", "--vault", str(toy_vault), "--json"])
    assert result.exit_code == 0, result.output
    line = next(line for line in result.stdout.splitlines() if line.startswith("server:"))
    assert line.startswith(f"server: not answering (pid {os.getpid()}, it holds the vault's lock"), line
    assert json.loads(as_json.stdout)["server"] is None
    result = CliRunner().invoke(cli, ["status", "--vault", str(toy_vault)])  # the lock let go: none
    assert "server: none" in result.stdout


@contextlib.contextmanager
def _lock_holder(root: Path, *, ignore_sigterm: bool = False) -> Iterator[subprocess.Popen[bytes]]:
    """A process holding the vault's server lock, named by its record: a server, to ``--stop``,
    that does not answer on its socket."""
    ignore = "import signal; signal.signal(signal.SIGTERM, signal.SIG_IGN);" if ignore_sigterm else ""
    runtime.make_private(runtime.runtime_dir(root))
    holder = subprocess.Popen(
        [
            sys.executable,
            "-c",
            ignore + "import fcntl, sys, time; f = open(sys.argv[1], 'a'); fcntl.flock(f, fcntl.LOCK_EX);"
            "print('held', flush=True); time.sleep(60)",
            str(runtime.lock_path(root)),
        ],
        stdout=subprocess.PIPE,
    )
    try:
        assert holder.stdout is not None and holder.stdout.readline() == b"held\n"
        runtime.write_record(root, {"pid": holder.pid, "socket": str(runtime.runtime_dir(root) / "serve.sock")})
        yield holder
    finally:
        if holder.poll() is None:
            holder.kill()
            holder.wait(10)
        if holder.stdout:
            holder.stdout.close()


def test_stop_names_the_signal_that_ends_a_server_that_ignores_sigterm(toy_vault, monkeypatch):
    """A server that ignores SIGTERM (hung): `--stop` suggested `kill PID`, which does nothing."""
    from brain.server import daemon
    from brain.server.daemon import stop_server

    # on a clock of its own, moved by its sleeps: it looks for the server's end to its 1 s and
    # not beyond (it was bounded at 10 s of wall time, which a loaded machine can pass)
    clock = FakeClock()
    monkeypatch.setattr(daemon, "time", clock)
    root = toy_vault.resolve()
    with _lock_holder(root, ignore_sigterm=True) as holder:
        running, stopped, message = stop_server(root, timeout=1.0)
        assert running and not stopped and clock.slept == pytest.approx([0.1] * 10)
        assert message.endswith(f"did not stop within 1 s; `kill -9 {holder.pid}` ends it"), message
        assert holder.poll() is None  # SIGTERM did nothing, as the message says


def test_stop_ends_a_server_stopped_by_sigstop(toy_vault):
    """Ctrl-Z'd (SIGSTOP) it held SIGTERM back: `brain status` said `--stop` stops it, and --stop
    waited 15 s, then asked for kill -9."""
    from brain.server.daemon import stop_server

    root = toy_vault.resolve()
    with _lock_holder(root) as holder:
        os.kill(holder.pid, signal.SIGSTOP)
        running, stopped, message = stop_server(root, timeout=5.0)
        assert running and stopped, message
        assert holder.wait(10) == -signal.SIGTERM


def test_stop_that_fails_exits_non_zero(toy_vault, monkeypatch):
    # A server that did not stop is a failure a script must see, not a message and exit 0.
    from click.testing import CliRunner

    from brain.cli import cli
    from brain.server import daemon

    message = "brain serve for x (pid 7) did not stop within 15 s; `kill -9 7` ends it"
    monkeypatch.setattr(daemon, "stop_server", lambda root: daemon.Stopped(True, False, message))
    result = CliRunner().invoke(cli, ["serve", "--vault", str(toy_vault), "--stop"])
    assert result.exit_code == 1 and result.output == f"Error: {message}\n"
    monkeypatch.setattr(daemon, "stop_server", lambda root: daemon.Stopped(True, True, "stopped brain serve for x"))
    result = CliRunner().invoke(cli, ["serve", "--vault", str(toy_vault), "--stop"])
    assert result.exit_code == 0 and result.output == "stopped brain serve for x\n"


@pytest.mark.parametrize(
    ("extra", "named"),
    [
        (["--detach"], "--detach"),
        (["--http", "127.0.0.1:8181"], "--http"),
        (["--no-watch", "--detach"], "--detach, --no-watch"),
    ],
)
def test_stop_with_an_option_of_starting_is_a_usage_error(toy_vault, monkeypatch, extra, named):
    # `brain serve --stop --detach` stopped the server and dropped --detach in silence
    from brain.server import daemon

    stopped = []
    monkeypatch.setattr(
        daemon, "stop_server", lambda root: stopped.append(root) or daemon.Stopped(True, True, "stopped")
    )
    result = CliRunner().invoke(cli, ["serve", "--vault", str(toy_vault), "--stop", *extra])
    assert result.exit_code == 2, result.output
    assert f"--stop stops the vault's server; {named} shapes one to start: drop it" in result.output
    assert stopped == []


def test_a_long_pass_says_how_far_it_is_in_the_log(toy_vault, monkeypatch, caplog):
    """300 notes copied in at once, a slow model: the log said nothing of the pass until it
    ended (5,000 new notes, minutes with a real model); now a line every so often."""
    import logging

    from conftest import FakeEmbedder

    import brain.index.indexer as indexer

    class Slow(FakeEmbedder):
        def embed_documents(self, texts, *, progress=False):
            time.sleep(0.05)
            return super().embed_documents(texts, progress=progress)

    _index(toy_vault)
    monkeypatch.setattr(indexer, "CHUNKS_PER_BATCH", 8)
    monkeypatch.setattr(indexer, "PROGRESS_LOG_SECONDS", 0.2, raising=False)  # none before
    caplog.set_level(logging.INFO, logger="brain")
    with served(toy_vault, embedder=Slow()) as daemon:
        for i in range(300):
            write(toy_vault, f"Copied/Note {i}.md", f"# Note {i}\n\nCopied in with the others.\n")
        wait_until(lambda: "Copied/Note 299.md" in _paths(daemon), 60, "the copied notes")
    said = [r.getMessage() for r in caplog.records if r.getMessage().startswith("indexing: ")]
    assert said, "no progress line in the log"
    assert all(line.endswith(" s)") and " of 300 notes indexed" in line for line in said), said


def test_a_long_pass_says_how_far_its_embedding_is_within_one_batch(toy_vault, monkeypatch, caplog):
    """The notes' count moved once a batch was committed: a bulk batch of 4,096 chunks, half an
    hour of a real model on a busy laptop, said nothing for as long."""
    import logging

    from conftest import FakeEmbedder

    import brain.index.indexer as indexer

    class Slow(FakeEmbedder):
        def embed_documents(self, texts, *, progress=False):
            time.sleep(0.002 * len(texts))
            return super().embed_documents(texts, progress=progress)

    _index(toy_vault)
    monkeypatch.setattr(indexer, "PROGRESS_LOG_SECONDS", 0.2, raising=False)
    monkeypatch.setattr(indexer, "EMBED_LOG_SLICE", 32, raising=False)  # none before
    caplog.set_level(logging.INFO, logger="brain")
    with served(toy_vault, embedder=Slow()) as daemon:
        for i in range(400):  # 400 chunks, one batch
            write(toy_vault, f"Copied/Note {i}.md", f"# Note {i}\n\nCopied in with the others.\n")
        wait_until(lambda: "Copied/Note 399.md" in _paths(daemon), 60, "the copied notes")
        served_text = daemon.service.run(
            lambda r: r.store.conn.execute(
                "SELECT count(*) FROM chunks c JOIN notes n ON n.id = c.note_id WHERE n.path LIKE 'Copied/%'"
            ).fetchone()[0],
            timeout=10,
        )
    said = [r.getMessage() for r in caplog.records if r.getMessage().startswith("indexing: ")]
    assert any(" chunks embedded (" in line for line in said), said
    assert served_text == 400


def test_a_note_saved_while_a_pass_runs_is_never_taken_for_served(toy_vault):
    """Between the end of a pass and watchfiles handing over the events that came while it ran
    (50 to 300 ms), the watcher said it was not busy: `brain ask` answered without a note saved
    during the pass and said nothing, and `brain status` said fresh. The pass of the notes
    copied in is held (its embedding waits) until the note is saved: it took 3 ms a note, and on
    a loaded machine it could end before the test saw it run, or before the save."""
    import threading

    _index(toy_vault)
    with served(toy_vault) as daemon:
        watcher, service = daemon.service.watcher, daemon.service
        saved, embed = threading.Event(), service.embedder.embed_documents

        def held(texts, *, progress=False):
            saved.wait(120)  # a guard against a hang only: set once the note is saved
            return embed(texts, progress=progress)

        service.embedder.embed_documents = held
        try:
            for i in range(300):
                write(toy_vault, f"Copied/Note {i}.md", f"# Note {i}\n\nCopied in with the others.\n")
            wait_until(lambda: watcher._running, 120, "the pass")
            write(toy_vault, "Late.md", "# Late\n\nSaved while the pass ran.\n")
        finally:
            saved.set()
        wait_until(lambda: not watcher._running, 120, "the pass to end")
        deadline = time.monotonic() + 120  # a guard against a hang only
        while watcher.busy and time.monotonic() < deadline:
            time.sleep(0.001)
        assert "Late.md" in _paths(daemon)
