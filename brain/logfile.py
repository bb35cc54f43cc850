"""The log files of brain's long-running processes (``brain serve``, ``brain mcp``), bounded while
they run.

``config.log_file`` moves a log over its limit aside when a process starts; a server that runs
for weeks never started again, so its log grew by every line it wrote (an error a second is
8 MB a day). ``CappedFileHandler`` checks the file's size before each line and moves it to
``<name>.1`` past the limit (one old generation kept). It follows the file by its path, as
``WatchedFileHandler`` does, so several processes sharing one log (a server per vault, an MCP
session per window) all write to the new file once any of them has moved the old one aside.
Each line is masked as the turn ledger masks a row (``ledger.redact``), and is one line
(``OneLineFormatter``).
"""

from __future__ import annotations

import logging
import logging.handlers
import os

from . import config
from .ledger.redact import redact
from .text import one_line


class OneLineFormatter(logging.Formatter):
    """A line names paths, and Linux lets a file's name hold a line break: written as it is, it
    split the line there, and what followed it read as a line of its own (one a name could
    forge). Line breaks and tabs are written as their escapes (``text.one_line``), as the CLI
    writes them; a traceback keeps its lines."""

    def formatMessage(self, record: logging.LogRecord) -> str:
        return one_line(super().formatMessage(record))


class CappedFileHandler(logging.handlers.WatchedFileHandler):
    """Appends to ``path``; past ``max_bytes`` the file becomes ``<path>.1`` and a new one starts."""

    def __init__(self, path: str | os.PathLike[str], max_bytes: int, *, errors: str | None = None):
        super().__init__(path, encoding="utf-8", errors=errors)
        self.max_bytes = max_bytes

    def format(self, record: logging.LogRecord) -> str:
        # A refused request quotes what was sent, a traceback ends in the exception's message:
        # either may hold a token pasted into a query, which the ledger and ab_recall mask.
        return redact(super().format(record))

    def emit(self, record: logging.LogRecord) -> None:
        try:
            config.move_aside_if_over(self.baseFilename, self.max_bytes)
        except OSError:
            pass  # gone already (another process moved it), or not ours to move: write on
        super().emit(record)  # reopens the path when the file there is not the one it holds


def log_handler(name: str, max_bytes: int, *, errors: str | None = None) -> CappedFileHandler:
    """A handler for ``<log dir>/<name>`` (``config.log_file``), kept under ``max_bytes``."""
    return CappedFileHandler(config.log_file(name, max_bytes), max_bytes, errors=errors)
