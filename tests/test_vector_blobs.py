"""Vectors stored with one signed byte a value and a step (vector_blobs.py, m015): each
value within half a step of the original, exactly a float16 (what the FAISS file's codes are),
read back alike one by one or many at once; an index from before m015 converted on opening."""

from __future__ import annotations

import numpy as np
import pytest
from conftest import FakeEmbedder, write
from index_helpers import close_old_index_with_a_past_chunk, index_db_before, open_store

from brain.index import vector_blobs
from brain.index.indexer import index_vault
from brain.index.schema import INDEX_MIGRATIONS
from brain.index.store import IndexStore
from brain.index.vector_blobs import decode, decode_array, decode_many, encode, from_float16


def _step(blob: bytes) -> float:
    exponent, eighths = np.frombuffer(blob[:2], dtype=np.int8)
    assert 0 <= eighths <= 7
    return float((8 + int(eighths)) * 2.0 ** int(exponent))


@pytest.mark.parametrize("dim", [1, 8, 384, 1024])
@pytest.mark.parametrize("scale", [1e-30, 1e-3, 1.0, 1e3, 1e30])
def test_each_value_is_within_half_a_step_and_a_float16_when_it_can_be(dim, scale):
    rng = np.random.default_rng(dim)
    vectors = (rng.standard_normal((20, dim)) * scale).astype(np.float32)
    blobs = encode([v.tobytes() for v in vectors])
    assert [len(b) for b in blobs] == [dim + 2] * 20
    for vector, blob in zip(vectors, blobs):
        step = _step(blob)
        largest = float(np.abs(vector).max())
        assert largest / 127 <= step < largest / 127 * 9 / 8  # the smallest step that fits
        codes = np.frombuffer(blob, dtype=np.int8, offset=2)
        assert np.abs(codes).max() <= 127
        back = np.frombuffer(decode(blob), dtype=np.float32)
        assert np.all(np.abs(back.astype(np.float64) - vector) <= step / 2 * (1 + 1e-6))
        if 1e-4 <= largest <= 1e3:  # unit-sized vectors, as models give: their values are float16s
            assert np.array_equal(back.astype(np.float16).astype(np.float32), back)


def test_unit_vectors_keep_their_cosines_to_a_thousandth():
    rng = np.random.default_rng(0)
    vectors = rng.standard_normal((200, 384)).astype(np.float32)
    vectors /= np.linalg.norm(vectors, axis=1, keepdims=True)
    back = np.stack([np.frombuffer(b, dtype=np.float32) for b in decode_many(encode([v.tobytes() for v in vectors]))])
    query = vectors[0] + 0.5 * vectors[1]
    assert np.abs(back @ query - vectors @ query).max() < 1.5e-3


def test_zero_and_non_finite_values_are_stored_as_zero():
    vector = np.array([0.5, np.nan, np.inf, -np.inf, -0.25], dtype=np.float32)
    back = np.frombuffer(decode(encode([vector.tobytes()])[0]), dtype=np.float32)
    assert back[1:4].tolist() == [0.0, 0.0, 0.0]
    assert np.allclose(back[[0, 4]], [0.5, -0.25], atol=0.5 / 127)
    zero = encode([np.zeros(4, dtype=np.float32).tobytes()])[0]
    assert np.frombuffer(decode(zero), dtype=np.float32).tolist() == [0.0] * 4


def test_many_at_once_read_as_one_by_one_even_of_mixed_widths():
    rng = np.random.default_rng(1)
    vectors = [rng.standard_normal(dim).astype(np.float32).tobytes() for dim in (8, 8, 8, 5, 8)]
    blobs = encode(vectors)
    assert blobs == [encode([v])[0] for v in vectors]
    assert decode_many(blobs) == [decode(b) for b in blobs]
    assert decode_many(blobs[:3]) == [decode(b) for b in blobs[:3]]
    assert encode([]) == [] and decode_many([]) == []


def test_a_matrix_of_vectors_reads_as_each_vector_and_refuses_mixed_widths():
    rng = np.random.default_rng(3)
    blobs = encode([rng.standard_normal(6).astype(np.float32).tobytes() for _ in range(4)])
    matrix = decode_array(blobs)
    assert matrix.dtype == np.float32 and matrix.shape == (4, 6)
    assert [row.tobytes() for row in matrix] == decode_many(blobs)
    with pytest.raises(ValueError, match="dimensions"):
        decode_array([*blobs, encode([np.ones(5, np.float32).tobytes()])[0]])


def test_the_store_reads_every_vector_as_codes_as_it_reads_them_one_by_one(tmp_path):
    for i in range(7):
        write(tmp_path / "v", f"n{i}.md", f"# Note {i}\n\nline {i} of seven.\n\n## More\n\nand more {i}\n")
    index_vault(tmp_path / "v", embedder=FakeEmbedder(), progress=False)
    store = open_store(tmp_path / "v")
    try:
        ids, rows = store.chunk_vector_codes(batch=3)  # read in batches of three, joined
        assert rows.dtype == np.int8 and [int(i) for i in ids] == sorted(store.chunk_ids()) and len(ids) >= 7
        codes = vector_blobs.Codes(rows)
        expected = [vector for _, vector in store.chunk_vectors([int(i) for i in ids])]
        assert [row.tobytes() for row in codes[:]] == expected
        assert [row.tobytes() for row in codes[2:5]] == expected[2:5]
        assert [row.tobytes() for row in codes[np.array([6, 0, 3])]] == [expected[6], expected[0], expected[3]]
    finally:
        store.close()


def test_decoding_rows_as_stored_and_the_empty_cases():
    vectors = np.random.default_rng(4).standard_normal((5, 16)).astype(np.float32)
    blobs = vector_blobs.encode([v.tobytes() for v in vectors])
    rows = vector_blobs.as_rows(blobs)
    assert rows.dtype == np.int8 and rows.shape == (5, 18)
    decoded = vector_blobs.decode_rows(rows)
    exact = rows[:, 2:].astype(np.float64) * (8 + rows[:, 1:2]) * np.exp2(rows[:, :1].astype(np.float64))
    assert decoded.dtype == np.float32 and np.array_equal(decoded.astype(np.float64), exact)  # q × (8 + m) × 2**x
    assert np.abs(decoded - vectors).max() <= np.abs(vectors).max() / 127  # within a step
    assert vector_blobs.decode_rows(vector_blobs.as_rows([])).shape == (0, 0)
    with pytest.raises(ValueError):
        vector_blobs.as_rows([blobs[0], blobs[0][:-1]])


def test_m015_converts_float16_vectors_and_has_the_vector_files_rebuilt(tmp_path):
    directory = tmp_path / "old-index"
    conn = index_db_before(directory, "m015_vectors_one_byte_a_value")
    vectors = np.random.default_rng(2).standard_normal((3, 8)).astype(np.float16)
    conn.execute("BEGIN")
    conn.execute(
        "INSERT INTO notes (id, path, title, size, mtime_ns, hash, indexed_at) VALUES (1, 'Kiln.md', 'Kiln', 1, 1, 'k', 0)"
    )
    for ordinal, vector in enumerate(vectors[:2]):
        conn.execute(
            "INSERT INTO chunks (note_id, ordinal, text, vector) VALUES (1, ?, 'bisque firing', ?)",
            (ordinal, vector.tobytes()),
        )
    close_old_index_with_a_past_chunk(conn, 1, vectors[2].tobytes())
    store = IndexStore.open(directory)
    try:
        assert "m015_vectors_one_byte_a_value" in INDEX_MIGRATIONS.applied(store.conn)
        assert store.vectors_version() == 8
        raw = [r[0] for r in store.conn.execute("SELECT vector FROM chunks ORDER BY id")]
        past = [r[0] for r in store.conn.execute("SELECT vector FROM chunk_history")]
        assert [len(v) for v in raw + past] == [10, 10, 10]
        got = [np.frombuffer(v, dtype=np.float32) for _, v in store.chunk_vectors([1, 2])]
        got += [np.frombuffer(v, dtype=np.float32) for _, _, v in store.history_chunk_vectors([1])]
        for vector, back in zip(vectors.astype(np.float32), got):
            assert np.abs(back - vector).max() <= np.abs(vector).max() / 127
    finally:
        store.close()
    assert from_float16(None) is None and from_float16(b"odd") == b"odd"
