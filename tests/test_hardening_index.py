"""Issue 9, the index side: each test reproduces a defect found by trying to break the index
(a rebuild that wipes it, damaged files, a read-only home, racing saves, skipped files counted
as stale, a misleading message), and holds the fix. Item numbers refer to issue 9.

Read-only homes are real: the CLI runs in a subprocess that cannot write (files chmod a-w; as
root, which ignores file modes, through `setpriv` without CAP_DAC_OVERRIDE).
"""

from __future__ import annotations

import json
import os
import shlex
import shutil
import sqlite3
import subprocess
import sys
from pathlib import Path

import pytest
from click.testing import CliRunner
from conftest import FakeEmbedder, write
from index_helpers import assert_faiss_matches, modes_binding_prefix

import brain.build_settings
import brain.embed
from brain import config
from brain.cli import cli
from brain.errors import ModelLoadError, NoIndexError
from brain.index import changes
from brain.index.health import damaged_message
from brain.index.indexer import index_vault
from brain.index.rebuild import rebuild_dir
from brain.index.status import vault_status
from brain.index.store import IndexStore
from brain.index.vectors import VectorIndex, load_current
from brain.index.writer_lock import VaultLocked
from brain.recall.opening import open_recaller
from brain.recall.types import RecallSettings

TESTS = Path(__file__).resolve().parent
QUERY = "sqlite wal checkpoint"


def _invoke(*args: str):
    return CliRunner().invoke(cli, list(args), catch_exceptions=False)


def _index(vault: Path, embedder=None, **kwargs):
    return index_vault(vault, embedder=embedder or FakeEmbedder(), progress=False, **kwargs)


def _ask(vault: Path, query: str = QUERY, *extra: str) -> list[str]:
    result = _invoke("ask", "--vault", str(vault), "--json", "--no-rerank", "-k", "6", *extra, query)
    assert result.exit_code == 0, result.output
    return [r["path"] for r in json.loads(result.stdout)["results"]]


def _one_line_error(result, *needles: str) -> str:
    """The command failed with exactly one line on the terminal, holding every needle."""
    assert result.exit_code == 1, result.output
    assert "Traceback" not in result.output
    assert result.output.startswith("Error: ") and result.output.count("\n") == 1, result.output
    for needle in needles:
        assert needle in result.output, (needle, result.output)
    return result.output


def _home_listing(directory: Path) -> set[str]:
    """What sits beside the vault's index folder under $BRAIN_HOME/vaults/."""
    return {p.name for p in directory.parent.iterdir()}


@pytest.fixture
def indexed(toy_vault):
    report = _index(toy_vault)
    return toy_vault, config.index_dir(toy_vault), report


# ----- 1. a failed or interrupted --rebuild must not wipe the index -------------------------


class _FakeTorchDevice:
    """torch.device as a CPU-only build of torch has it: a known type, or a RuntimeError."""

    def __init__(self, spec: str):
        kind, _, index = spec.partition(":")
        if kind not in ("cpu", "cuda", "mps"):
            raise RuntimeError(f"Expected one of cpu, cuda, mps device type at start of device string: {spec}")
        self.type, self.index = kind, int(index) if index else None


@pytest.mark.parametrize(
    "device, problem",
    [
        ("bogus", "'bogus' is not a torch device"),
        ("cuda", "this machine's torch has no CUDA device"),
        ("mps", "this machine's torch has no MPS device"),
    ],
)
def test_a_device_that_cannot_be_used_is_named_not_the_model(tmp_path, monkeypatch, device, problem):
    # BRAIN_DEVICE=bogus (or cuda on a CPU build) said the model folder "is a folder but not a
    # loadable model; set BRAIN_EMBED_MODEL": the wrong fix. Fakes for torch: no test loads it.
    from types import ModuleType, SimpleNamespace

    def load(name: str, device: str | None = None) -> None:
        _FakeTorchDevice(device or "cpu")
        raise AssertionError("Torch not compiled with CUDA enabled")

    fake_st = ModuleType("sentence_transformers")
    fake_st.SentenceTransformer = load
    fake_torch = SimpleNamespace(
        device=_FakeTorchDevice,
        cuda=SimpleNamespace(is_available=lambda: False, device_count=lambda: 0),
        backends=SimpleNamespace(mps=SimpleNamespace(is_available=lambda: False)),
    )
    monkeypatch.setitem(sys.modules, "sentence_transformers", fake_st)
    monkeypatch.setitem(sys.modules, "transformers", None)  # its progress bar: skipped
    monkeypatch.setitem(sys.modules, "torch", fake_torch)
    monkeypatch.setenv("BRAIN_DEVICE", device)
    with pytest.raises(ModelLoadError) as caught:
        brain.embed._load_sentence_transformer(str(tmp_path), None)
    message = str(caught.value)
    assert f"on BRAIN_DEVICE={device!r}: {problem}. Set BRAIN_DEVICE to cpu, cuda, cuda:N or mps" in message
    assert "loadable model" not in message and "\n" not in message
    monkeypatch.delenv("BRAIN_DEVICE")  # with no device set, the folder is what is wrong
    with pytest.raises(ModelLoadError, match="is a folder but not a loadable model; set BRAIN_EMBED_MODEL"):
        brain.embed._load_sentence_transformer(str(tmp_path), None)


def test_rebuild_with_a_model_that_cannot_load_keeps_the_old_index(indexed, monkeypatch):
    vault, directory, first = indexed
    before = _ask(vault)

    def cannot_load(name: str):
        raise ModelLoadError(f"cannot load the embedding model {name!r}: no such model")

    monkeypatch.setitem(brain.build_settings.EMBEDDERS, "broken", cannot_load)
    monkeypatch.setenv("BRAIN_EMBED_MODEL", "broken:64")
    _one_line_error(_invoke("index", "--vault", str(vault), "--rebuild"), "cannot load the embedding model")

    monkeypatch.setenv("BRAIN_EMBED_MODEL", "fake:64")
    status = vault_status(vault)
    assert (status.notes, status.chunks, status.model) == (35, first.chunks, "fake:64")
    assert _ask(vault) == before
    assert status.rebuild is None and not rebuild_dir(directory).exists()  # nothing embedded, nothing kept
    assert _home_listing(directory) == {directory.name, directory.name + ".lock"}


class _Probe(FakeEmbedder):
    """Runs ``check`` once, at the first batch a rebuild embeds (the model is loaded by then)."""

    def __init__(self, name: str, check):
        super().__init__(name)
        self.check, self.checked = check, False

    def embed_documents(self, texts, *, progress: bool = False):
        if not self.checked:
            self.checked = True
            self.check()
        return super().embed_documents(texts, progress=progress)


def test_rebuild_is_built_beside_and_the_old_index_answers_until_the_swap(indexed, monkeypatch):
    vault, directory, _first = indexed
    before = _ask(vault)
    reader = open_recaller(vault, update=False, embedder=FakeEmbedder())
    expected = [c.path for c in reader.ask(QUERY, "hybrid", RecallSettings(k=6)).results]

    def during_the_rebuild():
        staging = rebuild_dir(directory)
        assert (staging / "index.db").exists() and (staging / "rebuild.json").exists()
        status = vault_status(vault)
        assert (status.notes, status.model) == (35, "fake:64")
        assert status.rebuild is not None and status.rebuild["path"] == str(staging)
        during = open_recaller(vault, update=False, embedder=FakeEmbedder())
        assert [c.path for c in during.ask(QUERY, "hybrid", RecallSettings(k=6)).results] == expected
        during.close()
        with pytest.raises(VaultLocked):  # one writer per vault, rebuilds included
            _index(vault)
        # `ask` with a change pending answers from the old index and says why it is stale.
        write(vault, "Written during the rebuild.md", "# Written during the rebuild\n")
        updating = open_recaller(vault, embedder=FakeEmbedder())
        assert updating.stale == 1 and any(
            "another brain process is indexing this vault" in w for w in updating.warnings
        )
        updating.close()

    probe = _Probe("fake:32", during_the_rebuild)
    report = _index(vault, probe, rebuild=True)
    assert probe.checked
    assert (report.model, report.notes, report.embedded) == ("fake:32", 35, report.chunks)
    assert report.moved_aside is None
    status = vault_status(vault)
    assert (status.model, status.dim, status.notes, status.rebuild) == ("fake:32", 32, 35, None)
    assert _home_listing(directory) == {directory.name, directory.name + ".lock"}
    assert sorted(p.name for p in directory.iterdir() if not p.name.startswith("index.db-")) == [
        "index.db",
        "vectors.faiss",
        "vectors.json",
    ]
    assert_faiss_matches(directory)
    # The reader opened before the swap still answers from the index it opened.
    assert [c.path for c in reader.ask(QUERY, "hybrid", RecallSettings(k=6)).results] == expected
    reader.close()
    monkeypatch.setenv("BRAIN_EMBED_MODEL", "fake:32")  # a new reader opens the new index
    assert _ask(vault)[0] == before[0] == "Engineering/SQLite WAL mode.md"


def test_a_reader_holding_the_old_database_through_the_swap(indexed):
    """The old folder moves whole: an open reader keeps its database (and WAL), takes no
    FAISS file of the new index, writes none into it, and its closing touches nothing new."""
    vault, directory, _ = indexed
    old_store = IndexStore.open(directory, create=False)
    old_chunks = {r[0] for r in old_store.conn.execute("SELECT id FROM chunks")}
    write(vault, "0000 first.md", "# 0000 first\n\nSorted first, so every chunk id of the rebuild shifts.\n")
    _index(vault, rebuild=True)

    new_sidecar = (directory / "vectors.json").read_text()
    stale = load_current(old_store, 64)  # the new folder's FAISS file is not this database's
    import faiss

    ids = {int(i) for i in faiss.vector_to_array(stale.index.id_map)}
    assert ids == old_chunks
    assert (directory / "vectors.json").read_text() == new_sidecar  # not overwritten with the old index

    # A write to the new index sits in its WAL while the old connection closes: SQLite must
    # not fold or delete the new WAL on the old one's behalf.
    writer = IndexStore.open(directory, create=False)
    with writer.transaction():
        writer.set_meta("probe", "in the wal")
    assert Path(str(directory / "index.db") + "-wal").stat().st_size > 0
    old_store.close()
    fresh = sqlite3.connect(directory / "index.db")
    assert fresh.execute("SELECT value FROM meta WHERE key = 'probe'").fetchone() == ("in the wal",)
    assert fresh.execute("SELECT count(*) FROM notes WHERE path = '0000 first.md'").fetchone() == (1,)
    fresh.close()
    writer.close()
    assert_faiss_matches(directory)


def test_leftovers_of_a_cut_short_rebuild_are_never_taken_for_the_index(indexed, monkeypatch):
    vault, directory, first = indexed
    staging = rebuild_dir(directory)
    # Killed between the swap and the clean-up: the old index sits under the rebuild name,
    # without the marker of a rebuild in progress; the next run removes it.
    shutil.copytree(directory, staging)
    retired = directory.with_name(directory.name + ".retired")
    shutil.copytree(directory, retired)
    assert vault_status(vault).rebuild is None
    assert _index(vault).unchanged == 35
    assert not staging.exists() and not retired.exists()

    # A rebuild started with another model is not resumed with this one: it starts over.
    staging.mkdir()
    (staging / "rebuild.json").write_text(json.dumps({"model": "fake:16"}))
    IndexStore.open(staging).close()
    report = _index(vault, rebuild=True)
    assert report.embedded == report.chunks == first.chunks
    # No atomic exchange on this file system: two renames, same result.
    monkeypatch.setattr("brain.index.rebuild._exchange", lambda a, b: False)
    assert _index(vault, rebuild=True).notes == 35
    assert _home_listing(directory) == {directory.name, directory.name + ".lock"}
    assert _ask(vault)[0] == "Engineering/SQLite WAL mode.md"


def test_a_stopped_rebuild_is_resumed_by_the_next_one(indexed):
    vault, directory, first = indexed

    class Interrupt(Exception):
        pass

    calls = []

    class StopsLater(FakeEmbedder):
        def embed_documents(self, texts, *, progress=False):
            calls.append(len(texts))
            if len(calls) == 3:
                raise Interrupt()
            return super().embed_documents(texts, progress=progress)

    import brain.index.indexer

    old_batch, brain.index.indexer.CHUNKS_PER_BATCH = brain.index.indexer.CHUNKS_PER_BATCH, 16
    try:
        with pytest.raises(Interrupt):
            _index(vault, StopsLater(), rebuild=True)
    finally:
        brain.index.indexer.CHUNKS_PER_BATCH = old_batch
    done = vault_status(vault).rebuild
    assert done is not None and 0 < done["notes"] < 35 and done["model"] == "fake:64"
    assert vault_status(vault).notes == 35
    status = _invoke("status", "--vault", str(vault)).stdout
    assert f"rebuild: {done['notes']} notes so far in {rebuild_dir(directory)}" in status

    report = _index(vault, rebuild=True)
    assert report.notes == 35 and report.unchanged == done["notes"]
    assert 0 < report.embedded < first.chunks
    assert not rebuild_dir(directory).exists()
    assert_faiss_matches(directory)


# ----- 7. a damaged index.db: one line saying what to do; --rebuild recovers ----------------


def _damage(path: Path, how: str) -> bytes:
    size = path.stat().st_size
    if how == "garbage":
        path.write_bytes(os.urandom(size))
    elif how == "truncated":
        os.truncate(path, size // 3)
    elif how == "emptied":  # 0 bytes: SQLite would take it for a new database
        os.truncate(path, 0)
    elif how == "header":
        with open(path, "r+b") as handle:
            handle.write(b"\0" * 100)
    return path.read_bytes()


@pytest.mark.parametrize("how", ["garbage", "truncated", "header", "emptied"])
def test_damaged_index_db_is_one_line_everywhere(indexed, how):
    vault, directory, _ = indexed
    _damage(directory / "index.db", how)
    needles = (f"the index database {directory / 'index.db'} is damaged", f"brain index --rebuild --vault {vault}")
    _one_line_error(_invoke("status", "--vault", str(vault)), *needles)
    _one_line_error(_invoke("ask", "--vault", str(vault), "--no-update", "--no-rerank", QUERY), *needles)
    _one_line_error(_invoke("ask", "--vault", str(vault), "--no-rerank", QUERY), *needles)
    _one_line_error(_invoke("index", "--vault", str(vault)), *needles)
    _one_line_error(_invoke("history", "Home.md", "--vault", str(vault)), *needles)


@pytest.mark.parametrize("how", ["garbage", "truncated", "emptied"])
def test_rebuild_starts_over_from_a_damaged_index_and_moves_it_aside(indexed, how):
    vault, directory, first = indexed
    before = _ask(vault)
    damaged = _damage(directory / "index.db", how)
    result = _invoke("index", "--vault", str(vault), "--rebuild", "--json")
    assert result.exit_code == 0, result.output
    report = json.loads(result.stdout)
    assert (report["notes"], report["embedded"]) == (35, first.chunks)
    moved = Path(report["moved_aside"])
    assert moved.parent == directory.parent and moved.name.startswith(directory.name + ".damaged-")
    assert (moved / "index.db").read_bytes() == damaged  # kept as it was, for the user
    assert f"was moved to {moved}" in result.stderr
    assert _ask(vault) == before
    assert vault_status(vault).notes == 35


def test_damaged_faiss_file_is_rebuilt_from_sqlite_with_a_warning(indexed, caplog):
    _vault, directory, _ = indexed
    store = IndexStore.open(directory, create=False)
    try:
        expected = load_current(store, 64).search(FakeEmbedder().embed_query(QUERY), 10)[0].tolist()
        faiss_file = directory / "vectors.faiss"
        for damage in (
            lambda: faiss_file.write_bytes(os.urandom(faiss_file.stat().st_size)),
            lambda: os.truncate(faiss_file, faiss_file.stat().st_size // 2),
            lambda: faiss_file.write_bytes(b""),
        ):
            damage()
            caplog.clear()
            index = load_current(store, 64)
            assert index.search(FakeEmbedder().embed_query(QUERY), 10)[0].tolist() == expected
            assert any("vectors.faiss" in r.getMessage() and "rebuilding" in r.getMessage() for r in caplog.records)
            assert_faiss_matches(directory)  # and saved again
    finally:
        store.close()


# ----- 8. a sidecar of the wrong shape is rebuilt, not a crash ------------------------------


@pytest.mark.parametrize(
    "sidecar",
    [
        "{}",
        "null",
        "[]",
        '{"version": "x", "dim": 384}',
        '{"version": 3, "dim": 64}',
        '{"version": 1, "dim": -5, "count": "many"}',
        "[1, 2, 3]",
        '"text"',
    ],
)
def test_faiss_sidecar_of_the_wrong_shape_is_rebuilt(indexed, sidecar):
    vault, directory, _ = indexed
    before = _ask(vault)
    (directory / "vectors.json").write_text(sidecar)
    assert _ask(vault) == before
    assert_faiss_matches(directory)
    (directory / "vectors.json").write_text(sidecar)
    write(vault, "New note.md", "# New note\n\nabout [[Home]]\n")
    result = _invoke("index", "--vault", str(vault), "--json")
    assert result.exit_code == 0, result.output
    assert json.loads(result.stdout)["notes"] == 36
    assert_faiss_matches(directory)


# ----- 10. an unwritable or read-only BRAIN_HOME -------------------------------------------


def _brain(home: Path, *args: str) -> subprocess.CompletedProcess:
    """`brain ARGS` in a process that cannot write where file modes forbid it."""
    env = {**os.environ, "BRAIN_HOME": str(home), "BRAIN_EMBED_MODEL": "fake:64", "BRAIN_RERANK_MODEL": "none"}
    code = "import sys, fakes; sys.argv[0] = 'brain'; from brain.__main__ import main; main()"
    return subprocess.run(
        [*modes_binding_prefix(), sys.executable, "-c", code, *args],
        cwd=TESTS,
        env=env,
        capture_output=True,
        text=True,
        timeout=120,
        check=False,
    )


def _chmod_tree(top: Path, writable: bool) -> None:
    for path in [top, *top.rglob("*")]:
        mode = path.stat().st_mode
        path.chmod((mode | 0o200) if writable else (mode & ~0o222))


@pytest.fixture
def read_only(request):
    """read_only(folder): make a tree unwritable for this test; restored afterwards."""
    made: list[Path] = []

    def make(top: Path) -> Path:
        _chmod_tree(top, writable=False)
        made.append(top)
        return top

    yield make
    for top in made:
        _chmod_tree(top, writable=True)


def _one_line_stderr(proc: subprocess.CompletedProcess, *needles: str) -> None:
    assert proc.returncode == 1, proc.stderr
    assert "Traceback" not in proc.stderr and proc.stderr.startswith("Error: ") and proc.stderr.count("\n") == 1, (
        proc.stderr
    )
    for needle in needles:
        assert needle in proc.stderr, (needle, proc.stderr)


@pytest.mark.slow  # subprocesses
def test_read_only_home_still_answers_status_and_ask(indexed, brain_home, read_only):
    vault, directory, _first = indexed
    modes_binding_prefix()
    before = _ask(vault)
    (directory / "vectors.faiss").unlink()  # the cache must be rebuilt, and cannot be saved
    read_only(brain_home)

    status = _brain(brain_home, "status", "--vault", str(vault), "--json")
    assert status.returncode == 0, status.stderr
    assert json.loads(status.stdout)["notes"] == 35 and "Traceback" not in status.stderr
    asked = _brain(brain_home, "ask", "--vault", str(vault), "--no-update", "--json", "--no-rerank", "-k", "6", QUERY)
    assert asked.returncode == 0, asked.stderr
    assert [r["path"] for r in json.loads(asked.stdout)["results"]] == before
    asked = _brain(brain_home, "ask", "--vault", str(vault), "--no-update", "--no-rerank", QUERY)
    assert asked.returncode == 0 and "SQLite WAL mode" in asked.stdout, asked.stderr
    assert "vectors.faiss is missing" in asked.stderr and "kept in memory only" in asked.stderr
    assert "Traceback" not in asked.stderr

    # A changed note: `ask` answers from the index as it is, and says why it is not updated.
    note = vault / "Home.md"
    note.write_text(note.read_text(encoding="utf-8") + "\nOne more line.\n", encoding="utf-8")
    asked = _brain(brain_home, "ask", "--vault", str(vault), "--json", "--no-rerank", QUERY)
    assert asked.returncode == 0, asked.stderr
    answer = json.loads(asked.stdout)
    assert answer["stale_notes"] == 1 and answer["results"]
    assert any(f"the index folder {directory} is read-only" in w for w in answer["warnings"])
    assert "Traceback" not in asked.stderr

    _one_line_stderr(_brain(brain_home, "index", "--vault", str(vault)), "cannot write to", str(directory.parent))
    _one_line_stderr(_brain(brain_home, "index", "--vault", str(vault), "--rebuild"), "cannot write to")
    _one_line_stderr(_brain(brain_home, "index", "--vault", str(vault), "--repair"), "cannot write to")
    assert not (directory / "vectors.faiss").exists()


@pytest.mark.slow  # subprocesses
def test_unwritable_brain_home_is_one_line_naming_the_folder(toy_vault, tmp_path, read_only):
    modes_binding_prefix()
    parent = tmp_path / "locked"
    parent.mkdir()
    home = parent / "brain"
    read_only(parent)
    _one_line_stderr(_brain(home, "index", "--vault", str(toy_vault)), "cannot write to", str(parent))
    status = _brain(home, "status", "--vault", str(toy_vault), "--json")
    assert status.returncode == 0, status.stderr
    assert json.loads(status.stdout)["pending"]["new"] == 35
    _one_line_stderr(_brain(home, "ask", "--vault", str(toy_vault), QUERY), "no index for")
    assert not home.exists()


@pytest.mark.slow  # subprocesses
def test_an_old_index_that_cannot_be_deleted_is_said_not_a_traceback(indexed, brain_home, read_only):
    """The old index left under the rebuild name (a swap's clean-up that could not delete it,
    e.g. built by another user): the next rebuild says so in one line; `index` warns."""
    vault, directory, _first = indexed
    modes_binding_prefix()
    staging = rebuild_dir(directory)
    shutil.copytree(directory, staging)  # no rebuild marker: the old index of a swap
    read_only(staging)
    _one_line_stderr(
        _brain(brain_home, "index", "--vault", str(vault), "--rebuild", "--yes"), f"cannot remove {staging}"
    )
    indexed_again = _brain(brain_home, "index", "--vault", str(vault))
    assert indexed_again.returncode == 0, indexed_again.stderr
    assert f"the replaced index could not be deleted from {staging}" in indexed_again.stderr
    assert "Traceback" not in indexed_again.stderr
    assert staging.exists()


# ----- 12. concurrent FAISS saves -----------------------------------------------------------

_SAVER = """
import sys
import numpy as np
from pathlib import Path
from brain.index.vectors import VectorIndex
directory, first, saves = Path(sys.argv[1]), int(sys.argv[2]), int(sys.argv[3])
for version in range(first, first + saves):
    count = 1 + version % 97  # each version has its own count and ids
    index = VectorIndex.empty(8, version, "the-index")
    rng = np.random.default_rng(version)
    index.add(np.arange(count, dtype=np.int64) + version * 1000, rng.standard_normal((count, 8)).astype(np.float32))
    index.save(directory)
"""


@pytest.mark.slow  # subprocesses
def test_concurrent_faiss_saves_and_readers_never_disagree(tmp_path):
    import faiss

    directory = tmp_path / "idx"
    directory.mkdir()
    writers = [
        subprocess.Popen(
            [sys.executable, "-c", _SAVER, str(directory), str(first), "400"],
            stdout=subprocess.PIPE,
            stderr=subprocess.PIPE,
            text=True,
        )
        for first in (1_000, 5_000)
    ]
    loads = 0
    try:
        while any(w.poll() is None for w in writers):
            loaded, _ = VectorIndex.load_file(directory)
            if loaded is None:
                continue
            loads += 1
            ids = faiss.vector_to_array(loaded.index.id_map)
            assert loaded.size == 1 + loaded.version % 97, "FAISS file and sidecar of two saves"
            assert (ids // 1000 == loaded.version).all(), "FAISS file and sidecar of two saves"
    finally:
        for w in writers:
            if w.poll() is None:
                w.kill()
            w.wait()
    for w in writers:
        _, err = w.communicate()
        assert w.returncode == 0, err
    assert loads > 0
    assert sorted(p.name for p in directory.iterdir()) == ["vectors.faiss", "vectors.json"]  # no temp left


@pytest.mark.slow  # subprocesses
def test_temp_files_of_a_killed_save_are_removed_by_the_next(tmp_path):
    dead = subprocess.run(
        [sys.executable, "-c", "import os; print(os.getpid())"], capture_output=True, text=True, check=True
    )
    pid = int(dead.stdout)
    orphan = tmp_path / f"vectors.faiss.{pid}.0badf00d.tmp"
    orphan.write_bytes(b"half a file")
    alive = tmp_path / f"vectors.faiss.{os.getpid()}.feedbeef.tmp"  # this process: still saving
    alive.write_bytes(b"in progress")
    VectorIndex.empty(4, 1, "x").save(tmp_path)
    assert not orphan.exists() and alive.exists()


def test_sidecar_that_does_not_describe_the_faiss_file_is_rebuilt(indexed):
    vault, directory, _ = indexed
    before = _ask(vault)
    sidecar = json.loads((directory / "vectors.json").read_text())
    for wrong in (
        {"count": sidecar["count"] + 1},
        {"ids": "0" * 32},
        {"index_id": "another-index"},
        {"bytes": sidecar["bytes"] - 8},
    ):
        (directory / "vectors.json").write_text(json.dumps({**sidecar, **wrong}))
        assert _ask(vault) == before
        assert_faiss_matches(directory)
        assert json.loads((directory / "vectors.json").read_text()) == sidecar


# ----- 13. skipped files are not stale ------------------------------------------------------


@pytest.fixture
def vault_with_skips(tmp_path, monkeypatch):
    root = tmp_path / "skips"
    for name in ("Alpha", "Beta", "Gamma"):
        write(root, f"{name}.md", f"# {name}\n\nA note about {name.lower()} and sqlite.\n")
    (root / "binary.md").write_bytes(b"\x00\x01\x02PNG not text\x00" * 10)
    write(root, "big.md", "# Big\n\n" + "many words about sqlite wal checkpoints " * 100)  # ~4 KB
    monkeypatch.setenv("BRAIN_MAX_NOTE_MB", "0.002")  # ~2 KB
    report = _index(root)
    assert (report.notes, report.skipped) == (3, 2)
    return root


def test_skipped_files_are_not_stale_for_ask(vault_with_skips, monkeypatch, caplog, closing):
    root = vault_with_skips
    assert vault_status(root).pending == {"new": 0, "changed": 0, "renamed": 0, "deleted": 0}
    reader = open_recaller(root, update=False, embedder=FakeEmbedder())
    assert reader.stale == 0 and reader.warnings == []
    reader.close()
    caplog.clear()
    updating = open_recaller(root, embedder=FakeEmbedder())  # no index pass, no skip warnings again
    assert updating.warnings == [] and not [r for r in caplog.records if "skipped" in r.getMessage()]
    updating.close()
    store = IndexStore.open(config.index_dir(root), create=False)
    try:
        plan = changes.plan(root, store)
        assert plan.candidates == [] and {s.path: s.reason for s in plan.skipped} == {
            "big.md": "too-large",
            "binary.md": "binary",
        }
    finally:
        store.close()
    assert {(s["path"], s["reason"]) for s in vault_status(root).skipped} == {
        ("big.md", "too-large"),
        ("binary.md", "binary"),
    }

    # A raised limit, or a fixed file, brings them in.
    monkeypatch.setenv("BRAIN_MAX_NOTE_MB", "1")
    assert closing(open_recaller(root, update=False, embedder=FakeEmbedder())).stale == 1
    (root / "binary.md").write_text("# Binary no more\n\nplain text now\n", encoding="utf-8")
    assert _index(root).notes == 5


def test_skipped_rows_from_before_the_stat_columns_are_read_once_more(vault_with_skips, closing):
    root = vault_with_skips
    store = IndexStore.open(config.index_dir(root), create=False)
    with store.transaction() as conn:  # what m004_skipped_stat leaves on an older index
        conn.execute("UPDATE skipped SET size = NULL, mtime_ns = NULL")
    store.close()
    assert closing(open_recaller(root, update=False, embedder=FakeEmbedder())).stale == 2
    assert _index(root).skipped == 2
    assert closing(open_recaller(root, update=False, embedder=FakeEmbedder())).stale == 0


@pytest.mark.slow  # subprocesses
def test_unreadable_file_is_not_stale_until_it_is_readable(tmp_path, brain_home):
    modes_binding_prefix()
    root = tmp_path / "vault"
    write(root, "Readable.md", "# Readable\n\nsqlite notes\n")
    secret = write(root, "Private.md", "# Private\n\nkept from brain\n")
    secret.chmod(0)
    try:
        indexed = _brain(brain_home, "index", "--vault", str(root), "--json")
        assert indexed.returncode == 0, indexed.stderr
        assert json.loads(indexed.stdout)["skipped"] == 1
        asked = _brain(brain_home, "ask", "--vault", str(root), "--no-update", "--json", "--no-rerank", "sqlite")
        assert asked.returncode == 0, asked.stderr
        assert json.loads(asked.stdout)["stale_notes"] == 0 and "changed since" not in asked.stderr
        asked = _brain(brain_home, "ask", "--vault", str(root), "--json", "--no-rerank", "sqlite")
        assert "Private.md" not in asked.stderr  # no index pass, no skip warning again
    finally:
        secret.chmod(0o644)
    asked = _brain(brain_home, "ask", "--vault", str(root), "--no-update", "--json", "--no-rerank", "sqlite")
    assert json.loads(asked.stdout)["stale_notes"] == 1  # readable again: it is pending


def test_a_vault_folder_that_cannot_be_searched_is_one_line_and_deletes_nothing(toy_vault, brain_home):
    """A vault folder listed but not searchable (mode r without x): every entry's stat failed,
    the walk found nothing and the run deleted every note, exit 0, saying nothing; its folders
    were "broken-symlink"s. A folder inside it so is "unreadable"."""
    modes_binding_prefix()
    assert _brain(brain_home, "index", "--vault", str(toy_vault)).returncode == 0
    toy_vault.chmod(0o644)
    try:
        for command in ("index", "status"):
            _one_line_stderr(_brain(brain_home, command, "--vault", str(toy_vault)), "cannot read the vault folder")
    finally:
        toy_vault.chmod(0o755)
    write(toy_vault, "People/Engineers/Grace Hopper.md", "# Grace Hopper\n")
    (toy_vault / "People").chmod(0o644)
    try:
        indexed = _brain(brain_home, "index", "--vault", str(toy_vault), "--json")
        status = _brain(brain_home, "status", "--vault", str(toy_vault), "--json")
    finally:
        (toy_vault / "People").chmod(0o755)
    report = json.loads(indexed.stdout)
    assert report["removed"] == len(list((toy_vault / "People").glob("*.md"))) and report["new"] == 0
    skipped = {s["path"]: s["reason"] for s in json.loads(status.stdout)["skipped"] if s["path"].startswith("People/")}
    assert skipped["People/Engineers/"] == "unreadable" and set(skipped.values()) == {"unreadable"}


# ----- 18. an indexed empty vault -----------------------------------------------------------


def test_ask_on_an_indexed_empty_vault_says_it_has_no_notes(tmp_path):
    root = tmp_path / "empty"
    (root / ".obsidian").mkdir(parents=True)
    (root / ".obsidian" / "workspace.md").write_text("# ws\n")
    (root / "binary.md").write_bytes(b"\x00\x01 not text")
    assert _invoke("index", "--vault", str(root)).exit_code == 0
    output = _one_line_error(
        _invoke("ask", "--vault", str(root), QUERY),
        f"the vault {root} has no notes to search",
        "2 files skipped",
        "brain status",
    )
    assert "run `brain index`" not in output
    _one_line_error(_invoke("ask", "--vault", str(root), "--no-update", QUERY), "has no notes to search")

    bare = tmp_path / "bare"
    bare.mkdir()
    assert _invoke("index", "--vault", str(bare)).exit_code == 0
    output = _one_line_error(_invoke("ask", "--vault", str(bare), QUERY), "has no notes to search")
    assert "skipped" not in output

    # Notes written since: `ask` indexes them first, as it does for any change.
    write(root, "First.md", "# First\n\nsqlite wal checkpoint notes\n")
    assert _ask(root) == ["First.md"]


def test_index_of_a_folder_with_no_notes_says_so_and_where_they_are_looked_for(tmp_path):
    """`brain index --vault ~/Documents` (the notes one folder deeper, elsewhere) printed "0 notes,
    0 chunks indexed", exit 0, as if all were well: a new user learnt it at `brain ask`."""
    bare = tmp_path / "bare"
    bare.mkdir()
    out = _invoke("index", "--vault", str(bare))
    assert out.exit_code == 0 and out.stdout.startswith("0 notes, 0 chunks indexed")
    assert out.stdout.splitlines()[-1] == (
        f"  no notes in {bare}: brain indexes the *.md files in it and its folders; if the notes are "
        "elsewhere, give that folder (--vault PATH or BRAIN_VAULT)"
    )
    (bare / ".obsidian").mkdir()
    (bare / ".obsidian" / "workspace.md").write_text("# ws\n")
    out = _invoke("index", "--vault", str(bare))
    assert out.stdout.splitlines()[-1].endswith("; of the 1 file skipped, `brain status -v` says why")
    assert "no notes in" not in _invoke("index", "--vault", str(bare), "--json").stdout
    write(bare, "First.md", "# First\n\nsqlite wal checkpoint notes\n")
    assert "no notes in" not in _invoke("index", "--vault", str(bare)).stdout


def test_never_indexed_is_still_its_own_message(toy_vault):
    with pytest.raises(NoIndexError, match="no index for"):
        open_recaller(toy_vault)


def test_a_swap_that_cannot_rename_keeps_the_old_index_and_the_rebuild(indexed, monkeypatch):
    """Where a folder with open files cannot be renamed (Windows), the swap fails whole: the old
    index stays in place, the finished rebuild waits, and the next --rebuild just swaps it in."""
    vault, directory, _first = indexed
    before = _ask(vault)
    staging = rebuild_dir(directory)
    real_rename = os.rename

    def busy(src, dst):
        if Path(src) == staging:
            raise PermissionError(13, "The process cannot access the file", str(src))
        return real_rename(src, dst)

    monkeypatch.setattr("brain.index.rebuild._exchange", lambda a, b: False)
    monkeypatch.setattr(os, "rename", busy)
    output = _one_line_error(
        _invoke("index", "--vault", str(vault), "--rebuild"),
        f"the rebuilt index is complete in {staging}",
        "run `brain index --rebuild` again",
    )
    monkeypatch.setattr(os, "rename", real_rename)
    assert "Traceback" not in output
    assert _ask(vault) == before and vault_status(vault).rebuild["notes"] == 35
    report = _index(vault, rebuild=True)
    assert (report.notes, report.embedded) == (35, 0)
    assert _home_listing(directory) == {directory.name, directory.name + ".lock"}


def test_an_index_from_before_the_new_migrations_is_upgraded(tmp_path):
    from brain.index.schema import INDEX_MIGRATIONS
    from brain.migrations import Migrations, connect

    directory = tmp_path / "idx"
    directory.mkdir()
    older = Migrations("index")
    older.steps = INDEX_MIGRATIONS.steps[:2]  # m001_initial, m002_lexical
    conn = connect(str(directory / "index.db"))
    older.apply(conn)
    conn.execute("INSERT INTO skipped (path, reason, detail) VALUES ('x.md', 'binary', '')")
    conn.close()
    store = IndexStore.open(directory)
    try:
        assert INDEX_MIGRATIONS.pending(store.conn) == []
        assert len(store.index_id() or "") == 16
        assert store.skipped_for_content() == {} and store.skipped()[0]["path"] == "x.md"
    finally:
        store.close()


def _tree(root: Path) -> dict[str, tuple[int, int, int]]:
    """Every entry under ``root`` (dot-folders too) with its mode, size and mtime."""
    return {
        str(p.relative_to(root)): (p.lstat().st_mode, p.lstat().st_size, p.lstat().st_mtime_ns) for p in root.rglob("*")
    } | {".": (root.stat().st_mode, 0, root.stat().st_mtime_ns)}


def test_no_command_writes_inside_the_vault(toy_vault, tmp_path):
    """The README: "brain never writes inside the vault" (the index lives in $BRAIN_HOME)."""
    before = _tree(toy_vault)
    queries = tmp_path / "q.jsonl"
    queries.write_text(json.dumps({"id": "q", "query": "graph rag", "relevant": ["AI/Graph RAG.md"]}) + "\n")
    v = ["--vault", str(toy_vault)]
    for args in (
        ["index", *v],
        ["index", "--verify", *v],
        ["ask", "graph rag", *v],
        ["ask", "graph rag", "--json", "--ab", *v],
        ["ask", "graph rag", "--context", "--as-of", "1d", *v],
        ["status", "-v", *v],
        ["history", "AI/Graph RAG.md", *v],
        ["neighbours", "Graph RAG", *v],
        ["note", "AI/Graph RAG.md", *v],
        ["eval", str(queries), *v],
        ["prune", "--before", "1d", "--vacuum", *v],
        ["index", "--repair", *v],
    ):
        result = CliRunner().invoke(cli, args)
        assert result.exit_code in (0, 1), (args, result.output)
        assert _tree(toy_vault) == before, args


def test_a_rebuild_a_backup_and_a_watching_server_write_nothing_inside_the_vault(toy_vault, tmp_path):
    """The same promise for what the list above left out: `brain index --rebuild` (which builds
    beside the index and swaps), `brain backup`, and `brain serve` (its watcher, its passes, its
    answers, its stop, which writes the recall cache) with `brain ask` answered through it."""
    from serve_helpers import served

    v = ["--vault", str(toy_vault)]
    assert CliRunner().invoke(cli, ["index", *v]).exit_code == 0
    before = _tree(toy_vault)
    for args in (["index", "--rebuild", *v], ["backup", str(tmp_path / "copy")]):
        result = CliRunner().invoke(cli, args)
        assert result.exit_code == 0, (args, result.output)
        assert _tree(toy_vault) == before, args
    with served(toy_vault):
        result = CliRunner().invoke(cli, ["ask", "graph rag", "--json", *v])
        assert result.exit_code == 0 and json.loads(result.stdout)["results"], result.output
        assert _tree(toy_vault) == before
    assert _tree(toy_vault) == before


def test_every_mcp_tool_and_both_hooks_write_nothing_inside_the_vault(toy_vault, brain_home):
    """The same promise for what runs unasked in an agent's session: every tool of `brain mcp`
    (over an index one edit behind, which its first call brings up to date in this process), and
    the Stop and prompt hooks run from the vault as Claude Code's project folder, the transcript
    kept in it."""
    import asyncio

    from ledger_helpers import Transcript, brain_command, hook_payload
    from mcp import Client

    from brain.mcp.backend import Backend
    from brain.mcp.server import build_server

    index_vault(toy_vault, embedder=FakeEmbedder(), progress=False)
    (toy_vault / "AI" / "Graph RAG.md").write_text("# Graph RAG\n\nedited since: the graph and its links\n")
    transcript = Transcript(toy_vault / "session.jsonl", cwd=str(toy_vault))
    transcript.prompt("how should graph rag work in agent memory?")
    transcript.tool("Read", file_path=str(toy_vault / "AI" / "Graph RAG.md"))
    transcript.text("I decided to use the wikilink graph.")
    transcript.write()
    before = _tree(toy_vault)
    backend = Backend(toy_vault.resolve(), embedder=FakeEmbedder(), use_server=False, watch=False)

    async def every_tool() -> None:
        async with Client(build_server(toy_vault.resolve(), backend)) as session:
            for name, arguments in (
                ("search", {"query": "graph rag", "k": 3}),
                ("search", {"query": "graph rag", "as_of": "2020-01-01"}),
                ("get_note", {"note": "Graph RAG"}),
                ("get_note", {"note": "Graph RAG", "as_of": "1d"}),
                ("neighbours", {"note": "Graph RAG"}),
                ("history", {"note": "Graph RAG"}),
                ("recent_turns", {}),
                ("status", {}),
            ):
                result = await session.call_tool(name, arguments)
                assert not result.is_error or "as_of" in arguments, (name, result)  # the index began today
                assert _tree(toy_vault) == before, (name, arguments)

    try:
        asyncio.run(every_tool())
    finally:
        backend.close()
    assert _tree(toy_vault) == before
    command, env = brain_command()
    env.update(BRAIN_HOME=str(brain_home), BRAIN_VAULT=str(toy_vault), BRAIN_EMBED_MODEL="fake:64")
    payload = hook_payload(transcript.path, cwd=str(toy_vault))
    for kind, extra in (("stop", {}), ("prompt", {"hook_event_name": "UserPromptSubmit", "prompt": "graph rag?"})):
        done = subprocess.run(
            [*command, "hook", kind],
            input=json.dumps(payload | extra).encode(),
            env=env,
            cwd=toy_vault,
            capture_output=True,
            timeout=60,
        )
        assert done.returncode == 0 and done.stderr == b"", (kind, done.stderr)
        assert _tree(toy_vault) == before, kind
    assert sqlite3.connect(brain_home / "brain.db").execute("SELECT count(*) FROM turns").fetchone() == (1,)


def test_the_commands_an_error_suggests_quote_a_vault_with_a_space(tmp_path):
    vault = tmp_path / "Obsidian Vault"
    vault.mkdir()
    quoted = shlex.quote(str(vault.resolve()))
    out = CliRunner().invoke(cli, ["ask", "--vault", str(vault), "--no-update", "platypus"])
    assert out.exit_code == 1 and f"run `brain index --vault {quoted}` first" in out.output, out.output
    assert damaged_message(tmp_path / "index.db", vault, "x").count(f"--vault {shlex.quote(str(vault))}`") == 2


def test_a_deleted_working_directory_is_one_line_not_a_traceback(tmp_path):
    """A shell left in a folder deleted under it: `brain index --vault .` resolved "." inside
    pathlib and printed its traceback (and the real model's import did the same for any ask).
    One line saying what to do; absolute paths still work from there."""
    vault = tmp_path / "vault"
    write(vault, "a.md", "# A\n\nSome words about deploying.\n")
    gone = tmp_path / "gone"
    env = {
        **os.environ,
        "BRAIN_HOME": str(tmp_path / "home"),
        "BRAIN_EMBED_MODEL": "fake:64",
        "BRAIN_RERANK_MODEL": "none",
    }
    script = str(TESTS / "brain_with_fakes.py")
    # A script file, as the `brain` command is, not `python -c`: Python 3.13.0-3.13.2 answer any
    # missing module attribute with SystemError when sys.path[0] is "" (-c's) and the working
    # directory is gone (CPython gh-130932), and numpy's import asks for some: a traceback before
    # brain ran. The `brain` command's sys.path[0] is its bin folder: it never met that bug.
    runner = tmp_path / "in_a_deleted_folder.py"
    runner.write_text(
        f"import os, runpy\nos.mkdir({str(gone)!r})\nos.chdir({str(gone)!r})\nos.rmdir({str(gone)!r})\n"
        f"runpy.run_path({script!r}, run_name='__main__')\n",
        encoding="utf-8",
    )

    def brain(*args: str) -> subprocess.CompletedProcess:
        return subprocess.run(
            [sys.executable, str(runner), *args], env=env, capture_output=True, text=True, timeout=120, check=False
        )

    relative = brain("index", "--vault", ".")
    assert relative.returncode == 1
    assert "Traceback" not in relative.stderr
    assert relative.stderr.strip() == (
        "Error: the working directory no longer exists (deleted or moved); cd to a folder that does."
    )
    absolute = brain("index", "--vault", str(vault))
    assert absolute.returncode == 0, absolute.stderr
    assert "1 new" in absolute.stdout


def test_ctrl_c_while_brain_is_still_starting_is_click_s_one_line_not_a_traceback(tmp_path):
    """Ctrl-C in the first tenth of a second of any command (while `brain.cli` and what it imports
    load, before click answers Ctrl-C with "Aborted!") printed Python's traceback ending in
    `from .cli import cli` / KeyboardInterrupt (bench/chaos.py met it on `brain prune`; 9 Ctrl-C
    of 29 sent 0.02 s apart in the first 0.6 s). The same "Aborted!", exit status 1, as later on."""
    code = (
        "import os, signal, sys\n"
        "signal.signal(signal.SIGINT, signal.default_int_handler)  # as a terminal's brain has it\n"
        "class CtrlC:  # the key pressed as brain.cli is being imported\n"
        "    def find_spec(self, name, path=None, target=None):\n"
        "        if name == 'brain.cli':\n"
        "            os.kill(os.getpid(), signal.SIGINT)\n"
        "        return None\n"
        "sys.meta_path.insert(0, CtrlC())\n"
        "sys.argv = ['brain'] + sys.argv[1:]\n"
        "from brain.__main__ import main\n"
        "main()\n"
    )
    env = {**os.environ, "BRAIN_HOME": str(tmp_path / "home"), "PYTHONPATH": str(TESTS.parent)}
    proc = subprocess.run(
        [sys.executable, "-c", code, "status", "--vault", str(tmp_path)],
        env=env,
        capture_output=True,
        text=True,
        timeout=120,
        check=False,
    )
    assert "Traceback" not in proc.stderr
    assert (proc.returncode, proc.stderr) == (1, "Aborted!\n")


def _decode_before(data: bytes) -> tuple[str, list[str]]:
    try:
        return data.decode("utf-8"), []
    except UnicodeDecodeError:
        return data.decode("utf-8", "replace"), ["invalid UTF-8 at byte 2; undecodable bytes replaced"]


def test_an_index_made_by_older_decoding_rules_reads_those_notes_again(tmp_path, monkeypatch):
    """A cp1251 note an older brain indexed as U+FFFDs, and a note with one stray NUL it skipped
    as binary, stayed so after an upgrade until their bytes changed (a note is read only when
    its size or mtime does). A run by brain with other decoding rules (``notes.DECODING``) reads
    them again: the same bytes make no new version."""
    from index_helpers import IndexView, index_into

    import brain.notes

    vault = tmp_path / "vault"
    vault.mkdir()
    (vault / "ru.md").write_bytes("# Заметка\n\nМосква зимой: снег и мороз.\n".encode("cp1251"))
    (vault / "stray.md").write_bytes(b"# Stray\n\nsome text \x00and more text\n")
    (vault / "plain.md").write_text("# Plain\n\nNothing odd.\n")
    home = tmp_path / "home"
    with monkeypatch.context() as older:  # the rules before: U+FFFD, and any NUL binary
        older.setattr(brain.notes, "decode", _decode_before)
        older.setattr(brain.notes, "looks_binary", lambda data: b"\x00" in data.rstrip(b"\x00"))
        report, directory = index_into(home, vault)
    assert (report.new, report.skipped) == (2, 1)
    with sqlite3.connect(directory / "index.db") as conn:  # as a brain before DECODING left it
        conn.execute("DELETE FROM meta WHERE key = ?", (changes.DECODED_BY_KEY,))
    conn.close()
    with IndexView(directory) as view:
        assert "Москва" not in " ".join(r[0] for r in view.conn.execute("SELECT text FROM chunks"))
        versions = view.conn.execute("SELECT count(*) FROM note_versions").fetchone()[0]
    report, _ = index_into(home, vault)
    assert (report.new, report.changed, report.unchanged, report.skipped) == (1, 1, 1, 0)
    with IndexView(directory) as view:
        texts = " ".join(r[0] for r in view.conn.execute("SELECT text FROM chunks"))
        assert "Москва зимой" in texts and "some text and more text" in texts
        # ru.md: no new version for the same bytes; stray.md: its first
        assert view.conn.execute("SELECT count(*) FROM note_versions").fetchone()[0] == versions + 1
    report, _ = index_into(home, vault)  # recorded: not read again
    assert (report.changed, report.unchanged) == (0, 3)


def _decode_as_cp1252_before(data: bytes) -> tuple[str, list[str]]:
    """The rules before Central European and Greek: what was not UTF-8 was cp1252."""
    try:
        return data.decode("utf-8"), []
    except UnicodeDecodeError as exc:
        return data.decode("cp1252"), [f"not UTF-8 (invalid at byte {exc.start}); decoded as cp1252 (Western European)"]


def test_notes_an_older_brain_read_as_cp1252_are_read_again_in_their_code_page(tmp_path, monkeypatch):
    """A Hungarian note in cp1250 was indexed as cp1252's "Árvíztûrõ", and kept so after an
    upgrade that reads it right: its bytes are unchanged. The rules' digest (``notes.DECODING``)
    changed with them, so the next run reads again the notes decoded with a warning, and only
    those: the UTF-8 note is not."""
    from index_helpers import IndexView, index_into

    vault = tmp_path / "vault"
    vault.mkdir()
    text = "# Hírek\n\nÁrvíztűrő tükörfúrógép: a főváros új hídja őszre készül el.\n"
    (vault / "hu.md").write_bytes(text.encode("cp1250"))
    (vault / "plain.md").write_text("# Plain\n\nNothing odd, café.\n")
    home = tmp_path / "home"
    directory = _indexed_by_an_older_brain(home, vault, monkeypatch, _decode_as_cp1252_before, "54e0bc7e4e4f")
    with IndexView(directory) as view:
        assert "Árvíztûrõ" in " ".join(r[0] for r in view.conn.execute("SELECT text FROM chunks"))
    report, _ = index_into(home, vault)
    assert (report.new, report.changed, report.unchanged) == (0, 1, 1)
    with IndexView(directory) as view:
        texts = " ".join(r[0] for r in view.conn.execute("SELECT text FROM chunks"))
        assert "Árvíztűrő tükörfúrógép" in texts and "Árvíztûrõ" not in texts
        warnings = {r[0]: r[1] for r in view.conn.execute("SELECT path, warnings FROM notes")}
        assert json.loads(warnings["hu.md"]) == ["not UTF-8 (invalid at byte 3); decoded as cp1250 (Central European)"]


def _indexed_by_an_older_brain(home, vault, monkeypatch, decode, decoding: str):
    """The index of ``vault`` as a brain that decoded by ``decode``, whose rules' digest was
    ``decoding``, left it."""
    from index_helpers import index_into

    import brain.notes

    with monkeypatch.context() as older:
        older.setattr(brain.notes, "decode", decode)
        _, directory = index_into(home, vault)
    with sqlite3.connect(directory / "index.db") as conn:
        conn.execute("UPDATE meta SET value = ? WHERE key = ?", (decoding, changes.DECODED_BY_KEY))
    conn.close()
    return directory


def _decode_before_hebrew_and_arabic(data: bytes) -> tuple[str, list[str]]:
    """The rules before Hebrew and Arabic: Hebrew in cp1255 was cp1251's small letters, Arabic
    in cp1256 replaced."""
    try:
        return data.decode("utf-8"), []
    except UnicodeDecodeError as exc:
        if b"\xf9\xec\xe5\xed" in data:  # "שלום" in cp1255
            return data.decode("cp1251"), [f"not UTF-8 (invalid at byte {exc.start}); decoded as cp1251 (Cyrillic)"]
        return data.decode("utf-8", "replace"), [f"invalid UTF-8 at byte {exc.start}; undecodable bytes replaced"]


def test_hebrew_and_arabic_notes_an_older_brain_misread_are_read_again(tmp_path, monkeypatch):
    """The two warnings an older brain left on a Hebrew or Arabic note (read as cp1251, or
    replaced) both name UTF-8, so a new ``notes.DECODING`` has both read again, in cp1255 and
    cp1256 now."""
    from index_helpers import IndexView, index_into

    vault = tmp_path / "vault"
    vault.mkdir()
    hebrew = "# פגישה\n\nשלום לכולם! מחר בבוקר ניפגש בבית הספר בירושלים.\n"
    arabic = "# ملاحظات\n\nمرحبا بالعالم! غدا في الصباح سنذهب إلى المدرسة في القاهرة.\n"
    (vault / "he.md").write_bytes(hebrew.encode("cp1255"))
    (vault / "ar.md").write_bytes(arabic.encode("cp1256"))
    home = tmp_path / "home"
    directory = _indexed_by_an_older_brain(home, vault, monkeypatch, _decode_before_hebrew_and_arabic, "7b129b3ae7e2")
    with IndexView(directory) as view:
        assert "щмен" in " ".join(r[0] for r in view.conn.execute("SELECT text FROM chunks"))
    report, _ = index_into(home, vault)
    assert (report.new, report.changed, report.unchanged) == (0, 2, 0)
    with IndexView(directory) as view:
        texts = " ".join(r[0] for r in view.conn.execute("SELECT text FROM chunks"))
        assert "שלום לכולם" in texts and "مرحبا بالعالم" in texts and "щмен" not in texts
        warnings = {r[0]: json.loads(r[1]) for r in view.conn.execute("SELECT path, warnings FROM notes")}
        assert warnings == {
            "he.md": ["not UTF-8 (invalid at byte 2); decoded as cp1255 (Hebrew)"],
            "ar.md": ["not UTF-8 (invalid at byte 2); decoded as cp1256 (Arabic)"],
        }
