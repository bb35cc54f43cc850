"""The child process that builds a lexical postings file, for ``postings._Child``.

Run (by ``child_process``) with the index folder as its argument: takes the builder's lock
(``postings.builder_lock``), writes the file and installs it (``postings.install``: put in
place and stamped, unless the postings changed otherwise meanwhile), then prints as JSON the
nonce, whether it was installed and how many chunks it read early (``null``: the vault is past
what the file can hold, and the postings are cleared).

In the background (the default) it runs at a lower priority, gives up at once if another
process holds the lock, and writes why it failed, if it does, to ``postings.FAILURE_FILE`` (its
parent may be gone; the next index pass reports it). With ``--early`` it waits for the lock,
then first reads the chunks as the run commits them: a line ``more`` on its input after each
commit, ``go`` once every chunk is written; its input ending before ``go`` (the run stopped,
or was killed) ends it without writing anything.
"""

from __future__ import annotations

import json
import os
import sys
import traceback
from pathlib import Path

from . import postings
from .store import IndexStore

EARLY_NICENESS = 10  # 20,000 notes, eight pairs alternating: the build 23.3 -> 21.5 s (medians)
BACKGROUND_NICENESS = 10  # the saves and queries someone waits for come first


def main(argv: list[str]) -> int:
    directory = Path(argv[1])
    early = "--early" in argv[2:]
    with postings.builder_lock(directory, wait=early) as held:
        if not held:  # another process builds: its base will do
            sys.stdout.write(json.dumps({"busy": True}))
            return 0
        if early:
            return _build(directory, early=True)
        try:
            return _build(directory, early=False)
        except BaseException:
            _record_failure(directory, traceback.format_exc())
            raise


def _build(directory: Path, *, early: bool) -> int:
    if hasattr(os, "nice"):  # the CPU the run (or the next save) leaves spare
        os.nice(EARLY_NICENESS if early else BACKGROUND_NICENESS)
    store = IndexStore.open(directory, create=False)
    try:
        reader = None
        if early:
            reader = postings.Reader()
            for line in sys.stdin.buffer:
                if line.strip() == b"go":
                    break
                reader.read_committed(store)
            else:
                return 0
        written = postings.write_base(store, reader)
        if written is None:
            postings.clear(store)
            installed = False
        else:
            installed = postings.install(store, written)
    finally:
        store.close()
    answer = None if written is None else {"nonce": written.nonce, "kept": written.kept, "installed": installed}
    sys.stdout.write(json.dumps(answer))
    return 0


def _record_failure(directory: Path, text: str) -> None:
    try:
        fd = os.open(directory / postings.FAILURE_FILE, os.O_WRONLY | os.O_CREAT | os.O_TRUNC, 0o600)
        with os.fdopen(fd, "w", encoding="utf-8") as f:
            f.write(text)
    except OSError:  # the folder gone or full: nothing more to say it with
        pass


if __name__ == "__main__":
    sys.exit(main(sys.argv))
