"""Chaos run: brain's processes at once, killed at bad moments, then its promises checked.

Not a test (it runs for minutes, and what it finds depends on timing): a seeded loop over a
generated vault of ``--notes`` notes with wikilinks, in its own brain home, with bench/scale.py's
fake embedder (``benchfake:384``: no model is loaded), and (unless ``--real-thresholds``) the
thresholds of brain's helper processes lowered so a small vault runs them too. Each round:

    the vault changes    notes edited, added, deleted and renamed, before the round and while it runs
    at once, each maybe  `brain index` (1 or 2; killed 40%), `--rebuild --keep-history` (10% of
    killed               rounds; killed 40%), `--repair` (10%), `brain prune --before` (maybe --vacuum;
                         killed 30%), `brain ask --json` through `brain serve` and `--no-server` (which
                         indexes first; killed 30%), a Stop hook per session (killed 20%; some with a
                         budget too short to be sure to write) and its prompt hook (asks the server,
                         records a row in recalls; killed 20%), a real transcript from
                         ../shared/fixtures now and then, `brain turns --json` (killed 20%),
                         `brain prune --ledger --vacuum` or `--before` (killed 25%); the server
                         itself killed or stopped with SIGTERM now and then (started again at the
                         next checks). A kill is kill -9 mostly, else Ctrl-C or SIGTERM.
    an upgrade episode   (``--upgrades``, 20% of rounds) Stop hooks recording into a brain.db whose
                         upgrade outlasts their budget, so they keep their rows aside; some hooks,
                         `brain turns` draining the rows and the catch-up process killed

then, once everything has exited (a process still running after 180 s is a fault), and not after
every round (so kills pile up on what the last ones left), the checks:

    index                `brain index` then `brain index --verify` re-index nothing
    notes                the index's notes (IndexStore.note_rows) are the vault's files: paths and
                         content hashes
    inside               PRAGMA integrity_check on index.db and brain.db, FTS5's integrity-check,
                         history against the present and the vector files against index.db
                         (tests/index_helpers.py's checks)
    server               `brain ask --json` through the server equals --no-server once it has caught
                         up (timings aside), about the present and `--as-of` moments between rounds
    ledger               every turn (prompt) whose hook exited is in `brain turns` (`brain recalls`)
                         once, a killed hook's, or one its watchdog ended, at most once; none that a
                         finished `brain prune --ledger --before` dropped; nothing nobody fed (a
                         hook out of time fed the `<session>:partial:<size>` row hook.log says it
                         wrote: its turn's own row, as a killed hook's, at most once). A hook's
                         lines are its pid's stamped while it ran, in hook.log and hook.log.1
    kept aside           nothing left in brain.db.kept-aside/ (nor in rejected/) but its lock
    processes            no process of the run left but the server (a hook's catch-up: 30 s to end)
    one line             a process stopped by Ctrl-C or SIGTERM prints no traceback

    python bench/chaos.py --seed 1 --rounds 20 --notes 300
    python bench/chaos.py --seed 7 --rounds 5 --keep      # keep the work folder to look at

It prints what each round did and each broken promise, then one line; exit status 1 if any
promise broke. Ctrl-C stops it: every process it started, the server included, is ended.
"""

from __future__ import annotations

import argparse
import contextlib
import datetime as dt
import hashlib
import json
import os
import random
import re
import shutil
import signal
import sqlite3
import subprocess
import sys
import tempfile
import time
import uuid
from dataclasses import dataclass, field
from pathlib import Path

HERE = Path(__file__).resolve().parent
ROOT = HERE.parent
FIXTURES = ROOT.parent / "shared" / "fixtures" / "claude-code"
QUERIES = ["kalo mine rusa", "note links between areas", "tivo zepa quje"]
SETTLE_TIMEOUT = 180.0
# A `brain` process (Ctrl-C answered as a terminal's brain does, though this runs in the background,
# where SIGINT is ignored and children inherit that) that knows bench/scale.py's fake embedder, with the indexer's batch lowered
# (CHAOS_BATCH chunks a commit) so a kill lands between or inside commits of a small vault, and
# with CHAOS_SMALL the thresholds of the helper processes lowered, so that a vault of hundreds of
# notes runs them too (parse workers, the lexical postings child, FTS5 merge steps).
LAUNCH = (
    "import os, signal, sys; signal.signal(signal.SIGINT, signal.default_int_handler); sys.path.insert(0, {here!r}); from scale import _register; _register(); "
    "import brain.index.indexer as ix; ix.CHUNKS_PER_BATCH = int(os.environ.get('CHAOS_BATCH', '1024')); "
    "exec(os.environ.get('CHAOS_SMALL') or ''); exec(os.environ.get('CHAOS_EXTRA') or ''); "
    "from brain.__main__ import main; sys.argv = ['brain'] + sys.argv[1:]; main()"
)
SMALL = (
    "import brain.index.parsing as pa, brain.index.postings_due as po, brain.index.fts_merge as fm; "
    "pa.PARALLEL_FROM = 16; po.REBUILD_MIN = 20; po.EARLY_FROM = 50; fm.START_AT = 2; fm.MIN_PAGES = 4"
)
# A brain.db upgrade longer than any hook's budget (tests/test_ledger_upgrade.py's): m004 runs
# its real steps, then SQLite work until interrupted, so the hooks keep their rows aside.
SLOW_UPGRADE = """
from brain.db_migrations import MIGRATIONS
_names = [name for name, _ in MIGRATIONS.steps]
_i = _names.index('m004_turns_partial')
_real = MIGRATIONS.steps[_i][1]
def m004_turns_partial(conn):
    _real(conn)
    conn.execute('WITH RECURSIVE c(x) AS (SELECT 1 UNION ALL SELECT x + 1 FROM c WHERE x < 2000000000) SELECT count(*) FROM c')
MIGRATIONS.steps[_i] = ('m004_turns_partial', m004_turns_partial)
"""
WORDS = "kalo mine rusa tivo zepa quje difo gohu jaka lone miru neti paso rudi sake tine vozo".split()
SIGNAL_NAMES = {signal.SIGKILL: "killed", signal.SIGINT: "ctrl-c", signal.SIGTERM: "terminated"}
BUSY = re.compile(rb"another brain process( \([^)]*\))? is indexing this vault")  # the holder named when known
ASK_VOLATILE = {"timings", "elapsed_ms", "seconds", "took_ms", "server", "served_by"}


@dataclass
class Run:
    name: str
    args: list[str]
    proc: subprocess.Popen
    started: float
    began_at: float = 0.0  # wall time just before it was started: its hook.log lines come after
    ended_at: float = float("inf")  # wall time it was first seen ended: its lines come before
    kill_at: float | None = None
    killed: bool = False
    turn: str | None = None  # the turn key a hook was fed
    prompt: str | None = None  # the prompt a prompt hook was fed
    before: str | None = None  # a ledger prune's --before
    out: bytes = b""
    err: bytes = b""
    stem: Path | None = None
    signal: int = signal.SIGKILL  # what kills it at kill_at
    short: bool = False  # a hook given a budget too short to be sure to write (it may give up)


@dataclass
class State:
    seed: int
    work: Path
    vault: Path
    home: Path
    env: dict[str, str]
    token: str
    rng: random.Random
    notes: dict[str, str] = field(default_factory=dict)  # path -> text, what the vault holds
    next_note: int = 0
    turns_done: set[str] = field(default_factory=set)  # hooks that exited: the row must be there
    turns_killed: set[str] = field(default_factory=set)  # killed hooks: there at most once
    turns_partial: set[str] = field(default_factory=set)  # partial rows hooks out of time wrote: may be there
    prompts_done: set[str] = field(default_factory=set)  # prompt hooks that exited: their recalls row is there
    prompts_killed: set[str] = field(default_factory=set)
    prompt_created: dict[str, float] = field(default_factory=dict)
    pruned_before: float = 0.0
    may_prune_before: float = 0.0  # a ledger prune, finished or killed, may have dropped rows created before this
    moments: list[float] = field(
        default_factory=list
    )  # when each round began: --as-of asks  # a finished ledger prune dropped rows created before this
    turn_created: dict[str, float] = field(default_factory=dict)
    fixtures_fed: dict[str, bool] = field(default_factory=dict)  # fixture -> a hook on it exited
    server_pid: int | None = None
    procs: list[subprocess.Popen] = field(default_factory=list)
    broken: list[str] = field(default_factory=list)
    shown: int = 0  # broken promises printed so far
    counts: dict[str, int] = field(default_factory=dict)


def count(state: State, what: str, n: int = 1) -> None:
    state.counts[what] = state.counts.get(what, 0) + n


# ----- the vault --------------------------------------------------------------------------


def note_text(state: State, i: int) -> str:
    rng = state.rng
    names = [Path(p).stem for p in state.notes] or [f"note-{i:04d}"]
    lines = [f"# Note {i}", ""]
    for s in range(rng.randint(1, 4)):
        words = rng.choices(WORDS, k=rng.randint(20, 120))
        for _ in range(rng.randint(0, 3)):
            words.insert(rng.randrange(len(words)), f"[[{rng.choice(names)}]]")
        lines += [f"## Part {s + 1}", "", " ".join(words) + ".", ""]
    return "\n".join(lines)


def write_note(state: State, path: str, text: str) -> None:
    target = state.vault / path
    target.parent.mkdir(parents=True, exist_ok=True)
    tmp = target.with_name(f".{target.name}.chaos")
    tmp.write_text(text, encoding="utf-8")
    os.replace(tmp, target)  # an editor's save: the reader sees the old or the new bytes
    state.notes[path] = text


def add_note(state: State) -> None:
    i = state.next_note
    state.next_note += 1
    write_note(state, f"area-{i % 7}/note-{i:04d}.md", note_text(state, i))


def mutate(state: State, changes: int) -> str:
    done = {"edit": 0, "add": 0, "delete": 0, "rename": 0}
    for _ in range(changes):
        roll = state.rng.random()
        paths = sorted(state.notes)
        if roll < 0.5 and paths:
            path = state.rng.choice(paths)
            text = state.notes[path]
            if state.rng.random() < 0.5:
                text += (
                    f"\nEdited: {' '.join(state.rng.choices(WORDS, k=12))} [[{Path(state.rng.choice(paths)).stem}]].\n"
                )
            else:
                text = note_text(state, int(Path(path).stem.split("-")[1]))
            write_note(state, path, text)
            done["edit"] += 1
        elif roll < 0.7 or len(paths) < 10:
            add_note(state)
            done["add"] += 1
        elif roll < 0.85:
            path = state.rng.choice(paths)
            (state.vault / path).unlink()
            del state.notes[path]
            done["delete"] += 1
        else:
            path = state.rng.choice(paths)
            i = state.next_note
            state.next_note += 1
            new = f"area-{state.rng.randrange(7)}/note-{i:04d}.md"
            (state.vault / new).parent.mkdir(parents=True, exist_ok=True)
            os.rename(state.vault / path, state.vault / new)
            state.notes[new] = state.notes.pop(path)
            done["rename"] += 1
    return " ".join(f"{k} {v}" for k, v in done.items() if v)


# ----- processes --------------------------------------------------------------------------


def start(state: State, name: str, args: list[str], *, stdin: bytes | None = None, env: dict | None = None) -> Run:
    """A `brain` process in the background; its output goes to files (a pipe nobody reads while
    it runs would stop a large `brain turns --json` half-way)."""
    command = [sys.executable, "-c", LAUNCH.format(here=str(HERE)), *args]
    logs = state.work / "out"
    logs.mkdir(exist_ok=True)
    stem = logs / uuid.uuid4().hex[:12]
    began_at = time.time()
    with open(f"{stem}.out", "wb") as out, open(f"{stem}.err", "wb") as err:
        proc = subprocess.Popen(
            command,
            env=env or state.env,
            stdin=subprocess.PIPE if stdin is not None else subprocess.DEVNULL,
            stdout=out,
            stderr=err,
            cwd=state.work,
        )
    state.procs.append(proc)
    if stdin is not None and proc.stdin is not None:
        try:  # a hook's input is small: the pipe takes it whole
            proc.stdin.write(stdin)
            proc.stdin.close()
        except OSError:
            pass
        proc.stdin = None
    run = Run(name, args, proc, time.monotonic(), began_at=began_at)
    run.stem = stem
    return run


def brain(state: State, args: list[str], timeout: float = 300, env: dict | None = None) -> subprocess.CompletedProcess:
    command = [sys.executable, "-c", LAUNCH.format(here=str(HERE)), *args]
    proc = subprocess.Popen(
        command, env=env or state.env, stdout=subprocess.PIPE, stderr=subprocess.PIPE, cwd=state.work
    )
    state.procs.append(proc)
    try:
        out, err = proc.communicate(timeout=timeout)
    except subprocess.TimeoutExpired:
        proc.kill()
        out, err = proc.communicate()
        state.broken.append(f"brain {' '.join(args)} still running after {timeout:.0f} s (killed)")
    return subprocess.CompletedProcess(proc.args, proc.returncode, out, err)


def ours(state: State) -> list[tuple[int, str]]:
    """Processes running with this run's token in their environment (what it started, and theirs)."""
    found = []
    needle = f"CHAOS_TOKEN={state.token}".encode()
    for entry in Path("/proc").iterdir():
        if not entry.name.isdigit() or int(entry.name) == os.getpid():
            continue
        try:
            if needle in (entry / "environ").read_bytes().split(b"\0"):
                stat = (entry / "stat").read_text()
                if stat[stat.rindex(")") + 2] == "Z":
                    continue  # exited, not yet reaped by its parent
                cmd = (entry / "cmdline").read_bytes().replace(b"\0", b" ").decode(errors="replace")
                found.append((int(entry.name), cmd[-160:]))
        except (OSError, ValueError):
            continue
    return found


def kill_if_ours(state: State, pid: int, how: int) -> bool:
    """Send ``how`` to ``pid`` if it is still a process of this run: the server's pid, recorded
    when it started, is another process's once it has ended by itself and the pid comes round
    again (32,768 pids at ~20 a second on a busy machine: within half an hour)."""
    if pid not in {found for found, _ in ours(state)}:
        return False
    try:
        os.kill(pid, how)
    except OSError:
        return False
    return True


def end_everything(state: State) -> None:
    """Ctrl-C or the end: every process of the run is ended, the server included."""
    for proc in state.procs:
        if proc.poll() is None:
            proc.kill()
    for pid, _ in ours(state):
        try:
            os.kill(pid, signal.SIGKILL)
        except OSError:
            pass
    for proc in state.procs:
        try:
            proc.wait(timeout=5)
        except subprocess.TimeoutExpired:
            pass


# ----- the server -------------------------------------------------------------------------


def server_status(state: State) -> dict | None:
    sys.path.insert(0, str(ROOT))
    from brain.server import client

    try:
        return client.status(state.vault.resolve(), timeout=5)
    except Exception:  # a server being killed or started: nothing answering
        return None


def start_server(state: State) -> None:
    proc = brain(state, ["serve", "--vault", str(state.vault), "--detach"], timeout=180)
    if proc.returncode != 0:
        state.broken.append(f"brain serve --detach failed: {proc.stderr.decode()[-300:].strip()}")
        state.server_pid = None
        return
    status = server_status(state)
    state.server_pid = status.get("pid") if status else None
    count(state, "server starts")


def stop_server(state: State) -> None:
    proc = brain(state, ["serve", "--vault", str(state.vault), "--stop"], timeout=60)
    if proc.returncode != 0 and b"not running" not in proc.stderr and b"no brain serve" not in proc.stderr:
        state.broken.append(f"brain serve --stop failed: {proc.stderr.decode()[-300:].strip()}")
    state.server_pid = None


# ----- the ledger's input -----------------------------------------------------------------


def transcript_turn(state: State, session: str, n: int) -> tuple[Path, str]:
    """Appends one turn (a prompt, a tool call and its result, the answer) to the session's
    transcript, as Claude Code writes them; returns the transcript and the turn's key."""
    path = state.work / "transcripts" / f"{session}.jsonl"
    path.parent.mkdir(exist_ok=True)
    prompt_uuid = str(uuid.UUID(int=state.rng.getrandbits(128)))
    now = dt.datetime.now(dt.timezone.utc)

    def line(kind: str, uid: str, parent: str | None, message: dict) -> str:
        return json.dumps(
            {
                "parentUuid": parent,
                "isSidechain": False,
                "userType": "external",
                "cwd": str(state.work),
                "sessionId": session,
                "version": "2.1.40",
                "gitBranch": "main",
                "type": kind,
                "message": message,
                "uuid": uid,
                "timestamp": now.strftime("%Y-%m-%dT%H:%M:%S.000Z"),
            }
        )

    tool = f"toolu_{prompt_uuid[:8]}"
    ids = [str(uuid.UUID(int=state.rng.getrandbits(128))) for _ in range(3)]
    lines = [
        line(
            "user",
            prompt_uuid,
            None,
            {"role": "user", "content": f"chaos turn {session[:8]} {n}: {' '.join(state.rng.choices(WORDS, k=8))}"},
        ),
        line(
            "assistant",
            ids[0],
            prompt_uuid,
            {
                "id": f"msg_{ids[0][:8]}",
                "type": "message",
                "role": "assistant",
                "model": "m",
                "content": [{"type": "tool_use", "id": tool, "name": "Bash", "input": {"command": f"echo {n}"}}],
            },
        ),
        line(
            "user",
            ids[1],
            ids[0],
            {"role": "user", "content": [{"type": "tool_result", "tool_use_id": tool, "content": str(n)}]},
        ),
        line(
            "assistant",
            ids[2],
            ids[1],
            {
                "id": f"msg_{ids[2][:8]}",
                "type": "message",
                "role": "assistant",
                "model": "m",
                "content": [
                    {"type": "text", "text": f"Done with turn {n}. {' '.join(state.rng.choices(WORDS, k=30))}"}
                ],
            },
        ),
    ]
    with open(path, "a", encoding="utf-8") as f:
        f.write("\n".join(lines) + "\n")
    return path, f"{session}:{prompt_uuid}"


def hook_payload(session: str, transcript: Path, cwd: Path) -> bytes:
    return json.dumps(
        {
            "session_id": session,
            "transcript_path": str(transcript),
            "cwd": str(cwd),
            "hook_event_name": "Stop",
            "stop_hook_active": False,
        }
    ).encode()


# ----- a round ----------------------------------------------------------------------------


def round_runs(state: State, sessions: list[str], turn_numbers: dict[str, int]) -> list[Run]:
    rng = state.rng
    vault = str(state.vault)
    runs: list[Run] = []

    def maybe_kill(run: Run, chance: float, within: float) -> Run:
        if rng.random() < chance:
            run.kill_at = run.started + rng.uniform(0.05, within)
            # Mostly kill -9; else Ctrl-C (not to a hook: Claude Code never sends it one) or a
            # plain kill, whose handlers must leave things as whole as kill -9 does, saying one line.
            roll = rng.random()
            if roll < 0.15 and "hook" not in run.name:
                run.signal = signal.SIGINT
            elif roll < 0.3:
                run.signal = signal.SIGTERM
        return run

    env = dict(state.env, CHAOS_BATCH=str(rng.choice([4, 16, 64, 1024])))
    for _ in range(rng.choice([1, 1, 2])):
        runs.append(maybe_kill(start(state, "index", ["index", "--vault", vault, "--json", "-q"], env=env), 0.4, 4.0))
    if rng.random() < 0.6:
        when = rng.choice(
            ["1h", "1d", dt.datetime.fromtimestamp(time.time() - rng.uniform(0, 30)).strftime("%Y-%m-%dT%H:%M:%S")]
        )
        # --yes: 1h, or a moment just past, may drop all the history, which brain prune asks about
        args = ["prune", "--vault", vault, "--before", when, "--yes"]
        if rng.random() < 0.3:
            args.append("--vacuum")
        runs.append(maybe_kill(start(state, "prune", args), 0.3, 2.0))
    if rng.random() < 0.1:  # the index swapped whole under the server and the other runs
        runs.append(
            maybe_kill(
                start(state, "rebuild", ["index", "--vault", vault, "--rebuild", "--keep-history", "-q"]), 0.4, 4.0
            )
        )
    if rng.random() < 0.1:
        runs.append(maybe_kill(start(state, "repair", ["index", "--vault", vault, "--repair", "-q"]), 0.3, 2.0))
    for q in rng.sample(QUERIES, 2):
        runs.append(start(state, "ask", ["ask", "--vault", vault, "--json", "-k", "5", q]))
    if rng.random() < 0.5:
        runs.append(
            maybe_kill(  # it brings the index up to date first: a writer too
                start(
                    state, "ask --no-server", ["ask", "--vault", vault, "--json", "--no-server", "-k", "5", QUERIES[0]]
                ),
                0.3,
                3.0,
            )
        )
    # One turn a session a round: Claude Code waits for a turn's Stop hooks before the next turn
    # of that session can end, so two Stops of a session never read two turns at once.
    for session in rng.sample(sessions, rng.randint(1, len(sessions))):
        turn_numbers[session] += 1
        transcript, key = transcript_turn(state, session, turn_numbers[session])
        # Now and then a hook short of time (a busy machine): it records a partial row.
        hook_env = dict(state.env, BRAIN_HOOK_BUDGET=f"{rng.uniform(0.05, 0.6):.2f}") if rng.random() < 0.2 else None
        run = start(state, "hook", ["hook", "stop"], stdin=hook_payload(session, transcript, state.work), env=hook_env)
        run.turn = key
        run.short = hook_env is not None
        state.turn_created.setdefault(key, time.time())
        if rng.random() < 0.6:  # the turn's prompt hook: it asks the server, records a row in recalls
            prompt = f"chaos prompt {uuid.UUID(int=rng.getrandbits(128))}: {' '.join(rng.choices(WORDS, k=6))}"
            payload = {
                "session_id": session,
                "prompt": prompt,
                "cwd": str(state.work),
                "hook_event_name": "UserPromptSubmit",
            }
            asked = start(
                state,
                "prompt hook",
                ["hook", "prompt"],
                stdin=json.dumps(payload).encode(),
                env=dict(state.env, BRAIN_VAULT=vault),
            )
            asked.prompt = prompt
            state.prompt_created[prompt] = time.time()
            runs.append(maybe_kill(asked, 0.2, 1.0))
        runs.append(maybe_kill(run, 0.2, 1.5))
        if rng.random() < 0.2:  # the same turn's Stop again: one row, its stops counted
            again = start(state, "hook again", ["hook", "stop"], stdin=hook_payload(session, transcript, state.work))
            again.turn = key
            runs.append(maybe_kill(again, 0.2, 1.5))
    fixtures = sorted(FIXTURES.glob("*.jsonl")) if FIXTURES.is_dir() else []
    if fixtures and rng.random() < 0.3:
        fixture = rng.choice(fixtures)
        session = json.loads(fixture.read_text(encoding="utf-8").splitlines()[-1]).get("sessionId") or fixture.stem
        run = start(state, "hook fixture", ["hook", "stop"], stdin=hook_payload(session, fixture, state.work))
        run.turn = f"fixture:{fixture.name}"
        runs.append(maybe_kill(run, 0.2, 1.5))
    if rng.random() < 0.5:
        runs.append(maybe_kill(start(state, "turns", ["turns", "--json", "-n", "1000000"]), 0.2, 1.5))
    if rng.random() < 0.4:
        if rng.random() < 0.5:
            runs.append(
                maybe_kill(start(state, "ledger vacuum", ["prune", "--ledger", "--vacuum", "--json"]), 0.25, 1.0)
            )
        else:
            cut = time.time() - rng.uniform(0, 20)
            when = dt.datetime.fromtimestamp(cut).strftime("%Y-%m-%d %H:%M:%S")
            run = start(state, "ledger prune", ["prune", "--ledger", "--before", when, "--json", "--yes"])
            run.before = when
            state.may_prune_before = max(state.may_prune_before, cut)  # killed, it drops whole batches
            runs.append(maybe_kill(run, 0.25, 1.0))
    return runs


@dataclass
class HookLine:
    pid: int
    at: float  # Unix time, to the millisecond brain writes
    text: str  # what follows "pid=N "


# hook.log's line: "2026-12-07T21:47:05.123Z pid=4242 ..." (brain/ledger/hook.py's log_line)
_HOOK_LINE = re.compile(r"^(\d{4}-\d\d-\d\dT\d\d:\d\d:\d\d\.\d{3})Z pid=(\d+) (.*)$", re.M)


def hook_log(state: State) -> list[HookLine]:
    """hook.log's lines, its moved-aside generation (hook.log.1) first: a hook.log over its cap
    is moved there before the next line is written, so a round's lines may be in either."""
    lines = []
    for name in ("hook.log.1", "hook.log"):
        try:
            text = (state.home / "logs" / name).read_text(encoding="utf-8", errors="replace")
        except OSError:
            continue
        for stamp, pid, rest in _HOOK_LINE.findall(text):
            at = dt.datetime.strptime(stamp, "%Y-%m-%dT%H:%M:%S.%f").replace(tzinfo=dt.timezone.utc).timestamp()
            lines.append(HookLine(int(pid), at, rest))
    return lines


def run_lines(lines: list[HookLine], run: Run) -> list[str]:
    """What ``run`` wrote in hook.log: its pid's lines stamped while it ran. A pid is used again
    (another hook, a hook's catch-up process): a later process's lines come after ``run`` ended,
    an earlier one's before it began. Stamps are cut to the millisecond: 1 ms either side."""
    return [
        line.text
        for line in lines
        if line.pid == run.proc.pid and run.began_at - 0.001 <= line.at <= run.ended_at + 0.001
    ]


def gave_up(lines: list[HookLine], run: Run) -> bool:
    """Whether ``run``'s watchdog ended it at its budget (the Stop hook's "gave up after", the
    prompt hook's "prompt: gave up after")."""
    return any(re.match(r"(?:prompt: )?gave up after", text) for text in run_lines(lines, run))


# hook.log's line of a Stop hook that ran out of time reading its turn and wrote what it could
_PARTIAL = re.compile(r"out of time reading .*: (?:recorded a partial row|a partial row kept aside), (\S+)$")


def partial_key(lines: list[HookLine], run: Run) -> str | None:
    """The key of the partial row ``run`` (a Stop hook) recorded or kept aside, if it did:
    ``<session>:partial:<size>`` when the hook had not found the turn's prompt id, else the turn's
    own (``brain/ledger/hook.py``'s ``partial_row``; the README documents both)."""
    for text in run_lines(lines, run):
        if found := _PARTIAL.match(text):
            return found.group(1)
    return None


def partial_turn(lines: list[HookLine], run: Run, fed: set[str]) -> bool:
    """Whether ``run``'s hook wrote a partial row under another key than its turn's (its turn's
    full row may then never come: there at most once, as a killed hook's); its key goes in ``fed``."""
    key = partial_key(lines, run) if run.turn and not run.turn.startswith("fixture:") else None
    if key is None:
        return False
    fed.add(key)
    return key != run.turn


def seen_ended(runs: list[Run]) -> None:
    """Stamps each of ``runs`` that has ended since the last look with the time (``Run.ended_at``)."""
    now = time.time()
    for r in runs:
        if r.ended_at == float("inf") and r.proc.poll() is not None:
            r.ended_at = now


def play_round(state: State, number: int, sessions: list[str], turn_numbers: dict[str, int]) -> None:
    rng = state.rng
    state.moments.append(time.time())
    big = rng.random() < 0.1  # now and then half the vault at once: a long run to kill
    what = mutate(state, rng.randint(1, max(2, len(state.notes) // (2 if big else 10))))
    runs = round_runs(state, sessions, turn_numbers)
    kill_server = state.server_pid is not None and rng.random() < 0.15
    server_kill_at = time.monotonic() + rng.uniform(0.1, 3.0) if kill_server else None
    mid_edits = rng.random() < 0.5
    edit_at = time.monotonic() + rng.uniform(0.1, 2.0)
    deadline = time.monotonic() + SETTLE_TIMEOUT
    while any(r.proc.poll() is None for r in runs):
        seen_ended(runs)
        now = time.monotonic()
        for r in runs:
            if r.kill_at is not None and not r.killed and now >= r.kill_at and r.proc.poll() is None:
                r.proc.send_signal(r.signal)
                r.killed = True
                count(state, f"{SIGNAL_NAMES[r.signal]} {r.name}")
        if server_kill_at is not None and now >= server_kill_at:
            how = signal.SIGTERM if rng.random() < 0.3 else signal.SIGKILL
            if state.server_pid is not None and kill_if_ours(state, state.server_pid, how):
                count(state, f"{SIGNAL_NAMES[how]} serve")
            server_kill_at = None
            state.server_pid = None
            what += " | server killed"
        if mid_edits and now >= edit_at:
            what += " | while running: " + mutate(state, rng.randint(1, 5))
            mid_edits = False
        if now > deadline:
            for r in runs:
                if r.proc.poll() is None:
                    state.broken.append(
                        f"round {number}: {r.name} {' '.join(r.args)} still running after {SETTLE_TIMEOUT:.0f} s"
                    )
                    r.proc.kill()
            break
        time.sleep(0.02)
    for r in runs:
        r.proc.wait()
    seen_ended(runs)
    lines = hook_log(state)  # read once every hook of the round has exited
    for r in runs:
        if r.stem is not None:
            r.out, r.err = Path(f"{r.stem}.out").read_bytes(), Path(f"{r.stem}.err").read_bytes()
            Path(f"{r.stem}.out").unlink()
            Path(f"{r.stem}.err").unlink()
        code = r.proc.returncode
        count(state, r.name)
        out_of_budget = gave_up(lines, r)  # its watchdog ended it at its budget: said in hook.log
        if r.prompt:
            (state.prompts_killed if r.killed or out_of_budget else state.prompts_done).add(r.prompt)
        partial = partial_turn(lines, r, state.turns_partial)
        if partial:
            count(state, "hooks out of time: a partial row")
        if out_of_budget and r.turn and not r.turn.startswith("fixture:"):
            count(state, "hooks out of budget")
            state.turns_killed.add(r.turn)
            continue
        # brain's own: through its main() (not this script's wrapper importing, nor Python's start)
        if r.killed and r.signal != signal.SIGKILL and b"Traceback" in r.err and b"__main__.py" in r.err:
            state.broken.append(
                f"round {number}: {r.name} {' '.join(r.args[:4])} printed a traceback on {SIGNAL_NAMES[r.signal]}: "
                f"{r.err.decode(errors='replace')[-400:]}"
            )
        if r.killed:  # by whatever signal: what it was doing may be lost, nothing else may be
            if r.turn:
                if r.turn.startswith("fixture:"):
                    state.fixtures_fed.setdefault(r.turn, False)
                else:
                    state.turns_killed.add(r.turn)
            continue
        if r.turn:
            if r.turn.startswith("fixture:"):
                state.fixtures_fed[r.turn] = True
            elif r.short or partial:  # out of time: it gave up after the budget, or wrote a partial row
                state.turns_killed.add(r.turn)
            else:
                state.turns_done.add(r.turn)
        if code == 1 and BUSY.search(r.err) and r.name in ("index", "prune", "rebuild", "repair"):
            count(state, f"{r.name} found the index busy")  # one writer at a time: said, and safe
            continue
        if code != 0:
            text = r.err.decode(errors="replace").strip().splitlines()
            # One-line errors a concurrent run may legitimately meet (the index is busy).
            state.broken.append(
                f"round {number}: {r.name} {' '.join(r.args[:6])} exited {code}: {' / '.join(text[-3:])[:400]}"
            )
            continue
        if r.name == "ledger prune" and r.before:
            cut = dt.datetime.strptime(r.before, "%Y-%m-%d %H:%M:%S").timestamp()
            state.pruned_before = max(state.pruned_before, cut)
        if code == 0 and "Traceback" in r.err.decode(errors="replace"):
            state.broken.append(
                f"round {number}: {r.name} printed a traceback: {r.err.decode(errors='replace')[-400:]}"
            )
    kills = sum(r.killed for r in runs)
    print(f"round {number}: {what}; ran {', '.join(sorted({r.name for r in runs}))}; {kills} killed", flush=True)


def upgrade_round(state: State, number: int) -> None:
    """Hooks recording into a brain.db whose upgrade outlasts their budget, at once and some
    killed, with `brain turns` draining what they kept aside (some killed too), while the catch-up
    process a hook starts records them: then every turn of a hook that exited is there once, a
    killed hook's at most once, nothing waits aside and nothing was rejected."""
    sys.path.insert(0, str(ROOT))
    from brain.db import open_db
    from brain.db_migrations import MIGRATIONS

    rng = state.rng
    db = state.work / f"upgrade-{number}" / "brain.db"
    db.parent.mkdir()
    names = [name for name, _ in MIGRATIONS.steps]
    steps, MIGRATIONS.steps = MIGRATIONS.steps, MIGRATIONS.steps[: names.index("m004_turns_partial")]
    try:
        open_db(db).close()  # brain.db as the brain before m004 left it
    finally:
        MIGRATIONS.steps = steps
    env = dict(state.env, BRAIN_DB=str(db))
    hook_env = dict(env, CHAOS_EXTRA=SLOW_UPGRADE, BRAIN_HOOK_BUDGET="1")
    done: set[str] = set()
    killed: set[str] = set()
    runs: list[Run] = []
    for wave in range(rng.randint(1, 3)):
        for _ in range(rng.randint(2, 6)):
            session = str(uuid.UUID(int=rng.getrandbits(128)))
            transcript, key = transcript_turn(state, session, wave)
            run = start(
                state,
                "upgrade hook",
                ["hook", "stop"],
                stdin=hook_payload(session, transcript, state.work),
                env=hook_env,
            )
            run.turn = key
            if rng.random() < 0.25:
                run.kill_at = run.started + rng.uniform(0.1, 1.2)
            runs.append(run)
        if rng.random() < 0.6:
            run = start(state, "upgrade turns", ["turns", "--json", "-n", "1000000"], env=env)
            if rng.random() < 0.3:
                run.kill_at = run.started + rng.uniform(0.1, 1.5)
            runs.append(run)
        time.sleep(rng.uniform(0, 1.0))
    # The catch-up process a hook started (detached, not ours to wait for), killed now and then.
    kill_catch_up = rng.random() < 0.5
    killed_catch_up = False
    deadline = time.monotonic() + SETTLE_TIMEOUT
    while (any(r.proc.poll() is None for r in runs) or kill_catch_up) and time.monotonic() < deadline:
        seen_ended(runs)
        if kill_catch_up:
            for pid, cmd in ours(state):
                if "brain.ledger.catch_up" in cmd and rng.random() < 0.3:
                    with contextlib.suppress(OSError):
                        os.kill(pid, signal.SIGKILL)
                        killed_catch_up = True
                        count(state, "killed catch-up")
            if killed_catch_up or all(r.proc.poll() is not None for r in runs):
                kill_catch_up = False
        for r in runs:
            if r.kill_at is not None and not r.killed and time.monotonic() >= r.kill_at and r.proc.poll() is None:
                r.proc.send_signal(signal.SIGKILL)
                r.killed = True
                count(state, f"killed {r.name}")
        time.sleep(0.02)
    where = f"round {number} (upgrade)"
    for r in runs:
        if r.proc.poll() is None:
            state.broken.append(f"{where}: {r.name} still running after {SETTLE_TIMEOUT:.0f} s")
            r.proc.kill()
        r.proc.wait()
    seen_ended(runs)
    lines = hook_log(state)
    written: set[str] = set()  # the keys of partial rows hooks out of time wrote
    for r in runs:
        count(state, r.name)
        err = Path(f"{r.stem}.err").read_bytes() if r.stem else b""
        partial = partial_turn(lines, r, written)
        if r.turn:  # a hook its watchdog ended (a loaded machine) may have lost its turn, as a killed one
            (killed if r.killed or partial or gave_up(lines, r) else done).add(r.turn)
        if not r.killed and r.proc.returncode != 0:
            state.broken.append(
                f"{where}: {r.name} exited {r.proc.returncode}: {err.decode(errors='replace')[-300:].strip()}"
            )
    # What is left aside: the catch-up process (detached, a minute apart) or this `brain turns`.
    time.sleep(2)
    turns = brain(state, ["turns", "--json", "-n", "1000000"], env=env)
    if turns.returncode != 0:
        state.broken.append(f"{where}: brain turns exited {turns.returncode}: {turns.stderr.decode()[-300:].strip()}")
        return
    rows = json.loads(turns.stdout) if turns.stdout.strip() else []
    seen: dict[str, int] = {}
    for row in rows:
        seen[row.get("turn_key")] = seen.get(row.get("turn_key"), 0) + 1
    if doubled := sorted(k for k, n in seen.items() if n > 1):
        state.broken.append(f"{where}: turns recorded more than once: {doubled[:3]}")
    if lost := sorted(done - seen.keys()):
        state.broken.append(
            f"{where}: {len(lost)} of {len(done)} turns whose hook exited are not in brain turns: {lost[:3]}"
        )
    if unknown := sorted(seen.keys() - done - killed - written):
        state.broken.append(f"{where}: turns nobody fed: {unknown[:3]}")
    aside = db.parent / "brain.db.kept-aside"
    expected = {".lock", ".catching-up"} if killed_catch_up else {".lock"}  # a killed one leaves its marker
    if aside.exists() and (
        left := [str(p.relative_to(aside)) for p in aside.rglob("*") if p.is_file() and p.name not in expected]
    ):
        state.broken.append(f"{where}: files left in {aside.name} after brain turns: {left[:5]}")
    conn = sqlite3.connect(f"file:{db}?mode=ro", uri=True, timeout=30)
    try:
        applied = [r[0] for r in conn.execute("SELECT name FROM _migrations ORDER BY rowid")]
        integrity = [r[0] for r in conn.execute("PRAGMA integrity_check")]
    finally:
        conn.close()
    if applied != [name for name, _ in MIGRATIONS.steps]:
        state.broken.append(f"{where}: migrations applied {applied}")
    if integrity != ["ok"]:
        state.broken.append(f"{where}: integrity_check of brain.db: {integrity[:3]}")
    print(f"  upgrade episode: {len(done)} hooks exited, {len(killed)} killed, {len(seen)} rows", flush=True)


# ----- the checks -------------------------------------------------------------------------


def index_when_free(state: State, extra: list[str]) -> subprocess.CompletedProcess:
    """`brain index`, which waits while the server's watcher holds the vault (one writer at a time)."""
    return brain(state, ["index", "--vault", str(state.vault), "--json", "-q", "--wait", "60", *extra])


def file_hash(path: Path) -> str:
    return hashlib.sha256(path.read_bytes()).hexdigest()


def check(state: State, number: int) -> None:
    where = f"round {number}"
    # The server killed this round comes back first (clients must cope without it meanwhile).
    if state.server_pid is None:
        start_server(state)
    first = index_when_free(state, [])
    if first.returncode != 0:
        state.broken.append(
            f"{where}: brain index after settling exited {first.returncode}: {first.stderr.decode()[-300:].strip()}"
        )
    verify = index_when_free(state, ["--verify"])
    if verify.returncode != 0:
        state.broken.append(
            f"{where}: brain index --verify exited {verify.returncode}: {verify.stderr.decode()[-300:].strip()}"
        )
    else:
        report = json.loads(verify.stdout)
        changed = {
            k: report.get(k)
            for k in ("new", "changed", "removed", "renamed", "embedded", "kept", "restored", "redated")
            if report.get(k)
        }
        if changed:
            state.broken.append(f"{where}: brain index --verify found work after brain index: {changed}")

    # The index's notes are the vault's files, byte for byte.
    sys.path.insert(0, str(ROOT))
    os.environ["BRAIN_HOME"] = str(state.home)
    from brain import config
    from brain.index.store import IndexStore

    directory = config.index_dir(state.vault)
    store = IndexStore.open(directory, create=False)
    try:
        rows = store.note_rows()
    finally:
        store.close()
    on_disk = {str(p.relative_to(state.vault)): file_hash(p) for p in state.vault.rglob("*.md")}
    indexed = {path: row.hash for path, row in rows.items()}
    if on_disk.keys() != indexed.keys():
        missing, extra = sorted(on_disk.keys() - indexed.keys()), sorted(indexed.keys() - on_disk.keys())
        state.broken.append(
            f"{where}: index and vault differ: not indexed {missing[:5]} ({len(missing)}), not in the vault {extra[:5]} ({len(extra)})"
        )
    stale = sorted(p for p in on_disk.keys() & indexed.keys() if on_disk[p] != indexed[p])
    if stale:
        state.broken.append(f"{where}: {len(stale)} notes indexed with other bytes than the vault's: {stale[:5]}")

    for database in (directory / "index.db", state.home / "brain.db"):
        if not database.exists():
            continue
        conn = sqlite3.connect(f"file:{database}?mode=ro", uri=True, timeout=30)
        try:
            result = [r[0] for r in conn.execute("PRAGMA integrity_check")]
        finally:
            conn.close()
        if result != ["ok"]:
            state.broken.append(f"{where}: integrity_check of {database.name}: {result[:3]}")

    check_index_inside(state, where, directory)
    check_server(state, where, len(on_disk))
    check_ledger(state, where)
    check_processes(state, where)
    if len(state.broken) == state.shown:
        print(f"  checks after round {number}: ok ({len(on_disk)} notes)", flush=True)
    show_broken(state)


def show_broken(state: State) -> None:
    for line in state.broken[state.shown :]:
        print(f"  BROKEN {line}", flush=True)
    state.shown = len(state.broken)


def check_index_inside(state: State, where: str, directory: Path) -> None:
    """What the tests check after every step: history agrees with the present, the BM25 indexes
    with their rows, the saved vector files with the database (tests/index_helpers.py)."""
    sys.path.insert(0, str(ROOT / "tests"))
    from index_helpers import assert_faiss_matches, history_problems

    for problem in history_problems(directory / "index.db"):
        state.broken.append(f"{where}: history: {problem}")
    try:
        assert_faiss_matches(directory)
    except (AssertionError, OSError, ValueError) as exc:
        state.broken.append(f"{where}: the vector files do not match index.db: {exc!r}"[:400])
    conn = sqlite3.connect(directory / "index.db", timeout=30)
    try:
        for table in ("chunks_fts", "chunk_history_fts"):
            conn.execute(f"INSERT INTO {table} ({table}, rank) VALUES ('integrity-check', 1)")
    except sqlite3.DatabaseError as exc:
        state.broken.append(f"{where}: FTS5 integrity-check: {exc}")
    finally:
        conn.close()


def _comparable(result: object) -> object:
    if isinstance(result, dict):
        return {k: _comparable(v) for k, v in result.items() if k not in ASK_VOLATILE and not k.endswith("_ms")}
    if isinstance(result, list):
        return [_comparable(v) for v in result]
    return result


def check_server(state: State, where: str, notes: int) -> None:
    deadline = time.monotonic() + 30
    status: dict | None = None
    while time.monotonic() < deadline:  # caught up: it holds no change and has loaded every note
        status = server_status(state)
        watch = (status or {}).get("watch") or {}
        index = (status or {}).get("index") or {}
        if status and status.get("state") == "ready" and not watch.get("busy") and index.get("notes") == notes:
            break
        time.sleep(0.5)
    else:
        state.broken.append(f"{where}: the server did not catch up within 30 s: {json.dumps(status)[:400]}")
        return
    time.sleep(2.5)  # a change of index.db by another process is seen within 2 s
    # The present, and the past at moments between rounds (views of the past a prune may have
    # cut into: the server must drop those it holds, as a process opening the index anew would).
    asks = [(query, []) for query in QUERIES]
    for moment in state.rng.sample(state.moments, min(2, len(state.moments))):
        when = dt.datetime.fromtimestamp(moment).strftime("%Y-%m-%dT%H:%M:%S")
        asks.append((state.rng.choice(QUERIES), ["--as-of", when]))
    for query, past in asks:
        for attempt in range(2):
            served = brain(
                state, ["ask", "--vault", str(state.vault), "--json", "-k", "5", "--no-update", *past, query]
            )
            alone = brain(
                state,
                ["ask", "--vault", str(state.vault), "--json", "-k", "5", "--no-update", "--no-server", *past, query],
            )
            if served.returncode or alone.returncode:
                state.broken.append(
                    f"{where}: ask exited {served.returncode} / {alone.returncode} (--no-server): "
                    f"{(served.stderr or alone.stderr).decode()[-300:].strip()}"
                )
                break
            a, b = _comparable(json.loads(served.stdout)), _comparable(json.loads(alone.stdout))
            if a == b:
                break
            if attempt:
                state.broken.append(
                    f"{where}: ask {' '.join(past)} {query!r} through the server differs from --no-server: {_diff(a, b)}"
                )
            time.sleep(3)
        count(state, "ask compared")


def _diff(a: object, b: object, path: str = "") -> str:
    if isinstance(a, dict) and isinstance(b, dict):
        for k in sorted(set(a) | set(b)):
            if a.get(k) != b.get(k):
                return _diff(a.get(k), b.get(k), f"{path}.{k}")
    if isinstance(a, list) and isinstance(b, list) and len(a) == len(b):
        for i, (x, y) in enumerate(zip(a, b)):
            if x != y:
                return _diff(x, y, f"{path}[{i}]")
    return f"{path or 'result'}: {str(a)[:200]} != {str(b)[:200]}"


def check_ledger(state: State, where: str) -> None:
    time.sleep(1.0)  # a hook's catch-up of rows it kept aside runs detached: give it its seconds
    turns = brain(state, ["turns", "--json", "-n", "1000000"])
    if turns.returncode != 0:
        state.broken.append(f"{where}: brain turns exited {turns.returncode}: {turns.stderr.decode()[-300:].strip()}")
        return
    rows = json.loads(turns.stdout) if turns.stdout.strip() else []
    if isinstance(rows, dict):
        rows = rows.get("turns", [])
    keys = [r.get("turn_key") for r in rows]
    seen: dict[str, int] = {}
    for key in keys:
        seen[key] = seen.get(key, 0) + 1
    doubled = sorted(k for k, n in seen.items() if n > 1)
    if doubled:
        state.broken.append(f"{where}: turns recorded more than once: {doubled[:5]}")
    # A hook writes its row within its budget of being started: 5 s of margin either way.
    pruned = {k for k, t in state.turn_created.items() if t < state.pruned_before - 5}
    maybe_pruned = {k for k, t in state.turn_created.items() if t < state.may_prune_before + 5}
    lost = sorted(state.turns_done - seen.keys() - maybe_pruned)
    if lost:
        state.broken.append(f"{where}: {len(lost)} turns whose hook exited are not in brain turns: {lost[:3]}")
    back = sorted(seen.keys() & pruned)
    fed = state.turns_done | state.turns_killed | state.turns_partial
    unknown = sorted(k for k in seen if k not in fed and not any(k.startswith(s) for s in _fixture_sessions(state)))
    if unknown:
        state.broken.append(f"{where}: turns nobody fed: {unknown[:3]}")
    if back:
        state.broken.append(f"{where}: turns a finished ledger prune dropped are back: {back[:3]}")
    aside = state.home / "brain.db.kept-aside"
    if aside.exists():
        left = [str(p.relative_to(aside)) for p in aside.rglob("*") if p.is_file() and p.name != ".lock"]
        if left:
            state.broken.append(f"{where}: files left in {aside.name}: {left[:5]}")
    count(state, "turns checked", len(seen))
    check_recalls(state, where)


def check_recalls(state: State, where: str) -> None:
    """Every prompt whose hook exited has its one row in recalls; a killed one's at most one."""
    listed = brain(state, ["recalls", "--json", "-n", "1000000"])
    if listed.returncode != 0:
        state.broken.append(
            f"{where}: brain recalls exited {listed.returncode}: {listed.stderr.decode()[-300:].strip()}"
        )
        return
    rows = json.loads(listed.stdout) if listed.stdout.strip() else []
    if isinstance(rows, dict):
        rows = rows.get("recalls", [])
    seen: dict[str, int] = {}
    for row in rows:
        seen[row.get("prompt")] = seen.get(row.get("prompt"), 0) + 1
    if doubled := sorted(k for k, n in seen.items() if n > 1):
        state.broken.append(f"{where}: prompts recorded more than once: {doubled[:3]}")
    maybe_pruned = {k for k, t in state.prompt_created.items() if t < state.may_prune_before + 5}
    if lost := sorted(state.prompts_done - seen.keys() - maybe_pruned):
        state.broken.append(f"{where}: {len(lost)} prompts whose hook exited are not in brain recalls: {lost[:3]}")
    if unknown := sorted(seen.keys() - state.prompts_done - state.prompts_killed):
        state.broken.append(f"{where}: prompts nobody fed: {unknown[:3]}")
    count(state, "prompts checked", len(seen))


def _fixture_sessions(state: State) -> list[str]:
    out = []
    for name in state.fixtures_fed:
        fixture = FIXTURES / name.split(":", 1)[1]
        session = json.loads(fixture.read_text(encoding="utf-8").splitlines()[-1]).get("sessionId") or fixture.stem
        out.append(session + ":")
    return out


def check_processes(state: State, where: str) -> None:
    deadline = time.monotonic() + 30  # a catch-up a hook started may still be finishing
    while True:
        left = [(pid, cmd) for pid, cmd in ours(state) if pid != state.server_pid]
        if not left or time.monotonic() > deadline:
            break
        time.sleep(0.5)
    if left:
        state.broken.append(f"{where}: processes left behind: {left[:3]}")
        for pid, _ in left:
            try:
                os.kill(pid, signal.SIGKILL)
            except OSError:
                pass


# ----- main -------------------------------------------------------------------------------


def main() -> int:
    parser = argparse.ArgumentParser(
        description=__doc__.split("\n\n")[0], formatter_class=argparse.RawDescriptionHelpFormatter
    )
    parser.add_argument("--seed", type=int, default=1)
    parser.add_argument("--rounds", type=int, default=10)
    parser.add_argument("--notes", type=int, default=300, help="notes in the vault at the start")
    parser.add_argument("--work", type=Path, help="work folder (default: a new temporary one)")
    parser.add_argument("--keep", action="store_true", help="keep the work folder")
    parser.add_argument("--upgrades", type=float, default=0.2, help="share of rounds followed by an upgrade episode")
    parser.add_argument(
        "--real-thresholds",
        action="store_true",
        help="keep brain's thresholds for its helper processes (by default lowered to run at this size)",
    )
    args = parser.parse_args()

    work = args.work or Path(tempfile.mkdtemp(prefix=f"brain-chaos-{args.seed}-"))
    work.mkdir(parents=True, exist_ok=True)
    token = uuid.uuid4().hex
    env = {k: v for k, v in os.environ.items() if not k.startswith("BRAIN_")}
    env.update(
        BRAIN_HOME=str(work / "home"),
        BRAIN_EMBED_MODEL="benchfake:384",
        BRAIN_RERANK_MODEL="none",
        HF_HUB_OFFLINE="1",
        PYTHONPATH=os.pathsep.join(p for p in (str(ROOT), os.environ.get("PYTHONPATH")) if p),
        CHAOS_TOKEN=token,
    )
    if not args.real_thresholds:
        env.update(CHAOS_SMALL=SMALL, BRAIN_PARSE_WORKERS="2")
    os.environ.update({k: env[k] for k in ("BRAIN_HOME", "BRAIN_EMBED_MODEL", "BRAIN_RERANK_MODEL")})
    state = State(args.seed, work, work / "vault", work / "home", env, token, random.Random(args.seed))
    state.vault.mkdir(exist_ok=True)
    sessions = [str(uuid.UUID(int=state.rng.getrandbits(128))) for _ in range(6)]
    turn_numbers = dict.fromkeys(sessions, 0)
    started = time.monotonic()
    interrupted = False
    rounds = 0
    try:
        for _ in range(args.notes):
            add_note(state)
        print(f"seed {args.seed}: {args.notes} notes in {state.vault}", flush=True)
        first = brain(state, ["index", "--vault", str(state.vault), "--json", "-q"])
        if first.returncode != 0:
            raise SystemExit(f"the first brain index failed: {first.stderr.decode()[-500:]}")
        start_server(state)
        for number in range(1, args.rounds + 1):
            play_round(state, number, sessions, turn_numbers)
            if state.rng.random() < args.upgrades:
                upgrade_round(state, number)
            # Not after every round: kills pile up on what the last kills left, unmended.
            if number == args.rounds or state.rng.random() < 0.6:
                check(state, number)
            else:
                show_broken(state)
            rounds = number
    except KeyboardInterrupt:
        interrupted = True
    finally:
        if state.server_pid is not None and not interrupted:
            stop_server(state)
        end_everything(state)
        if not interrupted:
            left = ours(state)
            if left:
                state.broken.append(f"after the server stopped: processes left behind: {left[:3]}")
        if not args.keep and not interrupted:
            shutil.rmtree(work, ignore_errors=True)
    show_broken(state)
    kills = sum(n for k, n in state.counts.items() if k.split()[0] in SIGNAL_NAMES.values())
    kinds = ", ".join(f"{k} {n}" for k, n in sorted(state.counts.items()))
    print(f"counts: {kinds}")
    print(
        f"chaos seed {args.seed}: {rounds} rounds, {args.notes} notes, {kills} kills, "
        f"{len(state.turns_done)} turns recorded by hooks that exited, {len(state.turns_killed)} by killed ones, "
        f"{time.monotonic() - started:.0f} s: "
        + (f"{len(state.broken)} promises broken" if state.broken else "nothing broken")
        + (" (interrupted)" if interrupted else "")
        + (f"; work kept in {work}" if args.keep or interrupted else "")
    )
    return 1 if state.broken or interrupted else 0


if __name__ == "__main__":
    sys.exit(main())
