"""What every CLI module shares: library errors as click errors, JSON output, logging.

Click, the standard library and brain.text only, so each area's commands (brain.cli,
brain.ledger.cli, brain.evaluation.cli) import it at module level without a cycle through brain.cli.
"""

from __future__ import annotations

import functools
import json
import logging
import math
import re
from collections.abc import Callable
from typing import Any

import click

from .errors import BrainError
from .text import one_line, terminal_safe


def library_errors(fn: Callable[..., Any]) -> Callable[..., Any]:
    """Turn a BrainError raised by the library into a clean CLI error (a note's name in it
    with no terminal control)."""

    @functools.wraps(fn)
    def wrapper(*args: Any, **kwargs: Any) -> Any:
        try:
            return fn(*args, **kwargs)
        except BrainError as exc:
            raise click.ClickException(terminal_safe(str(exc))) from exc

    return wrapper


# What json.dumps leaves raw with ensure_ascii=False that a terminal acts on: DEL and the C1
# controls (U+009B is CSI). C0 controls it escapes already.
_RAW_CONTROL = re.compile(r"[\x7f-\x9f]")


def emit_json(data: object) -> None:
    """``data`` as indented JSON, every control character escaped (a note's text may hold them),
    a number that is not finite as null: NaN and Infinity are no JSON (jq and most parsers refuse
    the whole output), and a hand-edited row of brain.db may hold one."""
    try:
        text = json.dumps(data, ensure_ascii=False, indent=2, allow_nan=False)
    except ValueError:
        text = json.dumps(_finite(data), ensure_ascii=False, indent=2)
    click.echo(_RAW_CONTROL.sub(lambda m: f"\\u{ord(m.group()):04x}", text))


def _finite(data: object) -> object:
    if isinstance(data, float):
        return data if math.isfinite(data) else None
    if isinstance(data, dict):
        return {key: _finite(value) for key, value in data.items()}
    if isinstance(data, (list, tuple)):
        return [_finite(value) for value in data]
    return data


class _TerminalSafe(logging.Formatter):
    """A warning names a file, and a file name may hold an escape sequence: shown as text. It
    may hold a line break too (Linux allows one), which made a warning two lines: written as its
    escape (``\\n``), as `brain status` lists it. A traceback keeps its lines."""

    def formatMessage(self, record: logging.LogRecord) -> str:
        return one_line(super().formatMessage(record))

    def format(self, record: logging.LogRecord) -> str:
        return terminal_safe(super().format(record))


# One style for every warning on stderr: the library's, through logging (its level name), and
# those the CLI prints itself (warn), which printed "warning:" or "brain: warning:" before.
WARNING_PREFIX = "brain: WARNING: "


def warn(message: str) -> None:
    """``message`` on stderr as one line, as the library's warnings are (no terminal control)."""
    click.echo(terminal_safe(one_line(WARNING_PREFIX + message)), err=True)


def setup_logging(quiet: bool = False) -> None:
    """Library warnings go to stderr as one line each; quiet keeps only errors."""
    logger = logging.getLogger("brain")
    if not any(getattr(h, "_brain", False) for h in logger.handlers):
        handler = logging.StreamHandler()
        handler.setFormatter(_TerminalSafe(WARNING_PREFIX.replace("WARNING", "%(levelname)s") + "%(message)s"))
        handler._brain = True  # type: ignore[attr-defined]
        logger.addHandler(handler)
    logger.setLevel(logging.ERROR if quiet else logging.WARNING)


def list_or_stats_flags(stats: bool) -> None:
    """`brain turns` and `brain recalls`: --days shapes only --stats, --limit only the list; either
    given to the other mode was ignored and looked applied (`--days 1` listed months-old turns)."""
    source = click.get_current_context().get_parameter_source
    if not stats and source("days") is click.core.ParameterSource.COMMANDLINE:
        raise click.UsageError("--days goes with --stats; the list takes --limit")
    if stats and source("limit") is click.core.ParameterSource.COMMANDLINE:
        raise click.UsageError("--limit goes with the list; --stats takes --days")
