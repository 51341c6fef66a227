"""An MCP server exposing a prompt's tools, its text as instructions and as an MCP prompt."""

from __future__ import annotations

from collections.abc import AsyncIterator, Callable
from contextlib import asynccontextmanager
from dataclasses import dataclass, field
from typing import TYPE_CHECKING, Any

from haversack._approval import ApprovalVerdict, PendingApproval
from haversack._executor import ToolExecutor
from haversack._interrupt import run_interruptibly
from haversack._json_params import JsonResult
from haversack._session import Session
from haversack.adapters import mcp as mcp_format
from haversack.errors import HaversackError

if TYPE_CHECKING:
    from mcp.server.lowlevel import Server

    from haversack._prompt import Prompt, RenderedPrompt
    from haversack._result import ToolResult
    from haversack._tool import Tool

    from ._channel import RequestChannel
    from ._memory_budget import MemoryBudget

__all__ = ["ServeOptions", "build_server", "serve_stdio"]

_INSTALL_HINT = "The MCP server needs the 'mcp' package: pip install 'haversack[mcp]'."
_STATE_KEY = "haversack.connection"


def _import_mcp() -> Any:
    try:
        import mcp.types as types
    except ImportError as exc:  # pragma: no cover - exercised only without the extra
        raise ImportError(_INSTALL_HINT) from exc
    return types


@dataclass(frozen=True)
class ServeOptions:
    """How the server runs calls.

    ``progress_interval_s``: while a call runs and the client asked for progress (sent a
    progress token), a ``notifications/progress`` goes out this often. ``cancel_grace_s``:
    how long a cancelled call that runs in a thread gets to stop and roll back before the
    server stops waiting for it. ``approval_timeout_s``: how long the server waits for the
    client's user to answer an approval request (elicitation) before refusing the call.
    """

    progress_interval_s: float = 2.0
    cancel_grace_s: float = 5.0
    approval_timeout_s: float = 300.0

    def __post_init__(self) -> None:
        if not self.progress_interval_s > 0:
            raise HaversackError(
                f"ServeOptions.progress_interval_s must be positive, got "
                f"{self.progress_interval_s!r}."
            )
        if not self.cancel_grace_s > 0:
            raise HaversackError(
                f"ServeOptions.cancel_grace_s must be positive, got {self.cancel_grace_s!r}."
            )
        if not self.approval_timeout_s > 0:
            raise HaversackError(
                "ServeOptions.approval_timeout_s must be positive, got "
                f"{self.approval_timeout_s!r}."
            )


class _Connection:
    """One MCP session's executor over its own Haversack session, opened on first use."""

    def __init__(self) -> None:
        import anyio

        self.executor: ToolExecutor | None = None
        self.opening = anyio.Lock()
        # The tools as listed to this connection, once a deferred pack it loaded grew them.
        self.listed: tuple[RenderedPrompt, list[Any]] | None = None


@dataclass
class _Served:
    """What every connection of one server shares: the rendered prompt and its MCP view."""

    rendered: RenderedPrompt
    options: ServeOptions
    tools: list[Any]
    validators: dict[str, Any] = field(default_factory=dict)
    budget: MemoryBudget | None = None

    def current(self, ctx: Any) -> tuple[RenderedPrompt, list[Any]]:
        """The prompt ``ctx``'s connection runs and its MCP tools: the served ones, or
        more once the connection loaded a deferred pack (each connection loads its own)."""
        state = _state(ctx)
        executor = state.executor
        if executor is None or executor.rendered_prompt is self.rendered:
            return self.rendered, self.tools
        listed = state.listed
        if listed is None or listed[0] is not executor.rendered_prompt:
            types = _import_mcp()
            grown = executor.rendered_prompt
            tools = [types.Tool.model_validate(item) for item in mcp_format.tools(grown)]
            listed = state.listed = (grown, tools)
        return listed

    async def executor_for(self, ctx: Any) -> ToolExecutor | str:
        """The executor of ``ctx``'s connection, opened lazily and closed with it; or why
        it could not be opened within the server's memory budget."""
        import anyio

        connection = ctx.session._connection
        state = _state(ctx)
        async with state.opening:
            if state.executor is None:
                budget = self.budget
                session_id = connection.session_id if budget is not None else None
                check = None if budget is None or session_id is None else budget.check
                # Opening resources may start a sandbox: keep the protocol loop responsive.
                executor = await anyio.to_thread.run_sync(
                    lambda: ToolExecutor(self.rendered, session=Session(), before_commit=check)
                )
                if budget is not None and session_id is not None:
                    # What the resources loaded when opening (a workspace's host mounts)
                    # counts too: make room now, or do not open.
                    budget.attach(session_id, executor)
                    full = budget.make_room()
                    if full is not None:
                        budget.detach(session_id, executor)
                        await anyio.to_thread.run_sync(executor.close)
                        return (
                            f"{full} This session's resources (its workspace) were not "
                            "opened; try again when other sessions have ended, or ask the "
                            "server's operator to raise --max-memory."
                        )
                state.executor = executor

                async def close() -> None:
                    if budget is not None and session_id is not None:
                        budget.detach(session_id, executor)
                    await anyio.to_thread.run_sync(executor.close)

                connection.exit_stack.push_async_callback(close)
            return state.executor

    def validate(self, tool: Tool[Any, Any], structured: dict[str, Any]) -> str | None:
        """Why ``structured`` does not match the tool's ``outputSchema``, or ``None``."""
        validator = self.validators.get(tool.name)
        if validator is None:
            from jsonschema import Draft202012Validator  # type: ignore[import-untyped]

            validator = Draft202012Validator(mcp_format.output_schema(tool))
            self.validators[tool.name] = validator
        error = next(iter(validator.iter_errors(structured)), None)
        return None if error is None else error.message


def _state(ctx: Any) -> _Connection:
    # The SDK keeps per-connection state and teardown on the Connection (its exit stack is
    # "where per-connection cleanup belongs"), reachable from a handler only via the
    # request's session.
    state: _Connection = ctx.session._connection.state.setdefault(_STATE_KEY, _Connection())
    return state


@asynccontextmanager
async def _channel(ctx: Any, name: str, interval_s: float) -> AsyncIterator[RequestChannel]:
    """The request's :class:`RequestChannel`, its progress pump running meanwhile (also
    while the call awaits approval); the handler's last report is sent before the result."""
    import anyio

    from ._channel import RequestChannel

    channel = RequestChannel(ctx, name, interval_s)
    async with anyio.create_task_group() as tg:
        tg.start_soon(channel.pump)
        try:
            yield channel
        except BaseException:
            tg.cancel_scope.cancel()
            raise
        channel.finish()  # the pump sends what is left, then ends


def build_server(
    prompt: Prompt, *, name: str | None = None, options: ServeOptions | None = None
) -> Server[Any]:
    """An MCP ``Server`` for ``prompt``: tools with titles, annotations and output schemas,
    the rendered text as the server instructions and as an MCP prompt, one Haversack
    session per MCP session (per stdio process, per HTTP ``Mcp-Session-Id``).

    Tool failures come back as ``isError`` results the model can read, never as protocol
    errors; an unknown tool name is a JSON-RPC ``-32602`` error, as the specification asks.
    A call a policy holds for approval is put to the client's user with
    ``elicitation/create`` when the client declared that capability, and refused
    otherwise (see :func:`_settle_held`). A cancelled call (``notifications/cancelled``, or
    the client going away) is stopped and rolled back, and gets no response. The server
    speaks the handshake protocol versions (up to 2025-11-25): the stateless 2026-07-28 era
    has no session to keep a workspace in, so ``server/discover`` is not served and clients
    fall back to ``initialize``.
    """
    return _build(prompt, name=name, options=options)


def _build(
    prompt: Prompt,
    *,
    name: str | None = None,
    options: ServeOptions | None = None,
    budget: MemoryBudget | None = None,
) -> Server[Any]:
    """:func:`build_server`, its sessions' resources counted against ``budget`` if given."""
    types = _import_mcp()
    from mcp.shared.exceptions import MCPError
    from mcp_types import INVALID_PARAMS, INVALID_REQUEST, METHOD_NOT_FOUND, RequestParams
    from mcp_types.version import MODERN_PROTOCOL_VERSIONS

    opts = options or ServeOptions()
    rendered = prompt.render()
    tools = [types.Tool.model_validate(item) for item in mcp_format.tools(rendered)]
    prompt_name = f"{prompt.ns}/{prompt.key}"
    served = _Served(rendered, opts, tools, budget=budget)

    @asynccontextmanager
    async def lifespan(_: Server[Any]) -> AsyncIterator[_Served]:
        yield served

    async def on_list_tools(ctx: Any, params: Any) -> Any:
        return types.ListToolsResult(tools=served.current(ctx)[1])

    async def on_call_tool(ctx: Any, params: Any) -> Any:
        if ctx.protocol_version in MODERN_PROTOCOL_VERSIONS:
            raise MCPError(
                code=INVALID_REQUEST,
                message="This server keeps a session (plans, workspace) per MCP session; "
                "connect with the initialize handshake (protocol 2025-11-25 or earlier).",
            )
        current = served.current(ctx)[0]
        tool = current.tool(params.name) if isinstance(params.name, str) else None
        if tool is None:
            # The specification answers an unknown tool with a protocol error, not a result.
            names = ", ".join(t.name for t in current.tools) or "none"
            raise MCPError(
                code=INVALID_PARAMS,
                message=f"Unknown tool: {params.name!r}. Available tools: {names}.",
            )
        executor = await served.executor_for(ctx)
        if isinstance(executor, str):  # the memory budget left no room to open it
            return types.CallToolResult(
                content=[types.TextContent(type="text", text=executor)], is_error=True
            )
        arguments = params.arguments if params.arguments is not None else {}
        async with _channel(ctx, params.name, opts.progress_interval_s) as channel:
            result = await _execute(executor, tool, params.name, arguments, opts, channel)
            if not result.success and isinstance(result.value, PendingApproval):
                result = await _settle_held(ctx, executor, tool, result.value, opts, channel)
        if executor.rendered_prompt is not current:
            # A deferred pack was loaded: the client lists the tools again.
            await ctx.session.send_notification(
                types.ToolListChangedNotification(), related_request_id=ctx.request_id
            )
        return types.CallToolResult.model_validate(_call_result(served, tool, result))

    async def on_list_prompts(ctx: Any, params: Any) -> Any:
        return types.ListPromptsResult(
            prompts=[
                types.Prompt(name=prompt_name, description=f"The composed prompt {prompt.name}.")
            ]
        )

    async def on_get_prompt(ctx: Any, params: Any) -> Any:
        if params.name != prompt_name:
            raise MCPError(
                code=-32602,
                message=f"Unknown prompt {params.name!r}; this server has {prompt_name!r}.",
            )
        return types.GetPromptResult(
            description=prompt.name,
            messages=[
                types.PromptMessage(
                    role="user", content=types.TextContent(type="text", text=rendered.text)
                )
            ],
        )

    async def no_discover(ctx: Any, params: Any) -> Any:
        raise MCPError(code=METHOD_NOT_FOUND, message="Method not found", data="server/discover")

    from importlib.metadata import version

    server: Server[Any] = _server_class()(
        name or "haversack",
        version=version("haversack"),
        instructions=rendered.text,
        lifespan=lifespan,
        on_list_tools=on_list_tools,
        on_call_tool=on_call_tool,
        on_list_prompts=on_list_prompts,
        on_get_prompt=on_get_prompt,
    )
    server.add_request_handler("server/discover", RequestParams, no_discover)
    if prompt.deferred_packs:
        _announce_list_changed(server)
    return server


def _announce_list_changed(server: Any) -> None:
    """Declare ``tools.listChanged``: loading a deferred pack changes the tool list."""
    from mcp.server.lowlevel.server import NotificationOptions

    declared = server.get_capabilities

    def get_capabilities(notification_options: Any = None, *args: Any, **kwargs: Any) -> Any:
        options = notification_options or NotificationOptions()
        options.tools_changed = True
        return declared(options, *args, **kwargs)

    server.get_capabilities = get_capabilities


def _server_class() -> Any:
    from mcp.server.lowlevel import Server

    return Server


async def _execute(
    executor: ToolExecutor,
    tool: Tool[Any, Any] | None,
    name: str,
    arguments: Any,
    opts: ServeOptions,
    channel: RequestChannel,
) -> ToolResult[Any]:
    """One call (its handler asks and reports through ``channel``); cancelling the awaiting
    task stops the tool and rolls the call back.

    An async handler runs on the loop, so cancellation reaches it as ``CancelledError``;
    a sync one runs in its own thread and gets :class:`ToolCallCancelled` raised in it.
    Either way the executor restores the snapshot, records the call as aborted and
    re-raises, and the dispatcher sends no response for a call the client cancelled.
    """
    if tool is not None and tool.is_async:
        return await executor.aexecute(name, arguments, interaction=channel)
    return await _in_thread(
        lambda: executor.execute(name, arguments, interaction=channel), name, opts
    )


async def _in_thread(
    call: Callable[[], ToolResult[Any]], name: str, opts: ServeOptions
) -> ToolResult[Any]:
    """A sync handler's call in its own thread, so cancelling the request interrupts it."""
    return await run_interruptibly(call, name=f"haversack tool {name}", grace_s=opts.cancel_grace_s)


async def _settle_held(
    ctx: Any,
    executor: ToolExecutor,
    tool: Tool[Any, Any] | None,
    held: PendingApproval,
    opts: ServeOptions,
    channel: RequestChannel,
) -> ToolResult[Any]:
    """Ask the client's user about a held call, then resume it with the answer: an approved
    call runs (a transaction like any other, interruptible like :func:`_execute`), anything
    else is refused with a reason the model can act on.

    Never left pending: nobody else will resume it, so a long-lived server would keep it.
    Only this call waits for the answer; the connection's other requests are served
    meanwhile (the SDK runs each request in a task of its own, and the executor's turn is
    not held while asking). If the call is cancelled (``notifications/cancelled``, or the
    client goes away) before it is resumed, it is recorded as refused and the cancellation
    propagates.
    """
    import anyio

    from ._elicitation import ask_approval, cancelled_denial

    try:
        channel.what = "awaiting approval"
        answer = await ask_approval(ctx, held, opts.approval_timeout_s)
        channel.what = "running"
        if answer.verdict is ApprovalVerdict.DENY or (tool is not None and tool.is_async):
            # A denial runs no handler: nothing to interrupt, no thread needed.
            return await executor.aresume(held.call_id, answer, interaction=channel)
        return await _in_thread(
            lambda: executor.resume(held.call_id, answer, interaction=channel),
            held.tool_name,
            opts,
        )
    except anyio.get_cancelled_exc_class():
        with anyio.CancelScope(shield=True) as cleanup:
            # Bounded: another call of the session may hold the executor's turn.
            cleanup.deadline = anyio.current_time() + opts.cancel_grace_s
            if any(p.call_id == held.call_id for p in executor.pending):
                await executor.aresume(held.call_id, cancelled_denial(held))
        raise


def _call_result(served: _Served, tool: Tool[Any, Any] | None, result: ToolResult[Any]) -> Any:
    out = mcp_format.call_result(result, tool)
    structured = out.get("structuredContent")
    # An external server's result was checked by the pack that called it (in linear time:
    # its schema may hold patterns Python's re would backtrack on).
    if tool is not None and structured is not None and not isinstance(result.value, JsonResult):
        problem = served.validate(tool, structured)
        if problem is not None:
            # A client rejects a result whose structuredContent breaks the declared schema;
            # say which tool is at fault instead.
            return {
                "content": [
                    {
                        "type": "text",
                        "text": f"Tool {tool.name!r} returned a value that does not match its "
                        f"declared output schema ({problem}); this is a bug in the tool.\n"
                        + result.render(),
                    }
                ],
                "isError": True,
            }
    return out


async def serve_stdio(
    prompt: Prompt, *, name: str | None = None, options: ServeOptions | None = None
) -> None:
    """Serve ``prompt`` over stdio until the client disconnects (stdin closes).

    Malformed frames are answered with JSON-RPC errors (-32700, -32600); a disconnect
    cancels the running call, rolls it back and closes the session's resources.
    """
    _import_mcp()
    from mcp.server.runner import serve_loop

    from ._stdio import stdio_streams

    server = build_server(prompt, name=name, options=options)
    async with server.lifespan(server) as state, stdio_streams() as (read, write):
        await serve_loop(server, read, write, lifespan_state=state)
