"""The labelled query file: JSON Lines, one query per line.

    {"id": "q001", "query": "...", "type": "theme", "relevant": ["notes/a.md"], "partial": ["notes/b.md"]}

``relevant`` paths are vault-relative; ``partial`` is accepted and not scored; other fields are
ignored. Every problem in the file is reported at once, by line number, so a labeller fixes
the file in one pass.
"""

from __future__ import annotations

import json
import os
from dataclasses import dataclass, field
from pathlib import Path, PurePosixPath

from ..errors import BrainError

QUERY_TYPES = ("entity", "theme", "bridge", "compare", "temporal", "navigational", "paraphrase")
REQUIRED = ("id", "query", "type", "relevant")


class QueryFileError(BrainError):
    """The query file is missing, malformed, or names notes that are not in the vault."""

    def __init__(self, message: str, problems: list[str] | None = None):
        super().__init__(message)
        self.problems = problems or []


@dataclass(frozen=True)
class EvalQuery:
    id: str
    query: str
    type: str
    relevant: tuple[str, ...]
    partial: tuple[str, ...] = ()
    line: int = 0
    extra: dict = field(default_factory=dict, compare=False, hash=False)


def load_queries(path: str | os.PathLike[str], vault: str | os.PathLike[str] | None = None) -> list[EvalQuery]:
    """Parse and validate ``path``; with ``vault``, also check every relevant path exists there."""
    source = Path(path)
    try:
        text = source.read_text(encoding="utf-8")
    except FileNotFoundError as exc:
        raise QueryFileError(f"query file not found: {source}") from exc
    except (OSError, UnicodeDecodeError) as exc:
        raise QueryFileError(f"cannot read the query file {source}: {exc}") from exc
    queries = parse_queries(text, str(source))
    if vault is not None:
        check_relevant_paths(queries, Path(vault), str(source))
    return queries


def parse_queries(text: str, name: str = "<queries>") -> list[EvalQuery]:
    """Queries from JSON Lines text; raises ``QueryFileError`` listing every bad line."""
    problems: list[str] = []
    queries: list[EvalQuery] = []
    first_line_of: dict[str, int] = {}
    for number, raw in enumerate(text.splitlines(), start=1):
        if not raw.strip():
            continue
        try:
            record = json.loads(raw)
        except json.JSONDecodeError as exc:
            problems.append(f"line {number}: not valid JSON ({exc.msg} at column {exc.colno})")
            continue
        if not isinstance(record, dict):
            problems.append(f"line {number}: expected a JSON object, got {type(record).__name__}")
            continue
        line_problems = _check_record(record)
        if line_problems:
            problems.extend(f"line {number}: {p}" for p in line_problems)
            continue
        qid = str(record["id"])
        if qid in first_line_of:
            problems.append(f"line {number}: duplicate id {qid!r} (first on line {first_line_of[qid]})")
            continue
        first_line_of[qid] = number
        extra = {k: v for k, v in record.items() if k not in (*REQUIRED, "partial")}
        queries.append(
            EvalQuery(
                id=qid,
                query=record["query"].strip(),
                type=record["type"],
                relevant=tuple(_normal_path(p) for p in record["relevant"]),
                partial=tuple(_normal_path(p) for p in record.get("partial") or ()),
                line=number,
                extra=extra,
            )
        )
    if problems:
        raise QueryFileError(_listing(f"{name}: {len(problems)} problem(s) in the query file", problems), problems)
    if not queries:
        raise QueryFileError(f"{name}: no queries (expected one JSON object per line)")
    return queries


def _check_record(record: dict) -> list[str]:
    problems = []
    missing = [key for key in REQUIRED if key not in record]
    if missing:
        problems.append(f"missing field(s): {', '.join(missing)}")
    qid = record.get("id")
    if "id" in record and (not isinstance(qid, (str, int)) or isinstance(qid, bool) or str(qid).strip() == ""):
        problems.append("id must be a non-empty string")
    query = record.get("query")
    if "query" in record and (not isinstance(query, str) or not query.strip()):
        problems.append("query must be a non-empty string")
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
    problems = []
    for q in queries:
        for rel in q.relevant:
            if not (root / rel).is_file():
                problems.append(f"line {q.line} ({q.id}): {rel}")
    if problems:
        raise QueryFileError(
            _listing(f"{name}: {len(problems)} relevant path(s) are not notes in the vault {root}", problems),
            problems,
        )


def _listing(head: str, problems: list[str]) -> str:
    return "\n".join([head + ":", *(f"  {p}" for p in problems)])
