"""Whole-process speed of `brain hook stop` on a 50 MB transcript (a figure, not a test).

Writes a synthetic Claude Code transcript of ~50 MB (many turns with large tool results,
the new split-message format) to a temporary folder, then runs the installed
`brain hook stop` as Claude Code does — a fresh process with the hook JSON on stdin —
and prints p50/p95 wall time next to a bare `python -c pass` for the ratio.

    python bench/hook_speed.py [--runs 30] [--size-mb 50] [--brain PATH]
"""

from __future__ import annotations

import argparse
import json
import os
import shutil
import subprocess
import sys
import tempfile
import time
from pathlib import Path

SESSION = "bench-0000-4000-8000-000000000000"


def _line(kind: str, n: int, **fields: object) -> str:
    record = {
        "parentUuid": f"u-{n - 1}",
        "isSidechain": False,
        "userType": "external",
        "cwd": "/home/dev/project",
        "sessionId": SESSION,
        "version": "2.1.38",
        "gitBranch": "main",
        "type": kind,
        "uuid": f"u-{n}",
        "timestamp": f"2026-02-10T21:{n // 60 % 60:02d}:{n % 60:02d}.000Z",
        **fields,
    }
    return json.dumps(record, separators=(",", ":")) + "\n"


def _turn(start: int, result_bytes: int, final: bool = False) -> tuple[str, int]:
    """One turn: prompt, a Read with a large result, an Edit, a Bash, the final text."""
    n = start
    out = [_line("user", n, message={"role": "user", "content": f"prompt {n}: fix the parser"})]
    blob = ("lorem ipsum dolor sit amet " * (result_bytes // 27 + 1))[:result_bytes]
    steps = [
        ("Read", {"file_path": f"/home/dev/project/src/mod{n}.py"}, blob),
        (
            "Edit",
            {"file_path": f"/home/dev/project/src/mod{n}.py", "old_string": "a", "new_string": "b"},
            "ok",
        ),
        ("Bash", {"command": "python -m pytest -q tests/"}, "12 passed"),
    ]
    for name, data, result in steps:
        n += 1
        tool_id = f"toolu_{n}"
        out.append(
            _line(
                "assistant",
                n,
                message={
                    "id": f"msg_{n}",
                    "type": "message",
                    "role": "assistant",
                    "model": "claude-opus-4-6",
                    "content": [{"type": "tool_use", "id": tool_id, "name": name, "input": data}],
                },
            )
        )
        n += 1
        out.append(
            _line(
                "user",
                n,
                message={
                    "role": "user",
                    "content": [{"type": "tool_result", "tool_use_id": tool_id, "content": result}],
                },
                toolUseResult={"stdout": result[:200]},
            )
        )
    n += 1
    text = "Fixed the parser; I'll use the streaming reader instead of loading the file."
    if final:
        text = "Done: " + text
    out.append(
        _line(
            "assistant",
            n,
            message={
                "id": f"msg_{n}",
                "type": "message",
                "role": "assistant",
                "model": "claude-opus-4-6",
                "content": [{"type": "text", "text": text}],
            },
        )
    )
    return "".join(out), n + 1


def write_transcript(path: Path, size_mb: float) -> int:
    target = int(size_mb * 1024 * 1024)
    written, n = 0, 0
    with open(path, "w", encoding="utf-8") as f:
        while written < target:
            chunk, n = _turn(n, result_bytes=60_000)
            f.write(chunk)
            written += len(chunk)
        chunk, n = _turn(n, result_bytes=4_000, final=True)
        f.write(chunk)
    return path.stat().st_size


def time_runs(cmd: list[str], stdin: bytes, env: dict[str, str], runs: int) -> list[float]:
    times = []
    for _ in range(runs):
        start = time.perf_counter()
        proc = subprocess.run(cmd, input=stdin, env=env, capture_output=True, check=False)
        times.append(time.perf_counter() - start)
        if proc.returncode != 0 or proc.stdout:
            raise SystemExit(f"hook misbehaved: rc={proc.returncode} stdout={proc.stdout!r}")
    return times


def brain_command(explicit: str | None) -> list[str]:
    if explicit:
        return [explicit]
    beside = Path(sys.executable).parent / "brain"  # not a PATH shim: the real script
    if beside.is_file():
        return [str(beside)]
    found = shutil.which("brain")
    return [found] if found else [sys.executable, "-m", "brain"]


def p(times: list[float], q: float) -> float:
    ordered = sorted(times)
    return ordered[min(len(ordered) - 1, int(q * len(ordered)))] * 1000


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--runs", type=int, default=30)
    parser.add_argument("--size-mb", type=float, default=50.0)
    parser.add_argument("--brain", help="path of the brain executable (default: the installed one)")
    args = parser.parse_args()

    with tempfile.TemporaryDirectory(prefix="brain-bench-") as tmp:
        tmp_path = Path(tmp)
        transcript = tmp_path / "transcript.jsonl"
        size = write_transcript(transcript, args.size_mb)
        env = {**os.environ, "BRAIN_HOME": str(tmp_path / "home")}
        env.pop("BRAIN_DB", None)
        # As on an installed system: byte code is cached, not recompiled on every start.
        env.pop("PYTHONDONTWRITEBYTECODE", None)
        payload = json.dumps(
            {
                "session_id": SESSION,
                "transcript_path": str(transcript),
                "cwd": str(tmp_path),
                "hook_event_name": "Stop",
                "stop_hook_active": False,
            }
        ).encode()
        cmd = [*brain_command(args.brain), "hook", "stop"]
        time_runs(cmd, payload, env, 2)  # warm the page cache and .pyc files, create the db
        # Interleaved, so both see the same machine load.
        hook, bare = [], []
        for _ in range(args.runs):
            hook += time_runs(cmd, payload, env, 1)
            bare += time_runs([sys.executable, "-c", "pass"], b"", env, 1)

        import sqlite3

        conn = sqlite3.connect(tmp_path / "home" / "brain.db")
        rows, ask, start, end = conn.execute(
            "SELECT COUNT(*), MAX(ask), MAX(byte_start), MAX(byte_end) FROM turns"
        ).fetchone()
        conn.close()
        log = tmp_path / "home" / "logs" / "hook.log"
        log_tail = log.read_text(encoding="utf-8")[-500:] if log.exists() else ""

    print(f"transcript: {size / 1e6:.1f} MB; row(s): {rows}; ask: {ask!r}")
    print(f"bytes read for the turn: {start}..{end} ({(end - start) / 1e3:.0f} kB of {size / 1e6:.1f} MB)")
    print(f"command: {' '.join(cmd)}  ({args.runs} runs)")
    print(f"brain hook stop : p50 {p(hook, 0.5):6.1f} ms   p95 {p(hook, 0.95):6.1f} ms")
    print(f"python -c pass  : p50 {p(bare, 0.5):6.1f} ms   p95 {p(bare, 0.95):6.1f} ms")
    print(f"ratio (p50)     : {p(hook, 0.5) / p(bare, 0.5):.2f}x bare interpreter start-up")
    print(f"over bare (p50) : {p(hook, 0.5) - p(bare, 0.5):6.1f} ms")
    if log_tail:
        print("hook.log was written (errors?):", log_tail)


if __name__ == "__main__":
    main()
