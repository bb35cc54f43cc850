"""How history keeps a note version's bytes: zlib, and for the current version a delta against
its own chunks.

Every version keeps the file's bytes (``note_versions.content``), so a past version's text can
be shown and compared after the file has changed. The current version's text is, give or take
frontmatter and markup, the text of the note's chunks, which the index holds anyway: its bytes
are compressed with those chunk texts as zlib's preset dictionary, and take ~80 bytes instead of
~2.5 KB for a note of five chunks (bench/scale.py: index.db 0.5 KB a chunk smaller).

The dictionary must be there to read the text back, so only a *current* version is kept this
way, while the note's chunks are the chunks of that content: before a version stops being
current (the note changes, is renamed or deleted), or its chunks are rewritten, its bytes are
kept plain again (``IndexStore.settle_version_text``). zlib marks a stream made with a
dictionary (FDICT) and checks the dictionary's Adler-32 on the way back, so a wrong one is an
error, never wrong text; readers check the SHA-256 too.
"""

from __future__ import annotations

import zlib
from collections.abc import Iterable

WINDOW = 32768  # deflate reaches back 32 KB: a longer dictionary's start is never used
LEVEL = 6


def chunk_dictionary(texts: Iterable[str]) -> bytes:
    """The preset dictionary made of a content's chunk texts, in order."""
    return "\n".join(texts).encode("utf-8", "surrogatepass")[-WINDOW:]


def compress(data: bytes, dictionary: bytes = b"") -> bytes:
    """``data`` as zlib, against ``dictionary`` when there is one."""
    if not dictionary:
        return zlib.compress(data, LEVEL)
    packer = zlib.compressobj(LEVEL, zdict=dictionary)
    return packer.compress(data) + packer.flush()


def needs_dictionary(blob: bytes) -> bool:
    """The stream was made with a preset dictionary (zlib's FDICT flag, RFC 1950)."""
    return len(blob) >= 2 and bool(blob[1] & 0x20)


def decompress(blob: bytes, dictionary: bytes = b"") -> bytes:
    """The bytes back; ``zlib.error`` when the stream needs a dictionary and this is not it."""
    if not needs_dictionary(blob):
        return zlib.decompress(blob)
    unpacker = zlib.decompressobj(zdict=dictionary)
    data = unpacker.decompress(blob) + unpacker.flush()
    if not unpacker.eof:
        raise zlib.error("incomplete stream")
    return data
