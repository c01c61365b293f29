"""The memory write gate: every write path (admin API, CLI, imports, edits,
approvals) goes through ``MemoryGate``; nothing else writes ``store.memories``.

Order, cheapest refusal first:

1. fields (``fields.parse_fields``: types, sizes, UTF-8, unknown names);
2. provenance: ``tool_output`` and ``consolidated`` text is ``proposed`` until a
   person approves it, ``model_inference`` is a ``hypothesis`` (never injected
   as a fact); a project ``fact`` needs an ``evidence_ref``;
3. threat scan (``threats.scan``: instruction override, exfiltration,
   invisible characters...) → refused with its reason;
4. secrets: the redaction engine's rules on the statement and the evidence
   ref; a statement holding a secret is refused, never stored redacted;
5. inside one write transaction (so concurrent writers cannot both pass):
   the ``external_id`` (a known one is an update of that record), exact and
   near duplicates in the scope (→ ``duplicate_of``, nothing new), limits
   (the always-injected snapshot kinds share a character cap per scope, over
   it a write must ``replaces`` one; recalled kinds have a length cap and a
   count cap per scope), a contradiction of an active record on the same
   subject (→ the new record ``supersedes`` it; both kept), the TTL default
   of the kind; then the record is stored.

A refusal stores nothing but an audit counter per reason
(``store.memories.refused``). ``rescan`` re-checks stored records when the
rules changed (quarantine, never injected) and ``purge_expired`` erases
records expired for longer than the grace period.
"""
from __future__ import annotations

import hashlib
import logging
import time
from dataclasses import dataclass
from typing import Any, Callable, Iterable, Mapping, NamedTuple

from ctxproxy.config.schema import MemoryGateConfig
from ctxproxy.store import memory_text
from ctxproxy.store.errors import RevisionConflict, StoreError
from ctxproxy.store.memory_records import (
    SNAPSHOT_KINDS,
    MemoryRecord,
    new_memory_id,
)

from .fields import FieldError, parse_fields
from .subjects import derive_subject, values

log = logging.getLogger("ctxproxy.memory")

LIVE = ("active", "proposed", "hypothesis")
EVENT_KINDS = ("event", "failure")  # things that happened: a later one adds to an earlier one, never contradicts it
DAY = 86400.0


class GateConfig(MemoryGateConfig):
    """``[memory.gate]`` (``ctxproxy.config.MemoryGateConfig``, parsed with the config)."""

    @classmethod
    def from_config(cls, cfg: Any) -> MemoryGateConfig:
        return cfg.memory.gate if cfg is not None else MemoryGateConfig()


class Refusal(NamedTuple):
    reason: str
    message: str


@dataclass(frozen=True)
class Outcome:
    """What became of one write."""

    record: MemoryRecord | None = None
    duplicate_of: str = ""
    supersedes: tuple[str, ...] = ()
    refused: Refusal | None = None
    created: bool = False  # a new record (201) rather than a revision of one

    def answer(self) -> dict[str, Any]:
        """The admin API's body for it (201 or 422)."""
        if self.refused is not None:
            return {"error": {"type": "memory_blocked", "reason": self.refused.reason,
                              "message": self.refused.message}}
        assert self.record is not None
        out: dict[str, Any] = {"memory_id": self.record.memory_id, "status": self.record.status}
        if self.supersedes:
            out["supersedes"] = self.supersedes[0] if len(self.supersedes) == 1 else list(self.supersedes)
        if self.duplicate_of:
            out["duplicate_of"] = self.duplicate_of
        if not self.created and not self.duplicate_of:
            out["revision"] = self.record.revision
        return out


class NotFound(LookupError):
    pass


class StateError(ValueError):
    """The record is not in a state that allows it (approve an active one...)."""


def _current(mem: Any, tenant: str, memory_id: str, expected_revision: int | None) -> MemoryRecord:
    """The record a review or an edit is about, at the revision the caller saw."""
    cur = mem.get(tenant, memory_id)
    if cur is None or cur.status == "deleted":
        raise NotFound(memory_id)
    if expected_revision is not None and expected_revision != cur.revision:
        raise RevisionConflict(f"memory {memory_id} is at revision {cur.revision}, not {expected_revision}",
                               current=cur.revision)
    return cur


def initial_status(origin: str) -> str:
    if origin in ("tool_output", "consolidated"):
        return "proposed"
    if origin == "model_inference":
        return "hypothesis"
    return "active"


def _status(origin: str, asked: str) -> str:
    """The origin's status, or less trust when the writer asks for it (an import
    to review, a record shown ``proposed`` written back)."""
    status = initial_status(origin)
    return asked if status == "active" and asked in ("proposed", "hypothesis") else status


# -- scanners -------------------------------------------------------------------

_SECRETS: list[Any] = []


def default_secret_scanner() -> Callable[[str], str | None]:
    """The redaction engine's default profile, as "which rule found a secret"."""
    if not _SECRETS:
        from ctxproxy.store.services.redaction import ProfileRegistry

        _SECRETS.append(ProfileRegistry.build({}).get().redactor)
    redactor = _SECRETS[0]

    def find(text: str) -> str | None:
        found = redactor.findings(text)
        return found[0].rule_id if found else None

    return find


def default_threat_scan(learned_signal: bool = True) -> Callable[[str], Any]:
    """The threat scan: rules and the learned classifier, or the rules alone (``learned_signal = false``)."""
    from . import threats

    return threats.scan if learned_signal else threats.scan_rules


def rules_version(learned_signal: bool = True) -> str:
    """Changes when the threat rules (``threats.RULES_VERSION``), the secret rules or whether the
    learned classifier runs change: records are re-scanned when it is switched back on."""
    from . import threats

    default_secret_scanner()
    h = hashlib.sha256(threats.RULES_VERSION.encode())
    if not learned_signal:
        h.update(b"\x00rules only")
    h.update("\x00".join(sorted(r.id for r in _SECRETS[0].rules)).encode())
    return h.hexdigest()[:24]


# -- the gate -------------------------------------------------------------------


class MemoryGate:
    def __init__(self, store: Any, config: GateConfig | None = None, *,
                 scan: Callable[[str], Any] | None = None,
                 secrets: Callable[[str], str | None] | None = None,
                 clock: Callable[[], float] = time.time) -> None:
        self.store = store
        self.config = config or GateConfig()
        self.scan = scan if scan is not None else default_threat_scan(self.config.learned_signal)
        self.secrets = secrets if secrets is not None else default_secret_scanner()
        self.clock = clock

    # -- screening (no store) ------------------------------------------------------

    def screen(self, statement: str, evidence_ref: str = "") -> Refusal | None:
        threat = self.scan(statement)
        if threat is not None:
            return Refusal(threat.reason, threat.message)
        rule = self.secrets(statement)
        if rule is not None:
            return Refusal("secret", f"the statement holds a secret ({rule}); memories never keep secrets, "
                                     "not even redacted")
        if evidence_ref:
            rule = self.secrets(evidence_ref)
            if rule is not None:
                return Refusal("secret", f"evidence_ref holds a secret ({rule})")
        return None

    # -- writes ------------------------------------------------------------------

    def write(self, tenant: str, body: Mapping[str, Any], *, created_by: str = "",
              origin: str | None = None) -> Outcome:
        """Gate and store one memory (``FieldError`` for a malformed body)."""
        return self.write_many(tenant, [body], created_by=created_by, origin=origin, strict=True)[0]

    def write_many(self, tenant: str, bodies: Iterable[Any], *, created_by: str = "",
                   origin: str | None = None, strict: bool = False, chunk: int = 1000,
                   propose: bool = False) -> list[Any]:
        """Gate and store many, one transaction per ``chunk``. Each item's result
        is an ``Outcome`` or (not ``strict``) the ``FieldError`` of its body.
        ``propose``: what would be active is stored ``proposed`` (an import a
        person wants to review entry by entry)."""
        items: list[Any] = []
        for body in bodies:
            try:
                fields = parse_fields(body, as_shown=True)
                if origin is not None and "origin" not in fields:
                    fields["origin"] = origin
                items.append((fields, self.screen(fields["statement"], fields.get("evidence_ref", ""))))
            except FieldError as exc:
                if strict:
                    raise
                items.append(exc)
        results: list[Any] = []
        for start in range(0, len(items), chunk):
            part = items[start:start + chunk]
            with self.store.batch() as b:
                for item in part:
                    if isinstance(item, FieldError):
                        results.append(item)
                        continue
                    fields, refusal = item
                    if refusal is None:
                        try:
                            out = self._decide(b.memories, tenant, fields, created_by, propose)
                        except StoreError as exc:  # e.g. a bad scope id for the store's keys
                            out = Outcome(refused=Refusal("invalid", str(exc)))
                    else:
                        out = Outcome(refused=refusal)
                    if out.refused is not None:
                        b.memories.count_refused(tenant, out.refused.reason)
                    results.append(out)
        return results

    def _decide(self, mem: Any, tenant: str, f: Mapping[str, Any], created_by: str,
                propose: bool = False) -> Outcome:
        now = self.clock()
        origin = f.get("origin", "user")
        kind = f.get("kind", "fact")
        project, user, session = f.get("project", ""), f.get("user", ""), f.get("session", "")
        if kind == "fact" and project and not f.get("evidence_ref"):
            return Outcome(refused=Refusal("evidence_required", "a project fact needs an evidence_ref "
                                                                "(e.g. commit:<sha>, url:..., session:S/turn:T)"))
        statement = f["statement"]
        existing = None
        if f.get("external_id"):
            existing = mem.find_external(tenant, project, user, session, f["external_id"])
        observed = f.get("observed_at") or now
        rec = MemoryRecord(
            memory_id=existing.memory_id if existing is not None else new_memory_id(),
            tenant=tenant, statement=statement, kind=kind, origin=origin,
            status=_status(origin, "proposed" if propose else f.get("status", "")),
            project=project, user=user, session=session, purpose=f.get("purpose", ""),
            evidence_ref=f.get("evidence_ref", ""),
            evidence_sessions=tuple(f.get("evidence_sessions", ())) or ((session,) if session else ()),
            confidence=f.get("confidence", 0.5 if origin == "model_inference" else 1.0),
            sensitivity=f.get("sensitivity", "internal"), observed_at=observed,
            expires_at=f["expires_at"] if "expires_at" in f else self._ttl(kind, observed, f.get("evergreen", False)),
            evergreen=f.get("evergreen", False), external_id=f.get("external_id", ""),
            created_by=created_by, created_at=existing.created_at if existing is not None else now,
            subject_key=f.get("subject_key") or derive_subject(statement),
        )
        if existing is not None and memory_text.normalise(existing.statement) == memory_text.normalise(statement):
            return Outcome(record=existing, duplicate_of=existing.memory_id)
        return self._store(mem, rec, replaces=f.get("replaces", ""), base=existing, created=existing is None)

    def _store(self, mem: Any, rec: MemoryRecord, *, replaces: str = "", base: MemoryRecord | None,
               created: bool) -> Outcome:
        """Duplicates, limits, contradictions, then the put (inside the caller's batch)."""
        tenant = rec.tenant
        scope = rec.scope_key()
        same_subject = mem.same_subject(tenant, *scope, rec.subject_key) if rec.subject_key else []
        dup = self._duplicate(mem, rec, same_subject)
        if dup is not None:
            return Outcome(record=dup, duplicate_of=dup.memory_id)
        freed: dict[str, MemoryRecord] = {}
        if replaces:
            old = mem.get(tenant, replaces)
            if old is None or old.status not in LIVE or old.scope_key() != scope:
                return Outcome(refused=Refusal("invalid", f"replaces: no live memory {replaces!r} in this scope"))
            freed[old.memory_id] = old
        contradicted: list[MemoryRecord] = []
        if rec.status == "active" and rec.subject_key and rec.kind not in EVENT_KINDS:
            for other in same_subject:
                if other.memory_id != rec.memory_id and other.status == "active" and other.memory_id not in freed:
                    contradicted.append(other)
        refusal = self._limits(mem, rec, {*freed, *(o.memory_id for o in contradicted)})
        if refusal is not None:
            return Outcome(refused=refusal)
        supersedes = tuple(sorted({*freed, *(o.memory_id for o in contradicted)}))
        if supersedes:
            rec = rec.evolve(supersedes=supersedes[0] if len(supersedes) == 1 else ",".join(supersedes))
        stored = mem.put(rec, expected_revision=base.revision if base is not None else 0)
        for old in [*freed.values(), *contradicted]:
            mem.put(old.evolve(status="superseded", superseded_by=stored.memory_id))
        return Outcome(record=stored, supersedes=supersedes, created=created)

    def _duplicate(self, mem: Any, rec: MemoryRecord, same_subject: list[MemoryRecord]) -> MemoryRecord | None:
        for other in mem.same_text(rec.tenant, *rec.scope_key(), rec.statement):
            if other.memory_id != rec.memory_id and other.status in LIVE:
                return other
        if rec.subject_key:
            for other in same_subject:  # a changed version, number or path is news, however alike the rest
                if (other.memory_id != rec.memory_id and other.status in LIVE
                        and memory_text.similarity(other.statement, rec.statement) >= self.config.near_duplicate
                        and values(other.statement) == values(rec.statement)):
                    return other
        return None

    def _limits(self, mem: Any, rec: MemoryRecord, freed: set[str]) -> Refusal | None:
        cfg = self.config
        p, u, s = rec.scope_key()
        if rec.kind in SNAPSHOT_KINDS:
            if rec.status != "active":
                return None  # counted when approved
            cap = int(cfg.snapshot_chars.get(rec.scope, 0))
            used = sum(len(r.statement) for r in mem.scope_records(rec.tenant, p, u, s, snapshot=True)
                       if r.status == "active" and r.memory_id != rec.memory_id and r.memory_id not in freed)
            if used + len(rec.statement) > cap:
                return Refusal("over_limit", f"the {rec.scope} memory snapshot holds {used} of {cap} characters and "
                                             f"this statement needs {len(rec.statement)}: replace a memory "
                                             "(replaces=<memory_id>) or shorten it")
            return None
        if len(rec.statement) > cfg.recalled_max_chars:
            return Refusal("over_limit", f"a {rec.kind} statement may have {cfg.recalled_max_chars} characters, "
                                         f"this one has {len(rec.statement)}")
        if rec.status in LIVE:
            n = mem.recalled_count(rec.tenant, p, u, s)
            if n >= cfg.recalled_max_records and not (rec.revision > 1 or mem.get(rec.tenant, rec.memory_id)):
                return Refusal("over_limit", f"this scope holds {n} memories, the most allowed "
                                             "(memory.gate.recalled_max_records)")
        return None

    def _ttl(self, kind: str, observed: float, evergreen: bool) -> float | None:
        days = self.config.ttl_days.get(kind)
        if evergreen or days is None or days <= 0:
            return None
        return observed + float(days) * DAY

    # -- edits and reviews -------------------------------------------------------------

    def edit(self, tenant: str, memory_id: str, body: Any, *, expected_revision: int | None = None,
             by: str = "") -> Outcome:
        """A new revision with ``body``'s changes, gated again."""
        from .fields import EDITABLE

        changes = parse_fields(body, allowed=EDITABLE, required=(), ignore=("revision", "tenant"))
        if not changes:
            raise FieldError("body", "nothing to change")
        refusal = None
        if "statement" in changes or "evidence_ref" in changes:
            cur = self.store.memories.get(tenant, memory_id)
            if cur is None:
                raise NotFound(memory_id)
            refusal = self.screen(changes.get("statement", cur.statement), changes.get("evidence_ref", ""))
        with self.store.batch() as b:
            mem = b.memories
            cur = _current(mem, tenant, memory_id, expected_revision)
            if refusal is not None:
                mem.count_refused(tenant, refusal.reason)
                return Outcome(refused=refusal)
            if "statement" in changes and "subject_key" not in changes:
                changes["subject_key"] = derive_subject(changes["statement"])
            rec = cur.evolve(**changes, created_by=cur.created_by)
            if rec.kind == "fact" and rec.project and not rec.evidence_ref:
                out = Outcome(refused=Refusal("evidence_required", "a project fact needs an evidence_ref"))
                mem.count_refused(tenant, "evidence_required")
                return out
            out = self._store(mem, rec, base=cur, created=False)
            if out.refused is not None:
                mem.count_refused(tenant, out.refused.reason)
            return out

    def approve(self, tenant: str, memory_id: str, *, by: str = "",
                expected_revision: int | None = None) -> Outcome:
        """A person approves a proposed memory or a hypothesis: it becomes active
        (screened again with today's rules, limits and contradictions checked)."""
        cur = self.store.memories.get(tenant, memory_id)
        if cur is None or cur.status == "deleted":
            raise NotFound(memory_id)
        refusal = self.screen(cur.statement, cur.evidence_ref)
        with self.store.batch() as b:
            mem = b.memories
            cur = _current(mem, tenant, memory_id, expected_revision)
            if cur.status not in ("proposed", "hypothesis"):
                raise StateError(f"memory {memory_id} is {cur.status}; only proposed memories and hypotheses "
                                 "can be approved")
            if refusal is not None:
                mem.count_refused(tenant, refusal.reason)
                return Outcome(refused=refusal)
            rec = cur.evolve(status="active", quarantine="", created_by=cur.created_by or by)
            out = self._store(mem, rec, base=cur, created=False)
            if out.refused is not None:
                mem.count_refused(tenant, out.refused.reason)
            return out

    def reject(self, tenant: str, memory_id: str, *, by: str = "",
               expected_revision: int | None = None) -> MemoryRecord:
        with self.store.batch() as b:
            cur = _current(b.memories, tenant, memory_id, expected_revision)
            if cur.status not in ("proposed", "hypothesis"):
                raise StateError(f"memory {memory_id} is {cur.status}; only proposed memories and hypotheses "
                                 "can be rejected (delete erases any memory)")
            return b.memories.put(cur.evolve(status="deleted"), expected_revision=cur.revision)

    # -- upkeep ------------------------------------------------------------------

    def rescan(self, *, force: bool = False) -> dict[str, int]:
        """Re-check stored records against today's rules (when they changed, or
        ``force``): an active record that now fails is quarantined (never
        injected), a quarantined one that now passes is released."""
        version = rules_version(self.config.learned_signal)
        mem = self.store.memories
        if not force and mem.meta("rules_version") == version:
            return {"checked": 0, "quarantined": 0, "released": 0}
        counts = {"checked": 0, "quarantined": 0, "released": 0}
        for tenant in mem.tenants():
            changed = []
            for rec in mem.iter_tenant(tenant):
                if rec.status not in LIVE:
                    continue
                counts["checked"] += 1
                refusal = self.screen(rec.statement, rec.evidence_ref)
                reason = refusal.reason if refusal is not None else ""
                if reason != rec.quarantine:
                    changed.append(rec.evolve(quarantine=reason))
                    counts["quarantined" if reason else "released"] += 1
            for start in range(0, len(changed), 1000):
                with self.store.batch() as b:
                    for rec in changed[start:start + 1000]:
                        cur = b.memories.get(tenant, rec.memory_id)
                        if cur is not None and cur.revision == rec.revision:  # not edited meanwhile
                            b.memories.put(cur.evolve(quarantine=rec.quarantine), expected_revision=cur.revision)
        mem.set_meta("rules_version", version)
        if counts["quarantined"]:
            log.warning("memory re-scan: %d record(s) quarantined under the current rules", counts["quarantined"])
        return counts

    def purge_expired(self) -> dict[str, int]:
        """Erase records that expired more than the grace period ago. Those that
        expired within it are counted and left as they are: already not served,
        but recall ``as_of`` a time they were live still finds them (audits,
        history imports)."""
        now = self.clock()
        grace = self.config.purge_grace_days * DAY
        mem = self.store.memories
        counts = {"expired": 0, "purged": 0}
        for tenant in mem.tenants():
            due = [r for r in mem.expiring(tenant, now + 1) if r.expires_at <= now]
            for start in range(0, len(due), 1000):
                with self.store.batch() as b:
                    for rec in due[start:start + 1000]:
                        if rec.expires_at + grace <= now:
                            b.memories.erase(tenant, rec.memory_id)
                            counts["purged"] += 1
                        else:
                            counts["expired"] += 1
        return counts
