"""Which client process is at the other end of a connection: the key by which `brain serve`'s
clients take turns and share its places (``daemon._Connections``, ``service.caller``).

- **Unix socket**: the kernel says. Linux ``SO_PEERCRED`` (OpenBSD's holds the pid last);
  macOS ``LOCAL_PEERPID`` (level ``SOL_LOCAL`` 0, option 2, which Python does not name). Elsewhere
  (FreeBSD's ``LOCAL_PEERCRED`` gives the uid, the same for every client of an owner-only
  socket) ``None``. The macOS and OpenBSD branches are not run by the tests on those systems:
  each is one ``getsockopt`` as the system's manual gives it.
- **Loopback TCP** (``--http``): the kernel knows who holds the client's end but gives no pid
  for it (``SO_PEERCRED`` says pid 0 on TCP). On Linux, ``sock_diag`` (netlink) gives the
  inode and uid of the socket whose address is the connection's peer address, and the process
  is the one with that inode among its ``/proc/PID/fd``: the processes of recent HTTP clients
  are looked at first, then every process of that uid. ``None`` elsewhere, or for a client
  gone already.

Whose process it is (``unix_peer_uid``, the kernel's word too) decides whether a socket client
is answered at all (``daemon``): only the server's own user, or root. The socket's modes (0600,
in a 0700 folder) say so as well, but not on a file system that ignores modes (WSL's drvfs, a
FAT or 9p mount under ``BRAIN_HOME``), where another user's request for a note was answered.
The macOS and FreeBSD branch of it is not run by the tests on those systems either.

A process cannot pass for another: the pid is the kernel's, not anything the client sends (a
header, its source address: a process may bind any of 127.0.0.0/8; its source port is new for
every connection). A process that forks a child for each question is as many clients, over
either.
"""

from __future__ import annotations

import os
import socket
import struct
import sys
import threading

PLATFORM = sys.platform
SOL_LOCAL, LOCAL_PEERCRED, LOCAL_PEERPID = 0, 1, 2  # <sys/un.h> on macOS (LOCAL_PEERCRED: FreeBSD too)
XUCRED_SIZE = 76  # struct xucred: version, uid, the group count and 16 groups
RECENT = 32  # pids of HTTP clients looked at first


def unix_peer_uid(conn: socket.socket) -> int | None:
    """The user id of the process at the other end of a Unix socket; None where the system does
    not say. Linux's and OpenBSD's ``SO_PEERCRED``; macOS's and FreeBSD's ``LOCAL_PEERCRED``
    (level 0, option 1: a ``struct xucred``, its version then the uid)."""
    try:
        if hasattr(socket, "SO_PEERCRED"):
            creds = struct.unpack("3i", conn.getsockopt(socket.SOL_SOCKET, socket.SO_PEERCRED, struct.calcsize("3i")))
            return creds[0] if PLATFORM.startswith("openbsd") else creds[1]
        if PLATFORM == "darwin" or PLATFORM.startswith("freebsd"):
            _, uid = struct.unpack_from("=II", conn.getsockopt(SOL_LOCAL, LOCAL_PEERCRED, XUCRED_SIZE))
            return int(uid)
    except (OSError, struct.error):
        return None
    return None


def unix_peer(conn: socket.socket) -> int | None:
    """The pid of the process at the other end of a Unix socket; None where the system does not say."""
    try:
        if hasattr(socket, "SO_PEERCRED"):
            creds = struct.unpack("3i", conn.getsockopt(socket.SOL_SOCKET, socket.SO_PEERCRED, struct.calcsize("3i")))
            # struct ucred is {pid, uid, gid} on Linux, OpenBSD's sockpeercred {uid, gid, pid}
            pid = creds[2] if PLATFORM.startswith("openbsd") else creds[0]
        elif PLATFORM == "darwin":
            (pid,) = struct.unpack("i", conn.getsockopt(SOL_LOCAL, LOCAL_PEERPID, struct.calcsize("i")))
        else:
            return None
    except OSError:
        return None
    return pid if pid > 0 else None


class TcpPeers:
    """``pid(conn)``: the process at the other end of a loopback TCP connection (Linux only)."""

    def __init__(self) -> None:
        self._recent: dict[int, None] = {}  # in the order last found, newest last
        self._lock = threading.Lock()

    @staticmethod
    def uid(conn: socket.socket) -> int | None:
        """The user id of the client's socket (one ``sock_diag`` query: no walk of ``/proc``)."""
        try:
            found = _client_socket(conn)
        except (OSError, ValueError, AttributeError):  # not Linux (no AF_NETLINK), the connection gone
            return None
        return found[1] if found is not None else None

    def pid(self, conn: socket.socket) -> int | None:
        try:
            found = _client_socket(conn)
        except (OSError, ValueError, AttributeError):  # not Linux (no AF_NETLINK), the connection gone
            return None
        if found is None:
            return None
        inode, uid = found
        link = f"socket:[{inode}]"
        with self._lock:
            recent = list(reversed(self._recent))
        for pid in recent:
            if _holds(pid, link):
                return self._found(pid)
        for pid in _processes_of(uid):
            if pid not in recent and _holds(pid, link):
                return self._found(pid)
        return None

    def _found(self, pid: int) -> int:
        with self._lock:
            self._recent.pop(pid, None)
            self._recent[pid] = None
            while len(self._recent) > RECENT:
                del self._recent[next(iter(self._recent))]
        return pid


def _client_socket(conn: socket.socket) -> tuple[int, int] | None:
    """(inode, uid) of the client's end of ``conn``: the TCP socket whose own address is
    ``conn``'s peer address and whose peer is ``conn``'s, as the kernel's ``sock_diag`` finds
    it by that address pair (14 µs). ``/proc/net/tcp`` said the same in 16 to 48 ms once a
    flood had left 4,000 to 9,000 connections in TIME_WAIT, every one written out at each read."""
    family = conn.family
    (client, client_port), (server, server_port) = conn.getpeername()[:2], conn.getsockname()[:2]

    def address(host: str) -> bytes:
        return socket.inet_pton(family, host).ljust(16, b"\0")

    # struct inet_diag_req_v2: family, protocol, extensions, pad, states; its inet_diag_sockid:
    # ports (network order), addresses, interface, cookie (none: INET_DIAG_NOCOOKIE)
    wanted = struct.pack("!HH", client_port, server_port) + address(client) + address(server)
    request = struct.pack("=BBBBI", family, socket.IPPROTO_TCP, 0, 0, 0xFFFFFFFF)
    request += wanted + struct.pack("=III", 0, 0xFFFFFFFF, 0xFFFFFFFF)
    header = struct.pack("=IHHII", 16 + len(request), _SOCK_DIAG_BY_FAMILY, _NLM_F_REQUEST, 1, 0)
    with socket.socket(socket.AF_NETLINK, socket.SOCK_DGRAM, _NETLINK_SOCK_DIAG) as diag:
        diag.settimeout(1.0)
        diag.send(header + request)
        reply = diag.recv(1 << 13)
    if len(reply) < 16 + 72 or struct.unpack_from("=H", reply, 4)[0] != _SOCK_DIAG_BY_FAMILY:
        return None  # NLMSG_ERROR: no such socket (the client gone)
    # struct inet_diag_msg: family, state, timer, retrans, the sockid (48), expires, queues, uid, inode
    uid, inode = struct.unpack_from("=II", reply, 16 + 4 + 48 + 12)
    return (inode, uid) if inode else None  # 0: no process holds it any more


_NETLINK_SOCK_DIAG, _SOCK_DIAG_BY_FAMILY, _NLM_F_REQUEST = 4, 20, 1  # <linux/sock_diag.h>, <linux/netlink.h>


def _processes_of(uid: int) -> list[int]:
    pids = []
    with os.scandir("/proc") as entries:
        for entry in entries:
            if entry.name.isdigit():
                try:
                    if entry.stat().st_uid == uid:
                        pids.append(int(entry.name))
                except OSError:  # ended meanwhile
                    pass
    return pids


def _holds(pid: int, link: str) -> bool:
    """Whether process ``pid`` has the socket ``link`` (``socket:[INODE]``) among its open files."""
    try:
        with os.scandir(f"/proc/{pid}/fd") as fds:
            for fd in fds:
                try:
                    if os.readlink(fd.path) == link:
                        return True
                except OSError:
                    pass
    except OSError:  # ended, or another user's
        pass
    return False
