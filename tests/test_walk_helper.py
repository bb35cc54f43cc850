"""The walk's helper process (brain/walk_helper.py): it takes the notes of some folders, and
what the walk finds with it is what it finds alone, whatever the vault holds; a helper that
fails costs only time, and none is left running."""

from __future__ import annotations

import logging
import os
import signal
import sys
import time
from pathlib import Path

import pytest
from conftest import FakeEmbedder, write
from index_helpers import open_store

from brain import vault as vault_module
from brain import walk_helper
from brain.index import changes, scan_snapshot
from brain.index.indexer import index_vault
from brain.vault import Walk, load_ignore, walk
from brain.walk_helper import WalkHelper

TESTS = Path(__file__).resolve().parent


@pytest.fixture
def every_folder(monkeypatch):
    """The helper takes every folder, the root too."""
    monkeypatch.setattr(vault_module, "HELPER_HEAD", -(10**9))
    monkeypatch.setattr(vault_module, "HELPER_MIN_FOLDER", 0)


def _hostile_vault(root: Path, kept: Path | None = None) -> None:
    """Every kind of entry the walk has a rule for, spread over folders; with ``kept``, notes
    and a folder kept there, linked in."""
    write(root, ".brainignore", "ignored.md\nprivate/\n/notes/secret/\n*.draft.md\n")
    for i in range(6):
        write(root, f"f{i}/note {i}.md", f"# Note {i}\n")
        write(root, f"f{i}/deep/inner {i}.MD", "upper-case extension")
        write(root, f"f{i}/.hidden {i}.md", "dot-file")
        write(root, f"f{i}/n{i}.sync-conflict-20260101-abc.md", "conflict copy")
        write(root, f"f{i}/plan {i}.draft.md", "ignored by a pattern")
        write(root, f"f{i}/readme.txt", "not a note")
    write(root, "ignored.md", "IGNORED")
    write(root, "private/p.md", "PRIVATE")
    write(root, ".trash/old.md", "deleted")
    write(root, "notes/secret/s.md", "SECRET")
    write(root, "notes/open.md", "kept")
    write(root, "real/n.md", "kept")
    (root / "folder.md").mkdir()  # a folder named like a note is walked as a folder
    write(root, "folder.md/inside.md", "kept")
    (root / "links").mkdir()
    os.symlink("../ignored.md", root / "links" / "to-ignored.md")
    os.symlink("../.trash", root / "links" / "trash-dir")
    os.symlink("../private", root / "links" / "private-dir")
    os.symlink("../notes", root / "links" / "notes-dir")
    os.symlink("../real/n.md", root / "links" / "alias.md")
    os.symlink("missing.md", root / "links" / "broken.md")
    os.symlink("loop-a.md", root / "links" / "loop-b.md")
    os.symlink("loop-b.md", root / "links" / "loop-a.md")
    os.symlink("..", root / "links" / "up")  # back to the root: a loop
    if kept is not None:
        write(kept, "folder/far.md", "kept elsewhere")
        write(kept, "lone.md", "kept elsewhere")
        os.symlink(kept / "folder", root / "links" / "kept-dir")
        os.symlink(kept / "lone.md", root / "f3" / "lone.md")
        os.symlink(kept / "gone.md", root / "f4" / "gone.md")
    if hasattr(os, "mkfifo"):
        os.mkfifo(root / "links" / "pipe.md")
    if sys.platform.startswith("linux"):  # any bytes make a name there: these are not UTF-8
        with open(os.path.join(os.fsencode(root / "f0"), b"bad \xff name.md"), "w") as handle:
            handle.write("x")


def _same(alone: Walk, helped: Walk) -> None:
    assert helped.notes == alone.notes
    assert helped.skipped == alone.skipped
    assert sorted(helped.unchanged) == sorted(alone.unchanged)
    assert sorted(helped.links, key=repr) == sorted(alone.links, key=repr)


def _snapshot_of(known: dict, notes: list) -> scan_snapshot.Snapshot:
    """A snapshot that says ``known`` the way the index does after changes: a blob of an older
    state (one note by an old size, one long deleted, one not yet added), and the log of those
    three with their rows now."""
    older = dict(known)
    changed, removed, added = notes[3].path, "removed since.md", notes[4].path
    older[changed] = (known[changed][0], known[changed][1] + 7, known[changed][2])
    older[removed] = (77, 1, 1)
    del older[added]
    logged = [(known[changed][0], changed), (known[changed][0], None), (77, removed), (known[added][0], None)]
    current = [(path, *known[path]) for path in (changed, added)]
    snapshot = scan_snapshot.Snapshot(scan_snapshot.encode(older), logged, current)
    assert scan_snapshot.notes(snapshot) == known
    return snapshot


@pytest.mark.skipif(os.name == "nt", reason="symlinks need privileges on Windows")
@pytest.mark.parametrize("compared_there", [False, True], ids=["compared-here", "compared-by-the-helper"])
def test_a_walk_with_the_helper_finds_what_it_finds_alone(tmp_path, tmp_path_factory, every_folder, compared_there):
    kept = tmp_path_factory.mktemp("kept")
    _hostile_vault(tmp_path, kept)
    ignore = load_ignore(tmp_path)
    notes = walk(tmp_path, ignore).notes
    # Known: some notes as they are, one by another size, one by another mtime, one gone.
    known = {f.path: (i, f.size, f.mtime_ns) for i, f in enumerate(notes)}
    known[notes[0].path] = (0, notes[0].size + 1, notes[0].mtime_ns)
    known[notes[1].path] = (1, notes[1].size, notes[1].mtime_ns - 1)
    del known[notes[2].path]
    known["gone.md"] = (99, 1, 1)
    alone = walk(tmp_path, ignore, known=known)
    with WalkHelper.start(os.path.realpath(tmp_path), ignore.spec) as helper:
        if compared_there:
            helper.compare_with(_snapshot_of(known, notes))
            helper._sending.join()  # type: ignore[union-attr]  # written before the first folder
        finish = helper.finish
        answers = []
        helper.finish = lambda: answers.append(finish()) or answers[-1]  # type: ignore[method-assign]
        helped = walk(tmp_path, ignore, known=known, helper=helper)
        assert len(helper.given) >= 15  # every folder walked
    assert helper.process is not None and helper.process.returncode is not None  # stopped
    (found_notes, _, unchanged, _), left = answers[0]
    assert left == []
    if compared_there:  # the helper answered only what differs, and the rest as paths
        assert len(found_notes) == 3 and unchanged is not None and len(unchanged.split("\0")) == len(notes) - 3
    else:
        assert len(found_notes) == len(notes) and unchanged is None
    _same(alone, helped)
    assert len(alone.unchanged) == len(notes) - 3 and len(alone.notes) == 3
    reasons = {s.reason for s in alone.skipped}
    assert {"dot-file", "dot-folder", "sync-conflict", "brainignore", "broken-symlink", "symlink-loop"} <= reasons
    # the links a watcher of the vault's tree does not see through: out of it, or nowhere
    lone, folder = os.stat(kept / "lone.md"), os.stat(kept / "folder")
    assert sorted(alone.links, key=repr) == sorted(
        [
            ("f3/lone.md", (lone.st_dev, lone.st_ino, lone.st_size, lone.st_mtime_ns), None),
            ("f4/gone.md", None, None),
            ("links/broken.md", None, None),
            ("links/kept-dir/", (folder.st_dev, folder.st_ino), str(kept / "folder")),
            ("links/loop-a.md", None, None),
            ("links/loop-b.md", None, None),
        ],
        key=repr,
    )


@pytest.mark.parametrize(
    "command",
    [
        [sys.executable, "-c", "import sys; sys.exit(3)"],  # gone before the first folder
        [sys.executable, "-c", "import sys, pickle; sys.stdin.buffer.read(); pickle.dump(42, sys.stdout.buffer)"],
        [sys.executable, "-c", "import sys; sys.stdin.buffer.read(); sys.stdout.buffer.write(b'not a pickle')"],
        [str(Path(sys.executable).parent / "no-such-python")],  # cannot start at all
    ],
)
@pytest.mark.parametrize("snapshot", [False, True], ids=["no-snapshot", "snapshot"])
def test_a_helper_that_fails_costs_only_time(tmp_path, every_folder, monkeypatch, caplog, command, snapshot):
    for i in range(5):
        write(tmp_path, f"f{i}/note {i}.md", f"# Note {i}\n")
    ignore = load_ignore(tmp_path)
    alone = walk(tmp_path, ignore, known={})
    monkeypatch.setattr(walk_helper, "COMMAND", command)
    with (
        caplog.at_level(logging.WARNING, logger="brain"),
        WalkHelper.start(os.path.realpath(tmp_path), ignore.spec) as helper,
    ):
        if snapshot:
            helper.compare_with(scan_snapshot.Snapshot(scan_snapshot.encode({}), [], []))
            if helper._sending is not None:
                helper._sending.join()  # its write done or failed: the walk hands folders over, or cannot
        helped = walk(tmp_path, ignore, known={}, helper=helper)
    _same(alone, helped)
    assert len(helped.notes) == 5
    assert "walking its folders in this one" in caplog.text or "walking in this one" in caplog.text
    assert helper.process is None or helper.process.returncode is not None


def test_the_update_check_of_a_large_vault_takes_a_helper_and_plans_the_same(tmp_path, monkeypatch, every_folder):
    for i in range(8):
        for j in range(3):
            write(tmp_path, f"f{i}/note {i}-{j}.md", f"# Note {i} {j}\n\nlinks [[note {j}-{i}]]\n")
    index_vault(tmp_path, embedder=FakeEmbedder(), progress=False)
    write(tmp_path, "f1/note 1-0.md", "# Edited\n\nother words\n")  # changed
    write(tmp_path, "f2/new.md", "# New\n")  # new
    (tmp_path / "f3" / "note 3-1.md").unlink()  # deleted
    (tmp_path / "f4" / "note 4-2.md").rename(tmp_path / "f5" / "moved.md")  # renamed

    def summary() -> tuple:
        store = open_store(tmp_path)
        try:
            plan = changes.plan(tmp_path, store)
        finally:
            store.close()
        return (
            sorted(plan.unchanged),
            sorted((f, note_id) for f, note_id in plan.candidates),
            sorted(plan.deleted.items()),
        )

    monkeypatch.setattr(os, "getloadavg", lambda: (0.2, 0.2, 0.2))  # a CPU to spare
    alone = summary()
    started = []
    start = WalkHelper.start.__func__  # type: ignore[attr-defined]
    monkeypatch.setattr(WalkHelper, "start", classmethod(lambda cls, *a: started.append(1) or start(cls, *a)))
    monkeypatch.setattr(walk_helper, "HELPER_FROM", 1)
    compare_with, snapshots = WalkHelper.compare_with, []
    monkeypatch.setattr(WalkHelper, "compare_with", lambda self, s: snapshots.append(s) or compare_with(self, s))
    assert summary() == alone
    assert started == [1]
    assert len(snapshots) == 1 and snapshots[0].logged  # the index's snapshot and its log, compared by the helper
    monkeypatch.setenv("BRAIN_WALK_WORKERS", "0")  # switched off: walked in this process only
    assert summary() == alone
    assert started == [1]
    monkeypatch.delenv("BRAIN_WALK_WORKERS")
    monkeypatch.setattr(os, "getloadavg", lambda: (float(os.cpu_count() or 1), 0.2, 0.2))  # every CPU busy
    assert summary() == alone
    assert started == [1]
    monkeypatch.setattr(os, "getloadavg", lambda: (0.2, 0.2, 0.2))
    assert summary() == alone
    assert started == [1, 1]
    assert len(alone[0]) == 24 - 3 and len(alone[1]) == 3 and len(alone[2]) == 2


def test_the_helpers_answer_goes_whole_through_a_stream_that_takes_part_of_each_write(tmp_path):
    """Under PYTHONUNBUFFERED the helper's stdout is a raw pipe end, whose write may take part
    of a large answer (stopped and continued as it waited for room): all of it is written."""
    import io
    import marshal
    import pickle

    class Trickle:
        def __init__(self) -> None:
            self.data = bytearray()

        def write(self, data) -> int:
            self.data += bytes(data[:1000])
            return min(len(data), 1000)

        def flush(self) -> None:
            pass

    for i in range(300):
        write(tmp_path, f"folder/a fairly long note name {i:04}.md", "x")
    given = io.BytesIO()
    pickle.dump((str(tmp_path), None, None), given)
    pickle.dump((str(tmp_path / "folder"), "folder/", None), given)
    given.seek(0)
    out = Trickle()
    walk_helper.serve(given, out)
    notes, skipped, unchanged, _ = marshal.loads(bytes(out.data))
    assert len(notes) == 300 and skipped == [] and unchanged is None and len(out.data) > 10_000


def test_a_helper_that_never_reads_its_snapshot_costs_no_wait(tmp_path, every_folder, monkeypatch):
    """The snapshot is more than a pipe holds: written by a thread, and the walk hands no folder
    over until it is written. A helper that never reads (hung, stopped) leaves the walk to
    walk every folder itself, then is stopped, its writer thread with it."""
    import threading

    for i in range(5):
        write(tmp_path, f"f{i}/note {i}.md", f"# Note {i}\n")
    ignore = load_ignore(tmp_path)
    alone = walk(tmp_path, ignore, known={})
    monkeypatch.setattr(walk_helper, "COMMAND", [sys.executable, "-c", "import time; time.sleep(120)"])
    big = {f"folder {i // 1000}/a note with a long name, number {i:07}.md": (i, i, i) for i in range(60_000)}
    snapshot = scan_snapshot.Snapshot(scan_snapshot.encode(big), [], [])
    assert len(snapshot.data) > 4_000_000
    outcome: list = []
    started: list[WalkHelper] = []

    def run() -> None:
        with WalkHelper.start(os.path.realpath(tmp_path), ignore.spec) as helper:
            started.append(helper)
            helper.compare_with(snapshot)
            outcome.append(walk(tmp_path, ignore, known={}, helper=helper))
            outcome.append(helper)

    walker = threading.Thread(target=run, daemon=True)
    walker.start()
    walker.join(60)
    try:
        assert not walker.is_alive(), "the walk waited for a helper that never reads"
    finally:  # a walk that hung leaves its helper to this test to stop
        for helper in started:
            if helper.process is not None and helper.process.poll() is None:
                helper.process.kill()
                helper.process.wait()
    helped, helper = outcome
    _same(alone, helped)
    assert helper.given == [] and helper._sending is None
    assert helper.process.returncode is not None  # stopped
    assert not any(t.name == "brain-walk-helper" for t in threading.enumerate())


def test_the_helper_decodes_the_snapshot_it_is_sent_and_answers_only_what_differs(tmp_path):
    import io
    import marshal
    import pickle

    for i in range(4):
        write(tmp_path, f"folder/note {i}.md", "x" * (i + 1))
    files = {f.path: f for f in walk(tmp_path).notes}
    known = {path: (n, f.size, f.mtime_ns) for n, (path, f) in enumerate(sorted(files.items()))}
    known["folder/note 1.md"] = (1, 99, known["folder/note 1.md"][2])  # another size: changed
    del known["folder/note 2.md"]  # not in the index: new
    given = io.BytesIO()
    pickle.dump((str(tmp_path), None, tuple(scan_snapshot.Snapshot(scan_snapshot.encode(known), [], []))), given)
    pickle.dump((str(tmp_path / "folder"), "folder/", None), given)
    given.seek(0)
    out = io.BytesIO()
    walk_helper.serve(given, out)
    notes, skipped, unchanged, _ = marshal.loads(out.getvalue())
    assert sorted(n[0] for n in notes) == ["folder/note 1.md", "folder/note 2.md"]
    assert skipped == [] and sorted(unchanged.split("\0")) == ["folder/note 0.md", "folder/note 3.md"]


@pytest.mark.skipif(not hasattr(signal, "SIGSTOP"), reason="POSIX job control")
def test_a_snapshot_written_across_a_stop_and_continue_arrives_whole(tmp_path, every_folder):
    """Ctrl-Z then `fg` stops and continues the run's processes: a helper stopped while its
    snapshot is being written, then continued, reads all of it and compares with it."""
    for i in range(5):
        write(tmp_path, f"f{i}/note {i}.md", f"# Note {i}\n")
    ignore = load_ignore(tmp_path)
    notes = walk(tmp_path, ignore).notes
    known = {f.path: (n, f.size, f.mtime_ns) for n, f in enumerate(notes)}
    known[notes[0].path] = (0, notes[0].size + 1, notes[0].mtime_ns)  # one changed
    # Much more than a pipe holds, so the writer blocks while the helper is stopped.
    padded = {**known, **{f"elsewhere/padding note {i:07}.md": (1000 + i, i, i) for i in range(60_000)}}
    alone = walk(tmp_path, ignore, known=padded)
    with WalkHelper.start(os.path.realpath(tmp_path), ignore.spec) as helper:
        assert helper.process is not None
        os.kill(helper.process.pid, signal.SIGSTOP)
        try:
            helper.compare_with(scan_snapshot.Snapshot(scan_snapshot.encode(padded), [], []))
            time.sleep(0.3)
            assert helper._sending is not None and helper._sending.is_alive()  # blocked on the full pipe
        finally:
            os.kill(helper.process.pid, signal.SIGCONT)
        helper._sending.join(30)
        assert not helper._sending.is_alive()
        finish = helper.finish
        answers = []
        helper.finish = lambda: answers.append(finish()) or answers[-1]  # type: ignore[method-assign]
        helped = walk(tmp_path, ignore, known=padded, helper=helper)
    _same(alone, helped)
    (found_notes, _, unchanged, _), left = answers[0]
    assert left == [] and len(found_notes) == 1 and unchanged is not None and len(unchanged.split("\0")) == 4


_KILLED_WALKER = """
import os, sys, time
from pathlib import Path
from brain import vault, walk_helper
from brain.index import changes
from index_helpers import open_store

vault.HELPER_HEAD, vault.HELPER_MIN_FOLDER, walk_helper.HELPER_FROM = -(10**9), 0, 1
os.getloadavg = lambda: (0.0, 0.0, 0.0)  # a CPU to spare
root, pid_file = Path(sys.argv[1]), Path(sys.argv[2])
take = walk_helper.WalkHelper.take

def slow_take(self, *args):  # the walk is killed here, its helper running, the snapshot sent
    if self._sending is not None:  # its snapshot sent first, however loaded the machine: else
        self._sending.join()  # six small folders are walked before the helper may take one
    done = take(self, *args)
    if done and not pid_file.exists():
        pid_file.write_text(str(self.process.pid))
        time.sleep(60)
    return done

walk_helper.WalkHelper.take = slow_take
store = open_store(root)
changes.plan(root, store)
"""


@pytest.mark.skipif(not hasattr(signal, "SIGKILL"), reason="POSIX signals")
def test_the_helper_of_a_walk_killed_in_the_middle_ends_with_it(tmp_path):
    """`kill -9` of `brain index` mid-walk: its helper sees its input end, answers into a
    closed pipe and exits; no process is left behind."""
    import subprocess

    vault = tmp_path / "vault"
    for i in range(6):
        write(vault, f"f{i}/note {i}.md", f"# Note {i}\n")
    index_vault(vault, embedder=FakeEmbedder(), progress=False)
    pid_file = tmp_path / "helper.pid"
    walker = subprocess.Popen([sys.executable, "-c", _KILLED_WALKER, str(vault), str(pid_file)], cwd=TESTS)
    helper_pid = None
    try:
        deadline = time.monotonic() + 60
        while not pid_file.exists() and walker.poll() is None and time.monotonic() < deadline:
            time.sleep(0.05)
        assert pid_file.exists(), f"the walk never gave its helper a folder (exit {walker.poll()})"
        helper_pid = int(pid_file.read_text())
        walker.kill()
        walker.wait()
        deadline = time.monotonic() + 20
        while _alive(helper_pid) and time.monotonic() < deadline:
            time.sleep(0.05)
        assert not _alive(helper_pid), "the helper outlived the walk killed in the middle"
    finally:
        if walker.poll() is None:
            walker.kill()
            walker.wait()
        if helper_pid is not None and _alive(helper_pid):
            os.kill(helper_pid, signal.SIGKILL)


def _alive(pid: int) -> bool:
    """Whether ``pid`` still runs (a zombie, exited but not reaped by its dead parent, does not)."""
    try:
        with open(f"/proc/{pid}/stat") as handle:
            return handle.read().split(") ", 1)[1][0] != "Z"
    except FileNotFoundError:
        return False
    except OSError:
        try:
            os.kill(pid, 0)
        except ProcessLookupError:
            return False
        return True


def test_the_time_of_work_beside_the_walk_is_shared_with_the_helper(monkeypatch):
    """The helper is credited with half the work's guessed time in entries, then set right by
    half the time it took: all of it to the helper made the walk wait for the helper."""
    clock = iter([0.0, 0.1, 1.0, 1.3])  # built; first folder handed over; the work's start, end
    monkeypatch.setattr(vault_module.time, "perf_counter", lambda: next(clock))
    ran = []
    pending = vault_module._Meanwhile(lambda: ran.append(1))
    pending.walked = 1000  # in 0.1 s: 10,000 entries a second
    assert pending.handed_over(False) == int(vault_module.MEANWHILE_GUESS_S / 2 * 10_000)
    assert pending.handed_over(False) == 0 and not ran  # the credit not yet handed over
    assert pending.handed_over(True) == int(0.3 / 2 * 10_000) - pending.credit
    assert ran == [1] and pending.done


@pytest.mark.skipif(os.name == "nt", reason="symlinks need privileges on Windows")
@pytest.mark.parametrize("fails", [False, True], ids=["work", "failing-work"])
def test_work_beside_the_walk_runs_once_while_the_helper_walks_and_changes_nothing_found(
    tmp_path, monkeypatch, caplog, fails
):
    _hostile_vault(tmp_path)
    ignore = load_ignore(tmp_path)
    alone = walk(tmp_path, ignore)
    monkeypatch.setattr(vault_module, "HELPER_HEAD", 0)  # the root walked here, then folders handed over
    monkeypatch.setattr(vault_module, "HELPER_MIN_FOLDER", 0)
    monkeypatch.setattr(vault_module, "MEANWHILE_GUESS_S", 0.0)
    seen: list[int] = []

    with WalkHelper.start(os.path.realpath(tmp_path), ignore.spec) as helper:

        def work() -> None:
            seen.append(len(helper.given))  # the folders the helper had then
            if fails:
                raise ImportError("no faiss here")

        finish = helper.finish
        finished = []
        helper.finish = lambda: finished.append(seen[:]) or finish()  # type: ignore[method-assign]
        with caplog.at_level(logging.DEBUG, logger="brain"):
            helped = walk(tmp_path, ignore, helper=helper, meanwhile=work)
        given = len(helper.given)
    _same(alone, helped)
    assert len(seen) == 1 and seen[0] >= 1  # once, with a folder in the helper's hands
    assert finished == [seen] and given > seen[0]  # during the walk: folders handed over after it
    assert ("work beside the walk failed" in caplog.text) == fails
    ran: list[int] = []
    walk(tmp_path, ignore, meanwhile=lambda: ran.append(1))  # no helper: not done here at all
    assert ran == []


def test_opening_a_recaller_imports_the_search_during_the_update_checks_walk(tmp_path, monkeypatch):
    from brain.recall import opening

    for i in range(8):
        for j in range(3):
            write(tmp_path, f"f{i}/note {i}-{j}.md", f"# Note {i} {j}\n\nlinks [[note {j}-{i}]]\n")
    index_vault(tmp_path, embedder=FakeEmbedder(), progress=False)
    monkeypatch.setattr(os, "getloadavg", lambda: (0.2, 0.2, 0.2))  # a CPU to spare
    monkeypatch.setattr(walk_helper, "HELPER_FROM", 1)
    monkeypatch.setattr(vault_module, "HELPER_HEAD", 0)
    monkeypatch.setattr(vault_module, "HELPER_MIN_FOLDER", 0)
    monkeypatch.setattr(vault_module, "MEANWHILE_GUESS_S", 0.0)
    during: list[bool] = []
    take = WalkHelper.take

    def ready_take(self: WalkHelper, *folder: str | None) -> bool:  # a tiny vault: the helper up first
        if self._sending is not None:
            self._sending.join()
        return take(self, *folder)  # type: ignore[arg-type]

    monkeypatch.setattr(WalkHelper, "take", ready_take)
    monkeypatch.setattr(opening, "_import_search", lambda: during.append(True))
    recaller = opening.open_recaller(tmp_path, embedder=FakeEmbedder(), update=True, rerank_model=None)
    try:
        assert during == [True]
        assert recaller.ask("note", "vector").results
    finally:
        recaller.close()


class _HelperHere:
    """A helper that runs ``walk_helper.serve`` in this process, over its wire (the folders
    pickled in, the answer marshalled out); ``meanwhile`` runs before it walks them."""

    def __init__(self, real_root: str, spec, meanwhile=lambda: None) -> None:
        import io
        import pickle

        self.given = io.BytesIO()
        pickle.dump((real_root, spec, None), self.given)
        self.meanwhile = meanwhile

    def take(self, dirpath: str, prefix: str, real_prefix: str | None) -> bool:
        import pickle

        pickle.dump((dirpath, prefix, real_prefix), self.given)
        return True

    def finish(self):
        import io
        import marshal

        self.given.seek(0)
        out = io.BytesIO()
        self.meanwhile()
        walk_helper.serve(self.given, out)
        return marshal.loads(out.getvalue()), []


@pytest.mark.skipif(os.name == "nt", reason="POSIX file modes")
def test_the_helper_answers_why_a_note_or_folder_failed_as_the_walk_does(tmp_path, every_folder, monkeypatch):
    """The helper sent a skipped file back as (path, reason, detail): a note denied to brain lost
    the errno that tells it from one gone (its history then said deleted, not made unreadable),
    and a folder it could no longer list was "unreadable" whatever failed, so an EIO there
    deleted its notes where the walk keeps them (a read error that may pass)."""
    import errno
    import stat

    write(tmp_path, "a/open.md", "# Open\n")
    secret = write(tmp_path, "a/secret.md", "# Secret\n")
    write(tmp_path, "b/note.md", "# Note\n")
    secret.chmod(0)
    real_open, failing = os.open, []

    def open_as_a_user(path, flags, *args, **kwargs):
        if os.fspath(path) in failing:
            raise OSError(errno.EIO, "Input/output error", os.fspath(path))
        if isinstance(path, str | Path) and os.path.isfile(path) and not os.stat(path).st_mode & stat.S_IRUSR:
            raise PermissionError(errno.EACCES, "Access is denied", os.fspath(path))  # as Windows words it
        return real_open(path, flags, *args, **kwargs)

    monkeypatch.setattr(os, "open", open_as_a_user)
    ignore = load_ignore(tmp_path)
    # b/ fails with EIO after the walk listed it, as the helper lists it again
    broken = _HelperHere(str(tmp_path), ignore.spec, lambda: failing.append(str(tmp_path / "b")))
    helped = walk(tmp_path, ignore, helper=broken)
    assert [(s.path, s.reason) for s in helped.skipped] == [("a/secret.md", "unreadable"), ("b", "read-error")]
    assert [s.errno for s in helped.skipped] == [errno.EACCES, errno.EIO]
    failing.clear()
    alone = walk(tmp_path, ignore)
    assert [(s.path, s.reason, s.denied) for s in alone.skipped] == [("a/secret.md", "unreadable", True)]
    _same(alone, walk(tmp_path, ignore, helper=_HelperHere(str(tmp_path), ignore.spec)))


@pytest.mark.skipif(os.name == "nt", reason="POSIX errnos")
def test_a_folder_the_helper_cannot_list_for_a_moment_is_listed_again(tmp_path, every_folder, monkeypatch):
    """The helper listed a folder once: one whose listing met EMFILE for a moment kept its notes
    out of the run (a read-error) where the walk, as a note's read, tries it again."""
    import errno

    write(tmp_path, "a/open.md", "# Open\n")
    write(tmp_path, "b/note.md", "# Note\n")
    folder = (tmp_path / "b").stat()
    real, armed, failed = os.scandir, [], []

    def fails_once(path=".", *args, **kwargs):  # by path, or by the folder's descriptor
        st = os.stat(path)
        if armed and not failed and (st.st_dev, st.st_ino) == (folder.st_dev, folder.st_ino):
            failed.append(path)
            raise OSError(errno.EMFILE, os.strerror(errno.EMFILE), str(tmp_path / "b"))
        return real(path, *args, **kwargs)

    monkeypatch.setattr(os, "scandir", fails_once)
    ignore = load_ignore(tmp_path)
    # armed once the walk listed b/, as the helper lists it again
    helped = walk(tmp_path, ignore, helper=_HelperHere(str(tmp_path), ignore.spec, lambda: armed.append(True)))
    assert failed and helped.skipped == []
    assert sorted(n.path for n in helped.notes) == ["a/open.md", "b/note.md"]
