"""Images, audio, embedded resources and mixed content as MCP content blocks, read back
with the official ``mcp`` client from the real server over stdio."""

from __future__ import annotations

import base64
import sys
from pathlib import Path

import anyio
import mcp.types as types
import pytest
from mcp import ClientSession, StdioServerParameters
from mcp.client.stdio import stdio_client

from haversack import (
    MAX_CONTENT_BYTES,
    Audio,
    EmbeddedResource,
    HaversackError,
    Image,
    Text,
    ToolResult,
)

SCRIPT = Path(__file__).with_name("media_server.py")
sys.path.insert(0, str(SCRIPT.parent))
from media_server import PNG, WAV  # noqa: E402


def _call(*calls: tuple[str, dict]) -> tuple[list[types.Tool], list[types.CallToolResult]]:
    out: list[types.CallToolResult] = []
    listed: list[types.Tool] = []

    async def scenario():
        params = StdioServerParameters(command=sys.executable, args=[str(SCRIPT)])
        async with stdio_client(params) as (read, write), ClientSession(read, write) as client:
            await client.initialize()
            listed.extend((await client.list_tools()).tools)
            for name, arguments in calls:
                out.append(await client.call_tool(name, arguments))

    anyio.run(scenario)
    return listed, out


def test_media_come_back_as_their_own_content_blocks():
    tools, (image, mixed) = _call(("image", {}), ("mixed", {}))
    # Media carry no structured JSON: no outputSchema, no structuredContent.
    assert all(tool.output_schema is None for tool in tools if tool.name in {"image", "mixed"})

    assert not image.is_error
    assert image.structured_content is None
    (block,) = image.content  # an empty message adds no text block
    assert isinstance(block, types.ImageContent)
    assert block.mime_type == "image/png"
    assert base64.b64decode(block.data) == PNG

    assert not mixed.is_error
    message, text, picture, sound, doc, blob = mixed.content
    assert isinstance(message, types.TextContent)
    assert message.text == "made 5 blocks"
    assert isinstance(text, types.TextContent)
    assert text.text == "Here is the chart and its sound."
    assert isinstance(picture, types.ImageContent)
    assert base64.b64decode(picture.data) == PNG
    assert isinstance(sound, types.AudioContent)
    assert sound.mime_type == "audio/wav"
    assert base64.b64decode(sound.data) == WAV
    assert isinstance(doc, types.EmbeddedResource)
    assert isinstance(doc.resource, types.TextResourceContents)
    assert str(doc.resource.uri) == "file:///notes.md"
    assert doc.resource.mime_type == "text/markdown"
    assert doc.resource.text == "# Notes\n"
    assert isinstance(blob.resource, types.BlobResourceContents)
    assert base64.b64decode(blob.resource.blob) == b"\x00\xff"


def test_media_over_the_cap_are_refused_or_left_out_with_a_note():
    _, (huge, many) = _call(
        ("too_big", {"size": MAX_CONTENT_BYTES + 1}),
        ("many", {"size": 3}),
    )
    # One block over the cap: the handler's Image(...) raises, the call is an error result.
    assert huge.is_error
    assert f"at most {MAX_CONTENT_BYTES}" in huge.content[0].text
    # Three blocks of half the cap each: the first goes, the rest are named in a note.
    assert not many.is_error
    assert [type(b) for b in many.content] == [
        types.TextContent,
        types.ImageContent,
        types.TextContent,
    ]
    assert "2 more content blocks left out" in many.content[2].text


def test_other_providers_see_a_short_placeholder():
    result = ToolResult.ok(
        [Text("chart:"), Image(PNG, "image/png"), Audio(b"abc", "audio/mpeg")], message="done"
    )
    assert result.render() == (
        f"done\nchart:\n[image/png, {len(PNG)} bytes]\n[audio/mpeg, 3 bytes]"
    )
    doc = EmbeddedResource("file:///a.txt", "text/plain", text="hello")
    assert ToolResult.ok(doc).render() == "OK\n[resource file:///a.txt, text/plain, 5 bytes]"


@pytest.mark.parametrize(
    ("make", "says"),
    [
        (lambda: Image("not bytes", "image/png"), "must be bytes"),
        (lambda: Image(b"x", "audio/wav"), "must be image/*"),
        (lambda: Audio(b"x", "audio wav"), "MIME type"),
        (lambda: EmbeddedResource("file:///x"), "exactly one of text and blob"),
        (lambda: EmbeddedResource("file:///x", text="a", blob=b"b"), "exactly one"),
        (lambda: EmbeddedResource("a b", text="a"), "spaces or controls"),
        (lambda: Text("x" * (MAX_CONTENT_BYTES + 1)), f"at most {MAX_CONTENT_BYTES}"),
    ],
)
def test_malformed_content_is_refused_when_made(make, says):
    with pytest.raises(HaversackError, match=says):
        make()


def test_a_flood_of_empty_blocks_is_bounded_too():
    """Each block counts BLOCK_OVERHEAD bytes besides its own: 200,000 empty images (no
    bytes at all) still make a message within the cap, ending in the note."""
    import json

    from haversack.adapters import mcp as mcp_format

    flood = [Image(b"", "image/png")] * 200_000
    out = mcp_format.call_result(ToolResult.ok(flood, message=""))
    kept = MAX_CONTENT_BYTES // mcp_format.BLOCK_OVERHEAD
    assert len(out["content"]) == kept + 1
    assert out["content"][-1]["text"].startswith(f"[{200_000 - kept} more content blocks")
    assert len(json.dumps(out)) <= MAX_CONTENT_BYTES
