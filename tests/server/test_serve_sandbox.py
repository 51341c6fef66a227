"""``haversack serve`` with all three packs (planning, vfs, podman) driven by the official MCP
client over stdio: the file tools and the shell share the sandbox workspace, a policy denies,
and a failed shell command is rolled back."""

from __future__ import annotations

import os
import sys
from pathlib import Path

import anyio
import pytest
from mcp import ClientSession, StdioServerParameters
from mcp.client.stdio import stdio_client

pytestmark = pytest.mark.podman


def _params(tmp_path: Path) -> StdioServerParameters:
    if os.environ.get("HAVERSACK_SKIP_PODMAN") == "1":
        pytest.skip("HAVERSACK_SKIP_PODMAN=1: Podman tests disabled by the environment")
    config = tmp_path / "haversack.toml"
    workspaces = tmp_path / "workspaces"
    workspaces.mkdir()
    config.write_text(f'[packs.podman]\nworkspace_root = "{workspaces}"\n')
    args = ["-m", "haversack", "serve", "--strict", "--config", str(config)]
    for pack in ("planning", "vfs", "podman"):
        args += ["-p", pack]
    env = {k: v for k, v in os.environ.items() if not k.startswith("HAVERSACK_")}
    return StdioServerParameters(command=sys.executable, args=args, env=env)


def _text(result: object) -> str:
    return "\n".join(getattr(item, "text", "") for item in getattr(result, "content", []))


def test_serve_all_three_packs_with_the_sandbox(tmp_path):
    params = _params(tmp_path)

    async def scenario() -> None:
        async with (
            stdio_client(params) as (read, write),
            ClientSession(read, write) as client,
        ):
            init = await client.initialize()
            assert "shell_execute" in (init.instructions or "")
            names = {tool.name for tool in (await client.list_tools()).tools}
            assert {"planning_setup_plan", "read_file", "write_file", "ls"} <= names
            assert {"shell_execute", "evaluate_python"} <= names

            made = await client.call_tool("planning_setup_plan", {"objective": "Try the sandbox"})
            assert not made.is_error, _text(made)

            wrote = await client.call_tool(
                "write_file", {"path": "hello.txt", "content": "hello from the file tools\n"}
            )
            assert not wrote.is_error, _text(wrote)
            cat = await client.call_tool("shell_execute", {"command": "cat hello.txt && id -u"})
            assert not cat.is_error, _text(cat)
            assert "hello from the file tools" in _text(cat)
            assert "1000" in _text(cat)

            # Read-before-write: a file the shell made has not been read in this session.
            await client.call_tool("shell_execute", {"command": "echo 'v = 1' > conf.py"})
            denied = await client.call_tool(
                "edit_file", {"path": "conf.py", "old_string": "1", "new_string": "2"}
            )
            assert denied.is_error
            assert "read_file" in _text(denied)

            failed = await client.call_tool(
                "shell_execute", {"command": "echo half > build.log; echo oops >&2; exit 3"}
            )
            assert failed.is_error
            assert "exit code 3" in _text(failed)
            assert "oops" in _text(failed)
            listing = await client.call_tool("ls", {"path": ""})
            assert "hello.txt" in _text(listing)
            assert "build.log" not in _text(listing)
            gone = await client.call_tool("read_file", {"path": "build.log"})
            assert gone.is_error

    anyio.run(scenario)
    # The server closed its resources on exit: no workspace is left behind.
    assert list((tmp_path / "workspaces").iterdir()) == []


def test_a_cancelled_shell_command_is_rolled_back_and_the_session_goes_on(tmp_path):
    params = _params(tmp_path)
    params.args.extend(["--progress-interval", "0.1"])

    async def scenario() -> None:
        async with (
            stdio_client(params) as (read, write),
            ClientSession(read, write) as client,
        ):
            await client.initialize()
            running = anyio.Event()

            async def on_progress(progress, total, message):
                running.set()

            async with anyio.create_task_group() as tg:

                async def call() -> None:
                    await client.call_tool(
                        "shell_execute",
                        {"command": "echo half > partial.txt; sleep 2"},
                        progress_callback=on_progress,
                    )

                tg.start_soon(call)
                await running.wait()
                tg.cancel_scope.cancel()

            # The cancelled command's file is rolled back; the session goes on.
            listing = await client.call_tool("ls", {"path": ""})
            assert not listing.is_error, _text(listing)
            assert "partial.txt" not in _text(listing)
            echoed = await client.call_tool("shell_execute", {"command": "echo after"})
            assert "after" in _text(echoed)

    anyio.run(scenario)
