"""brain: Graph RAG memory over an Obsidian/markdown vault.

The package is a library first; ``brain.cli`` is a thin click layer on top.
Heavy dependencies (torch, sentence-transformers, faiss, numpy) are imported
lazily so that ``brain --help``, the Stop hook and ``brain turns`` start fast.
"""

__version__ = "0.1.0"
