"""What brain/recall/line_diff.py costs against difflib on long texts (figures, not asserted).

`brain history` compares each version of a note with the one before through
``changed_ranges`` (recall/line_diff.py), which finds difflib's runs in linear time, through a
suffix automaton of the new lines when no common run fills a range from its start. Here it is
measured beside ``difflib.SequenceMatcher(None, old, new, autojunk=False).get_opcodes()`` (what
`brain history` used before) on texts of notes' lines, each text edited in its middle (a line
rewritten, three inserted, two deleted):

    unique-100k    100,000 distinct lines
    repeats-100k   100,000 lines of a log: a dated line, then 3 lines from 30 that repeat
                   (a blank line, bullets, a separator), over and over
    unique-10k     10,000 distinct lines
    repeats-10k    the log's 10,000 lines

Each figure is a fresh process (the inputs built first, then measured): the time (on the shared
2-core machine: slower when it is busy), what tracemalloc sees allocated at the peak (a second
run, tracing: Python's allocations, all of them here), and the peak of the process's resident
memory above what it held with the inputs built (VmHWM, reset through /proc/self/clear_refs; an
untraced run). Both give the same opcodes (checked).

    python bench/line_diff_cost.py
    python bench/line_diff_cost.py --cases unique-100k --no-difflib
    python bench/line_diff_cost.py --difflib-timeout 60
"""

from __future__ import annotations

import argparse
import difflib
import json
import random
import subprocess
import sys
import time
import tracemalloc
from pathlib import Path

HERE = Path(__file__).resolve().parent
ROOT = HERE.parent
CASES = ["unique-100k", "repeats-100k", "unique-10k", "repeats-10k"]
REPEATED = (
    [""] * 8
    + ["---", "- [ ] follow up", "- done", "  - see above", "## Notes"]
    + [f"- status: {word}" for word in "ok failed pending retried skipped queued late early fine bad".split()]
)
REPEATED += [f"- tag: #{word}" for word in "work home idea todo later read call mail meet plan ship fix".split()]


def texts(case: str) -> tuple[list[str], list[str]]:
    """The old lines and the new (the old edited in its middle)."""
    kind, size = case.split("-")
    count = int(size.rstrip("k")) * 1000
    rng = random.Random(11)
    words = [f"w{n:04d}" for n in range(5000)]

    def prose(n: int) -> str:  # a line of a note: ~60 characters, distinct by its number
        return f"{n} " + " ".join(rng.choice(words) for _ in range(10))

    if kind == "unique":
        old = [prose(n) for n in range(count)]
    else:  # a log: a dated line, then three of the repeated ones
        old = []
        for n in range(count // 4):
            old.append(f"### 2026-{1 + n // 2800 % 12:02d}-{1 + n // 100 % 28:02d} entry {n}")
            old += [rng.choice(REPEATED) for _ in range(3)]
    new = list(old)
    middle = count // 2
    new[middle] = "a line rewritten"
    new[middle + 10 : middle + 10] = ["inserted one", "inserted two", "inserted three"]
    del new[middle + 40 : middle + 42]
    return old, new


def run_line_diff(old: list[str], new: list[str]) -> list[tuple[int, int, int, int]]:
    sys.path.insert(0, str(ROOT))
    from brain.recall.line_diff import changed_ranges

    return changed_ranges(old, new)


def run_difflib(old: list[str], new: list[str]) -> list[tuple[int, int, int, int]]:
    opcodes = difflib.SequenceMatcher(None, old, new, autojunk=False).get_opcodes()
    return [(i1, i2, j1, j2) for tag, i1, i2, j1, j2 in opcodes if tag != "equal"]


def _status(key: str) -> float:
    for line in Path("/proc/self/status").read_text().splitlines():
        if line.startswith(key + ":"):
            return int(line.split()[1]) / 1024
    raise KeyError(key)


def one(case: str, method: str, trace: bool) -> dict:
    """In this process: the case's texts built, then the method run once, measured."""
    old, new = texts(case)
    run = run_line_diff if method == "line_diff" else run_difflib
    if method == "line_diff":
        run([], [])  # its import out of the figures
    if trace:
        tracemalloc.start()
        started = time.perf_counter()
        ranges = run(old, new)
        seconds = time.perf_counter() - started
        _, peak = tracemalloc.get_traced_memory()
        tracemalloc.stop()
        return {"traced_peak_mb": round(peak / 2**20, 1), "traced_s": round(seconds, 2)}
    try:  # the peak resident memory from here on (Linux: 5 resets VmHWM to VmRSS)
        Path("/proc/self/clear_refs").write_text("5")
    except OSError:
        pass
    held = _status("VmRSS")
    started = time.perf_counter()
    ranges = run(old, new)
    seconds = time.perf_counter() - started
    return {
        "s": round(seconds, 2),
        "rss_peak_above_mb": round(_status("VmHWM") - held, 1),
        "inputs_rss_mb": round(held, 1),
        "ranges": ranges,
    }


def measure(case: str, method: str, trace: bool, timeout: float | None) -> dict | None:
    command = [sys.executable, __file__, "--one", case, method] + (["--trace"] if trace else [])
    try:
        proc = subprocess.run(command, capture_output=True, text=True, timeout=timeout, check=True)
    except subprocess.TimeoutExpired:
        return None
    return json.loads(proc.stdout)


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--cases", default=",".join(CASES), help=f"of {', '.join(CASES)}")
    parser.add_argument("--no-difflib", action="store_true", help="line_diff alone")
    parser.add_argument(
        "--difflib-timeout", type=float, default=600, help="seconds a difflib run may take before it is left out"
    )
    parser.add_argument("--one", nargs=2, metavar=("CASE", "METHOD"), help=argparse.SUPPRESS)
    parser.add_argument("--trace", action="store_true", help=argparse.SUPPRESS)
    args = parser.parse_args()
    if args.one:
        print(json.dumps(one(*args.one, trace=args.trace)))
        return
    methods = ["line_diff"] + ([] if args.no_difflib else ["difflib"])
    print(f"{'case':<14}{'method':<11}{'seconds':>9}{'traced peak':>13}{'RSS peak above inputs':>24}")
    for case in args.cases.split(","):
        ranges = {}
        for method in methods:
            timeout = args.difflib_timeout if method == "difflib" else None
            plain = measure(case, method, False, timeout)
            if plain is None:
                print(f"{case:<14}{method:<11}  over {args.difflib_timeout:.0f} s: left out", flush=True)
                continue
            traced = measure(case, method, True, timeout)  # (tracing slows it: it may run out of time)
            peak = (
                f"{traced['traced_peak_mb']:>10.1f} MB"
                if traced
                else f"{'(over ' + str(int(timeout or 0)) + ' s)':>13}"
            )
            ranges[method] = plain["ranges"]
            print(
                f"{case:<14}{method:<11}{plain['s']:>8.2f}s{peak}"
                f"{plain['rss_peak_above_mb']:>18.1f} MB  (inputs: {plain['inputs_rss_mb']:.0f} MB resident)",
                flush=True,
            )
        if len(ranges) == 2 and ranges["line_diff"] != ranges["difflib"]:
            raise SystemExit(f"{case}: line_diff's ranges are not difflib's")


if __name__ == "__main__":
    main()
