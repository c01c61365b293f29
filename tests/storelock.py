"""Holding the store's write lock from another thread, for tests of what waits for it."""
import threading
from contextlib import contextmanager


@contextmanager
def write_lock_held(store, timeout: float = 10.0):
    """Another holder keeps the store's write lock (an open LMDB write
    transaction in a thread of its own) until the block ends, or ``timeout``."""
    held, release = threading.Event(), threading.Event()

    def hold() -> None:
        with store.batch():
            held.set()
            release.wait(timeout)

    holder = threading.Thread(target=hold, name="test-write-lock")
    holder.start()
    try:
        assert held.wait(5), "could not take the write lock"
        yield
    finally:
        release.set()
        holder.join(timeout)
