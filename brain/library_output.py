"""What the model libraries say while a model loads: kept off stderr, in brain's log, and read.

transformers, huggingface_hub and sentence-transformers log to stderr through handlers of their
own: a folder whose config.json did not fit its weights printed transformers' load report (a
table of MISMATCH rows and its "Notes:") above brain's one-line error, and a partial download in
the hub cache "Could not reach the Hub ...". Around a load their records and Python's warnings are
kept and logged at INFO on brain's logger (`serve.log`, `mcp.log`; not a command's stderr), and
the load report is read: a weight missing from the checkpoint is filled at random by transformers,
so a model short of weights embeds (or scores) as noise that looks like vectors.
"""

from __future__ import annotations

import logging
import re
import warnings
from collections.abc import Iterator
from contextlib import contextmanager

log = logging.getLogger("brain")

LIBRARY_LOGGERS = ("transformers", "huggingface_hub", "sentence_transformers")
_ANSI = re.compile(r"\x1b\[[0-9;]*m")


class _Keep(logging.Handler):
    def __init__(self, said: list[str]):
        super().__init__(logging.DEBUG)
        self.said = said

    def emit(self, record: logging.LogRecord) -> None:
        try:
            self.said.append(_ANSI.sub("", record.getMessage()))
        except Exception:  # noqa: BLE001 - a record that cannot be formatted is not worth a load
            self.said.append(str(record.msg))


@contextmanager
def kept(said: list[str], kind: str, model_name: str) -> Iterator[None]:
    """The libraries' log records and Python's warnings inside the block appended to ``said``
    (not printed), then logged at INFO on brain's logger; their handlers restored after. Enter it
    after the libraries are imported: transformers adds its stderr handler on its first import."""
    keep = _Keep(said)
    saved = []
    for name in LIBRARY_LOGGERS:
        logger = logging.getLogger(name)
        saved.append((logger, logger.handlers[:], logger.propagate))
        logger.handlers = [keep]
        logger.propagate = False  # brain's own handlers, or the root's, would print it
    try:
        with warnings.catch_warnings(record=True) as caught:
            warnings.simplefilter("default")  # each once, as Python shows them
            try:
                yield
            finally:
                said.extend(f"{w.category.__name__}: {w.message}" for w in caught)
    finally:
        for logger, handlers, propagate in saved:
            logger.handlers = handlers
            logger.propagate = propagate
        for line in said:
            log.info("loading the %s model %s, the library said: %s", kind, model_name, line)


def _rows(said: list[str], status: str) -> list[list[str]]:
    """The load report's rows of ``status`` (transformers 5: ``key | STATUS | details``)."""
    rows = []
    for message in said:
        if "LOAD REPORT" not in message:
            continue
        for line in message.splitlines():
            cells = [cell.strip() for cell in line.split("|")]
            if len(cells) >= 2 and cells[1] == status:
                rows.append(cells)
    return rows


def _newly_initialized(said: list[str]) -> list[str]:
    """transformers 4's way of saying it: "Some weights of X were not initialized from the model
    checkpoint at Y and are newly initialized: ['a', 'b']"."""
    found: list[str] = []
    for message in said:
        if "newly initialized" in message and "not initialized from the model checkpoint" in message:
            found.extend(re.findall(r"'([^']+)'", message.split("newly initialized", 1)[1].split("\n", 1)[0]))
    return found


def weights_problem(said: list[str], variable: str, *, unused: tuple[str, ...] = ()) -> str | None:
    """Why the model just loaded (or not) cannot be used, from what transformers said: weights
    its checkpoint lacks (filled at random) or holds in another size than its config.json says;
    None if it said neither. ``unused``: modules the caller never runs, whose missing weights
    do no harm (a sentence-transformers embedder pools the tokens, never BERT's ``pooler``: many
    checkpoints are saved without it, and transformers said so on every load)."""
    fix = (
        "Copy the folder again from where the model came from, or download it again "
        f"(`huggingface-cli download ORG/NAME --local-dir FOLDER`), and set {variable} to that folder"
    )
    mismatched = sorted(_rows(said, "MISMATCH"))  # the report lists them in no fixed order
    if mismatched:
        first = mismatched[0]
        sizes = re.search(r"ckpt:\s*(?:torch\.Size\()?(\[[^\]]*\]).*model:\s*(?:torch\.Size\()?(\[[^\]]*\])", first[-1])
        shapes = f": {sizes[1]} in the weights file, {sizes[2]} by config.json" if sizes else ""
        return (
            f"its config.json does not fit its weights ({len(mismatched)} of another size, as {first[0]}{shapes}): "
            f"the config or the weights file is another model's. {fix}"
        )
    missing = sorted([row[0] for row in _rows(said, "MISSING")] or _newly_initialized(said))
    missing = [key for key in missing if not any(f".{module}." in f".{key}" for module in unused)]
    if missing:
        return (
            f"its weights file lacks {len(missing)} of its weights (as {missing[0]}), which transformers fills "
            f"at random: the model would run partly untrained, its vectors or scores noise. {fix}"
        )
    return None
