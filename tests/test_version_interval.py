"""Saves close together are one version (`BRAIN_VERSION_INTERVAL`): an editor that saves every
few seconds while its user types must not leave a version, with its text and its chunks, per
save. Each test drives history's clock by hand; the fake embedder throughout."""

from __future__ import annotations

import itertools
import json
import sqlite3
import time
from pathlib import Path

import pytest
from click.testing import CliRunner
from conftest import write
from index_helpers import history_problems, open_store

from brain import config
from brain.cli import cli
from brain.errors import ConfigError
from brain.index import history as history_module
from brain.index.indexer import index_vault
from brain.recall.opening import open_recaller
from brain.recall.types import RecallSettings

START = time.time() - 10 * 86400  # every moment here is in the past: `--as-of` reads them all


class Clock:
    def __init__(self) -> None:
        self.now = START

    def time(self) -> float:
        return self.now


@pytest.fixture
def clock(monkeypatch) -> Clock:
    clock = Clock()
    monkeypatch.setattr(history_module, "time", clock)
    monkeypatch.setenv("BRAIN_VERSION_INTERVAL", "300")
    return clock


def _save(root: Path, clock: Clock, after: float, text: str, name: str = "Essay.md") -> float:
    """Write the note ``after`` seconds on, index it; the moment it was recorded."""
    clock.now += after
    write(root, name, text)
    index_vault(root, progress=False)
    return clock.now


def _versions(root: Path, name: str = "Essay.md") -> list:
    store = open_store(root)
    try:
        note_id = store.note_id(name)
        assert note_id is not None
        return store.versions_of(note_id)
    finally:
        store.close()


def _db(root: Path) -> Path:
    return config.index_dir(root) / "index.db"


def _past_texts(root: Path) -> set[str]:
    conn = sqlite3.connect(_db(root))
    try:
        return {r[0] for r in conn.execute("SELECT text FROM chunk_history")}
    finally:
        conn.close()


def _as_of(root: Path, moment: float, query: str) -> str:
    recaller = open_recaller(root, update=False, as_of=moment)
    try:
        result = recaller.ask(query, "hybrid+ppr", RecallSettings(k=5, depth=20, seeds=5, max_new=10, pool=10))
    finally:
        recaller.close()
    return " ".join(c.text for c in result.results if c.path == "Essay.md")


def _essay(*paragraphs: str) -> str:
    return "# Essay\n\n" + "\n\n".join(paragraphs) + "\n"


def test_saves_within_the_interval_are_one_version(tmp_path, clock):
    root = tmp_path / "vault"
    write(root, "Other.md", "# Other\n\nNothing to do with kilns.\n")
    created = _save(root, clock, 0, _essay("The kiln fires at dawn."))
    settled = _save(root, clock, 3600, _essay("The kiln fires at dawn.", "Cones bend at 1220 degrees."))
    _save(root, clock, 5, _essay("The kiln fires at dawn.", "Cones bend at 1220 degrees.", "Glaze drips on shelves."))
    _save(root, clock, 5, _essay("The kiln fires at dawn.", "Cones bend at 1220 degrees.", "Wadding under pots."))
    last = _save(root, clock, 5, _essay("The kiln fires at dawn.", "Cones bend at 1220 degrees.", "Kiln wash."))

    versions = _versions(root)
    assert [(v.recorded_from, v.recorded_to, v.event, v.ended) for v in versions] == [
        (created, settled, "created", "changed"),
        (settled, last, "changed", "changed"),  # covers the two saves folded into it
        (last, None, "changed", None),
    ]
    past = " ".join(_past_texts(root))
    assert "Glaze drips" not in past and "Wadding" not in past  # neither their chunks
    assert history_problems(_db(root)) == []
    assert "Cones bend" in _as_of(root, settled + 7, "cones bend degrees")  # the kept version, then
    assert "Kiln wash" in _as_of(root, last + 1, "kiln wash")


def test_a_version_lived_long_is_kept_however_soon_its_own_version_came(tmp_path, clock):
    """The rule is the span of a version and the one before it: a quick save that then stood
    for an hour is kept, and so is the one before it."""
    root = tmp_path / "vault"
    _save(root, clock, 0, _essay("First draft."))
    _save(root, clock, 3600, _essay("Second draft."))
    _save(root, clock, 10, _essay("Third draft, a typo fixed."))
    _save(root, clock, 3600, _essay("Fourth draft."))
    assert [v.event for v in _versions(root)] == ["created", "changed", "changed", "changed"]
    assert history_problems(_db(root)) == []


def test_twenty_minutes_of_autosaves_keep_a_version_every_interval(tmp_path, clock):
    root = tmp_path / "vault"
    sentences = ["The kiln fires at dawn."]
    _save(root, clock, 0, _essay(*sentences))
    clock.now += 86400
    for i in range(120):  # a save every 10 s for 20 minutes
        sentences.append(f"Firing note {i} about cone {i % 12} and shelf {i % 7}.")
        _save(root, clock, 10, _essay(" ".join(sentences)))
    versions = _versions(root)
    assert 5 <= len(versions) <= 7  # the first, one per 5 minutes of saving, the last; not 121
    starts = [v.recorded_from for v in versions]
    assert all(b - a >= 300 for a, b in zip(starts[1:-2], starts[3:]))  # no two kept within one interval
    assert all(a.recorded_to == b.recorded_from for a, b in itertools.pairwise(versions))  # no gap
    assert history_problems(_db(root)) == []


def test_the_graph_of_a_folded_time_is_the_kept_versions(tmp_path, clock):
    root = tmp_path / "vault"
    for name in ("Canary", "Blue green", "Pager"):
        write(root, f"{name}.md", f"# {name}\n\nAbout {name}.\n")
    _save(root, clock, 0, _essay("See [[Canary]] and [[Pager]]."))
    settled = _save(root, clock, 3600, _essay("See [[Canary]] and [[Pager]] twice: [[Pager]]."))
    _save(root, clock, 5, _essay("See [[Blue green]] only."))  # Canary and Pager go, Blue green comes
    last = _save(root, clock, 5, _essay("See [[Pager]] and [[Blue green]]."))
    store = open_store(root)
    try:
        names = {note_id: path for path, note_id in ((p, store.note_id(p)) for p in store.note_rows())}

        def graph(moment: float) -> set[tuple[str, int]]:
            essay = store.note_id("Essay.md")
            return {
                (edge.target, edge.count)
                for edge in store.edges_from(essay)  # type: ignore[arg-type]
                if edge.recorded_from <= moment and (edge.recorded_to is None or edge.recorded_to > moment)
            }

        assert names  # the store reads
        assert graph(settled + 7) == {("Canary", 1), ("Pager", 2)}  # as the kept version wrote it
        assert graph(last) == {("Pager", 1), ("Blue green", 1)}
        spans = [(e.recorded_from, e.recorded_to) for e in store.edges_from(store.note_id("Essay.md"))]  # type: ignore[arg-type]
        assert all(to is None or to > start for start, to in spans)  # nothing lived only in the folded time
    finally:
        store.close()
    assert history_problems(_db(root)) == []


def _version_rows(root: Path) -> list[tuple[str, str | None, bytes | None]]:
    conn = sqlite3.connect(_db(root))
    try:
        return conn.execute(
            "SELECT event, ended, hash FROM note_versions WHERE note_id ="
            " (SELECT note_id FROM note_versions WHERE path = 'Essay.md') ORDER BY id"
        ).fetchall()
    finally:
        conn.close()


def test_a_delete_keeps_the_last_content_however_soon(tmp_path, clock):
    root = tmp_path / "vault"
    _save(root, clock, 0, _essay("Old words."), "Other.md")
    _save(root, clock, 0, _essay("Old words."))
    _save(root, clock, 3600, _essay("Newer words."))
    last = _save(root, clock, 5, _essay("The very last words, written just before the delete."))
    clock.now += 5
    (root / "Essay.md").unlink()
    index_vault(root, progress=False)
    assert [row[:2] for row in _version_rows(root)] == [
        ("created", "changed"),
        ("changed", "changed"),
        ("changed", "deleted"),
    ]
    assert "The very last words" in _as_of(root, last + 1, "the very last words")
    assert history_problems(_db(root)) == []


def test_a_revert_folded_away_keeps_the_older_version_of_that_content(tmp_path, clock):
    """A, B an hour on, A again 100 s later (a revert), then C 10 s on: the second A is
    folded into B, but the first A, an hour long, still reads back, its chunks kept though
    they were the current ones until C."""
    root = tmp_path / "vault"
    write(root, "Other.md", "# Other\n\nElse.\n")
    a = _essay("Alpha words about the kiln and its cones.")
    first = _save(root, clock, 0, a)
    _save(root, clock, 3600, _essay("Beta words about glaze."))
    _save(root, clock, 100, a)
    _save(root, clock, 10, _essay("Gamma words about wadding."))
    assert [row[:2] for row in _version_rows(root)] == [
        ("created", "changed"),
        ("changed", "changed"),
        ("changed", None),
    ]
    assert history_problems(_db(root)) == []
    assert "Alpha words" in _as_of(root, first + 60, "alpha kiln cones")
    assert "Alpha words" in " ".join(_past_texts(root))


def test_a_note_a_sync_client_empties_a_moment_leaves_no_empty_version(tmp_path, clock):
    """A sync client (OneDrive, iCloud, Google Drive) rewriting a note in place truncates it,
    then writes the text: a pass that read it between left a version of 0 bytes in `brain
    history`, between a day-old version and the new one (the rule looked only at the day-old
    one's span). An empty version replaced within the interval of its own start is folded."""
    root = tmp_path / "vault"
    write(root, "Other.md", "# Other\n\nElse.\n")
    created = _save(root, clock, 0, _essay("Words about [[Other]] and the kiln."))
    _save(root, clock, 86400, "")  # a day on, the client truncates it
    filled = _save(root, clock, 2, _essay("Words about [[Other]] and the kiln, edited elsewhere."))
    versions = _versions(root)
    assert [(v.recorded_from, v.recorded_to, v.event, v.ended) for v in versions] == [
        (created, filled, "created", "changed"),
        (filled, None, "changed", None),
    ]
    assert history_problems(_db(root)) == []
    assert "the kiln" in _as_of(root, filled - 1, "words kiln")  # the day-old text, up to the new one

    # the same bytes written back (the client fetched what was there): one version, as before
    clock.now += 86400
    _save(root, clock, 0, "")
    _save(root, clock, 1, _essay("Words about [[Other]] and the kiln, edited elsewhere."))
    assert [(v.recorded_from, v.recorded_to) for v in _versions(root)][1:] == [(filled, None)]
    assert history_problems(_db(root)) == []


def test_a_note_emptied_for_good_keeps_its_empty_version(tmp_path, clock):
    """Emptied and left so past the interval, then written: the empty version stood, and is kept."""
    root = tmp_path / "vault"
    write(root, "Other.md", "# Other\n\nElse.\n")
    _save(root, clock, 0, _essay("Words."))
    emptied = _save(root, clock, 86400, "")
    _save(root, clock, 3600, _essay("New words."))
    assert [(v.recorded_from, v.size) for v in _versions(root)][1] == (emptied, 0)
    assert [v.event for v in _versions(root)] == ["created", "changed", "changed"]


def test_a_rename_within_the_interval_folds_too(tmp_path, clock):
    root = tmp_path / "vault"
    write(root, "Other.md", "# Other\n\nElse.\n")
    _save(root, clock, 0, _essay("Words."))
    _save(root, clock, 3600, _essay("More words."))
    _save(root, clock, 5, _essay("Even more words."))
    clock.now += 5
    (root / "Essay.md").rename(root / "Renamed.md")
    index_vault(root, progress=False)
    versions = _versions(root, "Renamed.md")
    assert [(v.path, v.event) for v in versions] == [
        ("Essay.md", "created"),
        ("Essay.md", "changed"),
        ("Renamed.md", "changed"),  # the kept version held other words: a change, not a rename
    ]
    assert history_problems(_db(root)) == []


def test_interval_zero_keeps_every_save(tmp_path, clock, monkeypatch):
    monkeypatch.setenv("BRAIN_VERSION_INTERVAL", "0")
    root = tmp_path / "vault"
    for i in range(5):
        _save(root, clock, 1, _essay(f"Save {i}."))
    assert len(_versions(root)) == 5


def test_the_interval_is_validated_and_shown(tmp_path, monkeypatch):
    for bad in ("soon", "-1", "nan", "inf", "604801"):
        monkeypatch.setenv("BRAIN_VERSION_INTERVAL", bad)
        with pytest.raises(ConfigError, match="BRAIN_VERSION_INTERVAL"):
            config.version_interval()
    monkeypatch.delenv("BRAIN_VERSION_INTERVAL")
    assert config.version_interval() == 300
    root = tmp_path / "vault"
    write(root, "Essay.md", _essay("Words."))
    assert CliRunner().invoke(cli, ["index", "--vault", str(root)]).exit_code == 0  # no history line before
    result = CliRunner().invoke(cli, ["status", "--vault", str(root)])
    assert result.exit_code == 0, result.output
    assert "saves within 5 min as one" in result.output
    result = CliRunner().invoke(cli, ["status", "--vault", str(root), "--json"])
    assert '"version_interval": 300' in result.output


def test_brain_history_of_a_note_edited_in_one_sitting_shows_the_sitting_once(toy_vault, monkeypatch):
    """The real clock, the CLI, the toy vault: three quick edits after the first index are one
    version beside the first; with the interval at 0, each its own."""
    monkeypatch.setenv("BRAIN_VERSION_INTERVAL", "300")
    note = toy_vault / "Home.md"
    runner = CliRunner()
    assert runner.invoke(cli, ["index", "--vault", str(toy_vault)]).exit_code == 0
    for i in range(3):
        note.write_text(note.read_text(encoding="utf-8") + f"\nEdit {i} of the sitting.\n", encoding="utf-8")
        assert runner.invoke(cli, ["index", "--vault", str(toy_vault)]).exit_code == 0
    shown = runner.invoke(cli, ["history", note.stem, "--vault", str(toy_vault), "--json"])
    assert shown.exit_code == 0, shown.output
    assert len(json.loads(shown.output)["versions"]) == 2
    monkeypatch.setenv("BRAIN_VERSION_INTERVAL", "0")
    for i in range(3):
        note.write_text(note.read_text(encoding="utf-8") + f"\nLater edit {i}.\n", encoding="utf-8")
        assert runner.invoke(cli, ["index", "--vault", str(toy_vault)]).exit_code == 0
    shown = runner.invoke(cli, ["history", note.stem, "--vault", str(toy_vault), "--json"])
    assert len(json.loads(shown.output)["versions"]) == 5


def test_saves_hours_apart_are_kept_while_the_clock_is_behind_history(tmp_path, clock):
    """A clock set back a day: history's moments then step a millisecond past its latest, so
    they cannot tell saves an hour apart from saves a second apart; each is kept."""
    root = tmp_path / "vault"
    write(root, "Other.md", "# Other\n\nElse.\n")
    _save(root, clock, 0, _essay("First."))
    _save(root, clock, 3600, _essay("Second."))
    clock.now -= 86400
    for i in range(4):
        _save(root, clock, 3600, _essay(f"Hourly {i}."))
    assert [v.event for v in _versions(root)] == ["created"] + ["changed"] * 5
    assert history_problems(_db(root)) == []
    clock.now += 86400  # caught up: saves seconds apart fold again
    for words in ("Typing.", "Typing on.", "Typing on and on."):
        _save(root, clock, 5, _essay(words))
    assert len(_versions(root)) == 8


def _graph_then(root: Path, moment: float, source: str) -> set[tuple[str, str | None]]:
    """(target as written, the path it resolved to, None: dangling) of the links recorded from
    ``source`` (a path it ever had) at ``moment``."""
    conn = sqlite3.connect(_db(root))
    try:
        rows = conn.execute(
            "SELECT e.target, (SELECT v.path FROM note_versions v WHERE v.note_id = e.target_id"
            "  AND v.recorded_from <= ?1 AND (v.recorded_to IS NULL OR v.recorded_to > ?1))"
            " FROM link_history e WHERE e.source_id = (SELECT note_id FROM note_versions WHERE path = ?2)"
            " AND e.recorded_from <= ?1 AND (e.recorded_to IS NULL OR e.recorded_to > ?1)",
            (moment, source),
        ).fetchall()
        return {(r[0], r[1]) for r in rows}
    finally:
        conn.close()


def test_a_version_whose_links_resolved_otherwise_in_its_time_is_kept(tmp_path, clock):
    """Saves 5 s apart, and between two of them a linked note is renamed and a note a dangling
    link names appears: the links the version wrote resolved otherwise from then on. Folded,
    the kept version's links would stand for that time resolved as before it (to the old name,
    dangling to the new note): kept, the graph then is the graph brain had."""
    root = tmp_path / "vault"
    write(root, "Target.md", "# Target\n\nThe target.\n")
    _save(root, clock, 0, _essay("See [[Target]] and [[Newcomer]]."))
    _save(root, clock, 3600, _essay("See [[Target]] and [[Newcomer]]. More."))
    _save(root, clock, 5, _essay("See [[Target]] and [[Newcomer]]. More and more."))
    clock.now += 5
    (root / "Target.md").rename(root / "Moved.md")
    write(root, "Newcomer.md", "# Newcomer\n\nNew.\n")
    index_vault(root, progress=False)
    renamed = clock.now
    then = {("Target", None), ("Newcomer", "Newcomer.md")}
    assert _graph_then(root, renamed + 1, "Essay.md") == then
    _save(root, clock, 5, _essay("See [[Target]] and [[Newcomer]]. More and more and more."))
    assert _graph_then(root, renamed + 1, "Essay.md") == then
    assert len(_versions(root)) == 4
    assert history_problems(_db(root)) == []


def test_a_version_whose_dropped_link_would_resolve_otherwise_is_kept(tmp_path, clock):
    """The version before wrote [[Target]], the quick save after it no longer does, and Target is
    renamed before the next save: folded, [[Target]] would stand resolved to the renamed note
    for a time it would have dangled."""
    root = tmp_path / "vault"
    write(root, "Target.md", "# Target\n\nThe target.\n")
    _save(root, clock, 0, _essay("Start."))
    settled = _save(root, clock, 3600, _essay("See [[Target]]."))
    _save(root, clock, 5, _essay("See nothing."))
    clock.now += 5
    (root / "Target.md").rename(root / "Moved.md")
    index_vault(root, progress=False)
    renamed = clock.now
    _save(root, clock, 5, _essay("See nothing at all."))
    assert _graph_then(root, settled + 1, "Essay.md") == {("Target", "Target.md")}
    assert ("Target", "Moved.md") not in _graph_then(root, renamed + 1, "Essay.md")
    assert history_problems(_db(root)) == []


def test_a_quick_rename_others_link_to_is_kept(tmp_path, clock):
    """Renamed 5 s after an edit, then edited again: another note's links to the old and the new
    name resolved otherwise during the rename's time. Folded, the note would stand at its old
    path with the new name's link resolved to it and the old one's dangling."""
    root = tmp_path / "vault"
    write(root, "Other.md", "# Other\n\nSee [[Essay]] and [[Renamed]].\n")
    _save(root, clock, 0, _essay("Words."))
    _save(root, clock, 3600, _essay("More words."))
    clock.now += 5
    (root / "Essay.md").rename(root / "Renamed.md")
    index_vault(root, progress=False)
    moved = clock.now
    _save(root, clock, 5, _essay("More words, renamed."), "Renamed.md")
    assert _graph_then(root, moved + 1, "Other.md") == {("Essay", None), ("Renamed", "Renamed.md")}
    assert [v.path for v in _versions(root, "Renamed.md")] == ["Essay.md", "Essay.md", "Renamed.md", "Renamed.md"]
    assert history_problems(_db(root)) == []


def test_a_quick_save_that_dropped_an_alias_others_then_wrote_is_kept(tmp_path, clock):
    """The version before had the alias Kiln, a quick save dropped it, and a note written then
    links [[Kiln]]: dangling then. Folded, the note would have the alias then, with a link to it
    dangling."""
    root = tmp_path / "vault"
    _save(root, clock, 0, _essay("Words."))
    _save(root, clock, 3600, "---\naliases: [Kiln]\n---\n" + _essay("More words."))
    _save(root, clock, 5, _essay("More words, no alias."))
    clock.now += 5
    write(root, "Other.md", "# Other\n\nSee [[Kiln]].\n")
    index_vault(root, progress=False)
    written = clock.now
    _save(root, clock, 5, _essay("More words, no alias, on."))
    store = open_store(root)
    try:
        then = {v.note_id: v for v in store.versions_at(written + 1)}
        essay = then[store.note_id("Essay.md")]  # type: ignore[index]
    finally:
        store.close()
    assert essay.aliases == "[]"
    assert _graph_then(root, written + 1, "Other.md") == {("Kiln", None)}
    assert history_problems(_db(root)) == []


def test_an_edit_undone_within_the_interval_leaves_the_version_as_it_was(tmp_path, clock):
    """A quick edit and its undo: the note is as it was, one version, its links one span each;
    not the same content again as a 'changed' version."""
    root = tmp_path / "vault"
    write(root, "Canary.md", "# Canary\n\nA bird.\n")
    _save(root, clock, 0, _essay("Start."))
    settled = _save(root, clock, 3600, _essay("See [[Canary]]."))
    _save(root, clock, 5, _essay("See nothing."))
    _save(root, clock, 5, _essay("See [[Canary]]."))
    assert [(v.recorded_from, v.recorded_to, v.event) for v in _versions(root)] == [
        (START, settled, "created"),
        (settled, None, "changed"),
    ]
    store = open_store(root)
    try:
        spans = [(e.target, e.recorded_from, e.recorded_to) for e in store.edges_from(store.note_id("Essay.md"))]  # type: ignore[arg-type]
    finally:
        store.close()
    assert spans == [("Canary", settled, None)]
    assert history_problems(_db(root)) == []
    shown = CliRunner().invoke(cli, ["history", "Essay", "--vault", str(root), "--json"])
    changes = [v["changes"] for v in json.loads(shown.output)["versions"]]
    assert len(changes) == 2 and "same content" not in changes[1]


def test_a_link_the_kept_version_and_the_next_both_write_is_one_span(tmp_path, clock):
    root = tmp_path / "vault"
    write(root, "Canary.md", "# Canary\n\nA bird.\n")
    _save(root, clock, 0, _essay("Start."))
    settled = _save(root, clock, 3600, _essay("See [[Canary]]."))
    _save(root, clock, 5, _essay("See nothing."))
    last = _save(root, clock, 5, _essay("See [[Canary]] again."))
    assert [(v.recorded_from, v.recorded_to) for v in _versions(root)][1:] == [(settled, last), (last, None)]
    store = open_store(root)
    try:
        spans = [(e.target, e.recorded_from, e.recorded_to) for e in store.edges_from(store.note_id("Essay.md"))]  # type: ignore[arg-type]
    finally:
        store.close()
    assert spans == [("Canary", settled, None)]
    assert history_problems(_db(root)) == []


def test_a_prune_while_the_clock_is_behind_history_says_what_it_dropped(tmp_path, clock):
    """`brain prune --before WHEN` with the clock set back a day: it drops what was replaced
    before WHEN, so `--as-of` before WHEN must say the past there is incomplete (it recorded the
    clock's now instead, a day before, and answered as if the pruned version never was)."""
    from brain.index.prune import prune_vault

    root = tmp_path / "vault"
    write(root, "Other.md", "# Other\n\nElse.\n")
    first = _save(root, clock, 0, _essay("Alpha words."))
    _save(root, clock, 3600, _essay("Beta words."))
    last = _save(root, clock, 3600, _essay("Gamma words."))
    clock.now -= 86400
    prune_vault(root, before=last - 1)
    recaller = open_recaller(root, update=False, as_of=first + 60)
    try:
        result = recaller.ask("alpha words", "hybrid", RecallSettings(k=5))
    finally:
        recaller.close()
    assert any("was pruned" in warning for warning in result.warnings)
    assert history_problems(_db(root)) == []


def test_brain_serve_indexing_saves_a_second_apart_keeps_the_sitting_as_one_version(tmp_path, monkeypatch):
    """`brain serve` (its watcher, the real clock) indexes each of eight saves a second apart:
    the note's history is the content it had before the sitting and the last save, each text
    kept, spans end to end."""
    from serve_helpers import served, wait_until

    from brain.notes import content_hash

    monkeypatch.setenv("BRAIN_VERSION_INTERVAL", "300")
    root = tmp_path / "vault"
    write(root, "Other.md", "# Other\n\nSee [[Essay]].\n")
    write(root, "Essay.md", _essay("Before the sitting."))
    index_vault(root, progress=False)
    texts = [_essay("Before the sitting.", *[f"Sentence {j} of the sitting." for j in range(i + 1)]) for i in range(8)]
    with served(root) as daemon:
        for text in texts:
            time.sleep(1)
            write(root, "Essay.md", text)
            wait_until(lambda: _current_hash(root) == content_hash(text.encode()), 30, "the save")  # noqa: B023
        assert daemon.service.watcher.passes >= 8
    shown = CliRunner().invoke(cli, ["history", "Essay", "--vault", str(root), "--json"])
    versions = json.loads(shown.output)["versions"]
    assert [(v["event"], v["text_kept"]) for v in versions] == [("created", True), ("changed", True)]
    assert versions[0]["recorded_to"] == versions[1]["recorded_from"]
    store = open_store(root)
    try:
        kept = [store.version_bytes(v.id) for v in store.versions_of(store.note_id("Essay.md"))]  # type: ignore[arg-type]
    finally:
        store.close()
    assert kept == [_essay("Before the sitting.").encode(), texts[-1].encode()]
    assert history_problems(_db(root)) == []


def _current_hash(root: Path) -> str | None:
    store = open_store(root)
    try:
        return store.note_hash(store.note_id("Essay.md") or 0)
    finally:
        store.close()


def test_a_version_whose_dropped_link_dangled_for_a_while_is_kept(tmp_path, clock):
    """The version before wrote [[Target]], the quick save after it does not, and Target is
    deleted and brought back (the same note) before the next save: folded, [[Target]] would
    stand resolved over the seconds Target was not there."""
    root = tmp_path / "vault"
    write(root, "Target.md", "# Target\n\nThe target.\n")
    _save(root, clock, 0, _essay("Start."))
    _save(root, clock, 3600, _essay("See [[Target]]."))
    _save(root, clock, 5, _essay("See nothing."))
    clock.now += 5
    (root / "Target.md").unlink()
    index_vault(root, progress=False)
    gone = clock.now
    clock.now += 5
    write(root, "Target.md", "# Target\n\nThe target.\n")
    index_vault(root, progress=False)
    _save(root, clock, 5, _essay("See nothing at all."))
    conn = sqlite3.connect(_db(root))
    try:
        written = conn.execute(
            "SELECT status FROM link_history WHERE target = 'Target' AND recorded_from <= ?1"
            " AND (recorded_to IS NULL OR recorded_to > ?1)",
            (gone + 1,),
        ).fetchall()
    finally:
        conn.close()
    assert written == []  # the version then wrote no [[Target]]; had it, it would have dangled
    assert history_problems(_db(root)) == []
