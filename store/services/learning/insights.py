"""The insights report: what a person reads about their agents' sessions.

``gather(...)`` collects the numbers; ``markdown(data)`` and ``html(data)``
render them (the HTML is one self-contained file: inline CSS and SVG bar
charts, no script, nothing fetched). It is never written into a prompt.

What it holds: sessions and agents (and models), tools and their failures,
what learning proposed, what was approved and rejected, and how much of each
scope's memory budget (the always-injected kinds) is used. No tool output,
no arguments, no quotes: only counts, tool names and the statements of
learned memories, which passed the gate's secret scan; every text is checked
again and withheld if a secret rule matches it.
"""
from __future__ import annotations

import html as _html
import time
from collections import Counter
from datetime import datetime, timezone
from typing import Any, Callable

from ctxproxy.store.learned import LEARNED_BY
from ctxproxy.store.memory_records import SNAPSHOT_KINDS

from .extract import stored

TOP = 12


def gather(store: Any, sessions: Any, tenant: str, *, user: str | None = None, snapshot_chars: dict[str, int],
           secrets: Callable[[str], str | None] = lambda text: None, now: float | None = None) -> dict[str, Any]:
    now = time.time() if now is None else now

    def safe(text: str) -> str:
        return "[withheld: it matched a secret rule]" if text and secrets(text) else text

    known = sessions.quiet_sessions(tenant, after=-1.0, until=float("inf")) if sessions is not None else []
    mine = [(s, u, p, last, rows) for s, u, p, last, rows in known if user is None or u == user]
    ids = {s for s, *_ in mine}
    agents: Counter = Counter()
    models: Counter = Counter()
    turns = 0
    for d in store.manifests.list(tenant):
        m = d.data
        if m.get("session_id") not in ids:
            continue
        turns += 1
        if m.get("model"):
            models[safe(str(m["model"]))] += 1
    for s, *_ in mine:
        ex = stored(store, tenant, s)
        agents[ex.agent if ex is not None and ex.agent else "not read yet"] += 1
    calls: Counter = Counter()
    failed: Counter = Counter()
    for rec in store.effects.list(tenant):
        if rec.session not in ids:
            continue
        calls[safe(rec.tool)] += 1
        if rec.state == "failed" or (rec.state == "resolved" and rec.resolution in ("failed", "not_executed")):
            failed[safe(rec.tool)] += 1
    learned = [r for r in store.memories.iter_tenant(tenant) if r.created_by == LEARNED_BY
               and (user is None or r.user in ("", user))]
    statuses = Counter("rejected" if r.status == "deleted" else r.status for r in learned)
    kinds = Counter(r.kind for r in learned if r.status in ("proposed", "active"))
    budget = []
    scopes = {("", ""), *((r.project, r.user) for r in learned)}
    for project, u in sorted(scopes):
        if user is not None and u not in ("", user):
            continue
        name = "user" if u else "project" if project else "tenant"
        cap = int(snapshot_chars.get(name, 0))
        used = sum(len(r.statement) for r in store.memories.scope_records(tenant, project, u, "", snapshot=True)
                   if r.servable(now))
        if used or (project, u) != ("", ""):
            budget.append({"scope": name, "project": safe(project), "user": safe(u), "used": used, "cap": cap})
    return {"tenant": tenant, "user": user, "generated_at": now,
            "sessions": len(mine), "turns": turns, "agents": dict(agents.most_common()),
            "models": dict(models.most_common(TOP)), "tools": dict(calls.most_common(TOP)),
            "failures": dict(failed.most_common(TOP)), "tool_calls": sum(calls.values()),
            "failed_calls": sum(failed.values()), "learned": dict(statuses), "kinds": dict(kinds),
            "approved": [_item(r, safe) for r in learned if r.status == "active"][:TOP],
            "proposed": [_item(r, safe) for r in learned if r.status == "proposed"][:TOP],
            "budget": budget}


def _item(rec: Any, safe: Callable[[str], str]) -> dict[str, str]:
    return {"memory_id": rec.memory_id, "kind": rec.kind, "scope": rec.scope, "statement": safe(rec.statement)}


def _day(t: float) -> str:
    return datetime.fromtimestamp(t, timezone.utc).strftime("%Y-%m-%d %H:%M UTC")


def markdown(d: dict[str, Any]) -> str:
    who = f" — user {d['user']}" if d["user"] else ""
    out = [f"# ctxproxy insights: tenant {d['tenant']}{who}", "", f"Generated {_day(d['generated_at'])}.", "",
           "## Sessions and agents", "", f"- {d['sessions']} sessions, {d['turns']} model calls",
           *(f"- {a}: {n} session(s)" for a, n in d["agents"].items()),
           *(f"- model {m}: {n} call(s)" for m, n in d["models"].items()), "",
           "## Tools and failures", "", f"- {d['tool_calls']} tool calls on the ledger, {d['failed_calls']} failed",
           *(f"- {t}: {n} call(s), {d['failures'].get(t, 0)} failed" for t, n in d["tools"].items()), "",
           "## What was learned", "",
           "- " + (", ".join(f"{n} {s}" for s, n in sorted(d["learned"].items())) or "nothing yet"),
           *(f"- {k}: {n}" for k, n in sorted(d["kinds"].items()))]
    for title, key in (("Approved", "approved"), ("Waiting for review", "proposed")):
        if d[key]:
            out += ["", f"### {title}", "", *(f"- [{i['kind']}, {i['scope']}] {i['statement']}" for i in d[key])]
    out += ["", "## Memory budget (always-injected kinds)", "",
            *(f"- {b['scope']}{' ' + b['project'] if b['project'] else ''}{' ' + b['user'] if b['user'] else ''}: "
              f"{b['used']} of {b['cap']} characters" for b in d["budget"]), ""]
    return "\n".join(out)


def _bars(title: str, rows: list[tuple[str, float, float]], unit: str) -> str:
    """An inline SVG horizontal bar chart: (label, value, second value drawn over it)."""
    if not rows:
        return f"<h3>{_html.escape(title)}</h3><p>none</p>"
    top = max(max(v, w) for _, v, w in rows) or 1
    h = 22 * len(rows) + 8
    parts = [f'<svg role="img" aria-label="{_html.escape(title)}" width="640" height="{h}" '
             f'xmlns="http://www.w3.org/2000/svg">']
    for i, (label, v, w) in enumerate(rows):
        y = 4 + 22 * i
        parts.append(f'<text x="0" y="{y + 14}" font-size="12">{_html.escape(label[:28])}</text>')
        parts.append(f'<rect x="200" y="{y}" width="{360 * v / top:.1f}" height="16" fill="#7aa6d8"/>')
        if w:
            parts.append(f'<rect x="200" y="{y}" width="{360 * w / top:.1f}" height="16" fill="#d8817a"/>')
        parts.append(f'<text x="{206 + 360 * max(v, w) / top:.1f}" y="{y + 14}" font-size="12">'
                     f'{v:g}{(" / " + format(w, "g")) if w else ""} {unit}</text>')
    parts.append("</svg>")
    return f"<h3>{_html.escape(title)}</h3>" + "".join(parts)


def html(d: dict[str, Any]) -> str:
    e = _html.escape
    who = f" — user {e(d['user'])}" if d["user"] else ""
    tools = _bars("Tool calls (red: failed)", [(t, n, d["failures"].get(t, 0)) for t, n in d["tools"].items()],
                  "calls")
    budget = _bars("Memory budget used (characters; red: over)",
                   [(f"{b['scope']} {b['project'] or b['user']}".strip(), min(b["used"], b["cap"]),
                     b["used"] if b["used"] > b["cap"] else 0) for b in d["budget"]], "chars")

    def items(key: str) -> str:
        return "".join(f"<li><b>{e(i['kind'])}</b> ({e(i['scope'])}) {e(i['statement'])}</li>" for i in d[key]) \
            or "<li>none</li>"

    learned = ", ".join(f"{n} {e(s)}" for s, n in sorted(d["learned"].items())) or "nothing yet"
    agents = "".join(f"<li>{e(a)}: {n} session(s)</li>" for a, n in d["agents"].items())
    models = "".join(f"<li>{e(m)}: {n} call(s)</li>" for m, n in d["models"].items())
    return f"""<!doctype html>
<html lang="en"><head><meta charset="utf-8"><title>ctxproxy insights: {e(d['tenant'])}</title>
<style>body{{font:14px/1.5 system-ui,sans-serif;max-width:760px;margin:2em auto;color:#222}}
h1{{font-size:22px}}h2{{font-size:18px;border-bottom:1px solid #ddd}}li{{margin:.2em 0}}</style></head>
<body><h1>ctxproxy insights: tenant {e(d['tenant'])}{who}</h1><p>Generated {_day(d['generated_at'])}.</p>
<h2>Sessions and agents</h2><p>{d['sessions']} sessions, {d['turns']} model calls.</p><ul>{agents}{models}</ul>
<h2>Tools and failures</h2><p>{d['tool_calls']} tool calls on the ledger, {d['failed_calls']} failed.</p>{tools}
<h2>What was learned</h2><p>{learned}.</p>
<h3>Approved</h3><ul>{items('approved')}</ul><h3>Waiting for review</h3><ul>{items('proposed')}</ul>
<h2>Memory budget</h2>{budget}
<p><small>For people: this report is never written into a prompt.</small></p></body></html>
"""
