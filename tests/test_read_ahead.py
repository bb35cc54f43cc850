"""A run that reads many notes asks the kernel to read each ahead (``vault.will_read``), so that
a cold disk's reads overlap the work on the notes before: every note asked for once, before it
is read and not far before, what is read the same, and nothing asked for in a small run."""

from __future__ import annotations

import collections
import os
import sys

import pytest
from conftest import FakeEmbedder, write

from brain import config
from brain.index import changes
from brain.index.indexer import index_vault
from brain.index.store import IndexStore

pytestmark = pytest.mark.skipif(not hasattr(os, "posix_fadvise"), reason="no posix_fadvise here")


def _vault(root, notes: int) -> None:
    for i in range(notes):
        write(root, f"d{i % 3}/note {i}.md", f"# note {i}\n\nbody {i} [[note {(i + 1) % notes}]]\n")


def _read(
    vault, monkeypatch, verify: bool = False, directory=None
) -> tuple[list[tuple[str, str, bytes | None]], list[tuple[str, str]]]:
    """Each change read (kind, path, bytes), and the order of advice and reads by path."""
    events: list[tuple[str, str]] = []
    real_read = changes.read_note_bytes
    by_fd: dict[int, str] = {}
    real_open = os.open

    def opened(path, flags, *args, **kwargs):
        fd = real_open(path, flags, *args, **kwargs)
        by_fd[fd] = str(path)
        return fd

    def advise(fd, offset, length, advice):
        assert advice == os.POSIX_FADV_WILLNEED and offset == 0 and length >= 0
        events.append(("advise", by_fd[fd]))

    def read(file, limit, fd=None):
        events.append(("read", file.abspath))
        return real_read(file, limit, fd)

    monkeypatch.setattr(os, "open", opened)
    monkeypatch.setattr(os, "posix_fadvise", advise)
    monkeypatch.setattr(changes, "read_note_bytes", read)
    store = IndexStore.open(directory or vault.parent / "index")
    try:
        plan = changes.plan(vault, store, verify=verify)
        out = [(c.kind, c.file.path, c.data) for c in changes.read(plan, store)]
    finally:
        store.close()
        monkeypatch.undo()
    return out, events


def test_many_notes_are_each_asked_for_once_ahead_of_their_read(tmp_path, monkeypatch):
    vault = tmp_path / "vault"
    _vault(vault, 40)
    monkeypatch.setattr(changes, "READ_AHEAD", 3)
    monkeypatch.setattr(changes, "READ_AHEAD_FROM", 10**9)
    plain, events = _read(vault, monkeypatch)
    assert not [e for e in events if e[0] == "advise"]
    monkeypatch.setattr(changes, "READ_AHEAD", 3)
    monkeypatch.setattr(changes, "READ_AHEAD_FROM", 5)
    ahead, events = _read(vault, monkeypatch)
    assert ahead == plain and len(ahead) == 40  # what is read is the same
    advised = [path for kind, path in events if kind == "advise"]
    read = [path for kind, path in events if kind == "read"]
    assert sorted(advised) == sorted(read) and len(set(advised)) == 40  # each once
    for at, path in enumerate(read):
        before = events[: events.index(("read", path))]
        assert ("advise", path) in before  # asked for before it is read
        assert len([e for e in before if e[0] == "advise"]) <= at + 4  # and at most 3 ahead


def test_a_note_gone_before_its_advice_is_skipped_as_before(tmp_path, monkeypatch):
    """A note deleted between the walk and the read: the advice fails quietly, the read says
    what it always said (unreadable), and the run goes on."""
    vault = tmp_path / "vault"
    _vault(vault, 12)
    monkeypatch.setattr(changes, "READ_AHEAD_FROM", 5)
    real_plan = changes.plan

    def plan(root, store, **kwargs):
        found = real_plan(root, store, **kwargs)
        (vault / "d0" / "note 3.md").unlink()
        return found

    monkeypatch.setattr(changes, "plan", plan)
    report = index_vault(vault, embedder=FakeEmbedder(), progress=False)
    assert report.notes == 11
    assert [w["path"] for w in report.warnings] == ["d0/note 3.md"]
    assert "unreadable" in report.warnings[0]["message"]


def test_a_small_run_asks_for_nothing(tmp_path, monkeypatch):
    vault = tmp_path / "vault"
    _vault(vault, 12)
    _, events = _read(vault, monkeypatch)
    assert events and not [e for e in events if e[0] == "advise"]


def test_verify_asks_for_every_note_ahead_too(tmp_path, monkeypatch):
    """`brain index --verify` reads every unchanged note again: ahead, as a first build does."""
    vault = tmp_path / "vault"
    _vault(vault, 12)
    index_vault(vault, embedder=FakeEmbedder(), progress=False)
    monkeypatch.setattr(changes, "READ_AHEAD_FROM", 5)
    out, events = _read(vault, monkeypatch, verify=True, directory=config.index_dir(vault))
    assert [kind for kind, _, _ in out] == ["same"] * 12  # each read again: the same bytes
    advised = [path for kind, path in events if kind == "advise"]
    assert sorted(advised) == sorted(path for kind, path in events if kind == "read")


_OPENS: list[collections.Counter] = []  # while a test counts: every file opened, by path


def _count_opens(event: str, args: tuple) -> None:
    if _OPENS and event == "open" and isinstance(args[0], (str, bytes, os.PathLike)):
        _OPENS[-1][os.fsdecode(args[0])] += 1


sys.addaudithook(_count_opens)  # open(), os.open, Path.read_bytes alike; a hook stays for good


@pytest.mark.parametrize("verify", [False, True])
def test_each_note_is_opened_once_when_read_ahead(tmp_path, monkeypatch, verify):
    """Asked for ahead, each note was opened twice: once to ask the kernel for it, once again by
    its path to read it (10,000 opens over 5,000 new notes, each an event in the inotify queue of
    a watch). The file opened to ask is the file read."""
    vault = tmp_path / "vault"
    _vault(vault, 40)
    monkeypatch.setattr(changes, "READ_AHEAD", 3)
    monkeypatch.setattr(changes, "READ_AHEAD_FROM", 5)  # 2,000 in earnest: 40 notes are over it
    if verify:
        index_vault(vault, embedder=FakeEmbedder(), progress=False)
    advised: list[int] = []
    real_advise = os.posix_fadvise

    def advise(fd, offset, length, advice):
        advised.append(fd)
        return real_advise(fd, offset, length, advice)

    monkeypatch.setattr(os, "posix_fadvise", advise)
    _OPENS.append(collections.Counter())
    try:
        report = index_vault(vault, embedder=FakeEmbedder(), progress=False, verify=verify)
    finally:
        opens = _OPENS.pop()
    assert report.notes == 40 and len(advised) == 40  # every note asked for ahead
    notes = {str(path): opens[str(path)] for path in vault.rglob("*.md")}
    assert notes == {path: 1 for path in notes}


def test_notes_asked_for_ahead_are_not_held_open_under_a_low_open_files_limit(tmp_path, monkeypatch):
    """Held open between the hint and the read, READ_AHEAD notes would take 257 of a `ulimit -n
    256`, SQLite's and FAISS's files none left: under a limit below 4 × 257 the hint's file is
    closed at once."""
    import resource

    vault = tmp_path / "vault"
    _vault(vault, 40)
    monkeypatch.setattr(changes, "READ_AHEAD_FROM", 5)
    soft, hard = resource.getrlimit(resource.RLIMIT_NOFILE)
    held: list[int] = []
    real_read = changes.read_note_bytes

    def read(file, limit, fd=None):
        held.append(len(os.listdir("/proc/self/fd")) if os.path.isdir("/proc/self/fd") else 0)
        return real_read(file, limit, fd)

    monkeypatch.setattr(changes, "read_note_bytes", read)
    # under 4 × 257 but roomy: a process that has run many tests may hold hundreds of files open
    resource.setrlimit(resource.RLIMIT_NOFILE, (min(1000, hard), hard))
    try:
        report = index_vault(vault, embedder=FakeEmbedder(), progress=False)
    finally:
        resource.setrlimit(resource.RLIMIT_NOFILE, (soft, hard))
    assert report.notes == 40
    if held[0]:
        assert max(held) < min(held) + 8  # on main: 40 notes held open at the first read


def test_brain_runs_in_a_fresh_process_with_64_open_files(tmp_path):
    """`ulimit -n 64` (a container's, a shell's), not this test run's limit: `brain index` on more
    notes than read-ahead starts from, `brain serve` indexing an edit and answering, no EMFILE."""
    import resource
    import subprocess

    from serve_helpers import LAUNCHER, brain_env

    vault = tmp_path / "vault"
    notes = changes.READ_AHEAD_FROM + 100
    for i in range(notes):
        write(vault, f"n{i}.md", f"# n{i}\n\nAbout topic {i % 17}, beside [[n{(i + 1) % 50}]].\n")
    env = brain_env(BRAIN_HOME=str(tmp_path / "home"), BRAIN_EMBED_MODEL="fake:64")

    def low_limit() -> None:
        resource.setrlimit(resource.RLIMIT_NOFILE, (64, resource.getrlimit(resource.RLIMIT_NOFILE)[1]))

    def brain(*args: str) -> subprocess.CompletedProcess:
        done = subprocess.run(
            [sys.executable, str(LAUNCHER), *args, "--vault", str(vault)],
            env=env,
            preexec_fn=low_limit,
            capture_output=True,
            text=True,
            timeout=300,
            stdin=subprocess.DEVNULL,
        )
        said = done.stdout + done.stderr
        assert done.returncode == 0 and "Traceback" not in said and "Too many open files" not in said, said
        return done

    assert f"{notes} notes" in brain("index").stdout
    brain("serve", "--detach")
    try:
        write(vault, "n7.md", "# n7\n\nA zqwx marker rule, written while it serves.\n")
        assert "n7" in brain("ask", "zqwx marker rule").stdout
    finally:
        brain("serve", "--stop")
