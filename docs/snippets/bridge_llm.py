"""An ``llm`` model works in the VFS pack's workspace; ``rm`` waits for a yes on the terminal."""

from __future__ import annotations

import llm

import haversack
from haversack import ApprovalPolicy, Session, ToolExecutor
from haversack.bridges.llm import ask_on_terminal, tools


def main(model_id: str) -> str:
    prompt = haversack.compose(
        ns="demo", key="files", packs=["vfs"], policies=[ApprovalPolicy(["rm"])]
    )
    with ToolExecutor(prompt.render(), session=Session()) as executor:
        chain = llm.get_model(model_id).chain(
            "Create notes.md saying hello, then remove it.",
            system=executor.rendered_prompt.text,  # the packs' guidance for their tools
            tools=tools(executor, approve=ask_on_terminal),
        )
        return chain.text()


if __name__ == "__main__":
    print(main("gpt-4o-mini"))
