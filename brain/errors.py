"""Library exceptions. The CLI turns every BrainError into a clean click error."""

import errno


class BrainError(Exception):
    """Base class for errors a user can act on; the message says how. The CLI prints it as one
    line, a line break in it (a path's, a library's message) written as ``\\n``."""

    # An error whose message is a list, one item a line, each item made one line where it is
    # raised (a query file's problems): the CLI keeps the breaks between them.
    listing = False


class ConfigError(BrainError):
    """Bad configuration: a missing vault, an unreadable path, a bad variable."""


class EmptyNoteName(ConfigError):
    """A note named by an empty or blank name: the same line from `brain note`, `brain
    neighbours`, `brain history` and the MCP tools that take a note."""

    def __init__(self) -> None:
        super().__init__("an empty name names no note: give a note's path, title or alias, e.g. 'Rollout plan'")


class EmptyQuery(ConfigError):
    """A search for an empty or blank query, or one of punctuation alone (``asks_nothing``): the
    same line from `brain ask`, `brain serve` and the MCP tool `search`."""

    def __init__(self, query: str = "") -> None:
        import unicodedata  # here: only a refused query needs it (the hooks import this module)

        # blank, or invisible alone (a zero-width space) is empty; "?!" is punctuation
        punctuation = any(unicodedata.category(ch).startswith("P") for ch in query)
        what = "a query of punctuation alone" if punctuation else "an empty query"
        super().__init__(f"{what} asks nothing: give words or a question, e.g. 'how should agent memory work'")


def asks_nothing(query: str) -> bool:
    """Whether ``query`` holds no letter, digit or symbol (an emoji, ``+``, ``$``): blank, or
    punctuation alone (``?``, ``"``, ``*``, ``-``). Such a query was embedded all the same, and
    its vector, near no note, ranked a dozen notes by chance as if they answered it."""
    if any(ch.isalnum() for ch in query):  # letters and digits (L, N) without unicodedata's import
        return False
    import unicodedata  # the prompt hook asks this of every prompt: only such a rare one pays it

    return not any(unicodedata.category(ch)[0] == "S" for ch in query)


class ModelLoadError(BrainError):
    """An embedding or reranking model could not be loaded."""


class IndexMismatchError(BrainError):
    """The on-disk index was built with another model or dimension."""


class NewerDatabaseError(BrainError):
    """A database a newer brain upgraded (migrations this code does not know): this code does
    not write it, since it would write rows by its older rules among the newer ones."""


def newer_than_this(database: object, unknown: list[str]) -> str:
    """The start of what is said of ``database``, whose migrations ``unknown`` this code lacks."""
    from importlib.metadata import PackageNotFoundError, version

    try:
        mine = f"brain {version('brain')}"
    except PackageNotFoundError:
        mine = "this brain"
    names = ", ".join(unknown[:3]) + (f" and {len(unknown) - 3} more" if len(unknown) > 3 else "")
    return f"{database} was upgraded by a newer brain ({names}), which {mine} does not know"


# said on each answer of this brain from an index a newer brain upgraded: `brain mcp`'s tools (and
# a service that outlived an upgrade), whoever of them read it
SUPERSEDED_ANSWER = (
    "this brain is older than the index (a newer brain upgraded it): it no longer updates it and "
    "answers from the index as it held it; restart the session with the newer brain, or run `brain index --rebuild`"
)


class NoIndexError(BrainError):
    """The vault has not been indexed yet."""


class EmptyIndexError(NoIndexError):
    """The vault's index holds no notes: the vault has none (yet), or they are still waiting."""


class IndexDamagedError(BrainError):
    """The index database is not a readable SQLite database; ``--rebuild`` starts over."""


class IndexBusyError(BrainError):
    """Another process held the index database's write lock past the busy timeout."""


class NotWritableError(BrainError):
    """A folder brain must write to (the brain home, an index folder) is not writable."""


class UnusableFileError(BrainError):
    """A file brain keeps cannot be opened for what the file itself is: this user may not read
    it, or it is a folder, a FIFO, a symbolic link to nowhere (``file_state.unusable``)."""


class NoSpaceError(NotWritableError):
    """The disk (or quota) holding the index is full: nothing more can be written there now."""


QUOTED_CHARS = 80  # of what a user gave (a note's name, a moment, an id), as an error quotes it
QUOTED_END = 24  # of those, from its end: a long path's file name ("…/Inbox/note.md")


def quoted(value: object) -> str:
    """What a user gave, as a message quotes it: its repr, so a line break, a control or an
    invisible character is written as its escape and the message stays one line; past
    ``QUOTED_CHARS`` characters only their start and end, and how long it was. `brain history`
    given a 5,000-character name printed it whole in its one-line error; a vault's path cut at
    its start alone lost the file it named."""
    text = value if isinstance(value, str) else str(value)
    if len(text) <= QUOTED_CHARS:
        return repr(text)
    return f"{text[: QUOTED_CHARS - QUOTED_END]!r}…{text[-QUOTED_END:]!r} ({len(text):,} characters)"


def blank_said(value: str, what: str, give: str, name: str, otherwise: str) -> str:
    """What is said of an empty or blank text given for ``name`` (a script's ``--x "$X"`` with X
    unset, an agent's ``""``), which names nothing rather than meaning "left out": ``'' names no
    project: give its folder's name, or leave --project out for every project``. The CLI's
    options (``cli_options.not_blank``) and `brain mcp`'s tools say it alike."""
    return f"{quoted(value)} {what}: {give}, or leave {name} out {otherwise}"


def read_only_failure(exc: BaseException) -> bool:
    """Whether opening or reading a database failed because it may not be written here (a
    read-only file or folder, a -shm file that cannot be made): then it is read again as it is
    (SQLite's ``immutable=1``), or said to be read-only, not damaged."""
    if isinstance(exc, PermissionError):
        return True
    name = getattr(exc, "sqlite_errorname", "")  # Python 3.11+; the message before that
    text = str(exc).lower()
    return name.startswith(("SQLITE_READONLY", "SQLITE_CANTOPEN")) or "readonly" in text or "unable to open" in text


BUG_CHARS = 300  # of an exception's message in a line: it may quote a whole note


def bug_summary(exc: BaseException) -> str:
    """One line for an exception no input should raise (a bug of brain's), to report: its type,
    its message (cut short) and the place it was raised ("ValueError: … (notes.py:123)")."""
    message = str(exc)
    if len(message) > BUG_CHARS:
        message = message[:BUG_CHARS] + "…"
    import traceback  # here: both hooks import this module, and it (with textwrap) costs them ~2 ms

    frames = traceback.extract_tb(exc.__traceback__)
    where = f" ({frames[-1].filename.replace(chr(92), '/').rpartition('/')[2]}:{frames[-1].lineno})" if frames else ""
    return f"{type(exc).__name__}: {message}{where}"


def out_of_memory(exc: BaseException) -> str | None:
    """What memory ran short, when ``exc`` is this process out of memory (a MemoryError, ENOMEM,
    the loader's or a library's "Cannot allocate memory", as safetensors' mmap says it); else None."""
    text = str(exc)
    if not (
        isinstance(exc, MemoryError)
        or (isinstance(exc, OSError) and exc.errno == errno.ENOMEM)
        or "failed to map segment" in text
        or "Cannot allocate memory" in text
    ):
        return None
    try:
        import resource
    except ImportError:  # Windows
        return "the machine has no more to give"
    soft = resource.getrlimit(resource.RLIMIT_AS)[0]
    if soft == resource.RLIM_INFINITY:
        return "the machine has no more to give"
    return f"this process may use {soft // 2**20} MB, `ulimit -v`"
