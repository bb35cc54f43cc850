"""A FIFO where `brain serve` and `brain mcp` keep their logs (made to follow the log, or left by a
tool): opened for writing, one with no reader waited for one, so the process never started (the
MCP client waited on an answer to initialize for good). Now that is one line at once, and a FIFO
something reads is written as a file is."""

from __future__ import annotations

import os
import subprocess
import sys

import pytest
from serve_helpers import run_brain

pytestmark = pytest.mark.skipif(not hasattr(os, "mkfifo"), reason="no FIFOs here")


@pytest.mark.parametrize(
    ("args", "log"),
    [
        (["serve"], "serve.log"),
        (["serve", "--detach"], "serve.log"),
        (["mcp"], "mcp.log"),
    ],
)
def test_a_log_that_is_a_fifo_nothing_reads_is_one_line_not_a_hang(toy_vault, brain_home, args, log):
    logs = brain_home / "logs"
    logs.mkdir(mode=0o700)
    os.mkfifo(logs / log)
    try:
        # a guard against the hang, not a speed bound: a start-up at load 20 took 39 s here
        proc = run_brain([*args, "--vault", str(toy_vault)], timeout=300, BRAIN_HOME=str(brain_home))
    except subprocess.TimeoutExpired:
        pytest.fail(f"brain {' '.join(args)} waited for a reader of {log}")
    err = proc.stderr.decode()
    assert proc.returncode == 1 and err.count("\n") == 1 and "Traceback" not in err, err
    assert err == (
        f"Error: cannot write the log {logs / log} (No such device or address): something must read the FIFO "
        f"there (cat {logs / log}), or remove it\n"
    )
    assert sorted(p.name for p in logs.iterdir()) == [log]  # left as it was


def test_a_log_that_is_a_fifo_something_reads_is_written(brain_home):
    code = (
        "import logging, os\n"
        "from brain.logfile import log_handler\n"
        "path = os.path.join(os.environ['BRAIN_HOME'], 'logs', 'serve.log')\n"
        "reader = os.open(path, os.O_RDONLY | os.O_NONBLOCK)\n"
        "handler = log_handler('serve.log', 5_000_000)\n"
        "handler.handle(logging.makeLogRecord({'msg': 'a line for the reader', 'levelno': 20}))\n"
        "print(os.read(reader, 4096).decode(), end='')\n"
    )
    (brain_home / "logs").mkdir(mode=0o700)
    os.mkfifo(brain_home / "logs" / "serve.log")
    env = dict(os.environ, BRAIN_HOME=str(brain_home), PYTHONPATH=os.path.dirname(os.path.dirname(__file__)))
    proc = subprocess.run([sys.executable, "-c", code], env=env, capture_output=True, timeout=300)
    assert proc.returncode == 0 and proc.stderr == b"", proc.stderr
    assert proc.stdout == b"a line for the reader\n"


def test_a_fifo_whose_reader_goes_away_is_one_line_and_logging_carries_on(brain_home):
    """The reader of a FIFO log went away: each line after was logging's "--- Logging error ---"
    and a traceback on stderr, and once the FIFO was made again with no reader the reopen raised
    out of the logging call into the server's own code. Now the lines are dropped, the first one
    saying so in one line, and they are written again once something reads."""
    code = (
        "import logging, os\n"
        "from brain.logfile import log_handler\n"
        "path = os.path.join(os.environ['BRAIN_HOME'], 'logs', 'serve.log')\n"
        "reader = os.open(path, os.O_RDONLY | os.O_NONBLOCK)\n"
        "handler = log_handler('serve.log', 5_000_000)\n"
        "def log(msg):\n"
        "    handler.handle(logging.makeLogRecord({'msg': msg, 'levelno': 20}))\n"
        "log('read')\n"
        "print(os.read(reader, 4096).decode(), end='')\n"
        "os.close(reader)\n"
        "log('lost 1')\n"
        "log('lost 2')\n"
        "os.remove(path)\n"
        "os.mkfifo(path)\n"
        "log('lost 3')\n"
        "reader = os.open(path, os.O_RDONLY | os.O_NONBLOCK)\n"
        "log('read again')\n"
        "print(os.read(reader, 4096).decode(), end='')\n"
        "handler.close()\n"
    )
    logs = brain_home / "logs"
    logs.mkdir(mode=0o700)
    os.mkfifo(logs / "serve.log")
    env = dict(os.environ, BRAIN_HOME=str(brain_home), PYTHONPATH=os.path.dirname(os.path.dirname(__file__)))
    proc = subprocess.run([sys.executable, "-c", code], env=env, capture_output=True, timeout=300)
    assert (proc.returncode, proc.stdout) == (0, b"read\nread again\n"), proc.stderr.decode()
    path = logs / "serve.log"
    assert proc.stderr.decode() == (
        f"brain: cannot write the log {path} (Broken pipe): its lines are dropped until something reads the FIFO"
        f" there (cat {path}) or it is removed\n"
    )


def test_a_fifo_whose_reader_is_behind_keeps_it_and_cuts_no_line_into_the_next(brain_home):
    """A reader behind (the FIFO's pipe full: EAGAIN) was taken as one gone: the FIFO was closed,
    so the reader read to the end of what was written and took it for the log's end (cat left,
    every line after dropped), and the line written in part ran on into the next one written.
    Now the line is dropped and the FIFO kept open; the next line starts a line of its own."""
    code = (
        "import logging, os\n"
        "from brain.logfile import log_handler\n"
        "path = os.path.join(os.environ['BRAIN_HOME'], 'logs', 'serve.log')\n"
        "reader = os.open(path, os.O_RDONLY | os.O_NONBLOCK)\n"
        "handler = log_handler('serve.log', 10**9)\n"
        "def log(msg):\n"
        "    handler.handle(logging.makeLogRecord({'msg': msg, 'levelno': 20}))\n"
        "for i in range(40):\n"
        "    log(f'fill {i:02d} ' + 'y' * 9000 + ' end')\n"
        "read = b''\n"
        "while True:\n"
        "    try:\n"
        "        chunk = os.read(reader, 1 << 16)\n"
        "    except BlockingIOError:\n"
        "        print('open')\n"  # nothing to read, the writer still there
        "        break\n"
        "    if not chunk:\n"
        "        print('end of file')\n"  # what cat takes for the end: it leaves
        "        break\n"
        "    read += chunk\n"
        "log('after')\n"
        "read += os.read(reader, 1 << 20)\n"
        "lines = read.decode().split('\\n')\n"
        "print(sum(1 for line in lines if line.endswith(' end')), 'whole')\n"
        "print('after' in lines)\n"
    )
    logs = brain_home / "logs"
    logs.mkdir(mode=0o700)
    os.mkfifo(logs / "serve.log")
    env = dict(os.environ, BRAIN_HOME=str(brain_home), PYTHONPATH=os.path.dirname(os.path.dirname(__file__)))
    proc = subprocess.run([sys.executable, "-c", code], env=env, capture_output=True, timeout=300)
    assert proc.returncode == 0, proc.stderr.decode()
    out = proc.stdout.decode().split("\n")
    assert out[0] == "open", out
    assert int(out[1].split()[0]) >= 1 and out[2] == "True", out
    assert "(write could not complete without blocking)" in proc.stderr.decode()
