"""A note whose parse raises what no note should make it raise (a bug of brain's) stopped the
whole index run, with a traceback: in this process, and through the parse workers (a worker's
batch came back here and raised again). One note never stops a run now: it is skipped like a
binary or unreadable file, with a warning that names it, the exception and that it is a bug to
report; an indexed note keeps its indexed text, as one that fails to read does."""

from __future__ import annotations

import json
import logging
import os
import shutil
import subprocess
import sys
from pathlib import Path

import pytest
from conftest import FakeEmbedder, write
from index_helpers import IndexView, index_into
from test_hardening_index import _invoke

import brain
from brain import config, reading
from brain.errors import BrainError
from brain.index import changes, indexer, parsing
from brain.index.parsing import ParseFailed, Parser
from brain.index.status import vault_status
from brain.reading import NoteMatch, shaped_note

BOOM = "Boom.md"
ROOT = str(Path(parsing.__file__).resolve().parents[2])


def _raising(real):
    """``real`` (parse_note), raising for the note BOOM alone."""

    def parse_note(path, *args, **kwargs):
        if path == BOOM:
            raise ValueError("a bug met in " + path)
        return real(path, *args, **kwargs)

    return parse_note


# Python that makes parse_note raise for BOOM, as the patched one does in this process.
PARSE_NOTE_RAISING = (
    "from brain.index import parsing\n"
    "real = parsing.parse_note\n"
    "def parse_note(path, *a, **k):\n"
    f"    if path == {BOOM!r}: raise ValueError('a bug met in ' + path)\n"
    "    return real(path, *a, **k)\n"
    "parsing.parse_note = parse_note\n"
)
# A parse worker whose parse_note raises for BOOM.
BROKEN_WORKER = [
    sys.executable,
    "-c",
    f"import sys; sys.path.insert(0, {ROOT!r})\n"
    + PARSE_NOTE_RAISING
    + "parsing.serve(sys.stdin.buffer, sys.stdout.buffer)\n",
]


def _vault(root: Path) -> Path:
    for i in range(6):
        write(root, f"Note {i}.md", f"# Note {i}\n\nAbout topic {i} and [[Note {(i + 1) % 6}]].\n")
    write(root, BOOM, "# Boom\n\nThe quagga lives here.\n")
    return root


def _skipped(vault: Path) -> dict[str, dict]:
    return {s["path"]: s for s in vault_status(vault).skipped}


@pytest.fixture
def brain_logs(monkeypatch, caplog):
    # Earlier tests may have left the brain logger quiet (--quiet) or not propagating (serve).
    monkeypatch.setattr(logging.getLogger("brain"), "propagate", True)
    caplog.set_level(logging.WARNING, logger="brain")
    return caplog


def test_a_note_whose_parse_raises_is_skipped_and_the_run_goes_on(tmp_path, monkeypatch, brain_logs):
    vault = _vault(tmp_path / "vault")
    monkeypatch.setenv("BRAIN_PARSE_WORKERS", "0")
    monkeypatch.setattr(parsing, "parse_note", _raising(parsing.parse_note))
    report, directory = index_into(tmp_path / "home", vault)
    assert report.new == 6 and report.skipped == 1
    with IndexView(directory) as view:
        assert view.paths() == {f"Note {i}.md" for i in range(6)}
    [warning] = [w for w in report.warnings if w["path"] == BOOM]
    assert warning["message"].startswith("skipped (parse-error): ValueError: a bug met in Boom.md (")
    assert "a bug in brain, please report it" in warning["message"]
    assert any(BOOM in r.getMessage() and "parse-error" in r.getMessage() for r in brain_logs.records)
    with monkeypatch.context() as env:
        env.setenv("BRAIN_HOME", str(tmp_path / "home"))
        assert _skipped(vault)[BOOM]["reason"] == "parse-error"  # listed by `brain status -v`
    monkeypatch.undo()  # brain fixed: the next run indexes it
    monkeypatch.setenv("BRAIN_PARSE_WORKERS", "0")
    report, directory = index_into(tmp_path / "home", vault)
    assert report.new == 1 and report.skipped == 0
    with IndexView(directory) as view:
        assert BOOM in view.paths()


def test_an_indexed_note_whose_parse_now_raises_keeps_its_indexed_text(tmp_path, monkeypatch):
    vault = _vault(tmp_path / "vault")
    monkeypatch.setenv("BRAIN_PARSE_WORKERS", "0")
    index_into(tmp_path / "home", vault)
    write(vault, BOOM, "# Boom\n\nThe quagga moved out.\n")
    with monkeypatch.context() as patched:
        patched.setattr(parsing, "parse_note", _raising(parsing.parse_note))
        report, directory = index_into(tmp_path / "home", vault)
        assert report.changed == 0 and report.removed == 0 and report.skipped == 1
        with IndexView(directory) as view:
            assert "quagga lives here" in view.chunks(BOOM)[0]["text"]  # as it was
        with patched.context() as env:
            env.setenv("BRAIN_HOME", str(tmp_path / "home"))
            assert "its indexed text is kept until it parses" in _skipped(vault)[BOOM]["detail"]
            assert vault_status(vault).pending["changed"] == 0  # skipped, not a change the next run indexes
    report, directory = index_into(tmp_path / "home", vault)
    assert report.changed == 1 and report.skipped == 0
    with IndexView(directory) as view:
        assert "quagga moved out" in view.chunks(BOOM)[0]["text"]


def test_a_renamed_note_whose_parse_raises_leaves_its_old_path(tmp_path, monkeypatch):
    """Its old file is gone: kept under the old path, the index would name a file that is not."""
    vault = _vault(tmp_path / "vault")
    monkeypatch.setenv("BRAIN_PARSE_WORKERS", "0")
    (vault / BOOM).rename(vault / "Old.md")
    index_into(tmp_path / "home", vault)
    (vault / "Old.md").rename(vault / BOOM)
    monkeypatch.setattr(parsing, "parse_note", _raising(parsing.parse_note))
    report, directory = index_into(tmp_path / "home", vault)
    assert report.removed == 1 and report.skipped == 1 and report.renamed == 0
    with IndexView(directory) as view:
        assert "Old.md" not in view.paths() and BOOM not in view.paths()


def test_brain_index_prints_the_warning_and_counts_the_note_skipped(tmp_path, monkeypatch):
    vault = _vault(tmp_path / "vault")
    monkeypatch.setenv("BRAIN_PARSE_WORKERS", "0")
    monkeypatch.setattr(parsing, "parse_note", _raising(parsing.parse_note))
    result = _invoke("index", "--vault", str(vault))
    assert result.exit_code == 0, result.output
    [line] = [line for line in result.stderr.splitlines() if BOOM in line]
    assert "skipped (parse-error): ValueError" in line and "a bug in brain" in line
    result = _invoke("index", "--vault", str(vault), "--json")  # read again, and said again
    assert result.exit_code == 0, result.output
    output = json.loads(result.stdout)
    assert output["skipped"] == 1 and [w["path"] for w in output["warnings"]] == [BOOM]
    result = _invoke("status", "--vault", str(vault), "-v")
    assert result.exit_code == 0, result.output
    assert BOOM in result.output and "parse-error" in result.output


def _items(count: int) -> list[tuple[int, parsing.Work]]:
    paths = [f"n{i}.md" if i != 3 else BOOM for i in range(count)]
    return [(i, (path, f"# {path}\n\ntext {i}".encode(), 0.0, frozenset(), "heading")) for i, path in enumerate(paths)]


def test_a_worker_answers_for_a_note_whose_parse_raises_and_keeps_its_batch(monkeypatch, brain_logs):
    """The worker answers a ParseFailed for that note alone: its batch is not parsed again here."""
    monkeypatch.setattr(parsing, "NOTES_PER_TASK", 2)
    monkeypatch.setattr(parsing, "PARALLEL_FROM", 0)
    monkeypatch.setattr(parsing, "WORKER", BROKEN_WORKER)
    monkeypatch.setattr(parsing, "parse_and_chunk", None)  # this process must not parse
    with Parser[int](expected=8, workers=2) as pooled:
        assert pooled.workers == 2
        got = list(pooled.parsed(_items(8)))
    assert [k for k, _ in got] == list(range(8))
    failed = got[3][1]
    assert isinstance(failed, ParseFailed) and failed.error.startswith("ValueError: a bug met in Boom.md (")
    assert all(not isinstance(p, ParseFailed) and p is not None for k, p in got if k != 3)
    assert "parse worker failed" not in brain_logs.text


def test_in_process_a_note_whose_parse_raises_costs_only_itself(monkeypatch):
    monkeypatch.setattr(parsing, "parse_note", _raising(parsing.parse_note))
    with Parser[int](expected=8, workers=0) as inline:
        got = list(inline.parsed(_items(8)))
    assert isinstance(got[3][1], ParseFailed)
    assert [k for k, p in got if not isinstance(p, ParseFailed)] == [0, 1, 2, 4, 5, 6, 7]


def test_memory_error_is_not_taken_for_one_notes_fault(monkeypatch):
    def out_of_memory(*args, **kwargs):
        raise MemoryError

    monkeypatch.setattr(parsing, "parse_note", out_of_memory)
    with Parser[int](expected=1, workers=0) as inline, pytest.raises(MemoryError):
        list(inline.parsed(_items(1)))


@pytest.mark.slow  # worker processes
def test_a_run_through_the_workers_skips_the_note_as_one_process_does(tmp_path, monkeypatch):
    vault = _vault(tmp_path / "vault")
    monkeypatch.setattr(parsing, "PARALLEL_FROM", 0)
    monkeypatch.setattr(parsing, "NOTES_PER_TASK", 2)
    monkeypatch.setattr(parsing, "WORKER", BROKEN_WORKER)
    monkeypatch.setenv("BRAIN_PARSE_WORKERS", "2")
    pool, pool_dir = index_into(tmp_path / "pool", vault)
    monkeypatch.setenv("BRAIN_PARSE_WORKERS", "0")
    monkeypatch.setattr(parsing, "parse_note", _raising(parsing.parse_note))
    one, one_dir = index_into(tmp_path / "one", vault)
    assert pool.new == one.new == 6 and pool.skipped == one.skipped == 1
    with IndexView(pool_dir) as a, IndexView(one_dir) as b:
        assert a.paths() == b.paths() == {f"Note {i}.md" for i in range(6)}


def test_a_note_whose_parse_raises_keeps_its_links_when_the_link_fences_change(tmp_path, monkeypatch):
    vault = _vault(tmp_path / "vault")
    write(vault, BOOM, "# Boom\n\n```dataview\n[[Note 1]]\n```\n")
    write(vault, "Fenced.md", "# Fenced\n\n```dataview\n[[Note 2]]\n```\n")
    monkeypatch.setenv("BRAIN_PARSE_WORKERS", "0")
    monkeypatch.setenv("BRAIN_LINK_FENCES", "none")
    index_into(tmp_path / "home", vault)
    monkeypatch.setenv("BRAIN_LINK_FENCES", "dataview")
    monkeypatch.setattr(indexer, "parse_note", _raising(indexer.parse_note))
    report, directory = index_into(tmp_path / "home", vault)
    [warning] = [w for w in report.warnings if w["path"] == BOOM]
    assert "its links are kept as they were (ValueError" in warning["message"]
    with IndexView(directory) as view:
        assert view.targets("Fenced.md") == {"Note 2.md"}  # the run went on past it
        assert view.targets(BOOM) == set()


def test_brain_note_says_in_one_line_that_a_note_cannot_be_parsed(monkeypatch):
    monkeypatch.setattr(reading, "parse_note", _raising(reading.parse_note))
    with pytest.raises(BrainError, match=r"^Boom\.md cannot be parsed \(ValueError: .*a bug in brain"):
        shaped_note(BOOM, NoteMatch(BOOM), b"# Boom\n", 0.0, None, 1000)


@pytest.mark.slow  # a server's threads and the file system's events
def test_a_server_pass_skips_the_note_and_serves_the_others(tmp_path, monkeypatch, brain_home):
    from serve_helpers import served, settled

    vault = _vault(tmp_path / "vault")
    (vault / BOOM).unlink()
    monkeypatch.setenv("BRAIN_PARSE_WORKERS", "0")
    index_into(brain_home, vault)
    monkeypatch.setattr(parsing, "parse_note", _raising(parsing.parse_note))
    with served(vault) as daemon:
        write(vault, BOOM, "# Boom\n\nThe quagga lives here.\n")
        write(vault, "Fresh.md", "# Fresh\n\nThe okapi note.\n")
        settled(daemon, BOOM, "Fresh.md")
        paths = daemon.service.run(lambda r: set(r.store.note_rows()), timeout=30)
        assert "Fresh.md" in paths and BOOM not in paths
        assert daemon.service.unindexed is None  # the pass went through


def _counting(real, parsed: list[str]):
    """``_raising(real)``, listing in ``parsed`` each path it was asked to parse."""
    raising = _raising(real)

    def parse_note(path, *args, **kwargs):
        parsed.append(path)
        return raising(path, *args, **kwargs)

    return parse_note


def _ask_no_server(vault: Path, logs, *extra: str) -> str:
    """What `brain ask --no-server` logged (its warnings: the CLI's own stderr handler stays
    bound to the first invocation's stream, the log records tell)."""
    logs.clear()
    result = _invoke("ask", "--vault", str(vault), "--no-server", "--no-rerank", *extra, "quagga")
    assert result.exit_code == 0, result.output
    return logs.text


def test_brain_ask_does_not_parse_again_a_note_whose_parse_raised_unchanged(tmp_path, monkeypatch, brain_logs):
    """Its record made `brain status` say nothing was pending, while `brain ask`'s check counted
    it changed: every ask ran an index pass that parsed it again and logged the warning again."""
    vault = _vault(tmp_path / "vault")
    monkeypatch.setenv("BRAIN_PARSE_WORKERS", "0")
    parsed: list[str] = []
    monkeypatch.setattr(parsing, "parse_note", _counting(parsing.parse_note, parsed))
    assert _invoke("index", "--vault", str(vault)).exit_code == 0
    assert parsed.count(BOOM) == 1
    assert sum(vault_status(vault).pending.values()) == 0
    for extra in ((), ("--no-update",)):
        logged = _ask_no_server(vault, brain_logs, *extra)
        assert BOOM not in logged and "changed since the last index" not in logged
    assert parsed.count(BOOM) == 1
    write(vault, "Fresh.md", "# Fresh\n\nThe okapi note.\n")  # a pass for another note leaves it too
    logged = _ask_no_server(vault, brain_logs)
    assert BOOM not in logged and parsed.count(BOOM) == 1
    assert _skipped(vault)[BOOM]["reason"] == "parse-error"  # the pass kept its record
    write(vault, BOOM, "# Boom\n\nThe quagga moved.\n")  # changed: parsed again, and said again
    assert sum(vault_status(vault).pending.values()) == 1
    logged = _ask_no_server(vault, brain_logs)
    assert f"{BOOM}: skipped (parse-error)" in logged and parsed.count(BOOM) == 2
    brain_logs.clear()
    assert _invoke("index", "--vault", str(vault)).exit_code == 0  # asked for: parsed again
    assert f"{BOOM}: skipped (parse-error)" in brain_logs.text and parsed.count(BOOM) == 3


def test_an_indexed_note_whose_parse_now_raises_is_not_stale_for_brain_ask(tmp_path, monkeypatch, brain_logs):
    vault = _vault(tmp_path / "vault")
    monkeypatch.setenv("BRAIN_PARSE_WORKERS", "0")
    assert _invoke("index", "--vault", str(vault)).exit_code == 0
    write(vault, BOOM, "# Boom\n\nThe quagga moved out.\n")
    parsed: list[str] = []
    monkeypatch.setattr(parsing, "parse_note", _counting(parsing.parse_note, parsed))
    assert _invoke("index", "--vault", str(vault)).exit_code == 0
    assert "changed since the last index" not in _ask_no_server(vault, brain_logs, "--no-update")
    assert BOOM not in _ask_no_server(vault, brain_logs)
    assert parsed.count(BOOM) == 1


def test_another_version_of_brain_parses_again_a_note_whose_parse_raised(tmp_path, monkeypatch, brain_logs):
    """An upgrade may parse it: its `brain ask` does not wait for an explicit `brain index`."""
    vault = _vault(tmp_path / "vault")
    monkeypatch.setenv("BRAIN_PARSE_WORKERS", "0")
    real = parsing.parse_note
    monkeypatch.setattr(parsing, "parse_note", _raising(real))
    assert _invoke("index", "--vault", str(vault)).exit_code == 0
    monkeypatch.setattr(parsing, "parse_note", real)  # the new version's
    monkeypatch.setattr(changes, "parser_key", lambda: "another parser")
    assert vault_status(vault).pending["new"] == 1
    _ask_no_server(vault, brain_logs)
    with IndexView(config.index_dir(vault)) as view:
        assert BOOM in view.paths()
    assert BOOM not in _skipped(vault) and sum(vault_status(vault).pending.values()) == 0


def test_brain_serves_passes_leave_a_note_whose_parse_raised_unchanged(tmp_path, monkeypatch, brain_logs):
    """Each pass (a save of any note, a rescan) parsed it again and logged it again, and it
    counted out of step (``_out_of_step``: the notes a failed pass leaves stale, and whether an
    outside `brain index` brought the vault level again)."""
    from brain.server.service import Service

    vault = _vault(tmp_path / "vault")
    monkeypatch.setenv("BRAIN_PARSE_WORKERS", "0")
    parsed: list[str] = []
    monkeypatch.setattr(parsing, "parse_note", _counting(parsing.parse_note, parsed))
    service = Service(vault.resolve(), embedder=FakeEmbedder(), watch=False)
    assert service._index() is not None and parsed.count(BOOM) == 1
    write(vault, "Fresh.md", "# Fresh\n\nThe okapi note.\n")
    brain_logs.clear()
    report = service._index()
    assert report.new == 1 and BOOM not in brain_logs.text and parsed.count(BOOM) == 1
    assert service._out_of_step() == 0


# `brain index` (as a process of the brain at sys.path[0]) with parse_note raising for BOOM
INDEX_WITH_A_BUG = (
    "import sys, fakes\n" + PARSE_NOTE_RAISING + "from brain.__main__ import main\nsys.argv[0] = 'brain'\nmain()\n"
)
STATUS = "import sys, fakes; sys.argv[0] = 'brain'; from brain.__main__ import main; main()"


@pytest.mark.slow  # subprocesses, each with a copy of brain
def test_an_upgrade_that_changed_the_parser_parses_again_a_note_whose_parse_raised(tmp_path, brain_home):
    """The parser was known by ``brain.__version__``, "0.1.0" through every change: a note an old
    brain failed stayed skipped, unread by `brain ask` and `brain serve`, after an upgrade that
    fixed its parse, until an explicit `brain index`. A brain whose code changed tries it."""
    package = Path(brain.__file__).resolve().parent
    trees = {}
    for name, edited in (("old", None), ("parser fixed", "notes.py"), ("cli changed", "cli.py")):
        trees[name] = tmp_path / name
        shutil.copytree(package, trees[name] / "brain", ignore=shutil.ignore_patterns("__pycache__"))
        if edited:
            with open(trees[name] / "brain" / edited, "a") as source:
                source.write("\n# an upgrade\n")
    vault = _vault(tmp_path / "vault")
    tests = Path(__file__).resolve().parent

    def run(tree: str, code: str, *args: str) -> str:
        env = {**os.environ, "PYTHONPATH": str(trees[tree]), "BRAIN_PARSE_WORKERS": "0"}
        done = subprocess.run(
            [sys.executable, "-c", code, *args], cwd=tests, env=env, capture_output=True, text=True, timeout=120
        )
        assert done.returncode == 0, done.stderr
        return done.stdout

    def pending(tree: str) -> int:
        return sum(json.loads(run(tree, STATUS, "status", "--vault", str(vault), "--json"))["pending"].values())

    run("old", INDEX_WITH_A_BUG, "index", "--vault", str(vault), "--quiet")
    assert pending("old") == 0  # the same parser would raise again
    # any other brain tries it: the parse reaches modules beyond the parser's own
    assert pending("parser fixed") == 1 and pending("cli changed") == 1
