"""A client and a server of two brains: after `pip install -U brain` a server started before keeps
running the old code while every new client asks it. An older server's results lacked keys the
new client shows (they were filled with defaults: a note's ``path_reused`` false, silently); a
newer server's extra keys made an older client's decoding fail and fall back in-process, silent
in `brain mcp`. A server names its results' shape in its record; a client of another shape
answers in-process and says so once, naming both brains and how to serve this one."""

from __future__ import annotations

import logging
import os
from pathlib import Path

import pytest
from click.testing import CliRunner
from conftest import FakeEmbedder
from index_helpers import index_into
from serve_helpers import served

from brain import __version__
from brain.cli import cli
from brain.recall.types import RecallSettings
from brain.server import client, protocol, runtime

QUESTION = "how should agent memory work"


def _index(vault: Path) -> None:
    index_into(Path(os.environ["BRAIN_HOME"]), vault, FakeEmbedder())


def _older_server(monkeypatch) -> None:
    """The record a server from before shapes writes: no ``shape``, an older brain."""
    read = runtime.read_record

    def older(root: Path) -> dict | None:
        record = read(root)
        if record is not None:
            record = {k: v for k, v in record.items() if k != "shape"} | {"brain": "0.0.9"}
        return record

    monkeypatch.setattr(runtime, "read_record", older)


def _newer_server(monkeypatch) -> None:
    """A server whose results have another shape than this client's (as if it ran newer code)."""
    read = runtime.read_record
    monkeypatch.setattr(
        runtime, "read_record", lambda root: (r := read(root)) and r | {"brain": "0.2.0", "shape": "3-0123abcd"}
    )


@pytest.mark.parametrize(
    ("other", "theirs"),
    [(_older_server, "brain 0.0.9, results of an older shape"), (_newer_server, "brain 0.2.0, results 3-0123abcd")],
)
def test_ask_of_a_server_of_another_brain_answers_in_process_with_one_warning(toy_vault, monkeypatch, other, theirs):
    _index(toy_vault)
    with served(toy_vault, watch=False) as daemon:
        other(monkeypatch)
        with pytest.raises(client.OtherBuild) as caught:
            client.ask(toy_vault.resolve(), QUESTION, ["vector"], RecallSettings(), timeout=10)
        assert theirs in str(caught.value) and f"this one (brain {__version__}, results {protocol.shape()})" in str(
            caught.value
        )
        run = CliRunner().invoke(cli, ["ask", "--vault", str(toy_vault), QUESTION])
        status = CliRunner().invoke(cli, ["status", "--vault", str(toy_vault)])
        assert client.status(toy_vault.resolve()) is not None  # still managed: status and stop read it
        assert daemon.service.queries == 0
    assert run.exit_code == 0 and run.stdout.strip(), run.output  # answered here
    warnings = [line for line in run.stderr.splitlines() if "WARNING" in line]
    assert len(warnings) == 1 and theirs in warnings[0], run.stderr
    assert f"`brain serve --vault {toy_vault.resolve()} --stop`, then start it again" in warnings[0]
    assert warnings[0].endswith("; answering in this process")
    line = next(x for x in status.stdout.splitlines() if x.startswith("server:"))
    assert line.startswith("server: up (") and theirs in line and "asks are answered without it" in line


def test_a_server_of_this_brain_s_shape_is_asked(toy_vault):
    _index(toy_vault)
    with served(toy_vault, watch=False) as daemon:
        assert runtime.read_record(toy_vault.resolve())["shape"] == protocol.shape()
        client.ask(toy_vault.resolve(), QUESTION, ["vector"], RecallSettings(), timeout=10)
        assert daemon.service.queries == 1 and client.other_build(toy_vault.resolve()) is None


def test_mcp_says_once_that_the_server_is_another_brain(toy_vault, monkeypatch, caplog, closing):
    _index(toy_vault)
    with served(toy_vault, watch=False) as daemon:
        _newer_server(monkeypatch)
        from brain.mcp.backend import Backend

        backend = closing(Backend(toy_vault.resolve(), embedder=FakeEmbedder(), watch=False))
        with caplog.at_level(logging.WARNING, logger="brain"):
            for _ in range(3):
                assert backend.call("note", note="Home")["path"] == "Home.md"
        assert daemon.service.queries == 0
    said = [r.getMessage() for r in caplog.records if "is another brain than this one" in r.getMessage()]
    assert len(said) == 1 and "brain 0.2.0, results 3-0123abcd" in said[0]


def test_the_prompt_hook_reads_what_it_can_of_another_brain_s_results(toy_vault, monkeypatch):
    """The hook never answers in-process: it reads another brain's results as far as they go, a
    key this brain does not know left out, one the server lacks given its default."""
    _index(toy_vault)
    encode = protocol.encode_result

    def other_keys(result):
        data = encode(result)
        data["results"] = [{k: v for k, v in c.items() if k != "path_reused"} | {"later": 1} for c in data["results"]]
        return data | {"later": []}

    with served(toy_vault, watch=False):
        _newer_server(monkeypatch)
        monkeypatch.setattr(protocol, "encode_result", other_keys)
        root = toy_vault.resolve()
        with pytest.raises(client.OtherBuild):
            client.ask(root, QUESTION, ["vector"], RecallSettings(), timeout=10)
        results = client.ask(root, QUESTION, ["vector"], RecallSettings(), timeout=10, any_shape=True)
    assert results[0].results and all(c.path_reused is False for c in results[0].results)
