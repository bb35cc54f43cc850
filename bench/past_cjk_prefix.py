"""What a short CJK query `--as-of` costs and finds now that its two-character pieces stand for the
past's trigrams too (``PastIndex.vocabulary_with_prefix``), not the present's alone.

A made-up Chinese vault (``--notes`` notes of sentences drawn from a few hundred characters, seeded)
is indexed under ``BRAIN_FTS_TOKENIZER=trigram`` (the fast fake ``benchfake:384`` embedder of
bench/scale.py); then a third of its notes are deleted and a third rewritten, and indexed again.
The queries are two- and four-character pieces of the deleted and rewritten notes' old text. For
each, over the view of the moment before the change, the lexical lane (``match_expression`` and
``lexical_search``, 10 notes) with the present's words standing in (before) and with the slice's
(now), interleaved: how many queries found one of the notes they were taken from, and the CPU.

    python bench/past_cjk_prefix.py --notes 400 --queries 200
"""

from __future__ import annotations

import argparse
import os
import random
import sys
import tempfile
import time
from pathlib import Path

HERE = Path(__file__).resolve().parent
MODEL = "benchfake:384"
# Common Han characters: sentences of these share many trigrams, as a real vault's do.
POOL = (
    "的一是不了人我在有他这为之大来以个中上们到说国和地也子时道出而要于就下得可你年生自会那后能对着事其"
    "里所去行过家十用发天如然作方成者多日都三小军二无同么经法当起与好看学进种将还分此心前面又定见只主没"
    "公从长城古代建筑历史文化山水河流城市农村工业科学技术教育医院学校图书馆博物馆音乐电影艺术体育运动"
)


def _text(rng: random.Random, length: int) -> str:
    sentences = []
    while sum(map(len, sentences)) < length:
        sentences.append("".join(rng.choice(POOL) for _ in range(rng.randint(8, 20))) + "。")
    return "".join(sentences)


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--notes", type=int, default=400)
    parser.add_argument("--queries", type=int, default=200)
    parser.add_argument("--seed", type=int, default=7)
    args = parser.parse_args()
    rng = random.Random(args.seed)
    with tempfile.TemporaryDirectory(prefix="past-cjk-") as work:
        os.environ["BRAIN_HOME"] = str(Path(work) / "home")
        os.environ["BRAIN_FTS_TOKENIZER"] = "trigram"
        sys.path.insert(0, str(HERE))
        from scale import _register

        from brain import config
        from brain.index.indexer import index_vault
        from brain.index.store import IndexStore
        from brain.recall.lexical import lexical_search, match_expression
        from brain.recall.past import PastIndex

        _register()
        vault = Path(work) / "vault"
        vault.mkdir()
        old: dict[str, str] = {}
        for number in range(args.notes):
            old[f"n{number:04}.md"] = _text(rng, 400)
            (vault / f"n{number:04}.md").write_text(f"# 笔记{number}\n\n{old[f'n{number:04}.md']}\n", encoding="utf-8")
        index_vault(vault, model_name=MODEL, progress=False)
        moment = time.time()
        time.sleep(0.01)
        changed = rng.sample(sorted(old), 2 * args.notes // 3)
        for name in changed[: args.notes // 3]:
            (vault / name).unlink()
        for name in changed[args.notes // 3 :]:
            (vault / name).write_text(f"# 笔记\n\n{_text(rng, 400)}\n", encoding="utf-8")
        index_vault(vault, model_name=MODEL, progress=False)
        queries = []
        for _ in range(args.queries):
            name = rng.choice(changed)
            size = rng.choice((2, 4))
            start = rng.randrange(len(old[name]) - size)
            piece = old[name][start : start + size]
            if "。" not in piece:
                queries.append((piece, {n for n in changed if piece in old[n]}))
        store = IndexStore.open(config.index_dir(vault), create=False)
        view = PastIndex(store, as_of=moment)
        now = PastIndex.vocabulary_with_prefix
        figures = {"before": [0, 0.0], "now": [0, 0.0]}
        spent = [0.0]  # CPU inside vocabulary_with_prefix, now

        def timed(self: PastIndex, prefix: str, limit: int) -> list[str]:
            cpu = time.process_time()
            try:
                return now(self, prefix, limit)
            finally:
                spent[0] += time.process_time() - cpu

        def run(name: str) -> None:
            found, cpu = 0, time.process_time()
            for query, sources in queries:
                expression = match_expression(view, query)
                hits = lexical_search(view, query, 10, expression=expression) if expression else []
                found += any(view.versions[c.note_id].path in sources for c in hits)
            figures[name][0] += found
            figures[name][1] += time.process_time() - cpu

        for turn in range(4):  # interleaved, each first in turn
            for name in ("before", "now") if turn % 2 == 0 else ("now", "before"):
                PastIndex.vocabulary_with_prefix = (  # type: ignore[method-assign]
                    timed
                    if name == "now"
                    else lambda self, prefix, limit: self.base.vocabulary_with_prefix(prefix, limit)
                )
                run(name)
        PastIndex.vocabulary_with_prefix = now  # type: ignore[method-assign]
        view.close()
        print(
            f"load average {os.getloadavg()[0]:.1f}; {args.notes} notes, {len(changed)} deleted or rewritten;"
            f" {len(queries)} queries of 2 or 4 characters from their old text"
        )
        for name, (found, cpu) in figures.items():
            print(
                f"{name}: {found // 4} of {len(queries)} found a note they came from (lexical lane, top 10),"
                f" {1000 * cpu / 4 / len(queries):.2f} ms CPU a query"
            )
        print(
            f"CPU now / before: {figures['now'][1] / figures['before'][1]:.2f}; of now's,"
            f" {1000 * spent[0] / 4 / len(queries):.2f} ms a query finding the words a piece stands for"
        )


if __name__ == "__main__":
    main()
