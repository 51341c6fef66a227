"""The stdio server at the JSON-RPC level: malformed frames, cancellation, disconnects,
progress, structured results; raw frames where the official client hides the wire, the
official ``mcp`` client otherwise."""

from __future__ import annotations

import json
import os
import queue
import subprocess
import sys
import threading
from pathlib import Path

import anyio
import pytest
from mcp import ClientSession, StdioServerParameters
from mcp.client.stdio import stdio_client

SCRIPT = Path(__file__).with_name("notes_server.py")
HANG_GUARD_S = 60  # only bounds a broken run; nothing here is timed


class RawServer:
    """The notes server as a subprocess spoken to in raw JSON-RPC lines."""

    def __init__(self, tmp_path: Path) -> None:
        self.marker = tmp_path / "marker"
        self.closed = tmp_path / "closed"
        env = dict(
            os.environ,
            NOTES_MARKER=str(self.marker),
            NOTES_CLOSED=str(self.closed),
            NOTES_PROGRESS_S="0.02",
        )
        self.proc = subprocess.Popen(
            [sys.executable, str(SCRIPT)],
            stdin=subprocess.PIPE,
            stdout=subprocess.PIPE,
            stderr=subprocess.DEVNULL,
            env=env,
        )
        self.lines: queue.Queue[bytes] = queue.Queue()
        threading.Thread(target=self._pump, daemon=True).start()

    def _pump(self) -> None:
        assert self.proc.stdout is not None
        try:
            for line in self.proc.stdout:
                self.lines.put(line)
        except ValueError:  # closed by the fixture's teardown
            pass
        self.lines.put(b"")

    def send_raw(self, data: bytes) -> None:
        assert self.proc.stdin is not None
        self.proc.stdin.write(data + b"\n")
        self.proc.stdin.flush()

    def send(self, message: dict) -> None:
        self.send_raw(json.dumps(message).encode())

    def receive(self) -> dict:
        line = self.lines.get(timeout=HANG_GUARD_S)
        assert line, "the server closed its output"
        return json.loads(line)

    def until(self, predicate) -> tuple[dict, list[dict]]:
        """Read messages until one matches; return it and those before it."""
        seen: list[dict] = []
        while True:
            message = self.receive()
            if predicate(message):
                return message, seen
            seen.append(message)

    def initialize(self, capabilities: dict | None = None) -> None:
        self.send(
            {
                "jsonrpc": "2.0",
                "id": "init",
                "method": "initialize",
                "params": {
                    "protocolVersion": "2025-11-25",
                    "capabilities": capabilities or {},
                    "clientInfo": {"name": "raw", "version": "0"},
                },
            }
        )
        reply = self.receive()
        assert reply["id"] == "init"
        assert "result" in reply
        self.send({"jsonrpc": "2.0", "method": "notifications/initialized"})

    def call(self, request_id, name: str, arguments: dict | None = None, progress=None) -> None:
        params: dict = {"name": name, "arguments": arguments or {}}
        if progress is not None:
            params["_meta"] = {"progressToken": progress}
        self.send({"jsonrpc": "2.0", "id": request_id, "method": "tools/call", "params": params})

    def close(self) -> int:
        assert self.proc.stdin is not None
        self.proc.stdin.close()
        return self.proc.wait(timeout=HANG_GUARD_S)


@pytest.fixture
def raw(tmp_path):
    server = RawServer(tmp_path)
    yield server
    if server.proc.poll() is None:
        server.proc.kill()
        server.proc.wait()
    for pipe in (server.proc.stdin, server.proc.stdout):
        if pipe is not None and not pipe.closed:
            pipe.close()


def _is_response(request_id):
    return lambda m: m.get("id") == request_id and ("result" in m or "error" in m)


def test_malformed_frames_get_json_rpc_errors_and_the_connection_survives(raw):
    raw.send_raw(b'{"jsonrpc": "2.0", "id": 1, "method": ')
    error = raw.receive()
    assert error["id"] is None
    assert error["error"]["code"] == -32700

    raw.send_raw(b"[1, 2, 3]")
    error = raw.receive()
    assert (error["id"], error["error"]["code"]) == (None, -32600)
    assert "batches" in error["error"]["message"]

    raw.send_raw(b"[]")
    assert raw.receive()["error"]["code"] == -32600

    raw.send_raw(b"42")
    assert raw.receive()["error"]["code"] == -32600

    # 100,000 levels of nesting: refused by the parser's depth limit, not a crash.
    raw.send_raw(b'{"a":' * 100_000 + b"1" + b"}" * 100_000)
    error = raw.receive()
    assert error["error"]["code"] == -32700
    assert "nest deeper than 200 levels" in error["error"]["message"]

    raw.send_raw(b'{"jsonrpc": "2.0", "id": 7, "method": 5}')
    error = raw.receive()
    assert (error["id"], error["error"]["code"]) == (7, -32600)

    raw.send_raw(b'{"jsonrpc": "1.0", "id": "x", "method": "ping"}')
    assert raw.receive()["error"]["code"] == -32600

    # A frame over the 4 MiB limit is refused without being parsed.
    raw.send_raw(b'{"pad": "' + b"x" * (4 * 1024 * 1024) + b'"}')
    error = raw.receive()
    assert (error["id"], error["error"]["code"]) == (None, -32600)
    assert "exceeds" in error["error"]["message"]

    raw.initialize()
    raw.call(2, "add", {"text": "still here"})
    reply, _ = raw.until(_is_response(2))
    assert reply["result"]["structuredContent"] == {"notes": 1}
    assert raw.close() == 0


def test_a_cancelled_sync_call_stops_rolls_back_and_gets_no_response(raw):
    raw.initialize()
    raw.call(1, "add", {"text": "kept"})
    raw.until(_is_response(1))

    raw.call(2, "slow", progress="p2")
    # The first progress notification says the tool is running.
    raw.until(lambda m: m.get("method") == "notifications/progress")
    raw.send(
        {
            "jsonrpc": "2.0",
            "method": "notifications/cancelled",
            "params": {"requestId": 2, "reason": "test"},
        }
    )
    raw.call(3, "count")
    reply, before = raw.until(_is_response(3))
    # The slow call's note was rolled back, and it never got an answer.
    assert reply["result"]["structuredContent"] == {"notes": 1}
    assert not [m for m in before if m.get("id") == 2]
    assert raw.marker.read_text() == "slow stopped"
    assert raw.close() == 0


def test_a_disconnect_cancels_the_running_call(raw):
    raw.initialize()
    raw.call(1, "slow", progress=1)
    raw.until(lambda m: m.get("method") == "notifications/progress")
    # The client goes away mid-call: the server stops the tool and exits.
    assert raw.close() == 0
    assert raw.marker.read_text() == "slow stopped"


def test_progress_notifications_carry_the_token_and_increase(raw, tmp_path):
    raw.initialize()
    release = tmp_path / "release"
    raw.call(1, "wait_for", {"text": str(release)}, progress="tok")
    first, _ = raw.until(lambda m: m.get("method") == "notifications/progress")
    second, _ = raw.until(lambda m: m.get("method") == "notifications/progress")
    release.write_text("go")
    reply, _ = raw.until(_is_response(1))
    assert first["params"]["progressToken"] == "tok"
    assert second["params"]["progress"] > first["params"]["progress"]
    assert "wait_for running for" in first["params"]["message"]
    assert reply["result"]["content"][0]["text"].startswith("waited")

    # Without a token, no progress is sent.
    release.unlink()
    raw.call(2, "wait_for", {"text": str(release)})
    raw.call(3, "count")  # queued behind call 2 (one call at a time per session)
    release.write_text("go")
    _, before = raw.until(_is_response(3))
    assert not [m for m in before if m.get("method") == "notifications/progress"]
    raw.close()


def _params(tmp_path: Path) -> StdioServerParameters:
    env = dict(os.environ, NOTES_MARKER=str(tmp_path / "marker"), NOTES_PROGRESS_S="0.02")
    return StdioServerParameters(command=sys.executable, args=[str(SCRIPT)], env=env)


def test_official_client_cancels_an_async_call_and_the_next_call_works(tmp_path):
    async def scenario():
        async with (
            stdio_client(_params(tmp_path)) as (read, write),
            ClientSession(read, write) as client,
        ):
            await client.initialize()
            await client.call_tool("add", {"text": "kept"})
            running = anyio.Event()

            async def on_progress(progress, total, message):
                running.set()

            async with anyio.create_task_group() as tg:

                async def call() -> None:
                    await client.call_tool("slow_async", {}, progress_callback=on_progress)

                tg.start_soon(call)
                await running.wait()
                tg.cancel_scope.cancel()  # the client sends notifications/cancelled

            counted = await client.call_tool("count", {})
            assert counted.structured_content == {"notes": 1}

    anyio.run(scenario)
    assert (tmp_path / "marker").read_text() == "slow_async stopped"


def test_official_client_sees_titles_output_schemas_and_structured_content(tmp_path):
    async def scenario():
        async with (
            stdio_client(_params(tmp_path)) as (read, write),
            ClientSession(read, write) as client,
        ):
            await client.initialize()
            tools = {tool.name: tool for tool in (await client.list_tools()).tools}
            assert tools["add"].title == "Add"
            assert tools["slow_async"].title == "Slow async"
            assert tools["add"].output_schema == {
                "type": "object",
                "properties": {"notes": {"type": "integer"}},
                "required": ["notes"],
                "additionalProperties": False,
            }
            assert tools["publish"].output_schema is None

            added = await client.call_tool("add", {"text": "a"})
            assert added.structured_content == {"notes": 1}
            assert added.content[0].text == 'added\n{"notes":1}'
            failed = await client.call_tool("add", {"text": "boom"})
            assert failed.is_error
            assert failed.structured_content is None
            published = await client.call_tool("publish", {})
            assert published.structured_content is None

    anyio.run(scenario)


def test_a_call_held_for_approval_is_refused_with_how_to_go_on(raw):
    """A client without the elicitation capability cannot be asked, so a held call is
    refused at once (never left pending, which a long-lived server would accumulate), and
    nothing ran."""
    raw.initialize()
    raw.call(1, "erase", {"text": "x"})
    reply, _ = raw.until(lambda m: m.get("id") == 1)
    result = reply["result"]
    assert result["isError"] is True
    text = result["content"][0]["text"]
    assert "erase needs a person's approval" in text
    assert "Do not retry the call" in text
    raw.call(2, "count")
    counted, _ = raw.until(lambda m: m.get("id") == 2)
    assert counted["result"]["structuredContent"] == {"notes": 0}  # erase ran nothing


def test_approval_asked_over_elicitation_on_the_wire_and_a_disconnect_while_waiting(raw):
    """An empty ``elicitation`` capability means form mode; the request names the call and
    carries the form; a client that goes away while asked leaves nothing behind."""
    raw.initialize({"elicitation": {}})
    raw.call(1, "erase", {"text": "x"}, progress="tok")
    ask, _ = raw.until(lambda m: m.get("method") == "elicitation/create")
    assert "id" in ask
    params = ask["params"]
    assert params["mode"] == "form"
    assert '"text": "x"' in params["message"]
    assert params["requestedSchema"]["required"] == ["approve"]
    # Progress goes on while the user is asked, saying so.
    raw.until(
        lambda m: (
            m.get("method") == "notifications/progress"
            and "erase awaiting approval for" in m["params"]["message"]
        )
    )
    answer = {"action": "accept", "content": {"approve": True}}
    raw.send({"jsonrpc": "2.0", "id": ask["id"], "result": answer})
    reply, _ = raw.until(_is_response(1))
    assert reply["result"]["isError"] is False
    assert reply["result"]["structuredContent"] == {"notes": 1}

    raw.call(2, "erase", {"text": "y"})
    raw.until(lambda m: m.get("method") == "elicitation/create")
    assert raw.close() == 0  # stdin closed while the user was being asked
    assert raw.closed.read_text() == "closed\n"  # the session's resources were closed


def test_a_url_only_elicitation_client_is_not_asked_for_a_form(raw):
    raw.initialize({"elicitation": {"url": {}}})
    raw.call(1, "erase", {"text": "x"})
    reply, seen = raw.until(_is_response(1))
    assert not any(m.get("method") == "elicitation/create" for m in seen)
    assert "did not declare the elicitation capability" in reply["result"]["content"][0]["text"]
