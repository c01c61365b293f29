"""The embeddings extra (``ctxproxy[embeddings]``) through real parts: the
bundled wordllama model, the vector index on disk beside the LMDB store,
the recall API's query and a real model turn. Tests that need the extra skip
when it is not installed; the extra-absent path runs either way."""
from __future__ import annotations

import importlib.util
import socket
import subprocess
import sys
import time
from pathlib import Path

import pytest

from memhelp import put_memory

from ctxproxy.config import ConfigError, load_config
from ctxproxy.store.services.recall import embeddings
from ctxproxy.store.services.recall.queries import recall_items
from ctxproxy.store.services.recall.rank import RankConfig
from ctxproxy.store.services.recall.services import RecallServices
from ctxproxy.store import forget as forgetting
from ctxproxy.store import open_store
from ctxproxy.store.memory_terms import query_terms, terms

needs_extra = pytest.mark.skipif(not embeddings.available(), reason=embeddings.missing())

ON = RankConfig(embeddings=True)
OFF = RankConfig()
PET = "Caroline adopted a puppy last week, a golden retriever called Biscuit."
PET_QUERY = "what kind of dog does she own?"


@pytest.fixture
def world(tmp_path):
    store = open_store(tmp_path / "store")
    rs = RecallServices(tmp_path, store)
    yield tmp_path, store, rs
    rs.close()
    store.close()


def ask(rs, tenant: str, query: str, cfg: RankConfig, **who) -> list[dict]:
    return recall_items(rs, tenant, {"query": query, **who}, cfg)["items"]


@needs_extra
def test_a_paraphrase_sharing_no_word_is_recalled_only_with_embeddings(world):
    _, store, rs = world
    rec = put_memory(store, "acme", PET, kind="fact", user="alice")
    put_memory(store, "acme", "The staging database listens on port 6543.", kind="fact", user="alice")
    assert not set(query_terms(PET_QUERY)) & set(terms(PET))  # no word (or stem) in common
    rs.prepare(ON, sync=True)
    assert ask(rs, "acme", PET_QUERY, OFF, user="alice") == []
    got = ask(rs, "acme", PET_QUERY, ON, user="alice")
    assert [it["memory_id"] for it in got] == [rec.memory_id]  # the unrelated fact stays below the floor
    parts = got[0]["parts"]
    assert parts["lexical"] == 0.0 and parts["vector"] >= ON.vector_min


@needs_extra
def test_vector_scores_only_what_the_viewer_may_see(world):
    _, store, rs = world
    mine = put_memory(store, "acme", PET, kind="fact", user="alice", purpose="support")
    hidden = [put_memory(store, "other", PET, kind="fact", user="alice", purpose="support"),  # another tenant
              put_memory(store, "acme", PET + " Really.", kind="fact", user="bob", purpose="support"),
              put_memory(store, "acme", PET + " Truly.", kind="fact", user="alice", purpose="analysis"),
              put_memory(store, "acme", PET + " Honestly.", kind="fact", user="alice", purpose="support",
                         sensitivity="confidential")]
    rs.prepare(ON, sync=True)
    assert rs.vectors.count("other") == 1  # embedded, so only the WHERE clause keeps it out
    who = {"user": "alice", "purpose": "support"}
    for query in (PET_QUERY, PET):
        got = ask(rs, "acme", query, ON, **who)
        assert [it["memory_id"] for it in got] == [mine.memory_id]
    before = ask(rs, "acme", PET_QUERY, ON, **who)
    for rec in hidden:  # a hidden near-duplicate changes no score: gone or there, the same answer
        forgetting.forget(store, rec.tenant, {"memory": rec.memory_id})
    rs.vectors.catch_up()
    assert ask(rs, "acme", PET_QUERY, ON, **who) == before
    assert ask(rs, "other", PET_QUERY, ON, user="bob") == []


@needs_extra
def test_forget_erases_the_vectors_and_a_reindex_does_not_bring_them_back(world):
    data, store, rs = world
    canary = "cnry5e1f0a9d77"
    for i in range(3):
        put_memory(store, "acme", f"{PET} Tag {canary}{i}.", kind="fact", user="alice")
    keep = put_memory(store, "acme", PET, kind="fact", user="bob")
    rs.prepare(ON, sync=True)
    assert rs.vectors.count("acme") == 4
    receipt = forgetting.forget(store, "acme", {"user": "alice"})
    assert receipt.counts["recall.vectors.memory_vectors"] == 3
    assert receipt.status == "erased"
    assert rs.vectors.count("acme") == 1
    assert ask(rs, "acme", PET_QUERY, ON, user="alice") == []
    for path in data.rglob("*"):  # the canary is in no file of the data dir, vectors included
        if path.is_file():
            assert canary.encode() not in path.read_bytes(), path
    assert rs.reindex() == {"indexed": 1, "vectors": 1}
    assert [it["memory_id"] for it in ask(rs, "acme", PET_QUERY, ON, user="bob")] == [keep.memory_id]


@needs_extra
def test_a_new_memory_is_embedded_off_the_search_path(world):
    _, store, rs = world
    rs.prepare(ON, sync=True)
    rec = put_memory(store, "acme", PET, kind="fact", user="alice")
    assert rs.vectors.lagging()
    ask(rs, "acme", PET_QUERY, ON, user="alice")  # wakes the background indexer; does not wait for it
    deadline = time.monotonic() + 60
    while rs.vectors.lagging() and time.monotonic() < deadline:  # the indexer thread catches up
        time.sleep(0.01)
    assert not rs.vectors.lagging() and rs.vectors.count("acme") == 1
    assert ask(rs, "acme", PET_QUERY, ON, user="alice")[0]["memory_id"] == rec.memory_id


@needs_extra
def test_the_vectors_in_memory_are_bounded_and_an_evicted_tenant_reads_them_again(world):
    _, store, rs = world
    pets = {t: put_memory(store, t, PET, kind="fact", user="alice") for t in ("t1", "t2", "t3")}
    for t in ("t1", "t2", "t3"):
        put_memory(store, t, "The staging database listens on port 6543.", kind="fact", user="alice")
    rs.prepare(ON, sync=True)
    rs.vectors.cache_rows = 4  # room for two tenants of two memories each
    for t in ("t1", "t2", "t3", "t1"):
        got = ask(rs, t, PET_QUERY, ON, user="alice")
        assert [it["memory_id"] for it in got] == [pets[t].memory_id]  # each tenant's own, evicted or not
    assert list(rs.vectors._cache) == ["t3", "t1"]  # t2, searched least recently, was dropped
    assert sum(len(v.ids) for v in rs.vectors._cache.values()) <= 4


@needs_extra
def test_a_memory_no_longer_active_loses_its_vector(world):
    _, store, rs = world
    rec = put_memory(store, "acme", PET, kind="fact", user="alice")
    rs.prepare(ON, sync=True)
    assert ask(rs, "acme", PET_QUERY, ON, user="alice")[0]["memory_id"] == rec.memory_id  # (its vector cached)
    store.memories.put(rec.evolve(status="superseded"))
    rs.vectors.catch_up()
    assert rs.vectors.count("acme") == 0
    assert ask(rs, "acme", PET_QUERY, ON, user="alice") == []


@needs_extra
def test_the_model_loads_from_the_wheel_without_a_network(monkeypatch):
    def no_network(*args, **kwargs):
        raise AssertionError("the embeddings extra tried to open a connection")

    monkeypatch.setattr(socket.socket, "connect", no_network)
    monkeypatch.setattr(socket, "create_connection", no_network)
    model = embeddings.Embedder()
    v = model.embed(["my dog", "a puppy", "the invoice"])
    assert v.shape == (3, 256)
    assert float(v[0] @ v[1]) > float(v[0] @ v[2])


@needs_extra
async def test_a_real_turn_injects_the_paraphrase_and_reports_the_vector_part(make_proxy, fake):
    proxy = await make_proxy("[filters.recall.rank]\nembeddings = true\n")
    store = proxy.state.services["store"]
    rec = put_memory(store, "acme", PET, kind="fact", user="alice")
    proxy.state.services["recall"].vectors.catch_up()  # what the background indexer does
    client = proxy.anthropic(default_headers={"X-Ctx-Tenant": "acme", "X-Ctx-User": "alice",
                                              "X-Ctx-Session": "s1"})
    await client.messages.create(model="claude-test", max_tokens=16,
                                 messages=[{"role": "user", "content": PET_QUERY}])
    assert "golden retriever called Biscuit" in str(fake.last.json)
    part = proxy.settled_store().manifests.list("acme", session="s1")[-1].data["recall"]
    item = part["items"][0]
    assert item["id"] == rec.memory_id
    assert item["parts"]["lexical"] == 0.0 and item["parts"]["vector"] >= ON.vector_min


def _without_extra(monkeypatch):
    """As in a process where wordllama is not installed (nothing loaded yet)."""
    monkeypatch.setattr(embeddings, "_shared", {})
    real = importlib.util.find_spec
    monkeypatch.setattr(importlib.util, "find_spec",
                        lambda name, *a: None if name == "wordllama" else real(name, *a))


def test_without_the_extra_turning_it_on_fails_at_start_up(monkeypatch, tmp_path):
    _without_extra(monkeypatch)
    assert not embeddings.available()
    path = tmp_path / "ctxproxy.toml"
    path.write_text("[filters.recall.rank]\nembeddings = true\n")
    with pytest.raises(ConfigError, match=r"filters\.recall\.rank\.embeddings: .*pip install 'ctxproxy\[embeddings\]'"):
        from ctxproxy.filters import filter_configs

        filter_configs(load_config(path, data_dir=str(tmp_path / "data")))
    store = open_store(tmp_path / "store")
    rs = RecallServices(tmp_path, store)
    try:
        with pytest.raises(ConfigError, match="ctxproxy\\[embeddings\\]"):
            rs.prepare(ON)
        assert ask(rs, "acme", "anything", OFF) == []  # lexical recall needs nothing of it
    finally:
        rs.close()
        store.close()


def test_the_default_pipeline_imports_nothing_of_the_extra(tmp_path):
    code = ("import sys\n"
            "from ctxproxy.config import load_config\n"
            "from ctxproxy.proxy.edge.server import make_app\n"
            f"make_app(load_config(None, port=0, data_dir={str(tmp_path / 'data')!r}))\n"
            "print(sorted(m for m in ('wordllama', 'tokenizers', 'safetensors') if m in sys.modules))\n")
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, timeout=120,
                         cwd=Path(__file__).parent)
    assert out.returncode == 0, out.stderr
    assert out.stdout.strip() == "[]"
