"""Whether the model under a name is the one an index was built with: a fixed text's vector,
recorded when the index first embeds (meta ``model_probe``) and compared when a model is loaded.

The settings check (settings_fit.py) compares names. A folder whose model was replaced, or a hub
name whose cached files changed, keeps its name: with the same dimensions, `brain index` mixed the
two models' vectors and `brain ask` ranked the notes by a query no note was embedded alike, both
without a word. One short text embedded at load (a query's cost: 20 ms of CPU for MiniLM, beside
the seconds of its load) tells them apart: two loads of one model agree to within float noise,
two models do not.
"""

from __future__ import annotations

import base64
from typing import TYPE_CHECKING

from ..text import shell_word

if TYPE_CHECKING:
    from pathlib import Path

    import numpy as np

    from ..embed import Embedder
    from .store import IndexStore

PROBE_KEY = "model_probe"
PROBE_TEXT = "brain model probe: a fixed text whose vector tells one model from another"
# Cosine of the probe's vectors from one model: 1.000 here, load after load; another device's
# or engine version's float noise moves the third decimal (not measured here: no GPU). From two
# models of one size: far below (0.26 for the tiny BERTs of tests/tiny_models.py from two seeds).
SAME_MODEL = 0.9


def probe_vector(embedder: Embedder) -> np.ndarray:
    """The model's vector of the probe text, embedded as a query is (with its prefix, one
    thread): 20 ms of CPU for MiniLM here, where as a passage, on torch's threads, it took 211."""
    import numpy as np

    return np.ascontiguousarray(embedder.embed_query(PROBE_TEXT), dtype=np.float32)


def encoded(vector: np.ndarray) -> str:
    """The vector as the meta table holds it: float32 bytes in base64."""
    return base64.b64encode(vector.tobytes()).decode("ascii")


def model_changed(store: IndexStore, name: str, vector: np.ndarray, root: Path | None = None) -> str | None:
    """Why the model loaded under ``name`` is not the one the index recorded, or None (the same,
    or an index from before the probe was recorded: unknown, taken; or another size, which the
    dimensions check says)."""
    import numpy as np

    stored = store.get_meta(PROBE_KEY)
    if not stored:
        return None
    try:
        built = np.frombuffer(base64.b64decode(stored), dtype=np.float32)
    except ValueError:  # not base64 of float32s: a record this brain cannot read tells nothing
        return None
    if built.shape != vector.shape or not np.isfinite(vector).all():
        return None  # another size, or a broken model's NaN: said by the checks of those
    norms = float(np.linalg.norm(built) * np.linalg.norm(vector))
    cosine = float(built @ vector) / norms if norms else 0.0
    if cosine >= SAME_MODEL:
        return None
    where = f" --vault {shell_word(root)}" if root is not None else ""
    return (
        f"the embedding model {name!r} is not the one this vault's index was built with under that name: it "
        f"embeds a fixed text {cosine:.2f} alike to the index's record (1.00 for the same model), so its vectors "
        f"and the index's cannot be compared. Put the model that was there back, or run `brain index --rebuild"
        f"{where}` to re-embed everything with this one"
    )
