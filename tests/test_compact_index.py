"""The index stores each chunk once (schema.py m009_compact_chunks): vectors compact (float16
then, one byte a value since m015: test_vector_blobs.py), read back as float32; chunks_fts an external-content index over the chunks, kept exact by triggers
through edits, renamed titles, deletes and a tokenizer change; an older index migrated."""

from __future__ import annotations

import sqlite3
from pathlib import Path

import numpy as np
from conftest import write
from index_helpers import close_old_index_with_a_past_chunk, index_db_before, open_store

from brain import config
from brain.index.indexer import index_vault
from brain.index.schema import FILL_FTS, FTS_TOKENIZERS, INDEX_MIGRATIONS
from brain.index.store import IndexStore
from brain.index.vector_blobs import decode
from brain.recall.lexical import lexical_search


def _vocabulary(conn) -> list[tuple]:
    conn.execute("CREATE VIRTUAL TABLE IF NOT EXISTS temp.check_vocab USING fts5vocab(main, 'chunks_fts', 'instance')")
    return conn.execute("SELECT term, doc, col, offset FROM temp.check_vocab ORDER BY 1, 2, 3, 4").fetchall()


def _fts_exact(store) -> bool:
    """The index holds exactly what FTS5 builds from its content anew (a wrong 'delete' from a
    trigger leaves stale terms behind, which only a comparison like this one shows)."""
    store.conn.execute("BEGIN")
    try:
        kept = _vocabulary(store.conn)
        store.conn.execute("INSERT INTO chunks_fts (chunks_fts) VALUES ('rebuild')")
        fresh = _vocabulary(store.conn)
    finally:
        store.conn.execute("ROLLBACK")
    return bool(kept) and kept == fresh


def _paths(store, query: str) -> list[str]:
    return [c.path for c in lexical_search(store, query, depth=5)]


def test_vectors_are_stored_compact_and_read_as_float32(tmp_path):
    root = tmp_path / "v"
    write(root, "Sourdough.md", "# Sourdough\n\nFeed the starter, bulk ferment five hours.\n")
    write(root, "Kiln.md", "# Kiln\n\nBisque firing to cone 04, then glaze.\n")
    index_vault(root, progress=False)
    store = open_store(root)
    try:
        rows = store.conn.execute("SELECT id, heading, text, vector FROM chunks ORDER BY id").fetchall()
        assert rows and all(len(r[3]) == 64 + 2 for r in rows)  # fake:64, a byte a number and two for the step
        stored = dict(store.chunk_vectors([r[0] for r in rows]))
        for chunk_id, _, _, raw in rows:
            vector = np.frombuffer(stored[chunk_id], dtype=np.float32)
            assert vector.shape == (64,)
            assert np.array_equal(vector, np.frombuffer(decode(raw), dtype=np.float32))
            assert abs(float(np.linalg.norm(vector)) - 1.0) < 1e-2  # each value within half a step
        assert len(stored) == len(rows)
        assert (
            store.conn.execute("SELECT count(*) FROM sqlite_master WHERE name = 'chunks_fts_content'").fetchone()[0]
            == 0
        )
    finally:
        store.close()


def test_the_external_content_index_stays_exact_through_edits_renames_and_deletes(tmp_path, monkeypatch):
    root = tmp_path / "v"
    write(root, "Пётр Ёлкин.md", "# Пётр Ёлкин\n\nЁлкин ещё не вернулся из Листвянки.\n\n## Лёд\n\nЛёд тронулся.\n")
    write(root, "Sourdough.md", "# Sourdough\n\nFeed the starter, bulk ferment five hours.\n")
    write(root, "Kiln.md", "---\ntitle: Kiln log\n---\nBisque firing to cone 04, then glaze.\n")
    index_vault(root, progress=False)
    store = open_store(root)
    assert _fts_exact(store)
    assert _paths(store, "елкин")[:1] == ["Пётр Ёлкин.md"]
    store.close()
    # Edited text, a title changed in place (frontmatter), a renamed note, a deleted note.
    write(root, "Sourdough.md", "# Sourdough\n\nFeed the starter twice; bulk ferment four hours.\n")
    write(root, "Kiln.md", "---\ntitle: Ёмкий обжиг\n---\nBisque firing to cone 04, then glaze.\n")
    (root / "Пётр Ёлкин.md").rename(root / "Ёлкин.md")
    index_vault(root, progress=False)
    store = open_store(root)
    assert _fts_exact(store)
    assert _paths(store, "емкий") == ["Kiln.md"]
    assert _paths(store, "kiln") == []  # the old title left the index with its chunks' old values
    assert _paths(store, "twice") == ["Sourdough.md"]
    assert _paths(store, "лед")[:1] == ["Ёлкин.md"]
    store.close()
    (root / "Kiln.md").unlink()
    index_vault(root, progress=False)
    store = open_store(root)
    assert _fts_exact(store)
    assert _paths(store, "bisque") == []
    store.close()
    # A tokenizer change recreates the index over the same content.
    monkeypatch.setenv("BRAIN_FTS_TOKENIZER", "trigram")
    index_vault(root, rebuild=True, progress=False)
    store = open_store(root)
    assert store.fts_tokenizer() == "trigram"
    assert _fts_exact(store)
    assert _paths(store, "ферм") == [] and _paths(store, "ferment")[:1] == ["Sourdough.md"]
    store.close()


def _index_traced(root: Path, monkeypatch) -> list[str]:
    """Index 30 small notes into ``root``'s index; every SQL statement the store ran, in order."""
    from brain.index import store_open

    for i in range(30):
        write(root, f"Note {i}.md", f"# Note {i}\n\nWord{i} alpha.\n\n## Part\n\nBeta{i} gamma.\n")
    statements: list[str] = []
    connect = store_open.connect

    def traced(*args, **kwargs):
        conn = connect(*args, **kwargs)
        conn.set_trace_callback(statements.append)
        return conn

    monkeypatch.setattr(store_open, "connect", traced)
    index_vault(root, progress=False)
    return statements


def test_a_batch_of_notes_enters_the_lexical_index_in_one_statement(tmp_path, monkeypatch):
    """FTS5 writes a segment at the end of every statement (SQLite runs each in a savepoint):
    one INSERT a note made the first build spend 40% of its time there. A batch of notes, new
    and edited, goes in with one statement, and the index stays exact."""

    root = tmp_path / "v"
    statements = _index_traced(root, monkeypatch)
    into_fts = [s for s in statements if s.startswith("INSERT INTO chunks_fts (rowid") and "BETWEEN" in s]
    assert len(into_fts) == 1
    store = open_store(root)
    assert _fts_exact(store)
    assert all(_paths(store, f"word{i}") == [f"Note {i}.md"] for i in range(30))
    store.close()
    # Edited notes (a title changed too) and new ones in one batch: one statement again.
    statements.clear()
    write(root, "Note 3.md", "---\ntitle: Third\n---\nDelta3 epsilon.\n")
    write(root, "Note 4.md", "# Note 4\n\nDelta4 epsilon.\n")
    write(root, "Note 30.md", "# Note 30\n\nWord30 alpha.\n")
    index_vault(root, progress=False)
    assert len([s for s in statements if s.startswith("INSERT INTO chunks_fts (rowid") and "BETWEEN" in s]) == 1
    store = open_store(root)
    assert _fts_exact(store)
    assert _paths(store, "word3") == [] and _paths(store, "delta3") == ["Note 3.md"]
    assert _paths(store, "third") == ["Note 3.md"] and _paths(store, "word30") == ["Note 30.md"]
    store.close()


def test_a_new_index_has_8k_pages_and_an_older_one_keeps_its_own(tmp_path):
    """Chunk rows and note versions of 2-3 KB left most of each 4 KB page empty: a new index
    is made with 8 KB pages. An index made with 4 KB pages keeps working as it is (SQLite
    cannot change a WAL database's page size in place); `--rebuild` makes a new one."""
    from brain.index.store_open import INDEX_PAGE_SIZE

    root = tmp_path / "v"
    write(root, "Sourdough.md", "# Sourdough\n\nFeed the starter, bulk ferment five hours.\n")
    index_vault(root, progress=False)
    store = open_store(root)
    assert INDEX_PAGE_SIZE == 8192 and store.conn.execute("PRAGMA page_size").fetchone()[0] == 8192
    store.close()
    # An older index, made with SQLite's default 4 KB pages, then indexed into.
    old = tmp_path / "old"
    write(old, "Kiln.md", "# Kiln\n\nBisque firing to cone 04, then glaze.\n")
    older = config.index_dir(old)
    older.mkdir(parents=True)
    conn = sqlite3.connect(older / "index.db")
    conn.execute("PRAGMA page_size = 4096")
    conn.execute("PRAGMA journal_mode = WAL")
    conn.close()
    index_vault(old, progress=False)
    store = open_store(old)
    assert store.conn.execute("PRAGMA page_size").fetchone()[0] == 4096
    assert _paths(store, "bisque") == ["Kiln.md"] and store.conn.execute("PRAGMA quick_check").fetchone()[0] == "ok"
    store.close()
    index_vault(old, rebuild=True, progress=False)
    store = open_store(old)
    assert store.conn.execute("PRAGMA page_size").fetchone()[0] == 8192
    assert _paths(store, "bisque") == ["Kiln.md"]
    store.close()


def test_m009_compacts_an_older_index(tmp_path):
    """An index made before m009 (float32 vectors, chunks_fts holding its own copy, a trigram
    tokenizer chosen) opens migrated: vectors compact, the same hits, the tokenizer kept."""
    directory = tmp_path / "old-index"
    conn = index_db_before(directory, "m009_compact_chunks")
    conn.execute("BEGIN")
    conn.execute(
        "INSERT INTO notes (id, path, title, size, mtime_ns, hash, indexed_at) VALUES (1, 'Ёлкин.md', 'Ёлкин', 1, 1, 'h', 0)"
    )
    conn.execute(
        "INSERT INTO notes (id, path, title, size, mtime_ns, hash, indexed_at) VALUES (2, 'Kiln.md', 'Kiln', 1, 1, 'k', 0)"
    )
    vectors = np.random.default_rng(0).standard_normal((3, 8)).astype(np.float32)
    for note_id, text, vector in zip(
        (1, 1, 2), ("Ёлкин ещё в Листвянке", "лёд тронулся", "bisque firing to cone 04"), vectors
    ):
        conn.execute(
            "INSERT INTO chunks (note_id, ordinal, text, vector) VALUES (?, 0, ?, ?)", (note_id, text, vector.tobytes())
        )
    close_old_index_with_a_past_chunk(conn, 2, vectors[2].tobytes())
    store = IndexStore.open(directory)
    try:
        assert "m009_compact_chunks" in INDEX_MIGRATIONS.applied(store.conn)
        assert store.vectors_version() == 9  # the vector files are rebuilt (m009, then m015)
        got = dict(store.chunk_vectors([1, 2, 3]))
        for chunk_id, vector in zip((1, 2, 3), vectors):
            assert np.allclose(np.frombuffer(got[chunk_id], dtype=np.float32), vector, atol=np.abs(vector).max() / 127)
        raw = [r[0] for r in store.conn.execute("SELECT vector FROM chunk_history")]
        assert [len(v) for v in raw] == [8 + 2]
        assert [v for _, _, v in store.history_chunk_vectors([1])] == [decode(raw[0])]
        assert _paths(store, "Елкин еще") == ["Ёлкин.md"]
        assert _paths(store, "bisque") == ["Kiln.md"]
        assert _fts_exact(store)
        with store.transaction():
            store.delete_notes([2])
        assert _paths(store, "bisque") == []
        assert _fts_exact(store)
    finally:
        store.close()


def test_m009_keeps_the_trigram_tokenizer_an_older_index_chose(tmp_path):
    directory = tmp_path / "old-index"
    conn = index_db_before(directory, "m009_compact_chunks")
    conn.execute("BEGIN")
    conn.execute(
        "INSERT INTO notes (id, path, title, size, mtime_ns, hash, indexed_at) VALUES (1, '长城.md', '长城', 1, 1, 'h', 0)"
    )
    conn.execute(
        "INSERT INTO chunks (note_id, ordinal, text, vector) VALUES (1, 0, '长城是中国古代的军事防御工程', ?)",
        (np.ones(8, np.float32).tobytes(),),
    )
    # What IndexStore.recreate_fts did before m009 when BRAIN_FTS_TOKENIZER=trigram was chosen.
    conn.execute("DROP TABLE chunks_fts")
    conn.execute(
        f"CREATE VIRTUAL TABLE chunks_fts USING fts5 (title, heading, text, tokenize = '{FTS_TOKENIZERS['trigram']}')"
    )
    conn.execute(FILL_FTS)
    conn.execute("INSERT INTO meta (key, value) VALUES ('fts_tokenizer', 'trigram')")
    conn.execute("COMMIT")
    conn.close()
    store = IndexStore.open(directory)
    try:
        assert store.fts_tokenizer() == "trigram"
        sql = store.conn.execute("SELECT sql FROM sqlite_master WHERE name = 'chunks_fts'").fetchone()[0]
        assert "trigram" in sql and "chunks_fts_source" in sql
        assert _paths(store, "军事防御") == ["长城.md"]
        assert _fts_exact(store)
    finally:
        store.close()


def test_a_large_batch_fills_the_lexical_index_with_a_larger_buffer_and_puts_it_back(tmp_path, monkeypatch):
    """A batch of many chunks goes into chunks_fts with FTS5's ``hashsize`` and ``automerge``
    raised for the statement (fewer segments, merged less often): the index is exactly what
    FTS5 builds anew, and the settings are FTS5's defaults again once the batch is in, for
    every later write."""
    from brain.index import lexical_store as store_module

    monkeypatch.setattr(store_module, "_FTS_BULK_CHUNKS", 4)
    root = tmp_path / "v"
    statements = _index_traced(root, monkeypatch)
    settings = [s for s in statements if "INSERT INTO chunks_fts (chunks_fts, rank)" in s]
    assert settings[:2] == [
        f"INSERT INTO chunks_fts (chunks_fts, rank) VALUES ('hashsize', {store_module._FTS_BULK_HASH})",
        f"INSERT INTO chunks_fts (chunks_fts, rank) VALUES ('automerge', {store_module._FTS_BULK_AUTOMERGE})",
    ]
    assert settings[-2:] == [
        f"INSERT INTO chunks_fts (chunks_fts, rank) VALUES ('hashsize', {store_module._FTS_HASH})",
        f"INSERT INTO chunks_fts (chunks_fts, rank) VALUES ('automerge', {store_module._FTS_AUTOMERGE})",
    ]
    store = open_store(root)
    assert _fts_exact(store)
    assert all(_paths(store, f"beta{i}") == [f"Note {i}.md"] for i in range(30))
    for name, default in (("hashsize", store_module._FTS_HASH), ("automerge", store_module._FTS_AUTOMERGE)):
        kept = store.conn.execute("SELECT v FROM chunks_fts_config WHERE k = ?", (name,)).fetchall()
        assert [tuple(r) for r in kept] in ([], [(default,)])
    store.close()
