"""manifest — the Context Manifest of each turn (``filter``) and its OpenTelemetry (``telemetry``)."""
