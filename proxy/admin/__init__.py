"""The admin API under ``/ctx/v1/``: ``app`` (the bearer check, ``admin_route``) and one module per
resource, each registering its endpoints."""
