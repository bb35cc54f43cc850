"""``brain.ledger.catch_up DB [LOCK_FD]``, run as ``child_process`` runs modules: the process a
hook starts when it kept a row aside (``deferred.start_catch_up``) applies the upgrade of the brain
database with no budget and records the rows kept aside for it. Its own module: ``deferred`` is
imported by the hooks, and this needs the hooks' log. Standard library only.
"""

from __future__ import annotations

import contextlib
import os
import sys
from pathlib import Path

from ..db import kept_aside_dir
from .deferred import FAILED, catch_up, pruned_line, rejected_line, start_catch_up, waiting
from .hook import log

ROUNDS = 10  # catch-ups in a row for the rows hooks keep aside while one runs (they keep coming)


def main(argv: list[str]) -> int:
    """``brain.ledger.catch_up DB [LOCK_FD]``: ``deferred.catch_up``, said in the hooks'
    log. ``LOCK_FD``: the kept-aside folder's lock, taken by the hook that started this process."""
    db_path = Path(argv[0])
    lock = int(argv[1]) if len(argv) > 1 else None
    failed = kept_aside_dir(db_path) / FAILED
    written = pruned = 0
    moved: list[Path] = []
    cut = None
    try:
        try:
            for _ in range(ROUNDS):
                more, refused, dropped, cut = catch_up(db_path, locked=lock is not None)
                written += more
                moved += refused
                pruned += dropped
                if not more and not refused and not dropped:
                    break
        finally:
            if lock is not None:
                os.close(lock)  # the lock goes with it
        failed.unlink(missing_ok=True)
    except Exception as exc:  # noqa: BLE001 - a process of its own: its only voice is the log
        with contextlib.suppress(OSError):
            failed.touch()  # the hooks do not start another for a while (RETRY_SECONDS)
        log(
            f"could not upgrade {db_path} and record the rows kept aside ({type(exc).__name__}: {exc}); "
            "`brain turns` tries again"
        )
        return 1
    if moved:  # once: they are out of the way of the next catch-up
        log(rejected_line(len(moved), moved[0].parent))
    if pruned:
        log(pruned_line(pruned, cut))
    if written:
        log(f"upgraded {db_path} and recorded {written} row{'s' if written != 1 else ''} the hooks had kept aside")
    # A hook that kept a row aside after the last round, while the lock was still held, started
    # none: its row would wait for the next hook. Seen here, after the lock went, it does not.
    if waiting(db_path):
        start_catch_up(db_path)
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
