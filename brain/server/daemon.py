"""The ``brain serve`` process: one per vault, a Unix socket, optional loopback HTTP, logs.

- **One per vault.** The server holds an exclusive ``flock`` on ``serve.lock`` in the vault's
  server folder (``runtime.runtime_dir``, beside the index folder) for its whole life. A second server cannot take it and exits with a message
  naming the first. The kernel drops the lock when a process dies, even by ``kill -9``: a
  server that gets the lock knows any socket or record left there is stale and replaces it.
  Its lock file, socket or record removed under it (``rm -rf``, a cleanup of ``/tmp``), the
  server makes them again within ``HEAL_EVERY`` seconds (``heal``), unless another server took
  the vault meanwhile: then it stops.
- **Socket.** ``serve.sock`` in that folder (0700), created owner-only (0600) under a tight
  umask, so no moment exists where another user could connect; and a client of another user
  (``peers.unix_peer_uid``: root aside) is refused, for a file system that ignores modes. One
  request per connection (``protocol.py``); each connection has its own thread, a size limit, and ``CLIENT_TIMEOUT``
  seconds in all to send its request (and again to take its answer). At most
  ``MAX_CONNECTIONS`` are open at once, the HTTP ones counted too; a connection beyond them
  closes the one that has waited on its client longest (``_Connections``), so clients that
  connect and say nothing, or trickle, never keep another out. ``PROMPT_PLACES`` more are kept
  for the prompt hook's asks on the socket, one a client process, taken when every other place
  is being answered, and its questions go first on the query thread. One client process (``peers``:
  the socket's peer pid, an HTTP client's found through ``/proc``; the HTTP clients whose
  process is not known share one) has at most a quarter of the places being answered, and its
  questions take turns with other clients' on the query thread (``service.caller``); a
  question whose client hung up before its turn is dropped. After its answer a connection is
  half-closed and read on, for ``LINGER_SECONDS``, until its client closes (``_linger``): an answer
  given before the request was read (``busy``, an HTTP refusal) reaches a client still sending it,
  where closing with bytes unread reset it. One refused ``busy`` holds no place: at most
  ``MAX_CONNECTIONS`` of those are read on at once, the others closed at once (``_linger_refused``),
  so a flood of connections while every place is answered holds no more threads and descriptors
  than that. Garbage gets an error reply; a client that goes away mid-reply costs one failed
  write; an unexpected error (a bug) is answered ``internal``, never a silent close, and logged
  with its traceback the first time, then counted (``_Said.failed``).
- **HTTP** (``--http 127.0.0.1:PORT``) only on a loopback address, and only for requests that
  carry the token from ``serve.json`` (readable by the owner only) and a loopback ``Host``:
  other local users and web pages (DNS rebinding) get nothing.
- **Logs** go to ``$BRAIN_HOME/logs/serve.log`` (one file for every vault's server, each line
  naming the vault), and to stderr as well when running in the foreground.
- ``--detach`` forks twice (the server is not a child of the shell), waits until the server
  listens and has loaded the index (or found it empty: a vault with no notes yet is served,
  and fills as notes are written; or failed; or was stopped first), and says which. ``--stop`` asks the server to
  stop over its socket, or sends SIGTERM to the lock holder when it does not answer.
"""

from __future__ import annotations

import contextlib
import errno
import fcntl
import hmac
import io
import ipaddress
import logging
import os
import resource  # here, not where it is needed: importing it then takes a descriptor, of none left
import secrets
import select
import signal
import socket
import socketserver
import stat
import sys
import termios
import threading
import time
from collections.abc import Callable
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from pathlib import Path
from typing import Any, NamedTuple

from .. import __version__, config
from ..errors import BrainError, ConfigError, quoted
from ..logfile import OneLineFormatter, log_handler, log_unknown_settings
from ..text import plural, shell_word
from . import client, peers, protocol, runtime
from .service import Service, caller

log = logging.getLogger("brain")

MAX_CONNECTIONS = 64
# Places kept, beyond MAX_CONNECTIONS, for the prompt hook's asks on the socket (a request that
# says ``prompt_hook``): taken only while every other place is being answered, at most one by
# each client process (``_Connections``).
PROMPT_PLACES = 8
# Seconds in all a connection may take to send its request, and again to take its answer: brain's
# clients write theirs at once, and one byte every 29 s held a connection for good under the
# 30 s timeout each read had.
CLIENT_TIMEOUT = 10.0
# A request over protocol.MAX_REQUEST_BYTES is read through to its end, thrown away, before its
# refusal is written: closed with bytes unread, the socket reset the client still writing it, which
# never read why (a broken pipe). Beyond this many bytes it is closed unread.
DRAIN_BYTES = 64 << 20
# Seconds a connection is read on after its answer (``_linger``), for what its client still sends:
# a request refused before it was read (``busy``, an HTTP 401 or 404), bytes after the request
# line. Brain's clients have sent theirs and half-closed by then; a client that keeps sending
# (or keeps its end open) is closed after these, its place taken back.
LINGER_SECONDS = 2.0
# Seconds an answer's write may go without a byte taken by its client before its place may be
# closed for another (``_Connections.stalled``): a client that never read a large answer held
# its place for the write's whole CLIENT_TIMEOUT. One that reads, however slowly, takes bytes.
STALLED_AFTER = 2.0
LOG_MAX_BYTES = 5_000_000  # serve.log is moved to serve.log.1 beyond this, and started afresh
READY_TIMEOUT = 120.0  # seconds --detach waits for the index to load before returning
PROGRESS_EVERY = 10.0  # seconds between --detach's lines while one step of the start goes on
HEAL_EVERY = 2.0  # seconds between checks that the lock, socket and record are still the server's
LOCK_TRIES = 5  # 0.1 s apart: a lock still held after them is another server's
# Seconds the accept loop waits after an accept failed for want of descriptors or memory (first,
# then twice as long each time, up to the last): a connection left in the backlog keeps the
# listening socket readable, and socketserver tried again at once, on a whole core, in silence.
ACCEPT_PAUSES = (0.01, 0.2)
ACCEPT_QUIET = 2.0  # seconds without a failed accept that end such an episode (said once, as its start)
# seconds between two lines of one kind said of a client's connection (``_Said``): a flood of
# clients wrote one each, thousands a minute, and serve.log rotated every other line out
SAY_EVERY = 10.0


class AlreadyRunning(BrainError):
    pass


def parse_http(value: str) -> tuple[str, int]:
    """``HOST:PORT`` with a loopback host (127.0.0.1, ::1 in brackets, localhost)."""
    host, sep, port_text = value.strip().rpartition(":")
    # ASCII digits only: "²" passes isdigit() and fails int(), "٨٠" is read as 80
    if not sep or not (port_text.isascii() and port_text.isdigit()) or not 0 <= int(port_text) <= 65535:
        raise ConfigError(f"--http takes HOST:PORT on a loopback address, e.g. 127.0.0.1:8181, not {quoted(value)}")
    host = host.strip("[]")
    if host == "localhost":
        host = "127.0.0.1"
    try:
        loopback = ipaddress.ip_address(host).is_loopback
    except ValueError:
        loopback = False
    if not loopback:
        raise ConfigError(
            f"--http serves only on a loopback address (127.0.0.1 or ::1), not {host!r}: "
            "the vault's notes must not be reachable from the network"
        )
    return host, int(port_text)


class Daemon:
    """A started ``Service`` behind the socket (and HTTP); ``start``, ``wait``, ``stop``."""

    def __init__(self, root: Path, service: Service, *, http: tuple[str, int] | None = None):
        self.root = root
        self.service = service
        self.http_address = http
        self.socket_path = runtime.runtime_dir(root) / runtime.SOCKET_FILE  # where it is: see start
        self.token = secrets.token_urlsafe(32) if http else None
        self.stopping = threading.Event()
        self.connections = _Connections(MAX_CONNECTIONS, CLIENT_TIMEOUT, kept=PROMPT_PLACES)
        # a request that fails on a bug: its first traceback of each kind whole, then counts
        service.on_failure = lambda what, exc: _SAID.failed(what, exc)
        service.on_said = lambda level, text: _SAID.say(level, text)  # a line again and again: counted
        self.tcp_peers = peers.TcpPeers()
        self._lock_fd: int | None = None
        self._unix: _UnixServer | None = None
        self._http: _HttpServer | None = None
        self._threads: dict[str, threading.Thread] = {}
        self._record: dict[str, Any] | None = None
        self._ids: dict[str, runtime.Identity | None] = {}  # what the lock, socket and record paths led to
        self._unhealed: str | None = None  # why the files could not be made again (said once)
        self._record_read: int | None = None  # the record's ctime when last read and found ours
        # the paths heal checks, worked out once: config.index_dir costs 90 µs, an lstat 4
        self._lock_path, self._record_path = runtime.lock_path(root), runtime.record_path(root)

    # ----- life -------------------------------------------------------------------------------

    def start(self) -> None:
        answers = config.serve_settings()  # a bad one: its error now, not a question refused or hung
        runtime.make_private(runtime.runtime_dir(self.root))
        self._take_lock()
        try:
            self.socket_path = runtime.socket_path(self.root)  # a long path's private folder is checked here
            self._clear_stale()
            self._unix = _UnixServer(str(self.socket_path), self)
            if self.http_address:
                self._http = _HttpServer(self.http_address, self)
            self.service.start()
            self._record = {
                "pid": os.getpid(),
                "vault": str(self.root),
                "socket": str(self.socket_path),
                "http": self.http_url(),
                "token": self.token,
                "started_at": time.strftime("%Y-%m-%dT%H:%M:%SZ", time.gmtime(self.service.started_at)),
                "protocol": protocol.VERSION,
                "features": list(protocol.FEATURES),
                "brain": __version__,
                "shape": protocol.shape(),  # a client of another shape answers in-process (client.OtherBuild)
                "model": self.service.model,  # the prompt hook's threshold depends on it
                # `brain ask` with other ones answers in-process: they are not in its request
                "answer_settings": answers,
            }
            runtime.write_record(self.root, self._record)
            if self._lock_fd is not None:
                runtime.write_lock_pid(self._lock_fd)  # started: no more "starting" in the lock
            self._ids["socket"] = runtime.identity(self.socket_path)
            self._ids["record"] = runtime.identity(runtime.record_path(self.root))
            for name, server in (("brain-socket", self._unix), ("brain-http", self._http)):
                if server is not None:
                    self._serve(name, server)
        except BaseException:
            self._close_listeners()
            self.service.stop()
            if self.socket_path.parent != runtime.runtime_dir(self.root):  # a folder made for it alone goes too
                _unlink_socket(self.socket_path)
                runtime.drop_one_off(self.socket_path.parent)
            self._release_lock()
            raise
        log.info(
            "serving %s on %s%s (pid %s)",
            self.root,
            self.socket_path,
            f" and {self.http_url()}" if self._http else "",
            os.getpid(),
        )

    def wait(self) -> None:
        """Block until ``request_stop`` (a signal, or a ``stop`` request), or until the vault's
        path leads to another folder: this server's record and lock are the path's it started on,
        so it could be neither found nor stopped by that folder's commands. Every ``HEAL_EVERY``
        seconds, ``heal`` makes again the files someone removed."""
        healed = time.monotonic()
        while not self.stopping.wait(0.5):
            elsewhere = self.service.led_elsewhere()
            if elsewhere:
                log.error(
                    "%s; stopping (`brain serve --vault %s` serves it there)", elsewhere, shell_word(str(self.root))
                )
                return
            if self.service.superseded:  # said in the log as found; clients then answer in-process
                log.error("stopping: the next `brain serve` runs the newer code")
                return
            if time.monotonic() - healed >= HEAL_EVERY:
                healed = time.monotonic()
                self.heal()

    def heal(self) -> None:
        """Make again what was removed under the running server (a cleanup of ``/tmp``, an
        ``rm -rf`` of its folder): without its socket no client reaches it, without its record
        none finds it (``--stop`` cannot either), and without its lock file a second server
        starts beside it. Cheap when nothing moved: one ``lstat`` for each of the three paths, and
        one more of the record (read only when its ctime moved).

        The lock decides whose the vault is: a server that finds the lock file gone takes the
        new one, and when another server holds it (started after the files went), that one is
        the vault's server and this one stops, touching none of its files.

        The record is also read: written over in place (``cp`` of a backup) or replaced by a
        file that took its inode (ext4 gives a file made at once the inode just freed), it is
        the same file and says another server's socket, token and pid. The lock and the socket
        need no such check: this server holds them open, so their inodes are never freed to be
        taken, and the lock's content, this server's pid, is not what makes it the lock."""
        paths = {"lock": self._lock_path, "socket": self.socket_path, "record": self._record_path}
        gone = [name for name in paths if runtime.identity(paths[name]) != self._ids.get(name)]
        if "record" not in gone and self._record is not None and not self._record_ours():
            gone.append("record")
        if not gone:
            return
        try:
            runtime.make_private(runtime.runtime_dir(self.root))  # never through a symlink put there
            if "lock" in gone and not self._retake_lock():
                log.warning(
                    "the files of this server for %s were removed and another brain serve (%s) took the vault; "
                    "stopping",
                    self.root,
                    _who(runtime.read_record(self.root)),
                )
                self.request_stop()
                return
            if "socket" in gone:
                self._listen_again()
            if self._record is not None and ("socket" in gone or "record" in gone):
                self._record["socket"] = str(self.socket_path)
                runtime.write_record(self.root, self._record)
                self._ids["record"] = runtime.identity(runtime.record_path(self.root))
        except (OSError, BrainError) as exc:  # a file or a symlink where the socket goes, a full disk
            why = f"{type(exc).__name__}: {exc}" if isinstance(exc, OSError) else str(exc)
            if why != self._unhealed:
                log.error(
                    "the files of this server for %s were removed or replaced (%s) and cannot be made again: %s",
                    self.root,
                    _and(gone),
                    why,
                )
            self._unhealed = why
            return
        self._unhealed = None
        log.warning(
            "the files of this server for %s were removed or replaced (%s); made again (socket %s)",
            self.root,
            _and(gone),
            self.socket_path,
        )

    def _record_ours(self) -> bool:
        """Whether the record says what this server wrote. Read only when its ctime moved since
        it was last read and found ours: any write moves it (cp -p keeps the mtime, not the
        ctime), and no one can set it back; the server reads it a check (2 s) after writing it,
        so a write after that read does not fall in the clock tick of the ctime kept."""
        try:
            changed = os.lstat(self._record_path).st_ctime_ns
        except OSError:
            return False
        if changed == self._record_read:
            return True
        if runtime.read_record(self.root) != self._record:
            return False
        self._record_read = changed
        return True

    def _retake_lock(self) -> bool:
        """Take the lock at its path again, which now leads to another file or none; False when
        another server holds it. A client asking whether a server runs (``runtime.lock_is_held``)
        holds it for microseconds: a server holds it for good, so a few tries tell them apart."""
        fd = runtime.open_lock(runtime.lock_path(self.root))
        if not _flock_patiently(fd):
            os.close(fd)
            return False
        self._release_lock()
        self._lock_fd = fd
        self._ids["lock"] = _fd_identity(fd)
        runtime.write_lock_pid(fd)
        return True

    def _listen_again(self) -> None:
        """Listen on a new socket at the path (or, for a long path whose private folder went,
        at the one ``runtime.socket_path`` gives now), then close the old one, which no client
        can reach any more. We hold the lock: whatever is at the path is no live server's."""
        old, old_path = self._unix, self.socket_path
        path = old_path
        if old_path.parent != runtime.runtime_dir(self.root) and not runtime.is_private(old_path.parent):
            path = runtime.socket_path(self.root)  # <tmp>/brain-<uid> made again, or a new mkdtemp
        _unlink_socket(path)
        self._unix = _UnixServer(str(path), self)
        self.socket_path = path
        self._ids["socket"] = runtime.identity(path)
        self._serve("brain-socket", self._unix)
        if old is not None:
            old.shutdown()
            old.server_close()
        if path.parent != old_path.parent:
            runtime.drop_one_off(old_path.parent)

    def request_stop(self) -> None:
        self.stopping.set()

    def stop(self) -> None:
        self.stopping.set()
        self._close_listeners()
        self.service.stop()
        record = runtime.read_record(self.root)
        if record and record.get("pid") == os.getpid():
            _unlink(runtime.record_path(self.root))
        if runtime.identity(self.socket_path) == self._ids.get("socket"):  # not one another server made there
            _unlink(self.socket_path)
        runtime.drop_one_off(self.socket_path.parent)
        self._release_lock()
        _SAID.flush(all_of_them=True)
        log.info("stopped serving %s", self.root)

    def http_url(self) -> str | None:
        if self._http is None:
            return None
        host, port = str(self._http.server_address[0]), int(self._http.server_address[1])
        return f"http://{'[' + host + ']' if ':' in host else host}:{port}/v1"

    def _take_lock(self) -> None:
        path = runtime.lock_path(self.root)
        try:
            fd = runtime.open_lock(path)  # held for the server's life
        except OSError as exc:  # a FIFO (waited on forever before O_NONBLOCK), a folder, not ours
            from ..file_state import unusable

            said = unusable(path, "brain serve's lock", "brain serve makes a new one")
            if said:
                raise BrainError(said) from exc
            raise
        if not _flock_patiently(fd):  # a client asking whether a server runs let go within the tries
            os.close(fd)
            raise AlreadyRunning(
                f"brain serve is already running for {self.root} ({_who(runtime.read_record(self.root))}); "
                f"`brain serve --vault {shell_word(self.root)} --stop` stops it"
            )
        self._lock_fd = fd
        self._ids["lock"] = _fd_identity(fd)
        # until the record is written: a client finding no record says the server is starting
        # (its start may wait for another process upgrading the index), not that the record is gone
        runtime.write_lock_pid(fd, starting=True)

    def _release_lock(self) -> None:
        if self._lock_fd is not None:
            if runtime.identity(self._lock_path) == self._ids.get("lock"):  # not a lock file another server took
                runtime.clear_lock_pid(self._lock_fd)
            os.close(self._lock_fd)
            self._lock_fd = None

    def _serve(self, name: str, server: socketserver.BaseServer) -> None:
        thread = threading.Thread(target=server.serve_forever, kwargs={"poll_interval": 0.2}, name=name, daemon=True)
        thread.start()
        self._threads[name] = thread

    def _clear_stale(self) -> None:
        """We hold the lock: whatever a previous server left here is stale."""
        record = runtime.read_record(self.root)
        if record is not None:
            log.warning("replacing the socket of a server that did not stop cleanly (pid %s)", record.get("pid"))
            if isinstance(record.get("socket"), str):
                _unlink_socket(Path(record["socket"]))
                runtime.drop_one_off(Path(record["socket"]).parent)
            _unlink(runtime.record_path(self.root))
        _unlink(self.socket_path)

    def _close_listeners(self) -> None:
        for name, server in (("brain-socket", self._unix), ("brain-http", self._http)):
            if server is not None:
                thread = self._threads.get(name)
                if thread is not None and thread.is_alive():  # shutdown waits for a loop that runs
                    server.shutdown()
                server.server_close()
        self._unix = self._http = None

    # ----- requests ---------------------------------------------------------------------------

    def answer(self, data: bytes) -> dict[str, Any]:
        """One raw request → its reply; never raises."""
        try:
            return self._answer(data)
        except Exception as exc:  # noqa: BLE001 - a bug: said in the log (_Said.failed), answered internal
            self.service.count_error()
            _SAID.failed("a request failed", exc)
            return protocol.error("internal", f"{type(exc).__name__}: {exc}")

    def _answer(self, data: bytes) -> dict[str, Any]:
        try:
            message = protocol.parse_request(data)
        except protocol.ProtocolError as exc:
            _SAID.say(logging.INFO, "bad request (%s): %s", exc.code, exc.message, kind=f"bad request ({exc.code})")
            return protocol.error(exc.code, exc.message)
        if message["op"] == "stop":
            if not protocol.names_vault(message["vault"], str(self.root)):
                return protocol.error(
                    "wrong_vault", f"this server answers for {self.root}, not {quoted(message['vault'])}"
                )
            log.info("asked to stop")
            threading.Timer(0.05, self.request_stop).start()  # after the reply is written
            return protocol.ok({"stopping": True, "pid": os.getpid()})
        reply = self.service.handle(message)
        if message["op"] == "status" and reply.get("ok"):
            reply["result"]["socket"] = str(self.socket_path)
            reply["result"]["http"] = self.http_url()
        return reply


class _Said:
    """The lines said of one client's connection (closed for another, timed out, gone), each
    kind said at once the first time and then at most every ``SAY_EVERY`` seconds as a count:
    "N more like it in the last 10 s: <the last of them>". Said one a connection, a flood of
    clients wrote 4,279 lines in 13 s (``bench/serve_fuzz.py --only flood``), and serve.log,
    moved aside at ``LOG_MAX_BYTES``, lost its errors and passes within minutes, the evidence of
    what went wrong gone when something did. The counts left are said by ``flush`` (every turn
    of an accept loop, and when the server stops)."""

    def __init__(self) -> None:
        self._lock = threading.Lock()
        # kind → (when its last line was written, how many since, the level and text of the last)
        self._kinds: dict[str, tuple[float, int, int, str]] = {}
        self._tracebacks: dict[str, str] = {}  # a kind of failure (``failed``) → when its traceback was said

    def failed(self, what: str, exc: BaseException) -> None:
        """A request that failed on a bug (``exc``): the first of each kind (the exception's type
        and the lines it was raised through) said with its whole traceback, the others as one
        line each, counted as ``say`` counts (naming where it was raised and when its traceback
        was said). One traceback a request, a client sending one request that hits a bug back to
        back (any client can) wrote 2.6 MB in 10 s (6,025 tracebacks of four frames), and serve.log,
        moved aside at ``LOG_MAX_BYTES``, lost its errors and passes in 20 s; now 1.3 KB."""
        frames = []
        tb = exc.__traceback__
        while tb is not None:
            frames.append(f"{tb.tb_frame.f_code.co_filename}:{tb.tb_lineno}")
            tb = tb.tb_next
        kind = f"{type(exc).__module__}.{type(exc).__qualname__} through {' '.join(frames)}"
        place = "/".join(Path(frames[-1]).parts[-2:]) if frames else "an unknown place"
        with self._lock:
            when = self._tracebacks.get(kind)
            first = when is None
            if when is None:
                when = self._tracebacks[kind] = time.strftime("%Y-%m-%d %H:%M:%S")
            text = f"{what}: {type(exc).__name__}: {exc} (at {place}; its traceback is in the log at {when})"
            if first:  # said now, whole: the next ones within SAY_EVERY are counted
                self._kinds[kind] = (time.monotonic(), 0, logging.ERROR, text)
        if first:
            log.error("%s", what, exc_info=exc)
            return
        self.say(logging.ERROR, text, kind=kind)

    def say(self, level: int, message: str, *args: Any, kind: str | None = None) -> None:
        """Say ``message % args`` at ``level``, or count it: a ``kind`` of its own (by default
        its text, the exception's name in it included) has its own count."""
        text = message % args if args else message
        kind = text if kind is None else kind
        now = time.monotonic()
        with self._lock:
            said, more, _, _ = self._kinds.get(kind, (-SAY_EVERY, 0, level, text))
            if now - said < SAY_EVERY:
                self._kinds[kind] = (said, more + 1, level, text)
                return
            self._kinds[kind] = (now, 0, level, text)
        if more:
            log.log(level, "%d more like it in the last %.0f s: %s", more + 1, now - said, text)
        else:
            log.log(level, "%s", text)

    def flush(self, *, all_of_them: bool = False) -> None:
        """Say the counts whose ``SAY_EVERY`` is over (``all_of_them``: every count)."""
        now = time.monotonic()
        lines = []
        with self._lock:
            for kind, (said, more, level, text) in list(self._kinds.items()):
                if more and (all_of_them or now - said >= SAY_EVERY):
                    self._kinds[kind] = (now, 0, level, text)
                    lines.append((level, more, now - said, text))
                elif not more and now - said >= SAY_EVERY:
                    # nothing counted and its time over: said at once again, as a kind never seen
                    # is. Kept, every line of its own (an index pass failing on a path of its own
                    # each time, ``Service.on_said``) stayed for as long as the server ran
                    del self._kinds[kind]
        for level, more, seconds, text in lines:
            log.log(level, "%d more like it in the last %.0f s: %s", more, seconds, text)


_SAID = _Said()


class _PatientAccept(socketserver.BaseServer):
    """socketserver's ``accept``, said in the log and paused when it fails for want of file
    descriptors (``EMFILE``: ``ulimit -n`` reached, by clients' connections as much as by the
    server's files; ``ENFILE``: the system's) or of memory. socketserver (3.10 to 3.12 alike,
    ``_handle_request_noblock``) drops every ``OSError`` of ``accept`` unsaid, and the client
    left in the backlog keeps the socket readable, so its loop tried again at once: a core spent
    while no client was let in, and nothing in the log. Now one warning when it begins, a pause
    of ``ACCEPT_PAUSES`` between tries, and one line when none has failed for ``ACCEPT_QUIET``
    seconds: at the limit, each descriptor let go is taken by the next client, and accepts fail
    and succeed by turns for as long as the clients keep coming, one episode."""

    what = "the socket"
    _failing_since: float | None = None
    _last_failed = 0.0
    _failed = 0
    _pause = ACCEPT_PAUSES[0]

    def get_request(self) -> Any:
        try:
            got = super().get_request()
        except OSError as exc:
            if exc.errno in (errno.EMFILE, errno.ENFILE, errno.ENOBUFS, errno.ENOMEM):
                self._accept_failed(exc)
            raise  # socketserver drops it; a client that left before its accept (ECONNABORTED) is no news
        self._pause = ACCEPT_PAUSES[0]
        return got

    def _accept_failed(self, exc: OSError) -> None:
        self._last_failed = time.monotonic()
        if self._failing_since is None:
            self._failing_since, self._failed = self._last_failed, 0
            log.warning("cannot accept connections on %s: %s; clients wait until it can", self.what, _short_of(exc))
        self._failed += 1
        time.sleep(self._pause)
        self._pause = min(self._pause * 2, ACCEPT_PAUSES[1])

    def service_actions(self) -> None:
        """Between two turns of the accept loop (every ``poll_interval`` at least): the end of
        an episode of failed accepts, said."""
        super().service_actions()
        _SAID.flush()
        if self._failing_since is not None and time.monotonic() - self._last_failed >= ACCEPT_QUIET:
            log.info(
                "accepting connections on %s again (%s failed over %.1f s)",
                self.what,
                plural(self._failed, "accept"),
                self._last_failed - self._failing_since,
            )
            self._failing_since = None


def _short_of(exc: OSError) -> str:
    """What an accept that failed with ``exc`` was short of, and what gives more."""
    if exc.errno == errno.EMFILE:
        soft = resource.getrlimit(resource.RLIMIT_NOFILE)[0]
        most = "no limit" if soft == resource.RLIM_INFINITY else f"{soft:,}"
        return (
            f"all the file descriptors this process may open are open ({most}, `ulimit -n`: "
            "a higher one in the shell that starts `brain serve` gives it more)"
        )
    if exc.errno == errno.ENFILE:
        return "the system's table of open files is full (fs.file-max)"
    return f"out of memory for connections ({exc.strerror})"


class _UnixServer(socketserver.ThreadingMixIn, _PatientAccept, socketserver.UnixStreamServer):
    daemon_threads = True
    block_on_close = False
    request_queue_size = 128  # the listen backlog: a burst of clients waits instead of failing

    def __init__(self, path: str, daemon: Daemon):
        self.daemon_ref = daemon
        old = os.umask(0o177)  # the socket is born owner-only
        try:
            super().__init__(path, _SocketHandler)
        finally:
            os.umask(old)
        os.chmod(path, 0o600)


class _SocketHandler(socketserver.StreamRequestHandler):
    timeout = CLIENT_TIMEOUT  # each write of the answer; the request has CLIENT_TIMEOUT in all

    def handle(self) -> None:
        daemon: Daemon = self.server.daemon_ref  # type: ignore[attr-defined]
        connections = daemon.connections
        peer = _peer(self.connection)
        # a place kept for the prompt hook is one a process at most: none where the system does
        # not say which process a client is (each connection is its own client then)
        if not connections.admit(self.connection, None if peer is self.connection else peer):
            self._send(_every_place_busy())
            _linger_refused(self.connection, connections)  # its client, still writing the request, reads why
            return
        try:
            data = self._read_request()
            state = connections.answering(self.connection, peer, prompt_hook=protocol.says_prompt_hook(data))
            if state == "closed":
                _SAID.say(logging.INFO, "a client slow to send its request was closed for another")
                return
            # after its request is read: a reply to a client whose request is left unread is lost
            # to it (closed with bytes unread, the socket gives the client a reset instead)
            refusal = _refusal(peers.unix_peer_uid(self.connection), "a request")
            if refusal is not None:
                # written, it waits on its client as any refusal does: read on for 2 s while said
                # to wait on the server, another user's client that kept its end open held its
                # place, and a burst of them kept this user's out (busy)
                if connections.answered(self.connection):
                    try:
                        self._send(refusal)
                    finally:
                        connections.wrote(self.connection)
                return
            if state in ("kept", "crowded"):
                try:  # (kept: in a place kept for the prompt hook, and not its request)
                    self._send(
                        _every_place_busy()
                        if state == "kept"
                        else protocol.error(
                            "busy", f"{connections.per_client} requests of this client are being answered"
                        )
                    )
                finally:
                    connections.wrote(self.connection)  # its refusal written: now it may give way
                return
            if not data:  # connected and left: its end closed, so the read-on ends at once
                return
            if len(data) > protocol.MAX_REQUEST_BYTES:
                reply = protocol.error("bad_request", f"request over {protocol.MAX_REQUEST_BYTES} bytes")
            else:
                self._taken()
                with caller(peer, lambda: _hung_up(self.connection), urgent=state == "urgent"):
                    reply = daemon.answer(data)
            if connections.answered(self.connection):
                try:
                    self._send_answer(reply, connections)
                finally:
                    connections.wrote(self.connection)
        except TimeoutError:
            _SAID.say(logging.INFO, "a client sent no whole request within %.0f s", CLIENT_TIMEOUT)
            # one that sent half a request and waits for its answer is told why, not just closed
            self._send(protocol.error("bad_request", f"no whole request line within {CLIENT_TIMEOUT:g} s"))
        except OSError as exc:  # reset, broken pipe: the client left
            _SAID.say(logging.INFO, "a client left mid-request (%s)", type(exc).__name__)
        except Exception as exc:  # noqa: BLE001 - a bug: said in the log and to the client, never a silent close
            _SAID.failed("a request on the socket failed", exc)
            self._send(protocol.error("internal", f"{type(exc).__name__}: {exc}"))
        finally:
            try:
                # after the answer, whatever the client sent beyond the request line is read (or
                # what it still sends, refused mid-line): closed unread, it resets the client; it
                # waits on its client then, and may be closed for another
                connections.receiving(self.connection, True)
                _linger(self.connection)
            finally:
                connections.leave(self.connection)

    def _read_request(self) -> bytes:
        """The request line (up to and with its ``\\n``, or all the client sent before it stopped
        writing), at most ``MAX_REQUEST_BYTES`` and a block beyond: a longer line is read through
        to its end (up to ``DRAIN_BYTES``) but not kept, so that its refusal reaches the client.
        ``TimeoutError`` when the whole of it has not come within ``CLIENT_TIMEOUT`` seconds,
        however it trickles."""
        connections: _Connections = self.server.daemon_ref.connections  # type: ignore[attr-defined]
        deadline = time.monotonic() + CLIENT_TIMEOUT
        chunks: list[bytes] = []
        kept = read = 0
        while read <= DRAIN_BYTES:
            left = deadline - time.monotonic()
            if left <= 0:
                raise TimeoutError
            self.connection.settimeout(left)
            connections.receiving(self.connection, True)
            try:
                chunk = self.connection.recv(1 << 16)
            finally:
                connections.receiving(self.connection, False)  # its bytes in hand: the server's turn
            if not chunk:
                break
            end = chunk.find(b"\n")
            if end >= 0:
                chunk = chunk[: end + 1]
            if kept <= protocol.MAX_REQUEST_BYTES:  # beyond, it is refused whatever follows
                chunks.append(chunk)
                kept += len(chunk)
            read += len(chunk)
            if end >= 0:
                break
        # at once: read, and not yet said to be answered, it looked as if it waited on its client,
        # and a loaded server closed the prompt hook's for the next client to come (1 in 20)
        connections.read(self.connection)
        self.connection.settimeout(CLIENT_TIMEOUT)
        return b"".join(chunks)

    def _taken(self) -> None:
        """Say the request is taken (``protocol.TAKEN``): closed without a reply after this, the
        client knows its question was lost mid-answer (a crash) and asks it no more; closed
        before, that it was not taken, and asks again (``client.Refused``)."""
        with contextlib.suppress(OSError):  # the client gone: its question is dropped before its turn
            self.connection.sendall(protocol.TAKEN)

    def _send_answer(self, reply: dict[str, Any], connections: _Connections) -> None:
        """``_send`` for an answer, through ``_WatchedWrites``: within CLIENT_TIMEOUT in all, its
        place given up while its client takes none of it."""
        try:
            _WatchedWrites(self.connection, connections).write(protocol.encode(reply))
        except OSError as exc:  # the client left, or was closed for another, before its answer
            _SAID.say(logging.INFO, "a client left before its answer (%s)", type(exc).__name__)

    def _send(self, reply: dict[str, Any]) -> None:
        try:
            self.wfile.write(protocol.encode(reply))
            self.wfile.flush()
        except OSError as exc:  # the client left before its answer: nothing lost but the write
            _SAID.say(logging.INFO, "a client left before its answer (%s)", type(exc).__name__)


class _WatchedWrites:
    """Where an answer is written, on the socket and over HTTP: within CLIENT_TIMEOUT in all,
    every write of it (its HTTP head, then its body) together, and while its client takes no byte
    of it for ``STALLED_AFTER`` s, its place may be closed for another (``_Connections.stalled``):
    a client that never read a large answer held it 10 s. Over HTTP it still did, where the
    socket gave it up after 2 s."""

    def __init__(self, sock: socket.socket, connections: _Connections):
        self.sock, self.connections = sock, connections
        self.deadline = time.monotonic() + CLIENT_TIMEOUT

    def write(self, data: bytes) -> int:
        left_data = memoryview(data)
        stalled = False
        try:
            while left_data:
                left = self.deadline - time.monotonic()
                if left <= 0:
                    raise TimeoutError("the client took no answer within the timeout")
                self.sock.settimeout(min(STALLED_AFTER, left))
                try:
                    sent = self.sock.send(left_data)
                except TimeoutError:
                    if not stalled and left > STALLED_AFTER:
                        stalled = True
                        self.connections.stalled(self.sock, True)
                    continue
                if stalled:  # it reads again
                    stalled = False
                    self.connections.stalled(self.sock, False)
                left_data = left_data[sent:]
        finally:
            self.sock.settimeout(CLIENT_TIMEOUT)
        return len(data)

    def flush(self) -> None:
        """Nothing is kept to flush: each write is sent whole."""


class _Connections:
    """The open client connections (socket and HTTP), and for each whether it waits on its
    client (to send its request, to take its answer) or on the server, and since when.

    A thread and a place among ``limit`` each: a client that connects and says nothing, or one
    byte at a time, held them for as long as it liked, and 64 such kept every other client out
    (``busy``: the prompt hook recalled nothing, `brain ask` loaded the model itself). Now a
    connection that would be one too many closes, by ``shutdown``, those that have waited on
    their client over ``timeout`` and else the one that has waited longest; a well-behaved
    client, which writes its request at once, is never that one. Only ``limit`` connections
    being answered at once make a new one ``busy``, and a client process with ``per_client``
    being answered gets ``busy`` for one more of its own.

    Then ``kept`` places more are the prompt hook's: four client processes asking at once (four
    `brain ask` loops, an MCP client's agents) had all ``limit`` places being answered, and the
    hook, whose every prompt has 0.8 s, missed 20 prompts of 20 (``busy``). A socket connection
    that finds every place being answered takes a kept one, closing the kept connection that has
    waited longest on its client when none is free, but not when its client process (``peer``)
    has one already; once its request is read, one that is not an ask saying ``prompt_hook`` is
    ``busy`` there. Any local process can say it is the hook: the claim gets it one kept place a
    process and a turn on the query thread before others (``Service.run``), never the ordinary
    places of other clients."""

    def __init__(self, limit: int, timeout: float, *, kept: int = 0):
        self.limit, self.timeout, self.kept = limit, timeout, kept
        # requests of one client (``_peer``) answered at once: more of its own are busy, so
        # that one client cannot take every place with requests waiting their turn
        self.per_client = max(1, limit // 4)
        self.closed = 0  # connections closed for another
        # connections refused ``busy`` and read on (``_linger_refused``), and those closed at
        # once because ``limit`` of them were: they are in no place, so nothing else bounds them
        self.refused_reading = self.refused_closed = 0
        self._lock = threading.Lock()
        self._open: dict[socket.socket, tuple[bool, float]] = {}  # → (waits on its client, since)
        self._peers: dict[socket.socket, Any] = {}  # the client of each connection being answered
        self._kept: dict[socket.socket, Any] = {}  # the connections in kept places → their client
        self._kept_read: set[socket.socket] = set()  # those of them whose request has been read

    def admit(self, conn: socket.socket, peer: Any = None) -> bool:
        """Whether ``conn`` has a place: an ordinary one, or with a ``peer`` (a socket client's
        process) one kept for the prompt hook when every other is being answered."""
        now = time.monotonic()
        with self._lock:
            for other, (on_client, since) in list(self._open.items()):
                if on_client and now - since > self.timeout:
                    self._close(other)
            if len(self._open) - len(self._kept) >= self.limit:
                self._close_longest_waiting(kept=False)
            if len(self._open) - len(self._kept) < self.limit:
                self._open[conn] = (True, now)
                return True
            if peer is None or not self.kept:
                return False
            mine = next((other for other, who in self._kept.items() if who == peer), None)
            if mine is not None:
                # one a process: its last gives way only once answered (or refused) and read on;
                # one waiting for its request, or being answered, keeps it (a flood of a process's
                # connections closed each its last, each said in the log: 25,000 lines a minute)
                if mine not in self._kept_read or not self._open[mine][0]:
                    return False
                self._close(mine)
            if len(self._kept) >= self.kept:
                self._close_longest_waiting(kept=True)
            if len(self._kept) >= self.kept:
                return False
            self._open[conn] = (True, now)
            self._kept[conn] = peer
            return True

    def _close_longest_waiting(self, *, kept: bool) -> None:
        """Close the connection of an ordinary place (or a ``kept`` one) that has waited longest
        on its client, if one waits on it. One whose client has sent what the server has not
        read yet waits on the server: on a loaded machine the prompt hook's, its request sent as
        it connected, was closed unread for the next client to come (``busy`` refused, a flood's
        connection), before its thread got to read it."""
        waiting = sorted(
            (since, id(other), other)
            for other, (on_client, since) in self._open.items()
            if on_client and (other in self._kept) == kept
        )
        for _, _, other in waiting:
            if not _unread(other):
                self._close(other)
                return

    def receiving(self, conn: socket.socket, waits: bool) -> None:
        """Before its request is read whole: its thread waits for its client's bytes (``waits``),
        or has bytes of it in hand, and the client waits on the server. Said to wait on its client
        from its first byte to the last, an HTTP request read whole whose head was still looked
        at (on a loaded machine, long) was closed for a newcomer, and its client, which had sent
        all of it, was given no answer."""
        with self._lock:
            if conn in self._open:
                self._open[conn] = (waits, self._open[conn][1])  # since it connected: its timeout

    def read(self, conn: socket.socket) -> None:
        """Its whole request is read: it waits on the server, not on its client."""
        with self._lock:
            if conn in self._open:
                self._open[conn] = (False, self._open[conn][1])

    def answering(self, conn: socket.socket, peer: Any = None, *, prompt_hook: bool = False) -> str | None:
        """Its request is read, the server works on it: "urgent" for the prompt hook's, else
        None. "closed" when it was closed meanwhile, "crowded" when ``peer`` has ``per_client``
        requests being answered already, "kept" when it is in a place kept for the prompt hook
        and is not its request. A request saying ``prompt_hook`` is the hook's only when its
        client process has no other being answered: the hook asks one question a process, and a
        process that says so of each of many questions had them all go first. One refused
        ("crowded", "kept") is left waiting on the server until its refusal is written (``wrote``): said to
        wait on its client here, it was the first closed for a newcomer, its refusal cut off."""
        with self._lock:
            if conn not in self._open:
                return "closed"
            if conn in self._kept:
                self._kept_read.add(conn)
            urgent = prompt_hook
            if peer is not None:
                # those of its requests whose client hung up are not counted: they are dropped
                # before their turn, and a client that asked and left a moment ago is not crowded
                mine = [other for other, who in self._peers.items() if who == peer]
                if mine and (len(mine) >= self.per_client or urgent):
                    live = sum(not _hung_up(other) for other in mine)
                    if live >= self.per_client:
                        return "crowded"
                    urgent = urgent and not live
            if conn in self._kept and not urgent:
                return "kept"
            if peer is not None:
                self._peers[conn] = peer
            self._open[conn] = (False, time.monotonic())
            return "urgent" if urgent else None

    def stalled(self, conn: socket.socket, stalled: bool) -> None:
        """Its answer's write has had no byte taken for ``STALLED_AFTER`` s (``stalled``): it
        waits on its client, and may be closed for another; or its client reads again."""
        with self._lock:
            if conn in self._open:
                self._open[conn] = (stalled, time.monotonic())

    def answered(self, conn: socket.socket) -> bool:
        """Its answer is ready to write; False when it was closed meanwhile. It still waits on the
        server until the answer is written (``wrote``): said to wait on its client from here, it
        could be the one closed for the next client to come, its answer never written, and its
        client, whose question was taken (``protocol.TAKEN``), was told the server "took the
        question and closed the connection without an answer" (the prompt hook beside four
        processes keeping every place busy). The write has the socket's timeout all the same
        (``CLIENT_TIMEOUT``, for the whole answer): a client that does not read it is let go then."""
        with self._lock:
            self._peers.pop(conn, None)
            return conn in self._open

    def wrote(self, conn: socket.socket) -> None:
        """Its answer is written (or its write failed): it waits on its client, to read the answer
        and close, and may be closed for another."""
        with self._lock:
            if conn in self._open:
                self._open[conn] = (True, time.monotonic())

    def read_refused(self) -> bool:
        """Whether a connection refused ``busy`` may be read on: not when ``limit`` are already."""
        with self._lock:
            if self.refused_reading >= self.limit:
                self.refused_closed += 1
                return False
            self.refused_reading += 1
            return True

    def refused_read(self) -> None:
        with self._lock:
            self.refused_reading -= 1

    def leave(self, conn: socket.socket) -> None:
        with self._lock:
            self._open.pop(conn, None)
            self._peers.pop(conn, None)
            self._kept.pop(conn, None)
            self._kept_read.discard(conn)

    def _close(self, conn: socket.socket) -> None:
        del self._open[conn]
        self._kept.pop(conn, None)
        self._kept_read.discard(conn)
        self.closed += 1
        with contextlib.suppress(OSError):  # its thread's read or write ends at once
            conn.shutdown(socket.SHUT_RDWR)


class _HttpServer(_PatientAccept, ThreadingHTTPServer):
    what = "HTTP"
    daemon_threads = True
    block_on_close = False
    request_queue_size = 128

    def __init__(self, address: tuple[str, int], daemon: Daemon):
        self.daemon_ref = daemon
        self.address_family = socket.AF_INET6 if ":" in address[0] else socket.AF_INET
        super().__init__(address, _HttpHandler)


# The HTTP status of an error reply, by its code (protocol.py): every one was a 200, so a client
# that reads the status (curl -f, fetch's response.ok) took a bad_request for an answer.
HTTP_STATUS = {
    "bad_request": 400,
    "refused": 403,
    "not_found": 404,
    "index_mismatch": 409,
    "wrong_vault": 421,  # Misdirected Request: another vault's server answers it
    "brain_error": 422,
    "internal": 500,
    "starting": 503,
    "busy": 503,
}
POST_ONLY = "POST /v1 with a JSON request"
# Bytes a request's line and headers may take in all. The standard library's bounds are a line's
# (64 KiB) and 100 header lines: 6.4 MB a connection, held before the token is looked at, so any
# local user's 60 connections took 380 MB of the server's memory. Brain's head is under 1 KB.
MAX_HEAD_BYTES = 128 << 10
# What the standard library refuses before brain reads the request, said in brain's words: it
# wrote an HTML page, and to a line naming no HTTP version no status line at all.
_REFUSED_HEAD = {
    400: "a request line is POST /v1 HTTP/1.1",
    414: "a request line over 65,536 bytes",
    431: "a header line over 65,536 bytes, or over 100 header lines",
    505: "HTTP/1.0 or HTTP/1.1",
}


class _HeadTooLarge(OSError):
    """A request's line and headers went past ``MAX_HEAD_BYTES``."""


class _DeadlineReads(io.RawIOBase):
    """A connection's reads, all of them within ``seconds`` from the first: each read had its
    own timeout, so a client trickling its headers a byte every 9 s held its place for as long as
    it liked while no other client came (where the socket gives a request 10 s in all)."""

    def __init__(self, sock: socket.socket, seconds: float, connections: _Connections):
        self.sock, self.seconds, self.connections = sock, seconds, connections
        self.deadline = time.monotonic() + seconds
        self.timed_out = False
        # bytes the head may still take (the reader's look-ahead beyond it counted too), until
        # the head is read (``_HttpHandler.parse_request`` sets it None)
        self.head_left: int | None = MAX_HEAD_BYTES + io.DEFAULT_BUFFER_SIZE

    def readable(self) -> bool:
        return True

    def readinto(self, buffer: Any) -> int:
        left = self.deadline - time.monotonic()
        if left <= 0:
            self.timed_out = True
            raise TimeoutError("the client sent no whole request within the timeout")
        if self.head_left is not None and self.head_left <= 0:
            raise _HeadTooLarge
        self.sock.settimeout(left)
        self.connections.receiving(self.sock, True)
        try:
            if self.head_left is None:
                return self.sock.recv_into(buffer)
            read = self.sock.recv_into(buffer, min(len(buffer), self.head_left))
            self.head_left -= read
            return read
        except TimeoutError:
            self.timed_out = True
            raise
        finally:
            self.connections.receiving(self.sock, False)  # what it read is the server's to look at
            self.sock.settimeout(self.seconds)  # the answer's writes have their own


class _HttpHandler(BaseHTTPRequestHandler):
    server_version = "brain"
    # a refusal of a line that names no HTTP version gets a status line too (HTTP/0.9 had none)
    default_request_version = "HTTP/1.0"
    timeout = CLIENT_TIMEOUT  # the request in all (``_DeadlineReads``), and each write

    def setup(self) -> None:
        super().setup()
        plain = self.rfile
        connections: _Connections = self.server.daemon_ref.connections  # type: ignore[attr-defined]
        self._reads = _DeadlineReads(self.connection, self.timeout, connections)
        self.rfile = io.BufferedReader(self._reads)
        plain.close()
        self.requestline = self.command = ""  # a refusal before the request line was read names none
        self.request_version = self.default_request_version
        self._replied = False

    def handle(self) -> None:
        connections: _Connections = self.server.daemon_ref.connections  # type: ignore[attr-defined]
        if not connections.admit(self.connection):  # no kept place: the prompt hook asks on the socket
            body = protocol.encode(_every_place_busy())
            head = f"HTTP/1.0 503 Service Unavailable\r\nContent-Type: application/json\r\nContent-Length: {len(body)}\r\n\r\n"
            with contextlib.suppress(OSError):
                self.wfile.write(head.encode() + body)
            _linger_refused(self.connection, connections)  # closed unread, the client still sending got a reset
            return
        try:
            try:
                super().handle()
            except _HeadTooLarge:
                _SAID.say(logging.INFO, "an HTTP client sent a request head over %d bytes", MAX_HEAD_BYTES)
                self._reply(
                    431, protocol.error("bad_request", f"a request line and headers over {MAX_HEAD_BYTES:,} bytes")
                )
            except OSError as exc:  # reset as its request line or headers were read: it escaped to
                # socketserver, whose traceback went to stderr (a terminal, or nowhere when detached)
                _SAID.say(logging.INFO, "an HTTP client left mid-request (%s)", type(exc).__name__)
                return
            if self._reads.timed_out and not self._replied:
                # half a request line or its headers: the standard library closed it without a word
                _SAID.say(logging.INFO, "an HTTP client sent no whole request within %.0f s", self.timeout)
                self._reply(
                    408, protocol.error("bad_request", f"no whole request line and headers within {self.timeout:g} s")
                )
            # a refusal before the body (400, 401, 403, 404, 405, 408, 411, 414, 415, 431, 505)
            # leaves it unread: read on, the client reads its status, not a reset; it waits on
            # its client then, and may be closed for another
            connections.receiving(self.connection, True)
            _linger(self.connection)
        finally:
            connections.leave(self.connection)

    def parse_request(self) -> bool:
        line: bytes = self.raw_requestline  # type: ignore[attr-defined]  # set by handle_one_request
        if len(line.split()) < 3:
            # no HTTP version (HTTP/0.9's "GET /v1"), or no line at all: refused at once; the
            # standard library read headers after such a line, and waited 10 s on its client for
            # them, then closed without a word
            self.requestline = line.decode("latin-1").rstrip("\r\n")
            self.send_error(400)
            return False
        parsed = super().parse_request()
        self._reads.head_left = None  # the body is bounded by its Content-Length
        return bool(parsed)

    def send_error(self, code: int, message: str | None = None, explain: str | None = None) -> None:
        """The standard library's refusals, as brain's: one JSON line (it wrote an HTML page). A
        method it has no ``do_`` for (every one but POST and GET) is a 405, as GET is (a 501)."""
        if code == 501:
            return self._reply(405, protocol.error("bad_request", POST_ONLY))
        return self._reply(code, protocol.error("bad_request", _REFUSED_HEAD.get(code) or message or "bad request"))

    def do_POST(self) -> None:
        try:
            self._post()
        except Exception as exc:  # noqa: BLE001 - a bug: said in the log and to the client, never a silent close
            _SAID.failed("a request over HTTP failed", exc)
            self._reply(500, protocol.error("internal", f"{type(exc).__name__}: {exc}"))

    def _post(self) -> None:
        daemon: Daemon = self.server.daemon_ref  # type: ignore[attr-defined]
        port = self.server.server_address[1]  # type: ignore[index]  # an (address, port) pair: TCP
        hosts = {f"127.0.0.1:{port}", f"localhost:{port}", f"[::1]:{port}"}
        if self.path != "/v1":
            return self._reply(404, protocol.error("bad_request", "POST /v1"))
        if self.headers.get("Host", "") not in hosts:  # a page on another origin, via DNS rebinding
            return self._reply(403, protocol.error("bad_request", "the Host header must name this loopback server"))
        # whose socket it is, before the token: where modes are ignored, other users read serve.json too
        refusal = _refusal(daemon.tcp_peers.uid(self.connection), "an HTTP request")
        if refusal is not None:
            return self._reply(403, refusal)
        scheme, _, token = self.headers.get("Authorization", "").strip().partition(" ")
        # the scheme is case-insensitive (RFC 9110), the token compared in constant time
        expected = (daemon.token or "").encode()  # set whenever HTTP is served
        if scheme.lower() != "bearer" or not expected or not hmac.compare_digest(token.strip().encode(), expected):
            return self._reply(401, protocol.error("bad_request", "missing or wrong token (serve.json holds it)"))
        if not self.headers.get("Content-Type", "").startswith("application/json"):
            return self._reply(415, protocol.error("bad_request", "Content-Type: application/json"))
        length = self._body_length()
        if length is None:
            return None
        try:
            body = self.rfile.read(length)
        except TimeoutError:  # the client's, not a bug: it was logged with a traceback, answered 500
            _SAID.say(logging.INFO, "an HTTP client sent no whole body within %.0f s", self.timeout)
            return self._reply(408, protocol.error("bad_request", f"no whole request body within {self.timeout:g} s"))
        except OSError as exc:  # reset mid-body: the client left (it was taken for a bug, a traceback)
            _SAID.say(logging.INFO, "an HTTP client left mid-body (%s)", type(exc).__name__)
            return None
        if len(body) < length:
            # the client closed (or stopped writing) before the end its Content-Length gave: what
            # came was read as the request, a "bad request" said of a client that had left, or a
            # whole JSON object before the end answered for no one
            _SAID.say(
                logging.INFO,
                "an HTTP client stopped mid-body (%d of the %d bytes its Content-Length gives)",
                len(body),
                length,
                kind="an HTTP client stopped mid-body",
            )
            return self._reply(
                400,
                protocol.error(
                    "bad_request", f"the body ended at {len(body)} of the {length} bytes of its Content-Length"
                ),
            )
        # read whole: it waits on the server now, as a socket request does once read (closed for a
        # newcomer while its process was looked up, its client was given no answer)
        daemon.connections.read(self.connection)
        # its process, as a socket client's: before, HTTP requests took no turns and had no share,
        # so one HTTP client asking 64 questions at once had the prompt hook's behind all of them
        pid = daemon.tcp_peers.pid(self.connection)
        peer = pid if pid is not None else HTTP_CLIENTS
        state = daemon.connections.answering(self.connection, peer)
        if state == "closed":
            return  # closed for another while it sent its body
        if state == "crowded":
            who = "this client" if pid is not None else "HTTP clients whose process is not known"
            try:
                return self._reply(
                    503, protocol.error("busy", f"{daemon.connections.per_client} requests of {who} are being answered")
                )
            finally:
                daemon.connections.wrote(self.connection)  # its refusal written: now it may give way
        with caller(peer, lambda: _hung_up(self.connection)):
            reply = daemon.answer(body)
        status = 200 if reply.get("ok") else HTTP_STATUS.get(reply.get("error", {}).get("code"), 500)
        if daemon.connections.answered(self.connection):
            try:
                self._reply(status, reply, daemon.connections)
            finally:
                daemon.connections.wrote(self.connection)

    def _body_length(self) -> int | None:
        """The body's length, as its one Content-Length gives it; None once its refusal is written
        (chunked, none, not one whole number, over ``protocol.MAX_REQUEST_BYTES``)."""
        if "Transfer-Encoding" in self.headers:
            # a chunked body (with a Content-Length too: its chunks' sizes were read as the JSON)
            self._reply(411, protocol.error("bad_request", "a body with its Content-Length, not chunked"))
            return None
        lengths = {value.strip() for value in self.headers.get_all("Content-Length", [])}
        if not lengths:
            self._reply(411, protocol.error("bad_request", "Content-Length required"))
            return None
        given = lengths.pop()
        if lengths or not (given.isascii() and given.isdigit()):
            # int() read "+5", "5_0" and other scripts' digits; -5 was refused as over 1 MiB
            self._reply(
                400, protocol.error("bad_request", "Content-Length: one whole number of bytes, in ASCII digits")
            )
            return None
        length = int(given)
        if length > protocol.MAX_REQUEST_BYTES:
            # unread, its bytes reset the client still sending them; one that waits to be told to
            # send it (curl's way with a body over 1 MiB) is told no at once, and sends none
            if self.headers.get("Expect", "").strip().lower() != "100-continue":
                self._read_through(length)
            self._reply(413, protocol.error("bad_request", f"request over {protocol.MAX_REQUEST_BYTES} bytes"))
            return None
        return length

    def _read_through(self, length: int) -> None:
        """Read and throw away a body of ``length`` bytes, up to ``DRAIN_BYTES``; a client that
        stops sending it or sends it slower than ``CLIENT_TIMEOUT`` a read is left as it is."""
        left = min(length, DRAIN_BYTES)
        with contextlib.suppress(OSError):  # TimeoutError too
            while left > 0:
                chunk = self.rfile.read(min(left, 1 << 16))
                if not chunk:
                    return
                left -= len(chunk)

    def do_GET(self) -> None:
        self._reply(405, protocol.error("bad_request", POST_ONLY))

    def _reply(self, status: int, body: dict[str, Any], connections: _Connections | None = None) -> None:
        """Write ``status`` and ``body``; an answer (``connections`` given) through
        ``_WatchedWrites``, as on the socket."""
        self._replied = True
        data = protocol.encode(body)
        plain = self.wfile
        if connections is not None:
            self.wfile = _WatchedWrites(self.connection, connections)  # type: ignore[assignment]
        try:
            self.send_response(status)
            self.send_header("Content-Type", "application/json; charset=utf-8")
            self.send_header("Content-Length", str(len(data)))
            if status == 405:
                self.send_header("Allow", "POST")
            self.end_headers()
            if self.command != "HEAD":  # a HEAD's answer has the head alone
                self.wfile.write(data)
        except OSError as exc:
            _SAID.say(logging.INFO, "an HTTP client left before its answer (%s)", type(exc).__name__)
        finally:
            self.wfile = plain

    def log_message(self, format: str, *args: Any) -> None:
        log.debug("http: " + format, *args)


def _linger(conn: socket.socket, seconds: float = LINGER_SECONDS) -> None:
    """Close ``conn``'s writing end, its answer written, and read what its client still sends,
    thrown away, until the client closes its end, up to ``DRAIN_BYTES`` and ``seconds``. A socket
    closed with bytes unread (a request answered before it was read: ``busy``, an HTTP refusal)
    resets the client, which loses the answer: still writing, a broken pipe; done, a reset where it
    read the answer (a TCP reset throws away what the client had not yet read). Brain's clients
    half-close after their request, so for them this ends at once."""
    with contextlib.suppress(OSError):  # the client gone, TimeoutError: closed as it is
        conn.shutdown(socket.SHUT_WR)  # the answer is all it gets: it reads to its end, then closes
        deadline = time.monotonic() + seconds
        left = DRAIN_BYTES
        while left > 0:
            wait = deadline - time.monotonic()
            if wait <= 0:
                return
            conn.settimeout(wait)
            chunk = conn.recv(min(left, 1 << 16))
            if not chunk:
                return
            left -= len(chunk)


def _linger_refused(conn: socket.socket, connections: _Connections) -> None:
    """``_linger`` for a connection refused ``busy``, when fewer than ``MAX_CONNECTIONS`` are read
    on so; beyond them, closed at once. Such a connection holds no place: read on, each held its
    thread and descriptor up to ``LINGER_SECONDS``, so a flood of connections that send nothing
    while every place was being answered held as many as came in 2 s (thousands; shed at once
    before the read-on), and a client of them still sending gets a reset, as before it."""
    if not connections.read_refused():
        return
    try:
        _linger(conn)
    finally:
        connections.refused_read()


def _unread(conn: socket.socket) -> int:
    """Bytes that ``conn``'s client has sent and the server has not read (0 when it cannot be
    told: a closed socket)."""
    try:
        return int.from_bytes(fcntl.ioctl(conn.fileno(), termios.FIONREAD, b"\0\0\0\0"), sys.byteorder)
    except (OSError, ValueError):
        return 0


def _every_place_busy() -> dict[str, Any]:
    return protocol.error("busy", f"{MAX_CONNECTIONS} requests are being answered at once")


def _refusal(uid: int | None, what: str) -> dict[str, Any] | None:
    """The answer to a client of ``uid`` that is neither this server's user nor root, said in the
    log; None for one that is (or whose uid the system does not say: then the socket's modes, or
    the token, alone keep others out)."""
    if uid is None or uid in (os.getuid(), 0):
        return None
    _SAID.say(logging.WARNING, "refused %s from uid %s: this server answers only its own user", what, uid)
    return protocol.error("refused", f"this server answers only uid {os.getuid()}, not uid {uid}")


def _peer(conn: socket.socket) -> Any:
    """The client process at the other end of the Unix socket (its pid, ``peers.unix_peer``), or
    the connection itself where the platform does not say: each connection its own client, its
    questions answered as they come, as before clients took turns (said once in the log)."""
    pid = peers.unix_peer(conn)
    if pid is not None:
        return pid
    global _UNKNOWN_PEERS_SAID
    if not _UNKNOWN_PEERS_SAID:
        _UNKNOWN_PEERS_SAID = True
        log.info(
            "this system does not say which process a socket client is (%s): clients do not take turns", peers.PLATFORM
        )
    return conn


_UNKNOWN_PEERS_SAID = False
HTTP_CLIENTS = "http"  # the one share of the HTTP clients whose process is not known


def _hung_up(conn: socket.socket) -> bool:
    """Whether the client closed its end. On the Unix socket ``POLLHUP`` only: a client that
    ended its request with ``shutdown(SHUT_WR)``, as brain's do, still waits for the answer. On
    TCP ``POLLHUP`` comes only once both ends are shut, and an HTTP client that left has sent
    its FIN: ``POLLRDHUP`` (HTTP clients do not half-close)."""
    poller = select.poll()
    left = select.POLLHUP | select.POLLERR  # always reported
    if conn.family != socket.AF_UNIX:
        left |= getattr(select, "POLLRDHUP", 0)  # Linux's: elsewhere, an HTTP client that left waits its turn
    poller.register(conn, left)
    return any(events & left for _, events in poller.poll(0))


def _who(record: dict[str, Any] | None) -> str:
    return f"pid {record.get('pid')}, since {record.get('started_at')}" if record else "starting"


def _and(names: list[str]) -> str:
    return ", ".join(names[:-1]) + " and " + names[-1] if len(names) > 1 else names[0]


def _flock_patiently(fd: int) -> bool:
    """Take the lock on ``fd``; False when it stays held through ``LOCK_TRIES`` tries. A client
    asking whether a server runs (``runtime.lock_is_held``: `brain status`, `brain ask`, the
    wait of `--stop`) holds it for microseconds, a server for good: a starting server that met
    one said "already running (starting)" and did not start."""
    for attempt in range(LOCK_TRIES):
        try:
            fcntl.flock(fd, fcntl.LOCK_EX | fcntl.LOCK_NB)
            return True
        except BlockingIOError:
            if attempt < LOCK_TRIES - 1:
                time.sleep(0.1)
    return False


def _fd_identity(fd: int) -> runtime.Identity:
    st = os.fstat(fd)
    return st.st_dev, st.st_ino


def _unlink_socket(path: Path) -> None:
    """Remove the socket a stale record names, when it is one of ours: a record names any path,
    and whatever else is there (a note, a file of yours) is not the server's to remove."""
    try:
        st = path.lstat()
    except OSError:
        return
    if stat.S_ISSOCK(st.st_mode) and st.st_uid == os.getuid():
        _unlink(path)


def _unlink(path: Path) -> None:
    try:
        path.unlink()
    except FileNotFoundError:
        pass
    except OSError as exc:
        log.warning("could not remove %s: %s", path, exc)


# ----- logging --------------------------------------------------------------------------------


def setup_logging(root: Path, *, foreground: bool) -> Path:
    """Log to ``$BRAIN_HOME/logs/serve.log`` (and stderr in the foreground); returns the file."""
    file_handler = log_handler("serve.log", LOG_MAX_BYTES)
    path = Path(file_handler.baseFilename)
    logger = logging.getLogger("brain")
    for handler in list(logger.handlers):  # the CLI's stderr handler: ours replaces it
        logger.removeHandler(handler)
    # the vault's name is text in the format: a % in it ("100% done") failed every line's
    # formatting, and nothing was logged
    name = root.name.replace("%", "%%")
    file_handler.setFormatter(OneLineFormatter(f"%(asctime)s pid=%(process)d [{name}] %(levelname)s %(message)s"))
    logger.addHandler(file_handler)
    log_unknown_settings(file_handler)
    if foreground:
        stream = logging.StreamHandler(sys.stderr)
        stream.setFormatter(OneLineFormatter("brain serve: %(message)s"))
        logger.addHandler(stream)
    logger.setLevel(logging.INFO)
    logger.propagate = False
    logging.getLogger("watchfiles").setLevel(logging.WARNING)
    return path


# ----- the command's work ---------------------------------------------------------------------


def run_foreground(root: Path, *, http: tuple[str, int] | None, watch: bool = True, ready: Any = None) -> int:
    """Serve until SIGTERM/SIGINT or a ``stop`` request. ``ready(message)`` is told when the
    socket listens and again when the index is loaded (``--detach``'s parent waits on it); a
    server told of by ``ready`` that cannot load the index stops (``--detach`` says it failed:
    nothing is left running behind that error)."""
    daemon = Daemon(root, Service(root, watch=watch), http=http)
    stop = lambda *_: daemon.request_stop()
    # SIGHUP ignored: the terminal closing is no reason to stop. The process's own handlers are
    # given back at the end: run in another program's process (a test's, by CliRunner), a server
    # that failed to start or had stopped left its own there, bound to it, and that process
    # ignored Ctrl-C and SIGTERM from then on
    handlers = ((signal.SIGTERM, stop), (signal.SIGINT, stop), (signal.SIGHUP, signal.SIG_IGN))
    previous = [(signum, signal.signal(signum, handler)) for signum, handler in handlers]
    try:
        return _serve_until_stopped(daemon, ready)
    finally:
        for signum, handler in previous:
            if handler is not None:  # None: not set from Python, so nothing to give back
                signal.signal(signum, handler)


def _serve_until_stopped(daemon: Daemon, ready: Any) -> int:
    if ready:  # what it loads, as it goes: --detach's parent says it (it was silent for 10-30 s)
        daemon.service.on_loading = lambda doing: ready(f"doing {doing}")
    try:
        daemon.start()
    except BrainError as exc:
        if ready:
            ready(f"error {exc}")
        raise
    told = threading.Lock()  # the last word to ``ready`` is said once: loaded, or stopped first
    said: list[str] = []

    def tell(message: str) -> None:
        with told:
            if not said and ready:
                said.append(message)
                ready(message)

    if ready:
        ready(f"listening {os.getpid()} {daemon.socket_path}")

        def tell_when_loaded() -> None:
            loaded = daemon.service.wait_ready(READY_TIMEOUT)
            state = daemon.service.state
            if state == "failed":
                tell("error " + (daemon.service.failure or ""))  # before the stop, whose "stopped" it is not
                daemon.request_stop()
            else:
                tell("empty" if state == "empty" else "loaded" if loaded else "loading")

        threading.Thread(target=tell_when_loaded, name="brain-ready", daemon=True).start()
    try:
        daemon.wait()
        # stopped (--stop, a signal, the vault moved) before the index was loaded: --detach's
        # parent said "started" for a server already gone (an error is told as itself, below)
        tell("stopped")
    finally:
        daemon.stop()
    return 0


def null_stdio() -> None:
    """A detached server's standard streams: /dev/null (it has no terminal; it logs to serve.log).
    Started with one closed (`brain serve --detach >&-`), Python's stream for it is the stand-in
    that fails every write (cli_support.ClosedOutput): it becomes one on /dev/null, or a library's
    stray print would be an error in the server."""
    devnull = os.open(os.devnull, os.O_RDWR)
    for fd in (0, 1, 2):
        os.dup2(devnull, fd)
    for name, fd in (("stdout", 1), ("stderr", 2)):
        if not hasattr(getattr(sys, name), "buffer"):  # the stand-in, or None
            setattr(sys, name, open(fd, "w", encoding="utf-8", errors="replace", closefd=False))  # noqa: SIM115


def run_detached(
    root: Path,
    *,
    http: tuple[str, int] | None,
    watch: bool = True,
    wait: bool = True,
    progress: Any = None,
) -> tuple[int, str]:
    """Start the server in the background; (exit code, what to tell the user). ``progress(line)``
    is told where the log is and what the server loads as it goes (the command was silent for
    the model's 10-30 s: starting, stuck or dead looked the same); ``wait=False`` returns once it
    listens, loading on."""
    say = progress or (lambda line: None)
    log_file = config.log_dir() / "serve.log"
    read_end, write_end = os.pipe()
    pid = os.fork()
    if pid == 0:  # the first child: a new session, then the server as its child, then gone
        os.close(read_end)
        os.setsid()
        if os.fork() != 0:
            os._exit(0)
        code = 1
        try:
            null_stdio()

            def ready(message: str) -> None:
                try:
                    os.write(write_end, message.encode("utf-8", "replace") + b"\n")
                except OSError:  # the parent did not wait (--no-wait), or is gone
                    pass

            ready(f"pid {os.getpid()}")
            try:
                setup_logging(root, foreground=False)
            except BrainError as exc:  # no log to point to (BRAIN_HOME under a file, /proc): say why
                ready(f"error {exc}")
                raise
            code = run_foreground(root, http=http, watch=watch, ready=ready)
        except BrainError as exc:  # the parent was told through the pipe
            log.error("brain serve did not start: %s", exc)
        except BaseException as exc:
            log.exception("brain serve failed")
            with contextlib.suppress(OSError):  # the log may be where it cannot write (a full disk)
                why = f"brain serve did not start ({type(exc).__name__}: {exc}); see the log: {log_file}"
                os.write(write_end, f"error {why}\n".encode("utf-8", "replace"))
        finally:
            os._exit(code)
    os.close(write_end)
    os.waitpid(pid, 0)
    lines = _told(read_end, root, log_file, wait=wait, say=say)
    told_pid = next((line[4:] for line in lines if line.startswith("pid ")), None)
    listening = next((line for line in lines if line.startswith("listening")), None)
    failure = next((line[6:] for line in lines if line.startswith("error")), None)
    if listening is None:
        if failure:
            return 1, failure
        last = _last_error(log_file, told_pid)
        return 1, f"brain serve did not start{f': {last}' if last else ''}; see the log: {log_file}"
    _, server_pid, path = listening.split(" ", 2)
    started = f"brain serve started for {root} (pid {server_pid}, socket {path})"
    if not wait:
        doing = next((line[6:] for line in reversed(lines) if line.startswith("doing ")), "loading the index")
        return 0, f"{started}; {doing} (`brain status` says when it answers; the log: {log_file})"
    if not failure and not (lines[-1:] and lines[-1].startswith(("loaded", "loading", "empty"))):
        # "stopped", or the pipe closed with no last word: the server has ended (only it held the pipe)
        last = _last_error(log_file, server_pid)
        return 1, (
            f"brain serve (pid {server_pid}) stopped before it had loaded the index "
            f"(`brain serve --stop`, a signal, or the vault moved){f': {last}' if last else ''}; "
            f"it is not running: see the log: {log_file}"
        )
    if failure:
        deadline = time.monotonic() + 15.0
        while runtime.lock_is_held(root) and time.monotonic() < deadline:  # it stops: see run_foreground
            time.sleep(0.05)
        return 1, f"brain serve (pid {server_pid}) could not load the index, and stopped: {failure}"
    if "empty" in lines:
        return 0, started + "; the vault has no notes yet: they are indexed and served as they are written"
    loaded = "loaded" in lines
    return 0, started + ("" if loaded else "; still loading the index (`brain status` shows when it is ready)")


def _told(read_end: int, root: Path, log_file: Path, *, wait: bool, say: Callable[[str], None]) -> list[str]:
    """The server's words through the pipe, up to its last (error, loaded, loading, empty,
    stopped; with ``wait`` False, up to "listening"), each step it loads said through ``say``
    as it begins and every ``PROGRESS_EVERY`` seconds while it goes on."""
    lines: list[str] = []
    said_where = False
    pid = "?"
    doing, since = "starting", time.monotonic()
    last_said = since
    buffer = b""
    with os.fdopen(read_end, "rb", buffering=0) as pipe:
        while True:
            now = time.monotonic()
            readable, _, _ = select.select([pipe], [], [], max(0.0, last_said + PROGRESS_EVERY - now))
            if not readable:  # a step that goes on: said again, with how long so far
                last_said = time.monotonic()
                say(f"brain serve: still {doing} ({last_said - since:.0f} s)")
                continue
            chunk = pipe.read(4096)
            if not chunk:  # the pipe closed: the server has ended, or never started
                break
            buffer += chunk
            *complete, buffer = buffer.split(b"\n")
            for raw in complete:
                line = raw.decode("utf-8", "replace").strip()
                lines.append(line)
                if line.startswith("pid "):
                    pid = line[4:]
                elif line.startswith(("listening", "doing ")) and not said_where:
                    # said once its log is open (a log it cannot write is the error alone)
                    said_where = True
                    say(f"brain serve: starting for {root} (pid {pid}; the log: {log_file})")
                if line.startswith("doing "):
                    doing, since = line[6:], time.monotonic()
                    last_said = since
                    say(f"brain serve: {doing}…")
            if lines and lines[-1].startswith(("error", "loaded", "loading", "empty", "stopped")):
                break
            if not wait and any(line.startswith("listening") for line in lines):
                break
    return lines


def _last_error(log_file: Path, pid: str | None) -> str | None:
    """The last ERROR line the server ``pid`` wrote to the log (its tail), its message alone: what
    a start that failed says in one line, where it said only "see the log"."""
    if pid is None:
        return None
    try:  # never blocking: a FIFO where the log goes waited for good for a writer
        fd = os.open(log_file, os.O_RDONLY | os.O_NONBLOCK | getattr(os, "O_NOFOLLOW", 0))
    except OSError:
        return None
    with os.fdopen(fd, "rb") as f:
        try:
            st = os.fstat(fd)
            if not stat.S_ISREG(st.st_mode):
                return None
            f.seek(max(0, st.st_size - 65536))
            tail = f.read().decode("utf-8", "replace").splitlines()
        except OSError:
            return None
    mark = f" pid={pid} "
    for line in reversed(tail):
        if mark in line and " ERROR " in line:
            return line.split(" ERROR ", 1)[1].strip()
    return None


class Stopped(NamedTuple):
    """What ``stop_server`` found and did."""

    running: bool  # a server held the vault's lock
    stopped: bool  # ... and it is gone now
    message: str


def stop_server(root: Path, *, timeout: float = 15.0) -> Stopped:
    """Stop the vault's server: ask it, or SIGTERM the lock holder.

    A server is asked over its record's socket even when no lock is seen held: its lock file can
    be gone or unopenable (removed under it, until ``heal`` makes it again), and the server
    answering ``stop`` for this vault is the proof that it runs; then its own pid, from its
    reply, is waited for."""
    record = runtime.read_record(root)
    held = runtime.lock_is_held(root)
    if not held and record is None:
        return Stopped(False, False, f"no brain serve is running for {root}")
    # whom a SIGTERM goes to: the pid the lock's holder wrote into it, which is the server's
    # (a record can be another's until heal makes it again: an older server's copied back); the
    # record's only for a server from before the pid was written there
    pid = runtime.lock_holder(root) if held else None
    if pid is None and record is not None:
        pid = record.get("pid")
    try:
        reply = client.call(root, "stop", timeout=3.0)
    except (client.NoServer, client.ServerError) as exc:
        if not held:  # a stale record (the server was killed): nothing holds the vault
            return Stopped(False, False, f"no brain serve is running for {root}")
        if not isinstance(pid, int) or not runtime.pid_alive(pid):
            return Stopped(
                True, False, f"brain serve for {root} did not answer ({exc}) and its pid is unknown; kill it by hand"
            )
        os.kill(pid, signal.SIGTERM)
        # a server stopped by SIGSTOP (Ctrl-Z) holds SIGTERM back until it runs again: `brain
        # status` sent the user to --stop, which waited 15 s and then asked for kill -9
        os.kill(pid, signal.SIGCONT)
    else:
        answered = reply.get("pid") if isinstance(reply, dict) else None
        pid = answered if isinstance(answered, int) else pid
    deadline = time.monotonic() + timeout
    while time.monotonic() < deadline:
        # its lock let go, and the process gone when the lock was not seen: the lock file is not
        # the server's while it is gone (``lock_is_held`` then says no lock at all)
        if not runtime.lock_is_held(root) and (held or not runtime.pid_alive(pid)):
            return Stopped(True, True, f"stopped brain serve for {root}" + (f" (pid {pid})" if pid else ""))
        time.sleep(0.1)
    # it ignored SIGTERM (hung): only SIGKILL ends it, and a pass killed midway is redone by the next one
    return Stopped(
        True, False, f"brain serve for {root} (pid {pid}) did not stop within {timeout:.0f} s; `kill -9 {pid}` ends it"
    )
