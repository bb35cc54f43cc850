"""A Stop that records its turn also records the turns of its session no Stop recorded since the
last one that was (a full disk, a hook killed at its timeout, brain not installed for a while)."""

from __future__ import annotations

import sqlite3
from pathlib import Path

import pytest
from ledger_helpers import SESSION, Transcript, hook_payload

from brain.db import BrainDatabaseError
from brain.ledger import hook
from brain.ledger.hook import BACKFILL_TURNS, record_stop
from brain.ledger.transcript import OutOfTime


def _asks(db: Path) -> list[tuple[str, int]]:
    conn = sqlite3.connect(db)
    try:
        return [(r[0], r[1]) for r in conn.execute("SELECT ask, stops FROM turns ORDER BY started_at")]
    finally:
        conn.close()


def _turn(t: Transcript, n: int) -> Path:
    # A session of today's: begun after the ledger's first row was recorded.
    t.prompt(f"ask {n}", timestamp=f"2999-01-01T10:{n // 60:02d}:{n % 60:02d}.000Z")
    t.tool("Bash", command=f"make {n}")
    t.text(f"done {n}")
    return t.write()


def _earlier_session(tmp_path: Path, db: Path) -> None:
    """A turn of another session, recorded before the session's turns began: the hook was in place."""
    other = Transcript(tmp_path / "other.jsonl", session="22222222-2222-4333-8444-555555555555")
    other.prompt("yesterday", timestamp="2026-02-28T09:00:00.000Z")
    other.raw("assistant", message={"role": "assistant", "content": [{"type": "text", "text": "done"}]})
    record_stop(hook_payload(other.write(), session_id=other.session), db_path=db)


def _full_disk(monkeypatch: pytest.MonkeyPatch) -> None:
    """The row cannot be written, nor kept aside, nor a line logged: the disk is full."""

    def no_room(*args: object, **kwargs: object) -> None:
        raise sqlite3.OperationalError("database or disk is full")

    monkeypatch.setattr(hook, "write_turn", no_room)
    monkeypatch.setattr(hook, "write_log_line", lambda line: None)
    from brain.ledger import deferred

    def no_room_aside(*args: object, **kwargs: object) -> None:
        raise OSError(28, "No space left on device")

    monkeypatch.setattr(deferred, "keep_aside", no_room_aside)


def test_a_turn_the_stop_could_not_record_is_recorded_by_the_next_stop(tmp_path, monkeypatch):
    db = tmp_path / "brain.db"
    _earlier_session(tmp_path, db)
    t = Transcript(tmp_path / "t.jsonl")
    with monkeypatch.context() as full:
        _full_disk(full)
        with pytest.raises(BrainDatabaseError):
            record_stop(hook_payload(_turn(t, 1)), db_path=db)
    record_stop(hook_payload(_turn(t, 2)), db_path=db)
    assert _asks(db) == [("yesterday", 1), ("ask 1", 1), ("ask 2", 1)]


def test_after_a_recorded_turn_the_lost_ones_since_are_recorded_once(tmp_path, monkeypatch):
    db = tmp_path / "brain.db"
    t = Transcript(tmp_path / "t.jsonl")
    record_stop(hook_payload(_turn(t, 1)), db_path=db)
    with monkeypatch.context() as full:
        _full_disk(full)
        for n in (2, 3):
            with pytest.raises(BrainDatabaseError):
                record_stop(hook_payload(_turn(t, n)), db_path=db)
    record_stop(hook_payload(_turn(t, 4)), db_path=db)
    record_stop(hook_payload(t.write()), db_path=db)  # the same Stop again: nothing recorded twice
    assert _asks(db) == [("ask 1", 1), ("ask 2", 1), ("ask 3", 1), ("ask 4", 2)]
    row = sqlite3.connect(db).execute("SELECT commands, session_id FROM turns WHERE ask = 'ask 3'").fetchone()
    assert row == ('["make 3"]', SESSION)


def test_a_session_met_mid_way_is_not_backfilled(tmp_path):
    """The hook installed into a session (no row recorded before it began): its past turns are
    not recorded unasked, nor those of a session older than the ledger's first row."""
    db = tmp_path / "brain.db"
    t = Transcript(tmp_path / "t.jsonl")
    _turn(t, 1)
    record_stop(hook_payload(_turn(t, 2)), db_path=db)
    assert _asks(db) == [("ask 2", 1)]
    old = Transcript(tmp_path / "old.jsonl", session="33333333-2222-4333-8444-555555555555")
    for n in (1, 2):
        old.prompt(f"last month {n}", timestamp=f"2000-01-01T10:00:0{n}.000Z")
        old.text("ok")
    record_stop(hook_payload(old.write(), session_id=old.session), db_path=db)
    assert [a for a, _ in _asks(db)] == ["last month 2", "ask 2"]


def test_a_long_session_with_no_row_is_not_backfilled(tmp_path):
    """More turns before the first Stop than a Stop goes back: met mid-way, not backfilled."""
    db = tmp_path / "brain.db"
    _earlier_session(tmp_path, db)
    t = Transcript(tmp_path / "t.jsonl")
    for n in range(BACKFILL_TURNS + 1):
        _turn(t, n)
    record_stop(hook_payload(_turn(t, 99)), db_path=db)
    assert _asks(db) == [("yesterday", 1), ("ask 99", 1)]


def test_lost_turns_past_the_bound_stay_lost_and_are_logged(tmp_path, monkeypatch):
    db = tmp_path / "brain.db"
    t = Transcript(tmp_path / "t.jsonl")
    record_stop(hook_payload(_turn(t, 0)), db_path=db)
    for n in range(1, BACKFILL_TURNS + 3):
        _turn(t, n)
    said: list[str] = []
    monkeypatch.setattr(hook, "log", lambda message, traceback="": said.append(message))
    record_stop(hook_payload(_turn(t, 99)), db_path=db)
    asks = [a for a, _ in _asks(db)]
    assert len(asks) == 1 + BACKFILL_TURNS + 1
    assert asks[:3] == ["ask 0", "ask 3", "ask 4"]  # the newest lost turns, the nearest
    assert any("any before them, past the 10 turns or 4 MB" in line for line in said), said


def test_out_of_time_looking_back_records_the_lost_turns_it_read(tmp_path, monkeypatch):
    db = tmp_path / "brain.db"
    t = Transcript(tmp_path / "t.jsonl")
    record_stop(hook_payload(_turn(t, 1)), db_path=db)
    for n in (2, 3):
        _turn(t, n)
    real, reads = hook.read_last_turn, []

    def late_on_the_second_look_back(*args, **kwargs):
        if kwargs.get("end") is not None:
            reads.append(kwargs["end"])
            if len(reads) == 2:
                raise OutOfTime
        return real(*args, **kwargs)

    said: list[str] = []
    monkeypatch.setattr(hook, "read_last_turn", late_on_the_second_look_back)
    monkeypatch.setattr(hook, "log", lambda message, traceback="": said.append(message))
    record_stop(hook_payload(_turn(t, 4)), db_path=db)
    assert [a for a, _ in _asks(db)] == ["ask 1", "ask 3", "ask 4"]
    assert any("recorded 1 turn of session" in s and "out of the hook's time" in s for s in said), said


def test_another_sessions_history_in_the_transcript_is_not_recorded_under_this_one(tmp_path, monkeypatch):
    """A resumed session's file may begin with the history of the session it resumed: those turns
    are that session's (its Stops recorded them), not this one's, however far back."""
    db = tmp_path / "brain.db"
    _earlier_session(tmp_path, db)
    t = Transcript(tmp_path / "t.jsonl", session="44444444-2222-4333-8444-555555555555")
    _turn(t, 1)
    t.session = SESSION
    record_stop(hook_payload(_turn(t, 2)), db_path=db)
    with monkeypatch.context() as full:
        _full_disk(full)
        with pytest.raises(BrainDatabaseError):
            record_stop(hook_payload(_turn(t, 3)), db_path=db)
    record_stop(hook_payload(_turn(t, 4)), db_path=db)
    assert [a for a, _ in _asks(db)] == ["yesterday", "ask 2", "ask 3", "ask 4"]


def test_a_turn_a_ledger_prune_dropped_is_not_brought_back(tmp_path, monkeypatch):
    """chaos seed 79: a turn whose row a `brain prune --ledger` dropped came back with the next
    Stop: an earlier turn of the session, its row written after the cut (kept aside, caught up
    after the prune), stayed, so the look back began below the dropped one and found no row for it."""
    from brain.ledger.prune import prune_ledger

    db = tmp_path / "brain.db"
    t = Transcript(tmp_path / "t.jsonl")
    for n in (1, 2):
        t.prompt(f"ask {n}", timestamp=f"2026-01-01T10:0{n}:00.000Z")
        t.tool("Bash", command=f"make {n}")
        t.text(f"done {n}")
        record_stop(hook_payload(t.write()), db_path=db)
    conn = sqlite3.connect(db)
    with conn:  # ask 1 written after the cut (caught up late), ask 2 before it
        conn.execute("UPDATE turns SET created_at = '2026-07-01T00:00:00.000Z' WHERE ask = 'ask 1'")
        conn.execute("UPDATE turns SET created_at = '2026-01-01T10:03:00.000Z' WHERE ask = 'ask 2'")
    conn.close()
    cut = 1780272000.0  # 2026-06-01 UTC
    assert prune_ledger(cut, path=db).dropped["turns"] == 1
    t.prompt("ask 3", timestamp="2026-12-01T10:00:00.000Z")
    t.text("done 3")
    record_stop(hook_payload(t.write()), db_path=db)
    assert [ask for ask, _ in _asks(db)] == ["ask 1", "ask 3"]
