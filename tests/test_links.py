"""Links: extraction (every Obsidian form, never inside code) and resolution (path, name, alias),
then the toy vault's link graph as stored in SQLite, queried both ways."""

from __future__ import annotations

import random
import re
import time
import unicodedata
from urllib.parse import unquote

import pytest
from conftest import TOY_VAULT
from index_helpers import IndexView, index_into

from brain.chunking import chunk_body
from brain.links import Link, Resolver, extract_links, first_match, is_attachment, mask_code, nearest, written_targets
from brain.notes import inline_tags, parse_note

# ----- extraction -------------------------------------------------------------------------


def _forms(body: str) -> list[tuple[str, str, str | None, str | None]]:
    return [(link.target, link.kind, link.anchor, link.display) for link in extract_links(body)]


def test_every_wikilink_form():
    body = (
        "[[Plain]] [[Folder/Note]] [[Note.md]] [[T|alias text]] [[T#Heading]] [[T#^block-id]]\n"
        "[[T#Heading|shown]] ![[Embedded]] ![[T#^block]] ![[image.png]] [[#Local heading]] [[ Spaced ]]\n"
    )
    assert _forms(body) == [
        ("Plain", "wikilink", None, None),
        ("Folder/Note", "wikilink", None, None),
        ("Note.md", "wikilink", None, None),
        ("T", "wikilink", None, "alias text"),
        ("T", "wikilink", "Heading", None),
        ("T", "wikilink", "^block-id", None),
        ("T", "wikilink", "Heading", "shown"),
        ("Embedded", "embed", None, None),
        ("T", "embed", "^block", None),
        ("image.png", "embed", None, None),
        ("", "wikilink", "Local heading", None),
        ("Spaced", "wikilink", None, None),
    ]


def test_escaped_pipe_in_a_table():
    body = (
        "| Race | Bonus |\n|---|---|\n| [[Compendium/13A/Races/Human\\|Human]] | +2 |\n| [[Elf#Traits\\|elves]] | |\n"
    )
    assert _forms(body) == [
        ("Compendium/13A/Races/Human", "wikilink", None, "Human"),
        ("Elf", "wikilink", "Traits", "elves"),
    ]


def test_markdown_links_to_notes_and_files_not_urls():
    # Obsidian's help (Internal links): "[x](Three%20laws%20of%20motion)" and "[x](...motion.md)"
    # are the same link; its 1.8 cache (obsidian-tasks' link_in_task_markdown_link.md) holds
    # [x](Note), [x](Folder/Note#Heading), [x](#heading) and [x](file.pdf) as links too.
    body = (
        "[Embeddings](AI/Embeddings.md) [the ledger](Engineering/SQLite%20ledger.md) "
        '[up](../Other/Note.md#Some%20heading) [angle](<With space.md>) [titled](n.md "Title")\n'
        "[web](https://example.com/page.md) [mail](mailto:x@y.z) ![img](pic.png) [pdf](doc.pdf) "
        "[obs](obsidian://open?file=x.md) [no ext](Folder/Note)\n"
        "[here](#A%20heading) [spaced](<No ext>) [sic](see above) [](<>) ![](Embedded.md)\n"
    )
    assert _forms(body) == [
        ("AI/Embeddings.md", "markdown", None, "Embeddings"),
        ("Engineering/SQLite ledger.md", "markdown", None, "the ledger"),
        ("../Other/Note.md", "markdown", "Some heading", "up"),
        ("With space.md", "markdown", None, "angle"),
        ("n.md", "markdown", None, "titled"),
        ("pic.png", "markdown", None, "img"),
        ("doc.pdf", "markdown", None, "pdf"),
        ("Folder/Note", "markdown", None, "no ext"),
        ("", "markdown", "A heading", "here"),
        ("No ext", "markdown", None, "spaced"),
        ("Embedded.md", "markdown", None, None),
    ]


def test_markdown_links_to_names_with_parentheses():
    # CommonMark (and Obsidian, which writes [x](Meeting%20(2024).md) when wikilinks are off):
    # a bare destination holds balanced parentheses, one in <> any but "<", ">" and a line
    # break. brain ended both at the first ")": a dangling "Meeting (2024" for a note it missed.
    body = (
        "[m](Meeting%20(2024).md) [m2](<Meeting (2024).md>) [b](Book%20(Draft)%20v2.md#Plot)\n"
        '[t](<Notes (old)/Plan.md> "Title") [after](Note.md) (aside) [n](a(b)c(d)) [bad](x(y.md)\n'
    )
    assert _forms(body) == [
        ("Meeting (2024).md", "markdown", None, "m"),
        ("Meeting (2024).md", "markdown", None, "m2"),
        ("Book (Draft) v2.md", "markdown", "Plot", "b"),
        ("Notes (old)/Plan.md", "markdown", None, "t"),
        ("Note.md", "markdown", None, "after"),
        ("a(b)c(d)", "markdown", None, "n"),
    ]
    resolver = Resolver(["Meetings/Meeting (2024).md", "Book (Draft) v2.md"], {})
    got = [resolver.resolve(link, "Home.md") for link in extract_links(body)[:3]]
    assert got == ["Meetings/Meeting (2024).md", "Meetings/Meeting (2024).md", "Book (Draft) v2.md"]


def test_markdown_links_with_a_title_in_single_quotes_or_parentheses():
    # CommonMark's three forms of a link title: "…", '…' and (…). brain read only the first, and
    # the others made the target "Note.md 'Plan'", no link at all.
    body = "[a](Note.md 'Plan') [b](<My Note.md> (Plan)) [c](Other%20Note.md \"Plan\") [d](Note.md 'x) [e](Note (draft) v2.md)\n"
    assert [(link.target, link.display) for link in extract_links(body)] == [
        ("Note.md", "a"),
        ("My Note.md", "b"),
        ("Other Note.md", "c"),
        ("Note (draft) v2.md", "e"),
    ]


def test_links_in_code_are_ignored():
    body = (
        "Before [[Real one]].\n"
        "```markdown\n[[In backtick fence]]\n![[Embed in fence]]\n```\n"
        "~~~text\n[[In tilde fence]]\n~~~\n"
        "````\n```\n[[In a longer fence, with a shorter one inside]]\n```\n````\n"
        "Inline `[[In inline code]]` and ``[[double `ticks`]]`` then [[After]].\n"
        "    indented fence markers do not count past three spaces\n"
        "[md](in%20text.md) `[md](in-code.md)`\n"
    )
    assert [link.target for link in extract_links(body)] == ["Real one", "After", "in text.md"]


def test_links_in_html_comments_are_ignored_and_in_obsidian_comments_kept():
    # Obsidian 1.8's own cache (obsidian-tasks' Test Data/comments_html_style.md and
    # comments_markdown_style.md): no link inside <!-- -->, inline or over lines; the links
    # inside %% comments are links.
    body = (
        "Before [[A]] <!-- [[In inline comment]] --> after [[B]].\n"
        "<!--\n[[In block comment]] [md](hidden.md)\n-->\n"
        "%% [[In Obsidian comment]] %%\n%%\n[[In Obsidian block comment]]\n%%\n"
        "`<!--` [[After code]] -->\n"
        "<!-- unclosed [[Still a link]]\n"
    )
    assert [link.target for link in extract_links(body)] == [
        "A", "B", "In Obsidian comment", "In Obsidian block comment", "After code", "Still a link"
    ]  # fmt: skip
    assert [link.line for link in extract_links(body)] == [1, 1, 5, 7, 9, 10]


def test_unclosed_fence_hides_the_rest():
    assert [link.target for link in extract_links("[[A]]\n```\n[[B]]\nno closing fence [[C]]")] == ["A"]


def test_link_line_numbers():
    links = extract_links("line one\n\n[[A]] and [[B]]\n```\n[[code]]\n```\n[x](y.md)\n")
    assert [(link.target, link.line) for link in links] == [("A", 3), ("B", 3), ("y.md", 7)]


def test_mask_code_keeps_offsets():
    text = "a `code` b\n```\nfenced\n```\nc"
    masked = mask_code(text)
    assert len(masked) == len(text)
    assert masked.split("\n") == ["a        b", "   ", "      ", "   ", "c"]


# The forms extraction had before its patterns began at the bracket (an optional "!" in front
# made the regex engine try every position of a note): the reference the fast form must equal.
# (Neither reads past a "[", the next link's start: see the test after this one.)
_SLOW_WIKILINK = re.compile(r"(!?)\[\[([^\[\]\n]+?)\]\]")
_SLOW_MDLINK = re.compile(r"(!?)\[([^\[\]\n]*)\]\(\s*<?([^\[)\s>]+(?:\s[^\[)\s>]+)*?)>?(?:\s+\"[^\"\[\n]*\")?\s*\)")


def _slow_links(masked: str) -> list[tuple[int, str, str]]:
    """(start, kind, the text matched) of every link the slow patterns find, as extraction kept them."""
    found = [(m.start(), "embed" if m.group(1) else "wikilink", m.group(2)) for m in _SLOW_WIKILINK.finditer(masked)]
    for m in _SLOW_MDLINK.finditer(masked):
        href = m.group(3)
        if re.match(r"^[a-zA-Z][a-zA-Z0-9+.-]*:", href):
            continue
        path = unquote(href).partition("#")[0]
        spaced = re.search(r"\s", href) and m.string[m.start(3) - 1] != "<"
        if path.lower().endswith(".md") or (href not in ("<", "#") and not href.startswith("<") and not spaced):
            found.append((m.start(), "markdown", href))
    return sorted(found)


def test_link_extraction_equals_the_slow_patterns_on_hostile_text():
    pieces = ["!", "[", "]", "[[", "]]", "(", ")", "`", "```", "~~~", "#", "\n", " ", "a", "b.md", "|", "\\", "<",
              ">", '"', "x y", "é", "http:", "  ```py\n", "^", "%20", "![[", "](c.md)"]  # fmt: skip
    rng = random.Random(16)
    for _ in range(3000):
        body = "".join(rng.choice(pieces) for _ in range(rng.randint(0, 50)))
        masked = mask_code(body)
        # each link the slow patterns find that has a target, in order: its kind and its line
        kept = [
            (kind, masked.count("\n", 0, start) + 1)
            for start, kind, text in _slow_links(masked)
            if _has_target(kind, text)
        ]
        assert [(link.kind, link.line) for link in extract_links(body)] == kept, body


@pytest.mark.parametrize("unit", ["[x](", "[x](<", "[[", "[", "[x](y ", '[x](a.md "', "![[", "[[a|", "<!--", "<!-- -"])
def test_a_line_of_unclosed_links_costs_its_length_not_its_square(unit):
    # 200 KB of one unit on one line: each try at a "[" read to the line's end, and a note of
    # 195 KB of "[a](" took 413 s to parse (40 KB: 16 s); now each stops at the next "[".
    # The bound is two hundred times what it takes; what it was is a thousand times more.
    body = unit * (200_000 // len(unit))
    started = time.process_time()  # CPU time: another process's load does not add to it, as to wall time
    parse_note("hostile.md", body.encode(), 0.0)
    assert time.process_time() - started < 20


def _has_target(kind: str, text: str) -> bool:
    if kind == "markdown":
        return True  # _slow_links kept only those
    target = text.partition("|")[0].strip().removesuffix("\\")
    return bool(target.partition("#")[0].strip() or target.partition("#")[2].strip())


def test_embeds_and_images_next_to_links():
    body = "![[First]]![[Second]] x![y](a.md)[z](b.md) !!![[Third]] [![[Inner]]"
    assert _forms(body) == [
        ("First", "embed", None, None),
        ("Second", "embed", None, None),
        ("a.md", "markdown", None, "y"),  # a markdown embed: a markdown link
        ("b.md", "markdown", None, "z"),  # after an embed, not one
        ("Third", "embed", None, None),
        ("Inner", "embed", None, None),
    ]


def test_text_without_code_is_its_own_mask():
    plain = "no code here: [[A]] and #tag\n\nnot even a tilde"
    assert mask_code(plain) is plain
    assert mask_code("a ~~~ b\n~~~\n[[Hidden]]\n~~~\n") == "a ~~~ b\n   \n          \n   \n"


def test_attachments():
    assert is_attachment("image.PNG") and is_attachment("Folder/photo.avif") and is_attachment("talk.mp3")
    assert is_attachment("board.canvas") and is_attachment("scan.pdf")
    assert not is_attachment("Note") and not is_attachment("Obsidian.md") and not is_attachment("v1.2 plan")


# ----- resolution -------------------------------------------------------------------------

PATHS = [
    "Home.md",
    "AI/Graph RAG.md",
    "AI/Retrieval-augmented generation.md",
    "Meetings/Index.md",
    "Cooking/Index.md",
    "Cooking/Recipes/Soups/Борщ.md",
    "Deep/a/b/Index.md",
    "Compendium/13A/Spells/Chaos-Ray.md",
    "Other/Spells/Chaos-Ray.md",
]
ALIASES = {"AI/Retrieval-augmented generation.md": ["RAG"], "Cooking/Recipes/Soups/Борщ.md": ["Borscht"]}


def _resolve(target: str, source: str = "Home.md", kind: str = "wikilink") -> str | None:
    return Resolver(PATHS, ALIASES).resolve(Link(target, kind, None, None, 1), source)


def test_resolution_by_path_with_and_without_md():
    assert _resolve("AI/Graph RAG") == "AI/Graph RAG.md"
    assert _resolve("AI/Graph RAG.md") == "AI/Graph RAG.md"
    assert _resolve("/AI/Graph RAG") == "AI/Graph RAG.md"
    assert _resolve("ai/graph rag") == "AI/Graph RAG.md"  # a path, case-insensitively
    assert _resolve("Compendium/13A/Spells/Chaos-Ray") == "Compendium/13A/Spells/Chaos-Ray.md"


def test_resolution_by_file_name_case_insensitive():
    assert _resolve("graph rag") == "AI/Graph RAG.md"
    assert _resolve("GRAPH RAG") == "AI/Graph RAG.md"
    assert _resolve("борщ") == "Cooking/Recipes/Soups/Борщ.md"


def test_resolution_by_name_prefers_a_note_inside_the_linking_notes_folder():
    assert _resolve("Index", "Meetings/2026-03-10 Retrieval sync.md") == "Meetings/Index.md"
    assert _resolve("Index", "Cooking/Knife skills.md") == "Cooking/Index.md"
    assert _resolve("Index", "Deep/a/b/Notes.md") == "Deep/a/b/Index.md"
    assert _resolve("Index", "Deep/Notes.md") == "Deep/a/b/Index.md"  # inside Deep/, however deep
    # None inside the linking note's folder: the shortest path, as Obsidian opens it.
    assert _resolve("Index", "Cooking/Recipes/Soups/Борщ.md") == "Cooking/Index.md"
    assert _resolve("Index", "Deep/a/b/c/x.md") == "Cooking/Index.md"
    assert _resolve("Index", "Home.md") == "Cooking/Index.md"  # all inside the root: the shortest


def test_a_duplicated_name_goes_to_the_note_obsidian_opens():
    # Obsidian's getLinkpathDest (its app.js): a note named as written at the vault's root, then
    # those inside the linking note's folder (at any depth) by the length of their path, then
    # the others by the length of theirs. brain took the note fewest folders away, then the
    # shallowest, then by path: 3 of the SRD's links went elsewhere than Obsidian's.
    def resolve(paths: list[str], target: str, source: str, kind: str = "wikilink") -> str | None:
        return Resolver(paths).resolve(Link(target, kind, None, None, 1), source)

    assert resolve(["A/B/C/D/x.md", "E/x.md"], "x", "A/s.md") == "A/B/C/D/x.md"  # inside, though farther
    assert resolve(["A/x.md", "A/B/C/x.md"], "x", "A/B/s.md") == "A/B/C/x.md"  # inside beats the parent
    assert resolve(["A/x.md", "x.md"], "x", "A/B/s.md") == "x.md"  # the root's, named as written
    # the SRD's [[Briar-Elves]] from Bestiary/Bestiary.md: both two folders down, the shorter path
    elves = ["Bestiary/Humanoid/Briar-Elves/Briar-Elves.md", "Bestiary/Plant/Briar-Elves/Briar-Elves.md"]
    assert resolve(elves, "Briar-Elves", "Bestiary/Bestiary.md") == elves[1]
    # a path's length as JavaScript counts it, in UTF-16 units: an emoji is two
    assert resolve(["\U0001f3db\U0001f3db/x.md", "abc/x.md"], "x", "s.md") == "abc/x.md"
    assert resolve(["C/x.md", "B/x.md"], "x", "s.md") == "B/x.md"  # a tie: by path
    # the same order for the end of a path, a markdown link by file name, an alias
    assert resolve(["A/B/x.md", "C/D/E/B/x.md"], "B/x", "C/s.md") == "C/D/E/B/x.md"
    assert resolve(["B/x.md", "A/C/D/x.md"], "x.md", "A/s.md", "markdown") == "A/C/D/x.md"
    aliased = Resolver(["B/one.md", "A/C/D/two.md"], {"B/one.md": ["X"], "A/C/D/two.md": ["X"]})
    assert aliased.resolve(Link("X", "wikilink", None, None, 1), "A/s.md") == "A/C/D/two.md"


def test_first_match_case_and_unicode_of_folders():
    nfd = unicodedata.normalize("NFD", "Café")
    assert first_match(["Zz/x.md", f"{nfd}/Sub/x.md"], "café/s.md") == f"{nfd}/Sub/x.md"
    assert first_match(["A/x.md", "Ab/x.md", "Abc/Sub/x.md"], "Ab/s.md") == "Ab/x.md"
    assert first_match(["A/x.md", "Abc/Sub/x.md"], "Ab/s.md") == "A/x.md"  # "Abc" is not inside "Ab"


def test_partial_path_matches_the_end_of_a_path():
    # None inside Classes/: the shorter path, as Obsidian opens it
    assert _resolve("Spells/Chaos-Ray", "Compendium/13A/Classes/Chaos-Mage.md") == "Other/Spells/Chaos-Ray.md"
    assert _resolve("Spells/Chaos-Ray", "Compendium/13A/Spells/Index.md") == "Compendium/13A/Spells/Chaos-Ray.md"
    assert _resolve("Spells/Chaos-Ray", "Compendium/x.md") == "Compendium/13A/Spells/Chaos-Ray.md"
    assert _resolve("Spells/Chaos-Ray", "Other/x.md") == "Other/Spells/Chaos-Ray.md"


def test_resolution_by_alias_after_names():
    assert _resolve("RAG") == "AI/Retrieval-augmented generation.md"
    assert _resolve("rag") == "AI/Retrieval-augmented generation.md"
    assert _resolve("Borscht") == "Cooking/Recipes/Soups/Борщ.md"


def test_a_file_name_beats_an_alias():
    resolver = Resolver(["A/RAG.md", "B/Retrieval.md"], {"B/Retrieval.md": ["RAG"]})
    assert resolver.resolve(Link("RAG", "wikilink", None, None, 1), "x.md") == "A/RAG.md"


def test_dangling_and_same_note_links():
    assert _resolve("Future idea") is None
    assert _resolve("Nowhere/Graph RAG") is None  # a path that matches nothing is not a name
    assert _resolve("", "AI/Graph RAG.md") == "AI/Graph RAG.md"  # [[#Heading]]


def test_markdown_links_resolve_relative_then_from_the_root():
    assert _resolve("../Home.md", "AI/Graph RAG.md", "markdown") == "Home.md"
    assert _resolve("Graph RAG.md", "AI/Retrieval-augmented generation.md", "markdown") == "AI/Graph RAG.md"
    assert _resolve("AI/Graph RAG.md", "Meetings/Index.md", "markdown") == "AI/Graph RAG.md"
    assert _resolve("/AI/Graph RAG.md", "Meetings/Index.md", "markdown") == "AI/Graph RAG.md"
    # then by file name, as a wikilink: Obsidian 1.8 resolves [x](markdownLink.md) in Test Data/
    # to Test Attachments/markdownLink.md (obsidian-tasks' all_link_types.json, resolveLinkToPath)
    assert _resolve("Graph RAG.md", "Meetings/Index.md", "markdown") == "AI/Graph RAG.md"
    assert _resolve("graph%20rag", "Meetings/Index.md", "markdown") is None  # decoded when read, not here
    assert _resolve("graph rag", "Meetings/Index.md", "markdown") == "AI/Graph RAG.md"  # [x](graph%20rag)
    assert _resolve("Index.md", "Deep/a/b/c/Note.md", "markdown") == "Cooking/Index.md"  # as a wikilink is
    assert _resolve("Index.md", "Deep/Note.md", "markdown") == "Deep/a/b/Index.md"
    assert _resolve("RAG.md", "Home.md", "markdown") is None  # not by alias (a step of wikilinks only)
    assert _resolve("", "AI/Graph RAG.md", "markdown") == "AI/Graph RAG.md"  # [x](#heading)


def test_unicode_normalisation_of_names():
    nfd = unicodedata.normalize("NFD", "Café.md")
    resolver = Resolver([nfd], {})
    assert resolver.resolve(Link("Café", "wikilink", None, None, 1), "x.md") == nfd
    assert resolver.resolve(Link(unicodedata.normalize("NFD", "café"), "wikilink", None, None, 1), "x.md") == nfd


def test_nearest_tie_breaks():
    assert nearest(["b/x.md", "a/x.md"], "c/n.md") == "a/x.md"
    assert nearest(["a/b/x.md", "x.md"], "n.md") == "x.md"
    assert nearest(["a/b/x.md", "x.md"], "a/b/n.md") == "a/b/x.md"


# ----- the toy vault's graph, from the index --------------------------------------------


@pytest.fixture(scope="module")
def graph(tmp_path_factory):
    report, directory = index_into(tmp_path_factory.mktemp("links_home"), TOY_VAULT)
    assert report.notes == 35
    view = IndexView(directory)
    yield view
    view.close()


def test_case_mismatched_links(graph):
    assert graph.edge("AI/Retrieval-augmented generation.md", "graph rag")["target_path"] == "AI/Graph RAG.md"
    assert (
        graph.edge("Engineering/Schema migrations.md", "sqlite wal mode")["target_path"]
        == "Engineering/SQLite WAL mode.md"
    )


def test_alias_links(graph):
    for source in ("AI/Agent memory.md", "AI/Prompt engineering.md", "People/Vannevar Bush.md"):
        assert graph.edge(source, "RAG")["target_path"] == "AI/Retrieval-augmented generation.md"
    for source in ("AI/Embeddings.md", "Projects/Decision - Use FAISS flat index.md"):
        assert graph.edge(source, "FAISS")["target_path"] == "AI/Vector databases.md"  # `aliases: FAISS`
    for source in ("Cooking/Index.md", "Cooking/Cooking fundamentals.md", "Cooking/Knife skills.md"):
        assert graph.edge(source, "Borscht")["target_path"] == "Cooking/Борщ.md"
    assert graph.edge("AI/Embeddings.md", "Борщ")["target_path"] == "Cooking/Борщ.md"  # by file name


def test_markdown_links(graph):
    home = {link["target"]: link for link in graph.links("Home.md") if link["kind"] == "markdown"}
    assert home["AI/Embeddings.md"]["target_path"] == "AI/Embeddings.md"
    assert home["Engineering/SQLite ledger.md"]["target_path"] == "Engineering/SQLite ledger.md"  # %20
    assert home["Engineering/SQLite ledger.md"]["display"] == "the ledger design"
    mvp = {
        link["target"]: link["target_path"]
        for link in graph.links("Projects/Brain MVP.md")
        if link["kind"] == "markdown"
    }
    assert mvp["../Engineering/SQLite WAL mode.md"] == "Engineering/SQLite WAL mode.md"
    assert (
        graph.edge("AI/Vector databases.md", "Cross-encoder reranking.md")["target_path"]
        == "AI/Cross-encoder reranking.md"
    )
    assert graph.edge("Cooking/Борщ.md", "Knife skills.md")["target_path"] == "Cooking/Knife skills.md"
    # The external https link is not a note link at all.
    assert not any("http" in link["target"] for src in graph.paths() for link in graph.links(src))


def test_block_and_heading_anchors(graph):
    one_hop = graph.edge("AI/Agent memory.md", "Graph RAG")
    assert (one_hop["kind"], one_hop["anchor"], one_hop["target_path"]) == ("wikilink", "^one-hop", "AI/Graph RAG.md")
    daily = [link for link in graph.links("Daily/2026-03-14.md") if link["target"] == "Graph RAG"]
    assert [(link["kind"], link["anchor"]) for link in daily] == [("embed", "^one-hop")]
    mvp = [
        (link["kind"], link["anchor"]) for link in graph.links("Projects/Brain MVP.md") if link["target"] == "Graph RAG"
    ]
    assert mvp == [("wikilink", "^one-hop")]
    review = graph.edge("Meetings/2026-03-17 Architecture review.md", "SQLite ledger")
    assert (review["kind"], review["anchor"], review["target_path"]) == (
        "embed",
        "^append-only",
        "Engineering/SQLite ledger.md",
    )
    zettel = [link for link in graph.links("PKM/Note-taking habits.md") if link["target"] == "Zettelkasten"]
    assert zettel[0]["anchor"] == "^atomicity" and zettel[0]["target_path"] == "PKM/Zettelkasten.md"
    sync = graph.edge("Meetings/2026-03-10 Retrieval sync.md", "Embeddings")
    assert (sync["anchor"], sync["target_path"]) == ("^prefix-rule", "AI/Embeddings.md")
    heading = graph.edge("AI/Graph RAG.md", "Chunking strategies")
    assert (heading["anchor"], heading["target_path"]) == ("Heading-aware chunking", "AI/Chunking strategies.md")
    crumbs = graph.edge("Meetings/2026-03-17 Architecture review.md", "AI/Chunking strategies")
    assert (crumbs["anchor"], crumbs["target_path"]) == ("Breadcrumbs", "AI/Chunking strategies.md")
    salt = graph.edge("Cooking/Борщ.md", "Cooking fundamentals")
    assert (salt["anchor"], salt["target_path"]) == ("Salt, fat, acid, heat", "Cooking/Cooking fundamentals.md")


def test_embeds(graph):
    faiss = graph.edge("Projects/Brain MVP.md", "Decision - Use FAISS flat index")
    assert (faiss["kind"], faiss["target_path"]) == ("embed", "Projects/Decision - Use FAISS flat index.md")
    claw = [link for link in graph.links("Cooking/Index.md") if link["kind"] == "embed"]
    assert [(link["target"], link["anchor"], link["target_path"]) for link in claw] == [
        ("Knife skills", "The claw grip", "Cooking/Knife skills.md")
    ]


def test_exactly_four_dangling_targets(graph):
    assert graph.dangling() == [
        ("AI/Vector databases.md", "HNSW"),
        ("Cooking/Sourdough bread.md", "Sourdough starter maintenance"),
        ("Daily/2026-03-14.md", "Future idea"),
        ("People/Vannevar Bush.md", "Memex revisited"),
        ("Projects/Brain MVP.md", "Future idea"),
    ]
    assert graph.store.counts()["dangling"] == 5


def test_duplicate_name_resolves_to_the_nearest_index(graph):
    for source in ("Meetings/2026-03-10 Retrieval sync.md", "Meetings/2026-03-17 Architecture review.md"):
        assert graph.edge(source, "Index")["target_path"] == "Meetings/Index.md"
    for source in (
        "Cooking/Cooking fundamentals.md",
        "Cooking/Sourdough bread.md",
        "Cooking/Борщ.md",
        "Cooking/Knife skills.md",
    ):
        assert graph.edge(source, "Index")["target_path"] == "Cooking/Index.md"
    assert graph.backlinks("Meetings/Index.md") >= {
        "Meetings/2026-03-10 Retrieval sync.md",
        "Meetings/2026-03-17 Architecture review.md",
    }
    assert not graph.backlinks("Meetings/Index.md") & {
        "Cooking/Cooking fundamentals.md",
        "Cooking/Sourdough bread.md",
        "Cooking/Борщ.md",
        "Cooking/Knife skills.md",
    }


def test_links_in_code_make_no_edges(graph):
    obsidian_targets = {link["target"] for link in graph.links("PKM/Obsidian.md")}
    assert obsidian_targets == {
        "Home",
        "AI/Retrieval-augmented generation",
        "Daily/2026-03-14",
        "Zettelkasten",
        "Note-taking habits",
    }
    assert not graph.targets("PKM/Obsidian.md") & {
        "Cooking/Cooking fundamentals.md",
        "Cooking/Knife skills.md",
        "Cooking/Sourdough bread.md",
        "Cooking/Index.md",
        "Meetings/Index.md",
    }
    hooks = graph.targets("AI/Claude Code hooks.md")
    assert hooks == {"AI/Agent memory.md", "AI/Prompt engineering.md", "Engineering/Observability.md"}
    assert "Projects/Brain MVP.md" not in hooks and "Projects/Decision - Use FAISS flat index.md" not in hooks
    # And nothing in code shows up as dangling either.
    assert not {t for _, t in graph.dangling()} & {"Not a real link", "Wikilinks", "Meetings/Index"}


def test_trash_and_templates_make_no_edges(graph):
    assert "Templates/Daily template.md" not in graph.paths()
    assert ".trash/deleted note.md" not in graph.paths()
    # The trashed note links to Vector databases and Graph RAG; those links must not exist.
    assert all(not src.startswith((".trash", "Templates")) for src in graph.backlinks("AI/Vector databases.md"))
    assert all(not src.startswith((".trash", "Templates")) for src in graph.backlinks("AI/Graph RAG.md"))
    rows = graph.conn.execute(
        "SELECT count(*) FROM chunks WHERE text LIKE '%zanzibar-trash-token%' OR text LIKE '%quixotic-template-token%'"
    ).fetchone()
    assert rows[0] == 0


def test_backlinks_are_the_reverse_of_outgoing(graph):
    forward = {(src, dst) for src in graph.paths() for dst in graph.targets(src) if dst != src}
    backward = {(src, dst) for dst in graph.paths() for src in graph.backlinks(dst)}
    assert forward == backward
    assert len(forward) > 150
    assert graph.backlinks("AI/Retrieval-augmented generation.md") >= {
        "AI/Agent memory.md",
        "AI/Prompt engineering.md",
        "People/Vannevar Bush.md",
        "AI/Graph RAG.md",
        "Home.md",
    }


def test_link_counts(graph):
    counts = graph.store.counts()
    assert counts["dangling"] == 5
    assert counts["attachment"] == 0
    total = graph.conn.execute("SELECT count(*) FROM links").fetchone()[0]
    assert counts["resolved"] == total - 5
    kinds = dict(graph.conn.execute("SELECT kind, count(*) FROM links GROUP BY kind").fetchall())
    markdown = graph.conn.execute(
        "SELECT n.path, link.target FROM links link JOIN notes n ON n.id = link.source_id WHERE kind = 'markdown' ORDER BY n.path, link.id"
    ).fetchall()
    assert [tuple(r) for r in markdown] == [
        ("AI/Vector databases.md", "Cross-encoder reranking.md"),
        ("Cooking/Борщ.md", "Knife skills.md"),
        ("Home.md", "AI/Embeddings.md"),
        ("Home.md", "Engineering/SQLite ledger.md"),
        ("Home.md", "PKM/Obsidian.md"),
        ("Projects/Brain MVP.md", "../Engineering/SQLite ledger.md"),
        ("Projects/Brain MVP.md", "../Engineering/SQLite WAL mode.md"),
    ]
    assert kinds["embed"] == 4  # Daily ^one-hop, Architecture review ^append-only, Brain MVP FAISS, Cooking claw grip


def test_links_by_status_are_counted_and_found_without_reading_every_link(tmp_path):
    """Every status counted as a pass over all links would count it, and neither the counts
    nor the search for pending links reads the links table whole (m014's links_unresolved:
    at 100,000 notes a pass over every link was 50 ms of each `brain index`)."""
    _report, directory = index_into(tmp_path / "home", TOY_VAULT)
    with IndexView(directory) as view:
        conn = view.conn
        ids = [r[0] for r in conn.execute("SELECT id FROM links WHERE status = 'resolved' ORDER BY id LIMIT 5")]
        conn.execute("UPDATE links SET status = 'attachment' WHERE id IN (?, ?)", ids[:2])
        conn.execute("UPDATE links SET status = 'pending' WHERE id IN (?, ?, ?)", ids[2:])
        conn.commit()
        by_status = dict(conn.execute("SELECT status, count(*) FROM links GROUP BY status").fetchall())
        assert by_status["pending"] == 3 and by_status["attachment"] == 2 and by_status["dangling"] == 5
        statements: list[str] = []
        conn.set_trace_callback(statements.append)
        counts = view.store.counts()
        pending = view.store.links_to_resolve(every=False)
        conn.set_trace_callback(None)
        assert (counts["resolved"], counts["dangling"], counts["attachment"]) == (
            by_status["resolved"],
            by_status["dangling"],
            by_status["attachment"],
        )
        assert sorted(r[0] for r in pending) == sorted(ids[2:])
        on_links = [sql for sql in statements if " FROM links" in sql]
        assert len(on_links) >= 2
        for sql in on_links:
            plan = " ".join(r[3] for r in conn.execute(f"EXPLAIN QUERY PLAN {sql}"))
            assert "INDEX" in plan, f"{sql} reads every link: {plan}"


def test_superseded_decision_links(graph):
    chroma = graph.links("Projects/Decision - Use Chroma.md")
    assert [link["target_path"] for link in chroma if link["target"] == "Decision - Use FAISS flat index"] == [
        "Projects/Decision - Use FAISS flat index.md"
    ] * 3  # the frontmatter field (a property link, as Obsidian counts it), the banner and the body
    assert (
        graph.note("Projects/Decision - Use Chroma.md")["frontmatter"]["superseded_by"]
        == "[[Decision - Use FAISS flat index]]"
    )


def test_a_line_of_inline_code_in_triple_backticks_opens_no_fence():
    # CommonMark (and so Obsidian): a backtick fence's info string holds no backtick, so
    # "```make test```" is inline code; read as a fence nothing closed, it hid the rest of the note.
    body = "Run:\n```make test```\nthen see [[After]] #checked\n\n## Results\n\nAll green.\n```\n[[In a fence]]\n```\n"
    assert [link.target for link in extract_links(body)] == ["After"]
    assert inline_tags(body) == ["checked"]
    long = body.replace("Run:", "Run: " + "the suite " * 30).replace("All green.", "All green. " * 30)
    assert [chunk.heading_path for chunk in chunk_body(long)] == [(), ("Results",)]
    # a fence still opens with an info string, and with backticks in a tilde fence's
    assert [link.target for link in extract_links("```python x\n[[A]]\n```\n~~~ `x`\n[[B]]\n~~~\n[[C]]")] == ["C"]


def test_a_wikilink_written_from_the_linking_notes_folder_resolves(tmp_path):
    # Obsidian's "Relative path to file" link format writes [[../Other/Note|Note]] and [[./Here]];
    # brain left them dangling (a markdown link was read so, a wikilink never).
    resolver = Resolver(["A/Src.md", "A/Here.md", "Here.md", "Other/Note.md", "Note.md"])
    assert [
        resolver.resolve(link, "A/Src.md") for link in extract_links("[[../Other/Note|n]] [[./Here]] [[Here]]")
    ] == [
        "Other/Note.md",
        "A/Here.md",
        "Here.md",
    ]
    assert resolver.resolve(extract_links("[[../../Note]]")[0], "A/Src.md") is None  # out of the vault
    vault = tmp_path / "vault"
    for rel, text in {
        "A/Src.md": "[[../Other/Note]] and [[./Here]]\n",
        "A/Here.md": "here\n",
        "Other/Note.md": "note\n",
    }.items():
        (vault / rel).parent.mkdir(parents=True, exist_ok=True)
        (vault / rel).write_text(text, encoding="utf-8")
    home = tmp_path / "home"
    _, directory = index_into(home, vault)
    with IndexView(directory) as view:
        assert view.targets("A/Src.md") == {"Other/Note.md", "A/Here.md"}
    # moved, the note's ./Here names B/Here, which a later run brings: resolved incrementally as a
    # fresh index resolves it
    (vault / "B").mkdir()
    (vault / "A/Src.md").rename(vault / "B/Src.md")
    index_into(home, vault)
    with IndexView(directory) as view:
        assert view.targets("B/Src.md") == {"Other/Note.md"}  # B/Here.md is not there yet
    (vault / "B/Here.md").write_text("there\n", encoding="utf-8")
    index_into(home, vault)
    _, fresh = index_into(tmp_path / "fresh", vault)
    with IndexView(directory) as view, IndexView(fresh) as again:
        assert view.targets("B/Src.md") == again.targets("B/Src.md") == {"Other/Note.md", "B/Here.md"}


def test_an_index_that_left_wikilinks_from_the_notes_folder_dangling_resolves_them(tmp_path, closing):
    """m029: the notes with a wikilink written from their folder are read again once by the next
    `brain index` (nothing embedded again), and the links resolve."""
    import sqlite3

    from brain.index.schema import INDEX_MIGRATIONS
    from brain.migrations import connect

    vault = tmp_path / "vault"
    for rel, text in {"A/Src.md": "[[../Other/Note]]\n", "Other/Note.md": "note\n", "Plain.md": "[[Note]]\n"}.items():
        (vault / rel).parent.mkdir(parents=True, exist_ok=True)
        (vault / rel).write_text(text, encoding="utf-8")
    home = tmp_path / "home"
    _, directory = index_into(home, vault)
    db = directory / "index.db"
    conn = connect(str(db))
    # as an older brain left it: the link dangling
    conn.execute("UPDATE links SET target_id = NULL, status = 'dangling' WHERE target = '../Other/Note'")
    conn.execute("DELETE FROM _migrations WHERE db = 'index' AND name = 'm029_wikilinks_from_the_notes_folder'")
    conn.commit()
    conn.close()
    assert "m029_wikilinks_from_the_notes_folder" in INDEX_MIGRATIONS.pending(closing(sqlite3.connect(db)))
    report, _ = index_into(home, vault)
    assert (report.changed, report.unchanged, report.embedded) == (1, 2, 0)
    with IndexView(directory) as view:
        assert view.targets("A/Src.md") == {"Other/Note.md"}


def test_m029_reads_again_exactly_the_notes_whose_links_resolve_from_their_folder(tmp_path, closing):
    """m029 marks a note by its targets as the resolver reads them: ``[[..\\Other\\Note]]`` and
    ``[[/../Other/Note]]`` resolve from the note's folder too (it missed them: left dangling), and
    ``[[../]]`` or ``[[./..]]`` resolve as any other target (it read those notes again for nothing)."""
    import sqlite3

    from brain.index.schema import INDEX_MIGRATIONS
    from brain.migrations import connect

    files = {
        "A/Back.md": "[[..\\Other\\Note]]\n",
        "A/Rooted.md": "[[/../Other/Note]]\n",
        "A/Here.md": "![[.\\Sib]]\n",
        "A/Sib.md": "sib\n",
        "A/Up.md": "[[../]] and [[./..]] and [[..]]\n",
        "A/Md.md": "[x](../Other/Note.md)\n",
        "Other/Note.md": "note\n",
    }
    for rel, text in files.items():
        (tmp_path / "vault" / rel).parent.mkdir(parents=True, exist_ok=True)
        (tmp_path / "vault" / rel).write_text(text, encoding="utf-8")
    home, vault = tmp_path / "home", tmp_path / "vault"
    _, directory = index_into(home, vault)
    with IndexView(directory) as view:
        assert view.targets("A/Back.md") == view.targets("A/Rooted.md") == {"Other/Note.md"}
        assert view.targets("A/Here.md") == {"A/Sib.md"}
    conn = connect(str(directory / "index.db"))
    written = {t for (t,) in conn.execute("SELECT target FROM links WHERE kind != 'markdown'")}
    assert written == {"..\\Other\\Note", "/../Other/Note", ".\\Sib", "../", "./..", ".."}
    # as an older brain left them: dangling
    conn.execute("UPDATE links SET target_id = NULL, status = 'dangling' WHERE kind != 'markdown'")
    conn.execute("DELETE FROM _migrations WHERE db = 'index' AND name = 'm029_wikilinks_from_the_notes_folder'")
    conn.commit()
    conn.close()
    assert "m029_wikilinks_from_the_notes_folder" in INDEX_MIGRATIONS.pending(
        closing(sqlite3.connect(directory / "index.db"))
    )
    report, _ = index_into(home, vault)
    # A/Back, A/Rooted and A/Here read again; A/Up (and the rest) not
    assert (report.changed, report.unchanged, report.embedded) == (3, 4, 0)
    with IndexView(directory) as view:
        assert view.targets("A/Back.md") == view.targets("A/Rooted.md") == {"Other/Note.md"}
        assert view.targets("A/Here.md") == {"A/Sib.md"}


def test_written_targets_reads_a_passage_as_extract_links_does_but_its_indentation():
    """The anchor lanes' reading of a passage: the index's (no link in code or a comment; the
    forms ``extract_links`` reads), but a passage cut from inside a nested list is not indented
    code (read so, the SRD's bestiary index lost 885 links in 55 passages)."""
    text = (
        "[a](Meeting%20(2024).md#Top) [b](Plan.md 'The plan') ![[Pic.png]] [[T\\|x]] `[[Code]]`"
        " <!-- [[Hidden]] --> [[#Here]] [w](https://en.wikipedia.org/wiki/Foo_(bar))\n"
        "```\n[[Fenced]]\n```\n```statblock\nname: [[Beast]]\n```\n"
    )
    assert written_targets(text) == ["Meeting (2024).md", "Plan.md", "Pic.png", "T"]
    assert written_targets(text, frozenset({"statblock"})) == ["Meeting (2024).md", "Plan.md", "Pic.png", "T", "Beast"]
    nested = "\t\t- [[A|a]]\n\t\t- [B](B.md)\n\n    - [[C]]\n"
    assert [link.target for link in extract_links(nested)] == []  # read as a note: indented code
    assert written_targets(nested) == ["A", "B.md", "C"]
    assert written_targets("no link here") == []
