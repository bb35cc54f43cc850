"""How the index stores a chunk's vector (schema.py m015): one signed byte per dimension.

A blob is two bytes for the vector's step, then one signed byte ``q`` per dimension, each
value being ``q × step``. The step is ``(8 + m) × 2**x`` (the first byte ``x``, signed; the
second ``m``, 0–7): the smallest such number that fits the vector's largest value in ±127,
so each value is off by at most half a step, about 1/250 of the largest value (for a unit
vector of 384 dimensions, whose largest value is ~0.2, cosine scores move by ~5e-4). Every
value is then an integer below 2,048 times a power of two, which a float16 holds exactly:
the FAISS file's float16 codes (vectors.py) hold exactly what the database does, and a file
rebuilt from the database searches as the one kept beside it. (A step that is a bare power of two
wastes up to half the precision: on the labelled sets dense-only recall then lost a hit.)

386 bytes a vector of 384, against 768 as float16 (m009) and 1,536 as float32: at 100,000
notes the vectors were 0.77 of the index's 3.4 KB per chunk.
"""

from __future__ import annotations

import math
from collections.abc import Sequence

import numpy as np

_LIMIT = 127  # the largest code: -127 … 127, symmetric
_HEAD = 2  # the step's two bytes


def encode(vectors: Sequence[bytes]) -> list[bytes]:
    """float32 vectors' bytes as the index stores them, all in one pass (a note's chunks).
    Values that are not finite (a broken model's NaN or infinity) are stored as 0."""
    if not vectors:
        return []
    if any(len(vector) != len(vectors[0]) for vector in vectors):
        return [encode([vector])[0] for vector in vectors]
    values = np.frombuffer(b"".join(vectors), dtype=np.float32).reshape(len(vectors), -1)
    largest = np.abs(values).max(axis=1)
    if not np.isfinite(largest).all():
        values = np.nan_to_num(values, nan=0.0, posinf=0.0, neginf=0.0)
        largest = np.abs(values).max(axis=1)
    # Few numpy calls, the steps in plain Python: the indexer encodes a note's chunks at a
    # time, and per call numpy's overhead is most of the cost (100,000 notes, 100,000 calls).
    steps = [_step(value) for value in largest.tolist()]
    out = np.empty((len(vectors), values.shape[1] + _HEAD), dtype=np.int8)
    out[:, 0] = [exponent for exponent, _, _ in steps]
    out[:, 1] = [eighths for _, eighths, _ in steps]
    out[:, _HEAD:] = np.rint(values / np.array([[step] for _, _, step in steps]))
    return [row.tobytes() for row in out]


def _step(largest: float) -> tuple[int, int, float]:
    """(x, m, (8 + m) × 2**x): the smallest such step at or above ``largest`` / 127. With
    largest / 127 = g × 2**e (1 ≤ g < 2): m = ceil(8 (g - 1)) and x = e - 3, carried into
    e + 1 at m = 8. A vector of zeros, or one too small for the byte's exponents, is all 0
    (its step infinite: every value divided by it is 0)."""
    if not largest > 0:
        return 0, 0, math.inf
    fraction, exponent = math.frexp(largest / _LIMIT)  # fraction in [0.5, 1)
    eighths = math.ceil(16 * fraction - 8)
    exponent -= 4
    if eighths == 8:
        eighths, exponent = 0, exponent + 1
    if exponent < -128:
        return 0, 0, math.inf
    return exponent, eighths, math.ldexp(8 + eighths, exponent)


def decode(blob: bytes) -> bytes:
    """A stored vector as float32 bytes, what every reader of vectors expects."""
    return decode_many([blob])[0]


def decode_many(blobs: Sequence[bytes]) -> list[bytes]:
    """Each stored vector as float32 bytes, in one pass over those of one width (a query's
    lanes read a thousand vectors: one numpy call each was most of the cost)."""
    if not blobs:
        return []
    if any(len(blob) != len(blobs[0]) for blob in blobs):
        return [decode_array([blob])[0].tobytes() for blob in blobs]
    return [row.tobytes() for row in decode_array(blobs)]


def decode_array(blobs: Sequence[bytes]) -> np.ndarray:
    """Stored vectors of one width as the rows of a float32 matrix."""
    if not blobs:
        return np.zeros((0, 0), dtype=np.float32)
    return decode_rows(as_rows(blobs))


def as_rows(blobs: Sequence[bytes]) -> np.ndarray:
    """Stored vectors of one width as the rows of an int8 matrix, still as stored: a quarter
    of the float32 bytes (rebuilding the vector files holds every vector this way)."""
    width = len(blobs[0]) if blobs else _HEAD
    if any(len(blob) != width for blob in blobs):
        raise ValueError(f"stored vectors of {sorted({len(b) - _HEAD for b in blobs})} dimensions in one batch")
    return np.frombuffer(b"".join(blobs), dtype=np.int8).reshape(len(blobs), width)


def decode_rows(rows: np.ndarray) -> np.ndarray:
    """Rows of ``as_rows`` as float32 vectors.

    Each value is q × (8 + m) × 2**x: the step (8 + m) × 2**x is exact in float32, and so is
    q times it, an integer below 2,048 times a power of two. One multiplication a value into
    the result (an ldexp over the whole matrix, after a float32 copy of it, took twice as long)."""
    steps = np.ldexp((8 + rows[:, 1]).astype(np.float32), rows[:, 0].astype(np.int32))
    out = np.empty((len(rows), rows.shape[1] - _HEAD), dtype=np.float32)
    return np.multiply(rows[:, _HEAD:], steps[:, None], out=out)


class Codes:
    """Stored vectors held as ``as_rows`` rows, read as float32 by index (``codes[a:b]``,
    ``codes[array]``): a rebuild of the vector files samples and adds them batch by batch
    without a float32 copy of them all (500,000 vectors: 193 MB instead of 768)."""

    def __init__(self, rows: np.ndarray):
        self.rows = rows

    def __len__(self) -> int:
        return len(self.rows)

    def __getitem__(self, which: slice | np.ndarray) -> np.ndarray:
        return decode_rows(self.rows[which])


def from_float16(blob: bytes | None) -> bytes | None:
    """A vector stored as float16 (m009) as this module stores it (m015); a blob that is not
    float16 (an odd length) is left as it is."""
    if blob is None or len(blob) % 2:
        return blob
    return encode([np.frombuffer(blob, dtype=np.float16).astype(np.float32).tobytes()])[0]
