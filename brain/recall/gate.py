"""The entity gate: name-shaped queries skip the graph stage.

A name's note tends to link to everything, so a hop from it pulls in noise (the seed pilot's
finding). The gate is conservative: it says "entity" only for a query that *is* a name, and it
always says why. Names come first from the vault itself (titles and aliases), then from shape.
"""

from __future__ import annotations

import re
from collections.abc import Iterable
from typing import TYPE_CHECKING

from ..text import for_search, word_chars, yo_as_ye
from .names import fold
from .types import Gate

if TYPE_CHECKING:
    from ..index.store import IndexStore

# Words that make a query a question or a request, not a name.
_QUESTION_WORDS = set(
    """
    how what why when where which who whom whose does do did
    is are was were can could should would will vs versus
    compare difference between explain find list show about latest
    current best my our the a an of for to in on with
    как что почему зачем когда где какой какая какие чем ли
    кто кого кому кем чей чья чье чьи сколько куда откуда
    сравни сравнить сравнение разница отличие отличия между объясни найди найти список покажи
    про о об последний последняя последнее последние текущий текущая текущее актуальный
    актуальная актуальное лучший лучшая лучшее лучше мой моя мое мои наш наша наше наши
    в во на для к по из от с со
    """.split()
)
# ё read as е: "моё", "всё" are typed either way.
# Common developer tools: a bare tool name is an entity even when the vault has no note on it.
_TOOLS = set(
    """
    git docker kubernetes k8s sqlite postgres postgresql redis faiss
    pytorch torch numpy pandas obsidian python rust go node npm
    pip uv poetry pytest click vim neovim emacs vscode tmux bash
    zsh curl jq ripgrep make cmake nginx kafka spark airflow
    terraform ansible claude chatgpt ollama llama huggingface langchain
    """.split()
)
_CAMEL = re.compile(r"^[A-Za-z]*[a-z][A-Z][A-Za-z0-9]*$|^[A-Z]{2,}[a-z]+[A-Za-z0-9]*$")
_SNAKE = re.compile(r"^[A-Za-z0-9]+(?:[_.][A-Za-z0-9]+)+$|^[a-z0-9]+(?:-[a-z0-9]+)+(?:\.[a-z]+)?$")
# A word with its combining marks: "मेरा घर" is two words, not the four pieces ``\w`` cuts.
_WORD = re.compile(f"[{word_chars()}'’.-]+")
MAX_NAME_WORDS = 4


def normalise_name(text: str) -> str:
    """A name as the gate's table keys it: quotes, brackets and end punctuation off, spaces one,
    and folded as the names lane folds it (``names.fold``: case and accents, ё as е, as the index
    searches it, so a title a Mac wrote decomposed is the name typed composed): "creme brulee"
    names *Crème brûlée* to the gate as it does to that lane."""
    text = for_search(text).strip().strip("\"'`“”«»[]").strip()
    text = text.rstrip("?!.")  # not a regex: "[?!.]+$" tried every dot of a long run again
    return fold(re.sub(r"\s+", " ", text))


# The notes that hold a name several notes hold, each once, in the order ``name_table`` reads
# them: (0 for a title or file name, 1 for an alias; the note's id).
Holders = dict[str, tuple[tuple[int, int], ...]]


def vault_names(store: IndexStore) -> dict[str, str]:
    """Casefolded title or alias → the note path it names."""
    return name_table(store.note_names(), store.alias_rows())[0]


def name_table(
    notes: Iterable[tuple[int, str, str]], aliases: Iterable[tuple[int, str]]
) -> tuple[dict[str, str], Holders]:
    """Casefolded title, file name or alias → the path of the note that has it, of these notes
    ((id, path, title), by id) and aliases ((note id, alias), by note id): titles and file names
    first, then aliases, the first note to have a name keeping it. And the names several notes
    have, with all of them (``Holders``): a view of the past takes the present's over, and
    what one of those names names once some notes changed is known without reading the
    others again (``recall/past_carry.py``)."""
    names: dict[str, str] = {}
    first: dict[str, int] = {}  # name → its first holder: note id × 2 + part
    shared: dict[str, list[tuple[int, int]]] = {}
    path_of: dict[int, str] = {}
    held = first.setdefault

    def share(key: str, holder: int, note_id: int, part: int) -> None:  # another note has it too (rare)
        holders = shared.setdefault(key, [(holder & 1, holder >> 1)])
        if all(other != note_id for _, other in holders):
            holders.append((part, note_id))

    for note_id, path, title in notes:
        path_of[note_id] = path
        mine = note_id * 2
        for key in title_keys(path, title):
            names.setdefault(key, path)
            holder = held(key, mine)
            if holder >> 1 != note_id:
                share(key, holder, note_id, 0)
    for note_id, alias in aliases:
        if note_id in path_of:
            key = normalise_name(alias)
            names.setdefault(key, path_of[note_id])
            holder = held(key, note_id * 2 + 1)
            if holder >> 1 != note_id:
                share(key, holder, note_id, 1)
    return names, {key: tuple(holders) for key, holders in shared.items()}


def title_keys(path: str, title: str) -> tuple[str, str]:
    """The names a note holds as its title and its file name (``name_table``'s first part)."""
    stem = path.rsplit("/", 1)[-1]
    return normalise_name(title), normalise_name(stem[:-3] if stem.lower().endswith(".md") else stem)


def entity_gate(query: str, names: dict[str, str] | None = None) -> Gate:
    """Is ``query`` a name (skip the graph) or a question/theme (use it)? With the reason."""
    normal = normalise_name(query)
    words = _WORD.findall(query.strip())
    if names and normal in names:
        return Gate(True, f"the query is the title or alias of [[{names[normal]}]]")
    if not words:
        return Gate(False, "no words")
    lowered = [yo_as_ye(w.casefold().strip(".'’")) for w in words]
    question = [w for w in lowered if w in _QUESTION_WORDS]
    if query.strip().endswith("?") or question:
        return Gate(False, f"a question or phrase ({'“' + question[0] + '”' if question else '?'}), not a name")
    if len(words) > MAX_NAME_WORDS:
        return Gate(False, f"{len(words)} words: longer than a name")
    if len(words) == 1:
        word = words[0]
        if _CAMEL.match(word):
            return Gate(True, f"CamelCase token {word!r}")
        if _SNAKE.match(word) and not word.replace(".", "").isdigit():
            return Gate(True, f"identifier-shaped token {word!r}")
        if lowered[0] in _TOOLS:
            return Gate(True, f"tool name {word!r}")
        if word[:1].isupper() and len(word) > 2:
            return Gate(True, f"a single capitalised word {word!r}")
        return Gate(False, f"a single common word {word!r}")
    capitalised = [w for w in words if w[:1].isupper() or w[:1].isdigit()]
    if len(capitalised) == len(words):
        return Gate(True, f"a short capitalised name ({len(words)} words)")
    return Gate(False, "a short phrase, not a name")
