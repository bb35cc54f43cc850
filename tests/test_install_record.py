"""The install record (brain/install_record.py): what install made, kept across processes."""

from __future__ import annotations

import contextlib
import json
import multiprocessing
from collections.abc import Callable, Iterator
from pathlib import Path

from brain.ledger import install as hook_setup
from brain.mcp import install as mcp_setup

WORKERS = 6
ROUNDS = 8


def _entry(worker: int) -> dict:
    return {"type": "stdio", "command": "/opt/brain/bin/brain", "args": ["mcp", "--vault", f"/v{worker}"]}


def _run(work: Callable, worker: int, root: str, barrier, errors) -> None:
    """One worker process: what fails is reported, and every other process stops at once."""
    try:
        work(worker, root, barrier)
    except BaseException as exc:
        errors.put(f"{worker}: {exc!r}")
        barrier.abort()


@contextlib.contextmanager
def _at_once(work: Callable, root: Path) -> Iterator[Callable[[], object]]:
    """WORKERS processes doing ``work(worker, root, barrier)``, each step at their barrier started
    with every other one's; what it yields is the parent's step there. None of them may fail."""
    context = multiprocessing.get_context("fork")
    barrier, errors = context.Barrier(WORKERS + 1), context.Queue()
    workers = [context.Process(target=_run, args=(work, w, str(root), barrier, errors)) for w in range(WORKERS)]
    for process in workers:
        process.start()
    try:
        yield lambda: barrier.wait(120)
    except BaseException:
        barrier.abort()  # the workers stop at once rather than at their barrier's timeout
        raise
    finally:
        for process in workers:
            process.join(120)
    assert errors.empty(), errors.get()


def _mcp_worker(worker: int, root: str, barrier) -> None:
    """Installs, then uninstalls, brain's server in a project of its own and in one file all share,
    each step started with every other worker's at once."""
    shared, own = Path(root) / "claude.json", Path(root) / f"p{worker}" / ".mcp.json"
    for round_ in range(ROUNDS):
        barrier.wait(60)
        mcp_setup.install(own, _entry(worker))
        mcp_setup.install(shared, _entry(worker), f"s{worker}")
        if round_ == ROUNDS - 1:
            break
        barrier.wait(60)
        mcp_setup.uninstall(own)
        mcp_setup.uninstall(shared, f"s{worker}")
    barrier.wait(60)  # all installed: the parent looks
    barrier.wait(60)
    mcp_setup.uninstall(own)
    mcp_setup.uninstall(shared, f"s{worker}")


def test_mcp_installs_in_processes_at_once_keep_each_others_record(tmp_path, brain_home):
    """Processes installing into other files at once each read the record, then write it back:
    one of them lost the others' entries, and their uninstall left "mcpServers": {} and {} files."""
    shared = tmp_path / "claude.json"
    original = '{\n  "theme": "dark",\n  "projects": {}\n}\n'
    shared.write_text(original)
    with _at_once(_mcp_worker, tmp_path) as step:
        for _ in range(2 * ROUNDS):  # each round's two steps, then "all installed"
            step()
        data = json.loads(shared.read_text())
        assert sorted(data["mcpServers"]) == [f"s{w}" for w in range(WORKERS)]
        record = json.loads((brain_home / "mcp-installs.json").read_text())
        expected = {
            str(shared): ["key"],
            **{str(tmp_path / f"p{w}" / ".mcp.json"): ["file", "folder"] for w in range(WORKERS)},
        }
        assert record == expected
        step()
    assert shared.read_text() == original
    assert not any((tmp_path / f"p{w}").exists() for w in range(WORKERS))  # the folders install made too
    assert json.loads((brain_home / "mcp-installs.json").read_text()) == {}


STOP = "/opt/brain/bin/brain hook stop"


def _hook_worker(worker: int, root: str, barrier) -> None:
    """Installs, then uninstalls, brain's Stop hook in a project of its own, each step started
    with every other worker's at once."""
    own = Path(root) / f"p{worker}" / ".claude" / "settings.json"
    for _ in range(ROUNDS):
        barrier.wait(60)
        hook_setup.install(own, STOP)
        barrier.wait(60)
        hook_setup.uninstall(own)
    barrier.wait(60)
    hook_setup.install(own, STOP)
    barrier.wait(60)  # all installed: the parent looks


def test_hook_installs_in_processes_at_once_keep_each_others_record(tmp_path, brain_home):
    with _at_once(_hook_worker, tmp_path) as step:
        for _ in range(2 * ROUNDS + 2):
            step()
    record = json.loads((brain_home / "hook-installs.json").read_text())
    made = ["file", "folder", "folders-above-1", "hooks", "hooks.Stop"]  # p{w}/ too: install made it
    assert record == {str(tmp_path / f"p{w}" / ".claude" / "settings.json"): made for w in range(WORKERS)}
    for w in range(WORKERS):
        hook_setup.uninstall(tmp_path / f"p{w}" / ".claude" / "settings.json")
    assert not list(tmp_path.glob("p*")) and json.loads((brain_home / "hook-installs.json").read_text()) == {}


def _mixed_worker(worker: int, root: str, barrier) -> None:
    """Each round, half the workers install their server while the others uninstall theirs, in
    one project's .mcp.json (made, then removed with its folder, then made again) and one file
    all share."""
    shared, project = Path(root) / "claude.json", Path(root) / "proj" / ".mcp.json"
    for round_ in range(ROUNDS):
        barrier.wait(60)
        for path in (shared, project):
            if (round_ + worker) % 2 == 0:
                mcp_setup.install(path, _entry(worker), f"s{worker}")
            else:
                mcp_setup.uninstall(path, f"s{worker}")
    barrier.wait(60)  # the parent looks
    barrier.wait(60)
    for path in (shared, project):
        mcp_setup.uninstall(path, f"s{worker}")


def test_mcp_installs_and_uninstalls_at_once_in_one_file(tmp_path, brain_home):
    shared = tmp_path / "claude.json"
    original = '{\n  "theme": "dark"\n}\n'
    shared.write_text(original)
    with _at_once(_mixed_worker, tmp_path) as step:
        for _ in range(ROUNDS + 1):
            step()
        # installed in the last round: the workers whose turn it was
        expected = sorted(f"s{w}" for w in range(WORKERS) if (ROUNDS - 1 + w) % 2 == 0)
        for path in (shared, tmp_path / "proj" / ".mcp.json"):
            assert sorted(json.loads(path.read_text())["mcpServers"]) == expected
        record = json.loads((brain_home / "mcp-installs.json").read_text())
        assert record[str(shared)] == ["key"] and record[str(tmp_path / "proj" / ".mcp.json")] in (
            ["file"],
            ["file", "folder"],
        )
        step()
    assert shared.read_text() == original  # its backups of brain's changes stay: five at most are read
    assert not (tmp_path / "proj").exists()
    assert json.loads((brain_home / "mcp-installs.json").read_text()) == {}
