"""Recall in keys mode: the tenant and user come from the proxy key, so
forged X-Ctx-Tenant / X-Ctx-User headers recall nothing of the principal
they name; a missing or revoked key is refused before anything is recalled
or forwarded."""
from __future__ import annotations

import json
import re

import openai
import pytest

from memhelp import put_memory

from ctxproxy.proxy.auth import issue_key

KEYS = '[auth]\nmode = "keys"\n'
CANARY = re.compile(r"kcnry\w+")
EVIDENCE = re.compile(r'<ctx-data kind=\\"evidence\\".*?</ctx-data>', re.S)


def recalled(record) -> set[str]:
    return set(CANARY.findall(" ".join(EVIDENCE.findall(json.dumps(record.json)))))


async def test_forged_headers_and_bad_keys_recall_nothing(make_proxy, fake):
    proxy = await make_proxy(KEYS)
    store, cfg = proxy.state.services["store"], proxy.state.config
    alice = issue_key(store, cfg, "acme", user="alice")["key"]
    revoked = issue_key(store, cfg, "acme", user="alice")
    store.proxy_keys.revoke(revoked["id"])
    planted = {"kcnryalice": ("acme", "alice"), "kcnrytenant": ("acme", ""), "kcnrybob": ("other", "bob"),
               "kcnrycarol": ("acme", "carol")}
    for canary, (tenant, user) in planted.items():
        put_memory(store, tenant, f"Note {canary}: the deploy window plan.", kind="fact", user=user)
    query = "what about " + " ".join(planted) + " and the deploy window plan?"
    forged = [{}, {"X-Ctx-Tenant": "other", "X-Ctx-User": "bob"}, {"X-Ctx-User": "carol"},
              {"X-Ctx-Tenant": "other"}]
    served = 0
    for i, extra in enumerate(forged):
        client = proxy.openai(api_key="sk-own", default_headers={"X-Ctx-Key": alice, "X-Ctx-Session": f"k{i}",
                                                                 **extra})
        try:
            await client.chat.completions.create(model="m", messages=[{"role": "user", "content": query}])
        except openai.APIStatusError as exc:  # a header outside the key may be refused: then nothing went out
            assert exc.status_code in (401, 403)
            continue
        got = recalled(fake.last)
        assert got <= {"kcnryalice", "kcnrytenant"} and "kcnryalice" in got, (extra, got)
        served += 1
    assert served >= 2  # the key's own identity at least, and a forged header it overrides
    before = len(fake.requests)
    for headers in ({"X-Ctx-Key": revoked["key"]}, {}):
        client = proxy.openai(api_key="sk-own", default_headers={**headers, "X-Ctx-Tenant": "acme",
                                                                 "X-Ctx-User": "alice"})
        with pytest.raises(openai.APIStatusError) as exc:
            await client.chat.completions.create(model="m", messages=[{"role": "user", "content": query}])
        assert exc.value.status_code == 401
    assert len(fake.requests) == before  # refused before anything was recalled or forwarded
