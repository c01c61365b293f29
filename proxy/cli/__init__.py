"""The ``ctxproxy`` command line: ``main`` (the parser, ``serve``, ``config``) and one module per
subcommand; ``store`` holds what the store-reading subcommands share."""
