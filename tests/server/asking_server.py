"""Tools that ask the user and report progress, served for the server tests (run as a
script, not collected). NOTES_TRANSPORT=http serves Streamable HTTP as notes_server.py does."""

from __future__ import annotations

import asyncio
import json
import os
from dataclasses import dataclass

from haversack import (
    InteractionError,
    MarkdownSection,
    Prompt,
    Tool,
    ToolContext,
    ToolResult,
)
from haversack.server import HttpSettings, read_token, serve_http, serve_stdio


@dataclass(frozen=True)
class Ask:
    timeout_s: float = 300.0


@dataclass(frozen=True)
class Steps:
    steps: int = 3


def confirm(params: Ask, *, context: ToolContext) -> ToolResult[None]:
    answer = context.ask("Delete the file notes.txt?", bool, timeout_s=params.timeout_s)
    if not answer.accepted:
        return ToolResult.ok(None, message=f"kept ({answer.action})")
    return ToolResult.ok(None, message="deleted" if answer.value is True else "kept (no)")


async def survey(params: None, *, context: ToolContext) -> ToolResult[None]:
    answer = await context.aask(
        "Who are you?",
        {
            "type": "object",
            "properties": {
                "name": {"type": "string", "title": "Name"},
                "age": {"type": "integer", "minimum": 0},
                "colour": {"type": "string", "enum": ["red", "green"]},
            },
            "required": ["name"],
        },
    )
    return ToolResult.ok(
        None, message=json.dumps({"action": answer.action, **(answer.content or {})})
    )


async def ask_blocking(params: None, *, context: ToolContext) -> ToolResult[None]:
    """An async handler that calls the blocking ask (a bug): told so, nothing hangs."""
    context.ask("Blocking?")
    return ToolResult.ok(None, message="asked")


def steps(params: Steps, *, context: ToolContext) -> ToolResult[None]:
    for step in range(1, params.steps + 1):
        context.report_progress(step, params.steps, f"step {step}")
    return ToolResult.ok(None, message="stepped")


async def asteps(params: Steps, *, context: ToolContext) -> ToolResult[None]:
    for step in range(1, params.steps + 1):
        context.report_progress(step, params.steps, f"step {step}")
        await asyncio.sleep(0)
    return ToolResult.ok(None, message="stepped")


def caught(params: None, *, context: ToolContext) -> ToolResult[None]:
    try:
        context.ask("Anyone?")
    except InteractionError as exc:
        return ToolResult.ok(None, message=f"went on without: {exc}")
    return ToolResult.ok(None, message="answered")


section = MarkdownSection(
    title="Asking",
    key="asking",
    template="Tools that ask.",
    tools=[
        Tool[Ask, None](name="confirm", description="Ask yes or no.", handler=confirm),
        Tool[None, None](name="survey", description="Ask a form.", handler=survey),
        Tool[None, None](name="ask_blocking", description="Misuse.", handler=ask_blocking),
        Tool[Steps, None](name="steps", description="Report steps.", handler=steps),
        Tool[Steps, None](name="asteps", description="Report steps.", handler=asteps),
        Tool[None, None](name="caught", description="Catch no answer.", handler=caught),
    ],
)

if __name__ == "__main__":
    prompt = Prompt(ns="tests", key="asking", sections=[section])
    if os.environ.get("NOTES_TRANSPORT") == "http":
        settings = HttpSettings(port=0, token=read_token(None))
        asyncio.run(serve_http(prompt, settings))
    else:
        asyncio.run(serve_stdio(prompt))
