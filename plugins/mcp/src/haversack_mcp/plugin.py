"""Hook implementations of the MCP client pack (entry point ``mcp``)."""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

import haversack
from haversack.hookspecs import hookimpl

from ._config import McpConfig


@hookimpl
def config_type() -> type[McpConfig]:
    """The pack's options: the external servers."""
    return McpConfig


@hookimpl
def register_sections(
    register: Callable[[haversack.Section[Any]], None], config: McpConfig | None
) -> None:
    """One section per configured server; each server is started once to list its tools."""
    if config is None:
        return
    from ._connection import list_server
    from ._errors import McpServerError
    from ._tools import server_section

    owners: dict[str, str] = {}
    for name, server in config.servers.items():
        section = server_section(name, server, list_server(name, server))
        for tool in section.tools:
            other = owners.setdefault(tool.name, name)
            if other != name:
                # Clashes with other packs are the core's to report; two servers of this
                # pack are this pack's, and only the configuration can fix them.
                raise McpServerError(
                    f"MCP servers {other!r} and {name!r} both give a tool named "
                    f"{tool.name!r}; set a different prefix on one of them.",
                    pack="mcp",
                )
        register(section)


@hookimpl
def register_resources(
    register: Callable[[haversack.Binding[Any]], None], config: McpConfig | None
) -> None:
    """Bind the connections: servers start on their first call and stop when the
    executor's resources close."""
    if config is None or not config.servers:
        return
    from ._connection import McpConnections

    servers = dict(config.servers)
    register(haversack.Binding(McpConnections, _Factory(servers)))


class _Factory:
    __slots__ = ("servers",)

    def __init__(self, servers: dict[str, Any]) -> None:
        self.servers = servers

    def __call__(self, resolver: haversack.ResourceResolver) -> Any:
        from ._connection import McpConnections

        return McpConnections(self.servers)

    def __repr__(self) -> str:
        return f"haversack_mcp connections ({', '.join(self.servers) or 'no servers'})"
