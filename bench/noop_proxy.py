"""A minimal no-op aiohttp reverse proxy: the baseline that bench/run.py compares ctxproxy with.

    python bench/noop_proxy.py --port 8790 --upstream http://127.0.0.1:8089

One pooled ClientSession; forwards method, raw path+query, headers (minus
hop-by-hop) and body; streams the answer back chunk by chunk as it arrives.
No parsing, no filtering: what any reverse proxy written with aiohttp costs.
"""
from __future__ import annotations

import argparse

import aiohttp
from aiohttp import web
from multidict import CIMultiDict
from yarl import URL

HOP_BY_HOP = frozenset({"connection", "keep-alive", "proxy-authenticate", "proxy-authorization", "te",
                        "trailer", "trailers", "transfer-encoding", "upgrade", "host", "content-length"})
SESSION = web.AppKey("session", aiohttp.ClientSession)
UPSTREAM = web.AppKey("upstream", str)


def _strip(headers) -> CIMultiDict:
    return CIMultiDict((k, v) for k, v in headers.items() if k.lower() not in HOP_BY_HOP)


async def handle(request: web.Request) -> web.StreamResponse:
    body = await request.read()
    url = URL(request.app[UPSTREAM] + request.raw_path, encoded=True)
    async with request.app[SESSION].request(request.method, url, headers=_strip(request.headers),
                                            data=body or None, allow_redirects=False) as up:
        resp = web.StreamResponse(status=up.status, reason=up.reason, headers=_strip(up.headers))
        await resp.prepare(request)
        async for chunk in up.content.iter_any():
            await resp.write(chunk)
        await resp.write_eof()
        return resp


def make_app(upstream: str) -> web.Application:
    app = web.Application(client_max_size=64 * 1024 * 1024)
    app[UPSTREAM] = upstream.rstrip("/")

    async def session_ctx(app: web.Application):
        app[SESSION] = aiohttp.ClientSession(
            connector=aiohttp.TCPConnector(limit=256), auto_decompress=False,
            timeout=aiohttp.ClientTimeout(total=None, sock_read=600),
            skip_auto_headers=("User-Agent", "Accept-Encoding"))
        yield
        await app[SESSION].close()

    app.cleanup_ctx.append(session_ctx)
    app.router.add_route("*", "/{tail:.*}", handle)
    return app


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--host", default="127.0.0.1")
    ap.add_argument("--port", type=int, default=8790)
    ap.add_argument("--upstream", required=True, help="base URL, e.g. http://127.0.0.1:8089")
    args = ap.parse_args()
    web.run_app(make_app(args.upstream), host=args.host, port=args.port, access_log=None, print=None,
                backlog=1024)


if __name__ == "__main__":
    main()
