"""Has brain got slower? This checkout's hot paths against an older tree's, interleaved (figures, not tests).

Each figure is taken from one tree and then the other, round after round (old, this, old, this …), so the
machine's load weighs on both alike; the table gives the median of the rounds, old and this, and their ratio,
in CPU time (the figure to read on a shared machine) and wall time:

    startup   whole processes: `brain --help`, `brain status`, a `brain index` with nothing to do
    hooks     whole processes: `brain hook stop` on a generated 50 MB transcript (bench/hook_speed.py's; --size-mb),
              `brain hook prompt` with no server (it records the prompt and exits)
    index     in-process `index_vault` of a copy of the vault from nothing, then after a line is appended to
              10 notes, with a fast fake embedder (a vector seeded by a hash of the text, as bench/scale.py's):
              the model is the same in both trees, brain's own time around it is what is compared
    ask       warm asks in one process per round, as `brain serve` keeps a Recaller open: every query of the
              vault's labelled set asked once to warm it, then ``--asks`` times; p50 and p95 of the asking
              thread's CPU time, over that fake embedder's index (the query's vector cached, as
              bench/ask_profile.py does); each tree's answers digested, to show they hold from round to round

The startup and hooks figures run the brain executable beside this interpreter with PYTHONPATH set to each
tree; the trees' own indexes (fake embedder) are built under a temporary BRAIN_HOME per tree.

    git archive 25ef689 | tar -x -C /tmp/old-tree
    python bench/tree_speed.py --old /tmp/old-tree [--rounds 6] [--only startup,hooks,index,ask]

``--max-ratio R`` exits 1 when a CPU figure of this checkout is over R times the old tree's.
"""

from __future__ import annotations

import argparse
import hashlib
import json
import os
import resource
import shutil
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
DEFAULT_VAULT = ROOT.parent / "shared" / "bench" / "vaults" / "13th-age-srd"
DEFAULT_QUERIES = ROOT / "bench" / "realvault" / "13th-age-srd.queries.jsonl"
SECTIONS = ("startup", "hooks", "index", "ask")
FAKE = "benchfake:384"


class FakeEmbedder:
    """Deterministic unit vectors seeded by a hash of the text (bench/scale.py's, here so that a child
    process imports nothing of this checkout but brain from the tree it measures)."""

    def __init__(self, name: str = FAKE):
        self.name, self.dim = name, 384
        self.query_prefix = self.passage_prefix = ""
        self._queries: dict[str, object] = {}

    def _vectors(self, texts):
        import numpy as np

        out = np.empty((len(texts), self.dim), dtype=np.float32)
        for i, text in enumerate(texts):
            digest = hashlib.blake2b(text.encode("utf-8", "surrogatepass"), digest_size=8).digest()
            out[i] = np.random.default_rng(int.from_bytes(digest, "little")).standard_normal(self.dim, dtype=np.float32)
        out /= np.linalg.norm(out, axis=1, keepdims=True)
        return out

    def embed_documents(self, texts, *, progress: bool = False):
        return self._vectors(list(texts))

    def embed_query(self, text: str):
        if text not in self._queries:
            self._queries[text] = self._vectors([text])[0]
        return self._queries[text]


def _cpu() -> float:
    own, children = resource.getrusage(resource.RUSAGE_SELF), resource.getrusage(resource.RUSAGE_CHILDREN)
    return own.ru_utime + own.ru_stime + children.ru_utime + children.ru_stime


# ----- the children: one tree each, brain imported from PYTHONPATH --------------------------------------


def child_index(vault: Path, work: Path) -> dict:
    import brain
    from brain.embed import register_embedder
    from brain.index.indexer import index_vault

    register_embedder("benchfake", FakeEmbedder)
    copy = work / "vault"
    shutil.copytree(vault, copy)
    os.environ["BRAIN_HOME"] = str(work / "home")
    out: dict = {"brain": brain.__file__}
    for phase in ("index from nothing", "index after 10 notes changed"):
        if phase != "index from nothing":
            notes = sorted(copy.rglob("*.md"))
            for note in notes[:: max(1, len(notes) // 10)][:10]:
                with open(note, "a", encoding="utf-8") as f:
                    f.write("\nA line appended for the bench.\n")
        cpu, wall = _cpu(), time.perf_counter()
        index_vault(copy, embedder=FakeEmbedder(), progress=False)
        out[phase] = {"cpu": _cpu() - cpu, "wall": time.perf_counter() - wall}
    return out


def child_ask(vault: Path, queries_file: Path, asks: int) -> dict:
    import brain
    from brain.embed import register_embedder
    from brain.index.indexer import index_vault
    from brain.recall.opening import open_recaller
    from brain.recall.types import DEFAULT_MODE

    register_embedder("benchfake", FakeEmbedder)
    index_vault(vault, embedder=FakeEmbedder(), progress=False)  # nothing to do after the first round
    with open(queries_file, encoding="utf-8") as f:
        queries = [json.loads(line)["query"] for line in f if line.strip()]
    recaller = open_recaller(vault, update=False, progress=False, rerank_model=None, embedder=FakeEmbedder())
    try:
        answers = []
        for query in queries:
            result = recaller.ask(query, DEFAULT_MODE)
            answers.append([[c.path, repr(float(c.score))] for c in result.results])
        cpu, wall = [], []
        for _ in range(asks):
            for query in queries:
                started, started_wall = time.thread_time(), time.perf_counter()
                recaller.ask(query, DEFAULT_MODE)
                cpu.append(time.thread_time() - started)
                wall.append(time.perf_counter() - started_wall)
    finally:
        recaller.close()
    digest = hashlib.sha1(json.dumps(answers).encode()).hexdigest()[:12]
    return {"brain": brain.__file__, "cpu": cpu, "wall": wall, "digest": digest}


# ----- the parent ----------------------------------------------------------------------------------------


def pct(values: list[float], q: float) -> float:
    ordered = sorted(values)
    return ordered[min(len(ordered) - 1, max(0, round(q / 100 * (len(ordered) - 1))))]


def run(argv: list[str], env: dict[str, str], stdin: bytes = b"") -> tuple[float, float, bytes]:
    """(CPU seconds, wall seconds, stdout) of one whole process."""
    cpu, wall = _cpu(), time.perf_counter()
    proc = subprocess.run(argv, input=stdin, env=env, capture_output=True, timeout=900)
    seconds = time.perf_counter() - wall
    if proc.returncode != 0:
        sys.exit(f"{' '.join(argv[:4])} failed (exit {proc.returncode}): {proc.stderr.decode()[-600:]}")
    return _cpu() - cpu, seconds, proc.stdout


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--old", type=Path, help="the older tree (a checkout or `git archive` of one)")
    parser.add_argument("--vault", type=Path, default=DEFAULT_VAULT)
    parser.add_argument("--queries", type=Path, default=DEFAULT_QUERIES, help="labelled set (JSONL, .query)")
    parser.add_argument("--rounds", type=int, default=6)
    parser.add_argument("--asks", type=int, default=2, help="timed asks of each query per round")
    parser.add_argument("--size-mb", type=float, default=50.0, help="the Stop hook's transcript")
    parser.add_argument("--only", default=",".join(SECTIONS), help=f"comma-separated of {', '.join(SECTIONS)}")
    parser.add_argument("--max-ratio", type=float, help="exit 1 if a CPU figure is over this times the old's")
    parser.add_argument("--child", choices=("index", "ask"), help=argparse.SUPPRESS)
    parser.add_argument("--work", type=Path, help=argparse.SUPPRESS)
    args = parser.parse_args(argv)
    if args.child:  # one measurement in the tree of PYTHONPATH, its figures as JSON on stdout
        if args.child == "index":
            out = child_index(args.vault, args.work)
        else:
            out = child_ask(args.vault, args.queries, args.asks)
        print(json.dumps(out))
        return 0
    if args.old is None or not (args.old / "brain" / "__init__.py").is_file():
        parser.error("--old must be a tree holding brain/ (git archive <commit> | tar -x -C DIR)")
    if not args.vault.is_dir():
        print(f"skipped: no vault at {args.vault}")
        return 0
    sections = [s for s in args.only.split(",") if s]
    if unknown := [s for s in sections if s not in SECTIONS]:
        parser.error(f"no section {', '.join(unknown)}: the sections are {', '.join(SECTIONS)}")
    trees = {"old": args.old.resolve(), "this": ROOT.resolve()}
    brain_exe = Path(sys.executable).parent / "brain"
    exe = [str(brain_exe)] if brain_exe.is_file() else [sys.executable, "-m", "brain"]
    # figure -> tree -> (cpu, wall) per round
    figures: dict[str, dict[str, list[tuple[float, float]]]] = {}
    digests: dict[str, set[str]] = {t: set() for t in trees}

    def note(figure: str, tree: str, cpu: float, wall: float) -> None:
        figures.setdefault(figure, {t: [] for t in trees})[tree].append((cpu, wall))

    with tempfile.TemporaryDirectory(prefix="brain-tree-speed-") as tmp:
        work = Path(tmp)
        transcript = work / "transcript.jsonl"
        if "hooks" in sections:
            sys.path.insert(0, str(ROOT / "bench"))
            import hook_speed  # its transcript: many turns with large tool results

            hook_speed.write_transcript(transcript, args.size_mb)
        base = {k: v for k, v in os.environ.items() if k not in ("BRAIN_DB", "PYTHONDONTWRITEBYTECODE")}
        base.update(HF_HUB_OFFLINE="1", BRAIN_RERANK_MODEL="none", BRAIN_VAULT=str(args.vault))

        def env(tree: str, home: str) -> dict[str, str]:
            return {**base, "PYTHONPATH": str(trees[tree]), "BRAIN_HOME": str(work / f"{home}-{tree}")}

        stop = {"session_id": "s", "transcript_path": str(transcript), "cwd": tmp, "hook_event_name": "Stop"}
        prompt = {
            "session_id": "p",
            "transcript_path": str(work / "none.jsonl"),
            "cwd": tmp,
            "hook_event_name": "UserPromptSubmit",
            "prompt": "how does the escalation die work",
        }
        fake = {"BRAIN_EMBED_MODEL": FAKE}
        commands = {
            "startup": {
                "brain --help": lambda t: ([*exe, "--help"], env(t, "home"), b""),
                "brain status": lambda t: ([*exe, "status"], {**env(t, "home"), **fake}, b""),
                "brain index (nothing to do)": lambda t: ([*exe, "index"], {**env(t, "home"), **fake}, b""),
            },
            "hooks": {
                f"hook stop ({args.size_mb:g} MB transcript)": lambda t: (
                    [*exe, "hook", "stop"],
                    env(t, "hook"),
                    json.dumps({**stop, "stop_hook_active": False}).encode(),
                ),
                "hook prompt (no server)": lambda t: (
                    [*exe, "hook", "prompt"],
                    env(t, "home"),
                    json.dumps(prompt).encode(),
                ),
            },
        }
        me = [sys.executable, str(Path(__file__).resolve()), "--vault", str(args.vault)]
        print(f"old: {trees['old']}  this: {ROOT}  vault: {args.vault}  rounds: {args.rounds}", flush=True)
        for rnd in range(args.rounds + 1):  # round 0 warms: page cache, .pyc files, each tree's index
            for tree in trees:
                if "ask" in sections or ("startup" in sections and not rnd):
                    cmd = [
                        *me,
                        "--child",
                        "ask",
                        "--queries",
                        str(args.queries),
                        "--asks",
                        str(args.asks if rnd else 0),
                    ]
                    cpu, wall, out = run(cmd, env(tree, "home"))
                    if rnd and "ask" in sections:
                        got = json.loads(out)
                        assert trees[tree] in Path(got["brain"]).resolve().parents, (tree, got["brain"])
                        digests[tree].add(got["digest"])
                        for q in (50, 95):
                            note(f"warm ask p{q} (per ask)", tree, pct(got["cpu"], q), pct(got["wall"], q))
                for section in ("startup", "hooks"):
                    if section in sections:
                        for figure, make in commands[section].items():
                            cpu, wall, _ = run(*make(tree))
                            if rnd:
                                note(figure, tree, cpu, wall)
                if "index" in sections and rnd:
                    folder = work / f"index-{tree}-{rnd}"
                    folder.mkdir()
                    got = json.loads(run([*me, "--child", "index", "--work", str(folder)], env(tree, "home"))[2])
                    shutil.rmtree(folder)
                    for phase in ("index from nothing", "index after 10 notes changed"):
                        note(phase, tree, got[phase]["cpu"], got[phase]["wall"])
            print(f"round {rnd} done" if rnd else "warmed", flush=True)

    worst = 0.0
    print(
        f"\n{'figure (median of rounds)':32}{'old CPU':>10}{'this CPU':>10}{'ratio':>7}{'old wall':>10}{'this wall':>10}{'ratio':>7}"
    )
    for figure, by_tree in figures.items():
        o_cpu, n_cpu = (statistics.median(c for c, _ in by_tree[t]) for t in ("old", "this"))
        o_wall, n_wall = (statistics.median(w for _, w in by_tree[t]) for t in ("old", "this"))
        worst = max(worst, n_cpu / o_cpu)
        print(
            f"{figure:32}{o_cpu * 1000:8.1f}ms{n_cpu * 1000:8.1f}ms{n_cpu / o_cpu:7.2f}"
            f"{o_wall * 1000:8.0f}ms{n_wall * 1000:8.0f}ms{n_wall / o_wall:7.2f}"
        )
    if "ask" in sections:
        print(
            f"answers' digest per tree (one per tree: the same every round): old {digests['old']}, this {digests['this']}"
        )
    load = os.getloadavg()[0]
    print(f"load average {load:.1f} on {os.cpu_count()} cores")
    if args.max_ratio is not None and worst > args.max_ratio:
        print(f"a CPU figure is {worst:.2f} times the old tree's, over --max-ratio {args.max_ratio}")
        return 1
    return 0


if __name__ == "__main__":
    sys.exit(main())
