"""Where two versions of a note differ, line by line, as ``difflib.SequenceMatcher`` says it.

``brain history`` summarises each version against the one before by the opcodes of
``SequenceMatcher(None, old_lines, new_lines, autojunk=False)``: how many lines each change
adds and removes, and which sections it touches. SequenceMatcher finds the longest common run
of lines, then recurses on each side of it; its search for that run visits every pair of equal
lines, so a log whose blank lines repeat thousands of times cost ~0.2 s a version at 255 KB.

``changed_ranges`` gives the same opcodes' ranges (the same runs, the same ties: longest,
then earliest in the old lines, then earliest in the new) from a search that is linear: a run
both ranges start with that fills one of them is the longest (an append, a cut at the end),
else a suffix automaton of the new lines finds it.
"""

from __future__ import annotations

from array import array
from collections.abc import Hashable
from typing import TypeVar

Line = TypeVar("Line", bound=Hashable)
_NONE = object()  # no line: a state of the automaton with no transition yet


def changed_ranges(old: list[Line], new: list[Line]) -> list[tuple[int, int, int, int]]:
    """``(i1, i2, j1, j2)`` of each opcode but 'equal' of SequenceMatcher(None, old, new,
    autojunk=False).get_opcodes(), in order: old[i1:i2] became new[j1:j2]."""
    blocks: list[tuple[int, int, int]] = []
    queue = [(0, len(old), 0, len(new))]
    while queue:  # SequenceMatcher.get_matching_blocks, step for step
        alo, ahi, blo, bhi = queue.pop()
        i, j, k = _longest(old, alo, ahi, new, blo, bhi)
        if k:
            blocks.append((i, j, k))
            if alo < i and blo < j:
                queue.append((alo, i, blo, j))
            if i + k < ahi and j + k < bhi:
                queue.append((i + k, ahi, j + k, bhi))
    blocks.sort()
    blocks.append((len(old), len(new), 0))
    out = []
    i = j = 0
    for ai, bj, size in blocks:  # what lies between two runs is a change (adjacent runs leave none)
        if i < ai or j < bj:
            out.append((i, ai, j, bj))
        i, j = ai + size, bj + size
    return out


def _longest(a: list[Line], alo: int, ahi: int, b: list[Line], blo: int, bhi: int) -> tuple[int, int, int]:
    """SequenceMatcher.find_longest_match(alo, ahi, blo, bhi) without junk: the longest run
    a[i:i+k] == b[j:j+k] in the ranges, the smallest i among the longest, then the smallest j;
    (alo, blo, 0) when there is none."""
    shortest = min(ahi - alo, bhi - blo)
    same, most = 0, shortest  # the run both ranges start with: a[alo:alo+same] == b[blo:blo+same]
    while same < most:  # halving what is left, each step a comparison of slices (in C)
        step = (same + most + 1) // 2
        if a[alo + same : alo + step] == b[blo + same : blo + step]:
            same = step
        else:
            most = step - 1
    if same == shortest:  # one range begins the other: no run is longer, none begins before it
        return alo, blo, same
    # A suffix automaton of b[blo:bhi]: each state is a set of b's substrings that end at the
    # same positions (first: where the first of them ends). Most states leave by one line: its
    # transition is kept in two columns (line, to), the others in a dict of the state's own
    # (more), where a dict for every state cost ~330 bytes a line of b (33 MB at 100,000 lines).
    line: list[object] = [_NONE]  # the line of the state's first transition (_NONE: none yet)
    to = array("q", [0])  # where it leads
    more: dict[int, dict[Hashable, int]] = {}
    link, length, first = array("q", [-1]), array("q", [0]), array("q", [-1])
    last = 0
    for pos in range(blo, bhi):
        c = b[pos]
        cur = len(length)
        line.append(_NONE)
        to.append(0)
        link.append(0)
        length.append(length[last] + 1)
        first.append(pos)
        p = last
        while p != -1:  # every suffix state without a transition by c gets one, to cur
            if line[p] is _NONE:
                line[p], to[p] = c, cur
            elif line[p] == c:
                break
            else:
                others = more.get(p)
                if others is None:
                    more[p] = {c: cur}
                elif c in others:
                    break
                else:
                    others[c] = cur
            p = link[p]
        if p != -1:
            q = to[p] if line[p] == c else more[p][c]
            if length[p] + 1 == length[q]:
                link[cur] = q
            else:
                clone = len(length)
                line.append(line[q])
                to.append(to[q])
                if q in more:
                    more[clone] = dict(more[q])
                link.append(link[q])
                length.append(length[p] + 1)
                first.append(first[q])
                while p != -1:  # the transitions by c to q from p and its suffixes go to the clone
                    if line[p] == c:
                        if to[p] != q:
                            break
                        to[p] = clone
                    else:
                        others = more.get(p)
                        if others is None or others.get(c) != q:
                            break
                        others[c] = clone
                    p = link[p]
                link[q] = link[cur] = clone
        last = cur
    # a[alo:ahi] walked through it: the longest run of a ending at i found in b, and where in b
    # it first ends. The first i to reach a length is the smallest i of the runs that long.
    best_i, best_j, best = alo, blo, 0
    state = size = 0
    for i in range(alo, ahi):
        c = a[i]
        while True:  # the longest suffix of the run so far that goes on by c
            if line[state] == c:
                found = to[state]
                break
            others = more.get(state)
            if others is not None and c in others:
                found = others[c]
                break
            if not state:
                found = -1  # (at the root: no run ends here)
                break
            state = link[state]
            size = length[state]
        if found < 0:
            continue
        state = found
        size += 1
        if size > best:
            best, best_i, best_j = size, i - size + 1, first[state] - size + 1
    return best_i, best_j, best
