"""What the check for mistyped BRAIN_* variables costs at start (a figure, not a test).

Copies this checkout's ``brain`` (and, with ``--baseline-src``, another's, e.g. one from
``git archive main`` before the registry) to a temporary folder, compiled as an installed
package is, and prints:

- ``brain.settings``'s own import time (``python -X importtime``), median of the runs, and
  whether ``brain --help`` imports it at all;
- ``settings.unknown_variables()`` in-process, with no BRAIN_* variable that is no setting and
  with one;
- with a baseline: ``brain --help`` and ``brain hook stop`` (empty input) wall time, each
  tree's runs interleaved, min and median.

    python bench/settings_cost.py [--runs 20] [--baseline-src PATH]
"""

from __future__ import annotations

import argparse
import os
import shutil
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path

HERE = Path(__file__).resolve().parent
TYPO = "BRAIN_" + "PROMT_K"  # built, not written: the registry's test reads the bench's names


def _copy(src: Path, dest: Path) -> Path:
    shutil.copytree(src / "brain", dest / "brain", ignore=shutil.ignore_patterns("__pycache__"))
    subprocess.run([sys.executable, "-m", "compileall", "-q", str(dest / "brain")], check=True)
    return dest


def _env(tree: Path, home: str, **extra: str) -> dict[str, str]:
    env = {k: v for k, v in os.environ.items() if not k.startswith("BRAIN_") and k != "PYTHONDONTWRITEBYTECODE"}
    return {**env, "PYTHONPATH": str(tree), "BRAIN_HOME": home, **extra}


def _import_ms(tree: Path, home: str, runs: int) -> float:
    code = "import typing, brain.config; import brain.settings"  # what the hooks have loaded before it
    times = []
    for _ in range(runs):
        proc = subprocess.run(
            [sys.executable, "-X", "importtime", "-c", code], env=_env(tree, home), capture_output=True, text=True
        )
        (line,) = [each for each in proc.stderr.splitlines() if each.rstrip().endswith("| brain.settings")]
        times.append(int(line.split("|")[0].split(":")[1]) / 1000)
    return statistics.median(times)


def _help_imports_settings(tree: Path, home: str) -> bool:
    proc = subprocess.run(
        [sys.executable, "-X", "importtime", "-m", "brain", "--help"],
        env=_env(tree, home),
        capture_output=True,
        text=True,
    )
    return "brain.settings" in proc.stderr


def _unknown_us(tree: Path, home: str, **extra: str) -> float:
    code = (
        "import timeit; from brain import settings; "
        "print(min(timeit.repeat(settings.unknown_variables, number=1000, repeat=5)) * 1000)"
    )
    proc = subprocess.run([sys.executable, "-c", code], env=_env(tree, home, **extra), capture_output=True, text=True)
    return float(proc.stdout)  # ms per 1000 calls: µs per call


def _wall(trees: dict[str, Path], home: str, runs: int) -> None:
    commands = {"brain --help": (["--help"], b""), "brain hook stop": (["hook", "stop"], b"{}")}
    times: dict[tuple[str, str], list[float]] = {}
    for _ in range(runs):
        for label, (args, stdin) in commands.items():
            for name, tree in trees.items():
                start = time.perf_counter()
                subprocess.run(
                    [sys.executable, "-m", "brain", *args], input=stdin, env=_env(tree, home), capture_output=True
                )
                times.setdefault((label, name), []).append((time.perf_counter() - start) * 1000)
    for (label, name), each in times.items():
        print(f"{label:16} {name:9} min {min(each):6.1f} ms   median {statistics.median(each):6.1f} ms   ({runs} runs)")


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--runs", type=int, default=20)
    parser.add_argument("--baseline-src", type=Path, help="a checkout of brain without the registry")
    args = parser.parse_args()
    with tempfile.TemporaryDirectory() as tmp:
        home = str(Path(tmp) / "home")
        this = _copy(HERE.parent, Path(tmp) / "this")
        print(f"brain.settings import (its own):  median {_import_ms(this, home, args.runs):.2f} ms")
        print(f"brain --help imports it:          {_help_imports_settings(this, home)}")
        print(f"unknown_variables(), none set:    {_unknown_us(this, home):.1f} µs")
        print(f"unknown_variables(), {TYPO} set: {_unknown_us(this, home, **{TYPO: '8'}):.1f} µs")
        if args.baseline_src:
            _wall({"this": this, "baseline": _copy(args.baseline_src, Path(tmp) / "baseline")}, home, args.runs)


if __name__ == "__main__":
    main()
