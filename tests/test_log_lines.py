"""serve.log and mcp.log are one line a record: a file's name may hold a line break (Linux
allows one), and written as it was it split the line there, what followed reading as a line of
its own (a forged one). The break is written as its escape, as the CLI writes it; a traceback
keeps its lines."""

from __future__ import annotations

import logging

from brain import config
from brain.mcp import server as mcp_server
from brain.server import daemon

FORGED = "Evil\n2026-01-01 00:00:00,000 pid=1 [vault] INFO the index was deleted.md"


def _lines(name: str) -> list[str]:
    return (config.log_dir() / name).read_text().splitlines()


def test_serve_log_writes_a_line_break_in_a_path_as_its_escape(tmp_path):  # loggers: conftest
    daemon.setup_logging(tmp_path / "vault", foreground=False)
    logging.getLogger("brain").warning("%s: skipped (binary)", FORGED)
    [line] = [line for line in _lines("serve.log") if "skipped (binary)" in line]
    assert "Evil\\n2026-01-01" in line
    assert not any(line.startswith("2026-01-01 00:00:00,000 pid=1") for line in _lines("serve.log"))


def test_mcp_log_writes_a_line_break_in_a_path_as_its_escape():
    mcp_server.configure_logging()
    logging.getLogger("brain").warning("%s: skipped (binary)", FORGED)
    lines = _lines("mcp.log")
    assert len([line for line in lines if "skipped (binary)" in line]) == 1
    assert not any(line.startswith("2026-01-01 00:00:00,000 pid=1") for line in lines)


def test_a_traceback_keeps_its_lines(tmp_path):
    daemon.setup_logging(tmp_path / "vault", foreground=False)
    try:
        raise ValueError("the second\nline")
    except ValueError:
        logging.getLogger("brain").exception("a pass failed")
    text = (config.log_dir() / "serve.log").read_text()
    assert "a pass failed\nTraceback (most recent call last):\n" in text


def test_a_vault_named_with_a_percent_sign_is_logged(tmp_path, capsys):
    """Its name is in each line's format, where a % failed every line: nothing logged, and a
    "Logging error" traceback on stderr for each."""
    daemon.setup_logging(tmp_path / "100% done", foreground=False)
    logging.getLogger("brain").warning("a line")
    assert any(line.endswith("[100% done] WARNING a line") for line in _lines("serve.log"))
    assert "Logging error" not in capsys.readouterr().err
