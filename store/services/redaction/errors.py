"""Errors of the redaction engine. Messages never carry a secret value."""
from __future__ import annotations


class RedactionError(Exception):
    """Redaction could not be completed; the caller must not forward the text.

    The message names what failed (a rule id, an exception type), never the
    text being scanned or a value found in it.
    """


class RuleLoadError(ValueError):
    """A rule file could not be read at all (bad TOML, missing file)."""
