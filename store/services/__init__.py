"""The domain services: what the filters, the admin API, the CLI and background
jobs share, with no turn, no wire format and no server.

- ``redaction`` — the secret redaction engine (rules, Hyperscan prefilter, streams)
- ``memory``    — the memory write gate, its threat scan and the agents' file formats
- ``recall``    — recall's queries, ranking and the indexes behind them
- ``digest``    — the one way text is named by its content

They sit between the filters and the store (edge → engine → filters →
services → store): they import the store's interfaces and never a filter or
the proxy. They live under ``store/`` because the project's top-level folders
are fixed, and they are the data side's upper layer; nothing else in
``store/`` imports them.
"""
