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
ENTRYPOINT ["ctxproxy"]
CMD ["serve", "--host", "0.0.0.0", "--port", "8788", "--data-dir", "/data"]
