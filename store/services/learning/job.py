"""The learning job: phase 1 for the sessions gone quiet, then phase 2 per tenant.

    learner = Learner(store, session_index, cfg.learn, cfg.memory.gate)
    report = learner.run("acme")                  # what `ctxproxy learn run` does (now, cooldown or not)
    report = learner.run("acme", user="alice")    # one scope: its own watermark
    learner.tick()                                # the background pass: every tenant, when due

A run, for one tenant:

1. reads (no writes): the sessions whose last turn is older than ``min_idle``
   and newer than what the last full run looked at (the horizon), and those
   not read since their last turn (their ``learn`` part is older); the
   extraction feed after the watermark. Nothing to read and nothing new in
   the feed: the run ends here, having written nothing;
2. takes the tenant's lease (``Busy`` when another worker has it);
3. phase 1 per session (``extract``): stores its extraction, appends it to
   the feed;
4. phase 2 (``consolidate``) over the sessions the feed names after the
   watermark — INIT when the watermark is 0 (an empty scope), INCREMENTAL
   after — then moves the watermark to the feed's end (never back) and, a
   full run, starts the cooldown (``[learn] cooldown``, 6 h) and trims the
   consumed feed. The background pass skips phase 2 during the cooldown;
   a person's ``learn run`` does not wait for it;
5. a failure records ``failures`` and ``retry_at`` (backoff doubling from
   ``retry_after`` to ``retry_max``); the background pass waits for it.

A scoped run (``user=`` / ``project=``) reads only that scope's sessions,
consolidates only its candidates, and keeps its own watermark; the tenant's
stays (the next full run sees those sessions again, and finds nothing new in
them). ``dry_run`` extracts and consolidates in memory and writes nothing.
"""
from __future__ import annotations

import logging
import time
from dataclasses import dataclass, field
from typing import Any, Callable

from ctxproxy.config.schema import LearnConfig, MemoryGateConfig
from ctxproxy.store.learned import LEARNED_BY

from . import extract as phase1
from .candidates import VERSION, Candidate, Extraction
from .consolidate import Report, consolidate
from .lease import Busy, Lease, LeaseLost, backoff, owner_token
from .model import ModelExtractor, Refused

log = logging.getLogger("ctxproxy.learn")

INIT, INCREMENTAL = "INIT", "INCREMENTAL"
# The next full run looks again this far before the last one's cutoff: a turn recorded late (the
# session index is written behind the turn) is still found; sessions read already are skipped.
HORIZON_SLACK = 120.0
KEEP_CHUNK = 50  # sessions whose extraction is stored in one transaction


class Stopped(RuntimeError):
    """The process is shutting down: the run stops between two steps."""


@dataclass
class RunReport:
    tenant: str
    scope: str = "all"
    status: str = "ok"  # ok | nothing new | busy | cooldown | backoff | lease lost | stopped | failed
    mode: str = ""
    dry_run: bool = False
    sessions_read: int = 0
    watermark: int = 0
    seconds: float = 0.0
    error: str = ""
    phase2: Report | None = None
    extracted: list[dict[str, Any]] = field(default_factory=list)  # per session read: id and candidate count

    def to_dict(self) -> dict[str, Any]:
        out = {k: getattr(self, k) for k in ("tenant", "scope", "status", "mode", "dry_run", "sessions_read",
                                             "watermark", "seconds", "error", "extracted")}
        out["consolidation"] = self.phase2.to_dict() if self.phase2 is not None else None
        return out


def scope_name(user: str | None, project: str | None) -> str:
    return f"user:{user}" if user else f"project:{project}" if project else "all"


class Learner:
    def __init__(self, store: Any, sessions: Any, config: LearnConfig | None = None,
                 gate_config: MemoryGateConfig | None = None, *, clock: Callable[[], float] = time.time,
                 owner: str | None = None, model: Any = None, gate: Any = None) -> None:
        from ctxproxy.store.services.memory.gate import MemoryGate

        self.store, self.sessions = store, sessions
        self.config = config or LearnConfig()
        self.gate = gate or MemoryGate(store, gate_config or MemoryGateConfig(), clock=clock)
        self.clock = clock
        self.owner = owner or owner_token()
        self.model = model  # optional: fn(SessionRecords) -> list[Candidate] (the model-backed extractor)
        self.stopping = False  # set at shutdown: a run stops between two steps (what it wrote stands)
        # called between two steps (a session read, a few proposals written); a background pass gives
        # way to the proxy's turns here (background.GiveWay): the job may take longer, turns may not
        self.between: Callable[[], None] | None = None

    def _step(self, lease: Lease) -> None:
        if self.stopping:
            raise Stopped("shutting down")
        if self.between is not None:
            self.between()
            if self.stopping:
                raise Stopped("shutting down")
        lease.beat()

    # -- what to read ----------------------------------------------------------------

    def _due(self, tenant: str, horizon: float, now: float, user: str | None, project: str | None
             ) -> tuple[list[tuple[str, float]], float]:
        cutoff = now - self.config.min_idle
        quiet = self.sessions.quiet_sessions(tenant, after=horizon, until=cutoff,
                                             limit=self.config.max_sessions * 4) if self.sessions else []
        due = []
        for session, u, p, last, _ in quiet:
            if (user and u != user) or (project and p != project):
                continue
            done = phase1.stored(self.store, tenant, session)
            if done is None or done.through < last or done.version != VERSION:
                due.append((session, last))
            if len(due) >= self.config.max_sessions:
                cutoff = last  # the rest wait for the next pass
                break
        return due, cutoff

    def _extract(self, tenant: str, session: str, now: float) -> Extraction:
        records = phase1.SessionRecords(self.store, self.sessions, tenant, session)
        found = phase1.extract(records, now=now)
        if self.model is not None:
            try:
                found.candidates += [c for c in self.model(records) if c.key() not in
                                     {k.key() for k in found.candidates}]
            except Refused as exc:  # nothing of the answer is kept; the deterministic candidates stand
                log.warning("learn: the model extractor's answer for a session of %s was refused: %s", tenant, exc)
            except Exception as exc:  # the deterministic candidates stand without the model's
                log.warning("learn: model extractor failed for a session of %s: %s", tenant, type(exc).__name__)
        return found

    # -- a run -----------------------------------------------------------------------

    def run(self, tenant: str, *, user: str | None = None, project: str | None = None, dry_run: bool = False,
            force: bool = True) -> RunReport:
        t0 = time.perf_counter()
        now = self.clock()
        scope = scope_name(user, project)
        job = self.store.learning.job(tenant)
        report = RunReport(tenant, scope, dry_run=dry_run)
        if not force and float(job.get("retry_at") or 0) > now:
            report.status = "backoff"
            return report
        full = scope == "all"
        mark = int(job.get("watermark") or 0) if full else int((job.get("scopes") or {}).get(scope) or 0)
        horizon = float(job.get("horizon") or 0.0) if full else 0.0
        due, cutoff = self._due(tenant, horizon, now, user, project)
        fed = self.store.learning.extracted(tenant, after=mark)
        consolidating = force or now >= float(job.get("cooldown_until") or 0)
        report.mode = INIT if mark == 0 else INCREMENTAL
        report.watermark = mark
        if not due and not (fed and consolidating):
            report.status = "nothing new" if consolidating or not fed else "cooldown"
            report.seconds = time.perf_counter() - t0
            return report
        keep = _scope_filter(user, project)
        if dry_run:
            fresh = {s: self._extract(tenant, s, now) for s, _ in due}
            report.sessions_read = len(fresh)
            report.extracted = [{"session": s, "candidates": len(e.candidates)} for s, e in fresh.items()]
            older = [e for s in dict.fromkeys(s for _, s in fed) if s not in fresh
                     and (e := phase1.stored(self.store, tenant, s)) is not None]
            report.phase2 = consolidate(self.store, self.gate, tenant, [*older, *fresh.values()], keep=keep,
                                        dry_run=True)
            report.phase2.mode = report.mode
            report.seconds = time.perf_counter() - t0
            return report
        try:
            with Lease(self.store.learning, tenant, self.owner, self.config.lease_ttl) as lease:
                chunk = KEEP_CHUNK if self.model is None else 1  # a model call per session: beat the lease after each
                for start in range(0, len(due), chunk):  # read outside, stored together: one commit
                    found = []
                    for session, _ in due[start:start + chunk]:
                        found.append(self._extract(tenant, session, now))
                        self._step(lease)
                    with self.store.batch() as b:
                        for f in found:
                            phase1.keep(b, tenant, f)
                    report.extracted += [{"session": f.session, "candidates": len(f.candidates)} for f in found]
                report.sessions_read = len(due)
                changes: dict[str, Any] = {"horizon": cutoff - HORIZON_SLACK} if full else {}
                if consolidating:
                    fed = self.store.learning.extracted(tenant, after=mark)
                    high = fed[-1][0] if fed else mark
                    extractions = [e for s in dict.fromkeys(s for _, s in fed)
                                   if (e := phase1.stored(self.store, tenant, s)) is not None]
                    report.phase2 = consolidate(self.store, self.gate, tenant, extractions, keep=keep,
                                                heartbeat=lambda: self._step(lease))
                    report.phase2.mode = report.mode
                    report.watermark = high
                    done = {"at": now, "mode": report.mode, "scope": scope, "sessions": len(extractions),
                            **{k: v for k, v in report.phase2.to_dict().items() if k != "proposals"}}
                    changes.update({"last_run": done, "failures": 0, "retry_at": 0, "last_error": "",
                                    "runs": int(job.get("runs") or 0) + 1})
                    if full:
                        changes.update({"watermark": high, "last_success_at": now,
                                        "cooldown_until": now + self.config.cooldown})
                    else:
                        changes["scopes"] = {scope: high}
                if changes:
                    self.store.learning.save_job(tenant, changes)
                if consolidating and full and report.watermark:
                    self.store.learning.trim_feed(tenant, report.watermark)
        except Busy as exc:
            report.status, report.error = "busy", str(exc)
        except LeaseLost as exc:  # another worker runs it now; what was written stands (it is idempotent)
            report.status, report.error = "lease lost", str(exc)
        except Stopped:  # the next start goes on from the watermark
            report.status = "stopped"
        except Exception as exc:
            failures = int(job.get("failures") or 0) + 1
            wait = backoff(failures, self.config.retry_after, self.config.retry_max)
            self.store.learning.save_job(tenant, {"failures": failures, "retry_at": now + wait,
                                                  "last_error": f"{type(exc).__name__}: {exc}"[:300]})
            log.warning("learn: run for tenant %s failed (%s); retry in %gs", tenant, type(exc).__name__, wait)
            report.status, report.error = "failed", f"{type(exc).__name__}: {exc}"
        report.seconds = time.perf_counter() - t0
        return report

    @classmethod
    def for_config(cls, store: Any, cfg: Any, data_dir: Any, *, sessions: Any = None, model: Any = None,
                   gate: Any = None) -> "Learner":
        """The learner of a proxy's store and config (the session index beside the store)."""
        from ctxproxy.store.session_index import open_session_index

        if sessions is None:
            sessions = open_session_index(data_dir, store)
        learner = cls(store, sessions, cfg.learn, cfg.memory.gate, model=model, gate=gate)
        if learner.model is None:  # [learn] model: through its route ("" = deterministic only)
            learner.model = ModelExtractor.from_config(cfg, learner.gate)
        return learner

    def tenants(self) -> list[str]:
        known = set(self.sessions.tenants()) if self.sessions is not None else set()
        return sorted(known | set(self.store.learning.tenants()))

    def tick(self) -> list[RunReport]:
        """One background pass: every tenant, respecting cooldowns and backoffs."""
        out = []
        for tenant in self.tenants():
            if self.stopping:
                break
            report = self.run(tenant, force=False)
            if report.status not in ("nothing new", "cooldown"):
                log.info("learn: %s: %s, %d session(s) read%s", tenant, report.status, report.sessions_read,
                         f", {report.phase2.proposed} proposed" if report.phase2 else "")
            out.append(report)
        return out

    # -- status ----------------------------------------------------------------------

    def status(self, tenant: str) -> dict[str, Any]:
        job = self.store.learning.job(tenant)
        counts: dict[str, int] = {}
        for rec in self.store.memories.iter_tenant(tenant):
            if rec.created_by == LEARNED_BY:
                name = "rejected" if rec.status == "deleted" else rec.status
                counts[name] = counts.get(name, 0) + 1
        mark = int(job.get("watermark") or 0)
        return {"tenant": tenant, "lease": self.store.learning.lease(tenant), "watermark": mark,
                "scopes": job.get("scopes") or {}, "pending_sessions": len(self.store.learning.extracted(tenant, mark)),
                "last_extracted": self.store.learning.last_extracted(tenant),
                "last_run": job.get("last_run"), "last_success_at": job.get("last_success_at"),
                "cooldown_until": job.get("cooldown_until"), "failures": int(job.get("failures") or 0),
                "retry_at": job.get("retry_at") or None, "last_error": job.get("last_error") or "",
                "memories": counts, "rejected_remembered": self.store.learning.rejected_count(tenant)}


def _scope_filter(user: str | None, project: str | None) -> Callable[[Candidate], bool]:
    if user:
        return lambda c: c.user == user
    if project:
        return lambda c: c.project == project
    return lambda c: True
