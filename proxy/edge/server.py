"""The aiohttp application: routes, app-wide objects, start and stop.

App-wide objects (the pooled upstream ``ClientSession``, the pipelines, the
store) are created in ``cleanup_ctx`` after the worker process starts — never
inherited across ``fork()`` (LMDB must be opened after it).

Stopping (SIGTERM / SIGINT) is bounded: the listening socket closes, requests
in flight get ``server.shutdown_timeout`` seconds to finish, then their
upstream calls are cut — a streaming client gets an error event in its API
format, a waiting one an error response — and a handler still running
``CUT_GRACE`` seconds later is cancelled. Then the upstream session, the
pipelines, the store's background writer (which commits what is queued) and
the store close, in that order.
"""
from __future__ import annotations

import asyncio
import functools
import importlib
import logging
import os
import signal
import socket
import sys
from pathlib import Path
from typing import Any, Mapping

import aiohttp
from aiohttp import web

from ctxproxy.config import Config, ConfigError
from ctxproxy.filters import Services, filter_configs
from ctxproxy.store import StoreError, StoreUnavailable

from ..admin.app import add_admin_routes
from .app_state import APP_STATE, AppState, InFlight, version
from ..auth import KeyRefusal, peer_of, warn_if_open
from ..engine import engine_for
from ..event_loop import LoopUnavailable, loop_factory, loop_name, run_on
from .errors import error_response, family_api, refusal_response, response_for
from .relay import Relay
from ..routing import Router
from ..services import ServeError, close_services, given_services, open_services, settle_heap
from ..telemetry import close_telemetry
from .websocket import handle_ws, is_upgrade

log = logging.getLogger("ctxproxy")

# Modules that register admin endpoints with ``admin.admin_route`` on import.
ADMIN_MODULES: tuple[str, ...] = ("ctxproxy.proxy.admin.pruned", "ctxproxy.proxy.admin.manifests",
                                  "ctxproxy.proxy.admin.effects", "ctxproxy.proxy.admin.memory",
                                  "ctxproxy.proxy.admin.recall", "ctxproxy.proxy.admin.keys",
                                  "ctxproxy.proxy.admin.learn")


# After in-flight upstream calls are cut at shutdown, the seconds a handler has to
# write its error event before it is cancelled (aiohttp waits this long twice at most).
CUT_GRACE = 2.0




def start_learning(cfg: Config, services: dict[str, Any]) -> Any:
    """The learning job in the background (``[learn] enabled``): it reads quiet
    sessions and proposes, in a child process per pass, off the event loop and
    off the turn path."""
    store = services.get("store")
    if not cfg.learn.enabled or store is None:
        return None
    if cfg.learn.model:  # a route it cannot call stops start-up here, not each pass in the child
        from ctxproxy.store.services.learning.model import endpoint

        route = cfg.learn.model.split(":", 1)[0]
        log.info("learn: the model-backed extractor calls %s through route %s", endpoint(cfg, route).url, route)
    from ctxproxy.store.services.learning.background import Background

    job = Background(store_opener(cfg), cfg, services.get("data_dir") or cfg.server.data_dir)
    job.start()
    return job


def store_opener(cfg: Config) -> Any:
    """How another process opens this proxy's store (a picklable function of no arguments)."""
    from ctxproxy.store import open_store

    return functools.partial(open_store, str(Path(cfg.server.data_dir) / "store"),
                             map_size=cfg.store.map_size_mb * 1024 * 1024,
                             max_map_size=cfg.store.max_map_size_mb * 1024 * 1024,
                             pending_timeout=cfg.store.pending_timeout)


def make_app(cfg: Config, services: Services | Mapping[str, Any] | None = None) -> web.Application:
    # Bodies stay as the client sent them: a pass-through forwards them byte for byte, with
    # their Content-Encoding; the relay decodes a model call's body itself.
    app = web.Application(client_max_size=cfg.server.max_body_bytes,
                          handler_args={"max_field_size": 65536, "auto_decompress": False})
    router = Router(cfg)
    filter_configs(cfg)  # a bad filter section fails here, before serving

    async def lifecycle(app: web.Application):
        svc = given_services(cfg, services) if services is not None else open_services(cfg)
        engine = None
        session = None
        learning = None
        try:
            routes = router.routes
            engine = engine_for(cfg, svc, routes=routes)
            inflight = InFlight()
            session = aiohttp.ClientSession(
                connector=aiohttp.TCPConnector(limit=cfg.upstream.pool_size, enable_cleanup_closed=True),
                timeout=aiohttp.ClientTimeout(total=None, connect=cfg.upstream.connect_timeout,
                                              sock_read=cfg.upstream.read_timeout),
                auto_decompress=False, skip_auto_headers=("User-Agent", "Accept-Encoding"),
                # Shared by every caller: a provider's Set-Cookie goes back to the client that got it
                # and is never kept here to ride along on another caller's requests.
                cookie_jar=aiohttp.DummyCookieJar(),
            )
            relay = Relay(session, engine)
            app[APP_STATE] = AppState(cfg, router, relay, routes, svc, inflight, keyring=svc.keyring)
            learning = start_learning(cfg, svc)
            if learning is not None:
                app[APP_STATE].turns = learning.turns
            yield
        finally:  # after serving, or when start-up failed half-way: nothing is left open
            try:
                if learning is not None:
                    await asyncio.to_thread(learning.stop)
                if session is not None:
                    await session.close()
                if engine is not None:
                    await asyncio.to_thread(engine.close)
            finally:  # whatever failed above, queued records still reach the store
                if services is None:
                    await asyncio.to_thread(close_services, svc)
                    await close_telemetry(svc.telemetry)

    async def drain(app: web.Application) -> None:
        """on_shutdown (the listening socket is closed): let requests in flight
        finish for ``server.shutdown_timeout`` seconds, then cut their upstream calls
        so each ends now with an error in its caller's format."""
        st = app.get(APP_STATE)
        if st is None:
            return
        grace = cfg.server.shutdown_timeout
        if st.inflight.count:
            log.info("shutting down: %d request(s) in flight, waiting up to %gs", st.inflight.count, grace)
        if not await st.inflight.wait_idle(grace):
            log.warning("shutting down: cutting %d request(s) still in flight after %gs (server.shutdown_timeout)",
                        st.inflight.count, grace)
            await st.relay.cut_upstream()

    app.cleanup_ctx.append(lifecycle)
    app.on_shutdown.append(drain)
    app.router.add_get("/ctx/healthz", healthz)
    app.router.add_get("/healthz", healthz)  # where a newcomer and most probes look first: answered here too
    app.router.add_get("/", root)  # agents probe it (Claude Code sends HEAD /); answer locally
    for module in ADMIN_MODULES:
        importlib.import_module(module)
    add_admin_routes(app, lambda: cfg.admin_token, cfg.server.admin_loopback_only)
    app.router.add_route("*", "/{tail:.*}", proxy_handler)
    return app


async def healthz(request: web.Request) -> web.Response:
    """200 when the proxy can serve; with a networked store, which state the
    database is in, and 503 while it is down and model calls are refused."""
    st = request.app[APP_STATE]
    body: dict[str, Any] = {"status": "ok", "version": st.version, "pid": st.pid}
    health = getattr(st.services.get("store"), "health", None)
    if health is None:
        return web.json_response(body)
    body["store"] = store = await asyncio.to_thread(health)
    if store.get("database") == "up":
        return web.json_response(body)
    closed = st.config.store.on_unavailable == "fail_closed"
    body["status"] = "unavailable" if closed else "degraded"
    body["model_calls"] = "refused (503)" if closed else "forwarded unrecorded"
    return web.json_response(body, status=503 if closed else 200)


def store_refusal(st: Any, api: str) -> web.Response | None:
    """503 in the caller's format while the store's database is down (``fail_closed``), else None."""
    available = getattr(st.services.get("store"), "available", None)
    if available is None or st.config.store.on_unavailable != "fail_closed" or available():
        return None
    return response_for(StoreUnavailable("database down"), api)


async def root(request: web.Request) -> web.Response:
    return web.json_response({"service": "ctxproxy", "status": "ok"})


async def proxy_handler(request: web.Request) -> web.StreamResponse:
    st = request.app[APP_STATE]
    try:
        match = st.router.match(request.rel_url.raw_path, request.method, request.headers)
    except Exception as exc:  # a path the router cannot read is still answered cleanly
        return response_for(exc, "chat")
    if match.api is not None and (refused := store_refusal(st, match.api)) is not None:
        return refused  # nothing goes upstream unrecorded
    if st.keyring.required:  # before anything is read or forwarded
        try:
            principal = st.keyring.authenticate(request.headers, peer_of(request.transport), match.route)
        except StoreUnavailable as exc:  # the key cannot be checked: refused, never let through
            return response_for(exc, family_api(match.api, match.route.family))
        if isinstance(principal, KeyRefusal):
            return refusal_response(principal, family_api(match.api, match.route.family))
        # the tenant's provider key, if it has one; the principal rides on to the turn
        match = match._replace(route=st.keyring.route_for(principal, match.route), principal=principal)
    if is_upgrade(request):
        try:
            with st.inflight:
                return await handle_ws(request, match, st.relay)
        except asyncio.CancelledError:
            raise
        except Exception as exc:
            log.exception("websocket proxy failed")
            return response_for(exc, "responses")
    with st.inflight, st.turns:
        return await st.relay.handle(request, match)


# -- running -------------------------------------------------------------------

async def serve_forever(cfg: Config, reuse_port: bool = False, ready: Any = None,
                        signals: tuple[int, ...] = (signal.SIGINT, signal.SIGTERM)) -> None:
    """Serve until one of ``signals``, then stop within about
    ``server.shutdown_timeout + 2 * CUT_GRACE`` seconds (a second signal skips the wait).
    Raises ``ServeError`` (or ``ConfigError``) when it cannot start."""
    stop = asyncio.Event()
    loop = asyncio.get_running_loop()
    installed = []
    for sig in signals:  # before start-up: a signal during it stops cleanly too
        try:
            loop.add_signal_handler(sig, stop.set)
            installed.append(sig)
        except (NotImplementedError, RuntimeError):
            pass
    app = make_app(cfg)
    runner = web.AppRunner(app, handler_cancellation=True, access_log=None, shutdown_timeout=CUT_GRACE)
    try:
        try:
            await runner.setup()
        except StoreError as exc:
            raise ServeError(f"cannot open the store in {cfg.server.data_dir}: {exc}") from None
        except OSError as exc:
            raise ServeError(f"cannot start: {_os_error(exc)}") from None
        settle_heap()
        site = web.TCPSite(runner, cfg.server.host, cfg.server.port, reuse_port=reuse_port or None,
                           backlog=1024)
        try:
            await site.start()
        except OSError as exc:
            why = os.strerror(exc.errno) if exc.errno else str(exc)
            raise ServeError(f"cannot listen on {cfg.server.host}:{cfg.server.port}: {why}") from None
        log.info("ctxproxy %s listening on http://%s:%d (pid %d), event loop %s", version(), cfg.server.host,
                 cfg.server.port, os.getpid(), loop_name(loop))
        warn_if_open(cfg)
        if ready is not None:
            ready()
        await stop.wait()
        log.info("ctxproxy stopping (pid %d)", os.getpid())
        st = app.get(APP_STATE)

        cutting: set[asyncio.Task] = set()  # the loop keeps only weak references to tasks

        def hurry() -> None:  # a second signal: no more waiting for requests in flight
            if st is not None and st.inflight.count:
                log.warning("second signal: cutting requests in flight now")
                task = loop.create_task(st.relay.cut_upstream())
                cutting.add(task)
                task.add_done_callback(cutting.discard)

        for sig in installed:
            loop.add_signal_handler(sig, hurry)
    finally:
        await runner.cleanup()
        for sig in installed:
            loop.remove_signal_handler(sig)


def _os_error(exc: OSError) -> str:
    if exc.filename is not None and exc.strerror:
        return f"{exc.filename}: {exc.strerror}"
    return exc.strerror or str(exc)


LOG_FORMAT = "%(asctime)s %(levelname)s %(name)s[%(process)d] %(message)s"


def _worker(cfg: Config, log_level: str, ready: Any) -> None:
    """One of ``--workers`` processes: SIGTERM from the parent stops it gracefully;
    SIGINT (a terminal's Ctrl-C reaches the whole group) is left to the parent, which
    forwards it as SIGTERM. Exit code 1 (2 for bad config) when it cannot start."""
    signal.signal(signal.SIGINT, signal.SIG_IGN)
    logging.basicConfig(level=log_level, format=LOG_FORMAT)
    try:
        run_on(cfg.server.loop, serve_forever(cfg, reuse_port=True, ready=ready.set, signals=(signal.SIGTERM,)))
    except ConfigError as exc:
        log.error("config error: %s", exc)
        sys.exit(2)
    except ServeError as exc:
        log.error("%s", exc)
        sys.exit(1)


def run(cfg: Config, log_level: str = "INFO") -> int:
    """Serve in this process, or in ``workers`` processes sharing one port.
    Returns the exit code: 0 after a signal stopped every process cleanly, else
    non-zero (a worker that could not start or died takes the others down)."""
    try:
        loop_factory(cfg.server.loop)  # stops here, not in each worker, when the configured loop is missing
    except LoopUnavailable as exc:
        raise ServeError(str(exc)) from None
    if cfg.server.workers <= 1:
        run_on(cfg.server.loop, serve_forever(cfg))
        return 0
    if not hasattr(socket, "SO_REUSEPORT"):
        raise ServeError("--workers needs SO_REUSEPORT, which this platform lacks")
    import multiprocessing as mp
    from multiprocessing.connection import wait

    ctx = mp.get_context("spawn")  # each worker opens its own LMDB env and sockets
    ready = [ctx.Event() for _ in range(cfg.server.workers)]
    procs = [ctx.Process(target=_worker, args=(cfg, log_level, ev), daemon=False, name=f"ctxproxy-worker-{i + 1}")
             for i, ev in enumerate(ready)]
    stopping = False

    def stop(*_: Any) -> None:
        nonlocal stopping
        if not stopping:
            stopping = True
            log.info("stopping %d workers", len(procs))
        for p in procs:  # a second signal goes on too: the workers cut what is in flight
            if p.is_alive():
                p.terminate()

    old = {sig: signal.signal(sig, stop) for sig in (signal.SIGTERM, signal.SIGINT)}
    failed: list[str] = []
    try:
        for p in procs:
            p.start()
        alive = list(procs)
        while alive:
            done = wait([p.sentinel for p in alive], timeout=0.5)
            for p in [p for p in alive if p.sentinel in done]:
                p.join()
                alive.remove(p)
                i = procs.index(p)
                if stopping and p.exitcode in (0, -signal.SIGTERM):  # stopped (SIGTERM while importing)
                    continue
                when = "while serving" if ready[i].is_set() else "before it was ready"
                code = p.exitcode if p.exitcode >= 0 else f"signal {-p.exitcode}"
                failed.append(f"worker {i + 1} (pid {p.pid}) exited {when} with code {code}")
                if not stopping:
                    log.error("%s; stopping the other workers", failed[-1])
                    stop()
        for p in procs:
            p.join()
    finally:
        for sig, handler in old.items():
            signal.signal(sig, handler)
    if failed:
        raise ServeError("; ".join(failed))
    return 0


__all__ = ["APP_STATE", "AppState", "ServeError", "make_app", "run", "serve_forever", "error_response",
           "family_api"]
