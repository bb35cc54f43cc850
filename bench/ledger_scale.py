"""The brain database after a year of heavy use: how long its readers take (a figure, not a test).

Fills a brain database in a temporary folder with ``--turns`` turns and ``--recalls`` prompts
spread over a year (sizes like real rows: about 3 KB a turn, 1 KB a prompt; 30 turns a
session), then times, in this process, what reads it: ``brain turns`` (the newest ten, and one
project's), ``brain turns --stats``, ``brain recalls`` and ``brain recalls --stats`` over 14 and
365 days, and the prompt hook's and the Stop hook's own lookups.

``--prune DAYS`` then runs ``brain prune --ledger --before DAYSd`` (``prune_ledger``) on it
while another thread writes a turn every 100 ms as the Stop hook does (BEGIN IMMEDIATE, one
upsert), and prints what was dropped, the longest a batch held the write lock, the longest a
write waited for it, the size before and after; then ``--vacuum`` alone and how long it took.
The same prune in one transaction (``--one-transaction``) is the figure to compare with.

    python bench/ledger_scale.py [--turns 300000] [--recalls 500000] [--keep PATH] [--prune 182]
    python bench/ledger_scale.py --copy PATH --prune 182 [--one-transaction] --skip-reads  # refill no more
"""

from __future__ import annotations

import argparse
import hashlib
import json
import random
import shutil
import sys
import tempfile
import threading
import time
import uuid
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))

from brain.autorecall import store as recalls
from brain.db import open_db
from brain.ledger import store as ledger
from brain.ledger.prune import prune_ledger
from brain.migrations import connect

WORDS = "the parser index recall note vault kafka backoff retry test fix build deploy schema query hook".split()
TURN_COLUMNS = (
    "turn_key, session_id, prompt_id, created_at, updated_at, started_at, ended_at, cwd, project, git_branch, "
    "ask, summary, files_written, files_read, tools, commands, transcript_path, byte_start, byte_end"
)
RECALL_COLUMNS = (
    "created_at, session_id, prompt_id, cwd, vault, prompt, prompt_chars, reason, mode, model, min_cosine, "
    "results, above, notes, shown, chars, server_ms, latency_ms"
)
REASONS = [None] * 5 + ["below-threshold", "acknowledgement", "slash-command", "too-short", "no-server"]


def fill(path: Path, turns: int, prompts: int) -> str:
    """The database at ``path`` filled; the id of the last session."""
    rnd = random.Random(1)
    text = lambda n: " ".join(rnd.choice(WORDS) for _ in range(n))
    start = time.time() - 365 * 86400
    iso = lambda t: time.strftime("%Y-%m-%dT%H:%M:%S", time.gmtime(t)) + f".{int(t % 1 * 1000):03d}Z"
    sessions = [str(uuid.UUID(int=rnd.getrandbits(128))) for _ in range(max(1, turns // 30))]
    conn = open_db(path)
    conn.execute("BEGIN")
    rows = []
    for i in range(turns):
        t, s, project = start + 365 * 86400 * i / turns, sessions[i * len(sessions) // turns], f"proj{i % 20}"
        files = [f"/home/me/{project}/src/{rnd.choice(WORDS)}.py" for _ in range(rnd.randint(0, 4))]
        tools = {"Bash": rnd.randint(0, 5), "Read": rnd.randint(0, 5), "Edit": 1}
        rows.append(
            (f"{s}:{uuid.uuid4()}", s, str(uuid.uuid4()), iso(t), iso(t + 30), iso(t), iso(t + 30), f"/home/me/{project}",
             project, "main", text(30), text(rnd.randint(50, 400)), json.dumps(files), json.dumps(files[:2]),
             json.dumps(tools), json.dumps([text(8)] * 2), f"/home/me/.claude/projects/x/{s}.jsonl", i, i + 999)
        )  # fmt: skip
    conn.executemany(f"INSERT INTO turns ({TURN_COLUMNS}) VALUES ({', '.join('?' * 19)})", rows)
    rows = []
    for i in range(prompts):
        t, s, reason = start + 365 * 86400 * i / prompts, sessions[i * len(sessions) // prompts], rnd.choice(REASONS)
        notes = [] if reason else [
            {"path": f"Notes/{text(3)}.md", "title": text(3), "heading": text(4), "chunk_id": rnd.randint(1, 9999),
             "score": 0.03, "dense_score": 0.5, "via": None, "chars": 500,
             "hash": hashlib.sha256(str(rnd.random()).encode()).hexdigest()}
            for _ in range(rnd.randint(1, 5))
        ]  # fmt: skip
        prompt = "/compact" if reason == "slash-command" else text(rnd.randint(5, 60))
        rows.append(
            (iso(t), s, str(uuid.uuid4()), "/home/me/p", "/home/me/notes", prompt, len(prompt), reason, "hybrid+ppr",
             "all-MiniLM-L6-v2", 0.35, 5, len(notes), json.dumps(notes), len(notes), 500 * len(notes),
             None if reason else 20.0, 30.0)
        )  # fmt: skip
    conn.executemany(f"INSERT INTO recalls ({RECALL_COLUMNS}) VALUES ({', '.join('?' * 18)})", rows)
    conn.execute("COMMIT")
    conn.execute("PRAGMA wal_checkpoint(TRUNCATE)")
    conn.close()
    return sessions[-1]


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--turns", type=int, default=300_000)
    parser.add_argument("--recalls", type=int, default=500_000)
    parser.add_argument("--keep", type=Path, help="fill this database (kept) instead of a temporary one")
    parser.add_argument("--copy", type=Path, help="start from a copy of this database (filled by --keep before)")
    parser.add_argument("--prune", type=int, metavar="DAYS", help="then prune what was recorded over DAYS days ago")
    parser.add_argument("--one-transaction", action="store_true", help="with --prune: as one DELETE per table")
    parser.add_argument("--skip-reads", action="store_true", help="leave out the readers' timings")
    args = parser.parse_args()
    with tempfile.TemporaryDirectory() as tmp:
        path = args.keep or Path(tmp) / "brain.db"
        began = time.perf_counter()
        if args.copy:
            path = Path(tmp) / "brain.db"
            shutil.copyfile(args.copy, path)
            last = open_db(path).execute("SELECT session_id FROM turns ORDER BY id DESC LIMIT 1").fetchone()[0]
            print(f"a copy of {args.copy}: {path.stat().st_size / 1e6:,.0f} MB")
        else:
            last = fill(path, args.turns, args.recalls)
            print(f"{args.turns:,} turns, {args.recalls:,} prompts: {path.stat().st_size / 1e6:,.0f} MB, "
                  f"filled in {time.perf_counter() - began:.0f} s")  # fmt: skip
        if args.prune is not None:
            prune(path, time.time() - args.prune * 86400, one_transaction=args.one_transaction)
        if args.skip_reads:
            return
        conn = open_db(path)
        for name, work in (
            ("brain turns -n 10", lambda: ledger.recent_turns(conn, limit=10)),
            ("brain turns --project P -n 10", lambda: ledger.recent_turns(conn, project="proj3", limit=10)),
            ("MCP recent_turns(since=7d)", lambda: ledger.recent_turns(conn, since=_ago(7), limit=10)),
            ("brain turns --stats", lambda: ledger.turn_stats(conn)),
            ("brain recalls -n 10", lambda: recalls.recent_recalls(conn, limit=10)),
            ("brain recalls --stats (14 days)", lambda: recalls.report(conn, days=14)),
            ("brain recalls --stats --days 365", lambda: recalls.report(conn, days=365)),
            ("prompt hook: shown in this session", lambda: recalls.shown_in_session(conn, last)),
            ("Stop hook: the prompt recorded", lambda: recalls.recalled_prompt(conn, last, None)),
        ):
            began = time.perf_counter()
            work()
            print(f"  {name:38} {1000 * (time.perf_counter() - began):9,.1f} ms")
        conn.close()


def prune(path: Path, before: float, *, one_transaction: bool) -> None:
    """The prune with a Stop-hook-like writer beside it; then VACUUM. Prints the figures."""
    waits: list[float] = []  # each write, start to end: what the hook's budget pays
    locks: list[float] = []  # of which waiting for the write lock
    commits: list[float] = []  # and committing (with the checkpoint SQLite may run then)
    stop = threading.Event()

    def writer() -> None:  # what `brain hook stop` does to the database, every 100 ms
        conn = connect(str(path))
        n = 0
        while not stop.is_set():
            asked = time.perf_counter()
            conn.execute("BEGIN IMMEDIATE")
            locks.append(time.perf_counter() - asked)
            ledger.write_turn(conn, {"turn_key": f"bench:{n}", "session_id": "bench", "ask": "still recording?"})
            wrote = time.perf_counter()
            conn.execute("COMMIT")
            commits.append(time.perf_counter() - wrote)  # and the checkpoint SQLite runs after it, when the WAL is long
            waits.append(time.perf_counter() - asked)
            n += 1
            stop.wait(0.1)
        conn.close()

    thread = threading.Thread(target=writer)
    thread.start()
    began = time.perf_counter()
    if one_transaction:
        dropped, held = _prune_in_one(path, before)
    else:
        report = prune_ledger(before, path=path)
        dropped, held = report.dropped, report.longest_hold
        size_before, free = report.bytes_before, report.free_bytes
    seconds = time.perf_counter() - began
    stop.set()
    thread.join()
    print(f"prune before {time.strftime('%Y-%m-%d', time.localtime(before))}: dropped "
          + ", ".join(f"{n:,} {t}" for t, n in dropped.items()) + f" in {seconds:.1f} s")  # fmt: skip
    print(f"  longest hold of the write lock {1000 * held:,.0f} ms; a Stop-hook write every 100 ms meanwhile "
          f"({len(waits)} writes) took at most {1000 * max(waits):,.0f} ms (p50 "
          f"{1000 * sorted(waits)[len(waits) // 2]:,.1f} ms), waiting for the lock at most "
          f"{1000 * max(locks):,.0f} ms, committing at most {1000 * max(commits):,.0f} ms")  # fmt: skip
    if one_transaction:
        return
    print(f"  brain.db {size_before / 1e6:,.0f} MB, {free / 1e6:,.0f} MB of it free after the prune")
    report = prune_ledger(None, path=path, vacuum=True)  # `brain prune --ledger --vacuum`, dropping nothing
    print(f"  --vacuum alone: {report.vacuum_seconds:.1f} s holding the database, {report.seconds:.1f} s in all; "
          f"{report.bytes_before / 1e6:,.0f} MB -> {report.bytes_after / 1e6:,.0f} MB")  # fmt: skip


def _prune_in_one(path: Path, before: float) -> tuple[dict[str, int], float]:
    """The same rows deleted in one transaction, as a naive prune would: how long it holds the lock."""
    conn = connect(str(path), busy_timeout_ms=60_000)
    cutoff = before / 86400 + 2440587.5
    conn.execute("BEGIN IMMEDIATE")
    held = time.perf_counter()
    dropped = {
        table: conn.execute(f"DELETE FROM {table} WHERE julianday(created_at) < ?", (cutoff,)).rowcount
        for table in ("turns", "recalls", "ab_recall")
    }
    conn.execute("COMMIT")
    held = time.perf_counter() - held
    conn.close()
    return dropped, held


def _ago(days: int) -> str:
    return time.strftime("%Y-%m-%dT%H:%M:%S", time.gmtime(time.time() - days * 86400))


if __name__ == "__main__":
    main()
