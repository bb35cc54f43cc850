"""Moments in time as people type them, and back: what `brain ask --as-of`, `--valid-at`,
`brain prune --before`, `brain ab report --since`, `brain serve` and `brain mcp` (``as_of``,
``recent_turns``' ``since``) read, and how dates are shown. Every one of them takes the same
forms (``FORMS``) and refuses others with the same words: ``--since`` read ``30m`` where
``--as-of`` refused it, ``--as-of`` read ``2h ago`` and ``3D`` where ``--since`` refused them.

Standard library only (and brain.errors): the client side of `brain ask`, which a running
`brain serve` answers, parses ``--as-of`` here without importing the index's modules.
"""

from __future__ import annotations

import datetime as dt
import math
import re
import time
from collections.abc import Callable
from typing import Literal, TypeVar

from .errors import ConfigError, quoted

# A span back from now (``30m``, ``12h``, ``7d``, ``2w``, ``1y``, ``7 d ago``), in any case but
# ``M``: a minute is ``m``, and ``1M`` would read as a minute where a month was meant.
_SPAN = re.compile(r"\s*(\d+)\s*(m|[hdwy])\s*(?:ago)?\s*", re.IGNORECASE)
_SPAN_SECONDS = {"m": 60, "h": 3600, "d": 86400, "w": 7 * 86400, "y": 365 * 86400}  # a year: 365 days
_DAYS_BACK = {"today": 0, "yesterday": 1}  # a day named: local time's
NOW = "now"
# The same words in Russian, in any case (the pilot's users write `--as-of вчера`); spans stay in
# Latin letters: a Russian м is a minute (минута) or a month (месяц), 7д beside 7d only doubles a form.
_IN_RUSSIAN = {"сегодня": "today", "вчера": "yesterday", "сейчас": NOW}

DayEnd = Literal["end", "start"]  # which moment of a day a date means (``parse_moment``)
Written = TypeVar("Written")  # a date as the command reads it (``_read``)

# What every option and argument naming a moment takes (its error says so, in these words).
FORMS = (
    "a date (2026-03-01), a date and time (2026-03-01T14:30), either with a zone (Z, +03, +0300, +03:00), "
    "a span back (30m, 12h, 7d, 2w, 1y), today, yesterday or now (сегодня, вчера, сейчас)"
)

# The moments every command reads (``parse_moment``): years 1 to 9999 in local time and in UTC.
CALENDAR = "years 1 to 9999, in local time and in UTC"
_EPOCH = dt.datetime(1970, 1, 1)
# Python's own conversions between local time and a timestamp look at local time a day either side
# (for a fold), and fail within a day of the calendar's ends: there, local time's offset is the one
# two days inward (no zone moves its clocks on those days; year 1 is every zone's mean solar time).
_INWARD = (dt.datetime(1, 1, 3), dt.datetime(9999, 12, 29, 23, 59, 59))


def _refused(option: str, text: str) -> ConfigError:
    return ConfigError(f"{option} takes {FORMS}, not {quoted(text)}")


def _span(value: str) -> tuple[str, str] | None:
    """The digits and the unit of a span back from now, or None when ``value`` is none."""
    span = _SPAN.fullmatch(value)
    if span is None:
        return None
    if span[2] == "M":
        raise ValueError("a minute is m: M is no unit")
    return span[1], span[2].lower()


def _span_seconds(span: tuple[str, str]) -> int:
    """A span's seconds (a ValueError past the 4,300 digits ``int`` reads)."""
    return int(span[0]) * _SPAN_SECONDS[span[1]]


def _named(value: str, now: float) -> dt.date | str | None:
    """The local day ``today`` or ``yesterday`` names at ``now``, ``NOW`` for ``now``, or None."""
    word = value.lower()
    if word == NOW:
        return NOW
    back = _DAYS_BACK.get(word)
    return None if back is None else dt.date.fromtimestamp(now) - dt.timedelta(days=back)


def parse_moment(text: str, option: str = "--as-of", *, now: float | None = None, date_means: DayEnd = "end") -> float:
    """A moment in the index's own time (Unix seconds) from what a user types (``FORMS``): a date
    (``2026-03-01``, ``today``, ``yesterday``, a week, a date with a zone: by ``date_means``, the
    end of that day, local time unless it names a zone, or its start), a date and time (local
    unless it names a zone), a span back from now (``30m``, ``12h``, ``7d``, ``2w``, ``1y``), or
    ``now``.

    Which end of a day a date means is the command's to say, as what it does with the moment
    differs: ``--as-of 2026-03-01`` looks at the vault as it stood at the end of that day, and
    ``brain prune --before today`` drops what came before today began, never today's own;
    a week is its Sunday's end, or its Monday's start.

    The moment must be one the calendar can show, in UTC and in local time: recall turns it back
    into a date and prints it, so one past either end is an error here. Local time's ends are a
    day inside years 1 and 9999 (``CALENDAR``): Python's conversions between local time and a
    timestamp look at the local time a day either side (for a fold), and year 0 and year 10000
    have none; the error said "years 1 to 9999" and refused ``--as-of 0001-01-01``."""
    now = time.time() if now is None else now
    span, named, written = _read(text, option, now, _date_or_datetime if date_means == "end" else first_moment)
    try:
        if span is not None:
            moment = now - _span_seconds(span)
        elif named == NOW:
            moment = now
        elif isinstance(named, dt.date):
            moment = _end_of_day(named) if date_means == "end" else _start_of_day(named)
        elif isinstance(written, dt.datetime):
            moment = written.timestamp() if written.tzinfo else local_timestamp(written)
        else:
            assert written is not None  # not a span, not named: written
            moment = _end_of_day(written)
    except (ValueError, OverflowError, OSError):  # a span of thousands of digits; a local time past year 1 or 9999
        moment = math.nan
    if not _fits(moment):
        raise ConfigError(
            f"{option} {quoted(text)} is at or past an end of the calendar ({CALENDAR}): it takes {FORMS}"
        )
    return moment


def _read(
    text: str, option: str, now: float, written: Callable[[str], Written]
) -> tuple[tuple[str, str] | None, dt.date | str | None, Written | None]:
    """What a user typed as a moment (``parse_moment``, ``window_start``), by the one order its
    forms are tried in: a span back from now, else a day named or ``now`` (``_named``), else a
    date, or a date and time, as ``written`` reads it; one of the three is not None. A form it is
    none of is refused in ``option``'s words."""
    try:
        value = typed(text)
        span = _span(value)
        named = None if span is not None else _named(value, now)
        return span, named, written(value) if span is None and named is None else None
    except ValueError:
        raise _refused(option, text) from None


def counted_back(text: str) -> bool:
    """Whether ``text`` names a moment by counting back from now (a span like ``10m``, or
    ``now``) rather than a day or a date: `brain prune` asks before such a one drops the last
    day's rows (``m`` is a minute: ``10m`` typed for ten months keeps ten minutes)."""
    try:
        value = typed(text)
        return _span(value) is not None or value.lower() == NOW
    except ValueError:
        return False


def window_start(text: str, option: str = "--since", *, now: float | None = None) -> dt.datetime:
    """The first moment of a window that begins at what a user types (``FORMS``; `brain ab report
    --since`, ``recent_turns``' ``since``), as a naive UTC datetime: a date's 00:00 (``today``'s,
    ``yesterday``'s; a week's: its Monday's), in local time unless it names a zone; a date and
    time; a span back from now; ``now``. One before year 1 is ``datetime.min`` (everything), one
    after 9999 ``datetime.max`` (nothing)."""
    now = time.time() if now is None else now
    span, named, since = _read(text, option, now, first_moment)
    utc_now = dt.datetime.fromtimestamp(now, dt.timezone.utc).replace(tzinfo=None)
    if span is not None:
        try:
            return utc_now - dt.timedelta(seconds=_span_seconds(span))
        except (OverflowError, ValueError):  # a span longer than the calendar (or than int() reads): everything
            return dt.datetime.min
    if named == NOW:
        return utc_now
    if isinstance(named, dt.date):
        since = dt.datetime.combine(named, dt.time.min)
    assert since is not None  # not a span, not named: written
    try:
        if since.tzinfo is None:  # local time: its offset that day (astimezone reads a naive one so)
            since = since.astimezone()
        return since.replace(tzinfo=None) - (since.utcoffset() or dt.timedelta(0))
    except (OverflowError, ValueError, OSError):
        # 0001-01-01T00:00+14:00 is before year 1 in UTC; 9999-12-31T23:00-05:00 after 9999 (and a
        # local time there may be past what the platform's clock reads)
        return dt.datetime.min if since.year == 1 else dt.datetime.max


_ISO_WEEK = re.compile(r"(\d{4})-?W(\d{2})(?:-?([1-7]))?", re.IGNORECASE)
_BASIC_DATE = re.compile(r"(\d{4})(\d{2})(\d{2})")
# A zone: Z, or an offset in hours (+03), or hours and minutes (+0300, +03:00), as ISO 8601 has them.
_ZONE = r"(Z|[+-]\d\d(?::?\d\d)?)"
# A day and a zone (2026-03-01Z, 2026-03-01+03).
_ZONED_DAY = re.compile(r"(.+?)" + _ZONE, re.IGNORECASE)
# A day, T or a space, a time (hours; minutes, seconds and a fraction of one optional) and a zone
# if any: read here, as Python's fromisoformat took any one character between a date and a time
# ("2026-12-01+03" was 03:00 local, "2026-12-01-05" 05:00) and 3.10's no zone Z nor hour alone.
_DATE_TIME = re.compile(r"(.+?)[T ](\d\d)(?::?(\d\d)(?::?(\d\d)(?:[.,](\d+))?)?)?" + _ZONE + "?", re.IGNORECASE)


def typed(text: str | None) -> str:
    """A moment as a user typed it (an option, a tool's argument), without the spaces around it:
    ``сегодня``, ``вчера`` and ``сейчас`` (any case) as their English words, else ASCII, or a
    ``ValueError``. Python's ``int`` and ``\\d`` read other scripts' digits, so
    ``٢٠٢٦١٢٠١`` and ``７d`` were read and ``٢٠٢٦-١٢-٠١`` refused (``fromisoformat`` takes ASCII
    alone); a number setting refuses them all (config._number): so does a moment, and so does a
    note's own date (``written_date``)."""
    value = (text or "").strip()
    word = _IN_RUSSIAN.get(value.lower())
    if word is not None:
        return word
    if not value.isascii():
        raise ValueError(f"not ASCII: {value!r}")
    return value


def _date_or_datetime(value: str) -> dt.date | dt.datetime:
    """A date in any ISO form (``2026-03-01``, ``20260301``, ``2026-W09-7``): the day, whose end
    it means; a week (``2026-W09``): its last day, as a date means the whole day; a date with a
    zone (``2026-03-01Z``, ``2026-03-01+03:00``): the last moment of that day there; else a date
    and time. (Read here, not by ``date.fromisoformat`` alone: Python 3.10's takes only
    ``2026-03-01``, and 3.11's reads a week as its Monday; and ``datetime.fromisoformat`` read
    ``2026-03-01Z`` as the day's first moment, a day before what ``2026-03-01`` means.)"""
    day = _day(value)
    if day is not None:
        return day
    zoned = _zoned(value)
    if zoned is not None:
        return dt.datetime.combine(zoned[0], dt.time.max, tzinfo=zoned[2])
    return _datetime(value)


def written_date(value: str) -> dt.date | dt.datetime:
    """A date a note's frontmatter states, read by the rules ``--as-of`` reads (``2026-03-01``,
    ``20260301``, a week: its Monday, as the week begins there), a date with a zone (that day:
    ``2026-12-01+03`` names where the day is, not an hour; Python's ``fromisoformat`` read it as
    03:00), or a date and time (aware when it names a zone); a ValueError otherwise
    (``2026-12-01x10``, which Python read as 10:00), and for one in other digits than ASCII's
    (``٢٠٢٦-١٢-٠١``, fullwidth ``２０２６-１２-０１``): YAML's dates and Obsidian's date properties
    are in ASCII digits, and those read as text there, as a typed moment (``typed``) here."""
    if not value.isascii():
        raise ValueError(f"not ASCII: {value!r}")
    day = _day(value, first=True)
    if day is not None:
        return day
    zoned = _zoned(value, first=True)
    if zoned is not None:
        return zoned[0]
    return _datetime(value)


def _day(value: str, *, first: bool = False) -> dt.date | None:
    """The day ``value`` names in one of the date forms above, or None when it is none of them
    (a week its year does not have is a ValueError); a week is its Sunday, or with ``first`` its
    Monday."""
    week = _ISO_WEEK.fullmatch(value)
    if week:
        return dt.date.fromisocalendar(int(week[1]), int(week[2]), int(week[3] or (1 if first else 7)))
    basic = _BASIC_DATE.fullmatch(value)
    if basic:
        return dt.date(int(basic[1]), int(basic[2]), int(basic[3]))
    try:
        return dt.date.fromisoformat(value)
    except ValueError:
        return None


def _zoned(value: str, *, first: bool = False) -> tuple[dt.date, str, dt.tzinfo] | None:
    """A date with a zone (``2026-W09Z``) as its day, the date as written (``2026-W09``) and the
    zone; None when ``value`` is not one."""
    zoned = _ZONED_DAY.fullmatch(value)
    day = _day(zoned[1], first=first) if zoned else None
    if zoned is None or day is None:
        return None
    return day, zoned[1], _tz(zoned[2])


def _tz(offset: str) -> dt.tzinfo:
    """The zone ``Z``, ``+03``, ``+0300`` or ``+03:00`` names (a ValueError past 23:59)."""
    if offset.upper() == "Z":
        return dt.timezone.utc
    hours, minutes = int(offset[1:3]), int(offset[-2:]) if len(offset) > 3 else 0
    if minutes > 59:
        raise ValueError(f"no zone {offset}")
    sign = -1 if offset[0] == "-" else 1
    return dt.timezone(sign * dt.timedelta(hours=hours, minutes=minutes))  # a ValueError from 24 hours on


def _datetime(value: str) -> dt.datetime:
    """A day (in a form ``_day`` reads), ``T`` or a space, and a time with a zone or without one."""
    written = _DATE_TIME.fullmatch(value)
    day = _day(written[1]) if written else None
    if written is None or day is None:
        raise ValueError(f"not a date and time: {value!r}")
    hour, minute, second, fraction, zone = written.group(2, 3, 4, 5, 6)
    micro = int((fraction or "0")[:6].ljust(6, "0"))  # past a microsecond cut, as Python's reader does
    moment = dt.datetime.combine(day, dt.time(int(hour), int(minute or 0), int(second or 0), micro))
    return moment.replace(tzinfo=_tz(zone)) if zone else moment


def first_moment(text: str) -> dt.datetime:
    """The first moment ``text`` names, for a window that begins there (`brain ab report --since`):
    a date's 00:00 (a week's: its Monday's), in the zone it names or none; a date and time. Aware
    when it names a zone, else naive. A ValueError when it is none of the forms ``--as-of`` reads:
    Python's reader took ``2026-12-01+03:00`` as 03:00 without a zone."""
    value = typed(text)
    day = _day(value, first=True)
    if day is not None:
        return dt.datetime.combine(day, dt.time.min)
    zoned = _zoned(value, first=True)
    if zoned is not None:
        return dt.datetime.combine(zoned[0], dt.time.min, tzinfo=zoned[2])
    return _datetime(value)


def _end_of_day(day: dt.date) -> float:
    """The last moment of ``day`` in local time. Far from 1970 a float cannot hold the day's
    last microsecond and rounds up to the next day's start (9999-12-31 to year 10000): then
    the moment just before it."""
    end = local_timestamp(dt.datetime.combine(day, dt.time.max))
    try:
        past = local_datetime(end).date() > day
    except (ValueError, OverflowError, OSError):
        past = True
    return min(math.nextafter(end, -math.inf), end - 1e-6) if past else end


def _start_of_day(day: dt.date) -> float:
    """The first moment of ``day`` in local time."""
    return local_timestamp(dt.datetime.combine(day, dt.time.min))


def local_timestamp(local: dt.datetime) -> float:
    """A naive local date and time as Unix time, in every year from 1 to 9999 (Python's
    ``timestamp`` fails on the first and last day of them)."""
    try:
        return local.timestamp()
    except (ValueError, OverflowError, OSError):
        inward = min(max(local, _INWARD[0]), _INWARD[1])
        offset = inward.astimezone().utcoffset() or dt.timedelta(0)
        return (local - _EPOCH - offset) / dt.timedelta(seconds=1)


def local_datetime(moment: float) -> dt.datetime:
    """Unix time as a naive local date and time, in every year from 1 to 9999 (Python's
    ``fromtimestamp`` fails on the first and last day of them); a ValueError or an OverflowError
    past them."""
    try:
        return dt.datetime.fromtimestamp(moment)
    except (ValueError, OverflowError, OSError):
        utc = _EPOCH + dt.timedelta(seconds=moment)
        inward = min(max(utc, _INWARD[0]), _INWARD[1]).replace(tzinfo=dt.timezone.utc)
        return utc + (inward.astimezone().utcoffset() or dt.timedelta(0))


def _fits(moment: float) -> bool:
    """Whether ``moment`` is a date and time in UTC and in local time (what ``iso_time``,
    ``local_time`` and a past view's today make of it)."""
    try:
        dt.datetime.fromtimestamp(moment, dt.timezone.utc)
        local_datetime(moment)
    except (ValueError, OverflowError, OSError):
        return False
    return True


def parse_world_date(text: str, option: str = "--valid-at") -> str:
    """A world date (what notes' frontmatter states), as an ISO date: a date in the forms
    ``--as-of`` reads (``20260301``, a week: its Sunday), or a date and time (its date);
    anything after them is a mistake, not ignored. (Read by ``_date_or_datetime``: Python
    3.11's ``date.fromisoformat`` read ``2026-W09`` as its Monday, and 3.10's refused it.)"""
    try:
        written = _date_or_datetime(typed(text))
    except ValueError:
        raise ConfigError(
            f"{option} takes a date (2026-03-01), a time and a zone after it if any (2026-03-01T14:30+03), not {quoted(text)}"
        ) from None
    return (written.date() if isinstance(written, dt.datetime) else written).isoformat()


def iso_time(moment: float | None) -> str | None:
    """Unix time → ISO 8601 in UTC, to the second (JSON)."""
    if moment is None:
        return None
    utc = dt.datetime.fromtimestamp(moment, dt.timezone.utc).replace(tzinfo=None)
    return utc.isoformat(timespec="seconds") + "Z"  # isoformat, not strftime: years before 1000 keep 4 digits


def iso_recorded(moment: float | None) -> str | None:
    """A moment brain recorded (when a version or link began or ended, when history began) →
    ISO 8601 in UTC to the millisecond, rounded up (exactly: a float's digits), so that `--as-of`
    it reads what began then. To the second, down, it read the version before (a first version:
    "nothing is known"), and two versions saved within one second had one time."""
    if moment is None:
        return None
    # exactly, in integers: the float is numerator / denominator (fractions' Fraction did the
    # same, and imported decimal and numbers: 2 ms of every `brain status`)
    numerator, denominator = float(moment).as_integer_ratio()
    ms = -(-numerator * 1000 // denominator)
    utc = dt.datetime(1970, 1, 1) + dt.timedelta(milliseconds=ms)
    return utc.isoformat(timespec="milliseconds") + "Z"


def local_time(moment: float | None) -> str:
    """Unix time → ``2026-03-01 14:30`` in local time (for people)."""
    if moment is None:
        return ""
    return local_datetime(moment).isoformat(sep=" ", timespec="minutes")


def recorded_moment(stamp: str) -> float | None:
    """A moment a transcript or the ledger recorded (ISO 8601: ``2026-02-12T16:02:31.000Z``,
    another offset, or none, read as UTC as SQLite's ``date(…, 'localtime')`` reads it) as Unix
    time; None for text no clock reads (a hand-edited row, another tool's line). Read here, not
    by Python's fromisoformat, which 3.10 refuses a Z to."""
    try:
        moment = _datetime(typed(stamp))
    except ValueError:
        return None
    if moment.tzinfo is None:
        moment = moment.replace(tzinfo=dt.timezone.utc)
    return moment.timestamp()


def recorded_local(stamp: str, *, say_zone: bool = False, seconds: bool = False) -> str:
    """A moment the ledger recorded, for people: local time to the minute (``2026-02-13 01:02``
    in Tokyo for ``2026-02-12T16:02:31.000Z``; to the second with ``seconds``), the days --since
    and --stats count in, ``local`` after it with ``say_zone`` (a sentence, where a bare time read
    as UTC, as it was printed before); one no clock reads is as many of its first characters, no
    zone said, on one line with no terminal control (a hand-edited line break split `brain
    turns`' row and `brain status`' line)."""
    from .text import literal

    moment = recorded_moment(stamp)
    try:
        if moment is not None:
            shown = local_datetime(moment).isoformat(sep=" ", timespec="seconds" if seconds else "minutes")
            return shown + (" local" if say_zone else "")
    except (ValueError, OverflowError, OSError):
        pass
    return literal(stamp[: 19 if seconds else 16].replace("T", " "))


def local_iso(moment: float | None) -> str | None:
    """Unix time → ISO 8601 in local time with its offset that day, to the second (JSON:
    ``2026-12-06T00:00:00+03:00``), None for a moment local time cannot show."""
    if moment is None:
        return None
    try:
        return dt.datetime.fromtimestamp(moment).astimezone().isoformat(timespec="seconds")
    except (ValueError, OverflowError, OSError):  # within a day of an end of the calendar, or past one
        pass
    try:
        local = local_datetime(moment)
        offset = local - (_EPOCH + dt.timedelta(seconds=moment))
        return local.replace(tzinfo=dt.timezone(offset)).isoformat(timespec="seconds")
    except (ValueError, OverflowError, OSError):
        return None


def said_moment(moment: float) -> str:
    """A moment a command acted on, for people, to the second: local time and UTC,
    ``2026-12-06 00:00:00 local (2026-12-05T21:00:00Z)``."""
    return f"{local_datetime(moment).isoformat(sep=' ', timespec='seconds')} local ({iso_time(moment)})"


def past_moment(text: str, option: str = "--as-of", *, now: float | None = None) -> float:
    """``parse_moment``, for a moment to look back at (``brain ask --as-of``, and the same field
    of ``brain serve`` and ``brain mcp``): one still to come is an error, since brain knows the
    vault only up to now. A date naming today means its end, which is later today: that one is
    now (what brain knows of today so far); so does a week (``2026-W49``) holding today."""
    now = time.time() if now is None else now
    moment = parse_moment(text, option, now=now)
    if moment <= now:
        return moment
    value = typed(text)  # read: ASCII, or a Russian word as its English one (сегодня: today)
    if _SPAN.fullmatch(value) is None:
        zoned = _zoned(value)  # a date with a zone names today there
        written, zone = (zoned[1], zoned[2]) if zoned else (value, None)
        today = dt.datetime.fromtimestamp(now, zone).date()
        if _day(written) == today or _named(value, now) == today:
            return now
        # A week means its Sunday's end: this week's was an error until Sunday, where today worked.
        week = _ISO_WEEK.fullmatch(written)
        if week and week[3] is None and today.isocalendar()[:2] == (int(week[1]), int(week[2])):
            return now
    raise ConfigError(
        f"{option} {quoted(text)} is in the future ({local_time(moment)}; now is {local_time(now)}): "
        "brain knows the vault as it was up to now"
    )
