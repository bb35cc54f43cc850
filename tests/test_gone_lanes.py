"""Notes whose file is gone since the last index (deleted, renamed, unreadable) while the index
could not be updated: no lane lets one take a place a live note would have had, and a gone
note's words (its passages' links) vote for nothing. Fake embedder, tiny vaults; the files are
deleted after indexing and the recaller opened with ``update=False``."""

from __future__ import annotations

from pathlib import Path

from conftest import write

from brain.index.indexer import index_vault
from brain.recall.opening import open_recaller
from brain.recall.types import RecallSettings

FILLER = [(f"Filler {i}.md", f"# Filler {i}\n\nApples, pears and plums, basket {i}.\n") for i in range(8)]


def _vault(root: Path, notes: list[tuple[str, str]]) -> Path:
    for rel, text in notes + FILLER:
        write(root, rel, text)
    index_vault(root, progress=False)
    return root


def _ask(root: Path, query: str, mode: str, settings: RecallSettings, gone: list[str]):
    for rel in gone:
        (root / rel).unlink()
    recaller = open_recaller(root, update=False)
    try:
        assert recaller.gone, "the recaller knows of no note whose file is gone"
        return recaller.ask(query, mode, settings)
    finally:
        recaller.close()


def _paths(candidates) -> list[str]:
    return [c.path for c in candidates]


def test_gone_neighbours_take_no_place_of_the_one_hop_expansion(tmp_path):
    """The hop ranks a seed's neighbours and keeps the best ``max_new``: the two best were gone,
    so the hop added none (0 of 2 allowed), where the next two live neighbours were there."""
    root = _vault(
        tmp_path / "v",
        [
            (
                "Seed.md",
                "# Seed\n\nWalrus tusk ivory carving. See [[Gone one]], [[Gone two]], [[Live one]] and [[Live two]].\n",
            ),
            ("Gone one.md", "# Gone one\n\nWalrus tusk, carved.\n"),
            ("Gone two.md", "# Gone two\n\nA walrus tusk, ivory.\n"),
            ("Live one.md", "# Live one\n\nOn ivory.\n"),
            ("Live two.md", "# Live two\n\nCarving tools.\n"),
        ],
    )
    settings = RecallSettings(k=10, depth=1, seeds=1, max_new=2, pool=10)
    recaller = open_recaller(root)
    try:
        before = recaller.ask("walrus tusk ivory carving", "graph", settings)
    finally:
        recaller.close()
    hop = [c.path for c in before.results if "graph" in c.sources]
    assert sorted(hop) == ["Gone one.md", "Gone two.md"], hop  # the vault as built: the gone notes were the hop's two
    result = _ask(root, "walrus tusk ivory carving", "graph", settings, ["Gone one.md", "Gone two.md"])
    hop = [c.path for c in result.results if "graph" in c.sources]
    assert sorted(hop) == ["Live one.md", "Live two.md"] and result.candidates_added == 2, _paths(result.results)
    assert any("2 notes this query found were left out" in w for w in result.warnings), result.warnings


def test_gone_notes_take_no_place_of_the_lexical_lane(tmp_path):
    """BM25's best two were gone: at --depth 2 the lexical lane gave nothing, where two live
    notes hold the word."""
    root = _vault(
        tmp_path / "v",
        [
            ("Gone one.md", "# Gone one\n\nNarwhal narwhal narwhal.\n"),
            ("Gone two.md", "# Gone two\n\nNarwhal, narwhal.\n"),
            ("Live one.md", "# Live one\n\nA narwhal swam past the boat, then the fog came in and hid the coast.\n"),
            ("Live two.md", "# Live two\n\nSeen once: a narwhal, far out, among the ice floes at dawn, grey.\n"),
        ],
    )
    settings = RecallSettings(k=5, depth=2, seeds=2, max_new=5, pool=5)
    result = _ask(root, "narwhal", "hybrid", settings, ["Gone one.md", "Gone two.md"])
    assert sorted(_paths(result.lanes["lexical"])) == ["Live one.md", "Live two.md"], _paths(result.lanes["lexical"])


def test_a_gone_notes_passages_vote_for_nothing_in_the_anchor_lanes(tmp_path):
    """anchor_dense read the chunks nearest the query, anchor_lex those BM25 ranks best, a gone
    note's among them: what the
    deleted note said of the note it linked to ranked that note first. Its words are no longer
    the vault's: the next passage votes in its place."""
    root = _vault(
        tmp_path / "v",
        [
            ("Gone source.md", "# Gone source\n\nPlatypus venom spur. [[Alpha]]\n"),
            ("Live source.md", "# Live source\n\nPlatypus venom spur, in the river at night. [[Beta]]\n"),
            ("Alpha.md", "# Alpha\n\nThe first letter.\n"),
            ("Beta.md", "# Beta\n\nThe second letter.\n"),
        ],
    )
    settings = RecallSettings(k=5, depth=1, seeds=1, max_new=5, pool=5)
    recaller = open_recaller(root)
    try:
        before = recaller.ask("platypus venom spur", "hybrid+ppr", settings)
    finally:
        recaller.close()
    for lane in ("anchor_dense", "anchor_lex"):  # the vault as built: Gone source's vote
        assert _paths(before.lanes[lane]) == ["Alpha.md"], lane
    result = _ask(root, "platypus venom spur", "hybrid+ppr", settings, ["Gone source.md"])
    for lane in ("anchor_dense", "anchor_lex"):
        assert _paths(result.lanes[lane]) == ["Beta.md"], (lane, _paths(result.lanes[lane]))
    # in the ppr mode, no lexical lane: anchor_lex searches BM25 itself
    result = _ask(root, "platypus venom spur", "ppr", settings, [])
    assert _paths(result.lanes["anchor_lex"]) == ["Beta.md"], _paths(result.lanes["anchor_lex"])


def test_a_gone_note_takes_no_place_of_an_extra_lane(tmp_path):
    """An extra lane (anchor_dense here) cut at --depth whose best note was gone gave nothing:
    it is asked one note deeper, and the next note takes the place."""
    root = _vault(
        tmp_path / "v",
        [
            ("Source one.md", "# Source one\n\nPlatypus venom spur. [[Gone target]]\n"),
            ("Source two.md", "# Source two\n\nPlatypus venom spur, in the river at night. [[Beta]]\n"),
            ("Gone target.md", "# Gone target\n\nThe first letter.\n"),
            ("Beta.md", "# Beta\n\nThe second letter.\n"),
        ],
    )
    settings = RecallSettings(k=5, depth=1, seeds=1, max_new=5, pool=5)
    result = _ask(root, "platypus venom spur", "hybrid+ppr", settings, ["Gone target.md"])
    assert _paths(result.lanes["anchor_dense"]) == ["Beta.md"], _paths(result.lanes["anchor_dense"])


def test_a_gone_note_takes_no_place_of_the_pagerank_lane(tmp_path):
    """PageRank from the dense and lexical hits reached a gone note both of them link to before
    the note one links to: at --depth 3 the lane gave two notes, the gone one's place empty."""
    root = _vault(
        tmp_path / "v",
        [
            ("Source one.md", "# Source one\n\nPlatypus venom spur. [[Gone target]] [[Beta]]\n"),
            ("Source two.md", "# Source two\n\nPlatypus venom, the spur. [[Gone target]]\n"),
            ("Gone target.md", "# Gone target\n\nThe first letter.\n"),
            ("Beta.md", "# Beta\n\nThe second letter.\n"),
        ],
    )
    settings = RecallSettings(k=5, depth=3, seeds=2, max_new=5, pool=5)
    result = _ask(root, "platypus venom spur", "ppr", settings, ["Gone target.md"])
    assert sorted(_paths(result.lanes["ppr"])) == ["Beta.md", "Source one.md", "Source two.md"], _paths(
        result.lanes["ppr"]
    )


def test_pagerank_walks_through_no_gone_note(tmp_path):
    """PageRank from the hits walked through a gone note's links: the note only the gone one
    links to was ranked by its weight. Its links are no longer the vault's: the walk leaves it
    out, and that note is reached no more."""
    root = _vault(
        tmp_path / "v",
        [
            ("Seed.md", "# Seed\n\nPlatypus venom spur. [[Gone hub]]\n"),
            ("Gone hub.md", "# Gone hub\n\nThe hub of letters. [[Far]]\n"),
            ("Far.md", "# Far\n\nThe third letter.\n"),
        ],
    )
    settings = RecallSettings(k=5, depth=5, seeds=1, max_new=5, pool=5)
    recaller = open_recaller(root)
    try:
        before = recaller.ask("platypus venom spur", "ppr", settings)
    finally:
        recaller.close()
    assert "Far.md" in _paths(before.lanes["ppr"]), _paths(before.lanes["ppr"])  # the vault as built: through the hub
    result = _ask(root, "platypus venom spur", "ppr", settings, ["Gone hub.md"])
    assert "Far.md" not in _paths(result.lanes["ppr"]), _paths(result.lanes["ppr"])
    assert "Seed.md" in _paths(result.lanes["ppr"]), _paths(result.lanes["ppr"])


def test_anchor_lex_reads_past_a_gone_note_that_fills_the_lexical_lanes_hits(tmp_path):
    """anchor_lex reads the lexical lane's BM25 hits rather than searching again; every one of
    them was a passage of the gone note (many sections, each the query's words), so it read
    none and gave nothing, where a live note's passage below them links to Beta. It searches
    deeper, as the lanes do, until it has the passages it wants."""
    words = "The ledger of the season, written out in full by the keeper of the river station. " * 3
    sections = "".join(
        f"## Part {i}\n\nPlatypus venom spur, platypus spur {i}. [[Alpha]] {words}\n\n" for i in range(12)
    )
    root = _vault(
        tmp_path / "v",
        [
            ("Gone source.md", f"# Gone source\n\n{sections}"),
            ("Live source.md", f"# Live source\n\nA platypus venom spur, seen once. [[Beta]] {words * 2}\n"),
            ("Alpha.md", "# Alpha\n\nThe first letter.\n"),
            ("Beta.md", "# Beta\n\nThe second letter.\n"),
        ],
    )
    settings = RecallSettings(k=5, depth=1, seeds=1, max_new=5, pool=5)
    recaller = open_recaller(root)
    try:
        before = recaller.ask("platypus venom spur", "hybrid+ppr", settings)
    finally:
        recaller.close()
    assert _paths(before.lanes["anchor_lex"]) == ["Alpha.md"], _paths(before.lanes["anchor_lex"])
    result = _ask(root, "platypus venom spur", "hybrid+ppr", settings, ["Gone source.md"])
    assert _paths(result.lanes["anchor_lex"]) == ["Beta.md"], _paths(result.lanes["anchor_lex"])


# ----- a gone note whose chunks fill the whole chunk search of a lane ---------------------------

LEDGER = "The ledger of the season, written out in full by the keeper of the river station. " * 3
LONG_GONE = "Gone ledger.md"
LIVE = [f"Live {name}.md" for name in ("one", "two", "three", "four")]


def _long_gone_vault(root: Path, sections: int = 200) -> Path:
    """One note of ``sections`` chunks, each the query's words, and four short live notes that
    hold them too, each linking to a note of its own (what the anchor lanes vote for)."""
    parts = "".join(
        f"## Part {i}\n\nNarwhal tusk narwhal tusk {i}. [[Gone target]] {LEDGER}\n\n" for i in range(sections)
    )
    live = [
        (rel, f"# {rel[:-3]}\n\nA narwhal tusk, seen once off the coast. [[Target {i}]] {LEDGER * 2}\n")
        for i, rel in enumerate(LIVE)
    ]
    targets = [(f"Target {i}.md", f"# Target {i}\n\nThe letter {i}.\n") for i in range(len(LIVE))]
    return _vault(root, [(LONG_GONE, f"# Gone ledger\n\n{parts}"), *live, *targets, ("Gone target.md", "# G\n\nx\n")])


def test_the_long_gone_vault_is_what_the_lanes_tests_need(tmp_path):
    """The shape the tests below rely on, with the gone note's file still there: its chunks are
    BM25's and the vectors' first hundred chunks, more than a lane searches at --depth 2 (5 × 2
    for BM25, 2 × 2 for the anchor lanes)."""
    recaller = open_recaller(_long_gone_vault(tmp_path / "v"))
    try:
        store = recaller.store
        (gone,) = [n for n, p in store.conn.execute("SELECT id, path FROM notes") if p == LONG_GONE]
        assert store.note_chunk_counts([gone])[gone] >= 150
        result = recaller.ask("narwhal tusk", "hybrid", RecallSettings(k=10, depth=2, seeds=2, max_new=5, pool=10))
        hits = store.fts_search(result.lexical_match or "", (10.0, 5.0, 1.0), 100)
        ids, _ = recaller.vectors.search(recaller.embedder.embed_query("narwhal tusk"), 100)
        for chunks in ([c for c, _ in hits], ids.tolist()):
            assert set(store.chunk_note_ids(chunks).values()) == {gone}
    finally:
        recaller.close()


DEPTH2 = RecallSettings(k=10, depth=2, seeds=2, max_new=5, pool=10)
TARGETS = [f"Target {i}.md" for i in range(len(LIVE))]


def test_the_lexical_lane_reads_past_a_gone_note_that_fills_its_chunk_search(tmp_path):
    """BM25's lane searches 5 × depth chunks and folds them into notes: every one of them was a
    section of the gone note, asked again one note deeper (5 × 3 chunks) still, so the lane gave
    nothing where four live notes hold the words. The gone note's chunks take no place of the
    search: the live notes' come up."""
    root = _long_gone_vault(tmp_path / "v")
    result = _ask(root, "narwhal tusk", "hybrid", DEPTH2, [LONG_GONE])
    lexical = _paths(result.lanes["lexical"])
    assert len(lexical) == 2 and set(lexical) <= set(LIVE), lexical
    fused = [c for c in result.results if "lexical" in c.sources]
    assert {c.path for c in fused} == set(lexical), _paths(result.results)
    assert any("1 note this query found was left out" in w for w in result.warnings), result.warnings


def test_brain_ask_answers_the_live_notes_past_a_gone_note_that_fills_the_chunk_search(tmp_path):
    """The same through the CLI (`--no-update`, the note deleted after `brain index`)."""
    import json

    from click.testing import CliRunner

    from brain.cli import cli

    root = _long_gone_vault(tmp_path / "v")
    (root / LONG_GONE).unlink()
    args = ["ask", "--vault", str(root), "--json", "--no-rerank", "--no-update", "--no-server"]
    answer = CliRunner().invoke(cli, [*args, "--mode", "hybrid", "-k", "4", "--depth", "2", "narwhal tusk"])
    assert answer.exit_code == 0, answer.output
    results = json.loads(answer.stdout)["results"]
    lexical = [r["path"] for r in results if "lexical" in r["lanes"]]
    assert len(lexical) == 2 and set(lexical) <= set(LIVE), results
    assert LONG_GONE not in [r["path"] for r in results]


def test_the_dense_lane_reads_past_a_gone_note_that_fills_its_chunk_search(tmp_path):
    """The dense lane searches deeper until it has the notes asked for (the gone note is one):
    its first 100 chunks the gone note's, it still gives two live notes."""
    root = _long_gone_vault(tmp_path / "v")
    result = _ask(root, "narwhal tusk", "vector", DEPTH2, [LONG_GONE])
    dense = _paths(result.lanes["dense"])
    assert len(dense) == 2 and set(dense) <= set(LIVE), dense


def test_the_anchor_lanes_read_past_a_gone_note_that_fills_their_chunk_search(tmp_path):
    """anchor_dense reads the 2 × depth chunks nearest the query, anchor_lex BM25's best 2 ×
    depth: all the gone note's, which vote for nothing. The live notes' passages below them
    vote, in either mode (hybrid+ppr: anchor_lex reads the lexical lane's hits; ppr: its own)."""
    root = _long_gone_vault(tmp_path / "v")
    for mode in ("hybrid+ppr", "ppr"):
        result = _ask(root, "narwhal tusk", mode, DEPTH2, [LONG_GONE] if mode == "hybrid+ppr" else [])
        for lane in ("anchor_dense", "anchor_lex"):
            found = _paths(result.lanes[lane])
            assert len(found) == 2 and set(found) <= set(TARGETS), (mode, lane, found)


def test_the_lanes_read_past_a_long_gone_note_in_a_few_steps(tmp_path, monkeypatch):
    """The anchor lanes went past the gone note 2 × depth chunks a step: in ppr mode anchor_lex
    searched BM25 51 times, and anchor_dense read the notes of the chunks it reached 51 times
    (110 such reads for one query, the dense lane's search made twice among them). A step goes
    past every chunk of the gone notes it met: two searches, two reads a lane; the dense lane's
    one search reads the notes of what it reached at each of its four depths (×4 a step)."""
    from brain.index.store import IndexStore

    root = _long_gone_vault(tmp_path / "v")
    calls = {"fts_search": 0, "chunk_note_ids": 0}
    for name in calls:
        method = getattr(IndexStore, name)

        def counted(self, *args, _method=method, _name=name, **kwargs):
            calls[_name] += 1
            return _method(self, *args, **kwargs)

        monkeypatch.setattr(IndexStore, name, counted)
    result = _ask(root, "narwhal tusk", "ppr", DEPTH2, [LONG_GONE])
    assert len(result.lanes["anchor_lex"]) == len(result.lanes["anchor_dense"]) == 2
    assert calls["fts_search"] <= 2 and calls["chunk_note_ids"] <= 8, calls


# ----- how deep a chunk search reads past the gone notes (recall/live.py) ----------------------


class _Ranked:
    """A store of one-chunk live notes and gone notes of many chunks, and the one search over
    them: the chunk ids in ``ranking``'s order (chunk id c of note ``note[c]``)."""

    def __init__(self, note: dict[int, int], ranking: list[int]):
        self.note, self.ranking = note, ranking
        self.asked: list[int] = []

    def chunk_note_ids(self, chunk_ids):
        return {c: self.note[c] for c in chunk_ids if c in self.note}

    def note_chunk_counts(self, note_ids):
        counts: dict[int, int] = {}
        for n in self.note.values():
            if n in note_ids:
                counts[n] = counts.get(n, 0) + 1
        return counts

    def search(self, reach: int) -> list[tuple[int, float]]:
        self.asked.append(reach)
        return [(c, -float(i)) for i, c in enumerate(self.ranking[:reach])]


def _long_gone_ranking(gone_chunks: int, gone_at: list[int], live: int = 2000) -> tuple[_Ranked, list[int]]:
    """Note 0 gone, of ``gone_chunks`` chunks: at the places ``gone_at`` of the ranking, the rest
    below every live chunk; live notes 1.. one chunk each. Returns the store, and the live
    chunk ids in ranking order."""
    gone_ids = list(range(live, live + gone_chunks))
    note = {c: c + 1 for c in range(live)} | {c: 0 for c in gone_ids}
    ranking = list(range(live))
    for place, c in zip(sorted(gone_at), gone_ids):
        ranking.insert(place, c)
    ranking += gone_ids[len(gone_at) :]
    return _Ranked(note, ranking), list(range(live))


def test_a_few_chunks_of_a_long_gone_note_do_not_send_the_search_past_all_of_its_chunks():
    """A gone note of 5,000 sections (a log, a journal kept in one note) with 3 chunks among
    BM25's 300 hits: the search went on 5,300 deep (every chunk it has), for 3 places; at scale a
    search that deep is one FTS5 cannot narrow, scoring every match. Twice as deep finds them."""
    from brain.recall.live import live_hits

    store, live = _long_gone_ranking(5000, [10, 150, 290])
    found = live_hits(store, store.search, 300, {0})  # type: ignore[arg-type]
    assert [c for c, _ in found.hits] == live[:300] and found.gone == {0: 10}
    assert store.asked == [300, 600], store.asked


def test_a_long_gone_note_that_fills_the_hits_is_searched_past_at_once():
    """Its chunks most of the hits: every one of them may be above the next live one, asked for
    in one more search (not doubling, a search a step, through 5,000 chunks)."""
    from brain.recall.live import live_hits

    store, live = _long_gone_ranking(5000, [place for place in range(3000) if place % 10])  # 9 in 10
    found = live_hits(store, store.search, 300, {0})  # type: ignore[arg-type]
    assert [c for c, _ in found.hits] == live[:300]
    assert len(store.asked) == 2 and store.asked[1] == 300 + 5000, store.asked


def test_live_hits_are_the_first_live_chunks_of_the_whole_ranking_however_the_gone_lie():
    import random

    from brain.recall.live import live_hits

    rng = random.Random(7)
    for _ in range(300):
        chunks = rng.randint(1, 400)
        places = sorted(rng.sample(range(0, 600), rng.randint(0, min(chunks, 300))))
        store, live = _long_gone_ranking(chunks, places, live=rng.randint(0, 500))
        wanted = rng.randint(1, 200)
        found = live_hits(store, store.search, wanted, {0})  # type: ignore[arg-type]
        assert [c for c, _ in found.hits] == live[:wanted], (chunks, places, wanted)
        assert len(store.asked) <= 2 + (len(live) + chunks).bit_length(), store.asked
