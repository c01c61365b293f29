"""What a turn answers when it cannot go on, with no server framework.

    ProxyError                 carries status, message and an error type
    └── UpstreamError          provider unreachable (502), slow (504), shutting down (503)
    AdapterError               the caller's body is not a valid request (400; adapters.base)
    FilterError                a required filter blocked the turn (filters.base)

``describe(exc)`` is the one place an exception becomes (status, message,
error type); ``error_reply`` puts that in the caller's API format. The
aiohttp edge (``errors.response_for``), the turn engine and the WebSocket
edge all go through it, so a refusal reads the same on every way in.
"""
from __future__ import annotations

from typing import Any, NamedTuple

from ctxproxy.filters import FilterError
from ctxproxy.store.errors import StoreUnavailable

from .adapters import ADAPTERS, AdapterError

TURN_HEADER = "X-Ctx-Turn-Id"


class ProxyError(Exception):
    def __init__(self, status: int, message: str, error_type: str = ""):
        super().__init__(message)
        self.status = status
        self.message = message
        self.error_type = error_type or str(status)


class UpstreamError(ProxyError):
    """The provider could not be reached or did not answer in time."""


class Reply(NamedTuple):
    """A local answer: status, headers (name, value pairs) and the body bytes."""

    status: int
    headers: tuple[tuple[str, str], ...]
    body: bytes


def family_api(api: str | None, family: str) -> str:
    """The error format to answer in: the request's API, else its provider family's."""
    if api:
        return api
    return "anthropic" if family == "anthropic" else "chat"


def describe(exc: BaseException, turn_id: str = "") -> tuple[int, str, str]:
    """(status, message safe to show the caller, error type) of a failure."""
    if isinstance(exc, ProxyError):
        return exc.status, exc.message, exc.error_type
    if isinstance(exc, FilterError):
        return exc.status, f"ctxproxy {exc.filter_name}: {exc.message}", "FilterError"
    if isinstance(exc, AdapterError):
        return 400, str(exc), "AdapterError"
    if isinstance(exc, StoreUnavailable):
        return 503, ("ctxproxy's store is unavailable, so the request was not forwarded (nothing goes upstream "
                     "unrecorded: store.on_unavailable = \"fail_closed\"); retry shortly"), "store_unavailable"
    return 500, f"ctxproxy internal error ({type(exc).__name__}); turn {turn_id}", type(exc).__name__


def error_reply(api: str, status: int, message: str, turn_id: str = "") -> Reply:
    headers = (("Content-Type", "application/json"),) + (((TURN_HEADER, turn_id),) if turn_id else ())
    return Reply(status, headers, ADAPTERS[api].error_bytes(status, message))


def refusal_reply(refusal: Any, api: str) -> Reply:
    """An ``auth.KeyRefusal`` (401/403/429) in the caller's format; 429 says when to retry."""
    reply = error_reply(api, refusal.status, f"ctxproxy: {refusal.message}")
    if refusal.retry_after:
        return reply._replace(headers=reply.headers + (("Retry-After", str(refusal.retry_after)),))
    return reply


__all__ = ["TURN_HEADER", "ProxyError", "Reply", "UpstreamError", "describe", "error_reply", "family_api",
           "refusal_reply"]
