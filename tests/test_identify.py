"""identify: headers, client hints, OpenClaw runtime line, fingerprint fallback."""
import hashlib

import orjson
from multidict import CIMultiDict

from ctxproxy.filters.digest import sha256
from ctxproxy.filters.identify import IdentifyConfig, identify
from ctxproxy.proxy.adapters import ADAPTERS
from realclients import body_bytes, load

CFG = IdentifyConfig()


def ident(name=None, headers=None, body=None, api="anthropic", fixed=""):
    if name:
        rec = load(name)
        headers = {**rec["headers"], **(headers or {})}
        raw = body_bytes(rec)
    else:
        raw = orjson.dumps(body)
    view = ADAPTERS[api].parse_request(raw)
    return identify(CIMultiDict(headers or {}), view, CFG, fixed)


def test_claude_code_session_header():
    i = ident("claude-code-1-first")
    assert (i.session, i.source, i.agent, i.supplied) == (
        "91c73d81-0f31-48b2-8682-c4f4438bae79", "hint:x-claude-code-session-id", "claude-code", True)


def test_claude_code_metadata_user_id_when_header_missing():
    rec = load("claude-code-2-tool-result")
    headers = {k: v for k, v in rec["headers"].items() if k != "x-claude-code-session-id"}
    i = identify(CIMultiDict(headers), ADAPTERS["anthropic"].parse_request(body_bytes(rec)), CFG)
    assert i.session == "91c73d81-0f31-48b2-8682-c4f4438bae79" and i.source == "hint:metadata.user_id"


def test_claude_code_earlier_user_id_string():
    """Earlier Claude Code versions send ``user_<device hash>_account_<uuid>_session_<uuid>``."""
    device = "5dd07c33da27e6d2968d94ea20bf47a7b090b6b158b82328d54da2909a108e84"
    body = {"model": "m", "max_tokens": 10, "messages": [{"role": "user", "content": "hi"}],
            "metadata": {"user_id": f"user_{device}_account__session_d2e70091-3007-41a3-a916-cb8b0d3098de"}}
    i = ident(body=body)
    assert (i.session, i.source, i.supplied, i.user) == (
        "d2e70091-3007-41a3-a916-cb8b0d3098de", "hint:metadata.user_id", True, device)
    body["metadata"]["user_id"] = (f"user_{device}_account_0b5f2d6e-93a4-4c1e-8f0a-7d1c2b3a4e5f"
                                   "_session_d2e70091-3007-41a3-a916-cb8b0d3098de")
    assert ident(body=body).user == "0b5f2d6e-93a4-4c1e-8f0a-7d1c2b3a4e5f"  # the account, when there is one
    body["metadata"]["user_id"] = "someone@example.com"  # any other user id: not a session hint
    assert ident(body=body).source == "fingerprint"


def test_codex_session_headers():
    i = ident("codex-lite-1-first", api="responses")
    assert i.session == "01a22b90-ccdc-7b03-8a4a-14c2e3ae33dd" and i.agent == "codex"


def test_x_ctx_headers_win_but_tenant_header_cannot_override_fixed_tenant():
    h = {"X-Ctx-Tenant": "acme", "X-Ctx-Session": "s1", "X-Ctx-Task": "t9", "X-Ctx-User": "ana"}
    i = ident("claude-code-1-first", headers=h)
    assert (i.tenant, i.session, i.task, i.user, i.source) == ("acme", "s1", "t9", "ana", "header")
    assert ident("claude-code-1-first", headers=h, fixed="bound").tenant == "bound"


def test_openclaw_runtime_line():
    body = {"model": "m", "messages": [
        {"role": "system", "content": "You are helpful.\nRuntime: agent=main | sessionId=oc-7f3a91 | host=x"},
        {"role": "user", "content": "hi"}]}
    i = ident(body=body, api="chat", headers={"user-agent": "openclaw/1.0"})
    assert (i.session, i.source) == ("oc-7f3a91", "hint:openclaw-runtime")


def test_fingerprint_separates_concurrent_sessions_and_is_stable_across_turns():
    # Hermes: no id at all, and a prompt_cache_key shared by every session
    first_a = {"model": "m", "prompt_cache_key": "hermes", "input": [{"role": "user", "content": "fix bug 12"}]}
    first_b = {"model": "m", "prompt_cache_key": "hermes", "input": [{"role": "user", "content": "write docs"}]}
    later_a = {**first_a, "input": first_a["input"] + [{"role": "assistant", "content": "ok"},
                                                       {"role": "user", "content": "next"}]}
    a, b, a2 = (ident(body=x, api="responses") for x in (first_a, first_b, later_a))
    assert a.source == "fingerprint" and not a.supplied
    assert a.session != b.session
    assert a.session == a2.session
    # the id is part of the stored state: sha256 of system NUL first user turn, as in every version
    assert a.session == "fp-" + hashlib.sha256(b"\x00fix bug 12").hexdigest()[:24]


def test_remembered_fingerprints_are_the_fingerprints_and_stay_bounded(monkeypatch):
    """The filter remembers each opening's fingerprint (every turn of a session
    fingerprints the same opening): a remembered one is the one computed afresh,
    two openings never share an entry, and the memo is bounded."""
    from ctxproxy.filters import identify as mod
    monkeypatch.setattr(mod, "FINGERPRINT_MEMO", 3)
    memo: dict = {}
    bodies = [{"model": "m", "input": [{"role": "user", "content": f"task {i}"}]} for i in range(5)]

    def fp(body, memo):
        view = ADAPTERS["responses"].parse_request(orjson.dumps(body))
        return identify(CIMultiDict(), view, CFG, "", None, memo).session

    fresh = [fp(b, None) for b in bodies]
    assert len(set(fresh)) == 5
    assert [fp(b, memo) for b in bodies] == fresh  # computed, then remembered
    assert 0 < len(memo) <= 3
    assert [fp(b, memo) for b in bodies[-2:]] == fresh[-2:]  # and read back
    long_a = {"model": "m", "input": [{"role": "user", "content": "x" * 5000 + " question a"}]}
    long_b = {"model": "m", "input": [{"role": "user", "content": "x" * 5000 + " question b"}]}
    assert fp(long_a, memo) == fp(long_a, None) != fp(long_b, memo) == fp(long_b, None)


def test_primed_sha256_objects_are_independent_and_exact():
    a, b = sha256(b"one"), sha256()
    b.update(b"two")
    assert a.hexdigest() == hashlib.sha256(b"one").hexdigest()
    assert b.hexdigest() == hashlib.sha256(b"two").hexdigest()
    assert sha256().hexdigest() == hashlib.sha256().hexdigest()


def test_bad_header_ids_are_ignored():
    i = ident(body={"model": "m", "messages": [{"role": "user", "content": "x"}]},
              headers={"X-Ctx-Session": "a b\u0000c", "X-Ctx-Tenant": "../../etc"})
    assert i.source == "fingerprint" and i.tenant == "default"


def test_shared_proxy_remedies_for_the_tenant_header():
    """By default X-Ctx-Tenant picks the tenant on a route without one; the two
    remedies the README gives an operator of a shared proxy both stop it."""
    h = CIMultiDict({"X-Ctx-Tenant": "globex", "X-Ctx-Session": "s1"})
    view = ADAPTERS["anthropic"].parse_request(orjson.dumps({"messages": [{"role": "user", "content": "hi"}]}))
    assert identify(h, view, CFG).tenant == "globex"
    assert identify(h, view, CFG, "acme").tenant == "acme"  # the route's fixed tenant
    closed = identify(h, view, IdentifyConfig(trust_headers=False))
    assert closed.tenant == "default" and closed.session != "s1"
