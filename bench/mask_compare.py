"""The ledger's masker of another checkout against this one's, over the same texts: every text
whose masked form differs is printed (both forms, around the first difference), then counts.

Texts: each line of the Claude Code transcripts in ``--transcripts`` as written (JSON, files held
as strings with ``\\n`` escapes) and each string inside it, decoded; each file of the vaults under
``--vaults`` (Markdown and the rest, read as UTF-8); with ``--also DIR``, the text files under DIR
(code, docs, configs: ``SUFFIXES``, under 1 MB each). Run it before a change to the masking rules
lands, to judge each new mask (a secret?) and each mask gone (was it one?):

    git archive main | tar -x -C /tmp/main-tree
    python bench/mask_compare.py --old /tmp/main-tree
"""

from __future__ import annotations

import argparse
import importlib.util
import json
import sys
import time
from collections.abc import Callable, Iterator
from pathlib import Path
from types import ModuleType
from typing import Any

HERE = Path(__file__).resolve().parents[1]
SHARED = HERE.parent / "shared"


def load_redact(tree: Path, name: str) -> Callable[[str], str]:
    """``redact`` of the checkout at ``tree``: redact.py imports the standard library only."""
    spec = importlib.util.spec_from_file_location(name, tree / "brain" / "ledger" / "redact.py")
    assert spec is not None and spec.loader is not None
    module: ModuleType = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module.redact  # type: ignore[no-any-return]


def strings(value: Any) -> Iterator[str]:
    if isinstance(value, str):
        yield value
    elif isinstance(value, list):
        for item in value:
            yield from strings(item)
    elif isinstance(value, dict):
        for key, item in value.items():
            yield key
            yield from strings(item)


SUFFIXES = {".py", ".md", ".rst", ".txt", ".yaml", ".yml", ".toml", ".cfg", ".ini", ".json", ".sh", ".env"}


def texts(transcripts: Path, vaults: Path, also: list[Path]) -> Iterator[tuple[str, str]]:
    """(where, text) for every text the comparison masks."""
    for path in sorted(transcripts.glob("*.jsonl")):
        for number, line in enumerate(path.read_text(encoding="utf-8").splitlines(), 1):
            yield f"{path.name}:{number}", line
            try:
                record = json.loads(line)
            except ValueError:
                continue
            for i, text in enumerate(strings(record)):
                if len(text) > 2:
                    yield f"{path.name}:{number}#{i}", text
    for path in sorted(p for p in vaults.rglob("*") if p.is_file()):
        try:
            yield str(path.relative_to(vaults)), path.read_text(encoding="utf-8")
        except (UnicodeDecodeError, OSError):
            continue
    for folder in also:
        for path in sorted(folder.rglob("*")):
            try:
                if path.suffix not in SUFFIXES or not path.is_file() or path.stat().st_size > 1_000_000:
                    continue
                yield str(path), path.read_text(encoding="utf-8")
            except (UnicodeDecodeError, OSError):
                continue


def around(text: str, at: int, width: int = 90) -> str:
    return repr(text[max(0, at - width // 2) : at + width // 2])


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--old", type=Path, required=True, help="the other checkout (its brain/ledger/redact.py)")
    parser.add_argument("--transcripts", type=Path, default=SHARED / "fixtures" / "claude-code")
    parser.add_argument("--vaults", type=Path, default=SHARED / "bench" / "vaults")
    parser.add_argument("--also", type=Path, action="append", default=[], help="a folder of more text files")
    args = parser.parse_args()
    old, new = load_redact(args.old, "redact_old"), load_redact(HERE, "redact_new")
    count = changed = 0
    seconds = {"old": 0.0, "new": 0.0}
    for where, text in texts(args.transcripts, args.vaults, args.also):
        count += 1
        started = time.perf_counter()
        before = old(text)
        seconds["old"] += time.perf_counter() - started
        started = time.perf_counter()
        after = new(text)
        seconds["new"] += time.perf_counter() - started
        if before == after:
            continue
        changed += 1
        at = next(
            (i for i, (a, b) in enumerate(zip(before, after, strict=False)) if a != b), min(len(before), len(after))
        )
        print(f"{where}\n  old: {around(before, at)}\n  new: {around(after, at)}")
    print(
        f"{count:,} texts, {changed:,} masked otherwise; masking took {seconds['old']:.2f} s (--old) "
        f"and {seconds['new']:.2f} s (this checkout)"
    )
    return 0


if __name__ == "__main__":
    sys.exit(main())
