"""Room for the prompt hook when other clients keep `brain serve` busy, and a server out of descriptors.

Four client processes asking at once (four `brain ask` loops, an MCP client's agents) had every
place being answered, and the prompt hook, whose every prompt has 0.8 s, got ``busy``: 20 prompts
of 20 recalled nothing (``bench/serve_fuzz.py --only flood``). Places are now kept for it, and its
question goes first on the query thread; a process only saying it is the hook gets one of them.

An ``accept`` that failed for want of descriptors was dropped in silence by socketserver, which
tried again at once, on a whole core, for as long as none was free.
"""

from __future__ import annotations

import contextlib
import json
import logging
import os
import re
import resource
import signal
import socket
import subprocess
import sys
import threading
import time
from collections.abc import Iterator
from pathlib import Path

import pytest
from serve_helpers import TESTS, brain_env, raw_exchange, request, served, wait_until
from test_serve import _index

from brain.autorecall import hook
from brain.moments import recorded_local
from brain.server import daemon as daemon_module
from brain.server import protocol
from brain.server.service import caller

LOADER = """
import socket, sys, threading
line = sys.argv[2].encode()
def ask():
    while True:
        sock = socket.socket(socket.AF_UNIX, socket.SOCK_STREAM)
        try:
            sock.connect(sys.argv[1])
            sock.sendall(line)
            sock.shutdown(socket.SHUT_WR)
            while sock.recv(65536):
                pass
        except OSError:
            pass
        finally:
            sock.close()
threads = [threading.Thread(target=ask, daemon=True) for _ in range(int(sys.argv[3]))]
for t in threads:
    t.start()
print("asking", flush=True)
sys.stdin.read()
"""


@contextlib.contextmanager
def _loaders(socket_path: Path, line: bytes, *, processes: int, threads: int) -> Iterator[None]:
    """``processes`` client processes, each asking ``line`` back to back on ``threads`` threads."""
    running = [
        subprocess.Popen(
            [sys.executable, "-c", LOADER, str(socket_path), line.decode(), str(threads)],
            stdin=subprocess.PIPE,
            stdout=subprocess.PIPE,
        )
        for _ in range(processes)
    ]
    try:
        for proc in running:
            assert proc.stdout is not None and proc.stdout.readline() == b"asking\n"
        yield
    finally:
        for proc in running:
            proc.kill()
        for proc in running:
            proc.wait(30)
            for stream in (proc.stdin, proc.stdout):
                if stream:
                    stream.close()


def _slow_questions(monkeypatch, seconds: float, begun: list[str] | None = None) -> None:
    """A question starting "slow" takes ``seconds`` more to answer; each question is added to
    ``begun`` as the query thread begins it."""
    from brain.recall.pipeline import Recaller

    compare = Recaller.compare

    def slow_for_some(self, query, *args, **kwargs):
        if begun is not None:
            begun.append(query)
        if query.startswith("slow"):
            time.sleep(seconds)
        return compare(self, query, *args, **kwargs)

    monkeypatch.setattr(Recaller, "compare", slow_for_some)


ASKED = "(the prompt hook asks)"


def test_the_prompt_hook_is_answered_while_other_clients_keep_every_place_busy(toy_vault, monkeypatch):
    """Four processes keep every place being answered (their share each, 0.2 s questions back to
    back): the prompt hook, on its own 0.8 s, got ``busy``, and had it got in it waited behind a
    question of each of them. Its asks now take a kept place and go first: each is answered, and
    at most one other question (the one the query thread was on as it came) begins between the
    hook's ask and its question. The order is the test's, not the time: on its 0.8 s the hook's
    own deadline, not the server, failed 4 runs in 10 beside two CPU burners (its speed is
    bench/serve_fuzz.py's), so it is given 30 s here."""
    monkeypatch.setattr(daemon_module, "MAX_CONNECTIONS", 8)  # a quarter each: 2 places a process
    begun: list[str] = []
    _slow_questions(monkeypatch, 0.2, begun)
    _index(toy_vault)
    with served(toy_vault, watch=False) as daemon:
        monkeypatch.setenv("BRAIN_VAULT", str(daemon.root))
        line = protocol.encode(protocol.request("ask", str(daemon.root), query="slow question", modes=["hybrid+ppr"]))
        with _loaders(daemon.socket_path, line, processes=4, threads=2):
            connections = daemon.connections
            wait_until(lambda: len(connections._peers) >= 8, 20, "every place to be answered")
            rows = []
            for _ in range(5):
                wait_until(lambda: len(connections._peers) >= 8, 20, "every place to be answered again")
                begun.append(ASKED)
                started = time.monotonic()
                payload = {"prompt": "how should agent memory work", "hook_event_name": "UserPromptSubmit"}
                rows.append(hook.recall_for_prompt(payload, started=started, deadline=started + 30).row)
        missed = [f"{row.get('reason')}: {row.get('detail')}" for row in rows if "results" not in row]
        assert not missed, f"{len(missed)} of {len(rows)} prompts got no answer, e.g. {missed[0]}"
        order = " ".join("H" if q == ASKED else "h" if not q.startswith("slow") else "s" for q in begun)
        waits = [len(run.split()) for run in re.findall(r"H((?: s)*) h", order)]
        assert len(waits) == 5 and max(waits) <= 1, f"questions begun (s: another's, H: the hook asks, h: its): {order}"


def test_one_process_saying_it_is_the_prompt_hook_gets_one_kept_place():
    """A kept place is the prompt hook's, which asks one question a process: any local process
    can say it is the hook, and a flood of such asks from one process, or a process of HTTP
    clients, never takes more than one of them, nor any other client's ordinary place."""
    connections = daemon_module._Connections(limit=4, timeout=10, kept=2)
    pairs = [socket.socketpair() for _ in range(15)]
    ends = iter(pairs)
    try:
        for peer in (1, 2, 3, 4):  # every ordinary place being answered
            conn, _ = next(ends)
            assert connections.admit(conn, peer)
            assert connections.answering(conn, peer) is None
        http, _ = next(ends)
        assert not connections.admit(http)  # no process given: no kept place
        first, _ = next(ends)
        assert connections.admit(first, 99)
        assert connections.answering(first, 99, prompt_hook=True) == "urgent"
        assert not connections.admit(next(ends)[0], 99)  # one a process: its first is being answered
        other, _ = next(ends)
        assert connections.admit(other, 98)
        assert connections.answering(other, 98, prompt_hook=False) == "kept"  # not the hook's ask: busy
        connections.leave(other)
        idle, _ = next(ends)
        assert connections.admit(idle, 97)  # says nothing: the next process's closes it
        assert not connections.admit(next(ends)[0], 97)  # not its own process's: busy, as before the places
        newcomer, _ = next(ends)
        assert connections.admit(newcomer, 96)
        assert connections.answering(idle, 97, prompt_hook=True) == "closed"
        assert connections.answering(newcomer, 96, prompt_hook=True) == "urgent"
        assert not connections.admit(next(ends)[0], 95)  # both kept places being answered
        assert connections.answered(newcomer)
        connections.wrote(newcomer)  # read on after its answer: its process's next closes it
        again, again_client = next(ends)
        assert connections.admit(again, 96)
        assert not connections.answered(newcomer)
        again_client.sendall(b'{"v": 1, "op": "ask"')  # sent, not yet read: it waits on the server
        assert not connections.admit(next(ends)[0], 95)
        connections.leave(first)
        assert connections.admit(next(ends)[0], 95)
    finally:
        for server_end, client_end in pairs:
            server_end.close()
            client_end.close()


@pytest.mark.parametrize("place", ["kept", "ordinary"])
def test_an_answer_being_written_is_never_closed_for_another_client(place):
    """From its answer ready (``answered``) to its answer written (``wrote``), a connection waits
    on the server: said to wait on its client, it was the one closed for the next client to come,
    its question taken (``protocol.TAKEN``) and its answer never written, and the prompt hook,
    beside four processes keeping every place busy, had "took the question and closed the
    connection without an answer". Once written, it is read on, and closed for another as before."""
    connections = daemon_module._Connections(limit=1, timeout=10, kept=1 if place == "kept" else 0)
    pairs = [socket.socketpair() for _ in range(4)]
    try:
        busy, hooks, newcomer, later = (server_end for server_end, _ in pairs)
        if place == "kept":  # the one ordinary place being answered: the hook's ask takes the kept one
            assert connections.admit(busy, 1)
            assert connections.answering(busy, 1) is None
        asked = hooks if place == "kept" else busy
        assert connections.admit(asked, 99)
        connections.read(asked)
        assert connections.answering(asked, 99, prompt_hook=True) == "urgent"
        assert connections.answered(asked)  # its answer is ready, and being written
        assert not connections.admit(newcomer, 98)  # busy: no place waits on its client
        asked.sendall(b"the answer")  # not shut down for the newcomer
        client_end = pairs[1 if place == "kept" else 0][1]
        client_end.settimeout(5)
        assert client_end.recv(100) == b"the answer"
        connections.wrote(asked)  # written: it waits on its client to read it, and gives way
        assert connections.admit(later, 97)
        assert connections.closed == 1
        with pytest.raises(OSError):
            asked.sendall(b"more")
    finally:
        for server_end, client_end in pairs:
            server_end.close()
            client_end.close()


def test_a_process_saying_each_of_its_questions_is_the_prompt_hooks_has_one_go_first():
    """The hook asks one question a process: of a process's questions being answered at once,
    one at most goes first (one saying it is the hook's while another is being answered is
    any other client's)."""
    connections = daemon_module._Connections(limit=8, timeout=10, kept=2)
    pairs = [socket.socketpair() for _ in range(4)]
    try:
        ends = [server_end for server_end, _ in pairs]
        assert connections.admit(ends[0], 5)
        assert connections.answering(ends[0], 5, prompt_hook=True) == "urgent"
        assert connections.admit(ends[1], 5)
        assert connections.answering(ends[1], 5, prompt_hook=True) is None
        connections.leave(ends[0])
        assert connections.admit(ends[2], 6)
        assert connections.answering(ends[2], 6, prompt_hook=True) == "urgent"
    finally:
        for server_end, client_end in pairs:
            server_end.close()
            client_end.close()


@pytest.mark.parametrize("asked", ["a1 a2 h1 h2 h3 a3", "h1 h2 h3 a1 a2 a3"])
def test_the_prompt_hooks_questions_go_first_but_never_keep_the_others_from_their_turns(toy_vault, asked):
    """The query thread takes an urgent job (the prompt hook's) before the others waiting, but
    never two in a row while another waits: any process can say it is the hook. (Each urgent
    job's wake-up, queued before the others' jobs, let one more urgent job go first: four
    processes saying they were the hook had another client's question wait 6 s, p50.)"""
    _index(toy_vault)
    with served(toy_vault, watch=False) as daemon:
        service = daemon.service
        order: list[str] = []
        taken, release = threading.Event(), threading.Event()
        blocker = threading.Thread(target=lambda: service.run(lambda r: taken.set() or release.wait(300), timeout=600))
        blocker.start()  # the query thread is taken, as by a long question
        threads = []
        try:
            assert taken.wait(120), "the query thread did not take the first job"
            for i, name in enumerate(asked.split()):

                def ask(name: str = name, peer: int = i) -> None:
                    with caller(peer, lambda: False, urgent=name.startswith("h")):
                        service.run(lambda r: order.append(name), timeout=30)

                threads.append(threading.Thread(target=ask))
                threads[-1].start()
                wait_until(lambda queued=i + 1: service._jobs.qsize() >= queued, 10, f"{name} to wait its turn")
        finally:
            release.set()
            blocker.join(30)
            for thread in threads:
                thread.join(30)
        assert order == ["h1", "a1", "h2", "a2", "h3", "a3"]


# ----- out of descriptors -----------------------------------------------------------------------

SERVER_SHORT_OF_DESCRIPTORS = """
import logging, os, resource, sys
from pathlib import Path
sys.path.insert(0, sys.argv[2])
from serve_helpers import served
logging.basicConfig(stream=sys.stderr, level=logging.INFO, format="%(levelname)s %(message)s")
import brain.server.daemon
brain.server.daemon.ACCEPT_QUIET = float(sys.argv[3])  # the quiet that ends an episode, shortened
with served(Path(sys.argv[1]), watch=False) as daemon:
    open_now = len(os.listdir("/proc/self/fd"))
    resource.setrlimit(resource.RLIMIT_NOFILE, (open_now + 8, resource.getrlimit(resource.RLIMIT_NOFILE)[1]))
    print(daemon.socket_path, flush=True)
    sys.stdin.read()
"""


def _cpu_seconds(pid: int) -> float:
    fields = Path(f"/proc/{pid}/stat").read_text().rsplit(")", 1)[1].split()
    return (int(fields[11]) + int(fields[12])) / os.sysconf("SC_CLK_TCK")


@pytest.mark.skipif(not Path("/proc/self/fd").exists(), reason="the server's open descriptors are counted in /proc")
def test_a_server_out_of_descriptors_says_so_once_and_waits_instead_of_spinning(toy_vault):
    """With ``ulimit -n`` reached, ``accept`` fails (EMFILE) with the client still in the
    backlog, so the socket stays readable: socketserver dropped the error unsaid and tried again
    at once, a core spent for as long as it lasted and nothing in the log. It is now one warning
    when it begins (accepts that fail and succeed by turns, as descriptors are let go and taken
    again, are one episode), a pause between tries, and one line once none has failed for a
    while."""
    _index(toy_vault)
    quiet = 0.6  # ACCEPT_QUIET (2 s), past the longest pause between tries (ACCEPT_PAUSES, 0.2 s)
    assert quiet > 2 * max(daemon_module.ACCEPT_PAUSES)
    server = subprocess.Popen(
        [sys.executable, "-c", SERVER_SHORT_OF_DESCRIPTORS, str(toy_vault.resolve()), str(TESTS), str(quiet)],
        env=brain_env(),
        stdin=subprocess.PIPE,
        stdout=subprocess.PIPE,
        stderr=subprocess.PIPE,
    )
    lines: list[str] = []  # the server's log, as it says it
    reader = threading.Thread(target=lambda: lines.extend(line.decode() for line in server.stderr or ()))
    reader.start()

    def log_after_exit() -> str:
        server.wait(30)
        reader.join(30)
        return "".join(lines)

    held: list[socket.socket] = []
    try:
        assert server.stdout is not None
        path = server.stdout.readline().decode().strip()
        assert path, log_after_exit()[-2000:]
        assert raw_exchange(path, protocol.encode(protocol.request("ping", str(toy_vault.resolve()))))
        for _ in range(20):  # 8 descriptors are left: connections saying nothing take them
            sock = socket.socket(socket.AF_UNIX, socket.SOCK_STREAM)
            sock.connect(path)
            held.append(sock)
        # the server takes what it can, and meets EMFILE
        wait_until(lambda: any("cannot accept connections" in line for line in lines), 30, "the accepts to fail")
        before, cpu_before = time.monotonic(), _cpu_seconds(server.pid)
        time.sleep(1.5)  # what it spends while it cannot accept, measured over this
        spent = (_cpu_seconds(server.pid) - cpu_before) / (time.monotonic() - before)
        for sock in held:
            sock.close()
        held.clear()
        reply = raw_exchange(path, protocol.encode(protocol.request("ping", str(toy_vault.resolve()))))
        assert b'"ok":true' in reply, reply  # answered again once descriptors are free
        # none failing since: the episode is over (it slept ACCEPT_QUIET and a second for it)
        wait_until(lambda: any("accepting connections on the socket again" in line for line in lines), 30, "the end")
    finally:
        for sock in held:
            sock.close()
        if server.poll() is None:
            server.send_signal(signal.SIGKILL)
        said = log_after_exit()
        for stream in (server.stdin, server.stdout, server.stderr):
            if stream:
                stream.close()
    failing = [line for line in said.splitlines() if "cannot accept connections" in line]
    assert len(failing) == 1, said[-3000:]
    assert "file descriptors" in failing[0] and "ulimit -n" in failing[0], failing[0]
    assert len([line for line in said.splitlines() if "accepting connections on the socket again" in line]) == 1
    assert spent < 0.2, f"the server spent {spent:.0%} of a core while it could not accept"


def test_the_limit_is_said_as_the_server_has_it():
    soft = resource.getrlimit(resource.RLIMIT_NOFILE)[0]
    said = daemon_module._short_of(OSError(24, "Too many open files"))
    assert ("no limit" if soft == resource.RLIM_INFINITY else f"{soft:,}") in said
    assert "ulimit -n" in daemon_module._short_of(OSError(24, "x"))
    assert "system" in daemon_module._short_of(OSError(23, "Too many open files in system"))


def test_a_prompt_hook_request_is_told_apart_without_reading_every_request():
    line = protocol.encode(protocol.request("ask", "/v", query="q", modes=["hybrid"], prompt_hook=True))
    assert protocol.says_prompt_hook(line)
    assert not protocol.says_prompt_hook(line.replace(b"true", b"false"))
    assert not protocol.says_prompt_hook(protocol.encode(protocol.request("ping", "/v", prompt_hook=True)))
    assert not protocol.says_prompt_hook(b'{"prompt_hook": true, \xff')
    with pytest.raises(protocol.ProtocolError, match="prompt_hook: true or false"):
        protocol.check_request(protocol.request("ask", "/v", query="q", modes=["hybrid"], prompt_hook="yes"))


def test_the_prompt_hook_says_it_is_the_prompt_hook(toy_vault, monkeypatch):
    _index(toy_vault)
    with served(toy_vault, watch=False) as daemon:
        seen: list[bool] = []
        says = protocol.says_prompt_hook
        monkeypatch.setattr(protocol, "says_prompt_hook", lambda data: seen.append(says(data)) or seen[-1])
        monkeypatch.setenv("BRAIN_VAULT", str(daemon.root))
        started = time.monotonic()
        row = hook.recall_for_prompt(
            {"prompt": "how should agent memory work"}, started=started, deadline=started + 5
        ).row
        assert "results" in row, row
        assert request(daemon, "ask", query="agent memory", modes=["hybrid+ppr"])["ok"] is True
        assert seen == [True, False]


def test_a_refusal_is_not_closed_for_another_before_it_is_written():
    """Refused once read (``crowded``, ``kept``), a connection was said to wait on its client
    with the time it came, so it was the first closed for a newcomer, before its refusal was
    written: its client read no answer at all (and asked again, taking it for a refusal). It
    gives way once its refusal is written."""
    connections = daemon_module._Connections(limit=2, timeout=10)  # one being answered a process
    pairs = [socket.socketpair() for _ in range(3)]
    try:
        first, refused, newcomer = (server_end for server_end, _ in pairs)
        assert connections.admit(first, 1)
        connections.read(first)
        assert connections.answering(first, 1) is None
        assert connections.admit(refused, 1)
        connections.read(refused)
        assert connections.answering(refused, 1) == "crowded"
        assert not connections.admit(newcomer, 2), "the refusal was closed before it was written"
        connections.wrote(refused)  # its refusal written: it waits on its client, and gives way
        assert connections.admit(newcomer, 2) and connections.closed == 1
    finally:
        for server_end, client_end in pairs:
            server_end.close()
            client_end.close()


def test_another_user_s_refused_connection_gives_its_place_to_a_newcomer(toy_vault, monkeypatch):
    """A request from another user (where the socket's modes are ignored) was refused and then
    read on for ``LINGER_SECONDS`` still said to wait on the server: a client of that user that
    kept its end open held its place for the 2 s, and a burst of them kept the server's own user
    out (``busy``). Its refusal written, it waits on its client and gives way to a newcomer."""
    from brain.server import peers

    monkeypatch.setattr(daemon_module, "MAX_CONNECTIONS", 1)
    monkeypatch.setattr(daemon_module, "PROMPT_PLACES", 0)
    with served(toy_vault, watch=False) as daemon:
        foreign = iter([os.getuid() + 1])  # the next connection is another user's, then the own user's
        uid = peers.unix_peer_uid
        monkeypatch.setattr(peers, "unix_peer_uid", lambda conn: next(foreign, None) or uid(conn))
        other = socket.socket(socket.AF_UNIX, socket.SOCK_STREAM)
        try:
            other.connect(str(daemon.socket_path))
            other.sendall(protocol.encode(protocol.request("ping", str(daemon.root))))  # its end kept open
            other.settimeout(10)
            assert b'"refused"' in other.recv(1 << 16)
            # read on, it waits on its client (as soon as its thread says the refusal is written):
            # before, it waited on the server all through its read-on, and then was gone
            open_ = daemon.connections._open
            wait_until(lambda: any(on_client for on_client, _ in open_.values()), 5, "the refusal given up")
            answer = request(daemon, "ping")
            assert answer["ok"] is True, answer  # before: busy, for the other user's 2 s read-on
            assert daemon.connections.closed == 1
        finally:
            other.close()


def test_a_client_that_reads_none_of_a_large_answer_gives_its_place_up_while_it_does_not(toy_vault, monkeypatch):
    """An answer's write has 10 s (CLIENT_TIMEOUT), and all that while its connection waited on
    the server: a client that asked for a large answer and read none of it held its place for
    the 10 s, every other client `busy`. After ``STALLED_AFTER`` s with no byte taken it waits on
    its client, and a newcomer gets its place (and its answer), the stalled one closed."""
    monkeypatch.setattr(daemon_module, "MAX_CONNECTIONS", 1)
    monkeypatch.setattr(daemon_module, "PROMPT_PLACES", 0)
    monkeypatch.setattr(daemon_module, "STALLED_AFTER", 0.3, raising=False)
    line = "lorem ipsum dolor sit amet, a line of the long note to be read whole. " * 3
    (toy_vault / "Long.md").write_text("# Long\n\n" + "\n".join([line] * 12_000), encoding="utf-8")  # 2.6 MB
    with served(toy_vault, watch=False) as daemon:
        hog = socket.socket(socket.AF_UNIX, socket.SOCK_STREAM)
        hog.setsockopt(socket.SOL_SOCKET, socket.SO_RCVBUF, 4096)
        try:
            hog.connect(str(daemon.socket_path))
            ask = protocol.request("note", str(daemon.root), note="Long", max_chars=10_000_000)
            hog.sendall(protocol.encode(ask))
            hog.shutdown(socket.SHUT_WR)
            hog.settimeout(10)
            assert hog.recv(1) == protocol.TAKEN  # taken: then its answer is written, and not read
            time.sleep(1.0)  # its write stalls (the socket's buffers full), for more than 0.3 s
            started = time.monotonic()
            answer = request(daemon, "ping")
            assert answer["ok"] is True, answer  # before: busy, for the 10 s of the hog's write
            assert time.monotonic() - started < 5
            assert daemon.connections.closed >= 1
        finally:
            hog.close()


def test_an_http_client_that_reads_none_of_a_large_answer_gives_its_place_up_too(toy_vault, monkeypatch):
    """Over HTTP the same client held its place for the write's whole 10 s (``_reply`` wrote
    with the socket's timeout), where on the socket it gives it up after ``STALLED_AFTER`` s."""
    import http.client

    from test_serve_wire import _http

    monkeypatch.setattr(daemon_module, "MAX_CONNECTIONS", 1)
    monkeypatch.setattr(daemon_module, "PROMPT_PLACES", 0)
    monkeypatch.setattr(daemon_module, "STALLED_AFTER", 0.3)
    line = "lorem ipsum dolor sit amet, a line of the long note to be read whole. " * 3
    # 7.8 MB: more than loopback TCP's send buffer takes (4 MB at most, tcp_wmem), where 2.6 MB all went in at once
    (toy_vault / "Long.md").write_text("# Long\n\n" + "\n".join([line] * 36_000), encoding="utf-8")
    with served(toy_vault, watch=False, http=("127.0.0.1", 0)) as daemon:
        port, headers = _http(daemon)
        ask = protocol.encode(protocol.request("note", str(daemon.root), note="Long", max_chars=10_000_000))
        head = "".join(f"{k}: {v}\r\n" for k, v in headers.items())
        hog = socket.socket(socket.AF_INET, socket.SOCK_STREAM)
        hog.setsockopt(socket.SOL_SOCKET, socket.SO_RCVBUF, 4096)
        try:
            hog.connect(("127.0.0.1", port))
            hog.sendall(f"POST /v1 HTTP/1.1\r\n{head}Content-Length: {len(ask)}\r\n\r\n".encode() + ask)
            hog.settimeout(10)
            assert hog.recv(8, socket.MSG_PEEK).startswith(b"HTTP/")  # its answer is being written
            # and its write stalls (the socket's buffers full): after 0.3 s it waits on its
            # client; before, on the server for the write's 10 s
            open_ = daemon.connections._open
            wait_until(lambda: any(on_client for on_client, _ in open_.values()), 5, "the stalled answer given up")
            started = time.monotonic()
            conn = http.client.HTTPConnection("127.0.0.1", port, timeout=10)
            try:
                conn.request(
                    "POST", "/v1", body=protocol.encode(protocol.request("ping", str(daemon.root))), headers=headers
                )
                response = conn.getresponse()
                assert response.status == 200, response.read()
                assert json.loads(response.read())["ok"] is True
            finally:
                conn.close()
            assert time.monotonic() - started < 5
            assert daemon.connections.closed >= 1
        finally:
            hog.close()


def test_an_http_request_whose_body_is_read_is_not_closed_for_another(toy_vault, monkeypatch):
    """Over HTTP a request whose body had arrived still waited on its client until the server
    said it was answering it (after looking up the client's process in /proc), where a socket
    request waits on the server as soon as it is read: a newcomer in that moment closed it, its
    client given no answer. Held in that moment, it now keeps its place and is answered."""
    import http.client

    from test_serve_wire import _http

    monkeypatch.setattr(daemon_module, "MAX_CONNECTIONS", 1)
    monkeypatch.setattr(daemon_module, "PROMPT_PLACES", 0)
    with served(toy_vault, watch=False, http=("127.0.0.1", 0)) as daemon:
        port, headers = _http(daemon)
        looking, go_on = threading.Event(), threading.Event()
        pid = daemon.tcp_peers.pid

        def held(conn):
            looking.set()
            go_on.wait(60)
            return pid(conn)

        monkeypatch.setattr(daemon.tcp_peers, "pid", held)
        replies: list[tuple[int, bytes]] = []

        def ask() -> None:
            conn = http.client.HTTPConnection("127.0.0.1", port, timeout=60)
            try:
                body = protocol.encode(protocol.request("ping", str(daemon.root)))
                conn.request("POST", "/v1", body=body, headers=headers)
                response = conn.getresponse()
                replies.append((response.status, response.read()))
            except OSError as exc:  # closed for the newcomer: no answer
                replies.append((0, repr(exc).encode()))
            finally:
                conn.close()

        asker = threading.Thread(target=ask)
        asker.start()
        try:
            assert looking.wait(60)  # its body read, the server looking up its process
            newcomer = request(daemon, "ping")
            assert newcomer.get("error", {}).get("code") == "busy", newcomer  # before: ok, in its place
        finally:
            go_on.set()
            asker.join(60)
        assert replies and replies[0][0] == 200, replies
        assert json.loads(replies[0][1])["ok"] is True
        assert daemon.connections.closed == 0


def test_a_connection_whose_request_is_read_is_not_closed_for_another():
    """Read, and not yet said to be answered, a connection looked as if it waited on its client:
    on a loaded server the prompt hook's was closed for the next client to come (1 in 20 of
    its asks beside ``--only flood``), its client reading no answer at all."""
    connections = daemon_module._Connections(limit=1, timeout=10)
    pairs = [socket.socketpair() for _ in range(2)]
    try:
        (first, _), (second, _) = pairs
        assert connections.admit(first, 1)
        connections.read(first)
        assert not connections.admit(second, 2)
        assert connections.answering(first, 1) is None
    finally:
        for server_end, client_end in pairs:
            server_end.close()
            client_end.close()


CLOSED = "a client slow to send its request was closed for another"


def _closes_said(messages: list[str]) -> tuple[int, int]:
    """(lines, connections) said closed for another in ``messages``: a line said as it is counts
    one, "N more like it in the last S s: …" counts N."""
    lines = [m for m in messages if m.endswith(CLOSED)]
    return len(lines), sum(1 if m == CLOSED else int(m.split()[0]) for m in lines)


def test_a_flood_of_clients_closed_for_another_is_counted_in_the_log_not_said_one_a_line(
    toy_vault, monkeypatch, caplog
):
    """Each connection closed for another was a line of serve.log: 3,800 a minute beside
    ``bench/serve_fuzz.py --only flood``, and serve.log, moved aside at 5 MB, had lost its
    errors and passes within minutes. Now the first is said at once, and the others as a count
    at most every ``SAY_EVERY`` seconds (said by the accept loop, when the flood is over too)."""
    places, closes = 4, 200
    monkeypatch.setattr(daemon_module, "MAX_CONNECTIONS", places)
    monkeypatch.setattr(daemon_module, "SAY_EVERY", 1.0, raising=False)
    if hasattr(daemon_module, "_Said"):  # counts of other tests' servers left aside
        monkeypatch.setattr(daemon_module, "_SAID", daemon_module._Said())
    clients: list[socket.socket] = []
    with caplog.at_level("INFO", logger="brain"), served(toy_vault) as daemon:
        started = time.monotonic()
        try:
            for n in range(places + closes):  # each beyond the places closes the one waiting longest
                sock = socket.socket(socket.AF_UNIX, socket.SOCK_STREAM)
                clients.append(sock)
                sock.connect(str(daemon.socket_path))
                wait_until(lambda n=n: daemon.connections.closed >= n + 1 - places, what=f"connection {n} admitted")
        finally:
            for sock in clients:
                sock.close()

        def said() -> tuple[int, int]:
            return _closes_said([r.getMessage() for r in caplog.records])

        wait_until(lambda: said()[1] >= closes, 20, f"{closes} closes said")
        elapsed = time.monotonic() - started
    messages = [r.getMessage() for r in caplog.records if r.getMessage().endswith(CLOSED)]
    lines, counted = _closes_said(messages)
    assert counted == closes, messages
    assert messages[0] == CLOSED  # the first, said at once as it was
    assert lines <= 2 + elapsed / 1.0, f"{lines} lines for {closes} closes in {elapsed:.1f} s"


def test_a_kind_of_line_is_said_at_once_after_a_quiet_time_and_else_counted(monkeypatch, caplog):
    monkeypatch.setattr(daemon_module, "SAY_EVERY", 0.3)
    said = daemon_module._Said()
    with caplog.at_level("INFO", logger="brain"):
        for _ in range(3):
            said.say(logging.INFO, "a client left mid-request (%s)", "BrokenPipeError")
        said.say(logging.INFO, "a client left mid-request (%s)", "ConnectionResetError")  # a kind of its own
        said.flush()  # nothing yet: SAY_EVERY is not over
        assert [r.getMessage() for r in caplog.records] == [
            "a client left mid-request (BrokenPipeError)",
            "a client left mid-request (ConnectionResetError)",
        ]
        time.sleep(0.35)  # past SAY_EVERY (0.3): the time is what is tested
        said.flush()
        message = caplog.records[-1].getMessage()
        assert re.fullmatch(r"2 more like it in the last \d s: a client left mid-request \(BrokenPipeError\)", message)
        time.sleep(0.35)  # past SAY_EVERY (0.3): the time is what is tested
        said.say(logging.WARNING, "a client left mid-request (%s)", "BrokenPipeError")  # quiet since: said as it is
    assert len(caplog.records) == 4
    assert (caplog.records[-1].getMessage(), caplog.records[-1].levelname) == (
        "a client left mid-request (BrokenPipeError)",
        "WARNING",
    )


def test_a_flood_of_one_request_that_hits_a_bug_says_its_traceback_once_and_counts_the_rest(
    toy_vault, monkeypatch, caplog
):
    """Each request that hit a bug logged its whole traceback: a client sending one such request
    again and again moved serve.log's errors out past its 5 MB within minutes. Now the first of
    each kind (its type and the lines it was raised through) is whole, the others counted as the
    connection lines are; a bug of another kind has its own traceback."""
    monkeypatch.setattr(daemon_module, "SAY_EVERY", 1.0)
    monkeypatch.setattr(daemon_module, "_SAID", daemon_module._Said())
    requests = 60
    _index(toy_vault)
    with caplog.at_level("INFO", logger="brain"), served(toy_vault, watch=False) as daemon:

        def broken_status() -> dict:
            raise RuntimeError("a bug in status")

        def broken_neighbours(note: str, *, wait: float = 0.0) -> dict:
            raise KeyError("a bug in neighbours")

        monkeypatch.setattr(daemon.service, "status", broken_status)
        monkeypatch.setattr(daemon.service, "neighbours", broken_neighbours)
        for _ in range(requests):
            assert request(daemon, "status")["error"] == {
                "code": "internal",
                "message": "RuntimeError: a bug in status",
            }
        for _ in range(3):
            assert request(daemon, "neighbours", note="AI/Agent memory.md")["error"]["code"] == "internal"
    # the server's stop says the counts left
    errors = [r for r in caplog.records if r.levelname == "ERROR"]
    whole = [r for r in errors if r.exc_info]
    assert [(r.getMessage(), type(r.exc_info[1]).__name__) for r in whole] == [
        ("request status failed", "RuntimeError"),
        ("request neighbours failed", "KeyError"),
    ]
    counted = [r.getMessage() for r in errors if not r.exc_info]
    status_lines = [m for m in counted if "RuntimeError: a bug in status" in m]
    assert sum(int(m.split()[0]) if m[0].isdigit() else 1 for m in status_lines) == requests - 1, counted
    assert len(status_lines) <= 3, counted  # one count a second at most, the test's few seconds
    assert all(re.search(r"at tests/test_serve_places\.py:\d+; its traceback is in the log at ", m) for m in counted)
    assert daemon.service.errors == requests + 3


def test_a_failure_said_whole_once_is_counted_after_and_one_of_another_place_is_said_whole(monkeypatch, caplog):
    monkeypatch.setattr(daemon_module, "SAY_EVERY", 0.3)
    said = daemon_module._Said()

    def fail(where: int) -> None:
        try:
            if where == 1:
                raise ValueError("one")
            raise ValueError("two")
        except ValueError as exc:
            said.failed("a request failed", exc)

    with caplog.at_level("INFO", logger="brain"):
        for _ in range(3):
            fail(1)
        fail(2)  # the same type raised on another line: a bug of its own
        time.sleep(0.35)  # past SAY_EVERY (0.3): the time is what is tested
        said.flush()
        time.sleep(0.35)  # past SAY_EVERY (0.3): the time is what is tested
        fail(1)  # quiet since: said at once, as one line (its traceback was said)
    got = [(r.getMessage(), bool(r.exc_info)) for r in caplog.records]
    assert [w for _, w in got] == [True, True, False, False], got
    assert re.fullmatch(
        r"2 more like it in the last \d s: a request failed: ValueError: one "
        r"\(at tests/test_serve_places\.py:\d+; its traceback is in the log at \d{4}-\d\d-\d\d \d\d:\d\d:\d\d\)",
        got[2][0],
    )
    assert got[3][0].startswith("a request failed: ValueError: one (at tests/test_serve_places.py:")


def test_an_indexing_pass_failing_again_and_again_says_its_traceback_once_counts_the_rest_and_its_end(
    toy_vault, monkeypatch, caplog
):
    """A pass that kept failing (the index folder read-only, a full disk, a vault folder at mode
    000) logged its whole traceback every pass, every few seconds for as long as it lasted, and
    nothing when it worked again; `brain status` said the server was up, nothing of it."""
    from brain import cli as cli_module
    from brain.server import service as service_module

    monkeypatch.setattr(daemon_module, "SAY_EVERY", 60.0)
    monkeypatch.setattr(daemon_module, "_SAID", daemon_module._Said())
    failures = 25
    _index(toy_vault)
    with served(toy_vault, watch=False) as daemon:
        real = service_module.index_vault

        def read_only(*args, **kwargs):
            raise PermissionError(13, "Permission denied", "index.db-wal")

        monkeypatch.setattr(service_module, "index_vault", read_only)
        with caplog.at_level("INFO", logger="brain"):
            for _ in range(failures):
                assert daemon.service._index() is None
            failing = daemon.service.status()["indexing_failing"]
            line = cli_module._server_line(daemon.service.status(), daemon.root)
            monkeypatch.setattr(service_module, "index_vault", real)
            assert daemon.service._index() is not None
            daemon_module._SAID.flush(all_of_them=True)
            after = daemon.service.status()["indexing_failing"]
    said = [r for r in caplog.records if r.name == "brain" and r.levelno >= logging.WARNING]
    whole = [r for r in said if r.exc_info]
    assert [(r.getMessage(), type(r.exc_info[1]).__name__) for r in whole] == [
        (f"indexing {daemon.root} failed", "PermissionError")
    ]
    counted = [r.getMessage() for r in said if not r.exc_info and "more like it" in r.getMessage()]
    assert len(counted) == 1 and counted[0].startswith(f"{failures - 1} more like it in the last "), counted
    assert "PermissionError: [Errno 13] Permission denied: 'index.db-wal'" in counted[0]
    again = [r.getMessage() for r in said if "works again" in r.getMessage()]
    assert len(again) == 1 and again[0].startswith(
        f"indexing {daemon.root} works again after {failures} failures since "
    )
    assert len(said) == 3, [r.getMessage() for r in said]
    assert failing["failures"] == failures and failing["why"].startswith("PermissionError: [Errno 13]")
    since = recorded_local(failing["since"], say_zone=True, seconds=True)  # local, as the ledger: line
    assert f"indexing FAILING since {since} ({failures} passes in a row" in line, line
    assert after is None


def test_a_pass_or_idle_check_that_raises_again_and_again_is_said_whole_once_and_its_end_said(monkeypatch, caplog):
    from brain.server.watcher import Batch, VaultWatcher

    said: list[tuple[str, str]] = []
    fail = {"batch": True, "idle": True}

    def on_batch(batch: Batch) -> None:
        if fail["batch"]:
            raise OSError(28, "No space left on device")

    def on_idle() -> None:
        if fail["idle"]:
            raise PermissionError(13, "Permission denied")

    watcher = VaultWatcher(
        Path("/nonexistent-vault"),
        on_batch,
        on_idle=on_idle,
        watch=False,
        on_failure=lambda what, exc: said.append((what, type(exc).__name__)),
    )
    with caplog.at_level("INFO", logger="brain"):
        for _ in range(7):
            watcher._pass(Batch("rescan"))
            watcher._idle()
        assert watcher.pass_failing.failures == watcher.idle_failing.failures == 7
        fail.update(batch=False, idle=False)
        watcher._pass(Batch("rescan"))
        watcher._idle()
        watcher._idle()
    # each failure goes to the daemon's counting (its first traceback whole), none to the log itself
    assert said == [("an index pass failed", "OSError"), ("the idle check failed", "PermissionError")] * 7
    lines = [r.getMessage() for r in caplog.records if r.name == "brain"]
    assert [line.split(" since ")[0] for line in lines] == [
        "an index pass works again after 7 failures",
        "the idle check works again after 7 failures",
    ], lines
    assert watcher.pass_failing.failures == watcher.idle_failing.failures == 0


def test_an_idle_check_failing_again_and_again_is_in_status(toy_vault, monkeypatch):
    """The idle check (what picks up another process's `brain index`) failing every time was
    counted (``idle_failing``) and said in the log, but `brain status` said the server was up
    and well: ``indexing_failing`` says it, and so does the status line, once no pass fails."""
    from brain import cli as cli_module

    _index(toy_vault)
    with served(toy_vault, watch=False) as daemon:
        watcher = daemon.service.watcher

        def unreadable() -> None:
            raise PermissionError(13, "Permission denied", "index.db")

        monkeypatch.setattr(watcher, "on_idle", unreadable)
        for _ in range(5):
            watcher._idle()
        failing = daemon.service.status()["indexing_failing"]
        line = cli_module._server_line(daemon.service.status(), daemon.root)
        monkeypatch.setattr(watcher, "on_idle", lambda: None)
        watcher._idle()
        after = daemon.service.status()["indexing_failing"]
    assert failing is not None and failing["what"] == "idle check" and failing["failures"] >= 5, failing
    assert failing["why"].startswith("PermissionError: [Errno 13]"), failing
    since = recorded_local(failing["since"], say_zone=True, seconds=True)
    assert f"idle check FAILING since {since} (" in line and "times in a row" in line, line
    assert "indexing FAILING" not in line, line
    assert after is None


def test_a_vault_path_that_leads_elsewhere_is_one_line_then_counted(toy_vault, monkeypatch, caplog):
    """While the vault's path leads to another folder (until the server's wait sees it and
    stops), each pass refused was its own line "…; not indexing it here"; now counted as the
    connection lines are."""
    monkeypatch.setattr(daemon_module, "SAY_EVERY", 60.0)
    monkeypatch.setattr(daemon_module, "_SAID", daemon_module._Said())
    _index(toy_vault)
    with served(toy_vault, watch=False) as daemon:
        elsewhere = f"the vault {daemon.root} now leads to /elsewhere"
        monkeypatch.setattr(daemon.service, "led_elsewhere", lambda: elsewhere)
        with caplog.at_level("INFO", logger="brain"):
            for _ in range(10):
                assert daemon.service._index() is None
            daemon_module._SAID.flush(all_of_them=True)
    lines = [r.getMessage() for r in caplog.records if r.levelno >= logging.ERROR]
    assert len(lines) == 2 and lines[0] == f"{elsewhere}; not indexing it here", lines
    assert re.fullmatch(rf"9 more like it in the last \d+ s: {re.escape(elsewhere)}; not indexing it here", lines[1])


def test_an_indexing_pass_refused_the_same_way_again_and_again_is_one_line_then_counted(toy_vault, monkeypatch, caplog):
    """A pass refused with a reason (BrainError: a full disk, said as `brain index` says it) was
    one line every pass; now counted as the connection lines are."""
    from brain.errors import BrainError
    from brain.server import service as service_module

    monkeypatch.setattr(daemon_module, "SAY_EVERY", 60.0)
    monkeypatch.setattr(daemon_module, "_SAID", daemon_module._Said())
    _index(toy_vault)
    with served(toy_vault, watch=False) as daemon:
        full = "the disk holding ~/.brain is full: free some space, then run `brain index`"

        def disk_full(*args, **kwargs):
            raise BrainError(full)

        monkeypatch.setattr(service_module, "index_vault", disk_full)
        with caplog.at_level("INFO", logger="brain"):
            for _ in range(10):
                assert daemon.service._index() is None
            daemon_module._SAID.flush(all_of_them=True)
        assert daemon.service.status()["indexing_failing"]["why"] == full
    lines = [r.getMessage() for r in caplog.records if r.levelno >= logging.ERROR]
    assert len(lines) == 2 and lines[0] == f"indexing {daemon.root} failed: {full}", lines
    assert re.fullmatch(
        rf"9 more like it in the last \d+ s: indexing {re.escape(str(daemon.root))} failed: .*", lines[1]
    )


def test_lines_said_long_ago_are_not_kept_for_as_long_as_the_server_runs(monkeypatch, caplog):
    """Each kind of line was kept in ``_Said`` for good, and a line's kind is its text unless it
    is given one: an index pass failing each time on a path or count of its own (``on_said``)
    added one for every pass, for as long as the server ran. A kind with nothing counted whose
    time is over says the same as one never seen (at once), and is let go."""
    monkeypatch.setattr(daemon_module, "SAY_EVERY", 0.3)
    said = daemon_module._Said()
    with caplog.at_level("INFO", logger="brain"):
        said.say(logging.ERROR, "indexing /vault failed: cannot read Note 0.md")
        said.say(logging.ERROR, "indexing /vault failed: cannot read Note 0.md")  # within its time: counted
        for i in range(1, 500):
            said.say(logging.ERROR, f"indexing /vault failed: cannot read Note {i}.md")
        time.sleep(0.35)  # past SAY_EVERY (0.3): the time is what is tested
        said.flush()  # the count said, and kept for its time
        time.sleep(0.35)  # past SAY_EVERY (0.3): the time is what is tested
        said.flush()
        assert len(said._kinds) == 0, len(said._kinds)
        said.say(logging.ERROR, "indexing /vault failed: cannot read Note 0.md")  # said at once, as before
    messages = [r.getMessage() for r in caplog.records]
    assert len(messages) == 502, messages[-3:]
    assert re.fullmatch(
        r"1 more like it in the last \d s: indexing /vault failed: cannot read Note 0\.md", messages[-2]
    )
    assert messages[-1] == "indexing /vault failed: cannot read Note 0.md"


def test_an_http_request_refused_crowded_gives_its_place_to_a_newcomer_once_written(toy_vault, monkeypatch):
    """Over HTTP a request refused ``crowded`` (its process has ``per_client`` being answered)
    was read on for ``LINGER_SECONDS`` still said to wait on the server: its refusal was never
    said written (``wrote``), as the socket's is, so a client that kept its end open held its
    place, and the next client was told busy."""
    from test_serve_wire import _http

    monkeypatch.setattr(daemon_module, "MAX_CONNECTIONS", 2)  # one being answered a process
    monkeypatch.setattr(daemon_module, "PROMPT_PLACES", 0)
    with served(toy_vault, watch=False, http=("127.0.0.1", 0)) as daemon:
        port, headers = _http(daemon)
        monkeypatch.setattr(daemon.tcp_peers, "pid", lambda conn: 4242)  # every HTTP request one process's
        answer, begun, go_on = daemon.answer, threading.Event(), threading.Event()

        def held_once(body):
            if not begun.is_set():
                begun.set()
                go_on.wait(60)
            return answer(body)

        monkeypatch.setattr(daemon, "answer", held_once)
        ping = protocol.encode(protocol.request("ping", str(daemon.root)))
        head = "".join(f"{k}: {v}\r\n" for k, v in headers.items())
        post = f"POST /v1 HTTP/1.1\r\n{head}Content-Length: {len(ping)}\r\n\r\n".encode() + ping
        first, refused = (socket.create_connection(("127.0.0.1", port), timeout=30) for _ in range(2))
        try:
            first.sendall(post)
            assert begun.wait(30)  # being answered, held
            refused.sendall(post)  # its end kept open
            assert refused.recv(1 << 16).startswith(b"HTTP/1.0 503"), "not refused crowded"
            open_ = daemon.connections._open
            wait_until(lambda: any(on_client for on_client, _ in open_.values()), 5, "the written refusal given up")
            newcomer = request(daemon, "ping")
            assert newcomer["ok"] is True, newcomer  # before: busy, for the refused one's read-on
            assert daemon.connections.closed == 1
        finally:
            go_on.set()
            answered = first.recv(1 << 16)
            first.close()
            refused.close()
        assert answered.startswith(b"HTTP/1.0 200"), answered
