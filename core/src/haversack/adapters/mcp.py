"""Model Context Protocol format (plain dicts; the MCP server builds SDK objects from them)."""

from __future__ import annotations

from typing import TYPE_CHECKING, Any

from ._common import tool_definition

if TYPE_CHECKING:
    from haversack._prompt import RenderedPrompt
    from haversack._result import ToolResult
    from haversack._tool import Tool, ToolAnnotations

__all__ = ["annotation_hints", "call_result", "tool", "tools"]


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


def tool(item: Tool[Any, Any]) -> dict[str, Any]:
    """One MCP ``Tool``: ``name``, ``description``, ``inputSchema`` and ``annotations``."""
    d = tool_definition(item)
    return {
        "name": d.name,
        "description": d.description,
        "inputSchema": d.parameters,
        "annotations": annotation_hints(item.annotations),
    }


def tools(rendered: RenderedPrompt) -> list[dict[str, Any]]:
    """Every tool of ``rendered`` as an MCP ``Tool`` dict, in prompt order."""
    return [tool(item) for item in rendered.tools]


def call_result(result: ToolResult[Any]) -> dict[str, Any]:
    """An MCP ``CallToolResult``: the rendered text, ``isError`` on failure (a tool failure is
    a result the model sees, not a protocol error)."""
    return {"content": [{"type": "text", "text": result.render()}], "isError": not result.success}
