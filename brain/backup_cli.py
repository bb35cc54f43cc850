"""`brain backup DEST`: the command over ``backup.py``."""

from __future__ import annotations

import contextlib
import sys
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import click

from .cli_options import not_blank
from .cli_support import emit_json, library_errors, warn
from .text import literal, plural, terminal_safe

SHOWN = 20  # databases listed a line each; past it, the rest are summed up in one


@click.command("backup")
@click.argument("dest", type=click.Path(path_type=str))
@click.option(
    "--vault",
    type=click.Path(file_okay=False, path_type=str),
    callback=not_blank("names no folder", "give the vault", "for every vault's index and the ledger"),
    help="Back up this vault's index alone. [default: every vault's index, and the ledger]",
)
@click.option("--json", "as_json", is_flag=True, help="Print one JSON object.")
@library_errors
def backup_command(dest: str, vault: str | None, as_json: bool) -> None:
    """Copy what brain keeps into the new folder DEST, safely while brain runs.

    Each vault's index.db (its notes, vectors and history) and the ledger (brain.db) are
    copied through SQLite's backup API, as one commit left each; the caches brain makes
    again on its own (vector files, BM25 postings, recall-cache.npz), logs and locks are left
    out. DEST is written beside and renamed when complete: a backup stopped midway leaves
    none. To restore, stop `brain serve`, then put DEST in the brain home's place (or set
    BRAIN_HOME to a copy of it).

    \b
    Examples:
      brain backup ~/backups/brain-2026-12-06
      brain backup /mnt/usb/notes-index --vault ~/notes --json
    """
    from . import config
    from .backup import backup

    bar: Any = None

    def progress(done: int, total: int) -> None:
        nonlocal bar
        if bar is None:
            from tqdm import tqdm

            bar = tqdm(total=total, desc="backup", unit="B", unit_scale=True, file=sys.stderr, leave=False)
        bar.total = total
        bar.update(done - bar.n)

    try:
        with _stopped_cleanly():
            report = backup(dest, vault=vault, progress=progress if sys.stderr.isatty() else None)
    finally:
        if bar is not None:
            bar.close()
    for copied in report.databases:
        if copied.not_a_file:
            warn(f"{copied.problem}: it is left out of the backup, the rest is in it")
        elif copied.left_out:
            warn(
                f"{copied.source} is not a sound SQLite database ({copied.problem}): it is left out of the "
                "backup, the rest is in it; see `brain status`"
            )
        elif copied.problem:
            warn(
                f"{copied.source} fails SQLite's check ({copied.problem}): its copy is as damaged; "
                "see `brain index --repair` for an index"
            )
    if as_json:
        emit_json(report.as_dict())
        return
    copies = [copied for copied in report.databases if not copied.left_out]
    click.echo(
        f"backed up to {literal(report.destination)}: {plural(len(copies), 'database')}, "
        f"{report.bytes / 1e6:,.1f} MB ({report.seconds:.1f}s)"
    )
    # 300 vaults printed 300 lines: past SHOWN, the ledger and the first indexes, then the rest in one
    shown = copies
    if len(copies) > SHOWN:
        ledgers = [copied for copied in copies if copied.kind != "index"]
        shown = [copied for copied in copies if copied.kind == "index"][: SHOWN - len(ledgers)] + ledgers
    for copied in shown:
        # A ledger BRAIN_DB put elsewhere is the copy's brain.db: where it came from is said,
        # for a restore to put it back there (or to go without BRAIN_DB)
        elsewhere = ""
        if copied.kind == "ledger" and Path(copied.source) != config.brain_home() / copied.copy:
            elsewhere = f"  (BRAIN_DB {literal(copied.source)})"  # one line: its \n escaped
        click.echo(f"  {copied.kind:<6}  {terminal_safe(copied.copy)}  {copied.bytes / 1e6:,.1f} MB{elsewhere}")
    if len(shown) < len(copies):
        listed = {id(copied) for copied in shown}
        rest = [copied for copied in copies if id(copied) not in listed]
        click.echo(
            f"  ... and {len(rest)} more {'index' if len(rest) == 1 else 'indexes'}, "
            f"{sum(copied.bytes for copied in rest) / 1e6:,.1f} MB (--json lists every one)"
        )
    if report.files:
        click.echo(f"  files   {', '.join(terminal_safe(name) for name in report.files)}")
    click.echo("  left out: vector files, BM25 postings, recall caches, logs (made again from index.db as needed)")


@contextlib.contextmanager
def _stopped_cleanly() -> Iterator[None]:
    """SIGTERM (kill, timeout, systemd stopping a unit) and SIGHUP (the terminal closed) end the
    backup as Ctrl-C does, its folder beside DEST removed, with the exit status the signal gives:
    they ended the process where it was, and the partial copy stayed until a later backup there."""
    import signal
    import threading

    if threading.current_thread() is not threading.main_thread():
        yield
        return

    def stop(signum: int, frame: object) -> None:
        raise SystemExit(128 + signum)

    # one ignored is left so: `nohup brain backup` ignores SIGHUP, to run on past the terminal
    handled = [getattr(signal, name) for name in ("SIGTERM", "SIGHUP") if hasattr(signal, name)]
    handled = [signum for signum in handled if signal.getsignal(signum) is not signal.SIG_IGN]
    before = {signum: signal.signal(signum, stop) for signum in handled}
    try:
        yield
    finally:
        for signum, handler in before.items():
            signal.signal(signum, handler)
