"""A ctxproxy app served on 127.0.0.1 and the clients a test or bench script
points at it: the official SDKs, and its store once queued writes landed."""
from __future__ import annotations

import ssl
from dataclasses import dataclass
from functools import cache

from aiohttp import web

from ctxproxy.proxy.edge.server import APP_STATE


@dataclass
class Proxy:
    url: str
    app: web.Application
    runner: web.AppRunner | None = None

    @property
    def state(self):
        return self.app[APP_STATE]

    def settled_store(self):
        """The store once this proxy's queued background writes have landed."""
        self.state.services["writer"].flush()
        return self.state.services["store"]

    def anthropic(self, **kw):
        import anthropic

        if "http_client" not in kw:
            kw["http_client"] = anthropic.DefaultAsyncHttpxClient(verify=_tls())
        return anthropic.AsyncAnthropic(base_url=self.url, api_key=kw.pop("api_key", "sk-ant-test"),
                                        max_retries=0, **kw)

    def openai(self, **kw):
        import openai

        if "http_client" not in kw:
            kw["http_client"] = openai.DefaultAsyncHttpxClient(verify=_tls())
        return openai.AsyncOpenAI(base_url=self.url + "/v1", api_key=kw.pop("api_key", "sk-test"), max_retries=0,
                                  **kw)


@cache
def _tls() -> ssl.SSLContext:
    """One TLS context for every SDK client (the SDK's own HTTP client, its defaults): each client
    loaded the CA bundle anew, ~40 ms, and the proxy here is plain HTTP on 127.0.0.1 anyway."""
    return ssl.create_default_context()
