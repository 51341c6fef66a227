"""Live resources: the instances an opened registry builds, their scopes and lifetimes."""

from __future__ import annotations

from ._live import Resources, ToolCallScope
from ._memory import HoldsMemory

__all__ = ["HoldsMemory", "Resources", "ToolCallScope"]
