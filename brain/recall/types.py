"""The data that flows between recall stages: modes, settings, candidates, results."""

from __future__ import annotations

from dataclasses import dataclass, field

from .. import config
from ..errors import ConfigError, quoted

BASE_MODES = ("vector", "graph", "gated", "hybrid", "ppr", "hybrid+ppr")
# Chosen by measurement on both labelled sets (README, "Does the graph help?").
DEFAULT_MODE = "hybrid+ppr"
# What `brain ask --ab` and `brain eval --ab-log` compare: the default mode without the lanes that
# read the links and with them, so a note new in B's top k is one the graph's votes brought there.
AB_MODES = ("hybrid", DEFAULT_MODE)
DEFAULT_K = 12  # notes a query returns
DEFAULT_DEPTH = 60  # distinct notes wanted from the dense and lexical lanes


def default_depth(k: int) -> int:
    """The lanes' depth when none is given: ``DEFAULT_DEPTH``, or ``k`` when more (a lane gives at
    most its depth: ``brain ask --mode vector -k 100`` answered 60 notes)."""
    return max(DEFAULT_DEPTH, k)


DEFAULT_SEEDS = 15  # top notes the graph starts from
DEFAULT_MAX_NEW = 40  # new notes the one-hop expansion may add
DEFAULT_RRF_K = 60
DEFAULT_PPR_ALPHA = 0.85  # probability of following a link rather than jumping back to a seed
# PageRank's scores divided by each note's degree ** this: an index note every walk passes
# through ranks by how close it is to these seeds, not by how many notes it touches. 0.5 and
# 0.7 lifted nDCG@10 on all three labelled sets, 0.3 and 1.0 did not (README, "What each stage
# is worth"); the square root, the lower of the two.
DEFAULT_PPR_DEGREE_NORM = 0.5
# RRF votes per lane, chosen on three labelled sets (bench/quality_ablation.py; README, "Does
# the graph help?"). BM25 at 0.3: at full weight its hits on common words pushed the right note
# down on paraphrase queries (mini-benchmark nDCG@10 0.74 → 0.45). The names lane at 0.3
# settles compare and entity queries; the anchor lanes at 0.2 find bridge answers, and above
# that cost navigational and paraphrase queries more than dense alone; PageRank at 0.5 once
# the anchors vote too. The dates lane (a query that names a period) at 1.0: vaultofknowledge's
# temporal nDCG@10 0.72 -> 0.85 (0.80 at 0.5), its blind set's 0.64 (dense) -> 0.83 (0.77 at
# 0.5); the mini-benchmark's temporal queries, which name a topic as well as a month, the same
# at 0.5 and 1.0; the SRD names no period. The folders lane (a query that names a folder) at
# 0.2: nDCG@10 +0.005 / +0.010 / +0.002 on the tuned sets, +0.010 / +0.001 on the blind ones
# (0.3 also up on all five, less evenly; 0.1 costs the SRD 0.004).
# The bridge lane (a question of 12 words or more: the notes its first notes link to) at 0.2:
# +0.007 / +0.009 / +0.014 tuned, +0.015 / +0.008 blind; 0.1 and 0.3 each cost a set 0.004+.
DEFAULT_LANE_WEIGHTS = {
    "dense": 1.0,
    "lexical": 0.3,
    "ppr": 0.5,
    "names": 0.3,
    "dates": 1.0,
    "anchor_dense": 0.2,
    "anchor_lex": 0.2,
    "folders": 0.2,
    "bridge": 0.2,
}
# RRF's k for some lanes (the others take rrf_k): a larger k, flatter votes. MiniLM's cosines
# for a query's neighbourhood differ by hundredths, so the dense lane's fourth note is hardly
# less likely than its first, yet at k=60 its vote outweighed what a bridge question reaches
# through the anchor lanes and PageRank. At 120 (its sure answers keep their bonus) bridge
# recall@10 rose 0.73 → 0.82 on the SRD's set and 0.69 → 0.77 on its blind set, the other sets
# within ±0.003; 120 for every lane was worse on all five (README, "What each stage is worth").
DEFAULT_LANE_RRF_K = {"dense": 120}
# ... but RRF's own k for the dense lane where the query asks for a note as a note
# (RecallSettings.note_dense_rrf_k).
DEFAULT_NOTE_DENSE_RRF_K = 60
# A stub's share of its fused score lost (RecallSettings.stub_discount): 1, below every note with text.
DEFAULT_STUB_DISCOUNT = 1.0
# A name's share of a query that compares (RecallSettings.names_compare_share), where any other
# query's name needs 0.25 (names.MIN_QUERY_SHARE). 0.15: +0.003 / +0.000 / +0.006 tuned, +0.000 /
# +0.001 blind, 6 queries up, 1 down; 0.125 (half) cost the SRD 0.005 (README, "What each stage is
# worth").
DEFAULT_NAMES_COMPARE_SHARE = 0.15
# A lane's first three notes get this much more (times the lane's weight), where the lane
# is sure of them: the next note scores at least BONUS_MARGIN (a share) lower. RRF is nearly
# flat at the top of a list, so a sure answer lost to notes several lanes rank middling.
DEFAULT_TOP_BONUS: tuple[float, ...] = (0.01, 0.005, 0.0025)
BONUS_MARGIN = 0.05
# A lane's bonus times this (1 for a lane not named). From stop 27 to 38 the anchor lanes' bonus
# counted twice their weight, for bridge questions whose answer both anchor lanes put first;
# since the dense lane's votes are flatter (DEFAULT_LANE_RRF_K) that doubled bonus outweighed
# dense and freshness ("when is Halyard going GA now?": the note of the person both anchor lanes
# put first came above the decision asked for; the mini-benchmark's temporal nDCG@10 0.73 →
# 0.68), and bridge recall barely needs it now (README, "What each stage is worth").
# The bridge lane's bonus is its first note's alone, and only where that note stands clear of the
# others (DEFAULT_BRIDGE_MARGIN) and the query compares nothing: then it is the note a bridge
# question asks about, which the note it describes outranked by one place (nDCG@10 0.63 -> 1.00
# for such a question). At 3× its weight, with the passage rule (bridge.py), against stop 42:
# +0.009 / +0.011 / +0.005 tuned, +0.008 / +0.005 blind (2× and 5× also up on all five); its
# plain bonus, on its first three notes by share, was -0.002 to +0.005 a set.
DEFAULT_BONUS_SCALE: dict[str, float] = {"bridge": 3.0}
# The lanes that read the links: PageRank, the anchor lanes (the passages that link to a note)
# and the bridge lane (the notes the first hits link to). A note only they brought to the fused
# pool is one the graph added (``RecallResult.candidates_added``, the A/B log).
GRAPH_LANES = frozenset({"ppr", "anchor_dense", "anchor_lex", "bridge"})
FUSION_METHODS = ("rrf", "score")
DEFAULT_BM25_WEIGHTS = (4.0, 2.0, 1.0)  # bm25() column weights: title, heading, text
FRESHNESS_BOOST = 0.15  # at most +15% to the newest note of the pool, 0 to the oldest
# A bridge question describes one note and asks about another: words for both. The labelled
# sets' bridge questions run 12 to 62 words; 10 and 15 gave the same figures (README) until the
# lane's first note took a bonus (stop 43): now 10 the same (±0.005), 15 costs the SRD 0.012.
DEFAULT_BRIDGE_MIN_WORDS = 12
# ... and its first note is sure when its cosine with what is left of the query leads every other
# note's by this much (a cosine, not a share: the lane scores unit vectors; a share of the small
# cosines what is left finds cost vaultofknowledge 0.005). 0.06 to 0.12 all lifted or kept every
# set; 0.06 less evenly (vaultofknowledge level, 2 queries up and 2 down).
DEFAULT_BRIDGE_MARGIN = 0.08
DEFAULT_ANCHOR_HUB = 30  # outgoing links above which a note counts as an index/hub note (anchor lanes)
# PageRank restarts from no such note (unless only hubs matched): an index note spreads the walk
# over everything it lists. Measured at stop 27 with 20, 30, 50 and 100 links: none lost a
# labelled query, 20 and 30 won two (README, "What each stage is worth").
DEFAULT_PPR_HUB_SEEDS = DEFAULT_ANCHOR_HUB
# The dense lane's discount of long documents (dense.py): a note of more chunks than this loses
# DEFAULT_LONG_NOTE_DISCOUNT × ln(chunks / LONG_NOTE_CHUNKS) of its best chunk's cosine. Measured
# on the three labelled sets: 12-32 chunks and 0.01-0.05 all lifted the SRD (+0.010 to +0.016
# nDCG@10) and vaultofknowledge (+0.001 to +0.007) and left the mini-benchmark (no note over 8
# chunks) as it was; from 8 chunks on, a 10-chunk note vaultofknowledge asks for fell out of the
# top 10 (README, "What each stage is worth").
LONG_NOTE_CHUNKS = 16
DEFAULT_LONG_NOTE_DISCOUNT = 0.02


@dataclass(frozen=True)
class Mode:
    base: str  # one of BASE_MODES
    rerank: bool

    @classmethod
    def parse(cls, text: str | Mode) -> Mode:
        if isinstance(text, Mode):
            return text
        name = text.strip().lower().replace("dense", "vector")
        rerank = name.endswith("+rerank")
        base = name[: -len("+rerank")] if rerank else name
        if base not in BASE_MODES:
            raise ConfigError(
                f"unknown mode {quoted(text)}: use one of {', '.join(BASE_MODES)}, each optionally +rerank"
            )
        return cls(base, rerank)

    @property
    def hop(self) -> bool:
        return self.base in ("graph", "gated")

    @property
    def lexical(self) -> bool:
        return self.base.startswith("hybrid")

    @property
    def ppr(self) -> bool:
        return self.base.endswith("ppr")

    @property
    def fused(self) -> bool:
        return self.lexical or self.ppr

    @property
    def graph_lanes(self) -> frozenset[str]:
        """The fused lanes of this mode that read the links (``Candidate.sources`` names them);
        the hop of graph and gated is not a lane: its notes carry ``via`` instead."""
        if not self.ppr:
            return frozenset()
        return GRAPH_LANES if self.lexical else GRAPH_LANES - {"bridge"}  # bridge: both families

    def __str__(self) -> str:
        return self.base + ("+rerank" if self.rerank else "")


@dataclass
class RecallSettings:
    k: int = DEFAULT_K
    depth: int = DEFAULT_DEPTH  # distinct notes from the dense (and lexical) lanes
    seeds: int = DEFAULT_SEEDS  # top notes whose links are followed / PageRank restarts from
    max_new: int = DEFAULT_MAX_NEW  # new notes the hop may add
    pool: int = field(default_factory=config.rerank_pool)  # notes the reranker scores
    rrf_k: int = DEFAULT_RRF_K
    lane_rrf_k: dict[str, int] = field(default_factory=lambda: dict(DEFAULT_LANE_RRF_K))  # k for these lanes
    ppr_alpha: float = DEFAULT_PPR_ALPHA
    ppr_degree_norm: float = DEFAULT_PPR_DEGREE_NORM  # PageRank scores over degree ** this (0: as they are)
    freshness: float = FRESHNESS_BOOST
    prefer_present: bool = True  # fused modes: successors above the superseded, temporal queries newest first
    weights: dict[str, float] = field(default_factory=lambda: dict(DEFAULT_LANE_WEIGHTS))  # RRF votes per lane
    chunk_decay: float = 0.0  # a note scores best chunk + decay × second + decay² × third ... (dense, lexical)
    long_note_discount: float = DEFAULT_LONG_NOTE_DISCOUNT  # dense: × ln(chunks / long_note_chunks) off long notes
    long_note_chunks: int = LONG_NOTE_CHUNKS  # ... of more chunks than this
    max_of_n: float = 0.0  # dense: a note of N chunks loses this × σ of the reached cosines × E[max of N normals]
    max_of_n_reached: bool = False  # ... × the share of its other chunks the search did not reach
    lexical_weights: tuple[float, ...] = DEFAULT_BM25_WEIGHTS  # bm25() weights of the FTS columns
    fusion_method: str = "rrf"  # "rrf" (ranks) or "score" (each lane's scores, min-max scaled, weighted)
    top_bonus: tuple[float, ...] = DEFAULT_TOP_BONUS  # RRF: extra votes for a lane's ranks 1, 2, ... (× its weight)
    bonus_scale: dict[str, float] = field(default_factory=lambda: dict(DEFAULT_BONUS_SCALE))  # a lane's bonus × this
    bonus_margin: float = BONUS_MARGIN  # ... only where the lane's score drops this much (a share) after it
    ppr_seed_scores: bool = False  # PageRank restarts weighted by the hits' scores, not their ranks
    ppr_hub_seeds: int = DEFAULT_PPR_HUB_SEEDS  # no PageRank restarts from notes of more links than this (0: any)
    anchor_hub: int = DEFAULT_ANCHOR_HUB  # a note linking to more notes than this votes less as an anchor
    name_first: bool = True  # fused modes with the names lane: the one note the query names whole comes first
    respell: bool = True  # ... and a short query's word no chunk holds searched as the name word it misspells
    bridge_min_words: int = DEFAULT_BRIDGE_MIN_WORDS  # the bridge lane answers queries of this many words or more
    bridge_margin: float = DEFAULT_BRIDGE_MARGIN  # ... and its first note takes its bonus when this far ahead
    bridge_in_passage: bool = True  # ... ranking first the notes the described passage links to
    # ... and its first note goes first where anchor_lex puts it first too and the query asks
    # something other than why (bridge.agreed_first): +0.024 / +0.024 / +0.000 tuned, +0.024 /
    # +0.000 blind (README, "What each stage is worth").
    bridge_agreed_first: bool = True
    # A description (it asks nothing) whose dense and BM25 lanes put the same note first, that
    # note's best passage linking to the note an anchor or bridge lane puts first: the link lanes
    # read the answer's own mention, so the described note goes first (bridge.described_first).
    # +0.002 / +0.000 / +0.005 tuned, +0.000 / +0.000 blind: 2 queries of the five sets up, none
    # down (README, "What each stage is worth").
    described_first: bool = True
    # A query that asks for a note by what it is ("the note on what hardware I need to run LLMs
    # locally": query_form.seeks_note) fuses the dense lane's order at RRF k this instead of
    # lane_rrf_k's (0: as any query): RRF's own k, the dense lane's until stop 39 flattened it for
    # bridge questions, which ask. The dense lane reads what such a note is about; BM25 the words
    # its description happens to use, and PageRank restarts from those hits. 22 queries of the
    # five sets take that form; one moves, up (vok-057 0.00 → 0.29, vaultofknowledge's
    # navigational nDCG@10 0.90 → 0.93 against dense's 0.94). At 45 a blind query falls, at 75 and
    # 90 none moves; 60 for every query that asks nothing and names no note: 21 up, 18 down
    # (README, "What each stage is worth").
    note_dense_rrf_k: int = DEFAULT_NOTE_DENSE_RRF_K
    # Stubs: notes with nothing past their title (vaultofknowledge has 268, 185 of them linked
    # to: following a link to a note never written leaves an empty file). The index gives each
    # its title as its one chunk, and a title can match a query better than any note's text:
    # "Entry of 6th Jun, 2025", empty, came first for "what was on my mind in my June 2025
    # journal". In fused modes a stub the query does not name loses this share of its fused
    # score: at 1 it ranks below every note with text (it has nothing to show).
    # +0.000 / +0.000 / +0.007 tuned, +0.000 / +0.003 blind: 4 queries up, none down; at 0.5
    # vaultofknowledge's two sets +0.002 and +0.001 (README, "What each stage is worth").
    stub_discount: float = DEFAULT_STUB_DISCOUNT
    # The names lane: the share of the query's IDF mass a name must account for where the query
    # compares ("linear vs shortcut for issue tracking" names two notes and a topic; each name
    # held under a quarter of it, the share any other query's name needs: names.MIN_QUERY_SHARE;
    # "TimescaleDB or ClickHouse for telemetry, what's the difference for us?" a fifth each).
    names_compare_share: float = DEFAULT_NAMES_COMPARE_SHARE
    # ... and a title written as a site ("Linear.app", "Shortcut.com") answering to its name
    # without the domain (names.SITE_DOMAINS), never whole so.
    names_site_domains: bool = True


@dataclass
class Via:
    """How a graph-promoted note got into the pool."""

    from_path: str
    from_title: str
    direction: str  # "links to" (the hit links to this note) or "linked from" (this note links to the hit)
    kind: str  # wikilink | embed | markdown

    def as_dict(self) -> dict[str, str]:
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
    recorded_from: float | None = None  # when brain first saw the version shown (Unix time)
    recorded_to: float | None = None  # when it was replaced; None: still current
    # A view of the past names a note by its path then, which another note may hold now:
    moved_to: str | None = None  # its path now, when not ``path``
    gone: str | None = None  # how it left the index since: deleted, unreadable
    path_reused: bool = False  # a different note is at ``path`` now
    named: bool = False  # names lane: the query is this note's name, whole (names.NameMatch.whole); fused: put first
    agreed: bool = False  # the bridge lane and anchor_lex both put it first: put first (bridge.agreed_first)
    described: bool = False  # a description of it, its passage's link read by the link lanes: put first

    def says_only_its_title(self) -> bool:
        """Whether its passage holds nothing but the note's title, or a heading line of it: what the
        index gives a note with no body (an empty file, frontmatter alone) as its one chunk."""
        body = self.text.strip()
        if body.startswith("#"):
            body = body.lstrip("#").strip()
        return not body or body == self.title.strip()


@dataclass
class Gate:
    entity: bool
    reason: str

    def as_dict(self) -> dict[str, object]:
        return {"entity": self.entity, "reason": self.reason}


@dataclass
class RecallResult:
    query: str
    mode: str  # the mode that ran: the one asked without each part none of whose stages ran (Recaller._mode_that_ran)
    gate: Gate
    results: list[Candidate]
    graph_used: bool = False
    candidates_added: int = 0  # notes the graph added to the pool: the hop's, or those only GRAPH_LANES found
    reranked: bool = False
    warnings: list[str] = field(default_factory=list)
    fallbacks: dict[str, bool] = field(
        default_factory=lambda: dict.fromkeys(("graph", "lexical", "names", "dates", "folders", "rerank"), False)
    )
    timings_ms: dict[str, float] = field(default_factory=dict)
    stale: int = 0  # notes changed since the index, when not updated
    as_of: float | None = None  # recall over the vault as brain knew it then (Unix time)
    valid_at: str | None = None  # only notes that say they held on this world date
    # Each lane's own ranking, by lane name, as the mode fused them (`brain eval --explain`);
    # in-process only: a server does not send it.
    lanes: dict[str, list[Candidate]] = field(default_factory=dict)
    lexical_match: str | None = None  # the FTS5 expression BM25 searched, in modes with BM25 (`eval --explain`)
