"""MCP both ways: ``haversack serve`` start-up to the first ``tools/list`` against a one-tool
server built with the MCP SDK, the per-call cost of a tool bridged by the haversack-mcp
pack against calling the same server directly with the SDK client, and a whole
``haversack call`` of mcp-server-time against a direct SDK client doing the same."""

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
    argvs = (
        [python, str(sdk)],
        [python, str(ours)],
        [python, "-m", "haversack", "serve", "-p", "planning"],
    )
    for argv in argvs:  # warm-up: bytecode caches, page cache
        _first_tools_list(argv)
    # Interleaved, one of each per repeat: the machine's load drifts over the minutes this
    # takes, and every figure should see the same drift as its floor.
    times: tuple[list[float], ...] = ([], [], [])
    for _ in range(repeats):
        for argv, into in zip(argvs, times, strict=True):
            start = time.perf_counter()
            _first_tools_list(argv)
            into.append(time.perf_counter() - start)
    floor_sample, serve_one, serve_cli = (Sample(tuple(t)) for t in times)
    floor = ("one-tool SDK server (lowlevel Server, stdio)", floor_sample)
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

    calls = 60 if quick else 600
    rounds = 3
    warmup = 20
    sdk = workdir / "sdk_server.py"
    sdk.write_text(SDK_SERVER)
    python = interpreter()
    arguments = {"text": "hi"}

    prompt = compose(
        ns="bench",
        key="mcp",
        packs=["mcp"],
        config={"mcp": {"servers": {"echo": {"command": [python, str(sdk)]}}}},
        strict=True,
    )
    rendered = prompt.render()

    async def direct_and_bridged() -> tuple[list[float], list[float]]:
        """One round on one loop, as an async app runs: the SDK client and the executor each
        with the same server warm, their calls interleaved (alternating which goes first),
        so both see the same load on this shared machine."""
        params = StdioServerParameters(command=python, args=[str(sdk)], env=_env())
        async with Client(params) as client:
            with ToolExecutor(rendered, session=Session()) as executor:

                async def direct() -> None:
                    result = await client.call_tool("echo", arguments)
                    assert not result.is_error

                async def bridged() -> None:
                    outcome = await executor.aexecute("echo_echo", arguments)
                    assert outcome.success, outcome.message

                pair: list[tuple[Callable[[], Awaitable[None]], list[float]]] = [
                    (direct, []),
                    (bridged, []),
                ]
                for _ in range(warmup):
                    for call, _times in pair:
                        await call()
                gc.collect()
                gc.disable()
                try:
                    for index in range(calls // rounds):
                        for call, times in pair if index % 2 else pair[::-1]:
                            start = time.perf_counter()
                            await call()
                            times.append(time.perf_counter() - start)
                finally:
                    gc.enable()
                return pair[0][1], pair[1][1]

    direct: list[float] = []
    bridged: list[float] = []
    sync: list[float] = []
    with ToolExecutor(rendered, session=Session()) as sync_executor:
        for _ in range(rounds):
            floor_times, bridged_times = asyncio.run(direct_and_bridged())
            direct += floor_times
            bridged += bridged_times
            sample = measure(
                lambda: sync_executor.execute("echo_echo", arguments),
                repeats=calls // rounds,
                warmup=warmup,
            )
            sync += sample.times_s
    direct_sample = Sample(tuple(direct))
    floor = ("the same server called directly (mcp.Client.call_tool)", direct_sample)
    return [
        result(
            SUITE,
            "per call: SDK client, direct",
            direct_sample,
            notes="the floor: one tools/call over stdio to the one-tool SDK server, "
            "initialized session, on the caller's loop",
        ),
        result(
            SUITE,
            "per call: bridged tool, ToolExecutor.aexecute",
            Sample(tuple(bridged)),
            floor=floor,
            max_ratio=1.1,
            notes="haversack-mcp, calls interleaved with the floor's: executor pipeline, "
            "then the session on the caller's loop (it started the server)",
        ),
        result(
            SUITE,
            "per call: bridged tool, ToolExecutor.execute",
            Sample(tuple(sync)),
            floor=floor,
            notes="sync: the core runs the async handler on a fresh loop per call, which "
            "hands the call to the connection's thread (rounds alternate with the floor's)",
        ),
    ]


#: mcp-server-time, counting its starts (a line per start in $COUNT_FILE).
COUNTED_TIME_SERVER = textwrap.dedent(
    """
    import os, sys
    with open(os.environ["COUNT_FILE"], "a") as fh:
        fh.write("start\\n")
    from mcp_server_time import main
    sys.argv = ["mcp-server-time", "--local-timezone", "UTC"]
    main()
    """
)

SDK_TIME_CLIENT = textwrap.dedent(
    """
    import asyncio, sys
    from mcp import Client, StdioServerParameters
    from mcp.client.stdio import get_default_environment

    async def main():
        server, count = sys.argv[1], sys.argv[2]
        env = {**get_default_environment(), "COUNT_FILE": count}
        params = StdioServerParameters(command=sys.executable, args=[server], env=env)
        async with Client(params) as client:
            await client.list_tools()
            result = await client.call_tool("get_current_time", {"timezone": "UTC"})
            assert not result.is_error
            print(result.content[0].text)

    asyncio.run(main())
    """
)


def _cli_call(quick: bool, workdir: Path) -> list[Result]:
    """``haversack call`` of mcp-server-time, whole process, against an SDK client script
    that starts the same server and does initialize, tools/list and tools/call."""
    repeats = 5 if quick else 15
    python = interpreter()
    server = workdir / "time_server.py"
    server.write_text(COUNTED_TIME_SERVER)
    client = workdir / "sdk_time_client.py"
    client.write_text(SDK_TIME_CLIENT)
    count = workdir / "starts"
    config = workdir / "haversack.toml"
    config.write_text(
        "[packs.mcp.servers.time]\n"
        f"command = {json.dumps([python, str(server)])}\n"
        f"env = {{ COUNT_FILE = {json.dumps(str(count))} }}\n"
    )
    call = ["time_get_current_time", '{"timezone": "UTC"}']
    argvs = (
        [python, str(client), str(server), str(count)],
        [python, "-m", "haversack", "call", "-p", "mcp", "--config", str(config), *call],
    )
    env = _env()

    def once(argv: list[str]) -> int:
        """Run ``argv``; how many times it started the server."""
        count.unlink(missing_ok=True)
        subprocess.run(argv, check=True, stdout=subprocess.DEVNULL, env=env, cwd=workdir)
        return len(count.read_text().split())

    for argv in argvs:  # warm-up: bytecode caches, page cache
        once(argv)
    times: tuple[list[float], list[float]] = ([], [])
    starts: tuple[set[int], set[int]] = (set(), set())
    for index in range(repeats):  # interleaved, alternating which goes first
        order = list(zip(argvs, times, starts, strict=True))
        for argv, into, seen in order if index % 2 else order[::-1]:
            begin = time.perf_counter()
            seen.add(once(argv))
            into.append(time.perf_counter() - begin)
    sdk_sample, ours = Sample(tuple(times[0])), Sample(tuple(times[1]))
    return [
        result(
            SUITE,
            "one call, whole process: SDK client",
            sdk_sample,
            notes="the floor: python, mcp import, start mcp-server-time, initialize, "
            "tools/list, tools/call",
        ),
        result(
            SUITE,
            "one call, whole process: haversack call -p mcp",
            ours,
            floor=("SDK client, whole process", sdk_sample),
            max_ratio=1.3,
            notes="the CLI: pack discovery, composing (the server started to list its "
            "tools), the call on that same session; server starts per run: "
            f"{'/'.join(str(n) for n in sorted(starts[1]))}",
        ),
    ]


def run(quick: bool) -> list[Result]:
    """The figures; each starts its own server processes."""
    with tempfile.TemporaryDirectory() as tmp:
        workdir = Path(tmp)
        return _startup(quick, workdir) + _per_call(quick, workdir) + _cli_call(quick, workdir)


if __name__ == "__main__":
    for r in run(quick="--quick" in sys.argv):
        print(r.name, r.display, r.ratio)
