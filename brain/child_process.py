"""How brain starts Python processes of its own: the parse workers and the walk's helper.

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

_BOOT = (
    "import sys; sys.path[:] = [p for p in sys.path if p not in ('', '.')]; root = {root!r}\n"
    "if root not in sys.path: sys.path.insert(0, root)\n"
    "import runpy; runpy.run_module({module!r}, run_name='__main__', alter_sys=True)"
)


def python_module_command(module: str) -> list[str]:
    """The command line that runs ``module`` of this brain as ``__main__`` in a new interpreter."""
    root = str(Path(__file__).resolve().parent.parent)
    return [sys.executable, "-c", _BOOT.format(root=root, module=module)]
