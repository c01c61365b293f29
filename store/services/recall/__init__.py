"""recall — find what this principal may see that is relevant to the turn.

``rank`` scores candidates, ``recaller`` runs one recall (shared by the
filter, the admin API and the CLI), ``filter`` is the per-turn filter.
"""
