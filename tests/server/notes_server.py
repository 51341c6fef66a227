"""A small prompt served over stdio for the server tests (run as a script, not collected).

Environment: NOTES_MARKER, a file the slow tools write when they stop;
NOTES_CLOSED, a file each closed session's resources append a line to;
NOTES_PROGRESS_S, the progress interval; NOTES_APPROVAL_S, how long an approval is
awaited; NOTES_TRANSPORT=http serves Streamable HTTP on 127.0.0.1 (any port, printed on
stderr) with the token in $HAVERSACK_MCP_TOKEN.
"""

from __future__ import annotations

import asyncio
import json
import os
import time
from dataclasses import dataclass, field
from pathlib import Path

import anyio

from haversack import (
    ApprovalPolicy,
    Binding,
    MarkdownSection,
    Prompt,
    ResourceRegistry,
    SequentialDependencyPolicy,
    Tool,
    ToolAnnotations,
    ToolContext,
    ToolResult,
)
from haversack.server import HttpSettings, ServeOptions, read_token, serve_http, serve_stdio

MARKER = Path(os.environ.get("NOTES_MARKER", os.devnull))
CLOSED = Path(os.environ.get("NOTES_CLOSED", os.devnull))


class Ledger:
    """A resource per Haversack session; its close is written to NOTES_CLOSED."""

    def close(self) -> None:
        with CLOSED.open("a") as out:
            out.write("closed\n")


@dataclass(frozen=True)
class Note:
    text: str


@dataclass(frozen=True)
class AddParams:
    text: str = field(metadata={"description": "The note."})


@dataclass(frozen=True)
class Count:
    notes: int


def add(params: AddParams, *, context: ToolContext) -> ToolResult[Count]:
    context.session[Note].append(Note(params.text))
    if params.text == "boom":
        raise RuntimeError("exploded after writing")
    return ToolResult.ok(Count(len(context.session[Note].all())), message="added")


def count(params: None, *, context: ToolContext) -> ToolResult[Count]:
    return ToolResult.ok(Count(len(context.session[Note].all())), message="counted")


def notes(params: None, *, context: ToolContext) -> ToolResult[None]:
    return ToolResult.ok(None, message=json.dumps([n.text for n in context.session[Note].all()]))


def publish(params: None, *, context: ToolContext) -> ToolResult[None]:
    return ToolResult.ok(None, message="published")


def slow(params: None, *, context: ToolContext) -> ToolResult[Count]:
    """Writes a note, then works in pure Python until it is stopped."""
    context.session[Note].append(Note("slow"))
    try:
        while True:
            time.sleep(0.005)
    finally:
        MARKER.write_text("slow stopped")


async def slow_async(params: None, *, context: ToolContext) -> ToolResult[Count]:
    context.session[Note].append(Note("slow async"))
    try:
        await anyio.sleep(3600)
    finally:
        MARKER.write_text("slow_async stopped")
    return ToolResult.ok(Count(0))


def wait_for(params: AddParams, *, context: ToolContext) -> ToolResult[Count]:
    """Finishes once the file named by ``text`` exists (the test creates it)."""
    while not Path(params.text).exists():
        time.sleep(0.005)
    return ToolResult.ok(Count(len(context.session[Note].all())), message="waited")


section = MarkdownSection(
    title="Notes",
    key="notes",
    template="Add notes with ${tool:add}, then publish.",
    tools=[
        Tool[AddParams, Count](name="add", description="Add a note.", handler=add),
        Tool[None, Count](
            name="count",
            description="Count notes.",
            handler=count,
            annotations=ToolAnnotations(read_only=True),
        ),
        Tool[None, None](
            name="notes",
            description="The notes' texts, as a JSON list.",
            handler=notes,
            annotations=ToolAnnotations(read_only=True),
        ),
        Tool[None, None](name="publish", description="Publish notes.", handler=publish),
        Tool[None, Count](name="slow", description="Never finishes.", handler=slow),
        Tool[None, Count](name="slow_async", description="Never finishes.", handler=slow_async),
        Tool[AddParams, Count](name="wait_for", description="Wait for a file.", handler=wait_for),
        Tool[AddParams, Count](name="erase", description="Erase the notes.", handler=add),
    ],
    policies=[SequentialDependencyPolicy({"publish": {"add"}}), ApprovalPolicy(["erase"])],
)

if __name__ == "__main__":
    options = ServeOptions(
        progress_interval_s=float(os.environ.get("NOTES_PROGRESS_S", "2")),
        approval_timeout_s=float(os.environ.get("NOTES_APPROVAL_S", "300")),
    )
    prompt = Prompt(
        ns="tests",
        key="notes",
        sections=[section],
        resources=ResourceRegistry.of(Binding(Ledger, lambda resolver: Ledger())),
    )
    if os.environ.get("NOTES_TRANSPORT") == "http":
        settings = HttpSettings(
            port=0, token=read_token(None), allowed_origins=("https://app.example",)
        )
        asyncio.run(serve_http(prompt, settings, options=options))
    else:
        asyncio.run(serve_stdio(prompt, options=options))
