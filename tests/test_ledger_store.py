"""Rows in the turns table: what record_stop writes, upserts, redaction, queries."""

from __future__ import annotations

import json
import sqlite3

import pytest
from ledger_helpers import SESSION, Transcript, fixture, hook_payload, sqlite_steps

from brain.db import open_db
from brain.ledger.hook import git_branch, git_root, record_stop
from brain.ledger.store import recent_turns, turn_stats
from brain.ledger.transcript import MAX_READ

SPOTTER = "spotter_v2.1.38_plan_web_task_bash.jsonl"


def _rows(path=None) -> list[dict]:
    conn = open_db(path)
    try:
        return [dict(r) for r in conn.execute("SELECT * FROM turns ORDER BY id")]
    finally:
        conn.close()


def test_real_transcript_row(tmp_path):
    record_stop(hook_payload(fixture(SPOTTER), cwd=str(tmp_path)))
    (row,) = _rows()
    assert row["session_id"] == SESSION
    assert row["ask"] == "create the beads"
    assert json.loads(row["tools"]) == {"Bash": 4}
    assert json.loads(row["commands"])[-1] == "bd dep add spotter-0p7.2 spotter-0p7.1"
    assert row["git_branch"] == "master"  # from the transcript, no git needed
    assert row["project"] == tmp_path.name  # no git root above: the cwd's name
    assert row["turn_key"] == f"{SESSION}:091e0ff4-fd44-4213-968d-b1fe201aae6f"
    assert row["started_at"] == "2026-02-10T22:01:14.815Z"
    assert row["claude_version"] == "2.1.38"
    assert row["transcript_path"].endswith(SPOTTER)
    assert 0 < row["byte_start"] < row["byte_end"]
    assert row["stops"] == 1 and row["created_at"] == row["updated_at"]


def test_repeated_stop_updates_the_same_row(tmp_path):
    t = Transcript(tmp_path / "t.jsonl")
    t.prompt("write the docs")
    t.tool("Write", file_path="/p/README.md")
    t.text("Done.")
    record_stop(hook_payload(t.write()))
    # The Stop hook blocked; Claude went on; Stop fires again with stop_hook_active.
    t.prompt("Stop hook feedback:\n- [lint]: typo", isMeta=True)
    t.tool("Edit", file_path="/p/README.md")
    t.text("Fixed the typo.")
    record_stop(hook_payload(t.write(), stop_hook_active=True))
    record_stop(hook_payload(t.write(), stop_hook_active=True))  # a hook that fires twice
    (row,) = _rows()
    assert row["stops"] == 3
    assert json.loads(row["tools"]) == {"Write": 1, "Edit": 1}
    assert row["summary"].endswith("Fixed the typo.")
    assert row["updated_at"] >= row["created_at"]
    # A new prompt is a new row.
    t.prompt("now the changelog")
    t.text("Added.")
    record_stop(hook_payload(t.write()))
    assert [r["ask"] for r in _rows()] == ["write the docs", "now the changelog"]


def test_a_later_stop_that_no_longer_reaches_the_prompt_keeps_what_the_first_recorded(tmp_path, monkeypatch):
    """The Stop hook blocked, Claude went on, and the turn grew past the bytes the reader goes
    back: the repeated Stop reads the turn's end alone (no prompt: a cut row, flagged partial).
    It updates the row of the same turn, and what the first Stop read (the ask, the branch) stays:
    written over with nothing, the turn's ask was lost."""
    from functools import partial

    import brain.ledger.hook as hook_module
    from brain.ledger.transcript import read_last_turn

    t = Transcript(tmp_path / "t.jsonl")
    t.prompt("write the docs")
    t.tool("Write", file_path="/p/README.md")
    t.text("Done.")
    record_stop(hook_payload(t.write(), prompt_id="p-1"))
    (first,) = _rows()
    assert first["ask"] == "write the docs" and first["git_branch"] == "feature/x" and first["partial"] == 0
    t.prompt("Stop hook feedback:\n- [lint]: typo", isMeta=True)
    t.tool("Bash", result="x" * 20_000, command="make lint")
    t.text("Fixed the typo.")
    monkeypatch.setattr(hook_module, "read_last_turn", partial(read_last_turn, max_read=8_192))
    record_stop(hook_payload(t.write(), prompt_id="p-1", stop_hook_active=True))
    (row,) = _rows()
    assert row["partial"] == 1 and row["stops"] == 2 and row["summary"].endswith("Fixed the typo."), row  # cut
    assert (
        row["ask"] == "write the docs" and row["git_branch"] == "feature/x" and row["started_at"] == first["started_at"]
    )


def test_prompt_id_is_the_identity_when_given(tmp_path):
    t = Transcript(tmp_path / "t.jsonl")
    t.prompt("hello")
    t.text("hi")
    record_stop(hook_payload(t.write(), prompt_id="p-1"))
    record_stop(hook_payload(t.write(), prompt_id="p-1"))
    (row,) = _rows()
    assert row["turn_key"] == f"{SESSION}:p-1" and row["prompt_id"] == "p-1"
    assert row["stops"] == 2


def test_a_later_stop_that_sees_less_does_not_blank_what_was_known(tmp_path):
    t = Transcript(tmp_path / "t.jsonl")
    t.prompt("hello")
    t.text("hi there")
    path = t.write()
    record_stop(hook_payload(path, prompt_id="p-1"))
    path.write_text("")  # e.g. the file was rotated away before the second Stop
    record_stop(hook_payload(path, prompt_id="p-1"))
    (row,) = _rows()
    assert row["ask"] == "hello" and row["summary"] == "hi there"
    assert row["stops"] == 2


def test_missing_transcript_still_records_the_turn(tmp_path):
    record_stop(hook_payload(tmp_path / "gone.jsonl", last_assistant_message="All set.", prompt_id="p-9"))
    (row,) = _rows()
    assert row["ask"] is None and row["summary"] == "All set."
    assert row["byte_start"] is None and row["ended_at"] is not None


def test_secrets_never_reach_the_database(tmp_path, closing):
    t = Transcript(tmp_path / "t.jsonl")
    t.prompt("use my key sk-ant-api03-SECRETSECRETSECRET1234 to call the API")
    t.tool("Bash", command="curl -H 'Authorization: Bearer tok_ABCDEF123456789' https://x")
    t.tool("Bash", command="mysql --password=hunter2 -e 'select 1'")
    t.tool(
        "Bash",
        "fatal: ghp_ABCDEFGHIJKLMNOPQRSTUVWXYZ0123456789 rejected",
        error=True,
        command="git push",
    )
    t.text("Called it with AKIAIOSFODNN7EXAMPLE.\n-----BEGIN PRIVATE KEY-----\nMIIEvQIBADAN\n-----END PRIVATE KEY-----")
    record_stop(hook_payload(t.write()))
    raw = closing(sqlite3.connect(closing(open_db()).execute("PRAGMA database_list").fetchone()[2]))
    dump = "\n".join(raw.iterdump())
    for secret in (
        "SECRETSECRETSECRET",
        "tok_ABCDEF123456789",
        "hunter2",
        "ABCDEFGHIJKLMNOPQRSTUVWXYZ0123456789",
        "IOSFODNN7EXAMPLE",
        "MIIEvQIBADAN",
    ):
        assert secret not in dump
    (row,) = _rows()
    assert row["ask"] == "use my key sk-ant-*** to call the API"
    assert json.loads(row["commands"])[1] == "mysql --password=*** -e 'select 1'"


def test_yaml_secrets_held_as_json_text_never_reach_the_database(tmp_path):
    """A file sent or returned as a JSON string ("\\n" escapes): the value on the line below its
    key and a block scalar's lines were stored as written."""
    config = {"content": "db:\n  password:\n    Mn4bV6cX8zL\n  port: 5432\ncert_password: |\n  Pl9oK8iJ7uH\n"}
    t = Transcript(tmp_path / "t.jsonl")
    t.prompt("push the config")
    t.tool("Bash", command=f"curl -X PUT https://cfg.local/app -d '{json.dumps(config)}'")
    t.tool("mcp__cfg__get", json.dumps({"error": "invalid", **config}), error=True, app="shop")
    t.text("Pushed.")
    record_stop(hook_payload(t.write()))
    (row,) = _rows()
    stored = row["commands"] + row["tool_errors"]
    assert "Mn4bV6cX8zL" not in stored and "Pl9oK8iJ7uH" not in stored
    assert json.loads(json.loads(row["commands"])[0].split("-d '")[1][:-1]) == {
        "content": "db:\n  password:\n    ***\n  port: 5432\ncert_password: |\n  ***\n"
    }


def test_git_root_and_branch_without_git(tmp_path):
    repo = tmp_path / "myproj"
    (repo / ".git").mkdir(parents=True)
    (repo / ".git" / "HEAD").write_text("ref: refs/heads/feature/ledger\n")
    sub = repo / "src" / "pkg"
    sub.mkdir(parents=True)
    assert git_root(str(sub)) == repo
    assert git_branch(repo) == "feature/ledger"
    (repo / ".git" / "HEAD").write_text("0123456789abcdef0123456789abcdef01234567\n")
    assert git_branch(repo) == "0123456789ab"
    worktree = tmp_path / "wt"
    worktree.mkdir()
    (tmp_path / "gitdir").mkdir()
    (tmp_path / "gitdir" / "HEAD").write_text("ref: refs/heads/wt-branch\n")
    (worktree / ".git").write_text(f"gitdir: {tmp_path / 'gitdir'}\n")
    assert git_branch(worktree) == "wt-branch"


def test_a_head_git_never_writes_is_no_branch(tmp_path):
    """.git/HEAD was read whole by every Stop hook, and its text was the row's branch: one of
    GBs (a hostile checkout) filled the hook's memory and a row larger than any the catch-up
    reads (``deferred.MAX_ROW_BYTES``); one not UTF-8 failed the hook, the turn lost."""
    from brain.ledger.hook import MAX_FIELD_CHARS, record_stop

    repo = tmp_path / "myproj"
    (repo / ".git").mkdir(parents=True)
    head = repo / ".git" / "HEAD"
    head.write_text("ref: refs/heads/" + "b" * MAX_FIELD_CHARS + "\n")
    assert git_branch(repo) is None
    with open(head, "wb") as handle:  # sparse: nothing of it is read
        handle.truncate(4 << 30)
    assert git_branch(repo) is None
    head.write_bytes(b"ref: refs/heads/caf\xe9\n")
    assert git_branch(repo) is None
    db = tmp_path / "brain.db"
    row = record_stop(
        {"session_id": "s1", "prompt_id": "p1", "cwd": str(repo), "last_assistant_message": "hi"}, db_path=db
    )
    assert row["git_branch"] is None and row["project"] == "myproj"


def test_project_and_branch_from_the_git_root(tmp_path):
    repo = tmp_path / "shop"
    (repo / ".git").mkdir(parents=True)
    (repo / ".git" / "HEAD").write_text("ref: refs/heads/main\n")
    (repo / "web").mkdir()
    t = Transcript(tmp_path / "t.jsonl")
    t.prompt("hi")
    t.text("hello")
    for line in range(len(t.lines)):  # a transcript without gitBranch
        t.lines[line] = t.lines[line].replace('"gitBranch": "feature/x"', '"gitBranch": ""')
    record_stop(hook_payload(t.write(), cwd=str(repo / "web")))
    (row,) = _rows()
    assert row["project"] == "shop" and row["git_branch"] == "main"
    assert row["cwd"] == str(repo / "web")


def _turn(tmp_path, name, session, ask, tools, project_cwd):
    t = Transcript(tmp_path / f"{name}.jsonl", session=session)
    t.prompt(ask)
    for tool, path in tools:
        t.tool(tool, file_path=path, command="make")
    t.text("ok")
    record_stop(hook_payload(t.write(), session_id=session, cwd=project_cwd))


def test_recent_turns_and_stats(tmp_path):
    alpha, beta = tmp_path / "alpha", tmp_path / "beta"
    alpha.mkdir()
    beta.mkdir()
    _turn(tmp_path, "a", "aaaa-1", "first", [("Write", "/a/x.py"), ("Bash", "")], str(alpha))
    _turn(tmp_path, "b", "aaaa-2", "second", [("Edit", "/a/x.py"), ("Read", "/a/y.py")], str(alpha))
    _turn(tmp_path, "c", "bbbb-1", "third", [("Bash", ""), ("Bash", "")], str(beta))
    conn = open_db()
    try:
        assert [r["ask"] for r in recent_turns(conn, limit=2)] == ["third", "second"]
        assert {r["ask"] for r in recent_turns(conn, session="aaaa")} == {"first", "second"}
        assert [r["ask"] for r in recent_turns(conn, project="beta")] == ["third"]
        assert recent_turns(conn, session="aaaa%") == []  # LIKE wildcards are literal
        row = recent_turns(conn, session="bbbb-1")[0]
        assert row["tools"] == {"Bash": 2} and row["commands"] == ["make", "make"]
        stats = turn_stats(conn)
    finally:
        conn.close()
    assert stats["turns"] == 3
    assert {(d["project"], d["turns"]) for d in stats["per_day"]} == {("alpha", 2), ("beta", 1)}
    assert stats["top_tools"][0] == {"tool": "Bash", "uses": 3, "turns": 2}
    assert stats["top_files"][0] == {"file": "/a/x.py", "turns": 2}


# ----- a Stop out of time: a partial row, which the full row of its turn replaces ------------

PAST = 0.0  # a deadline long gone: the reader is out of time at its first line


def _refactor_turn(tmp_path) -> Transcript:
    t = Transcript(tmp_path / "t.jsonl")
    t.prompt("refactor the parser")
    t.tool("Bash", command="pytest -k parser")
    t.text("Refactored.")
    t.write()
    return t


def test_a_stop_out_of_time_records_a_partial_row(tmp_path):
    path = _refactor_turn(tmp_path).path
    record_stop(hook_payload(path, last_assistant_message="Refactored."), deadline=PAST)
    (row,) = _rows()
    assert row["partial"] == 1 and row["stops"] == 1
    assert (row["session_id"], row["cwd"], row["project"]) == (SESSION, "/home/dev/proj", "proj")
    assert row["summary"] == "Refactored." and row["ask"] is None  # what the hook input said
    assert row["transcript_path"] == str(path) and row["byte_end"] == path.stat().st_size
    assert json.loads(row["tools"]) == {} and json.loads(row["commands"]) == []


def test_a_partial_row_keeps_the_prompt_when_the_reader_had_found_it(tmp_path, monkeypatch):
    from brain.ledger import transcript

    path = _refactor_turn(tmp_path).path

    def out_of_time(*args, **kwargs):
        raise transcript.OutOfTime

    monkeypatch.setattr(transcript, "_fill", out_of_time)  # time runs out after the prompt is found
    record_stop(hook_payload(path), deadline=PAST + 1e12)
    (row,) = _rows()
    assert row["partial"] == 1 and row["ask"] == "refactor the parser"
    assert row["turn_key"] == f"{SESSION}:uuid-1"  # the full row's key
    assert row["started_at"] == "2026-03-01T10:00:01.000Z"


@pytest.mark.parametrize("prompt_id", [None, "p-1"])
def test_the_full_row_of_a_turn_replaces_its_partial_row(tmp_path, prompt_id):
    path = _refactor_turn(tmp_path).path
    payload = hook_payload(path, **({"prompt_id": prompt_id} if prompt_id else {}))
    record_stop(payload, deadline=PAST)
    record_stop(payload, deadline=PAST)  # two Stops out of time: still one row
    record_stop(payload)
    (row,) = _rows()
    assert row["partial"] == 0 and row["stops"] == 3
    assert row["ask"] == "refactor the parser" and json.loads(row["tools"]) == {"Bash": 1}
    assert row["turn_key"] == f"{SESSION}:{prompt_id or 'uuid-1'}"


@pytest.mark.parametrize("prompt_id", [None, "p-1"])
def test_a_partial_row_after_the_full_one_only_counts_its_stop(tmp_path, prompt_id):
    path = _refactor_turn(tmp_path).path
    payload = hook_payload(
        path, last_assistant_message="Refactored.", **({"prompt_id": prompt_id} if prompt_id else {})
    )
    for i in range(10):  # ten identical Stops at once, every other one out of time, in any order
        record_stop(payload, deadline=PAST if i % 2 == 0 else None)
    (row,) = _rows()
    assert row["partial"] == 0 and row["stops"] == 10
    assert row["ask"] == "refactor the parser" and json.loads(row["commands"]) == ["pytest -k parser"]


def test_a_partial_row_of_the_next_turn_stays_its_own(tmp_path):
    t = _refactor_turn(tmp_path)
    record_stop(hook_payload(t.path))
    t.prompt("now the docs")
    t.text("Documented.")
    t.write()
    record_stop(hook_payload(t.path, last_assistant_message="Documented."), deadline=PAST)
    assert [(r["ask"], r["summary"], r["partial"]) for r in _rows()] == [
        ("refactor the parser", "Refactored.", 0),
        (None, "Documented.", 1),
    ]
    record_stop(hook_payload(t.path))  # the next Stop of that turn has the time to read it
    assert [(r["ask"], r["partial"], r["stops"]) for r in _rows()] == [
        ("refactor the parser", 0, 1),
        ("now the docs", 0, 2),
    ]


def test_a_key_in_a_tool_name_never_reaches_the_database(tmp_path, closing):
    key = "sk-ant-api03-Zq8Lm2Np4Rt6Vx0Bc3Df5Gh7Jk9"
    t = Transcript(tmp_path / "t.jsonl")
    t.prompt("look it up")
    t.tool(f"mcp__x__{key}", "Error: denied", error=True, query="a")
    t.text("Done.")
    record_stop(hook_payload(t.write()))
    raw = closing(sqlite3.connect(closing(open_db()).execute("PRAGMA database_list").fetchone()[2]))
    assert "Zq8Lm2Np4Rt6" not in "\n".join(raw.iterdump())
    (row,) = _rows()
    assert json.loads(row["tools"]) == {"mcp__x__sk-ant-***": 1}


@pytest.mark.parametrize("prompt_id", [None, "p-2"])
def test_a_partial_row_takes_the_prompt_the_prompt_hook_recorded(tmp_path, prompt_id):
    """The reader found nothing in time; the prompt hook had recorded the turn's prompt."""
    from brain.autorecall.store import write_recall
    from brain.db import connection

    path = _refactor_turn(tmp_path).path
    with connection() as conn:
        for pid, prompt in (("p-1", "an earlier prompt"), ("p-2", "refactor the parser")):
            write_recall(
                conn, {"session_id": SESSION, "prompt_id": pid, "prompt": prompt, "prompt_chars": 20, "latency_ms": 5}
            )
        write_recall(
            conn,
            {
                "session_id": "another",
                "prompt_id": "p-9",
                "prompt": "not this one",
                "prompt_chars": 12,
                "latency_ms": 5,
            },
        )
    record_stop(hook_payload(path, prompt_id=prompt_id), deadline=PAST)
    (row,) = _rows()
    assert row["partial"] == 1 and row["ask"] == "refactor the parser"


# ----- reading a long ledger --------------------------------------------------------------------


def _many_turns(conn: sqlite3.Connection, n: int, *, unstarted: int = 10) -> None:
    """``n`` turns, one a minute, one in ``unstarted`` without a start (its prompt was never found)."""
    conn.executemany(
        "INSERT INTO turns (turn_key, session_id, created_at, updated_at, started_at, ask) VALUES (?, ?, ?, ?, ?, ?)",
        [
            (
                f"s{i % 7}:{i}",
                f"s{i % 7}",
                _minute(i),
                _minute(i),
                None if i % unstarted == 3 else _minute(i),
                f"ask {i}",
            )
            for i in range(n)
        ],
    )


def _minute(i: int) -> str:
    return f"2026-{1 + i // 40000:02d}-{1 + i // 1440 % 28:02d}T{i // 60 % 24:02d}:{i % 60:02d}:00.000Z"


def _steps(conn, work) -> int:
    """SQLite's steps (in hundreds) that ``work`` costs."""
    return sqlite_steps(conn, work, 100)


def test_the_last_turns_of_a_long_ledger_are_read_without_sorting_it_all():
    # `brain turns` and the MCP tool ask for the newest few: sorting the whole ledger by
    # COALESCE(started_at, created_at) cost 1.0 s at 300,000 turns for the last ten.
    conn = open_db()
    try:
        _many_turns(conn, 500, unstarted=1000)
        small = _steps(conn, lambda: recent_turns(conn, limit=5))
        conn.execute("DELETE FROM turns")
        _many_turns(conn, 20_000, unstarted=1000)
        large = _steps(conn, lambda: recent_turns(conn, limit=5))
        since = _steps(conn, lambda: recent_turns(conn, limit=5, since=_minute(19_990)))
    finally:
        conn.close()
    assert large < 3 * small + 50, (small, large)
    assert since < 3 * small + 50, (small, since)


def test_turns_without_a_start_are_ordered_among_the_others_by_when_they_were_written():
    conn = open_db()
    try:
        _many_turns(conn, 40)
        newest = recent_turns(conn, limit=12)
        everything = recent_turns(conn, limit=1000)
        since = recent_turns(conn, since=_minute(30), limit=100)
    finally:
        conn.close()
    assert [r["ask"] for r in newest] == [f"ask {i}" for i in range(39, 27, -1)]
    assert [r["ask"] for r in everything] == [f"ask {i}" for i in range(39, -1, -1)]
    assert [r["ask"] for r in since] == [f"ask {i}" for i in range(39, 29, -1)]


def _hourly_turns(conn: sqlite3.Connection, hours: int, *, start: str = "2026-01-01T00:30:00", tag: str = "") -> None:
    """A turn every hour for ``hours`` hours from ``start``, in two projects and sessions of 50
    turns (``<tag>sess<n>``); every 97th never started (its prompt was never found)."""
    conn.executemany(
        "INSERT INTO turns (turn_key, session_id, created_at, updated_at, started_at, project, tools, files_written)"
        " VALUES (?, ?, ?, ?, ?, ?, ?, ?)",
        [
            (
                f"{tag}k{i}",
                f"{tag}sess{i // 50:05d}",
                at,
                at,
                None if i % 97 == 4 else at,
                f"p{i % 2}",
                json.dumps({"Bash": i % 3, "Edit": 1, f"T{i % 5}": 2}),
                json.dumps([f"/src/f{i % 7}.py"] * (i % 2 + 1)),
            )
            for i in range(hours)
            for at in [
                conn.execute("SELECT strftime('%Y-%m-%dT%H:%M:%S.000Z', ?, ?)", (start, f"+{i} hours")).fetchone()[0]
            ]
        ],
    )


def test_stats_read_the_last_days_not_the_whole_ledger():
    # `brain turns --stats` read every turn's JSON (1,000,000 turns: seconds): a year more of
    # turns before the days it shows must not cost more.
    conn = open_db()
    try:
        _hourly_turns(conn, 24 * 10, start="2026-06-01T00:30:00", tag="a")
        small = [
            _steps(conn, lambda: turn_stats(conn, days=3)),
            _steps(conn, lambda: turn_stats(conn, days=3, project="p1")),
            _steps(conn, lambda: turn_stats(conn, days=3, session="ASESS0000")),
        ]
        _hourly_turns(conn, 24 * 150, start="2026-01-01T00:30:00", tag="b")
        large = [
            _steps(conn, lambda: turn_stats(conn, days=3)),
            _steps(conn, lambda: turn_stats(conn, days=3, project="p1")),
            _steps(conn, lambda: turn_stats(conn, days=3, session="ASESS0000")),
        ]
    finally:
        conn.close()
    # The count of the turns recorded is one pass over an index: a step or two a turn.
    assert all(big < 2 * few + 2 * 24 * 150 / 100 for few, big in zip(small, large)), (small, large)


def test_stats_over_the_last_days_are_those_of_a_plain_reading(tmp_path):
    conn = open_db(tmp_path / "brain.db")
    try:
        _hourly_turns(conn, 24 * 40)
        conn.execute("UPDATE turns SET started_at = 'not a time' WHERE turn_key = 'k100'")
        rows = [dict(r) for r in conn.execute("SELECT * FROM turns")]
        days = {
            r["turn_key"]: conn.execute(
                "SELECT date(COALESCE(?, ?), 'localtime')", (r["started_at"], r["created_at"])
            ).fetchone()[0]
            for r in rows
        }
        for project, session, n in ((None, None, 14), ("p0", None, 5), (None, "sess0001", 3), (None, None, 1000)):
            stats = turn_stats(conn, project=project, session=session, days=n)
            mine = [
                r
                for r in rows
                if (project is None or r["project"] == project)
                and (session is None or r["session_id"].startswith(session))
            ]
            last = sorted({days[r["turn_key"]] for r in mine if days[r["turn_key"]]}, reverse=True)[:n]
            window = [r for r in mine if days[r["turn_key"]] in last]
            assert stats["turns"] == len(mine)
            per_day: dict[tuple[str, str], int] = {}
            for r in window:
                per_day[days[r["turn_key"]], r["project"]] = per_day.get((days[r["turn_key"]], r["project"]), 0) + 1
            assert {(d["day"], d["project"]): d["turns"] for d in stats["per_day"]} == per_day
            uses: dict[str, list[int]] = {}
            for r in window:
                for tool, count in json.loads(r["tools"]).items():
                    uses.setdefault(tool, [0, 0])
                    uses[tool][0] += count
                    uses[tool][1] += 1
            assert {t["tool"]: [t["uses"], t["turns"]] for t in stats["top_tools"]} == uses
            written: dict[str, int] = {}
            for r in window:
                for file in json.loads(r["files_written"]):
                    written[file] = written.get(file, 0) + 1
            assert {f["file"]: f["turns"] for f in stats["top_files"]} == written
    finally:
        conn.close()


def test_a_session_prefix_reads_those_sessions_not_the_ledger():
    # LIKE folds case, so no index answered it: `brain turns --session 491e` read every turn.
    conn = open_db()
    try:
        _hourly_turns(conn, 200, tag="a")
        small = _steps(conn, lambda: recent_turns(conn, session="ASESS00001", limit=5))
        _hourly_turns(conn, 5000, tag="b")
        large = _steps(conn, lambda: recent_turns(conn, session="ASESS00001", limit=5))
        assert [r["turn_key"] for r in recent_turns(conn, session="asess00001", limit=2)] == ["ak99", "ak98"]
    finally:
        conn.close()
    assert large <= small + 10, (small, large)


# ----- a Stop that could not read its turn: a partial row, never merged with another turn ------


def _hook_log() -> str:
    from brain import config

    log = config.log_dir() / "hook.log"
    return log.read_text() if log.exists() else ""


@pytest.mark.parametrize("state", ["missing", "folder", "empty"])
def test_a_turn_whose_transcript_gave_nothing_is_partial_and_its_own_row(tmp_path, state):
    """Two turns of one session whose transcript could not be read became one row (`stops` = 2,
    both keyed by the text of no final message), flagged whole, with nothing in hook.log."""
    path = tmp_path / "t.jsonl"
    if state == "folder":
        path.mkdir()
    elif state == "empty":
        path.write_text("")
    record_stop(hook_payload(path))
    record_stop(hook_payload(path))
    rows = _rows()
    assert [(r["partial"], r["stops"]) for r in rows] == [(1, 1), (1, 1)]
    assert rows[0]["turn_key"] != rows[1]["turn_key"]
    assert _hook_log().count("cannot read the transcript") == 2


def test_a_repeated_stop_of_an_unread_turn_still_counts_on_its_row(tmp_path):
    """What the text key is for: the same turn's Stops (its final text, or its prompt id) are one row."""
    path = tmp_path / "gone.jsonl"
    record_stop(hook_payload(path, last_assistant_message="All set."))
    record_stop(hook_payload(path, last_assistant_message="All set."))
    record_stop(hook_payload(path, prompt_id="p-3"))
    record_stop(hook_payload(path, prompt_id="p-3"))
    assert [(r["summary"], r["partial"], r["stops"]) for r in _rows()] == [("All set.", 1, 2), (None, 1, 2)]


def test_an_unread_stop_after_the_full_row_keeps_what_was_read(tmp_path):
    """It counts its Stop on the row of its turn and blanks nothing: tools were overwritten with {}."""
    path = _refactor_turn(tmp_path).path
    record_stop(hook_payload(path, prompt_id="p-1"))
    path.write_text("")
    record_stop(hook_payload(path, prompt_id="p-1"))
    (row,) = _rows()
    assert (row["partial"], row["stops"], row["ask"]) == (0, 2, "refactor the parser")
    assert json.loads(row["tools"]) == {"Bash": 1}


def test_a_turn_whose_prompt_is_past_the_read_cap_is_partial(tmp_path):
    """Its row had no ask and read as whole; the next turn, read whole, is not flagged."""
    t = Transcript(tmp_path / "t.jsonl")
    t.prompt("a question long ago")
    pad = "q" * 8192
    t.lines += [json.dumps({"type": "progress", "n": i, "pad": pad}) for i in range(MAX_READ // 8192 + 1)]
    t.tool("Bash", command="make")
    t.text("finally done")
    record_stop(hook_payload(t.write()))
    record_stop(hook_payload(t.path))  # the hook fired twice: one row still
    t.prompt("and now?")
    t.text("now done")
    record_stop(hook_payload(t.write()))
    assert [(r["ask"], r["partial"], r["stops"], json.loads(r["tools"])) for r in _rows()] == [
        (None, 1, 2, {"Bash": 1}),
        ("and now?", 0, 1, {}),
    ]
    assert "no prompt in the last" in _hook_log()


def test_two_turns_past_the_read_cap_that_end_alike_stay_two_rows(tmp_path):
    """Keyed by their final text alone, two turns of a session whose prompts lay past the read cap
    and that both ended "Done." were one row (all six Stops); each turn's repeated Stops still are one."""
    t = Transcript(tmp_path / "t.jsonl")
    pad = "q" * 8192
    for ask in ("build it", "build it again"):
        t.prompt(ask)
        t.lines += [json.dumps({"type": "progress", "n": i, "pad": pad}) for i in range(MAX_READ // 8192 + 1)]
        t.tool("Bash", command="make")
        if ask == "build it":  # the file lags: the final text is only in the hook input
            record_stop(hook_payload(t.write(), last_assistant_message="Done."))
        t.text("Done.")
        record_stop(hook_payload(t.write()))
        record_stop(hook_payload(t.path))  # the hook fired twice
    # The Stop hook blocked the second turn; Claude went on, and ended alike again.
    t.prompt("Stop hook feedback:\n- [lint]: 1 warning", isMeta=True)
    t.text("Done.")
    record_stop(hook_payload(t.write(), stop_hook_active=True))
    rows = _rows()
    assert [(r["summary"], r["partial"], r["stops"]) for r in rows] == [("Done.", 1, 3), ("Done.\n\nDone.", 1, 3)]
    assert rows[0]["turn_key"] == f"{SESSION}:after:uuid-3"  # the line of the Bash call's result


def test_turns_with_no_prompt_and_no_line_ids_are_told_apart_by_position(tmp_path):
    """A transcript with no prompt line at all and no uuids: a turn is keyed by where its last user
    line starts in the file, the same for each Stop of it, another for the next turn. A turn that
    ended with no text had a key of its own at each Stop: one turn, two rows."""
    t = Transcript(tmp_path / "t.jsonl")
    for final in ("", "Done."):
        t.tool("Bash", command="make")
        if final:
            t.text(final)
        t.lines = [json.dumps({k: v for k, v in json.loads(line).items() if k != "uuid"}) for line in t.lines]
        record_stop(hook_payload(t.write()))
        record_stop(hook_payload(t.path))  # the hook fired twice
    rows = _rows()
    assert [(r["ask"], r["summary"], r["stops"]) for r in rows] == [(None, None, 2), (None, "Done.", 2)]
    text = t.path.read_text()
    assert rows[1]["turn_key"] == f"{SESSION}:after:@{text.index(text.splitlines()[3])}"  # 2nd result
