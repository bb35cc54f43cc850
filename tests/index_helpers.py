"""Helpers for the vault-indexing tests: index a vault into a given brain home, read the graph.

``index_into(home, vault)`` indexes without touching the test's own BRAIN_HOME (module-scoped
fixtures use it to index a vault once per module). ``IndexView`` reads an index database:
notes, chunks, links by path. ``CheapEmbedder`` (registered as ``cheap:<dim>``) gives each
text a pseudo-random unit vector from its hash, for big vaults where only the plumbing counts.
"""

from __future__ import annotations

import contextlib
import hashlib
import itertools
import json
import os
import random
import shutil
import sqlite3
import threading
import time
import zlib
from collections.abc import Callable, Iterator, Sequence
from pathlib import Path
from typing import Any

import numpy as np
import pytest
from conftest import FakeEmbedder

from brain import config
from brain.embed import register_embedder
from brain.index.indexer import IndexReport, index_vault
from brain.index.schema import unpack_ids
from brain.index.store import IndexStore
from brain.index.version_text import SEGMENTS_FROM, chunk_dictionary, decompress, needs_dictionary, segment_ids


class CheapEmbedder:
    """One pseudo-random unit vector per distinct text; no features, just fast."""

    def __init__(self, name: str = "cheap:16"):
        self.name = name
        self.dim = int(name.split(":", 1)[1]) if ":" in name else 16
        self.query_prefix = self.passage_prefix = ""
        self.embedded = 0

    def _vector(self, text: str) -> np.ndarray:
        seed = int.from_bytes(hashlib.blake2b(text.encode("utf-8", "surrogatepass"), digest_size=8).digest(), "little")
        vector = np.random.default_rng(seed).standard_normal(self.dim).astype(np.float32)
        return vector / np.linalg.norm(vector)

    def embed_documents(self, texts, *, progress: bool = False) -> np.ndarray:
        self.embedded += len(texts)
        if not texts:
            return np.zeros((0, self.dim), dtype=np.float32)
        return np.stack([self._vector(t) for t in texts])

    def embed_query(self, text: str) -> np.ndarray:
        return self._vector(text)


register_embedder("cheap", CheapEmbedder)


@contextlib.contextmanager
def environ(**values: str | None) -> Iterator[None]:
    """Set (or, with None, unset) environment variables for a block; restore them after."""

    def put(settings: dict[str, str | None]) -> None:
        for name, value in settings.items():
            if value is None:
                os.environ.pop(name, None)
            else:
                os.environ[name] = value

    saved = {name: os.environ.get(name) for name in values}
    try:
        put(values)
        yield
    finally:
        put(saved)


def open_store(vault: Path) -> IndexStore:
    """The index database of ``vault`` under the current BRAIN_HOME."""
    return IndexStore.open(config.index_dir(vault))


def note_ids(vault: Path, *paths: str) -> list[int | None]:
    """The ids the index of ``vault`` gives the notes at ``paths`` now (None: none there)."""
    store = open_store(vault)
    try:
        return [store.note_id(path) for path in paths]
    finally:
        store.close()


def index_into(home: Path, vault: Path, embedder=None, **kwargs) -> tuple[IndexReport, Path]:
    """Index ``vault`` with its index under ``home``; (report, index folder). What the run left to
    the background (the BM25 postings, FTS5's merges) is waited for: tests read it next."""
    from brain.index import background

    with environ(BRAIN_HOME=str(home), BRAIN_MAX_NOTE_MB=None):
        report = index_vault(vault, embedder=embedder or FakeEmbedder(), progress=False, **kwargs)
        background.wait_for_all(120)
        return report, config.index_dir(vault)


class IndexView:
    """Read-only questions about one index database, by note path."""

    def __init__(self, directory: Path):
        self.directory = directory
        self.store = IndexStore.open(directory, create=False)
        self.conn = self.store.conn

    def close(self) -> None:
        self.store.close()

    def __enter__(self) -> IndexView:
        return self

    def __exit__(self, *exc) -> None:
        self.close()

    def paths(self) -> set[str]:
        return {r[0] for r in self.conn.execute("SELECT path FROM notes")}

    def id(self, path: str) -> int:
        note_id = self.store.note_id(path)
        assert note_id is not None, f"{path} is not indexed"
        return note_id

    def note(self, path: str) -> dict:
        row = dict(self.conn.execute("SELECT * FROM notes WHERE path = ?", (path,)).fetchone())
        for key in ("aliases", "tags", "frontmatter", "warnings"):
            row[key] = json.loads(row[key])
        return row

    def links(self, source: str) -> list[dict]:
        """Outgoing links of a note: target (as written), kind, anchor, status, target_path."""
        return [
            {k: r[k] for k in ("target", "kind", "anchor", "display", "status", "target_path")}
            for r in self.store.outgoing(self.id(source))
        ]

    def targets(self, source: str) -> set[str]:
        """Paths of the notes ``source`` links to (resolved links only)."""
        return {link["target_path"] for link in self.links(source) if link["target_path"]}

    def backlinks(self, target: str) -> set[str]:
        return {r["source_path"] for r in self.store.backlinks(self.id(target))}

    def dangling(self) -> list[tuple[str, str]]:
        rows = self.conn.execute(
            "SELECT n.path, l.target FROM links l JOIN notes n ON n.id = l.source_id "
            "WHERE l.status = 'dangling' ORDER BY n.path, l.id"
        )
        return [(r[0], r[1]) for r in rows]

    def edge(self, source: str, target_text: str) -> dict:
        """The one link from ``source`` written with target ``target_text``."""
        hits = [link for link in self.links(source) if link["target"] == target_text]
        assert len(hits) >= 1, f"no link [[{target_text}]] in {source}: {self.links(source)}"
        return hits[0]

    def chunks(self, path: str) -> list[dict]:
        rows = self.conn.execute(
            "SELECT id, ordinal, heading, text, vector FROM chunks WHERE note_id = ? ORDER BY ordinal",
            (self.id(path),),
        )
        return [dict(r) for r in rows]

    def chunk_count(self) -> int:
        return self.conn.execute("SELECT count(*) FROM chunks").fetchone()[0]

    def skipped(self) -> dict[str, str]:
        return {entry["path"]: entry["reason"] for entry in self.store.skipped()}


def faiss_ids(directory: Path) -> set[int]:
    """The chunk ids in the saved vector files (the FAISS base and its delta)."""
    from brain.index.vectors import VectorIndex

    index, problem = VectorIndex.load_file(directory)
    assert index is not None, problem
    return {int(i) for i in index.ids()}


def assert_faiss_matches(directory: Path) -> None:
    """The saved FAISS file is at the database's version and holds exactly its chunk ids."""
    with IndexView(directory) as view:
        sidecar = json.loads((directory / "vectors.json").read_text())
        assert sidecar["version"] == view.store.vectors_version()
        chunk_ids = {r[0] for r in view.conn.execute("SELECT id FROM chunks")}
        assert faiss_ids(directory) == chunk_ids
        assert sidecar["count"] == len(chunk_ids)


def history_problems(db: Path) -> list[str]:
    """What would make history disagree with the present (or with itself); [] when consistent."""
    conn = sqlite3.connect(f"file:{db}?mode=ro", uri=True)
    problems = []
    checks = {
        # a note a migration marked to be read again (hash '') keeps its version to the next run
        "a note without a current version": "SELECT n.path FROM notes n WHERE NOT EXISTS (SELECT 1 FROM note_versions v"
        " WHERE v.note_id = n.id AND v.recorded_to IS NULL AND (v.hash = n.hash OR n.hash = '') AND v.path = n.path)",
        "a current version without its note": "SELECT v.path FROM note_versions v WHERE v.recorded_to IS NULL"
        " AND v.note_id NOT IN (SELECT id FROM notes)",
        "an open edge without a current version": "SELECT e.target FROM link_history e WHERE e.recorded_to IS NULL"
        " AND NOT EXISTS (SELECT 1 FROM note_versions v WHERE v.note_id = e.source_id AND v.recorded_to IS NULL)",
        "a note's links and its open edges differ": "SELECT source_id, target, kind, count(*) FROM links"
        " GROUP BY 1, 2, 3 EXCEPT SELECT source_id, target, kind, count FROM link_history WHERE recorded_to IS NULL",
        "an open edge for a link not written": "SELECT source_id, target, kind, count FROM link_history"
        " WHERE recorded_to IS NULL EXCEPT SELECT source_id, target, kind, count(*) FROM links GROUP BY 1, 2, 3",
        "overlapping versions": "SELECT a.note_id FROM note_versions a JOIN note_versions b ON a.note_id = b.note_id"
        " AND a.id < b.id WHERE coalesce(a.recorded_to, 9e99) > b.recorded_from",
        "a past version without its chunks": "SELECT v.path FROM note_versions v WHERE v.recorded_to IS NOT NULL"
        " AND v.hash NOT IN (SELECT hash FROM notes WHERE id = v.note_id)"
        " AND NOT EXISTS (SELECT 1 FROM version_chunks c WHERE c.note_id = v.note_id AND c.hash = v.hash)",
        "past chunks of current content": "SELECT c.note_id FROM version_chunks c JOIN notes n ON n.id = c.note_id"
        " AND n.hash = c.hash",
        "past chunks of no version": "SELECT c.note_id FROM version_chunks c WHERE NOT EXISTS"
        " (SELECT 1 FROM note_versions v WHERE v.note_id = c.note_id AND v.hash = c.hash)",
    }
    try:
        for name, sql in checks.items():
            rows = conn.execute(sql).fetchall()
            if rows:
                problems.append(f"{name}: {rows[:3]}")
        problems += _past_chunk_problems(conn)
        problems += _version_text_problems(conn)
    finally:
        conn.close()
    return problems


def _past_chunk_problems(conn: sqlite3.Connection) -> list[str]:
    """Each past chunk is held by a past content of its own note (stored once: a unique index),
    and each past content's chunks are there."""
    stored = {r[0]: (r[1],) for r in conn.execute("SELECT id, note_id FROM chunk_history")}
    held: set[int] = set()
    out = []
    for note_id, digest, blob in conn.execute("SELECT note_id, hash, chunk_ids FROM version_chunks"):
        ids = unpack_ids(blob)
        held.update(ids)
        if not ids or any(stored.get(i, (None,))[0] != note_id for i in ids):
            out.append(f"a past content whose chunks are missing or another note's: {note_id} {digest[:12]}")
    if set(stored) - held:
        out.append(f"past chunks no past content holds: {sorted(set(stored) - held)[:3]}")
    return out


def _version_text_problems(conn: sqlite3.Connection) -> list[str]:
    """Every kept text reads back as the bytes its hash names; only a current version keeps
    its text against its chunks, and a long past one is kept in segments of its own note, each
    listed by some version of it (brain/index/version_text.py)."""
    rows = conn.execute(
        "SELECT id, note_id, hash, content, recorded_to IS NULL FROM note_versions WHERE content IS NOT NULL"
    ).fetchall()
    segments, out = _segment_problems(conn)
    listed: set[int] = set()
    for version_id, note_id, digest, content, current in rows:
        blob = bytes(content)
        dictionary = b""
        if blob[:1] == b"\x00":
            ids = segment_ids(blob)
            listed.update(ids)
            if any(segments.get(i, (None,))[0] != note_id for i in ids):
                out.append(f"a version's segments missing or another note's: version {version_id}")
                continue
            data = b"".join(segments[i][1] for i in ids)
            if hashlib.sha256(data).hexdigest() != digest:
                out.append(f"a version's segments are not its content: version {version_id}")
            continue
        if needs_dictionary(blob):
            if not current:
                out.append(f"a past version's text kept against chunks: version {version_id}")
                continue
            texts = conn.execute("SELECT text FROM chunks WHERE note_id = ? ORDER BY ordinal", (note_id,))
            dictionary = chunk_dictionary(r[0] for r in texts)
        try:
            data = decompress(blob, dictionary)
        except zlib.error as exc:
            out.append(f"a version's text unreadable: version {version_id} ({exc})")
            continue
        if hashlib.sha256(data).hexdigest() != digest:
            out.append(f"a version's text is not its content: version {version_id}")
        if not current and len(data) >= SEGMENTS_FROM:
            out.append(f"a long past text kept whole: version {version_id}")
    if set(segments) - listed:
        out.append(f"text segments no version lists: {sorted(set(segments) - listed)[:3]}")
    return out


def _segment_problems(conn: sqlite3.Connection) -> tuple[dict[int, tuple[int, bytes]], list[str]]:
    """(segment id → (note id, its bytes), problems): each segment's bytes are in a pack of its
    note and hash to its key, and a pack's bytes are its segments', end to end, nothing else."""
    packs = {r[0]: (r[1], zlib.decompress(r[2])) for r in conn.execute("SELECT id, note_id, data FROM text_packs")}
    segments: dict[int, tuple[int, bytes]] = {}
    tiles: dict[int, list[tuple[int, int]]] = {}
    out = []
    for segment_id, note_id, key, pack_id, start, size in conn.execute(
        "SELECT id, note_id, key, pack_id, start, size FROM text_segments"
    ):
        pack_note, data = packs.get(pack_id, (None, b""))
        part = data[start : start + size]
        if pack_note != note_id or len(part) != size or hashlib.blake2b(part, digest_size=16).digest() != key:
            out.append(f"a text segment not in a pack of its note as its key says: segment {segment_id}")
        segments[segment_id] = (note_id, part)
        tiles.setdefault(pack_id, []).append((start, size))
    for pack_id, (_, data) in packs.items():
        ends = [0] + [start + size for start, size in sorted(tiles.get(pack_id, []))]
        starts = [start for start, _ in sorted(tiles.get(pack_id, []))] + [len(data)]
        if ends != starts:
            out.append(f"a text pack holding bytes no segment has, or none: pack {pack_id}")
    return segments, out


def write_float32_base(directory: Path) -> None:
    """Replace the saved vector files with a base as brain wrote it before float16 codes: the
    same chunks (read from the database) in an ``IndexFlatIP`` or ``IndexIVFFlat``, of the kind
    the sidecar names, and a sidecar without ``codes``."""
    import faiss

    from brain.index import vectors

    sidecar = json.loads((directory / vectors.SIDECAR_FILE).read_text())
    store = IndexStore.open(directory, create=False)
    try:
        dim = int(store.get_meta("dim") or 0)
        ids, stored = vectors._stored_vectors(store, None, dim)
        version, index_id = store.vectors_version(), store.index_id()
    finally:
        store.close()
    if sidecar["kind"] == "flat":
        base = faiss.IndexIDMap2(faiss.IndexFlatIP(dim))
        base.add_with_ids(stored, ids)
    else:
        lists = max(1, min(int(2 * len(ids) ** 0.5), len(ids) // 39))
        base = faiss.IndexIVFFlat(faiss.IndexFlatIP(dim), dim, lists, faiss.METRIC_INNER_PRODUCT)
        base.train(stored)
        base.add_with_ids(stored, ids)
        base.nprobe = vectors.IVF_NPROBE
    old = vectors.VectorIndex(base, dim, version, index_id)
    assert old.codes == "float32"
    old.save(directory)
    written = json.loads((directory / vectors.SIDECAR_FILE).read_text())
    del written["codes"]
    (directory / vectors.SIDECAR_FILE).write_text(json.dumps(written))


def index_db_before(directory: Path, migration: str) -> sqlite3.Connection:
    """A new index database in ``directory`` (made), migrated up to just before ``migration``:
    an index an older brain left, for the tests of that migration. Autocommit: BEGIN by hand."""
    from brain.index.schema import INDEX_MIGRATIONS
    from brain.migrations import Migrations

    directory.mkdir(parents=True, exist_ok=True)
    conn = sqlite3.connect(directory / "index.db", isolation_level=None)
    older = Migrations("index")
    names = [step[0] for step in INDEX_MIGRATIONS.steps]
    older.steps = INDEX_MIGRATIONS.steps[: names.index(migration)]
    older.apply(conn)
    return conn


def as_before_m021(db: Path) -> None:
    """Put an index back as a brain from before m021 left it: no searched columns, its BM25
    indexes over the text as stored, m021 not applied (the other migrations of it kept). A test
    emulating an index from before an older migration calls this first."""
    from brain.index.schema import INDEX_MIGRATIONS
    from brain.migrations import Migrations

    older = Migrations("index")
    names = [step[0] for step in INDEX_MIGRATIONS.steps]
    older.steps = INDEX_MIGRATIONS.steps[: names.index("m021_search_text")]
    before = sqlite3.connect(":memory:", isolation_level=None)
    older.apply(before)
    made = ("chunks_fts_source", "chunk_history_fts")  # first: the triggers name them
    triggers = ("chunks_fts_delete", "chunks_fts_title", "postings_log_title", "postings_log_chunk_update")
    triggers += ("chunk_history_fts_insert", "chunk_history_fts_delete")
    old = dict(
        before.execute(f"SELECT name, sql FROM sqlite_master WHERE name IN ({','.join('?' * 8)})", made + triggers)
    )
    before.close()
    conn = sqlite3.connect(db, isolation_level=None)
    conn.execute("BEGIN")
    for name in (*triggers, "chunk_history_fts_update"):
        conn.execute(f"DROP TRIGGER {name}")
    conn.execute("DROP VIEW chunks_fts_source")
    conn.execute("DROP VIEW chunk_history_fts_source")
    conn.execute("DROP TABLE chunk_history_fts")
    for table, column in (
        ("notes", "search_title"),
        ("chunks", "search_heading"),
        ("chunks", "search_text"),
        ("chunk_history", "search_title"),
        ("chunk_history", "search_heading"),
        ("chunk_history", "search_text"),
    ):
        conn.execute(f"ALTER TABLE {table} DROP COLUMN {column}")
    for name in made + triggers:
        conn.execute(old[name])
    for table in ("chunks_fts", "chunk_history_fts"):
        conn.execute(f"INSERT INTO {table} ({table}) VALUES ('rebuild')")
    # m021 runs again on opening, and those after it (they build on what it makes)
    conn.execute(
        f"DELETE FROM _migrations WHERE name IN ({','.join('?' * len(names[names.index('m021_search_text') :]))})",
        names[names.index("m021_search_text") :],
    )
    conn.execute("COMMIT")
    conn.close()


def as_before_m022(db: Path) -> None:
    """Put an index back as a brain from before m022 left it: every chunk's BM25 row holding its
    note's title, m022 not applied."""
    from brain.index.schema import INDEX_MIGRATIONS
    from brain.migrations import Migrations

    older = Migrations("index")
    names = [step[0] for step in INDEX_MIGRATIONS.steps]
    older.steps = INDEX_MIGRATIONS.steps[: names.index("m022_title_in_first_chunks")]
    before = sqlite3.connect(":memory:", isolation_level=None)
    older.apply(before)
    made = ("chunks_fts_source", "chunks_fts_delete", "chunks_fts_title", "postings_log_title")
    old = dict(before.execute(f"SELECT name, sql FROM sqlite_master WHERE name IN ({','.join('?' * 4)})", made))
    before.close()
    conn = sqlite3.connect(db, isolation_level=None)
    conn.execute("BEGIN")
    for name in made[1:]:
        conn.execute(f"DROP TRIGGER {name}")
    conn.execute("DROP VIEW chunks_fts_source")
    for name in made:
        conn.execute(old[name])
    conn.execute("INSERT INTO chunks_fts (chunks_fts) VALUES ('rebuild')")
    conn.execute("DELETE FROM _migrations WHERE name = 'm022_title_in_first_chunks'")
    conn.execute("COMMIT")
    conn.close()


def close_old_index_with_a_past_chunk(conn: sqlite3.Connection, note_id: int, vector: bytes) -> None:
    """Give an index ``index_db_before`` made (in a transaction) one past chunk of ``note_id``
    with this vector blob and vector files at version 7, then commit and close it: the tests
    of the migrations that convert stored vectors open it and look at both tables."""
    conn.execute(
        "INSERT INTO chunk_history (note_id, hash, ordinal, title, text, vector) VALUES (?, 'old', 0, 'Kiln', 'glaze', ?)",
        (note_id, vector),
    )
    conn.execute("INSERT INTO meta (key, value) VALUES ('vectors_version', '7')")
    conn.execute("COMMIT")
    conn.close()


class WriterRace:
    """A thread that commits ``write(writer, rng)`` in a transaction of its own store, again and
    again, until ``stop``; ``commits`` counts them, ``failures`` holds what it raised."""

    def __init__(self, directory: Path, write: Callable[[IndexStore, random.Random], None]):
        self.commits = 0
        self.failures: list[BaseException] = []
        self._stop = threading.Event()
        self._thread = threading.Thread(target=self._run, args=(directory, write))

    def _run(self, directory: Path, write: Callable[[IndexStore, random.Random], None]) -> None:
        writer = IndexStore.open(directory, create=False)
        try:
            rng = random.Random(3)
            while not self._stop.is_set():
                with writer.transaction():
                    write(writer, rng)
                self.commits += 1
        except BaseException as exc:
            self.failures.append(exc)
        finally:
            writer.close()

    def stop(self) -> None:
        self._stop.set()
        self._thread.join()


def search_while_writing(
    race: WriterRace,
    search: Callable[[Any], list[tuple[int, float]]],
    queries: Sequence[Any],
    *,
    searches: int,
    commits: int,
) -> None:
    """Run ``search`` over ``queries``, again and again, while ``race`` writes: each answer
    holds a chunk once, best first. Stops after ``searches`` searches and ``commits`` of the
    writer's commits, when the writer failed, or after a minute."""
    deadline = time.monotonic() + 60
    for searched, query in enumerate(itertools.cycle(queries), start=1):
        hits = search(query)
        ids = [c for c, _ in hits]
        assert len(ids) == len(set(ids))
        assert [s for _, s in hits] == sorted((s for _, s in hits), reverse=True)
        if (searched >= searches and race.commits >= commits) or race.failures or time.monotonic() > deadline:
            return


@contextlib.contextmanager
def writer_racing(directory: Path, write: Callable[[IndexStore, random.Random], None]) -> Iterator[WriterRace]:
    """``WriterRace`` running for the block, stopped and joined however it ends."""
    race = WriterRace(directory, write)
    race._thread.start()
    try:
        yield race
    finally:
        race.stop()


def index_then_moment(root: Path) -> float:
    """Index, then return a moment strictly after the run and before the next one (for --as-of)."""
    index_vault(root, progress=False)
    time.sleep(0.01)
    moment = time.time()
    time.sleep(0.01)
    return moment


# The toy vault's note ``edited_toy_vault`` rewrites.
DECISION = "Projects/Decision - Use Chroma.md"


def edited_toy_vault(vault: Path) -> dict[str, float]:
    """The toy vault indexed, then a note rewritten (``DECISION``), a note renamed (AI/Graph RAG.md)
    and one deleted (Cooking/Knife skills.md), indexed after each; the moments between, by name."""
    from conftest import write

    at = {"first": index_then_moment(vault)}
    write(
        vault,
        DECISION,
        "---\ndate: 2026-02-20\n---\n# Decision: use Chroma\n\nRollout plan: a canary in February, then all regions. "
        "[[Brain MVP]] [[Graph RAG]]\n",
    )
    at["rewritten"] = index_then_moment(vault)
    (vault / "AI/Graph RAG.md").rename(vault / "AI/GraphRAG.md")
    at["renamed"] = index_then_moment(vault)
    (vault / "Cooking/Knife skills.md").unlink()
    at["deleted"] = index_then_moment(vault)
    return at


@contextlib.contextmanager
def texts_folded_by(migration: str, monkeypatch: Any) -> Iterator[list[str | None]]:
    """The texts migration ``migration``'s SQL folds (each replace() call of its ё folding, None
    for a NULL column) while an index is opened in the block: how much of the index a migration
    reads, counted rather than timed. The migrations before and after it count apart."""
    import brain.index.store_open as store_open
    from brain.index.schema import INDEX_MIGRATIONS

    folded: list[str | None] = []
    inside: list[bool] = []

    def replace(text: str | None, old: str, new: str) -> str | None:
        if inside:
            folded.append(text)
        return None if text is None else text.replace(old, new)

    connect = store_open.connect

    def counting(*args: Any, **kwargs: Any) -> sqlite3.Connection:
        conn = connect(*args, **kwargs)
        conn.create_function("replace", 3, replace, deterministic=True)
        return conn

    steps = list(INDEX_MIGRATIONS.steps)
    at = [name for name, _ in steps].index(migration)
    migrate = steps[at][1]

    def counted(conn: sqlite3.Connection) -> None:
        inside.append(True)
        try:
            migrate(conn)
        finally:
            inside.clear()

    steps[at] = (migration, counted)
    with monkeypatch.context() as patch:
        patch.setattr(INDEX_MIGRATIONS, "steps", steps)
        patch.setattr(store_open, "connect", counting)
        yield folded


def modes_binding_prefix() -> list[str]:
    """A command prefix for a process that file modes bind: as root (which ignores them), ``setpriv``
    without CAP_DAC_OVERRIDE and CAP_DAC_READ_SEARCH; the test skips where that cannot be had."""
    if os.name == "nt":
        pytest.skip("POSIX file modes")
    if os.geteuid() != 0:
        return []
    setpriv = shutil.which("setpriv")
    if setpriv is None:
        pytest.skip("running as root without setpriv: file modes cannot bind brain")
    caps = "-dac_override,-dac_read_search"
    return [setpriv, f"--bounding-set={caps}", f"--inh-caps={caps}"]
