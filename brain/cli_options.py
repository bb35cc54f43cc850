"""Click options shared by the commands that run recall (`brain ask`, `brain eval`).

One definition, one default: the defaults are the recall stages' own constants.
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

import click

from .config import DEFAULT_RERANK_POOL
from .recall.types import DEFAULT_DEPTH, DEFAULT_MAX_NEW, DEFAULT_SEEDS, RecallSettings

vault_option = click.option(
    "--vault",
    type=click.Path(file_okay=False, path_type=str),
    help="The vault folder (default: $BRAIN_VAULT).",
)


def recall_settings_options(fn: Callable[..., Any]) -> Callable[..., Any]:
    """--depth, --seeds, --max-new, --pool: the knobs of RecallSettings."""
    options = [
        click.option(
            "--depth",
            type=click.IntRange(1, 1000),
            default=DEFAULT_DEPTH,
            show_default=True,
            help="Distinct notes from the dense (and lexical) stage.",
        ),
        click.option(
            "--seeds",
            type=click.IntRange(0, 1000),
            default=DEFAULT_SEEDS,
            show_default=True,
            help="Top notes the graph starts from (one-hop links, or PageRank's restarts).",
        ),
        click.option(
            "--max-new",
            type=click.IntRange(0, 1000),
            default=DEFAULT_MAX_NEW,
            show_default=True,
            help="New notes the one-hop expansion may add.",
        ),
        click.option(
            "--pool",
            type=click.IntRange(1, 1000),
            default=None,
            help=f"Notes the reranker scores (one-hop additions come on top); lower it on slow CPUs. "
            f"[default: $BRAIN_RERANK_POOL or {DEFAULT_RERANK_POOL}]",
        ),
    ]
    for option in reversed(options):
        fn = option(fn)
    return fn


def recall_settings(k: int, depth: int, seeds: int, max_new: int, pool: int | None) -> RecallSettings:
    """RecallSettings from the options; an unset --pool takes $BRAIN_RERANK_POOL or its default."""
    settings = RecallSettings(k=k, depth=depth, seeds=seeds, max_new=max_new)
    if pool is not None:
        settings.pool = pool
    return settings
