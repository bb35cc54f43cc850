"""A note's frontmatter date is read by the rules `--as-of` reads (brain/moments.py), not by
Python's ``fromisoformat``, which took any one character between a date and a time:
``date: 2026-12-01+03`` was 03:00 that day, ``2026-12-01x10`` 10:00. And m024 reads again the
notes of an older index whose date may have been read so."""

from __future__ import annotations

import sqlite3
import time

import pytest
from conftest import FakeEmbedder, write
from index_helpers import history_problems, index_into

from brain.errors import ConfigError
from brain.index.schema import INDEX_MIGRATIONS
from brain.index.store import IndexStore
from brain.moments import parse_moment, parse_world_date
from brain.notes import WorldTime, parse_note, world_time


@pytest.mark.parametrize(
    ("written", "read"),
    [
        ("2026-12-01+03", "2026-12-01"),  # a day with a zone: that day, not 03:00
        ("2026-12-01-05", "2026-12-01"),  # not 05:00
        ("2026-12-01Z", "2026-12-01"),
        ("2026-12-01T10:00+03", "2026-12-01T10:00:00+03:00"),
        ("'2026-12-01 10:00'", "2026-12-01T10:00:00"),
        ("'20261201'", "2026-12-01"),
        ("2026-05-06 standup", "2026-05-06"),  # a date, then words: as before
    ],
)
def test_a_frontmatter_date_is_read_as_as_of_reads_it(written, read):
    note = parse_note("n.md", f"---\ndate: {written}\nvalid_from: {written}\n---\nbody\n".encode(), 0)
    assert (note.date, note.warnings) == (read, [])
    assert world_time(note.frontmatter).valid_from == read


@pytest.mark.parametrize("written", ["2026-12-01x10", "2026-12-01T25:00", "2026-12-01+3"])
def test_a_date_run_on_into_what_cannot_be_read_is_a_warning_not_a_time(written):
    note = parse_note("n.md", f"---\ndate: {written}\n---\nbody\n".encode(), 86400)
    assert note.date == "1970-01-02T00:00:00+00:00"  # the file's mtime, not 10:00 that day
    assert note.warnings == [
        f"frontmatter date: '{written}' is not a valid date; the file's modification time is used instead"
    ]


def test_an_index_from_before_m024_reads_again_the_notes_whose_date_was_read_otherwise(tmp_path):
    vault, home = tmp_path / "vault", tmp_path / "home"
    write(vault, "Zoned.md", "---\ndate: 2026-12-01+03\nvalid_to: 2027-01-01+03\n---\n# Zoned\n\nfirst words.\n")
    write(vault, "Plain.md", "---\ndate: 2026-12-01\n---\n# Plain\n\nother words.\n")
    index_into(home, vault)
    write(vault, "Zoned.md", "---\ndate: 2026-12-01+03\nvalid_to: 2027-01-01+03\n---\n# Zoned\n\nnew words.\n")
    _, directory = index_into(home, vault)
    conn = sqlite3.connect(directory / "index.db", isolation_level=None)
    # as a brain from before m024 stored them: 03:00 that day, in the note and both its versions
    conn.execute("UPDATE notes SET date = '2026-12-01T03:00:00' WHERE path = 'Zoned.md'")
    conn.execute(
        "UPDATE note_versions SET date = '2026-12-01T03:00:00', valid_to = '2027-01-01T03:00:00'"
        " WHERE path = 'Zoned.md'"
    )
    conn.execute("DELETE FROM _migrations WHERE name = 'm024_frontmatter_dates'")
    versions = conn.execute("SELECT count(*) FROM note_versions").fetchone()[0]
    conn.close()

    store = IndexStore.open(directory, create=False)  # migrates
    try:
        assert "m024_frontmatter_dates" in INDEX_MIGRATIONS.applied(store.conn)
        past = store.conn.execute(
            "SELECT DISTINCT date, valid_to FROM note_versions WHERE path = 'Zoned.md'"
        ).fetchall()
        assert [tuple(row) for row in past] == [("2026-12-01", "2027-01-01")]  # at once, the past versions too
    finally:
        store.close()
    embedder = FakeEmbedder()
    report, _ = index_into(home, vault, embedder)
    assert (report.changed, embedder.embedded) == (1, [])  # read again: the same bytes, no new vector
    conn = sqlite3.connect(directory / "index.db")
    try:
        dates = dict(conn.execute("SELECT path, date FROM notes").fetchall())
        assert dates == {"Zoned.md": "2026-12-01", "Plain.md": "2026-12-01"}
        assert conn.execute("SELECT count(*) FROM note_versions").fetchone()[0] == versions  # no new version
    finally:
        conn.close()
    again = FakeEmbedder()
    report, _ = index_into(home, vault, again)
    assert report.changed == 0


# Other scripts' digits: Python's ``\d`` and ``int`` read them, YAML's dates and Obsidian's date
# properties do not (YAML 1.1's timestamp is ``[0-9]``; Obsidian writes and reads YYYY-MM-DD in ASCII),
# and neither does a typed moment (``--as-of``, ``--valid-at``) since it is ASCII alone.
OTHER_DIGITS = {
    "arabic-indic": ("٢٠٢٤-٠٣-٠١", "2024-03-01"),
    "fullwidth": ("２０２４-０３-０１", "2024-03-01"),
    "fullwidth-hyphens": ("２０２４－０３－０１", "2024-03-01"),
    "devanagari": ("२०२४-०३-०१", "2024-03-01"),
    "basic": ("'٢٠٢٤٠٣٠١'", "20240301"),
    "one-digit": ("2024-٠٣-01", "2024-03-01"),
    "week": ("2024-W٠9", "2024-W09"),
    "zone": ("2024-03-01+٠3", "2024-03-01+03"),
    "date-and-time": ("٢٠٢٤-٠٣-٠١T١٠:٠٠", "2024-03-01T10:00"),
    "then-words": ("'٢٠٢٤-٠٣-٠١ standup'", "2024-03-01 standup"),
}


@pytest.mark.parametrize("written", list(OTHER_DIGITS), ids=list(OTHER_DIGITS))
def test_a_date_in_other_digits_than_ascii_is_no_date_as_in_yaml_obsidian_and_as_of(written):
    """``date: ٢٠٢٤-٠٣-٠١`` was read as 2024-03-01 (and ``valid_from`` alike), while the same text
    typed to --as-of or --valid-at is refused, and YAML and Obsidian read it as text."""
    import yaml

    value, ascii_form = OTHER_DIGITS[written]
    shown = value.strip("'")
    assert isinstance(yaml.safe_load(f"date: {value}")["date"], str)  # not a YAML date
    with pytest.raises(ConfigError):
        parse_world_date(shown)
    with pytest.raises(ConfigError):
        parse_moment(shown)
    note = parse_note("n.md", f"---\ndate: {value}\nvalid_from: {value}\n---\nbody\n".encode(), 86400)
    assert note.date == "1970-01-02T00:00:00+00:00"  # the file's mtime
    hint = f"(not in ASCII digits: YAML and Obsidian read it as text too; write {ascii_form})"
    assert note.warnings == [
        f"frontmatter date: '{shown}' is not a valid date {hint}; the file's modification time is used instead",
        f"frontmatter valid_from: '{shown}' is not a valid date {hint}; ignored",
    ]
    assert world_time(note.frontmatter) == WorldTime()
    # what the ASCII form says is read: the hint names a date
    fixed = parse_note("n.md", f"---\ndate: '{ascii_form}'\n---\nbody\n".encode(), 86400)
    assert fixed.warnings == [] and not fixed.date.startswith("1970")


def test_a_date_in_ascii_digits_then_words_in_other_digits_is_still_that_date():
    note = parse_note("n.md", "---\ndate: 2024-03-01 الجلسة ٢\n---\nbody\n".encode(), 0)
    assert (note.date, note.warnings) == ("2024-03-01", [])


def test_an_index_from_before_m025_reads_again_the_notes_dated_in_other_digits(tmp_path):
    vault, home = tmp_path / "vault", tmp_path / "home"
    write(vault, "Arabic.md", "---\ndate: ٢٠٢٤-٠٣-٠١\nvalid_to: ٢٠٢٥-٠١-٠١\n---\n# Arabic\n\nfirst words.\n")
    write(vault, "Plain.md", "---\ndate: 2024-03-01\ntitle: Plain ٢\n---\n# Plain\n\nother words.\n")
    index_into(home, vault)
    write(vault, "Arabic.md", "---\ndate: ٢٠٢٤-٠٣-٠١\nvalid_to: ٢٠٢٥-٠١-٠١\n---\n# Arabic\n\nnew words.\n")
    _, directory = index_into(home, vault)
    conn = sqlite3.connect(directory / "index.db", isolation_level=None)
    mtime_date = conn.execute("SELECT date FROM notes WHERE path = 'Arabic.md'").fetchone()[0]
    assert mtime_date.startswith(time.strftime("%Y-"))  # this code: the file's mtime, not 2024-03-01
    # as a brain from before m025 stored them: 2024-03-01, in the note and both its versions
    conn.execute("UPDATE notes SET date = '2024-03-01' WHERE path = 'Arabic.md'")
    conn.execute(
        "UPDATE note_versions SET date = '2024-03-01', world_date = '2024-03-01', valid_to = '2025-01-01'"
        " WHERE path = 'Arabic.md'"
    )
    conn.execute("DELETE FROM _migrations WHERE name = 'm025_frontmatter_dates_in_ascii_digits'")
    versions = conn.execute("SELECT count(*) FROM note_versions").fetchone()[0]
    conn.close()

    store = IndexStore.open(directory, create=False)  # migrates
    try:
        assert "m025_frontmatter_dates_in_ascii_digits" in INDEX_MIGRATIONS.applied(store.conn)
        past = store.conn.execute(
            "SELECT DISTINCT world_date, valid_to FROM note_versions WHERE path = 'Arabic.md'"
        ).fetchall()
        assert [tuple(row) for row in past] == [(None, None)]  # at once, the past versions too
    finally:
        store.close()
    embedder = FakeEmbedder()
    report, _ = index_into(home, vault, embedder)
    assert (report.changed, embedder.embedded) == (1, [])  # read again: the same bytes, no new vector
    conn = sqlite3.connect(directory / "index.db")
    try:
        dates = dict(conn.execute("SELECT path, date FROM notes").fetchall())
        assert dates["Plain.md"] == "2024-03-01" and dates["Arabic.md"].startswith(time.strftime("%Y-")), dates
        assert conn.execute("SELECT count(*) FROM note_versions").fetchone()[0] == versions  # no new version
    finally:
        conn.close()
    again = FakeEmbedder()
    report, _ = index_into(home, vault, again)
    assert report.changed == 0


def test_a_date_key_in_any_case_dates_the_note_as_it_dates_the_world():
    # world_time read "Created:" (any case); the note's date read "created" alone and fell back
    # to the file's modification time (0 here: 1970).
    note = parse_note("A.md", b"---\nCreated: 2024-01-01\n---\nBody.\n", 0)
    assert (note.date, world_time(note.frontmatter).date) == ("2024-01-01", "2024-01-01")
    assert parse_note("B.md", b"---\nLAST_MODIFIED: 2024-02-03\n---\n", 0).date == "2024-02-03"
    # the usual key first, in the note's date and its world date alike (world_time took the last)
    both = parse_note("C.md", b"---\ncreated: 2024-01-01\nCreated: 2025-05-05\n---\n", 0)
    assert (both.date, world_time(both.frontmatter).date) == ("2024-01-01", "2024-01-01")
    # and a key in other case that holds no date is named as written
    odd = parse_note("D.md", b"---\nDate: soon\n---\n", 0)
    assert odd.date.startswith("1970-") and any("frontmatter Date:" in w for w in odd.warnings), odd.warnings


def test_an_index_from_before_m030_reads_again_the_notes_dated_by_a_capitalised_key(tmp_path):
    vault, home = tmp_path / "vault", tmp_path / "home"
    write(vault, "Cap.md", "---\nCreated: 2024-01-01\n---\n# Cap\n\nfirst words.\n")
    write(vault, "Plain.md", "---\ncreated: 2024-03-01\nTitle: Plain\n---\n# Plain\n\nother words.\n")
    index_into(home, vault)
    write(vault, "Cap.md", "---\nCreated: 2024-01-01\n---\n# Cap\n\nnew words.\n")
    _, directory = index_into(home, vault)
    conn = sqlite3.connect(directory / "index.db", isolation_level=None)
    # as a brain from before m030 stored them: the file's modification time, in the note and its versions
    conn.execute("UPDATE notes SET date = '2026-12-06T10:00:00+00:00' WHERE path = 'Cap.md'")
    conn.execute("UPDATE note_versions SET date = '2026-12-06T10:00:00+00:00' WHERE path = 'Cap.md'")
    conn.execute("DELETE FROM _migrations WHERE name = 'm030_date_keys_in_any_case'")
    versions = conn.execute("SELECT count(*) FROM note_versions").fetchone()[0]
    conn.close()

    store = IndexStore.open(directory, create=False)  # migrates
    try:
        assert "m030_date_keys_in_any_case" in INDEX_MIGRATIONS.applied(store.conn)
        past = store.conn.execute("SELECT DISTINCT date FROM note_versions WHERE path = 'Cap.md'").fetchall()
        assert [tuple(row) for row in past] == [("2024-01-01",)]  # at once, the past versions too
    finally:
        store.close()
    embedder = FakeEmbedder()
    report, _ = index_into(home, vault, embedder)
    assert (report.changed, embedder.embedded) == (1, [])  # read again: the same bytes, no new vector
    conn = sqlite3.connect(directory / "index.db")
    try:
        dates = dict(conn.execute("SELECT path, date FROM notes").fetchall())
        assert dates == {"Cap.md": "2024-01-01", "Plain.md": "2024-03-01"}
        assert conn.execute("SELECT count(*) FROM note_versions").fetchone()[0] == versions  # no new version
    finally:
        conn.close()
    assert index_into(home, vault)[0].changed == 0  # once


def test_a_status_key_in_any_case_is_the_notes_status():
    # world_time read "status" alone: "Status: Done" left the note without one
    note = parse_note("A.md", b"---\nStatus: Done\n---\nBody.\n", 0)
    assert world_time(note.frontmatter).status == "done"
    # the usual key first, as for dates
    both = parse_note("B.md", b"---\nSTATUS: open\nstatus: done\n---\n", 0)
    assert world_time(both.frontmatter).status == "done"


def test_an_index_from_before_m032_reads_again_the_notes_with_a_capitalised_status(tmp_path):
    vault, home = tmp_path / "vault", tmp_path / "home"
    write(vault, "Cap.md", "---\nStatus: Done\n---\n# Cap\n\nfirst words [[Plain]].\n")
    write(vault, "Plain.md", "---\nstatus: open\n---\n# Plain\n\nother words.\n")
    index_into(home, vault)
    write(vault, "Cap.md", "---\nStatus: Done\n---\n# Cap\n\nnew words [[Plain]].\n")
    _, directory = index_into(home, vault)
    conn = sqlite3.connect(directory / "index.db", isolation_level=None)
    # as a brain from before m032 stored them: no status, in the versions and the edges
    conn.execute("UPDATE note_versions SET status = NULL WHERE path = 'Cap.md'")
    conn.execute("UPDATE link_history SET note_status = NULL")
    conn.execute("DELETE FROM _migrations WHERE name = 'm032_status_key_in_any_case'")
    versions = conn.execute("SELECT count(*) FROM note_versions").fetchone()[0]
    conn.close()

    store = IndexStore.open(directory, create=False)  # migrates
    try:
        assert "m032_status_key_in_any_case" in INDEX_MIGRATIONS.applied(store.conn)
        past = store.conn.execute("SELECT status FROM note_versions WHERE path = 'Cap.md'").fetchall()
        assert [tuple(row) for row in past] == [("done",), ("done",)]  # at once, the past version too
    finally:
        store.close()
    embedder = FakeEmbedder()
    report, _ = index_into(home, vault, embedder)
    assert (report.changed, embedder.embedded) == (1, [])  # read again: the same bytes, no new vector
    conn = sqlite3.connect(directory / "index.db")
    try:
        assert conn.execute("SELECT count(*) FROM note_versions").fetchone()[0] == versions  # no new version
        open_edges = conn.execute("SELECT note_status FROM link_history WHERE recorded_to IS NULL").fetchall()
        assert [tuple(row) for row in open_edges] == [("done",)]
    finally:
        conn.close()
    assert index_into(home, vault)[0].changed == 0  # once


@pytest.mark.parametrize(
    ("key", "values", "column", "migration"),
    [
        ("Status", ("draft", "done"), "note_status", "m032_status_key_in_any_case"),
        ("valid_from", ("2024-01-01+03", "2024-02-01+03"), "valid_from", "m024_frontmatter_dates"),
    ],
)
def test_the_past_edges_take_the_world_time_a_migration_reads_again_for_their_versions(
    tmp_path, key, values, column, migration
):
    """A migration that reads past versions' world time again (m024, m025, m030, m032) left the
    edges their links made as an older brain stamped them: the link history said otherwise than
    the versions, and the next run, finding the open edges out of step with the note, closed them
    and opened them anew at the upgrade, as if the note had changed then. The edges follow their
    versions: an edge over versions now read otherwise is cut where they meet."""
    vault, home = tmp_path / "vault", tmp_path / "home"
    write(vault, "Plain.md", "# Plain\n\nother words.\n")
    write(vault, "Cap.md", f"---\n{key}: {values[0]}\n---\n# Cap\n\nfirst words [[Plain]].\n")
    index_into(home, vault)
    write(vault, "Cap.md", f"---\n{key}: {values[1]}\n---\n# Cap\n\nnew words [[Plain]].\n")
    _, directory = index_into(home, vault)
    conn = sqlite3.connect(directory / "index.db", isolation_level=None)
    edges = f"SELECT {column}, recorded_from, recorded_to FROM link_history ORDER BY recorded_from"
    (first, start, change), (second, changed, end) = conn.execute(edges).fetchall()
    assert first != second and change == changed and end is None
    spans = conn.execute("SELECT recorded_from, recorded_to FROM note_versions WHERE path = 'Cap.md'").fetchall()
    assert sorted(spans) == [(start, change), (change, None)]
    # as a brain that did not read the key stored them: no world time, in the versions and the
    # edges, so one edge over both versions
    version_column = "status" if column == "note_status" else column
    conn.execute(f"UPDATE note_versions SET {version_column} = NULL WHERE path = 'Cap.md'")
    conn.execute("DELETE FROM link_history WHERE recorded_from = ?", (change,))
    conn.execute(f"UPDATE link_history SET {column} = NULL, recorded_to = NULL")
    conn.execute("DELETE FROM _migrations WHERE name = ?", (migration,))
    conn.close()

    report, _ = index_into(home, vault)  # migrates, then reads Cap.md again
    assert report.changed == 1
    conn = sqlite3.connect(directory / "index.db")
    try:
        assert conn.execute(edges).fetchall() == [(first, start, change), (second, change, None)]
    finally:
        conn.close()
    assert history_problems(directory / "index.db") == []
    assert index_into(home, vault)[0].changed == 0
