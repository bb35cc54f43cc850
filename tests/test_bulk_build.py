"""A run over many notes (a first build) writes the index in bulk (indexer.BULK_FROM: larger
commits, a larger page cache, vectors encoded a batch at a time, chunks_fts filled with a larger
buffer): the index is the one a small run's writes make, through a first build and runs that
change, rename and delete notes. Both ways are forced here on a small vault."""

from __future__ import annotations

import os
import re
import sqlite3
from pathlib import Path

import pytest
from conftest import write
from index_helpers import environ, history_problems, index_into

from brain import config
from brain.index import indexer
from brain.index import lexical_store as store_module


def _vault(root: Path, round_: int) -> None:
    """40 notes with links, aliases and tags; each later round edits, renames and deletes some."""
    for i in range(40):
        if round_ and i % 9 == 0:
            (root / "n" / f"Note {i}.md").unlink(missing_ok=True)
            continue
        body = f"# Note {i}\n\nAbout topic {i % 5} and [[Note {(i + 1) % 40}]] [[alias {i // 2}]].\n\n"
        body += "## More\n\n" + f"words{i % 7} " * (20 + i) + "\n\n## Last\n\n[[nowhere]] and [[image.png]]\n"
        if round_ and i % 4 == 0:
            body += f"\nchanged in round {round_}\n"
        title = f"title: Renamed {i}\n" if round_ == 2 and i % 5 == 0 else ""
        write(root, f"n/Note {i}.md", f"---\n{title}tags: [t{i % 3}]\naliases: [alias {i}]\n---\n{body}")
    if round_:
        old, new = root / "n" / "Note 1.md", root / "moved" / "Note 1.md"
        if old.exists():
            new.parent.mkdir(exist_ok=True)
            old.rename(new)
        os.utime(root / "n" / "Note 2.md", ns=(10**18, 10**18))


def _dump(directory: Path) -> dict:
    conn = sqlite3.connect(directory / "index.db")
    conn.execute("CREATE VIRTUAL TABLE temp.vocab USING fts5vocab(main, 'chunks_fts', 'instance')")
    try:
        query = {
            "notes": "SELECT id, path, title, aliases, tags, frontmatter, hash, warnings, path_key, name_key FROM notes"
            " ORDER BY id",
            "chunks": "SELECT id, note_id, ordinal, heading, text, vector FROM chunks ORDER BY id",
            "links": "SELECT id, source_id, target_id, target, kind, status, stem_hash FROM links ORDER BY id",
            "aliases": "SELECT note_id, alias, key FROM aliases ORDER BY 1, 2",
            "versions": "SELECT id, note_id, path, hash, content, event, recorded_to IS NULL FROM note_versions"
            " ORDER BY id",
            "edges": "SELECT id, source_id, target, kind, count, target_id, status, recorded_to IS NULL"
            " FROM link_history ORDER BY id",
            "past chunks": "SELECT note_id, key, text, vector FROM chunk_history ORDER BY 1, 2",
            "past contents": "SELECT note_id, hash, length(chunk_ids) FROM version_chunks ORDER BY 1, 2",
            "lexical": "SELECT term, doc, col, offset FROM temp.vocab ORDER BY 1, 2, 3, 4",
            "bm25": "SELECT rowid, round(bm25(chunks_fts), 9) FROM chunks_fts WHERE chunks_fts MATCH 'words3 OR topic'"
            " ORDER BY 1",
            "indexes": "SELECT name, sql FROM sqlite_master WHERE type = 'index' ORDER BY name",
            "meta": "SELECT key FROM meta WHERE key = 'deferred_indexes'",
        }
        return {name: conn.execute(sql).fetchall() for name, sql in query.items()}
    finally:
        conn.close()


def test_a_bulk_run_builds_the_index_a_small_run_does(tmp_path, monkeypatch):
    vault = tmp_path / "vault"
    monkeypatch.setattr(indexer, "CHUNKS_PER_BATCH", 16)  # several batches a run
    seen = {"renamed": 0, "removed": 0, "changed": 0, "unchanged": 0}
    for round_ in range(3):
        _vault(vault, round_)
        monkeypatch.setattr(indexer, "BULK_FROM", 10**9)
        monkeypatch.setattr(store_module, "_FTS_BULK_CHUNKS", 10**9)
        small, small_dir = index_into(tmp_path / "small", vault)
        monkeypatch.setattr(indexer, "BULK_FROM", 0)
        monkeypatch.setattr(store_module, "_FTS_BULK_CHUNKS", 2)
        bulk, bulk_dir = index_into(tmp_path / "bulk", vault)
        assert small.as_dict() | {"seconds": 0} == bulk.as_dict() | {"seconds": 0}
        assert _dump(small_dir) == _dump(bulk_dir)
        assert history_problems(bulk_dir / "index.db") == []
        for kind in seen:
            seen[kind] += getattr(bulk, kind)
    assert all(seen.values()), seen


def test_a_first_build_asks_history_nothing_for_its_new_notes_and_a_later_run_does(tmp_path, monkeypatch):
    """With no version in history when a run first writes a new note, no new note can continue
    one (the run deletes notes only after writing them all): a first build skips the lookups.
    A later run, with history, still finds a deleted note's identity for its restored bytes."""
    from brain.index.store import IndexStore

    asked: list[str] = []
    lookup = IndexStore.identity_in_history
    monkeypatch.setattr(
        IndexStore,
        "identity_in_history",
        lambda store, path, digest: (asked.append(path), lookup(store, path, digest))[1],
    )
    vault = tmp_path / "vault"
    for i in range(5):
        write(vault, f"Note {i}.md", f"# Note {i}\n\nsame words {i} [[Note {i + 1}]]\n")
    index_into(tmp_path / "home", vault)
    assert asked == []
    data = (vault / "Note 2.md").read_bytes()
    (vault / "Note 2.md").unlink()
    _, directory = index_into(tmp_path / "home", vault)
    (vault / "Back.md").write_bytes(data)
    report, directory = index_into(tmp_path / "home", vault)
    assert asked == ["Back.md"] and report.restored == 1
    assert history_problems(directory / "index.db") == []


def test_a_first_build_makes_its_random_key_indexes_after_its_writes(tmp_path, monkeypatch):
    """A bulk first build into an empty index drops the indexes none of its writes reads and
    makes them again once the links are resolved: the same indexes, from their own SQL. A
    run that fails in between leaves them recorded; the next run makes them before it reads."""
    from brain.index.linking import resolve_links
    from brain.index.store import _DEFERRED_INDEXES

    vault = tmp_path / "vault"
    _vault(vault, 0)
    monkeypatch.setattr(indexer, "BULK_FROM", 10**9)
    _, small_dir = index_into(tmp_path / "small", vault)
    want = _dump(small_dir)["indexes"]
    assert set(_DEFERRED_INDEXES) <= {name for name, _ in want}  # a renamed index would go unnoticed

    monkeypatch.setattr(indexer, "BULK_FROM", 0)
    seen: list[list[str]] = []

    def resolve(store, **kwargs):
        rows = store.conn.execute("SELECT name FROM sqlite_master WHERE type = 'index'").fetchall()
        seen.append([name for (name,) in rows])
        raise RuntimeError("stopped here")

    monkeypatch.setattr(indexer, "resolve_links", resolve)
    with pytest.raises(RuntimeError, match="stopped here"):
        index_into(tmp_path / "bulk", vault)
    assert seen and not set(_DEFERRED_INDEXES) & set(seen[0])
    with environ(BRAIN_HOME=str(tmp_path / "bulk")):
        directory = config.index_dir(vault)
    conn = sqlite3.connect(directory / "index.db")
    try:
        assert conn.execute("SELECT 1 FROM meta WHERE key = 'deferred_indexes'").fetchone()
    finally:
        conn.close()

    monkeypatch.setattr(indexer, "resolve_links", resolve_links)
    monkeypatch.setattr(indexer, "BULK_FROM", 10**9)  # an ordinary run restores them first
    report, bulk_dir = index_into(tmp_path / "bulk", vault)
    assert bulk_dir == directory and report.new == 0
    assert _dump(bulk_dir) == _dump(small_dir)


def test_no_write_of_a_first_build_would_read_an_index_it_makes_after(tmp_path, monkeypatch):
    """A first build writes without _DEFERRED_INDEXES: a statement of its writes that SQLite
    would answer through one of them scans its table instead, once a note (a first build made
    quadratic). Every statement its flushes run is asked for its plan over the finished index,
    which has them all: none may use them."""
    from brain.index.store import _DEFERRED_INDEXES, IndexStore

    monkeypatch.setattr(indexer, "BULK_FROM", 0)
    monkeypatch.setattr(indexer, "CHUNKS_PER_BATCH", 16)
    statements: dict[str, str] = {}  # one example of each statement, its values aside
    writing = [False]
    opened = IndexStore.__init__

    def seen(sql: str) -> None:
        if writing[0] and not sql.startswith("--"):
            statements.setdefault(re.sub(r"'[^']*'|\b\d+\b", "?", sql), sql)

    def traced(store, *args, **kwargs):
        opened(store, *args, **kwargs)
        store.conn.set_trace_callback(seen)

    flush = indexer._Run._flush

    def flushing(run, batch):
        writing[0] = True
        try:
            flush(run, batch)
        finally:
            writing[0] = False

    monkeypatch.setattr(IndexStore, "__init__", traced)
    monkeypatch.setattr(indexer._Run, "_flush", flushing)
    vault = tmp_path / "vault"
    _vault(vault, 0)
    report, directory = index_into(tmp_path / "home", vault)
    assert report.new == 40 and statements
    conn = sqlite3.connect(directory / "index.db")
    try:
        used: dict[str, set[str]] = {}
        for sql in statements.values():
            if sql.split(None, 1)[0].upper() in ("BEGIN", "COMMIT", "ROLLBACK", "PRAGMA", "SAVEPOINT", "RELEASE"):
                continue
            for row in conn.execute(f"EXPLAIN QUERY PLAN {sql}"):
                # A lookup through the index (SEARCH); a scan (SCAN, say of a covering index for
                # a LIMIT 1) reads the table as well without it.
                step = f"{row[-1]} "
                for name in _DEFERRED_INDEXES:
                    if step.startswith("SEARCH") and f"INDEX {name} " in step:
                        used.setdefault(name, set()).add(sql[:120])
    finally:
        conn.close()
    assert used == {}


def test_a_reader_during_a_first_build_answers_while_its_indexes_are_not_made(tmp_path, monkeypatch):
    """`brain ask` beside a first build, between its writes and its indexes: the lookups those
    indexes served scan their tables instead; the answer comes, and names the same note first
    as once the build is done."""
    from conftest import FakeEmbedder

    from brain.index.linking import resolve_links
    from brain.index.store import _DEFERRED_INDEXES
    from brain.recall.opening import open_recaller

    monkeypatch.setattr(indexer, "BULK_FROM", 0)
    vault, home = tmp_path / "vault", tmp_path / "home"
    _vault(vault, 0)
    asked: list[list[str]] = []

    def ask() -> None:
        with environ(BRAIN_HOME=str(home)):
            recaller = open_recaller(vault, update=False, embedder=FakeEmbedder(), rerank_model=None)
            try:
                for query in ("Note 17", "alias 23", "words3 topic"):
                    asked.append([hit.path for hit in recaller.ask(query).results[:3]])
            finally:
                recaller.close()

    def reading_first(store, **kwargs):
        left = {r[0] for r in store.conn.execute("SELECT name FROM sqlite_master WHERE type = 'index'")}
        assert not left & set(_DEFERRED_INDEXES)
        ask()
        return resolve_links(store, **kwargs)

    monkeypatch.setattr(indexer, "resolve_links", reading_first)
    index_into(home, vault)
    during = list(asked)
    asked.clear()
    ask()
    assert len(during) == 3 and all(during)
    assert during[0][0] == asked[0][0] == "n/Note 17.md" and during[1][0] == asked[1][0] == "n/Note 23.md"
