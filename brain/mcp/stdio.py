"""The client's lines on stdin, read for the SDK's stdio transport, mended where it would fail.

Two things the SDK's own reader gets wrong, both seen from a real client:

- A string with a lone UTF-16 surrogate escape (``"\\ud83d"``: what JavaScript's
  ``JSON.stringify`` writes for half of an emoji) is valid JSON, but not to pydantic's parser:
  the SDK dropped such a request without an answer, and the client waited for it for good.
  Here the line is read with Python's parser and written again with each lone surrogate as
  ``?`` (as ``brain serve``'s protocol encodes one), so the request is answered.
- The SDK reads on a worker thread that the process waits for: after Ctrl-C it stopped
  answering but did not exit until stdin closed. Here the reading thread is a daemon.
- A request the SDK's parser cannot read (a number of 5,000 digits, brackets nested 300 deep,
  ``params`` a list, no ``jsonrpc``) was dropped without an answer or a word in the log, and the
  client waited for it for good. When Python's parser finds its id, the line is handed on as a
  request for ``UNREADABLE``, which the server answers with an "invalid request" error saying
  why (``server.py``). A line with no id to answer is answered as JSON-RPC 2.0 says, with id
  null: one that is no JSON (cut short, nested deeper than either parser goes) a parse error
  (-32700), other JSON that is no message (a list, a number, an id of another type, a
  notification of another shape) an invalid request (-32600), and so is a line over
  ``MAX_LINE_CHARS``, dropped unread: the SDK dropped them all unanswered, and a client whose
  request it was waited for good. The client's answers to the server's requests are never
  answered, only said in ``mcp.log``.

``MCPServer.run`` runs on asyncio (anyio's default), which the hand-over uses.

The wire is a private copy of fd 0, and fd 0 points at the null device while serving (as the
SDK does when it reads stdin itself), so nothing else in the process can read the client's bytes.
"""

from __future__ import annotations

import asyncio
import contextlib
import io
import json
import logging
import os
import re
import select
import sys
import threading
import time
from collections.abc import AsyncIterator, Callable, Iterator
from typing import Any, BinaryIO

import anyio
from mcp import types
from mcp.shared.message import SessionMessage
from pydantic import ValidationError

from ..server import protocol

log = logging.getLogger("brain")

_SURROGATE_ESCAPE = re.compile(r"\\u[dD][89a-fA-F]")  # \ud800 to \udfff, a half of a pair
UNREADABLE = "brain/unreadable"  # the method a request the SDK cannot read is handed on as
MAX_DIGITS = 4300  # Python's own limit on the digits of an int read from text
# A line of the client longer than this is dropped unread: a request is a few KB (a query over
# 10,000 characters is asked cut to them), and the SDK's parser holds several copies of a line it reads.
MAX_LINE_CHARS = 16 * 1024 * 1024


def refusal(code: int, why: str) -> types.JSONRPCError:
    """The answer to a line of the client with no id to answer (JSON-RPC 2.0: its id is null)."""
    return types.JSONRPCError(
        jsonrpc="2.0", id=None, error=types.ErrorData(code=code, message=f"brain mcp cannot read this request: {why}")
    )


def mend(line: str) -> str | types.JSONRPCError:
    """``line`` as the SDK reads it: as it was, as JSON without a lone surrogate escape, or, when
    the SDK's parser cannot read it, as a request for ``UNREADABLE`` with the same id; or, with
    no id to answer, the answer to write back (``refusal``)."""
    if _SURROGATE_ESCAPE.search(line):
        try:
            line = protocol.encode(json.loads(line)).decode("utf-8")
        except (ValueError, RecursionError):  # not JSON: said below
            pass
    if not line.strip():
        return line  # the SDK skips a blank line, and "" is the end of stdin
    try:
        read = types.jsonrpc_message_adapter.validate_json(line, by_name=False)
        if not isinstance(read, types.JSONRPCNotification) or '"id"' not in line or "id" not in json.loads(line):
            return line
        # a request whose id is null or a fraction, which the SDK took for a notification: unanswered
        why = "an id is a string or a whole number"
    except ValidationError as exc:
        said = exc.errors(include_url=False)
        why = said[0]["msg"] if len(said) == 1 else "not a JSON-RPC 2.0 request"
    chars = len(line.rstrip("\n"))
    try:
        # strict=False: a control character left raw in a string (a NUL) still shows the id
        message = json.loads(
            line, strict=False, parse_int=lambda digits: int(digits) if len(digits) <= MAX_DIGITS else None
        )
    except (ValueError, RecursionError):
        log.warning("a line of the client is no JSON (%s characters: %s): answered as a parse error", chars, why)
        return refusal(types.PARSE_ERROR, why[:300])
    if isinstance(message, dict) and {"result", "error"} & message.keys():  # the client's answer to one of ours
        log.warning("dropped an answer of the client that cannot be read (%s characters: %s)", chars, why)
        return line  # the SDK drops it: an answer is never answered
    request_id = message.get("id") if isinstance(message, dict) else None
    if isinstance(request_id, (int, str)) and not isinstance(request_id, bool):
        log.info("a request of the client cannot be read (%s): answered as an invalid request", why)
        unreadable = {"jsonrpc": "2.0", "id": request_id, "method": UNREADABLE, "params": {"why": why[:300]}}
        return json.dumps(unreadable) + "\n"
    log.warning(
        "a line of the client is no JSON-RPC message with an id (%s characters: %s): answered as an invalid request",
        chars,
        why,
    )
    return refusal(types.INVALID_REQUEST, why[:300])


class ClientLines:
    """The client's lines, as the SDK's transport reads them: ``async for line in stdin``.

    A daemon thread reads them (a few ahead at most) and hands each to the event loop: the
    interpreter does not wait for it at exit, where it may wait for a line for good."""

    AHEAD = 4  # lines read before the server has taken them

    def __init__(self, wire: BinaryIO, *, on_end: Callable[[], None] | None = None):
        self._on_end = on_end  # called on the reading thread once stdin has ended (or failed)
        self._wire = wire
        self._text = io.TextIOWrapper(wire, encoding="utf-8", errors="replace")  # as the SDK reads it
        self._lines: asyncio.Queue[str | types.JSONRPCError | None] = asyncio.Queue()
        self._room = threading.Semaphore(self.AHEAD)
        self._reader: threading.Thread | None = None
        self._answers: Any = None  # the SDK's stream to the client (``answer_on``)

    def hung_up(self) -> bool:
        """Whether the client has closed its end of stdin, lines still unread in the pipe or not
        (``InFlight`` reads none while the client leaves its answers unread)."""
        try:
            poller = select.poll()
            poller.register(self._wire.fileno(), select.POLLIN)
            events = poller.poll(0)
        except (AttributeError, OSError, ValueError):  # no file (a test's stand-in)
            return False
        return any(event & (select.POLLHUP | select.POLLERR) for _, event in events)

    def ended(self) -> None:
        """Said when the client's stdin has ended before its lines are read (``on_end``)."""
        if self._on_end is not None:
            self._on_end()

    def answer_on(self, stream: Any) -> None:
        """Write the answers to lines with no id (``refusal``) on ``stream``, the SDK's write
        stream of ``SessionMessage``: the client's lines and the server's answers, in order."""
        self._answers = stream

    def __aiter__(self) -> ClientLines:
        return self

    async def __anext__(self) -> str:
        if self._reader is None:
            loop = asyncio.get_running_loop()
            self._reader = threading.Thread(target=self._read, args=(loop,), name="brain-mcp-stdin", daemon=True)
            self._reader.start()
        while True:
            line = await self._lines.get()
            self._room.release()
            if line is None:
                raise StopAsyncIteration
            if isinstance(line, str):
                return line
            await self._answer(line)

    async def _answer(self, refused: types.JSONRPCError) -> None:
        if self._answers is None:  # not serving yet, or a test reading the lines alone
            return
        with contextlib.suppress(anyio.ClosedResourceError, anyio.BrokenResourceError):  # the session has ended
            await self._answers.send(SessionMessage(refused))

    def _read(self, loop: asyncio.AbstractEventLoop) -> None:
        line: str | types.JSONRPCError | None = ""
        while line is not None:
            self._room.acquire()
            try:
                read = self._next_line()
                line = (mend(read) if isinstance(read, str) else read) or None  # "" is the end of stdin
            except (OSError, ValueError):  # the wire failed or was closed
                line = None
            if line is None and self._on_end is not None:
                self._on_end()
            try:
                loop.call_soon_threadsafe(self._lines.put_nowait, line)
            except RuntimeError:  # the loop has ended (Ctrl-C): nobody is listening
                return

    def _next_line(self) -> str | types.JSONRPCError:
        """The client's next line of at most ``MAX_LINE_CHARS``; a longer one is read through and
        dropped, said in the log, and its answer is an invalid request (one of 200 MB took 660 MB
        to read and parse, and it grew with the line: a client could take all the machine's
        memory)."""
        line = self._text.readline(MAX_LINE_CHARS + 1)
        if len(line) <= MAX_LINE_CHARS:
            return line
        dropped = len(line)
        while line and not line.endswith("\n"):
            line = self._text.readline(1 << 20)
            dropped += len(line)
        log.warning("dropped a line of the client of %s characters, over %s", f"{dropped:,}", f"{MAX_LINE_CHARS:,}")
        return refusal(types.INVALID_REQUEST, f"a line of {dropped:,} characters, over {MAX_LINE_CHARS:,}")


@contextlib.contextmanager
def client_stdin(on_end: Callable[[], None] | None = None) -> Iterator[ClientLines]:
    """The client's lines from a private copy of fd 0; fd 0 is the null device meanwhile.
    ``on_end`` is called once the client's stdin has ended."""
    try:
        wire_fd = os.dup(sys.stdin.fileno())
    except (AttributeError, OSError, ValueError):  # not a file (a test's stand-in): read it as it is
        yield ClientLines(sys.stdin.buffer, on_end=on_end)
        return
    saved = os.dup(0)
    null = os.open(os.devnull, os.O_RDONLY)
    os.dup2(null, 0)
    os.close(null)
    try:
        # closefd=False: a reader abandoned at Ctrl-C may still wait on it
        yield ClientLines(os.fdopen(wire_fd, "rb", closefd=False), on_end=on_end)
    finally:
        os.dup2(saved, 0)
        os.close(saved)


MAX_IN_FLIGHT = 128  # requests read whose answers are not written yet, before reading stops
STUCK_AFTER = 60.0  # seconds stopped with no answer written or being written: the count is forgotten
# Tool calls of the session that ask the index at once (``InFlight.working``): as many as the
# SDK has worker threads, so that a call waits for room to answer as it would take its thread,
# not as it is read (128 read in a burst were all past such a wait, and all worked on). Fewer
# made a burst slower: 60 searches at once with `brain serve` up, 4 at once 6.1 and 6.2 s, 16
# at once 6.0 to 7.6 s, where 40 (and the tree before) took 4.1 to 5.1 s (bench/mcp_burst.py).
WORKING_AT_ONCE = 40
# Seconds an answer may wait for the writer before calls wait to begin: the writer busy with the
# answer before is no sign (a burst has one waiting now and then); a client's full pipe is.
WRITER_STUCK = 0.1


class InFlight:
    """Stops reading the client's messages while ``MAX_IN_FLIGHT`` requests read are unanswered
    on the wire, and reads again as their answers are written.

    A client that kept sending requests and never read its answers grew brain mcp by ~20 KB an
    unread answer (1,000 pending: 581 MB): each waited in memory for its turn on a full pipe. The
    SDK's read loop takes messages through ``reading``, and its answers go out through
    ``writing``: what is counted is what was written, by id, so a request answered twice (an id
    used again) cannot hold a place. A request the client cancels (``notifications/cancelled``)
    is never answered by the SDK: its place is given back as the cancel is read; every other
    request is answered, an error at worst, once its handler ends. Notifications and the
    client's answers to the server take no place. Should a place be held with nothing to free
    it (a request the SDK dropped unanswered), reading stops at most ``STUCK_AFTER`` seconds
    with no answer written or waiting to be: the count is then forgotten, said in the log.

    A client that closes stdin while reading is stopped (``hung_up`` says so, checked each
    second) is told to ``on_hang_up`` as the end of its stdin would be: brain mcp ends a while
    after (``server._AfterStdin``), not waiting for good on answers nobody reads.

    The requests read are not all worked on: a tool call begins only while no answer has
    waited long for the writer (``working``). Reading stopped at 128, but every one of the 128
    was worked on while the client read none of it (1,000 searches unread: all 128 run, 3.8 s of
    CPU on the minivault, a search's cost each on a larger vault); now those begun at once (1.6
    s), and the others begin as the client reads.
    """

    def __init__(
        self,
        limit: int = MAX_IN_FLIGHT,
        *,
        stuck_after: float = STUCK_AFTER,
        hung_up: Callable[[], bool] | None = None,
        on_hang_up: Callable[[], None] | None = None,
        working_at_once: int = WORKING_AT_ONCE,
    ):
        self.limit = limit
        self.stuck_after = stuck_after
        self._hung_up = hung_up
        self._on_hang_up = on_hang_up
        self.unanswered: dict[Any, int] = {}  # id -> requests read with it and not answered
        self.count = 0
        self.writing_now = 0  # answers handed to the writer, not yet taken by it
        self.waiting_since = 0.0  # time.monotonic() since when the first of them has waited
        self._room = anyio.Event()
        self.working_at_once = working_at_once
        self._working: anyio.Semaphore | None = None  # made in the event loop, as the first call comes
        self._writable = anyio.Event()  # set as the writer takes an answer

    def reading(self, stream: Any) -> _Reading:
        return _Reading(stream, self)

    @contextlib.asynccontextmanager
    async def working(self, *, at_once: bool = True) -> AsyncIterator[None]:
        """Around a tool call (in its task, before it takes a worker thread: the writer needs one
        of the same 40 to write): it begins, ``at_once``, while fewer than ``WORKING_AT_ONCE``
        others are at work, and then once no answer has waited for the writer ``WRITER_STUCK`` s
        (the client reads what was written: its pipe has room). A call cancelled meanwhile is
        never begun."""
        if self._working is None:
            self._working = anyio.Semaphore(self.working_at_once)
        held = self._working if at_once else None
        if held is not None:
            await held.acquire()
        try:
            while self.writing_now > 0 and time.monotonic() - self.waiting_since >= WRITER_STUCK:
                if self._writable.is_set():  # set for calls waiting before: one unset, shared by all now
                    self._writable = anyio.Event()
                await self._writable.wait()
            yield
        finally:
            if held is not None:
                held.release()

    def writing(self, stream: Any) -> _Writing:
        return _Writing(stream, self)

    def _take(self, request_id: Any) -> None:
        key = _key(request_id)
        self.unanswered[key] = self.unanswered.get(key, 0) + 1
        self.count += 1

    def _give_back(self, request_id: Any) -> None:
        key = _key(request_id)
        held = self.unanswered.get(key, 0)
        if held <= 0:
            return
        if held == 1:
            del self.unanswered[key]
        else:
            self.unanswered[key] = held - 1
        self.count -= 1
        self._room.set()

    async def wait_for_room(self) -> None:
        while self.count >= self.limit:
            self._room = anyio.Event()
            stopped = time.monotonic()
            while not self._room.is_set() and time.monotonic() - stopped < self.stuck_after:
                with anyio.move_on_after(min(1.0, self.stuck_after)):
                    await self._room.wait()
                if self._hung_up is not None and self._on_hang_up is not None and self._hung_up():
                    self._on_hang_up()
            if not self._room.is_set() and self.writing_now == 0:
                log.warning(
                    "%s requests of the client unanswered for %g s, none being written: read on",
                    self.count,
                    self.stuck_after,
                )
                self.unanswered.clear()
                self.count = 0


def _key(request_id: Any) -> Any:
    """A request id as the SDK correlates it (an int and its digits as a string are one)."""
    return str(request_id)


class _Reading:
    """The SDK's read stream, waiting for room before each message (``InFlight``)."""

    def __init__(self, stream: Any, flow: InFlight):
        self._stream = stream
        self._flow = flow

    @property
    def last_context(self) -> Any:
        return getattr(self._stream, "last_context", None)

    async def receive(self) -> Any:
        await self._flow.wait_for_room()
        item = await self._stream.receive()
        message = getattr(item, "message", None)
        if isinstance(message, types.JSONRPCRequest):
            self._flow._take(message.id)
        elif isinstance(message, types.JSONRPCNotification) and message.method == "notifications/cancelled":
            params = message.params if isinstance(message.params, dict) else {}
            if isinstance(params.get("requestId"), (int, str)):
                self._flow._give_back(params["requestId"])
        return item

    def __aiter__(self) -> _Reading:
        return self

    async def __anext__(self) -> Any:
        try:
            return await self.receive()
        except anyio.EndOfStream:
            raise StopAsyncIteration from None

    def close(self) -> None:
        self._stream.close()

    async def aclose(self) -> None:
        await self._stream.aclose()

    async def __aenter__(self) -> _Reading:
        await self._stream.__aenter__()
        return self

    async def __aexit__(self, *exc: Any) -> Any:
        return await self._stream.__aexit__(*exc)


class _Writing:
    """The SDK's write stream, giving a request's place back once its answer is written."""

    def __init__(self, stream: Any, flow: InFlight):
        self._stream = stream
        self._flow = flow

    async def send(self, item: Any) -> None:
        message = getattr(item, "message", None)
        answered = message.id if isinstance(message, (types.JSONRPCResponse, types.JSONRPCError)) else None
        if self._flow.writing_now == 0:
            self._flow.waiting_since = time.monotonic()
        self._flow.writing_now += 1
        try:
            await self._stream.send(item)  # taken by the writer: the pipe holds it, or will
        finally:
            self._flow.writing_now -= 1
            self._flow.waiting_since = time.monotonic()  # the writer took one: the next waits from now
            self._flow._writable.set()
        if answered is not None:
            self._flow._give_back(answered)

    def close(self) -> None:
        self._stream.close()

    async def aclose(self) -> None:
        await self._stream.aclose()

    def clone(self) -> _Writing:
        return _Writing(self._stream.clone(), self._flow)

    async def __aenter__(self) -> _Writing:
        await self._stream.__aenter__()
        return self

    async def __aexit__(self, *exc: Any) -> Any:
        return await self._stream.__aexit__(*exc)
