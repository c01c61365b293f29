"""What turns need is loaded when a server starts, not in the first turn of its
process. Every edge builds its engine with ``engine_for``; the mitmproxy edge's
check is in ``tests/proxy/mitm/test_mitm.py``, the workers of ``serve
--workers N`` each build the app checked here."""
from __future__ import annotations

from warmcheck import assert_warm, memories_written_while_no_server_ran

from ctxproxy.store.services.redaction.profiles import ProfileRegistry


def test_a_redactor_compiles_its_stream_regexes_when_warmed():
    redactor = ProfileRegistry.build({}).get("default").redactor
    assert redactor.cold > 0  # built, its stream regexes are compiled as a stream first needs each
    redactor.warm()
    assert redactor.cold == 0


async def test_the_http_edge_starts_with_what_turns_need(make_proxy, tmp_path):
    data = tmp_path / "data"
    memories_written_while_no_server_ran(data)
    proxy = await make_proxy(data_dir=str(data), shared_redaction=False)  # an engine no other test warmed
    assert_warm(proxy.state.relay.engine, proxy.state.services)
