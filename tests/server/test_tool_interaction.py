"""Elicitation and progress from inside a tool handler (``ToolContext.ask``/``aask``/
``report_progress``) through the real server, with the official ``mcp`` client over stdio
and Streamable HTTP."""

from __future__ import annotations

import json
import os
import sys
import time
from collections.abc import AsyncIterator
from contextlib import asynccontextmanager
from pathlib import Path

import anyio
import mcp.types as types
import pytest
from mcp import ClientSession, StdioServerParameters
from mcp.client.stdio import stdio_client

from haversack.server._channel import PROGRESS_BURST, PROGRESS_PER_S

from ._clients import User, http_client

SCRIPT = Path(__file__).with_name("asking_server.py")
TOKEN = "test-token-0123456789abcdef"


@asynccontextmanager
async def connect(transport: str, callback=None) -> AsyncIterator[ClientSession]:
    if transport == "stdio":
        params = StdioServerParameters(command=sys.executable, args=[str(SCRIPT)], env={})
        async with (
            stdio_client(params) as (read, write),
            ClientSession(read, write, elicitation_callback=callback) as client,
        ):
            await client.initialize()
            yield client
        return
    env = dict(os.environ, NOTES_TRANSPORT="http", HAVERSACK_MCP_TOKEN=TOKEN)
    async with http_client([str(SCRIPT)], env, TOKEN, callback) as client:
        yield client


@pytest.fixture(params=("stdio", "http"))
def transport(request):
    return request.param


def _text(result: types.CallToolResult) -> str:
    return result.content[0].text


@pytest.mark.anyio
async def test_a_sync_handler_asks_and_gets_a_typed_answer(transport):
    user = User(types.ElicitResult(action="accept", content={"value": True}))
    async with connect(transport, user) as client:
        result = await client.call_tool("confirm", {})
    assert not result.is_error, _text(result)
    assert _text(result) == "deleted"
    (asked,) = user.asked
    assert asked.message == "Delete the file notes.txt?"
    assert asked.requested_schema["properties"]["value"]["type"] == "boolean"


@pytest.mark.anyio
@pytest.mark.parametrize("action", ["decline", "cancel"])
async def test_declined_and_cancelled_questions_reach_the_handler(action):
    user = User(types.ElicitResult(action=action))
    async with connect("stdio", user) as client:
        result = await client.call_tool("confirm", {})
    assert _text(result) == f"kept ({action})"


@pytest.mark.anyio
async def test_an_async_handler_asks_a_form(transport):
    answer = {"name": "Ada", "age": 36, "colour": "green"}
    user = User(types.ElicitResult(action="accept", content=answer))
    async with connect(transport, user) as client:
        result = await client.call_tool("survey", {})
    assert json.loads(_text(result)) == {"action": "accept", **answer}
    assert user.asked[0].requested_schema["properties"]["colour"]["enum"] == ["red", "green"]


@pytest.mark.anyio
async def test_a_client_without_elicitation_gets_a_clear_result_not_a_hang():
    async with connect("stdio") as client:
        with anyio.fail_after(60):
            result = await client.call_tool("confirm", {})
            caught = await client.call_tool("caught", {})
    assert result.is_error
    assert "did not declare the elicitation capability" in _text(result)
    assert "Do not retry it as it is" in _text(result)
    assert _text(caught).startswith("went on without: ")


@pytest.mark.anyio
async def test_an_answer_that_does_not_fit_the_form_is_an_error():
    user = User(types.ElicitResult(action="accept", content={"value": "yes please"}))
    async with connect("stdio", user) as client:
        result = await client.call_tool("confirm", {})
    assert result.is_error
    assert "does not fit the question's form" in _text(result)


@pytest.mark.anyio
async def test_an_unanswered_question_times_out_with_a_clear_error():
    async def never(context, params):
        await anyio.sleep_forever()

    async with connect("stdio", never) as client:
        result = await client.call_tool("confirm", {"timeout_s": 0.3})
    assert result.is_error
    assert "no one answered within 0.3 s" in _text(result)


@pytest.mark.anyio
async def test_the_blocking_ask_on_the_event_loop_is_refused_not_deadlocked():
    user = User(types.ElicitResult(action="accept", content={"value": True}))
    async with connect("stdio", user) as client:
        with anyio.fail_after(60):
            result = await client.call_tool("ask_blocking", {})
    assert result.is_error
    assert "await context.aask" in _text(result)
    assert user.asked == []


@pytest.mark.anyio
@pytest.mark.parametrize("tool", ["steps", "asteps"])
async def test_handler_progress_reaches_a_client_that_asked(transport, tool):
    seen: list[tuple[float, float | None, str | None]] = []

    async def on_progress(progress, total, message):
        seen.append((progress, total, message))

    async with connect(transport) as client:
        result = await client.call_tool(tool, {"steps": 3}, progress_callback=on_progress)
        quiet = await client.call_tool(tool, {"steps": 3})  # no token: nothing sent, no error
    assert _text(result) == "stepped"
    assert _text(quiet) == "stepped"
    assert seen == [(1, 3, "step 1"), (2, 3, "step 2"), (3, 3, "step 3")]


@pytest.mark.anyio
async def test_a_progress_flood_is_bounded_and_ends_on_the_newest_value():
    seen: list[float] = []

    async def on_progress(progress, total, message):
        seen.append(progress)

    async with connect("stdio") as client:
        started = time.monotonic()
        result = await client.call_tool("steps", {"steps": 200_000}, progress_callback=on_progress)
        took = time.monotonic() - started
    assert _text(result) == "stepped"
    assert seen[-1] == 200_000  # the newest always arrives
    assert seen == sorted(set(seen))  # rising, no repeats
    # A burst, then at most PROGRESS_PER_S: a bound that grows with the time taken, so a
    # slow machine cannot fail it.
    assert len(seen) <= PROGRESS_BURST + PROGRESS_PER_S * took + 1, (len(seen), took)
    assert len(seen) < 20_000
