"""Connections to external MCP servers, each on its own event-loop thread.

A tool handler may run on any loop (the executor's ``asyncio.run`` for ``execute``, the
caller's for ``aexecute``), but an MCP client session lives on the loop that opened it.
Each server therefore gets an anyio blocking portal: a thread with a loop that owns the
client; calls are submitted to it and awaited from wherever the handler runs.
"""

from __future__ import annotations

import asyncio
import threading
from collections.abc import AsyncIterator, Mapping
from contextlib import AbstractContextManager, asynccontextmanager
from typing import TYPE_CHECKING, Any

from ._errors import McpServerError

if TYPE_CHECKING:
    from anyio.from_thread import BlockingPortal

    from haversack import Binding, ResourceResolver

    from ._config import McpServer

__all__ = [
    "Listing",
    "McpConnections",
    "ServerConnection",
    "connections_binding",
    "list_server",
    "root_cause",
]


def root_cause(exc: BaseException) -> BaseException:
    """The first leaf of nested exception groups (anyio task groups wrap what failed)."""
    while isinstance(exc, BaseExceptionGroup) and exc.exceptions:
        exc = exc.exceptions[0]
    return exc


def describe(exc: BaseException) -> str:
    """``Type: message`` of ``exc``'s root cause, for error messages."""
    cause = root_cause(exc)
    text = str(cause) or type(cause).__name__
    return f"{type(cause).__name__}: {text}"


@asynccontextmanager
async def open_client(server: McpServer) -> AsyncIterator[Any]:
    """An initialized ``mcp.Client`` for ``server`` (stdio process or HTTP session)."""
    from mcp import Client, StdioServerParameters

    if server.command:
        from mcp.client.stdio import get_default_environment

        params = StdioServerParameters(
            command=server.command[0],
            args=list(server.command[1:]),
            env={**get_default_environment(), **server.env},
            cwd=server.cwd or None,
        )
        async with Client(params) as client:
            yield client
        return
    from mcp.client.streamable_http import streamable_http_client
    from mcp.shared._httpx_utils import create_mcp_http_client

    async with (
        create_mcp_http_client(headers=dict(server.headers)) as http,
        Client(streamable_http_client(server.url, http_client=http)) as client,
    ):
        yield client


class Listing:
    """What a server offers: its instructions and its tools (SDK ``Tool`` objects)."""

    def __init__(self, instructions: str, tools: list[Any]) -> None:
        self.instructions = instructions
        self.tools = tools


_MAX_PAGES = 100


async def _list(server: McpServer) -> Listing:
    import anyio

    with anyio.fail_after(server.startup_timeout_s):
        async with open_client(server) as client:
            tools: list[Any] = []
            cursor: str | None = None
            for _ in range(_MAX_PAGES):
                page = (
                    await client.list_tools(cursor=cursor) if cursor else await client.list_tools()
                )
                tools.extend(page.tools)
                cursor = page.next_cursor
                if not cursor:
                    break
            return Listing(client.instructions or "", tools)


def where(name: str, server: McpServer) -> str:
    """How messages name a server: ``'time' (mcp-server-time --local-timezone UTC)``."""
    spec = " ".join(server.command) if server.command else server.url
    return f"MCP server {name!r} ({spec})"


def list_server(name: str, server: McpServer) -> Listing:
    """Start ``server``, read its tools, stop it; raises :class:`McpServerError`."""
    from anyio.from_thread import start_blocking_portal

    try:
        with start_blocking_portal() as portal:
            return portal.call(_list, server)
    except TimeoutError:
        raise McpServerError(
            f"{where(name, server)} did not start and list its tools within "
            f"{server.startup_timeout_s:g} s; check the command, or raise startup_timeout_s.",
            pack="mcp",
        ) from None
    except Exception as exc:
        cause = root_cause(exc)
        hint = (
            " The command was not found: install the server or give its full path."
            if isinstance(cause, FileNotFoundError)
            else ""
        )
        raise McpServerError(
            f"{where(name, server)} could not be started and listed: {describe(exc)}.{hint}",
            pack="mcp",
        ) from exc


class ServerConnection:
    """A lazily opened client session to one server, reopened after the server dies."""

    def __init__(self, name: str, server: McpServer) -> None:
        self.name = name
        self.server = server
        self._lock = threading.Lock()
        self._portal_cm: AbstractContextManager[BlockingPortal] | None = None
        self._portal: BlockingPortal | None = None
        self._client_cm: AbstractContextManager[Any] | None = None
        self._client: Any = None
        self._closed = False

    def _open(self) -> tuple[BlockingPortal, Any]:
        with self._lock:
            if self._closed:
                raise McpServerError(f"{where(self.name, self.server)}: the connection is closed.")
            if self._client is not None and self._portal is not None:
                return self._portal, self._client
            from anyio.from_thread import start_blocking_portal

            portal_cm = start_blocking_portal()
            portal = portal_cm.__enter__()
            client_cm = portal.wrap_async_context_manager(open_client(self.server))
            try:
                client = client_cm.__enter__()
            except BaseException:
                portal_cm.__exit__(None, None, None)
                raise
            self._portal_cm, self._portal = portal_cm, portal
            self._client_cm, self._client = client_cm, client
            return portal, client

    def _drop(self) -> None:
        """Stop the server and its loop thread (idempotent); the next call starts it again."""
        with self._lock:
            client_cm, self._client_cm, self._client = self._client_cm, None, None
            portal_cm, self._portal_cm, self._portal = self._portal_cm, None, None
        errors: list[BaseException] = []
        if client_cm is not None:
            try:
                client_cm.__exit__(None, None, None)
            except BaseException as exc:  # noqa: BLE001 - the portal must still stop
                errors.append(exc)
        if portal_cm is not None:
            portal_cm.__exit__(None, None, None)
        if errors:
            raise McpServerError(
                f"{where(self.name, self.server)} did not stop cleanly: {describe(errors[0])}."
            )

    def close(self) -> None:
        """Stop the server (its process exits, or the HTTP session is deleted)."""
        self._closed = True
        self._drop()

    async def call(self, tool: str, arguments: Mapping[str, Any]) -> Any:
        """Call ``tool`` on the server; the SDK's ``CallToolResult``.

        Cancelling the awaiting task cancels the call on the server's loop, which sends the
        server ``notifications/cancelled``. Raises ``TimeoutError`` after ``timeout_s``.
        """
        opened: tuple[BlockingPortal, Any]
        if self._portal is not None and self._client is not None:
            opened = self._portal, self._client
        else:
            # Starting the server blocks (a process, a handshake): not on the caller's loop.
            opened = await asyncio.to_thread(self._open)
        portal, client = opened
        timeout = self.server.timeout_s

        async def run() -> Any:
            import anyio

            with anyio.fail_after(timeout):
                return await client.call_tool(tool, dict(arguments))

        future = portal.start_task_soon(run)
        try:
            return await asyncio.wrap_future(future)
        except (TimeoutError, asyncio.CancelledError):
            raise
        except Exception as exc:
            from mcp.shared.exceptions import MCPError
            from mcp_types import CONNECTION_CLOSED

            cause = root_cause(exc)
            if isinstance(cause, MCPError) and cause.code != CONNECTION_CLOSED:
                raise
            # The server went away (crashed, or closed the stream): forget this session so
            # the next call starts a fresh one.
            await asyncio.to_thread(self._drop)
            raise McpServerError(
                f"{where(self.name, self.server)} closed the connection during {tool!r} "
                f"({describe(exc)}); it is started again on the next call."
            ) from exc


class McpConnections:
    """The pack's resource: one lazily started connection per configured server, all
    stopped when the executor's resources close."""

    def __init__(self, servers: Mapping[str, McpServer]) -> None:
        self._connections = {name: ServerConnection(name, s) for name, s in servers.items()}

    def get(self, name: str) -> ServerConnection:
        """The connection to the server configured as ``name``."""
        return self._connections[name]

    def close(self) -> None:
        """Stop every started server; reports the first failure after trying them all."""
        failures: list[BaseException] = []
        for connection in self._connections.values():
            try:
                connection.close()
            except BaseException as exc:  # noqa: BLE001 - every server gets stopped
                failures.append(exc)
        if failures:
            raise failures[0]


def connections_binding(servers: Mapping[str, McpServer]) -> Binding[McpConnections]:
    """The binding of the pack's resource: servers start on their first call and stop when
    the executor's resources close."""
    from haversack import Binding

    return Binding(McpConnections, _Factory(dict(servers)))


class _Factory:
    """Builds the connections; its repr names the servers in resource listings."""

    __slots__ = ("servers",)

    def __init__(self, servers: dict[str, McpServer]) -> None:
        self.servers = servers

    def __call__(self, resolver: ResourceResolver) -> McpConnections:
        return McpConnections(self.servers)

    def __repr__(self) -> str:
        return f"haversack_mcp connections ({', '.join(self.servers) or 'no servers'})"
