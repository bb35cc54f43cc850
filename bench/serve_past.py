"""`brain ask --as-of` cold in-process against a warm `brain serve`, and what a view of the past
costs the server's memory (figures, not asserted).

A vault with history: a copy of a real vault (default the 13th Age SRD) or, with ``--notes N``, a
generated one (bench/scale.py's), indexed, then ``--rounds`` rounds of random edits to
``--share`` of its notes (bench/history.py's: a paragraph added, a line rewritten, a link added
or removed), each round indexed and kept as a version. Then, each a whole `brain` process:

    cold        `brain ask --as-of M --no-server --json` (the model, the index and the view of the
                past opened in the process, every time), and the same question without --as-of
    served      `brain serve --detach`, then `brain ask --as-of M --json` through it: the first
                question opens the view (on the server's snapshot), the next ones about M find it
                warm; then a second moment, M2 (a second view); the server's RSS before, after
                each view opened, and after it let them go (BRAIN_SERVE_PAST_IDLE)

    python bench/serve_past.py                                   # MiniLM ($BRAIN_EMBED_MODEL), 13th Age SRD
    python bench/serve_past.py --model benchfake:384 --notes 20000 --runs 2   # memory at scale

The vault, its index and its moments stay in ``--work`` (kept.json): ``--reuse`` measures them
again (another version of brain, the same history) without building them, and
bench/past_view_parts.py lists what a view of them holds.
"""

from __future__ import annotations

import argparse
import datetime as dt
import json
import os
import shutil
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path

HERE = Path(__file__).resolve().parent
ROOT = HERE.parent
DEFAULT_VAULT = ROOT.parent / "shared" / "bench" / "vaults" / "13th-age-srd"
QUERIES = [
    "how does the escalation die work",
    "what does a fighter gain at level 5",
    "rules for resting and recoveries",
]
IDLE = 20  # BRAIN_SERVE_PAST_IDLE for the server measured: its views go this long after the last question

# A `brain` process that knows bench/scale.py's fast fake embedder (benchfake:384).
LAUNCH = (
    "import sys; sys.path.insert(0, {here!r}); from scale import _register; _register(); "
    "from brain.__main__ import main; sys.argv = ['brain'] + sys.argv[1:]; main()"
)


def brain(args: list[str], env: dict[str, str]) -> tuple[float, subprocess.CompletedProcess]:
    command = [sys.executable, "-c", LAUNCH.format(here=str(HERE)), *args]
    started = time.perf_counter()
    proc = subprocess.run(command, env=env, capture_output=True, timeout=3600)
    elapsed = time.perf_counter() - started
    if proc.returncode != 0:
        raise SystemExit(f"brain {' '.join(args)} failed:\n{proc.stderr.decode()[-3000:]}")
    return elapsed, proc


def rss_mb(pid: int) -> dict[str, float]:
    """The process's resident memory: all of it, its own (anonymous: what a view allocates), and
    the file-backed pages it maps (the FAISS base, SQLite's memory map of index.db)."""
    fields = {}
    for line in Path(f"/proc/{pid}/status").read_text().splitlines():
        key, _, value = line.partition(":")
        if key in ("VmRSS", "RssAnon", "RssFile"):
            fields[key] = round(int(value.split()[0]) / 1024, 1)
    return {"rss": fields["VmRSS"], "anon": fields["RssAnon"], "file": fields["RssFile"]}


def _mem(m: dict[str, float]) -> str:
    return f"{m['rss']} MB ({m['anon']} anonymous, {m['file']} file-backed)"


def load() -> str:
    one, five, _ = os.getloadavg()
    return f"load {one:.1f} (1 min), {five:.1f} (5 min) on {os.cpu_count()} cores"


def moment_text(moment: float) -> str:
    return dt.datetime.fromtimestamp(moment).isoformat(timespec="seconds")


def make_vault(args: argparse.Namespace, vault: Path, env: dict[str, str]) -> list[float]:
    """The vault indexed, edited and indexed ``args.rounds`` times; the moment after each index."""
    sys.path.insert(0, str(HERE))
    from history import apply_edit, plan_edits

    shutil.rmtree(vault, ignore_errors=True)
    if args.notes:
        from scale import generate

        generate(vault, args.notes)
    else:
        shutil.copytree(args.vault, vault)
    moments = []
    seconds, _ = brain(["index", "--vault", str(vault), "-q"], env)
    print(f"first index: {seconds:.1f} s", flush=True)
    vocabulary = sorted({w for p in list(vault.rglob("*.md"))[:200] for w in p.read_text(errors="replace").split()})
    stems = sorted(p.stem for p in vault.rglob("*.md"))
    for number, edits in enumerate(plan_edits(vault, args.rounds, args.share, seed=7), 1):
        time.sleep(1.1)  # moments to the second apart, as --as-of is typed
        moments.append(time.time())
        time.sleep(1.1)
        for path, kind, seed in edits:
            apply_edit(vault, path, kind, seed, vocabulary, stems)
        seconds, _ = brain(["index", "--vault", str(vault), "-q"], env)
        print(f"round {number}: {len(edits)} notes edited, indexed in {seconds:.1f} s", flush=True)
    return moments


def _kept_env(env: dict[str, str]) -> dict[str, str]:
    return {k: v for k, v in env.items() if k.startswith("BRAIN_") or k in ("HF_HUB_OFFLINE", "PYTHONPATH")}


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--vault", type=Path, default=DEFAULT_VAULT)
    parser.add_argument("--notes", type=int, default=0, help="a generated vault of N notes instead (bench/scale.py)")
    parser.add_argument("--rounds", type=int, default=4)
    parser.add_argument("--share", type=float, default=0.05)
    parser.add_argument("--runs", type=int, default=3, help="cold in-process asks, and warm asks through the server")
    parser.add_argument("--model", help="BRAIN_EMBED_MODEL (default: as set, else benchfake:384)")
    parser.add_argument("--work", type=Path, default=Path(tempfile.gettempdir()) / "brain-serve-past")
    parser.add_argument(
        "--reuse",
        action="store_true",
        help="measure the vault and index an earlier run left in --work (its kept.json) rather than build them again",
    )
    args = parser.parse_args()
    work = args.work
    vault = work / (f"generated-{args.notes}" if args.notes else args.vault.name)
    home = work / "home"
    kept_file = work / "kept.json"
    kept = json.loads(kept_file.read_text()) if args.reuse else None
    if kept is not None and Path(kept["vault"]) != vault:
        raise SystemExit(f"{kept_file} is of {kept['vault']}, not {vault}")
    if kept is None:
        shutil.rmtree(home, ignore_errors=True)
    env = dict(os.environ, BRAIN_HOME=str(home), PYTHONPATH=str(ROOT), HF_HUB_OFFLINE="1")
    env["BRAIN_EMBED_MODEL"] = args.model or env.get("BRAIN_EMBED_MODEL") or "benchfake:384"
    env.update(BRAIN_VERSION_INTERVAL="0", BRAIN_SERVE_PAST_IDLE=str(IDLE), BRAIN_RERANK_MODEL="none")
    env.pop("BRAIN_VAULT", None)
    sys.path.insert(0, str(ROOT))
    os.environ["BRAIN_HOME"] = env["BRAIN_HOME"]
    print(f"vault: {vault.name}; model: {env['BRAIN_EMBED_MODEL']}; {load()}", flush=True)
    if kept is None:
        moments = make_vault(args, vault, env)
        # what bench/past_view_parts.py and a later --reuse measure again
        kept_file.write_text(json.dumps({"vault": str(vault), "moments": moments, "env": _kept_env(env)}))
    else:
        moments = kept["moments"]
    status = json.loads(brain(["status", "--vault", str(vault), "--json"], env)[1].stdout)
    history = status["history"]
    print(
        f"index: {status['notes']} notes, {status['chunks']} chunks; history: {history['past_versions']} past "
        f"versions, {history['past_chunks']} past chunks",
        flush=True,
    )
    mid, first = moment_text(moments[len(moments) // 2]), moment_text(moments[0])
    ask = ["ask", "--vault", str(vault), "--json"]
    result: dict = {"notes": status["notes"], "chunks": status["chunks"], "model": env["BRAIN_EMBED_MODEL"]}

    cold = [brain([*ask, "--no-server", "--as-of", mid, QUERIES[i % 3]], env)[0] for i in range(args.runs)]
    present = brain([*ask, "--no-server", QUERIES[0]], env)[0]
    result["cold_as_of_s"] = [round(s, 2) for s in cold]
    result["cold_present_s"] = round(present, 2)

    from brain.server import client

    brain(["serve", "--vault", str(vault), "--detach"], env)
    root = vault.resolve()
    try:
        server = client.status(root, timeout=5)
        assert server and server["state"] == "ready", server
        pid = server["pid"]
        result["rss_before_mb"] = rss_mb(pid)
        first_ask = brain([*ask, "--as-of", mid, QUERIES[0]], env)[0]
        result["rss_one_view_mb"] = rss_mb(pid)
        warm = [brain([*ask, "--as-of", mid, QUERIES[(i + 1) % 3]], env)[0] for i in range(args.runs)]
        served_present = brain([*ask, QUERIES[0]], env)[0]
        second_view = brain([*ask, "--as-of", first, QUERIES[0]], env)[0]
        result["rss_two_views_mb"] = rss_mb(pid)
        server = client.status(root, timeout=5) or {}
        result["views_opened"] = server.get("past", {}).get("opened")
        result["served_first_s"] = round(first_ask, 2)
        result["served_warm_s"] = [round(s, 2) for s in warm]
        result["served_present_s"] = round(served_present, 2)
        result["served_second_moment_first_s"] = round(second_view, 2)
        time.sleep(IDLE + 2 + min(30, IDLE))  # unasked past BRAIN_SERVE_PAST_IDLE: the views go
        server = client.status(root, timeout=5) or {}
        result["views_left"] = len(server.get("past", {}).get("views", []))
        result["rss_after_let_go_mb"] = rss_mb(pid)
    finally:
        brain(["serve", "--vault", str(vault), "--stop"], env)
    result["load"] = load()
    print(json.dumps(result))
    print(
        f"\n{result['notes']:,} notes, {result['chunks']:,} chunks, {env['BRAIN_EMBED_MODEL']}; {result['load']}\n"
        f"  brain ask --as-of, cold in-process (--no-server): {', '.join(f'{s:.2f}' for s in cold)} s "
        f"(median {statistics.median(cold):.2f} s; the present, cold: {present:.2f} s)\n"
        f"  through brain serve: first ask {first_ask:.2f} s (opens the view), then "
        f"{', '.join(f'{s:.2f}' for s in warm)} s (median {statistics.median(warm):.2f} s; the present: "
        f"{served_present:.2f} s); another moment, first ask {second_view:.2f} s\n"
        f"  server memory: {_mem(result['rss_before_mb'])}\n    one view: {_mem(result['rss_one_view_mb'])}\n"
        f"    two views: {_mem(result['rss_two_views_mb'])}\n"
        f"    after letting them go: {_mem(result['rss_after_let_go_mb'])}\n"
        f"  ({result['views_opened']} views opened, {result['views_left']} left)"
    )


if __name__ == "__main__":
    main()
