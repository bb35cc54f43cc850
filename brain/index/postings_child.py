"""The child process that writes a lexical postings file, for ``postings._Child``.

Run (by ``child_process``) with the index folder as its argument; writes the file, unstamped,
and prints its nonce, the log position it was read at and how many chunks it read early as
JSON (``null``: the vault is past what the file can hold). The run that started it stamps it.

With ``--early`` it first reads the chunks as the run commits them: a line ``more`` on its
input after each commit, ``go`` once every chunk is written; its input ending before ``go``
(the run stopped, or was killed) ends it without writing anything.
"""

from __future__ import annotations

import json
import os
import sys
from pathlib import Path

from . import postings
from .store import IndexStore

EARLY_NICENESS = 10  # 20,000 notes, eight pairs alternating: the build 23.3 -> 21.5 s (medians)


def main(argv: list[str]) -> int:
    store = IndexStore.open(Path(argv[1]), create=False)
    try:
        reader = None
        if "--early" in argv[2:]:
            if hasattr(os, "nice"):  # the CPU the run leaves spare, after its parse workers'
                os.nice(EARLY_NICENESS)
            reader = postings.Reader()
            for line in sys.stdin.buffer:
                if line.strip() == b"go":
                    break
                reader.read_committed(store)
            else:
                return 0
        written = postings.write_base(store, reader)
    finally:
        store.close()
    sys.stdout.write(json.dumps(None if written is None else written._asdict()))
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv))
