"""The haversack-mcp pack against real third-party servers installed from the registries:
mcp-server-time and mcp-server-git (PyPI) over stdio, server-everything (npm) over stdio
and Streamable HTTP. The pack is loaded through its real entry point."""

from __future__ import annotations

import os
import re
import socket
import subprocess
import sys
import uuid
from pathlib import Path

import pytest

from haversack import CallOutcome, Session, ToolExecutor, ToolInvoked, compose
from haversack.adapters import mcp as mcp_format
from haversack_mcp import McpConnections, McpServerError

TIME = [sys.executable, "-m", "mcp_server_time", "--local-timezone", "UTC"]


def _compose(servers: dict, *, packs=("mcp",)):
    return compose(
        ns="t", key="k", packs=list(packs), config={"mcp": {"servers": servers}}, strict=True
    )


def _processes_with(token: str, *, supervisors: bool = False) -> list[int]:
    """Pids of live processes whose environment carries ``token`` (the servers; with
    ``supervisors``, the supervisor each server runs under too)."""
    found = []
    for entry in Path("/proc").iterdir():
        if not entry.name.isdigit():
            continue
        try:
            environ = (entry / "environ").read_bytes()
            status = (entry / "status").read_text()
            cmdline = (entry / "cmdline").read_bytes()
        except OSError:
            continue
        if not supervisors and b"_reaper.py" in cmdline:
            continue
        if token.encode() in environ and "State:\tZ" not in status:
            found.append(int(entry.name))
    return found


def test_a_stdio_server_becomes_tools_with_schemas_and_annotations():
    rendered = _compose({"time": {"command": TIME}}).render()
    names = [t.name for t in rendered.tools]
    assert names == ["time_get_current_time", "time_convert_time"]
    assert "external MCP server `time`" in rendered.text
    assert "nothing the server already did is undone" in rendered.text

    tool = rendered.tool("time_get_current_time")
    assert tool.annotations.read_only  # readOnlyHint: no snapshot is taken for it
    schema = mcp_format.tools(rendered)[0]["inputSchema"]
    assert schema["required"] == ["timezone"]
    assert schema["properties"]["timezone"]["type"] == "string"

    with ToolExecutor(rendered, session=Session()) as executor:
        now = executor.execute("time_get_current_time", {"timezone": "Europe/Paris"})
        assert now.success, now.message
        assert '"timezone": "Europe/Paris"' in now.render()
        bad = executor.execute("time_get_current_time", {"timezone": 5})
        assert not bad.success
        assert bad.message == (
            "Invalid arguments for 'time_get_current_time': field 'timezone': 5 is not of "
            "type 'string'."
        )
        refused = executor.execute("time_get_current_time", {"timezone": "Nowhere/X"})
        assert not refused.success
        assert "Invalid timezone" in refused.message


def test_prefix_and_tool_filter():
    rendered = _compose(
        {"clock": {"command": TIME, "prefix": "utc_", "tools": ["convert_time"]}}
    ).render()
    assert [t.name for t in rendered.tools] == ["utc_convert_time"]
    with pytest.raises(
        McpServerError, match="does not offer; it offers: convert_time, get_current_time"
    ):
        _compose({"time": {"command": TIME, "exclude_tools": ["get_time"]}})


def test_tool_names_are_checked_for_uniqueness():
    with pytest.raises(
        McpServerError, match="'a' and 'b' both give a tool named 'get_current_time'"
    ):
        _compose({"a": {"command": TIME, "prefix": "-"}, "b": {"command": TIME, "prefix": "-"}})


def test_a_missing_server_command_is_a_clear_error():
    with pytest.raises(McpServerError) as caught:
        _compose({"nope": {"command": ["haversack-no-such-mcp-server"]}})
    message = str(caught.value)
    assert "MCP server 'nope' (haversack-no-such-mcp-server) could not be started" in message
    assert "install the server or give its full path" in message


def test_a_bad_config_names_the_field():
    with pytest.raises(Exception, match="give exactly one of command"):
        _compose({"x": {}})


def test_servers_start_lazily_stop_on_close_and_restart_after_a_crash():
    token = uuid.uuid4().hex
    rendered = _compose(
        {"time": {"command": TIME, "env": {"HAVERSACK_TEST_TOKEN": token}}}
    ).render()
    # Listing the tools at compose time started the server; the first executor takes it.
    [listed] = _processes_with(token)
    executor = ToolExecutor(rendered, session=Session())
    try:
        assert executor.execute("time_get_current_time", {"timezone": "UTC"}).success
        [pid] = _processes_with(token)
        assert pid == listed  # not started a second time

        os.kill(pid, 9)  # the server crashes
        crashed = executor.execute("time_get_current_time", {"timezone": "UTC"})
        assert not crashed.success
        assert "closed the connection during 'get_current_time'" in crashed.message
        assert "started again on the next call" in crashed.message
        again = executor.execute("time_get_current_time", {"timezone": "UTC"})
        assert again.success, again.message
        assert len(_processes_with(token)) == 1
    finally:
        executor.close()
    assert _processes_with(token, supervisors=True) == []  # no orphan
    # A later executor (a second session of serve) starts its own, on its first call.
    with ToolExecutor(rendered, session=Session()) as later:
        assert _processes_with(token) == []
        assert later.execute("time_get_current_time", {"timezone": "UTC"}).success
        assert len(_processes_with(token)) == 1
    assert _processes_with(token, supervisors=True) == []


def test_a_writing_tool_is_not_read_only_and_its_effects_stay(tmp_path):
    repo = tmp_path / "repo"
    subprocess.run(["git", "init", "-q", str(repo)], check=True)
    (repo / "a.txt").write_text("a\n")
    git = [sys.executable, "-m", "mcp_server_git", "--repository", str(repo)]
    rendered = _compose({"git": {"command": git}}, packs=("mcp", "planning")).render()
    assert rendered.tool("git_git_status").annotations.read_only
    assert not rendered.tool("git_git_add").annotations.read_only
    with ToolExecutor(rendered, session=Session()) as executor:
        plan = executor.execute("planning_setup_plan", {"objective": "stage a file"})
        assert plan.success
        added = executor.execute("git_git_add", {"repo_path": str(repo), "files": ["a.txt"]})
        assert added.success, added.message
        failed = executor.execute("git_git_add", {"repo_path": str(repo), "files": ["nope.txt"]})
        assert not failed.success
        # The session is intact (the failed call was rolled back, not the plan) and the
        # server's earlier effect is not undone: a.txt stays staged.
        assert "stage a file" in executor.execute("planning_read_plan", {}).render()
    staged = subprocess.run(
        ["git", "-C", str(repo), "diff", "--cached", "--name-only"],
        capture_output=True,
        text=True,
        check=True,
    )
    assert staged.stdout.split() == ["a.txt"]


def test_server_everything_over_stdio(everything):
    node, script = everything
    rendered = _compose(
        {"every": {"command": [node, str(script), "stdio"], "timeout_s": 5}}
    ).render()
    names = {t.name for t in rendered.tools}
    assert {"every_echo", "every_get-sum", "every_get-tiny-image"} <= names
    with ToolExecutor(rendered, session=Session()) as executor:
        assert executor.execute("every_echo", {"message": "hi"}).message == "Echo: hi"
        assert "3" in executor.execute("every_get-sum", {"a": 1, "b": 2}).message
        image = executor.execute("every_get-tiny-image", {})
        assert "[image image/png," in image.message


def test_a_call_past_its_timeout_is_cancelled_with_a_clear_error(everything):
    node, script = everything
    rendered = _compose(
        {"every": {"command": [node, str(script), "stdio"], "timeout_s": 0.5}}
    ).render()
    with ToolExecutor(rendered, session=Session()) as executor:
        slow = executor.execute(
            "every_trigger-long-running-operation", {"duration": 30, "steps": 3}
        )
        assert not slow.success
        assert "did not finish 'trigger-long-running-operation' within 0.5 s" in slow.message
        assert executor.execute("every_echo", {"message": "after"}).message == "Echo: after"


def test_server_everything_over_streamable_http(everything):
    node, script = everything
    with socket.socket() as probe:  # the server cannot report a port it chose itself
        probe.bind(("127.0.0.1", 0))
        free_port = probe.getsockname()[1]
    env = dict(os.environ, PORT=str(free_port))
    proc = subprocess.Popen(
        [node, str(script), "streamableHttp"],
        stdout=subprocess.PIPE,
        stderr=subprocess.STDOUT,
        env=env,
        text=True,
    )
    try:
        assert proc.stdout is not None
        port = None
        for line in proc.stdout:
            match = re.search(r"listening on port (\d+)", line, re.IGNORECASE)
            if match:
                port = match.group(1)
                break
        assert port == str(free_port)
        rendered = _compose({"web": {"url": f"http://127.0.0.1:{port}/mcp"}}).render()
        assert "web_echo" in {t.name for t in rendered.tools}
        with ToolExecutor(rendered, session=Session()) as executor:
            assert executor.execute("web_echo", {"message": "over http"}).message == (
                "Echo: over http"
            )
            connections = executor.resources.get(McpConnections)
            assert connections.get("web").server.url.endswith("/mcp")
    finally:
        proc.terminate()
        proc.wait(timeout=60)
        if proc.stdout is not None:
            proc.stdout.close()


def test_bridged_tools_served_again_over_mcp(tmp_path):
    """haversack serve -p mcp: an external server's tool, re-served with Haversack's checks."""
    import anyio
    from mcp import ClientSession, StdioServerParameters
    from mcp.client.stdio import stdio_client

    config = tmp_path / "haversack.toml"
    command = ", ".join(f'"{part}"' for part in TIME)
    config.write_text(f"[packs.mcp.servers.time]\ncommand = [{command}]\n")
    env = {k: v for k, v in os.environ.items() if not k.startswith("HAVERSACK_")}
    params = StdioServerParameters(
        command=sys.executable,
        args=["-m", "haversack", "serve", "-p", "mcp", "--strict", "--config", str(config)],
        env=env,
    )

    async def scenario():
        # errlog given: its default is the sys.stderr of whenever mcp.client.stdio was first
        # imported, which may be an earlier test's capture, closed since.
        async with (
            stdio_client(params, errlog=sys.stderr) as (read, write),
            ClientSession(read, write) as client,
        ):
            await client.initialize()
            tools = {t.name: t for t in (await client.list_tools()).tools}
            assert tools["time_get_current_time"].annotations.read_only_hint is True
            now = await client.call_tool("time_get_current_time", {"timezone": "UTC"})
            assert not now.is_error
            assert '"timezone": "UTC"' in now.content[0].text
            bad = await client.call_tool("time_get_current_time", {})
            assert bad.is_error
            assert "'timezone' is a required property" in bad.content[0].text

    anyio.run(scenario)


def test_policies_govern_external_tools():
    from haversack import SequentialDependencyPolicy

    prompt = compose(
        ns="t",
        key="k",
        packs=["mcp"],
        config={"mcp": {"servers": {"time": {"command": TIME}}}},
        strict=True,
        policies=[SequentialDependencyPolicy({"time_convert_time": {"time_get_current_time"}})],
    )
    arguments = {"source_timezone": "UTC", "time": "12:00", "target_timezone": "Asia/Tokyo"}
    with ToolExecutor(prompt.render(), session=Session()) as executor:
        denied = executor.execute("time_convert_time", arguments)
        assert not denied.success
        assert "Denied by policy 'sequential-dependency'" in denied.message
        assert executor.execute("time_get_current_time", {"timezone": "UTC"}).success
        converted = executor.execute("time_convert_time", arguments)
        assert converted.success, converted.message
        assert "Asia/Tokyo" in converted.message


def _threads_of(name: str) -> list[str]:
    import threading

    return [t.name for t in threading.enumerate() if t.name == f"haversack-mcp {name}"]


def _timed_compose(token: str, **extra):
    rendered = _compose(
        {"time": {"command": TIME, "env": {"HAVERSACK_TEST_TOKEN": token}, **extra}}
    ).render()
    _no_listing_session()
    return rendered


def _no_listing_session() -> None:
    """Stop the session composing started to list the tools, which the first executor would
    take over (on a thread of its own): these tests are about sessions the calls start."""
    from haversack_mcp._connection import _close_parked

    _close_parked()


def test_execute_keeps_one_server_on_a_thread_of_its_own():
    """execute() runs the handler on a fresh loop per call: the session must not live there
    (it would die, and the server restart, with every call)."""
    token = uuid.uuid4().hex
    with ToolExecutor(_timed_compose(token), session=Session()) as executor:
        assert executor.execute("time_get_current_time", {"timezone": "UTC"}).success
        [pid] = _processes_with(token)
        assert _threads_of("time") == ["haversack-mcp time"]
        assert executor.execute("time_get_current_time", {"timezone": "UTC"}).success
        assert _processes_with(token) == [pid]
        # A loop made for one call (asyncio.run per aexecute) is recognised the same way.
        import asyncio

        for _ in range(2):
            outcome = asyncio.run(executor.aexecute("time_get_current_time", {"timezone": "UTC"}))
            assert outcome.success, outcome.message
        assert _processes_with(token) == [pid]
    assert _processes_with(token, supervisors=True) == []
    assert _threads_of("time") == []


def test_aexecute_on_a_long_lived_loop_calls_the_session_on_that_loop():
    import asyncio

    token = uuid.uuid4().hex
    rendered = _timed_compose(token)

    async def main(executor):
        for _ in range(3):
            outcome = await executor.aexecute("time_get_current_time", {"timezone": "UTC"})
            assert outcome.success, outcome.message
        # The session is this loop's: no connection thread, one server for every call.
        assert _threads_of("time") == []
        return _processes_with(token)

    with ToolExecutor(rendered, session=Session()) as executor:
        [pid] = asyncio.run(main(executor))
        # The loop ended under the session: asyncio.run stopped it with the loop's tasks.
        assert _processes_with(token) == []
        # Later sessions get a thread of their own (no restart per loop from now on).
        assert executor.execute("time_get_current_time", {"timezone": "UTC"}).success
        [second] = _processes_with(token)
        assert second != pid
        [third] = asyncio.run(main_after(executor, token))
        assert third == second
    assert _processes_with(token, supervisors=True) == []


async def main_after(executor, token):
    outcome = await executor.aexecute("time_get_current_time", {"timezone": "UTC"})
    assert outcome.success, outcome.message
    return _processes_with(token)


@pytest.mark.parametrize("loop_goes_on", [True, False])
def test_closing_the_executor_on_the_session_loop_stops_the_server(loop_goes_on):
    import asyncio

    token = uuid.uuid4().hex
    rendered = _timed_compose(token)

    async def main():
        with ToolExecutor(rendered, session=Session()) as executor:
            assert (await executor.aexecute("time_get_current_time", {"timezone": "UTC"})).success
            assert len(_processes_with(token)) == 1
        if not loop_goes_on:
            return  # asyncio.run ends the loop: the stop completes before it returns
        # close() cannot wait on its own loop: the server stops as soon as the loop runs.
        for _ in range(200):
            if not _processes_with(token):
                break
            await asyncio.sleep(0.05)
        assert _processes_with(token) == []

    asyncio.run(main())
    assert _processes_with(token, supervisors=True) == []


def test_other_threads_reach_a_session_that_lives_on_a_callers_loop():
    import asyncio
    import threading

    token = uuid.uuid4().hex
    loop = asyncio.new_event_loop()
    runner = threading.Thread(target=loop.run_forever)
    runner.start()

    async def first(executor):
        return await executor.aexecute("time_get_current_time", {"timezone": "UTC"})

    try:
        with ToolExecutor(_timed_compose(token), session=Session()) as executor:
            assert asyncio.run_coroutine_threadsafe(first(executor), loop).result().success
            [pid] = _processes_with(token)
            assert _threads_of("time") == []
            # A sync caller on this thread hands its call to that loop.
            assert executor.execute("time_get_current_time", {"timezone": "UTC"}).success
            assert _processes_with(token) == [pid]
        # close() from this thread waited for the loop to stop the server.
        assert _processes_with(token) == []
    finally:
        loop.call_soon_threadsafe(loop.stop)
        runner.join()
        loop.close()


@pytest.mark.parametrize("handed_over", [False, True], ids=["own-loop", "listing-session"])
def test_both_session_homes_honour_timeouts_and_cancellation(everything, handed_over):
    import asyncio

    from haversack_mcp._connection import _LISTED, _close_parked

    node, script = everything
    command = [node, str(script), "stdio"]
    _LISTED.clear()  # listed again (by a session started now), not from this process's cache
    rendered = _compose(
        {
            "every": {"command": command, "timeout_s": 0.5},
            "patient": {"command": command, "tools": ["trigger-long-running-operation"]},
        }
    ).render()
    if not handed_over:
        # Without the session composing started (kept for the first executor, on its own
        # thread), the executor starts its servers on the loop that calls it.
        _close_parked()
    slow = {"duration": 30, "steps": 3}

    async def main(executor):
        assert (await executor.aexecute("every_echo", {"message": "warm"})).success
        # The listing's session stays on its thread; an executor's own is this loop's.
        assert bool(_threads_of("every")) is handed_over
        timed_out = await executor.aexecute("every_trigger-long-running-operation", slow)
        assert not timed_out.success
        assert "did not finish 'trigger-long-running-operation' within 0.5 s" in (timed_out.message)
        assert (await executor.aexecute("every_echo", {"message": "after"})).message == (
            "Echo: after"
        )

    async def cancelled(executor):
        task = asyncio.create_task(
            executor.aexecute("patient_trigger-long-running-operation", slow)
        )
        await asyncio.sleep(0.2)  # the request is in flight
        assert not task.done()
        task.cancel()
        with pytest.raises(asyncio.CancelledError):
            await task
        # The call was recorded as aborted, and the session still serves the next call.
        assert (await executor.aexecute("every_echo", {"message": "again"})).message == (
            "Echo: again"
        )
        quick = {"duration": 0.1, "steps": 1}
        assert (await executor.aexecute("patient_trigger-long-running-operation", quick)).success

    with ToolExecutor(rendered, session=Session()) as executor:

        async def both():
            await main(executor)
            await cancelled(executor)

        asyncio.run(both())
        outcomes = [e.outcome for e in executor.session[ToolInvoked].all()]
    assert outcomes.count(CallOutcome.ABORTED) == 1


HOSTILE = Path(__file__).with_name("hostile_server.py")


@pytest.mark.parametrize("when", ["while it stops", "while it starts"])
def test_the_loops_end_still_waits_for_the_server(tmp_path, when):
    # asyncio.run ends by cancelling every task left: here the session's own task, while it
    # stops (or starts) a server slow to exit. anyio's shielded scopes do not hold off that
    # asyncio cancellation, so the server used to be left running and its transport unclosed
    # (a ResourceWarning at garbage collection, which pytest turns into a failure).
    import asyncio
    import gc
    import json

    token = uuid.uuid4().hex
    plan = tmp_path / "plan.json"
    ended = tmp_path / "ended"
    tool = {"name": "ok", "description": "A fine tool.", "inputSchema": {"type": "object"}}
    plan.write_text(json.dumps({"tools": [tool]}))
    command = [sys.executable, str(HOSTILE), str(plan)]
    rendered = _compose({"slow": {"command": command, "env": {"HAVERSACK_TEST_TOKEN": token}}})
    rendered = rendered.render()
    _no_listing_session()
    # From now on the server lingers after its input ends (or before it answers at start)
    # until the stop's escalation kills it.
    slow = {"start_delay": 60} if when == "while it starts" else {"linger": 60}
    plan.write_text(json.dumps({"tools": [tool], "ended": str(ended), **slow}))

    async def main():
        with ToolExecutor(rendered, session=Session()) as executor:
            if when == "while it stops":
                assert (await executor.aexecute("slow_ok", {})).success
            else:
                call = asyncio.create_task(executor.aexecute("slow_ok", {}))
                while not _processes_with(token):
                    await asyncio.sleep(0.02)
                assert not call.done()  # started, not answering yet: now the loop ends
                return
        # close() on the session's loop asked its task to stop the server: once the server
        # saw its input end, the stop waits for it to exit, and the loop ends meanwhile.
        while not ended.exists():
            await asyncio.sleep(0.02)

    asyncio.run(main())
    gc.collect()
    assert _processes_with(token, supervisors=True) == []


def test_a_crash_under_a_session_on_the_callers_loop_is_reported_and_recovered():
    import asyncio

    token = uuid.uuid4().hex
    arguments = {"timezone": "UTC"}

    async def main(executor):
        assert (await executor.aexecute("time_get_current_time", arguments)).success
        [pid] = _processes_with(token)
        os.kill(pid, 9)
        crashed = await executor.aexecute("time_get_current_time", arguments)
        assert not crashed.success
        assert "closed the connection during 'get_current_time'" in crashed.message
        again = await executor.aexecute("time_get_current_time", arguments)
        assert again.success, again.message
        [restarted] = _processes_with(token)
        assert restarted != pid
        assert _threads_of("time") == []

    with ToolExecutor(_timed_compose(token), session=Session()) as executor:
        asyncio.run(main(executor))
    assert _processes_with(token, supervisors=True) == []


FLAT = {
    "$schema": "http://json-schema.org/draft-07/schema#",
    "type": "object",
    "properties": {
        "text": {"type": "string", "description": "what to say"},
        "loud": {"type": "boolean"},
        "tags": {"type": "array"},
    },
    "required": ["text"],
}


@pytest.mark.parametrize(
    ("schema", "value"),
    [
        (FLAT, {"text": "hi"}),
        (FLAT, {"text": "hi", "loud": True, "tags": [1, "a"], "extra": {"any": 1}}),
        (FLAT, {}),
        (FLAT, {"text": 5}),
        (FLAT, {"text": None}),
        (FLAT, {"text": "hi", "loud": 1}),
        (FLAT, {"text": "hi", "tags": "a"}),
        ({**FLAT, "additionalProperties": False}, {"text": "hi", "extra": 1}),
        ({**FLAT, "properties": {"text": {"type": "string", "minLength": 3}}}, {"text": "hi"}),
        ({**FLAT, "properties": {"text": {"type": ["string", "null"]}}}, {"text": None}),
        ({"type": "object", "properties": {"n": {"type": "integer"}}}, {"n": 1.0}),
        ({"type": "object", "properties": {"n": {"type": "integer"}}}, {"n": True}),
    ],
)
def test_the_fast_argument_check_never_disagrees_with_jsonschema(schema, value):
    """Plain schemas skip jsonschema for arguments they accept; the verdict and the
    message stay jsonschema's."""
    import jsonschema

    from haversack_mcp._tools import _validator

    expected = next(iter(jsonschema.Draft202012Validator(schema).iter_errors(value)), None)
    problem = _validator(schema)(value)
    assert (problem is None) == (expected is None)
    if expected is not None:
        assert expected.message in problem


def test_the_fast_argument_check_covers_only_plain_schemas():
    from haversack_mcp._tools import _fast_check

    accepts = _fast_check(FLAT)
    assert accepts is not None
    assert accepts({"text": "hi", "other": 1})
    assert not accepts({"text": 1})
    assert not accepts({})
    for schema in (
        {**FLAT, "additionalProperties": False},
        {**FLAT, "properties": {"n": {"type": "integer"}}},
        {**FLAT, "properties": {"text": {"type": "string", "enum": ["a"]}}},
        {**FLAT, "properties": {"text": {"type": ["string", "null"]}}},
        {"type": "array"},
    ):
        assert _fast_check(schema) is None, schema


def test_a_servers_own_tool_name_is_refused_everywhere_naming_the_prefixed_tool(tmp_path):
    # Issue 26: an approval pattern written with the server's own name (get_current_time)
    # matched nothing, and the call ran unasked. The tool is time_get_current_time: every
    # place a user names tools outside the server's own options refuses the bare name and
    # names the prefixed one.
    import json

    from haversack import ApprovalPolicy, PendingApproval, SequentialDependencyPolicy
    from haversack.errors import PackConfigError, PromptValidationError

    config = tmp_path / "haversack.toml"
    config.write_text(f"[packs.mcp.servers.time]\ncommand = {json.dumps(TIME)}\n")
    cli = [sys.executable, "-m", "haversack", "run", "-p", "mcp", "--config", str(config)]
    model = ["-m", "openai:x", "--base-url", "http://127.0.0.1:9", "--transcript", "-"]
    asked = subprocess.run(
        [*cli, "--ask", "get_current_time", *model, "what time is it?"],
        capture_output=True,
        text=True,
        timeout=120,
        cwd=tmp_path,
        env={**os.environ, "OPENAI_API_KEY": "x"},
    )
    assert asked.returncode != 0
    assert "'get_current_time'" in asked.stderr
    assert "closest: time_get_current_time" in asked.stderr

    servers = {"servers": {"time": {"command": TIME}}}
    for policy in (
        ApprovalPolicy(["get_current_time"]),
        SequentialDependencyPolicy({"time_convert_time": ["get_current_time"]}),
    ):
        with pytest.raises(PromptValidationError, match="closest: time_get_current_time"):
            compose(ns="t", key="k", packs=["mcp"], config={"mcp": servers}, policies=[policy])
    for option in ("tools", "exclude_tools"):
        mcp = {**servers, option: ["get_current_time"]}
        with pytest.raises(PackConfigError, match="did you mean 'time_get_current_time'"):
            compose(ns="t", key="k", packs=["mcp"], config={"mcp": mcp}, strict=True)

    # The final name, or a glob over the server's prefix, asks before the call.
    for pattern in ("time_get_current_time", "*get_current_time"):
        prompt = compose(
            ns="t",
            key="k",
            packs=["mcp"],
            config={"mcp": servers},
            policies=[ApprovalPolicy([pattern])],
        )
        with ToolExecutor(prompt.render(), session=Session()) as executor:
            held = executor.execute("time_get_current_time", {"timezone": "UTC"})
        assert isinstance(held.value, PendingApproval), held.message
