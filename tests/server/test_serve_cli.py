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


def test_serve_with_a_workspace_lets_the_client_edit_the_project(tmp_path):
    """Launched the way desktop clients launch servers (cwd ``/``), with ``--workspace``:
    the model's edits land in the user's project, and a rejected edit changes nothing."""
    project = tmp_path / "project"
    project.mkdir()
    (project / "app.py").write_text("answer = 41\n")
    params = _params("vfs")
    params.args += ["--workspace", str(project)]
    params.cwd = "/"

    async def scenario():
        async with stdio_client(params) as (read, write), ClientSession(read, write) as client:
            await client.initialize()
            shown = await client.call_tool("read_file", {"path": "app.py"})
            assert "answer = 41" in shown.content[0].text
            edited = await client.call_tool(
                "edit_file", {"path": "app.py", "old_string": "41", "new_string": "42"}
            )
            assert not edited.is_error, edited.content[0].text
            missing = await client.call_tool(
                "edit_file", {"path": "app.py", "old_string": "nope", "new_string": "x"}
            )
            assert missing.is_error
            made = await client.call_tool(
                "write_file", {"path": "docs/notes.md", "content": "# Notes\n"}
            )
            assert not made.is_error, made.content[0].text

    anyio.run(scenario)
    assert (project / "app.py").read_text() == "answer = 42\n"
    assert (project / "docs" / "notes.md").read_text() == "# Notes\n"
