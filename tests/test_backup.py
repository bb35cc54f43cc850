"""`brain backup DEST`: a sound copy while other processes write, atomic under kill -9, owner-only,
usable as a brain home, and the places and states it refuses in one line."""

from __future__ import annotations

import json
import os
import shutil
import signal
import sqlite3
import stat
import subprocess
import sys
import textwrap
import time
from pathlib import Path
from types import SimpleNamespace

import pytest
from click.testing import CliRunner
from conftest import FakeEmbedder, write
from index_helpers import as_before_m021, environ, history_problems

from brain import config
from brain.backup import BackupError, backup
from brain.cli import cli
from brain.db import connection, kept_aside_dir
from brain.errors import NoIndexError, NoSpaceError
from brain.index.files import INDEX_FILE
from brain.index.health import integrity_problem
from brain.index.indexer import index_vault
from brain.index.schema import INDEX_MIGRATIONS
from brain.index.store import IndexStore
from brain.ledger.store import write_turn

TESTS = Path(__file__).resolve().parent
ROOT = TESTS.parent

# A process that keeps the index and the ledger changing: each round rewrites a note, indexes
# the vault (history, BM25, vectors) and records a turn, and counts its rounds in a file.
WRITER = textwrap.dedent(
    """
    import sys, time
    from pathlib import Path
    sys.path.insert(0, {tests!r})
    from conftest import FakeEmbedder
    from brain.db import connection
    from brain.index.indexer import index_vault
    from brain.ledger.store import write_turn
    vault, rounds, stop = Path({vault!r}), Path({rounds!r}), Path({stop!r})
    n = 0
    while not stop.exists():
        n += 1
        (vault / "Churn.md").write_text(f"# Churn\\n\\nround {{n}}: " + "words that change " * (n % 7 + 1) + "\\n")
        index_vault(vault, embedder=FakeEmbedder(), progress=False)
        with connection() as db:
            write_turn(db, {{"turn_key": f"k{{n}}", "session_id": "s", "ask": f"question {{n}}"}})
        Path(str(rounds) + ".tmp").write_text(str(n))
        Path(str(rounds) + ".tmp").replace(rounds)
    """
)


def _index(vault: Path) -> None:
    index_vault(vault, embedder=FakeEmbedder(), progress=False)


def _rounds(path: Path) -> int:
    try:
        return int(path.read_text() or 0)
    except (FileNotFoundError, ValueError):
        return 0


def _wait_for(condition, timeout: float = 60.0) -> None:
    deadline = time.monotonic() + timeout
    while not condition():
        assert time.monotonic() < deadline, "timed out"
        time.sleep(0.02)


def _pages(path: Path) -> int:
    db = sqlite3.connect(path)
    try:
        return int(db.execute("PRAGMA page_count").fetchone()[0])
    finally:
        db.close()


def _sound(path: Path) -> None:
    """SQLite's integrity check and, for an index, FTS5's on both BM25 indexes and brain's own."""
    db = sqlite3.connect(path, isolation_level=None)
    try:
        assert db.execute("PRAGMA integrity_check").fetchall() == [("ok",)]
        if path.name == INDEX_FILE:
            for table in IndexStore.SEARCH_INDEXES:
                db.execute(f"INSERT INTO {table} ({table}, rank) VALUES ('integrity-check', 1)")
    finally:
        db.close()
    if path.name == INDEX_FILE:
        assert integrity_problem(path.parent) is None
        assert history_problems(path) == []


def test_a_backup_while_another_process_indexes_and_records_turns_is_sound_and_a_brain_home(
    toy_vault, tmp_path, brain_home
):
    _index(toy_vault)
    with connection() as db:
        write_turn(db, {"turn_key": "k0", "session_id": "s", "ask": "recorded before"})
    rounds, stop = tmp_path / "rounds", tmp_path / "stop"
    script = WRITER.format(tests=str(TESTS), vault=str(toy_vault), rounds=str(rounds), stop=str(stop))
    env = {**os.environ, "PYTHONPATH": f"{ROOT}{os.pathsep}{os.environ.get('PYTHONPATH', '')}"}
    writer = subprocess.Popen([sys.executable, "-c", script], env=env)
    steps = []
    try:
        _wait_for(lambda: _rounds(rounds) >= 1)
        before = _rounds(rounds)

        def slow(done: int, total: int) -> None:
            if not steps:  # the copy has begun: the writer commits a round before it goes on
                _wait_for(lambda: _rounds(rounds) > before)
            steps.append(done)
            assert len(steps) < 1000, "the copy keeps starting over"  # it never ended
            time.sleep(0.02)

        report = backup(tmp_path / "copy", progress=slow, step_pages=8)
        during = _rounds(rounds) - before
    finally:
        stop.touch()
        writer.wait(timeout=120)
    assert writer.returncode == 0
    assert during >= 1, "the writer committed nothing while the backup ran: the test raced nothing"
    # One snapshot for every step: a commit of the writer's never restarted the copy.
    copy = tmp_path / "copy"
    assert len(steps) <= sum(-(-_pages(copy / d.copy) // 8) for d in report.databases)

    index = copy / "vaults" / config.index_dir(toy_vault).name / INDEX_FILE
    assert sorted(str(p.relative_to(copy)) for p in copy.rglob("*")) == [
        "brain.db",
        "vaults",
        str(index.parent.relative_to(copy)),
        str(index.relative_to(copy)),
    ]
    assert [d.problem for d in report.databases] == [None, None]
    _sound(index)
    _sound(copy / "brain.db")

    runner = CliRunner()
    with environ(BRAIN_HOME=str(copy)):
        status = runner.invoke(cli, ["status", "--vault", str(toy_vault), "--json"])
        assert status.exit_code == 0, status.output
        ask = runner.invoke(cli, ["ask", "--vault", str(toy_vault), "--no-update", "--json", "WAL mode"])
        assert ask.exit_code == 0, ask.output
        assert json.loads(ask.stdout)["results"]
        history = runner.invoke(cli, ["history", "--vault", str(toy_vault), "Churn.md"])
        assert history.exit_code == 0, history.output
        turns = runner.invoke(cli, ["turns", "--json", "-n", "1000"])
        assert turns.exit_code == 0, turns.output
        assert "recorded before" in turns.output


def test_a_backup_killed_midway_leaves_no_dest_and_the_next_one_clears_its_folder(toy_vault, tmp_path):
    _index(toy_vault)
    dest, started = tmp_path / "copy", tmp_path / "started"
    pid = os.fork()
    if pid == 0:  # the child backs up a page a step, slowly, until killed
        try:

            def slow(done: int, total: int) -> None:
                started.touch()
                time.sleep(0.2)

            backup(dest, progress=slow, step_pages=1)
        finally:
            os._exit(0)
    try:
        _wait_for(started.exists)
    finally:
        os.kill(pid, signal.SIGKILL)
        os.waitpid(pid, 0)
    assert not dest.exists()
    left = [p.name for p in tmp_path.iterdir() if p.name.startswith(".copy.brain-backup-")]
    assert len(left) == 1  # the killed backup's folder, which the next one removes

    backup(dest)
    assert not [p for p in tmp_path.iterdir() if p.name.startswith(".copy.brain-backup-")]
    _sound(dest / "vaults" / config.index_dir(toy_vault).name / INDEX_FILE)


def test_the_copy_is_the_users_alone_whatever_the_umask_and_the_modes_it_copies(toy_vault, tmp_path, brain_home):
    _index(toy_vault)
    with connection() as db:
        write_turn(db, {"turn_key": "k0", "session_id": "s", "ask": "private"})
    aside = kept_aside_dir(config.db_path())
    aside.mkdir()
    (aside / "turn-1.json").write_text("{}")
    (aside / ".writing.json").write_text("{")  # a row not yet renamed into place: not copied
    record = brain_home / "hook-installs.json"
    record.write_text("{}")
    record.chmod(0o644)
    old = os.umask(0o022)
    try:
        report = backup(tmp_path / "copy")
    finally:
        os.umask(old)
    copy = tmp_path / "copy"
    assert sorted(report.files) == ["brain.db.kept-aside/turn-1.json", "hook-installs.json"]
    modes = {str(p.relative_to(copy)): stat.S_IMODE(p.stat().st_mode) for p in copy.rglob("*")}
    assert modes and all(m == (0o700 if (copy / p).is_dir() else 0o600) for p, m in modes.items()), modes
    assert stat.S_IMODE(copy.stat().st_mode) == 0o700


def test_an_index_an_older_brain_made_is_copied_as_it_is_and_migrated_where_it_is_opened(toy_vault, tmp_path):
    _index(toy_vault)
    source = config.index_dir(toy_vault) / INDEX_FILE
    as_before_m021(source)
    backup(tmp_path / "copy", vault=str(toy_vault))
    copy = tmp_path / "copy" / "vaults" / source.parent.name / INDEX_FILE

    def pending(path: Path) -> list[str]:
        db = sqlite3.connect(path)
        try:
            return INDEX_MIGRATIONS.pending(db)
        finally:
            db.close()

    assert "m021_search_text" in pending(source)  # the backup migrated nothing
    assert pending(copy) == pending(source)
    with environ(BRAIN_HOME=str(tmp_path / "copy")):
        result = CliRunner().invoke(cli, ["status", "--vault", str(toy_vault)])
    assert result.exit_code == 0, result.output
    assert pending(copy) == []
    _sound(copy)


def _cli(*args: str) -> tuple[int, str]:
    result = CliRunner().invoke(cli, ["backup", *args])
    return result.exit_code, result.output


def test_what_a_backup_refuses_is_one_line_and_leaves_nothing(toy_vault, tmp_path, brain_home, monkeypatch):
    code, out = _cli(str(tmp_path / "a"))
    assert code == 1 and "nothing to back up" in out and out.count("\n") == 1
    code, out = _cli(str(tmp_path / "a"), "--vault", str(toy_vault))
    assert code == 1 and "no index for" in out and out.count("\n") == 1
    _index(toy_vault)

    full = tmp_path / "full"
    full.mkdir()
    (full / "x").write_text("x")
    a_file = tmp_path / "file"
    a_file.write_text("x")
    refused = {
        str(full): "already exists and is not empty",
        str(a_file): "already exists",
        str(brain_home / "copy"): "is inside BRAIN_HOME",
        str(brain_home): "already exists and is not empty",
        str(toy_vault / "Engineering" / "copy"): f"is inside the vault {toy_vault}",
        str(tmp_path / "missing" / "copy"): f"{tmp_path / 'missing'} does not exist: make it first (mkdir -p ",
        str(a_file / "copy"): f"{a_file} is not a folder: name a new folder in one",
    }
    for dest, why in refused.items():
        code, out = _cli(dest)
        assert code == 1 and why in out and out.count("\n") == 1, (dest, out)
    assert not (brain_home / "copy").exists() and not (toy_vault / "Engineering" / "copy").exists()
    assert sorted(p.name for p in full.iterdir()) == ["x"]

    monkeypatch.setattr("brain.backup.shutil.disk_usage", lambda path: SimpleNamespace(total=1, used=1, free=1000))
    with pytest.raises(NoSpaceError, match="not enough space"):
        backup(tmp_path / "b")
    assert not [p for p in tmp_path.iterdir() if p.name.startswith(("b", ".b."))]


def test_an_empty_folder_is_taken_and_a_vault_alone_is_its_index_alone(toy_vault, tmp_path):
    _index(toy_vault)
    with connection() as db:
        write_turn(db, {"turn_key": "k0", "session_id": "s", "ask": "x"})
    empty = tmp_path / "empty"
    empty.mkdir()
    report = backup(empty, vault=str(toy_vault))
    assert [d.kind for d in report.databases] == ["index"]
    assert not (empty / "brain.db").exists()
    with pytest.raises(BackupError, match="not empty"):
        backup(empty)
    with pytest.raises(NoIndexError):
        backup(tmp_path / "other", vault=str(write(tmp_path / "v2", "a.md", "# A\n").parent))


def test_a_disk_that_fills_midway_is_one_line_and_leaves_no_folder(toy_vault, tmp_path, monkeypatch):
    _index(toy_vault)
    from brain import backup as module

    copied = module.copy_database

    def fills(source, target, **kwargs):
        copied(source, target, **kwargs)  # the copy is written, then the disk is full
        raise sqlite3.OperationalError("database or disk is full")

    monkeypatch.setattr(module, "copy_database", fills)
    code, out = _cli(str(tmp_path / "copy"))
    assert code == 1 and "is full" in out and "nothing of the backup was left there" in out and out.count("\n") == 1
    assert sorted(p.name for p in tmp_path.iterdir()) == sorted(["vault"])


def test_a_damaged_index_is_copied_and_said(toy_vault, tmp_path):
    _index(toy_vault)
    database = config.index_dir(toy_vault) / INDEX_FILE
    db = sqlite3.connect(database)
    db.execute("PRAGMA wal_checkpoint(TRUNCATE)")
    db.close()
    with database.open("r+b") as handle:  # a page of the chunks' b-trees, past the schema's
        handle.seek(database.stat().st_size // 2)
        handle.write(b"\xff" * 4096)
    result = CliRunner().invoke(cli, ["backup", str(tmp_path / "copy"), "--json"])
    assert result.exit_code == 0, result.output
    [copied] = json.loads(result.stdout)["databases"]
    assert copied["problem"]
    assert "fails SQLite's check" in result.stderr and "its copy is as damaged" in result.stderr


def test_a_backup_beside_a_brain_home_in_a_plain_folder_is_made(toy_vault, tmp_path, monkeypatch):
    # DEST's folders are asked whether they are vaults; one holding the brain home (~ for
    # BRAIN_HOME=~/brainhome) was refused as a vault the home may not be in, and the backup failed
    home = tmp_path / "plain" / "brainhome"
    monkeypatch.setenv("BRAIN_HOME", str(home))
    _index(toy_vault)
    (tmp_path / "plain" / "backups").mkdir()
    report = backup(tmp_path / "plain" / "backups" / "one")
    assert (tmp_path / "plain" / "backups" / "one").is_dir() and report.databases


def test_a_ledger_the_homes_env_puts_elsewhere_is_the_copys_own(toy_vault, tmp_path, brain_home, monkeypatch):
    # The home's .env was copied as it was: BRAIN_HOME pointed at the copy (or the home restored
    # from it) read its BRAIN_DB and wrote to the live ledger, the copy's brain.db never read
    ledger = tmp_path / "ledgers" / "ledger.db"
    ledger.parent.mkdir()
    (brain_home / ".env").write_text(f"# mine\nexport BRAIN_DB='{ledger}'\nBRAIN_VERSION_INTERVAL=0\n")
    monkeypatch.setenv("BRAIN_DB", str(ledger))  # as the CLI loads it from that .env
    _index(toy_vault)
    with connection() as db:
        write_turn(db, {"turn_key": "k0", "session_id": "s", "ask": "before the backup"})
    result = CliRunner().invoke(cli, ["backup", str(tmp_path / "copy")])
    assert result.exit_code == 0, result.output
    assert f"ledger  brain.db  0.1 MB  (BRAIN_DB {ledger})" in result.output
    with connection() as db:
        write_turn(db, {"turn_key": "k1", "session_id": "s", "ask": "after the backup"})

    copy = tmp_path / "copy"
    assert "BRAIN_DB" not in config.parse_dotenv((copy / ".env").read_text())
    assert config.parse_dotenv((copy / ".env").read_text()) == {"BRAIN_VERSION_INTERVAL": "0"}
    monkeypatch.delenv("BRAIN_DB")
    monkeypatch.setenv("BRAIN_HOME", str(copy))
    turns = CliRunner().invoke(cli, ["turns", "--json", "-n", "100"])
    assert turns.exit_code == 0, turns.output
    assert "before the backup" in turns.output and "after the backup" not in turns.output
    assert config.db_path() == copy / "brain.db"
    with connection() as db:
        write_turn(db, {"turn_key": "k2", "session_id": "s", "ask": "on the copy"})
    live = sqlite3.connect(ledger)
    try:  # the live ledger is not the copy's
        assert [r[0] for r in live.execute("SELECT turn_key FROM turns ORDER BY turn_key")] == ["k0", "k1"]
    finally:
        live.close()


def test_an_index_sqlite_cannot_read_is_left_out_and_the_rest_backed_up(toy_vault, tmp_path):
    # It refused the whole backup: the ledger and every other vault's index went unsaved until
    # that one was rebuilt (and its history lost with it)
    other = write(tmp_path / "other", "Other.md", "# Other\n\nanother vault\n").parent
    _index(toy_vault)
    _index(other)
    with connection() as db:
        write_turn(db, {"turn_key": "k0", "session_id": "s", "ask": "kept"})
    broken = config.index_dir(toy_vault) / INDEX_FILE
    with broken.open("r+b") as handle:  # its header: "file is not a database"
        handle.write(b"\0" * 100)
    result = CliRunner().invoke(cli, ["backup", str(tmp_path / "copy")])
    assert result.exit_code == 0, result.output
    assert result.stderr.count("\n") == 1 and f"{broken} is not a sound SQLite database" in result.stderr
    assert "left out of the backup, the rest is in it" in result.stderr
    assert "backed up to" in result.stdout and "2 databases" in result.stdout
    copy = tmp_path / "copy"
    assert sorted(str(p.relative_to(copy)) for p in copy.rglob("*.db")) == [
        "brain.db",
        f"vaults/{config.index_dir(other).name}/{INDEX_FILE}",
    ]
    assert not (copy / "vaults" / broken.parent.name).exists()
    _sound(copy / "vaults" / config.index_dir(other).name / INDEX_FILE)

    shown = CliRunner().invoke(cli, ["backup", str(tmp_path / "json"), "--json"])
    left = [d for d in json.loads(shown.stdout)["databases"] if d["left_out"]]
    assert [(d["source"], d["problem"]) for d in left] == [(str(broken), "file is not a database")]

    with pytest.raises(BackupError, match="is not a sound SQLite database"):  # nothing else to copy
        backup(tmp_path / "alone", vault=str(toy_vault))
    assert not [p for p in tmp_path.iterdir() if "alone" in p.name]


def test_a_killed_backups_folder_goes_with_the_next_backup_beside_it_and_a_long_name_is_taken(toy_vault, tmp_path):
    # Only a backup to the same name removed a killed one's folder: backups to dated names
    # (brain-2026-12-06, then -07) left each killed one's copy there, hidden, for good; and the
    # folder's name held all of DEST's, so a DEST of 240 characters was "File name too long"
    _index(toy_vault)
    started = tmp_path / "started"
    pid = os.fork()
    if pid == 0:
        try:

            def slow(done: int, total: int) -> None:
                started.touch()
                time.sleep(0.2)

            backup(tmp_path / "brain-2026-12-06", progress=slow, step_pages=1)
        finally:
            os._exit(0)
    try:
        _wait_for(started.exists)
    finally:
        os.kill(pid, signal.SIGKILL)
        os.waitpid(pid, 0)
    assert [p.name for p in tmp_path.iterdir() if ".brain-backup-" in p.name]
    mine = tmp_path / ".mine.brain-backup-notes"  # not a backup's folder: left alone
    mine.mkdir()

    backup(tmp_path / "brain-2026-12-07")
    assert [p.name for p in tmp_path.iterdir() if ".brain-backup-" in p.name] == [mine.name]
    long = tmp_path / ("b" * 240)
    backup(long)
    _sound(long / "vaults" / config.index_dir(toy_vault).name / INDEX_FILE)


STOPPED = textwrap.dedent(
    """
    import os, signal, sys
    from brain import backup as module
    from brain.cli import cli
    copied = module.copy_database

    def stopped(source, target, **kwargs):  # SIGTERM while the first database is copied
        os.kill(os.getpid(), signal.SIGTERM)
        return copied(source, target, **kwargs)

    module.copy_database = stopped
    cli.main(["backup", sys.argv[1]])
    """
)


def test_a_backup_stopped_by_sigterm_leaves_neither_dest_nor_its_folder(toy_vault, tmp_path):
    # SIGTERM (kill, timeout, a unit stopped) ended the process where it was: its partial copy,
    # hidden beside DEST, stayed until a later backup was made in that folder
    _index(toy_vault)
    env = {**os.environ, "PYTHONPATH": f"{ROOT}{os.pathsep}{os.environ.get('PYTHONPATH', '')}"}
    stopped = subprocess.run([sys.executable, "-c", STOPPED, str(tmp_path / "copy")], env=env, timeout=120)
    assert stopped.returncode == 128 + signal.SIGTERM
    assert sorted(p.name for p in tmp_path.iterdir()) == ["vault"]


IGNORED = textwrap.dedent(
    """
    import os, signal, sys
    from brain import backup as module
    from brain.cli import cli
    copied = module.copy_database
    signal.signal(signal.SIGHUP, signal.SIG_IGN)  # as nohup leaves it
    signal.signal(signal.SIGTERM, signal.SIG_IGN)

    def hung_up(source, target, **kwargs):  # the terminal closed while the first database is copied
        os.kill(os.getpid(), signal.SIGHUP)
        os.kill(os.getpid(), signal.SIGTERM)
        return copied(source, target, **kwargs)

    module.copy_database = hung_up
    cli.main(["backup", sys.argv[1]])
    """
)


def test_a_backup_run_under_nohup_is_not_ended_by_the_terminal_closing(toy_vault, tmp_path):
    # `nohup brain backup DEST &` ignores SIGHUP so that closing the terminal leaves it running:
    # the handler that turns SIGHUP and SIGTERM into an exit was put over an ignored signal, and
    # the backup ended (129) and removed its copy when the terminal closed
    _index(toy_vault)
    env = {**os.environ, "PYTHONPATH": f"{ROOT}{os.pathsep}{os.environ.get('PYTHONPATH', '')}"}
    run = subprocess.run(
        [sys.executable, "-c", IGNORED, str(tmp_path / "copy")], env=env, timeout=120, capture_output=True, text=True
    )
    assert run.returncode == 0, run.stderr
    _sound(tmp_path / "copy" / "vaults" / config.index_dir(toy_vault).name / INDEX_FILE)


def test_an_index_a_cut_rebuild_left_under_the_retired_name_is_copied_into_its_place(toy_vault, tmp_path):
    # A rebuild killed between its two renames (where the system has no atomic exchange) leaves
    # the vault's one index under <folder>.retired until the next brain run puts it back; the
    # backup passed over it unsaid, and a backup of that home held no index of the vault
    _index(toy_vault)
    with connection() as db:
        write_turn(db, {"turn_key": "k0", "session_id": "s", "ask": "x"})
    folder = config.index_dir(toy_vault)
    folder.rename(folder.with_name(folder.name + ".retired"))
    report = backup(tmp_path / "copy")
    assert [d.copy for d in report.databases] == [f"vaults/{folder.name}/{INDEX_FILE}", "brain.db"]
    _sound(tmp_path / "copy" / "vaults" / folder.name / INDEX_FILE)
    with environ(BRAIN_HOME=str(tmp_path / "copy")):
        ask = CliRunner().invoke(cli, ["ask", "--vault", str(toy_vault), "--no-update", "--json", "WAL mode"])
    assert ask.exit_code == 0, ask.output
    assert json.loads(ask.stdout)["results"]


def test_an_empty_mount_point_is_refused_before_anything_is_written(toy_vault, tmp_path, monkeypatch):
    # `brain backup /mnt/usb`, an empty disk mounted there: the copy was made beside it, on the
    # disk above the mount (its room never asked), then its rename was "Device or resource busy"
    # (seen with a tmpfs mounted on an empty folder; here the mount is told by os.path.ismount)
    _index(toy_vault)
    usb = tmp_path / "usb"
    usb.mkdir()
    real = os.path.ismount
    monkeypatch.setattr("brain.backup.os.path.ismount", lambda path: Path(path) == usb or real(path))
    code, out = _cli(str(usb))
    assert code == 1 and out.count("\n") == 1, out
    assert (
        f"{usb} is a mount point (another disk): name a new folder in it, e.g. brain backup {usb}/brain-backup" in out
    )
    assert sorted(p.name for p in tmp_path.iterdir()) == ["usb", "vault"] and not list(usb.iterdir())
    backup(usb / "brain-backup")


@pytest.mark.skipif(sys.platform == "win32", reason="no file size limit (RLIMIT_FSIZE) on Windows")
def test_a_copy_the_file_size_limit_stops_says_so_and_the_fix(tmp_path, brain_home):
    # SQLite's write met EFBIG ("File too large") and said "disk I/O error", naming no cause
    import resource

    db = sqlite3.connect(brain_home / "brain.db")
    db.execute("CREATE TABLE t (x)")
    db.executemany("INSERT INTO t VALUES (?)", [("x" * 1000,)] * 2000)  # ~2 MB
    db.commit()
    db.close()

    def limited() -> None:
        resource.setrlimit(resource.RLIMIT_FSIZE, (500_000, resource.getrlimit(resource.RLIMIT_FSIZE)[1]))

    done = subprocess.run(
        [sys.executable, "-m", "brain", "backup", str(tmp_path / "copy")],
        preexec_fn=limited,
        capture_output=True,
        text=True,
        timeout=120,
        check=False,
    )
    assert done.returncode == 1, done.stderr
    line = done.stderr.strip()
    assert "\n" not in line and "file size limit" in line and "ulimit -f" in line, line
    assert "disk I/O error" not in line
    assert not [p for p in tmp_path.iterdir() if p.name.startswith(("copy", ".copy."))]


def test_a_disk_filled_midway_that_sqlite_calls_an_io_error_is_said_full(toy_vault, tmp_path, monkeypatch):
    _index(toy_vault)
    from brain import backup as module

    copied = module.copy_database

    def fills(source, target, **kwargs):
        copied(source, target, **kwargs)
        monkeypatch.setattr(module.shutil, "disk_usage", lambda path: SimpleNamespace(total=1, used=1, free=0))
        raise sqlite3.OperationalError("disk I/O error")

    monkeypatch.setattr(module, "copy_database", fills)
    code, out = _cli(str(tmp_path / "copy"))
    assert code == 1 and out.count("\n") == 1, out
    assert "is full" in out and "make space there" in out


@pytest.mark.parametrize("tail", ["", "/x"])
def test_a_dest_whose_name_is_too_long_for_the_system_is_one_line(tmp_path, brain_home, tail):
    """`brain backup` to a name of 5,000 characters (a paste gone wrong) was OSError's traceback,
    "File name too long", from the check of what is at DEST."""
    out = CliRunner().invoke(cli, ["backup", str(tmp_path / ("a" * 5000)) + tail])
    assert out.exit_code == 1 and isinstance(out.exception, SystemExit), out.output
    assert out.output.count("\n") == 1 and len(out.output) < 300, out.output
    assert out.output.startswith("Error: cannot back up to '") and out.output.endswith(
        ": File name too long (a name in it longer than the system takes): name a new folder, "
        "e.g. `brain backup ~/brain-backup`\n"
    )


def test_a_file_too_large_for_dest_names_the_cause_and_the_fix(tmp_path):
    import errno

    from brain.backup import _os_error

    error = _os_error(OSError(errno.EFBIG, "File too large", str(tmp_path / "x")), tmp_path / "copy")
    assert isinstance(error, NoSpaceError)
    assert "File too large" in str(error) and "ulimit -f" in str(error) and "another disk" in str(error)


def test_a_dest_in_the_kept_aside_folder_of_a_ledger_outside_the_home_is_refused(tmp_path, brain_home, monkeypatch):
    ledger = tmp_path / "ledgers" / "brain.db"
    ledger.parent.mkdir()
    monkeypatch.setenv("BRAIN_DB", str(ledger))
    with connection() as db:
        write_turn(db, {"turn_key": "k0", "session_id": "s", "ask": "x"})
    aside = kept_aside_dir(ledger)
    aside.mkdir(exist_ok=True)
    for dest in (aside / "copy", aside / "deeper"):
        if dest.name == "deeper":
            dest.mkdir()
            dest = dest / "copy"
        code, out = _cli(str(dest))
        assert code == 1 and out.count("\n") == 1 and "kept-aside folder" in out, out
    assert [p.name for p in aside.iterdir()] == ["deeper"]
    assert not list((aside / "deeper").iterdir())


def test_many_vaults_print_the_first_lines_and_the_rest_in_one_and_json_keeps_every_one(tmp_path, brain_home):
    # 300 vaults printed 300 lines
    SHOWN = 20  # brain.backup_cli.SHOWN
    for n in range(SHOWN + 5):
        folder = brain_home / "vaults" / f"v{n:03}-{n:010x}"
        folder.mkdir(parents=True)
        db = sqlite3.connect(folder / INDEX_FILE)
        db.execute("CREATE TABLE t (x)")
        db.commit()
        db.close()
    with connection() as db:
        write_turn(db, {"turn_key": "k0", "session_id": "s", "ask": "x"})
    code, out = _cli(str(tmp_path / "copy"))
    assert code == 0, out
    lines = out.splitlines()
    assert lines[0].startswith(f"backed up to {tmp_path / 'copy'}: {SHOWN + 6} databases")
    listed = [line for line in lines if " index  " in line or " ledger  " in line]
    assert len(listed) == SHOWN and any("ledger" in line for line in listed)
    [rest] = [line for line in lines if "more indexes" in line]
    assert rest.startswith("  ... and 6 more indexes, ") and "MB" in rest and "--json" in rest
    assert len(lines) == SHOWN + 3, out  # the head, the lines, the rest, what is left out
    result = CliRunner().invoke(cli, ["backup", str(tmp_path / "copy2"), "--json"])
    assert len(json.loads(result.stdout)["databases"]) == SHOWN + 6


def test_the_mkdir_hint_for_a_dest_whose_name_holds_a_line_break_makes_that_folder_pasted(tmp_path, brain_home):
    # '...\n...' inside single quotes was printed as the two characters \n: pasted, the
    # command made another folder
    import shutil

    bash = shutil.which("bash")
    if bash is None:
        pytest.skip("no bash here")
    missing = tmp_path / "two\nlines 'quoted' \\ \x1b[2J"
    code, out = _cli(str(missing / "copy"))
    assert code == 1 and out.count("\n") == 1, out
    command = out.split("(mkdir -p ", 1)[1].split("), or ", 1)[0]
    subprocess.run([bash, "-c", f"mkdir -p {command}"], check=True, cwd=tmp_path, timeout=30)
    assert missing.is_dir()


@pytest.mark.slow  # subprocesses
@pytest.mark.parametrize("wal", ["none", "a live WAL"])
def test_a_read_only_brain_home_is_backed_up_whole(toy_vault, tmp_path, brain_home, wal):
    """A brain home that cannot be written (a disk the kernel remounted read-only after an error,
    a file-system snapshot, a home of mode 0500): just where one wants a backup. SQLite cannot
    make the -shm file a WAL database is opened with there, and `brain backup` said the index
    and the ledger were "not a sound SQLite database (unable to open database file)", and
    backed up neither, while `brain status` and `brain ask` read them. With a WAL in it (a
    writer killed, its -shm left), SQLite reads the WAL through the -shm as it is."""
    from index_helpers import modes_binding_prefix

    prefix = modes_binding_prefix()
    _index(toy_vault)
    with connection() as db:
        write_turn(db, {"turn_key": "k1", "session_id": "s", "ask": "kept on a read-only disk"})
    if wal == "a live WAL":  # a writer that died with its commits in the WAL, as kill -9 leaves it
        script = (
            "import os, sqlite3, sys\n"
            "for path in sys.argv[1:]:\n"
            "    db = sqlite3.connect(path)\n"
            "    db.execute('PRAGMA wal_autocheckpoint = 0')\n"
            "    db.execute('CREATE TABLE IF NOT EXISTS after_the_kill (x)')\n"
            "    db.execute('INSERT INTO after_the_kill VALUES (1)')\n"
            "    db.commit()\n"
            "os._exit(0)\n"
        )
        index_db = next((brain_home / "vaults").glob(f"*/{INDEX_FILE}"))
        subprocess.run([sys.executable, "-c", script, str(index_db), str(brain_home / "brain.db")], check=True)
        assert (brain_home / "brain.db-wal").stat().st_size > 0
    modes = {p: p.stat().st_mode for p in [brain_home, *brain_home.rglob("*")]}
    for path in modes:
        path.chmod(stat.S_IMODE(modes[path]) & ~0o222)
    try:
        env = {**os.environ, "BRAIN_HOME": str(brain_home)}
        done = subprocess.run(
            [*prefix, sys.executable, "-m", "brain", "backup", str(tmp_path / "copy")],
            env=env,
            capture_output=True,
            text=True,
            timeout=120,
            check=False,
        )
    finally:
        for path, mode in modes.items():
            path.chmod(stat.S_IMODE(mode))
    assert done.returncode == 0 and "not a sound" not in done.stderr, done.stderr
    copy = tmp_path / "copy"
    (index_copy,) = (copy / "vaults").glob(f"*/{INDEX_FILE}")
    for path in (index_copy, copy / "brain.db"):
        db = sqlite3.connect(path)
        try:
            assert db.execute("PRAGMA integrity_check").fetchone()[0] == "ok"
            if wal == "a live WAL":
                assert db.execute("SELECT x FROM after_the_kill").fetchall() == [(1,)], path
        finally:
            db.close()
    db = sqlite3.connect(copy / "brain.db")
    try:
        assert db.execute("SELECT ask FROM turns").fetchall() == [("kept on a read-only disk",)]
    finally:
        db.close()
    db = sqlite3.connect(index_copy)
    try:
        assert db.execute("SELECT count(*) FROM notes").fetchone()[0] == 35
    finally:
        db.close()


# A backup held between making its lock file and taking the lock (the lock's flock called, and
# waiting for the test's word), then let go on.
HELD_BEFORE_LOCK = textwrap.dedent(
    """
    import fcntl, sys, time
    from pathlib import Path
    from brain import backup as module
    dest, ready, go = (Path(arg) for arg in sys.argv[1:4])

    class Held:
        def __getattr__(self, name):
            return getattr(fcntl, name)

        def flock(self, fd, operation):
            if operation == fcntl.LOCK_EX:  # the lock of its own folder, not the sweep's try
                ready.touch()
                deadline = time.monotonic() + 60
                while not go.exists() and time.monotonic() < deadline:
                    time.sleep(0.01)
            return fcntl.flock(fd, operation)

    module.fcntl = Held()
    module.backup(dest)
    """
)


@pytest.mark.skipif(sys.platform == "win32", reason="flock")
def test_a_backup_starting_beside_one_that_has_not_yet_taken_its_lock_leaves_its_folder(toy_vault, tmp_path):
    # The lock file was made under its own name and taken a moment later: a backup starting
    # beside it in that moment found the lock free, took the folder for a killed backup's and
    # removed it, and the first backup failed ("No such file or directory")
    _index(toy_vault)
    ready, go = tmp_path / "ready", tmp_path / "go"
    env = {**os.environ, "PYTHONPATH": f"{ROOT}{os.pathsep}{os.environ.get('PYTHONPATH', '')}"}
    args = [str(tmp_path / "first"), str(ready), str(go)]
    first = subprocess.Popen([sys.executable, "-c", HELD_BEFORE_LOCK, *args], env=env, stderr=subprocess.PIPE)
    try:
        _wait_for(lambda: ready.exists() or first.poll() is not None)
        assert first.poll() is None, first.stderr.read().decode() if first.stderr else ""
        backup(tmp_path / "second")  # sweeps killed backups' folders beside it
    finally:
        go.touch()
        _, err = first.communicate(timeout=120)
    assert first.returncode == 0, err.decode()
    for name in ("first", "second"):
        _sound(tmp_path / name / "vaults" / config.index_dir(toy_vault).name / INDEX_FILE)
    assert not [p.name for p in tmp_path.iterdir() if ".brain-backup-" in p.name]


# A backup held just before its rename into DEST (until the test's word).
HELD_BEFORE_RENAME = textwrap.dedent(
    """
    import sys, time
    from pathlib import Path
    from brain import backup as module
    from brain.cli import cli
    ready, go = Path(sys.argv[1]), Path(sys.argv[2])
    put = module._put_in_place

    def held(temp, dest):
        ready.touch()
        deadline = time.monotonic() + 60
        while not go.exists() and time.monotonic() < deadline:
            time.sleep(0.01)
        return put(temp, dest)

    module._put_in_place = held
    cli.main(["backup", *sys.argv[3:]])
    """
)


@pytest.mark.parametrize("empty_dest_there", [False, True])
def test_two_backups_to_one_dest_leave_the_first_whole_and_the_second_says_so(toy_vault, tmp_path, empty_dest_there):
    # Both pass the look at DEST (none, or an empty folder); the rename is the one step that makes
    # DEST: the second's fails over the first's copy, which it leaves as it was, with its own folder
    _index(toy_vault)
    dest, ready, go = tmp_path / "copy", tmp_path / "ready", tmp_path / "go"
    if empty_dest_there:
        dest.mkdir()
    env = {**os.environ, "PYTHONPATH": f"{ROOT}{os.pathsep}{os.environ.get('PYTHONPATH', '')}"}
    second = subprocess.Popen(
        [sys.executable, "-c", HELD_BEFORE_RENAME, str(ready), str(go), str(dest)],
        env=env,
        stdout=subprocess.PIPE,
        stderr=subprocess.PIPE,
    )
    try:
        _wait_for(lambda: ready.exists() or second.poll() is not None)
        assert second.poll() is None, second.stderr.read().decode() if second.stderr else ""
        backup(dest)
        made = {p.relative_to(dest): p.read_bytes() for p in dest.rglob("*") if p.is_file()}
    finally:
        go.touch()
        _, err = second.communicate(timeout=120)
    assert second.returncode == 1
    assert err.decode().strip() == f"Error: {dest} was made while the backup ran: nothing of the backup was left there"
    assert {p.relative_to(dest): p.read_bytes() for p in dest.rglob("*") if p.is_file()} == made
    _sound(dest / "vaults" / config.index_dir(toy_vault).name / INDEX_FILE)
    assert not [p.name for p in tmp_path.iterdir() if ".brain-backup-" in p.name]


# A backup held between SQLite's open of the index and its first read of it (until the test's word).
HELD_AFTER_OPEN = textwrap.dedent(
    """
    import sqlite3, sys, time
    from pathlib import Path
    from brain import backup as module
    dest, vault, ready, go = sys.argv[1:5]

    class Held:
        def __getattr__(self, name):
            return getattr(sqlite3, name)

        def connect(self, *args, **kwargs):
            conn = sqlite3.connect(*args, **kwargs)
            if kwargs.get("uri") and not Path(ready).exists():  # the source's first open
                Path(ready).touch()
                deadline = time.monotonic() + 60
                while not Path(go).exists() and time.monotonic() < deadline:
                    time.sleep(0.01)
            return conn

    module.sqlite3 = Held()
    module.backup(dest, vault=vault)
    """
)


def test_a_rebuild_swapping_the_index_between_the_backups_open_and_its_first_read_gives_a_whole_copy(
    toy_vault, tmp_path
):
    # SQLite opens the database file when it connects, its WAL and shared memory by name at the
    # first read: the rebuild's swap in between gave the old file read through the new index's
    # WAL, pages of two databases (a copy that failed its check, or was refused as unsound)
    _index(toy_vault)
    dest, ready, go = tmp_path / "copy", tmp_path / "ready", tmp_path / "go"
    env = {**os.environ, "PYTHONPATH": f"{ROOT}{os.pathsep}{os.environ.get('PYTHONPATH', '')}"}
    args = [str(dest), str(toy_vault), str(ready), str(go)]
    child = subprocess.Popen([sys.executable, "-c", HELD_AFTER_OPEN, *args], env=env, stderr=subprocess.PIPE)
    writer = None
    try:
        _wait_for(lambda: ready.exists() or child.poll() is not None)
        assert child.poll() is None, child.stderr.read().decode() if child.stderr else ""
        index_vault(toy_vault, embedder=FakeEmbedder(), rebuild=True, progress=False)
        # a commit into the new index's WAL, held there (the connection stays open, no checkpoint)
        writer = sqlite3.connect(config.index_dir(toy_vault) / INDEX_FILE, isolation_level=None)
        writer.execute("PRAGMA wal_autocheckpoint = 0")
        writer.execute("CREATE TABLE after_rebuild (x)")
        writer.execute("INSERT INTO after_rebuild VALUES (1)")
    finally:
        go.touch()
        _, err = child.communicate(timeout=120)
        if writer is not None:
            writer.close()
    assert child.returncode == 0, err.decode()
    copy = dest / "vaults" / config.index_dir(toy_vault).name / INDEX_FILE
    _sound(copy)
    db = sqlite3.connect(copy)
    try:
        assert db.execute("SELECT x FROM after_rebuild").fetchall() == [(1,)]  # the index as it is now
    finally:
        db.close()


@pytest.mark.skipif(
    not hasattr(os, "statvfs") or not os.path.isdir("/proc") or os.statvfs("/proc").f_blocks != 0,
    reason="no /proc with no storage under it here",
)
def test_a_dest_on_no_disk_at_all_is_cannot_write_there_not_no_space(brain_home):
    # `brain backup /proc/x` said "not enough space … the disk has 0.0 MB free": there is no disk
    with connection() as db:
        write_turn(db, {"turn_key": "k0", "session_id": "s", "ask": "x"})
    code, out = _cli("/proc/brain-backup")
    assert code == 1 and out.count("\n") == 1 and "Traceback" not in out, out
    assert "cannot write the backup in /proc" in out and "not on a disk" in out, out
    assert "MB free" not in out and "not enough space" not in out, out


def test_a_ledger_brain_db_names_as_a_fifo_is_said_left_out(toy_vault, tmp_path, monkeypatch):
    # BRAIN_DB at a FIFO was passed over as "no ledger yet": the backup held the indexes alone,
    # exit 0, not a word that the ledger the user counted on was not in it
    fifo = tmp_path / "ledger.fifo"
    os.mkfifo(fifo)
    monkeypatch.setenv("BRAIN_DB", str(fifo))
    _index(toy_vault)
    result = CliRunner().invoke(cli, ["backup", str(tmp_path / "copy")])
    assert result.exit_code == 0, result.output  # as for an index SQLite cannot read: the rest is backed up
    assert result.stderr.count("\n") == 1, result.stderr
    assert f"the ledger {fifo} is a FIFO, not a database file: it is left out of the backup" in result.stderr
    assert "1 database" in result.stdout and not (tmp_path / "copy" / "brain.db").exists()
    shown = CliRunner().invoke(cli, ["backup", str(tmp_path / "json"), "--json"])
    left = [d for d in json.loads(shown.stdout)["databases"] if d["left_out"]]
    assert [(d["kind"], d["source"], d["not_a_file"]) for d in left] == [("ledger", str(fifo), True)]
    shutil.rmtree(config.brain_home() / "vaults")
    with pytest.raises(BackupError, match=r"is a FIFO, not a database file; .* holds no index"):  # nothing else
        backup(tmp_path / "alone")
    assert not [p for p in tmp_path.iterdir() if "alone" in p.name]


def test_a_dest_and_a_brain_db_whose_names_hold_a_line_break_print_on_their_lines(toy_vault, tmp_path, monkeypatch):
    # "backed up to" and "(BRAIN_DB ...)" printed the name raw: its line break split the line,
    # the rest read as a line of brain's own
    ledger = tmp_path / "led\nger.db"
    monkeypatch.setenv("BRAIN_DB", str(ledger))
    _index(toy_vault)
    with connection() as db:
        write_turn(db, {"turn_key": "k0", "session_id": "s", "ask": "kept"})
    dest = tmp_path / "copy\nforged line"
    result = CliRunner().invoke(cli, ["backup", str(dest)])
    assert result.exit_code == 0, result.output
    lines = result.stdout.splitlines()
    assert lines[0].startswith(f"backed up to {tmp_path}/copy\\nforged line: 2 databases"), result.stdout
    assert f"(BRAIN_DB {tmp_path}/led\\nger.db)" in result.stdout and len(lines) == 4, result.stdout
    assert (dest / "brain.db").is_file()


def test_a_ledger_brain_db_names_as_a_proc_file_is_said_left_out(toy_vault, tmp_path, monkeypatch):
    # BRAIN_DB=/proc/self/status (0 bytes to stat, text to read) was passed over as an empty
    # ledger: exit 0, not a word, while `brain turns` refuses it as no database
    monkeypatch.setenv("BRAIN_DB", "/proc/self/status")
    _index(toy_vault)
    result = CliRunner().invoke(cli, ["backup", str(tmp_path / "copy")])
    assert result.exit_code == 0, result.output
    assert result.stderr.count("\n") == 1, result.stderr
    assert "the ledger /proc/self/status is a file of 0 bytes to stat that holds text" in result.stderr
    assert "it is left out of the backup" in result.stderr
    assert not (tmp_path / "copy" / "brain.db").exists()
    empty = tmp_path / "empty.db"  # an empty file is no ledger yet, unsaid as before
    empty.touch()
    monkeypatch.setenv("BRAIN_DB", str(empty))
    quiet = CliRunner().invoke(cli, ["backup", str(tmp_path / "quiet")])
    assert quiet.exit_code == 0 and quiet.stderr == "", quiet.output


def test_a_dest_in_a_missing_folder_of_a_vault_or_the_home_is_refused_not_sent_to_mkdir(
    toy_vault, tmp_path, brain_home
):
    # The hint for a missing folder (mkdir -p it) sent the user to make a folder in the vault
    # (which its sync then carries) or in BRAIN_HOME, only to have the next try refused there
    _index(toy_vault)
    refused = {
        toy_vault / ".backups" / "b": f"is inside the vault {toy_vault}",
        toy_vault / "Engineering" / "new" / "b": f"is inside the vault {toy_vault}",
        brain_home / "backups" / "b": "is inside BRAIN_HOME",
    }
    for dest, why in refused.items():
        code, out = _cli(str(dest))
        assert code == 1 and why in out and "mkdir" not in out and out.count("\n") == 1, (dest, out)
        assert not dest.parent.exists()
    code, out = _cli(str(tmp_path / "missing" / "b"))
    assert code == 1 and "mkdir -p" in out
