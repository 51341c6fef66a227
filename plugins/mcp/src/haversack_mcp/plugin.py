"""Hook implementations of the MCP client pack (entry point ``mcp``)."""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

import haversack

from ._config import McpConfig


@haversack.hookimpl
def config_type() -> type[McpConfig]:
    """The pack's options: the external servers."""
    return McpConfig


@haversack.hookimpl
def register_sections(
    register: Callable[[haversack.Section[Any]], None], config: McpConfig | None
) -> None:
    """One section per configured server; each server is started once to list its tools."""
    if config is None or not config.servers:
        return  # no server: nothing to import (the client and asyncio cost ~25 ms)
    # Starting servers takes seconds (2-3 s is normal), each start bounded by its
    # startup_timeout_s: the core's notice for a hanging hook should not fire before.
    haversack.expect_slow(max(s.startup_timeout_s for s in config.servers.values()) + 5.0)
    from ._tools import server_sections

    for section in server_sections(config):
        register(section)


@haversack.hookimpl
def register_resources(
    register: Callable[[haversack.Binding[Any]], None], config: McpConfig | None
) -> None:
    """Bind the connections: servers start on their first call and stop when the
    executor's resources close."""
    if config is None or not config.servers:
        return
    from ._connection import connections_binding

    register(connections_binding(config.servers, config.max_live_sessions))
