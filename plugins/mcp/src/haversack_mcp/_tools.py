"""One server's section: its tools as Haversack tools, with their schemas and annotations."""

from __future__ import annotations

import contextlib
import json
import logging
import re
from typing import TYPE_CHECKING, Any

from haversack import (
    Audio,
    Content,
    EmbeddedResource,
    HaversackError,
    Image,
    InteractionError,
    JsonArguments,
    JsonResult,
    MarkdownSection,
    PromptValidationError,
    Text,
    Tool,
    ToolAnnotations,
    ToolContext,
    ToolResult,
    json_schema_params,
    json_schema_result,
    max_description,
)

from ._connection import McpConnections, list_servers, where
from ._errors import McpServerError

if TYPE_CHECKING:
    from ._config import McpConfig, McpServer
    from ._connection import Listing

__all__ = ["server_section", "server_sections", "tool_name"]

_INVALID = re.compile(r"[^a-z0-9_-]+")
_CAMEL = re.compile(r"(?<=[a-z0-9])(?=[A-Z])")
_MAX_INSTRUCTIONS = 4000
#: What MCP allows in a tool name (SEP-986, plus '/' that some servers use): anything else
#: (empty, control, bidi or other non-ASCII characters) is a hostile or broken name.
_SERVER_TOOL_NAME = re.compile(r"[A-Za-z0-9_.\-/]{1,128}")
#: Characters a tool description may not hold (the core refuses them).
_CONTROL = re.compile(r"[\x00-\x08\x0b-\x1f\x7f-\x9f]")
_log = logging.getLogger("haversack.mcp")


def tool_name(prefix: str, original: str) -> str:
    """The Haversack name of a server's tool: prefix + the name in lowercase snake case
    (``getTinyImage`` -> ``get_tiny_image``; other characters become ``_``)."""
    snake = _CAMEL.sub("_", original).lower()
    return prefix + _INVALID.sub("_", snake).strip("_")


# Keywords that say nothing about validity (the fast check may ignore them).
_NOTES = frozenset({"$schema", "$id", "title", "description", "default", "examples", "$comment"})
# JSON types whose Python values the fast check recognises exactly as jsonschema does.
_TYPES: dict[str, tuple[type, ...]] = {"string": (str,), "boolean": (bool,), "array": (list,)}


def _fast_check(schema: dict[str, Any]) -> Any:
    """A check that only *accepts* arguments of the plainest schemas, or ``None``.

    Most servers describe a flat object of strings (``{"type": "object", "properties":
    {...}, "required": [...]}``); jsonschema walks such a schema for ~20 us per call. This
    accepts exactly what jsonschema would accept for it; anything else (a wrong type, a
    missing field, any keyword beyond these) goes to jsonschema, which words the error.
    """
    if set(schema) - _NOTES - {"type", "properties", "required"} or schema.get("type") != "object":
        return None
    properties = schema.get("properties", {})
    required = schema.get("required", [])
    if not isinstance(properties, dict) or not isinstance(required, list):
        return None
    kinds: dict[str, tuple[type, ...]] = {}
    for key, spec in properties.items():
        if not isinstance(spec, dict) or set(spec) - _NOTES - {"type"}:
            return None
        name = spec.get("type")
        kind = _TYPES.get(name) if isinstance(name, str) else None
        if kind is None:
            return None
        kinds[key] = kind
    needed = tuple(required)

    def accepts(value: dict[str, Any]) -> bool:
        for key in needed:
            if key not in value:
                return False
        for key, item in value.items():
            kind = kinds.get(key)
            if kind is not None and type(item) not in kind:
                return False
        return True

    return accepts


def _has_keys(node: Any, keys: set[str]) -> bool:
    """Whether any object in ``node`` (a JSON value) has one of ``keys``."""
    stack = [node]
    while stack:
        item = stack.pop()
        if isinstance(item, dict):
            if not keys.isdisjoint(item):
                return True
            stack.extend(item.values())
        elif isinstance(item, list):
            stack.extend(item)
    return False


def _validator(schema: dict[str, Any]) -> Any:
    from jsonschema import validators  # type: ignore[import-untyped]

    from ._patterns import linear_validator

    if _has_keys(schema, {"unevaluatedProperties", "unevaluatedItems"}) and _has_keys(
        schema, {"patternProperties"}
    ):
        # jsonschema matches patternProperties with Python's backtracking re while working
        # out what is evaluated; no local check is better than one a pattern can stall.
        return None
    try:
        cls = validators.validator_for(schema)
        cls.check_schema(schema)
        checker = linear_validator(cls)(schema)
    except Exception:  # noqa: BLE001 - an invalid schema: the server validates its input
        return None
    accepts = _fast_check(schema)

    def validate(value: dict[str, Any]) -> str | None:
        if accepts is not None and accepts(value):
            return None
        error = next(iter(checker.iter_errors(value)), None)
        if error is None:
            return None
        at = ".".join(str(p) for p in error.absolute_path)
        return f"field '{at}': {error.message}" if at else error.message

    return validate


def _annotations(tool: Any) -> ToolAnnotations:
    hints = tool.annotations
    title = _title(tool)
    if hints is None:
        # MCP's defaults: not read-only, destructive, open-world.
        return ToolAnnotations(read_only=False, open_world=True, title=title)
    return ToolAnnotations(
        read_only=bool(hints.read_only_hint),
        destructive=hints.destructive_hint,
        idempotent=hints.idempotent_hint,
        open_world=True if hints.open_world_hint is None else hints.open_world_hint,
        title=title,
    )


_MAX_TITLE = 200


def _title(tool: Any) -> str | None:
    """The server's title for people (``title``, else its annotations' ``title``), one
    line, controls removed, at most :data:`_MAX_TITLE` characters."""
    hints = tool.annotations
    given = getattr(tool, "title", None) or (getattr(hints, "title", None) if hints else None)
    if not isinstance(given, str):
        return None
    text = " ".join(_CONTROL.sub(" ", given).split())
    return _clip(text, _MAX_TITLE) or None


def _result_type(local: str, name: str, item: Any) -> type[JsonResult]:
    """The result type carrying the server's ``outputSchema``; a schema Haversack cannot
    use (not an object, not a valid schema, too large) is left out, with a warning: the
    tool is still offered, its structured results pass through unchecked by the schema."""
    schema = getattr(item, "output_schema", None)
    if schema is None:
        return JsonResult
    try:
        if len(json.dumps(schema)) > _MAX_OUTPUT_SCHEMA_CHARS:
            raise PromptValidationError(
                f"{len(json.dumps(schema)):,} characters, over {_MAX_OUTPUT_SCHEMA_CHARS:,}"
            )
        from jsonschema import validators

        validators.validator_for(schema).check_schema(schema)
        return json_schema_result(local, schema)
    except Exception as exc:  # noqa: BLE001 - the schema is left out, the tool kept
        _log.warning(
            "MCP server %r: the output schema of %r is left out (%s)",
            name,
            _clip(str(item.name), 60),
            _clip(str(exc), 200),
        )
        return JsonResult


#: The largest output schema passed on, as JSON text.
_MAX_OUTPUT_SCHEMA_CHARS = 100_000


def render_content(result: Any) -> str:
    """The text of a ``CallToolResult``: text blocks as they are, other blocks described,
    ``structuredContent`` as JSON when there is no text."""
    parts: list[str] = []
    for block in result.content:
        kind = getattr(block, "type", "")
        if kind == "text":
            parts.append(block.text)
        elif kind in ("image", "audio"):
            size = len(getattr(block, "data", "") or "")
            parts.append(f"[{kind} {block.mime_type}, {size} base64 characters not shown]")
        elif kind == "resource_link":
            parts.append(f"[resource link {block.uri}]")
        elif kind == "resource":
            resource = block.resource
            text = getattr(resource, "text", None)
            parts.append(text if text is not None else f"[binary resource {resource.uri}]")
        else:
            parts.append(f"[{kind or 'unknown'} content not shown]")
    if not parts and result.structured_content is not None:
        parts.append(json.dumps(result.structured_content, ensure_ascii=False))
    return "\n".join(parts)


def cut_result(text: str, limit: int) -> str:
    """``text``, or its first ``limit`` characters and a note telling the model it was cut."""
    if len(text) <= limit:
        return text
    return (
        text[:limit] + f"\n\n[Result cut: the server sent {len(text):,} characters; only the first "
        f"{limit:,} are shown (max_result_chars). Ask for a smaller part if you need more.]"
    )


def _handler(server: str, tool: str, result_type: type[JsonResult], check: Any) -> Any:
    async def handler(params: JsonArguments, *, context: ToolContext) -> ToolResult[JsonResult]:
        connection = context.resources.get(McpConnections).get(server)
        progress = None if context.interaction is None else _progress_to(context)
        try:
            result = await connection.call(tool, params.arguments, progress)
        except TimeoutError:
            return ToolResult.error(
                f"{where(server, connection.server)} did not finish {tool!r} within "
                f"{connection.server.timeout_s:g} s; the call was cancelled on the server."
            )
        except McpServerError as exc:
            return ToolResult.error(str(exc))
        except Exception as exc:
            from mcp.shared.exceptions import MCPError

            if not isinstance(exc, MCPError):
                raise
            return ToolResult.error(
                f"{where(server, connection.server)} refused {tool!r}: {exc.message} "
                f"(JSON-RPC error {exc.code})."
            )
        limit = connection.server.max_result_chars
        text = cut_result(render_content(result), limit)
        if result.is_error:
            return ToolResult.error(text or f"{tool!r} failed on MCP server {server!r}.")
        structured = result.structured_content
        if structured is not None:
            size = len(json.dumps(structured, ensure_ascii=False, default=repr))
            if size > limit:
                return ToolResult.error(
                    f"{where(server, connection.server)} answered {tool!r} with a structured "
                    f"result of {size:,} characters, over max_result_chars ({limit:,}); it "
                    "was not used. Ask for less at a time."
                )
        if result_type.output_schema is not None:
            problem = (
                "it has none"
                if structured is None
                else check(structured)
                if check is not None
                else None
            )
            if problem is not None:
                return ToolResult.error(
                    f"{where(server, connection.server)} answered {tool!r} with a structured "
                    f"result that breaks its own output schema ({_clip(problem, 300)}); the "
                    "result was not used."
                )
        return ToolResult.ok(result_type(structured, content_of(result, limit)), text)

    return handler


def _progress_to(context: ToolContext) -> Any:
    """The SDK progress callback that hands the server's progress to ``context`` (a value
    that is not a finite number is the server's bug: dropped)."""

    async def on_progress(progress: float, total: float | None, message: str | None) -> None:
        with contextlib.suppress(InteractionError):
            context.report_progress(progress, total, message)

    return on_progress


def content_of(result: Any, limit: int) -> tuple[Content, ...]:
    """The result's content blocks as Haversack content, for serving them again: text cut
    to ``limit`` characters in all (as the model's text is), a block that cannot be used
    (bad base64, over :data:`~haversack.MAX_CONTENT_BYTES`, a bad MIME type) replaced by a
    text saying so."""
    import base64
    import binascii

    out: list[Content] = []
    left = limit
    for block in result.content:
        kind = getattr(block, "type", "")
        try:
            if kind == "text":
                if left <= 0:
                    continue
                text = block.text
                if len(text) > left:
                    text = text[:left] + f"\n\n[Text cut at max_result_chars ({limit:,}).]"
                left -= len(block.text)
                out.append(Text(text))
            elif kind in ("image", "audio"):
                data = base64.b64decode(block.data, validate=True)
                made = Image if kind == "image" else Audio
                out.append(made(data, block.mime_type))
            elif kind == "resource":
                resource = block.resource
                blob = getattr(resource, "blob", None)
                out.append(
                    EmbeddedResource(
                        str(resource.uri),
                        resource.mime_type,
                        text=getattr(resource, "text", None),
                        blob=None if blob is None else base64.b64decode(blob, validate=True),
                    )
                )
            elif kind == "resource_link":
                out.append(Text(f"[resource link {block.uri}]"))
            else:
                out.append(Text(f"[{kind or 'unknown'} content not shown]"))
        except (HaversackError, binascii.Error, ValueError) as exc:
            out.append(Text(f"[{kind} content left out: {str(exc)[:200]}]"))
    return tuple(out)


def server_sections(config: McpConfig) -> list[MarkdownSection[None]]:
    """One section per configured server; each server is started once to list its tools."""
    sections: list[MarkdownSection[None]] = []
    owners: dict[str, str] = {}
    listings = list_servers(config.servers)
    for name, server in config.servers.items():
        section = server_section(name, server, listings[name])
        for tool in section.tools:
            other = owners.setdefault(tool.name, name)
            if other != name:
                # Clashes with other packs are the core's to report; two servers of this
                # pack are this pack's, and only the configuration can fix them.
                raise McpServerError(
                    f"MCP servers {other!r} and {name!r} both give a tool named "
                    f"{tool.name!r}; set a different prefix on one of them.",
                    pack="mcp",
                )
        sections.append(section)
    return sections


def _clip(text: str, limit: int) -> str:
    return text if len(text) <= limit else text[: limit - 3] + "..."


def _tool(name: str, prefix: str, item: Any, seen: dict[str, str]) -> Tool[Any, Any]:
    """The Haversack tool for the server's ``item``; :class:`PromptValidationError` when its
    name, schema or description cannot make one."""
    if not isinstance(item.name, str) or not _SERVER_TOOL_NAME.fullmatch(item.name):
        raise PromptValidationError(
            "not a valid MCP tool name (1-128 of A-Z, a-z, 0-9, '_', '-', '.', '/')"
        )
    local = tool_name(prefix, item.name)
    if local == prefix:
        raise PromptValidationError("no letter or digit to name it by")
    if local in seen:
        raise PromptValidationError(f"{seen[local]!r} already became {local!r}")
    schema = dict(item.input_schema or {"type": "object"})
    params = json_schema_params(local, schema, _validator(schema))
    description = " ".join(_CONTROL.sub(" ", item.description or item.title or "").split()) or (
        f"The {item.name!r} tool of MCP server {name!r}."
    )
    limit = max_description()
    if len(description) > limit:
        # The core's limit (HAVERSACK_MAX_DESCRIPTION, OpenAI's 1,024 by default): the
        # server's longer text is cut rather than the tool refused.
        description = description[: limit - 3].rstrip() + "..."
    result_type = _result_type(local, name, item)
    # The server's own schema, not the inlined copy: it checks recursion as it was written.
    check = None if result_type.output_schema is None else _validator(dict(item.output_schema))
    made = Tool[params, result_type](  # type: ignore[valid-type]
        name=local,
        description=description,
        handler=_handler(name, item.name, result_type, check),
        annotations=_annotations(item),
    )
    seen[local] = item.name
    return made


def server_section(name: str, server: McpServer, listing: Listing) -> MarkdownSection[None]:
    """The section of the server configured as ``name``: its selected tools, the server's
    instructions, and what a failed call does and does not undo."""
    prefix = "" if server.prefix == "-" else (server.prefix or f"{name}_")
    offered = {t.name for t in listing.tools}
    for wanted in (*server.tools, *server.exclude_tools):
        if wanted not in offered:
            raise McpServerError(
                f"The MCP pack's servers.{name} names tool {wanted!r}, which "
                f"{where(name, server)} does not offer; it offers: "
                f"{_clip(', '.join(sorted(offered)[:50]), 2000) or 'no tools'}.",
                pack="mcp",
            )
    wanted_names, excluded = set(server.tools), set(server.exclude_tools)
    selected = [
        t
        for t in listing.tools
        if (not wanted_names or t.name in wanted_names) and t.name not in excluded
    ]
    tools: list[Tool[Any, Any]] = []
    seen: dict[str, str] = {}
    left_out: list[str] = []
    for index, item in enumerate(selected):
        if len(tools) == server.max_tools:
            left_out.insert(
                0,
                f"{len(selected) - index} past max_tools={server.max_tools} (choose them "
                "with tools or exclude_tools, or raise max_tools)",
            )
            break
        try:
            tools.append(_tool(name, prefix, item, seen))
        except PromptValidationError as exc:
            left_out.append(f"{_clip(repr(item.name), 60)} ({_clip(str(exc), 160)})")
    if left_out:
        # One bad tool must not cost the others (or the other servers): it is left out and
        # reported, briefly, as the server may have sent kilobytes of name.
        _log.warning(
            "%s: left out %d tool(s): %s",
            where(name, server),
            len(left_out),
            "; ".join(left_out[:10]) + ("; ..." if len(left_out) > 10 else ""),
        )
    lines = [
        f"These tools come from the external MCP server `{name}`: "
        + ", ".join(f"${{tool:{t.name}}}" for t in tools)
        + ".",
        "",
        "They act outside this session: when a call fails, your session state and the local "
        "workspace are rolled back, but nothing the server already did is undone.",
    ]
    instructions = listing.instructions.strip()
    if instructions:
        if len(instructions) > _MAX_INSTRUCTIONS:
            instructions = instructions[:_MAX_INSTRUCTIONS] + " [...]"
        lines += ["", "The server's own instructions:", ""]
        lines += [
            "> " + line if line else ">" for line in instructions.replace("$", "$$").splitlines()
        ]
    return MarkdownSection(
        title=f"MCP server {name}",
        key=f"mcp-{name}",
        template="\n".join(lines),
        tools=tools,
    )
