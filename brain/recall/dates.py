"""Dates lane: a query that names a period asks for the notes written in it.

"what did I jot down in my daily notes in November 2024?", "late January 2025", "summer 2024",
"2024-11", "в июне 2025", "what did I do yesterday", "last week": embeddings and BM25 see
"November" as one more word (and "yesterday" as none), and a daily note's text rarely says
its own date. The date is in its name ("2024-11-04", "Entry of 28th Jun, 2025", "04.11.2024",
"28 июня 2025": Obsidian's daily notes are named by their date) or in its frontmatter
(``date``, ``created``). This lane finds the notes whose stated date falls
in the query's period and ranks them by their best chunk for the query; it says nothing for
a query without a period, or with a period that holds more than ``MAX_NOTES`` notes (then the
period does not narrow anything). English and Russian month and season names.
"""

from __future__ import annotations

import bisect
import calendar
import datetime as dt
import json
import re
from dataclasses import dataclass
from typing import TYPE_CHECKING

from ..notes import WORLD_DATE_FIELDS, world_time
from ..text import lookalikes_as_cyrillic, word_chars
from .dense import scored_candidates
from .types import Candidate

if TYPE_CHECKING:
    import numpy as np

    from ..index.store import IndexStore

MAX_NOTES = 1_000  # a period holding more notes than this ranks nothing

_MONTHS_EN = [
    ("january", "jan"),
    ("february", "feb"),
    ("march", "mar"),
    ("april", "apr"),
    ("may", "may"),
    ("june", "jun"),
    ("july", "jul"),
    ("august", "aug"),
    ("september", "sept", "sep"),
    ("october", "oct"),
    ("november", "nov"),
    ("december", "dec"),
]
# Russian month names in the cases a date or a question uses: май, мая, мае; июнь, июня, июне;
# and cut short as English's are ("янв", "сент.", "15 мар 2026").
_MONTHS_RU = [
    r"январ[ьяе]|янв",
    r"феврал[ьяе]|февр?",
    r"март[ае]?|мар",
    r"апрел[ьяе]|апр",
    r"ма[йяе]",
    r"июн[ьяе]?",
    r"июл[ьяе]?",
    r"август[ае]?|авг",
    r"сентябр[ьяе]|сент?",
    r"октябр[ьяе]|окт",
    r"ноябр[ьяе]|нояб?",
    r"декабр[ьяе]|дек",
]
_MONTH = "|".join(
    [f"(?P<en{i}>{'|'.join(names)})" for i, names in enumerate(_MONTHS_EN, 1)]
    + [f"(?P<ru{i}>{pattern})" for i, pattern in enumerate(_MONTHS_RU, 1)]
)
_MONTH_RE = re.compile(rf"^(?:{_MONTH})$")
_ORDINAL = r"(?:st|nd|rd|th|-?го|-?е)?"
# A date is written in ASCII digits, as a frontmatter date is read (``moments.written_date``): ``\d``
# took other scripts' digits, and "20٢٤-03-01" or "2０24-03-01" was a day. Such a digit is a
# character of a word (``_W``, ``_E``), so a name mixing them states no date at all.
_YEAR = r"((?:19|20)[0-9][0-9])"
_W = f"(?<![{word_chars()}])"  # a word starts here (not after a vowel sign, as not after a letter)
_E = f"(?![{word_chars()}])"  # and ends here

# A note's name that is a day.
_YEARISH = re.compile(r"(?:19|20)[0-9][0-9]")
_ISO_DAY = re.compile(rf"{_W}{_YEAR}[-_.]([0-9][0-9])[-_.]([0-9][0-9]){_E}")
_DOTTED_DAY = re.compile(rf"{_W}([0-9]{{1,2}})\.([0-9]{{1,2}})\.{_YEAR}{_E}")
_DAY_MONTH_YEAR = re.compile(rf"{_W}([0-9]{{1,2}}){_ORDINAL}\s+(?:of\s+)?(\w+)\.?,?\s+{_YEAR}{_E}")
_MONTH_DAY_YEAR = re.compile(rf"{_W}(\w+)\.?\s+([0-9]{{1,2}}){_ORDINAL},?\s+{_YEAR}{_E}")
# A query's period.
_QUALIFIER = (
    r"(?:(?P<q>early|mid|middle of|late|beginning of|start of|end of|the end of|"
    r"начал[еоа]|середин[еуа]|конц[еа]|конец)\s+)?"
)
_MONTH_YEAR = re.compile(rf"{_W}{_QUALIFIER}(?:in\s+|of\s+)?(\w+)\.?,?\s+(?:of\s+)?{_YEAR}{_E}")
# Not a day's first part, in any script's digits ("2024-03-１5" is no day, nor March).
_ISO_MONTH = re.compile(rf"{_W}{_YEAR}-([0-9][0-9]){_E}(?!-\d)")
_SEASONS = {
    "spring": (3, 3),
    "summer": (6, 3),
    "autumn": (9, 3),
    "fall": (9, 3),
    "winter": (1, 2),
    "весна": (3, 3),
    "весной": (3, 3),
    "весны": (3, 3),
    "лето": (6, 3),
    "летом": (6, 3),
    "лета": (6, 3),
    "осень": (9, 3),
    "осенью": (9, 3),
    "осени": (9, 3),
    "зима": (1, 2),
    "зимой": (1, 2),
    "зимы": (1, 2),
}
_SEASON = re.compile(rf"{_W}({'|'.join(_SEASONS)})\s+(?:of\s+)?{_YEAR}{_E}")
# Periods named from today (the moment a past view is of, for `--as-of`), and what each is.
# Russian's in any case, as a question puts them: «на прошлой неделе», «за прошлую неделю»,
# «прошлая неделя», «в этом месяце», «за этот месяц» ("last week" is one form in English).
_RELATIVE_KINDS = [
    ("today", "day"),
    ("сегодня", "day"),
    ("yesterday", "yesterday"),
    ("вчера", "yesterday"),
    ("this week", "week"),
    (r"эт(?:а|у|ой)\s+недел[яюеи]", "week"),
    ("last week", "last week"),
    ("the past week", "last week"),
    (r"прошл(?:ая|ую|ой)\s+недел[яюеи]", "last week"),
    ("this month", "month"),
    (r"эт(?:от|ом|ого)\s+месяц[еа]?", "month"),
    ("last month", "last month"),
    (r"прошл(?:ый|ом|ого)\s+месяц[еа]?", "last month"),
]
# A day or a month without its year ("3 марта", "March 3", "the 3rd of March", "in March", "в марте",
# "late January", "в конце января", "last March", "в прошлом марте"): the most recent one not in the
# future (``_without_year``). A month alone is a date only after a word that makes it one ("in", "в",
# "late", "last"): "the march of progress", "may I ask" name none; and English's "3 may" only
# with an ordinal, "of", or nothing after it ("chapter 3 may apply").
# No number after it: a year in other scripts' digits ("в июне 20२५") is a year, not written for this.
_NO_YEAR = r"(?!\.?\s*[,.]?\s*\d)"
_DAY_MONTH = re.compile(rf"{_W}(?:the\s+)?([0-9]{{1,2}})({_ORDINAL})\s+(of\s+)?(\w+){_E}{_NO_YEAR}")
_MONTH_DAY = re.compile(rf"{_W}(\w+)\.?\s+(?:the\s+)?([0-9]{{1,2}}){_ORDINAL}{_E}{_NO_YEAR}")
_MONTH_ALONE = re.compile(
    rf"{_W}(?:(?P<lead>in|during|last|this|(?:(?:в|во)\s+)?(?:прошл(?:ом|ый|ого)|эт(?:ом|от|ого))|в|во|за)\s+)?"
    rf"(?:(?P<q>early|mid|middle of|late|beginning of|start of|end of|the end of|"
    rf"начал[еоа]|середин[еуа]|конц[еа]|конец)\s+)?(?P<m>\w+){_E}{_NO_YEAR}"
)
# A word that counts or ranks the number after it, which is then no day of the month after that:
# "level 3 dec" is a spell's level, "top 10 march" ten marches, «глава 5 мая» a chapter (a "#", «№» too).
# Words of one letter are left out: «с 3 марта» is "since March 3".
_COUNTED_BEFORE = re.compile(
    r"(?:(?<![^\W\d_])(?:level|lvl|top|tier|rank|chapter|page|pg|step|part|round|floor|room|version|vol|volume"
    r"|issue|episode|ep|season|book|item|table|figure|fig|phase|stage|act|scene|unit|lesson|section|rule|exercise"
    r"|question|grade|уровень|уровня|уровне|топ|глава|главе|главы|страница|странице|стр|шаг|часть|раунд|этаж|том"
    r"|выпуск|номер|пункт|урок|класс|сезон|серия|эпизод)\.?|[#№])\s*\Z"
)
# A range of days of a month: "3-10 марта", «с 3 по 10 марта», "from 3 to 10 March", "March 3-10", "between
# March 3 and March 10", "March 3 to April 5", a year maybe after it. "and", «и», «до» join a range's two days
# only after "between", «с» ("3 и 10 марта" are two days).
_RANGE_SEPARATOR = r"\s*(?P<sep>-|–|—|по|to|until|till|through|and|и|до)\s*"
_DAY_RANGE = re.compile(
    rf"{_W}(?P<from>(?:с|from|between|между)\s+)?(?:the\s+)?(?P<d1>[0-9]{{1,2}}){_ORDINAL}{_RANGE_SEPARATOR}"
    rf"(?:the\s+)?(?P<d2>[0-9]{{1,2}}){_ORDINAL}\s+(?:of\s+)?(?P<m1>\w+){_E}\.?(?:,?\s+(?P<year>{_YEAR}){_E})?"
)
_MONTH_RANGE = re.compile(
    rf"{_W}(?P<from>(?:from|between)\s+)?(?P<m1>\w+)\.?\s+(?:the\s+)?(?P<d1>[0-9]{{1,2}}){_ORDINAL}{_RANGE_SEPARATOR}"
    rf"(?:(?P<m2>\w+)\.?\s+)?(?:the\s+)?(?P<d2>[0-9]{{1,2}}){_ORDINAL}{_E}(?:,?\s+(?P<year>{_YEAR}){_E})?"
)
# What bounds a day's period on one side, before it: since it (the day and after), after it (the days after),
# before it (the days before: no one period to read, not the day itself, which "до 3 марта" was).
_BOUND_BEFORE = re.compile(
    r"(?:(?P<since>since|начиная\s+с|с\s+начала)|(?P<after>after|после)|(?P<until>before|until|till|до|перед|прежде))"
    r"\s+(?:the\s+)?\Z"
)
# A day's number before a month's name: a number after the month is then a year's ("12 марта 24").
_DAY_BEFORE = re.compile(r"[0-9]\s+\Z")
# A subject before "may": the verb ("I may 3 times", "it may 2x the speed"), no month.
_SUBJECT_BEFORE = re.compile(r"(?<!\w)(?:i|you|we|they|he|she|it|this|that|which|who|one)\s+\Z")
_RELATIVE = re.compile("|".join(f"{_W}(?P<r{i}>{pattern}){_E}" for i, (pattern, _) in enumerate(_RELATIVE_KINDS)))


@dataclass(frozen=True)
class Period:
    start: dt.date
    end: dt.date  # the first day after it


# What a reader answers where a phrase names no one period ("before March 3"): read no further, name none.
_NO_PERIOD = Period(dt.date.min, dt.date.min)


def month_number(word: str) -> int | None:
    """1-12 for an English (full or short) or Russian month name in any case; None otherwise."""
    match = _MONTH_RE.match(word.casefold())
    if match is None:
        return None
    name = next(key for key, value in match.groupdict().items() if value is not None)
    return int(name[2:])


def query_period(query: str, today: dt.date | None = None) -> Period | None:
    """The period a query names: a day, a month (or its first, middle or last third), a season
    of a year, or one named from ``today`` (yesterday, last week, this month, …); None when it
    names none (or one past an end of the calendar). A date written out counts before a relative one."""
    text = lookalikes_as_cyrillic(query).casefold()  # "3 мaрта" with a Latin "a" is March
    today = today or dt.date.today()
    try:
        period = _range(text, today) or _written_period(text, today) or _without_year(text, today)
        if period is not None:
            return None if period == _NO_PERIOD else period
        found = _RELATIVE.search(text)
        if found is None:
            return None
        kind = _RELATIVE_KINDS[int(str(found.lastgroup)[1:])][1]
        return _relative(kind, today)
    except (OverflowError, ValueError):  # a past view of the calendar's first or last days: no such period
        return None


def _without_year(text: str, today: dt.date) -> Period | None:
    """A day or a month named without its year in ``text`` (case-folded), as the most recent one
    not in the future: on 2026-01-05, "December 20" is 2025-12-20 and "3 января" 2026-01-03; "in
    March" is the last March begun by ``today`` (this one, during March), "late March" the last
    one whose last ten days have begun; "last March", «в прошлом марте», the one before the
    current year's March if that has begun, "this March", «в этом марте», the current year's. A
    user asking of their notes asks of the past (the notes written then), and a date a year on is
    a note not yet written."""
    for match in _DAY_MONTH.finditer(text):
        day_text, ordinal, of, word = match.groups()
        month = month_number(word)
        if month is None or (word == "may" and not (ordinal or of) and text[match.end() :].strip()[:1].isalpha()):
            continue
        if _counted(text, match.start(1)):
            continue
        day = _last_day(month, int(day_text), today)
        if day is not None:
            return _bounded(text, day, match.start(), today)
    for match in _MONTH_DAY.finditer(text):
        month = month_number(match.group(1))
        if month is None or _DAY_BEFORE.search(text, max(0, match.start() - 4), match.start()):
            continue  # "12 марта 24": the number after the month is a year's, not a day's
        if match.group(1) == "may" and _SUBJECT_BEFORE.search(text, max(0, match.start() - 8), match.start()):
            continue
        day = _last_day(month, int(match.group(2)), today)
        if day is not None:
            return _bounded(text, day, match.start(), today)
    for match in _MONTH_ALONE.finditer(text):
        lead, qualifier, word = match.group("lead", "q", "m")
        month = month_number(word) if lead or qualifier else None
        if month is None or (word == "may" and lead in ("this", "last") and text[match.end() :].strip()[:1].isalpha()):
            continue  # "this may help", "the last may be wrong"
        lead = lead.split()[-1] if lead else ""  # «в прошлом» says "прошлом"
        year = today.year
        if lead.startswith(("this", "эт")):
            return _month(year, month, qualifier)
        if _month(year, month, qualifier).start > today:
            year -= 1
        elif lead.startswith(("last", "прошл")) and dt.date(year, month, 1) <= today:
            year -= 1  # the current year's has begun: the one before it is the last
        return _month(year, month, qualifier)
    return None


def _last_day(month: int, day: int, today: dt.date) -> dt.date | None:
    """The most recent ``day`` of ``month`` on or before ``today`` (the 29th of February: the last
    leap year's); None for no such day (the 31st of April)."""
    for year in range(today.year, max(today.year - 8, 0), -1):
        found = _date(year, month, day)
        if found is not None and found <= today:
            return found
    return None


def _relative(kind: str, today: dt.date) -> Period:
    if kind in ("day", "yesterday"):
        day = today - dt.timedelta(days=1 if kind == "yesterday" else 0)
        return Period(day, day + dt.timedelta(days=1))
    if kind in ("week", "last week"):  # weeks from Monday
        monday = today - dt.timedelta(days=today.weekday() + (7 if kind == "last week" else 0))
        return Period(monday, monday + dt.timedelta(days=7))
    first = today.replace(day=1)
    if kind == "last month":
        first = (first - dt.timedelta(days=1)).replace(day=1)
    return Period(first, _next_month(first.year, first.month))


def _written_period(text: str, today: dt.date) -> Period | None:
    """A period written out in ``text`` (case-folded): a day (or the days since or after it), a month or a
    third of one, a season."""
    found = _ISO_DAY.search(text)
    if found:
        day = _date(*map(int, found.groups()))
        return _bounded(text, day, found.start(), today) if day is not None else None
    named = _named_day_at(text)
    if named is not None:
        return _bounded(text, *named, today)
    for match in _MONTH_YEAR.finditer(text):
        month = month_number(match.group(2))
        if month is not None:
            return _month(int(match.group(3)), month, match.group("q"))
    found = _ISO_MONTH.search(text)
    if found and 1 <= int(found.group(2)) <= 12:
        return _month(int(found.group(1)), int(found.group(2)), None)
    found = _SEASON.search(text)
    if found:
        first, months = _SEASONS[found.group(1)]
        year = int(found.group(2))
        end_month = first + months
        end = dt.date(year + (end_month - 1) // 12, (end_month - 1) % 12 + 1, 1)
        return Period(dt.date(year, first, 1), end)
    return None


def stated_date(name: str) -> dt.date | None:
    """The day a note's name says it is, if it says one: "2024-11-04", "2024_11_04 standup",
    "04.11.2024", "Entry of 28th Jun, 2025", "June 28, 2025", "28 июня 2025"."""
    if not _YEARISH.search(name):  # most names: one scan, not four (the index of 100,000 notes 0.43 -> 0.20 s)
        return None
    text = name.casefold()
    found = _ISO_DAY.search(text)
    if found:
        return _date(*map(int, found.groups()))
    found = _DOTTED_DAY.search(text)
    if found:
        day_of_month, month_of_year, year = map(int, found.groups())
        return _date(year, month_of_year, day_of_month)
    return _named_day(text)


def _named_day(text: str) -> dt.date | None:
    """The first real day written with a month's name ("28th Jun, 2025", "June 28, 2025",
    "28 июня 2025") in ``text`` (case-folded)."""
    named = _named_day_at(text)
    return named[0] if named is not None else None


def _named_day_at(text: str) -> tuple[dt.date, int] | None:
    """``_named_day``'s day, and where its phrase starts."""
    for pattern, (day_at, month_at) in ((_DAY_MONTH_YEAR, (1, 2)), (_MONTH_DAY_YEAR, (2, 1))):
        for match in pattern.finditer(text):
            month = month_number(match.group(month_at))
            if month is not None and not (day_at == 1 and _counted(text, match.start(1))):
                named = _date(int(match.group(3)), month, int(match.group(day_at)))
                if named is not None:
                    return named, match.start()
    return None


def _bounded(text: str, day: dt.date, at: int, today: dt.date) -> Period | None:
    """The period of ``day``, named in ``text`` at ``at``: the day, or from it to ``today`` after "since"
    (the day after it after "after"), or ``_NO_PERIOD`` after "before" (the days before it: no one period)."""
    bound = _BOUND_BEFORE.search(text, max(0, at - 16), at)
    if bound is None:
        return _one_day(day)
    if bound.group("until"):
        return _NO_PERIOD
    start = day + dt.timedelta(days=1) if bound.group("after") else day
    end = today + dt.timedelta(days=1)
    return Period(start, end) if start < end else _NO_PERIOD


def _range(text: str, today: dt.date) -> Period | None:
    """A range of days named in ``text`` (``_DAY_RANGE``, ``_MONTH_RANGE``): its first day to the day after its
    last, in the year written, else the most recent one that has begun by ``today``."""
    for pattern in (_DAY_RANGE, _MONTH_RANGE):
        for match in pattern.finditer(text):
            if match.group("sep") in ("and", "и", "до") and not match.group("from"):
                continue  # "3 и 10 марта": two days
            first = month_number(match.group("m1"))
            second = month_number(match.group("m2")) if pattern is _MONTH_RANGE and match.group("m2") else first
            if first is None or second is None or _counted(text, match.start("d1")):
                continue
            d1, d2, year = int(match.group("d1")), int(match.group("d2")), match.group("year")
            if year is not None:
                start = _date(int(year), first, d1)
            else:
                start = _last_day(first, d1, today)
            if start is None:
                continue
            last = _date(start.year + (second < first), second, d2)
            if last is None or last < start:
                continue
            return Period(start, last + dt.timedelta(days=1))
    return None


def _counted(text: str, at: int) -> bool:
    """Whether the number at ``at`` follows a word that counts or ranks it (``_COUNTED_BEFORE``), its
    last 24 characters read, or a decimal point ("1.5 dec", "0,3 дек": a fraction's digits)."""
    if at >= 2 and text[at - 1] in ".," and text[at - 2].isdigit():
        return True
    if at >= 2 and text[at - 1] in "-–—" and text[at - 2].isdigit():
        first = at - 2  # a range's second number ("version 3-10 may"): counted as its first is
        while first > 0 and text[first - 1].isdigit():
            first -= 1
        return _counted(text, first)
    return _COUNTED_BEFORE.search(text, max(0, at - 24), at) is not None


def _date(year: int, month: int, day: int) -> dt.date | None:
    try:
        return dt.date(year, month, day)
    except ValueError:
        return None


def _one_day(day: dt.date | None) -> Period | None:
    return Period(day, day + dt.timedelta(days=1)) if day is not None else None


def _month(year: int, month: int, qualifier: str | None) -> Period:
    last = calendar.monthrange(year, month)[1]
    first_day, end_day = 1, last + 1
    if qualifier:
        if qualifier in ("early", "beginning of", "start of") or qualifier.startswith("начал"):
            end_day = 11
        elif qualifier in ("mid", "middle of") or qualifier.startswith("середин"):
            first_day, end_day = 11, 21
        else:  # late, end of, конец
            first_day = 21
    start = dt.date(year, month, first_day)
    return Period(start, dt.date(year, month, end_day) if end_day <= last else _next_month(year, month))


def _next_month(year: int, month: int) -> dt.date:
    return dt.date(year + month // 12, month % 12 + 1, 1)


class DateIndex:
    """Every note with a stated date (its frontmatter's, else its name's), by date."""

    def __init__(self, dated: list[tuple[dt.date, int]]):
        dated.sort()
        self._days = [day.toordinal() for day, _ in dated]
        self._notes = [note_id for _, note_id in dated]

    def __len__(self) -> int:
        return len(self._notes)

    @classmethod
    def from_store(cls, store: IndexStore) -> DateIndex:
        stated: dict[int, dt.date] = {}
        for note_id, path, title in store.note_names():
            stem = path.rsplit("/", 1)[-1]
            stem = stem[:-3] if stem.lower().endswith(".md") else stem
            day = stated_date(stem) or (stated_date(title) if title != stem else None)
            if day is not None:
                stated[note_id] = day
        for note_id, _, _, frontmatter in store.frontmatter_rows(WORLD_DATE_FIELDS):
            try:
                data = json.loads(frontmatter)
            except ValueError:
                continue
            if not isinstance(data, dict):  # what the index stores is a mapping; anything else says no date
                continue
            value = world_time(data).date
            try:
                day = dt.date.fromisoformat(value[:10]) if value else None
            except ValueError:
                day = None
            if day is not None:
                stated[note_id] = day  # what the note says of itself wins over its name
        return cls([(day, note_id) for note_id, day in stated.items()])

    def notes_in(self, period: Period) -> list[int]:
        low = bisect.bisect_left(self._days, period.start.toordinal())
        high = bisect.bisect_left(self._days, period.end.toordinal())
        return self._notes[low:high]


def dates_search(
    store: IndexStore, index: DateIndex, period: Period, query_vector: np.ndarray, depth: int
) -> list[Candidate]:
    """The notes of the query's ``period`` (``query_period``), each by its best chunk for the
    query, best first."""
    if depth <= 0:
        return []
    notes = index.notes_in(period)
    if not notes or len(notes) > MAX_NOTES:
        return []
    found = scored_candidates(store, notes, query_vector, "dates")
    found.sort(key=lambda c: (-c.dense_score, c.path))
    return found[:depth]
