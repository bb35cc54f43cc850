"""``.brainignore``'s patterns matched without trying each of them on every path.

pathspec's ``GitIgnoreSpec`` tries every pattern's regular expression on every path, in Python:
with 1,000 patterns a walk of 10,000 notes took 4.6 s instead of 0.11 (0.34 ms a path), with
10,000 patterns 67 s (``bench/brainignore_cost.py``). A long ignore file is mostly literal
names and paths (a list someone generated) and ``*.ext``, ``name*`` globs: those are looked up
in sets here, by the path's folders and its segments, and the other patterns are one combined
regular expression. That only tells whether some pattern may match; when one may, the last
pattern that matches the path itself decides, as git decides (the walk asks about each folder
before what is in it). A path no pattern matches (nearly all of them) costs a few lookups.

pathspec's own answer weighs a pattern that matches a folder above the path below one that
matches its name: `*` then `!*/` left every folder out (git walks them all: `*`, `!*/`, `!*.md`
is how one keeps only the markdown), and `**/b/` then `!/a/` took `a/b/` back in.
"""

from __future__ import annotations

import re
import sys
from collections.abc import Iterable
from typing import Any

from pathspec.util import normalize_file

# How pathspec ends a gitignore pattern's expression: matching a file or a folder, or only a
# folder (the group marks a folder's match). Anything else is matched by its own expression.
_FILE_OR_FOLDER = "(?:(?P<ps_d>/)|$)"
_FOLDER = "(?P<ps_d>/)"
_ANYWHERE = "^(?:.+/)?"  # no slash in the pattern (but a last one): at any depth
_SEGMENT = "[^/]*"  # a `*` within one name
_SPECIAL = frozenset(".^$*+?{}[]|()")


def fold_case(text: str) -> str:
    """``text`` in lower case, one character for one: ``?`` and ``[...]`` still take one
    character of a name. U+0130 (İ), the one character whose lower case is two, is kept."""
    if "\u0130" in text:
        return "\u0130".join(part.lower() for part in text.split("\u0130"))
    return text.lower()


class QuickSpec:
    """``match_file`` as ``spec`` answers it (a ``pathspec.GitIgnoreSpec``). With ``fold`` the
    spec's patterns were written in lower case (``fold_case``) and each path is asked so too:
    the sets below hold those patterns' literals, and a path's names are looked up folded."""

    def __init__(self, spec: Any, *, fold: bool = False):
        self.spec = spec
        self.fold = fold
        self.patterns = list(spec.patterns)
        # each to the patterns (their places in the file) it stands for
        self.paths: dict[str, list[int]] = {}  # anchored literals: the path or a folder above it
        self.names: dict[str, list[int]] = {}  # a whole name at any depth
        self.ends: dict[int, dict[str, list[int]]] = {}  # a name's end (`*.md`), by its length
        self.starts: dict[int, dict[str, list[int]]] = {}  # a name's start (`draft-*`), by its length
        combined: list[str] = []
        self.rest: list[int] = []  # the patterns of the combined expression
        self.alone: list[tuple[int, re.Pattern[str]]] = []  # expressions that cannot join it
        self.exact = False  # some pattern's flags are not the usual ones: every path to the spec
        # each pattern as it matches a path itself, not a folder above it: a folder's pattern
        # (`a/`) without its slash, and whether it was one (it matches only folders); None: a comment
        self.own: list[tuple[Any, bool] | None] = [_own(pattern) for pattern in self.patterns]
        for at, pattern in enumerate(self.patterns):
            regex = getattr(pattern, "regex", None)
            if pattern.include is None or regex is None:
                continue  # a comment or blank line
            if not isinstance(regex.pattern, str) or regex.flags != re.UNICODE:
                self.exact = True
                continue
            if not regex.pattern.startswith("^"):  # pathspec searches it (`*/` is `(?P<ps_d>/)`)
                self.alone.append((at, regex))
                continue
            if self._sorted(regex.pattern, at):
                continue
            inner, tail = _split_tail(regex.pattern)
            if inner is not None and "(?P<" not in inner:
                combined.append(f"(?:{inner}{'(?:/|$)' if tail == _FILE_OR_FOLDER else '/'})")
                self.rest.append(at)
            elif "(?P<" not in regex.pattern:
                combined.append(f"(?:{regex.pattern})")
                self.rest.append(at)
            else:
                self.alone.append((at, regex))
        self.combined = re.compile("|".join(combined)) if combined else None

    def _sorted(self, text: str, at: int) -> bool:
        """Whether the expression ``text`` went into one of the sets (else it is matched as one)."""
        inner, _tail = _split_tail(text)
        if inner is None or not inner.startswith("^"):
            return False
        if not inner.startswith(_ANYWHERE):
            literal = _literal(inner[1:])
            if literal:
                self.paths.setdefault(literal, []).append(at)
            return bool(literal)
        inner = inner[len(_ANYWHERE) :]
        if inner.startswith(_SEGMENT):
            literal, into = _literal(inner[len(_SEGMENT) :]), self.ends
        elif inner.endswith(_SEGMENT):
            literal, into = _literal(inner[: -len(_SEGMENT)]), self.starts
        else:
            literal = _literal(inner)
            if literal and "/" not in literal:
                self.names.setdefault(literal, []).append(at)
                return True
            return False
        if not literal or "/" in literal:
            return False
        into.setdefault(len(literal), {}).setdefault(literal, []).append(at)
        return True

    def match_file(self, path: str) -> bool:
        if self.fold:
            path = fold_case(path)
        path = normalize_file(path)
        if self.exact or "\n" in path:  # `$` matches before a last newline, which the sets do not know
            return self._decide(range(len(self.patterns)), path)
        # only the patterns that may match are asked
        return self._decide(sorted(self._candidates(path)), path)

    def first_folder_out(self, path: str, count: int) -> int | None:
        """Which of the first ``count`` folders on ``path`` (vault-relative: "a/b/c.md" has
        "a/" and "a/b/") ``match_file`` leaves out first, by its place (0 for "a/"), or None.

        The answer of ``match_file`` asked of each folder in turn, with each folder's names
        and the folders above it looked up once: asked one by one, a path d folders deep
        cost d² name lookups (1,000 deep: 0.2 s for each of `brain serve`'s events there)."""
        folded = fold_case(path) if self.fold else path
        if self.exact or "\n" in folded or normalize_file(folded) != folded:
            at = 0
            for place, name in enumerate(path.split("/")[:count]):
                at += len(name)
                if self.match_file(path[:at] + "/"):
                    return place
                at += 1
            return None
        found: set[int] = set()
        if self.names:
            found.update(self.names.get("", ()))  # the empty name after a folder's last "/"
        at = 0
        for place, name in enumerate(folded.split("/")[:count]):
            at += len(name)
            folder = folded[:at]
            asked = folder + "/"
            if self.paths:
                found.update(self.paths.get(folder, ()))
                found.update(self.paths.get(asked, ()))
            if self.names:
                found.update(self.names.get(name, ()))
            for length, ends in self.ends.items():
                if len(name) >= length:
                    found.update(ends.get(name[len(name) - length :], ()))
            for length, starts in self.starts.items():
                found.update(starts.get(name[:length], ()))
            # these match the folder's whole path: asked afresh, and only for this folder
            here = [i for i, regex in self.alone if regex.search(asked)]
            if self.combined is not None and self.combined.match(asked):
                here += self.rest
            # patterns that may match a folder above may match this one too (`a/**`): kept
            if (found or here) and self._decide(sorted(found.union(here)), asked):
                return place
            at += 1
        return None

    def _decide(self, places: Iterable[int], path: str) -> bool:
        """Whether the last of these patterns that matches ``path`` itself (a folder: ending in
        "/") leaves it out; False when none does."""
        folder = path.endswith("/")
        name = path[:-1] if folder else path
        for at in reversed(list(places)):
            own = self.own[at]
            if own is None or (own[1] and not folder):
                continue
            found = own[0].match_file(name)
            # a match that ends at a "/" in the path is of a folder above it, already asked about
            if found is not None and not found.match.groupdict().get("ps_d"):
                return bool(own[0].include)
        return False

    def _candidates(self, path: str) -> set[int]:
        """The patterns that may match ``path`` (those that do, and some that do not)."""
        found: set[int] = set()
        if self.combined is not None and self.combined.match(path):
            found.update(self.rest)
        found.update(at for at, regex in self.alone if regex.search(path))
        if self.paths:
            found.update(self.paths.get(path, ()))
            at = path.find("/")
            while at != -1:
                found.update(self.paths.get(path[:at], ()))
                at = path.find("/", at + 1)
        names = path.split("/")
        if self.names:
            for name in names:
                found.update(self.names.get(name, ()))
        for length, ends in self.ends.items():
            for name in names:
                if len(name) >= length:
                    found.update(ends.get(name[len(name) - length :], ()))
        for length, starts in self.starts.items():
            for name in names:
                found.update(starts.get(name[:length], ()))
        return found


def _own(pattern: Any) -> tuple[Any, bool] | None:
    """``pattern`` as it matches a path itself, and whether it matches only folders (it ended in
    "/"); None for a comment or a blank line."""
    if pattern.include is None or getattr(pattern, "regex", None) is None:
        return None
    text = pattern.pattern
    while text.endswith(" ") and not text.endswith("\\ "):  # git drops unescaped trailing spaces
        text = text[:-1]
    if not text.endswith("/") or text.rstrip("/").lstrip("!") in ("", "\\"):
        return pattern, False
    (own,) = defuse([type(pattern)(text[:-1])])
    return own, True


_STAR = "[^/]*"
# pathspec's expression for a pattern, token by token: a `*`, one character of a name (`?`, an
# escaped or plain character, a [class] that cannot take a "/"), or anything else.
_TOKENS = re.compile(r"\[\^/\]\*|\[\^/\]|\\.|\[[^\]/^][^\]/]*\]|[^.^$*+?{}\[\]|()/\\]|.", re.DOTALL)


def defused(text: str) -> str:
    """pathspec's expression ``text`` without its backtracking: each ``*`` of a name that another
    ``*`` of that name follows takes the text up to the first place where what comes after it
    matches, and keeps to it (an atomic group; before Python 3.11 a lookahead and a reference to
    it, and the pattern is then matched alone, not in the combined expression). pathspec
    let every ``*`` try every length: ``*a*a*a*a*a*a*a*a*a*a*a*a*a*a*a*b`` took 6 s on a name of 28
    a's, and a file name of 40 hung ``brain index``. The same paths match: between two ``*``
    there are only characters of one place each, and the earliest place they fit leaves the
    most room to the rest (git's wildmatch stops the same way)."""
    if text.count(_STAR) < 2:
        return text
    tokens = _TOKENS.findall(text)
    out: list[str] = []
    at = 0
    while at < len(tokens):
        piece = at + 1
        while tokens[at] == _STAR and piece < len(tokens) and _one_place(tokens[piece]):
            piece += 1
        if tokens[at] == _STAR and piece > at + 1 and piece < len(tokens) and tokens[piece] == _STAR:
            piece_text = "".join(tokens[at + 1 : piece])
            if sys.version_info >= (3, 11):  # an atomic group: the pattern still joins the combined expression
                out.append(f"(?>[^/]*?{piece_text})")
            else:
                group = f"ps_atom{len(out)}"
                out.append(f"(?=(?P<{group}>[^/]*?{piece_text}))(?P={group})")
            at = piece
        else:
            out.append(tokens[at])
            at += 1
    return "".join(out)


def defuse(patterns: Iterable[Any]) -> list[Any]:
    """pathspec's patterns, each expression ``defused`` (in place: a spec matches by them)."""
    patterns = list(patterns)
    for pattern in patterns:
        regex = getattr(pattern, "regex", None)
        if regex is not None and isinstance(regex.pattern, str):
            text = defused(regex.pattern)
            if text != regex.pattern:
                pattern.regex = re.compile(text, regex.flags)
    return patterns


def _one_place(token: str) -> bool:
    """Whether an expression's token is one character of a name: never a "/", never more."""
    return token != _STAR and ((len(token) == 1 and token not in _SPECIAL and token != "/") or token[0] in "\\[")


def _split_tail(text: str) -> tuple[str | None, str | None]:
    """A pattern's expression without pathspec's usual end, and that end; (None, None) without one."""
    for tail in (_FILE_OR_FOLDER, _FOLDER):
        if text.endswith(tail) and text.count("(?P<") == 1:
            return text[: -len(tail)], tail
    return None, None


def _literal(text: str) -> str | None:
    """The text an expression matches when it is only literal characters (``re.escape``'s), else None."""
    out = []
    at = 0
    while at < len(text):
        char = text[at]
        if char == "\\":
            if at + 1 >= len(text) or text[at + 1].isalnum():  # \d, \w, \1: not a literal
                return None
            out.append(text[at + 1])
            at += 2
        elif char in _SPECIAL:
            return None
        else:
            out.append(char)
            at += 1
    return "".join(out)
