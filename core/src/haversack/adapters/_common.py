"""What every provider format shares: one tool's definition and reading a tool call."""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass
from typing import Any

from haversack import serde
from haversack._tool import Tool

__all__ = [
    "ToolCall",
    "chat_tool_calls_of",
    "field_of",
    "function_calls_of",
    "tool_definition",
    "tool_uses_of",
]


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
    """The provider-neutral definition of ``tool``.

    Its ``parameters`` is the shared, read-only schema (:func:`haversack.serde.shared_schema`):
    adapters send it with every request, and copying it was most of their cost. Take
    ``copy.deepcopy(...)`` of it to change it.
    """
    return ToolDefinition(tool.name, tool.description, serde.shared_schema(tool.params_type))


def field_of(obj: object, *names: str) -> Any:
    """Read the first present field of an SDK object or a dict (SDK objects use attributes)."""
    for name in names:
        if isinstance(obj, Mapping):
            if name in obj:
                return obj[name]
        elif hasattr(obj, name):
            return getattr(obj, name)
    raise KeyError(f"tool call has none of the fields {', '.join(names)}: {obj!r}")


def _optional(obj: object, name: str) -> Any:
    if isinstance(obj, Mapping):
        return obj.get(name)
    return getattr(obj, name, None)


def chat_tool_calls_of(response: object) -> list[Any]:
    """The ``tool_calls`` of a ``ChatCompletion`` (first choice), of its message, or of a
    dict of either; an empty list when the model called no tool."""
    choices = _optional(response, "choices")
    message = _optional(choices[0], "message") if choices else response
    return list(_optional(message, "tool_calls") or ())


def function_calls_of(response: object) -> list[Any]:
    """The ``function_call`` items of a Responses ``Response`` (or of its ``output`` list)."""
    output = response if isinstance(response, list | tuple) else _optional(response, "output")
    return [item for item in output or () if _optional(item, "type") == "function_call"]


def tool_uses_of(message: object) -> list[Any]:
    """The ``tool_use`` blocks of an Anthropic ``Message`` (or of its ``content`` list)."""
    content = message if isinstance(message, list | tuple) else _optional(message, "content")
    return [block for block in content or () if _optional(block, "type") == "tool_use"]
