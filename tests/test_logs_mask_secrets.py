"""The long-running processes' logs (serve.log, mcp.log) hold no secret a request carried.

A refused request is logged with why (a moment that is not one: what was sent, quoted), and a
failure with its traceback, whose last line is the exception's message: a token pasted into a
query or a moment reached the log file as it was, where the ledger and ab_recall mask it.
"""

from __future__ import annotations

import logging
import os
from pathlib import Path

from conftest import FakeEmbedder
from index_helpers import index_into
from serve_helpers import request, served

from brain import config
from brain.logfile import log_handler
from brain.server import daemon as daemon_module

TOKEN = "ghp_" + "A1b2C3d4E5f6G7h8I9j0K1l2M3n4O5p6Q7r8"
PASSWORD = "hunter2-correct-horse"


def test_serve_log_masks_a_secret_in_a_refused_request_and_in_a_traceback(toy_vault, brain_logger, monkeypatch):
    index_into(Path(os.environ["BRAIN_HOME"]), toy_vault, FakeEmbedder())
    with served(toy_vault, watch=False) as daemon:
        log_path = daemon_module.setup_logging(daemon.root, foreground=False)
        refused = request(daemon, "ask", query="q", modes=["vector"], as_of=f"GITHUB_TOKEN={TOKEN}")
        assert refused["error"]["code"] == "bad_request"

        def fails(query, *args, **kwargs):
            raise RuntimeError(f"could not answer {query!r}")  # a bug's message quoting the query

        monkeypatch.setattr(daemon.service, "ask", fails)
        failed = request(daemon, "ask", query=f"deploy with password={PASSWORD}", modes=["vector"])
        assert failed["error"]["code"] == "internal"
    text = log_path.read_text()
    assert "bad request" in text and "Traceback" in text and "could not answer" in text
    assert TOKEN not in text and PASSWORD not in text
    assert "GITHUB_TOKEN=***" in text and "password=***" in text


def test_mcp_log_masks_secrets_too(brain_logger):
    handler = log_handler("mcp.log", 1_000_000, errors="backslashreplace")
    brain_logger.addHandler(handler)
    brain_logger.setLevel(logging.INFO)
    try:
        raise ValueError(f"search failed for 'token {TOKEN}'")
    except ValueError:
        brain_logger.info("the traceback of that failure", exc_info=True)
    handler.flush()
    text = (config.log_dir() / "mcp.log").read_text()
    assert "ValueError" in text and TOKEN not in text
