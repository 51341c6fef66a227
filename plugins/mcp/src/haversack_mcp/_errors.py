"""The pack's errors (subclasses of the core's)."""

from __future__ import annotations

from haversack.errors import PackLoadError

__all__ = ["McpServerError"]


class McpServerError(PackLoadError):
    """An external MCP server could not be started, listed or reached."""
