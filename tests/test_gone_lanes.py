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
