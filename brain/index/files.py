"""The names of the files in a vault's index folder (``config.index_dir``): what every module that
opens, copies, swaps or checks one of them names it by, without importing the store."""

from __future__ import annotations

INDEX_FILE = "index.db"
RECALL_CACHE_FILE = "recall-cache.npz"  # recall/cache.py: names and link graph kept between runs
RETIRED_SUFFIX = ".retired"  # where a rebuild puts the old index while it swaps by two renames (rebuild.py)
