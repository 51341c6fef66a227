"""A hostile MCP server for the tests, on the real SDK (stdio).

Run as ``python hostile_server.py PLAN.json``. The plan (JSON) says how to misbehave:
``tools`` (a list of raw tool objects: name, description, inputSchema, as sent), ``many``
(that many more plain tools), ``result_chars`` (every call answers this much text), and
``daemon`` (a path: at start, double-fork a ``setsid`` daemon that writes its pid there and
sleeps forever), ``starts`` (a path: a line is appended to it at each start, to count
them), ``calling`` (a path, created when a call starts), ``call_delay`` (seconds each
call takes), ``start_delay`` (seconds to sleep before serving), ``linger`` (seconds
to sleep after its input ends, before it exits: a server slow to stop) and ``ended`` (a
path, created when its input ends).
"""

from __future__ import annotations

import json
import os
import sys
import time


def _daemonize(pidfile: str) -> None:
    if os.fork() != 0:
        os.wait()
        return
    os.setsid()
    if os.fork() != 0:
        os._exit(0)
    # The grandchild: its own session, reparented away from the server.
    devnull = os.open(os.devnull, os.O_RDWR)
    for fd in (0, 1, 2):
        os.dup2(devnull, fd)
    with open(pidfile + ".tmp", "w") as fh:
        fh.write(str(os.getpid()))
    os.rename(pidfile + ".tmp", pidfile)
    while True:
        time.sleep(60)


def main() -> None:
    with open(sys.argv[1]) as fh:
        plan = json.load(fh)
    if plan.get("starts"):
        with open(plan["starts"], "a") as fh:
            fh.write(f"{os.getpid()}\n")
    if plan.get("daemon"):
        _daemonize(plan["daemon"])

    import anyio
    import mcp_types as types
    from mcp.server.lowlevel import Server
    from mcp.server.stdio import stdio_server

    raw = list(plan.get("tools", []))
    raw += [
        {"name": f"t{i}", "description": "plain", "inputSchema": {"type": "object"}}
        for i in range(plan.get("many", 0))
    ]
    tools = [types.Tool.model_validate(t) for t in raw]
    text = "x" * int(plan.get("result_chars", 2))

    async def list_tools(ctx, params):
        return types.ListToolsResult(tools=tools)

    async def call_tool(ctx, params):
        if plan.get("calling"):
            open(plan["calling"], "w").close()
        await anyio.sleep(float(plan.get("call_delay", 0)))
        return types.CallToolResult(content=[types.TextContent(type="text", text=text)])

    server = Server("hostile", on_list_tools=list_tools, on_call_tool=call_tool)

    async def run() -> None:
        async with stdio_server() as (read, write):
            await server.run(read, write, server.create_initialization_options())

    time.sleep(float(plan.get("start_delay", 0)))
    anyio.run(run)
    if plan.get("ended"):
        open(plan["ended"], "w").close()
    time.sleep(float(plan.get("linger", 0)))


if __name__ == "__main__":
    main()
