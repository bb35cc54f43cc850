"""`brain mcp`'s first call beside a `brain serve` that refuses every request `busy` (a figure, not a test).

Stands a stand-in server on --vault's socket (its record written and its lock held, as a live
server's are) that answers every request `busy`, starts a ``Backend`` as `brain mcp` does (its
warm-up asking whether a server answers, within BRAIN_SERVE_TIMEOUT), makes its first call
--first-call-at s on, and prints that call's latency and this process's peak resident memory.
The warm-up took one refusal for a server there and loaded nothing, so the first call was refused
the whole timeout (15 s) before the model began to load. Index --vault first (`brain index`);
no `brain serve` may run for it. Run it against another tree with PYTHONPATH:

    PYTHONPATH=. python bench/mcp_busy_warm_up.py --vault V [--first-call-at 20]
"""

from __future__ import annotations

import argparse
import contextlib
import fcntl
import os
import resource
import socket
import threading
import time
from pathlib import Path

from brain.mcp.backend import Backend
from brain.server import protocol, runtime


def _refuse(listening: socket.socket, done: threading.Event) -> None:
    listening.settimeout(0.1)
    busy = protocol.encode(protocol.error("busy", "64 requests are being answered at once"))
    while not done.is_set():
        try:
            conn = listening.accept()[0]
        except OSError:  # TimeoutError: look at done again
            continue
        with conn, contextlib.suppress(OSError):
            conn.settimeout(5)
            conn.recv(1 << 16)
            conn.sendall(busy)


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--vault", type=Path, required=True)
    parser.add_argument("--first-call-at", type=float, default=20.0, help="seconds after start")
    args = parser.parse_args()
    root = args.vault.resolve()
    runtime.make_private(runtime.runtime_dir(root))
    path = runtime.socket_path(root)
    with contextlib.suppress(FileNotFoundError):
        path.unlink()
    listening = socket.socket(socket.AF_UNIX, socket.SOCK_STREAM)
    listening.bind(str(path))
    listening.listen(64)
    runtime.write_record(root, {"pid": os.getpid(), "socket": str(path), "vault": str(root), "shape": protocol.shape()})
    done = threading.Event()
    with open(runtime.lock_path(root), "a") as lock:
        fcntl.flock(lock, fcntl.LOCK_EX | fcntl.LOCK_NB)
        threading.Thread(target=_refuse, args=(listening, done), daemon=True).start()
        backend = Backend(root, use_server=True, watch=False)
        try:
            started = time.monotonic()
            backend.warm_up()
            time.sleep(args.first_call_at)
            asked = time.monotonic()
            backend.call("ask", query="agent memory", modes=["hybrid+ppr"])
            took = time.monotonic() - asked
        finally:
            done.set()
            backend.close()
            listening.close()
            path.unlink()
            runtime.record_path(root).unlink(missing_ok=True)
    peak = resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 1024
    print(f"first call {asked - started:.1f} s after start: {took:.2f} s; peak resident {peak:.0f} MB")


if __name__ == "__main__":
    main()
