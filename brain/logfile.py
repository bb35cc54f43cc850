"""The log files of brain's long-running processes (``brain serve``, ``brain mcp``), bounded while
they run.

``config.log_file`` moves a log over its limit aside when a process starts; a server that runs
for weeks never started again, so its log grew by every line it wrote (an error a second is
8 MB a day). ``CappedFileHandler`` checks the file's size before each line and moves it to
``<name>.1`` past the limit (one old generation kept). It follows the file by its path, as
``WatchedFileHandler`` does, so several processes sharing one log (a server per vault, an MCP
session per window) all write to the new file once any of them has moved the old one aside.
Each record is masked as the turn ledger masks a row (``ledger.redact``), and is one line, inert
in a terminal (``OneLineFormatter``).
"""

from __future__ import annotations

import errno
import logging
import logging.handlers
import os
import sys
from typing import Any

from . import config
from .errors import ConfigError
from .ledger.redact import redact
from .text import log_record


class OneLineFormatter(logging.Formatter):
    """A record as ``text.log_record`` writes it: one line, its traceback (if any) on indented
    lines under it, every control character written as its escape; masked as a ledger row is.

    A line names paths, and Linux lets a file's name hold a line break (which split the line
    there, what followed reading as a line of its own, one a name could forge) or an escape
    sequence (which acted on the terminal following the log: a title set, the screen cleared,
    the clipboard written by OSC 52). Masked first: ``\\n`` written before a token made it
    part of a word, and the token was no longer masked."""

    def format(self, record: logging.LogRecord) -> str:
        record.message = record.getMessage()
        if self.usesTime():
            record.asctime = self.formatTime(record, self.datefmt)
        # not cached on the record (as logging does): another handler's formatter would use ours
        detail = [self.formatException(record.exc_info)] if record.exc_info else []
        if not detail and record.exc_text:
            detail.append(record.exc_text)
        if record.stack_info:
            detail.append(self.formatStack(record.stack_info))
        return log_record(redact(self.formatMessage(record)), redact("\n".join(detail)))


class CappedFileHandler(logging.handlers.WatchedFileHandler):
    """Appends to ``path``; past ``max_bytes`` the file becomes ``<path>.1`` and a new one starts."""

    def __init__(self, path: str | os.PathLike[str], max_bytes: int, *, errors: str | None = None):
        super().__init__(path, encoding="utf-8", errors=errors)
        self.max_bytes = max_bytes
        self._unwritable: OSError | None = None  # why the last line was dropped, None once one is written
        self._cut = False  # a line was written in part to a full pipe (``_drop``): the next starts a line
        # A refused request quotes what was sent, a traceback ends in the exception's message:
        # either may hold a token pasted into a query, which the ledger and ab_recall mask.
        self.setFormatter(OneLineFormatter())

    def _open(self) -> Any:
        # 0600, at the start and each time the file is made again after moving aside: queries
        # and note names, the user's alone (logging's open takes the umask's 0644).
        # O_NONBLOCK: a FIFO there (made to follow the log) with no reader held `brain serve` and
        # `brain mcp` at their start for good (the MCP client waited on an answer to initialize);
        # now the open fails at once (``log_handler`` says so), and with a reader it is written.
        fd = os.open(self.baseFilename, os.O_WRONLY | os.O_APPEND | os.O_CREAT | os.O_NONBLOCK, 0o600)
        return open(fd, self.mode, encoding=self.encoding, errors=self.errors)

    def setFormatter(self, fmt: logging.Formatter | None) -> None:
        if not isinstance(fmt, OneLineFormatter):  # what masks and escapes a line
            raise TypeError("a log file's formatter is a OneLineFormatter")
        super().setFormatter(fmt)

    def emit(self, record: logging.LogRecord) -> None:
        try:
            config.move_aside_if_over(self.baseFilename, self.max_bytes)
        except OSError:
            pass  # gone already (another process moved it), or not ours to move: write on
        dropped = self._unwritable
        self._unwritable = None
        try:
            if self._cut and self.stream is not None:  # a line cut short by a full pipe ends here
                self._cut = False
                self.stream.write("\n")
            super().emit(record)  # reopens the path when the file there is not the one it holds
        except OSError as exc:  # reopening it: a FIFO made there again that nothing reads (ENXIO)
            self._drop(exc, dropped)
            return
        if self._unwritable is not None:  # the write failed (``handleError``)
            self._drop(self._unwritable, dropped)

    def handleError(self, record: logging.LogRecord) -> None:
        # A write the file refuses (the reader of a FIFO there went away: EPIPE; a full disk) was
        # logging's "--- Logging error ---" and a traceback on stderr, for every line after it,
        # and the next reopen raised out of the logging call into the server's own code.
        exc = sys.exc_info()[1]
        if isinstance(exc, OSError):
            self._unwritable = exc
        else:
            super().handleError(record)

    def _drop(self, exc: OSError, dropped: OSError | None) -> None:
        """The line is dropped, and the stream with the bytes it holds (opened again, from the
        path, for the next line: a FIFO read again, a disk with room again). The first line
        dropped after one written says so on stderr, in one line; the next are dropped quietly."""
        self._unwritable = exc
        if isinstance(exc, BlockingIOError) and self.stream is not None:
            # A FIFO whose reader is behind (its pipe full, EAGAIN): the line is dropped, or its end
            # (written in part, it ends at the next line's start), and the FIFO kept open: closed,
            # its reader (cat) read to the end of what was written, took it for the log's end, and
            # left, every line after dropped until it was run again.
            self._cut = True
            stream = None
        else:
            stream, self.stream = self.stream, None
            self.dev = self.ino = -1
        if stream is not None:
            try:
                stream.close()  # its buffer cannot be flushed: the file descriptor is closed still
            except OSError:
                pass
        if dropped is not None:
            return
        path = self.baseFilename
        until = (
            f"something reads the FIFO there (cat {path}) or it is removed"
            if exc.errno in (errno.EPIPE, errno.ENXIO)
            else "it can be written"
        )
        try:
            print(
                f"brain: cannot write the log {path} ({exc.strerror or exc}): its lines are dropped until {until}",
                file=sys.stderr,
                flush=True,
            )
        except (OSError, ValueError, AttributeError):
            pass  # no stderr either (a detached server's): the lines are dropped


def log_handler(name: str, max_bytes: int, *, errors: str | None = None) -> CappedFileHandler:
    """A handler for ``<log dir>/<name>`` (``config.log_file``), kept under ``max_bytes``; a
    ``ConfigError`` when it cannot be opened (a FIFO there that nothing reads)."""
    path = config.log_file(name, max_bytes)
    try:
        return CappedFileHandler(path, max_bytes, errors=errors)
    except OSError as exc:
        hint = f"something must read the FIFO there (cat {path}), or remove it" if exc.errno == errno.ENXIO else ""
        raise ConfigError(
            f"cannot write the log {path} ({exc.strerror or exc})" + (f": {hint}" if hint else "")
        ) from exc


def log_unknown_settings(handler: logging.Handler) -> None:
    """Name at the start of a long-running process's log each ``BRAIN_*`` variable that is no
    setting (``settings.unknown_variables``), to ``handler`` alone: the CLI said so on stderr
    already, and a detached server's stderr goes nowhere."""
    from .settings import unknown_variables

    for line in unknown_variables():
        fields = {"name": "brain", "levelno": logging.WARNING, "levelname": "WARNING", "msg": line}
        handler.handle(logging.makeLogRecord(fields))
