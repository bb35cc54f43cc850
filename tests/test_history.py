"""Memory over time: versions, past chunks, link history, identity across rename/delete/restore,
and recall over the past (`--as-of`) and over world time (`--valid-at`). Fake embedder throughout."""

from __future__ import annotations

import contextlib
import itertools
import json
import re
import sqlite3
import sys
import time
from pathlib import Path

import pytest
from click.testing import CliRunner
from conftest import write
from index_helpers import IndexView, as_before_m021, history_problems, index_then_moment, open_store

from brain import config
from brain.cli import cli
from brain.errors import BrainError
from brain.index.indexer import index_vault
from brain.recall import past as past_module
from brain.recall.opening import open_recaller
from brain.recall.past import PastIndex
from brain.recall.timeline import note_history
from brain.recall.types import BASE_MODES, RecallSettings

PLAN_V1 = (
    "---\ndate: 2026-01-10\n---\n# Rollout plan\n\nWe roll out in March, region by region, with canary "
    "deployments watched for a day. See [[Canary]] and [[Pager duty]].\n"
)
PLAN_V2 = (
    "---\ndate: 2026-02-02\n---\n# Rollout plan\n\nWe roll out in June, all regions at once, with "
    "blue-green switches. See [[Blue green]] and [[Pager duty]].\n"
)
FILLER = [
    ("Canary.md", "# Canary\n\nCanary releases send a little traffic to the new build first.\n"),
    ("Blue green.md", "# Blue green\n\nTwo production stacks; the switch flips all traffic.\n"),
    ("Pager duty.md", "# Pager duty\n\nWho answers the pager during a rollout: the release captain.\n"),
    ("Bread.md", "# Bread\n\nFlour, water, salt and a starter. Bake at 240 degrees.\n"),
    ("Garden.md", "# Garden\n\nTomatoes need sun; basil likes the same bed.\n"),
]
SETTINGS = RecallSettings(k=10, depth=20, seeds=5, max_new=10, pool=10)


def _ask(root: Path, query: str, mode: str = "hybrid+ppr", **past):
    recaller = open_recaller(root, update=False, **past)
    try:
        return recaller.ask(query, mode, SETTINGS)
    finally:
        recaller.close()


def _paths(result) -> list[str]:
    return [c.path for c in result.results]


def _text_of(result, path: str) -> str:
    return " ".join(c.text for c in result.results if c.path == path)


@pytest.fixture
def timeline(tmp_path):
    """A vault taken through edit, rename, delete and restore, indexed after each step; the
    moments between steps."""
    root = tmp_path / "vault"
    for rel, text in FILLER:
        write(root, rel, text)
    write(root, "Rollout plan.md", PLAN_V1)
    moments = {"created": index_then_moment(root)}
    write(root, "Rollout plan.md", PLAN_V2)
    moments["edited"] = index_then_moment(root)
    (root / "Plans").mkdir()
    (root / "Rollout plan.md").rename(root / "Plans" / "Rollout.md")
    moments["renamed"] = index_then_moment(root)
    (root / "Plans" / "Rollout.md").unlink()
    moments["deleted"] = index_then_moment(root)
    write(root, "Plans/Rollout.md", PLAN_V2)
    moments["restored"] = index_then_moment(root)
    return root, moments


def test_each_step_is_a_version_of_one_note(timeline):
    root, _ = timeline
    store = open_store(root)
    try:
        note_id = store.note_id("Plans/Rollout.md")
        assert note_id is not None
        versions = store.versions_of(note_id)
        assert [(v.event, v.ended, v.path) for v in versions] == [
            ("created", "changed", "Rollout plan.md"),
            ("changed", "renamed", "Rollout plan.md"),
            ("renamed", "deleted", "Plans/Rollout.md"),
            ("restored", None, "Plans/Rollout.md"),
        ]
        for before, after in itertools.pairwise(versions):
            assert before.recorded_to is not None and before.recorded_to <= after.recorded_from
        assert (store.version_bytes(versions[0].id) or b"").decode() == PLAN_V1
        assert versions[0].world_date == "2026-01-10" and versions[-1].world_date == "2026-02-02"
        # The first content's chunks (and vectors) were kept; the restored content is current
        # again, so its chunks are the present ones and no past copy is left.
        past = store.history_chunks_of([note_id])
        assert {digest for _, _, digest in past} == {versions[0].hash}
    finally:
        store.close()


@pytest.mark.parametrize("mode", BASE_MODES)
def test_as_of_each_step_returns_what_was_there(timeline, mode):
    root, at = timeline
    query = "when do we roll out, march or june, canary or blue-green?"

    created = _ask(root, query, mode, as_of=at["created"])
    assert "Rollout plan.md" in _paths(created)
    assert "March" in _text_of(created, "Rollout plan.md") and "June" not in _text_of(created, "Rollout plan.md")

    edited = _ask(root, query, mode, as_of=at["edited"])
    assert "Rollout plan.md" in _paths(edited)
    assert "June" in _text_of(edited, "Rollout plan.md") and "March" not in _text_of(edited, "Rollout plan.md")

    renamed = _ask(root, query, mode, as_of=at["renamed"])
    assert "Plans/Rollout.md" in _paths(renamed) and "Rollout plan.md" not in _paths(renamed)

    deleted = _ask(root, query, mode, as_of=at["deleted"])
    assert not {"Plans/Rollout.md", "Rollout plan.md"} & set(_paths(deleted))
    assert {c.note_id for c in deleted.results} and all(c.text for c in deleted.results)

    restored = _ask(root, query, mode, as_of=at["restored"])
    present = _ask(root, query, mode)
    assert _paths(restored) == _paths(present)
    assert "Plans/Rollout.md" in _paths(present)
    ids = {c.path: c.note_id for r in (created, restored) for c in r.results}
    assert ids["Rollout plan.md"] == ids["Plans/Rollout.md"]  # one note, one identity


def test_history_begins_with_its_first_version_not_when_the_index_was_made(tmp_path, monkeypatch):
    """A first build embeds for a while (21 s on a real vault) before it writes its first
    version: `--as-of` in between found nothing and did not say that nothing was known then."""
    from conftest import FakeEmbedder

    offset = [0.0]
    clock = time.time
    monkeypatch.setattr(time, "time", lambda: clock() + offset[0])

    class Slow(FakeEmbedder):
        def embed_documents(self, texts, *, progress=False):
            offset[0] = 60.0  # a minute of embedding
            return super().embed_documents(texts, progress=progress)

    root = tmp_path / "v"
    write(root, "A.md", "# A\n\nalpha text\n")
    made = time.time()
    index_vault(root, embedder=Slow(), progress=False)
    store = open_store(root)
    try:
        (first,) = store.conn.execute("SELECT min(recorded_from) FROM note_versions").fetchone()
        assert first > made + 59 and float(store.get_meta("history_since")) == first
    finally:
        store.close()
    with pytest.raises(BrainError, match="nothing is known: brain began keeping this vault's history"):
        _ask(root, "alpha", as_of=made + 30)


def test_as_of_before_history_is_an_error_saying_when_it_began(timeline):
    """An empty answer read as "nothing in the notes about it": it is "nothing known then"."""
    root, at = timeline
    with pytest.raises(BrainError, match="nothing is known: brain began keeping this vault's history on"):
        _ask(root, "rollout", as_of=at["created"] - 3600)


def test_as_of_the_second_history_began_says_two_moments_that_differ(timeline):
    """`--as-of` the second history began in, before it began, said "as of 09:00:00 nothing is
    known: brain began keeping this vault's history on 09:00:00"."""
    root, _ = timeline
    store = open_store(root)
    try:
        began = float(store.get_meta("history_since"))
    finally:
        store.close()
    moment = float(int(began)) if began > int(began) else began - 0.001  # in its second, before it
    with pytest.raises(BrainError) as told:
        _ask(root, "rollout", as_of=moment)
    then, _, began_at = str(told.value).removeprefix("as of ").partition(" nothing is known: brain began keeping")
    assert then != began_at.removeprefix(" this vault's history on "), str(told.value)


def test_as_of_a_versions_recorded_from_reads_that_version(tmp_path):
    """MCP's history tool says: read a version with get_note(note, as_of=its recorded_from). Given
    to the second, rounded down, that moment was before the version began: it read the one before,
    the first one "nothing is known", and versions saved within one second had one time."""
    from brain.moments import past_moment
    from brain.recall.timeline import read_note_at

    root = tmp_path / "v"
    for n in range(4):  # indexed one after another: milliseconds apart
        write(root, "Log.md", f"# Log\n\nentry {n}\n")
        index_vault(root, progress=False)
    out = CliRunner().invoke(cli, ["history", "--vault", str(root), "Log", "--json"])
    versions = json.loads(out.output)["versions"]
    assert len(versions) == 4 and len({v["recorded_from"] for v in versions}) == 4
    store = open_store(root)
    try:
        for n, version in enumerate(versions):
            found = read_note_at(store, root, "Log", past_moment(version["recorded_from"]))
            assert found["version"]["recorded_from"] == version["recorded_from"] and f"entry {n}" in found["text"]
    finally:
        store.close()
    asked = _ask(root, "entry", "hybrid", as_of=past_moment(versions[1]["recorded_from"]))
    assert "entry 1" in _text_of(asked, "Log.md")


def test_as_of_lexical_lane_reads_past_text(timeline):
    """'March' and 'canary' are only in the first version's text: BM25 finds them then, not after."""
    root, at = timeline
    then = _ask(root, "march canary region", "hybrid", as_of=at["created"])
    hit = next(c for c in then.results if c.path == "Rollout plan.md")
    assert "lexical" in hit.sources
    later = _ask(root, "march canary region", "hybrid", as_of=at["edited"])
    assert all("lexical" not in c.sources for c in later.results if c.path == "Rollout plan.md")


def test_as_of_graph_reads_the_edges_recorded_then(timeline):
    root, at = timeline

    def targets(moment: float) -> set[str]:
        store = open_store(root)
        past = PastIndex(store, as_of=moment)
        try:
            note = next(n for n, v in past.versions.items() if v.title == "Rollout plan")
            names = past.notes_brief([t for s, t, _ in past.resolved_edges() if s == note])
            return {path for path, _ in names.values()}
        finally:
            past.close()

    assert targets(at["created"]) == {"Canary.md", "Pager duty.md"}
    assert targets(at["edited"]) == {"Blue green.md", "Pager duty.md"}


def test_results_carry_the_versions_dates_in_text_and_json(timeline):
    root, at = timeline
    runner = CliRunner()
    out = runner.invoke(
        cli, ["ask", "--vault", str(root), "--json", "--as-of", time_arg(at["created"]), "march rollout canary"]
    )
    assert out.exit_code == 0, out.output
    data = json.loads(out.output)
    assert data["as_of"].endswith("Z") and data["valid_at"] is None
    plan = next(r for r in data["results"] if r["path"] == "Rollout plan.md")
    assert plan["recorded_from"] and plan["recorded_to"]  # replaced since
    assert plan["date"] == "2026-01-10"
    out = runner.invoke(cli, ["ask", "--vault", str(root), "--as-of", time_arg(at["created"]), "march rollout"])
    assert out.exit_code == 0, out.output
    assert out.output.startswith("as of ")
    assert "dated 2026-01-10 · version " in out.output
    present = json.loads(runner.invoke(cli, ["ask", "--vault", str(root), "--json", "rollout june"]).output)
    plan = next(r for r in present["results"] if r["path"] == "Plans/Rollout.md")
    assert plan["recorded_from"] and plan["recorded_to"] is None and present["as_of"] is None


def time_arg(moment: float) -> str:
    import datetime as dt

    return dt.datetime.fromtimestamp(moment).isoformat(timespec="microseconds")


def test_valid_at_takes_a_date_or_a_date_and_time_and_nothing_after():
    from brain.errors import ConfigError
    from brain.moments import parse_world_date

    for good in ("2026-03-01", " 2026-03-01 ", "2026-03-01T10:00", "2026-03-01 10:00:00+02:00", "2026-03-01T10:00Z"):
        assert parse_world_date(good) == "2026-03-01", good
    for bad in ("2026-03-01junk", "2026-03-01T25:00", "2026-03-01 and more", "2026-3-1", "2026-W54"):
        with pytest.raises(ConfigError, match="--valid-at takes a date \\(2026-03-01\\)"):
            parse_world_date(bad)


def test_valid_at_reads_a_week_and_a_basic_date_as_as_of_does():
    """`--valid-at 2026-W09` was its Monday, 2026-02-23 (Python 3.11's date.fromisoformat; 3.10
    refused it), where `--as-of 2026-W09` is its Sunday: the same day now, whatever the Python."""
    import datetime as dt

    from brain.moments import parse_moment, parse_world_date

    for week in ("2026-W09", "2026w09", "2026-W09-7", "20260301"):
        assert parse_world_date(week) == "2026-03-01", week
        assert dt.date.fromtimestamp(parse_moment(week)).isoformat() == "2026-03-01", week
    assert parse_world_date("2026-W09-1") == "2026-02-23"


@pytest.mark.parametrize("bad", ["yesterday-ish", "2026-13-01", "7 parsecs"])
def test_a_bad_as_of_is_one_line(tmp_path, bad):
    root = tmp_path / "v"
    write(root, "A.md", "# A\n\ntext\n")
    index_vault(root, progress=False)
    for option in ("--as-of", "--valid-at"):
        out = CliRunner().invoke(cli, ["ask", "--vault", str(root), option, bad, "text"])
        assert out.exit_code != 0
        assert option in out.output and "Traceback" not in out.output


# ----- link history ----------------------------------------------------------------------------


def _edges(root: Path, source: str) -> list[tuple[str, float, float | None, str | None]]:
    with IndexView(config.index_dir(root)) as view:
        return [(e.target, e.recorded_from, e.recorded_to, e.status) for e in view.store.edges_from(view.id(source))]


def test_removing_a_link_closes_its_edge_and_bringing_it_back_opens_a_new_one(tmp_path):
    root = tmp_path / "v"
    write(root, "A.md", "# A\n\nSee [[B]] and [[C]].\n")
    write(root, "B.md", "# B\n\nbee\n")
    write(root, "C.md", "# C\n\nsea\n")
    index_then_moment(root)
    before = {target: (opened, closed) for target, opened, closed, _ in _edges(root, "A.md")}
    assert set(before) == {"B", "C"} and all(closed is None for _, closed in before.values())

    write(root, "A.md", "# A\n\nSee [[C]] only.\n")
    index_then_moment(root)
    edges = _edges(root, "A.md")
    b_edges = [e for e in edges if e[0] == "B"]
    assert len(b_edges) == 1 and b_edges[0][2] is not None  # closed, not deleted
    assert [e for e in edges if e[0] == "C"] == [("C", before["C"][0], None, "resolved")]  # untouched

    write(root, "A.md", "# A\n\nSee [[B]] again, and [[C]].\n")
    index_then_moment(root)
    b_edges = [e for e in _edges(root, "A.md") if e[0] == "B"]
    assert len(b_edges) == 2 and b_edges[0][2] is not None and b_edges[1][2] is None
    assert b_edges[1][1] >= b_edges[0][2]


def test_an_edge_follows_its_targets_resolution(tmp_path):
    """A target renamed away leaves the link dangling: the resolved edge closes and a dangling
    one opens; so the graph as of each moment is what it was."""
    root = tmp_path / "v"
    write(root, "A.md", "# A\n\nSee [[B]].\n")
    write(root, "B.md", "# B\n\nbee\n")
    first = index_then_moment(root)
    (root / "B.md").rename(root / "Bee.md")
    second = index_then_moment(root)
    edges = _edges(root, "A.md")
    assert [(t, s) for t, _, _, s in edges] == [("B", "resolved"), ("B", "dangling")]
    store = open_store(root)
    try:
        b = store.note_id("Bee.md")
        assert (store.note_id("A.md"), b, "wikilink", 1) in store.edges_at(first)
        assert not [e for e in store.edges_at(second) if e[1] == b]
    finally:
        store.close()


def _as_before_m029(root: Path) -> None:
    """The index as a brain from before m029 left it: its `[[../Note]]` links, and their edges,
    dangling, and none of the migrations since recorded (an index made then ran none of them)."""
    from brain.migrations import connect

    conn = connect(str(config.index_dir(root) / "index.db"))
    with conn:
        conn.execute("UPDATE links SET target_id = NULL, status = 'dangling' WHERE target LIKE '%./%'")
        conn.execute("UPDATE link_history SET target_id = NULL, status = 'dangling' WHERE target LIKE '%./%'")
        conn.execute("DELETE FROM _migrations WHERE db = 'index' AND name >= 'm029'")
    conn.close()


def _link_life(root: Path, note: str) -> list[tuple[str | None, bool]]:
    """`brain history NOTE`'s links: (the note each went to, None when dangling; still there)."""
    life = json.loads(CliRunner().invoke(cli, ["history", "--vault", str(root), note, "--json"]).output)
    return [(link["path"], link["lost"] is None) for link in life["links"]]


def _targets_as_of(root: Path, note: str, moment: float) -> set[int]:
    """The notes (ids) NOTE's links went to at ``moment`` in the graph `--as-of` reads (``edges_at``)."""
    store = open_store(root)
    try:
        return {e[1] for e in store.edges_at(moment) if e[0] == store.note_id(note)}
    finally:
        store.close()


@pytest.mark.parametrize("names_moved", [False, True], ids=["alone", "beside-a-rename"])
def test_an_upgrade_that_resolves_a_link_otherwise_reads_its_past_by_the_new_rule(tmp_path, names_moved):
    """m029 reads again a note whose `[[../Note]]` an older brain left dangling, and its link
    resolves, where Obsidian always resolved it. The rule changed in brain, not the vault (as
    m037's): the edge's past is read by the new rule, so it goes to the note from the moment it
    was written, and nothing changes at the upgrade run. (Before: the edge was dangling up to
    that run and resolved from it, a link added in `brain history` that no one wrote, and
    `--as-of` before it left the link dangling; before 08280d4a it stayed dangling for good
    unless some note came, went or moved in that run.)"""
    root = tmp_path / "v"
    write(root, "A/Src.md", "# Src\n\nSee [[../Other/Note]], [[./Sib]] and [[../Nowhere]].\n")
    write(root, "A/Sib.md", "# Sib\n\nsib\n")
    write(root, "Other/Note.md", "# Note\n\nnote\n")
    write(root, "Bread.md", "# Bread\n\nflour\n")
    written = index_then_moment(root)
    _as_before_m029(root)
    if names_moved:
        (root / "Bread.md").rename(root / "Loaf.md")
    after = index_then_moment(root)
    store = open_store(root)
    try:
        src, note, sib = (store.note_id(path) for path in ("A/Src.md", "Other/Note.md", "A/Sib.md"))
        assert [(e.target, e.target_id, e.status, e.recorded_to is None) for e in store.edges_from(src)] == [
            ("../Other/Note", note, "resolved", True),
            ("./Sib", sib, "resolved", True),
            ("../Nowhere", None, "dangling", True),
        ]
        assert (src, note, "wikilink", 1) in store.edges_at(written)
        assert (src, note, "wikilink", 1) in store.edges_at(after)
    finally:
        store.close()
    assert _targets_as_of(root, "A/Src.md", written) == {note, sib}
    assert _link_life(root, "A/Src") == [("Other/Note.md", True), ("A/Sib.md", True), (None, True)]
    assert history_problems(config.index_dir(root) / "index.db") == []


@pytest.mark.parametrize("gone", [False, True], ids=["there", "deleted-since"])
def test_an_upgrade_reads_the_past_of_a_link_by_the_notes_then(tmp_path, gone):
    """The past read by the new rule is read by the notes of each moment: a `[[../Other/Note]]`
    written before its note came is dangling until it came, and resolved from then, as Obsidian
    had it (not from the moment it was written, nor from the upgrade); and dangling again from
    when the note was deleted, if it was before the upgrade (the link dangles at the edge's end
    by either rule, yet Obsidian resolved it while the note was there)."""
    root = tmp_path / "v"
    write(root, "A/Src.md", "# Src\n\nSee [[../Other/Note]].\n")
    write(root, "Bread.md", "# Bread\n\nflour\n")
    dangling = index_then_moment(root)
    write(root, "Other/Note.md", "# Note\n\nnote\n")
    came = index_then_moment(root)
    if gone:
        (root / "Other/Note.md").unlink()
        index_then_moment(root)
    db = config.index_dir(root) / "index.db"
    # as a brain from before m029 recorded it: one dangling edge, open
    with contextlib.closing(sqlite3.connect(db)) as conn:
        note, opened, closed = conn.execute(
            "SELECT note_id, recorded_from, recorded_to FROM note_versions WHERE path = 'Other/Note.md'"
        ).fetchone()
        deleted = conn.execute("DELETE FROM link_history WHERE target = '../Other/Note' AND id > 1")
        assert deleted.rowcount == 1 + gone
        conn.execute("UPDATE link_history SET target_id = NULL, status = 'dangling', recorded_to = NULL WHERE id = 1")
        conn.commit()
    _as_before_m029(root)
    index_then_moment(root)
    store = open_store(root)
    try:
        edges = store.edges_from(store.note_id("A/Src.md"))
        assert [(e.target_id, e.status, e.recorded_from, e.recorded_to) for e in edges] == [
            (None, "dangling", edges[0].recorded_from, opened),
            (note, "resolved", opened, closed),
            *([(None, "dangling", closed, None)] if gone else []),
        ]
    finally:
        store.close()
    assert _targets_as_of(root, "A/Src.md", dangling) == set()
    assert _targets_as_of(root, "A/Src.md", came) == {note}
    assert history_problems(db) == []


def test_an_upgrade_reads_a_link_from_its_note_where_the_note_was_then(tmp_path):
    """`[[./Sib]]` is read from its note's folder at each moment: A/Src.md's went to A/Sib.md, and
    dangles since the note moved to B/ (no B/Sib.md). A brain from before m029 had it dangling all
    along; read again, it is resolved up to the move and dangling from it."""
    root = tmp_path / "v"
    write(root, "A/Src.md", "# Src\n\nSee [[./Sib]].\n")
    write(root, "A/Sib.md", "# Sib\n\nsib\n")
    written = index_then_moment(root)
    (root / "B").mkdir()
    (root / "A/Src.md").rename(root / "B/Src.md")
    moved = index_then_moment(root)
    db = config.index_dir(root) / "index.db"
    with contextlib.closing(sqlite3.connect(db)) as conn:
        (sib,) = conn.execute("SELECT id FROM notes WHERE path = 'A/Sib.md'").fetchone()
        (src, at) = conn.execute("SELECT note_id, recorded_from FROM note_versions WHERE path = 'B/Src.md'").fetchone()
        assert conn.execute("DELETE FROM link_history WHERE id > 1").rowcount == 1  # as recorded before m029
        conn.execute("UPDATE link_history SET target_id = NULL, status = 'dangling', recorded_to = NULL WHERE id = 1")
        conn.commit()
    _as_before_m029(root)
    index_then_moment(root)
    store = open_store(root)
    try:
        assert [(e.target_id, e.status, e.recorded_to) for e in store.edges_from(src)] == [
            (sib, "resolved", at),
            (None, "dangling", None),
        ]
    finally:
        store.close()
    assert _targets_as_of(root, "B/Src.md", written) == {sib}
    assert _targets_as_of(root, "B/Src.md", moved) == set()
    assert history_problems(db) == []


def test_an_index_whose_upgrade_recorded_a_link_change_has_it_read_again(tmp_path):
    """An index that ran m029 (or m035, for `[[..\\Note]]`) as released recorded the link it
    resolved as changed at that run: its edge dangling up to it, and another, resolved, from it.
    m038 reads that past again by the rule: one edge, resolved from the moment the link was
    written; a link dangling by the rule too (`[[../Nowhere]]`) is left as it was."""
    from brain.index.linking import reread_link_history

    root = tmp_path / "v"
    write(root, "A/Src.md", "# Src\n\nSee [[..\\Other\\Note]] and [[../Nowhere]].\n")
    write(root, "Other/Note.md", "# Note\n\nnote\n")
    written = index_then_moment(root)
    upgraded = time.time()
    db = config.index_dir(root) / "index.db"
    with contextlib.closing(sqlite3.connect(db)) as conn:  # as that upgrade run left it
        (edge_id, source_id, note_id, start) = conn.execute(
            "SELECT id, source_id, target_id, recorded_from FROM link_history WHERE target_id IS NOT NULL"
        ).fetchone()
        conn.execute(
            "UPDATE link_history SET target_id = NULL, status = 'dangling', recorded_to = ? WHERE id = ?",
            (upgraded, edge_id),
        )
        conn.execute(
            "INSERT INTO link_history (source_id, target, kind, count, target_id, status, recorded_from)"
            " SELECT source_id, target, kind, count, ?, 'resolved', ? FROM link_history WHERE id = ?",
            (note_id, upgraded, edge_id),
        )
        nowhere = conn.execute("SELECT * FROM link_history WHERE target = '../Nowhere'").fetchall()
        conn.execute(
            "DELETE FROM _migrations WHERE db = 'index' AND name = 'm038_link_history_of_wikilinks_from_the_notes_folder'"
        )
        conn.commit()
    assert sorted(_link_life(root, "A/Src"), key=str) == [("Other/Note.md", True), (None, False), (None, True)]
    report = index_vault(root, progress=False)
    assert report.changed == 0
    with contextlib.closing(sqlite3.connect(db)) as conn:
        assert conn.execute(
            "SELECT id, target_id, status, recorded_from, recorded_to FROM link_history WHERE source_id = ?"
            " AND target != '../Nowhere'",
            (source_id,),
        ).fetchall() == [(edge_id, note_id, "resolved", start, None)]
        assert conn.execute("SELECT * FROM link_history WHERE target = '../Nowhere'").fetchall() == nowhere
    assert _targets_as_of(root, "A/Src.md", written) == {note_id}
    assert _link_life(root, "A/Src") == [("Other/Note.md", True), (None, True)]
    assert history_problems(db) == []
    with contextlib.closing(sqlite3.connect(db)) as conn:
        rows = conn.execute("SELECT * FROM link_history").fetchall()
    store = open_store(root)  # read again, it is as it was: m038 is safe to run again
    try:
        with store.transaction():
            assert reread_link_history(store) == 0
        assert [tuple(row) for row in store.conn.execute("SELECT * FROM link_history")] == rows
    finally:
        store.close()


def test_edges_record_the_world_time_their_note_states(tmp_path):
    root = tmp_path / "v"
    write(root, "A.md", "---\ndate: 2025-03-11\nvalid_to: 2025-09-01\nstatus: Superseded\n---\n# A\n\n[[B]]\n")
    write(root, "B.md", "# B\n")
    index_then_moment(root)
    with IndexView(config.index_dir(root)) as view:
        (edge,) = view.store.edges_from(view.id("A.md"))
    assert (edge.world_date, edge.valid_from, edge.valid_to, edge.note_status) == (
        "2025-03-11",
        None,
        "2025-09-01",
        "superseded",
    )


# ----- identity ----------------------------------------------------------------------------------


def test_a_note_recreated_where_a_deleted_one_was_continues_it(tmp_path, closing):
    root = tmp_path / "v"
    write(root, "Ideas.md", "# Ideas\n\nfirst list\n")
    index_then_moment(root)
    first_id = closing(open_store(root)).note_id("Ideas.md")
    (root / "Ideas.md").unlink()
    index_then_moment(root)
    write(root, "Ideas.md", "# Ideas\n\nan entirely new list\n")
    report = index_vault(root, progress=False)
    assert report.new == 1 and report.restored == 1
    store = open_store(root)
    try:
        assert store.note_id("Ideas.md") == first_id
        assert [v.event for v in store.versions_of(first_id)] == ["created", "restored"]
    finally:
        store.close()


def test_empty_notes_are_not_matched_by_content(tmp_path, closing):
    root = tmp_path / "v"
    write(root, "Untitled.md", "")
    index_then_moment(root)
    old = closing(open_store(root)).note_id("Untitled.md")
    (root / "Untitled.md").unlink()
    index_then_moment(root)
    write(root, "Other.md", "")
    index_then_moment(root)
    assert closing(open_store(root)).note_id("Other.md") != old


# ----- keeping versions ---------------------------------------------------------------------------


@pytest.mark.parametrize("keep, past", [("0", 0), ("1", 1), ("all", 3)])
def test_keep_versions_bounds_the_past(tmp_path, monkeypatch, keep, past):
    monkeypatch.setenv("BRAIN_KEEP_VERSIONS", keep)
    root = tmp_path / "v"
    write(root, "B.md", "# B\n")
    for i in range(4):
        write(root, "A.md", f"# A\n\nversion {i} {'word ' * i}[[B]]{' [[C]]' if i % 2 else ''}\n")
        index_then_moment(root)
    (root / "B.md").unlink()
    index_then_moment(root)
    store = open_store(root)
    try:
        a = store.note_id("A.md")
        assert a is not None
        versions = store.versions_of(a)
        assert len(versions) == past + 1 and versions[-1].recorded_to is None
        kept = {v.hash for v in versions[:-1]}
        assert {digest for _, _, digest in store.history_chunks_of([a])} == kept
        oldest = versions[0].recorded_from
        assert all(e.recorded_to is None or e.recorded_to > oldest for e in store.edges_from(a))
        if past == 0:
            assert store.history_counts()["past_chunks"] == 0
    finally:
        store.close()


def test_keep_versions_rejects_nonsense(monkeypatch):
    from brain.errors import ConfigError

    monkeypatch.setenv("BRAIN_KEEP_VERSIONS", "some")
    with pytest.raises(ConfigError, match="BRAIN_KEEP_VERSIONS must be a whole number from 0 to 1000000 or 'all'"):
        config.keep_versions()
    monkeypatch.setenv("BRAIN_KEEP_VERSIONS", "ALL")
    assert config.keep_versions() is None


# ----- consistency --------------------------------------------------------------------------------


def test_the_current_text_is_kept_against_its_chunks_and_a_past_one_plain(timeline):
    """The current version's bytes are compressed against the note's own chunk texts (a few
    dozen bytes, not the whole text again); a version that stops being current (edited,
    renamed, deleted) keeps them plain, before its chunks go. Every text reads back exactly."""
    from brain.index.version_text import compress, needs_dictionary

    root, _ = timeline
    store = open_store(root)
    try:
        note_id = store.note_id("Plans/Rollout.md") or 0
        versions = store.versions_of(note_id)
        blobs = [
            bytes(store.conn.execute("SELECT content FROM note_versions WHERE id = ?", (v.id,)).fetchone()[0])
            for v in versions
        ]
        assert [needs_dictionary(b) for b in blobs] == [False, False, False, True]
        assert [store.version_bytes(v.id) for v in versions] == [PLAN_V1.encode(), *[PLAN_V2.encode()] * 3]
        assert len(blobs[-1]) < len(compress(PLAN_V2.encode())) / 2
        for path, text in FILLER:  # never changed: their first version is current, kept against chunks
            (version,) = store.versions_of(store.note_id(path) or 0)
            assert store.version_bytes(version.id) == text.encode()
    finally:
        store.close()
    # A text that cannot be read back against the chunks is missing, never wrong.
    db = config.index_dir(root) / "index.db"
    conn = sqlite3.connect(db)
    conn.execute("UPDATE chunks SET text = 'other' WHERE note_id = ?", (note_id,))
    conn.commit()
    conn.close()
    store = open_store(root)
    try:
        assert store.version_bytes(versions[-1].id) is None
        assert store.version_bytes(versions[0].id) == PLAN_V1.encode()
    finally:
        store.close()


def test_a_rebuild_keeps_the_old_current_texts_plain_and_the_new_ones_against_its_chunks(timeline):
    """The old index's current texts were kept against its chunks, which a rebuild does not
    carry: they come over plain, and the notes still there are kept against the new chunks."""
    from brain.index.version_text import needs_dictionary

    root, _ = timeline
    write(root, "Canary.md", "# Canary\n\nCanary releases, now with automatic rollback.\n")
    (root / "Garden.md").unlink()
    index_vault(root, rebuild=True, keep_history=True, progress=False)
    assert history_problems(config.index_dir(root) / "index.db") == []
    store = open_store(root)
    try:
        texts = dict(FILLER)
        for path in ("Canary.md", "Garden.md", "Bread.md"):
            note_id = (
                store.note_id(path)
                or next(v for v in store.conn.execute("SELECT note_id FROM note_versions WHERE path = ?", (path,)))[0]
            )
            versions = store.versions_of(note_id)
            assert store.version_bytes(versions[0].id) == texts[path].encode()
            kinds = [
                needs_dictionary(
                    bytes(store.conn.execute("SELECT content FROM note_versions WHERE id = ?", (v.id,)).fetchone()[0])
                )
                for v in versions
            ]
            assert kinds == {"Canary.md": [False, True], "Garden.md": [False], "Bread.md": [True]}[path]
    finally:
        store.close()


def test_an_older_plain_current_text_is_read_and_replaced_when_the_note_is_read_again(timeline):
    """Indexes from before kept every text plain: read as they are; a note parsed again (here
    after an edit and its revert) is kept against its chunks from then on."""
    from brain.index.version_text import compress, needs_dictionary

    root, _ = timeline
    db = config.index_dir(root) / "index.db"
    conn = sqlite3.connect(db)
    conn.execute(
        "UPDATE note_versions SET content = ? WHERE recorded_to IS NULL AND path = 'Bread.md'",
        (compress(dict(FILLER)["Bread.md"].encode()),),
    )
    conn.commit()
    conn.close()
    assert history_problems(db) == []
    out = CliRunner().invoke(cli, ["history", "--vault", str(root), "Bread", "--json"])
    assert out.exit_code == 0, out.output
    write(root, "Bread.md", "# Bread\n\nFlour, water, salt and a starter. Bake at 250 degrees.\n")
    index_vault(root, progress=False)
    assert history_problems(db) == []
    store = open_store(root)
    try:
        versions = store.versions_of(store.note_id("Bread.md") or 0)
        assert store.version_bytes(versions[0].id) == dict(FILLER)["Bread.md"].encode()
        last = store.conn.execute("SELECT content FROM note_versions WHERE id = ?", (versions[-1].id,)).fetchone()
        assert needs_dictionary(bytes(last[0]))
    finally:
        store.close()
    out = CliRunner().invoke(cli, ["history", "--vault", str(root), "Bread", "--json"])
    assert out.exit_code == 0 and "+1" in out.output, out.output


def test_history_stays_consistent_through_the_timeline(timeline):
    root, _ = timeline
    assert history_problems(config.index_dir(root) / "index.db") == []


def test_an_index_from_before_history_starts_it_from_its_present(tmp_path):
    """m007_history on an existing index: every note's current version from its indexed_at,
    every link an open edge; then history goes on from there."""
    from brain.index.schema import INDEX_MIGRATIONS

    root = tmp_path / "v"
    write(root, "A.md", "# A\n\nSee [[B]] and [[B]] and [[Nowhere]].\n")
    write(root, "B.md", "---\nvalid_from: 2024-01-01\n---\n# B\n\nbee\n")
    index_then_moment(root)
    db = config.index_dir(root) / "index.db"
    as_before_m021(db)  # m021 changed chunk_history after m007 and m018 made it
    conn = sqlite3.connect(db)
    conn.executescript(
        "DROP TABLE note_versions; DROP TABLE chunk_history_fts; DROP TABLE chunk_history; DROP TABLE link_history;"
        " DROP TABLE version_chunks; DELETE FROM meta WHERE key = 'history_since';"
        " DELETE FROM _migrations WHERE name IN ('m007_history', 'm018_past_chunks_shared');"
    )
    indexed_at = dict(conn.execute("SELECT path, indexed_at FROM notes").fetchall())
    conn.close()
    store = open_store(root)  # migrates
    try:
        assert INDEX_MIGRATIONS.pending(store.conn) == []
        b = store.current_version(store.note_id("B.md") or 0)
        assert b is not None and (b.event, b.recorded_from, b.valid_from) == (
            "recorded",
            indexed_at["B.md"],
            "2024-01-01",
        )
        assert not b.has_content
        edges = store.edges_from(store.note_id("A.md") or 0)
        assert sorted((e.target, e.count, e.status) for e in edges) == [
            ("B", 2, "resolved"),
            ("Nowhere", 1, "dangling"),
        ]
        assert float(store.get_meta("history_since") or 0) == min(indexed_at.values())
    finally:
        store.close()
    assert history_problems(db) == []
    write(root, "B.md", "# B\n\nbee, edited\n")
    index_then_moment(root)
    assert history_problems(db) == []


# ----- world time: --valid-at --------------------------------------------------------------------


@pytest.fixture
def decisions(tmp_path):
    root = tmp_path / "v"
    write(
        root,
        "ADR-1 RabbitMQ.md",
        "---\ndate: 2024-05-01\nstatus: superseded\nsuperseded_by: '[[ADR-2 Kafka]]'\n---\n# ADR-1\n\n"
        "Telemetry goes through a message broker: RabbitMQ.\n",
    )
    write(
        root,
        "ADR-2 Kafka.md",
        "---\ndate: 2025-03-11\nsupersedes: '[[ADR-1 RabbitMQ]]'\n---\n# ADR-2\n\n"
        "Telemetry goes through a message broker: Kafka, replacing [[ADR-1 RabbitMQ]].\n",
    )
    write(
        root,
        "Broker trial.md",
        "---\nvalid_from: 2025-01-01\nvalid_to: 2025-06-30\n---\n# Broker trial\n\nA message broker trial for telemetry.\n",
    )
    write(root, "Broker glossary.md", "# Broker glossary\n\nA message broker moves telemetry between services.\n")
    index_vault(root, progress=False)
    return root


@pytest.mark.parametrize("mode", BASE_MODES)
@pytest.mark.parametrize(
    "day, expected",
    [
        ("2024-12-01", {"ADR-1 RabbitMQ.md", "Broker glossary.md"}),
        ("2025-04-01", {"ADR-2 Kafka.md", "Broker trial.md", "Broker glossary.md"}),
        ("2025-07-01", {"ADR-2 Kafka.md", "Broker glossary.md"}),
    ],
)
def test_valid_at_keeps_the_notes_that_held_that_day(decisions, mode, day, expected):
    result = _ask(decisions, "which message broker carries telemetry?", mode, valid_at=day)
    assert set(_paths(result)) == expected
    assert result.valid_at == day and result.as_of is None


def test_valid_at_and_as_of_combine(decisions):
    before = time.time()
    time.sleep(0.01)
    write(decisions, "ADR-2 Kafka.md", "---\ndate: 2025-03-11\n---\n# ADR-2\n\nKafka, for good.\n")
    index_vault(decisions, progress=False)
    # Then, ADR-2 said it superseded ADR-1: on 2025-04-01 only ADR-2 held. ADR-1 still names its
    # successor now, so the present agrees; but as of before the edit the text was the old one.
    then = _ask(decisions, "which message broker carries telemetry?", "vector", as_of=before, valid_at="2025-04-01")
    assert "ADR-1 RabbitMQ.md" not in _paths(then)
    assert "replacing" in _text_of(then, "ADR-2 Kafka.md")


def test_valid_at_text_output_says_what_it_filtered(decisions):
    out = CliRunner().invoke(cli, ["ask", "--vault", str(decisions), "--valid-at", "2024-12-01", "message broker"])
    assert out.exit_code == 0, out.output
    assert out.output.startswith("valid at 2024-12-01: ")
    assert "ADR-2" not in out.output and "dated 2024-05-01" in out.output


# ----- brain history, brain status, brain prune ------------------------------------------------------


def test_brain_history_tells_a_notes_life(timeline):
    root, _ = timeline
    runner = CliRunner()
    out = runner.invoke(cli, ["history", "--vault", str(root), "Rollout plan", "--json"])
    assert out.exit_code == 0, out.output
    data = json.loads(out.output)
    assert data["path"] == "Plans/Rollout.md" and data["current"] is True
    assert [(v["event"], v["ended"]) for v in data["versions"]] == [
        ("created", "changed"),
        ("changed", "renamed"),
        ("renamed", "deleted"),
        ("restored", None),
    ]
    assert data["versions"][1]["changes"].startswith("+1 −1 lines; sections: Rollout plan; frontmatter: date")
    assert data["versions"][2]["changes"] == "same content; moved from Rollout plan.md"
    assert data["versions"][3]["changes"].startswith("back after being deleted; same content")
    links = {(s["target"], s["lost"] is None) for s in data["links"]}
    assert ("Canary", False) in links and ("Blue green", True) in links and ("Pager duty", True) in links
    canary = next(s for s in data["links"] if s["target"] == "Canary")
    assert canary["path"] == "Canary.md" and canary["gained"] <= canary["lost"]
    pager = [s for s in data["links"] if s["target"] == "Pager duty"]
    assert len(pager) == 2  # closed by the delete, opened again by the restore
    text = runner.invoke(cli, ["history", "--vault", str(root), "Plans/Rollout"]).output
    assert "Plans/Rollout.md  (Rollout)  note " in text
    for word in ("created", "changed", "renamed", "deleted", "restored", "− [[Canary]] → Canary.md"):
        assert word in text, word


def test_brain_history_json_says_text_kept_as_a_boolean(timeline):
    root, _ = timeline
    out = CliRunner().invoke(cli, ["history", "--vault", str(root), "Rollout plan", "--json"])
    assert out.exit_code == 0, out.output
    # the README's schema: a boolean, as a script in any language compares it (1 is no `true`)
    assert '"text_kept": true' in out.output and '"text_kept": 1' not in out.output
    assert all(v["text_kept"] is True for v in json.loads(out.output)["versions"])


def test_brain_history_lists_the_newest_versions_for_a_person_and_says_how_many_more(tmp_path):
    root = tmp_path / "v"
    for i in range(23):  # a daily log: 23 versions
        write(root, "Log.md", "# Log\n\n" + "".join(f"- day {d}\n" for d in range(i + 1)))
        index_then_moment(root)
    runner = CliRunner()

    def listed(*args: str) -> str:
        out = runner.invoke(cli, ["history", "--vault", str(root), "Log", *args])
        assert out.exit_code == 0, out.output
        return out.output

    text = listed()
    assert text.count("  changed  ") == 20 and "created" not in text  # the newest 20 of 22 changes
    assert "… 3 earlier (`--last 0` lists every version)" in text
    assert listed("--last", "0").count("  changed  ") == 22 and "created" in listed("--last", "0")
    assert listed("--last", "2").count("  changed  ") == 2 and "… 21 earlier" in listed("--last", "2")
    every = json.loads(listed("--json"))  # a machine gets every version unless it asks for fewer
    assert len(every["versions"]) == 23 and every["earlier_versions"] == 0
    few = json.loads(listed("--json", "--last", "3"))
    assert [v["event"] for v in few["versions"]] == ["changed"] * 3 and few["earlier_versions"] == 20
    assert few["versions"] == every["versions"][-3:]
    bad = runner.invoke(cli, ["history", "--vault", str(root), "Log", "--last", "-1"])
    assert bad.exit_code == 2 and "Traceback" not in bad.output


def test_brain_history_finds_a_deleted_note_and_says_no_for_none(tmp_path):
    root = tmp_path / "v"
    write(root, "Old idea.md", "# Old idea\n\n[[Gone]]\n")
    write(root, "Other.md", "# Other\n")
    index_then_moment(root)
    (root / "Old idea.md").unlink()
    index_then_moment(root)
    runner = CliRunner()
    data = json.loads(runner.invoke(cli, ["history", "--vault", str(root), "old idea", "--json"]).output)
    assert data["current"] is False and data["versions"][-1]["ended"] == "deleted"
    out = runner.invoke(cli, ["history", "--vault", str(root), "Never was"])
    assert out.exit_code == 1 and "no note 'Never was' in this index or its history" in out.output


def test_brain_history_shows_the_supersession_chain(decisions):
    runner = CliRunner()
    old = json.loads(runner.invoke(cli, ["history", "--vault", str(decisions), "ADR-1 RabbitMQ", "--json"]).output)
    assert [e["path"] for e in old["replaced_by"]] == ["ADR-2 Kafka.md"] and old["replaces"] == []
    new = json.loads(runner.invoke(cli, ["history", "--vault", str(decisions), "ADR-2 Kafka", "--json"]).output)
    assert [e["path"] for e in new["replaces"]] == ["ADR-1 RabbitMQ.md"]
    # ADR-1's superseded_by: '[[ADR-2 Kafka]]' is a link (a property's), as in Obsidian's backlinks
    assert [(e["path"], e["kind"]) for e in new["backlinks"]] == [("ADR-1 RabbitMQ.md", "property")]
    text = runner.invoke(cli, ["history", "--vault", str(decisions), "ADR-2 Kafka"]).output
    assert "replaces     ADR-1 RabbitMQ  (ADR-1 RabbitMQ.md, dated 2024-05-01)" in text


def test_status_shows_what_history_costs(timeline):
    root, _ = timeline
    runner = CliRunner()
    data = json.loads(runner.invoke(cli, ["status", "--vault", str(root), "--json"]).output)
    history = data["history"]
    assert history["past_versions"] == 3 and history["notes_with_past"] == 1 and history["deleted_notes"] == 0
    assert history["past_chunks"] >= 1 and history["closed_edges"] >= 3
    assert 0 < history["bytes"] < history["database_bytes"] and history["keep_versions"] == "all"
    text = runner.invoke(cli, ["status", "--vault", str(root)]).output
    assert "history: 3 past versions of 1 note (0 deleted)," in text and "% of index.db" in text


def test_prune_before_drops_the_older_past_and_as_of_says_so(timeline):
    root, at = timeline
    db = config.index_dir(root) / "index.db"
    runner = CliRunner()
    out = runner.invoke(cli, ["prune", "--vault", str(root), "--before", time_arg(at["renamed"]), "--json"])
    assert out.exit_code == 0, out.output
    report = json.loads(out.output)
    assert report["versions"] == 2 and report["links"] >= 2 and report["bytes_after"] <= report["bytes_before"]
    assert history_problems(db) == []
    store = open_store(root)
    try:
        note = store.note_id("Plans/Rollout.md") or 0
        assert [v.event for v in store.versions_of(note)] == ["renamed", "restored"]
        assert store.history_chunks_of([note]) == []  # the first content's chunks went with it
    finally:
        store.close()
    early = _ask(root, "rollout march", as_of=at["created"])
    assert any("was pruned" in w for w in early.warnings)
    assert _paths(_ask(root, "rollout june", as_of=at["renamed"]))  # what is after stays
    # `brain history` said the oldest version left, a rename, was "first seen"
    told = json.loads(runner.invoke(cli, ["history", "--vault", str(root), "Plans/Rollout.md", "--json"]).output)
    assert [v["event"] for v in told["versions"]] == ["renamed", "restored"]
    assert told["versions"][0]["changes"] == "the oldest version kept (those before it were pruned)"
    text = runner.invoke(cli, ["prune", "--vault", str(root), "--before", "2000-01-01", "--vacuum"]).output
    assert text.startswith("pruned 0 past versions") and "the space is back on the disk" in text


def test_prune_before_that_drops_all_history_asks_first(timeline, monkeypatch):
    """`brain prune --before 0m` (0 months meant, 0 minutes read) dropped every past version of
    every note, unasked: now off a terminal it refuses in one line naming --yes, on one it asks
    (saying how many and from when to when), and --yes drops it all as before."""
    root, _ = timeline
    before = _history_snapshot(root)
    runner = CliRunner()
    for args in ([], ["--json"]):
        out = runner.invoke(cli, ["prune", "--vault", str(root), "--before", "0m", *args])
        assert out.exit_code == 1, out.output
        assert "`--before 0m` would drop all of this vault's history (`brain history`, --as-of): 3 past versions" in (
            out.output
        )
        assert "Nothing dropped: add --yes to drop it" in out.output and out.output.count("\n") == 1
        assert _history_snapshot(root) == before
    monkeypatch.setattr("brain.history_cli._interactive", lambda: True)
    out = runner.invoke(cli, ["prune", "--vault", str(root), "--before", "0m"], input="n\n")
    assert out.exit_code == 1 and re.search(r"replaced (from|at) \d{4}-\d\d-\d\d .*\nDrop it\? \[y/N\]", out.output)
    assert _history_snapshot(root) == before
    out = runner.invoke(cli, ["prune", "--vault", str(root), "--before", "0m"], input="y\n")
    assert out.exit_code == 0 and "pruned 3 past versions" in out.output, out.output
    monkeypatch.setattr("brain.history_cli._interactive", lambda: False)
    out = runner.invoke(cli, ["prune", "--vault", str(root), "--before", "0m", "--yes"])  # nothing left: unasked
    assert out.exit_code == 0 and "pruned 0 past versions" in out.output, out.output


def test_prune_that_keeps_some_history_is_not_asked(timeline):
    """A prune that leaves some of the past (a date and time, a span of days) goes ahead unasked,
    off a terminal, as scripts expect (a span under a day that reaches the last day: test_ledger_prune)."""
    root, at = timeline
    out = CliRunner().invoke(cli, ["prune", "--vault", str(root), "--before", "90d"])  # nothing that old
    assert out.exit_code == 0 and "pruned 0 past versions" in out.output, out.output
    out = CliRunner().invoke(cli, ["prune", "--vault", str(root), "--before", time_arg(at["edited"])])
    assert out.exit_code == 0 and "pruned 1 past version" in out.output, out.output


def test_a_note_read_as_of_a_moment_a_prune_dropped_says_it_was_pruned_not_that_it_did_not_exist(timeline):
    """get_note (MCP, `brain serve`) as of a moment whose versions `brain prune` dropped said the
    note "did not exist" then and that "brain first saw it" at its oldest version kept: both wrong."""
    from brain.reading import NoteNotFound
    from brain.recall.timeline import read_note_at

    root, at = timeline
    out = CliRunner().invoke(cli, ["prune", "--vault", str(root), "--before", time_arg(at["renamed"])])
    assert out.exit_code == 0, out.output
    store = open_store(root)
    try:
        with pytest.raises(NoteNotFound) as told:
            read_note_at(store, root, "Plans/Rollout.md", at["created"])
        kept = read_note_at(store, root, "Plans/Rollout.md", at["renamed"])  # what is after stays
    finally:
        store.close()
    message = str(told.value)
    assert "did not exist" not in message and "first saw" not in message, message
    assert "were pruned" in message and "\n" not in message, message
    assert kept["version"]["event"] == "renamed"
    # moments milliseconds apart (the timeline is indexed step after step): told apart, not
    # "as of 08:14: its versions before 08:14 were pruned"
    then, before = re.fullmatch(r"\S+ as of (.+): its versions before (.+) were pruned .*", message).groups()
    assert then != before, message


def test_prune_applies_a_lowered_keep_versions_and_needs_something_to_do(timeline, monkeypatch):
    root, _ = timeline
    runner = CliRunner()
    out = runner.invoke(cli, ["prune", "--vault", str(root)])
    assert out.exit_code == 1 and "nothing to prune: give --before DATE" in out.output
    monkeypatch.setenv("BRAIN_KEEP_VERSIONS", "1")
    out = runner.invoke(cli, ["prune", "--vault", str(root)])
    assert out.exit_code == 0, out.output
    assert "pruned 2 past versions" in out.output and "beyond 1 past version per note: 1 note had more" in out.output
    assert history_problems(config.index_dir(root) / "index.db") == []


def test_prune_vacuum_alone_compacts_index_db_and_drops_no_history(tmp_path, monkeypatch):
    """`brain prune --vacuum` with no --before and BRAIN_KEEP_VERSIONS unset refused ("nothing
    to prune"); after deleting many notes it is how the space comes back, history kept whole."""
    monkeypatch.delenv("BRAIN_KEEP_VERSIONS", raising=False)
    root = tmp_path / "v"
    for i in range(60):
        write(root, f"N{i}.md", f"# Note {i}\n\n" + "".join(f"Line {j} of note {i}: w{i}x{j}.\n\n" for j in range(40)))
    index_then_moment(root)
    for i in range(55):
        (root / f"N{i}.md").unlink()
    index_then_moment(root)
    db = config.index_dir(root) / "index.db"

    def counts() -> dict[str, int]:
        store = open_store(root)
        try:
            return store.history_counts()
        finally:
            store.close()

    kept = counts()
    before = db.stat().st_size
    runner = CliRunner()
    out = runner.invoke(cli, ["prune", "--vault", str(root), "--vacuum"])
    assert out.exit_code == 0, out.output
    after = db.stat().st_size
    assert after < before and counts() == kept and history_problems(db) == []
    lines = out.output.splitlines()
    assert len(lines) == 1 and lines[0].startswith("compacted index.db: "), out.output
    assert f"now {after / 1e6:.1f} MB" in lines[0] or f"now {after / 1e3:.0f} KB" in lines[0], out.output
    assert "no history dropped" in lines[0]
    data = json.loads(runner.invoke(cli, ["prune", "--vault", str(root), "--vacuum", "--json"]).output)
    assert data["vacuumed"] is True and data["versions"] == data["chunks"] == data["links"] == 0
    assert data["disk_bytes_after"] <= data["disk_bytes_before"] and data["before"] is None
    early = _ask(root, "note 3 line", as_of=time.time() - 0.001)
    assert not any("was pruned" in w for w in early.warnings)  # nothing recorded as pruned


def test_a_vacuum_under_brain_serve_gives_the_space_back_once_it_lets_go(timeline):
    """VACUUM writes the compacted pages into the WAL, which brain serve's snapshot of the state
    before held until its next update or stop (days on a quiet vault, the WAL as large as the
    whole file, and one more copy each vacuum), and prune said the space waited for it; the
    server now sees the index compacted, loads it and folds the WAL in, and prune waits that
    long and says the space is back."""
    from serve_helpers import served

    root, _ = timeline
    db = config.index_dir(root) / "index.db"
    wal = db.with_name("index.db-wal")
    with served(root, watch=False) as daemon:
        for args in (["--vacuum"], ["--before", "2000-01-01", "--vacuum"]):
            out = CliRunner().invoke(cli, ["prune", "--vault", str(root), *args])
            assert out.exit_code == 0, out.output
            assert "reads the index as it was" not in out.output, out.output
            assert "given back to the disk" in out.output or "the space is back on the disk" in out.output
        data = json.loads(CliRunner().invoke(cli, ["prune", "--vault", str(root), "--vacuum", "--json"]).output)
        assert data["wal_folded"] is True and data["disk_bytes_after"] <= data["disk_bytes_before"]
        assert not wal.exists() or not wal.stat().st_size
        # and it answers from the compacted index
        answer = daemon.service.ask("rollout plan", ["hybrid"], RecallSettings(), update=False)
        assert answer[0].results


def test_a_vacuum_behind_another_reader_says_so_and_brain_serve_folds_it_in_after(timeline, monkeypatch):
    """A reader that is not brain serve (a `brain ask`) holds VACUUM's pages in the WAL: prune
    waits a little (``LET_GO_SECONDS``), then says so; brain serve, whose fold after loading the
    compacted index found that reader there, folded the WAL in only at its next update, and now
    does so while idle, once the reader is gone."""

    from serve_helpers import served, wait_until

    from brain.index import prune as vault_prune

    monkeypatch.setattr(vault_prune, "LET_GO_SECONDS", 3.0)
    root, _ = timeline
    db = config.index_dir(root) / "index.db"
    wal = db.with_name("index.db-wal")
    with served(root, watch=False):
        reader = sqlite3.connect(db, isolation_level=None)
        reader.execute("BEGIN")
        reader.execute("SELECT count(*) FROM notes").fetchone()  # the state before, held
        try:
            out = CliRunner().invoke(cli, ["prune", "--vault", str(root), "--vacuum"])
            assert out.exit_code == 0, out.output
            assert "while another process reads the index as it was" in out.output, out.output
            assert "given back" not in out.output
            data = json.loads(CliRunner().invoke(cli, ["prune", "--vault", str(root), "--vacuum", "--json"]).output)
            assert data["wal_folded"] is False and data["disk_bytes_after"] > data["disk_bytes_before"]
        finally:
            reader.execute("ROLLBACK")
            reader.close()
        wait_until(lambda: not wal.exists() or not wal.stat().st_size, 15, "brain serve folding the WAL in")


def test_keep_versions_says_what_it_dropped_when_asked_about_then(tmp_path, monkeypatch):
    """A past version dropped by BRAIN_KEEP_VERSIONS (while indexing, or by `brain prune`) leaves
    the past before it incomplete: --as-of then says so, as after `brain prune --before`,
    instead of answering without the note as if it had not been there."""
    root = tmp_path / "v"
    write(root, "Bread.md", "# Bread\n\nFlour, water, salt.\n")
    write(root, "Plan.md", "# Plan\n\nversion one: zebras\n")
    first = index_then_moment(root)
    write(root, "Plan.md", "# Plan\n\nversion two: yaks\n")
    second = index_then_moment(root)
    write(root, "Plan.md", "# Plan\n\nversion three: xerus\n")
    third = index_then_moment(root)
    monkeypatch.setenv("BRAIN_KEEP_VERSIONS", "1")
    out = CliRunner().invoke(cli, ["prune", "--vault", str(root)])
    assert out.exit_code == 0 and "pruned 1 past version" in out.output, out.output
    early = _ask(root, "zebras", as_of=first)
    assert "Plan.md" not in _paths(early) and any("was pruned" in w for w in early.warnings)
    assert not _ask(root, "yaks", as_of=second).warnings  # what is kept is whole
    monkeypatch.setenv("BRAIN_KEEP_VERSIONS", "0")  # and while indexing
    write(root, "Plan.md", "# Plan\n\nversion four: wombats\n")
    index_then_moment(root)
    assert any("was pruned" in w for w in _ask(root, "xerus", as_of=third).warnings)
    assert history_problems(config.index_dir(root) / "index.db") == []


def test_what_prunes_history_stamps_the_index_and_what_drops_nothing_does_not(tmp_path, monkeypatch):
    """A server reloads when ``reload_at`` changes (its snapshot still holds what was dropped):
    stamped by `brain prune` and by BRAIN_KEEP_VERSIONS while indexing when they drop something,
    left alone when they drop nothing (no reload for nothing)."""
    from brain.index.store import RELOAD

    def stamp() -> str | None:
        store = open_store(root)
        try:
            return store.get_meta(RELOAD)
        finally:
            store.close()

    root = tmp_path / "v"
    write(root, "Plan.md", "# Plan\n\nversion one: zebras\n")
    index_then_moment(root)
    for text in ("two: yaks", "three: xerus"):
        write(root, "Plan.md", f"# Plan\n\nversion {text}\n")
        index_then_moment(root)
    assert CliRunner().invoke(cli, ["prune", "--vault", str(root), "--before", "2000-01-01"]).exit_code == 0
    assert stamp() is None
    monkeypatch.setenv("BRAIN_KEEP_VERSIONS", "1")
    assert CliRunner().invoke(cli, ["prune", "--vault", str(root)]).exit_code == 0
    first = stamp()
    assert first is not None
    assert CliRunner().invoke(cli, ["prune", "--vault", str(root)]).exit_code == 0  # nothing over 1 now
    assert stamp() == first
    write(root, "Plan.md", "# Plan\n\nversion four: wombats\n")
    index_then_moment(root)  # keeps 1: the version before goes
    assert stamp() not in (None, first)
    monkeypatch.delenv("BRAIN_KEEP_VERSIONS")
    later = stamp()
    assert CliRunner().invoke(cli, ["prune", "--yes", "--vault", str(root), "--before", "2099-01-01"]).exit_code == 0
    assert stamp() not in (None, later)


def test_prune_before_a_moment_to_come_warns_only_about_what_came_before_it(timeline):
    """`--before 2099-01-01` drops everything replaced so far; a version replaced after the
    prune is whole history, and --as-of while it was current does not warn."""
    root, at = timeline
    out = CliRunner().invoke(cli, ["prune", "--yes", "--vault", str(root), "--before", "2099-01-01"])
    assert out.exit_code == 0, out.output
    assert any("was pruned" in w for w in _ask(root, "rollout", as_of=at["restored"]).warnings)
    write(root, "Garden.md", "# Garden\n\nTomatoes and basil, and now peppers.\n")
    before_edit = index_then_moment(root)
    write(root, "Garden.md", "# Garden\n\nOnly peppers now.\n")
    index_then_moment(root)
    result = _ask(root, "tomatoes basil peppers", as_of=before_edit)
    assert "Garden.md" in _paths(result) and result.warnings == []


def test_prune_before_today_keeps_what_was_replaced_today_and_says_the_moment(timeline):
    """`brain prune --before today` read today as `--as-of` does, its end: every version replaced
    earlier today went. A date is the moment that day began (local time), and the output says the
    moment used, in local time and in UTC."""
    import datetime as dt

    root, at = timeline
    began = dt.datetime.combine(dt.date.today(), dt.time.min)
    if at["created"] < began.timestamp():
        pytest.skip("the timeline was built across midnight")
    utc = began.astimezone(dt.timezone.utc).replace(tzinfo=None).isoformat(timespec="seconds") + "Z"
    runner = CliRunner()
    for when in ("today", "yesterday", dt.date.today().isoformat()):
        out = runner.invoke(cli, ["prune", "--vault", str(root), "--before", when, "--json"])
        assert out.exit_code == 0, out.output
        report = json.loads(out.output)
        assert (report["versions"], report["chunks"], report["links"]) == (0, 0, 0), (when, report)
    assert (report["before"], report["before_local"]) == (utc, began.astimezone().isoformat(timespec="seconds"))
    store = open_store(root)
    try:
        assert len(store.versions_of(store.note_id("Plans/Rollout.md") or 0)) == 4
    finally:
        store.close()
    out = runner.invoke(cli, ["prune", "--vault", str(root), "--before", "today"])
    assert f"(replaced before {began.date().isoformat()} 00:00:00 local ({utc}))" in out.output, out.output
    out = runner.invoke(cli, ["prune", "--yes", "--vault", str(root), "--before", "0m"])  # a span: that moment, now
    assert out.exit_code == 0 and out.output.startswith("pruned 3 past versions"), out.output
    assert "local (" in out.output and "Z))" in out.output


def test_a_prune_under_an_open_view_of_the_past_is_said_on_each_answer(timeline):
    """A view of the past reads its text and chunks as it answers: a `brain prune` that drops
    them after it opened leaves answers without them, so each answer says why."""
    root, at = timeline
    recaller = open_recaller(root, update=False, as_of=at["created"])
    try:
        assert "Rollout plan.md" in _paths(recaller.ask("rollout march canary", "hybrid+ppr", SETTINGS))
        out = CliRunner().invoke(cli, ["prune", "--yes", "--vault", str(root), "--before", "0h"])
        assert out.exit_code == 0, out.output
        for mode in ("hybrid+ppr", "vector"):
            result = recaller.ask("rollout march canary", mode, SETTINGS)
            assert "Rollout plan.md" not in _paths(result)
            assert any("pruned after this view of the past was opened" in w for w in result.warnings), mode
    finally:
        recaller.close()
    present = open_recaller(root, update=False)
    try:
        assert present.ask("rollout", "hybrid+ppr", SETTINGS).warnings == []  # the present: nothing to say
    finally:
        present.close()


# ----- --rebuild and history ---------------------------------------------------------------------


def _history_snapshot(root: Path) -> dict:
    store = open_store(root)
    try:
        return {
            "versions": sorted(
                (v.note_id, v.path, v.hash, v.event, v.ended, v.recorded_from, v.recorded_to)
                for v in store.versions_at(None) + [v for n in store.note_ids() for v in store.versions_of(n)]
            ),
            "edges": sorted(
                (e.source_id, e.target, e.target_id, e.status, e.recorded_from, e.recorded_to)
                for n in {v.note_id for v in store.latest_versions()}
                for e in store.edges_from(n)
            ),
            "ids": {path: row.id for path, row in store.note_rows().items()},
            "past_chunks": sorted((n, digest) for _, n, digest in store.history_chunks_of(store.note_ids())),
        }
    finally:
        store.close()


def test_rebuild_asks_before_discarding_history(timeline):
    root, _ = timeline
    before = _history_snapshot(root)
    out = CliRunner().invoke(cli, ["index", "--vault", str(root), "--rebuild"])
    assert out.exit_code == 1
    assert "this one's history would go: 3 past versions of 1 note and" in out.output
    assert "Add --keep-history to carry it over, or --yes to discard it" in out.output
    assert _history_snapshot(root) == before


def test_rebuild_on_a_terminal_asks(timeline, monkeypatch):
    root, _ = timeline
    before = _history_snapshot(root)
    monkeypatch.setattr("brain.cli._interactive", lambda: True)
    out = CliRunner().invoke(cli, ["index", "--vault", str(root), "--rebuild"], input="n\n")
    assert out.exit_code == 1 and "Discard it? (--keep-history carries it over) [y/N]" in out.output
    assert _history_snapshot(root) == before
    out = CliRunner().invoke(cli, ["index", "--vault", str(root), "--rebuild"], input="y\n")
    assert out.exit_code == 0, out.output
    assert _history_snapshot(root)["versions"] != before["versions"]


def test_rebuild_yes_discards_history(timeline):
    root, _ = timeline
    out = CliRunner().invoke(cli, ["index", "--vault", str(root), "--rebuild", "--yes"])
    assert out.exit_code == 0, out.output
    store = open_store(root)
    try:
        assert store.history_counts()["past_versions"] == 0
        assert {v.event for v in store.versions_at(None)} == {"created"}
    finally:
        store.close()


def test_rebuild_keep_history_carries_it_over(timeline):
    root, at = timeline
    before = _history_snapshot(root)
    queries = {moment: _paths(_ask(root, "rollout march june canary", as_of=at[moment])) for moment in at}
    out = CliRunner().invoke(cli, ["index", "--vault", str(root), "--rebuild", "--keep-history"])
    assert out.exit_code == 0, out.output
    assert _history_snapshot(root) == before
    assert history_problems(config.index_dir(root) / "index.db") == []
    for moment, paths in queries.items():
        assert _paths(_ask(root, "rollout march june canary", as_of=at[moment])) == paths, moment


def test_rebuild_keep_history_over_a_vault_that_moved_on(timeline):
    """Changes the old index never saw (an edit, a delete, a new note) are recorded by the
    rebuild, and the old content's chunks are kept as the past."""
    root, at = timeline
    write(root, "Canary.md", "# Canary\n\nCanary releases, now with automatic rollback.\n")
    (root / "Garden.md").unlink()
    write(root, "New.md", "# New\n\nA note the old index never saw.\n")
    old_ids = _history_snapshot(root)["ids"]
    report = index_vault(root, rebuild=True, keep_history=True, progress=False)
    assert report.new == report.notes == 6 and report.restored == 0  # a rebuild reads every note afresh
    store = open_store(root)
    try:
        canary = store.note_id("Canary.md")
        assert canary == old_ids["Canary.md"]
        assert [(v.event, v.ended) for v in store.versions_of(canary or 0)] == [
            ("created", "changed"),
            ("changed", None),
        ]
        garden = old_ids["Garden.md"]
        assert store.versions_of(garden)[-1].ended == "deleted"
        assert {digest for _, _, digest in store.history_chunks_of([canary or 0, garden])} == {
            store.versions_of(canary or 0)[0].hash,
            store.versions_of(garden)[0].hash,
        }
        assert store.note_id("New.md") not in old_ids.values()
    finally:
        store.close()
    assert history_problems(config.index_dir(root) / "index.db") == []
    then = _ask(root, "tomatoes basil sun garden", "vector", as_of=at["restored"])
    assert "Garden.md" in _paths(then)


def test_rebuild_keep_history_with_another_model_embeds_the_past_again(timeline, monkeypatch):
    root, at = timeline
    monkeypatch.setenv("BRAIN_EMBED_MODEL", "fake:32")
    report = index_vault(root, rebuild=True, keep_history=True, progress=False)
    assert report.past_embedded > 0
    store = open_store(root)
    try:
        past = store.history_chunks_of(store.note_ids())
        vectors = store.history_chunk_vectors([chunk_id for chunk_id, _, _ in past])
        assert vectors and all(len(vector) == 32 * 4 for _, _, vector in vectors)
    finally:
        store.close()
    created = _ask(root, "march canary rollout", "hybrid+ppr", as_of=at["created"])
    assert "March" in _text_of(created, "Rollout plan.md")


def test_the_consistency_check_sees_each_kind_of_damage(timeline):
    """history_problems (used after kills in test_interrupt.py) is not a check that cannot fail."""
    import shutil

    root, _ = timeline
    db = config.index_dir(root) / "index.db"
    damage = {
        "a note without a current version": "DELETE FROM note_versions WHERE recorded_to IS NULL AND path = 'Canary.md'",
        "an open edge without a current version": "UPDATE note_versions SET recorded_to = 1e10"
        " WHERE recorded_to IS NULL AND path = 'Plans/Rollout.md'",
        "a note's links and its open edges differ": "UPDATE link_history SET recorded_to = 1e10"
        " WHERE target = 'Pager duty' AND recorded_to IS NULL",
        "an open edge for a link not written": "DELETE FROM links WHERE target = 'Blue green'",
        "a past version without its chunks": "DELETE FROM version_chunks",
        "past chunks of current content": "INSERT INTO version_chunks SELECT v.note_id, n.hash, v.chunk_ids"
        " FROM version_chunks v JOIN notes n ON n.id = v.note_id LIMIT 1",
        "past chunks of no version": "INSERT INTO version_chunks SELECT note_id, 'gone', chunk_ids"
        " FROM version_chunks LIMIT 1",
        "a past content whose chunks are missing": "UPDATE chunk_history SET note_id = note_id + 1000",
        "past chunks no past content holds": "INSERT INTO chunk_history (note_id, key, title, text, vector)"
        " VALUES (1, x'00', 'Canary', 'stray', x'0000')",
        "overlapping versions": "UPDATE note_versions SET recorded_to = 1e10 WHERE event = 'created'"
        " AND path = 'Rollout plan.md'",
        "a version's text unreadable": "UPDATE chunks SET text = 'other' WHERE note_id = (SELECT id FROM notes"
        " WHERE path = 'Canary.md')",
        "a past version's text kept against chunks": "UPDATE note_versions SET content = (SELECT content"
        " FROM note_versions WHERE recorded_to IS NULL AND path = 'Canary.md') WHERE event = 'created'"
        " AND path = 'Rollout plan.md'",
    }
    for i, (problem, sql) in enumerate(damage.items()):
        copy = db.with_name(f"damaged-{i}.db")
        shutil.copy(db, copy)
        if db.with_name("index.db-wal").exists():
            shutil.copy(db.with_name("index.db-wal"), copy.with_name(copy.name + "-wal"))
        conn = sqlite3.connect(copy)
        conn.execute("PRAGMA wal_checkpoint")
        conn.execute(sql)
        conn.commit()
        conn.close()
        found = history_problems(copy)
        assert any(p.startswith(problem) for p in found), (problem, found)


def test_past_chunks_are_scored_as_fts5_scores_the_present(toy_vault):
    """bm25.py reproduces FTS5's bm25() with the present table's statistics: scored in Python,
    present chunks get FTS5's own scores, so past chunks scored the same way compare with them."""
    from brain.recall import bm25

    index_vault(toy_vault, progress=False)
    store = open_store(toy_vault)
    try:
        rows, total = store.fts_totals()
        assert rows == store.chunk_count() and total > rows
        for expression in ('"memory"', '"sqlite" OR "wal" OR "readers"', '"borsch" OR "beet" OR "soup"', '"crème"'):
            query = bm25.phrases(expression)
            counts = store.term_chunk_counts([p[0] for p in query])
            stats = bm25.TableStats(rows, total / rows, {p: counts[p[0]] for p in query})
            hits = store.fts_search(expression, (4.0, 2.0, 1.0), 30)
            chunks = store.chunk_rows([chunk_id for chunk_id, _ in hits])
            for chunk_id, score in hits:
                row = chunks[chunk_id]
                mine = bm25.score((row.title, row.heading, row.text), query, (4.0, 2.0, 1.0), stats)
                assert mine == pytest.approx(score, rel=1e-9), (expression, row.path)
    finally:
        store.close()


def test_a_damaged_index_is_rebuilt_and_says_its_history_is_lost(timeline):
    root, _ = timeline
    db = config.index_dir(root) / "index.db"
    db.write_bytes(b"\0" * db.stat().st_size)
    for wal in (db.with_name("index.db-wal"), db.with_name("index.db-shm")):
        wal.unlink(missing_ok=True)
    out = CliRunner().invoke(cli, ["index", "--vault", str(root), "--rebuild", "--json"])  # nothing to ask: it is gone
    assert out.exit_code == 0, out.output
    report = json.loads(out.stdout)
    assert any("could not be carried into the new index" in w["message"] for w in report["warnings"])
    assert report["history_left"] and report["moved_aside"]
    assert history_problems(db) == []


@pytest.mark.slow  # a subprocess that file modes bind
def test_as_of_and_history_on_a_read_only_home(timeline, brain_home):
    """A read-only brain home still answers --as-of (the slice is built in memory) and history."""
    from index_helpers import modes_binding_prefix
    from test_hardening_index import _brain, _chmod_tree

    modes_binding_prefix()
    root, at = timeline
    _chmod_tree(brain_home, writable=False)
    try:
        asked = _brain(
            brain_home,
            "ask",
            "--vault",
            str(root),
            "--no-update",
            "--json",
            "--as-of",
            time_arg(at["created"]),
            "march canary rollout",
        )
        assert asked.returncode == 0, asked.stderr
        plan = next(r for r in json.loads(asked.stdout)["results"] if r["path"] == "Rollout plan.md")
        assert "March" in plan["snippet"]
        told = _brain(brain_home, "history", "--vault", str(root), "Rollout", "--json")
        assert told.returncode == 0 and len(json.loads(told.stdout)["versions"]) == 4, told.stderr
    finally:
        _chmod_tree(brain_home, writable=True)


# ----- a clock set back, and the order history keeps ------------------------------------------------


def _text_history(root: Path, name: str) -> dict:
    out = CliRunner().invoke(cli, ["history", "--vault", str(root), name, "--json", "--last", "0"])
    assert out.exit_code == 0, out.output
    return json.loads(out.output)


def test_a_clock_set_back_cannot_put_a_version_before_the_one_it_replaced(tmp_path, monkeypatch):
    """The clock a day fast for one run, then right again: each version still begins after the
    one it replaced, so the note is current, its versions in the order they were written, one
    version at any moment, and BRAIN_KEEP_VERSIONS keeps the last ones (it kept the oldest)."""
    offset = [0.0]
    clock = time.time
    monkeypatch.setattr(time, "time", lambda: clock() + offset[0])  # intervals stay true; the date is off
    root = tmp_path / "v"
    fruits = ["apples", "bananas", "cherries", "dates"]
    for fruit, shift in zip(fruits, [0, 86400, 0, 0]):
        offset[0] = shift
        write(root, "N.md", f"# N\n\nThe fruit is {fruit}.\n")
        index_vault(root, progress=False)
    data = _text_history(root, "N")
    assert data["current"] is True
    assert [v["event"] for v in data["versions"]] == ["created", "changed", "changed", "changed"]
    store = open_store(root)
    try:
        versions = store.versions_of(store.note_id("N.md"))
        texts = [store.version_bytes(v.id) for v in versions]
        assert [fruit for text in texts for fruit in fruits if fruit in text.decode()] == fruits
        for older, newer in itertools.pairwise(versions):
            assert older.recorded_to == newer.recorded_from and newer.recorded_from > older.recorded_from
        for v in versions:
            assert [w.id for w in store.versions_at(v.recorded_from) if w.note_id == v.note_id] == [v.id]
    finally:
        store.close()
    monkeypatch.setenv("BRAIN_KEEP_VERSIONS", "1")
    assert CliRunner().invoke(cli, ["prune", "--vault", str(root)]).exit_code == 0
    store = open_store(root)
    try:
        kept = [store.version_bytes(v.id).decode() for v in store.versions_of(store.note_id("N.md"))]
        assert ["cherries" in kept[0], "dates" in kept[1], len(kept)] == [True, True, 2]
    finally:
        store.close()


def test_history_lists_and_prunes_in_the_order_versions_were_recorded(tmp_path, monkeypatch):
    """An index written before brain kept its history clock steady may hold a version that
    begins before the one it replaced: it is still listed, current, and pruned by the order the
    versions were recorded in."""
    root = tmp_path / "v"
    for fruit in ["apples", "bananas", "cherries", "dates"]:
        write(root, "N.md", f"# N\n\nThe fruit is {fruit}.\n")
        index_then_moment(root)
    store = open_store(root)
    try:
        ids = [v.id for v in store.versions_of(store.note_id("N.md"))]
        with store.transaction():  # the clock was a day fast when the second was recorded
            store.conn.execute("UPDATE note_versions SET recorded_from = recorded_from + 86400 WHERE id = ?", (ids[1],))
            store.conn.execute("UPDATE note_versions SET recorded_to = recorded_to + 86400 WHERE id = ?", (ids[0],))
    finally:
        store.close()
    data = _text_history(root, "N")
    assert data["current"] is True and [v["event"] for v in data["versions"]][-1] == "changed"
    monkeypatch.setenv("BRAIN_KEEP_VERSIONS", "1")
    assert CliRunner().invoke(cli, ["prune", "--vault", str(root)]).exit_code == 0
    store = open_store(root)
    try:
        assert [v.id for v in store.versions_of(store.note_id("N.md"))] == ids[2:]
    finally:
        store.close()


def test_a_link_written_otherwise_is_a_link_lost_and_one_gained(tmp_path):
    """`[[Projects/Target]]` replaced by `[[Target]]` reaches the same note, but the note no
    longer writes the first: history showed it as still there and never the second."""
    root = tmp_path / "v"
    write(root, "Projects/Target.md", "# Target\n\nbody\n")
    write(root, "Src.md", "# Src\n\nsee [[Projects/Target]]\n")
    index_then_moment(root)
    write(root, "Src.md", "# Src\n\nsee [[Target]]\n")
    index_then_moment(root)
    links = _text_history(root, "Src")["links"]
    assert [(span["target"], span["lost"] is None) for span in links] == [
        ("Projects/Target", False),
        ("Target", True),
    ]
    backlinks = _text_history(root, "Target")["backlinks"]
    assert [span["lost"] is None for span in backlinks] == [False, True]


def test_a_path_two_deleted_notes_had_names_the_one_that_had_it_last(tmp_path):
    root = tmp_path / "v"
    write(root, "X.md", "# First\n\nThe first note that lived at X.\n")
    write(root, "Keep.md", "# Keep\n\nstays\n")
    index_then_moment(root)
    (root / "X.md").unlink()
    index_then_moment(root)
    write(root, "Y.md", "# Second\n\nThe second note, born at Y.\n")
    index_then_moment(root)
    (root / "Y.md").rename(root / "X.md")
    index_then_moment(root)
    (root / "X.md").unlink()
    index_then_moment(root)
    data = _text_history(root, "X.md")
    assert [v["path"] for v in data["versions"]] == ["Y.md", "X.md"] and data["current"] is False


def test_history_reads_only_the_versions_it_lists(tmp_path, monkeypatch):
    """`--last 2` of a log with 30 versions decompresses and compares three of them (the two and
    the one before), not all 30: a daily log's history stays as quick at 800 versions as at 30."""
    from brain.index.store import IndexStore

    root = tmp_path / "v"
    for i in range(30):
        write(root, "Log.md", "# Log\n\n" + "".join(f"- day {d}\n" for d in range(i + 1)))
        index_vault(root, progress=False)
    reads: list[int] = []
    original = IndexStore.version_bytes
    monkeypatch.setattr(IndexStore, "version_bytes", lambda self, v, *rest: reads.append(v) or original(self, v, *rest))
    out = CliRunner().invoke(cli, ["history", "--vault", str(root), "Log", "--last", "2", "--json"])
    data = json.loads(out.output)
    assert len(reads) == 3 and data["earlier_versions"] == 28
    assert [v["changes"] for v in data["versions"]] == ["+1 −0 lines; sections: Log"] * 2
    reads.clear()
    every = json.loads(CliRunner().invoke(cli, ["history", "--vault", str(root), "Log", "--json"]).output)
    assert every["versions"][-2:] == data["versions"] and len(reads) == 30


def _traced_steps(run) -> int:
    """How many Python lines ``run()`` executes (calls and returns too): its work as a count,
    the same on a loaded machine as on an idle one."""
    steps = 0

    def trace(frame, event, arg):
        nonlocal steps
        steps += 1
        return trace

    before = sys.gettrace()  # (a coverage run's tracer, put back after)
    sys.settrace(trace)
    try:
        run()
    finally:
        sys.settrace(before)
    return steps


def test_comparing_a_log_with_its_last_append_costs_its_length_not_its_square(tmp_path):
    """difflib's SequenceMatcher paired every blank line of the version before with every blank
    line of the next: `brain history` of a 255 KB log took ~0.3 s a version, minutes for its
    800. A log twice as long now costs at most twice the work to compare with its last append."""
    steps = []
    for entries in (150, 300):
        root = tmp_path / f"v{entries}"
        body = "".join(f"## Day {d}\n\nFired to cone {d % 11}, the glaze held.\n\n" for d in range(entries))
        write(root, "Log.md", "# Log\n\n" + body)
        index_vault(root, progress=False)
        write(root, "Log.md", "# Log\n\n" + body + "## Day x\n\nUnloaded.\n\n")
        index_vault(root, progress=False)
        found = note_history(root, "Log", last=1)  # (imports and first reads settled)
        assert found.versions[0].changes == "+4 −0 lines; sections: Day x"
        steps.append(_traced_steps(lambda root=root: note_history(root, "Log", last=1)))
    assert steps[1] < 2.2 * steps[0], steps


def test_history_inflates_each_pack_of_a_log_once(tmp_path, monkeypatch):
    """A log's versions share all but their last segments: `brain history` read each version's
    segments and inflated their packs again (the same packs once per version that lists them);
    now each version reads only what the one before it did not have."""
    from brain.index import version_text

    root = tmp_path / "v"
    lines = ["# Log", ""]
    for day in range(40):
        lines += [f"## Day {day}", "", " ".join(f"word{day}x{n}" for n in range(60)), ""]
        write(root, "Log.md", "\n".join(lines) + "\n")
        index_vault(root, progress=False)
    inflated: list[int] = []
    packs = version_text._packs

    def counted(conn, note_id, pack_ids, schema="main"):
        found = packs(conn, note_id, pack_ids, schema)
        inflated.extend(found)
        return found

    monkeypatch.setattr(version_text, "_packs", counted)
    data = json.loads(CliRunner().invoke(cli, ["history", "--vault", str(root), "Log", "--json"]).output)
    assert len(data["versions"]) == 40 and data["versions"][-1]["changes"] == "+4 −0 lines; sections: Day 39"
    assert len(inflated) > 20 and len(inflated) == len(set(inflated)), inflated


def test_pruning_the_past_frees_its_search_index_too(tmp_path):
    """FTS5 deletes only add tombstones: pruning every past chunk left the past's BM25 index
    whole in the database, where VACUUM cannot reach it."""
    root = tmp_path / "v"
    for i in range(12):
        write(root, "Big.md", "# Big\n\n" + "".join(f"Line {j} of version {i}: words{i}x{j}.\n\n" for j in range(60)))
        index_then_moment(root)

    def search_bytes() -> int:
        store = open_store(root)
        try:
            return int(store.conn.execute("SELECT sum(length(block)) FROM chunk_history_fts_data").fetchone()[0] or 0)
        finally:
            store.close()

    full = search_bytes()
    out = CliRunner().invoke(cli, ["prune", "--yes", "--vault", str(root), "--before", "2100-01-01", "--vacuum"])
    assert out.exit_code == 0 and "pruned 11 past versions" in out.output, out.output
    assert search_bytes() < full / 20


def test_brain_history_reads_a_name_as_brain_note_does(tmp_path):
    """`brain history idea` told Notes/Idea.md's life beside Notes/idea.md (link resolution folds
    case and takes the first by path); it now names the note `brain note idea` reads."""
    root = tmp_path / "v"
    write(root, "Notes/Idea.md", "# Idea A\n\ncontent A\n")
    write(root, "Notes/idea.md", "# Idea B\n\ncontent B\n")
    index_then_moment(root)
    runner = CliRunner()
    write(root, "Tilde.md", "---\ntitle: ~draft\n---\nbody\n")  # a title that is no path
    index_then_moment(root)
    pairs = (
        ("idea", "Notes/idea.md"),
        ("Idea", "Notes/Idea.md"),
        ("Notes/idea", "Notes/idea.md"),
        ("~draft", "Tilde.md"),
    )
    for typed, path in pairs:
        out = runner.invoke(cli, ["history", "--vault", str(root), typed, "--json"])
        assert out.exit_code == 0, out.output
        assert json.loads(out.stdout)["path"] == path, typed


@pytest.mark.parametrize("mode", BASE_MODES)
def test_as_of_reads_the_same_from_the_present_index_or_a_copy_of_the_slice(timeline, mode, monkeypatch):
    """Where most of a slice is the present, its dense lane searches the present's FAISS index
    (hits outside the slice dropped) instead of a copy of the slice read from SQLite (25 s and
    3.5 GB to open at 100,000 notes): both answer alike at every moment."""
    from brain.recall import past

    root, at = timeline
    query = "when do we roll out, march or june, canary or blue-green?"
    for moment in at.values():
        answers = []
        for share in (0.0, 2.0):  # always the present's index; never
            monkeypatch.setattr(past, "SHARED_FROM", share)
            answers.append([(c.path, c.text) for c in _ask(root, query, mode, as_of=moment).results])
        assert answers[0] == answers[1], moment


def test_as_of_over_the_present_index_leaves_out_a_note_made_since(tmp_path):
    root = tmp_path / "v"
    for rel, text in FILLER:
        write(root, rel, text)
    before = index_then_moment(root)
    write(root, "Sourdough.md", "# Sourdough\n\nFlour, water, salt and a starter; bake the bread at 240 degrees.\n")
    index_then_moment(root)
    store = open_store(root)
    try:
        view = PastIndex(store, as_of=before)
        assert len(view.current_note_ids()) >= past_module.SHARED_FROM * store.note_count()  # the present's index
        view.close()
    finally:
        store.close()
    for mode in BASE_MODES:
        then = _ask(root, "bread flour water salt starter", mode, as_of=before)
        assert "Bread.md" in _paths(then) and "Sourdough.md" not in _paths(then), mode
    assert "Sourdough.md" in _paths(_ask(root, "bread flour water salt starter", "vector"))


def test_history_tells_a_property_link_from_a_wikilink_to_the_same_note(tmp_path):
    """`brain history` showed a note's `superseded_by: "[[New]]"` and its body's `[[New]]` as two
    identical rows (and the same for the backlinks): each now says its kind, as `brain neighbours` does."""
    root = tmp_path / "vault"
    write(root, "New.md", "# New\n\nThe decision now.\n")
    write(root, "Old.md", '---\nsuperseded_by: "[[New]]"\n---\n# Old\n\nReplaced by [[New]].\n')
    index_vault(root, progress=False)
    shown = CliRunner().invoke(cli, ["history", "--vault", str(root), "Old"])
    assert shown.exit_code == 0, shown.output
    rows = [line for line in shown.output.splitlines() if line.startswith("  + [[New]] → New.md")]
    assert len(rows) == 2 and len(set(rows)) == 2, shown.output
    assert sum("  (property)  " in row for row in rows) == 1, shown.output
    back = CliRunner().invoke(cli, ["history", "--vault", str(root), "New"]).output
    backrows = [line for line in back.splitlines() if line.startswith("  + [[New]] ← Old.md")]
    assert len(backrows) == 2 and len(set(backrows)) == 2, back
