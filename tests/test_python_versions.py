"""brain says Python 3.10+ and CI runs 3.11: what only an older or newer Python would show, checked on
the one CI runs. The masker's patterns built as Python 3.10 gets them (no atomic group, no possessive
quantifier: 3.11's) compile there and mask as 3.11's do."""

from __future__ import annotations

import ast
import importlib.util
import re
import sys
from pathlib import Path
from types import ModuleType
from typing import Any

import pytest

import brain.ledger.redact as masker
from brain.ledger.redact import patterns, redact, rules

TESTS = Path(__file__).parent
PY310 = (3, 10, 13, "final", 0)


def _patterns_as_built_on(version: tuple[Any, ...], monkeypatch: pytest.MonkeyPatch) -> ModuleType:
    """A fresh copy of brain/ledger/redact/patterns.py, built as if ``sys.version_info`` were ``version``
    (it imports the standard library only, so it loads alone)."""
    spec = importlib.util.spec_from_file_location("_patterns_as_built", patterns.__file__)
    assert spec is not None and spec.loader is not None
    module = importlib.util.module_from_spec(spec)
    with monkeypatch.context() as m:
        m.setattr(sys, "version_info", version)
        spec.loader.exec_module(module)
    return module


def _lazies(module: ModuleType) -> dict[str, Any]:
    """Every pattern of the module by where it stands: its _Lazy globals and each rule's."""
    found = {name: value for name, value in vars(module).items() if isinstance(value, module._Lazy)}
    found.update({f"_RULES[{i}]": lazy for i, lazy in enumerate(module._RULE_PATTERNS)})
    return found


def _newer_than_3_10(pattern: str, flags: int) -> list[str]:
    """The opcodes of ``pattern`` that Python 3.10's re has not (3.11 added them); [] on 3.10 itself,
    where compiling it is the check."""
    if sys.version_info < (3, 11):
        re.compile(pattern, flags)
        return []
    parser: Any = re._parser  # type: ignore[attr-defined]

    def walk(node: Any) -> list[str]:
        if isinstance(node, parser.SubPattern):
            return [found for op, av in node.data for found in [str(op)] * (str(op) in NEWER) + walk(av)]
        if isinstance(node, (tuple, list)):
            return [found for item in node for found in walk(item)]
        return []

    return walk(parser.parse(pattern, flags))


NEWER = {"ATOMIC_GROUP", "POSSESSIVE_REPEAT"}


def test_every_masking_pattern_compiles_on_python_3_10(monkeypatch: pytest.MonkeyPatch) -> None:
    # Before: four of them held (?>…) or *+ / {0,8}+, and on 3.10 every text that asked for one of
    # those rules ("password: x", "API_KEY=x", "git config", "пароль:") raised re.error from redact().
    built = _patterns_as_built_on(PY310, monkeypatch)
    newer = {
        where: ops for where, lazy in _lazies(built).items() if (ops := _newer_than_3_10(lazy.pattern, lazy.flags))
    }
    assert newer == {}


def _texts() -> list[str]:
    """Every string written in tests/test_ledger_redact.py: its secrets, its prose, its code."""
    tree = ast.parse((TESTS / "test_ledger_redact.py").read_text(encoding="utf-8"))
    return sorted(
        {node.value for node in ast.walk(tree) if isinstance(node, ast.Constant) and isinstance(node.value, str)}
    )


@pytest.mark.skipif(
    sys.version_info < (3, 11), reason="compares 3.10's patterns with 3.11's, which 3.10 cannot compile"
)
def test_python_3_10s_patterns_match_and_mask_as_3_11s(monkeypatch: pytest.MonkeyPatch) -> None:
    built = _patterns_as_built_on(PY310, monkeypatch)
    new, old = _lazies(built), _lazies(patterns)
    changed = [where for where in old if new[where].pattern != old[where].pattern]
    # Those that use 3.11's syntax differ, and only those: the rest are as they were.
    assert set(changed) == {where for where, lazy in old.items() if _newer_than_3_10(lazy.pattern, lazy.flags)}
    assert "_MORE_WORDS" in changed and len(changed) >= 3
    texts = _texts()
    assert len(texts) > 1000
    for where in changed:
        before, after = (
            re.compile(old[where].pattern, old[where].flags),
            re.compile(new[where].pattern, new[where].flags),
        )
        added = {after.groupindex[name] for name in set(after.groupindex) - set(before.groupindex)}
        kept = [0] + [number for number in range(1, after.groups + 1) if number not in added]
        assert len(kept) == before.groups + 1, where
        for text in texts:
            spans_before = [[m.span(g) for g in range(before.groups + 1)] for m in before.finditer(text)]
            spans_after = [[m.span(g) for g in kept] for m in after.finditer(text)]
            assert spans_after == spans_before, (where, text)
    # The masker itself with 3.10's patterns in place: the same text out, and some of it masked by them.
    masked = [redact(text) for text in texts]
    rule_patterns = list(patterns._RULE_PATTERNS)
    for where in changed:
        if where.startswith("_RULES["):
            rule_patterns[int(where[7:-1])] = new[where]
    monkeypatch.setattr(masker, "_RULE_PATTERNS", rule_patterns)
    monkeypatch.setattr(rules, "_MORE_WORDS", new["_MORE_WORDS"])
    assert [redact(text) for text in texts] == masked
    assert sum(m != t for m, t in zip(masked, texts)) > 100
