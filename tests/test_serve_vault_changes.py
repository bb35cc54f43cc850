"""What `brain serve` serves once a change to the vault settles is what a fresh `brain index` of
the same vault gives: the same notes, chunks and links. Changes a watcher hears of badly or not
at all: notes and folders kept outside the vault behind a symlink, folders moved in and out,
ignore rules edited, a note swapped for a folder, permissions taken away, symlink loops."""

from __future__ import annotations

import os
import sqlite3
import subprocess
import sys
import time
from collections.abc import Iterator, Sequence
from contextlib import contextmanager, suppress
from pathlib import Path
from typing import Any

import pytest
from conftest import write
from index_helpers import index_into
from serve_helpers import LAUNCHER, brain_env, passed, served, settled, wait_until

from brain import config
from brain.server.daemon import Daemon

pytestmark = pytest.mark.skipif(os.name == "nt", reason="symlinks need privileges on Windows")


@contextmanager
def served_unwatched(vault: Path) -> Iterator[Any]:
    """The vault indexed and served with its watch failing for good (a symlink loop under
    polling): the service, once it indexes the vault again every few seconds instead."""
    os.symlink("Loop b.md", vault / "Loop a.md")
    os.symlink("Loop a.md", vault / "Loop b.md")
    _index(vault)
    with served(vault, force_polling=True) as daemon:
        service = daemon.service
        wait_until(lambda: service.watcher.mode == "rescans" and not service.watcher.busy, 15, "rescans")
        yield service


def _index(vault: Path) -> None:
    from conftest import FakeEmbedder

    index_into(Path(os.environ["BRAIN_HOME"]), vault, FakeEmbedder())


def _state(conn: sqlite3.Connection) -> dict:
    """The notes (path → chunk texts) and links (source, target as written, its note) of an index."""
    notes: dict[str, list[str]] = {}
    for path, text in conn.execute(
        "SELECT n.path, c.text FROM notes n LEFT JOIN chunks c ON c.note_id = n.id ORDER BY n.path, c.ordinal"
    ):
        notes.setdefault(path, []).append(text)
    links = sorted(
        (
            tuple(row)
            for row in conn.execute(
                "SELECT s.path, l.target, l.status, t.path FROM links l JOIN notes s ON s.id = l.source_id "
                "LEFT JOIN notes t ON t.id = l.target_id"
            )
        ),
        key=repr,
    )
    return {"notes": notes, "links": links}


def served_state(daemon: Daemon) -> dict:
    return daemon.service.run(lambda r: _state(r.store.conn), timeout=30)


def fresh_state(vault: Path, home: Path, prefix: Sequence[str] = ()) -> dict:
    """What a `brain index` of the vault as it is now gives, in a brain home of its own (run as
    a process: BRAIN_HOME set in this one would lead the server's own threads to that index).
    ``prefix``: a command to run it under."""
    done = subprocess.run(
        [*prefix, sys.executable, str(LAUNCHER), "index", "--vault", str(vault)],
        env=brain_env(BRAIN_HOME=str(home), BRAIN_EMBED_MODEL="fake:64"),
        capture_output=True,
        timeout=120,
        stdin=subprocess.DEVNULL,
    )
    assert done.returncode == 0, done.stderr.decode()
    return indexed_state(vault, home)


def indexed_state(vault: Path, home: Path) -> dict:
    """The state of the vault's index committed under ``home``."""
    directory = home / config.index_dir(vault).relative_to(config.brain_home())
    conn = sqlite3.connect(f"file:{directory / 'index.db'}?mode=ro", uri=True)
    try:
        return _state(conn)
    finally:
        conn.close()


def assert_served_as_indexed(daemon: Daemon, vault: Path, home: Path, timeout: float = 30) -> None:
    """What the server serves comes to be what a fresh index of the vault as it is gives, and
    stays so once the watcher has nothing pending. (It waited 0.4 s for the events to arrive,
    then for the watcher: the fresh index takes longer than the server's pass, so the wait is
    mostly on it.)"""
    fresh = fresh_state(vault, home)
    watcher = daemon.service.watcher
    with suppress(AssertionError):  # timed out: the comparison below says what differs
        wait_until(lambda: not watcher.busy and served_state(daemon) == fresh, timeout, "the vault served as indexed")
    served = served_state(daemon)
    assert served["notes"].keys() == fresh["notes"].keys()
    assert served == fresh


def _text(daemon: Daemon, path: str) -> str:
    return "\n".join(served_state(daemon)["notes"].get(path, []))


# ----- notes and folders kept outside the vault behind a symlink --------------------------------


@pytest.mark.parametrize("save", ["in place", "atomic"])
def test_a_symlinked_note_kept_outside_the_vault_is_served_as_edited(toy_vault, tmp_path, save):
    """The watcher watched the vault's tree, and a note that is a link to a file elsewhere is no
    entry in it: an edit of the file itself was served only after the five-minute rescan."""
    kept = write(tmp_path / "kept", "Zebra.md", "# Zebra\n\nThe quagga herd crosses the river.\n")
    os.symlink(kept, toy_vault / "Zebra.md")
    _index(toy_vault)
    with served(toy_vault) as daemon:
        assert "quagga" in _text(daemon, "Zebra.md")
        for word in ("okapi", "tapir", "numbat"):  # again and again: a watch that lasts one save is not enough
            text = f"# Zebra\n\nThe {word} herd crosses the river.\n"
            if save == "atomic":
                write(tmp_path / "kept", ".Zebra.md.swp", text)
                os.replace(tmp_path / "kept" / ".Zebra.md.swp", kept)
            else:
                kept.write_text(text, encoding="utf-8")
            settled(daemon, "Zebra.md")
            assert word in _text(daemon, "Zebra.md")
        assert_served_as_indexed(daemon, toy_vault, tmp_path / "fresh")


@pytest.mark.parametrize("polling", [False, True], ids=["events", "polling"])
def test_a_folder_linked_in_while_serving_is_watched(toy_vault, tmp_path, polling):
    """A folder kept elsewhere and linked in after the server started: its notes were indexed
    (the link is news), but the watch did not reach into it, so its edits were not."""
    kept = tmp_path / "kept"
    write(kept, "Zebra.md", "# Zebra\n\nThe quagga herd crosses the river.\n")
    _index(toy_vault)
    with served(toy_vault, force_polling=polling) as daemon:
        os.symlink(kept, toy_vault / "Linked")
        wait_until(lambda: "quagga" in _text(daemon, "Linked/Zebra.md"), 60, "the linked folder's note served")
        settled(daemon, "Linked/")
        write(kept, "Zebra.md", "# Zebra\n\nThe okapi herd crosses the river.\n")
        write(kept, "Deep/Gnu.md", "# Gnu\n\nThe gnu migrates. [[Zebra]]\n")
        wait_until(lambda: "okapi" in _text(daemon, "Linked/Zebra.md"), 60, "the linked note's edit served")
        wait_until(lambda: "gnu migrates" in _text(daemon, "Linked/Deep/Gnu.md"), 60, "the linked folder's new note")
        assert_served_as_indexed(daemon, toy_vault, tmp_path / "fresh")


def test_a_note_linked_from_a_linked_folder_to_elsewhere_is_watched(toy_vault, tmp_path):
    """A link inside a folder kept elsewhere, to a note kept elsewhere again."""
    kept, other = tmp_path / "kept", tmp_path / "other"
    write(kept, "Zebra.md", "# Zebra\n\nThe quagga herd.\n")
    far = write(other, "Far.md", "# Far\n\nThe far herd.\n")
    os.symlink(far, kept / "Far.md")
    os.symlink(kept, toy_vault / "Linked")
    _index(toy_vault)
    with served(toy_vault) as daemon:
        assert "far herd" in _text(daemon, "Linked/Far.md")
        far.write_text("# Far\n\nThe distant herd.\n", encoding="utf-8")
        settled(daemon, "Linked/Far.md")
        assert "distant herd" in _text(daemon, "Linked/Far.md")
        assert_served_as_indexed(daemon, toy_vault, tmp_path / "fresh")


def test_a_linked_folder_pointed_elsewhere_is_watched_there(toy_vault, tmp_path):
    """`ln -sfn`: the link now leads to another folder; edits there are the vault's now."""
    first, second = tmp_path / "first", tmp_path / "second"
    write(first, "Zebra.md", "# Zebra\n\nThe quagga herd.\n")
    write(second, "Gnu.md", "# Gnu\n\nThe gnu herd.\n")
    os.symlink(first, toy_vault / "Linked")
    _index(toy_vault)
    with served(toy_vault) as daemon:
        os.symlink(second, toy_vault / "Linked.tmp")
        os.replace(toy_vault / "Linked.tmp", toy_vault / "Linked")
        settled(daemon, "Linked/")
        assert "gnu herd" in _text(daemon, "Linked/Gnu.md")
        write(second, "Gnu.md", "# Gnu\n\nThe wildebeest herd.\n")
        settled(daemon, "Linked/Gnu.md")
        assert "wildebeest" in _text(daemon, "Linked/Gnu.md")
        assert_served_as_indexed(daemon, toy_vault, tmp_path / "fresh")


# ----- the hunt: what a hostile user does to a served vault -------------------------------------


def test_folders_moved_out_of_the_vault_and_in_again(toy_vault, tmp_path):
    import shutil

    _index(toy_vault)
    away = tmp_path / "away"
    away.mkdir()
    write(away, "Incoming/Sub/Deep note.md", "# Deep note\n\nLinks to [[Sourdough bread]].\n")
    with served(toy_vault) as daemon:
        shutil.move(toy_vault / "Cooking", away / "Cooking")
        assert_served_as_indexed(daemon, toy_vault, tmp_path / "fresh1")
        shutil.move(away / "Incoming", toy_vault / "Incoming")
        shutil.move(away / "Cooking", toy_vault / "Incoming" / "Sub" / "Cooking")  # back, deeper
        assert_served_as_indexed(daemon, toy_vault, tmp_path / "fresh2")
        os.rename(toy_vault / "Incoming", toy_vault / "Renamed")
        assert_served_as_indexed(daemon, toy_vault, tmp_path / "fresh3")


def test_notes_moved_into_a_dot_folder_or_an_ignored_folder_and_back(toy_vault, tmp_path):
    _index(toy_vault)
    with served(toy_vault) as daemon:
        (toy_vault / ".trash").mkdir(exist_ok=True)
        os.rename(toy_vault / "AI" / "Agent memory.md", toy_vault / ".trash" / "Agent memory.md")
        os.rename(toy_vault / "People" / "Ada Lovelace.md", toy_vault / "Templates" / "Ada Lovelace.md")
        os.rename(toy_vault / "Cooking", toy_vault / "Templates" / "Cooking")
        assert_served_as_indexed(daemon, toy_vault, tmp_path / "fresh1")
        os.rename(toy_vault / ".trash" / "Agent memory.md", toy_vault / "AI" / "Agent memory.md")
        os.rename(toy_vault / "Templates" / "Ada Lovelace.md", toy_vault / "People" / "Ada Lovelace.md")
        os.rename(toy_vault / "Templates" / "Cooking", toy_vault / "Cooking")
        assert_served_as_indexed(daemon, toy_vault, tmp_path / "fresh2")


def test_brainignore_edited_replaced_and_deleted_while_serving(toy_vault, tmp_path):
    _index(toy_vault)
    ignore = toy_vault / ".brainignore"
    with served(toy_vault) as daemon:
        ignore.write_text("Templates/\nCooking/\nPeople/Ada*\n", encoding="utf-8")
        assert_served_as_indexed(daemon, toy_vault, tmp_path / "fresh1")
        write(toy_vault, "Cooking/New recipe.md", "# New recipe\n\nIgnored from the start.\n")
        tmp = toy_vault / ".brainignore.tmp"  # an editor's atomic save
        tmp.write_text("Templates/\n", encoding="utf-8")
        os.replace(tmp, ignore)
        assert_served_as_indexed(daemon, toy_vault, tmp_path / "fresh2")
        ignore.unlink()
        assert_served_as_indexed(daemon, toy_vault, tmp_path / "fresh3")


def test_brainignore_in_another_case_on_a_case_insensitive_file_system_while_serving(toy_vault, monkeypatch):
    """On macOS and Windows an edit of .brainignore naming folders in another case than on disk
    (`cooking/`) takes their notes out of the served index, as the same edit in their case
    does, by the same pass; an edit back brings them in again."""
    from brain import vault as vault_module

    monkeypatch.setattr(vault_module, "case_insensitive", lambda folder, name: True)
    _index(toy_vault)
    ignore = toy_vault / ".brainignore"

    def walked() -> set[str]:
        notes, _ = vault_module.scan(toy_vault.resolve(), vault_module.load_ignore(toy_vault.resolve()))
        return {n.path for n in notes}

    with served(toy_vault) as daemon:
        assert any(p.startswith("Cooking/") for p in served_state(daemon)["notes"])
        ignore.write_text("TEMPLATES/\ncooking/\npeople/ada*\n", encoding="utf-8")
        wait_until(lambda: not any(p.startswith("Cooking/") for p in served_state(daemon)["notes"]), 30, "a pass")
        settled(daemon, ".brainignore")
        notes = set(served_state(daemon)["notes"])
        assert notes == walked() and not any(p.startswith(("Cooking/", "People/Ada")) for p in notes)
        ignore.write_text("Templates/\n", encoding="utf-8")
        wait_until(lambda: any(p.startswith("Cooking/") for p in served_state(daemon)["notes"]), 30, "a pass")
        settled(daemon, ".brainignore")
        assert set(served_state(daemon)["notes"]) == walked()


def test_brainignore_kept_outside_the_vault_behind_a_symlink(toy_vault, tmp_path):
    """A dotfiles manager keeps `.brainignore` elsewhere and links it in: its edits are rules."""
    kept = write(tmp_path / "dotfiles", "brainignore", "Templates/\n")
    (toy_vault / ".brainignore").unlink()
    os.symlink(kept, toy_vault / ".brainignore")
    _index(toy_vault)
    with served(toy_vault) as daemon:
        kept.write_text("Templates/\nCooking/\n", encoding="utf-8")
        assert_served_as_indexed(daemon, toy_vault, tmp_path / "fresh1")
        assert not any(p.startswith("Cooking/") for p in served_state(daemon)["notes"])


def test_a_note_replaced_by_a_folder_of_its_name_and_back(toy_vault, tmp_path):
    import shutil

    _index(toy_vault)
    note = toy_vault / "AI" / "Agent memory.md"
    with served(toy_vault) as daemon:
        note.unlink()
        write(note, "Inside.md", "# Inside\n\nA note in a folder named like a note.\n")
        assert_served_as_indexed(daemon, toy_vault, tmp_path / "fresh1")
        shutil.rmtree(note)
        note.write_text("# Agent memory\n\nBack as a note.\n", encoding="utf-8")
        assert_served_as_indexed(daemon, toy_vault, tmp_path / "fresh2")


def test_symlink_loops_made_and_broken_while_serving(toy_vault, tmp_path):
    _index(toy_vault)
    with served(toy_vault) as daemon:
        os.symlink("..", toy_vault / "AI" / "up")
        os.symlink("Loop b.md", toy_vault / "Loop a.md")
        os.symlink("Loop a.md", toy_vault / "Loop b.md")
        kept = tmp_path / "kept"
        write(kept, "Far.md", "# Far\n\nKept elsewhere.\n")
        os.symlink(kept, kept / "again")  # a loop inside a folder linked in
        os.symlink(toy_vault, kept / "vault")  # and back into the vault
        os.symlink(kept, toy_vault / "Kept")
        assert_served_as_indexed(daemon, toy_vault, tmp_path / "fresh1")
        os.unlink(toy_vault / "Loop b.md")  # the loop broken: a note in its place
        write(toy_vault, "Loop b.md", "# Loop b\n\nNo longer a loop.\n")
        os.unlink(toy_vault / "AI" / "up")
        write(kept, "Nearer.md", "# Nearer\n\nAdded elsewhere.\n")
        assert_served_as_indexed(daemon, toy_vault, tmp_path / "fresh2")


def test_a_case_only_rename(toy_vault, tmp_path):
    _index(toy_vault)
    with served(toy_vault) as daemon:
        os.rename(toy_vault / "AI" / "Agent memory.md", toy_vault / "AI" / "agent Memory.md")
        os.rename(toy_vault / "Cooking", toy_vault / "cooking")
        assert_served_as_indexed(daemon, toy_vault, tmp_path / "fresh")


def test_a_burst_of_atomic_saves_and_deletes(toy_vault, tmp_path):
    import random

    _index(toy_vault)
    rng = random.Random(7)
    with served(toy_vault) as daemon:
        names = [f"Burst/Note {i}.md" for i in range(40)]
        for round_ in range(6):
            for name in rng.sample(names, 25):
                target = toy_vault / name
                if rng.random() < 0.25 and target.exists():
                    target.unlink()
                    continue
                target.parent.mkdir(exist_ok=True)
                tmp = target.with_name(f".{target.name}.tmp{round_}")
                tmp.write_text(f"# {target.stem}\n\nRound {round_}: [[Note {rng.randrange(40)}]]\n", encoding="utf-8")
                os.replace(tmp, target)
            time.sleep(rng.choice([0.0, 0.05, 0.2, 0.4]))
        assert_served_as_indexed(daemon, toy_vault, tmp_path / "fresh")


def test_a_note_whose_symlink_target_is_swapped_outside_the_vault(toy_vault, tmp_path):
    """vault/Zebra.md → kept/current.md → v1.md, and `ln -sfn v2.md current.md` in kept."""
    kept = tmp_path / "kept"
    write(kept, "v1.md", "# Zebra\n\nThe first herd.\n")
    write(kept, "v2.md", "# Zebra\n\nThe second herd.\n")
    os.symlink("v1.md", kept / "current.md")
    os.symlink(kept / "current.md", toy_vault / "Zebra.md")
    _index(toy_vault)
    with served(toy_vault) as daemon:
        os.symlink("v2.md", kept / "next.md")
        os.replace(kept / "next.md", kept / "current.md")
        settled(daemon, "Zebra.md")
        assert "second herd" in _text(daemon, "Zebra.md")
        (kept / "current.md").unlink()  # nowhere, then back
        assert_served_as_indexed(daemon, toy_vault, tmp_path / "fresh1")
        os.symlink("v1.md", kept / "current.md")
        assert_served_as_indexed(daemon, toy_vault, tmp_path / "fresh2")
        assert "first herd" in _text(daemon, "Zebra.md")


@pytest.mark.parametrize("how", ["moved away", "deleted"])
def test_answers_while_the_vault_is_gone_say_so_and_stop_saying_once_it_is_back(toy_vault, tmp_path, how, zone):
    """The watcher said it once in the log; every answer meanwhile came from the index as it
    was, saying nothing (`brain mcp` and the socket's other clients ask without checking the
    path), and `status` said the server was ready. When it went is local time, said so, as
    `brain ask` says its other times (it said UTC)."""
    import re
    import shutil

    from brain.recall.types import RecallSettings

    zone("Asia/Tokyo")  # UTC+9, no summer time
    _index(toy_vault)
    with served(toy_vault) as daemon:
        service = daemon.service
        went = int(time.time())
        if how == "moved away":
            os.rename(toy_vault, tmp_path / "elsewhere")
        else:
            shutil.copytree(toy_vault, tmp_path / "elsewhere", symlinks=True)
            shutil.rmtree(toy_vault)
        wait_until(lambda: service.status()["watch"].get("gone"), 10, "the server to see the vault gone")
        results = service.ask("agent memory", ["hybrid"], RecallSettings(k=3))
        assert results[0].results and results[0].stale
        assert any("moved or deleted" in w and str(toy_vault) in w for w in results[0].warnings)
        said = re.search(r"deleted at (\S+ \S+) local", " ".join(results[0].warnings))
        assert said, results[0].warnings
        assert went <= time.mktime(time.strptime(said[1], "%Y-%m-%d %H:%M:%S")) <= time.time()
        passes = service.watcher.passes  # none runs: the watcher waits for the vault to be back
        os.rename(tmp_path / "elsewhere", toy_vault)
        wait_until(lambda: not service.status()["watch"].get("gone"), 10, "the server to see the vault back")
        passed(daemon, passes)  # the pass over the vault back, which no event asks for
        results = service.ask("agent memory", ["hybrid"], RecallSettings(k=3))
        assert results[0].results and not results[0].stale and not results[0].warnings
        assert_served_as_indexed(daemon, toy_vault, tmp_path / "fresh")


@pytest.mark.parametrize("loop", ["note", "folder"])
def test_a_symlink_loop_does_not_stop_a_polling_watcher(toy_vault, tmp_path, monkeypatch, loop):
    """watchfiles' poller gives up on the whole vault for one symlink loop in it (a network
    drive, or out of inotify watches): the server tried again every 5 s, logging a traceback
    each time, and indexed nothing more until the loop was gone."""
    from serve_helpers import wait_until

    from brain.server import watcher as watcher_module

    monkeypatch.setattr(watcher_module, "RETRY_SECONDS", 0.3, raising=False)
    if loop == "note":
        os.symlink("Loop b.md", toy_vault / "Loop a.md")
        os.symlink("Loop a.md", toy_vault / "Loop b.md")
    else:
        os.symlink("..", toy_vault / "AI" / "up")
    _index(toy_vault)
    with served(toy_vault, force_polling=True) as daemon:
        write(toy_vault, "Fresh.md", "# Fresh\n\nThe okapi note.\n")
        wait_until(lambda: "Fresh.md" in served_state(daemon)["notes"], 15, "the new note")
        (toy_vault / ("Loop a.md" if loop == "note" else "AI/up")).unlink()
        wait_until(lambda: daemon.service.watcher.mode == "polling", 15, "watching again")
        assert_served_as_indexed(daemon, toy_vault, tmp_path / "fresh")


def test_answers_while_the_vault_cannot_be_watched_wait_for_a_pass_or_say_so(toy_vault):
    """With the watch failing (a symlink loop under polling) the vault is indexed again every
    5 s, and the watcher holds no change meanwhile: an answer a second after a save left the
    note out and said nothing (no warning, not stale), where `brain ask` waits for what the
    watcher holds. Now a question has the vault indexed again and waits for that; given no time
    to wait, its answer says so."""
    from brain.recall.types import RecallSettings

    with served_unwatched(toy_vault) as service:
        write(toy_vault, "Okapi.md", "# Okapi\n\nThe okapi grazes at dusk.\n")
        results = service.ask("okapi grazes at dusk", ["hybrid"], RecallSettings(k=3), wait=10)
        assert "Okapi.md" in [c.path for c in results[0].results]
        assert not results[0].stale and not results[0].warnings
        write(toy_vault, "Tapir.md", "# Tapir\n\nThe tapir swims at dawn.\n")
        results = service.ask("tapir swims at dawn", ["hybrid"], RecallSettings(k=3), wait=0)
        assert results[0].stale and any("cannot be watched" in w for w in results[0].warnings), results[0].warnings
        results = service.ask("tapir swims at dawn", ["hybrid"], RecallSettings(k=3), wait=10)
        assert "Tapir.md" in [c.path for c in results[0].results] and not results[0].warnings


def test_a_stream_of_questions_while_the_vault_cannot_be_watched_shares_passes(toy_vault, monkeypatch):
    """Each question while the watch failed had the vault indexed again and waited until the
    watcher held no question's pass: under a stream the passes ran back to back (a CPU's worth,
    against the README's 5%) and a question waited for the passes of those after it (10,000
    notes, 50 questions a second: 7 s p50). Now a question waits for the first pass begun
    after it asked, questions share passes, and the passes are spaced to their share of a CPU."""
    import threading

    from brain.recall.types import RecallSettings
    from brain.server import service as service_module
    from brain.server import watcher as watcher_module

    share = 0.1
    monkeypatch.setattr(watcher_module, "CATCH_UP_SHARE", share)
    passes: list[tuple[float, float, float]] = []  # began, ended, CPU
    real = service_module.Service._on_batch

    def timed(self, batch):  # a pass of a larger vault: 0.1 s more CPU
        began, cpu = time.monotonic(), time.thread_time()
        while time.thread_time() < cpu + 0.1:
            pass
        real(self, batch)
        passes.append((began, time.monotonic(), time.thread_time() - cpu))

    monkeypatch.setattr(service_module.Service, "_on_batch", timed)
    with served_unwatched(toy_vault) as service:
        answers: dict[int, tuple[float, float, bool, list[str]]] = {}

        def ask(number: int) -> None:
            asked = time.monotonic()
            if number == 30:  # saved just before it asks
                write(toy_vault, "Okapi.md", "# Okapi\n\nThe okapi grazes at dusk.\n")
            results = service.ask("okapi grazes at dusk", ["hybrid"], RecallSettings(k=3), wait=10)[0]
            answers[number] = (asked, time.monotonic(), bool(results.stale), [c.path for c in results.results])

        started = time.monotonic()
        threads = []
        for number in range(60):  # 20 a second for 3 s
            threads.append(threading.Thread(target=ask, args=(number,)))
            threads[-1].start()
            time.sleep(max(0.0, started + (number + 1) / 20 - time.monotonic()))
        for thread in threads:
            thread.join(30)
        ended = max(answered for _, answered, _, _ in answers.values())
    assert len(answers) == 60 and not any(stale for _, _, stale, _ in answers.values())
    assert "Okapi.md" in answers[30][3]
    for asked, answered, _, _ in answers.values():  # each answered from a pass begun after it asked
        assert any(asked <= began and done <= answered for began, done, _ in passes), (asked, answered)
    spent = sum(cpu for began, done, cpu in passes if began >= started and done <= ended)
    longest = max(cpu for _, _, cpu in passes)
    assert spent <= share * (ended - started) + 2 * longest, (spent, ended - started, len(passes))


def test_under_polling_a_change_of_mode_is_news(tmp_path):
    """watchfiles' poller compares mtimes, which chmod leaves as they were: a note or a folder
    made unreadable (or readable again) under polling was heard of only at the rescan. The
    watcher's own look reports them (their ctime moved, their mtime did not), and leaves a
    write (the poller's to hear), a dot-folder and an ignored note alone."""
    from brain.server.watcher import VaultWatcher

    vault = tmp_path / "vault"
    note = write(vault, "Cooking/Bread.md", "# Bread\n")
    written = write(vault, "Soup.md", "# Soup\n")
    hidden = write(vault, ".obsidian/Hidden.md", "# Hidden\n")
    ignored = write(vault, "Drafts/Draft.md", "# Draft\n")
    write(vault, ".brainignore", "Drafts/\n")
    watcher = VaultWatcher(vault, lambda batch: None, force_polling=True)
    assert watcher._poll_modes() == set()  # the first look: nothing to compare with
    time.sleep(0.01)
    for path in (note, hidden, ignored, vault / "Cooking"):
        path.chmod(0o600 if path.is_file() else 0o700)
    written.write_text("# Soup\n\nLeek.\n")
    assert watcher._poll_modes() == {"Cooking/Bread.md", "Cooking/"}
    assert watcher._poll_modes() == set()


def test_a_folder_made_unreadable_is_news(tmp_path, monkeypatch):
    """`chmod 000 Folder` is reported as the folder modified. The watcher looked into it for a
    note, found none it could read, and took it for an empty folder: its notes stayed served
    (a fresh `brain index` skips them as unreadable) until the rescan. Run as root here, so the
    listing is refused by hand, as it is for anyone else."""
    from watchfiles import Change

    from brain.server.watcher import VaultWatcher

    vault = tmp_path / "vault"
    write(vault, "Cooking/Bread.md", "# Bread\n")
    shut = str(vault / "Cooking")
    scandir = os.scandir

    def refusing(path):
        if os.fspath(path) == shut:
            raise PermissionError(13, "Permission denied", shut)
        return scandir(path)

    monkeypatch.setattr(os, "scandir", refusing)
    watcher = VaultWatcher(vault, lambda batch: None, known_folder=lambda rel: rel == "Cooking")
    assert watcher._relevant([(Change.modified, shut)]) == {"Cooking/"}
    watcher = VaultWatcher(vault, lambda batch: None)  # a folder no indexed note is in: no news
    assert watcher._relevant([(Change.modified, shut)]) == set()


@pytest.mark.slow  # a server as a process that file modes bind
def test_a_folder_unreadable_then_readable_under_a_server_file_modes_bind(toy_vault, tmp_path, brain_home):
    """A folder made unreadable (chmod 000, another user's) under a real server that file modes
    bind (as root, ``setpriv`` without CAP_DAC_OVERRIDE, as `test_hardening_index` does).
    Unreadable when the watch began, it failed the whole watch, then polling, which fails on it
    too: the server retried every 5 s, indexing nothing. Made readable, it had no watch of its
    own. Made unreadable while watched, its notes stayed served: the watcher looked into it for
    a note, found none it could read, and took it for an empty folder."""
    from index_helpers import modes_binding_prefix

    from brain.server import client

    prefix = modes_binding_prefix()
    _index(toy_vault)
    root = toy_vault.resolve()
    folder = toy_vault / "Cooking"
    folder.chmod(0)
    server = subprocess.Popen(
        [*prefix, sys.executable, str(LAUNCHER), "serve", "--vault", str(root)],
        env=brain_env(BRAIN_EMBED_MODEL="fake:64", BRAIN_RERANK_MODEL="none"),
        stdin=subprocess.DEVNULL,
        stdout=subprocess.DEVNULL,
        stderr=subprocess.DEVNULL,
    )

    def watch() -> dict:
        return (client.status(root) or {}).get("watch") or {"busy": True}

    def settled_then_compared(step: str) -> dict:
        # what the server committed comes to be a fresh index of the vault as it is (it slept
        # 0.6 s for the events to arrive, then compared)
        fresh = fresh_state(toy_vault, tmp_path / step, prefix)
        with suppress(AssertionError):  # timed out: the comparison below says what differs
            wait_until(lambda: not watch()["busy"] and indexed_state(toy_vault, brain_home) == fresh, 30, step)
        served = indexed_state(toy_vault, brain_home)
        assert served["notes"].keys() == fresh["notes"].keys(), step
        assert served == fresh, step
        return served

    try:
        wait_until(lambda: watch().get("mode") not in (None, "starting"), 60, "the server to watch")
        time.sleep(0.5)  # time for a fall back to polling to show: none may come
        assert watch()["mode"] == "events"
        write(toy_vault, "AI/Fresh.md", "# Fresh\n\nThe okapi note.\n")
        assert "AI/Fresh.md" in settled_then_compared("started shut")["notes"]
        folder.chmod(0o755)
        assert "Cooking/Knife skills.md" in settled_then_compared("opened")["notes"]
        write(folder, "Knife skills.md", "# Knife skills\n\nThe tapir cut.\n")
        assert "tapir" in "".join(settled_then_compared("edited inside")["notes"]["Cooking/Knife skills.md"])
        folder.chmod(0)
        assert not any(p.startswith("Cooking/") for p in settled_then_compared("shut again")["notes"])
    finally:
        folder.chmod(0o755)
        server.terminate()
        try:
            server.wait(30)
        except subprocess.TimeoutExpired:
            server.kill()
            server.wait(30)


def test_a_rescan_that_finds_what_no_event_told_of_watches_again_and_says_so(toy_vault, caplog):
    """A rescan under the watch that found notes changed was taken as a safety net that worked,
    and nothing more: the watch that missed them (a folder made while the kernel dropped events,
    its later saves heard by nothing) stayed as it was until the server restarted. Each such
    rescan now starts the watch again, said in the log (whole once, then counted) and by
    `brain status --json` (watch.unheard, watch.last_unheard)."""
    import logging

    caplog.set_level(logging.INFO, logger="brain")
    _index(toy_vault)
    with served(toy_vault, rescan_seconds=1.0) as daemon:
        watcher = daemon.service.watcher
        heard = watcher._relevant
        # the watch misses everything in Lost/ (as it does a folder whose creation was dropped)
        watcher._relevant = lambda changes: {p for p in heard(changes) if not p.startswith("Lost")}  # type: ignore[method-assign]
        assert daemon.service.status()["watch"]["unheard"] == 0
        write(toy_vault, "Lost/First.md", "# First\n\nA note no event told of.\n")
        wait_until(lambda: daemon.service.status()["watch"]["unheard"] == 1, 15, "a rescan to find the note")
        rescans = watcher.passes  # that rescan's (or, begun since, the pass of the watch started again)
        status = daemon.service.status()
        assert status["watch"]["last_unheard"]["changes"] == 1, status["watch"]
        assert status["last_update"]["reason"] == "rescan" and status["last_update"]["new"] == 1
        passed(daemon, rescans)  # the watch started again, and its pass (no event asks for it)
        write(toy_vault, "Lost/Second.md", "# Second\n\nAnother note no event told of.\n")
        wait_until(lambda: daemon.service.status()["watch"]["unheard"] == 2, 15, "a rescan to find the second")
        assert "Lost/Second.md" in daemon.service.run(lambda r: r.store.note_paths(), timeout=10)
    said = [
        r.getMessage() for r in caplog.records if "no event told of" in r.getMessage() and "rescan" in r.getMessage()
    ]
    whole = [s for s in said if "watching it again (said once" in s]
    assert len(whole) == 1 and "found 1 change no event told of" in whole[0], said
    assert any("(2 times since" in s for s in said), said


def test_status_says_the_watch_was_started_again_for_changes_no_event_told_of(tmp_path):
    from brain.cli import _server_line

    watch = {"unheard": 2, "last_unheard": {"at": "2026-12-06T19:28:34Z", "changes": 1}}
    server = {"pid": 7, "uptime_s": 5, "queries": 0, "state": "ready", "watch": watch, "last_update": None}
    line = _server_line(server, tmp_path)
    assert "watch started again 2 times: rescans found changes no event told of" in line, line
    assert "started again" not in _server_line(dict(server, watch={"unheard": 0}), tmp_path)


def test_a_note_saved_while_a_rescan_runs_is_no_sign_the_watch_missed_something(tmp_path):
    """A rescan finds a note saved while it ran, and the watch hears it just after: the watch
    missed nothing, and it is not started again for it (nor said to have missed changes)."""
    from brain.server.watcher import VaultWatcher

    vault = tmp_path / "vault"
    write(vault, "a.md", "# A\n")
    rescans = []

    def on_batch(batch) -> int:
        if batch.reason != "rescan":
            return 0
        rescans.append(batch)
        if len(rescans) == 1:  # saved during the pass, and found by it
            write(vault, "During.md", "# During\n\nSaved while the rescan ran.\n")
            return 1
        return 0

    watcher = VaultWatcher(vault, on_batch, settle_ms=100, rescan_seconds=1.0)
    watcher.start()
    try:
        wait_until(lambda: len(rescans) >= 3, 20, "three rescans")
    finally:
        watcher.stop()
    assert watcher.unheard == 0 and watcher.last_unheard is None


def test_events_in_a_dot_folder_over_hours_are_no_burst_at_the_next_save(tmp_path):
    """Every event counts towards a burst (``_heard``), a dot-folder's too, but the count was
    reset only when a batch was handed over: events no batch came of (.git's objects, Obsidian's
    workspace.json, saved again and again) added up for as long as no note changed, so the next
    note saved after a day of them was taken for a burst the kernel may have dropped events of (a
    new watch, a pass over the whole vault, a warning in serve.log). A quiet moment ends a burst."""
    from brain.server.watcher import VaultWatcher

    vault = tmp_path / "vault"
    write(vault, "a.md", "# A\n")
    batches = []
    watcher = VaultWatcher(vault, lambda batch: batches.append(batch) or 0, settle_ms=100, rescan_seconds=3600)
    watcher.burst_events = 40
    watcher.start()
    try:
        wait_until(lambda: watcher.mode == "events" and not watcher.busy and batches, 15, "the watch to start")
        for spell in range(6):  # quiet spells apart, as a day of git commits and workspace saves
            for i in range(10):
                write(vault, f".git/objects/{spell}/{i}", "blob")
            time.sleep(0.5)
        write(vault, "b.md", "# B\n\nSaved after the dot-folder's events.\n")
        wait_until(lambda: any("b.md" in b.paths for b in batches), 15, "the save to be heard")
    finally:
        watcher.stop()
    assert watcher.bursts == 0, watcher.last_burst
    assert [b.reason for b in batches if "b.md" in b.paths] == ["changes"]


def test_bursts_again_and_again_are_said_whole_once_then_counted(tmp_path, caplog):
    """A vault a sync tool writes thousands of notes into every minute: each burst wrote the whole
    warning (what the kernel may drop, why the watch starts again) every time. The first is said
    whole, the others in one line with the count, as a rescan's unheard changes are."""
    from brain.server.watcher import VaultWatcher

    vault = tmp_path / "vault"
    write(vault, "a.md", "# A\n")
    batches = []
    watcher = VaultWatcher(vault, lambda batch: batches.append(batch) or 0, settle_ms=100, rescan_seconds=3600)
    watcher.burst_events = 40
    watcher.start()
    try:
        with caplog.at_level("INFO", logger="brain"):
            wait_until(lambda: watcher.mode == "events" and not watcher.busy and batches, 15, "the watch to start")
            for burst in range(3):
                for i in range(60):  # 60 notes, an event or more each: over 40
                    write(vault, f"sync{burst}-{i}.md", f"# {i}\n")
                wait_until(lambda n=burst + 1: watcher.bursts == n and not watcher.busy, 15, f"burst {burst + 1}")
    finally:
        watcher.stop()
    said = [r for r in caplog.records if "heard in one burst" in r.getMessage()]
    assert [r.levelname for r in said] == ["WARNING", "INFO", "INFO"], [r.getMessage() for r in said]
    assert "max_queued_events" in said[0].getMessage() and "max_queued_events" not in said[1].getMessage()
    assert "(3 bursts since " in said[2].getMessage(), said[2].getMessage()
    assert watcher.last_burst is not None and watcher.last_burst["events"] >= 40


def test_a_vault_that_gets_no_events_is_said_once_and_the_watch_left_as_it_is(tmp_path, caplog):
    """A network or FUSE mount edited from another machine: no event comes for its changes, so
    every rescan found changes no event told of and started the watch again, with a pass over the
    whole vault after its own, for as long as the server ran. After ``NO_EVENTS_AFTER`` restarts
    in a row that heard nothing, it is said once, naming the polling setting, and the rescans
    alone find the changes."""
    from brain.server import watcher as watcher_module
    from brain.server.watcher import VaultWatcher

    vault = tmp_path / "vault"
    write(vault, "a.md", "# A\n")
    batches = []

    def on_batch(batch) -> int:  # each rescan finds a note changed elsewhere, no event for it here
        batches.append(batch)
        return 1 if batch.reason == "rescan" else 0

    watcher = VaultWatcher(vault, on_batch, settle_ms=100, rescan_seconds=0.4)
    watcher.start()
    try:
        with caplog.at_level("INFO", logger="brain"):
            wait_until(lambda: watcher.unheard >= getattr(watcher_module, "NO_EVENTS_AFTER", 3) + 4, 40, "rescans")
    finally:
        watcher.stop()
    looks = [
        batch for batch in batches if batch.paths == frozenset({"."})
    ]  # the watch's first look, and each restart's
    assert len(looks) == 1 + getattr(watcher_module, "NO_EVENTS_AFTER", 3), [
        (b.reason, sorted(b.paths)) for b in batches
    ]
    said = [r.getMessage() for r in caplog.records if "gets no file-system events" in r.getMessage()]
    assert len(said) == 1 and "WATCHFILES_FORCE_POLLING=1" in said[0], said
    assert watcher.no_events is not None and watcher.no_events["rescans"] >= 4, watcher.no_events


def test_a_vault_taken_for_one_without_events_that_is_heard_again_is_watched_again(tmp_path, caplog):
    """A mount remounted: once ``no_events`` was set it was never cleared, so the status said the
    vault gets no events however many were heard, and rescans finding changes no event told of
    never started the watch again. An event heard clears it, said in the log once, and the next
    such rescan starts the watch again."""
    from brain.server import watcher as watcher_module
    from brain.server.watcher import VaultWatcher

    vault = tmp_path / "vault"
    write(vault, "a.md", "# A\n")
    batches = []

    def on_batch(batch) -> int:  # each rescan finds a note changed elsewhere, no event for it here
        batches.append(batch)
        return 1 if batch.reason == "rescan" else 0

    def looks() -> int:  # the watch's first look, and each restart's
        return sum(batch.paths == frozenset({"."}) for batch in list(batches))

    watcher = VaultWatcher(vault, on_batch, settle_ms=100, rescan_seconds=0.4)
    watcher.start()
    try:
        with caplog.at_level("INFO", logger="brain"):
            wait_until(lambda: watcher.no_events is not None and not watcher.busy, 40, "no events taken for")
            before = looks()
            assert before == 1 + getattr(watcher_module, "NO_EVENTS_AFTER", 3)
            write(vault, "b.md", "# B\n")  # heard: the vault gets events again
            wait_until(lambda: any("b.md" in b.paths for b in list(batches)), 15, "the save to be heard")
            wait_until(lambda: looks() > before, 15, "an unheard rescan to start the watch again")
            # deaf again: taken for one anew, in one line (the whole warning was said)
            wait_until(lambda: watcher.no_events is not None, 40, "no events taken for again")
    finally:
        watcher.stop()
    said = [r.getMessage() for r in caplog.records if "taken since" in r.getMessage()]
    assert len(said) == 1 and "for a vault that gets none" in said[0], said
    whole = [r.getMessage() for r in caplog.records if "gets no file-system events" in r.getMessage()]
    again = [r.getMessage() for r in caplog.records if "found changes no event told of again" in r.getMessage()]
    assert len(whole) == 1 and len(again) == 1, (whole, again)


def test_events_between_rescans_that_find_unheard_changes_keep_the_watch_started_again(tmp_path):
    """A watch that hears this vault (a note saved here after each restart, heard) is not taken
    for a deaf one however many rescans find changes it missed: each starts it again, as before."""
    from brain.server import watcher as watcher_module
    from brain.server.watcher import VaultWatcher

    vault = tmp_path / "vault"
    write(vault, "a.md", "# A\n")
    batches = []

    def on_batch(batch) -> int:
        batches.append(batch)
        if batch.paths == frozenset({"."}):  # a new watch's look: a note saved here now is heard
            write(vault, "b.md", f"# B\n\n{len(batches)}\n")
        return 1 if batch.reason == "rescan" else 0

    watcher = VaultWatcher(vault, on_batch, settle_ms=100, rescan_seconds=0.4)
    watcher.start()
    try:
        wait_until(lambda: watcher.unheard >= getattr(watcher_module, "NO_EVENTS_AFTER", 3) + 3, 40, "rescans")
    finally:
        watcher.stop()
    looks = [batch for batch in batches if batch.paths == frozenset({"."})]
    # the first look, and a restart for each rescan but maybe the last (stopped before its look)
    assert watcher.no_events is None and len(looks) >= watcher.unheard, [(b.reason, sorted(b.paths)) for b in batches]


def test_status_says_a_vault_gets_no_events_and_how_to_poll_it(tmp_path):
    from brain.cli import _server_line

    watch = {"unheard": 7, "no_events": {"since": "2026-12-06T19:28:34Z", "rescans": 4}}
    server = {"pid": 7, "uptime_s": 5, "queries": 0, "state": "ready", "watch": watch, "last_update": None}
    line = _server_line(server, tmp_path)
    assert "rescans found changes no event told of 7 times: the vault looks like it gets no events" in line, line
    assert "WATCHFILES_FORCE_POLLING=1" in line and "started again" not in line, line
