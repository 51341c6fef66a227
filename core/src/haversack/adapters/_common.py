"""What every provider format shares: one tool's definition and reading a tool call."""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass
from typing import Any

from haversack import serde
from haversack._tool import Tool

__all__ = ["ToolCall", "field_of", "tool_definition"]


@dataclass(frozen=True, slots=True)
class ToolCall:
    """A provider-neutral tool call: the call id, the tool name and its arguments."""

    call_id: str | None
    name: str
    arguments: str | Mapping[str, Any] | None


@dataclass(frozen=True, slots=True)
class ToolDefinition:
    """A tool as every provider describes it: name, description and parameter schema."""

    name: str
    description: str
    parameters: dict[str, Any]


def tool_definition(tool: Tool[Any, Any]) -> ToolDefinition:
    """The provider-neutral definition of ``tool`` (its schema is a fresh copy)."""
    return ToolDefinition(tool.name, tool.description, serde.schema(tool.params_type))


def field_of(obj: object, *names: str) -> Any:
    """Read the first present field of an SDK object or a dict (SDK objects use attributes)."""
    for name in names:
        if isinstance(obj, Mapping):
            if name in obj:
                return obj[name]
        elif hasattr(obj, name):
            return getattr(obj, name)
    raise KeyError(f"tool call has none of the fields {', '.join(names)}: {obj!r}")
