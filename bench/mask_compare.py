"""The ledger's masker of another checkout against this one's, over the same texts: every text
whose masked form differs is printed (both forms, around the first difference), then counts.

Texts: each line of the Claude Code transcripts in ``--transcripts`` as written (JSON, files held
as strings with ``\\n`` escapes) and each string inside it, decoded; each file of the vaults under
``--vaults`` (Markdown and the rest, read as UTF-8); with ``--also DIR``, the text files under DIR
(code, docs, configs: ``SUFFIXES``, under 1 MB each). Run it before a change to the masking rules
lands, to judge each new mask (a secret?) and each mask gone (was it one?):

    git archive main | tar -x -C /tmp/main-tree
    python bench/mask_compare.py --old /tmp/main-tree

The transcripts and vaults are looked for in ``--shared`` (by default the ``shared`` folder beside
this checkout's: ``../shared``). Where either holds nothing to read (a copy of this checkout under
/tmp has no ``../shared``) it stops with exit 2 and says where it looked, rather than report "0 masked
otherwise" over texts it never read; ``--no-shared`` compares the ``--also`` folders alone, and says so.
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


def masker(tree: Path) -> Path | None:
    """The masker's file in the checkout at ``tree``: brain/ledger/redact.py, or the package's
    brain/ledger/redact/__init__.py (split by job since stop 69); None where it has neither."""
    ledger = tree / "brain" / "ledger"
    for path in (ledger / "redact.py", ledger / "redact" / "__init__.py"):
        if path.is_file():
            return path
    return None


def load_masker(tree: Path, name: str) -> ModuleType:
    """The masker of the checkout at ``tree``, loaded as ``name``: it imports the standard library only
    (a package's modules import each other, relative to ``name``, so it is in sys.modules first)."""
    path = masker(tree)
    assert path is not None, tree
    package = [str(path.parent)] if path.name == "__init__.py" else None
    spec = importlib.util.spec_from_file_location(name, path, submodule_search_locations=package)
    assert spec is not None and spec.loader is not None
    module: ModuleType = importlib.util.module_from_spec(spec)
    sys.modules[name] = module
    spec.loader.exec_module(module)
    return module


def load_redact(tree: Path, name: str) -> Callable[[str], str]:
    """``redact`` of the checkout at ``tree`` (load_masker)."""
    return load_masker(tree, name).redact  # type: ignore[no-any-return]


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


def texts(transcripts: Path | None, vaults: Path | None, also: list[Path]) -> Iterator[tuple[str, str, str]]:
    """(source, where, text) for every text the comparison masks; None reads no transcripts, no vaults."""
    for path in sorted(transcripts.glob("*.jsonl")) if transcripts else []:
        for number, line in enumerate(path.read_text(encoding="utf-8").splitlines(), 1):
            yield "transcripts", f"{path.name}:{number}", line
            try:
                record = json.loads(line)
            except ValueError:
                continue
            for i, text in enumerate(strings(record)):
                if len(text) > 2:
                    yield "transcripts", f"{path.name}:{number}#{i}", text
    for path in sorted(p for p in vaults.rglob("*") if p.is_file()) if vaults else []:
        try:
            yield "vaults", str(path.relative_to(vaults)), path.read_text(encoding="utf-8")
        except (UnicodeDecodeError, OSError):
            continue
    for folder in also:
        for path in sorted(folder.rglob("*")):
            try:
                if path.suffix not in SUFFIXES or not path.is_file() or path.stat().st_size > 1_000_000:
                    continue
                yield "--also", str(path), path.read_text(encoding="utf-8")
            except (UnicodeDecodeError, OSError):
                continue


def missing(args: argparse.Namespace) -> str | None:
    """Why the comparison would read fewer texts than it was asked to, or None."""
    for folder in args.also:
        if not folder.is_dir():
            return f"--also {folder}: no such folder"
    if args.no_shared:
        return None if args.also else "--no-shared and no --also: there is nothing to compare"
    if not any(args.transcripts.glob("*.jsonl")):
        return f"no transcripts (*.jsonl) in {args.transcripts}"
    if not args.vaults.is_dir() or not any(p.is_file() for p in args.vaults.rglob("*")):
        return f"no vault files in {args.vaults}"
    return None


def around(text: str, at: int, width: int = 90) -> str:
    return repr(text[max(0, at - width // 2) : at + width // 2])


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--old", type=Path, required=True, help="the other checkout (its brain/ledger/redact.py)")
    parser.add_argument(
        "--shared", type=Path, default=SHARED, help=f"the folder of fixtures/ and bench/ (default: {SHARED})"
    )
    parser.add_argument("--transcripts", type=Path, help="default: SHARED/fixtures/claude-code")
    parser.add_argument("--vaults", type=Path, help="default: SHARED/bench/vaults")
    parser.add_argument("--also", type=Path, action="append", default=[], help="a folder of more text files")
    parser.add_argument("--no-shared", action="store_true", help="compare the --also folders alone")
    args = parser.parse_args()
    args.transcripts = args.transcripts or args.shared / "fixtures" / "claude-code"
    args.vaults = args.vaults or args.shared / "bench" / "vaults"
    if masker(args.old) is None:
        parser.exit(2, f"mask_compare.py: --old {args.old}: no brain/ledger/redact.py nor redact/ there\n")
    if (why := missing(args)) is not None:
        parser.exit(2, f"mask_compare.py: {why}; nothing compared (pass --shared DIR, or --no-shared with --also)\n")
    if args.no_shared:
        print(f"--no-shared: only {', '.join(map(str, args.also))} compared, no transcripts nor vaults")
        args.transcripts = args.vaults = None
    old, new = load_redact(args.old, "redact_old"), load_redact(HERE, "redact_new")
    count = changed = 0
    seconds = {"old": 0.0, "new": 0.0}
    read = {"transcripts": 0, "vaults": 0, "--also": 0}
    for source, where, text in texts(args.transcripts, args.vaults, args.also):
        read[source] += 1
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
        f"{count:,} texts ({', '.join(f'{n:,} of {k}' for k, n in read.items())}), {changed:,} masked otherwise; "
        f"masking took {seconds['old']:.2f} s (--old) and {seconds['new']:.2f} s (this checkout)"
    )
    return 0


if __name__ == "__main__":
    sys.exit(main())
