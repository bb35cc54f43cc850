"""A moved vault's take-over (brain/index/moved.py) tried the hard way: two runs at once, at the
same new path or at two (copies of a vault whose original is gone), a run killed (kill -9) at each
step of a take-over, what a killed `brain serve` of the old path left."""

from __future__ import annotations

import json
import os
import shutil
import signal
import subprocess
import sys
from pathlib import Path

import pytest
from click.testing import CliRunner

from brain import config
from brain.cli import cli
from brain.index import moved
from brain.index.status import vault_status
from brain.index.writer_lock import lock_path

pytestmark = pytest.mark.skipif(os.name == "nt", reason="POSIX flock and signals")

TESTS = Path(__file__).resolve().parent
ROOT = TESTS.parent
# `brain` with the test embedders, and what a test puts before it (a kill at one step)
_MAIN = "sys.argv[0] = 'brain'\nfrom brain.__main__ import main\nmain()\n"
_PRELUDE = f"import os, signal, sys\nsys.path.insert(0, {str(TESTS)!r})\nimport brain_with_fakes\n"


def _index(vault: Path, *args: str):
    return CliRunner().invoke(cli, ["index", "--json", "--vault", str(vault), *args])


def _brain(*args: str, before: str = "") -> subprocess.Popen:
    env = dict(os.environ, PYTHONPATH=os.pathsep.join([str(ROOT), os.environ.get("PYTHONPATH", "")]))
    return subprocess.Popen(
        [sys.executable, "-c", _PRELUDE + before + _MAIN, *args],
        env=env,
        stdout=subprocess.PIPE,
        stderr=subprocess.PIPE,
        text=True,
    )


def _with_a_past(vault: Path) -> dict:
    """``vault`` indexed twice, a note edited between: a past version to lose. Its history."""
    assert _index(vault).exit_code == 0
    note = vault / "AI" / "Agent memory.md"
    note.write_text(note.read_text(encoding="utf-8") + "\nA line added.\n", encoding="utf-8")
    assert _index(vault).exit_code == 0
    return _past(vault)


def _past(vault: Path) -> dict:
    history = vault_status(vault).history or {}
    return {key: value for key, value in history.items() if "version" in key or "notes" in key}


def _indexes() -> list[str]:
    """The index folders of the home (not their lock files, not a server's folder)."""
    return sorted(p.name for p in (config.brain_home() / "vaults").iterdir() if (p / "index.db").exists())


def _holding_lock(directory: Path):
    from serve_helpers import holding

    return holding(
        "import fcntl, sys\nf = open(sys.argv[1], 'a'); fcntl.flock(f, fcntl.LOCK_EX)\n"
        "print('held', flush=True); sys.stdin.read()",
        str(lock_path(directory)),
        stdin=True,
    )


def _renamed_as_a_take_over_does(old: Path, new: Path) -> None:
    """The take-over of a copy at another path, before its first commit records that path."""
    os.rename(old, new)
    lock_path(old).unlink()


def test_two_runs_at_the_new_path_at_once_take_it_over_once(toy_vault, tmp_path):
    """Two `brain index` started together at the moved vault's path: one takes the index over,
    the other waits for it and finds nothing to do; no second index, no note embedded again."""
    history = _with_a_past(toy_vault)
    new = tmp_path / "Notes"
    toy_vault.rename(new)
    runs = [_brain("index", "--json", "--wait", "300", "--vault", str(new)) for _ in range(2)]
    outs = [run.communicate(timeout=300) for run in runs]
    assert [run.returncode for run in runs] == [0, 0], outs
    reports = [json.loads(out) for out, _ in outs]
    assert sorted(str(r["taken_over"]) for r in reports) == sorted([str(toy_vault), "None"]), reports
    assert all(r["embedded"] == 0 and r["new"] == 0 for r in reports), reports
    assert _indexes() == [config.index_dir(new).name] and _past(new) == history


def test_a_copy_at_another_path_waits_for_a_take_over_under_way(toy_vault, tmp_path):
    """Two copies of a vault moved away, its original gone: one run takes the index over (it
    holds it, its new path not recorded yet) while the other starts at the second copy. That one
    gave up on it ("not taken over: another brain process is indexing") and embedded every note
    again from nothing beside it; it says whose run to wait for now, builds nothing, and once the
    take-over recorded its path, builds the copy's own index."""
    _with_a_past(toy_vault)
    first, second = tmp_path / "first", tmp_path / "second"
    toy_vault.rename(first)
    shutil.copytree(first, second)
    taken = config.index_dir(first)
    _renamed_as_a_take_over_does(config.index_dir(toy_vault), taken)
    with _holding_lock(taken) as holder:
        out = _index(second, "--wait", "0")
        assert out.exit_code == 1, out.output
        assert out.stderr.startswith(f"Error: the index of {toy_vault} (a folder no longer there), which holds")
        assert f"another brain process (pid {holder.pid})" in out.stderr and len(out.stderr.splitlines()) == 1
        assert not config.index_dir(second).exists() and not lock_path(config.index_dir(second)).exists()
    assert json.loads(_index(first).stdout)["embedded"] == 0  # the take-over ends
    out = _index(second)
    assert out.exit_code == 0 and json.loads(out.stdout)["taken_over"] is None, out.output
    assert _indexes() == sorted([taken.name, config.index_dir(second).name])


def test_a_take_over_looked_for_before_another_recorded_its_path_takes_nothing(toy_vault, tmp_path, monkeypatch):
    """The run at the second copy looked while the first copy's take-over was under way, and
    took the folder once that run let it go: the first copy's index, its path recorded by then,
    taken from under it (its next run embedded every note again). Looked at again, held."""
    _with_a_past(toy_vault)
    first, second = tmp_path / "first", tmp_path / "second"
    toy_vault.rename(first)
    shutil.copytree(first, second)
    taken = config.index_dir(first)
    _renamed_as_a_take_over_does(config.index_dir(toy_vault), taken)
    looked = moved.left_behind(second, config.index_dir(second))
    assert [f.directory for f in looked] == [taken]
    assert json.loads(_index(first).stdout)["embedded"] == 0  # that run records its path, lets go
    monkeypatch.setattr(moved, "left_behind", lambda root, directory: looked)  # what the second run saw
    out = _index(second)
    assert out.exit_code == 0, out.output
    assert json.loads(out.stdout)["taken_over"] is None
    assert taken.exists() and json.loads(_index(first).stdout)["new"] == 0


# kill -9 at each step of a take-over: once the new path is recorded in the old folder (before
# the rename), once the folder is renamed (before the first commit, its old lock file still
# there), and inside the first commit, as it records the new path
_KILLS = {
    "recorded": (
        "import brain.index.moved as moved\n"
        "_record = moved.record_moved\n"
        "def record_moved(*args):\n"
        "    _record(*args)\n"
        "    os.kill(os.getpid(), signal.SIGKILL)\n"
        "moved.record_moved = record_moved\n"
    ),
    "renamed": (
        "import brain.index.moved as moved\n"
        "class _Os:\n"
        "    def __getattr__(self, name):\n"
        "        return getattr(os, name)\n"
        "    def rename(self, src, dst):\n"
        "        os.rename(src, dst)\n"
        "        os.kill(os.getpid(), signal.SIGKILL)\n"
        "moved.os = _Os()\n"
    ),
    "first-commit": (
        "from brain.index.store import VAULT_KEY, IndexStore\n"
        "_set = IndexStore.set_meta\n"
        "def set_meta(self, key, value):\n"
        "    _set(self, key, value)\n"
        "    if key == VAULT_KEY:\n"
        "        os.kill(os.getpid(), signal.SIGKILL)\n"
        "IndexStore.set_meta = set_meta\n"
    ),
}


@pytest.mark.parametrize("step", sorted(_KILLS))
def test_a_take_over_killed_at_any_step_loses_nothing(toy_vault, tmp_path, step):
    history = _with_a_past(toy_vault)
    notes = json.loads(_index(toy_vault).stdout)["notes"]
    new = tmp_path / "Notes"
    toy_vault.rename(new)
    killed = _brain("index", "--json", "--vault", str(new), before=_KILLS[step])
    killed.communicate(timeout=300)
    assert killed.returncode == -signal.SIGKILL
    out = _index(new)
    assert out.exit_code == 0, out.output
    report = json.loads(out.stdout)
    assert report["new"] == 0 and report["embedded"] == 0 and report["notes"] > 30, report
    assert report["notes"] == notes
    assert report["taken_over"] == (str(toy_vault) if step == "recorded" else None)  # not renamed yet
    assert _indexes() == [config.index_dir(new).name] and _past(new) == history
    again = CliRunner().invoke(cli, ["history", "--vault", str(new), "AI/Agent memory.md"])
    assert again.exit_code == 0 and "changed" in again.output, again.output


def test_a_killed_server_of_the_old_path_leaves_nothing_the_new_path_reads(toy_vault, tmp_path):
    """A `brain serve` of the old path killed (kill -9) left its folder, record, lock file and
    socket under the old index's name. The take-over goes ahead; `brain status` at the new path
    says no server runs, a `brain serve` there starts in a folder of its own and is the one
    `brain status` names; nothing at the new path reads the old folder."""
    from serve_helpers import served

    from brain.server import runtime

    _with_a_past(toy_vault)
    gone = subprocess.Popen([sys.executable, "-c", "pass"])
    gone.wait()  # a pid no process has now
    old = toy_vault.resolve()
    runtime.make_private(runtime.runtime_dir(old))
    runtime.write_record(old, {"pid": gone.pid, "vault": str(old), "socket": str(runtime.socket_path(old))})
    runtime.lock_path(old).write_text(f"{gone.pid}\n", encoding="ascii")
    new = tmp_path / "Notes"
    toy_vault.rename(new)
    out = _index(new)
    assert out.exit_code == 0 and json.loads(out.stdout)["taken_over"] == str(old), out.output

    def status() -> dict:
        result = CliRunner().invoke(cli, ["status", "--json", "--vault", str(new)])
        assert result.exit_code == 0, result.output
        return json.loads(result.stdout)

    assert status()["server"] is None, status()
    assert runtime.runtime_dir(new) != runtime.runtime_dir(old)
    with served(new):
        server = status()["server"]
        assert server["pid"] == os.getpid(), server
        assert runtime.read_record(new.resolve())["vault"] == str(new.resolve())
    assert status()["server"] is None


def _made_before_recording(vault: Path) -> Path:
    """``vault``'s index as a brain before it recorded the vault's path left it: no such row."""
    import sqlite3

    from brain.index.store import VAULT_KEY

    directory = config.index_dir(vault)
    conn = sqlite3.connect(directory / "index.db")
    with conn:
        conn.execute("DELETE FROM meta WHERE key = ?", (VAULT_KEY,))
    conn.close()
    return directory


@pytest.mark.parametrize("answer", ["y", "n", None], ids=["moved", "a-copy", "no-terminal"])
def test_an_index_made_before_paths_were_recorded_is_offered_when_its_vault_moved(
    toy_vault, tmp_path, monkeypatch, answer
):
    """An index made before brain recorded its vault's path, the vault moved before its next run:
    that run embedded every note again from nothing and the history stayed behind, unsaid. Nothing
    in such an index tells a move from a copy of a vault still there: `brain status` names it, and
    `brain index` asks on a terminal (yes: taken over; no: a new index beside it), else says it."""
    history = _with_a_past(toy_vault)
    old = _made_before_recording(toy_vault)
    new = tmp_path / "Notes"
    toy_vault.rename(new)
    status = CliRunner().invoke(cli, ["status", "--json", "--vault", str(new)])
    assert json.loads(status.stdout)["unrecorded_index"] == str(old), status.output
    text = CliRunner().invoke(cli, ["status", "--vault", str(new)]).output
    assert f"moved?: {old}, an index made before brain recorded its vault's path, holds these notes" in text, text
    if answer is not None:
        monkeypatch.setattr("brain.cli._interactive", lambda: True)
    out = CliRunner().invoke(cli, ["index", "--json", "--vault", str(new)], input=f"{answer}\n" if answer else None)
    assert out.exit_code == 0, out.output
    report = json.loads(out.stdout)
    if answer == "y":
        assert report["embedded"] == 0 and report["new"] == 0 and _past(new) == history, report
        assert _indexes() == [config.index_dir(new).name] and not lock_path(old).exists()
        assert f"the index {old} is this vault's now, history included" in out.stderr
    else:
        assert report["new"] > 30 and _indexes() == sorted([old.name, config.index_dir(new).name])
    if answer is None:
        assert "stop this run and run `brain index` on a terminal, which offers to take it over" in out.stderr


def test_an_index_that_cannot_be_moved_is_not_built_again_beside(toy_vault, tmp_path, monkeypatch):
    """The old index folder not writable (renaming a folder writes its ".."; root may, a user may
    not) or a mount point: the take-over's rename failed, a warning said so, and the run embedded
    every note again beside it, its history left where no run looks again (the new path has an
    index then). It fails in one line now, saying what to do, and builds nothing."""

    class _Denied:
        def __getattr__(self, name):
            return getattr(os, name)

        def rename(self, src, dst):
            raise PermissionError(13, "Permission denied", str(src))

    history = _with_a_past(toy_vault)
    old = config.index_dir(toy_vault)
    new = tmp_path / "Notes"
    toy_vault.rename(new)
    with monkeypatch.context() as m:
        m.setattr(moved, "os", _Denied())
        out = _index(new)
    assert out.exit_code == 1, out.output
    assert out.stderr == (
        f"Error: the index of {toy_vault} (a folder no longer there), which holds this vault's notes, could not be "
        f"taken over: [Errno 13] Permission denied: '{old}'; fix that and run `brain index` again, or move {old} "
        f"out of {old.parent} for a new index (its history stays in it)\n"
    )
    assert _indexes() == [old.name] and not lock_path(config.index_dir(new)).exists()
    assert json.loads(_index(new).stdout)["taken_over"] == str(toy_vault) and _past(new) == history


def test_a_rebuild_at_the_new_path_takes_the_index_over_and_carries_its_history(toy_vault, tmp_path):
    """`brain index --rebuild` as the first run at the moved vault's path built a new index from
    nothing, the old one and its history left in a folder no run looks at again (and `brain
    status` no longer named it: the new path had an index). It takes it over first now, and the
    rebuild carries its history into the new index."""
    history = _with_a_past(toy_vault)
    new = tmp_path / "Notes"
    toy_vault.rename(new)
    out = _index(new, "--rebuild")
    assert out.exit_code == 0, out.output
    assert json.loads(out.stdout)["taken_over"] == str(toy_vault), out.output
    assert (
        f"was indexed at {toy_vault}, a folder no longer there: its index, history included, is this vault's now (then rebuilt)"
        in out.stderr
    )
    assert _indexes() == [config.index_dir(new).name] and _past(new) == history


def test_an_index_made_before_paths_were_recorded_that_cannot_be_moved_says_so(toy_vault, tmp_path, monkeypatch):
    """Its take-over asked for, its folder not writable: one line, nothing made beside it."""

    class _Denied:
        def __getattr__(self, name):
            return getattr(os, name)

        def rename(self, src, dst):
            raise PermissionError(13, "Permission denied", str(src))

    _with_a_past(toy_vault)
    old = _made_before_recording(toy_vault)
    new = tmp_path / "Notes"
    toy_vault.rename(new)
    monkeypatch.setattr("brain.cli._interactive", lambda: True)
    monkeypatch.setattr(moved, "os", _Denied())
    out = CliRunner().invoke(cli, ["index", "--json", "--vault", str(new)], input="y\n")
    assert out.exit_code == 1, out.output
    assert out.stderr.endswith(
        f"Error: the index {old} could not be taken over: [Errno 13] Permission denied: '{old}'; fix that and run "
        "`brain index` again\n"
    ), out.stderr
    assert _indexes() == [old.name] and not lock_path(config.index_dir(new)).exists()


def test_a_killed_take_over_is_not_taken_by_a_copy_at_another_path(toy_vault, tmp_path):
    """Two copies of a vault whose original is gone; the first copy's take-over killed after its
    rename, before its first commit recorded its path. The second copy's first run took that
    index (it recorded a vault gone), and the first copy's next run, its index gone, embedded
    every note again from nothing. A take-over records its path before it renames now: the second
    copy builds its own, the first keeps the index it took."""
    history = _with_a_past(toy_vault)
    first, second = tmp_path / "first", tmp_path / "second"
    toy_vault.rename(first)
    shutil.copytree(first, second)
    killed = _brain("index", "--json", "--vault", str(first), before=_KILLS["renamed"])
    killed.communicate(timeout=300)
    assert killed.returncode == -signal.SIGKILL
    out = _index(second)
    assert out.exit_code == 0, out.output
    assert json.loads(out.stdout)["taken_over"] is None and json.loads(out.stdout)["new"] > 30
    out = _index(first)
    assert out.exit_code == 0, out.output
    assert json.loads(out.stdout)["new"] == 0 and _past(first) == history
