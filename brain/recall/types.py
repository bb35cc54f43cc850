"""The data that flows between recall stages."""

from __future__ import annotations

from dataclasses import dataclass, field


@dataclass
class Via:
    """How a graph-promoted note got into the pool."""

    from_path: str
    from_title: str
    direction: str  # "links to" (the hit links to this note) or "linked from" (this note links to the hit)
    kind: str  # wikilink | embed | markdown

    def as_dict(self) -> dict:
        return {"path": self.from_path, "title": self.from_title, "direction": self.direction, "kind": self.kind}


@dataclass
class Candidate:
    """One note in the pool, represented by its best chunk for this query."""

    note_id: int
    path: str
    title: str
    chunk_id: int
    heading: str
    text: str
    dense_score: float
    score: float  # the score the final order is by (dense, fused, or the reranker's)
    date: str | None = None
    via: Via | None = None
    sources: list[str] = field(default_factory=list)  # lanes that proposed it: dense, graph, ...
    rerank_score: float | None = None


@dataclass
class Gate:
    entity: bool
    reason: str

    def as_dict(self) -> dict:
        return {"entity": self.entity, "reason": self.reason}
