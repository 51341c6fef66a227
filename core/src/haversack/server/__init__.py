"""Serve a composed prompt over MCP (install the ``haversack[mcp]`` extra)."""

from __future__ import annotations

from haversack.errors import ToolCallCancelled

from ._http import TOKEN_ENV, HttpSettings, http_app, read_token, serve_http
from ._mcp import ServeOptions, build_server, serve_stdio

__all__ = [
    "TOKEN_ENV",
    "HttpSettings",
    "ServeOptions",
    "ToolCallCancelled",
    "build_server",
    "http_app",
    "read_token",
    "serve_http",
    "serve_stdio",
]
