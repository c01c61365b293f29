"""A PostgreSQL server for the tests: ``CTXPROXY_TEST_DSN`` if set, else a
throwaway cluster started here (initdb + pg_ctl under a temp dir, as the
``postgres`` OS user when the tests run as root), else a skip that says how
to get one. With ``CTXPROXY_REQUIRE_POSTGRES=1`` (CI) a missing server fails.

Each test gets a database of its own, made from a template that already
holds ctxproxy's schema (``CREATE DATABASE ... TEMPLATE``: milliseconds, where
applying the migrations each time would not be). The role the store connects
as is ``ctx``: an ordinary role (no superuser, no BYPASSRLS), so row-level
security applies as it does in production.
"""
from __future__ import annotations

import glob
import os
import pwd
import shutil
import subprocess
import tempfile
import uuid
from dataclasses import dataclass, field

HOW = ("no PostgreSQL server for the tests: set CTXPROXY_TEST_DSN=postgresql://USER@HOST:PORT/DB "
       "(a role that may CREATE DATABASE and CREATE ROLE), or install Debian's postgresql package "
       "(initdb and pg_ctl under /usr/lib/postgresql/*/bin) so the tests start a throwaway cluster")
APP_ROLE = "ctx"


def required() -> bool:
    return os.environ.get("CTXPROXY_REQUIRE_POSTGRES", "") not in ("", "0")


def _bindir() -> str | None:
    for d in sorted(glob.glob("/usr/lib/postgresql/*/bin"), reverse=True):
        if os.path.exists(os.path.join(d, "initdb")):
            return d
    found = shutil.which("initdb")
    return os.path.dirname(found) if found else None


def _as_postgres(cmd: list[str]) -> list[str]:
    if os.geteuid() != 0:
        return cmd
    return ["runuser", "-u", "postgres", "--", *cmd]


@dataclass
class PGServer:
    """An admin DSN (may create databases and roles) and how to make a test database."""

    admin_dsn: str
    host: str
    port: int
    stop: list = field(default_factory=list)
    template: str = ""

    def dsn(self, db: str, role: str = APP_ROLE) -> str:
        return f"postgresql://{role}@{self.host}:{self.port}/{db}"

    def admin(self, sql: str, db: str = "postgres") -> None:
        import psycopg

        dsn = self.admin_dsn.rsplit("/", 1)[0] + "/" + db
        with psycopg.connect(dsn, autocommit=True) as conn:
            conn.execute(sql)

    def prepare(self) -> None:
        """The app role and a template database with the schema applied by ``ctxproxy store upgrade``'s code."""
        from ctxproxy.store.postgres import upgrade

        import psycopg

        with psycopg.connect(self.admin_dsn, autocommit=True) as conn:
            if conn.execute("SELECT 1 FROM pg_roles WHERE rolname = %s", (APP_ROLE,)).fetchone() is None:
                conn.execute(f"CREATE ROLE {APP_ROLE} LOGIN NOSUPERUSER NOBYPASSRLS CREATEDB")
        self.template = f"ctx_template_{uuid.uuid4().hex[:8]}"
        self.admin(f"CREATE DATABASE {self.template} OWNER {APP_ROLE}")
        upgrade(self.dsn(self.template))

    def new_database(self) -> str:
        """A fresh database holding the current schema; its DSN as the app role."""
        name = f"ctx_{uuid.uuid4().hex[:12]}"
        self.admin(f"CREATE DATABASE {name} TEMPLATE {self.template} OWNER {APP_ROLE} STRATEGY FILE_COPY")
        return self.dsn(name)

    def drop_database(self, dsn: str) -> None:
        self.admin(f"DROP DATABASE IF EXISTS {dsn.rsplit('/', 1)[1]} WITH (FORCE)")

    def restart_stopped(self) -> None:
        """Stop the throwaway cluster as a crash would (``start_again`` brings it back)."""
        self.stop[1]()

    def start_again(self) -> None:
        self.stop[2]()

    def close(self) -> None:
        if self.stop:
            self.stop[0]()


def _throwaway() -> PGServer | None:
    from ctxproxy.proxy.ports import free_port

    bindir = _bindir()
    if bindir is None:
        return None
    if os.geteuid() == 0:
        try:
            pw = pwd.getpwnam("postgres")
        except KeyError:
            return None
    root = tempfile.mkdtemp(prefix="ctxproxy-pg-")
    data, sock = os.path.join(root, "data"), os.path.join(root, "sock")
    os.mkdir(sock)
    if os.geteuid() == 0:
        for p in (root, sock):
            os.chown(p, pw.pw_uid, pw.pw_gid)
    port = free_port()
    subprocess.run(_as_postgres([os.path.join(bindir, "initdb"), "-D", data, "-U", "postgres", "--auth=trust",
                                 "--no-sync", "-E", "UTF8", "--locale=C"]),
                   check=True, stdout=subprocess.DEVNULL, stderr=subprocess.PIPE)
    opts = (f"-c listen_addresses=127.0.0.1 -c port={port} -c unix_socket_directories={sock} "
            "-c fsync=off -c synchronous_commit=on -c full_page_writes=off -c max_connections=200 "
            "-c shared_buffers=64MB")
    pg_ctl = os.path.join(bindir, "pg_ctl")
    log = os.path.join(root, "server.log")

    def start() -> None:
        subprocess.run(_as_postgres([pg_ctl, "-D", data, "-l", log, "-o", opts, "-w", "-t", "60", "start"]),
                       check=True, stdout=subprocess.DEVNULL)

    def stop(mode: str = "fast") -> None:
        subprocess.run(_as_postgres([pg_ctl, "-D", data, "-m", mode, "-w", "-t", "60", "stop"]),
                       stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)

    def close() -> None:
        stop("immediate")
        shutil.rmtree(root, ignore_errors=True)

    start()
    return PGServer(admin_dsn=f"postgresql://postgres@127.0.0.1:{port}/postgres", host="127.0.0.1", port=port,
                    stop=[close, lambda: stop("immediate"), start])


def start() -> PGServer | None:
    """The server to test against, or None (then skip, or fail in CI)."""
    given = os.environ.get("CTXPROXY_TEST_DSN")
    if given:
        from urllib.parse import urlsplit

        u = urlsplit(given)
        return PGServer(admin_dsn=given, host=u.hostname or "127.0.0.1", port=u.port or 5432)
    return _throwaway()


# -- pytest fixtures (a test module imports them: ``from pgserver import pg_server, pg_dsn``) --------

import pytest  # noqa: E402


@pytest.fixture(scope="session")
def pg_server():
    try:
        server = start()
        if server is not None:
            server.prepare()
    except Exception as exc:  # a server that would not start is as good as none, but says why
        if required():
            raise
        pytest.skip(f"{HOW} ({type(exc).__name__}: {exc})")
    if server is None:
        if required():
            pytest.fail(HOW + " (CTXPROXY_REQUIRE_POSTGRES is set: CI never skips these)")
        pytest.skip(HOW)
    yield server
    server.close()


@pytest.fixture
def pg_dsn(pg_server):
    """A fresh database with the current schema, as the app role."""
    dsn = pg_server.new_database()
    yield dsn
    pg_server.drop_database(dsn)
