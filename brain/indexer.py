"""``brain index``: bring a vault's index up to date, embedding only what changed.

The plan: walk the vault; a note whose size and mtime match its row is unchanged without
being read; otherwise its content hash decides (same bytes: only the stat is refreshed; a new
path whose bytes match a deleted note: a rename, moved without re-embedding). Changed and new
notes are parsed, chunked and embedded in batches, and each batch is committed in one SQLite
transaction with its vectors, so an interrupted run keeps what it finished and the next run
does the rest. Links are re-resolved once at the end; the FAISS file is brought level last.

``--rebuild`` builds a new index beside the old one (``<index folder>.rebuild``), which keeps
answering until the new one is complete; then the two folders are swapped, database, WAL
and FAISS file together. A rebuild that stops (Ctrl-C, kill -9, a model that cannot load)
changes nothing the readers see, and the next ``--rebuild`` resumes it.
"""

from __future__ import annotations

import contextlib
import hashlib
import json
import logging
import os
import shutil
import sqlite3
import sys
import time
from collections.abc import Callable, Iterator
from dataclasses import asdict, dataclass, field
from pathlib import Path

from . import config
from .chunking import chunk_body, embedding_text
from .embed import Embedder, load_embedder
from .errors import BrainError, IndexMismatchError
from .links import Link, Resolver, is_attachment
from .notes import Note, content_hash, parse_note
from .store import INDEX_FILE, IndexStore, SkipRecord, dumps, index_errors
from .vault import IGNORE_FILE, Skipped, VaultFile, load_ignore, max_note_bytes, read_note_bytes, resolve_vault, scan

log = logging.getLogger("brain")

CHUNKS_PER_BATCH = 1024  # chunks embedded and committed together
REBUILD_SUFFIX = ".rebuild"  # the folder a rebuild fills, beside the index folder
REBUILD_MARKER = "rebuild.json"  # in that folder while it is a rebuild in progress
RETIRED_SUFFIX = ".retired"  # where the old index waits to be deleted when no atomic swap exists


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
    moved_aside: str | None = None  # --rebuild over a damaged index: where the damaged one went

    def as_dict(self) -> dict:
        return asdict(self)


@dataclass
class _Plan:
    unchanged: list[VaultFile]
    candidates: list[tuple[VaultFile, int | None]]  # (file, existing note id or None)
    deleted: dict[str, int]  # path -> note id
    skipped: list[Skipped]
    stats: dict[str, tuple[int, int]]  # content skips: path -> (size, mtime_ns) when read
    ignore_warnings: list[str] = field(default_factory=list)  # what was wrong with .brainignore


class VaultLocked(BrainError):
    pass


def open_store(vault: Path) -> IndexStore:
    return IndexStore.open(config.index_dir(vault))


def lock_path(directory: Path) -> Path:
    """The vault's writer lock: beside the index folder, so it survives the rebuild swap."""
    return directory.with_name(directory.name + ".lock")


@contextlib.contextmanager
def vault_lock(target: IndexStore | Path, *, wait: bool = False) -> Iterator[None]:
    """One writer per vault index, rebuilds included. Readers never need it (SQLite WAL,
    a FAISS cache checked against the database, folders swapped whole)."""
    directory = target.directory if isinstance(target, IndexStore) else target
    try:
        import fcntl
    except ImportError:  # Windows: SQLite's own locking still keeps the data consistent
        yield
        return
    directory.parent.mkdir(parents=True, exist_ok=True)
    handle = open(lock_path(directory), "a")
    try:
        try:
            fcntl.flock(handle, fcntl.LOCK_EX | (0 if wait else fcntl.LOCK_NB))
        except BlockingIOError as exc:
            raise VaultLocked(f"another `brain index` is running on this vault ({directory})") from exc
        yield
    finally:
        handle.close()


def _plan(root: Path, store: IndexStore) -> _Plan:
    ignore = load_ignore(root)
    files, skipped = scan(root, ignore)
    rows = store.note_rows()
    held = store.skipped_for_content()
    limit = max_note_bytes()
    unchanged, candidates, stats = [], [], {}
    for file in files:
        row = rows.get(file.path)
        if row is not None and row.size == file.size and row.mtime_ns == file.mtime_ns:
            unchanged.append(file)
        elif row is None and _still_skipped(file, held.get(file.path), limit):
            record = held[file.path]
            skipped.append(Skipped(file.path, record.reason, record.detail))
            stats[file.path] = (file.size, file.mtime_ns)
        else:
            candidates.append((file, row.id if row else None))
    present = {f.path for f in files}
    deleted = {path: row.id for path, row in rows.items() if path not in present}
    skipped.sort(key=lambda s: s.path)
    return _Plan(unchanged, candidates, deleted, skipped, stats, ignore.warnings)


def _still_skipped(file: VaultFile, record: SkipRecord | None, limit: int) -> bool:
    """A file skipped for its content, unchanged since, that would be skipped again: not read,
    not pending. A raised size limit or a fixed permission brings it back."""
    if record is None or (record.size, record.mtime_ns) != (file.size, file.mtime_ns):
        return False
    if record.reason == "too-large":
        return file.size > limit
    if record.reason == "unreadable":  # chmod does not touch the mtime: look again
        try:
            os.close(os.open(file.abspath, os.O_RDONLY))
        except OSError:
            return True
        return False
    return record.reason == "binary"


def pending_changes(root: Path, store: IndexStore) -> int:
    """How many notes changed (new, changed or deleted) since the last index, by size and mtime."""
    plan = _plan(root, store)
    return len(plan.candidates) + len(plan.deleted)


def check_model(store: IndexStore, model_name: str) -> None:
    built_with = store.get_meta("model")
    if built_with and built_with != model_name:
        raise IndexMismatchError(
            f"this vault's index was built with the model {built_with!r}, but BRAIN_EMBED_MODEL is "
            f"{model_name!r}; vectors of two models cannot be mixed. Run `brain index --rebuild` to "
            f"re-embed everything with {model_name!r}, or set BRAIN_EMBED_MODEL={built_with}"
        )


def index_vault(
    vault: str | os.PathLike[str] | None,
    *,
    model_name: str | None = None,
    embedder: Embedder | None = None,
    rebuild: bool = False,
    progress: bool = True,
    load: Callable[[str], Embedder] = load_embedder,
) -> IndexReport:
    """Index ``vault`` incrementally; returns what was done. The model loads only if needed.

    ``rebuild``: build a new index beside the old one and swap it in when complete.
    """
    started = time.perf_counter()
    root = resolve_vault(vault)
    model_name = model_name or (embedder.name if embedder else config.embed_model_name())
    directory = config.index_dir(root)
    with index_errors(directory, root), vault_lock(directory):
        if rebuild:
            report = _rebuild(root, directory, model_name, embedder, load, progress)
        else:
            _remove_leftovers(directory)
            store = IndexStore.open(directory)
            try:
                check_model(store, model_name)
                report = _index_into(root, store, model_name, embedder, load, progress)
            finally:
                store.close()
    report.seconds = round(time.perf_counter() - started, 3)
    return report


def _index_into(root, store, model_name, embedder, load, progress) -> IndexReport:
    report = IndexReport(vault=str(root), model=model_name)
    _Run(root, store, report, model_name, embedder, load, progress).run()
    counts = store.counts()
    report.notes, report.chunks = counts["notes"], counts["chunks"]
    report.links = {k: counts[k] for k in ("resolved", "dangling", "attachment")}
    return report


# ----- rebuild beside, then swap ------------------------------------------------------------


def rebuild_dir(directory: Path) -> Path:
    return directory.with_name(directory.name + REBUILD_SUFFIX)


def _rebuild(root, directory, model_name, embedder, load, progress) -> IndexReport:
    damage = index_damage(directory)
    if damage:
        log.warning("the index database %s is damaged (%s); building a new one beside it",
                    directory / INDEX_FILE, damage)
    staging = rebuild_dir(directory)
    with index_errors(staging, root):  # a failure here is about the new index, not the old
        for attempt in (1, 2):
            store, resumed = _open_staging(staging, model_name)
            try:
                report = _index_into(root, store, model_name, embedder, load, progress)
                store.checkpoint()
            except IndexMismatchError:
                store.close()
                if not resumed or attempt == 2:
                    raise
                # Same model name, other vectors (the model folder changed): start over.
                log.warning("the interrupted rebuild in %s holds other vectors; starting it over", staging)
                shutil.rmtree(staging)
                continue
            except BaseException:
                _stopped(store, staging)
                raise
            store.close()
            break
    report.moved_aside = _swap_in(staging, directory, damage)
    if report.moved_aside:
        # In the report, not the log: the CLI says it once, even with --json and --quiet.
        message = (f"the damaged index ({damage}) was moved to {report.moved_aside}; "
                   "delete it when you no longer need it")
        report.warnings.append({"path": report.moved_aside, "message": message})
    return report


def _open_staging(staging: Path, model_name: str) -> tuple[IndexStore, bool]:
    """The rebuild folder: resumed when an interrupted rebuild with this model left it, else new."""
    marker = staging / REBUILD_MARKER
    if staging.exists():
        try:
            resumable = json.loads(marker.read_text(encoding="utf-8")).get("model") == model_name
        except (OSError, ValueError, AttributeError):
            resumable = False  # not a rebuild in progress: the old index of a swap cut short
        if resumable:
            try:
                store = IndexStore.open(staging)
                store.counts()
            except sqlite3.DatabaseError as exc:
                log.warning("the interrupted rebuild in %s is unreadable (%s); starting over", staging, exc)
            else:
                log.info("resuming the interrupted rebuild in %s", staging)
                return store, True
        shutil.rmtree(staging)
    staging.mkdir(parents=True)
    marker.write_text(json.dumps({"model": model_name, "started": time.time()}), encoding="utf-8")
    return IndexStore.open(staging), False


def _stopped(store: IndexStore | None, staging: Path) -> None:
    """A rebuild that stops keeps what it embedded for the next ``--rebuild``, unless nothing."""
    try:
        done = store.counts()["notes"] if store is not None else 0
    except sqlite3.Error:
        done = 0
    if store is not None:
        store.close()
    if done:
        log.warning("the rebuild stopped after %d notes; the previous index still answers, and "
                    "`brain index --rebuild` resumes it", done)
    else:
        shutil.rmtree(staging, ignore_errors=True)


def index_damage(directory: Path) -> str | None:
    """Why the index database in ``directory`` cannot be trusted, or None (also when absent)."""
    path = directory / INDEX_FILE
    if not path.exists():
        return None
    try:
        conn = sqlite3.connect(f"{path.absolute().as_uri()}?mode=ro", uri=True, timeout=5)
        try:
            row = conn.execute("PRAGMA quick_check(1)").fetchone()
        finally:
            conn.close()
    except sqlite3.OperationalError:  # busy, or not readable here: no evidence of damage
        return None
    except sqlite3.DatabaseError as exc:
        return str(exc)
    verdict = str(row[0]) if row else "no answer from the integrity check"
    return None if verdict == "ok" else " ".join(verdict.split())[:200]


def _swap_in(staging: Path, directory: Path, damage: str | None) -> str | None:
    """Put the completed rebuild in the index folder's place; the old folder goes whole (its
    database with its WAL and FAISS file). Readers that hold the old database open keep
    reading it; new readers open the new one. Returns where a damaged index was moved."""
    moved = None
    try:
        if not directory.exists():
            os.rename(staging, directory)
        elif not damage and _exchange(staging, directory):  # atomic: there is always an index to open
            shutil.rmtree(staging, ignore_errors=True)
        else:
            # A damaged index is kept for the user, under a name nothing takes for an index;
            # a sound one waits under the retired name until the new one is in place.
            aside = _damaged_name(directory) if damage else directory.with_name(directory.name + RETIRED_SUFFIX)
            if not damage:
                shutil.rmtree(aside, ignore_errors=True)
            os.rename(directory, aside)
            try:
                os.rename(staging, directory)
            except OSError:
                os.rename(aside, directory)
                raise
            if damage:
                moved = aside
            else:
                shutil.rmtree(aside, ignore_errors=True)
    except OSError as exc:  # e.g. Windows, where a folder with open files cannot be renamed
        raise BrainError(
            f"the rebuilt index is complete in {staging} but could not take the place of {directory} "
            f"({exc.strerror or exc}); stop other brain processes on this vault and run "
            "`brain index --rebuild` again: it resumes from there"
        ) from exc
    (directory / REBUILD_MARKER).unlink(missing_ok=True)
    _fsync_dir(directory.parent)
    return str(moved) if moved else None


def _damaged_name(directory: Path) -> Path:
    stamp = time.strftime("%Y%m%d-%H%M%S")
    candidate, n = directory.with_name(f"{directory.name}.damaged-{stamp}"), 1
    while candidate.exists():  # never over an earlier one the user has not looked at yet
        n += 1
        candidate = directory.with_name(f"{directory.name}.damaged-{stamp}-{n}")
    return candidate


def _remove_leftovers(directory: Path) -> None:
    """What a swap cut short leaves: the old index under the rebuild name (without its marker)
    or under the retired name. A rebuild in progress (marker present) is left for --rebuild."""
    staging = rebuild_dir(directory)
    if staging.exists() and not (staging / REBUILD_MARKER).exists():
        shutil.rmtree(staging, ignore_errors=True)
    shutil.rmtree(directory.with_name(directory.name + RETIRED_SUFFIX), ignore_errors=True)


def _exchange(a: Path, b: Path) -> bool:
    """Swap two paths atomically where the system can (Linux renameat2, macOS renamex_np)."""
    import ctypes

    try:
        libc = ctypes.CDLL(None, use_errno=True)
        if sys.platform.startswith("linux") and hasattr(libc, "renameat2"):
            at_fdcwd, rename_exchange = -100, 2
            fn = libc.renameat2
            fn.argtypes = [ctypes.c_int, ctypes.c_char_p, ctypes.c_int, ctypes.c_char_p, ctypes.c_uint]
            fn.restype = ctypes.c_int
            return fn(at_fdcwd, os.fsencode(a), at_fdcwd, os.fsencode(b), rename_exchange) == 0
        if sys.platform == "darwin" and hasattr(libc, "renamex_np"):
            rename_swap = 2
            fn = libc.renamex_np
            fn.argtypes = [ctypes.c_char_p, ctypes.c_char_p, ctypes.c_uint]
            fn.restype = ctypes.c_int
            return fn(os.fsencode(a), os.fsencode(b), rename_swap) == 0
    except (OSError, AttributeError):
        pass
    return False  # e.g. a file system without exchange (EINVAL): the caller renames twice


def _fsync_dir(path: Path) -> None:
    """Make the renames durable (POSIX; a no-op where folders cannot be opened)."""
    try:
        fd = os.open(path, os.O_RDONLY)
    except OSError:
        return
    try:
        os.fsync(fd)
    except OSError:
        pass
    finally:
        os.close(fd)


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
        for message in plan.ignore_warnings:
            self._warn(IGNORE_FILE, message)
        self.report.unchanged = len(plan.unchanged)
        skipped = list(plan.skipped)
        stats = dict(plan.stats)
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
                    stats[skip.path] = (file.size, file.mtime_ns)
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
            self.store.replace_skipped((s.path, s.reason, s.detail, *stats.get(s.path, (None, None))) for s in skipped)
            self.store.set_meta("indexed_at", time.time())  # a run completed: "no notes" is an answer now
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
        from .vectors import VectorIndex, load_current

        version, index_id = self.store.vectors_version(), self.store.index_id()
        dim = self.store.get_meta("dim")
        if dim is None:
            return  # nothing was ever embedded
        if VectorIndex.saved_matches(self.store.directory, version, index_id, int(dim)):
            return  # level already: a no-op run never imports faiss
        existing, _ = VectorIndex.load_file(self.store.directory)
        if existing is not None and (existing.index_id, existing.dim) == (index_id, int(dim)) \
                and existing.version == self.start_version:
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
    rebuild: dict | None = None  # a `--rebuild` running or stopped: {"path", "model", "notes"}

    def as_dict(self) -> dict:
        return asdict(self)


def vault_status(vault: str | os.PathLike[str] | None) -> VaultStatus:
    """What is indexed, what changed since (new, changed, deleted), and what is skipped.

    Read-only: before any `brain index` nothing is created, and a read-only brain home is read.
    """
    root = resolve_vault(vault)
    directory = config.index_dir(root)
    with index_errors(directory, root):
        if (directory / INDEX_FILE).exists():
            store = IndexStore.open(directory, create=False, readonly_ok=True)
        else:
            store = IndexStore.in_memory(directory)
        try:
            return _status(root, store)
        finally:
            store.close()


def _status(root: Path, store: IndexStore) -> VaultStatus:
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
    warnings = [{"path": IGNORE_FILE, "message": message} for message in plan.ignore_warnings] + [
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
        rebuild=_rebuild_status(store.directory),
    )


def _rebuild_status(directory: Path) -> dict | None:
    """A rebuild running or stopped beside the index: its folder, model and notes so far."""
    staging = rebuild_dir(directory)
    try:
        model = json.loads((staging / REBUILD_MARKER).read_text(encoding="utf-8")).get("model")
    except (OSError, ValueError, AttributeError):
        return None
    notes = None
    try:
        conn = sqlite3.connect(f"{(staging / INDEX_FILE).absolute().as_uri()}?mode=ro", uri=True, timeout=1)
        try:
            notes = conn.execute("SELECT count(*) FROM notes").fetchone()[0]
        finally:
            conn.close()
    except sqlite3.Error:
        pass
    return {"path": str(staging), "model": model, "notes": notes}
