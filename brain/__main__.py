"""Console entry point.

``brain hook stop`` runs on every assistant turn of Claude Code and ``brain hook prompt`` on
every prompt, so both bypass click and everything else: standard library only, exit 0 always.
Every other command, and either hook with ``--help``, goes to ``brain.cli``.
"""

from __future__ import annotations

import os
import sys


def main() -> None:
    hook = sys.argv[1:3]
    if hook in (["hook", "stop"], ["hook", "prompt"]) and not {"-h", "--help"} & set(sys.argv[3:]):
        if hook[1] == "stop":
            from .ledger.hook import run_stop_hook

            sys.exit(run_stop_hook())
        from .autorecall.hook import run_prompt_hook

        sys.exit(run_prompt_hook())
    try:
        from .cli import cli
    except KeyboardInterrupt:
        # Ctrl-C while the CLI still loads (its first tenth of a second), before click can
        # answer it: the line click prints for one a moment later, not Python's traceback.
        sys.exit("Aborted!")
    except (MemoryError, ImportError) as exc:  # the imports need memory too (numpy, faiss)
        _exit_if_out_of_memory(exc)
        raise

    try:
        cli(prog_name="brain")
    except (MemoryError, ImportError, OSError) as exc:
        _exit_if_out_of_memory(exc)
        if not isinstance(exc, FileNotFoundError):
            raise
        # A relative path, or a library that resolves paths on import (transformers), asked
        # for a working directory deleted under the shell: one line, not their traceback.
        if _working_directory_exists():
            raise
        sys.exit("Error: the working directory no longer exists (deleted or moved); cd to a folder that does.")


def _exit_if_out_of_memory(exc: MemoryError | ImportError | OSError) -> None:
    """Out of memory (``ulimit -v``, a small container): one line, not Python's traceback. Under
    `ulimit -v 150000` `brain index` died of a MemoryError at an import, under 200000 of the
    loader's "failed to map segment from shared object" (an ImportError). Anything else: nothing."""
    from .errors import out_of_memory

    where = out_of_memory(exc)
    if where is None:
        return
    sys.exit(
        f"Error: out of memory ({where}): raise the limit or free some memory and run again; what brain "
        "wrote is kept (a `brain index` stopped midway resumes where it stopped)"
    )


def _working_directory_exists() -> bool:
    try:
        os.getcwd()
    except FileNotFoundError:
        return False
    return True


if __name__ == "__main__":
    main()
