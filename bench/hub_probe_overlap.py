"""A cold load of a hub name against a local hub: what the hub probe adds to it (printed, never asserted).

    python bench/hub_probe_overlap.py                      # this checkout, 5 runs a hub
    python bench/hub_probe_overlap.py --runs 3 OLD_CHECKOUT # this checkout and another, interleaved

Each run is a fresh interpreter loading a hub name not in its (empty) Hugging Face cache, without
HF_HUB_OFFLINE, against a hub on a local port: one that takes the connection and answers nothing
(the probe's 3 s run out) and one that answers 404 at once. brain probes the hub before loading;
the probe's wait and sentence-transformers' import (seconds of CPU) were one after the other, and
overlap now. The load's wall seconds (timed in the child) the seconds of it spent waiting on the probe, and the process's CPU seconds per checkout and hub, medians, and each checkout's wall ratio to
the first: wall is what a user waits, and on a busy machine read the ratios of one run.
"""

from __future__ import annotations

import argparse
import os
import resource
import socket
import socketserver
import statistics
import subprocess
import sys
import tempfile
import threading
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
LOAD = (  # the load alone, timed in the child: the interpreter's start is the same either way
    "import time\n"
    "from brain.embed import load_embedder\n"
    "from brain.errors import ModelLoadError\n"
    "started = time.perf_counter()\n"
    "try:\n    load_embedder('no-such-org/no-such-model-4a7c')\n"
    "except ModelLoadError:\n    pass\n"
    "print(time.perf_counter() - started)\n"
)


class _Answering(socketserver.ThreadingTCPServer):
    daemon_threads = True


class _NotFound(socketserver.StreamRequestHandler):
    def handle(self) -> None:
        self.rfile.readline()
        self.wfile.write(b"HTTP/1.1 404 Not Found\r\nContent-Length: 0\r\nConnection: close\r\n\r\n")


def _silent_hub() -> tuple[socket.socket, list[socket.socket]]:
    server = socket.socket()
    server.bind(("127.0.0.1", 0))
    server.listen(16)
    held: list[socket.socket] = []

    def serve() -> None:
        while True:
            try:
                held.append(server.accept()[0])  # taken, never answered
            except OSError:
                return

    threading.Thread(target=serve, daemon=True).start()
    return server, held


def _one(checkout: Path, endpoint: str) -> tuple[float, float]:
    env = {k: v for k, v in os.environ.items() if not k.startswith(("BRAIN_", "HF_", "TRANSFORMERS_"))}
    env.update(PYTHONPATH=str(checkout), HF_ENDPOINT=endpoint, HF_HOME=tempfile.mkdtemp(prefix="hub-probe-hf-"))
    before = resource.getrusage(resource.RUSAGE_CHILDREN)
    done = subprocess.run([sys.executable, "-c", LOAD], env=env, capture_output=True, check=True, timeout=300)
    wall = float(done.stdout.split()[-1])
    after = resource.getrusage(resource.RUSAGE_CHILDREN)
    return wall, (after.ru_utime - before.ru_utime) + (after.ru_stime - before.ru_stime)


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("checkouts", nargs="*", type=Path, help="other checkouts to compare (PYTHONPATH roots)")
    parser.add_argument("--runs", type=int, default=5)
    args = parser.parse_args()
    checkouts = [ROOT, *[c.resolve() for c in args.checkouts]]
    silent, held = _silent_hub()
    answering = _Answering(("127.0.0.1", 0), _NotFound)
    threading.Thread(target=answering.serve_forever, daemon=True).start()
    hubs = {
        "silent": f"http://127.0.0.1:{silent.getsockname()[1]}",
        "answering": f"http://127.0.0.1:{answering.server_address[1]}",
    }
    times: dict[tuple[str, Path], list[tuple[float, float]]] = {}
    try:
        for _ in range(args.runs):
            for hub, endpoint in hubs.items():
                for checkout in checkouts:  # interleaved: the machine's load falls on each alike
                    times.setdefault((hub, checkout), []).append(_one(checkout, endpoint))
    finally:
        answering.shutdown()
        answering.server_close()
        silent.close()
        for conn in held:
            conn.close()
    print(f"load average {os.getloadavg()[0]:.2f}; {args.runs} runs each; medians")
    for hub in hubs:
        first = statistics.median(w for w, _ in times[(hub, checkouts[0])])
        for checkout in checkouts:
            walls, cpus = zip(*times[(hub, checkout)], strict=True)
            wall = statistics.median(walls)
            print(
                f"{hub:9} {checkout!s:45} load {wall:6.2f} s  "
                f"cpu {statistics.median(cpus):5.2f} s  load/this checkout's {wall / first:4.2f}"
            )


if __name__ == "__main__":
    main()
