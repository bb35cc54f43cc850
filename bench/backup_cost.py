"""What copying an index database costs while a writer commits, three ways: `brain backup`'s
(SQLite's backup API in steps inside one read transaction, ``backup.copy_database``), ``VACUUM
INTO`` (one statement, one read transaction) and a plain file copy of ``index.db`` then its WAL
(what `cp -r` of the brain home does).

The index given (``--index``, an ``index.db`` no brain process has open: bench/scale.py's 100,000
notes, or any) is copied once into ``--dir``; each measure starts from that copy. A writer process
commits into it throughout, every few milliseconds, in WAL mode as brain's writers (SQLite's
automatic checkpoints folding the WAL into index.db as they go): a 20 KB row a commit under a
random key, at the end of the file; with ``--writes chunks`` (an index of brain's schema) each
commit also deletes 5 random chunks and writes them again, as a pass rewriting notes does (rows,
and through the triggers BM25's pages, changed all over the file). Each way runs ``--runs``
times, each in a process of its own:

    wall and CPU seconds, seconds per GB, the copy's peak RSS, the copy's size
    the writer's commits during the copy against those outside it (p50, p99, max): its stall
    the WAL's largest size during the copy (a reader holding one snapshot keeps it from being
    folded back to its start)
    whether the copy passes ``PRAGMA quick_check`` (a torn copy does not) and holds every
    writer row committed before the copy began

With ``--restore``, what the copy costs when it is used: `brain backup` leaves the FAISS files
out (made again from the vectors index.db holds), so the first search over a restored index
builds them; the copy of the last run, put in a brain home of its own, is opened (its migrations,
an older brain's index) and its FAISS index built and saved (seconds, peak RSS), in a process of
its own, then loaded again from what was saved.

    python bench/backup_cost.py --index /tmp/scale/home/vaults/generated-100000-*/index.db --dir /tmp/bk
    python bench/backup_cost.py --index ... --dir /tmp/bk --ways cp,backup --writes chunks
    python bench/backup_cost.py --index ... --dir /tmp/bk --ways cp --cp-rate 100   # cp to a USB disk

The machine it ran on may be shared: the load average is printed with the figures.
"""

from __future__ import annotations

import argparse
import json
import os
import resource
import shutil
import sqlite3
import statistics
import subprocess
import sys
import threading
import time
from pathlib import Path

HERE = Path(__file__).resolve().parent
ROOT = HERE.parent
WAYS = ("backup", "vacuum", "cp")

WRITER = """
import json, sqlite3, sys, time
db = sqlite3.connect(sys.argv[1], isolation_level=None, timeout=30)
db.execute("PRAGMA journal_mode=WAL"); db.execute("PRAGMA synchronous=NORMAL")
db.execute("CREATE TABLE IF NOT EXISTS bench_probe (n INTEGER, at REAL, k BLOB, pad BLOB)")
db.execute("CREATE INDEX IF NOT EXISTS bench_probe_k ON bench_probe (k)")
stop, out = sys.argv[2], sys.argv[3]
import os
n, rows = 0, []
while not os.path.exists(stop):
    began = time.time()
    db.execute("BEGIN IMMEDIATE")
    db.execute("INSERT INTO bench_probe VALUES (?, ?, randomblob(16), randomblob(20000))", (n, began))
    if sys.argv[4] == "chunks":  # a pass rewriting notes' chunks: rows and BM25 pages all over the file
        for (chunk,) in db.execute("SELECT id FROM chunks ORDER BY random() LIMIT 5").fetchall():
            db.execute(
                "INSERT INTO chunks (note_id, ordinal, heading, text, vector)"
                " SELECT note_id, ordinal, heading, text, vector FROM chunks WHERE id = ?",
                (chunk,),
            )
            db.execute("DELETE FROM chunks WHERE id = ?", (chunk,))
    db.execute("COMMIT")
    rows.append((began, time.time() - began))
    n += 1
    time.sleep(0.003)
open(out, "w").write(json.dumps(rows))
"""


RESTORED = """
import json, resource, sys, time
from pathlib import Path
sys.path.insert(0, sys.argv[2])
from brain.index.store import IndexStore
from brain.index.vectors import load_current
store = IndexStore.open(Path(sys.argv[1]))  # an older brain's index: migrated here, as on restore
began = time.perf_counter()
built = load_current(store, int(sys.argv[3]))
seconds = time.perf_counter() - began
again = time.perf_counter()
load_current(store, built.dim)
print(json.dumps({"seconds": seconds, "kind": built.kind, "again": time.perf_counter() - again,
                  "peak_rss_mb": resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 1024}))
"""


def restored(work: Path, dim: int) -> dict:
    """The FAISS index of the last `brain backup` copy built in a brain home of its own."""
    home = work / "restored-home"
    shutil.rmtree(home, ignore_errors=True)
    folder = home / "vaults" / "restored-0123456789"
    folder.mkdir(parents=True)
    shutil.copyfile(work / "copy-backup.db", folder / "index.db")
    out = subprocess.run(
        [sys.executable, "-c", RESTORED, str(folder), str(ROOT), str(dim)],
        capture_output=True,
        text=True,
        check=True,
        env={**os.environ, "BRAIN_HOME": str(home)},
    )
    return json.loads(out.stdout.strip().splitlines()[-1])


def one(way: str, source: Path, target: Path, rate: float) -> dict:
    """One copy in this process: its figures. ``rate``: the plain copy's MB/s at most (0: as fast
    as it goes), a slower disk's (a USB stick's, a network share's)."""
    sys.path.insert(0, str(ROOT))
    began, cpu = time.perf_counter(), time.process_time()
    started = time.time()
    if way == "backup":
        from brain.backup import copy_database

        copy_database(source, target)
    elif way == "vacuum":
        db = sqlite3.connect(f"{source.resolve().as_uri()}?mode=ro", uri=True, isolation_level=None)
        db.execute("VACUUM INTO ?", (str(target),))
        db.close()
    else:  # what cp -r does: each file as it is on the disk, one after the other
        for suffix in ("", "-wal"):
            if Path(str(source) + suffix).exists():
                _copy_file(Path(str(source) + suffix), Path(str(target) + suffix), rate)
    return {
        "started": started,
        "ended": time.time(),
        "seconds": time.perf_counter() - began,
        "cpu": time.process_time() - cpu,
        "peak_rss_mb": resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 1024,
    }


def _copy_file(source: Path, target: Path, rate: float) -> None:
    began, done = time.perf_counter(), 0
    with source.open("rb") as read, target.open("wb") as write:
        while block := read.read(8 << 20):
            write.write(block)
            done += len(block)
            if rate:
                time.sleep(max(0.0, done / (rate * 1e6) - (time.perf_counter() - began)))


def _check(target: Path, before: float) -> tuple[str, bool]:
    db = sqlite3.connect(f"{target.resolve().as_uri()}?mode=ro", uri=True)
    try:
        verdict = str(db.execute("PRAGMA quick_check(1)").fetchone()[0])
        if verdict != "ok":
            return verdict[:80], False
        # every row committed before the copy began is in it
        missing = db.execute("SELECT count(*) FROM bench_probe WHERE at < ?", (before - 1.0,)).fetchone()[0]
        total = db.execute("SELECT max(n) FROM bench_probe WHERE at < ?", (before - 1.0,)).fetchone()[0]
        return "ok", total is None or missing == total + 1
    except sqlite3.DatabaseError as exc:
        return str(exc)[:80], False
    finally:
        db.close()


def _poll_wal(path: Path, stop: threading.Event, peak: list[int]) -> None:
    while not stop.is_set():
        try:
            peak[0] = max(peak[0], path.stat().st_size)
        except OSError:
            pass
        time.sleep(0.01)


def measure(way: str, work: Path, base: Path, rate: float, writes: str) -> dict:
    source = work / "index.db"
    for suffix in ("", "-wal", "-shm"):
        Path(str(source) + suffix).unlink(missing_ok=True)
    shutil.copyfile(base, source)
    target = work / f"copy-{way}.db"
    for suffix in ("", "-wal", "-shm", "-journal"):
        Path(str(target) + suffix).unlink(missing_ok=True)
    stop, rows_file = work / "stop", work / "writer-rows"
    stop.unlink(missing_ok=True)
    writer = subprocess.Popen([sys.executable, "-c", WRITER, str(source), str(stop), str(rows_file), writes])
    time.sleep(2.0)  # the writer under way, its WAL checkpointed a few times
    peak, done = [0], threading.Event()
    poll = threading.Thread(target=_poll_wal, args=(Path(str(source) + "-wal"), done, peak), daemon=True)
    poll.start()
    out = subprocess.run(
        [sys.executable, __file__, "--one", way, str(source), str(target), str(rate)],
        capture_output=True,
        text=True,
        check=True,
    )
    done.set()
    time.sleep(1.0)
    stop.touch()
    writer.wait(60)
    figures = json.loads(out.stdout)
    rows = json.loads(rows_file.read_text())
    inside = sorted(lat for at, lat in rows if figures["started"] <= at <= figures["ended"])
    outside = sorted(lat for at, lat in rows if not figures["started"] <= at <= figures["ended"])
    verdict, complete = _check(target, figures["started"])
    size = os.path.getsize(target)
    return {
        **figures,
        "gb": os.path.getsize(base) / 1e9,
        "copy_mb": size / 1e6,
        "wal_peak_mb": peak[0] / 1e6,
        "commits_during": len(inside),
        "commit_ms_during": _quantiles(inside),
        "commit_ms_outside": _quantiles(outside),
        "quick_check": verdict,
        "holds_earlier_rows": complete,
    }


def _quantiles(latencies: list[float]) -> dict:
    if not latencies:
        return {}
    ms = [x * 1000 for x in latencies]
    return {
        "p50": round(statistics.median(ms), 2),
        "p99": round(ms[min(len(ms) - 1, int(len(ms) * 0.99))], 2),
        "max": round(ms[-1], 2),
    }


def main() -> None:
    if len(sys.argv) == 6 and sys.argv[1] == "--one":
        print(json.dumps(one(sys.argv[2], Path(sys.argv[3]), Path(sys.argv[4]), float(sys.argv[5]))))
        return
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--index", type=Path, required=True, help="an index.db no process has open")
    parser.add_argument("--dir", type=Path, required=True, help="a work folder (twice the index's size free)")
    parser.add_argument("--ways", default=",".join(WAYS))
    parser.add_argument("--runs", type=int, default=3)
    parser.add_argument(
        "--writes",
        choices=("rows", "chunks"),
        default="rows",
        help="rows: a row a commit at the end of the file; chunks: also 5 chunks deleted and written again",
    )
    parser.add_argument("--restore", action="store_true", help="then build the FAISS index of the copy")
    parser.add_argument("--dim", type=int, default=384, help="the index's vector size (bench/scale.py's: 384)")
    parser.add_argument("--cp-rate", type=float, default=0.0, help="the plain copy's MB/s at most (0: unbounded)")
    args = parser.parse_args()
    args.dir.mkdir(parents=True, exist_ok=True)
    base = args.dir / "base.db"
    if not base.exists() or base.stat().st_size != args.index.stat().st_size:
        shutil.copyfile(args.index, base)
    print(f"index {args.index} ({base.stat().st_size / 1e9:.2f} GB); load average {os.getloadavg()[0]:.2f}")
    results: dict[str, list[dict]] = {}
    for run in range(args.runs):
        for way in args.ways.split(","):
            r = measure(way, args.dir, base, args.cp_rate, args.writes)
            results.setdefault(way, []).append(r)
            print(
                f"{way:<7} run {run + 1}: {r['seconds']:.2f} s ({r['seconds'] / r['gb']:.2f} s/GB, CPU {r['cpu']:.2f} s), "
                f"peak RSS {r['peak_rss_mb']:.0f} MB, copy {r['copy_mb']:.0f} MB, WAL peak {r['wal_peak_mb']:.1f} MB; "
                f"writer: {r['commits_during']} commits during, ms {r['commit_ms_during']} (outside {r['commit_ms_outside']}); "
                f"quick_check {r['quick_check']}, earlier rows {'all' if r['holds_earlier_rows'] else 'NOT all'}; "
                f"load {os.getloadavg()[0]:.2f}",
                flush=True,
            )
    if args.restore and (args.dir / "copy-backup.db").exists():
        r = restored(args.dir, args.dim)
        print(
            f"restored: FAISS index ({r['kind']}) built from index.db in {r['seconds']:.1f} s, peak RSS "
            f"{r['peak_rss_mb']:.0f} MB; loaded again from the saved files in {r['again']:.2f} s; "
            f"load {os.getloadavg()[0]:.2f}"
        )
        results["restored"] = [r]
    (args.dir / "backup-cost.json").write_text(json.dumps(results, indent=1))


if __name__ == "__main__":
    main()
