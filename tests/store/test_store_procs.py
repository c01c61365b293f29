"""ctxproxy.store across processes: concurrent workers, fork, and kill -9.

Real LMDB in tmp_path, real processes. Children that fork from the test
process always leave through ``os._exit`` so they never run pytest's code.
"""
from __future__ import annotations

import multiprocessing
import os
import random
import select
import signal
import time


from ctxproxy.store import COMPLETED, StoreError, open_store

T = "acme"
SMALL_MAP = 64 << 10  # force map growth (and, across processes, MapResized) early
MAX_MAP = 1 << 30


# -- two workers writing at once -----------------------------------------------------


def _worker(path: str, name: str, n: int, start) -> None:
    start.wait(30)
    store = open_store(path, map_size=SMALL_MAP, max_map_size=MAX_MAP)
    try:
        for i in range(n):
            key = f"{name}-{i}"
            if i % 3 == 0:  # a turn's write-ahead batch, with a blob that grows the map
                with store.batch() as b:
                    b.effects.put_pending(T, key=key, call_id=f"call-{i}", tool="Bash",
                                          args_canonical=f'{{"i":{i}}}', session=name, task="t")
                    b.effects.complete(T, key, f"call-{i}", refs=[f"PR #{i}"])
                    b.pruned.put(T, key, {"content": name * 1500}, session=name)
            else:
                store.effects.put_pending(T, key=key, call_id=f"call-{i}", tool="Bash",
                                          args_canonical=f'{{"i":{i}}}', session=name, task="t")
                store.effects.complete(T, key, f"call-{i}", refs=[f"PR #{i}"])
    finally:
        store.close()


def test_two_workers_write_concurrently(tmp_path):
    path = str(tmp_path / "db")  # not created yet: both workers race to initialise it
    ctx = multiprocessing.get_context("spawn")
    start = ctx.Event()
    n = 120
    procs = [ctx.Process(target=_worker, args=(path, name, n, start)) for name in ("w1", "w2")]
    for p in procs:
        p.start()
    start.set()
    for p in procs:
        p.join(60)
    assert [p.exitcode for p in procs] == [0, 0]
    with open_store(path) as store:
        for name in ("w1", "w2"):
            recs = store.effects.list(T, session=name)
            assert sorted(r.key for r in recs) == sorted(f"{name}-{i}" for i in range(n))
            assert {r.state for r in recs} == {COMPLETED}
            assert all(r.refs == (f"PR #{r.key.split('-')[1]}",) for r in recs)
            assert len(store.pruned.list(T, session=name)) == len(range(0, n, 3))
        assert len(store.effects.list(T, task="t")) == 2 * n
        assert store.stats().map_size > SMALL_MAP


# -- fork --------------------------------------------------------------------------


def _in_child(fn) -> tuple[int, str]:
    """Run ``fn`` in a forked child; return its exit status and what it reported."""
    r, w = os.pipe()
    pid = os.fork()
    if pid == 0:  # pragma: no cover - child
        code = 1
        try:
            os.close(r)
            os.write(w, str(fn()).encode())
            code = 0
        except BaseException as exc:  # noqa: BLE001 - report anything to the parent
            os.write(w, f"{type(exc).__name__}: {exc}".encode())
        finally:
            os._exit(code)
    os.close(w)
    chunks = []
    while chunk := os.read(r, 65536):
        chunks.append(chunk)
    os.close(r)
    _, status = os.waitpid(pid, 0)
    return os.waitstatus_to_exitcode(status), b"".join(chunks).decode()


def test_store_open_before_fork_is_refused_in_the_child(tmp_path):
    path = str(tmp_path / "db")
    store = open_store(path)
    store.effects.put_pending(T, key="k", call_id="c", tool="Bash", args_canonical="{}")

    def child():
        outcomes = []
        for attempt in (lambda: store.effects.get(T, "k", "c"), lambda: open_store(path)):
            try:
                attempt()
                outcomes.append("worked")
            except StoreError as exc:
                outcomes.append(str(exc))
        store.close()  # releasing the inherited handle must not touch the parent's
        return "\n".join(outcomes)

    code, out = _in_child(child)
    assert code == 0, out
    used, reopened = out.split("\n")
    assert "cannot be used after fork()" in used and "open_store() in each worker" in used
    assert "before fork()" in reopened and "close it in the parent" in reopened
    # the parent's store is unharmed
    store.effects.complete(T, "k", "c")
    assert store.effects.get(T, "k", "c").state == COMPLETED
    store.close()


def test_open_after_fork_in_each_worker(tmp_path):
    path = str(tmp_path / "db")
    open_store(path).close()  # the parent may initialise it, then closes before forking

    def child():
        with open_store(path) as s:
            s.effects.put_pending(T, key="k", call_id=str(os.getpid()), tool="Bash",
                                  args_canonical="{}")
        return "ok"

    results = [_in_child(child) for _ in range(2)]
    assert results == [(0, "ok"), (0, "ok")]
    with open_store(path) as store:
        assert len(store.effects.by_key(T, "k")) == 2


# -- kill -9 -----------------------------------------------------------------------


def _crash_child(path: str, it: int, fd: int) -> None:  # pragma: no cover - child
    """Write pending -> completed records forever, reporting each key after
    the call that committed it returned. Killed by the parent."""
    try:
        store = open_store(path, map_size=SMALL_MAP, max_map_size=MAX_MAP)
        os.write(fd, b"O\n")
        i = 0
        while True:
            key = f"{it}-{i}"
            store.effects.put_pending(T, key=key, call_id="c", tool="Bash", session=f"s{it}",
                                      args_canonical=f'{{"command":"deploy {key}"}}')
            os.write(fd, f"P {key}\n".encode())
            if i % 4 == 3:
                with store.batch() as b:
                    b.effects.complete(T, key, "c", refs=[f"ref-{key}"])
                    b.pruned.put(T, key, {"content": key * 800}, session=f"s{it}")
            else:
                store.effects.complete(T, key, "c", refs=[f"ref-{key}"])
            os.write(fd, f"C {key}\n".encode())
            i += 1
    finally:
        os._exit(3)


def _read_lines_until(fd: int, n: int, timeout: float) -> bytes:
    """Read from ``fd`` until ``n`` lines arrived (or EOF / timeout)."""
    data = b""
    deadline = time.monotonic() + timeout
    while data.count(b"\n") < n:
        left = deadline - time.monotonic()
        if left <= 0 or not select.select([fd], [], [], left)[0]:
            got = data.count(b"\n")
            raise AssertionError(f"child reported {got} of {n} lines in {timeout}s")
        chunk = os.read(fd, 65536)
        if not chunk:
            break
        data += chunk
    return data


def test_kill_9_never_loses_a_committed_record(tmp_path):
    """SIGKILL a writer at random points, 60 times; after each kill the store
    opens cleanly and every record the child reported committed is there.

    Kill points are chosen by progress, not by wall clock: wait for a random
    number of reported lines (0 = still opening the store), then a random
    sub-commit delay, so the kill lands inside open, inside a transaction or
    its fsync, or between writes, whatever the machine's speed.
    """
    path = str(tmp_path / "db")
    rng = random.Random(4821)
    iterations, reported_total, killed_before_open = 60, 0, 0
    for it in range(iterations):
        r, w = os.pipe()
        pid = os.fork()
        if pid == 0:  # pragma: no cover - child
            os.close(r)
            _crash_child(path, it, w)
        os.close(w)
        try:
            data = _read_lines_until(r, rng.choice([0, 0, 1, 2, 3, 5, 8, 13]), timeout=10)
            time.sleep(rng.uniform(0, 0.004))
        finally:
            os.kill(pid, signal.SIGKILL)
            _, status = os.waitpid(pid, 0)
        assert os.waitstatus_to_exitcode(status) == -signal.SIGKILL, f"child ended early ({status})"
        while chunk := os.read(r, 65536):
            data += chunk
        os.close(r)
        lines = data.decode().splitlines()
        pending = {line[2:] for line in lines if line.startswith("P ")}
        completed = {line[2:] for line in lines if line.startswith("C ")}
        killed_before_open += "O" not in lines
        reported_total += len(completed)

        with open_store(path, map_size=SMALL_MAP, max_map_size=MAX_MAP) as store:  # opens cleanly
            recs = {r.key: r for r in store.effects.list(T, session=f"s{it}")}
            assert pending <= recs.keys(), f"iteration {it}: lost {sorted(pending - recs.keys())}"
            for key in completed:
                assert recs[key].state == COMPLETED and recs[key].refs == (f"ref-{key}",), key
            # at most the one record whose report the kill cut off is unreported
            assert len(recs) <= len(pending) + 1
            for key in completed:
                if int(key.split("-")[1]) % 4 == 3:
                    assert store.pruned.get(T, key).data["content"] == key * 800
            # the store is writable again (a writer killed mid-transaction left no lock)
            store.sessions.put(T, "after-crash", {"it": it})
    assert reported_total >= iterations  # most kills landed mid-stream, not only at start-up
    assert 0 < killed_before_open < iterations
    with open_store(path) as store:
        assert store.sessions.get(T, "after-crash") == {"it": iterations - 1}
