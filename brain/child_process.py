"""How brain starts Python processes of its own (the parse workers and the walk's helper), and
how they answer it (``write_all``).

``python -m brain.x`` puts the working directory first on the child's ``sys.path``, so run
from a folder that holds a ``brain`` package (a clone of another version, a downloaded
project, something hostile) the child imported and ran that code instead of this brain's.
The child here takes the working directory off its path before it imports anything, and
finds this very brain: its folder is put first only when the path lacks it (a source checkout
run in place); an installed brain's site-packages keeps its place after the standard library.
"""

from __future__ import annotations

import sys
from pathlib import Path
from typing import IO

_BOOT = (
    "import sys; sys.path[:] = [p for p in sys.path if p not in ('', '.')]; root = {root!r}\n"
    "if root not in sys.path: sys.path.insert(0, root)\n"
    "import runpy; runpy.run_module({module!r}, run_name='__main__', alter_sys=True)"
)


def python_module_command(module: str) -> list[str]:
    """The command line that runs ``module`` of this brain as ``__main__`` in a new interpreter."""
    root = str(Path(__file__).resolve().parent.parent)
    return [sys.executable, "-c", _BOOT.format(root=root, module=module)]


def write_all(stream: IO[bytes], data: bytes) -> None:
    """Write every byte of ``data``, then flush. A child's ``sys.stdout.buffer`` is a raw file,
    not a buffered one, under ``PYTHONUNBUFFERED`` (or ``python -u``), and a raw write into a
    pipe may take only part of a large answer: when the process is stopped and continued while
    it waits for room (Ctrl-Z then ``fg``, a debugger or profiler attaching). The rest was lost,
    and the parent waited for it for ever."""
    view = memoryview(data)
    while view:
        written = stream.write(view)
        if written is None:  # a non-blocking stream with no room: not one brain makes
            raise BlockingIOError("the pipe to the parent is full")
        view = view[written:]
    stream.flush()
