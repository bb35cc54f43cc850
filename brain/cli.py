"""The `brain` command line: a thin click layer over the library.

Library errors (``BrainError``) become ``click.ClickException`` so users see one clear
line, never a traceback. Heavy imports happen inside the commands that need them.
"""

from __future__ import annotations

from collections import Counter
from collections.abc import Iterable
from pathlib import Path
from typing import TYPE_CHECKING, Any

import click

from . import __version__, config
from .cli_options import (
    not_blank,
    not_blank_source,
    recall_settings,
    recall_settings_options,
    since_option,
    vault_option,
    wait_option,
    writer_waiting,
)
from .cli_support import (
    BrainGroup,
    WordsCommand,
    emit_json,
    index_read,
    library_errors,
    search_hint,
    setup_logging,
    warn,
)
from .cli_support import interactive as _interactive
from .recall.types import AB_MODES, DEFAULT_K, RecallResult, RecallSettings
from .text import escaped, plural, shell_word, terminal_safe, valid_unicode  # re only; cli_support loaded it

if TYPE_CHECKING:
    from .index.indexer import IndexReport


@click.group(cls=BrainGroup, context_settings={"help_option_names": ["-h", "--help"]})
@click.version_option(__version__, prog_name="brain")
@library_errors  # a BRAIN_HOME that names no path: one line before any command runs
def cli() -> None:
    """Graph RAG memory over an Obsidian/markdown vault.

    \b
    brain index --vault ~/notes        build or update the index (only what changed)
    brain status --vault ~/notes       what is indexed, what is pending, what was skipped
    brain ask "question"               recall the notes that answer a question
    brain ask --as-of 2026-03-01 "q"   recall over the vault as it was then
    brain history "Note"               a note's versions, links gained and lost
    brain note "Title" / neighbours    read a note; its links and backlinks
    brain note "Title" --as-of 30d     a note as it was then
    brain serve --detach               keep the index warm and watched (ask answers in ms)
    brain mcp install                  give Claude Code the memory as MCP tools
    brain hook install                 record every Claude Code turn in the ledger
    brain hook install --prompt        add the vault's relevant notes to every prompt
    brain turns / brain recalls        the last recorded turns; what the prompts were shown
    brain prune --ledger --before 90d  bound the turn ledger (brain prune: a vault's history)
    brain backup ~/brain-backup        copy the indexes and the ledger, safely while brain runs

    Configuration comes from environment variables (and a .env file in the working
    directory or the brain home): the README's Configuration section lists every one
    with its default; `brain status` names those set other than their default.
    """
    for skipped in config.load_dotenv_files():
        warn(skipped)
    from .settings import unknown_variables  # here: `brain --help` never runs this

    for line in unknown_variables():  # a typo left a default in force, unseen
        warn(line)


@cli.command()
@vault_option
@click.option(
    "--rebuild",
    is_flag=True,
    help="Embed everything again into a new index beside the old one, which "
    "answers until the new one replaces it (after changing the model or BRAIN_FTS_TOKENIZER, or over a damaged index).",
)
@click.option(
    "--keep-history",
    is_flag=True,
    help="With --rebuild: carry the index's history (past versions, link history) into the new index "
    "(past chunks are embedded again if the model changed).",
)
@click.option("--yes", "-y", is_flag=True, help="With --rebuild: discard the index's history without asking.")
@click.option(
    "--repair",
    is_flag=True,
    help="Check the index database and rebuild its search indexes from its own rows, and make again a "
    "dropped table it derives from them, embedding nothing "
    "(when `brain ask` says the BM25 index is out of step, or a damaged index is reported).",
)
@click.option(
    "--verify",
    is_flag=True,
    help="Read every note, not only those whose size or modification time changed, and re-index "
    "those whose bytes differ (after files were swapped by name, or copied keeping their time).",
)
@click.option(
    "--json", "as_json", is_flag=True, help="Print one JSON object (notes, chunks, embedded, removed, skipped, ...)."
)
@click.option(
    "-q",
    "--quiet",
    is_flag=True,
    help="No progress bar and no summary; the warnings a run reports (notes skipped: `brain status` lists "
    "them) left out, any other still said on stderr.",
)
@wait_option
@library_errors
def index(
    vault: str | None,
    rebuild: bool,
    keep_history: bool,
    yes: bool,
    repair: bool,
    verify: bool,
    as_json: bool,
    quiet: bool,
    wait: float,
) -> None:
    """Index a vault: parse notes and links, chunk, embed what changed.

    The first run embeds everything; later runs re-embed only notes whose content
    changed, drop deleted notes and move renamed ones. A run with nothing to do does not
    load the model. brain never writes inside the vault: the index lives under the brain
    home ($BRAIN_HOME).

    A note is read again when its size or modification time changed, as make and rsync
    judge; --verify reads every note and compares its bytes (after notes were swapped by
    name, or copied keeping their times).

    --rebuild fills a new index beside the old one and swaps it in when complete; if it
    stops (Ctrl-C, a model that cannot load), the old index still answers and the next
    --rebuild resumes. A rebuild that would discard the index's history (past versions, link
    history: what `brain ask --as-of` and `brain history` read) asks first: --keep-history
    carries it into the new index, --yes discards it.

    --repair checks the database and refills its search (BM25) indexes from the rows they
    index, and makes again a dropped table it derives from its rows, without embedding
    anything: seconds, where --rebuild embeds every note again. Over an index that lost a
    table of its own rows, --rebuild carries its history into the new one.

    One process writes a vault's index at a time. While another does (the watcher of
    `brain serve` indexing what was saved, another `brain index`), this waits for it, saying
    so on stderr, up to --wait seconds, then gives up with the error.

    \b
    Examples:
      brain index --vault ~/notes
      BRAIN_VAULT=~/notes brain index --json
      brain index --rebuild --keep-history
      brain index --repair
      brain index --verify
    """
    from .index.indexer import index_vault

    setup_logging(quiet or as_json)
    if (keep_history or yes) and not rebuild:
        raise click.UsageError("--keep-history and --yes go with --rebuild: they say what a rebuild does with history")
    if keep_history and yes:
        raise click.UsageError("--keep-history carries the history into the new index and --yes discards it: give one")
    if verify and (rebuild or repair):
        why = "--rebuild reads every note anyway" if rebuild else "--repair mends the index from its rows"
        raise click.UsageError(f"--verify goes with a plain `brain index`: {why}")
    if repair:
        if rebuild:
            raise click.UsageError("--repair and --rebuild do not go together: --rebuild builds a new index")
        from .index.repair import repair_vault

        with writer_waiting(vault, quiet=quiet) as waiting:
            repaired = repair_vault(vault, wait=wait, waiting=waiting)
        if as_json:
            emit_json(repaired.as_dict())
        elif not quiet:
            rows = ", ".join(f"{table} ({count:,} rows)" for table, count in repaired.rebuilt.items())
            made = f"; made the {repaired.indexes_made} indexes a first build left" if repaired.indexes_made else ""
            if repaired.remade:
                gone = "was" if len(repaired.remade) == 1 else "were"
                made += f"; {', '.join(repaired.remade)} {gone} gone: made again"
            # the wait apart, as a plain `brain index` says it
            waited = f", after {repaired.waited:.1f} s waiting for another brain process" if repaired.waited else ""
            click.echo(
                f"repaired the index of {repaired.vault}: rebuilt and checked {rows}{made} in {repaired.seconds} s{waited}"
            )
        return
    if not rebuild:
        _offer_an_unrecorded_index(vault)
    keep = True  # with nothing past to lose, a rebuild still carries what history there is
    if rebuild and not keep_history:
        keep = not yes and not _confirm_discarding_history(vault)
    with writer_waiting(vault, quiet=quiet) as waiting:
        report = index_vault(
            vault,
            rebuild=rebuild,
            keep_history=keep,
            progress=not quiet and not as_json,
            verify=verify,
            wait=wait,
            waiting=waiting,
        )
    # said even with --json and --quiet: the user has a folder to keep or delete
    for aside in [report.moved_aside, *report.kept_aside]:
        if aside:
            said = next(w["message"] for w in report.warnings if w["path"] == aside)
            click.echo(f"brain: {said}", err=True)
    if report.taken_over:  # said even with --json and --quiet: an index folder of the home moved
        click.echo(
            escaped(
                f"brain: {report.vault} was indexed at {report.taken_over}, a folder no longer there: its index, "
                "history included, is this vault's now " + ("(then rebuilt)" if rebuild else "(nothing embedded again)")
            ),
            err=True,
        )
    if as_json:
        emit_json(report.as_dict())
        _fail_if_not_read(report)
        return
    if quiet:
        _fail_if_not_read(report)
        return
    links = report.links
    # the wait apart: the time is of this run's pass (the "waiting for another brain process" line said it began)
    waited = f", after {report.waited:.1f}s waiting for another brain process" if report.waited else ""
    click.echo(
        f"{report.notes} notes, {report.chunks} chunks indexed with {report.model} ({report.seconds:.1f}s{waited})"
    )
    click.echo(
        f"  this run: {report.new} new, {report.changed} changed, {report.renamed} renamed, "
        f"{report.removed} removed, {report.unchanged} unchanged; {report.embedded} chunks embedded"
        + (f", {report.kept} kept (their text unchanged)" if report.kept else "")
    )
    click.echo(
        f"  links: {links.get('resolved', 0)} resolved, {links.get('dangling', 0)} dangling, "
        f"{links.get('attachment', 0)} to attachments; " + _skipped(report)
    )
    if report.unreadable:
        click.echo(escaped(_unreadable_line(report.unreadable)))
    if not report.notes:  # a folder given for the vault's (its parent, a project's): nothing to recall from
        click.echo(
            escaped(
                f"  no notes in {report.vault}: brain indexes the *.md files in it and its folders; if the notes "
                "are elsewhere, give that folder (--vault PATH or BRAIN_VAULT)"
                + (
                    f"; of the {plural(report.skipped, 'file')} skipped, `brain status -v` says why"
                    if report.skipped
                    else ""
                )
            )
        )
    _fail_if_not_read(report)


def _fail_if_not_read(report: IndexReport) -> None:
    """Exit 1 when notes could not be read for a fault (too many open files, no memory; an I/O
    error): the run left them out, or as the index had them, and said so in a warning each, then
    exited 0, and a script took the index for up to date (a disk losing a note's sector, every night)."""
    if not report.not_read:
        return
    first = report.not_read[0]
    more = f" and {plural(len(report.not_read) - 1, 'other')}" if len(report.not_read) > 1 else ""
    # by errno, not by words: strerror speaks the system's language ("Trop de fichiers ouverts")
    out_of_files = any(n.get("errno") in ("EMFILE", "ENFILE") for n in report.not_read)
    import errno

    from .vault import PASSING

    passing = {errno.errorcode[e] for e in PASSING if e in errno.errorcode}
    if out_of_files:
        hint = "run `brain index` again (raise the limit on open files, `ulimit -n 4096`)"
    elif all(n.get("errno") in passing for n in report.not_read):
        hint = "run `brain index` again"
    elif all(n.get("errno") == "ENAMETOOLONG" for n in report.not_read):  # the vault's shape, no fault
        hint = "their path is longer than the system opens: shorten a folder's name on the way, or .brainignore them"
    else:  # a fault of the disk or of where the note lives, which may stay
        hint = "`brain index` reads them again; if they fail again, mend the disk or the share, or .brainignore them"
    raise click.ClickException(
        escaped(
            f"{first['path']}{more} could not be read now ({first['detail']}): left out, or as the index had "
            f"them; {hint}"
        )
    )


def _unreadable_line(unreadable: list[dict[str, str]], shown: int = 5) -> str:
    """The files and folders this user may not read that a run skipped for the first time, by
    name: "2 unreadable" alone did not say which notes recall no longer finds."""
    names = [f"{u['path']} ({u['detail']})" if u["detail"] else u["path"] for u in unreadable[:shown]]
    more = f" and {len(unreadable) - shown} more" if len(unreadable) > shown else ""
    return (
        f"  not indexed, this user may not read them: {', '.join(names)}{more}; give this user read access "
        "to them and run `brain index` again (`brain status --verbose` lists every file skipped)"
    )


def _by_reason(counts: Iterable[tuple[str, int]]) -> str:
    """Files skipped by reason, as `brain index` and `brain status` say them: "2 dot-folder, 1 binary"
    (most first, then by name)."""
    return ", ".join(f"{n} {reason}" for reason, n in sorted(counts, key=lambda item: (-item[1], item[0])))


def _skipped(report: IndexReport) -> str:
    """The summary's files skipped, by reason as `brain status` counts them ("3 files skipped"
    named no reason: a symlink loop or an unreadable folder was found only there), and its
    warnings: a skipped file's warning was counted twice, among the files skipped and among the
    warnings (`brain status` counts it skipped only)."""
    said = [_by_reason(report.skipped_by.items())] if report.skipped_by else []
    if report.warned_skips:
        said.append(f"{report.warned_skips} with a warning")
    others = len(report.warnings) - report.warned_skips
    return (
        f"{plural(report.skipped, 'file')} skipped"
        + (f" ({'; '.join(said)})" if said else "")
        + (f"; {plural(others, 'other warning' if report.warned_skips else 'warning')}" if others else "")
    )


@cli.command()
@vault_option
@click.option("--json", "as_json", is_flag=True, help="Print one JSON object.")
@click.option("-v", "--verbose", is_flag=True, help="List every pending and skipped file.")
@library_errors
def status(vault: str | None, as_json: bool, verbose: bool) -> None:
    """What is indexed, what changed since the last index, what was skipped and why.

    The `server:` line says whether `brain serve` runs for the vault: its pid, uptime, queries
    answered, and its last update (what changed, and how long after the change it was served).
    The `background:` line, while there is one, names the work a run left to a process of its
    own on a large vault (rebuilding the BM25 postings, finishing FTS5's merges). An `indexing:`
    line, while another process indexes the vault (`brain index`, `brain serve`'s watcher), names
    it: pending then counts what it has not committed yet. A `settings:`
    line says what `brain index` and `brain ask` would refuse: a model, prefixes, tokenizer or
    chunking other than the index was built with (`brain index --rebuild` fixes it). A `set:` line
    names the BRAIN_* settings given other than their default (why recall here may differ), a `bad:`
    line each one set to a value it cannot take (the hooks use the default then). A `ledger:`
    line counts the turns the Stop hook recorded and says when the last began; others, the rows
    the hooks kept aside while an upgrade of brain.db waits (`brain turns` applies it and records
    them), the files kept aside that held no row brain can record (moved aside, not deleted: look
    at them, then delete them), a brain.db a newer brain upgraded, or one that cannot be read.
    brain.db is only read here: never created, never upgraded.
    """
    from .index.status import vault_status
    from .kept_aside import rejected, rejected_line
    from .ledger.state import ledger_state
    from .server.client import status as server_status
    from .settings import bad_values, changed
    from .text import in_column, literal

    setup_logging()  # the index's warnings (its open waiting for a lock) one line on stderr, as every command's
    st = vault_status(vault)
    set_here = changed()
    bad = bad_values()  # what the hooks and the server would say only in their logs
    server = server_status(Path(st.vault))
    ledger = ledger_state()  # read only: brain.db is neither created nor upgraded here
    if as_json:
        emit_json(
            {
                **st.as_dict(),
                "server": server,
                **ledger,
                "settings_set": set_here,
                "settings_refused": bad,
            }
        )
        return

    def echo(line: str) -> None:  # file names and warnings from the vault: shown as text
        click.echo(terminal_safe(line))

    # A file name holding a line break ended its row, the rest at the terminal's first cell, and
    # a tab was left for the terminal (terminal_safe keeps both): paths are written as they are,
    # their breaks escaped (literal), other text from the vault spaced on its row (in_column).
    echo(f"vault:  {literal(str(st.vault))}")
    rebuilding = (server or {}).get("rebuilding")
    being_rebuilt = isinstance(rebuilding, dict) and not rebuilding.get("failed")  # a pass building it again
    # "(none yet)" read as a vault never indexed; its pending line said to run `brain index`
    no_index = "  (none: brain serve is rebuilding it)" if being_rebuilt else "  (none yet)"
    echo(f"index:  {literal(str(st.index_dir))}" + ("" if st.indexed else no_index))
    if st.moved_from:  # what `brain index` would do here: not the first run the lines below count
        echo(
            f"moved:  {literal(st.moved_from)} was this vault's path: its index (a folder no longer there) "
            "holds these notes, and `brain index` takes it over, history included, embedding nothing again"
        )
    if st.unrecorded_index:
        echo(
            f"moved?: {literal(st.unrecorded_index)}, an index made before brain recorded its vault's path, holds "
            "these notes: if this vault was moved from there, `brain index` on a terminal offers to take it over"
        )
    echo(f"model:  {st.model or '(nothing indexed yet)'}" + (f" (dim {st.dim})" if st.dim else ""))
    echo(f"notes:  {st.notes}   chunks: {st.chunks}" + _rebuilding_said(server))
    echo(
        f"links:  {st.links['resolved']} resolved, {st.links['dangling']} dangling, "
        f"{st.links['attachment']} to attachments"
    )
    p = st.pending
    stale = sum(p.values())
    todo = (
        "run `brain index --rebuild`"
        if st.settings_mismatch
        else "run `brain index`"
        if stale or not st.indexed
        else "up to date"
    )
    if stale and st.indexing and not st.settings_mismatch:  # "run `brain index`" read as if nothing were
        todo = "being indexed now"
    if stale and being_rebuilt and not st.settings_mismatch:  # the index went from under the server
        todo = "brain serve is rebuilding the index; these are not in it yet"
    if stale and st.newer:  # `brain index` refuses it
        todo = "not indexed by this brain: see newer:"
    echo(f"pending: {p['new']} new, {p['changed']} changed, {p['renamed']} renamed, {p['deleted']} deleted  ({todo})")
    if st.indexing:
        from .cli_options import _holder

        echo(
            f"indexing: another brain process{_holder(st.vault, st.indexing['pid'])} is indexing this vault now; "
            "pending counts what it has not committed yet"
        )
    if st.newer:
        echo(f"newer:  {st.newer}")
    for message in st.settings_mismatch:  # what `brain index` and `brain ask` would refuse
        echo(f"settings: {message}")
    if set_here:
        echo("set:    " + ", ".join(f"{s['name']}={literal(s['value'])} (default {s['default']})" for s in set_here))
    for message in bad:
        echo(f"bad:    {message}")
    if verbose:
        for kind, paths in st.pending_paths.items():
            for path in paths:
                echo(f"  {kind:8} {literal(path)}")
    echo(_server_line(server, Path(st.vault)))
    summary = _by_reason(Counter(entry["reason"] for entry in st.skipped).items())
    echo(f"skipped: {len(st.skipped)}" + (f" ({summary})" if summary else ""))
    if verbose:
        for entry in st.skipped:
            detail = f"  {in_column(entry['detail'])}" if entry.get("detail") else ""
            echo(f"  {entry['reason']:14} {literal(entry['path'])}{detail}")
    if st.history is not None:
        echo(_history_line(st.history))
    if st.background:
        echo(f"background: {'; '.join(st.background)} (a process a run left; brain answers as before meanwhile)")
    if st.rebuild:
        done = "?" if st.rebuild["notes"] is None else st.rebuild["notes"]
        echo(
            f"rebuild: {done} notes so far in {st.rebuild['path']} (a `brain index --rebuild` is running, "
            "or stopped: running it again resumes)"
        )
    if ledger["ledger_turns"]:
        echo(_ledger_line(ledger["ledger_turns"], ledger["ledger_last_turn"]))
    kept_aside = ledger["ledger_kept_aside"]  # rows the hooks could not write: an upgrade of brain.db waits
    if kept_aside:
        echo(
            f"ledger: {kept_aside} row{'s' if kept_aside != 1 else ''} the hooks kept aside: an upgrade of the "
            "brain database did not fit their budget; `brain turns` applies it and records them"
        )
    if ledger["ledger_rejected"]:
        refused = rejected()  # files kept aside that a catch-up could not record
        echo(f"ledger: {rejected_line(len(refused), refused[0].parent)}")
    for said in (ledger["ledger_newer"], ledger["ledger_error"]):
        if said:
            echo(f"ledger: {said}")
    if st.warnings:
        echo(f"warnings: {len(st.warnings)}")
        for w in st.warnings if verbose else st.warnings[:5]:
            echo(f"  {literal(w['path'])}: {in_column(w['message'])}")
        if not verbose and len(st.warnings) > 5:
            echo("  ... (--verbose lists all)")


def _rebuilding_said(server: dict | None) -> str:
    """What the `notes:` line adds while `brain serve` builds again the index that went from
    under it (deleted): the line is read from the index, and "0 notes" read as an empty vault."""
    rebuilding = (server or {}).get("rebuilding")
    if not isinstance(rebuilding, dict):
        return ""
    if rebuilding.get("failed"):
        return "  (brain serve is rebuilding the index, but its pass failed: see server:)"
    from .server.protocol import rebuild_far

    embedded, of_about = rebuilding.get("embedded"), rebuilding.get("of_about")
    far = rebuild_far(embedded, of_about) if isinstance(embedded, int) and isinstance(of_about, int) else "under way"
    return f"  (brain serve is rebuilding the index: {far})"


def _ledger_line(turns: int, last: str | None) -> str:
    """The `ledger:` line of `brain status`: the turns recorded, and when the newest began, in
    local time as `brain turns` lists it (it was the ledger's UTC: two clocks for one moment)."""
    line = f"ledger: {turns:,} turn{'s' if turns != 1 else ''} recorded"
    if last:
        from .moments import recorded_local

        line += f", the last begun {recorded_local(last, say_zone=True)}"
    return line


def _server_line(server: dict | None, root: Path) -> str:
    """The `server:` line of `brain status`. Its times are local, as the `ledger:` line's (they
    were the server's UTC: two clocks on one screen); ``--json`` keeps the server's UTC."""
    from .moments import recorded_local

    if server is None:
        from .server import runtime

        if runtime.lock_is_held(root):  # hung, stopped (SIGSTOP), or too busy to say: not "none"
            record = runtime.read_record(root) or {}
            pid = record.get("pid") or runtime.lock_holder(root)  # its record gone: the pid in its lock
            if not record and runtime.server_starting(root):  # its record not written yet
                return f"server: starting ({f'pid {pid}; ' if pid else ''}asks work without it meanwhile)"
            return (
                f"server: not answering ({f'pid {pid}, ' if pid else ''}it holds the vault's lock; "
                f"`brain serve --vault {shell_word(root)} --stop` stops it); asks work without it"
            )
        return "server: none (`brain serve --detach` keeps the index warm and watches the vault)"
    loading = server.get("loading")
    if server.get("state") == "starting" and isinstance(loading, dict):
        # "up (starting, …, indexing changes)" while it loaded the model: up it was not, and no
        # change was being indexed. What it loads and for how long, as `brain serve --detach` says it
        for_s = loading.get("for_s")
        took = f", {for_s:.0f} s" if isinstance(for_s, (int, float)) else ""
        return (
            f"server: starting (pid {server.get('pid')}, {escaped(str(loading.get('doing')))}{took}; "
            f"asks wait up to {config.serve_timeout():.0f} s for it, then work without it)"
        )
    queries = server.get("queries", 0)
    parts = [
        f"pid {server.get('pid')}",
        f"up {_span(server.get('uptime_s') or 0)}",
        f"{queries} {'query' if queries == 1 else 'queries'}",
    ]
    state = server.get("state")
    if state != "ready":
        parts.insert(0, str(state) + (f": {server['failure']}" if server.get("failure") else ""))
    watch = server.get("watch") or {}
    if watch.get("busy"):
        pending = watch.get("pending")
        behind = watch.get("behind_s")  # from the first change heard; none for a pass no event told of
        parts.append(
            "indexing "
            + (plural(pending, "change") if isinstance(pending, int) and pending else "changes")
            + (f", the first heard {behind:.1f} s ago" if isinstance(behind, (int, float)) else "")
        )
    unheard = watch.get("unheard")  # rescans that found changes the watch missed: each started it again
    deaf = watch.get("no_events")  # restarts for them did not help: the vault gets no events for its changes
    if isinstance(deaf, dict):
        times = f" {plural(unheard, 'time')}" if isinstance(unheard, int) and unheard else ""
        parts.append(
            f"rescans found changes no event told of{times}: the vault looks like it gets no events "
            "(a network or FUSE mount?); WATCHFILES_FORCE_POLLING=1 polls it"
        )
    elif isinstance(unheard, int) and unheard:
        parts.append(f"watch started again {plural(unheard, 'time')}: rescans found changes no event told of")
    failing = server.get("indexing_failing")
    if isinstance(failing, dict) and isinstance(failing.get("failures"), int) and failing["failures"]:
        n = failing["failures"]  # answers come from the index as it was
        since = recorded_local(str(failing.get("since") or ""), say_zone=True, seconds=True)
        left = failing.get("unindexed")
        if failing.get("what") == "idle check":  # no pass fails: what picks up another `brain index`'s work does
            parts.append(
                f"idle check FAILING since {since} ({n} time{'' if n == 1 else 's'} in a row; what "
                f"`brain index` writes elsewhere is not picked up): {escaped(str(failing.get('why')))}"
            )
        else:
            parts.append(
                f"indexing FAILING since {since} ({n} pass{'' if n == 1 else 'es'} in a row"
                + (f", {plural(left, 'note')} not indexed" if isinstance(left, int) and left else "")
                + f"): {escaped(str(failing.get('why')))}"
            )
    update = server.get("last_update")
    if update:
        when = recorded_local(str(update["finished_at"]), say_zone=True, seconds=True)
        counts = ", ".join(f"{update[k]} {k}" for k in ("new", "changed", "removed", "renamed") if update.get(k))
        if update.get("reason") == "start":
            parts.append(
                f"index loaded {when} in {update['took_s']:.1f} s" + (f" after indexing {counts}" if counts else "")
            )
        elif update.get("reason") == "burst":  # so many events that the kernel may have dropped some
            parts.append(
                f"last update {when}: {counts or 'no change'}, found by a pass over the whole vault after "
                f"a burst of events the kernel may have dropped some of"
            )
        elif update.get("lag_s") is None:  # no event told of it (a rescan): when it changed is unknown
            parts.append(f"last update {when}: {counts or 'no change'}, found by a pass over the whole vault")
        else:
            parts.append(
                f"last update {when}: {counts or 'no change'}, served {update['lag_s']:.1f} s after the change"
            )
    line = "server: up (" + ", ".join(parts) + ")"
    from .server.client import other_build

    other = other_build(root)
    return line if other is None else f"{line}; {other}, and asks are answered without it"


def _span(seconds: float) -> str:
    seconds = int(seconds)
    if seconds < 60:
        return f"{seconds}s"
    if seconds < 3600:
        return f"{seconds // 60}m {seconds % 60}s"
    return f"{seconds // 3600}h {seconds % 3600 // 60}m"


@cli.command(cls=WordsCommand)
@click.argument("query", nargs=-1, required=True)
@vault_option
@click.option(
    "-k", "k", type=click.IntRange(1, 200), default=DEFAULT_K, show_default=True, help="How many notes to return."
)
@click.option(
    "--graph", is_flag=True, help="The pilot's graph mode: dense + one hop along wikilinks, gated (mode gated)."
)
@click.option(
    "--mode",
    callback=not_blank("names no mode", "give one, e.g. hybrid+ppr", "for the default"),
    help="vector, graph, gated, hybrid, ppr or hybrid+ppr (the default), each optionally "
    "+rerank (added by default when a reranker is configured).",
)
@click.option("--no-rerank", is_flag=True, help="Skip the cross-encoder (also: BRAIN_RERANK_MODEL=none).")
@click.option("--ab", is_flag=True, help="Run two modes side by side (--ab-modes) and log the difference to ab_recall.")
@click.option(
    "--ab-modes",
    # the default mode without and with the graph: vector,graph (the pilot's pair) printed two
    # equal columns without a reranker, and measured a mode brain no longer runs by default
    default=",".join(AB_MODES),
    show_default=True,
    metavar="A,B",
    help="The two modes --ab compares: without and with the graph (+rerank is added when a reranker is configured).",
)
@click.option(
    "--source",
    callback=not_blank_source,
    help=f"Label for the --ab row. [default: $BRAIN_AB_SOURCE or {config.DEFAULT_AB_SOURCE!r}]",
)
@click.option("--json", "as_json", is_flag=True, help="Machine-readable output for agents.")
@click.option("--context", "as_context", is_flag=True, help="Print the best passages as a prompt-ready bundle.")
@click.option(
    "--budget", type=click.IntRange(200, 1_000_000), default=6000, show_default=True, help="Characters for --context."
)
@click.option("--no-update", is_flag=True, help="Do not bring the index up to date first; warn if it is stale.")
@click.option(
    "--as-of",
    "as_of",
    metavar="WHEN",
    help="Recall over the vault as brain knew it then: its notes, text, links and graph at that moment "
    "(a date, the end of that day, local or in the zone it names: 2026-03-01, 2026-03-01Z, 2026-03-01+03; "
    "a date and time, 2026-03-01T14:30; a span back like 30m, 7d, 2w; today, yesterday, now, or сегодня, вчера, сейчас). Dates are shown.",
)
@click.option(
    "--valid-at",
    "valid_at",
    metavar="DATE",
    help="Only notes whose frontmatter says they held on DATE (date or valid_from, valid_to, "
    "superseded_by, status: superseded); notes that say nothing stay.",
)
@click.option("--no-server", is_flag=True, help="Answer in this process even when `brain serve` runs for the vault.")
@click.option(
    "-q",
    "--quiet",
    is_flag=True,
    help="No progress bar and no note of what the graph did; as with `brain index -q`, the update's warnings "
    "that `brain status` lists (notes skipped) left out, any other still said on stderr.",
)
@recall_settings_options
@library_errors
def ask(
    query: tuple[str, ...],
    vault: str | None,
    k: int,
    graph: bool,
    mode: str | None,
    no_rerank: bool,
    ab: bool,
    ab_modes: str,
    source: str | None,
    as_json: bool,
    as_context: bool,
    budget: int,
    no_update: bool,
    as_of: str | None,
    valid_at: str | None,
    no_server: bool,
    quiet: bool,
    depth: int | None,
    seeds: int,
    max_new: int,
    pool: int | None,
) -> None:
    """Recall the notes that answer QUERY.

    By default (mode hybrid+ppr): dense retrieval and BM25, with Personalized PageRank
    over the wikilinks voting in the ranking, fused by reciprocal rank, then a
    cross-encoder rerank when one is configured. --graph is the one-hop expansion instead,
    skipped for name-shaped queries. Before answering, notes changed since the last index
    are indexed (or, with --no-update, counted in a warning).

    When `brain serve` runs for the vault, the answer comes from it (the same output, in
    milliseconds instead of a model load), --as-of and --valid-at included (it keeps the last
    views of the past it opened); if it does not answer within $BRAIN_SERVE_TIMEOUT
    seconds, or with --no-server, the work is done in this process.

    \b
    Examples:
      brain ask "how should agent memory work"
      brain ask --graph "how should agent memory work"
      brain ask --json "sqlite wal"             # for agents
      brain ask --context --budget 4000 "…"     # paste into a prompt
      brain ask --ab "…"                         # hybrid vs hybrid+ppr, logged
      brain ask --as-of 2026-03-01 "rollout plan"  # what the notes said then
    """
    from .moments import parse_world_date, past_moment
    from .recall.types import DEFAULT_MODE, Mode
    from .vault import resolve_vault

    setup_logging(as_json or quiet)
    _refuse_ignored_ask_options(graph=graph, mode=mode, ab=ab, as_json=as_json, as_context=as_context)
    # Bytes the command line could not decode, before the query goes to brain serve or recall.
    text = valid_unicode(" ".join(query)).strip()
    from .errors import ConfigError, EmptyQuery, asks_nothing
    from .server.protocol import cut_query_said

    # A query over what a server takes is cut to it, the same with a server or without: one was
    # answered in-process, passing the server over, in seconds more for each MB.
    text, cut_said = cut_query_said(text)
    if asks_nothing(text):
        raise EmptyQuery(text)
    rerank = not no_rerank and config.rerank_model_name() is not None
    suffix = "+rerank" if rerank else ""
    settings = recall_settings(k, depth, seeds, max_new, pool)
    source = source or config.ab_source()
    moment = past_moment(as_of) if as_of is not None else None
    world_day = parse_world_date(valid_at) if valid_at is not None else None
    if ab:
        modes = [m.strip() for m in ab_modes.split(",") if m.strip()]
        if len(modes) != 2:
            raise click.BadParameter("give exactly two modes, e.g. vector,hybrid+ppr", param_hint="--ab-modes")
        given, modes = modes, [m if m.endswith("+rerank") else m + suffix for m in modes]
    else:
        if no_rerank and mode and mode.strip().lower().endswith("+rerank"):
            # the mode given wins over the flag, which would be dropped without a word
            raise click.UsageError(f"--no-rerank skips the cross-encoder and --mode {mode} runs it: give one")
        modes = [mode or (("gated" if graph else DEFAULT_MODE) + suffix)]
    try:  # a bad mode is an error before any work: a usage error (2), as a bad -k is
        parsed = [str(Mode.parse(name)) for name in modes]
    except ConfigError as exc:
        raise click.BadParameter(str(exc), param_hint="--ab-modes" if ab else "--mode") from None
    if ab and parsed[0] == parsed[1]:
        # A mode beside itself compares nothing, and its row read in `brain ab report` as a B
        # that fell back; with a reranker, hybrid,hybrid+rerank was hybrid+rerank twice.
        why = (
            f" ({suffix} is added to each with a reranker configured: --no-rerank leaves it to the modes given)"
            if str(Mode.parse(given[0])) != str(Mode.parse(given[1]))
            else ""
        )
        raise click.BadParameter(
            f"{given[0]},{given[1]} runs {parsed[0]} twice{why}: give two modes", param_hint="--ab-modes"
        )
    root = resolve_vault(vault)
    past = moment is not None or world_day is not None
    if cut_said:  # once the command is known good: said before the answer, in the result too (below)
        warn(cut_said)
    results, passed_over = (
        (None, None)
        if no_server
        else _ask_server(root, text, modes, settings, update=not no_update, as_of=as_of, valid_at=valid_at)
    )
    if results is None:
        from .recall.opening import open_recaller

        recaller = open_recaller(
            root, update=not no_update, progress=not (as_json or quiet), as_of=moment, valid_at=world_day
        )
        try:
            results = recaller.compare(text, modes, settings)
        finally:
            recaller.close()
        if passed_over:  # said on stderr, and in the result too (--json's reader reads stdout)
            for result in results:
                result.warnings.insert(0, passed_over)
    if cut_said:  # said on stderr above
        for result in results:
            result.warnings.insert(0, cut_said)
    if ab:
        _ask_ab(results[0], results[1], root, settings, source, as_json, past=past, quiet=quiet)
        return
    result = results[0]
    if as_json:
        from .output import result_json

        emit_json(result_json(result))
    elif as_context:
        from .output import context_parts

        bundle, left_out = context_parts(result, budget)
        found = len(result.results)
        if left_out and not bundle:  # exit 0 with an empty bundle read as "the vault knows nothing"
            raise ConfigError(
                f"--budget {budget:,} holds none of the {plural(found, 'note')} found: "
                f"the path of each is longer than it; give a larger --budget"
            )
        if left_out:
            warn(
                f"{plural(left_out, 'note')} of {found} left out of --context: the path alone is longer than --budget {budget:,}"
            )
        click.echo(bundle)
    else:
        from .output import result_text

        click.echo(result_text(result))
        if quiet:
            return
        if result.graph_used:
            added = result.candidates_added
            notes = f"{added} note{'' if added == 1 else 's'}"
            if "ppr" in result.mode:  # "0 notes added by PageRank and the anchor and bridge lanes" read as a
                # graph that did nothing, where its PageRank had a vote in every rank (lanes: internal words)
                said = f"{notes} found only through the links; PageRank over the links also voted on the order"
            else:
                said = f"{notes} added one hop from the top hits"
            click.echo(f"\n(graph: {said})", err=True)
        elif graph and result.gate.entity:
            click.echo(escaped(f"\n(graph skipped: {result.gate.reason})"), err=True)


def _refuse_ignored_ask_options(*, graph: bool, mode: str | None, ab: bool, as_json: bool, as_context: bool) -> None:
    """An option `brain ask` would drop is a usage error: each was ignored without a word
    (`--graph --mode vector` ran vector, `--json --context` printed JSON)."""
    given = click.get_current_context().get_parameter_source
    if as_json and as_context:
        raise click.UsageError("--json and --context are two outputs: give one")
    if graph and mode:
        raise click.UsageError("--graph is the mode gated: give --graph or --mode, not both")
    if ab and (graph or mode):
        raise click.UsageError("--ab compares the two --ab-modes: give the modes there, not --graph or --mode")
    if ab and as_context:
        raise click.UsageError("--ab prints its own comparison (or --json): --context does not go with it")
    if not ab and any(given(name) is click.core.ParameterSource.COMMANDLINE for name in ("ab_modes", "source")):
        raise click.UsageError("--ab-modes and --source go with --ab")
    if not as_context and given("budget") is click.core.ParameterSource.COMMANDLINE:
        raise click.UsageError("--budget goes with --context (the characters of its bundle)")


# Asks at most, within BRAIN_SERVE_TIMEOUT, while the server takes no question (``busy``, or its
# place closed for another client's before it was read: ``client.Refused``), after a jittered
# pause of 12-25 ms, doubling to 50-100 ms (``client.RETRY_PAUSES``): 0.6 s at most in all. The first
# refusal loaded the model in this process (10 s with MiniLM, and a second copy of the index in
# memory) when the server would have answered a moment later.
ASK_TRIES = 8


def _ask_server(
    root: Path,
    text: str,
    modes: list[str],
    settings: RecallSettings,
    *,
    update: bool,
    as_of: str | None = None,
    valid_at: str | None = None,
) -> tuple[list[RecallResult] | None, str | None]:
    """The results from the vault's `brain serve`, or None (then the caller works in-process);
    and, when a server runs but was passed over, why. ``as_of`` and ``valid_at`` go as typed: the
    server reads them by the same rules (brain/moments.py)."""
    import logging

    from .server import client, runtime

    log = logging.getLogger("brain")
    try:
        results = client.ask(
            root,
            text,
            modes,
            settings,
            update=update,
            timeout=config.serve_timeout(),
            same_index=True,
            as_of=as_of,
            valid_at=valid_at,
            tries=ASK_TRIES,
        )
    except client.Dropped as exc:  # it took the question and closed without an answer
        why = str(exc)
    except client.NoServer as exc:
        if not runtime.lock_is_held(root):  # no server: answering here is the plain path
            return None, None
        why = str(exc)  # a server runs and was passed over: never in silence
        if runtime.read_record(root) is None:  # removed under it, or not written yet: nothing says where it listens
            holder = runtime.lock_holder(root)
            pid = f" (pid {holder})" if holder else ""
            if runtime.server_starting(root):
                why = f"brain serve for {root} is starting{pid}"
            else:
                why = f"brain serve for {root} holds the vault's lock{pid}, but its record (serve.json) is gone"
    else:
        for message in dict.fromkeys(w for r in results for w in r.warnings):  # as an in-process run logs them
            log.warning("%s", message)
        return results, None
    log.warning("%s; answering in this process", why)
    return None, f"{why}; answering in this process"


def _ask_ab(
    a: RecallResult,
    b: RecallResult,
    root: Path,
    settings: RecallSettings,
    source: str,
    as_json: bool,
    *,
    past: bool,
    quiet: bool = False,
) -> None:
    from .db import BrainDatabaseError, connection
    from .output import ab_summary, result_json, side_by_side
    from .telemetry import diff, log_ab

    row = diff(a, b, settings.k)
    row_id, not_logged = None, None
    if past:  # the log is of everyday recall: a row of the past would count in this week's figures
        not_logged = (
            "recall over the past (--as-of, --valid-at) is shown, not logged: the A/B log is of everyday recall"
        )
    else:
        try:
            with connection() as conn:
                row_id = log_ab(conn, row, source=source, vault=str(root))
        except BrainDatabaseError as exc:  # telemetry never costs the answer: it is printed, and this said
            not_logged = str(exc)
    if not_logged:
        warn(f"not logged to ab_recall: {not_logged}")
    if as_json:
        emit_json(
            {
                "a": result_json(a),
                "b": result_json(b),
                "ab_recall_id": row_id,
                **({"ab_recall_error": not_logged} if not_logged else {}),
                "new_in_top_k": row.new_in_top_k,
                "via_graph": row.via_graph,
            }
        )
        return
    click.echo(side_by_side(a, b))
    click.echo(ab_summary(row, settings.k))
    if row_id is not None and not quiet:
        click.echo(f"logged to ab_recall #{row_id} (source {source!r})", err=True)


@cli.command()
@click.argument("note")
@vault_option
@click.option(
    "--heading",
    callback=not_blank("names no heading", "give one, e.g. 'Setup > Linux'", "for the whole note"),
    help="Only this section: its heading, or the end of its path ('Setup > Linux').",
)
@click.option(
    "--max-chars", type=click.IntRange(200, 10_000_000), default=40_000, show_default=True, help="Cut the text here."
)
@click.option(
    "--as-of",
    "as_of",
    metavar="WHEN",
    help="The note as it was then, from brain's history (WHEN as `brain ask --as-of` reads it: 2026-03-01, "
    "2026-03-01T14:30+03, 7d, yesterday, вчера); a note renamed since is found by either name.",
)
@click.option("--json", "as_json", is_flag=True, help="Print one JSON object (text, frontmatter, headings, ...).")
@library_errors
def note(note: str, vault: str | None, heading: str | None, max_chars: int, as_of: str | None, as_json: bool) -> None:
    """Print NOTE, read from disk now (with --as-of, as it was then); NOTE is a vault-relative
    path, a title or an alias.

    What is printed: a header line (the note's title and path), a blank line, then the note's
    body: its frontmatter left out, line endings as \\n, blank lines at its start and end
    dropped, bytes that are not UTF-8 as U+FFFD. Into a pipe or a file its escape sequences are
    kept as they are; to a terminal each control character is shown as its escape (\\x1b[31m).

    Only indexed notes can be read, as the index reaches them: a note in a folder linked in
    from elsewhere is read. A name with `..` or an absolute path is refused, and so is a note
    whose link now leads where the index would not go (a dot-folder, a .brainignore'd file, a
    file that is no note).

    With --as-of, the note as brain recorded it at that moment (what MCP's get_note gives with
    as_of): its text, title and path then, and under the header a line saying which version
    that is (when brain saw it begin and end) and where the note is now. A note renamed since
    is found by its name then or now; one that did not exist then is an error saying when it
    did. The moment is read as `brain ask --as-of` reads it (a date means the end of that day,
    local time unless it names a zone): `brain note "Rollout plan" --as-of 2026-03-01` prints
    what it said at the end of 1 March. `brain history NOTE` lists the versions there are.

    \b
    Examples:
      brain note "Graph RAG"
      brain note "AI/Graph RAG.md" --heading Pitfalls
      brain note Home --json
      brain note "Graph RAG" --as-of today
    """
    from .moments import past_moment
    from .reading import read_note
    from .recall.timeline import read_note_at

    moment = past_moment(as_of) if as_of is not None else None  # a bad moment is said before any reading
    with index_read(vault) as (root, store), search_hint(note, store if moment is None else None):
        if moment is None:
            data = read_note(store, root, note, heading=heading, max_chars=max_chars)
        else:
            data = read_note_at(store, root, note, moment, heading=heading, max_chars=max_chars)
    _say_ambiguity(note, data)
    if as_json:
        emit_json(data)
        return
    from .text import in_column, literal

    # The header is brain's line, each of the note's fields cleaned on its own (into a pipe too:
    # a file name holding a line break forged a line of it there), on one line.
    heading = f" › {in_column(data['heading'])}" if data["heading"] else ""
    header = f"{in_column(data['title'])}  ({literal(data['path'])}{heading})\n"
    if moment is not None:
        from .recall.timeline import version_line

        header += version_line(data, moment) + "\n"
    if _stdout_is_terminal():
        # The note's own escape sequences would act on it (a title set, the clipboard written
        # by OSC 52): shown as text.
        click.echo(header + "\n" + terminal_safe(data["text"].strip("\n")))
    else:  # a pipe or a file gets the text as it is on disk (click.echo would drop its CSI)
        click.echo(header + "\n" + data["text"].strip("\n"), color=True)
    if data["truncated"]:
        click.echo(f"\n… cut at {max_chars} of {data['chars']} characters (--max-chars)", err=True)


def _say_ambiguity(ref: str, data: dict[str, Any]) -> None:
    """A name several notes answer to: which was shown and which were not, on stderr (the
    output stays the note's; --json says it in ``ambiguous``)."""
    from .reading import NoteMatch

    message = NoteMatch(data["path"], tuple(data["ambiguous"])).ambiguity(ref)
    if message:
        click.echo(escaped(message), err=True)


def _stdout_is_terminal() -> bool:
    import sys

    return sys.stdout.isatty()


@cli.command()
@click.argument("note")
@vault_option
@click.option("--json", "as_json", is_flag=True, help="Print one JSON object (links, backlinks).")
@library_errors
def neighbours(note: str, vault: str | None, as_json: bool) -> None:
    """The links of NOTE (as written, and where each resolves) and the notes linking to it.

    NOTE is named as `brain note` takes it: a vault-relative path, a title or an alias.

    \b
    Examples:
      brain neighbours "Graph RAG"
      brain neighbours "AI/Graph RAG.md" --json
    """
    from .reading import neighbours as note_neighbours

    with index_read(vault) as (_root, store), search_hint(note, store):
        data = note_neighbours(store, note)
    _say_ambiguity(note, data)
    if as_json:
        emit_json(data)
        return
    from .text import in_column, literal

    # Each of the vault's fields on its own (an escape's start ends with its field) and on its
    # row: a file name holding a line break ended it, the rest at the terminal's first cell.
    # Paths and what a link says as written (breaks escaped), a title spaced.
    lines = [f"{in_column(data['title'])}  ({literal(data['path'])})", f"\nlinks ({len(data['links'])}):"]
    written: dict[str, int] = {}  # the same link written again is one line with its count (not 20,000 lines)
    for link in data["links"]:
        where = literal(link["path"] or link["status"])
        anchor = f"#{literal(link['anchor'])}" if link["anchor"] else ""
        line = f"  → [[{literal(link['target'])}{anchor}]]  {where}" + (
            f"  ({link['kind']})" if link["kind"] != "wikilink" else ""
        )
        written[line] = written.get(line, 0) + 1
    lines += [line + (f"  ×{times}" if times > 1 else "") for line, times in written.items()]
    lines.append(f"\nbacklinks ({len(data['backlinks'])}):")
    for link in data["backlinks"]:  # one per note, kind and anchor: the anchor says how two lines differ
        anchor = f" #{literal(link['anchor'])}" if link["anchor"] else ""
        lines.append(
            f"  ← {literal(link['path'])}{anchor}" + (f"  ({link['kind']})" if link["kind"] != "wikilink" else "")
        )
    click.echo("\n".join(lines))


@cli.group()
def ab() -> None:
    """The A/B log of `brain ask --ab`: does the graph earn its keep?"""


@ab.command("report")
@since_option("rows logged", "`brain turns --since` and `brain recalls --since` read it", default="7d")
@click.option(
    "--source",
    callback=not_blank("is no label", "give one", "for every source"),
    help="Only rows with this source label.",
)
@click.option("--json", "as_json", is_flag=True, help="Print one JSON object.")
@library_errors
def ab_report(since: str, source: str | None, as_json: bool) -> None:
    """Weekly figures: queries, share where the graph changed the top k, notes promoted.

    \b
    Examples:
      brain ab report
      brain ab report --since 30d --source demo
      brain ab report --since 2026-11-01 --json
    """
    from .db import connection
    from .telemetry import parse_since, report, rows_before
    from .text import in_column

    with connection(read_only=True) as conn:
        data = report(conn, parse_since(since), source)
        earlier = 0 if as_json or data["rows_from"] else rows_before(conn, data["since"], source)
    if as_json:
        emit_json(data)
        return
    if not data["rows_from"]:  # no row in the window: say how to get one, as `brain turns` does
        of = f" with source {terminal_safe(repr(source))}" if source else ""
        if earlier:
            click.echo(
                f"no A/B rows logged{of} since {data['since']} UTC; {plural(earlier, 'row')} before it"
                " (--since 30d, or an earlier date, reaches back)"
            )
        else:
            how = "brain ask --ab" + (f" --source {terminal_safe(shell_word(source))}" if source else "")
            how += ' "a question"'
            click.echo(f"no A/B rows logged{of} yet ({how} logs one)")
        return
    total = data["all"]
    pair = ""
    if len({(g["mode_a"], g["mode_b"]) for g in data["rows_from"]}) == 1:  # else rows from: names each
        first = data["rows_from"][0]
        pair = f" ({in_column(str(first['mode_a']))} vs {in_column(str(first['mode_b']))})"
    click.echo(f"since {data['since']} UTC" + (f", source {source!r}" if source else ""))
    click.echo(
        f"queries: {total['queries']}{pair}   graph changed the top k: {total['changed_top_k']} "
        f"({total['share_changed']:.0%})   notes promoted via links: {total['promoted_via_graph']}"
    )
    if data["not_compared"]:
        click.echo(
            f"left out: {data['not_compared']} where B ran as A (a stage of B fell back: rows from"
            " shows which; its warnings in the row say why)"
        )
    if len(data["rows_from"]) > 1:  # the figures are over all of them: say so
        ks = len({g["k"] for g in data["rows_from"]}) > 1  # a top k named only where they differ
        # Each label cleaned and spaced on the line (terminal_safe keeps a line break, which ended
        # it in the middle of the list, and a tab): a source is typed, a row may be hand-edited.
        groups = ", ".join(
            f"{in_column(str(g['source']))} {in_column(str(g['mode_a']))} vs {in_column(str(g['mode_b']))}"
            + (f" top {g['k']}" if ks else "")
            + f" ({g['queries']})"
            for g in data["rows_from"]
        )
        several = len({g["source"] for g in data["rows_from"]}) > 1
        click.echo(f"rows from: {groups}" + ("; --source picks a source" if several else ""))
    if data["by_gate"]:
        click.echo(f"\n{'gate':<12}{'queries':>8}{'changed':>9}{'share':>8}{'promoted':>10}{'added/q':>9}")
        for r in data["by_gate"]:
            click.echo(
                f"{r['gate']:<12}{r['queries']:>8}{r['changed_top_k'] or 0:>9}{(r['share_changed'] or 0):>8.0%}"
                f"{r['promoted_via_graph'] or 0:>10}{r['avg_candidates_added'] or 0:>9}"
            )
    if data["top_promoted"]:
        titles = ", ".join(f"{in_column(str(t['title']))} ({t['times']})" for t in data["top_promoted"])
        click.echo(f"\nmost promoted via links: {titles}")


def _confirm_discarding_history(vault: str | None) -> bool:
    """`--rebuild` without --keep-history or --yes over an index with a past: say what history
    would go, and ask (not on a terminal, stop). True when the user chose to discard it. A
    damaged index whose history cannot be read (the file damaged, a table of the history gone)
    offers no choice: the rebuild says its history stays in the folder moved aside; one that
    lost another table is asked about as a sound one. An index without a past has nothing to lose."""
    from .index.health import uncarried_history
    from .index.store import IndexStore
    from .index.upgrades import newer_migrations
    from .moments import local_time
    from .vault import resolve_vault

    directory = config.index_dir(resolve_vault(vault))
    if newer_migrations(directory):  # a newer brain's: moved aside whole, its history with it
        return False
    held = IndexStore.history_at(directory)
    if held is None or held.get("damaged") or not (held["past_versions"] or held["closed_edges"]):
        return False
    # its tables read, the file may still be damaged: --keep-history would not carry it (one
    # quick_check, only over an index with a past)
    if uncarried_history(directory):
        return False
    since = f", kept since {local_time(held['since'])}" if held["since"] else ""
    message = (
        f"`brain index --rebuild` builds a new index, and this one's history would go: "
        f"{plural(held['past_versions'], 'past version')} of {plural(held['notes_with_past'], 'note')} "
        f"and {plural(held['closed_edges'], 'closed link')}{since}"
    )
    if not _interactive():
        raise click.ClickException(f"{message}. Add --keep-history to carry it over, or --yes to discard it")
    if not click.confirm(f"{message}.\nDiscard it? (--keep-history carries it over)", default=False, err=True):
        raise click.Abort()
    return True


def _offer_an_unrecorded_index(vault: str | None) -> None:
    """A first `brain index` where the one index of the home that records no vault path (made
    before brain recorded one, not indexed since) holds this vault's notes: the vault was moved,
    or it is a copy of one still there, which nothing in the index tells. On a terminal, asked
    (yes: taken over, history included); else said, and a new index built as before."""
    import os

    from .vault import resolve_vault

    root = resolve_vault(vault)
    directory = config.index_dir(root)
    if os.path.lexists(directory):  # the one stat of every run but a first
        return
    from .index import moved

    if moved.left_behind(root, directory):
        return
    found = moved.made_before_recording(root, directory)
    if len(found) != 1:
        return
    said = f"{found[0]}, an index made before brain recorded its vault's path, holds this vault's notes"
    if not _interactive():
        click.echo(
            escaped(
                f"brain: {said}: if this vault was moved from there, stop this run and run `brain index` on a "
                "terminal, which offers to take it over, history included; this run builds a new index"
            ),
            err=True,
        )
        return
    if click.confirm(
        escaped(f"{said}.\nWas this vault moved from there? Yes: its index and history are this vault's; no: a copy"),
        default=False,
        err=True,
    ):
        moved.adopt(root, directory, found[0])
        click.echo(escaped(f"brain: {root}: the index {found[0]} is this vault's now, history included"), err=True)


def _history_line(h: dict) -> str:
    """history: 40 past versions of 12 notes (2 deleted), 95 past chunks, 31 closed links; 0.4 MB, 18% of index.db"""
    line = (
        f"history: {plural(h['past_versions'], 'past version')} of {plural(h['notes_with_past'], 'note')}"
        f" ({h['deleted_notes']} deleted), {h['past_chunks']} past chunks, {h['closed_edges']} closed links"
    )
    if h["bytes"] is not None and h["database_bytes"]:
        line += f"; {h['bytes'] / 1e6:.1f} MB, {h['bytes'] / h['database_bytes']:.0%} of index.db"
    interval = h.get("version_interval") or 0
    saves = f", saves within {_interval(interval)} as one" if interval else ""
    return line + f"  (keeping {h['keep_versions']} past versions per note{saves})"


def _interval(seconds: float) -> str:
    """300 → "5 min", 90 → "90 s", 7200 → "2 h"."""
    for unit, size in (("h", 3600), ("min", 60)):
        if seconds >= size and seconds % size == 0:
            return f"{seconds / size:g} {unit}"
    return f"{seconds:g} s"


def _register_subcommands() -> None:
    # Each area keeps its commands beside its library code; they are plain click objects,
    # imported here cheaply (no heavy imports at module level in any of them).
    from .ledger.cli import hook, turns

    cli.add_command(hook)
    cli.add_command(turns)
    from .evaluation.cli import eval_command

    cli.add_command(eval_command, name="eval")
    from .history_cli import history_command, prune_command

    cli.add_command(history_command)
    cli.add_command(prune_command)
    from .server.cli import serve

    cli.add_command(serve)
    from .mcp.cli import mcp

    cli.add_command(mcp)
    from .autorecall.cli import recalls

    cli.add_command(recalls)
    from .backup_cli import backup_command

    cli.add_command(backup_command)


_register_subcommands()
