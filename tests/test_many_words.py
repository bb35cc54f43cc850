"""`brain ask` given its query as many separate words (`brain ask $(cat notes.txt)`).

Click's parser takes the arguments one at a time from the front of a list, a cost growing with
the square of their number (0.7 s of CPU at 100,000 words: ``bench/many_words.py``); the command
hands it each run of words joined, which must read the same text and options as before.
"""

from __future__ import annotations

import click
import pytest
from click.testing import CliRunner

from brain import cli_support
from brain.cli import ask, cli


def test_the_parser_is_not_handed_every_word_of_a_long_query(monkeypatch, tmp_path):
    handed: list[int] = []
    parse_args = click.Command.parse_args

    def counting(self, ctx, args):
        if self.name == "ask":
            handed.append(len(args))
        return parse_args(self, ctx, args)

    monkeypatch.setattr(click.Command, "parse_args", counting)
    words = [f"w{i % 97}" for i in range(50_000)]
    result = CliRunner().invoke(cli, ["ask", "--vault", str(tmp_path / "missing"), *words, "-k", "5"])
    assert "vault not found" in result.output + result.stderr
    assert handed and max(handed) < 10, handed


ARGVS = [
    ["a", "b", "c"],
    ["-k", "5", "a", "b", "c"],
    ["a", "b", "-k", "5", "c", "d"],
    ["-k5", "a", "b"],
    ["-qk", "5", "a", "b"],
    ["--mode", "vector", "a", "b"],
    ["--mode=vector", "a", "b", "--json", "c", "d", "e"],
    ["a", "--", "-k", "5", "b", "c"],
    ["--json", "--", "a", "b"],
    ["a", "-", "b", "c"],
    ["", "a", "", "", "b"],
    ["--as-of", "7d", "x", "y", "--valid-at", "2026-01-01", "z", "w"],
    ["a", "b", "--no-server", "c", "--source", "s", "t", "u"],
]


def _parsed(argv: list[str], monkeypatch, *, joined: bool) -> dict:
    with monkeypatch.context() as m:
        if not joined:
            m.setattr(cli_support, "joined_words", lambda args: args)
        try:
            params = dict(ask.make_context("ask", list(argv)).params)
        except click.UsageError as exc:
            return {"error": exc.format_message()}
    params["query"] = " ".join(params["query"])
    return params


@pytest.mark.parametrize("argv", ARGVS, ids=[" ".join(argv) or "empty" for argv in ARGVS])
def test_words_joined_read_the_same_query_and_options(argv, monkeypatch):
    assert _parsed(argv, monkeypatch, joined=True) == _parsed(argv, monkeypatch, joined=False)


def test_runs_of_words_are_joined_after_their_first():
    assert cli_support.joined_words(["-k", "5", "a", "b", "c", "--json", "d", "e"]) == [
        "-k",
        "5",
        "a b c",
        "--json",
        "d",
        "e",
    ]
    assert cli_support.joined_words(["a", "b", "c"]) == ["a", "b c"]
    assert cli_support.joined_words(["a", "-", "b", "c"]) == ["a", "-", "b", "c"]
