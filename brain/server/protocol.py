"""The wire format between ``brain serve`` and its clients. Standard library only.

One request per connection: the client sends one JSON object on one line (UTF-8, ``\\n``
ended, at most ``MAX_REQUEST_BYTES``), the server answers with one JSON object on one line
and closes. Over HTTP (``--http``) the same objects are the body of ``POST /v1`` and its reply,
an error's HTTP status its code's (``daemon.HTTP_STATUS``: ``bad_request`` a 400).

Request: ``{"v": 1, "op": OP, "vault": "/absolute/vault/path", ...}``; every request names
the vault, and a server answers only for its own. ``wait`` is how many seconds the server may
wait for its index to load or catch up before answering. Operations:

    ping                                          → {"pid", "vault"}
    ask        query, modes [1 or 2], settings,   → {"results": [RecallResult, ...]} (every field,
               update (bool), wait (seconds),        chunk text included; ``decode_result`` rebuilds it;
               output ("full" or "json"),            with "json", what ``brain ask --json`` prints)
               index?, as_of?, valid_at?,
               prompt_hook?
    note       note, heading?, max_chars?, wait?, → what ``brain note --json`` prints; with as_of,
               as_of?                                the note as it was then (``reading.read_note_at``)
    neighbours note, wait?                        → what ``brain neighbours --json`` prints
    history    note, last?, wait?                 → what ``brain history --json`` prints
    status                                        → the server's state (pid, uptime, queries, updates)
    stop                                          → {"stopping": true}

``index`` (optional) is what the client would check the index against in-process: ``{"model",
"fts_tokenizer", "chunking", "query_prefix", "passage_prefix"}`` (``INDEX_SETTINGS``, each
optional), its ``BRAIN_EMBED_MODEL``, ``BRAIN_FTS_TOKENIZER``, ``BRAIN_CHUNKING``,
``BRAIN_QUERY_PREFIX`` and ``BRAIN_PASSAGE_PREFIX`` (a prefix: null when unset, "" when set
empty; without the two, the server's own are taken). A server whose index was built otherwise
answers ``index_mismatch`` with the message ``brain ask`` would print in-process; without
``index`` the server's index is taken as it is (the prompt hook, ``brain mcp``). Added within
version 1: a server from before it ignores the field, as servers ignore every field they do not
know (and one from before the prefixes refuses them as unknown settings: the client then
answers in-process).

``as_of`` and ``valid_at`` (optional strings) are ``brain ask``'s ``--as-of`` and ``--valid-at``,
read by the same rules (``brain/moments.py``: a date, a date and time, a span back like ``7d``;
not still to come): the answer is over the vault as brain knew it then, or over the notes that
held on that day. One that cannot be read is ``bad_request`` with the line ``brain ask`` prints;
one before the index's history began is ``brain_error``. Added within version 1 too, but not
ignorable: a server from before them would answer about the present. So a server lists what it
answers beyond the first version's requests in its record (``serve.json``: ``features``), and a
client asks about the past (``as_of``, ``valid_at``, ``history``) only a server listing ``past``.
The record names the server's brain and its results' shape too (``brain``, ``shape``): a client
of another shape (a server started before an upgrade keeps its code) asks it no ``RESULT_OPS``
and answers in-process, saying so (``client.OtherBuild``); the prompt hook reads what it can.

``prompt_hook`` (optional, true or false) says the ask is the prompt hook's, which has a hard
deadline (``BRAIN_PROMPT_BUDGET``, 0.8 s) and one question a process: on the socket it may take
one of the places kept for it when every other is being answered, and goes before other
clients' questions (``daemon._Connections``, ``service.Service.run``). Added within version 1:
a server from before it ignores it, and a request without it is any other client's.

On the socket, a server takes a request it will answer (read whole, a place and a turn for it)
by writing one space (``TAKEN``) before the reply's line, which JSON reads as whitespace: a
connection closed before it was not taken (closed for another client's, or the server stopped
before reading it) and may be sent again; one closed after it without a reply was taken and
lost (the server crashed or stopped mid-question), and is not: sent again, it could crash a
restarted server again (``client.Dropped``). Added within version 1: a client from before it
reads the space as the reply's whitespace, and a server from before it sends none.

Reply: ``{"v": 1, "ok": true, "result": ...}`` or ``{"v": 1, "ok": false, "error": {"code",
"message"}}``. Codes: ``bad_request`` (not JSON, too large, a missing or bad field: the
caller's mistake, said to the user, never answered elsewhere instead; ``check_request`` lets a
client see it coming),
``wrong_vault``, ``not_found``, ``refused`` (a path outside the vault; a socket client of another
user), ``index_mismatch`` (the request's ``index`` is not what the index was built with),
``brain_error`` (what the CLI would print as an error), ``starting`` (no index loaded yet), ``busy``, ``internal``.
"""

from __future__ import annotations

import json
import os
import types
import typing
from dataclasses import asdict, is_dataclass, replace
from dataclasses import fields as dataclass_fields
from functools import cache
from typing import Any

from ..errors import quoted
from ..recall.types import Candidate, Gate, RecallResult, RecallSettings, Via

VERSION = 1
MAX_REQUEST_BYTES = 1 << 20
MAX_QUERY_CHARS = 10_000
MAX_NOTE_CHARS = 4096  # a note's name or a heading
MAX_WAIT = 600  # seconds a request may ask the server to wait
TAKEN = b" "  # written on the socket before a reply when the request is taken (JSON's whitespace)
OPS = ("ping", "ask", "note", "neighbours", "history", "status", "stop")
# What this server answers beyond the first version's requests (its record lists them): a client
# asks about the past only of a server that knows it is being asked (one from before would
# ignore ``as_of`` and answer about the present).
FEATURES = ("past", "prefixes", "history_as_of")
# The operations whose result is what a command prints (a recall's results, a note, its history):
# a client reads them only from a server whose results have this brain's shape (``shape``).
RESULT_OPS = ("ask", "note", "neighbours", "history")
# Raise it when a key of those results changes outside the dataclasses ``shape`` reads (a history
# row's ``note_id``, ``now``, ``ended``; a note's ``path_reused``): a server started before an
# upgrade keeps running the old code, and its answers lacked what the new client shows.
RESULTS_REVISION = 2
MAX_MOMENT_CHARS = 100  # an --as-of or --valid-at as typed
INDEX_SETTINGS = ("model", "fts_tokenizer", "chunking", "query_prefix", "passage_prefix")
PREFIX_SETTINGS = ("query_prefix", "passage_prefix")  # a string, empty too, or null: unset
# The ranges `brain ask` accepts (cli.py / cli_options.py), checked again here: the socket
# is a second front door.
SETTING_RANGES = {"k": (1, 200), "depth": (1, 1000), "seeds": (0, 1000), "max_new": (0, 1000), "pool": (1, 1000)}


class ProtocolError(Exception):
    """A request the server cannot take, or a reply the client cannot read."""

    def __init__(self, code: str, message: str):
        super().__init__(message)
        self.code = code
        self.message = message


@cache
def shape() -> str:
    """The shape of this brain's results, which its server's record names (``serve.json``:
    ``shape``): ``RESULTS_REVISION`` and the fields of every dataclass a result carries, as a
    short digest. Two brains that give it alike read each other's results whole; a client given
    another (an older server has none) answers in-process, saying so (``client.OtherBuild``)."""
    import hashlib

    fields = [
        f"{cls.__name__}:{','.join(f.name for f in dataclass_fields(cls))}"
        for cls in (RecallResult, Candidate, Gate, Via)
    ]
    digest = hashlib.blake2b(";".join([str(RESULTS_REVISION), *fields]).encode(), digest_size=4).hexdigest()
    return f"{RESULTS_REVISION}-{digest}"


def names_vault(given: str, root: str) -> bool:
    """Whether a request's ``vault`` names the server's vault ``root``, compared as a request
    carries a path: one that is not UTF-8 ("caf\\udce9") goes as "caf?" (``encode``), and such
    a vault's server answered its every client wrong_vault."""

    def sent(path: str) -> str:
        return path.encode("utf-8", "replace").decode("utf-8")

    return sent(os.path.realpath(given)) == sent(root)


def encode(message: dict[str, Any]) -> bytes:
    # A lone surrogate (a prompt's JSON may hold "\ud800" alone) has no UTF-8: it goes as "?",
    # a character of no meaning either way, rather than failing the request as unanswered.
    return json.dumps(message, ensure_ascii=False, separators=(",", ":")).encode("utf-8", "replace") + b"\n"


def ok(result: Any) -> dict[str, Any]:
    return {"v": VERSION, "ok": True, "result": result}


def error(code: str, message: str, **more: Any) -> dict[str, Any]:
    """An error reply; ``more``: fields of the error beside its code and message (``taken``)."""
    return {"v": VERSION, "ok": False, "error": {"code": code, "message": message, **more}}


def request(op: str, vault: str, **fields: Any) -> dict[str, Any]:
    return {"v": VERSION, "op": op, "vault": vault, **fields}


def parse_request(data: bytes) -> dict[str, Any]:
    """One request line → a checked dict; ``ProtocolError("bad_request")`` otherwise."""
    if len(data) > MAX_REQUEST_BYTES:
        raise ProtocolError("bad_request", f"request over {MAX_REQUEST_BYTES} bytes")
    try:
        message = json.loads(data.decode("utf-8"))
    except (UnicodeDecodeError, ValueError):
        raise ProtocolError("bad_request", "a request is one JSON object on one line") from None
    except RecursionError:  # brackets nested deeper than the parser goes
        raise ProtocolError("bad_request", "a request is one JSON object on one line, not nested this deep") from None
    if not isinstance(message, dict):
        raise ProtocolError("bad_request", "a request is one JSON object on one line")
    check_request(message)
    return message


def says_prompt_hook(data: bytes) -> bool:
    """Whether the request line ``data`` is an ask that says it is the prompt hook's
    (``"prompt_hook": true``). Another request pays a search for the word, no JSON read."""
    if b'"prompt_hook"' not in data:
        return False
    try:
        message = json.loads(data.decode("utf-8"))
    except (UnicodeDecodeError, ValueError, RecursionError):
        return False
    return isinstance(message, dict) and message.get("op") == "ask" and message.get("prompt_hook") is True


def cut_query(query: str) -> str:
    """``query`` as long as a server takes one (``MAX_QUERY_CHARS``): as it is, or its first
    characters up to the last space among them (all of them when there is none). `brain ask`
    asks this, with a server or in-process: a longer query was sent to none, and in-process 2 MB
    took 14 s on the 13th Age SRD (``bench/long_query.py``), where a model reads its first few
    hundred words."""
    if len(query) <= MAX_QUERY_CHARS:
        return query
    import re

    words = re.match(r"(.*\S)\s", query[: MAX_QUERY_CHARS + 1], re.DOTALL)
    return words.group(1) if words else query[:MAX_QUERY_CHARS]


def cut_query_said(query: str) -> tuple[str, str | None]:
    """``query`` as ``cut_query`` cuts it, and the warning that says so (None when it is whole):
    what `brain ask` prints and puts first in ``warnings``, and what `brain mcp`'s ``search``
    puts there (it refused such a query: an agent pasting a long error log got no answer)."""
    cut = cut_query(query)
    if cut == query:
        return query, None
    return cut, (
        f"the query is {len(query):,} characters, over the {MAX_QUERY_CHARS:,} a query takes: "
        f"asked with its first {len(cut):,}"
    )


def check_request(message: dict[str, Any]) -> None:
    """``ProtocolError("bad_request")`` when the server would refuse ``message`` (a request
    as ``request`` builds it); what ``parse_request`` checks once the JSON is read."""
    if message.get("v") != VERSION:
        raise ProtocolError("bad_request", f"protocol version {quoted(message.get('v'))} is not {VERSION}")
    op = message.get("op")
    if op not in OPS:
        raise ProtocolError("bad_request", f"unknown op {quoted(op)}: one of {', '.join(OPS)}")
    if not isinstance(message.get("vault"), str) or not message["vault"]:
        raise ProtocolError("bad_request", "every request names its vault (an absolute path)")
    if "\0" in message["vault"]:  # no path holds one: realpath raised, and it was an internal error
        raise ProtocolError("bad_request", "vault: a path cannot hold a NUL byte")
    if not message["vault"].startswith("/"):  # resolved against the server's working directory, it named
        # the vault of a server started in it ("."), and another vault elsewhere
        raise ProtocolError("bad_request", f"vault: {quoted(message['vault'])} is not an absolute path")
    wait = message.get("wait", 0)
    if isinstance(wait, bool) or not isinstance(wait, (int, float)) or not 0 <= wait <= MAX_WAIT:
        raise ProtocolError("bad_request", f"wait: seconds between 0 and {MAX_WAIT}")
    if op == "ask":
        _check_ask(message)
    elif op in ("note", "neighbours", "history"):
        if isinstance(message.get("note"), str) and not message["note"].strip():
            from ..errors import EmptyNoteName

            raise ProtocolError("bad_request", str(EmptyNoteName()))  # the line `brain note ""` prints
        _text_field(message, "note", MAX_NOTE_CHARS)
        if message.get("heading") is not None:
            _text_field(message, "heading", MAX_NOTE_CHARS)
        if message.get("max_chars") is not None:
            _int_field(message, "max_chars", 1, 10_000_000)
        if op in ("note", "history"):
            past_fields(message, world=False)
        if op == "history" and message.get("last") is not None:
            _int_field(message, "last", 0, 1_000_000)


def past_fields(message: dict[str, Any], *, world: bool = True) -> tuple[float | None, str | None]:
    """The request's ``as_of`` (Unix time) and ``valid_at`` (an ISO date), read as ``brain ask``
    reads ``--as-of`` and ``--valid-at``; ``bad_request`` with its line when one cannot be (naming
    ``as_of``, as the request does: ``brain ask`` reads its options itself, in their words)."""
    from ..errors import ConfigError

    moment = day = None
    for name in ("as_of", "valid_at") if world else ("as_of",):
        value = message.get(name)
        if value is None:
            continue
        _text_field(message, name, MAX_MOMENT_CHARS)
        # here: every request is checked (by the client too, in the prompt hook), few ask the past
        from ..moments import parse_world_date, past_moment

        try:  # its error names the field as the request does: an MCP tool's caller has no --as-of
            if name == "as_of":
                moment = past_moment(value, name)
            else:
                day = parse_world_date(value, name)
        except ConfigError as exc:
            raise ProtocolError("bad_request", str(exc)) from None
    if not world and message.get("valid_at") is not None:
        raise ProtocolError("bad_request", "valid_at goes with ask (a note is read as it was with as_of)")
    return moment, day


def _check_ask(message: dict[str, Any]) -> None:
    if isinstance(message.get("query"), str):
        from ..errors import EmptyQuery, asks_nothing

        if asks_nothing(message["query"]):  # the line `brain ask ""` prints
            raise ProtocolError("bad_request", str(EmptyQuery(message["query"])))
    # Refused, not cut: brain's clients (`brain ask`, `brain mcp`'s search) cut a longer query
    # before they send it and say so where their user reads it (``cut_query_said``); one reaching
    # the wire uncut is from a client that does not know the rule, and cut here it would be
    # answered a question it did not ask, with no word it is sure to show.
    _text_field(message, "query", MAX_QUERY_CHARS)
    modes = message.get("modes")
    if not isinstance(modes, list) or not 1 <= len(modes) <= 2 or not all(isinstance(m, str) for m in modes):
        raise ProtocolError("bad_request", "modes: a list of one or two mode names")
    settings = message.get("settings", {})
    if not isinstance(settings, dict):
        raise ProtocolError("bad_request", "settings: an object")
    for name in settings:
        if name not in SETTING_RANGES:
            raise ProtocolError("bad_request", f"unknown setting {quoted(name)}")
        _int_field(settings, name, *SETTING_RANGES[name])
    if not isinstance(message.get("update", True), bool):
        raise ProtocolError("bad_request", "update: true or false")
    if not isinstance(message.get("prompt_hook", False), bool):
        raise ProtocolError("bad_request", "prompt_hook: true or false")
    if message.get("output", "full") not in ("full", "json"):
        raise ProtocolError("bad_request", 'output: "full" or "json"')
    past_fields(message)
    index = message.get("index")
    if index is not None:
        if not isinstance(index, dict):
            raise ProtocolError("bad_request", f"index: an object of {', '.join(INDEX_SETTINGS)}")
        for name in index:
            if name not in INDEX_SETTINGS:
                raise ProtocolError(
                    "bad_request", f"unknown index setting {quoted(name)}: one of {', '.join(INDEX_SETTINGS)}"
                )
            if name in PREFIX_SETTINGS:
                value = index[name]
                if value is not None and (not isinstance(value, str) or len(value) > MAX_NOTE_CHARS):
                    raise ProtocolError(
                        "bad_request", f"{name}: null or a string of at most {MAX_NOTE_CHARS:,} characters"
                    )
                continue
            _text_field(index, name, MAX_NOTE_CHARS)


def _text_field(message: dict[str, Any], name: str, limit: int) -> None:
    value = message.get(name)
    if not isinstance(value, str) or not value.strip() or len(value) > limit:
        raise ProtocolError("bad_request", f"{name}: a non-empty string of at most {limit:,} characters")


def _int_field(message: dict[str, Any], name: str, low: int, high: int) -> None:
    value = message.get(name)
    if isinstance(value, bool) or not isinstance(value, int) or not low <= value <= high:
        raise ProtocolError("bad_request", f"{name}: a whole number from {low} to {high}")


def rebuild_far(embedded: int, of_about: int) -> str:
    """How far the server's rebuild of a lost index is (status's ``rebuilding``), as every
    question and `brain status` say it."""
    return f"{embedded:,} of about {of_about:,} chunks embedded" if of_about else f"{embedded:,} chunks embedded"


def rebuild_said(progress: dict[str, Any], failed_why: str | None) -> str:
    """What every read is told while the server rebuilds a lost index (status's ``rebuilding``,
    ``progress``), in one line: `brain ask`, `brain note`, `brain history`, `brain neighbours`,
    through the server or in-process, say the same. ``failed_why``: why its pass failed."""
    why = progress.get("why")
    if progress.get("failed"):
        # the pass failed (a full disk): not "once it is done", which would be never
        return f"{why}, but its pass failed ({failed_why}); the next change or rescan tries again"
    embedded, of_about = progress.get("embedded"), progress.get("of_about")
    far = rebuild_far(embedded, of_about) if isinstance(embedded, int) and isinstance(of_about, int) else "under way"
    return f"{why} ({far}); ask again once it is done"


# ----- recall results on the wire -------------------------------------------------------------


def settings_to_dict(settings: RecallSettings) -> dict[str, int]:
    return {name: getattr(settings, name) for name in SETTING_RANGES}


def settings_from_dict(data: dict[str, int]) -> RecallSettings:
    # A pool the client sent: the server's own BRAIN_RERANK_POOL is not read (a bad one failed every question)
    settings = RecallSettings(pool=data["pool"]) if "pool" in data else RecallSettings()
    for name, value in data.items():
        setattr(settings, name, value)
    return settings


def encode_result(result: RecallResult) -> dict[str, Any]:
    """Every field of a result, so a client renders exactly what an in-process run would; not
    each lane's own ranking (``lanes``, up to six lists of candidates), which only
    `brain eval --explain` reads, in-process."""
    data = asdict(replace(result, lanes={}))
    del data["lanes"]
    return data


def decode_result(data: dict[str, Any]) -> RecallResult:
    """The ``RecallResult`` that ``encode_result`` wrote; ``ProtocolError`` when it is not one."""
    try:
        given = _known(RecallResult, data)
        given["gate"] = Gate(**_known(Gate, given["gate"]))
        given["results"] = [_candidate(c) for c in given["results"]]
        result = RecallResult(**given)
    except (KeyError, TypeError, AttributeError, ValueError) as exc:
        raise ProtocolError("internal", f"the server sent a result this client cannot read ({exc})") from None
    # Each field of the type it is declared: a list of warnings that is a number would be a
    # traceback where it is printed, not a result to fall back from.
    wrong = _wrong_field(result)
    if wrong:
        raise ProtocolError("internal", f"the server sent a result this client cannot read ({wrong} of another type)")
    return result


def _candidate(data: dict[str, Any]) -> Candidate:
    given = _known(Candidate, data)
    if given.get("via") is not None:
        given["via"] = Via(**_known(Via, given["via"]))
    return Candidate(**given)


def _known(cls: Any, data: dict[str, Any]) -> dict[str, Any]:
    """``data``'s keys that are fields of ``cls``: a newer server's others are left out (a client
    reads another brain's results only when it asks to, ``client.ask(any_shape=True)``)."""
    names = {f.name for f in dataclass_fields(cls)}
    return {key: value for key, value in dict(data).items() if key in names}


@cache
def _hints(cls: Any) -> dict[str, Any]:
    return typing.get_type_hints(cls)


def _wrong_field(value: Any) -> str | None:
    """The name of the first field of dataclass ``value`` not of its declared type, or None."""
    hints = _hints(value.__class__)
    for f in dataclass_fields(value):
        if not _fits(getattr(value, f.name), hints[f.name]):
            return f.name
    return None


def _fits(value: Any, hint: Any) -> bool:
    origin, args = typing.get_origin(hint), typing.get_args(hint)
    if origin in (typing.Union, types.UnionType):
        return any(_fits(value, a) for a in args)
    if origin is list:
        return isinstance(value, list) and all(_fits(v, args[0]) for v in value)
    if origin is dict:
        return isinstance(value, dict) and all(_fits(k, args[0]) and _fits(v, args[1]) for k, v in value.items())
    if hint is float:  # JSON writes a whole float as an int
        return isinstance(value, (int, float)) and not isinstance(value, bool)
    if hint is int:
        return isinstance(value, int) and not isinstance(value, bool)
    if isinstance(hint, type) and is_dataclass(hint):
        return isinstance(value, hint) and _wrong_field(value) is None
    return isinstance(value, hint) if isinstance(hint, type) else True
