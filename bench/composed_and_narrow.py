"""What migration m023_composed_and_narrow changes of a vault's index and of labelled queries, and
what it costs.

m023 has ``text.for_search`` read text composed (NFC) and full-width Latin letters and digits and
half-width kana and Hangul as the usual ones. For each vault given, every note brain indexes is
parsed and chunked as the index does (BRAIN_CHUNKING as set); printed: the notes m023 reads again
(a title, path, heading or text ``for_search`` now composes or narrows), the chunks whose
embedded text changes (embedded again), and the chunks whose BM25 words change (the words of a
title, heading and text as written and as searched, for those it composes or narrows), each
listed. For each ``--queries`` file (JSON lines with a "query"), the queries it composes or
narrows.

With ``--index DIR`` (an index folder made by a brain from before m023: it is copied), the
migration is timed on the copy: opening it runs m023.

    python bench/composed_and_narrow.py VAULT [VAULT ...] [--queries FILE ...] [--index DIR]
"""

from __future__ import annotations

import argparse
import json
import shutil
import sqlite3
import tempfile
import time
from pathlib import Path

from brain import config
from brain.chunking import embedding_text
from brain.index.parsing import parse_and_chunk
from brain.index.schema import FTS_TOKENIZERS
from brain.index.tokens import index_words
from brain.text import composes_or_narrows, yo_as_ye
from brain.vault import scan

_WORDS = sqlite3.connect(":memory:", isolation_level=None)
_WORDS.execute(f"CREATE VIRTUAL TABLE words USING fts5(text, tokenize = '{FTS_TOKENIZERS['unicode61']}')")
_WORDS.execute("CREATE VIRTUAL TABLE tokens USING fts5vocab(words, 'instance')")


def words(text: str) -> list[str]:
    """``text``'s BM25 words as written: not ``index_words``, which reads it through ``for_search``
    first (both sides of the comparison below were then the searched form, and always equal)."""
    _WORDS.execute("DELETE FROM words")
    _WORDS.execute("INSERT INTO words (rowid, text) VALUES (1, ?)", (yo_as_ye(text),))
    return [row[0] for row in _WORDS.execute("SELECT term FROM tokens ORDER BY offset")]


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("vaults", nargs="*", type=Path)
    parser.add_argument("--queries", nargs="*", type=Path, default=[])
    parser.add_argument("--index", type=Path, help="an index folder from before m023 to time the migration on")
    args = parser.parse_args()
    parsed = config.parse_chunking(config.chunking())
    assert parsed is not None
    strategy, with_path = parsed
    for vault in args.vaults:
        files, _ = scan(vault.resolve())
        chunk_count = marked = embedded_again = worded_otherwise = 0
        lines: list[str] = []
        for file in files:
            note, chunks, _ = parse_and_chunk(file.path, Path(file.abspath).read_bytes(), 0.0, strategy=strategy)
            parts = [note.title, file.path] + [c.heading for c in chunks] + [c.text for c in chunks]
            marked += any(composes_or_narrows(part) for part in parts)
            for chunk in chunks:
                chunk_count += 1
                raw = embedding_text(note.title, chunk, file.path if with_path else None, searched=False)
                if composes_or_narrows(raw):
                    embedded_again += 1
                    lines.append(f"  {file.path} #{chunk.ordinal}: embedded otherwise")
                columns = [c for c in (note.title, chunk.heading, chunk.text) if composes_or_narrows(c)]
                if any(words(c) != index_words(c, FTS_TOKENIZERS["unicode61"]) for c in columns):
                    worded_otherwise += 1
                    lines.append(f"  {file.path} #{chunk.ordinal}: other BM25 words")
        print(
            f"{vault}: {len(files):,} notes, {chunk_count:,} chunks; {marked} notes read again by m023;"
            f" {embedded_again} chunks embedded otherwise; {worded_otherwise} chunks with other BM25 words"
        )
        print("\n".join(lines))
    for path in args.queries:
        queries = [json.loads(line)["query"] for line in path.read_text(encoding="utf-8").splitlines() if line.strip()]
        moved = [q for q in queries if composes_or_narrows(q)]
        print(f"{path}: {len(queries)} queries; {len(moved)} composed or narrowed otherwise")
        for query in moved:
            print(f"  {query!r}")
    if args.index:
        with tempfile.TemporaryDirectory() as scratch:
            copy = Path(scratch) / "index"
            shutil.copytree(args.index, copy)
            from brain.index.store import IndexStore

            start = time.perf_counter()
            store = IndexStore.open(copy, create=False)
            took = time.perf_counter() - start
            chunks = store.conn.execute("SELECT count(*) FROM chunks").fetchone()[0]
            again = store.conn.execute("SELECT count(*) FROM notes WHERE hash = ''").fetchone()[0]
            store.close()
            print(
                f"{args.index}: opening it ran the migrations in {took:.2f} s ({chunks:,} chunks; {again} notes to read again)"
            )


if __name__ == "__main__":
    main()
