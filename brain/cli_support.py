"""What every CLI module shares: library errors as click errors, JSON output, logging.

Click and the standard library only, so each area's commands (brain.cli, brain.ledger.cli,
brain.evaluation.cli) import it at module level without a cycle through brain.cli.
"""

from __future__ import annotations

import functools
import json
import logging
from collections.abc import Callable
from typing import Any

import click

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


def emit_json(data: object) -> None:
    click.echo(json.dumps(data, ensure_ascii=False, indent=2))


def setup_logging(quiet: bool = False) -> None:
    """Library warnings go to stderr as one line each; quiet keeps only errors."""
    logger = logging.getLogger("brain")
    if not any(getattr(h, "_brain", False) for h in logger.handlers):
        handler = logging.StreamHandler()
        handler.setFormatter(logging.Formatter("brain: %(levelname)s: %(message)s"))
        handler._brain = True  # type: ignore[attr-defined]
        logger.addHandler(handler)
    logger.setLevel(logging.ERROR if quiet else logging.WARNING)
