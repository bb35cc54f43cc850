"""Which rules of _RULES a text asks for: those one of whose triggers occurs in it, found by the rare
characters of the words the triggers hold (the tables are built by the first text masked, not on import)."""

from __future__ import annotations

import functools
import re

from .patterns import (
    _RULES,
)

# Words most triggers hold: a trigger is looked for only where its word is (every "password …" of
# _STATED_TRIGGERS only in a text with "pass" in it). Asking each of the rules' 150 triggers of each
# text was three quarters of the masker's time over real transcripts and notes (37,000 texts, most of a
# few hundred characters: 1.8 s of 2.4 s).
_TRIGGER_WORDS = (
    *("pass", "pw", "secret", "token", "key", "code", "phrase", "pin", "login", "cookie", "auth", "stdin", "парол"),
    "sig",  # a signed URL's sig= and signature=
    *("gh", "gl", "sk", "shp", "_v1_"),  # the prefixes of GitHub's, GitLab's, Stripe's, Shopify's, DigitalOcean's keys
    # Words a few clients' names share (mysql, sqlcmd, sqlplus, sqlldr; Oracle's expdp, impdp), and the ":"
    # of URLs and key shapes ("://", ":aa", "wifi:"), last: a text without one asks none of its triggers.
    *("sql", "pdp", ":"),
)


def _trigger_groups() -> tuple[tuple[str, tuple[tuple[str, int, frozenset[int]], ...]], ...]:
    """The rules' triggers by the first of _TRIGGER_WORDS each holds (or itself alone): (the word, ((a
    trigger, where the word stands in it or -1 where it is the word, the indexes in _RULES of the rules it
    runs), …)), each trigger once."""
    rules_of: dict[str, set[int]] = {}
    for i, (triggers, _, _) in enumerate(_RULES):
        for trigger in triggers:
            rules_of.setdefault(trigger, set()).add(i)
    groups: dict[str, list[tuple[str, frozenset[int]]]] = {}
    for trigger, rules in rules_of.items():
        word = next((w for w in _TRIGGER_WORDS if w in trigger), trigger)
        groups.setdefault(word, []).append((trigger, frozenset(rules)))
    return tuple(
        # a trigger that is its group's word alone (offset -1) is found with it
        (word, tuple((trigger, -1 if trigger == word else trigger.index(word), rules) for trigger, rules in members))
        for word, members in groups.items()
    )


# Characters by how seldom they occur in real transcripts, notes and code, rarest first (bench/mask_compare.py's
# texts: "~" 0.007% of characters, "-" 1.6%; letters of other scripts are rarer still). A group's word is
# looked for at the rarest of its characters: one regex finds, in one pass, which of those characters
# stand where a word's others stand around them, and only their words are asked. Each word asked in
# turn was a scan of the whole text per word: 95 scans, most finding nothing, were 0.6 of the masker's
# 1.0 s over those texts.
_RARE_CHARACTERS = "~<'=zqj>789648x53_201k/v.w:byfg\"-"


# Words most texts hold: asked in turn, each found near the start (a regex would stop at every one).
_FREQUENT_WORDS = frozenset((":", "</", "code", "gh", "gl", "key", "pin", "sig", "sk", "token", "value"))


_Group = tuple[str, tuple[tuple[str, int, frozenset[int]], ...]]


def _rank(character: str) -> int:
    return -1 if not character.isascii() else _RARE_CHARACTERS.find(character) % (len(_RARE_CHARACTERS) + 1)


def _trigger_scan() -> tuple[tuple[_Group, ...], re.Pattern[str], dict[str, tuple[_Group, ...]]]:
    """(the groups whose word is asked in turn, the regex that finds the rare characters each other group's
    word stands at, those groups by that character)."""
    asked: list[_Group] = []
    anchored: dict[str, list[_Group]] = {}
    for word, members in _trigger_groups():
        rarest = min(word, key=_rank)
        if word in _FREQUENT_WORDS or _rank(rarest) >= len(_RARE_CHARACTERS):
            asked.append((word, members))
        else:
            anchored.setdefault(rarest, []).append((word, members))
    branches = []
    for character, groups in anchored.items():
        around = []
        for word, _ in groups:
            at = word.index(character)
            before, after = word[:at], word[at + 1 :]
            around.append(
                (f"(?<={re.escape(before)}.)" if before else "") + (f"(?={re.escape(after)})" if after else "")
            )
        tail = "" if not all(around) else f"(?:{'|'.join(around)})"
        branches.append(re.escape(character) + tail)
    found = re.compile("|".join(branches))
    return tuple(asked), found, {character: tuple(groups) for character, groups in anchored.items()}


# The tables are built by the first text masked, not on import (~1.5 ms of CPU, a third of the import's):
# a process that imports the masker and masks nothing pays nothing for them.
_scan_tables = functools.cache(_trigger_scan)


# Finds of the rare characters' regex read before the words of the characters not found yet are asked in turn, each a scan: a
# text that holds a word many times is read no further (a find is a step of Python, a scan a few of C's).
_MOST_FOUND = 64


def _rules_to_run(lowered: str) -> list[int]:
    """The indexes in _RULES, in order, of the rules a trigger of which occurs in ``lowered``."""
    asked, rare_at, anchored = _scan_tables()
    groups = list(asked)
    seen: set[str] = set()
    for count, match in enumerate(rare_at.finditer(lowered)):
        if count == _MOST_FOUND:  # a text of many ("hf_hf_hf_…"): the words of the other characters in turn
            groups += [group for character, more in anchored.items() if character not in seen for group in more]
            break
        character = match.group()
        if character not in seen:
            seen.add(character)
            groups += anchored[character]
            if len(seen) == len(anchored):
                break
    found: set[int] = set()
    long = len(lowered) > _LONG_TEXT
    for word, members in groups:
        if word not in lowered:
            continue
        if not long:
            for trigger, _, rules in members:
                if trigger in lowered:
                    found |= rules
            continue
        # In a long text each trigger is looked for where its word stands (a few places), not in the whole text
        # again: the 62 triggers that hold "pass" were 62 scans of any text with a "pass" in it
        at = lowered.find(word)
        ats = [at]
        while len(ats) <= _MOST_AT and (at := lowered.find(word, at + 1)) >= 0:
            ats.append(at)
        many = len(ats) > _MOST_AT
        for trigger, offset, rules in members:
            if rules <= found:
                continue  # its rules run already (most of "pass"'s run one rule, _STATED's)
            if offset < 0 or (
                trigger in lowered
                if many
                else any(lowered.startswith(trigger, place - offset) for place in ats if place >= offset)
            ):
                found |= rules
    return sorted(found)


# The places of a group's word read at most before its triggers are looked for in the whole text instead, and
# the length of a text from which they are read (in a shorter one, a scan per trigger costs less).
_MOST_AT = 8


_LONG_TEXT = 1000
