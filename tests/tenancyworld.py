"""Two tenants, two users each, in ``[auth] mode = "keys"``: the world the
isolation tests probe. Every user runs an Anthropic and a Chat Completions
session at once through the official SDKs, with forged ``X-Ctx-Tenant`` /
``X-Ctx-User`` headers naming the other tenant; each session makes two tool
calls with large results, so each tenant ends up with manifests, effects and
pruned originals of its own."""
from __future__ import annotations

import asyncio
from dataclasses import dataclass, field

from ctxproxy.proxy.auth import issue_key
from ctxproxy.proxy.scripted_provider import Record, Reply

TOML = """
[auth]
mode = "keys"

[pipeline]
request = ["identify", "effects", "prune", "manifest"]

[filters.prune]
trigger_tokens = 400
keep_recent = 1
min_tokens = 20
min_batch_ratio = 0.0
mode = "hard"

[tenants.acme]
api_key_env = "ACME_PROVIDER_KEY"

[tenants.globex]
api_key_env = { anthropic = "GLOBEX_ANTHROPIC_KEY" }
"""
PROVIDER_KEYS = {"ACME_PROVIDER_KEY": "sk-acme-provider-0001", "GLOBEX_ANTHROPIC_KEY": "sk-globex-ant-0002"}
USERS = {"acme": ("alice", "bob"), "globex": ("carol", "dave")}
OTHER = {"acme": "globex", "globex": "acme"}
TOOLS = [{"name": "Bash", "description": "run", "input_schema": {"type": "object"}}]
CHAT_TOOLS = [{"type": "function", "function": {"name": "Bash", "parameters": {"type": "object"}}}]


def big(marker: str, n: int) -> str:
    return "".join(f"{marker} output {n} line {i} of a long listing\n" for i in range(120))


def _results(body: dict) -> int:
    """Tool results in a request (Anthropic blocks or Chat tool messages)."""
    n = 0
    for m in body.get("messages", []):
        if m.get("role") == "tool":
            n += 1
        elif isinstance(m.get("content"), list):
            n += sum(1 for b in m["content"] if isinstance(b, dict) and b.get("type") == "tool_result")
    return n


def reply(rec: Record) -> Reply:
    """Two tool calls, then an answer; the command names the session's marker."""
    body = rec.json or {}
    first = body.get("messages", [{}])[0].get("content", "")
    marker = first.split()[-1] if isinstance(first, str) and first else "?"
    done = _results(body)
    if done >= 2:
        return Reply.text(f"finished {marker}")
    return Reply.tool_call("Bash", {"command": f"run {marker} step {done + 1}"})


@dataclass
class World:
    proxy: object
    fake: object
    keys: dict[str, dict] = field(default_factory=dict)  # name -> issue_key() answer
    turns: dict[str, list[str]] = field(default_factory=dict)  # tenant -> turn ids
    sessions: dict[str, list[str]] = field(default_factory=dict)  # tenant -> session ids

    @property
    def store(self):
        return self.proxy.settled_store()

    def key(self, name: str) -> str:
        return self.keys[name]["key"]


async def anthropic_session(client, marker: str) -> list[str]:
    msgs = [{"role": "user", "content": f"task {marker}"}]
    turns = []
    for step in range(1, 4):
        raw = await client.messages.with_raw_response.create(model="m", max_tokens=50, tools=TOOLS, messages=msgs)
        turns.append(raw.headers["x-ctx-turn-id"])
        msg = await raw.parse()
        uses = [b for b in msg.content if b.type == "tool_use"]
        if not uses:
            break
        msgs += [{"role": "assistant", "content": [b.model_dump(exclude_none=True) for b in msg.content]},
                 {"role": "user", "content": [{"type": "tool_result", "tool_use_id": uses[0].id,
                                               "content": big(marker, step)}]}]
    return turns


async def chat_session(client, marker: str) -> list[str]:
    msgs = [{"role": "user", "content": f"task {marker}"}]
    turns = []
    for step in range(1, 4):
        raw = await client.chat.completions.with_raw_response.create(model="m", messages=msgs, tools=CHAT_TOOLS)
        turns.append(raw.headers["x-ctx-turn-id"])
        msg = raw.parse().choices[0].message
        if not msg.tool_calls:
            break
        msgs += [msg.model_dump(exclude_none=True),
                 {"role": "tool", "tool_call_id": msg.tool_calls[0].id, "content": big(marker, step)}]
    return turns


def forged(tenant: str, user: str, marker: str) -> dict[str, str]:
    """Headers that name the other tenant and one of its users: keys mode ignores them."""
    other = OTHER[tenant]
    return {"X-Ctx-Tenant": other, "X-Ctx-User": USERS[other][0], "X-Ctx-Session": f"s-{marker}"}


async def build(proxy, fake) -> World:
    fake.default_reply = reply
    w = World(proxy, fake)
    store, cfg = proxy.state.services["store"], proxy.state.config
    for tenant, users in USERS.items():
        for user in users:
            w.keys[user] = issue_key(store, cfg, tenant, user=user)
        w.keys[f"{tenant}-admin"] = issue_key(store, cfg, tenant, admin=True)

    async def user_sessions(tenant: str, user: str) -> tuple[str, list[str], list[str]]:
        key = w.key(user)
        ma, mc = f"{tenant}-{user}-anthropic", f"{tenant}-{user}-chat"
        # alice and carol present the key as their API key; bob and dave in X-Ctx-Key with their own
        # provider credentials (acme's configured provider key still wins for bob)
        as_api_key = user in ("alice", "carol")
        own = {} if as_api_key else {"X-Ctx-Key": key}
        a = proxy.anthropic(api_key=key if as_api_key else f"sk-ant-own-{user}",
                            default_headers={**forged(tenant, user, ma), **own})
        c = proxy.openai(api_key=f"sk-own-{user}", default_headers={**forged(tenant, user, mc), "X-Ctx-Key": key})
        ta, tc = await asyncio.gather(anthropic_session(a, ma), chat_session(c, mc))
        return tenant, ta + tc, [f"{user}/s-{ma}", f"{user}/s-{mc}"]  # a user key's sessions: its namespace

    done = await asyncio.gather(*(user_sessions(t, u) for t, us in USERS.items() for u in us))
    for tenant, turns, sessions in done:
        w.turns.setdefault(tenant, []).extend(turns)
        w.sessions.setdefault(tenant, []).extend(sessions)
    return w
