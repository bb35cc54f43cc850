"""A vault read as Obsidian reads it: the forms whose links Obsidian's own cache holds (or does
not), indexed end to end and asked through `brain neighbours`.

Obsidian's behaviour is taken from its help (obsidianmd/obsidian-help: Properties, Internal
links, Basic formatting syntax, HTML content) and from the cache Obsidian 1.8 built for the
test vault of the Tasks plugin (obsidian-tasks-group/obsidian-tasks, tests/Obsidian/__test_data__:
link_in_yaml, links_everywhere, all_link_types, link_in_task_markdown_link, comments_*)."""

from __future__ import annotations

import contextlib
import json
import sqlite3

from click.testing import CliRunner
from index_helpers import IndexView, history_problems, index_into

from brain.cli import cli
from brain.index.schema import INDEX_MIGRATIONS
from brain.index.store import IndexStore
from brain.links import property_links
from brain.migrations import connect
from brain.notes import parse_note


def _write(root, files: dict[str, str]) -> None:
    for rel, text in files.items():
        path = root / rel
        path.parent.mkdir(parents=True, exist_ok=True)
        path.write_text(text, encoding="utf-8")


def _as_an_older_brain_left_it(directory, migration: str, *statements: str) -> int:
    """The index in ``directory`` made, by ``statements``, what a brain before ``migration`` left,
    the migration pending again: how many note versions it holds."""
    db = directory / "index.db"
    conn = connect(str(db))
    for statement in statements:
        conn.execute(statement)
    conn.execute("DELETE FROM _migrations WHERE db = 'index' AND name = ?", (migration,))
    conn.commit()
    versions = conn.execute("SELECT count(*) FROM note_versions").fetchone()[0]
    conn.close()
    with contextlib.closing(sqlite3.connect(db)) as check:
        assert migration in INDEX_MIGRATIONS.pending(check)
    return versions


def _indexed_again_with_no_new_version(home, vault, directory, versions: int):
    """The next `brain index`'s report, once it has read notes again with no new version, nothing
    embedded again and a sound history."""
    report, _ = index_into(home, vault)
    assert report.embedded == 0
    with IndexView(directory) as view:
        assert view.conn.execute("SELECT count(*) FROM note_versions").fetchone()[0] == versions
    assert history_problems(directory / "index.db") == []
    return report


def _forms(links) -> list[tuple[str, str, str | None, str | None, int]]:
    return [(link.target, link.kind, link.anchor, link.display, link.line) for link in links]


def test_a_property_whose_value_is_a_wikilink_is_a_link():
    text = (
        "---\n"
        'up: "[[Index]]"\n'
        "related:\n"
        '  - "[[A]]"\n'
        '  - "[[Folder/B#Heading|bee]]"\n'
        "nested: {deeper: ['[[C]]']}\n"
        'prose: "see [[Not a property link]] here"\n'  # not one link: text
        'md: "[x](D.md)"\n'  # a markdown link in a property is text to Obsidian
        "unquoted: [[E]]\n"  # YAML reads a list in a list: not a link to Obsidian either
        "count: 3\n"
        "---\n"
        "Body [[F]].\n"
    )
    note = parse_note("N.md", text.encode(), 0)
    assert _forms(note.links) == [
        ("Index", "property", None, None, 0),
        ("A", "property", None, None, 0),
        ("Folder/B", "property", "Heading", "bee", 0),
        ("C", "property", None, None, 0),
        ("F", "wikilink", None, None, 1),
    ]
    assert property_links({"a": ["[[#Local heading]]", "[[]]", None, 2.5]}) == [
        property_links({"b": "[[#Local heading]]"})[0]
    ]


def test_obsidian_forms_make_the_graph_obsidian_shows(tmp_path):
    vault = tmp_path / "vault"
    _write(
        vault,
        {
            "Projects/Mooring.md": '---\nowner: "[[Priya Raman]]"\nrelated: ["[[Halyard]]"]\n---\n# Mooring\n\nThe app.\n',
            "People/Priya Raman.md": "# Priya\n\nRuns [Mooring](../Projects/Mooring) and [Halyard](Halyard.md).\n",
            "Projects/Halyard.md": (
                "# Halyard\n\nSee <!-- [[Priya Raman]] --> nobody, %% [[Mooring]] %% and [up](#Halyard).\n"
            ),
        },
    )
    _, directory = index_into(tmp_path / "home", vault)
    with IndexView(directory) as view:
        assert view.edge("Projects/Mooring.md", "Priya Raman")["kind"] == "property"
        assert view.targets("Projects/Mooring.md") == {"People/Priya Raman.md", "Projects/Halyard.md"}
        # [x](../Projects/Mooring) without .md, and [x](Halyard.md) by file name from another folder
        assert view.targets("People/Priya Raman.md") == {"Projects/Mooring.md", "Projects/Halyard.md"}
        # the HTML comment's link is none; the %% comment's is one; [up](#Halyard) is the note itself
        assert view.targets("Projects/Halyard.md") == {"Projects/Mooring.md", "Projects/Halyard.md"}
        assert view.backlinks("People/Priya Raman.md") == {"Projects/Mooring.md"}


def test_brain_neighbours_names_a_property_link(tmp_path, monkeypatch):
    vault = tmp_path / "vault"
    _write(vault, {"A.md": '---\nup: "[[B]]"\n---\nText.\n', "B.md": "Text.\n"})
    index_into(tmp_path / "home", vault)
    monkeypatch.setenv("BRAIN_HOME", str(tmp_path / "home"))
    shown = CliRunner().invoke(cli, ["neighbours", "--vault", str(vault), "A"])
    assert shown.exit_code == 0, shown.output
    assert "→ [[B]]  B.md  (property)" in shown.output
    back = CliRunner().invoke(cli, ["neighbours", "--vault", str(vault), "--json", "B"])
    assert json.loads(back.output)["backlinks"] == [
        {"path": "A.md", "title": "A", "kind": "property", "anchor": None, "line": 0}
    ]


def test_an_index_an_older_brain_read_is_read_again_once(tmp_path):
    """m019: the notes an older brain may have read otherwise are read again by the next `brain
    index`, with no new version and no chunk embedded again for the same text; the others not."""
    vault = tmp_path / "vault"
    _write(
        vault,
        {
            "A.md": '---\nup: "[[B]]"\n---\nText.\n',
            "B.md": "See [C](C) <!-- [[A]] -->.\n",
            "C.md": "Plain [[A]].\n",
            "D.md": "---\n---\nAbove the rule.\n\n---\n\nBelow.\n",
        },
    )
    home = tmp_path / "home"
    _, directory = index_into(home, vault)
    # as an older brain left it: no property link, no link without .md, the comment's link, the
    # empty frontmatter read up to the rule
    versions = _as_an_older_brain_left_it(
        directory,
        "m019_reread_obsidian_forms",
        "DELETE FROM links WHERE kind = 'property' OR target = 'C'",
        "INSERT INTO links (source_id, target, kind, line, status) SELECT id, 'A', 'wikilink', 1, 'pending' FROM notes WHERE path = 'B.md'",
        "UPDATE notes SET warnings = '[\"frontmatter is not a mapping; ignored\"]' WHERE path = 'D.md'",
    )
    report = _indexed_again_with_no_new_version(home, vault, directory, versions)
    assert (report.changed, report.unchanged) == (3, 1)
    with IndexView(directory) as view:
        assert view.targets("A.md") == {"B.md"} and view.targets("B.md") == {"C.md"}


def test_an_index_that_read_inline_triple_backticks_as_a_fence_reads_those_notes_again(tmp_path):
    """m026: a note with a line of inline code in triple backticks, which an older brain read as a
    fence that hid the rest of the note, is read again once by the next `brain index` (no new
    version, nothing embedded again); the others are not."""
    vault = tmp_path / "vault"
    _write(
        vault,
        {
            "A.md": "Run:\n```make test```\nthen see [[B]] #checked\n",
            "B.md": "```python\nprint(1)\n````\n```\n\nPlain [[A]].\n",
        },
    )
    home = tmp_path / "home"
    _, directory = index_into(home, vault)
    # as an older brain left it: no link and no tag after the line it read as a fence
    versions = _as_an_older_brain_left_it(
        directory,
        "m026_inline_code_in_triple_backticks",
        "DELETE FROM links WHERE source_id = (SELECT id FROM notes WHERE path = 'A.md')",
        "DELETE FROM tags WHERE note_id = (SELECT id FROM notes WHERE path = 'A.md')",
    )
    report = _indexed_again_with_no_new_version(home, vault, directory, versions)
    assert (report.changed, report.unchanged) == (1, 1)
    with IndexView(directory) as view:
        assert view.targets("A.md") == {"B.md"}
        assert view.note("A.md")["tags"] == ["checked"]


def test_tags_and_aliases_are_read_from_their_keys_in_any_case(tmp_path):
    # Obsidian's parseFrontMatterTags and parseFrontMatterAliases match /^tags?$/i and
    # /^alias(es)?$/i: "Aliases:" names the note and "Tags:" tags it (brain read neither).
    note = parse_note("B.md", b"---\nAliases: [Bee, B note]\nTAGS: project, x/y\n---\nBody #inline\n", 0)
    assert (note.aliases, note.tags) == (["Bee", "B note"], ["project", "x/y", "inline"])
    assert parse_note("C.md", b"---\nAlias: Sea\nTag: z\n---\n", 0).aliases == ["Sea"]
    # the usual keys first, as before
    assert parse_note("D.md", b"---\nTags: [other]\ntags: [usual]\n---\n", 0).tags == ["usual"]
    vault = tmp_path / "vault"
    _write(vault, {"A.md": "See [[Bee]].\n", "B.md": "---\nAliases: [Bee]\n---\nBody.\n"})
    _, directory = index_into(tmp_path / "home", vault)
    with IndexView(directory) as view:
        assert view.targets("A.md") == {"B.md"}


def test_an_index_that_read_no_capitalised_aliases_key_reads_those_notes_again(tmp_path):
    """m028: a note whose "Aliases:" or "Tags:" an older brain did not read is read again once
    by the next `brain index`, and the links to its alias resolve (nothing embedded again)."""
    vault = tmp_path / "vault"
    _write(
        vault,
        {
            "A.md": "See [[Bee]].\n",
            "B.md": "---\nAliases: [Bee]\nTags: [x]\n---\nBody.\n",
            "C.md": "---\ntags: [y]\n---\n",
        },
    )
    home = tmp_path / "home"
    _, directory = index_into(home, vault)
    # as an older brain left it: B without its alias and tag, A's link to the alias dangling
    versions = _as_an_older_brain_left_it(
        directory,
        "m028_tags_and_aliases_in_any_case",
        "DELETE FROM aliases",
        "UPDATE notes SET aliases = '[]', tags = '[]' WHERE path = 'B.md'",
        "DELETE FROM tags WHERE note_id = (SELECT id FROM notes WHERE path = 'B.md')",
        "UPDATE links SET target_id = NULL, status = 'dangling'",
    )
    report = _indexed_again_with_no_new_version(home, vault, directory, versions)
    assert (report.changed, report.unchanged) == (1, 2)
    with IndexView(directory) as view:
        assert view.targets("A.md") == {"B.md"}
        assert view.note("B.md")["tags"] == ["x"]


def test_an_index_that_took_the_nearest_of_a_duplicated_name_resolves_it_again(tmp_path, closing):
    """m037: links to a name several notes hold went to the note fewest folders away; an index
    made then resolves every link again at its next run, once, to the note Obsidian opens (the
    one inside the linking note's folder), and reads no note again."""
    import sqlite3

    from index_helpers import history_problems

    from brain.index.schema import INDEX_MIGRATIONS
    from brain.migrations import connect

    vault = tmp_path / "vault"
    _write(vault, {"A/Hub.md": "See [[Topic]].\n", "A/B/C/D/Topic.md": "Deep.\n", "E/Topic.md": "Near.\n"})
    home = tmp_path / "home"
    _, directory = index_into(home, vault)
    db = directory / "index.db"
    with IndexView(directory) as view:
        assert view.edge("A/Hub.md", "Topic")["target_path"] == "A/B/C/D/Topic.md"
    conn = connect(str(db))
    near = conn.execute("SELECT id FROM notes WHERE path = 'E/Topic.md'").fetchone()[0]
    conn.execute("UPDATE links SET target_id = ? WHERE target = 'Topic'", (near,))  # as resolved before m037
    conn.execute("DELETE FROM _migrations WHERE db = 'index' AND name = 'm037_duplicate_names_as_obsidian_opens_them'")
    conn.commit()
    conn.close()
    assert "m037_duplicate_names_as_obsidian_opens_them" in INDEX_MIGRATIONS.pending(closing(sqlite3.connect(db)))
    report, _ = index_into(home, vault)
    assert (report.changed, report.unchanged) == (0, 3)
    with IndexView(directory) as view:
        assert view.edge("A/Hub.md", "Topic")["target_path"] == "A/B/C/D/Topic.md"
    assert history_problems(db) == []


def test_the_link_history_a_rule_change_moves_is_read_again_by_the_notes_then(tmp_path, closing):
    """m037 again, with the history an index from before it holds: [[Index]] in A/B/Hub.md went to
    A/B/C/Index.md (fewest folders away) all along, where Obsidian opened Index.md at the root from
    the moment it was written. The next run closed that edge and opened the root's at that run, a
    change of link no one made, and `--as-of` before it answered with a note Obsidian never opened
    from there. The vault's files then are what the links then go to: the deep note until the root
    one came, the root one from then, and nothing changes at the run."""
    import sqlite3

    from index_helpers import history_problems

    from brain.migrations import connect

    vault = tmp_path / "vault"
    _write(vault, {"A/B/Hub.md": "See [[Index]].\n", "A/B/C/Index.md": "Deep.\n"})
    home = tmp_path / "home"
    _, directory = index_into(home, vault)
    _write(vault, {"Index.md": "Root.\n"})
    index_into(home, vault)
    db = directory / "index.db"
    conn = connect(str(db))
    deep, root = (
        conn.execute("SELECT id FROM notes WHERE path = ?", (path,)).fetchone()[0]
        for path in ("A/B/C/Index.md", "Index.md")
    )
    edges = "SELECT id, target_id, recorded_from, recorded_to FROM link_history WHERE target = 'Index' ORDER BY id"
    first, second = conn.execute(edges).fetchall()
    assert (first[1], second[1]) == (deep, root) and first[3] == second[2]  # the rule since m037
    came = conn.execute("SELECT recorded_from FROM note_versions WHERE note_id = ?", (root,)).fetchone()[0]
    # as a brain from before m037 recorded it: the deep note from the start, still open
    conn.execute("DELETE FROM link_history WHERE id = ?", (second[0],))
    conn.execute("UPDATE link_history SET recorded_to = NULL WHERE id = ?", (first[0],))
    conn.execute("UPDATE links SET target_id = ? WHERE target = 'Index'", (deep,))
    conn.execute("DELETE FROM _migrations WHERE db = 'index' AND name = 'm037_duplicate_names_as_obsidian_opens_them'")
    conn.commit()
    conn.close()
    report, _ = index_into(home, vault)
    assert report.changed == 0
    with closing(sqlite3.connect(db)) as after:
        assert after.execute(edges).fetchall() == [
            (first[0], deep, first[2], came),
            (after_id(after), root, came, None),
        ]
        assert after.execute("SELECT count(*) FROM meta WHERE key = 'links_history_reread'").fetchone()[0] == 0
    with IndexView(directory) as view:
        assert view.edge("A/B/Hub.md", "Index")["target_path"] == "Index.md"
    assert history_problems(db) == []


def after_id(conn) -> int:
    return conn.execute("SELECT max(id) FROM link_history WHERE target = 'Index'").fetchone()[0]


def test_an_edge_the_rule_does_not_move_keeps_its_history(tmp_path, closing):
    """A first build records each note as it reaches it, and a link's edge from its note's moment
    with the target the build's end resolved: vaultofknowledge's [[Phonetics]] went to the root
    Phonetics.md from before that note's version began. The rule gives the same target at the
    edge's end, so reading the history again leaves it as it was (it split it in two, a link
    change at a moment in the middle of the first build)."""
    import sqlite3

    from brain.index.linking import reread_link_history

    vault = tmp_path / "vault"
    _write(vault, {"K/Phonology.md": "See [[Phonetics]].\n", "K/Phonetics.md": "Deep.\n", "Phonetics.md": "Root.\n"})
    _, directory = index_into(tmp_path / "home", vault)
    with closing(sqlite3.connect(directory / "index.db")) as conn:
        root = conn.execute("SELECT id FROM notes WHERE path = 'Phonetics.md'").fetchone()[0]
        start = conn.execute("SELECT recorded_from FROM link_history WHERE target = 'Phonetics'").fetchone()[0]
        conn.execute("UPDATE note_versions SET recorded_from = ? WHERE note_id = ?", (start + 60, root))
        conn.commit()
        before = conn.execute("SELECT * FROM link_history ORDER BY id").fetchall()
    store = closing(IndexStore.open(directory))
    assert reread_link_history(store) == 0
    assert [tuple(row) for row in store.conn.execute("SELECT * FROM link_history ORDER BY id")] == before
    assert before[0][5] == root  # target_id: the root note, from the edge's start


def test_a_first_build_reads_no_note_version_for_the_link_history(tmp_path, closing):
    """m037 runs on a new index too, so its first build reads the link history again: with no edge
    resolved yet there is nothing to read it by, and the versions of every note were read for it."""
    from brain.index.linking import reread_link_history

    store = closing(IndexStore.in_memory(tmp_path))
    store.conn.execute(
        "INSERT INTO link_history (source_id, target, kind, status, recorded_from) VALUES (1, 'Index', 'wikilink', 'pending', 0)"
    )
    statements: list[str] = []
    store.conn.set_trace_callback(statements.append)
    assert reread_link_history(store) == 0
    assert statements and not [sql for sql in statements if "note_versions" in sql]


def test_markdown_links_to_names_with_parentheses_end_to_end(tmp_path):
    """A markdown link to a note whose name holds parentheses (what Obsidian writes with wikilinks
    off: ``[x](Meeting%20(2024).md)``) is the note's link in `brain neighbours`, not a dangling
    "Meeting (2024". m040: an index an older brain made reads such notes again once (no new
    version, nothing embedded again); the others are not."""
    vault = tmp_path / "vault"
    _write(
        vault,
        {
            "Home.md": "See [the meeting](Meeting%20(2024).md) and [the plan](<Plans/Plan (v2).md#Goals>).\n",
            "Meetings/Meeting (2024).md": "Notes of the meeting.\n",
            "Plans/Plan (v2).md": "# Goals\nShip it. Back [home](Home.md).\n",
        },
    )
    home = tmp_path / "home"
    _, directory = index_into(home, vault)
    with IndexView(directory) as view:
        assert view.targets("Home.md") == {"Meetings/Meeting (2024).md", "Plans/Plan (v2).md"}
        assert view.conn.execute("SELECT count(*) FROM links WHERE status = 'dangling'").fetchone()[0] == 0
    # as an older brain left it: each link ended at its first ")", dangling
    versions = _as_an_older_brain_left_it(
        directory,
        "m040_markdown_links_with_parentheses",
        "UPDATE links SET target = 'Meeting (2024', target_id = NULL, status = 'dangling'"
        " WHERE source_id = (SELECT id FROM notes WHERE path = 'Home.md')",
    )
    report = _indexed_again_with_no_new_version(home, vault, directory, versions)
    assert (report.changed, report.unchanged) == (1, 2)
    with IndexView(directory) as view:
        assert view.targets("Home.md") == {"Meetings/Meeting (2024).md", "Plans/Plan (v2).md"}


def test_an_index_that_cut_tags_at_a_combining_mark_reads_those_notes_again(tmp_path):
    """m041: a note holding a tag Obsidian reads whole and brain read cut (``#हिन्दी`` as "ह") or
    not at all (``#🌱/seedling``) is read again once by the next `brain index` (no new version,
    nothing embedded again); the others are not."""
    vault = tmp_path / "vault"
    _write(vault, {"A.md": "Notes #हिन्दी #🌱/seedling and #plain\n", "B.md": "Only #plain here.\n"})
    home = tmp_path / "home"
    _, directory = index_into(home, vault)
    with IndexView(directory) as view:
        assert view.note("A.md")["tags"] == ["हिन्दी", "🌱/seedling", "plain"]
    versions = _as_an_older_brain_left_it(
        directory,
        "m041_tags_as_obsidian_reads_them",
        "DELETE FROM tags WHERE note_id = (SELECT id FROM notes WHERE path = 'A.md')",
        "INSERT INTO tags (note_id, tag) SELECT id, t FROM notes, (SELECT 'ह' AS t UNION ALL SELECT 'plain')"
        " WHERE path = 'A.md'",
        "UPDATE notes SET tags = '[\"ह\", \"plain\"]' WHERE path = 'A.md'",
    )
    report = _indexed_again_with_no_new_version(home, vault, directory, versions)
    assert (report.changed, report.unchanged) == (1, 1)
    with IndexView(directory) as view:
        assert view.note("A.md")["tags"] == ["हिन्दी", "🌱/seedling", "plain"]
