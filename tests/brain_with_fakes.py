"""The brain CLI with the test embedders registered, for tests that run `brain serve` or
`brain mcp` as processes (the fakes live in fakes.py, which a child process imports without
pytest; conftest.py imports it for the run).

FAKE_EMBED_DELAY=<seconds> makes each embedding call that long: an index pass that can be
interrupted in the middle. FAKE_EMBED_FAIL=<message> makes each call to embed notes raise a
``ModelLoadError`` with that message: an index pass that fails. FAKE_HEAL_AFTER=<path> makes
`brain serve` leave its removed files as they are until that path exists (then it heals at its
next check, as ever): a test asks while they are gone however slowly its `brain ask` starts.
FAKE_LOAD_AFTER=<path> holds the model's load (making the fake, what the server does first) until
that path exists: a server that is loading for as long as the test likes.
FAKE_UPGRADE_WAIT=<seconds> is how long a pending migration waits for the index's write lock
(``upgrades.UPGRADE_WAIT``, 60 s): a wait that only the test can end.

It answers Ctrl-C as a terminal's brain does even when the test run was started in the background
by a script: a non-interactive shell starts a background job with SIGINT ignored, its children
inherit that, and Python then leaves it ignored (the Ctrl-C tests of test_upgrade_wait and
test_writer_wait waited out their timeouts for a brain that never saw the key).
"""

from __future__ import annotations

import os
import signal
import sys
import time

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))

if signal.getsignal(signal.SIGINT) == signal.SIG_IGN:
    signal.signal(signal.SIGINT, signal.default_int_handler)

from fakes import FakeEmbedder  # registers fake:<dim>

_delay = float(os.environ.get("FAKE_EMBED_DELAY") or 0)
if _delay:
    _embed = FakeEmbedder.embed_documents

    def _slow(self, texts, *, progress=False):
        time.sleep(_delay)
        return _embed(self, texts, progress=progress)

    FakeEmbedder.embed_documents = _slow

if os.environ.get("FAKE_EMBED_FAIL"):
    from brain.errors import ModelLoadError

    def _fail(self, texts, *, progress=False):
        raise ModelLoadError(os.environ["FAKE_EMBED_FAIL"])

    FakeEmbedder.embed_documents = _fail

if os.environ.get("FAKE_LOAD_AFTER"):
    _made = FakeEmbedder.__init__

    def _load_when_told(self, *args, **kwargs):  # made = loaded (the registry's load of fake:<dim>)
        deadline = time.monotonic() + 300  # never for good: a test that forgot it ends all the same
        while not os.path.exists(os.environ["FAKE_LOAD_AFTER"]) and time.monotonic() < deadline:
            time.sleep(0.05)
        _made(self, *args, **kwargs)

    FakeEmbedder.__init__ = _load_when_told

if os.environ.get("FAKE_HEAL_AFTER"):
    from brain.server.daemon import Daemon

    _heal = Daemon.heal

    def _heal_when_told(self):
        if os.path.exists(os.environ["FAKE_HEAL_AFTER"]):
            _heal(self)

    Daemon.heal = _heal_when_told

if os.environ.get("FAKE_UPGRADE_WAIT"):
    from brain.index import upgrades

    upgrades.UPGRADE_WAIT = float(os.environ["FAKE_UPGRADE_WAIT"])

from brain.__main__ import main  # noqa: E402

if __name__ == "__main__":
    main()
