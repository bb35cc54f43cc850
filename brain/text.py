"""Text at the edges: valid Unicode coming in, no terminal control going out, and a path
quoted as one word in a command a message asks the user to paste; Russian's ё read as е.

A query can arrive holding UTF-16 surrogates no UTF-8 text can: Python decodes a command
line's undecodable bytes to U+DC80-U+DCFF ("surrogateescape"), and JSON may hold "\\ud800"
alone. The tokenizer, SQLite and a JSON request to `brain serve` all refuse them.

A note can hold terminal control sequences (a window title set by OSC, colours, a cursor
moved by CSI, a line overwritten after \\r); shown to a person they would act on the terminal.
"""

from __future__ import annotations

import re
import shlex
from collections.abc import Callable

_SURROGATE = re.compile("[\ud800-\udfff]")
_PAIR = re.compile("[\ud800-\udbff][\udc00-\udfff]")
_ESCAPED_BYTES = re.compile("[\udc80-\udcff]+")


def valid_unicode(text: str) -> str:
    """``text`` with no surrogate left: a high and low half in order become their character,
    bytes a command line could not decode (U+DC80-U+DCFF) are read again as UTF-8 (what cannot
    be becomes U+FFFD), and any other lone half becomes U+FFFD."""
    if not _SURROGATE.search(text):
        return text
    text = _PAIR.sub(lambda m: m.group().encode("utf-16-le", "surrogatepass").decode("utf-16-le"), text)
    text = _ESCAPED_BYTES.sub(lambda m: m.group().encode("utf-8", "surrogateescape").decode("utf-8", "replace"), text)
    return _SURROGATE.sub("\ufffd", text)


# ECMA-48: a control string (OSC, DCS, SOS, PM, APC; 7- or 8-bit) up to its terminator (BEL or
# ST); a CSI sequence; any other escape sequence; then any C0 control but tab and newline, DEL
# and C1. An unterminated string loses its introducer and shows the rest as plain text.
_TERMINAL = re.compile(
    r"(?:\x1b[\]PX^_]|[\x90\x98\x9d-\x9f])[^\x07\x1b\x80-\x9f]*(?:\x07|\x1b\\|\x9c)"
    r"|(?:\x1b\[|\x9b)[0-?]*[ -/]*[@-~]"
    r"|\x1b[ -/]*[0-~]"
    r"|[\x00-\x08\x0b-\x1f\x7f-\x9f]"
)


# Han and kana: Chinese and Japanese put no spaces between words.
HAN_KANA = "\u3040-\u30ff\u3400-\u4dbf\u4e00-\u9fff\uf900-\ufaff\U00020000-\U0003134f"
# ... and Hangul (Korean spaces its words): scripts where a character carries what two or three
# Latin letters do, and a word is often two characters. For a character class: f"[{CJK}]".
CJK = HAN_KANA + "\uac00-\ud7af"


def yo_as_ye(text: str) -> str:
    """ё as е (Ё as Е): Russian is written both ways, and the index holds е (schema.py m006)."""
    return text.replace("ё", "е").replace("Ё", "Е")


def terminal_safe(text: str) -> str:
    """``text`` for a terminal: every control character and escape sequence taken out but
    newlines and tabs (a note's text shown in `brain ask`, its title, its path); an invisible
    format character that reorders or hides text written as its escape (``\\u202e``), where it
    is not part of a script's words (``_invisible_escaped``)."""
    return _invisible_escaped(_TERMINAL.sub("", text))


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
_INVISIBLE = re.compile(f"[{_HIDING}{_JOINERS}{_MARKS}]")
_RTL_LETTER = re.compile(
    "[\u0590-\u061b\u061d-\u08ff\ufb1d-\ufdff\ufe70-\ufefc\U00010800-\U00010fff\U0001e800-\U0001efff]"
)
_JOINED = re.compile(f"[^\\x00-\\x7f\\s{_HIDING}{_JOINERS}{_MARKS}]")


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
_FLAG_OR_TAGS = re.compile(
    "\U0001f3f4[\U000e0061-\U000e007a]{2}[\U000e0030-\U000e0039\U000e0061-\U000e007a]{1,4}\U000e007f"
    "|[\U000e0000-\U000e007f]+"
)
# The bidi controls show the user one order and the model another: written as their escape
# (\u202e), so the model reads that the text was reordered. The other invisible characters
# exist there to split a word (a key a secret pattern should have masked, a word a reader
# would have read): dropped, the joiners and marks kept where a script needs them.
_BIDI = "\u202a-\u202e\u2066-\u2069"
_BIDI_CONTROL = re.compile(f"[{_BIDI}]")


def for_model(text: str) -> str:
    """``text`` as a model is to read it: tag characters out but an emoji flag's, each run of them
    marked ``[hidden text removed]``; a bidi control written as its escape (``\\u202e``); the other
    invisible characters dropped, but a ZWSP, ZWNJ or ZWJ after a character that is not ASCII
    (Persian, Indic, emoji) and an LRM, RLM or ALM on a line holding a right-to-left letter.
    Mask secrets after it: a key split by a zero-width space is a key again."""
    text = _FLAG_OR_TAGS.sub(lambda m: m.group() if m.group()[0] == "\U0001f3f4" else HIDDEN_TEXT, text)
    return _invisible_judged(text, lambda m: _escape(m) if _BIDI_CONTROL.match(m.group()) else "")


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
_WIDE_RUN = re.compile(f"[{_WIDE}]+")
# The characters (and ranges, as a character class holds them) of which for_search may drop or
# fold some: a text holding none, composed, is searched as written.
SEARCHED_OTHERWISE = f"\u00ad{_HIDING}{_JOINERS}{_MARKS}\U000e0000-\U000e007f{_WIDE}"
_SEARCHED_OTHERWISE = re.compile(f"[{SEARCHED_OTHERWISE}]")


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
_LINE_BREAKING = re.compile("[\n\r\x0b\x0c\x1c-\x1e\x85\u2028\u2029\t]")


def one_line(text: str) -> str:
    """``text`` kept to the one line a row of a table gives it: every line break and tab written
    as its escape (``\\n``, ``\\t``, ``\\u2028``); ``terminal_safe`` then drops other controls."""
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
_LOG_ESCAPED = re.compile(f"[\x00-\x1f\x7f-\x9f\u2028\u2029\ud800-\udfff{_FORMAT}]")
# ... and a message on stderr that lists (a query file's problems, one a line) keeps its line
# breaks; any other error is one line (cli_support.error_line).
_MESSAGE_ESCAPED = re.compile(f"[\x00-\x09\x0b-\x1f\x7f-\x9f\u2028\u2029\ud800-\udfff{_FORMAT}]")
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
    (``\\x1b[2J``, ``\\u202e``) where ``terminal_safe`` drops them: a file name the message
    names shows what it holds. Its line breaks are kept (a listing's; ``log_record`` escapes them)."""
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


def shell_word(path: object) -> str:
    """``path`` as one word of a command a message asks the user to paste: "Obsidian Vault"
    run as two words was another vault, or none."""
    return shlex.quote(str(path))


def plural(n: int, word: str) -> str:
    """``1 note``, ``2 notes``: a count and its word (a plain ``s``; pass words that take one)."""
    return f"{n} {word}" + ("" if n == 1 else "s")
