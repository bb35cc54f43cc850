"""Mask secrets in text before a turn reaches the database.

Shapes covered: API keys (``sk-…``, ``ghp_…`` and the other GitHub prefixes, ``AKIA…``,
``xox?-…``, ``AIza…``), bearer and basic auth headers, PEM private keys, credentials in
URLs, and ``password=``-style arguments (``key=value``, ``key: value``, ``--password x``).
The key name or prefix stays so a reader knows what was there; the value becomes ``***``.
"""

from __future__ import annotations

import re
from typing import Any

MASK = "***"

_SECRET_WORDS = (
    r"password|passwd|secret|token|api[_-]?key|apikey|access[_-]?key|private[_-]?key"
    r"|credentials?"
)
_VALUE = r"(\"[^\"]*\"|'[^']*'|[^\s\"',;&]+)"

# (triggers, pattern, replacement), in order: whole private keys first, then typed keys
# and headers, then key=value forms. A rule runs only when one of its triggers occurs in
# the lower-cased text, so the hook compiles (re caches) just the patterns it needs.
# A replacement of None masks group 2 and keeps group 1 (see _mask_value).
_RULES: list[tuple[tuple[str, ...], str, str | None]] = [
    (
        ("private key",),
        r"(?s)-----BEGIN ((?:[A-Z0-9]+ )*PRIVATE KEY)-----.*?(?:-----END \1-----|$)",
        r"-----BEGIN \1----- " + MASK + r" -----END \1-----",
    ),
    (("sk-",), r"\b(sk-(?:ant-|proj-|live-|test-)?)[A-Za-z0-9_\-]{16,}", r"\1" + MASK),
    (("ghp_", "gho_", "ghu_", "ghs_", "ghr_"), r"\b(gh[pousr]_)[A-Za-z0-9]{20,}", r"\1" + MASK),
    (("github_pat_",), r"\b(github_pat_)[A-Za-z0-9_]{20,}", r"\1" + MASK),
    (("akia", "asia"), r"\b(AKIA|ASIA)[0-9A-Z]{16}\b", r"\1" + MASK),
    (("xox",), r"\b(xox[abposr]-)[A-Za-z0-9\-]{10,}", r"\1" + MASK),
    (("aiza",), r"\b(AIza)[0-9A-Za-z_\-]{35}", r"\1" + MASK),
    (
        ("authorization",),
        r"(?i)(authorization[\"']?\s*[:=]\s*[\"']?(?:basic|bearer|token)\s+)[^\s\"']+",
        r"\1" + MASK,
    ),
    # A bare "Bearer <token>": the token must look like one (a digit or punctuation in it),
    # so prose such as "bearer authentication" stays.
    (
        ("bearer",),
        r"(?i)\b(bearer\s+)(?=[\w.~+/=\-]*[0-9.~+/=\-])[\w.~+/=\-]{12,}",
        r"\1" + MASK,
    ),
    # user:password@ in a URL
    (("://",), r"(?i)\b([a-z][a-z0-9+.\-]*://[^\s:/@'\"]+:)[^\s@/'\"]+(@)", r"\1" + MASK + r"\2"),
    # --password value, --api-key=value on a command line
    (
        ("pass", "secret", "token", "key", "credential"),
        rf"(?i)(--?(?:[a-z]+[_-])*(?:{_SECRET_WORDS})(?:\s+|=)){_VALUE}",
        None,
    ),
    # password=value, "api_key": "value", DB_PASSWORD=value, aws_secret_access_key = value
    (
        ("pass", "secret", "token", "key", "credential"),
        rf"(?i)\b([a-z0-9_\-]*(?:{_SECRET_WORDS})[\"']?\s*[=:]\s*){_VALUE}",
        None,
    ),
]


def _mask_value(match: re.Match[str]) -> str:
    # Keep the quotes of a quoted value; leave a masked value or a $VARIABLE alone.
    key, value = match.group(1), match.group(2)
    quote = value[0] if value[:1] in ("'", '"') else ""
    bare = value.strip("\"'")
    if not bare or bare.startswith((MASK, "$")):
        return match.group(0)
    return f"{key}{quote}{MASK}{quote}"


def redact(text: str) -> str:
    """``text`` with every secret shape masked."""
    lowered = text.lower()
    for triggers, pattern, replacement in _RULES:
        if any(t in lowered for t in triggers):
            text = re.sub(pattern, replacement if replacement is not None else _mask_value, text)
    return text


def redact_value(value: Any) -> Any:
    """Redact every string inside a JSON-like value (before it is encoded, never after)."""
    if isinstance(value, str):
        return redact(value)
    if isinstance(value, list):
        return [redact_value(v) for v in value]
    if isinstance(value, dict):
        return {k: redact_value(v) for k, v in value.items()}
    return value
