"""The labelled query file: JSON Lines, one query per line.

    {"id": "q001", "query": "...", "type": "theme", "relevant": ["notes/a.md"], "partial": ["notes/b.md"]}

``relevant`` paths are vault-relative; ``partial`` is accepted and not scored; other fields are
ignored. Every problem in the file is reported at once, by line number (bad fields, duplicate
ids, and relevant paths missing from the vault, even on a line with other problems), so a
labeller fixes the file in one pass.
"""

from __future__ import annotations

import codecs
import functools
import json
import os
import re
import stat
import sys
import unicodedata
from dataclasses import dataclass, field, replace
from pathlib import Path, PurePosixPath

from ..errors import BrainError, asks_nothing, quoted
from ..text import one_line, valid_unicode
from ..vault import IgnoreRules, left_out_now, load_ignore, scan

QUERY_TYPES = ("entity", "theme", "bridge", "compare", "temporal", "navigational", "paraphrase")
REQUIRED = ("id", "query", "type", "relevant")
_INT_DIGITS = getattr(sys, "get_int_max_str_digits", lambda: 4300)  # Python 3.10.7 and later set the limit
MAX_FILE_MB = 64  # a query file is typed by hand: more is a file given by mistake (/dev/zero was read for good)


class QueryFileError(BrainError):
    """The query file is missing, malformed, or names notes that are not in the vault."""

    def __init__(self, message: str, problems: list[str] | None = None):
        super().__init__(message)
        self.problems = problems or []
        self.listing = bool(self.problems)  # the problems a line each (_listing)


@dataclass(frozen=True)
class EvalQuery:
    id: str
    query: str
    type: str
    relevant: tuple[str, ...]
    partial: tuple[str, ...] = ()
    line: int = 0
    extra: dict = field(default_factory=dict, compare=False, hash=False)
    cut_from: int = 0  # the query was longer than a query takes (this many characters), and is cut


def load_queries(path: str | os.PathLike[str], vault: str | os.PathLike[str] | None = None) -> list[EvalQuery]:
    """Parse and validate ``path``; with ``vault``, also check every relevant path exists there.

    Every problem is reported in one ``QueryFileError``: bad lines and relevant paths missing
    from the vault together (the paths of a bad line are checked too)."""
    source = Path(path)
    try:
        data = _read_bytes(source)
        # A byte-order mark says the encoding: UTF-8 with one (Notepad), UTF-16 (PowerShell 5's `>`).
        utf16 = data.startswith((codecs.BOM_UTF16_LE, codecs.BOM_UTF16_BE))
        text = data.decode("utf-16" if utf16 else "utf-8-sig")
    except FileNotFoundError as exc:
        raise QueryFileError(f"query file not found: {source}") from exc
    except OSError as exc:
        # OSError's own words name the path again: a pasted 5,000-character one was printed twice whole
        raise QueryFileError(f"cannot read the query file {quoted(str(source))}: {exc.strerror or exc}") from exc
    except UnicodeDecodeError as exc:
        raise QueryFileError(f"cannot read the query file {source}: it is not UTF-8 ({exc})") from exc
    parsed = _parse(text)
    missing: list[str] = []
    root = None
    if vault is not None:
        root = Path(vault).expanduser().resolve()
        spelling = _Spelling(root)
        missing = _missing_paths(parsed.paths, root, spelling)
        parsed.queries = [spelling.respelt(q) for q in parsed.queries]
    _raise_problems(str(source), parsed, missing, root)
    return parsed.queries


def _read_bytes(source: Path) -> bytes:
    # stat first: opening a FIFO waits for a writer, and a device (/dev/zero) never ends
    mode = source.stat().st_mode
    if stat.S_ISDIR(mode):
        raise QueryFileError(f"the query file {source} is a folder: name the JSON Lines file in it")
    if not stat.S_ISREG(mode):
        raise QueryFileError(f"the query file {source} is not a regular file (a device, FIFO or socket)")
    limit = MAX_FILE_MB * 1024 * 1024
    with source.open("rb") as handle:
        data = handle.read(limit + 1)
    if len(data) > limit:
        raise QueryFileError(f"the query file {source} is over {MAX_FILE_MB} MB: a query file is not that large")
    return data


def parse_queries(text: str, name: str = "<queries>") -> list[EvalQuery]:
    """Queries from JSON Lines text; raises ``QueryFileError`` listing every bad line."""
    parsed = _parse(text)
    _raise_problems(name, parsed, [], None)
    return parsed.queries


@dataclass
class _Parsed:
    queries: list[EvalQuery] = field(default_factory=list)
    problems: list[str] = field(default_factory=list)
    not_json_lines: str | None = None  # no line of it is JSON: said once, not a line each (``_parse``)
    # (line, "line N (id)", path) for every well-formed relevant path, on good lines and bad
    paths: list[tuple[int, str, str]] = field(default_factory=list)


def _parse(text: str) -> _Parsed:
    from ..server.protocol import cut_query

    parsed = _Parsed()
    if _one_json_array(text):  # its brackets would be "not valid JSON", and the cause never named
        parsed.problems.append(
            "the file is one JSON array, not JSON Lines: write one query object per line (jq -c '.[]' FILE)"
        )
        return parsed
    first_line_of: dict[str, int] = {}
    # A line parsed, or one begun as an object: a query file with mistakes (its problems a line
    # each), not a file of another format (`brain eval notes.md`: "32 problem(s)", a line each)
    json_like = False
    # Lines end at "\n", "\r\n" or "\r" (none of them raw in a JSON string) and nothing else:
    # splitlines() also splits at U+2028, U+0085 and other separators that JSON allows raw
    # inside a string (text pasted from a web page).
    lines = re.split(r"\r\n|\r|\n", text)
    comma_separated = _comma_separated(lines)
    for number, raw in enumerate(lines, start=1):
        if not raw.strip():
            continue
        json_like = json_like or raw.lstrip().startswith("{")
        try:
            record = json.loads(raw)
        except json.JSONDecodeError as exc:
            parsed.problems.append(f"line {number}: {_not_json(raw, exc, comma_separated)}")
            continue
        except RecursionError:
            parsed.problems.append(f"line {number}: not valid JSON (nested too deeply)")
            continue
        except ValueError:  # Python's own limit on the digits of an integer (a traceback, once)
            parsed.problems.append(f"line {number}: not valid JSON (a number of more than {_INT_DIGITS()} digits)")
            continue
        json_like = True
        if not isinstance(record, dict):
            parsed.problems.append(f"line {number}: expected a JSON object, got {_json_kind(record)}")
            continue
        line_problems = _check_record(record)
        # " q1" (a spreadsheet's padding) was an id that `--explain q1` did not find, and no
        # duplicate of "q1": an id is its text without the spaces around it
        qid = str(record["id"]).strip() if _valid_id(record.get("id")) else None
        if qid is not None:
            # An id is taken by the first line that uses it, valid or not: a duplicate is
            # reported now, not after the other problems of either line are fixed.
            if qid in first_line_of:
                line_problems.append(f"duplicate id {qid!r} (first on line {first_line_of[qid]})")
            else:
                first_line_of[qid] = number
        parsed.problems.extend(f"line {number}: {p}" for p in line_problems)
        where = f"line {number} ({qid})" if qid is not None else f"line {number}"
        # A partial note not in the vault was shown by --explain as a note no lane proposed,
        # a miss of the lanes' where it is a mistake of the label: it is checked as relevant ones are.
        for key, label in (("relevant", where), ("partial", f"{where}, partial")):
            paths = record.get(key)
            for item in paths if isinstance(paths, list) else ():
                rel = _normal_path(item) if isinstance(item, str) and item.strip() else None
                if rel is not None:
                    parsed.paths.append((number, label, rel))
        if line_problems:
            continue
        extra = {k: v for k, v in record.items() if k not in (*REQUIRED, "partial")}
        text = valid_unicode(record["query"]).strip()  # "\ud800" alone is valid JSON
        # As `brain ask` cuts it: the score is of what ask answers, and a query of 1 MB took
        # 17 s for a run of the default modes over one note, where ask took 0.1 s.
        asked = cut_query(text)
        parsed.queries.append(
            EvalQuery(
                id=str(qid),
                query=asked,
                type=record["type"],
                relevant=tuple(str(_normal_path(p)) for p in record["relevant"]),
                partial=tuple(str(_normal_path(p)) for p in record.get("partial") or ()),
                line=number,
                extra=extra,
                cut_from=len(text) if asked != text else 0,
            )
        )
    if parsed.problems and not json_like:
        parsed.not_json_lines = (
            f"not JSON Lines (no line of it is JSON; {parsed.problems[0]}): `brain eval` reads one query "
            'object per line, {"id": …, "query": …, "type": …, "relevant": […]}, as the README\'s '
            '"Evaluation: brain eval" section describes'
        )
    return parsed


def _json_kind(value: object) -> str:
    """A parsed value's kind as JSON names it: the labeller wrote JSON, not Python ("NoneType")."""
    if value is None:
        return "null"
    if isinstance(value, bool):
        return "true" if value else "false"
    kinds = ((str, "a string"), (int, "a number"), (float, "a number"), (list, "an array"))
    return next((name for kind, name in kinds if isinstance(value, kind)), type(value).__name__)


def _not_json(raw: str, exc: json.JSONDecodeError, comma_separated: bool) -> str:
    """Why a line is not one JSON object, in the words of what it looks like: a CSV line
    (q1,"what",a.md) was "Extra data at column 3", JSON's words for text after a value. CSV is
    said of a file's lines only where they all are (``_comma_separated``): a sentence holding a
    comma was called CSV too."""
    if comma_separated and not raw.lstrip().startswith(("{", "[")):
        return "not a JSON object: it looks like CSV (comma-separated values); write one JSON object per line"
    if exc.msg == "Extra data":
        return f"more than one JSON value: another begins at column {exc.colno} (write one query object per line)"
    return f"not valid JSON ({exc.msg} at column {exc.colno})"


def _comma_separated(lines: list[str]) -> bool:
    """Whether the lines that do not begin JSON (``{``, ``[``) are all CSV's: two fields or more
    each, none begun by a space (a spreadsheet writes `1,apples,a.md`; a sentence's comma is
    followed by a space, "Which note, and why?"). False where there are none."""
    import csv  # `brain eval` alone reads query files

    rows = [line.strip() for line in lines if line.strip() and not line.lstrip().startswith(("{", "["))]
    try:
        fields = list(csv.reader(rows))
    except csv.Error:  # a NUL, a field past csv's limit: no spreadsheet's
        return False
    return bool(fields) and all(len(row) >= 2 and not any(f[:1].isspace() for f in row) for row in fields)


def _one_json_array(text: str) -> bool:
    if not text.lstrip().startswith("["):
        return False
    try:
        return isinstance(json.loads(text), list)
    except (ValueError, RecursionError):
        return False


def _raise_problems(name: str, parsed: _Parsed, missing: list[str], root: Path | None) -> None:
    """One error listing every problem: bad lines first, then paths not in the vault."""
    if parsed.not_json_lines:
        error = QueryFileError(f"{name}: {parsed.not_json_lines}", parsed.problems)
        error.listing = False  # one line; every problem kept for a caller
        raise error
    sections = []
    if parsed.problems:
        sections.append(_listing(f"{name}: {len(parsed.problems)} problem(s) in the query file", parsed.problems))
    if missing:
        kind = "relevant or partial" if any(", partial: " in m for m in missing) else "relevant"
        sections.append(_listing(f"{name}: {len(missing)} {kind} path(s) are not notes in the vault {root}", missing))
    if sections:
        raise QueryFileError("\n".join(sections), parsed.problems + missing)
    if not parsed.queries:
        raise QueryFileError(f"{name}: no queries (expected one JSON object per line)")


def _valid_id(qid: object) -> bool:
    return isinstance(qid, (str, int)) and not isinstance(qid, bool) and str(qid).strip() != ""


def _check_record(record: dict) -> list[str]:
    problems = []
    missing = [key for key in REQUIRED if key not in record]
    if missing:
        problems.append(f"missing field(s): {', '.join(missing)}")
    if "id" in record and not _valid_id(record["id"]):
        problems.append("id must be a non-empty string")
    query = record.get("query")
    if "query" in record and (not isinstance(query, str) or not query.strip()):
        problems.append("query must be a non-empty string")
    elif isinstance(query, str) and asks_nothing(query):  # Recaller.ask refuses it: the whole run stopped there
        problems.append(f"query {query!r} asks nothing (no letter, digit or symbol): give words or a question")
    qtype = record.get("type")
    if "type" in record and qtype not in QUERY_TYPES:
        problems.append(f"unknown type {qtype!r}: use one of {', '.join(QUERY_TYPES)}")
    if "relevant" in record:
        problems.extend(_check_paths("relevant", record["relevant"], allow_empty=False))
    if "partial" in record and record["partial"] is not None:
        problems.extend(_check_paths("partial", record["partial"], allow_empty=True))
    return problems


def _check_paths(key: str, value: object, *, allow_empty: bool) -> list[str]:
    if not isinstance(value, list) or not all(isinstance(p, str) and p.strip() for p in value):
        return [f"{key} must be a list of vault-relative note paths"]
    if not value and not allow_empty:
        return [f"{key} is empty: a query needs at least one relevant note"]
    bad = [p for p in value if _normal_path(p) is None]
    return [f"{key} path {p!r} must be relative to the vault, without '..'" for p in bad]


@functools.lru_cache(maxsize=1 << 16)  # called a few times per line, with the same few hundred paths
def _normal_path(path: str) -> str | None:
    """A vault-relative posix path, or None when it is absolute or leaves the vault."""
    text = path.strip().replace("\\", "/")
    pure = PurePosixPath(text)
    if pure.is_absolute() or ".." in pure.parts or (len(text) > 1 and text[1] == ":"):
        return None
    return str(pure)


def check_relevant_paths(queries: list[EvalQuery], vault: Path, name: str = "<queries>") -> None:
    """Every ``relevant`` path must be a note in ``vault``; lists every one that is not."""
    root = vault.expanduser().resolve()
    paths = [(q.line, f"line {q.line} ({q.id})", rel) for q in queries for rel in q.relevant]
    missing = _missing_paths(paths, root)
    if missing:
        _raise_problems(name, _Parsed(queries=queries), missing, root)


def _missing_paths(paths: list[tuple[int, str, str]], root: Path, spelling: _Spelling | None = None) -> list[str]:
    spelling = spelling or _Spelling(root)
    missing = []
    for _, where, rel in paths:
        # A NUL or other control in a path was taken out of the message by terminal_safe:
        # the label looked right and was "not a note". Quoted and escaped, it shows.
        shown = rel if rel.isprintable() else repr(rel)
        found = spelling.find(rel)
        if found is None:
            near = spelling.find(rel, fold_case=True) or spelling.find(f"{rel}.md", fold_case=True)
            # A label written as a note's title or link ("Ingrid Solberg", "[[Ingrid Solberg]]")
            # instead of its path: the notes of that name, wherever they are filed.
            named = [near] if near else spelling.named(rel)
            hint = f" (the vault has {', '.join(named[:3])}{', …' if len(named) > 3 else ''})" if named else ""
            missing.append(f"{where}: {shown}{hint}")
        elif reason := spelling.left_out(found):
            missing.append(f"{where}: {shown} (a file brain leaves out: {reason})")
    return missing


def _name_key(name: str) -> str:
    name = _nfc(name.strip()).casefold()
    return name[:-3] if name.endswith(".md") else name


def _nfc(name: str) -> str:
    return unicodedata.normalize("NFC", name)


class _Spelling:
    """A label's path as the vault spells it on disk, so it compares equal to the indexed path.

    A name matches byte for byte, else the one name equal to it in Unicode's composed form
    (NFC): an editor writes "é" composed where macOS may have saved the file decomposed, two
    spellings that look the same. A name of another case is no match (paths are case-sensitive
    in the index), only a hint in the error."""

    def __init__(self, root: Path):
        self.root = root
        # folder -> (its names, its names by NFC form, by NFC form casefolded)
        self._folders: dict[Path, tuple[set[str], dict[str, list[str]], dict[str, list[str]]]] = {}
        self._ignore: IgnoreRules | None = None
        # A file of 50,000 queries names a few hundred notes: each is looked up once, not once
        # a line (realpath and the ignore rules per line took 52 s before anything ran).
        self._found: dict[tuple[str, bool], str | None] = {}
        self._left_out: dict[str, str | None] = {}
        self._by_name: dict[str, list[str]] | None = None  # a note's file name, NFC, casefolded -> its paths

    def _listing(self, folder: Path) -> tuple[set[str], dict[str, list[str]], dict[str, list[str]]]:
        if folder not in self._folders:
            try:
                names = os.listdir(folder)
            except OSError:  # not a folder, gone, unreadable: nothing in it matches
                names = []
            composed: dict[str, list[str]] = {}
            folded: dict[str, list[str]] = {}
            for name in names:
                composed.setdefault(_nfc(name), []).append(name)
                folded.setdefault(_nfc(name).casefold(), []).append(name)
            self._folders[folder] = (set(names), composed, folded)
        return self._folders[folder]

    def find(self, rel: str, *, fold_case: bool = False) -> str | None:
        key = (rel, fold_case)
        if key not in self._found:
            self._found[key] = self._find(rel, fold_case)
        return self._found[key]

    def _find(self, rel: str, fold_case: bool) -> str | None:
        folder, parts = self.root, []
        for part in PurePosixPath(rel).parts:
            names, composed, folded = self._listing(folder)
            if part in names and not fold_case:
                name = part
            else:
                matches = folded.get(_nfc(part).casefold(), []) if fold_case else composed.get(_nfc(part), [])
                if len(matches) != 1:
                    return None
                name = matches[0]
            parts.append(name)
            folder = folder / name
        return "/".join(parts) if parts and folder.is_file() else None

    def left_out(self, rel: str) -> str | None:
        """Why the vault's walk leaves the file ``rel`` out (so it is no note), or None: the
        walk's rules (``vault.left_out_now``), for the path and for where a symlink leads."""
        if rel not in self._left_out:
            self._left_out[rel] = self._why_left_out(rel)
        return self._left_out[rel]

    def _why_left_out(self, rel: str) -> str | None:
        if not rel.lower().endswith(".md"):
            return "not .md"
        if self._ignore is None:
            self._ignore = load_ignore(self.root)
        # The walk's own rules along the path (a link to a file that is no note, a folder linked
        # in from elsewhere): a copy of them here took a link to ~/notes.txt for a note.
        return left_out_now(self.root, rel, self._ignore)

    def named(self, label: str) -> list[str]:
        """The notes whose file name is the last part of ``label`` (a title, a file name, a
        wikilink: ``[[Name|shown]]``, ``Name#Heading``), in any case, ``.md`` or not."""
        name = label.strip().removeprefix("[[").removesuffix("]]").split("|")[0].split("#")[0]
        name = name.rstrip("/").rsplit("/", 1)[-1]
        if self._by_name is None:  # a walk of the vault, only once a label is found nowhere
            self._by_name = {}
            for note in scan(self.root)[0]:
                self._by_name.setdefault(_name_key(note.path.rsplit("/", 1)[-1]), []).append(note.path)
        return self._by_name.get(_name_key(name), [])

    def respelt(self, query: EvalQuery) -> EvalQuery:
        """``query`` with its relevant and partial paths as the vault spells them (when found)."""

        def spelt(paths: tuple[str, ...]) -> tuple[str, ...]:
            return tuple(dict.fromkeys(self.find(p) or p for p in paths))

        return replace(query, relevant=spelt(query.relevant), partial=spelt(query.partial))


SHOWN = 50  # problems listed per section: a CSV passed by mistake is not a million lines of terminal


def _listing(head: str, problems: list[str]) -> str:
    """The head and the problems, a line each: a line break in one (a path in the file or the
    file's own name holding one) written as ``\\n``, so no problem reads as two."""
    more = [f"  … and {len(problems) - SHOWN} more"] if len(problems) > SHOWN else []
    return "\n".join([one_line(head) + ":", *(f"  {one_line(p)}" for p in problems[:SHOWN]), *more])
