"""A note brain cannot open for a reason that passes: too many open files (EMFILE, ENFILE), no
memory (ENOMEM), try again (EAGAIN), interrupted (EINTR). Unlike a refusal (EACCES) or a file gone
(ENOENT), the fault is the moment's, not the note's: a note indexed before keeps its indexed
state, its history says nothing ended, and the next `brain index` reads it again; a new note is
not silently left out."""

from __future__ import annotations

import errno
import json
import os
import subprocess
import sys
from pathlib import Path

import pytest
from conftest import write
from test_hardening_index import _index, _invoke

from brain import config
from brain.index.status import vault_status
from brain.index.store import IndexStore
from brain.recall.timeline import history_text, note_history

pytestmark = pytest.mark.skipif(os.name == "nt", reason="POSIX errnos")

TEXT = "# Diary\n\nThe quagga password is kept here.\n"
PASSING = [errno.EMFILE, errno.ENFILE, errno.ENOMEM, errno.EAGAIN, errno.EINTR]


@pytest.fixture
def failing(monkeypatch):
    """failing(paths, err): every open of those files or folders fails with ``err``;
    failing() ends it."""
    real = os.open
    broken: dict[str, int] = {}

    def open_or_fail(path, flags, *args, **kwargs):
        err = broken.get(os.fspath(path))
        if err is not None:
            raise OSError(err, os.strerror(err), os.fspath(path))
        return real(path, flags, *args, **kwargs)

    monkeypatch.setattr(os, "open", open_or_fail)

    def make(paths: list[Path] = (), err: int = errno.EMFILE) -> None:  # type: ignore[assignment]
        broken.clear()
        broken.update({os.fspath(p): err for p in paths})

    return make


def _paths(vault: Path) -> set[str]:
    store = IndexStore.open(config.index_dir(vault), create=False)
    try:
        return set(store.note_rows())
    finally:
        store.close()


def _skipped(vault: Path) -> dict[str, str]:
    return {s["path"]: s["reason"] for s in vault_status(vault).skipped}


def _touch(path: Path) -> None:
    st = path.stat()
    os.utime(path, ns=(st.st_atime_ns, st.st_mtime_ns + 10**9))


@pytest.mark.parametrize("err", PASSING, ids=errno.errorcode.get)
def test_an_indexed_note_that_cannot_be_opened_for_a_passing_reason_keeps_its_index(toy_vault, failing, err):
    note = write(toy_vault, "Diary.md", TEXT)
    _index(toy_vault)
    _touch(note)  # changed by its stat: read again
    failing([note], err)
    report = _index(toy_vault)
    assert report.removed == 0 and "Diary.md" in _paths(toy_vault)
    assert _skipped(toy_vault)["Diary.md"] == "read-error"
    assert vault_status(toy_vault).pending_paths["deleted"] == []
    told = history_text(note_history(toy_vault, "Diary.md"))
    assert "deleted" not in told and "unreadable" not in told, told
    failing()
    _index(toy_vault)
    assert "Diary.md" in _paths(toy_vault) and "Diary.md" not in _skipped(toy_vault)


@pytest.mark.parametrize("err", PASSING, ids=errno.errorcode.get)
def test_verify_keeps_a_note_it_cannot_open_for_a_passing_reason(toy_vault, failing, err):
    note = write(toy_vault, "Diary.md", TEXT)
    _index(toy_vault)
    failing([note], err)
    report = _index(toy_vault, verify=True)
    assert report.removed == 0 and "Diary.md" in _paths(toy_vault)
    told = history_text(note_history(toy_vault, "Diary.md"))
    assert "deleted" not in told and "unreadable" not in told, told


@pytest.mark.parametrize("err", PASSING, ids=errno.errorcode.get)
def test_a_folder_that_cannot_be_listed_for_a_passing_reason_keeps_its_notes(toy_vault, failing, err):
    _index(toy_vault)
    cooking = {p for p in _paths(toy_vault) if p.startswith("Cooking/")}
    assert cooking
    failing([toy_vault / "Cooking"], err)
    report = _index(toy_vault)
    assert report.removed == 0 and cooking <= _paths(toy_vault)


@pytest.mark.parametrize("err", PASSING, ids=errno.errorcode.get)
def test_a_note_whose_open_fails_once_for_a_passing_reason_is_indexed(toy_vault, monkeypatch, err):
    """Read once, a note whose open met EMFILE (or ENOMEM, EINTR…) for a moment was left out of
    a first `brain index` as a read-error, and an indexed one kept stale text, until a later run."""
    note = write(toy_vault, "Diary.md", TEXT)
    real, failed = os.open, []

    def fails_once(path, flags, *args, **kwargs):
        if os.fspath(path) == os.fspath(note) and not failed:
            failed.append(path)
            raise OSError(err, os.strerror(err), os.fspath(path))
        return real(path, flags, *args, **kwargs)

    monkeypatch.setattr(os, "open", fails_once)
    report = _index(toy_vault)
    assert failed and "Diary.md" in _paths(toy_vault) and "Diary.md" not in _skipped(toy_vault)
    assert report.warnings == []


@pytest.mark.skipif(not Path("/proc/self/fd").is_dir(), reason="counts open files in /proc/self/fd")
def test_notes_held_open_ahead_are_let_go_when_open_files_run_out(tmp_path, monkeypatch):
    """Notes held open ahead of their read (``READ_AHEAD``) under a limit they fill: a note's
    open met EMFILE and it was left out (`ulimit -n 64`: 700 of 2,100 notes indexed, exit 0)."""
    from brain.index import changes

    vault = tmp_path / "vault"
    for i in range(150):
        write(vault, f"Note {i}.md", f"# Note {i}\n\nquagga {i}\n")
    monkeypatch.setattr(changes, "READ_AHEAD_FROM", 10)
    monkeypatch.setattr(changes, "READ_AHEAD", 40)
    monkeypatch.setattr(changes, "_may_hold_open", lambda: True)
    real, room = os.open, len(os.listdir("/proc/self/fd")) + 25  # a limit the notes ahead fill
    refused = []

    def limited(path, flags, *args, **kwargs):
        if len(os.listdir("/proc/self/fd")) >= room:
            refused.append(path)
            raise OSError(errno.EMFILE, os.strerror(errno.EMFILE), os.fspath(path))
        return real(path, flags, *args, **kwargs)

    monkeypatch.setattr(os, "open", limited)
    report = _index(vault)
    assert refused  # the limit was met
    assert {f"Note {i}.md" for i in range(150)} <= _paths(vault), report.warnings
    assert report.warnings == []


def test_notes_brain_index_could_not_read_for_a_passing_fault_make_it_exit_1(toy_vault, failing):
    """Notes whose open failed with EMFILE at every try were left out of a first `brain index`,
    a warning each, and it exited 0: a script took the index for complete."""
    notes = [write(toy_vault, f"New {i}.md", f"# New {i}\n\nquagga {i}\n") for i in range(3)]
    failing(notes, errno.EMFILE)
    result = _invoke("index", "--vault", str(toy_vault))
    assert result.exit_code == 1, result.output
    assert "Traceback" not in result.output and "files skipped (3 read-error" in result.output, result.output
    last = result.output.strip().splitlines()[-1]
    assert "New 0.md and 2 others could not be read now (Too many open files)" in last, last
    assert "`brain index` again" in last and "ulimit -n" in last, last
    for extra in ("--json", "--quiet"):
        assert _invoke("index", "--vault", str(toy_vault), extra).exit_code == 1
    failing()
    result = _invoke("index", "--vault", str(toy_vault))
    assert result.exit_code == 0, result.output
    assert {f"New {i}.md" for i in range(3)} <= _paths(toy_vault)


def test_an_indexed_note_kept_for_a_fault_makes_brain_index_exit_1(toy_vault, failing):
    """ENOMEM keeps the indexed note and fails the run, and so does EIO (a fault of the disk or
    the note's place, which `brain status` lists), with the way out of one that stays."""
    note = write(toy_vault, "Diary.md", TEXT)
    _index(toy_vault)
    _touch(note)
    failing([note], errno.ENOMEM)
    result = _invoke("index", "--vault", str(toy_vault))
    assert result.exit_code == 1 and "Diary.md could not be read now" in result.output, result.output
    assert "ulimit" not in result.output and "Diary.md" in _paths(toy_vault)
    assert "run `brain index` again" in result.output.strip().splitlines()[-1], result.output
    failing([note], errno.EIO)
    result = _invoke("index", "--vault", str(toy_vault))
    assert result.exit_code == 1 and "Diary.md" in _paths(toy_vault), result.output
    assert "mend the disk or the share, or .brainignore them" in result.output.strip().splitlines()[-1]
    failing([note], errno.ENAMETOOLONG)  # no disk to mend: a path past what the system opens
    result = _invoke("index", "--vault", str(toy_vault))
    last = result.output.strip().splitlines()[-1]
    assert result.exit_code == 1 and "mend the disk" not in last, result.output
    assert "path is longer than the system opens" in last and ".brainignore them" in last, last


def test_a_note_on_a_failing_disk_makes_every_brain_index_exit_1_until_it_reads(tmp_path):
    """A note whose every read fails with EIO (a bad sector; here os.open made to fail so in the
    `brain index` process): it was left out, or kept as indexed, a warning each run, and the run
    exited 0, so a cron job that reads exit codes took the index for up to date, night after night.
    It exits 1 on one line naming the note, --json's not_read has it ("EIO"), and `.brainignore`
    (leaving it out on purpose) or the disk mended ends it."""
    vault = tmp_path / "vault"
    write(vault, "Kept.md", "# Kept\n\nquagga\n")
    bad = write(vault, "Bad sector.md", "# Bad sector\n\nokapi\n")
    code = (
        "import errno, os, sys, fakes; real = os.open; bad = os.environ['FAIL_OPEN']\n"
        "def failing(path, *args, **kwargs):\n"
        "    if bad and os.fspath(path) == bad: raise OSError(errno.EIO, os.strerror(errno.EIO), os.fspath(path))\n"
        "    return real(path, *args, **kwargs)\n"
        "os.open = failing; sys.argv[0] = 'brain'\n"
        "from brain.__main__ import main; main()\n"
    )
    env = {**os.environ, "BRAIN_HOME": str(tmp_path / "home"), "BRAIN_EMBED_MODEL": "fake:64"}
    env["BRAIN_RERANK_MODEL"] = "none"

    def index(*extra: str, fail: Path | None = bad) -> subprocess.CompletedProcess:
        return subprocess.run(
            [sys.executable, "-c", code, "index", "--vault", str(vault), *extra],
            cwd=Path(__file__).parent,
            env={**env, "FAIL_OPEN": os.fspath(fail) if fail else ""},
            capture_output=True,
            text=True,
            timeout=300,
            check=False,
        )

    for _ in range(2):  # the first run, and the next: read again, failed again
        done = index()
        assert done.returncode == 1 and "Traceback" not in done.stderr, done.stderr[-2000:]
        last = done.stderr.strip().splitlines()[-1]
        assert last.startswith("Error: Bad sector.md could not be read now (Input/output error)"), last
        assert done.stdout.startswith("1 notes") and "1 read-error" in done.stdout, done.stdout
    done = index("--json")
    assert done.returncode == 1, done.stderr[-2000:]
    not_read = json.loads(done.stdout)["not_read"]
    assert not_read == [{"path": "Bad sector.md", "detail": "Input/output error", "errno": "EIO"}], not_read
    (vault / ".brainignore").write_text("Bad sector.md\n")
    assert index().returncode == 0  # left out on purpose
    (vault / ".brainignore").unlink()
    done = index(fail=None)  # the disk mended
    assert done.returncode == 0 and done.stdout.startswith("2 notes"), done.stdout + done.stderr[-2000:]


@pytest.mark.parametrize("err", [errno.EMFILE, errno.ENFILE], ids=errno.errorcode.get)
def test_the_open_files_hint_is_chosen_by_errno_not_by_english_words(toy_vault, failing, monkeypatch, err):
    """The `ulimit -n` hint was chosen by "open files" in the error's text: a system speaking
    French ("Trop de fichiers ouverts") got none, and an ENOMEM worded so would have got it."""
    messages = {errno.EMFILE: "Trop de fichiers ouverts", errno.ENFILE: "Trop de fichiers ouverts dans le système"}
    messages[errno.ENOMEM] = "no more open files, of memory"  # English that names open files
    monkeypatch.setattr(os, "strerror", lambda code: messages.get(code, f"erreur {code}"))
    note = write(toy_vault, "Nouveau.md", "# Nouveau\n\nquagga\n")
    failing([note], err)
    result = _invoke("index", "--vault", str(toy_vault))
    last = result.output.strip().splitlines()[-1]
    assert result.exit_code == 1 and f"Nouveau.md could not be read now ({messages[err]})" in last, last
    assert "ulimit -n" in last, last
    report = _invoke("index", "--vault", str(toy_vault), "--json")
    assert report.exit_code == 1 and "ulimit -n" in report.stderr, report.output
    not_read = json.loads(report.stdout)["not_read"]
    assert not_read == [{"path": "Nouveau.md", "detail": messages[err], "errno": errno.errorcode[err]}], not_read
    failing([note], errno.ENOMEM)
    result = _invoke("index", "--vault", str(toy_vault))
    assert result.exit_code == 1 and "no more open files, of memory" in result.output, result.output
    assert "ulimit" not in result.output, result.output


def test_brain_index_under_a_real_open_files_limit_reads_every_note(tmp_path):
    """`ulimit -n 64` in a fresh brain, read-ahead made to hold notes open: 700 of 2,100 notes
    were indexed, 1,400 skipped as read-error (Too many open files), exit 0."""
    resource = pytest.importorskip("resource")
    del resource
    vault = tmp_path / "vault"
    for i in range(400):
        write(vault, f"Note {i}.md", f"# Note {i}\n\nquagga {i}\n")
    code = (
        "import sys, resource, fakes; resource.setrlimit(resource.RLIMIT_NOFILE, (64, 64));"
        "import brain.index.changes as c; c._may_hold_open = lambda: True; c.READ_AHEAD_FROM = 100;"
        "sys.argv[0] = 'brain'; from brain.__main__ import main; main()"
    )
    env = {**os.environ, "BRAIN_HOME": str(tmp_path / "home"), "BRAIN_EMBED_MODEL": "fake:64"}
    done = subprocess.run(
        [sys.executable, "-c", code, "index", "--vault", str(vault)],
        cwd=Path(__file__).parent,
        env={**env, "BRAIN_RERANK_MODEL": "none"},
        capture_output=True,
        text=True,
        timeout=300,
        check=False,
    )
    assert done.returncode == 0, done.stderr[-2000:]
    assert "Too many open files" not in done.stderr and "Traceback" not in done.stderr, done.stderr[-2000:]
    assert done.stdout.startswith("400 notes"), done.stdout


@pytest.mark.parametrize("err", PASSING, ids=errno.errorcode.get)
def test_a_folder_whose_listing_fails_once_for_a_passing_reason_is_indexed(toy_vault, monkeypatch, err):
    """Listed once, a folder whose listing met EMFILE (or ENOMEM, EINTR…) for a moment kept its
    notes out of the run (a first `brain index` left them out) and it exited 1, where a note's
    read failing so is tried again (``changes.read``)."""
    folder = toy_vault / "Cooking"
    at = folder.stat()
    real, failed = os.scandir, []

    def fails_once(path=".", *args, **kwargs):  # by path, or by the folder's descriptor
        st = os.stat(path)
        if (st.st_dev, st.st_ino) == (at.st_dev, at.st_ino) and not failed:
            failed.append(path)
            raise OSError(err, os.strerror(err), os.fspath(folder))
        return real(path, *args, **kwargs)

    monkeypatch.setattr(os, "scandir", fails_once)
    result = _invoke("index", "--vault", str(toy_vault))
    assert failed and result.exit_code == 0, result.output
    cooking = {p.relative_to(toy_vault).as_posix() for p in folder.glob("*.md")}
    assert cooking and cooking <= _paths(toy_vault)
    assert not any(path.startswith("Cooking") for path in _skipped(toy_vault))


@pytest.mark.parametrize("err", [errno.EMFILE, errno.ENFILE, errno.ENOMEM], ids=errno.errorcode.get)
def test_a_vault_folder_listed_short_of_files_says_what_ran_out_not_chmod(toy_vault, failing, err):
    """The vault folder itself listed at the open-files limit at every try (`brain serve` under
    `ulimit -n 20`, 40 clients asking): the line said to `chmod u+rx` a folder brain may read.
    It names what ran out (`ulimit -n` for EMFILE), and the index keeps every note."""
    _index(toy_vault)
    before = _paths(toy_vault)
    failing([toy_vault], err)
    result = _invoke("index", "--vault", str(toy_vault))
    line = result.output.strip().splitlines()[-1]
    assert result.exit_code == 1 and f"cannot read the vault folder {toy_vault}" in line, result.output
    assert "chmod" not in line and "left as it was" in line, line
    assert ("ulimit -n" in line) == (err == errno.EMFILE), line
    failing()
    assert _paths(toy_vault) == before
