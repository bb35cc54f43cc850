"""Shared fixtures. The fake embedder (``FakeEmbedder``, in fakes.py: a child process imports it
without pytest) lets most tests run without torch."""

from __future__ import annotations

import contextlib
import logging
import os
import re
import shutil
import sys
import time
from pathlib import Path

import pytest
from fakes import FakeEmbedder  # noqa: F401 - sets the run's environment, registers fake:<dim>

# Every process this test run starts inherits the mark, detached servers included: the
# session's end finds any `brain serve`/`brain mcp` left behind by it (and only by it).
SESSION_MARK = "PYTEST_BRAIN_SESSION"
os.environ.setdefault(SESSION_MARK, str(os.getpid()))

ROOT = Path(__file__).resolve().parents[1]
TOY_VAULT = ROOT / "toy_vault"
SHARED = ROOT.parent / "shared"
REAL_VAULTS = SHARED / "bench" / "vaults"
FIXTURES = SHARED / "fixtures" / "claude-code"


@pytest.fixture(autouse=True)
def loggers_restored():
    """The CLI's setup_logging (quiet: errors only), `brain serve`'s and the MCP server's rewire
    the root and "brain" loggers. Every test starts with "brain" as a fresh process has it (no
    handler, no level of its own, propagating) and the root logger is put back after it: else a
    test's caplog misses the warnings it checks for, depending on which test ran before."""
    import logging

    brain = logging.getLogger("brain")
    for handler in list(brain.handlers):
        brain.removeHandler(handler)
    brain.setLevel(logging.NOTSET)
    brain.propagate = True
    root = logging.getLogger()
    saved = (list(root.handlers), root.level)
    yield
    for logger, handlers, level in ((root, *saved), (brain, [], logging.NOTSET)):
        for handler in list(logger.handlers):
            if handler not in handlers:
                handler.close()
            logger.removeHandler(handler)
        for handler in handlers:
            logger.addHandler(handler)
        logger.setLevel(level)
    brain.propagate = True


@pytest.fixture(autouse=True)
def dotenv_record_restored():
    """What a test's loading of .env files recorded (which file set a variable, which names it
    passed over) goes with the test, as its environment does: a test that loaded a .env setting
    BRAIN_VAULT left config.dotenv_origin saying so, and a later test's "vault not found" named
    that file as where BRAIN_VAULT was set."""
    from brain import config

    saved = dict(config.dotenv_origin), dict(config.dotenv_passed_over)
    yield
    for record, was in zip((config.dotenv_origin, config.dotenv_passed_over), saved):
        record.clear()
        record.update(was)


@pytest.fixture(autouse=True)
def signals_given_back():
    """A test leaves this process's SIGINT, SIGTERM and SIGHUP handlers as it found them: an
    in-process `brain serve` left its own, bound to a server long gone, and the rest of the run
    ignored Ctrl-C and SIGTERM (a run under load could be stopped by kill -9 alone, its servers
    left behind). Put back, and the test fails."""
    import signal

    handled = (signal.SIGINT, signal.SIGTERM, signal.SIGHUP)
    before = [signal.getsignal(signum) for signum in handled]
    yield
    changed = [
        signal.Signals(signum).name for signum, was in zip(handled, before) if signal.getsignal(signum) is not was
    ]
    for signum, was in zip(handled, before):
        if was is not None:
            signal.signal(signum, was)
    assert not changed, f"the test left its own handlers for {', '.join(changed)}"


@pytest.fixture(autouse=True)
def no_background_build_left():
    """A test that started work in the background (an index pass may: the BM25 postings, FTS5's
    merges) leaves no process behind: waited for, killed past a minute."""
    yield
    from brain.index import background

    background.wait_for_all(60)


FILES_BEFORE_COLLECTING = 64  # open files this process may hold at a test file's end


@pytest.fixture(scope="module", autouse=True)
def files_given_back():
    """After each test file, what its tests dropped without closing is freed once this process
    holds more than a few dozen files: a sqlite3 connection (an IndexStore, a recaller) refers to
    itself through its statement cache, so only Python's cycle collector frees one dropped
    unclosed, and its full runs come rarely in a process holding millions of objects: a run of
    3,600 tests held more than 256 files open (~5 a test file, up to 90), and a test that set
    its open-files limit to 256 met EMFILE."""
    yield
    try:
        held = len(os.listdir("/proc/self/fd"))
    except OSError:  # not Linux: no count to go by
        held = FILES_BEFORE_COLLECTING + 1
    if held > FILES_BEFORE_COLLECTING:
        import gc

        gc.collect()


@pytest.fixture
def closing():
    """What a test opens and drops (a recaller, an index store, a connection), closed at the
    test's end, passed or failed: ``recaller = closing(open_recaller(root))``. Dropped unclosed,
    a sqlite3 connection waits for a full collection (``files_given_back``) with its files open."""
    with contextlib.ExitStack() as stack:

        def close_at_the_end(thing):
            stack.callback(thing.close)
            return thing

        yield close_at_the_end


@pytest.fixture(autouse=True)
def brain_home(tmp_path_factory, monkeypatch) -> Path:
    """Every test gets its own brain home and database; no test touches the user's."""
    home = tmp_path_factory.mktemp("brain_home")
    monkeypatch.setenv("BRAIN_HOME", str(home))
    monkeypatch.delenv("BRAIN_DB", raising=False)
    monkeypatch.delenv("BRAIN_VAULT", raising=False)
    monkeypatch.setenv("BRAIN_EMBED_MODEL", "fake:64")
    monkeypatch.setenv("BRAIN_RERANK_MODEL", "none")
    # The suite's edits come milliseconds apart, and its history tests count every one of them
    # as a version; tests of saves folded into one version set their own interval.
    monkeypatch.setenv("BRAIN_VERSION_INTERVAL", "0")
    for name in ("BRAIN_FTS_TOKENIZER", "BRAIN_INDEX_THREADS", "BRAIN_LEXICAL_THREADS", "BRAIN_LEXICAL_SPLIT_MATCHES"):
        monkeypatch.delenv(name, raising=False)
    # The terminal's size is a pipe's (what brain's output falls back to: `ask --ab` 120 cells),
    # not what the environment says: pytest imports readline, which in a pytest-xdist worker
    # (stdin a pipe, TERM set) exports COLUMNS=80 LINES=24 and narrowed --ab's columns.
    for name in ("COLUMNS", "LINES"):
        monkeypatch.delenv(name, raising=False)
    return home


@pytest.fixture
def utc(zone):
    """Local time is UTC for one test (TZ=UTC), and the zone the run had is back after it, in the
    environment and in this process's reading of it (time.tzset): a fixture that unset TZ after
    left the process in the system's zone while the processes it started read TZ from the
    environment again (TZ=America/St_Johns: a test's local moment was 3.5 h later in `brain mcp`)."""
    zone("UTC")


@pytest.fixture
def zone():
    """Set the local time zone (a POSIX TZ string, or a name) for one test, as often as it likes;
    the run's own is back after it, in the environment and in this process's reading of it."""
    saved = os.environ.get("TZ")

    def set_zone(name: str) -> None:
        os.environ["TZ"] = name
        time.tzset()

    try:
        yield set_zone
    finally:
        if saved is None:
            os.environ.pop("TZ", None)
        else:
            os.environ["TZ"] = saved
        time.tzset()


@pytest.fixture
def toy_vault(tmp_path) -> Path:
    """A private copy of toy_vault/, safe to edit."""
    target = tmp_path / "vault"
    shutil.copytree(TOY_VAULT, target, symlinks=True)
    return target


def real_vault(name: str) -> Path:
    path = REAL_VAULTS / name
    if not path.is_dir():
        pytest.skip(f"../shared/bench/vaults/{name} is not here")
    return path


def write(root: Path, rel: str, text: str) -> Path:
    path = root / rel
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_text(text, encoding="utf-8")
    return path


@pytest.fixture
def deep_folder(monkeypatch):
    """deep_folder(top, levels): a folder ``levels`` deep under ``top``, made and removed one level
    at a time (os.makedirs and, before Python 3.12, shutil.rmtree recurse once a level)."""
    made: list[tuple[Path, int]] = []

    def make(top: Path, levels: int) -> Path:
        top.mkdir(parents=True, exist_ok=True)
        monkeypatch.chdir(top)
        for _ in range(levels):
            os.mkdir("d")
            os.chdir("d")
        made.append((top, levels))
        return Path(os.getcwd())

    yield make
    for top, levels in made:
        os.chdir(top)
        for _ in range(levels):
            os.chdir("d")
        for level in range(levels):
            for name in os.listdir("."):
                if name != "d" or level == 0:
                    os.unlink(name)
            os.chdir("..")
            os.rmdir("d")


def leftover_servers() -> list[tuple[int, str]]:
    """(pid, command line) of each `brain serve`/`brain mcp` process this test run started that is
    still alive (Linux: read from /proc; elsewhere nothing is found)."""
    mark = f"{SESSION_MARK}={os.environ[SESSION_MARK]}".encode()
    found = []
    proc = Path("/proc")
    for entry in proc.iterdir() if proc.is_dir() else []:
        if not entry.name.isdigit() or int(entry.name) == os.getpid():
            continue
        try:
            command = (entry / "cmdline").read_bytes().replace(b"\0", b" ").decode("utf-8", "replace")
            if "brain" not in command or not re.search(r"\s(serve|mcp)(\s|$)", command):
                continue
            if mark not in (entry / "environ").read_bytes().split(b"\0"):
                continue
            status = (entry / "status").read_text()
        except OSError:  # gone meanwhile, or not ours to read
            continue
        if "\nState:\tZ" not in status:  # a zombie is already dead
            found.append((int(entry.name), command.strip()))
    return found


TERMINATED: list[int] = []  # the SIGTERM that stops this run, once it came
RUN: list[pytest.Config] = []  # this process's run, once configured


def pytest_configure(config):
    """SIGTERM (CI's time limit, `kill`) stops the run as Ctrl-C does: pytest ended at once, no
    teardown ran, and the servers its tests had started ran on, orphans holding their vaults.
    Now the test under way is cut short, its fixtures stop them, no other test runs, and the
    check below finds any server left."""
    import signal
    import threading

    RUN[:] = [config]
    if threading.current_thread() is threading.main_thread() and signal.getsignal(signal.SIGTERM) == signal.SIG_DFL:
        signal.signal(signal.SIGTERM, _stop_the_run)


def _stop_the_run(signum, frame):
    if TERMINATED:  # stopping already: another would cut the teardown that stops the servers short
        return
    TERMINATED.append(signum)
    _stop_the_workers(signum)
    raise KeyboardInterrupt(f"stopped by signal {signum}")


def _stop_the_workers(signum: int) -> None:
    """The signal passed on to this run's pytest-xdist workers, where the tests run: sent to this
    process alone (`kill PID`), it ended the run here, and a worker got only execnet's interrupt,
    which a test that catches KeyboardInterrupt (CliRunner) swallowed: the worker ran its next
    tests, or was killed 10 s later with no teardown, its servers left to the check at the end.
    Each worker stops now as a run of its own does. Linux: the workers are this process's
    children in /proc."""
    if not RUN or not RUN[0].pluginmanager.hasplugin("dsession"):  # not a parallel run's controller
        return
    me, proc = str(os.getpid()), Path("/proc")
    for entry in proc.iterdir() if proc.is_dir() else []:
        if not entry.name.isdigit():
            continue
        try:
            parent = (entry / "stat").read_text().rsplit(")", 1)[1].split()[1]
            if parent == me:
                os.kill(int(entry.name), signum)
        except (OSError, IndexError):  # gone meanwhile
            continue


RUNNING: dict[str, float] = {}  # this run's tests started and not finished: since when


def pytest_runtest_logstart(nodeid, location):
    RUNNING[nodeid] = time.monotonic()


def pytest_runtest_logfinish(nodeid, location):
    RUNNING.pop(nodeid, None)


# Seconds the run waits, once stopped, for its workers' last reports (xdist then waits 10 s more
# for them to exit)
WORKERS_STOPPING = 10.0


def _read_the_workers_last_reports(config) -> None:
    """After the SIGTERM, what the workers sent and pytest-xdist's controller had not read yet
    (the KeyboardInterrupt ends its loop at once): the reports of tests that finished (a test cut
    short reports if it caught the interrupt), the tests started, each worker's end. Read until every worker has ended, or for
    WORKERS_STOPPING seconds; a worker's own end (crash handling, a worker started in its place)
    is left to xdist's teardown, which follows."""
    from queue import Empty

    dsession = config.pluginmanager.getplugin("dsession")
    queue, nodes = getattr(dsession, "queue", None), set(getattr(dsession, "_active_nodes", ()))
    deadline = time.monotonic() + WORKERS_STOPPING
    while nodes and queue is not None and time.monotonic() < deadline:
        try:
            name, kwargs = queue.get(timeout=max(0.0, min(1.0, deadline - time.monotonic())))
        except Empty:
            continue
        if name in ("workerfinished", "errordown", "internal_error"):
            nodes.discard(kwargs.get("node"))
        elif name in ("logstart", "testreport", "logfinish", "warning_recorded"):
            getattr(dsession, "worker_" + name)(**kwargs)


def pytest_keyboard_interrupt(excinfo):
    """A run stopped by SIGTERM reports every test that finished and names the tests it cut
    short: the one that hung the run is the reason CI's time limit stopped it. (Called as the
    interrupt ends the run's loop, before pytest-xdist's end of the session stops the workers.)"""
    if not TERMINATED or not RUN or hasattr(RUN[0], "workerinput"):
        return
    config = RUN[0]
    if config.pluginmanager.hasplugin("dsession"):
        _read_the_workers_last_reports(config)
    reporter = config.pluginmanager.getplugin("terminalreporter")
    now = time.monotonic()
    lines = [
        f"still running when the run was stopped by signal {TERMINATED[0]}: {nodeid} ({now - started:.1f} s)"
        for nodeid, started in sorted(RUNNING.items())
    ]
    if lines and reporter is not None:
        reporter.write("\n")  # after the progress dots
        for line in lines:
            reporter.write_line(line, red=True)
    elif lines:
        sys.stderr.write("".join(line + "\n" for line in lines))


@pytest.hookimpl(hookwrapper=True)
def pytest_runtest_protocol(item, nextitem):
    yield
    if TERMINATED:  # the interrupt was caught on the way (CliRunner turns it into exit code 1)
        item.session.shouldstop = f"stopped by signal {TERMINATED[0]}"


@pytest.hookimpl(trylast=True)  # after the runner's teardown of a test cut short
def pytest_sessionfinish(session, exitstatus):
    if os.environ.get(SESSION_MARK) != str(os.getpid()):
        return  # a pytest run inside a test: the outer run checks
    left = leftover_servers()
    if not left:
        return
    import signal

    for pid, _ in left:
        try:
            os.kill(pid, signal.SIGKILL)
        except OSError:
            pass
    lines = "\n".join(f"  pid {pid}: {command}" for pid, command in left)
    sys.stderr.write(f"\nbrain processes left running by the tests (now killed):\n{lines}\n")
    session.exitstatus = 1


def _utf8_encodable(value):
    """``value`` with every string in it UTF-8 encodable: a lone surrogate (a non-UTF-8 path's
    byte as os.fsdecode gives it, ``\\udce9``) written as its escape."""
    if isinstance(value, str):
        try:
            value.encode("utf-8")
        except UnicodeEncodeError:
            return value.encode("utf-8", "backslashreplace").decode("utf-8")
        return value
    if isinstance(value, dict):
        return {_utf8_encodable(key): _utf8_encodable(item) for key, item in value.items()}
    if isinstance(value, list):
        return [_utf8_encodable(item) for item in value]
    if isinstance(value, tuple):
        return tuple(_utf8_encodable(item) for item in value)
    return value


@pytest.hookimpl(wrapper=True)
def pytest_report_to_serializable(config, report):
    """A test's report as pytest-xdist's worker sends it to the run (execnet, which takes UTF-8
    strings only): a test whose captured log or failure named a path that is not UTF-8 (a vault
    in ``caf\\xe9``) stopped its worker with "strings must be utf-8 encodable" and the run with an
    INTERNALERROR, its remaining files never run."""
    data = yield
    return _utf8_encodable(data)


@pytest.fixture
def brain_logger():
    """The "brain" logger as it was, given back after the test (serve's setup replaces its handlers)."""
    logger = logging.getLogger("brain")
    handlers, level, propagate = list(logger.handlers), logger.level, logger.propagate
    yield logger
    for handler in list(logger.handlers):
        if handler not in handlers:
            logger.removeHandler(handler)
            handler.close()
    for handler in handlers:
        if handler not in logger.handlers:
            logger.addHandler(handler)
    logger.setLevel(level)
    logger.propagate = propagate
