"""When configured MCP servers start: once per process for ``call`` and ``check`` (the
session started to list the tools is the one the call uses), without the slow-pack notice
for a normal start, and a listing session nobody claims is stopped."""

from __future__ import annotations

import os
import subprocess
import sys
import time
from pathlib import Path

from haversack import compose

from .test_hostile_servers import PLAIN, hostile

HAVERSACK = [sys.executable, "-m", "haversack"]


def _config(tmp_path: Path, **plan) -> Path:
    """A haversack.toml with one hostile server ``s`` that counts its starts in ``starts``."""
    command = hostile(tmp_path, tools=[PLAIN], starts=str(tmp_path / "starts"), **plan)
    config = tmp_path / "haversack.toml"
    quoted = ", ".join(f'"{part}"' for part in command)
    config.write_text(f"[packs.mcp.servers.s]\ncommand = [{quoted}]\n")
    return config


def _starts(tmp_path: Path) -> list[int]:
    path = tmp_path / "starts"
    return [int(line) for line in path.read_text().split()] if path.exists() else []


def _run(
    tmp_path: Path, *args: str, env: dict[str, str] | None = None
) -> subprocess.CompletedProcess:
    base = {k: v for k, v in os.environ.items() if not k.startswith("HAVERSACK_")}
    return subprocess.run(
        [*HAVERSACK, *args, "-p", "mcp", "--config", str(tmp_path / "haversack.toml")],
        capture_output=True,
        text=True,
        cwd=tmp_path,
        env={**base, **(env or {})},
        timeout=300,
        check=False,
    )


def test_call_starts_each_server_once(tmp_path):
    _config(tmp_path)
    done = _run(tmp_path, "call", "s_ok")
    assert done.returncode == 0, done.stderr
    # Before, the server was started to list its tools, stopped, and started again to call.
    assert len(_starts(tmp_path)) == 1


def test_check_starts_each_server_once(tmp_path):
    _config(tmp_path)
    done = _run(tmp_path, "check")
    assert done.returncode == 0, done.stdout + done.stderr
    assert len(_starts(tmp_path)) == 1


def test_a_normal_start_prints_no_slow_pack_notice(tmp_path):
    # A server taking 8 s to start, under a notice due after 4 s for a hanging hook (the
    # hooks' other work, reading the options, takes well under that).
    _config(tmp_path, start_delay=8)
    done = _run(tmp_path, "call", "s_ok", env={"HAVERSACK_IMPORT_NOTICE": "4"})
    assert done.returncode == 0, done.stderr
    assert "still" not in done.stderr, done.stderr
    assert len(_starts(tmp_path)) == 1


def _alive(pid: int) -> bool:
    try:
        status = Path(f"/proc/{pid}/status").read_text()
    except OSError:
        return False
    return "State:\tZ" not in status


def test_a_listing_session_nobody_claims_is_stopped(tmp_path, monkeypatch):
    from haversack_mcp import _connection

    monkeypatch.setattr(_connection, "PARK_S", 0.2)
    command = hostile(tmp_path, tools=[PLAIN], starts=str(tmp_path / "starts"))
    compose(
        ns="t", key="k", packs=["mcp"], config={"mcp": {"servers": {"s": {"command": command}}}}
    ).render()
    [pid] = _starts(tmp_path)
    for _ in range(1500):
        if not _alive(pid):
            break
        time.sleep(0.02)
    assert not _alive(pid)


def test_a_changed_server_is_not_taken_over(tmp_path):
    # The listing session is kept by the server's whole configuration: connections for the
    # same name with another environment start a server of their own.
    import asyncio

    from haversack_mcp import McpConnections, McpServer

    command = hostile(tmp_path, tools=[PLAIN], starts=str(tmp_path / "starts"))
    config = {"mcp": {"servers": {"s": {"command": command, "env": {"MARK": "a"}}}}}
    compose(ns="t", key="k", packs=["mcp"], config=config).render()
    [listed] = _starts(tmp_path)
    connections = McpConnections({"s": McpServer(command=tuple(command), env={"MARK": "b"})})

    async def call() -> bytes:
        result = await connections.get("s").call("ok", {})
        assert not result.is_error
        [_, started] = _starts(tmp_path)
        return Path(f"/proc/{started}/environ").read_bytes()

    try:
        assert b"MARK=b" in asyncio.run(call())
    finally:
        connections.close()
    # The same configuration takes the listing session over.
    same = McpConnections({"s": McpServer(command=tuple(command), env={"MARK": "a"})})
    try:
        assert not asyncio.run(same.get("s").call("ok", {})).is_error
        assert len(_starts(tmp_path)) == 2
    finally:
        same.close()
    assert not _alive(listed)


def test_a_server_that_changed_its_tools_is_listed_again_before_a_call(tmp_path):
    # The listing is kept for the process (later sessions of serve compose from it): a
    # server started after it is listed again, and a tool it changed is not called.
    import json

    from haversack import Session, ToolExecutor
    from haversack_mcp._connection import _close_parked

    command = hostile(tmp_path, tools=[PLAIN, {**PLAIN, "name": "gone"}])
    rendered = compose(
        ns="t", key="k", packs=["mcp"], config={"mcp": {"servers": {"s": {"command": command}}}}
    ).render()
    _close_parked()  # as when the first session has ended: the next one starts the server
    strict = {"type": "object", "properties": {"x": {"type": "string"}}, "required": ["x"]}
    Path(command[-1]).write_text(json.dumps({"tools": [{**PLAIN, "inputSchema": strict}]}))
    with ToolExecutor(rendered, session=Session()) as executor:
        for tool in ("s_ok", "s_gone"):
            outcome = executor.execute(tool, {})
            assert not outcome.success
            assert "changed its tool" in outcome.message
            assert "start Haversack again" in outcome.message
