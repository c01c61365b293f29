"""Stand-ins for the redact / effects / prune filters, each keeping its record
in ``turn.state[self.name]`` and reporting its part of the manifest
(``report``, the contract in filters/manifest/filter.py), so manifest and telemetry
tests run the whole pipeline through the proxy.
Register with ``monkeypatch.setitem(FILTERS, "redact", "manifeststubs:StubRedact")``.
"""
from __future__ import annotations

from ctxproxy.filters.base import Filter
from ctxproxy.filters.effects.filter import EffectsFilter
from ctxproxy.filters.prune import PruneFilter
from ctxproxy.filters.redact import RedactFilter
from ctxproxy.filters.segments import Segment, offer

SECRET = "sk-live-STUBSECRETVALUE0123456789"
PLACEHOLDER = "[REDACTED:stub-api-key:0011aabb]"
RULES_MARKER = "RULES-TEXT-MARKER-5d1c"
EVIDENCE_MARKER = "EVIDENCE-TEXT-MARKER-77e0"


def use_stubs(monkeypatch, *names: str) -> None:
    from ctxproxy.filters import FILTERS

    classes = {"redact": "StubRedact", "effects": "StubEffects", "prune": "StubPrune", "boom": "StubBoom"}
    for name in names or ("redact", "effects", "prune"):
        monkeypatch.setitem(FILTERS, name, f"manifeststubs:{classes[name]}")


class StubRedact(Filter):
    name = "redact"
    required = True
    manifest_fields = RedactFilter.manifest_fields  # the fields it stands in for

    def __init__(self, config=None):
        pass

    def on_request(self, turn):
        counts = {}
        for s in turn.request.text_slots():
            text = s.get()
            if SECRET in text:
                counts["stub-api-key"] = counts.get("stub-api-key", 0) + text.count(SECRET)
                s.set(text.replace(SECRET, PLACEHOLDER))
        turn.state["redact"] = {"profile": "test", "counts": counts}

    def on_response_end(self, turn):
        if isinstance(turn.state.get("redact"), dict):
            turn.state["redact"]["response_counts"] = {"stub-out": 1}

    def report(self, turn):
        st = turn.state.get(self.name)
        return st and {"redaction_profile": st["profile"], "redactions": st["counts"],
                       "response_redactions": st.get("response_counts")}


class StubEffects(Filter):
    name = "effects"
    manifest_fields = EffectsFilter.manifest_fields

    def __init__(self, config=None):
        pass

    def on_request(self, turn):
        turn.state["effects"] = {
            "effects": [{"key": "ik-0f3a9c", "call_id": "toolu_01", "tool": "create_pr", "state": "completed",
                         "side_effect": True, "duplicate": False}],
            "checkpoint": "checkpoint:s1@3", "compacted": False}

    def report(self, turn):
        st = turn.state.get(self.name)
        return st and {"effects": st["effects"], "checkpoint": st["checkpoint"], "client_compacted": st["compacted"]}


class StubPrune(Filter):
    """Prunes nothing for real; records one pruned output and offers segments
    (as the rules / memory sources will)."""

    name = "prune"
    manifest_fields = PruneFilter.manifest_fields

    def __init__(self, config=None):
        pass

    def on_request(self, turn):
        turn.state["prune"] = {"pruned": [{"ref": "ctx://pruned/p1", "tool": "read_file",
                                           "tokens_before": 900, "tokens_after": 20}]}
        offer(turn, Segment(kind="rules", ref="rules:AGENTS.md@abc123", text=f"Always run tests. {RULES_MARKER}",
                            origin="AGENTS.md", scope="project", trust="reviewed", sensitivity="internal",
                            freshness={"revision": "abc123"}, priority=90))
        offer(turn, Segment(kind="evidence", ref="memory:m42", text=f"Earlier finding. {EVIDENCE_MARKER}",
                            origin="memory", scope="session", trust="untrusted", sensitivity="confidential",
                            freshness={"observed_at": "2025-01-01T00:00:00Z"}, priority=20, placement="turn"))
        offer(turn, Segment(kind="memory", ref="memory:big", text="word " * 4000, origin="memory",
                            trust="curated", priority=10, max_tokens=50, truncatable=False))

    def report(self, turn):
        return {"pruned": turn.state[self.name]["pruned"]}


class StubBoom(Filter):
    """An optional filter that fails: the turn goes on, marked degraded."""

    name = "boom"

    def __init__(self, config=None):
        pass

    def on_request(self, turn):
        raise RuntimeError("boom")
