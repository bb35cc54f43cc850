"""The suite run in parallel, as scripts/test runs it (pytest-xdist, one worker a core): what a
test reports reaches the run whatever its text holds."""

from __future__ import annotations

import os
import subprocess
import sys
from pathlib import Path

import pytest

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
