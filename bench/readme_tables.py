"""The README's quality tables ("Does the graph help?") from a bench/quality_ablation.py JSON.

    python bench/quality_ablation.py --label all                          # every set, every row
    python bench/readme_tables.py bench/out/quality_ablation-all.json     # the per-type tables, printed
    python bench/readme_tables.py bench/out/quality_ablation-all.json --write README.md

With ``--write`` both kinds of table in README.md are rewritten in place from the run: each
set's per-type table (recall@10 / nDCG@10 of vector, hybrid, ppr, *before* and the default),
and the five figures of each row of "What each stage is worth" that names an ablation row
(``STAGE_ROWS``: a row's label in the README → the ablation row and the row it is measured
against). The words of the README stay as they are; rows it does not know are listed, untouched.
"""

from __future__ import annotations

import argparse
import json
import sys
from pathlib import Path

SETS = ["mini", "13th-age", "vok", "13th-age-blind", "vok-blind"]
TITLES = {
    "mini": "**Mini-benchmark** (synthetic), {n} queries",
    "13th-age": "**13th Age SRD**, {n} queries",
    "vok": "**vaultofknowledge**, {n} queries",
    "13th-age-blind": "**13th Age SRD, blind**, {n} queries",
    "vok-blind": "**vaultofknowledge, blind**, {n} queries",
}
COLUMNS = [("vector", "vector"), ("hybrid", "hybrid"), ("ppr", "ppr"), ("old", "before"), ("new", "**hybrid+ppr**")]
# A stage-table label's start → (ablation row, the row its figures are measured against).
STAGE_ROWS = [
    ("*before* → today's default", "new", "old"),
    ("names lane (0.3), alone", "old +names 0.3", "old"),
    ("dates lane (1.0), alone", "old +dates 1.0", "old"),
    ("anchor_lex lane (0.2), alone", "old +anchor_lex 0.2", "old"),
    ("anchor_dense lane (0.2), alone", "old +anchor_dense 0.2", "old"),
    ("folders lane (0.2), alone", "old +folders 0.2", "old"),
    ("default without the folders lane", "new -folders", "new"),
    ("default with the folders lane at 0.1", "new folders 0.1", "new"),
    ("default with the folders lane at 0.3", "new folders 0.3", "new"),
    (
        "default with the bridge lane ranking every note its first notes link to",
        "new bridge: every note linked (not the passage's)",
        "new",
    ),
    ("the bridge lane as at stop 42", "new bridge: every note linked and no bonus (stop 42's)", "new"),
    ("default without the bridge lane's bonus", "new -bridge bonus", "new"),
    (
        "default without the bridge lane's first note put first where anchor_lex agrees",
        "new -bridge agreed first",
        "new",
    ),
    ("default without a description's own note first", "new -described first", "new"),
    ("default without the dense lane's k 60 for a query that asks for a note", "new -note dense k 60", "new"),
    ("default with that k at 45", "new note dense k 45", "new"),
    ("default with that k at 75", "new note dense k 75", "new"),
    ("default with the bridge lane's bonus at 1×", "new bridge bonus x1", "new"),
    ("default with the bridge lane's bonus at 2×", "new bridge bonus x2", "new"),
    ("default with the bridge lane's bonus at 5×", "new bridge bonus x5", "new"),
    ("default with the bridge lane's first note sure from a lead of 0.06", "new bridge margin 0.06", "new"),
    ("default with the bridge lane's first note sure from a lead of 0.12", "new bridge margin 0.12", "new"),
    (
        "default with the bridge lane's bonus on its first note always",
        "new bridge margin 0 (its first note always)",
        "new",
    ),
    ("bridge lane (0.2", "old +bridge 0.2", "old"),
    ("default without the bridge lane", "new -bridge", "new"),
    ("default with the bridge lane at 0.1", "new bridge 0.1", "new"),
    ("default with the bridge lane at 0.3", "new bridge 0.3", "new"),
    ("default with the bridge lane from 10 words", "new bridge from 10 words", "new"),
    ("default with the bridge lane from 15 words", "new bridge from 15 words", "new"),
    ("default with the bridge lane on every query", "new bridge on every query", "new"),
    ("both anchor lanes at 0.3, alone", "old +anchors 0.3 (both)", "old"),
    ("top-rank bonus (", "old +top_bonus", "old"),
    ("the dense lane's RRF k 120 instead of 60, alone", "old +dense k 120", "old"),
    ("default as at stop 38", "stop 38's default (dense k 60; two-rank bonus; anchor bonus x2)", "new"),
    ("default with the dense lane's k at 60", "new -dense k 120", "new"),
    ("default with the dense lane's k at 90", "new dense k 90", "new"),
    ("default with the dense lane's k at 150", "new dense k 150", "new"),
    ("default with the dense lane's weight 1.2", "new dense k 120 weight 1.2", "new"),
    ("default with k 120 for every lane", "new k 120 for every lane", "new"),
    ("default with the dense lane's weight 0.6 and k 60", "new dense weight 0.6 (k 60)", "new"),
    ("default with the bonus on two ranks", "new two-rank bonus", "new"),
    ("PageRank weight 0.5 instead of 1, alone", "old +ppr 0.5", "old"),
    ("PageRank's scores over √degree", "old +ppr_degree_norm 0.5", "old"),
    ("long-note discount (", "old +long_note_discount 0.02", "old"),
    ("default without the names lane", "new -names", "new"),
    ("default without putting a note", "new -name_first", "new"),
    ("default without respelling", "new -respell", "new"),
    ("default without the dates lane", "new -dates", "new"),
    ("default with the dates lane at 0.3", "new dates 0.3", "new"),
    ("default with the dates lane at 0.5", "new dates 0.5", "new"),
    ("default without anchor_lex", "new -anchor_lex", "new"),
    ("default without anchor_dense", "new -anchor_dense", "new"),
    ("default without both anchor lanes", "new -anchors", "new"),
    ("default without the bonus", "new -top_bonus", "new"),
    ("default with the anchor lanes' bonus doubled", "new anchor bonus x2 (stop 27 to 38)", "new"),
    ("default with the anchor lanes' bonus at 1.5×", "new anchor bonus x1.5", "new"),
    ("default with the anchor lanes' bonus at 2.5×", "new anchor bonus x2.5", "new"),
    ("default with the anchor lanes' bonus at 3×", "new anchor bonus x3", "new"),
    ("default with only anchor_dense's bonus doubled", "new anchor_dense bonus x2 alone", "new"),
    ("default with only anchor_lex's bonus doubled", "new anchor_lex bonus x2 alone", "new"),
    ("default with PageRank at 1.0", "new ppr 1.0", "new"),
    ("default without √degree", "new -ppr_degree_norm", "new"),
    ("default with PageRank's scores over degree^0.3", "new ppr_degree_norm 0.3", "new"),
    ("default with degree^0.7", "new ppr_degree_norm 0.7", "new"),
    ("default with degree^1", "new ppr_degree_norm 1.0", "new"),
    ("default with anchors at 0.3", "new anchors 0.3", "new"),
    ("default with anchors at 0.25", "new anchors 0.25", "new"),
    ("default without the long-note discount", "new -long_note_discount", "new"),
    ("default with the discount at 0.01", "new long_note_discount 0.01", "new"),
    ("default with the discount at 0.05", "new long_note_discount 0.05", "new"),
    ("default with the discount past 8 chunks", "new long_note_chunks 8", "new"),
    ("default with the discount past 32 chunks", "new long_note_chunks 32", "new"),
    ("default with the discount on every note", "new long_note_chunks 1 (every note)", "new"),
    ("a query-adaptive max-of-N correction in the dense lane", "new max_of_n 0.5", "new"),
    ("the max-of-N correction scaled by the share", "new max_of_n 0.5 reached", "new"),
    ("score fusion (min-max scores) instead of RRF, alone", "old +score fusion", "old"),
    ("score fusion, in the default", "new +score fusion", "new"),
    ("PageRank restarts weighted by score, alone", "old +ppr_seed_scores", "old"),
    ("default with PageRank restarting from index notes too", "new -ppr_hub_seeds", "new"),
    ("default with no restarts from notes of over 20 links", "new ppr_hub_seeds 20", "new"),
    ("default with no restarts from notes of over 50 links", "new ppr_hub_seeds 50", "new"),
    ("no PageRank restarts from hubs (> 30 links), alone", "old +ppr_hub_seeds 30", "old"),
    ("note score from several chunks", "old +chunk_decay 0.3", "old"),
    ("BM25 column weights 1/1/1", "old +bm25 weights 1/1/1", "old"),
    ("default with the lanes 100 notes deep", "new depth 100", "new"),
    ("default with the lanes 40 notes deep", "new depth 40", "new"),
    ("default with PageRank following a link with probability 0.5", "new ppr_alpha 0.5", "new"),
    ("default with `ppr_alpha` 0.7", "new ppr_alpha 0.7", "new"),
    ("default with `ppr_alpha` 0.9", "new ppr_alpha 0.9", "new"),
    ("default with `ppr_alpha` 0.95", "new ppr_alpha 0.95", "new"),
    ("default with PageRank restarting from the top 10 notes", "new seeds 10", "new"),
    ("default with PageRank restarting from the top 25 notes", "new seeds 25", "new"),
    ("default with BM25's lane at 0.5", "new lexical 0.5", "new"),
    ("default with BM25's lane at 0.2", "new lexical 0.2", "new"),
    ("default with the top-rank bonus doubled", "new top bonus doubled", "new"),
    ("default with the names lane at 0.5", "new names 0.5", "new"),
    ("default with the names lane at 0.2", "new names 0.2", "new"),
    ("default with PageRank at 0.4", "new ppr 0.4", "new"),
    ("default with PageRank at 0.6", "new ppr 0.6", "new"),
]
STAGE_HEADER = "| change | mini |"


def _cell(figures: dict, digits: int) -> str:
    return f"{figures['recall@10']:.2f} / {figures['ndcg@10']:.{digits}f}"


def per_type_table(data: dict) -> str:
    """One set's table: a title line, a blank line, then the table (the README's shape)."""
    rows = data["rows"]
    lines = [TITLES[data["set"]].format(n=data["queries"]), ""]
    lines.append("| type | n | " + " | ".join(title for _, title in COLUMNS) + " |")
    lines.append("|---|--:|" + "---|" * len(COLUMNS))
    cells = [_cell(rows[row]["all"], 3) for row, _ in COLUMNS]
    cells[-1] = f"**{cells[-1]}**"
    lines.append(f"| **all** | {data['queries']} | " + " | ".join(cells) + " |")
    for kind in data["types"]:
        cells = [_cell(rows[row]["by_type"][kind], 2) for row, _ in COLUMNS]
        lines.append(f"| {kind} | {data['counts'][kind]} | " + " | ".join(cells) + " |")
    return "\n".join(lines)


def rewrite_per_type(text: str, runs: list[dict]) -> str:
    """``text`` with each set's table (from its title line to the table's last row) rewritten."""
    for data in runs:
        new = per_type_table(data)
        title = new.split("\n", 1)[0]
        at = text.find("\n" + title.split(",")[0] + ",")  # a line starting with the title, whatever its count
        if at < 0:
            raise SystemExit(f"README has no table titled {title!r}")
        start = at + 1
        end = text.find("\n\n", text.index("| **all** |", start))
        text = text[:start] + new + (text[end:] if end >= 0 else "")
    return text


def _delta(value: float) -> str:
    shown = f"{value:+.3f}"
    return "-0.000" if shown == "-0.000" else shown


def rewrite_stage_rows(text: str, runs: list[dict]) -> tuple[str, list[str]]:
    """``text`` with the five figures of each known row of the stage table rewritten; the labels
    of the rows left as they were."""
    ndcg = {data["set"]: {row: v["all"]["ndcg@10"] for row, v in data["rows"].items()} for data in runs}
    lines = text.split("\n")
    start = next((i for i, line in enumerate(lines) if line.startswith(STAGE_HEADER)), None)
    if start is None:
        raise SystemExit("README has no table of what each stage is worth")
    left: list[str] = []
    for i in range(start + 2, len(lines)):
        if not lines[i].startswith("| "):
            break
        cells = lines[i].split(" | ")
        label = cells[0][2:]
        row, ref = next(((row, ref) for prefix, row, ref in STAGE_ROWS if label.startswith(prefix)), ("", ""))
        if any(row not in ndcg[s] or ref not in ndcg[s] for s in SETS):  # not a row this run has
            left.append(label)
            continue
        cells[1:6] = [_delta(ndcg[s][row] - ndcg[s][ref]) for s in SETS]
        lines[i] = " | ".join(cells)
    return "\n".join(lines), left


def main(argv: list[str] | None = None) -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("run", type=Path, help="a bench/quality_ablation.py JSON of the five sets")
    parser.add_argument("--write", type=Path, help="rewrite these tables in this README in place")
    args = parser.parse_args(argv)
    runs = json.loads(args.run.read_text(encoding="utf-8"))
    missing = [s for s in SETS if s not in {data["set"] for data in runs}]
    if missing:
        raise SystemExit(f"{args.run} lacks the sets {', '.join(missing)}: run every set")
    runs = sorted(runs, key=lambda data: SETS.index(data["set"]))
    if args.write is None:
        print("\n\n".join(per_type_table(data) for data in runs))
        return
    text = rewrite_per_type(args.write.read_text(encoding="utf-8"), runs)
    text, left = rewrite_stage_rows(text, runs)
    args.write.write_text(text, encoding="utf-8")
    print(f"rewrote the tables of {args.write}", file=sys.stderr)
    for label in left:
        print(f"left as it was (no ablation row in this run): {label[:90]}", file=sys.stderr)


if __name__ == "__main__":
    main()
