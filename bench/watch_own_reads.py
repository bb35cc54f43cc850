"""What brain's own reads of the vault cost `brain serve`'s watch (Linux; figures, not asserted).

inotify queues the events of every watched folder for the watch to read, at most
``fs.inotify.max_queued_events`` (16,384 on most systems) at once; past that it drops them. The
watch (watchfiles, over the Rust ``notify`` crate) asks for more kinds than it hands over: its
mask, read here from ``/proc/self/fdinfo``, holds ``IN_OPEN``, and watchfiles drops every
``Access`` event (an open among them) before Python sees it. So an index pass that opens notes
puts an event in the kernel's queue for each open, which the watcher never hears of.

A generated vault (bench/scale.py's, ``--notes``, 5,000 by default), indexed, then watched by
brain's ``VaultWatcher`` (counting every event watchfiles hands it, ``_wakes``) beside a raw
inotify watch of every folder with the same mask (counting what the kernel queues), over:

    level    an index pass with nothing changed (a stat walk)
    read     an index pass into a new index: every note read

    python bench/watch_own_reads.py                 # 5,000 notes in a temporary folder
    python bench/watch_own_reads.py --notes 20000
"""

from __future__ import annotations

import argparse
import collections
import ctypes
import os
import struct
import sys
import tempfile
import time
from pathlib import Path

HERE = Path(__file__).resolve().parent
sys.path.insert(0, str(HERE))
from scale import MODEL, BenchFakeEmbedder, generate  # noqa: E402 (this checkout's brain first)

IN_NONBLOCK = os.O_NONBLOCK
IN_ISDIR = 0x40000000
KINDS = {
    0x1: "access",
    0x2: "modify",
    0x4: "attrib",
    0x8: "close_write",
    0x10: "close_nowrite",
    0x20: "open",
    0x40: "moved_from",
    0x80: "moved_to",
    0x100: "create",
    0x200: "delete",
    0x4000: "overflow",
}


def watch_masks() -> int:
    """The union of the masks of this process's inotify watches (notify's, here)."""
    mask = 0
    for fd in os.listdir("/proc/self/fd"):
        try:
            if "inotify" not in os.readlink(f"/proc/self/fd/{fd}"):
                continue
            with open(f"/proc/self/fdinfo/{fd}") as info:
                for line in info:
                    if line.startswith("inotify wd:"):
                        mask |= int(line.split("mask:")[1].split()[0], 16)
        except OSError:
            continue
    return mask


class RawWatch:
    """Every folder of the vault watched with ``mask``: what the kernel queues, counted by kind."""

    def __init__(self, vault: Path, mask: int):
        self.libc = ctypes.CDLL(None, use_errno=True)
        self.fd = self.libc.inotify_init1(IN_NONBLOCK)
        if self.fd < 0:
            raise OSError(ctypes.get_errno(), "inotify_init1")
        for folder in [vault, *(p for p in vault.rglob("*") if p.is_dir())]:
            if self.libc.inotify_add_watch(self.fd, str(folder).encode(), mask) < 0:
                raise OSError(ctypes.get_errno(), f"inotify_add_watch {folder}")

    def drain(self) -> collections.Counter:
        seen: collections.Counter = collections.Counter()
        while True:
            try:
                buf = os.read(self.fd, 1 << 20)
            except BlockingIOError:
                return seen
            at = 0
            while at < len(buf):
                _, mask, _, length = struct.unpack_from("iIII", buf, at)
                at += 16 + length
                for bit, kind in KINDS.items():
                    if mask & bit:
                        seen[kind + (" (folder)" if mask & IN_ISDIR else "")] += 1

    def close(self) -> None:
        os.close(self.fd)


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--notes", type=int, default=5000)
    args = parser.parse_args()
    if not sys.platform.startswith("linux"):
        print("inotify is Linux's: nothing to measure here")
        return 0
    from brain.index.indexer import index_vault
    from brain.server.watcher import VaultWatcher

    with tempfile.TemporaryDirectory(prefix="brain-own-reads-") as tmp:
        work = Path(tmp)
        vault = work / "vault"
        generate(vault, args.notes)
        os.environ["BRAIN_HOME"] = str(work / "home")
        index_vault(vault, embedder=BenchFakeEmbedder(), model_name=MODEL, progress=False)

        handed = collections.Counter()
        batches: list = []
        watcher = VaultWatcher(vault, lambda batch: batches.append(batch) or 0, rescan_seconds=3600)
        wakes = watcher._wakes

        def counting(change, path: str) -> bool:
            handed[getattr(change, "name", str(change))] += 1
            return wakes(change, path)

        watcher._wakes = counting  # type: ignore[method-assign]
        watcher.start()
        try:
            deadline = time.monotonic() + 60
            while (watcher.mode != "events" or watcher.busy) and time.monotonic() < deadline:
                time.sleep(0.05)
            mask = watch_masks()
            said = ", ".join(f"{kind} {'yes' if mask & bit else 'no'}" for bit, kind in list(KINDS.items())[:6])
            print(f"the watch's inotify mask: {mask:#x} ({said})")
            raw = RawWatch(vault, mask)
            try:
                for what, home in (("level", work / "home"), ("read", work / "home-new")):
                    time.sleep(1.0)
                    raw.drain()
                    handed.clear()
                    before = len(batches)
                    os.environ["BRAIN_HOME"] = str(home)
                    started = time.perf_counter()
                    index_vault(vault, embedder=BenchFakeEmbedder(), model_name=MODEL, progress=False)
                    took = time.perf_counter() - started
                    time.sleep(1.5)  # the watcher's settle, and more
                    queued = raw.drain()
                    print(
                        f"{what}: a pass over {args.notes:,} notes ({took:.1f} s): the kernel queued "
                        f"{sum(queued.values()):,} events ({', '.join(f'{k} {v:,}' for k, v in sorted(queued.items()))}); "
                        f"the watcher was handed {sum(handed.values())} and ran {len(batches) - before} passes"
                    )
            finally:
                raw.close()
        finally:
            watcher.stop()
    return 0


if __name__ == "__main__":
    sys.exit(main())
