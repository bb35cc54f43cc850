"""The background process that finishes FTS5's merges (``fts_merge``), as ``background``
starts it: the index folder as its argument."""

from __future__ import annotations

import sys
from pathlib import Path

from . import background, fts_merge
from .store import IndexStore


def _merge(directory: Path) -> None:
    store = IndexStore.open(directory, create=False)
    try:
        fts_merge.merge_all(store)
    finally:
        store.close()


if __name__ == "__main__":
    sys.exit(background.main(fts_merge.MERGE, _merge, sys.argv))
