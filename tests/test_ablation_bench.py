"""bench/ablation.py: its grid ranks as `Recaller.ask` does (fake embedder, a vault with a long note)."""

from __future__ import annotations

import argparse
import json

from bench_helpers import bench_script
from conftest import write

from brain.index.indexer import index_vault
from brain.recall.dense import dense_search
from brain.recall.opening import open_recaller
from brain.recall.types import RecallSettings

WORDS = ("harbour", "crane", "storm", "tide", "anchor", "ferry")
FILLER = " ".join(f"w{j}" for j in range(120))


def test_the_grid_ranks_as_the_pipeline_with_the_long_note_discount(tmp_path):
    """The grid searched without the long-note discount `Recaller.ask` applies, so its check
    against the pipeline counted lists that differ wherever a note of many chunks stood near a
    short one: here a logbook of 300 chunks first in the grid's "harbour crane", third in ask's."""
    root = tmp_path / "vault"
    write(
        root,
        "Logbook.md",
        "# Logbook\n\n"
        + "".join(f"## Day {i}\n\nThe harbour crane and the {WORDS[i % 6]}. {FILLER}\n\n" for i in range(300)),
    )
    for word in WORDS:
        write(root, f"{word}.md", f"# {word.title()}\n\nThe harbour crane and the {word}. {FILLER}\n")
    index_vault(root, progress=False)
    queries = tmp_path / "queries.jsonl"
    lines = [
        {"id": f"q{i}", "query": q, "type": "theme", "relevant": ["harbour.md"]}
        for i, q in enumerate(["harbour crane", "crane storm", "the tide", "ferry day"])
    ]
    queries.write_text("".join(json.dumps(line) + "\n" for line in lines), encoding="utf-8")

    # What makes the check mean something here: the discount changes the first query's order.
    recaller = open_recaller(root)
    try:
        vector, settings = recaller.embedder.embed_query("harbour crane"), RecallSettings()
        bare = dense_search(recaller.store, recaller.vectors, vector, 10)
        discounted = recaller.ask("harbour crane", "vector", settings).results
        assert [c.path for c in bare][:3] != [c.path for c in discounted][:3]
    finally:
        recaller.close()

    args = argparse.Namespace(vault=str(root), queries=str(queries), k=10, depth=60, check=len(lines))
    data = bench_script("ablation").evaluate(args)
    assert data["consistency"] == {"checked": 3 * len(lines), "equal": 3 * len(lines)}
