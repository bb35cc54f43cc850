"""`brain serve --http` before a hostile client: every error a client can cause gets its status
and one JSON line, at once (or, for a request that never ends, within the timeout), and the
server answers the next client. ``test_serve_hostile.py`` has the floods and slow bodies."""

from __future__ import annotations

import contextlib
import json
import re
import shutil
import socket
import threading
import time

import pytest
from conftest import TOY_VAULT
from serve_helpers import request, served
from test_serve import _index

from brain.server import daemon as daemon_module
from brain.server import protocol, runtime

# A hang's guard, not a figure: the server under test waits far longer (``slow_server``) for
# what a client has not sent, so an answer is "at once" when it comes before this.
CLIENT_WAIT = 30.0


@pytest.fixture
def slow_server(monkeypatch):
    """A server that gives a client 600 s to send its request: one that answers before the
    client's own CLIENT_WAIT did not wait on the client for what it never sent."""
    monkeypatch.setattr(daemon_module._HttpHandler, "timeout", 600.0)
    monkeypatch.setattr(daemon_module, "CLIENT_TIMEOUT", 600.0)


@pytest.fixture(scope="module")
def _shared(tmp_path_factory):
    """One indexed toy vault and one server on it, with the server's own timeouts, for the
    module's tests that only send it requests (none edits the vault or sets a timeout): an index
    and a server a test took ~0.3 s of CPU and ~2 s on a loaded machine, for 31 tests. Its
    environment is what ``brain_home`` gives each test."""
    base = tmp_path_factory.mktemp("served_http")
    vault = base / "vault"
    shutil.copytree(TOY_VAULT, vault, symlinks=True)
    with pytest.MonkeyPatch.context() as patch:
        patch.setenv("BRAIN_HOME", str(base / "home"))
        patch.delenv("BRAIN_DB", raising=False)
        patch.setenv("BRAIN_EMBED_MODEL", "fake:64")
        patch.setenv("BRAIN_RERANK_MODEL", "none")
        _index(vault)
        with served(vault, watch=False, http=("127.0.0.1", 0)) as daemon:
            yield base / "home", daemon


@pytest.fixture
def daemon(_shared, monkeypatch):
    """The module's server (``_shared``), with its brain home this test's: where the server's
    record (its token) is read."""
    home, daemon = _shared
    monkeypatch.setenv("BRAIN_HOME", str(home))
    return daemon


def _port(daemon) -> int:
    url = daemon.http_url()
    assert url is not None
    return int(url.split(":")[2].split("/")[0])


def _head(daemon, body: bytes, *, method: str = "POST", extra: str = "", length: str | None = None) -> bytes:
    token = runtime.read_record(daemon.root)["token"]
    length = str(len(body)) if length is None else length
    return (
        f"{method} /v1 HTTP/1.1\r\nHost: 127.0.0.1:{_port(daemon)}\r\nAuthorization: Bearer {token}\r\n"
        f"Content-Type: application/json\r\nContent-Length: {length}\r\n{extra}\r\n"
    ).encode() + body


def _exchange(daemon, data: bytes) -> tuple[int, dict[str, str], bytes]:
    """Send ``data`` and keep the connection open (as a client waiting for its answer does);
    the status, headers and body the server answers with."""
    with socket.create_connection(("127.0.0.1", _port(daemon)), timeout=CLIENT_WAIT) as sock:
        sock.sendall(data)
        answer = sock.makefile("rb").read()
    head, _, body = answer.partition(b"\r\n\r\n")
    lines = head.decode("latin-1").split("\r\n")
    assert lines[0].startswith("HTTP/1."), answer  # a status line, always
    headers = dict(line.split(": ", 1) for line in lines[1:])
    return int(lines[0].split()[1]), headers, body


def _one_error_line(body: bytes) -> dict[str, str]:
    assert body.endswith(b"\n") and body.count(b"\n") == 1, body
    reply = json.loads(body)
    assert reply["ok"] is False and set(reply["error"]) == {"code", "message"}, reply
    return reply["error"]


def _ask(root: str, **fields) -> bytes:
    return json.dumps(
        {"v": 1, "op": "ask", "vault": root, "query": "agent memory", "modes": ["vector"], **fields}
    ).encode()


@pytest.mark.parametrize(
    "name",
    ["not json", "not utf-8", "a list", "huge k", "negative k", "k a string", "unknown setting", "bad as_of", "9999"],
)
def test_a_bad_request_over_http_is_a_400_not_a_200(daemon, name):
    """A bad_request was answered 200 OK: a client that reads the status (curl -f, fetch's
    response.ok) took it for an answer."""
    root = str(daemon.root)
    body = {
        "not json": b'{"v": 1, "op": "ping", "vault": ',
        "not utf-8": b'{"v": 1, "op": "ping", "vault": "/\xff"}',
        "a list": b"[1, 2]",
        "huge k": _ask(root, settings={"k": 10**30}),
        "negative k": _ask(root, settings={"k": -1}),
        "k a string": _ask(root, settings={"k": "5"}),
        "unknown setting": _ask(root, settings={"kk": 5}),
        "bad as_of": _ask(root, as_of="0000-01-01"),
        "9999": _ask(root, as_of="9999-12-31"),
    }[name]
    status, headers, answer = _exchange(daemon, _head(daemon, body))
    assert status == 400 and headers["Content-Type"].startswith("application/json"), answer
    assert _one_error_line(answer)["code"] == "bad_request"
    assert request(daemon, "ping")["ok"] is True
    assert daemon.service.errors == 0


def test_each_error_code_over_http_has_its_status(daemon):
    root = str(daemon.root)
    for body, status, code in [
        (json.dumps({"v": 1, "op": "ping", "vault": "/elsewhere"}).encode(), 421, "wrong_vault"),
        (json.dumps({"v": 1, "op": "note", "vault": root, "note": "No Such Note"}).encode(), 404, "not_found"),
        (json.dumps({"v": 1, "op": "note", "vault": root, "note": "../../etc/passwd"}).encode(), 403, "refused"),
        (json.dumps({"v": 1, "op": "ping", "vault": root}).encode(), 200, None),
    ]:
        got, _, answer = _exchange(daemon, _head(daemon, body))
        assert got == status, answer
        if code is not None:
            assert _one_error_line(answer)["code"] == code


@pytest.mark.parametrize(
    "name",
    ["garbage", "no version", "GET with no version", "blank line", "HTTP/2", "a version of letters"],
)
def test_a_malformed_request_line_is_a_json_400_at_once(toy_vault, slow_server, name):
    """The standard library answered an HTML page, and a line naming no HTTP version (HTTP/0.9's
    "GET /v1") no status line at all; it read headers after such a line, and waited on its
    client for them (10 s) before closing without a word."""
    _index(toy_vault)
    with served(toy_vault, watch=False, http=("127.0.0.1", 0)) as daemon:
        line = {
            "garbage": b"\x00\xff GARBAGE \x1b[2J\r\n",
            "no version": b"POST /v1\r\n",
            "GET with no version": b"GET /v1\r\n",
            "blank line": b"\r\n",
            "HTTP/2": b"POST /v1 HTTP/2.0\r\n",
            "a version of letters": b"POST /v1 HTTP/x.y\r\n",
        }[name]
        status, headers, answer = _exchange(daemon, line)
        assert status in (400, 505) and headers["Content-Type"].startswith("application/json"), answer
        assert _one_error_line(answer)["code"] == "bad_request"
        assert request(daemon, "ping")["ok"] is True


@pytest.mark.parametrize("method", ["PUT", "DELETE", "PATCH", "OPTIONS", "TRACE", "BREW", "HEAD", "GET"])
def test_a_method_other_than_post_is_a_json_405_naming_post(daemon, method):
    """Every method but POST and GET was a 501 with an HTML page."""
    ping = protocol.encode(protocol.request("ping", str(daemon.root)))
    status, headers, answer = _exchange(daemon, _head(daemon, ping, method=method))
    assert status == 405 and headers["Allow"] == "POST", answer
    assert headers["Content-Type"].startswith("application/json")
    if method == "HEAD":  # its answer is the head alone
        assert answer == b"" and int(headers["Content-Length"]) > 0
    else:
        assert _one_error_line(answer)["message"] == "POST /v1 with a JSON request"


@pytest.mark.parametrize("how", ["a header line of 70,000 bytes", "150 header lines", "a request line of 70,000 bytes"])
def test_headers_too_large_are_a_json_refusal(daemon, how):
    ping = protocol.encode(protocol.request("ping", str(daemon.root)))
    data = {
        "a header line of 70,000 bytes": _head(daemon, ping, extra=f"X-Long: {'a' * 70_000}\r\n"),
        "150 header lines": _head(daemon, ping, extra="".join(f"X-{n}: {n}\r\n" for n in range(150))),
        "a request line of 70,000 bytes": b"POST /v1" + b"a" * 70_000 + b" HTTP/1.1\r\n\r\n",
    }[how]
    status, _, answer = _exchange(daemon, data)
    assert status in (414, 431), answer
    assert _one_error_line(answer)["code"] == "bad_request"
    assert request(daemon, "ping")["ok"] is True


def test_a_request_head_of_many_long_lines_is_refused_once_past_its_bound(daemon):
    """90 header lines of 65,000 bytes each were within the standard library's bounds (a line's
    64 KiB, 100 lines): 6.4 MB read and kept before the token was looked at, 380 MB for 60 such
    connections of any local user. The head has MAX_HEAD_BYTES in all."""
    ping = protocol.encode(protocol.request("ping", str(daemon.root)))
    status, _, answer = _exchange(daemon, _head(daemon, ping, extra=f"X-Long: {'a' * 65_000}\r\n" * 90))
    assert status == 431, answer
    assert _one_error_line(answer)["message"] == (
        f"a request line and headers over {daemon_module.MAX_HEAD_BYTES:,} bytes"
    )
    # a head just under the bound is read: a long token is a 401, as any wrong one
    status, _, answer = _exchange(
        daemon, _head(daemon, ping, extra=f"X-Long: {'a' * 60_000}\r\n").replace(b"Bearer ", b"Bearer x")
    )
    assert status == 401, answer
    assert request(daemon, "ping")["ok"] is True


@pytest.mark.parametrize("length", ["-5", "+5", "5_0", "5, 5", "0x10", "", "1e3"])
def test_a_content_length_that_is_not_one_number_is_refused(daemon, length):
    """int() read "+5", "5_0" and other scripts' digits as a length; -5 was refused as "over
    1048576 bytes"."""
    ping = protocol.encode(protocol.request("ping", str(daemon.root)))
    status, _, answer = _exchange(daemon, _head(daemon, ping, length=length))
    assert status in (400, 411), answer
    error = _one_error_line(answer)
    assert "over" not in error["message"], error
    assert request(daemon, "ping")["ok"] is True


def test_two_content_lengths_that_differ_are_refused(daemon):
    ping = protocol.encode(protocol.request("ping", str(daemon.root)))
    status, _, answer = _exchange(daemon, _head(daemon, ping, extra="Content-Length: 3\r\n"))
    assert status == 400, answer


@pytest.mark.parametrize("with_length", [False, True])
def test_a_chunked_body_is_refused_not_read_as_the_request(toy_vault, slow_server, with_length):
    """With a Content-Length too, the chunks' sizes were read as the JSON (a 200 "bad_request")."""
    _index(toy_vault)
    with served(toy_vault, watch=False, http=("127.0.0.1", 0)) as daemon:
        ping = protocol.encode(protocol.request("ping", str(daemon.root)))
        chunked = f"{len(ping):x}\r\n".encode() + ping + b"\r\n0\r\n\r\n"
        extra = "Transfer-Encoding: chunked\r\n"
        data = _head(daemon, chunked, extra=extra)
        if not with_length:
            data = data.replace(f"Content-Length: {len(chunked)}\r\n".encode(), b"")
        status, _, answer = _exchange(daemon, data)
        assert status == 411, answer
        assert _one_error_line(answer)["message"] == "a body with its Content-Length, not chunked"
        assert request(daemon, "ping")["ok"] is True


@pytest.mark.parametrize("sent", ["half a request line", "half the headers"])
def test_half_a_request_head_is_told_408_not_closed_without_a_word(toy_vault, monkeypatch, sent):
    monkeypatch.setattr(daemon_module._HttpHandler, "timeout", 1.0)
    _index(toy_vault)
    with served(toy_vault, watch=False, http=("127.0.0.1", 0)) as daemon:
        data = {"half a request line": b"POST /v1 HT", "half the headers": _head(daemon, b"")[:40]}[sent]
        status, _, answer = _exchange(daemon, data)
        assert status == 408, answer
        assert _one_error_line(answer)["message"] == "no whole request line and headers within 1 s"
        assert request(daemon, "ping")["ok"] is True


def test_headers_trickled_a_byte_at_a_time_have_the_timeout_in_all_not_a_read(toy_vault, monkeypatch):
    """Each read had its own timeout: a client sending a byte of its headers within each held its
    connection for as long as it liked, while no other client came to close it."""
    monkeypatch.setattr(daemon_module._HttpHandler, "timeout", 1.0)
    _index(toy_vault)
    with served(toy_vault, watch=False, http=("127.0.0.1", 0)) as daemon:
        head = _head(daemon, b"", extra=f"X-Slow: {'a' * 400}\r\n")
        answer = bytearray()
        sent = 0
        with socket.create_connection(("127.0.0.1", _port(daemon)), timeout=CLIENT_WAIT) as sock:

            def read() -> None:
                with contextlib.suppress(OSError):
                    while chunk := sock.recv(1 << 16):
                        answer.extend(chunk)

            reader = threading.Thread(target=read)
            reader.start()
            try:
                for byte in head:  # a byte every 0.1 s: 0.9 s under each read's timeout of 1 s
                    if answer:
                        break
                    try:
                        sock.send(bytes([byte]))
                    except OSError:  # closed by the server once it answered
                        break
                    sent += 1
                    time.sleep(0.1)
            finally:
                reader.join(CLIENT_WAIT)
        assert answer.split()[1] == b"408", bytes(answer)
        assert sent < len(head), "the server waited for the whole trickle"
        assert request(daemon, "ping")["ok"] is True


def test_pipelined_requests_get_the_first_answered_and_the_server_lives_on(daemon):
    ping = protocol.encode(protocol.request("ping", str(daemon.root)))
    status, _, answer = _exchange(daemon, _head(daemon, ping) * 3 + b"GARBAGE\r\n\r\n")
    assert status == 200 and answer.count(b"HTTP/1.") == 0 and json.loads(answer)["ok"] is True
    assert request(daemon, "ping")["ok"] is True


MOMENTS = [
    "x",  # no moment
    "0000-01-01",  # year 0
    "10000-01-01",
    "0001-01-01",  # local time's first day: before history began
    "9999-12-31",  # the last: an end in zones ahead of UTC, still to come in the others
    "2023-02-29",  # no such day
    "2024-02-29",  # a leap day, before history began
    "2026-03-08T02:30",  # an hour New York's clocks skip
    "2026-01-01T10:00+24:00",  # no such zone
    "9" * 90 + "d",  # a span back past year 1
    "2030-01-01",  # still to come
]


@pytest.mark.parametrize("spec", ["UTC0", "America/New_York", "Pacific/Kiritimati"])
def test_a_moment_every_entry_point_refuses_is_the_same_one_line_everywhere(toy_vault, zone, spec):
    """`brain ask --as-of`, `brain note --as-of`, the socket, HTTP and brain mcp's search say the
    same line of a moment they cannot take (over HTTP with its status), in every zone, each naming
    it as its caller does (--as-of, as_of); none a traceback."""
    from click.testing import CliRunner
    from serve_helpers import mcp_call

    from brain.cli import cli

    zone(spec)
    _index(toy_vault)
    said: dict[str, list[str]] = {}
    with served(toy_vault, watch=False, http=("127.0.0.1", 0)) as daemon:
        root = str(daemon.root)
        for moment in MOMENTS:
            lines = said.setdefault(moment, [])
            for args in (["ask", "agent memory"], ["note", "Home"]):
                out = CliRunner().invoke(cli, [*args, "--vault", root, "--as-of", moment])
                assert out.exit_code == 1 and isinstance(out.exception, SystemExit), out.output
                assert out.output.startswith("Error: ") and out.output.count("\n") == 1, out.output
                lines.append(out.output.removeprefix("Error: ").strip())
            for body in (
                _ask(root, as_of=moment),
                json.dumps(protocol.request("note", root, note="Home", as_of=moment)).encode(),
            ):
                status, _, answer = _exchange(daemon, _head(daemon, body))
                error = _one_error_line(answer)
                assert status == daemon_module.HTTP_STATUS[error["code"]] and error["code"] in (
                    "bad_request",
                    "brain_error",
                )
                lines.append(error["message"])
            reply = request(daemon, "ask", query="agent memory", modes=["vector"], as_of=moment)
            lines.append(reply["error"]["message"])
        assert daemon.service.errors == 0
    for moment in MOMENTS:
        called = mcp_call(toy_vault, "search", {"query": "agent memory", "as_of": moment})
        assert called.is_error
        said[moment].append(called.content[0].text)
    for moment, lines in said.items():
        # "now is 13:18" may turn to 13:19 between two entry points: the minute is the clock's
        # and the CLI's two name its option, --as-of, where the request and the tool name as_of
        assert not any(line.startswith("--") for line in lines[2:]), (moment, lines)
        named = [re.sub(r"^as_of ", "--as-of ", line) for line in lines]
        same = {re.sub(r"now is \d{4}-\d\d-\d\d \d\d:\d\d", "now is <now>", line) for line in named}
        assert len(same) == 1 and "\n" not in lines[0], (moment, lines)
