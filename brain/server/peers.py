"""Which client process is at the other end of a connection: the key by which `brain serve`'s
clients take turns and share its places (``daemon._Connections``, ``service.caller``).

- **Unix socket**: the kernel says. Linux ``SO_PEERCRED`` (OpenBSD's holds the pid last);
  macOS ``LOCAL_PEERPID`` (level ``SOL_LOCAL`` 0, option 2, which Python does not name). Elsewhere
  (FreeBSD's ``LOCAL_PEERCRED`` gives the uid, the same for every client of an owner-only
  socket) ``None``. The macOS and OpenBSD branches are not run by the tests on those systems:
  each is one ``getsockopt`` as the system's manual gives it.
- **Loopback TCP** (``--http``): the kernel knows who holds the client's end but gives no pid
  for it (``SO_PEERCRED`` says pid 0 on TCP). On Linux, ``/proc/net/tcp`` (``tcp6``) names the
  inode and uid of the socket whose address is the connection's peer address, and the process
  is the one with that inode among its ``/proc/PID/fd``: the processes of recent HTTP clients
  are looked at first, then every process of that uid. ``None`` elsewhere, or for a client
  gone already.

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
SOL_LOCAL, LOCAL_PEERPID = 0, 2  # <sys/un.h> on macOS
RECENT = 32  # pids of HTTP clients looked at first


def unix_peer(conn: socket.socket) -> int | None:
    """The pid of the process at the other end of a Unix socket; None where the system does not say."""
    try:
        if hasattr(socket, "SO_PEERCRED"):
            creds = struct.unpack("3i", conn.getsockopt(socket.SOL_SOCKET, socket.SO_PEERCRED, struct.calcsize("3i")))
            pid = (
                creds[2] if PLATFORM.startswith("openbsd") else creds[0]
            )  # {uid, gid, pid} there, {pid, uid, gid} on Linux
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

    def pid(self, conn: socket.socket) -> int | None:
        try:
            found = _client_socket(conn)
        except (OSError, ValueError):  # no /proc (not Linux), the connection gone
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
    """(inode, uid) of the client's end of ``conn``, from the kernel's table of TCP sockets:
    the one whose local address is ``conn``'s peer address and whose remote is ``conn``'s own."""
    family = conn.family
    client, server = _proc_address(family, conn.getpeername()), _proc_address(family, conn.getsockname())
    with open("/proc/net/tcp6" if family == socket.AF_INET6 else "/proc/net/tcp", encoding="ascii") as table:
        next(table, None)  # the heading
        for line in table:
            fields = line.split()
            if len(fields) > 9 and fields[1] == client and fields[2] == server:
                inode = int(fields[9])
                return (inode, int(fields[7])) if inode else None  # 0: no process holds it any more
    return None


def _proc_address(family: int, address: tuple[str, int] | tuple[str, int, int, int]) -> str:
    """An address as ``/proc/net/tcp`` writes it: each 32-bit word of the address in the
    machine's byte order, in hex, then the port."""
    packed = socket.inet_pton(family, address[0])
    words = "".join(f"{int.from_bytes(packed[i : i + 4], sys.byteorder):08X}" for i in range(0, len(packed), 4))
    return f"{words}:{address[1]:04X}"


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
