"""`brain mcp` sent many searches by a client that reads none of the answers, then all of them
(a figure, not a test).

Starts `brain mcp` for --vault (indexed; no `brain serve`: it answers with its own index), asks
`status`, then sends --calls `search` calls from a thread without reading stdout, for --wait
seconds, printing brain mcp's resident memory (VmRSS) and the CPU it used each 5 s and how many
calls it wrote; then reads every answer and says how many came. Each unread answer was kept in memory
(~20 KB each; 1,000: 581 MB); now brain mcp stops reading while 128 are unwritten (what the
client's pipe holds besides). brain mcp is stopped at the end. Another tree with PYTHONPATH:

    PYTHONPATH=. python bench/mcp_unread.py --vault V [--calls 1000] [--wait 60]
"""

from __future__ import annotations

import argparse
import json
import os
import select
import subprocess
import sys
import tempfile
import threading
import time
from pathlib import Path


def _rss(pid: int) -> int:
    for line in Path(f"/proc/{pid}/status").read_text().splitlines():
        if line.startswith("VmRSS:"):
            return int(line.split()[1]) // 1024
    return -1


def _cpu(pid: int) -> float:
    """CPU seconds the process has used (user and system), from /proc/PID/stat."""
    fields = Path(f"/proc/{pid}/stat").read_text().rsplit(")", 1)[1].split()
    return (int(fields[11]) + int(fields[12])) / os.sysconf("SC_CLK_TCK")


def _line(message: dict) -> bytes:
    return json.dumps(message).encode() + b"\n"


def _answer(stdout, timeout: float) -> dict | None:  # type: ignore[no-untyped-def]
    ready, _, _ = select.select([stdout], [], [], timeout)
    line = stdout.readline() if ready else b""
    return json.loads(line) if line else None


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--vault", type=Path, required=True, help="an indexed vault")
    parser.add_argument("--calls", type=int, default=1000, help="search calls sent, none read")
    parser.add_argument("--wait", type=float, default=60.0, help="seconds before the answers are read")
    args = parser.parse_args()
    vault = args.vault.resolve()
    with tempfile.TemporaryFile() as stderr:
        mcp = subprocess.Popen(
            [sys.executable, "-m", "brain", "mcp", "--vault", str(vault)],
            stdin=subprocess.PIPE,
            stdout=subprocess.PIPE,
            stderr=stderr,
        )
        assert mcp.stdin is not None and mcp.stdout is not None
        try:
            init = {
                "protocolVersion": "2025-06-18",
                "capabilities": {},
                "clientInfo": {"name": "bench", "version": "0"},
            }
            mcp.stdin.write(_line({"jsonrpc": "2.0", "id": 0, "method": "initialize", "params": init}))
            mcp.stdin.flush()
            assert _answer(mcp.stdout, 60) is not None, "no answer to initialize"
            mcp.stdin.write(_line({"jsonrpc": "2.0", "method": "notifications/initialized"}))
            mcp.stdin.write(_line({"jsonrpc": "2.0", "id": 0, "method": "tools/call", "params": {"name": "status"}}))
            mcp.stdin.flush()
            assert _answer(mcp.stdout, 120) is not None, "no answer to status"
            call = {"name": "search", "arguments": {"query": "what database do we use", "k": 20}}
            _answer(mcp.stdout, 0)
            mcp.stdin.write(_line({"jsonrpc": "2.0", "id": 0, "method": "tools/call", "params": call}))
            mcp.stdin.flush()
            assert _answer(mcp.stdout, 300) is not None, "no answer to a first search (the model loads)"
            print(f"brain mcp warm: {_rss(mcp.pid)} MB resident")
            sent = [0]

            def send() -> None:
                try:
                    for number in range(1, args.calls + 1):
                        assert mcp.stdin is not None
                        mcp.stdin.write(_line({"jsonrpc": "2.0", "id": number, "method": "tools/call", "params": call}))
                        mcp.stdin.flush()
                        sent[0] = number
                except (BrokenPipeError, ValueError):
                    pass

            writer = threading.Thread(target=send, daemon=True)
            cpu_before = _cpu(mcp.pid)
            started = time.monotonic()
            writer.start()
            peak = 0
            while time.monotonic() - started < args.wait:
                time.sleep(5)
                peak = max(peak, _rss(mcp.pid))
                print(
                    f"{time.monotonic() - started:5.0f} s: {sent[0]} calls written, brain mcp {_rss(mcp.pid)} MB "
                    f"resident, {_cpu(mcp.pid) - cpu_before:.1f} s of CPU"
                )
            unread_cpu = _cpu(mcp.pid) - cpu_before
            answered = 0
            while answered < args.calls and _answer(mcp.stdout, 120) is not None:
                answered += 1
            writer.join(10)
            print(
                f"{args.calls} searches, none read for {args.wait:g} s: peak {peak} MB, {unread_cpu:.1f} s of CPU; "
                f"then {answered} answered"
            )
        finally:
            if mcp.poll() is None:
                mcp.terminate()
                try:
                    mcp.wait(30)
                except subprocess.TimeoutExpired:
                    mcp.kill()
                    mcp.wait()
        stderr.seek(0)
        said = stderr.read().decode("utf-8", "replace").strip()
        if said:
            print("brain mcp said:", said[-2000:], file=sys.stderr)


if __name__ == "__main__":
    main()
