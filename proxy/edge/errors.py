"""The proxy's exception tree and the one place that maps errors to responses.

    ProxyError                 carries status, message and the turn id
    ├── UpstreamError          provider unreachable (502) or slow (504)
    └── (AdapterError)         the caller's body is not a valid request (400)
    FilterError                a required filter blocked the turn (filters.base)
    (the framework-free part and ``describe``, the one error -> message mapping, are in ``replies``)
    ConfigError                bad configuration (config.typed)

Every error reaches the caller in its own API's format (Anthropic
``{"type":"error",...}``, OpenAI ``{"error":{...}}``); never a traceback.
"""
from __future__ import annotations

import asyncio
from typing import Any

import aiohttp
from aiohttp import web

from ..replies import (TURN_HEADER, ProxyError, Reply, UpstreamError, describe, error_reply, family_api,
                      refusal_reply)


class ProxyShuttingDown(aiohttp.ClientConnectionError):
    """Set on the provider responses still being read when shutdown cuts them."""


def translate_upstream(exc: BaseException, where: str) -> UpstreamError:
    """aiohttp/asyncio failures -> 502/504 with a message that names the cause."""
    if isinstance(exc, ProxyShuttingDown):
        return UpstreamError(503, f"ctxproxy is shutting down; the answer was cut ({where})", "shutting_down")
    if isinstance(exc, (asyncio.TimeoutError, aiohttp.ServerTimeoutError)):
        return UpstreamError(504, f"upstream timed out ({where})", "timeout")
    if isinstance(exc, aiohttp.ClientConnectorError):
        why = exc.os_error.strerror or "connect failed"
        return UpstreamError(502, f"upstream unreachable: {exc.host}:{exc.port} ({why})", "upstream_unreachable")
    if isinstance(exc, aiohttp.ClientPayloadError):
        return UpstreamError(502, f"upstream closed the connection mid-response ({where})", "upstream_dropped")
    if isinstance(exc, (aiohttp.ServerDisconnectedError, aiohttp.ClientOSError)):
        return UpstreamError(502, f"upstream disconnected ({where})", "upstream_dropped")
    return UpstreamError(502, f"upstream error ({type(exc).__name__})", "upstream_error")


def web_response(reply: Reply) -> web.Response:
    """A local reply of the engine as an aiohttp response."""
    return web.Response(status=reply.status, body=reply.body, headers=reply.headers)


def error_response(api: str, status: int, message: str, turn_id: str = "") -> web.Response:
    return web_response(error_reply(api, status, message, turn_id))


def refusal_response(refusal: Any, api: str) -> web.Response:
    """An ``auth.KeyRefusal`` (401/403/429) in the caller's format; 429 says when to retry."""
    return web_response(refusal_reply(refusal, api))


def response_for(exc: BaseException, api: str, turn_id: str = "") -> web.Response:
    """The single exception -> response mapping (CancelledError is never caught here)."""
    if isinstance(exc, web.HTTPRequestEntityTooLarge):
        return error_response(api, 413, "request body is larger than the proxy's limit (server.max_body_bytes)",
                              turn_id)
    if isinstance(exc, web.HTTPException):
        return error_response(api, exc.status, exc.reason or "error", turn_id)
    status, message, _ = describe(exc, turn_id)
    return error_response(api, status, message, turn_id)


__all__ = ["TURN_HEADER", "ProxyError", "ProxyShuttingDown", "UpstreamError", "error_response", "family_api",
           "response_for", "translate_upstream", "web_response"]
