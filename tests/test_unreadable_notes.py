"""A note made unreadable after it was indexed (`chmod 000`): its size and mtime stay as they
were, so the index kept it, and served its text, where a fresh `brain index` skips it. Denied is
deliberate (the note leaves the index, its history says it became unreadable, not deleted);
a read error that may pass (EIO, a cloud-sync placeholder) keeps an indexed note as it was.

These run as root, which file modes do not bind: ``modes_bind`` refuses an open as the kernel
refuses anyone else (the slow test at the end has the kernel do it, ``setpriv``)."""

from __future__ import annotations

import errno
import json
import os
import stat
from pathlib import Path

import pytest
from conftest import write
from index_helpers import modes_binding_prefix
from test_hardening_index import _brain, _index, _invoke

from brain import config
from brain.index.status import vault_status
from brain.index.store import IndexStore
from brain.recall.timeline import history_text, note_history

pytestmark = pytest.mark.skipif(os.name == "nt", reason="POSIX file modes")

SECRET = "# Diary\n\nThe quagga password is kept here.\n"


@pytest.fixture
def modes_bind(monkeypatch):
    """``os.open`` refuses a file with no read bit for its owner, as for a user who is not root."""
    real = os.open

    def open_as_a_user(path, flags, *args, **kwargs):
        if not flags & getattr(os, "O_DIRECTORY", 0) and kwargs.get("dir_fd") is None:
            try:
                mode = os.stat(path).st_mode
            except OSError:
                mode = None
            if mode is not None and stat.S_ISREG(mode) and not mode & stat.S_IRUSR:
                raise PermissionError(errno.EACCES, "Permission denied", os.fspath(path))
        return real(path, flags, *args, **kwargs)

    monkeypatch.setattr(os, "open", open_as_a_user)


@pytest.fixture
def failing(monkeypatch):
    """failing(path): every open of that file or folder fails with EIO (a disk fault, a cloud
    placeholder that cannot be fetched now); failing(None) ends it."""
    real = os.open
    broken: list[str] = []

    def open_or_fail(path, flags, *args, **kwargs):
        if broken and os.fspath(path) == broken[0]:
            raise OSError(errno.EIO, "Input/output error", os.fspath(path))
        return real(path, flags, *args, **kwargs)

    monkeypatch.setattr(os, "open", open_or_fail)

    def make(path: Path | None) -> None:
        broken[:] = [] if path is None else [os.fspath(path)]

    return make


def _paths(vault: Path) -> set[str]:
    store = IndexStore.open(config.index_dir(vault), create=False)
    try:
        return set(store.note_rows())
    finally:
        store.close()


def _skipped(vault: Path) -> dict[str, str]:
    return {s["path"]: s["reason"] for s in vault_status(vault).skipped}


def _asked(vault: Path, query: str = "quagga password") -> list[str]:
    result = _invoke("ask", "--vault", str(vault), "--json", "--no-rerank", "--no-update", "-k", "6", query)
    assert result.exit_code == 0, result.output
    return [r["path"] for r in json.loads(result.stdout)["results"]]


def test_a_note_made_unreadable_after_it_was_indexed_leaves_the_index(toy_vault, modes_bind, tmp_path, monkeypatch):
    secret = write(toy_vault, "Diary.md", SECRET)
    _index(toy_vault)
    assert "Diary.md" in _asked(toy_vault)
    secret.chmod(0)
    try:
        assert vault_status(toy_vault).pending_paths["deleted"] == ["Diary.md"]  # the walk sees the chmod
        report = _index(toy_vault)
        assert report.removed == 1
        assert "Diary.md" not in _paths(toy_vault) and "Diary.md" not in _asked(toy_vault)
        assert _skipped(toy_vault)["Diary.md"] == "unreadable"
        assert sum(vault_status(toy_vault).pending.values()) == 0
        note = _invoke("note", "--vault", str(toy_vault), "Diary.md")
        assert note.exit_code == 1 and "Traceback" not in note.output
        # the same as a fresh index of the vault as it is
        incremental, home = _paths(toy_vault), os.environ["BRAIN_HOME"]
        monkeypatch.setenv("BRAIN_HOME", str(tmp_path / "fresh"))
        _index(toy_vault)
        assert _paths(toy_vault) == incremental and _skipped(toy_vault)["Diary.md"] == "unreadable"
        monkeypatch.setenv("BRAIN_HOME", home)
        # history: still there, not deleted
        told = history_text(note_history(toy_vault, "Diary.md"))
        assert "made unreadable" in told and "deleted" not in told, told
    finally:
        secret.chmod(0o644)
    assert _index(toy_vault).new == 1
    assert "Diary.md" in _paths(toy_vault) and "Diary.md" not in _skipped(toy_vault)
    told = history_text(note_history(toy_vault, "Diary.md"))
    assert "readable again" in told and "back after being deleted" not in told, told


def test_verify_drops_a_note_it_may_no_longer_read(toy_vault, monkeypatch):
    """A denial the mode bits do not show (an ACL): `brain index --verify` read the note, failed,
    and kept it as its stat said."""
    write(toy_vault, "Diary.md", SECRET)
    _index(toy_vault)
    real = os.open
    target = os.fspath(toy_vault / "Diary.md")

    def denied(path, flags, *args, **kwargs):
        if os.fspath(path) == target:
            raise PermissionError(errno.EACCES, "Permission denied", target)
        return real(path, flags, *args, **kwargs)

    monkeypatch.setattr(os, "open", denied)
    report = _index(toy_vault, verify=True)
    assert report.removed == 1 and report.unchanged == len(_paths(toy_vault))
    assert "Diary.md" not in _paths(toy_vault) and _skipped(toy_vault)["Diary.md"] == "unreadable"


def test_a_read_error_that_may_pass_keeps_the_indexed_note(toy_vault, failing):
    """EIO was taken as unreadable: the note was deleted from the index (and its history said
    deleted) for a fault that may be gone a second later."""
    secret = write(toy_vault, "Diary.md", SECRET)
    _index(toy_vault)
    os.utime(secret, ns=(secret.stat().st_atime_ns, secret.stat().st_mtime_ns + 10**9))  # touched: read again
    failing(secret)
    report = _index(toy_vault)
    assert report.removed == 0 and "Diary.md" in _paths(toy_vault)
    assert "Diary.md" in _asked(toy_vault)
    assert _skipped(toy_vault)["Diary.md"] == "read-error"
    assert vault_status(toy_vault).pending_paths["deleted"] == []
    failing(None)
    _index(toy_vault)
    assert "Diary.md" in _paths(toy_vault) and "Diary.md" not in _skipped(toy_vault)
    assert sum(vault_status(toy_vault).pending.values()) == 0


def test_a_folder_with_a_read_error_keeps_its_notes(toy_vault, failing):
    """A folder whose listing failed with EIO had every note under it deleted."""
    cooking = sorted(p for p in _paths_after_index(toy_vault) if p.startswith("Cooking/"))
    assert cooking
    failing(toy_vault / "Cooking")
    report = _index(toy_vault)
    assert report.removed == 0 and set(cooking) <= _paths(toy_vault)
    assert _skipped(toy_vault)["Cooking"] == "read-error"


def _paths_after_index(vault: Path) -> set[str]:
    _index(vault)
    return _paths(vault)


@pytest.mark.slow  # subprocesses
def test_a_note_made_unreadable_leaves_the_index_file_modes_bind(tmp_path, brain_home):
    """The same with the kernel refusing the read (as root, ``setpriv`` without DAC override)."""
    modes_binding_prefix()
    root = tmp_path / "vault"
    write(root, "Readable.md", "# Readable\n\nsqlite notes\n")
    secret = write(root, "Diary.md", SECRET)
    assert _brain(brain_home, "index", "--vault", str(root)).returncode == 0
    secret.chmod(0)
    try:
        indexed = _brain(brain_home, "index", "--vault", str(root), "--json")
        assert indexed.returncode == 0, indexed.stderr
        assert json.loads(indexed.stdout)["removed"] == 1
        status = json.loads(_brain(brain_home, "status", "--vault", str(root), "--json").stdout)
        assert {"path": "Diary.md", "reason": "unreadable", "detail": "Permission denied"} in status["skipped"]
        asked = _brain(brain_home, "ask", "--vault", str(root), "--json", "--no-rerank", "quagga password")
        assert "Diary.md" not in [r["path"] for r in json.loads(asked.stdout)["results"]]
    finally:
        secret.chmod(0o644)


def test_a_note_made_unreadable_under_brain_serve_is_no_longer_served(toy_vault, modes_bind):
    """`brain serve` heard the chmod (an attribute change, reported as modified), indexed the
    vault again, and found the note's size and mtime as they were: it kept answering with its
    text, its note and its history until a restart."""
    from serve_helpers import request, served, settled

    secret = write(toy_vault, "Diary.md", SECRET)
    _index(toy_vault)
    with served(toy_vault) as daemon:

        def answered() -> list[str]:
            asked = request(daemon, "ask", query="quagga password", modes=["hybrid"], settings={}, output="json")
            return [r["path"] for r in asked["result"]["results"][0]["results"]]

        assert "Diary.md" in answered()
        secret.chmod(0)
        try:
            settled(daemon, "Diary.md")
            assert "Diary.md" not in answered()
            assert request(daemon, "note", note="Diary.md")["error"]["code"] == "not_found"
            assert _skipped(toy_vault)["Diary.md"] == "unreadable"  # `brain status`
        finally:
            secret.chmod(0o644)
        settled(daemon, "Diary.md")
        assert "Diary.md" in answered()


def test_a_note_denied_in_other_words_is_made_unreadable_not_deleted(toy_vault, monkeypatch):
    """Denied was told from gone by the error's words, matched with os.strerror's: where they
    differ (Windows says "Access is denied" for EACCES) the note's history said it was deleted.
    It is the errno that tells now."""
    secret = write(toy_vault, "Diary.md", SECRET)
    _index(toy_vault)
    real = os.open

    def denied(path, flags, *args, **kwargs):
        if os.fspath(path) == os.fspath(secret):
            raise PermissionError(errno.EACCES, "Access is denied", os.fspath(path))
        return real(path, flags, *args, **kwargs)

    monkeypatch.setattr(os, "open", denied)
    secret.chmod(0)
    try:
        assert _index(toy_vault).removed == 1
        assert _skipped(toy_vault)["Diary.md"] == "unreadable"
        told = history_text(note_history(toy_vault, "Diary.md"))
        assert "made unreadable" in told and "deleted" not in told, told
    finally:
        secret.chmod(0o644)


@pytest.mark.parametrize("verify", [False, True])
def test_a_note_deleted_between_the_walk_and_its_read_is_deleted(toy_vault, monkeypatch, verify):
    """A note gone when its read comes (deleted after the walk saw it) fails as ENOENT, which
    vault.read_failure calls "unreadable" too: its history says deleted, and no skip is kept
    for a file that is not there."""
    diary = write(toy_vault, "Diary.md", SECRET)
    _index(toy_vault)
    if not verify:
        os.utime(diary, ns=(1, 1))  # a candidate by its stat
    real = os.open

    def gone(path, flags, *args, **kwargs):
        if os.fspath(path) == os.fspath(diary) and diary.exists():
            diary.unlink()  # after the walk, before the read
        return real(path, flags, *args, **kwargs)

    monkeypatch.setattr(os, "open", gone)
    assert _index(toy_vault, verify=verify).removed == 1
    monkeypatch.setattr(os, "open", real)
    told = history_text(note_history(toy_vault, "Diary.md"))
    assert "deleted" in told and "made unreadable" not in told, told
    assert "Diary.md" not in _skipped(toy_vault)


def test_a_note_made_unreadable_under_a_polling_brain_serve_is_dropped_within_seconds(toy_vault, modes_bind):
    """watchfiles' poller compares mtimes, and chmod leaves the mtime as it was: under polling
    (a network drive, WATCHFILES_FORCE_POLLING, out of inotify watches) the server heard nothing
    and kept serving a note made unreadable until its rescan, five minutes later, and one made
    readable again stayed out as long."""
    from serve_helpers import request, served, wait_until

    secret = write(toy_vault, "Diary.md", SECRET)
    _index(toy_vault)
    with served(toy_vault, force_polling=True) as daemon:
        wait_until(lambda: daemon.service.watcher.mode == "polling", 60, "the poller")

        def answered() -> list[str]:
            asked = request(
                daemon, "ask", query="quagga password", modes=["hybrid"], settings={}, output="json", update=False
            )
            return [r["path"] for r in asked["result"]["results"][0]["results"]]

        assert "Diary.md" in answered()
        secret.chmod(0)
        try:
            wait_until(lambda: "Diary.md" not in answered(), 10, "the note made unreadable to leave")
            assert _skipped(toy_vault)["Diary.md"] == "unreadable"
        finally:
            secret.chmod(0o644)
        wait_until(lambda: "Diary.md" in answered(), 10, "the note made readable again to come back")


@pytest.mark.parametrize("polling", [False, True])
def test_a_note_an_acl_refuses_under_brain_serve_is_dropped_at_the_event(toy_vault, monkeypatch, polling):
    """An ACL that refuses a note (setfacl) shows in no mode bit: brain serve heard the change of
    attributes (an event; under polling, its ctime), and its pass found the note's size, mtime
    and mode as they were and kept serving it until its next save. A note heard of is opened
    again now. Here the refusal is by hand, and the attribute change a chmod to the same bits."""
    from serve_helpers import request, served, wait_until

    secret = write(toy_vault, "Diary.md", SECRET)
    _index(toy_vault)
    real = os.open
    refused = {os.fspath(secret), os.path.realpath(secret)}
    acl = [False]

    def open_under_the_acl(path, flags, *args, **kwargs):
        if acl[0] and os.fspath(path) in refused:
            raise PermissionError(errno.EACCES, "Permission denied", os.fspath(path))
        return real(path, flags, *args, **kwargs)

    monkeypatch.setattr(os, "open", open_under_the_acl)
    with served(toy_vault, force_polling=polling) as daemon:
        wait_until(lambda: daemon.service.watcher.mode == ("polling" if polling else "events"), 10, "the watch")

        def answered() -> list[str]:
            asked = request(
                daemon, "ask", query="quagga password", modes=["hybrid"], settings={}, output="json", update=False
            )
            return [r["path"] for r in asked["result"]["results"][0]["results"]]

        assert "Diary.md" in answered()
        acl[0] = True
        secret.chmod(0o644)
        wait_until(lambda: "Diary.md" not in answered(), 10, "the note the ACL refuses to leave")
        assert _skipped(toy_vault)["Diary.md"] == "unreadable"
        acl[0] = False
        secret.chmod(0o644)
        wait_until(lambda: "Diary.md" in answered(), 10, "the note allowed again to come back")


def _reads(monkeypatch, path: Path) -> list[str]:
    """Each open of ``path`` (through whatever ``os.open`` is patched to, ``failing``'s), listed."""
    opened: list[str] = []
    inner = os.open

    def open_counted(name, flags, *args, **kwargs):
        if os.fspath(name) == os.fspath(path):
            opened.append(os.fspath(name))
        return inner(name, flags, *args, **kwargs)

    monkeypatch.setattr(os, "open", open_counted)
    return opened


def _ask_no_server(vault: Path, *extra: str) -> dict:
    result = _invoke("ask", "--vault", str(vault), "--json", "--no-rerank", "--no-server", *extra, "quagga password")
    assert result.exit_code == 0, result.output
    return json.loads(result.stdout)


def _touch(path: Path) -> None:
    os.utime(path, ns=(path.stat().st_atime_ns, path.stat().st_mtime_ns + 10**9))


def test_a_new_note_whose_read_failed_is_not_read_again_by_each_ask(toy_vault, failing, monkeypatch):
    """`brain status` said nothing was pending, while `brain ask`'s check counted the note
    changed: each ask (and --no-update's stale count) read it again, failed again and warned
    again. Unchanged since it failed, it is skipped as a parse-error is: `brain index` tries it."""
    secret = write(toy_vault, "Diary.md", SECRET)
    failing(secret)
    assert _invoke("index", "--vault", str(toy_vault)).exit_code == 1  # said, and kept out
    assert _skipped(toy_vault)["Diary.md"] == "read-error"
    assert sum(vault_status(toy_vault).pending.values()) == 0
    opened = _reads(monkeypatch, secret)
    assert _ask_no_server(toy_vault, "--no-update")["stale_notes"] == 0
    assert _ask_no_server(toy_vault)["stale_notes"] == 0
    assert opened == [] and _skipped(toy_vault)["Diary.md"] == "read-error"  # the pass kept its record
    assert _invoke("index", "--vault", str(toy_vault)).exit_code == 1  # asked for: read again, failed again
    assert len(opened) == 1 and _skipped(toy_vault)["Diary.md"] == "read-error"
    failing(None)  # the fault passed, and the note changed: the next ask reads and indexes it
    _touch(secret)
    assert _ask_no_server(toy_vault, "--no-update")["stale_notes"] == 1
    assert "Diary.md" in [r["path"] for r in _ask_no_server(toy_vault)["results"]]
    assert "Diary.md" in _paths(toy_vault) and "Diary.md" not in _skipped(toy_vault)


def test_an_indexed_note_whose_read_fails_is_not_read_again_by_each_ask(toy_vault, failing, monkeypatch):
    """Its indexed text kept, and no stat recorded: it was read again by every ask, and counted
    stale by --no-update, while `brain status` said the index was up to date."""
    secret = write(toy_vault, "Diary.md", SECRET)
    _index(toy_vault)
    _touch(secret)
    failing(secret)
    _index(toy_vault)
    assert _skipped(toy_vault)["Diary.md"] == "read-error" and "Diary.md" in _paths(toy_vault)
    opened = _reads(monkeypatch, secret)
    assert _ask_no_server(toy_vault, "--no-update")["stale_notes"] == 0
    assert "Diary.md" in [r["path"] for r in _ask_no_server(toy_vault)["results"]]  # as indexed
    assert opened == [] and sum(vault_status(toy_vault).pending.values()) == 0
    _index(toy_vault)  # `brain index`: tried again, and kept again
    assert len(opened) == 1 and "Diary.md" in _paths(toy_vault)


def test_brain_serves_passes_leave_a_note_whose_read_failed_unchanged(toy_vault, failing, monkeypatch, caplog):
    """Each pass (a save of any note, a rescan) read it again and logged it again, and it counted
    out of step (``_out_of_step``) for good."""
    import logging

    from conftest import FakeEmbedder

    from brain.server.service import Service

    secret = write(toy_vault, "Diary.md", SECRET)
    failing(secret)
    monkeypatch.setattr(logging.getLogger("brain"), "propagate", True)
    caplog.set_level(logging.WARNING, logger="brain")
    service = Service(toy_vault.resolve(), embedder=FakeEmbedder(), watch=False)
    assert service._index() is not None and "Diary.md: skipped (read-error)" in caplog.text
    opened = _reads(monkeypatch, secret)
    write(toy_vault, "Fresh.md", "# Fresh\n\nThe okapi note.\n")
    caplog.clear()
    report = service._index()
    assert report is not None and report.new == 1 and "Diary.md" not in caplog.text and opened == []
    assert service._out_of_step() == 0
