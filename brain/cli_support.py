"""What every CLI module shares: library errors as click errors, JSON output, logging.

Click, the standard library and brain.text only, so each area's commands (brain.cli,
brain.ledger.cli, brain.evaluation.cli) import it at module level without a cycle through brain.cli.
"""

from __future__ import annotations

import contextlib
import errno
import functools
import io
import json
import logging
import math
import os
import re
import sys
from collections.abc import Callable, Iterator
from typing import TYPE_CHECKING, Any, NoReturn

import click

from .errors import QUOTED_CHARS, BrainError, quoted
from .text import REPORTED, escaped, log_record

if TYPE_CHECKING:
    from pathlib import Path

    from .index.store import IndexStore


def library_errors(fn: Callable[..., Any]) -> Callable[..., Any]:
    """Turn a BrainError raised by the library into a clean CLI error, one line (``error_line``)."""

    @functools.wraps(fn)
    def wrapper(*args: Any, **kwargs: Any) -> Any:
        try:
            return fn(*args, **kwargs)
        except BrainError as exc:
            raise click.ClickException(error_line(str(exc), exc)) from exc

    return wrapper


class BrainGroup(click.Group):
    """`brain` itself: the boundary every command's output and error passes.

    An error's message names what it was given (a vault's path, a note's name): it is one line,
    its control characters and escape sequences written as escapes (``error_line``), as a log
    writes them, whoever raised it (click, a command, the library).

    A reader that stops early (``brain turns | head -1``) closes the pipe: the next write
    raised BrokenPipeError, which click turned into exit status 1. The reader took what it
    wanted: brain stops quietly with status 0, as ripgrep does (git dies of SIGPIPE, 141, which
    fails a pipeline under ``set -o pipefail``).

    A name that is not UTF-8 (a vault folder, a setting's value: undecodable bytes come in as
    surrogates) is written as its escape (``\\udcff``, as an error line writes it): where
    Python writes strictly (a UTF-8 locale other than C, macOS), `brain status` of such a
    vault was a UnicodeEncodeError and its traceback."""

    def main(self, *args: Any, **kwargs: Any) -> Any:
        if sys.stdout is None:  # `brain status >&-`: click.echo wrote nothing, and status 0
            sys.stdout = ClosedOutput()
        for stream in (sys.stdout, sys.stderr):
            if isinstance(stream, io.TextIOWrapper) and stream.errors == "strict":
                try:  # (the C locale's surrogateescape is kept: the bytes as they were)
                    stream.reconfigure(errors="backslashreplace")
                except (ValueError, OSError):  # closed, or already written to in a way that forbids it
                    pass
        return super().main(*args, **kwargs)

    def make_context(self, *args: Any, **kwargs: Any) -> click.Context:
        try:  # `brain --bogus`, `brain --help`, `brain --version`: parsed here, before invoke
            return super().make_context(*args, **kwargs)
        except click.exceptions.NoArgsIsHelpError:
            raise
        except click.UsageError as exc:
            _one_line_usage(exc)
            raise
        except OSError as exc:
            _output_error(exc)

    def invoke(self, ctx: click.Context) -> Any:
        try:
            return super().invoke(ctx)
        except click.exceptions.NoArgsIsHelpError:  # `brain hook` alone: its message is the help
            raise
        except click.ClickException as exc:
            exc.message = error_line(exc.message, exc.__cause__)  # type: ignore[misc]  # Final to click's typing; show() reads it
            if isinstance(exc, click.UsageError):
                _one_line_usage(exc)
            raise
        except OSError as exc:
            _output_error(exc)


class WordsCommand(click.Command):
    """A command whose one argument takes any number of words, which it joins with spaces (`brain
    ask`'s QUERY). Click's parser takes the arguments one at a time from the front of a list
    (``list.pop(0)``), a cost growing with the square of their number: `brain ask $(cat
    notes.txt)` of 100,000 words spent 0.7 s of CPU in it before anything else
    (``bench/many_words.py``). It is handed each run of words joined (``joined_words``)."""

    def parse_args(self, ctx: click.Context, args: list[str]) -> list[str]:
        arguments = [param for param in self.params if isinstance(param, click.Argument)]
        options = [param for param in self.params if isinstance(param, click.Option)]
        if [a.nargs for a in arguments] == [-1] and all(o.nargs == 1 for o in options):
            args = joined_words(args)
        return super().parse_args(ctx, args)


def joined_words(args: list[str]) -> list[str]:
    """``args`` with the words of each run of them after its first made one, joined with spaces
    (a word: an argument not starting with ``-``). The first of a run may be the value of the
    option before it; the others are words of the command's argument, whichever option takes one
    value, and joined with spaces as the command joins them, they read the same text."""
    out: list[str] = []
    run: list[str] = []  # the words of the run after its first
    after_word = False
    for arg in args:
        word = not arg.startswith("-")
        if word and after_word:
            run.append(arg)
            continue
        if run:
            out.append(" ".join(run))
            run = []
        out.append(arg)
        after_word = word
    if run:
        out.append(" ".join(run))
    return out


def _output_error(exc: OSError) -> NoReturn:
    """A closed pipe ends brain quietly (status 0); standard output failing otherwise
    (`brain eval --json > out.json` on a full disk, an I/O error) is one line, not Python's
    traceback; any other OSError is raised again."""
    if isinstance(exc, BrokenPipeError):
        _unread_output_dropped()
        raise click.exceptions.Exit(0) from None
    if not _output_failed(exc):
        raise exc
    raise click.ClickException(f"cannot write the output: {exc.strerror or exc}") from None


class ClosedOutput(io.TextIOBase):
    """Standard output when brain was started without one (``>&-``): a write fails as one to a
    closed descriptor does, so a command that has output to give says it could not (exit 1)."""

    def write(self, text: str) -> int:
        raise OSError(errno.EBADF, "standard output is closed")


def output_open(what: str) -> None:
    """Refuse, before doing anything, a command whose one report of what it did cannot be
    written: standard output is closed (``>&-``). `brain serve --detach >&-` started a server and
    then exited 1 (its "started" line failed), a server left running by a command that failed."""
    if isinstance(sys.stdout, ClosedOutput):
        raise click.ClickException(f"standard output is closed: {what}; give it one (`>/dev/null` drops the line)")


def echo_done(message: str, after_failure: Callable[[], str]) -> None:
    """``message``, the report of something done; where standard output fails (a full disk), the
    error says also what ``after_failure`` did or found (the server just started, stopped again).
    A closed pipe is the reader gone, as for any command: quiet, status 0."""
    try:
        click.echo(message)
    except BrokenPipeError:
        raise
    except OSError as exc:
        if not _output_failed(exc):
            raise
        raise click.ClickException(f"cannot write the output: {exc.strerror or exc}; {after_failure()}") from None


def _one_line_usage(exc: click.UsageError) -> None:
    """A usage error as one line, like every other error: click printed the command's usage and
    a "Try ... --help" line above it, four lines for `-k 0`. The help is named in the line."""
    if exc.ctx is None:
        return
    hint, shown = f" (`{exc.ctx.command_path} --help` explains)", exc.format_message

    def one_line() -> str:  # after click's own words ("Did you mean '--user'?")
        return _long_quotes_cut(shown().removesuffix(".")) + hint

    exc.format_message = one_line  # type: ignore[method-assign]
    exc.ctx = None  # show() prints the usage and its hint only with a context


# A value click quotes in its own usage error ("'…' is not a valid integer range"), longer than
# what brain quotes of a user's input (errors.quoted): its start only, and how long it was.
# Every quoted run is matched, short ones too, so a quote inside one never opens another.
_QUOTED_RUN = re.compile(r"'([^'\n]*)'|\"([^\"\n]*)\"")


def _long_quotes_cut(text: str) -> str:
    def cut(match: re.Match[str]) -> str:
        mark, inner = match.group()[0], match.group()[1:-1]
        if len(inner) <= QUOTED_CHARS:
            return match.group()
        import ast  # here: only an error this long needs it

        try:  # click quotes a value by its repr: the value itself, quoted as brain quotes one
            return quoted(ast.literal_eval(match.group()))
        except (ValueError, SyntaxError):
            return f"{mark}{inner[:QUOTED_CHARS]}{mark}… ({len(inner):,} characters)"

    return _QUOTED_RUN.sub(cut, text)


def error_line(message: str, cause: BaseException | None = None) -> str:
    """An error's ``message`` as stderr shows it: one line, every control character, escape
    sequence and invisible character written as its escape (``\\n``, ``\\x1b``, ``\\u202e``), as
    a log writes them. A line break came from what the message quotes (a vault's path holding one
    printed "vault not found: /tmp/a" and a line "b"; a library's message of several lines), never
    from brain: only an error that lists items a line each (``BrainError.listing``, ``cause``)
    keeps its breaks."""
    if isinstance(cause, BrainError) and cause.listing:
        return escaped(message)
    return log_record(message)


def _output_failed(exc: OSError) -> bool:
    """Whether ``exc`` is standard output failing (a full disk, an I/O error): raised where
    click.echo writes to it. Then what it still holds is dropped, so Python's flush at exit
    does not fail again (``Exception ignored ...`` and status 120)."""
    tb = exc.__traceback__
    while tb is not None and tb.tb_next is not None:
        tb = tb.tb_next
    stdout = sys.stdout
    if tb is None or stdout is None:
        return False
    if isinstance(stdout, ClosedOutput):  # nothing to drop: it holds nothing
        return tb.tb_frame.f_locals.get("self") is stdout
    if tb.tb_frame.f_locals.get("file") is not sys.stdout:
        return False
    null = os.open(os.devnull, os.O_WRONLY)
    try:
        os.dup2(null, stdout.fileno())
    finally:
        os.close(null)
    return True


def _unread_output_dropped() -> None:
    """What is still buffered for a closed pipe goes to /dev/null: its flush at exit failed again,
    Python's ``Exception ignored ... BrokenPipeError`` and status 120."""
    null = os.open(os.devnull, os.O_WRONLY)
    try:
        for stream in (sys.stdout, sys.stderr):
            try:
                stream.flush()
            except BrokenPipeError:
                os.dup2(null, stream.fileno())
    finally:
        os.close(null)


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


class _Escaped(logging.Formatter):
    """A warning names a file, and a file name may hold an escape sequence, a line break (Linux
    allows one, and it made a warning two lines) or a bidi override: each written as its escape
    (``\\x1b``, ``\\n``, ``\\u202e``), as a log file writes it (``text.log_record``). A traceback
    keeps its lines, indented under it."""

    def format(self, record: logging.LogRecord) -> str:
        record.message = record.getMessage()
        detail = self.formatException(record.exc_info) if record.exc_info else record.exc_text or ""
        return log_record(self.formatMessage(record), detail)


# One style for every warning on stderr: the library's, through logging (its level name), and
# those the CLI prints itself (warn), which printed "warning:" or "brain: warning:" before.
WARNING_PREFIX = "brain: WARNING: "


def warn(message: str) -> None:
    """``message`` on stderr as one line, as the library's warnings are (every control character,
    escape sequence and invisible format character written as its escape)."""
    click.echo(log_record(WARNING_PREFIX + message), err=True)


def setup_logging(quiet: bool = False) -> None:
    """Library warnings go to stderr as one line each. ``quiet`` (-q, --json) leaves out those the
    run reports otherwise (``text.REPORTED``: a note skipped or read with a warning, which the run's
    summary and --json count and `brain status` lists; a damaged index moved aside, said once
    after the run); any other warning still prints, since a
    CLI command has no log to keep it: -q dropped "the replaced index could not be deleted from
    …; delete it yourself", and --json a setting ignored, without a trace."""
    logger = logging.getLogger("brain")
    handler = next(
        (h for h in logger.handlers if isinstance(h, logging.StreamHandler) and getattr(h, "_brain", False)), None
    )
    if handler is None:
        handler = logging.StreamHandler()
        handler.setFormatter(_Escaped(WARNING_PREFIX.replace("WARNING", "%(levelname)s") + "%(message)s"))
        handler._brain = True  # type: ignore[attr-defined]
        logger.addHandler(handler)
    handler.stream = sys.stderr  # the one of this command (a second in one process, CliRunner's, had the first's)
    for old in [f for f in handler.filters if isinstance(f, _Reported)]:
        handler.removeFilter(old)
    if quiet:
        handler.addFilter(_Reported())
    logger.setLevel(logging.WARNING)


class _Reported(logging.Filter):
    """Leaves out a record logged with ``extra=REPORTED`` (``text.REPORTED``)."""

    def filter(self, record: logging.LogRecord) -> bool:
        return not any(getattr(record, key, False) for key in REPORTED)


def list_or_stats_flags(stats: bool) -> None:
    """`brain turns` and `brain recalls`: --days shapes only --stats, --limit only the list; either
    given to the other mode was ignored and looked applied (`--days 1` listed months-old turns)."""
    source = click.get_current_context().get_parameter_source
    if not stats and source("days") is click.core.ParameterSource.COMMANDLINE:
        raise click.UsageError("--days goes with --stats; the list takes --limit")
    if stats and source("limit") is click.core.ParameterSource.COMMANDLINE:
        raise click.UsageError("--limit goes with the list; --stats takes --days")


def one_file(user: bool, explicit: object, option: str) -> None:
    """--user and --settings (--config) each name the file to edit: given both, one was ignored
    (--settings won, and the user's own file was left as it was while install said it was done)."""
    if user and explicit is not None:
        raise click.UsageError(f"--user and {option} each name the file to edit: give one")


REFUSED = {errno.EACCES, errno.EPERM, errno.EROFS}


@contextlib.contextmanager
def project_folder_hint(project: bool) -> Iterator[None]:
    """An install into the project's file (./.claude/settings.json, ./.mcp.json) that the folder
    refused (run in /, a read-only checkout): the error said what failed and nothing to do next.
    It says where to run it instead, or --user."""
    from .errors import ConfigError

    try:
        yield
    except ConfigError as exc:
        cause = exc.__cause__
        if not project or not isinstance(cause, OSError) or cause.errno not in REFUSED:
            raise
        raise ConfigError(f"{exc}: run it in your project's folder, or with --user (every project)") from cause


@contextlib.contextmanager
def index_read(vault: str | None, *, quiet: bool = False) -> Iterator[tuple[Path, IndexStore]]:
    """The vault and its index, opened to read (a read-only brain home is fine), closed after;
    what fails inside is one line, as the open's failure is (a read of a newer brain's index
    whose schema changed was a traceback). ``quiet``: as ``setup_logging``'s (--json)."""
    from .index.health import built_index_dir, index_errors
    from .index.store import IndexStore
    from .vault import resolve_vault

    setup_logging(quiet)  # a warning of the index's (a newer brain upgraded it) is one line on stderr
    root = resolve_vault(vault)
    from .errors import BrainError
    from .server.client import rebuilding

    said = rebuilding(root)  # the index went from under a running `brain serve`, which builds it again
    if said is not None:
        raise BrainError(said)
    directory = built_index_dir(root)
    with index_errors(directory, root):
        store = IndexStore.open(directory, create=False, readonly_ok=True)
        try:
            yield root, store
        finally:
            store.close()


@contextlib.contextmanager
def search_hint(ref: str, store: IndexStore | None = None) -> Iterator[None]:
    """A name no note answers to, and none near it: the error says how to find the note by
    what it says (`brain note "agent memory design"` ended at "no note", nothing to try next;
    `brain note`, `brain neighbours` and `brain history` alike). With ``store``, a name a note
    had before says first what became of it (deleted, renamed) and how to read it."""
    from .reading import NoNoteNamed  # not at start-up

    try:
        yield
    except NoNoteNamed as exc:
        went = None
        if store is not None:
            from .recall.timeline import where_it_went

            went = where_it_went(store, ref)
        if went is not None:
            path, left, when = went
            from .text import literal

            if left is None:
                said = f"it is an old name of {literal(path)}: `brain note {_typed(path)}` reads it"
            else:
                name = _typed(ref)
                said = (
                    f"{literal(path)} was {left} on {when}: `brain history {name}` lists its versions, "
                    f"`brain note {name} --as-of WHEN` reads it as it was"
                )
            raise NoNoteNamed(f"{exc}: {said}", suggested=True) from None
        if exc.suggested:
            raise
        linked = store.unresolved_named(ref) if store is not None else []
        # an Obsidian link to a note not written yet, or to a PDF: "no note" and `brain ask` said nothing of it
        if linked:
            raise NoNoteNamed(f"{exc}: {_linked_as(linked)}", suggested=True) from None
        if len(ref) > QUOTED_CHARS or not ref.isprintable():  # a name pasted by mistake is not said twice
            raise NoNoteNamed(f"{exc}: `brain ask` finds notes by what they say", suggested=True) from None
        raise NoNoteNamed(f"{exc}: `brain ask {_typed(ref)}` finds notes by what they say", suggested=True) from None


def _linked_as(linked: list[tuple[str, str]]) -> str:
    """What the links to a name no note answers to say it is: a note not written yet (dangling),
    or an attachment; and the notes that link to it, the first three named."""
    from .text import literal

    paths = list(dict.fromkeys(path for _status, path in linked))
    named = ", ".join(literal(path) for path in paths[:3]) + (f" and {len(paths) - 3} more" if len(paths) > 3 else "")
    if all(status == "attachment" for status, _path in linked):
        return f"it is an attachment, not a note (brain reads the *.md files), linked from {named}"
    return f"no note of that name is written yet; {named} link{'s' if len(paths) == 1 else ''} to it"


def _typed(ref: str) -> str:
    """``ref`` as a word of a command the user pastes: double quotes where they keep it whole."""
    import shlex

    typed = f'"{ref}"' if not set(ref) & set('"$`\\!') else shlex.quote(ref)
    # a name beginning with a dash is an option to the command ("-retries in kafka": no such option -r)
    return f"-- {typed}" if ref.startswith("-") else typed


def interactive() -> bool:
    """Whether a person can answer a question here (stdin a terminal): the commands that ask
    before they drop or take over what a user has (`brain index --rebuild`, `brain prune`)."""
    return sys.stdin.isatty()
