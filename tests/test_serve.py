"""`brain serve` in this process: the same answers as in-process, the socket's defences, the
vault boundary, the watcher, and queries while it indexes (never a torn result)."""

from __future__ import annotations

import itertools
import json
import logging
import os
import re
import shutil
import socket
import stat
import threading
import time
import types
import urllib.error
import urllib.request
from pathlib import Path

import pytest
from click.testing import CliRunner
from conftest import write
from index_helpers import IndexView, index_into
from serve_helpers import Heard, queries_done, raw_exchange, request, served, server_socket, settled, wait_until
from test_recall import RESULT_KEYS  # what ask --json gives of each result, the README's example too

from brain import config
from brain import vault as vault_module
from brain.cli import cli
from brain.errors import ConfigError
from brain.recall.types import RecallSettings
from brain.server import client, protocol, runtime
from brain.server.daemon import AlreadyRunning, Daemon, parse_http
from brain.server.service import Service

QUESTION = "how should agent memory work"


def _index(vault: Path) -> None:
    from conftest import FakeEmbedder

    index_into(Path(os.environ["BRAIN_HOME"]), vault, FakeEmbedder())


def _invoke(*args: str) -> tuple[str, str]:
    result = CliRunner().invoke(cli, list(args), catch_exceptions=False)
    assert result.exit_code == 0, result.output + result.stderr
    return result.stdout, result.stderr


def _without_timings(text: str) -> dict:
    data = json.loads(text)
    for part in (data, data.get("a"), data.get("b")):
        if isinstance(part, dict):
            part.pop("timings_ms", None)
    data.pop("ab_recall_id", None)
    return data


# ----- the same answer, with or without a server ------------------------------------------------


@pytest.mark.parametrize(
    "flags",
    [
        [],
        ["--json"],
        ["--context", "--budget", "900"],
        ["--graph", "--json"],
        ["--mode", "vector", "-k", "4"],
        ["--mode", "hybrid", "--depth", "7", "--seeds", "3", "--json"],
        ["--ab", "--json"],
        ["--ab", "--ab-modes", "vector,hybrid+ppr"],
    ],
)
def test_ask_through_the_server_prints_what_an_in_process_run_prints(toy_vault, flags):
    _index(toy_vault)
    args = ["ask", "--vault", str(toy_vault), *flags, QUESTION]
    with served(toy_vault) as daemon:
        before = daemon.service.queries
        served_out, served_err = _invoke(*args)
        assert daemon.service.queries == before + 1  # the server answered it
        local_out, local_err = _invoke(*args, "--no-server")
        assert daemon.service.queries == before + 1  # and it did not answer this one
    if "--json" in flags:
        assert _without_timings(served_out) == _without_timings(local_out)
    else:
        served_out = served_out.replace("#2", "#1")  # the --ab row number
        assert served_out == local_out
        assert served_err.replace("#1", "#N") == local_err.replace("#2", "#N")


def test_a_bad_mode_is_the_same_error_with_a_server(toy_vault):
    _index(toy_vault)
    with served(toy_vault):
        result = CliRunner().invoke(cli, ["ask", "--vault", str(toy_vault), "--mode", "sideways", QUESTION])
    assert result.exit_code == 2  # a usage error, as a bad -k is
    assert "unknown mode 'sideways'" in result.output and "Traceback" not in result.output


def test_a_request_the_server_refuses_is_said_not_answered_elsewhere(toy_vault):
    _index(toy_vault)
    with served(toy_vault, watch=False) as daemon:
        with pytest.raises(
            client.ServerError, match="an empty query asks nothing: give words or a question"
        ) as refused:
            client.call(daemon.root, "ask", timeout=10, query=" ", modes=["vector"], settings={})
        assert refused.value.code == "bad_request"
        with pytest.raises(client.ServerError, match="note: a non-empty string of at most 4,096 characters"):
            client.call(daemon.root, "note", timeout=10, note="x" * 5000)


def test_a_query_longer_than_a_server_takes_is_cut_to_it_with_a_server_or_without(toy_vault, caplog):
    # It was sent to no server and answered in-process (2 MB: 12 s on 60 notes, and the model's load)
    _index(toy_vault)
    long = QUESTION + " " + "word " * 2500 + "x" * 20  # over protocol.MAX_QUERY_CHARS
    cut = (QUESTION + " " + "word " * ((protocol.MAX_QUERY_CHARS - len(QUESTION) - 1) // 5)).rstrip()
    said = f"brain: WARNING: the query is {len(long):,} characters, over the 10,000 a query takes: asked with its first {len(cut):,}"
    with served(toy_vault, watch=False) as daemon:
        with caplog.at_level("INFO", logger="brain"):
            served_out, served_err = _invoke("ask", "--vault", str(toy_vault), long)
        assert daemon.service.queries == 1  # the server answered it
        assert not [r for r in caplog.records if "answering in this process" in r.getMessage()]
        local_out, local_err = _invoke("ask", "--vault", str(toy_vault), "--no-server", long)
        json_out, _ = _invoke("ask", "--vault", str(toy_vault), "--json", long)
    assert served_out == local_out and served_out.startswith(" 1.")
    assert served_err.splitlines()[0] == local_err.splitlines()[0] == said
    answer = json.loads(json_out)
    assert answer["query"] == cut and answer["warnings"][0] == said.removeprefix("brain: WARNING: ")


@pytest.mark.parametrize(
    ("query", "asked"),
    [
        ("記憶" * 6000, "記憶" * 5000),  # no space: the first 10,000 characters
        ("a" * 9998 + " b", "a" * 9998 + " b"),  # within the limit: as it is
        ("a" * 9999 + " bc", "a" * 9999),  # a word that does not fit whole is left out
        ("a" * 10_000 + " b", "a" * 10_000),  # a space right after the limit keeps the last word
        ("a\n" * 6000, "a\n" * 4999 + "a"),  # any white space
    ],
)
def test_a_query_is_cut_to_what_a_server_takes_at_the_last_space(query, asked):
    assert protocol.cut_query(query) == asked


def test_a_serve_timeout_beyond_the_longest_wait_still_asks_the_server(toy_vault, monkeypatch):
    _index(toy_vault)
    monkeypatch.setenv("BRAIN_SERVE_TIMEOUT", "1000")  # more than the 600 s a request may wait
    with served(toy_vault, watch=False) as daemon:
        _invoke("ask", "--vault", str(toy_vault), "--json", QUESTION)
        assert daemon.service.queries == 1


@pytest.mark.parametrize(
    "variable, value, words",
    [
        ("BRAIN_EMBED_MODEL", "/nonexistent-model", "built with the model 'fake:64', but BRAIN_EMBED_MODEL is"),
        ("BRAIN_EMBED_MODEL", "fake:32", "built with the model 'fake:64', but BRAIN_EMBED_MODEL is 'fake:32'"),
        ("BRAIN_FTS_TOKENIZER", "trigram", "built with the lexical tokenizer 'unicode61', but BRAIN_FTS_TOKENIZER"),
        ("BRAIN_CHUNKING", "short", "chunked with BRAIN_CHUNKING=heading, not short"),
    ],
)
def test_ask_with_settings_the_index_was_not_built_with_is_the_same_error_with_a_server(
    toy_vault, monkeypatch, variable, value, words
):
    """The server's index was built with fake:64; this client would use something else."""
    _index(toy_vault)
    with served(toy_vault, watch=False) as daemon:
        monkeypatch.setenv(variable, value)
        served_run = CliRunner().invoke(cli, ["ask", "--vault", str(toy_vault), QUESTION])
        local_run = CliRunner().invoke(cli, ["ask", "--vault", str(toy_vault), "--no-server", QUESTION])
        assert daemon.service.queries == 0 and daemon.service.errors == 0
    assert served_run.exit_code == local_run.exit_code == 1
    assert words in served_run.output and served_run.output == local_run.output
    assert served_run.output.count("\n") == 1  # one line, as in-process


def test_ask_with_other_answer_settings_than_the_servers_answers_in_process_and_says_so(toy_vault, monkeypatch, caplog):
    """The server answered with its own PageRank weights, method, dense index and reranker, none
    of them in the request: BRAIN_PPR_LINK_WEIGHT=2 in this shell, or even BRAIN_PPR_METHOD=bogus,
    was ignored unsaid while a server ran, and an error without one."""
    _index(toy_vault)
    monkeypatch.delenv("BRAIN_PPR_LINK_WEIGHT", raising=False)
    with served(toy_vault, watch=False) as daemon:
        monkeypatch.setenv("BRAIN_PPR_LINK_WEIGHT", "2")
        served_run = CliRunner().invoke(cli, ["ask", "--vault", str(toy_vault), QUESTION])
        local_run = CliRunner().invoke(cli, ["ask", "--vault", str(toy_vault), "--no-server", QUESTION])
        assert daemon.service.queries == 0 and served_run.stdout == local_run.stdout
        said = [r.getMessage() for r in caplog.records if r.levelname == "WARNING"]
        assert any(
            "answers with other settings (BRAIN_PPR_LINK_WEIGHT 1.0 there, 2.0 here); answering in this process" in m
            for m in said
        ), said
        monkeypatch.setenv("BRAIN_PPR_LINK_WEIGHT", "1.0")  # the server's own, written otherwise: asked
        _invoke("ask", "--vault", str(toy_vault), QUESTION)
        assert daemon.service.queries == 1
        monkeypatch.setenv("BRAIN_PPR_METHOD", "bogus")
        bad = CliRunner().invoke(cli, ["ask", "--vault", str(toy_vault), QUESTION])
        assert (
            bad.exit_code == 1
            and bad.output == "Error: BRAIN_PPR_METHOD must be one of auto, push, power, not 'bogus'\n"
        )
        assert daemon.service.queries == 1


@pytest.mark.parametrize("variable", ["BRAIN_SERVE_PAST_IDLE", "BRAIN_MAX_NOTE_MB", "BRAIN_PPR_METHOD"])
def test_a_server_with_a_bad_setting_does_not_start(toy_vault, monkeypatch, variable):
    """BRAIN_SERVE_PAST_IDLE=soon let it start, and each question about the past then hung until
    the client gave up, nothing in the log; a bad BRAIN_PPR_METHOD refused every question."""
    _index(toy_vault)
    monkeypatch.setenv(variable, "soon")
    with pytest.raises(ConfigError, match=f"^{variable} must be .*, not 'soon'$"), served(toy_vault, watch=False):
        pass
    assert runtime.read_record(toy_vault.resolve()) is None


def test_a_server_tells_an_index_mismatch_by_its_own_code(toy_vault):
    _index(toy_vault)
    with served(toy_vault, watch=False) as daemon:
        fields = {"query": QUESTION, "modes": ["vector"], "settings": {}}
        index = {"model": "fake:64", "fts_tokenizer": "unicode61", "chunking": "heading"}
        assert request(daemon, "ask", **fields, index=index)["ok"] is True
        reply = request(daemon, "ask", **fields, index={**index, "model": "other"})
        assert reply["error"]["code"] == "index_mismatch" and "'other'" in reply["error"]["message"]
        assert request(daemon, "ask", **fields, index={"model": 3})["error"]["code"] == "bad_request"
        assert request(daemon, "ask", **fields, index={"colour": "red"})["error"]["code"] == "bad_request"
        assert request(daemon, "ask", **fields)["ok"] is True  # a client that does not say: as before
        for bad in (3, "x" * 5000):
            reply = request(daemon, "ask", **fields, index={**index, "query_prefix": bad})
            assert (
                reply["error"]["code"] == "bad_request"
                and "query_prefix: null or a string" in reply["error"]["message"]
            )
        prefixes = {"query_prefix": "", "passage_prefix": None}  # set empty, and unset
        assert request(daemon, "ask", **fields, index={**index, **prefixes})["ok"] is True


def test_a_server_from_before_the_prefixes_is_sent_none_and_not_asked_with_one(toy_vault, monkeypatch):
    """A server whose record lists no `prefixes` refuses them as unknown settings: unset, they
    are left out (as before); set, it would check with its own, so this process answers."""
    _index(toy_vault)
    monkeypatch.delenv("BRAIN_QUERY_PREFIX", raising=False)
    monkeypatch.delenv("BRAIN_PASSAGE_PREFIX", raising=False)
    sent = []
    real_ask = Service.ask

    def ask(self, *args, index=None, **kwargs):
        sent.append(index)
        return real_ask(self, *args, index=index, **kwargs)

    monkeypatch.setattr(Service, "ask", ask)
    with served(toy_vault, watch=False) as daemon:
        _invoke("ask", "--vault", str(toy_vault), QUESTION)
        assert daemon.service.queries == 1 and sent[-1]["query_prefix"] is None and "passage_prefix" in sent[-1]
        record = runtime.read_record(toy_vault.resolve())
        assert record is not None
        record["features"] = [f for f in record["features"] if f != "prefixes"]
        runtime.write_record(toy_vault.resolve(), record)
        _invoke("ask", "--vault", str(toy_vault), QUESTION)
        assert daemon.service.queries == 2 and not set(protocol.PREFIX_SETTINGS) & set(sent[-1])
        monkeypatch.setenv("BRAIN_QUERY_PREFIX", "query: ")
        out, _ = _invoke("ask", "--vault", str(toy_vault), QUESTION)
        assert daemon.service.queries == 2 and out.startswith(" 1.")  # answered here


def _busy_for(daemon, asks: int | None) -> list[str]:
    """The server answers its next ``asks`` asks (None: every one) ``busy``, as with every place
    being answered; the ops it was sent, in order."""
    handle, sent = daemon.service.handle, []

    def refusing(message):
        sent.append(message["op"])
        if message["op"] == "ask" and (asks is None or sent.count("ask") <= asks):
            return protocol.error("busy", "64 requests are being answered at once")
        return handle(message)

    daemon.service.handle = refusing
    return sent


def test_status_refused_busy_once_asks_again_and_the_server_is_up(toy_vault):
    """`brain status` (and brain mcp's `status` tool) asked once: a server that refused it
    `busy`, or whose connection was closed for another's before a byte of answer, was said to
    be `not answering` (asks work without it) while it was up and full a moment. It is asked
    again, as a question is, within its second."""
    _index(toy_vault)
    with served(toy_vault, watch=False) as daemon:
        handle, sent = daemon.service.handle, []

        def refusing(message):
            sent.append(message["op"])
            if sent.count("status") == 1:
                return protocol.error("busy", "64 requests are being answered at once")
            return handle(message)

        daemon.service.handle = refusing
        server = client.status(toy_vault.resolve(), timeout=5)
    assert server is not None and server["state"] == "ready", sent
    assert sent.count("status") == 2


def _counting_recaller(monkeypatch) -> list[Path]:
    """Each in-process answer's vault: the model loaded here, a second index in memory."""
    from brain.recall import opening

    opened, real = [], opening.open_recaller

    def counting(root, **options):
        opened.append(root)
        return real(root, **options)

    monkeypatch.setattr(opening, "open_recaller", counting)
    return opened


def test_ask_refused_busy_once_asks_again_and_the_server_answers(toy_vault, monkeypatch):
    """The first ``busy`` loaded the model in this process (10 s with MiniLM) when the server
    would have answered a moment later."""
    _index(toy_vault)
    opened = _counting_recaller(monkeypatch)
    with served(toy_vault, watch=False) as daemon:
        sent = _busy_for(daemon, 1)
        out, err = _invoke("ask", "--vault", str(toy_vault), "--json", QUESTION)
        assert daemon.service.queries == 1  # the second try was answered there
    assert sent.count("ask") == 2 and opened == [] and err == ""
    assert json.loads(out)["results"]


def test_ask_refused_busy_throughout_answers_in_process_after_a_few_tries_and_says_so_once(toy_vault, monkeypatch):
    from brain import cli as cli_module

    _index(toy_vault)
    opened = _counting_recaller(monkeypatch)
    # the client's pauses, counted rather than timed (it was bounded at 30 s of wall time, the
    # in-process answer with them on a loaded machine)
    paused: list[float] = []

    def pause(seconds: float) -> None:
        paused.append(seconds)
        time.sleep(seconds)

    monkeypatch.setattr(client, "time", types.SimpleNamespace(monotonic=time.monotonic, sleep=pause))
    with served(toy_vault, watch=False) as daemon:
        sent = _busy_for(daemon, None)
        out, err = _invoke("ask", "--vault", str(toy_vault), "--json", QUESTION)
        assert daemon.service.queries == 0
    assert sent.count("ask") == cli_module.ASK_TRIES and opened == [toy_vault.resolve()]
    assert json.loads(out)["results"]  # --json on stdout as ever
    lines = err.splitlines()
    assert len(lines) == 1 and "busy" in lines[0] and f"({cli_module.ASK_TRIES} tries)" in lines[0]
    assert lines[0].endswith("; answering in this process")
    # a pause between two tries, 0.6 s in all at most (RETRY_PAUSES: 12-25 ms doubling to 50-100 ms)
    assert len(paused) == cli_module.ASK_TRIES - 1 and sum(paused) <= 0.6, paused


def test_a_question_the_server_took_and_lost_is_not_asked_again(toy_vault, monkeypatch):
    """A server that crashes on a question closes the connection unanswered, which the client took
    for a place closed for another client's (``Refused``) and asked again, up to 8 times: under a
    supervisor that restarts the server, one bad question crashed it 8 times. The server says it
    took a question (``protocol.TAKEN``) before answering it, and a question taken then lost is
    asked no more: brain ask answers in-process, saying why in one line."""
    import contextlib

    _index(toy_vault)
    opened = _counting_recaller(monkeypatch)
    with served(toy_vault, watch=False) as daemon:
        taken: list[bytes] = []
        answer = daemon.answer

        def crashing(data: bytes):  # the server's end closed mid-question, as a crash closes it
            taken.append(data)
            for conn in list(daemon.connections._open):
                with contextlib.suppress(OSError):
                    conn.shutdown(socket.SHUT_RDWR)
            return answer(data)

        monkeypatch.setattr(daemon, "answer", crashing)
        out, err = _invoke("ask", "--vault", str(toy_vault), "--json", QUESTION)
        monkeypatch.setattr(daemon, "answer", answer)
        # a client from before TAKEN reads it as the reply's whitespace
        ping = raw_exchange(daemon.socket_path, protocol.encode(protocol.request("ping", str(daemon.root))))
    assert len(taken) == 1 and opened == [toy_vault.resolve()]
    assert json.loads(out)["results"]
    lines = err.splitlines()
    assert len(lines) == 1 and "took the question and closed the connection without an answer" in lines[0], err
    assert lines[0].endswith("; answering in this process")
    assert ping.startswith(protocol.TAKEN + b"{") and json.loads(ping)["ok"] is True


def test_no_server_means_no_cost_and_no_message(toy_vault):
    _index(toy_vault)
    result = CliRunner().invoke(cli, ["ask", "--vault", str(toy_vault), "--json", QUESTION])
    assert result.exit_code == 0 and result.stderr == ""
    assert json.loads(result.stdout)["results"]


def test_a_server_that_does_not_answer_in_time_is_skipped(toy_vault, monkeypatch, caplog):
    """A socket that accepts and never replies: brain ask answers in-process after the timeout."""
    _index(toy_vault)
    monkeypatch.setenv("BRAIN_SERVE_TIMEOUT", "0.5")
    # how long the exchange had, read from its deadline as it began, rather than the whole ask
    # bounded at 10 s of wall time (the in-process answer with it, on a loaded machine)
    had: list[float] = []
    exchange = client._exchange

    def timed(path: str, payload: bytes, deadline: float) -> object:
        had.append(deadline - time.monotonic())
        return exchange(path, payload, deadline)

    monkeypatch.setattr(client, "_exchange", timed)
    results: list = []
    with server_socket(toy_vault):
        # five minutes allowed: a wait on the silent socket past its deadline fails, not hangs
        asking = threading.Thread(
            target=lambda: results.append(CliRunner().invoke(cli, ["ask", "--vault", str(toy_vault), QUESTION])),
            daemon=True,
        )
        asking.start()
        asking.join(300)
    assert results, "brain ask waited on a server that does not answer past its BRAIN_SERVE_TIMEOUT"
    result = results[0]
    assert len(had) == 1 and 0 < had[0] <= 0.5, had
    assert result.exit_code == 0, result.output
    assert result.stdout.startswith(" 1.")
    # (the CLI's log handler keeps the stderr of the first CliRunner run: read the record instead)
    said = [r.getMessage() for r in caplog.records if r.levelname == "WARNING"]
    assert any("did not answer in 0.5 s" in m and "answering in this process" in m for m in said), said


def test_a_server_that_let_a_question_time_out_costs_the_next_ask_a_ping_not_the_timeout(
    toy_vault, monkeypatch, caplog
):
    """Hung or paused with Ctrl-Z (the kernel takes the connection, nothing answers), a server
    cost each `brain ask` the whole BRAIN_SERVE_TIMEOUT (15 s) before it answered in-process.
    One that let a question time out is now asked again only once it answers a ping: the next
    ask sends a ping of a second at most, no question, and answers in-process at once."""
    _index(toy_vault)
    monkeypatch.setattr(client, "SILENT_MARK_AFTER", 0.3, raising=False)  # a timeout this long is a sign
    had: list[float] = []
    exchange = client._exchange

    def timed(path: str, payload: bytes, deadline: float) -> object:
        had.append(deadline - time.monotonic())
        return exchange(path, payload, deadline)

    monkeypatch.setattr(client, "_exchange", timed)
    with server_socket(toy_vault):
        monkeypatch.setenv("BRAIN_SERVE_TIMEOUT", "0.5")
        first = CliRunner().invoke(cli, ["ask", "--vault", str(toy_vault), QUESTION])
        monkeypatch.setenv("BRAIN_SERVE_TIMEOUT", "8")
        second = CliRunner().invoke(cli, ["ask", "--vault", str(toy_vault), QUESTION])
    assert first.exit_code == 0 and second.exit_code == 0, (first.output, second.output)
    assert second.stdout == first.stdout and second.stdout.startswith(" 1.")
    assert len(had) == 2 and had[1] <= 1.0, had  # the second ask: a ping, never its 8 s
    said = [r.getMessage() for r in caplog.records if r.levelname == "WARNING"]
    assert any(
        "let a question time out" in m and "does not answer a ping in 1 s" in m and "answering in this process" in m
        for m in said
    ), said


def test_a_server_that_let_a_question_time_out_is_asked_again_once_it_answers_a_ping(toy_vault):
    _index(toy_vault)
    with served(toy_vault, watch=False) as daemon:
        root = toy_vault.resolve()
        record = runtime.read_record(root)
        mark = runtime.runtime_dir(root) / client.SILENT_FILE
        client._mark_silent(root, {**record, "started_at": "another server's"})
        assert client.call(root, "status", timeout=10)["state"] == "ready"
        assert mark.exists()  # another server's: not this one's to clear
        client._mark_silent(root, record)
        assert client.call(root, "status", timeout=10)["state"] == "ready"  # pinged, then asked
        assert not mark.exists() and daemon.service.state == "ready"


def test_a_request_over_the_limit_is_refused_by_the_client_without_sending_it(toy_vault, monkeypatch):
    """Any server refuses it (before, one that read only its first MiB reset the client mid-write,
    and a server that read nothing held it the whole timeout): the client says it at once, with
    no exchange begun (counted, not timed: the seconds depend on the machine's load)."""
    exchanges: list[str] = []
    exchange = client._exchange

    def counted(path: str, payload: bytes, deadline: float) -> object:
        exchanges.append(path)
        return exchange(path, payload, deadline)

    monkeypatch.setattr(client, "_exchange", counted)
    with server_socket(toy_vault):  # listens, never reads
        with pytest.raises(client.ServerError, match=f"request over {protocol.MAX_REQUEST_BYTES} bytes") as refused:
            client.call(toy_vault.resolve(), "ping", timeout=5, x="x" * protocol.MAX_REQUEST_BYTES)
        assert refused.value.code == "bad_request" and exchanges == []


def test_a_reply_that_runs_on_is_dropped_past_the_cap_not_read_into_memory_whole(toy_vault):
    """A reply is read whole into memory: one that ran on (a server's bug, a process answering on
    its socket) filled it at the socket's pace until the deadline, GBs within `brain ask`'s 30 s.
    Here 160 MiB of a well-formed reply, sent in pieces: read whole and answered before."""
    sent: list[int] = []

    def answer(listener: socket.socket) -> None:
        conn, _ = listener.accept()
        with conn:
            conn.settimeout(10)
            while not conn.recv(65536).endswith(b"\n"):
                pass
            piece = b"a" * (1 << 20)
            try:
                conn.sendall(b' {"v":1,"ok":true,"result":"')
                for _ in range(160):
                    conn.sendall(piece)
                    sent.append(len(piece))
                conn.sendall(b'"}\n')
            except OSError:  # the client stopped reading and closed: what it should do
                pass

    with server_socket(toy_vault) as listener:
        thread = threading.Thread(target=answer, args=(listener,), daemon=True)
        thread.start()
        # the deadline far off (it was 60 s, the call bounded at 30 s of wall time): reading the
        # rest, or waiting for the deadline, is told by what was sent, never by the seconds
        with pytest.raises(client.NoServer, match=r"sent a reply over 128 MiB: not read"):
            client.call(toy_vault.resolve(), "ping", timeout=3600)
        thread.join(60)
    assert sum(sent) < 160 << 20  # the rest was never read


# ----- the socket ------------------------------------------------------------------------------


def test_socket_and_record_are_owner_only(toy_vault):
    _index(toy_vault)
    with served(toy_vault) as daemon:
        assert stat.S_IMODE(os.stat(daemon.socket_path).st_mode) == 0o600
        assert stat.S_ISSOCK(os.stat(daemon.socket_path).st_mode)
        record_file = runtime.record_path(toy_vault.resolve())
        assert stat.S_IMODE(os.stat(record_file).st_mode) == 0o600
        record = runtime.read_record(toy_vault.resolve())
        assert record["pid"] == os.getpid() and record["socket"] == str(daemon.socket_path)
    assert not daemon.socket_path.exists() and not record_file.exists()  # cleaned up on stop


_GATE = {"entity": False, "reason": "r"}


@pytest.mark.parametrize(
    "result",
    [
        {"results": ["x"]},  # a result that is no object
        {"results": []},  # none for the one mode asked
        {"results": [{"query": "q", "mode": "hybrid+ppr", "gate": _GATE, "results": [], "warnings": 5}]},
        {"results": [{"query": "q", "mode": "hybrid+ppr", "gate": _GATE, "results": [], "fallbacks": "all"}]},
        {"results": [{"query": "q", "mode": "hybrid+ppr", "gate": {"entity": "no", "reason": 3}, "results": []}]},
    ],
)
def test_a_server_sending_results_of_the_wrong_shape_is_answered_around(toy_vault, caplog, result):
    """A reply that parses but is no list of results, one a mode, of the declared types: brain ask
    answers in-process and says why, not a traceback where a field is read."""
    _index(toy_vault)
    expected = _invoke("ask", "--vault", str(toy_vault), "--no-server", QUESTION)[0]
    root = toy_vault.resolve()

    def answer() -> None:
        try:
            conn, _ = server.accept()
        except OSError:  # closed by the test
            return
        with conn:
            conn.recv(1 << 20)
            conn.sendall(protocol.encode({"v": protocol.VERSION, "ok": True, "result": result}))

    with server_socket(toy_vault) as server:
        thread = threading.Thread(target=answer, daemon=True)
        thread.start()
        try:
            out = CliRunner().invoke(cli, ["ask", "--vault", str(toy_vault), QUESTION])
            thread.join(5)
            thread = threading.Thread(target=answer, daemon=True)  # and once more, for --json
            thread.start()
            as_json = CliRunner().invoke(cli, ["ask", "--vault", str(toy_vault), "--json", QUESTION])
        finally:
            server.close()
    thread.join(5)
    assert out.exit_code == 0, out.output
    assert out.stdout == expected
    said = [r.getMessage() for r in caplog.records if r.levelname == "WARNING"]
    assert any("answering in this process" in m for m in said), said
    # --json hides the log: why the server was passed over is among the result's warnings
    assert as_json.exit_code == 0, as_json.output
    warnings = json.loads(as_json.stdout)["warnings"]
    assert warnings and warnings[0].startswith(f"brain serve for {root}") and "answering in this process" in warnings[0]


@pytest.mark.parametrize(
    "payload",
    [
        b"not json\n",
        b"\xff\xfe\x00garbage\n",
        b"[1, 2]\n",
        b'{"v": 1}\n',
        b'{"v": 2, "op": "ping", "vault": "/x"}\n',
        b'{"v": 1, "op": "rm -rf", "vault": "/x"}\n',
        b'{"v": 1, "op": "ask", "vault": "/x"}\n',
        b'{"v": 1, "op": "ask", "vault": "/x", "query": "q", "modes": ["vector"], "settings": {"k": 0}}\n',
        b'{"v": 1, "op": "ask", "vault": "/x", "query": "q", "modes": [], "settings": {}}\n',
        b'{"v": 1, "op": "ask", "vault": "/x", "query": "q", "modes": ["vector"], "settings": {"bogus": 1}}\n',
        b'{"v": 1, "op": "note", "vault": "/x", "note": 42}\n',
        b'{"v": 1, "op": "ping", "vault": "/x", "wait": -1}\n',
        b'{"v": 1, "op": "ask", "vault": "/x", "query": "q", "modes": ["vector"], "output": "xml"}\n',
        b"{" * 200 + b"\n",
        b'{"v": 1, "op": "ping", "vault": "/x", "x": ' + b"[" * 100_000 + b"]" * 100_000 + b"}\n",  # too deep
        b'{"v": 1, "op": "ping", "vault": "/x"',  # no end of line, then the client stops writing
        b"x" * (protocol.MAX_REQUEST_BYTES + 10) + b"\n",
    ],
)
def test_garbage_on_the_socket_gets_an_error_reply_and_the_server_lives_on(toy_vault, payload):
    _index(toy_vault)
    with served(toy_vault, watch=False) as daemon:
        reply = json.loads(raw_exchange(daemon.socket_path, payload))
        assert reply["ok"] is False and reply["error"]["code"] in ("bad_request", "wrong_vault")
        assert reply["error"]["message"]
        assert request(daemon, "ping")["ok"] is True
        assert daemon.service.errors == 0


def test_nesting_too_deep_for_the_json_parser_is_a_bad_request_on_the_socket_and_over_http(toy_vault, caplog):
    _index(toy_vault)
    deep = b'{"v": 1, "op": "ping", "vault": "/x", "x": ' + b"[" * 100_000 + b"]" * 100_000 + b"}"
    with served(toy_vault, watch=False, http=("127.0.0.1", 0)) as daemon:
        reply = json.loads(raw_exchange(daemon.socket_path, deep + b"\n"))
        assert reply["error"]["code"] == "bad_request" and "nested" in reply["error"]["message"]
        status, reply = _post(daemon, deep)
        assert status == 400 and reply["error"]["code"] == "bad_request"
        assert request(daemon, "ping")["ok"] is True
    assert not [r for r in caplog.records if r.levelname == "ERROR"]


def test_an_unexpected_error_in_a_handler_is_logged_and_answered_never_a_silent_close(toy_vault, caplog):
    _index(toy_vault)
    with served(toy_vault, watch=False, http=("127.0.0.1", 0)) as daemon:

        def broken(data: bytes) -> dict:
            raise RuntimeError("a bug")

        daemon.answer = broken  # type: ignore[method-assign]
        ping = protocol.encode(protocol.request("ping", str(daemon.root)))
        reply = json.loads(raw_exchange(daemon.socket_path, ping))
        assert reply["ok"] is False and reply["error"] == {"code": "internal", "message": "RuntimeError: a bug"}
        status, reply = _post(daemon, ping)
        assert status == 500 and reply["error"] == {"code": "internal", "message": "RuntimeError: a bug"}
        del daemon.answer
        assert request(daemon, "ping")["ok"] is True  # and it lives on
    failed = [r for r in caplog.records if r.levelname == "ERROR"]
    assert len(failed) == 2 and all(r.exc_info and "a bug" in str(r.exc_info[1]) for r in failed)


def test_an_unexpected_error_while_answering_is_an_internal_error_reply(toy_vault, monkeypatch, caplog):
    _index(toy_vault)
    with served(toy_vault, watch=False) as daemon:

        def broken(message: dict) -> dict:
            raise RuntimeError("a bug")

        monkeypatch.setattr(daemon.service, "handle", broken)
        reply = request(daemon, "ping")
        assert reply["error"] == {"code": "internal", "message": "RuntimeError: a bug"}
    assert any(r.levelname == "ERROR" and r.exc_info for r in caplog.records)


def _post(daemon: Daemon, body: bytes) -> tuple[int, dict]:
    """POST ``body`` to the daemon's HTTP address with the right token and host."""
    url = daemon.http_url()
    assert url is not None
    port = url.split(":")[2].split("/")[0]
    token = runtime.read_record(daemon.root)["token"]
    headers = {"Authorization": f"Bearer {token}", "Content-Type": "application/json", "Host": f"127.0.0.1:{port}"}
    req = urllib.request.Request(url, data=body, headers=headers, method="POST")
    try:
        with urllib.request.urlopen(req, timeout=10) as response:
            return response.status, json.loads(response.read())
    except urllib.error.HTTPError as exc:
        return exc.code, json.loads(exc.read())


def test_clients_that_leave_cost_nothing(toy_vault):
    _index(toy_vault)
    with served(toy_vault, watch=False) as daemon:
        ask = protocol.encode(
            protocol.request("ask", str(daemon.root), query=QUESTION, modes=["hybrid+ppr"], settings={})
        )
        for _ in range(20):  # ask, then hang up before the answer
            sock = socket.socket(socket.AF_UNIX, socket.SOCK_STREAM)
            sock.connect(str(daemon.socket_path))
            sock.sendall(ask)
            sock.close()
        for _ in range(5):  # connect and leave without a word
            sock = socket.socket(socket.AF_UNIX, socket.SOCK_STREAM)
            sock.connect(str(daemon.socket_path))
            sock.close()
        idle = socket.socket(socket.AF_UNIX, socket.SOCK_STREAM)  # connect and say nothing, for now
        idle.connect(str(daemon.socket_path))
        try:
            reply = request(daemon, "ask", query=QUESTION, modes=["hybrid+ppr"], settings={"k": 3})
        finally:
            idle.close()
        assert reply["ok"] is True and len(reply["result"]["results"][0]["results"]) == 3
        assert daemon.service.errors == 0


def test_a_second_server_on_the_same_vault_is_refused(toy_vault):
    _index(toy_vault)
    with served(toy_vault, watch=False) as first:
        second = Daemon(first.root, Service(first.root, watch=False))
        with pytest.raises(AlreadyRunning, match=f"already running for {first.root} .pid {os.getpid()}"):
            second.start()
        assert request(first, "ping")["ok"] is True  # the first one is untouched
        assert runtime.read_record(first.root)["pid"] == os.getpid()


def test_a_stale_socket_is_detected_and_replaced(toy_vault):
    """What `kill -9` leaves: a socket file nobody listens on and a record naming a dead pid."""
    _index(toy_vault)
    root = toy_vault.resolve()
    runtime.make_private(runtime.runtime_dir(root))
    path = runtime.socket_path(root)
    dead = socket.socket(socket.AF_UNIX, socket.SOCK_STREAM)
    dead.bind(str(path))
    dead.close()  # the file stays; connecting to it is refused
    runtime.write_record(root, {"pid": 2**22 + 12345, "socket": str(path), "vault": str(root)})
    assert not runtime.lock_is_held(root)
    with pytest.raises(client.NoServer):
        client.call(root, "ping", timeout=2)
    result = CliRunner().invoke(cli, ["ask", "--vault", str(toy_vault), "--json", QUESTION])
    assert result.exit_code == 0 and "did not answer" not in result.output  # a stale record is no news
    with served(toy_vault, watch=False) as daemon:
        assert request(daemon, "ping")["result"]["pid"] == os.getpid()
        assert runtime.read_record(root)["pid"] == os.getpid()


@pytest.mark.parametrize(
    "reply",
    [b'{"v":1,"ok":true,"result":' + b"[" * 100_000 + b"]" * 100_000 + b"}", b"\xff\xfe", b"[1, 2"],
    ids=["nested-too-deep", "not-utf8", "cut-short"],
)
def test_whatever_a_socket_replies_the_client_falls_back(toy_vault, reply):
    """A reply nested deeper than json can read is no server, as garbage is: `brain ask`
    answers in-process, not with a RecursionError's traceback."""
    _index(toy_vault)
    with server_socket(toy_vault) as listener:

        def answer() -> None:
            for _ in range(2):
                try:
                    conn, _ = listener.accept()
                except OSError:
                    return
                conn.recv(1 << 16)
                conn.sendall(reply)
                conn.close()

        thread = threading.Thread(target=answer, daemon=True)
        thread.start()
        with pytest.raises(client.NoServer):
            client.call(toy_vault.resolve(), "ping", timeout=5)
        result = CliRunner().invoke(cli, ["ask", "--vault", str(toy_vault), "--json", QUESTION])
        assert result.exit_code == 0 and json.loads(result.stdout)["results"], result.output
        assert "answering in this process" in result.stderr  # said on stderr as in the JSON's warnings
    thread.join(5)


# ----- one vault, one server --------------------------------------------------------------------


def test_the_note_op_reads_a_note_linked_in_from_outside_and_refuses_a_link_re_pointed(toy_vault, tmp_path):
    """As `brain note` does (reading.inside_vault): a folder kept elsewhere, linked in, is read as
    the walk indexes it (it was "refused": leads outside the vault); a note whose link now leads
    out to a file that is no note is refused, its target unnamed."""
    write(tmp_path / "outside", "Inner.md", "# Inner\n\nKept elsewhere.\n")
    (toy_vault / "Linked").symlink_to(tmp_path / "outside", target_is_directory=True)
    (tmp_path / "shared.md").write_text("# Shared\n", encoding="utf-8")
    (toy_vault / "Leak.md").symlink_to(tmp_path / "shared.md")
    _index(toy_vault)
    with served(toy_vault, watch=False) as daemon:
        reply = request(daemon, "note", note="Linked/Inner")
        assert reply["ok"] and "Kept elsewhere." in reply["result"]["text"], reply
        (tmp_path / "passwd").write_text("root:HIDDEN\n", encoding="utf-8")
        (toy_vault / "Leak.md").unlink()
        (toy_vault / "Leak.md").symlink_to(tmp_path / "passwd")
        reply = request(daemon, "note", note="Leak.md")
        assert reply["error"]["code"] == "refused" and "not-a-note" in reply["error"]["message"], reply
        assert "HIDDEN" not in json.dumps(reply) and str(tmp_path) not in json.dumps(reply)


def test_a_server_for_vault_a_never_answers_for_vault_b(toy_vault, tmp_path):
    _index(toy_vault)
    other = tmp_path / "other"
    write(other, "Quokkas.md", "# Quokkas\n\nQuokkas are small marsupials that live on Rottnest Island.\n")
    write(other, "Ferries.md", "# Ferries\n\nThe ferry to Rottnest leaves from Fremantle.\n")
    _index(other)
    with served(toy_vault, watch=False) as daemon:
        reply = request(daemon, "ask", vault=other.resolve(), query="quokkas", modes=["vector"], settings={})
        assert reply["error"]["code"] == "wrong_vault"
        for op, fields in (
            ("note", {"note": "Quokkas"}),
            ("neighbours", {"note": "Quokkas"}),
            ("status", {}),
            ("stop", {}),
        ):
            assert request(daemon, op, vault=other.resolve(), **fields)["error"]["code"] == "wrong_vault"
        assert request(daemon, "ping")["ok"]  # and the stop request for B did not stop A
        # B's server folder pointing at A's socket (a copied folder, say): B's client falls back.
        runtime.make_private(runtime.runtime_dir(other.resolve()))
        runtime.write_record(other.resolve(), runtime.read_record(daemon.root))
        queries = daemon.service.queries
        out = CliRunner().invoke(cli, ["ask", "--vault", str(other), "--json", "quokkas"])
        assert out.exit_code == 0
        assert {r["path"] for r in json.loads(out.output)["results"]} <= {"Quokkas.md", "Ferries.md"}
        assert daemon.service.queries == queries


# ----- status -----------------------------------------------------------------------------------


def test_status_server_line_counts_one_as_one(tmp_path):
    # "1 queries", "indexing 1 changes"
    from brain.cli import _server_line

    server = {"pid": 7, "uptime_s": 5, "queries": 1, "state": "ready", "watch": {"busy": True, "pending": 1}}
    assert _server_line(server, tmp_path) == "server: up (pid 7, up 5s, 1 query, indexing 1 change)"
    server.update(queries=3, watch={"busy": True, "pending": 2})
    assert _server_line(server, tmp_path) == "server: up (pid 7, up 5s, 3 queries, indexing 2 changes)"


def test_status_says_the_servers_times_in_local_time_as_its_ledger_line(toy_vault, monkeypatch, zone):
    """`brain status` said the server's last update and a failing pass's start in UTC under the
    ledger's local time: two clocks on one screen (in Tokyo the turn begun at 01:02 local sat
    above an update at 16:43 UTC). Now local, said so; --json keeps the server's UTC."""
    zone("Asia/Tokyo")  # UTC+9, no summer time
    server = {"pid": 7, "uptime_s": 5, "queries": 1, "state": "ready"}
    server["last_update"] = {"reason": "watch", "finished_at": "2026-12-01T16:43:23Z", "new": 1, "lag_s": 0.5}
    server["indexing_failing"] = {"failures": 3, "since": "2026-12-01T15:31:02Z", "why": "PermissionError: no"}
    monkeypatch.setattr(client, "status", lambda root, **kw: server)
    out = CliRunner().invoke(cli, ["status", "--vault", str(toy_vault)])
    assert out.exit_code == 0, out.output
    line = next(line for line in out.output.splitlines() if line.startswith("server: "))
    assert "indexing FAILING since 2026-12-02 00:31:02 local (3 passes in a row)" in line, line
    assert "last update 2026-12-02 01:43:23 local: 1 new, served 0.5 s after the change" in line, line
    assert "UTC" not in line
    server["indexing_failing"]["what"] = "idle check"
    server["last_update"] = {"reason": "start", "finished_at": "2026-12-01T16:43:23Z", "took_s": 1.0}
    line = next(line for line in CliRunner().invoke(cli, ["status", "--vault", str(toy_vault)]).output.splitlines()
                if line.startswith("server: "))  # fmt: skip
    assert "idle check FAILING since 2026-12-02 00:31:02 local (3 times" in line and "UTC" not in line, line
    assert "index loaded 2026-12-02 01:43:23 local in 1.0 s" in line, line
    data = json.loads(CliRunner().invoke(cli, ["status", "--vault", str(toy_vault), "--json"]).output)["server"]
    assert data["last_update"]["finished_at"] == "2026-12-01T16:43:23Z"
    assert data["indexing_failing"]["since"] == "2026-12-01T15:31:02Z"


def test_status_says_whether_a_server_is_up(toy_vault):
    _index(toy_vault)
    out = CliRunner().invoke(cli, ["status", "--vault", str(toy_vault)])
    assert "server: none" in out.output
    assert json.loads(CliRunner().invoke(cli, ["status", "--vault", str(toy_vault), "--json"]).output)["server"] is None
    with served(toy_vault) as daemon:
        _invoke("ask", "--vault", str(toy_vault), QUESTION)
        out = CliRunner().invoke(cli, ["status", "--vault", str(toy_vault)])
        assert f"server: up (pid {os.getpid()}, up " in out.output and "1 query," in out.output
        data = json.loads(CliRunner().invoke(cli, ["status", "--vault", str(toy_vault), "--json"]).output)["server"]
        assert data["pid"] == os.getpid() and data["queries"] == 1 and data["state"] == "ready"
        assert data["socket"] == str(daemon.socket_path)
        assert data["index"]["notes"] == data["index"]["notes"] > 0
        assert data["last_update"]["reason"] == "start"


def test_the_start_pass_is_logged_as_the_first_look_at_the_vault_without_an_event_time(toy_vault, caplog):
    """`brain serve`'s first pass logged `start: … in 11.35 s (11.35 s after the first event)`,
    though no event came: it says it is the first look at the vault, and how long it took; a pass
    over changes still says how long after the first of them it served them."""
    caplog.set_level(logging.INFO, logger="brain")

    def lines(reason: str) -> list[str]:
        return [r.getMessage() for r in caplog.records if r.getMessage().startswith(f"{reason}: ")]

    with served(toy_vault) as daemon:
        wait_until(lambda: lines("start"), 20, "the start pass's line")
        (start,) = lines("start")
        assert re.fullmatch(
            r"start: the first look at the vault: \d+ new, 0 changed, 0 removed, 0 renamed in [\d.]+ s", start
        )
        write(toy_vault, "Fresh note.md", "# Fresh note\n\nA note written while the server runs.\n")
        settled(daemon, "Fresh note.md")
        wait_until(lambda: lines("changes"), 20, "the change pass's line")
        assert re.fullmatch(r"changes: 1 new, .* in [\d.]+ s \([\d.]+ s after the first event\)", lines("changes")[0])


def test_no_lag_is_claimed_for_a_pass_no_event_told_of(toy_vault, caplog):
    """`brain status --json`'s last_update gave the start pass a lag_s (the pass's own time, "from
    the first event" none saw), and a rescan that found a change one from the rescan's start,
    which `brain status` printed as "served 0.4 s after the change" of a change made minutes
    before, unseen. Those passes have no first event and no lag (None); a change heard has both."""
    from brain.server.watcher import Batch

    caplog.set_level(logging.INFO, logger="brain")
    _index(toy_vault)
    with served(toy_vault, watch=False) as daemon:
        wait_until(lambda: daemon.service.last_update is not None, 20, "the start pass")
        update = daemon.service.status()["last_update"]
        assert update["reason"] == "start" and update["lag_s"] is None and update["first_event_at"] is None
        write(toy_vault, "Unheard.md", "# Unheard\n\nA note no event told of.\n")
        daemon.service._on_batch(Batch("rescan"))  # what the five-minute rescan runs
        update = json.loads(CliRunner().invoke(cli, ["status", "--vault", str(toy_vault), "--json"]).output)["server"][
            "last_update"
        ]
        assert update["reason"] == "rescan" and update["new"] == 1, update
        assert update["lag_s"] is None and update["first_event_at"] is None, update
        line = CliRunner().invoke(cli, ["status", "--vault", str(toy_vault)]).output
        assert "1 new, found by a pass over the whole vault)" in line and "after the change" not in line, line
        said = [r.getMessage() for r in caplog.records if r.getMessage().startswith("rescan: ")]
        assert said and "no event told of it" in said[-1] and "after the first event" not in said[-1], said
        write(toy_vault, "Heard.md", "# Heard\n\nA note an event told of.\n")
        heard = time.monotonic() - 2.0
        daemon.service._on_batch(Batch("changes", frozenset({"Heard.md"}), heard, heard))
        update = daemon.service.status()["last_update"]
        assert update["reason"] == "changes" and update["new"] == 1 and update["lag_s"] >= 2.0, update
        assert update["first_event_at"] <= update["finished_at"], update


def test_the_watcher_hands_no_first_event_with_a_pass_none_told_of(tmp_path):
    """The watcher's own side: the start pass, the look once the watch is on and the rescans carry
    no first event; a batch of changes heard carries when the first of them was heard."""
    from brain.server.watcher import VaultWatcher

    vault = tmp_path / "vault"
    write(vault, "a.md", "# A\n")
    batches: list = []
    watcher = VaultWatcher(vault, batches.append, settle_ms=100, rescan_seconds=1.0)
    watcher.start()
    try:
        wait_until(lambda: any(b.reason == "rescan" for b in batches), 20, "a rescan")
        before = time.monotonic()
        write(vault, "b.md", "# B\n")
        wait_until(lambda: any("b.md" in b.paths for b in batches), 20, "the batch of b.md")
    finally:
        watcher.stop()
    assert batches[0].reason == "start"
    for batch in batches:
        if "b.md" in batch.paths:
            assert batch.reason == "changes" and batch.first_event is not None and batch.first_event >= before
        else:  # the start, the look once watching ("."), the rescans: nothing was heard
            assert batch.first_event is None, batch


def test_behind_counts_from_a_change_heard_not_from_a_pass_none_told_of(tmp_path):
    """`brain status --json`'s watch.behind_s counted from when the start pass or a rescan began,
    as if a change had been heard then; it follows last_update.lag_s's rule now: seconds since the
    first change heard not yet served, null while only a pass no event told of runs."""
    from brain.server.watcher import VaultWatcher

    vault = tmp_path / "vault"
    write(vault, "a.md", "# A\n")
    seen: list = []
    watcher: VaultWatcher

    def on_batch(batch) -> None:  # in the pass: what `brain status` would read now
        seen.append((batch, watcher.behind(), time.monotonic()))

    watcher = VaultWatcher(vault, on_batch, settle_ms=100, rescan_seconds=1.0)
    watcher.start()
    try:
        wait_until(lambda: any(b.reason == "rescan" for b, _, _ in seen), 20, "a rescan")
        write(vault, "b.md", "# B\n")
        wait_until(lambda: any("b.md" in b.paths for b, _, _ in seen), 20, "the batch of b.md")
        wait_until(lambda: not watcher.busy, 20, "level")
        assert watcher.behind() is None
    finally:
        watcher.stop()
    assert seen[0][0].reason == "start"
    for batch, behind, now in seen:
        if batch.first_event is None:  # the start, the look once watching, the rescans
            assert behind is None, batch
        else:
            assert behind is not None and 0 <= behind <= now - batch.first_event + 0.001, (batch, behind)


def test_status_says_how_long_ago_the_first_change_indexing_was_heard(tmp_path):
    from brain.cli import _server_line

    server = {"pid": 7, "uptime_s": 5, "queries": 1, "state": "ready"}
    server["watch"] = {"busy": True, "pending": 2, "behind_s": 2.04}
    assert _server_line(server, tmp_path) == (
        "server: up (pid 7, up 5s, 1 query, indexing 2 changes, the first heard 2.0 s ago)"
    )
    server["watch"] = {"busy": True, "pending": 1, "behind_s": None}  # a pass no event told of
    assert _server_line(server, tmp_path) == "server: up (pid 7, up 5s, 1 query, indexing 1 change)"


# ----- HTTP -------------------------------------------------------------------------------------


@pytest.mark.parametrize(
    "value",
    [
        "0.0.0.0:8181",
        "192.168.1.5:80",
        "example.com:80",
        "[::]:80",
        "8181",
        "127.0.0.1:x",
        "127.0.0.1:²",
        "127.0.0.1:٨٠",
    ],
)
def test_http_is_only_ever_on_loopback(value):
    with pytest.raises(ConfigError):
        parse_http(value)


def test_http_answers_with_the_token_and_a_loopback_host_only(toy_vault):
    assert parse_http("localhost:0") == ("127.0.0.1", 0) and parse_http("[::1]:9") == ("::1", 9)
    _index(toy_vault)
    with served(toy_vault, watch=False, http=("127.0.0.1", 0)) as daemon:
        url = daemon.http_url()
        port = url.split(":")[2].split("/")[0]
        token = runtime.read_record(daemon.root)["token"]
        body = json.dumps(
            protocol.request("ask", str(daemon.root), query=QUESTION, modes=["vector"], settings={"k": 2})
        )

        def post(headers: dict[str, str]) -> tuple[int, dict]:
            req = urllib.request.Request(url, data=body.encode(), headers=headers, method="POST")
            try:
                with urllib.request.urlopen(req, timeout=10) as response:
                    return response.status, json.loads(response.read())
            except urllib.error.HTTPError as exc:
                return exc.code, json.loads(exc.read())

        good = {"Authorization": f"Bearer {token}", "Content-Type": "application/json", "Host": f"127.0.0.1:{port}"}
        status, reply = post(good)
        assert status == 200 and reply["ok"] and len(reply["result"]["results"][0]["results"]) == 2
        assert "text" in reply["result"]["results"][0]["results"][0]  # the full result by default
        body = json.dumps({**json.loads(body), "output": "json"})
        status, reply = post(good)
        assert status == 200 and set(reply["result"]["results"][0]["results"][0]) == set(RESULT_KEYS)
        assert post({**good, "Authorization": "Bearer wrong"})[0] == 401
        assert post({**good, "Authorization": f"bearer  {token}"})[0] == 200  # the scheme's case is free (RFC 9110)
        assert post({**good, "Authorization": f"Basic {token}"})[0] == 401
        assert post({**good, "Authorization": token})[0] == 401
        assert post({k: v for k, v in good.items() if k != "Authorization"})[0] == 401
        assert post({**good, "Host": f"evil.example:{port}"})[0] == 403  # DNS rebinding
        assert post({**good, "Content-Type": "text/plain"})[0] == 415  # a cross-site form post


# ----- the watcher ------------------------------------------------------------------------------


def _paths(daemon: Daemon) -> set[str]:
    return daemon.service.run(lambda r: r.store.note_paths(), timeout=10)


def _top(daemon: Daemon, query: str) -> dict:
    results = client.ask(daemon.root, query, ["hybrid+ppr"], RecallSettings(k=3), update=True, timeout=30)
    return results[0].results[0].__dict__ if results[0].results else {}


def _hits(daemon: Daemon, query: str) -> list[dict]:
    results = client.ask(daemon.root, query, ["hybrid+ppr"], RecallSettings(k=3), update=True, timeout=30)
    return [c.__dict__ for c in results[0].results]


def test_the_watcher_follows_saves_renames_and_deletes(toy_vault):
    _index(toy_vault)
    with served(toy_vault) as daemon:
        # an editor's atomic save: a temporary file, then a rename over the note
        target = toy_vault / "AI" / "Agent memory.md"
        tmp = toy_vault / "AI" / ".Agent memory.md.tmp-123"
        tmp.write_text("# Agent memory\n\nThe zanzibar protocol replaces all episodic memory.\n", encoding="utf-8")
        os.replace(tmp, target)
        settled(daemon, "AI/Agent memory.md")
        # In the top 3, not first: the fake embedder's dense lane ranks by hashed words, and its
        # sure first note outvotes BM25's only hit under today's lane weights.
        hits = {hit["path"]: hit["text"] for hit in _hits(daemon, "zanzibar")}
        assert "zanzibar" in hits.get("AI/Agent memory.md", "")

        # a vim-style save: the note moved away, a new file written, the backup removed
        os.replace(target, toy_vault / "AI" / "Agent memory.md~")
        target.write_text("# Agent memory\n\nThe quagga ledger holds the episodic memory now.\n", encoding="utf-8")
        (toy_vault / "AI" / "Agent memory.md~").unlink()
        settled(daemon, "AI/Agent memory.md")
        assert "quagga" in {hit["path"]: hit["text"] for hit in _hits(daemon, "quagga")}.get("AI/Agent memory.md", "")

        os.rename(toy_vault / "Cooking" / "Knife skills.md", toy_vault / "Cooking" / "Blade craft.md")
        settled(daemon, "Cooking/Blade craft.md")
        assert "Cooking/Blade craft.md" in _paths(daemon) and "Cooking/Knife skills.md" not in _paths(daemon)

        os.rename(toy_vault / "Cooking", toy_vault / "Kitchen")  # only the folder is reported
        settled(daemon, "Kitchen/")
        paths = _paths(daemon)
        assert not any(p.startswith("Cooking/") for p in paths)
        assert {"Kitchen/Blade craft.md", "Kitchen/Sourdough bread.md"} <= paths

        (toy_vault / "People" / "Ada Lovelace.md").unlink()
        import shutil

        shutil.rmtree(toy_vault / "Kitchen")
        settled(daemon, "People/Ada Lovelace.md", "Kitchen/")
        paths = _paths(daemon)
        assert "People/Ada Lovelace.md" not in paths and not any(p.startswith("Kitchen/") for p in paths)

        # a new folder with notes written at once (inotify can miss files in a brand-new folder)
        new = toy_vault / "Inbox" / "Deep" / "Deeper"
        new.mkdir(parents=True)
        for i in range(30):
            (new / f"Idea {i}.md").write_text(f"# Idea {i}\n\nIdea number {i} about walruses.\n", encoding="utf-8")
        settled(daemon, "Inbox/")
        assert {f"Inbox/Deep/Deeper/Idea {i}.md" for i in range(30)} <= _paths(daemon)
        with IndexView(config.index_dir(toy_vault)) as view:
            assert view.paths() == _paths(daemon)  # the served snapshot is the committed index


def test_ignored_files_are_not_indexed_and_do_not_wake_the_indexer(toy_vault):
    _index(toy_vault)
    with served(toy_vault) as daemon:
        passes = daemon.service.watcher.passes
        heard = Heard.of(daemon)
        for i in range(5):  # Obsidian rewrites its workspace file all the time
            (toy_vault / ".obsidian" / "workspace.json").write_text(json.dumps({"n": i}), encoding="utf-8")
            write(toy_vault, ".trash/Old.md", f"# Old {i}\n")
            write(toy_vault, "Attachments/picture.png", "not a note")
            time.sleep(0.05)
        assert "Templates/" in (toy_vault / ".brainignore").read_text(encoding="utf-8")
        write(toy_vault, "Templates/Secret.md", "# Secret\n\nNever indexed.\n")
        write(toy_vault, "Notes.sync-conflict-20260101-abc.md", "# Conflict copy\n")
        # new rules: a pass. The events come in the order of the writes, so once it is heard all
        # of the above were heard before it or with it, and none was news (it waited 2 s instead)
        (toy_vault / ".brainignore").write_text("Templates/\nDaily/\n", encoding="utf-8")
        wait_until(lambda: ".brainignore" in heard.paths(), 30, "the new rules to be heard")
        assert heard.paths() == {".brainignore"}
        settled(daemon, ".brainignore")
        assert daemon.service.watcher.passes == passes + 1
        paths = _paths(daemon)
        assert not any(p.startswith("Daily/") for p in paths)
        assert not any(p.startswith((".trash/", ".obsidian/", "Templates/")) or "sync-conflict" in p for p in paths)


def test_settled_waits_for_the_event_however_late_it_comes(toy_vault):
    """``settled`` (the tests' wait for a change to be served) waited a fixed 0.4 s for the
    file system's events, then for the watcher: on a loaded machine an event that came later
    found the watcher idle, and the test asserted on the index before the change was in it.
    It waits for the event itself now: here every batch of events reaches the watcher 1 s late."""
    _index(toy_vault)
    with served(toy_vault) as daemon:
        watcher = daemon.service.watcher
        hear = watcher._relevant

        def late(changes):
            time.sleep(1.0)  # a loaded machine: the watching thread gets the CPU a second on
            return hear(changes)

        watcher._relevant = late  # type: ignore[method-assign]
        write(toy_vault, "Late.md", "# Late\n\nThe kinkajou census, take 0.\n")
        # waited for otherwise: heard, and not forgotten by a ``settled``, which must not take
        # that for the next change's event
        wait_until(lambda: "take 0" in _top(daemon, "kinkajou census")["text"], 30, "the first take")
        for n in range(1, 3):
            write(toy_vault, "Late.md", f"# Late\n\nThe kinkajou census, take {n}.\n")
            settled(daemon, "Late.md")
            assert f"take {n}" in _top(daemon, "kinkajou census")["text"]


def test_a_burst_of_a_thousand_files_is_one_pass(toy_vault):
    _index(toy_vault)
    with served(toy_vault, settle_ms=300) as daemon:
        passes = daemon.service.watcher.passes
        burst = toy_vault / "Burst"
        burst.mkdir()
        written = []
        for i in range(1000):
            (burst / f"Card {i:04d}.md").write_text(f"# Card {i}\n\nCard {i} of the burst.\n", encoding="utf-8")
            written.append(time.monotonic())
        settled(daemon, "Burst/", timeout=120)
        assert sum(p.startswith("Burst/") for p in _paths(daemon)) == 1000
        # One pass, and one more at most (the events a pass missed); a pass more for each stall of
        # the writer longer than the settle time (the vault quiet: a batch ends), and for each
        # max_wait_seconds the writing took (a batch ends however it goes on): a loaded machine
        # can stall it, where "at most 2" would fail. A pass a file or a few would be hundreds.
        watcher = daemon.service.watcher
        stalls = sum(later - earlier >= watcher.settle_ms / 1000 for earlier, later in itertools.pairwise(written))
        allowed = 2 + stalls + int((written[-1] - written[0]) / watcher.max_wait_seconds)
        made = watcher.passes - passes
        assert made <= allowed, (
            f"{made} passes for a burst written with {stalls} stalls in {written[-1] - written[0]:.1f} s"
        )
        assert daemon.service.status()["last_update"]["reason"] == "changes"


def test_a_note_saved_while_the_server_runs_is_answered_by_the_next_ask(toy_vault):
    """`brain ask` right after a save waits for the watcher's pass, as in-process it indexes
    first. It asked again and again for 20 s until the note came, which an ask that did not wait
    passed too: here one ask, made once the watcher holds the save, whose pass is held back a
    second on purpose, answers with the note, after the pass has ended."""
    _index(toy_vault)
    with served(toy_vault) as daemon:
        watcher = daemon.service.watcher
        index_pass = watcher.on_batch
        let_go, ended = threading.Event(), threading.Event()

        def held_back(batch):
            assert let_go.wait(300), "the pass was never let go"
            try:
                return index_pass(batch)
            finally:
                ended.set()

        watcher.on_batch = held_back
        write(toy_vault, "Fresh.md", "# Fresh\n\nThe okapi procedure is brand new.\n")
        # the watcher holds the save (gathered, or in its held-back pass): what the ask waits for
        wait_until(lambda: "Fresh.md" in watcher.pending_paths(), 300, "the watcher to hear of Fresh.md")
        releasing = threading.Timer(1.0, let_go.set)  # an ask that did not wait has answered by then
        releasing.start()
        try:
            results = client.ask(
                daemon.root, "okapi procedure", ["hybrid+ppr"], RecallSettings(k=3), update=True, timeout=300
            )
        finally:
            releasing.cancel()
            let_go.set()
        assert ended.is_set(), "the ask answered before the pass that indexes the save ended"
        assert results[0].results and results[0].results[0].path == "Fresh.md"


def test_the_index_changed_by_another_process_is_picked_up(toy_vault):
    _index(toy_vault)
    with served(toy_vault, watch=False) as daemon:
        write(toy_vault, "Elsewhere.md", "# Elsewhere\n\nThe narwhal clause, indexed by `brain index`.\n")
        _index(toy_vault)  # as `brain index` in another shell
        wait_until(lambda: "Elsewhere.md" in _paths(daemon), 20, "the server to load the new index")


@pytest.mark.parametrize("split", [False, True], ids=["one-connection", "bm25-readers"])
def test_the_index_wal_does_not_grow_with_every_edit(toy_vault, monkeypatch, split):
    # A snapshot always held a read transaction, so SQLite never started the WAL afresh: it grew
    # by every pass (with MiniLM, 150 MB after 200 edits of a 1.6 MB index).
    if split:  # BM25 searches in parts, on readers pinned to each snapshot's state
        monkeypatch.setenv("BRAIN_LEXICAL_THREADS", "2")
        monkeypatch.setenv("BRAIN_LEXICAL_SPLIT_MATCHES", "1")
    _index(toy_vault)
    wal = config.index_dir(toy_vault.resolve()) / "index.db-wal"
    sizes = []
    with served(toy_vault) as daemon:
        for i in range(12):
            write(toy_vault, "Churn.md", f"# Churn\n\nEdit {i} of the okapi procedure.\n" * 3)
            settled(daemon, "Churn.md")
            assert _top(daemon, f"okapi procedure edit {i}")  # after the swap's old snapshot is closed
            sizes.append(wal.stat().st_size if wal.exists() else 0)
        assert _top(daemon, "okapi procedure")["path"] == "Churn.md"
        assert daemon.service._snapshot.recaller.store._fts.pinned is split
    assert max(sizes[-4:]) <= max(sizes[:4]), sizes


def test_a_replaced_snapshot_is_let_go_once_closed_not_kept_until_the_next_request(toy_vault):
    # The query thread kept the last job it ran and the snapshot it ran it on: a closed snapshot
    # (its vectors, graph and names) stayed in memory beside the new one until the next request.
    import gc
    import weakref

    _index(toy_vault)
    with served(toy_vault) as daemon:
        assert _top(daemon, "okapi procedure")  # the query thread last read this snapshot
        old = weakref.ref(daemon.service._snapshot.recaller)
        write(toy_vault, "Churn.md", "# Churn\n\nThe okapi procedure, edited.\n")
        settled(daemon, "Churn.md")
        assert daemon.service._snapshot.recaller is not old()
        queries_done(daemon)  # the close the swap queued: nothing holds the old snapshot after it
        gc.collect()
        assert old() is None


def test_a_replaced_snapshot_a_fold_of_the_wal_read_is_let_go_once_closed(toy_vault):
    # The query loop named the snapshot it folded the WAL on (the idle probe asks for a fold every
    # 2 s while the WAL holds frames: under load, within the test above) in a variable of its own,
    # which kept it in memory once replaced and closed, until the next fold: none, when the swap's
    # fold emptied the WAL. The test above failed under load after its 10 s wait.
    import gc
    import weakref

    from brain.server import service as service_module

    _index(toy_vault)
    with served(toy_vault) as daemon:
        old = weakref.ref(daemon.service._snapshot.recaller)
        daemon.service._jobs.put(service_module._FOLD)  # as the idle probe asks for one
        queries_done(daemon)
        daemon.service._fold_asked.set()  # no fold asked for after this one: only the swap's
        write(toy_vault, "Churn.md", "# Churn\n\nThe okapi procedure, edited.\n")
        settled(daemon, "Churn.md")
        assert daemon.service._snapshot.recaller is not old()
        queries_done(daemon)
        gc.collect()
        assert old() is None


def test_after_a_swap_the_memory_malloc_keeps_free_is_given_back(toy_vault, monkeypatch):
    # The embedding model leaves freed memory behind in every pass (PyTorch's buffers for each new
    # length of text); glibc kept it for the process (bench/serve_memory.py).
    import gc
    import weakref

    from brain.server import service

    replaced: list[weakref.ref] = []
    trims: list[bool] = []  # at each: whether the replaced snapshot was let go

    def trim() -> bool:
        gc.collect()
        trims.append(all(ref() is None for ref in replaced))
        return True

    monkeypatch.setattr(service, "release_free_memory", trim)
    _index(toy_vault)
    with served(toy_vault) as daemon:
        replaced.append(weakref.ref(daemon.service._snapshot.recaller))
        started = len(trims)
        write(toy_vault, "Churn.md", "# Churn\n\nThe okapi procedure, edited.\n")
        settled(daemon, "Churn.md")
        wait_until(lambda: len(trims) > started, 10, "the free memory to be given back")
        assert trims[started:] == [True]  # once, after the replaced snapshot was let go


def test_free_memory_is_given_back_where_malloc_can_and_nothing_is_done_elsewhere(monkeypatch):
    import sys

    from brain.server import service

    assert service.release_free_memory() is sys.platform.startswith("linux")  # glibc's malloc_trim
    service._malloc_trim.cache_clear()
    monkeypatch.setattr("ctypes.CDLL", lambda *a, **k: object())  # a C library without malloc_trim
    try:
        assert service.release_free_memory() is False
    finally:
        service._malloc_trim.cache_clear()


def test_the_wal_is_not_folded_under_a_snapshot_a_commit_came_after(toy_vault):
    from brain.index.store import IndexStore
    from brain.migrations import connect
    from brain.server.service import fold_wal

    _index(toy_vault)
    directory = config.index_dir(toy_vault.resolve())
    writer = connect(str(directory / "index.db"))  # open throughout: the WAL stays as the server sees it
    store = IndexStore.open_snapshot(directory)
    try:
        before = store.conn.execute("SELECT count(*) FROM notes").fetchone()[0]
        writer.execute("DELETE FROM notes WHERE id = (SELECT min(id) FROM notes)")
        assert fold_wal(store) is False  # it would move the snapshot onto the writer's state
        assert store.conn.execute("SELECT count(*) FROM notes").fetchone()[0] == before
        store.close()
        store = IndexStore.open_snapshot(directory)  # the state the writer left
        assert fold_wal(store) is True and not (directory / "index.db-wal").stat().st_size
        assert store.conn.execute("SELECT count(*) FROM notes").fetchone()[0] == before - 1
    finally:
        store.close()
        writer.close()


# ----- concurrency ------------------------------------------------------------------------------


def test_eight_clients_while_the_watcher_indexes_get_whole_answers(tmp_path, monkeypatch):
    """Every note carries a generation number; the writer moves them all to the next one at once.
    An answer mixing generations would be a torn read (half an update)."""
    import brain.index.indexer

    monkeypatch.setattr(brain.index.indexer, "CHUNKS_PER_BATCH", 8)  # an update is many transactions
    vault = tmp_path / "gen"
    notes = 48

    # A pass reads the vault as it is on disk: one that began while a generation was half
    # written served both generations, rightly. The writer is one thread among a dozen here,
    # and on a loaded machine it paused longer than settle_ms mid-generation now and then, so
    # the test failed with no torn read. Writing and passes take turns instead.
    turns = threading.Lock()

    def generation(n: int) -> None:
        with turns:
            _write_generation(n)

    def _write_generation(n: int) -> None:
        for i in range(notes):
            links = f" See [[Report {(i + 1) % notes}]]." if i % 3 == 0 else ""
            write(
                vault,
                f"Reports/Report {i}.md",
                f"# Report {i}\n\ngeneration g{n}g of the quokka census report number {i}.{links}\n",
            )

    generation(0)
    _index(vault)
    errors: list[str] = []
    answers: list[set[str]] = []
    stop = threading.Event()

    def asker() -> None:
        while not stop.is_set():
            try:
                results = client.ask(
                    vault.resolve(),
                    "quokka census report generation",
                    ["hybrid+ppr", "vector"],
                    RecallSettings(k=12),
                    update=False,
                    timeout=30,
                )
            except Exception as exc:
                errors.append(repr(exc))
                continue
            for result in results:
                if len(result.results) != 12:
                    errors.append(f"{len(result.results)} results")
                seen = {c.text.split("generation ")[1].split(" ")[0] for c in result.results}
                answers.append(seen)

    from conftest import FakeEmbedder

    class Steady(FakeEmbedder):  # each batch takes a moment, so updates have a middle to tear
        def embed_documents(self, texts, *, progress=False):
            time.sleep(0.02)
            return super().embed_documents(texts, progress=progress)

    with served(vault, embedder=Steady()) as daemon:
        watcher = daemon.service.watcher
        index_pass = watcher.on_batch

        def whole_generation_pass(batch):
            with turns:
                index_pass(batch)

        watcher.on_batch = whole_generation_pass
        torn_in_sqlite = []

        def naive_reader() -> None:  # reads the committed rows as they are, no snapshot
            import sqlite3

            conn = sqlite3.connect(config.index_dir(vault) / "index.db")
            while not stop.is_set():
                gens = {row[0].split("generation ")[1].split(" ")[0] for row in conn.execute("SELECT text FROM chunks")}
                if len(gens) > 1:
                    torn_in_sqlite.append(gens)
                time.sleep(0.002)
            conn.close()

        threads = [threading.Thread(target=asker) for _ in range(8)] + [threading.Thread(target=naive_reader)]
        for t in threads:
            t.start()
        try:
            for n in range(1, 4):
                generation(n)
                settled(daemon, "Reports/", timeout=60)
                # the askers take turns with the passes: an answer from this generation before the next
                wait_until(lambda: {f"g{n}g"} in answers, 60, f"an answer from generation {n}")  # noqa: B023
        finally:
            stop.set()
            for t in threads:
                t.join(30)
        assert daemon.service.errors == 0
    assert not errors, errors[:5]
    assert len(answers) > 50
    torn = [a for a in answers if len(a) != 1]
    assert not torn, f"{len(torn)} of {len(answers)} answers mixed generations: {torn[:3]}"
    assert {"g3g"} in answers  # the last generation was served
    assert torn_in_sqlite, "the update never showed a mixed state in SQLite: this test would prove nothing"


def test_an_index_rebuilt_with_another_model_keeps_the_last_good_state_and_says_so_once(toy_vault, caplog, monkeypatch):
    from conftest import FakeEmbedder

    from brain.server import service as service_module

    monkeypatch.setattr(service_module, "PROBE_EVERY", 0.1)  # a probe at each idle tick (1 s here)
    _index(toy_vault)
    with served(toy_vault, watch=False) as daemon:
        index_into(Path(os.environ["BRAIN_HOME"]), toy_vault, FakeEmbedder("fake:32"), rebuild=True)
        probes = []  # counted from here: each one sees the rebuilt index
        moved = daemon.service._moved
        daemon.service._moved = lambda: probes.append(1) or moved()
        wait_until(lambda: len(probes) >= 3, 30, "three probes of the rebuilt index")
        failures = [r for r in caplog.records if "could not load the index" in r.getMessage()]
        assert len(failures) == 1 and "fake:32" in failures[0].getMessage()
        reply = request(daemon, "ask", query=QUESTION, modes=["vector"], settings={"k": 2})
        assert reply["ok"] and len(reply["result"]["results"][0]["results"]) == 2  # the last good snapshot


def test_while_another_brain_index_holds_the_lock_asks_do_not_wait(toy_vault):
    from index_helpers import open_store

    from brain.index.writer_lock import vault_lock

    _index(toy_vault)
    with served(toy_vault) as daemon:
        store = open_store(toy_vault.resolve())
        try:
            with vault_lock(store):  # a long `brain index` in another shell
                write(toy_vault, "Blocked.md", "# Blocked\n\nThe ibex memo waits for the lock.\n")
                wait_until(lambda: daemon.service.blocked, 20, "the watcher to wait for the lock")
                # asked to wait up to protocol.MAX_WAIT (600 s) for the notes changed: an ask that
                # waited for the pass the lock holds up would run past the five minutes allowed,
                # which no load makes of one that does not (it was bounded at 5 s of wall time)
                answers: list = []
                asking = threading.Thread(
                    target=lambda: answers.append(
                        client.ask(daemon.root, "ibex memo", ["hybrid+ppr"], RecallSettings(k=3), timeout=3600)
                    ),
                    daemon=True,
                )
                asking.start()
                asking.join(300)
                assert answers, "the ask waited for the pass another `brain index` holds up"
                results = answers[0]
                assert results[0].stale == 1
                assert any("another `brain index` is running" in w for w in results[0].warnings)
        finally:
            store.close()
        settled(daemon, "Blocked.md")
        assert _top(daemon, "ibex memo")["path"] == "Blocked.md"


def test_the_model_s_slice_is_measured_each_time_it_is_held():
    import numpy as np
    from conftest import FakeEmbedder

    from brain.server.service import EMBED_SLICE, SerialEmbedder

    ticks = itertools.count(step=7.0)
    embedder = SerialEmbedder(FakeEmbedder(), clock=lambda: next(ticks))
    assert embedder.slice_seconds == 0.0
    embedder.embed_documents(["a note"] * (2 * EMBED_SLICE + 1))  # three slices
    assert embedder.slice_seconds == 7.0 and embedder.held_for() == 7.0
    # the first slice of a pass has no last one to go by: the one under way counts as it goes
    seen: list[float] = []
    embedder.inner.embed_documents = lambda texts, **_: seen.append(embedder.held_for()) or np.zeros((len(texts), 64))
    embedder.slice_seconds = 0.0
    embedder.embed_documents(["a note"])
    assert seen == [7.0] and embedder.slice_seconds == 14.0


def test_a_question_waiting_for_the_model_goes_before_the_indexer_s_next_slice():
    """Let go of by one slice, the model was taken again by the indexer's next before the
    question's thread woke (11 runs in 20): a question waited two slices or more."""
    for _ in range(5):
        assert _a_question_asked_during_a_slice() == ["slice", "question", "slice", "slice"]


def _a_question_asked_during_a_slice() -> list[str]:
    """What held the model in turn: three slices begun, a question asked during the first."""
    import numpy as np
    from conftest import FakeEmbedder

    from brain.server.service import EMBED_SLICE, SerialEmbedder

    inner, order, first = FakeEmbedder(), [], threading.Event()
    query = inner.embed_query

    def slice_(texts, **_):
        order.append("slice")
        if len(order) == 1:
            first.wait(120)  # a guard: set once the question waits for the model
        return np.zeros((len(texts), 64), dtype=np.float32)

    inner.embed_documents = slice_  # type: ignore[method-assign]
    inner.embed_query = lambda text: order.append("question") or query(text)  # type: ignore[method-assign]
    embedder = SerialEmbedder(inner)
    asked = threading.Event()  # the question is at the model's lock
    embedder._lock = _Told(embedder._lock, asked, "question")  # type: ignore[assignment]
    indexing = threading.Thread(target=embedder.embed_documents, args=(["a note"] * 3 * EMBED_SLICE,))
    indexing.start()
    wait_until(lambda: order == ["slice"], 60, "the first slice")
    asking = threading.Thread(target=embedder.embed_query, args=("a question",), name="question")
    asking.start()
    assert asked.wait(60), "the question never came to the model's lock"
    first.set()
    indexing.join(120)
    asking.join(120)
    return order


class _Told:
    """A lock that sets ``told`` as the thread named ``name`` comes to take it."""

    def __init__(self, lock, told: threading.Event, name: str):
        self.lock, self.told, self.name = lock, told, name

    def __enter__(self):
        if threading.current_thread().name == self.name:
            self.told.set()
        return self.lock.__enter__()

    def __exit__(self, *exc):
        return self.lock.__exit__(*exc)


def test_an_ask_stops_waiting_for_a_pass_in_time_for_its_answer_to_be_made(toy_vault, monkeypatch):
    """A question asked during a pass waited all its wait for the pass, then for the pass's slice
    on the model and its own time: `brain ask` (15 s) gave up on an answer 9 s late (a 52-note
    pass, MiniLM at load 21) and loaded the model itself beside the server. A slice measured as
    long as the whole wait (a clock that moves 1,000 s a slice) leaves no time to wait at all."""
    from brain.server import service as service_module

    _index(toy_vault)
    with served(toy_vault) as daemon:
        service = daemon.service
        ticks = itertools.count(step=1000.0)
        service.embedder._clock = lambda: next(ticks)
        write(toy_vault, "Slow.md", "# Slow\n\nThe narwhal memo took a slice of 1,000 s to embed.\n")
        settled(daemon, "Slow.md")
        assert service.embedder.slice_seconds == 1000.0
        held, index_vault = threading.Event(), service_module.index_vault

        def held_pass(*args, **kwargs):
            held.wait(300)  # a guard against a hang only: set once the question is answered
            return index_vault(*args, **kwargs)

        monkeypatch.setattr(service_module, "index_vault", held_pass)
        try:
            write(toy_vault, "Held.md", "# Held\n\nThe walrus memo waits for a pass.\n")
            wait_until(lambda: service.watcher.busy, 60, "the watcher to hear of Held.md")
            answers: list = []
            asking = threading.Thread(
                # the most a request may wait (protocol.MAX_WAIT): one that waited for the held
                # pass runs past the guard below, which no load makes of one that does not
                target=lambda: answers.append(service.ask(QUESTION, ["hybrid+ppr"], RecallSettings(k=3), wait=600)),
                daemon=True,
            )
            asking.start()
            asking.join(300)
            assert answers, "the ask waited for a pass although its answer could not be made in time after it"
            assert answers[0][0].stale >= 1 and any("brain serve is indexing" in w for w in answers[0][0].warnings)
        finally:
            held.set()
        settled(daemon, "Held.md")


def test_at_start_the_existing_index_answers_while_the_first_pass_runs(toy_vault):
    """The first pass is held (its embedding waits, the model free for questions) until the
    existing index has answered: it slept 0.2 s a batch, and a loaded machine could finish the
    pass before the test looked (``watcher.busy`` false, the question not asked during it)."""
    import threading

    from conftest import FakeEmbedder

    _index(toy_vault)
    for i in range(40):
        write(toy_vault, f"New/Note {i}.md", f"# Note {i}\n\nA new note about otters, number {i}.\n")
    service = Service(toy_vault.resolve(), embedder=FakeEmbedder())
    answered, embed = threading.Event(), service.embedder.embed_documents

    def held(texts, *, progress=False):
        answered.wait(120)  # a guard against a hang only: set once the question is answered
        return embed(texts, progress=progress)

    service.embedder.embed_documents = held  # type: ignore[method-assign]
    daemon = Daemon(toy_vault.resolve(), service)
    daemon.start()
    try:
        wait_until(lambda: service.state == "ready", 120, "the existing index to load")
        assert service.watcher.busy  # the first pass is still indexing the 40 new notes
        results = client.ask(daemon.root, QUESTION, ["hybrid+ppr"], RecallSettings(k=3), update=False, timeout=120)
        assert len(results[0].results) == 3 and results[0].stale >= 1
        answered.set()
        wait_until(lambda: not service.watcher.busy, 120, "the first pass")
        results = client.ask(daemon.root, "otters", ["hybrid+ppr"], RecallSettings(k=3), update=False, timeout=120)
        assert results[0].stale == 0 and results[0].results[0].path.startswith("New/")
    finally:
        answered.set()
        daemon.stop()


def test_a_vault_with_no_notes_is_served_empty_and_fills_as_notes_arrive(tmp_path, caplog):
    """The first note's pass is held (its embedding waits) until an ask comes, which waits for
    it. It slept 0.5 s, and a loaded machine could end the pass before the test saw it begin."""
    import threading

    from conftest import FakeEmbedder

    vault = tmp_path / "empty"
    vault.mkdir()
    root = vault.resolve()
    service = Service(root, embedder=FakeEmbedder(), settle_ms=150)
    asked, embed, handle = threading.Event(), service.embedder.embed_documents, service.handle

    def held(texts, *, progress=False):
        if texts:
            asked.wait(120)  # a guard against a hang only: set as the ask comes
        return embed(texts, progress=progress)

    def asking(message):
        if message.get("op") == "ask":
            asked.set()
        return handle(message)

    service.embedder.embed_documents = held  # type: ignore[method-assign]
    daemon = Daemon(root, service)
    daemon.start()
    try:
        assert service.wait_ready(120) and service.state == "empty" and service.failure is None
        wait_until(lambda: not service.watcher.busy, 120, "the first pass")
        no_notes = f"the vault {root} has no notes to search: `brain index` found no markdown notes in it"
        reply = request(daemon, "ask", query=QUESTION, modes=["vector"], settings={})
        assert reply["error"] == {"code": "brain_error", "message": no_notes}
        assert request(daemon, "note", note="Otters")["error"]["message"] == no_notes
        served_run = CliRunner().invoke(cli, ["ask", "--vault", str(vault), QUESTION])
        local_run = CliRunner().invoke(cli, ["ask", "--vault", str(vault), "--no-server", QUESTION])
        assert served_run.exit_code == local_run.exit_code == 1
        assert served_run.output == local_run.output == f"Error: {no_notes}\n"
        status = CliRunner().invoke(cli, ["status", "--vault", str(vault)]).output
        assert "server: up (empty, pid" in status
        assert service.errors == 0 and not [r for r in caplog.records if r.levelname == "ERROR"]
        write(vault, "Otters.md", "# Otters\n\nOtters hold hands while they sleep.\n")
        wait_until(lambda: service.watcher.busy, 120, "the watcher to hear of the note")
        assert service.state == "empty"
        service.handle = asking  # type: ignore[method-assign]
        results = client.ask(root, "otters sleep", ["hybrid+ppr"], RecallSettings(k=3), timeout=120)
        assert [c.path for c in results[0].results] == ["Otters.md"] and service.state == "ready"
    finally:
        asked.set()
        daemon.stop()


def test_an_empty_server_whose_indexing_fails_says_the_failure_not_the_emptiness(tmp_path):
    from conftest import FakeEmbedder

    vault = tmp_path / "empty"
    vault.mkdir()
    service = Service(vault.resolve(), embedder=FakeEmbedder(), watch=False)
    daemon = Daemon(vault.resolve(), service)
    daemon.start()
    try:
        assert service.wait_ready(30) and service.state == "empty"
        service._fail_if_nothing_loaded("indexing failed (the disk is full)")  # as a later pass would
        assert service.state == "failed" and service.status()["empty"] is None
        reply = request(daemon, "ask", query=QUESTION, modes=["vector"], settings={})
        assert reply["error"] == {"code": "brain_error", "message": "indexing failed (the disk is full)"}
    finally:
        daemon.stop()


def test_answers_after_a_failed_pass_say_the_notes_it_left_until_one_succeeds(toy_vault, monkeypatch):
    # The watcher is idle after a pass that failed (a full disk): the answers were the old
    # index's with no word of the notes changed since.
    from brain.errors import NoSpaceError
    from brain.server import service as service_module

    _index(toy_vault)
    real = service_module.index_vault

    def disk_full(*args, **kwargs):
        raise NoSpaceError("no room left to write the index (database or disk is full)")

    with served(toy_vault) as daemon:
        monkeypatch.setattr(service_module, "index_vault", disk_full)
        write(toy_vault, "Inbox/One.md", "# One\n\nabout agent memory\n")
        write(toy_vault, "Inbox/Two.md", "# Two\n\nabout agent memory too\n")
        settled(daemon, "Inbox/One.md", "Inbox/Two.md")
        results = daemon.service.ask(QUESTION, ["vector"], RecallSettings())
        assert results[0].stale == 2
        assert any("2 notes changed" in w and "database or disk is full" in w for w in results[0].warnings)

        monkeypatch.setattr(service_module, "index_vault", real)  # room again: the next change is indexed
        write(toy_vault, "Inbox/Three.md", "# Three\n\nagent memory\n")
        settled(daemon, "Inbox/Three.md")
        results = daemon.service.ask(QUESTION, ["vector"], RecallSettings())
        assert results[0].stale == 0 and results[0].warnings == []


def test_a_failed_pass_is_no_longer_said_once_an_index_from_outside_brings_it_level(toy_vault, monkeypatch):
    # `brain index --repair` (or `brain index` once the disk has room) made the index level: every
    # answer went on telling the user to repair it until the next change in the vault.
    from brain.errors import NoSpaceError
    from brain.server import service as service_module

    _index(toy_vault)

    def disk_full(*args, **kwargs):
        raise NoSpaceError("no room left to write the index (database or disk is full)")

    monkeypatch.setattr(service_module, "PROBE_EVERY", 0.1)
    with served(toy_vault) as daemon:
        monkeypatch.setattr(service_module, "index_vault", disk_full)
        write(toy_vault, "Inbox/One.md", "# One\n\nabout agent memory\n")
        settled(daemon, "Inbox/One.md")
        assert daemon.service.ask(QUESTION, ["vector"], RecallSettings())[0].stale == 1
        _index(toy_vault)  # the user's own `brain index`, in another process
        wait_until(lambda: daemon.service.unindexed is None, 20, "the server to see the index level")
        results = daemon.service.ask(QUESTION, ["vector"], RecallSettings())
        assert results[0].stale == 0 and results[0].warnings == []


def test_files_created_and_deleted_before_a_pass_are_not_counted_as_changed_notes(toy_vault):
    # An editor's swap files, made and removed while the watcher gathered changes: answers said
    # "6 notes changed" for one.
    _index(toy_vault)
    with served(toy_vault, settle_ms=4000) as daemon:  # changes wait to be gathered, unserved
        watcher = daemon.service.watcher
        write(toy_vault, "One.md", "# One\n\nabout agent memory\n")
        for i in range(5):
            swap = write(toy_vault, f"swap{i}.md", "x")
            wait_until(lambda i=i: f"swap{i}.md" in watcher.pending_paths(), 10, "the swap file to be seen")
            swap.unlink()
        assert watcher.pending == 6 and not watcher._running
        results = daemon.service.ask(QUESTION, ["vector"], RecallSettings())
        assert results[0].stale == 1 and any("1 note changed since" in w for w in results[0].warnings)


def test_a_server_that_cannot_open_the_index_on_a_full_disk_says_so_in_one_line(toy_vault, monkeypatch):
    # SQLite cannot make its -shm file on a disk with no room: the server's start was a bare
    # sqlite3 "disk I/O error" (a traceback in the foreground; --detach pointed at a log the
    # full disk had left empty).
    import sqlite3

    from conftest import FakeEmbedder

    from brain.errors import NoSpaceError
    from brain.index import store_open

    _index(toy_vault)
    real = store_open.connect

    def connect(path: str, *args, **kwargs):
        if path.endswith("index.db"):
            exc = sqlite3.OperationalError("disk I/O error")
            exc.sqlite_errorname = "SQLITE_IOERR_SHMSIZE"  # type: ignore[attr-defined]
            raise exc
        return real(path, *args, **kwargs)

    monkeypatch.setattr(store_open, "connect", connect)
    daemon = Daemon(toy_vault.resolve(), Service(toy_vault.resolve(), embedder=FakeEmbedder(), watch=False))
    with pytest.raises(NoSpaceError, match="no room left to write the index"):
        daemon.start()
    assert not runtime.lock_is_held(toy_vault.resolve())


def test_detach_says_why_a_server_failed_to_start_not_only_where_its_log_is(toy_vault, monkeypatch):
    # A failure that is no BrainError went to the log alone, and the log may be what cannot be
    # written (a full disk): "see the log" then pointed at an empty file.
    from brain.server import daemon as daemon_module

    def broken(*args, **kwargs):
        raise OSError(28, "No space left on device")

    monkeypatch.setattr(daemon_module, "run_foreground", broken)
    code, message = daemon_module.run_detached(toy_vault.resolve(), http=None)
    assert code == 1
    assert "No space left on device" in message, message


def test_detach_whose_log_cannot_be_made_says_why_not_see_the_log(toy_vault, monkeypatch, tmp_path):
    # BRAIN_HOME where no folder can be made (under a file, /proc): the foreground server says
    # so in one line, while --detach said "see the log: …/logs/serve.log", a log that cannot be.
    from brain.server import daemon as daemon_module

    (tmp_path / "a-file").write_text("")
    monkeypatch.setenv("BRAIN_HOME", str(tmp_path / "a-file" / "home"))
    code, message = daemon_module.run_detached(toy_vault.resolve(), http=None)
    assert code == 1
    assert "cannot make the folder" in message and "BRAIN_HOME (and BRAIN_DB) must lead to" in message, message
    assert "see the log" not in message, message


def test_a_socket_path_too_long_for_the_platform_goes_to_a_private_folder(toy_vault, monkeypatch):
    monkeypatch.setattr(runtime, "MAX_SOCKET_PATH", 10)
    _index(toy_vault)
    with served(toy_vault, watch=False) as daemon:
        folder = daemon.socket_path.parent
        assert folder.name == f"brain-{os.getuid()}" and stat.S_IMODE(os.stat(folder).st_mode) == 0o700
        assert runtime.read_record(daemon.root)["socket"] == str(daemon.socket_path)
        assert client.call(daemon.root, "ping", timeout=5)["pid"] == os.getpid()
    assert not daemon.socket_path.exists()


@pytest.mark.parametrize("taken_by", ["another user's folder", "a file", "a symlink"])
def test_a_long_path_socket_starts_when_another_user_took_the_tmp_name(toy_vault, monkeypatch, tmp_path, taken_by):
    """Anyone may make names in /tmp: another user who made <tmp>/brain-<uid> first (a folder,
    a file, a symlink) stopped every brain serve whose socket path is too long for the platform
    ("not a private folder"). It now listens in a folder made for it that nobody can take first,
    and serve.json says where."""
    import tempfile

    monkeypatch.setattr(runtime, "MAX_SOCKET_PATH", 10)
    short = Path(tempfile.mkdtemp(prefix="t", dir="/tmp"))  # sun_path is short: not tmp_path
    try:
        os.chmod(short, 0o1777)  # as /tmp is
        monkeypatch.setattr(tempfile, "tempdir", str(short))
        taken = short / f"brain-{os.getuid()}"
        if taken_by == "another user's folder":
            if os.geteuid() != 0:
                pytest.skip("only root can give a folder to another user")
            taken.mkdir(mode=0o755)
            os.chown(taken, 65534, 65534)
        elif taken_by == "a file":
            taken.write_text("theirs\n")
        else:
            taken.symlink_to(tmp_path)
        _index(toy_vault)
        with served(toy_vault, watch=False) as daemon:
            folder = daemon.socket_path.parent
            assert folder.parent == short and folder.name.startswith(f"brain-{os.getuid()}-")
            assert runtime.is_private(folder) and daemon.socket_path.is_socket()
            assert runtime.read_record(daemon.root)["socket"] == str(daemon.socket_path)
            asked = CliRunner().invoke(cli, ["ask", "--vault", str(toy_vault), "--json", QUESTION])
            assert asked.exit_code == 0, asked.output
            assert client.status(daemon.root)["queries"] == 1  # the server answered it
        assert not folder.exists()  # its folder goes with it
        assert sorted(p.name for p in short.iterdir()) == [taken.name]  # theirs, untouched
        assert taken_by != "a file" or taken.read_text() == "theirs\n"
    finally:
        shutil.rmtree(short)


def test_out_of_inotify_watches_it_polls_instead(toy_vault, monkeypatch, caplog):
    import watchfiles

    real = watchfiles.watch

    def limited(*paths, force_polling=None, **options):
        if not force_polling:
            raise OSError(28, "inotify watch limit reached")
        return real(*paths, force_polling=True, poll_delay_ms=50, **options)

    monkeypatch.setattr(watchfiles, "watch", limited)
    _index(toy_vault)
    with served(toy_vault) as daemon:
        wait_until(lambda: daemon.service.watcher.mode == "polling", 60, "polling")
        assert any("polling instead" in r.getMessage() for r in caplog.records)
        write(toy_vault, "Polled.md", "# Polled\n\nThe tapir note, seen by polling.\n")
        wait_until(lambda: "Polled.md" in _paths(daemon), 30, "the polled change")


def test_after_an_edit_the_new_snapshot_takes_over_the_names_and_link_graph(toy_vault):
    """A save that changes no names or links does not rebuild them (recall/carry.py); one that
    adds a link gets a graph with it."""
    _index(toy_vault)
    with served(toy_vault) as daemon:
        before = daemon.service._snapshot
        assert before is not None
        graph, names = before.recaller.link_graph(), before.recaller.name_index()
        note = toy_vault / "AI" / "Agent memory.md"
        note.write_text(note.read_text(encoding="utf-8") + "\nThe capybara clause applies.\n", encoding="utf-8")
        settled(daemon, "AI/Agent memory.md")
        after = daemon.service._snapshot
        assert after is not before and "AI/Agent memory.md" in {hit["path"] for hit in _hits(daemon, "capybara")}
        assert after.recaller.link_graph() is graph and after.recaller.name_index() is names
        assert after.folders is before.folders
        note.write_text(note.read_text(encoding="utf-8") + "\nSee [[Sourdough bread]].\n", encoding="utf-8")
        settled(daemon, "AI/Agent memory.md")
        linked = daemon.service._snapshot.recaller.link_graph()
        assert linked is not graph and linked.edges == graph.edges + 1


def test_a_stopped_server_leaves_its_names_and_graph_for_the_next_start(toy_vault, caplog):
    """The next start takes them over (recall/cache.py) instead of building them again."""
    import logging

    from brain.index.files import RECALL_CACHE_FILE

    _index(toy_vault)
    kept = config.index_dir(toy_vault) / RECALL_CACHE_FILE
    with served(toy_vault) as daemon:
        graph_edges = daemon.service._snapshot.recaller.link_graph().edges
        assert not kept.exists()
    assert kept.exists()
    written = kept.stat().st_mtime_ns
    caplog.set_level(logging.INFO, logger="brain")
    with served(toy_vault) as daemon:
        said = [r.getMessage() for r in caplog.records if "from the last run" in r.getMessage()]
        assert said and said[0].endswith("names, name index, folder index, link graph"), said
        assert daemon.service._snapshot.recaller.link_graph().edges == graph_edges
    assert kept.stat().st_mtime_ns == written  # the same state: not written again


def test_a_lone_surrogate_in_a_query_reaches_the_server(toy_vault):
    """A prompt's JSON may hold "\\ud800" alone (the prompt hook passes it on as it came): the
    request is sent, not failed as a server that did not answer, and the server answers."""
    _index(toy_vault)
    message = protocol.request("ask", str(toy_vault), query="agent \ud800 memory")
    assert json.loads(protocol.encode(message))["query"].startswith("agent ")
    with served(toy_vault, watch=False) as daemon:
        results = client.ask(daemon.root, "agent \ud800 memory", ["hybrid"], RecallSettings(k=3), timeout=30)
        assert len(results[0].results) == 3


def test_a_vault_whose_path_is_not_utf8_is_answered_by_its_server(toy_vault, tmp_path):
    """A request names its vault as JSON, which holds no byte of a path that is not UTF-8 ("caf\xe9"
    from a Latin-1 system): it went as "caf?", the server answered wrong_vault, and every client
    (`brain ask`, the prompt hook, `brain mcp`) answered in-process, the server running unused."""
    vault = tmp_path / os.fsdecode(b"caf\xe9")
    shutil.copytree(toy_vault, vault)
    _index(vault)
    with served(vault, watch=False) as daemon:
        assert client.call(daemon.root, "ping", timeout=30)["pid"] == os.getpid()
        results = client.ask(daemon.root, "agent memory", ["hybrid"], RecallSettings(k=3), timeout=30)
        assert len(results[0].results) == 3


def test_a_touched_note_dated_by_its_mtime_is_served_with_the_new_date(toy_vault):
    """Same bytes, new mtime: the index takes the new date (a note without a date field is
    dated by its mtime), and the server serves it, where it had kept the state it loaded."""
    import os

    write(toy_vault, "Okapi.md", "# Okapi\n\nThe okapi procedure, with no date field.\n")
    os.utime(toy_vault / "Okapi.md", (1_735_689_600, 1_735_689_600))  # 2025-01-01
    _index(toy_vault)
    with served(toy_vault) as daemon:
        assert _top(daemon, "okapi procedure")["date"].startswith("2025-01-01")
        os.utime(toy_vault / "Okapi.md", (1_782_864_000, 1_782_864_000))  # 2026-07-01
        settled(daemon, "Okapi.md")
        wait_until(lambda: _top(daemon, "okapi procedure")["date"].startswith("2026-07-01"), 20, "the new date")
        assert daemon.service.status()["last_update"]["redated"] == 1


def test_a_vault_whose_path_is_not_utf8_is_indexed_again_by_rescans_not_watched_in_a_loop(tmp_path, caplog):
    # watchfiles takes only UTF-8 paths: it failed on each try, polling too, and the watcher
    # logged a traceback every 5 s for good while no change was ever picked up.
    from brain.server.watcher import VaultWatcher

    vault = tmp_path / os.fsdecode(b"caf\xe9")
    write(vault, "a.md", "# A\n")
    reasons: list[str] = []
    watcher = VaultWatcher(vault, lambda batch: reasons.append(batch.reason), rescan_seconds=0.3)
    watcher.start()
    try:
        wait_until(lambda: reasons.count("rescan") >= 2, timeout=10)
    finally:
        watcher.stop()
    assert reasons[0] == "start" and watcher.mode == "rescans"
    assert not [r for r in caplog.records if r.levelname == "ERROR"]
    assert any("its path is not UTF-8" in r.getMessage() for r in caplog.records)


@pytest.mark.skipif(os.name == "nt", reason="symlinks need privileges on Windows")
@pytest.mark.parametrize("to", ["an empty folder", "nowhere"])
def test_a_symlinked_folder_pointed_elsewhere_takes_its_notes_out(toy_vault, tmp_path, to):
    """`ln -sfn` on a folder linked into the vault: only the link is reported. Pointed at a
    folder with notes it was a pass; at an empty folder or nowhere, its old notes stayed
    served until the five-minute rescan."""
    kept = tmp_path / "kept"
    write(kept, "Zebra.md", "# Zebra\n\nThe quagga herd crosses the river.\n")
    (tmp_path / "empty").mkdir()
    os.symlink(kept, toy_vault / "Linked")
    _index(toy_vault)
    with served(toy_vault) as daemon:
        assert "Linked/Zebra.md" in _paths(daemon)
        swap = toy_vault / "Linked.tmp"  # as ln -sfn does it: a new link renamed over the old
        os.symlink(tmp_path / "empty" if to == "an empty folder" else tmp_path / "gone", swap)
        os.replace(swap, toy_vault / "Linked")
        settled(daemon, "Linked/")
        assert "Linked/Zebra.md" not in _paths(daemon)


def test_a_folder_a_thousand_deep_moved_in_is_news_not_a_recursion_error(tmp_path, deep_folder):
    """The watcher looks through a folder moved in for a note (os.walk, which before Python
    3.12 recursed once a level): one 1,100 deep failed the watch, which fell back to polling."""
    from watchfiles import Change

    from brain.server.watcher import VaultWatcher

    vault = tmp_path / "vault"
    write(deep_folder(vault / "Moved", 1100), "Deep.md", "# Deep\n")
    watcher = VaultWatcher(vault, lambda batch: None)
    # CPU seconds of this thread: the machine's load is not in them, nor (process_time, as it
    # was) what the other threads of this process spend meanwhile, a server a test left winding down
    started = time.thread_time()
    assert watcher._relevant([(Change.added, str(vault / "Moved"))]) == {"Moved/"}
    # Each level asked its name of every folder above it again: 3.1 s, 0.06 s now.
    assert time.thread_time() - started < 1.0


def test_a_deep_folder_moved_in_is_looked_through_once_a_level(tmp_path, deep_folder, monkeypatch):
    """Looking for a note in a folder moved in, the watcher asked .brainignore of each folder
    and every folder above it, again at each level: a folder d deep cost d²/2 rule checks
    (1,100 deep: 3 s of the watcher's thread). It asks each entry once, and answers as before:
    a note under a folder the rules or a dot leave out is no news."""
    from watchfiles import Change

    from brain.server.watcher import VaultWatcher

    vault = tmp_path / "vault"
    write(vault, ".brainignore", "Skipped/\n")
    deep = deep_folder(vault / "Moved", 300)
    write(deep, "Deep.md", "# Deep\n")
    for hidden in ("Skipped", ".dot"):
        write(deep_folder(vault / "Hidden" / "d" / hidden, 50), "Deep.md", "# Deep\n")
    watcher = VaultWatcher(vault, lambda batch: None)
    asked: list[str] = []
    real = vault_module.IgnoreRules.match
    monkeypatch.setattr(vault_module.IgnoreRules, "match", lambda rules, rel: asked.append(rel) or real(rules, rel))
    assert watcher._relevant([(Change.added, str(vault / "Moved"))]) == {"Moved/"}
    assert 300 <= len(asked) <= 310, len(asked)  # once a level (45,000 times before)
    assert len(set(asked)) == len(asked)
    assert watcher._relevant([(Change.added, str(vault / "Hidden"))]) == set()
    write(vault / "Hidden" / "d", "Seen.md", "# Seen\n")
    assert watcher._relevant([(Change.added, str(vault / "Hidden"))]) == {"Hidden/"}


def test_an_edit_of_brainignore_saved_in_another_case_is_news(tmp_path, monkeypatch):
    """macOS and Windows name the file in events as it was saved (`.BrainIgnore`), which brain
    reads as .brainignore there: its edit was taken for a dot-file's and woke nothing, and
    brain serve kept serving the notes the new rules leave out."""
    from watchfiles import Change

    from brain.server import watcher as watcher_module
    from brain.server.watcher import VaultWatcher

    vault = tmp_path / "vault"
    saved = write(vault, ".BrainIgnore", "Private/\n")
    loaded = []
    monkeypatch.setattr(watcher_module, "load_ignore", lambda root: loaded.append(root) or vault_module.IgnoreRules())
    watcher = VaultWatcher(vault, lambda batch: None)
    loaded.clear()
    assert watcher._wakes(Change.modified, str(saved))
    assert watcher._relevant([(Change.modified, str(saved))]) == {".BrainIgnore"} and loaded == [vault]
    assert not watcher._wakes(Change.modified, str(vault / ".obsidian" / "workspace.json"))


def test_serve_help_says_where_the_socket_is(toy_vault):
    # The help said the socket was "in the vault's index folder"; it is beside it, in a folder
    # of its own (a --rebuild swaps the index folder whole, and the server stays reachable).
    said = " ".join(CliRunner().invoke(cli, ["serve", "--help"]).output.split())
    assert "in the vault's index folder" not in said
    assert "beside the vault's index ($BRAIN_HOME/vaults/<name>-<hash>.serve/" in said
    index, folder = config.index_dir(toy_vault), runtime.runtime_dir(toy_vault)
    assert folder.parent == index.parent and folder.name == index.name + ".serve"


def test_a_question_the_server_took_and_gave_up_on_is_not_asked_again(toy_vault, monkeypatch):
    """``busy`` also answers a question the server took and did not answer within its grace
    (``Service.run``: a question still running on the query thread, which goes on), not only one
    refused for want of a place; the client took both for "nothing was asked" and sent the
    question again (up to 8 times for brain ask, with BRAIN_SERVE_TIMEOUT over the grace), each
    queued behind the one still running. Only a refusal before any question is asked again."""
    from brain.recall.pipeline import Recaller
    from brain.server import service as service_module

    _index(toy_vault)
    monkeypatch.setattr(service_module, "QUERY_GRACE", 0.3)
    ran, compare = [], Recaller.compare

    def slow(self, *args, **kwargs):
        ran.append(time.monotonic())
        time.sleep(1.0)  # past the grace: the server says busy while this goes on
        return compare(self, *args, **kwargs)

    monkeypatch.setattr(Recaller, "compare", slow)
    with served(toy_vault, watch=False) as daemon:
        with pytest.raises(client.NoServer, match="busy"):
            client.ask(daemon.root, QUESTION, ["hybrid"], RecallSettings(k=3), update=False, timeout=10, tries=8)
        # any question sent again was queued behind the first, before this: run by the time it is
        queries_done(daemon)  # (it slept 1.5 s for it)
    assert len(ran) == 1, f"the question ran {len(ran)} times for one ask"
