"""Reciprocal rank fusion, and the freshness rules applied after it.

RRF: score(note) = Σ over rankers of 1 / (k + rank), rank from 1. It needs no score
calibration between BM25, cosine and PageRank, which is why it is used here.

Freshness: a query about the current state ("current", "latest", "now", "still",
"deadline", ...; Russian "сейчас", "теперь", "до сих пор", "актуальный", ...) prefers the newest note among near-equals; and, for every query, a note
marked superseded never ranks above the note that superseded it.
"""

from __future__ import annotations

import re

from .types import DEFAULT_RRF_K

_TEMPORAL = re.compile(
    r"\b(current(ly)?|latest|newest|now|still|deadline|today|recent(ly)?|as of|up to date|"
    r"these days|anymore|any more|at the moment|so far|текущ\w*|последн\w*|сейчас|актуальн\w*|"
    r"срок\w*|дедлайн\w*|теперь|ныне|нынче|нынешн\w*|новейш\w*|недавн\w*|до сих пор|по-прежнему|"
    r"вс[её] ещ[её]|больше не|уже не|на данный момент|в данный момент|в настоящее время|пока что|"
    r"сегодня\w*)\b",
    re.IGNORECASE | re.UNICODE,
)


def rrf(
    rankings: dict[str, list[int]],
    k: int = DEFAULT_RRF_K,
    weights: dict[str, float] | None = None,
    lane_k: dict[str, int] | None = None,
) -> dict[int, float]:
    """Fused scores by note id from several rankings (lists of note ids, best first).

    ``weights`` scales each ranker's votes (weighted RRF); a ranker not named weighs 1.
    ``lane_k``: k for these rankers (a larger k, flatter votes: its order counts less than its
    list); the others take ``k``.
    """
    fused: dict[int, float] = {}
    for name, ranking in rankings.items():
        weight = (weights or {}).get(name, 1.0)
        lane = (lane_k or {}).get(name, k)
        for rank, note_id in enumerate(ranking, 1):
            fused[note_id] = fused.get(note_id, 0.0) + weight / (lane + rank)
    return fused


def rank_bonus(
    rankings: dict[str, list[int]],
    bonus: tuple[float, ...],
    weights: dict[str, float] | None = None,
    fused: dict[int, float] | None = None,
    scores: dict[str, list[float]] | None = None,
    margin: float = 0.0,
) -> dict[int, float]:
    """Add ``bonus[r - 1]`` (times the lane's weight) to a note a lane ranks r-th, r ≤ len(bonus).

    RRF with k=60 is nearly flat at the top of a list (rank 1 votes 1/61, rank 4 1/64), so a
    note several lanes rank middling beats the one a lane ranks first; a bonus for the top ranks
    keeps a lane's sure answer up (qmd adds +0.05 for rank 1, +0.02 for 2-3). With ``scores``
    (each lane's scores, in rank order) and a ``margin``, a note gets its bonus only when the
    lane is sure of it: the next note scores at least ``margin`` (a share) lower. Two notes a
    lane cannot tell apart stay near-equal, for freshness to decide between.
    """
    fused = dict(fused or {})
    for name, ranking in rankings.items():
        weight = (weights or {}).get(name, 1.0)
        lane = (scores or {}).get(name)
        for rank, note_id in enumerate(ranking[: len(bonus)], 1):
            if margin > 0 and lane and len(lane) > rank:
                here, after = lane[rank - 1], lane[rank]
                if here <= 0 or (here - after) / here < margin:
                    continue
            fused[note_id] = fused.get(note_id, 0.0) + weight * bonus[rank - 1]
    return fused


FIRST_MARGIN = 0.01  # a note put first leads the next by this (times the lane's weight): a rank-1 bonus


def put_first(fused: dict[int, float], note_id: int, margin: float) -> dict[int, float]:
    """``fused`` with ``note_id`` first, ``margin`` above the best of the others."""
    others = max((score for other, score in fused.items() if other != note_id), default=0.0)
    return {**fused, note_id: max(fused.get(note_id, 0.0), others + margin)}


def score_fusion(
    scored: dict[str, list[tuple[int, float]]], weights: dict[str, float] | None = None
) -> dict[int, float]:
    """Weighted sum of each lane's scores, min-max scaled within the lane (its best is 1, its last 0).

    Unlike RRF it keeps a lane's margins: a lane sure of one note and unsure of the rest gives
    the rest little; a note a lane did not list gets nothing from it.
    """
    fused: dict[int, float] = {}
    for name, pairs in scored.items():
        if not pairs:
            continue
        weight = (weights or {}).get(name, 1.0)
        values = [s for _, s in pairs]
        top, bottom = max(values), min(values)
        span = top - bottom
        for note_id, value in pairs:
            scaled = (value - bottom) / span if span > 0 else 1.0
            fused[note_id] = fused.get(note_id, 0.0) + weight * scaled
    return fused


def is_temporal(query: str) -> bool:
    return bool(_TEMPORAL.search(query))


def recency(dates: dict[int, str | None]) -> dict[int, float]:
    """Each note's date as a position from 0 (oldest in the pool) to 1 (newest)."""
    known = sorted({d[:10] for d in dates.values() if d})
    if len(known) < 2:
        return {note_id: 0.0 for note_id in dates}
    position = {d: i / (len(known) - 1) for i, d in enumerate(known)}
    return {note_id: position[d[:10]] if d else 0.0 for note_id, d in dates.items()}


def order_successors_first(order: list[int], successor: dict[int, int]) -> list[int]:
    """Move each successor just above the note it supersedes when it ranks below it.

    ``successor`` maps a superseded note id to the id of the note that replaced it; a chain
    (A → B → C) is followed to its end. Notes not in ``order`` are inserted. One pass, each
    note placed once: a note comes after its successor chain, as far as that is not placed
    already (a cycle ends where it comes back), so a chain of a thousand costs its length.
    """
    result: list[int] = []
    placed: set[int] = set()
    for note in order:
        if note in placed:
            continue
        chain, seen = [note], {note}
        after = successor.get(note)
        while after is not None and after not in placed and after not in seen:
            chain.append(after)
            seen.add(after)
            after = successor.get(after)
        result.extend(reversed(chain))
        placed.update(chain)
    return result
