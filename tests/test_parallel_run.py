"""The suite run in parallel, as scripts/test runs it (pytest-xdist, one worker a core): what a
test reports reaches the run whatever its text holds."""

from __future__ import annotations

import os
import signal
import subprocess
import sys
import time
from pathlib import Path

import pytest
from serve_helpers import brain_env

from brain.server import runtime

TESTS = Path(__file__).resolve().parent

INNER_RUN = r"""
import logging
import os


def test_logs_a_path_that_is_not_utf8(tmp_path):
    folder = tmp_path / os.fsdecode(b"caf\xe9")
    folder.mkdir()
    logging.getLogger("brain").warning("watching %s", folder)
    print("printed", folder)


def test_fails_naming_a_path_that_is_not_utf8(tmp_path):
    assert not os.fsdecode(b"caf\xe9"), "the vault " + os.fsdecode(b"caf\xe9")


def test_after_them():
    pass
"""


def test_a_report_naming_a_path_that_is_not_utf8_reaches_the_parallel_run(tmp_path):
    """A test whose captured log, output or failure held a non-UTF-8 path (``caf\\xe9``, a lone
    surrogate once decoded) stopped its pytest-xdist worker ("strings must be utf-8 encodable"):
    the run ended in an INTERNALERROR (exit code 3) with the rest of the worker's files never run.
    Each report reaches the run now, the path in it escaped."""
    pytest.importorskip("xdist")
    (tmp_path / "test_inner.py").write_text(INNER_RUN)
    paths = [str(TESTS), str(TESTS.parent), os.environ.get("PYTHONPATH", "")]
    env = {**os.environ, "PYTHONPATH": os.pathsep.join(p for p in paths if p)}
    env.pop("PYTEST_BRAIN_SESSION", None)  # a run of its own
    run = subprocess.run(
        [sys.executable, "-m", "pytest", "-p", "no:cacheprovider", "-p", "conftest", "-n", "2", "-rA", "test_inner.py"],
        cwd=tmp_path,
        env=env,
        stdin=subprocess.DEVNULL,
        capture_output=True,
        text=True,
        errors="replace",
        timeout=300,
    )
    out = run.stdout + run.stderr
    assert run.returncode == pytest.ExitCode.TESTS_FAILED, out
    assert "INTERNALERROR" not in out
    assert "1 failed, 2 passed" in out, out
    assert "AssertionError: the vault caf\\udce9" in out, out
    assert "watching " in out and "caf\\udce9" in out.split("watching ", 1)[1], out


SERVING_RUN = """
import os
import time
from pathlib import Path

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
    Path(os.environ["SERVER_PID_FILE"] + ".closed").write_text("closed")


def test_serving(server):
    Path(os.environ["SERVER_PID_FILE"]).write_text(str(server.proc.pid))
    try:
        time.sleep(600)
    except KeyboardInterrupt:  # caught, as click's CliRunner catches it (exit code 1)
        pass


def test_next():
    Path(os.environ["SERVER_PID_FILE"] + ".next").write_text("ran")
"""


def test_a_parallel_run_stopped_by_sigterm_stops_its_workers_tests_and_their_servers(tmp_path):
    """SIGTERM to the run (`kill PID`: pytest-xdist's controller alone) ended it there, and a worker
    got only execnet's interrupt, which a test catching KeyboardInterrupt (as CliRunner does)
    swallowed: the worker went on to the next test, or was killed 10 s later with no teardown, the
    servers its tests started left to the end-of-run check. The workers are stopped as the run
    is: the test cut short, its fixtures' teardown run, no test after it, exit code 2."""
    pytest.importorskip("xdist")
    if not Path("/proc/self/stat").exists():
        pytest.skip("the workers are found in /proc")
    (tmp_path / "test_inner.py").write_text(SERVING_RUN)
    pid_file = tmp_path / "server.pid"
    env = brain_env(SERVER_PID_FILE=str(pid_file))
    env["PYTHONPATH"] = os.pathsep.join(p for p in (str(TESTS), env["PYTHONPATH"], os.environ.get("PYTHONPATH")) if p)
    env.pop("PYTEST_BRAIN_SESSION", None)  # a run of its own, which checks for servers left itself
    run = subprocess.Popen(
        [sys.executable, "-m", "pytest", "-q", "-p", "no:cacheprovider", "-p", "conftest", "-n", "1", "test_inner.py"],
        cwd=tmp_path,
        env=env,
        stdin=subprocess.DEVNULL,
        stdout=subprocess.PIPE,
        stderr=subprocess.STDOUT,
        text=True,
    )
    try:
        deadline = time.monotonic() + 240
        while not pid_file.exists() and run.poll() is None and time.monotonic() < deadline:
            time.sleep(0.05)
        assert pid_file.exists(), "the inner run did not start its server"
        server_pid = int(pid_file.read_text())
        run.send_signal(signal.SIGTERM)
        rest = run.communicate(timeout=120)[0]
        assert run.returncode == pytest.ExitCode.INTERRUPTED, rest
        assert (tmp_path / "server.pid.closed").exists(), rest  # the fixture's teardown ran
        assert not (tmp_path / "server.pid.next").exists(), rest  # and no test after it
        assert not runtime.pid_alive(server_pid), rest
    finally:
        if run.poll() is None:
            run.kill()
            run.wait(30)


def test_a_worker_s_tests_see_a_pipe_s_terminal_width_as_a_serial_run_s_do(tmp_path):
    """pytest imports readline, which in a pytest-xdist worker (stdin a pipe, TERM set) exports
    COLUMNS=80 and LINES=24: `brain ask --ab`'s columns, 120 cells wide from a pipe, were 80 in
    the worker's tests, and test_recall's A/B tests failed on notes cut to fit."""
    pytest.importorskip("xdist")
    (tmp_path / "test_inner.py").write_text(
        "from brain.output import ab_width\n\n\ndef test_width():\n    assert ab_width() == 120\n"
    )
    env = brain_env(TERM="xterm")
    env["PYTHONPATH"] = os.pathsep.join(p for p in (str(TESTS), env["PYTHONPATH"], os.environ.get("PYTHONPATH")) if p)
    for name in ("PYTEST_BRAIN_SESSION", "COLUMNS", "LINES"):
        env.pop(name, None)
    run = subprocess.run(
        [sys.executable, "-m", "pytest", "-q", "-p", "no:cacheprovider", "-p", "conftest", "-n", "1", "test_inner.py"],
        cwd=tmp_path,
        env=env,
        stdin=subprocess.DEVNULL,
        capture_output=True,
        text=True,
        timeout=300,
    )
    assert run.returncode == 0, run.stdout + run.stderr


HANGING_FILE = """
import os
import time
from pathlib import Path


def test_hangs():
    Path(os.environ["MARKS"], "hangs").write_text("started")
    time.sleep(600)
"""

QUICK_FILE = """
import os
from pathlib import Path

import pytest


@pytest.mark.parametrize("n", range(3))
def test_quick(n):
    Path(os.environ["MARKS"], f"quick{n}").write_text("done")
"""

BUSY_CONTROLLER = """
import time

import pytest

CONTROLLER = []


def pytest_configure(config):
    if not hasattr(config, "workerinput"):
        CONTROLLER.append(config)


@pytest.hookimpl(trylast=True)
def pytest_runtest_logreport(report):
    if CONTROLLER and report.nodeid.endswith("test_quick[0]") and report.when == "teardown":
        time.sleep(600)  # the run busy: the reports the workers send meanwhile wait to be read
"""


def test_a_parallel_run_cut_by_sigterm_reports_every_test_that_finished_and_names_the_one_running(tmp_path):
    """CI's time limit (SIGTERM) raised KeyboardInterrupt in pytest-xdist's controller at once: the
    reports its workers had sent and it had not yet read were dropped, and the test that hung the
    run (the reason for the cut) was named nowhere in a -q log. The reports sent are read, each
    worker given the time to stop, and the tests still running when the run was stopped are named
    (here: the run is busy after the first quick test's report, the next two wait to be read)."""
    pytest.importorskip("xdist")
    if not Path("/proc/self/stat").exists():
        pytest.skip("the workers are found in /proc")
    (tmp_path / "test_hanging.py").write_text(HANGING_FILE)
    (tmp_path / "test_quick.py").write_text(QUICK_FILE)
    (tmp_path / "busy_controller.py").write_text(BUSY_CONTROLLER)
    marks = tmp_path / "marks"
    marks.mkdir()
    env = brain_env(MARKS=str(marks))
    paths = (str(tmp_path), str(TESTS), env["PYTHONPATH"], os.environ.get("PYTHONPATH"))
    env["PYTHONPATH"] = os.pathsep.join(p for p in paths if p)
    env.pop("PYTEST_BRAIN_SESSION", None)  # a run of its own
    command = [
        "-q",
        "-p",
        "no:cacheprovider",
        "-p",
        "conftest",
        "-p",
        "busy_controller",
        "-n",
        "2",
        "--dist",
        "loadfile",
    ]
    run = subprocess.Popen(
        [sys.executable, "-m", "pytest", *command, "test_hanging.py", "test_quick.py"],
        cwd=tmp_path,
        env=env,
        stdin=subprocess.DEVNULL,
        stdout=subprocess.PIPE,
        stderr=subprocess.STDOUT,
        text=True,
    )
    try:
        expected = {"hangs", "quick0", "quick1", "quick2"}
        deadline = time.monotonic() + 240  # guards against a hang only: the marks come in seconds
        while {p.name for p in marks.iterdir()} != expected and run.poll() is None and time.monotonic() < deadline:
            time.sleep(0.05)
        assert {p.name for p in marks.iterdir()} == expected, "the inner run did not run its tests"
        run.send_signal(signal.SIGTERM)
        out = run.communicate(timeout=120)[0]
        assert run.returncode == pytest.ExitCode.INTERRUPTED, out
        assert "3 passed" in out, out
        assert "still running when the run was stopped by signal 15: test_hanging.py::test_hangs" in out, out
    finally:
        if run.poll() is None:
            run.kill()
            run.wait(30)
