# ctxproxy in a container: builds the package, serves on 0.0.0.0:8788.
FROM python:3.11-slim

ENV PYTHONDONTWRITEBYTECODE=1 PYTHONUNBUFFERED=1 PIP_NO_CACHE_DIR=1
WORKDIR /src
COPY pyproject.toml README.md ./
COPY proxy ./proxy
COPY filters ./filters
COPY store ./store
COPY config ./config
RUN pip install . && useradd --system --home /data ctxproxy && mkdir -p /data && chown ctxproxy /data

USER ctxproxy
WORKDIR /data
EXPOSE 8788
VOLUME ["/data"]
HEALTHCHECK --interval=30s --timeout=3s CMD python -c "import urllib.request,sys; sys.exit(0 if urllib.request.urlopen('http://127.0.0.1:8788/ctx/healthz').status == 200 else 1)"
# Inside the container the proxy must listen on all interfaces; publish the port
# only where agents can reach it, and set CTXPROXY_ADMIN_TOKEN for /ctx/v1/.
# Shared by several people or teams: run `[auth] mode = "keys"` (a config file
# passed with --config) and hand out proxy keys with
# `docker exec CONTAINER ctxproxy keys create --tenant T --user U --data-dir /data`
# (docs/tenancy.md, docs/docker.md); open mode on 0.0.0.0 logs a warning.
# The fixed part is the ENTRYPOINT, so arguments to `docker run IMAGE ...` are
# added to it: `docker run IMAGE --config /data/ctxproxy.toml` still serves on
# 0.0.0.0:8788 with its data in /data. A flag given again wins (the last one
# counts), but keep port 8788, which the health check probes: map another host
# port with `-p HOST:8788` instead.
# Other subcommands: `docker exec CONTAINER ctxproxy manifest show ...`, or
# `docker run --entrypoint ctxproxy IMAGE config check /data/ctxproxy.toml`.
# `docker stop` sends SIGTERM: requests in flight get server.shutdown_timeout
# (5 s) to finish, within docker's default 10 s grace.
ENTRYPOINT ["ctxproxy", "serve", "--host", "0.0.0.0", "--port", "8788", "--data-dir", "/data"]
CMD []
