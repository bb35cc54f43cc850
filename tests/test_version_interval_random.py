"""Random sequences of edits, renames (with and without an edit), deletes, restores (a file
back with old bytes), reverts, and a log grown or rewritten in its middle (long enough for its
past texts to be kept in segments), mostly to one note as a person typing would, with the clock
stepping by seconds to hours (now and then set back a day or on two), a `--rebuild` or a
`brain prune --before` a moment of the past between runs: whatever BRAIN_VERSION_INTERVAL
folded, history must read as a vault that was. After every run the vault is noted (each
note's path and bytes, by the id the index gives it) with a moment just after the run; then,
for each such moment not pruned:

- the notes history holds then are the notes there were then (a fold never hides or adds one);
- each note's version then is the content the note had when that version was recorded, and
  any other content it had since was folded into it within the interval (an empty one, a sync
  client's truncate, within the interval of its own start);
- the links recorded then from each note are those its version then writes (as many times,
  under its frontmatter's world time), each resolved against the notes and names of that moment;
- `brain ask --as-of` then answers with each version's words, never a folded one's;

and `history_problems` finds nothing after each run (every kept text reads back, no segment is
left that no version lists), nor `check_texts` (each reads back through brain as bytes once
written there), and `brain history --json` each note's texts.

For a longer hunt: BRAIN_FOLD_SEEDS=30 BRAIN_FOLD_STEPS=40 (sequences per BRAIN_KEEP_VERSIONS
setting, runs in each), BRAIN_FOLD_INTERVAL=604800 (or 0.5), BRAIN_CHUNKING=heading+path.
"""

from __future__ import annotations

import json
import os
import random
import sqlite3
from collections import Counter
from dataclasses import dataclass, field
from pathlib import Path

import pytest
from click.testing import CliRunner
from index_helpers import history_problems, open_store
from test_version_interval import Clock

from brain import config
from brain.cli import cli
from brain.index import history as history_module
from brain.index.indexer import index_vault
from brain.index.prune import prune_vault
from brain.links import Link, Resolver, is_attachment
from brain.notes import parse_note, world_time
from brain.recall.opening import open_recaller
from brain.recall.types import RecallSettings

SEEDS = int(os.environ.get("BRAIN_FOLD_SEEDS", "2"))
STEPS = int(os.environ.get("BRAIN_FOLD_STEPS", "28"))
INTERVAL = float(os.environ.get("BRAIN_FOLD_INTERVAL", "300"))
PATHS = ["Alpha.md", "Beta.md", "Gamma.md", "Delta.md", "sub/Alpha.md", "sub/Epsilon.md", "Zeta.md", "sub/Eta.md"]
TARGETS = ["Alpha", "Beta", "Gamma", "Delta", "Epsilon", "Zeta", "Eta", "sub/Alpha", "Ali", "Bo", "Nowhere", "pic.png"]
BODY = "glaze cone fired crawled pinholes reduction oxidation bisque shelf porcelain celadon shino ash".split()
QUICK = [1, 2, 3, 5, 8, 13, 20, 40]  # seconds between runs: saves while typing
SLOW = [120, 250, 299, 301, 400, 3600]


@dataclass
class Run:
    moment: float  # just after the run: every change it recorded is at or before it
    notes: dict[int, tuple[str, bytes]]  # note id → (path, bytes) after the run


@dataclass
class World:
    root: Path
    rng: random.Random
    clock: Clock
    runs: list[Run] = field(default_factory=list)
    files: dict[str, bytes] = field(default_factory=dict)  # the vault now
    contents: dict[str, list[bytes]] = field(default_factory=dict)  # path → every content written there
    gone: list[tuple[str, bytes]] = field(default_factory=list)  # deleted files: (path, last bytes)
    serial: int = 0
    hot: str = ""  # the note most steps change
    log: list[str] = field(default_factory=list)

    def content(self) -> bytes:
        self.serial += 1
        rng = self.rng
        front = []
        if rng.random() < 0.3:
            front.append(f"aliases: [{rng.choice(['Ali', 'Bo', 'Cy'])}]")
        if rng.random() < 0.3:
            front.append(f"valid_from: 2025-0{rng.randint(1, 3)}-01")
        if rng.random() < 0.3:
            front.append(f"status: {rng.choice(['active', 'done'])}")
        links = " ".join(f"[[{t}]]" for t in rng.sample(TARGETS, rng.randint(0, 3)))
        if rng.random() < 0.2:
            links += " [[Alpha]] [[Alpha]]"
        body = f"# Heading\n\nWords token{self.serial:04d}x about kilns. {links}\n"
        head = "---\n" + "\n".join(front) + "\n---\n" if front else ""
        return (head + body).encode()

    def line(self) -> str:
        return " ".join(self.rng.choice(BODY) for _ in range(self.rng.randint(5, 25))).capitalize() + "."

    def grown(self, path: str) -> bytes:
        """The note with lines appended to its log (a log of 5-10 KB begun when it has none):
        long enough for its past texts to be kept in segments (version_text.SEGMENTS_FROM)."""
        text = self.files[path].decode()
        if "\n## Log\n" not in text:
            text += "\n## Log\n\n"
            count = self.rng.randint(80, 160)
        else:
            count = self.rng.randint(2, 15)
        return (text + "".join(self.line() + "\n" for _ in range(count))).encode()

    def edited_in_middle(self, path: str) -> bytes:
        """The note with a line or two of its log rewritten (grown when it has none)."""
        lines = self.files[path].decode().split("\n")
        if "## Log" not in lines:
            return self.grown(path)
        start = lines.index("## Log") + 2
        for _ in range(self.rng.randint(1, 2)):
            lines[self.rng.randrange(start, len(lines) - 1)] = self.line()
        return "\n".join(lines).encode()

    def write(self, path: str, data: bytes) -> None:
        target = self.root / path
        target.parent.mkdir(parents=True, exist_ok=True)
        target.write_bytes(data)
        self.files[path] = data
        self.contents.setdefault(path, []).append(data)

    def free(self) -> list[str]:
        return [p for p in PATHS if p not in self.files]

    def step(self) -> None:
        rng = self.rng
        ops = ["edit"] * 6 + ["revert"] * 2 + ["rename", "rename_edit", "delete", "restore", "create", "none"]
        ops += ["grow"] * 3 + ["middle"] * 2 + ["empty"]  # a sync client's truncate before it writes
        for _ in range(rng.choice([1, 1, 1, 2])):
            op = rng.choice(ops)
            present = sorted(self.files)
            if op in ("edit", "revert", "rename", "rename_edit", "delete", "grow", "middle", "empty") and not present:
                op = "create"
            if op in ("rename", "rename_edit", "create", "restore") and not self.free():
                op = "edit"
            if op == "restore" and not self.gone:
                op = "create"
            path = rng.choice(present) if present else ""
            if present and rng.random() < 0.7:  # most steps go to one note, as a person typing
                self.hot = self.hot if self.hot in present and rng.random() < 0.9 else path
                path = self.hot
            if op == "edit":
                self.write(path, self.content())
            elif op == "empty":
                self.write(path, b"")
            elif op == "grow":
                self.write(path, self.grown(path))
            elif op == "middle":
                self.write(path, self.edited_in_middle(path))
            elif op == "revert":
                self.write(path, rng.choice(self.contents[path]))
            elif op in ("rename", "rename_edit"):
                new = rng.choice(self.free())
                data = self.files.pop(path)
                (self.root / path).unlink()
                self.write(new, self.content() if op == "rename_edit" else data)
                self.hot = new
                op = f"{op} → {new}"
            elif op == "delete":
                self.gone.append((path, self.files.pop(path)))
                (self.root / path).unlink()
            elif op == "restore":
                old_path, data = self.gone.pop(rng.randrange(len(self.gone)))
                path = old_path if old_path in self.free() else rng.choice(self.free())
                self.write(path, data)
            elif op == "create":
                path = rng.choice(self.free())
                self.write(path, self.content())
            self.log.append(f"{op} {path}")
        seconds = rng.choice(QUICK if rng.random() < 0.7 else SLOW)
        if rng.random() < 0.04:  # the clock set back a day, or forward two
            seconds = rng.choice([-86400, 2 * 86400])
        self.clock.now += seconds
        rebuild = rng.random() < 0.04
        self.log.append(f"+{seconds}s, index" + (" --rebuild" if rebuild else ""))
        index_vault(self.root, progress=False, rebuild=rebuild)
        self.note_run()
        if rng.random() < 0.04 and len(self.runs) > 2:  # `brain prune --before` a moment of the past
            first, second = rng.sample([run.moment for run in self.runs], 2)
            cutoff = first + (second - first) * rng.random()
            self.log.append(f"prune --before {cutoff}")
            prune_vault(self.root, before=cutoff)

    def note_run(self) -> None:
        store = open_store(self.root)
        try:
            ids = {path: store.note_id(path) for path in self.files}
            moment = store.history_latest() + 0.0005
        finally:
            store.close()
        assert None not in ids.values(), self.log
        self.runs.append(Run(moment, {ids[p]: (p, data) for p, data in self.files.items()}))  # type: ignore[misc]


def _db(root: Path) -> Path:
    return config.index_dir(root) / "index.db"


def _history_at(conn: sqlite3.Connection, moment: float) -> tuple[dict, dict]:
    """(note id → (version id, path, aliases, hash, frontmatter, recorded_from, recorded_to),
    source id → open edges) at ``moment``, read from the tables."""
    versions = {
        r[1]: (r[0], *r[2:])
        for r in conn.execute(
            "SELECT id, note_id, path, aliases, hash, frontmatter, recorded_from, recorded_to FROM note_versions"
            " WHERE recorded_from <= ? AND (recorded_to IS NULL OR recorded_to > ?)",
            (moment, moment),
        )
    }
    edges: dict[int, list] = {}
    for r in conn.execute(
        "SELECT source_id, target, kind, count, target_id, status, world_date, valid_from, valid_to, note_status"
        " FROM link_history WHERE recorded_from <= ? AND (recorded_to IS NULL OR recorded_to > ?)",
        (moment, moment),
    ):
        edges.setdefault(r[0], []).append(r[1:])
    return versions, edges


def _empty_span(world: World, note_id: int, k: int) -> float:
    """From the run that first found the note as empty as at run ``k`` to the run that found it
    otherwise: how long that empty version stood."""
    runs, state = world.runs, world.runs[k].notes[note_id]
    start = k
    while start > 0 and runs[start - 1].notes.get(note_id) == state:
        start -= 1
    end = next((r for r in range(k + 1, len(runs)) if runs[r].notes.get(note_id) != state), None)
    return (runs[end].moment if end is not None else float("inf")) - runs[start].moment


def check(world: World, interval: float) -> None:
    db = _db(world.root)
    assert history_problems(db) == [], world.log
    store = open_store(world.root)
    conn = sqlite3.connect(f"file:{db}?mode=ro", uri=True)
    try:
        pruned = float(store.get_meta("history_pruned_before") or 0)
        moments = [run.moment for run in world.runs]
        for i, run in enumerate(world.runs):
            if run.moment < pruned:
                continue
            where = f"run {i} of {world.log}"
            versions, edges = _history_at(conn, run.moment)
            assert set(versions) == set(run.notes), f"the notes then: {where}"
            paths = {v[1]: note_id for note_id, v in versions.items()}
            resolver = Resolver(paths, {v[1]: json.loads(v[2]) for v in versions.values() if json.loads(v[2])})
            for note_id, (version_id, path, _, _, frontmatter, began, _) in versions.items():
                j = next(k for k, m in enumerate(moments) if began <= m)
                data = store.version_bytes(version_id)
                assert (path, data) == world.runs[j].notes[note_id], f"note {note_id}'s version then: {where}"
                for k in range(j + 1, i + 1):
                    if world.runs[k].notes[note_id] != (path, data):  # folded into this version
                        if world.runs[k].notes[note_id][1] == b"":  # an empty one, by its own span
                            assert _empty_span(world, note_id, k) < interval, f"note {note_id} empty too long: {where}"
                        else:
                            assert moments[k] - began < interval, f"note {note_id} folded past the interval: {where}"
                note = parse_note(path, data, 0)
                wanted = Counter((link.target, link.kind) for link in note.links)
                stamp = world_time(json.loads(frontmatter))
                had = edges.get(note_id, [])
                assert {(e[0], e[1]): e[2] for e in had} == dict(wanted), f"note {note_id}'s links then: {where}"
                assert len(had) == len(wanted), f"note {note_id}'s edges then: {where}"
                for target, kind, _, target_id, status, *when in had:
                    assert tuple(when) == (stamp.date, stamp.valid_from, stamp.valid_to, stamp.status), where
                    found = resolver.resolve(Link(target, kind, None, None, 0), path)
                    if found is not None:
                        expected = (paths[found], "resolved")
                    else:
                        expected = (None, "attachment" if is_attachment(target) else "dangling")
                    assert (target_id, status) == expected, f"note {note_id}'s link {target!r} then: {where}"
    finally:
        conn.close()
        store.close()


def check_texts(world: World) -> None:
    """Every text history keeps reads back (``version_bytes``: against chunks, whole, or from
    segments) as bytes once written at its version's path."""
    store = open_store(world.root)
    try:
        rows = store.conn.execute("SELECT id, path FROM note_versions WHERE content IS NOT NULL").fetchall()
        for version_id, path in rows:
            data = store.version_bytes(version_id)
            assert data is not None and data in world.contents[path], f"version {version_id}: {world.log}"
    finally:
        store.close()


def check_as_of(world: World, samples: int = 3) -> None:
    """`brain ask --as-of` a moment after a few runs answers with each note's words then."""
    store = open_store(world.root)
    try:
        pruned = float(store.get_meta("history_pruned_before") or 0)
    finally:
        store.close()
    runs = [run for run in world.runs if run.moment >= pruned and run.notes]
    for run in world.rng.sample(runs, min(samples, len(runs))):
        recaller = open_recaller(world.root, update=False, as_of=run.moment)
        try:
            conn = sqlite3.connect(f"file:{_db(world.root)}?mode=ro", uri=True)
            try:
                versions, _ = _history_at(conn, run.moment)
            finally:
                conn.close()
            for version in versions.values():
                store = open_store(world.root)
                try:
                    data = store.version_bytes(version[0])
                finally:
                    store.close()
                assert data is not None
                token = next((w for w in data.decode().split() if w.startswith("token")), None)
                if token is None:  # an empty version: no words to ask for
                    continue
                result = recaller.ask(token, "hybrid", RecallSettings(k=20, depth=40, seeds=5, max_new=10, pool=40))
                texts = " ".join(c.text for c in result.results if c.path == version[1])
                # (a note with a log shows the chunk the lanes fused best, not always the token's)
                long = "\n## Log\n" in data.decode()
                assert long or token in texts, f"--as-of {run.moment}: {version[1]} lacks {token}: {world.log}"
                others = {w for c in result.results if c.path == version[1] for w in c.text.split()}
                assert {w for w in others if w.startswith("token")} <= {token}, world.log
        finally:
            recaller.close()


@pytest.fixture
def clock(monkeypatch) -> Clock:
    clock = Clock()
    monkeypatch.setattr(history_module, "time", clock)
    monkeypatch.setenv("BRAIN_VERSION_INTERVAL", str(INTERVAL))
    return clock


def _indexed_world(root: Path, rng: random.Random, clock) -> World:
    """Three notes (two of one name), indexed: where every sequence starts."""
    world = World(root, rng, clock)
    for path in ("Alpha.md", "Beta.md", "sub/Alpha.md"):
        world.write(path, world.content())
    index_vault(root, progress=False)
    world.note_run()
    return world


@pytest.mark.parametrize("keep", [None, "0", "1", "2"])
@pytest.mark.parametrize("seed", range(SEEDS))
def test_random_sequences_read_as_a_vault_that_was(tmp_path, clock, monkeypatch, keep, seed):
    if keep is not None:
        monkeypatch.setenv("BRAIN_KEEP_VERSIONS", keep)
    root = tmp_path / "vault"
    world = _indexed_world(root, random.Random(seed * 7919 + len(keep or "")), clock)
    for _ in range(STEPS):
        world.step()
        assert history_problems(_db(root)) == [], world.log
        check_texts(world)
    check(world, INTERVAL)
    check_as_of(world)
    for path in world.files:
        shown = CliRunner().invoke(cli, ["history", path, "--vault", str(root), "--json"])
        assert shown.exit_code == 0, shown.output
        assert all(v["text_kept"] for v in json.loads(shown.output)["versions"]), world.log


@pytest.mark.parametrize("seed", range(SEEDS))
def test_the_checks_hold_with_every_save_kept(tmp_path, clock, monkeypatch, seed):
    """The harness itself: with the interval at 0 every run's notes are their own versions."""
    monkeypatch.setenv("BRAIN_VERSION_INTERVAL", "0")
    root = tmp_path / "vault"
    world = _indexed_world(root, random.Random(99 + seed), clock)
    for _ in range(STEPS):
        world.step()
    check(world, 1e-9)  # nothing folded
    check_as_of(world)
