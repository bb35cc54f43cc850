"""Text at the edges: valid Unicode coming in, no terminal control going out, and a path
quoted as one word in a command a message asks the user to paste; Russian's ё read as е.

A query can arrive holding UTF-16 surrogates no UTF-8 text can: Python decodes a command
line's undecodable bytes to U+DC80-U+DCFF ("surrogateescape"), and JSON may hold "\\ud800"
alone. The tokenizer, SQLite and a JSON request to `brain serve` all refuse them.

A note can hold terminal control sequences (a window title set by OSC, colours, a cursor
moved by CSI, a line overwritten after \\r); shown to a person they would act on the terminal.
"""

from __future__ import annotations

import functools
import re
from collections.abc import Callable


class LazyPattern:
    """A regular expression compiled where it is first used, not on import: a class of
    characters beyond Latin-1 costs re ~0.3 ms to compile, and the hooks, `brain --help` and
    every command import this module, most using one or two of its patterns, if any."""

    __slots__ = ("_compiled", "_source")

    def __init__(self, source: str) -> None:
        self._source = source
        self._compiled: re.Pattern[str] | None = None

    @property
    def compiled(self) -> re.Pattern[str]:
        if self._compiled is None:
            self._compiled = re.compile(self._source)
        return self._compiled

    def search(self, text: str) -> re.Match[str] | None:
        return self.compiled.search(text)

    def match(self, text: str) -> re.Match[str] | None:
        return self.compiled.match(text)

    def findall(self, text: str) -> list[str]:
        return self.compiled.findall(text)

    def sub(self, repl: str | Callable[[re.Match[str]], str], text: str) -> str:
        return self.compiled.sub(repl, text)


_SURROGATE = LazyPattern("[\ud800-\udfff]")
_PAIR = LazyPattern("[\ud800-\udbff][\udc00-\udfff]")
_ESCAPED_BYTES = LazyPattern("[\udc80-\udcff]+")


def valid_unicode(text: str) -> str:
    """``text`` with no surrogate left: a high and low half in order become their character,
    bytes a command line could not decode (U+DC80-U+DCFF) are read again as UTF-8 (what cannot
    be becomes U+FFFD), and any other lone half becomes U+FFFD."""
    if not _SURROGATE.search(text):
        return text
    text = _PAIR.sub(lambda m: m.group().encode("utf-16-le", "surrogatepass").decode("utf-16-le"), text)
    text = _ESCAPED_BYTES.sub(lambda m: m.group().encode("utf-8", "surrogateescape").decode("utf-8", "replace"), text)
    return _SURROGATE.sub("\ufffd", text)


# What a terminal acts on: any C0 control but tab and newline (ESC starts every escape sequence,
# ECMA-48), DEL and C1 (\x9b is a CSI, \x9d an OSC). Each is written as its escape, so the
# sequence it starts reads as text; CR LF, a line's end, is a newline.
_TERMINAL = LazyPattern(r"\r\n|[\x00-\x08\x0b-\x1f\x7f-\x9f]")


# The combining marks (Unicode Mn, Mc; unicodedata 14.0.0) but U+FE0E and U+FE0F (an emoji's
# presentation selectors, after a symbol, not a letter), as ranges: ``\w`` has none, and a split
# of words with it cut a Hindi, Thai or pointed Hebrew word at each vowel sign (``word_chars``).
# Written out: reading them from ``unicodedata`` took 0.24 s a process on a loaded two-core
# machine (tests/test_lexical_scripts.py reads them so, and holds this table to it). Fixed, as
# SQLite's unicode61 tables are: a word is split alike by every Python that reads one index; a
# newer Unicode (Python 3.12: 15.0.0) only adds marks, at code points 14.0.0 had not assigned.
MARKS_UNICODE = "14.0.0"
# fmt: off
_MARK_RANGES = (
    (0x0300, 0x036F), (0x0483, 0x0487), (0x0591, 0x05BD), (0x05BF, 0x05BF), (0x05C1, 0x05C2), (0x05C4, 0x05C5),
    (0x05C7, 0x05C7), (0x0610, 0x061A), (0x064B, 0x065F), (0x0670, 0x0670), (0x06D6, 0x06DC), (0x06DF, 0x06E4),
    (0x06E7, 0x06E8), (0x06EA, 0x06ED), (0x0711, 0x0711), (0x0730, 0x074A), (0x07A6, 0x07B0), (0x07EB, 0x07F3),
    (0x07FD, 0x07FD), (0x0816, 0x0819), (0x081B, 0x0823), (0x0825, 0x0827), (0x0829, 0x082D), (0x0859, 0x085B),
    (0x0898, 0x089F), (0x08CA, 0x08E1), (0x08E3, 0x0903), (0x093A, 0x093C), (0x093E, 0x094F), (0x0951, 0x0957),
    (0x0962, 0x0963), (0x0981, 0x0983), (0x09BC, 0x09BC), (0x09BE, 0x09C4), (0x09C7, 0x09C8), (0x09CB, 0x09CD),
    (0x09D7, 0x09D7), (0x09E2, 0x09E3), (0x09FE, 0x09FE), (0x0A01, 0x0A03), (0x0A3C, 0x0A3C), (0x0A3E, 0x0A42),
    (0x0A47, 0x0A48), (0x0A4B, 0x0A4D), (0x0A51, 0x0A51), (0x0A70, 0x0A71), (0x0A75, 0x0A75), (0x0A81, 0x0A83),
    (0x0ABC, 0x0ABC), (0x0ABE, 0x0AC5), (0x0AC7, 0x0AC9), (0x0ACB, 0x0ACD), (0x0AE2, 0x0AE3), (0x0AFA, 0x0AFF),
    (0x0B01, 0x0B03), (0x0B3C, 0x0B3C), (0x0B3E, 0x0B44), (0x0B47, 0x0B48), (0x0B4B, 0x0B4D), (0x0B55, 0x0B57),
    (0x0B62, 0x0B63), (0x0B82, 0x0B82), (0x0BBE, 0x0BC2), (0x0BC6, 0x0BC8), (0x0BCA, 0x0BCD), (0x0BD7, 0x0BD7),
    (0x0C00, 0x0C04), (0x0C3C, 0x0C3C), (0x0C3E, 0x0C44), (0x0C46, 0x0C48), (0x0C4A, 0x0C4D), (0x0C55, 0x0C56),
    (0x0C62, 0x0C63), (0x0C81, 0x0C83), (0x0CBC, 0x0CBC), (0x0CBE, 0x0CC4), (0x0CC6, 0x0CC8), (0x0CCA, 0x0CCD),
    (0x0CD5, 0x0CD6), (0x0CE2, 0x0CE3), (0x0D00, 0x0D03), (0x0D3B, 0x0D3C), (0x0D3E, 0x0D44), (0x0D46, 0x0D48),
    (0x0D4A, 0x0D4D), (0x0D57, 0x0D57), (0x0D62, 0x0D63), (0x0D81, 0x0D83), (0x0DCA, 0x0DCA), (0x0DCF, 0x0DD4),
    (0x0DD6, 0x0DD6), (0x0DD8, 0x0DDF), (0x0DF2, 0x0DF3), (0x0E31, 0x0E31), (0x0E34, 0x0E3A), (0x0E47, 0x0E4E),
    (0x0EB1, 0x0EB1), (0x0EB4, 0x0EBC), (0x0EC8, 0x0ECD), (0x0F18, 0x0F19), (0x0F35, 0x0F35), (0x0F37, 0x0F37),
    (0x0F39, 0x0F39), (0x0F3E, 0x0F3F), (0x0F71, 0x0F84), (0x0F86, 0x0F87), (0x0F8D, 0x0F97), (0x0F99, 0x0FBC),
    (0x0FC6, 0x0FC6), (0x102B, 0x103E), (0x1056, 0x1059), (0x105E, 0x1060), (0x1062, 0x1064), (0x1067, 0x106D),
    (0x1071, 0x1074), (0x1082, 0x108D), (0x108F, 0x108F), (0x109A, 0x109D), (0x135D, 0x135F), (0x1712, 0x1715),
    (0x1732, 0x1734), (0x1752, 0x1753), (0x1772, 0x1773), (0x17B4, 0x17D3), (0x17DD, 0x17DD), (0x180B, 0x180D),
    (0x180F, 0x180F), (0x1885, 0x1886), (0x18A9, 0x18A9), (0x1920, 0x192B), (0x1930, 0x193B), (0x1A17, 0x1A1B),
    (0x1A55, 0x1A5E), (0x1A60, 0x1A7C), (0x1A7F, 0x1A7F), (0x1AB0, 0x1ABD), (0x1ABF, 0x1ACE), (0x1B00, 0x1B04),
    (0x1B34, 0x1B44), (0x1B6B, 0x1B73), (0x1B80, 0x1B82), (0x1BA1, 0x1BAD), (0x1BE6, 0x1BF3), (0x1C24, 0x1C37),
    (0x1CD0, 0x1CD2), (0x1CD4, 0x1CE8), (0x1CED, 0x1CED), (0x1CF4, 0x1CF4), (0x1CF7, 0x1CF9), (0x1DC0, 0x1DFF),
    (0x20D0, 0x20DC), (0x20E1, 0x20E1), (0x20E5, 0x20F0), (0x2CEF, 0x2CF1), (0x2D7F, 0x2D7F), (0x2DE0, 0x2DFF),
    (0x302A, 0x302F), (0x3099, 0x309A), (0xA66F, 0xA66F), (0xA674, 0xA67D), (0xA69E, 0xA69F), (0xA6F0, 0xA6F1),
    (0xA802, 0xA802), (0xA806, 0xA806), (0xA80B, 0xA80B), (0xA823, 0xA827), (0xA82C, 0xA82C), (0xA880, 0xA881),
    (0xA8B4, 0xA8C5), (0xA8E0, 0xA8F1), (0xA8FF, 0xA8FF), (0xA926, 0xA92D), (0xA947, 0xA953), (0xA980, 0xA983),
    (0xA9B3, 0xA9C0), (0xA9E5, 0xA9E5), (0xAA29, 0xAA36), (0xAA43, 0xAA43), (0xAA4C, 0xAA4D), (0xAA7B, 0xAA7D),
    (0xAAB0, 0xAAB0), (0xAAB2, 0xAAB4), (0xAAB7, 0xAAB8), (0xAABE, 0xAABF), (0xAAC1, 0xAAC1), (0xAAEB, 0xAAEF),
    (0xAAF5, 0xAAF6), (0xABE3, 0xABEA), (0xABEC, 0xABED), (0xFB1E, 0xFB1E), (0xFE00, 0xFE0D), (0xFE20, 0xFE2F),
    (0x101FD, 0x101FD), (0x102E0, 0x102E0), (0x10376, 0x1037A), (0x10A01, 0x10A03), (0x10A05, 0x10A06),
    (0x10A0C, 0x10A0F), (0x10A38, 0x10A3A), (0x10A3F, 0x10A3F), (0x10AE5, 0x10AE6), (0x10D24, 0x10D27),
    (0x10EAB, 0x10EAC), (0x10F46, 0x10F50), (0x10F82, 0x10F85), (0x11000, 0x11002), (0x11038, 0x11046),
    (0x11070, 0x11070), (0x11073, 0x11074), (0x1107F, 0x11082), (0x110B0, 0x110BA), (0x110C2, 0x110C2),
    (0x11100, 0x11102), (0x11127, 0x11134), (0x11145, 0x11146), (0x11173, 0x11173), (0x11180, 0x11182),
    (0x111B3, 0x111C0), (0x111C9, 0x111CC), (0x111CE, 0x111CF), (0x1122C, 0x11237), (0x1123E, 0x1123E),
    (0x112DF, 0x112EA), (0x11300, 0x11303), (0x1133B, 0x1133C), (0x1133E, 0x11344), (0x11347, 0x11348),
    (0x1134B, 0x1134D), (0x11357, 0x11357), (0x11362, 0x11363), (0x11366, 0x1136C), (0x11370, 0x11374),
    (0x11435, 0x11446), (0x1145E, 0x1145E), (0x114B0, 0x114C3), (0x115AF, 0x115B5), (0x115B8, 0x115C0),
    (0x115DC, 0x115DD), (0x11630, 0x11640), (0x116AB, 0x116B7), (0x1171D, 0x1172B), (0x1182C, 0x1183A),
    (0x11930, 0x11935), (0x11937, 0x11938), (0x1193B, 0x1193E), (0x11940, 0x11940), (0x11942, 0x11943),
    (0x119D1, 0x119D7), (0x119DA, 0x119E0), (0x119E4, 0x119E4), (0x11A01, 0x11A0A), (0x11A33, 0x11A39),
    (0x11A3B, 0x11A3E), (0x11A47, 0x11A47), (0x11A51, 0x11A5B), (0x11A8A, 0x11A99), (0x11C2F, 0x11C36),
    (0x11C38, 0x11C3F), (0x11C92, 0x11CA7), (0x11CA9, 0x11CB6), (0x11D31, 0x11D36), (0x11D3A, 0x11D3A),
    (0x11D3C, 0x11D3D), (0x11D3F, 0x11D45), (0x11D47, 0x11D47), (0x11D8A, 0x11D8E), (0x11D90, 0x11D91),
    (0x11D93, 0x11D97), (0x11EF3, 0x11EF6), (0x16AF0, 0x16AF4), (0x16B30, 0x16B36), (0x16F4F, 0x16F4F),
    (0x16F51, 0x16F87), (0x16F8F, 0x16F92), (0x16FE4, 0x16FE4), (0x16FF0, 0x16FF1), (0x1BC9D, 0x1BC9E),
    (0x1CF00, 0x1CF2D), (0x1CF30, 0x1CF46), (0x1D165, 0x1D169), (0x1D16D, 0x1D172), (0x1D17B, 0x1D182),
    (0x1D185, 0x1D18B), (0x1D1AA, 0x1D1AD), (0x1D242, 0x1D244), (0x1DA00, 0x1DA36), (0x1DA3B, 0x1DA6C),
    (0x1DA75, 0x1DA75), (0x1DA84, 0x1DA84), (0x1DA9B, 0x1DA9F), (0x1DAA1, 0x1DAAF), (0x1E000, 0x1E006),
    (0x1E008, 0x1E018), (0x1E01B, 0x1E021), (0x1E023, 0x1E024), (0x1E026, 0x1E02A), (0x1E130, 0x1E136),
    (0x1E2AE, 0x1E2AE), (0x1E2EC, 0x1E2EF), (0x1E8D0, 0x1E8D6), (0x1E944, 0x1E94A), (0xE0100, 0xE01EF),
)
# fmt: on


@functools.cache
def marks() -> str:
    """``_MARK_RANGES`` as the body of a regular expression's character class."""
    return "".join(f"{chr(a)}-{chr(b)}" for a, b in _MARK_RANGES)


@functools.cache
def word_chars() -> str:
    """What brain takes for a character of a word, as the body of a character class: ``\\w``
    and the combining marks (``f"[{word_chars()}]+"`` is a word; ``f"(?<![{word_chars()}])"``
    where one starts). Built on first use: most of what imports this module splits no words."""
    return f"\\w{marks()}"


@functools.cache
def word_pattern() -> re.Pattern[str]:
    """A word (``word_chars``): "मेरा" whole, where ``\\w+`` gave "म" and "र"."""
    return re.compile(f"[{word_chars()}]+")


# Hebrew and Arabic are written unpointed, and pointed (prayers, poetry, the Quran, children's books,
# dictionaries): "שָׁלוֹם" is the word "שלום" to a reader, and "الْكِتَابُ" "الكتاب". The vowel points,
# Hebrew's cantillation and shin and sin dots, Arabic's harakat (tanween, fatha, damma, kasra,
# shadda, sukun), the dagger alif and the Quran's small signs; not the madda and the hamza above
# and below (U+0653-0655), which with alef, waw or yeh are letters ("أحمد").
_POINTS = LazyPattern(
    "[\u0591-\u05bd\u05bf\u05c1\u05c2\u05c4\u05c5\u05c7"
    "\u0610-\u061a\u064b-\u0652\u0656-\u065f\u0670\u06d6-\u06dc\u06df-\u06e4\u06e7\u06e8\u06ea-\u06ed]"
)


def unpointed(text: str) -> str:
    """``text`` without the points of Hebrew and Arabic (``_POINTS``), the same object where it
    holds none."""
    if text.isascii() or _POINTS.search(text) is None:
        return text
    import unicodedata

    # composed first: a presentation form ("שׁ", U+FB2A) is its letter and its dot
    return _POINTS.sub("", unicodedata.normalize("NFC", text))


# Han and kana: Chinese and Japanese put no spaces between words.
HAN_KANA = "\u3040-\u30ff\u3400-\u4dbf\u4e00-\u9fff\uf900-\ufaff\U00020000-\U0003134f"
# ... and Hangul (Korean spaces its words): scripts where a character carries what two or three
# Latin letters do, and a word is often two characters. For a character class: f"[{CJK}]".
CJK = HAN_KANA + "\uac00-\ud7af"


def yo_as_ye(text: str) -> str:
    """ё as е (Ё as Е): Russian is written both ways, and the index holds е (schema.py m006)."""
    return text.replace("ё", "е").replace("Ё", "Е")


# Latin letters drawn as Cyrillic ones: a Russian word typed or pasted with one of them ("кaкое" with a
# Latin "a", "Пётр" with "ë") is a word of no language to a word list or an index.
_LOOKALIKES = str.maketrans("aceopxykABCEHKMOPTXëË", "асеорхукАВСЕНКМОРТХёЁ")
_LOOKALIKE_LETTER = LazyPattern("[aceopxykABCEHKMOPTXëË]")
_CYRILLIC_LETTER = LazyPattern("[а-яА-ЯёЁ]")
_LETTERS = LazyPattern(r"[^\W\d_]+")
_ONLY_CYRILLIC = LazyPattern("[а-яА-ЯёЁ]+")


def lookalikes_as_cyrillic(text: str) -> str:
    """``text`` with each word that mixes Cyrillic and Latin letters, every Latin one of which looks
    like a Cyrillic one ("кaкое", "сравнeние", "Пëтр"), written in Cyrillic alone; the same object
    where there is none. A word whose Latin letters are not all look-alikes ("iPhoneы") stays."""
    if text.isascii() or not _CYRILLIC_LETTER.search(text) or not _LOOKALIKE_LETTER.search(text):
        return text

    def read(match: re.Match[str]) -> str:
        word = match.group()
        if not _CYRILLIC_LETTER.search(word) or not _LOOKALIKE_LETTER.search(word):
            return word
        cyrillic = word.translate(_LOOKALIKES)
        return cyrillic if _ONLY_CYRILLIC.compiled.fullmatch(cyrillic) else word

    return _LETTERS.sub(read, text)


def terminal_safe(text: str) -> str:
    """``text`` for a terminal: every control character but newlines and tabs (a note's text
    shown in `brain ask`, its title, its path) written as its escape (``\\x1b``, ``\\r``), so an
    escape sequence prints as inert text (``\\x1b[31m``) and a name shows what it holds (they were
    dropped: the folder ``y\\x1b[31mred`` read ``yred``, which does not exist); an invisible
    format character that reorders or hides text written as its escape (``\\u202e``), where it
    is not part of a script's words (``_invisible_escaped``)."""
    return _invisible_escaped(_TERMINAL.sub(_control_shown, text))


def _control_shown(match: re.Match[str]) -> str:
    return "\n" if match.group() == "\r\n" else _escape(match)


# Trojan Source (CVE-2021-42574): the bidirectional embeddings, overrides and isolates (LRE RLE
# PDF LRO RLO U+202A-202E, LRI RLI FSI PDI U+2066-2069) make a terminal show text in an order
# other than the one it holds ("invoice\u202etxt.exe" shows as "invoiceexe.txt"). With them, the
# format characters that show nothing and belong to no script's words: the word joiner and the
# invisible operators (U+2060-2064), the deprecated shaping controls (U+206A-206F), U+FEFF and the
# interlinear annotation marks (U+FFF9-FFFB). Always escaped.
_HIDING = "\u202a-\u202e\u2060-\u206f\ufeff\ufff9-\ufffb"
# Invisible too, but legitimate in text: a zero-width space between Thai or Khmer words, ZWNJ and
# ZWJ inside Persian and Indic words and emoji sequences (U+200B-200D); LRM, RLM and ALM
# (U+200E, U+200F, U+061C) placing punctuation in Hebrew or Arabic. Shown to a person they are
# kept there: a joiner after a character that is neither ASCII, space nor invisible (Malayalam and
# Devanagari end a word with one after the virama), a mark on a line holding a right-to-left
# letter. Anywhere else ("Roll\u200bout plan" beside "Rollout plan") they only make two names look
# alike, and are escaped.
_JOINERS = "\u200b\u200c\u200d"
_MARKS = "\u200e\u200f\u061c"
_INVISIBLE = LazyPattern(f"[{_HIDING}{_JOINERS}{_MARKS}]")
_RTL_LETTER = LazyPattern(
    "[\u0590-\u061b\u061d-\u08ff\ufb1d-\ufdff\ufe70-\ufefc\U00010800-\U00010fff\U0001e800-\U0001efff]"
)
_JOINED = LazyPattern(f"[^\\x00-\\x7f\\s{_HIDING}{_JOINERS}{_MARKS}]")


def _invisible_escaped(text: str) -> str:
    return _invisible_judged(text, _escape)


def _invisible_judged(text: str, not_kept: Callable[[re.Match[str]], str]) -> str:
    """``text`` with each invisible character kept where a script's words need it (above), and
    ``not_kept`` of it elsewhere."""
    if not _INVISIBLE.search(text):
        return text
    return "\n".join(_invisible_judged_line(line, not_kept) for line in text.split("\n"))


def _invisible_judged_line(line: str, not_kept: Callable[[re.Match[str]], str]) -> str:
    rtl = _RTL_LETTER.search(line) is not None

    def shown(match: re.Match[str]) -> str:
        char, at = match.group(), match.start()
        if char in _MARKS:
            kept = rtl
        elif char in _JOINERS:
            kept = at > 0 and _JOINED.match(line[at - 1]) is not None
        else:
            kept = False
        return char if kept else not_kept(match)

    return _INVISIBLE.sub(shown, line)


# What a model is handed of a note (the prompt hook's context, the MCP tools, `brain ask
# --context` and `--json`) is text the user never saw: a note clipped from a web page can hold
# characters no editor shows but a model reads. Tag characters (U+E0000-E007F) mirror ASCII:
# U+E0041 reads as "A" to many models ("ASCII smuggling"), a whole instruction invisible in
# Obsidian. Their one use in text is an emoji subdivision flag: a black flag, a region and its
# subdivision in tag letters (2 + 1-4), then CANCEL TAG (England's flag). That stays; any other run
# becomes HIDDEN_TEXT, a mark the model and the user can see, never its decoded letters.
HIDDEN_TEXT = "[hidden text removed]"
_FLAG_OR_TAGS = LazyPattern(
    "\U0001f3f4[\U000e0061-\U000e007a]{2}[\U000e0030-\U000e0039\U000e0061-\U000e007a]{1,4}\U000e007f"
    "|[\U000e0000-\U000e007f]+"
)
# The bidi controls show the user one order and the model another: written as their escape
# (\u202e), so the model reads that the text was reordered. The other invisible characters
# exist there to split a word (a key a secret pattern should have masked, a word a reader
# would have read): dropped, the joiners and marks kept where a script needs them.
_BIDI = "\u202a-\u202e\u2066-\u2069"
_BIDI_CONTROL = LazyPattern(f"[{_BIDI}]")


def for_model(text: str) -> str:
    """``text`` as a model is to read it: tag characters out but an emoji flag's, each run of them
    marked ``[hidden text removed]``; a bidi control written as its escape (``\\u202e``); the other
    invisible characters dropped, but a ZWSP, ZWNJ or ZWJ after a character that is not ASCII
    (Persian, Indic, emoji) and an LRM, RLM or ALM on a line holding a right-to-left letter.
    Mask secrets after it: a key split by a zero-width space is a key again."""
    text = _FLAG_OR_TAGS.sub(lambda m: m.group() if m.group()[0] == "\U0001f3f4" else HIDDEN_TEXT, text)
    return _invisible_judged(text, lambda m: _escape(m) if _BIDI_CONTROL.match(m.group()) else "")


def one_line_for_model(text: str) -> str:
    """``text`` (a title, a path, the vault's folder) as a model reads it, on one line: a newline
    in a name cannot start a line of its own (a forged "## " section or instruction). Each run of
    line breaks is one space, and the rest stays: joining every run of spaces showed the model
    "Meeting  notes.md" as a path no file has."""
    return _LINE_BREAKS.sub(" ", for_model(text))


_LINE_BREAKS = LazyPattern("[\n\r\x0b\x0c\x1c-\x1e\x85\u2028\u2029]+")


# What the index searches of a note (what is embedded, what BM25 and the names lane read) and
# of a query, where the same rule must apply to both: a word pasted from the web split by an
# invisible character ("pass\u200bword", a soft hyphen in "Kuber\u00adnetes") is one word to
# the reader, but FTS5's unicode61 takes every format character (Unicode Cf) for a separator,
# so "password" did not find it. A tag run (above) is words no one sees: it must not make a
# note rank for them. Both go, with the bidi controls, the other invisible characters, and the
# soft hyphen, but a joiner or mark where a script needs it (``_invisible_judged``): a Persian
# or Malayalam word, an emoji flag, is searched as it is written.
# One word is written in two ways a reader cannot tell apart, and the index must read them as one
# (schema.py m023): decomposed, a letter then its combining mark (macOS names files so: a title
# "Мой" of "и" + U+0306 was the word "мои" to FTS5, Greek "ά" lost its accent), where the query
# is typed composed, and the other way round: both are read composed (NFC). And the full-width
# Latin letters and digits of CJK text ("ＳＱＬｉｔｅ", "２０２４") and the half-width katakana and
# Hangul (U+FF66-FFDC) are the same letters as the usual ones: they are read so (their NFKC form).
# The rest of NFKC is not: it would make "ﬁ" "fi", "x²" "x2", "①" "1", and full-width punctuation,
# in every line of Chinese, separates words as it is.
_WIDE = "\uff10-\uff19\uff21-\uff3a\uff41-\uff5a\uff66-\uffdc"
_WIDE_RUN = LazyPattern(f"[{_WIDE}]+")
# The characters (and ranges, as a character class holds them) of which for_search may drop or
# fold some: a text holding none, composed, is searched as written.
SEARCHED_OTHERWISE = f"\u00ad{_HIDING}{_JOINERS}{_MARKS}\U000e0000-\U000e007f{_WIDE}"
_SEARCHED_OTHERWISE = LazyPattern(f"[{SEARCHED_OTHERWISE}]")


def may_search_otherwise(text: str | None) -> bool:
    """Whether ``for_search`` may change ``text``: it holds one of ``SEARCHED_OTHERWISE`` (which
    it keeps in some places), or is not composed (NFC). What m021 and m023 ask of every row (schema.py)."""
    if text is None or text.isascii():
        return False
    if _SEARCHED_OTHERWISE.search(text) is not None:
        return True
    import unicodedata  # here: the prompt hook imports this module, and most text is ASCII

    return not unicodedata.is_normalized("NFC", text)


def composes_or_narrows(text: str | None) -> bool:
    """Whether ``for_search`` folds a width in ``text`` or composes it (NFC): what it did not do
    before schema.py's m023, which reads such notes again."""
    if text is None or text.isascii():
        return False
    import unicodedata

    return _WIDE_RUN.search(text) is not None or not unicodedata.is_normalized("NFC", text)


def for_search(text: str) -> str:
    """``text`` as the index embeds and searches it: tag characters out but an emoji flag's,
    the soft hyphen, bidi controls and the other invisible characters dropped, but a ZWSP, ZWNJ
    or ZWJ after a character that is not ASCII and an LRM, RLM or ALM on a line holding a
    right-to-left letter (``for_model``'s rule); full-width Latin letters and digits and
    half-width kana and Hangul as their usual forms; composed (NFC). Text without any of them is
    returned as it is."""
    if not may_search_otherwise(text):
        return text
    import unicodedata

    text = _FLAG_OR_TAGS.sub(lambda m: m.group() if m.group()[0] == "\U0001f3f4" else "", text)
    # widths first: a joiner after "Ａ" is judged as after the "A" it becomes
    text = _WIDE_RUN.sub(lambda m: unicodedata.normalize("NFKC", m.group()), text)
    text = _invisible_judged(text.replace("\u00ad", ""), lambda m: "")
    return unicodedata.normalize("NFC", text)


# The characters str.splitlines ends a line at (a terminal moves down at some), and the tab
# that shifts a table's columns.
_LINE_BREAKING = LazyPattern("[\n\r\x0b\x0c\x1c-\x1e\x85\u2028\u2029\t]")


def one_line(text: str) -> str:
    """``text`` kept to the one line a row of a table gives it: every line break and tab written
    as its escape (``\\n``, ``\\t``, ``\\u2028``); ``terminal_safe`` then escapes other controls."""
    return _LINE_BREAKING.sub(_escape, text)


def _escape(match: re.Match[str]) -> str:
    """A matched character as Python writes its escape (``\\n``, ``\\x1b``, ``\\udce9``)."""
    return match.group().encode("unicode_escape").decode("ascii")


# What a log file writes as its escape: every C0 control (ESC starts what a terminal acts on,
# \n and \t included: a record is one line), DEL, C1 (\x9b is a CSI), the line breaks
# str.splitlines ends a line at beyond them, a lone surrogate (a byte of a file's name that
# is not UTF-8), which no UTF-8 file can hold, and every invisible format character above, the
# joiners and marks too, and the tags (U+E0000-E007F, which can hide a text): a log and a
# warning name a file exactly, whatever the script. Other Unicode is written as it is.
_FORMAT = f"{_HIDING}{_JOINERS}{_MARKS}\U000e0000-\U000e007f"
_LOG_ESCAPED = LazyPattern(f"[\x00-\x1f\x7f-\x9f\u2028\u2029\ud800-\udfff{_FORMAT}]")
# ... and a message on stderr that lists (a query file's problems, one a line) keeps its line
# breaks; any other error is one line (cli_support.error_line).
_MESSAGE_ESCAPED = LazyPattern(f"[\x00-\x09\x0b-\x1f\x7f-\x9f\u2028\u2029\ud800-\udfff{_FORMAT}]")
# A warning logged with extra=REPORTED is held by the run's report as well (a note skipped, which
# `brain status` lists; a damaged index moved aside): -q and --json leave it off stderr
# (cli_support.setup_logging), where every other warning still prints.
REPORTED = {"reported": True}
# A traceback's lines in a log, under their record: a line of it starts with this, a record's
# line never does, so no line of it (an exception's message) reads as a record.
LOG_INDENT = "    "


def _log_escaped(text: str) -> str:
    return _LOG_ESCAPED.sub(_escape, text)


def escaped(message: str) -> str:
    """``message`` for stderr (an error, a warning): as a log writes it (``log_record``), every
    control character, escape sequence and invisible format character written as its escape
    (``\\x1b[2J``, ``\\u202e``), as ``terminal_safe`` does but for the joiners and marks a script
    keeps: a file name the message names shows what it holds. Its line breaks are kept (a listing's; ``log_record`` escapes them)."""
    return _MESSAGE_ESCAPED.sub(_escape, message)


def log_record(message: str, detail: str = "") -> str:
    """A record of a log file: ``message`` on one line, then ``detail`` (a traceback) on lines of
    its own, each indented by ``LOG_INDENT``; every control character written as its escape
    (``\n``, ``\x1b``), so a name cannot split a line, forge one, or act on the terminal of
    whoever follows the log (``tail -f``, ``less -R``). No line break ends it."""
    text = _log_escaped(message)
    if detail.strip():
        text += "".join(f"\n{LOG_INDENT}{_log_escaped(line)}" for line in detail.rstrip().split("\n"))
    return text


def spaced(text: str) -> str:
    """``text`` on one line as a cell of a column shows it: each line break and tab a space
    (``one_line`` writes their escapes instead, where what the text holds is the point)."""
    return _LINE_BREAKING.sub(" ", text)


def in_column(text: str) -> str:
    """``text`` for a cell of a column, on a terminal: a tab had the terminal move on to its next
    stop (counted one cell, it pushed the next column out) and a line break ended the row."""
    return spaced(terminal_safe(text))


def literal(text: str) -> str:
    """``text`` (a path, a query) on one line as it is: its line breaks and tabs written as
    escapes (``one_line``), no terminal control (``terminal_safe``)."""
    return terminal_safe(one_line(text))


def shell_word(path: object) -> str:
    """``path`` as one word of a command a message asks the user to paste: "Obsidian Vault"
    run as two words was another vault, or none."""
    import shlex  # here: only a message that asks the user to paste a command quotes a path

    text = str(path)
    if not _LOG_ESCAPED.search(text):
        return shlex.quote(text)
    # A line break (or another character an error line writes as its escape) inside '...' was
    # printed as the two characters \n: the command pasted named another path. $'...' (bash,
    # zsh, ksh, busybox sh; POSIX sh since 2024) reads the escapes back, each as the bytes the
    # name holds (a lone surrogate: the one byte that was not UTF-8).
    quoted = "".join(
        "".join(f"\\x{byte:02x}" for byte in _name_bytes(char)) if _LOG_ESCAPED.search(char) or char in "'\\" else char
        for char in text
    )
    return f"$'{quoted}'"


def _name_bytes(char: str) -> bytes:
    """The bytes a file name's character stands for (a lone surrogate: the byte not UTF-8)."""
    import os

    try:
        return os.fsencode(char)
    except UnicodeEncodeError:
        return char.encode("utf-8", "surrogatepass")


def plural(n: int, word: str) -> str:
    """``1 note``, ``2 notes``: a count and its word (a plain ``s``; pass words that take one)."""
    return f"{n} {word}" + ("" if n == 1 else "s")
