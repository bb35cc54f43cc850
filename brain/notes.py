"""One markdown file → one ``Note``: decoding, frontmatter, title, aliases, tags, dates, links.

Bad input never raises: undecodable bytes, a BOM, broken YAML and odd frontmatter types are
handled, and what was done about them is listed in ``Note.warnings``. Frontmatter is bounded
(text size, alias expansion, nesting, and the size of the copy stored in the index), and one
bad value (an impossible date, an unknown ``!tag``) costs only itself, not the whole mapping.
"""

from __future__ import annotations

import codecs
import collections
import datetime as dt
import functools
import hashlib
import json
import re
from collections.abc import Callable, Iterator
from dataclasses import dataclass, field
from typing import Any, NamedTuple

from .errors import quoted
from .links import HEADING_START, Link, extract_links, mask_code, mask_comments, mask_indented_code, property_links

DATE_FIELDS = ("date", "created", "created_at", "creation_date", "updated", "modified", "last_modified")
# World time: when what a note says holds, as the note states it (never the file's mtime).
WORLD_DATE_FIELDS = ("date", "created", "created_at", "creation_date")
VALID_FROM_FIELDS = ("valid_from", "valid-from", "validfrom", "effective_from", "effective")
VALID_TO_FIELDS = ("valid_to", "valid-to", "validto", "valid_until", "valid-until", "effective_to")

# The YAML between the first line's "---" and the next "---" (or "..."): none when that comes
# next ("---\n---", empty properties), not the text up to a later rule.
_FRONTMATTER = re.compile(r"\A---[ \t]*\r?\n(?:(.*?)\r?\n)??(?:---|\.\.\.)[ \t]*(?:\r?\n|\Z)", re.DOTALL)
# Obsidian tags: '#' then every character up to a space or one of Obsidian's punctuation (the
# pattern its plugins copy from app.js), with one that is no ASCII digit (``inline_tags``); not
# inside words or URLs, nor escaped ("\#1 fan": Obsidian's help, Basic formatting syntax,
# escaping). Letters and digits alone ([\w/-]) cut a tag at a combining mark: #हिन्दी was "ह".
_INLINE_TAG = re.compile(r"(?<![\w&/#\]\)\\])#([^\u2000-\u206F\u2E00-\u2E7F'!\"#$%&()*+,.:;<=>?@^`{|}~\[\]\\\s]+)")
_NOT_A_DIGIT = re.compile(r"[^0-9]")
# Where a '#' is a link's, not a tag: inside [[...]] ([[#Heading]], [[Note|#label]]) and a
# markdown link's target ([back](#anchor)).
_LINK_SPANS = re.compile(r"\[\[[^\[\]\n]*\]\]|\]\([^\[)\n]*\)")  # none reads past the next "[" (see links.py)


@dataclass
class Note:
    path: str  # vault-relative posix path
    title: str
    aliases: list[str]
    tags: list[str]
    date: str  # ISO date or datetime: frontmatter date field, else file mtime
    body: str  # the text after the frontmatter
    frontmatter: dict[str, Any]
    links: list[Link]
    content_hash: str
    warnings: list[str] = field(default_factory=list)


def content_hash(data: bytes) -> str:
    return hashlib.sha256(data).hexdigest()


_UTF16_BOMS = (b"\xff\xfe", b"\xfe\xff")
# The decoding rules' digest: of the source of ``decode``, ``looks_binary`` and every definition
# here they use, comments and docstrings aside. An index's notes decoded with a warning, and its
# binary files, are read again when it differs from the one the index recorded. It was a number
# bumped by hand, and a rule changed without a bump left notes read the old way until their
# bytes changed; tests/test_parse.py recomputes it now and fails, naming the value to set, until
# it is set. A constant, not computed at import: that would read and parse this file in every
# process that imports notes (``brain ask``, the server), for a value that changes only here.
DECODING = "623002a22d96"


def decode(data: bytes) -> tuple[str, list[str]]:
    """Bytes → text, line endings as "\n". UTF-8 (BOM stripped); UTF-16 when a BOM says so, or,
    without one, when its NULs and characters do; bytes that are not UTF-8 but read as text in
    one of the legacy code pages ``_legacy`` knows (Hebrew, Arabic, Cyrillic, Greek, Latin
    script) are read so (the warning names the encoding); else invalid bytes are replaced, with
    a warning."""
    warnings: list[str] = []
    if data.startswith(_UTF16_BOMS):
        return _decode_utf16(data, "utf-16", "UTF-16")
    # NULs that are not a few strays in UTF-8: UTF-16 without a BOM, or a binary file (the last
    # NUL of little-endian UTF-16, the high byte of its "\n", is cut with padding: not counted)
    if b"\x00" in data[:8192] and not _utf8_with_stray_nuls(data[:8192].rstrip(b"\x00")):
        wide = _bomless_utf16(data)
        if wide is not None:
            return _decode_utf16(data, *wide)
    if b"\x00" in data:
        # Seen in real vaults: a text note padded with NULs by a crashed sync.
        nul_count = data.count(b"\x00")
        warnings.append(f"{nul_count} NUL bytes removed")
        data = data.replace(b"\x00", b"")
    if data.startswith(b"\xef\xbb\xbf"):
        data = data[3:]
    try:
        text = data.decode("utf-8")
    except UnicodeDecodeError as exc:
        # UTF-8 cut short (a write cut amid a character) is no legacy text: "caf\xc3" is no "cafÃ"
        legacy = None if exc.reason == "unexpected end of data" else _legacy(data, exc.start)
        if legacy is not None:
            codec, name = legacy
            try:
                text = data.decode(codec)
            except UnicodeDecodeError:  # past what _legacy read: a byte the codec leaves undefined
                text = data.decode(codec, errors="replace")
                name += "; undecodable bytes replaced"
            warnings.append(f"not UTF-8 (invalid at byte {exc.start}); decoded as {name}")
        else:
            text = data.decode("utf-8", errors="replace")
            warnings.append(f"invalid UTF-8 at byte {exc.start}; undecodable bytes replaced")
    return text.replace("\r\n", "\n").replace("\r", "\n"), warnings


def _decode_utf16(data: bytes, codec: str, name: str) -> tuple[str, list[str]]:
    """UTF-16 text with its line endings as "\n" (Windows writes it with CRLF: it kept its "\r"s,
    in every chunk and heading), and the warnings saying so."""
    body = data
    if codec != "utf-16":  # without a BOM: NUL padding (a crashed write) ends no character
        body = data.rstrip(b"\x00")
        if len(body) % 2 and len(body) < len(data):
            body += b"\x00"  # the high byte of a last ASCII character (little-endian)
    try:
        text = body.decode(codec)
        warnings = [f"decoded as {name}"]
    except UnicodeDecodeError as exc:  # an odd length (a cut write), a lone surrogate
        text = body.decode(codec, errors="replace")
        warnings = [f"decoded as {name}; invalid at byte {exc.start}, undecodable bytes replaced"]
    if len(body) < len(data):
        warnings.append(f"{len(data) - len(body)} NUL bytes removed")
    return text.replace("\r\n", "\n").replace("\r", "\n"), warnings


_LETTERS = re.compile(r"[^\W\d_]+")
# Of the characters a legacy decoding makes of the bytes over 127, the share that must fall in
# words of one script's letters alone: Latin-1 text read as cp1251 makes "cafй", "Grьяe" (a letter
# amid Latin ones), and UTF-8 with one bad byte makes "Р—Р°" (punctuation between).
_CYRILLIC_SHARE = 0.9
# In a script's words of two letters or more: cp1252's "×" in "×2" is cp1251's word "Ч".
_MIN_CYRILLIC_LETTERS = 4


# How much of a note the legacy rules read, from a little before its first byte that is not
# UTF-8: its encoding shows there, and reading every word of a 1 MB note took 0.7 s.
_LEGACY_SAMPLE = 64 * 1024


def _legacy(data: bytes, start: int) -> tuple[str, str] | None:
    """(codec, what it was read as) when ``data``, not UTF-8 from byte ``start`` on, reads as
    Hebrew in cp1255 or ISO-8859-8, else as Arabic in cp1256, each with words that show it,
    else as Russian, Ukrainian or Belarusian in cp1251, KOI8-R or KOI8-U, else as Greek in
    cp1253, else as Hebrew or Arabic with no word that shows it, else as Latin-script text in
    cp1252, cp1250, ISO-8859-2, cp1254 or cp1257 (``_latin``); None when it is UTF-8 with a few
    bad bytes (a cut write: its "Ш" is cp1251's "РЁ", its "é" cp1252's "Ã©"), or none of these.
    Hebrew and Arabic shown go first: Hebrew read in cp1251 is Cyrillic in small letters
    ("щмен" for "שלום"), and Arabic's "ال" a capital and a small letter, where Russian read in
    cp1255 breaks Hebrew's final letters and in cp1256 mixes French letters with Arabic ones."""
    as_utf8 = data.decode("utf-8", errors="replace")
    replaced = as_utf8.count("\ufffd")
    if _non_ascii(as_utf8) - replaced > replaced // 10:
        return None
    sample = data[max(0, start - 1024) : start + _LEGACY_SAMPLE]
    # Hebrew or Arabic with no word that shows it ("תודה רבה", "كتاب") only when no other script
    # reads it
    for script, shown in ((_HEBREW, True), (_ARABIC, True), (_CYRILLIC, False), (_GREEK, False)):
        found = _one_script(sample, script, shown)
        if found is not None:
            return found
    for script in (_HEBREW, _ARABIC):
        found = _one_script(sample, script, False)
        if found is not None:
            return found
    return _latin(sample)


# The scripts' patterns are compiled for the first note that is not UTF-8, not on import: their
# classes beyond Latin-1 cost re ~0.3 ms each, on every start of every command that reads notes.
_pattern = functools.cache(re.compile)


def _non_ascii(text: str) -> int:
    return len(text) - len(text.encode("ascii", "ignore"))


class _Script(NamedTuple):
    """A script written in single-byte code pages, and how its words are written."""

    codecs: tuple[tuple[str, str], ...]  # (codec, name), the first winning a tie
    word: str  # a word of the script's letters (and its marks) alone: a pattern (``_pattern``)
    punctuation: str  # its characters over ASCII that are in no word, left out of the share
    odd: Callable[[str], bool]  # a word in a form no word is written in
    # a word that shows the script (Hebrew's ending in a final letter): without more of them
    # than ``shown`` of its words, the script is read only when no other is
    shows: Callable[[str], bool] | None
    shown: float


def _one_script(data: bytes, script: _Script, shown_needed: bool) -> tuple[str, str] | None:
    """(codec, name) of the reading of ``data`` in one of ``script``'s code pages that is
    plausible text in it, the one with the most small letters (Russian in KOI8-R read in cp1251
    is in the wrong case: "привет" is "ПРИВЕТ" scrambled), else None. Plausible: 90% of the
    characters over ASCII, punctuation aside, in words of the script's letters, at least 4 of
    those in words of two letters or more, hardly one word in ten ``script.odd``, and, with
    ``shown_needed``, more words than ``script.shown`` of them that ``script.shows``."""
    best: tuple[int, str, str] | None = None
    for codec, name in script.codecs:
        try:
            text = data.decode(codec)
        except UnicodeDecodeError:  # cp1251's 0x98, cp1253's 0xAA, cp1255's 0xD9...
            continue
        if _C1_CONTROLS.search(text):  # ISO-8859-8's 0x80-0x9F: in no text
            continue
        high = _non_ascii(text) - sum(map(text.count, script.punctuation))
        letters = lowercase = longer = words = odd = shown = 0
        script_word = _pattern(script.word)
        for word in _pattern(_WORD_WITH_MARKS).findall(text):
            if script_word.fullmatch(word):
                letters += len(word)
                lowercase += sum(1 for char in word if char.islower())
                longer += len(word) if len(word) > 1 else 0
                words += 1
                odd += script.odd(word)
                shown += script.shows is not None and script.shows(word)
        enough = longer >= _MIN_CYRILLIC_LETTERS and letters >= _CYRILLIC_SHARE * high and odd * 10 <= words
        if enough and (shown > script.shown * words or not shown_needed) and (best is None or lowercase > best[0]):
            best = (lowercase, codec, name)
    return None if best is None else (best[1], best[2])


def _cased_as_written(word: str) -> bool:
    """Whether ``word`` is in small letters, capitals, or a capital and small letters."""
    return word.islower() or word.isupper() or (word[0].isupper() and word[1:].islower())


# Letters and the combining marks of Hebrew (points) and Arabic (harakat), which \w leaves out.
_MARKS = "\u0591-\u05bd\u05bf\u05c1\u05c2\u05c4\u05c5\u05c7\u064b-\u065f\u0670"
_WORD_WITH_MARKS = f"(?:[^\\W\\d_]|[{_MARKS}])+"
_WESTERN_PUNCTUATION = "«»—–„“”‘’…•·°©®™±\xa0\u200c\u200d\u200e\u200f"

_CYRILLIC = _Script(
    (("cp1251", "cp1251 (Cyrillic)"), ("koi8_r", "KOI8-R (Cyrillic)"), ("koi8_u", "KOI8-U (Cyrillic)")),
    "[А-яЁёІіЇїЄєҐґЎў]+",
    # Russian punctuation over ASCII: counted against the share, a note with «», — and № fell short
    _WESTERN_PUNCTUATION + "№",
    # Greek in cp1253 read so: its accented "ά", "έ" are cp1251's capitals ("КблзмЭсб"); no
    # word starts with "ъ", "ы" or "ь" (Hebrew's "ת", common there, is cp1251's "ъ")
    lambda word: not _cased_as_written(word) or word[0] in "ъыьЪЫЬ",
    None,
    0,
)
_GREEK = _Script(
    (("cp1253", "cp1253 (Greek)"),),  # ISO-8859-7 differs in a few bytes
    "[\u0386-\u03ce]+",
    _WESTERN_PUNCTUATION + "΄΅",  # the accents alone; the ano teleia is "·"
    # Russian read so: "Οπθβες"; no word starts with a dialytika (Hebrew's "א", "ת" read so)
    lambda word: not _cased_as_written(word) or "ς" in word[:-1] or word[0] in "ΐΰϊϋΪΫ",
    None,
    0,
)
_HEBREW_FINALS = "ךםןףץ"


def _odd_hebrew(word: str) -> bool:
    """A point before any letter, a final letter amid a word, or its other form ending one
    (but for a letter alone: "כ", "מ" are the abbreviations of numbers)."""
    letters = _letters_of(word)
    return (
        word[0] != letters[:1]
        or any(char in _HEBREW_FINALS for char in letters[:-1])
        or (len(letters) > 1 and letters[-1] in "כמנפצ")
    )


def _odd_arabic(word: str) -> bool:
    """A haraka before any letter, a word starting with a letter none starts with (a hamza on
    its own, on "و" or "ي", a teh marbuta), a teh marbuta amid a word, a hamza on its own amid
    one after a letter that joins the next ("قراءة", not "قلءم"), an "إ" after a letter that is
    no prefix ("بإذن", "والإسلام"), a tanwin before a letter but alef ("كتابًا"). Russian in
    KOI8-R without capitals is Arabic letters alone in cp1256, and these: its "а", "д", "ф", "и"
    are "ء", "ؤ", "ئ", "ة", its "е" "إ"; in cp1251 its "р", "т", "у" are harakat."""
    letters = _letters_of(word)
    before = letters[: max(letters.find("إ"), 0)]
    return (
        word[0] != letters[:1]
        or letters[0] in "ءؤئة"
        or "ة" in letters[:-1]
        or _pattern(_JOINED_HAMZA).search(letters[:-1]) is not None
        or not set(before) <= set("اوفبلك")
        or _pattern(_TANWIN_AMID).search(word) is not None
    )


_JOINED_HAMZA = "[^اأإآدذرزوؤء]ء"
_TANWIN_AMID = "[\u064b-\u064d][\u064e-\u0652]*[^\u064b-\u0652اى]"


_HEBREW = _Script(
    # ISO-8859-8 has its letters at the same bytes; cp1255 adds the points, and leaves 0xDF
    # (ISO's "‗") undefined
    (("cp1255", "cp1255 (Hebrew)"), ("iso8859_8", "ISO-8859-8 (Hebrew)")),
    "[\u05b0-\u05bd\u05bf\u05c1\u05c2\u05c4\u05c5\u05c7\u05d0-\u05ea\u05f0-\u05f2]+",
    _WESTERN_PUNCTUATION + "₪¤־׳״‗",
    _odd_hebrew,
    # a word of three letters or more ending in a final letter: Russian read in cp1255 has
    # hardly any, and its words break the rule ("привет" is "ןנטגוע"), but "он" is "מם"
    lambda word: len(_letters_of(word)) > 2 and _letters_of(word)[-1] in _HEBREW_FINALS,
    0,
)
_ARABIC = _Script(
    (("cp1256", "cp1256 (Arabic)"),),
    "[\u0621-\u0652\u0670-\u06d3]+",
    _WESTERN_PUNCTUATION + "،؛؟",
    _odd_arabic,
    # its most common letters but alef, in most of its words: Russian in KOI8-R read in cp1256
    # has them only in words with a capital ("Москва" is "يدسث×ء")
    lambda word: any(char in "لمنهوي" for char in word),
    0.5,
)


def _letters_of(word: str) -> str:
    """``word`` without its Hebrew or Arabic marks."""
    return _pattern(_NO_MARKS).sub("", word)


_NO_MARKS = f"[{_MARKS}]"


# cp1252's characters over ASCII that are neither letters nor punctuation words are written with
# (quotes, dashes, "’" in "l’été", "·" in "col·lecció", "•" in "Esch•a•ton", soft and no-break
# spaces): beside letters they are mostly another encoding's letters (cp1250's "łza", "Łódź",
# "już", "są" read as "³za", "£ódŸ", "ju¿", "s¹").
_PUNCTUATION_1252 = "’‘·•–—\xad\xa0«»“”„‚‹›…"


def _symbols(codec: str) -> re.Pattern[str]:
    """A class of ``codec``'s characters over ASCII that are neither letters nor punctuation."""
    chars = bytes(range(128, 256)).decode(codec, "ignore")
    return re.compile(
        "[" + re.escape("".join(c for c in chars if not c.isalpha() and c not in _PUNCTUATION_1252)) + "]"
    )


def _alphabet(letters: str) -> frozenset[str]:
    """A language's letters over ASCII, small and capital ("ı"'s capital is ASCII "I", "i"'s
    is "İ")."""
    capitals = {c.upper() for c in letters if len(c.upper()) == 1 and c.upper() > "\x7f"}
    return frozenset(letters) | capitals | ({"İ"} if "ı" in letters else set())


_WESTERN = {
    "French": "àâæçéèêëîïôœùûüÿ",
    "German": "äöüß",
    "Spanish": "áéíñóúü",
    "Portuguese": "áâãàçéêíóôõú",
    "Italian": "àèéìíîòóù",
    "Catalan": "àçéèíïòóúü",
    "Dutch": "áéèëïóöü",
    "Swedish/Finnish": "åäöšž",
    "Danish/Norwegian": "æøåéó",
    "Icelandic": "áðéíóúýþæö",
}
_CENTRAL = {
    "Polish": "ąćęłńóśźż",
    "Czech": "áčďéěíňóřšťúůýž",
    "Slovak": "áäčďéíĺľňóôŕšťúýž",
    "Hungarian": "áéíóöőúüű",
    "Slovene/Croatian": "čćđšž",
    "Romanian": "ăâîşţ",
    "German": "äöüß",
}
_BALTIC = {"Lithuanian": "ąčęėįšųūž", "Latvian": "āčēģīķļņšūž", "Estonian": "äõöüšž"}


# The Latin-script code pages, in the order that wins a tie: one whose letters the others hold
# at the same bytes ("Grüße" in cp1250 is cp1252's "Grüße") is most likely Windows' Western.
# Each with the languages written in it and the characters over ASCII that are no letters.
# Built for the first note that is not UTF-8: it imports five codecs and compiles a class for
# each, on every start of every command that reads notes (`brain index` with nothing to do too).
@functools.cache
def _latin_pages() -> tuple[tuple[str, str, tuple[frozenset[str], ...], re.Pattern[str], str], ...]:
    return tuple(
        (codec, name, tuple(_alphabet(letters) for letters in languages.values()), _symbols(codec), over_western)
        for codec, name, languages, over_western in (
            ("cp1252", "cp1252 (Western European)", _WESTERN, ""),
            ("cp1250", "cp1250 (Central European)", _CENTRAL, ""),
            ("iso8859_2", "ISO-8859-2 (Central European)", _CENTRAL, ""),
            ("cp1254", "cp1254 (Turkish)", {"Turkish": "âçğıîöşûü"}, ""),
            # Latvian's "ā", "ē", "ī", "ū", "š", "ž" are Turkish "â", "ç", "î", "û", "ğ", "ş" in cp1254:
            # Turkish wins that tie, as it did before Baltic was read. Most of cp1252's letters are
            # a Baltic language's at their bytes (Italian and French "così garçon" is Latvian
            # "cosģ garēon"): Baltic takes a note whose cp1252 words are each a Western language's
            # only when it holds "š" or "ž", which all three write, and cp1252 reads as "ð", "þ"
            ("cp1257", "cp1257 (Baltic)", _BALTIC, "šžŠŽ"),
        )
    )


_C1_CONTROLS = re.compile("[\x80-\x9f]")  # ISO-8859-2's bytes 0x80-0x9F: in no text


def _latin(data: bytes) -> tuple[str, str] | None:
    """(codec, name) of the Latin-script code page ``data`` reads best in, else None. Each reading
    must be plausible text (``_western``), and is scored for its best language (``_fit``): the
    letters over ASCII in words that language writes, less those in words it does not. Czech in
    cp1250 read as cp1252 is "Pøíliš" (ø is Danish, í not), Hungarian "tûrõ" (û French, õ
    Portuguese), Turkish in cp1254 "yaðýz þoföre çabucak" (Icelandic letters, and ç, which
    Icelandic lacks). The best score wins, the first of ``_latin_pages()`` on a tie; a reading but
    cp1252's must score over 0 (more letters its language writes than not). cp1252 is what most such notes are, so when each of
    its words is some Western language's it stays if those words are few (one in
    ``_FEW_FOREIGN``: English quoting "Alcácer" and "Bernabò", both Czech in cp1250, "Alcácer"
    and "Bernabň") or all one language's, and else gives way only to a reading all of one
    language (a note of French, Spanish and German words is not Slovak's "cittŕ", "mańana"
    because Slovak has "ŕ" and "á"), which holds one of its code page's letters that show it
    over cp1252 when it has such letters (cp1257's "š", "ž")."""
    best: tuple[int, str, str] | None = None
    western = False  # cp1252's reading: each word some Western language's
    for codec, name, alphabets, signs, over_western in _latin_pages():
        try:
            text = data.decode(codec)
        except UnicodeDecodeError:  # a byte the code page leaves undefined (cp1252's 0x81, 0x8D...)
            continue
        if _C1_CONTROLS.search(text) or not _western(text, signs):
            continue
        fit = _fit(text, alphabets)
        if codec == "cp1252":
            western = not fit.unwritten
            # all one language's: no reading of as many letters scores more (and cp1252 wins ties)
            if western and (fit.whole or fit.foreign * _FEW_FOREIGN <= fit.words):
                return codec, name
            best = (fit.score, codec, name)
        elif (
            fit.score > (0 if best is None else best[0])
            and (fit.whole or not western)
            and not (western and over_western and not any(char in text for char in over_western))
        ):
            best = (fit.score, codec, name)
    return None if best is None else (best[1], best[2])


# Letters to Python that are signs in text: the micro sign ("µs") and the ordinal indicators.
_LETTERLIKE = frozenset("µªº")
_FEW_FOREIGN = 20


class _Fit(NamedTuple):
    score: int  # the best language's: letters over ASCII in words it writes, less the others
    whole: bool  # whether that language writes every word
    unwritten: int  # letters over ASCII in words no language writes
    foreign: int  # words with letters over ASCII
    words: int


def _fit(text: str, alphabets: tuple[frozenset[str], ...]) -> _Fit:
    """How ``text``'s words with letters over ASCII fit the languages of ``alphabets``."""
    words = 0
    foreign: collections.Counter[str] = collections.Counter()  # a word's letters over ASCII
    for word in _LETTERS.findall(text):
        words += 1
        if not word.isascii():
            high = "".join(char for char in word if char > "\x7f" and char not in _LETTERLIKE)
            if high:
                foreign[high] += 1
    written = [0] * len(alphabets)
    unwritten = [0] * len(alphabets)
    nowhere = 0
    for high, times in foreign.items():  # each once: a note's words repeat
        held = [alphabet.issuperset(high) for alphabet in alphabets]
        nowhere += 0 if any(held) else len(high) * times
        for at, yes in enumerate(held):
            if yes:
                written[at] += len(high) * times
            else:
                unwritten[at] += len(high) * times
    at = max(range(len(alphabets)), key=lambda a: written[a] - unwritten[a])
    return _Fit(written[at] - unwritten[at], not unwritten[at], nowhere, foreign.total(), words)


def _western(text: str, signs: re.Pattern[str]) -> bool:
    """Whether ``text``, bytes read in a Latin-script code page such as cp1252 (Windows' Latin-1,
    which it extends with “”‘’–—€…), reads as text in it; ``signs`` are the code page's
    characters over ASCII that are no letters nor punctuation. Its accented letters stand amid
    ASCII ones ("café", "Größe"); Cyrillic (in cp1251 or KOI8-R too short to tell) read so makes
    words of accented letters alone ("Äà" for "Да", "ÿ" for "я"), and another code page
    symbols beside letters and capitals amid small ones (cp1250's Polish in cp1252); more than a
    few of those, and it is not that code page."""
    accented = amid = alone = odd = symbols = 0
    for word in _LETTERS.findall(text):
        high = sum(1 for char in word if char > "\x7f")
        accented += high
        if high < len(word):
            amid += high
        elif high > 1:  # "à", "è" alone are French and Italian words
            alone += high
        # in no case a word is written in: cp1250's "ź" in "jaŸñ", cp1252's "¿" in "żQué"
        odd += bool(high) and not _cased_as_written(word)
    for symbol in signs.finditer(text):
        char, symbols = symbol.group(), symbols + 1
        before, after = text[symbol.start() - 1 : symbol.start()], text[symbol.end() : symbol.end() + 1]
        if char in "¿¡":  # a Spanish question or exclamation: "że", "mąż" are "¿e", "m¹¿"
            line_end = text.find("\n", symbol.end())
            closed = text.find("?" if char == "¿" else "!", symbol.end(), None if line_end < 0 else line_end)
            odd += before.isalnum() or closed < 0
        elif char == "°":  # "20°C"
            odd += before.isalpha() and after.isalpha()
        elif char in "¹²³":  # "m²", "km³"; "są", "był" are "s¹", "by³"
            odd += after.isalpha() or (before.isalpha() and before != "m")
        else:  # "5 €", "Brand™": no letter after
            odd += after.isalpha()
    return not ((accented and not amid) or alone * 5 > accented or odd * 10 > accented + symbols)


# The C0 controls no text note holds (all but tab, line feed, vertical tab, form feed, carriage
# return and escape).
_CONTROLS = re.compile(rb"[\x01-\x08\x0e-\x1a\x1c-\x1f]")
# A note may hold a stray NUL or a few (a sync conflict leaves one amid 20 KB of text): of 72,901
# files with NULs (/usr, site-packages), 3 had NULs in no more places than this, no other
# control byte, and decoded as UTF-8.
_STRAY_NULS = 4


def looks_binary(data: bytes) -> bool:
    """Not a text note, whatever its name says: in the first 8 KB, NULs in more than a few
    places, or NULs beside other control bytes or bytes that are not UTF-8, unless the bytes
    read as UTF-16 without a byte-order mark (``_bomless_utf16``).

    A trailing run of NULs (padding left by a crashed write) does not count, nor do the NULs
    of UTF-16 text with a byte-order mark (Windows "Unicode" files), which ``decode`` reads; a
    stray NUL in UTF-8 text does not make it binary (``decode`` drops it, with a warning).
    """
    if data.startswith(_UTF16_BOMS):
        return "\x00" in data[:8192].decode("utf-16", errors="replace")
    head = data[:8192].rstrip(b"\x00")
    return b"\x00" in head and not _utf8_with_stray_nuls(head) and _bomless_utf16(data) is None


def _utf8_with_stray_nuls(head: bytes) -> bool:
    """Whether ``head`` (a file's first 8 KB, its trailing NULs cut) is UTF-8 text with no NUL or
    a few strays: in no more than ``_STRAY_NULS`` places, beside no other control byte."""
    if len(re.findall(rb"\x00+", head)) > _STRAY_NULS or _CONTROLS.search(head):
        return False
    try:  # a character cut at the 8 KB mark is not an error
        codecs.getincrementaldecoder("utf-8")().decode(head.replace(b"\x00", b""), final=False)
    except UnicodeDecodeError:
        return False
    return True


# No character a note holds: the C0 controls of ``_CONTROLS`` and NUL, DEL, the C1 controls, and
# the noncharacters U+FFFE (a BOM read in the wrong order) and U+FFFF.
_NOT_TEXT = re.compile("[\x00-\x08\x0e-\x1a\x1c-\x1f\x7f-\x9f\ufffe\uffff]")
_PRINTABLE_ASCII = frozenset(range(0x20, 0x7F)) | {0x09, 0x0A, 0x0D}
_ONE_SCRIPT_BYTES = 8  # four characters: "Да м"


def _bomless_utf16(data: bytes) -> tuple[str, str] | None:
    """(codec, name) when ``data`` reads as UTF-16 without a byte-order mark (.NET and some
    Windows editors write it so), else None. In its first 8 KB: NULs in every other byte, hardly
    any in the others (ASCII characters, spaces and line breaks have one as their high byte),
    or one NUL amid characters of one script; decoding to characters a note holds: no control
    codes, no lone surrogates, hardly any unassigned or private-use ones, and not mostly two
    ASCII bytes each (ASCII text with NULs amid it). Binary files hold a NUL pair or a control code somewhere, and a random byte pair
    is unassigned, private-use or half a surrogate pair one time in ten."""
    sample = data[: min(len(data), 8192) // 2 * 2]  # whole code units
    end = len(sample.rstrip(b"\x00"))
    sample = sample[: end + end % 2]  # less NUL padding, but not a last ASCII letter's high byte
    for codec, name, high in (
        ("utf-16-le", "UTF-16LE (no byte-order mark)", 1),
        ("utf-16-be", "UTF-16BE (no byte-order mark)", 0),
    ):
        nuls, others = sample[high::2].count(0), sample[1 - high :: 2].count(0)
        # one NUL (a one-line note's one space) will do when every other high byte is one
        # script's, under U+2000 (0x03 Greek, 0x04 Cyrillic): no binary file alternates so
        scripts = set(sample[high::2]) - {0}
        one_script = len(scripts) == 1 and max(scripts) < 0x20 and len(sample) >= _ONE_SCRIPT_BYTES
        if (nuls < 2 and not (nuls and one_script)) or others * 4 > nuls:  # others: U+xx00 ("一") or U+0000
            continue
        try:  # a surrogate pair cut at the 8 KB mark is not an error
            text = codecs.getincrementaldecoder(codec)().decode(sample, final=False)
        except UnicodeDecodeError:
            continue
        if _NOT_TEXT.search(text):
            continue
        import unicodedata  # here: only files with NULs get this far

        unassigned = sum(1 for char in text if unicodedata.category(char) in ("Cn", "Co"))
        wide = [ord(char) for char in text if char > "\xff"]
        ascii_pairs = sum(1 for code in wide if code >> 8 in _PRINTABLE_ASCII and code & 0xFF in _PRINTABLE_ASCII)
        if unassigned * 50 <= len(text) and (len(wide) < 8 or ascii_pairs * 10 <= len(wide) * 9):
            return codec, name
    return None


# Frontmatter is a few hundred bytes in practice; these bounds only stop hostile or broken
# input (a YAML "billion laughs" of nested aliases expands 300 bytes into gigabytes).
MAX_FRONTMATTER_CHARS = 64 * 1024  # longer frontmatter text is not parsed
MAX_FRONTMATTER_WEIGHT = 1_000_000  # ~characters once every alias is expanded
MAX_FRONTMATTER_DEPTH = 64  # nesting levels (deeper structures exhaust Python's recursion)
MAX_STORED_FRONTMATTER_CHARS = 16 * 1024  # the JSON copy kept in the index (read on every ask)
# A title heads the text embedded for every chunk of its note (and every line that shows it):
# a frontmatter title of 60 KB, or 400 KB through aliases, made each chunk that long to embed.
MAX_TITLE_CHARS = 1_000


class _FrontmatterTooBig(ValueError):
    pass


def _yaml_loader_class():
    """A safe YAML loader (libyaml's when present) that keeps one odd value from costing the
    whole frontmatter: an impossible date (``2026-02-30``) stays the string it was, and an
    unknown ``!tag`` is read as the plain value it tags."""
    global _LOADER
    if _LOADER is None:
        import yaml

        base = getattr(yaml, "CSafeLoader", None) or yaml.SafeLoader

        class BoundedLoader(base):  # type: ignore[misc, valid-type]
            dropped_keys = 0

            def construct_mapping(self, node, deep=False):
                # A key YAML gives as a list or a mapping ("? [a, b]") cannot key a dict: it
                # made the whole frontmatter go (title, tags, dates); only that key goes now.
                if not isinstance(node, yaml.MappingNode):
                    return super().construct_mapping(node, deep)
                self.flatten_mapping(node)
                mapping = {}
                for key_node, value_node in node.value:
                    key = self.construct_object(key_node, deep=deep)
                    try:
                        hash(key)
                    except TypeError:
                        self.dropped_keys += 1
                        continue
                    mapping[key] = self.construct_object(value_node, deep=deep)
                return mapping

        def timestamp(loader, node):
            try:
                return yaml.constructor.SafeConstructor.construct_yaml_timestamp(loader, node)
            except (ValueError, OverflowError):
                return loader.construct_scalar(node)

        def integer(loader, node):
            # Python writes no int of over 4,300 digits (CVE-2020-10735): "9" * 5,000 fails to
            # read, and 0x of 4,000 digits reads but then fails json.dumps and str() (a
            # traceback out of brain index). Such a number stays the text it was.
            try:
                value = yaml.constructor.SafeConstructor.construct_yaml_int(loader, node)
                str(value)
            except ValueError:
                return loader.construct_scalar(node)
            return value

        def untagged(loader, suffix_or_tag, node=None):
            node = node if node is not None else suffix_or_tag
            if isinstance(node, yaml.MappingNode):
                return loader.construct_mapping(node)
            if isinstance(node, yaml.SequenceNode):
                return loader.construct_sequence(node)
            return loader.construct_scalar(node)

        BoundedLoader.add_constructor("tag:yaml.org,2002:timestamp", timestamp)
        BoundedLoader.add_constructor("tag:yaml.org,2002:int", integer)
        BoundedLoader.add_constructor(None, untagged)
        _LOADER = BoundedLoader
    return _LOADER


_LOADER: Any = None  # the yaml loader class, built on first use (yaml is imported lazily)


def _expanded_weight(root: Any, limit: int) -> int:
    """The size of a composed YAML node graph with every alias expanded, roughly in characters,
    counted without expanding anything (each shared node is sized once). Raises
    ``_FrontmatterTooBig`` past ``limit``, past ``MAX_FRONTMATTER_DEPTH`` levels of nesting,
    or on an alias cycle (``&a [*a]``)."""
    import yaml

    sizes: dict[int, int] = {}
    on_path: set[int] = set()
    stack: list[tuple[Any, bool]] = [(root, False)]
    while stack:
        node, finished = stack.pop()
        key = id(node)
        if isinstance(node, yaml.ScalarNode):
            sizes[key] = 8 + len(node.value)
            continue
        if isinstance(node, yaml.MappingNode):
            children = [part for pair in node.value for part in pair]
        else:
            children = list(node.value)
        if finished:
            on_path.discard(key)
            sizes[key] = 8 + sum(sizes[id(child)] for child in children)
            if sizes[key] > limit:
                raise _FrontmatterTooBig("its YAML aliases expand it past the size limit")
            continue
        if key in sizes:
            continue
        if key in on_path:
            raise _FrontmatterTooBig("a YAML alias refers to itself")
        on_path.add(key)
        if len(on_path) > MAX_FRONTMATTER_DEPTH:
            raise _FrontmatterTooBig(f"nested more than {MAX_FRONTMATTER_DEPTH} levels deep")
        stack.append((node, True))
        for child in children:
            if id(child) in on_path:
                raise _FrontmatterTooBig("a YAML alias refers to itself")
            if id(child) not in sizes:
                stack.append((child, False))
    return sizes[id(root)]


def _load_yaml(text: str) -> tuple[Any, int]:
    """Parse frontmatter YAML safely and within bounds (see ``_expanded_weight``): the value,
    and how many keys that could not key a mapping were left out."""
    loader = _yaml_loader_class()(text)
    try:
        node = loader.get_single_node()
        if node is None:
            return None, 0
        _expanded_weight(node, MAX_FRONTMATTER_WEIGHT)
        return loader.construct_document(node), loader.dropped_keys
    finally:
        loader.dispose()


def _yaml_problem(exc: BaseException) -> str:
    """What is wrong in the frontmatter and on which line of the note (its ``---`` is line 1):
    yaml's first line was its context alone ("while parsing a block mapping"), no line named."""
    problem, mark = getattr(exc, "problem", None), getattr(exc, "problem_mark", None)
    if problem and mark is not None:
        return f"line {mark.line + 2}: {problem}"
    return str(exc).strip().splitlines()[0] if str(exc).strip() else type(exc).__name__


def split_frontmatter(text: str) -> tuple[dict[str, Any], str, list[str]]:
    """(metadata, body, warnings). Broken, oversized or alias-bomb YAML keeps the body and drops
    the metadata, with a warning."""
    match = _FRONTMATTER.match(text)
    if not match:
        return {}, text, []
    body = text[match.end() :]
    yaml_text = match.group(1) or ""
    if len(yaml_text) > MAX_FRONTMATTER_CHARS:
        size_kb = len(yaml_text) // 1024
        return {}, body, [f"frontmatter ignored: {size_kb} KB is over the {MAX_FRONTMATTER_CHARS // 1024} KB limit"]
    try:
        meta, dropped_keys = _load_yaml(yaml_text)
    except _FrontmatterTooBig as exc:
        return {}, body, [f"frontmatter ignored: {exc}"]
    except Exception as exc:  # noqa: BLE001 - yaml.YAMLError, RecursionError and friends: one note never stops a run
        return {}, body, [f"broken YAML frontmatter ignored: {_yaml_problem(exc)}"]
    if meta is None:
        return {}, body, []
    if not isinstance(meta, dict):
        return {}, body, ["frontmatter is not a mapping; ignored"]
    keys = "a key that is" if dropped_keys == 1 else f"{dropped_keys} keys that are"
    warnings = [f"frontmatter: {keys} a list or a mapping ignored"] if dropped_keys else []
    return {str(k): v for k, v in meta.items()}, body, warnings


def _property(meta: dict[str, Any], plural: str, singular: str) -> Any:
    """The value of the ``plural`` property, else ``singular``'s, else the first key that is
    either in other case (``Tags:``, ``Aliases:``): Obsidian reads tags and aliases from keys
    matching ``/^tags?$/i`` and ``/^alias(es)?$/i`` (``parseFrontMatterTags``, ``parseFrontMatterAliases``)."""
    if plural in meta:
        return meta[plural]
    if singular in meta:
        return meta[singular]
    names = (plural, singular)
    return next((value for key, value in meta.items() if key.lower() in names), None)


def _string_list(value: Any) -> list[str]:
    """Frontmatter lists come as lists, comma strings, or single values. Null and empty items
    mean nothing and are dropped; numbers and dates keep their written form (``2024``); a
    mapping is not a name and is dropped too."""
    if value is None or isinstance(value, dict):
        return []
    if isinstance(value, str):
        return [part.strip() for part in value.split(",") if part.strip()]
    if isinstance(value, (list, tuple, set)):
        out = []
        for item in value:
            if item is None or isinstance(item, dict):
                continue
            out.extend(_string_list(item) if isinstance(item, (list, tuple)) else [_text(item)])
        return [item for item in out if item]
    return [text for text in [_text(value)] if text]


def _text(value: Any) -> str:
    if isinstance(value, (dt.date, dt.datetime)):
        return value.isoformat()
    return str(value).strip()


def _frontmatter_tags(value: Any) -> list[str]:
    tags: list[str] = []
    for item in _string_list(value):
        # "tags: a b" and "tags: #a, #b" are both seen in the wild.
        tags.extend(part.lstrip("#") for part in item.split() if part.lstrip("#"))
    return tags


def inline_tags(body: str, *, indented: str | None = None) -> list[str]:
    """A body's ``#tags``, outside code and HTML comments. ``indented``: ``links.mask_indented_code(body)``, if read."""
    if "#" not in body:
        return []
    tags = []
    for line in mask_comments(mask_code(body, indented=indented)).split("\n"):
        if "#" not in line:  # the pattern below tries every position of a line: most have no tag
            continue
        if HEADING_START.match(line):
            line = line.lstrip(" ").lstrip("#")
        if "[" in line:
            line = _LINK_SPANS.sub(" ", line)
        for match in _INLINE_TAG.finditer(line):
            tag = match.group(1).rstrip("/")
            if _NOT_A_DIGIT.search(tag):  # "#1984" is none
                tags.append(tag)
    return tags


# ASCII digits, as every date brain reads (``moments.written_date``): ``\d`` took other scripts'.
_DATE_OPENS = re.compile(r"(?:\+00)?([0-9]{4})-([0-9]{2})-([0-9]{2})(?![\w+:-])")


def _iso(value: Any) -> str | None:
    if isinstance(value, dt.datetime):
        return value.isoformat()
    if isinstance(value, dt.date):
        return value.isoformat()
    if isinstance(value, (list, tuple)) and len(value) == 1:  # an unquoted [[2024-05-06]]
        return _iso(value[0])
    if isinstance(value, str):
        from .moments import written_date  # here: a `brain index` with no note to parse reads no date

        text = value.strip().strip("[]").strip()
        try:  # a date stays a date, quoted or not; a date with a zone is that day
            return written_date(text).isoformat()
        except ValueError:
            # a date that opens the text, then words ("2026-05-06 standup"); "+002023-02-07" is
            # ISO 8601's expanded-year form. Not one run on into more ("2026-12-01x10",
            # "2026-12-01T25:00", "2026-12-01+3"): what that says cannot be read, so it warns.
            match = _DATE_OPENS.match(text)
            if match:
                try:
                    return dt.date(*map(int, match.groups())).isoformat()
                except ValueError:
                    return None
    return None


def _in_ascii_digits(value: Any) -> str | None:
    """A date field's text written in other digits than ASCII's (``٢٠٢٤-٠٣-٠١``, fullwidth
    ``２０２４-０３-０１``, Devanagari), in ASCII's (``2024-03-01``) where that is a date brain reads;
    else None. What the warning on such a field offers: YAML and Obsidian read it as text too."""
    if not isinstance(value, str) or value.isascii():
        return None
    import unicodedata

    text = unicodedata.normalize("NFKC", value.strip())  # fullwidth hyphens, colons and digits
    ascii_text = "".join(str(unicodedata.decimal(c)) if c.isdecimal() and not c.isascii() else c for c in text)
    return ascii_text if ascii_text != value.strip() else None


def _not_a_date(name: str, value: Any, outcome: str) -> str:
    """The warning on a date field that holds no date brain reads."""
    ascii_text = _in_ascii_digits(value)
    if ascii_text is not None and _iso(ascii_text) is not None:
        return (
            f"frontmatter {name}: {quoted(_text(value))} is not a valid date (not in ASCII digits: YAML and"
            f" Obsidian read it as text too; write {ascii_text}); {outcome}"
        )
    return f"frontmatter {name}: {quoted(_text(value))} is not a valid date; {outcome}"


_OTHER_DIGIT = re.compile(r"(?![0-9])\d")  # a decimal digit of another script than ASCII


def frontmatter_dates_in_other_digits(frontmatter: str | None) -> bool:
    """Whether a stored frontmatter (JSON) holds a date field with digits other than ASCII's
    (``date: ٢٠٢٤-٠٣-٠١``), which brain read as a date before m025 and reads as none now (or, after
    a date in ASCII digits, as before: ``2024-03-01 ٢``)."""
    if not frontmatter:
        return False
    if "\\u" not in frontmatter and (frontmatter.isascii() or _OTHER_DIGIT.search(frontmatter) is None):  # most
        return False
    return any(any(c.isdecimal() and not c.isascii() for c in text) for text in _stored_date_texts(frontmatter))


def frontmatter_date(meta: dict[str, Any]) -> str | None:
    """The date ``meta``'s first date field that holds one gives (``_note_date`` without the
    file's modification time), or None."""
    for name in DATE_FIELDS:
        value = _field(meta, name)[1]
        iso = _iso(value) if value not in (None, "") else None
        if iso is not None:
            return iso
    return None


def _field(meta: dict[str, Any], name: str) -> tuple[str, Any]:
    """The key and value of the ``name`` property (a lower-case name), else of the first key that
    is ``name`` in other case (``Created:``), else (``name``, None): one rule for every date
    field, as for tags and aliases (``_property``); the usual key first."""
    if name in meta:
        return name, meta[name]
    return next(((key, value) for key, value in meta.items() if str(key).lower() == name), (name, None))


_EVERY_DATE_FIELD = frozenset(DATE_FIELDS + WORLD_DATE_FIELDS + VALID_FROM_FIELDS + VALID_TO_FIELDS)


def frontmatter_dates_written_otherwise(frontmatter: str | None) -> bool:
    """Whether a stored frontmatter (JSON) holds a date field written otherwise than as the ISO
    form it reads to (``2026-12-01+03``, ``20260301``, ``2026-05-06 standup``): its reading may
    have changed with the rules (m024). YAML's own dates are stored in that form, and not named."""
    return any(_iso(text) != text.strip() for text in _stored_date_texts(frontmatter))


# A date field's key in other case than the usual lower (``"Created":``), in a stored frontmatter (JSON).
_DATE_KEY_IN_OTHER_CASE = re.compile(
    '"(?!(?:{0})")(?i:{0})":'.format("|".join(re.escape(name) for name in DATE_FIELDS))
)


def frontmatter_status_key_in_other_case(frontmatter: str | None) -> bool:
    """Whether a stored frontmatter (JSON) holds a ``Status:`` key in other case than the usual
    lower (``Status: done``), which ``world_time`` did not read as the note's status before m032."""
    return frontmatter is not None and _STATUS_KEY_IN_OTHER_CASE.search(frontmatter) is not None


_STATUS_KEY_IN_OTHER_CASE = re.compile('"(?!status")(?i:status)":')


def frontmatter_date_key_in_other_case(frontmatter: str | None) -> bool:
    """Whether a stored frontmatter (JSON) holds a date field under a key in other case than the
    usual lower (``Created:``, ``DATE:``), which brain did not read as the note's date before m030."""
    return frontmatter is not None and _DATE_KEY_IN_OTHER_CASE.search(frontmatter) is not None


def _stored_date_texts(frontmatter: str | None) -> Iterator[str]:
    """The texts of the date fields of a stored frontmatter (JSON), a list of one read as its
    item (``[[2024-05-06]]``); none of a frontmatter that is no JSON object."""
    try:
        meta = json.loads(frontmatter or "{}")
    except ValueError:
        return
    if not isinstance(meta, dict):
        return
    for key, value in meta.items():
        while isinstance(value, list) and len(value) == 1:
            value = value[0]
        if isinstance(value, str) and str(key).lower() in _EVERY_DATE_FIELD:
            yield value


def note_date(data: bytes, mtime: float) -> str:
    """The date ``parse_note`` gives these bytes at this mtime, reading only their frontmatter
    (a touched note: same bytes, new mtime, whose date may be that mtime)."""
    meta, _, _ = split_frontmatter(decode(data)[0])
    return _note_date(meta, mtime, [])


def _note_date(meta: dict[str, Any], mtime: float, warnings: list[str]) -> str:
    """The first date field that holds a real date, else the file's mtime. A field that holds
    something else (an impossible ``2026-02-30``) is named in a warning."""
    date = None
    invalid = []
    for usual in DATE_FIELDS:
        name, value = _field(meta, usual)
        if value is None or value == "":
            continue
        iso = _iso(value)
        if iso is None:
            invalid.append((name, value))
        elif date is None:
            date = iso
    outcome = "ignored" if date else "the file's modification time is used instead"
    warnings.extend(_not_a_date(name, value, outcome) for name, value in invalid)
    if date is None:
        date = dt.datetime.fromtimestamp(mtime, dt.timezone.utc).isoformat(timespec="seconds")
    return date


def _check_validity(meta: dict[str, Any], warnings: list[str]) -> None:
    """Name in a warning a validity field (``valid_to: 2026-02-30``, a bare number) that
    ``world_time`` cannot read: ignored, it leaves the note in every ``--valid-at`` slice."""
    for name, value in meta.items():
        if str(name).lower() not in VALID_FROM_FIELDS + VALID_TO_FIELDS or value in (None, ""):
            continue
        if _iso(value) is None:
            warnings.append(_not_a_date(name, value, "ignored"))


@dataclass(frozen=True)
class WorldTime:
    """What a note's frontmatter says about world time: its own date, when it holds from and
    until (ISO dates or datetimes, None where it says nothing), and its status, lowercased."""

    date: str | None = None
    valid_from: str | None = None
    valid_to: str | None = None
    status: str | None = None


def world_time(frontmatter: dict[str, Any]) -> WorldTime:
    """The world-time fields of a (stored, JSON-safe) frontmatter mapping; bad values are None."""

    def first(names: tuple[str, ...]) -> str | None:
        for name in names:
            value = _field(frontmatter, name)[1]
            if value not in (None, ""):
                iso = _iso(value)
                if iso is not None:
                    return iso
        return None

    status = _field(frontmatter, "status")[1]  # ``Status: done`` too, the usual key first
    status_text = _text(status).lower() if isinstance(status, (str, int, float)) and _text(status) else None
    return WorldTime(first(WORLD_DATE_FIELDS), first(VALID_FROM_FIELDS), first(VALID_TO_FIELDS), status_text)


def parse_note(path: str, data: bytes, mtime: float, link_fences: frozenset[str] = frozenset()) -> Note:
    """Parse one note's bytes. ``path`` is vault-relative, posix; links inside fenced code count
    only in fences of the ``link_fences`` languages (``BRAIN_LINK_FENCES``)."""
    text, warnings = decode(data)
    meta, body, fm_warnings = split_frontmatter(text)
    warnings += fm_warnings
    stem = path.rsplit("/", 1)[-1]
    stem = stem[:-3] if stem.lower().endswith(".md") else stem
    title = str(meta.get("title") or "").strip() or stem
    if len(title) > MAX_TITLE_CHARS:
        warnings.append(f"frontmatter title cut to {MAX_TITLE_CHARS:,} of its {len(title):,} characters")
        title = title[:MAX_TITLE_CHARS].rstrip()
    aliases = list(dict.fromkeys(_string_list(_property(meta, "aliases", "alias"))))
    indented = mask_indented_code(body)  # read once, for the links and the tags both
    tag_list = _frontmatter_tags(_property(meta, "tags", "tag")) + inline_tags(body, indented=indented)
    # de-duplicated, first-seen order; case-insensitively, as Obsidian reads tags (#Tag and #tag
    # are one tag, shown as first written)
    firsts: dict[str, str] = {}
    for tag in tag_list:
        firsts.setdefault(tag.casefold(), tag)
    tags = list(firsts.values())
    date = _note_date(meta, mtime, warnings)
    _check_validity(meta, warnings)
    return Note(
        path=path,
        title=title,
        aliases=aliases,
        tags=tags,
        date=date,
        body=body,
        frontmatter=_stored_copy(_jsonable(meta), warnings),
        links=property_links(meta) + extract_links(body, link_fences, indented=indented),
        content_hash=content_hash(data),
        warnings=warnings,
    )


def _stored_copy(meta: dict[str, Any], warnings: list[str]) -> dict[str, Any]:
    """The frontmatter as kept in the index, at most ``MAX_STORED_FRONTMATTER_CHARS`` of JSON:
    past that the largest fields are left out (with a warning), so the small ones brain reads
    (``superseded_by``, dates) stay. Title, aliases and tags were read from the full copy."""
    sizes = {key: len(key) + len(json.dumps(value, ensure_ascii=False)) + 6 for key, value in meta.items()}
    total = sum(sizes.values()) + 2
    if total <= MAX_STORED_FRONTMATTER_CHARS:
        return meta
    left_out = []
    for key in sorted(sizes, key=lambda k: -sizes[k]):
        if total <= MAX_STORED_FRONTMATTER_CHARS:
            break
        total -= sizes[key]
        left_out.append(key)
    names = ", ".join(left_out[:5]) + (f" and {len(left_out) - 5} more" if len(left_out) > 5 else "")
    warnings.append(
        f"frontmatter fields not stored in the index (over the {MAX_STORED_FRONTMATTER_CHARS // 1024} KB limit): {names}"
    )
    return {key: value for key, value in meta.items() if key not in left_out}


def _jsonable(value: Any) -> Any:
    """Frontmatter as JSON-safe values (dates become ISO strings)."""
    if isinstance(value, dict):
        return {str(k): _jsonable(v) for k, v in value.items()}
    if isinstance(value, (list, tuple, set)):
        return [_jsonable(v) for v in value]
    if isinstance(value, (dt.date, dt.datetime)):
        return value.isoformat()
    if value is None or isinstance(value, (str, int, float, bool)):
        return value
    return str(value)
