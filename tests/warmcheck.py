"""What a server holds once started, for the tests of each edge: what turns need is
loaded then, not in the first turn of its process (the redaction engine's stream
regexes, the token counter's vocabulary, the memory index caught up)."""
from __future__ import annotations

from pathlib import Path

from memhelp import put_memory

from ctxproxy.store import open_store
from ctxproxy.store.memory_index import MemoryIndex
from ctxproxy.store.services.recall.services import recall_services


def redactors(engine) -> list:
    found = {}
    for pipeline in engine.pipelines.values():
        for stage in pipeline.stages:
            registry = getattr(stage.filter, "registry", None)
            if stage.filter.name == "redact" and registry is not None:
                for name in registry.names:
                    found[id(registry.get(name).redactor)] = registry.get(name).redactor
    return list(found.values())


def assert_warm(engine, services) -> None:
    """The state a first turn finds: nothing of this is loaded on its path."""
    (redactor,) = redactors(engine)
    assert redactor.cold == 0
    assert engine.tokens.loaded
    store = services["store"]
    assert recall_services(services).memories.watermark() == store.memories.last_seq() > 0


def memories_written_while_no_server_ran(data_dir: Path) -> None:
    """An index that exists (a server ran before) and memories the CLI added since."""
    store = open_store(str(data_dir / "store"))
    try:
        MemoryIndex.open(data_dir, store)
        for i in range(3):
            put_memory(store, "default", f"the deploy script of service {i} is ops/deploy{i}.sh", kind="fact")
        assert MemoryIndex.open(data_dir, store).watermark() < store.memories.last_seq()
    finally:
        store.close()
