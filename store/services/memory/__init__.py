"""Durable memory: the write gate's pieces.

- ``threats`` — ``scan(text) -> Threat | None``: the content threat scan every
  memory write passes (prompt injection, exfiltration, persistence, hidden or
  encoded instructions, invisible characters), pure and fast, no I/O.
- ``threat_rules`` — the rule table ``threats`` compiles once.
"""
from .threats import REASONS, RULES_VERSION, Threat, scan

__all__ = ["REASONS", "RULES_VERSION", "Threat", "scan"]
