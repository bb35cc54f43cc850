"""Builders for synthetic Claude Code transcripts and a runner for the real hook command."""

from __future__ import annotations

import json
import os
import shutil
import subprocess
import sys
from pathlib import Path
from typing import Any

import pytest

from brain.ledger.redact import redact

ROOT = Path(__file__).resolve().parents[1]
FIXTURES = ROOT.parent / "shared" / "fixtures" / "claude-code"
SESSION = "11111111-2222-4333-8444-555555555555"


def fixture(name: str) -> Path:
    """A real transcript from ../shared, or a clean skip when it is not there."""
    path = FIXTURES / name
    if not path.is_file():
        pytest.skip(f"../shared/fixtures/claude-code/{name} is not here")
    return path


def truncated_copy(source: Path, lines: int, target: Path) -> Path:
    """The first ``lines`` lines of ``source`` written to ``target`` (a past Stop)."""
    with open(source, "rb") as f:
        head = [next(f) for _ in range(lines)]
    target.write_bytes(b"".join(head))
    return target


class Transcript:
    """Appends transcript lines in the shapes Claude Code writes."""

    def __init__(self, path: Path, *, session: str = SESSION, cwd: str = "/home/dev/proj"):
        self.path = path
        self.session = session
        self.cwd = cwd
        self.n = 0
        self.lines: list[str] = []

    def _add(self, kind: str, **fields: Any) -> dict[str, Any]:
        self.n += 1
        record = {
            "parentUuid": f"uuid-{self.n - 1}" if self.n > 1 else None,
            "isSidechain": False,
            "userType": "external",
            "cwd": self.cwd,
            "sessionId": self.session,
            "version": "2.1.40",
            "gitBranch": "feature/x",
            "type": kind,
            "uuid": f"uuid-{self.n}",
            "timestamp": f"2026-03-01T10:00:{self.n:02d}.000Z",
        }
        record.update(fields)
        self.lines.append(json.dumps(record, ensure_ascii=False))
        return record

    def prompt(self, text: str | list[dict[str, Any]], **fields: Any) -> dict[str, Any]:
        return self._add("user", message={"role": "user", "content": text}, **fields)

    def text(self, text: str, message_id: str | None = None) -> dict[str, Any]:
        return self._add(
            "assistant",
            message=_assistant(message_id or f"msg_{self.n}", [{"type": "text", "text": text}]),
        )

    def tool(self, name: str, result: str = "ok", *, error: bool = False, **data: Any) -> str:
        tool_id = f"toolu_{self.n}"
        self._add(
            "assistant",
            message=_assistant(f"msg_{self.n}", [{"type": "tool_use", "id": tool_id, "name": name, "input": data}]),
        )
        block = {"type": "tool_result", "tool_use_id": tool_id, "content": result}
        if error:
            block["is_error"] = True
        self._add(
            "user",
            message={"role": "user", "content": [block]},
            toolUseResult=("Error: " + result) if error else {"stdout": result},
        )
        return tool_id

    def raw(self, kind: str, **fields: Any) -> dict[str, Any]:
        return self._add(kind, **fields)

    def write(self, *, tail: str = "") -> Path:
        self.path.write_text("\n".join(self.lines) + "\n" + tail, encoding="utf-8")
        return self.path


def _assistant(message_id: str, content: list[dict[str, Any]]) -> dict[str, Any]:
    return {
        "id": message_id,
        "type": "message",
        "role": "assistant",
        "model": "claude-opus-4-6",
        "content": content,
    }


def brain_command() -> tuple[list[str], dict[str, str]]:
    """The installed ``brain`` (the script beside this interpreter), or ``python -m brain``."""
    env = {k: v for k, v in os.environ.items() if not k.startswith("BRAIN_")}
    for candidate in (Path(sys.executable).parent / "brain", shutil.which("brain")):
        if candidate and Path(candidate).is_file():
            return [str(candidate)], env
    env["PYTHONPATH"] = str(ROOT) + os.pathsep + env.get("PYTHONPATH", "")
    return [sys.executable, "-m", "brain"], env


def hook_payload(transcript: Path | str | None, **extra: Any) -> dict[str, Any]:
    payload = {
        "session_id": SESSION,
        "transcript_path": str(transcript) if transcript else None,
        "cwd": "/home/dev/proj",
        "hook_event_name": "Stop",
        "stop_hook_active": False,
    }
    payload.update(extra)
    return payload


def run_hook(stdin: bytes, home: Path, *, timeout: float = 30, **env_extra: str) -> subprocess.CompletedProcess:
    cmd, env = brain_command()
    env.update(BRAIN_HOME=str(home), **env_extra)
    return subprocess.run(
        [*cmd, "hook", "stop"],
        input=stdin,
        env=env,
        capture_output=True,
        check=False,
        timeout=timeout,
        cwd=home,
    )


def run_changed_hook(
    prelude: str, stdin: bytes, home: Path, *, timeout: float = 60, **env_extra: str
) -> subprocess.CompletedProcess:
    """``brain hook stop`` in a process of its own that first runs ``prelude``, Python that changes
    brain's modules before the hook starts: a read or an upgrade made as slow as a huge one, the
    seconds a hook keeps in reserve made wider than the process needs on a loaded machine."""
    _, env = brain_command()
    env.update(BRAIN_HOME=str(home), PYTHONPATH=str(ROOT), **env_extra)
    code = f"{prelude}\nimport sys\nsys.argv = ['brain', 'hook', 'stop']\nfrom brain.__main__ import main\nmain()\n"
    return subprocess.run(
        [sys.executable, "-c", code], input=stdin, env=env, capture_output=True, timeout=timeout, cwd=home
    )


def assert_masked(text: str, secret: str, kept: str) -> None:
    """``secret`` is gone, ``kept`` (what says what was there) stays, and masking again changes nothing."""
    masked = redact(text)
    assert secret not in masked
    assert kept in masked
    assert redact(masked) == masked


def sqlite_steps(conn: Any, work: Any, per: int) -> int:
    """SQLite's virtual-machine steps (in units of ``per``) that ``work()`` costs on ``conn``: the
    work itself, not the clock's, so a test of how much a query reads cannot fail on a busy machine."""
    steps = [0]

    def count() -> int:
        steps[0] += 1
        return 0

    conn.set_progress_handler(count, per)
    try:
        work()
    finally:
        conn.set_progress_handler(None, per)
    return steps[0]
