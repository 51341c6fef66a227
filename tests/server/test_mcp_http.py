"""``haversack serve`` over Streamable HTTP, driven by the official ``mcp`` client: bearer
authentication, the Origin check, one Haversack session per MCP session, cancellation,
structured results and malformed bodies."""

from __future__ import annotations

import os
import re
import subprocess
import sys
from pathlib import Path

import anyio
import httpx2
import pytest
from mcp import ClientSession
from mcp.client.streamable_http import streamable_http_client
from mcp.shared._httpx_utils import create_mcp_http_client

SCRIPT = Path(__file__).with_name("notes_server.py")
TOKEN = "test-token-0123456789abcdef"
HANG_GUARD_S = 60


@pytest.fixture
def server(tmp_path):
    env = dict(
        os.environ,
        NOTES_TRANSPORT="http",
        HAVERSACK_MCP_TOKEN=TOKEN,
        NOTES_MARKER=str(tmp_path / "marker"),
        NOTES_CLOSED=str(tmp_path / "closed"),
        NOTES_PROGRESS_S="0.02",
    )
    proc = subprocess.Popen(
        [sys.executable, str(SCRIPT)], stderr=subprocess.PIPE, env=env, text=True
    )
    assert proc.stderr is not None
    line = proc.stderr.readline()
    match = re.search(r"at (http://\S+)", line)
    assert match, f"no URL in the server's first line: {line!r}"
    yield match.group(1), proc
    proc.terminate()
    proc.wait(timeout=HANG_GUARD_S)
    proc.stderr.close()


def _client(token: str | None = TOKEN, **headers: str) -> httpx2.AsyncClient:
    if token is not None:
        headers["Authorization"] = f"Bearer {token}"
    return create_mcp_http_client(headers=headers)


HEADERS = {"content-type": "application/json", "accept": "application/json, text/event-stream"}
INIT = {
    "jsonrpc": "2.0",
    "id": 1,
    "method": "initialize",
    "params": {
        "protocolVersion": "2025-11-25",
        "capabilities": {},
        "clientInfo": {"name": "t", "version": "0"},
    },
}


def test_requests_without_the_token_or_from_a_foreign_origin_are_refused(server):
    server, _ = server
    with httpx2.Client() as http:
        missing = http.post(server, json=INIT, headers=HEADERS)
        assert missing.status_code == 401
        assert "HAVERSACK_MCP_TOKEN" in missing.text
        assert missing.headers["www-authenticate"].startswith("Bearer")
        wrong = http.post(server, json=INIT, headers={**HEADERS, "authorization": "Bearer nope"})
        assert wrong.status_code == 401

        auth = {**HEADERS, "authorization": f"Bearer {TOKEN}"}
        # A DNS-rebinding page carries its own origin: refused even with the token.
        foreign = http.post(server, json=INIT, headers={**auth, "origin": "http://evil.example"})
        assert foreign.status_code == 403
        assert "--allow-origin" in foreign.text
        rebound_host = http.post(server, json=INIT, headers={**auth, "host": "evil.example"})
        assert rebound_host.status_code == 421

        for origin in ("https://app.example", "http://localhost:3000"):
            allowed = http.post(server, json=INIT, headers={**auth, "origin": origin})
            assert allowed.status_code == 200, allowed.text


def test_malformed_bodies_get_json_rpc_errors(server):
    server, _ = server
    auth = {**HEADERS, "authorization": f"Bearer {TOKEN}"}
    with httpx2.Client() as http:
        batch = http.post(server, content=b"[1, 2]", headers=auth)
        assert batch.status_code == 400
        assert batch.json()["error"]["code"] == -32600
        assert batch.json()["id"] is None
        broken = http.post(server, content=b'{"jsonrpc": ', headers=auth)
        assert broken.json()["error"]["code"] == -32700
        deep = http.post(server, content=b"[" * 50_000 + b"]" * 50_000, headers=auth)
        assert deep.json()["error"]["code"] == -32700
        big = http.post(server, content=b" " * (5 * 1024 * 1024), headers=auth)
        assert big.status_code == 413


def test_each_mcp_session_has_its_own_haversack_session(server, tmp_path):
    server, proc = server

    async def scenario():
        async with (
            _client() as http_a,
            streamable_http_client(server, http_client=http_a) as (read_a, write_a),
            ClientSession(read_a, write_a) as a,
            _client() as http_b,
            streamable_http_client(server, http_client=http_b) as (read_b, write_b),
            ClientSession(read_b, write_b) as b,
        ):
            await a.initialize()
            await b.initialize()
            tools = {tool.name: tool for tool in (await a.list_tools()).tools}
            assert tools["add"].title == "Add"
            assert tools["add"].output_schema["required"] == ["notes"]

            added = await a.call_tool("add", {"text": "only in a"})
            assert added.structured_content == {"notes": 1}
            assert (await b.call_tool("count", {})).structured_content == {"notes": 0}
            assert (await a.call_tool("count", {})).structured_content == {"notes": 1}
            # Both sessions opened their resources; none is closed while they are open.
            assert not (tmp_path / "closed").exists()

    anyio.run(scenario)
    # Stopping the server closes every session's resources (here both were deleted by
    # their clients already, or are closed at shutdown: either way exactly once each).
    proc.terminate()
    proc.wait(timeout=HANG_GUARD_S)
    assert (tmp_path / "closed").read_text() == "closed\n" * 2


def test_a_cancelled_call_over_http_is_rolled_back_and_the_session_goes_on(server, tmp_path):
    server, _ = server

    async def scenario():
        async with (
            _client() as http,
            streamable_http_client(server, http_client=http) as (read, write),
            ClientSession(read, write) as client,
        ):
            await client.initialize()
            await client.call_tool("add", {"text": "kept"})
            running = anyio.Event()

            async def on_progress(progress, total, message):
                running.set()

            async with anyio.create_task_group() as tg:

                async def call() -> None:
                    await client.call_tool("slow", {}, progress_callback=on_progress)

                tg.start_soon(call)
                await running.wait()
                tg.cancel_scope.cancel()

            counted = await client.call_tool("count", {})
            assert counted.structured_content == {"notes": 1}

    anyio.run(scenario)
    assert (tmp_path / "marker").read_text() == "slow stopped"
