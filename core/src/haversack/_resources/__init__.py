"""Live resources: the instances an opened registry builds, their scopes and lifetimes."""

from __future__ import annotations

from ._live import Resources, ToolCallScope

__all__ = ["Resources", "ToolCallScope"]
