"""An MCP server exposing a prompt's tools, its text as instructions and as an MCP prompt."""

from __future__ import annotations

from collections.abc import AsyncIterator
from contextlib import asynccontextmanager
from typing import TYPE_CHECKING, Any

from haversack._executor import ToolExecutor
from haversack._session import Session
from haversack.adapters import mcp as mcp_format

if TYPE_CHECKING:
    from mcp.server.lowlevel import Server

    from haversack._prompt import Prompt

__all__ = ["build_server", "serve_stdio"]

_INSTALL_HINT = "The MCP server needs the 'mcp' package: pip install 'haversack[mcp]'."


def _import_mcp() -> Any:
    try:
        import mcp.types as types
    except ImportError as exc:  # pragma: no cover - exercised only without the extra
        raise ImportError(_INSTALL_HINT) from exc
    return types


class _Connection:
    """One client connection: its own session and executor, closed when it ends."""

    def __init__(self, executor: ToolExecutor) -> None:
        import anyio

        self.executor = executor
        # One call at a time: each call is a transaction over the connection's session.
        self.lock = anyio.Lock()


def build_server(prompt: Prompt, *, name: str | None = None) -> Server[Any]:
    """An MCP ``Server`` for ``prompt``: tools with annotations, the rendered text as the
    server instructions and as an MCP prompt, one session per connection.

    Tool failures come back as ``isError`` results the model can read, never as protocol
    errors.
    """
    types = _import_mcp()
    import anyio
    from mcp.server.lowlevel import Server

    rendered = prompt.render()
    tools = [types.Tool.model_validate(item) for item in mcp_format.tools(rendered)]
    prompt_name = f"{prompt.ns}/{prompt.key}"

    @asynccontextmanager
    async def lifespan(_: Server[Any]) -> AsyncIterator[_Connection]:
        with ToolExecutor(rendered, session=Session()) as executor:
            yield _Connection(executor)

    async def on_list_tools(ctx: Any, params: Any) -> Any:
        return types.ListToolsResult(tools=tools)

    async def on_call_tool(ctx: Any, params: Any) -> Any:
        connection: _Connection = ctx.lifespan_context
        arguments = params.arguments if params.arguments is not None else {}
        async with connection.lock:
            # Handlers may block (a sandbox command); keep the protocol loop responsive.
            result = await anyio.to_thread.run_sync(
                lambda: connection.executor.execute(params.name, arguments)
            )
        return types.CallToolResult.model_validate(mcp_format.call_result(result))

    async def on_list_prompts(ctx: Any, params: Any) -> Any:
        return types.ListPromptsResult(
            prompts=[
                types.Prompt(name=prompt_name, description=f"The composed prompt {prompt.name}.")
            ]
        )

    async def on_get_prompt(ctx: Any, params: Any) -> Any:
        if params.name != prompt_name:
            raise ValueError(f"Unknown prompt {params.name!r}; this server has {prompt_name!r}.")
        return types.GetPromptResult(
            description=prompt.name,
            messages=[
                types.PromptMessage(
                    role="user", content=types.TextContent(type="text", text=rendered.text)
                )
            ],
        )

    from importlib.metadata import version

    return Server(
        name or "haversack",
        version=version("haversack"),
        instructions=rendered.text,
        lifespan=lifespan,
        on_list_tools=on_list_tools,
        on_call_tool=on_call_tool,
        on_list_prompts=on_list_prompts,
        on_get_prompt=on_get_prompt,
    )


async def serve_stdio(prompt: Prompt, *, name: str | None = None) -> None:
    """Serve ``prompt`` over stdio until the client disconnects."""
    _import_mcp()
    from mcp.server.stdio import stdio_server

    server = build_server(prompt, name=name)
    async with stdio_server() as (read_stream, write_stream):
        await server.run(read_stream, write_stream, server.create_initialization_options())
