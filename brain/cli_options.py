"""Click options shared by the commands that run recall (`brain ask`, `brain eval`), by those
that write a vault's index (`brain index`, `brain prune`: --wait), and by the ledger's listings
(`brain turns`, `brain recalls`: --session, --since; `brain ab report` takes --since too).

One definition, one default: the defaults are the recall stages' own constants.
"""

from __future__ import annotations

import contextlib
from collections.abc import Callable, Iterator
from typing import Any

import click

from .config import DEFAULT_RERANK_POOL
from .errors import blank_said
from .recall.types import DEFAULT_DEPTH, DEFAULT_MAX_NEW, DEFAULT_SEEDS, RecallSettings, default_depth


def not_blank(
    what: str, give: str, otherwise: str, *, to: Callable[[str], Any] | None = None
) -> Callable[[click.Context, click.Parameter, Any], Any]:
    """A callback refusing an option's empty or blank text (a script's ``--x "$X"`` with X unset):
    ``'' {what}: {give}, or leave --x out {otherwise}``, a usage error. Read as the option left
    out, "" had listed every session, served no HTTP or printed a whole note unsaid, while " "
    matched nothing (or wrote a settings file named " "). ``to``: what the text becomes (a
    ``Path``, which reads "" as "."; so the type must give the text)."""

    def check(ctx: click.Context, param: click.Parameter, value: Any) -> Any:
        if value is not None and not str(value).strip():
            option = max(param.opts, key=len) if param.opts else param.name
            raise click.BadParameter(blank_said(str(value), what, give, option, otherwise), ctx, param)
        return to(value) if to is not None and value is not None else value

    return check


# --vault "" was read as no --vault, and $BRAIN_VAULT, another vault, indexed or asked unsaid.
_not_blank = not_blank("names no folder", "give the vault", "for $BRAIN_VAULT")
# --source "" was read as no --source, and the row labelled $BRAIN_AB_SOURCE unsaid.
not_blank_source = not_blank("is no label", "give one", "for $BRAIN_AB_SOURCE")


vault_option = click.option(
    "--vault",
    type=click.Path(file_okay=False, path_type=str),
    callback=_not_blank,
    help="The vault folder (default: $BRAIN_VAULT).",
)

# The ledger's listings filter by one session alike: --session "" was read as no --session, and
# every session listed.
session_option = click.option(
    "--session",
    callback=not_blank("names no session", "give its id (a prefix is enough)", "for every session"),
    help="Only this session (a prefix of the id is enough).",
)


# The forms --since takes, as ``moments.window_start`` reads them: `brain turns` and `brain
# recalls` listed fewer (no 2w, 1y or now) than `brain ab report`, which read the same ones.
SINCE_FORMS = (
    "a span back (30m, 12h, 7d, 2w, 1y), today, yesterday, now (сегодня, вчера, сейчас), or a date "
    "(2026-11-01: from its start, local time; a time and a zone may follow)"
)


def since_option(
    rows: str, read_alike: str, *, default: str | None = None
) -> Callable[[Callable[..., Any]], Callable[..., Any]]:
    """--since WHEN, which ``moments.window_start`` reads (`brain turns`, `brain recalls`, `brain
    ab report`): one help, in one place, for the forms it takes (``rows``: what is listed;
    ``read_alike``: what else reads it so)."""
    return click.option(
        "--since",
        metavar="WHEN",
        default=default,
        show_default=default is not None,
        help=f"Only {rows} since WHEN: {SINCE_FORMS}, as {read_alike}.",
    )


# Seconds `brain index` and `brain prune` wait for another writer of the vault's index (brain
# serve's watcher, mostly) before giving up. Served, 13th-age-srd, MiniLM, two busy cores
# (bench/serve_lock_hold.py, four runs): a pass over one saved note held the lock 0.4-2.2 s,
# over ten 2.8-5.4 s, over 200 rewritten at once 66-79 s. A minute rides out saves many times
# over, and still ends in the error inside an agent's two-minute command budget (Claude Code's
# Bash default) rather than the agent killing the command; a burst, a first build: --wait.
DEFAULT_WAIT = 60  # shown as 60 in --help, not 60.0


class _Seconds(click.FloatRange):
    """Seconds from 0 up, ``inf`` (wait as long as it takes) included; ``nan`` compares as
    neither less nor more than anything, so FloatRange let it through and it waited for ever."""

    def convert(self, value: Any, param: click.Parameter | None, ctx: click.Context | None) -> Any:
        seconds = super().convert(value, param, ctx)
        if seconds != seconds:
            self.fail(f"{value!r} is not a number of seconds.", param, ctx)
        return seconds


wait_option = click.option(
    "--wait",
    type=_Seconds(min=0),
    default=DEFAULT_WAIT,
    show_default=True,
    metavar="SECONDS",
    help="While another brain process writes this vault's index (the watcher of `brain serve`, another "
    "`brain index`), wait this long for it to finish, then give up; 0: give up at once.",
)


@contextlib.contextmanager
def writer_waiting(vault: str | None, *, quiet: bool = False) -> Iterator[Callable[[int | None], None]]:
    """For a command that writes the vault's index (``wait``, ``waiting``): gives what it says,
    once, on stderr when its wait for another writer begins, and turns the error of one that gave
    up into one naming the holder as that line does (with --wait 0 or --quiet no line named it):
    by the pid the system gives, as `brain serve` only when that pid is the vault's server's."""
    from .index.writer_lock import VaultLocked

    def begun(pid: int | None) -> None:
        if not quiet:
            click.echo(f"waiting for another brain process indexing this vault{_holder(vault, pid)}…", err=True)

    try:
        yield begun
    except VaultLocked as exc:
        raise VaultLocked(exc.directory, exc.waited, exc.holder, _holder(vault, exc.holder)) from None


def _holder(vault: str | None, pid: int | None) -> str:
    if pid is None:
        return ""
    from .server import runtime
    from .vault import resolve_vault

    root = resolve_vault(vault)
    record = runtime.read_record(root) or {}
    # the record, or the pid the server wrote into serve.lock (its record can be gone)
    served = pid == record.get("pid") or pid == runtime.lock_holder(root)
    return f" (brain serve, pid {pid})" if served else f" (pid {pid})"


def recall_settings_options(fn: Callable[..., Any]) -> Callable[..., Any]:
    """--depth, --seeds, --max-new, --pool: the knobs of RecallSettings."""
    options = [
        click.option(
            "--depth",
            type=click.IntRange(1, 1000),
            default=None,
            help=f"Distinct notes each lane gives (dense, lexical, PageRank…); below -k, fewer than -k may come "
            f"back, and a warning says so. [default: {DEFAULT_DEPTH}, or -k when more]",
        ),
        click.option(
            "--seeds",
            type=click.IntRange(0, 1000),
            default=DEFAULT_SEEDS,
            show_default=True,
            help="Top notes the graph starts from (one-hop links, or PageRank's restarts); 0 only with a mode "
            "without the graph (hybrid, vector).",
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
            help=f"Notes the reranker scores, at least -k (one-hop additions come on top); lower it on slow CPUs. "
            f"[default: $BRAIN_RERANK_POOL or {DEFAULT_RERANK_POOL}]",
        ),
    ]
    for option in reversed(options):
        fn = option(fn)
    return fn


def recall_settings(k: int, depth: int | None, seeds: int, max_new: int, pool: int | None) -> RecallSettings:
    """RecallSettings from the options; an unset --depth is at least -k, an unset --pool takes
    $BRAIN_RERANK_POOL or its default."""
    depth = default_depth(k) if depth is None else depth
    if pool is None:  # the default's factory reads $BRAIN_RERANK_POOL
        return RecallSettings(k=k, depth=depth, seeds=seeds, max_new=max_new)
    # --pool wins, and the variable it overrides is not read: a bad one failed the command
    return RecallSettings(k=k, depth=depth, seeds=seeds, max_new=max_new, pool=pool)
