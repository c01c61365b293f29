"""One LMDB environment per directory per process, and how transactions run.

Everything that touches ``lmdb`` directly lives here and in ``lmdb_store``;
``lmdb`` errors are translated to ``StoreError`` before they leave.

Processes and fork
    Several processes (``ctxproxy serve --workers N``) share one environment:
    LMDB allows many readers and one writer at a time, across processes. An
    environment must not cross ``fork()``: open the store in each worker
    after it forks, and close it in the parent before forking (or never open
    it there). py-lmdb refuses to open an environment that a forked child
    inherited, and a child must not use or close the parent's handles (they
    share the parent's reader slots); both cases raise a ``StoreError`` that
    says so. In one process, opening the same directory twice shares one
    environment (reference counted).

Durability
    A commit returns after its data pages and its meta page are on disk
    (``fdatasync``), so a write that returned survives a crash. LMDB never
    needs recovery: after ``kill -9`` the last committed transaction is intact
    and a dead writer's lock is released (robust mutex); stale reader slots are
    cleared when the store is opened.

    The one exception is asked for by name: ``commit(txn, durable=False)``
    (the background writer's groups of gathered writes, such as manifests,
    that nothing waits for) flushes the data pages and writes the meta page
    without flushing it. The environment is opened with ``metasync=False`` for
    that, and every other commit flushes the meta page itself (``sync``): the
    same two flushes as LMDB's own meta sync. Such a commit is whole at once
    for every reader and survives the process dying (the page cache has it);
    only a crash of the machine before the next flush can roll it back, never
    tear it (LMDB's meta page is written after the data it points to is on
    disk). The next commit of any kind flushes it, ``sync`` does, and the
    writer calls ``sync`` when it has nothing queued, before a flush returns
    and at close.

Compaction (erasure on disk)
    LMDB reuses freed pages but does not wipe them: bytes of deleted records
    stay in the file until overwritten. ``compact`` writes a compacted copy
    (live pages only), swaps it in for ``data.mdb`` and reopens the
    environment in place. Only safe when no other process has the
    environment open (their maps would keep the old file): every process
    holds a shared ``flock`` on ``holders.lock`` while it has the environment
    open, and ``compact`` runs only when it can turn its own into an exclusive
    one (compactors queue on ``compact.lock``); otherwise it returns False
    and the caller retries later (erasure receipts stay ``pending``).

Map size
    ``MapFullError`` grows the map (doubling, up to ``max_map_size``) and the
    transaction is run again; ``MapResizedError`` (another process grew it)
    adopts the new size and runs again. Resizing needs no live transaction in
    this process, so transactions hold a shared gate and resizing takes it
    exclusively.
"""
from __future__ import annotations

import fcntl
import os
import shutil
import threading
from typing import Any, Callable, Iterator, TypeVar

import lmdb

from . import mapped_pages
from .session_cache import SessionCache
from .encoding import load  # noqa: F401  (re-exported: the record loader every backend shares)
from .errors import StoreError, WriteNeeded
from .keys import SEP

T = TypeVar("T")
Op = Callable[[Any], T]  # a function of one transaction

_PAGE = 4096
_MAX_ATTEMPTS = 64  # doubling from 64 KiB reaches any sane max_map_size well before this


def _error(action: str, path: str, exc: BaseException) -> StoreError:
    return StoreError(f"store {action} failed at {path}: {type(exc).__name__}: {exc}")


_PID = [os.getpid()]  # this process's id, renewed after fork: checked on every transaction
os.register_at_fork(after_in_child=lambda: _PID.__setitem__(0, os.getpid()))


def _pid() -> int:
    return _PID[0]


class _Gate:
    """Shared/exclusive gate: many transactions, or one map resize.

    Re-entrant for shared holders (a batch holder may start a read), and a
    thread holding it shared cannot resize (that would wait on itself).
    """

    def __init__(self) -> None:
        self._cond = threading.Condition()
        self._active = 0
        self._resizing = False
        self._local = threading.local()

    def held(self) -> bool:
        return getattr(self._local, "depth", 0) > 0

    def enter(self) -> None:
        depth = getattr(self._local, "depth", 0)
        if depth == 0:
            with self._cond:
                while self._resizing:
                    self._cond.wait()
                self._active += 1
        self._local.depth = depth + 1

    def exit(self) -> None:
        depth = self._local.depth - 1
        self._local.depth = depth
        if depth == 0:
            with self._cond:
                self._active -= 1
                if self._active == 0 and self._resizing:  # only a resize waits for none active
                    self._cond.notify_all()

    def resize(self, fn: Callable[[], None]) -> None:
        if self.held():
            raise StoreError(
                "the store map must be resized, but this thread holds an open transaction; "
                "inside store.batch() use the batch's own repositories"
            )
        with self._cond:
            while self._resizing:
                self._cond.wait()
            self._resizing = True
            while self._active:
                self._cond.wait()
        try:
            fn()
        finally:
            with self._cond:
                self._resizing = False
                self._cond.notify_all()


class LMDBEnv:
    """An open environment with its named databases."""

    def __init__(
        self,
        path: str,
        *,
        db_names: tuple[str, ...],
        map_size: int,
        max_map_size: int,
        readonly: bool,
        max_readers: int,
    ) -> None:
        self.path = path
        self.readonly = readonly
        self.max_map_size = max_map_size
        self.pid = os.getpid()
        self.refs = 1
        self.closed = False
        self.closers: list[Callable[[], None]] = []  # run at close: files a repository keeps beside the env
        self._gate = _Gate()
        self.on_reopen: list[Callable[[], None]] = []  # run after compaction reopened the environment
        # Live sessions' records kept decoded, valid as of a transaction id; every commit
        # of this process goes through ``_commit`` so it stays valid (``session_cache``).
        self.session_cache = SessionCache()
        self._lazy = 0  # commits made without flushing their meta page (``durable=False``)
        self._flushed = 0  # how many of them a ``sync`` that began after them covered
        self._db_names = db_names
        self._max_readers = max_readers
        self._holder = _holder_lock(path, readonly)
        try:
            self.env = self._open_env(map_size)
        except BaseException:
            _unlock(self._holder)
            raise
        try:
            if not readonly:
                self.env.reader_check()  # free slots of readers that died (kill -9)
            self.dbs = self._open_dbs(db_names)
        except BaseException:
            self.env.close()
            _unlock(self._holder)
            raise
        # The pages of data.mdb this process read stay resident until given back:
        # every few seconds, off the request path (see mapped_pages).
        self._close_lock = threading.Lock()
        mapped_pages.Releaser.shared().add(self)

    def release_pages(self) -> int:
        """Drop the pages of the store's file this process has read from its resident
        set (the kernel's page cache keeps them); the bytes of address space advised.
        Under the transaction gate, which a remap (growing the map, compaction)
        waits for, and the close lock: the map stays where it is meanwhile."""
        if self.closed or self.pid != os.getpid():
            return 0
        with self._close_lock:
            if self.closed:
                return 0
            self._gate.enter()
            try:
                return mapped_pages.release(os.path.join(self.path, "data.mdb"))
            finally:
                self._gate.exit()

    def _open_env(self, map_size: int) -> Any:
        try:
            env = lmdb.open(
                self.path,
                map_size=_round_up(map_size),
                subdir=True,
                readonly=self.readonly,
                create=not self.readonly,
                mode=0o700,
                max_dbs=len(self._db_names) + 4,
                max_readers=self._max_readers,
                sync=True,
                metasync=False,  # the meta page is flushed by ``commit`` unless it is asked not to
                lock=True,
            )
            # This process's map size, kept here (``map_size``): only a resize in this process
            # changes it, and every one goes through ``_resized``. (LMDB takes the file's size
            # when it is larger than the one asked for.)
            self._map_size = env.info()["map_size"]
            return env
        except lmdb.Error as exc:
            raise _error("open", self.path, exc) from exc

    def _open_dbs(self, names: tuple[str, ...]) -> dict[str, Any]:
        if self.readonly:
            # Not inside our own read transaction: py-lmdb ends a read txn
            # without committing, which would discard the handles.
            try:
                return {n: self.env.open_db(n.encode(), create=False) for n in names}
            except lmdb.Error as exc:
                raise StoreError(
                    f"store at {self.path} is not initialised (open it read-write once): {exc}"
                ) from exc
        return self.write(lambda txn: {n: self.env.open_db(n.encode(), txn=txn) for n in names})

    # -- guards -------------------------------------------------------------

    def check(self, write: bool = False) -> None:
        if self.pid != _pid():
            raise StoreError(
                f"store at {self.path} was opened in process {self.pid} and cannot be used after "
                "fork(); call open_store() in each worker after it forks"
            )
        if self.closed:
            raise StoreError(f"store at {self.path} is closed")
        if write and self.readonly:
            raise StoreError(f"store at {self.path} is open read-only")

    # -- transactions -------------------------------------------------------

    def read(self, op: Op[T]) -> T:
        """Run ``op`` in a read transaction."""
        self.check()
        for _ in range(_MAX_ATTEMPTS):
            self._gate.enter()
            try:
                with self.env.begin() as txn:
                    return op(txn)
            except lmdb.MapResizedError:
                pass
            except lmdb.Error as exc:
                raise _error("read", self.path, exc) from exc
            finally:
                self._gate.exit()
            self.adopt_map()
        raise StoreError(f"store read at {self.path} kept failing: map resized repeatedly")

    def write(self, op: Op[T]) -> T:
        """Run ``op`` in a write transaction and commit (fsync) before returning.

        On a full map the transaction is aborted, the map grown and ``op`` run
        again from scratch, so ``op`` must only act through its transaction.
        """
        self.check(write=True)
        for _ in range(_MAX_ATTEMPTS):
            seen = self._map_size
            action = self._attempt_write(op)
            if action[0] == "done":
                return action[1]
            if action[0] == "grow":
                self.grow(seen)
            else:
                self.adopt_map()
        raise StoreError(f"store write at {self.path} kept failing: map full or resized repeatedly")

    def _attempt_write(self, op: Op[T]) -> tuple[str, Any]:
        self._gate.enter()
        try:
            try:
                txn = self.env.begin(write=True)
            except lmdb.MapResizedError:
                return ("adopt", None)
            try:
                result = op(txn)
            except lmdb.MapFullError:
                self.abort(txn)
                return ("grow", None)
            except lmdb.MapResizedError:
                self.abort(txn)
                return ("adopt", None)
            except BaseException:
                self.abort(txn)
                raise
            try:
                self.commit(txn)
            except lmdb.MapFullError:
                return ("grow", None)
            return ("done", result)
        except lmdb.Error as exc:
            raise _error("write", self.path, exc) from exc
        finally:
            self._gate.exit()

    def begin_write(self) -> Any:
        """A write transaction for a batch; the caller holds the gate until
        ``end_write``. Adopts a resized map on the way."""
        return self._begin(write=True)

    def begin_read(self) -> Any:
        """A read transaction held across a block (a snapshot); the caller
        holds the gate until ``end_read``."""
        return self._begin(write=False)

    def _begin(self, write: bool) -> Any:
        self.check(write=write)
        for _ in range(_MAX_ATTEMPTS):
            self._gate.enter()
            try:
                return self.env.begin(write=write)
            except lmdb.MapResizedError:
                self._gate.exit()
            except lmdb.Error as exc:
                self._gate.exit()
                raise _error("write" if write else "read", self.path, exc) from exc
            except BaseException:
                self._gate.exit()
                raise
            self.adopt_map()
        raise StoreError(f"store {'write' if write else 'read'} at {self.path} kept failing: map resized repeatedly")

    def last_txnid(self) -> int | None:
        """The id of the last transaction committed to the environment by any
        process (LMDB's meta page, in shared memory: no transaction needed), or
        None when it cannot be read here."""
        if self.closed or self.pid != _pid():
            return None
        try:
            return self.env.info()["last_txnid"]
        except lmdb.Error:
            return None

    def commit(self, txn: Any, durable: bool = True) -> None:
        """Commit write transaction ``txn`` (every commit of this process comes here:
        the session cache applies what it wrote once it is on disk). ``durable``:
        its meta page flushed too before it returns (and every lazy commit's before
        it); False leaves that to the next flush (see the module docstring)."""
        cache = self.session_cache
        txnid = txn.id()
        cache.committing(txn, txnid)
        try:
            txn.commit()
        except BaseException:
            cache.aborted()
            raise
        cache.committed(txnid)
        if durable:
            self.sync()
        else:
            self._lazy += 1

    def sync(self) -> None:
        """Flush what the commits so far wrote, their meta pages included."""
        lazy = self._lazy  # read before the flush: a lazy commit after it is not covered
        try:
            self.env.sync(True)
        except lmdb.Error as exc:
            raise _error("sync", self.path, exc) from exc
        if lazy > self._flushed:
            self._flushed = lazy

    @property
    def unsynced(self) -> bool:
        """A lazy commit's meta page may not be on disk yet."""
        return self._lazy > self._flushed

    def sync_lazy(self) -> None:
        """``sync`` if a lazy commit left its meta page unflushed; nothing otherwise."""
        if self._lazy > self._flushed and not self.closed and self.pid == os.getpid():
            self._gate.enter()  # not while a resize or compaction swaps the environment
            try:
                self.sync()
            finally:
                self._gate.exit()

    def abort(self, txn: Any) -> None:
        """Abort write transaction ``txn`` (what the cache noted of it is dropped)."""
        self.session_cache.aborted(txn)
        txn.abort()

    def end_write(self) -> None:
        self._gate.exit()

    end_read = end_write  # both release the gate

    # -- map size -----------------------------------------------------------

    def map_size(self) -> int:
        """The map size this process has (what a write that found the map full saw:
        ``grow`` reads LMDB's own before it doubles). Kept, not asked of ``env.info()``
        on every write: that builds a dict and lets go of the GIL."""
        return self._map_size

    def _resized(self, size: int) -> None:
        self.env.set_mapsize(size)
        self._map_size = self.env.info()["map_size"]

    def grow(self, seen: int) -> None:
        """Double the map (from ``seen``, the size that was full)."""

        def do() -> None:
            current = self.env.info()["map_size"]
            if current > seen:
                return  # another thread already grew it
            if current >= self.max_map_size:
                raise StoreError(
                    f"store at {self.path} is full: map size {current} bytes reached "
                    f"max_map_size; raise max_map_size"
                )
            self._resized(min(_round_up(current * 2), self.max_map_size))

        try:
            self._gate.resize(do)
        except lmdb.Error as exc:
            raise _error("map resize", self.path, exc) from exc

    def adopt_map(self) -> None:
        """Take the map size another process grew the environment to."""
        try:
            self._gate.resize(lambda: self._resized(0))
        except lmdb.Error as exc:
            raise _error("map resize", self.path, exc) from exc

    # -- lifetime -----------------------------------------------------------

    def info(self) -> tuple[int, int, dict[str, int]]:
        def op(txn: Any) -> dict[str, int]:
            return {name: txn.stat(db)["entries"] for name, db in self.dbs.items()}

        entries = self.read(op)
        info = self.env.info()
        psize = self.env.stat()["psize"]
        return info["map_size"], (info["last_pgno"] + 1) * psize, entries

    def close(self) -> None:
        if self.closed:
            return
        self.closed = True
        if self.pid != os.getpid():
            return  # inherited across fork: the parent's handles are not ours to close
        mapped_pages.Releaser.shared().discard(self)
        for close in self.closers:
            close()
        with self._close_lock:  # not while its pages are being released
            if self.unsynced:  # a lazy commit's meta page: on disk before the handle goes
                try:
                    self.env.sync(True)
                except lmdb.Error:
                    pass
            self.env.close()
        _unlock(self._holder)

    # -- compaction ---------------------------------------------------------

    def compact(self) -> bool:
        """Swap in a compacted copy of the file (no free pages, so no stale
        copies of erased records); False when another process has the
        environment open (see the module docstring)."""
        self.check(write=True)
        if self._holder is None:
            return False
        queue = os.open(os.path.join(self.path, "compact.lock"), os.O_RDWR | os.O_CREAT, 0o600)
        try:
            fcntl.flock(queue, fcntl.LOCK_EX)
            try:
                fcntl.flock(self._holder, fcntl.LOCK_EX | fcntl.LOCK_NB)
            except OSError:
                fcntl.flock(self._holder, fcntl.LOCK_SH)  # (a failed conversion may have dropped it)
                return False
            try:
                self._gate.resize(self._swap_compacted)
            finally:
                fcntl.flock(self._holder, fcntl.LOCK_SH)
            return True
        finally:
            os.close(queue)

    def _swap_compacted(self) -> None:
        tmp = os.path.join(self.path, f"compact-{os.getpid()}")
        shutil.rmtree(tmp, ignore_errors=True)
        os.mkdir(tmp, 0o700)
        try:
            map_size = self.env.info()["map_size"]
            try:
                self.env.copy(tmp, compact=True)
            except lmdb.Error as exc:
                raise _error("compact", self.path, exc) from exc
            copy = os.path.join(tmp, "data.mdb")
            fd = os.open(copy, os.O_RDONLY)
            try:
                os.fsync(fd)
            finally:
                os.close(fd)
            self.env.close()
            os.replace(copy, os.path.join(self.path, "data.mdb"))
            dfd = os.open(self.path, os.O_RDONLY)
            try:
                os.fsync(dfd)
            finally:
                os.close(dfd)
            self.env = self._open_env(map_size)
            with self.env.begin(write=True) as txn:
                fresh = {n: self.env.open_db(n.encode(), txn=txn) for n in self._db_names}
            self.env.sync(True)  # (opened with metasync off: this commit's meta page too)
            self._flushed = self._lazy  # the old file's lazy commits: in the flushed copy
            self.dbs.clear()
            self.dbs.update(fresh)  # the same dict every repository reads its handles from
            self.session_cache.reset()  # the copy numbers its transactions anew
            for hook in list(self.on_reopen):  # e.g. drop repositories that kept a handle
                hook()
        finally:
            shutil.rmtree(tmp, ignore_errors=True)


class SnapshotRunner:
    """Runs reads in one read transaction held across a ``with`` block; any
    write raises ``WriteNeeded`` (see ``LMDBStore.snapshot``)."""

    def __init__(self, env: LMDBEnv) -> None:
        self._env = env
        self._txn: Any = None

    def begin(self) -> None:
        self._txn = self._env.begin_read()

    def read(self, op: Op[T]) -> T:
        if self._txn is None:
            raise StoreError("snapshot is not open (use it inside its with block)")
        try:
            return op(self._txn)
        except lmdb.Error as exc:
            raise _error("read", self._env.path, exc) from exc

    def write(self, op: Op[T]) -> T:
        raise WriteNeeded("a write inside a read snapshot")

    def end(self) -> None:
        if self._txn is not None:
            self._txn.abort()
            self._txn = None
            self._env.end_read()


class BatchRunner:
    """Runs operations in one write transaction held across a ``with`` block.

    Each operation runs at once (so reads see earlier writes and results come
    back). On a full map the transaction is aborted, the map grown, and every
    operation so far replayed in a fresh transaction. Results returned before
    a replay came from the aborted transaction; they are the same unless
    another process wrote the same records in between.
    """

    def __init__(self, env: LMDBEnv) -> None:
        self._env = env
        self._ops: list[Op[Any]] = []
        self._txn: Any = None
        self._thread = threading.get_ident()
        self._broken: BaseException | None = None

    def begin(self) -> None:
        self._txn = self._env.begin_write()

    def _check(self) -> None:
        if self._txn is None:
            raise StoreError("batch is not open (use it inside its with block)")
        if threading.get_ident() != self._thread:
            raise StoreError("a batch belongs to the thread that opened it")
        if self._broken is not None:
            raise StoreError(f"batch failed earlier and will be rolled back: {self._broken}")

    def read(self, op: Op[T]) -> T:
        self._check()
        try:
            return op(self._txn)
        except lmdb.Error as exc:
            self._broken = exc
            raise _error("read", self._env.path, exc) from exc

    def write(self, op: Op[T]) -> T:
        self._check()
        try:
            result = op(self._txn)
        except lmdb.MapFullError:
            self._ops.append(op)
            return self._replay()
        except lmdb.Error as exc:
            self._broken = exc
            raise _error("write", self._env.path, exc) from exc
        self._ops.append(op)
        return result

    def _replay(self, txn_alive: bool = True) -> Any:
        for _ in range(_MAX_ATTEMPTS):
            seen = self._env.map_size()
            if txn_alive:
                self._env.abort(self._txn)
            self._txn = None
            self._env.end_write()
            self._env.grow(seen)
            self._txn = self._env.begin_write()
            txn_alive = True
            try:
                result = None
                for op in self._ops:
                    result = op(self._txn)
                return result
            except lmdb.MapFullError:
                continue
            except lmdb.Error as exc:
                self._broken = exc
                raise _error("write", self._env.path, exc) from exc
        raise StoreError(f"batch at {self._env.path} kept failing: map full repeatedly")

    def commit(self, durable: bool = True) -> None:
        """``durable``: as ``LMDBEnv.commit``'s."""
        self._check()
        if not self._ops:  # nothing was written: end the transaction without an fsync
            self.abort()
            return
        for _ in range(_MAX_ATTEMPTS):
            try:
                self._env.commit(self._txn, durable)
            except lmdb.MapFullError:
                self._replay(txn_alive=False)  # a failed commit already freed the txn
                continue
            except lmdb.Error as exc:
                self._txn = None
                self._env.end_write()
                raise _error("commit", self._env.path, exc) from exc
            except StoreError:  # committed, but the flush after it failed
                self._txn = None
                self._env.end_write()
                raise
            self._txn = None
            self._env.end_write()
            self._ops.clear()  # the ops (closures over the batch's repositories) are done with
            return
        raise StoreError(f"batch commit at {self._env.path} kept failing: map full repeatedly")

    def abort(self) -> None:
        self._ops.clear()
        if self._txn is not None:
            self._env.abort(self._txn)
            self._txn = None
            self._env.end_write()


def scan(txn: Any, db: Any, prefix: bytes) -> list[tuple[bytes, bytes]]:
    """Every (key, value) starting with ``prefix``, in key order."""
    out = []
    cursor = txn.cursor(db)
    if cursor.set_range(prefix):
        for k, v in cursor.iternext():
            if not k.startswith(prefix):
                break
            out.append((k, v))
    return out


def scan_rest(txn: Any, db: Any, prefix: bytes) -> list[bytes]:
    """The key suffixes after ``prefix`` (for index databases)."""
    out = []
    cursor = txn.cursor(db)
    if cursor.set_range(prefix):
        for k in cursor.iternext(keys=True, values=False):
            if not k.startswith(prefix):
                break
            out.append(k[len(prefix):])
    return out


def key_tenants(txn: Any, db: Any) -> list[str]:
    """The tenants a database has keys of (its keys start ``<tenant> SEP``), in
    order; one seek a tenant, not a read of every key."""
    out: list[str] = []
    cursor = txn.cursor(db)
    pos = cursor.first()
    while pos:
        tenant = cursor.key().split(SEP, 1)[0]
        out.append(tenant.decode("utf-8"))
        pos = cursor.set_range(tenant + b"\x01")
    return out


def pages(read: Callable[[Callable[[Any], Any]], Any], db: Callable[[], Any], prefix: bytes = b"",
          size: int = 512) -> Iterator[list[tuple[bytes, bytes]]]:
    """Every (key, value) starting with ``prefix``, in key order, a page per
    read transaction (``read(op)``: a runner's), none held between pages.
    ``db()``: the database handle, looked up for each page (compaction
    replaces the handles)."""
    after: bytes | None = None
    while True:
        def page(txn: Any, start: bytes | None = after) -> list[tuple[bytes, bytes]]:
            cursor = txn.cursor(db())
            out: list[tuple[bytes, bytes]] = []
            if not cursor.set_range(prefix if start is None else start):
                return out
            for k, v in cursor.iternext():
                if not k.startswith(prefix):
                    break
                if k != start:
                    out.append((bytes(k), bytes(v)))
                    if len(out) >= size:
                        break
            return out

        items = read(page)
        if not items:
            return
        yield items
        after = items[-1][0]


def _holder_lock(path: str, readonly: bool) -> int | None:
    """A shared flock held while this process has the environment open."""
    try:
        fd = os.open(os.path.join(path, "holders.lock"), os.O_RDWR | os.O_CREAT, 0o600)
    except OSError:
        if readonly:
            return None  # a read-only directory: nothing can compact it anyway
        raise
    fcntl.flock(fd, fcntl.LOCK_SH)  # waits while another process compacts
    return fd


def _unlock(fd: int | None) -> None:
    if fd is not None:
        os.close(fd)


def _round_up(size: int) -> int:
    return max(_PAGE * 16, (int(size) + _PAGE - 1) // _PAGE * _PAGE)


# -- per-process registry ----------------------------------------------------

_REGISTRY: dict[str, LMDBEnv] = {}
_REGISTRY_LOCK = threading.Lock()


def acquire(path: str, *, db_names: tuple[str, ...], map_size: int, max_map_size: int,
            readonly: bool, max_readers: int) -> LMDBEnv:
    """The process's environment for ``path``, opened on first use."""
    if max_map_size < map_size:
        raise StoreError(f"max_map_size ({max_map_size}) is smaller than map_size ({map_size})")
    if not readonly:
        try:
            os.makedirs(path, mode=0o700, exist_ok=True)
        except OSError as exc:
            raise _error("open", path, exc) from exc
    elif not os.path.isdir(path):
        raise StoreError(f"store at {path} does not exist")
    real = os.path.realpath(path)
    with _REGISTRY_LOCK:
        env = _REGISTRY.get(real)
        if env is not None and env.pid != os.getpid():
            raise StoreError(
                f"store at {real} was opened in the parent process ({env.pid}) before fork(); "
                "close it in the parent before forking, and call open_store() in each worker"
            )
        if env is not None:
            if env.readonly != readonly:
                raise StoreError(
                    f"store at {real} is already open {'read-only' if env.readonly else 'read-write'} "
                    "in this process"
                )
            env.refs += 1
            return env
        env = LMDBEnv(real, db_names=db_names, map_size=map_size, max_map_size=max_map_size,
                      readonly=readonly, max_readers=max_readers)
        _REGISTRY[real] = env
        return env


def release(env: LMDBEnv) -> None:
    with _REGISTRY_LOCK:
        env.refs -= 1
        if env.refs > 0:
            return
        if _REGISTRY.get(env.path) is env:
            del _REGISTRY[env.path]
    env.close()

