"""`brain eval`: score recall modes on a labelled query file."""

from __future__ import annotations

import sys
from pathlib import Path
from typing import TYPE_CHECKING, Any

import click

from ..cli_options import recall_settings, recall_settings_options, vault_option
from ..cli_support import emit_json, library_errors, setup_logging, warn
from ..recall.types import DEFAULT_MODE

if TYPE_CHECKING:
    from ..recall.types import RecallSettings
    from .queries import EvalQuery

# brain.cli imports this module at start-up: nothing heavy is imported at module level here.


@click.command("eval")
@click.argument("queries", type=click.Path(dir_okay=False, path_type=str))
@vault_option
@click.option(
    "--modes",
    # dense alone against `brain ask`'s default: vector,graph,gated were three equal columns
    # without a reranker (one hop changes no order), and brain ask's own mode was not among them
    default=f"vector,{DEFAULT_MODE}",
    show_default=True,
    help="Comma-separated recall modes, as `brain ask --mode` takes them (e.g. vector,graph+rerank).",
)
@click.option(
    "-k",
    "k",
    type=click.IntRange(10, 200),
    default=10,
    show_default=True,
    help="Notes each mode returns per query; MRR looks this deep (recall@5/@10 and nDCG@10 are fixed).",
)
@click.option(
    "--json", "as_json", is_flag=True, help="Print one JSON object: queries, notes, k, model, reranker, modes."
)
@click.option("--markdown", is_flag=True, help="Print the tables as markdown (for a README).")
@click.option(
    "--explain",
    "explain_ids",
    metavar="ID",
    multiple=True,
    help="Explain these queries instead of scoring them: each lane's rank and score for every labelled note "
    "and for the fused top 10 (modes: --modes if given, else the default mode). Repeatable.",
)
@click.option(
    "--ab-log",
    "ab_source",
    metavar="SOURCE",
    help="Also write each query's `brain ask --ab` row (hybrid vs hybrid+ppr, +rerank when a reranker is "
    "configured) to ab_recall with this source label.",
)
@recall_settings_options
@library_errors
def eval_command(
    queries: str,
    vault: str | None,
    modes: str,
    k: int,
    as_json: bool,
    markdown: bool,
    explain_ids: tuple[str, ...],
    ab_source: str | None,
    depth: int | None,
    seeds: int,
    max_new: int,
    pool: int | None,
) -> None:
    """Score recall modes on the labelled queries in QUERIES (JSON Lines).

    Each line: {"id", "query", "type", "relevant": [vault-relative paths], "partial": [...]};
    type is one of entity, theme, bridge, compare, temporal, navigational, paraphrase. The
    index is built or updated first, once; then every mode answers every query on its own,
    and recall@5, recall@10, nDCG@10, MRR and mean latency are reported overall and per type.
    Warnings (e.g. a +rerank mode with no reranker) go to stderr.

    \b
    Examples:
      brain eval bench/minivault/queries.jsonl --vault bench/minivault/vault
      brain eval q.jsonl --vault ~/notes --modes vector,graph,gated
      brain eval q.jsonl --vault ~/notes --modes vector,gated+rerank --json
      brain eval q.jsonl --vault ~/notes --explain q017
    """
    from ..errors import ConfigError
    from ..vault import resolve_vault
    from .queries import load_queries
    from .runner import canonical_modes, format_table, run_eval

    setup_logging()
    if not queries.strip():  # Path("") is ".", the working folder: "not a regular file (a device, FIFO or socket)"
        raise click.BadParameter(f"{queries!r} names no file: give the query file (JSON Lines)", param_hint="QUERIES")
    if ab_source is not None and not ab_source.strip():  # an unset shell variable: not "log nothing"
        raise click.BadParameter("--ab-log needs a source label, e.g. --ab-log minibench", param_hint="--ab-log")
    if explain_ids:  # --explain reads queries, it neither scores nor logs them: say so, not drop them
        for given, option in ((ab_source, "--ab-log"), (markdown, "--markdown")):
            if given:
                raise click.UsageError(f"{option} does not go with --explain (it scores no table and logs no row)")
    if as_json and markdown:  # the markdown was dropped without a word: JSON came out
        raise click.UsageError("--markdown does not go with --json (one prints tables, the other one object)")
    root = resolve_vault(vault)
    try:  # a typo fails before any indexing: a usage error (2), as a bad -k is
        mode_list = canonical_modes(modes.split(","))
    except ConfigError as exc:
        raise click.BadParameter(str(exc), param_hint="--modes") from None
    loaded = load_queries(queries, root)
    settings = recall_settings(k, depth, seeds, max_new, pool)
    if explain_ids:
        explicit = click.get_current_context().get_parameter_source("modes") != click.core.ParameterSource.DEFAULT
        _explain(loaded, root, explain_ids, mode_list if explicit else None, settings, as_json)
        return
    bar = _bar(len(loaded) * len(mode_list))
    try:
        report = run_eval(
            loaded, root, mode_list, settings, progress=True, on_step=bar.update if bar else None, ab_source=ab_source
        )
    finally:
        if bar:
            bar.close()
    for message in report.warnings:  # they name notes: a file name's escape sequence is not the terminal's
        warn(message)
    if ab_source and not report.ab_error:
        click.echo(f"logged {report.ab_rows} rows to ab_recall (source {ab_source!r})", err=True)
    if as_json:
        emit_json(report.as_json())
    else:
        click.echo(format_table(report, markdown=markdown))
    if report.ab_error:  # after the figures, which stand: the log is what failed
        from ..db import BrainDatabaseError

        raise BrainDatabaseError(
            f"only {report.ab_rows} of {report.queries} rows were logged to ab_recall (source {ab_source!r}): "
            f"{report.ab_error}"
        )


def _explain(
    loaded: list[EvalQuery],
    root: Path,
    ids: tuple[str, ...],
    modes: list[str] | None,
    settings: RecallSettings,
    as_json: bool,
) -> None:
    from ..errors import ConfigError, quoted
    from ..recall.opening import open_recaller
    from ..recall.types import DEFAULT_MODE
    from .explain import explain, format_explanation

    by_id = {q.id: q for q in loaded}
    ids = tuple(i.strip() for i in ids)  # an id is its text without the spaces around it, as in the file
    unknown = [i for i in ids if i not in by_id]
    if unknown:
        raise ConfigError(f"no query with id {', '.join(map(quoted, unknown))} in the query file")
    recaller = open_recaller(root, build=True, progress=True)
    try:
        out = [explain(recaller, by_id[i], mode, settings) for i in ids for mode in (modes or [DEFAULT_MODE])]
    finally:
        recaller.close()
    if as_json:
        emit_json([e.as_dict() for e in out])
    else:
        click.echo("\n\n\n".join(format_explanation(e) for e in out))  # each field cleaned as it is formatted


def _bar(total: int) -> Any:  # a tqdm bar, or None
    """A tqdm bar on stderr, only when stderr is a terminal."""
    if not sys.stderr.isatty():
        return None
    from tqdm import tqdm

    return tqdm(total=total, desc="eval", unit="query", file=sys.stderr, leave=False)
