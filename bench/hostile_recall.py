"""Odd queries against odd vaults, through `brain ask` in every mode: the promise is never a
traceback, an exit 0 only with an answer whose `--json` has the one shape, a refusal in one line,
and no query that costs seconds.

In one process (click's CliRunner, a fake embedder of 16 dimensions seeded by the text: no model
to load), vaults: empty, one note, 30 notes without links, 200 notes each linking every other,
and one of odd notes (only frontmatter, only a code block, 20,000 links, one 2 MB line, a
2,000-character title, an alias 51 notes share, notes named "AND OR NOT", "NEAR(a b)",
"title:x"). Queries: blank, stop words (English, Russian), punctuation, FTS5 syntax (AND, OR,
NOT, NEAR, quotes, *, ^, column:, parentheses), SQL, 100,000 characters, a 5,000-character word,
NULs, lone surrogates, RTL, combining marks, emoji, a note's path, a wikilink, a script no note
uses, a note's exact name, and pasted texts of 600 to 2,000 distinct words, names, dates,
comparisons and headings. Each is asked plain and with `--json` (``--extra`` adds options, e.g.
"--as-of now"). A case fails when the command raised, printed "Traceback", printed `--json` that
does not parse or has another shape than the rest, or took more than ``--cpu`` seconds of CPU.

    python bench/hostile_recall.py [--vaults odd,complete] [--modes vector,hybrid+ppr] [--only 100k]
"""

from __future__ import annotations

import argparse
import hashlib
import json
import os
import shutil
import sys
import tempfile
import time
import traceback
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))

import numpy as np
from click.testing import CliRunner

from brain.embed import register_embedder

MODES = "vector,graph,gated,hybrid,ppr,hybrid+ppr"
WARNING = "brain: WARNING: "


class Seeded:
    """A vector per text, the same in every run (Python's hash() is salted per process)."""

    def __init__(self, name: str = "fake:16"):
        self.name, self.dim = name, 16
        self.query_prefix = self.passage_prefix = ""

    def embed_documents(self, texts, *, progress: bool = False):
        texts = list(texts)
        out = np.zeros((len(texts), self.dim), dtype=np.float32)
        for i, text in enumerate(texts):
            seed = int.from_bytes(hashlib.blake2b(text[:200].encode("utf-8", "replace"), digest_size=4).digest(), "big")
            out[i] = np.random.default_rng(seed).standard_normal(self.dim)
        return out / np.linalg.norm(out, axis=1, keepdims=True)

    def embed_query(self, text: str):
        return self.embed_documents([text])[0]


register_embedder("fake", Seeded)

from brain.cli import cli  # noqa: E402

QUERIES = {
    "empty": "",
    "spaces": "   ",
    "tabs-nl": "\t\n \r",
    "stop-en": "the of and a to is",
    "stop-ru": "и в не на что это",
    "punct": "?!.,;:-'\"()[]{}",
    "AND": "AND",
    "OR": "OR",
    "NOT": "NOT",
    "a-AND-b": "garden AND river",
    "NOT-x": "NOT garden",
    "NEAR": "NEAR(garden river)",
    "NEAR2": "NEAR(a b, 3)",
    "quote": '"',
    "quotes": '"garden',
    "star": "*",
    "prefix": "gar*",
    "caret": "^garden",
    "column": "title:x",
    "column-only": "title:",
    "paren": "(",
    "plus": "+",
    "minus": "-garden",
    "sql": "'; DROP TABLE notes; --",
    "sql-or": "1=1 OR 1=1",
    "sql-select": "SELECT * FROM chunks",
    "100k": "garden " * 14_286,
    "word5k": "x" * 5000,
    "nul": "gar\0den",
    "nul-only": "\0",
    "surrogate": "garden \udcff \ud800",
    "rtl": "שלום עולם مرحبا",
    "combining": "e\u0301\u0301\u0301\u0301" * 50,
    "emoji": "🌳🌊🪨 👨‍👩‍👧",
    "path": "Normal.md",
    "wikilink": "[[Alias 1]]",
    "wikilink-shown": "[[Normal|shown]]",
    "unknown-script": "ᐃᓄᒃᑎᑐᑦ ᓄᓇᕗᑦ",
    "note-name": "AND OR NOT",
    "note-name-near": "NEAR(a b)",
    "cjk": "記憶 グラフ",
    "percent": "%_%",
    "hashtag": "#decision",
    "digits": "9" * 400,
    "zero-width": "\u200b\u200b",
    "bidi": "\u202egarden",
    "names-1200": " ".join(f"Alias {i}" for i in range(1200)),
    "wikilinks-800": " ".join(f"[[Target {i}]]" for i in range(800)),
    "dates-300": "on 2026-03-01 and last week " * 300,
    "numbers-2000": " ".join(str(i) for i in range(2000)),
    "vs-900": " vs ".join(f"Alias {i}" for i in range(900)),
    "pasted-600": " ".join(f"word{i} river{i % 7} stone" for i in range(600)),
    "против-700": " против ".join(f"Заметка{i}" for i in range(700)),
    "headings-800": "\n".join(f"# Heading {i}" for i in range(800)),
}


def vaults(work: Path) -> dict[str, Path]:
    made = {name: work / name for name in ("empty", "one", "nolinks", "complete", "odd")}
    for folder in made.values():
        folder.mkdir()
    (made["one"] / "Only.md").write_text("# Only\n\nThe only note, about gardens.\n")
    for i in range(30):
        (made["nolinks"] / f"N{i}.md").write_text(f"# N{i}\n\nNote {i} about river stone garden {i}.\n")
    for i in range(200):
        links = " ".join(f"[[C{j}]]" for j in range(200) if j != i)
        (made["complete"] / f"C{i}.md").write_text(f"# C{i}\n\nNote {i} about engine signal.\n\n{links}\n")
    odd = made["odd"]
    (odd / "Front only.md").write_text("---\ntitle: Front\ntags: [a, b]\naliases: [Shared]\n---\n")
    (odd / "Code only.md").write_text("```python\nprint('zorblax')\n```\n")
    (odd / "Many links.md").write_text("# Many\n\n" + " ".join(f"[[Target {i}]]" for i in range(20000)) + "\n")
    (odd / "Long line.md").write_text("word" * 500_000 + "\n")
    (odd / ("T" * 200 + ".md")).write_text("# " + "Title " * 333 + "\n\nA note with a very long title.\n")
    for i in range(50):
        body = f"---\naliases: [Shared, Common name]\n---\n# Alias {i}\n\nText {i} [[Alias {(i + 1) % 50}]].\n"
        (odd / f"Alias {i}.md").write_text(body)
    for name in ("AND OR NOT", "NEAR(a b)", "title:x"):
        (odd / f"{name}.md").write_text(f"# {name}\n\nA note named like a search's syntax.\n")
    (odd / "Normal.md").write_text("# Normal\n\nSome prose about gardens, [[Alias 1]] and [[AND OR NOT]].\n")
    return made


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--vaults", default="empty,one,nolinks,complete,odd")
    parser.add_argument("--modes", default=MODES)
    parser.add_argument("--only", default="", help="the queries whose name holds it")
    parser.add_argument("--extra", default="", help="more options for every ask, e.g. '--as-of now'")
    parser.add_argument("--cpu", type=float, default=2.0, help="seconds of CPU a case may take")
    args = parser.parse_args()
    work = Path(tempfile.mkdtemp(prefix="brain-hostile-recall-"))
    os.environ.update({"BRAIN_HOME": str(work / "home"), "BRAIN_EMBED_MODEL": "fake:16", "BRAIN_RERANK_MODEL": "none"})
    os.environ.pop("BRAIN_VAULT", None)
    runner = CliRunner()
    shapes: dict[tuple, int] = {}
    cases = failed = 0
    slowest = (0.0, "")
    try:
        for name, vault in vaults(work).items():
            if name not in args.vaults.split(","):
                continue
            built = runner.invoke(cli, ["index", "-q", "--vault", str(vault)])
            assert built.exit_code == 0, built.output
            for mode in args.modes.split(","):
                for qname, query in QUERIES.items():
                    if args.only not in qname:
                        continue
                    for as_json in (False, True):
                        argv = ["ask", "--vault", str(vault), "--no-server", "-q", "--mode", mode, *args.extra.split()]
                        argv += ["--json"] if as_json else []
                        start = time.process_time()
                        result = runner.invoke(cli, [*argv, "--", query], prog_name="brain")
                        cpu = time.process_time() - start
                        cases += 1
                        case = f"{name} {mode} {qname}{' --json' if as_json else ''}"
                        slowest = max(slowest, (cpu, case))
                        problems = []
                        exc = result.exception
                        if exc is not None and not isinstance(exc, SystemExit):
                            where = traceback.extract_tb(exc.__traceback__)[-1]
                            problems.append(
                                f"raised {type(exc).__name__}: {str(exc)[:120]!r} at {where.filename}:{where.lineno}"
                            )
                        if "Traceback" in result.output:
                            problems.append("printed a traceback")
                        if cpu > args.cpu:
                            problems.append(f"{cpu:.1f} s of CPU")
                        if as_json and result.exit_code == 0:
                            try:
                                answer = json.loads(result.stdout)
                                rows = {tuple(sorted(row)) for row in answer["results"]}
                                shape = (tuple(sorted(answer)), tuple(sorted(rows)))
                                shapes[shape] = shapes.get(shape, 0) + 1
                            except (ValueError, KeyError, TypeError) as error:
                                problems.append(f"--json {error}: {result.stdout[:80]!r}")
                        said = [line for line in result.stderr.splitlines() if not line.startswith(WARNING)]
                        if result.exit_code != 0 and len(said) != 1:  # one error line (after any warning)
                            problems.append(f"{len(said)} lines: {result.stderr[:200]!r}")
                        if problems:
                            failed += 1
                            print(f"FAIL {case}: {'; '.join(problems)}", flush=True)
    finally:
        shutil.rmtree(work, ignore_errors=True)
    if len(shapes) > 1:
        failed += 1
        print(f"FAIL --json has {len(shapes)} shapes: " + "; ".join(f"{n} of {shape}" for shape, n in shapes.items()))
    print(f"{cases} cases, {failed} failed; slowest {slowest[0]:.2f} s of CPU ({slowest[1]})")


if __name__ == "__main__":
    main()
