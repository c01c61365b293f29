"""kill -9 while memories are written and the recall index catches up (and
while turns go into the session index), with real child processes: the
files reopen clean and the memory index catches up to exactly the store's
servable records (LMDB is the source of truth)."""
from __future__ import annotations

import os
import signal
import subprocess
import sys
from pathlib import Path

from ctxproxy.store import open_store
from ctxproxy.store.memory_index import MemoryIndex
from ctxproxy.store.session_index import SessionIndex

WRITER = r"""
import sys
from pathlib import Path
sys.path.insert(0, sys.argv[2])
from memhelp import put_memory
from ctxproxy.store import open_store
from ctxproxy.store.memory_index import MemoryIndex
from ctxproxy.store.session_index import SessionIndex
data = Path(sys.argv[1])
store = open_store(data / "store")
index = MemoryIndex.open(data, store)
sessions = SessionIndex.open(data, store)
n = 0
while True:
    n += 1
    for i in range(20):
        status = "active" if (n + i) % 4 else "proposed"
        put_memory(store, "acme", f"Host h{n}-{i} runs service s{i}.", kind="event", status=status,
                   user=f"u{i % 3}", evidence_sessions=(f"s{n % 5}",), observed_at=n * 100.0 + i)
    index.catch_up()
    sessions.add_turn("acme", f"s{n % 5}", f"t{n}", [("user", f"turn {n} text"), ("assistant", "ok")], user="u0")
    print(n, flush=True)
"""


def test_kill_9_during_writes_then_the_index_catches_up(tmp_path):
    data = tmp_path
    open_store(data / "store").close()
    tests_dir = str(Path(__file__).resolve().parents[2])  # tests/, where memhelp lives
    for round_ in range(4):
        child = subprocess.Popen([sys.executable, "-c", WRITER, str(data), tests_dir], stdout=subprocess.PIPE,
                                 text=True)
        try:
            for _ in range(2 + round_):
                assert child.stdout.readline(), "writer died"
        finally:
            os.kill(child.pid, signal.SIGKILL)
            child.wait(timeout=30)
            child.stdout.close()
    store = open_store(data / "store")
    try:
        index = MemoryIndex.open(data, store)
        index.catch_up()
        servable = {r.memory_id for r in store.memories.iter_tenant("acme")
                    if r.status == "active" and not r.quarantine}
        rows = {r[0] for r in index.file.db().execute("SELECT memory_id FROM mem WHERE tenant = 'acme'")}
        assert rows == servable and len(rows) > 100
        assert index.watermark() == store.memories.last_seq()
        check = index.file.db().execute("PRAGMA integrity_check").fetchone()[0]
        assert check == "ok"
        sessions = SessionIndex.open(data, store)
        assert sessions.file.db().execute("PRAGMA integrity_check").fetchone()[0] == "ok"
        assert sessions.file.db().execute("SELECT COUNT(*) FROM turns").fetchone()[0] > 0
        n = index.rebuild()  # and a rebuild gives the same rows
        assert n == len(servable)
        assert {r[0] for r in index.file.db().execute("SELECT memory_id FROM mem")} == servable
    finally:
        store.close()
