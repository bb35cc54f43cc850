"""The dates lane: a query that names a period (a day, a month or a third of one, a season of a
year; English or Russian) ranks the notes whose stated date falls in it, from their frontmatter
or their name, and nothing for any other query."""

from __future__ import annotations

import datetime as dt
import sqlite3
import time

import pytest
from conftest import write

from brain.index.indexer import index_vault
from brain.recall import dates
from brain.recall.dates import DateIndex, Period, query_period, stated_date
from brain.recall.opening import open_recaller
from brain.recall.types import RecallSettings


def _period(first: str, end: str) -> Period:
    return Period(dt.date.fromisoformat(first), dt.date.fromisoformat(end))


@pytest.mark.parametrize(
    ("query", "period"),
    [
        ("what did I jot down in my daily notes in November 2024?", ("2024-11-01", "2024-12-01")),
        ("guns and bullets in late January 2025", ("2025-01-21", "2025-02-01")),
        ("my entry from mid February 2025", ("2025-02-11", "2025-02-21")),
        ("early Dec 2024 plans", ("2024-12-01", "2024-12-11")),
        ("the end of february 2024", ("2024-02-21", "2024-03-01")),  # a leap year's last day included
        ("which apps did I back up in summer 2024", ("2024-06-01", "2024-09-01")),
        ("winter 2025 reading", ("2025-01-01", "2025-03-01")),
        ("notes for 2024-11", ("2024-11-01", "2024-12-01")),
        ("the standup of 2024-11-04", ("2024-11-04", "2024-11-05")),
        ("what happened on June 28, 2025", ("2025-06-28", "2025-06-29")),
        ("the meeting on 3rd March 2025", ("2025-03-03", "2025-03-04")),
        ("что я писал в июне 2025", ("2025-06-01", "2025-07-01")),
        ("в конце мая 2025", ("2025-05-21", "2025-06-01")),
        ("на встрече 3 марта 2025", ("2025-03-03", "2025-03-04")),
        ("заметки летом 2024", ("2024-06-01", "2024-09-01")),
        # Russian months cut short, as "Dec 2024" is
        ("отчёт за сент. 2025", ("2025-09-01", "2025-10-01")),
        ("в начале янв 2025", ("2025-01-01", "2025-01-11")),
    ],
)
def test_the_period_a_query_names(query, period):
    assert query_period(query) == _period(*period)


@pytest.mark.parametrize(
    "query",
    [
        "apps and games I discovered in 2025",  # a year alone is a word of a title, not a period
        "may I ask about the kafka consumer",
        "the 2024 march of progress",  # not a month then a year
        "notes on 2024-13",  # no such month
        "February 30, 2025",  # no such day: and nothing else named
        "escalation die",
        "мартышка 2026",  # a month's short name is a whole word
        "этот месяцеслов",
        "",
    ],
)
def test_queries_that_name_no_period(query):
    assert query_period(query) is None


@pytest.mark.parametrize(
    ("name", "day"),
    [
        ("2024-11-04", "2024-11-04"),
        ("2024_11_04 standup", "2024-11-04"),
        ("Meeting 2026.01.20 Halyard", "2026-01-20"),
        ("04.11.2024", "2024-11-04"),
        ("Entry of 28th Jun, 2025", "2025-06-28"),
        ("June 28, 2025", "2025-06-28"),
        ("28 июня 2025", "2025-06-28"),
        ("15 мар 2026", "2026-03-15"),  # as "15 Mar 2026"
        ("3 дек. 2024 созвон", "2024-12-03"),
        ("Android Apps Backup Jul-Aug 2024", None),  # a span, not a day
        ("v1.2.2024", None),
        ("2024-02-30", None),
        ("Kafka", None),
    ],
)
def test_the_day_a_note_name_states(name, day):
    assert stated_date(name) == (dt.date.fromisoformat(day) if day else None)


# A date is written in ASCII digits (as a frontmatter date is read): Python's \d took the others
# after an ASCII "19" or "20", so each of these was a day or a month.
_OTHER_DIGITS = [
    "20\u0662\u0664-03-01",  # Arabic-Indic 2, 4
    "2\uff1024-03-01",  # a full-width 0
    "2024-03-0\uff11",
    "2024_03_\u0966\u0967",  # Devanagari 0, 1
    "\u0660\u0664.11.2024",
    "1.\u0661\u0661.2024",
    "28 \u0438\u044e\u043d\u044f 20\u0968\u096b",  # 28 июня 20२५
    "June \uff12\uff18, 2025",
    "June 28, 2\uff1025",
    "2\u0668th Jun, 2025",
]


@pytest.mark.parametrize("name", _OTHER_DIGITS)
def test_a_name_with_other_scripts_digits_states_no_day(name):
    assert stated_date(name) is None


@pytest.mark.parametrize(
    "query",
    [f"what did I write on {date}" for date in _OTHER_DIGITS[:-1]]
    + ["notes for 20\u0662\u0664-11", "notes for 2024-1\uff11", "in March 2\uff1024", "в июне 20\u0968\u096b"],
)
def test_a_query_with_other_scripts_digits_names_no_period(query):
    assert query_period(query) is None


def test_a_month_named_beside_a_day_in_other_digits_is_the_month():
    # "2٨th Jun, 2025" is no day, and the question still names June 2025 (it was the 28th)
    assert query_period("what did I write on 2\u0668th Jun, 2025") == _period("2025-06-01", "2025-07-01")


@pytest.fixture
def journal(tmp_path):
    root = tmp_path / "journal"
    write(root, "Daily/2024-11-04.md", "Fixed the heater in the garage; ordered a new valve.\n")
    write(root, "Daily/2024-11-19.md", "Read about kafka consumer lag and backpressure.\n")
    write(root, "Daily/Entry of 28th Jun, 2025.md", "Pomodoros and a long walk.\n")
    write(root, "Daily/2024-12-02.md", "December already: the heater again.\n")
    # Its name says April; its frontmatter says when it was written, and that wins.
    write(root, "Decisions/GA moved to 13 April 2026.md", "---\ndate: 2024-11-25\n---\nThe launch moves.\n")
    write(root, "Topics/Heater.md", "How the garage heater works: valve, thermostat.\n")
    index_vault(root, progress=False)
    return root


def test_the_lane_ranks_the_notes_of_the_period_only(journal, closing):
    recaller = closing(open_recaller(journal))
    result = recaller.ask("what did I write about the heater in November 2024?", "hybrid+ppr", RecallSettings())
    lane = [c.path for c in result.lanes["dates"]]
    assert sorted(lane) == ["Daily/2024-11-04.md", "Daily/2024-11-19.md", "Decisions/GA moved to 13 April 2026.md"]
    scores = [c.dense_score for c in result.lanes["dates"]]
    assert scores == sorted(scores, reverse=True)  # by their best chunk for the query
    assert all(c.sources[0] == "dates" for c in result.lanes["dates"])
    no_period = recaller.ask("what did I write about the heater?", "hybrid+ppr", RecallSettings())
    assert no_period.lanes["dates"] == []
    vector = recaller.ask("what did I write about the heater in November 2024?", "vector", RecallSettings())
    assert "dates" not in vector.lanes  # the hybrid modes' lane: vector stays dense alone
    off = recaller.ask(
        "what did I write about the heater in November 2024?", "hybrid+ppr", RecallSettings(weights={"dates": 0.0})
    )
    assert "dates" not in off.lanes


def test_a_period_with_too_many_notes_says_nothing(journal, monkeypatch, closing):
    monkeypatch.setattr(dates, "MAX_NOTES", 2)
    recaller = closing(open_recaller(journal))
    result = recaller.ask("heater notes from November 2024", "hybrid", RecallSettings())
    assert result.lanes["dates"] == []


def test_the_date_index_is_read_only_for_a_query_that_names_a_period(journal, monkeypatch, closing):
    built = []
    real = DateIndex.from_store.__func__  # type: ignore[attr-defined]
    monkeypatch.setattr(DateIndex, "from_store", classmethod(lambda cls, store: built.append(1) or real(cls, store)))
    recaller = closing(open_recaller(journal))
    recaller.ask("the garage heater", "hybrid+ppr", RecallSettings())
    assert built == []
    recaller.ask("the garage heater in December 2024", "hybrid+ppr", RecallSettings())
    recaller.ask("the garage heater in November 2024", "hybrid+ppr", RecallSettings())
    assert built == [1]  # once, then kept


def test_a_failing_dates_lane_falls_back_with_a_warning(journal, monkeypatch, caplog, closing):
    def broken(cls, store):
        raise sqlite3.OperationalError("database disk image is malformed")

    monkeypatch.setattr(DateIndex, "from_store", classmethod(broken))
    recaller = closing(open_recaller(journal))
    result = recaller.ask("the heater in November 2024", "hybrid+ppr", RecallSettings())
    assert result.fallbacks["dates"] is True
    assert result.results  # fused without it
    assert any("dates lane failed" in r.getMessage() for r in caplog.records)


def test_the_past_has_the_dates_of_the_notes_then(journal, closing):
    before = time.time()
    time.sleep(0.01)
    write(journal, "Daily/2024-11-27.md", "The heater is fixed for good.\n")
    index_vault(journal, progress=False)
    query = "the heater in November 2024"
    now = closing(open_recaller(journal)).ask(query, "hybrid+ppr", RecallSettings())
    assert "Daily/2024-11-27.md" in [c.path for c in now.lanes["dates"]]
    then = closing(open_recaller(journal, as_of=before)).ask(query, "hybrid+ppr", RecallSettings())
    assert "Daily/2024-11-27.md" not in [c.path for c in then.lanes["dates"]]
    assert "Daily/2024-11-04.md" in [c.path for c in then.lanes["dates"]]


@pytest.mark.parametrize(
    ("query", "period"),
    [
        ("what did I do today", ("2026-12-02", "2026-12-03")),
        ("what did I work on yesterday?", ("2026-12-01", "2026-12-02")),
        ("notes from this week", ("2026-11-30", "2026-12-07")),  # 2 December 2026 is a Wednesday
        ("what did I read last week", ("2026-11-23", "2026-11-30")),
        ("decisions this month", ("2026-12-01", "2027-01-01")),
        ("what happened last month", ("2026-11-01", "2026-12-01")),
        ("что я делал вчера", ("2026-12-01", "2026-12-02")),
        ("заметки на прошлой неделе", ("2026-11-23", "2026-11-30")),
        ("в прошлом месяце", ("2026-11-01", "2026-12-01")),
        # Russian's other cases, as "last week" is found in any sentence: these said no period
        ("заметки за прошлую неделю", ("2026-11-23", "2026-11-30")),
        ("итоги: прошлая неделя", ("2026-11-23", "2026-11-30")),
        ("что сделано за эту неделю", ("2026-11-30", "2026-12-07")),
        ("расходы за прошлый месяц", ("2026-11-01", "2026-12-01")),
        ("планы на этот месяц", ("2026-12-01", "2027-01-01")),
        ("last week's notes from June 2025", ("2025-06-01", "2025-07-01")),  # a written date first
    ],
)
def test_periods_named_from_today(query, period):
    assert query_period(query, dt.date(2026, 12, 2)) == _period(*period)


def test_last_month_in_january_is_december():
    assert query_period("last month", dt.date(2027, 1, 15)) == _period("2026-12-01", "2027-01-01")


def test_yesterday_is_the_day_before_the_moment_a_past_view_is_of(tmp_path, closing):
    root = tmp_path / "days"
    today = dt.date.today()
    for offset in (0, 1, 2, 3):  # today's too: what the ask counts from if it falls after midnight
        day = today - dt.timedelta(days=offset)
        write(root, f"Daily/{day.isoformat()}.md", f"Worked on the heater, day {offset}.\n")
    index_vault(root, progress=False)
    query = "what did I do on the heater yesterday"
    asked_on = dt.date.today()  # the day the ask counts from, but for a midnight between the two
    now = closing(open_recaller(root)).ask(query, "hybrid+ppr", RecallSettings())
    yesterday = {(day - dt.timedelta(days=1)).isoformat() for day in (asked_on, dt.date.today())}
    assert [c.path for c in now.lanes["dates"]] in [[f"Daily/{day}.md"] for day in yesterday]
    # A past view counts from its moment: the lane is asked with that day as today.
    asked: list[dt.date | None] = []
    real = dates.query_period
    recaller = closing(open_recaller(root, as_of=time.time()))
    with pytest.MonkeyPatch.context() as patch:
        patch.setattr(dates, "query_period", lambda q, day=None: asked.append(day) or real(q, day))
        recaller.ask(query, "hybrid+ppr", RecallSettings())
    assert asked == [dt.date.fromtimestamp(recaller.as_of)]
    assert closing(open_recaller(root)).as_of is None  # the present asks with no day: today's


def test_frontmatter_that_is_not_a_mapping_states_no_date():
    class Store:
        def note_names(self):
            return [(1, "Daily/2024-11-04.md", "2024-11-04"), (2, "A.md", "A"), (3, "B.md", "B")]

        def frontmatter_rows(self, containing=()):
            return [(2, "A.md", "", '["date", "2024-11-05"]'), (3, "B.md", "", "{not json"), (1, "x", "", "{}")]

    index = DateIndex.from_store(Store())  # type: ignore[arg-type]
    assert index.notes_in(_period("2024-11-01", "2024-12-01")) == [1]


# A day or a month without its year is the most recent one not in the future: a user writing on
# 2026-01-05 of "December 20" means 2025's (it named no period: the lane said nothing).
@pytest.mark.parametrize(
    ("query", "period"),
    [
        ("what did I write on December 20", ("2025-12-20", "2025-12-21")),
        ("standup notes from January 3", ("2026-01-03", "2026-01-04")),  # this year's: it has been
        ("on the 3rd of March", ("2025-03-03", "2025-03-04")),
        ("the meeting on 3 March", ("2025-03-03", "2025-03-04")),
        ("March 3rd retro", ("2025-03-03", "2025-03-04")),
        ("what did I do on 3 may", ("2025-05-03", "2025-05-04")),
        ("journal from Dec. 31", ("2025-12-31", "2026-01-01")),
        ("that note of the 29th of February", ("2024-02-29", "2024-03-01")),  # the last leap year's
        ("what did I write in March", ("2025-03-01", "2025-04-01")),
        ("plans made in January", ("2026-01-01", "2026-02-01")),  # the month under way
        ("late January", ("2025-01-21", "2025-02-01")),  # its last ten days have not begun
        ("early January ideas", ("2026-01-01", "2026-01-11")),
        ("last March", ("2025-03-01", "2025-04-01")),
        ("what did I do last May?", ("2025-05-01", "2025-06-01")),
        ("this March", ("2026-03-01", "2026-04-01")),
        ("на встрече 3 марта", ("2025-03-03", "2025-03-04")),
        ("что я писал 20 декабря", ("2025-12-20", "2025-12-21")),
        ("заметки 3-го января", ("2026-01-03", "2026-01-04")),
        ("что я писал в марте", ("2025-03-01", "2025-04-01")),
        ("в прошлом марте", ("2025-03-01", "2025-04-01")),
        ("в этом марте", ("2026-03-01", "2026-04-01")),
        ("расходы за январь", ("2026-01-01", "2026-02-01")),
        ("в конце декабря", ("2025-12-21", "2026-01-01")),
        ("в начале января", ("2026-01-01", "2026-01-11")),
        ("на встрече 3 марта 2024", ("2024-03-03", "2024-03-04")),  # a year written wins
    ],
)
def test_a_date_without_its_year_is_the_most_recent_one(query, period):
    assert query_period(query, dt.date(2026, 1, 5)) == _period(*period)


@pytest.mark.parametrize(
    ("query", "period"),
    [
        ("in March", ("2026-03-01", "2026-04-01")),  # during March: this one
        ("late March", ("2025-03-21", "2025-04-01")),  # the 15th: this one's last ten days are to come
        ("March 20", ("2025-03-20", "2025-03-21")),
        ("March 15", ("2026-03-15", "2026-03-16")),  # today
        ("last March", ("2025-03-01", "2025-04-01")),  # not the one under way
        ("в прошлом марте", ("2025-03-01", "2025-04-01")),
        ("в марте", ("2026-03-01", "2026-04-01")),
    ],
)
def test_a_date_without_its_year_during_its_month(query, period):
    assert query_period(query, dt.date(2026, 3, 15)) == _period(*period)


@pytest.mark.parametrize(
    "query",
    [
        "may I ask about the kafka consumer",
        "this may help with the kafka consumer",
        "the first may fail and the last may work",
        "chapter 3 may apply here",  # "3 may" then a word: the verb
        "the march of progress",
        "January",  # a month with no word that makes it a date: a word of a title
        "in a January journal entry",
        "во время марша",
        "31 апреля",  # no such day
        "on the 5th",
    ],
)
def test_words_that_are_no_date_without_a_year(query):
    assert query_period(query, dt.date(2026, 1, 5)) is None


@pytest.mark.parametrize(
    "query",
    [
        # A number after a word it counts or ranks is that word's, not a day: "level 3 dec" (a spell's level 3,
        # dec the next word) was the 3rd of December, "top 10 march" (ten marches) the 10th of March.
        "level 3 dec",
        "spells of level 3 dec",
        "top 10 march songs",
        "chapter 12 may",
        "page 4 jan notes",
        "step 2 sep",
        "item #3 dec",
        "version 3-10 may",
        "уровень 3 дек",
        "глава 5 мая",
        "топ 10 марта",
        "№ 4 апреля",
    ],
)
def test_a_number_a_word_counts_before_a_month_is_no_day(query):
    assert query_period(query, dt.date(2026, 1, 5)) is None


@pytest.mark.parametrize(
    ("query", "period"),
    [
        # A day still, after any other word; a year written after it makes "top 10 march 2024" the month.
        ("what did I do on 3 dec", ("2025-12-03", "2025-12-04")),
        ("the level design meeting 3 dec", ("2025-12-03", "2025-12-04")),
        ("с 3 марта", ("2025-03-03", "2025-03-04")),
        ("подарки на 8 марта", ("2025-03-08", "2025-03-09")),
        ("top 10 march 2024", ("2024-03-01", "2024-04-01")),
        ("уровень 3 декабря 2024", ("2024-12-01", "2025-01-01")),
        ("the meeting on 3 March 2024", ("2024-03-03", "2024-03-04")),
    ],
)
def test_a_number_before_a_month_after_other_words_is_a_day(query, period):
    assert query_period(query, dt.date(2026, 1, 5)) == _period(*period)


@pytest.mark.parametrize(
    ("query", "period"),
    [
        # A range of days was its last day or its first ("с 3 по 10 марта": the 10th; "March 3-10": the 3rd).
        ("с 3 по 10 марта", ("2025-03-03", "2025-03-11")),
        ("3-10 марта", ("2025-03-03", "2025-03-11")),
        ("March 3-10", ("2025-03-03", "2025-03-11")),
        ("from 3 to 10 March", ("2025-03-03", "2025-03-11")),
        ("between march 3 and march 10", ("2025-03-03", "2025-03-11")),
        ("March 3–10, 2024", ("2024-03-03", "2024-03-11")),
        ("с 3 по 10 марта 2024", ("2024-03-03", "2024-03-11")),
        # "since" and "after" a day: from it to today.
        ("since March 3", ("2025-03-03", "2026-01-06")),
        ("после 3 марта", ("2025-03-04", "2026-01-06")),
        ("after 20 December", ("2025-12-21", "2026-01-06")),
        ("since 3 March 2024", ("2024-03-03", "2026-01-06")),
    ],
)
def test_ranges_and_days_since(query, period):
    assert query_period(query, dt.date(2026, 1, 5)) == _period(*period)


@pytest.mark.parametrize(
    "query",
    [
        # Before a day: the notes before it, not those of the day ("до 3 марта" was the 3rd of March).
        "до 3 марта",
        "before March 3",
        "until 10 march",
        "перед 8 марта",
        # A decimal's fraction, a verb "may" after its subject: no day.
        "1.5 dec",
        "0,3 дек",
        "I may 3 times",
        "it may 2x the speed",
        # A number after a month with a day before it is a year's, of two digits: "12 марта 24" was the 24th of March.
        "12 марта 24",
    ],
)
def test_phrases_that_name_no_one_period(query):
    assert query_period(query, dt.date(2026, 1, 5)) is None
