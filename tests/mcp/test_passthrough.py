"""What an upstream MCP server gives survives being served again through Haversack: a real
MCP client (the official SDK) talks to ``serve_stdio`` of the mcp pack, which talks to a
real upstream server (rich_server.py, the SDK's own server) in a subprocess."""

from __future__ import annotations

import base64
import logging
import sys
import time
from collections.abc import AsyncIterator
from contextlib import asynccontextmanager
from pathlib import Path

import pytest
from mcp import ClientSession, StdioServerParameters
from mcp.client.stdio import stdio_client

from haversack import compose
from haversack.server._channel import PROGRESS_BURST, PROGRESS_PER_S

HERE = Path(__file__).parent
PROXY = HERE / "proxy_server.py"
RICH = HERE / "rich_server.py"


@asynccontextmanager
async def proxy() -> AsyncIterator[ClientSession]:
    params = StdioServerParameters(command=sys.executable, args=[str(PROXY)])
    async with stdio_client(params) as (read, write), ClientSession(read, write) as client:
        await client.initialize()
        yield client


@pytest.fixture(scope="module")
def listed():
    import anyio

    async def main():
        async with proxy() as client:
            return {tool.name: tool for tool in (await client.list_tools()).tools}

    return anyio.run(main)


def test_titles_and_output_schemas_pass_through(listed):
    weather = listed["weather"]
    assert weather.title == "Weather Report"
    assert weather.output_schema["properties"] == {
        "city": {"type": "string"},
        "celsius": {"type": "number"},
    }
    assert weather.output_schema["required"] == ["city", "celsius"]
    assert listed["media"].title == "Media Sampler"
    assert listed["count"].title == "Count"  # none given: the name in words
    assert listed["count"].output_schema is None


def test_an_unusable_output_schema_is_left_out_and_the_tool_kept(listed, caplog):
    assert listed["huge"].output_schema is None
    with caplog.at_level(logging.WARNING, logger="haversack.mcp"):
        compose(
            ns="t",
            key="k",
            packs=["mcp"],
            config={"mcp": {"servers": {"rich": {"command": [sys.executable, str(RICH)]}}}},
            strict=True,
        )
    assert "the output schema of 'huge' is left out" in caplog.text


@pytest.mark.anyio
async def test_structured_results_pass_through_and_validate_on_the_client():
    async with proxy() as client:
        result = await client.call_tool("weather", {"city": "Bergen"})
    assert not result.is_error
    assert result.structured_content == {"city": "Bergen", "celsius": 21.5}
    assert [block.text for block in result.content] == ["Bergen: 21.5 C"]


@pytest.mark.anyio
async def test_images_audio_and_embedded_resources_pass_through():
    async with proxy() as client:
        result = await client.call_tool("media", {})
    kinds = [block.type for block in result.content]
    assert kinds == ["text", "image", "audio", "resource", "resource"]
    image, audio = result.content[1], result.content[2]
    assert base64.b64decode(image.data) == b"\x89PNG\r\n\x1a\nfake-image-bytes"
    assert image.mime_type == "image/png"
    assert base64.b64decode(audio.data) == b"RIFF....WAVEfake-audio"
    text_resource, blob_resource = result.content[3].resource, result.content[4].resource
    assert (str(text_resource.uri), text_resource.text) == ("file:///notes.txt", "a note")
    assert base64.b64decode(blob_resource.blob) == b"\x89PNG\r\n\x1a\nfake-image-bytes"


@pytest.mark.anyio
async def test_upstream_progress_reaches_the_client():
    seen = []

    async def on_progress(progress, total, message):
        seen.append((progress, total, message))

    async with proxy() as client:
        result = await client.call_tool("count", {}, progress_callback=on_progress)
    assert result.content[0].text == "counted"
    assert seen == [(1, 3, "step 1"), (2, 3, "step 2"), (3, 3, "step 3")]


@pytest.mark.anyio
async def test_an_upstream_progress_flood_is_bounded():
    seen = []

    async def on_progress(progress, total, message):
        seen.append(progress)

    async with proxy() as client:
        started = time.monotonic()
        result = await client.call_tool("flood", {}, progress_callback=on_progress)
        took = time.monotonic() - started
    assert result.content[0].text == "flooded"
    assert seen[-1] == 3_000  # the newest always arrives
    assert seen == sorted(set(seen))
    # The rate the proxy allows (a burst, then PROGRESS_PER_S), whatever the upstream sends;
    # a bound that grows with the time taken, so a slow machine cannot fail it.
    assert len(seen) <= PROGRESS_BURST + PROGRESS_PER_S * took + 1, (len(seen), took)
    assert len(seen) < 3_000


@pytest.mark.anyio
async def test_structured_content_breaking_its_schema_is_a_clear_error_not_a_restart():
    async with proxy() as client:
        lie = await client.call_tool("liar", {})
        after = await client.call_tool("weather", {"city": "Oslo"})
    assert lie.is_error
    text = lie.content[0].text
    assert "breaks its own output schema" in text
    assert "closed the connection" not in text
    assert after.structured_content == {"city": "Oslo", "celsius": 21.5}


@pytest.mark.anyio
async def test_bad_media_is_replaced_by_a_note():
    async with proxy() as client:
        result = await client.call_tool("bad_media", {})
    assert not result.is_error
    assert result.content[0].type == "text"
    assert result.content[0].text.startswith("[image content left out: ")


@pytest.mark.anyio
async def test_a_backtracking_pattern_in_an_output_schema_is_checked_in_linear_time():
    import anyio

    async with proxy() as client:
        # Python's re would take ~2**60 steps on this; RE2 answers at once. The guard only
        # bounds a broken run.
        with anyio.fail_after(120):
            result = await client.call_tool("backtrack", {})
    assert result.is_error
    assert "breaks its own output schema" in result.content[0].text
    assert "does not match '^(a|aa)+$'" in result.content[0].text
