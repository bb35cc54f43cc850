"""Heading-aware chunking: sizes, heading paths, whole code blocks, overlap, embedded text."""

from __future__ import annotations

import itertools
import re

import pytest
from conftest import TOY_VAULT

from brain.chunking import (
    MAX_CHARS,
    MAX_CODE_CHARS,
    MIN_CHARS,
    OVERLAP_CHARS,
    TARGET_CHARS,
    Chunk,
    chunk_body,
    embedding_text,
)
from brain.notes import parse_note

LONG_NOTES = ["AI/Chunking strategies.md", "Engineering/SQLite ledger.md", "Cooking/Sourdough bread.md"]


def _note(path: str):
    file = TOY_VAULT / path
    return parse_note(path, file.read_bytes(), 0)


def _chunks(path: str) -> list[Chunk]:
    return chunk_body(_note(path).body)


@pytest.fixture(scope="module")
def toy_chunks() -> dict[str, list[Chunk]]:
    return {
        str(p.relative_to(TOY_VAULT)): _chunks(str(p.relative_to(TOY_VAULT)))
        for p in sorted(TOY_VAULT.rglob("*.md"))
        if not p.relative_to(TOY_VAULT).parts[0].startswith((".", "Templates"))
    }


def _is_code(text: str) -> bool:
    return text.lstrip().startswith(("```", "~~~"))


def test_the_constants_match_the_issue():
    assert 1000 <= TARGET_CHARS <= 1200
    assert 0.13 <= OVERLAP_CHARS / TARGET_CHARS <= 0.17  # ~15% overlap
    assert MAX_CHARS < MAX_CODE_CHARS


def test_sizes_within_bounds_on_the_long_notes():
    for path in LONG_NOTES:
        chunks = _chunks(path)
        assert len(chunks) >= 10, path
        for chunk in chunks:
            limit = MAX_CODE_CHARS if "```" in chunk.text else MAX_CHARS
            assert len(chunk.text) <= limit, (path, chunk.ordinal, len(chunk.text))
            assert len(chunk.text) >= MIN_CHARS, (path, chunk.ordinal, len(chunk.text))
        assert [c.ordinal for c in chunks] == list(range(len(chunks)))


def test_every_toy_note_chunked_within_bounds(toy_chunks):
    assert len(toy_chunks) == 35
    sizes = [len(c.text) for chunks in toy_chunks.values() for c in chunks]
    assert max(sizes) <= MAX_CODE_CHARS
    assert sum(1 for s in sizes if s > MAX_CHARS) == 1  # only the whole 56-line code block
    # Most chunks are sections of a few hundred characters up to the target size.
    assert sum(1 for s in sizes if s <= TARGET_CHARS + 200) / len(sizes) > 0.9
    assert len(toy_chunks["AI/Context window.md"]) == 1  # one line, one chunk


def test_text_is_covered_without_loss():
    for path in LONG_NOTES:
        body = _note(path).body
        joined = "\n".join(c.text for c in _chunks(path))
        for word in set(re.findall(r"\w{4,}", body)):
            assert word in joined, (path, word)


def test_heading_paths_on_chunking_strategies():
    chunks = _chunks("AI/Chunking strategies.md")
    paths = [c.heading_path for c in chunks]
    assert paths[0] == ("Chunking strategies",)
    assert ("Chunking strategies", "Why chunk at all") in paths
    assert ("Chunking strategies", "Heading-aware chunking", "Breadcrumbs") in paths
    assert ("Chunking strategies", "Heading-aware chunking", "Code blocks and other atoms") in paths
    crumbs = next(c for c in chunks if c.heading_path[-1:] == ("Breadcrumbs",))
    assert crumbs.text.startswith("### Breadcrumbs")
    assert crumbs.heading == "Chunking strategies > Heading-aware chunking > Breadcrumbs"
    # A chunk's heading path is the path of the headings above its text.
    for chunk in chunks:
        first = chunk.text.split("\n", 1)[0]
        if first.startswith("#"):
            assert first.lstrip("#").strip() == chunk.heading_path[-1]


def test_the_56_line_code_block_is_one_chunk():
    body = _note("AI/Chunking strategies.md").body
    block = re.search(r"^```python\n.*?^```$", body, re.MULTILINE | re.DOTALL).group(0)
    assert block.count("\n") - 1 == 56  # lines between the fences
    assert len(block) > MAX_CHARS  # bigger than a section may be, so it is a real test
    holders = [c for c in _chunks("AI/Chunking strategies.md") if "import re" in c.text or "return merged" in c.text]
    assert len(holders) == 1
    assert block in holders[0].text
    assert holders[0].heading_path == ("Chunking strategies", "A reference implementation")
    # No fragment of the code is repeated in the next chunk as overlap.
    after = _chunks("AI/Chunking strategies.md")[holders[0].ordinal + 1]
    assert "merged" not in after.text and after.text.startswith("Two details are easy to miss.")


def test_code_links_and_code_blocks_stay_whole_in_other_notes(toy_chunks):
    for path, chunks in toy_chunks.items():
        for chunk in chunks:
            assert chunk.text.count("```") % 2 == 0, (path, chunk.ordinal)
            assert chunk.text.count("~~~") % 2 == 0, (path, chunk.ordinal)


def test_small_sections_merge_and_long_ones_split():
    body = "# T\n\nintro.\n\n## A\n\nshort a.\n\n## B\n\nshort b.\n"
    chunks = chunk_body(body)
    assert len(chunks) == 1
    assert chunks[0].heading_path == ("T",)  # the shared parent of merged siblings
    assert "## A" in chunks[0].text and "## B" in chunks[0].text

    paragraph = " ".join(f"Sentence number {i} says something about retrieval." for i in range(120))
    chunks = chunk_body(f"# Long\n\n## Part\n\n{paragraph}\n")
    assert len(chunks) >= 5
    assert all(c.heading_path == ("Long", "Part") for c in chunks)
    assert all(len(c.text) <= MAX_CHARS for c in chunks)
    assert all(c.text.endswith(".") for c in chunks)  # cut at sentence ends


def test_overlap_between_consecutive_pieces():
    paragraphs = "\n\n".join(
        " ".join(f"Paragraph {p} sentence {s} mentions token{p}x{s}." for s in range(6)) for p in range(12)
    )
    chunks = chunk_body(f"## Section\n\n{paragraphs}\n")
    assert len(chunks) >= 3
    for before, after in itertools.pairwise(chunks):
        tail = after.text.split("\n\n", 1)[0]
        assert tail in before.text  # the next chunk opens with the end of the previous one
        assert 40 <= len(tail) <= OVERLAP_CHARS


def test_line_structure_kept_when_a_long_list_is_split():
    items = "\n".join(f"- item {i}: " + "words " * 30 for i in range(20))
    chunks = chunk_body(f"## List\n\n{items}\n")
    assert len(chunks) >= 3
    for chunk in chunks:
        lines = [line for line in chunk.text.split("\n") if line.startswith("- item")]
        assert lines and all(line.count("- item") == 1 for line in lines)


def test_huge_code_block_is_split_by_lines():
    code = "```python\n" + "\n".join(f"value_{i} = compute({i})  # line {i}" for i in range(200)) + "\n```"
    chunks = chunk_body(f"## Code\n\n{code}\n")
    assert len(code) > MAX_CODE_CHARS
    assert len(chunks) >= 4
    for chunk in chunks:
        assert len(chunk.text) <= MAX_CODE_CHARS
        lines = chunk.text.split("\n")
        # Cut between lines, and the overlap starts at a line start too.
        assert all(
            re.fullmatch(r"(## Code|```python|```|value_\d+ = compute\(\d+\)  # line \d+|)", line) for line in lines
        )
    assert chunks[1].text.startswith("value_")


def test_one_enormous_line_is_hard_cut():
    chunks = chunk_body("x" * 5000)
    assert len(chunks) >= 4
    assert "".join(c.text.replace("\n", "") for c in chunks).count("x") >= 5000


def test_unclosed_fence_runs_to_the_end():
    chunks = chunk_body("# T\n\ntext\n\n```\ncode [[x]]\n# not a heading\n")
    assert len(chunks) == 1
    assert chunks[0].heading_path == ("T",)
    assert "# not a heading" in chunks[0].text


def test_empty_and_whitespace_bodies():
    assert chunk_body("") == []
    assert chunk_body("\n\n   \n") == []


def test_embedding_text_carries_title_and_heading_path():
    chunks = _chunks("Engineering/SQLite ledger.md")
    hashed = next(c for c in chunks if c.heading_path[-1:] == ("Computing the hash",))
    text = embedding_text("SQLite ledger", hashed)
    assert text.startswith("SQLite ledger > SQLite ledger > Hash chain > Computing the hash\n\n")
    assert text.endswith(hashed.text)
    assert embedding_text("Title", Chunk(0, (), "body")) == "Title\n\nbody"
    observability = _note("Engineering/Observability.md")
    first = chunk_body(observability.body)[0]
    assert embedding_text(observability.title, first).startswith(
        "Observability and telemetry > Observability and telemetry\n\n"
    )


# An Excalidraw drawing as the plugin writes it (zsviczian/obsidian-excalidraw-plugin): the
# drawing's text and links for Obsidian to read, then the scene, compressed, inside %% %%.
DRAWING = (
    "---\nexcalidraw-plugin: parsed\ntags: [excalidraw]\n---\n"
    "==⚠  Switch to EXCALIDRAW VIEW in the MORE OPTIONS menu of this document. ⚠== You can decompress "
    "Drawing data with the command palette: 'Decompress current Excalidraw file'.\n\n\n"
    "# Excalidraw Data\n\n## Text Elements\nCheckout service ^a1B2c3D4\n\nTalks to [[Payments]] ^x9Y8z7W6\n\n"
    "## Embedded Files\n5f3b2c1d0e9f8a7b6c5d4e3f2a1b0c9d: [[diagram.png]]\n\n"
    "%%\n## Drawing\n```compressed-json\n"
    + "\n".join(["N4KAkARALgngDgUwgLgAQQQDwMYEMA2AlgCYBOuA7hAD" * 6] * 400)
    + "\n```\n%%\n"
)


@pytest.mark.parametrize("fence", ["compressed-json", "json"])
def test_an_excalidraw_drawing_is_indexed_by_its_text_not_its_scene(fence):
    from brain.index.parsing import parse_and_chunk

    data = DRAWING.replace("```compressed-json", "```" + fence).encode()
    note, chunks, _ = parse_and_chunk("Sketches/Checkout.excalidraw.md", data, 0.0)
    text = "\n".join(chunk.text for chunk in chunks)
    assert len(chunks) == 1 and "Checkout service" in text and "[[diagram.png]]" in text
    assert "N4KAk" not in text and "EXCALIDRAW VIEW" not in text and "Drawing" not in text
    assert [link.target for link in note.links] == ["Payments", "diagram.png"]
    # a note that is no drawing keeps a "## Drawing" section and its code
    plain = parse_and_chunk("Notes/Howto.md", b'## Drawing\n```json\n{"a": 1}\n```\n', 0.0)[1]
    assert '{"a": 1}' in plain[0].text


def test_a_heading_ending_in_a_hash_after_a_word_keeps_it():
    # CommonMark (and Obsidian's outline): closing #s close a heading only after a space or tab;
    # "## Learn C#" is "Learn C#", which brain read as "Learn C".
    body = "# Languages\n\n## Learn C#\n\nGenerics and LINQ.\n\n## F# #\n\nPipelines.\n\n### Setup ###\n\nDone.\n"
    assert [chunk.heading_path for chunk in chunk_body(body, max_chars=30)] == [
        ("Languages", "Learn C#"),
        ("Languages", "F#"),
        ("Languages", "F#", "Setup"),
    ]


def test_an_index_that_cut_the_hash_off_headings_reads_those_notes_again(tmp_path, closing):
    """m027: the notes with a heading that ends in a "#" after a word, whose chunks an older
    brain filed under a heading without it, are read again once by the next `brain index`."""
    import sqlite3

    from index_helpers import IndexView, history_problems, index_into

    from brain.index.schema import INDEX_MIGRATIONS
    from brain.migrations import connect

    vault = tmp_path / "vault"
    vault.mkdir()
    (vault / "A.md").write_text("## Learn C#\n\nGenerics and LINQ.\n", encoding="utf-8")
    (vault / "B.md").write_text("## Setup ##\n\nIssue #12 and [[A]].\n", encoding="utf-8")
    home = tmp_path / "home"
    _, directory = index_into(home, vault)
    db = directory / "index.db"
    conn = connect(str(db))
    conn.execute("UPDATE chunks SET heading = 'Learn C' WHERE heading = 'Learn C#'")  # as an older brain filed it
    conn.execute("DELETE FROM _migrations WHERE db = 'index' AND name = 'm027_headings_ending_in_a_hash'")
    conn.commit()
    versions = conn.execute("SELECT count(*) FROM note_versions").fetchone()[0]
    conn.close()
    assert "m027_headings_ending_in_a_hash" in INDEX_MIGRATIONS.pending(closing(sqlite3.connect(db)))
    report, _ = index_into(home, vault)
    assert (report.changed, report.unchanged) == (1, 1)
    with IndexView(directory) as view:
        assert [chunk["heading"] for chunk in view.chunks("A.md")] == ["Learn C#"]
        assert view.conn.execute("SELECT count(*) FROM note_versions").fetchone()[0] == versions
    assert history_problems(db) == []


def _heading_before_m027(line):
    """``links.heading_of`` as brain read a heading before m027: every closing "#" closed it."""
    from brain.links import HEADING_START

    match = HEADING_START.match(line)
    return None if match is None else (len(match.group(1)), line[match.end() :].strip().rstrip("#").rstrip())


def test_m027_marks_every_heading_it_reads_otherwise():
    # m027 reads the chunks an older brain stored: every heading line whose text m027 changes
    # must be found in them, a no-break space after its "#"s or before its last "#"s too
    # ("#\u00a0Learn C#", "## C\u00a0#": the marker took only a space or a tab there, and "\s").
    import random

    from brain.index.schema import _holds_hash_ended_heading
    from brain.links import heading_of

    rng = random.Random(27)
    changed = 0
    for _ in range(20000):
        line = "#" * rng.randint(1, 7) + "".join(rng.choice(" \t\u00a0\u3000#Cx") for _ in range(rng.randint(0, 8)))
        if heading_of(line) is None or heading_of(line) == _heading_before_m027(line):
            continue
        changed += 1
        text = chunk_body(f"{line}\n\nThe words.\n")[0].text  # what an older brain stored too
        assert _holds_hash_ended_heading(text), repr(line)
    assert changed > 500  # (961)
    assert not _holds_hash_ended_heading("## Setup ##\n\nIssue #12, C# and F#.")


def test_a_heading_inside_an_html_comment_is_none_as_its_links_are_none():
    # Obsidian hides an HTML comment, and brain reads no link or tag in one (links.mask_comments):
    # a "# heading" in it made a chunk heading, the rest of the comment and what followed under it.
    # In Obsidian's own %% comments links and tags count, and so does a heading.
    body = (
        "# Plan\n\nThe plan.\n\n<!--\n# Draft\nold ideas\n-->\n\nAfter the comment.\n\n"
        "%%\n# Kept\n%%\n\nKept words.\n\n```html\n<!--\n```\n\n# After code\n\nEnd.\n"
    )
    paths = [chunk.heading_path for chunk in chunk_body(body, max_chars=30)]
    assert ("Draft",) not in paths and ("Plan",) in paths, paths
    assert paths[-2:] == [("Kept",), ("After code",)], paths
    plan = " ".join(chunk.text for chunk in chunk_body(body, max_chars=30) if chunk.heading_path == ("Plan",))
    assert "# Draft" in plan and "After the comment." in plan  # the comment's text stays where it was
    # a heading line whose "#" the comment holds (it ends on that line) is none; one the comment
    # only follows is a heading still, without the comment (below)
    from brain.chunking import _sections

    sections = _sections("<!-- x\n# Hidden -->\n\nA.\n\n# H <!-- c -->\n\nB.\n")
    assert [section.heading_path for section in sections] == [(), ("H",)]


@pytest.mark.parametrize(
    ("line", "heading"),
    [
        ("# Plan <!-- draft -->", (1, "Plan")),
        ("## Plan <!-- draft --> ##", (2, "Plan")),
        ("### A <!-- x --> B <!-- y -->", (3, "A B")),  # the spaces either side are one
        ("# A<!-- x -->B", (1, "AB")),
        ("# Use `<!-- x -->` here", (1, "Use `<!-- x -->` here")),  # in code it is text
        ("# Plan <!-- not closed here", (1, "Plan <!-- not closed here")),  # as mask_comments
    ],
)
def test_an_html_comment_in_a_heading_is_not_its_text(line, heading):
    # Obsidian hides the comment, as it hides a heading inside one: the heading text (a chunk's
    # heading path, what `brain ask` shows and what a [[Note#Plan]] anchor names) kept it.
    from brain.links import heading_of

    assert heading_of(line) == heading
    chunks = chunk_body(f"{line}\n\nThe words.\n")
    assert [chunk.heading_path for chunk in chunks] == [(heading[1],)]


def test_an_index_that_read_headings_in_html_comments_reads_those_notes_again(tmp_path, closing):
    """m031: the notes with an HTML comment in a chunk, whose chunks an older brain may have filed
    under a heading inside the comment, are read again once by the next `brain index`."""
    import sqlite3

    from index_helpers import IndexView, history_problems, index_into

    from brain.index.schema import INDEX_MIGRATIONS
    from brain.migrations import connect

    vault = tmp_path / "vault"
    vault.mkdir()
    (vault / "A.md").write_text("# Plan\n\nThe plan.\n\n<!--\n# Draft\nold ideas\n-->\n", encoding="utf-8")
    (vault / "B.md").write_text("# Setup\n\nNo comment and [[A]].\n", encoding="utf-8")
    home = tmp_path / "home"
    _, directory = index_into(home, vault)
    db = directory / "index.db"
    conn = connect(str(db))
    conn.execute("UPDATE chunks SET heading = 'Draft' WHERE text LIKE '%old ideas%'")  # as an older brain filed it
    conn.execute("DELETE FROM _migrations WHERE db = 'index' AND name = 'm031_no_headings_in_html_comments'")
    conn.commit()
    versions = conn.execute("SELECT count(*) FROM note_versions").fetchone()[0]
    conn.close()
    assert "m031_no_headings_in_html_comments" in INDEX_MIGRATIONS.pending(closing(sqlite3.connect(db)))
    report, _ = index_into(home, vault)
    assert (report.changed, report.unchanged) == (1, 1)
    with IndexView(directory) as view:
        assert [chunk["heading"] for chunk in view.chunks("A.md")] == ["Plan"]
        assert view.conn.execute("SELECT count(*) FROM note_versions").fetchone()[0] == versions
    assert history_problems(db) == []
    assert index_into(home, vault)[0].changed == 0  # once


# Pieces of notes around m031: comments open and closed, over lines and not, headings in and out
# of them, code that holds a comment's mark, mermaid arrows, long prose (cut into chunks with an overlap).
_M031_PIECES = [
    "# H",
    "## Sub",
    "   ### Deep",
    "<!--",
    "-->",
    "<!-- c -->",
    "<!-->",
    "<!-- open",
    "end -->",
    "A --> B",
    "graph TD",
    "```",
    "```mermaid",
    "~~~",
    "`<!--`",
    "`-->` in code",
    "text `x` more",
    "",
    "",
    "Words of a paragraph. " * 12,
    "Another sentence here, with [[Link]] and #tag. " * 30,
]


def _chunks_before_m031(body, monkeypatch):
    """``chunk_body`` as it read ``body`` before m031: no heading hidden by an HTML comment."""
    import brain.links

    with monkeypatch.context() as patch:  # chunking reads headings by links.outline
        patch.setattr(brain.links, "comment_hidden_lines", lambda body: None)
        return chunk_body(body)


def test_m031_marks_every_note_whose_chunks_it_changes(monkeypatch):
    # may_hide_a_heading reads what an older brain stored (the chunks as chunked then): it must
    # never pass over a note that m031 chunks otherwise, over random notes of m031's pieces.
    import random

    from brain.index.schema import may_hide_a_heading

    rng = random.Random(31)
    changed = 0
    for _ in range(3000):
        body = "\n".join(rng.choice(_M031_PIECES) for _ in range(rng.randint(1, 30)))
        before = _chunks_before_m031(body, monkeypatch)
        if [(c.heading_path, c.text) for c in before] != [(c.heading_path, c.text) for c in chunk_body(body)]:
            changed += 1
            assert may_hide_a_heading("\n".join(chunk.text for chunk in before)), body
    assert changed > 200  # the pieces make such notes often (261)


@pytest.mark.parametrize(
    "body",
    [
        "# Flow\n\n```mermaid\ngraph TD\n  A --> B\n```\n\n## Then\n\nA --> B, then C.\n",
        "<!-- a comment closed on its line -->\n\n# Plan\n\nThe plan --> done.\n",
        "# Plan\n\nThe plan.\n\n<!--\nnotes, no heading\n-->\n",
        "# Plan\n\n<!-- unclosed\n\n# Next\n",
    ],
)
def test_m031_passes_over_a_note_whose_chunks_it_leaves(body, monkeypatch):
    from brain.index.schema import may_hide_a_heading

    before = _chunks_before_m031(body, monkeypatch)
    assert before == chunk_body(body)
    assert not may_hide_a_heading("\n".join(chunk.text for chunk in before))


def test_m031_reads_again_the_notes_with_a_heading_in_a_comment_and_no_other(tmp_path, closing):
    """m031 marked every note with "<!--" or "-->" in a chunk: a mermaid diagram's arrows, a
    comment closed on its line, a comment after the last heading, none of whose chunks it changes."""
    import sqlite3

    from index_helpers import index_into

    from brain.index.schema import INDEX_MIGRATIONS
    from brain.migrations import connect

    vault = tmp_path / "vault"
    vault.mkdir()
    notes = {
        "Hidden.md": "# Plan\n\nThe plan.\n\n<!--\n# Draft\nold ideas\n-->\n",
        "Mermaid.md": "# Flow\n\n```mermaid\ngraph TD\n  A --> B\n```\n\n## Then\n\nA --> B.\n",
        "Closed.md": "<!-- todo -->\n\n# Plan\n\nWords.\n",
        "Last.md": "# Plan\n\nWords.\n\n<!--\nno heading\n-->\n",
    }
    for name, text in notes.items():
        (vault / name).write_text(text, encoding="utf-8")
    home = tmp_path / "home"
    _, directory = index_into(home, vault)
    db = directory / "index.db"
    conn = connect(str(db))
    conn.execute("UPDATE chunks SET heading = 'Draft' WHERE text LIKE '%old ideas%'")  # as an older brain filed it
    conn.execute("DELETE FROM _migrations WHERE db = 'index' AND name = 'm031_no_headings_in_html_comments'")
    conn.commit()
    conn.close()
    assert "m031_no_headings_in_html_comments" in INDEX_MIGRATIONS.pending(closing(sqlite3.connect(db)))
    report, _ = index_into(home, vault)
    assert (report.changed, report.unchanged) == (1, 3)


def test_m033_reads_again_a_note_whose_heading_with_a_comment_no_chunk_heading_holds(tmp_path):
    """m033 marked the notes with a chunk heading holding "<!--": a heading merged into the section
    before it is in no chunk's heading, yet it cut that chunk's heading path short ("P <!-- c -->"
    and "P" have no common start, "P" and "P" have): such a note was not read again."""
    from index_helpers import IndexView, index_into

    from brain.migrations import connect

    words = "Words of a paragraph. " * 12
    body = f"# P\n\n{words}\n\n## Q\n\n{words}\n\n# P <!-- c -->\n\n## R\n\nshort.\n"
    assert [chunk.heading_path for chunk in chunk_body(body)] == [("P",), ("P",)]
    vault = tmp_path / "vault"
    vault.mkdir()
    (vault / "A.md").write_text(body, encoding="utf-8")
    (vault / "B.md").write_text("# B\n\nA comment <!-- c --> in prose, not in a heading.\n", encoding="utf-8")
    home = tmp_path / "home"
    _, directory = index_into(home, vault)
    db = directory / "index.db"
    conn = connect(str(db))
    # as an older brain filed it, the comment in the heading's text: under P > Q
    chunk = (
        "SELECT id, title, heading, text FROM chunks_fts_source WHERE id = (SELECT id FROM chunks WHERE ordinal = 1)"
    )
    conn.execute(f"INSERT INTO chunks_fts (chunks_fts, rowid, title, heading, text) SELECT 'delete', * FROM ({chunk})")
    conn.execute("UPDATE chunks SET heading = 'P > Q' WHERE ordinal = 1")
    conn.execute(f"INSERT INTO chunks_fts (rowid, title, heading, text) {chunk}")
    conn.execute("DELETE FROM _migrations WHERE db = 'index' AND name = 'm033_no_html_comments_in_headings'")
    conn.commit()
    conn.close()
    report, _ = index_into(home, vault)
    assert (report.changed, report.unchanged) == (1, 1)
    with IndexView(directory) as view:
        assert [chunk["heading"] for chunk in view.chunks("A.md")] == ["P", "P"]


def test_an_index_that_kept_html_comments_in_headings_reads_those_notes_again(tmp_path, closing):
    """m033: the notes with a chunk heading holding an HTML comment, which an older brain kept
    in the heading's text, are read again once by the next `brain index`."""
    import sqlite3

    from index_helpers import IndexView, history_problems, index_into

    from brain.index.schema import INDEX_MIGRATIONS
    from brain.migrations import connect

    vault = tmp_path / "vault"
    vault.mkdir()
    (vault / "A.md").write_text("# Plan <!-- draft -->\n\nThe plan.\n", encoding="utf-8")
    (vault / "B.md").write_text("# Setup\n\nNo comment and [[A]].\n", encoding="utf-8")
    home = tmp_path / "home"
    _, directory = index_into(home, vault)
    db = directory / "index.db"
    conn = connect(str(db))
    conn.execute("UPDATE chunks SET heading = 'Plan <!-- draft -->' WHERE heading = 'Plan'")  # as an older brain
    conn.execute("DELETE FROM _migrations WHERE db = 'index' AND name = 'm033_no_html_comments_in_headings'")
    conn.commit()
    versions = conn.execute("SELECT count(*) FROM note_versions").fetchone()[0]
    conn.close()
    assert "m033_no_html_comments_in_headings" in INDEX_MIGRATIONS.pending(closing(sqlite3.connect(db)))
    report, _ = index_into(home, vault)
    assert (report.changed, report.unchanged) == (1, 1)
    with IndexView(directory) as view:
        assert [chunk["heading"] for chunk in view.chunks("A.md")] == ["Plan"]
        assert view.conn.execute("SELECT count(*) FROM note_versions").fetchone()[0] == versions
    assert history_problems(db) == []
    assert index_into(home, vault)[0].changed == 0  # once


def test_a_markdown_link_to_a_name_with_parentheses_is_never_cut():
    # Links stay whole in chunks (a cut inside one breaks it in snippets and in BM25's words);
    # a markdown link whose target holds parentheses (Obsidian's [x](<Meeting (2024) notes.md>))
    # was no link to the chunker, and a long paragraph was cut between its words.
    from brain.links import extract_links

    link = "[the notes of that meeting](<Meetings/Meeting (2024) notes of the board.md>)"
    words = " ".join(f"word{i}" for i in range(60))
    for shift in range(0, 70, 7):
        paragraph = f"{words[: 300 + shift]} {link} {words}"
        chunks = chunk_body(f"# Long\n\n{paragraph}\n", target=400, overlap=60, max_chars=400)
        assert len(chunks) > 1
        held = [c.text for c in chunks if "Meeting (2024)" in c.text]
        assert held and all(link in text for text in held), shift
        assert all(len(extract_links(text)) == 1 for text in held)
