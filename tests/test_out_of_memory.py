"""Out of memory (`ulimit -v`, a small container): one line, not Python's traceback.

Under `ulimit -v 150000` `brain index` of the 13th Age SRD (1,003 notes) died of a MemoryError
raised by an import, under 200000 of the loader's "failed to map segment from shared object"
(an ImportError from faiss's libraries): both printed their tracebacks. CI cannot lower the
limit reliably (where each fails depends on the build), so the command raises them here.
"""

from __future__ import annotations

import errno
import sys

import pytest

import brain.cli
from brain import __main__ as entry

resource = pytest.importorskip("resource")  # no `ulimit -v` on Windows

RAISED = {
    "memory": MemoryError(),
    "loader": ImportError("libgomp-e985bcbb.so.1.0.0: failed to map segment from shared object"),
    "fork": OSError(errno.ENOMEM, "Cannot allocate memory"),
}


def _run(monkeypatch, exc: BaseException) -> SystemExit:
    def cli(**_: object) -> None:
        raise exc

    monkeypatch.setattr(brain.cli, "cli", cli)
    monkeypatch.setattr(sys, "argv", ["brain", "index"])
    with pytest.raises(SystemExit) as done:
        entry.main()
    return done.value


@pytest.mark.parametrize("case", sorted(RAISED))
def test_out_of_memory_is_one_line_naming_the_limit(monkeypatch, case):
    monkeypatch.setattr(resource, "getrlimit", lambda _: (200 * 2**20, resource.RLIM_INFINITY))
    line = _run(monkeypatch, RAISED[case]).code
    assert isinstance(line, str) and "\n" not in line, line
    assert line.startswith("Error: out of memory (this process may use 200 MB, `ulimit -v`)"), line
    assert "resumes" in line, line


def test_out_of_memory_without_a_limit_says_the_machine_has_none_left(monkeypatch):
    monkeypatch.setattr(resource, "getrlimit", lambda _: (resource.RLIM_INFINITY, resource.RLIM_INFINITY))
    line = _run(monkeypatch, MemoryError()).code
    assert isinstance(line, str) and "ulimit" not in line and "no more to give" in line, line


@pytest.mark.parametrize(
    "exc", [ImportError("No module named 'torch'"), OSError(errno.EIO, "Input/output error"), ValueError("x")]
)
def test_other_failures_are_not_called_out_of_memory(monkeypatch, exc):
    def cli(**_: object) -> None:
        raise exc

    monkeypatch.setattr(brain.cli, "cli", cli)
    monkeypatch.setattr(sys, "argv", ["brain", "index"])
    with pytest.raises(type(exc)):
        entry.main()


@pytest.mark.parametrize(
    "exc",
    [
        OSError("unable to mmap 90868376 bytes from file <model.safetensors>: Cannot allocate memory (12)"),
        RuntimeError("Cannot allocate memory (os error 12)"),
        MemoryError(),
    ],
)
def test_a_model_load_out_of_memory_is_not_called_a_folder_that_is_no_model(tmp_path, monkeypatch, exc):
    """Under `ulimit -v 1000000` and 1100000 `brain index` with MiniLM said "… is a folder but not a
    loadable model; set BRAIN_EMBED_MODEL to a model folder": the model was sound, memory short."""
    from brain.embed import model_load_message

    monkeypatch.setattr(resource, "getrlimit", lambda _: (1_100_000 * 1024, resource.RLIM_INFINITY))
    line = model_load_message("embedding", str(tmp_path), "BRAIN_EMBED_MODEL", exc)
    assert "out of memory (this process may use 1074 MB, `ulimit -v`), not a fault of the model" in line, line
    assert "not a loadable model" not in line and "\n" not in line, line
