"""What form a query takes: a question, one that compares, one that asks only why.

The lanes read these to decide whether they answer a query at all: the names lane stays out
of questions (their names are the topic, not the note wanted) unless they compare; the bridge
lane stays out of comparisons and puts its first note first only for a query that asks
something other than why. Word lists, English and Russian: a test reads words, not meaning.
Russian is read with ё as е ("в чём" and "в чем" are the same question), and a word typed with a
Latin letter drawn as a Cyrillic one ("кaкое" with a Latin "a") as the Cyrillic word.
"""

from __future__ import annotations

import re

from ..text import lookalikes_as_cyrillic, yo_as_ye

# A question that sets two things side by side, in English or Russian: "X vs Y", "is X better than Y",
# «чем X лучше Y», «что лучше: X или Y»; «X против Y» below.
# "or", «или», «либо» alone are not: "is Bowline still Dutch-only or does it do Spain now?", "knocked
# out or asleep" ask of one thing; a question that weighs two says which, better or a word above.
_COMPARES = re.compile(
    r"\b(compar(e|es|ed|ing|ison|isons)|versus|vs|differ|differs|differences?|"
    r"(?:better|worse)\s+than|which\s+(?:one\s+)?is\s+(?:better|worse)|"
    r"сравн\w*|разниц\w*|отличи[ея]\w*|отлича\w*|"
    r"(?:лучше|хуже),?\s+чем|(?:чем|что|кто|котор\w*|какой|какая|какое|какие)\b[^.?!]{0,80}?\b(?:лучше|хуже))\b",
    re.IGNORECASE | re.UNICODE,
)
# «против» is "versus" between two named things («Спартак против Зенита», «vim против emacs»), and "against"
# before what a remedy, a spell or a vote is against («средство против боли», «я против этого», «за и
# против»): a name is written with a capital, a Latin letter or a digit, a thing a remedy fights is not.
_AGAINST = re.compile(r"(\S+)\s+против\s+(\S+)", re.IGNORECASE | re.UNICODE)
# Question words: every case of кто, что, чей and какой, каков (not "какао"), ё written as е.
_RU_WORDS = (
    r"кто|кого|кому|кем|ком|что|чего|чему|чем|чей|чья|чье|чьи|чьего|чьей|чьим|как|какой|какая|какое|какие|"
    r"какого|какому|каком|какую|каким|какими|каких|каков|какова|каково|каковы|где|куда|откуда|когда|"
    r"почему|зачем|сколько"
)
_EN_WORDS = r"who|whom|whose|what|whats|which|where|when|why|how"
# A query that asks something: a question mark or a question word, in English or Russian.
_QUESTION_WORDS = re.compile(rf"\b({_EN_WORDS}|{_RU_WORDS})\b", re.IGNORECASE | re.UNICODE)
# "Why" asks for the explanation of what the question describes, which is that thing's own note.
_WHY = frozenset({"why", "почему", "зачем"})
# A question begins with its question word, or with a preposition before it ("in which note…",
# "о чём…", "с кем…", "через кого…"), or (English) with an auxiliary verb.
_EN_PREPOSITION = r"(?:(?:in|on|at|for|with|by|from|to|of|about|into|through|under|after|before|since|during)\s+)?"
_RU_PREPOSITION = r"(?:(?:в|во|о|об|обо|с|со|у|к|ко|от|до|для|из|за|на|по|при|про|через|без|над|под|перед|между)\s+)?"
_QUESTION = re.compile(
    rf"^\s*(?:{_EN_PREPOSITION}(?:{_EN_WORDS}|what's)|is|are|was|were|does|do|did|can|could|should|would|will"
    rf"|{_RU_PREPOSITION}(?:{_RU_WORDS}))\b",
    re.IGNORECASE | re.UNICODE,
)

# A yes-no question after a clause or a sentence that sets the scene ("sleeping creature, can I
# finish it off", "attacking someone you cant see, is there a coin flip", "sleeping creature. can
# I…"), with no question mark or word; Russian asks yes or no with ли ("можно ли добить спящего"),
# a particle written in lower case: "Ли" is a name ("фильмы с Брюсом Ли").
_CLAUSE_QUESTION = re.compile(
    r"(?:^|[,;:]\s*|\s[-–—]\s*|[.!…]\s+)(?:can|could|should|would|will|do|does|did|is|are|was|were|may|must|shall)\s+"
    r"(?:i|you|we|it|he|she|they|one|this|that|there)\b|(?-i:\bли\b)",
    re.IGNORECASE | re.UNICODE,
)


# What a user calls the thing they want when they want a note as a whole ("the note on…", "my
# notes from…", "page where I…", "заметка про…"): words about the vault, not its content.
_NOTE_WORDS = re.compile(r"\b(?:notes?|pages?|заметк\w*|страниц\w*)\b", re.IGNORECASE | re.UNICODE)
# ... and a question word that opens a clause or a sentence asks ("in the note where I compared
# X, what command…", "my raft notes. what did I decide"), where one after "on" or "where"
# describes ("the note on what hardware I need").
_CLAUSE_ASKS = re.compile(rf"(?:[,;:]|\s[-–—]|[.!…](?=\s))\s*(?:{_EN_WORDS}|{_RU_WORDS})\b", re.IGNORECASE | re.UNICODE)
# Russian writes a comma before every clause a question word opens, and after "то", "том", "тем"…
# ("заметка о том, как настроить vim": about how to), or after a word for a note ("заметка, где я
# писал про нерпу": the note where), that clause describes, as "on how" and "the note where" do.
_RU_CORRELATIVE = re.compile(
    r"(?<!\w)(?:то|того|тому|тем|том|те|тех|теми|та|той|ту|заметк\w*|страниц\w*)\s*$", re.IGNORECASE | re.UNICODE
)


def _read(query: str) -> str:
    """The query as the word lists read it: ё as е, Latin look-alikes in a Cyrillic word as Cyrillic."""
    return yo_as_ye(lookalikes_as_cyrillic(query))


def is_question(query: str) -> bool:
    """A question asks about something; the names it holds are its topic, not the note wanted
    ("what is the current decision on the vector store?" wants the decision, not *Vector store*)."""
    return query.rstrip().endswith("?") or bool(_QUESTION.match(_read(query)))


def compares(query: str) -> bool:
    """The query sets two things side by side ("X vs Y", "how does X compare with Y")."""
    text = _read(query)
    return bool(_COMPARES.search(text)) or any(
        _names_a_thing(match.group(1)) and _names_a_thing(match.group(2)) for match in _AGAINST.finditer(text)
    )


def _names_a_thing(word: str) -> bool:
    """Whether a word beside «против» is a name: a capital first, a Latin letter or a digit in it."""
    word = word.strip(".,:;!?()«»\"'")
    return bool(word) and (word[0].isupper() or any(c.isdigit() or ("a" <= c.lower() <= "z") for c in word))


def asks(query: str) -> bool:
    """The query asks something ("who…", "what is that home?", "как…") rather than only describing."""
    return "?" in query or bool(_QUESTION_WORDS.search(_read(query)))


def asks_in_any_form(query: str) -> bool:
    """A question mark, a question word, a question's opening, or a yes-no question after a
    clause: whatever a user types as a question, not only what the names lane skips."""
    return asks(query) or is_question(query) or bool(_CLAUSE_QUESTION.search(_read(query)))


def seeks_note(query: str) -> bool:
    """It asks for a note by what the note is ("the note on what hardware I need to run LLMs
    locally", "page where I benchmarked local LLMs…"), not a question about what one says: a
    word for a note or page, no question mark, no question's opening ("what kinds of lens
    filters do I have notes on" asks), no question word opening a clause and no yes-no question
    after one. A question word inside ("the note on what…", "the page where…", "заметка о том,
    как…") begins the description, not a question."""
    text = _read(query)
    return (
        bool(_NOTE_WORDS.search(text))
        and "?" not in text
        and not is_question(text)
        and not _CLAUSE_QUESTION.search(text)
        and not any(not _describes(text, clause.start()) for clause in _CLAUSE_ASKS.finditer(text))
    )


def _describes(text: str, at: int) -> bool:
    """The clause at ``at`` follows a Russian "то", "том", "тем"… or a word for a note (its last 64
    characters read)."""
    return _RU_CORRELATIVE.search(text, max(0, at - 64), at) is not None


def asks_only_why(query: str) -> bool:
    """Its only question word is why (почему, зачем): "why do two clean pieces of metal fuse in
    a vacuum?" asks about the thing it describes, not about a note that thing links to."""
    words = {match.group(1).casefold() for match in _QUESTION_WORDS.finditer(_read(query))}
    return bool(words) and words <= _WHY
