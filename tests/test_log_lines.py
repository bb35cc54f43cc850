"""serve.log and mcp.log are one line a record, inert in a terminal: a file's name may
hold a line break (Linux allows one), and written as it was it split the line there, what
followed reading as a line of its own (a forged one); or an escape sequence, which acted on the
terminal of whoever followed the log (`tail -f`, `less -R`). Both are written as their escapes;
a traceback keeps its lines, each indented under its record (hook.log: test_ledger_hook)."""

from __future__ import annotations

import logging

from brain import config
from brain.mcp import server as mcp_server
from brain.server import daemon

FORGED = "Evil\n2026-01-01 00:00:00,000 pid=1 [vault] INFO the index was deleted.md"
# A window title set, the screen cleared, an OSC 8 link, the clipboard written (OSC 52), a C1 CSI.
HOSTILE = (
    "Заметка 笔记 🙂 \x1b]0;owned\x07\x1b[2J\x1b]8;;https://evil.example\x1b\\link\x1b]52;c;ZXZpbA==\x07\x9b31m.md"
)
SHOWN = "Заметка 笔记 🙂 \\x1b]0;owned\\x07\\x1b[2J\\x1b]8;;https://evil.example\\x1b\\link"


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


def _inert(text: str) -> None:
    """No byte a terminal acts on: ESC, the 8-bit CSI, BEL, a carriage return."""
    assert not any(c in text for c in "\x1b\x9b\x07\r"), repr(text)


def test_serve_log_writes_an_escape_sequence_in_a_path_as_its_escape(tmp_path, capsys):
    """And so does `brain serve` in the foreground, on the terminal it runs in."""
    daemon.setup_logging(tmp_path / "vault", foreground=True)
    logging.getLogger("brain").warning("%s: skipped (binary)", HOSTILE)
    [line] = [line for line in _lines("serve.log") if "skipped (binary)" in line]
    assert SHOWN in line and "\\x9b31m.md: skipped" in line  # Cyrillic, CJK and emoji as they are
    _inert((config.log_dir() / "serve.log").read_text())
    err = capsys.readouterr().err
    assert SHOWN in err
    _inert(err)


def test_mcp_log_writes_an_escape_sequence_in_a_path_as_its_escape():
    mcp_server.configure_logging()
    logging.getLogger("brain").warning("%s: skipped (binary)", HOSTILE)
    [line] = [line for line in _lines("mcp.log") if "skipped (binary)" in line]
    assert SHOWN in line
    _inert((config.log_dir() / "mcp.log").read_text())


def test_a_traceback_keeps_its_lines_under_its_record(tmp_path):
    """Its lines are indented, a record's never is: the exception's message (a path in it) can
    neither forge a record nor act on the terminal."""
    daemon.setup_logging(tmp_path / "vault", foreground=False)
    try:
        raise ValueError(f"cannot read {FORGED} {HOSTILE}")
    except ValueError:
        logging.getLogger("brain").exception("a pass failed")
    text = (config.log_dir() / "serve.log").read_text()
    assert "a pass failed\n    Traceback (most recent call last):\n      File " in text
    assert "\n    2026-01-01 00:00:00,000 pid=1 [vault] INFO the index was deleted.md" in text
    assert not any(line.startswith("2026-01-01 00:00:00,000 pid=1") for line in text.splitlines())
    _inert(text)


def test_a_token_after_a_line_break_is_masked(tmp_path):
    """Masked before escaped: written as "\\n" or "\\t" first, the break made the token part
    of a word, and the masking left an AWS key id, a key assigned, a Slack or Bearer token as
    they were."""
    daemon.setup_logging(tmp_path / "vault", foreground=False)
    logging.getLogger("brain").warning("skipped %s", "notes/x\nAKIAIOSFODNN7EXAMPLE\tapi_key=Zx81kq0PmA.md")
    text = (config.log_dir() / "serve.log").read_text()
    assert "notes/x\\nAKIA***\\tapi_key=***" in text
    assert "IOSFODNN7EXAMPLE" not in text and "Zx81kq0PmA" not in text


def test_a_file_name_that_is_not_utf8_is_logged(tmp_path, capsys):
    """Its bytes are surrogates in Python, which no UTF-8 file holds: each line naming such a note
    was a "Logging error" traceback on stderr, and nothing was logged."""
    daemon.setup_logging(tmp_path / "vault", foreground=False)
    logging.getLogger("brain").warning("%s: skipped (binary)", "caf\udce9.md")
    assert any(line.endswith("caf\\udce9.md: skipped (binary)") for line in _lines("serve.log"))
    assert "Logging error" not in capsys.readouterr().err


def test_a_vault_named_with_a_percent_sign_is_logged(tmp_path, capsys):
    """Its name is in each line's format, where a % failed every line: nothing logged, and a
    "Logging error" traceback on stderr for each."""
    daemon.setup_logging(tmp_path / "100% done", foreground=False)
    logging.getLogger("brain").warning("a line")
    assert any(line.endswith("[100% done] WARNING a line") for line in _lines("serve.log"))
    assert "Logging error" not in capsys.readouterr().err
