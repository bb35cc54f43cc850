"""This checkout's start-up under several Pythons, side by side: figures with ratios, not tests.

Each interpreter (a venv holding brain's dependencies) runs this tree's `python -m brain` in
turn, interleaved so all see the same load, from the tree's folder with PYTHONPATH on it. Per
figure: the median CPU time (user + system of the process: steadier than wall on a shared
machine) and its ratio to the first interpreter's. Then the modules each imports that the first
does not, and the import time -X importtime gives them.

    `python -c pass`, `brain --help`, `brain hook stop` (the fast path: a payload naming no
    transcript), `brain hook prompt` (no server up); `brain --help` with and without subprocess;
    `import subprocess` alone

On 3.10 click imports uuid, which imports platform, which imports subprocess at its top (3.11's
imports it where it is used): `brain --help` and every click command import subprocess, select,
selectors, signal and fcntl there. The hooks bypass click (brain/__main__.py).

    python bench/python_versions_start.py /tmp/py311/bin/python /tmp/py310/bin/python [--runs 10]
"""

from __future__ import annotations

import argparse
import json
import os
import re
import resource
import statistics
import subprocess
import sys
import tempfile
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
STOP = json.dumps({"session_id": "bench-start", "cwd": "/tmp", "hook_event_name": "Stop"}).encode()
PROMPT = json.dumps(
    {"session_id": "bench-start", "cwd": "/tmp", "hook_event_name": "UserPromptSubmit", "prompt": "escalation die"}
).encode()
FIGURES = (
    ("python -c pass", ["-c", "pass"], b""),
    ("brain --help", ["-m", "brain", "--help"], b""),
    ("brain hook stop (fast path)", ["-m", "brain", "hook", "stop"], STOP),
    ("brain hook prompt (no server)", ["-m", "brain", "hook", "prompt"], PROMPT),
)

HELP = "import sys; sys.argv = ['brain', '--help']\nfrom brain.__main__ import main\ntry:\n    main()\nexcept SystemExit:\n    pass\n"
# 3.10's platform imports subprocess at its top and uses it only in functions --help never calls.
STAND_IN = "import sys, types; sys.modules['subprocess'] = types.ModuleType('subprocess')\n"

ALONE = (
    "import time, threading, contextlib, warnings, errno, io, os, re, enum, collections, functools, itertools\n"
    "started = time.process_time()\nimport subprocess\n"
    "import sys; sys.stderr.write(str((time.process_time() - started) * 1000))\n"
)


def env(home: Path) -> dict[str, str]:
    base = {k: v for k, v in os.environ.items() if not k.startswith("BRAIN_") and k != "PYTHONDONTWRITEBYTECODE"}
    return {**base, "PYTHONPATH": str(ROOT), "BRAIN_HOME": str(home), "BRAIN_VAULT": str(home / "no-vault")}


def cpu_ms(python: str, argv: list[str], stdin: bytes, home: Path) -> tuple[float, str]:
    """CPU milliseconds of ``python argv``, and what it wrote to stderr."""
    before = resource.getrusage(resource.RUSAGE_CHILDREN)
    proc = subprocess.run([python, *argv], input=stdin, env=env(home), cwd=ROOT, capture_output=True, timeout=120)
    after = resource.getrusage(resource.RUSAGE_CHILDREN)
    if proc.returncode != 0:
        raise SystemExit(f"{python} {' '.join(argv)}: exit {proc.returncode}\n{proc.stderr.decode()[-2000:]}")
    return (after.ru_utime - before.ru_utime + after.ru_stime - before.ru_stime) * 1000, proc.stderr.decode()


def version(python: str) -> str:
    return subprocess.run(
        [python, "-c", "import platform; print(platform.python_version())"], capture_output=True, text=True
    ).stdout.strip()


def imported(python: str, argv: list[str], stdin: bytes, home: Path) -> dict[str, int]:
    """Module -> its cumulative import time in microseconds (-X importtime), for ``python argv``."""
    err = cpu_ms(python, ["-X", "importtime", *argv], stdin, home)[1]
    found = {}
    for line in err.splitlines():
        match = re.match(r"import time:\s+(\d+) \|\s+(\d+) \|\s*(\S+)", line)
        if match:
            found[match[3]] = int(match[2])
    return found


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("pythons", nargs="+", help="interpreters; the first is the one the others are divided by")
    parser.add_argument("--runs", type=int, default=10)
    args = parser.parse_args()
    names = [f"{version(p)} ({p})" for p in args.pythons]
    with tempfile.TemporaryDirectory(prefix="brain-pyversions-") as tmp:
        home = Path(tmp) / "home"
        home.mkdir()
        print(f"CPU ms, median of {args.runs} interleaved runs; ratio to {names[0]}")
        for label, argv, stdin in FIGURES:
            times: list[list[float]] = [[] for _ in args.pythons]
            for _ in range(args.runs):
                for i, python in enumerate(args.pythons):
                    times[i].append(cpu_ms(python, argv, stdin, home)[0])
            first = statistics.median(times[0])
            cells = [f"{statistics.median(t):6.1f} x{statistics.median(t) / first:4.2f}" for t in times]
            print(f"  {label:32} " + "   ".join(cells))
        print("\n`brain --help` as is and with a stand-in subprocess module (3.10 imports it for click; CPU ms)")
        for name, python in zip(names, args.pythons):
            pairs: tuple[list[float], list[float]] = ([], [])
            for _ in range(args.runs):
                for i, code in enumerate((HELP, STAND_IN + HELP)):
                    pairs[i].append(cpu_ms(python, ["-c", code], b"", home)[0])
            kept, out = (statistics.median(t) for t in pairs)
            print(f"  {name}: {kept:6.1f} as is, {out:6.1f} without subprocess: {kept - out:+5.1f} ({kept / out:4.2f})")
        print("\n`import subprocess` alone, timed inside the process after what click had imported (CPU ms)")
        for name, python in zip(names, args.pythons):
            spent = [float(cpu_ms(python, ["-c", ALONE], b"", home)[1]) for _ in range(args.runs)]
            print(f"  {name}: {statistics.median(spent):5.2f}")
        print("\nmodules imported beyond the first interpreter's (import time, cumulative µs, median of runs)")
        for label, argv, stdin in FIGURES[1:]:
            runs = [[imported(p, argv, stdin, home) for _ in range(args.runs)] for p in args.pythons]
            for name, found in zip(names[1:], runs[1:]):
                extra = sorted(set(found[0]) - set(runs[0][0]))
                costs = {m: statistics.median(r.get(m, 0) for r in found) for m in extra}
                shown = ", ".join(f"{m} {costs[m]:.0f}" for m in sorted(extra, key=lambda m: -costs[m])) or "none"
                print(f"  {label:32} {name}: {shown}")
    print("\n" + "\n".join(f"  {n}" for n in names))
    sys.stdout.flush()


if __name__ == "__main__":
    main()
