"""Calling a test proxy's admin API: the token the tests set and one call's
(status, JSON body, or the text of another body)."""
from __future__ import annotations

TOKEN = "admin-secret-token"


async def call(http, method, url, **kw):
    async with http.request(method, url, **kw) as r:
        return r.status, (await r.json() if r.content_type == "application/json" else await r.text())
