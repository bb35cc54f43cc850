"""The recall pipeline: dense → graph (gated) → rerank, over one vault's index.

A ``Recaller`` holds what is expensive (index, vectors, embedder, reranker) and answers many
queries; ``Recaller.ask`` runs one mode, ``Recaller.ab`` two modes over shared work. Modes:

    vector        dense only
    graph         dense + one hop along wikilinks, ungated
    gated         dense + one hop, unless the entity gate says the query is a name
    …+rerank      any of the above, reordered by the cross-encoder

Every optional stage degrades to the previous stage's result on failure: a warning in the
log and in ``RecallResult.warnings``, a flag in ``RecallResult.fallbacks``.
"""

from __future__ import annotations

import logging
import os
import time
from dataclasses import dataclass, field, replace
from pathlib import Path

from .. import config
from ..embed import Embedder, load_embedder
from ..errors import BrainError, ConfigError, NoIndexError
from ..store import IndexStore
from ..vault import resolve_vault
from . import dense as dense_stage
from . import graph as graph_stage
from .gate import entity_gate, vault_names
from .rerank import load_reranker, rerank_pool_size
from .types import Candidate, Gate

log = logging.getLogger("brain")

BASE_MODES = ("vector", "graph", "gated")
DEFAULT_K = 12


@dataclass(frozen=True)
class Mode:
    base: str  # vector | graph | gated
    rerank: bool

    @classmethod
    def parse(cls, text: str) -> Mode:
        parts = text.strip().lower().split("+")
        base, extras = parts[0], set(parts[1:])
        if base == "dense":
            base = "vector"
        if base not in BASE_MODES or not extras <= {"rerank"}:
            raise ConfigError(f"unknown mode {text!r}: use one of {', '.join(BASE_MODES)}, each optionally +rerank")
        return cls(base, "rerank" in extras)

    def __str__(self) -> str:
        return self.base + ("+rerank" if self.rerank else "")


@dataclass
class RecallSettings:
    k: int = DEFAULT_K
    depth: int = dense_stage.DEFAULT_DEPTH  # distinct notes from the dense stage
    seeds: int = graph_stage.DEFAULT_SEEDS  # top dense notes whose links are followed
    max_new: int = graph_stage.DEFAULT_MAX_NEW  # new notes the hop may add
    pool: int = field(default_factory=rerank_pool_size)  # dense notes the reranker sees


@dataclass
class RecallResult:
    query: str
    mode: str
    gate: Gate
    results: list[Candidate]
    graph_used: bool = False
    candidates_added: int = 0  # notes the graph stage added to the pool
    reranked: bool = False
    warnings: list[str] = field(default_factory=list)
    fallbacks: dict[str, bool] = field(default_factory=lambda: {"graph": False, "rerank": False})
    timings_ms: dict[str, float] = field(default_factory=dict)
    stale: int = 0  # notes changed since the index, when not updated


class Recaller:
    """Answers queries over one vault's index."""

    def __init__(
        self,
        vault: str | os.PathLike[str] | None,
        *,
        embedder: Embedder | None = None,
        update: bool = True,
        progress: bool = False,
        rerank_model: str | None | bool = True,
    ):
        self.root: Path = resolve_vault(vault)
        self._embedder = embedder
        self.rerank_model = config.rerank_model_name() if rerank_model is True else (rerank_model or None)
        self.warnings: list[str] = []
        self.timings_ms: dict[str, float] = {}
        self.stale = 0
        self.directory = config.index_dir(self.root)
        if not (self.directory / "index.db").exists():
            raise NoIndexError(f"no index for {self.root} yet: run `brain index --vault {self.root}` first")
        self.store = IndexStore.open(self.directory, create=False)
        self.model_name = self.store.get_meta("model")
        if not self.model_name:
            raise NoIndexError(f"the index for {self.root} is empty: run `brain index --vault {self.root}`")
        from ..indexer import check_model

        check_model(self.store, embedder.name if embedder else config.embed_model_name())
        self._bring_up_to_date(update, progress)
        from ..vectors import load_current

        started = time.perf_counter()
        self.vectors = load_current(self.store, int(self.store.get_meta("dim") or 0))
        self.timings_ms["load_index"] = _ms(started)
        self._names: dict[str, str] | None = None
        self._reranker_error: str | None = None

    # ----- set-up -------------------------------------------------------------------------

    def embedder(self) -> Embedder:
        if self._embedder is None:
            started = time.perf_counter()
            self._embedder = load_embedder(self.model_name)
            self.timings_ms["load_embedder"] = _ms(started)
        return self._embedder

    def _bring_up_to_date(self, update: bool, progress: bool) -> None:
        """Never answer silently from a stale index: update it, or say how stale it is."""
        from ..indexer import VaultLocked, _plan, index_vault

        started = time.perf_counter()
        plan = _plan(self.root, self.store)
        pending = len(plan.candidates) + len(plan.deleted)
        if pending and update:
            try:
                index_vault(self.root, embedder=None, model_name=self.model_name, progress=progress,
                            load=lambda _name: self.embedder())
            except VaultLocked:
                self._warn(f"{pending} notes changed since the last index and another `brain index` is running; "
                           "answering from the index as it is")
                self.stale = pending
        elif pending:
            self._warn(f"{pending} notes changed since the last index (--no-update): results may be stale; "
                       "run `brain index`")
            self.stale = pending
        self.timings_ms["update"] = _ms(started)

    def _warn(self, message: str) -> None:
        log.warning("%s", message)
        self.warnings.append(message)

    def names(self) -> dict[str, str]:
        if self._names is None:
            self._names = vault_names(self.store)
        return self._names

    def close(self) -> None:
        self.store.close()

    # ----- stages -----------------------------------------------------------------------------

    def gate(self, query: str) -> Gate:
        return entity_gate(query, self.names())

    def _dense(self, query: str, settings: RecallSettings, timings: dict[str, float]):
        embedder = self.embedder()  # loading the model is timed apart, as load_embedder
        started = time.perf_counter()
        vector = embedder.embed_query(query)
        timings["embed"] = _ms(started)
        started = time.perf_counter()
        hits = dense_stage.dense_search(self.store, self.vectors, vector, settings.depth)
        timings["dense"] = _ms(started)
        if "load_embedder" in self.timings_ms:
            timings["load_embedder"] = self.timings_ms.pop("load_embedder")
        return vector, hits

    def _graph(self, hits, vector, settings, timings, result: RecallResult) -> list[Candidate]:
        started = time.perf_counter()
        try:
            added = graph_stage.expand(self.store, hits, vector, seeds=settings.seeds, max_new=settings.max_new)
        except Exception as exc:  # never worse than no graph: fall back to the dense pool
            message = f"graph stage failed ({type(exc).__name__}: {exc}); using the dense result"
            log.warning("%s", message)
            result.warnings.append(message)
            result.fallbacks["graph"] = True
            added = []
        timings["graph"] = _ms(started)
        result.graph_used = not result.fallbacks["graph"]
        result.candidates_added = len(added)
        return added

    def _rerank_scores(self, query: str, pool: list[Candidate], timings, result: RecallResult) -> dict[int, float] | None:
        """Cross-encoder scores by note id, or None (with a warning) when it cannot run."""
        if not self.rerank_model:
            self._flag_rerank(result, "no reranker configured (BRAIN_RERANK_MODEL=none); dense order kept")
            return None
        if self._reranker_error:
            self._flag_rerank(result, self._reranker_error)
            return None
        started = time.perf_counter()
        try:
            reranker = load_reranker(self.rerank_model)
            timings["load_reranker"] = _ms(started)
            started = time.perf_counter()
            scores = reranker.score(query, pool)
        except Exception as exc:
            reason = str(exc) if isinstance(exc, BrainError) else f"{type(exc).__name__}: {exc}"
            self._reranker_error = f"reranker unavailable ({reason}); dense order kept"
            self._flag_rerank(result, self._reranker_error)
            return None
        timings["rerank"] = _ms(started)
        return {c.note_id: s for c, s in zip(pool, scores)}

    @staticmethod
    def _flag_rerank(result: RecallResult, message: str) -> None:
        log.warning("%s", message)
        result.warnings.append(message)
        result.fallbacks["rerank"] = True

    # ----- modes ----------------------------------------------------------------------------

    def ask(self, query: str, mode: str | Mode = "vector", settings: RecallSettings | None = None) -> RecallResult:
        """Run one mode for one query."""
        return self._run(query, [Mode.parse(str(mode))], settings or RecallSettings())[0]

    def compare(self, query: str, modes: list[str | Mode], settings: RecallSettings | None = None) -> list[RecallResult]:
        """Run several modes for one query, sharing the embedding, dense search and rerank scores."""
        return self._run(query, [Mode.parse(str(m)) for m in modes], settings or RecallSettings())

    def _run(self, query: str, modes: list[Mode], settings: RecallSettings) -> list[RecallResult]:
        query = query.strip()
        if not query:
            raise ConfigError("empty query: ask a question, e.g. brain ask \"how should agent memory work\"")
        total_started = time.perf_counter()
        shared: dict[str, float] = {}
        vector, hits = self._dense(query, settings, shared)
        gate = self.gate(query)
        added: list[Candidate] | None = None
        rerank_cache: dict[int, float] = {}
        results = []
        for mode in modes:
            timings = dict(shared)
            result = RecallResult(query=query, mode=str(mode), gate=gate, results=[], stale=self.stale)
            result.warnings.extend(self.warnings)
            use_graph = mode.base == "graph" or (mode.base == "gated" and not gate.entity)
            pool = [_copy(c) for c in hits]  # modes must not see each other's scores
            if use_graph:
                if added is None:
                    added = self._graph(hits, vector, settings, timings, result)
                else:  # computed for an earlier mode of this query
                    result.graph_used, result.candidates_added = True, len(added)
                    timings["graph"] = shared.get("graph", 0.0)
                shared.setdefault("graph", timings.get("graph", 0.0))
                pool = pool + [_copy(c) for c in added]
            if mode.rerank:
                pool = self._apply_rerank(query, pool, settings, timings, result, rerank_cache)
            else:
                pool.sort(key=lambda c: -c.score)
            result.results = pool[: settings.k]
            timings["total"] = _ms(total_started)
            result.timings_ms = timings
            results.append(result)
        return results

    def _apply_rerank(self, query, pool, settings, timings, result, cache) -> list[Candidate]:
        dense_part = [c for c in pool if c.via is None][: settings.pool]
        graph_part = [c for c in pool if c.via is not None]
        candidates = dense_part + graph_part
        missing = [c for c in candidates if c.note_id not in cache]
        scores = self._rerank_scores(query, missing, timings, result) if missing else {}
        if scores is None:  # fallback: the order the earlier stages gave
            pool.sort(key=lambda c: -c.score)
            return pool
        cache.update(scores)
        for candidate in candidates:
            candidate.rerank_score = cache[candidate.note_id]
            candidate.score = candidate.rerank_score
        result.reranked = True
        return sorted(candidates, key=lambda c: -c.score)


def _copy(candidate: Candidate) -> Candidate:
    return replace(candidate, sources=list(candidate.sources))


def _ms(started: float) -> float:
    return round((time.perf_counter() - started) * 1000, 2)
