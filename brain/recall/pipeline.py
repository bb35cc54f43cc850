"""The recall pipeline over one vault's index: lanes → (hop | fusion) → rerank → freshness.

A ``Recaller`` holds what is expensive (index, vectors, link graph, embedder, reranker) and
answers many queries; ``Recaller.ask`` runs one mode, ``Recaller.compare`` several modes over
shared work. Modes:

    vector        dense only
    graph         dense + one hop along wikilinks, ungated
    gated         dense + one hop, unless the entity gate says the query is a name
    hybrid        dense + lexical (BM25), fused by reciprocal rank
    ppr           dense + Personalized PageRank over the wikilinks, fused
    hybrid+ppr    dense + lexical + PageRank, fused
    …+rerank      any of the above, reordered by the cross-encoder

Fused modes also apply freshness: a superseded note never outranks its successor, and a
query about the current state prefers the newest of near-equal notes.

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
from . import fusion
from . import graph as graph_stage
from . import lexical as lexical_stage
from . import ppr as ppr_stage
from .gate import entity_gate, vault_names
from .rerank import load_reranker, rerank_pool_size
from .types import Candidate, Gate, Via

log = logging.getLogger("brain")

BASE_MODES = ("vector", "graph", "gated", "hybrid", "ppr", "hybrid+ppr")
# Chosen by measurement on both labelled sets (README, "Does the graph help?").
DEFAULT_MODE = "hybrid+ppr"
DEFAULT_K = 12


@dataclass(frozen=True)
class Mode:
    base: str  # one of BASE_MODES
    rerank: bool

    @classmethod
    def parse(cls, text: str) -> Mode:
        name = text.strip().lower().replace("dense", "vector")
        rerank = name.endswith("+rerank")
        base = name[: -len("+rerank")] if rerank else name
        if base not in BASE_MODES:
            raise ConfigError(f"unknown mode {text!r}: use one of {', '.join(BASE_MODES)}, each optionally +rerank")
        return cls(base, rerank)

    @property
    def hop(self) -> bool:
        return self.base in ("graph", "gated")

    @property
    def lexical(self) -> bool:
        return self.base.startswith("hybrid")

    @property
    def ppr(self) -> bool:
        return self.base.endswith("ppr")

    @property
    def fused(self) -> bool:
        return self.lexical or self.ppr

    def __str__(self) -> str:
        return self.base + ("+rerank" if self.rerank else "")


@dataclass
class RecallSettings:
    k: int = DEFAULT_K
    depth: int = dense_stage.DEFAULT_DEPTH  # distinct notes from the dense stage
    seeds: int = graph_stage.DEFAULT_SEEDS  # top dense notes whose links are followed
    max_new: int = graph_stage.DEFAULT_MAX_NEW  # new notes the hop may add
    pool: int = field(default_factory=rerank_pool_size)  # dense notes the reranker sees
    rrf_k: int = fusion.DEFAULT_RRF_K
    ppr_alpha: float = ppr_stage.DEFAULT_ALPHA
    freshness: float = fusion.FRESHNESS_BOOST
    weights: dict[str, float] = field(default_factory=lambda: dict(fusion.DEFAULT_WEIGHTS))  # RRF votes per lane


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
        self._link_graph: ppr_stage.LinkGraph | None = None
        self._successors: dict[int, int] | None = None

    # ----- set-up -------------------------------------------------------------------------

    def embedder(self) -> Embedder:
        if self._embedder is None:
            from ..indexer import warn_if_engine_changed

            started = time.perf_counter()
            self._embedder = load_embedder(self.model_name)
            self.timings_ms["load_embedder"] = _ms(started)
            message = warn_if_engine_changed(self.store, self._embedder)
            if message and message not in self.warnings:
                self.warnings.append(message)
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

    def link_graph(self) -> ppr_stage.LinkGraph:
        if self._link_graph is None:
            started = time.perf_counter()
            self._link_graph = ppr_stage.LinkGraph(self.store)
            self.timings_ms["load_graph"] = _ms(started)
        return self._link_graph

    def successors(self) -> dict[int, int]:
        if self._successors is None:
            from .supersession import successors

            self._successors = successors(self.store)
        return self._successors

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
        shared: dict[str, float] = {}
        vector, hits = self._dense(query, settings, shared)
        gate = self.gate(query)
        lanes: dict[str, list[Candidate]] = {"dense": hits}
        added: list[Candidate] | None = None
        rerank_cache: dict[int, float] = {}
        results = []
        for mode in modes:
            mode_started = time.perf_counter()
            timings = dict(shared)
            result = RecallResult(query=query, mode=str(mode), gate=gate, results=[], stale=self.stale)
            result.warnings.extend(self.warnings)
            pool = [_copy(c) for c in hits]  # modes must not see each other's scores
            if mode.hop and (mode.base == "graph" or not gate.entity):
                if added is None:
                    added = self._graph(hits, vector, settings, shared, result)
                else:  # computed for an earlier mode of this query
                    result.graph_used, result.candidates_added = True, len(added)
                timings["graph"] = shared.get("graph", 0.0)
                pool += [_copy(c) for c in added]
            elif mode.fused:
                pool = self._fuse(query, mode, vector, lanes, settings, shared, timings, result)
            if mode.rerank:
                pool = self._apply_rerank(query, pool, settings, timings, result, rerank_cache, mode.fused)
            elif not mode.fused:
                pool.sort(key=lambda c: -c.score)
            if mode.fused:
                pool = self._freshen(query, pool, vector, settings, timings)
            result.results = pool[: settings.k]
            timings["total"] = round(sum(shared.get(s, 0.0) for s in ("embed", "dense")) + _ms(mode_started), 2)
            result.timings_ms = timings
            results.append(result)
        return results

    # ----- fused modes ----------------------------------------------------------------------

    def _fuse(self, query, mode, vector, lanes, settings, shared, timings, result) -> list[Candidate]:
        """RRF over the lanes this mode uses; candidates keep the chunk that found them."""
        if mode.lexical and "lexical" not in lanes:
            started = time.perf_counter()
            lanes["lexical"] = lexical_stage.lexical_search(self.store, query, settings.depth)
            shared["lexical"] = _ms(started)
        if mode.lexical:
            timings["lexical"] = shared["lexical"]
        rankings = {"dense": [c.note_id for c in lanes["dense"]]}
        if mode.lexical:
            rankings["lexical"] = [c.note_id for c in lanes["lexical"]]
        by_note: dict[int, Candidate] = {}
        for lane in rankings:  # dense first: a note keeps the chunk the dense lane chose
            for c in lanes[lane]:
                if c.note_id in by_note:
                    by_note[c.note_id].sources.append(lane)
                else:
                    by_note[c.note_id] = _copy(c)
        if mode.ppr:
            key = "ppr+lexical" if mode.lexical else "ppr"
            if key not in lanes:
                started = time.perf_counter()
                try:
                    lanes[key] = self._ppr_lane(rankings, vector, settings)
                except Exception as exc:  # never worse than no graph: fuse without it
                    message = f"PageRank stage failed ({type(exc).__name__}: {exc}); fusing without it"
                    log.warning("%s", message)
                    result.warnings.append(message)
                    result.fallbacks["graph"] = True
                    lanes[key] = []
                shared[key] = _ms(started)
            timings["ppr"] = shared[key]
            rankings["ppr"] = [c.note_id for c in lanes[key]]
            for c in lanes[key]:
                if c.note_id in by_note:
                    by_note[c.note_id].sources.append("ppr")
                else:
                    by_note[c.note_id] = _copy(c)
                    result.candidates_added += 1
            result.graph_used = not result.fallbacks["graph"]
        started = time.perf_counter()
        fused = fusion.rrf(rankings, settings.rrf_k, settings.weights)
        self._fill_dense_scores(list(by_note.values()), vector)
        for note_id, candidate in by_note.items():
            candidate.score = fused.get(note_id, 0.0)
        pool = sorted(by_note.values(), key=lambda c: (-c.score, -c.dense_score))[: max(settings.depth, settings.k)]
        timings["fusion"] = _ms(started)
        return pool

    def _ppr_lane(self, rankings: dict[str, list[int]], vector, settings: RecallSettings) -> list[Candidate]:
        graph = self.link_graph()
        seeds = ppr_stage.seed_weights(list(rankings.values()), settings.seeds)
        scores = graph.personalized_pagerank(seeds, alpha=settings.ppr_alpha)
        top = graph.top(scores, settings.depth)
        if not top:
            return []
        best = dense_stage.best_chunks(self.store, [note_id for note_id, _ in top], vector)
        picks = [(n, best[n][0], best[n][1]) for n, _ in top if n in best]
        found = dense_stage.candidates_for(self.store, picks, "ppr")
        # Notes that only PageRank proposed say which seed reached them (the first by rank).
        seed_rank = {n: i for i, n in enumerate(sorted(seeds, key=lambda n: -seeds[n]))}
        proposed_elsewhere = set().union(*map(set, rankings.values()))
        outsiders = [c for c in found if c.note_id not in proposed_elsewhere]
        if outsiders:
            paths = {c.note_id: c for c in self._candidates_by_id(list(seed_rank))}
            edges = graph_stage.neighbours(self.store, list(seed_rank))
            edges.sort(key=lambda e: seed_rank[e[0]])
            first: dict[int, tuple[int, str, str]] = {}
            for seed_id, other, direction, kind in edges:
                first.setdefault(other, (seed_id, direction, kind))
            for c in outsiders:
                if c.note_id in first and first[c.note_id][0] in paths:
                    seed_id, direction, kind = first[c.note_id]
                    seed = paths[seed_id]
                    c.via = Via(seed.path, seed.title, direction, kind)
        return found

    def _candidates_by_id(self, note_ids: list[int]) -> list[Candidate]:
        if not note_ids:
            return []
        rows = self.store.conn.execute(
            f"SELECT id, path, title FROM notes WHERE id IN ({','.join('?' * len(note_ids))})", note_ids
        ).fetchall()
        return [Candidate(r["id"], r["path"], r["title"], 0, "", "", 0.0, 0.0) for r in rows]

    def _fill_dense_scores(self, candidates: list[Candidate], vector) -> None:
        """Lexical-only candidates get their best chunk's cosine too (shown, and a tie-break)."""
        missing = [c for c in candidates if "dense" not in c.sources and "ppr" not in c.sources]
        if not missing:
            return
        best = dense_stage.best_chunks(self.store, [c.note_id for c in missing], vector)
        for c in missing:
            c.dense_score = best.get(c.note_id, (0, 0.0))[1]

    def _freshen(self, query: str, pool: list[Candidate], vector, settings: RecallSettings, timings) -> list[Candidate]:
        """Temporal queries: newest first among near-equals. Always: successors above the superseded."""
        started = time.perf_counter()
        if settings.freshness > 0 and fusion.is_temporal(query) and pool:
            position = fusion.recency({c.note_id: c.date for c in pool})
            for c in pool:
                c.score *= 1 + settings.freshness * position[c.note_id]
            pool.sort(key=lambda c: -c.score)
        successors = self.successors()
        if successors and any(c.note_id in successors for c in pool[: settings.k]):
            order = fusion.order_successors_first([c.note_id for c in pool], successors)
            by_id = {c.note_id: c for c in pool}
            missing = [n for n in order if n not in by_id]
            if missing:
                best = dense_stage.best_chunks(self.store, missing, vector)
                for c in dense_stage.candidates_for(self.store, [(n, *best[n]) for n in missing if n in best], "successor"):
                    by_id[c.note_id] = c
            pool = [by_id[n] for n in order if n in by_id]
            # Scores stay monotone in the shown order: a moved successor takes its place's score.
            for i in range(len(pool) - 2, -1, -1):
                pool[i].score = max(pool[i].score, pool[i + 1].score)
        timings["freshness"] = _ms(started)
        return pool

    def _apply_rerank(self, query, pool, settings, timings, result, cache, fused: bool) -> list[Candidate]:
        if fused:  # the fused order already mixes every lane: take its top
            candidates = pool[: settings.pool]
        else:  # the dense top, plus everything the hop added
            candidates = [c for c in pool if c.via is None][: settings.pool] + [c for c in pool if c.via is not None]
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
