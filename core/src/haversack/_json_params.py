"""Params and result types for a tool described by JSON Schemas (an external MCP server's),
not dataclasses: ``json_schema_params`` and ``json_schema_result``."""

from __future__ import annotations

import copy
import dataclasses
from collections.abc import Callable, Mapping
from typing import Any, ClassVar

from ._content import Content
from ._preview import preview
from .errors import PromptValidationError

__all__ = ["JsonArguments", "JsonResult", "json_schema_params", "json_schema_result"]

Validate = Callable[[dict[str, Any]], "str | None"]

_MAX_INLINE_DEPTH = 32
#: The most JSON values (objects, arrays and scalars) a schema may have once its ``$ref``\ s
#: are inlined: a 4 KB schema of 40 definitions each referring to the next twice inlines to
#: 2**40 values, and a self-referencing binary tree to 2**32, so the walk stops here.
MAX_SCHEMA_NODES = 20_000
#: The deepest nesting of objects and arrays, once inlined (also bounds the walk's recursion).
MAX_SCHEMA_NESTING = 100


@dataclasses.dataclass(frozen=True)
class JsonArguments:
    """The validated arguments of a schema-defined tool, as the decoded JSON object."""

    arguments: dict[str, Any]


@dataclasses.dataclass(frozen=True)
class JsonResult:
    """The result value of a schema-described tool, as it came: ``structured`` the JSON
    object (an MCP ``structuredContent``; ``None``: none) and ``content`` its content
    blocks. The text a model sees is the result's message (this value renders as nothing).

    Served over MCP again, the blocks go out as they are (instead of the message) and
    ``structured`` as ``structuredContent``, checked against the tool's output schema (see
    :func:`json_schema_result`).
    """

    structured: dict[str, Any] | None = None
    content: tuple[Content, ...] = ()

    #: The output schema of the tools returning this type (``None``: none declared).
    output_schema: ClassVar[dict[str, Any] | None] = None

    def render(self) -> str:
        """Nothing: the result's message is the text."""
        return ""


def json_schema_result(name: str, schema: Mapping[str, Any] | None) -> type[JsonResult]:
    """A result type (``Tool[P, json_schema_result(...)]``) whose output schema is
    ``schema`` (an external MCP server's ``outputSchema``; ``None``: plain
    :class:`JsonResult`, no schema).

    The schema must describe an object, and is inlined and bounded as
    :func:`json_schema_params` does (:class:`PromptValidationError` otherwise).
    """
    if schema is None:
        return JsonResult
    if not isinstance(schema, Mapping) or schema.get("type", "object") != "object":
        raise PromptValidationError(
            f"The output schema of {name!r} must be a JSON Schema object with "
            f'"type": "object", got {preview(schema, 80)}.'
        )
    inlined = _inline_refs(dict(schema), name, "output")
    inlined.setdefault("type", "object")
    return dataclasses.make_dataclass(
        f"{_class_name(name)}Result",
        [],
        bases=(JsonResult,),
        frozen=True,
        namespace={"output_schema": inlined, "__module__": __name__},
    )


def json_schema_params(
    name: str, schema: Mapping[str, Any], validate: Validate | None = None
) -> type[JsonArguments]:
    """A params type (``Tool[json_schema_params(...), R]``) whose schema is ``schema``.

    For tools whose parameters come as a JSON Schema (an external MCP server's
    ``inputSchema``): providers are sent ``schema`` (local ``$ref``\\ s inlined, titles
    dropped, as for dataclasses), and the executor hands the handler a
    :class:`JsonArguments` holding the decoded object. ``validate(obj)`` returns why
    ``obj`` does not match (``None`` when it does); without it any JSON object is
    accepted. The schema must describe an object (``"type": "object"``).
    """
    if not isinstance(schema, Mapping) or schema.get("type", "object") != "object":
        raise PromptValidationError(
            f"The input schema of {name!r} must be a JSON Schema object with "
            f'"type": "object", got {preview(schema, 80)}.'
        )
    inlined = _inline_refs(dict(schema), name)
    inlined.setdefault("type", "object")
    inlined.setdefault("properties", {})

    def core_schema(owner: Any, source: Any, handler: Any) -> Any:
        from pydantic_core import core_schema

        def check(value: Any) -> JsonArguments:
            # A ValueError's words become the whole message (serde reports it as is).
            if not isinstance(value, dict):
                raise ValueError(f"expected a JSON object, got {type(value).__name__}")
            problem = validate(value) if validate is not None else None
            if problem is not None:
                raise ValueError(problem)
            made: JsonArguments = cls(value)
            return made

        return core_schema.no_info_plain_validator_function(check)

    def json_schema(owner: Any, core: Any, handler: Any) -> dict[str, Any]:
        return copy.deepcopy(inlined)

    cls: type[JsonArguments] = dataclasses.make_dataclass(
        f"{_class_name(name)}Arguments",
        [],
        bases=(JsonArguments,),
        frozen=True,
        namespace={
            "__get_pydantic_core_schema__": classmethod(core_schema),
            "__get_pydantic_json_schema__": classmethod(json_schema),
            "__module__": __name__,
        },
    )
    return cls


def _class_name(name: str) -> str:
    return "".join(part.capitalize() for part in name.replace("-", "_").split("_") if part)


def _inline_refs(schema: dict[str, Any], name: str, kind: str = "input") -> dict[str, Any]:
    """``schema`` with its local ``#/$defs/...`` (and ``#/definitions/...``) refs inlined.

    Providers want self-contained schemas. A recursive reference cannot be inlined: past
    a fixed depth it becomes ``{}`` (any value), and the tool's own validation still
    checks the real schema. Inlining can grow a schema exponentially, so the walk stops
    with a :class:`PromptValidationError` once the result would pass
    :data:`MAX_SCHEMA_NODES` values or :data:`MAX_SCHEMA_NESTING` levels: bounded work for
    any schema. The input is not changed (the result is built anew).
    """
    defs: dict[str, Any] = {}
    for key in ("$defs", "definitions"):
        found = schema.get(key)
        if isinstance(found, dict):
            defs.update({f"#/{key}/{k}": v for k, v in found.items()})
    budget = [MAX_SCHEMA_NODES]

    def too_big(what: str) -> PromptValidationError:
        return PromptValidationError(
            f"The {kind} schema of {name!r} is too large once its $refs are inlined: {what}. "
            "Providers need a self-contained schema; simplify the schema (fewer nested or "
            "repeated definitions)."
        )

    def walk(node: Any, depth: int, nesting: int) -> Any:
        budget[0] -= 1
        if budget[0] < 0:
            raise too_big(f"more than {MAX_SCHEMA_NODES} values")
        if isinstance(node, list):
            if nesting >= MAX_SCHEMA_NESTING:
                raise too_big(f"nested more than {MAX_SCHEMA_NESTING} levels")
            return [walk(item, depth, nesting + 1) for item in node]
        if not isinstance(node, dict):
            return node
        if nesting >= MAX_SCHEMA_NESTING:
            raise too_big(f"nested more than {MAX_SCHEMA_NESTING} levels")
        ref = node.get("$ref")
        if isinstance(ref, str) and ref in defs:
            if depth >= _MAX_INLINE_DEPTH:
                return {}
            rest = {k: walk(v, depth, nesting + 1) for k, v in node.items() if k != "$ref"}
            target = walk(defs[ref], depth + 1, nesting)
            return {**target, **rest} if isinstance(target, dict) else target
        return {
            k: walk(v, depth, nesting + 1)
            for k, v in node.items()
            if not (nesting == 0 and k in ("$defs", "definitions"))
        }

    result = walk(schema, 0, 0)
    assert isinstance(result, dict)
    return result
