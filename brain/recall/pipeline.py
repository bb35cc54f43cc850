"""The recall pipeline over one vault's index: lanes → (hop | fusion) → rerank → freshness.

A ``Recaller`` holds what is expensive (the index store, the vectors, the embedder, the link
graph, the reranker) and answers many queries; it only reads. ``Recaller.ask`` runs one mode,
``Recaller.compare`` several modes over shared work. Modes:

    vector        dense only
    graph         dense + one hop along wikilinks, ungated
    gated         dense + one hop, unless the entity gate says the query is a name
    hybrid        dense + lexical (BM25) + names, dates and folders, fused by reciprocal rank
    ppr           dense + Personalized PageRank + anchors (the passages linking to a note), fused
    hybrid+ppr    all of them and the bridge lane (needs both families), fused (the default)
    …+rerank      any of the above, reordered by the cross-encoder

Fused modes also apply freshness: a superseded note never outranks its successor, and a
query about the current state prefers the newest of near-equal notes.

Every optional stage degrades to the previous stage's result on the failures it expects (a
database error, memory, a missing optional library): a warning in the log and in
``RecallResult.warnings``, a flag in ``RecallResult.fallbacks``. Anything else is a bug and
is raised. ``open_recaller`` (recall/opening.py) builds a Recaller for a vault.
"""

from __future__ import annotations

import logging
import marshal
import math
import sqlite3
import time
from collections.abc import Callable, Iterable, Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import TYPE_CHECKING, Any, Literal

from .. import config
from ..errors import BrainError, ConfigError, EmptyQuery, IndexMismatchError, ModelLoadError, asks_nothing
from ..index.health import index_errors, search_index_damaged
from ..moments import local_datetime
from ..text import for_search, plural, shell_word, valid_unicode
from . import anchors as anchors_stage
from . import bridge as bridge_stage
from . import carry, fusion, past_carry, query_form, ties
from . import dates as dates_stage
from . import dense as dense_stage
from . import folders as folders_stage
from . import graph as graph_stage
from . import lexical as lexical_stage
from . import names as names_stage
from . import ppr as ppr_stage
from .gate import Holders, entity_gate, name_table
from .live import live_hits
from .past import PastIndex
from .rerank import load_reranker
from .ties import best_first
from .types import DEFAULT_MODE, GRAPH_LANES, Candidate, Gate, Mode, RecallResult, RecallSettings

if TYPE_CHECKING:
    import numpy as np

    from ..embed import Embedder
    from ..index.store import IndexStore
    from ..index.vectors import VectorIndex
    from .past import FlatVectors, LayeredVectors

__all__ = ["DEFAULT_MODE", "Mode", "QueryState", "RecallResult", "RecallSettings", "Recaller"]

# The lanes that vote for the notes passages link to (``RecallSettings.described_first``).
_LINK_LANES = ("anchor_lex", "anchor_dense", "bridge")

log = logging.getLogger("brain")

DiskCache = Literal["off", "read", "write"]  # recall/cache.py: never, take what a run kept, also keep

# What a graph stage may fail with and still fall back to the result without it: the index
# database, memory, or scipy missing. Anything else is a bug and must fail loudly.
GRAPH_FAILURES = (sqlite3.Error, MemoryError, ImportError)
# What a lane beyond dense, BM25 and PageRank may fail with: the index database, or memory.
LANE_FAILURES = (sqlite3.Error, MemoryError)


@dataclass(frozen=True)
class ExtraLane:
    """A lane beyond dense, BM25 and PageRank: it joins the modes of one family when its weight is > 0."""

    family: tuple[str, ...]  # the Mode properties a mode needs: "lexical" (hybrid modes), "ppr" (PageRank modes)
    failures: tuple[type[BaseException], ...]  # what it falls back on: fused without it, a warning
    flag: str  # the ``RecallResult.fallbacks`` entry a failure sets


# The names lane is lexical evidence (hybrid modes); the anchor lanes, the passages that link
# to a note, are graph evidence (PageRank modes). The bridge lane follows the links of the
# dense and BM25 lanes' first notes: both families. Each falls back under its own flag.
EXTRA_LANES = {
    "names": ExtraLane(("lexical",), LANE_FAILURES, "names"),
    "dates": ExtraLane(("lexical",), LANE_FAILURES, "dates"),
    "folders": ExtraLane(("lexical",), LANE_FAILURES, "folders"),
    "anchor_dense": ExtraLane(("ppr",), LANE_FAILURES, "graph"),
    "anchor_lex": ExtraLane(("ppr",), LANE_FAILURES, "graph"),
    "bridge": ExtraLane(("lexical", "ppr"), LANE_FAILURES, "graph"),
}


def stub_notes(store: IndexStore, candidates: Iterable[Candidate]) -> set[int]:
    """Of these candidates, the notes with nothing past their title: one chunk, holding the
    title (what the index gives a note with no body: an empty file, frontmatter alone) or a
    heading line of it alone. Every lane's candidate carries one of its note's chunks."""
    suspects = {c.note_id: c for c in candidates if c.says_only_its_title()}
    if not suspects:
        return set()
    counts = store.note_chunk_counts(list(suspects))
    return {note_id for note_id in suspects if counts.get(note_id) == 1}


@dataclass
class QueryState:
    """The work one query shares between the modes that answer it."""

    query: str
    vector: np.ndarray
    gate: Gate
    lanes: dict[str, list[Candidate]]  # "dense", then "lexical", "names", …, "ppr", "ppr+lexical" as computed
    timings: dict[str, float]  # ms of each shared step, by name
    hop: list[Candidate] | None = None  # the one-hop additions, once computed
    failures: dict[str, str] = field(default_factory=dict)  # step → warning, for steps that fell back
    # (note id, chunk id) → cross-encoder score: by passage, as modes show one note by different chunks
    rerank_scores: dict[tuple[int, int], float] = field(default_factory=dict)
    match: str | None = None  # the FTS5 MATCH expression (None: the query has no searchable term) ...
    match_known: bool = False  # ... once computed
    anchor_passages: list[tuple[int, float]] | None = None  # the lexical lane's BM25 hits, which anchor_lex reads
    nearest_chunks: list[tuple[int, float]] = field(
        default_factory=list
    )  # the dense search's, which anchor_dense reads
    # lane ("hop" the hop's) → the notes it found whose file is gone (Recaller.gone), left out of it
    gone_found: dict[str, set[int]] = field(default_factory=dict)


class Recaller:
    """Answers queries over one vault's index. It reads the index and never writes it."""

    def __init__(
        self,
        store: IndexStore,
        vectors: VectorIndex | LayeredVectors | FlatVectors,
        embedder: Embedder,
        *,
        root: Path,
        rerank_model: str | bool | None = True,
        stale: int = 0,
        warnings: Sequence[str] = (),
        disk_cache: DiskCache = "off",
    ):
        self.store = store
        self.vectors = vectors
        self.embedder = embedder
        self.root = root
        self.model_name = embedder.name
        self.rerank_model = config.rerank_model_name() if rerank_model is True else (rerank_model or None)
        self.stale = stale  # notes changed since the index, when it was not brought up to date
        self.warnings = list(warnings)  # said once when opening; repeated on every result
        self._names: dict[str, str] | None = None
        self._holders: Holders | None = None  # built and taken over with the names
        self._kept_name_index: bytes | None = None  # the name index kept on disk, not read yet (carry.Built)
        self._name_index: names_stage.NameIndex | None = None
        self._link_graph: ppr_stage.LinkGraph | None = None
        # The link graph without the links of the notes whose file is gone (Recaller.gone), made
        # for that set and that graph: (the graph, the gone notes, the graph without their links).
        self._living_graph: tuple[ppr_stage.LinkGraph, frozenset[int], ppr_stage.LinkGraph] | None = None
        self._successors: dict[int, int] | None = None
        self._date_index: dates_stage.DateIndex | None = None
        self._folder_index: folders_stage.FolderIndex | None = None
        self._basis: carry.Basis | None = None
        # "read": take the names and link graph kept by an earlier run (recall/cache.py) when
        # first needed; "write": also keep them for the next run, on close, if built here.
        self.disk_cache = disk_cache
        self._disk_checked = disk_cache == "off"
        self._built_here: set[str] = set()
        # Over a view of the past, the cache is the present's: the view takes the present's
        # names and link graph and applies the difference (recall/past_carry.py).
        self._present: Recaller | None = None
        self._present_cache: DiskCache = "off"
        self._difference: past_carry.Difference | None = None  # of the names: the view's against the present's
        self._index_with_names = False  # the present's name index came with the names the difference is of
        self._present_lent = False  # the present's is a recaller over the very state this view reads
        if isinstance(store, PastIndex):
            self._present_cache, self.disk_cache, self._disk_checked = disk_cache, "off", True
        self.reranker_error: str | None = None  # why the reranker did not run, once it failed
        self._model_changed: str | None = None  # why the model is not the index's ("": it is), once checked
        self.timings_ms: dict[str, float] = {}  # what opening it cost, by step (open_recaller fills it)
        # Notes whose file is gone while the index could not be updated (recall/opening.py):
        # left out of every answer, since a path that no longer exists is no answer.
        self.gone: set[int] = set()
        self.as_of: float | None = getattr(store, "as_of", None)  # a past slice (recall/past.py)
        self.valid_at: str | None = getattr(store, "valid_at", None)

    def close(self) -> None:
        try:
            if self.disk_cache == "write" and self._built_here:
                self._keep_on_disk()
            present = self._present
            if present is not None and present.disk_cache == "write" and present._built_here:
                present._keep_on_disk()  # what a view of the past built of the present, for the next run
        finally:
            self.store.close()

    def __enter__(self) -> Recaller:
        return self

    def __exit__(self, *exc: object) -> None:
        self.close()

    def keep_for_next_run(self) -> None:
        """Keep what this recaller built on disk for the next process (``brain serve`` as it
        stops: its next start then takes them over), unless the kept file is of this state."""
        if self._names is None and self._name_index is None and self._link_graph is None and self._folder_index is None:
            return
        from . import cache

        try:
            kept = cache.kept_basis(self.store.directory)
            if kept is not None and kept.same(self.basis()):
                return
        except (OSError, sqlite3.Error, BrainError) as exc:
            log.info("could not keep the names and link graph for the next run (%s)", exc)
            return
        self._keep_on_disk()

    def _keep_on_disk(self) -> None:
        """Keep what this run built for the next one, if the notes did not change meanwhile."""
        try:
            built = self.built()
            if not carry.read_basis(self.store, built.basis).same(built.basis):
                log.info("the index changed while this run read it: its names and link graph are not kept")
                return
            from . import cache

            cache.save(self.store.directory, built)
        except (OSError, sqlite3.Error, BrainError) as exc:
            log.info("could not keep the names and link graph for the next run (%s)", exc)

    def _from_disk(self) -> None:
        """Before the first of the names, name index or link graph is built: the state is read
        first (what is built after is at least as new), then what an earlier run kept is taken
        over where still valid."""
        if self._disk_checked:
            return
        self._disk_checked = True
        from . import cache

        def worth(kept: carry.Basis) -> tuple[bool, bool, bool]:  # the state is read before anything is built
            new = self.basis(kept)
            unchanged = carry.names_unchanged(kept, new), carry.written_since(kept, new) is not None
            return (*unchanged, carry.paths_unchanged(kept, new))

        kept = cache.load(self.store.directory, worth)
        self.basis()
        if kept is None:
            return
        try:
            taken = self.carry_over(kept)
        except Exception as exc:  # noqa: BLE001 - what was not taken is built afresh: slower, never wrong
            log.info("could not take over what the last run kept (%s: %s); building afresh", type(exc).__name__, exc)
            return
        log.info("taken over from the last run: %s", ", ".join(taken) or "nothing")

    def warm_up(self) -> None:
        """Load the embedding model now rather than on the first query (servers, benchmarks)."""
        load_ms = getattr(self.embedder, "ensure_loaded", lambda: None)()
        if load_ms is not None:
            self.timings_ms["load_embedder"] = load_ms

    # ----- what is loaded once --------------------------------------------------------------

    def names(self) -> dict[str, str]:
        if self._names is None and self._past() is not None:
            self._names_from_present()
        if self._names is None:
            self._from_disk()
        if self._names is None:
            self._names, self._holders = name_table(self.store.note_names(), self.store.alias_rows())
            self._built_here.add("names")
        return self._names

    def name_index(self) -> names_stage.NameIndex:
        """Every note's names (title, file name, aliases) for the names lane, read once."""
        if self._name_index is None and self._past() is not None:
            self._name_index_from_present()
        if self._name_index is None:
            self._from_disk()
        if self._name_index is None and self._kept_name_index is not None:
            kept, self._kept_name_index = self._kept_name_index, None
            try:
                self._name_index = names_stage.NameIndex.from_state(marshal.loads(kept))
            except Exception as exc:  # noqa: BLE001 - a derived file: built afresh below, never trusted when in doubt
                log.info("the kept name index cannot be read (%s: %s); building it afresh", type(exc).__name__, exc)
        if self._name_index is None:
            self._name_index = names_stage.NameIndex.from_store(self.store)
            self._built_here.add("name index")
        return self._name_index

    def date_index(self) -> dates_stage.DateIndex:
        """Every note with a stated date, for the dates lane: read at the first query that names a period."""
        if self._date_index is None:
            self._date_index = dates_stage.DateIndex.from_store(self.store)
        return self._date_index

    def folder_index(self) -> folders_stage.FolderIndex:
        """Every folder a query can name, for the folders lane: read at the first hybrid query."""
        past = self._past()
        if self._folder_index is None and past is not None and self._present is not None:
            # A view whose notes are the present's, at the same paths, has the present's folders:
            # its own was the same index again (8 MB at 100,000 notes), for each view kept.
            present = self._present._folder_index
            if present is not None and past.paths_are(present.notes):
                self._folder_index = present
        if self._folder_index is None:
            self._from_disk()  # the state read first: what is built after it is at least as new
        if self._folder_index is None:
            self._folder_index = folders_stage.FolderIndex.from_store(self.store)
            self._built_here.add("folder index")
        return self._folder_index

    def held_strings(self) -> dict[str, str]:
        """The paths and names this recaller keeps (its folders' paths, its name index's titles,
        file names and aliases), each by itself: a view of the past over its store takes these
        objects for the equal strings of its rows rather than keeping them twice."""
        out: dict[str, str] = {}
        if self._folder_index is not None:
            out.update((path, path) for _, path in self._folder_index.notes)
        if self._name_index is not None:
            out.update((name.text, name.text) for name in self._name_index.names)
        return out

    def link_graph(self) -> ppr_stage.LinkGraph:
        past = self._past()
        if self._link_graph is None and past is not None:
            self._link_graph = past_carry.link_graph(past, self._present_part("link graph"))
        if self._link_graph is None:
            self._from_disk()
        if self._link_graph is None:
            self._link_graph = ppr_stage.LinkGraph(self.store)
            self._built_here.add("link graph")
        if self._link_graph.dropped:  # a damaged links table: the graph stands without them, said on every result
            message = (
                f"{self._link_graph.dropped} links point at no note of the index and were left out of the"
                f" link graph: `brain index --rebuild --vault {shell_word(self.root)}` reads them again"
            )
            if message not in self.warnings:
                log.warning("%s", message)
                self.warnings.append(message)
        return self._link_graph

    def walked_graph(self) -> ppr_stage.LinkGraph:
        """The link graph PageRank walks: ``link_graph`` without the links to or from the notes
        whose file is gone (``gone``), as a gone note's anchor passages vote for nothing: what it
        linked to is no longer said. The graph itself while no note is gone; made once per set."""
        graph = self.link_graph()
        if not self.gone:
            return graph
        gone = frozenset(self.gone)
        made = self._living_graph
        if made is None or made[0] is not graph or made[1] != gone:
            made = self._living_graph = (graph, gone, graph.without(gone))
        return made[2]

    # ----- a view of the past: what it takes over from the present (recall/past_carry.py) --------

    def _past(self) -> PastIndex | None:
        """The view of the past this recaller answers over, when it takes the present's names and links."""
        return self.store if isinstance(self.store, PastIndex) and past_carry.TAKE_FROM_PRESENT else None

    def lend_present(self, present: Recaller) -> None:
        """Take the present's names, name index and link graph from ``present``, a recaller over
        the store this view slices (``brain serve``'s snapshot: recall/opening.py
        ``open_past_view``), rather than from the disk; it keeps what it has, and builds nothing
        for the view."""
        past = self.store
        assert isinstance(past, PastIndex) and past.base is present.store
        self._present = present
        self._present_lent = True

    def _present_part(self, part: str) -> Any:
        """The present's names, name index or link graph (``part``) for a view of the past: kept by
        an earlier run, else built now where it is kept for the next (``brain ask --as-of``
        from the command line: one process a query); None where neither (built from the slice)."""
        past = self.store
        assert isinstance(past, PastIndex)
        if self._present is None:
            self._present = Recaller(
                past.base,
                self.vectors,
                self.embedder,
                root=self.root,
                rerank_model=None,
                disk_cache=self._present_cache,
            )
        present = self._present
        present._from_disk()
        if part == "name index" and present._name_index is None and present._kept_name_index is not None:
            present.name_index()  # read as kept
        kept: dict[str, Any] = {
            "names": present._names,
            "name index": present._name_index,
            "link graph": present._link_graph,
        }
        if kept[part] is None and present.disk_cache == "write":
            build: dict[str, Callable[[], Any]] = {
                "names": present.names,
                "name index": present.name_index,
                "link graph": present.link_graph,
            }
            return build[part]()
        return kept[part]

    def _present_unchanged(self, read_before: bool) -> bool:
        """Whether the present's names (read before this read transaction, when ``read_before``)
        are of the state this transaction reads: nothing was indexed since."""
        assert self._present is not None
        if self._present_lent:  # one read transaction for both: nothing can be indexed between
            return True
        kept = self._present.basis()
        return not read_before or carry.read_basis(self._present.store, kept).same(kept)

    def _names_from_present(self) -> None:
        """The view's names from the present's and the difference, read in one transaction (else
        left to be built from the slice)."""
        past = self.store
        assert isinstance(past, PastIndex)
        try:
            with past.base.read_snapshot():
                read_before = self._present is not None and self._present._basis is not None
                names = self._present_part("names")
                assert self._present is not None
                if names is None or self._present._holders is None or not self._present_unchanged(read_before):
                    return
                difference = past_carry.names_difference(past)
                self._names = past_carry.gate_names(
                    names, self._present._holders, difference, past.base.note_id, past.name_row
                )
                # The present's name index, where it came with its names: of the state compared.
                self._difference = difference
                self._index_with_names = (
                    self._present._name_index is not None or self._present._kept_name_index is not None
                )
        except ValueError as exc:  # not of one state after all: built from the slice
            log.info("the names of the past were built, not taken from the present's (%s)", exc)

    def _name_index_from_present(self) -> None:
        """The view's name index from the present's and the difference: the one read with the
        present's names, else one read (or built) now, in a read transaction, if nothing was
        indexed since the difference was read (else left to be built from the slice)."""
        past = self.store
        assert isinstance(past, PastIndex)
        present = self._present
        if self._difference is not None and self._index_with_names and present is not None:
            index = present.name_index()
            if "name index" not in present._built_here:  # what was kept with the names compared
                self._name_index = past_carry.name_index(index, self._difference)
                return
        with past.base.read_snapshot():
            read_before = self._present is not None and self._present._basis is not None
            found = self._present_part("name index")
            if found is None or not self._present_unchanged(read_before):
                return
            if self._difference is None:
                self._difference = past_carry.names_difference(past)
        self._name_index = past_carry.name_index(found, self._difference)

    def successors(self) -> dict[int, int]:
        if self._successors is None:
            from .supersession import successors

            self._successors = successors(self.store)
        return self._successors

    def basis(self, previous: carry.Basis | None = None) -> carry.Basis:
        """What the names and the link graph are built from (``recall/carry.py``), read once;
        ``previous``, an earlier state's, spares reading the titles of notes not written since."""
        if self._basis is None:
            self._basis = carry.read_basis(self.store, previous)
        return self._basis

    def built(self) -> carry.Built:
        """What this recaller has built so far, with what it was built from."""
        return carry.Built(
            self.basis(),
            self._names,
            self._name_index,
            self._link_graph,
            self._holders,
            self._kept_name_index,
            self._folder_index,
        )

    def carry_over(self, previous: carry.Built) -> list[str]:
        """Take over from ``previous`` (what a recaller built from an earlier state of the same
        index: the last snapshot, or the last run's, kept on disk) what this state would build
        the same (``recall/carry.py``); what was taken, by name. Call it before the first
        query: what it takes is read-only from then on."""
        old, new = previous.basis, self.basis()
        taken: list[str] = []
        if carry.names_unchanged(old, new):
            if previous.names is not None and previous.holders is not None and self._names is None:
                self._names, self._holders, taken = previous.names, previous.holders, [*taken, "names"]
            if previous.name_index is not None and self._name_index is None:
                self._name_index, taken = previous.name_index, [*taken, "name index"]
            elif previous.kept_name_index is not None and self._name_index is None:
                self._kept_name_index, taken = previous.kept_name_index, [*taken, "name index"]
        # Every note's path and the paths sorted: 37% of a new snapshot's CPU after a save of
        # words at 20,000 notes, read and sorted again for the same paths.
        if previous.folder_index is not None and self._folder_index is None and carry.paths_unchanged(old, new):
            self._folder_index, taken = previous.folder_index, [*taken, "folder index"]
        written = carry.written_since(old, new)
        if written is not None and previous.link_graph is not None and self._link_graph is None:
            self._link_graph = previous.link_graph.carried(self.store, written)
            if self._link_graph is previous.link_graph:
                taken.append("link graph")
            else:
                taken.append("link graph (patched)")
                self._built_here.add("link graph")
        return taken

    def gate(self, query: str) -> Gate:
        return entity_gate(query, self.names())

    # ----- queries ----------------------------------------------------------------------------

    def ask(self, query: str, mode: str | Mode = DEFAULT_MODE, settings: RecallSettings | None = None) -> RecallResult:
        """Run one mode for one query."""
        return self.compare(query, [mode], settings)[0]

    def compare(
        self, query: str, modes: Sequence[str | Mode], settings: RecallSettings | None = None
    ) -> list[RecallResult]:
        """Run several modes for one query, sharing the embedding, the lanes and the rerank scores."""
        parsed = [Mode.parse(m) for m in modes]
        settings = settings or RecallSettings()
        seeded = [str(m) for m in parsed if m.ppr or m.hop]
        if settings.seeds <= 0 and seeded:
            # PageRank restarted from no note and the hop followed none: an empty lane, and the
            # answer still named the mode as having run (hybrid+ppr) with nothing said.
            raise ConfigError(
                f"--seeds 0 gives the graph no note to start from: in {' and '.join(dict.fromkeys(seeded))} it would "
                "add nothing, and the answer would be named as if it had run; give --seeds 1 or more, or a mode "
                "without the graph (hybrid, vector)"
            )
        # A damaged index is one line, not a traceback; the lanes read each chunk once.
        with index_errors(self.store.directory, self.root), self.store.one_query():
            state = self.prepare(query, settings)
            results = [self._answer(state, mode, settings) for mode in parsed]
        self._short_of_k(results, settings)
        return results

    @staticmethod
    def _short_of_k(results: list[RecallResult], settings: RecallSettings) -> None:
        """Say, once, why fewer notes than ``k`` came back when the lanes' depth is the cause:
        ``--depth 1 -k 12`` answered one note, and nothing said why. A lane that gave ``depth``
        notes may have had more to give; one that gave fewer had no more."""
        if settings.depth >= settings.k:
            return
        short = [
            r
            for r in results
            if len(r.results) < settings.k and any(len(lane) >= settings.depth for lane in r.lanes.values())
        ]
        if not short:
            return
        message = (
            f"fewer notes than the {settings.k} asked for (-k): each lane gives at most --depth {settings.depth}; "
            f"give --depth {settings.k} or more to fill the list"
        )
        log.warning("%s", message)
        for result in short:
            result.warnings.append(message)

    def _refuse_another_model(self) -> None:
        """Another model of the same size under the index's model name (a folder whose model was
        replaced) is refused on every query: its query vectors against the index's rank at random.
        Checked once a recaller (one short text embedded), the answer kept."""
        if self._model_changed is None:
            from ..index.model_probe import model_changed, probe_vector

            found = model_changed(self.store, self.model_name, probe_vector(self.embedder), self.root)
            self._model_changed = found or ""
        if self._model_changed:
            raise IndexMismatchError(self._model_changed)

    def prepare(self, query: str, settings: RecallSettings) -> QueryState:
        """Embed the query, run the dense lane and the gate: what every mode starts from."""
        query = valid_unicode(query).strip()  # lone surrogates: the tokenizer and SQLite refuse them
        # as the notes are searched: "pass\u200bword" pasted is the word the index holds
        query = for_search(query).strip()
        if asks_nothing(query):
            raise EmptyQuery(query)
        timings: dict[str, float] = {}
        load_ms = getattr(self.embedder, "ensure_loaded", lambda: None)()  # a lazy model loads here, timed apart
        if load_ms is not None:
            timings["load_embedder"] = load_ms
        elif "load_embedder" in self.timings_ms:  # loaded by the update before the first query
            timings["load_embedder"] = self.timings_ms.pop("load_embedder")
        started = time.perf_counter()
        vector = self.embedder.embed_query(query)
        if getattr(vector, "shape", None) != (self.vectors.dim,):  # FAISS would fail on an assertion
            raise IndexMismatchError(
                f"the embedding model {self.model_name!r} gives vectors of {getattr(vector, 'size', '?')} dimensions,"
                f" but this vault's index holds {self.vectors.dim}: the model at that name changed since the index"
                f" was built. Run `brain index --rebuild --vault {shell_word(self.root)}` to re-embed everything with it"
            )
        if not math.isfinite(float(vector.sum())):  # NaN ranks nothing: an empty answer would look like "no such notes"
            raise ModelLoadError(
                f"the embedding model {self.model_name!r} gave this query a vector that is not a number (NaN or"
                " infinity): the model or its files are broken; load it again, or set BRAIN_EMBED_MODEL to another"
            )
        timings["embed"] = _ms(started)
        self._refuse_another_model()  # after the query's timing: a first query's probe is no part of it
        started = time.perf_counter()
        nearest: list[tuple[int, float]] = []
        # A note whose file is gone is no answer (Recaller.gone): its chunks count for no note of
        # the search, which goes on below them until it has the notes asked for.
        left_out: set[int] = set()
        hits = dense_stage.dense_search(
            self.store,
            self.vectors,
            vector,
            settings.depth,
            settings.chunk_decay,
            nearest=nearest,
            long_note_discount=settings.long_note_discount,
            long_note_chunks=settings.long_note_chunks,
            max_of_n=settings.max_of_n,
            max_of_n_reached=settings.max_of_n_reached,
            gone=self.gone,
            left_out=left_out,
        )
        timings["dense"] = _ms(started)
        state = QueryState(query, vector, self.gate(query), {}, timings, nearest_chunks=nearest)
        if left_out:
            state.gone_found["dense"] = left_out
        state.lanes["dense"] = hits
        return state

    def _answer(self, state: QueryState, mode: Mode, settings: RecallSettings) -> RecallResult:
        started = time.perf_counter()
        result = RecallResult(state.query, str(mode), state.gate, [], stale=self.stale, warnings=list(self.warnings))
        result.warnings += [w for w in self.store.past_warnings() if w not in result.warnings]
        result.as_of, result.valid_at = self.as_of, self.valid_at
        timings: dict[str, float] = {
            s: state.timings[s] for s in ("load_embedder", "embed", "dense") if s in state.timings
        }
        result.lanes = {"dense": state.lanes["dense"]}
        hopped = mode.hop and (mode.base == "graph" or not state.gate.entity)
        if mode.fused and not hopped:  # fusion copies what it keeps of every lane
            pool = self._fuse(state, mode, settings, result, timings)
        else:
            pool = [_copy(c) for c in state.lanes["dense"]]  # modes must not see each other's scores
            if hopped:
                pool += self._hop(state, settings, result, timings)
        if mode.rerank:
            pool = self._rerank(state, pool, settings, result, timings, fused=mode.fused)
        # The mode that ran, not the one asked for: fallbacks and warnings say which stage was
        # asked for and why it did not run (the A/B log compares the modes that ran).
        result.mode = str(self._mode_that_ran(state, mode, result, hopped=hopped))
        if not mode.rerank and not mode.fused:
            pool = best_first(pool)
        if mode.fused and settings.prefer_present:
            pool = self._freshen(state, pool, settings, timings)
        # Each lane left out the notes whose file is gone before its cut (their places the next
        # notes'); a successor _freshen put in is left out here.
        gone_found = {c.note_id for c in pool if c.note_id in self.gone}
        pool = [c for c in pool if c.note_id not in self.gone]
        ppr = {"ppr+lexical" if mode.lexical else "ppr"} if "ppr" in result.lanes else set()
        for lane in set(result.lanes) - {"ppr"} | ppr | ({"hop"} if hopped else set()):
            gone_found |= state.gone_found.get(lane, set())
        if gone_found:
            message = (
                f"{plural(len(gone_found), 'note')} this query found {'was' if len(gone_found) == 1 else 'were'}"
                f" left out: {'its file' if len(gone_found) == 1 else 'their files'} deleted, renamed or no longer"
                " readable since the last index"
            )
            log.warning("%s", message)
            result.warnings.append(message)
        result.results = pool[: settings.k]
        spans = self.store.version_spans([c.note_id for c in result.results])
        for c in result.results:
            c.recorded_from, c.recorded_to = spans.get(c.note_id, (None, None))
        if self.as_of is not None:
            self._whereabouts(result.results)
        timings["total"] = round(timings["embed"] + timings["dense"] + _ms(started), 2)
        result.timings_ms = timings
        result.warnings += [w for w in self.warnings if w not in result.warnings]  # any said while answering
        return result

    def _live(self, state: QueryState, lane: str, depth: int, run: Callable[[int], list[Candidate]]) -> list[Candidate]:
        """What ``run(depth)`` finds, at most ``depth`` notes, without the notes whose file is gone
        (``Recaller.gone``): a lane cut at ``depth`` that found such is asked again as many notes
        deeper, so that the notes below take their places, as the dense lane does. Asked once
        while no note is gone, or none it found is."""
        found = run(depth)
        if not self.gone:
            return found
        deeper = 0
        while True:
            taken = sum(1 for c in found if c.note_id in self.gone)
            if taken <= deeper or len(found) < depth + deeper:  # depth notes left, or no more
                break
            deeper = taken
            found = run(depth + deeper)
        return self._without_gone(state, lane, found)[:depth]

    def _without_gone(self, state: QueryState, lane: str, found: list[Candidate]) -> list[Candidate]:
        """What ``lane`` found without the notes whose file is gone (``Recaller.gone``), kept in
        ``state.gone_found``: a path that no longer opens is no answer, nor a seed or a rank."""
        if not self.gone:
            return found
        state.gone_found.setdefault(lane, set()).update(c.note_id for c in found if c.note_id in self.gone)
        return [c for c in found if c.note_id not in self.gone]

    def _whereabouts(self, results: list[Candidate]) -> None:
        """Where each note of a view of the past is now: named by its path then, a note deleted
        since read as the one another note moved to that path holds today."""
        now = self.store.whereabouts_now([(c.note_id, c.path) for c in results])
        for c in results:
            if c.note_id in now:
                c.moved_to, c.gone, c.path_reused = now[c.note_id]

    @staticmethod
    def _mode_that_ran(state: QueryState, mode: Mode, result: RecallResult, *, hopped: bool) -> Mode:
        """``mode`` without each family none of whose stages ran: the hop (graph, gated: the
        dense result, vector), BM25 and the lexical lanes (hybrid), PageRank and the lanes that
        read the links (ppr), the reranker. A family one of whose stages ran keeps its name:
        what that stage found is in the result, and ``fallbacks`` names the stage that did not.
        The bridge lane, of both families, names neither: it joins where both are asked for, and
        answers only long queries (a short one: nothing, which is no sign of either family)."""
        rerank = mode.rerank and result.reranked
        if mode.hop:
            return Mode("vector" if hopped and "graph" in state.failures else mode.base, rerank)
        if not mode.fused:
            return Mode(mode.base, rerank)
        ran: set[str] = set()
        families: tuple[str, ...]
        for lane in result.lanes:
            if lane == "dense":
                continue
            if lane == "ppr":
                failure, families = ("ppr+lexical" if mode.lexical else "ppr"), ("ppr",)
            elif lane == "lexical":
                failure, families = lane, ("lexical",)
            else:
                family = EXTRA_LANES[lane].family
                failure, families = lane, family if len(family) == 1 else ()
            if failure not in state.failures:
                ran.update(families)
        lexical, ppr = mode.lexical and "lexical" in ran, mode.ppr and "ppr" in ran
        base = "hybrid+ppr" if lexical and ppr else "hybrid" if lexical else "ppr" if ppr else "vector"
        return Mode(base, rerank)

    # ----- the one-hop expansion --------------------------------------------------------------

    def _hop(
        self, state: QueryState, settings: RecallSettings, result: RecallResult, timings: dict[str, float]
    ) -> list[Candidate]:
        if state.hop is None:
            started = time.perf_counter()
            try:
                state.hop = self._live(
                    state,
                    "hop",
                    settings.max_new,
                    lambda max_new: graph_stage.expand(
                        self.store,
                        state.lanes["dense"],
                        state.vector,
                        seeds=settings.seeds,
                        max_new=max_new,
                        long_note_discount=settings.long_note_discount,
                        long_note_chunks=settings.long_note_chunks,
                    ),
                )
            except GRAPH_FAILURES as exc:  # never worse than no graph: the dense pool stands
                state.failures["graph"] = (
                    f"graph stage failed ({type(exc).__name__}: {exc}); using the dense result{self._mend(exc)}"
                )
                log.warning("%s", state.failures["graph"])
                state.hop = []
            state.timings["graph"] = _ms(started)
        timings["graph"] = state.timings["graph"]
        if "graph" in state.failures:
            self._fall_back(result, "graph", state.failures["graph"])
        else:
            result.graph_used = True
            result.candidates_added = len(state.hop)
        return [_copy(c) for c in state.hop]

    # ----- fused modes ------------------------------------------------------------------------

    def _fuse(
        self, state: QueryState, mode: Mode, settings: RecallSettings, result: RecallResult, timings: dict[str, float]
    ) -> list[Candidate]:
        """RRF over the lanes this mode uses; candidates keep the chunk that found them."""
        lanes = ["dense"]
        if mode.lexical:
            if "lexical" not in state.lanes:
                started = time.perf_counter()
                state.lanes["lexical"] = self._live(
                    state, "lexical", settings.depth, lambda depth: self._lexical_lane(state, settings, depth)
                )
                state.timings["lexical"] = _ms(started)
            timings["lexical"] = state.timings["lexical"]
            lanes.append("lexical")
            result.lexical_match = state.match
            if "lexical" in state.failures:
                self._fall_back(result, "lexical", state.failures["lexical"])
        seed_lanes = list(lanes)  # PageRank restarts from the dense and lexical hits only
        for name in self._extra_lanes(mode, settings):
            self._extra_lane(name, state, settings, result, timings)
            lanes.append(name)
        rankings = {lane: [c.note_id for c in state.lanes[lane]] for lane in lanes}
        by_note: dict[int, Candidate] = {}
        for lane in lanes:  # dense first: a note keeps the chunk the dense lane chose
            for c in state.lanes[lane]:
                if c.note_id in by_note:
                    by_note[c.note_id].sources.append(lane)
                else:
                    by_note[c.note_id] = _copy(c)
                    # put first below, or not at all (the names lane marks every note it names whole)
                    by_note[c.note_id].named = False
        result.lanes = {lane: state.lanes[lane] for lane in lanes}
        if mode.ppr:
            key = "ppr+lexical" if mode.lexical else "ppr"
            if key not in state.lanes:
                started = time.perf_counter()
                try:
                    seeded = {lane: rankings[lane] for lane in seed_lanes}
                    state.lanes[key] = self._live(
                        state, key, settings.depth, lambda depth: self._ppr_lane(state, seeded, settings, depth)
                    )
                except GRAPH_FAILURES as exc:  # never worse than no graph: fuse without it
                    state.failures[key] = (
                        f"PageRank stage failed ({type(exc).__name__}: {exc}); fusing without it{self._mend(exc)}"
                    )
                    log.warning("%s", state.failures[key])
                    state.lanes[key] = []
                state.timings[key] = _ms(started)
            timings["ppr"] = state.timings[key]
            rankings["ppr"] = [c.note_id for c in state.lanes[key]]
            result.lanes["ppr"] = state.lanes[key]
            for c in state.lanes[key]:
                if c.note_id in by_note:
                    by_note[c.note_id].sources.append("ppr")
                else:
                    by_note[c.note_id] = _copy(c)
            if key in state.failures:
                self._fall_back(result, "graph", state.failures[key])
            else:
                result.graph_used = True
        started = time.perf_counter()
        if settings.fusion_method == "score":
            lane_scores = {name: [(c.note_id, c.score) for c in lane] for name, lane in result.lanes.items()}
            fused = fusion.score_fusion(lane_scores, settings.weights)
        elif settings.fusion_method == "rrf":
            lane_rrf_k = settings.lane_rrf_k
            if settings.note_dense_rrf_k > 0 and query_form.seeks_note(state.query):  # a note sought as a whole
                lane_rrf_k = {**lane_rrf_k, "dense": settings.note_dense_rrf_k}
            fused = fusion.rrf(rankings, settings.rrf_k, settings.weights, lane_rrf_k)
            if settings.top_bonus:
                bonus_rankings = dict(rankings)
                if "bridge" in rankings:  # its bonus is its first note's, when that note stands clear
                    bonus_rankings["bridge"] = bridge_stage.sure_first(
                        result.lanes["bridge"], settings.bridge_margin, state.query
                    )
                scored = {name: [c.score for c in result.lanes[name]] for name in rankings if name != "bridge"}
                bonus_weights = {lane: w * settings.bonus_scale.get(lane, 1.0) for lane, w in settings.weights.items()}
                fused = fusion.rank_bonus(
                    bonus_rankings, settings.top_bonus, bonus_weights, fused, scored, settings.bonus_margin
                )
        else:
            raise ConfigError(f"unknown fusion method {settings.fusion_method!r}: use rrf or score")
        agreed = None
        if settings.bridge_agreed_first and "bridge" in rankings and "anchor_lex" in rankings:
            agreed = bridge_stage.agreed_first(result.lanes["bridge"], result.lanes["anchor_lex"], state.query)
        if agreed is not None and fused:  # two lanes name the note the question asks about
            # A whole rank-1 bonus ahead: a question with "now" or "still" in it is temporal,
            # and freshness (at most +15% of a fused score) must not take the place back.
            fused = fusion.put_first(fused, agreed, margin=fusion.FIRST_MARGIN)
            by_note[agreed].agreed = True
        if settings.described_first and agreed is None and fused and "dense" in rankings and "lexical" in rankings:
            link_firsts = [result.lanes[lane][0].note_id for lane in _LINK_LANES if result.lanes.get(lane)]
            described = bridge_stage.described_first(
                result.lanes["dense"],
                result.lanes["lexical"],
                link_firsts,
                lambda chunk_id: anchors_stage.linked_from_chunks(self.store, [chunk_id]).get(chunk_id, []),
                state.query,
            )
            if described is not None:  # a description of one note: not the notes its passage mentions
                fused = fusion.put_first(fused, described, margin=fusion.FIRST_MARGIN)
                by_note[described].described = True
        named = names_stage.named_note(state.lanes["names"]) if "names" in rankings and settings.name_first else None
        if named is not None and fused:  # the query is this note's name and no other's: it is the note asked for
            fused = fusion.put_first(fused, named, margin=settings.weights["names"] * fusion.FIRST_MARGIN)
            by_note[named].named = True
        if settings.stub_discount > 0 and fused:  # a stub shows nothing to read: below the notes that do
            for note_id in stub_notes(self.store, [c for c in by_note.values() if not c.named]):
                if note_id in fused:
                    fused[note_id] *= 1.0 - min(settings.stub_discount, 1.0)
        self._fill_dense_scores(list(by_note.values()), state.vector)
        for note_id, candidate in by_note.items():
            candidate.score = fused.get(note_id, 0.0)
        pool = best_first(list(by_note.values()))[: max(settings.depth, settings.k)]
        # What the graph added to the pool: its notes only the lanes that read the links found, the
        # anchor and bridge lanes' as well as PageRank's (counting PageRank's newcomers alone said
        # 0 where the anchor lanes, which run before it, had brought the note asked for).
        result.candidates_added = sum(1 for c in pool if c.sources and set(c.sources) <= GRAPH_LANES)
        timings["fusion"] = _ms(started)
        return pool

    def _match(self, state: QueryState, settings: RecallSettings) -> str | None:
        """The query's FTS5 MATCH expression, computed once per query (it reads the vocabulary)."""
        if not state.match_known:
            respell = self._respeller(settings)
            state.match = lexical_stage.match_expression(self.store, state.query, respell)
            state.match_known = True
        return state.match

    def _respeller(self, settings: RecallSettings) -> Callable[[str], Sequence[str]] | None:
        """The names lane's respellings, where that lane runs (its index is loaded for it anyway);
        None when it cannot load: the query is searched as written, and the names lane says why."""
        if not settings.respell or settings.weights.get("names", 0.0) <= 0:
            return None
        try:
            return self.name_index().respellings
        except LANE_FAILURES as exc:
            log.warning("no respelling of unknown words (%s: %s)", type(exc).__name__, exc)
            return None

    def _lexical_lane(self, state: QueryState, settings: RecallSettings, depth: int) -> list[Candidate]:
        """The BM25 lane, ``depth`` notes; its hits, best first, are kept for anchor_lex, which reads the first of
        them rather than asking FTS5 again (at 100,000 notes each search scores every match)."""
        weights = tuple(settings.lexical_weights)
        try:
            # The MATCH expression reads the BM25 index's vocabulary too: a damaged one fails here first.
            expression = self._match(state, settings)
            if expression is None or depth <= 0:
                return []
            # Chunks of a note whose file is gone take no place of the search: a gone note of
            # more matching sections than it reads left none for the notes below.
            found = live_hits(
                self.store,
                lambda reach: self.store.fts_search(expression, weights, reach),
                lexical_stage.search_depth(depth),
                self.gone,
            )
        except sqlite3.DatabaseError as exc:
            if not search_index_damaged(exc):
                raise
            state.match, state.match_known = None, True  # anchor_lex searches nothing either
            # Never worse than no BM25: the other lanes stand, and the result says how to mend it.
            state.failures["lexical"] = (
                f"the BM25 index is out of step with the chunks it indexes ({exc}); fusing without it:"
                f" `brain index --repair --vault {shell_word(self.root)}` rebuilds it from them (no re-embedding)"
            )
            log.warning("%s", state.failures["lexical"])
            state.anchor_passages = []  # anchor_lex reads the lane's hits: none, not a search of that index again
            return []
        state.anchor_passages = found.hits
        lane = lexical_stage.lexical_search(
            self.store,
            state.query,
            depth,
            settings.chunk_decay,
            weights,
            expression=expression,
            hits=found.hits,
        )
        if found.gone:  # those above the last note the lane took (all, when it took fewer): said in the warnings
            taken = found.gone_above([c.chunk_id for c in lane]) if len(lane) >= depth else set(found.gone)
            state.gone_found.setdefault("lexical", set()).update(taken)
        return lane

    @staticmethod
    def _extra_lanes(mode: Mode, settings: RecallSettings) -> list[str]:
        """The lanes beyond dense, BM25 and PageRank this mode fuses: its families', weighted > 0."""
        return [
            name
            for name, lane in EXTRA_LANES.items()
            if settings.weights.get(name, 0.0) > 0 and all(getattr(mode, family) for family in lane.family)
        ]

    def _extra_lane(
        self, name: str, state: QueryState, settings: RecallSettings, result: RecallResult, timings: dict[str, float]
    ) -> None:
        """Run one extra lane into ``state.lanes`` (once per query); on a failure it expects, fuse without it."""
        lane = EXTRA_LANES[name]
        if name not in state.lanes:
            started = time.perf_counter()
            try:
                state.lanes[name] = self._live(
                    state, name, settings.depth, lambda depth: self._run_lane(name, state, settings, depth)
                )
            except lane.failures as exc:  # never worse than without the lane
                state.failures[name] = (
                    f"{name} lane failed ({type(exc).__name__}: {exc}); fusing without it{self._mend(exc)}"
                )
                log.warning("%s", state.failures[name])
                state.lanes[name] = []
            state.timings[name] = _ms(started)
        timings[name] = state.timings[name]
        if name in state.failures:
            self._fall_back(result, lane.flag, state.failures[name])

    def _run_lane(self, name: str, state: QueryState, settings: RecallSettings, depth: int) -> list[Candidate]:
        """The extra lane ``name``, at most ``depth`` notes."""
        if name == "names":
            return names_stage.names_search(
                self.store,
                self.name_index(),
                state.query,
                state.vector,
                depth,
                compare_share=settings.names_compare_share,
                site_domains=settings.names_site_domains,
            )
        if name == "dates":
            # a past view's today (Python's own fromtimestamp fails on year 1's first day)
            today = local_datetime(self.as_of).date() if self.as_of is not None else None
            period = dates_stage.query_period(state.query, today)
            if period is None:  # most queries: the index of days is not read
                return []
            return dates_stage.dates_search(self.store, self.date_index(), period, state.vector, depth)
        if name == "folders":
            return folders_stage.folders_search(
                self.store, self.folder_index(), state.query, state.vector, state.lanes["dense"], depth
            )
        if name == "bridge":
            return bridge_stage.bridge_search(
                self.store,
                state.query,
                state.vector,
                state.lanes["dense"],
                state.lanes["lexical"],
                depth,
                settings.bridge_min_words,
                settings.bridge_in_passage,
            )
        if name == "anchor_dense":
            return anchors_stage.anchor_dense(
                self.store, self._anchor_passages(state, depth), state.vector, depth, settings.anchor_hub
            )
        if name == "anchor_lex":
            return anchors_stage.anchor_lex(
                self.store,
                self._match(state, settings),
                state.vector,
                depth,
                settings.anchor_hub,
                tuple(settings.lexical_weights),
                passages=state.anchor_passages,
                gone=self.gone,
            )
        raise ValueError(f"no lane named {name!r}")

    def _anchor_passages(self, state: QueryState, depth: int) -> list[tuple[int, float]]:
        """The chunks nearest the query that anchor_dense reads (``CHUNKS_PER_NOTE`` per note
        wanted), none of a note whose file is gone: its text is no longer in the vault, and what
        it said about the notes it linked to is no longer said (the next chunks take its places)."""
        reached = state.nearest_chunks  # the dense lane's search reached at least as far, when it could

        def nearest(reach: int) -> list[tuple[int, float]]:
            nonlocal reached
            reach = min(reach, self.vectors.size)
            if len(reached) < reach:
                ids, scores = self.vectors.search(state.vector, reach)
                reached = list(zip(ids.tolist(), scores.tolist()))
            return reached[:reach]

        return live_hits(self.store, nearest, depth * anchors_stage.CHUNKS_PER_NOTE, self.gone).hits

    def _ppr_lane(
        self, state: QueryState, rankings: dict[str, list[int]], settings: RecallSettings, depth: int
    ) -> list[Candidate]:
        graph = self.walked_graph()
        if settings.ppr_seed_scores:
            scored = [[(c.note_id, c.score) for c in state.lanes[name]] for name in rankings]
            seeds = ppr_stage.seed_weights_by_score(scored, settings.seeds)
        else:
            seeds = ppr_stage.seed_weights(list(rankings.values()), settings.seeds)
        if settings.ppr_hub_seeds > 0:
            seeds = ppr_stage.drop_hubs(seeds, self.store.out_degrees(sorted(seeds)), settings.ppr_hub_seeds)
        value = dict(graph.rank(seeds, depth, alpha=settings.ppr_alpha, degree_norm=settings.ppr_degree_norm))
        # Notes of one PageRank value (the pages one note embeds: every spell of a class) come by
        # their best chunk's cosine with the query, then by path: what the walk cannot tell apart,
        # the question can. Every note tied at the cut is scored, then the lane is cut.
        top = ties.cut(sorted(value, key=lambda n: -value[n]), lambda n: -value[n], depth)
        found = dense_stage.scored_candidates(self.store, top, state.vector, "ppr")
        for c in found:
            c.score = value[c.note_id]  # the PageRank value (dense_score stays the best chunk's cosine)
        found = best_first(found)[:depth]
        # Notes that only PageRank proposed say which seed reached them (the first by weight).
        proposed = {note_id for ranking in rankings.values() for note_id in ranking}
        outsiders = [c for c in found if c.note_id not in proposed]
        if outsiders:
            named = self.store.notes_brief(list(seeds))
            order = sorted(seeds, key=lambda n: (-seeds[n], named.get(n, ("",))[0]))  # equal weights: by path
            reached = graph_stage.first_via(self.store, [(n, *named[n]) for n in order if n in named], set())
            for c in outsiders:
                c.via = reached.get(c.note_id)
        return found

    def _fill_dense_scores(self, candidates: list[Candidate], vector: np.ndarray) -> None:
        """Candidates the lexical lane found first get their best chunk's cosine too (shown, a
        tie-break, and the prompt hook's threshold): their score is BM25's, also when a later lane
        (PageRank, an extra lane) found the note as well and only added its name to ``sources``."""
        missing = [c for c in candidates if c.sources[:1] == ["lexical"]]
        if not missing:
            return
        best = dense_stage.best_chunks(self.store, [c.note_id for c in missing], vector)
        for c in missing:
            c.dense_score = best.get(c.note_id, (0, 0.0))[1]

    def _freshen(
        self, state: QueryState, pool: list[Candidate], settings: RecallSettings, timings: dict[str, float]
    ) -> list[Candidate]:
        """Temporal queries: newest first among near-equals. Always: successors above the superseded."""
        started = time.perf_counter()
        if settings.freshness > 0 and fusion.is_temporal(state.query) and pool:
            position = fusion.recency({c.note_id: c.date for c in pool})
            # A note put first by a rule (the one the query names whole, the one two lanes agree
            # on, the one a description is of) is boosted as the newest: freshness orders
            # near-equals, it does not take back a first place 0.003 of score wide ("current
            # sprint": the note of that name second).
            if pool[0].named or pool[0].agreed or pool[0].described:
                position[pool[0].note_id] = 1.0
            for c in pool:
                # A share of the score's size, up: after the reranker the scores are its logits,
                # below zero for most passages, where × (1 + boost) put the newest note last.
                c.score += abs(c.score) * settings.freshness * position[c.note_id]
            pool = best_first(pool)
        successors = self.successors()
        if successors and any(c.note_id in successors for c in pool[: settings.k]):
            order = fusion.order_successors_first([c.note_id for c in pool], successors)
            by_id = {c.note_id: c for c in pool}
            missing = [n for n in order if n not in by_id]
            replaced = {new: old for old, new in successors.items()}
            for c in dense_stage.scored_candidates(self.store, missing, state.vector, "successor"):
                # Its cosine is not on the fused scale: it ties the note it replaces, and sits above it.
                predecessor = by_id.get(replaced.get(c.note_id, -1))
                c.score = predecessor.score if predecessor is not None else 0.0
                by_id[c.note_id] = c
            pool = [by_id[n] for n in order if n in by_id]
            # Scores stay monotone in the shown order: a moved successor takes its place's score.
            for i in range(len(pool) - 2, -1, -1):
                pool[i].score = max(pool[i].score, pool[i + 1].score)
        timings["freshness"] = _ms(started)
        return pool

    # ----- rerank -----------------------------------------------------------------------------

    def _rerank(
        self,
        state: QueryState,
        pool: list[Candidate],
        settings: RecallSettings,
        result: RecallResult,
        timings: dict[str, float],
        *,
        fused: bool,
    ) -> list[Candidate]:
        # At least the k asked for: the answer is what the reranker scored, and `-k 40` with the
        # pool of 30 answered 30 notes.
        scored = max(settings.pool, settings.k)
        if fused:  # the fused order already mixes every lane: take its top
            candidates = pool[:scored]
        else:  # the dense top, plus everything the hop added
            candidates = [c for c in pool if c.via is None][:scored] + [c for c in pool if c.via is not None]
        missing = [c for c in candidates if (c.note_id, c.chunk_id) not in state.rerank_scores]
        scores = self._rerank_scores(state.query, missing, result, timings) if missing else {}
        if scores is None:  # fallback: the order the earlier stages gave
            pool = best_first(pool)
            return pool
        state.rerank_scores.update(scores)
        for candidate in candidates:
            candidate.rerank_score = state.rerank_scores[candidate.note_id, candidate.chunk_id]
            candidate.score = candidate.rerank_score
        result.reranked = True
        return best_first(candidates)

    def _rerank_scores(
        self, query: str, pool: list[Candidate], result: RecallResult, timings: dict[str, float]
    ) -> dict[tuple[int, int], float] | None:
        """Cross-encoder scores by (note id, chunk id), or None (with a warning) when it cannot run."""
        if not self.rerank_model:
            self.reranker_error = "no reranker configured (BRAIN_RERANK_MODEL=none); the order before it kept"
        if self.reranker_error:
            log.warning("%s", self.reranker_error)
            self._fall_back(result, "rerank", self.reranker_error)
            return None
        started = time.perf_counter()
        try:
            reranker = load_reranker(self.rerank_model)
            timings["load_reranker"] = _ms(started)
            started = time.perf_counter()
            scores = reranker.score(query, pool)
            # A score a passage, each a number: NaN (a model overflowing in fp16) orders nothing,
            # and is no JSON.
            if len(scores) != len(pool) or not all(math.isfinite(s) for s in scores):
                bad = sum(1 for s in scores if not math.isfinite(s))
                raise ValueError(f"it gave {len(scores)} scores for {len(pool)} passages, {bad} of them not a number")
        except Exception as exc:  # noqa: BLE001 - someone else's model: whatever it raises, keep the earlier order
            reason = str(exc) if isinstance(exc, BrainError) else f"{type(exc).__name__}: {exc}"
            # the order before it: dense in vector and graph modes, fused in the others
            self.reranker_error = f"reranker unavailable ({reason}); the order before it kept"
            log.warning("%s", self.reranker_error)
            self._fall_back(result, "rerank", self.reranker_error)
            return None
        timings["rerank"] = _ms(started)
        return {(c.note_id, c.chunk_id): s for c, s in zip(pool, scores)}

    def _mend(self, exc: BaseException) -> str:
        """How to mend what a stage failed on, where the user can: a table the index lacks or
        cannot read (the index built anew), a library missing."""
        if isinstance(exc, sqlite3.Error):
            return f": if it persists, `brain index --rebuild --vault {shell_word(self.root)}` builds the index anew"
        if isinstance(exc, ImportError):
            return f": install {exc.name or 'the missing library'} to use it"
        return ""

    @staticmethod
    def _fall_back(result: RecallResult, stage: str, message: str) -> None:
        """Record on the result that ``stage`` fell back (the log has the message already)."""
        result.warnings.append(message)
        result.fallbacks[stage] = True


def _copy(candidate: Candidate) -> Candidate:
    """A copy whose ``sources`` list is its own. Its fields taken as they are (no ``__init__``:
    ``dataclasses.replace`` took 4 times as long, and fusing copies every note of every lane)."""
    copied = object.__new__(type(candidate))
    copied.__dict__.update(candidate.__dict__)
    copied.sources = list(candidate.sources)
    return copied


def _ms(started: float) -> float:
    return round((time.perf_counter() - started) * 1000, 2)
