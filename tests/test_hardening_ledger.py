"""Issue 9, the ledger side: each test reproduces one defect found by trying to break it.

Names say which item of the issue a test holds: clip_after_mask (2), secret_format (5),
hook_install (3, 11), surrogate (4), overflow (11), corrupt_db (7), read_only (10),
dotenv (17); from a later QA pass of the hooks: odd_value.
"""

from __future__ import annotations

import base64
import functools
import hashlib
import json
import os
import shutil
import sqlite3
import stat
import subprocess
import sys
import tempfile
from pathlib import Path

import pytest
from click.testing import CliRunner
from ledger_helpers import Transcript, assert_masked, brain_command, hook_payload, run_hook

from brain.cli import cli
from brain.db import BrainDatabaseError, open_db
from brain.errors import ConfigError
from brain.ledger import install as setup
from brain.ledger import transcript as transcript_module
from brain.ledger.hook import record_stop
from brain.ledger.redact import redact
from brain.ledger.store import write_turn
from brain.ledger.transcript import clip, read_last_turn

CMD = "/opt/brain/bin/brain hook stop"


def _random_text(seed: str, n: int) -> str:
    """``n`` characters of base64 that look like key material, the same on every run."""
    out = b""
    counter = 0
    while len(out) * 4 // 3 < n + 4:
        out += hashlib.sha256(f"{seed}{counter}".encode()).digest()
        counter += 1
    return base64.b64encode(out).decode()[:n]


def _db_dump() -> str:
    conn = open_db()
    try:
        return "\n".join(conn.iterdump())
    finally:
        conn.close()


NOBODY = 65534


@pytest.fixture
def open_tmp():
    """A temporary folder any user may enter (pytest's tmp_path is private to its user)."""
    path = Path(tempfile.mkdtemp(prefix="brain-perm-"))
    path.chmod(0o755)
    yield path
    for p in (path, *path.rglob("*")):
        if not p.is_symlink():
            p.chmod(0o700)
    shutil.rmtree(path)


def _for_test_user(*paths: Path) -> None:
    """Give ``paths`` to the user _run_as_user runs as (nobody when the tests run as root)."""
    if os.geteuid() == 0:
        for path in paths:
            os.chown(path, NOBODY, NOBODY)


@functools.cache
def _starts_as(prefix: tuple[str, ...]) -> bool:
    """Whether this interpreter starts under ``prefix``: one whose shared libpython nobody may not
    read (pyenv's 3.10 and 3.13 here, under /root, 0700) fails to load it; a test of file modes
    run as nobody cannot tell anything then."""
    probe = subprocess.run([*prefix, sys.executable, "-c", ""], capture_output=True, check=False, timeout=60)
    return probe.returncode == 0


def _run_as_user(args: list[str], home: Path, **env_extra: str) -> subprocess.CompletedProcess:
    """``brain args`` where file permissions apply: as nobody when the tests run as root."""
    cmd, env = brain_command()
    prefix: list[str] = []
    if os.geteuid() == 0:
        setpriv = shutil.which("setpriv")
        if not setpriv:
            pytest.skip("running as root without setpriv: file permissions cannot be tested")
        prefix = [setpriv, f"--reuid={NOBODY}", f"--regid={NOBODY}", "--clear-groups"]
        if not _starts_as(tuple(prefix)):
            pytest.skip(f"{sys.executable} does not start as nobody: file permissions cannot be tested")
    env.update(HOME=str(home), PYTHONDONTWRITEBYTECODE="1", **env_extra)
    return subprocess.run([*prefix, *cmd, *args], env=env, cwd=home, capture_output=True, check=False, timeout=60)


def _pieces(secret: str, size: int = 10) -> list[str]:
    """Every ``size``-character piece of ``secret``: none may be stored anywhere."""
    return [secret[i : i + size] for i in range(0, len(secret) - size + 1)]


# ----- 2. mask first, then clip -----------------------------------------------------------


def _across_tail_cut(head: str, secret: str, limit: int, into: int) -> str:
    """Text longer than ``limit`` whose clipped tail starts ``into`` characters into ``secret``."""
    keep_tail = limit - limit // 3 - 3  # what clip keeps of the end
    after = " z" * ((keep_tail - (len(secret) - into)) // 2)
    after += "z" * (keep_tail - (len(secret) - into) - len(after))
    text = head + " word" * (limit // 5 + 10) + " " + secret + after
    assert len(text) - keep_tail == text.index(secret) + into
    return text


def test_clip_after_mask_password_tail(tmp_path):
    # The tail of a 500-character command is kept; the cut fell inside --password's value.
    password = "hunter2-Correct-Horse-Battery-Staple"
    command = _across_tail_cut("mysql -u root", f"--password={password} --host db.internal", 500, into=11 + 12)
    t = Transcript(tmp_path / "t.jsonl")
    t.prompt("run the query")
    t.tool("Bash", command=command)
    t.text("done")
    record_stop(hook_payload(t.write()))
    dump = _db_dump()
    for piece in _pieces(password, 8):
        assert piece not in dump, piece
    assert "--host db.internal" in dump  # the rest of the tail is still there


def test_clip_after_mask_sk_proj_key_tail(tmp_path):
    # 44 characters of an sk-proj- key used to be stored: the tail of the summary began
    # inside the key, after its prefix.
    key = "sk-proj-" + _random_text("sk-proj", 156).replace("+", "-").replace("/", "_")
    said = f"The key was {key} and then we went on."
    into = said.index(key) + len(key) - 44  # the tail keeps the key's last 44 characters
    text = _across_tail_cut("Here is what I found.", said, transcript_module.SUMMARY_CHARS, into)
    t = Transcript(tmp_path / "t.jsonl")
    t.prompt("what key did it use?")
    t.text(text)
    record_stop(hook_payload(t.write()))
    dump = _db_dump()
    for piece in _pieces(key[8:], 12):
        assert piece not in dump, piece
    assert "and then we went on." in dump


def test_clip_after_mask_pem_body_with_end_line(tmp_path):
    # The summary's tail began inside a private key: its body lines and END line were kept.
    body = [_random_text(f"pem{i}", 64) for i in range(25)] + [_random_text("pem-last", 28) + "=="]
    pem = "-----BEGIN RSA PRIVATE KEY-----\n" + "\n".join(body) + "\n-----END RSA PRIVATE KEY-----"
    said = pem + "\nAfter the key."
    text = _across_tail_cut("Intro line.", said, transcript_module.SUMMARY_CHARS, into=said.index(body[20]))
    t = Transcript(tmp_path / "t.jsonl")
    t.prompt("show me the key file")
    t.text(text)
    record_stop(hook_payload(t.write()))
    dump = _db_dump()
    for line in body:
        for piece in _pieces(line, 12):
            assert piece not in dump, piece
    assert "After the key." in dump


def test_clip_after_mask_in_ask_error_and_decision(tmp_path):
    # Every clip in the transcript reader masks first: the ask, tool errors, decisions.
    secret = "s3cr3t-Value-That-Must-Not-Leak"
    ask = _across_tail_cut("please run", f"PGPASSWORD={secret}", transcript_module.ASK_CHARS, 14)
    error = _across_tail_cut("Error:", f"token={secret}", transcript_module.ERROR_CHARS, 9)
    decision = _across_tail_cut(
        "We decided to keep the cache", f"api_key={secret}", transcript_module.DECISION_CHARS, 10
    )
    t = Transcript(tmp_path / "t.jsonl")
    t.prompt(ask)
    t.tool("Bash", error, error=True, command="deploy")
    t.text(decision)
    turn = read_last_turn(t.write())
    assert turn.ask and turn.tool_errors and turn.decisions
    stored = json.dumps([turn.ask, turn.tool_errors, turn.decisions, turn.summary])
    for piece in _pieces(secret, 8):
        assert piece not in stored, piece


def test_clip_masks_before_cutting_whatever_the_length():
    key = "sk-ant-api03-" + _random_text("long", 90)
    for pad in (0, 100, 1000, 40_000, 200_000):  # inside and beyond the masking window
        text = "a " * pad + key + " b" * pad
        for limit in (300, 500, 4000):
            clipped = clip(text, limit)
            assert len(clipped) <= limit + 3
            for piece in _pieces(key[13:], 12):
                assert piece not in clipped


# ----- 2. masking is robust to fragments --------------------------------------------------


def test_redact_pem_body_without_begin_with_end_line():
    body = [_random_text(f"b{i}", 64) for i in range(3)] + ["QWERTY=="]
    text = "…the file ends with\n" + "\n".join(body) + "\n-----END OPENSSH PRIVATE KEY-----\nok"
    masked = redact(text)
    for line in body:
        assert line not in masked
    assert "-----END OPENSSH PRIVATE KEY-----" in masked and masked.endswith("\nok")
    assert redact(masked) == masked


def test_redact_pem_body_without_begin_or_end():
    lines = [_random_text(f"mid{i}", 64) for i in range(4)]
    masked = redact("middle of a key:\n" + "\n".join(lines) + "\n")
    for line in lines:
        assert line not in masked


@pytest.mark.parametrize(
    "token",
    [
        _random_text("tok40", 40),
        _random_text("tok44", 44).replace("+", "-").replace("/", "_"),  # base64url
        _random_text("tok120", 120),
    ],
    ids=["base64-40", "base64url-44", "base64-120"],
)
def test_redact_long_high_entropy_token(token):
    masked = redact(f"value {token} end")
    assert token not in masked and masked == "value *** end"


def test_bare_random_keys_are_masked_all_but_rarely():
    # The shape test's thresholds let ~0.2% of 40-character keys through (redact/rules.py); what it
    # reads as words (a name's, a date's numbers) must not make random keys look like names.
    keys = [_random_text(f"key{i}", 40) for i in range(4000)]
    keys += [k.replace("+", "-").replace("/", "_") for k in keys[:2000]]  # base64url
    missed = [k for k in keys if redact(f"value {k} end") != "value *** end"]
    assert len(missed) <= 0.005 * len(keys), missed[:5]


def test_redact_sk_proj_key_tail_fragment():
    key = "sk-proj-" + _random_text("frag", 156).replace("+", "-").replace("/", "_")
    fragment = key[-44:]
    masked = redact(f"...{fragment} was the rest")
    assert fragment not in masked


@pytest.mark.parametrize(
    "text",
    [
        "git checkout 5e2b745c3d1f0a9b8e7d6c5b4a3928170f6e5d4c",  # a commit: hex, one case
        "sha256:e3b0c44298fc1c149afbf4c8996fb92427ae41e4649b934ca495991b7852b855",
        "id 123e4567-e89b-12d3-a456-426614174000 found",
        "cat /home/dev/Project2024/src/components/Button.tsx",
        "open Compendium/13A/Races/Racial-Feats/Never-Say-Die.md",
        "see https://github.com/python/cpython/blob/5a094f0255eea1db58fb2cf14c200971e64ec36e/Lib/x.py",
        "class HTTP2ServerPushPromiseFrameHandlerV3Impl:",
        "def test_clip_after_mask_password_tail_Upper2_and_more():",
        "model cross-encoder/mmarco-mMiniLMv2-L12-H384-v1 loaded",
        "report 2024-01-01T10-00-00Z_Report_Final_v2_Backup.pdf",
        "AWS_SECRET_ACCESS_KEY_ID_FOR_PROD2_ENVIRONMENT is unset",
        # A dated note's name: the date's numbers are words of a path, not key material.
        "Daily/2024-01-01-StandupWithTheBackendTeamAboutQ3Goals.md",
        "open Notes/2024-01-01-MeetingWithTheTeamAboutQ3RoadmapPlanningV2.md",
        "2023_11_05_RetroWithTheMobileTeamOnQ4Releases_v2.md",
    ],
)
def test_redact_fragments_leave_ids_paths_and_hashes(text):
    assert redact(text) == text


# ----- 5. more secret formats in commands -------------------------------------------------

AWS_SECRET = "wJalrXUtnFEMI/K7MDENG/bPxRfiCYEXAMPLEKEY"

FORMATS = [
    ("mysql -u root -pS3cretPass db", "S3cretPass", "mysql -u root -p*** db"),
    ("mysqldump -h db -uroot -p'pa ss' shop > x.sql", "pa ss", "-p'***' shop"),
    ('mariadb -p"hunter2" -e "select 1"', "hunter2", '-p"***"'),
    ("mysql --password=hunter2 db", "hunter2", "--password=***"),
    ("curl -u alice:hunter2 https://api.example.com", "hunter2", "curl -u alice:*** https://"),
    ("curl -s --user 'bob:p@ss word' https://x", "p@ss word", "--user 'bob:***'"),
    ("curl -ualice:hunter2 https://x", "hunter2", "-ualice:***"),
    (
        f"aws configure set aws_secret_access_key {AWS_SECRET}",
        "wJalrXUtnFEMI",
        "aws configure set aws_secret_access_key ***",
    ),
    (
        "aws configure set default.aws_session_token FwoGZXIvYXdzEJr --profile dev",
        "FwoGZXIvYXdzEJr",
        "default.aws_session_token *** --profile dev",
    ),
    (f"export KEY_FOR_LATER {AWS_SECRET} done", "wJalrXUtnFEMI", "KEY_FOR_LATER *** done"),
    (f"the secret is {AWS_SECRET}", "K7MDENG", "the secret is ***"),
    ("sshpass -p hunter2 ssh bob@host", "hunter2", "sshpass -p *** ssh"),
    ("redis-cli -h cache -a hunter2 ping", "hunter2", "-a *** ping"),
    (
        "curl -H 'X-Auth: eyJhbGciOiJIUzI1NiJ9.eyJzdWIiOiIxMjM0NTY3ODkwIn0.dozjgNryP4J3jVmNHl0' x",
        "eyJzdWIiOiIxMjM0NTY3ODkwIn0",
        "X-Auth: eyJ***' x",
    ),
]


@pytest.mark.parametrize("text, secret, kept", FORMATS)
def test_secret_format_in_commands(text, secret, kept):
    assert_masked(text, secret, kept)


@pytest.mark.parametrize(
    "text",
    [
        "mkdir -p /tmp/build/output",
        "ssh -p 2222 bob@host",
        "git add -p src/app.py",
        "mysql -u root -p shop",  # -p alone: mysql prompts, "shop" is the database
        "mysql -h db -P 3306 -u root shop",  # -P is the port
        "docker run -u 1000:1000 image",
        "curl -u alice https://x",  # no password: curl prompts
        "pip install -U requests",
        "sort -u names.txt",
        "aws configure list --profile dev",
        "aws configure get aws_secret_access_key",
        "redis-cli -h cache ping",
        "python -m pytest -p no:cacheprovider",
    ],
)
def test_secret_format_false_positives_stay(text):
    assert redact(text) == text


def test_secret_format_reaches_the_database_masked(tmp_path):
    t = Transcript(tmp_path / "t.jsonl")
    t.prompt("set up the tools")
    for command in (
        "mysql -uroot -pS3cretPass shop",
        "curl -u alice:hunter2 https://x",
        f"aws configure set aws_secret_access_key {AWS_SECRET}",
    ):
        t.tool("Bash", command=command)
    t.text("done")
    record_stop(hook_payload(t.write()))
    dump = _db_dump()
    for secret in ("S3cretPass", "hunter2", "wJalrXUtnFEMI"):
        assert secret not in dump


# ----- 4. lone UTF-16 surrogates ----------------------------------------------------------


def _transcript_with_lone_surrogates(tmp_path) -> Path:
    """A transcript as JavaScript writes a string cut inside an emoji: "\\ud83d" alone."""
    t = Transcript(tmp_path / "t.jsonl")
    t.prompt("cut emoji LONE_HIGH here")
    t.tool("Tool LONE_LOW", command="x")
    t.tool("Bash", command="echo LONE_HIGH")
    t.text("Done LONE_HIGH and a whole one: \U0001f600")
    path = t.write()
    raw = path.read_text(encoding="utf-8")
    path.write_text(raw.replace("LONE_HIGH", "\\ud83d").replace("LONE_LOW", "\\ude00"))
    return path


def test_surrogate_in_transcript_and_session_id_is_recorded(tmp_path):
    path = _transcript_with_lone_surrogates(tmp_path)
    record_stop(hook_payload(path, session_id="sess-\ud83d", cwd="/home/dev/\udc80proj"))
    conn = open_db()
    try:
        (row,) = conn.execute("SELECT * FROM turns").fetchall()
    finally:
        conn.close()
    assert row["session_id"] == "sess-\ufffd"
    assert row["ask"] == "cut emoji \ufffd here"
    assert json.loads(row["commands"]) == ["echo \ufffd"]
    assert json.loads(row["tools"]) == {"Tool \ufffd": 1, "Bash": 1}
    assert row["summary"] == "Done \ufffd and a whole one: \U0001f600"  # a real pair stays
    assert row["turn_key"].startswith("sess-\ufffd:")


@pytest.mark.slow
def test_surrogate_turn_is_recorded_by_the_hook_process(tmp_path):
    path = _transcript_with_lone_surrogates(tmp_path)
    stdin = json.dumps(hook_payload(path, session_id="s-\ud83d", cwd=str(tmp_path))).encode()
    assert b"\\ud83d" in stdin  # JSON escapes it, as Claude Code's would
    proc = run_hook(stdin, tmp_path)
    assert proc.returncode == 0 and proc.stderr == b""
    conn = sqlite3.connect(tmp_path / "brain.db")
    try:
        rows = conn.execute("SELECT session_id, ask FROM turns").fetchall()
    finally:
        conn.close()
    assert rows == [("s-\ufffd", "cut emoji \ufffd here")]
    assert not (tmp_path / "logs" / "hook.log").exists()


def test_surrogate_in_an_ab_query_is_logged(tmp_path):
    from brain.telemetry import ABRow, log_ab

    row = ABRow(
        query="why \ud83d",
        mode_a="vector",
        mode_b="graph",
        k=3,
        gate_entity=False,
        gate_reason="r \udcff",
        candidates_added=0,
        new_in_top_k=[],
        via_graph=["T \ud83d"],
        top_a=["a\ud83d.md"],
        top_b=[],
        reranked=False,
        latency_ms={},
        warnings=["w \ud83d"],
    )
    conn = open_db()
    try:
        row_id = log_ab(conn, row, source="work \ud83d", vault="/v\udcff")
        stored = conn.execute("SELECT query, via_graph_titles FROM ab_recall WHERE id = ?", (row_id,)).fetchone()
    finally:
        conn.close()
    assert tuple(stored) == ("why \ufffd", '["T \ufffd"]')


def test_surrogate_in_a_filter_of_the_readers_is_looked_up_as_stored(tmp_path):
    """A filter typed in a terminal that is not UTF-8 reaches Python as lone surrogates
    (b"\\xff" is "\\udcff"): `brain turns --session`, `--project`, `brain recalls --session` and
    `brain ab report --source` ended in a UnicodeEncodeError traceback at SQLite. They look it up
    as the rows were stored, each half pair as U+FFFD."""
    from brain.autorecall.store import write_recall
    from brain.ledger.store import recent_turns
    from brain.telemetry import ABRow, log_ab

    path = _transcript_with_lone_surrogates(tmp_path)
    record_stop(hook_payload(path, session_id="sess-\ud83d", cwd=str(tmp_path / "proj\udcff")))
    conn = open_db()
    try:
        recall = {"session_id": "rs-\ud83d", "vault": "/v", "prompt": "a prompt", "prompt_chars": 8, "latency_ms": 1.0}
        write_recall(conn, {**recall, "reason": "no-server"})
        row = ABRow("q", "vector", "graph", 3, False, "r", 0, [], [], [], [], False, {}, [])
        log_ab(conn, row, source="work \ud83d", vault="/v")
        # Any text the library is given to match: the MCP tool passes `text` and `since` too.
        assert [r["session_id"] for r in recent_turns(conn, text="emoji \udcff")] == ["sess-\ufffd"]
    finally:
        conn.close()
    runner = CliRunner()
    for args, found in (
        (["turns", "--session", "sess-\udcff"], "ask      cut emoji \ufffd here"),
        (["turns", "--project", "proj\udcff"], "ask      cut emoji \ufffd here"),
        (["turns", "--stats", "--session", "sess-\udcff"], "1 turn recorded"),
        (["recalls", "--session", "rs-\udcff"], "nothing: no-server"),
        (["ab", "report", "--source", "work \udcff"], "queries: 1 "),
    ):
        result = runner.invoke(cli, args)
        assert result.exit_code == 0 and result.exception is None, (args, result.output, result.exception)
        assert found in result.output, (args, result.output)


# ----- 3 and 11. hook install / uninstall keep the settings file as it was -----------------


def _settings_file(folder: Path, mode: int = 0o600) -> Path:
    path = folder / ".claude" / "settings.json"
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_text(json.dumps({"model": "opus", "env": {"ANTHROPIC_API_KEY": "sk-ant-x"}}))
    path.chmod(mode)
    return path


def _mode(path: Path) -> int:
    return stat.S_IMODE(path.stat().st_mode)


@pytest.mark.parametrize("mode", [0o600, 0o640, 0o644], ids=oct)
def test_hook_install_keeps_the_settings_mode(tmp_path, mode):
    path = _settings_file(tmp_path, mode)
    installed = setup.install(path, CMD)
    assert _mode(path) == mode
    assert _mode(installed.backup) == mode  # a backup is no more readable than the original
    removed = setup.uninstall(path)
    # the file is as it was, and so no backup is kept: install's held the same bytes
    assert _mode(path) == mode and removed.backup is None and not installed.backup.exists()
    assert json.loads(path.read_text())["model"] == "opus"
    path.write_text(path.read_text().replace("opus", "sonnet"))  # an edit between: backups stay
    installed = setup.install(path, CMD)
    path.write_text(path.read_text().replace("sonnet", "haiku"))
    removed = setup.uninstall(path)
    assert _mode(path) == mode and _mode(removed.backup) == mode and _mode(installed.backup) == mode
    assert json.loads(path.read_text())["model"] == "haiku"


def test_hook_install_keeps_the_owner(tmp_path):
    if os.geteuid() != 0:
        pytest.skip("only root can give a file to another user")
    path = _settings_file(tmp_path)
    os.chown(path, 65534, 65534)  # a user's file, edited by root
    setup.install(path, CMD)
    assert (path.stat().st_uid, path.stat().st_gid) == (65534, 65534)


def test_hook_install_refuses_a_file_it_cannot_give_back_to_its_owner(open_tmp):
    if os.geteuid() != 0:
        pytest.skip("only root can make a file of another user for this test")
    path = _settings_file(open_tmp, 0o666)  # root's, and anyone may write it
    path.parent.chmod(0o777)
    before = path.read_bytes()
    for command in (["hook", "install"], ["mcp", "install", "--vault", str(open_tmp)]):
        option = "--config" if command[0] == "mcp" else "--settings"
        proc = _run_as_user([*command, option, str(path)], open_tmp, BRAIN_HOME=str(open_tmp / "h"))
        assert proc.returncode == 1, proc
        assert b"Traceback" not in proc.stderr and proc.stderr.count(b"\n") == 1, proc.stderr
        assert b"belongs to another user" in proc.stderr and b"unchanged" in proc.stderr
    assert path.read_bytes() == before and path.stat().st_uid == 0
    assert list(path.parent.iterdir()) == [path]  # no backup, no temporary file


def test_hook_install_refuses_a_group_it_cannot_give_back(open_tmp):
    if os.geteuid() != 0:
        pytest.skip("only root can make a file of a group its owner is not in")
    path = _settings_file(open_tmp, 0o664)
    os.chown(path, NOBODY, 0)  # the user's file, in a group they are not in
    path.parent.chmod(0o777)
    before = path.read_bytes()
    proc = _run_as_user(["hook", "install", "--settings", str(path)], open_tmp, BRAIN_HOME=str(open_tmp / "h"))
    assert proc.returncode == 1 and proc.stderr.count(b"\n") == 1, proc
    assert b"cannot keep the group" in proc.stderr and b"unchanged" in proc.stderr
    assert path.read_bytes() == before and (path.stat().st_uid, path.stat().st_gid) == (NOBODY, 0)
    assert list(path.parent.iterdir()) == [path]


def test_hook_install_refuses_a_fifo_without_waiting_on_it(tmp_path):
    fifo = tmp_path / "settings.json"
    os.mkfifo(fifo)
    cmd, env = brain_command()
    for args in (
        ["hook", "install", "--settings"],
        ["hook", "uninstall", "--settings"],
        ["mcp", "uninstall", "--config"],
    ):
        # Reading a FIFO with no writer would wait for ever; the write would replace it.
        proc = subprocess.run([*cmd, *args, str(fifo)], env=env, capture_output=True, timeout=30, check=False)
        assert proc.returncode == 1 and proc.stderr.count(b"\n") == 1, proc
        assert b"not a regular file" in proc.stderr
    assert stat.S_ISFIFO(fifo.lstat().st_mode) and list(tmp_path.iterdir()) == [fifo]


def test_hook_install_leaves_a_device_such_as_dev_null_alone(tmp_path):
    if os.geteuid() != 0:
        pytest.skip("only root can make a device node")
    null = tmp_path / "null"
    os.mknod(null, stat.S_IFCHR | 0o666, os.makedev(1, 3))  # /dev/null's own numbers
    for args in (["hook", "install", "--settings"], ["mcp", "install", "--vault", str(tmp_path), "--config"]):
        result = CliRunner().invoke(cli, [*args, str(null)])
        assert result.exit_code == 1 and "not a regular file" in result.output, result.output
    assert stat.S_ISCHR(null.lstat().st_mode) and list(tmp_path.iterdir()) == [null]


def test_hook_install_writes_through_a_symlink(tmp_path):
    dotfiles = tmp_path / "dotfiles" / "claude-settings.json"
    dotfiles.parent.mkdir()
    dotfiles.write_text('{"model": "opus"}')
    dotfiles.chmod(0o600)
    link = tmp_path / ".claude" / "settings.json"
    link.parent.mkdir()
    link.symlink_to(dotfiles)
    installed = setup.install(link, CMD)
    assert link.is_symlink() and link.resolve() == dotfiles.resolve()
    assert json.loads(dotfiles.read_text())["hooks"]["Stop"][0]["hooks"][0]["command"] == CMD
    assert _mode(dotfiles) == 0o600
    assert installed.backup.parent == link.parent and not installed.backup.is_symlink()
    assert json.loads(installed.backup.read_text()) == {"model": "opus"}
    setup.uninstall(link)
    assert link.is_symlink() and json.loads(dotfiles.read_text()) == {"model": "opus"}
    assert sorted(p.name for p in dotfiles.parent.iterdir()) == ["claude-settings.json"]


def test_hook_install_refuses_a_read_only_file(tmp_path):
    path = _settings_file(tmp_path, 0o444)
    before = path.read_bytes()
    result = CliRunner().invoke(cli, ["hook", "install", "--settings", str(path)])
    assert result.exit_code == 1
    assert result.output.startswith("Error: ") and result.output.count("\n") == 1
    assert "read-only" in result.output and "Traceback" not in result.output
    assert path.read_bytes() == before and _mode(path) == 0o444
    assert list(path.parent.iterdir()) == [path]  # no backup, no temporary file
    path.chmod(0o644)
    setup.install(path, CMD)
    path.chmod(0o444)
    with pytest.raises(ConfigError, match="read-only"):
        setup.uninstall(path)


def test_hook_install_non_utf8_settings_is_one_line(tmp_path):
    path = tmp_path / "settings.json"
    path.write_bytes(b'{"model": "op\xffus"}')
    for command in ("install", "uninstall"):
        result = CliRunner().invoke(cli, ["hook", command, "--settings", str(path)])
        assert result.exit_code == 1, result.output
        assert result.output.count("\n") == 1 and "not UTF-8" in result.output
        assert path.read_bytes() == b'{"model": "op\xffus"}'
    assert list(tmp_path.iterdir()) == [path]


def test_hook_install_a_failed_write_leaves_the_file_unchanged(tmp_path, monkeypatch):
    path = _settings_file(tmp_path)
    before = path.read_bytes()

    def disk_full(*args, **kwargs):
        raise OSError(28, "No space left on device")

    monkeypatch.setattr(setup.os, "replace", disk_full)
    with pytest.raises(ConfigError, match=r"No space left on device.*unchanged"):
        setup.install(path, CMD)
    assert path.read_bytes() == before
    assert list(path.parent.iterdir()) == [path]  # the backup and temporary file are gone


def test_hook_install_in_a_read_only_claude_folder(open_tmp):
    path = _settings_file(open_tmp, 0o644)
    _for_test_user(path)  # the file is the user's and writable; its folder is not
    path.parent.chmod(0o555)
    before = path.read_bytes()
    for command in ("install", "uninstall"):
        proc = _run_as_user(["hook", command, "--settings", str(path)], open_tmp, BRAIN_HOME=str(open_tmp / "h"))
        if command == "uninstall":
            assert proc.returncode == 0 and b"not installed" in proc.stdout
            continue
        assert proc.returncode == 1, proc
        assert b"Traceback" not in proc.stderr and proc.stderr.count(b"\n") == 1, proc.stderr
        assert b"cannot write" in proc.stderr and b"unchanged" in proc.stderr
    assert path.read_bytes() == before
    assert list(path.parent.iterdir()) == [path]


def test_hook_install_in_a_missing_folder_under_a_read_only_one(open_tmp):
    locked = open_tmp / "locked"
    locked.mkdir(mode=0o555)
    proc = _run_as_user(
        ["hook", "install", "--settings", str(locked / ".claude" / "settings.json")],
        open_tmp,
        BRAIN_HOME=str(open_tmp / "h"),
    )
    assert proc.returncode == 1, proc
    assert b"Traceback" not in proc.stderr and proc.stderr.count(b"\n") == 1, proc.stderr
    assert not (locked / ".claude").exists()


# ----- 11. overflows -------------------------------------------------------------------


def _one_turn(tmp_path, ask="hi") -> Path:
    t = Transcript(tmp_path / "t.jsonl")
    t.prompt(ask)
    t.text("hello")
    return t.write()


def test_overflow_turns_limit_and_days(tmp_path):
    record_stop(hook_payload(_one_turn(tmp_path)))
    huge = "99999999999999999999"
    for args in (["turns", "-n", huge], ["turns", "-n", huge, "--json"], ["turns", "--stats", "--days", huge]):
        result = CliRunner().invoke(cli, args)
        assert result.exit_code == 0, result.output
        assert "Traceback" not in result.output
    assert len(json.loads(CliRunner().invoke(cli, ["turns", "-n", huge, "--json"]).output)) == 1
    result = CliRunner().invoke(cli, ["turns", "-n", "-5"])
    assert result.exit_code == 2 and "Invalid value" in result.output


@pytest.mark.parametrize("since", ["99999999d", "99999999999999999999999w", "9999999999999h"])
def test_overflow_ab_report_since(since):
    result = CliRunner().invoke(cli, ["ab", "report", "--since", since])
    assert result.exit_code == 0, result.output
    assert result.output.startswith("no A/B rows logged yet")  # every row, and there is none
    result = CliRunner().invoke(cli, ["ab", "report", "--since", since, "--json"])
    assert json.loads(result.output)["since"] == "0001-01-01 00:00:00"


@pytest.mark.slow
@pytest.mark.parametrize("budget", ["inf", "-inf", "nan", "-1", "0", "1e999", "lots"])
def test_overflow_hook_budget(tmp_path, budget):
    stdin = json.dumps(hook_payload(_one_turn(tmp_path, ask=f"budget {budget}"))).encode()
    proc = run_hook(stdin, tmp_path, BRAIN_HOOK_BUDGET=budget)
    assert proc.returncode == 0 and proc.stdout == b""
    assert proc.stderr == b""  # no traceback from the watchdog thread
    conn = sqlite3.connect(tmp_path / "brain.db")
    try:
        assert conn.execute("SELECT ask FROM turns").fetchall() == [(f"budget {budget}",)]
    finally:
        conn.close()


# ----- 7. a damaged brain.db ------------------------------------------------------------


def _filled_db(path: Path, turns: int = 300) -> None:
    """A brain.db with enough rows to span many pages, closed cleanly (no -wal left)."""
    conn = open_db(path)
    try:
        for i in range(turns):
            row = {"turn_key": f"k{i}", "session_id": f"s{i}", "ask": f"question {i} " + "x" * 400}
            write_turn(conn, row)
    finally:
        conn.close()


def _damage(path: Path, how: str) -> None:
    data = path.read_bytes()
    if how == "garbage":
        path.write_bytes(b"this is not a database at all\n" * 500)
    elif how == "truncated-header":
        path.write_bytes(data[:60])
    elif how == "truncated-half":
        path.write_bytes(data[: len(data) // 2])
    elif how == "pages-overwritten":  # the header is fine, the pages after it are not
        path.write_bytes(data[:4096] + b"\xde\xad\xbe\xef" * ((len(data) - 4096) // 4))


DAMAGE = ["garbage", "truncated-header", "truncated-half", "pages-overwritten"]


def _assert_damaged_message(result, db: Path) -> None:
    assert result.exit_code == 1, result.output
    assert isinstance(result.exception, SystemExit)  # a clean exit, not an exception
    assert result.output.startswith("Error: ") and result.output.count("\n") == 1, result.output
    assert f"{db} is damaged" in result.output and "move it aside" in result.output


@pytest.mark.parametrize("how", DAMAGE)
def test_corrupt_db_turns_and_ab_report_say_which_file(brain_home, how):
    db = brain_home / "brain.db"
    _filled_db(db)
    _damage(db, how)
    before = db.read_bytes()
    for args in (["turns"], ["turns", "--json"], ["turns", "--stats"], ["ab", "report"]):
        _assert_damaged_message(CliRunner().invoke(cli, args), db)
    assert db.read_bytes() == before  # brain never "repairs" it behind the user's back


@pytest.mark.parametrize("as_json", [False, True])
def test_corrupt_db_ask_ab_still_answers_and_says_which_file(brain_home, toy_vault, as_json):
    """Telemetry never breaks recall: a damaged brain.db cost `brain ask --ab` its answer."""
    assert CliRunner().invoke(cli, ["index", "--vault", str(toy_vault), "-q"]).exit_code == 0
    db = brain_home / "brain.db"
    _filled_db(db)
    _damage(db, "garbage")
    before = db.read_bytes()
    args = ["ask", "--vault", str(toy_vault), "--ab", "graph memory", *(["--json"] if as_json else [])]
    result = CliRunner().invoke(cli, args)
    assert result.exit_code == 0, result.output
    if as_json:
        data = json.loads(result.stdout)
        assert data["a"]["results"] and data["b"]["results"] and data["ab_recall_id"] is None
        assert f"{db} is damaged" in data["ab_recall_error"]
    else:
        assert "gate:" in result.stdout and "new in the top" in result.stdout
    assert result.stderr.count("\n") == 1 and "Traceback" not in result.stderr, result.stderr
    assert result.stderr.startswith("brain: WARNING: not logged to ab_recall: ")
    assert f"{db} is damaged" in result.stderr and "move it aside" in result.stderr
    assert db.read_bytes() == before


@pytest.mark.slow
@pytest.mark.parametrize("how", ["garbage", "pages-overwritten"])
def test_corrupt_db_stop_hook_exits_zero_and_logs_it(tmp_path, how):
    db = tmp_path / "brain.db"
    _filled_db(db)
    _damage(db, how)
    proc = run_hook(json.dumps(hook_payload(_one_turn(tmp_path))).encode(), tmp_path)
    assert proc.returncode == 0 and proc.stdout == b"" and proc.stderr == b""
    log = (tmp_path / "logs" / "hook.log").read_text()
    assert f"{db} is damaged" in log
    # The one line `brain turns` prints, as the README says: no traceback under a foreseen error.
    assert len(log.splitlines()) == 1 and "Traceback" not in log, log


# ----- 10. a read-only brain home ----------------------------------------------------------


def _home_with_a_turn(folder: Path) -> Path:
    home = folder / "home"
    home.mkdir()
    conn = open_db(home / "brain.db")
    try:
        write_turn(conn, {"turn_key": "k1", "session_id": "s1", "ask": "recorded before"})
    finally:
        conn.close()
    assert sorted(p.name for p in home.iterdir()) == ["brain.db"]  # WAL files gone on close
    (home / "brain.db").chmod(0o644)  # brain makes it 0600: the test user stands in for its owner
    return home


def _turns_as_user(home: Path, *args: str) -> subprocess.CompletedProcess:
    return _run_as_user(["turns", *args], home.parent, BRAIN_HOME=str(home))


def test_read_only_home_turns_still_read(open_tmp):
    home = _home_with_a_turn(open_tmp)
    home.chmod(0o555)
    (home / "brain.db").chmod(0o444)
    for args in ([], ["--stats"], ["--json"]):
        proc = _turns_as_user(home, *args)
        assert proc.returncode == 0, proc.stderr
        assert proc.stderr == b""
    assert b"recorded before" in _turns_as_user(home).stdout
    proc = _run_as_user(["ab", "report"], open_tmp, BRAIN_HOME=str(home))
    assert proc.returncode == 0 and b"no A/B rows logged yet" in proc.stdout, proc.stderr
    assert sorted(p.name for p in home.iterdir()) == ["brain.db"]


def test_read_only_db_file_in_a_writable_home_turns_still_read(open_tmp):
    home = _home_with_a_turn(open_tmp)
    _for_test_user(home)
    (home / "brain.db").chmod(0o444)
    proc = _turns_as_user(home)
    assert proc.returncode == 0 and b"recorded before" in proc.stdout, proc.stderr


@pytest.mark.parametrize("where", ["read-only home", "home under a read-only folder"])
def test_read_only_home_without_a_db_reads_as_nothing_recorded(open_tmp, where):
    # A reader creates no database (it once tried, and failed in one line): nothing is recorded.
    locked = open_tmp / "locked"
    locked.mkdir(mode=0o555)
    home = locked if where == "read-only home" else locked / "home"
    proc = _run_as_user(["turns"], open_tmp, BRAIN_HOME=str(home))
    assert proc.returncode == 0 and proc.stderr == b"", proc.stderr
    assert proc.stdout.startswith(b"no turns recorded yet")
    assert list(locked.iterdir()) == []


READERS = [["turns"], ["turns", "--stats"], ["turns", "--json"], ["ab", "report"], ["recalls"]]


def test_read_only_commands_leave_a_file_that_is_not_a_database_as_it_is(tmp_path, monkeypatch):
    # BRAIN_DB naming a user's notes: `brain turns` made it 0600, then called it "damaged".
    notes = tmp_path / "notes.txt"
    notes.write_text("my notes, not a database\n" * 10)
    notes.chmod(0o644)
    monkeypatch.setenv("BRAIN_DB", str(notes))
    for args in READERS:
        result = CliRunner().invoke(cli, args)
        assert result.exit_code == 1 and isinstance(result.exception, SystemExit), result.output
        assert result.output.startswith("Error: ") and result.output.count("\n") == 1, result.output
        assert f"{notes} is not an SQLite database (left as it is)" in result.output
    assert _mode(notes) == 0o644 and notes.read_text() == "my notes, not a database\n" * 10
    assert sorted(p.name for p in tmp_path.iterdir()) == ["notes.txt"]


def test_writers_leave_a_file_that_is_not_a_database_as_it_is(tmp_path, monkeypatch):
    notes = tmp_path / "notes.txt"
    notes.write_text("my notes\n")
    notes.chmod(0o644)
    monkeypatch.setenv("BRAIN_DB", str(notes))
    with pytest.raises(BrainDatabaseError, match="is not an SQLite database"):
        open_db()
    assert _mode(notes) == 0o644 and notes.read_text() == "my notes\n"


@pytest.mark.skipif(not Path("/proc/self/status").is_file(), reason="no procfs")
def test_a_procfs_file_is_no_database_to_readers_writers_and_the_hook(tmp_path, monkeypatch):
    # /proc/self/status is a regular file stat calls 0 bytes, which read as "no turns recorded
    # yet" (`brain turns` exit 0); it is refused as a text file is, and the Stop hook logs it
    procfs = "/proc/self/status"
    assert Path(procfs).stat().st_size == 0
    monkeypatch.setenv("BRAIN_DB", procfs)
    for args in READERS:
        result = CliRunner().invoke(cli, args)
        assert result.exit_code == 1 and result.output.count("\n") == 1, result.output
        assert f"{procfs} is not an SQLite database (left as it is)" in result.output
    with pytest.raises(BrainDatabaseError, match="is not an SQLite database"):
        open_db()
    proc = run_hook(json.dumps(hook_payload(_one_turn(tmp_path))).encode(), tmp_path, BRAIN_DB=procfs)
    assert proc.returncode == 0 and proc.stdout == b"" and proc.stderr == b""
    log = (tmp_path / "logs" / "hook.log").read_text()
    assert f"{procfs} is not an SQLite database" in log and len(log.splitlines()) == 1, log


@pytest.mark.parametrize("state", ["missing", "empty", "missing folder"])
def test_read_only_commands_create_no_database(tmp_path, monkeypatch, state):
    # A missing or empty BRAIN_DB got a whole database written into it by `brain turns`.
    db = tmp_path / ("folder/brain.db" if state == "missing folder" else "brain.db")
    if state == "empty":
        db.touch(mode=0o644)
        db.chmod(0o644)
    monkeypatch.setenv("BRAIN_DB", str(db))
    outputs = [CliRunner().invoke(cli, args) for args in READERS]
    assert all(r.exit_code == 0 for r in outputs), [r.output for r in outputs]
    assert "no turns recorded yet" in outputs[0].output and "0 turns recorded" in outputs[1].output
    assert json.loads(outputs[2].output) == [] and "no A/B rows logged yet" in outputs[3].output
    assert "no prompts recorded yet" in outputs[4].output
    assert sorted(p.relative_to(tmp_path).as_posix() for p in tmp_path.rglob("*")) == (
        ["brain.db"] if state == "empty" else []
    )
    if state == "empty":
        assert db.read_bytes() == b"" and _mode(db) == 0o644


def test_read_only_commands_read_a_database_without_narrowing_it(tmp_path, monkeypatch):
    db = tmp_path / "brain.db"
    conn = open_db(db)
    try:
        write_turn(conn, {"turn_key": "k1", "session_id": "s1", "ask": "recorded before"})
    finally:
        conn.close()
    db.chmod(0o644)
    monkeypatch.setenv("BRAIN_DB", str(db))
    result = CliRunner().invoke(cli, ["turns"])
    assert result.exit_code == 0 and "recorded before" in result.output, result.output
    assert _mode(db) == 0o644
    open_db().close()  # a writer narrows it, as ever
    assert _mode(db) == 0o600


# ----- 17. one resolution of settings for the hook and the CLI ------------------------------


def _brain(args: list[str], cwd: Path, stdin: bytes = b"", **env_extra: str):
    cmd, env = brain_command()  # no BRAIN_* variable from the test run
    env.update(env_extra)
    return subprocess.run([*cmd, *args], input=stdin, env=env, cwd=cwd, capture_output=True, check=False, timeout=60)


def test_dotenv_brain_db_in_brain_home_is_used_by_hook_and_turns(tmp_path):
    home = tmp_path / "home"
    home.mkdir()
    ledger = tmp_path / "elsewhere" / "ledger.db"
    (home / ".env").write_text(f"# where the ledger lives\nBRAIN_DB={ledger}\n")
    work = tmp_path / "project"  # Claude Code runs the hook in the project, with no .env
    work.mkdir()
    stdin = json.dumps(hook_payload(_one_turn(tmp_path, ask="from the hook"), cwd=str(work)))
    proc = _brain(["hook", "stop"], work, stdin.encode(), BRAIN_HOME=str(home))
    assert proc.returncode == 0 and proc.stderr == b""
    assert ledger.is_file() and not (home / "brain.db").exists()
    proc = _brain(["turns", "--json"], tmp_path, BRAIN_HOME=str(home))
    assert [r["ask"] for r in json.loads(proc.stdout)] == ["from the hook"]


def test_dotenv_with_a_nul_byte_skips_that_line_and_says_so(tmp_path):
    # The environment cannot hold a NUL: that variable is skipped, the file's others are read,
    # the CLI warns in one line, and the Stop hook still records the turn.
    home = tmp_path / "home"
    home.mkdir()
    ledger = tmp_path / "ledger.db"
    (home / ".env").write_bytes(b"BRAIN_K\x00EY=1\nBRAIN_PROMPT_K=x\x00y\nBRAIN_DB=" + str(ledger).encode() + b"\n")
    work = tmp_path / "project"
    work.mkdir()
    stdin = json.dumps(hook_payload(_one_turn(tmp_path, ask="with a NUL in .env"), cwd=str(work)))
    proc = _brain(["hook", "stop"], work, stdin.encode(), BRAIN_HOME=str(home))
    assert proc.returncode == 0 and proc.stderr == b""
    assert "a NUL byte" in (home / "logs" / "hook.log").read_text()
    proc = _brain(["turns", "--json"], tmp_path, BRAIN_HOME=str(home))
    assert proc.returncode == 0, proc.stderr
    assert [r["ask"] for r in json.loads(proc.stdout)] == ["with a NUL in .env"]
    warnings = proc.stderr.decode().splitlines()
    assert warnings == [
        f"brain: WARNING: {home / '.env'}: BRAIN_K\\x00EY holds a NUL byte: skipped",
        f"brain: WARNING: {home / '.env'}: BRAIN_PROMPT_K holds a NUL byte: skipped",
    ]


def test_dotenv_quote_never_closed_is_skipped_and_said(tmp_path):
    # python-dotenv skips it; read as a bare value it made a database named '"unterminated'.
    home = tmp_path / "home"
    home.mkdir()
    (home / ".env").write_text('BRAIN_DB="unterminated\nBRAIN_PROMPT_K=3\n')
    proc = _brain(["turns"], tmp_path, BRAIN_HOME=str(home))
    assert proc.returncode == 0, proc.stderr
    assert (
        proc.stderr.decode()
        == f"brain: WARNING: {home / '.env'}, line 1: the quote after BRAIN_DB= never closes: skipped\n"
    )
    assert not any(p.name.startswith('"') for p in tmp_path.rglob("*"))


def test_dotenv_in_the_working_directory_and_real_env_win(tmp_path):
    home = tmp_path / "home"
    home.mkdir()
    (home / ".env").write_text("BRAIN_DB=${BRAIN_HOME}/from-home.db\nBRAIN_HOOK_BUDGET=30\n")
    work = tmp_path / "project"
    work.mkdir()
    # The working directory's file names the home (then read too) and wins over it.
    (work / ".env").write_text(f"export BRAIN_HOME='{home}'\nBRAIN_HOOK_BUDGET=\"5\"  # seconds\n")
    stdin = json.dumps(hook_payload(_one_turn(tmp_path), cwd=str(work))).encode()
    assert _brain(["hook", "stop"], work, stdin).returncode == 0
    assert (home / "from-home.db").is_file()
    # The real environment wins over both files.
    real = tmp_path / "real.db"
    assert _brain(["hook", "stop"], work, stdin, BRAIN_DB=str(real)).returncode == 0
    assert real.is_file()


def test_dotenv_parse_like_python_dotenv(monkeypatch):
    from brain.config import parse_dotenv

    monkeypatch.setenv("FROM_ENV", "env-value")
    text = (
        "# a comment\n"
        "PLAIN=value\n"
        "  export EXPORTED = spaced  # trailing comment\n"
        "HASH=a#b\n"
        "SINGLE='${FROM_ENV} \\n \\' here'\n"
        'DOUBLE="line1\\nline2 \\"q\\" C:\\\\dir \\p"\n'
        'MULTI="first\n'
        'second"\n'
        "EXPANDED=${FROM_ENV}/${PLAIN}/${MISSING:-fallback}/${MISSING}\n"
        "EMPTY=\n"
        "not an assignment\n"
        "URL=https://x.example/?a=1&b=2\n"
        "NOTE= # only a note\n"
        "HASHV=#x\n"
    )
    assert parse_dotenv(text) == {
        "PLAIN": "value",
        "EXPORTED": "spaced",
        "HASH": "a#b",
        "SINGLE": "env-value \\n ' here",  # python-dotenv 1.x expands in single quotes too
        "DOUBLE": 'line1\nline2 "q" C:\\dir \\p',
        "MULTI": "first\nsecond",
        "EXPANDED": "env-value/value/fallback/",
        "EMPTY": "",
        "URL": "https://x.example/?a=1&b=2",
        "NOTE": "",
        "HASHV": "#x",
    }


def test_read_only_db_that_needs_an_upgrade_is_one_line(open_tmp):
    home = _home_with_a_turn(open_tmp)
    conn = sqlite3.connect(home / "brain.db")  # as if written by an older brain
    conn.execute("DELETE FROM _migrations WHERE name = 'm002_ab_recall'")
    conn.execute("DROP TABLE ab_recall")
    conn.commit()
    conn.close()
    home.chmod(0o555)
    proc = _turns_as_user(home)
    assert proc.returncode == 1 and proc.stderr.count(b"\n") == 1, proc.stderr
    assert b"read-only and older than this brain" in proc.stderr


def test_corrupt_db_eval_ab_log_is_one_line(tmp_path, monkeypatch):
    """brain eval --ab-log wrote through a bare open_db: a damaged brain.db was a traceback."""
    from click.testing import CliRunner
    from conftest import write

    from brain.cli import cli

    vault = tmp_path / "v"
    write(vault, "a.md", "# Alpha\n\napples and pears\n")
    queries = tmp_path / "q.jsonl"
    queries.write_text('{"id": "1", "query": "apples", "type": "entity", "relevant": ["a.md"]}\n')
    db = tmp_path / "brain.db"
    monkeypatch.setenv("BRAIN_DB", str(db))
    from brain.db import open_db

    conn = open_db()  # opens cleanly; fails at the first row written, as a damaged page would
    conn.execute(
        "CREATE TRIGGER fail BEFORE INSERT ON ab_recall BEGIN SELECT RAISE(FAIL, 'database disk image is malformed'); END"
    )
    conn.close()
    result = CliRunner().invoke(
        cli, ["eval", str(queries), "--vault", str(vault), "--modes", "vector", "--ab-log", "x"]
    )
    assert result.exit_code == 1, result.output
    assert str(db) in result.output and "malformed" in result.output
    assert "Traceback" not in result.output and not isinstance(result.exception, sqlite3.Error)


# ----- QA: a value of the wrong type in one line never costs the turn --------------------

_TASK_PROMPT = "find the flaky test"
_ODD_LINES: dict[str, list[dict]] = {
    "cwd is a number": [
        {"type": "assistant", "cwd": 5, "message": {"id": "m", "content": [{"type": "text", "text": "answer"}]}}
    ],
    "text is a number": [{"type": "assistant", "message": {"id": "m", "content": [{"type": "text", "text": 5}]}}],
    "message id is a list": [
        {"type": "assistant", "message": {"id": ["m"], "content": [{"type": "text", "text": "answer"}]}}
    ],
    "message id is an object": [
        {"type": "assistant", "message": {"id": {"m": 1}, "content": [{"type": "text", "text": "answer"}]}}
    ],
    "tool id is a list": [
        {
            "type": "assistant",
            "message": {
                "id": "m",
                "content": [{"type": "tool_use", "id": ["t"], "name": "Bash", "input": {"command": "ls"}}],
            },
        }
    ],
    "tool name is an object": [
        {
            "type": "assistant",
            "message": {"id": "m", "content": [{"type": "tool_use", "id": "t", "name": {"n": 1}, "input": {}}]},
        }
    ],
    "version is an object": [
        {
            "type": "assistant",
            "version": {"v": 2},
            "message": {"id": "m", "content": [{"type": "text", "text": "answer"}]},
        }
    ],
    "gitBranch is a list": [
        {
            "type": "assistant",
            "gitBranch": ["main"],
            "message": {"id": "m", "content": [{"type": "text", "text": "answer"}]},
        }
    ],
    "sessionId is a number": [
        {"type": "assistant", "sessionId": 7, "message": {"id": "m", "content": [{"type": "text", "text": "answer"}]}}
    ],
    "timestamp is an object": [
        {
            "type": "assistant",
            "timestamp": {"t": 1},
            "message": {"id": "m", "content": [{"type": "text", "text": "answer"}]},
        }
    ],
    "error text is a number": [
        {
            "type": "assistant",
            "message": {
                "id": "m",
                "content": [{"type": "tool_use", "id": "t", "name": "Bash", "input": {"command": "ls"}}],
            },
        },
        {
            "type": "user",
            "message": {
                "content": [
                    {
                        "type": "tool_result",
                        "tool_use_id": ["t"],
                        "is_error": True,
                        "content": [{"type": "text", "text": 5}],
                    }
                ]
            },
        },
    ],
    "subagent fields of the wrong types": [
        {
            "type": "assistant",
            "message": {
                "id": "m",
                "content": [
                    {
                        "type": "tool_use",
                        "id": "task",
                        "name": "Task",
                        "input": {"subagent_type": {"x": 1}, "description": 3, "prompt": _TASK_PROMPT},
                    }
                ],
            },
        },
        # Inline subagent lines (old transcripts) with a list for a uuid.
        {"type": "user", "isSidechain": True, "uuid": ["s1"], "message": {"content": _TASK_PROMPT}},
        {"type": "assistant", "isSidechain": True, "parentUuid": ["s1"], "message": {"id": "s", "content": []}},
        {
            "type": "user",
            "message": {"content": [{"type": "tool_result", "tool_use_id": "task", "content": "done"}]},
            "toolUseResult": {"agentId": ["a"], "status": "completed", "totalTokens": "many", "totalDurationMs": 12},
        },
    ],
}
_ODD_PROMPTS: dict[str, dict] = {
    "prompt promptId is an object": {"promptId": {"id": 1}},
    "prompt uuid is a list": {"uuid": ["p1"]},
    "prompt timestamp is a number": {"timestamp": 1700000000},
    "prompt cwd is a list": {"cwd": ["/tmp"]},
}


def _odd_transcript(path: Path, lines: list[dict], prompt_fields: dict | None = None) -> Path:
    prompt = {
        "type": "user",
        "uuid": "p1",
        "sessionId": "S",
        "cwd": "/tmp",
        "message": {"role": "user", "content": "the real prompt"},
    }
    prompt.update(prompt_fields or {})
    path.write_text("".join(json.dumps(line) + "\n" for line in [prompt, *lines]), encoding="utf-8")
    return path


@pytest.mark.parametrize(
    ("lines", "prompt_fields"),
    [pytest.param(lines, None, id=name) for name, lines in _ODD_LINES.items()]
    + [pytest.param(_ODD_LINES["cwd is a number"], fields, id=name) for name, fields in _ODD_PROMPTS.items()],
)
def test_odd_value_the_turn_is_recorded_without_it(tmp_path, lines, prompt_fields):
    path = _odd_transcript(tmp_path / "t.jsonl", lines, prompt_fields)
    record_stop({"session_id": "s", "transcript_path": str(path), "hook_event_name": "Stop"})
    conn = open_db()
    try:
        rows = [dict(r) for r in conn.execute("SELECT * FROM turns")]
    finally:
        conn.close()
    assert [r["ask"] for r in rows] == ["the real prompt"]
    (row,) = rows
    for column in ("cwd", "git_branch", "claude_version", "started_at", "ended_at", "prompt_id", "summary"):
        assert row[column] is None or isinstance(row[column], str)
    if prompt_fields is None or "cwd" not in prompt_fields:
        assert row["cwd"] == "/tmp"  # the prompt's cwd; the odd one is ignored
    for agent in json.loads(row["subagents"]):
        assert agent == {"status": "completed", "duration_ms": 12}  # the fields of the wrong type are absent


def test_odd_value_write_turn_drops_a_text_column_of_another_type(tmp_path):
    conn = open_db()
    try:
        write_turn(conn, {"turn_key": "k", "session_id": "s", "cwd": 5, "claude_version": {"v": 1}, "ask": "hi"})
        row = dict(conn.execute("SELECT cwd, claude_version, ask FROM turns").fetchone())
    finally:
        conn.close()
    assert row == {"cwd": None, "claude_version": None, "ask": "hi"}


@pytest.mark.slow
def test_odd_value_the_hook_process_records_the_turn(tmp_path):
    lines = [
        line for case in ("cwd is a number", "tool id is a list", "error text is a number") for line in _ODD_LINES[case]
    ]
    path = _odd_transcript(tmp_path / "t.jsonl", lines, {"promptId": {"id": 1}})
    proc = run_hook(json.dumps({"session_id": "s", "transcript_path": str(path)}).encode(), tmp_path)
    assert proc.returncode == 0 and proc.stdout == b"" and proc.stderr == b""
    conn = sqlite3.connect(tmp_path / "brain.db")
    try:
        assert conn.execute("SELECT ask, tools FROM turns").fetchall() == [("the real prompt", '{"Bash": 2}')]
    finally:
        conn.close()
    assert not (tmp_path / "logs" / "hook.log").exists()


def test_dotenv_over_256_kb_is_not_read(tmp_path, monkeypatch):
    from brain import config

    monkeypatch.chdir(tmp_path)
    for name in ("FROM_BIG", "FROM_SMALL"):  # set then unset: both are removed again after the test
        monkeypatch.setenv(name, "")
        monkeypatch.delenv(name)
    big = tmp_path / ".env"
    big.write_text("FROM_BIG=1\n" + "#" * config.MAX_DOTENV_BYTES + "\n")
    home = Path(os.environ["BRAIN_HOME"])
    (home / ".env").write_bytes(b"\xef\xbb\xbfFROM_SMALL='two\r\nlines'\r\n")  # BOM and CRLF, as read_text reads them
    assert config.load_dotenv_files() == [f"{big} is over 256 KB: not read as settings"]
    assert "FROM_BIG" not in os.environ
    assert os.environ["FROM_SMALL"] == "two\nlines"
    result = CliRunner().invoke(cli, ["turns"])
    assert result.exit_code == 0
    assert f"brain: WARNING: {big} is over 256 KB: not read as settings" in result.output


def test_dotenv_that_cannot_be_read_is_said_not_left_to_look_unset(tmp_path, monkeypatch):
    """A .env with one byte that is not UTF-8 (a Latin-1 é in a comment), one that cannot be
    opened, or a symlink to nowhere was skipped in silence: every setting in it at its default."""
    import builtins

    from brain import config

    monkeypatch.chdir(tmp_path)
    home = Path(os.environ["BRAIN_HOME"])
    (tmp_path / ".env").write_bytes(b"BRAIN_PROMPT_K=7\n# caf\xe9\n")
    (home / ".env").symlink_to(home / "nowhere")
    assert config.load_dotenv_files() == [
        f"{tmp_path / '.env'} is not UTF-8 (line 2): not read as settings",
        f"{home / '.env'} is a symlink that leads to no file: not read as settings",
    ]
    assert "BRAIN_PROMPT_K" not in os.environ
    result = CliRunner().invoke(cli, ["turns"])
    assert f"brain: WARNING: {tmp_path / '.env'} is not UTF-8 (line 2): not read as settings" in result.output
    (home / ".env").unlink()
    (home / ".env").mkdir()  # a folder named .env (a virtualenv, often) is no settings file: nothing said
    (tmp_path / ".env").write_text("BRAIN_PROMPT_K=7\n", encoding="utf-8")
    real_open = builtins.open

    def denied(file, *args, **kwargs):  # as a chmod 000 is to a user who is not root
        if str(file) == str(tmp_path / ".env"):
            raise PermissionError(13, "Permission denied", str(file))
        return real_open(file, *args, **kwargs)

    monkeypatch.setattr(builtins, "open", denied)
    assert config.load_dotenv_files() == [
        f"{tmp_path / '.env'} cannot be read (Permission denied): not read as settings"
    ]


def test_read_only_readers_read_while_a_writer_writes(tmp_path, monkeypatch):
    """Readers open the database read-only now (they never change it): while another process
    writes it without pause, each open and read still succeeds and sees whole commits."""
    import sys
    import time

    monkeypatch.setenv("BRAIN_HOME", str(tmp_path))
    open_db().close()  # the writer's first open makes it
    writer = subprocess.Popen(
        [
            sys.executable,
            "-c",
            "import time\nfrom brain.db import open_db\nend = time.time() + 3\nn = 0\n"
            "while time.time() < end:\n"
            "    conn = open_db()\n"
            "    conn.execute('CREATE TABLE IF NOT EXISTS probe (x INTEGER)')\n"
            "    conn.execute('INSERT INTO probe VALUES (?)', (n,))\n"
            "    conn.close()\n"
            "    n += 1\n",
        ],
        env={**os.environ, "BRAIN_HOME": str(tmp_path)},
    )
    try:
        reads = seen = 0
        while writer.poll() is None:
            conn = open_db(read_only=True)
            try:
                tables = {r[0] for r in conn.execute("SELECT name FROM sqlite_master WHERE type = 'table'")}
                if "probe" in tables:
                    count, top = conn.execute("SELECT count(*), coalesce(max(x), -1) FROM probe").fetchone()
                    assert count == top + 1  # every commit whole, none half-seen
                    seen += 1
            finally:
                conn.close()
            reads += 1
            time.sleep(0.001)
    finally:
        writer.wait(30)
    assert writer.returncode == 0 and reads > 50 and seen > 0


def test_dotenv_in_the_working_directory_sets_only_brains_own_variables(tmp_path, monkeypatch):
    """The working directory's .env is the repository's Claude Code runs in: its secrets and its
    PYTHONPATH or LD_PRELOAD must not reach brain's processes (the hooks' catch-up, a detached
    server obey them); brain's own variables there still count. The brain home's file is the
    user's own and may set any."""
    from brain import config

    names = ("PYTHONPATH_FROM_ENV_TEST", "PROJECT_SECRET", "LD_PRELOAD", "HF_HUB_OFFLINE", "BRAIN_VAULT", "FROM_HOME")
    for name in names:  # set then unset: each is put back as it was after the test
        monkeypatch.setenv(name, "")
        monkeypatch.delenv(name)
    work = tmp_path / "project"
    work.mkdir()
    (work / ".env").write_text(
        "PYTHONPATH_FROM_ENV_TEST=./evil\nPROJECT_SECRET=sk-live-0123456789\nLD_PRELOAD=./evil.so\n"
        f"HF_HUB_OFFLINE=1\nBRAIN_VAULT={tmp_path / 'notes'}\n"
    )
    (Path(os.environ["BRAIN_HOME"]) / ".env").write_text("FROM_HOME=yes\n")
    monkeypatch.chdir(work)
    assert config.load_dotenv_files() == []
    assert not {"PYTHONPATH_FROM_ENV_TEST", "PROJECT_SECRET", "LD_PRELOAD"} & set(os.environ)
    assert os.environ["BRAIN_VAULT"] == str(tmp_path / "notes") and os.environ["HF_HUB_OFFLINE"] == "1"
    assert os.environ["FROM_HOME"] == "yes"
