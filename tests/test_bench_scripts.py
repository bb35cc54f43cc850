"""bench/ scripts run to their end at their smallest size: a measuring tool that silently broke
measures nothing, and the README quotes their figures. bench/hook_scale.py stopped at its
prompt-hook check at every size (its stand-in server's runtime folder was not 0700) and
bench/brainignore_cost.py at its import (``reading.not_left_out`` was gone) with nobody the wiser,
since nothing ran them.

Each script here runs in a process of its own, as a user runs it, at the smallest size it takes
(seconds each: the rest of bench/ loads a model, serves a vault or builds an index of thousands of
notes, and is left to the hand that runs it), and must end with exit 0 having printed the lines
of its figures."""

from __future__ import annotations

import os
import subprocess
import sys
from pathlib import Path

import pytest
from bench_helpers import bench_script

ROOT = Path(__file__).resolve().parents[1]
BENCH = ROOT / "bench"
TOY = str(ROOT / "toy_vault")

# script, its arguments at the smallest size, lines (or their starts) its figures print
SCRIPTS: list[tuple[str, list[str], list[str]]] = [
    (
        "hook_scale.py",
        ["--turns", "200", "--runs", "1", "--session-prompts", "10"],
        ["whole process: brain hook prompt", "whole process: brain hook stop", "whole process: brain turns"],
    ),
    (
        "brainignore_cost.py",
        ["--notes", "50", "--folders", "5", "--patterns", "0", "10", "--repeat", "1"],
        ["50 notes in 5 folders", "patterns       load", "(median of 1;"],
    ),
    ("composed_and_narrow.py", [TOY], ["toy_vault: ", " notes read again by m023"]),
    ("block_reading.py", [TOY], ["toy_vault: ", " notes; m034 reads again "]),
    ("outline_speed.py", ["--lines", "2000", "--rounds", "1"], ['"every 10 lines"', '"new_s"']),
    (
        "deep_walk.py",
        ["--depth", "30", "--wide", "100", "--folders", "4", "--repeat", "1"],
        ["deep 30: walk ", "wide 100/4: walk ", "excluded() of the deepest note (30 folders)", ".brainignore "],
    ),
    ("hostile_cli.py", ["--only", "status vault="], ["6 cases, 0 failed"]),
    ("comment_headings.py", [TOY], ["toy_vault: ", " notes; m031 reads again "]),
    ("decoding_cost.py", [TOY, "--repeat", "1"], ["this tree: ", " reached the legacy rules"]),
    ("frontmatter_dates.py", [TOY], ["toy_vault: ", "notes with frontmatter; m024 reads again"]),
    ("hidden_text.py", [TOY], ["HTML comment outside code", "for_model: "]),
    ("hook_speed.py", ["--runs", "1", "--size-mb", "1"], ["brain hook stop : p50", "ratio (p50)     : "]),
    ("invisible_chars.py", [TOY], ["toy_vault: ", " holding one, "]),
    (
        "tree_speed.py",
        [
            "--old",
            str(ROOT),
            "--vault",
            str(BENCH / "minivault" / "vault"),
            "--queries",
            str(BENCH / "minivault" / "queries.jsonl"),
        ]
        + ["--rounds", "1", "--asks", "1", "--size-mb", "1"],
        ["warm ask p95 (per ask)", "brain status", "hook stop (1 MB transcript)", "index after 10 notes changed"],
    ),
    ("hostile_patterns.py", ["--stars", "4", "--give-up", "1"], ["inline code: runs"]),
    (
        "ledger_scale.py",
        ["--turns", "200", "--recalls", "200"],
        ["brain recalls --stats (14 days)", "Stop hook: the prompt recorded"],
    ),
    (
        "python_versions_start.py",
        [sys.executable, "--runs", "1"],
        ["  brain --help ", "  brain hook stop (fast path) ", " without subprocess: "],
    ),
    ("many_words.py", ["--sizes", "100", "--runs", "1"], ["   words   wall s    cpu s", "     100 "]),
    (
        "past_cjk_prefix.py",
        ["--notes", "30", "--queries", "20"],
        ["30 notes, 20 deleted or rewritten", "before: ", "now: ", "CPU now / before: "],
    ),
    ("past_fts_rebuild.py", [TOY, "--runs", "1"], ["toy_vault: ", "take, then carry: ", "CPU take-first"]),
    ("search_text.py", [TOY], ["toy_vault: ", "for_search: "]),
    ("self_tune.py", [TOY, "--out", "tuned", "--dry-run"], ["toy_vault: ", " link contexts (to ", "  anchor:   "]),
    ("serve_heal_cost.py", ["--calls", "100", "--repeat", "1"], ["nothing moved: ", "folder removed: "]),
    (
        "uninstall_backups_cost.py",
        ["--mb", "0.1", "--installs", "2", "--runs", "1"],
        ["~/.claude.json of 0.1 MB", "uninstall, backups read  median"],
    ),
]
if sys.platform.startswith("linux"):  # inotify's
    SCRIPTS.append(
        (
            "watch_own_reads.py",
            ["--notes", "50"],
            ["the watch's inotify mask: ", "level: a pass over 50 notes", "read: a pass over 50 notes"],
        )
    )


@pytest.mark.slow
@pytest.mark.parametrize(("script", "args", "lines"), SCRIPTS, ids=[s[0] for s in SCRIPTS])
def test_bench_script_runs_to_its_end(tmp_path, script, args, lines):
    env = {**os.environ, "BRAIN_HOME": str(tmp_path / "home"), "HF_HUB_OFFLINE": "1", "BRAIN_RERANK_MODEL": "none"}
    env.pop("BRAIN_DB", None)
    env["PYTHONPATH"] = os.pathsep.join([str(ROOT), *filter(None, [os.environ.get("PYTHONPATH")])])
    done = subprocess.run(
        [sys.executable, str(BENCH / script), *args],
        cwd=tmp_path,
        env=env,
        capture_output=True,
        text=True,
        timeout=300,
    )
    assert done.returncode == 0, done.stderr[-2000:]
    for line in lines:
        assert line in done.stdout, (line, done.stdout[-2000:])


def _mask_compare(tmp_path: Path, *args: str) -> subprocess.CompletedProcess[str]:
    return subprocess.run(
        [sys.executable, str(BENCH / "mask_compare.py"), "--old", str(ROOT), *args],
        cwd=tmp_path,
        capture_output=True,
        text=True,
        timeout=120,
    )


def test_mask_compare_says_so_when_it_finds_no_transcripts_nor_vaults(tmp_path):
    # Run from a copy under /tmp it found no ../shared, compared its --also files alone and said
    # "0 masked otherwise" as if over the whole corpus.
    also = tmp_path / "also"
    also.mkdir()
    (also / "a.env").write_text("PASSWORD=hunter22x\n")
    done = _mask_compare(tmp_path, "--shared", str(tmp_path / "nowhere"), "--also", str(also))
    assert done.returncode == 2, done.stdout
    assert "no transcripts (*.jsonl) in " + str(tmp_path / "nowhere") in done.stderr
    assert "masked otherwise" not in done.stdout
    (tmp_path / "shared" / "fixtures" / "claude-code").mkdir(parents=True)
    (tmp_path / "shared" / "fixtures" / "claude-code" / "t.jsonl").write_text('{"text": "hi"}\n')
    done = _mask_compare(tmp_path, "--shared", str(tmp_path / "shared"))
    assert done.returncode == 2, done.stdout
    assert "no vault files in " in done.stderr


def test_mask_compare_reads_what_it_is_told(tmp_path):
    shared = tmp_path / "shared"
    (shared / "fixtures" / "claude-code").mkdir(parents=True)
    (shared / "fixtures" / "claude-code" / "t.jsonl").write_text('{"text": "the password is hunter22x"}\n')
    (shared / "bench" / "vaults" / "v").mkdir(parents=True)
    (shared / "bench" / "vaults" / "v" / "n.md").write_text("# a note\n")
    done = _mask_compare(tmp_path, "--shared", str(shared))
    assert done.returncode == 0, done.stderr
    assert "4 texts (3 of transcripts, 1 of vaults, 0 of --also), 0 masked otherwise" in done.stdout
    done = _mask_compare(tmp_path, "--no-shared", "--also", str(shared / "bench"))
    assert done.returncode == 0, done.stderr
    assert "--no-shared: only " in done.stdout
    assert "1 texts (0 of transcripts, 0 of vaults, 1 of --also)" in done.stdout


def test_the_mask_benches_load_a_masker_of_one_file_or_a_package(tmp_path):
    # The masker was one file, brain/ledger/redact.py, until it was split into the package redact/: the
    # benches compare this checkout's (a package) with another's, of either layout, each loaded alone.
    old = tmp_path / "old"
    (old / "brain" / "ledger").mkdir(parents=True)
    (old / "brain" / "ledger" / "redact.py").write_text("def redact(text):\n    return text\n")
    shared = tmp_path / "shared"
    (shared / "fixtures" / "claude-code").mkdir(parents=True)
    (shared / "fixtures" / "claude-code" / "t.jsonl").write_text('{"text": "the password is hunter22x"}\n')
    (shared / "bench" / "vaults" / "v").mkdir(parents=True)
    (shared / "bench" / "vaults" / "v" / "n.md").write_text("# a note\n")
    compare = [sys.executable, str(BENCH / "mask_compare.py"), "--old", str(old), "--shared", str(shared)]
    done = subprocess.run(compare, cwd=tmp_path, capture_output=True, text=True, timeout=120)
    assert done.returncode == 0, done.stderr
    assert "4 texts (3 of transcripts, 1 of vaults, 0 of --also), 2 masked otherwise" in done.stdout
    imports = [sys.executable, str(BENCH / "mask_import.py"), "--old", str(old), "--rounds", "1"]
    done = subprocess.run(imports, cwd=tmp_path, capture_output=True, text=True, timeout=120)
    assert done.returncode == 0, done.stderr
    assert "import" in done.stdout and "all three" in done.stdout
    (old / "brain" / "ledger" / "redact.py").unlink()
    done = subprocess.run(compare, cwd=tmp_path, capture_output=True, text=True, timeout=120)
    assert done.returncode == 2 and "no brain/ledger/redact.py nor redact/ there" in done.stderr


# A brain of its own, in another checkout: every note one chunk under "Other", no link, no heading.
_OTHER_BRAIN = {
    "brain/__init__.py": "",
    "brain/index/__init__.py": "",
    "brain/index/parsing.py": (
        "from types import SimpleNamespace as N\n"
        "def parse_and_chunk(path, data, mtime):\n"
        "    return N(links=[], tags=[]), [N(heading_path=('Other',), text='other')], None\n"
    ),
    "brain/notes.py": "from types import SimpleNamespace as N\ndef parse_note(path, data, mtime):\n    return N(body='')\n",
    "brain/reading.py": "def headings(body):\n    return []\n",
}


@pytest.mark.parametrize("script", ["comment_headings.py", "block_reading.py"])
def test_old_brain_is_the_one_in_the_old_checkout_from_the_repositorys_root(tmp_path, script):
    """--old DIR reads the notes with DIR's brain, run from any folder: "python -c" puts the working
    folder first on sys.path, before PYTHONPATH, and run from a checkout's root (as a person runs
    bench/) the child read that checkout's brain, and found nothing read otherwise."""
    for name, text in _OTHER_BRAIN.items():
        (tmp_path / "old" / name).parent.mkdir(parents=True, exist_ok=True)
        (tmp_path / "old" / name).write_text(text, encoding="utf-8")
    done = subprocess.run(
        [sys.executable, str(BENCH / script), TOY, "--old", str(tmp_path / "old")],
        cwd=ROOT,
        capture_output=True,
        text=True,
        timeout=300,
    )
    assert done.returncode == 0, done.stderr[-2000:]
    notes = int(done.stdout.split("toy_vault: ")[1].split(" notes")[0])
    assert f"otherwise than by {tmp_path / 'old'}: {notes}" in done.stdout, done.stdout[:2000]


@pytest.mark.parametrize("label", ["", "prompt: "])
def test_chaos_tells_a_hook_its_watchdog_ended_from_one_that_lost_its_row(tmp_path, label):
    # bench/chaos.py read hook.log's "pid=N gave up after" to tell a hook its budget ended (no
    # row owed) from one that exited and lost its row; the prompt hook writes "pid=N prompt: gave
    # up after", so on a loaded machine chaos called its missing recalls row broken
    import time
    import types

    chaos = bench_script("chaos")
    home = tmp_path / "home"
    began = time.time()
    child = subprocess.Popen(
        [
            sys.executable,
            "-c",
            "import time\nfrom brain.ledger.hook import start_watchdog\n"
            f"start_watchdog(0.05, label={label!r})\ntime.sleep(30)\n",
        ],
        env={**os.environ, "BRAIN_HOME": str(home), "PYTHONPATH": str(ROOT)},
    )
    assert child.wait(timeout=60) == 0  # ended by its watchdog, as a hook is
    run = chaos.Run("hook", [], child, 0.0, began_at=began, ended_at=time.time())
    assert chaos.gave_up(chaos.hook_log(types.SimpleNamespace(home=home)), run)


def _hook_line(at: float, pid: int, text: str) -> str:
    from brain.ledger.store import utc_now

    return f"{utc_now(at)} pid={pid} {text}\n"


def test_chaos_reads_a_hooks_lines_in_the_moved_aside_log_and_not_those_of_another_process_with_its_pid(tmp_path):
    # chaos read hook.log alone, by pid alone, over the whole run: a hook.log moved to hook.log.1
    # (over 1 MB) hid a hook's "gave up" line, and its unowed row was called lost; a pid used
    # again (an earlier hook's, a catch-up's after) lent a hook another's "gave up" or partial
    # row, which hid a row it did lose. Its lines are its pid's stamped while it ran, both files.
    import types

    chaos = bench_script("chaos")
    logs = tmp_path / "home" / "logs"
    logs.mkdir(parents=True)
    t = 1_800_000_000.0
    partial = "out of time reading /t.jsonl: recorded a partial row, s1:partial:42"
    (logs / "hook.log.1").write_text(
        _hook_line(t + 1, 100, "gave up after 2 s")  # an earlier hook with pid 100
        + _hook_line(t + 1.5, 300, partial)  # an earlier hook with pid 300
        + _hook_line(t + 12, 200, "prompt: gave up after 2 s"),  # hook 200, its log moved aside after
        encoding="utf-8",
    )
    (logs / "hook.log").write_text(
        _hook_line(t + 13, 400, "catch-up: recorded 1 row")
        + _hook_line(t + 30, 500, "gave up after 2 s")  # a catch-up with pid 500 after the hook
        + _hook_line(t + 31, 600, partial.replace("s1:", "s6:")),
        encoding="utf-8",
    )
    lines = chaos.hook_log(types.SimpleNamespace(home=tmp_path / "home"))

    def run(pid: int, began: float, ended: float, turn: str = "s:turn") -> object:
        return chaos.Run(
            "hook", [], types.SimpleNamespace(pid=pid), 0.0, began_at=t + began, ended_at=t + ended, turn=turn
        )

    assert chaos.gave_up(lines, run(200, 10, 12.5))  # its line in hook.log.1
    assert not chaos.gave_up(lines, run(100, 10, 12.5))  # pid 100's line was an earlier hook's
    assert not chaos.gave_up(lines, run(500, 10, 12.5))  # and pid 500's a later process's
    assert chaos.partial_key(lines, run(300, 10, 12.5)) is None
    assert chaos.partial_key(lines, run(600, 29, 31.2)) == "s6:partial:42"
    fed: set[str] = set()
    assert not chaos.partial_turn(lines, run(300, 10, 12.5), fed) and not fed
    assert chaos.partial_turn(lines, run(600, 29, 31.2), fed) and fed == {"s6:partial:42"}
    # a stamp is cut to the millisecond: a line in the run's first millisecond is still its own
    assert chaos.gave_up(lines, run(500, 30.0004, 30.5))


def test_chaos_kills_the_server_s_pid_only_while_it_is_a_process_of_its_run(tmp_path):
    # chaos killed the server by the pid it recorded at its start: a server that had ended by
    # itself left that pid to whichever process got it next (another user of the machine's).
    import signal
    import types

    chaos = bench_script("chaos")
    state = types.SimpleNamespace(token="t-" + os.urandom(4).hex())
    sleep = [sys.executable, "-c", "import time; time.sleep(600)"]
    stranger = subprocess.Popen(sleep)
    mine = subprocess.Popen(sleep, env={**os.environ, "CHAOS_TOKEN": state.token})
    try:
        assert not chaos.kill_if_ours(state, stranger.pid, signal.SIGKILL)
        assert chaos.kill_if_ours(state, mine.pid, signal.SIGKILL)
        assert mine.wait(60) == -signal.SIGKILL and stranger.poll() is None
    finally:
        for process in (stranger, mine):
            process.kill()
            process.wait(60)
