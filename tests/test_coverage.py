"""Coverage (recall/coverage.py): a note repeating a passage above it counts less."""

from __future__ import annotations

import numpy as np

from brain.recall.coverage import covered


def _unit(*values: float) -> np.ndarray:
    vector = np.array(values, dtype=np.float32)
    return vector / np.linalg.norm(vector)


# Notes 1 and 2 say the same thing (cosine 0.99); note 3 says something else.
PASSAGES = {1: _unit(1, 0, 0), 2: _unit(1, 0.15, 0), 3: _unit(0, 1, 0)}
FUSED = {1: 0.030, 2: 0.029, 3: 0.028}


def _order(scores: dict[int, float]) -> list[int]:
    return sorted(scores, key=lambda note_id: -scores[note_id])


def test_a_near_copy_of_the_first_note_falls_below_a_note_on_another_part():
    out = covered(FUSED, PASSAGES, kept=(), weight=0.6, floor=0.7, depth=30)
    assert _order(out) == [1, 3, 2]
    assert out[1] == FUSED[1] and out[3] == FUSED[3]  # repeating nothing, they keep their scores


def test_below_the_floor_nothing_moves():
    out = covered(FUSED, PASSAGES, kept=(), weight=0.6, floor=0.995, depth=30)
    assert out == FUSED


def test_a_note_put_first_keeps_its_score_and_counts_as_above():
    fused = {2: 0.040, 1: 0.030, 3: 0.028}  # 2 was put first: 1 repeats it
    out = covered(fused, PASSAGES, kept={2}, weight=0.6, floor=0.7, depth=30)
    assert out[2] == 0.040
    assert _order(out) == [2, 3, 1]


def test_notes_past_the_depth_and_notes_without_a_passage_keep_their_scores():
    fused = {**FUSED, 4: 0.027, 5: 0.001}
    passages = {**PASSAGES, 5: _unit(1, 0, 0)}  # 5 repeats 1, but lies past the depth
    out = covered(fused, passages, kept=(), weight=0.6, floor=0.7, depth=4)
    assert out[4] == 0.027 and out[5] == 0.001


def test_in_the_pipeline_a_copy_of_the_first_note_falls_below_a_note_on_another_part(tmp_path, closing):
    from conftest import write

    from brain.index.indexer import index_vault
    from brain.recall.opening import open_recaller
    from brain.recall.types import RecallSettings

    root = tmp_path / "harbour"
    crane = "Harbour cranes stop in winter storms; cranes restart when storms end.\n"
    write(root, "Cranes.md", f"# Cranes\n\n{crane}")
    write(root, "Cranes again.md", f"# Cranes again\n\n{crane}Harbour cranes.\n")
    write(root, "Tides.md", "# Tides\n\nHarbour water in winter follows the tide tables.\n")
    for n in range(4):
        write(root, f"Other {n}.md", f"# Other {n}\n\nBread, flour and water {n}.\n")
    index_vault(root, progress=False)
    recaller = closing(open_recaller(root))
    query = "harbour cranes in winter storms"

    def order(**overrides: float) -> list[str]:
        result = recaller.ask(query, "hybrid+ppr", RecallSettings(k=3, **overrides))
        assert not any(result.fallbacks.values())
        return [c.path for c in result.results]

    before, after = order(), order(coverage=1.0, coverage_floor=0.5)
    assert before.index("Cranes again.md") < before.index("Tides.md")  # the copy first, without coverage
    assert after.index("Tides.md") < after.index("Cranes again.md")
    assert sorted(before) == sorted(after)
