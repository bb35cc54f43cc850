"""Past chunks stored once per note (m018): a note that only grows keeps each chunk once, not
once per version, and every past version still reads back whole. Fake embedder throughout."""

from __future__ import annotations

import sqlite3
from pathlib import Path

from conftest import write
from index_helpers import as_before_m021, history_problems, index_then_moment, open_store

from brain import config
from brain.index.indexer import index_vault
from brain.index.schema import INDEX_MIGRATIONS
from brain.recall.past import PAST, PastIndex


def _section(i: int) -> str:
    """A section long enough to be a chunk of its own (chunking.MIN_CHARS merges shorter ones)."""
    line = f"Day {i} of the kiln log: glaze batch {i} fired at cone {i % 10}, crawled on side {i}. "
    return f"## Entry {i}\n\n{line * 4}\n\n"


def _current_chunks(root: Path) -> set[tuple[str, str]]:
    store = open_store(root)
    try:
        note_id = store.note_id("Log.md")
        rows = store.conn.execute("SELECT heading, text FROM chunks WHERE note_id = ?", (note_id,))
        return {(r[0], r[1]) for r in rows}
    finally:
        store.close()


def _chunks_as_of(root: Path, moment: float) -> set[tuple[str, str]]:
    store = open_store(root)
    past = PastIndex(store, as_of=moment)
    try:
        (note_id,) = store.conn.execute("SELECT note_id FROM note_versions WHERE path = 'Log.md'").fetchone()
        if note_id in past.current_note_ids():
            rows = store.conn.execute("SELECT heading, text FROM chunks WHERE note_id = ?", (note_id,))
            return {(r[0], r[1]) for r in rows}
        ids = [PAST + c for c in past.past_chunk_ids()]
        return {(row.heading, row.text) for row in past.chunk_rows(ids).values() if row.note_id == note_id}
    finally:
        past.close()


def _grow(root: Path, versions: int) -> list[tuple[float, set[tuple[str, str]]]]:
    """Log.md appended to ``versions`` times, indexed after each: (moment after, its chunks)."""
    write(root, "Other.md", "# Other\n\nNothing to do with kilns.\n")
    text = "# Log\n\n"
    steps = []
    for i in range(versions):
        text += _section(i)
        write(root, "Log.md", text)
        steps.append((index_then_moment(root), _current_chunks(root)))
    return steps


def test_a_note_that_only_grows_keeps_each_past_chunk_once(tmp_path):
    root = tmp_path / "vault"
    steps = _grow(root, 12)
    past_contents = [chunks for _, chunks in steps[:-1]]
    distinct = set().union(*past_contents)
    db = config.index_dir(root) / "index.db"
    conn = sqlite3.connect(db)
    try:
        stored = conn.execute("SELECT count(*) FROM chunk_history").fetchone()[0]
        contents = conn.execute("SELECT count(*) FROM version_chunks").fetchone()[0]
    finally:
        conn.close()
    # One copy a version would be the sum (66 here, growing with the square of the versions).
    assert sum(len(chunks) for chunks in past_contents) > 2 * len(distinct)
    assert stored == len(distinct)
    assert contents == len(past_contents)
    for moment, chunks in steps:
        assert _chunks_as_of(root, moment) == chunks
    assert history_problems(db) == []


def test_a_shared_chunk_stays_while_any_version_holds_it(tmp_path, monkeypatch):
    """Pruning, a revert to an older content and a delete each drop only what no version left
    holds; the versions left read back whole."""
    root = tmp_path / "vault"
    steps = _grow(root, 6)
    db = config.index_dir(root) / "index.db"
    # A revert: the third content is current again, so its chunks are the present's.
    text = "# Log\n\n" + "".join(_section(i) for i in range(3))
    write(root, "Log.md", text)
    reverted = index_then_moment(root)
    assert _chunks_as_of(root, reverted) == steps[2][1]
    assert history_problems(db) == []
    for moment, chunks in steps:
        assert _chunks_as_of(root, moment) == chunks
    # Keep the last two past versions only: the older ones go, the chunks they shared stay.
    monkeypatch.setenv("BRAIN_KEEP_VERSIONS", "2")
    write(root, "Log.md", text + _section(99))
    index_then_moment(root)
    assert history_problems(db) == []
    for moment, chunks in steps[-1:]:
        assert _chunks_as_of(root, moment) == chunks
    assert _chunks_as_of(root, reverted) == steps[2][1]


def _unshare(db: Path) -> int:
    """Put an index back as brain left it before m018: one chunk_history row per place of each
    past content (ids after the shared ones), and m018 not applied. Returns the rows made."""
    as_before_m021(db)  # m021 changed chunk_history after m018 made it
    conn = sqlite3.connect(db, isolation_level=None)
    try:
        contents = conn.execute("SELECT note_id, hash, chunk_ids FROM version_chunks").fetchall()
        rows = {
            r[0]: r[1:] for r in conn.execute("SELECT id, note_id, title, heading, text, vector FROM chunk_history")
        }
        from brain.index.schema import unpack_ids

        places = [
            (note_id, digest, ordinal, *rows[chunk_id][1:])
            for note_id, digest, blob in contents
            for ordinal, chunk_id in enumerate(unpack_ids(blob))
        ]
        conn.executescript(
            """
            BEGIN;
            DROP TRIGGER chunk_history_fts_insert;
            DROP TRIGGER chunk_history_fts_delete;
            DROP TABLE chunk_history;
            DROP TABLE version_chunks;
            CREATE TABLE chunk_history (
                id INTEGER PRIMARY KEY AUTOINCREMENT,
                note_id INTEGER NOT NULL,
                hash TEXT NOT NULL,
                ordinal INTEGER NOT NULL,
                title TEXT NOT NULL,
                heading TEXT NOT NULL DEFAULT '',
                text TEXT NOT NULL,
                vector BLOB NOT NULL
            );
            CREATE INDEX chunk_history_content ON chunk_history (note_id, hash, ordinal);
            CREATE TRIGGER chunk_history_fts_insert AFTER INSERT ON chunk_history BEGIN
                INSERT INTO chunk_history_fts (rowid, title, heading, text)
                VALUES (new.id, new.title, new.heading, new.text);
            END;
            CREATE TRIGGER chunk_history_fts_delete AFTER DELETE ON chunk_history BEGIN
                INSERT INTO chunk_history_fts (chunk_history_fts, rowid, title, heading, text)
                VALUES ('delete', old.id, old.title, old.heading, old.text);
            END;
            DELETE FROM _migrations WHERE name = 'm018_past_chunks_shared';
            """
        )
        conn.execute("INSERT INTO chunk_history_fts (chunk_history_fts) VALUES ('delete-all')")
        conn.executemany(
            "INSERT INTO chunk_history (note_id, hash, ordinal, title, heading, text, vector) VALUES (?, ?, ?, ?, ?, ?, ?)",
            places,
        )
        conn.execute("UPDATE sqlite_sequence SET seq = seq + 1000 WHERE name = 'chunk_history'")
        conn.execute("COMMIT")
        return len(places)
    finally:
        conn.close()


def test_an_index_from_before_sharing_keeps_one_copy_and_its_past(tmp_path):
    """m018 on an index whose past versions each kept their own copies: one copy of each stays,
    every version reads back as before, BM25 over the past finds them, and ids are not reused."""
    root = tmp_path / "vault"
    steps = _grow(root, 8)
    db = config.index_dir(root) / "index.db"
    places = _unshare(db)
    conn = sqlite3.connect(db)
    (last_id,) = conn.execute("SELECT seq FROM sqlite_sequence WHERE name = 'chunk_history'").fetchone()
    conn.close()
    assert places == sum(len(chunks) for _, chunks in steps[:-1])  # 28: the old layout
    store = open_store(root)  # migrates
    try:
        assert INDEX_MIGRATIONS.pending(store.conn) == []
        stored = store.conn.execute("SELECT count(*) FROM chunk_history").fetchone()[0]
        hits = store.conn.execute(
            "SELECT count(*) FROM chunk_history_fts WHERE chunk_history_fts MATCH 'crawled'"
        ).fetchone()[0]
    finally:
        store.close()
    assert stored == len(set().union(*(chunks for _, chunks in steps[:-1]))) == hits
    assert history_problems(db) == []
    for moment, chunks in steps:
        assert _chunks_as_of(root, moment) == chunks
    write(root, "Log.md", (root / "Log.md").read_text() + _section(50))
    index_then_moment(root)
    conn = sqlite3.connect(db)
    (newest,) = conn.execute("SELECT max(id) FROM chunk_history").fetchone()
    conn.close()
    assert newest > last_id
    assert history_problems(db) == []


def test_chunk_lists_round_trip_in_any_order():
    """A content's chunk list keeps its order, repeats and any id (ids of chunks shared with
    older contents come back out of order after a revert)."""
    from brain.index.schema import pack_ids, unpack_ids

    for ids in ([], [7], list(range(1, 801)), [9, 3, 3, 2**40 + 5, 1, 2**62]):
        assert unpack_ids(pack_ids(ids)) == ids
    assert len(pack_ids(list(range(1000, 1800)))) < 64  # a run compresses to a few bytes


def test_a_deleted_note_keeps_its_last_content_when_versions_are_bounded(tmp_path, monkeypatch):
    """With BRAIN_KEEP_VERSIONS set, deleting a note pruned its versions while its row still
    named the content just retired, which then counted as current: its chunks went, and as of
    before the delete the note was there with nothing to find it by."""
    monkeypatch.setenv("BRAIN_KEEP_VERSIONS", "2")
    root = tmp_path / "vault"
    steps = _grow(root, 3)
    (root / "Log.md").unlink()
    index_then_moment(root)
    db = config.index_dir(root) / "index.db"
    assert history_problems(db) == []
    for moment, chunks in steps[-2:]:
        assert _chunks_as_of(root, moment) == chunks


def test_a_rebuild_stopped_then_resumed_after_a_prune_leaves_the_pruned_history_out(tmp_path, monkeypatch):
    """A stopped ``--rebuild --keep-history`` resumes only while the old index's history is as it
    carried it. Pruning past versions whose chunks later versions still hold changed neither the
    past chunks' count nor the last version's id, and the resumed rebuild brought the pruned
    versions back."""
    import pytest
    from conftest import FakeEmbedder

    import brain.index.indexer
    from brain.index.history import prune

    root = tmp_path / "vault"
    for i in range(40):
        write(root, f"Other {i}.md", f"# Other {i}\n\nA note about pottery wheel number {i}.\n")
    steps = _grow(root, 5)
    calls = []

    class Stop(Exception):
        pass

    class StopsLater(FakeEmbedder):
        def embed_documents(self, texts, *, progress=False):
            calls.append(texts)
            if len(calls) == 2:
                raise Stop()
            return super().embed_documents(texts, progress=progress)

    monkeypatch.setattr(brain.index.indexer, "CHUNKS_PER_BATCH", 16)
    with pytest.raises(Stop):
        index_vault(root, rebuild=True, keep_history=True, embedder=StopsLater(), progress=False)
    assert config.index_dir(root).with_name(config.index_dir(root).name + ".rebuild").exists()
    store = open_store(root)
    try:
        report = prune(store, before=steps[2][0], keep=None)
        left = store.history_counts()["past_versions"]
    finally:
        store.close()
    assert report.versions == 2 and report.chunks == 0  # the log's first two contents, and nothing else
    index_vault(root, rebuild=True, keep_history=True, progress=False)
    store = open_store(root)
    try:
        assert store.history_counts()["past_versions"] == left
    finally:
        store.close()
    assert history_problems(config.index_dir(root) / "index.db") == []


def _moved_to_another_folder(root: Path) -> tuple[float, dict[str, bytes]]:
    """With BRAIN_CHUNKING=heading+path, Log.md (its title its own) edited, moved to another folder
    (its chunks embedded again: the folders are in what the embedder reads) and edited again.
    Returns a moment before the last edit and the note's chunks' vectors then, by text."""
    head = "---\ntitle: Log\n---\n# Log\n\n"
    write(root, "a/Log.md", head + _section(1) + _section(2))
    index_then_moment(root)
    write(root, "a/Log.md", head + _section(1) + _section(2) + _section(3))
    index_then_moment(root)
    (root / "b").mkdir()
    (root / "a/Log.md").rename(root / "b/Log.md")
    moment = index_then_moment(root)
    store = open_store(root)
    try:
        note_id = store.note_id("b/Log.md")
        then = {
            r[0]: bytes(r[1])
            for r in store.conn.execute("SELECT text, vector FROM chunks WHERE note_id = ?", (note_id,))
        }
    finally:
        store.close()
    write(root, "b/Log.md", head + _section(1) + _section(2) + _section(3) + _section(4))
    index_then_moment(root)
    return moment, then


def _vectors_as_of(root: Path, moment: float) -> dict[str, bytes]:
    """The stored vectors of the past chunks read as of ``moment``, by text."""
    store = open_store(root)
    past = PastIndex(store, as_of=moment)
    try:
        ids = past.past_chunk_ids()
        rows = store.conn.execute(
            f"SELECT text, vector FROM chunk_history WHERE id IN ({', '.join('?' * len(ids))})", ids
        ).fetchall()
        return {r[0]: bytes(r[1]) for r in rows}
    finally:
        past.close()


def test_a_chunk_embedded_otherwise_in_another_folder_keeps_its_own_vector(tmp_path, monkeypatch):
    """With …+path the embedder reads the note's folders: after a move, the same title, heading
    and text embed otherwise. Shared by those alone, the past after the move was searched with
    the vectors from before it."""
    monkeypatch.setenv("BRAIN_CHUNKING", "heading+path")
    root = tmp_path / "vault"
    moment, then = _moved_to_another_folder(root)
    assert _vectors_as_of(root, moment) == then
    assert history_problems(config.index_dir(root) / "index.db") == []


def test_m018_keeps_alike_chunks_embedded_otherwise_apart(tmp_path, monkeypatch):
    """An index from before sharing whose note moved folders under …+path: each past content
    keeps the vectors it had."""
    monkeypatch.setenv("BRAIN_CHUNKING", "heading+path")
    root = tmp_path / "vault"
    moment, then = _moved_to_another_folder(root)
    db = config.index_dir(root) / "index.db"
    _unshare(db)
    conn = sqlite3.connect(db)
    try:
        (digest,) = conn.execute(
            "SELECT hash FROM note_versions WHERE recorded_from <= ? AND recorded_to > ?", (moment, moment)
        ).fetchone()
        # What brain kept before m018: that content's own copies, as its chunks were then.
        conn.executemany(
            "UPDATE chunk_history SET vector = ? WHERE hash = ? AND text = ?",
            [(vector, digest, text) for text, vector in then.items()],
        )
        conn.commit()
    finally:
        conn.close()
    open_store(root).close()  # migrates
    assert _vectors_as_of(root, moment) == then
    assert history_problems(db) == []


def test_an_edit_reads_no_other_past_contents_chunk_list(tmp_path, monkeypatch):
    """Keeping a content's chunks as past chunks unpacked every past content's chunk list of the
    note to find chunks none held any more, which a new list cannot cause: each edit of a log
    with a long past cost its versions times its chunks (400 versions of 2,400 chunks: 45 ms)."""
    import brain.index.history_store

    root = tmp_path / "vault"
    _grow(root, 8)
    unpacked = []
    real = brain.index.history_store.unpack_ids
    monkeypatch.setattr(brain.index.history_store, "unpack_ids", lambda blob: unpacked.append(1) or real(blob))
    write(root, "Log.md", (root / "Log.md").read_text() + _section(8))
    index_then_moment(root)
    assert unpacked == []
    assert history_problems(config.index_dir(root) / "index.db") == []
