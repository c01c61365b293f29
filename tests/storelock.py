"""Holding the store's write lock from another thread, for tests of what waits for it."""
import threading
from contextlib import contextmanager


@contextmanager
def write_lock_held(store, timeout: float = 60.0):
    """Another holder keeps the store's write lock (an open LMDB write
    transaction in a thread of its own) until the block ends, or ``timeout`` (a bound on a hang,
    far above what a block takes on a loaded machine: an early release would let the waiter through)."""
    held, release = threading.Event(), threading.Event()

    def hold() -> None:
        with store.batch():
            held.set()
            release.wait(timeout)

    holder = threading.Thread(target=hold, name="test-write-lock")
    holder.start()
    try:
        assert held.wait(30), "could not take the write lock"
        yield
    finally:
        release.set()
        holder.join(timeout)
