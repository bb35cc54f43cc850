"""Servers for tests: in-process (a Daemon on threads) or as processes, always stopped.

``served(vault)`` runs a real ``Daemon`` + ``Service`` in this process with the fake embedder,
waits until it has loaded the index, and stops it whatever happens. ``BrainProcess`` runs the
CLI (with the test embedders) as a child and kills it at the end if it is still there.
"""

from __future__ import annotations

import contextlib
import json
import os
import signal
import socket
import stat
import subprocess
import sys
import threading
import time
import weakref
from collections.abc import Callable, Iterable, Iterator
from pathlib import Path
from typing import Any

from conftest import SESSION_MARK, FakeEmbedder

from brain.server import protocol, runtime
from brain.server.daemon import Daemon
from brain.server.service import Service
from brain.server.watcher import VaultWatcher

TESTS = Path(__file__).resolve().parent
LAUNCHER = TESTS / "brain_with_fakes.py"


@contextlib.contextmanager
def served(
    vault: Path,
    *,
    embedder: Any = None,
    watch: bool = True,
    http: tuple[str, int] | None = None,
    settle_ms: int = 150,
    ready_within: float = 60,
    **service_options: Any,
) -> Iterator[Daemon]:
    service = Service(
        vault.resolve(), embedder=embedder or FakeEmbedder(), watch=watch, settle_ms=settle_ms, **service_options
    )
    daemon = Daemon(vault.resolve(), service, http=http)
    heard = Heard(service.watcher)  # before the watch begins: ``settled`` waits on what it hears
    daemon.start()
    try:
        assert service.wait_ready(ready_within), "the server did not load the index"
        assert service.state == "ready", service.failure
        wait_until(lambda: not service.watcher.busy, ready_within, "the first pass")
        heard.forget()
        yield daemon
    finally:
        daemon.stop()


@contextlib.contextmanager
def server_socket(vault: Path) -> Iterator[socket.socket]:
    """A socket taken for ``vault``'s `brain serve`: listening, its record written, its lock
    held, as a live server's are. The test answers on it as it likes, or never (a server
    paused with Ctrl-Z, or hung). Yields the listening socket; all closed after."""
    import fcntl

    root = vault.resolve()
    runtime.make_private(runtime.runtime_dir(root))  # as a server makes it
    path = runtime.socket_path(root)
    silent = socket.socket(socket.AF_UNIX, socket.SOCK_STREAM)
    silent.bind(str(path))
    silent.listen(8)
    # this brain's shape, as a live server of this brain names it (another is not asked)
    record = {"pid": os.getpid(), "socket": str(path), "vault": str(root), "shape": protocol.shape()}
    runtime.write_record(root, record)
    lock = open(runtime.lock_path(root), "a")  # noqa: SIM115 - held as a live server holds it
    fcntl.flock(lock, fcntl.LOCK_EX | fcntl.LOCK_NB)
    try:
        yield silent
    finally:
        silent.close()
        lock.close()


@contextlib.contextmanager
def holding(script: str, *args: str, stdin: bool = False) -> Iterator[subprocess.Popen]:
    """Another Python process running ``script`` with ``args``, yielded once it prints "held"
    (it took its lock); killed at the end whatever happens, its pipes closed. ``stdin``: a pipe,
    whose closing lets it go."""
    holder = subprocess.Popen(
        [sys.executable, "-c", script, *args],
        stdin=subprocess.PIPE if stdin else None,
        stdout=subprocess.PIPE,
        text=True,
    )
    with holder:  # the pipes closed at the end, not when a full collection frees the Popen
        try:
            assert holder.stdout is not None and holder.stdout.readline().strip() == "held"
            yield holder
        finally:
            holder.kill()
            holder.wait()


@contextlib.contextmanager
def starting_server(vault: Path) -> Iterator[subprocess.Popen]:
    """Another process holding ``vault``'s serve.lock, its pid and "starting" written there and no
    record (serve.json) yet, as a `brain serve` still starting holds it; killed at the end."""
    root = vault.resolve()
    runtime.make_private(runtime.runtime_dir(root))
    with holding(
        "import fcntl, os, sys\n"
        "f = open(sys.argv[1], 'a'); fcntl.flock(f, fcntl.LOCK_EX); f.write(f'{os.getpid()} starting\\n'); f.flush()\n"
        "print('held', flush=True); sys.stdin.read()",
        str(runtime.lock_path(root)),
        stdin=True,
    ) as holder:
        yield holder


def wait_until(predicate: Callable[[], Any], timeout: float = 20.0, what: str = "the condition") -> Any:
    deadline = time.monotonic() + timeout
    while True:
        value = predicate()
        if value:
            return value
        if time.monotonic() > deadline:
            raise AssertionError(f"timed out after {timeout} s waiting for {what}")
        time.sleep(0.05)


class FakeClock:
    """``time`` for a module under test (``monkeypatch.setattr(module, "time", clock)``):
    ``monotonic()`` moves only when the test moves it, or when the module sleeps, so a deadline
    is kept or passed by the code's own arithmetic, not by how loaded the machine is."""

    def __init__(self, now: float = 1000.0) -> None:
        self.now = now
        self.slept: list[float] = []

    def monotonic(self) -> float:
        return self.now

    def sleep(self, seconds: float) -> None:
        self.slept.append(seconds)
        self.now += seconds


class Heard:
    """What a served vault's watcher heard: each changed path it gathered for a pass (its
    ``_relevant``, and under it ``_poll_links`` and ``_poll_modes``: symlinks' targets, modes
    under polling), with how many passes had begun when it was heard and the path's state
    then (``_state``). Those run on the watching thread between passes, just before the path
    joins the batch, so every pass numbered past that count began after the change was heard
    and indexed it (a pass re-plans the vault). A path heard in the state it is in now was
    heard after its last change, not only after an earlier one: a change heard while a test
    waited on something else says nothing of the next change of the same path."""

    def __init__(self, watcher: VaultWatcher):
        self.watcher = watcher
        self._lock = threading.Lock()
        # path → the watcher's passes when it was last heard, and its state then
        self._heard: dict[str, tuple[int, tuple | None]] = {}
        for name in ("_relevant", "_poll_links", "_poll_modes"):
            setattr(watcher, name, self._recording(getattr(watcher, name)))
        _HEARD[watcher] = self

    @classmethod
    def of(cls, daemon: Daemon) -> Heard:
        return _HEARD[daemon.service.watcher]

    def _state(self, path: str) -> tuple | None:
        """A path's state: what it leads to (a symlink followed) and the link itself; a
        folder's identity and mode (its times change with what is in it); None when gone."""
        full = os.path.join(self.watcher.root, *path.rstrip("/").split("/"))
        states: list[tuple | None] = []
        for look in (os.stat, os.lstat):
            try:
                st = look(full)
            except OSError:
                states.append(None)
                continue
            if stat.S_ISDIR(st.st_mode):
                states.append((st.st_dev, st.st_ino, st.st_mode))
            else:
                states.append((st.st_dev, st.st_ino, st.st_mode, st.st_size, st.st_mtime_ns, st.st_ctime_ns))
        return None if states == [None, None] else tuple(states)

    def _recording(self, find: Callable[..., set[str]]) -> Callable[..., set[str]]:
        def recorded(*args: Any) -> set[str]:
            paths = find(*args)
            heard = {path: (self.watcher.passes, self._state(path)) for path in paths}
            with self._lock:
                self._heard.update(heard)
            return paths

        return recorded

    def paths(self) -> set[str]:
        with self._lock:
            return set(self._heard)

    def passes_when(self, wanted: Iterable[str]) -> int | None:
        """The passes begun when the last of ``wanted`` was heard as it is now, or None while
        one is not yet. A path is heard by itself, by a path under it (a folder's, "Folder/")
        or by a folder above it (a folder moved in is heard, not its notes)."""
        with self._lock:
            heard = dict(self._heard)
        counts = []
        for want in wanted:
            matched = [
                count
                for path, (count, state) in heard.items()
                if (
                    path == want
                    or (want.endswith("/") and path.startswith(want))
                    or (path.endswith("/") and want.startswith(path))
                )
                and state == self._state(path)
            ]
            if not matched:
                return None
            counts.append(max(matched))
        return max(counts)

    def forget(self) -> None:
        with self._lock:
            self._heard.clear()


_HEARD: weakref.WeakKeyDictionary[VaultWatcher, Heard] = weakref.WeakKeyDictionary()


def settled(daemon: Daemon, *paths: str, timeout: float = 30.0) -> None:
    """Wait until the watcher has heard the change of each of ``paths`` (vault-relative, as the
    watcher names them: "Note.md", "Folder/"; a symlinked folder's notes by the link's path)
    and a pass begun after that has ended, its index served, and nothing else is pending. What
    was heard is forgotten then. It slept a fixed 0.4 s for the events instead: one later than
    that (a loaded machine) found the watcher idle, and the test asserted on an index without
    the change."""
    if not paths or not all(isinstance(path, str) for path in paths):
        raise TypeError(f"settled() takes the vault paths whose change it waits for, not {paths!r}")
    heard = Heard.of(daemon)

    def heard_all() -> tuple[int] | None:
        passes = heard.passes_when(paths)
        return None if passes is None else (passes,)

    try:
        (passes,) = wait_until(heard_all, timeout, f"the watcher to hear of {', '.join(paths)}")
    except AssertionError as exc:
        raise AssertionError(f"{exc}; it heard {sorted(heard.paths())}") from None
    passed(daemon, passes, timeout)
    heard.forget()


def passed(daemon: Daemon, passes: int, timeout: float = 30.0) -> None:
    """Wait until a pass begun after the first ``passes`` has ended, its index served, and the
    watcher has nothing else pending (for a pass no event asks for: a watch begun again)."""
    watcher = daemon.service.watcher
    wait_until(lambda: watcher.passes > passes and not watcher.busy, timeout, f"a pass after pass {passes}")


def queries_done(daemon: Daemon, timeout: float = 30.0) -> None:
    """Wait until the query thread has run every job queued before this call (its queue is one
    line, and it alone takes from it): a replaced snapshot's close, a fold of the WAL."""
    from brain.server.service import _Job

    job = _Job(lambda recaller: None)
    daemon.service._jobs.put(job)
    job.future.exception(timeout)  # its result or its error (no snapshot), or TimeoutError


def raw_exchange(path: str | Path, payload: bytes, *, timeout: float = 10.0, shut: bool = True) -> bytes:
    """Send bytes to a server socket, return everything it answers."""
    sock = socket.socket(socket.AF_UNIX, socket.SOCK_STREAM)
    sock.settimeout(timeout)
    try:
        sock.connect(str(path))
        sock.sendall(payload)
        if shut:
            sock.shutdown(socket.SHUT_WR)
        chunks = []
        while chunk := sock.recv(65536):
            chunks.append(chunk)
        return b"".join(chunks)
    finally:
        sock.close()


def request(daemon: Daemon, op: str, vault: Path | str | None = None, **fields: Any) -> dict[str, Any]:
    message = protocol.request(op, str(vault or daemon.root), **fields)
    return json.loads(raw_exchange(daemon.socket_path, protocol.encode(message)))


def brain_env(**extra: str) -> dict[str, str]:
    env = dict(os.environ)
    env.update(HF_HUB_OFFLINE="1", TRANSFORMERS_OFFLINE="1", PYTHONPATH=str(TESTS.parent))
    env.update(extra)
    return env


class BrainProcess:
    """``brain ARGS`` (with the test embedders) as a child process, killed at ``close``."""

    def __init__(self, args: list[str], **env: str):
        self.proc = subprocess.Popen(
            [sys.executable, str(LAUNCHER), *args],
            env=brain_env(**env),
            stdin=subprocess.DEVNULL,
            stdout=subprocess.PIPE,
            stderr=subprocess.PIPE,
        )

    def close(self) -> None:
        if self.proc.poll() is None:
            self.proc.kill()
        self.proc.wait(30)
        for stream in (self.proc.stdout, self.proc.stderr):
            if stream:
                stream.close()


def run_brain(args: list[str], *, timeout: float = 120, **env: str) -> subprocess.CompletedProcess:
    return subprocess.run(
        [sys.executable, str(LAUNCHER), *args],
        env=brain_env(**env),
        capture_output=True,
        timeout=timeout,
        stdin=subprocess.DEVNULL,
    )


def run_s_own(pid: Any) -> bool:
    """Whether ``pid`` is a live process of this test run (its environment carries the run's
    mark); where there is no /proc, whether it runs. A server's pid, in its record or a list, is
    another process's once that server has ended and the pid comes round (32,768 of them, ~20 a
    second on a busy machine): another test's, another user's, which a teardown killed."""
    if not runtime.pid_alive(pid):
        return False
    if not Path("/proc/self/environ").exists():
        return True
    try:
        environ = Path(f"/proc/{pid}/environ").read_bytes()
    except OSError:  # gone meanwhile, or another user's
        return False
    return f"{SESSION_MARK}={os.environ[SESSION_MARK]}".encode() in environ.split(b"\0")


def kill_recorded_server(vault: Path, sig: int = signal.SIGKILL) -> int | None:
    """Signal the server named in the vault's serve.json, if it is still one of this run's; its pid."""
    record = runtime.read_record(vault.resolve())
    pid = record.get("pid") if record else None
    if isinstance(pid, int) and run_s_own(pid):
        os.kill(pid, sig)
        return pid
    return None


def mcp_call(vault: Path, name: str, arguments: dict, *, use_server: bool = False) -> Any:
    """One tool call through the MCP SDK's in-memory ``Client`` on ``brain mcp``'s server, the
    fake embedder answering in this process (or the vault's server, with ``use_server``)."""
    import asyncio

    from mcp import Client

    from brain.mcp.backend import Backend
    from brain.mcp.server import build_server

    backend = Backend(vault.resolve(), embedder=FakeEmbedder(), use_server=use_server, watch=False)

    async def go() -> Any:
        async with Client(build_server(vault.resolve(), backend)) as session:
            return await session.call_tool(name, arguments)

    try:
        return asyncio.run(go())
    finally:
        backend.close()
