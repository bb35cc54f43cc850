"""The brain database after a year of heavy use: how long its readers take (a figure, not a test).

Fills a brain database in a temporary folder with ``--turns`` turns and ``--recalls`` prompts
spread over a year (sizes like real rows: about 3 KB a turn, 1 KB a prompt; 30 turns a
session), then times, in this process, what reads it: ``brain turns`` (the newest ten, and one
project's), ``brain turns --stats``, ``brain recalls`` and ``brain recalls --stats`` over 14 and
365 days, and the prompt hook's and the Stop hook's own lookups.

    python bench/ledger_scale.py [--turns 300000] [--recalls 500000] [--keep PATH]
"""

from __future__ import annotations

import argparse
import hashlib
import json
import random
import sys
import tempfile
import time
import uuid
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))

from brain.autorecall import store as recalls
from brain.db import open_db
from brain.ledger import store as ledger

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
    args = parser.parse_args()
    with tempfile.TemporaryDirectory() as tmp:
        path = args.keep or Path(tmp) / "brain.db"
        began = time.perf_counter()
        last = fill(path, args.turns, args.recalls)
        print(f"{args.turns:,} turns, {args.recalls:,} prompts: {path.stat().st_size / 1e6:,.0f} MB, "
              f"filled in {time.perf_counter() - began:.0f} s")  # fmt: skip
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


def _ago(days: int) -> str:
    return time.strftime("%Y-%m-%dT%H:%M:%S", time.gmtime(time.time() - days * 86400))


if __name__ == "__main__":
    main()
