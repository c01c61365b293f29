"""effects — the tool-effect ledger (``filter``), its rules and keys (``rules``), and compaction
detection over its history (``history``)."""
