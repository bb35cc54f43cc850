"""Who answers the MCP tools: the vault's ``brain serve`` when it runs, else this process.

Each call first asks the running server (a Unix socket round trip, under a millisecond when
there is none); when no server answers, the session's own ``Service`` (the warm index ``brain
serve`` uses, watching the vault the same way) is started once and answers. Both paths take
the same protocol requests and give the same replies, so the tools have one code path.
"""

from __future__ import annotations

import json
import logging
import threading
import time
from pathlib import Path
from typing import Any

from .. import config
from ..server import client, protocol

log = logging.getLogger("brain")

LOCAL_WAIT = 300.0  # seconds a call may wait for this process's own index to load (model, first scan)
# After a server let a call time out (paused with Ctrl-Z, hung), the session answers its calls
# itself this long before asking it again: otherwise every tool call costs the whole timeout.
SKIP_SILENT_SERVER = 60.0
# While the server takes no question (``busy``: the session's calls at once past the 16 places
# it gives a client process; or its place closed for another client's: ``client.Refused``), a
# call asks it again after a jittered pause of 12-25 ms doubling to 50-100 ms
# (``client.RETRY_PAUSES``), up to BRAIN_SERVE_TIMEOUT (never past it: this many tries do not
# run out first). The first refusal loaded the model and a second copy of the index in this
# process (60 searches at once: 572 MB resident, where 93 MB; bench/mcp_burst.py) when the
# server would have answered a moment later; 40 tries (3 s) left 113 of 200 at once refused.
# ``brain ask`` asks 8 times: it has one question; a session has its 40 worker threads' at once,
# each waiting its turn.
SERVER_TRIES = 1000
# The requests that take ``wait`` (protocol.py: seconds to wait for the index to load or catch
# up): the server's, within the call's timeout; this process's, LOCAL_WAIT.
WAITING_OPS = ("ask", "note", "neighbours", "history")
BUILDING = "building the index from the vault"  # what a server with no index to load does first (`loading`)


class Backend:
    def __init__(self, root: Path, *, embedder: Any = None, use_server: bool = True, watch: bool = True):
        self.root = root
        self.embedder = embedder
        self.use_server = use_server
        self.watch = watch
        self._service: Any = None
        self._lock = threading.Lock()
        self._ask_server_after = 0.0  # time.monotonic() before which the server is not asked
        self._told_other_build = False
        # The vault had no index when this process's service started: its first pass builds it
        # (minutes on a large vault), and the calls meanwhile are told so at once (``building``)
        self._builds_it = False
        # The vault's `brain serve` was building the index (there was none) when last asked: each
        # read asks its status first, and is told so at once while it still is
        self._server_builds = False
        self._checked = threading.Event()  # the warm-up has asked whether a server answers
        self._checked.set()  # (no warm-up: nothing to wait for)

    def call(self, op: str, **fields: Any) -> Any:
        """The result of one protocol request; ``client.ServerError`` when it is refused (a bad
        request too: said at once, neither sent to the server nor answered here)."""
        try:
            protocol.check_request(protocol.request(op, str(self.root), **fields))
        except protocol.ProtocolError as exc:
            raise client.ServerError(exc.code, exc.message) from None
        if self.use_server:
            # a call as the session starts waits for the warm-up's question, not a timeout of its own
            self._checked.wait(config.serve_timeout() + 1.0)  # its timeout, begun a moment before
        if self.use_server and time.monotonic() >= self._ask_server_after:
            if op in WAITING_OPS and self._server_builds:
                self._say_server_building()  # at once, where the call waited the timeout for nothing
            timeout = config.serve_timeout()
            remote = dict(fields)
            if op in WAITING_OPS:  # a server still loading may take a moment
                remote.setdefault("wait", client.wait_for(timeout))
            try:
                return client.call(self.root, op, timeout=timeout, tries=SERVER_TRIES, **remote)
            except client.OtherBuild as exc:  # every call until it is restarted: said once
                if not self._told_other_build:
                    self._told_other_build = True
                    log.warning("%s; answering in this process", exc)
            except (client.Unresponsive, client.Refused) as exc:
                self._pass_over_server(exc)  # hung, or refusing (busy) the whole timeout: every call would wait it out
            except client.NoServer as exc:
                if op in WAITING_OPS:  # "starting": one building the index (the first call) is said so
                    self._say_server_building()
                log.debug("%s; answering in this process", exc)
        service = self.local()
        building = self.building()
        if building is not None and op in WAITING_OPS:
            # said at once, as `brain serve` says its rebuild: the call waited for the whole build
            # in silence (LOCAL_WAIT, 300 s, then "brain serve is still starting"), an agent's
            # tool call timing out on a large vault with nobody told why
            raise client.ServerError("building", building)
        if op in WAITING_OPS:
            fields.setdefault("wait", LOCAL_WAIT)
        # The request in JSON's normal form, as the server would read it, but not as bytes: a
        # vault path that is not UTF-8 (a lone surrogate in Python) must reach the index as it
        # is, not as the '?' the socket carries, which named another vault.
        message = json.loads(json.dumps(protocol.request(op, str(self.root), **fields)))
        protocol.check_request(message)
        reply = service.handle(message)
        if reply["ok"]:
            return reply["result"]
        raise client.ServerError(reply["error"]["code"], reply["error"]["message"])

    def older_than_index(self) -> bool:
        """Whether a newer brain upgraded the vault's index (migrations this code lacks), read
        from the index now: this process's own service learns it only as its first pass is
        refused, and `status` reads the index here, not through the service."""
        from ..index.upgrades import newer_migrations

        return bool(newer_migrations(config.index_dir(self.root)))

    def local(self) -> Any:
        """This process's own warm index, started on first use."""
        with self._lock:
            if self._service is None:
                from ..index.files import INDEX_FILE
                from ..server.service import Service

                self._builds_it = _missing(config.index_dir(self.root) / INDEX_FILE)
                if self._builds_it:
                    log.warning(
                        "no brain serve for %s and no index yet: building it from the vault in this "
                        "process; the tools say so until it is done",
                        self.root,
                    )
                else:
                    log.info("no brain serve for %s: loading the index in this process", self.root)
                # an index a newer brain upgraded: answered from, never written (a session's tools
                # go on; `brain serve` refuses to start on it)
                service = Service(self.root, embedder=self.embedder, watch=self.watch, answer_when_newer=True)
                service.start()
                self._service = service
            return self._service

    def building(self) -> str | None:
        """While this process builds the vault's index (there was none), what every read is told,
        in `brain serve`'s words for its rebuild, with how far it is; None once it is built (or
        there was an index, or a server answers)."""
        service = self._service
        if not self._builds_it or service is None:
            return None
        if service.wait_ready(0):  # built, or its pass failed (``state`` failed: the call says why)
            self._builds_it = False
            return None
        why = f"{self.root} has no index yet; brain mcp is building it from the vault in the background"
        return protocol.rebuild_said({"why": why, "embedded": service.embedder.embedded, "of_about": 0}, None)

    def _say_server_building(self) -> None:
        """``ServerError`` while the vault's `brain serve` builds an index the vault had none of,
        in the words of this process's own build. A read waited the server's timeout (15 s) each
        time, then was answered here: this process loaded the model and waited for the server's
        build to let its own pass write."""
        state = client.status(self.root, timeout=config.serve_timeout())
        loading = state.get("loading") if state is not None and state.get("state") == "starting" else None
        self._server_builds = isinstance(loading, dict) and loading.get("doing") == BUILDING
        if self._server_builds and isinstance(loading, dict):
            raise client.ServerError(
                "building",
                f"{self.root} has no index yet; its brain serve is building it from the vault "
                f"({loading.get('for_s', 0):.0f} s so far); ask again once it is done",
            )

    def warm_up(self) -> None:
        """Start loading this process's index in the background when no server answers: asked
        there, so start-up waits for nothing (``_warm``); the calls that come meanwhile wait for
        that answer."""
        self._checked.clear()
        threading.Thread(target=self._warm, name="brain-mcp-warm", daemon=True).start()

    def _server_there(self) -> bool:
        """Whether a ``brain serve`` answers for the vault.

        Asked with BRAIN_SERVE_TIMEOUT, as a call is: asked with 0.5 s at start, a server that
        answered late on a loaded machine was taken for none, and this process loaded the model
        and a second copy of the index (~500 MB) beside it. One that refuses it (``busy``) is
        asked again, as a call asks, within the timeout: there once it answers. One that took
        the connection and did not answer in time is hung or paused (Ctrl-Z), and one that
        refused it all through the timeout takes no question: each was taken to be there
        (the busy one at its first refusal), nothing loaded, and the first call waited the
        timeout again before this process began to load the index; now each is passed over as a
        call that timed out, or was refused throughout, passes it (``SKIP_SILENT_SERVER``) and
        the index loads here at once. None (no record, a socket nobody listens on) is said at once."""
        try:
            state = client.call(self.root, "status", timeout=config.serve_timeout(), tries=SERVER_TRIES)
        except (client.Unresponsive, client.Refused) as exc:
            self._pass_over_server(exc)
            return False
        except client.NoServer:  # none, another brain (calls are answered here), or unreadable
            return False
        except client.ServerError:  # it answered
            return True
        loading = state.get("loading") if isinstance(state, dict) else None
        self._server_builds = isinstance(loading, dict) and loading.get("doing") == BUILDING
        return True

    def _pass_over_server(self, exc: Exception) -> None:
        """Answer in this process for ``SKIP_SILENT_SERVER`` s, saying why: the server let a
        question time out, or refused it all through the timeout."""
        self._ask_server_after = time.monotonic() + SKIP_SILENT_SERVER
        log.warning("%s; answering in this process, asking it again in %g s", exc, SKIP_SILENT_SERVER)

    def _warm(self) -> None:
        try:
            try:
                there = self.use_server and self._server_there()
            finally:
                self._checked.set()
            if not there:
                self.local()
        except Exception as exc:  # noqa: BLE001 - said again by the first tool call
            log.warning("could not load the index: %s", exc)

    def close(self) -> None:
        with self._lock:
            if self._service is not None:
                self._service.stop()
                self._service = None


def _missing(path: Path) -> bool:
    """Whether ``path`` is known not to exist. One this user may not reach (a folder at mode 000)
    is not: the service's own checks say what is wrong with it (``Path.exists`` raised
    PermissionError there, and every tool said "brain failed on this call")."""
    try:
        path.stat()
    except (FileNotFoundError, NotADirectoryError):
        return True
    except OSError:
        return False
    return False
