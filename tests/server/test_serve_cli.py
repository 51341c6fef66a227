"""``haversack serve`` with the real installed packs, driven by the official MCP client."""

from __future__ import annotations

import os
import sys

import anyio
import pytest
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


def test_serve_http_with_a_token_file_and_the_default_client_mode(tmp_path):
    import re
    import subprocess

    from mcp import Client
    from mcp.client.streamable_http import streamable_http_client
    from mcp.shared._httpx_utils import create_mcp_http_client

    token = "file-token-0123456789abcdef"
    token_file = tmp_path / "token"
    token_file.write_text(token + "\n")
    env = {k: v for k, v in os.environ.items() if not k.startswith("HAVERSACK_")}
    proc = subprocess.Popen(
        [
            *(sys.executable, "-m", "haversack", "serve", "-p", "planning"),
            *("--transport", "http", "--port", "0", "--token-file", str(token_file)),
        ],
        stderr=subprocess.PIPE,
        env=env,
        text=True,
    )
    try:
        assert proc.stderr is not None
        url = re.search(r"at (http://\S+)", proc.stderr.readline()).group(1)

        async def scenario():
            headers = {"Authorization": f"Bearer {token}"}
            async with (
                create_mcp_http_client(headers=headers) as http,
                # mode="auto" probes server/discover first; the server declines it, so the
                # client falls back to the initialize handshake and gets a session.
                Client(streamable_http_client(url, http_client=http)) as client,
            ):
                assert client.protocol_version == "2025-11-25"
                made = await client.call_tool("planning_setup_plan", {"objective": "Ship it"})
                assert not made.is_error
                read_back = await client.call_tool("planning_read_plan", {})
                assert "Ship it" in read_back.content[0].text
                assert read_back.structured_content["objective"] == "Ship it"

        anyio.run(scenario)
    finally:
        proc.terminate()
        proc.wait(timeout=60)
        proc.stderr.close()


def test_serve_http_refuses_a_public_address_without_a_token():
    import subprocess

    env = {k: v for k, v in os.environ.items() if not k.startswith("HAVERSACK_")}
    done = subprocess.run(
        [sys.executable, "-m", "haversack", "serve", "--transport", "http", "--host", "0.0.0.0"],
        capture_output=True,
        text=True,
        env=env,
        timeout=60,
        check=False,
    )
    assert done.returncode != 0
    assert "without authentication" in done.stderr
    assert "HAVERSACK_MCP_TOKEN" in done.stderr


def _serve_http(*args):
    """``haversack serve -p vfs --transport http`` on a free port; (process, URL)."""
    import re
    import subprocess

    env = {k: v for k, v in os.environ.items() if not k.startswith("HAVERSACK_")}
    proc = subprocess.Popen(
        [
            *(sys.executable, "-m", "haversack", "serve", "-p", "vfs"),
            *("--transport", "http", "--port", "0", *args),
        ],
        stderr=subprocess.PIPE,
        env=env,
        text=True,
    )
    assert proc.stderr is not None
    return proc, re.search(r"at (http://\S+)", proc.stderr.readline()).group(1)


def _stop(proc):
    proc.terminate()
    proc.wait(timeout=60)
    proc.stderr.close()


def test_serve_http_memory_budget_refuses_a_write_while_the_other_client_is_connected():
    """Two SDK clients against --max-memory 1 (MiB). The official client holds a GET stream
    open, so its session is busy while connected and is never closed to make room: the
    second client's write past the budget fails, naming the option, and is rolled back;
    once the first client has left (DELETE), the same write succeeds."""
    from mcp import Client
    from mcp.client.streamable_http import streamable_http_client

    proc, url = _serve_http("--max-memory", "1")
    content = "a" * 614400
    try:

        async def scenario():
            async with Client(streamable_http_client(url)) as second:
                async with Client(streamable_http_client(url)) as first:
                    wrote = await first.call_tool("write_file", {"path": "a", "content": content})
                    assert not wrote.is_error, wrote.content[0].text
                    refused = await second.call_tool(
                        "write_file", {"path": "b", "content": content}
                    )
                    assert refused.is_error
                    assert "--max-memory" in refused.content[0].text
                    assert "rolled back" in refused.content[0].text
                    missing = await second.call_tool("read_file", {"path": "b"})
                    assert missing.is_error
                    kept = await first.call_tool("read_file", {"path": "a", "limit": 1})
                    assert not kept.is_error
                wrote = await second.call_tool("write_file", {"path": "b", "content": content})
                assert not wrote.is_error, wrote.content[0].text

        anyio.run(scenario)
    finally:
        _stop(proc)


def test_serve_http_default_memory_budget_holds_more_than_one_workspace():
    """A default-config server (1 GiB budget): two sessions write 2 MiB each and keep it."""
    from mcp import Client
    from mcp.client.streamable_http import streamable_http_client

    proc, url = _serve_http()
    try:

        async def scenario():
            async with (
                Client(streamable_http_client(url)) as first,
                Client(streamable_http_client(url)) as second,
            ):
                clients = (first, second, first, second)
                for i, client in enumerate(clients):
                    wrote = await client.call_tool(
                        "write_file", {"path": f"f{i}", "content": "x" * (1 << 20)}
                    )
                    assert not wrote.is_error, wrote.content[0].text
                for i, client in enumerate(clients):
                    kept = await client.call_tool("read_file", {"path": f"f{i}", "limit": 1})
                    assert not kept.is_error, kept.content[0].text

        anyio.run(scenario)
    finally:
        _stop(proc)


def test_http_settings_refuse_a_memory_budget_below_one_byte():
    from haversack.errors import HaversackError
    from haversack.server import HttpSettings

    with pytest.raises(HaversackError, match="max_memory_bytes"):
        HttpSettings(max_memory_bytes=0)


def test_serve_defer_lists_a_pack_and_announces_the_tools_a_load_adds():
    """``--defer vfs``: the client sees the one-line listing and ``load_pack``; loading
    sends ``notifications/tools/list_changed`` and the tools then list and work."""
    params = _params("planning")
    params.args += ["--defer", "vfs"]
    notices: list[object] = []

    async def on_message(message: object) -> None:
        notices.append(message)

    async def scenario():
        async with (
            stdio_client(params) as (read, write),
            ClientSession(read, write, message_handler=on_message) as client,
        ):
            init = await client.initialize()
            assert init.capabilities.tools is not None
            assert init.capabilities.tools.list_changed is True
            assert "- vfs: Workspace files; 7 tools" in (init.instructions or "")
            before = {tool.name for tool in (await client.list_tools()).tools}
            assert "load_pack" in before
            assert "write_file" not in before
            unknown = await client.call_tool("load_pack", {"pack": "nope"})
            assert unknown.is_error
            assert not notices

            loaded = await client.call_tool("load_pack", {"pack": "vfs"})

            assert not loaded.is_error, loaded.content[0].text
            assert "Workspace files" in loaded.content[0].text
            changed = [n for n in notices if type(n).__name__ == "ToolListChangedNotification"]
            assert len(changed) == 1
            after = {tool.name for tool in (await client.list_tools()).tools}
            assert before | {"ls", "read_file", "write_file", "edit_file"} <= after
            wrote = await client.call_tool("write_file", {"path": "a.txt", "content": "x\n"})
            assert not wrote.is_error, wrote.content[0].text
            again = await client.call_tool("load_pack", {"pack": "vfs"})
            assert again.content[0].text == "Pack 'vfs' is already loaded."
            assert (
                len([n for n in notices if type(n).__name__ == "ToolListChangedNotification"]) == 1
            )

    anyio.run(scenario)
