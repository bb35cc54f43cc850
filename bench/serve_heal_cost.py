"""What `brain serve`'s check for removed files costs (``Daemon.heal``, every 2 s).

A ``Daemon`` is started for an empty vault in a temporary ``BRAIN_HOME`` (its service a stand-in
that loads nothing: the check never touches it), then the script prints, each the median of
``--repeat`` rounds:

- ``nothing moved``: one check when the lock, socket and record are where the server left them
  (what every idle server pays every 2 s), in µs, and the share of one CPU that is at one check
  every ``HEAL_EVERY`` seconds;
- ``socket removed``, ``record removed``, ``folder removed``: one check that makes them again
  (listening again waits for the old listener's loop to end: up to its 0.2 s poll).

    python bench/serve_heal_cost.py [--calls 20000] [--repeat 5]
"""

from __future__ import annotations

import argparse
import logging
import os
import shutil
import statistics
import sys
import tempfile
import time
from pathlib import Path
from typing import Any

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))

from brain.server import runtime
from brain.server.daemon import HEAL_EVERY, Daemon


class Idle:
    """The service's part in starting and stopping, and nothing else."""

    model = "none"
    started_at = time.time()

    def start(self) -> None:
        pass

    def stop(self) -> None:
        pass

    def handle(self, message: dict[str, Any]) -> dict[str, Any]:  # pragma: no cover - not asked here
        raise NotImplementedError


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--calls", type=int, default=20000)
    parser.add_argument("--repeat", type=int, default=5)
    args = parser.parse_args()
    logging.getLogger("brain").addHandler(logging.NullHandler())  # its warnings are what is measured
    logging.getLogger("brain").propagate = False
    with tempfile.TemporaryDirectory() as tmp:
        os.environ["BRAIN_HOME"] = str(Path(tmp) / "home")
        vault = Path(tmp) / "vault"
        vault.mkdir()
        daemon = Daemon(vault.resolve(), Idle())  # type: ignore[arg-type]
        daemon.start()
        try:
            rounds = []
            for _ in range(args.repeat):
                start = time.perf_counter()
                for _ in range(args.calls):
                    daemon.heal()
                rounds.append((time.perf_counter() - start) / args.calls)
            each = statistics.median(rounds)
            print(
                f"nothing moved: {each * 1e6:.1f} µs a check; at one every {HEAL_EVERY:g} s, "
                f"{each / HEAL_EVERY * 100:.5f}% of one CPU"
            )
            folder = runtime.runtime_dir(vault.resolve())
            removals = {
                "socket removed": lambda: daemon.socket_path.unlink(),
                "record removed": lambda: runtime.record_path(vault.resolve()).unlink(),
                "folder removed": lambda: shutil.rmtree(folder),
            }
            for name, remove in removals.items():
                times = []
                for _ in range(args.repeat):
                    remove()
                    start = time.perf_counter()
                    daemon.heal()
                    times.append(time.perf_counter() - start)
                    assert runtime.read_record(vault.resolve()) and runtime.lock_is_held(vault.resolve())
                print(f"{name}: {statistics.median(times) * 1000:.1f} ms to make it again")
        finally:
            daemon.stop()


if __name__ == "__main__":
    main()
