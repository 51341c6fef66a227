"""haversack-mcp: external MCP servers (stdio or Streamable HTTP) as Haversack tools.

Names are imported on first use (PEP 562), so importing the entry-point module loads only
what the hooks need: a prompt without servers never imports asyncio or the MCP client.
"""

from __future__ import annotations

from typing import TYPE_CHECKING

from haversack.lazy import lazy_exports

# For type checkers only: each public name imported as itself (``X as X``), which marks it
# re-exported under mypy --strict and pyright; a test checks this list against ``_EXPORTS``.
if TYPE_CHECKING:
    from ._config import McpConfig as McpConfig
    from ._config import McpServer as McpServer
    from ._connection import McpConnections as McpConnections
    from ._errors import McpServerError as McpServerError
    from ._tools import tool_name as tool_name

_EXPORTS: dict[str, str] = {
    "McpConfig": "._config",
    "McpConnections": "._connection",
    "McpServer": "._config",
    "McpServerError": "._errors",
    "tool_name": "._tools",
}

# Derived from the table so there is no third list to keep; hidden from type checkers, which
# take the ``X as X`` imports above (a computed ``__all__`` would make every name private).
if not TYPE_CHECKING:
    __all__ = sorted(_EXPORTS)

__getattr__, __dir__ = lazy_exports(globals(), _EXPORTS)
