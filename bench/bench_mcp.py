"""MCP both ways: ``haversack serve`` start-up to the first ``tools/list`` against a one-tool
server built with the MCP SDK, and the per-call cost of a tool bridged by the haversack-mcp
pack against calling the same server directly with the SDK client."""

from __future__ import annotations

import asyncio
import gc
import json
import os
import subprocess
import sys
import tempfile
import textwrap
import time
from collections.abc import Awaitable, Callable
from pathlib import Path

from _harness import Result, Sample, interpreter, measure, result

SUITE = "mcp"

SDK_SERVER = textwrap.dedent(
    """
    import anyio
    import mcp.types as types
    from mcp.server.lowlevel import Server
    from mcp.server.stdio import stdio_server

    TOOL = types.Tool(
        name="echo",
        description="Echo the text.",
        input_schema={
            "type": "object",
            "properties": {"text": {"type": "string"}},
            "required": ["text"],
        },
    )

    async def on_list_tools(ctx, params):
        return types.ListToolsResult(tools=[TOOL])

    async def on_call_tool(ctx, params):
        text = params.arguments["text"]
        return types.CallToolResult(content=[types.TextContent(type="text", text=text)])

    async def main():
        server = Server("echo", on_list_tools=on_list_tools, on_call_tool=on_call_tool)
        async with stdio_server() as (read, write):
            await server.run(read, write, server.create_initialization_options())

    anyio.run(main)
    """
)

HAVERSACK_SERVER = textwrap.dedent(
    """
    import anyio
    from dataclasses import dataclass
    from haversack import MarkdownSection, Prompt, Tool, ToolResult
    from haversack.server import serve_stdio

    @dataclass(frozen=True)
    class Echo:
        text: str

    def echo(params, *, context):
        return ToolResult.ok(None, params.text)

    section = MarkdownSection(
        title="Echo", key="echo", template="Echo with ${tool:echo}.",
        tools=[Tool[Echo, None](name="echo", description="Echo the text.", handler=echo)],
    )
    anyio.run(lambda: serve_stdio(Prompt(ns="bench", key="echo", sections=[section])))
    """
)

_HANDSHAKE = b"".join(
    json.dumps(m).encode() + b"\n"
    for m in (
        {
            "jsonrpc": "2.0",
            "id": 1,
            "method": "initialize",
            "params": {
                "protocolVersion": "2025-11-25",
                "capabilities": {},
                "clientInfo": {"name": "bench", "version": "0"},
            },
        },
        {"jsonrpc": "2.0", "method": "notifications/initialized"},
        {"jsonrpc": "2.0", "id": 2, "method": "tools/list"},
    )
)


def _env() -> dict[str, str]:
    env = {k: v for k, v in os.environ.items() if k != "PYTHONDONTWRITEBYTECODE"}
    return {k: v for k, v in env.items() if not k.startswith("HAVERSACK_")}


def _first_tools_list(argv: list[str]) -> None:
    """Start ``argv``, send the handshake and tools/list at once, wait for the list."""
    proc = subprocess.Popen(
        argv, stdin=subprocess.PIPE, stdout=subprocess.PIPE, stderr=subprocess.DEVNULL, env=_env()
    )
    assert proc.stdin is not None
    assert proc.stdout is not None
    proc.stdin.write(_HANDSHAKE)
    proc.stdin.flush()
    for line in proc.stdout:
        if json.loads(line).get("id") == 2:
            break
    else:
        raise RuntimeError(f"{argv} exited before answering tools/list")
    proc.stdin.close()
    proc.wait()
    proc.stdout.close()


def _startup(quick: bool, workdir: Path) -> list[Result]:
    repeats = 5 if quick else 20
    python = interpreter()
    sdk = workdir / "sdk_server.py"
    sdk.write_text(SDK_SERVER)
    ours = workdir / "haversack_server.py"
    ours.write_text(HAVERSACK_SERVER)
    floor_sample = measure(lambda: _first_tools_list([python, str(sdk)]), repeats=repeats, warmup=1)
    floor = ("one-tool SDK server (lowlevel Server, stdio)", floor_sample)
    serve_one = measure(lambda: _first_tools_list([python, str(ours)]), repeats=repeats, warmup=1)
    serve_cli = measure(
        lambda: _first_tools_list([python, "-m", "haversack", "serve", "-p", "planning"]),
        repeats=repeats,
        warmup=1,
    )
    return [
        result(
            SUITE,
            "start-up to first tools/list: SDK one-tool server",
            floor_sample,
            notes="the floor: python, mcp import, handshake, tools/list",
        ),
        result(
            SUITE,
            "start-up to first tools/list: serve_stdio, the same one tool",
            serve_one,
            floor=floor,
            max_ratio=1.2,
            notes="haversack.server.serve_stdio with a one-tool prompt",
        ),
        result(
            SUITE,
            "start-up to first tools/list: haversack serve -p planning",
            serve_cli,
            floor=floor,
            notes="the CLI: pack discovery, composing, 4 tools (no target; reported)",
        ),
    ]


def _per_call(quick: bool, workdir: Path) -> list[Result]:
    from mcp import Client, StdioServerParameters

    from haversack import Session, ToolExecutor, compose

    calls = 50 if quick else 300
    sdk = workdir / "sdk_server.py"
    sdk.write_text(SDK_SERVER)
    python = interpreter()

    prompt = compose(
        ns="bench",
        key="mcp",
        packs=["mcp"],
        config={"mcp": {"servers": {"echo": {"command": [python, str(sdk)]}}}},
        strict=True,
    )
    rendered = prompt.render()
    rounds = 3

    async def timed(call: Callable[[], Awaitable[object]], n: int) -> list[float]:
        for _ in range(20):
            await call()
        times: list[float] = []
        gc.collect()
        gc.disable()
        try:
            for _ in range(n):
                start = time.perf_counter()
                await call()
                times.append(time.perf_counter() - start)
        finally:
            gc.enable()
        return times

    async def direct_round() -> list[float]:
        params = StdioServerParameters(command=python, args=[str(sdk)], env=_env())
        async with Client(params) as client:
            return await timed(lambda: client.call_tool("echo", {"text": "hi"}), calls // rounds)

    async def bridged_round(executor: ToolExecutor) -> list[float]:
        async def call() -> None:
            outcome = await executor.aexecute("echo_echo", {"text": "hi"})
            assert outcome.success, outcome.message

        return await timed(call, calls // rounds)

    # Rounds alternate, each on its own event loop with nothing else running: the machine's
    # load drifts, and both sides should see the same drift.
    direct: list[float] = []
    bridged_times: list[float] = []
    with ToolExecutor(rendered, session=Session()) as executor:
        for _ in range(rounds):
            direct += asyncio.run(direct_round())
            bridged_times += asyncio.run(bridged_round(executor))
    direct_sample, bridged = Sample(tuple(direct)), Sample(tuple(bridged_times))
    with ToolExecutor(rendered, session=Session()) as executor:
        sync = measure(
            lambda: executor.execute("echo_echo", {"text": "hi"}), repeats=calls, warmup=20
        )
    floor = ("the same server called directly (mcp.Client.call_tool)", direct_sample)
    return [
        result(
            SUITE,
            "per call: SDK client, direct",
            direct_sample,
            notes="the floor: one tools/call over stdio to the one-tool SDK server",
        ),
        result(
            SUITE,
            "per call: bridged tool, ToolExecutor.aexecute",
            bridged,
            floor=floor,
            max_ratio=1.1,
            notes="haversack-mcp: executor pipeline, then the call on the connection's loop thread",
        ),
        result(
            SUITE,
            "per call: bridged tool, ToolExecutor.execute",
            sync,
            floor=floor,
            notes="execute() runs the async handler on a fresh event loop per call (reported)",
        ),
    ]


def run(quick: bool) -> list[Result]:
    """Both figures; each starts its own server processes."""
    with tempfile.TemporaryDirectory() as tmp:
        workdir = Path(tmp)
        return _startup(quick, workdir) + _per_call(quick, workdir)


if __name__ == "__main__":
    for r in run(quick="--quick" in sys.argv):
        print(r.name, r.display, r.ratio)
