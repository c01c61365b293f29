"""Transparent mode (``ctxproxy mitm``): the mitmproxy addon that drives the turn engine, its CA,
its host routing and its process."""
