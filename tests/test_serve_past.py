"""`brain serve` and `brain mcp` over the past: `brain ask --as-of`/`--valid-at` answered by the
server as in-process, the views of the past it keeps (warm for the next question, let go with
their snapshot, when idle, beyond their number), a note read as it was, a note's history, and
the same one line for a moment that cannot be answered, whichever door it came in by."""

from __future__ import annotations

import datetime as dt
import json
import logging
import re
import time
from pathlib import Path

import pytest
from click.testing import CliRunner
from conftest import write
from index_helpers import DECISION, edited_toy_vault, index_then_moment
from serve_helpers import mcp_call as _mcp
from serve_helpers import served, wait_until

from brain import config
from brain.cli import cli
from brain.server import client, runtime
from brain.server import service as service_module

QUESTION = "rollout plan canary regions"


def _iso(moment: float) -> str:
    """A moment as `--as-of` takes it (local time, to the microsecond)."""
    return dt.datetime.fromtimestamp(moment).isoformat()


@pytest.fixture
def edited(toy_vault):
    """The toy vault with a note rewritten, renamed and deleted (``edited_toy_vault``); the moments between."""
    return toy_vault, edited_toy_vault(toy_vault)


def _invoke(*args: str) -> tuple[int, str, str]:
    result = CliRunner().invoke(cli, list(args))
    return result.exit_code, result.stdout, result.stderr


def _without_timings(text: str) -> dict:
    data = json.loads(text)
    data.pop("timings_ms", None)
    return data


# ----- brain ask --as-of through the server ---------------------------------------------------


@pytest.mark.parametrize(
    "when, flags",
    [
        ("first", []),
        ("first", ["--json"]),
        ("rewritten", ["--mode", "vector", "-k", "4"]),
        ("renamed", ["--mode", "hybrid", "--json"]),
        ("rewritten", ["--valid-at", "2026-03-01", "--json"]),
        (None, ["--valid-at", "2026-01-01"]),
        ("first", ["--context", "--budget", "900"]),
        ("renamed", ["--ab", "--json"]),
    ],
)
def test_ask_as_of_through_the_server_prints_what_an_in_process_run_prints(edited, when, flags):
    vault, at = edited
    past = ["--as-of", _iso(at[when])] if when else []
    args = ["ask", "--vault", str(vault), *past, *flags, QUESTION]
    with served(vault, watch=False) as daemon:
        served_code, served_out, served_err = _invoke(*args)
        assert served_code == 0, served_out + served_err
        assert daemon.service.queries == 1  # the server answered it
        local_code, local_out, local_err = _invoke(*args, "--no-server")
        assert local_code == 0 and daemon.service.queries == 1
    if "--json" in flags:
        served_data, local_data = _without_timings(served_out), _without_timings(local_out)
        if "--ab" in flags:
            for side in ("a", "b"):
                served_data[side].pop("timings_ms"), local_data[side].pop("timings_ms")
        assert served_data == local_data
    else:
        assert served_out == local_out and served_err == local_err
    if when and "--context" not in flags:  # the bundle is the passages alone
        assert "as of " in served_out or '"as_of": "' in served_out


def test_a_second_question_about_the_same_moment_is_answered_by_the_view_kept(edited, caplog):
    vault, at = edited
    with served(vault, watch=False) as daemon:
        service = daemon.service
        first = client.ask(vault.resolve(), QUESTION, ["hybrid+ppr"], _settings(), timeout=30, as_of=_iso(at["first"]))
        assert service.past_opened == 1 and len(service.past_views) == 1
        again = client.ask(vault.resolve(), "chroma", ["vector"], _settings(), timeout=30, as_of=_iso(at["first"]))
        assert service.past_opened == 1  # warm: the same view
        assert again[0].as_of == first[0].as_of
        # A moment a little later, nothing recorded between: the same slice, the view kept, its moment moved
        later = at["first"] + 0.001
        moved = client.ask(vault.resolve(), "chroma", ["vector"], _settings(), timeout=30, as_of=_iso(later))
        assert service.past_opened == 1 and moved[0].as_of == pytest.approx(later, abs=1e-5)
        assert [c.path for c in moved[0].results] == [c.path for c in again[0].results]
        # Across a change: another slice, another view
        client.ask(vault.resolve(), QUESTION, ["vector"], _settings(), timeout=30, as_of=_iso(at["rewritten"]))
        assert service.past_opened == 2 and len(service.past_views) == 2
        one, two = (view.recaller.store.versions for view in service.past_views)
        assert any(one[n] is two[n] for n in one.keys() & two.keys())  # the notes unchanged between: shared
        status = client.status(vault.resolve())
        assert status is not None and status["past"]["opened"] == 2 and len(status["past"]["views"]) == 2
        with caplog.at_level("INFO", logger="brain"):
            service._let_go_of_past()
        # serve.log said "let go of 2 view of the pasts"
        assert "let go of 2 views of the past" in [r.getMessage() for r in caplog.records]


def test_what_opening_a_view_read_and_let_go_is_given_back(edited, monkeypatch):
    """A view's first question reads its slice (rows, past vectors) and lets most of it go: given
    back to the system then (malloc_trim), not held by malloc for as long as the view is kept."""
    from brain.server import service as service_module

    vault, at = edited
    trims: list[int] = []
    monkeypatch.setattr(service_module, "release_free_memory", lambda: trims.append(1) or True)
    with served(vault, watch=False) as daemon:
        trims.clear()
        client.ask(vault.resolve(), QUESTION, ["hybrid+ppr"], _settings(), timeout=30, as_of=_iso(at["first"]))
        wait_until(lambda: trims, 120, "the memory given back")
        assert daemon.service.past_opened == 1 and len(trims) == 1
        client.ask(vault.resolve(), QUESTION, ["hybrid+ppr"], _settings(), timeout=30, as_of=_iso(at["first"]))
        client.ask(vault.resolve(), QUESTION, ["hybrid+ppr"], _settings(), timeout=30)
        assert daemon.service.past_opened == 1 and len(trims) == 1  # warm, or the present: nothing opened


def test_a_view_whose_moment_moved_answers_as_one_opened_there(edited):
    """The view kept for one moment, asked about another of the same slice, answers what the
    command line answers for that other moment (its dates, its header)."""
    vault, at = edited
    later = at["rewritten"] + 0.002
    with served(vault, watch=False) as daemon:
        _invoke("ask", "--vault", str(vault), "--as-of", _iso(at["rewritten"]), QUESTION)
        code, served_out, _ = _invoke("ask", "--vault", str(vault), "--as-of", _iso(later), "--json", QUESTION)
        assert code == 0 and daemon.service.past_opened == 1
    _, local_out, _ = _invoke("ask", "--vault", str(vault), "--as-of", _iso(later), "--json", QUESTION)
    assert _without_timings(served_out) == _without_timings(local_out)


def _settings():
    from brain.recall.types import RecallSettings

    return RecallSettings(k=5)


def test_views_of_the_past_go_with_the_snapshot_they_read(edited):
    """A view reads the snapshot it was opened over; when the index changes, the snapshot is
    swapped and the views go with it: the next question opens one over the new state, and
    answers what an in-process run answers now (the present's statistics and chunks moved)."""
    vault, at = edited
    args = ["ask", "--vault", str(vault), "--as-of", _iso(at["rewritten"]), "--json", QUESTION]
    with served(vault) as daemon:
        service = daemon.service
        assert _invoke(*args)[0] == 0 and len(service.past_views) == 1
        write(vault, "Projects/Rollout.md", "# Rollout\n\nThe canary goes to every region in the rollout plan.\n")
        wait_until(lambda: not service.past_views, 30, "the view to go with its snapshot")
        code, served_out, _ = _invoke(*args)
        assert code == 0 and service.past_opened == 2
        _, local_out, _ = _invoke(*args, "--no-server")
    assert _without_timings(served_out) == _without_timings(local_out)


def test_a_prune_under_the_server_is_what_it_answers_about_the_past_within_seconds(edited):
    """`brain prune --before` changed nothing the server looked at: it kept answering about the
    versions it dropped (`brain ask --as-of`, MCP search, get_note and history) from its snapshot
    and the views kept over it until its next update, days on a quiet vault. It now loads the
    pruned state within seconds, lets go of those views, and answers what an in-process run does."""
    vault, at = edited
    then = _iso(at["first"])
    args = ["ask", "--vault", str(vault), "--as-of", then, "--json", QUESTION]
    calls = [
        ("search", {"query": QUESTION, "k": 5, "as_of": then}),
        ("get_note", {"note": DECISION, "as_of": then}),
        ("history", {"note": DECISION}),
    ]
    with served(vault, watch=False) as daemon:
        service = daemon.service
        code, before, _ = _invoke(*args)
        assert code == 0 and len(service.past_views) == 1
        code, out, err = _invoke("prune", "--vault", str(vault), "--before", _iso(at["rewritten"]))
        assert code == 0 and "1 past version" in out, out + err
        wait_until(lambda: not service.past_views, 120, "the view of the pruned past to go")
        code, served_out, _ = _invoke(*args)
        assert code == 0 and service.past_opened == 2
        assert _without_timings(served_out) != _without_timings(before)  # the prune changed the answer
        served_calls = [_text(_mcp(vault, name, arguments, use_server=True)) for name, arguments in calls]
        assert service.queries == 3  # the server answered the searches (two asks, one MCP search)
    _, local_out, _ = _invoke(*args, "--no-server")
    assert _without_timings(served_out) == _without_timings(local_out)
    for (name, arguments), served_text in zip(calls, served_calls, strict=True):
        local_text = _text(_mcp(vault, name, arguments))
        if name == "search":
            served_text, local_text = (json.dumps(_without_timings(t)) for t in (served_text, local_text))
        assert served_text == local_text, name


def test_views_unasked_go_after_the_idle_time_and_beyond_their_number(edited, monkeypatch):
    vault, at = edited
    monkeypatch.setenv("BRAIN_SERVE_PAST_VIEWS", "1")
    # The idle time is read at each tick: an hour while the views are counted (0.5 s, a loaded
    # machine could let the second go before it was looked at), then half a second.
    monkeypatch.setenv("BRAIN_SERVE_PAST_IDLE", "3600")
    with served(vault, watch=False) as daemon:
        service = daemon.service
        for when in ("first", "rewritten"):
            client.ask(vault.resolve(), QUESTION, ["vector"], _settings(), timeout=30, as_of=_iso(at[when]))
        assert len(service.past_views) == 1 and service.past_views[0].as_of == pytest.approx(at["rewritten"])
        monkeypatch.setenv("BRAIN_SERVE_PAST_IDLE", "0.5")
        wait_until(lambda: not service.past_views, 120, "the idle view to go")


def test_views_unasked_go_though_questions_of_the_present_keep_coming(edited, monkeypatch):
    """The idle time is the view's own: questions of the present every 0.3 s (a busy server) never
    left the query thread quiet for the whole wait, and the view stayed."""
    vault, at = edited
    monkeypatch.setenv("BRAIN_SERVE_PAST_IDLE", "3600")  # until the view is counted: then 1 s
    with served(vault, watch=False) as daemon:
        service = daemon.service
        client.ask(vault.resolve(), QUESTION, ["vector"], _settings(), timeout=30, as_of=_iso(at["first"]))
        assert len(service.past_views) == 1
        monkeypatch.setenv("BRAIN_SERVE_PAST_IDLE", "1")
        deadline = time.monotonic() + 120  # a guard: it was 6 s, which a loaded machine could overrun
        while service.past_views and time.monotonic() < deadline:
            client.ask(vault.resolve(), QUESTION, ["vector"], _settings(), timeout=30)
            time.sleep(0.3)
        assert not service.past_views, "the view unasked for 2 minutes, idle 1 s, is still kept"


def test_views_unasked_go_on_a_quiet_vault_whose_wal_does_not_fold(edited, monkeypatch, caplog):
    """The start pass commits (when it ran) after the snapshot opened and changes nothing it
    loads, so the WAL cannot be folded until the next change, and the server tried again at every
    idle probe: a job on the query thread every few seconds, and the views of the past, which went
    only when it was quiet for their whole idle time, stayed (at 100,000 notes, 400 MB) until
    the vault changed."""
    vault, at = edited
    caplog.set_level(logging.INFO, logger="brain")
    monkeypatch.setattr(service_module, "PROBE_EVERY", 0.1)  # the probe at each idle tick (1 s here)
    monkeypatch.setenv("BRAIN_SERVE_PAST_IDLE", "3600")  # until both are counted (1.5 s could pass): then 1.5 s
    with served(vault, watch=False) as daemon:
        service = daemon.service
        for when in ("first", "rewritten"):
            client.ask(vault.resolve(), QUESTION, ["vector"], _settings(), timeout=30, as_of=_iso(at[when]))
        assert len(service.past_views) == 2
        assert (config.index_dir(vault.resolve()) / "index.db-wal").stat().st_size  # what is tried again
        monkeypatch.setenv("BRAIN_SERVE_PAST_IDLE", "1.5")
        wait_until(lambda: not service.past_views, 120, "the idle views to go")
    # both let go while it served, each when idle (one line each, or, the machine loaded, both
    # in one: "let go of 2 views"); counted by views, not lines
    let_go = [re.fullmatch(r"let go of (\d+) views? of the past", m) for m in caplog.messages]
    assert sum(int(m[1]) for m in let_go if m) == 2, caplog.messages


def test_the_views_kept_go_when_the_server_stops(edited, caplog):
    vault, at = edited
    caplog.set_level(logging.INFO, logger="brain")
    with served(vault, watch=False) as daemon:
        for when in ("first", "rewritten"):
            client.ask(vault.resolve(), QUESTION, ["vector"], _settings(), timeout=30, as_of=_iso(at[when]))
        assert len(daemon.service.past_views) == 2
    assert not daemon.service.past_views
    assert "let go of 2 views of the past" in caplog.messages  # was "2 view of the pasts"


def test_with_no_views_kept_each_question_opens_and_closes_its_own(edited, monkeypatch):
    vault, at = edited
    monkeypatch.setenv("BRAIN_SERVE_PAST_VIEWS", "0")
    args = ["ask", "--vault", str(vault), "--as-of", _iso(at["renamed"]), QUESTION]
    with served(vault, watch=False) as daemon:
        first, second = _invoke(*args), _invoke(*args)
        assert daemon.service.past_opened == 2 and daemon.service.past_views == []
    assert first == second == _invoke(*args)


def test_a_server_from_before_the_past_is_not_asked_about_it(edited):
    """Its record lists no `past`: it would ignore `as_of` and answer about the present."""
    vault, at = edited
    args = ["ask", "--vault", str(vault), "--as-of", _iso(at["first"]), QUESTION]
    with served(vault, watch=False) as daemon:
        record = runtime.read_record(vault.resolve())
        assert record is not None and record["features"] == ["past", "prefixes", "history_as_of"]
        del record["features"]
        runtime.write_record(vault.resolve(), record)
        code, out, _ = _invoke(*args)
        assert code == 0 and daemon.service.queries == 0  # answered in this process
        assert _invoke(*args[:-1], "--no-server", QUESTION)[1] == out
        assert _invoke("ask", "--vault", str(vault), QUESTION)[0] == 0 and daemon.service.queries == 1


# ----- one line for a moment that cannot be answered, at every door ----------------------------


def _moments(at: dict[str, float]) -> dict[str, str]:
    return {
        "before history": _iso(at["first"] - 3600),
        "in the future": (dt.date.today() + dt.timedelta(days=3)).isoformat(),
        "unreadable": "last tuesday",
        "past the calendar": "99999999999y",
    }


# "is in the future (…; now is 2026-12-06 13:21)": the doors are asked seconds apart, and a minute
# may turn between two of them (it did, a test started at 13:21:59.5): the moment is masked.
_NOW_IS = re.compile(r"(?<=; now is )\d{4}-\d\d-\d\d \d\d:\d\d(?=\))")


def _unclocked(text: str) -> str:
    return _NOW_IS.sub("then", text)


@pytest.mark.parametrize("kind", ["before history", "in the future", "unreadable", "past the calendar"])
def test_a_moment_that_cannot_be_answered_is_the_same_line_from_every_door(edited, kind):
    vault, at = edited
    moment = _moments(at)[kind]
    args = ["ask", "--vault", str(vault), "--as-of", moment, QUESTION]
    code, out, err = _invoke(*args, "--no-server")
    assert code != 0 and out == "" and err.startswith("Error: ") and len(err.strip().splitlines()) == 1
    if kind == "in the future":
        assert _NOW_IS.search(err), err
    line = _unclocked(err.strip().removeprefix("Error: "))
    # the request's field and the tools' argument is as_of: an agent calling search has no --as-of
    wire = "as_of" + line.removeprefix("--as-of") if line.startswith("--as-of ") else line
    with served(vault, watch=False) as daemon:
        code2, out2, err2 = _invoke(*args)
        assert (code2, out2, _unclocked(err2)) == (code, out, _unclocked(err))
        with pytest.raises(client.ServerError) as refused:
            client.call(daemon.root, "ask", timeout=10, query=QUESTION, modes=["vector"], settings={}, as_of=moment)
        assert _unclocked(str(refused.value)) == wire
        assert refused.value.code == ("brain_error" if kind == "before history" else "bad_request")
        result = _mcp(vault, "search", {"query": QUESTION, "as_of": moment}, use_server=True)
        assert result.is_error and _unclocked(_text(result)) == wire
        note = _mcp(vault, "get_note", {"note": "Home", "as_of": moment}, use_server=True)
        assert note.is_error and _unclocked(_text(note)) == wire
    result = _mcp(vault, "search", {"query": QUESTION, "as_of": moment})
    assert result.is_error and _unclocked(_text(result)) == wire
    assert "Traceback" not in err


def test_a_date_naming_today_is_now_and_a_time_later_today_is_in_the_future():
    from brain.errors import ConfigError
    from brain.moments import past_moment

    now = dt.datetime(2026, 12, 1, 14, 30).timestamp()
    assert past_moment("2026-12-01", now=now) == now
    assert past_moment("2026-11-30", now=now) < now
    with pytest.raises(ConfigError, match=r"--as-of '2026-12-01T18:00' is in the future"):
        past_moment("2026-12-01T18:00", now=now)
    with pytest.raises(ConfigError, match="is in the future"):
        past_moment("2026-12-02", now=now)


def test_a_week_holding_today_is_now():
    """`--as-of 2026-W49` on Tuesday 1 December 2026 was "in the future" (its Sunday's end),
    where `--as-of 2026-12-01` meant now: a week holding today is now too; a later one is not."""
    from brain.errors import ConfigError
    from brain.moments import past_moment

    now = dt.datetime(2026, 12, 1, 14, 30).timestamp()
    assert past_moment("2026-W49", now=now) == past_moment("2026w49", now=now) == now
    assert past_moment("2026-W48", now=now) < now
    with pytest.raises(ConfigError, match="is in the future"):
        past_moment("2026-W49-7", now=now)  # a day of it, Sunday: not today
    with pytest.raises(ConfigError, match="is in the future"):
        past_moment("2026-W50", now=now)


# ----- MCP: search, get_note and history over the past -----------------------------------------


def _text(result) -> str:
    return "".join(part.text for part in result.content)


def test_mcp_search_as_of_answers_what_brain_ask_as_of_prints(edited):
    vault, at = edited
    for when, extra in (("first", {}), ("rewritten", {"valid_at": "2026-03-01"})):
        result = _mcp(vault, "search", {"query": QUESTION, "k": 5, "as_of": _iso(at[when]), **extra})
        assert not result.is_error, _text(result)
        flags = ["--valid-at", extra["valid_at"]] if extra else []
        _, out, _ = _invoke(
            "ask", "--vault", str(vault), "-k", "5", "--as-of", _iso(at[when]), *flags, "--json", QUESTION
        )
        assert _without_timings(_text(result)) == _without_timings(out)
        assert json.loads(_text(result))["as_of"] is not None


def test_mcp_get_note_as_of_reads_the_text_of_then(edited):
    vault, at = edited
    then = _mcp(vault, "get_note", {"note": "Decision - Use Chroma", "as_of": _iso(at["first"])})
    now = _mcp(vault, "get_note", {"note": "Decision - Use Chroma"})
    original = (Path(__file__).resolve().parents[1] / "toy_vault" / DECISION).read_text(encoding="utf-8")
    data = json.loads(_text(then))
    assert data["text"].strip() in original and "Rollout plan" not in data["text"]
    assert data["version"]["recorded_to"] is not None and data["version"]["ended"] == "changed"
    assert "Rollout plan" in json.loads(_text(now))["text"]
    later = json.loads(_text(_mcp(vault, "get_note", {"note": DECISION, "as_of": _iso(at["rewritten"])})))
    assert "Rollout plan" in later["text"] and later["date"] == "2026-02-20"


def test_mcp_get_note_as_of_finds_a_renamed_or_deleted_note_by_either_name(edited):
    vault, at = edited
    for name in ("Graph RAG", "GraphRAG", "AI/GraphRAG.md", "AI/Graph RAG.md"):
        result = _mcp(vault, "get_note", {"note": name, "as_of": _iso(at["rewritten"])})
        assert not result.is_error, (name, _text(result))
        assert json.loads(_text(result))["path"] == "AI/Graph RAG.md"
    knife = _mcp(vault, "get_note", {"note": "Knife skills", "as_of": _iso(at["renamed"]), "heading": "Knife skills"})
    assert not knife.is_error and "knife" in json.loads(_text(knife))["text"].lower()


def test_mcp_get_note_as_of_a_note_that_did_not_exist_then_says_so_in_one_line(edited):
    vault, at = edited
    gone = _mcp(vault, "get_note", {"note": "Knife skills", "as_of": _iso(at["deleted"])})
    assert gone.is_error and _text(gone).startswith("Cooking/Knife skills.md did not exist as of ")
    assert "it was deleted on" in _text(gone) and "\n" not in _text(gone)
    write(vault, "New idea.md", "# New idea\n\nnot there before\n")
    index_then_moment(vault)
    unborn = _mcp(vault, "get_note", {"note": "New idea", "as_of": _iso(at["first"])})
    assert unborn.is_error and _text(unborn).startswith("New idea.md did not exist as of ")
    assert "brain first saw it on" in _text(unborn)
    nothing = _mcp(vault, "get_note", {"note": "No such note at all", "as_of": _iso(at["first"])})
    assert nothing.is_error and "no note 'No such note at all'" in _text(nothing)


@pytest.mark.parametrize(
    "note, message",
    [
        ("/etc/passwd", "absolute path"),
        ("../outside.md", "steps out of its folder"),
        ("Leak.md", "outside the vault"),  # a note then, a symlink out to a file that is no note now
        ("Private/Diary.md", "brain now leaves Private/Diary.md out"),  # .brainignore'd since
    ],
)
def test_mcp_get_note_as_of_refuses_what_get_note_refuses(edited, tmp_path, note, message):
    vault, _ = edited
    write(vault, "Leak.md", "# Leak\n\nwas a note here\n")
    write(vault, "Private/Diary.md", "# Diary\n\nthe password is hunter2\n")
    moment = index_then_moment(vault)
    (tmp_path / "id_rsa").write_text("the password is hunter3\n", encoding="utf-8")
    (vault / "Leak.md").unlink()
    (vault / "Leak.md").symlink_to(tmp_path / "id_rsa")
    with open(vault / ".brainignore", "a", encoding="utf-8") as ignore:
        ignore.write("\nPrivate/\n")
    result = _mcp(vault, "get_note", {"note": note, "as_of": _iso(moment)})
    assert result.is_error and message in _text(result), _text(result)
    assert "hunter" not in _text(result)


def test_mcp_history_lists_what_brain_history_json_prints(edited):
    vault, _ = edited
    result = _mcp(vault, "history", {"note": "Graph RAG"})
    assert not result.is_error, _text(result)
    code, out, _ = _invoke("history", "--vault", str(vault), "--json", "--last", "20", "Graph RAG")
    assert code == 0 and json.loads(_text(result)) == json.loads(out)
    events = [(v["event"], v["path"]) for v in json.loads(out)["versions"]]
    assert events == [("created", "AI/Graph RAG.md"), ("renamed", "AI/GraphRAG.md")]
    newest = json.loads(_text(_mcp(vault, "history", {"note": DECISION, "limit": 1})))
    assert len(newest["versions"]) == 1 and newest["earlier_versions"] == 1
    missing = _mcp(vault, "history", {"note": "No such note"})
    assert missing.is_error and "no note 'No such note'" in _text(missing)


@pytest.mark.slow
def test_the_history_op_with_last_0_lists_every_version_as_brain_history_last_0_does(edited):
    """The protocol takes `last` from 0 and answers "what `brain history --json` prints", where
    `--last 0` lists every version; the server listed none, all of them `earlier_versions`."""
    vault, _ = edited
    code, out, _ = _invoke("history", "--vault", str(vault), "--json", "--last", "0", DECISION)
    assert code == 0 and len(json.loads(out)["versions"]) == 2
    with served(vault, watch=False):
        reply = client.call(vault, "history", note=DECISION, last=0, timeout=30)
    assert reply == json.loads(out)


def test_a_real_mcp_session_asks_the_server_about_the_past(edited, brain_home):
    """Over stdio from the SDK's client, `brain serve` up: the past is answered by the server,
    and the second search about the same moment by the view it kept."""
    import asyncio
    import sys

    from mcp import Client, StdioServerParameters
    from serve_helpers import LAUNCHER, brain_env

    vault, at = edited
    moment = _iso(at["first"])

    async def session():
        params = StdioServerParameters(
            command=sys.executable, args=[str(LAUNCHER), "mcp", "--vault", str(vault)], env=brain_env()
        )
        async with Client(params, mode="legacy", read_timeout_seconds=120) as client_session:
            names = {tool.name for tool in (await client_session.list_tools()).tools}
            calls = [
                ("search", {"query": QUESTION, "as_of": moment}),
                ("search", {"query": "chroma vector store", "as_of": moment, "mode": "vector"}),
                ("get_note", {"note": DECISION, "as_of": moment}),
                ("history", {"note": DECISION}),
            ]
            return names, [await client_session.call_tool(name, arguments) for name, arguments in calls]

    with served(vault, watch=False) as daemon:
        names, (search, again, note, history) = asyncio.run(session())
        assert {"search", "get_note", "history"} <= names
        assert daemon.service.queries == 2 and daemon.service.past_opened == 1
    for result in (search, again, note, history):
        assert not result.is_error, _text(result)
    assert json.loads(_text(search))["as_of"] is not None
    assert "Rollout plan" not in json.loads(_text(note))["text"]
    assert [v["event"] for v in json.loads(_text(history))["versions"]] == ["created", "changed"]
    assert "loading the index in this process" not in (brain_home / "logs" / "mcp.log").read_text()
