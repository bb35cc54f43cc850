"""What upgrading an index an older brain made costs at scale: the migrations alone, then the first
`brain index` after them, on bench/scale.py's generated vault (default 100,000 notes) with history.

The index is made by the code of an older revision (``--old``, default the one before m021_search_text:
``git archive`` of it into the work folder), with bench/scale.py's fast fake embedder (``benchfake:384``),
over a vault where a few hundred notes hold invisible characters (a zero-width space inside a word,
a soft hyphen in a heading, a run of tag characters: what m021 marks to be read again) and a third
of the notes a typographic dash (not ASCII: m021's per-row check reads them through), then edited
``--rounds`` times (``--share`` of the notes each time, bench/history.py's edits; the first round
also takes the invisible characters out of half the notes that hold them, so the past holds them
where the present does not). The index folder is kept as the old code left it (``old-index``), and
each measure starts from a copy of it, each in a process of its own (this checkout's code):

    migrate   the migrations alone (``IndexStore.open``): wall and CPU seconds, peak RSS, each
              statement of 0.05 s or more, the WAL's largest size while it ran (polled), index.db
              before and after (its file, and its free pages: no VACUUM); then the first index
              pass (``index_vault``): seconds, peak RSS, notes read again, chunks embedded again,
              the files beside index.db it wrote (the FAISS file, or only its delta); then another
    kill      the migration killed (SIGKILL) once its WAL holds ``--kill-at`` of what it held at the
              end of the measured one (written mid-migration, not yet committed): whether the
              index is whole (``PRAGMA integrity_check``, m021 not recorded, its columns absent),
              and whether the next open migrates it and an index pass runs (FTS5's checks after)

``--past-chunks N`` measures over a copy of the old index whose history is filled up to N past
chunks (the present's chunks copied in as past ones): how the migrations grow with history.
Another brain's figures (main's, before a change): copy this file into its checkout's bench/ and
run it there with the same ``--dir``.

    python bench/upgrade_cost.py --dir /tmp/brain-upgrade                     # 100,000 notes
    python bench/upgrade_cost.py --dir /tmp/brain-upgrade --notes 10000       # quick
    python bench/upgrade_cost.py --dir /tmp/brain-upgrade --phases migrate --past-chunks 500000

The machine it ran on is shared: every figure is printed with the load average. Figures go to
``<dir>/upgrade-<notes>.json`` too.
"""

from __future__ import annotations

import argparse
import json
import os
import resource
import shutil
import sqlite3
import subprocess
import sys
import time
from pathlib import Path

HERE = Path(__file__).resolve().parent
ROOT = HERE.parent
OLD = "18686f0^"  # the last revision before m021_search_text
MODEL = "benchfake:384"
# What m021 looks for, each in a few hundred notes: a word split by a zero-width space, a heading's
# soft hyphen, a run of tag characters (an instruction no one sees).
INVISIBLE = (
    ("pass\u200bword", "section"),
    ("Pa\u00adrt", "heading"),
    ("\U000e0069\U000e0067\U000e006e\U000e006f\U000e0072\U000e0065", "section"),
)


def _load() -> list[float]:
    return [round(x, 2) for x in os.getloadavg()]


# ----- in a child process: one brain, old or new ----------------------------------------------------


def _child_brain(root: Path) -> None:
    """Import brain and bench/scale.py's fake embedder from ``root`` (the old archive or this checkout)."""
    sys.path[:0] = [str(root), str(root / "bench")]
    os.environ["PYTHONPATH"] = str(root)
    import scale  # noqa: F401 - its embedder, in child_index

    import brain

    if Path(brain.__file__).resolve().parent.parent != root.resolve():
        raise SystemExit(f"brain imported from {brain.__file__}, not {root}")


def _peak_rss_mb() -> float:
    return round(resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 1024, 1)


def _cpu() -> float:
    usage = resource.getrusage(resource.RUSAGE_SELF)
    return usage.ru_utime + usage.ru_stime


def child_index(vault: Path) -> dict:
    import scale

    from brain.index.indexer import index_vault

    embedder = scale.BenchFakeEmbedder()
    started, cpu = time.perf_counter(), _cpu()
    report = index_vault(vault, embedder=embedder, progress=False)
    seconds, cpu_s = time.perf_counter() - started, _cpu() - cpu
    # The FTS5 merge and the postings' base a run may start go on in the background, writing the
    # database: the next measure copies the index folder and must not copy it mid-write.
    waited = time.perf_counter()
    scale._builds_done(vault)
    return {
        "seconds": round(seconds, 2),
        "cpu_s": round(cpu_s, 2),
        "background_s": round(time.perf_counter() - waited, 2),
        "notes": report.notes,
        "chunks": report.chunks,
        "embedded": report.embedded,
        "new": report.new,
        "changed": report.changed,
        "kept": report.kept,
        "peak_rss_mb": _peak_rss_mb(),
    }


def _time_statements(slow: list) -> None:
    """Each statement a migration runs that takes 0.05 s or more, with its seconds, into ``slow``."""
    from brain import migrations

    class Timed(migrations._InTransaction):
        def execute(self, sql, *args):
            started = time.perf_counter()
            try:
                return self._conn.execute(sql, *args)
            finally:
                if (seconds := time.perf_counter() - started) >= 0.05:
                    slow.append([round(seconds, 2), " ".join(sql.split())[:90]])

    migrations._InTransaction = Timed  # type: ignore[misc]
    # search_past_chunks runs its statements on the connection it is given: the same wrapper


def child_migrate(directory: Path) -> dict:
    from brain.index.schema import INDEX_MIGRATIONS
    from brain.index.store import IndexStore

    slow: list = []
    _time_statements(slow)
    started, cpu = time.perf_counter(), _cpu()
    store = IndexStore.open(directory)
    seconds, cpu_s = time.perf_counter() - started, _cpu() - cpu
    applied = INDEX_MIGRATIONS.applied(store.conn)
    store.close()
    return {
        "seconds": round(seconds, 2),
        "cpu_s": round(cpu_s, 2),
        "peak_rss_mb": _peak_rss_mb(),
        "last_migration": applied[-1] if applied else None,
        "slow_statements": slow,
    }


# ----- the parent ----------------------------------------------------------------------------------


def _run_child(kind: str, root: Path, target: Path, env: dict, poll: Path | None = None) -> dict:
    """A child process; with ``poll``, the largest size that file (a WAL) reached while it ran."""
    cmd = [sys.executable, __file__, "--child", kind, "--root", str(root), "--target", str(target)]
    proc = subprocess.Popen(cmd, env=env, stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True)
    largest = 0
    while proc.poll() is None:
        if poll is not None:
            try:
                largest = max(largest, poll.stat().st_size)
            except OSError:
                pass
        time.sleep(0.05)
    out, err = proc.communicate()
    if proc.returncode != 0:
        raise SystemExit(f"{kind} ({root}) failed:\n{err[-3000:]}")
    data = json.loads(out.strip().splitlines()[-1])
    if poll is not None:
        data["wal_peak_mb"] = round(largest / 1e6, 1)
    return data


def _db_figures(directory: Path) -> dict:
    path = directory / "index.db"
    conn = sqlite3.connect(f"file:{path}?mode=ro", uri=True)
    try:
        page = conn.execute("PRAGMA page_size").fetchone()[0]
        pages = conn.execute("PRAGMA page_count").fetchone()[0]
        free = conn.execute("PRAGMA freelist_count").fetchone()[0]
        counts = {
            table: conn.execute(f"SELECT count(*) FROM {table}").fetchone()[0]
            for table in ("notes", "chunks", "note_versions", "chunk_history")
        }
    finally:
        conn.close()
    wal = path.with_name("index.db-wal")
    return {
        "file_mb": round(path.stat().st_size / 1e6, 1),
        "wal_mb": round(wal.stat().st_size / 1e6, 1) if wal.exists() else 0.0,
        "used_mb": round((pages - free) * page / 1e6, 1),
        "free_mb": round(free * page / 1e6, 1),
        **counts,
    }


def _faiss_files(directory: Path) -> dict[str, tuple[int, int]]:
    return {
        p.name: (p.stat().st_size, p.stat().st_mtime_ns)
        for p in directory.iterdir()
        if p.is_file() and not p.name.startswith("index.db")
    }


def _fresh_copy(source: Path, directory: Path) -> None:
    shutil.rmtree(directory, ignore_errors=True)
    shutil.copytree(source, directory)


def inflate(work: Path, past_chunks: int) -> Path:
    """A copy of the old index whose history holds ``past_chunks`` past chunks: the present's
    chunks copied in as past ones of their notes (each under a key of its own, the old triggers
    indexing them in the old FTS table as the old brain did). No version lists them: the
    migration reads every past chunk all the same, and this is how its cost grows with history."""
    source = work / f"old-index-past-{past_chunks}"
    if source.is_dir():
        return source
    building = work / "inflating"
    _fresh_copy(work / "old-index", building)
    conn = sqlite3.connect(str(building / "index.db"), isolation_level=None)
    try:
        have = conn.execute("SELECT count(*) FROM chunk_history").fetchone()[0]
        conn.execute("BEGIN")
        conn.execute(
            "INSERT INTO chunk_history (note_id, key, title, heading, text, vector)"
            " SELECT c.note_id, randomblob(16), n.title, c.heading, c.text || ' (past)', c.vector"
            " FROM chunks c JOIN notes n ON n.id = c.note_id ORDER BY c.id LIMIT ?",
            (max(0, past_chunks - have),),
        )
        conn.execute("COMMIT")
        conn.execute("PRAGMA wal_checkpoint(TRUNCATE)")
    finally:
        conn.close()
    building.rename(source)
    return source


def _mark_invisible(vault: Path, n: int, count: int) -> list[str]:
    """``count`` notes spread over the vault given one of INVISIBLE each; a third of all notes a dash."""
    sys.path.insert(0, str(HERE))
    from scale import note_path

    step = max(1, n // count)
    marked = []
    for i in range(n):
        path = vault / note_path(i)
        text = path.read_text(encoding="utf-8")
        if i % 3 == 0:
            text = text.replace(" ", " \u2014 ", 1)  # not ASCII: the per-row check reads such text through
        if i % step == step // 2 and len(marked) < count:
            what, where = INVISIBLE[len(marked) % len(INVISIBLE)]
            if where == "heading":
                text = text.replace("## Part", f"## {what}", 1)
            else:
                lines = text.split("\n")
                lines[-2] = lines[-2].rstrip(".") + f" {what}."
                text = "\n".join(lines)
            marked.append(str(path.relative_to(vault)))
        path.write_text(text, encoding="utf-8")
    return marked


def prepare(args, work: Path, env: dict) -> dict:
    sys.path.insert(0, str(HERE))
    from history import apply_edit, plan_edits
    from scale import generate

    old = work / "old"
    if not (old / "brain").is_dir():
        old.mkdir(parents=True, exist_ok=True)
        archive = subprocess.run(["git", "-C", str(ROOT), "archive", args.old], capture_output=True, check=True)
        subprocess.run(["tar", "-x", "-C", str(old)], input=archive.stdout, check=True)
    vault, home = work / "vault", work / "home"
    shutil.rmtree(vault, ignore_errors=True)
    shutil.rmtree(home, ignore_errors=True)
    out: dict = {
        "old": subprocess.run(
            ["git", "-C", str(ROOT), "rev-parse", "--short", args.old], capture_output=True, text=True, check=True
        ).stdout.strip()
    }
    print(f"generating {args.notes} notes ...", file=sys.stderr, flush=True)
    out["generate"] = generate(vault, args.notes)
    marked = _mark_invisible(vault, args.notes, args.invisible)
    out["invisible_notes"] = len(marked)
    print(f"old build ({out['old']}) ...", file=sys.stderr, flush=True)
    out["old_build"] = _run_child("index", old, vault, env)
    print(f"  {out['old_build']}", file=sys.stderr, flush=True)
    vocabulary = sorted({w for p in list(vault.rglob("*.md"))[:200] for w in p.read_text().split()})
    stems = sorted(p.stem for p in vault.rglob("*.md"))
    rounds = []
    for number, edits in enumerate(plan_edits(vault, args.rounds, args.share, seed=7), 1):
        if number == 1:  # half the invisible characters taken out: the past holds them, the present not
            for rel in marked[::2]:
                path = vault / rel
                text = path.read_text(encoding="utf-8")
                for what, _ in INVISIBLE:
                    text = text.replace(what, "".join(ch for ch in what if ch.isascii()))
                path.write_text(text, encoding="utf-8")
        for path, kind, seed in edits:
            apply_edit(vault, path, kind, seed, vocabulary, stems)
        time.sleep(1.1)  # versions a second apart
        rounds.append(_run_child("index", old, vault, env))
        print(f"  round {number}: {len(edits)} notes edited: {rounds[-1]}", file=sys.stderr, flush=True)
    out["old_rounds"] = rounds
    directory = _index_dir(vault, env)
    shutil.rmtree(work / "old-index", ignore_errors=True)
    shutil.copytree(directory, work / "old-index")
    return out


def _index_dir(vault: Path, env: dict) -> Path:
    os.environ["BRAIN_HOME"] = env["BRAIN_HOME"]
    sys.path.insert(0, str(ROOT))
    from brain.config import index_dir

    return index_dir(vault)


def migrate(work: Path, env: dict, source: Path) -> dict:
    vault = work / "vault"
    directory = _index_dir(vault, env)
    _fresh_copy(source, directory)
    load = _load()
    faiss_before = _faiss_files(directory)
    data = _run_child("migrate", ROOT, directory, env, poll=directory / "index.db-wal")
    data["load_average"] = load
    data["db_after"] = _db_figures(directory)
    print(f"migrate: {data}", file=sys.stderr, flush=True)
    load = _load()
    index = _run_child("index", ROOT, vault, env)
    index["load_average"] = load
    faiss_after = _faiss_files(directory)
    index["files_written"] = sorted(name for name, stat in faiss_after.items() if faiss_before.get(name) != stat)
    index["db_after"] = _db_figures(directory)
    print(f"first index: {index}", file=sys.stderr, flush=True)
    again = _run_child("index", ROOT, vault, env)
    return {"migrate": data, "index": index, "index_again": again}


def kill(work: Path, env: dict, source: Path, wal_mb: float) -> dict:
    """The migration killed once its WAL holds ``wal_mb``: is the index whole, and does the next run go on?"""
    vault = work / "vault"
    directory = _index_dir(vault, env)
    _fresh_copy(source, directory)
    before = _db_figures(directory)
    wal = directory / "index.db-wal"
    cmd = [sys.executable, __file__, "--child", "migrate", "--root", str(ROOT), "--target", str(directory)]
    proc = subprocess.Popen(cmd, env=env, stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
    started = time.perf_counter()
    while proc.poll() is None and not (wal.exists() and wal.stat().st_size >= wal_mb * 1e6):
        time.sleep(0.01)
    after_s = round(time.perf_counter() - started, 2)
    finished = proc.poll() is not None
    proc.kill()  # SIGKILL; nothing when it has ended and been reaped (os.kill raised ProcessLookupError)
    proc.wait()
    conn = sqlite3.connect(str(directory / "index.db"))
    try:
        integrity = conn.execute("PRAGMA integrity_check").fetchone()[0]
        recorded = [row[0] for row in conn.execute("SELECT name FROM _migrations WHERE db = 'index'")]
        columns = [row[1] for row in conn.execute("PRAGMA table_info(chunks)")]
    finally:
        conn.close()
    out = {
        "killed_after_s": after_s,
        "killed_at_wal_mb": wal_mb,
        "had_finished": finished,
        "integrity": integrity,
        "m021_recorded": "m021_search_text" in recorded,
        "search_text_column": "search_text" in columns,
        "db_before": before,
        "db_after_kill": _db_figures(directory),
    }
    out["migrate_again"] = _run_child("migrate", ROOT, directory, env)
    out["index_after"] = _run_child("index", ROOT, vault, env)
    conn = sqlite3.connect(str(directory / "index.db"))
    try:
        out["fts_integrity"] = {table: _fts_check(conn, table) for table in ("chunks_fts", "chunk_history_fts")}
    finally:
        conn.close()
    print(f"kill: {out}", file=sys.stderr, flush=True)
    return out


def _fts_check(conn: sqlite3.Connection, table: str) -> str:
    try:
        conn.execute(f"INSERT INTO {table} ({table}) VALUES ('integrity-check')")
    except sqlite3.Error as exc:
        return str(exc)
    return "ok"


def summary(r: dict) -> str:
    p = r["prepare"]
    lines = [
        f"upgrade of an index made at {p['old']} to this checkout, {r['notes']:,} notes, "
        f"{p['invisible_notes']} of them with invisible characters; old build {p['old_build']['seconds']} s, "
        f"{p['old_build']['peak_rss_mb']} MB"
    ]
    for label, u in r.get("upgrades", {}).items():
        db = u["old_db"]
        lines.append(
            f"{label}: {db['notes']:,} notes, {db['chunks']:,} chunks, {db['note_versions']:,} versions, "
            f"{db['chunk_history']:,} past chunks; index.db {db['file_mb']} MB ({db['free_mb']} MB free pages)"
        )
        if "migrate" in u:
            m, i = u["migrate"]["migrate"], u["migrate"]["index"]
            after = m["db_after"]
            lines.append(
                f"  migrations alone: {m['seconds']} s ({m['cpu_s']} s CPU), peak RSS {m['peak_rss_mb']} MB, "
                f"WAL up to {m['wal_peak_mb']} MB; index.db {db['file_mb']} -> {after['file_mb']} MB "
                f"(x{after['file_mb'] / db['file_mb']:.3f}; used {db['used_mb']} -> {after['used_mb']} MB, "
                f"free pages {after['free_mb']} MB); load {m['load_average']}"
            )
            for seconds, statement in m.get("slow_statements", []):
                lines.append(f"      {seconds:6.2f} s  {statement}")
            lines.append(
                f"  first index after: {i['seconds']} s ({i['cpu_s']} s CPU), peak RSS {i['peak_rss_mb']} MB, "
                f"{i['changed']:,} notes read again, {i['embedded']:,} chunks embedded of {i['chunks']:,} "
                f"({i['embedded'] / max(1, i['chunks']):.2%}), files written: {', '.join(i['files_written']) or 'none'}; "
                f"index.db {i['db_after']['file_mb']} MB, {i['db_after']['note_versions']:,} versions; "
                f"load {i['load_average']}; the pass after it: {u['migrate']['index_again']['seconds']} s"
            )
            ib = p["old_build"]
            rebuild = sum(
                seconds
                for seconds, statement in m.get("slow_statements", [])
                if "chunk_history_fts (chunk_history_fts)" in statement
            )
            rebuilt = f"; the past's FTS5 rebuilt at {rebuild / db['chunk_history'] * 1e6:.0f} us a past chunk"
            lines.append(
                f"  beside the old build: migrations {m['seconds'] / ib['seconds']:.1%} of its time, "
                f"first index {i['seconds'] / ib['seconds']:.1%}{rebuilt if rebuild else ''}"
            )
        if "kill" in u:
            k = u["kill"]
            lines.append(
                f"  killed after {k['killed_after_s']} s, WAL {k['killed_at_wal_mb']} MB (finished: {k['had_finished']}): "
                f"integrity {k['integrity']}, m021 recorded {k['m021_recorded']}, its column there "
                f"{k['search_text_column']}; migrated again in {k['migrate_again']['seconds']} s, index pass "
                f"{k['index_after']['seconds']} s ({k['index_after']['embedded']:,} embedded), FTS5 checks "
                f"{k['fts_integrity']}"
            )
    return "\n".join(lines)


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--dir", help="work folder, kept (the old index is reused)")
    parser.add_argument("--notes", type=int, default=100_000)
    parser.add_argument("--old", default=OLD, help=f"the revision that makes the old index (default {OLD})")
    parser.add_argument("--rounds", type=int, default=3, help="rounds of edits after the old build")
    parser.add_argument("--share", type=float, default=0.03, help="share of the notes edited each round")
    parser.add_argument("--invisible", type=int, default=300, help="notes given an invisible character")
    parser.add_argument("--phases", default="prepare,migrate,kill")
    parser.add_argument(
        "--past-chunks",
        type=int,
        help="upgrade a copy of the old index whose history is filled up to this many past chunks",
    )
    parser.add_argument("--kill-at", type=float, default=0.5, help="share of the migration's WAL to kill it at")
    parser.add_argument("--child", help=argparse.SUPPRESS)
    parser.add_argument("--root", help=argparse.SUPPRESS)
    parser.add_argument("--target", help=argparse.SUPPRESS)
    args = parser.parse_args(argv)
    if args.child:
        _child_brain(Path(args.root))
        data = child_index(Path(args.target)) if args.child == "index" else child_migrate(Path(args.target))
        print(json.dumps(data))
        return 0
    if not args.dir:
        parser.error("--dir is required")
    work = Path(args.dir).resolve()
    work.mkdir(parents=True, exist_ok=True)
    env = {
        **os.environ,
        "BRAIN_HOME": str(work / "home"),
        "BRAIN_EMBED_MODEL": MODEL,
        "BRAIN_RERANK_MODEL": "none",
        "HF_HUB_OFFLINE": "1",
    }
    for name in ("BRAIN_DB", "BRAIN_DENSE_INDEX", "PYTHONPATH"):
        env.pop(name, None)
    results = work / f"upgrade-{args.notes}.json"
    r = json.loads(results.read_text()) if results.exists() else {}
    r["notes"] = args.notes
    phases = args.phases.split(",")
    if "prepare" in phases or not (work / "old-index").is_dir():
        r["prepare"] = prepare(args, work, env)
        results.write_text(json.dumps(r, indent=1))
    source, label = work / "old-index", "history as edited"
    if args.past_chunks:
        source, label = inflate(work, args.past_chunks), f"history inflated to {args.past_chunks:,} past chunks"
    u = r.setdefault("upgrades", {}).setdefault(label, {})
    u["old_db"] = _db_figures(source)
    if "migrate" in phases:
        u["migrate"] = migrate(work, env, source)
        results.write_text(json.dumps(r, indent=1))
    if "kill" in phases:
        measured = u.get("migrate", {}).get("migrate", {}).get("wal_peak_mb", 2.0)
        u["kill"] = kill(work, env, source, round(measured * args.kill_at, 1))
        results.write_text(json.dumps(r, indent=1))
    print(summary(r))
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
