"""The names and the link graph of an index, kept on disk for the next process.

A `brain ask` without a server builds, for its first query, every note's names (the entity
gate), the names lane's index and the link graph: 2.1 s at 100,000 notes, and the next run
built the same again. Now a run that built them leaves them beside the index
(``recall-cache.npz``: numpy arrays, the names as one marshalled blob), stamped with what they
were built from (``carry.Basis``), and the next run takes over what is still valid exactly as
``brain serve`` does from one snapshot to the next (``recall/carry.py``): all of it when nothing
changed, the names and a patched graph after an edit. The folders lane's index (every note's
path, the folders a query can name, the paths' order) is kept too, marshalled, and taken over
while no note was added, deleted or renamed (``carry.paths_unchanged``: ``names_version``
moves with every path): read and built at every run's first query before. The file is derived: deleting it costs
the next run its build, nothing else. One that cannot be read, or is of another index, format,
code or link weights, is not used (said in the log); it is replaced atomically, and only by a
run whose notes did not change while it built (else its stamp could be older than its
contents).
"""

from __future__ import annotations

import logging
import marshal
import os
import zlib
from collections.abc import Callable
from pathlib import Path
from typing import Any

from .. import config
from ..index.files import RECALL_CACHE_FILE
from ..index.upgrades import replace_unless_newer
from .carry import Basis, Built

log = logging.getLogger("brain")

FORMAT = 3  # 2: the names with their holders (gate.name_table); the name index apart, with its titled part; 3: the folder index
# brain/text.py too: the names are folded by it (a new look-alike rule read old names otherwise)
_SOURCES = ("names.py", "stop_words.py", "gate.py", "ppr.py", "folders.py", "carry.py", "cache.py", "../text.py")


def code_stamp() -> int:
    """The CRC-32 of the code that builds and reads what is kept: another version's file is not used."""
    here = Path(__file__).resolve().parent
    crc = 0
    for name in _SOURCES:
        crc = zlib.crc32((here / name).read_bytes(), crc)
    return crc


def graph_settings() -> list[float]:
    """The link graph's weights (``BRAIN_PPR_*``): its matrix is kept only for these."""
    return [
        config.ppr_link_weight(),
        config.ppr_embed_weight(),
        config.ppr_backlink_weight(),
        config.ppr_hub_damping(),
    ]


def save(directory: Path, built: Built) -> bool:
    """Keep ``built`` in ``directory``; False (logged) when it cannot be written, or when a
    newer brain upgraded the index there since this process opened it (a `brain serve` or
    `brain mcp` that outlived the upgrade): that folder's files are the newer brain's."""
    import numpy as np

    from ..errors import BrainError

    try:
        refuse_what_is_in_the_way(directory)  # a user's folder or link there is never replaced
    except BrainError as exc:
        log.info("could not keep the names and link graph for the next run (%s)", exc)
        return False
    basis = built.basis
    arrays: dict[str, Any] = {
        "format": np.array(FORMAT),
        "code": np.array(code_stamp()),
        "stamp": np.array([basis.index_id or "", basis.names_version, _text(basis.link_fences)]),
        "note_ids": basis.note_ids,
        "written_at": basis.written_at,
        "titles": basis.titles,
    }
    if built.names is not None and built.holders is not None:
        arrays["names"] = np.frombuffer(marshal.dumps((built.names, built.holders)), dtype=np.uint8)
    index = marshal.dumps(built.name_index.state()) if built.name_index is not None else built.kept_name_index
    if index is not None:
        arrays["name_index"] = np.frombuffer(index, dtype=np.uint8)
    folders = built.folder_index
    if folders is not None and [n for n, _ in folders.notes] == basis.note_ids.tolist():
        arrays["folder_index"] = np.frombuffer(marshal.dumps(folders.state()), dtype=np.uint8)
    if built.link_graph is not None:
        arrays["graph_settings"] = np.array(graph_settings())
        arrays.update({f"graph_{k}": v for k, v in built.link_graph.arrays().items()})
    from ..index.tempfiles import remove_orphans, temp_name

    temporary = temp_name(directory, RECALL_CACHE_FILE)
    try:
        remove_orphans(directory, [RECALL_CACHE_FILE])
        try:
            with open(os.open(temporary, os.O_WRONLY | os.O_CREAT | os.O_EXCL, 0o600), "wb") as out:
                np.savez(out, **arrays)
            return replace_unless_newer(
                directory, [(temporary, directory / RECALL_CACHE_FILE)], "its names and link graph"
            )
        finally:
            temporary.unlink(missing_ok=True)  # renamed, or not to be
    except OSError as exc:
        log.info("could not keep the names and link graph for the next run (%s)", exc)
        return False


REMAKE = "the next `brain ask` keeps a new one in its place"


def refuse_what_is_in_the_way(directory: Path) -> None:
    """BrainError, one line, when a folder or a symbolic link stands where the kept file goes
    (``file_state.in_the_way``): no save replaces a folder (brain deletes none), and a save would
    drop a link; every run would build the names and the link graph again (2.1 s at 100,000
    notes), saying it in the log only. Refused, as at vectors.faiss: the command's one line."""
    from ..errors import BrainError
    from ..file_state import in_the_way

    said = in_the_way(
        directory / RECALL_CACHE_FILE, "the file of names and link graph brain keeps for the next run", REMAKE
    )
    if said:
        raise BrainError(said)


def kept_basis(directory: Path) -> Basis | None:
    """The stamp of what is kept in ``directory`` (None: nothing usable), without the rest."""
    kept = load(directory, lambda _basis: (False, False, False))
    return kept.basis if kept is not None else None


def load(directory: Path, worth: Callable[[Basis], tuple[bool, bool, bool]] | None = None) -> Built | None:
    """What a run kept in ``directory``, or None (no file, or one not to be used: logged).

    ``worth`` is shown the kept stamp first and says whether the names, the link graph and the
    folder index could be taken over at all: only those are read (unmarshalling the names of 100,000
    notes is 0.3 s, for nothing after a note was added). The name index is handed over as kept
    (``Built.kept_name_index``): read into an index when first asked for, not here."""
    import numpy as np

    path = directory / RECALL_CACHE_FILE
    refuse_what_is_in_the_way(directory)
    if not path.exists():
        return None
    if not path.is_file():  # a FIFO was waited on for a writer forever (`brain ask` hung)
        log.info("%s is not a regular file: not used", path)  # the next save replaces it
        return None
    try:
        with np.load(path, allow_pickle=False) as data:
            files = set(data.files)
            if int(data["format"]) != FORMAT or int(data["code"]) != code_stamp():
                log.info("%s was written by another version of brain: not used", path)
                return None
            index_id, names_version, fences = (str(x) for x in data["stamp"])
            basis = Basis(
                index_id=index_id or None,
                names_version=names_version,
                link_fences=_untext(fences),
                note_ids=data["note_ids"],
                written_at=data["written_at"],
                titles=data["titles"],
            )
            names = holders = kept_name_index = graph = folder_index = None
            want_names, want_graph, want_folders = worth(basis) if worth is not None else (True, True, True)
            if want_names and "names" in files:
                names, holders = marshal.loads(data["names"].tobytes())
                if not isinstance(names, dict) or not isinstance(holders, dict):
                    raise ValueError("the names are not a mapping")
            if want_names and "name_index" in files:  # read into an index when first asked for (Built)
                kept_name_index = data["name_index"].tobytes()
            if want_graph and "graph_note_ids" in files:
                from .ppr import LinkGraph

                arrays = {
                    k[len("graph_") :]: data[k] for k in files if k.startswith("graph_") and k != "graph_settings"
                }
                if not np.array_equal(arrays["note_ids"], basis.note_ids):
                    raise ValueError("the link graph is not of the notes it is stamped with")
                same_weights = data["graph_settings"].tolist() == graph_settings()
                graph = LinkGraph.from_arrays(arrays, matrix=same_weights)
            if want_folders and "folder_index" in files:
                from .folders import FolderIndex

                state = marshal.loads(data["folder_index"].tobytes())
                folder_index = FolderIndex.from_state(state, basis.note_ids.tolist())
    except Exception as exc:  # noqa: BLE001 - a derived file: rebuilt, never trusted when in doubt
        log.info("%s cannot be used (%s: %s); building afresh", path, type(exc).__name__, exc)
        return None
    return Built(
        basis=basis,
        names=names,
        name_index=None,
        link_graph=graph,
        holders=holders,
        kept_name_index=kept_name_index,
        folder_index=folder_index,
    )


def _text(value: str | None) -> str:
    return "" if value is None else "=" + value  # numpy drops trailing NULs: no sentinel of its own


def _untext(value: str) -> str | None:
    return value[1:] if value.startswith("=") else None
