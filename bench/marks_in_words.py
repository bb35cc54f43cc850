"""What migration m023_marks_in_words changes of a vault's index and of labelled queries, and what
it costs.

m023 makes unicode61 take marks into words (``categories 'L* N* Co Mn Mc'``) and ``text.for_search``
read text composed (NFC) and full-width letters as the usual ones. For each vault given, every
note brain indexes is parsed and chunked as the index does (BRAIN_CHUNKING as set); printed: the
notes m023 reads again (a title, path, heading or text ``for_search`` now composes or narrows),
the chunks whose embedded text changes (embedded again), and the chunks whose BM25 words change
(their searched title, heading and text tokenized by the tokenizer before and after m023), each
listed. For each ``--queries`` file (JSON lines with a "query"), the queries whose BM25 terms
change. No word changes and no embedded text changes: BM25 and the vectors are the same.

With ``--index DIR`` (an index folder made by a brain from before m023: it is copied), the
migration is timed on the copy: opening it runs m023.

    python bench/marks_in_words.py VAULT [VAULT ...] [--queries FILE ...] [--index DIR]
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
from brain.chunking import embedding_text, parse_strategy
from brain.index.parsing import parse_and_chunk
from brain.index.schema import FTS_TOKENIZERS
from brain.text import composes_or_narrows, for_search, yo_as_ye
from brain.vault import scan

BEFORE = "unicode61 remove_diacritics 2"  # m002 to m021's tokenizer


class Words:
    """A text's words under one FTS5 tokenizer spec, asked of SQLite."""

    def __init__(self, spec: str):
        self.conn = sqlite3.connect(":memory:", isolation_level=None)
        quoted = spec.replace("'", "''")
        self.conn.execute(f"CREATE VIRTUAL TABLE words USING fts5(text, tokenize = '{quoted}')")
        self.conn.execute("CREATE VIRTUAL TABLE tokens USING fts5vocab(words, 'instance')")

    def __call__(self, text: str) -> list[str]:
        self.conn.execute("BEGIN")
        try:
            self.conn.execute("INSERT INTO words (rowid, text) VALUES (1, ?)", (yo_as_ye(text),))
            return [row[0] for row in self.conn.execute("SELECT term FROM tokens ORDER BY offset")]
        finally:
            self.conn.execute("ROLLBACK")


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("vaults", nargs="*", type=Path)
    parser.add_argument("--queries", nargs="*", type=Path, default=[])
    parser.add_argument("--index", type=Path, help="an index folder from before m023 to time the migration on")
    args = parser.parse_args()
    before, after = Words(BEFORE), Words(FTS_TOKENIZERS["unicode61"])
    parsed = parse_strategy(config.chunking())
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
                searched = " ".join(for_search(column) for column in (note.title, chunk.heading, chunk.text))
                old, new = before(searched), after(searched)
                if old != new:
                    worded_otherwise += 1
                    lines.append(f"  {file.path} #{chunk.ordinal}: BM25 words {len(old)} -> {len(new)}")
        print(
            f"{vault}: {len(files):,} notes, {chunk_count:,} chunks; {marked} notes read again by m023;"
            f" {embedded_again} chunks embedded otherwise; {worded_otherwise} chunks with other BM25 words"
        )
        print("\n".join(lines))
    for path in args.queries:
        queries = [json.loads(line)["query"] for line in path.read_text(encoding="utf-8").splitlines() if line.strip()]
        moved = [q for q in queries if before(for_search(q)) != after(for_search(q)) or composes_or_narrows(q)]
        print(f"{path}: {len(queries)} queries; {len(moved)} with other BM25 terms or another searched form")
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
            past = store.conn.execute("SELECT count(*) FROM chunk_history").fetchone()[0]
            again = store.conn.execute("SELECT count(*) FROM notes WHERE hash = ''").fetchone()[0]
            store.close()
            start = time.perf_counter()
            IndexStore.open(copy, create=False).close()
            plain = time.perf_counter() - start
            print(
                f"{args.index}: opening it ran the migrations in {took:.2f} s, opening it again {plain:.2f} s"
                f" ({chunks:,} chunks, {past:,} past chunks; {again} notes to read again)"
            )


if __name__ == "__main__":
    main()
