"""The lexical lane's own postings (``brain/index/postings.py``) against FTS5's bm25().

Whatever the postings answer must be FTS5's answer: the same chunks, the same scores (to the
bit, here: the same formula in the same order of operations), ties in the same order; through
edits, deletes, renames and title changes since the base was built; and wherever they cannot
answer exactly (no base, a stale or damaged one, a kill between the file's rename and the
commit that names it, an index restored from a backup, a term the mimic tokenizes otherwise,
weights that do not sum exactly, a trigram index) the search is FTS5's.
"""

from __future__ import annotations

import logging
import os
import random
import shutil
import struct
import sys
import time
from collections.abc import Callable
from pathlib import Path

import pytest
from conftest import REAL_VAULTS, write
from index_helpers import CheapEmbedder, environ, index_into

from brain.child_process import python_module_command
from brain.index import background, indexer, postings, postings_child, postings_due
from brain.index.files import INDEX_FILE
from brain.index.store import IndexStore
from brain.recall import lexical

WORDS = "amber basil cedar delta ember fjord garnet harbor island jasper".split()
# What the mimic must get right, or leave to FTS5: Cyrillic (ё is folded to е in the index),
# accents, ß, underscores, digits, CJK, emoji, a combining accent, dotted İ.
ODD = [
    "ёлка",
    "Ёжик",
    "café",
    "Ruairí",
    "Straße",
    "wpa_supplicant",
    "v2",
    "42",
    "日本語",
    "emoji🙂word",
    "a\u0301b",
    "İstanbul",
    "naïve",
    "Ωmega",
]
WEIGHTS = [(4.0, 2.0, 1.0), (1.0, 1.0, 1.0), (0.0, 1.0, 2.0), (-1.0, 1.0, 1.0), (2.5, 0.75, 1.0)]


def _vault(vault: Path, seed: int = 7, notes: int = 160) -> None:
    rng = random.Random(seed)
    for i in range(notes):
        sections = []
        for s in range(rng.randint(1, 4)):
            words = [rng.choice(WORDS) for _ in range(rng.randint(0, 12))]
            words += ["filler"] * rng.randint(0, 30)
            if rng.random() < 0.3:
                words.append(rng.choice(ODD))
            if i % 11 == 0:
                words = ["amber basil"]  # twins: equal scores, ordered by id
            rng.shuffle(words)
            heading = rng.choice(WORDS + ODD) if s else "intro"
            sections.append(f"## {heading} {s}\n\n{' '.join(words)}\n")
        title = f"{rng.choice(WORDS)} {rng.choice(ODD)} {i}" if i % 5 == 0 else f"n{i}"
        write(vault, f"d{i % 4}/{title}.md", f"# {title}\n\n" + "\n".join(sections))


def _queries(seed: int = 3, count: int = 40) -> list[str]:
    rng = random.Random(seed)
    pool = WORDS + ODD + ["filler", "intro", "nothing-here"]
    return [" ".join(rng.sample(pool, rng.randint(1, 5))) for _ in range(count)]


@pytest.fixture
def index(tmp_path, monkeypatch) -> tuple[Path, Path, Path]:
    monkeypatch.setenv("BRAIN_LEXICAL_POSTINGS", "1")  # from one chunk: every test index has postings
    vault, home = tmp_path / "vault", tmp_path / "home"
    _vault(vault)
    _, directory = index_into(home, vault, CheapEmbedder())
    return vault, home, directory


def _compare(directory: Path, monkeypatch, queries: list[str] | None = None) -> int:
    """Every query's search with the postings and with FTS5 alone: equal. Returns how many the
    postings answered."""
    answered = 0
    store = IndexStore.open_snapshot(directory)
    try:
        for query in queries or _queries():
            expression = lexical.match_expression(store, query)
            if expression is None:
                continue
            words = lexical.fts_terms(query, store.fts_tokenizer())
            counted = postings.chunk_counts(store, words)
            if counted is not None:  # each word's chunks as FTS5 counts them
                assert counted == _fts5_counts(store, words), query
                answered += 1
            for weights in WEIGHTS:
                for limit in (1, 7, 50, 1000):
                    monkeypatch.setenv("BRAIN_LEXICAL_POSTINGS", "1")
                    terms = [t.replace('""', '"') for t in expression[1:-1].split('" OR "')]
                    direct = postings.search(store, terms, weights, limit)
                    ours = store.fts_search(expression, weights, limit)
                    monkeypatch.setenv("BRAIN_LEXICAL_POSTINGS", "off")
                    theirs = store.fts_search(expression, weights, limit)
                    assert [h[0] for h in ours] == [h[0] for h in theirs], (query, weights, limit)
                    assert all(a[1] == pytest.approx(b[1], rel=1e-9, abs=1e-12) for a, b in zip(ours, theirs))
                    if direct is not None:
                        assert direct == ours
                        answered += 1
    finally:
        store.close()
        monkeypatch.setenv("BRAIN_LEXICAL_POSTINGS", "1")
    return answered


def _fts5_counts(store: IndexStore, words: list[str]) -> dict[str, int]:
    """fts5vocab's own count of the chunks holding each word, asked directly."""
    store.conn.execute("CREATE VIRTUAL TABLE IF NOT EXISTS temp.v USING fts5vocab(main, 'chunks_fts', 'row')")
    return {w: (store.conn.execute("SELECT doc FROM temp.v WHERE term = ?", (w,)).fetchone() or [0])[0] for w in words}


def test_same_hits_and_scores_as_fts5(index, monkeypatch):
    _, _, directory = index
    assert (directory / postings_due.FILE).stat().st_mode & 0o077 == 0  # the vault's words: the owner's alone
    assert _compare(directory, monkeypatch) > 200


def test_odd_words_the_mimic_gets_wrong_are_left_to_fts5(index, monkeypatch):
    _, _, directory = index
    base = postings.load(directory)
    assert base is not None
    # unicode61 keeps "emoji🙂word" whole and "a\u0301b" as "ab"; the mimic splits them
    assert {"emoji", "word"} <= base.excluded
    store = IndexStore.open_snapshot(directory)
    try:
        assert postings.search(store, ["emoji🙂word"], (4.0, 2.0, 1.0), 10) is None
        assert postings.search(store, ["елка", "amber"], (4.0, 2.0, 1.0), 10) is not None  # ё held as е
        assert postings.search(store, ["straße", "ruairi", "supplicant"], (4.0, 2.0, 1.0), 10) is not None
    finally:
        store.close()


def test_inexact_weights_go_to_fts5(index):
    _, _, directory = index
    store = IndexStore.open_snapshot(directory)
    try:
        assert postings.search(store, ["amber", "basil"], (0.3, 1.0, 1.0), 10) is None
        assert postings.search(store, ["amber", "basil"], (0.5, 1.0, 1.0), 10) is not None
    finally:
        store.close()


def _edit(vault: Path, seed: int) -> None:
    """Words changed, notes deleted, renamed (a new title), re-titled, added."""
    rng = random.Random(seed)
    files = sorted(vault.rglob("*.md"))
    for path in rng.sample(files, 6):
        path.write_text(path.read_text(encoding="utf-8") + f"\n{rng.choice(WORDS)} cedar cedar {rng.choice(ODD)}\n")
    for path in rng.sample([f for f in files if f.exists()], 3):
        path.unlink()
    for path in [f for f in files if f.exists()][:3]:
        path.rename(path.with_name(f"renamed {rng.choice(WORDS)} {path.stem}.md"))
    for i in range(4):
        write(vault, f"new/new {i} {rng.choice(WORDS)}.md", f"# fresh {i}\n\n{' '.join(rng.sample(WORDS, 4))}\n")


def test_edits_since_the_base_are_scored_as_fts5_does(index, monkeypatch):
    vault, home, directory = index
    nonce = postings.load(directory).nonce
    for seed in range(3):
        _edit(vault, seed)
        index_into(home, vault, CheapEmbedder())
        assert postings.load(directory).nonce == nonce  # few changes: the same base, and the log
        assert _compare(directory, monkeypatch) > 200
    store = IndexStore.open(directory)
    try:
        assert store.conn.execute("SELECT count(*) FROM postings_log").fetchone()[0] > 0
        monkeypatch.setattr(postings_due, "REBUILD_MIN", 0)
        monkeypatch.setattr(postings_due, "REBUILD_SHARE", 0.0)
        with postings_due.refreshing(store, vault):  # BRAIN_LEXICAL_POSTINGS=1: from one chunk
            pass
        background.wait_for_all(60)  # built in the background
        assert store.conn.execute("SELECT count(*) FROM postings_log").fetchone()[0] == 0
    finally:
        store.close()
    assert postings.load(directory).nonce != nonce
    assert _compare(directory, monkeypatch) > 200


def test_chunks_tokenized_by_an_earlier_state_stay_scored_when_another_thread_clears_the_cache(index, monkeypatch):
    """A base keeps the chunks changed since it was built, tokenized, for the next state (a
    server's new snapshot); a server's other thread may clear that cache while a state takes
    from it. A chunk found there and then cleared was left out: dropped from the base's
    postings and never scored, so the search missed it."""
    vault, home, directory = index
    _edit(vault, 0)
    index_into(home, vault, CheapEmbedder())
    assert _compare(directory, monkeypatch) > 200  # the changed chunks are now in the base's cache
    _edit(vault, 1)
    index_into(home, vault, CheapEmbedder())
    base = postings.load(directory)
    assert base is not None
    rows = IndexStore.fts_source_rows

    def cleared_meanwhile(store, chunk_ids):
        for _, shared in postings._bases.values():
            if shared is not None:
                shared.changed.clear()
        return rows(store, chunk_ids)

    monkeypatch.setattr(IndexStore, "fts_source_rows", cleared_meanwhile)
    assert _compare(directory, monkeypatch) > 200


def test_a_title_changed_in_place_is_logged(index, monkeypatch):
    """A note whose title changes keeps its chunks' ids: they must still be scored afresh."""
    vault, _, directory = index
    path = next(p for p in sorted(vault.rglob("*.md")) if p.stem.startswith("n"))
    store = IndexStore.open(directory)
    try:
        note_id, chunks = store.conn.execute(
            "SELECT n.id, count(*) FROM notes n JOIN chunks c ON c.note_id = n.id WHERE n.path = ? GROUP BY n.id",
            (path.relative_to(vault).as_posix(),),
        ).fetchone()
        with store.transaction():
            store.conn.execute("UPDATE notes SET title = 'jasper jasper jasper' WHERE id = ?", (note_id,))
        logged = store.conn.execute("SELECT count(*) FROM postings_log").fetchone()[0]
    finally:
        store.close()
    assert logged == chunks
    assert _compare(directory, monkeypatch, ["jasper", "jasper amber", "n1 jasper"]) > 0


def test_a_kill_between_rename_and_commit_means_fts5(index, monkeypatch, caplog):
    vault, home, directory = index
    _edit(vault, 11)
    index_into(home, vault, CheapEmbedder())

    class Killed(BaseException):
        pass

    real_rename = postings._rename_into_place

    def rename_then_die(*args, **kwargs):
        real_rename(*args, **kwargs)
        raise Killed  # the file is in place; the commit naming it never happens

    monkeypatch.setattr(postings, "_rename_into_place", rename_then_die)
    store = IndexStore.open(directory)
    try:
        with pytest.raises(Killed):
            postings.build(store)
    finally:
        store.close()
    monkeypatch.setattr(postings, "_rename_into_place", real_rename)
    store = IndexStore.open_snapshot(directory)
    try:
        with caplog.at_level(logging.INFO, logger="brain"):
            postings._warned.clear()
            assert postings.search(store, ["amber", "basil"], (4.0, 2.0, 1.0), 10) is None
        assert "not this index's state" in caplog.text
    finally:
        store.close()
    assert _compare(directory, monkeypatch) == 0  # all by FTS5, all the same
    index_into(home, vault, CheapEmbedder())  # the next pass builds a base again
    assert _compare(directory, monkeypatch) > 200


def test_an_index_restored_from_a_backup_is_not_read_with_a_newer_base(index, monkeypatch, tmp_path):
    vault, home, directory = index
    backup = tmp_path / "backup.db"
    store = IndexStore.open(directory)
    try:
        store.conn.execute("VACUUM INTO ?", (str(backup),))
        monkeypatch.setattr(postings_due, "REBUILD_MIN", 0)
        monkeypatch.setattr(postings_due, "REBUILD_SHARE", 0.0)
    finally:
        store.close()
    _edit(vault, 5)
    index_into(home, vault, CheapEmbedder())  # a new base, of the edited notes
    for suffix in ("-wal", "-shm"):
        (directory / (INDEX_FILE + suffix)).unlink(missing_ok=True)
    shutil.copyfile(backup, directory / INDEX_FILE)
    store = IndexStore.open_snapshot(directory)
    try:
        assert postings.search(store, ["amber", "basil"], (4.0, 2.0, 1.0), 10) is None
    finally:
        store.close()
    assert _compare(directory, monkeypatch) == 0


def test_a_damaged_file_is_not_read(index, monkeypatch):
    _, _, directory = index
    path = directory / postings_due.FILE
    data = bytearray(path.read_bytes())
    path.write_bytes(bytes(data[: len(data) // 2]))
    assert postings.load(directory) is None
    assert _compare(directory, monkeypatch) == 0


@pytest.mark.parametrize("length", [b"\xff" * 8, (10**12).to_bytes(8, "little"), (2**62).to_bytes(8, "little")])
def test_a_header_length_past_the_file_is_not_read(index, monkeypatch, length):
    """The header's length damaged (a flipped bit): an OverflowError or a MemoryError from
    load() failed every BM25 search, where a damaged file must mean FTS5."""
    _, _, directory = index
    path = directory / postings_due.FILE
    data = path.read_bytes()
    path.write_bytes(postings_due.MAGIC + length + data[len(postings_due.MAGIC) + 8 :])
    assert postings.load(directory) is None
    assert _compare(directory, monkeypatch, ["amber filler", "basil"]) == 0


@pytest.mark.parametrize("header", [b"[]", b'{"format": 1, "arrays": []}', b'{"format": 1, "arrays": {"doc_ids": 5}}'])
def test_a_header_of_another_shape_is_not_read(index, monkeypatch, header):
    _, _, directory = index
    (directory / postings_due.FILE).write_bytes(postings_due.MAGIC + len(header).to_bytes(8, "little") + header)
    assert postings.load(directory) is None
    assert _compare(directory, monkeypatch, ["amber filler", "basil"]) == 0


def test_postings_damaged_inside_fall_back_to_fts5(index, monkeypatch):
    """Chunk positions past the end (a file damaged after it was written): FTS5, no error."""
    _, _, directory = index
    base = postings.load(directory)
    assert base is not None
    offset, _, count = base.header["arrays"]["docs_text"]
    path = directory / postings_due.FILE
    data = bytearray(path.read_bytes())
    data[offset : offset + 4 * count] = b"\xff\xff\xff\x7f" * count
    path.write_bytes(bytes(data))
    store = IndexStore.open_snapshot(directory)
    try:
        assert postings.search(store, ["amber", "filler"], (4.0, 2.0, 1.0), 10) is None
    finally:
        store.close()
    assert _compare(directory, monkeypatch, ["amber filler", "basil"]) >= 0


def test_off_and_small_indexes_have_no_postings(tmp_path, monkeypatch):
    vault, home = tmp_path / "vault", tmp_path / "home"
    _vault(vault, notes=20)
    monkeypatch.setenv("BRAIN_LEXICAL_POSTINGS", "1")
    _, directory = index_into(home, vault, CheapEmbedder())
    assert (directory / postings_due.FILE).exists()
    monkeypatch.setenv("BRAIN_LEXICAL_POSTINGS", "off")
    index_into(home, vault, CheapEmbedder())
    assert not (directory / postings_due.FILE).exists()
    monkeypatch.delenv("BRAIN_LEXICAL_POSTINGS")  # the default: from 50,000 chunks
    index_into(home, vault, CheapEmbedder())
    assert not (directory / postings_due.FILE).exists()


def _assert_stamped(directory: Path) -> None:
    """The database names the base in the folder."""
    base = postings.load(directory)
    assert base is not None
    store = IndexStore.open_snapshot(directory)
    try:
        assert store.get_meta("postings_stamp") == base.nonce
    finally:
        store.close()


def _record_children(monkeypatch) -> list[postings_due._Child]:
    """The children building a base, as they are started."""
    started: list[postings_due._Child] = []
    real_start = postings_due._Child.start

    def start(store, **options):
        child = real_start(store, **options)
        if child is not None:
            started.append(child)
        return child

    monkeypatch.setattr(postings_due._Child, "start", start)
    return started


def _early(monkeypatch, early: bool) -> None:
    """A first build of a test's few notes starts its child early (or, as by default for so
    few, once its chunks are written), and commits every eight chunks."""
    monkeypatch.setattr(postings_due, "EARLY_FROM", 1 if early else 10**9)
    monkeypatch.setattr(indexer, "CHUNKS_PER_BATCH", 8)


def test_an_index_run_builds_the_base_in_a_child_process(tmp_path, monkeypatch):
    """`brain index` and a server's pass build the base in a child process (the build's loops
    would hold the lock every query thread of a server needs, and keep its memory): this
    process never writes the file, and the base it stamps answers as FTS5 does."""
    vault, home = tmp_path / "vault", tmp_path / "home"
    _vault(vault, notes=40)
    monkeypatch.setenv("BRAIN_LEXICAL_POSTINGS", "1")

    def not_here(store):
        raise AssertionError("the base was written in the indexing process")

    monkeypatch.setattr(postings, "write_base", not_here)
    _, directory = index_into(home, vault, CheapEmbedder())
    _assert_stamped(directory)
    assert _compare(directory, monkeypatch, ["amber filler", "basil cedar"]) > 0


@pytest.mark.parametrize("early", [False, True])
def test_the_child_builds_while_the_run_resolves_links_and_syncs_faiss(tmp_path, monkeypatch, early):
    """The child starts once the run's chunks are written (or, in a large first build, before
    the first write) and works while the run resolves links and syncs FAISS; its base is
    stamped after both. A title changed meanwhile (before or after the child read the chunks:
    either way) is logged, and the base answers as FTS5."""
    vault, home = tmp_path / "vault", tmp_path / "home"
    _vault(vault, notes=40)
    monkeypatch.setenv("BRAIN_LEXICAL_POSTINGS", "1")
    _early(monkeypatch, early)
    started = _record_children(monkeypatch)
    real_sync = indexer.vectors.sync

    def sync(store, *args):
        assert len(started) == 1, "the child was not started before FAISS's sync"
        assert store.get_meta("postings_stamp") is None  # stamped only once both are done
        with store.transaction():
            store.conn.execute("UPDATE notes SET title = 'jasper retitled' WHERE id = (SELECT min(id) FROM notes)")
        return real_sync(store, *args)

    monkeypatch.setattr(indexer.vectors, "sync", sync)
    _, directory = index_into(home, vault, CheapEmbedder())
    assert started[0].process.returncode == 0
    _assert_stamped(directory)
    assert _compare(directory, monkeypatch, ["jasper retitled", "amber filler", "basil cedar"]) > 0


@pytest.mark.parametrize("early", [False, True])
def test_an_error_while_the_child_builds_stops_it(tmp_path, monkeypatch, early):
    """The run failing after the child started (here, FAISS's sync): the error is the run's,
    the child is killed and waited for (no process left), nothing is stamped, FTS5 answers."""
    vault, home = tmp_path / "vault", tmp_path / "home"
    _vault(vault, notes=20)
    monkeypatch.setenv("BRAIN_LEXICAL_POSTINGS", "1")
    _early(monkeypatch, early)
    slow = "import time; time.sleep(60)"
    _command(monkeypatch, lambda module: [sys.executable, "-c", slow])
    started = _record_children(monkeypatch)

    def sync(store, *args):
        raise OSError("no space left on device")

    monkeypatch.setattr(indexer.vectors, "sync", sync)
    with pytest.raises(Exception, match="no space left on device"):
        index_into(home, vault, CheapEmbedder())
    assert len(started) == 1 and started[0].process.returncode is not None  # killed, and waited for
    assert started[0].errors is None if not early else started[0].errors.closed
    directory = next((home / "vaults").glob("vault-*[!k]"))
    assert not (directory / postings_due.FILE).exists()
    assert _compare(directory, monkeypatch, ["amber filler"]) == 0


def _command(monkeypatch, command: Callable[[str], list[str]]) -> None:
    """The command a postings child is started with, early (``postings``) or in the
    background (``background``)."""
    monkeypatch.setattr(postings_due, "python_module_command", command)
    monkeypatch.setattr(background, "python_module_command", command)


def _child_that(code: str) -> Callable[[str], list[str]]:
    """The postings child's command with ``code`` run first in its process (``postings`` and
    ``sys`` imported), then the real child."""
    boot = (
        "import sys, runpy; sys.argv = sys.argv[0:1] + sys.argv[1:]\n"
        "import brain.index.postings as postings\n"
        f"{code}\n"
        "runpy.run_module('brain.index.postings_child', run_name='__main__', alter_sys=True)\n"
    )
    return lambda module: [sys.executable, "-c", boot]


@pytest.mark.parametrize("early", [False, True])
def test_a_child_that_fails_to_build_leaves_fts5_answering(tmp_path, monkeypatch, caplog, early):
    """A base that fails to build leaves FTS5 answering, and says why: the run that waits for
    it (a large first build's) at once; one built in the background through its folder, at
    the next pass (its parent is not waiting, and may be gone)."""
    vault, home = tmp_path / "vault", tmp_path / "home"
    _vault(vault, notes=20)
    monkeypatch.setenv("BRAIN_LEXICAL_POSTINGS", "1")
    _early(monkeypatch, early)
    failing = (
        "def write_base(*args, **kwargs): raise RuntimeError('the disk is on fire')\npostings.write_base = write_base"
    )
    _command(monkeypatch, _child_that(failing))
    with caplog.at_level(logging.WARNING):
        _, directory = index_into(home, vault, CheapEmbedder())
    assert not (directory / postings_due.FILE).exists()
    assert _compare(directory, monkeypatch, ["amber filler"]) == 0
    if early:
        assert (
            "the process building them failed: it exited with status 1: RuntimeError: the disk is on fire"
            in caplog.text
        )
        return
    assert "failed" not in caplog.text
    assert background.failure_file(directory, postings_due.BUILD.name).stat().st_mode & 0o077 == 0
    _command(monkeypatch, python_module_command)
    write(vault, "d0/one more.md", "# one more\n\namber\n")
    with caplog.at_level(logging.WARNING):
        index_into(home, vault, CheapEmbedder())
    assert (
        "building the lexical postings failed in the background (RuntimeError: the disk is on fire): BM25 searches"
        " FTS5 until a later index pass builds them" in caplog.text
    )
    assert not background.failure_file(directory, postings_due.BUILD.name).exists()  # said once
    assert _compare(directory, monkeypatch, ["amber filler"]) > 0  # and built by that pass


@pytest.mark.parametrize("early", [False, True])
def test_a_child_killed_while_it_writes_leaves_fts5_answering_and_the_next_run_mends(
    tmp_path, monkeypatch, caplog, early
):
    """`kill -9` of the process building the base, its temporary file half written: nothing is
    stamped, FTS5 answers (a run waiting for it says so); the next run removes the orphan and
    builds."""
    vault, home = tmp_path / "vault", tmp_path / "home"
    _vault(vault, notes=20)
    monkeypatch.setenv("BRAIN_LEXICAL_POSTINGS", "1")
    _early(monkeypatch, early)
    killed = (
        "import os, signal, sys\n"
        "from pathlib import Path\n"
        "from brain.index.tempfiles import temp_name\n"
        "temp_name(Path(sys.argv[1]), 'postings.bin').write_bytes(b'brain-postings half')\n"
        "os.kill(os.getpid(), signal.SIGKILL)\n"
    )
    _command(monkeypatch, lambda module: [sys.executable, "-c", killed])
    with caplog.at_level(logging.WARNING):
        _, directory = index_into(home, vault, CheapEmbedder())
    if early:
        assert "the process building them failed: it exited with status -9" in caplog.text
    assert [p.name for p in directory.glob("postings.bin*")] != []  # the orphan
    assert not (directory / postings_due.FILE).exists()
    assert _compare(directory, monkeypatch, ["amber filler"]) == 0
    _command(monkeypatch, python_module_command)
    write(vault, "d0/one more.md", "# one more\n\namber\n")
    index_into(home, vault, CheapEmbedder())
    assert [p.name for p in directory.glob("postings.bin*")] == [postings_due.FILE]
    assert _compare(directory, monkeypatch, ["amber filler"]) > 0


def test_a_child_left_running_by_a_killed_run_never_gets_its_base_stamped_wrongly(tmp_path, monkeypatch):
    """`kill -9` of `brain index` while its child builds beside the run leaves that child
    running, unwatched, and the next run starts its own. Whichever renames its file last, a run
    stamps only the file its own child wrote: meanwhile the postings answer as FTS5 (or FTS5
    does), and once the orphan is done the next run leaves a stamped base."""
    vault, home = tmp_path / "vault", tmp_path / "home"
    _vault(vault, notes=40)
    monkeypatch.setenv("BRAIN_LEXICAL_POSTINGS", "1")
    monkeypatch.setattr(postings_due, "REBUILD_MIN", 0)  # every changed run builds a new base
    monkeypatch.setattr(postings_due, "REBUILD_SHARE", 0.0)
    _, directory = index_into(home, vault, CheapEmbedder())
    _edit(vault, 0)
    store = IndexStore.open(directory)
    orphan = postings_due._Child.start(store)  # the killed run's child: never finished, never stamped
    assert orphan is not None
    try:
        index_into(home, vault, CheapEmbedder())  # the next run, its own child beside the orphan
        assert _compare(directory, monkeypatch, ["amber filler", "cedar", "basil cedar"]) >= 0
        orphan.process.wait(60)
        assert _compare(directory, monkeypatch, ["amber filler", "cedar", "basil cedar"]) >= 0
        index_into(home, vault, CheapEmbedder())
        _assert_stamped(directory)
        assert _compare(directory, monkeypatch, ["amber filler", "cedar", "basil cedar"]) > 0
    finally:
        orphan.stop()
        store.close()


def _stamp(directory: Path) -> str | None:
    store = IndexStore.open_snapshot(directory)
    try:
        return store.get_meta("postings_stamp")
    finally:
        store.close()


def _gated(gate: Path) -> str:
    """Code for ``_child_that``: the child writes its base, then waits for ``gate`` to exist
    before it puts it in place."""
    return (
        "import time\nfrom pathlib import Path\nreal_install = postings.install\n"
        "def install(store, written):\n"
        f"    while not Path({str(gate)!r}).exists(): time.sleep(0.02)\n"
        "    return real_install(store, written)\n"
        "postings.install = install"
    )


def _builder_starts(directory: Path) -> bool:
    """Whether a process takes the builder's lock within a minute (one just started)."""
    deadline = time.monotonic() + 60
    while not background.busy(directory, postings_due.BUILD.name):
        if time.monotonic() > deadline:
            return False
        time.sleep(0.02)
    return True


def _indexed(home: Path, vault: Path) -> None:
    """An index pass, not waiting for a base it starts in the background (as `brain index`)."""
    with environ(BRAIN_HOME=str(home), BRAIN_MAX_NOTE_MB=None):
        indexer.index_vault(vault, embedder=CheapEmbedder(), progress=False)


def test_a_pass_never_waits_for_its_base_and_queries_read_the_one_before_meanwhile(index, monkeypatch, tmp_path):
    """A pass whose changes outgrew the base starts a new one in the background and returns;
    meanwhile the base before and its log answer every query exactly as FTS5; once the new
    base is in place, a fresh state reads it, and a snapshot opened before (a server's, until
    its next pass) still reads the one before rather than falling to FTS5."""
    vault, home, directory = index
    monkeypatch.setattr(postings_due, "REBUILD_MIN", 0)
    monkeypatch.setattr(postings_due, "REBUILD_SHARE", 0.0)
    old = _stamp(directory)
    gate = tmp_path / "gate"
    _command(monkeypatch, _child_that(_gated(gate)))
    _edit(vault, 4)
    _indexed(home, vault)  # returns with the child still at work
    assert _builder_starts(directory)
    assert _stamp(directory) == old
    assert _compare(directory, monkeypatch) > 200  # the base before, and the log
    before = IndexStore.open_snapshot(directory)
    try:
        gate.touch()
        background.wait_for_all(60)
        assert not background.busy(directory, postings_due.BUILD.name)
        assert _stamp(directory) not in (None, old)
        _assert_stamped(directory)
        assert _compare(directory, monkeypatch) > 200  # the new base
        postings._warned.clear()
        assert postings.search(before, ["amber", "cedar"], (4.0, 2.0, 1.0), 10) is not None
        monkeypatch.setenv("BRAIN_LEXICAL_POSTINGS", "off")
        expression = lexical.match_expression(before, "amber cedar")
        theirs = before.fts_search(expression, (4.0, 2.0, 1.0), 10)
        monkeypatch.setenv("BRAIN_LEXICAL_POSTINGS", "1")
        assert before.fts_search(expression, (4.0, 2.0, 1.0), 10) == theirs
    finally:
        before.close()
    store = IndexStore.open_snapshot(directory)
    try:  # the log up to the new base forgotten
        base = postings.load(directory)
        forgotten = (base.header["log_at"],)
        assert store.conn.execute("SELECT count(*) FROM postings_log WHERE seq <= ?", forgotten).fetchone()[0] == 0
    finally:
        store.close()


def test_a_base_built_in_the_background_outlives_the_process_that_started_it(index, tmp_path):
    """`brain index` exits while its base is being built; the build goes on without it (its own
    session, nothing of the parent's it writes to) and puts the base in place."""
    vault, home, directory = index
    gate = tmp_path / "gate"
    _edit(vault, 6)
    boot = _child_that(_gated(gate))("brain.index.postings_child")[2]
    script = (
        "import sys\n"
        "import brain.index.background as background, brain.index.postings_due as postings_due\n"
        "postings_due.REBUILD_MIN = 0; postings_due.REBUILD_SHARE = 0.0\n"
        f"background.python_module_command = lambda module: [sys.executable, '-c', {boot!r}]\n"
        f"sys.path.insert(0, {str(Path(__file__).parent)!r})\n"
        "from pathlib import Path\nfrom index_helpers import CheapEmbedder\nfrom brain.index.indexer import index_vault\n"
        f"index_vault(Path({str(vault)!r}), embedder=CheapEmbedder(), progress=False)\n"
    )
    old = _stamp(directory)
    env = {**os.environ, "BRAIN_HOME": str(home), "BRAIN_VAULT": str(vault), "BRAIN_LEXICAL_POSTINGS": "1"}
    import subprocess

    done = subprocess.run([sys.executable, "-c", script], env=env, capture_output=True, timeout=120)
    try:
        assert done.returncode == 0, done.stderr.decode()
        assert _builder_starts(directory)  # the parent is gone, its child is not
        assert _stamp(directory) == old
    finally:
        gate.touch()
        with background.held(directory, postings_due.BUILD.name, wait=True):  # the child done
            pass
    assert _stamp(directory) not in (None, old)
    _assert_stamped(directory)


def test_one_base_is_built_at_a_time(index, monkeypatch, caplog):
    """While another process builds a base, a pass that wants one starts none: the other's
    will do. Once it is done, the next pass builds."""
    vault, home, directory = index
    monkeypatch.setattr(postings_due, "REBUILD_MIN", 0)
    monkeypatch.setattr(postings_due, "REBUILD_SHARE", 0.0)
    started = _record_children(monkeypatch)
    old = _stamp(directory)
    with background.held(directory, postings_due.BUILD.name, wait=False) as held:
        assert held
        _edit(vault, 7)
        with caplog.at_level(logging.INFO, logger="brain"):
            index_into(home, vault, CheapEmbedder())
        assert started == []
        assert "building the lexical postings: already under way in another process" in caplog.text
        assert _stamp(directory) == old
    _edit(vault, 8)
    index_into(home, vault, CheapEmbedder())
    assert len(started) == 1
    assert _stamp(directory) not in (None, old)
    assert _compare(directory, monkeypatch) > 200


@pytest.mark.parametrize("meanwhile", ["cleared", "another base", "index replaced"])
def test_a_base_read_before_the_postings_changed_otherwise_is_not_put_in_place(index, monkeypatch, meanwhile):
    """A base is put in place only if nothing changed the postings since it was read: cleared
    (their log, with changes this base lacks, dropped), another base stamped (its log up to a
    later point forgotten), or the index file itself replaced (a rebuild swapped in). Else its
    file is removed and the stamp left as the change left it."""
    vault, home, directory = index
    _edit(vault, 9)
    index_into(home, vault, CheapEmbedder())  # changes in the log
    store = IndexStore.open(directory)
    try:
        written = postings.write_base(store)
        assert written is not None and written.file.exists()
        other = IndexStore.open(directory)
        try:
            if meanwhile == "cleared":
                with other.transaction():
                    other.conn.execute("UPDATE notes SET title = 'garnet' WHERE id = (SELECT min(id) FROM notes)")
                other.clear_postings()
            elif meanwhile == "another base":
                assert postings.build(other)
        finally:
            other.close()
        if meanwhile == "index replaced":
            copy = directory / "copy.db"
            store.conn.execute("VACUUM INTO ?", (str(copy),))
            os.replace(copy, directory / INDEX_FILE)
        stamp = store.get_meta("postings_stamp")
        assert not postings.install(store, written)
        assert not written.file.exists()
        assert store.get_meta("postings_stamp") == stamp != written.nonce
    finally:
        store.close()


def test_kill_9_of_a_base_building_in_the_background(index, monkeypatch, tmp_path):
    """`kill -9` of the process building a base in the background, its file written and not
    yet in place: the base before and its log keep answering as FTS5; the lock goes with the
    process, and the next pass removes the orphan and builds."""
    import signal

    vault, home, directory = index
    monkeypatch.setattr(postings_due, "REBUILD_MIN", 0)
    monkeypatch.setattr(postings_due, "REBUILD_SHARE", 0.0)
    started = _record_children(monkeypatch)
    _command(monkeypatch, _child_that(_gated(tmp_path / "never")))
    old = _stamp(directory)
    _edit(vault, 10)
    _indexed(home, vault)
    deadline = time.monotonic() + 60
    while not list(directory.glob("postings.bin.*.tmp")) and time.monotonic() < deadline:
        time.sleep(0.05)
    assert list(directory.glob("postings.bin.*.tmp"))  # written, waiting at the gate
    os.killpg(started[0].process.pid, signal.SIGKILL)
    background.wait_for_all(60)
    assert not background.busy(directory, postings_due.BUILD.name)
    assert _stamp(directory) == old
    assert _compare(directory, monkeypatch) > 200
    _command(monkeypatch, python_module_command)
    _edit(vault, 12)
    index_into(home, vault, CheapEmbedder())
    assert [p.name for p in directory.glob("postings.bin*")] == [postings_due.FILE]
    assert _stamp(directory) not in (None, old)
    assert _compare(directory, monkeypatch) > 200


def _watch_flushes(monkeypatch, before_flush: Callable[[int], None]) -> list[int]:
    """Each commit's batch of notes, as the run flushes it; ``before_flush`` is told how many
    flushes there were, this one included, before it runs."""
    real_flush = indexer._Run._flush
    flushes: list[int] = []

    def flush(run, batch):
        flushes.append(len(batch))
        before_flush(len(flushes))
        return real_flush(run, batch)

    monkeypatch.setattr(indexer._Run, "_flush", flush)
    return flushes


def test_a_large_first_build_reads_its_chunks_as_it_commits_them(tmp_path, monkeypatch):
    """A first build of many notes starts its child before its first write; the child reads the
    chunks each commit brought (told after each), so that at the end nothing is left to read:
    every chunk of the base was read early, and the base answers as FTS5."""
    vault, home = tmp_path / "vault", tmp_path / "home"
    _vault(vault, notes=40)
    monkeypatch.setenv("BRAIN_LEXICAL_POSTINGS", "1")
    _early(monkeypatch, True)
    started = _record_children(monkeypatch)

    def before_flush(count: int) -> None:
        assert len(started) == 1, "the child was not started before the first write"

    flushes = _watch_flushes(monkeypatch, before_flush)
    report, directory = index_into(home, vault, CheapEmbedder())
    assert len(flushes) > 3
    assert started[0].process.returncode == 0
    assert started[0].kept == report.chunks > 0
    _assert_stamped(directory)
    assert _compare(directory, monkeypatch, ["amber filler", "basil cedar", "ёлка jasper"]) > 0
    # the next run, a few notes changed, does not start one early (the index has chunks)
    _edit(vault, 0)
    monkeypatch.setattr(postings_due, "REBUILD_MIN", 0)
    monkeypatch.setattr(postings_due, "REBUILD_SHARE", 0.0)
    index_into(home, vault, CheapEmbedder())
    assert len(started) == 2 and started[1].kept == 0
    _assert_stamped(directory)
    assert _compare(directory, monkeypatch, ["amber filler", "basil cedar", "cedar"]) > 0


@pytest.mark.parametrize("change", ["retitle", "delete", "edit", "delete, log lost", "add"])
def test_chunks_changed_after_they_were_read_are_read_again(index, monkeypatch, change):
    """What the child read early and the database changed since (a note re-titled, deleted,
    its chunks rewritten; or deleted with its log rows gone) is not kept: the base is read
    again whole, and answers as FTS5. Chunks added since are only read on top."""
    vault, home, directory = index
    store = IndexStore.open(directory)
    try:
        reader = postings.Reader()
        reader.read_committed(store)
        read = len(reader.ids)
        assert read == store.counts()["chunks"]
        note = store.conn.execute("SELECT note_id FROM chunks WHERE id = (SELECT min(id) FROM chunks)").fetchone()[0]
        with store.transaction():
            if change == "retitle":
                store.conn.execute("UPDATE notes SET title = 'garnet retitled' WHERE id = ?", (note,))
            elif change.startswith("delete"):
                store.delete_notes([note])
                if change == "delete, log lost":
                    store.conn.execute("DELETE FROM postings_log")
            elif change == "edit":
                vector = struct.pack(f"{int(store.get_meta('dim'))}f", *[0.1] * int(store.get_meta("dim")))
                store.replace_chunks(note, [(0, "", "harbor harbor rewritten", vector)])
        if change == "add":
            write(vault, "new/added harbor.md", "# added harbor\n\nharbor garnet island\n")
            index_into(home, vault, CheapEmbedder())
        written = postings.write_base(store, reader)
        assert written is not None
        assert postings.install(store, written)
    finally:
        store.close()
    assert _compare(directory, monkeypatch, ["garnet retitled", "harbor rewritten", "amber filler", "harbor"]) > 0
    assert written.kept == (read if change == "add" else 0)


def test_an_early_child_whose_run_ends_without_go_writes_nothing(index):
    """A run stopped or killed (`kill -9`) while its early child reads: the child's input ends
    without `go`, and it ends too, writing nothing (no file, no orphan to clean)."""
    _, _, directory = index
    (directory / postings_due.FILE).unlink()
    store = IndexStore.open(directory)
    try:
        child = postings_due._Child.start(store, early=True)
        assert child is not None
        child.tell(b"more")
        if hasattr(os, "getpriority"):  # it reads at a lower priority than the run's
            deadline = time.monotonic() + 30
            mine = os.getpriority(os.PRIO_PROCESS, 0)
            while os.getpriority(os.PRIO_PROCESS, child.process.pid) == mine and time.monotonic() < deadline:
                time.sleep(0.01)
            assert os.getpriority(os.PRIO_PROCESS, child.process.pid) == min(mine + postings_child.EARLY_NICENESS, 19)
        assert child.process.stdin is not None
        child.process.stdin.close()  # what the run's death does to the pipe
        assert child.process.wait(60) == 0
        child.stop()
    finally:
        store.close()
    assert list(directory.glob("postings.bin*")) == []


def test_an_early_child_is_stopped_when_the_run_ends_with_too_few_chunks(tmp_path, monkeypatch):
    """Started early for a first build of many notes, which then holds fewer chunks than the
    postings start from: the child is stopped (no process left), nothing is written or stamped."""
    vault, home = tmp_path / "vault", tmp_path / "home"
    _vault(vault, notes=20)
    monkeypatch.setenv("BRAIN_LEXICAL_POSTINGS", "100000")
    _early(monkeypatch, True)
    started = _record_children(monkeypatch)
    _, directory = index_into(home, vault, CheapEmbedder())
    assert len(started) == 1 and started[0].process.returncode is not None
    assert started[0].errors.closed
    assert list(directory.glob("postings.bin*")) == []
    store = IndexStore.open_snapshot(directory)
    try:
        assert store.get_meta("postings_stamp") is None
    finally:
        store.close()


def test_an_error_while_the_run_writes_stops_an_early_child(tmp_path, monkeypatch):
    """The run failing between two commits (here, the embedder), its early child reading: the
    error is the run's, the child is killed and waited for, and nothing is written."""
    vault, home = tmp_path / "vault", tmp_path / "home"
    _vault(vault, notes=20)
    monkeypatch.setenv("BRAIN_LEXICAL_POSTINGS", "1")
    _early(monkeypatch, True)
    started = _record_children(monkeypatch)

    def before_flush(count: int) -> None:
        if count == 3:
            raise OSError("the model went away")

    _watch_flushes(monkeypatch, before_flush)
    with pytest.raises(Exception, match="the model went away"):
        index_into(home, vault, CheapEmbedder())
    assert len(started) == 1 and started[0].process.returncode is not None
    assert started[0].errors.closed
    directory = next((home / "vaults").glob("vault-*[!k]"))
    assert list(directory.glob("postings.bin*")) == []


def test_a_trigram_index_stays_on_fts5(tmp_path, monkeypatch):
    vault, home = tmp_path / "vault", tmp_path / "home"
    _vault(vault, notes=20)
    monkeypatch.setenv("BRAIN_LEXICAL_POSTINGS", "1")
    with environ(BRAIN_FTS_TOKENIZER="trigram"):
        _, directory = index_into(home, vault, CheapEmbedder())
    assert not (directory / postings_due.FILE).exists()


@pytest.mark.parametrize("name", ["13th-age-srd", "vaultofknowledge"])
def test_real_vaults(name, tmp_path, monkeypatch):
    root = REAL_VAULTS / name
    if not root.is_dir():
        pytest.skip(f"../shared/bench/vaults/{name} is not here")
    monkeypatch.setenv("BRAIN_LEXICAL_POSTINGS", "1")
    _, directory = index_into(tmp_path / "home", root, CheapEmbedder())
    store = IndexStore.open_snapshot(directory)
    try:
        titles = [r[0] for r in store.conn.execute("SELECT title FROM notes ORDER BY id")]
    finally:
        store.close()
    rng = random.Random(1)
    queries = [" ".join(rng.sample(titles, 2)) for _ in range(40)] + rng.sample(titles, 40)
    assert _compare(directory, monkeypatch, queries) > 100


def test_a_snapshot_keeps_answering_for_its_own_state(index, monkeypatch):
    """A server's snapshot opened before a pass (and a rebuilt base) answers as its own FTS5 state does."""
    vault, home, directory = index
    before = IndexStore.open_snapshot(directory)
    try:
        expression = lexical.match_expression(before, "amber cedar jasper")
        assert expression is not None
        monkeypatch.setenv("BRAIN_LEXICAL_POSTINGS", "off")
        then = before.fts_search(expression, (4.0, 2.0, 1.0), 50)
        monkeypatch.setenv("BRAIN_LEXICAL_POSTINGS", "1")
        for rebuild in (False, True):
            _edit(vault, 20 + rebuild)
            if rebuild:
                monkeypatch.setattr(postings_due, "REBUILD_MIN", 0)
                monkeypatch.setattr(postings_due, "REBUILD_SHARE", 0.0)
            index_into(home, vault, CheapEmbedder())
            assert before.fts_search(expression, (4.0, 2.0, 1.0), 50) == then
            assert _compare(directory, monkeypatch, ["amber cedar jasper", "fresh basil"]) > 0
    finally:
        before.close()
