"""haversack-mcp: external MCP servers (stdio or Streamable HTTP) as Haversack tools."""

from __future__ import annotations

from ._config import McpConfig, McpServer
from ._connection import McpConnections
from ._errors import McpServerError
from ._tools import tool_name

__all__ = ["McpConfig", "McpConnections", "McpServer", "McpServerError", "tool_name"]
