"""The MCP pack against hostile servers (``hostile_server.py``, on the real SDK): each bad
tool is left out and reported, the other tools and servers stay; results, tool counts and
schemas are bounded; a server's whole process tree dies with the executor."""

from __future__ import annotations

import json
import logging
import sys
from pathlib import Path

from haversack import Session, ToolExecutor, compose

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
