"""The task-state checkpoint: extraction (``extract``), the
accumulated state (``state``), its text (``render``) and the filter."""
from .filter import CheckpointConfig, CheckpointFilter

__all__ = ["CheckpointConfig", "CheckpointFilter"]
