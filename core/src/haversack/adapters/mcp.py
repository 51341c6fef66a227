"""Model Context Protocol format (plain dicts; the MCP server builds SDK objects from them)."""

from __future__ import annotations

from typing import TYPE_CHECKING, Any

from haversack import serde

from ._common import tool_definition

if TYPE_CHECKING:
    from haversack._prompt import RenderedPrompt
    from haversack._result import ToolResult
    from haversack._tool import Tool, ToolAnnotations

__all__ = [
    "annotation_hints",
    "call_result",
    "output_schema",
    "structured_content",
    "title",
    "tool",
    "tools",
]


def annotation_hints(hints: ToolAnnotations) -> dict[str, bool]:
    """MCP tool annotations; hints left unspecified (``None``) are omitted."""
    out = {"readOnlyHint": hints.read_only}
    for key, value in (
        ("destructiveHint", hints.destructive),
        ("idempotentHint", hints.idempotent),
        ("openWorldHint", hints.open_world),
    ):
        if value is not None:
            out[key] = value
    if hints.read_only and "destructiveHint" not in out:
        out["destructiveHint"] = False  # MCP's default is destructive; a reader is not
    return out


def title(item: Tool[Any, Any]) -> str:
    """A display title for ``item``: its name in words (``read_file`` -> ``Read file``).

    Tools have no separate title; the name is what the model and the instructions use,
    so the title says the same thing in a form clients can show.
    """
    words = item.name.replace("_", " ").replace("-", " ").strip()
    return words[:1].upper() + words[1:]


def output_schema(item: Tool[Any, Any]) -> dict[str, Any] | None:
    """The MCP ``outputSchema`` of ``item``: its result dataclass's schema, a sequence of
    them wrapped as ``{"items": [...]}`` (MCP wants an object), ``None`` for no result."""
    if item.result_type is None:
        return None
    schema = serde.schema(item.result_type)
    if not item.result_is_sequence:
        return schema
    return {
        "type": "object",
        "properties": {"items": {"type": "array", "items": schema}},
        "required": ["items"],
        "additionalProperties": False,
    }


def structured_content(item: Tool[Any, Any], result: ToolResult[Any]) -> dict[str, Any] | None:
    """The ``structuredContent`` matching :func:`output_schema`, or ``None`` when the tool
    declares no result type, the call failed, or it returned no value."""
    if item.result_type is None or not result.success or result.value is None:
        return None
    dumped = serde.dump(result.value)
    return {"items": dumped} if item.result_is_sequence else dumped


def tool(item: Tool[Any, Any]) -> dict[str, Any]:
    """One MCP ``Tool``: ``name``, ``title``, ``description``, ``inputSchema``,
    ``outputSchema`` (tools with a result type) and ``annotations``."""
    d = tool_definition(item)
    out: dict[str, Any] = {
        "name": d.name,
        "title": title(item),
        "description": d.description,
        "inputSchema": d.parameters,
        "annotations": annotation_hints(item.annotations),
    }
    schema = output_schema(item)
    if schema is not None:
        out["outputSchema"] = schema
    return out


def tools(rendered: RenderedPrompt) -> list[dict[str, Any]]:
    """Every tool of ``rendered`` as an MCP ``Tool`` dict, in prompt order."""
    return [tool(item) for item in rendered.tools]


def call_result(result: ToolResult[Any], item: Tool[Any, Any] | None = None) -> dict[str, Any]:
    """An MCP ``CallToolResult``: the rendered text, ``isError`` on failure (a tool failure is
    a result the model sees, not a protocol error), and with ``item`` given, the value as
    ``structuredContent`` (see :func:`structured_content`)."""
    out: dict[str, Any] = {
        "content": [{"type": "text", "text": result.render()}],
        "isError": not result.success,
    }
    if item is not None:
        structured = structured_content(item, result)
        if structured is not None:
            out["structuredContent"] = structured
    return out
