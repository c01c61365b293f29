"""Transparent mode's certificate authority, and what each agent must set to trust it.

The CA is created on first start under ``[mitm] confdir`` (default
``<data_dir>/mitm``) in mitmproxy's own file layout, so mitmproxy loads it as
its CA: ``mitmproxy-ca.pem`` (key and certificate, mode 0600) and
``mitmproxy-ca-cert.pem`` (the certificate alone: what clients trust).

Clients that take a single CA file (``SSL_CERT_FILE``, ``REQUESTS_CA_BUNDLE``)
get ``ca-bundle.pem`` instead: the public roots (certifi's) plus this CA. A
host passed through keeps its own certificate, so such a client must still
trust the public roots; ``NODE_EXTRA_CA_CERTS`` adds to Node's roots and takes
the CA alone.
"""
from __future__ import annotations

import os
from pathlib import Path

from ctxproxy.config import Config

BASENAME = "mitmproxy"  # mitmproxy's name for its CA files (options.CONF_BASENAME)
KEY_SIZE = 2048
CA_ORGANIZATION = "ctxproxy"
CA_COMMON_NAME = "ctxproxy transparent-mode CA"


def confdir(cfg: Config) -> Path:
    return Path(cfg.mitm.confdir or Path(cfg.server.data_dir) / "mitm")


def ca_cert_path(cfg: Config) -> Path:
    return confdir(cfg) / f"{BASENAME}-ca-cert.pem"


def bundle_path(cfg: Config) -> Path:
    return confdir(cfg) / "ca-bundle.pem"


def ensure_ca(cfg: Config) -> Path:
    """The CA certificate's path, the CA (and the bundle) created first if missing."""
    import certifi  # both with the mitm extra
    from mitmproxy.certs import CertStore

    path = confdir(cfg)
    if not (path / f"{BASENAME}-ca.pem").exists():
        CertStore.create_store(path, BASENAME, KEY_SIZE, organization=CA_ORGANIZATION, cn=CA_COMMON_NAME)
        for secret in (f"{BASENAME}-ca.pem", f"{BASENAME}-ca.p12"):  # the keys: the owner's alone
            os.chmod(path / secret, 0o600)
    cert = ca_cert_path(cfg).read_bytes()
    roots = Path(certifi.where()).read_bytes()
    bundle = roots.rstrip(b"\n") + b"\n" + cert
    target = bundle_path(cfg)
    if not target.exists() or target.read_bytes() != bundle:  # certifi updated, or a new CA
        tmp = target.with_name(f".{target.name}.{os.getpid()}")
        tmp.write_bytes(bundle)
        tmp.replace(target)
    return ca_cert_path(cfg)


def proxy_url(cfg: Config) -> str:
    host = cfg.mitm.host
    if host in ("0.0.0.0", "::", ""):
        host = "127.0.0.1"
    return f"http://{host}:{cfg.mitm.port}"


def agent_env(cfg: Config) -> list[tuple[str, str, str]]:
    """(variable, value, who reads it) for ``--print-env``."""
    url, pem, bundle = proxy_url(cfg), str(ca_cert_path(cfg).resolve()), str(bundle_path(cfg).resolve())
    return [
        ("HTTPS_PROXY", url, "every agent: where HTTPS goes"),
        ("HTTP_PROXY", url, "plain-HTTP calls (rare for providers)"),
        ("NO_PROXY", "localhost,127.0.0.1,::1", "local services stay direct"),
        ("NODE_EXTRA_CA_CERTS", pem, "Node agents: Claude Code, Codex's npm wrapper, OpenClaw"),
        ("SSL_CERT_FILE", bundle, "Python SDKs (httpx), Hermes, Codex's native binary: public roots + the CA"),
        ("REQUESTS_CA_BUNDLE", bundle, "Python code on requests: public roots + the CA"),
    ]


def trust_hint(cfg: Config) -> str:
    """What to set so a client trusts the CA (for the refused-certificate log line)."""
    pem, bundle = ca_cert_path(cfg).resolve(), bundle_path(cfg).resolve()
    return (f"Node agents (Claude Code, Codex npm): NODE_EXTRA_CA_CERTS={pem}; "
            f"Python SDKs, Hermes: SSL_CERT_FILE={bundle} and REQUESTS_CA_BUNDLE={bundle} "
            f"(`ctxproxy mitm --print-env` prints them all)")
