"""`brain history` and `brain prune`: reading and bounding a vault's memory over time."""

from __future__ import annotations

from typing import TYPE_CHECKING

import click

from .cli_options import vault_option, wait_option, writer_waiting
from .cli_support import emit_json, index_read, library_errors, search_hint, setup_logging
from .cli_support import interactive as _interactive
from .text import escaped, literal, plural, terminal_safe

if TYPE_CHECKING:
    from .index.history import PruneReport
    from .ledger.prune import LedgerPruneReport

LAST_SHOWN = 20  # versions `brain history` lists for a person unless --last says otherwise


@click.command("history")
@click.argument("note")
@vault_option
@click.option(
    "--last",
    type=click.IntRange(min=0),
    default=None,
    help=f"List only the newest N versions; 0: all. [default: {LAST_SHOWN} for people, all with --json]",
)
@click.option(
    "--as-of",
    "as_of",
    metavar="WHEN",
    help="The note NOTE named then (as `brain ask --as-of` reads WHEN): one that lived at a path another note holds now.",
)
@click.option("--json", "as_json", is_flag=True, help="Print one JSON object.")
@library_errors
def history_command(note: str, vault: str | None, last: int | None, as_of: str | None, as_json: bool) -> None:
    """The history of NOTE: its versions, the links it gained and lost, its supersession chain.

    NOTE is a path, title, file name or alias, as a wikilink would name it; a deleted note is
    found by its last path or title. Each version says when brain saw it, how it began
    (created, changed, renamed, restored) and what changed against the one before. A renamed
    note is one history, and a note deleted and brought back continues its own. A path another
    note took names the note there now, and a line names each note that lived there before:
    `--as-of` a moment it lived there names it.

    \b
    Examples:
      brain history "Rollout plan"
      brain history Projects/Halyard.md --json
      brain history "Daily log" --last 5
      brain history Ideas.md --as-of 2026-03-01
    """
    from .moments import past_moment
    from .reading import NoteMatch
    from .recall.timeline import history_of, history_text

    setup_logging(as_json)
    if last is None and not as_json:
        last = LAST_SHOWN  # a note edited 500 times is 1,000 lines: the newest, and how many more
    moment = past_moment(as_of) if as_of is not None else None
    # With the index at hand the hint says what `brain note` says of a name only links use (a
    # note not written yet, an attachment): it said only "no note" and `brain ask`.
    with index_read(vault, quiet=as_json) as (_root, store), search_hint(note, store if moment is None else None):
        found = history_of(store, note, last=last or None, as_of=moment)
    # A name two notes answer to read one of them without a word; said as `brain note` says it.
    told = NoteMatch(found.path, tuple(found.ambiguous)).ambiguity(note)
    if told:
        click.echo(escaped(told), err=True)
    if as_json:
        emit_json(found.as_dict())
    else:
        click.echo(terminal_safe(history_text(found)))  # paths and titles from the vault


@click.command("prune")
@vault_option
@click.option(
    "--before",
    metavar="WHEN",
    help="Drop what was replaced (with --ledger: recorded) before WHEN: a date, today or yesterday (сегодня, вчера) means the "
    "start of that day (local time unless it names a zone: `--before today` keeps today's); a date and time, a "
    "span back like 90d, 2h ago, or now (сейчас), that moment. The output says the moment, local and UTC.",
)
@click.option(
    "--ledger",
    is_flag=True,
    help="Prune the brain database (turns, prompts, A/B rows: BRAIN_DB) instead of a vault's history.",
)
@click.option(
    "--vacuum",
    is_flag=True,
    help="Give the freed space back to the disk (rewrites index.db, or brain.db); alone, drop nothing and compact "
    "index.db (with --ledger, brain.db).",
)
@click.option(
    "--yes",
    "-y",
    is_flag=True,
    help="Drop without asking when --before would take all of it, or the last day's by a span like 10m.",
)
@click.option("--json", "as_json", is_flag=True, help="Print one JSON object.")
@wait_option
@library_errors
def prune_command(
    vault: str | None, before: str | None, ledger: bool, vacuum: bool, yes: bool, as_json: bool, wait: float
) -> None:
    """Bound history: drop past versions replaced before --before, and past versions beyond
    BRAIN_KEEP_VERSIONS per note; with --ledger, the turns and prompts recorded before it.

    `brain ask --as-of` earlier than --before then warns that the past there is incomplete.
    Current notes, their links and recall over the present are never touched.

    --vacuum alone (no --before, BRAIN_KEEP_VERSIONS unset) drops nothing: it rewrites
    index.db, giving back to the disk the space deleted notes and earlier prunes left free
    inside it, and says how much.

    It writes the index as `brain index` does, one process at a time: while another writes it
    (the watcher of `brain serve`, a `brain index`), it waits for it, saying so on stderr, up
    to --wait seconds, then gives up with the error.

    With --ledger, bound the brain database instead (BRAIN_DB, default $BRAIN_HOME/brain.db;
    no vault needed): drop the turns (`brain turns`), prompts (`brain recalls`) and
    `brain ask --ab` rows recorded before --before (required but for --vacuum alone). It deletes in small
    batches, each its own short transaction, leaving the lock free between them, so the hooks
    recording meanwhile wait milliseconds, never their budget; stopped at any point, it leaves
    whole batches done and the rest kept. Nothing else in brain.db is touched. --vacuum then
    rewrites brain.db to give the space back, holding it while it runs (seconds for a GB):
    a hook that waits longer than its budget loses that turn, so vacuum when no agent works.
    --ledger --vacuum alone drops nothing: it compacts brain.db and says how much it gave back.

    A --before that would drop all of its kind (every past version and closed link; with
    --ledger, every turn, prompt and A/B row), or, given as a span back (10m, 2h, now), the
    last day's rows, is likely a slip (m is minutes: 10m keeps ten minutes): on a terminal
    it says how many rows would go, replaced or recorded from when to when, and asks; elsewhere
    it refuses, dropping nothing, unless --yes is given.

    \b
    Examples:
      brain prune --before 90d --vault ~/notes
      brain prune --vacuum --vault ~/notes
      brain prune --ledger --before 180d
      brain prune --ledger --before 2026-01-01 --vacuum --json
      brain prune --ledger --vacuum
    """
    from .moments import parse_moment, said_moment

    setup_logging(as_json)
    if ledger:
        if click.get_current_context().get_parameter_source("wait") is click.core.ParameterSource.COMMANDLINE:
            raise click.UsageError("--wait is for a vault's index; --ledger waits for brain.db's writers on its own")
        _prune_ledger(vault, before, vacuum, yes, as_json)
        return
    from .index.prune import prune_preview, prune_vault

    moment = parse_moment(before, "--before", date_means="start") if before is not None else None
    if before is not None and moment is not None and not yes:
        would = prune_preview(vault, before=moment)
        _confirm_dropping(
            before,
            moment,
            dropped=int(would["versions"] or 0) + int(would["links"] or 0),
            held=int(would["all_versions"] or 0) + int(would["all_links"] or 0),
            first=would["first"],
            last=would["last"],
            what=f"{plural(int(would['versions'] or 0), 'past version')} and "
            f"{plural(int(would['links'] or 0), 'closed link')}, replaced",
            everything="all of this vault's history (`brain history`, --as-of)",
        )
    with writer_waiting(vault) as waiting:
        report = prune_vault(vault, before=moment, vacuum=vacuum, wait=wait, waiting=waiting)
    if as_json:
        emit_json(report.as_dict())
        return
    if moment is None and report.keep is None:  # --vacuum alone
        if report.wal_folded is False:
            click.echo(f"compacted index.db, no history dropped; {_held_back(report)}")
        else:
            disk = _disk_line(report.disk_bytes_before, report.disk_bytes_after)
            click.echo(f"compacted index.db: {disk}; no history dropped")
        return
    what = []
    if moment is not None:
        what.append(f"replaced before {said_moment(moment)}")
    if report.keep is not None:
        had = f"{report.notes} note had" if report.notes == 1 else f"{report.notes} notes had"
        what.append(f"beyond {plural(report.keep, 'past version')} per note: {had} more")
    click.echo(
        f"pruned {plural(report.versions, 'past version')}, {plural(report.chunks, 'past chunk')} and "
        f"{plural(report.links, 'closed link')} ({'; '.join(what)})"
    )
    if report.bytes_before is not None and report.bytes_after is not None:
        freed = report.bytes_before - report.bytes_after
        if report.wal_folded is False:
            space = _held_back(report)
        elif vacuum:
            space = "the space is back on the disk"
        else:
            space = f"{_mb(freed)} freed inside index.db (--vacuum returns it)"
        click.echo(f"history now takes {_mb(report.bytes_after)} (was {_mb(report.bytes_before)}); {space}")


def _prune_ledger(vault: str | None, before: str | None, vacuum: bool, yes: bool, as_json: bool) -> None:
    """`brain prune --ledger`: the brain database, which belongs to no vault."""
    from .ledger.prune import ledger_preview, prune_ledger
    from .moments import parse_moment, said_moment

    if vault is not None:
        raise click.UsageError(
            "--vault is for a vault's history; --ledger prunes brain.db, which holds every vault's rows: drop --vault"
        )
    if before is None and not vacuum:
        raise click.UsageError(
            "--ledger needs --before WHEN (e.g. `brain prune --ledger --before 180d`), or --vacuum to compact brain.db"
        )
    moment = parse_moment(before, "--before", date_means="start") if before is not None else None
    if before is not None and moment is not None and not yes:
        would = ledger_preview(moment)
        dropped = would["dropped"]
        _confirm_dropping(
            before,
            moment,
            dropped=sum(dropped.values()),
            held=sum(would["rows"].values()),
            first=would["first"],
            last=would["last"],
            what=f"{_count(dropped['turns'], 'turn')}, {_count(dropped['recalls'], 'prompt')} and "
            f"{_count(dropped['ab_recall'], 'A/B row')}, recorded",
            everything="every turn and prompt brain has recorded (`brain turns`, `brain recalls`)",
        )
    report = prune_ledger(moment, vacuum=vacuum)
    if as_json:
        emit_json(report.as_dict())
        return
    path = literal(report.path)  # one line: a line break in it written \n
    if not report.existed:
        click.echo(f"nothing to {'prune' if moment is not None else 'compact'}: no brain database at {path} yet")
        return
    held = f"VACUUM held it {report.vacuum_seconds or 0:.1f} s"
    if moment is None:  # --vacuum alone
        if report.wal_folded is False:
            click.echo(f"compacted {path}, no rows dropped ({held}); {_ledger_held_back(report, path)}")
        else:
            click.echo(
                f"compacted {path}: {_disk_line(report.bytes_before, report.bytes_after)}; no rows dropped ({held})"
            )
        return
    dropped = report.dropped
    click.echo(
        f"pruned {_count(dropped['turns'], 'turn')}, {_count(dropped['recalls'], 'prompt')} (recalls) and "
        f"{_count(dropped['ab_recall'], 'A/B row')} (ab_recall) recorded before {said_moment(moment)}"
    )
    if report.batches:
        click.echo(
            f"in {_count(report.batches, 'batch', 'batches')}, {report.seconds:.1f} s; the longest held "
            f"the write lock {report.longest_hold * 1000:.0f} ms"
        )
    if vacuum and report.wal_folded is False:
        click.echo(f"compacted ({held}); {_ledger_held_back(report, path)}")
    elif vacuum:
        click.echo(
            f"{path} now takes {_size(report.bytes_after)} (was {_size(report.bytes_before)}); the space is back on "
            f"the disk ({held})"
        )
    else:
        click.echo(
            f"{path} still takes {_size(report.bytes_after)} (was {_size(report.bytes_before)}); "
            f"{_size(report.free_bytes)} free inside it, reused by new rows (--vacuum returns it to the disk)"
        )


def _confirm_dropping(
    before: str,
    moment: float,
    *,
    dropped: int,
    held: int,
    first: float | None,
    last: float | None,
    what: str,
    everything: str,
) -> None:
    """Ask before a --before that looks like a slip: one that drops all there is, or one counted
    back from now (10m: minutes, not months) that drops the last day's. On a terminal, asked
    (no: stopped, nothing dropped); elsewhere refused in one line naming --yes. Any other
    prune (`--before 90d`, `--before today`, a date) goes ahead unasked, as a script expects."""
    import time

    from .moments import counted_back, local_time

    recent = counted_back(before) and last is not None and last >= time.time() - 86400
    if not dropped or not (dropped == held or recent):
        return
    share = everything if dropped == held else f"{dropped:,} of its {held:,} rows, the last day's among them"
    span = (
        f"at {local_time(first)}"
        if local_time(first) == local_time(last)
        else (f"from {local_time(first)} to {local_time(last)}")
    )
    message = f"`--before {escaped(before)}` would drop {share}: {what} {span}"
    if not _interactive():
        raise click.ClickException(f"{message}. Nothing dropped: add --yes to drop it")
    if not click.confirm(f"{message}.\nDrop it?", default=False, err=True):
        raise click.Abort()


def _disk_line(before: int, after: int) -> str:
    """What a vacuum gave back, as measured on the disk (the file and its WAL)."""
    freed = before - after
    given = f"{_mb(freed)} given back to the disk" if freed > 0 else "nothing given back to the disk"
    return f"now {_mb(after)} (was {_mb(before)}), {given}"


def _held_back(report: PruneReport) -> str:
    """A vacuum whose pages wait in the WAL while a reader holds the state before (brain serve lets
    go within seconds: ``prune_vault`` waits that long)."""
    return (
        f"index.db and its WAL take {_mb(report.disk_bytes_after)} on the disk (was {_mb(report.disk_bytes_before)}) "
        "while another process reads the index as it was (a brain ask, a brain serve or brain mcp still loading "
        "the compacted index): the space comes back when it lets go"
    )


def _ledger_held_back(report: LedgerPruneReport, path: str) -> str:
    """A ledger vacuum whose pages wait in the WAL while a reader holds the state before."""
    return (
        f"{path} and its WAL take {_size(report.bytes_after)} on the disk (was {_size(report.bytes_before)}) "
        "while another process (brain turns, brain mcp) reads it as it was: the space comes back when it lets go "
        "(the last connection to close folds the WAL in)"
    )


def _mb(size: int) -> str:
    return f"{size / 1e6:.1f} MB" if size >= 1e6 else f"{size / 1e3:.0f} KB"


def _count(n: int, word: str, words: str | None = None) -> str:
    return f"{n:,} {word if n == 1 else (words or word + 's')}"


def _size(size: int) -> str:
    return f"{size / 1e9:.2f} GB" if size >= 1e9 else _mb(size)
