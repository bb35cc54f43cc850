"""What a client sends and what it reads back: a refusal is read by the client it refuses.

A server that answers before it has read the request, and closes with bytes of it unread, has
the client still writing get a broken pipe (or a reset) instead of the answer: the answer is
written, and lost. ``tests/test_serve_hostile.py`` has the request over the limit; here are the
other refusals, on the socket and over HTTP.
"""

from __future__ import annotations

import contextlib
import json
import socket
import threading
from collections.abc import Iterator

import pytest
from serve_helpers import raw_exchange, request, served, wait_until
from test_serve import _index

from brain.server import client, protocol
from brain.server import daemon as daemon_module
from brain.server.daemon import Daemon

PLACES = 8


@contextlib.contextmanager
def every_place_taken(toy_vault, monkeypatch) -> Iterator[Daemon]:
    """A served vault whose ``PLACES`` places are all taken by questions being answered (each
    connection a client of its own, each held until the end): the next connection is ``busy``."""
    monkeypatch.setattr(daemon_module, "MAX_CONNECTIONS", PLACES)
    monkeypatch.setattr(daemon_module, "_peer", lambda conn: conn)
    release = threading.Event()
    answer = Daemon.answer

    def held(self, data):
        if b'"held"' in data:
            release.wait(30)
        return answer(self, data)

    monkeypatch.setattr(Daemon, "answer", held)
    _index(toy_vault)
    with served(toy_vault, watch=False, http=("127.0.0.1", 0)) as daemon:
        line = protocol.encode(protocol.request("ping", str(daemon.root), tag="held"))
        askers = [threading.Thread(target=raw_exchange, args=(daemon.socket_path, line)) for _ in range(PLACES)]
        for asker in askers:
            asker.start()
        try:
            wait_until(
                lambda: (
                    len(daemon.connections._open) == PLACES
                    and not any(on_client for on_client, _ in daemon.connections._open.values())
                ),
                10,
                "every place taken",
            )
            yield daemon
        finally:
            release.set()
            for asker in askers:
                asker.join(30)


@pytest.mark.parametrize("size", [100, 600_000])
def test_a_busy_server_s_refusal_reaches_a_client_still_sending(toy_vault, monkeypatch, size):
    """Every place taken, the server wrote "busy" before reading the request and closed: a client
    still writing its request got a broken pipe, and one done writing a reset, not the reply."""
    with every_place_taken(toy_vault, monkeypatch) as daemon:
        line = protocol.encode(protocol.request("ping", str(daemon.root), pad="x" * size))
        for _ in range(3):
            reply = json.loads(raw_exchange(daemon.socket_path, line))
            assert reply["error"] == {"code": "busy", "message": f"{PLACES} requests are being answered at once"}


def test_brain_s_client_says_the_server_was_busy(toy_vault, monkeypatch):
    with every_place_taken(toy_vault, monkeypatch) as daemon:
        with pytest.raises(client.NoServer) as caught:
            client.call(daemon.root, "ping", timeout=5, pad="x" * 600_000)
        assert str(caught.value) == (
            f"brain serve for {daemon.root}: busy: {PLACES} requests are being answered at once"
        )


def _handling() -> int:
    """The server's threads answering a connection (socketserver's, one a connection)."""
    return sum("process_request_thread" in thread.name for thread in threading.enumerate())


def _busy_line(sock: socket.socket) -> bytes:
    data = b""
    while not data.endswith(b"}\n"):
        chunk = sock.recv(1 << 16)
        assert chunk, data
        data += chunk
    assert b'"busy"' in data, data
    return data


@pytest.mark.parametrize("path", ["socket", "http"])
def test_connections_refused_busy_are_read_on_no_more_than_the_places(toy_vault, monkeypatch, path):
    """Every place being answered, each connection coming in was refused ``busy`` and read on
    (up to 2 s, here 30), in a thread and a descriptor of its own and no place: a flood of
    connections that send nothing held as many as came (thousands), where they were closed at
    once before the read-on. No more than the places are read on so; beyond, closed at once."""
    linger = daemon_module._linger
    monkeypatch.setattr(daemon_module, "_linger", lambda conn, seconds=30.0: linger(conn, 30.0))
    with every_place_taken(toy_vault, monkeypatch) as daemon:
        port, _ = _http(daemon)

        def connect() -> socket.socket:
            if path == "http":
                return socket.create_connection(("127.0.0.1", port), timeout=10)
            sock = socket.socket(socket.AF_UNIX, socket.SOCK_STREAM)
            sock.settimeout(10)
            sock.connect(str(daemon.socket_path))
            return sock

        assert _handling() == PLACES  # the questions being answered
        flood = [connect() for _ in range(3 * PLACES)]  # send nothing, and keep their end open
        try:
            for sock in flood:
                _busy_line(sock)
            wait_until(lambda: _handling() == 2 * PLACES, 10, f"{PLACES} refused connections read on, the rest closed")
            assert (daemon.connections.refused_reading, daemon.connections.refused_closed) == (PLACES, 2 * PLACES)
            for sock in flood:
                sock.close()
            flood.clear()
            wait_until(
                lambda: _handling() == PLACES, 60, "the refused connections' threads ended as their clients left"
            )
            assert daemon.connections.refused_reading == 0
            flood.append(connect())  # a place to read on is free again
            _busy_line(flood[0])
            wait_until(lambda: daemon.connections.refused_reading == 1, 60, "the next refused connection read on")
            assert daemon.connections.refused_closed == 2 * PLACES
        finally:
            for sock in flood:
                sock.close()


def _body(size: int) -> bytes:
    return b'{"v": 1, "op": "ping", "pad": "' + b"x" * size + b'"}'


BODY = _body(400_000)


def _http(daemon: Daemon) -> tuple[int, dict[str, str]]:
    """The HTTP port, and the headers of a request the server takes."""
    url = daemon.http_url()
    assert url is not None
    port = int(url.split(":")[2].split("/")[0])
    token = _token(daemon)
    return port, {"Host": f"127.0.0.1:{port}", "Authorization": f"Bearer {token}", "Content-Type": "application/json"}


def _token(daemon: Daemon) -> str:
    from brain.server import runtime

    return runtime.read_record(daemon.root)["token"]


# (what is wrong with the request, method, path, headers changed (None: left out), status)
REFUSALS = [
    ("another path", "POST", "/v2", {}, 404),
    ("another Host", "POST", "/v1", {"Host": "evil.example:80"}, 403),
    ("no token", "POST", "/v1", {"Authorization": None}, 401),
    ("a wrong token", "POST", "/v1", {"Authorization": "Bearer wrong"}, 401),
    ("another Content-Type", "POST", "/v1", {"Content-Type": "text/plain"}, 415),
    ("GET", "GET", "/v1", {}, 405),
    ("PUT", "PUT", "/v1", {}, 405),
]


@pytest.mark.parametrize("size", [400_000, 4_000_000])
@pytest.mark.parametrize(("what", "method", "path", "changed", "status"), REFUSALS, ids=[r[0] for r in REFUSALS])
def test_an_http_refusal_before_the_body_reaches_a_client_sending_a_large_one(
    toy_vault, what, method, path, changed, status, size
):
    """The server answered these before reading the body and closed: a client still sending its
    body got a broken pipe or a reset instead of the status (one whose body the socket's buffers
    took whole, a few hundred KB on loopback, read it: the raw client below half-closes and did
    not)."""
    import http.client

    _index(toy_vault)
    with served(toy_vault, watch=False, http=("127.0.0.1", 0)) as daemon:
        port, headers = _http(daemon)
        headers = {k: v for k, v in {**headers, **changed}.items() if v is not None}
        for _ in range(3):
            conn = http.client.HTTPConnection("127.0.0.1", port, timeout=10)
            try:
                conn.request(method, path, body=_body(size), headers=headers)
                response = conn.getresponse()
                assert response.status == status
                body = response.read()
            finally:
                conn.close()
            assert json.loads(body)["error"]["code"] == "bad_request"
        assert request(daemon, "ping")["ok"] is True


def _raw_http(port: int, head: bytes, body: bytes) -> bytes:
    """Send ``head`` and ``body`` on a TCP socket, as fast as taken; all the server answers."""
    with socket.create_connection(("127.0.0.1", port), timeout=10) as sock:
        sock.sendall(head + body)
        sock.shutdown(socket.SHUT_WR)
        chunks = []
        while chunk := sock.recv(1 << 16):
            chunks.append(chunk)
        return b"".join(chunks)


def test_an_http_refusal_before_the_body_reaches_a_raw_client(toy_vault):
    """411 (a chunked body, no Content-Length) and 401 on a socket sending its whole body at once."""
    _index(toy_vault)
    with served(toy_vault, watch=False, http=("127.0.0.1", 0)) as daemon:
        port, headers = _http(daemon)
        lines = "".join(f"{k}: {v}\r\n" for k, v in headers.items())
        chunked = f"POST /v1 HTTP/1.1\r\n{lines}Transfer-Encoding: chunked\r\n\r\n".encode()
        body = f"{len(BODY):x}\r\n".encode() + BODY + b"\r\n0\r\n\r\n"
        for _ in range(3):
            assert _raw_http(port, chunked, body).startswith(b"HTTP/1.0 411 ")
        no_token = "".join(f"{k}: {v}\r\n" for k, v in headers.items() if k != "Authorization")
        head = f"POST /v1 HTTP/1.1\r\n{no_token}Content-Length: {len(BODY)}\r\n\r\n".encode()
        for _ in range(3):
            assert _raw_http(port, head, BODY).startswith(b"HTTP/1.0 401 ")


def test_a_busy_server_s_503_reaches_an_http_client_sending_a_large_body(toy_vault, monkeypatch):
    import http.client

    with every_place_taken(toy_vault, monkeypatch) as daemon:
        port, headers = _http(daemon)
        for _ in range(3):
            conn = http.client.HTTPConnection("127.0.0.1", port, timeout=10)
            try:
                conn.request("POST", "/v1", body=BODY, headers=headers)
                response = conn.getresponse()
                assert response.status == 503
                assert json.loads(response.read())["error"]["code"] == "busy"
            finally:
                conn.close()


@pytest.mark.parametrize("size", [100, 600_000])
def test_brain_s_client_reads_an_answer_given_before_its_request_was_read(toy_vault, size):
    """A server that answers before it reads (one started before it read them through) and
    closes: brain's client, still writing, raised its broken pipe (or the reset that came after
    the answer) and never read the answer, so `brain ask` said the server "did not answer"."""
    from serve_helpers import server_socket

    with server_socket(toy_vault) as listener:

        def answer_unread() -> None:
            conn, _ = listener.accept()
            with conn:
                conn.sendall(protocol.encode(protocol.error("busy", "64 requests are being answered at once")))

        answering = threading.Thread(target=answer_unread)
        answering.start()
        try:
            with pytest.raises(client.NoServer) as caught:
                client.call(toy_vault.resolve(), "ping", timeout=5, pad="x" * size)
        finally:
            answering.join(10)
        assert (
            str(caught.value) == f"brain serve for {toy_vault.resolve()}: busy: 64 requests are being answered at once"
        )


def test_bytes_after_the_request_line_do_not_cost_the_client_its_answer(toy_vault):
    """The server read up to the line's end, answered and closed with the rest unread: a client
    sending more after it (a second line, a tail of its own) got a broken pipe or a reset."""
    _index(toy_vault)
    with served(toy_vault, watch=False) as daemon:
        line = protocol.encode(protocol.request("ping", str(daemon.root)))
        for _ in range(3):
            reply = json.loads(raw_exchange(daemon.socket_path, line + b"x" * 600_000))
            assert reply["ok"] is True


def test_a_body_over_the_limit_that_waits_for_100_continue_is_refused_at_once(toy_vault):
    """curl sends a body over 1 MiB only once told to (``Expect: 100-continue``), or after 1 s
    without word: the server waited for that body to read it through before its 413, so curl
    took a second more for every such refusal, and a client that waits for good waited the
    server's whole 10 s (this one gives up after 5)."""
    _index(toy_vault)
    with served(toy_vault, watch=False, http=("127.0.0.1", 0)) as daemon:
        port, headers = _http(daemon)
        lines = "".join(f"{k}: {v}\r\n" for k, v in headers.items())
        head = f"POST /v1 HTTP/1.1\r\n{lines}Content-Length: {4 << 20}\r\nExpect: 100-continue\r\n\r\n".encode()
        with socket.create_connection(("127.0.0.1", port), timeout=5) as sock:
            sock.sendall(head)  # and waits to be told to send the body
            answer = sock.recv(1 << 16)
        assert answer.startswith(b"HTTP/1.0 413 "), answer
        assert request(daemon, "ping")["ok"] is True
