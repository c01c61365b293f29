"""Which conversation a request continues, when the agent names none (identify's step 4).

A conversation is known by its continuity, not by its opening: two runs of the
same one-line job open alike, and must not share a ledger. Each answer the
proxy relays is filed under a *link*: a digest of the request's last item
that is not the model's (its *anchor*) and of the answer itself — the tool
calls it made (call ids and tool names) or, with none, its text without
whitespace (``RelayedAnswer``, as the client received it). A later request
shows the same two things: its newest run of model items (the answer, as the
client re-sends it) and the item just before that run. Its link leads to the
session the answer was relayed in. An answer that names itself (tool calls,
or a text of ``DISTINCT_CHARS`` or more) is filed under itself alone too: a
compaction that keeps it but not what preceded it still continues it. A
Responses answer is also filed under
its response id, for a request that continues it with ``previous_response_id``
and sends only its new input.

Links are kept in this process (the newest, within ``MEMO_BYTES``) and in the store, so
another worker and a restarted proxy on the same data dir follow them too:
each is a document of the ``checkpoints`` kind, id ``continuity:<link>``,
holding only the session id and filed under that session and its user, so
erasing either erases it. A link costs one small write per answer, queued
on the store's background writer when the answer completes (before its last
bytes go out). The digests hold no text.

Looking a request up costs O(its new items): the scan for the newest model
run stops at it; the older runs (at most ``WALK_BACK``) are read only when
the newest one leads nowhere (the answer was never relayed here, or the
client rewrote it).
"""
from __future__ import annotations

import logging
from typing import Any, Iterator

from ctxproxy.store.bounded import ByteLRU
from ctxproxy.store.services.digest import sha256, text_sha256

from .compaction import item_texts
from .effects.history import item_fp
from .effects.rules import normalize_id

log = logging.getLogger("ctxproxy.filters.identify")

MEMO = 65536  # links remembered in this process, at most (``[filters.identify] chain_memory``)
MEMO_BYTES = 1 << 20  # and the bytes they may hold (~2.6K links: a link is ~400 bytes)
WALK_BACK = 8  # model runs of a request tried, newest first
DISTINCT_CHARS = 160  # a text answer this long (whitespace aside) names itself without what preceded it
DOC_PREFIX = "continuity:"  # the id of a link's document (checkpoints kind)
SAVED_BYTES = 256 << 10  # links saved by this process, remembered (~1K: ids only)


def _bare_digest(texts: Iterator[str]) -> tuple[str | None, int]:
    """(digest, length) of the texts joined without whitespace (as
    ``RelayedAnswer.text_digest``); (None, 0) when there is no text."""
    h = sha256()
    chars = 0
    for text in texts:
        bare = "".join(text.split())
        if bare:
            h.update(bare.encode("utf-8", "surrogatepass"))
            chars += len(bare)
    return (h.hexdigest(), chars) if chars else (None, 0)


def signature(calls: list[tuple[str, str]], text_digest: str | None) -> str | None:
    """An answer's signature: its tool calls (an id is the provider's, random,
    and clients keep it, if not always its form), else its text; None when it
    has neither."""
    if calls:
        return "c:" + "\x01".join(sorted(f"{normalize_id(cid)}/{name}" for cid, name in calls))
    return "t:" + text_digest if text_digest else None


def links_of(anchor: str, sig: str | None, distinct: bool) -> list[str]:
    """The links of an answer: with its anchor; and, when the answer alone is
    ``distinct`` (tool calls, or a long text), without: a compaction that
    keeps the answer but not what came before it still continues it."""
    if not sig:
        return []
    return [link_of(anchor, sig), link_of("", sig)] if distinct and anchor else [link_of(anchor, sig)]


def anchor_of(view: Any, item: Any) -> str:
    """What a link keeps of the item before an answer: its text without
    whitespace (a message re-sent as a string or as text parts, with a moved
    cache marker, is the same), else its canonical JSON's fingerprint."""
    text, _ = _bare_digest(item_texts(item))
    return "t:" + text if text else "j:" + item_fp(item, view.history_keys)


def link_of(anchor: str, sig: str) -> str:
    return text_sha256(f"{anchor}\x00{sig}")[:32]


def response_link(response_id: str) -> str:
    return text_sha256(f"response\x00{response_id}")[:32]


def request_anchor(view: Any) -> str:
    """The anchor of the answer to this request: its last item that is not the
    model's (a Responses ``input`` given as a string is that user message)."""
    items = view.items()
    for i in range(len(items) - 1, -1, -1):
        if not view.from_model(items[i]):
            return anchor_of(view, items[i])
    text = view.first_user_text() if not items else ""
    digest, _ = _bare_digest(iter((text,))) if text else (None, 0)
    return "t:" + digest if digest else ""


def answer_links(anchor: str, answer: Any) -> list[str]:
    """The links of a relayed answer (``RelayedAnswer``) to a request with ``anchor``."""
    digest = answer.text_digest()
    return links_of(anchor, signature(answer.calls, digest), bool(answer.calls) or answer.chars >= DISTINCT_CHARS)


def model_runs(view: Any, limit: int = WALK_BACK) -> Iterator[tuple[int, int]]:
    """(start, end) of the request's runs of model items, newest first."""
    items = view.items()
    i = len(items) - 1
    found = 0
    while i >= 0 and found < limit:
        while i >= 0 and not view.from_model(items[i]):
            i -= 1
        if i < 0:
            return
        end = i
        while i >= 0 and view.from_model(items[i]):
            i -= 1
        found += 1
        yield i + 1, end


def _run_signature(view: Any, start: int, end: int) -> tuple[str | None, bool]:
    """(signature, distinct) of the answer at items ``start..end``."""
    items = view.items()
    calls = [(c.call_id, c.name) for c in view.tool_calls() if start <= c.position <= end and c.call_id]
    digest, chars = _bare_digest(t for it in items[start:end + 1] for t in item_texts(it))
    return signature(calls, digest), bool(calls) or chars >= DISTINCT_CHARS


def run_links(view: Any, start: int, end: int) -> list[str]:
    """The links of the answer at items ``start..end`` (as the client re-sent it)."""
    anchor = anchor_of(view, view.items()[start - 1]) if start > 0 else ""
    return links_of(anchor, *_run_signature(view, start, end))


def first_answer(view: Any) -> str:
    """The signature of the history's first answer ('' when it has none): what
    a session derived from a history the proxy never relayed is named by."""
    items = view.items()
    start = next((i for i, it in enumerate(items) if view.from_model(it)), None)
    if start is None:
        return ""
    end = start
    while end + 1 < len(items) and view.from_model(items[end + 1]):
        end += 1
    return _run_signature(view, start, end)[0] or ""


class Links:
    """Link -> session, in this process (bounded) and in the store."""

    def __init__(self, store: Any = None, size: int = MEMO):
        self.store = store
        self.size = size
        self._memo = ByteLRU(MEMO_BYTES, "continuity links", max_entries=size)
        # links this process saved, with the session and subject they were filed under: filing
        # one again the same way writes nothing (the same answer to a request sent again)
        self._saved = ByteLRU(SAVED_BYTES, "continuity links saved")

    def find(self, tenant: str, link: str, store: Any = None) -> str | None:
        session = self._memo.get((tenant, link))
        if session is not None:
            return session
        store = store if store is not None else self.store
        if store is None:
            return None
        try:
            doc = store.checkpoints.get(tenant, DOC_PREFIX + link)
        except Exception as exc:  # the request goes on as a conversation not seen before
            log.warning("continuity link unreadable: %s", type(exc).__name__)
            return None
        session = doc.data.get("session") if doc is not None else None
        if not isinstance(session, str) or not session:
            return None
        self._remember(tenant, link, session)
        return session

    def known(self, tenant: str, link: str) -> bool:
        """Whether this process has ``link`` filed (no store read)."""
        return (tenant, link) in self._memo

    def _remember(self, tenant: str, link: str, session: str) -> None:
        key = (tenant, link)
        if self._memo.get(key) == session:  # filed so already (the same answer again): now the most recent
            return
        self._memo.put(key, session)

    def add(self, turn: Any, link: str, session: str, store: Any = None, persist: bool = True) -> None:
        """File ``link`` under ``session``: at once in this process and, with
        ``persist``, in the store through its background writer (not awaited:
        nothing waits for it)."""
        ident = turn.identity
        tenant, subject, turn_id = ident.tenant, ident.user or None, turn.turn_id
        self._remember(tenant, link, session)
        store = store if store is not None else self.store
        if store is None or not persist:
            return
        filed = (session, subject)
        if self._saved.get((tenant, link)) == filed:
            return  # this process saved it so before (the same answer to the same request again)

        def write(b: Any) -> None:
            b.checkpoints.put(tenant, DOC_PREFIX + link, {"session": session}, session=session, subject=subject)

        def lost(exc: BaseException | None) -> None:
            if exc is not None:  # this process still knows it; another worker falls back
                log.warning("turn %s: continuity link not saved: %s", turn_id, type(exc).__name__)
            else:
                self._saved.put((tenant, link), filed)

        turn.write_after(store, write, lost)
