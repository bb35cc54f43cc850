"""Long past texts kept as segments shared between a note's versions (version_text.py, m020):
a note that grows or is edited in the middle keeps each version's new segments only, every
version reads back whole, no segment outlives the versions that list it, and an index that
kept every text whole (before m020) is converted once, all or nothing. Fake embedder."""

from __future__ import annotations

import hashlib
import os
import random
import signal
import sqlite3
import subprocess
import sys
import time
import zlib
from pathlib import Path

import pytest
from conftest import write
from index_helpers import _segment_problems, history_problems, open_store

from brain import config
from brain.index import version_text
from brain.index.indexer import index_vault
from brain.index.prune import prune_vault
from brain.index.schema import INDEX_MIGRATIONS
from brain.index.version_text import (
    MAX_SEGMENT,
    MIN_SEGMENT,
    SEGMENTS_FROM,
    SegmentCache,
    compress,
    is_segmented,
    segment_ids,
    split_segments,
)

WORDS = "kiln glaze cone fired crawled pinholes reduction oxidation bisque shelf porcelain celadon shino ash".split()


def _line(rng: random.Random) -> str:
    return " ".join(rng.choice(WORDS) for _ in range(rng.randint(4, 30))).capitalize() + "."


def _log(rng: random.Random, entries: int) -> list[str]:
    lines = ["# Kiln log", ""]
    for i in range(entries):
        lines += [f"## Firing {i}", "", _line(rng), ""]
    return lines


def _text(lines: list[str]) -> str:
    return "\n".join(lines) + "\n"


# ----- the cuts --------------------------------------------------------------------------------


def test_segments_join_to_the_text_and_are_bounded():
    rng = random.Random(3)
    texts = [b"", b"x", b"\n\n\n", _text(_log(rng, 300)).encode(), b"a" * 50_000, (b"word " * 9000) + b"\r\n" * 7]
    texts.append(bytes(rng.randrange(256) for _ in range(30_000)))  # not text at all
    texts.append("ёлка и кедр\r\n".encode() * 2000)
    for data in texts:
        parts = split_segments(data)
        assert b"".join(parts) == data
        assert all(parts)
        assert all(len(part) < 2 * MAX_SEGMENT for part in parts)
        assert all(len(part) >= MIN_SEGMENT for part in parts[:-1])


def test_an_edit_changes_only_the_segments_around_it():
    """Cuts depend on the bytes near them: an append keeps every segment but the last, an edit
    in the middle (a line rewritten, one added, one removed) a few around it."""
    rng = random.Random(5)
    lines = _log(rng, 600)  # ~70 KB
    before = split_segments(_text(lines).encode())
    assert 20 < len(before) < 80
    grown = split_segments(_text(lines + ["## Firing 600", "", _line(rng), ""]).encode())
    assert grown[: len(before) - 1] == before[:-1]
    for change in ("rewrite", "insert", "delete"):
        edited = list(lines)
        middle = len(lines) // 2 + (2 - len(lines) // 2 % 4)
        if change == "rewrite":
            edited[middle] = _line(rng)
        elif change == "insert":
            edited.insert(middle, _line(rng))
        else:
            del edited[middle]
        after = split_segments(_text(edited).encode())
        assert len(set(after) - set(before)) <= 3, change
        assert len(set(before) - set(after)) <= 3, change


# ----- a note's versions -----------------------------------------------------------------------


def _segment_count(db: Path) -> int:
    conn = sqlite3.connect(db)
    try:
        return conn.execute("SELECT count(*) FROM text_segments").fetchone()[0]
    finally:
        conn.close()


def _texts_read_back(root: Path, path: str) -> list[bytes | None]:
    store = open_store(root)
    try:
        (note_id,) = store.conn.execute(
            "SELECT note_id FROM note_versions WHERE path = ? ORDER BY id DESC LIMIT 1", (path,)
        ).fetchone()
        texts = [store.version_bytes(v.id) for v in store.versions_of(note_id)]
        cache = SegmentCache()  # read one after another, as `brain history` reads them: the same
        assert [store.version_bytes(v.id, cache) for v in store.versions_of(note_id)] == texts
        return texts
    finally:
        store.close()


def _grow_and_edit(root: Path, rng: random.Random, versions: int) -> list[bytes]:
    """Log.md (~25 KB) appended to, and now and then edited in the middle, indexed after each:
    every content it had, in order."""
    write(root, "Other.md", "# Other\n\nNothing to do with kilns.\n")
    lines = _log(rng, 200)
    contents = []
    for i in range(versions):
        if i % 3 == 2:
            lines[rng.randrange(2, len(lines))] = _line(rng)
        else:
            lines += [f"## Firing {len(lines)}", "", _line(rng), ""]
        contents.append(_text(lines).encode())
        write(root, "Log.md", contents[-1].decode())
        index_vault(root, progress=False)
    return contents


def test_a_long_note_keeps_each_version_in_shared_segments(tmp_path):
    root = tmp_path / "vault"
    contents = _grow_and_edit(root, random.Random(11), 12)
    db = config.index_dir(root) / "index.db"
    assert history_problems(db) == []
    assert _texts_read_back(root, "Log.md") == contents
    conn = sqlite3.connect(db)
    try:
        blobs = [
            bytes(r[0])
            for r in conn.execute("SELECT content FROM note_versions WHERE path = 'Log.md' ORDER BY id").fetchall()
        ]
        kept = conn.execute("SELECT sum(length(data)) FROM text_packs").fetchone()[0]
    finally:
        conn.close()
    assert [is_segmented(blob) for blob in blobs] == [True] * 11 + [False]  # the current one: against its chunks
    listed = sum(len(segment_ids(blob)) for blob in blobs[:-1])
    stored = _segment_count(db)
    assert listed > 4 * stored  # each version lists ~15, and brings one or two new ones
    whole = sum(len(compress(data)) for data in contents[:-1])
    assert kept + sum(map(len, blobs[:-1])) < whole / 4


def test_a_short_past_text_stays_one_stream(tmp_path):
    root = tmp_path / "vault"
    short = "# Short\n\n" + "A line of the note.\n" * ((SEGMENTS_FROM - 200) // 20)
    write(root, "Short.md", short)
    index_vault(root, progress=False)
    write(root, "Short.md", short + "One more.\n")
    index_vault(root, progress=False)
    db = config.index_dir(root) / "index.db"
    assert _segment_count(db) == 0
    assert _texts_read_back(root, "Short.md") == [short.encode(), (short + "One more.\n").encode()]
    assert history_problems(db) == []


def test_segments_go_with_the_last_version_that_lists_them(tmp_path, monkeypatch):
    """BRAIN_KEEP_VERSIONS, `brain prune --before`, a delete that keeps no past and a revert
    each drop exactly the segments no version left lists (history_problems counts them)."""
    root = tmp_path / "vault"
    db = config.index_dir(root) / "index.db"
    rng = random.Random(17)
    contents = _grow_and_edit(root, rng, 8)
    start = _segment_count(db)
    # A revert to the third content: its version is current again, against its chunks.
    write(root, "Log.md", contents[2].decode())
    index_vault(root, progress=False)
    assert history_problems(db) == []
    assert _texts_read_back(root, "Log.md") == [*contents, contents[2]]
    monkeypatch.setenv("BRAIN_KEEP_VERSIONS", "3")
    write(root, "Log.md", contents[-1].decode() + "## Last\n\nA last entry.\n")
    index_vault(root, progress=False)
    assert history_problems(db) == []
    assert 0 < _segment_count(db) < start
    assert _texts_read_back(root, "Log.md")[:-1] == [contents[-2], contents[-1], contents[2]]
    monkeypatch.delenv("BRAIN_KEEP_VERSIONS")
    prune_vault(root, before=time.time() + 3600)  # every past version
    assert history_problems(db) == []
    assert _segment_count(db) == 0
    # A delete with no past kept: the deleted version goes, and its segments with it.
    write(root, "Log.md", contents[0].decode())
    index_vault(root, progress=False)
    assert _segment_count(db) > 0
    monkeypatch.setenv("BRAIN_KEEP_VERSIONS", "0")
    (root / "Log.md").unlink()
    index_vault(root, progress=False)
    assert history_problems(db) == []
    assert _segment_count(db) == 0


def test_a_quick_save_undone_leaves_no_segment(tmp_path, monkeypatch):
    """Saves within BRAIN_VERSION_INTERVAL are one version: a save undone seconds later folds
    away, and the version before it is current again, its segments let go."""
    from test_version_interval import Clock

    from brain.index import history as history_module

    clock = Clock()
    monkeypatch.setattr(history_module, "time", clock)
    monkeypatch.setenv("BRAIN_VERSION_INTERVAL", "300")
    root = tmp_path / "vault"
    db = config.index_dir(root) / "index.db"
    rng = random.Random(23)
    first = _text(_log(rng, 200))
    second = first + "## More\n\n" + _line(rng) + "\n"
    write(root, "Log.md", first)
    index_vault(root, progress=False)
    clock.now += 3600
    write(root, "Log.md", second)
    index_vault(root, progress=False)
    held = _segment_count(db)  # the first content's
    clock.now += 5
    write(root, "Log.md", second + "typing")
    index_vault(root, progress=False)
    assert _segment_count(db) > held  # the second content's, past now
    clock.now += 5
    write(root, "Log.md", second)
    index_vault(root, progress=False)
    assert history_problems(db) == []
    assert _texts_read_back(root, "Log.md") == [first.encode(), second.encode()]
    assert _segment_count(db) == held


def test_a_rebuild_carries_the_segments_or_drops_them(tmp_path):
    root = tmp_path / "vault"
    db = config.index_dir(root) / "index.db"
    contents = _grow_and_edit(root, random.Random(29), 6)
    held = _segment_count(db)
    index_vault(root, rebuild=True, keep_history=True, progress=False)
    assert history_problems(db) == []
    assert _texts_read_back(root, "Log.md") == contents
    assert _segment_count(db) == held
    index_vault(root, rebuild=True, keep_history=False, progress=False)
    assert history_problems(db) == []
    assert _segment_count(db) == 0


# ----- never a wrong text ----------------------------------------------------------------------


def test_a_damaged_segment_makes_its_texts_missing_never_wrong(tmp_path):
    """A segment whose bytes changed on disk: the versions listing it read as not kept; the
    next version that would share it keeps its text whole instead."""
    root = tmp_path / "vault"
    db = config.index_dir(root) / "index.db"
    contents = _grow_and_edit(root, random.Random(31), 4)
    conn = sqlite3.connect(db)
    first_id, pack_id, start = conn.execute(
        "SELECT id, pack_id, start FROM text_segments ORDER BY id LIMIT 1"
    ).fetchone()
    data = bytearray(
        zlib.decompress(conn.execute("SELECT data FROM text_packs WHERE id = ?", (pack_id,)).fetchone()[0])
    )
    data[start + 2] ^= 1  # "# Kiln log" → "# Jiln log"
    conn.execute("UPDATE text_packs SET data = ? WHERE id = ?", (zlib.compress(bytes(data)), pack_id))
    lists = [bytes(r[0]) for r in conn.execute("SELECT content FROM note_versions WHERE path = 'Log.md' ORDER BY id")]
    conn.commit()
    conn.close()
    damaged = [first_id in segment_ids(blob) for blob in lists[:-1]]
    assert damaged[-1]  # the last past version lists it, as the next one would
    wanted = [None if hit else text for hit, text in zip(damaged, contents)] + [contents[-1]]
    assert _texts_read_back(root, "Log.md") == wanted
    grown = contents[-1] + b"## Next\n\nAnother firing.\n"
    write(root, "Log.md", grown.decode())
    index_vault(root, progress=False)
    assert _texts_read_back(root, "Log.md")[-2:] == [contents[-1], grown]
    conn = sqlite3.connect(db)
    blob = conn.execute(
        "SELECT content FROM note_versions WHERE path = 'Log.md' ORDER BY id DESC LIMIT 1 OFFSET 1"
    ).fetchone()[0]
    conn.close()
    assert not is_segmented(bytes(blob))  # kept whole, not pointed at the damaged segment


def test_a_text_read_through_a_cache_gone_stale_reads_back_right(tmp_path, caplog):
    """`brain history` reads a note's versions through the segments the one before read; a
    prune between two reads may have packed a pack again (its segments moved): a text that
    does not read back through the cache is read again without it, and nothing is missing."""
    root = tmp_path / "vault"
    contents = _grow_and_edit(root, random.Random(37), 4)
    store = open_store(root)
    try:
        versions = store.versions_of(store.note_id("Log.md"))
        cache = SegmentCache()
        assert store.version_bytes(versions[0].id, cache) == contents[0]
        assert cache.packs
        cache.packs = {pack_id: data[::-1] for pack_id, data in cache.packs.items()}  # moved
        with caplog.at_level("ERROR"):
            assert [store.version_bytes(v.id, cache) for v in versions] == contents
        assert not caplog.records
    finally:
        store.close()


# ----- an index from before m020 ---------------------------------------------------------------


def _as_before_m020(db: Path) -> int:
    """Put an index back as brain left it before m020: every past text one zlib stream, no
    segments, m020 not applied. Returns how many texts were in segments."""
    conn = sqlite3.connect(db, isolation_level=None)
    try:
        segments = {segment_id: data for segment_id, (_, data) in _segment_problems(conn)[0].items()}
        rows = conn.execute("SELECT id, content FROM note_versions WHERE substr(content, 1, 1) = x'00'").fetchall()
        conn.execute("BEGIN")
        for version_id, blob in rows:
            data = b"".join(segments[i] for i in segment_ids(bytes(blob)))
            conn.execute("UPDATE note_versions SET content = ? WHERE id = ?", (zlib.compress(data, 6), version_id))
        conn.execute("DROP TABLE text_segments")
        conn.execute("DROP TABLE text_packs")
        conn.execute("DELETE FROM _migrations WHERE name = 'm020_past_texts_in_segments'")
        conn.execute("COMMIT")
        return len(rows)
    finally:
        conn.close()


def test_an_index_from_before_segments_reads_and_is_converted(tmp_path, closing):
    root = tmp_path / "vault"
    db = config.index_dir(root) / "index.db"
    contents = _grow_and_edit(root, random.Random(37), 8)
    assert _as_before_m020(db) == 7
    size = closing(sqlite3.connect(db)).execute("SELECT sum(length(content)) FROM note_versions").fetchone()[0]
    store = open_store(root)  # migrates
    try:
        assert INDEX_MIGRATIONS.pending(store.conn) == []
    finally:
        store.close()
    assert history_problems(db) == []
    assert _texts_read_back(root, "Log.md") == contents
    conn = sqlite3.connect(db)
    lists, kept = conn.execute(
        "SELECT sum(length(content)), (SELECT sum(length(data)) FROM text_packs) FROM note_versions"
    ).fetchone()
    conn.close()
    assert lists + kept < size / 3
    write(root, "Log.md", contents[-1].decode() + "## New\n\nA firing after the migration.\n")
    index_vault(root, progress=False)
    assert history_problems(db) == []
    assert _texts_read_back(root, "Log.md")[:-1] == contents


def test_m020_leaves_a_text_that_is_not_its_content_as_it_was(tmp_path):
    """A past text that does not read back as its hash (damaged before) is not converted: what
    is kept is never altered."""
    root = tmp_path / "vault"
    db = config.index_dir(root) / "index.db"
    _grow_and_edit(root, random.Random(41), 3)
    _as_before_m020(db)
    conn = sqlite3.connect(db)
    (version_id,) = conn.execute("SELECT min(id) FROM note_versions WHERE path = 'Log.md'").fetchone()
    wrong = zlib.compress(b"# Not the log\n" * 1000)
    conn.execute("UPDATE note_versions SET content = ? WHERE id = ?", (wrong, version_id))
    conn.commit()
    conn.close()
    store = open_store(root)
    try:
        assert store.version_bytes(version_id) is None
        blob = store.conn.execute("SELECT content FROM note_versions WHERE id = ?", (version_id,)).fetchone()[0]
    finally:
        store.close()
    assert bytes(blob) == wrong


_MIGRATE_SLOWLY = """
import sys, time
from brain.index import version_text
from brain.index.store import IndexStore
real = version_text.past_text
def slow(*args, **kwargs):
    out = real(*args, **kwargs)
    print("converted", flush=True)
    time.sleep(0.2)
    return out
version_text.past_text = slow
IndexStore.open(__import__("pathlib").Path(sys.argv[1]), create=False).close()
print("done", flush=True)
"""


def test_sigkill_mid_m020_leaves_the_index_as_it_was_and_the_next_open_converts_it(tmp_path, closing):
    root = tmp_path / "vault"
    db = config.index_dir(root) / "index.db"
    contents = _grow_and_edit(root, random.Random(43), 8)
    _as_before_m020(db)
    before = hashlib.sha256(
        b"".join(
            bytes(r[0]) for r in closing(sqlite3.connect(db)).execute("SELECT content FROM note_versions ORDER BY id")
        )
    ).hexdigest()
    env = {**os.environ, "PYTHONPATH": os.pathsep.join(sys.path)}
    proc = subprocess.Popen(
        [sys.executable, "-c", _MIGRATE_SLOWLY, str(config.index_dir(root))],
        stdout=subprocess.PIPE,
        text=True,
        env=env,
    )
    assert proc.stdout is not None
    for _ in range(3):  # three texts converted, four to go: killed inside the migration
        assert proc.stdout.readline().strip() == "converted"
    os.kill(proc.pid, signal.SIGKILL)
    proc.wait()
    conn = sqlite3.connect(db)
    try:
        assert conn.execute("SELECT name FROM sqlite_master WHERE name = 'text_segments'").fetchone() is None
        assert "m020_past_texts_in_segments" not in INDEX_MIGRATIONS.applied(conn)
        after = hashlib.sha256(
            b"".join(bytes(r[0]) for r in conn.execute("SELECT content FROM note_versions ORDER BY id"))
        ).hexdigest()
    finally:
        conn.close()
    assert after == before
    assert _texts_read_back(root, "Log.md") == contents  # opens, so migrates
    assert history_problems(db) == []
    assert _segment_count(db) > 0


@pytest.mark.parametrize("name", ["SEGMENTED"])
def test_no_zlib_stream_begins_as_a_segment_list(name):
    """The marker byte is one no zlib stream can begin with: a text kept whole is never read as
    a list, nor a list as a text."""
    marker = getattr(version_text, name)
    for level in range(10):
        for data in (b"", b"x" * 1000):
            assert not compress(data).startswith(marker)
            assert zlib.compress(data, level)[:1] != marker
    with pytest.raises(zlib.error):
        zlib.decompress(marker + b"\x78\x9c")


def test_segment_lists_round_trip_in_any_order():
    """A version's list keeps its order, repeats and any id (a revert lists older segments
    after newer ones); a note that grows lists ids a few apart in about two bytes each."""
    from brain.index.version_text import segment_list

    for ids in ([], [7], list(range(1, 801)), [9, 3, 3, 2**40 + 5, 1, 2**62], [5, 4, 3, 2, 1]):
        assert segment_ids(segment_list(ids)) == ids
    rng = random.Random(2)
    growing = sorted(rng.sample(range(1, 2000), 128))
    assert len(segment_list(growing)) < 2.5 * len(growing)
