"""The transcript reader: real Claude Code transcripts, then the awkward cases made by hand.

Expected values were read off the fixture files by hand (see ../shared/fixtures/
claude-code/README.md for what each one exercises).
"""

from __future__ import annotations

import json
import os
from pathlib import Path

import pytest
from ledger_helpers import Transcript, fixture, truncated_copy

from brain.ledger import transcript as transcript_module
from brain.ledger.transcript import decisions, prompt_text, read_last_turn

CCVIEWER = "ccviewer_v1.0.98_orchestrator_inline_sidechains.jsonl"
SPOTTER = "spotter_v2.1.38_plan_web_task_bash.jsonl"
SUBAGENT = "spotter_v2.1.39_subagent_agent-a2898e3.jsonl"
CRUD = "agentlogs_v2.0.14_crud_write_read_edit_bash.jsonl"
COMPACT = "agentlogs_v2.0.13_clear_compact.jsonl"


# ----- real transcripts -------------------------------------------------------------


def test_ccviewer_last_turn_is_one_write():
    path = fixture(CCVIEWER)
    turn = read_last_turn(path)
    assert turn.ask == "Thanks! Please update CLAUDE.md for current changes"
    assert turn.tools == {"Write": 1}
    assert turn.files_written == ["/path/to/Demo/CLAUDE.md"]
    assert turn.files_read == [] and turn.commands == [] and turn.subagents == []
    assert turn.summary.endswith("development commands, and architecture details.")
    assert turn.session_id == "fe5e1c67-53e7-4862-81ae-d0e013e3270b"
    assert turn.cwd == "/path/to/Demo" and turn.git_branch is None
    assert turn.claude_version == "1.0.98"
    assert turn.started_at == "2025-09-03T01:01:44.806Z"
    assert turn.byte_end == path.stat().st_size
    assert 0 < turn.byte_start < turn.byte_end


def test_ccviewer_slash_command_turn_credits_inline_sidechains_to_their_tasks(tmp_path):
    # Lines 0-432: the /orchestrator turn, five Task subagents inlined as sidechains.
    path = truncated_copy(fixture(CCVIEWER), 433, tmp_path / "t.jsonl")
    turn = read_last_turn(path)
    assert turn.ask == "/orchestrator create TODO app by Next.js"
    assert turn.tools == {"Glob": 2, "TodoWrite": 3, "Task": 5}
    assert turn.cwd == "/path/to/Demo/todo-app"  # as on the main thread's last line (432)
    assert [a["description"] for a in turn.subagents] == [
        "Setup Next.js project",
        "Create data models",
        "Build TODO components",
        "Implement state management",
        "Create main page integration",
    ]
    # Each subagent's inlined tool calls add up to the count Claude Code reported for it.
    for agent in turn.subagents:
        assert sum(agent["tools"].values()) == agent["tool_uses"]
    assert [a["tool_uses"] for a in turn.subagents] == [33, 39, 8, 24, 52]
    components = turn.subagents[2]
    assert components["tools"] == {"Bash": 3, "Write": 5}
    assert "/path/to/Demo/components/TodoItem.tsx" in components["files_written"]
    assert turn.files_written == []  # the main thread itself wrote nothing
    assert turn.byte_start == 128  # right after the leading `summary` line


def test_spotter_last_turn_is_four_bash_calls():
    turn = read_last_turn(fixture(SPOTTER))
    assert turn.ask == "create the beads"
    assert turn.tools == {"Bash": 4}
    assert len(turn.commands) == 4
    assert turn.commands[0].startswith('bd create --title="Setup Code Quality Tools')
    assert turn.commands[3] == "bd dep add spotter-0p7.2 spotter-0p7.1"
    assert turn.summary.startswith("## Beads Created")
    assert turn.git_branch == "master" and turn.claude_version == "2.1.38"
    assert turn.started_at == "2026-02-10T22:01:14.815Z"
    assert turn.ended_at == "2026-02-10T22:03:51.679Z"


def test_spotter_turn_before_the_interrupt(tmp_path):
    # Lines 0-69: the plan turn, then "[Request interrupted by user]" and a snapshot.
    path = truncated_copy(fixture(SPOTTER), 70, tmp_path / "t.jsonl")
    turn = read_last_turn(path)
    assert turn.ask == (
        "/handgemacht:create-beads websearch to learn how to fastest setup credo, dialyzer, "
        "mix_audit (basically all supported by "
        "https://github.com/bradleygolden/claude-marketplace-elixir)\n\n"
        "Maybe there are igniter scripts?"
    )
    assert turn.tools == {
        "WebFetch": 1,
        "WebSearch": 5,
        "Glob": 1,
        "Read": 1,
        "AskUserQuestion": 1,
        "Task": 1,
        "Write": 1,
        "ExitPlanMode": 1,
    }
    assert turn.files_read == ["/home/marco/projects/spotter/mix.exs"]
    assert turn.files_written == ["/home/marco/projects/spotter/plan.md"]
    assert turn.subagents == [
        {
            "type": "Plan",
            "description": "Draft beads for linting setup",
            "agent_id": "afb92ff",
            "status": "completed",
            "tool_uses": 9,
            "duration_ms": 38799,
            "tokens": 33894,
        }
    ]
    # Split format: the first message's blocks are on separate lines sharing one id.
    assert turn.summary.startswith("I'll research the setup options and then draft beads for you.")


def test_subagent_transcript_reads_as_its_own_turn():
    turn = read_last_turn(fixture(SUBAGENT))
    assert turn.ask.startswith("Very thorough exploration. I need to understand:")
    assert turn.tools == {"Read": 16, "Glob": 10, "Grep": 2, "Bash": 5}
    assert len(turn.tool_errors) == 8
    assert turn.tool_errors[0] == {"tool": "Read", "error": "File does not exist."}
    assert turn.tool_errors[1]["error"] == "Sibling tool call errored"
    assert turn.files_read[0].endswith("lib/spotter_web/live/session_live.ex")
    assert turn.git_branch == "spotter-dov"


def test_crud_turn():
    turn = read_last_turn(fixture(CRUD))
    joke = "/Users/philipp/dev/vibeinsights/fixtures/claudecode/JOKE.md"
    assert turn.ask.startswith("create a file `JOKE.md` with a ranom joke")
    assert turn.tools == {"TodoWrite": 5, "Write": 1, "Read": 1, "Edit": 1, "Bash": 1}
    assert turn.files_written == [joke]
    assert turn.files_read == [joke]
    assert turn.commands == [f"rm {joke}"]
    assert "All done!" in turn.summary
    assert turn.tool_errors == []


def test_compact_transcript_never_takes_the_summary_as_the_ask(tmp_path):
    path = fixture(COMPACT)
    turn = read_last_turn(path)
    assert turn.ask == "/compact"
    assert turn.tools == {} and turn.summary == ""
    # The same file as it was when the assistant answered "how are you doing".
    turn = read_last_turn(truncated_copy(path, 8, tmp_path / "t.jsonl"))
    assert turn.ask == "how are you doing"
    assert turn.summary.startswith("I'm doing well, thanks for asking!")
    # ... and right after /clear: the caveat (isMeta) and the command output are skipped.
    assert read_last_turn(truncated_copy(path, 4, tmp_path / "c.jsonl")).ask == "/clear"


# ----- synthetic cases --------------------------------------------------------------


def _simple(tmp_path: Path) -> Transcript:
    t = Transcript(tmp_path / "t.jsonl")
    t.prompt("earlier question")
    t.text("earlier answer")
    t.prompt("rename the config loader")
    t.tool("Read", file_path="/p/config.py")
    t.tool("Edit", file_path="/p/config.py", old_string="a", new_string="b")
    t.tool("Bash", command="pytest -q")
    t.text("Renamed it; tests pass.")
    return t


def test_partial_last_line_is_ignored(tmp_path):
    t = _simple(tmp_path)
    path = t.write(tail='{"type":"assistant","message":{"content":[{"type":"text","text":"half')
    turn = read_last_turn(path)
    full = len(("\n".join(t.lines) + "\n").encode())
    assert turn.ask == "rename the config loader"
    assert turn.summary == "Renamed it; tests pass."
    assert turn.byte_end == full  # the unterminated line is not part of the range


def test_last_line_without_newline_counts_when_whole(tmp_path):
    t = _simple(tmp_path)
    t.path.write_text("\n".join(t.lines), encoding="utf-8")
    turn = read_last_turn(t.path)
    assert turn.summary == "Renamed it; tests pass."
    assert turn.byte_end == t.path.stat().st_size


def test_lines_that_do_not_parse_are_skipped(tmp_path):
    t = _simple(tmp_path)
    t.lines.insert(-1, "not json at all")
    t.lines.insert(-1, '["a list, not an object"]')
    t.lines.insert(-1, "")
    turn = read_last_turn(t.write())
    assert turn.tools == {"Read": 1, "Edit": 1, "Bash": 1}
    assert turn.ask == "rename the config loader"


def test_tools_files_and_commands(tmp_path):
    turn = read_last_turn(_simple(tmp_path).write())
    assert turn.files_read == ["/p/config.py"]
    assert turn.files_written == ["/p/config.py"]
    assert turn.commands == ["pytest -q"]
    assert turn.git_branch == "feature/x" and turn.cwd == "/home/dev/proj"
    assert turn.prompt_uuid == "uuid-3"


def test_every_write_tool_counts(tmp_path):
    t = Transcript(tmp_path / "t.jsonl")
    t.prompt("edit things")
    t.tool("Write", file_path="/p/a.py", content="x")
    t.tool("MultiEdit", file_path="/p/b.py", edits=[])
    t.tool("NotebookEdit", notebook_path="/p/c.ipynb", new_source="x")
    t.tool("Edit", file_path="/p/a.py", old_string="x", new_string="y")
    turn = read_last_turn(t.write())
    assert turn.files_written == ["/p/a.py", "/p/b.py", "/p/c.ipynb"]
    assert turn.tools == {"Write": 1, "MultiEdit": 1, "NotebookEdit": 1, "Edit": 1}


@pytest.mark.parametrize("content", ["", None])
def test_empty_or_missing_file(tmp_path, content):
    path = tmp_path / "t.jsonl"
    if content is not None:
        path.write_text(content)
    turn = read_last_turn(path)
    assert turn.ask is None and turn.summary == "" and turn.tools == {}
    assert turn.byte_start is None and turn.byte_end is None
    turn = read_last_turn(path, last_assistant_message="Done.")
    assert turn.summary == "Done." and turn.lagging


def test_no_path_at_all():
    assert read_last_turn(None, last_assistant_message="hi").summary == "hi"


def test_compaction_inside_a_turn(tmp_path):
    t = Transcript(tmp_path / "t.jsonl")
    t.prompt("migrate the database layer")
    t.tool("Edit", file_path="/p/db.py")
    t.raw(
        "system",
        subtype="compact_boundary",
        content="Conversation compacted",
        compactMetadata={"trigger": "auto"},
    )
    t.prompt(
        "This session is being continued from a previous conversation that ran out "
        "of context. The conversation is summarized below: ...",
        isCompactSummary=True,
    )
    t.prompt(
        "This session is being continued from a previous conversation ... (older "
        "versions have no isCompactSummary flag)"
    )
    t.tool("Write", file_path="/p/db2.py")
    t.text("Migrated.")
    turn = read_last_turn(t.write())
    assert turn.ask == "migrate the database layer"
    assert turn.files_written == ["/p/db.py", "/p/db2.py"]


def test_interrupted_prompt_then_a_new_one(tmp_path):
    t = Transcript(tmp_path / "t.jsonl")
    t.prompt("refactor everything")
    t.tool("Bash", command="make all")
    t.prompt([{"type": "text", "text": "[Request interrupted by user for tool use]"}])
    t.prompt("only refactor the parser")
    t.tool("Edit", file_path="/p/parser.py")
    t.text("Refactored the parser only.")
    turn = read_last_turn(t.write())
    assert turn.ask == "only refactor the parser"
    assert turn.commands == [] and turn.tools == {"Edit": 1}


def test_interrupt_at_the_end_keeps_the_interrupted_turn(tmp_path):
    t = Transcript(tmp_path / "t.jsonl")
    t.prompt("run the slow suite")
    t.tool("Bash", command="pytest -m slow")
    t.prompt([{"type": "text", "text": "[Request interrupted by user]"}])
    turn = read_last_turn(t.write())
    assert turn.ask == "run the slow suite"
    assert turn.commands == ["pytest -m slow"]


def test_slash_command_is_recorded_as_cmd_args(tmp_path):
    t = Transcript(tmp_path / "t.jsonl")
    t.prompt(
        "<command-message>review is running…</command-message>\n"
        "<command-name>/review</command-name>\n<command-args>PR 12</command-args>"
    )
    t.prompt([{"type": "text", "text": "Review the pull request ... (expanded command)"}], isMeta=True)
    t.text("Looks good.")
    assert read_last_turn(t.write()).ask == "/review PR 12"


@pytest.mark.parametrize(
    "content, ask",
    [
        (
            (
                "<command-name>/clear</command-name>\n  <command-message>clear</command-message>\n"
                "  <command-args></command-args>"
            ),
            "/clear",
        ),
        ("<command-name>model</command-name><command-args>opus</command-args>", "/model opus"),
        (
            [
                {"type": "text", "text": "<system-reminder>ctx</system-reminder>"},
                {"type": "text", "text": "fix the bug"},
            ],
            "fix the bug",
        ),
        (
            [{"type": "image", "source": {}}, {"type": "text", "text": "what is this?"}],
            "[image]\nwhat is this?",
        ),
        ("<system-reminder>only a reminder</system-reminder>", None),
        ("<local-command-stdout>done</local-command-stdout>", None),
        ("<bash-stdout>x</bash-stdout><bash-stderr></bash-stderr>", None),
        ("Stop hook feedback:\n- [brain]: keep going", None),
        ("[Request interrupted by user]", None),
        ([{"type": "tool_result", "tool_use_id": "t", "content": "ok"}], None),
    ],
)
def test_prompt_text(content, ask):
    record = {"type": "user", "message": {"role": "user", "content": content}}
    assert prompt_text(record) == ask


def test_meta_sidechain_and_tool_result_lines_are_not_prompts():
    base = {"type": "user", "message": {"role": "user", "content": "hello"}}
    assert prompt_text(base) == "hello"
    for flag in ("isMeta", "isSidechain", "isCompactSummary"):
        assert prompt_text({**base, flag: True}) is None
    assert prompt_text({**base, "toolUseResult": {"stdout": ""}}) is None
    assert prompt_text({**base, "isSidechain": True}, allow_sidechain=True) == "hello"
    assert prompt_text({**base, "type": "assistant"}) is None


def test_lagging_transcript_takes_the_final_text_from_the_hook(tmp_path):
    t = Transcript(tmp_path / "t.jsonl")
    t.prompt("bump the version")
    t.tool("Edit", file_path="/p/pyproject.toml")
    path = t.write()  # the final assistant text has not reached the file yet
    turn = read_last_turn(path, last_assistant_message="Bumped to 1.2.0. I decided to skip the changelog.")
    assert turn.lagging
    assert turn.summary.endswith("Bumped to 1.2.0. I decided to skip the changelog.")
    assert turn.decisions == ["Bumped to 1.2.0. I decided to skip the changelog."]
    # Once the file has caught up the same text is not added twice.
    t.text("Bumped to 1.2.0. I decided to skip the changelog.")
    turn = read_last_turn(t.write(), last_assistant_message="Bumped to 1.2.0. I decided to skip the changelog.")
    assert not turn.lagging
    assert turn.summary.count("Bumped to 1.2.0") == 1


def test_split_and_repeated_assistant_lines_count_once(tmp_path):
    t = Transcript(tmp_path / "t.jsonl")
    t.prompt("look around")
    msg = {"id": "msg_same", "type": "message", "role": "assistant"}
    text = {**msg, "content": [{"type": "text", "text": "Looking."}]}
    use = {**msg, "content": [{"type": "tool_use", "id": "toolu_x", "name": "Glob", "input": {}}]}
    t.raw("assistant", message=text)
    t.raw("assistant", message=use)
    t.raw("assistant", message=use)  # a version that writes the same block twice
    t.raw("assistant", message=text)
    turn = read_last_turn(t.write())
    assert turn.tools == {"Glob": 1}
    assert turn.summary == "Looking."


def test_stop_hook_feedback_keeps_the_same_turn(tmp_path):
    t = Transcript(tmp_path / "t.jsonl")
    t.prompt("write the docs")
    t.tool("Write", file_path="/p/README.md")
    t.text("Done.")
    first = read_last_turn(t.write())
    t.prompt("Stop hook feedback:\n- [lint]: README has a typo", isMeta=True)
    t.tool("Edit", file_path="/p/README.md")
    t.text("Fixed the typo.")
    second = read_last_turn(t.write())
    assert second.prompt_uuid == first.prompt_uuid
    assert second.tools == {"Write": 1, "Edit": 1}


def test_tool_errors_name_the_tool(tmp_path):
    t = Transcript(tmp_path / "t.jsonl")
    t.prompt("build it")
    t.tool(
        "Bash",
        "<tool_use_error>make: *** No rule to make target</tool_use_error>",
        error=True,
        command="make",
    )
    t.tool("Read", "File does not exist.", error=True, file_path="/nope")
    turn = read_last_turn(t.write())
    assert turn.tool_errors == [
        {"tool": "Bash", "error": "make: *** No rule to make target"},
        {"tool": "Read", "error": "File does not exist."},
    ]


def test_long_fields_are_clipped(tmp_path):
    t = Transcript(tmp_path / "t.jsonl")
    t.prompt("x" * 10_000)
    t.tool("Bash", command="echo " + "y" * 5000)
    t.text("start " + "z" * 20_000 + " the end")
    turn = read_last_turn(t.write())
    assert len(turn.ask) <= transcript_module.ASK_CHARS + 3
    assert len(turn.commands[0]) <= transcript_module.COMMAND_CHARS + 3
    assert len(turn.summary) <= transcript_module.SUMMARY_CHARS + 3
    assert turn.summary.startswith("start") and turn.summary.endswith("the end")


_MARGIN, _MAX = transcript_module.MASK_MARGIN, transcript_module.MASK_WINDOW_MAX
_SECRET_SIZES = [_MARGIN // 2, _MARGIN - 40, _MARGIN, _MARGIN + 40, 2 * _MARGIN, 15_000, _MAX - 40, _MAX, _MAX + 40]
_BEFORE = {"none": "", "a long line": "x " * 40_000 + "\n", "many lines": "x\n" * 40_000, "words": "x " * 40_000}


@pytest.mark.parametrize("before", list(_BEFORE))
@pytest.mark.parametrize("size", _SECRET_SIZES)
@pytest.mark.parametrize("value", ["A", "hunter2x "])
def test_a_secret_longer_than_the_masking_margin_is_not_kept_in_part(before, size, value):
    """A value crossing the tail window's edge was read there without its name: ``password=``
    then 15,000 characters stored ~1.3 K of them, unmasked."""
    secret = (value * (size // len(value) + 1))[:size]
    for after in ("", "\nthe end"):
        text = _BEFORE[before] + "password: " + secret + after
        for limit in (transcript_module.ASK_CHARS, transcript_module.SUMMARY_CHARS, transcript_module.ERROR_CHARS):
            clipped = transcript_module.clip(text, limit)
            assert "AAAAAAAAAA" not in clipped and "hunter" not in clipped, (limit, len(clipped))
            assert len(clipped) <= limit + 3
            if after:
                assert clipped.endswith("the end") and clipped.count("the end") == 1, clipped[-200:]


def _big_transcript(path: Path, head_mb: int) -> int:
    """``head_mb`` MB of older turns' padding, then one real turn; returns the padding size."""
    pad = json.dumps({"type": "progress", "data": {"output": "p" * 1000}}) + "\n"
    old_prompt = json.dumps({"type": "user", "uuid": "old", "message": {"content": "old ask"}}) + "\n"
    block = (old_prompt + pad * 1023).encode()
    with open(path, "wb") as f:
        for _ in range(head_mb * 1024 * 1024 // len(block) + 1):
            f.write(block)
        return f.tell()


def test_transcript_over_50_mb_reads_only_the_tail(tmp_path, monkeypatch):
    path = tmp_path / "big.jsonl"
    padding = _big_transcript(path, 51)
    t = Transcript(tmp_path / "turn.jsonl")
    t.prompt("the real last question")
    t.tool("Write", file_path="/p/out.txt")
    t.text("Wrote it.")
    with open(path, "ab") as f:
        f.write(t.write().read_bytes())
    size = path.stat().st_size
    assert size > 50 * 1024 * 1024

    read_bytes = []
    real_open = open

    class Spy:
        def __init__(self, f):
            self.f = f

        def __enter__(self):
            return self

        def __exit__(self, *exc):
            self.f.close()

        def read(self, n=-1):
            data = self.f.read(n)
            read_bytes.append(len(data))
            return data

        def __getattr__(self, name):
            return getattr(self.f, name)

    monkeypatch.setattr(transcript_module, "open", lambda *a, **k: Spy(real_open(*a, **k)), raising=False)
    turn = read_last_turn(path)
    assert turn.ask == "the real last question"
    assert turn.files_written == ["/p/out.txt"]
    assert turn.byte_start == padding  # the turn's range, far past the start of the file
    assert turn.byte_end == size
    assert sum(read_bytes) <= transcript_module.INITIAL_BLOCK  # one block from the end


def test_read_cap_when_no_prompt_is_in_reach(tmp_path):
    path = tmp_path / "big.jsonl"
    t = Transcript(tmp_path / "turn.jsonl")
    t.prompt("a question long ago")
    filler = [json.dumps({"type": "progress", "n": i, "pad": "q" * 500}) for i in range(4000)]
    t.lines += filler
    t.text("finally done")
    t.write()
    path = t.path
    size = path.stat().st_size
    turn = read_last_turn(path, max_read=256 * 1024)
    assert turn.ask is None  # the prompt is out of reach: give up rather than read it all
    assert turn.summary == "finally done"
    assert turn.byte_start >= size - 256 * 1024


def test_decisions_english_and_russian():
    text = "\n".join(
        [
            "Here is what happened.",
            "- We decided to keep SQLite instead of Postgres.",
            "**I'll use** the streaming parser.",
            "Going with option B.",
            "```",
            "x = 1  # we decided nothing here, this is code",
            "```",
            "Решили хранить индекс рядом с базой.",
            "Будем использовать WAL.",
            "Выбрал вариант с очередью вместо потоков.",
            "The tests pass.",
            "Тесты проходят.",
        ]
    )
    assert decisions(text) == [
        "We decided to keep SQLite instead of Postgres.",
        "I'll use the streaming parser.",
        "Going with option B.",
        "Решили хранить индекс рядом с базой.",
        "Будем использовать WAL.",
        "Выбрал вариант с очередью вместо потоков.",
    ]
    assert decisions("All done. The file was created.") == []


def test_a_fifo_or_folder_is_never_opened(tmp_path):
    fifo = tmp_path / "fifo.jsonl"
    os.mkfifo(fifo)  # opening it for reading would block until a writer comes
    assert read_last_turn(fifo).ask is None
    assert read_last_turn(tmp_path).ask is None


def test_a_file_swapped_for_a_fifo_after_the_check_is_not_waited_on(tmp_path, monkeypatch):
    # The check (a regular file) and the open are two steps: a FIFO put there between them was
    # opened for reading, which waits for a writer, and held the Stop hook until its watchdog.
    import threading

    fifo = tmp_path / "t.jsonl"
    os.mkfifo(fifo)
    real_is_file = Path.is_file
    monkeypatch.setattr(Path, "is_file", lambda self: self == fifo or real_is_file(self))  # checked before the swap
    turns = []
    reader = threading.Thread(target=lambda: turns.append(read_last_turn(fifo)), daemon=True)
    reader.start()
    reader.join(5)
    waited = reader.is_alive()
    if waited:  # let it go: a writer that comes and goes ends its wait
        os.close(os.open(fifo, os.O_WRONLY | os.O_NONBLOCK))
        reader.join(5)
    assert not waited, "the reader waited on the FIFO for a writer"
    assert turns[0].ask is None and turns[0].unreadable == "not a regular file"


def _counting_redact(monkeypatch) -> list[int]:
    """Replace the reader's redact with one that records the length of every text it masks."""
    calls: list[int] = []
    real = transcript_module.redact

    def counting(text: str) -> str:
        calls.append(len(text))
        return real(text)

    monkeypatch.setattr(transcript_module, "redact", counting)
    return calls


def test_only_the_commands_and_errors_kept_are_masked(tmp_path, monkeypatch):
    # 300 commands and 100 errors: the row keeps 50 and 20, and only those are masked.
    t = Transcript(tmp_path / "t.jsonl")
    t.prompt("run the migrations")
    commands = [f"mysql -uroot -psecret{i} -e 'select {i}'" for i in range(300)]
    for i, command in enumerate(commands):
        t.tool("Bash", f"<tool_use_error>failed {i} token=abc{i}</tool_use_error>", error=i % 3 == 0, command=command)
    t.text("Done.")
    calls = _counting_redact(monkeypatch)
    turn = read_last_turn(t.write())
    masked = len(calls)
    clip, limit = transcript_module.clip, transcript_module.COMMAND_CHARS
    assert turn.commands == [clip(c, limit) for c in commands[:50]]  # the first 50, in order
    assert turn.commands[0] == "mysql -uroot -p*** -e 'select 0'"
    assert turn.tool_errors == [{"tool": "Bash", "error": f"failed {i} token=***"} for i in range(0, 60, 3)]
    assert masked == 50 + 20 + 2  # the commands and errors kept, the ask and the summary: was 300 + 100 + 2


def test_a_turn_of_thousands_of_long_commands_masks_only_the_kept_ones(tmp_path, monkeypatch):
    # The QA case (r9): 2,000 commands full of "mysql" (each masked alone costs ~7 ms) took
    # over 14 s, past the Stop hook's budget, and the turn was lost.
    t = Transcript(tmp_path / "t.jsonl")
    t.prompt("migrate the db")
    for _ in range(2000):
        t.tool("Bash", command="mysql " * 800)
    calls = _counting_redact(monkeypatch)
    turn = read_last_turn(t.write())
    assert len(turn.commands) == transcript_module.MAX_COMMANDS
    assert sum(calls) <= 51 * len("mysql " * 800)  # was 2,000 times that


ANTHROPIC_KEY = "sk-ant-api03-Zq8Lm2Np4Rt6Vx0Bc3Df5Gh7Jk9"


def test_tool_names_are_masked(tmp_path):
    # A key pasted into an MCP server's name comes back in every tool name of that server.
    t = Transcript(tmp_path / "t.jsonl")
    t.prompt("look it up")
    tool = f"mcp__x__{ANTHROPIC_KEY}"
    t.tool(tool, "Error: denied", error=True, query="a")
    t.tool(tool, query="b")
    t.tool("Task", prompt="search the wiki", description="wiki", subagent_type="general")
    t.raw("user", isSidechain=True, message={"role": "user", "content": "search the wiki"})
    t.raw(
        "assistant",
        isSidechain=True,
        message={"id": "m_side", "role": "assistant", "content": [{"type": "tool_use", "id": "s1", "name": tool}]},
    )
    t.text("Found it.")
    turn = read_last_turn(t.write())
    masked = "mcp__x__sk-ant-***"
    assert turn.tools == {masked: 2, "Task": 1}
    assert turn.tool_errors == [{"tool": masked, "error": "Error: denied"}]
    assert turn.subagents[0]["tools"] == {masked: 1}
    assert ANTHROPIC_KEY[14:] not in json.dumps(turn.__dict__)


def test_plain_tool_names_are_not_masked_one_by_one(tmp_path, monkeypatch):
    t = Transcript(tmp_path / "t.jsonl")
    t.prompt("look around")
    t.tool("Read", file_path="/p/a.py")
    t.tool("mcp__docs__search", query="x")
    t.text("Done.")
    masked: list[str] = []
    real = transcript_module.redact
    monkeypatch.setattr(transcript_module, "redact", lambda text: masked.append(text) or real(text))
    turn = read_last_turn(t.write())
    assert turn.tools == {"Read": 1, "mcp__docs__search": 1}
    assert "mcp__docs__search" in masked and "Read" not in masked


def test_a_byte_that_is_not_utf8_costs_neither_the_prompt_nor_the_turn_before(tmp_path):
    # The line holding the byte was skipped: the turn before's prompt was taken for this one's,
    # and the Stop hook overwrote that turn's row with both turns.
    from brain.db import connection
    from brain.ledger.hook import record_stop
    from brain.ledger.store import recent_turns

    db = tmp_path / "brain.db"
    t = Transcript(tmp_path / "t.jsonl")
    t.prompt("first question about the parser")
    t.text("first answer")
    record_stop({"session_id": "s", "transcript_path": str(t.write())}, db_path=db)
    t.prompt("second question: café au lait")
    t.text("second answer")
    path = t.write()
    path.write_bytes(path.read_bytes().replace("café".encode(), b"caf\xe9"))  # Latin-1, not UTF-8
    turn = read_last_turn(path)
    assert turn.ask == "second question: caf\ufffd au lait" and turn.summary == "second answer"
    record_stop({"session_id": "s", "transcript_path": str(path)}, db_path=db)
    with connection(db) as conn:
        rows = [(r["ask"], r["summary"]) for r in recent_turns(conn)]
    assert sorted(rows) == [
        ("first question about the parser", "first answer"),
        ("second question: caf\ufffd au lait", "second answer"),
    ]


class _TickingClock:
    """``time`` for the reader: every look at the clock costs a millisecond, so how far it reads
    before its deadline is a count of its looks, not the machine's speed."""

    def __init__(self) -> None:
        self.now = 1000.0

    def monotonic(self) -> float:
        self.now += 0.001
        return self.now


def test_lines_that_do_not_parse_count_against_the_deadline(tmp_path, monkeypatch):
    # The deadline was checked between records only: a tail of millions of lines that do not
    # parse kept the reader going until the hook's watchdog ended it, and no row was left.
    import time

    from brain.db import connection
    from brain.ledger.hook import record_stop
    from brain.ledger.store import recent_turns

    t = Transcript(tmp_path / "t.jsonl")
    t.prompt("please fix the parser")
    t.text("fixed it")
    path = t.write(tail="{torn\n" * 2_500_000)
    parsed: list[bytes] = []
    parse = transcript_module._parse

    def counted(raw: bytes) -> dict | None:
        parsed.append(raw)
        return parse(raw)

    with monkeypatch.context() as patched:
        clock = _TickingClock()
        patched.setattr(transcript_module, "time", clock)
        patched.setattr(transcript_module, "_parse", counted)
        with pytest.raises(transcript_module.OutOfTime):
            read_last_turn(path, deadline=clock.monotonic() + 0.2)
    assert 0 < len(parsed) < 100_000  # of 2,500,000: stopped among them at its 200th look at the clock
    db = tmp_path / "brain.db"
    payload = {"session_id": "s", "transcript_path": str(path), "last_assistant_message": "fixed it"}
    record_stop(payload, db_path=db, deadline=time.monotonic() + 0.2)
    with connection(db) as conn:
        (row,) = recent_turns(conn)
    assert row["partial"] == 1 and row["summary"] == "fixed it"
