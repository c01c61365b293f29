"""Giving back the pages of a memory-mapped file that this process has read.

LMDB reads through a shared mapping of ``data.mdb``: every page a read touched
stays in the process's resident set (``RssFile`` in ``/proc/<pid>/status``)
until the kernel needs the memory, so the RSS of a long-lived proxy grows with
how much of the store it has ever read, not with what it uses. py-lmdb does not
expose the map's address; ``/proc/self/maps`` does. ``madvise(MADV_DONTNEED)``
on a shared file mapping drops its pages from this process's page tables only:
the kernel's page cache keeps them (and writes back any dirty one), so the next
read of such a page is a minor fault (no disk read), and what LMDB reads is
unchanged (a shared file mapping is refilled from the file).

The caller must keep the mapping in place while this runs (no ``munmap`` or
remap of it by another thread): advising a range that was unmapped and reused
for other memory would discard that memory. ``LMDBEnv.release_pages`` holds its
transaction gate (which a map resize or a compaction waits for) and its close lock.

Linux only; elsewhere ``release`` does nothing and returns 0.
"""
from __future__ import annotations

import ctypes
import logging
import mmap
import os
import sys
import threading
import weakref
from typing import Callable

log = logging.getLogger(__name__)

_MADV_DONTNEED = getattr(mmap, "MADV_DONTNEED", 4)
_madvise: Callable[..., int] | None = None
if sys.platform.startswith("linux"):
    try:
        _libc = ctypes.CDLL(None, use_errno=True)
        _madvise = _libc.madvise
        _madvise.argtypes = (ctypes.c_void_p, ctypes.c_size_t, ctypes.c_int)
        _madvise.restype = ctypes.c_int
    except (OSError, AttributeError):  # no libc symbol: nothing to release with
        _madvise = None


def mappings(path: str) -> list[tuple[int, int]]:
    """Address ranges where this process maps the file ``path`` (its real path)."""
    real = os.path.realpath(path)
    out: list[tuple[int, int]] = []
    try:
        with open("/proc/self/maps", "rb") as f:
            maps = f.read()
    except OSError:
        return out
    want = os.fsencode(real)
    for line in maps.splitlines():
        if not line.endswith(want):
            continue
        fields = line.split(None, 5)
        if len(fields) == 6 and fields[5] == want:
            lo, hi = fields[0].split(b"-")
            out.append((int(lo, 16), int(hi, 16)))
    return out


def release(path: str) -> int:
    """Drop the resident pages of every mapping of ``path`` in this process from its
    page tables; the bytes of address space advised (0 where that is not possible)."""
    if _madvise is None:
        return 0
    done = 0
    for lo, hi in mappings(path):
        if _madvise(lo, hi - lo, _MADV_DONTNEED) == 0:
            done += hi - lo
        else:
            log.debug("madvise of %s failed: errno %d", path, ctypes.get_errno())
    return done


CHECK_EVERY = 0.1  # seconds between two looks at the process's file-backed resident memory (one read of
# /proc/self/statm; a busy proxy maps tens of MB of the store a second, so a look every 0.5 s let
# RSS swing by half that above the bound)
RELEASE_ABOVE = 8 << 20  # bytes of it gained since the last release that make the next one


def file_resident() -> int:
    """Bytes of file-backed (and shared) memory resident in this process (``/proc/self/statm``'s
    third field: one read, no walk of the mappings); 0 where that is not known."""
    try:
        with open("/proc/self/statm", "rb") as f:
            return int(f.read().split()[2]) * mmap.PAGESIZE
    except (OSError, ValueError, IndexError):
        return 0


class Releaser:
    """One daemon thread per process that looks at the process's file-backed resident
    memory every ``every`` seconds and, once it has grown by ``above`` bytes since
    the last release, calls ``release_pages()`` on every registered object (off the
    request path). Reading a page of a mapped file maps in its neighbours too (the
    kernel's fault-around, 64 KiB), so random reads of a large store make tens of
    MB resident a second: a release on a fixed timer would let that reach the size
    of the file; by the amount gained, it stays near ``above``. Objects are held
    weakly: one that is gone is dropped."""

    _instance: "Releaser | None" = None
    _instance_lock = threading.Lock()

    def __init__(self, every: float = CHECK_EVERY, above: int = RELEASE_ABOVE) -> None:
        self.every = every
        self.above = above
        self.releases = 0
        self._floor = file_resident()
        self._targets: "weakref.WeakSet" = weakref.WeakSet()
        self._lock = threading.Lock()
        self._wake = threading.Event()
        self.pid = os.getpid()
        self._thread = threading.Thread(target=self._run, name="ctxproxy-mapped-pages", daemon=True)
        self._thread.start()

    @classmethod
    def shared(cls) -> "Releaser":
        """The process's releaser (a fresh one in a forked child: threads do not cross fork)."""
        with cls._instance_lock:
            if cls._instance is None or cls._instance.pid != os.getpid():
                cls._instance = cls()
            return cls._instance

    def add(self, target: object) -> None:
        with self._lock:
            self._targets.add(target)

    def discard(self, target: object) -> None:
        with self._lock:
            self._targets.discard(target)

    def release_all(self) -> None:
        with self._lock:
            targets = list(self._targets)
        self.releases += 1
        for target in targets:
            try:
                target.release_pages()  # type: ignore[attr-defined]
            except Exception:  # never let one store's failure stop the others' releases
                log.debug("releasing mapped pages failed", exc_info=True)

    def check(self) -> bool:
        """One look: release if the file-backed resident memory grew by ``above`` since
        the last release (or since this releaser began); whether it did."""
        if file_resident() - self._floor < self.above:
            return False
        self.release_all()  # (its references to the targets end with the call)
        self._floor = file_resident()
        return True

    def _run(self) -> None:
        while True:  # a daemon thread: ends with the process
            self._wake.wait(self.every)
            self.check()
