"""Console entry point.

``brain hook stop`` runs on every assistant turn of Claude Code, so it bypasses click and
everything else: standard library only, exit 0 always. Every other command, ``brain hook stop
--help`` included, goes to ``brain.cli``.
"""

from __future__ import annotations

import sys


def main() -> None:
    if sys.argv[1:3] == ["hook", "stop"] and not {"-h", "--help"} & set(sys.argv[3:]):
        from .ledger.hook import run_stop_hook

        sys.exit(run_stop_hook())
    from .cli import cli

    cli(prog_name="brain")


if __name__ == "__main__":
    main()
