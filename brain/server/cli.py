"""``brain serve``: the click command. Nothing heavy is imported until it runs."""

from __future__ import annotations

import os

import click

from ..cli_options import not_blank, vault_option
from ..cli_support import echo_done, library_errors, output_open


@click.command()
@vault_option
@click.option(
    "--detach",
    is_flag=True,
    help="Run in the background; return once it answers (it says where its log is and what it loads meanwhile).",
)
@click.option(
    "--no-wait",
    is_flag=True,
    help="With --detach: return once it listens, loading on (`brain status` says what it loads).",
)
@click.option("--stop", "stop_it", is_flag=True, help="Stop the server running for the vault.")
@click.option(
    "--http",
    metavar="127.0.0.1:PORT",
    callback=not_blank("names no address", "give one, e.g. 127.0.0.1:8181", "for the socket alone"),
    help="Also answer POST /v1 on this loopback address (requests carry the token from serve.json).",
)
@click.option(
    "--no-watch",
    is_flag=True,
    help="Do not watch the vault (index once at start; `brain index` runs are still picked up).",
)
@library_errors
def serve(vault: str | None, detach: bool, no_wait: bool, stop_it: bool, http: str | None, no_watch: bool) -> None:
    """Keep the vault's index warm and answer recall in milliseconds.

    One process per vault loads the model, the vectors and the link graph once, watches the
    vault and indexes what changes (the same incremental index as `brain index`), and answers
    over a Unix socket in a private folder beside the vault's index
    ($BRAIN_HOME/vaults/<name>-<hash>.serve/, owner only). `brain ask`, `brain status` and
    `brain mcp` use it when it runs, and work without it. Logs go to
    $BRAIN_HOME/logs/serve.log.

    \b
    Examples:
      brain serve --vault ~/notes              # in the foreground; Ctrl-C stops it
      brain serve --vault ~/notes --detach     # in the background, once it answers
      brain serve --vault ~/notes --detach --no-wait   # at once; it loads on
      brain status --vault ~/notes             # is it up? queries, last update
      brain serve --vault ~/notes --stop
    """
    from ..errors import ConfigError
    from ..vault import resolve_vault, vault_path

    if os.name != "posix":
        raise ConfigError("brain serve needs a POSIX system (Unix sockets); use `brain ask` directly")
    from . import daemon

    if stop_it:  # a server left watching a vault deleted or moved away is stopped too
        # --stop --detach stopped the server and said nothing of --detach: with --stop the
        # options that shape a server to start are a mistake, not something to drop in silence
        given = [
            name
            for name, on in (("--detach", detach), ("--no-wait", no_wait), ("--http", http), ("--no-watch", no_watch))
            if on
        ]
        if given:
            raise click.UsageError(f"--stop stops the vault's server; {', '.join(given)} shapes one to start: drop it")
        output_open("`brain serve --stop` would stop the server and could not say so")
        root = vault_path(vault)
        result = daemon.stop_server(root)
        if not result.running and not root.is_dir():
            resolve_vault(vault)  # no server and no vault there: say what is wrong with the path
        if result.running and not result.stopped:
            raise click.ClickException(result.message)
        echo_done(result.message, lambda: "the server is stopped all the same")
        return
    if no_wait and not detach:  # in the foreground there is nothing to return to
        raise click.UsageError("--no-wait is for --detach: add it, or drop --no-wait")
    root = resolve_vault(vault)
    address = daemon.parse_http(http) if http else None
    if detach:
        output_open("`brain serve --detach` would start a server and could not say whether it did")
        code, message = daemon.run_detached(
            root, http=address, watch=not no_watch, wait=not no_wait, progress=_progress
        )
        if code:
            raise click.ClickException(message)
        # a command that fails leaves no server behind: the one it started is stopped again
        echo_done(message, lambda: f"so the server it started is not left running: {daemon.stop_server(root).message}")
        return
    daemon.setup_logging(root, foreground=True)
    daemon.run_foreground(root, http=address, watch=not no_watch)


def _progress(line: str) -> None:
    """--detach's lines while the server starts, on stderr (stdout keeps the one line it said)."""
    import contextlib

    from ..text import terminal_safe

    with contextlib.suppress(OSError, ValueError):  # stderr closed or full: the start goes on, unsaid
        click.echo(terminal_safe(line), err=True)
