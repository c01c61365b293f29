"""How recall cuts text into tokens, in one place.

The index's tokenizer (``memory_terms``) and what reads a message or a
tool's output against it (``services.recall.query``,
``services.recall.tool_output``) must cut text the same way: a token one
side takes and the other does not is a term written that is never looked up.
"""
from __future__ import annotations

import re

# A word: letters and digits, with ``_`` inside an identifier (``parse_body``, ``R2_BUCKET``).
WORD = re.compile(r"[^\W_]+(?:_+[^\W_]+)*")
# A hyphenated word of letters (``de-stress``, ``redis-cache``): its joined form is a term too.
HYPHENATED = re.compile(r"\b[A-Za-z]+(?:-[A-Za-z]+)+\b")
# The parts of a camelCase word (``getUserName``, ``HTTPServer``, ``utf8``).
CAMEL = re.compile(r"[A-Z]+(?=[A-Z][a-z])|[A-Z]?[a-z]+|[A-Z]+|\d+")
# Chinese, Japanese and Korean runs (no spaces: read as character bigrams).
CJK = re.compile(r"[\u3040-\u30ff\u3400-\u4dbf\u4e00-\u9fff\uac00-\ud7af\uf900-\ufaff]+")
DIGIT = re.compile(r"\d")
