"""Model Context Protocol format (plain dicts; the MCP server builds SDK objects from them)."""

from __future__ import annotations

import copy
from typing import TYPE_CHECKING, Any

from haversack import serde
from haversack._content import (
    MAX_CONTENT_BYTES,
    Audio,
    Content,
    EmbeddedResource,
    Image,
    Text,
    content_blocks,
)
from haversack._json_params import JsonResult

from ._common import tool_definition

if TYPE_CHECKING:
    from haversack._prompt import RenderedPrompt
    from haversack._result import ToolResult
    from haversack._tool import Tool, ToolAnnotations

__all__ = [
    "BLOCK_OVERHEAD",
    "annotation_hints",
    "call_result",
    "media_blocks",
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
    given = item.annotations.title
    if given:
        return given
    words = item.name.replace("_", " ").replace("-", " ").strip()
    return words[:1].upper() + words[1:]


def output_schema(item: Tool[Any, Any]) -> dict[str, Any] | None:
    """The MCP ``outputSchema`` of ``item``: its result dataclass's schema, a sequence of
    them wrapped as ``{"items": [...]}`` (MCP wants an object), ``None`` for no result."""
    if item.result_type is None or issubclass(item.result_type, Content):
        return None  # media go as content blocks, not as structured JSON
    if issubclass(item.result_type, JsonResult):
        schema = item.result_type.output_schema  # an external server's, as it gave it
        return None if schema is None else copy.deepcopy(schema)
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
    value = result.value
    if isinstance(value, JsonResult):
        # An external server's structured result passes through, schema or not.
        return value.structured if result.success else None
    if output_schema(item) is None or not result.success or value is None:
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
    """An MCP ``CallToolResult``: the rendered text (or, for a value of
    :class:`~haversack.Content` blocks, the message then one MCP block each, see
    :func:`media_blocks`), ``isError`` on failure (a tool failure is a result the model
    sees, not a protocol error), and with ``item`` given, the value as
    ``structuredContent`` (see :func:`structured_content`)."""
    value = result.value
    passed = value.content if isinstance(value, JsonResult) else ()
    blocks = None if result.exclude_value_from_context else content_blocks(value)
    content: list[dict[str, Any]]
    if passed and result.success and not result.exclude_value_from_context:
        # An external server's blocks, as it sent them: the message is the text made of them.
        content = media_blocks(passed)
    elif blocks is None:
        content = [{"type": "text", "text": result.render()}]
    else:
        content = [{"type": "text", "text": result.message}] if result.message else []
        content += media_blocks(blocks)
    out: dict[str, Any] = {"content": content, "isError": not result.success}
    if item is not None:
        structured = structured_content(item, result)
        if structured is not None:
            out["structuredContent"] = structured
    return out


BLOCK_OVERHEAD = 100
"""What each content block counts against the cap besides its bytes."""


def media_blocks(blocks: tuple[Content, ...]) -> list[dict[str, Any]]:
    """MCP content blocks for ``blocks``, binary data base64-encoded. Once the blocks hold
    more than :data:`~haversack.MAX_CONTENT_BYTES` together (each counts its bytes plus
    ``BLOCK_OVERHEAD``, so a flood of empty blocks is bounded too), the rest are replaced by
    one text block saying how many were left out."""
    import base64

    out: list[dict[str, Any]] = []
    total = 0
    for index, block in enumerate(blocks):
        total += block.size() + BLOCK_OVERHEAD
        if total > MAX_CONTENT_BYTES:
            out.append(
                {
                    "type": "text",
                    "text": f"[{len(blocks) - index} more content blocks left out: a "
                    f"result's media may hold at most {MAX_CONTENT_BYTES} bytes]",
                }
            )
            break
        if isinstance(block, Text):
            out.append({"type": "text", "text": block.text})
        elif isinstance(block, Image | Audio):
            out.append(
                {
                    "type": "image" if isinstance(block, Image) else "audio",
                    "data": base64.b64encode(block.data).decode("ascii"),
                    "mimeType": block.mime_type,
                }
            )
        elif isinstance(block, EmbeddedResource):
            resource: dict[str, Any] = {"uri": block.uri}
            if block.mime_type is not None:
                resource["mimeType"] = block.mime_type
            if block.text is not None:
                resource["text"] = block.text
            else:
                resource["blob"] = base64.b64encode(block.blob or b"").decode("ascii")
            out.append({"type": "resource", "resource": resource})
        else:
            # A Content subclass of the handler's own: its text is all it has.
            out.append({"type": "text", "text": block.render()})
    return out
