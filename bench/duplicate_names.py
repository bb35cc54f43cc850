"""How a vault's links to a name several notes hold resolve (m037_duplicate_names_as_obsidian_opens_them):
each link whose note differs between the note Obsidian opens (``links.first_match``: inside the
linking note's folder, then the shortest path) and the note fewest folders away (``links.nearest``,
brain's rule before), and the links that resolve only by a frontmatter alias (Obsidian resolves
none). Every markdown file is parsed by this checkout (mtime 0).

    python bench/duplicate_names.py VAULT [VAULT ...]
"""

from __future__ import annotations

import argparse
import sys
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))

from brain import links
from brain.config import link_fences
from brain.notes import parse_note
from brain.vault import scan


class _Nearest(links.Resolver):
    """The resolver as it was: a name's notes weighed by folders apart, then depth, then path."""

    def _first_of(self, candidates: list[str], source: str) -> str:
        return links.nearest(candidates, source)


def survey(root: Path) -> None:
    files, _ = scan(root)
    notes = [parse_note(f.path, Path(f.abspath).read_bytes(), 0, link_fences()) for f in files]
    paths = [note.path for note in notes]
    aliases = {note.path: note.aliases for note in notes}
    now, before, no_alias = links.Resolver(paths, aliases), _Nearest(paths, aliases), links.Resolver(paths)
    original = links.first_match
    total = moved = by_alias = 0
    for note in notes:
        for link in note.links:
            if links.is_attachment(link.target):
                continue
            total += 1
            target = now.resolve(link, note.path)
            links.first_match = links.nearest  # the end-of-a-path step calls it directly
            try:
                old = before.resolve(link, note.path)
            finally:
                links.first_match = original
            if target != old:
                moved += 1
                print(f"  {note.path}: [[{link.target}]] → {target} (was {old})")
            if target is not None and no_alias.resolve(link, note.path) is None:
                by_alias += 1
    print(f"{root.name}: {total:,} links to notes; {moved} resolve elsewhere than before, {by_alias} only by an alias")


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("vaults", nargs="+", type=Path)
    for root in parser.parse_args().vaults:
        survey(root)


if __name__ == "__main__":
    main()
