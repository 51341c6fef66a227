"""Malformed and extreme tool arguments, derived from a tool's JSON Schema."""

from __future__ import annotations

import copy
from collections.abc import Iterator, Mapping
from dataclasses import dataclass
from typing import Any

__all__ = ["BadArguments", "bad_arguments", "sample"]

#: Length of the "huge string" arguments: large enough to hit any naive limit, cheap to send.
HUGE = 200_000
_NESTING = 64

# Values of every JSON type, tried in order when a field needs a value of the wrong type.
_WRONG_VALUES: tuple[Any, ...] = (
    12345,
    "junk-string",
    True,
    ["junk", ["nested"]],
    {"junk": {"nested": [1, 2]}},
    None,
)


@dataclass(frozen=True, slots=True)
class BadArguments:
    """One hostile call: a label for messages, the arguments, and whether it must fail.

    ``must_fail`` cases are invalid (wrong types, unknown fields, malformed JSON): the call
    must return an error result. The others are valid but extreme (the smallest valid call,
    huge strings, edge numbers): the tool may accept or refuse them, but must not crash the
    evaluation or leave state behind on failure.
    """

    label: str
    arguments: str | bytes | Mapping[str, Any] | None
    must_fail: bool


def sample(schema: Mapping[str, Any]) -> Any:
    """A small value valid for ``schema`` (required object fields only)."""
    if "const" in schema:
        return copy.deepcopy(schema["const"])
    if schema.get("enum"):
        return copy.deepcopy(schema["enum"][0])
    for key in ("anyOf", "oneOf"):
        branches = schema.get(key)
        if branches:
            usable = [b for b in branches if b.get("type") != "null"] or branches
            return sample(usable[0])
    kind = _first_type(schema)
    if kind == "string":
        return "x" * max(1, int(schema.get("minLength", 1)))
    if kind == "integer":
        return int(schema.get("minimum", schema.get("exclusiveMinimum", 0) + 1))
    if kind == "number":
        return float(schema.get("minimum", 1.0))
    if kind == "boolean":
        return False
    if kind == "array":
        items = schema.get("items")
        count = int(schema.get("minItems", 0))
        if isinstance(items, Mapping):
            return [sample(items) for _ in range(count)]
        prefix = schema.get("prefixItems") or []
        return [sample(item) for item in prefix]
    if kind == "object":
        properties = schema.get("properties") or {}
        return {name: sample(properties[name]) for name in schema.get("required", ())}
    if kind == "null":
        return None
    return "x"


def _first_type(schema: Mapping[str, Any]) -> str | None:
    kind = schema.get("type")
    if isinstance(kind, list):
        return next((k for k in kind if k != "null"), None)
    return kind if isinstance(kind, str) else None


def _allowed_types(schema: Mapping[str, Any]) -> set[str] | None:
    """JSON types ``schema`` accepts, or ``None`` when it accepts anything."""
    found: set[str] = set()
    branches = [*schema.get("anyOf", ()), *schema.get("oneOf", ())]
    if branches:
        for branch in branches:
            sub = _allowed_types(branch)
            if sub is None:
                return None
            found |= sub
        return found
    kind = schema.get("type")
    if isinstance(kind, str):
        found.add(kind)
    elif isinstance(kind, list):
        found.update(k for k in kind if isinstance(k, str))
    elif "enum" in schema or "const" in schema:
        values = schema.get("enum", [schema.get("const")])
        found.update(t for v in values for t in _json_types(v))
    else:
        return None
    return found


def _json_types(value: Any) -> set[str]:
    if value is None:
        return {"null"}
    if isinstance(value, bool):
        return {"boolean"}
    if isinstance(value, int):
        return {"integer", "number"}
    if isinstance(value, float):
        return {"number"}
    if isinstance(value, str):
        return {"string"}
    if isinstance(value, list):
        return {"array"}
    return {"object"}


def _wrong_value(schema: Mapping[str, Any]) -> Any:
    allowed = _allowed_types(schema)
    if allowed is None:
        return ...
    for value in _WRONG_VALUES:
        if not _json_types(value) & allowed:
            return value
    return ...


def _nested(depth: int) -> Any:
    value: Any = {"junk": None}
    for level in range(depth):
        value = [value] if level % 2 else {"deeper": value}
    return value


def bad_arguments(
    schema: Mapping[str, Any], *, takes_params: bool = True
) -> Iterator[BadArguments]:
    """Every hostile call for a tool with params ``schema``; see :class:`BadArguments`."""
    properties: Mapping[str, Any] = schema.get("properties") or {}
    base = sample(schema) if takes_params else {}
    yield BadArguments("the smallest valid arguments", base, must_fail=False)
    yield BadArguments("malformed JSON", '{"unterminated": ', must_fail=True)
    yield BadArguments("not JSON at all", "call the tool please", must_fail=True)
    yield BadArguments("a JSON array instead of an object", "[1, 2, 3]", must_fail=True)
    yield BadArguments("a JSON string instead of an object", '"text"', must_fail=True)
    yield BadArguments("invalid UTF-8 bytes", b'{"\xff\xfe": 1}', must_fail=True)
    yield BadArguments("an unknown field", {**base, "zz_not_a_field": 1}, must_fail=True)
    yield BadArguments(
        f"junk nested {_NESTING} levels deep",
        {**base, "zz_not_a_field": _nested(_NESTING)},
        must_fail=True,
    )
    if not takes_params:
        return
    if schema.get("required"):
        yield BadArguments("no arguments", {}, must_fail=True)
    for name, prop in properties.items():
        wrong = _wrong_value(prop)
        if wrong is not ...:
            yield BadArguments(f"field {name!r} of the wrong type", {**base, name: wrong}, True)
        if "string" in (_allowed_types(prop) or ()):
            yield BadArguments(f"huge string in {name!r}", {**base, name: "x" * HUGE}, False)
            yield BadArguments(f"empty string in {name!r}", {**base, name: ""}, False)
            yield BadArguments(
                f"control and bidi characters in {name!r}",
                {**base, name: "a\x00b\u202ec\n../../etc/passwd"},
                False,
            )
        if "integer" in (_allowed_types(prop) or ()):
            for edge in (-1, 0, 2**63):
                yield BadArguments(f"{edge} in {name!r}", {**base, name: edge}, False)
        if "array" in (_allowed_types(prop) or ()):
            items = _array_items(prop)
            if items is not None:
                many = [sample(items)] * 10_000
                yield BadArguments(f"10000 items in {name!r}", {**base, name: many}, False)
            item_types = _allowed_types(items) if items is not None else None
            if item_types is not None and not item_types & {"object", "array"}:
                junk = [_nested(_NESTING)]
                yield BadArguments(f"junk nested in {name!r}", {**base, name: junk}, True)


def _array_items(schema: Mapping[str, Any]) -> Mapping[str, Any] | None:
    for branch in [schema, *schema.get("anyOf", ()), *schema.get("oneOf", ())]:
        if _first_type(branch) == "array" and isinstance(branch.get("items"), Mapping):
            items: Mapping[str, Any] = branch["items"]
            return items
    return None
