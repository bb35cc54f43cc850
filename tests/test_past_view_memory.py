"""What a view of the past holds (`brain serve` keeps a few, each for minutes): its past chunks'
vectors once, not once in numpy and again in FAISS, found as they were found before."""

from __future__ import annotations

import tracemalloc

import numpy as np
from conftest import FakeEmbedder, write
from index_helpers import index_then_moment, open_store

from brain.index import history_store
from brain.index.vectors import VectorIndex, load_current
from brain.recall.past import PAST, LayeredVectors, PastIndex, slice_vectors

DIM = 1024  # wide vectors: what a view holds of them stands well above the bookkeeping around it


def _vault(root, notes: int, edited: int) -> float:
    """``notes`` notes of three chunks each, indexed; then the first ``edited`` rewritten and
    indexed again: the moment between."""
    for i in range(notes):
        sections = "".join(
            f"## Part {j}\n\n" + f"Kiln {i} log part {j}: glaze batch fired, crawled. " * 5 + "\n\n" for j in range(3)
        )
        write(root, f"Note {i:03d}.md", f"# Note {i}\n\n{sections}")
    moment = index_then_moment(root)
    for i in range(edited):
        write(root, f"Note {i:03d}.md", f"# Note {i}\n\nRewritten: only the slag was kept.\n")
    index_then_moment(root)
    return moment


def test_a_view_holds_its_past_vectors_once(tmp_path, monkeypatch):
    monkeypatch.setenv("BRAIN_EMBED_MODEL", f"fake:{DIM}")
    root = tmp_path / "vault"
    moment = _vault(root, notes=40, edited=15)
    store = open_store(root)
    try:
        past = PastIndex(store, as_of=moment)
        present = load_current(store, DIM)
        chunks = len(past.past_chunk_ids())
        assert chunks >= 45
        tracemalloc.start()
        try:
            before = tracemalloc.get_traced_memory()[0]
            vectors = slice_vectors(past, DIM, present)
            held = tracemalloc.get_traced_memory()[0] - before
        finally:
            tracemalloc.stop()
        assert isinstance(vectors, LayeredVectors) and vectors.past.size == chunks
        # FAISS holds them (out of tracemalloc's sight); a numpy copy beside it was chunks × DIM × 4 more
        assert held < chunks * DIM * 4 / 4
        past.close()
    finally:
        store.close()


def test_past_vectors_are_found_as_a_vector_index_found_them():
    """Same ids, same scores, ties in the same order, for every k (the answers of a view of the
    past, in `brain serve` and in-process, rank its past chunks by these)."""
    from brain.recall.past import FlatVectors

    rng = np.random.default_rng(3)
    vectors = rng.standard_normal((300, 32)).astype(np.float32)
    vectors[100:120] = vectors[5]  # ties
    vectors /= np.linalg.norm(vectors, axis=1, keepdims=True)
    ids = PAST + rng.permutation(10_000)[:300].astype(np.int64)
    before = VectorIndex.empty(32, version=-1)  # what a view held its past chunks in
    before.add(ids, vectors)
    flat = FlatVectors(32, ids, vectors)
    assert flat.size == before.size == 300
    for query in (vectors[5], vectors[7], rng.standard_normal(32).astype(np.float32)):
        for k in (1, 10, 25, 300, 500):
            got, want = flat.search(query, k), before.search(query, k)
            assert np.array_equal(got[0], want[0]) and np.array_equal(got[1], want[1])
    empty = FlatVectors(32, np.zeros(0, np.int64), np.zeros((0, 32), np.float32))
    assert empty.size == 0 and len(empty.search(vectors[0], 5)[0]) == 0


def _slice_as_versions_say(store, moment: float | None) -> tuple[dict, set[int]]:
    """A slice's notes and those reading the present's chunks, worked out from whole version rows."""
    hashes = store.note_hashes()
    versions = {v.note_id: v for v in store.versions_at(moment) if moment is not None or v.note_id in hashes}
    fields = {
        n: (v.path, v.title, v.aliases, v.date, v.frontmatter, v.world_date, v.valid_from, v.valid_to)
        + (v.recorded_from, v.recorded_to)
        for n, v in versions.items()
    }
    return fields, {n for n, v in versions.items() if hashes.get(n) == v.hash}


def test_a_slice_keeps_what_recall_reads_of_each_version(tmp_path):
    """Written, rewritten, renamed, deleted and written back: at every moment, each note's fields
    and whether it reads the present's chunks are what its whole version row says."""
    root = tmp_path / "vault"
    write(root, "A.md", "---\naliases: [Alpha]\nvalid_from: 2026-01-02\n---\n# A\n\nKiln log, first firing.\n")
    write(root, "B.md", "# B\n\nGlaze notes. [[A]]\n")
    moments = [index_then_moment(root)]
    write(root, "A.md", "---\naliases: [Alpha, First]\n---\n# A\n\nKiln log, second firing.\n")
    moments.append(index_then_moment(root))
    (root / "B.md").rename(root / "C.md")
    moments.append(index_then_moment(root))
    (root / "A.md").unlink()
    moments.append(index_then_moment(root))
    write(root, "A.md", "---\naliases: [Alpha]\nvalid_from: 2026-01-02\n---\n# A\n\nKiln log, first firing.\n")
    moments.append(index_then_moment(root))
    store = open_store(root)
    try:
        for moment in [*moments, None]:
            past = PastIndex(store, as_of=moment, borrowed=True)
            fields, current = _slice_as_versions_say(store, moment)
            kept = {
                n: (v.path, v.title, v.aliases, v.date, v.frontmatter, v.world_date, v.valid_from, v.valid_to)
                + (v.recorded_from, v.recorded_to)
                for n, v in past.versions.items()
            }
            assert kept == fields and list(past.versions) == sorted(fields)
            assert set(past.current_note_ids()) == current
            past.close()
    finally:
        store.close()


def _kilns(root):
    """An index of 400 short notes with frontmatter, and a moment after it was made."""
    for i in range(400):
        write(root, f"Notes/Kiln {i:03d}.md", f"---\ntags: [kiln]\n---\n# Kiln {i}\n\nFired at cone {i % 10}.\n")
    moment = index_then_moment(root)
    return open_store(root), moment


def test_a_slice_keeps_little_of_each_version(tmp_path):
    """What a view keeps of each note's version (``brain serve`` keeps a few views, each of every
    note): no content hash, event or sizes, and no dict of fields for each."""
    store, moment = _kilns(tmp_path / "vault")
    try:
        tracemalloc.start()
        try:
            before = tracemalloc.get_traced_memory()[0]
            past = PastIndex(store, as_of=moment)
            held = tracemalloc.get_traced_memory()[0] - before
        finally:
            tracemalloc.stop()
        assert len(past.versions) == 400
        # 890 bytes a note here when it kept VersionRows whole, 690 without what recall never reads
        assert held / 400 < 780
        past.close()
    finally:
        store.close()


def test_a_slice_reads_its_versions_a_batch_at_a_time(tmp_path, monkeypatch):
    """Opening a view read every note's row at once, and the objects it kept of them (ids, the
    JSON the present does not hold) held most of that memory after the rows went: at 100,000
    notes 50 MB of the first view's 193 resident. A batch at a time, little more than it keeps."""
    monkeypatch.setattr(history_store, "SLICE_BATCH", 20)
    store, moment = _kilns(tmp_path / "vault")
    try:
        tracemalloc.start()
        try:
            tracemalloc.reset_peak()
            past = PastIndex(store, as_of=moment)
            held, peak = tracemalloc.get_traced_memory()
        finally:
            tracemalloc.stop()
        assert len(past.versions) == 400
        assert (peak - held) / 400 < 100  # 342 bytes a note above what it keeps when read at once, 27 now
        past.close()
    finally:
        store.close()


def test_a_slice_keeps_its_edges_in_few_bytes_and_reads_them_back_as_written():
    from brain.recall.past import _Edges

    rows = [(1, 2, "link", 1), (2, 3, "embed", 2), (3, 1, "link", 0), (1, 3, "link", 3), (4, 1, "embed", 1)]
    edges = _Edges(rows)
    nbytes = sum(column.nbytes for column in (edges.src, edges.dst, edges.kind, edges.times))
    assert nbytes / len(rows) == 13  # 32 as four int64 columns
    written = [(s, t, k) for s, t, k, times in rows for _ in range(max(1, times))]
    assert edges.rows() == written
    assert edges.array().tolist() == [[s, t, int(k == "embed")] for s, t, k in written]
    assert edges.rows(edges.src_in([1]), repeat=False) == [(1, 2, "link"), (1, 3, "link")]
    assert edges.between([1, 2, 3]).rows(repeat=False) == [(s, t, k) for s, t, k, _ in rows[:4]]
    huge = _Edges([(2**40, 7, "link", 1), (7, 2**40, "link", 1)])  # row ids beyond 32 bits stay as they are
    assert huge.rows() == [(2**40, 7, "link"), (7, 2**40, "link")]
    assert huge.rows(huge.dst_in([2**40])) == [(7, 2**40, "link")]


def test_a_slice_mostly_of_the_past_searches_its_own_vectors_as_before(tmp_path):
    """Most notes changed since the moment: the slice's present chunks and its past ones in one
    flat index of their own (not the present's FAISS), found as a VectorIndex of them found them."""
    from brain.recall.past import FlatVectors

    root = tmp_path / "vault"
    moment = _vault(root, notes=12, edited=9)
    store = open_store(root)
    try:
        past = PastIndex(store, as_of=moment, borrowed=True)
        vectors = slice_vectors(past, 64)
        current = past.current_note_ids()
        rows = store.note_chunk_vectors(current) + [
            (PAST + c, n, v) for c, n, v in store.history_chunk_vectors(past.past_chunk_ids())
        ]
        assert isinstance(vectors, FlatVectors) and vectors.size == len(rows) == 12 * 3
        before = VectorIndex.empty(64, version=-1)
        before.add(
            np.asarray([r[0] for r in rows], dtype=np.int64),
            np.frombuffer(b"".join(r[2] for r in rows), dtype=np.float32).reshape(len(rows), 64),
        )
        for query in ("kiln glaze batch", "slag", "part 2"):
            vector = FakeEmbedder().embed_query(query)
            got, want = vectors.search(vector, 20), before.search(vector, 20)
            assert np.array_equal(got[0], want[0]) and np.array_equal(got[1], want[1])
        past.close()
    finally:
        store.close()


def _filed_vault(root, notes: int) -> float:
    """``notes`` notes in a few folders, each with a date, indexed; then a third rewritten in place
    (no path, title or name changed) and indexed again: the moment between."""

    def kiln(i: int, text: str) -> None:
        write(
            root,
            f"Kilns/Shelf {i % 4}/Kiln {i:03d}.md",
            f"---\ndate: 2026-01-0{1 + i % 3}\n---\n# Kiln {i}\n\n{text}\n",
        )

    for i in range(notes):
        kiln(i, "Fired.")
    moment = index_then_moment(root)
    for i in range(0, notes, 3):
        kiln(i, "Cracked.")
    index_then_moment(root)
    return moment


def _served_view(root, moment: float, check) -> None:
    """``check(present, view)`` on a view of the past at ``moment`` opened as `brain serve` opens it."""
    from brain.recall.opening import open_past_view, open_snapshot

    present = open_snapshot(root.resolve(), FakeEmbedder(), rerank_model=None)
    try:
        view = open_past_view(present, as_of=moment)
        try:
            check(present, view)
        finally:
            view.close()
    finally:
        present.close()


def test_a_view_served_whose_paths_are_the_presents_shares_its_folders(tmp_path):
    """The view's notes are the present's at the same paths: the present's folder index is its own."""
    root = tmp_path / "vault"
    moment = _filed_vault(root, notes=60)

    def check(present, view):
        assert len(view.store.versions) == 60 and view.store.current_note_ids()
        assert view.folder_index() is present.folder_index()

    _served_view(root, moment, check)


def test_a_view_served_keeps_no_copy_of_the_presents_paths_and_titles(tmp_path):
    """The view's paths and titles are the present's strings, not its own copies; the dates, times
    and JSON its rows repeat are one object each, not one a note."""
    root = tmp_path / "vault"
    moment = _filed_vault(root, notes=60)

    def check(present, view):
        versions = view.store.versions.values()
        paths = {path: path for _, path in present.folder_index().notes}
        titles = {name.text: name.text for name in present.name_index().names}
        assert all(v.path is paths[v.path] and v.title is titles[v.title] for v in versions)
        assert len({id(v.date) for v in versions}) == 3
        assert len({id(v.recorded_from) for v in versions}) == 1

    _served_view(root, moment, check)


def test_a_view_whose_paths_differ_builds_its_own_folders(tmp_path):
    """A note moved since the moment: the view's folders are its own, as a build from the slice makes them."""
    from brain.recall.folders import FolderIndex
    from brain.recall.opening import open_past_view, open_snapshot

    root = tmp_path / "vault"
    moment = _filed_vault(root, notes=12)
    (root / "Kilns/Shelf 1/Kiln 001.md").rename(root / "Kilns/Shelf 2/Kiln 001.md")
    index_then_moment(root)
    present = open_snapshot(root.resolve(), FakeEmbedder(), rerank_model=None)
    try:
        view = open_past_view(present, as_of=moment)
        try:
            folders = view.folder_index()
            assert folders is not present.folder_index()
            built = FolderIndex.from_store(view.store)
            assert folders.notes == built.notes and folders.folders == built.folders
            assert "Kilns/Shelf 1/Kiln 001.md" in folders.sorted_paths()
        finally:
            view.close()
    finally:
        present.close()


def test_views_served_side_by_side_share_the_versions_of_notes_unchanged_between_them(tmp_path):
    """Two views kept over one snapshot: a note's version that both moments see is one object;
    one rewritten between them is each view's own, as its row then says."""
    from brain.recall.opening import open_past_view, open_snapshot

    root = tmp_path / "vault"
    first = _filed_vault(root, notes=30)  # a third rewritten after ``first``
    write(root, "Kilns/Shelf 1/Kiln 001.md", "---\ndate: 2026-01-02\n---\n# Kiln 1\n\nShattered.\n")
    second = index_then_moment(root)
    present = open_snapshot(root.resolve(), FakeEmbedder(), rerank_model=None)
    try:
        one = open_past_view(present, as_of=first)
        two = open_past_view(present, as_of=second, beside=[one])
        try:
            a, b = one.store.versions, two.store.versions
            assert a.keys() == b.keys()
            rewritten = {n for n in a if a[n] != b[n]}
            assert len(rewritten) == 11  # kilns 0, 3, …, 27 and kiln 1
            assert all(a[n] is b[n] for n in a.keys() - rewritten)
            assert all(a[n].recorded_from < b[n].recorded_from for n in rewritten)
        finally:
            two.close()
            one.close()
    finally:
        present.close()
