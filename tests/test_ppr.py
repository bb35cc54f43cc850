"""Personalized PageRank: the local push against the power iteration and networkx.

The push is a lower bound of the exact scores, converges to them on small graphs, stays
within its budget, and never looks beyond the seeds' part of the graph: its work does not
depend on how many other notes the vault holds. Graphs are built in memory (no index)."""

from __future__ import annotations

import numpy as np
import pytest

from brain.recall import ppr
from brain.recall.ppr import LinkGraph, seed_weights


class EdgeStore:
    """The two reads LinkGraph makes of an index store."""

    def __init__(self, notes: list[int], edges: list[tuple[int, int, str]]):
        self.notes, self.edges = notes, edges

    def note_ids(self) -> list[int]:
        return sorted(self.notes)

    def resolved_edges(self) -> list[tuple[int, int, str]]:
        return self.edges

    def resolved_edge_batches(self, batch: int = 1000):
        edges = [(s, t, int(k == "embed")) for s, t, k in self.edges]
        for start in range(0, len(edges), batch):
            yield edges[start : start + batch]


def random_graph(n: int, links: int, seed: int, first: int = 1, isolated: int = 0) -> EdgeStore:
    """n notes with ids from ``first``, ``links`` random links (some embeds), a few hubs, and
    ``isolated`` notes without any link."""
    rng = np.random.default_rng(seed)
    hubs = rng.choice(n, size=max(1, n // 50), replace=False)
    edges = []
    for _ in range(links):
        src = int(rng.integers(n))
        dst = int(rng.choice(hubs)) if rng.random() < 0.3 else int(rng.integers(n))
        if src != dst and src >= isolated and dst >= isolated:
            edges.append((first + src, first + dst, "embed" if rng.random() < 0.1 else "wikilink"))
    return EdgeStore(list(range(first, first + n)), edges)


def exact(graph: LinkGraph, seeds: dict[int, float]) -> np.ndarray:
    return graph.personalized_pagerank(seeds, iterations=1000, tol=1e-15)


def as_full(graph: LinkGraph, index: np.ndarray, scores: np.ndarray) -> np.ndarray:
    full = np.zeros(graph.size)
    full[index] = scores
    return full


@pytest.mark.parametrize("seed", [0, 1, 2])
def test_push_converges_to_the_power_iteration_and_never_exceeds_it(seed):
    graph = LinkGraph(random_graph(400, 1500, seed, isolated=10))
    rng = np.random.default_rng(seed)
    seeds = seed_weights([[int(i) for i in rng.choice(graph.note_ids, 30, replace=False)]], 15)
    truth = exact(graph, seeds)
    index, scores = graph.push(seeds, budget=10_000_000, epsilon=1e-12)
    pushed = as_full(graph, index, scores)
    assert np.all(pushed <= truth + 1e-12)  # a lower bound, always
    assert np.abs(pushed - truth).max() < 1e-9
    assert [n for n, _ in graph.top_of(index, scores, 60)] == [n for n, _ in graph.top(truth, 60)]


def test_push_and_power_iteration_match_networkx(monkeypatch):
    nx = pytest.importorskip("networkx")
    for name in ("BRAIN_PPR_EMBED_WEIGHT", "BRAIN_PPR_BACKLINK_WEIGHT", "BRAIN_PPR_LINK_WEIGHT"):
        monkeypatch.setenv(name, "1")
    monkeypatch.setenv("BRAIN_PPR_HUB_DAMPING", "0")
    store = random_graph(200, 600, 7, isolated=5)
    pairs = {tuple(sorted(e[:2])) for e in store.edges}  # networkx merges repeated links; brain adds them up
    store.edges = [(a, b, "wikilink") for a, b in sorted(pairs)]
    graph = LinkGraph(store)
    seeds = {3 + 1: 1.0, 50 + 1: 0.5, 2: 0.25}  # note 2 is one of the isolated ones
    g = nx.DiGraph()
    g.add_nodes_from(store.notes)
    for src, dst, _ in store.edges:
        g.add_edge(src, dst)
        g.add_edge(dst, src)
    expected = nx.pagerank(g, alpha=0.85, personalization=seeds, tol=1e-13, max_iter=1000)
    want = np.array([expected[int(n)] for n in graph.note_ids])
    index, scores = graph.push(seeds, budget=10_000_000, epsilon=1e-12)
    assert np.abs(as_full(graph, index, scores) - want).max() < 1e-8
    assert np.abs(exact(graph, seeds) - want).max() < 1e-8


def test_an_isolated_seed_keeps_its_mass_as_the_power_iteration_does():
    graph = LinkGraph(EdgeStore([1, 2, 3, 4], [(1, 2, "wikilink")]))
    seeds = {3: 1.0, 1: 1.0}
    index, scores = graph.push(seeds, budget=1_000_000, epsilon=1e-12)
    assert np.allclose(as_full(graph, index, scores), exact(graph, seeds), atol=1e-10)
    assert 4 not in [int(graph.note_ids[i]) for i in index]  # unreachable: never touched


def test_push_stays_within_its_budget_and_finer_budgets_only_improve():
    graph = LinkGraph(random_graph(3000, 15_000, 3))
    seeds = seed_weights([list(range(1, 3000, 97))], 15)
    truth = exact(graph, seeds)
    errors = []
    for budget in (500, 5_000, 50_000, 5_000_000):
        stats: dict = {}
        index, scores = graph.push(seeds, budget=budget, stats=stats)
        assert stats["work"] <= budget
        errors.append(np.abs(as_full(graph, index, scores) - truth).sum())
    assert errors == sorted(errors, reverse=True) and errors[-1] < 1e-4


def test_push_work_does_not_depend_on_the_rest_of_the_vault():
    """The seeds' component is the same; a thousand times more notes elsewhere change nothing."""
    small = random_graph(300, 1200, 5)
    results = []
    for others in (0, 1_000, 30_000):
        rest = random_graph(others, others * 3, 6, first=1_000_000) if others else EdgeStore([], [])
        graph = LinkGraph(EdgeStore(small.notes + rest.notes, small.edges + rest.edges))
        stats: dict = {}
        index, scores = graph.push({5: 1.0, 17: 0.5}, budget=20_000, stats=stats)
        reached = sorted(int(graph.note_ids[i]) for i in index)
        assert all(n < 1_000_000 for n in reached)
        results.append((stats["work"], stats["rounds"], reached, np.round(np.sort(scores), 15).tolist()))
    assert results[0] == results[1] == results[2]


def test_rank_runs_the_power_iteration_on_small_graphs_and_the_push_above(monkeypatch):
    graph = LinkGraph(random_graph(500, 2000, 9))
    seeds = seed_weights([list(range(1, 500, 31))], 15)
    power = graph.top(graph.personalized_pagerank(seeds), 20)
    index, scores = graph.push(seeds)
    pushed = graph.top_of(index, scores, 20)
    assert power != pushed  # the default budget stops short of exact here: the two are told apart
    assert graph.rank(seeds, 20) == power  # auto on a small graph: exact
    assert graph.rank(seeds, 20, method="push") == pushed
    monkeypatch.setenv("BRAIN_PPR_METHOD", "push")
    assert graph.rank(seeds, 20) == pushed
    monkeypatch.setenv("BRAIN_PPR_METHOD", "auto")
    monkeypatch.setattr(ppr, "EXACT_UP_TO", 100)
    assert graph.rank(seeds, 20) == pushed
    assert graph.rank(seeds, 20, method="power") == power
    assert len({n for n, _ in power} & {n for n, _ in pushed}) >= 18  # and close to each other


def test_a_hub_near_the_seed_ranks_below_a_leaf_once_scores_are_over_degree():
    # 1 (the seed) links to 2, a leaf, and to 10-13, which like 14-29 link to 3, an index note
    # (20 links). Every walk through 10-13 ends at the hub: raw, it outranks the leaf the seed
    # names directly; over √degree the leaf ranks first, for both methods.
    edges = (
        [(1, 2, "wikilink")] + [(1, n, "wikilink") for n in range(10, 14)] + [(n, 3, "wikilink") for n in range(10, 30)]
    )
    graph = LinkGraph(EdgeStore([1, 2, 3, *range(10, 30)], edges))
    for method in ("power", "push"):
        raw = dict(graph.rank({1: 1.0}, 30, method=method))
        normed = dict(graph.rank({1: 1.0}, 30, method=method, degree_norm=0.5))
        assert raw[3] > raw[2], method
        assert normed[2] > normed[3], method
        for note, degree in ((2, 1), (3, 20)):
            assert normed[note] == pytest.approx(raw[note] / degree**0.5, rel=1e-12), method
    assert graph.rank({1: 1.0}, 5, degree_norm=0.0) == graph.rank({1: 1.0}, 5)  # 0: the scores as they are


def test_no_usable_seed_ranks_nothing():
    graph = LinkGraph(random_graph(50, 100, 1))
    assert graph.rank({999: 1.0}, 10, method="push") == []
    assert graph.rank({999: 1.0}, 10, method="power") == []
    assert graph.rank({3: 0.0}, 10, method="push") == []


def test_links_to_no_note_of_the_index_are_left_out_not_given_to_another_note():
    """A damaged links table (a target id no note has): searchsorted gave such a link the next
    note's index, or one past the matrix (a ValueError from scipy, a traceback in brain ask)."""
    notes = [1, 2, 3, 10, 11]
    good = [(1, 2, "wikilink"), (2, 3, "wikilink"), (10, 11, "embed")]
    clean = LinkGraph(EdgeStore(notes, good))
    damaged = LinkGraph(EdgeStore(notes, [*good, (1, 5, "wikilink"), (3, 99, "wikilink"), (-4, 11, "wikilink")]))
    assert damaged.dropped == 3 and clean.dropped == 0
    assert damaged.edges == clean.edges == 3
    for key, values in clean.arrays().items():
        assert key == "dropped" or np.array_equal(damaged.arrays()[key], values), key
    assert LinkGraph.from_arrays(damaged.arrays()).dropped == 3  # a run taking it over says so too


def test_the_same_links_in_any_order_make_the_same_matrix_bit_for_bit():
    """A pair's link, embed and backlink add up in the matrix, and floating-point sums in another
    order differ in the last bit: the links are taken in one order, so the present's graph (read
    from ``links``), a past slice's (``link_history``) and a patched one are the same."""
    store = random_graph(300, 3000, 5)
    store.edges += [(t, s, k) for s, t, k in store.edges[:800]] + store.edges[:200]  # backlinks, links written twice
    shuffled = EdgeStore(store.notes, list(np.random.default_rng(1).permutation(np.array(store.edges, dtype=object))))
    shuffled.edges = [(int(s), int(t), str(k)) for s, t, k in shuffled.edges]
    a, b = LinkGraph(store), LinkGraph(shuffled)
    for key, value in a.arrays().items():
        assert np.array_equal(value, b.arrays()[key]), key


def test_a_graph_without_some_notes_is_the_graph_of_the_links_without_theirs():
    """``without`` (notes whose file is gone since the last index): the same matrix, bit for bit,
    as the graph read from an index that never held their links; the notes stay, linked to
    nothing, and a walk from elsewhere reaches none of them. None of them linked: the graph itself."""
    store = random_graph(300, 3000, 7)
    graph = LinkGraph(store)
    gone = {5, 17, 120, 10_000}  # 10,000: no note of the graph
    rest = EdgeStore(store.notes, [(s, t, k) for s, t, k in store.edges if s not in gone and t not in gone])
    for key, value in graph.without(gone).arrays().items():
        assert np.array_equal(value, LinkGraph(rest).arrays()[key]), key
    scores = exact(graph.without(gone), {3: 1.0})
    assert not scores[np.isin(graph.note_ids, list(gone))].any()
    assert graph.without({10_000}) is graph and graph.without(set()) is graph
