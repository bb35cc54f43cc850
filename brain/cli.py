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


def _register_subcommands() -> None:
    # Each area keeps its commands beside its library code; they are plain click objects,
    # imported here cheaply (no heavy imports at module level in any of them).
    from .ledger.cli import hook, turns

    cli.add_command(hook)
    cli.add_command(turns)


_register_subcommands()
