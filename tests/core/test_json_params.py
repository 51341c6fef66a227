"""``json_schema_params``: tools whose parameters are a JSON Schema rather than a dataclass."""

from __future__ import annotations

import pytest

from haversack import (
    JsonArguments,
    MarkdownSection,
    Prompt,
    PromptValidationError,
    Session,
    Tool,
    ToolExecutor,
    ToolResult,
    json_schema_params,
    serde,
)

SCHEMA = {
    "type": "object",
    "title": "Args",
    "properties": {
        "city": {"type": "string", "title": "City", "description": "Where."},
        "when": {"$ref": "#/$defs/When"},
    },
    "required": ["city"],
    "$defs": {"When": {"type": "string", "enum": ["now", "later"]}},
}


def _validate(obj):
    if not isinstance(obj.get("city"), str):
        return "field 'city': must be a string"
    return None


def test_the_schema_sent_is_the_given_one_self_contained():
    params = json_schema_params("weather", SCHEMA, _validate)
    sent = serde.schema(params)
    assert sent == {
        "type": "object",
        "properties": {
            "city": {"type": "string", "description": "Where."},
            "when": {"type": "string", "enum": ["now", "later"]},
        },
        "required": ["city"],
    }
    assert issubclass(params, JsonArguments)


def test_arguments_are_validated_and_handed_over_as_the_object():
    params = json_schema_params("weather", SCHEMA, _validate)
    seen = []

    def handler(p: JsonArguments, *, context) -> ToolResult[None]:
        seen.append(p.arguments)
        return ToolResult.ok(None, "ok")

    tool = Tool[params, None](name="weather", description="Weather.", handler=handler)
    section = MarkdownSection(title="W", key="w", template="Use ${tool:weather}.", tools=[tool])
    rendered = Prompt(ns="t", key="k", sections=[section]).render()
    with ToolExecutor(rendered, session=Session()) as executor:
        assert executor.execute("weather", '{"city": "Oslo", "when": "now"}').success
        refused = executor.execute("weather", {"city": 5})
        assert refused.message == (
            "Invalid arguments for 'weather': field 'city': must be a string."
        )
        not_object = executor.execute("weather", "[1]")
        assert not_object.message == (
            "Invalid arguments for 'weather': expected a JSON object, got list."
        )
    assert seen == [{"city": "Oslo", "when": "now"}]


def test_without_a_validator_any_object_is_accepted():
    params = json_schema_params("anything", {"type": "object"})
    assert serde.parse(params, {"x": [1, {"y": None}]}).arguments == {"x": [1, {"y": None}]}
    assert serde.schema(params) == {"type": "object", "properties": {}}


def test_a_recursive_reference_is_cut_to_any_value():
    schema = {
        "type": "object",
        "properties": {"node": {"$ref": "#/$defs/Node"}},
        "$defs": {"Node": {"type": "object", "properties": {"next": {"$ref": "#/$defs/Node"}}}},
    }
    sent = serde.schema(json_schema_params("tree", schema))
    depth, node = 0, sent["properties"]["node"]
    while node.get("properties"):
        node = node["properties"]["next"]
        depth += 1
    assert node == {}
    assert depth == 32


@pytest.mark.parametrize("schema", [{"type": "array"}, "not a schema", None])
def test_a_schema_that_is_not_an_object_is_refused(schema):
    with pytest.raises(PromptValidationError, match="must be a JSON Schema object"):
        json_schema_params("bad", schema)


def _chain(levels: int) -> dict:
    """40 definitions, each referring to the next twice: 2**levels values once inlined."""
    defs = {
        f"D{i}": {
            "type": "object",
            "properties": {"a": {"$ref": f"#/$defs/D{i + 1}"}, "b": {"$ref": f"#/$defs/D{i + 1}"}},
        }
        for i in range(levels)
    }
    defs[f"D{levels}"] = {"type": "string"}
    return {"type": "object", "properties": {"x": {"$ref": "#/$defs/D0"}}, "$defs": defs}


@pytest.mark.parametrize(
    "schema",
    [
        _chain(40),
        {  # a self-referencing binary tree: 2**32 values at the recursion cut
            "type": "object",
            "properties": {"root": {"$ref": "#/$defs/Node"}},
            "$defs": {
                "Node": {
                    "type": "object",
                    "properties": {
                        "left": {"$ref": "#/$defs/Node"},
                        "right": {"$ref": "#/$defs/Node"},
                    },
                }
            },
        },
    ],
    ids=["exponential-chain", "binary-tree"],
)
def test_a_schema_that_inlines_past_the_budget_is_refused_after_bounded_work(schema):
    with pytest.raises(PromptValidationError, match="more than 20000 values") as caught:
        json_schema_params("hostile", schema)
    assert "'hostile'" in str(caught.value)


def test_a_schema_nested_past_the_budget_is_refused():
    node: dict = {"type": "string"}
    for _ in range(200):
        node = {"type": "object", "properties": {"x": node}}
    with pytest.raises(PromptValidationError, match="nested more than 100 levels"):
        json_schema_params("deep", node)


def test_a_moderate_exponential_schema_within_the_budget_is_inlined():
    sent = serde.schema(json_schema_params("ok", _chain(8)))
    node = sent["properties"]["x"]
    for _ in range(8):
        node = node["properties"]["b"]
    assert node == {"type": "string"}
    assert "$defs" not in sent
