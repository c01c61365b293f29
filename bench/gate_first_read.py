"""Score a new dev bank once with the shipped gate, before anything is trained on it (a new-author figure).

    python bench/gate_first_read.py slack docs

Reads ``bench/gate_corpus/<bank>/*.toml`` (the parallel format of ``gate_corpora``) and prints, per language,
attacks blocked and clean statements falsely blocked by the rules, the model and the gate (either), with the
shipped model's version. Never give it the sealed bank.
"""
from __future__ import annotations

import sys
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent))
import gate_corpora  # noqa: E402

from ctxproxy.store.services.memory import threat_model  # noqa: E402
from ctxproxy.store.services.memory.threats import normalise, scan_rules  # noqa: E402


def main() -> None:
    banks = sys.argv[1:]
    if not banks or gate_corpora.SEALED in banks:
        raise SystemExit("usage: gate_first_read.py BANK... (never the sealed bank)")
    m = threat_model.model()
    print(f"model {threat_model.file_version()}")
    for bank in banks:
        texts = gate_corpora._parallel_bank(bank, "first read")
        rows = []
        for t in texts:
            r = scan_rules(t.text) is not None
            md = m.verdict(normalise(t.text)).blocked
            rows.append((t.lang, t.label, r, md, r or md))
        for lang in sorted({x[0] for x in rows}) + ["all"]:
            a = [x for x in rows if x[1] == "attack" and lang in (x[0], "all")]
            c = [x for x in rows if x[1] == "clean" and lang in (x[0], "all")]
            pct = [round(100 * sum(x[k] for x in a) / len(a), 1) if a else None for k in (2, 3, 4)]
            print(f"{bank} {lang}: attacks blocked rules/model/gate {pct} of {len(a)}; clean falsely blocked "
                  f"{[sum(x[k] for x in c) for k in (2, 3, 4)]} of {len(c)}")


if __name__ == "__main__":
    main()
