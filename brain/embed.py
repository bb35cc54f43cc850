"""Embedders: text → normalised float32 vectors.

The real one wraps sentence-transformers (imported only when a model is loaded). Others can
be registered under a name prefix (``register_embedder("fake", factory)`` makes
``BRAIN_EMBED_MODEL=fake:...`` resolve to it), which is how tests plug in a deterministic
embedder without torch, and benchmarks a fast one.
"""

from __future__ import annotations

import logging
import os
from collections.abc import Callable, Sequence
from typing import TYPE_CHECKING, Any, Protocol

from . import config
from .errors import ModelLoadError

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


_REGISTRY: dict[str, Callable[[str], Embedder]] = {}


def register_embedder(prefix: str, factory: Callable[[str], Embedder]) -> None:
    """Make ``prefix:anything`` model names resolve to ``factory("prefix:anything")``."""
    _REGISTRY[prefix] = factory


def default_prefixes(model_name: str) -> tuple[str, str]:
    """(query prefix, passage prefix): e5-family models are trained with them, others not.

    ``BRAIN_QUERY_PREFIX`` / ``BRAIN_PASSAGE_PREFIX`` override (set them to "" to disable).
    """
    is_e5 = "e5" in os.path.basename(model_name.rstrip("/\\")).lower() or "/e5" in model_name.lower()
    query, passage = ("query: ", "passage: ") if is_e5 else ("", "")
    query_override = config.prefix_override("BRAIN_QUERY_PREFIX")
    passage_override = config.prefix_override("BRAIN_PASSAGE_PREFIX")
    return (
        query if query_override is None else query_override,
        passage if passage_override is None else passage_override,
    )


class SentenceTransformerEmbedder:
    """A sentence-transformers model: a hub name or a local folder."""

    def __init__(self, model_name: str, *, device: str | None = None):
        self.name = model_name
        self.query_prefix, self.passage_prefix = default_prefixes(model_name)
        self.batch_size = config.embed_batch()
        self.query_threads = config.query_threads()
        self._model = _load_sentence_transformer(model_name, device)
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
        import torch

        # One short text gains little from intra-op threads, and when another process holds
        # the other cores they wait on each other: measured here, MiniLM took 17 ms on one
        # thread and 40-500 ms on two with the second core busy. BRAIN_QUERY_THREADS overrides.
        threads = torch.get_num_threads()
        torch.set_num_threads(self.query_threads)
        try:
            vector = self._model.encode([self.query_prefix + text], normalize_embeddings=True, convert_to_numpy=True)[0]
        finally:
            torch.set_num_threads(threads)
        return np.ascontiguousarray(vector, dtype=np.float32)


def _load_sentence_transformer(model_name: str, device: str | None) -> Any:  # a SentenceTransformer
    try:
        from sentence_transformers import SentenceTransformer
    except ImportError as exc:  # pragma: no cover - a broken install
        raise ModelLoadError(
            f"sentence-transformers is not installed ({exc}); install brain with its dependencies"
        ) from exc
    try:
        from transformers.utils import logging as hf_logging

        hf_logging.disable_progress_bar()  # brain shows its own progress
    except (ImportError, AttributeError):  # an older transformers: its bar is only cosmetic
        pass
    try:
        # device None: sentence-transformers picks CUDA / MPS when present, else the CPU.
        return SentenceTransformer(model_name, device=device or config.device())
    except Exception as exc:  # OSError, HTTP errors, ValueError: all mean "cannot load"
        raise ModelLoadError(model_load_message("embedding", model_name, "BRAIN_EMBED_MODEL", exc)) from exc


def model_load_message(kind: str, model_name: str, variable: str, exc: BaseException) -> str:
    reason = str(exc).strip().splitlines()[0] if str(exc).strip() else type(exc).__name__
    hint = (
        f"If this machine cannot reach the Hugging Face hub, download the model elsewhere "
        f"(e.g. `huggingface-cli download {model_name} --local-dir ./models/x`) and set "
        f"{variable} to that folder."
    )
    if os.path.isdir(model_name):
        hint = f"{model_name} is a folder but not a loadable model; set {variable} to a model folder."
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

    def ensure_loaded(self) -> float | None:
        if self._embedder is not None:
            return None
        import time

        started = time.perf_counter()
        self._embedder = self._load(self.name)
        return round((time.perf_counter() - started) * 1000, 2)

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
    prefix = model_name.split(":", 1)[0] if ":" in model_name else None
    if prefix and prefix in _REGISTRY and not os.path.exists(model_name):
        return _REGISTRY[prefix](model_name)
    log.info("loading embedding model %s", model_name)
    return SentenceTransformerEmbedder(model_name)
