"""An upstream MCP server (the real SDK's low-level server, stdio) whose tools give what the
proxy must pass on: titles, output schemas with structured results, images, audio,
embedded resources and progress; and a few hostile ones (a progress flood, structured
content breaking its own schema, a huge output schema, bad base64). Run as a script."""

from __future__ import annotations

import base64

import anyio
import mcp_types as types
from mcp.server.lowlevel import Server
from mcp.server.stdio import stdio_server

PNG = base64.b64encode(b"\x89PNG\r\n\x1a\nfake-image-bytes").decode()
WAV = base64.b64encode(b"RIFF....WAVEfake-audio").decode()
WEATHER_SCHEMA = {
    "type": "object",
    "properties": {"city": {"type": "string"}, "celsius": {"type": "number"}},
    "required": ["city", "celsius"],
}
HUGE_SCHEMA = {
    "type": "object",
    "properties": {f"field_{i}": {"type": "string", "description": "x" * 50} for i in range(3000)},
}
EMPTY = {"type": "object"}

TOOLS = [
    types.Tool(
        name="weather",
        title="Weather Report",
        description="The weather in a city.",
        input_schema={"type": "object", "properties": {"city": {"type": "string"}}},
        output_schema=WEATHER_SCHEMA,
    ),
    types.Tool(name="media", title="Media Sampler", description="Media.", input_schema=EMPTY),
    types.Tool(name="count", description="Counts to 3 with progress.", input_schema=EMPTY),
    types.Tool(name="flood", description="Floods progress.", input_schema=EMPTY),
    types.Tool(
        name="liar",
        description="Breaks its own output schema.",
        input_schema=EMPTY,
        output_schema=WEATHER_SCHEMA,
    ),
    types.Tool(
        name="huge",
        description="Huge output schema.",
        input_schema=EMPTY,
        output_schema=HUGE_SCHEMA,
    ),
    types.Tool(name="bad_media", description="Bad base64.", input_schema=EMPTY),
    types.Tool(
        name="backtrack",
        description="A backtracking pattern in its output schema.",
        input_schema=EMPTY,
        output_schema={
            "type": "object",
            "properties": {"s": {"type": "string", "pattern": "^(a|aa)+$"}},
        },
    ),
]


async def list_tools(ctx, params):
    return types.ListToolsResult(tools=TOOLS)


async def call_tool(ctx, params):
    name = params.name
    if name == "weather":
        city = (params.arguments or {}).get("city", "Oslo")
        data = {"city": city, "celsius": 21.5}
        return types.CallToolResult(
            content=[types.TextContent(type="text", text=f"{city}: 21.5 C")],
            structured_content=data,
        )
    if name == "media":
        return types.CallToolResult(
            content=[
                types.TextContent(type="text", text="Here:"),
                types.ImageContent(type="image", data=PNG, mime_type="image/png"),
                types.AudioContent(type="audio", data=WAV, mime_type="audio/wav"),
                types.EmbeddedResource(
                    type="resource",
                    resource=types.TextResourceContents(
                        uri="file:///notes.txt", mime_type="text/plain", text="a note"
                    ),
                ),
                types.EmbeddedResource(
                    type="resource",
                    resource=types.BlobResourceContents(
                        uri="file:///blob.bin", mime_type="application/octet-stream", blob=PNG
                    ),
                ),
            ]
        )
    if name == "count":
        for step in (1, 2, 3):
            await ctx.session.report_progress(step, 3, f"step {step}")
            await anyio.sleep(0.05)
        return types.CallToolResult(content=[types.TextContent(type="text", text="counted")])
    if name == "flood":
        for step in range(1, 3_001):
            await ctx.session.report_progress(step, 3_000)
        return types.CallToolResult(content=[types.TextContent(type="text", text="flooded")])
    if name == "liar":
        return types.CallToolResult(
            content=[types.TextContent(type="text", text="lies")],
            structured_content={"city": 42},
        )
    if name == "huge":
        return types.CallToolResult(
            content=[types.TextContent(type="text", text="huge")], structured_content={}
        )
    if name == "bad_media":
        return types.CallToolResult(
            content=[types.ImageContent(type="image", data="not base64!!", mime_type="image/png")]
        )
    if name == "backtrack":
        return types.CallToolResult(
            content=[types.TextContent(type="text", text="x")],
            structured_content={"s": "a" * 60 + "b"},
        )
    raise ValueError(name)


async def main() -> None:
    server = Server("rich", on_list_tools=list_tools, on_call_tool=call_tool)
    async with stdio_server() as (read, write):
        await server.run(read, write, server.create_initialization_options())


if __name__ == "__main__":
    anyio.run(main)
