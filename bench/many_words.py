"""`brain ask` given its query as many separate words (`brain ask $(cat notes.txt)`): what the
command line costs before any recall, at 1k to 100k words.

Each size runs in a process of its own: `brain ask --vault <missing> WORD...` parsed by click and
the query joined and cut as `brain ask` does, up to the error for the missing vault (no index, no
model). Prints the wall and CPU seconds of that call. Run it against another tree with PYTHONPATH:

    PYTHONPATH=. python bench/many_words.py [--sizes 1000,10000,50000,100000] [--runs 3]
"""

from __future__ import annotations

import argparse
import json
import os
import subprocess
import sys
import tempfile

ONE = r"""
import json, sys, time
import click
from brain.cli import cli
words = [f"w{i % 997}" for i in range(int(sys.argv[1]))]
args = ["ask", "--vault", sys.argv[2], *words, "-k", "5"]
wall, cpu = time.perf_counter(), time.process_time()
try:
    cli.main(args, standalone_mode=False)
except click.ClickException as exc:
    said = exc.format_message()
cpu, wall = time.process_time() - cpu, time.perf_counter() - wall
print(json.dumps({"wall": wall, "cpu": cpu, "said": said[:80]}))
"""


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--sizes", default="1000,10000,50000,100000")
    parser.add_argument("--runs", type=int, default=3, help="runs a size; the fastest is printed")
    args = parser.parse_args()
    sizes = [int(size) for size in args.sizes.split(",")]
    with tempfile.TemporaryDirectory() as home:
        env = dict(os.environ, BRAIN_HOME=home)
        missing = os.path.join(home, "no-such-vault")
        import brain

        print(f"brain from {os.path.dirname(os.path.dirname(brain.__file__))}; load {os.getloadavg()[0]:.1f}")
        print(f"{'words':>8} {'wall s':>8} {'cpu s':>8}")
        for size in sizes:
            runs = [
                json.loads(
                    subprocess.run(
                        [sys.executable, "-c", ONE, str(size), missing],
                        env=env,
                        capture_output=True,
                        text=True,
                        check=True,
                    ).stdout
                )
                for _ in range(args.runs)
            ]
            best = min(runs, key=lambda run: run["cpu"])
            print(f"{size:>8} {min(r['wall'] for r in runs):8.3f} {best['cpu']:8.3f}   ({best['said']})")


if __name__ == "__main__":
    main()
