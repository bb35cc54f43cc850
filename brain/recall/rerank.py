"""Rerank stage: a cross-encoder scores (query, note passage) pairs.

Loaded lazily and cached per process. When the model cannot be loaded or fails, the caller
keeps the previous order and reports a warning: a missing reranker never breaks recall.
"""

from __future__ import annotations

from functools import lru_cache

from .. import config, library_output
from ..embed import hub_probe, library_missing_message, model_load_message, tokenizer_problem
from ..errors import ModelLoadError
from ..text import for_search
from .types import Candidate

MAX_PASSAGE_CHARS = 1500


class Reranker:
    def __init__(self, model_name: str):
        self.name = model_name
        not_a_cross_encoder = _architectures_without_a_scorer(model_name)
        if not_a_cross_encoder:
            raise ModelLoadError(
                f"cannot load the reranking model {model_name!r}: it is not a cross-encoder (its config.json names "
                f"{', '.join(not_a_cross_encoder)}, no *ForSequenceClassification), and one would rerank with an "
                "untrained head, at random. Set BRAIN_RERANK_MODEL to a cross-encoder (the default "
                f"{config.DEFAULT_RERANK_MODEL}), or to none"
            )
        hub = hub_probe(model_name)  # its round trip overlaps the import
        try:
            from sentence_transformers import CrossEncoder
        except ImportError as exc:  # not the model's fault: "download the model" sent the user the wrong way
            raise ModelLoadError(library_missing_message("reranking", model_name, "BRAIN_RERANK_MODEL", exc)) from exc
        unreachable: str | None = None
        said: list[str] = []
        try:
            unreachable = hub()
            with library_output.kept(said, "reranking", model_name):
                self._model = CrossEncoder(model_name, device=config.device(), local_files_only=unreachable is not None)
        except Exception as exc:  # any failure to load means: no reranking this time
            message = model_load_message(
                "reranking",
                model_name,
                "BRAIN_RERANK_MODEL",
                exc,
                device=config.device(),
                unreachable=unreachable,
                said=said,
            )
            raise ModelLoadError(message) from exc
        problem = library_output.weights_problem(said, "BRAIN_RERANK_MODEL") or tokenizer_problem(
            self._model, "BRAIN_RERANK_MODEL"
        )
        if problem:  # it would score at random, or every pair alike
            raise ModelLoadError(f"cannot load the reranking model {model_name!r}: {problem}")

    def score(self, query: str, candidates: list[Candidate]) -> list[float]:
        pairs = [(query, for_search(passage(c))) for c in candidates]  # a model reads it: as the index did
        if not pairs:
            return []
        scores = self._model.predict(pairs, batch_size=16, show_progress_bar=False, convert_to_numpy=True)
        return [float(s) for s in scores.reshape(len(pairs), -1)[:, -1]]


def _architectures_without_a_scorer(model_name: str) -> list[str]:
    """The architectures a model folder's config.json names when none of them scores a pair
    (an embedding model such as all-MiniLM-L6-v2: ``BertModel``), else []. sentence-transformers
    loads such a model as a CrossEncoder with a newly initialised classification head, which
    reranked at random with a load report on stderr. A hub name is left to the library."""
    import json
    import os

    try:
        with open(os.path.join(model_name, "config.json"), encoding="utf-8") as f:
            architectures = json.load(f).get("architectures")
    except (OSError, ValueError, AttributeError):
        return []
    if not isinstance(architectures, list) or not architectures:
        return []
    names = [str(a) for a in architectures]
    return [] if any(a.endswith("ForSequenceClassification") for a in names) else names


def passage(candidate: Candidate) -> str:
    """What the cross-encoder reads: title, heading path, then the chunk text."""
    head = candidate.title if not candidate.heading else f"{candidate.title} > {candidate.heading}"
    return f"{head}\n{candidate.text}"[:MAX_PASSAGE_CHARS]


@lru_cache(maxsize=2)
def load_reranker(model_name: str) -> Reranker:
    return Reranker(model_name)
