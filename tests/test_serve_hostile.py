"""One misbehaving client must not keep `brain serve` from answering the others.

Clients that connect and say nothing, or send their request a byte at a time, held a
connection's thread and place for as long as they liked: 64 of them made every other client
``busy`` (the prompt hook recalled nothing). ``bench/serve_fuzz.py`` measures the rest.
"""

from __future__ import annotations

import json
import socket
from pathlib import Path

import pytest
from serve_helpers import raw_exchange, served
from test_serve import _index

from brain.server import daemon as daemon_module


def _connect(path: Path) -> socket.socket:
    sock = socket.socket(socket.AF_UNIX, socket.SOCK_STREAM)
    sock.settimeout(10)
    sock.connect(str(path))
    return sock


def _closed_by_server(sock: socket.socket) -> bool:
    try:
        return sock.recv(1 << 16) == b""
    except ConnectionResetError:
        return True


@pytest.fixture
def few_connections(monkeypatch):
    """A server with room for 8 connections, so a test fills it with few sockets."""
    monkeypatch.setattr(daemon_module, "MAX_CONNECTIONS", 8)


def test_a_vault_path_with_a_nul_byte_is_a_bad_request_not_an_internal_error(toy_vault):
    _index(toy_vault)
    with served(toy_vault, watch=False) as daemon:
        for op in ("ping", "stop", "ask"):
            message = {"v": 1, "op": op, "vault": str(daemon.root) + "\0"}
            reply = json.loads(raw_exchange(daemon.socket_path, json.dumps(message).encode() + b"\n"))
            assert reply["ok"] is False and reply["error"]["code"] == "bad_request", reply
            assert "NUL" in reply["error"]["message"]
        assert daemon.service.errors == 0
        assert not daemon.stopping.is_set()
