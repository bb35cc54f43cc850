"""Files brain keeps that cannot be used for what they are: one line naming the file, what is
wrong with it (this user may not read it; a folder, a FIFO, a link to nowhere where a file should
be) and what to do, never "cannot write" of a file that cannot be read, never a wait forever,
and the file left as it was.

Real files and a real kernel: the CLI runs in a subprocess that file modes bind (as root, which
ignores them, through `setpriv` without CAP_DAC_OVERRIDE and CAP_DAC_READ_SEARCH)."""

from __future__ import annotations

import json
import os
import stat
import subprocess
import sys
from pathlib import Path

import pytest
from conftest import FakeEmbedder
from index_helpers import modes_binding_prefix

from brain import config
from brain.index.indexer import index_vault

TESTS = Path(__file__).resolve().parent
OTHER_USER = 12345


def _brain(home: Path, *args: str, stdin: str | None = None) -> subprocess.CompletedProcess:
    env = {**os.environ, "BRAIN_HOME": str(home), "BRAIN_EMBED_MODEL": "fake:64", "BRAIN_RERANK_MODEL": "none"}
    env.pop("BRAIN_DB", None)
    code = "import sys, fakes; sys.argv[0] = 'brain'; from brain.__main__ import main; main()"
    return subprocess.run(
        [*modes_binding_prefix(), sys.executable, "-c", code, *args],
        cwd=TESTS,
        env=env,
        input=stdin,
        capture_output=True,
        text=True,
        timeout=30,
        check=False,
    )


def _one_line(proc: subprocess.CompletedProcess, *needles: str, absent: tuple[str, ...] = ()) -> str:
    assert proc.returncode == 1, (proc.returncode, proc.stderr)
    err = proc.stderr
    assert "Traceback" not in err and err.startswith("Error: ") and err.count("\n") == 1, err
    for needle in needles:
        assert needle in err, (needle, err)
    for word in absent:
        assert word not in err, (word, err)
    return err


def _state(path: Path) -> tuple[int, int, bytes | None]:
    st = os.lstat(path)
    data = path.read_bytes() if stat.S_ISREG(st.st_mode) else None
    return st.st_mode, st.st_uid, data


@pytest.fixture
def indexed(toy_vault, brain_home):
    index_vault(toy_vault, embedder=FakeEmbedder(), progress=False)
    return toy_vault, config.index_dir(toy_vault)


def _unreadable(path: Path) -> None:
    path.chmod(0)


def _another_users(path: Path) -> None:
    os.chown(path, OTHER_USER, OTHER_USER) if os.geteuid() == 0 else pytest.skip("chown needs root")
    path.chmod(0o600)


def _folder(path: Path) -> None:
    path.unlink()
    path.mkdir()
    (path / "kept.txt").write_text("the user's\n", encoding="utf-8")


def _fifo(path: Path) -> None:
    path.unlink()
    os.mkfifo(path)


INDEX_CASES = {
    "mode 000": (_unreadable, ["cannot be read by this user (mode 000", "chmod u+rw"]),
    "another user's": (_another_users, ["cannot be read by this user (mode 600, owner uid 12345)", "chown"]),
    "a folder": (_folder, ["is a folder, not a file: move it aside", "brain index --vault"]),
    "a FIFO": (_fifo, ["is a FIFO, not a file: remove it", "brain index --vault"]),
}


@pytest.mark.slow  # subprocesses
@pytest.mark.parametrize("case", list(INDEX_CASES))
def test_an_index_database_that_cannot_be_opened_says_what_is_wrong_with_it(indexed, brain_home, case):
    """SQLite's "unable to open database file" was said as "cannot write to <the index folder>:
    make it writable" of an index database this user may not read (the folder was writable),
    "could not be used (disk I/O error)" of a folder, and a FIFO made `brain status` wait forever."""
    vault, directory = indexed
    make, needles = INDEX_CASES[case]
    database = directory / "index.db"
    make(database)
    before = _state(database)
    for args in (
        ["status", "--vault", str(vault)],
        ["ask", "--vault", str(vault), "wal"],
        ["index", "--vault", str(vault)],
    ):
        _one_line(_brain(brain_home, *args), f"the index database {database} ", *needles, absent=("cannot write",))
        assert _state(database) == before


def _stop_payload(tmp_path: Path) -> str:
    from ledger_helpers import Transcript, hook_payload

    transcript = Transcript(tmp_path / "t.jsonl")
    transcript.prompt("how does the wal work")
    transcript.text("it logs writes first")
    return json.dumps(hook_payload(transcript.write()))


@pytest.mark.slow  # subprocesses
@pytest.mark.parametrize("case", ["mode 000", "another user's"])
def test_a_brain_database_this_user_may_not_read_is_said_so_not_cannot_create(brain_home, tmp_path, case):
    """A brain.db that exists and may not be read was "cannot create <it> for the brain database:
    Permission denied; make it writable", from `brain turns` and in the hooks' log alike."""
    payload = _stop_payload(tmp_path)
    recorded = _brain(brain_home, "hook", "stop", stdin=payload)
    assert recorded.returncode == 0 and _brain(brain_home, "turns").returncode == 0
    database = brain_home / "brain.db"
    INDEX_CASES[case][0](database)
    before = _state(database)
    needles = ("cannot be read by this user", "chmod u+rw" if case == "mode 000" else "chown")
    _one_line(_brain(brain_home, "turns"), f"the brain database {database} ", *needles, absent=("cannot create",))
    hooked = _brain(brain_home, "hook", "stop", stdin=payload)
    assert hooked.returncode == 0 and hooked.stdout == "" and hooked.stderr == "", hooked
    logged = (brain_home / "logs" / "hook.log").read_text(encoding="utf-8").splitlines()[-1]
    assert f"the brain database {database} cannot be read by this user" in logged and "cannot create" not in logged
    assert _state(database) == before


@pytest.mark.slow  # subprocesses
def test_a_brain_home_or_index_folder_not_to_be_searched_is_one_line_not_a_traceback(indexed, brain_home, tmp_path):
    """A brain home (or a vault's index folder) of mode 000: Path.exists() raises PermissionError
    there, and `brain status`, `brain ask`, `brain index`, `brain note` and `brain turns` died
    of it with Python's traceback; each names the folder and the chmod that opens it."""
    vault, directory = indexed
    payload = _stop_payload(tmp_path)
    assert _brain(brain_home, "hook", "stop", stdin=payload).returncode == 0
    directory.chmod(0)
    try:
        _one_line(
            _brain(brain_home, "ask", "--vault", str(vault), "wal"),
            f"the index database {directory / 'index.db'} cannot be reached: the folder {directory} may not be searched",
            f"chmod u+rwx {directory}",
        )
    finally:
        directory.chmod(0o700)
    brain_home.chmod(0)
    try:
        for args in (["status", "--vault", str(vault)], ["ask", "--vault", str(vault), "wal"], ["turns"]):
            # one line: "WARNING: <home>/.env cannot be read (Permission denied)" came first, the same cause
            _one_line(
                _brain(brain_home, *args),
                f"the folder {brain_home} may not be searched by this user",
                f"chmod u+rwx {brain_home}",
                absent=(".env",),
            )
        hooked = _brain(brain_home, "hook", "stop", stdin=payload)
        assert hooked.returncode == 0 and hooked.stdout == "", hooked
        # the hook installed, and said once that it cannot record (it was said only as the .env unread)
        settings = tmp_path / "claude" / "settings.json"
        installed = _brain(brain_home, "hook", "install", "--settings", str(settings))
        assert installed.returncode == 0 and settings.is_file(), installed.stderr
        # said once, beside the note every changed install gives (a running session keeps its hooks)
        lines = installed.stderr.splitlines()
        assert [line for line in lines if line.startswith("note: the Stop hook cannot record")] == lines[-1:], lines
        assert len(lines) == 2 and lines[0].startswith("note: a Claude Code session already running"), lines
        assert f"the folder {brain_home} may not be searched by this user" in installed.stderr, installed.stderr
    finally:
        brain_home.chmod(0o700)


@pytest.mark.slow  # subprocesses
def test_brain_index_names_the_notes_and_folders_it_may_not_read_once(toy_vault, brain_home):
    """`brain index` said "2 unreadable" among the files skipped, and not which: the notes recall
    no longer finds were named only by `brain status --verbose`. The run that first meets them
    names them (and the rest is indexed); the runs after count them, as before."""
    note, folder = toy_vault / "AI" / "Agent memory.md", toy_vault / "Cooking"
    note.chmod(0)
    folder.chmod(0)
    try:
        first = _brain(brain_home, "index", "--vault", str(toy_vault))
        assert first.returncode == 0, first.stderr
        said = [line for line in first.stdout.splitlines() if "may not read" in line]
        assert len(said) == 1, first.stdout
        assert "AI/Agent memory.md (Permission denied)" in said[0] and "Cooking (Permission denied)" in said[0]
        assert "2 unreadable" in first.stdout and "Traceback" not in first.stderr
        again = _brain(brain_home, "index", "--vault", str(toy_vault))
        assert again.returncode == 0 and "may not read" not in again.stdout, again.stdout
        assert "2 unreadable" in again.stdout
        status = _brain(brain_home, "status", "--vault", str(toy_vault), "--verbose")
        assert "unreadable     AI/Agent memory.md  Permission denied" in status.stdout, status.stdout
    finally:
        note.chmod(0o644)
        folder.chmod(0o755)
    assert note.read_text(encoding="utf-8")  # left as it was


@pytest.mark.slow  # subprocesses
def test_vector_and_recall_cache_files_that_cannot_be_read_are_rebuilt_and_said_of_the_file(indexed, brain_home):
    """What brain derives (the vector index, the recall cache) is rebuilt when it cannot be
    read; but a FIFO named vectors.json or recall-cache.npz made `brain ask` wait forever for
    a writer, and an unreadable vectors.faiss was said in FAISS's words ("Error in
    faiss::MmappedFileMappingOwner::PImpl::PImpl(…)"), not as the file this user may not read."""
    vault, directory = indexed
    ask = ["ask", "--vault", str(vault), "--json", "--no-update", "sqlite wal checkpoint"]
    assert _brain(brain_home, *ask).returncode == 0  # writes the recall cache
    (directory / "vectors.faiss").chmod(0)
    asked = _brain(brain_home, *ask)
    assert asked.returncode == 0 and json.loads(asked.stdout)["results"], asked.stderr
    assert f"the vector index file {directory / 'vectors.faiss'} cannot be read by this user" in asked.stderr
    assert "faiss::" not in asked.stderr and "Traceback" not in asked.stderr
    for name in ("vectors.json", "recall-cache.npz"):
        _fifo(directory / name)
        asked = _brain(brain_home, *ask)
        assert asked.returncode == 0 and json.loads(asked.stdout)["results"], asked.stderr
        assert "Traceback" not in asked.stderr
        if name == "vectors.json":
            assert f"the vector index file {directory / name} is a FIFO, not a file" in asked.stderr


@pytest.mark.slow  # subprocesses
def test_a_folder_at_the_vector_index_file_is_one_line_not_a_rebuild_at_every_ask(indexed, brain_home):
    """A folder where vectors.faiss goes cannot be replaced by a save (brain deletes none): every
    `brain ask` rebuilt the vectors in memory and warned twice, "brain saves a new one in its place"
    and then "could not save the rebuilt vector index: [Errno 21] Is a directory". It is the one
    line that names the folder and the fix; once moved aside, the next ask saves the file."""
    vault, directory = indexed
    faiss_file = directory / "vectors.faiss"
    _folder(faiss_file)
    ask = ["ask", "--vault", str(vault), "--json", "--no-update", "sqlite wal checkpoint"]
    for _ in range(2):
        _one_line(
            _brain(brain_home, *ask),
            f"the vector index file {faiss_file} is a folder, not a file: move it aside",
            absent=("could not save", "rebuilding"),
        )
    assert (faiss_file / "kept.txt").read_text(encoding="utf-8") == "the user's\n"  # left as it was
    faiss_file.rename(directory / "moved-aside")
    for _ in range(2):
        asked = _brain(brain_home, *ask)
        assert asked.returncode == 0 and json.loads(asked.stdout)["results"], asked.stderr
    assert faiss_file.is_file() and "vector index" not in asked.stderr, asked.stderr


@pytest.mark.slow  # subprocesses
def test_a_folder_at_the_recall_cache_is_one_line_not_a_build_at_every_ask(indexed, brain_home):
    """A folder where recall-cache.npz goes cannot be replaced by a save either: every `brain ask`
    without a server built the names and the link graph again (2.1 s at 100,000 notes), said at
    info level only. It is the one line naming the folder and the fix, as for vectors.faiss; once
    moved aside, the next ask keeps the file."""
    vault, directory = indexed
    cache_file = directory / "recall-cache.npz"
    ask = ["ask", "--vault", str(vault), "--json", "--no-update", "sqlite wal checkpoint"]
    asked = _brain(brain_home, *ask)
    assert asked.returncode == 0 and cache_file.is_file(), asked.stderr
    _folder(cache_file)
    for _ in range(2):
        _one_line(
            _brain(brain_home, *ask),
            f"{cache_file} is a folder, not a file: move it aside; the next `brain ask` keeps a new one",
        )
    assert (cache_file / "kept.txt").read_text(encoding="utf-8") == "the user's\n"  # left as it was
    cache_file.rename(directory / "moved-aside")
    asked = _brain(brain_home, *ask)
    assert asked.returncode == 0 and json.loads(asked.stdout)["results"], asked.stderr
    assert cache_file.is_file() and "recall-cache" not in asked.stderr, asked.stderr


@pytest.mark.slow  # subprocesses
def test_a_backup_of_what_this_user_may_not_read_is_one_line_not_a_backup_short_of_it(indexed, brain_home, tmp_path):
    """`brain backup` looked past what it could not read: a brain home of mode 000 was a traceback
    (PermissionError on hook-installs.json), its vaults folder "nothing to back up: … holds no index",
    an index folder of mode 000 ended the look at the vaults (those after it left out of a backup that
    succeeded), and an index.db of mode 000 "unable to open database file". Each is one line naming
    it and the chmod; nothing is made at DEST."""
    vault, _ = indexed
    second = tmp_path / "second"
    (second / "Note.md").parent.mkdir()
    (second / "Note.md").write_text("# Note\n\nA second vault.\n", encoding="utf-8")
    index_vault(second, embedder=FakeEmbedder(), progress=False)
    first = min(config.index_dir(vault), config.index_dir(second))  # the one looked at first
    dest = tmp_path / "copy"
    cases = [
        (brain_home, f"the folder {brain_home} may not be searched by this user", f"chmod u+rwx {brain_home}"),
        (brain_home / "vaults", f"{brain_home / 'vaults'} cannot be read by this user", "chmod u+rwx"),
        (first, f"the index database {first / 'index.db'} cannot be reached: the folder {first}", "chmod u+rwx"),
        (first / "index.db", f"the index database {first / 'index.db'} cannot be read by this user", "chmod u+rw "),
    ]
    for path, *needles in cases:
        mode = stat.S_IMODE(path.stat().st_mode)
        path.chmod(0)
        try:
            _one_line(_brain(brain_home, "backup", str(dest)), *needles, "nothing was backed up")
        finally:
            path.chmod(mode)
        assert not dest.exists()
    done = _brain(brain_home, "backup", str(dest))
    assert done.returncode == 0 and len(list((dest / "vaults").iterdir())) == 2, done.stderr


async def _mcp_calls(vault: Path, home: Path) -> dict[str, tuple[bool, str]]:
    from mcp import Client, StdioServerParameters
    from serve_helpers import LAUNCHER, brain_env

    prefix = modes_binding_prefix()
    command, args = (prefix[0], [*prefix[1:], sys.executable]) if prefix else (sys.executable, [])
    env = brain_env(BRAIN_HOME=str(home), BRAIN_EMBED_MODEL="fake:64", BRAIN_RERANK_MODEL="none")
    params = StdioServerParameters(command=command, args=[*args, str(LAUNCHER), "mcp", "--vault", str(vault)], env=env)
    calls = {"search": {"query": "sqlite wal", "k": 2}, "get_note": {"note": "Home"}, "status": {}}
    answers = {}
    async with Client(params, mode="legacy", read_timeout_seconds=30) as session:
        for name, arguments in calls.items():
            result = await session.call_tool(name, arguments)
            answers[name] = (result.is_error, "".join(part.text for part in result.content))
    return answers


@pytest.mark.slow  # subprocesses
@pytest.mark.parametrize("case", ["a FIFO", "index folder 000"])
def test_brain_mcp_tools_say_what_is_wrong_with_the_index_file(indexed, brain_home, case):
    """`brain mcp` hung as it started on a FIFO named index.db (the count in its instructions
    opened it read-only, waiting for a writer), and over an index folder of mode 000 each tool
    answered "brain failed on this call (PermissionError: …)", a bug's words (Path.exists in the
    service); each tool says what is wrong with the file, as the CLI does."""
    import asyncio

    vault, directory = indexed
    if case == "a FIFO":
        _fifo(directory / "index.db")
        said = f"the index database {directory / 'index.db'} is a FIFO, not a file"
    else:
        directory.chmod(0)
        said = f"cannot be reached: the folder {directory} may not be searched by this user"
    try:
        answers = asyncio.run(asyncio.wait_for(_mcp_calls(vault, brain_home), 90))
    finally:
        directory.chmod(0o700)
    for name, (is_error, text) in answers.items():
        assert is_error and said in text and "failed on this call" not in text, (name, text)


@pytest.mark.slow  # subprocesses
def test_ask_says_a_note_it_may_no_longer_read_is_left_out_not_that_it_is_gone(indexed, brain_home):
    """`brain ask --no-update` over a note made unreadable since the index (chmod 000) said it
    left out "the one whose file is gone, deleted or renamed": the file is there."""
    vault, _directory = indexed
    note = vault / "AI" / "Agent memory.md"
    note.chmod(0)
    try:
        asked = _brain(brain_home, "ask", "--vault", str(vault), "--json", "--no-update", "agent memory")
    finally:
        note.chmod(0o644)
    assert asked.returncode == 0, asked.stderr
    answer = json.loads(asked.stdout)
    assert "AI/Agent memory.md" not in [r["path"] for r in answer["results"]]
    warning = " ".join(answer["warnings"])
    assert "(the one this user may no longer read is left out)" in warning and "gone" not in warning, warning


@pytest.mark.slow  # subprocesses
def test_brain_note_on_a_note_it_may_no_longer_read_says_what_to_do(indexed, brain_home):
    """`brain note` said "AI/Agent memory.md is in the index but cannot be read now (Permission
    denied)" and stopped there; it says the way back, and leaves the file as it was."""
    vault, _directory = indexed
    note = vault / "AI" / "Agent memory.md"
    note.chmod(0)
    try:
        _one_line(
            _brain(brain_home, "note", "--vault", str(vault), "Agent memory"),
            "AI/Agent memory.md is in the index but cannot be read now (Permission denied): "
            "give this user read access to it again",
        )
        assert stat.S_IMODE(note.stat().st_mode) == 0
    finally:
        note.chmod(0o644)


@pytest.mark.slow  # subprocesses
@pytest.mark.parametrize("make", [_fifo, _folder], ids=["a FIFO", "a folder"])
def test_a_lock_file_that_is_not_a_file_is_named_not_waited_on(indexed, brain_home, make):
    """The vault's writer lock (<index>.lock) a FIFO: `brain status` and `brain index` waited
    for a writer forever; a folder: `brain index` died of IsADirectoryError. The server's lock
    (serve.lock) a FIFO: `brain status`, `brain ask` and `brain serve` waited forever."""
    from brain.index.writer_lock import lock_path
    from brain.server import runtime

    vault, directory = indexed
    writer = lock_path(directory)
    writer.touch()
    make(writer)
    status = _brain(brain_home, "status", "--vault", str(vault))
    assert status.returncode == 0 and "Traceback" not in status.stderr, status.stderr
    kind = "FIFO" if make is _fifo else "folder"
    _one_line(_brain(brain_home, "index", "--vault", str(vault)), f"the vault's writer lock {writer} is a {kind}")
    assert os.path.exists(writer) and not os.path.isfile(writer)  # left as it was

    served = runtime.lock_path(vault)
    served.parent.mkdir(mode=0o700, parents=True, exist_ok=True)
    served.touch()
    make(served)
    for args in (["status", "--vault", str(vault)], ["ask", "--vault", str(vault), "--no-update", "wal"]):
        proc = _brain(brain_home, *args)
        assert proc.returncode == 0 and "Traceback" not in proc.stderr, (args, proc.stderr)
    _one_line(_brain(brain_home, "serve", "--vault", str(vault)), f"brain serve's lock {served} is a {kind}")


@pytest.mark.slow  # subprocesses
@pytest.mark.parametrize("case", ["mode 000", "a folder", "a FIFO"])
def test_a_brain_database_log_that_cannot_be_opened_is_named_in_the_hook_log(brain_home, tmp_path, case):
    """brain.db-wal of mode 000 or a folder: the Stop hook logged "cannot open <brain.db> (unable
    to open database file): check that <home> is a folder you can write", a FIFO "disk I/O
    error": neither the database nor its folder is what is wrong."""
    payload = _stop_payload(tmp_path)
    assert _brain(brain_home, "hook", "stop", stdin=payload).returncode == 0
    wal = brain_home / "brain.db-wal"
    if not wal.exists():
        wal.touch(mode=0o600)
    INDEX_CASES[case][0](wal)
    hooked = _brain(brain_home, "hook", "stop", stdin=payload)
    assert hooked.returncode == 0 and hooked.stdout == "" and hooked.stderr == "", hooked
    logged = (brain_home / "logs" / "hook.log").read_text(encoding="utf-8").splitlines()[-1]
    assert f"the brain database's write-ahead log {wal} " in logged, logged
    assert "folder you can write" not in logged and "disk I/O error" not in logged


@pytest.mark.slow  # subprocesses
def test_a_read_only_index_database_in_a_writable_folder_is_said_of_the_file(indexed, brain_home):
    """index.db chmod a-w in a folder brain may write: `brain index` said "cannot write to <the
    index folder> …: make it writable or set BRAIN_HOME" (the folder was writable: doing so
    changed nothing). It names the file and the chmod; `brain ask` and `status` still answer."""
    vault, directory = indexed
    database = directory / "index.db"
    database.chmod(0o400)
    _one_line(
        _brain(brain_home, "index", "--vault", str(vault)),
        f"the index database {database} is read-only for this user (mode 400",
        f"chmod u+w {database}",
        absent=("BRAIN_HOME",),
    )
    assert _brain(brain_home, "status", "--vault", str(vault)).returncode == 0
    assert stat.S_IMODE(database.stat().st_mode) == 0o400


def test_brain_turns_with_a_brain_home_that_is_a_file_says_so(tmp_path, monkeypatch):
    """BRAIN_HOME a file: `brain turns` said "no turns recorded yet", as of an empty home, while
    no turn could ever be recorded there."""
    from click.testing import CliRunner

    from brain.cli import cli

    home = tmp_path / "home"
    home.write_text("not a folder\n", encoding="utf-8")
    monkeypatch.setenv("BRAIN_HOME", str(home))
    monkeypatch.delenv("BRAIN_DB", raising=False)
    result = CliRunner().invoke(cli, ["turns"])
    assert result.exit_code == 1 and "Traceback" not in result.output, result.output
    assert result.output == (
        f"Error: cannot read {home / 'brain.db'}: {home} is a file, not a folder; "
        "BRAIN_HOME (and BRAIN_DB) must lead to a folder\n"
    )
    assert home.read_text(encoding="utf-8") == "not a folder\n"


def test_an_index_database_linked_to_a_disk_not_mounted_is_not_no_index(indexed, tmp_path):
    """index.db a symbolic link into a folder that is not there (a disk not mounted): `brain ask`
    said "no index for <vault> yet: run `brain index`", and `brain status` reported nothing
    indexed, as of a vault never indexed; both name the link and where it leads."""
    from click.testing import CliRunner

    from brain.cli import cli

    vault, directory = indexed
    database = directory / "index.db"
    target = tmp_path / "unmounted" / "index.db"
    database.unlink()
    database.symlink_to(target)
    for args in (["ask", "--vault", str(vault), "wal"], ["status", "--vault", str(vault)]):
        result = CliRunner().invoke(cli, args)
        assert result.exit_code == 1 and "Traceback" not in result.output, result.output
        assert result.output.startswith(
            f"Error: the index database {database} is a symbolic link to {target}, which does not exist"
        ), result.output
        assert "no index for" not in result.output
    assert database.is_symlink() and not target.parent.exists()
