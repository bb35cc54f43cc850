"""`brain mcp` asked many searches at once with the vault's `brain serve` up (a figure, not a test).

With the vault's `brain serve` running (start it first, niced as on a loaded machine: the
session's calls come faster than it answers), starts `brain mcp` for --vault, asks `status`, and
3 s on sends --calls `search` calls in one go, reads every answer, and prints how long they took, `brain mcp`'s resident memory (VmRSS) then, and whether it loaded an index of its
own (its log's "loading the index in this process"): calls past the places the server gives a
client process are `busy`, and brain mcp answered those itself. brain mcp is stopped at the end.
Run it against another tree with PYTHONPATH (brain mcp is that tree's):

    nice brain serve --vault V &
    PYTHONPATH=. python bench/mcp_burst.py --vault V [--calls 60]
"""

from __future__ import annotations

import argparse
import json
import os
import select
import subprocess
import sys
import time
from pathlib import Path

LOADED = "loading the index in this process"


def _rss(pid: int) -> int:
    for line in Path(f"/proc/{pid}/status").read_text().splitlines():
        if line.startswith("VmRSS:"):
            return int(line.split()[1]) // 1024
    return -1


def _send(process: subprocess.Popen, message: dict) -> None:
    assert process.stdin is not None
    process.stdin.write(json.dumps(message).encode() + b"\n")
    process.stdin.flush()


def _answer(process: subprocess.Popen, timeout: float) -> dict | None:
    assert process.stdout is not None
    ready, _, _ = select.select([process.stdout], [], [], timeout)
    return json.loads(process.stdout.readline()) if ready else None


def _stop(process: subprocess.Popen) -> None:
    if process.poll() is None:
        process.terminate()
        try:
            process.wait(30)
        except subprocess.TimeoutExpired:
            process.kill()
            process.wait()


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--vault", type=Path, required=True, help="an indexed vault")
    parser.add_argument("--calls", type=int, default=60, help="search calls sent at once")
    args = parser.parse_args()
    vault = args.vault.resolve()
    brain = [sys.executable, "-m", "brain"]
    from brain.server import client

    if client.status(vault, timeout=5) is None:
        sys.exit(f"no brain serve for {vault}: start it first (nice brain serve --vault {args.vault} &)")
    mcp = None
    try:
        mcp = subprocess.Popen(
            [*brain, "mcp", "--vault", str(vault)],
            stdin=subprocess.PIPE,
            stdout=subprocess.PIPE,
            stderr=subprocess.PIPE,
        )
        init = {"protocolVersion": "2025-06-18", "capabilities": {}, "clientInfo": {"name": "bench", "version": "0"}}
        _send(mcp, {"jsonrpc": "2.0", "id": 0, "method": "initialize", "params": init})
        assert _answer(mcp, 60) is not None, "no answer to initialize"
        _send(mcp, {"jsonrpc": "2.0", "method": "notifications/initialized"})
        _send(mcp, {"jsonrpc": "2.0", "id": 0, "method": "tools/call", "params": {"name": "status"}})
        assert _answer(mcp, 120) is not None, "no answer to status"
        time.sleep(3)
        before = _rss(mcp.pid)
        started = time.monotonic()
        for number in range(1, args.calls + 1):
            call = {"name": "search", "arguments": {"query": f"what database do we use {number}"}}
            _send(mcp, {"jsonrpc": "2.0", "id": number, "method": "tools/call", "params": call})
        answered = sum(1 for _ in range(args.calls) if _answer(mcp, 120) is not None)
        took = time.monotonic() - started
        after = _rss(mcp.pid)
        assert mcp.stdin is not None and mcp.stderr is not None
        mcp.stdin.close()
        mcp.wait(30)
        said = mcp.stderr.read().decode("utf-8", "replace")
        own = LOADED in said or any(
            LOADED in line and f"pid={mcp.pid} " in line for line in _mcp_log().read_text(errors="replace").splitlines()
        )
        print(
            f"{args.calls} searches at once: {answered} answered in {took:.2f} s; brain mcp {before} -> {after} MB "
            f"resident; its own index loaded: {'yes' if own else 'no'}"
        )
    finally:
        if mcp is not None:
            _stop(mcp)


def _mcp_log() -> Path:
    from brain import config

    path = config.log_dir() / "mcp.log"
    return path if path.is_file() else Path(os.devnull)


if __name__ == "__main__":
    main()
