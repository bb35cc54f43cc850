"""The install record (brain/install_record.py): what install made, kept across processes."""

from __future__ import annotations

import json
import multiprocessing
from pathlib import Path

from brain.ledger import install as hook_setup
from brain.mcp import install as mcp_setup

WORKERS = 6
ROUNDS = 8


def _entry(worker: int) -> dict:
    return {"type": "stdio", "command": "/opt/brain/bin/brain", "args": ["mcp", "--vault", f"/v{worker}"]}


def _mcp_worker(worker: int, root: str, barrier, errors) -> None:
    """Installs, then uninstalls, brain's server in a project of its own and in one file all share,
    each step started with every other worker's at once."""
    try:
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
    except BaseException as exc:
        errors.put(f"{worker}: {exc!r}")
        barrier.abort()


def test_mcp_installs_in_processes_at_once_keep_each_others_record(tmp_path, brain_home):
    """Processes installing into other files at once each read the record, then write it back:
    one of them lost the others' entries, and their uninstall left "mcpServers": {} and {} files."""
    shared = tmp_path / "claude.json"
    original = '{\n  "theme": "dark",\n  "projects": {}\n}\n'
    shared.write_text(original)
    context = multiprocessing.get_context("fork")
    barrier, errors = context.Barrier(WORKERS + 1), context.Queue()
    workers = [context.Process(target=_mcp_worker, args=(w, str(tmp_path), barrier, errors)) for w in range(WORKERS)]
    for process in workers:
        process.start()
    try:
        for _ in range(2 * ROUNDS):  # each round's two steps, then "all installed"
            barrier.wait(120)
        data = json.loads(shared.read_text())
        assert sorted(data["mcpServers"]) == [f"s{w}" for w in range(WORKERS)]
        record = json.loads((brain_home / "mcp-installs.json").read_text())
        expected = {
            str(shared): ["key"],
            **{str(tmp_path / f"p{w}" / ".mcp.json"): ["file", "folder"] for w in range(WORKERS)},
        }
        assert record == expected
        barrier.wait(120)
    except BaseException:
        barrier.abort()  # the workers stop at once rather than at their barrier's timeout
        raise
    finally:
        for process in workers:
            process.join(120)
    assert errors.empty(), errors.get()
    assert shared.read_text() == original
    assert not any((tmp_path / f"p{w}").exists() for w in range(WORKERS))  # the folders install made too
    assert json.loads((brain_home / "mcp-installs.json").read_text()) == {}


STOP = "/opt/brain/bin/brain hook stop"


def _hook_worker(worker: int, root: str, barrier, errors) -> None:
    """Installs, then uninstalls, brain's Stop hook in a project of its own, each step started
    with every other worker's at once."""
    try:
        own = Path(root) / f"p{worker}" / ".claude" / "settings.json"
        for _ in range(ROUNDS):
            barrier.wait(60)
            hook_setup.install(own, STOP)
            barrier.wait(60)
            hook_setup.uninstall(own)
        barrier.wait(60)
        hook_setup.install(own, STOP)
        barrier.wait(60)  # all installed: the parent looks
    except BaseException as exc:
        errors.put(f"{worker}: {exc!r}")
        barrier.abort()


def test_hook_installs_in_processes_at_once_keep_each_others_record(tmp_path, brain_home):
    context = multiprocessing.get_context("fork")
    barrier, errors = context.Barrier(WORKERS + 1), context.Queue()
    workers = [context.Process(target=_hook_worker, args=(w, str(tmp_path), barrier, errors)) for w in range(WORKERS)]
    for process in workers:
        process.start()
    try:
        for _ in range(2 * ROUNDS + 2):
            barrier.wait(120)
    except BaseException:
        barrier.abort()
        raise
    finally:
        for process in workers:
            process.join(120)
    assert errors.empty(), errors.get()
    record = json.loads((brain_home / "hook-installs.json").read_text())
    made = ["file", "folder", "hooks", "hooks.Stop"]
    assert record == {str(tmp_path / f"p{w}" / ".claude" / "settings.json"): made for w in range(WORKERS)}
    for w in range(WORKERS):
        hook_setup.uninstall(tmp_path / f"p{w}" / ".claude" / "settings.json")
    assert not list(tmp_path.glob("p*/.claude")) and json.loads((brain_home / "hook-installs.json").read_text()) == {}


def _mixed_worker(worker: int, root: str, barrier, errors) -> None:
    """Each round, half the workers install their server while the others uninstall theirs, in
    one project's .mcp.json (made, then removed with its folder, then made again) and one file
    all share."""
    try:
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
    except BaseException as exc:
        errors.put(f"{worker}: {exc!r}")
        barrier.abort()


def test_mcp_installs_and_uninstalls_at_once_in_one_file(tmp_path, brain_home):
    shared = tmp_path / "claude.json"
    original = '{\n  "theme": "dark"\n}\n'
    shared.write_text(original)
    context = multiprocessing.get_context("fork")
    barrier, errors = context.Barrier(WORKERS + 1), context.Queue()
    workers = [context.Process(target=_mixed_worker, args=(w, str(tmp_path), barrier, errors)) for w in range(WORKERS)]
    for process in workers:
        process.start()
    try:
        for _ in range(ROUNDS + 1):
            barrier.wait(120)
        # installed in the last round: the workers whose turn it was
        expected = sorted(f"s{w}" for w in range(WORKERS) if (ROUNDS - 1 + w) % 2 == 0)
        for path in (shared, tmp_path / "proj" / ".mcp.json"):
            assert sorted(json.loads(path.read_text())["mcpServers"]) == expected
        record = json.loads((brain_home / "mcp-installs.json").read_text())
        assert record[str(shared)] == ["key"] and record[str(tmp_path / "proj" / ".mcp.json")] in (
            ["file"],
            ["file", "folder"],
        )
        barrier.wait(120)
    except BaseException:
        barrier.abort()
        raise
    finally:
        for process in workers:
            process.join(120)
    assert errors.empty(), errors.get()
    assert shared.read_text() == original  # its backups of brain's changes stay: five at most are read
    assert not (tmp_path / "proj").exists()
    assert json.loads((brain_home / "mcp-installs.json").read_text()) == {}
