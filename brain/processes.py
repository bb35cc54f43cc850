"""Whether a process is running, asked without signalling it. Standard library only (the hooks
import it).

POSIX asks with ``os.kill(pid, 0)``, which sends nothing. Windows has no such probe in
``os.kill``: signal 0 is ``CTRL_C_EVENT`` there, which ``os.kill`` sends to the console
process group ``pid``, and any other value ends the process by ``TerminateProcess``
(Python's documentation of ``os.kill``). Windows asks ``OpenProcess`` and
``GetExitCodeProcess`` through ``ctypes``, imported there only.
"""

from __future__ import annotations

import os
from typing import Any

_PROCESS_QUERY_LIMITED_INFORMATION = 0x1000
_STILL_ACTIVE = 259
_ERROR_ACCESS_DENIED = 5
_ERROR_INVALID_PARAMETER = 87  # OpenProcess's answer for an id no process has
_MAX_WINDOWS_PID = 0xFFFFFFFF  # a DWORD


def running(pid: int) -> bool | None:
    """True: ``pid`` runs (this process; another user's too); False: no process has that id;
    None: no way to tell (0 or a negative number, which name groups to ``os.kill``; a number
    beyond the system's ids; an error the system gave). Each caller says what doubt means to it."""
    if pid == os.getpid():
        return True
    if pid <= 0:
        return None
    if os.name == "nt":
        return _windows_running(pid)
    try:
        os.kill(pid, 0)
    except ProcessLookupError:
        return False
    except PermissionError:  # running, another user's
        return True
    except (OSError, OverflowError):
        return None
    return True


def _windows_running(pid: int) -> bool | None:
    if pid > _MAX_WINDOWS_PID:
        return None
    kernel32, last_error = _kernel32()
    handle = kernel32.OpenProcess(_PROCESS_QUERY_LIMITED_INFORMATION, False, pid)
    if not handle:
        error = last_error()
        if error == _ERROR_ACCESS_DENIED:  # running, a process this user may not open
            return True
        return False if error == _ERROR_INVALID_PARAMETER else None
    try:
        import ctypes
        from ctypes import wintypes

        code = wintypes.DWORD()
        if not kernel32.GetExitCodeProcess(handle, ctypes.byref(code)):
            return None
        # one that exited with 259 itself reads as running: the safe side for every caller
        return code.value == _STILL_ACTIVE
    finally:
        kernel32.CloseHandle(handle)


def _kernel32() -> tuple[Any, Any]:
    """Windows' kernel32 with the argument types the probe passes, and its last error as
    ``ctypes`` kept it (read any later, another call may have replaced it)."""
    import ctypes
    from ctypes import wintypes

    kernel32: Any = ctypes.WinDLL("kernel32", use_last_error=True)  # type: ignore[attr-defined,unused-ignore]
    kernel32.OpenProcess.argtypes = (wintypes.DWORD, wintypes.BOOL, wintypes.DWORD)
    kernel32.OpenProcess.restype = wintypes.HANDLE
    kernel32.GetExitCodeProcess.argtypes = (wintypes.HANDLE, ctypes.POINTER(wintypes.DWORD))
    kernel32.GetExitCodeProcess.restype = wintypes.BOOL
    kernel32.CloseHandle.argtypes = (wintypes.HANDLE,)
    return kernel32, ctypes.get_last_error  # type: ignore[attr-defined,unused-ignore]
