"""`RecallSettings.note_dense_rrf_k` (60 by default): a query that asks for a note by what it
is ("the note on what hardware I need to run LLMs locally") fuses the dense lane's order at this
RRF k instead of lane_rrf_k's. The query's form and the plumbing only; what it is worth is
measured in bench/ (README, "What each stage is worth")."""

from __future__ import annotations

import pytest
from conftest import write

from brain.index.indexer import index_vault
from brain.recall import fusion, query_form
from brain.recall.opening import open_recaller
from brain.recall.types import DEFAULT_LANE_RRF_K, RecallSettings

SOUGHT = "the note on what hardware I need to run LLMs locally"


@pytest.mark.parametrize(
    ("query", "seeks"),
    [
        (SOUGHT, True),  # "what" begins the description, not a question
        ("page where I benchmarked local LLMs like TinyLlama on my old laptop", True),
        ("my notes from early November 2024 about byzantine generals", True),
        ("Lofoten trip notes", True),
        ("home page of the vault", True),
        ("заметка про Мастера и Маргариту", True),
        ("the Raft paper", False),  # no word for a note
        ("the note on what hardware I need to run LLMs locally?", False),  # a question mark
        ("what kinds of lens filters for photography do I have notes on", False),  # opens as a question
        ("in the note where I compared brahman to a zero-byte file, what command makes a device", False),
        ("my llm notes, can I run them on a laptop", False),  # a yes-no question after a clause
        ("footnotes and notebook pages", True),  # "pages"
        ("footnotes and notebooks", False),  # words inside other words are not the word
        # Russian puts a comma before every clause a question word opens: after "то", "том", "тем"
        # ("о том, как…": about how…) the clause describes, as "the note on how…" does
        ("заметка о том, как настроить vim", True),
        ("заметка про то, что я купил в Лиссабоне", True),
        ("страница с тем, где лежат бэкапы", True),
        ("заметка о том, как настроить vim, какой плагин я выбрал", False),  # then a clause that asks
        ("в заметке про vim, какой плагин я выбрал", False),
        ("my raft notes. what did I decide about the lease", False),  # a question after a sentence
        ("my raft notes. can I use them for the talk", False),
        ("notes from Lisbon. The offsite, day two", True),
        # Russian's comma before a clause that describes: after a word for a note, or after "то"
        ("заметка о том, какое железо нужно для локальных LLM", True),
        ("страница, где я сравнивал видеокарты", True),
        ("заметку, где я писал про нерпу", True),
        ("моя заметка про то, что я купил", True),
        ("в заметке, где я сравнивал X и Y, какая команда нужна", False),  # the second clause asks
        ("заметка про нерпу, где она живёт", False),
        ("в какой заметке я записал рецепт", False),  # opens as a question
    ],
)
def test_seeks_note(query, seeks):
    assert query_form.seeks_note(query) is seeks


@pytest.fixture
def vault(tmp_path):
    root = tmp_path / "vault"
    write(root, "Local AI Requirements.md", "A GPU with 24 GB of VRAM runs a 13B model; 64 GB of RAM.\n")
    write(root, "Fixing LLMs.md", "LLMs hallucinate; grounding them in retrieval helps.\n")
    write(root, "Hardware Wishlist.md", "RISC-V boards and a NAS; see [[Local AI Requirements]].\n")
    index_vault(root, progress=False)
    return root


def test_the_dense_lanes_k_for_a_note_sought(vault, monkeypatch, closing):
    """On, a query that seeks a note fuses the dense lane at the switch's k and every other lane
    as before; a question, or the switch off (0), leaves lane_rrf_k as it is."""
    seen: list[dict[str, int]] = []
    real = fusion.rrf

    def spy(rankings, k=fusion.DEFAULT_RRF_K, weights=None, lane_k=None):
        seen.append(dict(lane_k or {}))
        return real(rankings, k, weights, lane_k)

    monkeypatch.setattr(fusion, "rrf", spy)
    recaller = closing(open_recaller(vault))
    on = RecallSettings(note_dense_rrf_k=45)
    recaller.ask(SOUGHT, "hybrid+ppr", on)
    assert seen == [{**DEFAULT_LANE_RRF_K, "dense": 45}]
    seen.clear()
    recaller.ask("what hardware do I need to run LLMs locally?", "hybrid+ppr", on)  # a question
    recaller.ask(SOUGHT, "hybrid+ppr", RecallSettings(note_dense_rrf_k=0))  # off
    recaller.ask(SOUGHT, "hybrid+ppr", RecallSettings(note_dense_rrf_k=45, lane_rrf_k={"lexical": 90}))
    assert seen == [DEFAULT_LANE_RRF_K, DEFAULT_LANE_RRF_K, {"lexical": 90, "dense": 45}]
    seen.clear()
    recaller.ask(SOUGHT, "hybrid+ppr", RecallSettings())  # the default: on, at RRF's own k
    assert seen == [{**DEFAULT_LANE_RRF_K, "dense": 60}]
    assert RecallSettings().lane_rrf_k == DEFAULT_LANE_RRF_K  # the settings' own dict is not changed


def test_explain_says_the_dense_lane_took_its_own_k(vault, closing):
    """`brain eval --explain` says when the dense lane was fused at the note-sought k, in text
    and JSON; not for a question, nor with the switch off, nor in a mode that fuses nothing."""
    from brain.evaluation.explain import explain, format_explanation
    from brain.evaluation.queries import EvalQuery

    recaller = closing(open_recaller(vault))
    line = "the query asks for a note by what it is: the dense lane's order fused at RRF k 60"
    sought = EvalQuery("n1", SOUGHT, "navigational", ("Local AI Requirements.md",))
    ex = explain(recaller, sought, "hybrid+ppr", RecallSettings())
    assert ex.note_dense_k == 60 and ex.as_dict()["note_dense_rrf_k"] == 60
    assert line in format_explanation(ex)
    asked = EvalQuery("n2", "what hardware do I need to run LLMs locally?", "paraphrase", ("Local AI Requirements.md",))
    for ex in (
        explain(recaller, asked, "hybrid+ppr", RecallSettings()),
        explain(recaller, sought, "hybrid+ppr", RecallSettings(note_dense_rrf_k=0)),
        explain(recaller, sought, "vector", RecallSettings()),
    ):
        assert ex.note_dense_k is None and ex.as_dict()["note_dense_rrf_k"] is None
        assert "RRF k" not in format_explanation(ex)
