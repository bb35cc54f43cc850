"""An indexing run killed mid-way (SIGKILL, or Ctrl-C) leaves a usable index, and the next run
finishes the job: the result equals a clean build in another brain home.

The killed runs are real `brain index` subprocesses with the fake embedder (conftest.py, through
tests/brain_with_fakes.py). They run the CLI through a one-line wrapper that only lowers
``brain.index.indexer.CHUNKS_PER_BATCH`` (1024 chunks per commit) to 16, so a vault of a few
hundred notes is committed in a couple of dozen transactions and a kill lands between or inside
them; the run that finishes the job afterwards runs in-process (the same ``index_vault`` the CLI
calls). What is checked is the index a run leaves, which no embedder's insides decide. With the
tiny sentence transformer of tests/tiny_models.py each killed run imported torch (5 s of CPU) and
spent most of its time embedding, where most kills then landed; the fake's runs spend theirs
writing, and more of their kills land inside a transaction (a store that committed each
statement alone failed 2 to 6 of these 7 tests in each of 4 runs; 4 in a run with the tiny model).
"""

from __future__ import annotations

import os
import random
import signal
import sqlite3
import subprocess
import sys
import time
from pathlib import Path

import numpy as np
import pytest
from conftest import FakeEmbedder
from index_helpers import assert_faiss_matches, environ, history_problems, index_into

from brain import config
from brain.index.indexer import index_vault
from brain.index.status import vault_status
from brain.index.store import IndexStore
from brain.index.vector_blobs import decode

pytestmark = [
    pytest.mark.slow,
    pytest.mark.skipif(os.name == "nt", reason="POSIX signals"),
]

NOTES = 200
FIRST_STATE = range(100)  # notes in the vault before the interrupted update
DELETED = {3, 17, 42, 88}
CHANGED = {i for i in range(0, 100, 7)} - DELETED
COMMIT_EVERY = 16  # chunks per transaction in the killed runs
TESTS = Path(__file__).resolve().parent
# The run commits every COMMIT_EVERY chunks. It answers Ctrl-C as a terminal's brain does even
# when the tests were started in the background: a non-interactive shell starts a background
# job with SIGINT ignored, children inherit that, and the Ctrl-C tests' runs then exited 0.
WRAPPER = (
    f"import sys; sys.path.insert(0, {str(TESTS)!r}); import brain_with_fakes; "
    "import signal, brain.index.indexer; signal.signal(signal.SIGINT, signal.default_int_handler); "
    "brain.index.indexer.CHUNKS_PER_BATCH = int(sys.argv.pop(1)); "
    "sys.argv[0] = 'brain'; from brain.__main__ import main; main()"
)
QUERIES = ["graph memory vector index", "bread flour water starter", "sqlite schema migration ledger"]
_WORDS = (
    "note memory agent vector index graph link search query passage chunk heading model embedding "
    "retrieval rerank score rank file folder vault markdown title tag alias date code block python "
    "sqlite database table row schema migration ledger hook turn test data write read build speed "
    "cache faiss cosine nearest bread flour water salt yeast starter dough oven knife soup recipe "
    "meeting review decision project daily weekly habit idea context window prompt packaging"
).split()


def _note(i: int, version: int = 0) -> tuple[str, str]:
    rng = random.Random(i * 1009 + version)

    def sentences(words: int) -> str:
        out = []
        while words > 0:
            n = min(words, rng.randint(6, 12))
            out.append(" ".join(rng.choice(_WORDS) for _ in range(n)).capitalize() + ".")
            words -= n
        return " ".join(out)

    links = [f"[[Note {(i * 7 + k * 13) % NOTES:03d}]]" for k in (1, 2, 3)]
    text = (
        f"---\ndate: 2025-{1 + i % 12:02d}-{1 + i % 28:02d}\ntags: [generated, group{i % 5}]\n---\n"
        f"# Note {i:03d}\n\n{sentences(45)} See {links[0]}. #topic/{rng.choice(_WORDS)}\n\n"
        f"## Details\n\n{sentences(50)} Also {links[1]} and {links[2]}.\n"
    )
    return f"group{i % 5}/Note {i:03d}.md", text


def _write_state(vault: Path, final: bool) -> None:
    """The vault before the update (the first 100 notes), or after it (200, some changed or deleted)."""
    wanted = {}
    for i in range(NOTES) if final else FIRST_STATE:
        if final and i in DELETED:
            continue
        path, text = _note(i, 1 if final and i in CHANGED else 0)
        wanted[path] = text
    for existing in vault.rglob("*.md"):
        if str(existing.relative_to(vault)) not in wanted:
            existing.unlink()
    for path, text in wanted.items():
        target = vault / path
        target.parent.mkdir(parents=True, exist_ok=True)
        if not target.exists() or target.read_text(encoding="utf-8") != text:
            target.write_text(text, encoding="utf-8")


@pytest.fixture(scope="module")
def model():
    """The embedder's name (what BRAIN_EMBED_MODEL says to the killed runs) and the embedder."""
    embedder = FakeEmbedder()
    return embedder.name, embedder


@pytest.fixture(scope="module")
def clean_build(tmp_path_factory, model):
    """The final vault state indexed in one uninterrupted run, in its own brain home."""
    _, embedder = model
    vault = tmp_path_factory.mktemp("clean") / "vault"
    _write_state(vault, final=True)
    report, directory = index_into(tmp_path_factory.mktemp("clean_home"), vault, embedder)
    assert report.notes == NOTES - len(DELETED)
    return directory


def _env(home: Path, model_name: str) -> dict[str, str]:
    env = dict(os.environ)
    env.update(
        BRAIN_HOME=str(home),
        BRAIN_EMBED_MODEL=model_name,
        HF_HUB_OFFLINE="1",
        TRANSFORMERS_OFFLINE="1",
        PYTHONUNBUFFERED="1",
    )
    env.pop("BRAIN_DB", None)
    return env


def _start_wrapped(vault: Path, env: dict[str, str], *extra: str) -> subprocess.Popen:
    return subprocess.Popen(
        [sys.executable, "-c", WRAPPER, str(COMMIT_EVERY), "index", "--vault", str(vault), *extra],
        env=env,
        stdout=subprocess.PIPE,
        stderr=subprocess.PIPE,
        text=True,
    )


def _committed(db: Path, since: float) -> int:
    """Notes written since ``since`` that a reader can see (0 while the database is not there)."""
    if not db.exists():
        return 0
    try:
        conn = sqlite3.connect(f"file:{db}?mode=ro", uri=True, timeout=1)
        try:
            return conn.execute("SELECT count(*) FROM notes WHERE indexed_at > ?", (since,)).fetchone()[0]
        finally:
            conn.close()
    except sqlite3.OperationalError:  # not created yet, or mid-migration
        return 0


def _interrupt_when_committed(
    proc: subprocess.Popen, db: Path | list[Path], since: float, sig: int, at_least: int = 8
) -> int:
    """Wait until the run has committed ``at_least`` notes (to ``db``, or to any of a list),
    then send ``sig``; the count then."""
    databases = db if isinstance(db, list) else [db]
    deadline = time.monotonic() + 300
    while time.monotonic() < deadline:
        seen = sum(_committed(path, since) for path in databases)
        if seen >= at_least:
            proc.send_signal(sig)
            return seen
        if proc.poll() is not None:
            out, err = proc.communicate()
            pytest.fail(f"the run ended (code {proc.returncode}) before it could be interrupted:\n{out}\n{err}")
        time.sleep(0.01)
    proc.kill()
    pytest.fail("no notes committed within 300 s")


def _snapshot(directory: Path) -> dict:
    conn = sqlite3.connect(directory / "index.db")
    conn.row_factory = sqlite3.Row
    try:
        notes = {
            r["path"]: (r["title"], r["aliases"], r["tags"], r["date"], r["frontmatter"], r["hash"], r["warnings"])
            for r in conn.execute("SELECT * FROM notes")
        }
        chunks = {
            (r["path"], r["ordinal"]): (r["heading"], r["text"], np.frombuffer(decode(r["vector"]), dtype=np.float32))
            for r in conn.execute("SELECT n.path, c.* FROM chunks c JOIN notes n ON n.id = c.note_id")
        }
        links = sorted(
            tuple(r)
            for r in conn.execute(
                "SELECT s.path, l.target, l.kind, l.anchor, l.display, l.line, l.status, t.path FROM links l "
                "JOIN notes s ON s.id = l.source_id LEFT JOIN notes t ON t.id = l.target_id"
            )
        )
        meta = dict(
            conn.execute(
                "SELECT key, value FROM meta WHERE key IN ('model', 'dim', 'links_dirty', 'deferred_indexes')"
            ).fetchall()
        )
        indexes = conn.execute("SELECT name, sql FROM sqlite_master WHERE type = 'index' ORDER BY name").fetchall()
        return {"notes": notes, "chunks": chunks, "links": links, "meta": meta, "indexes": indexes}
    finally:
        conn.close()


def _search(directory: Path, embedder, query: str, k: int = 10) -> list[tuple[tuple[str, int], float]]:
    from brain.index.vectors import load_current

    store = IndexStore.open(directory, create=False)
    try:
        index = load_current(store, int(store.get_meta("dim")))
        ids, scores = index.search(embedder.embed_query(query), k)
        where = {
            r[0]: (r[1], r[2])
            for r in store.conn.execute(
                f"SELECT c.id, n.path, c.ordinal FROM chunks c JOIN notes n ON n.id = c.note_id "
                f"WHERE c.id IN ({','.join('?' * len(ids))})",
                [int(i) for i in ids],
            )
        }
        return [(where[int(i)], float(s)) for i, s in zip(ids, scores)]
    finally:
        store.close()


def _assert_same_as_clean(directory: Path, clean: Path, embedder) -> None:
    got, want = _snapshot(directory), _snapshot(clean)
    assert got["notes"] == want["notes"]
    assert got["links"] == want["links"]
    assert got["meta"] == want["meta"]
    assert got["indexes"] == want["indexes"]
    assert got["chunks"].keys() == want["chunks"].keys()
    for key, (heading, text, vector) in want["chunks"].items():
        other = got["chunks"][key]
        assert (other[0], other[1]) == (heading, text), key
        assert np.allclose(other[2], vector, atol=1e-5), key
    for query in QUERIES:
        mine, theirs = _search(directory, embedder, query), _search(clean, embedder, query)
        assert [hit for hit, _ in mine] == [hit for hit, _ in theirs], query
        assert np.allclose([s for _, s in mine], [s for _, s in theirs], atol=1e-5), query
    assert_faiss_matches(directory)


def test_sigkill_mid_update_keeps_the_previous_index_and_the_next_run_finishes(tmp_path, model, clean_build):
    name, embedder = model
    vault, home = tmp_path / "vault", tmp_path / "home"
    _write_state(vault, final=False)
    first, directory = index_into(home, vault, embedder)
    assert first.notes == len(FIRST_STATE)
    before = _snapshot(directory)

    _write_state(vault, final=True)
    started = time.time()
    proc = _start_wrapped(vault, _env(home, name))
    seen = _interrupt_when_committed(proc, directory / "index.db", started, signal.SIGKILL)
    proc.communicate(timeout=60)
    assert proc.returncode == -signal.SIGKILL

    # The index is usable as it stands: consistent, searchable, and honest about what is left.
    after_kill = _snapshot(directory)
    committed = _committed(directory / "index.db", started)
    to_do = NOTES - len(FIRST_STATE) + len(CHANGED)
    assert seen <= committed < to_do, "the run must have been killed part-way"
    assert after_kill["notes"].keys() >= before["notes"].keys()  # deletions come last: none yet
    for (path, ordinal), (_, text, _) in before["chunks"].items():
        if path in after_kill["notes"] and after_kill["notes"][path][5] == before["notes"][path][5]:
            assert after_kill["chunks"][(path, ordinal)][1] == text
    with environ(BRAIN_HOME=str(home)):
        status = vault_status(vault)
    assert status.notes == len(after_kill["notes"])
    assert status.pending["deleted"] == len(DELETED)
    assert status.pending["new"] + status.pending["changed"] == to_do - committed
    hits = _search(directory, embedder, QUERIES[0])  # the stale FAISS file is rebuilt from SQLite
    assert len(hits) == 10
    assert_faiss_matches(directory)
    assert history_problems(directory / "index.db") == []

    # The next run does only what is left.
    with environ(BRAIN_HOME=str(home)):
        report = index_vault(vault, embedder=embedder, progress=False)
    assert report.new + report.changed == to_do - committed
    assert report.removed == len(DELETED)
    assert 0 < report.embedded < report.chunks
    _assert_same_as_clean(directory, clean_build, embedder)
    assert history_problems(directory / "index.db") == []


def test_ctrl_c_mid_first_build_then_resume(tmp_path, model, clean_build):
    name, embedder = model
    vault, home = tmp_path / "vault", tmp_path / "home"
    _write_state(vault, final=True)
    directory = None
    with environ(BRAIN_HOME=str(home)):
        directory = config.index_dir(vault)
    started = time.time()
    proc = _start_wrapped(vault, _env(home, name))
    _interrupt_when_committed(proc, directory / "index.db", started, signal.SIGINT)
    _, err = proc.communicate(timeout=120)
    assert proc.returncode == 1, err  # click's "Aborted!"
    assert "Aborted!" in err and "Traceback" not in err

    committed = _committed(directory / "index.db", started)
    assert 0 < committed < NOTES - len(DELETED)
    with environ(BRAIN_HOME=str(home), BRAIN_EMBED_MODEL=name):
        assert vault_status(vault).pending["new"] == NOTES - len(DELETED) - committed
        report = index_vault(vault, embedder=embedder, progress=False)
    assert report.new == NOTES - len(DELETED) - committed
    assert report.unchanged == committed
    _assert_same_as_clean(directory, clean_build, embedder)


def _fts_exact(directory: Path) -> bool:
    """chunks_fts holds exactly what FTS5 builds anew from the chunks (test_compact_index.py)."""
    conn = sqlite3.connect(directory / "index.db", isolation_level=None)
    try:
        conn.execute("CREATE VIRTUAL TABLE temp.v USING fts5vocab(main, 'chunks_fts', 'instance')")
        conn.execute("BEGIN")
        kept = conn.execute("SELECT term, doc, col, offset FROM temp.v ORDER BY 1, 2, 3, 4").fetchall()
        conn.execute("INSERT INTO chunks_fts (chunks_fts) VALUES ('rebuild')")
        fresh = conn.execute("SELECT term, doc, col, offset FROM temp.v ORDER BY 1, 2, 3, 4").fetchall()
        conn.execute("ROLLBACK")
        return bool(kept) and kept == fresh
    finally:
        conn.close()


def test_sigkill_mid_bulk_first_build_then_the_next_run_finishes(tmp_path, model, clean_build):
    """A first build over many notes commits several batches at once, each with its chunks'
    lexical index and its versions (the bytes kept against the chunks): killed between or
    inside those commits, the next run ends with what a clean build holds."""
    from brain.recall.lexical import lexical_search

    name, embedder = model
    vault, home = tmp_path / "vault", tmp_path / "home"
    _write_state(vault, final=True)
    with environ(BRAIN_HOME=str(home)):
        directory = config.index_dir(vault)
    bulk = "import brain.index.indexer as bulk; bulk.BULK_FROM = 0; " + WRAPPER  # every run a bulk run
    started = time.time()
    proc = subprocess.Popen(
        [sys.executable, "-c", bulk, str(COMMIT_EVERY), "index", "--vault", str(vault)],
        env=_env(home, name),
        stdout=subprocess.PIPE,
        stderr=subprocess.PIPE,
        text=True,
    )
    _interrupt_when_committed(proc, directory / "index.db", started, signal.SIGKILL)
    proc.communicate(timeout=120)
    assert proc.returncode == -signal.SIGKILL
    committed = _committed(directory / "index.db", started)
    assert 0 < committed < NOTES - len(DELETED)
    assert _fts_exact(directory) and history_problems(directory / "index.db") == []
    # The indexes it made after its writes (IndexStore.defer_indexes) are missing, and recorded.
    left = _snapshot(directory)
    assert "deferred_indexes" in left["meta"] and len(left["indexes"]) < len(_snapshot(clean_build)["indexes"])
    with environ(BRAIN_HOME=str(home), BRAIN_EMBED_MODEL=name):
        report = index_vault(vault, embedder=embedder, progress=False)
    assert report.new == NOTES - len(DELETED) - committed
    _assert_same_as_clean(directory, clean_build, embedder)
    assert _fts_exact(directory) and history_problems(directory / "index.db") == []
    for query in QUERIES:
        found = []
        for where in (directory, clean_build):
            store = IndexStore.open(where, create=False)
            try:
                found.append([(c.path, round(c.score, 6)) for c in lexical_search(store, query, depth=20)])
            finally:
                store.close()
        assert found[0] == found[1] and found[0], query


def _postings_children(directory: Path) -> list[int]:
    """The processes building the postings of the index in ``directory`` (from /proc)."""
    found = []
    for entry in Path("/proc").iterdir():
        if not entry.name.isdigit():
            continue
        try:
            command = (entry / "cmdline").read_bytes()
        except OSError:
            continue
        if b"brain.index.postings_child" in command and str(directory).encode() in command:
            found.append(int(entry.name))
    return found


@pytest.mark.skipif(not Path("/proc/self/cmdline").exists(), reason="reads the processes from /proc")
def test_sigkill_mid_first_build_ends_its_early_postings_child(tmp_path, model):
    """`kill -9` of a first build whose postings child reads the chunks as they are committed:
    the child's input ends, and it ends too, writing nothing (no process left behind, no
    file); the next run finishes, and its postings are stamped and answer as FTS5 does."""
    from brain.index import background, postings
    from brain.recall.lexical import lexical_search

    name, embedder = model
    vault, home = tmp_path / "vault", tmp_path / "home"
    _write_state(vault, final=True)
    with environ(BRAIN_HOME=str(home)):
        directory = config.index_dir(vault)
    early = "import brain.index.postings_due as p; p.EARLY_FROM = 1; " + WRAPPER  # its child started early
    started = time.time()
    proc = subprocess.Popen(
        [sys.executable, "-c", early, str(COMMIT_EVERY), "index", "--vault", str(vault)],
        env={**_env(home, name), "BRAIN_LEXICAL_POSTINGS": "1"},
        stdout=subprocess.PIPE,
        stderr=subprocess.PIPE,
        text=True,
    )
    deadline = time.monotonic() + 120
    while not _postings_children(directory) and proc.poll() is None and time.monotonic() < deadline:
        time.sleep(0.02)
    assert _postings_children(directory), "no postings child was started early"
    _interrupt_when_committed(proc, directory / "index.db", started, signal.SIGKILL)
    proc.communicate(timeout=120)
    assert proc.returncode == -signal.SIGKILL
    deadline = time.monotonic() + 60
    while _postings_children(directory) and time.monotonic() < deadline:
        time.sleep(0.1)
    assert _postings_children(directory) == []
    assert list(directory.glob("postings.bin*")) == []
    with environ(BRAIN_HOME=str(home), BRAIN_EMBED_MODEL=name, BRAIN_LEXICAL_POSTINGS="1"):
        index_vault(vault, embedder=embedder, progress=False)
        background.wait_for_all(120)  # this run's base: built in the background
        store = IndexStore.open(directory, create=False)
        try:
            base = postings.load(directory)
            assert base is not None and store.get_meta("postings_stamp") == base.nonce
            for query in QUERIES:
                with environ(BRAIN_LEXICAL_POSTINGS="1"):
                    ours = [(c.path, c.score) for c in lexical_search(store, query, depth=20)]
                with environ(BRAIN_LEXICAL_POSTINGS="off"):
                    theirs = [(c.path, c.score) for c in lexical_search(store, query, depth=20)]
                assert [p for p, _ in ours] == [p for p, _ in theirs] and ours, query
                assert all(abs(a - b) < 1e-9 for (_, a), (_, b) in zip(ours, theirs)), query
        finally:
            store.close()


def test_sigkill_mid_rebuild_keeps_the_old_index_and_the_next_rebuild_finishes(tmp_path, model, clean_build):
    """Issue 9, item 1: `--rebuild` used to delete the old index first; killed, it left 0 notes."""
    name, embedder = model
    vault, home = tmp_path / "vault", tmp_path / "home"
    _write_state(vault, final=True)
    first, directory = index_into(home, vault, embedder)
    before = _snapshot(directory)
    old_hits = _search(directory, embedder, QUERIES[0])
    staging = directory.with_name(directory.name + ".rebuild")

    started = time.time()
    proc = _start_wrapped(vault, _env(home, name), "--rebuild")
    # Watching both databases: a rebuild that wrote into the index itself (as it once did)
    # is killed the same way, and then fails the checks below.
    seen = _interrupt_when_committed(proc, [staging / "index.db", directory / "index.db"], started, signal.SIGKILL)
    proc.communicate(timeout=60)
    assert proc.returncode == -signal.SIGKILL
    assert 0 < seen < first.notes, "the rebuild must have been killed part-way"

    # The old index is untouched and answers: status, search, and `brain ask` itself.
    assert _same_snapshot(_snapshot(directory), before)
    assert _search(directory, embedder, QUERIES[0]) == old_hits
    with environ(BRAIN_HOME=str(home), BRAIN_EMBED_MODEL=name):
        status = vault_status(vault)
        assert status.notes == first.notes and status.pending == {"new": 0, "changed": 0, "renamed": 0, "deleted": 0}
        assert status.rebuild is not None and status.rebuild["notes"] >= seen
        from brain.recall.opening import open_recaller
        from brain.recall.types import RecallSettings

        recaller = open_recaller(vault, embedder=embedder, rerank_model=None)
        assert recaller.ask(QUERIES[0], "hybrid", RecallSettings(k=5)).results
        recaller.close()

    # The next --rebuild resumes the killed one, swaps it in, and equals a clean build.
    with environ(BRAIN_HOME=str(home)):
        report = index_vault(vault, embedder=embedder, progress=False, rebuild=True)
    assert report.notes == first.notes and report.unchanged >= seen
    assert 0 < report.embedded < report.chunks
    assert not staging.exists()
    assert {p.name for p in directory.parent.iterdir()} == {directory.name, directory.name + ".lock"}
    _assert_same_as_clean(directory, clean_build, embedder)
    assert history_problems(directory / "index.db") == []


def _same_snapshot(got: dict, want: dict) -> bool:
    """Snapshots compare vectors as arrays: equal when every field and vector is."""
    if got.keys() != want.keys() or got["notes"] != want["notes"] or got["links"] != want["links"]:
        return False
    if got["meta"] != want["meta"] or got["chunks"].keys() != want["chunks"].keys():
        return False
    return all(
        got["chunks"][key][:2] == want["chunks"][key][:2]
        and np.array_equal(got["chunks"][key][2], want["chunks"][key][2])
        for key in want["chunks"]
    )


def _history(db: Path) -> dict[str, list[tuple]]:
    """Each note's versions (event, ended, hash) by its first path, and its edges (target, open)."""
    conn = sqlite3.connect(f"file:{db}?mode=ro", uri=True)
    try:
        first = dict(conn.execute("SELECT note_id, path FROM note_versions GROUP BY note_id HAVING id = min(id)"))
        versions: dict[str, list[tuple]] = {}
        for note_id, event, ended, digest in conn.execute(
            "SELECT note_id, event, ended, hash FROM note_versions ORDER BY note_id, id"
        ):
            versions.setdefault(first[note_id], []).append((event, ended, digest))
        return versions
    finally:
        conn.close()


def test_sigkill_mid_update_leaves_history_consistent(tmp_path, model):
    """Issue 15: each batch's versions, past chunks and edges are committed with the batch, so
    a kill anywhere leaves no open edge without a current version, no note without its version,
    no past version without its chunks; the next run completes history as if never stopped."""
    name, embedder = model
    vault, home = tmp_path / "vault", tmp_path / "home"
    _write_state(vault, final=False)
    _, directory = index_into(home, vault, embedder)
    db = directory / "index.db"
    moment = time.time()
    time.sleep(0.01)
    _write_state(vault, final=True)  # new notes, changed ones, deleted ones
    unlinked = [i for i in range(1, 100, 9) if i not in DELETED | CHANGED]
    for i in unlinked:  # and notes that drop every link
        path, text = _note(i)
        (vault / path).write_text(text.replace("[[", "").replace("]]", ""), encoding="utf-8")
    started = time.time()
    proc = _start_wrapped(vault, _env(home, name))
    _interrupt_when_committed(proc, db, started, signal.SIGKILL, at_least=20)
    proc.communicate(timeout=60)
    assert proc.returncode == -signal.SIGKILL
    assert history_problems(db) == []

    with environ(BRAIN_HOME=str(home)):
        index_vault(vault, embedder=embedder, progress=False)
    assert history_problems(db) == []
    history = _history(db)
    for i in DELETED:
        path, _ = _note(i)
        assert history[path][-1][1] == "deleted"
    for i in CHANGED:
        path, _ = _note(i)
        assert [(event, ended) for event, ended, _ in history[path]] == [("created", "changed"), ("changed", None)]
    for i in range(100, NOTES):
        assert [event for event, _, _ in history[_note(i)[0]]] == ["created"]
    conn = sqlite3.connect(f"file:{db}?mode=ro", uri=True)
    try:
        for i in unlinked:
            edges = conn.execute(
                "SELECT e.recorded_to IS NULL FROM link_history e JOIN notes n ON n.id = e.source_id WHERE n.path = ?",
                (_note(i)[0],),
            ).fetchall()
            assert edges == [(0,), (0,), (0,)], i  # three links, each closed, none deleted
    finally:
        conn.close()
    # The past is searchable as it was: as of before the update, a changed note reads its old text.
    from brain.recall.opening import open_recaller
    from brain.recall.types import RecallSettings

    changed = sorted(CHANGED)[1]
    path, old_text = _note(changed, 0)
    query = " ".join(old_text.split("\n\n")[1].split()[:12])
    with environ(BRAIN_HOME=str(home), BRAIN_EMBED_MODEL=name):
        recaller = open_recaller(vault, embedder=embedder, rerank_model=None, update=False, as_of=moment)
        try:
            # Every note: what is checked is the text a past note is read with, not where it
            # ranks (the notes draw their words from one short list, and their vectors are near
            # one another's).
            result = recaller.ask(query, "hybrid", RecallSettings(k=NOTES))
        finally:
            recaller.close()
    hit = next(c for c in result.results if c.path == path)
    assert hit.text in old_text


def test_sigkill_mid_update_that_folds_leaves_history_consistent(tmp_path, model, monkeypatch):
    """BRAIN_VERSION_INTERVAL: a run that folds each note's quick second version into its first
    (deleting a version, extending another, moving edges) is killed part-way; each note is then
    folded or not, never half, and the next run folds the rest."""
    name, embedder = model
    monkeypatch.setenv("BRAIN_VERSION_INTERVAL", "300")
    vault, home = tmp_path / "vault", tmp_path / "home"
    count = 60

    def state(version: int) -> None:
        for i in range(count):
            path, text = _note(i, version)
            target = vault / path
            target.parent.mkdir(parents=True, exist_ok=True)
            target.write_text(text.replace("[[Note", f"[[Note {version}"), encoding="utf-8")  # links differ too

    state(0)
    _, directory = index_into(home, vault, embedder)
    db = directory / "index.db"
    state(1)
    with environ(BRAIN_HOME=str(home)):
        index_vault(vault, embedder=embedder, progress=False)
    time.sleep(0.01)
    between = time.time()  # the second versions' time, the first ones' once folded
    time.sleep(0.01)
    state(2)
    started = time.time()
    slowed = (  # each commit a tenth of a second longer: the kill lands among them
        "import time, brain.index.indexer as i; flush = i._Run._flush; "
        "i._Run._flush = lambda self, batch: (time.sleep(0.1), flush(self, batch))[1]; "
    )
    proc = subprocess.Popen(
        [sys.executable, "-c", slowed + WRAPPER, str(COMMIT_EVERY), "index", "--vault", str(vault)],
        env=_env(home, name),
        stdout=subprocess.PIPE,
        stderr=subprocess.PIPE,
        text=True,
    )
    _interrupt_when_committed(proc, db, started, signal.SIGKILL, at_least=20)
    proc.communicate(timeout=60)
    assert proc.returncode == -signal.SIGKILL
    assert history_problems(db) == []
    conn = sqlite3.connect(f"file:{db}?mode=ro", uri=True)
    try:  # the notes the killed run wrote have their third version, folded into the first
        done = conn.execute("SELECT count(*) FROM notes WHERE indexed_at > ?", (started,)).fetchone()[0]
        kept = conn.execute("SELECT count(*) FROM note_versions").fetchone()[0]
    finally:
        conn.close()
    assert 20 <= done < count and kept == 2 * count, (done, kept)  # killed part-way, no version more or less
    with environ(BRAIN_HOME=str(home)):
        index_vault(vault, embedder=embedder, progress=False)
    assert history_problems(db) == []
    history = _history(db)
    for i in range(count):
        assert [(event, ended) for event, ended, _ in history[_note(i)[0]]] == [
            ("created", "changed"),
            ("changed", None),
        ]
    conn = sqlite3.connect(f"file:{db}?mode=ro", uri=True)
    try:
        targets = conn.execute(
            "SELECT DISTINCT substr(target, 1, 7) FROM link_history WHERE recorded_from <= ?1"
            " AND (recorded_to IS NULL OR recorded_to > ?1)",
            (between,),
        ).fetchall()
    finally:
        conn.close()
    assert targets == [("Note 0 ",)]  # the first versions' links, as they wrote them
