"""What the server tests share: an official MCP client of a server started over HTTP, and a
scripted user answering its elicitations."""

from __future__ import annotations

import re
import subprocess
import sys
from collections.abc import AsyncIterator
from contextlib import asynccontextmanager
from typing import Any

import anyio
from mcp import ClientSession
from mcp.client.streamable_http import streamable_http_client
from mcp.shared._httpx_utils import create_mcp_http_client

HANG_GUARD_S = 60  # only bounds a broken run; nothing here is timed


@asynccontextmanager
async def http_client(
    argv: list[str], env: dict[str, str], token: str, callback: Any = None
) -> AsyncIterator[ClientSession]:
    """An initialized client of ``python ARGV`` serving Streamable HTTP on the URL its first
    stderr line names; ``callback`` answers elicitations (none: no such capability)."""
    proc = subprocess.Popen([sys.executable, *argv], stderr=subprocess.PIPE, env=env, text=True)
    try:
        assert proc.stderr is not None
        line = await anyio.to_thread.run_sync(proc.stderr.readline)
        match = re.search(r"at (http://\S+)", line)
        assert match, f"no URL in the server's first line: {line!r}"
        async with (
            create_mcp_http_client(headers={"Authorization": f"Bearer {token}"}) as http,
            streamable_http_client(match.group(1), http_client=http) as (read, write),
            ClientSession(read, write, elicitation_callback=callback) as client,
        ):
            await client.initialize()
            yield client
    finally:
        proc.terminate()
        proc.wait(timeout=HANG_GUARD_S)
        if proc.stderr is not None:
            proc.stderr.close()


class User:
    """An elicitation callback answering from a script; records what it was asked."""

    def __init__(self, *answers: Any) -> None:
        self.answers = list(answers)
        self.asked: list[Any] = []

    async def __call__(self, context: Any, params: Any) -> Any:
        self.asked.append(params)
        return self.answers.pop(0)
