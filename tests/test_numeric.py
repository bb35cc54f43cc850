"""brain/numeric.py: sorted_distinct is np.unique, value for value and dtype for dtype."""

from __future__ import annotations

import numpy as np
import pytest

from brain.numeric import sorted_distinct


@pytest.mark.parametrize("size", [0, 1, 2, 7, 1000, 50_000])
@pytest.mark.parametrize("dtype", [np.int32, np.int64])
def test_sorted_distinct_is_unique(size, dtype):
    rng = np.random.default_rng(size)
    values = rng.integers(0, max(1, size // 3), size=size).astype(dtype)
    got = sorted_distinct(values)
    want = np.unique(values)
    assert got.dtype == want.dtype
    assert np.array_equal(got, want)
