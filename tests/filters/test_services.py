"""The services a filter takes in ``create``: one typed record, opened once."""
from __future__ import annotations

import pytest
from multidict import CIMultiDict

from ctxproxy.config import load_config
from ctxproxy.filters import Services, Turn
from ctxproxy.filters.tokens import TokenCounter
from ctxproxy.proxy.services import close_services, open_services


def test_a_service_nobody_declared_is_refused_by_name():
    with pytest.raises(TypeError, match="unknown service.*stroe"):
        Services.of({"stroe": object()})


def test_a_turn_made_with_names_carries_the_typed_record():
    store = object()
    t = Turn(api="chat", route="r", path="/", headers=CIMultiDict(), request=None, tokens=TokenCounter(lazy=True),
             services={"store": store})
    assert isinstance(t.services, Services) and t.services.store is store
    assert t.service("store") is store and t.service("writer") is None  # reading by name stays
    assert "store" in t.services and "writer" not in t.services


def test_start_up_opens_every_service_a_driver_needs(tmp_path):
    cfg = load_config(None, data_dir=str(tmp_path / "data"))
    services = open_services(cfg)
    try:
        assert services.config is cfg and services.store is not None and services.writer is not None
        assert isinstance(services.secret, bytes) and services.keyring is not None  # both drivers check keys
        assert services.recall is None  # recall's indexes open on first use
    finally:
        close_services(services)
