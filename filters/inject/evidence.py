"""Retrieved evidence: the recall interface ``inject`` asks every turn.

A retriever returns segments for the turn's query (the latest user text).
It is looked up as the ``retriever`` service; without one, ``NullRetriever``
returns nothing. The memory/recall issue implements the real one (BM25,
visibility checks before ranking, redaction); whatever it returns, ``inject``
forces the labels that make it data: ``kind="evidence"``, placement next to
the latest user message, fenced as untrusted data with its source and
freshness (see ``segments.render``). A retriever cannot place instructions.
"""
from __future__ import annotations

from dataclasses import replace
from typing import Any, Protocol, runtime_checkable

from ..segments import Segment


@runtime_checkable
class Retriever(Protocol):
    def retrieve(self, turn: Any, query: str) -> list[Segment]:
        """Segments for ``query``, visible to ``turn.identity`` (fail closed:
        unknown identity returns ``[]``); never reveals a hidden record."""


class NullRetriever:
    """No recall configured: nothing is retrieved."""

    name = "null"

    def retrieve(self, turn: Any, query: str) -> list[Segment]:
        return []


def evidence_segment(text: str, source: str, observed_at: str, ref: str, *, trust: str = "evidence",
                     sensitivity: str = "internal", scope: str = "session", priority: int = 40,
                     revision: str = "") -> Segment:
    """A retrieved item as a segment a retriever returns (labels filled in)."""
    freshness = {"observed_at": observed_at}
    if revision:
        freshness["revision"] = revision
    return Segment(kind="evidence", ref=ref, text=text, origin=source, scope=scope,
                   trust=trust if trust in ("evidence", "untrusted") else "evidence",  # type: ignore[arg-type]
                   sensitivity=sensitivity, freshness=freshness, priority=priority,  # type: ignore[arg-type]
                   placement="turn", boundary="line")


def as_evidence(seg: Segment) -> Segment:
    """A copy with the labels that keep retrieved text data, whatever a
    retriever set (a copy: inject truncates and annotates what it places)."""
    seg = replace(seg, freshness=dict(seg.freshness))
    seg.kind = "evidence"
    seg.placement = "turn"
    seg.stable = False
    if seg.trust not in ("evidence", "untrusted"):
        seg.trust = "untrusted"
    if not seg.freshness.get("observed_at"):
        seg.freshness = {**seg.freshness, "observed_at": "unknown"}
    return seg
