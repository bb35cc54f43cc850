"""Reading notes back: by path, title or alias; sections; links; and never outside the vault."""

from __future__ import annotations

import json
import os
import re
import shlex
import unicodedata
from pathlib import Path

import pytest
from click.testing import CliRunner
from conftest import FakeEmbedder, write
from index_helpers import index_into

from brain import config
from brain.cli import cli
from brain.index.store import IndexStore
from brain.reading import NoteNotFound, OutsideVault, find_note, headings, neighbours, read_note


@pytest.fixture
def indexed(toy_vault):
    index_into(Path(os.environ["BRAIN_HOME"]), toy_vault, FakeEmbedder())
    store = IndexStore.open(config.index_dir(toy_vault), create=False)
    yield toy_vault.resolve(), store
    store.close()


@pytest.mark.parametrize(
    "ref, path",
    [
        ("AI/Graph RAG.md", "AI/Graph RAG.md"),
        ("AI/Graph RAG", "AI/Graph RAG.md"),
        ("ai/graph rag", "AI/Graph RAG.md"),  # Obsidian ignores case
        ("Graph RAG", "AI/Graph RAG.md"),  # file name
        ("GraphRAG", "AI/Graph RAG.md"),  # alias
        ("Graph-based retrieval", "AI/Graph RAG.md"),
        ("AI\\Graph RAG.md", "AI/Graph RAG.md"),
        ("./AI/Graph RAG.md", "AI/Graph RAG.md"),  # as a shell completes it: was "no note"
        ("././/AI/Graph RAG", "AI/Graph RAG.md"),
        (".\\AI\\Graph RAG.md", "AI/Graph RAG.md"),
    ],
)
def test_a_note_is_found_by_path_title_or_alias(indexed, ref, path):
    _, store = indexed
    assert find_note(store, ref) == path


def test_an_unknown_note_suggests_near_names(indexed):
    _, store = indexed
    with pytest.raises(NoteNotFound, match="did you mean 'Graph RAG'"):
        find_note(store, "Grpah RAG")


@pytest.mark.parametrize(
    "ref",
    [
        "/etc/passwd",
        "../outside.md",
        "AI/../../outside",
        "..",
        "~/.ssh/id_rsa",
        "C:\\Windows\\win.ini",
        "\\\\server\\share\\x.md",
        "AI/Graph RAG.md\0.txt",
    ],
)
def test_references_outside_the_vault_are_refused(indexed, ref):
    root, store = indexed
    with pytest.raises(OutsideVault):
        read_note(store, root, ref)


@pytest.fixture
def linked_in(tmp_path, toy_vault):
    """The toy vault with a note and a folder kept elsewhere linked in, indexed."""
    secret = tmp_path / "secret.md"
    secret.write_text("# Secret\n\nKept elsewhere.\n", encoding="utf-8")
    (toy_vault / "Leak.md").symlink_to(secret)
    write(tmp_path / "elsewhere", "Inner.md", "# Inner\n\nAlso kept elsewhere. [[Home]]\n")
    (toy_vault / "Linked").symlink_to(tmp_path / "elsewhere", target_is_directory=True)
    index_into(Path(os.environ["BRAIN_HOME"]), toy_vault, FakeEmbedder())
    store = IndexStore.open(config.index_dir(toy_vault), create=False)
    yield toy_vault.resolve(), store
    store.close()


def test_a_note_the_walk_reaches_through_a_symlink_out_of_the_vault_is_read(linked_in):
    """Search shows such a note (the walk indexes it): reading it by its vault path was refused
    ("leads outside the vault"), the agent told of a note it could not open."""
    root, store = linked_in
    assert {"Leak.md", "Linked/Inner.md"} <= store.note_paths()
    assert "Kept elsewhere." in read_note(store, root, "Leak")["text"]
    for ref in ("Linked/Inner.md", "Inner"):
        found = read_note(store, root, ref)
        assert found["path"] == "Linked/Inner.md" and "Also kept elsewhere." in found["text"]
    for args in (["note", "Linked/Inner"], ["neighbours", "Linked/Inner"]):
        result = CliRunner().invoke(cli, [*args, "--vault", str(root)])
        assert result.exit_code == 0, result.output
    assert "Also kept elsewhere." in CliRunner().invoke(cli, ["note", "Inner", "--vault", str(root)]).output


def _fifo(path: Path) -> Path:
    os.mkfifo(path)
    return path


@pytest.mark.skipif(not hasattr(os, "mkfifo"), reason="no FIFOs")
@pytest.mark.parametrize(
    "name, make, refusal",
    [
        # a note made a link out of the vault to a file that is no note, a FIFO, a folder
        ("Leak.md", lambda tmp, root: tmp / "id_rsa", (OutsideVault, r"outside the vault .*\(not-a-note\)")),
        ("Leak.md", lambda tmp, root: Path(os.devnull), (OutsideVault, r"\(not-a-file\)")),
        ("Leak.md", lambda tmp, root: _fifo(tmp / "fifo.md"), (OutsideVault, r"\(not-a-file\)")),
        ("Leak.md", lambda tmp, root: tmp / "elsewhere", (OutsideVault, r"\(not-a-file\)")),
        # ... or to a file in the vault that is no note
        ("Leak.md", lambda tmp, root: root / "Daily" / "notes.txt", (NoteNotFound, r"leads to Daily/notes.txt")),
        # the linked folder re-pointed into a dot-folder
        ("Linked", lambda tmp, root: root / ".trash", (NoteNotFound, r"leads to \.trash/Inner.md.*\(dot-folder\)")),
    ],
)
def test_a_link_changed_since_indexing_to_where_the_walk_does_not_go_is_refused(
    linked_in, tmp_path, name, make, refusal
):
    """Until the next pass the index still has the note; reading it must not show what the walk
    would not index there now, and the refusal does not name where a link out leads."""
    root, store = linked_in
    (tmp_path / "id_rsa").write_text("PRIVATE KEY HIDDEN", encoding="utf-8")
    (root / "Daily" / "notes.txt").write_text("HIDDEN text, no note", encoding="utf-8")
    (root / ".trash" / "Inner.md").write_text("HIDDEN in the trash", encoding="utf-8")
    target = make(tmp_path, root)
    (root / name).unlink()
    (root / name).symlink_to(target)
    kind, message = refusal
    ref = "Leak.md" if name == "Leak.md" else "Linked/Inner.md"
    with pytest.raises(kind, match=message) as caught:
        read_note(store, root, ref)
    assert "HIDDEN" not in str(caught.value) and str(tmp_path) not in str(caught.value)


def test_a_linked_folder_brainignored_since_it_was_indexed_is_not_read(linked_in):
    root, store = linked_in
    (root / ".brainignore").write_text("Linked/\n", encoding="utf-8")
    with pytest.raises(NoteNotFound, match=r"brain now leaves Linked/Inner.md out \(brainignore\)"):
        read_note(store, root, "Linked/Inner.md")


def test_a_note_swapped_for_a_binary_file_since_it_was_indexed_is_not_read(indexed):
    root, store = indexed
    (root / "Home.md").write_bytes(b"\x7fELF\x02\x01\x01\x00\x00\x00\x00\x00\x02\x00>\x00HIDDEN" * 20)
    with pytest.raises(NoteNotFound, match="no longer a text note") as caught:
        read_note(store, root, "Home.md")
    assert "HIDDEN" not in str(caught.value)


@pytest.mark.parametrize("target", [".trash/deleted note.md", "Templates/Daily template.md"])
def test_a_note_that_became_a_link_to_a_note_left_out_is_refused(indexed, target):
    """The index has Home.md; the file is now a link into a dot-folder or a .brainignored one:
    until the next pass, reading it must not show what the walk leaves out."""
    root, store = indexed
    secret = "HIDDEN_TEXT"
    with open(root / target, "a", encoding="utf-8") as f:
        f.write(secret)
    (root / "Home.md").unlink()
    (root / "Home.md").symlink_to(root / target)
    with pytest.raises(NoteNotFound, match="brain now leaves out") as caught:
        read_note(store, root, "Home.md")
    assert secret not in str(caught.value)


def test_a_note_brainignored_since_it_was_indexed_is_not_read(indexed):
    root, store = indexed
    (root / ".brainignore").write_text("Home.md\n", encoding="utf-8")
    with pytest.raises(NoteNotFound, match=r"brain now leaves Home.md out \(brainignore\)"):
        read_note(store, root, "Home.md")


def test_ignored_and_dot_folder_notes_cannot_be_read(indexed):
    root, store = indexed
    assert (root / ".trash" / "deleted note.md").exists() and (root / "Templates").is_dir()
    for ref in (".trash/deleted note.md", "deleted note", "Templates/Daily template.md"):
        with pytest.raises(NoteNotFound):
            read_note(store, root, ref)


def _unblock(fifo: Path) -> None:
    """Let a read that waits on ``fifo`` end (a writer that opens and closes it)."""
    try:
        os.close(os.open(fifo, os.O_WRONLY | os.O_NONBLOCK))
    except OSError:
        pass


def test_a_note_swapped_for_a_fifo_is_refused_not_waited_on(indexed):
    # A FIFO named like an indexed note: opening it waited for a writer for good, and in
    # brain serve and brain mcp every call queued behind it.
    import threading

    root, _ = indexed
    fifo = root / "Home.md"
    fifo.unlink()
    os.mkfifo(fifo)
    outcome: list[BaseException | dict] = []

    def read() -> None:
        store = IndexStore.open(config.index_dir(root), create=False)  # the thread's own connection
        try:
            outcome.append(read_note(store, root, "Home.md"))
        except BaseException as exc:  # what the caller would see
            outcome.append(exc)
        finally:
            store.close()

    reader = threading.Thread(target=read, daemon=True)
    reader.start()
    reader.join(5)
    finished = not reader.is_alive()
    _unblock(fifo)
    reader.join(5)
    assert finished, "read_note waited on a FIFO"
    assert isinstance(outcome[0], NoteNotFound)
    assert "Home.md is in the index but is no longer a regular file" in str(outcome[0])


def test_read_note_gives_text_frontmatter_and_sections(indexed):
    root, store = indexed
    note = read_note(store, root, "GraphRAG")
    assert note["path"] == "AI/Graph RAG.md" and note["title"] == "Graph RAG"
    assert note["frontmatter"]["aliases"] == ["GraphRAG", "Graph-based retrieval"]
    assert not note["text"].startswith("---") and "# Graph RAG" in note["text"]
    assert "Graph RAG > Microsoft's GraphRAG" in note["headings"]
    section = read_note(store, root, "GraphRAG", heading="Microsoft's GraphRAG")
    assert (
        section["text"].startswith("## Microsoft's GraphRAG")
        and section["heading"] == "Graph RAG > Microsoft's GraphRAG"
    )
    assert "##" not in section["text"][3:]  # stops at the next heading of its level
    assert read_note(store, root, "GraphRAG", heading="graph rag > microsoft's graphrag")["text"] == section["text"]
    with pytest.raises(NoteNotFound, match="no heading 'Nope'"):
        read_note(store, root, "GraphRAG", heading="Nope")
    cut = read_note(store, root, "GraphRAG", max_chars=200)
    assert cut["truncated"] and len(cut["text"]) == 200 and cut["chars"] > 200


def test_a_note_over_the_limit_says_the_limit_as_set(indexed, monkeypatch):
    # BRAIN_MAX_NOTE_MB=0.5 said "over the 0 MB limit"; 1e13 was an OverflowError traceback.
    root, _ = indexed
    write(root, "Big.md", "# Big\n\n" + "word " * 150_000)  # 0.7 MB: indexed under the default 10
    index_into(Path(os.environ["BRAIN_HOME"]), root, FakeEmbedder())
    monkeypatch.setenv("BRAIN_MAX_NOTE_MB", "0.5")
    out = CliRunner().invoke(cli, ["note", "--vault", str(root), "Big.md"])
    assert out.exit_code == 1 and out.output.count("\n") == 1, out.output
    assert "Big.md is over the 0.5 MB limit (BRAIN_MAX_NOTE_MB)" in out.output
    for huge in ("1e13", "99999999999999999999999"):
        monkeypatch.setenv("BRAIN_MAX_NOTE_MB", huge)
        out = CliRunner().invoke(cli, ["note", "--vault", str(root), "Home"])
        assert out.exit_code == 1 and isinstance(out.exception, SystemExit), out.output
        assert out.output == f"Error: BRAIN_MAX_NOTE_MB must be a number above 0 and at most 1024, not {huge!r}\n"


def test_headings_inside_code_fences_are_not_sections():
    body = "# Top\n\ntext\n\n```md\n# not a heading\n```\n\n## Sub\n\nmore\n\n# Next\n"
    found = headings(body)
    assert [h["path"] for h in found] == ["Top", "Top > Sub", "Next"]
    assert found[0]["end"] == found[2]["line"]


def test_a_heading_inside_an_html_comment_is_no_section_as_it_is_no_chunk_heading():
    # chunking reads no heading inside an HTML comment (Obsidian hides the comment): brain note's
    # headings did, listing "Draft" and ending the "Plan" section inside the comment, so
    # `brain note X --heading Plan` lost what followed it.
    body = "# Plan\n\nThe plan.\n\n<!--\n# Draft\nold ideas\n-->\n\nAfter the comment.\n\n# Next\n"
    found = headings(body)
    assert [h["path"] for h in found] == ["Plan", "Next"]
    lines = body.split("\n")
    assert "After the comment." in "\n".join(lines[found[0]["line"] : found[0]["end"]])
    # a heading the comment only follows is one, without the comment; one in code stays one
    assert [h["path"] for h in headings("# H <!-- c -->\n\n```html\n<!--\n```\n\n# After code\n")] == [
        "H",
        "After code",
    ]


def test_neighbours_lists_links_and_backlinks(indexed):
    _, store = indexed
    data = neighbours(store, "Graph RAG")
    targets = {link["path"] for link in data["links"] if link["path"]}
    assert {"AI/Agent memory.md", "Home.md"} <= targets
    anchored = [link for link in data["links"] if link["anchor"]]
    assert anchored and anchored[0]["target"].startswith("Chunking strategies")
    back = {(b["path"], b["kind"]) for b in data["backlinks"]}
    assert ("Daily/2026-03-14.md", "embed") in back and ("Home.md", "wikilink") in back


def test_note_and_neighbours_commands(indexed):
    root, _ = indexed
    out = CliRunner().invoke(cli, ["note", "--vault", str(root), "GraphRAG", "--json"])
    assert out.exit_code == 0 and json.loads(out.output)["path"] == "AI/Graph RAG.md"
    out = CliRunner().invoke(cli, ["note", "--vault", str(root), "GraphRAG"])
    assert out.output.startswith("Graph RAG  (AI/Graph RAG.md)\n\n# Graph RAG")
    out = CliRunner().invoke(cli, ["note", "--vault", str(root), "/etc/passwd"])
    assert out.exit_code == 1 and "absolute path" in out.output and "Traceback" not in out.output
    out = CliRunner().invoke(cli, ["neighbours", "--vault", str(root), "Graph RAG"])
    assert out.exit_code == 0 and "← Daily/2026-03-14.md #^one-hop  (embed)" in out.output
    out = CliRunner().invoke(cli, ["neighbours", "--vault", str(root), "--json", "Graph RAG"])
    assert json.loads(out.output)["title"] == "Graph RAG"


@pytest.mark.parametrize("name", ["", "  ", "\t"])
def test_an_empty_note_name_is_refused_in_the_same_line_by_every_command(indexed, name):
    """`brain note ""` said "no note '' in the index (by path, title or alias)" and `brain
    history ""` "name a note: …": one refusal, worded once (the MCP tools say it too)."""
    root, _ = indexed
    said = set()
    for command in ("note", "neighbours", "history"):
        out = CliRunner().invoke(cli, [command, "--vault", str(root), name])
        assert out.exit_code == 1 and out.output.count("\n") == 1, (command, out.output)
        said.add(out.output)
    assert said == {"Error: an empty name names no note: give a note's path, title or alias, e.g. 'Rollout plan'\n"}


@pytest.mark.parametrize(
    "name, typed",
    [("kafka retries", '"kafka retries"'), ("it's here", '"it\'s here"'), ('say "$HOME"', "'say \"$HOME\"'")],
)
def test_a_name_no_note_answers_to_says_how_to_find_the_note(indexed, name, typed):
    """`brain note "kafka retries"` said "no note … in the index" and stopped there, nothing near
    to suggest: a new user typing a topic, not a title, is told how to search for it, in a line
    the shell takes as typed."""
    root, _ = indexed
    for command in ("note", "neighbours"):
        out = CliRunner().invoke(cli, [command, "--vault", str(root), name])
        assert out.exit_code == 1 and out.output.count("\n") == 1, (command, out.output)
        assert out.output.endswith(
            f" in the index (by path, title or alias): `brain ask {typed}` finds notes by what they say\n"
        )
        assert shlex.split(typed) == [name]
    for pasted in ("x" * 5000, "line one\nline two", "invoice\u202etxt"):  # the name is not said twice
        out = CliRunner().invoke(cli, ["note", "--vault", str(root), pasted])
        assert out.exit_code == 1 and out.output.count("\n") == 1, out.output
        assert out.output.endswith(": `brain ask` finds notes by what they say\n") and len(out.output) < 300
    out = CliRunner().invoke(cli, ["note", "--vault", str(root), "Grpah RAG"])  # a near name: that suggestion alone
    assert out.exit_code == 1 and out.output.endswith("; did you mean 'Graph RAG'?\n") and "brain ask" not in out.output


@pytest.mark.parametrize("past", [[], ["--as-of", "now"]])
def test_history_of_a_name_no_note_answers_to_says_how_to_find_it_at_any_moment(indexed, past):
    """`brain history "kafka retries"` ended with how to search for it, but with --as-of (the
    timeline's lookup at a moment) it stopped at "no note …": the same line with or without; and
    a near name was suggested by `brain note` alone."""
    root, _ = indexed
    out = CliRunner().invoke(cli, ["history", "--vault", str(root), "kafka retries", *past])
    assert out.exit_code == 1 and out.output.count("\n") == 1, out.output
    assert out.output == (
        "Error: no note 'kafka retries' in this index or its history (a path, title, file name or alias): "
        '`brain ask "kafka retries"` finds notes by what they say\n'
    )
    # a near name: that suggestion alone, as `brain note` makes it (it made none)
    out = CliRunner().invoke(cli, ["history", "--vault", str(root), "Grpah RAG", *past])
    assert out.output == (
        "Error: no note 'Grpah RAG' in this index or its history (a path, title, file name or alias); "
        "did you mean 'Graph RAG'?\n"
    )


def test_the_search_suggested_for_a_name_that_begins_with_a_dash_runs(indexed):
    """`brain note -- "-retries in kafka"`: the suggested `brain ask "-retries in kafka"` was
    read by brain ask as an option it does not know. The suggestion ends the options first."""
    root, _ = indexed
    name = "-retries in kafka"
    out = CliRunner().invoke(cli, ["note", "--vault", str(root), "--", name])
    assert out.exit_code == 1 and out.output.count("\n") == 1, out.output
    suggested = re.search(r"`(brain ask [^`]*)` finds notes by what they say", out.output)
    assert suggested, out.output
    words = shlex.split(suggested.group(1))
    asked = CliRunner().invoke(cli, [*words[1:2], "--vault", str(root), *words[2:]])
    assert asked.exit_code == 0, asked.output


def test_neighbours_shows_a_link_written_many_times_once_with_its_count(toy_vault):
    # A generated note linking [[Home]] 5,000 times printed 5,000 identical lines.
    write(toy_vault, "Log.md", "# Log\n\n" + "".join(f"entry {i} [[Home]]\n" for i in range(5000)) + "[[Ghost]]\n")
    index_into(Path(os.environ["BRAIN_HOME"]), toy_vault, FakeEmbedder())
    out = CliRunner().invoke(cli, ["neighbours", "--vault", str(toy_vault), "Log"])
    assert out.exit_code == 0, out.output
    assert out.output.splitlines()[2:5] == ["links (5001):", "  → [[Home]]  Home.md  ×5000", "  → [[Ghost]]  dangling"]
    out = CliRunner().invoke(cli, ["neighbours", "--vault", str(toy_vault), "--json", "Log"])
    assert len(json.loads(out.output)["links"]) == 5001  # --json: every link as written


def test_neighbours_backlinks_from_one_note_to_two_anchors_say_which(toy_vault):
    # [[Graph RAG#Why graphs]] and [[Graph RAG#^b]] from one note printed "← Refs.md" twice.
    write(toy_vault, "Refs.md", "# Refs\n\n[[Graph RAG#Why graphs]] and [[Graph RAG#^b]] and [[Graph RAG]]\n")
    index_into(Path(os.environ["BRAIN_HOME"]), toy_vault, FakeEmbedder())
    out = CliRunner().invoke(cli, ["neighbours", "--vault", str(toy_vault), "Graph RAG"])
    assert out.exit_code == 0, out.output
    refs = [line for line in out.output.splitlines() if "Refs.md" in line]
    assert sorted(refs) == ["  ← Refs.md", "  ← Refs.md #Why graphs", "  ← Refs.md #^b"]


def test_a_wikilink_pasted_as_the_note_names_its_target(indexed):
    # `brain note "[[Graph RAG#Why|graphs]]"` (copied from a note) was "no note '[[Graph RAG#Why|graphs]]'".
    root, store = indexed
    for pasted in ("[[Graph RAG]]", "[[Graph RAG#Why graphs|shown]]", "![[AI/Graph RAG]]", " [[graph rag|x]] "):
        assert find_note(store, pasted) == "AI/Graph RAG.md"
        for command in ("note", "neighbours", "history"):
            out = CliRunner().invoke(cli, [command, "--vault", str(root), pasted])
            assert out.exit_code == 0 and "AI/Graph RAG.md" in out.output.splitlines()[0], (command, out.output)
    for not_one in ("[[Graph RAG]] and [[Home]]", "[[No such note#x|y]]"):
        with pytest.raises(NoteNotFound, match=re.escape(repr(not_one))):  # the error names what was typed
            find_note(store, not_one)


def _index_notes(tmp_path: Path, notes: dict[str, str]) -> tuple[Path, IndexStore]:
    root = tmp_path / "v"
    for rel, text in notes.items():
        write(root, rel, text)
    index_into(Path(os.environ["BRAIN_HOME"]), root, FakeEmbedder())
    return root.resolve(), IndexStore.open(config.index_dir(root), create=False)


def test_a_name_spelled_as_typed_wins_over_one_equal_ignoring_case_or_form(tmp_path):
    # `brain note idea` printed Notes/Idea.md beside Notes/idea.md, and a composed Noël the
    # decomposed file: link resolution folds case and form, and picks the first by path.
    composed, decomposed = "Noël", unicodedata.normalize("NFD", "Noël")
    root, store = _index_notes(
        tmp_path,
        {
            "Notes/Idea.md": "# Idea A\n\ncontent A\n",
            "Notes/idea.md": "# Idea B\n\ncontent B\n",
            f"People/{composed}.md": "composed\n",
            f"People/{decomposed}.md": "decomposed\n",
        },
    )
    try:
        assert os.path.exists(root / "People" / f"{decomposed}.md")  # two files, not one (not macOS)
        assert find_note(store, "idea") == "Notes/idea.md"
        assert find_note(store, "Idea") == "Notes/Idea.md"
        assert find_note(store, composed) == f"People/{composed}.md"
        assert find_note(store, decomposed) == f"People/{decomposed}.md"
        assert read_note(store, root, "idea")["text"].strip() == "# Idea B\n\ncontent B"
        # spelled as neither: today's pick, and the other named
        for ref in ("IDEA", "notes/IDEA"):
            found = read_note(store, root, ref)
            assert (found["path"], found["ambiguous"]) == ("Notes/Idea.md", ["Notes/idea.md"])
    finally:
        store.close()
    out = CliRunner().invoke(cli, ["note", "--vault", str(root), "idea"])
    assert out.exit_code == 0 and "content B" in out.stdout and out.stderr == ""


def test_two_notes_whose_names_differ_only_in_composition_are_told_apart(tmp_path):
    # `brain note café` said "2 notes are named café: Café.md (shown), Café.md": two names that
    # read as one, the one to give not said (a Linux vault holds both, macOS writes decomposed).
    composed, decomposed = "Café", unicodedata.normalize("NFD", "Café")
    root, store = _index_notes(tmp_path, {f"{composed}.md": "composed\n", f"{decomposed}.md": "decomposed\n"})
    store.close()
    assert os.path.exists(root / f"{decomposed}.md")  # two files, not one (not macOS)
    out = CliRunner().invoke(cli, ["note", "--vault", str(root), "café"])
    assert out.exit_code == 0
    assert out.stderr == (
        f"2 notes are named café: {decomposed}.md [decomposed] (shown), {composed}.md [composed]; give the path\n"
    )
    out = CliRunner().invoke(cli, ["note", "--vault", str(root), "Cafe"])
    assert out.exit_code == 1
    assert f"did you mean '{decomposed}' [decomposed], '{composed}' [composed]?" in out.stderr
    out = CliRunner().invoke(cli, ["note", "--vault", str(root), composed])  # as typed: one note, nothing said
    assert out.exit_code == 0 and out.stderr == "" and "composed" in out.stdout


def test_a_name_several_notes_share_is_shown_and_said(tmp_path):
    root, store = _index_notes(
        tmp_path,
        {
            "People/Alice.md": "# Alice\n\npeople\n",
            "Work/Alice.md": "# Alice\n\nwork\n",
            "A.md": "---\naliases: [Shared]\n---\n# A\n",
            "B.md": "---\naliases: [Shared]\n---\n# B\n",
        },
    )
    try:
        for ref, path, others in [
            ("Alice", "Work/Alice.md", ["People/Alice.md"]),  # the shorter path, as Obsidian opens [[Alice]]
            ("Shared", "A.md", ["B.md"]),  # an alias two notes share
            ("Work/Alice", "Work/Alice.md", []),  # a path names one
            ("A", "A.md", []),
        ]:
            found = read_note(store, root, ref)
            assert (found["path"], found["ambiguous"]) == (path, others), ref
            assert neighbours(store, ref)["ambiguous"] == others
    finally:
        store.close()
    said = "2 notes are named Alice: Work/Alice.md (shown), People/Alice.md; give the path\n"
    out = CliRunner().invoke(cli, ["note", "--vault", str(root), "Alice"])
    assert out.exit_code == 0 and out.stderr == said and "work" in out.stdout
    out = CliRunner().invoke(cli, ["note", "--vault", str(root), "--json", "Alice"])
    assert json.loads(out.stdout)["ambiguous"] == ["People/Alice.md"] and out.stderr == said
    out = CliRunner().invoke(cli, ["neighbours", "--vault", str(root), "--json", "Alice"])
    assert json.loads(out.stdout)["ambiguous"] == ["People/Alice.md"] and out.stderr == said
    out = CliRunner().invoke(cli, ["neighbours", "--vault", str(root), "Shared"])
    assert out.stderr == "2 notes are named Shared: A.md (shown), B.md; give the path\n"
    # `brain history` read one of them without a word (and its JSON had no `ambiguous`)
    out = CliRunner().invoke(cli, ["history", "--vault", str(root), "Alice"])
    assert out.exit_code == 0 and out.stderr == said and out.stdout.startswith("Work/Alice.md  (Alice)")
    out = CliRunner().invoke(cli, ["history", "--vault", str(root), "--json", "Alice"])
    assert json.loads(out.stdout)["ambiguous"] == ["People/Alice.md"] and out.stderr == said
    out = CliRunner().invoke(cli, ["history", "--vault", str(root), "People/Alice"])
    assert out.exit_code == 0 and out.stderr == ""


def test_brain_note_prints_a_header_then_the_body_as_its_help_and_the_readme_say(tmp_path, monkeypatch):
    """Not the file as `cat` gives it (the README and --help said so): a header line, then the
    body without frontmatter, \\n line endings, no blank lines around it, escape bytes kept into
    a pipe and shown as their escapes on a terminal."""
    from brain import cli as cli_module

    raw = b"---\r\ntags: [x]\r\n---\r\n\r\n# Esc\r\n\r\nred \x1b[31mtext\x1b[0m \xff end\r\n\r\n"
    root = tmp_path / "v"
    root.mkdir()
    (root / "Esc.md").write_bytes(raw)
    index_into(Path(os.environ["BRAIN_HOME"]), root, FakeEmbedder())
    piped = CliRunner().invoke(cli, ["note", "--vault", str(root), "Esc"])
    assert piped.exit_code == 0, piped.output
    assert piped.stdout == "Esc  (Esc.md)\n\n# Esc\n\nred \x1b[31mtext\x1b[0m \ufffd end\n"
    monkeypatch.setattr(cli_module, "_stdout_is_terminal", lambda: True)
    shown = CliRunner().invoke(cli, ["note", "--vault", str(root), "Esc"])
    assert shown.stdout == "Esc  (Esc.md)\n\n# Esc\n\nred \\x1b[31mtext\\x1b[0m \ufffd end\n"  # shown, not acted on

    said = " ".join(CliRunner().invoke(cli, ["note", "--help"]).stdout.split())
    assert "a header line (the note's title and path), a blank line, then the note's body: its frontmatter" in said
    assert "Into a pipe or a file its escape sequences are kept as they are" in said
    readme = " ".join((Path(__file__).resolve().parents[1] / "README.md").read_text(encoding="utf-8").split())
    assert "as `cat` would" not in readme
    assert (
        "`brain note` prints a header line (the note's title and path), a blank line, then the note's body: "
        "its frontmatter left out, line endings as `\\n`, blank lines at its start and end dropped, bytes that "
        "are not UTF-8 as U+FFFD; into a pipe or a file with its escape sequences as they are" in readme
    )


def test_a_russian_name_typed_with_e_for_yo_finds_its_note(tmp_path):
    # Russian is typed with е for ё: `brain note "Елкин Петр"` said "no note" for *Ёлкин Пётр*,
    # though "ёлкин пётр" (another case) was found; so did `brain history` and `neighbours`.
    root, store = _index_notes(
        tmp_path,
        {
            "Люди/Ёлкин Пётр.md": "---\naliases: [Петя Ёлкин]\n---\nколлега\n",
            "Алёна.md": "аналитик\n",
        },
    )
    try:
        for ref in ("Елкин Петр", "елкин петр", "Люди/Елкин Петр.md", "Петя Елкин", "[[Елкин Петр|Пете]]"):
            assert find_note(store, ref) == "Люди/Ёлкин Пётр.md", ref
        assert find_note(store, unicodedata.normalize("NFD", "Алена")) == "Алёна.md"
        with pytest.raises(NoteNotFound):
            find_note(store, "Елкин")  # a part of a name is still no name
    finally:
        store.close()
    out = CliRunner().invoke(cli, ["history", "--vault", str(root), "Елкин Петр"])
    assert out.exit_code == 0 and "Люди/Ёлкин Пётр.md" in out.stdout


def test_note_help_says_a_note_linked_in_from_elsewhere_is_read(linked_in):
    """`brain note --help` said "symlinks that lead out are refused" while `brain note` reads a
    note in a folder linked in from elsewhere (the test above): a newcomer took the help's word."""
    root, _store = linked_in
    help_text = " ".join(CliRunner().invoke(cli, ["note", "--help"]).output.split())
    assert "symlinks that lead out are refused" not in help_text
    assert "linked in from elsewhere is read" in help_text
    result = CliRunner().invoke(cli, ["note", "Linked/Inner.md", "--vault", str(root)])
    assert result.exit_code == 0 and "Also kept elsewhere." in result.output
    for example in re.findall(r"^\s+(brain note .+)$", CliRunner().invoke(cli, ["note", "--help"]).output, re.M):
        ran = CliRunner().invoke(cli, [*shlex.split(example)[1:], "--vault", str(root)])
        assert ran.exit_code == 0, (example, ran.output)


def test_a_name_typed_loosely_opens_the_note_the_name_typed_exactly_opens(tmp_path):
    # Two notes named Ёлкин: `brain note Ёлкин` took the one a root [[Ёлкин]] opens (Obsidian's
    # shortest path), `brain note Елкин` (е for ё) the shallowest, another note of the same name
    _root, store = _index_notes(
        tmp_path,
        {"Люди/Коллеги/Ёлкин.md": "коллега\n", "Архивные записи/Ёлкин.md": "старое\n"},
    )
    try:
        assert find_note(store, "Ёлкин") == "Люди/Коллеги/Ёлкин.md"
        assert find_note(store, "Елкин") == find_note(store, "Ёлкин")
    finally:
        store.close()
