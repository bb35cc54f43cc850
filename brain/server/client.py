"""Asking a running ``brain serve``, with a hard deadline. Standard library only.

Every call either returns the server's answer or raises ``NoServer`` within its ``timeout``,
whatever the server does (absent, stale socket, hung, garbage, wrong vault): callers fall back
to doing the work themselves. ``ServerError`` is the one exception that is not a reason to
fall back: the server refused the request (an unknown mode, a note outside the vault, a
``bad_request`` such as an empty query), and doing the work elsewhere would refuse it the same
way or, worse, answer what the server would not. ``ask`` checks its request first: one the
server would refuse by the protocol's limits (a query over ``MAX_QUERY_CHARS``, which ``brain
ask`` cuts to it first, ``protocol.cut_query``) is ``NoServer`` at once, without a round trip.

Used by ``brain ask``, ``brain status``, ``brain serve --stop``, ``brain mcp`` and the prompt
hook; nothing here imports torch, numpy, faiss or mcp (tests/test_serve_process.py checks).
"""

from __future__ import annotations

import json
import socket
import time
from pathlib import Path
from typing import Any

from ..errors import BrainError
from ..recall.types import RecallResult, RecallSettings
from . import protocol, runtime

# Reasons a server's reply means "do it yourself" rather than "this is the answer". Not
# ``bad_request``: the request is wrong, wherever it is answered.
FALL_BACK = ("starting", "busy", "internal", "wrong_vault")
CONNECT_PAUSE = 0.02  # at most this long between tries to connect while the server's backlog is full
# Between two tries of a request the server took no question from (``Refused``): the first pause
# at most, doubled each time up to the last, each drawn from its second half (clients refused
# together do not come back together); and the time that must be left after a pause for another try.
RETRY_PAUSES = (0.025, 0.1)
RETRY_LEFT = 0.05
# A reply is read into memory whole: one that runs on (a server's bug, a process answering on its
# socket) filled it at the socket's pace until the deadline, GBs within `brain ask`'s. Past this
# it is dropped: over any real answer (the largest, a note read with max_chars at the protocol's
# 10,000,000 characters, each escaped in 6 bytes, is 60 MB; `ask` at k 200 in two modes, 3 MB).
MAX_REPLY_BYTES = 128 << 20
# A server that took a question and let it time out (hung, or paused with Ctrl-Z: the kernel
# takes its connections, nothing answers) cost every client the whole timeout again, each `brain
# ask` 15 s, and `brain mcp` a call's 15 s once a minute. Such a timeout (of at least
# ``SILENT_MARK_AFTER`` s: the prompt hook's 0.8 s is no sign) is written beside the record
# (``SILENT_FILE``), and for ``SILENT_FOR`` s every client asks that server only once it
# answers a ping within ``SILENT_PING`` s (a quarter of its time at most; a ping unanswered
# writes it again): a slow server, whose connections are still answered, is asked as before;
# a hung one costs a client 1 s, not 15, for as long as it is hung.
SILENT_FILE = "silent.json"
SILENT_MARK_AFTER = 5.0
SILENT_FOR = 60.0
SILENT_PING = 1.0


class NoServer(Exception):
    """No server answered for this vault in time; the message says why (for logs)."""


class Unresponsive(NoServer):
    """A server took the connection but gave no answer in time: hung, paused (Ctrl-Z, SIGSTOP) or
    swamped. Unlike a missing server, asking it again soon costs the whole timeout again."""


class Refused(NoServer):
    """The server took no question: it answered ``busy`` (every place being answered), or closed
    the connection before a byte of answer (a place closed for another client's; a server of
    this brain says one it took, ``protocol.TAKEN``, and one closed after that is ``Dropped``). Nothing was
    answered, so asking again a moment later asks nothing twice (``call``'s ``tries``). Not a
    ``busy`` with ``taken``: a question queued and not answered within the server's grace
    (``Service.run``), which may run on; asked again, it ran again behind itself."""


class Dropped(NoServer):
    """The server took the question (``protocol.TAKEN``) and closed the connection without an
    answer: it crashed or was stopped mid-question. Not asked again: under a supervisor that
    restarts the server, a question that crashes it crashed it once a try (8 for `brain ask`)."""


class OtherBuild(NoServer):
    """The server runs another brain than this client (started before an upgrade, or by another
    install), whose results have another shape (``protocol.shape``): its answers could lack what
    this brain shows (an older server's) or hold what it cannot read (a newer one's). The message
    names both and the way to serve this brain; callers answer in-process and say so once."""

    def __init__(self, root: Path, record: dict[str, Any]):
        import shlex  # here: the prompt hook imports this module, and only this message quotes a path

        from .. import __version__

        theirs = f"brain {record.get('brain') or '(unnamed)'}, results {record.get('shape') or 'of an older shape'}"
        pid = f"pid {record['pid']}, " if isinstance(record.get("pid"), int) else ""
        super().__init__(
            f"brain serve for {root} ({pid}{theirs}) is another brain than this one (brain {__version__}, results "
            f"{protocol.shape()}): `brain serve --vault {shlex.quote(str(root))} --stop`, then start it again, serves "
            "this one"
        )


def other_build(root: Path) -> OtherBuild | None:
    """``OtherBuild`` for the vault's server when its record names another shape than this brain's
    (``brain status`` says so), else None: no server, or one of this brain's shape."""
    record = runtime.read_record(root)
    if record is None or record.get("shape") == protocol.shape():
        return None
    return OtherBuild(root, record)


class ServerError(BrainError):
    """The server refused the request for a reason the user must see (``code`` says which)."""

    def __init__(self, code: str, message: str):
        super().__init__(message)
        self.code = code


def call(root: Path, op: str, *, timeout: float, any_shape: bool = False, tries: int = 1, **fields: Any) -> Any:
    """Send one request to the server of vault ``root``; its ``result``, or an exception.

    ``NoServer`` when none answers in ``timeout`` seconds or it answers with a reason to fall
    back (``FALL_BACK``); ``ServerError`` for a refusal, and for a request over
    ``protocol.MAX_REQUEST_BYTES``, not sent (every server refuses it). ``OtherBuild`` (a
    ``NoServer``) for a result (``protocol.RESULT_OPS``) from a server of another brain, unless
    ``any_shape``: the caller reads what it can of one.

    With ``tries`` over 1, a request the server took no question from (``Refused``: ``busy``, or
    closed unanswered) is sent again after a short pause (``RETRY_PAUSES``, jittered), up to
    ``tries`` times in all and never past ``timeout``: a reply of any other kind, an answer or an
    error, is never asked again, nor is a server that did not answer in time.
    """
    deadline = time.monotonic() + timeout
    record = runtime.read_record(root)
    if record is None or not isinstance(record.get("socket"), str):
        raise NoServer(f"no brain serve for {root}")
    if op in protocol.RESULT_OPS and not any_shape and record.get("shape") != protocol.shape():
        # status, ping and stop are read whatever the shape: `brain status` and --stop manage it
        raise OtherBuild(root, record)
    features = set(record.get("features") or ())
    needs = _features_needed(op, fields)
    if needs and not set(needs) <= features:
        # A server from before these requests would ignore what it does not know (``as_of``)
        # and answer about the present, or check the index with its own prefixes.
        raise NoServer(f"brain serve for {root} is older than this brain: it does not answer {', '.join(needs)}")
    index = fields.get("index")
    if "prefixes" not in features and isinstance(index, dict):  # unset: an older server refuses the keys
        fields = {**fields, "index": {k: v for k, v in index.items() if k not in protocol.PREFIX_SETTINGS}}
    payload = protocol.encode(protocol.request(op, str(root), **fields))
    if len(payload) > protocol.MAX_REQUEST_BYTES:  # what every server answers it: not sent
        raise ServerError("bad_request", f"request over {protocol.MAX_REQUEST_BYTES} bytes")
    if op != "stop":  # --stop reaches it (and sends SIGTERM when it does not answer)
        _ping_if_silent(root, record, deadline)
    pause = RETRY_PAUSES[0]
    for attempt in range(1, max(1, tries) + 1):
        try:
            return _call_once(root, record, payload, deadline, timeout)
        except Refused as exc:
            if attempt >= tries:
                raise Refused(f"{exc} ({attempt} tries)" if attempt > 1 else str(exc)) from None
            import random  # here: only a refused request pays for it (the prompt hook counts its imports)

            wait = pause * random.uniform(0.5, 1.0)
            if deadline - time.monotonic() - wait < RETRY_LEFT:  # no time for another try
                raise Refused(
                    f"{exc} ({attempt} {'tries' if attempt > 1 else 'try'}, no time left for another)"
                ) from None
            time.sleep(wait)
            pause = min(pause * 2, RETRY_PAUSES[1])
    raise AssertionError("unreachable")  # the loop returns or raises


def _silent_path(root: Path) -> Path:
    return runtime.runtime_dir(root) / SILENT_FILE


def _same_server(mark: object, record: dict[str, Any]) -> bool:
    return isinstance(mark, dict) and [mark.get("pid"), mark.get("started_at")] == [
        record.get("pid"),
        record.get("started_at"),
    ]


def _mark_silent(root: Path, record: dict[str, Any]) -> None:
    """Say beside the record that this server let a question time out now (``SILENT_FILE``)."""
    mark = {"pid": record.get("pid"), "started_at": record.get("started_at"), "at": time.time()}
    try:
        runtime.write_private(_silent_path(root), json.dumps(mark).encode("utf-8"))
    except OSError:  # a full disk, the folder gone: the next client waits the timeout, as before
        pass


def _ping_if_silent(root: Path, record: dict[str, Any], deadline: float) -> None:
    """``Unresponsive`` at once when the server let a question time out less than ``SILENT_FOR``
    s ago (``SILENT_FILE``) and does not answer a ping now within ``SILENT_PING`` s."""
    path = _silent_path(root)
    try:
        mark = json.loads(path.read_text(encoding="utf-8"))
    except (OSError, ValueError):  # none: the common case, one failed open
        return
    ago = time.time() - float(mark.get("at") or 0) if isinstance(mark, dict) else SILENT_FOR
    if not _same_server(mark, record) or not 0 <= ago < SILENT_FOR:
        return
    wait = min(SILENT_PING, max(0.05, (deadline - time.monotonic()) / 4))
    try:
        _exchange(record["socket"], protocol.encode(protocol.request("ping", str(root))), time.monotonic() + wait)
    except TimeoutError:
        _mark_silent(root, record)  # silent still: the next ask pings it too, not waiting the timeout
        pid = record.get("pid")
        resume = f": `kill -CONT {pid}` resumes one paused" if isinstance(pid, int) else ""
        raise Unresponsive(
            f"brain serve for {root} let a question time out {ago:.0f} s ago and does not answer a ping in "
            f"{wait:g} s now (hung, or paused with Ctrl-Z{resume})"
        ) from None
    except (OSError, ValueError, RecursionError, _TooLarge):  # another failure: the request says it
        return
    try:
        path.unlink()  # it answers again
    except OSError:
        pass


def _call_once(root: Path, record: dict[str, Any], payload: bytes, deadline: float, timeout: float) -> Any:
    """One exchange of ``call``: the ``result``, or its exceptions."""
    try:
        reply = _exchange(record["socket"], payload, deadline)
    except _Dropped as exc:
        raise Dropped(
            f"brain serve for {root} took the question and closed the connection without an answer "
            f"(stopped or crashed mid-question? its log says; {exc})"
        ) from None
    except _Unanswered as exc:
        raise Refused(f"brain serve for {root} closed the connection unanswered ({exc})") from None
    except _TooLarge:
        raise NoServer(f"brain serve for {root} sent a reply over {MAX_REPLY_BYTES >> 20} MiB: not read") from None
    except TimeoutError as exc:
        if timeout >= SILENT_MARK_AFTER:
            _mark_silent(root, record)
        raise Unresponsive(f"brain serve for {root} did not answer in {timeout:g} s ({exc})") from None
    except (OSError, ValueError, RecursionError) as exc:  # refused, missing socket, reset, bad or too deep JSON
        raise NoServer(f"brain serve for {root} did not answer ({type(exc).__name__}: {exc})") from None
    if not isinstance(reply, dict) or reply.get("v") != protocol.VERSION:
        raise NoServer(f"brain serve for {root} sent a reply this client cannot read")
    if reply.get("ok") is True:
        return reply.get("result")
    raw_error = reply.get("error")
    err: dict[str, Any] = raw_error if isinstance(raw_error, dict) else {}
    code, text = str(err.get("code", "internal")), str(err.get("message", "no message"))
    if code == "busy" and not err.get("taken"):  # taken: queued, and run on maybe; asked again, run twice
        raise Refused(f"brain serve for {root}: {code}: {text}")
    if code in FALL_BACK:
        raise NoServer(f"brain serve for {root}: {code}: {text}")
    raise ServerError(code, text)


def _features_needed(op: str, fields: dict[str, Any]) -> list[str]:
    """The server features (``protocol.FEATURES``) a request needs."""
    past = op == "history" or any(fields.get(name) is not None for name in ("as_of", "valid_at"))
    index = fields.get("index")
    prefixes = isinstance(index, dict) and any(index.get(name) is not None for name in protocol.PREFIX_SETTINGS)
    # a server from before history's as_of would ignore it and answer about the note there now
    then = op == "history" and fields.get("as_of") is not None
    return (["past"] if past else []) + (["history_as_of"] if then else []) + (["prefixes"] if prefixes else [])


class _Unanswered(OSError):
    """The server closed the connection (or reset it) before sending a byte of answer: before
    it took the request (``protocol.TAKEN``), or a server from before that said so."""


class _Dropped(OSError):
    """The server took the request (``protocol.TAKEN``), then closed without a byte of answer."""


class _TooLarge(Exception):
    """The reply ran past ``MAX_REPLY_BYTES``: the rest is not read."""


def _exchange(path: str, payload: bytes, deadline: float) -> Any:
    """Send ``payload``, return the reply read. A server that answered before reading the whole
    request (``busy``, from a server before it read such requests through) and closed has the
    write fail (a broken pipe), or the read after the answer (a reset), with its answer already
    here: it is read all the same, and the error raised only when no whole answer came:
    ``_Unanswered`` when not a byte came, ``_Dropped`` when only ``protocol.TAKEN`` did;
    ``_TooLarge`` past ``MAX_REPLY_BYTES``."""
    sock = socket.socket(socket.AF_UNIX, socket.SOCK_STREAM)
    broken: OSError | None = None
    chunks: list[bytes] = []
    size = 0
    try:
        _connect(sock, path, deadline)
        sock.settimeout(_left(deadline))
        try:
            sock.sendall(payload)
            sock.shutdown(socket.SHUT_WR)
        except (BrokenPipeError, ConnectionResetError) as exc:
            broken = exc
        try:
            while True:
                sock.settimeout(_left(deadline))
                chunk = sock.recv(1 << 16)
                if not chunk:
                    break
                size += len(chunk)
                if size > MAX_REPLY_BYTES:
                    raise _TooLarge
                chunks.append(chunk)
        except ConnectionResetError as exc:
            broken = broken or exc
    finally:
        sock.close()
    data = b"".join(chunks)
    if not data.strip():
        why = f"{type(broken).__name__}: {broken}" if broken is not None else "no reply"
        raise _Dropped(why) if data else _Unanswered(why)
    try:
        return json.loads(data.decode("utf-8"))
    except ValueError:
        if broken is not None:  # no whole answer: the broken connection says what went wrong
            raise broken from None
        raise


def _connect(sock: socket.socket, path: str, deadline: float) -> None:
    """Connect, trying again while the server's listen backlog is full. A socket with a timeout
    is non-blocking, and Linux refuses such a connect at once (``EAGAIN``) rather than wait for
    room: under a storm of connections the prompt hook recalled nothing from a server that would
    have taken it a few milliseconds later."""
    pause = 0.001
    while True:
        sock.settimeout(_left(deadline))
        try:
            sock.connect(path)
            return
        except BlockingIOError:
            time.sleep(min(pause, max(0.0, deadline - time.monotonic())))
            pause = min(pause * 2, CONNECT_PAUSE)


def _left(deadline: float) -> float:
    left = deadline - time.monotonic()
    if left <= 0:
        raise TimeoutError("deadline passed")
    return left


# ----- the operations, typed ------------------------------------------------------------------


def ask(
    root: Path,
    query: str,
    modes: list[str],
    settings: RecallSettings,
    *,
    update: bool = True,
    timeout: float,
    same_index: bool = False,
    as_of: str | None = None,
    valid_at: str | None = None,
    any_shape: bool = False,
    prompt_hook: bool = False,
    tries: int = 1,
) -> list[RecallResult]:
    """One result per mode, as ``Recaller.compare`` would return them in-process.

    With ``same_index`` (``brain ask``), the server checks its index against this process's
    ``BRAIN_EMBED_MODEL``, ``BRAIN_FTS_TOKENIZER``, ``BRAIN_CHUNKING``, ``BRAIN_QUERY_PREFIX``
    and ``BRAIN_PASSAGE_PREFIX``, as an in-process run would: an index built otherwise is
    ``ServerError`` (``index_mismatch``) with the message that run would give. Without it the
    server's index is taken as it is (the prompt hook).

    With ``update``, a server that is indexing notes that just changed waits for them (up to
    about ``timeout``, at most ``protocol.MAX_WAIT``) before answering, as ``brain ask`` indexes
    them first in-process. A request the server would refuse (a query over
    ``protocol.MAX_QUERY_CHARS``) is ``NoServer``, never sent: the caller answers it in-process.

    ``as_of`` and ``valid_at`` are ``brain ask``'s ``--as-of`` and ``--valid-at`` as typed: the
    server reads them by the same rules (a server from before them is ``NoServer``).

    A server of another brain is ``OtherBuild``; with ``any_shape`` its results are read as far
    as they go (``protocol.decode_result``: a field it lacks has its default, one this brain does
    not know is left out).

    ``prompt_hook`` says the ask is the prompt hook's (``protocol``: a place is kept for it, and
    it goes before other clients' questions); a server from before it ignores it.

    ``tries``: asks at most, within ``timeout``, while the server takes no question (``call``).
    """
    fields: dict[str, Any] = {
        "query": query,
        "modes": modes,
        "settings": protocol.settings_to_dict(settings),
        "update": update,
        "wait": wait_for(timeout) if update else 0.0,
    }
    if as_of is not None:
        fields["as_of"] = as_of
    if valid_at is not None:
        fields["valid_at"] = valid_at
    if prompt_hook:
        fields["prompt_hook"] = True
    if same_index:
        from .. import config

        _same_answer_settings(root, config.answer_settings())  # a bad value: its error, as in-process
        fields["index"] = {
            "model": config.embed_model_name(),
            "fts_tokenizer": config.fts_tokenizer(),
            "chunking": config.chunking(),
            # the server's own would stand in for them, and a query embedded with another
            # prefix than the notes' is refused in-process (``check_model``)
            "query_prefix": config.prefix_override("BRAIN_QUERY_PREFIX"),
            "passage_prefix": config.prefix_override("BRAIN_PASSAGE_PREFIX"),
        }
    try:
        protocol.check_request(protocol.request("ask", str(root), **fields))
    except protocol.ProtocolError as exc:
        raise NoServer(f"brain serve does not take this request ({exc.message})") from None
    result = call(root, "ask", timeout=timeout, any_shape=any_shape, tries=tries, **fields)
    try:
        results = [protocol.decode_result(r) for r in result["results"]]
    except (TypeError, KeyError, protocol.ProtocolError) as exc:
        raise NoServer(f"brain serve for {root} sent results this client cannot read ({exc})") from None
    if len(results) != len(modes):  # one a mode, as the caller reads them
        raise NoServer(f"brain serve for {root} sent {len(results)} results for {len(modes)} modes")
    return results


def _same_answer_settings(root: Path, mine: dict[str, str]) -> None:
    """``NoServer`` when the server answers with other settings than ``mine`` (its record's
    ``answer_settings``): its answer would be to a question this process did not ask, the
    PageRank weights or the reranker of another shell. A server from before the record said
    them is asked as before."""
    record = runtime.read_record(root) or {}
    theirs = record.get("answer_settings")
    if not isinstance(theirs, dict) or theirs == mine:
        return
    differ = [
        f"{name} {theirs.get(name)} there, {value} here" for name, value in mine.items() if theirs.get(name) != value
    ]
    raise NoServer(f"brain serve for {root} answers with other settings ({'; '.join(differ) or 'others'})")


def wait_for(timeout: float) -> float:
    """How long a request with a ``timeout`` deadline may ask the server to wait: a second less
    (for the answer to travel), within what the protocol allows."""
    return min(float(protocol.MAX_WAIT), max(0.0, timeout - 1.0))


# Asks of `status` at most, within its timeout, while the server takes no question (``busy``,
# or its connection closed for another's before a byte of answer): asked once, `brain status`
# and brain mcp's `status` tool said "not answering" of a server that was up and full a moment.
STATUS_TRIES = 4


def rebuilding(root: Path, *, timeout: float = 1.0) -> str | None:
    """The line the vault's server says of every read while it rebuilds a lost index (deleted
    under it), for the commands that read the index in-process (`brain note`, `history`,
    `neighbours`): they said "no index yet: run `brain index`", or read the half-built one.
    None when no server holds the vault's lock (no question asked) or none rebuilds."""
    if not runtime.lock_is_held(root):
        return None
    answer = status(root, timeout=timeout)
    progress = (answer or {}).get("rebuilding")
    if not isinstance(progress, dict):
        return None
    failing = (answer or {}).get("indexing_failing")
    return protocol.rebuild_said(progress, failing.get("why") if isinstance(failing, dict) else None)


def status(root: Path, *, timeout: float = 1.0) -> dict[str, Any] | None:
    """The server's state, or None when no server answers."""
    try:
        result = call(root, "status", timeout=timeout, tries=STATUS_TRIES)
    except (NoServer, ServerError):
        return None
    return result if isinstance(result, dict) else None
