"""The `brain` command line: a thin click layer over the library.

Library errors (``BrainError``) become ``click.ClickException`` so users see one clear
line, never a traceback. Heavy imports happen inside the commands that need them.
"""

from __future__ import annotations

import functools
from collections.abc import Callable
from typing import Any

import click

from . import __version__, config
from .errors import BrainError


def library_errors(fn: Callable[..., Any]) -> Callable[..., Any]:
    """Turn a BrainError raised by the library into a clean CLI error."""

    @functools.wraps(fn)
    def wrapper(*args: Any, **kwargs: Any) -> Any:
        try:
            return fn(*args, **kwargs)
        except BrainError as exc:
            raise click.ClickException(str(exc)) from exc

    return wrapper


@click.group(context_settings={"help_option_names": ["-h", "--help"]})
@click.version_option(__version__, prog_name="brain")
def cli() -> None:
    """Graph RAG memory over an Obsidian/markdown vault.

    \b
    brain index --vault ~/notes        build or update the index (only what changed)
    brain status --vault ~/notes       what is indexed, what is pending, what was skipped
    brain ask "question"               recall the notes that answer a question
    brain hook install                 record every Claude Code turn in the ledger
    brain turns                        the last recorded turns

    Configuration comes from environment variables (and a .env file in the working
    directory or the brain home); see .env.example for every one.
    """
    config.load_dotenv_files()


def _setup_logging(quiet: bool = False) -> None:
    """Library warnings go to stderr as one line each; --quiet keeps only errors."""
    import logging

    logger = logging.getLogger("brain")
    if not any(getattr(h, "_brain", False) for h in logger.handlers):
        handler = logging.StreamHandler()
        handler.setFormatter(logging.Formatter("brain: %(levelname)s: %(message)s"))
        handler._brain = True  # type: ignore[attr-defined]
        logger.addHandler(handler)
        logger.propagate = False
    logger.setLevel(logging.ERROR if quiet else logging.WARNING)


def _emit_json(data: object) -> None:
    import json

    click.echo(json.dumps(data, ensure_ascii=False, indent=2))


vault_option = click.option(
    "--vault",
    type=click.Path(file_okay=False, path_type=str),
    envvar="BRAIN_VAULT",
    help="The vault folder (default: $BRAIN_VAULT).",
)


@cli.command()
@vault_option
@click.option("--rebuild", is_flag=True, help="Drop the index and embed everything again (e.g. after changing the model).")
@click.option("--json", "as_json", is_flag=True, help="Print one JSON object (notes, chunks, embedded, removed, skipped, ...).")
@click.option("-q", "--quiet", is_flag=True, help="No progress bar and no warnings; errors only.")
@library_errors
def index(vault: str | None, rebuild: bool, as_json: bool, quiet: bool) -> None:
    """Index a vault: parse notes and links, chunk, embed what changed.

    The first run embeds everything; later runs re-embed only notes whose content
    changed, drop deleted notes and move renamed ones. A run with nothing to do does not
    load the model. brain never writes inside the vault: the index lives under the brain
    home ($BRAIN_HOME).

    \b
    Examples:
      brain index --vault ~/notes
      BRAIN_VAULT=~/notes brain index --json
    """
    from .indexer import index_vault

    _setup_logging(quiet or as_json)
    report = index_vault(vault, rebuild=rebuild, progress=not quiet and not as_json)
    if as_json:
        _emit_json(report.as_dict())
        return
    if quiet:
        return
    links = report.links
    click.echo(
        f"{report.notes} notes, {report.chunks} chunks indexed with {report.model} "
        f"({report.seconds:.1f}s)"
    )
    click.echo(
        f"  this run: {report.new} new, {report.changed} changed, {report.renamed} renamed, "
        f"{report.removed} removed, {report.unchanged} unchanged; {report.embedded} chunks embedded"
    )
    click.echo(
        f"  links: {links.get('resolved', 0)} resolved, {links.get('dangling', 0)} dangling, "
        f"{links.get('attachment', 0)} to attachments; {report.skipped} files skipped"
        + (f", {len(report.warnings)} warnings" if report.warnings else "")
    )


@cli.command()
@vault_option
@click.option("--json", "as_json", is_flag=True, help="Print one JSON object.")
@click.option("-v", "--verbose", is_flag=True, help="List every pending and skipped file.")
@library_errors
def status(vault: str | None, as_json: bool, verbose: bool) -> None:
    """What is indexed, what changed since the last index, what was skipped and why."""
    from .indexer import vault_status

    st = vault_status(vault)
    if as_json:
        _emit_json(st.as_dict())
        return
    click.echo(f"vault:  {st.vault}")
    click.echo(f"index:  {st.index_dir}")
    click.echo(f"model:  {st.model or '(nothing indexed yet)'}" + (f" (dim {st.dim})" if st.dim else ""))
    click.echo(f"notes:  {st.notes}   chunks: {st.chunks}")
    click.echo(
        f"links:  {st.links['resolved']} resolved, {st.links['dangling']} dangling, "
        f"{st.links['attachment']} to attachments"
    )
    p = st.pending
    stale = p["new"] + p["changed"] + p["deleted"]
    click.echo(
        f"pending: {p['new']} new, {p['changed']} changed, {p['deleted']} deleted"
        + ("  (run `brain index`)" if stale else "  (up to date)")
    )
    if verbose:
        for kind, paths in st.pending_paths.items():
            for path in paths:
                click.echo(f"  {kind:8} {path}")
    reasons: dict[str, int] = {}
    for entry in st.skipped:
        reasons[entry["reason"]] = reasons.get(entry["reason"], 0) + 1
    summary = ", ".join(f"{n} {r}" for r, n in sorted(reasons.items(), key=lambda x: -x[1]))
    click.echo(f"skipped: {len(st.skipped)}" + (f" ({summary})" if summary else ""))
    if verbose:
        for entry in st.skipped:
            detail = f"  {entry['detail']}" if entry.get("detail") else ""
            click.echo(f"  {entry['reason']:14} {entry['path']}{detail}")
    if st.warnings:
        click.echo(f"warnings: {len(st.warnings)}")
        for w in st.warnings if verbose else st.warnings[:5]:
            click.echo(f"  {w['path']}: {w['message']}")
        if not verbose and len(st.warnings) > 5:
            click.echo("  ... (--verbose lists all)")


def _register_subcommands() -> None:
    # Each area keeps its commands beside its library code; they are plain click objects,
    # imported here cheaply (no heavy imports at module level in any of them).
    from .ledger.cli import hook, turns

    cli.add_command(hook)
    cli.add_command(turns)


_register_subcommands()
