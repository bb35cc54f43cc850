"""Memory of `brain mcp` given one very long line by its client (a figure, not a test).

Starts `brain mcp` on an empty temporary vault (nothing to load), initializes the session, sends
lets it load its index (--settle seconds), sends one `tools/call` line of --mb megabytes, then a
`ping`, and prints the process's peak resident memory (VmHWM) before the line and after it,
whether the ping was answered, and the long call's answer if any.
Run it against another tree with PYTHONPATH (the server is that tree's):

    PYTHONPATH=. python bench/mcp_long_line.py [--mb 200]
"""

from __future__ import annotations

import argparse
import json
import os
import select
import subprocess
import sys
import tempfile
import time
from pathlib import Path


def _memory(pid: int, field: str) -> int:
    """A ``/proc/PID/status`` figure in MB (VmRSS, VmHWM)."""
    for line in Path(f"/proc/{pid}/status").read_text().splitlines():
        if line.startswith(field + ":"):
            return int(line.split()[1]) // 1024
    return -1


def _answer(process: subprocess.Popen, timeout: float) -> dict | None:
    assert process.stdout is not None
    ready, _, _ = select.select([process.stdout], [], [], timeout)
    return json.loads(process.stdout.readline()) if ready else None


def _answer_soon(answers: dict, process: subprocess.Popen) -> bool:
    """Wait 10 s more for the long call's answer once the ping's came; True: stop waiting."""
    late = _answer(process, 10)
    if late is not None:
        answers[late.get("id")] = late
    return True


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--mb", type=int, default=200, help="megabytes of the long line")
    parser.add_argument("--settle", type=float, default=20.0, help="seconds to let the session load first")
    args = parser.parse_args()
    with tempfile.TemporaryDirectory() as folder:
        vault, home = Path(folder) / "vault", Path(folder) / "home"
        vault.mkdir()
        env = dict(os.environ, BRAIN_HOME=str(home), HF_HUB_OFFLINE="1")
        process = subprocess.Popen(
            [sys.executable, "-m", "brain", "mcp", "--vault", str(vault)],
            stdin=subprocess.PIPE,
            stdout=subprocess.PIPE,
            stderr=subprocess.DEVNULL,
            env=env,
        )
        assert process.stdin is not None
        try:
            hello = {
                "protocolVersion": "2025-06-18",
                "capabilities": {},
                "clientInfo": {"name": "bench", "version": "0"},
            }
            for message in (
                {"jsonrpc": "2.0", "id": 0, "method": "initialize", "params": hello},
                {"jsonrpc": "2.0", "method": "notifications/initialized"},
            ):
                process.stdin.write(json.dumps(message).encode() + b"\n")
            process.stdin.flush()
            _answer(process, 60)
            time.sleep(args.settle)  # the session loads its index (and model) in the background meanwhile
            before = _memory(process.pid, "VmHWM")
            head = b'{"jsonrpc":"2.0","id":1,"method":"tools/call","params":{"name":"search","arguments":{"query":"'
            process.stdin.write(head + b"a" * (args.mb << 20) + b'"}}}\n')
            process.stdin.write(b'{"jsonrpc":"2.0","id":2,"method":"ping"}\n')
            process.stdin.flush()
            answers = {}
            while (answer := _answer(process, 60)) is not None:
                answers[answer.get("id")] = answer
                if {1, 2} <= answers.keys() or (2 in answers and _answer_soon(answers, process)):
                    break
            peak = _memory(process.pid, "VmHWM")
            long_call = answers.get(1)
            said = (long_call.get("error") or long_call.get("result", {}).get("content")) if long_call else None
            print(f"line of {args.mb} MB: peak resident before it {before} MB, after it {peak} MB")
            print(
                f"ping answered: {2 in answers}; the long call's answer: {json.dumps(said)[:160] if said else 'none'}"
            )
        finally:
            process.stdin.close()
            try:
                process.wait(30)
            except subprocess.TimeoutExpired:
                process.kill()
                process.wait()


if __name__ == "__main__":
    main()
