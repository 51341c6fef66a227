"""Approval over MCP elicitation: the official ``mcp`` client (``ClientSession`` with an
``elicitation_callback``) against the real server, over stdio and Streamable HTTP."""

from __future__ import annotations

import contextlib
import json
import os
import re
import subprocess
import sys
from collections.abc import AsyncIterator
from contextlib import asynccontextmanager
from pathlib import Path

import anyio
import mcp.types as types
import pytest
from mcp import ClientSession, StdioServerParameters
from mcp.client.stdio import stdio_client
from mcp.client.streamable_http import streamable_http_client
from mcp.shared._httpx_utils import create_mcp_http_client
from mcp.shared.exceptions import MCPError
from mcp_types._v2025_11_25 import PrimitiveSchemaDefinition
from pydantic import TypeAdapter

from ._clients import HANG_GUARD_S, User, http_client

SCRIPT = Path(__file__).with_name("notes_server.py")
TOKEN = "test-token-0123456789abcdef"

TRANSPORTS = ("stdio", "http")


def _env(tmp_path: Path, **extra: str) -> dict[str, str]:
    return {
        "NOTES_MARKER": str(tmp_path / "marker"),
        "NOTES_CLOSED": str(tmp_path / "closed"),
        **extra,
    }


@asynccontextmanager
async def connect(
    transport: str, tmp_path: Path, callback=None, **env: str
) -> AsyncIterator[ClientSession]:
    """An initialized client of the notes server; ``callback`` answers elicitations (none:
    the client does not declare the capability)."""
    extra = _env(tmp_path, **env)
    if transport == "stdio":
        params = StdioServerParameters(command=sys.executable, args=[str(SCRIPT)], env=extra)
        async with (
            stdio_client(params) as (read, write),
            ClientSession(read, write, elicitation_callback=callback) as client,
        ):
            await client.initialize()
            yield client
        return
    env = dict(os.environ, NOTES_TRANSPORT="http", HAVERSACK_MCP_TOKEN=TOKEN, **extra)
    async with http_client([str(SCRIPT)], env, TOKEN, callback) as client:
        yield client


def accept(**content) -> types.ElicitResult:
    return types.ElicitResult(action="accept", content=content)


def _text(result: types.CallToolResult) -> str:
    return result.content[0].text


async def _notes(client: ClientSession) -> list[str]:
    return json.loads(_text(await client.call_tool("notes", {})))


@pytest.fixture(params=TRANSPORTS)
def transport(request):
    return request.param


def test_every_answer_of_the_user(transport, tmp_path):
    """Approved runs the call with the arguments shown; every other answer refuses it,
    runs nothing and tells the model what happened and how to go on."""
    arguments = {"text": "caf\u00e9 \u202eevil", "z": 1}  # bidi override: shown escaped
    user = User(
        accept(approve=True),
        types.ElicitResult(action="decline"),
        types.ElicitResult(action="cancel"),
        accept(approve=False, reason="not on a\nFriday"),
        accept(approve=False),
        accept(reason="no boolean"),
    )

    async def scenario():
        async with connect(transport, tmp_path, user) as client:
            approved = await client.call_tool("erase", {"text": arguments["text"]})
            assert not approved.is_error, _text(approved)
            assert approved.structured_content == {"notes": 1}
            # What ran is what was shown: the tool wrote exactly the argument's text.
            assert await _notes(client) == [arguments["text"]]
            asked = user.asked[0]
            assert asked.mode == "form"
            assert "'erase'" in asked.message
            assert "'erase' matches 'erase'" in asked.message  # the policy's reason
            assert '"text": "caf\u00e9 \\u202eevil"' in asked.message
            assert "\u202e" not in asked.message

            refusals = []
            for _ in range(5):
                result = await client.call_tool("erase", {"text": "gone"})
                assert result.is_error
                assert result.structured_content is None
                refusals.append(_text(result))
            assert await _notes(client) == [arguments["text"]]  # none of them ran

        declined, dismissed, reasoned, bare, unclear = refusals
        assert declined.startswith("The call of 'erase' was not approved: the user declined")
        assert "Do not retry it as it is" in declined
        assert "dismissed the approval request without deciding" in dismissed
        assert "the user refused it: not on a Friday." in reasoned
        assert "take their reason into account" in reasoned
        assert "the user refused it. Do not retry it as it is" in bare
        assert "did not say whether to run it" in unclear
        assert len(user.asked) == 6

    anyio.run(scenario)


def test_the_requested_schema_is_a_flat_object_of_primitive_fields(tmp_path):
    user = User(accept(approve=True))

    async def scenario():
        async with connect("stdio", tmp_path, user) as client:
            await client.call_tool("erase", {"text": "x"})

    anyio.run(scenario)
    schema = user.asked[0].requested_schema
    assert schema["type"] == "object"
    assert schema["required"] == ["approve"]
    assert schema["properties"]["approve"]["type"] == "boolean"
    assert schema["properties"]["reason"]["type"] == "string"
    primitive = TypeAdapter(PrimitiveSchemaDefinition)
    for prop in schema["properties"].values():
        primitive.validate_python(prop)  # the SDK's own reading of the specification


def test_without_the_capability_a_held_call_is_refused_with_guidance(transport, tmp_path):
    async def scenario():
        async with connect(transport, tmp_path) as client:
            result = await client.call_tool("erase", {"text": "x"})
            assert result.is_error
            assert "erase needs a person's approval" in _text(result)
            assert "did not declare the elicitation capability" in _text(result)
            assert "Do not retry the call" in _text(result)
            assert await _notes(client) == []

    anyio.run(scenario)


def test_no_answer_within_the_timeout_is_a_refusal_and_the_request_is_cancelled(
    transport, tmp_path
):
    abandoned = anyio.Event()

    async def never(context, params):
        try:
            await anyio.sleep_forever()
        finally:
            abandoned.set()  # the server's notifications/cancelled reached the callback

    async def scenario():
        async with connect(transport, tmp_path, never, NOTES_APPROVAL_S="0.3") as client:
            result = await client.call_tool("erase", {"text": "x"})
            assert result.is_error
            assert "no one answered the approval request within 0.3 s" in _text(result)
            with anyio.fail_after(HANG_GUARD_S):
                await abandoned.wait()
            assert await _notes(client) == []

    anyio.run(scenario)


def test_other_requests_are_served_while_a_call_awaits_approval(transport, tmp_path):
    asked = anyio.Event()
    answer = anyio.Event()

    async def slow_user(context, params):
        asked.set()
        await answer.wait()
        return accept(approve=True)

    async def scenario():
        async with connect(transport, tmp_path, slow_user) as client:
            await client.call_tool("add", {"text": "first"})
            results = {}
            async with anyio.create_task_group() as tg:

                async def held() -> None:
                    results["erase"] = await client.call_tool("erase", {"text": "second"})

                tg.start_soon(held)
                with anyio.fail_after(HANG_GUARD_S):
                    await asked.wait()
                    # The same connection answers while the user has not decided yet.
                    assert await _notes(client) == ["first"]
                    added = await client.call_tool("add", {"text": "meanwhile"})
                    assert added.structured_content == {"notes": 2}
                    names = {t.name for t in (await client.list_tools()).tools}
                    assert "erase" in names
                answer.set()
            assert not results["erase"].is_error
            assert await _notes(client) == ["first", "meanwhile", "second"]

    anyio.run(scenario)


def test_cancelling_a_call_that_awaits_approval(transport, tmp_path):
    asked = anyio.Event()
    abandoned = anyio.Event()

    calls = []

    async def user(context, params):
        calls.append(params)
        if len(calls) > 1:
            return accept(approve=True)
        asked.set()
        try:
            await anyio.sleep_forever()
        finally:
            abandoned.set()

    async def scenario():
        async with connect(transport, tmp_path, user) as client:
            async with anyio.create_task_group() as tg:

                async def held() -> None:
                    await client.call_tool("erase", {"text": "never"})

                tg.start_soon(held)
                with anyio.fail_after(HANG_GUARD_S):
                    await asked.wait()
                tg.cancel_scope.cancel()  # the client sends notifications/cancelled
            with anyio.fail_after(HANG_GUARD_S):
                await abandoned.wait()  # and the server withdrew its elicitation
            assert await _notes(client) == []
            # The session goes on: the next held call is asked about afresh and runs.
            again = await client.call_tool("erase", {"text": "later"})
            assert not again.is_error, _text(again)
            assert await _notes(client) == ["later"]
            assert len(calls) == 2

    anyio.run(scenario)


def test_a_client_error_instead_of_an_answer_is_a_refusal(tmp_path):
    user = User(types.ErrorData(code=types.INVALID_REQUEST, message="no user here"))

    async def scenario():
        async with connect("stdio", tmp_path, user) as client:
            result = await client.call_tool("erase", {"text": "x"})
            assert result.is_error
            assert "the client could not ask the user for approval (no user here)" in _text(result)
            assert await _notes(client) == []

    anyio.run(scenario)


def test_an_http_client_that_goes_away_while_asked_leaves_nothing_behind(tmp_path):
    """A client that goes away while its user is asked (it closes its streams and deletes
    the MCP session, without cancelling the call) leaves nothing running: the session's
    resources are closed and the server serves the next client."""
    proc = subprocess.Popen(
        [sys.executable, str(SCRIPT)],
        stderr=subprocess.PIPE,
        env=dict(os.environ, NOTES_TRANSPORT="http", HAVERSACK_MCP_TOKEN=TOKEN, **_env(tmp_path)),
        text=True,
    )
    closed = tmp_path / "closed"
    asked = anyio.Event()

    async def user(context, params):
        asked.set()
        await anyio.sleep_forever()

    async def held_call(client: ClientSession) -> None:
        with contextlib.suppress(MCPError):  # the connection closes under it
            await client.call_tool("erase", {"text": "never"})

    async def session(url: str, callback) -> list[str]:
        # The task group outlives the client: leaving the client's contexts with the call
        # still awaiting is the client going away (no notifications/cancelled).
        async with (
            anyio.create_task_group() as tg,
            create_mcp_http_client(headers={"Authorization": f"Bearer {TOKEN}"}) as http,
            streamable_http_client(url, http_client=http) as (read, write),
            ClientSession(read, write, elicitation_callback=callback) as client,
        ):
            await client.initialize()
            if callback is None:
                return await _notes(client)
            tg.start_soon(held_call, client)
            with anyio.fail_after(HANG_GUARD_S):
                await asked.wait()
        return []

    async def scenario(url: str) -> None:
        await session(url, user)  # leaving the context ends the MCP session
        with anyio.fail_after(HANG_GUARD_S):
            while not closed.exists():
                await anyio.sleep(0.05)
        assert await session(url, None) == []  # a fresh session; nothing ran

    try:
        assert proc.stderr is not None
        match = re.search(r"at (http://\S+)", proc.stderr.readline())
        assert match
        anyio.run(scenario, match.group(1))
    finally:
        proc.terminate()
        proc.wait(timeout=HANG_GUARD_S)
        if proc.stderr is not None:
            proc.stderr.close()
    assert closed.read_text() == "closed\n" * 2
