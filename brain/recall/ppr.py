"""The wikilink graph as a ranker: Personalized PageRank seeded by the retrieval hits.

One-hop expansion only adds candidates; without a reranker they rarely beat the dense
scores that already left them out. PPR instead lets the link structure *vote*: a note close
to many good hits (through links and backlinks) ranks high, and that ranking joins the
fusion as one more ranker.

Two ways to compute it over the same transition matrix (``LinkGraph.rank`` picks):

- ``push``: the local forward push of Andersen, Chung and Lang. Probability mass spreads from
  the seeds along the links and is moved on only where enough is left on a note, so it
  touches the seeds' neighbourhood, within a fixed budget of links followed: its cost does
  not grow with the vault (bench/scale.py, 100,000 notes: about 1/15 of the power iteration).
- ``personalized_pagerank``: the power iteration over every note, exact to ``tol``. Used where
  the graph is small enough for it to be cheap (both labelled sets), and the reference the
  push is tested against (tests/test_ppr.py).
"""

from __future__ import annotations

import logging
from collections.abc import Collection, Sequence
from typing import TYPE_CHECKING, Any

from .. import config
from ..numeric import sorted_distinct
from .types import DEFAULT_PPR_ALPHA

log = logging.getLogger("brain")

if TYPE_CHECKING:
    import numpy as np

    from ..index.store import IndexStore

# Links the push may follow per query: at 100,000 notes its top 60 share 59.95 of the power
# iteration's on average (bench/scale.py prints the overlap). On the mini-benchmark a
# budget of 200,000 gives the power iteration's eval figures exactly, 30,000 within 0.002
# overall (0.014 on one small query type): there the power iteration runs instead.
DEFAULT_PUSH_BUDGET = 30_000
MIN_PUSH_EPSILON = 1e-9  # the finest threshold: about the power iteration's own precision
POWER_ITERATIONS = 50
# ``auto`` runs the power iteration where links (both ways) plus notes are at most this
# many: there 50 iterations cost about what the push's budget does.
EXACT_UP_TO = 60_000


class LinkGraph:
    """The resolved note graph of one index as a sparse, row-normalised transition matrix."""

    dropped = 0  # links read from the index that point at no note of it (a damaged links table)

    def __init__(self, store: IndexStore):
        import numpy as np

        ids = store.note_ids()  # ascending
        note_ids = np.asarray(ids, dtype=np.int64)
        # The links a batch at a time into arrays: 500,000 links as Python tuples were 60 MB more
        # at the moment of the process's peak memory (bench/scale.py).
        parts = [np.array(rows, dtype=np.int64) for rows in store.resolved_edge_batches()]
        edges = np.concatenate(parts) if parts else np.zeros((0, 3), dtype=np.int64)
        del parts
        arrays = _edge_arrays(note_ids, edges)
        self.dropped = len(edges) - len(arrays[0])  # links to no note of the index, left out
        del edges
        self._build(note_ids, *arrays)

    @classmethod
    def of_links(cls, note_ids: Sequence[int], edges: np.ndarray, like: LinkGraph | None = None) -> LinkGraph:
        """The graph of these notes (ids, ascending) and links ((source id, target id, 1 for an
        embed else 0) rows, in any order), as ``LinkGraph(store)`` builds it from a store that
        holds them; ``like`` itself where it is that graph, of the same notes and links (a view
        of the past and the present's, ``recall/past_carry.py``: a comparison, not a build)."""
        import numpy as np

        ids = np.asarray(note_ids, dtype=np.int64)
        src, dst, embed = _edge_arrays(ids, edges.reshape(-1, 3))
        dropped = len(edges) - len(src)
        if like is not None and like.dropped == dropped and np.array_equal(like.note_ids, ids):
            mine = _in_order(len(ids), src, dst, embed)
            if all(np.array_equal(a, b) for a, b in zip(mine, (like._src, like._dst, like._embed), strict=True)):
                return like
        graph = cls.__new__(cls)
        graph.dropped = dropped
        graph._build(ids, src, dst, embed)
        return graph

    def _build(self, note_ids: np.ndarray, src: np.ndarray, dst: np.ndarray, embed: np.ndarray) -> None:
        """The matrix of these links (``src``/``dst``: indices into ``note_ids``; ``embed``:
        an embed, not a link), and the links themselves, kept so that ``carried`` can compare.

        The links are taken in one order, whatever order they come in (by source, target,
        embed): the matrix sums a pair's links and backlinks, and floating-point sums in
        another order differ in the last bit, so the same links read from ``links``, from
        ``link_history`` or patched (``carried``, ``recall/past.py``) make the same matrix, bit
        for bit."""
        import numpy as np
        from scipy import sparse

        self.note_ids = note_ids
        n = len(note_ids)
        # Kept compact (4.5 MB at 500,000 links): the next snapshot of `brain serve` compares
        # the links of the notes that changed against them.
        self._src, self._dst, self._embed = _in_order(n, src, dst, embed)
        link_w, embed_w = config.ppr_link_weight(), config.ppr_embed_weight()
        back_w = config.ppr_backlink_weight()
        kind_w = np.where(self._embed, embed_w, link_w)
        count = len(src)
        # Both directions; duplicate links between the same pair add up (a stronger tie).
        row_idx = np.concatenate([self._src, self._dst])
        col_idx = np.concatenate([self._dst, self._src])
        weights = np.concatenate([kind_w, kind_w * back_w])
        adjacency = sparse.csr_matrix((weights, (row_idx, col_idx)), shape=(n, n))
        degree = np.asarray((adjacency > 0).sum(axis=0)).ravel().astype(np.float64)
        damp = np.power(np.maximum(degree, 1.0), -config.ppr_hub_damping())
        adjacency = adjacency @ sparse.diags(damp)  # a hub's incoming edges count for less
        out = np.asarray(adjacency.sum(axis=1)).ravel()
        self.dangling = out == 0
        inv = np.divide(1.0, out, out=np.zeros_like(out), where=out > 0)
        transition = (sparse.diags(inv) @ adjacency).tocsr()  # row-stochastic: row u = where u's mass goes
        transition.eliminate_zeros()
        self._transition_t: Any = None  # column-stochastic, for the power iteration: built when first used
        # The push reads rows of the transition directly.
        self._indptr = transition.indptr.astype(np.int64)
        self._indices = transition.indices.astype(np.int64)
        self._probs = transition.data.astype(np.float64)
        self._degree = np.maximum(np.diff(self._indptr), 1).astype(np.float64)
        self.edges = count

    def arrays(self) -> dict[str, np.ndarray]:
        """The graph as arrays (``recall/cache.py`` keeps them): its notes, its links, its matrix."""
        import numpy as np

        out = {"note_ids": self.note_ids, "src": self._src, "dst": self._dst, "embed": self._embed}
        out.update(
            indptr=self._indptr, indices=self._indices, probs=self._probs, degree=self._degree, dangling=self.dangling
        )
        out["dropped"] = np.array([self.dropped], dtype=np.int64)  # said again by the run that takes them over
        return out

    @classmethod
    def from_arrays(cls, arrays: dict[str, np.ndarray], *, matrix: bool = True) -> LinkGraph:
        """The graph ``arrays`` holds; with ``matrix`` False (other weights now) its matrix is
        built again from its links."""
        import numpy as np

        graph = cls.__new__(cls)
        graph.dropped = int(arrays["dropped"][0]) if "dropped" in arrays else 0
        note_ids, src, dst = arrays["note_ids"], arrays["src"], arrays["dst"]
        count = len(note_ids)
        if (
            len(src) != len(dst)
            or len(src) != len(arrays["embed"])
            or (len(src) and max(src.max(), dst.max()) >= count)
        ):
            raise ValueError("the links do not fit the notes")
        if not matrix:
            graph._build(note_ids.astype(np.int64), src, dst, arrays["embed"])
            return graph
        indptr, indices = arrays["indptr"], arrays["indices"]
        if (
            len(indptr) != count + 1
            or len(arrays["dangling"]) != count
            or len(arrays["degree"]) != count
            or int(indptr[-1]) != len(indices)
            or len(arrays["probs"]) != len(indices)
            or (len(indices) and (indices.min() < 0 or indices.max() >= count))
            or np.any(np.diff(indptr) < 0)
        ):
            raise ValueError("the matrix does not fit the notes")
        graph.note_ids = note_ids.astype(np.int64)
        graph._src, graph._dst, graph._embed = src.astype(np.int32), dst.astype(np.int32), arrays["embed"].astype(bool)
        graph._indptr = arrays["indptr"].astype(np.int64)
        graph._indices = arrays["indices"].astype(np.int64)
        graph._probs = arrays["probs"].astype(np.float64)
        graph._degree = arrays["degree"].astype(np.float64)
        graph.dangling = arrays["dangling"].astype(bool)
        graph._transition_t = None
        graph.edges = len(src)
        return graph

    def carried(self, store: IndexStore, changed: Sequence[int]) -> LinkGraph:
        """This graph for ``store``, whose notes are this graph's and whose links differ from
        the ones it was built from at most in those written by the notes ``changed``: this
        graph itself when their links are as they were (an edit that left them alone), else a
        new one from these links with theirs replaced, without reading the others again.

        The caller vouches for the premise (``recall/carry.py``: the same notes, the same names,
        every other note unwritten since)."""
        import numpy as np

        if not len(changed):
            return self
        changed_idx = np.searchsorted(self.note_ids, np.asarray(sorted(changed), dtype=np.int64))
        mine = np.isin(self._src, changed_idx.astype(np.int32))
        rows = store.resolved_edges_from(changed)
        edges = np.array(rows, dtype=np.int64).reshape(-1, 3)
        src, dst, embed = _edge_arrays(self.note_ids, edges)
        before = sorted(zip(self._src[mine].tolist(), self._dst[mine].tolist(), self._embed[mine].tolist()))
        after = sorted(zip(src.tolist(), dst.tolist(), embed.astype(bool).tolist()))
        if before == after:
            return self
        keep = ~mine
        graph = LinkGraph.__new__(LinkGraph)
        graph._build(
            self.note_ids,
            np.concatenate([self._src[keep], src.astype(np.int32)]),
            np.concatenate([self._dst[keep], dst.astype(np.int32)]),
            np.concatenate([self._embed[keep], embed.astype(bool)]),
        )
        return graph

    def without(self, note_ids: Collection[int]) -> LinkGraph:
        """This graph with no link to or from ``note_ids`` (notes whose file is gone since the
        last index, ``Recaller.gone``): they stay in it, linked to nothing, so that no walk
        passes through them nor reaches them; this graph itself where none of them has a link."""
        import numpy as np

        wanted = np.asarray(sorted(note_ids), dtype=np.int64)
        found = np.searchsorted(self.note_ids, wanted)
        inside = found < self.size
        found = found[inside][self.note_ids[found[inside]] == wanted[inside]].astype(np.int32)
        touched = np.isin(self._src, found) | np.isin(self._dst, found)
        if not touched.any():
            return self
        keep = ~touched
        graph = LinkGraph.__new__(LinkGraph)
        graph.dropped = self.dropped
        graph._build(self.note_ids, self._src[keep], self._dst[keep], self._embed[keep])
        return graph

    def transition_t(self) -> Any:
        """The column-stochastic transition matrix the power iteration multiplies by, made from
        the push's arrays the first time (a large graph is ranked by the push alone)."""
        if self._transition_t is None:
            from scipy import sparse

            transition = sparse.csr_matrix((self._probs, self._indices, self._indptr), shape=(self.size, self.size))
            self._transition_t = transition.T.tocsr()
        return self._transition_t

    @property
    def size(self) -> int:
        return len(self.note_ids)

    def _restart(self, seeds: dict[int, float]) -> tuple[np.ndarray, np.ndarray]:
        """(note indices, weights summing to 1) of the seeds in this graph."""
        import numpy as np

        picked: dict[int, float] = {}
        wanted = [(note_id, weight) for note_id, weight in seeds.items() if weight > 0]
        # note_ids is sorted: a binary search, not a dict of 100,000 ids kept for this
        found = np.searchsorted(self.note_ids, np.array([note_id for note_id, _ in wanted], dtype=np.int64))
        for (note_id, weight), i in zip(wanted, found.tolist()):
            if i < self.size and self.note_ids[i] == note_id:
                picked[int(i)] = picked.get(int(i), 0.0) + weight
        index = np.fromiter(picked, dtype=np.int64, count=len(picked))
        weights = np.fromiter(picked.values(), dtype=np.float64, count=len(picked))
        total = weights.sum()
        return index, (weights / total if total > 0 else weights)

    def personalized_pagerank(
        self,
        seeds: dict[int, float],
        *,
        alpha: float = DEFAULT_PPR_ALPHA,
        iterations: int = POWER_ITERATIONS,
        tol: float = 1e-8,
    ) -> np.ndarray:
        """Scores per note (aligned with ``note_ids``) for a walk restarting at ``seeds``."""
        import numpy as np

        personal = np.zeros(self.size, dtype=np.float64)
        index, weights = self._restart(seeds)
        if not len(index):
            return personal
        personal[index] = weights
        rank = personal.copy()
        for _ in range(iterations):
            # Mass on notes without links goes back to the seeds, as a restart would.
            lost = rank[self.dangling].sum()
            new = alpha * (self.transition_t() @ rank) + (alpha * lost + 1 - alpha) * personal
            if np.abs(new - rank).sum() < tol:
                rank = new
                break
            rank = new
        return rank

    def push(
        self,
        seeds: dict[int, float],
        *,
        alpha: float = DEFAULT_PPR_ALPHA,
        budget: int | None = None,
        epsilon: float = MIN_PUSH_EPSILON,
        stats: dict | None = None,
    ) -> tuple[np.ndarray, np.ndarray]:
        """(note indices, scores) of the notes the forward push reached, for a walk restarting
        at ``seeds``: a lower bound of ``personalized_pagerank``, from the seeds' neighbourhood.

        Invariant: exact PPR = ``estimate`` + PPR of the ``residual``. Each round moves every
        note's residual above its threshold (``eps`` times its number of neighbours): (1 - alpha)
        of it stays as its score, alpha flows along its links (from a note without links back
        to the seeds, as the power iteration does). The threshold starts coarse and is lowered
        tenfold each time nothing is above it, down to ``epsilon``, while the links followed
        stay within ``budget``: a small graph is solved to the power iteration's precision, a
        large one as precisely as the budget allows, never at a cost that grows with the vault.
        """
        import numpy as np

        budget = DEFAULT_PUSH_BUDGET if budget is None else budget
        start, weights = self._restart(seeds)
        if not len(start):
            return np.zeros(0, dtype=np.int64), np.zeros(0, dtype=np.float64)
        # Dense work arrays, but only entries the push reaches are read or written: the
        # allocation is zero pages the kernel maps lazily.
        residual = np.zeros(self.size, dtype=np.float64)
        estimate = np.zeros(self.size, dtype=np.float64)
        seen = np.zeros(self.size, dtype=bool)
        residual[start] = weights
        seen[start] = True
        found = [start]
        degree, indptr = self._degree, self._indptr
        eps, work, rounds = 1e-3, 0, 0
        above = start[residual[start] > eps * degree[start]]
        while work < budget:
            if not len(above):  # nothing left at this threshold: lower it, look at every note reached
                if eps <= epsilon:
                    break
                eps = max(eps / 10, epsilon)
                reached = np.concatenate(found)
                found = [reached]
                above = reached[residual[reached] > eps * degree[reached]]
                continue
            rounds += 1
            begin = indptr[above]
            counts = indptr[above + 1] - begin
            total = int(counts.sum())
            if work + total + len(above) > budget:  # the last round: the largest residuals that fit
                order = np.argsort(-residual[above] / degree[above], kind="stable")
                fits = int(np.searchsorted(np.cumsum(counts[order] + 1), budget - work, side="right"))
                if fits == 0:
                    break
                above, begin, counts = above[order[:fits]], begin[order[:fits]], counts[order[:fits]]
                total = int(counts.sum())
            work += total + len(above)
            mass = residual[above]
            residual[above] = 0.0
            estimate[above] += (1 - alpha) * mass
            # Positions of every pushed note's row in the CSR arrays, concatenated.
            positions = np.repeat(begin - np.cumsum(counts) + counts, counts) + np.arange(total)
            targets = self._indices[positions]
            np.add.at(residual, targets, alpha * self._probs[positions] * np.repeat(mass, counts))
            lost = float(mass[counts == 0].sum())
            if lost > 0:  # notes without links: their share restarts at the seeds
                residual[start] += alpha * lost * weights
                targets = np.concatenate([targets, start])
            new = targets[~seen[targets]]
            if len(new):
                new = sorted_distinct(new)
                seen[new] = True
                found.append(new)
            above = sorted_distinct(targets[residual[targets] > eps * degree[targets]])
        reached = np.concatenate(found)
        if stats is not None:
            stats.update(rounds=rounds, work=work, epsilon=eps, reached=len(reached))
        # What is still on a note will give it at least (1 - alpha) of itself: a tighter bound.
        scores = estimate[reached] + (1 - alpha) * residual[reached]
        keep = scores > 0
        return reached[keep], scores[keep]

    def rank(
        self,
        seeds: dict[int, float],
        depth: int,
        *,
        alpha: float = DEFAULT_PPR_ALPHA,
        method: str | None = None,
        degree_norm: float = 0.0,
    ) -> list[tuple[int, float]]:
        """(note id, score) of the ``depth`` notes PageRank ranks highest from ``seeds``, and those
        that tie the last of them (``top_of``).

        ``method`` (default ``BRAIN_PPR_METHOD``): ``push``, ``power``, or ``auto``: the exact
        power iteration on a graph of at most ``EXACT_UP_TO`` (links both ways plus notes),
        where it is cheap, the push on a larger one. ``degree_norm``: each score divided by the
        note's degree (the notes it links with, either way) to this power before ranking: a hub
        gathers mass from any walk near it, wherever the seeds are.
        """
        method = method or config.ppr_method()
        if method == "power" or (method == "auto" and len(self._indices) + self.size <= EXACT_UP_TO):
            scores = self.personalized_pagerank(seeds, alpha=alpha)
            if degree_norm:
                scores = scores / self._degree**degree_norm
            return self.top(scores, depth)
        reached, scores = self.push(seeds, alpha=alpha)
        if degree_norm:
            scores = scores / self._degree[reached] ** degree_norm
        return self.top_of(reached, scores, depth)

    def top(self, scores: np.ndarray, depth: int) -> list[tuple[int, float]]:
        """(note id, score) of the ``depth`` best notes with a positive score (``scores``
        aligned with ``note_ids``, as ``personalized_pagerank`` gives them)."""
        import numpy as np

        return self.top_of(np.arange(len(scores)), scores, depth)

    def top_of(self, index: np.ndarray, scores: np.ndarray, depth: int) -> list[tuple[int, float]]:
        """(note id, score) of the ``depth`` best of these notes (by index) with a positive score,
        and every note that ties the last of them; best first, equal scores by note id. Which of
        the tied keeps the place is for the caller to decide by path (ties.top_notes): a note's id
        follows the order the index met it in, and numpy's partition order is no order at all."""
        import numpy as np

        if depth <= 0 or not len(scores):
            return []
        depth = min(depth, int((scores > 0).sum()))
        if depth == 0:
            return []
        last = scores[np.argpartition(-scores, depth - 1)[:depth]].min()
        picked = np.flatnonzero(scores >= last)
        picked = picked[np.lexsort((self.note_ids[index[picked]], -scores[picked]))]
        return [(int(self.note_ids[index[i]]), float(scores[i])) for i in picked]


def _in_order(n: int, src: np.ndarray, dst: np.ndarray, embed: np.ndarray) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    """The links (indices below ``n``) sorted by source, target, then embed: one key each,
    sorted (30 ms at 500,000 links; three keys by ``lexsort`` took three times that)."""
    import numpy as np

    if not len(src):
        return np.zeros(0, dtype=np.int32), np.zeros(0, dtype=np.int32), np.zeros(0, dtype=bool)
    key = (src.astype(np.int64) * n + dst.astype(np.int64)) * 2 + embed.astype(np.int64)
    key.sort()
    return (key // (2 * n)).astype(np.int32), (key // 2 % n).astype(np.int32), (key % 2).astype(bool)


def _edge_arrays(note_ids: np.ndarray, edges: np.ndarray) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    """(source indices, target indices, embed or not) of (source id, target id, embed) rows,
    indices into ``note_ids``."""
    import numpy as np

    src = np.searchsorted(note_ids, edges[:, 0])
    dst = np.searchsorted(note_ids, edges[:, 1])
    # A link whose end is no note of the index (a damaged links table) is left out: searchsorted
    # would give it another note's index, or one past the matrix.
    held = (src < len(note_ids)) & (dst < len(note_ids))
    held[held] = (note_ids[src[held]] == edges[held, 0]) & (note_ids[dst[held]] == edges[held, 1])
    if not held.all():
        log.info("%d links point at no note of the index: left out of the link graph", int((~held).sum()))
        src, dst, edges = src[held], dst[held], edges[held]
    return src, dst, edges[:, 2] == 1


def seed_weights(rankings: list[list[int]], seeds: int) -> dict[int, float]:
    """Restart weights from the top ``seeds`` of each ranking: reciprocal rank, summed."""
    weights: dict[int, float] = {}
    for ranking in rankings:
        for rank, note_id in enumerate(ranking[:seeds]):
            weights[note_id] = weights.get(note_id, 0.0) + 1.0 / (rank + 1)
    return weights


def seed_weights_by_score(scored: list[list[tuple[int, float]]], seeds: int) -> dict[int, float]:
    """Restart weights from the top ``seeds`` of each ranking: the score over the ranking's best, summed.

    A clear winner then restarts most walks; near-equals share the mass, whatever their rank.
    """
    weights: dict[int, float] = {}
    for ranking in scored:
        top = ranking[:seeds]
        best = max((s for _, s in top), default=0.0)
        if best <= 0:
            continue
        for note_id, score in top:
            weights[note_id] = weights.get(note_id, 0.0) + max(score, 0.0) / best
    return weights


def drop_hubs(weights: dict[int, float], out_degrees: dict[int, int], hub: int) -> dict[int, float]:
    """No restarts from notes linking to more than ``hub`` notes (index notes spread the walk everywhere).

    ``out_degrees``: how many other notes each seed links to (``IndexStore.out_degrees``)."""
    if hub <= 0:
        return weights
    kept = {n: w for n, w in weights.items() if out_degrees.get(n, 0) <= hub}
    return kept or weights  # only hubs matched: better their walk than none
