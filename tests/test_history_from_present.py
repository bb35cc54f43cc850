"""A view of the past takes the present's names and link graph and applies the difference
(recall/past_carry.py) instead of building its own from the slice: both hold exactly the same,
and answer the same, at every moment of a timeline of every kind of change (notes made,
deleted, renamed, re-titled, re-aliased, moved; links added, removed, written twice, resolving
elsewhere; names several notes share), with the present's kept on disk or not, and when the
index changes under a view. Fake embedder throughout."""

from __future__ import annotations

import random
from pathlib import Path

import numpy as np
import pytest
from conftest import write
from index_helpers import index_then_moment

from brain import config
from brain.index.indexer import index_vault
from brain.recall import past_carry
from brain.recall.gate import name_table
from brain.recall.names import NameIndex, name_entries
from brain.recall.opening import open_recaller
from brain.recall.pipeline import Recaller
from brain.recall.types import BASE_MODES, RecallSettings

SETTINGS = RecallSettings(k=10, depth=20, seeds=5, max_new=10, pool=10)
QUERIES = [
    "Canary",  # a title: the gate and the names lane
    "canary release pager captain",
    "Pager duty",
    "Blue-green",  # an alias
    "rollout stratgy for the regions",  # a typo: the name index's variants
    "who answers the pager during a rollout of the blue green stacks and the canary build in March?",
    "Ёлка",
    "SS7",  # initials
    "Notes",  # a name several notes hold
    "Drafts",
    "Later",
]


def _recaller(root: Path, monkeypatch, *, from_present: bool, **past) -> Recaller:
    monkeypatch.setattr(past_carry, "TAKE_FROM_PRESENT", from_present)
    return open_recaller(root, update=False, **past)


def _structures(recaller: Recaller) -> dict:
    index, graph = recaller.name_index(), recaller.link_graph()
    return {
        "names": recaller.names(),
        "names order": [(n.note_id, n.text, n.words) for n in index.names],
        "titled": index.titled,
        "by_word": index.by_word,
        "idf": index.idf,
        "max_idf": index.max_idf,
        "initials": index.initials,
        # A word's variants and stems: which words, in the order the words were first met
        # (another order in another process too: set order; no answer depends on it).
        "fuzzy": {k: sorted(v) for k, v in index._fuzzy.items()},
        "by_stem": {k: sorted(v) for k, v in index.by_stem.items()},
        "graph": {k: v.tolist() for k, v in graph.arrays().items()},
        "dropped": graph.dropped,
    }


def _answers(recaller: Recaller) -> list:
    return [
        [(c.note_id, c.path, c.text, c.score) for c in recaller.ask(query, mode, SETTINGS).results]
        + [recaller.gate(query).reason]
        for mode in BASE_MODES
        for query in QUERIES
    ]


def _assert_same_at(root: Path, monkeypatch, **past) -> None:
    built = _recaller(root, monkeypatch, from_present=False, **past)
    try:
        expected, answers = _structures(built), _answers(built)
    finally:
        built.close()
    for run in ("the present built", "the present kept"):  # the first run keeps the present's on disk
        taken = _recaller(root, monkeypatch, from_present=True, **past)
        try:
            got = _structures(taken)
            for key, value in expected.items():
                assert got[key] == value, (run, key, past)
            assert _answers(taken) == answers, (run, past)
        finally:
            taken.close()


@pytest.fixture
def timeline(tmp_path):
    """A vault taken through every kind of change to names and links, indexed after each; the
    moments between."""
    root = tmp_path / "vault"
    write(root, "A/Drafts.md", "# Drafts\n\nHalf-written things.\n")
    index_vault(root, progress=False)  # the first note: its id is below every other's
    write(root, "Canary.md", "# Canary\n\nCanary releases send a little traffic first. See [[Pager duty]].\n")
    write(root, "Pager duty.md", "# Pager duty\n\nThe release captain answers the pager. [[Canary]] [[Canary]]\n")
    write(
        root,
        "Blue green.md",
        "---\naliases: [Blue-green, BG]\n---\n# Blue green\n\nTwo stacks; the switch flips all traffic. ![[Canary]]\n",
    )
    write(
        root, "Rollout.md", "# Rollout strategy\n\nRegion by region, see [[Canary]] and [[Blue-green]] and [[Later]].\n"
    )
    write(root, "A/Notes.md", "# Notes\n\nSome notes on [[Rollout]].\n")
    write(root, "B/Notes.md", "# Notes\n\nOther notes, on [[Pager duty]].\n")  # a name two notes hold
    write(root, "Signalling System 7.md", "# Signalling System 7\n\nSS7 carries the signalling. [[Canary]]\n")
    moments = {"made": index_then_moment(root)}
    write(
        root, "Later.md", "# Later\n\nMade after: links to [[Canary]] and [[Rollout]].\n"
    )  # a note made; a link resolves
    write(root, "Secure Shell 7.md", "# Secure Shell 7\n\nNot the signalling one. [[Later]]\n")  # SS7 twice
    moments["a note made"] = index_then_moment(root)
    (root / "B/Notes.md").unlink()
    moments["a note deleted"] = index_then_moment(root)
    (root / "Canary.md").rename(root / "Canary releases.md")  # renamed: its links resolve elsewhere
    moments["a note renamed"] = index_then_moment(root)
    write(root, "Pager duty.md", "---\naliases: [Notes, On call, Later]\n---\n# Pager duty\n\nThe captain. [[Later]]\n")
    moments["aliases added, links changed"] = index_then_moment(root)
    write(root, "Rollout.md", "---\ntitle: Rollout plan\n---\nAll at once now, with [[Blue green]] only.\n")
    moments["re-titled, a link removed"] = index_then_moment(root)
    (root / "C").mkdir()
    (root / "Blue green.md").rename(root / "C/Blue green.md")
    write(root, "Ёлка.md", "# Ёлка\n\nA fir tree, [[Later]].\n")
    moments["moved, a Russian name"] = index_then_moment(root)
    write(root, "B/Notes.md", "# Notes\n\nBack again, on [[Canary releases]].\n")  # restored where it was
    moments["a name shared again"] = index_then_moment(root)
    write(
        root, "A/Drafts.md", "---\ntitle: Notes\n---\nNo longer drafts. [[Ёлка]]\n"
    )  # the first note takes a name others hold
    (root / "Secure Shell 7.md").unlink()
    moments["the first holder of a name changed"] = index_then_moment(root)
    write(root, "Pager duty.md", "---\naliases: [Notes, On call]\n---\n# Pager duty\n\nThe captain. [[Later]]\n")
    moments["an alias dropped: one note has the name"] = index_then_moment(root)
    write(root, "Later.md", "# Later\n\nMade after: links to [[Ёлка]], [[Ёлка]] and ![[Pager duty]].\n")
    moments["links alone changed"] = index_then_moment(root)
    return root, moments


def test_every_moment_reads_the_same_from_the_present_as_from_its_slice(timeline, monkeypatch):
    root, at = timeline
    for moment in at.values():
        _assert_same_at(root, monkeypatch, as_of=moment)
    _assert_same_at(root, monkeypatch, valid_at="2026-01-01")
    _assert_same_at(root, monkeypatch, as_of=at["a note renamed"], valid_at="2026-01-01")


def test_as_of_now_takes_the_present_itself(timeline, monkeypatch):
    """Nothing changed since: no difference to apply, the present's own (read from the disk)."""
    import time

    root, _ = timeline
    present = open_recaller(root, update=False)
    present.names(), present.name_index(), present.link_graph()
    present.close()  # keeps them
    monkeypatch.setattr(past_carry, "TAKE_FROM_PRESENT", True)
    view = open_recaller(root, update=False, as_of=time.time())
    try:
        assert view._present is None
        names = view.names()
        assert view._present is not None and view._present._name_index is None  # a vector query reads no name index
        assert view._present._kept_name_index is not None
        index, graph = view.name_index(), view.link_graph()
        assert view._present is not None and not view._present._built_here  # read from the disk, built nothing
        assert names is view._present._names and index is view._present._name_index
        assert graph is view._present._link_graph
    finally:
        view.close()


def test_a_moment_before_changes_patches_and_keeps_the_present_for_the_next_run(timeline, monkeypatch):
    root, at = timeline
    cache = config.index_dir(root) / "recall-cache.npz"
    cache.unlink(missing_ok=True)
    monkeypatch.setattr(past_carry, "TAKE_FROM_PRESENT", True)
    view = open_recaller(root, update=False, as_of=at["made"])
    try:
        view.names(), view.name_index(), view.link_graph()
        assert view._present is not None and view._present._built_here == {"names", "name index", "link graph"}
        assert view._difference is not None and view._difference.changed
        assert view.names() is not view._present._names
    finally:
        view.close()
    assert cache.exists()  # the present's, for the next run
    again = open_recaller(root, update=False, as_of=at["made"])
    try:
        again.names(), again.name_index(), again.link_graph()
        assert again._present is not None and not again._present._built_here
    finally:
        again.close()


def test_a_view_whose_present_changed_under_it_builds_from_its_slice(timeline, monkeypatch):
    """The present's names were read, then the index changed: what the view compares with now is
    not what those were built from, so it builds its own (and holds what the slice holds)."""
    root, at = timeline
    expected_view = _recaller(root, monkeypatch, from_present=False, as_of=at["a note made"])
    expected = _structures(expected_view)
    expected_view.close()
    present = open_recaller(root, update=False)
    present.names(), present.name_index(), present.link_graph()
    present.close()
    view = _recaller(root, monkeypatch, from_present=True, as_of=at["a note made"])
    try:
        view.link_graph()  # reads the present's basis and what is kept
        write(root, "Canary releases.md", "---\naliases: [Notes]\n---\n# Renamed again\n\n[[Later]]\n")
        write(root, "Notes twice.md", "# Notes\n\nA third.\n")
        index_vault(root, progress=False)
        got = _structures(view)
        for key, value in expected.items():
            assert got[key] == value, key
        assert view._difference is None  # built from the slice
    finally:
        view.close()


# ----- the parts, against a build of the whole, over random notes -----------------------------

WORDS = ["alpha", "beta", "Gamma", "delta ray", "Ёлка", "ёлки", "Café", "the notes", "Notes", "SS7", "x"]


def _random_notes(rng: random.Random, ids: list[int]) -> dict[int, tuple[str, str, tuple[str, ...]]]:
    out = {}
    for n in ids:
        title = " ".join(rng.sample(WORDS, rng.randint(1, 3)))
        folder = f"{rng.choice(['A', 'B/c'])}{n}/"  # paths are unique; file names are not
        stem = rng.choice([title, f"note {n}", rng.choice(WORDS)])
        aliases = tuple(rng.choice(WORDS + [title]) for _ in range(rng.choice([0, 0, 1, 2])))
        out[n] = (f"{folder}{stem}.md", title, aliases)
    return out


def _rows(notes: dict[int, tuple[str, str, tuple[str, ...]]]):
    ordered = sorted(notes.items())
    return [(n, p, t) for n, (p, t, _) in ordered], [(n, a) for n, (_, _, al) in ordered for a in al]


@pytest.mark.parametrize("seed", range(30))
def test_patching_the_names_builds_what_a_build_of_the_whole_does(seed):
    rng = random.Random(seed)
    now = _random_notes(rng, rng.sample(range(1, 60), rng.randint(0, 40)))
    then = dict(now)
    for n in rng.sample(sorted(now), min(len(now), rng.randint(0, 8))):
        if rng.random() < 0.3:
            del then[n]  # made since
        else:
            then[n] = _random_notes(rng, [n])[n]  # renamed, re-titled, re-aliased since
    then.update(_random_notes(rng, rng.sample(range(60, 80), rng.randint(0, 4))))  # deleted since
    changed = frozenset(n for n in now.keys() | then.keys() if now.get(n) != then.get(n))
    difference = past_carry.Difference(
        changed, {n: now[n] for n in changed if n in now}, {n: then[n] for n in changed if n in then}
    )

    present, whole = (
        NameIndex.from_entries(*name_entries(*_rows(now))),
        NameIndex.from_entries(*name_entries(*_rows(then))),
    )
    patched = past_carry.name_index(present, difference)
    assert [(n.note_id, n.text, n.words) for n in patched.names] == [(n.note_id, n.text, n.words) for n in whole.names]
    assert (patched.titled, patched.by_word, patched.idf, patched.initials) == (
        whole.titled,
        whole.by_word,
        whole.idf,
        whole.initials,
    )
    assert {k: sorted(v) for k, v in patched._fuzzy.items()} == {k: sorted(v) for k, v in whole._fuzzy.items()}
    assert {k: sorted(v) for k, v in patched.by_stem.items()} == {k: sorted(v) for k, v in whole.by_stem.items()}
    assert patched.max_idf == whole.max_idf

    names, holders = name_table(*_rows(now))
    by_path = {path: n for n, (path, _, _) in now.items()}
    table = past_carry.gate_names(names, holders, difference, by_path.get, then.get)
    assert table == name_table(*_rows(then))[0]


@pytest.mark.parametrize("seed", range(10))
def test_the_holders_are_every_note_with_the_name_in_the_tables_order(seed):
    from brain.recall.gate import normalise_name

    notes = _random_notes(random.Random(seed), list(range(1, 40)))
    names, holders = name_table(*_rows(notes))
    order: dict[str, list[tuple[int, int]]] = {}
    for n, (path, title, aliases) in sorted(notes.items()):
        stem = path.rsplit("/", 1)[-1][:-3]
        for key, part in [(normalise_name(title), 0), (normalise_name(stem), 0)] + [
            (normalise_name(a), 1) for a in aliases
        ]:
            order.setdefault(key, []).append((part, n))
    for key, found in order.items():
        first = {}
        for part, n in sorted(found):
            first.setdefault(n, (part, n))
        expected = sorted(first.values())
        assert names[key] == notes[expected[0][1]][0]
        assert holders.get(key) == (tuple(expected) if len(expected) > 1 else None), key


def test_a_graph_of_the_same_links_is_the_one_given_and_else_built():
    from brain.recall.ppr import LinkGraph

    rng = np.random.default_rng(3)
    ids = list(range(5, 205))
    edges = np.column_stack([rng.choice(ids, 900), rng.choice(ids, 900), rng.integers(0, 2, 900)])
    edges = edges[edges[:, 0] != edges[:, 1]]
    present = LinkGraph.of_links(ids, edges)
    assert LinkGraph.of_links(ids, edges[::-1].copy(), like=present) is present
    other = LinkGraph.of_links(ids, edges[1:], like=present)
    assert other is not present and other.edges == present.edges - 1
    fewer = LinkGraph.of_links(ids[:-1], edges[(edges[:, :2] != ids[-1]).all(axis=1)], like=present)
    assert fewer is not present and fewer.size == present.size - 1


@pytest.mark.parametrize("seed", range(5))
def test_a_slices_edges_answer_as_the_list_of_them_did(seed):
    """A slice keeps its edges as columns (recall/past.py ``_Edges``): each lookup gives what a
    walk over the (source, target, kind, times written) tuples gave, in the same order."""
    from brain.recall.past import _Edges

    rng = random.Random(seed)
    rows = [
        (
            rng.randint(1, 30),
            rng.randint(1, 30),
            rng.choice(["wikilink", "embed", "markdown"]),
            rng.choice([1, 1, 2, 0]),
        )
        for _ in range(200)
    ]
    edges = _Edges(rows)
    inside = sorted(rng.sample(range(1, 31), 25))
    kept = [r for r in rows if r[0] in inside and r[1] in inside]
    between = edges.between(inside)
    assert between.rows() == [(s, t, k) for s, t, k, c in kept for _ in range(max(1, c))]
    wanted = set(rng.sample(inside, 6))
    assert between.rows(between.src_in(wanted)) == [
        (s, t, k) for s, t, k, c in kept if s in wanted for _ in range(max(1, c))
    ]
    assert between.rows(between.dst_in(wanted), repeat=False) == [(s, t, k) for s, t, k, _ in kept if t in wanted]
    assert between.array().tolist() == [[s, t, int(k == "embed")] for s, t, k, c in kept for _ in range(max(1, c))]
