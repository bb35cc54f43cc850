"""Click commands of the hooks and the turn ledger: ``brain hook install|uninstall|stop|prompt``, ``brain turns``.

``brain.cli`` imports this module at start-up, so nothing heavy (and not ``brain.cli``
itself) is imported at module level here.
"""

from __future__ import annotations

from collections.abc import Callable
from pathlib import Path
from typing import Any

import click

from ..cli_options import not_blank, session_option, since_option, vault_option
from ..cli_support import emit_json, library_errors, list_or_stats_flags, one_file, project_folder_hint
from ..text import escaped, literal, plural, shell_word, terminal_safe


@click.group()
def hook() -> None:
    """Claude Code hooks: the turn ledger (Stop) and automatic recall (UserPromptSubmit).

    \b
    brain hook install                           record every turn (./.claude/settings.json)
    brain hook install --user                    the same, for every project (~/.claude/settings.json)
    brain hook install --prompt --vault ~/notes  add the vault's relevant notes to every prompt
    brain hook uninstall                         remove brain's hooks again (both kinds)
    """


_settings_options = [
    click.option("--user", is_flag=True, help="Edit ~/.claude/settings.json (every project)."),
    click.option(
        "--settings",
        "settings_file",
        type=click.Path(dir_okay=False, path_type=str),  # the text: a Path reads "" as "."
        callback=not_blank("names no file", "give the settings file", "for ./.claude/settings.json", to=Path),
        help="Edit this settings file instead.",
    ),
]


def _with_settings_options(fn: Callable[..., Any]) -> Callable[..., Any]:
    for option in reversed(_settings_options):
        fn = option(fn)
    return fn


@hook.command()
@_with_settings_options
@click.option("--stop", "stop_hook", is_flag=True, help="The Stop hook: the turn ledger (the default).")
@click.option(
    "--prompt", "prompt_hook", is_flag=True, help="The UserPromptSubmit hook: the vault's notes added to each prompt."
)
@vault_option
@click.option("--dry-run", is_flag=True, help="Print the commands that would be written; change nothing.")
@library_errors
def install(
    user: bool, settings_file: Path | None, stop_hook: bool, prompt_hook: bool, vault: str | None, dry_run: bool
) -> None:
    """Add brain's hooks to Claude Code's settings (the project's, or --user).

    Without --prompt, the Stop hook that records every turn (`brain turns`). With --prompt, the
    hook that adds the vault's notes relevant to each prompt, asked of the vault's running
    `brain serve` (add --stop for both). Merges into the existing file, keeps a backup
    (settings.json.bak-<time>), and is safe to run again. The commands name this brain by
    absolute path and carry BRAIN_HOME / BRAIN_DB when they are set, and the prompt hook the
    vault (--vault or BRAIN_VAULT), so the hooks use what this shell's brain uses.
    """
    from . import install as setup

    kinds = (["stop"] if stop_hook or not prompt_hook else []) + (["prompt"] if prompt_hook else [])
    root = None
    if prompt_hook:
        from ..vault import resolve_vault

        root = resolve_vault(vault)
    elif vault:
        raise click.UsageError("--vault is for the prompt hook: add --prompt")
    one_file(user, settings_file, "--settings")
    path = setup.settings_path(user=user, settings=settings_file)
    commands = {kind: setup.hook_command(kind, root if kind == "prompt" else None) for kind in kinds}
    if dry_run:
        click.echo(f"would write to {literal(str(path))}:")
        for kind, command in commands.items():
            click.echo(f"  {setup.HOOKS[kind][0]}: {command}")
        return
    with project_folder_hint(not user and settings_file is None):
        change = setup.install_hooks(path, commands)
    click.echo(terminal_safe(change.message))  # the commands it lists are the settings file's
    if change.changed:
        # Claude Code's hooks docs ("Configuration safety"): it takes a snapshot of the hooks at
        # startup and applies an edit made meanwhile only once it is reviewed in /hooks; the
        # install had said "added" and a running session went on without it.
        click.echo(
            "note: a Claude Code session already running keeps the hooks it started with: "
            "start a new one, or review the change in its /hooks menu",
            err=True,
        )
    _other_scope_advice(path, commands)
    if "stop" in kinds:
        _ledger_advice()
    if root is not None:
        _prompt_hook_advice(root)


def _other_scope_advice(path: Path, commands: dict[str, str]) -> None:
    """Claude Code runs the user's hooks and the project's together: a brain hook in the other
    file that records to another database is said (that file is not this command's to change)."""
    import os

    from ..errors import BrainError
    from . import install as setup

    user = setup.settings_path(user=True)
    try:
        other = setup.settings_path() if os.path.abspath(path) == os.path.abspath(user) else user
        if os.path.abspath(other) == os.path.abspath(path):
            return
        data = setup.load_settings(other)
    except BrainError:  # no working directory, an unreadable file: nothing to compare with
        return
    found = setup.mismatched(data or {}, commands, every_kind=True)
    if found is not None:
        kind, command, mine = found
        click.echo(
            escaped(
                f"note: the {setup.HOOKS[kind][1]} in {other} runs with {setup.describe_locations(command)}, "
                f"this {setup.HOOKS[mine][1]} with {setup.describe_locations(commands[mine])}: Claude Code runs "
                "both, and `brain recalls` cannot join rows in two databases; install them from one shell"
            ),
            err=True,
        )


def _ledger_advice() -> None:
    """The Stop hook exits 0 whatever happens, and logs into the brain home: one this user may not
    search (mode 000) loses every turn unsaid, and was said at install only as its .env unread."""
    from .. import config
    from ..file_state import unreachable

    said = unreachable(config.db_path(), "the brain database")
    if said:
        click.echo(escaped(f"note: the Stop hook cannot record turns until then: {said}"), err=True)


def _prompt_hook_advice(root: Path) -> None:
    """What the prompt hook needs that the settings file cannot give it: an index and a server."""

    from .. import config
    from ..index.files import INDEX_FILE
    from ..server import runtime

    vault = shell_word(root)  # a command to paste: "Obsidian Vault" must stay one word
    if not (config.index_dir(root) / INDEX_FILE).exists():
        click.echo(escaped(f"note: {root} has no index yet: run `brain index --vault {vault}`"), err=True)
    if not runtime.lock_is_held(root):
        click.echo(
            escaped(
                "note: the prompt hook asks a running server and adds nothing without one: "
                f"`brain serve --vault {vault} --detach`"
            ),
            err=True,
        )


@hook.command()
@_with_settings_options
@click.option("--stop", "stop_hook", is_flag=True, help="Only the Stop hook.")
@click.option("--prompt", "prompt_hook", is_flag=True, help="Only the prompt hook.")
@library_errors
def uninstall(user: bool, settings_file: Path | None, stop_hook: bool, prompt_hook: bool) -> None:
    """Remove brain's hooks from Claude Code's settings (both kinds, unless --stop or --prompt).

    Nothing but brain's own entries is touched.
    """
    from . import install as setup

    one_file(user, settings_file, "--settings")
    kinds = tuple(k for k, chosen in (("stop", stop_hook), ("prompt", prompt_hook)) if chosen) or tuple(setup.HOOKS)
    click.echo(terminal_safe(setup.uninstall(setup.settings_path(user=user, settings=settings_file), kinds).message))


@hook.command()
def stop() -> None:
    """Record the turn that just ended (run by Claude Code, JSON on stdin).

    Exits 0 and prints nothing, whatever happens; errors go to <brain home>/logs/hook.log.
    """
    from .hook import run_stop_hook

    raise SystemExit(run_stop_hook())


@hook.command()
def prompt() -> None:
    """Add the vault's notes relevant to a prompt (run by Claude Code, JSON on stdin).

    Asks the running `brain serve` of BRAIN_VAULT (written into the command by `brain hook
    install --prompt`) and prints one JSON object whose additionalContext holds, under one
    header, each note above the relevance threshold: title, path › heading, the best passage,
    and `via` when the graph found it. At most BRAIN_PROMPT_K notes and BRAIN_PROMPT_CHARS
    characters; a note already shown in the session is not shown again unless it changed.

    Prints nothing for slash commands, acknowledgements and very short prompts, without a
    server, or when no answer comes within BRAIN_PROMPT_BUDGET seconds; never loads a model,
    always exits 0. Every prompt leaves a row in `brain recalls`; errors and the reason for
    an empty answer go to <brain home>/logs/hook.log.
    """
    from ..autorecall.hook import run_prompt_hook

    raise SystemExit(run_prompt_hook())


@click.command()
@click.option(
    "-n",
    "--limit",
    type=click.IntRange(min=1),
    default=10,
    show_default=True,
    help="How many turns.",
)
@session_option
@click.option(
    "--project",
    callback=not_blank("names no project", "give its folder's name", "for every project"),
    help="Only this project (the git root's folder name).",
)
@since_option("turns begun", "`brain ab report --since` and MCP recent_turns read it")
@click.option(
    "--stats", is_flag=True, help="Turns recorded; per day and project, top tools, most-touched files of the last days."
)
@click.option(
    "--days",
    type=click.IntRange(min=1),
    default=14,
    show_default=True,
    help="With --stats: how many days (with turns) to list per day and count tools and files over.",
)
@click.option("--json", "as_json", is_flag=True, help="Print JSON instead of text.")
@library_errors
def turns(
    limit: int, session: str | None, project: str | None, since: str | None, stats: bool, days: int, as_json: bool
) -> None:
    """The last recorded turns: ask, summary, files, tools, commands.

    \b
    Examples:
      brain turns
      brain turns --since today
      brain turns --stats
      brain turns --session 491e126e --json
    """
    list_or_stats_flags(stats)
    if stats and since is not None:  # --stats counts the last --days days with turns: it would be ignored
        raise click.UsageError("--since goes with the list; --stats takes --days")
    after = None
    if since is not None:
        from ..telemetry import parse_since

        after = parse_since(since).replace(" ", "T")  # recent_turns' ISO 8601, as the MCP tool gives it
    from ..db import connection
    from .deferred import caught_up_lines
    from .store import recent_turns, turn_stats

    for line in caught_up_lines():  # turns the hooks kept aside while an upgrade waited for a command
        click.echo(escaped(line), err=True)
    # Reading only: a read-only brain home or database file still answers.
    with connection(read_only=True) as conn:
        if stats:
            data = turn_stats(conn, project=project, session=session, days=days)
        else:
            rows = recent_turns(conn, limit=limit, session=session, project=project, since=after)
    if stats:
        if as_json:
            emit_json(data)
        else:
            click.echo(_format_stats(data, days))  # projects and paths from transcripts: each field cleaned
        return
    if as_json:
        emit_json(rows)
    elif not rows and (session or project or since is not None):
        asked = " and ".join(
            f"{what} {value!r}" for what, value in (("session", session), ("project", project)) if value
        )
        said = "no turns recorded" + (f" for {asked}" if asked else "") + (f" since {since!r}" if since else "")
        click.echo(terminal_safe(said))
    elif not rows:
        click.echo("no turns recorded yet (brain hook install, then use Claude Code)")
    else:
        # A prompt may hold pasted coloured output, a path or command an escape sequence (OSC 52
        # writes the clipboard): shown as text, never acting on the terminal. --json keeps them.
        click.echo("\n\n".join(_format_turn(row) for row in rows))  # each field cleaned as it is formatted


def _why_partial(row: dict[str, Any]) -> str:
    """Why the hook did not read a partial row's turn whole, told by the bytes it read: a turn
    read from a point on (its prompt past the read cap), none read, or the transcript's size
    then (out of time)."""
    if row.get("byte_start") is not None:
        return "its prompt lies more than 16 MB back in the transcript: only the turn's end was read"
    if row.get("byte_end") is None:
        return "its transcript could not be read (hook.log says why): only what the hook's input said"
    return "the hook ran out of time reading this turn: only what its input said"


def _one_line(text: object, width: int = 110) -> str:
    from ..output import flat  # here: brain --help need not load brain.output

    return flat(text, width)


def _short_path(path: str, cwd: str | None) -> str:
    if cwd and path.startswith(cwd.rstrip("/") + "/"):
        return path[len(cwd.rstrip("/")) + 1 :]
    return path


def _paths(paths: object, cwd: str | None, shown: int = 5) -> str:
    from ..text import literal

    paths = [str(p) for p in _list(paths)]
    text = ", ".join(literal(_short_path(p, cwd)) for p in paths[:shown])  # a line break in one ended its row
    return text + (f", … {len(paths) - shown} more" if len(paths) > shown else "")


def _list(value: object) -> list[Any]:
    """A JSON column's list, or none when a hand-edited (or older) row holds something else."""
    return value if isinstance(value, list) else []


def _format_turn(row: dict[str, Any]) -> str:
    from ..moments import recorded_local

    # local time, as --since and --stats read days (the ledger's UTC printed as it is, no zone
    # said, put a turn --since 2026-02-13 listed in Tokyo on the 12th)
    when = recorded_local(str(row.get("started_at") or row.get("created_at") or ""))
    # Each field cleaned on its own and kept to its row: a project or branch holding a line break
    # ended it, and one ending in an escape's start took the words after it.
    where = _one_line(row.get("project") or "?")
    if row.get("git_branch"):
        where += f"@{_one_line(row['git_branch'])}"
    lines = [f"{when}  {where}  session {_one_line(str(row.get('session_id')))[:8]}"]
    cwd = row.get("cwd") if isinstance(row.get("cwd"), str) else None
    tools: dict[str, Any] = row["tools"] if isinstance(row.get("tools"), dict) else {}
    commands = [str(c) for c in _list(row.get("commands"))]
    fields = [
        ("ask", _one_line(row.get("ask")) or "(no prompt found)"),
        ("summary", _one_line(row.get("summary"))),
        ("wrote", _paths(row.get("files_written"), cwd)),
        ("read", _paths(row.get("files_read"), cwd)),
        ("tools", ", ".join(f"{_one_line(k)}×{_one_line(v)}" for k, v in tools.items())),
    ]
    fields += [("$", _one_line(c, 100)) for c in commands[:5]]
    if len(commands) > 5:
        fields.append(("$", f"… {len(commands) - 5} more"))
    fields += [("decided", _one_line(str(d))) for d in _list(row.get("decisions"))]
    if _list(row.get("tool_errors")):
        fields.append(("errors", str(len(row["tool_errors"]))))
    for agent in _list(row.get("subagents")):
        if not isinstance(agent, dict):
            continue
        fields.append(("subagent", _one_line(f"{agent.get('type') or '?'}: {agent.get('description') or ''}")))
    if row.get("partial"):
        fields.append(("partial", _why_partial(row)))
    lines += [f"  {name:8} {value}" for name, value in fields if value]
    return "\n".join(lines)


def _format_stats(data: dict[str, Any], days: int) -> str:
    from ..text import literal

    lines = [
        f"{plural(data['turns'], 'turn')} recorded",
        "",
        f"turns per day and project (last {'day' if days == 1 else f'{days} days'} with turns):",  # not "1 days"
    ]
    # Each name from the transcripts cleaned and kept to its row (a line break in one ended it).
    lines += [f"  {_one_line(r['day'])}  {r['turns']:5}  {_one_line(r['project'])}" for r in data["per_day"]] or [
        "  (none)"
    ]
    lines += ["", "top tools on those days (uses, turns):"]
    lines += [f"  {r['uses']:6} {r['turns']:5}  {_one_line(r['tool'])}" for r in data["top_tools"]] or ["  (none)"]
    lines += ["", "most-touched files on those days (turns that wrote them):"]
    lines += [f"  {r['turns']:5}  {literal(str(r['file']))}" for r in data["top_files"]] or ["  (none)"]
    return "\n".join(lines)
