"""Provider tool lists share each tool's schema read-only: fresh outer dicts, no copy inside."""

from __future__ import annotations

import copy
import json
import pickle
from dataclasses import dataclass, field

import pytest

from haversack import MarkdownSection, Prompt, Tool, ToolContext, ToolResult, serde
from haversack.adapters import anthropic, mcp, openai, tool_definition


@dataclass(frozen=True)
class Step:
    title: str = field(metadata={"description": "What to do."})


@dataclass(frozen=True)
class Plan:
    objective: str = field(metadata={"description": "The goal."})
    steps: list[Step] = field(default_factory=list, metadata={"description": "In order."})


def _handler(params: Plan, *, context: ToolContext) -> ToolResult[None]:
    return ToolResult.ok(None, message="ok")


def _rendered():
    tools = [
        Tool[Plan, None](name="plan", description="Make a plan.", handler=_handler),
        Tool[None, None](
            name="ping", description="Ping.", handler=lambda p, *, context: ToolResult.ok(None)
        ),
    ]
    section = MarkdownSection(title="T", key="t", template="x", tools=tools)
    return Prompt(ns="t", key="shared", sections=[section]).render()


SCHEMAS = {
    "openai chat": lambda r: [t["function"]["parameters"] for t in openai.chat_tools(r)],
    "openai responses": lambda r: [t["parameters"] for t in openai.response_tools(r)],
    "anthropic": lambda r: [t["input_schema"] for t in anthropic.tools(r)],
    "mcp": lambda r: [t["inputSchema"] for t in mcp.tools(r)],
    "tool_definition": lambda r: [tool_definition(t).parameters for t in r.tools],
}


@pytest.mark.parametrize("fmt", sorted(SCHEMAS))
def test_every_format_hands_out_the_one_shared_schema_unchanged(fmt):
    rendered = _rendered()
    first, again = SCHEMAS[fmt](rendered), SCHEMAS[fmt](rendered)
    assert [id(s) for s in first] == [id(s) for s in again]
    assert first == [serde.schema(Plan), serde.schema(None)]


@pytest.mark.parametrize("fmt", sorted(SCHEMAS))
def test_no_caller_can_change_what_the_next_one_gets(fmt):
    rendered = _rendered()
    (schema, empty) = SCHEMAS[fmt](rendered)
    before = copy.deepcopy(schema)
    attempts = [
        lambda: schema.__setitem__("type", "array"),
        lambda: schema.pop("properties"),
        lambda: schema.update(x=1),
        lambda: schema.setdefault("x", 1),
        lambda: schema.clear(),
        lambda: schema["properties"].__delitem__("objective"),
        lambda: schema["required"].append("steps"),
        lambda: schema["required"].clear(),
        lambda: schema["properties"]["steps"]["items"]["properties"]["title"].update(x=1),
        lambda: empty.__setitem__("properties", {"x": {}}),
    ]
    for attempt in attempts:
        with pytest.raises(TypeError, match="read-only"):
            attempt()
    with pytest.raises(TypeError, match="read-only"):
        schema["required"] += ["steps"]
    assert SCHEMAS[fmt](rendered)[0] == before == serde.schema(Plan)
    assert SCHEMAS[fmt](rendered)[1] == serde.schema(None)


def test_the_outer_dicts_are_the_callers_to_change():
    rendered = _rendered()
    tools = anthropic.tools(rendered)
    tools[-1]["cache_control"] = {"type": "ephemeral"}  # the prompt-caching pattern
    chat = openai.chat_tools(rendered)
    chat[0]["function"]["strict"] = True
    chat.reverse()
    assert "cache_control" not in anthropic.tools(rendered)[-1]
    assert "strict" not in openai.chat_tools(rendered)[0]["function"]
    assert openai.chat_tools(rendered)[0]["function"]["name"] == "plan"


def test_copies_of_a_shared_schema_are_plain_and_mutable():
    shared = serde.shared_schema(Plan)
    for made in (copy.deepcopy(shared), pickle.loads(pickle.dumps(shared)), serde.schema(Plan)):
        assert type(made) is dict
        assert type(made["required"]) is list
        assert type(made["properties"]["steps"]["items"]) is dict
        made["properties"]["extra"] = {"type": "string"}
        made["required"].append("extra")
    shallow = copy.copy(shared)
    assert type(shallow) is dict
    shallow["x"] = 1
    assert "x" not in serde.shared_schema(Plan)


def test_a_shared_schema_serialises_as_the_plain_one():
    assert json.dumps(serde.shared_schema(Plan)) == json.dumps(serde.schema(Plan))
    assert isinstance(serde.shared_schema(Plan), dict)
