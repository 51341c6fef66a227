"""``serde.schema``: self-contained, provider-friendly JSON Schema."""

from __future__ import annotations

import enum
from collections.abc import Iterator
from dataclasses import dataclass, field
from typing import Any, Literal, Optional

import pytest

from haversack import serde
from haversack.errors import PromptValidationError


class Level(enum.Enum):
    LOW = "low"
    HIGH = "high"


@dataclass(frozen=True)
class Step:
    title: str = field(metadata={"description": "What to do."})
    done: bool = False


@dataclass(frozen=True)
class Header:
    title: str = "untitled"


@dataclass(frozen=True)
class Plan:
    name: str = field(metadata={"description": "The plan's name."})
    steps: tuple[Step, ...]
    first: Step | None = None
    level: Level = Level.LOW
    mode: Literal["fast", "slow"] = "fast"
    limits: dict[str, Step] = field(default_factory=dict)
    header: Header = Header()
    count: int = 3


@dataclass
class Node:
    name: str
    children: list[Node] = field(default_factory=list)


@dataclass
class Indirect:
    child: Optional[Wrapper] = None  # noqa: UP045 - a forward reference through Optional


@dataclass
class Wrapper:
    inner: Indirect


def walk(node: Any) -> Iterator[tuple[str, Any]]:
    """Every (key, value) pair of dicts in the schema, except inside instance data."""
    if isinstance(node, dict):
        for key, value in node.items():
            yield key, value
            if key in ("default", "enum", "const"):
                continue
            if key == "properties":
                for name, sub in value.items():
                    yield name, sub
                    yield from walk(sub)
            else:
                yield from walk(value)
    elif isinstance(node, list):
        for item in node:
            yield from walk(item)


def objects(node: Any) -> Iterator[dict[str, Any]]:
    for key, value in walk({"root": node}):
        if isinstance(value, dict) and value.get("type") == "object":
            yield value
        del key


def test_top_level_shape() -> None:
    result = serde.schema(Plan)
    assert result["type"] == "object"
    assert result["required"] == ["name", "steps"]
    assert result["additionalProperties"] is False
    assert list(result["properties"]) == [
        "name",
        "steps",
        "first",
        "level",
        "mode",
        "limits",
        "header",
        "count",
    ]


def test_field_descriptions_come_from_metadata() -> None:
    props = serde.schema(Plan)["properties"]
    assert props["name"]["description"] == "The plan's name."
    assert props["steps"]["items"]["properties"]["title"]["description"] == "What to do."


@dataclass(frozen=True)
class DocumentedItem:
    """Developer notes about ``DocumentedItem``: not for the model."""

    name: str = field(metadata={"description": "The item's name."})


@dataclass(frozen=True)
class DocumentedParams:
    """Arguments of ``old_tool_name`` (reST markup, internal names)."""

    main: DocumentedItem = field(metadata={"description": "The main item."})
    others: list[DocumentedItem] = field(default_factory=list)


def test_docstrings_are_not_sent_but_field_descriptions_are() -> None:
    result = serde.schema(DocumentedParams)
    assert "description" not in result
    assert result["properties"]["main"]["description"] == "The main item."
    assert "description" not in result["properties"]["others"]["items"]
    item = result["properties"]["others"]["items"]["properties"]["name"]
    assert item["description"] == "The item's name."
    assert "``" not in repr(result)


def test_defaults_and_enums() -> None:
    props = serde.schema(Plan)["properties"]
    assert props["count"] == {"type": "integer", "default": 3}
    assert props["level"]["enum"] == ["low", "high"]
    assert props["level"]["default"] == "low"
    assert props["mode"]["enum"] == ["fast", "slow"]
    assert props["first"]["default"] is None


def test_a_defaults_own_title_key_is_kept() -> None:
    # Regression: the title-stripping pass used to eat the "title" key of default values.
    assert serde.schema(Plan)["properties"]["header"]["default"] == {"title": "untitled"}


def test_a_field_named_title_is_kept() -> None:
    props = serde.schema(Step)["properties"]
    assert "title" in props
    assert serde.schema(Step)["required"] == ["title"]


def test_no_ref_no_defs_no_title_anywhere() -> None:
    for key, value in walk(serde.schema(Plan)):
        assert key not in ("$ref", "$defs", "definitions")
        if key == "title":
            assert isinstance(value, dict)  # only ever a property named "title"


def test_every_object_forbids_additional_properties() -> None:
    found = list(objects(serde.schema(Plan)))
    assert len(found) >= 5  # plan, step (items), first, header, and limits' values
    for obj in found:
        if "properties" in obj:
            assert obj["additionalProperties"] is False
        else:  # a mapping: its values are described, which is not the same as open
            assert isinstance(obj["additionalProperties"], dict)


def test_nested_dataclasses_are_inlined() -> None:
    first = serde.schema(Plan)["properties"]["first"]
    variants = first["anyOf"]
    assert {"type": "null"} in variants
    step = next(v for v in variants if v.get("type") == "object")
    assert step["additionalProperties"] is False
    assert step["required"] == ["title"]


def test_schema_of_none_is_an_empty_object() -> None:
    assert serde.schema(None) == {
        "type": "object",
        "properties": {},
        "additionalProperties": False,
    }


@pytest.mark.parametrize("tp", [Node, Wrapper])
def test_recursive_dataclass_raises(tp: type) -> None:
    with pytest.raises(PromptValidationError, match="is recursive") as info:
        serde.schema(tp)
    assert info.value.dataclass_type is tp


def test_each_call_returns_a_fresh_copy() -> None:
    first = serde.schema(Plan)
    first["properties"]["name"]["description"] = "mutated"
    first["required"].append("bogus")
    second = serde.schema(Plan)
    assert second["properties"]["name"]["description"] == "The plan's name."
    assert "bogus" not in second["required"]
    empty = serde.schema(None)
    empty["properties"]["x"] = {}
    assert serde.schema(None)["properties"] == {}


def test_schema_accepts_what_parse_accepts() -> None:
    # The schema and the validator come from one core schema; spot-check they agree.
    props = serde.schema(Step)["properties"]
    assert props["done"] == {"type": "boolean", "default": False}
    assert serde.parse(Step, {"title": "t", "done": True}) == Step("t", True)
