"""The MCP tools, on the official SDK (``mcp`` 2.x: ``MCPServer``), served over stdio.

Read-only tools: ``search``, ``get_note``, ``neighbours``, ``history``, ``recent_turns``,
``status``. Each
returns compact JSON text (the shapes ``brain ask --json``, ``brain note --json`` and friends
print); a refusal or an error the model can act on comes back as an ``isError`` result with a
one-line message. Tools are plain functions: the SDK runs them on worker threads, and the
backend is safe for that (socket calls are independent; this process's own index serialises
its queries on one thread).

stdout is the protocol: nothing here prints, logging goes to ``$BRAIN_HOME/logs/mcp.log`` and
warnings to stderr, configured before the SDK's own ``basicConfig`` can add a handler.
"""

from __future__ import annotations

import contextlib
import io
import json
import logging
import os
import re
import signal
import sys
import threading
from collections.abc import Callable
from pathlib import Path
from typing import TYPE_CHECKING, Annotated, Any, cast

from mcp.server.mcpserver import MCPServer
from mcp.server.mcpserver.exceptions import ToolError, UnexpectedToolError
from mcp.server.stdio import stdio_server
from mcp.shared.exceptions import MCPError
from mcp.types import (
    INVALID_PARAMS,
    INVALID_REQUEST,
    CallToolResult,
    ErrorData,
    RequestParams,
    TextContent,
    ToolAnnotations,
)
from pydantic import BeforeValidator, Field, ValidationError, ValidationInfo
from pydantic_core import PydanticCustomError

from .. import __version__, config
from ..errors import SUPERSEDED_ANSWER, BrainError, blank_said
from ..logfile import OneLineFormatter, log_handler, log_unknown_settings
from ..recall.types import BASE_MODES, DEFAULT_MODE
from ..server import client, protocol
from ..text import for_model, one_line_for_model
from .backend import Backend

if TYPE_CHECKING:  # stdio.py is imported as the session starts (run_stdio_async)
    from mcp.server.context import CallNext, HandlerResult, ServerRequestContext

    from .stdio import InFlight

log = logging.getLogger("brain")

MAX_K = 50
MAX_NEIGHBOURS = 2000  # links and backlinks neighbours gives at most (100 unless asked)
MAX_VERSIONS = 1000  # versions history gives at most (20 unless asked)


def _not_a_bool(value: Any) -> Any:
    """Refuse ``true`` and ``false`` for a number: pydantic's lax mode read them as 1 and 0, so an
    agent sending ``k: true`` got one note and no word that its call was wrong ("5", a number
    written as a string, is still taken: it says what it means)."""
    if isinstance(value, bool):
        raise PydanticCustomError(
            "int_type", "input should be a valid integer, not {value}", {"value": str(value).lower()}
        )
    return value


# Last in a whole-number argument's Annotated, after its Field: before it, pydantic could not
# put the Field's bounds in the integer's schema, and the schema said "ge" and "le", which no
# client reads, for JSON Schema's "minimum" and "maximum". At module level: the SDK reads the
# tools' annotations by name.
NOT_A_BOOL = BeforeValidator(_not_a_bool)

# A text that holds something, as a schema says it (clients do not all check): the tools' text
# arguments, the two they require (``query``, ``note``) refused blank by the protocol's check in
# the lines `brain ask ""` and `brain note ""` print.
SOME_TEXT: dict[str, Any] = {"minLength": 1, "pattern": r"\S"}
Required = Annotated[str, Field(json_schema_extra=SOME_TEXT)]


def _not_blank(what: str, give: str, otherwise: str) -> BeforeValidator:
    """An optional text argument refused empty or blank (``blank_said``), not read as left out:
    ``mode: ""`` searched with the default mode, ``heading: ""`` read the whole note, and
    ``project: ""``, ``text: " "`` and ``since: ""`` listed every turn, each with no word that
    the call was not understood."""

    def check(value: Any, info: ValidationInfo) -> Any:
        if isinstance(value, str) and not value.strip():
            said = blank_said(value, what, give, info.field_name or "it", otherwise)
            raise PydanticCustomError("blank", "{said}", {"said": said})
        return value

    return BeforeValidator(check)


def _text(max_length: int) -> Any:
    """A text of 1 to ``max_length`` characters, one of them not white space, as its schema says."""
    return Field(min_length=1, max_length=max_length, pattern=r"\S")


Mode = Annotated[
    Annotated[str, _text(64)] | None,  # a longer one is no mode, and its error would say it back whole
    _not_blank("names no mode", "give one, e.g. hybrid+ppr", "for the default"),
]
Moment = Annotated[
    Annotated[str, _text(protocol.MAX_MOMENT_CHARS)] | None,
    _not_blank("is no moment", "give a date (2026-02-28), a date and time, or a span back (30d)", "for the present"),
]
Day = Annotated[
    Annotated[str, _text(protocol.MAX_MOMENT_CHARS)] | None,
    _not_blank("is no date", "give one, e.g. 2026-03-01", "for every note"),
]
Heading = Annotated[
    Annotated[str, _text(protocol.MAX_NOTE_CHARS)] | None,
    _not_blank("names no heading", "give one, e.g. 'Setup > Linux'", "for the whole note"),
]
Project = Annotated[
    Annotated[str, _text(4096)] | None,
    _not_blank("names no project", "give its folder's name", "for every project"),
]
Words = Annotated[
    Annotated[str, _text(10_000)] | None,
    _not_blank("holds no words", "give words of the ask or the summary", "for every turn"),
]
Since = Annotated[
    Annotated[str, _text(64)] | None,
    _not_blank("is no time", "give a span like 7d, 12h, 2w or a date like 2026-11-01", "for every turn"),
]

INSTRUCTIONS = """\
brain is the long-term memory of the user: their markdown vault{about}, indexed with embeddings,
BM25 and the [[wikilink]] graph, plus a ledger of earlier Claude Code turns.
Use it whenever a question may touch what the user knows, wrote, decided or planned (projects,
people, meetings, designs, notes), or what was done in earlier sessions.
Start with `search` (a question in plain words); read a hit in full with `get_note`; follow its
links with `neighbours`; `recent_turns` lists what earlier sessions asked and changed.
brain also keeps the vault's past: for "what did the notes say in February?" give `search` and
`get_note` an `as_of`; for "when did this note change?" call `history`.
Everything is read-only and stays inside the vault. An answer's `warnings` say what to weigh
in it (notes changed since the last index; this brain older than its index)."""

SEARCH_DOC = """\
Find the notes in the user's vault that answer a question: semantic search plus keyword (BM25)
search plus the wikilink graph, fused. Use it first, for any question about the user's own
knowledge, projects, people, decisions or past work; phrase the query as a question or as the
words the note would contain. Returns JSON: `results` ranked best first, each with `path`,
`title`, `heading`, `snippet` (a passage around the query words), `score`, `date`, and `via`
when the note was reached through a link from another hit. `warnings` and `stale_notes` say when
the index is catching up with recent edits. Read a result in full with get_note(path).

brain keeps the vault's history. Give `as_of` (a date such as 2026-02-28, meaning the end of
that day; a date and time; a span back such as 30d, 2w; today, yesterday or now, or in Russian
сегодня, вчера, сейчас) to search the notes as they were
then, for questions about the past ("what did my notes say about the rollout in February?",
"what did we decide before the March meeting?"); each result then carries `recorded_from` and
`recorded_to`, the span of the version it comes from, and its `path` then: `now` is its path
today (null: deleted since) and `path_reused` says a different note is at that path now. Give `valid_at` (a date) to keep only
notes whose frontmatter says they held on that day (not yet superseded, not ended); it
combines with `as_of`. Leave both unset for the present."""

GET_NOTE_DOC = """\
Read one note of the vault as it is on disk now: `text` (markdown, without the frontmatter),
`frontmatter`, `title`, `aliases`, `tags`, `date`, and its `headings` (the first that fit in
`max_chars`; `headings_total` counts them all). Name the note by its
vault-relative path (as search returns it), its title, or one of its aliases (a name several
notes share: `ambiguous` lists the ones not read; give the path). Give `heading` to
read only that section ("Setup", or a path such as "Setup > Linux"). Long notes are cut at
`max_chars` (`truncated` says so). Only notes inside the vault that brain indexes can be read:
absolute paths, `..` and symlinks out of the vault are refused.
Give `as_of` (a date, a date and time, a span back such as 30d, or today, yesterday, now:
сегодня, вчера, сейчас) to read the note as it was
then, from brain's history (`version` says when that text began and ended; a note renamed since
is found by either name; `now` is its path today, null once deleted, and `path_reused` says a
different note is at its path then now); use it with a search made `as_of` the same moment, or to see what a
note said before a change that `history` lists. A note that did not exist then is an error
saying when it did."""

NEIGHBOURS_DOC = """\
The wikilink neighbourhood of one note: `links` (each link as written, the note it resolves to
or `status` dangling/attachment, its kind wikilink/embed/markdown/property, and the #anchor) and
`backlinks` (the notes that link to it, with kind and anchor). Use it to explore around a search
hit: related decisions, the people in a meeting, the parts of a project. Name the note by path,
title or alias (`ambiguous`: the other notes the name fits). At most `limit` of each come back; `links_total`, `backlinks_total` and
`truncated` say when a note has more."""

RECENT_TURNS_DOC = """\
Earlier Claude Code turns recorded by brain's Stop hook, newest first: `turns`, each with what
the user asked (`ask`), how the assistant answered (`summary`), the files it wrote and read, the
commands it ran, the tools it used, with session, project, git branch and time; `warnings` say
what to weigh in them (a ledger a newer brain upgraded; turns the hook kept aside, not in the
ledger yet, so not listed, and when the first was kept). Use it to recall what was done before
("what did we change in the parser last week?"). Filter by `project` (the git repository's
folder name), `text` (words in the ask or the summary), `since` (30m, 12h, 7d, 2w, 1y, today,
yesterday, now, сегодня, вчера, сейчас, or a date like 2026-11-01: from its start, local time; a time and a zone may follow,
2026-11-01T09:00+03); `limit` caps the rows. Secrets were masked when the turns were stored."""

HISTORY_DOC = """\
The life of one note as brain saw it: its `versions`, newest last (each with `recorded_from` and
`recorded_to`, when brain saw it begin and end; `event`: created, changed, renamed, restored;
`ended`: changed, renamed, deleted, unreadable (the file denied to brain); `changes`: what changed against the version before, lines
added and removed and the sections and frontmatter keys touched), the `links` it gained and lost
and when, the `backlinks` other notes gained and lost to it (each names the other note's
`note_id`; `status`: dangling (a note not written yet) or attachment (a file that is no note)
when no note is at the other end, null for a note; `now`: its path today, null once it was
deleted, when `ended` and `ended_at` say how and when; `other_at_path`: the id of a different note at that path now), and the supersession chain
(`replaces`, `replaced_by`). Use it for "when did this note change?", "what was decided before
the revision?", "when did it stop linking to X?"; then read a version with
get_note(note, as_of=its recorded_from). Name the note by path, title or alias; a deleted note
by its last path or title, a renamed one by any of its names (`ambiguous`: the other notes the
name fits). At most `limit` versions come back, the newest; `earlier_versions` counts the older ones.
A path another note took names the note there now; `others_at_path` lists each note that lived
there too, with a moment it did: history(note, as_of=that moment) gives its life."""

STATUS_DOC = """\
The state of brain's memory for this vault: how many notes and chunks are indexed and with which
model, how many notes changed since the last index, whether a warm `brain serve` is running
(its uptime, queries answered and last update), and `building` (while this session builds an
index the vault did not have, how far it is: the other tools say it until it is done). And whether earlier sessions are being recorded:
`ledger_turns` (turns in the ledger), `ledger_last_turn` (when the newest began, UTC),
`ledger_kept_aside` (rows the hooks kept aside, not in the ledger yet: `brain turns` records
them), `ledger_rejected` (files kept aside that held no row brain can record), `ledger_newer`
(said when a newer brain upgraded the ledger) and `ledger_error` (why it cannot be read), as
`brain status --json` gives them. Use it when results look stale or empty, or recent_turns lacks
a turn."""


LOG_MAX_BYTES = 5_000_000  # mcp.log is moved to mcp.log.1 beyond this, and started afresh


def configure_logging() -> None:
    """Our log file and quiet stderr, before MCPServer() can install its own handlers."""
    # backslashreplace: a vault path that is not UTF-8 was a "Logging error" traceback on stderr
    file_handler = log_handler("mcp.log", LOG_MAX_BYTES, errors="backslashreplace")
    file_handler.setFormatter(OneLineFormatter("%(asctime)s pid=%(process)d %(name)s %(levelname)s %(message)s"))
    file_handler.setLevel(logging.INFO)
    stderr = logging.StreamHandler(sys.stderr)
    stderr.setLevel(logging.WARNING)
    stderr.setFormatter(_NoTraceback("brain mcp: %(levelname)s: %(message)s"))
    root = logging.getLogger()
    for handler in list(root.handlers):
        root.removeHandler(handler)
    root.addHandler(file_handler)
    log_unknown_settings(file_handler)
    root.addHandler(stderr)
    root.setLevel(logging.WARNING)
    brain = logging.getLogger("brain")
    for handler in list(brain.handlers):  # the CLI's stderr handler
        brain.removeHandler(handler)
    brain.setLevel(logging.INFO)
    brain.propagate = True
    quiet = logging.getLogger("asyncio")
    if not any(isinstance(each, _CtrlCAtShutdown) for each in quiet.filters):
        quiet.addFilter(_CtrlCAtShutdown())


class _NoTraceback(OneLineFormatter):
    """A record in one line, an error with it named at its end, its traceback left to mcp.log: the
    SDK logs a handler's failure with its traceback (an unknown prompt asked for was 30 lines of
    it on the client's stderr, which Claude Code shows as the server's log)."""

    def format(self, record: logging.LogRecord) -> str:
        if not (record.exc_info or record.exc_text or record.stack_info):
            return super().format(record)
        error = record.exc_info[1] if record.exc_info else None
        said = f"{type(error).__name__}: {(str(error).strip().splitlines() or [''])[0][:300]}; " if error else ""
        line = logging.makeLogRecord({**record.__dict__, "exc_info": None, "exc_text": None, "stack_info": None})
        line.msg, line.args = f"{record.getMessage()} ({said}its traceback is in {config.log_dir() / 'mcp.log'})", None
        return super().format(line)


class _CtrlCAtShutdown(logging.Filter):
    """Drops asyncio's report of a task that ended with the Ctrl-C alone.

    A Ctrl-C is raised in whichever task is running. When that is one of the SDK's (its stdout
    writer, in a task group) rather than the main one, asyncio.run's shutdown finds the main
    task ended with the group and logs it as an "unhandled exception during asyncio.run()
    shutdown", traceback and all, on the client's stderr (one clean-clone CI run in a few). It
    is the stop asked for; a group that holds any other error is still logged."""

    def filter(self, record: logging.LogRecord) -> bool:
        error = record.exc_info[1] if record.exc_info else None
        return error is None or not _only(error, KeyboardInterrupt)


ASKING = frozenset({"search", "get_note", "neighbours", "history"})  # the tools that ask the index (Backend.call)


class BrainServer(MCPServer):
    """``MCPServer`` with the client's stdin mended (``stdio.py``) and arguments that fail the
    tools' schemas said in one line, not pydantic's report with its links."""

    def __init__(self, *args: Any, **kwargs: Any):
        super().__init__(*args, **kwargs)
        from .stdio import UNREADABLE

        self.on_stdin_end: Callable[[], None] | None = (
            None  # called once the client's stdin has ended (``run``: _AfterStdin)
        )
        self.flow: InFlight | None = None  # the session's ``stdio.InFlight`` while it serves: tool calls wait for room

        self._lowlevel_server.add_request_handler(UNREADABLE, _Unreadable, _answer_unreadable)
        self._lowlevel_server.middleware.append(_say_invalid_params)

    async def call_tool(self, name: str, arguments: dict[str, Any], context: Any = None) -> Any:
        tool = self._tool_manager.get_tool(name)
        if tool is not None:
            # pydantic dropped an argument the tool does not take: `asof` for `as_of` searched
            # the present, and `top_k` gave 8 notes, with no word that the call was not understood
            taken = tool.parameters.get("properties", {})
            unknown = [each for each in arguments if each not in taken]
            if unknown:
                said = ", ".join(repr(each[:64]) for each in unknown[:5]) + (", …" if len(unknown) > 5 else "")
                raise ToolError(f"{name} takes no argument {said}: it takes {', '.join(taken) or 'none'}")
        # begun once its answer can be written: a client that read none had 128 calls worked on
        flow = self.flow
        working = flow.working(at_once=name in ASKING) if flow is not None else contextlib.nullcontext()
        try:
            async with working:
                return await super().call_tool(name, arguments, context)
        except ToolError as exc:
            cause = exc.__cause__
            if isinstance(exc, UnexpectedToolError) or not isinstance(cause, ValidationError):
                raise
            raise ToolError(invalid_arguments(cause)) from cause

    async def get_prompt(self, name: str, arguments: dict[str, Any] | None = None, context: Any = None) -> Any:
        if self._prompt_manager.get_prompt(name) is None:
            # the SDK's "Unknown prompt" was logged with its traceback on the client's stderr
            raise MCPError(INVALID_PARAMS, f"no prompt {name[:64]!r}: brain has no prompts, only tools")
        return await super().get_prompt(name, arguments, context)

    async def run_stdio_async(self) -> None:
        from .stdio import InFlight, client_stdin

        with client_stdin(on_end=self.on_stdin_end) as lines:
            async with stdio_server(stdin=cast(Any, lines)) as (read_stream, write_stream):
                lines.answer_on(write_stream)  # a line with no id to answer: its error, id null
                lowlevel = self._lowlevel_server
                # reading stops while 128 answers are unwritten
                flow = InFlight(hung_up=lines.hung_up, on_hang_up=lines.ended)
                self.flow = flow
                await lowlevel.run(
                    cast(Any, flow.reading(read_stream)),
                    cast(Any, flow.writing(write_stream)),
                    lowlevel.create_initialization_options(),
                )


class _Unreadable(RequestParams):
    why: str = ""


async def _answer_unreadable(context: Any, params: _Unreadable) -> ErrorData:
    """The answer to a request the SDK could not read (``stdio.mend`` hands it on as one for
    ``UNREADABLE``): an invalid request, saying why, where it was dropped unanswered."""
    return ErrorData(code=INVALID_REQUEST, message=f"brain mcp cannot read this request: {params.why}")


async def _say_invalid_params(ctx: ServerRequestContext[Any, Any], call_next: CallNext) -> HandlerResult:
    """Params the SDK refuses (a tools/call without a name, arguments a list) said: it answered
    "Invalid request parameters" alone (data ""), leaving the client nothing to mend."""
    try:
        return await call_next(ctx)
    except ValidationError as exc:
        why = one_line_for_model(invalid_arguments(exc))  # a key of the client's may hold a line break
        said = why if len(why) <= 300 else why[:299] + "…"
        raise MCPError(code=INVALID_PARAMS, message=f"Invalid request parameters: {said}") from exc


def invalid_arguments(error: ValidationError) -> str:
    """``k: input should be less than or equal to 50``: each argument that fails, in one line."""
    said = []
    for each in error.errors(include_url=False, include_input=False):
        where = ".".join(str(part) for part in each["loc"]) or "arguments"
        message = each["msg"]
        said.append(f"{where}: {message[:1].lower()}{message[1:]}")
    return "; ".join(said)


def build_server(root: Path, backend: Backend) -> BrainServer:
    """The server with its six read-only tools, each refusing arguments its schema does not list."""
    read_only = ToolAnnotations(read_only_hint=True, idempotent_hint=True, open_world_hint=False)
    server = BrainServer("brain", instructions=_instructions(root), version=__version__, log_level="WARNING")
    tools = [
        (SEARCH_DOC, _search_tool(backend)),
        (GET_NOTE_DOC, _get_note_tool(backend)),
        (NEIGHBOURS_DOC, _neighbours_tool(backend)),
        (HISTORY_DOC, _history_tool(backend)),
        (RECENT_TURNS_DOC, _recent_turns_tool(backend)),
        (STATUS_DOC, _status_tool(root, backend)),
    ]
    for description, function in tools:  # in this order: tools/list says them so
        server.tool(description=description, annotations=read_only, structured_output=False)(function)
    for tool in server._tool_manager.list_tools():  # said to clients: the calls are refused (call_tool)
        tool.parameters["additionalProperties"] = False
    return server


def _answer(backend: Backend, work: Callable[[], dict[str, Any]], *, reads_index: bool = True) -> CallToolResult:
    """A tool's result: ``work``'s data as compact JSON, or its failure as one line marked an error."""
    try:
        data = work()
        if reads_index and backend.older_than_index():  # every tool's answer, not search's alone
            data = _told_older(data)
    except (client.ServerError, BrainError) as exc:
        return CallToolResult(content=[TextContent(type="text", text=wire_text(str(exc)))], is_error=True)
    except Exception as exc:  # a bug of brain's: one line here, its traceback in mcp.log
        said = (str(exc).strip().splitlines() or [""])[0][:300]
        where = config.log_dir() / "mcp.log"
        message = f"brain failed on this call ({type(exc).__name__}: {said}); its traceback is in {where}"
        log.warning("%s", message)
        log.info("the traceback of that failure", exc_info=True)  # the file only: stderr takes warnings
        return CallToolResult(content=[TextContent(type="text", text=wire_text(message))], is_error=True)
    text = json.dumps(data, ensure_ascii=False, separators=(",", ":"))
    return CallToolResult(content=[TextContent(type="text", text=wire_text(text))])


# Each tool below is a function the SDK reads: its name is the tool's, its parameters' annotations
# (read by name from this module's globals: the types they use are imported at the top) its schema.


def _search_tool(backend: Backend) -> Callable[..., CallToolResult]:
    def search(
        query: Annotated[
            Required,
            Field(
                description="What to look for, in plain words or as a question; one over "
                f"{protocol.MAX_QUERY_CHARS:,} characters is asked with its first words up to that, "
                "as `warnings` says.",
            ),
        ],
        k: Annotated[int, Field(ge=1, le=MAX_K, description="How many notes to return."), NOT_A_BOOL] = 8,
        mode: Annotated[
            Mode,  # at most 64 characters: a longer one is no mode, and its error would say it back whole
            Field(
                description=f"Retrieval mode: one of {', '.join(BASE_MODES)} (default {DEFAULT_MODE}); "
                "leave it unset unless asked.",
            ),
        ] = None,
        as_of: Annotated[
            Moment,
            Field(
                description="Search the vault as it was then: a date (2026-02-28), a date and time, "
                "a span back (30d, 2w), or today, yesterday, now (сегодня, вчера, сейчас). Unset: now.",
            ),
        ] = None,
        valid_at: Annotated[
            Day,
            Field(
                description="Only notes whose frontmatter says they held on this date (2026-03-01).",
            ),
        ] = None,
    ) -> CallToolResult:
        def work() -> dict[str, Any]:
            from ..output import result_json
            from ..recall.types import Mode, RecallSettings

            chosen = mode or DEFAULT_MODE + ("+rerank" if config.rerank_model_name() else "")
            Mode.parse(chosen)
            settings = RecallSettings(k=k)
            past = {name: value for name, value in (("as_of", as_of), ("valid_at", valid_at)) if value is not None}
            # cut as `brain ask` cuts it (a pasted error log was refused), and said as it says it
            asked, cut_said = protocol.cut_query_said(query.strip())
            result = backend.call(
                "ask", query=asked, modes=[chosen], settings=protocol.settings_to_dict(settings), update=True, **past
            )
            data = result_json(protocol.decode_result(result["results"][0]))
            if cut_said:
                data["warnings"] = [cut_said, *data["warnings"]]
            return data

        return _answer(backend, work)

    return search


def _get_note_tool(backend: Backend) -> Callable[..., CallToolResult]:
    def get_note(
        note: Annotated[Required, Field(description="The note: its vault-relative path, its title, or an alias.")],
        heading: Annotated[Heading, Field(description="Only this section: a heading, or a path 'A > B'.")] = None,
        max_chars: Annotated[int, Field(ge=200, le=200_000, description="Cut the text here."), NOT_A_BOOL] = 40_000,
        as_of: Annotated[
            Moment,
            Field(
                description="Read the note as it was then: a date (2026-02-28), a date and time, "
                "a span back (30d), or today, yesterday, now (сегодня, вчера, сейчас). Unset: as it is on disk now.",
            ),
        ] = None,
    ) -> CallToolResult:
        fields: dict[str, Any] = {"note": note, "max_chars": max_chars}
        if heading is not None:
            fields["heading"] = heading
        if as_of is not None:
            fields["as_of"] = as_of
        return _answer(backend, lambda: _unhidden(_headings_within(backend.call("note", **fields), max_chars)))

    return get_note


def _neighbours_tool(backend: Backend) -> Callable[..., CallToolResult]:
    def neighbours(
        note: Annotated[Required, Field(description="The note: its vault-relative path, its title, or an alias.")],
        limit: Annotated[
            int,
            Field(ge=1, le=MAX_NEIGHBOURS, description="At most this many links, and as many backlinks."),
            NOT_A_BOOL,
        ] = 100,
    ) -> CallToolResult:
        return _answer(backend, lambda: _first(backend.call("neighbours", note=note), limit))

    return neighbours


def _history_tool(backend: Backend) -> Callable[..., CallToolResult]:
    def history(
        note: Annotated[
            Required, Field(description="The note: its path, title or alias (a deleted one: its last path).")
        ],
        limit: Annotated[
            int, Field(ge=1, le=MAX_VERSIONS, description="At most this many versions, the newest."), NOT_A_BOOL
        ] = 20,
        as_of: Annotated[
            Moment,
            Field(
                description="The note the name named then (a date, a date and time, a span back such as 30d, "
                "or today, yesterday, now: сегодня, вчера, сейчас): "
                "one that lived at a path another note holds now (`others_at_path` gives the moment).",
            ),
        ] = None,
    ) -> CallToolResult:
        fields: dict[str, Any] = {"note": note, "last": limit}
        if as_of is not None:
            fields["as_of"] = as_of
        return _answer(backend, lambda: backend.call("history", **fields))

    return history


def _recent_turns_tool(backend: Backend) -> Callable[..., CallToolResult]:
    logged: set[str] = set()  # what recent_turns said in the log of a newer ledger: once a session

    def recent_turns(
        project: Annotated[Project, Field(description="Only this project (the git repository's folder name).")] = None,
        text: Annotated[Words, Field(description="Only turns whose ask or summary holds these words.")] = None,
        since: Annotated[
            Since,
            Field(
                description="Only turns since: 30m, 12h, 7d, 2w, 1y, today, yesterday, now (сегодня, вчера, "
                "сейчас), or a date 2026-11-01 "
                "(a time and a zone may follow: 2026-11-01T09:00+03)."
            ),
        ] = None,
        limit: Annotated[int, Field(ge=1, le=200, description="At most this many turns."), NOT_A_BOOL] = 10,
    ) -> CallToolResult:
        # brain.db, not the index: its own warnings (a newer brain upgraded it)
        return _answer(
            backend,
            lambda: _turns(project=project, text=text, since=since, limit=limit, logged=logged),
            reads_index=False,
        )

    return recent_turns


def _status_tool(root: Path, backend: Backend) -> Callable[..., CallToolResult]:
    def status() -> CallToolResult:
        return _answer(backend, lambda: _status(root, backend))

    return status


def _told_older(data: dict[str, Any]) -> dict[str, Any]:
    """``data`` whose ``warnings`` say once that this brain is older than the index it read."""
    warnings = list(data.get("warnings") or [])
    if SUPERSEDED_ANSWER not in warnings:  # search's: its service said it already
        warnings.append(SUPERSEDED_ANSWER)
    return {**data, "warnings": warnings}


def _first(found: dict[str, Any], limit: int) -> dict[str, Any]:
    """``neighbours``' answer with at most ``limit`` links and backlinks, and how many there are:
    a hub note's thousands of backlinks were megabytes, over any client's cap on a tool's output."""
    cut = dict(found)
    for key in ("links", "backlinks"):
        items = found.get(key) or []
        cut[key] = items[:limit]
        cut[f"{key}_total"] = len(items)
    cut["truncated"] = any(cut[f"{key}_total"] > limit for key in ("links", "backlinks"))
    return cut


def _headings_within(found: dict[str, Any], max_chars: int) -> dict[str, Any]:
    """``get_note``'s answer with the first headings that fit in ``max_chars`` characters, and
    how many there are: a journal with a heading a day listed ~100 KB of them, whatever
    ``max_chars`` said, over Claude Code's cap on a tool's output (the note could not be read)."""
    headings = found.get("headings") or []
    kept: list[str] = []
    used = 0
    for each in headings:
        used += len(each) + 3  # its quotes and comma in the JSON
        if used > max_chars:
            break
        kept.append(each)
    return {**found, "headings": kept, "headings_total": len(headings)}


def _unhidden(found: dict[str, Any]) -> dict[str, Any]:
    """``get_note``'s answer with no text the user cannot see in Obsidian (``for_model``): the
    title, the headings and the text; the path stays exact, the model opens the note by it."""
    cleaned: dict[str, Any] = {
        key: for_model(found[key]) for key in ("title", "heading", "text") if isinstance(found.get(key), str)
    }
    if found.get("headings"):
        cleaned["headings"] = [for_model(each) for each in found["headings"]]
    return {**found, **cleaned}


def _instructions(root: Path) -> str:
    """The server's instructions, naming the vault and its size (read from the index, cheaply);
    the vault's folder on one line, as the prompt hook's header names it: a newline in its name
    started a line of the instructions of its own ("## SYSTEM", an instruction)."""
    about = f" at {one_line_for_model(str(root))}"
    from ..index.store import IndexStore

    notes = IndexStore.note_count_at(config.index_dir(root))  # None when there is no index yet
    if notes is not None:
        about += f" ({notes} notes)"
    return wire_text(INSTRUCTIONS.format(about=about))


_SURROGATE = re.compile("[\ud800-\udfff]")


def wire_text(text: str) -> str:
    """``text`` as UTF-8 can carry it: a lone surrogate (how Python keeps a byte of a path
    that is not UTF-8, e.g. a vault named in Latin-1) becomes U+FFFD. The SDK could not
    encode one: the answer was lost, and at ``initialize`` brain mcp died with a traceback."""
    return _SURROGATE.sub("\ufffd", text)


def _turns(*, project: str | None, text: str | None, since: str | None, limit: int, logged: set[str]) -> dict[str, Any]:
    """``recent_turns``' answer: the turns, and ``warnings`` saying when a newer brain upgraded
    the ledger (it was said in mcp.log alone, where the index's was said in every answer); said
    in the log once a session (``logged``), not on the client's stderr at every call."""
    from ..db import connection, newer_ledger_warning
    from ..ledger.state import kept_aside_warning
    from ..ledger.store import recent_turns
    from ..migrations import has_table
    from ..telemetry import parse_since

    after = parse_since(since, name="since").replace(" ", "T") if since else None
    # a damaged or read-only brain.db is one line; an older one is read as it is, not upgraded
    with connection(read_only=True, warn_newer=False, upgrade=False) as conn:
        turns = (
            recent_turns(conn, limit=limit, project=project, text=text, since=after) if has_table(conn, "turns") else []
        )
        newer = newer_ledger_warning(conn)
    if newer and newer not in logged:
        logged.add(newer)
        log.warning("%s", newer)
    # turns the hook kept aside: counted, never recorded here (`brain turns` does, or the newer brain)
    kept = kept_aside_warning(newer=newer is not None)
    return {"turns": turns, "warnings": [said for said in (newer, kept) if said]}


def _status(root: Path, backend: Backend) -> dict[str, Any]:
    from ..index.status import vault_status
    from ..ledger.state import ledger_state

    st = vault_status(root)
    server = client.status(root) if backend.use_server else None
    return {
        "vault": st.vault,
        "indexed": st.indexed,  # as `brain status --json`: no index yet is a key, not nulls to read
        # this process building the index (there was none), as the other tools say it; else null
        "building": backend.building(),
        "model": st.model,
        "notes": st.notes,
        "chunks": st.chunks,
        "links": st.links,
        "pending": st.pending,
        "skipped": len(st.skipped),
        "note_warnings": len(st.warnings),  # notes read with a warning (`warnings`: what is said of the answer)
        "server": server,
        # `brain status --json`'s ledger_* keys, read in this process (brain.db is the user's, not
        # the vault's): never created, upgraded nor caught up here
        **ledger_state(),
    }


def run(root: Path, *, embedder: Any = None) -> None:
    """``brain mcp``: serve the tools over stdio until the client closes stdin."""
    # started with `<&-` or `>&-` (then brain's stand-in for stdout has no buffer to talk over)
    if sys.stdin is None or getattr(sys.stdout, "buffer", None) is None:
        raise BrainError("brain mcp talks to its client over stdin and stdout, and one of them is closed")
    if isinstance(sys.stdout, io.TextIOWrapper):
        sys.stdout.reconfigure(line_buffering=True)  # a stray print must not wait for the exit
    configure_logging()
    backend = Backend(root, embedder=embedder)
    server = build_server(root, backend)
    backend.warm_up()
    log.info("brain mcp serving %s", root)
    interrupted = False
    previous = _bound_ctrl_c(CTRL_C_GRACE)
    after_stdin = _AfterStdin(STDIN_END_GRACE)
    server.on_stdin_end = after_stdin.start
    try:
        server.run()
    except BaseException as exc:
        if _holds(exc, KeyboardInterrupt):
            interrupted = True
            if not _only(exc, KeyboardInterrupt):  # tasks the Ctrl-C cut short, failing as it stopped them
                log.info("brain mcp stopped by Ctrl-C; what it cut short failed with it", exc_info=exc)
        elif _only(exc, BrokenPipeError):
            # The client closed its end of stdout (it quit, or crashed): nothing to answer to.
            log.info("the client stopped reading (broken pipe); brain mcp stops")
            _quiet_unwritten_answers()
        else:
            raise
    finally:
        after_stdin.cancel()
        if previous is not None:  # run in another program's process (a test's): its Ctrl-C is its own again
            signal.signal(signal.SIGINT, previous)
        backend.close()
    if interrupted:
        _end_now(130)


CTRL_C_GRACE = 2.0  # seconds the SDK's shutdown may take after Ctrl-C before the process ends anyway
# Seconds the session may outlive its client's stdin (answers the client is still reading, the
# SDK's shutdown) before the process ends anyway.
STDIN_END_GRACE = 5.0


class _AfterStdin:
    """Ends the process ``seconds`` after the client's stdin ended, unless ``run`` has ended first.

    A client that closed stdin with its answers unread and its end of stdout still open (it asked,
    never read, and closed: the pipe full) kept brain mcp waiting to write them for good, a
    process left behind. The SDK answers nothing asked after stdin ends (in-flight calls are
    answered "Connection closed"), and the index is only read: nothing is lost by ending."""

    def __init__(self, seconds: float):
        self.seconds = seconds
        self._lock = threading.Lock()
        self._timer: threading.Timer | None = None
        self._over = False  # run has ended: the timer must not end a process (a test's) that goes on

    def start(self) -> None:
        with self._lock:
            if self._over or self._timer is not None:
                return
            self._timer = threading.Timer(self.seconds, self._end)
            self._timer.daemon = True
            self._timer.start()

    def cancel(self) -> None:
        with self._lock:
            self._over = True
            if self._timer is not None:
                self._timer.cancel()

    def _end(self) -> None:
        with self._lock:
            if self._over:
                return
            log.warning(
                "the client closed stdin and left brain mcp's answers unread for %s s "
                "(its end of stdout still open): brain mcp stops without writing them",
                f"{self.seconds:g}",
            )
            _end_now(0)


def _bound_ctrl_c(seconds: float) -> Any:
    """Ctrl-C stops brain mcp within ``seconds``. It is raised as Python raises it and the SDK
    shuts down; when that shutdown waits on something that never comes (the Ctrl-C test hung
    past 15 s now and then, CI included, with the client's stdin still open; not caught in the
    act in a hundred runs here), the process ends anyway. A second Ctrl-C is Python's own.
    Returns the handler it replaced (None when it replaced none), for ``run`` to put back."""
    if threading.current_thread() is not threading.main_thread():
        return None

    def on_ctrl_c(signum: int, frame: Any) -> None:
        signal.signal(signal.SIGINT, signal.default_int_handler)
        watchdog = threading.Timer(seconds, _end_now, args=(130,))
        watchdog.daemon = True
        watchdog.start()
        raise KeyboardInterrupt

    return signal.signal(signal.SIGINT, on_ctrl_c)


def _only(exc: BaseException, kind: type[BaseException]) -> bool:
    """``exc`` is a ``kind``, alone or as every error of the SDK's task groups."""
    return all(isinstance(each, kind) for each in _leaves(exc))


def _holds(exc: BaseException, kind: type[BaseException]) -> bool:
    """``exc`` is a ``kind``, or one of the errors of the SDK's task groups is (under load a
    Ctrl-C landed while a task read stdin, and the group held that task's error beside it:
    its traceback went to the client's stderr)."""
    return any(isinstance(each, kind) for each in _leaves(exc))


def _leaves(exc: object) -> list[object]:
    """The errors inside ``exc``'s task groups, however nested; ``exc`` itself when it is none."""
    group = getattr(exc, "exceptions", None)
    if not isinstance(exc, BaseException) or not isinstance(group, tuple) or not group:
        return [exc]
    return [leaf for each in group for leaf in _leaves(each)]


def _quiet_unwritten_answers() -> None:
    """The SDK's writer of the wire still holds the answers the pipe refused, and Python 3.13
    reports the failure of its flush as the process ends ("Exception ignored in:
    <_io.BufferedWriter name=9>", BrokenPipeError: three lines on stderr, where 3.10 to 3.12 kept
    quiet). The client is gone, and the log says so already: a broken pipe reported thereafter
    is dropped, any other failure reported as before."""
    previous = sys.unraisablehook

    def hook(unraisable: Any) -> None:
        if not isinstance(unraisable.exc_value, BrokenPipeError):
            previous(unraisable)

    sys.unraisablehook = hook


def _end_now(status: int) -> None:
    """End the process after Ctrl-C without waiting for the SDK's worker threads: anyio's are
    not daemons, and one left idle by a tool call waits out its 10 s before the interpreter may
    exit (brain mcp took 10 s to stop on one Ctrl-C in twelve). Nothing is left to do: the
    index is only read, and the log is flushed here."""
    logging.shutdown()
    for stream in (sys.stdout, sys.stderr):
        with contextlib.suppress(Exception):
            stream.flush()
    os._exit(status)
