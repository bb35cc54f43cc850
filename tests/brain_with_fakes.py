"""The brain CLI with the test embedders registered, for tests that run `brain serve` or
`brain mcp` as processes (the fakes live in conftest.py, which a child process never imports).

FAKE_EMBED_DELAY=<seconds> makes each embedding call that long: an index pass that can be
interrupted in the middle. FAKE_EMBED_FAIL=<message> makes each call to embed notes raise a
``ModelLoadError`` with that message: an index pass that fails.
"""

from __future__ import annotations

import os
import sys
import time

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))

import conftest  # noqa: F401 - registers fake:<dim>
from conftest import FakeEmbedder

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

from brain.__main__ import main  # noqa: E402

if __name__ == "__main__":
    main()
