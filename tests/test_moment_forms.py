"""Every option and argument naming a moment takes the same forms and refuses others in the same
words (`brain turns --since` and `brain recalls --since` too, new): `brain ab report --since` and MCP `recent_turns(since=)` read ``30m`` where `brain ask
--as-of`, `brain history --as-of`, `brain prune --before` and `brain serve`'s ``as_of`` refused
it; those read ``2h ago`` and ``3D`` where ``--since`` refused them; none read ``today``."""

from __future__ import annotations

import datetime as dt
import json
import re
from pathlib import Path

import pytest
from click.testing import CliRunner
from index_helpers import index_into

from brain.cli import cli
from brain.errors import ConfigError
from brain.moments import FORMS, parse_moment, past_moment, window_start
from brain.server import protocol
from brain.telemetry import parse_since

# Each form a user may type, as the README and every option's help name them
TYPED = [
    "2026-12-01",  # a date
    "2026-12-01T09:30",  # a date and time, to the minute
    "2026-12-01 09:30",
    "2026-12-01T09:30+03:00",  # with a zone
    "2026-12-01T09:30+0300",
    "2026-12-01T09:30Z",
    "2026-12-01+03",  # a date with a zone
    "30m",  # spans back from now
    "2h",
    "3d",
    "2w",
    "1y",
    "2h ago",
    "3D",
    "7 d",
    "today",
    "Yesterday",
    "now",
    "сегодня",  # the same three in Russian, in any case
    "Вчера",
    "СЕЙЧАС",
]
# A span's unit is a Latin letter (a Russian м is a minute or a month); завтра is tomorrow
REFUSED = ["last tuesday", "1M", "2 hours", "2026-12-01x10", "tomorrow", "завтра", "7д", ""]

NOW = dt.datetime(2026, 12, 6, 18, 0, tzinfo=dt.timezone.utc).timestamp()


@pytest.fixture
def moscow(zone):
    zone("MSK-3")


def _utc(text: str) -> dt.datetime:
    return dt.datetime.fromisoformat(text).replace(tzinfo=None)


@pytest.mark.usefixtures("moscow")
def test_every_form_means_the_same_moment_to_every_parser():
    """A window's start (--since) is a day's first moment, a moment looked back at (--as-of,
    --before) a day's last; a span, ``now`` and a time are the same moment to both."""
    since = {text: window_start(text, now=NOW) for text in TYPED}
    as_of = {text: dt.datetime.fromtimestamp(parse_moment(text, now=NOW), dt.timezone.utc) for text in TYPED}
    assert since["30m"] == as_of["30m"].replace(tzinfo=None) == _utc("2026-12-06T17:30")
    for text, back in (("2h", 2), ("2h ago", 2), ("3D", 72), ("7 d", 168), ("3d", 72)):
        assert since[text] == _utc("2026-12-06T18:00") - dt.timedelta(hours=back), text
        assert as_of[text].replace(tzinfo=None) == since[text], text
    assert since["now"] == as_of["now"].replace(tzinfo=None) == _utc("2026-12-06T18:00")
    # today in Moscow is 6 December, from 21:00 UTC the day before; yesterday the 5th
    assert since["today"] == _utc("2026-12-05T21:00") and since["Yesterday"] == _utc("2026-12-04T21:00")
    assert as_of["Yesterday"].replace(tzinfo=None) == _utc("2026-12-05T20:59:59.999999")
    assert past_moment("today", now=NOW) == NOW  # today's end is still to come: brain knows up to now
    for russian, english in (("сегодня", "today"), ("Вчера", "Yesterday"), ("СЕЙЧАС", "now")):
        assert since[russian] == since[english] and as_of[russian] == as_of[english], russian
        assert past_moment(russian, now=NOW) == past_moment(english, now=NOW), russian  # сегодня: now, not refused
    assert since["2026-12-01"] == _utc("2026-11-30T21:00")
    assert since["2026-12-01T09:30"] == since["2026-12-01 09:30"] == _utc("2026-12-01T06:30")
    assert since["2026-12-01T09:30+03:00"] == since["2026-12-01T09:30+0300"] == _utc("2026-12-01T06:30")
    assert since["2026-12-01T09:30Z"] == _utc("2026-12-01T09:30")
    assert since["2026-12-01+03"] == _utc("2026-11-30T21:00")
    for text in TYPED:  # and as the commands call them, at the clock's now
        parse_since(text)
        past_moment(text)  # each is a moment brain can look back at


@pytest.mark.usefixtures("moscow")
def test_prune_reads_a_date_as_the_start_of_that_day_and_every_other_form_as_its_moment():
    """`brain prune --before today` dropped today's versions and rows: a date was the end of that
    day, as `--as-of` reads it. For what destroys history a date is the moment that day began
    (``date_means="start"``), the same moment `--since` starts a window at; --as-of keeps the end."""
    before = {text: parse_moment(text, "--before", now=NOW, date_means="start") for text in TYPED + ["2026-W49"]}
    for text, moment in before.items():
        since = window_start(text, now=NOW)
        assert dt.datetime.fromtimestamp(moment, dt.timezone.utc).replace(tzinfo=None) == since, text
    assert before["today"] == dt.datetime(2026, 12, 5, 21, 0, tzinfo=dt.timezone.utc).timestamp()
    assert before["2026-W49"] == dt.datetime(2026, 11, 29, 21, 0, tzinfo=dt.timezone.utc).timestamp()  # its Monday
    assert parse_moment("today", now=NOW) == dt.datetime(2026, 12, 6, 20, 59, 59, 999999, dt.timezone.utc).timestamp()
    with pytest.raises(ConfigError, match="--before '0001-01-01' is at or past an end of the calendar"):
        parse_moment("0001-01-01", "--before", date_means="start")  # 21:00 UTC the day before year 1 began


@pytest.mark.parametrize("text", REFUSED)
def test_a_form_none_takes_is_one_error_naming_the_forms(text):
    for option, parse in (
        ("--since", lambda t: parse_since(t)),
        ("since", lambda t: parse_since(t, name="since")),
        ("--as-of", past_moment),
        ("--before", lambda t: parse_moment(t, "--before")),
    ):
        with pytest.raises(ConfigError) as caught:
            parse(text)
        assert str(caught.value) == f"{option} takes {FORMS}, not {text!r}"


# ----- every command --------------------------------------------------------------------------


@pytest.fixture(scope="module")
def indexed(tmp_path_factory) -> tuple[Path, Path]:
    from conftest import FakeEmbedder

    home = tmp_path_factory.mktemp("forms_home")
    vault = tmp_path_factory.mktemp("forms") / "v"
    vault.mkdir()
    (vault / "Okapi.md").write_text("# Okapi\n\nThe okapi procedure.\n", encoding="utf-8")
    index_into(home, vault, FakeEmbedder())
    return home, vault


def _commands(vault: Path, when: str) -> dict[str, list[str]]:
    return {
        "--since": ["ab", "report", "--since", when],
        "--as-of": ["ask", "--vault", str(vault), "--no-update", "--no-server", "--as-of", when, "okapi"],
        "--before": ["prune", "--ledger", "--before", when, "--json"],
        "--since (turns)": ["turns", "--since", when],
        "--since (recalls)": ["recalls", "--since", when],
        "--as-of (note)": ["note", "Okapi", "--vault", str(vault), "--as-of", when],
    }


def _history(vault: Path, when: str) -> list[str]:
    return ["history", "Okapi", "--vault", str(vault), "--as-of", when]


@pytest.mark.parametrize("when", TYPED + REFUSED[:-1])
def test_every_command_takes_every_form_and_refuses_the_same_others(indexed, monkeypatch, when):
    home, vault = indexed
    monkeypatch.setenv("BRAIN_HOME", str(home))
    refused = when in REFUSED
    runs = {**_commands(vault, when), "--as-of (history)": _history(vault, when)}
    for option, args in runs.items():
        out = CliRunner().invoke(cli, args)
        name = option.split()[0]
        said = f"{name} takes {FORMS}, not {when!r}"
        if refused:
            assert out.exit_code == 1 and out.output == f"Error: {said}\n", (option, out.output)
        else:  # read: what follows is the command's own answer (before history began: its own line)
            assert said not in out.output and "takes" not in out.output, (option, out.output)
            assert out.exit_code == 0 or "nothing is known" in out.output, (option, out.output)
    # MCP recent_turns(since=…): its tool's function, as the server calls it
    from brain.mcp.server import _turns

    if refused:
        with pytest.raises(ConfigError, match=f"^since takes {re.escape(FORMS)}, not "):
            _turns(project=None, text=None, since=when, limit=10, logged=set())
    else:
        assert (
            json.loads(json.dumps(_turns(project=None, text=None, since=when, limit=10, logged=set())))["turns"] == []
        )
    # brain serve's as_of: the request's field, read as brain ask reads --as-of and named as the request names it
    message = {"as_of": when}
    if refused:
        with pytest.raises(protocol.ProtocolError, match=f"^as_of takes {re.escape(FORMS)}, not "):
            protocol.past_fields(message)
    else:
        assert protocol.past_fields(message)[0] is not None
