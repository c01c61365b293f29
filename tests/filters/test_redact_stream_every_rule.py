"""Through the proxy, as a chat client streams it (the official SDK, the scripted
provider): every default rule's sample secret after non-ASCII prose, cut across two and
three of the provider's deltas, reaches the client as the whole answer does, redacted."""
import math
import re

import pytest
from secretcorpus import build_corpus

from ctxproxy.proxy.scripted_provider import Reply
from ctxproxy.store.services.redaction import DEFAULT_GROUPS, PLACEHOLDER_RE, builtin_rules

UNCOALESCED = "[server]\ncoalesce_deltas = false\n"  # each delta its own event: the cuts stay where they are
PROSE = "Résumé — 東京 naïve café, ça va? 🔑 "
FILLER = " Then the tests ran and passed."
MSG = [{"role": "user", "content": "what is in the config?"}]
DEFAULT_RULES = {r.id for r in builtin_rules() if r.group in DEFAULT_GROUPS}
# A placeholder's tag differs between two turns: compared by the rule it names.
_TAG = re.compile(r":[0-9a-f]{8}\]")
SAMPLES = {}
for _s in build_corpus(seed=21, positives_per_rule=1):
    if _s.secrets and _s.rule in DEFAULT_RULES and _s.rule not in SAMPLES:
        SAMPLES[_s.rule] = _s


async def _answer(client, stream: bool) -> str:
    if not stream:
        r = await client.chat.completions.create(model="gpt-x", messages=MSG)
        return _untagged(r.choices[0].message.content)
    out = []
    async for chunk in await client.chat.completions.create(model="gpt-x", messages=MSG, stream=True):
        out += [c.delta.content for c in chunk.choices if c.delta.content]
    return _untagged("".join(out))


def _untagged(text: str) -> str:
    return PLACEHOLDER_RE.sub(lambda m: _TAG.sub("]", m.group(0)), text)


async def test_every_default_rule_cut_across_deltas(make_proxy, fake):
    proxy = await make_proxy(UNCOALESCED)
    client = proxy.openai()  # one client for every turn, as an application keeps one
    assert len(SAMPLES) > 60
    for rule, sample in sorted(SAMPLES.items()):
        values = [v for _, v in sample.secrets]
        text = PROSE + sample.text
        at = text.index(values[0])
        fake.script(Reply.text(text + FILLER))
        want = await _answer(client, stream=False)
        assert not any(v in want for v in values), rule
        # a delta of k characters ends k, 2k... in: the first cut falls inside the secret at
        # its second character, its middle, and one before its end (a second one may too)
        for offset in sorted({1, len(values[0]) // 2, len(values[0]) - 1}):
            k = at + offset
            body = text + FILLER * math.ceil(3 * k / len(FILLER))  # long enough for deltas of k
            fake.script(Reply.text(body, delta_chars=k))
            got = await _answer(client, stream=True)
            fake.script(Reply.text(body))
            assert got == await _answer(client, stream=False), (rule, offset)
            assert not any(v in got for v in values), (rule, offset)
