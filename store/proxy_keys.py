"""Proxy keys: the principals that may call through the proxy, stored hashed.

A key reads ``ctxk_<id>_<secret>``: the id (16 hex digits) finds the record,
the secret (32 random bytes, url-safe base64) proves it. Only the sha256 of
the secret is stored; a key cannot be shown again after ``create``.

Database ``proxy_keys`` (not tenant-prefixed: a key is found by its id before
anyone knows its tenant; listing by tenant goes through its own index)::

    "i" \\x00 id                  -> record (principal, digest, times)
    "t" \\x00 tenant \\x00 id      -> b""  (a tenant's keys)
    "generation"                 -> 8-byte big-endian counter

Every create and revoke bumps ``generation`` in the same transaction, so a
process that caches keys (each ``--workers`` process does) checks one value
per request and drops its cache when it moved: a revocation is seen by every
process on its next request. The value checked per request is a mirror of
``generation`` in ``proxy_keys.gen`` beside the environment, mmap'd by every
process (a memory load, where an LMDB read transaction costs microseconds on
every request). Writers raise it after their commit, under a file lock and
never downwards; readers compare it with LMDB once a second and raise it if a
writer died between its commit and the mirror write, so that case is bounded
to a second.
"""
from __future__ import annotations

import base64
import fcntl
import hashlib
import hmac
import mmap
import os
import re
import secrets
import time
from dataclasses import asdict, dataclass, field
from typing import Any, Callable, Protocol, Sequence, TypeVar

import orjson

from . import keys
from .errors import StoreError

PROXY_KEYS = "proxy_keys"
KEY_PREFIX = "ctxk_"
_ID_RE = re.compile(r"[0-9a-f]{16}\Z")
_GENERATION = b"generation"
RECORD_VERSION = 1
MIRROR_FILE = "proxy_keys.gen"
MIRROR_CHECK = 1.0  # seconds between a reader's comparisons of the mirror with LMDB

T = TypeVar("T")


@dataclass(frozen=True)
class Principal:
    """Who a proxy key speaks for: always a tenant, optionally one user, and
    what it may name (empty tuple = anything)."""

    key_id: str
    tenant: str
    user: str = ""
    projects: tuple[str, ...] = ()
    purposes: tuple[str, ...] = ()
    routes: tuple[str, ...] = ()
    admin: bool = False  # may use the admin API, for its own tenant only


@dataclass(frozen=True)
class ProxyKey:
    principal: Principal
    digest: bytes = field(repr=False)
    created_at: float = 0.0
    expires_at: float | None = None
    revoked_at: float | None = None

    @property
    def id(self) -> str:
        return self.principal.key_id

    def matches(self, secret: str) -> bool:
        """Constant-time comparison of ``secret``'s digest with the stored one."""
        return hmac.compare_digest(secret_digest(secret), self.digest)

    def state(self, now: float) -> str:
        if self.revoked_at is not None:
            return "revoked"
        if self.expires_at is not None and now >= self.expires_at:
            return "expired"
        return "active"

    def to_dict(self, now: float) -> dict[str, Any]:
        """JSON form for listings: the principal and times, never the digest."""
        out = asdict(self.principal)
        out["id"] = out.pop("key_id")
        for name in ("projects", "purposes", "routes"):
            out[name] = list(out[name])
        out.update(created_at=self.created_at, expires_at=self.expires_at, revoked_at=self.revoked_at,
                   state=self.state(now))
        return out


def secret_digest(secret: str) -> bytes:
    return hashlib.sha256(secret.encode("utf-8", "surrogatepass")).digest()


KEY_LENGTH = len(KEY_PREFIX) + 16 + 1 + 43


def split_key(presented: str) -> tuple[str, str] | None:
    """(id, secret) of a string shaped like a proxy key, by position: the id is
    checked where it is looked up, the secret by comparison (no regex per request)."""
    if len(presented) != KEY_LENGTH or not presented.startswith(KEY_PREFIX) or presented[21] != "_" \
            or not presented.isascii():  # compare_digest takes ASCII strings only
        return None
    return presented[5:21], presented[22:]


def _new_key() -> tuple[str, str]:
    key_id = secrets.token_hex(8)
    secret = base64.urlsafe_b64encode(secrets.token_bytes(32)).rstrip(b"=").decode()
    return key_id, secret


def mint(tenant: str, now: float, *, user: str = "", projects: Sequence[str] = (), purposes: Sequence[str] = (),
         routes: Sequence[str] = (), admin: bool = False, expires_at: float | None = None) -> tuple[ProxyKey, str]:
    """A new key for this principal (every backend's ``create``): its record, and the key itself."""
    keys.check_tenant(tenant)
    if not isinstance(user, str):
        raise StoreError("user must be a string")
    key_id, secret = _new_key()
    principal = Principal(key_id, tenant, user, _names(projects, "projects"), _names(purposes, "purposes"),
                          _names(routes, "routes"), bool(admin))
    return ProxyKey(principal, secret_digest(secret), now, expires_at), f"{KEY_PREFIX}{key_id}_{secret}"


def revoked(rec: ProxyKey, tenant: str | None, now: float) -> tuple[ProxyKey | None, bool]:
    """(the key after a revoke by a caller of ``tenant`` (None: the operator), whether it changed):
    another tenant's key is no key at all; revoking twice keeps the first time."""
    if tenant is not None and rec.principal.tenant != tenant:
        return None, False
    if rec.revoked_at is not None:
        return rec, False
    return ProxyKey(rec.principal, rec.digest, rec.created_at, rec.expires_at, now), True


class _Runner(Protocol):
    def read(self, op: Callable[[Any], T]) -> T: ...
    def write(self, op: Callable[[Any], T]) -> T: ...


def _id_key(key_id: str) -> bytes:
    return b"i" + keys.SEP + key_id.encode()


def _tenant_prefix(tenant: str) -> bytes:
    return b"t" + keys.SEP + keys.tenant_prefix(tenant)


def _names(values: Sequence[str], what: str) -> tuple[str, ...]:
    if isinstance(values, str):
        raise StoreError(f"{what} must be a list of strings, not a string")
    out = tuple(dict.fromkeys(values))
    for v in out:
        if not isinstance(v, str) or not v:
            raise StoreError(f"{what}: every entry must be a non-empty string")
    return out


def _record(raw: bytes) -> ProxyKey:
    try:
        r = orjson.loads(raw)
        p = Principal(key_id=r["id"], tenant=r["tenant"], user=r.get("user") or "",
                      projects=tuple(r.get("projects") or ()), purposes=tuple(r.get("purposes") or ()),
                      routes=tuple(r.get("routes") or ()), admin=bool(r.get("admin")))
        return ProxyKey(p, bytes.fromhex(r["digest"]), r["created_at"], r.get("expires_at"), r.get("revoked_at"))
    except (orjson.JSONDecodeError, KeyError, TypeError, ValueError) as exc:
        raise StoreError(f"corrupt proxy key record: {exc}") from exc


def _dump(k: ProxyKey) -> bytes:
    p = k.principal
    return orjson.dumps({"v": RECORD_VERSION, "id": p.key_id, "tenant": p.tenant, "user": p.user,
                         "projects": p.projects, "purposes": p.purposes, "routes": p.routes, "admin": p.admin,
                         "digest": k.digest.hex(), "created_at": k.created_at, "expires_at": k.expires_at,
                         "revoked_at": k.revoked_at})


def _bump(txn: Any, db: Any) -> None:
    raw = txn.get(_GENERATION, db=db)
    n = int.from_bytes(raw, "big") if raw else 0
    txn.put(_GENERATION, (n + 1).to_bytes(8, "big"), db=db)


class _Mirror:
    """The 8-byte mirror of the generation, shared by every process through the file."""

    def __init__(self, path: str):
        self._fd = os.open(path, os.O_RDWR | os.O_CREAT, 0o600)
        if os.fstat(self._fd).st_size < 8:
            os.ftruncate(self._fd, 8)  # a no-op when another process got there first
        self._map = mmap.mmap(self._fd, 8)
        self.checked = 0.0  # monotonic time of the last comparison with LMDB

    def close(self) -> None:
        self._map.close()
        os.close(self._fd)

    def read(self) -> int:
        return int.from_bytes(self._map[:8], "big")

    def raise_to(self, generation: int) -> None:
        fcntl.flock(self._fd, fcntl.LOCK_EX)  # two writers: the later commit's value stays
        try:
            if generation > self.read():
                self._map[:8] = generation.to_bytes(8, "big")
        finally:
            fcntl.flock(self._fd, fcntl.LOCK_UN)


_mirrors: dict[int, _Mirror | None] = {}  # id(environment) -> its mirror (None: read LMDB instead)


def _mirror(env: Any) -> _Mirror | None:
    """The mirror of an open environment, opened with it once and closed with it."""
    key = id(env)
    if key not in _mirrors:
        mirror = None
        if not env.readonly:
            try:
                mirror = _Mirror(os.path.join(env.path, MIRROR_FILE))
            except OSError:  # then every check reads LMDB
                pass
        _mirrors[key] = mirror

        def forget() -> None:
            if _mirrors.pop(key, None) is not None:
                mirror.close()

        env.closers.append(forget)
    return _mirrors[key]


class KeyRules:
    """What every backend's ``ProxyKeyStore`` shares: a key is minted here and
    stored by the backend's ``_insert(record)``."""

    _clock: Callable[[], float]

    def _insert(self, record: ProxyKey) -> None:
        raise NotImplementedError

    def create(self, tenant: str, *, user: str = "", projects: Sequence[str] = (), purposes: Sequence[str] = (),
               routes: Sequence[str] = (), admin: bool = False,
               expires_at: float | None = None) -> tuple[ProxyKey, str]:
        """A new key for this principal: (its record, the key itself, shown this once)."""
        record, presented = mint(tenant, self._clock(), user=user, projects=projects, purposes=purposes,
                                 routes=routes, admin=admin, expires_at=expires_at)
        self._insert(record)
        return record, presented


class LMDBProxyKeys(KeyRules):
    """``ProxyKeyStore`` over the ``proxy_keys`` database. Write outside a
    ``batch()``: the mirror is raised when the write returns, committed."""

    def __init__(self, x: _Runner, env: Any, clock: Callable[[], float]) -> None:
        self._x = x
        self._db = env.dbs[PROXY_KEYS]
        self._clock = clock
        self._env = env

    def _insert(self, record: ProxyKey) -> None:
        def op(txn: Any) -> None:
            if not txn.put(_id_key(record.id), _dump(record), db=self._db, overwrite=False):
                raise StoreError("proxy key id collision; try again")
            txn.put(_tenant_prefix(record.principal.tenant) + record.id.encode(), b"", db=self._db)
            _bump(txn, self._db)

        self._x.write(op)
        self._publish()

    def get(self, key_id: str) -> ProxyKey | None:
        if not isinstance(key_id, str) or not _ID_RE.match(key_id):
            return None
        raw = self._x.read(lambda txn: txn.get(_id_key(key_id), db=self._db))
        return None if raw is None else _record(raw)

    def list(self, tenant: str | None = None) -> list[ProxyKey]:
        """Every key (``tenant``: that tenant's only), oldest first."""

        def op(txn: Any) -> list[ProxyKey]:
            cursor = txn.cursor(self._db)
            prefix = _tenant_prefix(tenant) if tenant is not None else b"i" + keys.SEP
            found = []
            if cursor.set_range(prefix):
                for k, v in cursor.iternext():
                    if not k.startswith(prefix):
                        break
                    raw = v if tenant is None else txn.get(_id_key(k[len(prefix):].decode()), db=self._db)
                    if raw is not None:
                        found.append(_record(raw))
            return sorted(found, key=lambda r: (r.created_at, r.id))

        return self._x.read(op)

    def revoke(self, key_id: str, tenant: str | None = None) -> ProxyKey | None:
        """Revoke a key (``tenant``: only if it is that tenant's). None when there
        is no such key for the caller; revoking twice keeps the first time."""
        if not isinstance(key_id, str) or not _ID_RE.match(key_id):
            return None

        def op(txn: Any) -> ProxyKey | None:
            raw = txn.get(_id_key(key_id), db=self._db)
            if raw is None:
                return None
            rec, changed = revoked(_record(raw), tenant, self._clock())
            if changed:
                txn.put(_id_key(key_id), _dump(rec), db=self._db)
                _bump(txn, self._db)
            return rec

        rec = self._x.write(op)
        if rec is not None:
            self._publish()
        return rec

    def _stored_generation(self) -> int:
        raw = self._x.read(lambda txn: txn.get(_GENERATION, db=self._db))
        return int.from_bytes(raw, "big") if raw else 0

    def _publish(self) -> None:
        mirror = _mirror(self._env)
        if mirror is not None:
            mirror.raise_to(self._stored_generation())

    def generation(self) -> int:
        """Changes with every create and revoke, in any process; cheap enough
        to call on every request."""
        mirror = _mirror(self._env)
        if mirror is None:
            return self._stored_generation()
        now = time.monotonic()
        if now - mirror.checked >= MIRROR_CHECK:  # a writer that died before raising the mirror
            mirror.checked = now
            mirror.raise_to(self._stored_generation())
        return mirror.read()
