"""Bridge lane: a question that describes one note and asks about a note it links to.

"The 9th-level tentacled aberration that rips spells out of PCs' minds can teleport back to
its home once it has stolen one. What exactly is that home?" Every lane finds the aberration:
the question describes it. The answer is the note its text links to (*Underkrakens*), and the
question's words say little about that note, because most of them are spent on the first.
This lane takes the note the dense lane and the note BM25 put first (the note described),
explains them away from the query vector (what is left of it once its part along their best
chunks is taken out: the part of the question they do not answer), and ranks the notes they
link to by their best chunk's cosine with what is left. The notes the passages the question
matched (those best chunks) link to come first: the question describes that passage, and the
note it asks about is the one the passage names ("its lair, the [[Underkrakens]]"); a note
linked elsewhere in a long note is seldom it, and comes after them.

Only a long query is such a question (``min_words``): it needs words for the note it describes
and words for what it asks. On a short one, a lookup, a name, two things compared, the notes
the first note links to are no answer, and their votes pushed the second compared note or the
newest decision down (README, "What each stage is worth"). Its first note is a guess unless it
stands clear of the others (``sure_first``): only then does it take the top-rank bonus, and
the question's second note goes above the note it describes. Never for a question that
compares (``compares``): it names both notes it asks about, there is no hidden second one.
When BM25's best passages vote first for the same note (the anchor_lex lane), two lanes that
read different evidence, the words of the passages and what is left of the question's vector,
name it: for a query that asks something (``asks``) it is put first (``agreed_first``). A
description that asks nothing ("dimensionless number saying whether a droplet breaks up from
stickiness or from momentum") wants the note it describes, and so does a question that only
asks why (``asks_only_why``): it asks for that thing's explanation.
"""

from __future__ import annotations

from collections.abc import Callable, Sequence
from typing import TYPE_CHECKING

from .anchors import linked_from_chunks
from .dense import ChunkVectors, candidates_for
from .query_form import asks, asks_in_any_form, asks_only_why, compares
from .ties import top_notes
from .types import Candidate, Via

if TYPE_CHECKING:
    import numpy as np

    from ..index.store import IndexStore

DESCRIBED = 1  # each of the dense and lexical lanes' first notes is taken as the note described
MAX_TARGETS = 2_000  # an index note's links beyond this many are not scored (bounded cost)


def long_enough(query: str, min_words: int) -> bool:
    """A query of at least ``min_words`` words as written (a run of text without spaces is one)."""
    return len(query.split()) >= min_words


def explained_away(query_vector: np.ndarray, vectors: Sequence[np.ndarray]) -> np.ndarray | None:
    """The query vector without its part along each of ``vectors`` (Gram-Schmidt, in order),
    normalised; None when nothing is left (the query is those vectors)."""
    import numpy as np

    rest = np.asarray(query_vector, dtype=np.float32).copy()
    for vector in vectors:
        rest -= float(rest @ vector) * vector
    norm = float(np.linalg.norm(rest))
    return rest / norm if norm > 1e-6 else None


def bridge_search(
    store: IndexStore,
    query: str,
    query_vector: np.ndarray,
    dense: Sequence[Candidate],
    lexical: Sequence[Candidate],
    depth: int,
    min_words: int,
    in_passage: bool = True,
) -> list[Candidate]:
    """The notes the dense and lexical lanes' first notes link to, by their best chunk's cosine
    with the query once those first notes are explained away, best first (``score``: that
    cosine; ``dense_score``: the plain query's). Nothing for a query under ``min_words`` words.
    With ``in_passage``, the notes their passages closest to the query link to come first."""
    if depth <= 0 or not long_enough(query, min_words):
        return []
    described = list(dict.fromkeys(c.note_id for c in [*dense[:DESCRIBED], *lexical[:DESCRIBED]]))
    if not described:
        return []
    linked_from: dict[int, tuple[int, str]] = {}  # target -> (the described note linking to it, link kind)
    for source, target, direction, kind in store.neighbour_edges(described):
        if direction == "links to" and target not in described and target not in linked_from:
            linked_from[target] = (source, kind)
            if len(linked_from) >= MAX_TARGETS:
                break
    if not linked_from:
        return []
    closest = ChunkVectors(store, described).closest(query_vector)
    passages = [closest[n] for n in described if n in closest]  # (chunk id, vector): what the question describes
    rest = explained_away(query_vector, [vector for _, vector in passages])
    if rest is None:
        return []
    passage: set[int] = set()
    if in_passage:
        named = linked_from_chunks(store, [chunk_id for chunk_id, _ in passages])
        passage = {target for targets in named.values() for target in targets}
    targets = ChunkVectors(store, list(linked_from))  # read once, scored by what is left and by the query
    by_rest = targets.best(rest)
    order = top_notes(store, by_rest, lambda n: (n not in passage, -by_rest[n][1]), depth)
    plain = targets.best(query_vector)
    found = candidates_for(store, [(n, *plain[n]) for n in order if n in plain], "bridge")
    sources = store.notes_brief(sorted({linked_from[c.note_id][0] for c in found}))
    for c in found:
        source, kind = linked_from[c.note_id]
        c.score = by_rest[c.note_id][1]
        path, title = sources.get(source, ("", ""))
        c.via = Via(path, title, "links to", kind)
    return found


def sure_first(found: Sequence[Candidate], margin: float, query: str = "") -> list[int]:
    """The lane's first note, alone, when its cosine with what is left of the query leads every
    other note's by ``margin`` or more (a lone note leads nothing, scored 0); else nothing, and
    nothing for a query that compares. The ranking the fusion's top-rank bonus reads for this
    lane: a clear first is the note the question asks about, a close race is not, and its
    second and third notes never are."""
    if not found or compares(query):
        return []
    runner_up = max((c.score for c in found[1:]), default=0.0)
    return [found[0].note_id] if found[0].score - runner_up >= margin else []


def agreed_first(found: Sequence[Candidate], anchor_lex: Sequence[Candidate], query: str) -> int | None:
    """The lane's first note when the anchor_lex lane (BM25's best passages voting for the notes
    they link to) puts the same note first, the query asks something, not only why, and compares
    nothing: the note the question asks about, to be put first. None otherwise."""
    first = agreed(found, anchor_lex)
    if first is None or kept_in_place(query) is not None:
        return None
    return first


def described_first(
    dense: Sequence[Candidate],
    lexical: Sequence[Candidate],
    link_firsts: Sequence[int],
    linked: Callable[[int], Sequence[int]],
    query: str,
) -> int | None:
    """The note a description is of, when the link lanes would put a note it mentions above it.

    The dense and BM25 lanes put the same note first, the query asks nothing (no question mark,
    no question word, no question's opening, no "…, can I finish it off"), so it describes a
    note rather than asking through a link, and that note's best passage (the dense lane's)
    links to a note ``link_firsts`` holds (the anchor and bridge lanes' first notes): those
    lanes are reading the answer's own mention of the note it links to ("the default random
    generator in python…" is *Mersenne-Twister*, whose passage names *Pseudorandom Number
    Generator*). ``linked`` gives a chunk's link targets; it is asked only once the cheap tests
    pass. None otherwise.
    """
    if not dense or not lexical or dense[0].note_id != lexical[0].note_id or asks_in_any_form(query):
        return None
    first = dense[0]
    others = {note_id for note_id in link_firsts if note_id != first.note_id}
    if not others or not others.intersection(linked(first.chunk_id)):
        return None
    return first.note_id


def agreed(found: Sequence[Candidate], anchor_lex: Sequence[Candidate]) -> int | None:
    """The note this lane and the anchor_lex lane both put first, if they do."""
    if not found or not anchor_lex or found[0].note_id != anchor_lex[0].note_id:
        return None
    return found[0].note_id


def kept_in_place(query: str) -> str | None:
    """Why a note both lanes put first is not put first for this query (it wants the note it
    describes, or names the notes it wants), in words for ``brain eval --explain``; None: it is."""
    if compares(query):
        return "compares"
    if not asks(query):
        return "asks nothing"
    if asks_only_why(query):
        return "asks only why"
    return None
