"""What a stream of questions costs `brain serve` while it cannot watch the vault (figures, not
asserted).

A generated vault (bench/scale.py's, ``--notes``, 10,000 by default) with a symlink loop in it,
served in this process under polling: watchfiles' poller gives up on the whole vault at the loop,
so the server is "unwatched" and each question that updates has it index the vault again. Then:

    idle     ``--seconds`` with no question: the passes the server makes by itself
    stream   ``--rate`` questions a second for ``--seconds`` (each ``update``, waiting up to
             ``--wait`` s as `brain ask` does), and a note saved just before one question in the
             middle of the stream: is it in the index that question was answered from?

For each: the index passes run, the CPU of the indexing thread (``/proc``: its passes, the share
of one CPU over the window) and of the whole process (the questions' own work included), and
the questions' answer times (p50 / p95 / max) and how many said they were answered stale.

With ``--polling``, the same vault watched by polling (the loop taken away for the run): what
the server spends over ``--seconds`` with nothing changing (the indexing thread: its look for
changes of mode, ``_poll_modes``; the process: watchfiles' poller too), and how long a note made
unreadable (chmod 000) and then readable again takes to leave the index and come back.

    python bench/serve_unwatched.py                       # 10,000 notes in a temporary folder
    python bench/serve_unwatched.py --work /tmp/unwatched # kept: the next run reuses the index
"""

from __future__ import annotations

import argparse
import os
import statistics
import sys
import tempfile
import time
from concurrent.futures import ThreadPoolExecutor
from pathlib import Path

HERE = Path(__file__).resolve().parent
sys.path.insert(0, str(HERE))
from scale import MODEL, BenchFakeEmbedder, _register, generate  # noqa: E402 (this checkout's brain first)
from serve_speed import load, pct  # noqa: E402

TICK = os.sysconf("SC_CLK_TCK")
SAVED = "Saved in the stream.md"


def thread_cpu(tid: int) -> float:
    """CPU seconds (user and system) of one thread of this process."""
    fields = Path(f"/proc/self/task/{tid}/stat").read_text().rsplit(")", 1)[1].split()
    return (int(fields[11]) + int(fields[12])) / TICK


def process_cpu() -> float:
    times = os.times()
    return times.user + times.system


def prepare(work: Path, notes: int) -> Path:
    from brain.index.indexer import index_vault

    vault = work / "vault"
    if not (work / f"built-{notes}").exists():
        import shutil

        shutil.rmtree(vault, ignore_errors=True)
        generate(vault, notes)
        os.symlink("Loop b.md", vault / "Loop a.md")  # the poller gives up on the whole vault here
        os.symlink("Loop a.md", vault / "Loop b.md")
        started = time.perf_counter()
        index_vault(vault, embedder=BenchFakeEmbedder(), model_name=MODEL, progress=False)
        print(f"built the index of {notes:,} notes in {time.perf_counter() - started:.1f} s", flush=True)
        (work / f"built-{notes}").touch()
    (vault / SAVED).unlink(missing_ok=True)
    return vault


def window(service, seconds: float, ask=None) -> dict:
    """What the server spends over ``seconds`` (and until every question ``ask`` started is answered)."""
    watcher = service.watcher
    tid = watcher._thread.native_id
    passes, cpu, own = watcher.passes, thread_cpu(tid), process_cpu()
    started = time.monotonic()
    answers = ask(started + seconds) if ask else []
    while time.monotonic() < started + seconds:
        time.sleep(0.05)
    wall = time.monotonic() - started
    spent = thread_cpu(tid) - cpu
    return {
        "wall": wall,
        "passes": watcher.passes - passes,
        "index_cpu": spent,
        "index_share": spent / wall,
        "process_cpu": process_cpu() - own,
        "answers": answers,
    }


def polling(vault: Path, args: argparse.Namespace) -> None:
    from brain.server.service import Service

    loop = [vault / "Loop a.md", vault / "Loop b.md"]
    for link in loop:
        link.unlink()
    note = vault / "zone-00" / "area-000" / "note-000007.md"
    if os.geteuid() == 0:  # file modes do not bind root: its opens refused as anyone else's are
        import errno
        import stat

        real_open = os.open

        def open_as_a_user(path, flags, *rest, **named):
            if os.fspath(path) == str(note) and not os.stat(path).st_mode & stat.S_IRUSR:
                raise PermissionError(errno.EACCES, "Permission denied", os.fspath(path))
            return real_open(path, flags, *rest, **named)

        os.open = open_as_a_user
    service = Service(vault.resolve(), embedder=BenchFakeEmbedder(), rerank_model=False, force_polling=True)
    service.start()
    try:
        service.wait_ready(600)
        while service.watcher.mode != "polling" or service.watcher.busy:
            time.sleep(0.1)
        print(f"brain serve over {args.notes:,} notes, watched by polling; {load()}")
        figures = window(service, args.seconds)
        print(
            f"idle    {figures['passes']} passes, indexing thread {figures['index_cpu']:.2f} s CPU over "
            f"{figures['wall']:.1f} s ({figures['index_share']:.1%} of a CPU), whole process "
            f"{figures['process_cpu']:.2f} s CPU ({figures['process_cpu'] / figures['wall']:.1%})"
        )
        rel = note.relative_to(vault).as_posix()

        def held() -> bool:
            return service.run(lambda r: r.store.note_id(rel) is not None, timeout=60)

        for mode, wanted, what in (
            (0, False, "made unreadable: out of the index"),
            (0o644, True, "readable again: back"),
        ):
            started = time.monotonic()
            note.chmod(mode)
            while held() != wanted and time.monotonic() - started < 60:
                time.sleep(0.05)
            if held() == wanted:
                print(f"a note {what} in {time.monotonic() - started:.2f} s")
            else:
                print(f"a note {what}: not within 60 s")
                break
    finally:
        note.chmod(0o644)
        service.stop()
        os.symlink("Loop b.md", loop[0])
        os.symlink("Loop a.md", loop[1])


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--notes", type=int, default=10_000)
    parser.add_argument("--rate", type=float, default=50.0, help="questions a second")
    parser.add_argument("--seconds", type=float, default=10.0)
    parser.add_argument("--wait", type=float, default=14.0, help="how long each question may wait (brain ask: 14)")
    parser.add_argument("--work", type=Path, help="kept between runs (default: a temporary folder)")
    parser.add_argument("--polling", action="store_true", help="watched by polling: changes of mode")
    args = parser.parse_args()
    work = args.work or Path(tempfile.mkdtemp(prefix="brain-unwatched-"))
    work.mkdir(parents=True, exist_ok=True)
    os.environ["BRAIN_HOME"] = str(work / "home")
    os.environ["BRAIN_EMBED_MODEL"] = MODEL
    _register()
    vault = prepare(work, args.notes)

    if args.polling:
        polling(vault, args)
        return

    from brain.recall.types import RecallSettings
    from brain.server.service import Service

    service = Service(vault.resolve(), embedder=BenchFakeEmbedder(), rerank_model=False, force_polling=True)
    service.start()
    try:
        service.wait_ready(600)
        deadline = time.monotonic() + 120
        while service.watcher.mode != "rescans" or service.watcher.busy:
            if time.monotonic() > deadline:
                raise SystemExit(f"the server did not fall back to rescans (mode {service.watcher.mode})")
            time.sleep(0.1)
        print(f"brain serve over {args.notes:,} notes, unwatched (a symlink loop under polling); {load()}")
        settings = RecallSettings(k=5)

        def one(query: str, sent: float, saved: str = "") -> tuple[float, bool, bool]:
            results = service.ask(query, ["vector"], settings, wait=args.wait)[0]
            took = time.monotonic() - sent
            # the fake embedder cannot find it by its words: is it in the index answered from
            # (a snapshot is never older than the last, and the next pass is seconds away)?
            held = bool(saved) and service.run(lambda r: r.store.note_id(saved) is not None, timeout=60)
            return took, bool(results.stale), held

        def stream(until: float) -> list:
            futures = []
            saved_at = None
            with ThreadPoolExecutor(max_workers=int(args.rate * (args.wait + 2))) as pool:
                n = 0
                start = time.monotonic()
                while (now := time.monotonic()) < until:
                    if saved_at is None and now - start >= (until - start) / 2:
                        (vault / SAVED).write_text("# Saved in the stream\n\nThe okapi grazes.\n")
                        saved_at = now
                        futures.append(("saved", pool.submit(one, "okapi grazes", now, SAVED)))
                    else:
                        futures.append(("", pool.submit(one, f"question {n} about note {n % 997}", now)))
                    n += 1
                    time.sleep(max(0.0, start + n / args.rate - time.monotonic()))
                return [(kind, f.result()) for kind, f in futures]

        for name, ask in (("idle", None), ("stream", stream)):
            figures = window(service, args.seconds, ask)
            line = (
                f"{name:6}  {figures['passes']:3} passes, indexing thread {figures['index_cpu']:.2f} s CPU "
                f"over {figures['wall']:.1f} s ({figures['index_share']:.1%} of a CPU), "
                f"whole process {figures['process_cpu']:.2f} s CPU"
            )
            answers = figures["answers"]
            if answers:
                times = [a[1][0] for a in answers]
                stale = sum(1 for a in answers if a[1][1])
                saved = [a[1] for a in answers if a[0] == "saved"]
                line += (
                    f"\n        {len(answers)} questions: answered in {statistics.median(times):.2f} s p50, "
                    f"{pct(times, 95):.2f} s p95, {max(times):.2f} s max; {stale} said stale"
                )
                if saved:
                    took, was_stale, found = saved[0]
                    line += (
                        f"\n        the note saved just before one of them: {'in' if found else 'NOT in'} "
                        f"the index its answer came from ({took:.2f} s{', stale' if was_stale else ''})"
                    )
            print(line, flush=True)
        print(load())
    finally:
        service.stop()
        (vault / SAVED).unlink(missing_ok=True)


if __name__ == "__main__":
    main()
