"""One Responses WebSocket turn as Codex runs it: send ``response.create``, read
events to the end of the response."""
from __future__ import annotations

import json

import aiohttp


async def ws_turn(ws, body):
    await ws.send_str(json.dumps({"type": "response.create", **body}))
    events = []
    async for msg in ws:
        assert msg.type == aiohttp.WSMsgType.TEXT
        ev = json.loads(msg.data)
        events.append(ev)
        if ev["type"] in ("response.completed", "response.failed", "error"):
            break
    return events
