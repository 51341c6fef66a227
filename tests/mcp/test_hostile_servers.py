"""The MCP pack against hostile servers (``hostile_server.py``, on the real SDK): each bad
tool is left out and reported, the other tools and servers stay; results, tool counts and
schemas are bounded; a server's whole process tree dies with the executor."""

from __future__ import annotations

import json
import logging
import os
import sys
from pathlib import Path

import pytest

from haversack import Session, ToolExecutor, compose
from haversack_mcp import McpServerError

SCRIPT = Path(__file__).with_name("hostile_server.py")
TIME = [sys.executable, "-m", "mcp_server_time", "--local-timezone", "UTC"]
PLAIN = {"name": "ok", "description": "A fine tool.", "inputSchema": {"type": "object"}}


def hostile(tmp_path: Path, **plan) -> list[str]:
    """The command of a hostile server following ``plan``."""
    path = tmp_path / f"plan-{len(list(tmp_path.glob('plan-*')))}.json"
    path.write_text(json.dumps(plan))
    return [sys.executable, str(SCRIPT), str(path)]


def _compose(servers: dict):
    return compose(
        ns="t", key="k", packs=["mcp"], config={"mcp": {"servers": servers}}, strict=True
    )


def _chain(levels: int) -> dict:
    defs = {
        f"D{i}": {
            "type": "object",
            "properties": {"a": {"$ref": f"#/$defs/D{i + 1}"}, "b": {"$ref": f"#/$defs/D{i + 1}"}},
        }
        for i in range(levels)
    }
    defs[f"D{levels}"] = {"type": "string"}
    return {"type": "object", "properties": {"x": {"$ref": "#/$defs/D0"}}, "$defs": defs}


TREE = {
    "type": "object",
    "properties": {"root": {"$ref": "#/$defs/N"}},
    "$defs": {
        "N": {
            "type": "object",
            "properties": {"l": {"$ref": "#/$defs/N"}, "r": {"$ref": "#/$defs/N"}},
        }
    },
}


def test_exponential_and_recursive_schemas_leave_out_that_tool_only(tmp_path, caplog):
    tools = [
        PLAIN,
        {"name": "chain", "description": "d", "inputSchema": _chain(40)},
        {"name": "tree", "description": "d", "inputSchema": TREE},
    ]
    with caplog.at_level(logging.WARNING, logger="haversack.mcp"):
        rendered = _compose(
            {"bad": {"command": hostile(tmp_path, tools=tools)}, "time": {"command": TIME}}
        ).render()
    names = [t.name for t in rendered.tools]
    assert names == ["bad_ok", "time_get_current_time", "time_convert_time"]
    [record] = [r for r in caplog.records if r.name == "haversack.mcp"]
    message = record.getMessage()
    assert message.startswith("MCP server 'bad' (")
    assert "left out 2 tool(s): 'chain' (" in message
    assert "more than 20000 values" in message


def test_bad_tool_names_leave_out_those_tools_and_long_descriptions_keep_the_core_limit(
    tmp_path, caplog
):
    long = "word " * 400  # 2,000 characters
    tools = [
        PLAIN,
        {"name": "x" * 5000, "description": "d", "inputSchema": {"type": "object"}},
        {"name": "", "description": "d", "inputSchema": {"type": "object"}},
        {"name": "\u202eevil", "description": "d", "inputSchema": {"type": "object"}},
        {"name": "../..", "description": "d", "inputSchema": {"type": "object"}},
        {"name": "Ok", "description": "d", "inputSchema": {"type": "object"}},  # clashes: ok
        {"name": "../etc/passwd", "description": "d", "inputSchema": {"type": "object"}},
        {"name": "long", "description": long, "inputSchema": {"type": "object"}},
        {"name": "esc", "description": "a\x1b]52;c;eA==\x07b", "inputSchema": {"type": "object"}},
    ]
    with caplog.at_level(logging.WARNING, logger="haversack.mcp"):
        rendered = _compose({"bad": {"command": hostile(tmp_path, tools=tools)}}).render()
    assert [t.name for t in rendered.tools] == [
        "bad_ok",
        "bad_etc_passwd",
        "bad_long",
        "bad_esc",
    ]
    described = rendered.tool("bad_long").description
    assert len(described) == 1024  # the core's default limit, not 200
    assert described.endswith("...")
    assert rendered.tool("bad_esc").description == "a ]52;c;eA== b"
    [record] = [r for r in caplog.records if r.name == "haversack.mcp"]
    message = record.getMessage()
    assert "left out 5 tool(s)" in message
    assert len(message) < 1500  # brief, though the server sent a 5,000-character name
    assert "'Ok' ('ok' already became 'bad_ok')" in message


def test_schema_patterns_are_checked_in_linear_time(tmp_path):
    schema = {
        "type": "object",
        "properties": {
            "a": {"type": "string", "pattern": "^(a|aa)+$"},
            "ahead": {"type": "string", "pattern": "^(?=x)x$"},  # not RE2: the server judges
        },
        "patternProperties": {"^(b|bb)+$": {"type": "integer"}},
        "additionalProperties": False,
    }
    tools = [{"name": "re", "description": "d", "inputSchema": schema}]
    rendered = _compose({"bad": {"command": hostile(tmp_path, tools=tools)}}).render()
    with ToolExecutor(rendered, session=Session()) as executor:
        # Python's re takes 10-16 s on 39 characters, and doubles with each one more.
        slow = executor.execute("bad_re", {"a": "a" * 60 + "!"})
        assert not slow.success
        assert "does not match '^(a|aa)+$'" in slow.message
        key = executor.execute("bad_re", {"b" * 60 + "!": 1})
        assert not key.success
        assert "Additional properties are not allowed" in key.message
        typed = executor.execute("bad_re", {"b" * 60: "not an integer"})
        assert not typed.success
        assert "is not of type 'integer'" in typed.message
        fine = executor.execute("bad_re", {"a": "a" * 60, "ahead": "y", "b" * 60: 1})
        assert fine.success, fine.message


def test_results_are_capped_and_read_in_linear_time_and_tools_are_counted(tmp_path, caplog):
    command = hostile(tmp_path, tools=[PLAIN], many=3000, result_chars=24 * 1024 * 1024)
    servers = {
        "big": {"command": command, "max_tools": 5, "max_result_chars": 1000},
        "small": {"command": command, "tools": ["ok"], "max_message_bytes": 1024 * 1024},
    }
    with caplog.at_level(logging.WARNING, logger="haversack.mcp"):
        rendered = _compose(servers).render()
    assert [t.name for t in rendered.tools] == [
        "big_ok",
        "big_t0",
        "big_t1",
        "big_t2",
        "big_t3",
        "small_ok",
    ]
    [record] = [r for r in caplog.records if r.name == "haversack.mcp"]
    assert "left out 1 tool(s): 2996 past max_tools=5" in record.getMessage()
    with ToolExecutor(rendered, session=Session()) as executor:
        cut = executor.execute("big_ok", {})
        assert cut.success, cut.message
        text = cut.render()
        assert text.startswith("x" * 1000 + "\n\n[Result cut: the server sent 25,165,824 ")
        assert "only the first 1,000 are shown (max_result_chars)" in text
        refused = executor.execute("small_ok", {})
        assert not refused.success
        assert "larger than max_message_bytes (1048576 bytes" in refused.message
        # The session survives the refused message: the next call is answered.
        again = executor.execute("small_ok", {})
        assert "max_message_bytes" in again.message


def _alive(pid: int) -> bool:
    try:
        status = Path(f"/proc/{pid}/status").read_text()
    except OSError:
        return False
    return "State:\tZ" not in status


def _daemon_pid(pidfile: Path) -> int:
    import time

    for _ in range(500):  # the daemon writes its pid just after the server starts
        if pidfile.exists():
            return int(pidfile.read_text())
        time.sleep(0.02)
    raise AssertionError(f"the hostile server's daemon never wrote {pidfile}")


def test_a_setsid_daemon_of_a_server_dies_with_it(tmp_path):
    pidfile = tmp_path / "daemon.pid"
    rendered = _compose(
        {"bad": {"command": hostile(tmp_path, tools=[PLAIN], daemon=str(pidfile))}}
    ).render()
    # Listing the tools started the server, and its daemon; the executor takes them over.
    called = _daemon_pid(pidfile)
    assert _alive(called)
    executor = ToolExecutor(rendered, session=Session())
    try:
        assert executor.execute("bad_ok", {}).success
        assert _daemon_pid(pidfile) == called
        assert _alive(called)
        # It left the server's session and process group for one of its own.
        assert os.getsid(called) == os.getpgid(called) != called
    finally:
        executor.close()
    assert not _alive(called)


def test_relative_command_and_cwd_resolve_against_the_config_file(tmp_path, monkeypatch):
    folder = tmp_path / "project"
    (folder / "bin").mkdir(parents=True)
    (folder / "work").mkdir()
    plan = folder / "plan.json"
    plan.write_text(json.dumps({"tools": [PLAIN]}))
    server = folder / "bin" / "server"
    server.write_text(f"#!/bin/sh\npwd > where.txt\nexec {sys.executable} {SCRIPT} {plan}\n")
    server.chmod(0o755)
    config = folder / "haversack.toml"
    config.write_text('[packs.mcp.servers.rel]\ncommand = ["bin/server"]\ncwd = "work"\n')
    monkeypatch.chdir("/")  # as MCP clients start `haversack serve`
    rendered = compose(ns="t", key="k", packs=["mcp"], config_file=config, strict=True).render()
    assert [t.name for t in rendered.tools] == ["rel_ok"]
    assert (folder / "work" / "where.txt").read_text().strip() == str(folder / "work")


def test_a_normal_start_prints_no_slow_pack_notice_and_servers_list_once(
    tmp_path, monkeypatch, capfd
):
    monkeypatch.setenv("HAVERSACK_IMPORT_NOTICE", "1")  # a start takes longer
    pidfile = tmp_path / "started"
    servers = {
        name: {"command": hostile(tmp_path, tools=[PLAIN], daemon=str(pidfile) + name)}
        for name in ("one", "two")
    }
    first = _compose(servers).render()
    assert [t.name for t in first.tools] == ["one_ok", "two_ok"]
    assert "hooks of pack 'mcp'" not in capfd.readouterr().err
    # Each server started once (its daemon wrote its pid); composing again starts none.
    started = sorted(p.name for p in tmp_path.glob("started*"))
    assert started == ["startedone", "startedtwo"]
    for path in tmp_path.glob("started*"):
        path.unlink()
    again = _compose(servers).render()
    assert [t.name for t in again.tools] == ["one_ok", "two_ok"]
    assert list(tmp_path.glob("started*")) == []


def test_an_answer_the_client_cannot_parse_fails_the_listing_at_once(tmp_path):
    node: dict = {"type": "string"}
    for _ in range(110):  # past the JSON parser's depth once inside the listing's envelope
        node = {"type": "object", "properties": {"x": node}}
    tools = [{"name": "deep", "description": "d", "inputSchema": node}]
    # Before, the listing waited for its whole startup_timeout_s (here 600 s).
    command = hostile(tmp_path, tools=tools)
    with pytest.raises(McpServerError) as caught:
        _compose({"bad": {"command": command, "startup_timeout_s": 600}})
    message = str(caught.value)
    assert "MCP server 'bad' (" in message
    assert "the server's answer is not a valid message (Invalid JSON: recursion limit" in message
