"""The installed `brain hook stop`, run as Claude Code runs it: a process, JSON on stdin."""

from __future__ import annotations

import ast
import json
import sqlite3
import subprocess
import sys
import time
from pathlib import Path

import pytest
from ledger_helpers import SESSION, Transcript, brain_command, fixture, hook_payload, run_changed_hook, run_hook

from brain.db import open_db

pytestmark = pytest.mark.slow  # subprocesses

CRUD = "agentlogs_v2.0.14_crud_write_read_edit_bash.jsonl"


def _rows(db: Path) -> list[dict]:
    conn = sqlite3.connect(db)
    conn.row_factory = sqlite3.Row
    try:
        return [dict(r) for r in conn.execute("SELECT * FROM turns ORDER BY id")]
    finally:
        conn.close()


def test_hook_process_records_a_real_turn(tmp_path):
    payload = hook_payload(fixture(CRUD), cwd=str(tmp_path))
    proc = run_hook(json.dumps(payload).encode(), tmp_path)
    assert proc.returncode == 0
    assert proc.stdout == b"" and proc.stderr == b""
    (row,) = _rows(tmp_path / "brain.db")
    assert row["ask"].startswith("create a file `JOKE.md`")
    assert json.loads(row["tools"]) == {"TodoWrite": 5, "Write": 1, "Read": 1, "Edit": 1, "Bash": 1}
    assert json.loads(row["files_written"]) == ["/Users/philipp/dev/vibeinsights/fixtures/claudecode/JOKE.md"]
    assert json.loads(row["commands"]) == ["rm /Users/philipp/dev/vibeinsights/fixtures/claudecode/JOKE.md"]
    assert not (tmp_path / "logs" / "hook.log").exists()  # nothing went wrong


def test_brain_db_variable_is_honoured(tmp_path):
    t = Transcript(tmp_path / "t.jsonl")
    t.prompt("hi")
    t.text("hello")
    db = tmp_path / "elsewhere" / "ledger.db"
    proc = run_hook(json.dumps(hook_payload(t.write())).encode(), tmp_path, BRAIN_DB=str(db))
    assert proc.returncode == 0
    assert [r["ask"] for r in _rows(db)] == ["hi"]


@pytest.mark.parametrize(
    "stdin",
    [
        b"",
        b"not json",
        b"[1, 2]",
        b"\xff\xfe\x00garbage",
        b'{"transcript_path": 42}',
        b'{"session_id": "s", "transcript_path": "/nonexistent/x.jsonl"}',
        b"[" * 100_000 + b"]" * 100_000,
    ],
)
def test_garbage_stdin_exits_zero_and_prints_nothing(tmp_path, stdin):
    proc = run_hook(stdin, tmp_path)
    assert proc.returncode == 0
    assert proc.stdout == b""
    assert proc.stderr == b""
    log = tmp_path / "logs" / "hook.log"
    assert not log.exists() or "Traceback" not in log.read_text()  # one line, not an error


@pytest.mark.parametrize("kind", ["stop", "prompt"])
@pytest.mark.parametrize("stdin", ["a terminal", "closed"])
def test_a_hook_typed_by_hand_or_given_no_stdin_exits_zero_at_once_and_prints_nothing(tmp_path, kind, stdin):
    """The README: each hook "always exits 0" and prints nothing (the prompt hook: one JSON object
    or nothing). `brain hook stop` typed in a terminal has no hook input coming: it returns at
    once, before its budget (an hour here: had it waited on the terminal, the run's timeout ends
    it), and writes nothing, neither a row nor a line of log; started with stdin closed (`<&-`),
    the same."""
    import os
    import pty

    cmd, env = brain_command()
    env.update(BRAIN_HOME=str(tmp_path), BRAIN_HOOK_BUDGET="3600", BRAIN_PROMPT_BUDGET="5", BRAIN_VAULT=str(tmp_path))
    parent, child = pty.openpty()
    try:
        proc = subprocess.run(
            [*cmd, "hook", kind],
            stdin=child if stdin == "a terminal" else None,
            preexec_fn=None if stdin == "a terminal" else (lambda: os.close(0)),
            env=env,
            capture_output=True,
            timeout=60,
        )
    finally:
        os.close(parent)
        os.close(child)
    assert (proc.returncode, proc.stdout, proc.stderr) == (0, b"", b"")
    assert not (tmp_path / "logs" / "hook.log").exists()  # the watchdog did not end it: it logs when it does
    assert not (tmp_path / "brain.db").exists()


def test_errors_go_to_the_log_file(tmp_path):
    (tmp_path / "brain.db").mkdir()  # the database path is a folder: opening it fails
    t = Transcript(tmp_path / "t.jsonl")
    t.prompt("hi")
    t.text("hello")
    proc = run_hook(json.dumps(hook_payload(t.write())).encode(), tmp_path)
    assert proc.returncode == 0 and proc.stdout == b"" and proc.stderr == b""
    log = (tmp_path / "logs" / "hook.log").read_text()
    # A foreseen error is the one line `brain turns` prints; an unforeseen one keeps its traceback
    # (test_the_log_file_holds_no_secret).
    assert "error: " in log and "is a folder, not a database file" in log
    assert len(log.splitlines()) == 1 and "Traceback" not in log, log


def test_the_log_file_holds_no_secret(tmp_path):
    """hook.log names the transcript and carries tracebacks: a key in a path (a project folder named
    after it, in Claude Code's transcript path) reached the log as it was, masked in the turn's row."""
    token = "ghp_" + "A1b2C3d4E5f6G7h8I9j0K1l2M3n4O5p6Q7r8"
    path = tmp_path / (f"GITHUB_TOKEN={token}" + "x" * 300) / "t.jsonl"  # a name too long to read
    proc = run_hook(json.dumps(hook_payload(path)).encode(), tmp_path)
    assert proc.returncode == 0
    log = (tmp_path / "logs" / "hook.log").read_text()
    assert "cannot read the transcript" in log and "GITHUB_TOKEN=***" in log
    assert token not in log


def test_a_traceback_in_the_log_holds_no_secret(tmp_path, monkeypatch):
    """An error brain did not foresee is logged with its traceback, masked as a row is."""
    from brain.ledger import hook

    monkeypatch.setenv("BRAIN_HOME", str(tmp_path))
    token = "ghp_" + "A1b2C3d4E5f6G7h8I9j0K1l2M3n4O5p6Q7r8"
    try:
        raise RuntimeError(f"cannot open /home/dev/GITHUB_TOKEN={token}/x")
    except RuntimeError as exc:
        hook._log_exception(exc)
    log = (tmp_path / "logs" / "hook.log").read_text()
    assert "error: RuntimeError(" in log and "Traceback" in log and "GITHUB_TOKEN=***" in log
    assert token not in log


# A hook.log line of its own, and a window title set, the screen cleared, an OSC 8 link, the
# clipboard written (OSC 52), an 8-bit CSI: what a path in the hook input may hold.
FORGED = "Evil\n2026-01-01T00:00:00.000Z pid=1 the ledger was deleted"
HOSTILE = "Заметка 笔记 🙂 \x1b]0;owned\x07\x1b[2J\x1b]8;;https://evil.example\x1b\\link\x1b]52;c;ZXZpbA==\x07\x9b31m"
SHOWN = (
    "Заметка 笔记 🙂 \\x1b]0;owned\\x07\\x1b[2J\\x1b]8;;https://evil.example\\x1b\\link\\x1b]52;c;ZXZpbA==\\x07\\x9b31m"
)


def _inert(text: str) -> None:
    """No byte a terminal acts on: ESC, the 8-bit CSI, BEL, a carriage return."""
    assert not any(c in text for c in "\x1b\x9b\x07\r"), repr(text)


def test_a_hostile_transcript_path_is_one_inert_line_of_the_log(tmp_path):
    """The hook names the transcript it cannot read (a name too long) as its input gave it: a line
    break there split the line, what followed reading as a line of its own, and an escape
    sequence acted on the terminal following the log. Written as their escapes now."""
    path = f"{tmp_path}/{'x' * 300}{FORGED}/{HOSTILE}.jsonl"
    proc = run_hook(json.dumps(hook_payload(path)).encode(), tmp_path)
    assert proc.returncode == 0 and proc.stderr == b""
    text = (tmp_path / "logs" / "hook.log").read_text(encoding="utf-8")
    [line] = text.splitlines()
    assert "cannot read the transcript" in line and "xxEvil\\n2026-01-01T00:00:00.000Z pid=1" in line
    assert SHOWN in line  # Cyrillic, CJK and emoji as they are
    _inert(text)


@pytest.mark.parametrize("module", ["brain.ledger.hook", "brain.autorecall.hook"])
def test_a_traceback_in_the_log_is_indented_under_its_line(tmp_path, monkeypatch, module):
    """Kept on lines of its own, each indented (a line of the log never is): its exception's
    message can neither forge a line nor act on a terminal. The Stop hook's and the prompt hook's."""
    import importlib

    monkeypatch.setenv("BRAIN_HOME", str(tmp_path))
    try:
        raise RuntimeError(f"cannot open {FORGED} {HOSTILE}")
    except RuntimeError as exc:
        importlib.import_module(module)._log_exception(exc)
    first, *rest = (tmp_path / "logs" / "hook.log").read_text().splitlines()
    assert "error: RuntimeError(" in first  # its repr: escaped already
    assert rest[0] == "    Traceback (most recent call last):" and all(line.startswith("    ") for line in rest)
    assert "    2026-01-01T00:00:00.000Z pid=1 the ledger was deleted " + SHOWN in rest
    _inert("\n".join([first, *rest]))


def test_hung_stdin_is_cut_off_by_the_budget(tmp_path):
    # Claude Code never leaves stdin open, but a hung read must not hold the agent.
    cmd, env = brain_command()
    env.update(BRAIN_HOME=str(tmp_path), BRAIN_HOOK_BUDGET="0.5")
    proc = subprocess.Popen(
        [*cmd, "hook", "stop"],
        stdin=subprocess.PIPE,
        stdout=subprocess.PIPE,
        stderr=subprocess.PIPE,
        env=env,
    )
    try:
        proc.stdin.write(b'{"session_id": ')  # half a payload, and stdin stays open
        proc.stdin.flush()
        code = proc.wait(timeout=60)  # a hang's guard: without its watchdog it waits for ever
    finally:
        proc.kill()
        proc.stdin.close()
    assert code == 0
    assert proc.stdout.read() == b"" and proc.stderr.read() == b""
    # ended by its 0.5 s watchdog, its own log says (it was also bounded at 10 s of wall time,
    # which a loaded machine can pass: what ends it is the watchdog, not how soon)
    assert "gave up after the 0.5 s budget" in (tmp_path / "logs" / "hook.log").read_text()


def test_twenty_hooks_at_once_lose_no_row(tmp_path):
    procs = []
    cmd, env = brain_command()
    # The budget is raised so a loaded CI machine tests locking, not start-up speed.
    env.update(BRAIN_HOME=str(tmp_path), BRAIN_HOOK_BUDGET="60")
    for i in range(20):
        t = Transcript(tmp_path / f"t{i}.jsonl", session=f"session-{i:02d}")
        t.prompt(f"question {i}")
        t.tool("Write", file_path=f"/p/file{i}.py")
        t.text(f"answer {i}")
        payload = hook_payload(t.write(), session_id=f"session-{i:02d}")
        proc = subprocess.Popen(
            [*cmd, "hook", "stop"],
            stdin=subprocess.PIPE,
            stdout=subprocess.PIPE,
            stderr=subprocess.PIPE,
            env=env,
        )
        procs.append((proc, json.dumps(payload).encode()))
    for proc, stdin in procs:  # all started before any is fed, so they race for the db
        proc.stdin.write(stdin)
        proc.stdin.close()
    for proc, _ in procs:
        assert proc.wait(timeout=120) == 0
        assert proc.stdout.read() == b""
    rows = _rows(tmp_path / "brain.db")
    assert sorted(r["ask"] for r in rows) == sorted(f"question {i}" for i in range(20))
    assert len({r["session_id"] for r in rows}) == 20
    assert not (tmp_path / "logs" / "hook.log").exists()


def test_help_goes_to_click(tmp_path):
    cmd, env = brain_command()
    proc = subprocess.run([*cmd, "hook", "stop", "--help"], capture_output=True, check=False, env=env, timeout=60)
    assert proc.returncode == 0
    assert b"Record the turn that just ended" in proc.stdout


def test_hook_path_imports_only_the_standard_library(tmp_path):
    # What `brain hook stop` loads, in a fresh interpreter: no click, no numpy, no torch.
    code = (
        "import sys; sys.argv = ['brain', 'hook', 'stop']\n"
        "import brain.__main__ as entry\n"
        "try:\n    entry.main()\nexcept SystemExit:\n    pass\n"
        "heavy = ('click', 'numpy', 'torch', 'dotenv', 'sentence_transformers', 'brain.cli')\n"
        "sys.stderr.write(repr(sorted(m for m in heavy if m in sys.modules)))\n"
    )
    _, env = brain_command()
    env["BRAIN_HOME"] = str(tmp_path)
    env["PYTHONPATH"] = str(Path(__file__).resolve().parents[1])
    proc = subprocess.run(
        [sys.executable, "-c", code],
        input=b"{}",
        env=env,
        capture_output=True,
        check=False,
        timeout=60,
    )
    assert proc.stdout == b""
    assert proc.stderr == b"[]"


def _hook_with_slow_settings(hook: str, home: Path, stdin: bytes, **env_extra: str) -> subprocess.CompletedProcess:
    """``brain hook <hook>`` whose .env loading takes an hour (a huge file, a slow disk)."""
    code = (
        "import sys, time\n"
        "from brain import config\n"
        "def slow():\n    time.sleep(3600)\n    return []\n"
        "config.load_dotenv_files = slow\n"
        "sys.argv = ['brain', 'hook', sys.argv[1]]\n"
        "from brain.__main__ import main\n"
        "main()\n"
    )
    _, env = brain_command()
    env.update(BRAIN_HOME=str(home), PYTHONPATH=str(Path(__file__).resolve().parents[1]), **env_extra)
    # an hour's read, which only the budget ends: the time given is a guard (it was 20 s against a
    # read of 30 s, and a loaded machine's start-up could take the difference)
    return subprocess.run(
        [sys.executable, "-c", code, hook], input=stdin, env=env, capture_output=True, check=False, timeout=300
    )


@pytest.mark.parametrize(("hook", "budget"), [("stop", "BRAIN_HOOK_BUDGET"), ("prompt", "BRAIN_PROMPT_BUDGET")])
def test_the_budget_covers_reading_the_env_files(tmp_path, hook, budget):
    # The watchdog used to start after the .env files were read: a 200 MB .env held both hooks ~7 s.
    stdin = json.dumps(hook_payload(None, prompt="add retry with backoff to the consumer")).encode()
    proc = _hook_with_slow_settings(hook, tmp_path, stdin, **{budget: "0.5"})
    assert proc.returncode == 0 and proc.stdout == b"" and proc.stderr == b""
    assert "gave up after the 0.5 s budget" in (tmp_path / "logs" / "hook.log").read_text()


def test_a_huge_env_file_is_not_read(tmp_path):
    (tmp_path / ".env").write_text("BRAIN_DB=" + str(tmp_path / "from-env.db") + "\nA=" + "x" * 300_000 + "\n")
    t = Transcript(tmp_path / "t.jsonl")
    t.prompt("hi")
    t.text("hello")
    proc = run_hook(json.dumps(hook_payload(t.write())).encode(), tmp_path)
    assert proc.returncode == 0 and proc.stderr == b""
    assert [r["ask"] for r in _rows(tmp_path / "brain.db")] == ["hi"]  # not the .env's BRAIN_DB
    assert f"{tmp_path / '.env'} is over 256 KB: not read as settings" in (tmp_path / "logs" / "hook.log").read_text()


def test_a_budget_set_in_an_env_file_moves_the_watchdog(tmp_path):
    (tmp_path / ".env").write_text("BRAIN_HOOK_BUDGET=0.4\n")
    cmd, env = brain_command()
    env.update(BRAIN_HOME=str(tmp_path))
    proc = subprocess.Popen(
        [*cmd, "hook", "stop"], stdin=subprocess.PIPE, stdout=subprocess.PIPE, env=env, cwd=tmp_path
    )
    try:
        assert proc.wait(timeout=300) == 0  # stdin stays open: only the watchdog ends it (a guard)
    finally:
        proc.kill()
        proc.stdin.close()
        proc.stdout.close()
    assert "gave up after the 0.4 s budget" in (tmp_path / "logs" / "hook.log").read_text()


@pytest.mark.parametrize("field", ["session_id", "cwd", "transcript_path"])
def test_an_id_or_path_too_long_to_be_one_is_refused_in_the_log(tmp_path, field):
    # Masking a 10 MB session id took 1.3 s: the hook gave up at its budget, its turn lost
    # and nothing said why.
    payload = {**hook_payload(None), field: "x" * 100_000}
    proc = run_hook(json.dumps(payload).encode(), tmp_path)
    assert proc.returncode == 0 and proc.stdout == b"" and proc.stderr == b""
    log = (tmp_path / "logs" / "hook.log").read_text()
    assert f"ignored a Stop hook payload whose {field} is 100,000 characters (at most 65,536)" in log
    assert not (tmp_path / "brain.db").exists()


def test_a_payload_after_a_bom_or_with_a_number_past_pythons_int_is_read(tmp_path):
    """A UTF-8 BOM before the JSON, or a number of 5,000 digits in a field the hook never reads
    (past Python's int limit, a ValueError), had the whole payload ignored: the turn lost."""
    t = Transcript(tmp_path / "t.jsonl")
    t.prompt("hi")
    t.text("hello")
    for stdin in (
        b"\xef\xbb\xbf" + json.dumps(hook_payload(t.write())).encode(),
        json.dumps(hook_payload(t.write())).encode()[:-1] + b', "count": ' + b"7" * 5000 + b"}",
    ):
        proc = run_hook(stdin, tmp_path)
        assert proc.returncode == 0 and proc.stdout == b"" and proc.stderr == b""
    assert [r["ask"] for r in _rows(tmp_path / "brain.db")] == ["hi"]  # one turn, recorded (the second its repeat)
    log = tmp_path / "logs" / "hook.log"
    assert not log.exists() or "not a Stop hook payload" not in log.read_text()


def test_stdin_is_read_up_to_16_mb(tmp_path):
    t = Transcript(tmp_path / "t.jsonl")
    t.prompt("hi")
    t.text("hello")
    payload = hook_payload(t.write(), padding="x" * (16 * 1024 * 1024))
    proc = run_hook(json.dumps(payload).encode(), tmp_path)
    assert proc.returncode == 0 and proc.stdout == b"" and proc.stderr == b""
    assert not (tmp_path / "brain.db").exists()
    assert "ignored stdin over 16777216 bytes" in (tmp_path / "logs" / "hook.log").read_text()


# A read of the turn as slow as one of millions of lines, on any machine: every record parses a
# millisecond late. And the second kept in reserve for the partial row (0.5 s in brain, a quarter of
# a 1 s budget before) is one, so a loaded machine (load 10 and more: CI beside other jobs) still
# opens the ledger and writes the row in it; whether 0.5 s does is a speed claim, not this test's.
SLOW_READ = """
import time
import brain.ledger.hook as hook
import brain.ledger.transcript as transcript
hook.FALLBACK_RESERVE = 1.0
parse = transcript._parse
def _parse(raw):
    time.sleep(0.001)
    return parse(raw)
transcript._parse = _parse
"""


def test_a_stop_out_of_time_still_leaves_a_row(tmp_path):
    # A turn too long to read within the budget (17 MB of small lines took ~3 s) used to leave no
    # row at all: the watchdog ended the process first.
    path = tmp_path / "long.jsonl"
    line = json.dumps({"type": "progress", "data": {"type": "bash_progress", "output": "."}}) + "\n"
    with open(path, "w", encoding="utf-8") as f:
        f.write(json.dumps({"type": "user", "uuid": "p", "message": {"content": "run the long job"}}) + "\n")
        f.write(line * 20_000)  # 20 s to read at a millisecond a line: the reserve starts at 3 s
    payload = hook_payload(path, last_assistant_message="The job finished.")
    # The ledger exists, as after any earlier turn: a first-ever Stop also creates it.
    open_db(tmp_path / "brain.db").close()
    proc = run_changed_hook(SLOW_READ, json.dumps(payload).encode(), tmp_path, BRAIN_HOOK_BUDGET="4")
    assert proc.returncode == 0 and proc.stdout == b"" and proc.stderr == b""
    (row,) = _rows(tmp_path / "brain.db")
    assert row["partial"] == 1 and row["summary"] == "The job finished."
    assert row["byte_end"] == path.stat().st_size
    log = (tmp_path / "logs" / "hook.log").read_text()
    assert "out of time reading" in log and "gave up" not in log


@pytest.mark.parametrize(
    "fields",
    [
        {"transcript_path": "/proc/self/status"},  # a file that cannot seek: OSError(EINVAL)
        {"transcript_path": "/" + "t" * 5000 + ".jsonl"},  # a name too long to look up
        {"cwd": "/" + "c" * 5000},  # the same in the search for the git repository
    ],
    ids=["cannot-seek", "path-too-long", "cwd-too-long"],
)
def test_a_transcript_or_cwd_that_cannot_be_read_still_leaves_a_row(tmp_path, fields):
    # It was a traceback in hook.log and no row: the turn was lost, where a missing
    # transcript leaves one with what the hook input says.
    t = Transcript(tmp_path / "t.jsonl")
    t.prompt("please fix the parser")
    t.text("fixed it")
    payload = hook_payload(t.write(), last_assistant_message="fixed it", **fields)
    proc = run_hook(json.dumps(payload).encode(), tmp_path)
    assert proc.returncode == 0 and proc.stdout == b"" and proc.stderr == b""
    (row,) = _rows(tmp_path / "brain.db")
    assert row["summary"] == "fixed it" and row["session_id"] == SESSION
    log = tmp_path / "logs" / "hook.log"
    assert "Traceback" not in (log.read_text() if log.exists() else "")


def test_a_stop_out_of_time_finds_the_recalled_prompt_of_a_session_id_holding_half_a_utf16_pair(tmp_path):
    # The prompt hook stores "\udc80" alone as U+FFFD; the Stop hook looked it up as it came,
    # SQLite refused it, and the partial row was lost with a traceback in hook.log.
    from brain.autorecall.store import write_recall
    from brain.ledger.hook import record_stop

    db = tmp_path / "brain.db"
    conn = open_db(db)
    try:
        recall = {"session_id": "s\udc80", "prompt_id": "p\udc80", "prompt": "run the long job"}
        write_recall(conn, {**recall, "prompt_chars": 16, "latency_ms": 1.0})
        conn.commit()
    finally:
        conn.close()
    t = Transcript(tmp_path / "t.jsonl")
    t.prompt("run the long job")
    t.text("The job finished.")
    payload = hook_payload(t.write(), session_id="s\udc80", prompt_id="p\udc80", last_assistant_message="Done.")
    record_stop(payload, db_path=db, deadline=time.monotonic() - 1)  # out of time at once
    (row,) = _rows(db)
    assert row["partial"] == 1 and row["ask"] == "run the long job" and row["session_id"] == "s\ufffd"


@pytest.mark.parametrize("where", ["HEAD", "gitdir"])
def test_a_git_head_that_is_a_fifo_is_no_branch_and_no_wait(tmp_path, where):
    # Opening a FIFO with no writer waits for one: the hook waited on .git/HEAD (or on the HEAD
    # of the folder a `.git` file names) until its watchdog ended it, and the turn was lost.
    import os

    repo = tmp_path / "proj"
    git = repo / ".git"
    if where == "HEAD":
        git.mkdir(parents=True)
        os.mkfifo(git / "HEAD")
    else:  # a worktree's `.git` file
        repo.mkdir()
        (tmp_path / "gitdir").mkdir()
        os.mkfifo(tmp_path / "gitdir" / "HEAD")
        git.write_text(f"gitdir: {tmp_path / 'gitdir'}\n")
    payload = {"session_id": "s1", "prompt_id": "p1", "cwd": str(repo), "last_assistant_message": "done"}
    proc = run_hook(json.dumps(payload).encode(), tmp_path, BRAIN_HOOK_BUDGET="10")
    assert proc.returncode == 0 and proc.stdout == b"" and proc.stderr == b""
    (row,) = _rows(tmp_path / "brain.db")
    assert row["project"] == "proj" and row["git_branch"] is None and row["summary"] == "done"
    # Its one line: no transcript to read (so the row is partial); nothing about the FIFO, and
    # no watchdog's "gave up" (a FIFO waited on is waited on until the watchdog: counted by the
    # log's lines, not by a bound on the seconds the hook took, which a loaded machine decides).
    log = (tmp_path / "logs" / "hook.log").read_text()
    assert len(log.splitlines()) == 1 and "no transcript path in the hook input" in log, log


def test_a_hook_log_that_is_a_fifo_holds_no_hook(tmp_path):
    # Opened for appending, a FIFO with no reader waited for one: every hook that logged a line
    # (here a budget it cannot read) hung for good, its watchdog too (its last line is a log's).
    import os

    (tmp_path / "logs").mkdir(mode=0o700)
    os.mkfifo(tmp_path / "logs" / "hook.log")
    payload = {"session_id": "s1", "prompt_id": "p1", "cwd": str(tmp_path), "last_assistant_message": "done"}
    proc = run_hook(json.dumps(payload).encode(), tmp_path, BRAIN_HOOK_BUDGET="soon")
    assert proc.returncode == 0 and proc.stdout == b"" and proc.stderr == b""
    (row,) = _rows(tmp_path / "brain.db")
    assert row["summary"] == "done"


def test_a_fifo_where_the_unknown_settings_are_noted_holds_no_hook(tmp_path):
    # The names of BRAIN_* variables that are no setting, last logged, are kept beside the log
    # and read on every turn: a FIFO there was opened for reading (waiting for a writer), and
    # the hook waited until its watchdog, the turn lost.
    import os

    (tmp_path / "logs").mkdir(mode=0o700)
    os.mkfifo(tmp_path / "logs" / "hook-unknown-settings")
    payload = {"session_id": "s1", "prompt_id": "p1", "cwd": str(tmp_path), "last_assistant_message": "done"}
    proc = run_hook(json.dumps(payload).encode(), tmp_path, BRAIN_HOOK_BUDGET="10", BRAIN_XYZZY="1")
    assert proc.returncode == 0 and proc.stdout == b"" and proc.stderr == b""
    (row,) = _rows(tmp_path / "brain.db")
    assert row["summary"] == "done"
    log = (tmp_path / "logs" / "hook.log").read_text()
    # the watchdog never came (a FIFO waited on is waited on until it does)
    assert "BRAIN_XYZZY is not a brain setting" in log and "gave up" not in log, log


def test_the_unknown_settings_are_logged_once_not_every_turn(tmp_path):
    payload = {"session_id": "s1", "prompt_id": "p1", "cwd": str(tmp_path), "last_assistant_message": "done"}
    for _ in range(2):
        proc = run_hook(json.dumps(payload).encode(), tmp_path, BRAIN_XYZZY="1")
        assert proc.returncode == 0 and proc.stderr == b""
    log = (tmp_path / "logs" / "hook.log").read_text()
    assert log.count("BRAIN_XYZZY is not a brain setting") == 1, log


@pytest.mark.parametrize("held_by", ["fifo", "symlink", "dangling symlink", "empty folder"])
def test_a_name_for_the_unknown_settings_held_by_another_kind_of_file_is_replaced(tmp_path, held_by):
    # The note of which BRAIN_* names were said was read and written only as a regular file: a
    # FIFO, a folder or a symlink there was never replaced, so every turn logged the names again;
    # and a symlink was written through (the file it led to truncated, or one made where it led).
    import os

    logs = tmp_path / "logs"
    logs.mkdir(mode=0o700)
    seen = logs / "hook-unknown-settings"
    target = tmp_path / "mine.txt"
    if held_by == "fifo":
        os.mkfifo(seen)
    elif held_by == "symlink":
        target.write_text("the user's own words\n")
        seen.symlink_to(target)
    elif held_by == "dangling symlink":
        seen.symlink_to(target)
    else:
        seen.mkdir()
    payload = {"session_id": "s1", "prompt_id": "p1", "cwd": str(tmp_path), "last_assistant_message": "done"}
    for _ in range(3):
        proc = run_hook(json.dumps(payload).encode(), tmp_path, BRAIN_HOOK_BUDGET="10", BRAIN_XYZZY="1")
        assert proc.returncode == 0 and proc.stdout == b"" and proc.stderr == b""
    log = (logs / "hook.log").read_text()
    assert log.count("BRAIN_XYZZY is not a brain setting") == 1 and "cannot note" not in log, log
    assert seen.is_file() and not seen.is_symlink()
    assert sorted(p.name for p in logs.iterdir()) == ["hook-unknown-settings", "hook.log"]  # no spare left
    if held_by == "symlink":
        assert target.read_text() == "the user's own words\n"
    else:
        assert not target.exists()
    assert [row["summary"] for row in _rows(tmp_path / "brain.db")] == ["done"]  # one turn, recorded once


def test_a_folder_with_something_in_it_where_the_unknown_settings_are_noted_is_kept(tmp_path):
    # Not brain's to remove: it stays, whole, and the log says why the names come again.
    logs = tmp_path / "logs"
    (logs / "hook-unknown-settings").mkdir(parents=True, mode=0o700)
    (logs / "hook-unknown-settings" / "keep.md").write_text("mine")
    payload = {"session_id": "s1", "prompt_id": "p1", "cwd": str(tmp_path), "last_assistant_message": "done"}
    proc = run_hook(json.dumps(payload).encode(), tmp_path, BRAIN_XYZZY="1")
    assert proc.returncode == 0 and proc.stdout == b"" and proc.stderr == b""
    assert (logs / "hook-unknown-settings" / "keep.md").read_text() == "mine"
    log = (logs / "hook.log").read_text()
    assert "BRAIN_XYZZY is not a brain setting" in log
    assert "cannot note which settings were said in" in log and "move what is there away" in log, log
    assert sorted(p.name for p in logs.iterdir()) == ["hook-unknown-settings", "hook.log"]


def test_the_watchdog_ends_the_hook_though_its_last_line_of_log_hangs(tmp_path):
    # Its last act was a line of log, then os._exit: a log on a disk that hung (a network home)
    # held the watchdog, and the hook with it, for good.
    import os

    code = (
        "import time\n"
        "from brain.ledger import hook\n"
        "hook.write_log_line = lambda line: time.sleep(3600)  # a write that never returns\n"
        "hook.start_watchdog(0.2)\n"
        "time.sleep(3600)\n"
    )
    env = dict(os.environ, BRAIN_HOME=str(tmp_path), PYTHONPATH=str(Path(__file__).resolve().parents[1]))
    # It ends in 0.4 s once Python has started; before, it outlived the timeout.
    proc = subprocess.run([sys.executable, "-c", code], env=env, capture_output=True, timeout=30)
    assert proc.returncode == 0 and proc.stderr == b""


def test_the_watchdogs_last_line_is_written_however_long_it_takes_to_make(tmp_path):
    # Its last line was masked (a few ms of CPU, cold) within the 0.2 s it gives the write: a
    # loaded machine (load 15+) stretched that past 0.2 s, and the hook ended without saying why
    # (test_prompt_hook's hung-stdin test missed the line). Here masking takes 0.6 s: the line
    # is made before the moment starts, so only its write is bounded.
    import os

    code = (
        "import time\n"
        "from brain.ledger import hook\n"
        "masked = hook.redact\n"
        "hook.redact = lambda text: (time.sleep(0.6), masked(text))[1]  # a loaded machine's masking\n"
        "hook.start_watchdog(0.1)\n"
        "time.sleep(3600)\n"
    )
    env = dict(os.environ, BRAIN_HOME=str(tmp_path), PYTHONPATH=str(Path(__file__).resolve().parents[1]))
    proc = subprocess.run([sys.executable, "-c", code], env=env, capture_output=True, timeout=60)
    assert proc.returncode == 0 and proc.stderr == b""
    assert "gave up after the 0.1 s budget" in (tmp_path / "logs" / "hook.log").read_text()


def test_hooks_killed_at_any_point_leave_the_ledger_whole(tmp_path):
    # kill -9 (or a power cut) while a Stop hook runs: opening, creating the tables, writing
    # its row. The database stays whole and keeps every row written before; only the killed
    # hook's own turn may be missing, and the next hook records as ever.
    cmd, env = brain_command()
    env.update(BRAIN_HOME=str(tmp_path), BRAIN_HOOK_BUDGET="60")

    def start(i: int) -> subprocess.Popen:
        t = Transcript(tmp_path / f"t{i}.jsonl", session=f"session-{i:02d}")
        t.prompt(f"question {i}")
        t.tool("Bash", command=f"make {i}")
        t.text(f"answer {i}")
        proc = subprocess.Popen([*cmd, "hook", "stop"], stdin=subprocess.PIPE, env=env, cwd=tmp_path)
        proc.stdin.write(json.dumps(hook_payload(t.write(), session_id=f"session-{i:02d}")).encode())
        proc.stdin.close()
        return proc

    began = time.monotonic()
    assert start(0).wait(timeout=60) == 0
    whole_run = time.monotonic() - began  # kills are spread over what one hook takes
    kept: list[str] = ["question 0"]
    for i in range(1, 13):
        proc = start(i)
        time.sleep(whole_run * i / 12)
        proc.kill()
        proc.wait(timeout=60)
        conn = sqlite3.connect(tmp_path / "brain.db")
        try:
            assert conn.execute("PRAGMA integrity_check").fetchone() == ("ok",)
            asks = [r[0] for r in conn.execute("SELECT ask FROM turns ORDER BY id")]
        finally:
            conn.close()
        assert asks[: len(kept)] == kept and set(asks) <= {*kept, f"question {i}"}
        kept = asks
    assert start(13).wait(timeout=60) == 0
    assert [r["ask"] for r in _rows(tmp_path / "brain.db")] == [*kept, "question 13"]


def test_hook_start_up_leaves_rare_paths_unimported(tmp_path):
    # uuid (a turn with no key of its own) is loaded only when such a turn comes, difflib only for
    # a BRAIN_-like name to suggest (BRAIN_HOME, set here as an installed hook sets it, is none).
    code = (
        "import sys; sys.argv = ['brain', 'hook', 'stop']\n"
        "import brain.__main__ as entry\n"
        "try:\n    entry.main()\nexcept SystemExit:\n    pass\n"
        "sys.stderr.write(repr(sorted(m for m in ('uuid', 'difflib') if m in sys.modules)))\n"
    )
    _, env = brain_command()
    env["BRAIN_HOME"] = str(tmp_path)
    env["PYTHONPATH"] = str(Path(__file__).resolve().parents[1])
    proc = subprocess.run([sys.executable, "-c", code], input=b"{}", env=env, capture_output=True, timeout=60)
    assert proc.stderr == b"[]"


@pytest.mark.skipif(sys.platform == "win32", reason="no file size limit (RLIMIT_FSIZE) on Windows")
@pytest.mark.parametrize("limit", [0, 4096, 30_000])
def test_both_hooks_on_a_disk_with_no_room_exit_zero_print_nothing_and_the_ledger_goes_on(tmp_path, limit):
    """The README: the hook "always exits 0, prints nothing". A disk with no room for `brain.db`
    (here the file size limit, `ulimit -f`: no file may grow past ``limit`` bytes) loses the turn,
    and nothing else: neither hook says a word to the agent, and what they left (an empty
    `brain.db`, one without its tables, a -shm cut short) does not stop the next turn's row."""
    import resource

    def limited() -> None:
        resource.setrlimit(resource.RLIMIT_FSIZE, (limit, resource.getrlimit(resource.RLIMIT_FSIZE)[1]))

    t = Transcript(tmp_path / "t.jsonl")
    t.prompt("lost " * 2000)  # a row larger than any page SQLite may still write
    t.text("to the full disk " * 2000)
    cmd, env = brain_command()
    env.update(BRAIN_HOME=str(tmp_path / "home"))
    prompt = {**hook_payload(None), "hook_event_name": "UserPromptSubmit", "prompt": "how should agent memory work"}
    for hook, payload in (("stop", hook_payload(t.write())), ("prompt", prompt)):
        proc = subprocess.run(
            [*cmd, "hook", hook],
            input=json.dumps(payload).encode(),
            env=env,
            capture_output=True,
            check=False,
            timeout=60,
            preexec_fn=limited,
        )
        assert (proc.returncode, proc.stdout, proc.stderr) == (0, b"", b""), (hook, proc)
    later = Transcript(tmp_path / "later.jsonl")
    later.prompt("after the disk had room")
    later.text("recorded")
    proc = run_hook(json.dumps(hook_payload(later.write(), session_id="s2")).encode(), tmp_path / "home")
    assert (proc.returncode, proc.stdout, proc.stderr) == (0, b"", b"")
    assert [r["ask"] for r in _rows(tmp_path / "home" / "brain.db")] == ["after the disk had room"]
    turns = subprocess.run([*cmd, "turns"], env=env, capture_output=True, text=True, check=False, timeout=60)
    assert turns.returncode == 0 and "after the disk had room" in turns.stdout, turns


def test_a_secret_in_every_place_a_turn_carries_one_is_stored_nowhere(tmp_path):
    """The README: secrets are masked "in every text field, JSON lists and objects (their keys
    too…) before anything is written". Tried end to end on every column a turn fills (the
    prompt, a command, a file's path, a tool's name and its input's keys, the final text, `cwd`
    and so `project`, the transcript's path, the decisions) and on every byte the hooks leave in the brain
    home: the database, its WAL and -shm if any, the log."""
    token = "ghp_" + "A1b2C3d4E5f6G7h8I9j0K1l2M3n4O5p6Q7r8"
    aws = "AKIA" + "Q3EGRXJ5ZK7WMN2P"
    key = "sk-ant-api03-" + "Zq8xW2vN7pL4kR9tY6uB3mC1dF5gH0jKaS"
    secrets = (token, aws, key)
    proj = tmp_path / f"proj-{token}"
    proj.mkdir()
    t = Transcript(tmp_path / f"t-{aws}.jsonl", cwd=str(proj))
    t.prompt(f"deploy with token {token} please")
    t.tool("Bash", f"pushed with {key}", command=f"git push https://x:{token}@github.com/o/r")
    t.tool("Write", "ok", file_path=f"{proj}/creds-{aws}.txt", content=f"AWS_ACCESS_KEY_ID={aws}")
    t.tool(f"mcp__vault__{key}", "ok", **{f"key_{token}": "v"})
    t.text(f"Done. I decided to use {key} instead of {aws}. Token {token}.")
    home = tmp_path / "home"
    home.mkdir()
    stop = hook_payload(t.write(), cwd=str(proj), last_assistant_message=f"final {token}")
    done = run_hook(json.dumps(stop).encode(), home)
    assert (done.returncode, done.stdout, done.stderr) == (0, b"", b"")
    prompt = {**stop, "hook_event_name": "UserPromptSubmit", "prompt": f"use {token} and {key}"}
    cmd, env = brain_command()
    env.update(BRAIN_HOME=str(home))
    done = subprocess.run([*cmd, "hook", "prompt"], input=json.dumps(prompt).encode(), env=env, capture_output=True)
    assert (done.returncode, done.stdout, done.stderr) == (0, b"", b"")
    (row,) = _rows(home / "brain.db")
    assert "***" in row["ask"] and "***" in row["cwd"] and "***" in row["commands"] and "***" in row["tools"]
    conn = sqlite3.connect(home / "brain.db")
    try:
        stored = [str(v) for table in ("turns", "recalls") for r in conn.execute(f"SELECT * FROM {table}") for v in r]
    finally:
        conn.close()
    assert stored and not [v for v in stored if any(s in v for s in secrets)]
    for path in [p for p in home.rglob("*") if p.is_file()]:
        data = path.read_bytes()
        assert not [s for s in secrets if s.encode() in data], path


@pytest.mark.parametrize("case", ["a whole turn", "a database that fails"])
def test_both_hooks_import_nothing_outside_the_standard_library_on_a_real_turn(tmp_path, case):
    """The README: the hooks import "only the standard library". The test above ran the Stop hook
    on `{}` (no transcript read, nothing masked, nothing written) against a list of five names.
    Here both hooks run on a turn that takes every path a row takes (a `.env`, a git branch, a
    transcript of tools, secrets to mask, Russian decisions, a vault to look in), or on a
    `brain.db` that cannot be opened (the error logged); every module they load is the standard
    library's, brain's, or one the interpreter loads before any code runs (a .pth file's)."""
    proj = tmp_path / "proj"
    (proj / ".git").mkdir(parents=True)
    (proj / ".git" / "HEAD").write_text("ref: refs/heads/main\n")
    home = tmp_path / "home"
    home.mkdir()
    # the largest budgets: cut off by its watchdog, a hook's process ended before it wrote the
    # modules it loaded (stderr empty, a SyntaxError) on a loaded machine (beside two CPU
    # burners, with 3 s and the prompt's 0.8 s); 5 s is the most the prompt hook may have
    (home / ".env").write_text("BRAIN_HOOK_BUDGET=60\nBRAIN_PROMPT_BUDGET=5\n")
    if case == "a database that fails":
        (home / "brain.db").mkdir()
    t = Transcript(tmp_path / "t.jsonl", cwd=str(proj))
    t.prompt("deploy with token ghp_" + "A1b2C3d4E5f6G7h8I9j0K1l2M3n4O5p6Q7r8 please; пароль: x")
    t.tool("Bash", "ok", command="export PGPASSWORD=hunter2 && psql")
    t.tool("Task", "ok", description="sub", prompt="p", subagent_type="general")
    t.tool("Edit", "ok", file_path=str(proj / "a.py"), old_string="a", new_string="b")
    t.tool("Read", "no such file", error=True, file_path=str(proj / "b.py"))
    t.text("I decided to use WAL instead of a rollback journal. Решили: WAL.")
    stop = hook_payload(t.write(), cwd=str(proj))
    prompt = {**stop, "hook_event_name": "UserPromptSubmit", "prompt": "how should agent memory work"}
    loaded = "sys.stderr.write(repr(sorted({m.split('.')[0] for m in sys.modules})))\n"
    code = (
        "import sys; sys.argv = ['brain', 'hook', sys.argv[1]]\n"
        "import brain.__main__ as entry\n"
        "try:\n    entry.main()\nexcept SystemExit:\n    pass\n" + loaded
    )
    _, env = brain_command()
    env.update(BRAIN_HOME=str(home), BRAIN_VAULT=str(tmp_path), PYTHONPATH=str(Path(__file__).resolve().parents[1]))
    bare = subprocess.run([sys.executable, "-c", "import sys\n" + loaded], env=env, capture_output=True, check=True)
    before = set(ast.literal_eval(bare.stderr.decode()))
    for hook, payload in (("stop", stop), ("prompt", prompt)):
        proc = subprocess.run(
            [sys.executable, "-c", code, hook],
            input=json.dumps(payload).encode(),
            env=env,
            capture_output=True,
            check=False,
            timeout=60,
            cwd=proj,
        )
        assert proc.returncode == 0 and proc.stdout == b"", (hook, proc)
        modules = set(ast.literal_eval(proc.stderr.decode()))
        assert modules - before - set(sys.stdlib_module_names) == {"brain"}, (hook, proc.stderr)
    if case == "a whole turn":
        (row,) = _rows(home / "brain.db")
        assert row["git_branch"] and "***" in row["ask"] and "Решили: WAL." in row["decisions"]
    else:
        assert "brain.db" in (home / "logs" / "hook.log").read_text()


@pytest.mark.skipif(sys.platform == "win32", reason="no file size limit (RLIMIT_FSIZE) on Windows")
def test_a_turn_lost_to_the_file_size_limit_is_said_in_hook_log_as_that_limit(tmp_path):
    """Under `ulimit -f` the hook loses the turn and says nothing to the agent (above); hook.log
    said "brain.db: disk I/O error", a broken disk, on a disk with room. It names the limit and
    the fix."""
    import resource

    def limited() -> None:
        resource.setrlimit(resource.RLIMIT_FSIZE, (30_000, resource.getrlimit(resource.RLIMIT_FSIZE)[1]))

    t = Transcript(tmp_path / "t.jsonl")
    t.prompt("lost " * 2000)
    t.text("to the file size limit " * 2000)
    cmd, env = brain_command()
    env.update(BRAIN_HOME=str(tmp_path / "home"))
    proc = subprocess.run(
        [*cmd, "hook", "stop"],
        input=json.dumps(hook_payload(t.write())).encode(),
        env=env,
        capture_output=True,
        check=False,
        timeout=60,
        preexec_fn=limited,
    )
    assert (proc.returncode, proc.stdout, proc.stderr) == (0, b"", b""), proc
    errors = [line for line in (tmp_path / "home" / "logs" / "hook.log").read_text().splitlines() if " error: " in line]
    assert len(errors) == 1, errors
    assert "file size limit" in errors[0] and "ulimit -f unlimited" in errors[0], errors[0]
