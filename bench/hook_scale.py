"""The hooks and the ledger at a heavy user's scale: what a prompt, a turn and a report cost as it grows.

Fills a brain database (``--keep PATH`` keeps it, and a later run with the same path reuses it)
with ``--turns`` turns over ``--years`` years, in sessions of ``--session-turns`` turns, one
prompt row (``recalls``) per turn, and one long session of ``--session-prompts`` prompts each
shown 3 notes of a generated vault with no ``/compact`` since its start: the worst case of the
prompt hook's "already shown in this session". Rows have the sizes of real ones (about 3 KB a
turn, 1 KB a prompt). A thread stands in for ``brain serve`` on the vault's socket and answers
every ask with 20 of the vault's notes, so only the hook and the database are measured. Then it
prints, each beside ``python -c pass``:

- the prompt hook of the long session: in this process (``recall_for_prompt`` and ``record``:
  the lookup of what was shown, the dedupe, the write) and as a whole ``brain hook prompt``;
- the Stop hook: in this process (``record_stop``) and as a whole ``brain hook stop``, on a
  small transcript of a new session;
- ``brain turns`` and ``brain turns --stats`` in this process and as whole processes;
- the first open of a database filled by older code (``--upgrade-from NAME``: filled with the
  migrations up to NAME only), as the first hook after an upgrade pays it: each migration after
  NAME on its own, from the schema just before it (``--upgrade-only``: that alone);
- the file sizes.

    python bench/hook_scale.py [--turns 1000000] [--years 2] [--session-prompts 5000] [--keep PATH]
    python bench/hook_scale.py --turns 10000 --session-prompts 500     # a small run
    python bench/hook_scale.py --turns 100000 --upgrade-from m003_recalls --upgrade-only
"""

from __future__ import annotations

import argparse
import hashlib
import json
import os
import random
import socket
import sqlite3
import subprocess
import sys
import tempfile
import threading
import time
import uuid
from pathlib import Path
from typing import Any

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT))

from ledger_scale import RECALL_COLUMNS, TURN_COLUMNS, WORDS  # noqa: E402  (rows of the same shape)

from brain.autorecall import hook as prompt_hook  # noqa: E402
from brain.autorecall import store as recalls  # noqa: E402
from brain.db import open_db  # noqa: E402
from brain.db_migrations import MIGRATIONS  # noqa: E402
from brain.ledger import store as ledger  # noqa: E402
from brain.ledger.hook import record_stop  # noqa: E402
from brain.recall.types import Candidate, Gate, RecallResult  # noqa: E402
from brain.server import protocol, runtime  # noqa: E402

REASONS = [None] * 5 + ["below-threshold", "acknowledgement", "too-short", "no-server"]
LONG_SESSION = "10n95e55-0000-4000-8000-000000000000"
NOTES = 10_000  # in the generated vault: the long session is shown the first half
BATCH = 20_000


def iso(t: float) -> str:
    return time.strftime("%Y-%m-%dT%H:%M:%S", time.gmtime(t)) + f".{int(t % 1 * 1000):03d}Z"


def make_vault(root: Path) -> list[tuple[str, str]]:
    """``NOTES`` small notes; (path, SHA-256) of each."""
    notes = []
    for i in range(NOTES):
        path = f"Notes/{i // 100:02d}/note {i}.md"
        text = f"# Note {i}\n\n" + " ".join(WORDS[(i + j) % len(WORDS)] for j in range(120)) + "\n"
        (root / path).parent.mkdir(parents=True, exist_ok=True)
        (root / path).write_text(text, encoding="utf-8")
        notes.append((path, hashlib.sha256(text.encode()).hexdigest()))
    return notes


def fill(path: Path, vault: Path, notes: list[tuple[str, str]], args: argparse.Namespace) -> None:
    rnd = random.Random(1)
    texts = [" ".join(rnd.choice(WORDS) for _ in range(rnd.randint(50, 400))) for _ in range(500)]
    asks = [" ".join(rnd.choice(WORDS) for _ in range(rnd.randint(5, 40))) for _ in range(500)]
    span = args.years * 365 * 86400
    start = time.time() - span
    sessions = max(1, args.turns // args.session_turns)
    conn = open_db(path)
    conn.execute("BEGIN")
    turns, prompts = [], []

    has_recalls = conn.execute("SELECT 1 FROM sqlite_master WHERE name = 'recalls'").fetchone() is not None

    def flush() -> None:
        conn.executemany(f"INSERT INTO turns ({TURN_COLUMNS}) VALUES ({', '.join('?' * 19)})", turns)
        if has_recalls:  # filled by code from before m003_recalls: turns only
            conn.executemany(f"INSERT INTO recalls ({RECALL_COLUMNS}) VALUES ({', '.join('?' * 18)})", prompts)
        turns.clear()
        prompts.clear()

    for i in range(args.turns):
        t, project = start + span * i / args.turns, f"proj{i % 20}"
        s = str(uuid.UUID(int=random.Random(i * sessions // args.turns).getrandbits(128)))
        files = [f"/home/me/{project}/src/{rnd.choice(WORDS)}{rnd.randint(0, 50)}.py" for _ in range(rnd.randint(0, 4))]
        tools = {"Bash": rnd.randint(0, 5), "Read": rnd.randint(0, 5), "Edit": 1}
        if i % 7 == 0:
            tools[f"mcp__brain__{rnd.choice(WORDS)}"] = 1
        turns.append(
            (f"{s}:{uuid.uuid4()}", s, str(uuid.uuid4()), iso(t), iso(t + 30), iso(t), iso(t + 30), f"/home/me/{project}",
             project, "main", rnd.choice(asks), rnd.choice(texts), json.dumps(files), json.dumps(files[:2]),
             json.dumps(tools), json.dumps([rnd.choice(asks)] * 2), f"/home/me/.claude/projects/x/{s}.jsonl", i, i + 999)
        )  # fmt: skip
        reason = rnd.choice(REASONS)
        shown = [] if reason else [_shown(notes[rnd.randrange(NOTES)]) for _ in range(rnd.randint(1, 5))]
        prompts.append(_recall(iso(t - 1), s, rnd.choice(asks), reason, shown, vault))
        if len(turns) >= BATCH:
            flush()
    t0 = time.time() - 3600 * 24  # the long session: the last day, one prompt every few seconds
    for i in range(args.session_prompts):
        at = t0 + 3600 * 20 * i / max(1, args.session_prompts)
        if i == 0:
            prompts.append(_recall(iso(at), LONG_SESSION, "/clear", "slash-command", [], vault))
            continue
        shown = [_shown(notes[(i * 3 + j) % (NOTES // 2)]) for j in range(3)]
        prompts.append(_recall(iso(at), LONG_SESSION, rnd.choice(asks), None, shown, vault))
        if len(prompts) >= BATCH:
            flush()
    flush()
    conn.execute("COMMIT")
    conn.execute("PRAGMA wal_checkpoint(TRUNCATE)")
    conn.close()


def _shown(note: tuple[str, str]) -> dict[str, Any]:
    return {"path": note[0], "title": Path(note[0]).stem, "heading": "", "chunk_id": 1, "score": 0.03,
            "dense_score": 0.5, "via": None, "chars": 500, "hash": note[1]}  # fmt: skip


def _recall(at: str, session: str, prompt: str, reason: str | None, shown: list, vault: Path) -> tuple:
    return (at, session, str(uuid.uuid4()), "/home/me/p", str(vault), prompt, len(prompt), reason, "hybrid+ppr",
            "all-MiniLM-L6-v2", 0.35, 20, len(shown), json.dumps(shown), len(shown), 500 * len(shown),
            None if reason else 20.0, 30.0)  # fmt: skip


class StandIn:
    """``brain serve`` for the vault, as far as the prompt hook sees it: each ask gets 20 of the
    vault's notes, cosine 0.6: 10 of the first half (which the long session was shown), then
    10 of the second (never shown), the next ones each time."""

    def __init__(self, root: Path, notes: list[tuple[str, str]], start: int = 0):
        self.root, self.notes, self.n = root, notes, start  # start: past the notes a kept database was shown
        directory = runtime.runtime_dir(root)
        directory.mkdir(parents=True, exist_ok=True)
        directory.chmod(0o700)  # the hook reads a record only from a folder of this user's alone
        path = runtime.socket_path(root)
        path.unlink(missing_ok=True)
        self.listener = socket.socket(socket.AF_UNIX, socket.SOCK_STREAM)
        self.listener.bind(str(path))
        self.listener.listen(16)
        threading.Thread(target=self._serve, daemon=True).start()
        runtime.write_record(root, {"pid": os.getpid(), "vault": str(root), "socket": str(path), "model": "bench"})

    def _serve(self) -> None:
        while True:
            try:
                conn, _ = self.listener.accept()
            except OSError:
                return
            with conn:
                data = b""
                while not data.endswith(b"\n"):
                    chunk = conn.recv(65536)
                    if not chunk:
                        break
                    data += chunk
                self.n += 1
                half = len(self.notes) // 2
                picked = [self.notes[(self.n * 10 + j) % half + offset] for offset in (0, half) for j in range(10)]
                results = [
                    Candidate(i, p, Path(p).stem, 1, "", "text " * 80, 0.6, 0.6) for i, (p, _) in enumerate(picked)
                ]
                result = RecallResult("", prompt_hook.select.MODE, Gate(False, "bench"), results)
                conn.sendall(protocol.encode(protocol.ok({"results": [protocol.encode_result(result)]})))

    def close(self) -> None:
        self.listener.close()


def pct(values: list[float], q: float) -> float:
    ordered = sorted(values)
    return ordered[min(len(ordered) - 1, round(q * (len(ordered) - 1)))]


def timed(work: Any, runs: int) -> list[float]:
    times = []
    for _ in range(runs):
        began = time.perf_counter()
        work()
        times.append(1000 * (time.perf_counter() - began))
    return times


def line(name: str, times: list[float]) -> None:
    print(f"  {name:52} p50 {pct(times, 0.5):8,.1f} ms   p95 {pct(times, 0.95):8,.1f} ms")


def process(argv: list[str], env: dict[str, str], stdin: bytes = b"") -> float:
    began = time.perf_counter()
    proc = subprocess.run(argv, input=stdin, env=env, capture_output=True, timeout=600)
    seconds = time.perf_counter() - began
    if proc.returncode or proc.stderr:
        raise SystemExit(f"{' '.join(argv)}: exit {proc.returncode}\n{proc.stderr.decode()[-2000:]}")
    return 1000 * seconds


def sizes(path: Path) -> str:
    parts = [f"{p.name} {p.stat().st_size / 1e6:,.1f} MB" for p in (path, Path(f"{path}-wal")) if p.exists()]
    return ", ".join(parts)


def upgrade(db: Path, pending: list[str]) -> None:
    """Time each pending migration on its own, from the schema just before it, as the first
    open after an upgrade applies them; then the open that finds nothing left to apply."""
    steps = MIGRATIONS.steps
    names = [name for name, _ in steps]
    total = 0.0
    try:
        for name in pending:
            MIGRATIONS.steps = steps[: names.index(name) + 1]
            began = time.perf_counter()
            open_db(db).close()
            seconds = time.perf_counter() - began
            total += seconds
            print(f"first open after an upgrade, {name}: {1000 * seconds:,.0f} ms")
    finally:
        MIGRATIONS.steps = steps
    if len(pending) > 1:
        print(f"first open after an upgrade, all of them: {1000 * total:,.0f} ms")


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--turns", type=int, default=1_000_000)
    parser.add_argument("--years", type=float, default=2.0)
    parser.add_argument("--session-turns", type=int, default=100, help="turns a session")
    parser.add_argument("--session-prompts", type=int, default=5000, help="prompts of the long session")
    parser.add_argument("--runs", type=int, default=20)
    parser.add_argument("--keep", type=Path, help="the database to fill (reused when it is there)")
    parser.add_argument("--upgrade-from", metavar="NAME", help="fill with the migrations up to NAME; time the rest")
    parser.add_argument("--upgrade-only", action="store_true", help="stop after timing the upgrade")
    args = parser.parse_args()

    tmp = Path(tempfile.mkdtemp(prefix="brain-hook-scale-"))
    home = tmp / "home"
    db = (args.keep or home / "brain.db").resolve()
    vault = (db.parent / "hook-scale-vault").resolve()
    vault.mkdir(parents=True, exist_ok=True)
    notes = make_vault(vault)
    os.environ.update(BRAIN_HOME=str(home), BRAIN_DB=str(db), BRAIN_VAULT=str(vault), BRAIN_PROMPT_BUDGET="5")
    env = {**os.environ, "PYTHONPATH": str(ROOT), "HF_HUB_OFFLINE": "1"}
    env.pop("PYTHONDONTWRITEBYTECODE", None)

    if not db.exists():
        steps = MIGRATIONS.steps
        if args.upgrade_from:
            names = [name for name, _ in steps]
            MIGRATIONS.steps = steps[: names.index(args.upgrade_from) + 1]
        began = time.perf_counter()
        fill(db, vault, notes, args)
        MIGRATIONS.steps = steps
        print(f"filled in {time.perf_counter() - began:,.0f} s")
    conn = sqlite3.connect(db)  # not open_db: a reader upgrades the database it opens
    pending = MIGRATIONS.pending(conn)
    conn.close()
    if pending:
        upgrade(db, pending)
    if args.upgrade_only:
        if not args.keep:
            import shutil

            shutil.rmtree(tmp, ignore_errors=True)
        return
    conn = open_db(db)
    n_turns = conn.execute("SELECT count(*) FROM turns").fetchone()[0]
    n_prompts = conn.execute("SELECT count(*) FROM recalls").fetchone()[0]
    n_sessions = conn.execute("SELECT count(DISTINCT session_id) FROM turns").fetchone()[0]
    long = conn.execute("SELECT count(*) FROM recalls WHERE session_id = ?", (LONG_SESSION,)).fetchone()[0]
    last_session = conn.execute("SELECT session_id FROM turns ORDER BY id DESC LIMIT 1").fetchone()[0]
    conn.close()
    print(f"{n_turns:,} turns in {n_sessions:,} sessions, {n_prompts:,} prompts; the long session {long:,} prompts")
    print(f"database: {sizes(db)}; load {os.getloadavg()[0]:.1f} on {os.cpu_count()} cores")

    bare = [process([sys.executable, "-c", "pass"], env) for _ in range(args.runs)]
    print("\nthe interpreter")
    line("python -c pass", bare)

    stand_in = StandIn(vault, notes, start=long)
    try:
        print(f"\nprompt hook, the long session ({long:,} prompts and growing)")
        conn = open_db(db)
        line("shown_in_session (the lookup alone)", timed(lambda: recalls.shown_in_session(conn, LONG_SESSION), 5))
        conn.close()
        payload = {"session_id": LONG_SESSION, "cwd": str(ROOT), "hook_event_name": "UserPromptSubmit",
                   "prompt": "how does the parser retry the kafka backoff"}  # fmt: skip

        def in_process() -> None:
            started = time.monotonic()
            recall = prompt_hook.recall_for_prompt(payload, started=started, deadline=started + 5, db_path=db)
            assert recall.context and recall.row.get("reason") is None, recall.row
            prompt_hook.record(recall.row, db)

        line("in process (recall_for_prompt + record)", timed(in_process, args.runs))
        argv = [sys.executable, "-m", "brain", "hook", "prompt"]
        whole = [process(argv, env, json.dumps(payload).encode()) for _ in range(args.runs)]
        line("whole process: brain hook prompt", whole)
    finally:
        stand_in.close()

    print("\nStop hook, a new session's turn")
    sys.path.insert(0, str(ROOT / "bench"))
    from hook_speed import write_transcript

    transcript = tmp / "transcript.jsonl"
    write_transcript(transcript, 0.2)
    stop = {"session_id": "bench-stop", "transcript_path": str(transcript), "cwd": str(ROOT), "hook_event_name": "Stop"}
    line("in process (record_stop)", timed(lambda: record_stop(stop, db_path=db), args.runs))
    argv = [sys.executable, "-m", "brain", "hook", "stop"]
    line("whole process: brain hook stop", [process(argv, env, json.dumps(stop).encode()) for _ in range(args.runs)])

    print("\nbrain turns")
    conn = open_db(db, read_only=True)
    runs = max(3, args.runs // 4)
    line("recent_turns(limit=10)", timed(lambda: ledger.recent_turns(conn, limit=10), runs))
    line("turn_stats()", timed(lambda: ledger.turn_stats(conn), runs))
    line("turn_stats(project='proj3')", timed(lambda: ledger.turn_stats(conn, project="proj3"), runs))
    session = last_session[:8]
    line("turn_stats(session=<a prefix>)", timed(lambda: ledger.turn_stats(conn, session=session), runs))
    conn.close()
    brain = [sys.executable, "-m", "brain"]
    line("whole process: brain turns", [process([*brain, "turns"], env) for _ in range(runs)])
    line("whole process: brain turns --stats", [process([*brain, "turns", "--stats"], env) for _ in range(runs)])
    print(f"\ndatabase after: {sizes(db)}")
    if not args.keep:
        import shutil

        shutil.rmtree(tmp, ignore_errors=True)


if __name__ == "__main__":
    main()
