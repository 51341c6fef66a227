"""The conformance suite's fixture tools, written as ordinary Haversack tools and served by
``serve_http`` (run as a script; prints its URL on stderr like ``haversack serve``).

The suite's server scenarios call tools by name (test_simple_text, test_image_content, ...);
a server of the bundled packs has none, so this prompt gives them, each on the public API
only: media values, ``ToolContext.ask`` and ``ToolContext.report_progress``."""

from __future__ import annotations

import asyncio
import base64
import json
import time
from dataclasses import dataclass, field

from haversack import (
    Audio,
    Content,
    EmbeddedResource,
    Image,
    MarkdownSection,
    Prompt,
    Text,
    Tool,
    ToolAnnotations,
    ToolContext,
    ToolResult,
)
from haversack.server import HttpSettings, serve_http

# A 1x1 red PNG and a 1-sample WAV.
PNG = base64.b64decode(
    "iVBORw0KGgoAAAANSUhEUgAAAAEAAAABCAYAAAAfFcSJAAAADUlEQVR42mP8z8DwHwAFBQIAX8jx0gAAAABJRU5ErkJggg=="
)
WAV = (
    b"RIFF&\x00\x00\x00WAVEfmt \x10\x00\x00\x00\x01\x00\x01\x00D\xac\x00\x00\x88X\x01\x00"
    b"\x02\x00\x10\x00data\x02\x00\x00\x00\x00\x00"
)
READ = ToolAnnotations(read_only=True)


def simple_text(params: None, *, context: ToolContext) -> ToolResult[None]:
    return ToolResult.ok(None, message="This is a simple text response for testing.")


def image(params: None, *, context: ToolContext) -> ToolResult[Image]:
    return ToolResult.ok(Image(PNG, "image/png"), message="")


def audio(params: None, *, context: ToolContext) -> ToolResult[Audio]:
    return ToolResult.ok(Audio(WAV, "audio/wav"), message="")


def embedded(params: None, *, context: ToolContext) -> ToolResult[EmbeddedResource]:
    resource = EmbeddedResource(
        "test://embedded-resource", "text/plain", text="This is an embedded resource content."
    )
    return ToolResult.ok(resource, message="")


def mixed(params: None, *, context: ToolContext) -> ToolResult[list[Content]]:
    blocks: list[Content] = [
        Text("Multiple content types test:"),
        Image(PNG, "image/png"),
        EmbeddedResource(
            "test://mixed-content-resource",
            "application/json",
            text=json.dumps({"test": "data", "value": 123}),
        ),
    ]
    return ToolResult.ok(blocks, message="")


def error(params: None, *, context: ToolContext) -> ToolResult[None]:
    return ToolResult.error("This tool intentionally returns an error for testing")


def progress(params: None, *, context: ToolContext) -> ToolResult[None]:
    for done in (0, 50, 100):
        context.report_progress(done, 100)
        if done < 100:
            time.sleep(0.05)
    return ToolResult.ok(None, message="Progress test completed.")


@dataclass(frozen=True)
class Message:
    message: str = field(metadata={"description": "The message to show the user"})


def elicitation(params: Message, *, context: ToolContext) -> ToolResult[None]:
    answer = context.ask(
        params.message,
        {
            "type": "object",
            "properties": {
                "username": {"type": "string", "description": "User's response"},
                "email": {"type": "string", "description": "User's email address"},
            },
            "required": ["username", "email"],
        },
    )
    content = json.dumps(dict(answer.content or {}))
    return ToolResult.ok(None, message=f"User response: action={answer.action}, content={content}")


DEFAULTS = {
    "type": "object",
    "properties": {
        "name": {"type": "string", "default": "John Doe"},
        "age": {"type": "integer", "default": 30},
        "score": {"type": "number", "default": 95.5},
        "status": {
            "type": "string",
            "enum": ["active", "inactive", "pending"],
            "default": "active",
        },
        "verified": {"type": "boolean", "default": True},
    },
}

ENUMS = {
    "type": "object",
    "properties": {
        "untitledSingle": {"type": "string", "enum": ["option1", "option2", "option3"]},
        "titledSingle": {
            "type": "string",
            "oneOf": [
                {"const": "value1", "title": "First Option"},
                {"const": "value2", "title": "Second Option"},
                {"const": "value3", "title": "Third Option"},
            ],
        },
        "legacyEnum": {
            "type": "string",
            "enum": ["opt1", "opt2", "opt3"],
            "enumNames": ["Option One", "Option Two", "Option Three"],
        },
        "untitledMulti": {
            "type": "array",
            "items": {"type": "string", "enum": ["option1", "option2", "option3"]},
        },
        "titledMulti": {
            "type": "array",
            "items": {
                "anyOf": [
                    {"const": "value1", "title": "First Choice"},
                    {"const": "value2", "title": "Second Choice"},
                    {"const": "value3", "title": "Third Choice"},
                ]
            },
        },
    },
}


def _asking(schema: dict) -> object:
    async def handler(params: None, *, context: ToolContext) -> ToolResult[None]:
        answer = await context.aask("Please review and update the form fields", schema)
        content = json.dumps(dict(answer.content or {}))
        return ToolResult.ok(
            None, message=f"Elicitation completed: action={answer.action}, content={content}"
        )

    return handler


def _tool(name: str, description: str, handler: object, params=None, result=None, **kw):
    return Tool[params, result](name=name, description=description, handler=handler, **kw)


section = MarkdownSection(
    title="Conformance fixtures",
    key="conformance",
    template="The MCP conformance suite's fixture tools.",
    tools=[
        _tool("test_simple_text", "Returns simple text.", simple_text, annotations=READ),
        _tool("test_image_content", "Returns an image.", image, result=Image, annotations=READ),
        _tool("test_audio_content", "Returns audio.", audio, result=Audio, annotations=READ),
        _tool(
            "test_embedded_resource",
            "Returns an embedded resource.",
            embedded,
            result=EmbeddedResource,
            annotations=READ,
        ),
        _tool(
            "test_multiple_content_types",
            "Returns text, an image and a resource.",
            mixed,
            result=list[Content],
            annotations=READ,
        ),
        _tool("test_error_handling", "Always fails.", error, annotations=READ),
        _tool("test_tool_with_progress", "Reports progress.", progress, annotations=READ),
        _tool("test_elicitation", "Asks the user.", elicitation, params=Message),
        _tool("test_elicitation_sep1034_defaults", "Asks with defaults.", _asking(DEFAULTS)),
        _tool("test_elicitation_sep1330_enums", "Asks with enums.", _asking(ENUMS)),
    ],
)

if __name__ == "__main__":
    prompt = Prompt(ns="tests", key="conformance", sections=[section])
    # The suite cannot send a bearer token: loopback without one, as the real test does.
    asyncio.run(serve_http(prompt, HttpSettings(port=0, token=None)))
