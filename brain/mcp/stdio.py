"""The client's lines on stdin, read for the SDK's stdio transport, mended where it would fail.

Two things the SDK's own reader gets wrong, both seen from a real client:

- A string with a lone UTF-16 surrogate escape (``"\\ud83d"``: what JavaScript's
  ``JSON.stringify`` writes for half of an emoji) is valid JSON, but not to pydantic's parser:
  the SDK dropped such a request without an answer, and the client waited for it for good.
  Here the line is read with Python's parser and written again with each lone surrogate as
  ``?`` (as ``brain serve``'s protocol encodes one), so the request is answered.
- The SDK reads on a worker thread that the process waits for: after Ctrl-C it stopped
  answering but did not exit until stdin closed. Here the reading thread is a daemon.

``MCPServer.run`` runs on asyncio (anyio's default), which the hand-over uses.

The wire is a private copy of fd 0, and fd 0 points at the null device while serving (as the
SDK does when it reads stdin itself), so nothing else in the process can read the client's bytes.
"""

from __future__ import annotations

import asyncio
import contextlib
import io
import json
import os
import re
import sys
import threading
from collections.abc import Iterator
from typing import BinaryIO

from ..server import protocol

_SURROGATE_ESCAPE = re.compile(r"\\u[dD][89a-fA-F]")  # \ud800 to \udfff, a half of a pair


def mend(line: str) -> str:
    """``line`` as it was, or, when it holds a surrogate escape, as JSON without a lone one."""
    if not _SURROGATE_ESCAPE.search(line):
        return line
    try:
        message = json.loads(line)
    except (ValueError, RecursionError):  # not JSON: the SDK says so as it would have
        return line
    return protocol.encode(message).decode("utf-8")


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
                line = mend(self._text.readline()) or None  # "" is the end of stdin
            except (OSError, ValueError):  # the wire failed or was closed
                line = None
            try:
                loop.call_soon_threadsafe(self._lines.put_nowait, line)
            except RuntimeError:  # the loop has ended (Ctrl-C): nobody is listening
                return


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
