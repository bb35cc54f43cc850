"""What form a query takes: a question, one that compares, one that asks only why.

The lanes read these to decide whether they answer a query at all: the names lane stays out
of questions (their names are the topic, not the note wanted) unless they compare; the bridge
lane stays out of comparisons and puts its first note first only for a query that asks
something other than why. Word lists, English and Russian: a test reads words, not meaning.
"""

from __future__ import annotations

import re

# A question that sets two things side by side, in English or Russian.
_COMPARES = re.compile(
    r"\b(compar(e|es|ed|ing|ison|isons)|versus|vs|differ|differs|differences?|"
    r"сравн\w*|разниц\w*|отличи[ея]\w*|отлича\w*)\b",
    re.IGNORECASE | re.UNICODE,
)
# A query that asks something: a question mark or a question word, in English or Russian.
_QUESTION_WORDS = re.compile(
    r"\b(who|whom|whose|what|whats|which|where|when|why|how|"
    r"кто|кого|кому|чей|чья|чьё|чьи|что|чего|чем|как\w*|где|куда|откуда|когда|почему|зачем|сколько)\b",
    re.IGNORECASE | re.UNICODE,
)
# "Why" asks for the explanation of what the question describes, which is that thing's own note.
_WHY = frozenset({"why", "почему", "зачем"})
# A question, for the names lane: one that begins with a question word or an auxiliary verb.
_QUESTION = re.compile(
    r"^\s*(what|what's|whats|how|why|when|where|which|who|whom|whose|is|are|was|were|does|do|did|can|could|"
    r"should|would|will|как|что|почему|зачем|когда|где|какой|какая|какие|кто)\b",
    re.IGNORECASE | re.UNICODE,
)


def is_question(query: str) -> bool:
    """A question asks about something; the names it holds are its topic, not the note wanted
    ("what is the current decision on the vector store?" wants the decision, not *Vector store*)."""
    return query.rstrip().endswith("?") or bool(_QUESTION.match(query))


def compares(query: str) -> bool:
    """The query sets two things side by side ("X vs Y", "how does X compare with Y")."""
    return bool(_COMPARES.search(query))


def asks(query: str) -> bool:
    """The query asks something ("who…", "what is that home?", "как…") rather than only describing."""
    return "?" in query or bool(_QUESTION_WORDS.search(query))


def asks_only_why(query: str) -> bool:
    """Its only question word is why (почему, зачем): "why do two clean pieces of metal fuse in
    a vacuum?" asks about the thing it describes, not about a note that thing links to."""
    words = {match.group(1).casefold() for match in _QUESTION_WORDS.finditer(query)}
    return bool(words) and words <= _WHY
