"""The words of a text as the lexical index holds them, asked of SQLite's own tokenizer.

Python's idea of a word and of case is not FTS5's: ``\\w+`` keeps "wpa_supplicant" whole where
unicode61 splits it at the underscore, ``casefold`` writes "Straße" as "strasse" where unicode61
keeps "straße", and unicode61's ``remove_diacritics 2`` strips Latin accents ("Ruairí" →
"ruairi") that Python keeps. The lexical lane looks each query word up in the index's
vocabulary (how many chunks hold it) and leaves out the words none hold, so a word written
otherwise than the index holds it was left out of the search, though FTS5 itself would have
matched it. An in-memory FTS5 table with the index's tokenizer gives the very tokens, in order.
"""

from __future__ import annotations

import sqlite3
import threading

from ..text import for_search, valid_unicode, yo_as_ye

_lock = threading.Lock()
_tables: dict[str, sqlite3.Connection] = {}  # tokenizer spec -> a connection holding its table


def index_words(text: str, tokenize: str) -> list[str]:
    """``text``'s tokens under the FTS5 tokenizer spec ``tokenize`` (``schema.FTS_TOKENIZERS``), in order.

    The index holds every ё as е (schema.py m006) and text as ``for_search`` gives it (m021), so
    the text is folded so first; a lone surrogate, which SQLite cannot take, is U+FFFD."""
    text = yo_as_ye(for_search(valid_unicode(text)))
    with _lock:
        conn = _tables.get(tokenize) or _table(tokenize)
        conn.execute("BEGIN")
        try:
            conn.execute("INSERT INTO words (rowid, text) VALUES (1, ?)", (text,))
            return [row[0] for row in conn.execute("SELECT term FROM tokens ORDER BY offset")]
        finally:
            conn.execute("ROLLBACK")


def _table(tokenize: str) -> sqlite3.Connection:
    conn = sqlite3.connect(":memory:", check_same_thread=False, isolation_level=None)
    quoted = tokenize.replace("'", "''")
    conn.execute(f"CREATE VIRTUAL TABLE words USING fts5(text, tokenize = '{quoted}')")
    conn.execute("CREATE VIRTUAL TABLE tokens USING fts5vocab(words, 'instance')")
    _tables[tokenize] = conn
    return conn
