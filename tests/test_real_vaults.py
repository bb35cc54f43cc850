"""Indexing two real public vaults from ../shared (skipped when absent), with a cheap embedder.

Each vault is indexed once per module into its own brain home; the tests read the result.
"""

from __future__ import annotations

import os
import posixpath
import unicodedata
from pathlib import Path

import pytest
from conftest import REAL_VAULTS
from index_helpers import CheapEmbedder, IndexView, assert_faiss_matches, index_into

from brain.links import first_match


def _markdown_outside_dot_folders(root: Path) -> set[str]:
    found = set()
    for dirpath, dirnames, filenames in os.walk(root):
        dirnames[:] = [d for d in dirnames if not d.startswith(".")]
        for name in filenames:
            if name.lower().endswith(".md") and not name.startswith("."):
                found.add(Path(dirpath, name).relative_to(root).as_posix())
    return found


def _indexed(tmp_path_factory, name: str):
    root = REAL_VAULTS / name
    if not root.is_dir():
        pytest.skip(f"../shared/bench/vaults/{name} is not here")
    report, directory = index_into(tmp_path_factory.mktemp(f"home-{name}"), root, CheapEmbedder())
    view = IndexView(directory)
    return root, report, view


@pytest.fixture(scope="module")
def srd(tmp_path_factory):
    root, report, view = _indexed(tmp_path_factory, "13th-age-srd")
    yield root, report, view
    view.close()


@pytest.fixture(scope="module")
def vok(tmp_path_factory):
    root, report, view = _indexed(tmp_path_factory, "vaultofknowledge")
    yield root, report, view
    view.close()


# ----- 13th-age-srd -------------------------------------------------------------------------


def test_srd_every_note_indexed(srd):
    root, report, view = srd
    expected = _markdown_outside_dot_folders(root)
    assert len(expected) == 1003
    assert view.paths() == expected
    assert report.skipped == 0 and report.warnings == []
    assert report.embedded == report.chunks == view.chunk_count()
    assert_faiss_matches(view.directory)


def test_srd_full_path_links_with_block_refs(srd):
    _, _, view = srd
    link = view.edge("Compendium/13A/Classes/Chaos-Mage.md", "Compendium/13A/Spells/Chaos-Ray")
    assert (link["anchor"], link["status"], link["target_path"]) == (
        "^spell",
        "resolved",
        "Compendium/13A/Spells/Chaos-Ray.md",
    )
    # Every full-path wikilink resolves, except one that climbs out of the vault.
    rows = view.conn.execute(
        "SELECT target, status FROM links WHERE kind != 'markdown' AND target LIKE '%/%'"
    ).fetchall()
    assert len(rows) > 750
    unresolved = sorted({r["target"] for r in rows if r["status"] != "resolved"})
    assert unresolved == ["../..//13thAgeShare/Map-of-Contents.md", "Compendium/13A/Monsters/Monster-Key-image-1.png"]


def test_srd_escaped_pipes_in_tables_resolve(srd):
    _, _, view = srd
    human = view.edge("Compendium/13A/Races/Races.md", "Compendium/13A/Races/Human")
    assert (human["display"], human["target_path"]) == ("Human", "Compendium/13A/Races/Human.md")
    assert len(view.targets("Compendium/13A/Races/Races.md")) >= 13


def test_srd_duplicated_names_resolve_to_the_note_obsidian_opens(srd):
    _, _, view = srd
    # [[Leveling-Up]] exists in Running-the-Game/ and in Monsters/Monster-Rules/.
    assert view.edge("Compendium/13A/Running-the-Game/Running-the-Game.md", "Leveling-Up")["target_path"] == (
        "Compendium/13A/Running-the-Game/Leveling-Up.md"
    )
    rules = "Compendium/13A/Combat-Rules/Combat-Rules.md"
    # Combat-Stats.md: Combat-Rules/Combat-Stats/ (one folder down) beats Character-Rules/.
    assert view.edge(rules, "Combat-Stats")["target_path"] == "Compendium/13A/Combat-Rules/Combat-Stats/Combat-Stats.md"
    # Weapons.md: Combat-Rules/Combat-Stats/ beats Magic-Items/Magic-Item-Descriptions/.
    assert view.edge(rules, "Weapons")["target_path"] == "Compendium/13A/Combat-Rules/Combat-Stats/Weapons.md"
    # And in general: every bare-name link to a duplicated name picked the one Obsidian opens.
    by_name: dict[str, list[str]] = {}
    for path in view.paths():
        by_name.setdefault(posixpath.basename(path)[:-3].casefold(), []).append(path)
    duplicated = {name: paths for name, paths in by_name.items() if len(paths) > 1}
    assert len(duplicated) == 9
    checked = 0
    for source in view.paths():
        for link in view.links(source):
            name = link["target"].casefold()
            if link["kind"] != "markdown" and "/" not in name and name in duplicated:
                assert link["target_path"] == first_match(duplicated[name], source), (source, link)
                checked += 1
    assert checked >= 9


def test_srd_dangling_links_are_really_broken(srd):
    root, report, view = srd
    dangling = view.dangling()
    # 16: two of them sit in ```statblock blocks, whose links count by default (BRAIN_LINK_FENCES),
    # and CONTRIBUTING.md's [www.13thAgeSrd.com](www.13thagesrd.com) has no scheme: a link to a
    # file of that name, to Obsidian as to brain, which is not there.
    assert report.links["dangling"] == len(dangling) == 16
    assert ("CONTRIBUTING.md", "www.13thagesrd.com") in dangling
    for source, target in dangling:
        # Neither relative to the note nor from the vault root does the file exist.
        relative = posixpath.normpath(posixpath.join(posixpath.dirname(source), target))
        for candidate in (relative, target, target + ".md", relative + ".md"):
            assert not (root / candidate).is_file(), (source, target)
    assert ("Compendium/13A/13th-Age-Index.md", "Loot: Treasure Rewards") in dangling
    # A markdown link by a shortened path resolves by the end of the note's path, as a
    # wikilink would ([x](Monsters/Monster-Rules/Mooks.md) from Classes/Barbarian.md).
    barbarian = {link["target"]: link["target_path"] for link in view.links("Compendium/13A/Classes/Barbarian.md")}
    assert barbarian["Monsters/Monster-Rules/Mooks.md"] == "Compendium/13A/Monsters/Monster-Rules/Mooks.md"
    # the Monster-Key png embed and 14 markdown images (![x](Compendium/13A/Icons/Crusader-image-1.jpg)):
    # not notes, not dangling
    assert report.links["attachment"] == 15


def test_srd_aliases_and_tags_from_frontmatter(srd):
    _, _, view = srd
    with_aliases = view.conn.execute("SELECT count(DISTINCT note_id) FROM aliases").fetchone()[0]
    with_tags = view.conn.execute("SELECT count(DISTINCT note_id) FROM tags").fetchone()[0]
    assert with_aliases > 900 and with_tags > 900
    bestiary = view.links("Compendium/13A/Bestiary/Bestiary.md")
    assert len(bestiary) >= 685


# ----- vaultofknowledge ---------------------------------------------------------------------


def test_vok_every_note_outside_dot_folders_indexed(vok):
    root, report, view = vok
    expected = _markdown_outside_dot_folders(root)
    assert len(expected) == 2721
    assert view.paths() == expected
    assert report.embedded == report.chunks == view.chunk_count()
    assert_faiss_matches(view.directory)


def test_vok_plugin_docs_and_trash_skipped(vok):
    root, _, view = vok
    skipped = view.skipped()
    assert set(skipped.values()) == {"dot-folder"}
    assert {p for p in skipped if p.startswith(".obsidian/plugins/")} == {
        ".obsidian/plugins/obsidian-advanced-slides/plugin/chalkboard/README.md",
        ".obsidian/plugins/obsidian-advanced-slides/plugin/chart/README.md",
        ".obsidian/plugins/obsidian-advanced-slides/plugin/customcontrols/README.md",
        ".obsidian/plugins/obsidian-advanced-slides/plugin/menu/CONTRIBUTING.md",
        ".obsidian/plugins/obsidian-advanced-slides/plugin/menu/README.md",
    }
    assert ".trash/Untitled 1.md" in skipped
    every_md = sum(1 for _ in root.rglob("*.md"))
    assert len(view.paths()) + len(skipped) == every_md


def test_vok_case_mismatched_links_resolve(vok):
    _, _, view = vok
    # "Block Special Files.md" writes [[block devices]]; the file is "Block Devices.md".
    assert view.edge("Block Special Files.md", "block devices")["target_path"] == "Block Devices.md"
    assert view.edge("Dialectical Materialism.md", "dialectical idealism")["target_path"] == "Dialectical Idealism.md"
    assert view.edge("Metaphysics of different Philosophers.md", "idealism")["target_path"] == "Idealism.md"
    rows = view.conn.execute(
        "SELECT l.target, t.path FROM links l JOIN notes t ON t.id = l.target_id "
        "WHERE l.kind = 'wikilink' AND instr(l.target, '/') = 0"
    ).fetchall()
    case_only = [
        r
        for r in rows
        if r[0] != posixpath.basename(r[1])[:-3] and r[0].casefold() == posixpath.basename(r[1])[:-3].casefold()
    ]
    assert len(case_only) >= 9  # links whose case differs from the file name, all resolved


def test_vok_dangling_count_matches_the_readme(vok):
    """The README counts 176 links to notes that do not exist.

    We count 176 dangling links (159 distinct targets), all wikilinks. The one embed of an
    .avif image is an attachment, not a dangling note link. Each dangling target really has
    no note: no file name and no alias matches it, whatever the case or Unicode form.
    """
    _, report, view = vok
    dangling = view.dangling()
    assert report.links["dangling"] == len(dangling)
    assert 160 <= len(dangling) <= 190
    assert len(dangling) == 176
    kinds = view.conn.execute("SELECT DISTINCT kind FROM links WHERE status = 'dangling'").fetchall()
    assert [k[0] for k in kinds] == ["wikilink"]
    names = {unicodedata.normalize("NFC", posixpath.basename(p)[:-3]).casefold() for p in view.paths()}
    aliases = {unicodedata.normalize("NFC", r[0]).casefold() for r in view.conn.execute("SELECT alias FROM aliases")}
    for _, target in dangling:
        bare = unicodedata.normalize("NFC", posixpath.basename(target)).casefold()
        assert bare.removesuffix(".md") not in names and bare not in aliases, target


def test_vok_nul_padded_note_is_indexed_with_a_warning(vok):
    _, report, view = vok
    warnings = [w for w in report.warnings if w["path"] == "Magic Numbers (in computer science).md"]
    assert [w["message"] for w in warnings] == ["3836 NUL bytes removed"]
    assert view.chunks("Magic Numbers (in computer science).md")


def test_vok_malayalam_and_tamil_text_is_indexed(vok):
    _, _, view = vok

    def scripts(path: str) -> set[str]:
        text = "".join(c["text"] for c in view.chunks(path))
        found = set()
        if any("\u0d00" <= ch <= "\u0d7f" for ch in text):
            found.add("malayalam")
        if any("\u0b80" <= ch <= "\u0bff" for ch in text):
            found.add("tamil")
        return found

    assert scripts("Studying the Malayalam Script.md") == {"malayalam", "tamil"}
    assert "tamil" in scripts("06. Collected Knowledge/Thiru Kural.md")
    assert "malayalam" in scripts("06. Collected Knowledge/Malayalam Words.md")
