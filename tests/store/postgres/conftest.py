from pgserver import pg_dsn, pg_server  # noqa: F401  (fixtures)
