"""An OpenAI Agents SDK agent works in the VFS pack's workspace; ``rm`` needs approval."""

from __future__ import annotations

import asyncio
from collections.abc import Callable
from typing import Any

from agents import Agent, Runner, ToolApprovalItem

import haversack
from haversack import ApprovalPolicy, Session, ToolExecutor
from haversack.bridges.openai_agents import function_tools


async def main(model: Any, approve: Callable[[ToolApprovalItem], bool], **run: Any) -> Any:
    prompt = haversack.compose(
        ns="demo", key="files", packs=["vfs"], policies=[ApprovalPolicy(["rm"])]
    )
    with ToolExecutor(prompt.render(), session=Session()) as executor:
        agent = Agent(
            name="files",
            instructions=executor.rendered_prompt.text,  # the packs' guidance for their tools
            model=model,
            tools=function_tools(executor),  # rm has needs_approval=True
        )
        result = await Runner.run(agent, "Create notes.md saying hello, then remove it.", **run)
        while result.interruptions:
            state = result.to_state()
            for item in result.interruptions:
                if approve(item):
                    state.approve(item)
                else:
                    state.reject(item)
            result = await Runner.run(agent, state, **run)
        return result.final_output


if __name__ == "__main__":
    ask = lambda item: input(f"Run {item.tool_name}? [y/N] ") == "y"  # noqa: E731
    print(asyncio.run(main("gpt-4o-mini", ask)))
