"""Serve a composed prompt over MCP (install the ``haversack[mcp]`` extra)."""

from __future__ import annotations

from ._mcp import build_server, serve_stdio

__all__ = ["build_server", "serve_stdio"]
