"""Transparent mode's process: mitmproxy started programmatically with our addon.

The same config, store and telemetry as ``serve`` (``open_services``): both
can run at once on one data directory (LMDB takes many processes). mitmproxy
runs with its default addons — proxy server, TLS, upstream verification — plus
ours: ``DumpMaster``'s set without its console dump, its stdin flow reader and
its error check (a ``sys.exit`` on a start-up error; we raise ``ServeError``). Options set here:

- ``confdir``: where mitmproxy finds its CA (``ca.ensure_ca`` made it);
- ``connection_strategy = "eager"``: CONNECT dials the provider first, so a
  provider that does not answer fails the client's CONNECT (a connection
  error, as without a proxy) instead of a mitmproxy error page later;
- ``ssl_verify_upstream_trusted_ca``: ``[mitm] upstream_ca`` when set
  (a private gateway, the tests' fake provider);
- ``http2``: ``[mitm] http2``.
"""
from __future__ import annotations

import asyncio
import logging
import signal
import threading
from typing import Any

from ctxproxy.config import Config
from ctxproxy.filters import Services

from ..engine import engine_for
from ..event_loop import loop_factory, loop_name
from .ca import confdir, ensure_ca
from .hosts import HostRouter
from ..routing import Router
from ..services import ServeError, close_services, given_services, open_services, settle_heap
from ..version import version
from ..telemetry import close_telemetry

log = logging.getLogger("ctxproxy.mitm")


class MitmProxy:
    """One transparent proxy on the running loop: ``await start()``, ``port``,
    ``await stop()``. ``services`` shares an open store (and its writer) with
    a ``serve`` in the same process; by default it opens its own."""

    def __init__(self, cfg: Config, services: Services | None = None, addons: tuple = (),
                 options: dict[str, Any] | None = None):
        self.cfg = cfg
        self._given = services
        self.services: Services | None = None
        self.engine: Any = None
        self.extra_addons = addons  # the benchmark's empty addon instead of ours: addons=(x,), ours=False
        self.extra_options = options or {}  # mitmproxy options over ours (a test's reverse-mode provider front)
        self.master: Any = None
        self.port = 0
        self._task: asyncio.Task | None = None

    async def start(self, ours: bool = True) -> "MitmProxy":
        from mitmproxy import addons, options
        from mitmproxy.addons import keepserving, readfile
        from mitmproxy.master import Master

        from .addon import CtxproxyAddon

        cfg = self.cfg
        ensure_ca(cfg)
        router = Router(cfg)
        hosts = HostRouter(cfg, router)
        # keys mode is checked as serve checks it (the keyring is one of the services)
        self.services = given_services(cfg, self._given) if self._given is not None else open_services(cfg)
        self.engine = engine_for(cfg, self.services, routes=router.routes)  # no transport: mitmproxy forwards
        addon = CtxproxyAddon(cfg, self.engine, hosts)
        opts = options.Options(listen_host=cfg.mitm.host, listen_port=cfg.mitm.port, confdir=str(confdir(cfg)))
        # What DumpMaster runs, less its flow dump, its stdin flow reader and its error
        # check (which calls sys.exit on a start-up error; ours raises ServeError instead).
        self.master = Master(opts, with_termlog=False)
        self.master.addons.add(*addons.default_addons(), keepserving.KeepServing(), readfile.ReadFile())
        self.master.addons.add(*(self.extra_addons or ()), *((addon,) if ours else ()), _Ready())
        self.master.options.update(**{"connection_strategy": "eager", "http2": cfg.mitm.http2,
                                      "ssl_verify_upstream_trusted_ca": cfg.mitm.upstream_ca or None,
                                      **self.extra_options})
        ready = self.master.addons.get("_ready").event
        self._task = asyncio.ensure_future(self.master.run())
        waiter = asyncio.ensure_future(ready.wait())
        await asyncio.wait({self._task, waiter}, return_when=asyncio.FIRST_COMPLETED)
        waiter.cancel()
        addrs = self.master.addons.get("proxyserver").listen_addrs() if not self._task.done() else []
        if not addrs:
            await self.stop()
            raise ServeError(f"cannot listen on {cfg.mitm.host}:{cfg.mitm.port} (see the log above)")
        self.port = addrs[0][1]
        log.info("ctxproxy %s transparent mode on http://%s:%d (CA in %s, event loop %s); intercepting %s",
                 version(), cfg.mitm.host, self.port, confdir(cfg), loop_name(asyncio.get_running_loop()),
                 ", ".join(hosts.hosts()))
        _log_passthrough(cfg, hosts)
        return self

    async def stop(self) -> None:
        if self.master is not None and self._task is not None:
            self.master.shutdown()
            try:
                await asyncio.wait_for(asyncio.shield(self._task), 10)
            except (asyncio.TimeoutError, SystemExit):
                self._task.cancel()
            except Exception:
                log.exception("mitmproxy stopped with an error")
            self._task = None
        if self.engine is not None:
            await asyncio.to_thread(self.engine.close)
            self.engine = None
        if self._given is None and self.services is not None:
            await asyncio.to_thread(close_services, self.services)
            await close_telemetry(self.services.telemetry)
            self.services = None


def _log_passthrough(cfg: Config, hosts: HostRouter) -> None:
    """What goes through unfiltered, said once at start-up (nothing, by default)."""
    if hosts.passthrough:
        log.warning("passthrough: connections to %s go through UNFILTERED, undecrypted ([mitm] passthrough)",
                    ", ".join(hosts.passthrough))
    if hosts.needless_passthrough:
        log.warning("[mitm] passthrough names %s, which no route and no [mitm] hosts entry names: "
                    "it was never decrypted", ", ".join(hosts.needless_passthrough))
    if cfg.mitm.passthrough_programs:
        log.warning("passthrough: connections from %s go through UNFILTERED, undecrypted "
                    "([mitm] passthrough_programs)", ", ".join(cfg.mitm.passthrough_programs))
    if not (hosts.passthrough or cfg.mitm.passthrough_programs):
        log.info("passthrough: none; a client that refuses the certificate keeps failing")


class _Ready:
    """Set once mitmproxy's servers are up (its ``running`` hook)."""

    name = "_ready"

    def __init__(self) -> None:
        self.event = asyncio.Event()

    def running(self) -> None:
        self.event.set()


async def serve_mitm(cfg: Config, signals: tuple[int, ...] = (signal.SIGINT, signal.SIGTERM)) -> None:
    stop = asyncio.Event()
    loop = asyncio.get_running_loop()
    for sig in signals:
        loop.add_signal_handler(sig, stop.set)
    proxy = MitmProxy(cfg)
    await proxy.start()
    settle_heap()  # as serve does
    try:
        await stop.wait()
        log.info("ctxproxy transparent mode stopping")
    finally:
        await proxy.stop()


async def _cancel_the_rest() -> None:
    """Connections still open when the loop stops: their tasks end before it closes."""
    rest = [t for t in asyncio.all_tasks() if t is not asyncio.current_task()]
    for task in rest:
        task.cancel()
    await asyncio.gather(*rest, return_exceptions=True)


class MitmThread:
    """A transparent proxy on its own loop in a background thread (tests):
    ``start()`` returns once it listens; ``stop()``. One per process at a time:
    mitmproxy keeps its master and options in process-wide globals (``ctx``)."""

    def __init__(self, cfg: Config, **kwargs: Any):
        self.cfg = cfg
        self.kwargs = kwargs
        self.ours = kwargs.pop("ours", True)
        self.proxy: MitmProxy | None = None
        self.loop: asyncio.AbstractEventLoop | None = None
        self._thread: threading.Thread | None = None
        self._started = threading.Event()
        self._error: BaseException | None = None

    def start(self) -> MitmProxy:
        self._thread = threading.Thread(target=self._run, name="ctxproxy-mitm", daemon=True)
        self._thread.start()
        self._started.wait(60)
        if self._error is not None:
            raise self._error
        assert self.proxy is not None
        return self.proxy

    def _run(self) -> None:
        try:
            factory = loop_factory(self.cfg.server.loop)  # the loop `ctxproxy mitm` would run on
            self.loop = factory() if factory is not None else asyncio.new_event_loop()
            asyncio.set_event_loop(self.loop)
            self.proxy = MitmProxy(self.cfg, **self.kwargs)
            self.loop.run_until_complete(self.proxy.start(self.ours))
        except BaseException as exc:
            self._error = exc
            self._started.set()
            return
        self._started.set()
        self.loop.run_forever()
        try:
            self.loop.run_until_complete(self.proxy.stop())
            self.loop.run_until_complete(_cancel_the_rest())
            self.loop.run_until_complete(self.loop.shutdown_asyncgens())
        finally:
            self.loop.close()

    def stop(self) -> None:
        if self.loop is not None and self._thread is not None and self._thread.is_alive():
            self.loop.call_soon_threadsafe(self.loop.stop)
            self._thread.join(30)

    def __enter__(self) -> MitmProxy:
        return self.start()

    def __exit__(self, *exc: Any) -> None:
        self.stop()
