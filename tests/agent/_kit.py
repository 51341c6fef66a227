"""A small prompt for the agent tests: a read-only reader, a writer that changes session
state, an async reader and a failing writer; plus clients of the fake provider."""

from __future__ import annotations

import asyncio
from dataclasses import dataclass, field

from haversack import (
    MarkdownSection,
    Prompt,
    ToolAnnotations,
    ToolContext,
    ToolPolicy,
    ToolResult,
    tool,
)
from haversack.testing import FakeProvider

READ_ONLY = ToolAnnotations(read_only=True)


@dataclass(frozen=True)
class Note:
    path: str
    text: str


@dataclass(frozen=True)
class PathArgs:
    path: str = field(metadata={"description": "Which note."})


@dataclass(frozen=True)
class WriteArgs:
    path: str = field(metadata={"description": "Which note."})
    text: str = field(metadata={"description": "Its text."})


@tool(annotations=READ_ONLY)
def read_note(params: PathArgs, *, context: ToolContext) -> ToolResult[None]:
    """Read a note."""
    for note in context.session[Note].all():
        if note.path == params.path:
            return ToolResult.ok(None, note.text)
    return ToolResult.error(f"No note {params.path!r}.")


@tool
def write_note(params: WriteArgs, *, context: ToolContext) -> ToolResult[None]:
    """Write a note."""
    context.session[Note].append(Note(params.path, params.text))
    if params.text == "boom":
        raise RuntimeError("the disk is full")
    return ToolResult.ok(None, f"Wrote {params.path}.")


class Rendezvous:
    """Two async read-only tools that each wait for the other: they finish only if they
    run concurrently (run one after the other, the first gives up after a bounded wait)."""

    def __init__(self) -> None:
        self.events: dict[str, asyncio.Event] = {}

    def event(self, name: str) -> asyncio.Event:
        return self.events.setdefault(name, asyncio.Event())


RENDEZVOUS = Rendezvous()
MEET_TIMEOUT_S = 5.0


async def _meet(me: str, other: str) -> ToolResult[None]:
    RENDEZVOUS.event(me).set()
    try:
        await asyncio.wait_for(RENDEZVOUS.event(other).wait(), MEET_TIMEOUT_S)
    except TimeoutError:
        return ToolResult.error(f"{me} never met {other}: the calls ran one after the other.")
    return ToolResult.ok(None, f"{me} met {other}")


@tool(annotations=READ_ONLY)
async def left(params: None, *, context: ToolContext) -> ToolResult[None]:
    """Wait for right."""
    return await _meet("left", "right")


@tool(annotations=READ_ONLY)
async def right(params: None, *, context: ToolContext) -> ToolResult[None]:
    """Wait for left."""
    return await _meet("right", "left")


@tool(annotations=READ_ONLY)
async def fetch(params: PathArgs, *, context: ToolContext) -> ToolResult[None]:
    """Fetch a page (async)."""
    await asyncio.sleep(0)
    return ToolResult.ok(None, f"page {params.path}")


def prompt(*, policies: list[ToolPolicy] | None = None, extra_tools: tuple = ()) -> Prompt:
    return Prompt(
        ns="test",
        key="agent",
        sections=[
            MarkdownSection(
                title="Notes",
                key="notes",
                template="Keep notes.",
                tools=[read_note, write_note, fetch, left, right, *extra_tools],
            )
        ],
        policies=policies or [],
    )


PROVIDERS = ("openai", "openai-responses", "anthropic")


def provider(kind: str, fake: FakeProvider, *, stream: bool = False):
    from haversack.agent import AnthropicMessages, OpenAIChat, OpenAIResponses

    if kind == "anthropic":
        return AnthropicMessages(
            "claude-test", base_url=fake.anthropic_base_url, api_key="k", stream=stream
        )
    cls = OpenAIChat if kind == "openai" else OpenAIResponses
    return cls("gpt-test", base_url=fake.openai_base_url, api_key="k", stream=stream)
