"""The child process that writes a lexical postings file, for ``postings._Child``.

Run (by ``child_process``) with the index folder as its argument; writes the file, unstamped,
and prints its nonce and the log position it was read at as JSON (``null``: the vault is past
what the file can hold). The run that started it stamps it.
"""

from __future__ import annotations

import json
import sys
from pathlib import Path

from . import postings
from .store import IndexStore


def main(argv: list[str]) -> int:
    store = IndexStore.open(Path(argv[1]), create=False)
    try:
        written = postings.write_base(store)
    finally:
        store.close()
    sys.stdout.write(json.dumps(None if written is None else {"nonce": written[0], "log_at": written[1]}))
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv))
