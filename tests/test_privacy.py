"""What brain keeps under its home (note text in the index, prompts and turns in brain.db, logs)
is readable by no other user of the machine, whatever the umask, and an older home whose
files the umask left readable is narrowed the next time brain opens them."""

from __future__ import annotations

import json
import os
import stat
from pathlib import Path

import pytest
from click.testing import CliRunner
from conftest import FakeEmbedder
from index_helpers import index_into

from brain import config, db
from brain.cli import cli
from brain.errors import ConfigError
from brain.index.files import RECALL_CACHE_FILE
from brain.ledger.hook import log

pytestmark = pytest.mark.skipif(os.name != "posix", reason="POSIX permissions")
NOBODY = 65534


def readable_by_others(home: Path) -> list[str]:
    """The files under ``home`` another user could read: o+r, and every folder above o+x."""
    found = []
    for folder, _, files in os.walk(home):
        chain = [Path(folder), *Path(folder).parents]
        chain = chain[: chain.index(home) + 1]
        if all(os.stat(c).st_mode & stat.S_IXOTH for c in chain):
            found += [
                str(Path(folder, f).relative_to(home)) for f in files if os.stat(Path(folder, f)).st_mode & stat.S_IROTH
            ]
    return sorted(found)


@pytest.fixture
def umask(request):
    old = os.umask(request.param)
    yield request.param
    os.umask(old)


@pytest.mark.parametrize("umask", [0o022, 0o002], indirect=True)
def test_what_brain_keeps_is_readable_by_no_other_user(tmp_path, toy_vault, monkeypatch, umask):
    os.chmod(tmp_path, 0o755)  # a place others can walk into, like a home folder
    home = tmp_path / "share" / "brain"
    monkeypatch.setenv("BRAIN_HOME", str(home))
    index_into(home, toy_vault, FakeEmbedder())
    db.open_db().close()  # the ledger: prompts and answers
    log("prompt: a line")
    asked = CliRunner().invoke(cli, ["ask", "--vault", str(toy_vault), "--no-rerank", "sourdough"])
    assert asked.exit_code == 0, asked.output
    # the install records: which settings files brain wrote, and where
    for command in (["hook", "install", "--settings"], ["mcp", "install", "--vault", str(toy_vault), "--config"]):
        installed = CliRunner().invoke(cli, [*command, str(tmp_path / "agent" / f"{command[0]}.json")])
        assert installed.exit_code == 0, installed.output
    assert (home / "hook-installs.json").is_file() and (home / "mcp-installs.json").is_file()
    cache = config.index_dir(toy_vault) / RECALL_CACHE_FILE  # the names, kept for the next ask
    assert (home / "brain.db").is_file() and (home / "logs" / "hook.log").is_file() and cache.is_file()
    assert readable_by_others(tmp_path / "share") == []
    assert stat.S_IMODE(os.stat(home / "brain.db").st_mode) == 0o600
    assert stat.S_IMODE(os.stat(cache).st_mode) == 0o600
    for folder in (home, home / "logs", home / "vaults"):
        assert stat.S_IMODE(os.stat(folder).st_mode) == 0o700
    # each file too, not only its folder: a file system that ignores folder modes, a folder
    # copied out (the FAISS files were the umask's 0644 inside the 0700 index folder)
    assert (config.index_dir(toy_vault) / "vectors.faiss").is_file()
    loose = [
        f"{path.relative_to(home)} {stat.S_IMODE(path.stat().st_mode):o}"
        for path in home.rglob("*")
        if path.is_file() and path.stat().st_mode & 0o077 and path.stat().st_size  # locks hold nothing
    ]
    assert loose == [], loose


@pytest.mark.parametrize("umask", [0o022], indirect=True)
@pytest.mark.parametrize("first", ["brain index", "the Stop hook", "brain hook install"])
def test_every_folder_the_first_command_makes_is_the_users_alone(tmp_path, toy_vault, monkeypatch, umask, first):
    """The README: "the folders it makes under `$BRAIN_HOME` are 0700". The test above runs many
    commands, and a later one narrows the home an earlier one made: the folders made 0755 by
    the umask passed it. Here one command alone, the first on a fresh machine, makes a home
    three folders deep: every folder it made, the home and those above it included, is 0700."""
    top = tmp_path / "made"
    home = top / "by" / "brain"
    monkeypatch.setenv("BRAIN_HOME", str(home))
    if first == "brain index":
        done = CliRunner().invoke(cli, ["index", "-q", "--vault", str(toy_vault)])
        assert done.exit_code == 0, done.output
    elif first == "the Stop hook":
        log("ignored stdin that is not a Stop hook payload (0 bytes)")
    else:  # its record of what it made goes into the home
        done = CliRunner().invoke(cli, ["hook", "install", "--settings", str(tmp_path / "agent" / "settings.json")])
        assert done.exit_code == 0, done.output
    made = [top, *sorted(p for p in top.rglob("*") if p.is_dir())]
    assert len(made) >= 3, made
    loose = [f"{p.relative_to(tmp_path)} {stat.S_IMODE(p.stat().st_mode):o}" for p in made if p.stat().st_mode & 0o077]
    assert loose == [], loose


def test_a_home_an_older_brain_left_readable_is_narrowed(tmp_path, toy_vault, monkeypatch):
    home = tmp_path / "brain"
    monkeypatch.setenv("BRAIN_HOME", str(home))
    old = os.umask(0o022)
    try:
        index_into(home, toy_vault, FakeEmbedder())
        db.open_db().close()
        log("prompt: a line")
    finally:
        os.umask(old)
    for path in [home, *home.rglob("*")]:  # as an older brain left it: the umask's modes
        os.chmod(path, 0o755 if path.is_dir() else 0o644)
    index_into(home, toy_vault, FakeEmbedder())
    db.open_db().close()
    log("prompt: another line")
    assert readable_by_others(home) == []
    assert stat.S_IMODE(os.stat(home / "brain.db").st_mode) == 0o600


@pytest.mark.parametrize("whose", ["another user's", "open to all"])
def test_a_home_another_user_can_write_in_is_refused(tmp_path, toy_vault, monkeypatch, whose):
    """A brain home another user made (BRAIN_HOME in /tmp), or one anyone may write in: they
    could plant a symlink where brain writes its log (brain appended to the file it leads to,
    one of yours), or their own folders, where your notes' text and prompts went readable."""
    home = tmp_path / "home"
    (home / "logs").mkdir(parents=True)
    yours = tmp_path / "yours.txt"
    yours.write_text("mine\n")
    (home / "logs" / "hook.log").symlink_to(yours)  # planted
    if whose == "another user's":
        if os.geteuid() != 0:
            pytest.skip("only root can give a folder to another user")
        for path in (home, home / "logs", home / "logs" / "hook.log"):
            os.lchown(path, NOBODY, NOBODY)
    else:
        os.chmod(home, 0o777)
    monkeypatch.setenv("BRAIN_HOME", str(home))
    log("prompt: a line")  # never raises
    assert yours.read_text() == "mine\n"
    with pytest.raises(ConfigError, match="not yours alone"):
        index_into(home, toy_vault, FakeEmbedder())
    with pytest.raises(ConfigError, match="not yours alone"):
        db.open_db()
    assert sorted(p.name for p in home.rglob("*")) == ["hook.log", "logs"]


def test_a_database_where_anyone_may_write_is_refused(tmp_path, monkeypatch):
    """BRAIN_DB in a folder like /tmp: another user could put their file, or a symlink, where
    SQLite writes the database, its -wal or its journal."""
    shared = tmp_path / "shared"
    shared.mkdir()
    os.chmod(shared, 0o1777)
    monkeypatch.setenv("BRAIN_DB", str(shared / "brain.db"))
    with pytest.raises(ConfigError, match="not yours alone"):
        db.open_db()
    assert list(shared.iterdir()) == []


@pytest.mark.parametrize("whose", ["another user's", "open to all"])
def test_a_server_record_another_user_could_write_is_not_followed(tmp_path, monkeypatch, whose):
    """The server's folder (beside the index) holding a record someone else wrote: its socket
    was asked every question (brain ask, the prompt hook's prompts) and its pid took
    --stop's SIGTERM. Such a record is no server: the question is answered in-process."""
    import socket
    import threading

    from brain.recall.types import RecallSettings
    from brain.server import client, runtime

    monkeypatch.setenv("BRAIN_HOME", str(tmp_path / "home"))
    vault = tmp_path / "vault"
    vault.mkdir()
    folder = runtime.runtime_dir(vault)
    folder.mkdir(parents=True)
    theirs = tmp_path / "t.sock"
    listener = socket.socket(socket.AF_UNIX, socket.SOCK_STREAM)
    listener.bind(str(theirs))
    listener.listen()
    listener.settimeout(5)
    heard: list[bytes] = []

    def serve_once() -> None:
        try:
            conn, _ = listener.accept()
        except OSError:
            return
        with conn:
            heard.append(conn.recv(1 << 16))
            conn.sendall(json.dumps({"v": 1, "ok": True, "result": {"results": [[]]}}).encode() + b"\n")

    runtime.record_path(vault).write_text(json.dumps({"pid": 1, "socket": str(theirs), "features": ["past"]}))
    runtime.lock_path(vault).symlink_to(tmp_path / "made.txt")
    if whose == "another user's":
        if os.geteuid() != 0:
            pytest.skip("only root can give a folder to another user")
        os.chown(folder, NOBODY, NOBODY)
        os.chmod(folder, 0o700)
    else:
        os.chmod(folder, 0o777)
    thread = threading.Thread(target=serve_once)
    thread.start()
    try:
        with pytest.raises(client.NoServer):
            client.ask(vault, "the password is hunter2", ["hybrid"], RecallSettings(), timeout=2)
    finally:
        listener.close()
        thread.join()
    assert heard == []
    assert runtime.read_record(vault) is None  # brain serve --stop, brain status: no pid to trust
    assert not runtime.lock_is_held(vault) and not (tmp_path / "made.txt").exists()


@pytest.mark.parametrize("whose", ["ours", "another user's"])
def test_a_stale_record_naming_a_note_as_its_socket_leaves_the_note(toy_vault, monkeypatch, whose):
    """A server starting over a stale record removed whatever path the record named as its
    socket: one written into the server's folder while it was open to others (a chmod -R 777,
    before brain narrowed it) named a note, and brain serve deleted the note."""
    from serve_helpers import served

    from brain.server import runtime

    index_into(config.brain_home(), toy_vault, FakeEmbedder())
    note = toy_vault / "Cooking" / "Sourdough bread.md"
    text = note.read_bytes()
    root = toy_vault.resolve()
    runtime.make_private(runtime.runtime_dir(root))
    runtime.record_path(root).write_text(json.dumps({"pid": 2**22 + 1, "vault": str(root), "socket": str(note)}))
    if whose == "another user's":
        if os.geteuid() != 0:
            pytest.skip("only root can give a file to another user")
        os.chown(runtime.record_path(root), NOBODY, NOBODY)
        assert runtime.read_record(root) is None  # never read: its socket, its pid
    with served(toy_vault, watch=False) as daemon:
        assert daemon.socket_path.is_socket()
    assert note.read_bytes() == text


@pytest.mark.parametrize("on_disk, typed", [("NFD", "NFC"), ("NFC", "NFD")])
def test_a_brainignore_rule_holds_whatever_unicode_form_the_name_is_in(tmp_path, on_disk, typed):
    """A folder named on macOS (HFS+ wrote names decomposed, NFD) and `Café/` typed in
    .brainignore (composed, NFC) are one name to the user, two strings to pathspec: the
    ignored folder's notes were indexed, searched and served."""
    import unicodedata

    from brain.vault import excluded, load_ignore, scan

    vault = tmp_path / "vault"
    folder = unicodedata.normalize(on_disk, "Café")
    (vault / folder).mkdir(parents=True)
    (vault / folder / "secret.md").write_text("# Secret\n\nthe code is hunter2\n", encoding="utf-8")
    (vault / "ok.md").write_text("# ok\n", encoding="utf-8")
    (vault / ".brainignore").write_text(unicodedata.normalize(typed, "Café") + "/\n", encoding="utf-8")
    ignore = load_ignore(vault)
    notes, _ = scan(vault, ignore)
    assert [n.path for n in notes] == ["ok.md"]
    assert excluded(f"{folder}/secret.md", ignore) == "brainignore"  # what brain serve's watcher asks


@pytest.mark.parametrize("umask", [0o022], indirect=True)
def test_a_log_made_again_after_moving_aside_is_the_users_alone(tmp_path, monkeypatch, umask):
    # logging opens its file with the umask's 0644, at the start and each time a log moved
    # aside is made again: serve.log and mcp.log hold queries and note names
    import logging

    from brain.logfile import log_handler

    monkeypatch.setenv("BRAIN_HOME", str(tmp_path / "home"))
    handler = log_handler("serve.log", 200)
    try:
        line = logging.LogRecord("brain", logging.INFO, __file__, 1, "asked: %s", ("a question " * 30,), None)
        handler.emit(line)
        first = Path(handler.baseFilename)
        assert stat.S_IMODE(first.stat().st_mode) == 0o600
        handler.emit(line)  # over 200 bytes: moved aside, and a new file made
        assert first.with_name("serve.log.1").is_file()
        assert stat.S_IMODE(first.stat().st_mode) == 0o600
    finally:
        handler.close()
