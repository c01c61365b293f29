"""One redaction engine for the run's proxies of one redaction config: a test's
config names a cache folder shared by the run, so its app reuses the profiles
another test built (compiled and warmed) instead of building them anew (~2 s a
start on a loaded machine). A test that looks at the engine's own state (is it
warm, what it cached) keeps an engine of its own."""
from __future__ import annotations

import dataclasses

from secretcorpus import hyperscan_cache_dir


def shared_redaction(cfg):
    """``cfg`` with ``[filters.redact] cache_dir`` the run's folder, unless it names one."""
    redact = cfg.filters.get("redact") or {}
    if "cache_dir" in redact:
        return cfg
    return dataclasses.replace(cfg, filters={**cfg.filters, "redact": {**redact, "cache_dir": hyperscan_cache_dir()}})
