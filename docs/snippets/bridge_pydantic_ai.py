"""A pydantic-ai agent works in the VFS pack's workspace; ``rm`` waits for a human's yes."""

from __future__ import annotations

import asyncio
from collections.abc import Callable
from typing import Any

from pydantic_ai import Agent, DeferredToolRequests, DeferredToolResults
from pydantic_ai.messages import ToolCallPart

import haversack
from haversack import ApprovalPolicy, Session, ToolExecutor
from haversack.bridges.pydantic_ai import HaversackToolset


async def main(model: Any, approve: Callable[[ToolCallPart], bool]) -> str:
    prompt = haversack.compose(
        ns="demo", key="files", packs=["vfs"], policies=[ApprovalPolicy(["rm"])]
    )
    with ToolExecutor(prompt.render(), session=Session()) as executor:
        agent = Agent(
            model,
            toolsets=[HaversackToolset(executor)],
            output_type=[str, DeferredToolRequests],  # a held call ends the run
        )
        result = await agent.run("Create notes.md saying hello, then remove it.")
        while isinstance(result.output, DeferredToolRequests):
            answers = {call.tool_call_id: approve(call) for call in result.output.approvals}
            result = await agent.run(
                message_history=result.all_messages(),
                deferred_tool_results=DeferredToolResults(approvals=answers),
            )
        return result.output


if __name__ == "__main__":
    ask = lambda call: input(f"Run {call.tool_name}? [y/N] ") == "y"  # noqa: E731
    print(asyncio.run(main("openai:gpt-4o-mini", ask)))
