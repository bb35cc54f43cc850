"""Text as the query side takes it in: valid Unicode.

A query can arrive holding UTF-16 surrogates no UTF-8 text can: Python decodes a command
line's undecodable bytes to U+DC80-U+DCFF ("surrogateescape"), and JSON may hold "\\ud800"
alone. The tokenizer, SQLite and a JSON request to `brain serve` all refuse them.
"""

from __future__ import annotations

import re

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
