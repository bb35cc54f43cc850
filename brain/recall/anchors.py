"""Anchor lanes: what the vault says *about* a note, as evidence for that note.

The passage around a ``[[X]]`` in another note is the vault describing X, often in the words a
person would use to ask for it ("the guy is asleep, can I finish him off?" sits beside a link
to *Coup de Grace*, whose own text never says "asleep"). These lanes rank notes by the best
passage that links to them:

    anchor_dense   the chunks nearest the query (the dense lane's own FAISS search) vote, each
                   with its cosine, for the notes they link to
    anchor_lex     the chunks best for the query by BM25 (the lexical lane's own search, the
                   first ones of its hits) vote, each with its BM25 score

A passage that links to many notes says little about each, and an index note links to
everything: a vote is scaled by 1/√(links in the passage) and, from a note with more than
``hub`` outgoing links, by √(hub / its links). A note is ranked by its best vote; links to
itself do not count. No schema of its own: a link belongs to a passage when the passage's
text holds the link, read as the index read its note's (``links.written_targets``: not in code
or comments, in fences of ``BRAIN_LINK_FENCES``'s languages), resolved as the index resolved
them (``IndexStore.written_link_targets``; for the past, as they were recorded then).
"""

from __future__ import annotations

import math
from collections.abc import Collection, Sequence
from typing import TYPE_CHECKING

from ..links import written_targets
from .dense import best_chunks, candidates_for
from .live import live_hits
from .ties import top_notes
from .types import DEFAULT_ANCHOR_HUB, DEFAULT_BM25_WEIGHTS, Candidate

if TYPE_CHECKING:
    import numpy as np

    from ..index.store import IndexStore

# Passages read per note wanted: 120 for 60 notes (4 measured the same, at twice the cost).
CHUNKS_PER_NOTE = 2
# Chunks whose links a store keeps while the index is unchanged (``_links``): a few MB.
LINKS_KEPT = 100_000


def linked_from_chunks(store: IndexStore, chunk_ids: Sequence[int]) -> dict[int, list[int]]:
    """chunk id → the notes its text links to (resolved, not its own note), in order."""
    return _links(store, chunk_ids)[0]


def _links(store: IndexStore, chunk_ids: Sequence[int]) -> tuple[dict[int, list[int]], dict[int, int]]:
    """(chunk id → the notes its text links to, chunk id → its note) for these chunks.

    Kept per chunk while the index is unchanged (``IndexStore._unchanged_cache``: any write,
    by this connection or another, starts it anew), at most ``LINKS_KEPT`` chunks: a warm
    recaller read each passage's text and matched its links again on every query, a fifth of
    a warm hybrid+ppr ask on the minivault."""
    known: dict[int, tuple[int, tuple[int, ...]] | None] = store._unchanged_cache().setdefault(  # type: ignore[assignment]
        "chunk_links", {}
    )
    missing = [chunk_id for chunk_id in dict.fromkeys(chunk_ids) if chunk_id not in known]
    if missing:
        if len(known) + len(missing) > LINKS_KEPT:
            known.clear()
        rows = store.chunk_rows(missing)
        # Read as the index read its notes' links: in fences of its languages too: a ```statblock's
        # links vote as the index counts them.
        fences = store.link_fences()
        resolved = store.written_link_targets(sorted({row.note_id for row in rows.values()}))
        for chunk_id in missing:
            row = rows.get(chunk_id)
            if row is None:  # no such chunk
                known[chunk_id] = None
                continue
            targets: list[int] = []
            for written in written_targets(row.text, fences):
                target_id = resolved.get((row.note_id, written))
                if target_id is not None and target_id not in targets:
                    targets.append(target_id)
            known[chunk_id] = (row.note_id, tuple(targets))
    out: dict[int, list[int]] = {}
    note_of: dict[int, int] = {}
    for chunk_id in dict.fromkeys(chunk_ids):
        entry = known.get(chunk_id)
        if entry is None:
            continue
        note_of[chunk_id] = entry[0]
        if entry[1]:
            out[chunk_id] = list(entry[1])
    return out, note_of


def live_passages(
    store: IndexStore, passages: Sequence[tuple[int, float]], gone: Collection[int]
) -> list[tuple[int, float]]:
    """``passages`` (chunk id, score) but those of the notes in ``gone``, whose file is gone since
    the last index (``Recaller.gone``): their words are no longer the vault's, so they vote for
    nothing. No read while ``gone`` is empty."""
    if not gone:
        return list(passages)
    note_of = store.chunk_note_ids([chunk_id for chunk_id, _ in passages])
    return [(chunk_id, score) for chunk_id, score in passages if note_of.get(chunk_id) not in gone]


def vote(store: IndexStore, passages: Sequence[tuple[int, float]], hub: int = DEFAULT_ANCHOR_HUB) -> dict[int, float]:
    """Target note → its best discounted vote, from (chunk id, score) passages."""
    if not passages:
        return {}
    links, note_of = _links(store, [chunk_id for chunk_id, _ in passages])
    if not links:
        return {}
    degree = store.out_degrees(sorted({note_of[chunk_id] for chunk_id in links}))
    best: dict[int, float] = {}
    for chunk_id, score in passages:
        targets = links.get(chunk_id)
        if not targets or score <= 0:
            continue
        weight = score / math.sqrt(len(targets))
        links_out = degree.get(note_of[chunk_id], 0)
        if hub > 0 and links_out > hub:
            weight *= math.sqrt(hub / links_out)
        for target in targets:
            if weight > best.get(target, 0.0):
                best[target] = weight
    return best


def _lane(
    store: IndexStore, best: dict[int, float], query_vector: np.ndarray, depth: int, source: str
) -> list[Candidate]:
    """The voted notes as candidates, best vote first; each shown by its best chunk for the query."""
    ranked = top_notes(store, best, lambda n: -best[n], depth)
    if not ranked:
        return []
    chunks = best_chunks(store, ranked, query_vector)
    out = candidates_for(store, [(n, chunks[n][0], best[n]) for n in ranked if n in chunks], source)
    for c in out:
        c.dense_score = chunks[c.note_id][1]  # shown, and the tie-break; score stays the vote
    return out


def anchor_dense(
    store: IndexStore,
    nearest: Sequence[tuple[int, float]],
    query_vector: np.ndarray,
    depth: int,
    hub: int = DEFAULT_ANCHOR_HUB,
) -> list[Candidate]:
    """Notes linked from the chunks nearest the query, by the best such chunk's cosine.

    ``nearest``: (chunk id, cosine) of the nearest chunks, best first (the dense lane's search,
    at least ``depth × CHUNKS_PER_NOTE`` deep where the index holds that many)."""
    if depth <= 0:
        return []
    passages = list(nearest[: depth * CHUNKS_PER_NOTE])
    return _lane(store, vote(store, passages, hub), query_vector, depth, "anchor_dense")


def anchor_lex(
    store: IndexStore,
    expression: str | None,
    query_vector: np.ndarray,
    depth: int,
    hub: int = DEFAULT_ANCHOR_HUB,
    weights: Sequence[float] = DEFAULT_BM25_WEIGHTS,
    *,
    passages: list[tuple[int, float]] | None = None,
    gone: Collection[int] = frozenset(),
) -> list[Candidate]:
    """Notes linked from the chunks BM25 ranks best for the query, by the best such chunk's score.

    ``expression``: the lexical lane's FTS5 MATCH expression (``lexical.match_expression``);
    ``weights``: its bm25() column weights; ``passages``: the lexical lane's hits for it, best
    first, when it has searched already: the first ``depth × CHUNKS_PER_NOTE`` are read. Sharing
    the lane's search halves the BM25 work of hybrid+ppr (scoring each match is most of it: 30 of
    110 ms at 100,000 notes), and measured as well as weighting every column alike, which it
    replaced (nDCG@10 +0.001, +0.002, +0.001 on the three labelled sets). The passages of the
    notes in ``gone`` (``live_passages``) are not read: the next ones take their places, searched
    for deeper where the lane's hits hold too few others (a gone note of many matching sections)."""
    if depth <= 0:
        return []
    wanted = depth * CHUNKS_PER_NOTE
    if passages is not None:
        live = live_passages(store, passages, gone)
        # The lane searched deeper than this reads: fewer live passages than wanted, none of them
        # left out, are all BM25 has. Some left out: the search goes on below them.
        if len(live) >= wanted or len(live) == len(passages) or expression is None:
            return _lane(store, vote(store, live[:wanted], hub), query_vector, depth, "anchor_lex")
    elif expression is None:
        return []
    found = live_hits(store, lambda reach: store.fts_search(expression, weights, reach), wanted, gone)
    return _lane(store, vote(store, found.hits, hub), query_vector, depth, "anchor_lex")
