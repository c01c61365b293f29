"""StreamRedactor: what the client receives, concatenated, equals redacting the whole text."""
from __future__ import annotations

import random
import re

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st
from secretcorpus import TEST_KEY, build_corpus, redactor

from ctxproxy.store.services.redaction import PLACEHOLDER_RE, RedactionError, StreamRedactor, Vault

GHP = "ghp_" + "aB3dE5fG7hJ9kL1mN3pQ5rS7tU9vW1xY3zA5"
SLACK = "xoxb-" + "73018462951-4829105736284-" + "aZ3bY4cX5dW6eV7fU8gT9hS0"
JWT = ("eyJhbGciOiJIUzI1NiIsInR5cCI6IkpXVCJ9.eyJzdWIiOiI0MjQyNDIiLCJyb2xlIjoiYWRtaW4ifQ."
       "Qm9keVNpZ25hdHVyZV8xMjM0NTY3ODlfYWJjZGVm")
PEM = ("-----BEGIN EC PRIVATE KEY-----\nMHcCAQEEIBkg4LVWM9nuwNSk3yByxZpYRTBnVJk5oW5WgNeO7Z4EoAoGCCqGSM49\n"
       "AwEHoUQDQgAEWNAp0a3gV9bGfvsP3u8lAf5XfZnJv3fXb1Gx8kqZMF+gnXkhV2Q1\n-----END EC PRIVATE KEY-----")

SHORT_CASES = [
    f"token={GHP}!",
    f"Bot says: {SLACK} done",
    f'{{"Authorization": "Bearer {JWT}"}}',
    "postgres://admin:hunter2hunter2@db.internal/app",
    f'{{"out": "deployed\\n{GHP}\\n"}}',  # glued to an escape: the pending table must still see the token
    f"cb?next=%2Fhooks%3Ftoken%3D{GHP}&x=1",
    "run: PGPASSWORD=Hq4Vm8Zr2Kt6 psql -h db",
    # one credential inside another's value: the two findings overlap and go as one
    "log: Authorization: Bearer NAME_KEY=Hq4Vm8Zr2K@t6Wq8Zr3 ok",
    "curl -H 'Authorization: Bearer Zq8Lm3Xv7Rt2.NAME_PASSWORD=Hq4Vm8Zr2Kt6Wq8Zr3' https://x",
]

# Secrets whose rule's match begins before them, in text the stream releases at once: the
# scheme of a URL (``://`` not come yet), a variable's name (no ``=`` yet), a keyword.
RELEASED_EARLY_CASES = [
    "see postgres://deploy:Zq8vN2mK4pL6wE@db.internal/app now",
    "then export DEPLOY_TOKEN=Hq4Vm8Zr2Kt6xYw and run it",
    "the api key is sk-" + "proj-" + "aB3dE5fG7hJ9kL1mN3pQ5rS7tU9vW1xY3zA5bC7dE9fG1h",
    'config: {"password": "s3cr3tP4ssw0rd!xQ"} done',
    f"one https://x.example/a then https://u:Zq8vN2mK4pL6@h.io/x and {GHP}.",
]


def _random_pieces(rng: random.Random, text: str, longest: int) -> list[str]:
    """``text`` cut into pieces of 1 to ``longest`` characters."""
    pieces, i = [], 0
    while i < len(text):
        n = rng.randint(1, longest)
        pieces.append(text[i:i + n])
        i += n
    return pieces


def _stream(red, chunks: list[str], vault=None) -> tuple[str, StreamRedactor]:
    sr = StreamRedactor(red, TEST_KEY, vault)
    out = [sr.feed(c) for c in chunks]
    out.append(sr.flush())
    return "".join(out), sr


@pytest.fixture(scope="module", params=["hyperscan", "python"])
def red(request):
    return redactor(request.param)


@pytest.mark.parametrize("text", SHORT_CASES + RELEASED_EARLY_CASES + [f"key:\n{PEM}\nend"])
def test_every_split_point_two_chunks(red, text):
    want = red.redact(text, TEST_KEY).text
    assert want != text
    for i in range(len(text) + 1):
        got, _ = _stream(red, [text[:i], text[i:]])
        assert got == want, i


@pytest.mark.parametrize("text", SHORT_CASES[:2])
def test_every_pair_of_split_points_three_chunks(red, text):
    want = red.redact(text, TEST_KEY).text
    n = len(text)
    for i in range(n + 1):
        for j in range(i, n + 1):
            got, _ = _stream(red, [text[:i], text[i:j], text[j:]])
            assert got == want, (i, j)


@pytest.mark.parametrize("text", SHORT_CASES + RELEASED_EARLY_CASES + [PEM])
def test_one_character_at_a_time(red, text):
    got, sr = _stream(red, list(text))
    assert got == red.redact(text, TEST_KEY).text
    assert sr.counts == red.redact(text, TEST_KEY).counts


def _chunks(text: str, cuts: list[int]) -> list[str]:
    points = sorted({c % (len(text) + 1) for c in cuts})
    out, last = [], 0
    for p in points:
        out.append(text[last:p])
        last = p
    out.append(text[last:])
    return out


_POOL = [s.text for s in build_corpus(seed=21, positives_per_rule=2)]


@settings(max_examples=120, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(st.lists(st.sampled_from(_POOL), min_size=1, max_size=4), st.lists(st.integers(0, 10_000), max_size=30),
       st.sampled_from(["hyperscan", "python"]))
def test_random_splits_of_corpus_text(texts, cuts, engine):
    red = redactor(engine)
    text = "\n".join(texts)
    got, _ = _stream(red, _chunks(text, cuts))
    assert got == red.redact(text, TEST_KEY).text


def test_many_small_chunks_over_the_corpus():
    red = redactor("hyperscan")
    rng = random.Random(4)
    for text in _POOL[::4]:
        got, _ = _stream(red, _random_pieces(rng, text, 12))
        assert got == red.redact(text, TEST_KEY).text


def test_text_without_a_candidate_prefix_is_not_delayed():
    red = redactor("hyperscan")
    sr = StreamRedactor(red, TEST_KEY)
    assert sr.feed("12:30 -> 13:45 (+1) ... !? ") == "12:30 -> 13:45 (+1) ... !? "
    assert sr.held == 0
    # Prose: only the word being written may still turn into "password=…".
    out = sr.feed("The deploy finished. We rotate keys weekly and the vault is sealed. ")
    assert out.endswith("sealed. ") and sr.held == 0
    out = sr.feed("Next")
    assert sr.held <= len("Next")
    assert sr.flush() == "Next"[len(out):] if out else "Next"


def test_hold_back_is_bounded_by_the_longest_rule():
    red = redactor("hyperscan")
    assert red.max_hold is not None
    sr = StreamRedactor(red, TEST_KEY)
    peak = 0
    text = "prefix text " + GHP + " and then a lot of ordinary words follow " * 20
    for ch in text:
        sr.feed(ch)
        peak = max(peak, sr.held)
    assert peak <= 64  # a GitHub token is 40 characters; nothing else was pending
    sr.flush()
    # Inside a PEM block the bound is the PEM rule's maximum length, and the block is held whole.
    sr = StreamRedactor(red, TEST_KEY)
    emitted = "".join(sr.feed(ch) for ch in PEM)
    assert emitted == "" and sr.held == len(PEM) <= red.max_hold
    assert sr.flush().startswith("[REDACTED:private-key:")


def test_placeholders_in_the_stream_pass_through_unchanged():
    red = redactor("hyperscan")
    ph = red.placeholder("github-pat", GHP, TEST_KEY)
    text = f"You sent {ph}; I will use TOKEN={ph} in the config."
    got, sr = _stream(red, list(text))
    assert got == text and sr.counts == {}


def test_stream_vault_and_errors():
    red = redactor("hyperscan")
    vault = Vault()
    got, sr = _stream(red, ["export T=", GHP[:10], GHP[10:], "\n"], vault)
    ph = PLACEHOLDER_RE.findall(got)[0]
    assert vault.restore(got) == f"export T={GHP}\n" and vault.get(ph) == GHP
    assert sr.flush() == "" and sr.closed
    with pytest.raises(RedactionError):
        sr.feed("more")
    with pytest.raises(RedactionError):
        StreamRedactor(red, b"")


def _counting(red):
    """A fresh redactor over the same rules that counts the characters handed to the
    regexes (the pending check and the scan): the work a chunk costs."""
    from secretcorpus import hyperscan_cache_dir

    from ctxproxy.store.services.redaction import Redactor

    fresh = Redactor(red.rules, use_hyperscan=red.engine == "hyperscan", cache_dir=hyperscan_cache_dir())
    work = [0]
    pending, scan = fresh._pending_start, fresh._scan

    def counted_pending(text, pos):
        work[0] += len(text) - pos
        return pending(text, pos)

    def counted_scan(text, start):
        work[0] += len(text) - start
        return scan(text, start)

    fresh._pending_start, fresh._scan = counted_pending, counted_scan
    return fresh, work


# Secrets where a rule's lookbehind looks two characters back (an escape, a percent-encoding)
# or where it must not (a word that ends in n, r or t), amid non-ASCII prose.
_PROSE = ("Résumé: the naïve café served crème brûlée — 東京 and Zürich, ça va? Then run the "
          "tests; if one fails, read its log first (most failures come from a stale cache). ") * 5
_GLUED = [
    f'{{"out": "build ok\\n{GHP}\\n"}}',
    f"cb?next=%2F{GHP}&x=1",
    f"cb?next=%2f{SLACK}",
    "then\\tAPI_TOKEN=Hq4Vm8Zr2Kt6xYwQ done",
    "éxport\\nPGPASSWORD=Hq4Vm8Zr2Kt6 psql",
    f"an{GHP} and ün{GHP}",
    "postgres://admin:hunter2hunter2@db.internal/app",
]


@pytest.mark.parametrize("secret", _GLUED)
def test_long_chunks_with_a_secret_cut_at_every_offset(red, secret):
    """The text around the secret goes in long pieces (60, 400, and 1500 characters: over
    the amount examined at every piece); the secret is cut at each of its offsets."""
    at = len(_PROSE) // 2
    text = _PROSE[:at] + secret + _PROSE[at:]
    want = red.redact(text, TEST_KEY).text
    assert want != text
    for size in (60, 400, 1500):
        for k in range(at - 2, at + len(secret) + 3):
            cuts = sorted({*range(size, len(text), size), k})
            got, _ = _stream(red, [text[a:b] for a, b in zip([0, *cuts], [*cuts, len(text)])])
            assert got == want, (size, k)


def test_a_long_held_token_in_small_deltas_costs_linear_work(red):
    """A large private key streamed a few characters at a time is held whole; the held
    text used to be examined again on every delta (quadratic: ~900 characters of
    regex input per character here), now once per quarter of growth."""
    rng = random.Random(5)
    alphabet = "ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789+/"
    body = "\n".join("".join(rng.choice(alphabet) for _ in range(64)) for _ in range(120))
    text = ("key follows:\n-----BEGIN RSA PRIVATE KEY-----\n" + body + "\n-----END RSA PRIVATE KEY-----\ndone.\n"
            + "ordinary prose after it. " * 40)
    fresh, work = _counting(red)
    got, sr = _stream(fresh, [text[i:i + 4] for i in range(0, len(text), 4)])
    assert got == red.redact(text, TEST_KEY).text and sr.counts == {"private-key": 1}
    assert work[0] <= 25 * len(text), work[0]


def test_repeated_key_headers_in_small_deltas_cost_linear_work(red):
    """The reviewer's stream case: lines of ``-----BEGIN PRIVATE KEY-----`` with no end,
    in 20-character deltas, keep thousands of characters pending all along."""
    unit = "-----BEGIN PRIVATE KEY-----\n" + "Qk9EWV9MSU5FX0JBU0U2NF9DSEFSUw" * 2 + "\n"
    text = (unit * 100)[:8000]
    fresh, work = _counting(red)
    got, _ = _stream(fresh, [text[i:i + 20] for i in range(0, len(text), 20)])
    assert got == red.redact(text, TEST_KEY).text
    assert work[0] <= 25 * len(text), work[0]


def test_cut_moves_out_of_overlapping_matches():
    """The cut leaves every chain of overlapping matches in one step; same answer as
    moving it one match at a time."""
    from ctxproxy.store.services.redaction.stream import _cut_outside

    def one_at_a_time(spans, cut):
        moved = True
        while moved:
            moved = False
            for s, e in spans:
                if s < cut < e:
                    cut, moved = s, True
        return cut

    rng = random.Random(8)
    for _ in range(3000):
        spans = []
        for _ in range(rng.randint(0, 8)):
            s = rng.randint(0, 40)
            spans.append((s, s + rng.randint(1, 12)))
        cut = rng.randint(0, 50)
        assert _cut_outside(spans, cut) == one_at_a_time(spans, cut), (spans, cut)


def test_lookbehinds_are_set_aside_only_to_find_first_characters():
    from ctxproxy.store.services.redaction.engine import _without_lookbehinds

    assert _without_lookbehinds(r"(?:\b|(?<=\\[nrt])|(?<=%[0-9A-Fa-f]{2}))ghp_") == r"(?:\b||)ghp_"
    assert _without_lookbehinds(r"(?:\A|(?<=\n))x(?<=[)(])y") == r"(?:\A|)xy"
    assert _without_lookbehinds(r"[(?<=]a(?<![a-z])b") == r"[(?<=]a(?<![a-z])b"  # a class, a negative one: kept
    assert _without_lookbehinds(r"(?<=(a") is None
    assert _without_lookbehinds(r"(?<![a-z])b(?<=\(b)", negative=True) == "b"


@pytest.mark.parametrize("pattern, text", [
    (r"\b\$zq[0-9]{12}", "see x$zq012345678901 done"),  # \b before a non-word character: only after a word one
    (r"\Bzq[0-9]{12}", "see xzq012345678901 done"),  # \B before a word character: the same
    (r"(?<![0-9])\b\$zq[0-9]{12}", "see x$zq012345678901 done"),  # with a negative lookbehind beside it
    (r"\u0436zq[0-9]{12}", "see x\u0436zq012345678901 done"),  # a non-ASCII start, written as an escape
    (r"[\u0400-\u04ff]{2}zq[0-9]{12}", "see x\u0436\u0436zq012345678901 done"),  # a range of them
])
@pytest.mark.parametrize("hyperscan", [False, True])
def test_a_rule_is_held_wherever_its_match_may_begin_at_every_cut(pattern, text, hyperscan):
    """Where a match may begin is read from the rule, not from sample characters:
    a start only a word character before it allows, and a non-ASCII start, are
    held back wherever the stream is cut."""
    from ctxproxy.store.services.redaction import Redactor
    from ctxproxy.store.services.redaction.prefilter import hyperscan_available
    from ctxproxy.store.services.redaction.rules import make_rule

    if hyperscan and not hyperscan_available():
        pytest.skip("hyperscan is not installed")
    red = Redactor([make_rule("custom-token", "generic", pattern, secret=None)], use_hyperscan=hyperscan)
    want = red.redact(text, TEST_KEY).text
    assert want.startswith("see x[REDACTED:custom-token:") and want.endswith("] done")
    for cut in range(len(text) + 1):
        got, _ = _stream(red, [text[:cut], text[cut:]])
        assert got == want, cut
    got, _ = _stream(red, [text[i:i + 3] for i in range(0, len(text), 3)])
    assert got == want


# Custom rules of the shapes people write: lookarounds at either end, anchors,
# keywords with a secret group, case folding, optional and repeated parts.
CUSTOM_SHAPES = [
    (r"(?<=\x25[0-9A-F]{2})tok[0-9]{8}", "%2Ftok01234567"),
    (r"(?<=\\n)tok[0-9]{8}", "\\ntok01234567"),
    (r"tok[0-9]{8}(?=\s|$)", "tok01234567 "),
    (r"tok[0-9]{8}(?![0-9a-z])", "tok01234567."),
    (r"(?i)(?:api|auth)[_-]?key\s*[:=]\s*([A-Za-z0-9]{16})", "API_KEY = abcdEFGH12345678"),
    (r"\b(?:ab|cd)_[a-f0-9]{10}\b", "cd_0123456789"),
    (r"(?m)^SECRET=(\S{8,})$", "SECRET=hunter2hunter2\n"),
    (r"\$\{?tok_[0-9]{6}\}?", "${tok_123456}"),
    (r"(?<![A-Za-z0-9])z[0-9]{9}(?![0-9])", "z123456789"),
    (r"\u00fctok[0-9]{6}", "\u00fctok123456"),
    (r"(?s)BEGIN.{4,20}?END", "BEGIN ab\ncd END"),
    (r"(?<=[=:])\s*pw[0-9]{6}", "=  pw123456"),
    (r"x\B[0-9]{8}", "x12345678"),
]
AROUND = ["hello", " ", "world", "\n", "a=", ":", "%2F", "\\n", "x", "$", "tok", "key", "(", ")", "\u00fc",
          "BEGIN", "END", "12", "ab", "_", "-"]


@pytest.mark.parametrize("pattern, sample", CUSTOM_SHAPES)
@pytest.mark.parametrize("hyperscan", [False, True])
def test_custom_rules_stream_as_their_whole_text_redacts(pattern, sample, hyperscan):
    """A match among random neighbours, streamed in random pieces of 1-6 characters,
    comes out as redacting the whole text does: nothing of it leaks through a cut."""
    from ctxproxy.store.services.redaction import Redactor
    from ctxproxy.store.services.redaction.prefilter import hyperscan_available
    from ctxproxy.store.services.redaction.rules import make_rule

    if hyperscan and not hyperscan_available():
        pytest.skip("hyperscan is not installed")
    secret = 1 if re.compile(pattern).groups else None
    red = Redactor([make_rule("custom-shape", "generic", pattern, secret=secret)], use_hyperscan=hyperscan)
    rng = random.Random(pattern)
    redacted = 0
    for _ in range(100):
        text = "".join([rng.choice(AROUND) for _ in range(rng.randint(0, 6))] + [sample]
                       + [rng.choice(AROUND) for _ in range(rng.randint(0, 6))])
        want = red.redact(text, TEST_KEY).text
        redacted += "[REDACTED:custom-shape:" in want
        pieces = _random_pieces(rng, text, 6)
        got, _ = _stream(red, pieces)
        assert got == want, (text, pieces)
    assert redacted >= 20  # the sample is a match in many of the texts (its anchors allowing)


@pytest.mark.parametrize("hyperscan", [False, True])
def test_rules_with_and_without_whitespace_in_their_matches_stream_together(hyperscan):
    """Rules whose matches hold no whitespace are tried only in the held text's last
    run without any, the others everywhere: pieces that span several words, a match
    that holds spaces or a newline, and tokens glued to either come out as redacting
    the whole text does."""
    from ctxproxy.store.services.redaction import Redactor
    from ctxproxy.store.services.redaction.prefilter import hyperscan_available
    from ctxproxy.store.services.redaction.rules import make_rule

    if hyperscan and not hyperscan_available():
        pytest.skip("hyperscan is not installed")
    rules = [make_rule("spaced-kv", "generic", r"(?i)pass\s*[:=]\s*([A-Za-z0-9]{10})"),
             make_rule("block", "generic", r"(?s)BEGIN.{4,20}?END", secret=None),
             make_rule("token", "generic", r"tok_[0-9]{8}", secret=None),
             make_rule("glued", "generic", r"(?<![A-Za-z0-9])zz[0-9]{9}", secret=None)]
    red = Redactor(rules, use_hyperscan=hyperscan)
    samples = ["PASS = Abcdef1234", "pass:\tQwerty5678", "BEGIN ab\ncd END", "tok_12345678", "zz123456789"]
    around = ["hello ", " ", "world", "\n", "a=", ":", "x", "tok", "pass ", "BEGIN", "(", "\t", "zz1"]
    rng = random.Random(11)
    found = 0
    for _ in range(150):
        parts = [rng.choice(around) for _ in range(rng.randint(0, 5))]
        for sample in rng.sample(samples, rng.randint(1, 3)):
            parts += [sample] + [rng.choice(around) for _ in range(rng.randint(0, 3))]
        text = "".join(parts)
        want = red.redact(text, TEST_KEY).text
        found += want.count("[REDACTED:")
        for longest in (3, 25):
            pieces = _random_pieces(rng, text, longest)
            got, _ = _stream(red, pieces)
            assert got == want, (text, pieces)
    assert found >= 150


def test_which_rules_may_hold_whitespace():
    from ctxproxy.store.services.redaction.engine import _consumes_space

    for alt in [r"a b", r"a\sb", r"[^\S]", r"[^\w]", r"\W", r"\D", r"[^x]", r".", r"(?s:.)", r"x[\t,]",
                r"[\x00-\x20]", r"(?:ab|c d)", r"x(?:\n){0,2}", r"(\w+)\1 "]:
        assert _consumes_space(alt), alt
    for alt in [r"abc", r"[A-Za-z0-9_.-]{0,30}", r"[^\s]+", r"\S", r"[^\s\x22]", r"(?<=\s)tok", r"tok(?=\s)",
                r"(?<! )x\b", r"\w+", r"\d", r"(?:a|b){0,3}", r"x(?: ){0}y", r"[^\x20\t\n\r\f\v]"]:
        assert not _consumes_space(alt), alt


# -- what is held: only text a secret may still begin in ------------------------------------------

PROSE = "Run make install, then open our docs page; works fine. Done: all builds."


def test_secrets_after_released_text_three_chunks(red):
    text = RELEASED_EARLY_CASES[0]
    want = red.redact(text, TEST_KEY).text
    for i in range(0, len(text) + 1, 2):
        for j in range(i, len(text) + 1):
            got, _ = _stream(red, [text[:i], text[i:j], text[j:]])
            assert got == want, (i, j)


@pytest.mark.parametrize("engine", ["hyperscan", "python"])
def test_the_start_of_a_url_goes_out_before_its_credentials_arrive(engine):
    red = redactor(engine)
    sr = StreamRedactor(red, TEST_KEY)
    assert sr.feed("connect to postgres") == "connect to postgres"  # its "://" may never come
    assert sr.feed("://deploy:Zq8vN2mK4pL6wE") == ""  # now a password may follow: held
    out = sr.feed("@db.internal/app, then restart.") + sr.flush()
    assert out.startswith("://deploy:[REDACTED:url-credentials:") and out.endswith("@db.internal/app, then restart.")
    sr = StreamRedactor(red, TEST_KEY)
    assert sr.feed("set DEPLOY_KEY") == "set DEPLOY_KEY" and sr.held == 0  # no "=" yet: a name, not a secret
    assert sr.feed("=Hq4Vm8Zr2Kt6xYw") == ""
    out = sr.feed(" now") + sr.flush()
    assert out == red.redact("set DEPLOY_KEY=Hq4Vm8Zr2Kt6xYw now", TEST_KEY).text[len("set DEPLOY_KEY"):]
    assert out.startswith("=[REDACTED:") and out.endswith("] now")


@pytest.mark.parametrize("engine", ["hyperscan", "python"])
def test_prose_is_not_delayed_at_any_word_end(engine):
    """With the default rules, every chunk that ends at the end of a word or a
    punctuation mark goes out whole, at every such offset; nothing is sent empty."""
    red = redactor(engine)
    for i in range(1, len(PROSE)):
        if PROSE[i - 1].isalnum() == PROSE[i].isalnum() and PROSE[i] != " ":
            continue
        sr = StreamRedactor(red, TEST_KEY)
        assert sr.feed(PROSE[:i]) == PROSE[:i], i
        assert sr.feed(PROSE[i:]) + sr.flush() == PROSE[i:]
    # token by token, as a model writes: every chunk out with itself
    sr = StreamRedactor(red, TEST_KEY)
    for word in PROSE.replace(" ", "\0 ").split("\0"):
        assert sr.feed(word) == word
    assert sr.flush() == ""


def _word_ends(text: str) -> list[int]:
    return [i for i in range(1, len(text)) if text[i - 1].isalnum() and not (text[i].isalnum() or text[i] == "_")]


def test_what_waits_is_only_a_word_a_secret_can_begin_with(red):
    """Cut after each word of ordinary prose and code, what waits is the last word,
    and only when a secret of a default rule can begin with it: 32 hex digits
    (Mailchimp), digits (a Telegram bot id), a token's literal start (``gh``,
    ``sk-``, ``secret_``), the value after a word such as ``credentials``."""
    sr = StreamRedactor(red, TEST_KEY)
    assert sr.feed("Here is the thing") == "Here is the thing" and sr.held == 0
    assert sr.feed(", here") == ", here" and sr.flush() == ""
    for text, waits in [("so we add", "add"), ("listen on 8080", "8080"), ("then use gh", "gh")]:
        sr = StreamRedactor(red, TEST_KEY)
        assert sr.feed(text) == text[:-len(waits)] and sr.held == len(waits), text
        assert sr.feed(" next.") + sr.flush() == waits + " next."
    from secretcorpus import _JS, _PROSE, _PY

    for text in (_PROSE, _PY, _JS):
        for i in _word_ends(text):
            sr = StreamRedactor(red, TEST_KEY)
            out = sr.feed(text[:i])
            word = re.findall(r"\w+$", text[:i])[0]
            if out != text[:i]:
                after_keyword = re.search(r"(?i)\b(?:token|secret|password|passwd|credentials?|key)s?\s+\w+$", text[:i])
                token_start = any(t.startswith(word) for t in ("sk-", "secret_", "api_org_", "api-"))
                assert re.fullmatch(r"[0-9a-f]+", word) or after_keyword or token_start, (word, text[i - 40:i])
                # the word waits, nothing before it (or, after a keyword, from the keyword on)
                assert out == text[:i - len(word)] or after_keyword and out == text[:after_keyword.start()]


# Rules whose secret has no literal start, or follows a public part the stream now lets go
# (a Terraform token's id before ".atlasv1.", an Azure secret's hint, a Discord bot's id),
# or that are a prefixed token *or* a name = value: each of their corpus examples, split at
# every offset.
ANCHORED_RULES = ("terraform-cloud-token", "azure-ad-client-secret", "mailchimp-api-key", "telegram-bot-token",
                  "discord-bot-token", "together-api-key", "heroku-api-key", "mailgun-api-key",
                  "slack-webhook-url", "discord-webhook-url")
_EXAMPLES = [s for s in build_corpus(seed=17, positives_per_rule=3) if s.rule in ANCHORED_RULES and s.secrets]


def test_the_examples_cover_every_anchored_rule():
    assert {s.rule for s in _EXAMPLES} == set(ANCHORED_RULES)


@pytest.mark.parametrize("sample", _EXAMPLES, ids=lambda s: f"{s.rule}-{s.context}")
def test_anchored_rules_find_their_secret_split_at_every_offset(red, sample):
    text = sample.text
    want = red.redact(text, TEST_KEY)
    for rid, secret in sample.secrets:
        assert secret not in want.text
    assert want.counts
    for i in range(len(text) + 1):
        got, _ = _stream(red, [text[:i], text[i:]])
        assert got == want.text, i
    got, sr = _stream(red, list(text))
    assert got == want.text and sr.counts == want.counts
    rng = random.Random(len(text))
    for _ in range(20):
        got, _ = _stream(red, _chunks(text, [rng.randrange(len(text)) for _ in range(rng.randint(2, 12))]))
        assert got == want.text


@pytest.mark.parametrize("token, rule, shown", [
    ("QnbSxjjhVMHJgw.atlasv1.gxZnWIjI5j752DGqdwEUVLOFf0mtyaQ00H9bA1j90qWb254lEkQyOdfqqcq9zZL7Sm0",
     "terraform-cloud-token", "QnbSxjjhVMHJgw.atlasv1."),
    ("abc8Q~defghijklmnopqrstuvwxyz-_.~0123456", "azure-ad-client-secret", "abc8Q~"),
    ("MTMwMTU5MDU2Nzk4OTU0NzAyOA.G5Nast.7_escXR0pB5hrc7sN_OnzNzy8KtfIN6_andbW8", "discord-bot-token",
     "MTMwMTU5MDU2Nzk4OTU0NzAyOA."),
])
def test_a_documented_token_keeps_its_public_part_and_loses_its_secret(red, token, rule, shown):
    """The formats as their vendors show them (HashiCorp's API docs, Microsoft
    Purview's example, discord.py's token page): what precedes the secret is an
    id the vendor shows anyway; everything after it is replaced, split anywhere."""
    text = f"Use {token} for the deploy."
    want = red.redact(text, TEST_KEY).text
    assert want.startswith(f"Use {shown}[REDACTED:{rule}:") and want.endswith("] for the deploy.")
    for i in range(len(text) + 1):
        for j in range(i, len(text) + 1, 5):
            got, _ = _stream(red, [text[:i], text[i:j], text[j:]])
            assert got == want, (i, j)


ANT = "sk-ant-api03-" + "Zq8vN2mK4pL6wE1rT5yU7iO9aS3dF5gH7jK9lZ2xC4vB6nM8qW0eR2tY4uI6oP8aS0dF2gH4jK6lZ8xC0vB2nM4qW6eR8tY0u" + "AA"
GLUED_CASES = [(f"export KEY{GHP} done", GHP[4:], "github-pat"),
               (f"token_{GHP}", GHP[4:], "github-pat"),
               (f'{{"auth": "Bearer{ANT}"}}', ANT[len("sk-ant-api"):], "anthropic-api-key")]


@pytest.mark.parametrize("text, secret, rule", GLUED_CASES)
def test_a_token_glued_to_a_word_is_found_split_anywhere(red, text, secret, rule):
    """A distinctive literal start glued to the word before it still marks a token;
    it stays in the text (the secret is what follows it), so a stream holds nothing
    for it until the whole literal has come."""
    want = red.redact(text, TEST_KEY)
    assert secret not in want.text and f"[REDACTED:{rule}:" in want.text
    for i in range(len(text) + 1):
        got, _ = _stream(red, [text[:i], text[i:]])
        assert got == want.text, i


def test_short_or_wordlike_literal_starts_are_not_glued(red):
    """``sk-`` and ``key-`` inside words are not keys; nor is a token that runs on."""
    hexes = "9f86d081884c7d659a2feaa0c55ad015"
    for text in (f"celery task-{hexes} done", f"the monkey-{hexes} build", f"mytoken{GHP}x"):
        assert red.redact(text, TEST_KEY).text == text
