"""The Claude Code UserPromptSubmit hook: notes from the vault that bear on the prompt, added to it.

Claude Code runs ``brain hook prompt`` on every prompt, with a JSON object on stdin
(``session_id``, ``transcript_path``, ``cwd``, ``hook_event_name`` = ``UserPromptSubmit``,
``prompt``; newer versions also ``permission_mode`` and ``prompt_id``). When notes pass, the hook
prints one JSON object, ``{"hookSpecificOutput": {"hookEventName": "UserPromptSubmit",
"additionalContext": "..."}}``, and Claude Code adds the context to the prompt; otherwise it
prints nothing.

It asks the vault's running ``brain serve`` (``BRAIN_VAULT``, which ``brain hook install --prompt``
writes into the command) and never loads a model or indexes: no server, or no answer within
``BRAIN_PROMPT_BUDGET`` seconds, and the prompt goes on without notes. Like the Stop hook it can
never block or break a prompt: standard library only, exit code 0 whatever happens, a watchdog
that ends the process at the budget, errors and the reason for every empty answer in
``<brain home>/logs/hook.log``. Every prompt that reaches it leaves a row in ``recalls``.
"""

from __future__ import annotations

import json
import os
import stat
import sys
import threading
import time
from pathlib import Path
from typing import Any

from .. import config
from ..errors import ConfigError, quoted
from ..ledger.hook import MAX_STDIN, hook_json, load_settings_under_watchdog, log, oversized_field, read_input
from ..ledger.redact import redact
from ..ledger.store import utc_now
from ..ledger.transcript import clip
from . import select

RESERVE = 0.15  # seconds of the budget kept for the database and the output after asking
MIN_ASK = 0.05  # less time than this left: not worth asking
ASK_K = 20  # results asked for: the threshold and the session's dedupe thin them to BRAIN_PROMPT_K
# Asks at most, within the budget, while the server takes no question (``busy``, or its place
# closed for another client's before it was read: ``client.Refused``): the first refusal cost the
# prompt its notes with most of the budget left.
ASK_TRIES = 4

# Reasons for showing nothing, besides select's (recalls.reason).
NO_VAULT = "no-vault"
NO_SERVER = "no-server"
SERVER_UNAVAILABLE = "server-unavailable"
TIMEOUT = "timeout"
SERVER_ERROR = "server-error"
ERROR = "error"


def run_prompt_hook() -> int:
    """The whole ``brain hook prompt`` process: stdin JSON in, at most one JSON object out, exit 0."""
    started = time.monotonic()
    printing = threading.Lock()
    budget, watchdog = load_settings_under_watchdog(
        lambda: _setting(config.prompt_budget, config.DEFAULT_PROMPT_BUDGET),
        "BRAIN_PROMPT_BUDGET",
        started=started,
        label="prompt: ",
        hold=printing,
    )
    try:
        if sys.stdin is None or sys.stdin.isatty():
            return 0  # run by hand in a terminal: there is no hook input to wait for
        raw = read_input(sys.stdin.buffer)
        payload = parse_payload(raw)
        if payload is None:
            log(f"prompt: ignored stdin that is not a UserPromptSubmit payload ({len(raw)} bytes)")
            return 0
        refusal = oversized_field(payload)
        if refusal:
            log(f"prompt: ignored a UserPromptSubmit payload whose {refusal}")
            return 0
        recall = recall_for_prompt(payload, started=started, deadline=started + budget)
        if recall.context:
            with printing:  # the watchdog waits for a started answer to end whole
                emit(recall.context)
        recall.row["latency_ms"] = round((time.monotonic() - started) * 1000, 1)
        record(recall.row, migrate_until=started + budget - RESERVE / 2)
    except BaseException as exc:  # noqa: BLE001 - nothing may reach the prompt
        _log_exception(exc)
    finally:
        watchdog.cancel()
    return 0


def parse_payload(raw: bytes) -> dict[str, Any] | None:
    """The hook input, or None when it is not a UserPromptSubmit payload with a prompt."""
    if len(raw) > MAX_STDIN or not raw.strip():
        return None
    try:
        payload = hook_json(raw)
    except (ValueError, RecursionError):  # nested too deeply is not a payload either
        return None
    if not isinstance(payload, dict) or not isinstance(payload.get("prompt"), str):
        return None
    if payload.get("hook_event_name") not in (None, "UserPromptSubmit"):
        return None
    return payload


class Recall:
    """What to print for a prompt (``context``; "" for nothing) and the recalls ``row`` recording it."""

    __slots__ = ("context", "row")

    def __init__(self, row: dict[str, Any], context: str = ""):
        self.row = row  # latency_ms is set again once the answer is out
        self.context = context


def recall_for_prompt(
    payload: dict[str, Any], *, started: float, deadline: float, db_path: Path | None = None
) -> Recall:
    """Decide what to add to the prompt in ``payload``: the context and the row that records it."""
    prompt: str = payload["prompt"]
    row: dict[str, Any] = {
        "created_at": utc_now(),
        "session_id": _text(payload.get("session_id")),
        "prompt_id": _text(payload.get("prompt_id")),
        "cwd": _text(payload.get("cwd")),
        "prompt": clip(prompt, select.QUERY_CHARS),  # masked, then clipped: also the query
        "prompt_chars": len(prompt),
        "latency_ms": 0.0,
    }
    try:
        context = _recall(prompt, row, deadline, db_path)
    except Exception as exc:  # noqa: BLE001 - a bug must cost this prompt its notes, nothing more
        _log_exception(exc)
        row.update(reason=ERROR, detail=f"{type(exc).__name__}: {exc}")
        context = ""
    if row.get("reason"):
        log(f"prompt: nothing added ({row['reason']}" + (f": {row['detail']}" if row.get("detail") else "") + ")")
        context = ""
    row["latency_ms"] = round((time.monotonic() - started) * 1000, 1)
    return Recall(row, context)


def _recall(prompt: str, row: dict[str, Any], deadline: float, db_path: Path | None) -> str:
    """Fill ``row``; the context to print, or "" with ``row["reason"]`` set."""
    reason = select.skip_reason(prompt)
    if reason:
        row["reason"] = reason
        return ""
    root = _vault()
    if isinstance(root, str):
        row.update(reason=NO_VAULT, detail=root)
        return ""
    row["vault"] = str(root)
    from ..server import runtime

    record = runtime.read_record(root)
    if record is None:
        # a server whose start waits (for another process upgrading the index) has no record yet
        holder = runtime.lock_holder(root) if runtime.server_starting(root) else None
        why = f"brain serve for {root} is starting (pid {holder})" if holder else f"no brain serve for {root}"
        row.update(reason=NO_SERVER, detail=why)
        return ""
    model = record.get("model")
    if not isinstance(model, str):
        model = _setting(config.embed_model_name, config.DEFAULT_EMBED_MODEL)
    min_cosine = _setting(config.prompt_min_cosine, None)
    row.update(
        mode=select.MODE, model=model, min_cosine=select.default_min_cosine(model) if min_cosine is None else min_cosine
    )
    k = _setting(config.prompt_k, config.DEFAULT_PROMPT_K)
    budget_chars = _setting(config.prompt_chars, config.DEFAULT_PROMPT_CHARS)

    asked = _ask(root, row, deadline)
    if asked is None:
        return ""
    candidates, warnings = asked
    for warning in warnings:  # said as `brain ask` and `brain mcp` say it: in the log, and to the agent below
        log(f"prompt: the server's answer: {warning}")
    # The index lags the vault (seconds before the watcher runs, or a server not watching): a
    # note deleted since would send the agent to a file that is not there.
    candidates = [c for c in candidates if (root / c.path).exists()]
    shown = _shown_before(row.get("session_id"), [redact(c.path) for c in candidates], db_path, deadline)
    hashes: dict[str, str | None] = {}

    def current_hash(path: str) -> str | None:
        if path not in hashes:
            hashes[path] = file_hash(root / path)
        return hashes[path]

    def shown_before(c: Any) -> bool:
        # Shown in this session, and the file is what it was then (or cannot be read now), or the
        # index has not taken its change in yet: the same chunk is the passage shown then (a
        # changed note's chunks are stored anew, with new ids). Shown again, it would be
        # recorded under the new hash, and the new text never shown. Paths are stored masked
        # (write_recall): a path holding a secret is looked up as it was stored.
        stored = redact(c.path)
        if stored not in shown:
            return False
        digest, chunk = shown[stored]
        if c.chunk_id == chunk:
            return True
        now = current_hash(c.path)
        return now is None or now == digest

    choice = select.choose(candidates, min_cosine=row["min_cosine"], k=k, shown_before=shown_before)
    row["above"] = choice.above
    if choice.reason:
        row["reason"] = choice.reason
        return ""
    context, shares = select.render(choice.notes, budget_chars, str(root), warnings)
    if not context:
        row.update(reason=select.NO_ROOM, detail=f"BRAIN_PROMPT_CHARS={budget_chars} leaves no room for a note")
        return ""
    row["notes"] = [
        {
            "path": c.path,
            "title": c.title,
            "heading": c.heading,
            "chunk_id": c.chunk_id,
            "score": round(c.score, 5),
            "dense_score": round(c.dense_score, 4),
            "via": c.via.from_title if c.via else None,
            "chars": share,
            "hash": current_hash(c.path),
        }
        for c, share in zip(choice.notes, shares)
        if share
    ]
    row["shown"] = len(row["notes"])
    row["chars"] = len(context)
    return context


def _ask(root: Path, row: dict[str, Any], deadline: float) -> tuple[list[Any], list[str]] | None:
    """The server's results for the (masked) prompt in ``row`` and its warnings (a stale index, a
    stage that fell back), or None with the reason set."""
    from ..recall.types import RecallSettings
    from ..server import client

    timeout = deadline - time.monotonic() - RESERVE
    if timeout < MIN_ASK:
        row.update(reason=TIMEOUT, detail="no time left in the budget to ask the server")
        return None
    asked = time.monotonic()
    try:
        # a server of another brain too (one started before an upgrade): the hook reads only
        # what every brain's results hold (a chunk, its text and scores), and never answers
        # in-process, so passing it over would recall nothing until it is restarted; said to be
        # the prompt hook's, it has a place kept and goes first while other clients keep the
        # server busy (a server from before that ignores it); refused, it is asked again
        results = client.ask(
            root,
            row["prompt"],
            [select.MODE],
            RecallSettings(k=ASK_K),
            update=False,
            timeout=timeout,
            any_shape=True,
            prompt_hook=True,
            tries=ASK_TRIES,
        )
    except client.NoServer as exc:
        # refused to the last try: not a timeout, however little time its tries left
        late = not isinstance(exc, client.Refused) and time.monotonic() - asked >= timeout * 0.9
        row.update(reason=TIMEOUT if late else SERVER_UNAVAILABLE, detail=str(exc))
        return None
    except client.ServerError as exc:
        row.update(reason=SERVER_ERROR, detail=f"{exc.code}: {exc}")
        return None
    finally:
        row["server_ms"] = round((time.monotonic() - asked) * 1000, 1)
    candidates = results[0].results if results else []
    if results:  # the mode that ran: hybrid where the server's graph stages fell back
        row["mode"] = results[0].mode
    row["results"] = len(candidates)
    warnings = [w for w in (results[0].warnings if results else []) if isinstance(w, str) and w]
    return candidates, list(dict.fromkeys(warnings))


def emit(context: str) -> None:
    """Print the one JSON object Claude Code reads as the prompt's additional context."""
    answer = {"hookSpecificOutput": {"hookEventName": "UserPromptSubmit", "additionalContext": context}}
    out = sys.stdout
    if out is None:
        return
    out.buffer.write(json.dumps(answer, ensure_ascii=False).encode("utf-8", "replace") + b"\n")
    out.buffer.flush()


def record(row: dict[str, Any], db_path: Path | None = None, *, migrate_until: float | None = None) -> None:
    """Write the recall row; a database that cannot be written costs the row, logged. An upgrade
    of the database that does not fit before ``migrate_until`` is rolled back and the row kept
    aside (``ledger.deferred``)."""
    from ..db import UpgradeDeferred, connection
    from .store import write_recall

    try:
        try:
            with connection(db_path, migrate_until=migrate_until) as conn:
                write_recall(conn, row)
        except UpgradeDeferred as exc:
            from ..ledger.deferred import RECALL, keep_aside, who_records

            path = db_path or config.db_path()
            kept = keep_aside(path, RECALL, row)
            log(f"prompt: {exc}: the recall row kept aside in {kept.parent}; {who_records(path, exc)}")
    except Exception as exc:  # noqa: BLE001 - BrainDatabaseError, or worse: the prompt goes on
        log(f"prompt: the recall row was not written ({exc})")


def _shown_before(
    session_id: str | None, paths: list[str], db_path: Path | None, deadline: float
) -> dict[str, tuple[str | None, int | None]]:
    if not session_id:
        return {}
    from ..db import NewerLedger, connection
    from .store import shown_in_session

    try:
        try:
            # An upgrade that does not fit leaves time to render the notes and keep the row aside.
            with connection(db_path, migrate_until=deadline - RESERVE) as conn:
                return shown_in_session(conn, session_id, paths)
        except NewerLedger:  # a newer brain's: read as it is (only writing it is refused)
            with connection(db_path, read_only=True, warn_newer=False) as conn:
                return shown_in_session(conn, session_id, paths)
    except Exception as exc:  # noqa: BLE001 - no dedupe this time, said in the log
        log(f"prompt: cannot read the notes shown earlier in this session ({exc})")
        return {}


def file_hash(path: Path) -> str | None:
    """SHA-256 of a regular file's bytes (as the index hashes notes), or None when unreadable or
    over ``BRAIN_MAX_NOTE_MB`` (no note the index holds: it skips those)."""
    import hashlib  # here: loading OpenSSL is a cost worth paying only when notes are shown

    limit = _setting(config.max_note_bytes, int(config.DEFAULT_MAX_NOTE_MB * 1024 * 1024))
    try:
        fd = os.open(path, os.O_RDONLY | os.O_NONBLOCK)  # a FIFO put there since is not waited on
        with os.fdopen(fd, "rb") as f:
            st = os.fstat(fd)
            # Read whole, a note grown to GBs since it was indexed took as much memory (2 GB
            # read in 11 s, past any budget): never over the limit, and a block at a time.
            if not stat.S_ISREG(st.st_mode) or st.st_size > limit:
                return None
            digest, read = hashlib.sha256(), 0
            while block := f.read(1 << 20):
                read += len(block)
                if read > limit:  # still growing as it is read
                    return None
                digest.update(block)
            return digest.hexdigest()
    except OSError:
        return None


def _vault() -> Path | str:
    """The vault (``BRAIN_VAULT``), resolved; or why there is none.

    ``vault.resolve_vault``'s checks, without importing ``brain.vault`` (its dataclasses cost
    milliseconds at start-up, on every prompt).
    """
    try:
        value = config.vault()
    except ConfigError as exc:  # ~nouser/x, or relative: why there is none, as for any other vault not found
        return str(exc)
    if not value:
        return "no vault: set BRAIN_VAULT, or run `brain hook install --prompt --vault PATH`"
    path = Path(value)
    try:
        if not path.is_dir():  # on every prompt: a second look only where the vault is not one
            return f"vault not found: {path}" if not path.exists() else f"vault is not a folder: {path}"
    except OSError as exc:  # a name longer than the system takes was a traceback in hook.log
        return f"vault cannot be reached: {quoted(value)} ({exc.strerror})"
    return path.resolve()


def _setting(getter: Any, default: Any) -> Any:
    try:
        return getter()
    except ConfigError as exc:  # the hook never fails on a setting: say so in its log, use the default
        log(f"prompt: {exc}; using the default")
        return default


def _text(value: Any) -> str | None:
    return value if isinstance(value, str) and value else None


def _log_exception(exc: BaseException) -> None:
    import traceback  # only on the error path

    log(f"prompt: error: {exc!r}", "".join(traceback.format_exception(type(exc), exc, exc.__traceback__)))
