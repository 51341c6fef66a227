"""A prompt whose tools return images, audio, embedded resources and mixed content, served
over stdio for the content-block tests (run as a script, not collected)."""

from __future__ import annotations

import asyncio
from dataclasses import dataclass

from haversack import (
    MAX_CONTENT_BYTES,
    Audio,
    Content,
    EmbeddedResource,
    Image,
    MarkdownSection,
    Prompt,
    Text,
    Tool,
    ToolContext,
    ToolResult,
)
from haversack.server import serve_stdio

PNG = b"\x89PNG\r\n\x1a\n" + bytes(range(256))
WAV = b"RIFF\x00\x00\x00\x00WAVE" + bytes(range(255, -1, -1))


@dataclass(frozen=True)
class SizeParams:
    size: int


def image(params: None, *, context: ToolContext) -> ToolResult[Image]:
    return ToolResult.ok(Image(PNG, "image/png"), message="")


def mixed(params: None, *, context: ToolContext) -> ToolResult[list[Content]]:
    return ToolResult.ok(
        [
            Text("Here is the chart and its sound."),
            Image(PNG, "image/png"),
            Audio(WAV, "audio/wav"),
            EmbeddedResource("file:///notes.md", "text/markdown", text="# Notes\n"),
            EmbeddedResource("file:///data.bin", "application/octet-stream", blob=b"\x00\xff"),
        ],
        message="made 5 blocks",
    )


def too_big(params: SizeParams, *, context: ToolContext) -> ToolResult[Image]:
    return ToolResult.ok(Image(bytes(params.size), "image/png"))


def many(params: SizeParams, *, context: ToolContext) -> ToolResult[list[Image]]:
    # Each image is within the cap; together they are not.
    chunk = MAX_CONTENT_BYTES // 2
    return ToolResult.ok([Image(bytes(chunk), "image/png") for _ in range(params.size)])


section = MarkdownSection(
    title="Media",
    key="media",
    template="Tools that return media.",
    tools=[
        Tool[None, Image](name="image", description="An image.", handler=image),
        Tool[None, list[Content]](name="mixed", description="Mixed blocks.", handler=mixed),
        Tool[SizeParams, Image](name="too_big", description="A huge image.", handler=too_big),
        Tool[SizeParams, list[Image]](name="many", description="Big images.", handler=many),
    ],
)

if __name__ == "__main__":
    asyncio.run(serve_stdio(Prompt(ns="tests", key="media", sections=[section])))
