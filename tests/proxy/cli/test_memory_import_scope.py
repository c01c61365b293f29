"""``memory import --user`` through a running proxy: every format's entries are
the named user's, so another user's turn never receives them (not as recall
evidence, not in the frozen snapshot), and each entry names its own file."""
from __future__ import annotations

import asyncio
import json
from pathlib import Path

import pytest

from ctxproxy.proxy.cli.main import main

TOKEN = "import-scope-token"


def write(path: Path, text: str) -> Path:
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_text(text, "utf-8")
    return path


def layouts(root: Path) -> dict[str, tuple[Path, list[str]]]:
    """format -> (what to import, the canary words of its entries: facts' first)."""
    claude = root / "claude" / "memory"
    write(claude / "MEMORY.md", "# Memory index\n\n- [Role](role.md) — who the user is\n"
                                "- The quillfeather service deploys from the release branch.\n")
    write(claude / "role.md", "---\nname: role\ndescription: who the user is\ntype: user\n---\n\n"
                              "Prefers the marblewick style of terse answers.\n")
    codex = root / ".codex" / "memories"
    write(codex / "MEMORY.md", "# Durable memory\n\n- The tansyglade cluster runs the nightly batch jobs.\n")
    write(codex / "memory_summary.md", "- Fixing the tansyglade flaky test -> thread 0193\n")
    openclaw = root / "workspace"
    write(openclaw / "MEMORY.md", "# MEMORY.md\n\n- The brindlecove dashboard lives on the ops wiki.\n")
    write(openclaw / "memory" / "2026-11-02.md", "# 2026-11-02\n\n- Rotated the brindlecove dashboard keys.\n")
    hermes = root / ".hermes" / "memories"
    write(hermes / "MEMORY.md", "The corvalmere queue drains every ten minutes.\n§\n"
                                "The corvalmere worker pool has eight workers.")
    write(hermes / "USER.md", "Prefers the zephyrine layout for reports.")
    jsonl = write(root / "export.jsonl", json.dumps({"statement": "The ostrelund archive keeps ninety days.",
                                                     "kind": "fact", "user": "alice"}) + "\n")
    return {"claude": (claude, ["quillfeather", "marblewick"]),
            "codex": (codex, ["tansyglade"]),
            "openclaw": (openclaw, ["brindlecove"]),
            "hermes": (hermes, ["corvalmere", "zephyrine"]),
            "jsonl": (jsonl, ["ostrelund"])}


def sent(record) -> str:
    return json.dumps(record.json, ensure_ascii=False)


async def test_every_format_lands_in_the_named_users_scope(make_proxy, fake, monkeypatch, capsys, tmp_path):
    monkeypatch.setenv("CTXPROXY_ADMIN_TOKEN", TOKEN)
    p = await make_proxy("")

    def cli(*argv: object) -> tuple[int, str, str]:
        code = main([str(a) for a in argv])
        out = capsys.readouterr()
        return code, out.out, out.err

    found = layouts(tmp_path / "agents")
    for fmt, (path, _) in found.items():
        code, out, err = await asyncio.to_thread(cli, "memory", "import", path, "--format", fmt, "--user", "bob",
                                                 "--url", p.url, "--token", TOKEN, "--json")
        assert code == 0, err
        summary = json.loads(out)["summary"]
        assert summary["refused"] == summary["invalid"] == 0 and summary["created"] >= 1, (fmt, out)
    records = p.settled_store().memories.list("default")
    assert records and {r.user for r in records} == {"bob"}
    for r in records:
        if r.evidence_ref.startswith("file:"):  # jsonl keeps its record's own fields
            file, _, line = r.evidence_ref[len("file:"):].rpartition("#")
            assert Path(file).is_absolute() and Path(file).is_file() and line.isdigit(), r.evidence_ref

    for fmt, (_, words) in found.items():
        for user in ("alice", "bob"):
            client = p.anthropic(default_headers={"X-Ctx-User": user, "X-Ctx-Session": f"{user}-{fmt}"})
            await client.messages.create(model="claude-test", max_tokens=16, messages=[
                {"role": "user", "content": f"What do we know about {words[0]}?"}])  # the rest: preferences
            body = sent(fake.last)
            for word in words:
                statement_seen = any(word in r.statement and r.statement in body for r in records)
                if user == "alice":
                    assert not statement_seen, (fmt, word)
                else:
                    assert statement_seen, (fmt, word, body[-2000:])


@pytest.mark.parametrize("fmt, name", [("claude", "role.md"), ("hermes", "USER.md")])
def test_an_entry_of_one_user_without_user_is_refused_not_widened(tmp_path, capsys, fmt, name):
    from ctxproxy.store import open_store

    data = tmp_path / "data"
    open_store(str(data / "store")).close()
    path, _ = layouts(tmp_path / "agents")[fmt]
    code = main(["memory", "import", str(path), "--format", fmt, "--data-dir", str(data)])
    err = capsys.readouterr().err
    assert code == 2 and name in err and "--user" in err
    with open_store(str(data / "store")) as s:
        assert s.memories.list("default") == []
