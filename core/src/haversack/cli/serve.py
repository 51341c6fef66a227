"""``haversack serve``: the composed prompt as an MCP server over stdio or Streamable HTTP."""

from __future__ import annotations

import argparse
from collections.abc import Awaitable, Callable
from typing import TYPE_CHECKING

from haversack.cli._common import (
    add_ask,
    add_defer,
    approval_policies,
    compose_from,
    require_resources,
)

if TYPE_CHECKING:
    from haversack._prompt import Prompt

HELP = "serve the installed packs' tools over MCP (stdio or HTTP); needs haversack[mcp]"


def add_arguments(parser: argparse.ArgumentParser) -> None:
    """``--name``, ``--transport``, the HTTP options (host, port, token, origins), which
    tools need approval (``--ask``, ``--ask-writes``), how often to report progress and how
    long to wait for an approval."""
    add_defer(parser)
    parser.add_argument("--name", default="haversack", help="server name shown to MCP clients")
    parser.add_argument(
        "--transport",
        choices=("stdio", "http"),
        default="stdio",
        help="stdio (default; the client starts the server) or Streamable HTTP",
    )
    http = parser.add_argument_group("HTTP transport")
    http.add_argument("--host", default="127.0.0.1", help="address to listen on (127.0.0.1)")
    http.add_argument("--port", type=int, default=8000, help="port to listen on (8000; 0: any)")
    http.add_argument(
        "--token-file",
        metavar="FILE",
        help="file whose first line is the bearer token clients must send "
        "(default: $HAVERSACK_MCP_TOKEN; required unless the host is loopback)",
    )
    http.add_argument(
        "--allow-origin",
        action="append",
        default=[],
        metavar="ORIGIN",
        help="browser origin allowed besides loopback ones, e.g. https://app.example (repeatable)",
    )
    http.add_argument(
        "--header-timeout",
        type=float,
        default=10.0,
        metavar="SECONDS",
        help="close a connection whose request headers take longer than this (10)",
    )
    http.add_argument(
        "--body-timeout",
        type=float,
        default=30.0,
        metavar="SECONDS",
        help="answer 408 to a request whose body takes longer than this (30)",
    )
    http.add_argument(
        "--max-sessions",
        type=int,
        default=64,
        metavar="N",
        help="MCP sessions open at once; a new one closes the idlest, or gets 503 when all "
        "are busy (64)",
    )
    http.add_argument(
        "--max-memory",
        type=int,
        default=1024,
        metavar="MIB",
        help="what the open sessions' in-memory workspaces may hold together; idle sessions "
        "are closed to make room, then calls that would pass it fail (1024)",
    )
    http.add_argument(
        "--session-idle-timeout",
        type=float,
        default=1800.0,
        metavar="SECONDS",
        help="close an MCP session (and its resources) idle this long (1800)",
    )
    # Asked of the client's user over MCP elicitation; a client that cannot ask gets the
    # call refused.
    add_ask(parser)
    parser.add_argument(
        "--progress-interval",
        type=float,
        default=2.0,
        metavar="SECONDS",
        help="how often a running call reports progress to clients that ask (2)",
    )
    parser.add_argument(
        "--approval-timeout",
        type=float,
        default=300.0,
        metavar="SECONDS",
        help="how long to wait for the client's user to approve a held call before "
        "refusing it (300)",
    )


def run(args: argparse.Namespace) -> int:
    """Compose the prompt, then serve it until the client disconnects (or Ctrl-C)."""
    try:
        import anyio

        from haversack.server import ServeOptions, serve_stdio
    except ImportError as exc:
        from haversack.errors import HaversackError

        raise HaversackError(
            f"The MCP server needs the 'mcp' package ({exc}); install it with: "
            "pip install 'haversack[mcp]'"
        ) from exc
    options = ServeOptions(
        progress_interval_s=args.progress_interval, approval_timeout_s=args.approval_timeout
    )
    if args.transport == "stdio":
        prompt = _compose(args)
        # A resource that cannot open is reported now, in one line, not to the first client.
        require_resources(prompt)
        anyio.run(_until_signalled, lambda: serve_stdio(prompt, name=args.name, options=options))
        return 0
    from haversack.server import HttpSettings, read_token, serve_http

    # Settings first: a missing token is reported before packs are loaded.
    settings = HttpSettings(
        host=args.host,
        port=args.port,
        token=read_token(args.token_file),
        allowed_origins=tuple(args.allow_origin),
        header_timeout_s=args.header_timeout,
        body_timeout_s=args.body_timeout,
        max_sessions=args.max_sessions,
        max_memory_bytes=args.max_memory << 20,
        session_idle_timeout_s=args.session_idle_timeout,
    )
    prompt = _compose(args)
    require_resources(prompt)
    # uvicorn turns SIGINT/SIGTERM into a graceful shutdown that closes every session.
    anyio.run(lambda: serve_http(prompt, settings, name=args.name, options=options))
    return 0


def _compose(args: argparse.Namespace) -> Prompt:
    """The prompt to serve, rendered once now: a bad ``--ask`` pattern (one matching no
    tool) or any other composition error stops the server before a client connects."""
    prompt = compose_from(args, policies=approval_policies(args))
    prompt.render()
    return prompt


async def _until_signalled(serve: Callable[[], Awaitable[None]]) -> None:
    """Serve until the client disconnects, or SIGTERM/SIGHUP asks the server to stop: then
    the running call is rolled back and every resource closed, as on a disconnect. (By
    default those signals end the process at once, and a Podman sandbox's service process
    and container outlived it.)"""
    import signal

    import anyio

    async with anyio.create_task_group() as group:

        async def stop_on_signal() -> None:
            with anyio.open_signal_receiver(signal.SIGTERM, signal.SIGHUP) as signals:
                async for _ in signals:
                    group.cancel_scope.cancel()
                    return

        group.start_soon(stop_on_signal)
        await serve()
        group.cancel_scope.cancel()
