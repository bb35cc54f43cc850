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
  why (``server.py``); a line without one is said in ``mcp.log`` and dropped.

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
import sys
import threading
from collections.abc import Iterator
from typing import BinaryIO

from mcp import types
from pydantic import ValidationError

from ..server import protocol

log = logging.getLogger("brain")

_SURROGATE_ESCAPE = re.compile(r"\\u[dD][89a-fA-F]")  # \ud800 to \udfff, a half of a pair
UNREADABLE = "brain/unreadable"  # the method a request the SDK cannot read is handed on as
MAX_DIGITS = 4300  # Python's own limit on the digits of an int read from text
# A line of the client longer than this is dropped unread: a request is a few KB (a query is at
# most 10,000 characters), and the SDK's parser holds several copies of a line it reads.
MAX_LINE_CHARS = 16 * 1024 * 1024


def mend(line: str) -> str:
    """``line`` as the SDK reads it: as it was, as JSON without a lone surrogate escape, or, when
    the SDK's parser cannot read it, as a request for ``UNREADABLE`` with the same id."""
    if _SURROGATE_ESCAPE.search(line):
        try:
            line = protocol.encode(json.loads(line)).decode("utf-8")
        except (ValueError, RecursionError):  # not JSON: said below
            pass
    if not line.strip():
        return line  # the SDK skips a blank line, and "" is the end of stdin
    try:
        types.jsonrpc_message_adapter.validate_json(line, by_name=False)
        return line
    except ValidationError as exc:
        said = exc.errors(include_url=False)
        why = said[0]["msg"] if len(said) == 1 else "not a JSON-RPC 2.0 request"
    try:
        message = json.loads(line, parse_int=lambda digits: int(digits) if len(digits) <= MAX_DIGITS else None)
    except (ValueError, RecursionError):
        message = None
    # a request (not the client's answer to one of ours), whose id can be answered
    asked = isinstance(message, dict) and not {"result", "error"} & message.keys()
    request_id = message.get("id") if asked else None
    if isinstance(request_id, (int, str)) and not isinstance(request_id, bool):
        log.info("a request of the client cannot be read (%s): answered as an invalid request", why)
        unreadable = {"jsonrpc": "2.0", "id": request_id, "method": UNREADABLE, "params": {"why": why[:300]}}
        return json.dumps(unreadable) + "\n"
    log.warning(
        "dropped a line of the client that is no JSON-RPC message (%s characters: %s)", len(line.rstrip("\n")), why
    )
    return line


class ClientLines:
    """The client's lines, as the SDK's transport reads them: ``async for line in stdin``.

    A daemon thread reads them (a few ahead at most) and hands each to the event loop: the
    interpreter does not wait for it at exit, where it may wait for a line for good."""

    AHEAD = 4  # lines read before the server has taken them

    def __init__(self, wire: BinaryIO):
        self._text = io.TextIOWrapper(wire, encoding="utf-8", errors="replace")  # as the SDK reads it
        self._lines: asyncio.Queue[str | None] = asyncio.Queue()
        self._room = threading.Semaphore(self.AHEAD)
        self._reader: threading.Thread | None = None

    def __aiter__(self) -> ClientLines:
        return self

    async def __anext__(self) -> str:
        if self._reader is None:
            loop = asyncio.get_running_loop()
            self._reader = threading.Thread(target=self._read, args=(loop,), name="brain-mcp-stdin", daemon=True)
            self._reader.start()
        line = await self._lines.get()
        self._room.release()
        if line is None:
            raise StopAsyncIteration
        return line

    def _read(self, loop: asyncio.AbstractEventLoop) -> None:
        line: str | None = ""
        while line is not None:
            self._room.acquire()
            try:
                line = mend(self._next_line()) or None  # "" is the end of stdin
            except (OSError, ValueError):  # the wire failed or was closed
                line = None
            try:
                loop.call_soon_threadsafe(self._lines.put_nowait, line)
            except RuntimeError:  # the loop has ended (Ctrl-C): nobody is listening
                return

    def _next_line(self) -> str:
        """The client's next line of at most ``MAX_LINE_CHARS``; longer ones are read through and
        dropped, said in the log (one of 200 MB took 660 MB to read and parse, and it grew with
        the line: a client could take all the machine's memory)."""
        while True:
            line = self._text.readline(MAX_LINE_CHARS + 1)
            if len(line) <= MAX_LINE_CHARS:
                return line
            dropped = len(line)
            while line and not line.endswith("\n"):
                line = self._text.readline(1 << 20)
                dropped += len(line)
            log.warning("dropped a line of the client of %s characters, over %s", f"{dropped:,}", f"{MAX_LINE_CHARS:,}")


@contextlib.contextmanager
def client_stdin() -> Iterator[ClientLines]:
    """The client's lines from a private copy of fd 0; fd 0 is the null device meanwhile."""
    try:
        wire_fd = os.dup(sys.stdin.fileno())
    except (AttributeError, OSError, ValueError):  # not a file (a test's stand-in): read it as it is
        yield ClientLines(sys.stdin.buffer)
        return
    saved = os.dup(0)
    null = os.open(os.devnull, os.O_RDONLY)
    os.dup2(null, 0)
    os.close(null)
    try:
        # closefd=False: a reader abandoned at Ctrl-C may still wait on it
        yield ClientLines(os.fdopen(wire_fd, "rb", closefd=False))
    finally:
        os.dup2(saved, 0)
        os.close(saved)
