"""Putting memory records straight into the store (no gate), for tests of what reads them."""
from __future__ import annotations

from ctxproxy.store.memory_records import MemoryRecord, new_memory_id


def put_memory(store, tenant: str, statement: str, **fields) -> MemoryRecord:
    values = {"kind": "preference", "origin": "user", "status": "active", **fields}
    values.setdefault("memory_id", new_memory_id())
    return store.memories.put(MemoryRecord(tenant=tenant, statement=statement, **values))


# Memories about nothing a test's turn asks: a background for recall's word statistics.
UNRELATED = ("Lunch is at noon on Fridays.", "The design team keeps the icon set in Figma.",
             "Quarterly planning happens in the first week of each quarter.",
             "The office printer on floor 3 needs a badge.", "Expense reports are due by the 5th of the month.",
             "Session cookies expire after 12 hours of inactivity.", "The VPN certificate is renewed every spring.",
             "Standup is at 9:30 in the small meeting room.", "Invoices are generated on the first of the month.",
             "Episode audio is kept in the private R2 bucket wc-audio-prod.",
             "The RSS feed is served behind Fastly with a 5-minute TTL.")


def half_asker(rs, module, tenant: str = "acme", user: str = "dev"):
    """``ask(text, **rank)``: what recall offers ``user`` over an eval half's facts and distractors, put
    into the real store of ``rs`` (the recall tests' store-and-services fixture), with rank options set."""
    from ctxproxy.store.services.recall.rank import RankConfig
    from ctxproxy.store.sqlite_index import Viewer

    store, services = rs
    for statement in [st for st, _ in module.FACTS.values()] + list(module.DISTRACTORS):
        put_memory(store, tenant, statement, kind="fact", user=user)
    viewer = Viewer(tenant, user=user)

    def ask(text: str, **rank) -> list:
        return services.recaller(RankConfig(**rank)).recall(viewer, text, k=8).items

    return ask


def assert_rank_switch_typed(tmp_path, name: str) -> None:
    """A true/false option of ``[filters.recall.rank]``: off by default, read from a config file, and a
    value of another type refused at load with the key's name."""
    import pytest

    from ctxproxy.config import ConfigError, load_config
    from ctxproxy.filters import filter_configs
    from ctxproxy.store.services.recall.rank import RankConfig

    assert getattr(RankConfig(), name) is False
    path = tmp_path / "ctxproxy.toml"
    path.write_text(f"[filters.recall.rank]\n{name} = true\n")
    assert getattr(filter_configs(load_config(path))["recall"].rank, name) is True
    path.write_text(f'[filters.recall.rank]\n{name} = "yes"\n')
    with pytest.raises(ConfigError, match=f"filters.recall.rank.{name}: expected true or false"):
        filter_configs(load_config(path))
