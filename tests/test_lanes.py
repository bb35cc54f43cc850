"""Issue 6 lanes: lexical (FTS5), Personalized PageRank, RRF, freshness and supersession."""

from __future__ import annotations

import random

import numpy as np
import pytest
from click.testing import CliRunner
from conftest import write
from index_helpers import open_store

from brain.cli import cli
from brain.db import open_db
from brain.index.indexer import index_vault
from brain.recall import fusion
from brain.recall.lexical import fts_query, lexical_search
from brain.recall.opening import open_recaller
from brain.recall.ppr import LinkGraph, seed_weights
from brain.recall.supersession import successors
from brain.recall.types import Mode, RecallSettings

WORDS = (
    "river stone harbour lantern window garden copper valley orchard meadow pepper "
    "ladder kettle anchor ribbon candle basket thunder marble pillow"
).split()


def _prose(rng: random.Random, n: int) -> str:
    return " ".join(rng.choice(WORDS) for _ in range(n)) + "."


@pytest.fixture
def rare_vault(tmp_path):
    rng = random.Random(7)
    root = tmp_path / "rare"
    for i in range(30):
        write(root, f"Note {i:02}.md", f"# Note {i}\n\n{_prose(rng, 60)}\n")
    # The rare token sits once inside a long note of common words.
    write(root, "Incident.md", f"# Incident\n\n{_prose(rng, 120)} The log said ERRX-4471 once. {_prose(rng, 120)}\n")
    index_vault(root, progress=False)
    return root


def test_lexical_lane_finds_a_rare_token_dense_misses(rare_vault, closing):
    recaller = closing(open_recaller(rare_vault))
    settings = RecallSettings(k=3)
    for query in ("errx-4471", "what did the log say about ERRX-4471"):
        dense = recaller.ask(query, "vector", settings)
        assert "Incident.md" not in [c.path for c in dense.results]  # the premise: dense misses it
        assert lexical_search(recaller.store, query, depth=5)[0].path == "Incident.md"
        hybrid = recaller.ask(query, "hybrid", settings)
        paths = [c.path for c in hybrid.results]
        assert "Incident.md" in paths
        assert "lexical" in hybrid.results[paths.index("Incident.md")].sources
    # The bare token: lexical rank 1 plus a weak dense rank beats the dense lane's own top.
    assert recaller.ask("errx-4471", "hybrid", settings).results[0].path == "Incident.md"


def test_fts_query_is_safe_for_any_input():
    assert fts_query('what is "ERRX-4471" (really)?') == '"errx" OR "4471" OR "really"'
    assert fts_query("the of and") == '"the" OR "of" OR "and"'
    assert fts_query("??") is None
    assert fts_query("Crème brûlée") == '"creme" OR "brulee"'  # as unicode61 holds them
    assert fts_query("ok \udc80 fine") == '"ok" OR "fine"'  # a lone surrogate: no word, no error
    assert fts_query("abc\x00def") == '"abc" OR "def"'


def test_the_query_tokenizer_answers_each_thread_its_own_words():
    """`brain serve` answers queries on several threads, and they share one in-memory FTS5 table."""
    from concurrent.futures import ThreadPoolExecutor

    from brain.recall.lexical import fts_terms

    queries = [f"Ruairí{i} wpa_supplicant{i} Straße{i} ЁЛКА{i}" for i in range(200)]
    expected = [[f"ruairi{i}", "wpa", f"supplicant{i}", f"straße{i}", f"елка{i}"] for i in range(200)]
    with ThreadPoolExecutor(8) as pool:
        assert list(pool.map(fts_terms, queries)) == expected


def test_lexical_handles_accents_and_cyrillic(toy_vault, closing):
    index_vault(toy_vault, progress=False)
    store = closing(open_store(toy_vault))
    assert lexical_search(store, "борщ", depth=3)[0].path == "Cooking/Борщ.md"
    assert any(c.path.startswith("Cooking/") for c in lexical_search(store, "creme brulee", depth=3))


def test_a_query_word_counts_as_the_index_holds_it(tmp_path, closing):
    """Accents, underscores, ß and ё: the query's words are looked up in the vocabulary as the
    tokenizer holds them. Before, "Ruairí" was looked up as written, counted in no chunk and left
    out, and a query of such words searched nothing."""
    root = tmp_path / "v"
    write(root, "Ruairí.md", "# Ruairí Ó Brádaigh\n\nLed the party for years.\n")
    write(root, "Wifi.md", "# Wifi\n\nConfigure wpa_supplicant before dhcpcd.\n")
    write(root, "Street.md", "# Straße\n\nThe Hauptstraße runs past the station.\n")
    write(root, "Tree.md", "# Ёлка\n\nНовогодняя ёлка стоит в углу.\n")
    for i in range(6):
        write(root, f"Other {i}.md", f"# Other {i}\n\nNothing of the kind here, note {i}.\n")
    index_vault(root, progress=False)
    store = closing(open_store(root))
    for query, path in [
        ("Ruairí Ó Brádaigh", "Ruairí.md"),
        ("RUAIRÍ", "Ruairí.md"),
        ("wpa_supplicant", "Wifi.md"),
        ("Straße", "Street.md"),
        ("ЁЛКА", "Tree.md"),
    ]:
        found = lexical_search(store, query, depth=3)
        assert found and found[0].path == path, query


def test_fts_stays_in_step_with_edits_deletes_and_renames(rare_vault, closing):
    store = closing(open_store(rare_vault))

    def fts_count() -> int:
        return store.conn.execute("SELECT count(*) FROM chunks_fts").fetchone()[0]

    def chunk_count() -> int:
        return store.conn.execute("SELECT count(*) FROM chunks").fetchone()[0]

    assert fts_count() == chunk_count()
    write(rare_vault, "Incident.md", "# Incident\n\nNow the log says QWZ-9 instead.\n")
    write(rare_vault, "Fresh.md", "# Fresh\n\nA brand new note about plover.\n")
    (rare_vault / "Note 00.md").unlink()
    (rare_vault / "Note 01.md").rename(rare_vault / "Renamed one.md")
    index_vault(rare_vault, progress=False)
    assert fts_count() == chunk_count()
    assert lexical_search(store, "errx-4471") == []
    assert lexical_search(store, "qwz-9")[0].path == "Incident.md"
    assert lexical_search(store, "plover")[0].path == "Fresh.md"
    titles = {r[0] for r in store.conn.execute("SELECT title FROM chunks_fts")}
    assert "Renamed one" in titles and "Note 01" not in titles and "Note 00" not in titles


def test_term_counts_and_chunk_count_follow_writes_by_any_connection(rare_vault, closing):
    """Both are cached between queries; a write by another process or by this connection
    must show at once, or the common-term skip would judge terms on stale counts. The BM25
    index's row count (read from FTS5's averages record, not counted) follows them too."""
    store = closing(open_store(rare_vault))
    chunks = store.chunk_count()
    assert store.fts_row_count() == chunks
    errx = store.term_chunk_counts(["errx"])["errx"]
    assert errx >= 1 and store.term_chunk_counts(["plover", "errx"]) == {"plover": 0, "errx": errx}
    write(rare_vault, "Fresh.md", "# Fresh\n\nA plover, another plover.\n")
    index_vault(rare_vault, progress=False)  # another connection
    assert store.term_chunk_counts(["plover", "errx"]) == {"plover": 1, "errx": errx}
    assert store.chunk_count() == store.fts_row_count() == chunks + 1
    fresh = store.note_id("Fresh.md")
    assert fresh is not None
    with store.transaction():  # this connection
        store.delete_notes([fresh])
    assert store.term_chunk_counts(["plover"]) == {"plover": 0}
    assert store.chunk_count() == store.fts_row_count() == chunks


def _graph_vault(root):
    # a → b → c, a → d, e → a (backlink), f isolated; c embeds d.
    write(root, "a.md", "[[b]] and [[d]]")
    write(root, "b.md", "[[c]]")
    write(root, "c.md", "![[d]]")
    write(root, "d.md", "leaf")
    write(root, "e.md", "[[a]]")
    write(root, "f.md", "alone")
    index_vault(root, progress=False)
    return open_store(root)


def test_ppr_matches_networkx(tmp_path, monkeypatch, closing):
    nx = pytest.importorskip("networkx")
    for name in ("BRAIN_PPR_EMBED_WEIGHT", "BRAIN_PPR_BACKLINK_WEIGHT", "BRAIN_PPR_LINK_WEIGHT"):
        monkeypatch.setenv(name, "1")
    monkeypatch.setenv("BRAIN_PPR_HUB_DAMPING", "0")
    store = closing(_graph_vault(tmp_path / "g"))
    graph = LinkGraph(store)
    ids = {r["path"]: r["id"] for r in store.conn.execute("SELECT id, path FROM notes")}
    scores = graph.personalized_pagerank({ids["a.md"]: 1.0}, alpha=0.85, iterations=200, tol=1e-12)
    g = nx.DiGraph()
    g.add_nodes_from(ids.values())
    for src, dst in store.conn.execute("SELECT source_id, target_id FROM links WHERE target_id IS NOT NULL"):
        g.add_edge(src, dst)
        g.add_edge(dst, src)
    expected = nx.pagerank(g, alpha=0.85, personalization={ids["a.md"]: 1.0}, tol=1e-12, max_iter=500)
    for i, note_id in enumerate(graph.note_ids):
        assert scores[i] == pytest.approx(expected[int(note_id)], abs=1e-8)
    assert scores[np.searchsorted(graph.note_ids, ids["f.md"])] == 0.0  # unreachable from the seed


def test_ppr_weights_hubs_and_embeds(tmp_path, closing):
    store = closing(_graph_vault(tmp_path / "g"))
    graph = LinkGraph(store)
    ids = {r["path"]: r["id"] for r in store.conn.execute("SELECT id, path FROM notes")}
    scores = graph.personalized_pagerank({ids["c.md"]: 1.0})
    # From c: its link to b (plain, backwards) outweighs its embed of d (embed weight 0.5).
    assert scores[np.searchsorted(graph.note_ids, ids["b.md"])] > scores[np.searchsorted(graph.note_ids, ids["d.md"])]
    assert abs(scores.sum() - 1.0) < 1e-6
    top = graph.top(scores, 3)
    assert top[0][0] == ids["c.md"] and len(top) == 3


def test_ppr_is_fast_on_a_10k_note_graph(tmp_path):
    # Not a timing assertion: proves the sparse path handles 10k notes / 50k links at all.
    from brain.recall.ppr import LinkGraph as LG

    class FakeStore:  # the two store reads LinkGraph makes
        @staticmethod
        def note_ids():
            return list(range(1, 10_001))

        @staticmethod
        def resolved_edge_batches():
            rng = np.random.default_rng(0)
            src, dst = rng.integers(1, 10_001, 50_000), rng.integers(1, 10_001, 50_000)
            yield [(int(s), int(d), 0) for s, d in zip(src, dst) if s != d]

    graph = LG(FakeStore)
    scores = graph.personalized_pagerank(seed_weights([[1, 2, 3]], 15))
    assert graph.size == 10_000 and abs(scores.sum() - 1) < 1e-6


def test_rrf_arithmetic():
    fused = fusion.rrf({"dense": [1, 2, 3], "lexical": [3, 1]}, k=60)
    assert fused[1] == pytest.approx(1 / 61 + 1 / 62)
    assert fused[2] == pytest.approx(1 / 62)
    assert fused[3] == pytest.approx(1 / 63 + 1 / 61)
    assert sorted(fused, key=lambda n: -fused[n]) == [1, 3, 2]
    assert fusion.rrf({"a": [5]}, k=0)[5] == 1.0


def test_rrf_takes_a_k_per_lane():
    """A lane given its own k votes flatter (the dense lane's, ``RecallSettings.lane_rrf_k``);
    the others keep k."""
    fused = fusion.rrf({"dense": [1, 2], "lexical": [2, 1]}, k=60, weights={"dense": 1.0}, lane_k={"dense": 120})
    assert fused[1] == pytest.approx(1 / 121 + 1 / 62)
    assert fused[2] == pytest.approx(1 / 122 + 1 / 61)
    assert fused[2] > fused[1]  # with one k for both the two would tie
    assert fusion.rrf({"dense": [1], "lexical": [1]}, k=60, lane_k={}) == fusion.rrf(
        {"dense": [1], "lexical": [1]}, k=60
    )


def test_seed_weights_and_successor_order():
    assert seed_weights([[1, 2], [2, 3]], 2) == {1: 1.0, 2: 1.5, 3: 0.5}
    assert fusion.order_successors_first([1, 2, 3], {1: 3}) == [3, 1, 2]
    assert fusion.order_successors_first([3, 1, 2], {1: 3}) == [3, 1, 2]
    assert fusion.order_successors_first([1, 2], {1: 9}) == [9, 1, 2]
    assert fusion.order_successors_first([1, 2, 3], {1: 2, 2: 3}) == [3, 2, 1]
    assert len(fusion.order_successors_first([1, 2], {1: 2, 2: 1})) == 2  # a cycle terminates


def test_temporal_detection():
    for q in ("what is the current deadline", "latest decision on storage", "is it still true", "какой сейчас срок"):
        assert fusion.is_temporal(q), q
    for q in ("how does sourdough work", "faiss index types"):
        assert not fusion.is_temporal(q), q


def test_superseded_decision_ranks_below_its_successor(toy_vault, closing):
    index_vault(toy_vault, progress=False)
    recaller = closing(open_recaller(toy_vault))
    chain = successors(recaller.store)
    paths = {note_id: path for note_id, path, _, _ in recaller.store.frontmatter_rows()}
    assert {paths[o]: paths[n] for o, n in chain.items()} == {
        "Projects/Decision - Use Chroma.md": "Projects/Decision - Use FAISS flat index.md"
    }
    # The fake embedder is near-random on real prose, so only the modes with the lexical
    # lane find these notes here; test_superseded_note_never_outranks_successor covers ppr.
    for mode in ("hybrid", "hybrid+ppr"):
        result = recaller.ask("what is the current decision on using Chroma as the vector store", mode)
        order = [c.path for c in result.results]
        assert "Projects/Decision - Use FAISS flat index.md" in order, mode
        if "Projects/Decision - Use Chroma.md" in order:
            assert order.index("Projects/Decision - Use FAISS flat index.md") < order.index(
                "Projects/Decision - Use Chroma.md"
            )
        scores = [c.score for c in result.results]
        assert scores == sorted(scores, reverse=True)


def test_superseded_note_never_outranks_successor(tmp_path, closing):
    root = tmp_path / "plans"
    write(
        root,
        "Old plan.md",
        '---\nsuperseded_by: "[[New plan]]"\ndate: 2024-01-01\n---\n'
        "Ship the kettle anchor ribbon release on copper rails.\n",
    )
    write(root, "New plan.md", "---\ndate: 2024-05-01\n---\nWe changed course: see [[Old plan]].\n")
    for i in range(8):
        write(root, f"Other {i}.md", f"Kettle anchor notes {i}: lantern meadow garden.\n")
    write(root, "Dead.md", "---\nstatus: superseded\ndate: 2023-01-01\n---\nRibbon copper marble plan.\n")
    write(root, "Alive.md", "---\ndate: 2023-06-01\n---\nThis replaces [[Dead]].\n")
    index_vault(root, progress=False)
    recaller = closing(open_recaller(root))
    paths = {note_id: path for note_id, path, _, _ in recaller.store.frontmatter_rows()}
    assert {paths[o]: paths[n] for o, n in successors(recaller.store).items()} == {
        "Old plan.md": "New plan.md",
        "Dead.md": "Alive.md",
    }
    for mode in ("hybrid", "ppr", "hybrid+ppr"):
        order = [
            c.path for c in recaller.ask("kettle anchor ribbon release copper rails", mode, RecallSettings(k=4)).results
        ]
        assert order.index("New plan.md") < order.index("Old plan.md"), (mode, order)
    # The pilot's modes are left as they were measured: no freshness there.
    vector = [c.path for c in recaller.ask("kettle anchor ribbon release copper rails", "vector").results]
    assert vector[0] == "Old plan.md"


def test_freshness_prefers_the_newest_among_near_equals(tmp_path, closing):
    root = tmp_path / "dated"
    # Near-equals: yearly copies of one note, alike to every lane (no lane sure of one over the
    # next, so no rank bonus), as a vault keeps versions of a decision; the date decides.
    for year in (2022, 2023, 2024, 2025):
        head = f"---\ndate: {year}-06-01\ntitle: Launch deadline\n---\n"
        write(root, f"Deadline {year}.md", f"{head}The launch deadline is set for the spring release.\n")
    index_vault(root, progress=False)
    recaller = closing(open_recaller(root))
    plain = recaller.ask("launch deadline spring release", "hybrid", RecallSettings(freshness=0.0))
    question = "what is the current launch deadline"
    unfreshened = recaller.ask(question, "hybrid", RecallSettings(freshness=0.0)).results
    assert unfreshened[0].score == pytest.approx(unfreshened[1].score, rel=0.05)
    fresh = recaller.ask(question, "hybrid")
    assert [c.path for c in fresh.results] == [f"Deadline {year}.md" for year in (2025, 2024, 2023, 2022)]
    assert {c.path for c in plain.results} == {f"Deadline {year}.md" for year in (2022, 2023, 2024, 2025)}


def test_new_modes_parse_and_run_from_the_cli(rare_vault, closing):
    assert str(Mode.parse("hybrid+ppr+rerank")) == "hybrid+ppr+rerank"
    assert Mode.parse("dense").base == "vector"
    out = CliRunner().invoke(cli, ["ask", "--vault", str(rare_vault), "--mode", "hybrid+ppr", "--json", "errx-4471"])
    assert out.exit_code == 0, out.output
    out = CliRunner().invoke(
        cli, ["ask", "--vault", str(rare_vault), "--ab", "-k", "5", "--ab-modes", "vector,hybrid", "errx-4471"]
    )
    assert out.exit_code == 0, out.output
    assert "+ Incident" in out.stdout.splitlines()[2]  # hybrid's #1, absent from vector's list
    row = closing(open_db()).execute("SELECT mode_a, mode_b, top_b FROM ab_recall").fetchone()
    assert (row["mode_a"], row["mode_b"]) == ("vector", "hybrid") and "Incident.md" in row["top_b"]
    bad = CliRunner().invoke(cli, ["ask", "--vault", str(rare_vault), "--ab", "--ab-modes", "vector", "x"])
    assert bad.exit_code != 0 and "exactly two modes" in bad.output


def test_a_successor_pulled_in_takes_the_fused_score_of_the_note_it_replaces(tmp_path, closing):
    root = tmp_path / "plans"
    write(
        root, "Old plan.md", '---\nsuperseded_by: "[[New plan]]"\n---\nKettle anchor ribbon release on copper rails.\n'
    )
    write(root, "New plan.md", "---\ndate: 2024-05-01\n---\nKettle lantern meadow garden, orchard pepper.\n")
    for i in range(70):  # closer to the query than the successor: it is in no lane's top 5
        write(root, f"Other {i}.md", f"Kettle anchor ribbon release copper {i}.\n")
    index_vault(root, progress=False)
    recaller = closing(open_recaller(root))
    # hybrid: with the graph, superseded_by: "[[New plan]]" is a link (a property's), and PPR
    # finds the successor along it
    result = recaller.ask("kettle anchor ribbon release copper rails", "hybrid", RecallSettings(k=5, depth=5))
    by_path = {c.path: c for c in result.results}
    assert [c.path for c in result.results[:2]] == ["New plan.md", "Old plan.md"]
    # The successor was in no lane; it ties its predecessor instead of showing its cosine.
    assert by_path["New plan.md"].sources == ["successor"]
    assert by_path["New plan.md"].score == by_path["Old plan.md"].score
    assert all(c.score <= by_path["Old plan.md"].score for c in result.results)
    graph = recaller.ask("kettle anchor ribbon release copper rails", "hybrid+ppr", RecallSettings(k=5, depth=5))
    assert [c.path for c in graph.results[:2]] == ["New plan.md", "Old plan.md"]
    assert graph.results[0].sources == ["ppr"]


def test_temporal_detection_reads_the_russian_of_each_english_word():
    # "where is our field data stored now?" asked for the newest note; "где теперь хранятся
    # полевые данные" (bilingual set) did not: Russian had no now, still, recent, anymore, today.
    pairs = [
        ("where is our field data stored now?", "где теперь хранятся полевые данные"),
        ("are we still buying a second CTD?", "мы всё ещё покупаем второй зонд?"),
        ("is it still used", "до сих пор используется?"),
        ("recent decisions", "недавние решения"),
        ("we do not use kafka anymore", "мы больше не используем kafka"),
        ("the plan at the moment", "план на данный момент"),
        ("today's plan", "план на сегодня"),
    ]
    for english, russian in pairs:
        assert fusion.is_temporal(english) and fusion.is_temporal(russian), russian
    assert not fusion.is_temporal("ничего нового про закваску")
