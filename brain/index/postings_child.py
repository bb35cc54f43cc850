"""The child process that builds a lexical postings file, for ``postings_due._Child``.

Run (by ``child_process``) with the index folder as its argument: takes the builders' lock
(``background``), writes the file and installs it (``postings.install``: put in
place and stamped, unless the postings changed otherwise meanwhile), then prints as JSON the
nonce, whether it was installed and how many chunks it read early (``null``: the vault is past
what the file can hold, and the postings are cleared).

In the background (the default: ``background.main``) it runs at a lower priority, does
nothing if another process holds the lock, and writes why it failed, if it does, for the next
index pass to report (its parent may be gone). With ``--early`` it waits for the lock,
then first reads the chunks as the run commits them: a line ``more`` on its input after each
commit, ``go`` once every chunk is written; its input ending before ``go`` (the run stopped,
or was killed) ends it without writing anything.
"""

from __future__ import annotations

import json
import os
import sys
from pathlib import Path

from . import background, postings, postings_due
from .store import IndexStore

EARLY_NICENESS = 10  # 20,000 notes, eight pairs alternating: the build 23.3 -> 21.5 s (medians)


def main(argv: list[str]) -> int:
    directory = Path(argv[1])
    if "--early" not in argv[2:]:
        return background.main(postings_due.BUILD, lambda d: _build(d, early=False), argv)
    with background.held(directory, postings_due.BUILD.name, wait=True):
        return _build(directory, early=True)


def _build(directory: Path, *, early: bool) -> int:
    if early and hasattr(os, "nice"):  # the CPU the run and its parse workers leave spare
        os.nice(EARLY_NICENESS)
    store = IndexStore.open(directory, create=False)
    try:
        reader = None
        if early:
            reader = postings.Reader()
            for line in sys.stdin.buffer:
                if line.strip() == b"go":
                    break
                reader.read_committed(store)
            else:
                return 0
        written = postings.write_base(store, reader)
        if written is None:
            postings_due.clear(store)
            installed = False
        else:
            installed = postings.install(store, written)
    finally:
        store.close()
    answer = None if written is None else {"nonce": written.nonce, "kept": written.kept, "installed": installed}
    sys.stdout.write(json.dumps(answer))
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv))
