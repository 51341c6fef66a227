"""pydantic-ai's own loop runs the VFS pack's tools through the executor, scripted by its
offline ``FunctionModel``: calls run, a failed call is rolled back, a policy's denial is a
tool result, and a held call is pydantic-ai's deferred approval."""

from __future__ import annotations

import asyncio

import pytest
from pydantic_ai import Agent, DeferredToolRequests, DeferredToolResults, ToolDenied
from pydantic_ai.messages import ModelResponse, TextPart, ToolCallPart, ToolReturnPart
from pydantic_ai.models.function import AgentInfo, FunctionModel
from pydantic_ai.models.test import TestModel

from haversack import CallOutcome
from haversack.bridges.pydantic_ai import HaversackToolset

from ._kit import SEEDED, executor, outcomes, workspace

# agent.run_sync() would leave a thread-wide event loop open (pydantic-ai reuses the current
# one), which another test in the same worker would then find: each test runs its own.

OK, ERROR, DENIED, PENDING = (
    CallOutcome.OK,
    CallOutcome.ERROR,
    CallOutcome.DENIED,
    CallOutcome.PENDING,
)


class Script:
    """A ``FunctionModel`` function: one scripted response per model request, and the
    tool results the model was sent, in order."""

    def __init__(self, *steps):
        self.steps = list(steps)
        self.seen: list[str] = []
        self.tool_names: list[str] = []

    def __call__(self, messages, info: AgentInfo) -> ModelResponse:
        self.tool_names = [t.name for t in info.function_tools]
        for part in messages[-1].parts:
            if isinstance(part, ToolReturnPart):
                self.seen.append(str(part.content))
        step = self.steps.pop(0)
        if isinstance(step, str):
            return ModelResponse(parts=[TextPart(step)])
        name, args, call_id = step
        return ModelResponse(parts=[ToolCallPart(name, args, tool_call_id=call_id)])


def test_calls_rollback_and_denial_reach_the_model():
    script = Script(
        ("write_file", {"path": "a.md", "content": "one\n"}, "c1"),
        ("scribble", {"path": "b.md"}, "c2"),
        ("edit_file", {"path": SEEDED, "old_string": "1", "new_string": "2"}, "c3"),
        ("read_file", {"path": SEEDED}, "c4"),
        ("edit_file", {"path": SEEDED, "old_string": "1", "new_string": "2"}, "c5"),
        "done",
    )
    with executor() as ex:
        agent = Agent(FunctionModel(script), toolsets=[HaversackToolset(ex)])
        result = asyncio.run(agent.run("Work on the files."))
        assert result.output == "done"
        assert {"read_file", "write_file", "edit_file", "rm", "scribble"} <= set(script.tool_names)
        fs = workspace(ex)
        assert fs.read_text("a.md") == "one\n"
        assert not fs.exists("b.md")  # the failed call's write was rolled back
        assert fs.read_text(SEEDED) == "x = 2\n"
        wrote, failed, denied, _read, edited = script.seen
        assert "a.md" in wrote
        assert "failed after writing" in failed
        assert "Denied by policy 'vfs-read-before-write'" in denied
        assert "notes.md" in edited
        assert outcomes(ex) == [
            ("write_file", OK),
            ("scribble", ERROR),
            ("edit_file", DENIED),
            ("read_file", OK),
            ("edit_file", OK),
        ]


def test_the_prompt_text_is_the_toolsets_instructions():
    seen = []

    def model(messages, info):
        seen.append(info.instructions)
        return ModelResponse(parts=[TextPart("ok")])

    with executor() as ex:
        asyncio.run(Agent(FunctionModel(model), toolsets=[HaversackToolset(ex)]).run("hi"))
        assert seen
        assert "Workspace files" in seen[0]
        quiet = Agent(FunctionModel(model), toolsets=[HaversackToolset(ex, instructions=False)])
        asyncio.run(quiet.run("hi"))
        assert "Workspace files" not in (seen[1] or "")


def _held_rm(ex, script):
    agent = Agent(
        FunctionModel(script),
        toolsets=[HaversackToolset(ex)],
        output_type=[str, DeferredToolRequests],
    )
    first = asyncio.run(agent.run("Remove a.md."))
    assert isinstance(first.output, DeferredToolRequests)
    [request] = first.output.approvals
    assert (request.tool_name, request.tool_call_id) == ("rm", "r1")
    meta = first.output.metadata["r1"]
    assert meta["policy"] == "approval"
    assert "'rm' matches 'rm'" in meta["reason"]
    assert workspace(ex).exists("a.md")  # held: nothing ran
    return agent, first


@pytest.mark.parametrize("approved", [True, False])
def test_a_held_call_is_pydantic_ais_deferred_approval(approved):
    script = Script(
        ("write_file", {"path": "a.md", "content": "one\n"}, "w1"),
        ("rm", {"path": "a.md"}, "r1"),
        "finished",
    )
    with executor() as ex:
        agent, first = _held_rm(ex, script)
        answer = True if approved else ToolDenied("Keep a.md.")
        second = asyncio.run(
            agent.run(
                message_history=first.all_messages(),
                deferred_tool_results=DeferredToolResults(approvals={"r1": answer}),
            )
        )
        assert second.output == "finished"
        if approved:
            assert not workspace(ex).exists("a.md")
            assert "a.md" in script.seen[-1]
            # Asked again when approved: held once more, then run with the approval.
            assert outcomes(ex) == [
                ("write_file", OK),
                ("rm", PENDING),
                ("rm", PENDING),
                ("rm", OK),
            ]
        else:
            assert workspace(ex).read_text("a.md") == "one\n"
            assert script.seen[-1] == "Keep a.md."
            # pydantic-ai answered the denial; the executor records it and holds nothing.
            assert outcomes(ex) == [("write_file", OK), ("rm", PENDING), ("rm", DENIED)]
            assert ex.pending == ()


def test_pydantic_ais_test_model_calls_every_tool_and_gets_results():
    # TestModel calls each tool once with arguments made from its schema: every call is
    # answered (parsed, run or refused by the executor), none raises, rm is held.
    with executor() as ex:
        agent = Agent(
            TestModel(), toolsets=[HaversackToolset(ex)], output_type=[str, DeferredToolRequests]
        )
        result = asyncio.run(agent.run("Use the tools."))
        assert isinstance(result.output, DeferredToolRequests)
        assert [call.tool_name for call in result.output.approvals] == ["rm"]
        names = {name for name, _ in outcomes(ex)}
        assert {"ls", "read_file", "write_file", "edit_file", "glob", "grep", "scribble"} <= names
