"""What a user or a file hands the query side, held to one-line errors and clean text: --as-of
moments past the calendar, queries that are not valid Unicode, `ab report --since` windows, and
terminal control sequences in notes. Fake embedder throughout."""

from __future__ import annotations

import datetime as dt
import json
import re
import time
from pathlib import Path
from typing import ClassVar

import numpy as np
import pytest
from click.testing import CliRunner
from conftest import FakeEmbedder, write

from brain.cli import cli
from brain.db import connection
from brain.embed import register_embedder
from brain.errors import ConfigError
from brain.evaluation.queries import load_queries
from brain.index.indexer import index_vault
from brain.index.model_probe import PROBE_TEXT
from brain.moments import iso_time, local_iso, local_time, parse_moment, parse_world_date, past_moment, said_moment
from brain.recall.dates import Period, query_period
from brain.recall.opening import open_recaller
from brain.telemetry import ABRow, log_ab, parse_since
from brain.text import terminal_safe, valid_unicode

NOTES = {
    "Agent memory.md": "# Agent memory\n\nAn agent remembers through recall over its notes. See [[Daily]].\n",
    "Daily.md": "---\ndate: 2026-11-30\n---\n# Daily\n\nWhat I did: wrote the memory notes for the agent.\n",
}


@pytest.fixture
def vault(tmp_path) -> Path:
    root = tmp_path / "v"
    for rel, text in NOTES.items():
        write(root, rel, text)
    index_vault(root, progress=False)
    return root


def _one_line_error(out, option: str) -> None:
    assert out.exit_code == 1, out.output
    assert isinstance(out.exception, SystemExit), repr(out.exception)
    assert "Traceback" not in out.output
    assert out.output.startswith("Error: ") and out.output.count("\n") == 1, out.output
    assert option in out.output


# ----- 1. --as-of past the calendar ------------------------------------------------------------

PAST_THE_CALENDAR = [
    "99999999999y",  # before year 1
    "1" * 5000 + "d",  # more digits than int() reads
    "0001-01-01T00:00+14:00",  # 0000-12-31 in UTC
    "9999-12-31T23:59:59-14:00",  # year 10000 in UTC
    "0001-01-01T00:00+00:01",  # a minute before year 1 in UTC
]


@pytest.mark.parametrize("when", PAST_THE_CALENDAR)
def test_as_of_past_the_calendar_is_one_line(vault, zone, when):
    zone("UTC0")
    with pytest.raises(ConfigError, match="end of the calendar"):
        parse_moment(when)
    for extra in ([], ["--json"]):
        out = CliRunner().invoke(cli, ["ask", "--vault", str(vault), "--no-update", *extra, "--as-of", when, "x"])
        _one_line_error(out, "--as-of")
        assert (
            "a date (2026-03-01), a date and time (2026-03-01T14:30), either with a zone (Z, +03, +0300, +03:00), a span back"
            in out.output
        )


# A zone's offset within a day either way: UTC, 5 h behind, 14 h ahead, Manila's LMT before 1844 (-15:56).
ZONES = ["UTC0", "EST5", "KIR-14", "Asia/Manila"]


@pytest.mark.parametrize("spec", ZONES)
def test_the_calendar_the_error_names_is_read_in_every_zone(zone, spec):
    """`--as-of 0001-01-01` was refused as "at or past an end of the calendar (years 1 to 9999)":
    the rule and the words disagreed (local time's ends were a day inside: Python looks a day
    either side). The words name the ends, and every moment within them is read, by every option
    (the first and last day too: ``test_every_day_of_years_1_to_9999_is_read_where_utc_can_show_it``)."""
    zone(spec)
    with pytest.raises(ConfigError) as refused:
        parse_moment("0001-01-01T00:00+00:01")  # a minute before year 1 in UTC
    assert "end of the calendar (years 1 to 9999, in local time and in UTC)" in str(refused.value)
    first, last = dt.datetime(1, 1, 2), dt.datetime(9999, 12, 30, 23, 59, 59)
    for text in ("0001-01-02", "0001-01-02T00:00", "9999-12-30", "9999-12-30T23:59:59"):
        for date_means in ("start", "end"):
            moment = parse_moment(text, "--before", date_means=date_means)
            assert first <= dt.datetime.fromtimestamp(moment) <= last.replace(microsecond=999999), (text, spec)
            assert local_time(moment) and iso_time(moment)  # shown, in local time and in UTC
    assert past_moment("0001-01-02") < time.time()  # --as-of, and brain serve's and brain mcp's as_of


# Zones of a fixed offset, so that which moments UTC can show is known: its own, 5 h behind, 14 ahead.
FIXED_ZONES = {"UTC0": 0, "EST5": -5, "KIR-14": 14}
EDGES = [
    "0001-01-01",
    "0001-01-01T00:00",
    "0001-01-01T23:59:59",
    "9999-12-31",
    "9999-12-31T00:00",
    "9999-12-31T23:59:59",
]


@pytest.mark.parametrize("spec", FIXED_ZONES)
@pytest.mark.parametrize("date_means", ["start", "end"])
def test_every_day_of_years_1_to_9999_is_read_where_utc_can_show_it(zone, spec, date_means):
    """Local time's first and last day of the calendar were refused in every zone ("0001-01-02 to
    9999-12-30, local time"): Python's own conversions look at local time a day either side. A
    moment is read now when UTC can show it too, and shown in local time as it was typed."""
    zone(spec)
    offset = dt.timedelta(hours=FIXED_ZONES[spec])
    for text in EDGES:
        local = dt.datetime.fromisoformat(text)
        if len(text) == 10 and date_means == "end":
            local = dt.datetime.combine(local.date(), dt.time.max)
        try:
            (local - offset).isoformat()  # what UTC makes of it, if it can
            shown = True
        except OverflowError:
            shown = False
        if not shown:
            with pytest.raises(ConfigError, match="end of the calendar"):
                parse_moment(text, "--before", date_means=date_means)
            continue
        moment = parse_moment(text, "--before", date_means=date_means)
        assert local_time(moment) == local.isoformat(sep=" ", timespec="minutes"), (text, spec)
        assert iso_time(moment) == (local - offset).isoformat(timespec="seconds") + "Z", (text, spec)
        assert said_moment(moment).startswith(local.isoformat(sep=" ", timespec="seconds"))
        assert local_iso(moment) is not None and local_iso(moment).startswith(local.isoformat(timespec="seconds"))


@pytest.mark.parametrize("spec", ["EST5", "KIR-14"])
def test_as_of_the_first_day_of_year_1_is_before_history_not_past_the_calendar(vault, zone, spec):
    zone(spec)
    for args in (["ask", "--no-update", "x"], ["note", "Daily"]):
        out = CliRunner().invoke(cli, [*args, "--vault", str(vault), "--as-of", "0001-01-01"])
        _one_line_error(out, "")
        assert out.output.startswith("Error: as of 0001-01-01 23:59 nothing is known"), out.output


def test_the_end_of_9999_in_a_zone_behind_utc_is_one_line(vault, zone):
    """The end of 9999-12-31 west of Greenwich is year 10000 in UTC."""
    zone("EST5")
    out = CliRunner().invoke(cli, ["ask", "--vault", str(vault), "--no-update", "--as-of", "9999-12-31", "x"])
    _one_line_error(out, "--as-of")
    zone("KIR-14")  # and 14 hours ahead, the local end of the calendar comes before UTC's
    out = CliRunner().invoke(cli, ["ask", "--vault", str(vault), "--no-update", "--as-of", "9999-12-31T23:59Z", "x"])
    _one_line_error(out, "--as-of")


@pytest.mark.parametrize("when", ["99999999999y", "0001-01-01T00:00+14:00"])
def test_prune_before_past_the_calendar_is_one_line_and_prunes_nothing(vault, zone, when):
    zone("UTC0")
    out = CliRunner().invoke(cli, ["prune", "--vault", str(vault), "--before", when])
    _one_line_error(out, "--before")


@pytest.mark.parametrize(
    ("when", "as_of"),
    [
        ("9999-12-31", "9999-12-31T23:59:59Z"),  # its last microsecond rounds into year 10000 as a float
        ("9999-12-30", "9999-12-30T23:59:59Z"),
        ("9999-12-31T23:59:59Z", "9999-12-31T23:59:59Z"),
        ("0001-01-02", "0001-01-02T23:59:59Z"),  # four digits for a year before 1000
        ("0001-01-02T00:00Z", "0001-01-02T00:00:00Z"),
        ("0999-06-01T12:00", "0999-06-01T12:00:00Z"),
    ],
)
@pytest.mark.parametrize("query", ["what did I do yesterday", "notes of last week", "agent memory this month"])
def test_as_of_at_the_calendar_edges_is_one_line_or_answers(vault, zone, when, as_of, query):
    """The edges that fit are read: from `brain ask`, each is one line saying why it cannot be
    answered (still to come; before history began); a view of the past opened there by the
    library answers, with queries naming a period from that day (the dates lane's today)."""
    zone("UTC0")
    runner = CliRunner()
    for extra in ([], ["--json"]):
        out = runner.invoke(cli, ["ask", "--vault", str(vault), "--no-update", *extra, "--as-of", when, query])
        assert out.exit_code == 1 and len(out.output.strip().splitlines()) == 1, out.output
        assert ("is in the future" if when.startswith("9999") else "nothing is known") in out.output
    if not when.startswith("9999"):
        return
    recaller = open_recaller(vault, update=False, as_of=parse_moment(when))
    try:
        result = recaller.ask(query)
    finally:
        recaller.close()
    assert iso_time(result.as_of) == as_of


def test_a_date_in_any_iso_form_means_the_end_of_that_day(zone):
    """`20260301` and `2026-W09-7` are the day `2026-03-01` is, so they mean its end too, not
    its first moment (a day earlier, as they read as a date and time at midnight)."""
    zone("EST5")
    end = parse_moment("2026-03-01")
    assert iso_time(end) == "2026-03-02T04:59:59Z"
    for same in ("20260301", "2026-W09-7", " 2026-03-01 "):
        assert parse_moment(same) == end, same
    assert local_time(parse_moment("2026-03-01T00:00")) == "2026-03-01 00:00"  # a time stays that time
    assert local_time(parse_moment("20260301T0930")) == "2026-03-01 09:30"


def test_a_week_means_the_end_of_its_last_day(zone):
    """`2026-W09` is the week of Monday 2026-02-23 to Sunday 2026-03-01: as a date means its whole
    day, a week means its whole week (Python 3.11 reads it as the Monday; 3.10 not at all)."""
    zone("EST5")
    assert parse_moment("2026-W09") == parse_moment("2026-w09") == parse_moment("2026W09") == parse_moment("2026-03-01")
    assert parse_moment("2026-W09-1") == parse_moment("2026-02-23")
    for bad in ("2026-W54", "2026-W09-8", "2026-W9"):
        with pytest.raises(ConfigError):
            parse_moment(bad)


def test_a_date_with_a_zone_means_the_end_of_that_day_there(zone):
    """`2026-03-01Z` was read as a date and time, the day's first moment: a day before what
    `2026-03-01` means (its end), and `2026-W09Z` the Monday where `2026-W09` is the Sunday."""
    zone("EST5")
    assert iso_time(parse_moment("2026-03-01Z")) == "2026-03-01T23:59:59Z"
    for same in ("2026-03-01z", "20260301Z", "2026-W09-7Z", "2026-W09Z", "2026-03-01+00:00", "2026-03-01-0000"):
        assert parse_moment(same) == parse_moment("2026-03-01Z"), same
    assert iso_time(parse_moment("2026-03-01+03:00")) == "2026-03-01T20:59:59Z"
    assert iso_time(parse_moment("2026-03-01-0530")) == "2026-03-02T05:29:59Z"
    assert parse_moment("2026-W09-1Z") == parse_moment("2026-02-23Z")
    # a time keeps its moment, zone or not
    assert iso_time(parse_moment("2026-03-01T00:00Z")) == "2026-03-01T00:00:00Z"
    assert iso_time(parse_moment("2026-03-01T10:00+03:00")) == "2026-03-01T07:00:00Z"
    # --valid-at: the day as written, the week's Sunday
    assert parse_world_date("2026-W09Z") == parse_world_date("2026-03-01+14:00") == "2026-03-01"
    for bad in ("2026-13-01Z", "2026-W54Z", "2026-02-30+01:00"):
        with pytest.raises(ConfigError, match="takes a date"):
            parse_moment(bad)


@pytest.mark.parametrize(
    ("written", "moment"),
    [
        ("2026-12-01+03", "2026-12-01T20:59:59Z"),  # was 03:00 local: the + read as a date-time separator
        ("2026-12-01+0300", "2026-12-01T20:59:59Z"),
        ("2026-12-01+03:00", "2026-12-01T20:59:59Z"),
        ("2026-12-01-05", "2026-12-02T04:59:59Z"),  # was 05:00 local
        ("2026-12-01Z", "2026-12-01T23:59:59Z"),
        ("20261201+03", "2026-12-01T20:59:59Z"),
        ("2026-W49+03", "2026-12-06T20:59:59Z"),  # was the Monday's 03:00
        ("2026-12-01T10+03", "2026-12-01T07:00:00Z"),
        ("2026-12-01T10+0300", "2026-12-01T07:00:00Z"),
        ("2026-12-01T10:00+03:00", "2026-12-01T07:00:00Z"),
        ("2026-12-01 10:00-05", "2026-12-01T15:00:00Z"),
        ("2026-12-01t10z", "2026-12-01T10:00:00Z"),
        ("2026-12-01T10", "2026-12-01T15:00:00Z"),  # no zone: local
    ],
)
def test_every_zone_form_reads_as_the_moment_it_names(zone, written, moment):
    zone("EST5")
    assert iso_time(parse_moment(written)) == moment


@pytest.mark.parametrize(
    "written",
    ["2026-12-01+3", "2026-12-01+03:00:00", "2026-12-01+24", "2026-12-01+0375", "2026-12-01X10", "2026-12-01 +03"],
)
def test_a_zone_or_separator_of_no_accepted_form_is_an_error_naming_the_forms(written):
    """Python's reader took any one character between a date and a time: `2026-12-01+03:00:00`
    was 03:00 local, `2026-12-01X10` 10:00."""
    with pytest.raises(ConfigError, match=r"takes a date .*\(Z, \+03, \+0300, \+03:00\)"):
        parse_moment(written)
    with pytest.raises(ConfigError, match="takes a date"):
        parse_world_date(written)


def test_as_of_a_date_with_an_hour_only_zone_is_the_end_of_that_day_there(vault, zone):
    """`--as-of 2026-12-01+03` was read as 2026-12-01 03:00 local time; `--valid-at 2026-W49+03`
    as its Monday. (The vault's history begins now: the error names the moment read.)"""
    zone("EST5")
    for command in (["ask", "--vault", str(vault), "--no-update"], ["history", "--vault", str(vault)]):
        args = [*command, "--as-of", "2026-12-01+03", *(["x"] if command[0] == "ask" else ["Daily.md"])]
        out = CliRunner().invoke(cli, args)
        assert out.exit_code == 1 and len(out.output.strip().splitlines()) == 1, out.output
        assert "2026-12-01 15:59" in out.output, out.output  # 20:59:59 UTC, in EST
    assert parse_world_date("2026-W49+03") == parse_world_date("2026-W49") == "2026-12-06"


def test_a_date_with_a_zone_naming_today_there_is_now():
    """As a date naming today (local) is now, not an error for being later today."""
    now = dt.datetime(2026, 3, 1, 12, 0, tzinfo=dt.timezone.utc).timestamp()
    assert past_moment("2026-03-01Z", now=now) == now
    assert past_moment("2026-W09Z", now=now) == now  # its Sunday is today
    assert past_moment("2026-03-01-12:00", now=now) == now  # 00:00 there
    assert past_moment("2026-03-02+14:00", now=now) == now  # 02:00 on the 2nd there
    assert iso_time(past_moment("2026-03-01+14:00", now=now)) == "2026-03-01T09:59:59Z"  # over there
    with pytest.raises(ConfigError, match="is in the future"):
        past_moment("2026-03-02Z", now=now)


def test_as_of_today_with_a_zone_answers(vault):
    """`--as-of <today>Z` meant today's first moment: before the vault's history began, an error."""
    today = dt.datetime.now(dt.timezone.utc).date().isoformat()
    out = CliRunner().invoke(cli, ["ask", "--vault", str(vault), "--no-update", "--as-of", today + "Z", "agent"])
    assert out.exit_code == 0, out.output
    assert "Agent memory" in out.output


def test_as_of_spans_and_dates_of_now_still_answer(vault, zone):
    zone("EST5")
    now = time.time()
    assert parse_moment("12h") == pytest.approx(now - 12 * 3600, abs=5)
    assert parse_moment("7d ago") == pytest.approx(now - 7 * 86400, abs=5)
    assert parse_moment("1y") == pytest.approx(now - 365 * 86400, abs=5)
    assert iso_time(parse_moment("2026-03-01")) == "2026-03-02T04:59:59Z"  # the end of the local day
    assert local_time(parse_moment("2026-03-01T14:30")) == "2026-03-01 14:30"
    # Read, and before the vault's history began (it was indexed just now): one line saying so
    for when in ("7d", "2w", "1y", "2026-03-01", "2026-03-01T14:30", "2026-03-01T14:30+02:00"):
        out = CliRunner().invoke(cli, ["ask", "--vault", str(vault), "--no-update", "--as-of", when, "yesterday"])
        assert out.exit_code == 1 and "nothing is known: brain began keeping" in out.output, out.output
    today = dt.date.fromtimestamp(time.time()).isoformat()  # its end is later today: now
    for when in ("0h", today):
        out = CliRunner().invoke(cli, ["ask", "--vault", str(vault), "--no-update", "--as-of", when, "yesterday"])
        assert out.exit_code == 0, out.output


def test_periods_named_from_the_calendar_ends():
    """A past view of year 1 or 9999: a period that would leave the calendar is none."""
    first, last = dt.date(1, 1, 2), dt.date(9999, 12, 31)
    assert query_period("what did I do yesterday", first) == Period(dt.date(1, 1, 1), first)
    assert query_period("notes of last week", first) is None
    assert query_period("what did I do today", last) is None  # its end, 10000-01-01, is no date
    assert query_period("notes of last month", last) == Period(dt.date(9999, 11, 1), dt.date(9999, 12, 1))


def test_times_before_the_year_1000_keep_four_digits(zone):
    zone("UTC0")
    moment = dt.datetime(999, 6, 1, 12, 30, tzinfo=dt.timezone.utc).timestamp()
    assert iso_time(moment) == "0999-06-01T12:30:00Z"
    assert local_time(moment) == "0999-06-01 12:30"


def test_valid_at_takes_any_calendar_date(vault):
    """--valid-at is a date compared as text: its ends are no trouble, a bad one is one line."""
    for day in ("0001-01-01", "9999-12-31"):
        out = CliRunner().invoke(cli, ["ask", "--vault", str(vault), "--no-update", "--valid-at", day, "yesterday"])
        assert out.exit_code == 0, out.output
    out = CliRunner().invoke(cli, ["ask", "--vault", str(vault), "--no-update", "--valid-at", "10000-01-01", "x"])
    _one_line_error(out, "--valid-at")


# ----- 2. queries that are not valid Unicode ---------------------------------------------------


class StrictEmbedder(FakeEmbedder):
    """Refuses what UTF-8 cannot hold, as the real tokenizer does (TypeError: TextEncodeInput
    must be Union[...]); keeps the queries it embeds."""

    queries: ClassVar[list[str]] = []

    def embed_query(self, text: str) -> np.ndarray:
        try:
            text.encode("utf-8")
        except UnicodeEncodeError:
            raise TypeError(
                "TextEncodeInput must be Union[TextInputSequence, Tuple[InputSequence, InputSequence]]"
            ) from None
        StrictEmbedder.queries.append(text)
        return super().embed_query(text)


register_embedder("strict", StrictEmbedder)

ARGV_BYTES = "caf\udce9 memory"  # what Python makes of the argument b"caf\xe9 memory"
LONE_HALF = "agent \ud800 memory"  # "\ud800" alone is valid JSON


@pytest.fixture
def strict_vault(tmp_path, monkeypatch) -> Path:
    monkeypatch.setenv("BRAIN_EMBED_MODEL", "strict:64")
    StrictEmbedder.queries.clear()
    root = tmp_path / "v"
    for rel, text in NOTES.items():
        write(root, rel, text)
    index_vault(root, progress=False)
    return root


def test_valid_unicode():
    assert valid_unicode(ARGV_BYTES) == "caf\ufffd memory"
    assert valid_unicode(LONE_HALF) == "agent \ufffd memory"
    assert valid_unicode("caf\udcc3\udca9") == "café"  # UTF-8 bytes a non-UTF-8 locale left undecoded
    assert valid_unicode("\ud83d\ude00 and \ud83d\udc80") == "😀 and 💀"  # halves in order are their character
    assert valid_unicode("x\udcff\ud800\udbffy") == "x\ufffd\ufffd\ufffdy"
    assert valid_unicode("plain café") == "plain café"


@pytest.mark.parametrize("query", [ARGV_BYTES, LONE_HALF])
def test_ask_with_a_surrogate_in_the_query_answers(strict_vault, query):
    for extra in ([], ["--json"], ["--context"], ["--ab"]):
        out = CliRunner().invoke(cli, ["ask", "--vault", str(strict_vault), "--no-update", *extra, query])
        assert out.exit_code == 0, out.output
        assert "Agent memory" in out.output
    answer = json.loads(CliRunner().invoke(cli, ["ask", "--vault", str(strict_vault), "--json", query]).output)
    assert answer["query"] == valid_unicode(query) and answer["results"]
    asked = [q for q in StrictEmbedder.queries if q != PROBE_TEXT]  # the model probe (index/model_probe.py) aside
    assert asked and all(q == valid_unicode(query) for q in asked)


def test_ask_sends_brain_serve_valid_unicode(strict_vault, monkeypatch):
    """The query goes to `brain serve` as JSON in UTF-8: cleaned before it is sent."""
    from brain.server import client

    sent = []

    def ask(root, text, *args, **kwargs):
        text.encode("utf-8")
        sent.append(text)
        raise client.NoServer("none here")

    monkeypatch.setattr(client, "ask", ask)
    out = CliRunner().invoke(cli, ["ask", "--vault", str(strict_vault), "--no-update", ARGV_BYTES])
    assert out.exit_code == 0, out.output
    assert sent == ["caf\ufffd memory"]


def test_recaller_takes_a_query_with_a_surrogate(strict_vault):
    recaller = open_recaller(strict_vault, update=False)
    try:
        result = recaller.ask(LONE_HALF, "hybrid+ppr")
        both = recaller.compare(ARGV_BYTES, ["vector", "hybrid"])
    finally:
        recaller.close()
    assert result.query == "agent \ufffd memory" and result.results
    assert [r.query for r in both] == ["caf\ufffd memory"] * 2


def test_eval_with_a_surrogate_in_a_query(strict_vault, tmp_path):
    line = json.dumps({"id": "s", "query": LONE_HALF, "type": "entity", "relevant": ["Agent memory.md"]})
    assert "\\ud800" in line
    path = tmp_path / "q.jsonl"
    path.write_text(line + "\n", encoding="utf-8")
    assert [q.query for q in load_queries(path)] == ["agent \ufffd memory"]
    out = CliRunner().invoke(cli, ["eval", str(path), "--vault", str(strict_vault), "--modes", "vector,hybrid+ppr"])
    assert out.exit_code == 0, out.output
    out = CliRunner().invoke(cli, ["eval", str(path), "--vault", str(strict_vault), "--explain", "s"])
    assert out.exit_code == 0, out.output


# ----- 3. ab report --since --------------------------------------------------------------------


def _ab_rows(*created: str) -> None:
    """One ab_recall row per time (SQLite's format, UTC)."""
    row = ABRow("q", "vector", "graph", 10, False, "", 0, [], [], [], [], False, {}, [])
    with connection() as conn:
        for at in created:
            row_id = log_ab(conn, row, source="work", vault="/v")
            conn.execute("UPDATE ab_recall SET created_at = ? WHERE id = ?", (at, row_id))
        conn.commit()


def _report(since: str) -> tuple[str, int]:
    out = CliRunner().invoke(cli, ["ab", "report", "--since", since])
    assert out.exit_code == 0, out.output
    data = json.loads(CliRunner().invoke(cli, ["ab", "report", "--since", since, "--json"]).output)
    if data["rows_from"]:
        assert out.output.startswith(f"since {data['since']} UTC\nqueries: {data['all']['queries']} ")
    else:  # no row in the window: one line saying so
        assert out.output.startswith("no A/B rows logged") and out.output.count("\n") == 1, out.output
    return data["since"], data["all"]["queries"]


def test_ab_report_with_no_rows_says_how_to_log_one():
    """`brain ab report` with no rows printed `since … UTC` and `queries: 0 …` and nothing about
    where rows come from, where `brain turns` and `brain recalls` say how to get some: it says
    `brain ask --ab` logs one, and when rows were logged before the window, how many and how to
    reach back. --json is the same object as before."""
    out = CliRunner().invoke(cli, ["ab", "report"])
    assert out.exit_code == 0, out.output
    assert out.output == 'no A/B rows logged yet (brain ask --ab "a question" logs one)\n'
    out = CliRunner().invoke(cli, ["ab", "report", "--source", "my runs"])
    assert out.output == (
        "no A/B rows logged with source 'my runs' yet (brain ask --ab --source 'my runs' \"a question\" logs one)\n"
    )
    data = json.loads(CliRunner().invoke(cli, ["ab", "report", "--json"]).output)
    assert data["all"]["queries"] == 0 and data["rows_from"] == []
    _ab_rows("2026-11-30 10:00:00", "2026-12-01 10:00:00")
    out = CliRunner().invoke(cli, ["ab", "report", "--since", "2026-12-02T00:00Z"])
    assert out.output == (
        "no A/B rows logged since 2026-12-02 00:00:00 UTC; 2 rows before it (--since 30d, or an earlier date,"
        " reaches back)\n"
    )
    out = CliRunner().invoke(cli, ["ab", "report", "--since", "2026-12-02T00:00Z", "--source", "other"])
    assert out.output.startswith("no A/B rows logged with source 'other' yet (brain ask --ab --source other ")
    out = CliRunner().invoke(cli, ["ab", "report", "--since", "2026-12-01T00:00Z"])
    assert out.output.startswith("since 2026-12-01 00:00:00 UTC\nqueries: 1 ")


def test_ab_report_since_a_year_before_1000_keeps_four_digits(zone):
    zone("UTC0")
    _ab_rows("2026-11-30 10:00:00", "2026-12-01 10:00:00", "2026-12-02 10:00:00", "2026-12-02 12:00:00")
    assert _report("1000-01-01") == ("1000-01-01 00:00:00", 4)
    assert _report("0999-01-01") == ("0999-01-01 00:00:00", 4)  # was "999-01-01", after "2026" as text
    assert _report("0001-01-01") == ("0001-01-01 00:00:00", 4)


def test_ab_report_since_a_time_with_a_zone_is_converted_to_utc(zone):
    zone("UTC0")  # a moment without a zone is local time: here UTC
    _ab_rows("2026-12-02 10:59:59", "2026-12-02 11:00:00", "2026-12-02 22:00:00")
    assert _report("2026-12-02T23:00+12:00") == ("2026-12-02 11:00:00", 2)
    assert _report("2026-12-02T06:00-05:00") == ("2026-12-02 11:00:00", 2)
    assert _report("2026-12-02T11:00Z") == ("2026-12-02 11:00:00", 2)
    assert _report("2026-12-02T11:00") == ("2026-12-02 11:00:00", 2)  # no zone: local time, UTC here
    assert _report("2026-12-02") == ("2026-12-02 00:00:00", 3)
    assert _report("0001-01-01T00:00+14:00") == ("0001-01-01 00:00:00", 3)  # before year 1 in UTC: everything
    assert _report("9999-12-31T23:00-05:00") == ("9999-12-31 23:59:59", 0)  # after 9999: nothing


def test_ab_report_since_a_date_with_a_zone_counts_from_its_first_moment_there(zone):
    """`--since 2026-12-02+03:00` (and `+03`, `+0300`) was 03:00 UTC: Python read the `+` as the
    separator of a time; it is 00:00 there, 21:00 UTC the day before. A time after any other
    character than T or a space (`2026-12-02x10`) was read as one; it is an error."""
    zone("UTC0")
    _ab_rows("2026-12-01 20:59:59", "2026-12-01 21:00:00", "2026-12-02 02:00:00")
    for zoned in ("2026-12-02+03:00", "2026-12-02+03", "2026-12-02+0300"):
        assert _report(zoned) == ("2026-12-01 21:00:00", 2), zoned
    assert _report("2026-12-02Z") == _report("2026-12-02") == ("2026-12-02 00:00:00", 1)
    assert _report("2026-12-01-05") == (
        "2026-12-01 05:00:00",
        3,
    )  # 00:00 at -05 (read as 05:00 UTC, the same by chance)
    out = CliRunner().invoke(cli, ["ab", "report", "--since", "2026-12-02x10"])
    assert (
        out.exit_code == 1 and "--since takes a date (2026-03-01)" in out.output and len(out.output.splitlines()) == 1
    )


def test_ab_report_since_a_date_without_a_zone_is_the_start_of_that_day_in_local_time(zone):
    """`--since 2026-12-02` was 00:00 UTC wherever brain ran (03:00 in Moscow, 19:00 the day before
    in New York), while `--as-of` and `--before` read a moment without a zone in local time: it
    is that day's 00:00 in local time, and a time without a zone is local time too; one naming a
    zone is read there, as before. The MCP tool's `since` reads the same."""
    _ab_rows("2026-12-01 20:59:59", "2026-12-01 21:00:00", "2026-12-02 04:59:59", "2026-12-02 05:00:00")
    zone("MSK-3")
    assert _report("2026-12-02") == ("2026-12-01 21:00:00", 3)
    assert _report("20261202") == _report("2026-12-02T00:00") == ("2026-12-01 21:00:00", 3)
    assert _report("2026-W49-3") == ("2026-12-01 21:00:00", 3)  # a week's day: Wednesday 2 December
    assert _report("2026-12-02Z") == ("2026-12-02 00:00:00", 2)  # a zone named: that zone's day
    zone("EST5EDT,M3.2.0,M11.1.0")
    assert _report("2026-12-02") == ("2026-12-02 05:00:00", 1)
    assert parse_since("2026-07-02") == "2026-07-02 04:00:00"  # summer time: its offset that day
    assert parse_since("2026-12-02T08:30", name="since") == "2026-12-02 13:30:00"
    assert parse_since("0999-01-01") == "0999-01-01 05:00:00"
    assert parse_since("9999-12-31T23:00") == "9999-12-31 23:59:59"  # after 9999 in UTC: nothing
    zone("KIR-14")
    assert parse_since("0001-01-01") == "0001-01-01 00:00:00"  # before year 1 in UTC: everything
    out = CliRunner().invoke(cli, ["ab", "report", "--help"])
    assert "from its start, local time" in " ".join(out.output.split())


def test_since_for_recent_turns_is_utc_with_four_digit_years(zone):
    """The MCP tool recent_turns(since=…) reads the same parser."""
    zone("UTC0")
    assert parse_since("0999-01-01") == "0999-01-01 00:00:00"
    assert parse_since("2026-12-02T23:00+12:00") == "2026-12-02 11:00:00"
    assert parse_since("2026-12-02T23:00:00.5+05:30") == "2026-12-02 17:30:00"
    assert parse_since("99999999999999w") == "0001-01-01 00:00:00"
    with pytest.raises(ConfigError, match="--since takes"):
        parse_since("last tuesday")


def test_since_of_more_digits_than_int_reads_is_everything_and_a_bad_one_is_said_short():
    # int() refuses more than 4,300 digits with a ValueError: it went up as a traceback
    # (brain ab-report --since, and recent_turns' "Error executing tool" with 52 lines on stderr).
    assert parse_since("9" * 5000 + "d") == "0001-01-01 00:00:00"
    with pytest.raises(ConfigError) as caught:
        parse_since("x" * 1_000_000, name="since")
    message = str(caught.value)
    assert message.startswith("since takes a date (2026-03-01)") and len(message) < 350  # not the value back whole
    assert message.endswith("' (1,000,000 characters)")


# ----- 4. terminal control in notes ------------------------------------------------------------

CONTROL = re.compile(r"[\x00-\x08\x0b-\x1f\x7f-\x9f]")  # every control character but \t and \n
TRICKS = (
    "osc \x1b]0;pwned\x07 bel-ended, \x1b]8;;http://evil\x1b\\linked\x1b]8;;\x1b\\ st-ended, "
    "dcs \x1bP1$qm\x1b\\ done, apc \x1b_hidden\x1b\\ gone, csi \x1b[31mred\x1b[0m \x1b[2J cleared, "
    "c1 \x9b31mred\x9b0m \x9d0;title\x9c ok, bell\x07 back\x08\x08\x08space, "
    "shown\rHIDDEN overwrite, esc \x1bc reset, del\x7f, charset \x1b(0 lines"
)


def test_terminal_safe_shows_control_as_its_escape_and_keeps_text():
    # Each control character is written as its escape: the sequence it started is text (it was
    # dropped, and a name read as another: "y\x1b[31mred" as "yred").
    assert terminal_safe("platypus \x1b]0;pwned\x07 harmonica") == "platypus \\x1b]0;pwned\\x07 harmonica"
    assert terminal_safe("a\x1bP1;2|data\x1b\\b") == "a\\x1bP1;2|data\\x1b\\b"  # DCS up to ST
    assert terminal_safe("\x1b[1;31mred\x1b[0m \x9b4mline") == "\\x1b[1;31mred\\x1b[0m \\x9b4mline"  # CSI, 7-, 8-bit
    assert terminal_safe("\x9d0;title\x9c after") == "\\x9d0;title\\x9c after"  # 8-bit OSC and ST
    assert terminal_safe("bell\x07 bs\x08\x08x") == "bell\\x07 bs\\x08\\x08x"
    assert terminal_safe("safe\rEVIL") == "safe\\rEVIL"  # no carriage return to write over a line with
    assert terminal_safe("crlf\r\nline\ttab") == "crlf\nline\ttab"  # a line's end, not a character of it
    assert terminal_safe("esc \x1bc, \x1b(0 and a last \x1b") == "esc \\x1bc, \\x1b(0 and a last \\x1b"
    assert terminal_safe("del\x7f \x85nel \x90dcs \x00nul") == "del\\x7f \\x85nel \\x90dcs \\x00nul"
    assert CONTROL.search(terminal_safe(TRICKS)) is None
    assert terminal_safe("plain — text, ünïcode 😀\n") == "plain — text, ünïcode 😀\n"
    assert terminal_safe("a\u00a0b\u2028c") == "a\u00a0b\u2028c"  # a terminal acts on neither: shown as they are


@pytest.fixture
def tricky_vault(tmp_path) -> Path:
    root = tmp_path / "v"
    write(root, "Platypus.md", f"# Platypus \x1b]0;title\x07 notes\n\nplatypus harmonica {TRICKS} [[Harmonica]]\n")
    write(root, "Harmonica.md", "# Harmonica\n\nA harmonica, for the platypus.\n")
    write(root, "Esc\x1b[2Jape.md", "# Escape\n\nplatypus harmonica escape [[Platypus]]\n")
    index_vault(root, progress=False)
    return root


@pytest.mark.parametrize("extra", [[], ["--context"], ["--ab"], ["--graph"], ["--as-of", "0h"]])
def test_ask_shows_no_terminal_control_from_notes(tricky_vault, extra):
    args = ["ask", "--vault", str(tricky_vault), "--no-update", *extra, "platypus harmonica"]
    out = CliRunner().invoke(cli, args, color=True)  # color: click strips no CSI on its own
    assert out.exit_code == 0, out.output
    assert "Platypus" in out.output and "Esc\\x1b[2Jape" in out.output  # a file name with CSI in it, as it is named
    assert CONTROL.search(out.output) is None, repr(out.output)
    if extra != ["--ab"]:  # each control shown as its escape, the sequence it began as text
        assert "\\x1b]0;pwned\\x07" in out.output and "linked" in out.output and "\\x1b[2J cleared" in out.output


def test_ask_json_escapes_every_control_character(tricky_vault):
    out = CliRunner().invoke(
        cli, ["ask", "--vault", str(tricky_vault), "--no-update", "--json", "platypus harmonica"], color=True
    )
    assert out.exit_code == 0, out.output
    assert CONTROL.search(out.output) is None, repr(out.output)  # C1 and DEL too: \u009b, \u007f
    answer = json.loads(out.output)
    snippet = next(r["snippet"] for r in answer["results"] if r["path"] == "Platypus.md")
    assert "\x1b]0;pwned\x07" in snippet and "\x9b31m" in snippet and "\x08\x08" in snippet  # the text as it is
    assert "Esc\x1b[2Jape.md" in [r["path"] for r in answer["results"]]


def test_links_history_and_errors_show_no_terminal_control(tricky_vault):
    for args in (["neighbours", "Platypus"], ["history", "Platypus"], ["neighbours", "Esc\x1b[2Jape"]):
        out = CliRunner().invoke(cli, [*args, "--vault", str(tricky_vault)], color=True)
        assert out.exit_code == 0, out.output
        assert "Platypus" in out.output and "Esc\\x1b[2Jape.md" in out.output
        assert CONTROL.search(out.output) is None, repr(out.output)
    queries = tricky_vault.parent / "q.jsonl"
    line = {"id": "e", "query": "platypus escape", "type": "entity", "relevant": ["Esc\x1b[2Jape.md"]}
    queries.write_text(json.dumps(line) + "\n", encoding="utf-8")
    out = CliRunner().invoke(cli, ["eval", str(queries), "--vault", str(tricky_vault), "--explain", "e"], color=True)
    assert out.exit_code == 0, out.output
    assert "Esc\\x1b[2Jape" in out.output and CONTROL.search(out.output) is None, repr(out.output)
    out = CliRunner().invoke(cli, ["neighbours", "Escape", "--vault", str(tricky_vault)], color=True)
    _one_line_error(out, "did you mean 'Esc\\x1b[2Jape'?")  # the name as Python writes it: no control
    assert CONTROL.search(out.output) is None, repr(out.output)


@pytest.mark.parametrize(
    ("tail", "title"),  # YAML's escapes: CSI, ESC [, ESC, an OSC never ended: each shown as its escape
    [("\\u009b", "Plan\\x9b"), ("\\e[", "Plan\\x1b["), ("\\e", "Plan\\x1b"), ("\\e]0;", "Plan\\x1b]0;")],
)
def test_a_title_ending_in_an_escape_takes_none_of_brains_own_text(tmp_path, tail, title):
    # Cleaned as one line, "Plan\x9b" + ")  note 1" read as a CSI sequence ending at "n":
    # brain's own words after a note's field went with it. Each field is cleaned on its own.
    root = tmp_path / "v"
    write(root, "plan.md", f'---\ntitle: "Plan{tail}"\n---\nbody [[Other]]\n')
    write(root, "Other.md", "# Other\n\nthe other note\n")
    index_vault(root, progress=False)
    history = CliRunner().invoke(cli, ["history", "plan", "--vault", str(root)], color=True)
    assert history.exit_code == 0, history.output
    first = history.output.splitlines()[0]
    assert first.startswith(f"plan.md  ({title})  note ") and first.endswith(", current"), repr(history.output)
    links = CliRunner().invoke(cli, ["neighbours", "plan", "--vault", str(root)], color=True)
    assert links.output.splitlines()[0] == f"{title}  (plan.md)", repr(links.output)
    back = CliRunner().invoke(cli, ["neighbours", "Other", "--vault", str(root)], color=True)
    assert "  ← plan.md" in back.output.splitlines(), repr(back.output)


def test_ask_output_cleans_each_field_on_its_own():
    # A via title, a path and a heading each ending in a CSI's first byte, with brain's own text
    # after each on the same line: none of it may go with them.
    from brain.output import context_bundle, result_text, side_by_side
    from brain.recall.types import Candidate, Gate, RecallResult, Via

    hit = Candidate(1, "Hub.md", "Hub", 1, "Part\x9b", "text", 0.5, 0.5)
    hit.path = "Hub\x9b"  # a file name may hold any byte but / and NUL
    promoted = Candidate(2, "Spoke.md", "Spoke\x9b", 2, "", "text", 0.4, 0.4)
    promoted.via = Via("Hub.md", "Hub\x9b", "links to", "wikilink")
    promoted.sources = ["ppr"]  # in a fused mode, the lane that reached it through the link
    result = RecallResult("q", "hybrid+ppr", Gate(False, "x"), [hit, promoted])
    text = result_text(result, width=100)
    assert "Hub\\x9b › Part\\x9b" in text and "Spoke\\x9b  via [[Hub\\x9b]]" in text, repr(text)
    assert "### Hub\\x9b › Part\\x9b" in context_bundle(result, 2000)
    assert "* Spoke\\x9b  via [[Hub\\x9b]]" in side_by_side(
        RecallResult("q", "vector", Gate(False, "x"), [hit]), result
    )


def test_note_shows_a_terminal_no_control_and_a_pipe_the_text_as_it_is(tricky_vault, monkeypatch):
    import brain.cli

    piped = CliRunner().invoke(cli, ["note", "Platypus", "--vault", str(tricky_vault)], color=False)
    assert piped.exit_code == 0, piped.output
    # as read (universal newlines), CSI too, which click drops from a pipe on its own
    assert TRICKS.replace("\r", "\n") in piped.output
    monkeypatch.setattr(brain.cli, "_stdout_is_terminal", lambda: True)
    for name, shown in (("Platypus", "linked"), ("Esc\x1b[2Jape", "(Esc\\x1b[2Jape.md)")):
        out = CliRunner().invoke(cli, ["note", name, "--vault", str(tricky_vault)], color=True)
        assert out.exit_code == 0, out.output
        assert shown in out.output
        assert CONTROL.search(out.output) is None, repr(out.output)  # no title set, no screen cleared
    out = CliRunner().invoke(cli, ["note", "Platypus", "--json", "--vault", str(tricky_vault)], color=True)
    assert "\x1b]0;pwned\x07" in json.loads(out.output)["text"]  # --json: the text as it is


def test_status_and_index_warnings_show_no_terminal_control_from_file_names(tricky_vault):
    import logging

    from brain.cli_support import setup_logging

    (tricky_vault / "Bad\x1b]0;T\x07name.md").write_bytes(b"# bad\n\xff byte\n")
    (tricky_vault / "Bin\x1b[31m.md").write_bytes(b"\x00\x01 binary")
    index_vault(tricky_vault, progress=False)
    write(tricky_vault, "Pend\x1b]0;X\x07ing.md", "# pending\n")
    out = CliRunner().invoke(cli, ["status", "-v", "--vault", str(tricky_vault)], color=True)
    assert out.exit_code == 0, out.output
    assert "Bad\\x1b]0;T\\x07name.md: invalid UTF-8" in out.output and "Pend\\x1b]0;X\\x07ing.md" in out.output
    assert "Bin\\x1b[31m.md" in out.output  # named as it is: dropped, "Bin.md" named a file that does not exist
    assert CONTROL.search(out.output) is None, repr(out.output)
    setup_logging()
    (handler,) = [h for h in logging.getLogger("brain").handlers if getattr(h, "_brain", False)]
    record = logging.LogRecord("brain", logging.WARNING, __file__, 1, "%s: skipped", ("Bin\x1b[31m.md",), None)
    assert handler.format(record) == "brain: WARNING: Bin\\x1b[31m.md: skipped"  # shown, not acted on


@pytest.mark.parametrize(
    ("args", "said"),
    [
        (["--json", "--context"], "--json and --context are two outputs"),
        (["--graph", "--mode", "vector"], "--graph is the mode gated"),
        (["--ab", "--mode", "vector"], "--ab compares the two --ab-modes"),
        (["--ab", "--graph"], "--ab compares the two --ab-modes"),
        (["--ab", "--context"], "--ab prints its own comparison"),
        (["--ab-modes", "vector,hybrid"], "--ab-modes and --source go with --ab"),
        (["--source", "cli"], "--ab-modes and --source go with --ab"),
        (["--budget", "4000"], "--budget goes with --context"),
    ],
)
def test_ask_refuses_options_it_would_ignore(tmp_path, args, said):
    """Each was dropped without a word: `--graph --mode vector` ran vector, `--json --context`
    printed JSON, `--budget 4000` alone shaped nothing."""
    result = CliRunner().invoke(cli, ["ask", "--vault", str(tmp_path), *args, "what is graph rag"])
    assert result.exit_code == 2 and said in result.output, result.output


@pytest.mark.parametrize(
    ("rerank", "modes", "said"),
    [
        ("none", "hybrid,hybrid", "hybrid,hybrid runs hybrid twice: give two modes"),
        ("none", "vector,dense", "vector,dense runs vector twice: give two modes"),
        # With a reranker +rerank is added to each: the reranker's own A/B ran one mode twice.
        (
            "some/cross-encoder",
            "hybrid,hybrid+rerank",
            "hybrid,hybrid+rerank runs hybrid+rerank twice (+rerank is added to each with a reranker configured:"
            " --no-rerank leaves it to the modes given): give two modes",
        ),
    ],
)
def test_ab_refuses_a_mode_beside_itself(tmp_path, monkeypatch, rerank, modes, said):
    """It compared nothing, was logged all the same, and `brain ab report` counted its row as one
    whose B fell back."""
    monkeypatch.setenv("BRAIN_RERANK_MODEL", rerank)
    result = CliRunner().invoke(
        cli, ["ask", "--vault", str(tmp_path), "--ab", "--ab-modes", modes, "what is graph rag"]
    )
    assert result.exit_code == 2 and said in " ".join(result.output.split()), result.output
