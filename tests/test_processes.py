"""Whether a process runs: one probe (brain/processes.py), and what each caller makes of doubt."""

from __future__ import annotations

import os
import subprocess
import sys
from pathlib import Path
from typing import Any

from brain import backup, processes
from brain.index import tempfiles
from brain.server import runtime


def _answers(tmp_path: Path, pid: int) -> tuple[bool, bool, bool]:
    """(a killed save's temp file kept, a server taken as running, a backup's folder abandoned)."""
    return tempfiles.alive(pid), runtime.pid_alive(pid), backup._abandoned(tmp_path, str(pid))


def test_posix_asks_without_a_signal_and_each_caller_keeps_its_answer(tmp_path, monkeypatch):
    child = subprocess.Popen([sys.executable, "-c", ""])
    child.wait()  # reaped: no process has its id now
    assert _answers(tmp_path, os.getpid()) == (True, True, False)
    assert _answers(tmp_path, child.pid) == (False, False, True)

    sent: list[tuple[int, int]] = []

    def kill(raised: BaseException | None) -> Any:
        def fake(pid: int, sig: int) -> None:
            sent.append((pid, sig))
            if raised is not None:
                raise raised

        return fake

    cases = [
        (None, (True, True, False)),  # running
        (ProcessLookupError(), (False, False, True)),  # gone
        (PermissionError(), (True, True, False)),  # another user's
        (OSError(22, "Invalid argument"), (True, False, False)),  # no way to tell
    ]
    for raised, expected in cases:
        monkeypatch.setattr(os, "kill", kill(raised))
        assert _answers(tmp_path, 4242) == expected, raised
    assert {sig for _, sig in sent} == {0}

    # text no process id is: the temp file and the backup's folder stay, no server is there
    monkeypatch.setattr(os, "kill", kill(OverflowError("signed integer is greater than maximum")))
    assert _answers(tmp_path, 2**70) == (True, False, False)
    monkeypatch.setattr(os, "kill", kill(None))  # os.kill(0, 0) signals this process group
    assert _answers(tmp_path, 0) == (True, False, False)
    assert runtime.pid_alive(-1) is False and runtime.pid_alive("4242") is False
    assert runtime.pid_alive(True) is False  # a record's `"pid": true` is not process 1
    assert runtime.pid_alive(None) is False
    assert (4242, 0) in sent and (0, 0) not in sent and (2**70, 0) in sent


class _Kernel32:
    """Windows' OpenProcess and GetExitCodeProcess over a table of processes: "running", an exit
    code, or a Windows error OpenProcess fails with."""

    def __init__(self, table: dict[int, str | int]) -> None:
        self.table = table
        self.error = 0
        self.open: list[int] = []

    def OpenProcess(self, access: int, inherit: bool, pid: int) -> int:
        state = self.table.get(pid, "no such")
        if state == "no such" or state in ("denied", "other"):
            self.error = {"no such": 87, "denied": 5, "other": 6}[str(state)]
            return 0
        self.open.append(pid)
        return pid

    def GetExitCodeProcess(self, handle: int, code: Any) -> int:
        state = self.table[handle]
        code._obj.value = 259 if state == "running" else state
        return 1

    def CloseHandle(self, handle: int) -> int:
        self.open.remove(handle)
        return 1


def test_windows_asks_openprocess_and_never_os_kill(tmp_path, monkeypatch):
    # os.kill(pid, 0) is no probe there: 0 is CTRL_C_EVENT, sent to the console process group
    # `pid`, and any other value ends the process (TerminateProcess). The server's pid_alive and
    # a backup's sweep sent it: asking whether a server or a backup's writer ran interrupted it.
    sent: list[tuple[int, int]] = []
    monkeypatch.setattr(os, "kill", lambda pid, sig: sent.append((pid, sig)))
    kernel32 = _Kernel32({101: "running", 102: 0, 103: "denied", 104: "other", 105: 259})
    monkeypatch.setattr(processes, "_kernel32", lambda: (kernel32, lambda: kernel32.error))
    monkeypatch.setattr(backup, "fcntl", None)  # Windows has none: the sweep asks after the pid
    with monkeypatch.context() as windows:
        windows.setattr(os, "name", "nt")
        answers = {pid: _answers(tmp_path, pid) for pid in (101, 102, 103, 104, 105, 106, 2**40)}
    assert sent == []
    assert kernel32.open == []  # every handle opened was closed
    assert answers == {
        101: (True, True, False),  # running
        102: (False, False, True),  # exited, its handle still held somewhere
        103: (True, True, False),  # another user's: OpenProcess is refused
        104: (True, False, False),  # no way to tell
        105: (True, True, False),  # exited with 259 (STILL_ACTIVE): taken as running, the safe side
        106: (False, False, True),  # no process has that id
        2**40: (True, False, False),  # beyond a DWORD: no process id
    }


def test_a_pid_spelled_in_other_digits_is_no_pid_and_fails_nothing(tmp_path):
    # str.isdigit() says yes to '²', which int() cannot read: a file `vectors.faiss.².x.tmp` in
    # the index folder failed every save of the vectors with ValueError (in the hooks' folder of
    # rows kept aside, every catch-up). Such a name is none a save writes: it stays. (A server's
    # lock file is read as ASCII: '²' there was never read as a pid.)
    from brain.ledger.deferred import _remove_orphans

    odd = tmp_path / "vectors.faiss.².0badf00d.tmp"
    odd.write_bytes(b"not ours")
    tempfiles.remove_orphans(tmp_path, ["vectors.faiss"])
    kept = tmp_path / ".20260101T000000-².tmp"
    kept.write_bytes(b"not ours")
    _remove_orphans(tmp_path)
    assert odd.exists() and kept.exists()
