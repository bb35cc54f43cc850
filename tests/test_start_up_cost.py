"""What starting brain costs, as contracts a fresh interpreter can check (modules imported,
patterns compiled), never as timings: bench/baseline_speed.py prints the times."""

from __future__ import annotations

import os
import subprocess
import sys
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]


def _fresh(code: str, stdin: bytes = b"", **env: str) -> str:
    """What ``code`` writes to stderr, run by a fresh interpreter importing this checkout."""
    base = {k: v for k, v in os.environ.items() if not k.startswith("BRAIN_")}
    base.update(PYTHONPATH=str(ROOT), **env)
    proc = subprocess.run([sys.executable, "-c", code], input=stdin, env=base, capture_output=True, timeout=60)
    assert proc.returncode in (0, 1, 2), proc.stderr.decode()
    return proc.stderr.decode()


def test_importing_brain_text_compiles_no_pattern():
    # Every command, both hooks and `brain --help` import brain.text; its character classes
    # beyond Latin-1 cost re ~0.3 ms each to compile, 4-5 ms for all of them on every start.
    code = (
        "import re, sys, brain\n"
        "compiled = []\n"
        "real = re.compile\n"
        "re.compile = lambda *a, **k: compiled.append(a[0]) or real(*a, **k)\n"
        "import brain.text\n"
        "sys.stderr.write(repr(compiled))\n"
    )
    assert _fresh(code) == "[]"


def test_the_masker_compiles_only_the_patterns_a_text_needs():
    # Both hooks import the masker on every call: its ~72 patterns compiled on import were ~11 ms of
    # the 18 ms of CPU the import took, for a turn that fires few of its rules or none. Each is
    # compiled where it is first used now, and the trigger scan's tables are built by the first text
    # masked; patterns given to re as strings are counted too.
    code = (
        "import re, sys\n"
        "compiled = set()\n"
        "real = re._compile\n"
        "re._compile = lambda p, f: compiled.add(getattr(p, 'pattern', p)) or real(p, f)\n"
        "from brain.ledger.redact import redact\n"
        "counts = [len(compiled)]\n"
        "plain = redact('Let us refactor the index store before the release; see notes/plan.md')\n"
        "counts.append(len(compiled))\n"
        "secret = redact('the db password is hunter22x, user bob')\n"
        "counts.append(len(compiled))\n"
        "sys.stderr.write(repr((plain, secret, counts)))\n"
    )
    plain, secret, (on_import, after_plain, after_secret) = eval(_fresh(code))
    assert (plain, secret) == (
        "Let us refactor the index store before the release; see notes/plan.md",
        "the db password is ***, user bob",
    )
    assert on_import == 0, on_import
    assert after_plain <= 3, after_plain  # the trigger scan's and the long tokens' test
    assert after_secret <= 20, after_secret


def test_the_hooks_leave_traceback_unimported(tmp_path):
    # brain.errors imported traceback (and textwrap) for bug_summary, which a hook calls only
    # on a bug of brain's: ~2 ms of every turn and every prompt.
    for hook in ("stop", "prompt"):
        code = (
            f"import sys; sys.argv = ['brain', 'hook', {hook!r}]\n"
            "import brain.__main__ as entry\n"
            "try:\n    entry.main()\nexcept SystemExit:\n    pass\n"
            "sys.stderr.write(repr(sorted(m for m in ('traceback', 'textwrap') if m in sys.modules)))\n"
        )
        assert _fresh(code, b"{}", BRAIN_HOME=str(tmp_path)) == "[]", hook


def test_the_hooks_import_neither_click_nor_what_click_imports(tmp_path):
    # click imports uuid (and with it platform; on 3.10 subprocess, select, selectors, signal):
    # the hooks bypass click on every turn and every prompt, on every Python.
    payload = b'{"session_id": "s", "cwd": "/tmp", "prompt": "how does the escalation die work"}'
    for hook in ("stop", "prompt"):
        code = (
            f"import sys; sys.argv = ['brain', 'hook', {hook!r}]\n"
            "import brain.__main__ as entry\n"
            "try:\n    entry.main()\nexcept SystemExit:\n    pass\n"
            "heavy = ('click', 'uuid', 'platform', 'subprocess', 'selectors')\n"
            "sys.stderr.write(repr(sorted(m for m in heavy if m in sys.modules)))\n"
        )
        assert _fresh(code, payload, BRAIN_HOME=str(tmp_path)) == "[]", hook


def test_help_leaves_the_output_module_unimported(tmp_path):
    # brain.output (with brain.moments, fractions, decimal, unicodedata) formats what a command
    # prints; the turns and recalls commands imported it at start-up, for `brain --help` too.
    code = (
        "import sys; sys.argv = ['brain', '--help']\n"
        "import brain.__main__ as entry\n"
        "try:\n    entry.main()\nexcept SystemExit:\n    pass\n"
        "sys.stderr.write(repr(sorted(m for m in ('brain.output', 'brain.moments', 'fractions') if m in sys.modules)))\n"
    )
    assert _fresh(code, BRAIN_HOME=str(tmp_path)) == "[]"


def test_an_ascii_prompt_compiles_no_cjk_class():
    # The prompt hook's split into words compiled three classes holding the CJK blocks on every
    # prompt (re fills them one character at a time: 8 ms of CPU); an ASCII prompt needs none.
    code = (
        "import re, sys\n"
        "compiled = []\n"
        "real = re.compile\n"
        "re.compile = lambda *a, **k: compiled.append(a[0]) or real(*a, **k)\n"
        "from brain.autorecall import select\n"
        "reasons = [select.skip_reason(p) for p in ('how does the escalation die work', 'ok thanks', 'fix')]\n"
        "sys.stderr.write(repr((reasons, [p for p in compiled if isinstance(p, str) and '\\u4e00' in p])))\n"
    )
    assert _fresh(code) == "([None, 'acknowledgement', 'too-short'], [])"


def test_checking_an_ask_of_the_present_leaves_brain_moments_unimported():
    # The client checks its own request (the prompt hook's too): reading as_of and valid_at
    # imported brain.moments (fractions, decimal, numbers) for requests that hold neither.
    code = (
        "import sys\n"
        "from brain.server import client, protocol\n"
        "protocol.check_request(protocol.request('ask', '/v', query='escalation die', modes=['hybrid+ppr']))\n"
        "sys.stderr.write(repr(sorted(m for m in ('brain.moments', 'fractions', 'shlex') if m in sys.modules)))\n"
    )
    assert _fresh(code) == "[]"


def test_reading_notes_leaves_the_latin_code_pages_unloaded_until_a_note_is_not_utf8():
    # The guess of a note's code page built its table on import: five codecs imported and a
    # class compiled for each, on every start of every command that reads notes.
    code = (
        "import sys\n"
        "from brain import notes\n"
        "pages = ('encodings.cp1250', 'encodings.cp1252', 'encodings.cp1257', 'encodings.iso8859_2')\n"
        "before = sorted(m for m in pages if m in sys.modules)\n"
        "text, how = notes.decode('Grüße aus Łódź, Żółw'.encode('cp1250'))\n"
        "sys.stderr.write(repr((before, text, how)))\n"
    )
    assert _fresh(code).startswith("([], 'Grüße aus Łódź, Żółw', ")


def _indexed(vault: Path) -> None:
    from brain.index.indexer import index_vault  # the fake embedder of conftest: this process's

    index_vault(vault, progress=False)


# On 3.10 click imports uuid, whose platform imports subprocess at its top (3.11's imports it where
# it is used): every click command there has subprocess (with select, selectors, signal, fcntl)
# before brain runs a line, so these checks cannot see brain import it there and do not ask. The
# cost is click's and small: `import subprocess` 3.3 ms of CPU on 3.10 (median of 30), under the
# noise of `brain --help` (87.6 ms of CPU on 3.10, 84.4 on 3.11; 10 interleaved runs); the hooks
# bypass click and import none of them on any version (bench/python_versions_start.py).
CLICKS_OWN = {"subprocess"} if sys.version_info < (3, 11) else set()


def _command_modules(argv: list[str], modules: tuple[str, ...], home: Path, **env: str) -> str:
    """``brain argv`` run by a fresh interpreter (``env`` added to its environment): its exit
    code and which of ``modules`` it imported (less what click imports on this Python)."""
    modules = tuple(m for m in modules if m not in CLICKS_OWN)
    code = (
        f"import sys; sys.argv = ['brain', *{argv!r}]\n"
        "import brain.__main__ as entry\n"
        "try:\n    entry.main()\nexcept SystemExit as exc:\n    code = exc.code\n"
        f"sys.stderr.write(repr((code, sorted(m for m in {modules!r} if m in sys.modules))))\n"
    )
    return _fresh(code, BRAIN_HOME=str(home), BRAIN_EMBED_MODEL="fake:64", **env)


def test_brain_status_imports_neither_the_indexer_nor_the_ledger_writers(toy_vault, brain_home):
    # `brain status` imported the indexer (and its embedding, chunking, parsing modules) for its
    # settings check and who holds the writer lock, the postings' and the merger's modules (and
    # subprocess) for which background work is under way, and the ledger's catch-up (brain.db,
    # its migrations, the transcript reader) to count the files kept aside: 30 ms of its start.
    # The walk helper imported pickle (a helper starts past 50,000 notes), and the time history
    # began was rounded with fractions (and decimal, numbers).
    _indexed(toy_vault)
    heavy = (
        "brain.index.indexer",
        "brain.index.postings",
        "brain.index.fts_merge",
        "brain.ledger.deferred",
        "brain.db",
        "subprocess",
        "pickle",
        "fractions",
    )
    assert _command_modules(["status", "--vault", str(toy_vault)], heavy, brain_home) == "(0, [])"


def test_brain_status_checks_the_settings_without_the_embedding_and_chunking_code(toy_vault, brain_home):
    # The settings check (index/settings_fit.py) read the model's backend and prefixes from
    # brain.embed, and config read BRAIN_CHUNKING's strategies from brain.chunking (its patterns
    # compiled on import): both are told by build_settings.py, a chunking the index was not
    # built with too (its `settings:` line).
    _indexed(toy_vault)
    argv, heavy = ["status", "--vault", str(toy_vault)], ("brain.embed", "brain.chunking")
    assert _command_modules(argv, heavy, brain_home) == "(0, [])"
    assert _command_modules(argv, heavy, brain_home, BRAIN_CHUNKING="windows") == "(0, [])"


def test_a_no_op_index_decides_on_a_postings_build_without_the_build_code(toy_vault, brain_home, monkeypatch):
    # Whether a pass is due to build a new base of the lexical postings was decided in
    # index/postings.py: a `brain index` with nothing to do imported its build and search code
    # (with brain.numeric, tokens, tempfiles) to read the base's header. postings_due.py decides;
    # with a base in place (BRAIN_LEXICAL_POSTINGS=1: from one chunk) and with postings off.
    from brain.index import background
    from brain.index.health import built_index_dir

    monkeypatch.setenv("BRAIN_LEXICAL_POSTINGS", "1")
    _indexed(toy_vault)
    background.wait_for_all(60)  # the base built in the background
    assert (built_index_dir(toy_vault) / "postings.bin").is_file()
    argv, heavy = ["index", "-q", "--vault", str(toy_vault)], ("brain.index.postings", "numpy")
    assert _command_modules(argv, heavy, brain_home, BRAIN_LEXICAL_POSTINGS="1") == "(0, [])"
    assert _command_modules(argv, heavy, brain_home, BRAIN_LEXICAL_POSTINGS="off") == "(0, [])"


def test_a_no_op_index_loads_neither_the_parser_nor_the_chunker_nor_the_model_code(toy_vault, brain_home):
    # A `brain index` with no note to read imported the parser (with pickle, subprocess and
    # concurrent.futures for its worker processes), the chunker, the embedding code and
    # brain.moments (a note's date): none of them had a note to work on.
    _indexed(toy_vault)
    heavy = ("brain.index.parsing", "brain.chunking", "brain.embed", "brain.moments", "pickle", "subprocess")
    assert _command_modules(["index", "-q", "--vault", str(toy_vault)], heavy, brain_home) == "(0, [])"


def test_status_and_a_no_op_index_leave_shutil_unimported(toy_vault, brain_home):
    # brain/index/rebuild.py imported shutil (which imports bz2 and lzma) to remove what a
    # rebuild left, and brain.output to ask the terminal's width for a result: `brain status`
    # and a `brain index` with nothing to do have neither to do.
    _indexed(toy_vault)
    for argv in (["status", "--vault", str(toy_vault)], ["index", "-q", "--vault", str(toy_vault)]):
        assert _command_modules(argv, ("shutil", "bz2", "lzma"), brain_home) == "(0, [])", argv


def test_brain_status_writes_its_lines_without_the_results_module(toy_vault, brain_home):
    # `brain status` imported brain.output, the formats of recall's results, for the two
    # one-line helpers that write a path (``literal``) and a cell of text (``in_column``): both
    # are brain.text's, which every command has imported already.
    _indexed(toy_vault)
    for argv in (["status", "--vault", str(toy_vault)], ["status", "--verbose", "--vault", str(toy_vault)]):
        assert _command_modules(argv, ("brain.output",), brain_home) == "(0, [])", argv


def test_a_no_op_index_compiles_no_script_pattern_and_maps_no_postings(toy_vault, brain_home):
    # brain.notes compiled the patterns of the Cyrillic, Greek, Hebrew and Arabic code pages on
    # import (classes beyond Latin-1: ~0.3 ms each), for a note that is not UTF-8; postings
    # imported mmap for reading a base: a `brain index` with nothing to do needs neither.
    _indexed(toy_vault)
    code = (
        "import re, sys\n"
        "compiled = []\n"
        "real = re.compile\n"
        "re.compile = lambda *a, **k: compiled.append(a[0]) or real(*a, **k)\n"
        f"sys.argv = ['brain', 'index', '-q', '--vault', {str(toy_vault)!r}]\n"
        "import brain.__main__ as entry\n"
        "try:\n    entry.main()\nexcept SystemExit as exc:\n    code = exc.code\n"
        "scripts = [p for p in compiled if isinstance(p, str) and any('\\u0370' <= c <= '\\u06ff' for c in p)]\n"
        "sys.stderr.write(repr((code, scripts, 'mmap' in sys.modules)))\n"
    )
    assert _fresh(code, BRAIN_HOME=str(brain_home), BRAIN_EMBED_MODEL="fake:64") == "(0, [], False)"
