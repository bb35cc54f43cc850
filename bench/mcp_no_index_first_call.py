"""`brain mcp`'s first call on a vault with no index, no `brain serve` running (a figure, not a test).

Starts `brain mcp --vault V` as Claude Code does, with a fresh BRAIN_HOME (so no index), calls
`search` once the session is up, and prints how long the first answer took and what it said; then
asks again every --every s until an answer has results, and prints when that was. The first call
waited for the model and the whole build in silence (up to 300 s, then "brain serve is still
starting"); now it says at once that the index is being built. Run it against another tree with
PYTHONPATH (the model as brain reads it: BRAIN_EMBED_MODEL):

    PYTHONPATH=. python bench/mcp_no_index_first_call.py --vault V
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

INITIALIZE = {"protocolVersion": "2025-06-18", "capabilities": {}, "clientInfo": {"name": "bench", "version": "0"}}


def _send(process: subprocess.Popen, message: dict) -> None:
    assert process.stdin is not None
    process.stdin.write(json.dumps(message).encode() + b"\n")
    process.stdin.flush()


def _answer(process: subprocess.Popen, timeout: float) -> dict:
    assert process.stdout is not None
    ready, _, _ = select.select([process.stdout], [], [], timeout)
    if not ready:
        raise SystemExit(f"no answer within {timeout:g} s")
    return json.loads(process.stdout.readline())


def _search(process: subprocess.Popen, n: int, query: str, timeout: float) -> dict:
    call = {"name": "search", "arguments": {"query": query, "k": 3}}
    _send(process, {"jsonrpc": "2.0", "id": n, "method": "tools/call", "params": call})
    return _answer(process, timeout)["result"]


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--vault", type=Path, required=True)
    parser.add_argument("--query", default="how does combat work")
    parser.add_argument("--every", type=float, default=2.0, help="seconds between calls until the index answers")
    parser.add_argument("--limit", type=float, default=900.0, help="give up after this many seconds")
    args = parser.parse_args()
    with tempfile.TemporaryDirectory(prefix="brain-bench-") as home:
        env = {**os.environ, "BRAIN_HOME": home}
        process = subprocess.Popen(
            [sys.executable, "-m", "brain", "mcp", "--vault", str(args.vault)],
            env=env,
            stdin=subprocess.PIPE,
            stdout=subprocess.PIPE,
            stderr=subprocess.DEVNULL,
        )
        try:
            _send(process, {"jsonrpc": "2.0", "id": 0, "method": "initialize", "params": INITIALIZE})
            _answer(process, 120)
            _send(process, {"jsonrpc": "2.0", "method": "notifications/initialized"})
            began = time.monotonic()
            first = _search(process, 1, args.query, args.limit)
            took = time.monotonic() - began
            said = first["content"][0]["text"]
            print(f"first call: {took:.1f} s, error={first['isError']}: {said[:200]}")
            n, last = 2, said
            while first["isError"] and time.monotonic() - began < args.limit:
                time.sleep(args.every)
                first = _search(process, n, args.query, args.limit)
                last = first["content"][0]["text"] if first["isError"] else last
                n += 1
            print(f"the last answer before results: {last[:200]}")
            results = [] if first["isError"] else json.loads(first["content"][0]["text"])["results"]
            print(f"results: {len(results)} after {time.monotonic() - began:.1f} s and {n - 1} calls")
        finally:
            process.kill()
            process.wait(10)


if __name__ == "__main__":
    main()
