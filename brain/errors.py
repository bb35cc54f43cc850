"""Library exceptions. The CLI turns every BrainError into a clean click error."""


class BrainError(Exception):
    """Base class for errors a user can act on; the message says how."""


class ConfigError(BrainError):
    """Bad configuration: a missing vault, an unreadable path, a bad variable."""


class EmptyNoteName(ConfigError):
    """A note named by an empty or blank name: the same line from `brain note`, `brain
    neighbours`, `brain history` and the MCP tools that take a note."""

    def __init__(self) -> None:
        super().__init__("an empty name names no note: give a note's path, title or alias, e.g. 'Rollout plan'")


class EmptyQuery(ConfigError):
    """A search for an empty or blank query: the same line from `brain ask`, `brain serve`
    and the MCP tool `search`."""

    def __init__(self) -> None:
        super().__init__("an empty query asks nothing: give words or a question, e.g. 'how should agent memory work'")


class ModelLoadError(BrainError):
    """An embedding or reranking model could not be loaded."""


class IndexMismatchError(BrainError):
    """The on-disk index was built with another model or dimension."""


class NoIndexError(BrainError):
    """The vault has not been indexed yet."""


class EmptyIndexError(NoIndexError):
    """The vault's index holds no notes: the vault has none (yet), or they are still waiting."""


class IndexDamagedError(BrainError):
    """The index database is not a readable SQLite database; ``--rebuild`` starts over."""


class NotWritableError(BrainError):
    """A folder brain must write to (the brain home, an index folder) is not writable."""


class NoSpaceError(NotWritableError):
    """The disk (or quota) holding the index is full: nothing more can be written there now."""
