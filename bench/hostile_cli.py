"""Every `brain` command fed what a hostile or careless user would: the promise is one line,
never a traceback, a non-zero exit, nothing written where it should not be.

In one process (click's CliRunner, a fake embedder: no model to load), each case with a
10 s alarm: vault paths that are a file, a FIFO, a dangling symlink, a folder with mode 000
(root reads it all the same), names and arguments with undecodable bytes and control
characters; -k and other counts 0, -1 and 10**9; queries empty, of 1 MB and of NULs; --json
with every other output flag; BRAIN_HOME a file; each BRAIN_ setting of the registry
(brain/settings.py) set to garbage, for `status`, `ask` and `index`. A case fails when the
command raised (what a user sees as a traceback), printed "Traceback", failed (exit not 0)
with more than one line, wrote into the vault, or wrote a path that is not UTF-8 into Claude
Code's settings (`hook install`, `mcp install`: it reads another path). Prints each failure and
the matrix's size.

    python bench/hostile_cli.py [--only SUBSTRING]   # the cases whose name holds it
"""

from __future__ import annotations

import argparse
import os
import signal
import subprocess
import sys
import tempfile
import traceback
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))

import numpy as np
from click.testing import CliRunner

from brain.embed import register_embedder


class Fake:
    def __init__(self, name: str = "fake:16"):
        self.name, self.dim = name, 16
        self.query_prefix = self.passage_prefix = ""

    def embed_documents(self, texts, *, progress: bool = False):
        out = np.ones((len(list(texts)), self.dim), dtype=np.float32)
        return out / np.linalg.norm(out, axis=1, keepdims=True)

    def embed_query(self, text: str):
        return self.embed_documents([text])[0]


register_embedder("fake", Fake)

from brain.cli import cli  # noqa: E402
from brain.settings import SETTINGS  # noqa: E402


def _unnameable(work: Path) -> str | None:
    """Claude Code's settings in the working folder, when they hold an escaped surrogate."""
    for name in (".mcp.json", ".claude/settings.json", ".claude/settings.local.json"):
        path = work / name
        if path.is_file() and "\\udc" in path.read_text(encoding="utf-8", errors="replace"):
            path.unlink()  # once: the next case starts clean
            return name
    return None


def _listing(output: str) -> bool:
    """A usage error (click's lines), or the one error that lists its items a line each."""
    return "Usage:" in output or all(line.startswith("  ") for line in output.strip().splitlines()[1:])


class Timeout(Exception):
    pass


def _alarm(*_: object) -> None:
    raise Timeout


def cases(work: Path, vault: Path, home: Path) -> list[tuple[str, list[str], dict[str, str]]]:
    file_ = work / "a-file"
    file_.write_text("x")
    fifo = work / "a-fifo"
    os.mkfifo(fifo)
    dangling = work / "dangling"
    dangling.symlink_to(work / "nowhere")
    closed = work / "closed"
    closed.mkdir()
    (closed / "n.md").write_text("# n\n")
    closed.chmod(0)
    odd = work / os.fsdecode(b"bad-\xff-\x1b[31m-name")
    odd.mkdir()
    (odd / "n.md").write_text("# n\n")
    vaults = {
        "file": str(file_),
        "fifo": str(fifo),
        "dangling": str(dangling),
        "mode000": str(closed),
        "badname": str(odd),
        "empty": "",  # (a NUL cannot be in an argument: execve ends it there)
    }
    with_vault = {
        "index": ["index", "-q"],
        "status": ["status"],
        "ask": ["ask", "q"],
        "history": ["history", "Note"],
        "note": ["note", "Note"],
        "neighbours": ["neighbours", "Note"],
        "prune": ["prune", "--before", "90d"],
        "backup": ["backup", str(work / "backup-dest")],
        "mcp-install": ["mcp", "install"],
        "eval": ["eval", str(work / "q.jsonl")],
        "serve-stop": ["serve", "--stop"],
    }
    (work / "q.jsonl").write_text('{"id": "1", "query": "q", "type": "entity", "relevant": ["Note.md"]}\n')
    out: list[tuple[str, list[str], dict[str, str]]] = []
    for name, args in with_vault.items():
        for kind, path in vaults.items():
            out.append((f"{name} vault={kind}", [*args, "--vault", path], {}))
    v = ["--vault", str(vault)]
    counts = {
        "ask": [["ask", *v, "q", "-k", "{n}"], ["ask", *v, "q", "--budget", "{n}"], ["ask", *v, "q", "--depth", "{n}"]]
        + [["ask", *v, "q", "--seeds", "{n}"], ["ask", *v, "q", "--max-new", "{n}"], ["ask", *v, "q", "--pool", "{n}"]]
        + [["ask", *v, "q", "--context", "--budget", "{n}"]],
        "eval": [["eval", *v, str(work / "q.jsonl"), "-k", "{n}"]],
        "history": [["history", *v, "Note", "--last", "{n}"]],
        "note": [["note", *v, "Note", "--max-chars", "{n}"]],
        "turns": [["turns", "-n", "{n}"], ["turns", "--days", "{n}"], ["turns", "--stats", "--days", "{n}"]],
        "recalls": [["recalls", "-n", "{n}"], ["recalls", "--days", "{n}"], ["recalls", "--stats", "--days", "{n}"]],
        "index": [["index", *v, "--wait", "{n}"]],
        "prune": [["prune", *v, "--before", "90d", "--wait", "{n}"]],
    }
    for name, forms in counts.items():
        for form in forms:
            for n in ("0", "-1", str(10**9), "1e3", str(10**30)):
                out.append((f"{name} {' '.join(form[-2:])}={n}", [a.replace("{n}", n) for a in form], {}))
    queries = {"empty": "", "1MB": "word " * 200_000, "nuls": "\0" * 100, "badbytes": os.fsdecode(b"\xff\xfe q")}
    queries["control"] = "\x1b[2J\x07\r\n q"
    for qname, q in queries.items():
        out.append((f"ask query={qname}", ["ask", *v, q], {}))
        out.append((f"ask --json query={qname}", ["ask", *v, "--json", q], {}))
        out.append((f"note name={qname}", ["note", *v, q], {}))
        out.append((f"history name={qname}", ["history", *v, q], {}))
        out.append((f"neighbours name={qname}", ["neighbours", *v, q], {}))
        out.append((f"note heading={qname}", ["note", *v, "Note", "--heading", q], {}))
        out.append((f"turns session={qname}", ["turns", "--session", q], {}))
        out.append((f"turns project={qname}", ["turns", "--project", q], {}))
        out.append((f"recalls session={qname}", ["recalls", "--session", q], {}))
        for when in ("--as-of", "--valid-at"):
            out.append((f"ask {when}={qname}", ["ask", *v, when, q, "q"], {}))
        out.append((f"prune before={qname}", ["prune", *v, "--before", q], {}))
        out.append((f"turns since={qname}", ["turns", "--since", q], {}))
        out.append((f"ask mode={qname}", ["ask", *v, "--mode", q, "q"], {}))
        out.append((f"ask source={qname}", ["ask", *v, "--source", q, "q"], {}))
        out.append((f"eval modes={qname}", ["eval", *v, str(work / "q.jsonl"), "--modes", q], {}))
        out.append((f"eval explain={qname}", ["eval", *v, str(work / "q.jsonl"), "--explain", q], {}))
        out.append((f"serve http={qname}", ["serve", *v, "--http", q], {}))
    flags = {
        "ask": [
            "--graph",
            "--no-rerank",
            "--ab",
            "--context",
            "--no-update",
            "--no-server",
            "-q",
            "--ab-modes=vector,hybrid",
        ],
        "status": ["-v"],
        "eval": ["--markdown", "--explain=1"],
        "index": ["-q", "--verify", "--repair", "--rebuild"],
        "recalls": ["--stats"],
        "turns": ["--stats"],
        "history": ["--last=1"],
        "note": ["--heading=x", "--max-chars=5"],
        "prune": ["--ledger", "--vacuum"],
        "backup": [],
        "neighbours": [],
    }
    for name, extra in flags.items():
        base = {
            "ask": ["ask", *v, "q"],
            "status": ["status", *v],
            "eval": ["eval", *v, str(work / "q.jsonl")],
            "index": ["index", *v],
            "recalls": ["recalls"],
            "turns": ["turns"],
            "history": ["history", *v, "Note"],
            "note": ["note", *v, "Note"],
            "prune": ["prune", *v, "--before", "90d"],
            "backup": ["backup", *v, str(work / "json-backup")],
            "neighbours": ["neighbours", *v, "Note"],
        }[name]
        out.append((f"{name} --json", [*base, "--json"], {}))
        for flag in extra:
            out.append((f"{name} --json {flag}", [*base, "--json", flag], {}))
    # notes whose names a careless sync or a hostile share brings: control characters, a line
    # break, a bidi override, bytes that are not UTF-8 (skipped by the walk, and listed)
    odd_vault = work / "odd-vault"
    odd_vault.mkdir()
    for name in (b"\x1b[31mred.md", b"new\nline.md", b"rtl-\xe2\x80\xaetxt.md", b"bad-\xff.md", b"Note.md"):
        (odd_vault / os.fsdecode(name)).write_text("# Odd\n\nText [[new\nline]] [[\x1b[31mred]].\n")
    o = ["--vault", str(odd_vault)]
    for args in (["index", *o], ["index", "--json", *o], ["status", "-v", *o], ["status", "--json", "-v", *o]):
        out.append((f"odd-names {' '.join(args[:-2])}", args, {}))
    for args in (["ask", *o, "odd"], ["ask", "--json", *o, "odd"], ["ask", "--context", *o, "odd"]):
        out.append((f"odd-names {' '.join(args[:-3])}", args, {}))
    for note in ("Note", "new\nline", "\x1b[31mred", os.fsdecode(b"bad-\xff")):
        for command in ("note", "neighbours", "history"):
            out.append((f"odd-names {command} {note!r}", [command, *o, note], {}))
            out.append((f"odd-names {command} --json {note!r}", [command, "--json", *o, note], {}))
    # backup's destination, and eval's query file, of every wrong kind
    dests = {"file": file_, "fifo": fifo, "dangling": dangling, "in-vault": vault / "backup", "badname": odd / "b"}
    dests["existing-dir"] = closed
    for kind, dest in dests.items():
        out.append((f"backup dest={kind}", ["backup", *v, str(dest)], {}))
    binary = work / "binary.jsonl"
    binary.write_bytes(b"\xff\xfe\0\0" * 1000)
    empty = work / "empty.jsonl"
    empty.write_text("")
    huge = work / "huge.jsonl"
    huge.write_text('{"id": "1", "query": "' + "w " * 500_000 + '", "type": "entity", "relevant": ["Note.md"]}\n')
    for kind, queries_file in {"dir": closed, "binary": binary, "empty": empty, "1MB-line": huge, "fifo": fifo}.items():
        out.append((f"eval queries={kind}", ["eval", *v, str(queries_file)], {}))
    for args in (["hook", "install"], ["hook", "install", "--prompt", *v], ["hook", "uninstall"]):
        out.append((" ".join(args[:2]), args, {}))
    out.append(("hook install --prompt vault=badname", ["hook", "install", "--prompt", "--vault", str(odd)], {}))
    for name in ("BRAIN_HOME", "BRAIN_DB"):
        bad = str(work / os.fsdecode(b"bad-\xff")) + ("/ledger.db" if name == "BRAIN_DB" else "")
        out.append((f"hook install {name}=badname", ["hook", "install"], {name: bad}))
        out.append((f"mcp install {name}=badname", ["mcp", "install", *v], {name: bad}))
    for args in (["mcp", "install", *v], ["mcp", "uninstall"], ["mcp", "install", "--name", "\x1b[2J"]):
        out.append((" ".join(args[:2]) + " " + args[-1][:8], args, {}))
    home_file = work / "home-file"
    home_file.write_text("x")
    for name, args in {**with_vault, "turns": ["turns"], "recalls": ["recalls"], "ab": ["ab"]}.items():
        args = [a for a in args]
        if "--vault" not in args and name not in ("turns", "recalls", "ab"):
            args += ["--vault", str(vault)]
        out.append((f"{name} BRAIN_HOME=file", args, {"BRAIN_HOME": str(home_file)}))
        out.append((f"{name} BRAIN_HOME=fifo", args, {"BRAIN_HOME": str(fifo)}))
        out.append((f"{name} BRAIN_HOME=dangling", args, {"BRAIN_HOME": str(dangling / "x")}))
    garbage = ["abc", "-1", "0", "1e999", "nan", "99999999999999999999", " ", "\x1b[31m", os.fsdecode(b"\xff")]
    for setting in SETTINGS:
        env_name = setting.name
        if env_name in ("BRAIN_HOME",):
            continue
        for value in garbage:
            for args in (["status", *v], ["ask", *v, "--no-server", "q"], ["index", "-q", *v]):
                out.append((f"{args[0]} {env_name}={value!r}", args, {env_name: value}))
    return out


def hooks(work: Path, vault: Path) -> tuple[int, list[str]]:
    """`brain hook stop` and `brain hook prompt` bypass click (``__main__``): run as Claude Code
    runs them, a process each, JSON or not on standard input; they must exit 0, saying nothing
    but one line on standard error."""
    inputs = [b"", b"\xff\xfe", b"{", b"[]", b"\0" * 64, b'{"prompt": null}', b'{"transcript_path": 7}']
    inputs += [b'{"prompt": "' + b"word " * 200_000 + b'"}', b'{"prompt": "q", "cwd": "/nowhere\\u0000"}']
    home_file = work / "home-file"
    failures, count = [], 0
    for hook in ("stop", "prompt"):
        for data in inputs:
            for home in (str(work / "home"), str(home_file)):
                count += 1
                env = {**os.environ, "BRAIN_HOME": home, "BRAIN_VAULT": str(vault)}
                run = subprocess.run(
                    [sys.executable, "-m", "brain", "hook", hook], input=data, env=env, capture_output=True, timeout=60
                )
                err = run.stderr.decode("utf-8", "replace")
                if run.returncode != 0 or "Traceback" in err or len(err.strip().splitlines()) > 1:
                    failures.append(f"hook {hook} stdin={data[:20]!r} home={home}: exit {run.returncode} {err[:300]!r}")
    return count, failures


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--only", default="")
    args = parser.parse_args()
    work = Path(tempfile.mkdtemp(prefix="brain-hostile-cli-"))
    os.chdir(work)  # `brain mcp install` writes ./.mcp.json
    home = work / "home"
    os.environ.update(
        {"BRAIN_HOME": str(home), "BRAIN_EMBED_MODEL": "fake:16", "BRAIN_RERANK_MODEL": "none", "HF_HUB_OFFLINE": "1"}
    )
    os.environ.pop("BRAIN_VAULT", None)
    vault = work / "vault"
    vault.mkdir()
    (vault / "Note.md").write_text("# Note\n\nText with a [[Other]] link.\n")
    (vault / "Other.md").write_text("# Other\n\nMore text.\n")
    runner = CliRunner()
    built = runner.invoke(cli, ["index", "-q", "--vault", str(vault)])
    assert built.exit_code == 0, built.output
    signal.signal(signal.SIGALRM, _alarm)
    failed = 0
    all_cases = [c for c in cases(work, vault, home) if args.only in c[0]]
    try:
        for name, argv, env in all_cases:
            before = sorted(os.listdir(vault))
            signal.alarm(10)
            try:
                result = runner.invoke(cli, argv, env=env, prog_name="brain")
            except Timeout:
                print(f"TIMEOUT {name}")
                failed += 1
                continue
            finally:
                signal.alarm(0)
            output = result.output
            problem = ""
            if result.exception is not None and not isinstance(result.exception, SystemExit):
                exc = result.exception
                if isinstance(exc, Timeout):
                    problem = "timeout"
                else:
                    where = traceback.extract_tb(exc.__traceback__)[-1]
                    problem = f"raised {type(exc).__name__}: {str(exc)[:150]!r} at {where.filename}:{where.lineno}"
            elif "Traceback" in output:
                problem = "printed a traceback"
            elif result.exit_code != 0 and len(output.strip().splitlines()) > 1 and not _listing(output):
                problem = f"{len(output.splitlines())} lines: {output[:300]!r}"
            elif sorted(os.listdir(vault)) != before:
                problem = f"wrote into the vault: {sorted(set(os.listdir(vault)) ^ set(before))}"
            unnameable = _unnameable(work)  # asked after every case, whatever else went wrong
            if unnameable:
                problem += f"{'; ' if problem else ''}wrote a path that is not UTF-8 into {unnameable} (Claude Code reads another)"
            if problem:
                failed += 1
                print(f"FAIL {name}: {problem}", flush=True)
        count, failures = hooks(work, vault) if args.only in "hook stop prompt" else (0, [])
        for line in failures:
            print(f"FAIL {line}", flush=True)
        all_cases += [("hook", [], {})] * count
        failed += len(failures)
    finally:
        (work / "closed").chmod(0o700)
        subprocess.run(["rm", "-rf", str(work)], check=False)
    print(f"{len(all_cases)} cases, {failed} failed")


if __name__ == "__main__":
    main()
