"""Terms for lexical recall: one tokenizer for indexed text and queries.

The recall indexes store each document's terms as a space-separated string
that SQLite FTS5 indexes with its plain ``unicode61`` tokenizer, so the
terms a query is matched with and the term frequencies ranking counts come
from this one function, whatever SQLite's version:

- words are lower-cased, NFKC-normalised runs of letters and digits;
  ``snake_case`` and ``camelCase`` identifiers give their whole form and
  their parts (``parse_body`` → ``parse_body parse body``);
- a light suffix stemmer folds inflections (``painted``, ``painting`` →
  ``paint``; ``stories`` → ``stori``, as does ``story``);
- Chinese, Japanese and Korean text has no spaces: each run gives its
  character bigrams (and a lone character itself), so a two-character word
  matches inside a longer run;
- stop words are dropped from queries only (``query_terms``): a document
  keeps them so its length stays honest.
"""
from __future__ import annotations

import unicodedata
from functools import lru_cache

from .term_patterns import CAMEL, CJK, HYPHENATED, WORD

# ASCII words up to this long are analysed once and remembered; a longer one (a hash, an
# encoded blob) or one with other letters (a CJK run gives a bigram per character) each time.
# The memos are ``lru_cache``s (a hit at C speed: they are asked per word), bounded in bytes
# by their number of entries and the entries' size: such a word and its terms take at most
# ~1 KB with the cache's slot (~270 bytes for a usual word; measured with tracemalloc).
CACHED_TOKEN_CHARS = 32
TOKEN_TERMS_ENTRIES = 8192  # words' terms remembered: <= 8 MiB at the worst, ~2.2 MiB usually
STEM_ENTRIES = 4096  # stems remembered: <= 1.1 MiB (a key and a value of <= 32 ASCII characters)

STOPWORDS = frozenset("""
a about above after again against all am an and any are aren as at be because been before being below
between both but by can could did didn do does doesn doing don down during each few for from further had
has have having he her here hers herself him himself his how i if in into is isn it its itself just me
more most my myself no nor not now of off on once only or other our ours ourselves out over own same she
should so some such than that the their theirs them themselves then there these they this those through
to too under until up very was wasn we were what when where which while who whom why will with would you
your yours yourself yourselves s t d ll m re ve y also ever yet
would could might shall may must kind kinds type types sort many much thing things something anything
someone anyone likely time times ever recently usually often get got
""".split())


def stem(w: str) -> str:
    """``_stem``, remembered for an ASCII word of up to CACHED_TOKEN_CHARS characters."""
    return _stem_memo(w) if len(w) <= CACHED_TOKEN_CHARS and w.isascii() else _stem(w)


def _stem(w: str) -> str:
    """A small suffix stemmer in the spirit of Porter's step 1: inflections
    only, so that a word, its plural, past and gerund meet (``hope``,
    ``hoped``, ``hoping`` → ``hop``; ``story``, ``stories`` → ``stori``)."""
    if len(w) <= 3 or not w.isalpha():
        return w
    if w.endswith("ies") and len(w) > 4:
        w = w[:-3] + "y"
    elif w.endswith("sses"):
        w = w[:-2]
    elif w.endswith("s") and not w.endswith(("ss", "us", "is")):
        w = w[:-1]
    for suffix in ("ing", "ed"):
        base = w[: -len(suffix)]
        if w.endswith(suffix) and len(base) >= 3 and any(c in "aeiouy" for c in base):
            if base[-1] == base[-2] and base[-1] not in "lsz":
                base = base[:-1]  # running -> run, stopped -> stop
            w = base
            break
    if len(w) > 3 and w.endswith("y") and w[-2] not in "aeiou":
        w = w[:-1] + "i"
    if len(w) > 3 and w.endswith("e"):
        w = w[:-1]
    return w


_stem_memo = lru_cache(maxsize=STEM_ENTRIES)(_stem)


def _word_terms(token: str, out: list[str], drop: frozenset = frozenset()) -> None:
    low = token.lower()
    if low in drop:
        return
    parts = [p for p in low.split("_") if p] if "_" in low else []
    camel = CAMEL.findall(token) if not parts and token[:1].isalpha() and not token.isupper() \
        and not token.islower() else []
    out.append(stem(low) if not parts else low)
    if parts:
        out.extend(stem(p) for p in parts)
    elif len(camel) > 1:
        out.extend(stem(p.lower()) for p in camel)


def terms(text: str, drop: frozenset = frozenset()) -> list[str]:
    """Every term of ``text``, in order (repeats kept: they are term
    frequencies); words in ``drop`` (compared before stemming) left out.
    A hyphenated word also gives its joined form (``de-stress`` → ``destress``)."""
    if not text:
        return []
    text = unicodedata.normalize("NFKC", text)
    out: list[str] = []
    for m in HYPHENATED.finditer(text):
        joined = m.group().replace("-", "")
        if joined.lower() not in drop:
            out.append(stem(joined.lower()))
    for m in WORD.finditer(text):
        token = m.group()
        if not drop and len(token) <= CACHED_TOKEN_CHARS and token.isascii():  # seen before: one lookup
            out.extend(cached_token_terms(token))
        elif CJK.search(token):
            start = 0
            for c in CJK.finditer(token):
                if c.start() > start:
                    _word_terms(token[start:c.start()], out, drop)
                run = c.group()
                out.extend([run] if len(run) == 1 else [run[i:i + 2] for i in range(len(run) - 1)])
                start = c.end()
            if start < len(token):
                _word_terms(token[start:], out, drop)
        else:
            _word_terms(token, out, drop)
    return out


def token_terms(token: str) -> tuple[str, ...]:
    """The terms of one word token (a match of ``WORD``), as ``terms`` gives them
    (remembered for an ASCII word of up to CACHED_TOKEN_CHARS characters)."""
    return cached_token_terms(token) if len(token) <= CACHED_TOKEN_CHARS and token.isascii() \
        else _token_terms(token)


def _token_terms(token: str) -> tuple[str, ...]:
    out: list[str] = []
    if CJK.search(token):
        start = 0
        for c in CJK.finditer(token):
            if c.start() > start:
                _word_terms(token[start:c.start()], out)
            run = c.group()
            out.extend([run] if len(run) == 1 else [run[i:i + 2] for i in range(len(run) - 1)])
            start = c.end()
        if start < len(token):
            _word_terms(token[start:], out)
    else:
        _word_terms(token, out)
    return tuple(out)


cached_token_terms = lru_cache(maxsize=TOKEN_TERMS_ENTRIES)(_token_terms)  # short ASCII words only


def query_terms(text: str) -> list[str]:
    """The distinct terms of a query, stop words out (all of them kept if
    nothing else is left), in first-seen order: what ``terms(text,
    STOPWORDS)`` gives, with each distinct token analysed once (a long
    text repeats most of its words)."""
    if not text:
        return []
    text = unicodedata.normalize("NFKC", text)
    kept: dict[str, None] = {}
    every: dict[str, None] = {}  # the fallback: every term, stop words too
    for m in HYPHENATED.finditer(text):
        joined = m.group().replace("-", "").lower()
        every[stem(joined)] = None
        if joined not in STOPWORDS:
            kept[stem(joined)] = None
    for token in dict.fromkeys(WORD.findall(text)):
        found = token_terms(token)
        every.update(dict.fromkeys(found))
        if CJK.search(token):
            found = tuple(terms(token, STOPWORDS))  # the stop words of a mixed token's parts
        elif token.lower() in STOPWORDS:
            continue
        kept.update(dict.fromkeys(found))
    return [t for t in kept if not (len(t) == 1 and t.isascii())] or list(every)


def fts_phrase(text: str) -> str:
    """``text`` as one FTS5 phrase (its double quotes doubled), so no word is
    read as an operator."""
    return '"' + text.replace('"', '""') + '"'


def fts_query(words: list[str]) -> str:
    """An FTS5 MATCH expression: any of ``words``, each a phrase."""
    return " OR ".join(map(fts_phrase, words))
