"""``brain mcp``, ``brain mcp install``, ``brain mcp uninstall``: the click commands.

Nothing heavy at import: ``brain --help`` must stay fast, and ``mcp`` costs 0.4 s.
"""

from __future__ import annotations

from pathlib import Path

import click

from ..cli_options import not_blank, vault_option
from ..cli_support import library_errors, one_file, project_folder_hint
from ..text import escaped, literal, shell_word, terminal_safe


@click.group(invoke_without_command=True)
@vault_option
@click.pass_context
@library_errors
def mcp(ctx: click.Context, vault: str | None) -> None:
    """Serve brain's memory to Claude Code (and any MCP client) over stdio.

    Read-only tools: search, get_note, neighbours, history, recent_turns, status. A running
    `brain serve` for the vault answers them (warm, watching the vault); without one,
    this process loads the index itself for the session.

    \b
    brain mcp --vault ~/notes            # what Claude Code runs
    brain mcp install --vault ~/notes    # add it to ./.mcp.json (--user: every project)
    claude mcp add --transport stdio --scope user brain -- "$(which brain)" mcp --vault ~/notes
    """
    if ctx.invoked_subcommand is not None:
        return
    from ..vault import resolve_vault
    from .server import run

    run(resolve_vault(vault))


def _group_vault(ctx: click.Context) -> str | None:
    return ctx.parent.params.get("vault") if ctx.parent is not None else None


def _the_vault(ctx: click.Context, vault: str | None) -> str | None:
    """`brain mcp --vault ~/notes install`, the command Claude Code runs with install after it:
    the group's --vault was dropped in silence, and install pinned $BRAIN_VAULT's vault instead, or
    said no vault was given."""
    given = _group_vault(ctx)
    if given is not None and vault is not None and given != vault:
        raise click.UsageError(f"two vaults given, --vault {given} and --vault {vault}: give one")
    return vault if vault is not None else given


_scope = click.option("--user", is_flag=True, help="Edit ~/.claude.json (every project) instead of ./.mcp.json.")
_file = click.option(
    "--config",
    "config_file",
    type=click.Path(dir_okay=False, path_type=str),  # the text: a Path reads "" as "."
    callback=not_blank("names no file", "give the MCP config file", "for ./.mcp.json", to=Path),
    help="Edit this MCP config file instead.",
)


def _a_name(ctx: click.Context, param: click.Parameter, value: str) -> str:
    # An empty name was written as the key "": a server no one can name to Claude Code.
    if not value.strip():
        raise click.BadParameter("give the server a name, e.g. brain", ctx, param)
    return value


_name = click.option(
    "--name", default="brain", show_default=True, callback=_a_name, help="The server's name in the config."
)


@mcp.command()
@vault_option
@_scope
@_file
@_name
@click.option("--dry-run", is_flag=True, help="Print the entry that would be written; change nothing.")
@library_errors
@click.pass_context
def install(
    ctx: click.Context, vault: str | None, user: bool, config_file: Path | None, name: str, dry_run: bool
) -> None:
    """Add brain's MCP server to ./.mcp.json (or --user: ~/.claude.json).

    Merges into the existing file, keeps a backup (<file>.bak-<time>), and is safe to run
    again. The entry names this brain by absolute path and pins the vault, BRAIN_HOME /
    BRAIN_DB when set, and the settings the index is built with when set (BRAIN_EMBED_MODEL,
    BRAIN_QUERY_PREFIX / BRAIN_PASSAGE_PREFIX, BRAIN_FTS_TOKENIZER, BRAIN_CHUNKING,
    BRAIN_LINK_FENCES), so that `brain mcp` with no server reads the index as this shell's
    brain built it. Claude Code asks once before it uses a project's .mcp.json.
    """
    import json

    from ..vault import resolve_vault
    from . import install as setup

    one_file(user, config_file, "--config")
    vault = _the_vault(ctx, vault)
    path = setup.config_path(user=user, config=config_file)
    root = resolve_vault(vault)
    entry = setup.server_entry(root)
    if dry_run:
        click.echo(
            f"would write to {literal(str(path))}:\n"
            + json.dumps({"mcpServers": {name: entry}}, indent=2, ensure_ascii=False)
        )
        return
    with project_folder_hint(not user and config_file is None):
        change = setup.install(path, entry, name)
    click.echo(terminal_safe(change.message))  # the entry it shows is the config file's
    if change.changed:
        # Claude Code starts its MCP servers when a session starts, and asks before it uses a
        # project's .mcp.json (its MCP docs, "Project scope"): the install had said "added" and
        # a running session went on without the tools.
        ask = (
            "; it asks once before it uses this project's .mcp.json (/mcp shows it)"
            if not user and config_file is None
            else ""
        )
        click.echo(f"note: a Claude Code session already running does not see it: start a new one{ask}", err=True)
    _no_index_advice(root)


def _no_index_advice(root: Path) -> None:
    """Installed over a vault not indexed yet, install said nothing (then it said the tools
    "find nothing", which was never so: the session builds the index, its tools saying so until
    it is done): what will happen, and how to have the index before the first session."""
    from .. import config
    from ..index.files import INDEX_FILE

    if not (config.index_dir(root) / INDEX_FILE).exists():
        vault = shell_word(root)  # a command to paste: "Obsidian Vault" must stay one word
        click.echo(
            escaped(
                f"note: {root} has no index yet: the first session builds it (minutes on a large vault), "
                "its brain tools answering that it is being built until it is done; "
                f"to have it now, run `brain index --vault {vault}`"
            ),
            err=True,
        )


@mcp.command()
@_scope
@_file
@_name
@library_errors
@click.pass_context
def uninstall(ctx: click.Context, user: bool, config_file: Path | None, name: str) -> None:
    """Remove brain's MCP server from ./.mcp.json (or --user: ~/.claude.json).

    Nothing else goes but what install made for it: the "mcpServers" key, or the file, when
    it was not there before (and holds nothing else now).
    """
    from . import install as setup

    if _group_vault(ctx) is not None:
        raise click.UsageError("uninstall removes the entry by its --name; --vault has no part in it: drop it")
    one_file(user, config_file, "--config")
    path = setup.config_path(user=user, config=config_file)
    click.echo(terminal_safe(setup.uninstall(path, name).message))
