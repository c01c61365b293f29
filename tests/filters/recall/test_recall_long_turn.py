"""A long agent request through a real proxy and the official SDK: the memory it asks for reaches the
model among memories that share its side remarks' and common words (the turns set's dev memories)."""
from __future__ import annotations

import json

from memhelp import put_memory

from ctxproxy.proxy.eval import turns

LONG = ("Can you update the deploy script so that it uses the right port for staging? I think it is broken "
        "since yesterday and the CI keeps failing on the integration tests, please look at scripts/deploy.sh "
        "first.")


async def test_a_long_request_recalls_its_fact_among_memories_sharing_its_common_words(make_proxy, fake):
    # "use", "first", "keep" are words of any request; one of these memories holding one of them is no
    # coincidence worth as much as one naming the port or staging (``generic_weight``).
    proxy = await make_proxy("")
    store = proxy.state.services["store"]
    for statement in [s for s, _ in turns.FACTS.values()] + list(turns.DISTRACTORS):
        put_memory(store, "acme", statement, kind="fact", user="alice")
    client = proxy.anthropic(default_headers={"X-Ctx-Tenant": "acme", "X-Ctx-User": "alice",
                                              "X-Ctx-Session": "s1"})
    await client.messages.create(model="claude-test", max_tokens=32, messages=[{"role": "user", "content": LONG}])
    body = json.dumps(fake.last.json, ensure_ascii=False)
    assert "Staging listens on port 8443, not 443." in body
    for other in ("Staging's database is refreshed", "The integration test suite takes",
                  "Production deploys go through", "Load tests run with k6"):
        assert other not in body  # they share staging, the tests, the deploy: not what it asks
    part = proxy.settled_store().manifests.list("acme", session="s1")[-1].data["recall"]
    assert part["status"] == "recalled" and part["results"] == 1
