"""effects — the tool-effect ledger (``filter``): an answer's calls (``calls``), their results
settled (``settle``), the ledger summary other filters fold (``summary``), the writes an answer
leaves (``writes``), its rules and keys (``rules``), and compaction detection over its history
(``history``)."""
