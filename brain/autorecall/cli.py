"""``brain recalls``: what the prompt hook showed the agent, and whether it was used.

``brain.cli`` imports this module at start-up: nothing heavy at module level.
"""

from __future__ import annotations

import math
from typing import Any

import click

from ..cli_options import session_option, since_option
from ..cli_support import emit_json, library_errors, list_or_stats_flags
from ..text import escaped, plural, terminal_safe


@click.command()
@click.option(
    "-n",
    "--limit",
    type=click.IntRange(min=1),
    default=10,
    show_default=True,
    help="How many prompts (without --stats).",
)
@session_option
@since_option("prompts recorded", "`brain turns --since` reads it")
@click.option(
    "--stats", is_flag=True, help="Per day: prompts with and without notes and why, latency, notes then read or edited."
)
@click.option(
    "--days", type=click.IntRange(min=1), default=14, show_default=True, help="With --stats: how many days back."
)
@click.option("--json", "as_json", is_flag=True, help="Print JSON instead of text.")
@library_errors
def recalls(limit: int, session: str | None, since: str | None, stats: bool, days: int, as_json: bool) -> None:
    """What the prompt hook (`brain hook install --prompt`) added to recent prompts, or why nothing.

    With --stats, per day: how many prompts got notes and how many none (and why), the hook's
    p50/p95 latency over the prompts that asked the server, and how many of the notes shown the
    agent then read or edited later in the same session (from `brain turns`: install both hooks).

    \b
    Examples:
      brain recalls
      brain recalls --since today
      brain recalls --stats --days 7
      brain recalls --session 491e126e --json
    """
    if stats and session:  # the report covers every session: a filter it ignored looked applied
        raise click.UsageError("--session lists one session's prompts; --stats covers every session")
    if stats and since is not None:  # --stats counts the last --days days: it would be ignored
        raise click.UsageError("--since goes with the list; --stats takes --days")
    list_or_stats_flags(stats)
    after = None
    if since is not None:
        from ..telemetry import parse_since

        after = parse_since(since).replace(" ", "T")  # as the rows' created_at is written
    from ..db import connection
    from ..ledger.deferred import caught_up_lines
    from .store import recent_recalls, report

    for line in caught_up_lines():  # prompts the hook kept aside while an upgrade waited for a command
        click.echo(escaped(line), err=True)
    with connection(read_only=True) as conn:
        data: Any = (
            report(conn, days=days) if stats else recent_recalls(conn, limit=limit, session=session, since=after)
        )
    if as_json:
        emit_json(data)
    elif stats:
        click.echo(_format_stats(data))
    elif not data and (session or since is not None):
        said = "no prompts recorded" + (f" for session {session!r}" if session else "")
        click.echo(terminal_safe(said + (f" since {since!r}" if since is not None else "")))
    elif not data:
        click.echo("no prompts recorded yet (brain hook install --prompt --vault V, then use Claude Code)")
    else:
        click.echo("\n\n".join(_format_recall(row) for row in data))


def _one_line(text: object, width: int = 100) -> str:
    from ..output import flat  # here: brain --help need not load brain.output

    return flat(text, width)


def _number(value: object) -> float | None:
    """A stored figure, or None when the row holds something else (a hand-edited or older row)."""
    if isinstance(value, (int, float)) and not isinstance(value, bool) and math.isfinite(value):
        return float(value)
    return None


def _format_recall(row: dict[str, Any]) -> str:
    from ..moments import recorded_local
    from ..output import clip
    from ..text import literal

    when = recorded_local(_one_line(row.get("created_at")))  # local, as --since and --stats read days
    latency = _number(row.get("latency_ms"))
    ms = f"{latency:.0f} ms" if latency is not None else "? ms"
    if row.get("reason"):
        what = f"nothing: {_one_line(row['reason'])}"
    else:
        shown = row.get("shown") or 0
        notes_shown = plural(shown, "note") if isinstance(shown, int) else f"{_one_line(shown)} notes"
        what = f"{notes_shown}, {_one_line(row.get('chars') or 0)} chars"
    lines = [f"{when}  session {_one_line(row.get('session_id') or '?')[:8]}  {what} ({ms})"]
    lines.append(f"  prompt  {_one_line(row.get('prompt')) or '(empty)'}")
    notes = row.get("notes")
    for note in notes if isinstance(notes, list) else []:
        if not isinstance(note, dict):
            continue
        via = f", via {_one_line(note['via'])}" if note.get("via") else ""
        cosine = _number(note.get("dense_score"))
        score = "?" if cosine is None else f"{cosine:.2f}"
        path = clip(literal(str(note.get("path"))), 1000)  # as written: its spaces and breaks are its name
        lines.append(f"  shown   {path}  (cosine {score}{via})")
    if row.get("detail"):
        lines.append(f"  why     {_one_line(row['detail'])}")
    return "\n".join(lines)


def _ms(value: object) -> str:
    number = _number(value)
    return "-" if number is None else f"{number:.0f}"


def _share(part: int, whole: int) -> str:
    return f"{part / whole:.0%}" if whole else "-"


def _format_stats(data: dict[str, Any]) -> str:
    total = data["all"]
    span = "day" if data["days"] == 1 else f"{data['days']} days"  # --days 1 read "last 1 days"
    lines = [f"last {span}: {plural(total['prompts'], 'prompt')} reached the prompt hook"]
    if not total["prompts"]:
        return lines[0] + " (brain hook install --prompt --vault V, then use Claude Code)"
    why = ", ".join(f"{_one_line(reason)} {n}" for reason, n in total["reasons"].items())
    lines.append(f"  with notes {total['with_notes']}, without {total['without_notes']}" + (f" ({why})" if why else ""))
    lines.append(
        f"  latency over the {plural(total['asked'], 'prompt')} that asked the server: "
        f"p50 {_ms(total['p50_ms'])} ms, p95 {_ms(total['p95_ms'])} ms"
    )
    lines.append(
        f"  notes shown {total['notes_shown']}: then read {total['notes_read']} "
        f"({_share(total['notes_read'], total['notes_shown'])}), edited {total['notes_edited']}; "
        f"prompts whose notes were used {total['prompts_used']} of {total['with_notes']}"
    )
    lines += [
        "",
        f"{'day':<12}{'prompts':>8}{'notes':>7}{'none':>6}{'p50 ms':>8}{'p95 ms':>8}{'shown':>7}{'read':>6}{'edited':>8}",
    ]
    for d in data["per_day"]:
        lines.append(
            f"{d['day']:<12}{d['prompts']:>8}{d['with_notes']:>7}{d['without_notes']:>6}{_ms(d['p50_ms']):>8}"
            f"{_ms(d['p95_ms']):>8}{d['notes_shown'] or 0:>7}{d['notes_read']:>6}{d['notes_edited']:>8}"
        )
        if d["reasons"]:
            lines.append(f"{'':12}none: " + ", ".join(f"{_one_line(r)} {n}" for r, n in d["reasons"].items()))
    return "\n".join(lines)
