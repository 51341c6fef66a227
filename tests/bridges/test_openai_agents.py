"""The OpenAI Agents SDK's own loop (``Runner``) runs the VFS pack's tools through the
executor, driven by a scripted ``Model`` (the SDK has no offline fake of its own): calls run,
a failed call is rolled back, a policy's denial is the tool output, and a tool an
ApprovalPolicy holds is the SDK's ``needs_approval`` interruption."""

from __future__ import annotations

import asyncio

import pytest
from agents import Agent, RunConfig, Runner

from haversack import CallOutcome, PolicyDecision
from haversack.bridges.openai_agents import function_tools

from ._agents_model import ScriptedModel
from ._kit import SEEDED, executor, outcomes, workspace

OK, ERROR, DENIED, PENDING = (
    CallOutcome.OK,
    CallOutcome.ERROR,
    CallOutcome.DENIED,
    CallOutcome.PENDING,
)
OFFLINE = RunConfig(tracing_disabled=True)


def _run(agent, given, run_config):
    # Runner.run_sync() would leave a thread-wide event loop open: each run has its own.
    return asyncio.run(Runner.run(agent, given, run_config=run_config))


def _agent(ex, model):
    return Agent(
        name="files", instructions=ex.rendered_prompt.text, model=model, tools=function_tools(ex)
    )


def test_calls_rollback_and_denial_reach_the_model():
    model = ScriptedModel(
        ("write_file", {"path": "a.md", "content": "one\n"}, "c1"),
        ("scribble", {"path": "b.md"}, "c2"),
        ("edit_file", {"path": SEEDED, "old_string": "1", "new_string": "2"}, "c3"),
        ("read_file", {"path": SEEDED}, "c4"),
        ("edit_file", {"path": SEEDED, "old_string": "1", "new_string": "2"}, "c5"),
        ("write_file", {"path": "c.md", "content": 3}, "c6"),
        "done",
    )
    with executor() as ex:
        result = _run(_agent(ex, model), "Work on the files.", run_config=OFFLINE)
        assert result.final_output == "done"
        assert {"read_file", "write_file", "edit_file", "rm", "scribble"} <= set(model.tool_names)
        fs = workspace(ex)
        assert fs.read_text("a.md") == "one\n"
        assert not fs.exists("b.md")  # the failed call's write was rolled back
        assert fs.read_text(SEEDED) == "x = 2\n"
        wrote, failed, denied, _read, edited, invalid = model.seen
        assert "a.md" in wrote
        assert "failed after writing" in failed
        assert "Denied by policy 'vfs-read-before-write'" in denied
        assert "notes.md" in edited
        assert "content" in invalid  # the executor's strict parsing, as the tool output
        assert outcomes(ex) == [
            ("write_file", OK),
            ("scribble", ERROR),
            ("edit_file", DENIED),
            ("read_file", OK),
            ("edit_file", OK),
            ("write_file", CallOutcome.INVALID),
        ]


def test_only_tools_an_approval_policy_holds_need_approval():
    with executor() as ex:
        needs = {tool.name: tool.needs_approval for tool in function_tools(ex)}
        assert needs["rm"] is True
        assert not any(value for name, value in needs.items() if name != "rm")


@pytest.mark.parametrize("approved", [True, False])
def test_a_held_tool_is_the_sdks_needs_approval_interruption(approved):
    model = ScriptedModel(
        ("write_file", {"path": "a.md", "content": "one\n"}, "w1"),
        ("rm", {"path": "a.md"}, "r1"),
        "finished",
    )
    with executor() as ex:
        agent = _agent(ex, model)
        first = _run(agent, "Remove a.md.", run_config=OFFLINE)
        [item] = first.interruptions
        assert item.tool_name == "rm"
        assert workspace(ex).exists("a.md")  # the SDK asked first: nothing ran
        assert outcomes(ex) == [("write_file", OK)]
        state = first.to_state()
        if approved:
            state.approve(item)
        else:
            state.reject(item, rejection_message="Keep a.md.")
        second = _run(agent, state, run_config=OFFLINE)
        assert second.final_output == "finished"
        if approved:
            assert not workspace(ex).exists("a.md")
            assert "a.md" in model.seen[-1]
            # Held by the policy, then run with the human's approval given through the SDK.
            assert outcomes(ex) == [("write_file", OK), ("rm", PENDING), ("rm", OK)]
        else:
            assert workspace(ex).read_text("a.md") == "one\n"
            assert "Keep a.md." in model.seen[-1]
            assert outcomes(ex) == [("write_file", OK)]


class AskAboutBigWrites:
    """Asks about one call by its arguments: the SDK cannot know beforehand."""

    name = "big-writes"

    def check(self, tool, params, *, context):
        if tool.name == "write_file" and len(params.content) > 5:
            return PolicyDecision.ask("a big write")
        return PolicyDecision.allow()

    def on_result(self, tool, params, result, *, context):
        pass


def test_a_call_another_policy_holds_is_refused_with_a_message():
    import haversack
    from haversack import Session, ToolExecutor

    prompt = haversack.compose(ns="t", key="t", packs=["vfs"], policies=[AskAboutBigWrites()])
    model = ScriptedModel(("write_file", {"path": "a.md", "content": "long text"}, "w1"), "ok")
    with ToolExecutor(prompt.render(), session=Session()) as ex:
        result = _run(_agent(ex, model), "Write.", run_config=OFFLINE)
        assert result.final_output == "ok"
        assert "No one is available to approve this call" in model.seen[0]
        assert not workspace(ex).exists("a.md")
        assert ex.pending == ()
        assert outcomes(ex) == [("write_file", PENDING), ("write_file", DENIED)]
