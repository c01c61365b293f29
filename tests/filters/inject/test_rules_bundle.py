"""The project rules bundle: order, sha256, revision, conflicts, revocation, re-reads."""
import hashlib
import os
from pathlib import Path

import pytest
from fixedclock import Clock

from ctxproxy.filters.inject import rules_bundle
from ctxproxy.filters.inject.rules_bundle import RulesBundle, RulesSources


def write(root: Path, rel: str, text: str) -> Path:
    p = root / rel
    p.parent.mkdir(parents=True, exist_ok=True)
    p.write_text(text)
    return p


def sha(p: Path) -> str:
    return hashlib.sha256(p.read_bytes()).hexdigest()


@pytest.fixture
def repo(tmp_path):
    root = tmp_path / "repo"
    write(root, "AGENTS.md", "# Project\nUse tabs.\n")
    write(root, "pkg/AGENTS.md", "# Package\nRun make test.\n")
    write(root, "pkg/deep/AGENTS.md", "# Deep\nNo network.\n")
    write(root, "node_modules/x/AGENTS.md", "# Vendored\nIGNORE ME\n")
    write(root, ".git/AGENTS.md", "# Git\nIGNORE ME\n")
    write(root, "CLAUDE.local.md", "# Mine\nBe brief.\n")
    write(root, ".ctxproxy/tasks/t-1.md", "# Task\nFix bug 12.\n")
    write(tmp_path / "etc", "policy.md", "# Policy\nNever push to main.\n")
    return root


def sources(root: Path, **kw) -> RulesSources:
    base = dict(root=str(root), managed=(str(root.parent / "etc" / "policy.md"),),
                task=(".ctxproxy/tasks/{task}.md",), project=("**/AGENTS.md",), local=("CLAUDE.local.md",))
    base.update(kw)
    return RulesSources(**base)


def test_order_is_managed_task_project_local_shallow_first(repo):
    bundle = RulesBundle(sources(repo)).get("t-1")
    assert [(f.layer, f.path) for f in bundle.files] == [
        ("managed", str((repo.parent / "etc" / "policy.md").resolve())),
        ("task", ".ctxproxy/tasks/t-1.md"),
        ("project", "AGENTS.md"), ("project", "pkg/AGENTS.md"), ("project", "pkg/deep/AGENTS.md"),
        ("local", "CLAUDE.local.md"),
    ]
    text = "\n".join(bundle.layers[layer] for layer in ("managed", "task", "project", "local"))
    assert "IGNORE ME" not in text  # node_modules and .git are never walked
    order = [text.index(s) for s in ("Never push", "Fix bug 12", "Use tabs", "Run make test", "No network",
                                     "Be brief")]
    assert order == sorted(order)


def test_each_file_has_its_sha256_and_the_revision_hashes_the_resolved_text(repo):
    bundle = RulesBundle(sources(repo)).get("t-1")
    for f in bundle.files:
        path = Path(f.path) if os.path.isabs(f.path) else repo / f.path
        assert f.sha256 == sha(path) and f.size == path.stat().st_size
    resolved = "\n\n".join(f"[{layer}]\n{bundle.layers[layer]}" for layer in ("managed", "task", "project", "local"))
    assert bundle.revision == hashlib.sha256(resolved.encode()).hexdigest()
    assert f"sha256:{bundle.files[2].sha256[:12]}" in bundle.layers["project"]
    info = bundle.info()
    assert info["bundle_id"].startswith("rb-") and info["revision"] == bundle.revision
    assert info["files"][0] == {"path": bundle.files[0].path, "layer": "managed", "sha256": bundle.files[0].sha256,
                                "bytes": bundle.files[0].size}


def test_bundle_id_is_stable_and_revision_follows_content(repo):
    clock = Clock()
    a = RulesBundle(sources(repo), clock=clock)
    b = RulesBundle(sources(repo), clock=clock)
    first = a.get("t-1")
    assert a.bundle_id == b.bundle_id and b.get("t-1").revision == first.revision
    p = repo / "pkg" / "AGENTS.md"
    p.write_text("# Package\nRun make check.\n")
    os.utime(p, ns=(p.stat().st_mtime_ns + 10**9,) * 2)
    clock.t += 5
    second = a.get("t-1")
    assert second.revision != first.revision and second.bundle_id == first.bundle_id
    assert "make check" in second.layers["project"]


def test_a_file_matched_twice_is_kept_once_in_its_first_layer(repo):
    bundle = RulesBundle(sources(repo, local=("AGENTS.md", "CLAUDE.local.md"))).get("t-1")
    assert [f.layer for f in bundle.files if f.path == "AGENTS.md"] == ["project"]


def test_task_placeholder_is_path_safe(repo):
    write(repo.parent, "secret.md", "# Secret\nTOP SECRET\n")
    bundle = RulesBundle(sources(repo, task=("../{task}.md",))).get("../secret")
    assert all("TOP SECRET" not in t for t in bundle.layers.values())
    assert RulesBundle(sources(repo)).get("").layers.get("task") is None  # no task, no task files


def test_key_conflict_names_both_sources_and_the_rule_applied(repo):
    write(repo.parent / "etc", "policy.md", "# Policy\nkey: package-manager = npm\n")
    write(repo, "AGENTS.md", "# Project\n- key: package-manager = pnpm\nkey: indent = tabs\n")
    write(repo, "CLAUDE.local.md", "key: indent = tabs\n")  # same value: no conflict
    bundle = RulesBundle(sources(repo)).get("t-1")
    (c,) = bundle.conflicts
    assert c["type"] == "instruction_conflict" and c["kind"] == "key" and c["name"] == "package-manager"
    assert c["applied"]["layer"] == "managed" and c["applied"]["path"].endswith("policy.md")
    assert c["overridden"] == {"path": "AGENTS.md", "layer": "project", "sha256": sha(repo / "AGENTS.md"),
                               "line": 2, "value_sha256": c["overridden"]["value_sha256"]}
    assert "managed > task > project > local" in c["rule"]
    assert "pnpm" not in str(c) and "npm" not in str(c)  # digests, never the values
    assert "pnpm" not in bundle.layers["project"]
    assert 'key "package-manager" overridden by' in bundle.layers["project"]
    assert "key: package-manager = npm" in bundle.layers["managed"]


def test_heading_conflict_keeps_the_first_body(repo):
    write(repo, "AGENTS.md", "# Project\n## Testing\nRun pytest -q.\n## Style\nBlack.\n")
    write(repo, "CLAUDE.local.md", "## Testing\nRun nothing, trust me.\n## Style\nBlack.\n")
    bundle = RulesBundle(sources(repo)).get("t-1")
    (c,) = bundle.conflicts
    assert c["kind"] == "heading" and c["name"] == "testing"
    assert c["applied"]["path"] == "AGENTS.md" and c["overridden"]["path"] == "CLAUDE.local.md"
    local = bundle.layers["local"]
    assert "trust me" not in local and "## Testing\n[ctxproxy: section overridden by AGENTS.md (project)]" in local
    assert "Black." in local  # identical section: kept, no conflict


def test_declarations_inside_code_fences_are_not_rules(repo):
    write(repo, "AGENTS.md", "# Project\n```\nkey: shell = zsh\n## Testing\n```\n")
    write(repo, "CLAUDE.local.md", "key: shell = bash\n")
    assert RulesBundle(sources(repo)).get("t-1").conflicts == ()


def test_revoked_file_is_refused_and_the_rest_loads(repo):
    bad = sha(repo / "pkg" / "AGENTS.md")
    bundle = RulesBundle(sources(repo, revoked=(f"sha256:{bad}",))).get("t-1")
    assert "Run make test" not in bundle.layers["project"] and "Use tabs" in bundle.layers["project"]
    assert {"path": "pkg/AGENTS.md", "layer": "project", "sha256": bad, "reason": "revoked"} in bundle.refused
    assert bundle.loaded
    # a 12-character prefix is enough
    short = RulesBundle(sources(repo, revoked=(bad[:12],))).get("t-1")
    assert [r["reason"] for r in short.refused] == ["revoked"]


def test_revoked_revision_refuses_the_whole_bundle(repo):
    rev = RulesBundle(sources(repo)).get("t-1").revision
    bundle = RulesBundle(sources(repo, revoked=(f"rev:{rev}",))).get("t-1")
    assert not bundle.loaded and bundle.layers == {} and bundle.revision == ""
    (r,) = bundle.refused
    assert r["revision"] == rev and r["reason"] == "revoked" and "AGENTS.md" in r["files"]


def test_unreadable_large_and_binary_files_are_refused(repo):
    (repo / "big.md").write_text("x" * 5000)
    (repo / "bin.md").write_bytes(b"\xff\xfe\x00bad")
    bundle = RulesBundle(sources(repo, project=("AGENTS.md", "big.md", "bin.md"), max_file_bytes=4096)).get("t-1")
    reasons = {r["path"]: r["reason"] for r in bundle.refused}
    assert reasons == {"big.md": "larger than 4096 bytes", "bin.md": "not UTF-8"}
    assert [f.path for f in bundle.files if f.layer == "project"] == ["AGENTS.md"]


def test_files_are_read_once_and_again_only_when_mtime_changes(repo, monkeypatch):
    reads = []
    real = Path.read_bytes

    def counting(self):
        reads.append(self.name)
        return real(self)

    monkeypatch.setattr(Path, "read_bytes", counting)
    walks = []
    real_walk = os.walk
    monkeypatch.setattr(rules_bundle.os, "walk", lambda *a, **k: (walks.append(a[0]), real_walk(*a, **k))[1])
    clock = Clock()
    rb = RulesBundle(sources(repo), clock=clock)
    first = rb.get("t-1")
    n_reads, n_walks = len(reads), len(walks)
    assert n_reads == 6
    for _ in range(50):  # many turns inside the refresh interval: no file system access at all
        assert rb.get("t-1") is first
    assert (len(reads), len(walks)) == (n_reads, n_walks)
    clock.t += 5  # interval over: stat and glob again, but nothing changed, nothing re-read
    assert rb.get("t-1") is first and len(reads) == n_reads
    p = repo / "AGENTS.md"
    p.write_text("# Project\nUse spaces.\n")
    os.utime(p, ns=(p.stat().st_mtime_ns + 10**9,) * 2)
    clock.t += 5
    changed = rb.get("t-1")
    assert reads[n_reads:] == ["AGENTS.md"] and "Use spaces" in changed.layers["project"]


def test_no_sources_means_no_bundle(tmp_path):
    assert RulesBundle(RulesSources(root=str(tmp_path))).get("t") is None
