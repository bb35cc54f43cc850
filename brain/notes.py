"""One markdown file → one ``Note``: decoding, frontmatter, title, aliases, tags, dates, links.

Bad input never raises: undecodable bytes, a BOM, broken YAML and odd frontmatter types are
handled, and what was done about them is listed in ``Note.warnings``.
"""

from __future__ import annotations

import datetime as dt
import hashlib
import re
from dataclasses import dataclass, field
from typing import Any

from .links import Link, extract_links, mask_code

DATE_FIELDS = ("date", "created", "created_at", "creation_date", "updated", "modified", "last_modified")

_FRONTMATTER = re.compile(r"\A---[ \t]*\r?\n(.*?)(?:\r?\n)(?:---|\.\.\.)[ \t]*(?:\r?\n|\Z)", re.DOTALL)
# Obsidian tags: '#' then letters/digits/_-/ with at least one non-digit; not inside words or URLs.
_INLINE_TAG = re.compile(r"(?<![\w&/#\]\)])#([^\W\d][\w/-]*|\d+[^\W\d][\w/-]*)", re.UNICODE)
_HEADING = re.compile(r"^ {0,3}#{1,6}\s")


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


def decode(data: bytes) -> tuple[str, list[str]]:
    """Bytes → text. UTF-8 (BOM stripped); invalid bytes are replaced, with a warning."""
    warnings = []
    if b"\x00" in data and not data.startswith((b"\xff\xfe", b"\xfe\xff")):
        # Seen in real vaults: a text note padded with NULs by a crashed sync.
        nul_count = data.count(b"\x00")
        warnings.append(f"{nul_count} NUL bytes removed")
        data = data.replace(b"\x00", b"")
    if data.startswith(b"\xef\xbb\xbf"):
        data = data[3:]
    elif data.startswith((b"\xff\xfe", b"\xfe\xff")):
        try:
            return data.decode("utf-16"), ["decoded as UTF-16"]
        except UnicodeDecodeError:
            pass
    try:
        text = data.decode("utf-8")
    except UnicodeDecodeError as exc:
        text = data.decode("utf-8", errors="replace")
        warnings.append(f"invalid UTF-8 at byte {exc.start}; undecodable bytes replaced")
    return text.replace("\r\n", "\n").replace("\r", "\n"), warnings


def looks_binary(data: bytes) -> bool:
    """NUL bytes amid the first 8 KB: not a text note, whatever its name says.

    A trailing run of NULs (padding left by a crashed write) does not count, nor do the NULs
    of UTF-16 text with a byte-order mark (Windows "Unicode" files), which ``decode`` reads.
    """
    if data.startswith((b"\xff\xfe", b"\xfe\xff")):
        return "\x00" in data[:8192].decode("utf-16", errors="replace")
    return b"\x00" in data[:8192].rstrip(b"\x00")


def split_frontmatter(text: str) -> tuple[dict[str, Any], str, list[str]]:
    """(metadata, body, warnings). Broken YAML keeps the body and drops the metadata."""
    match = _FRONTMATTER.match(text)
    if not match:
        return {}, text, []
    body = text[match.end():]
    try:
        from frontmatter.default_handlers import YAMLHandler  # python-frontmatter, safe loader

        meta = YAMLHandler().load(match.group(1))
    except Exception as exc:  # yaml.YAMLError and friends: never stop a run for one note
        first_line = str(exc).strip().splitlines()[0] if str(exc).strip() else type(exc).__name__
        return {}, body, [f"broken YAML frontmatter ignored: {first_line}"]
    if meta is None:
        return {}, body, []
    if not isinstance(meta, dict):
        return {}, body, ["frontmatter is not a mapping; ignored"]
    return {str(k): v for k, v in meta.items()}, body, []


def _string_list(value: Any) -> list[str]:
    """Frontmatter lists come as lists, comma strings, or single values."""
    if value is None:
        return []
    if isinstance(value, str):
        return [part.strip() for part in value.split(",") if part.strip()]
    if isinstance(value, (list, tuple, set)):
        out = []
        for item in value:
            out.extend(_string_list(item) if isinstance(item, (list, tuple)) else [str(item).strip()])
        return [item for item in out if item]
    return [str(value).strip()]


def _frontmatter_tags(value: Any) -> list[str]:
    tags = []
    for item in _string_list(value):
        # "tags: a b" and "tags: #a, #b" are both seen in the wild.
        tags.extend(part.lstrip("#") for part in item.split() if part.lstrip("#"))
    return tags


def inline_tags(body: str) -> list[str]:
    tags = []
    for line in mask_code(body).split("\n"):
        if _HEADING.match(line):
            line = line.lstrip(" ").lstrip("#")
        for match in _INLINE_TAG.finditer(line):
            tags.append(match.group(1).rstrip("/"))
    return tags


def _iso(value: Any) -> str | None:
    if isinstance(value, dt.datetime):
        return value.isoformat()
    if isinstance(value, dt.date):
        return value.isoformat()
    if isinstance(value, str):
        text = value.strip().strip("[]").strip()
        try:
            if len(text) == 10:  # a date stays a date, quoted or not
                return dt.date.fromisoformat(text).isoformat()
            return dt.datetime.fromisoformat(text.replace("Z", "+00:00")).isoformat()
        except ValueError:
            match = re.match(r"^(\d{4})-(\d{2})-(\d{2})", text)
            if match:
                try:
                    return dt.date(*map(int, match.groups())).isoformat()
                except ValueError:
                    return None
    return None


def parse_note(path: str, data: bytes, mtime: float) -> Note:
    """Parse one note's bytes. ``path`` is vault-relative, posix."""
    text, warnings = decode(data)
    meta, body, fm_warnings = split_frontmatter(text)
    warnings += fm_warnings
    stem = path.rsplit("/", 1)[-1]
    stem = stem[:-3] if stem.lower().endswith(".md") else stem
    title = str(meta.get("title") or "").strip() or stem
    aliases = _string_list(meta.get("aliases", meta.get("alias")))
    tag_list = _frontmatter_tags(meta.get("tags", meta.get("tag"))) + inline_tags(body)
    tags = list(dict.fromkeys(tag_list))  # de-duplicated, first-seen order
    date = None
    for name in DATE_FIELDS:
        date = _iso(meta.get(name))
        if date:
            break
    if date is None:
        date = dt.datetime.fromtimestamp(mtime, dt.timezone.utc).isoformat(timespec="seconds")
    return Note(
        path=path,
        title=title,
        aliases=aliases,
        tags=tags,
        date=date,
        body=body,
        frontmatter=_jsonable(meta),
        links=extract_links(body),
        content_hash=content_hash(data),
        warnings=warnings,
    )


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
