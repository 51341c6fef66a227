"""``haversack serve --ask GLOB`` / ``--ask-writes``: approval over MCP elicitation, with the
real installed planning pack, driven by the official MCP client over stdio and HTTP."""

from __future__ import annotations

import os
import subprocess
import sys
from collections.abc import AsyncIterator
from contextlib import asynccontextmanager

import anyio
import mcp.types as types
import pytest
from mcp import ClientSession, StdioServerParameters
from mcp.client.stdio import stdio_client

from ._clients import HANG_GUARD_S, User, http_client

TOKEN = "ask-token-0123456789abcdef"


def _env() -> dict[str, str]:
    return {k: v for k, v in os.environ.items() if not k.startswith("HAVERSACK_")}


def _serve_args(*options: str) -> list[str]:
    return ["-m", "haversack", "serve", "-p", "planning", *options]


@asynccontextmanager
async def connect(transport: str, *options: str, callback=None) -> AsyncIterator[ClientSession]:
    """A client of ``haversack serve -p planning OPTIONS``; ``callback`` answers
    elicitations (none: the client does not declare the capability)."""
    if transport == "stdio":
        params = StdioServerParameters(
            command=sys.executable, args=_serve_args(*options), env=_env()
        )
        async with (
            stdio_client(params) as (read, write),
            ClientSession(read, write, elicitation_callback=callback) as client,
        ):
            await client.initialize()
            yield client
        return
    argv = _serve_args(*options, "--transport", "http", "--port", "0")
    env = dict(_env(), HAVERSACK_MCP_TOKEN=TOKEN)
    async with http_client(argv, env, TOKEN, callback) as client:
        yield client


def _text(result: types.CallToolResult) -> str:
    return result.content[0].text


PLAN = {"objective": "Ship it", "steps": ["Write", "Test"]}


@pytest.mark.parametrize("transport", ["stdio", "http"])
def test_ask_puts_matching_calls_to_the_user_and_every_answer_decides(transport):
    user = User(
        types.ElicitResult(action="decline"),
        types.ElicitResult(action="cancel"),
        types.ElicitResult(action="accept", content={"approve": True}),
    )

    async def scenario():
        async with connect(transport, "--ask", "planning_setup_*", callback=user) as client:
            declined = await client.call_tool("planning_setup_plan", PLAN)
            assert declined.is_error
            assert "the user declined it" in _text(declined)
            dismissed = await client.call_tool("planning_setup_plan", PLAN)
            assert dismissed.is_error
            assert "dismissed the approval request" in _text(dismissed)
            # Neither refusal ran the tool: there is still no plan to read.
            empty = await client.call_tool("planning_read_plan", {})
            assert "Ship it" not in _text(empty)

            approved = await client.call_tool("planning_setup_plan", PLAN)
            assert not approved.is_error, _text(approved)
            read_back = await client.call_tool("planning_read_plan", {})
            assert "Ship it" in _text(read_back)

    anyio.run(scenario)
    # Only the matching tool asked; planning_read_plan ran without asking.
    assert len(user.asked) == 3
    assert all("'planning_setup_plan'" in asked.message for asked in user.asked)
    assert "matches 'planning_setup_*'" in user.asked[0].message
    assert '"objective": "Ship it"' in user.asked[0].message


def test_ask_writes_asks_for_every_tool_not_read_only():
    user = User(types.ElicitResult(action="accept", content={"approve": False, "reason": "no"}))

    async def scenario():
        async with connect("stdio", "--ask-writes", callback=user) as client:
            refused = await client.call_tool("planning_setup_plan", PLAN)
            assert refused.is_error
            assert "the user refused it: no." in _text(refused)
            # The refused call did not run; the read-only tool ran without asking.
            read = await client.call_tool("planning_read_plan", {})
            assert "Ship it" not in _text(read)

    anyio.run(scenario)
    assert len(user.asked) == 1
    assert "'planning_setup_plan' is not read-only" in user.asked[0].message


@pytest.mark.parametrize("transport", ["stdio", "http"])
def test_a_client_without_elicitation_gets_a_refusal_not_a_hang(transport):
    async def scenario():
        async with connect(transport, "--ask", "planning_setup_plan") as client:
            with anyio.fail_after(HANG_GUARD_S):
                refused = await client.call_tool("planning_setup_plan", PLAN)
            assert refused.is_error
            assert "did not declare the elicitation capability" in _text(refused)
            assert "Do not retry the call" in _text(refused)
            read_back = await client.call_tool("planning_read_plan", {})
            assert "Ship it" not in _text(read_back)

    anyio.run(scenario)


def test_without_ask_nothing_is_held():
    async def scenario():
        async with connect("stdio") as client:
            made = await client.call_tool("planning_setup_plan", PLAN)
            assert not made.is_error, _text(made)

    anyio.run(scenario)


@pytest.mark.parametrize("transport", ["stdio", "http"])
def test_a_pattern_matching_no_tool_stops_the_server_at_start_up(transport):
    extra = ["--transport", "http", "--port", "0"] if transport == "http" else []
    done = subprocess.run(
        [sys.executable, *_serve_args("--ask", "planning_*", "--ask", "plnning_*", *extra)],
        capture_output=True,
        text=True,
        env=dict(_env(), HAVERSACK_MCP_TOKEN=TOKEN),
        stdin=subprocess.DEVNULL,
        timeout=HANG_GUARD_S,
        check=False,
    )
    assert done.returncode == 2, done.stderr
    assert "'plnning_*', which matches none of the tools" in done.stderr
    assert "planning_setup_plan" in done.stderr  # the tools it could have meant
    assert "at http://" not in done.stderr  # it never listened
