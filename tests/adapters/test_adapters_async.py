"""The adapters' async variants and run-every-call helpers, with the real SDK clients
talking to the fake provider."""

from __future__ import annotations

import asyncio
from dataclasses import dataclass

import anthropic as anthropic_sdk
import openai as openai_sdk
import pytest

from haversack import MarkdownSection, Prompt, Session, ToolContext, ToolExecutor, ToolResult, tool
from haversack.adapters import anthropic, openai
from haversack.testing import FakeCall, FakeProvider, FakeReply


@dataclass(frozen=True)
class Args:
    city: str


@tool
async def weather(params: Args, *, context: ToolContext) -> ToolResult[None]:
    """Look up the weather (async)."""
    await asyncio.sleep(0)
    return ToolResult.ok(None, f"sunny in {params.city}")


RENDERED = Prompt(
    ns="t",
    key="a",
    sections=[MarkdownSection(title="W", key="w", template="w", tools=[weather])],
).render()

CALLS = [FakeCall("weather", {"city": "Oslo"}, "c1"), FakeCall("weather", {"city": "Rome"}, "c2")]
EXPECTED = ["sunny in Oslo", "sunny in Rome"]


def test_chat_helpers_in_an_async_app():
    async def app():
        with FakeProvider([FakeReply(calls=CALLS)] * 2) as fake:
            client = openai_sdk.AsyncOpenAI(base_url=fake.openai_base_url, api_key="k")
            async with client:
                completion = await client.chat.completions.create(model="m", messages=[])
                executor = ToolExecutor(RENDERED, session=Session())
                # The sync helper cannot run an async tool inside the app's loop...
                old = openai.run_chat_tool_calls(executor, completion)
                # ...the async one can, and gives the same messages the SDK expects.
                new = await openai.arun_chat_tool_calls(executor, completion)
                one = await openai.arun_chat_tool_call(
                    executor, completion.choices[0].message.tool_calls[0]
                )
        return old, new, one

    old, new, one = asyncio.run(app())
    assert all("inside a running event loop" in m["content"] for m in old)
    assert [m["content"] for m in new] == EXPECTED
    assert [m["tool_call_id"] for m in new] == ["c1", "c2"]
    assert one == new[0]


def test_responses_helpers_in_an_async_app():
    async def app():
        with FakeProvider([FakeReply("thinking", calls=CALLS)]) as fake:
            client = openai_sdk.AsyncOpenAI(base_url=fake.openai_base_url, api_key="k")
            async with client:
                response = await client.responses.create(model="m", input="hi")
                executor = ToolExecutor(RENDERED, session=Session())
                return await openai.arun_response_function_calls(executor, response)

    items = asyncio.run(app())
    assert items == [
        {"type": "function_call_output", "call_id": "c1", "output": "sunny in Oslo"},
        {"type": "function_call_output", "call_id": "c2", "output": "sunny in Rome"},
    ]


def test_anthropic_helpers_in_an_async_app():
    async def app():
        with FakeProvider([FakeReply("let me see", calls=CALLS)]) as fake:
            client = anthropic_sdk.AsyncAnthropic(base_url=fake.anthropic_base_url, api_key="k")
            async with client:
                message = await client.messages.create(model="m", max_tokens=10, messages=[])
                executor = ToolExecutor(RENDERED, session=Session())
                return await anthropic.arun_tool_uses(executor, message)

    (turn,) = asyncio.run(app())
    assert turn["role"] == "user"
    assert [(b["tool_use_id"], b["content"], b["is_error"]) for b in turn["content"]] == [
        ("c1", "sunny in Oslo", False),
        ("c2", "sunny in Rome", False),
    ]


@pytest.mark.parametrize(
    ("helper", "response"),
    [
        (openai.run_chat_tool_calls, {"choices": [{"message": {"role": "assistant"}}]}),
        (openai.run_response_function_calls, {"output": [{"type": "message"}]}),
        (anthropic.run_tool_uses, {"content": [{"type": "text", "text": "done"}]}),
    ],
)
def test_helpers_return_nothing_when_the_model_called_no_tool(helper, response):
    assert helper(ToolExecutor(RENDERED, session=Session()), response) == []


def test_sync_helpers_take_dicts_and_keep_call_order():
    executor = ToolExecutor(RENDERED, session=Session())
    message = {
        "role": "assistant",
        "tool_calls": [
            {"id": "a", "type": "function", "function": {"name": "weather", "arguments": "{"}},
            {
                "id": "b",
                "type": "function",
                "function": {"name": "weather", "arguments": '{"city": "Oslo"}'},
            },
        ],
    }
    first, second = openai.run_chat_tool_calls(executor, message)
    assert first["tool_call_id"] == "a"
    assert "not valid JSON" in first["content"]
    assert second == {"role": "tool", "tool_call_id": "b", "content": "sunny in Oslo"}
