"""``haversack serve`` with the real installed packs, driven by the official MCP client."""

from __future__ import annotations

import os
import sys

import anyio
from mcp import ClientSession, StdioServerParameters
from mcp.client.stdio import stdio_client


def _params(*packs: str) -> StdioServerParameters:
    args = ["-m", "haversack", "serve"]
    for pack in packs:
        args += ["-p", pack]
    env = {k: v for k, v in os.environ.items() if not k.startswith("HAVERSACK_")}
    return StdioServerParameters(command=sys.executable, args=args, env=env)


def test_serve_exposes_the_planning_pack_with_its_policy():
    async def scenario():
        async with (
            stdio_client(_params("planning")) as (read, write),
            ClientSession(read, write) as client,
        ):
            init = await client.initialize()
            assert "planning_setup_plan" in (init.instructions or "")
            names = {tool.name for tool in (await client.list_tools()).tools}
            assert {"planning_setup_plan", "planning_add_step", "planning_read_plan"} <= names

            denied = await client.call_tool("planning_add_step", {"steps": ["x"]})
            assert denied.is_error
            assert "planning_setup_plan" in denied.content[0].text

            made = await client.call_tool(
                "planning_setup_plan", {"objective": "Ship it", "steps": ["Write", "Test"]}
            )
            assert not made.is_error, made.content[0].text
            read_back = await client.call_tool("planning_read_plan", {})
            assert "Ship it" in read_back.content[0].text

    anyio.run(scenario)
