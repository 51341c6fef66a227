"""``ToolContext.ask``/``aask``/``report_progress`` through the executor: without an
interaction (headless: a precise error, progress goes nowhere), with a scripted one (tests
and headless runs: configured answers), per-call interactions and bounded waits."""

from __future__ import annotations

import asyncio
import json
from dataclasses import dataclass

import pytest

from haversack import (
    Answer,
    Deadline,
    Interaction,
    InteractionError,
    MarkdownSection,
    Progress,
    Prompt,
    ScriptedInteraction,
    Session,
    Tool,
    ToolContext,
    ToolExecutor,
    ToolResult,
)


@dataclass(frozen=True)
class Ask:
    schema: str = "bool"


SCHEMAS = {
    "bool": bool,
    "int": int,
    "float": float,
    "str": str,
    "form": {
        "type": "object",
        "properties": {"name": {"type": "string"}, "n": {"type": "integer", "minimum": 1}},
        "required": ["name"],
    },
}


def ask(params: Ask, *, context: ToolContext) -> ToolResult[None]:
    answer = context.ask("Go?", SCHEMAS[params.schema], timeout_s=5)
    shown = {"action": answer.action, "value": answer.value, "content": answer.content}
    return ToolResult.ok(None, message=json.dumps(shown))


async def aask(params: Ask, *, context: ToolContext) -> ToolResult[None]:
    answer = await context.aask("Go?", SCHEMAS[params.schema])
    return ToolResult.ok(None, message=f"{answer.action} {answer.value!r}")


def steps(params: None, *, context: ToolContext) -> ToolResult[None]:
    for step in range(3):
        context.report_progress(step + 1, 3, f"step {step + 1}")
    return ToolResult.ok(None, message="done")


def bad_progress(params: None, *, context: ToolContext) -> ToolResult[None]:
    context.report_progress(float("nan"))
    return ToolResult.ok(None, message="unreachable")


def bad_question(params: None, *, context: ToolContext) -> ToolResult[None]:
    context.ask("Nested?", {"type": "object", "properties": {"x": {"type": "object"}}})
    return ToolResult.ok(None, message="unreachable")


def _executor(**kwargs) -> ToolExecutor:
    section = MarkdownSection(
        title="T",
        key="t",
        template="t",
        tools=[
            Tool[Ask, None](name="ask", description="Ask.", handler=ask),
            Tool[Ask, None](name="aask", description="Ask async.", handler=aask),
            Tool[None, None](name="steps", description="Steps.", handler=steps),
            Tool[None, None](name="bad_progress", description="NaN.", handler=bad_progress),
            Tool[None, None](name="bad_question", description="Nested.", handler=bad_question),
        ],
    )
    rendered = Prompt(ns="t", key="p", sections=[section]).render()
    return ToolExecutor(rendered, session=Session(), **kwargs)


def test_without_an_interaction_asking_fails_the_call_with_a_precise_message():
    with _executor() as executor:
        result = executor.execute("ask", {})
        progress = executor.execute("steps", {})
    assert not result.success
    assert result.message.startswith("Tool 'ask' needed to ask the user ('Go?')")
    assert "nobody can be asked here" in result.message
    assert progress.success  # progress without a listener goes nowhere, never fails


@pytest.mark.parametrize(
    ("schema", "given", "value"),
    [("bool", True, True), ("int", 3, 3), ("float", 2, 2.0), ("str", "hi", "hi")],
)
def test_a_scripted_answer_comes_back_typed(schema, given, value):
    user = ScriptedInteraction([given])
    with _executor(interaction=user) as executor:
        result = executor.execute("ask", {"schema": schema})
    shown = json.loads(result.message)
    assert shown["action"] == "accept"
    assert shown["value"] == value
    assert type(shown["value"]) is type(value)
    (question,) = user.questions
    assert question.tool == "ask"
    assert question.message == "Go?"
    assert question.timeout_s == 5


def test_a_form_answer_is_checked_against_its_schema():
    user = ScriptedInteraction([{"name": "Ada", "n": 2}, {"n": 0}])
    with _executor(interaction=user) as executor:
        good = executor.execute("ask", {"schema": "form"})
        bad = executor.execute("ask", {"schema": "form"})
    assert json.loads(good.message)["content"] == {"name": "Ada", "n": 2}
    assert not bad.success
    assert "does not fit the question's form" in bad.message


@pytest.mark.parametrize("action", ["decline", "cancel"])
def test_declined_and_cancelled_answers_reach_the_handler(action):
    with _executor(interaction=ScriptedInteraction([Answer(action)])) as executor:
        result = executor.execute("ask", {})
    assert json.loads(result.message) == {"action": action, "value": None, "content": None}


def test_a_script_that_runs_out_says_so():
    with _executor(interaction=ScriptedInteraction([])) as executor:
        result = executor.execute("ask", {})
    assert "the scripted answers ran out" in result.message


def test_an_async_handler_awaits_the_answer():
    async def main():
        with _executor(interaction=ScriptedInteraction([False])) as executor:
            return await executor.aexecute("aask", {})

    assert asyncio.run(main()).message == "accept False"


def test_the_default_aask_runs_a_blocking_ask_off_the_loop():
    class Slow(Interaction):
        def ask(self, question):
            return Answer("accept", {"value": True}, True)

    async def main():
        with _executor(interaction=Slow()) as executor:
            return await executor.aexecute("aask", {})

    assert asyncio.run(main()).message == "accept True"


def test_a_call_brings_its_own_interaction_over_the_executors():
    mine = ScriptedInteraction([True])
    default = ScriptedInteraction([])
    with _executor(interaction=default) as executor:
        result = executor.execute("ask", {}, call_id="c1", interaction=mine)
        executor.execute("steps", {}, interaction=mine)
        executor.execute("steps", {})  # the executor's again (a context cached per tool)
    assert json.loads(result.message)["value"] is True
    assert default.questions == []
    assert mine.updates == [
        Progress(1, 3, "step 1"),
        Progress(2, 3, "step 2"),
        Progress(3, 3, "step 3"),
    ]
    assert len(default.updates) == 3


def test_the_deadline_bounds_the_wait():
    user = ScriptedInteraction(lambda question: question.timeout_s)

    async def main():
        with _executor(interaction=user, deadline=Deadline.after(60)) as executor:
            return await executor.aexecute("aask", {"schema": "float"})

    assert asyncio.run(main()).success
    # aask's own bound is 300 s; the evaluation has at most 60 left.
    assert 0 < user.questions[0].timeout_s <= 60


def test_bad_progress_and_bad_forms_are_the_tools_bugs():
    with _executor(interaction=ScriptedInteraction([True])) as executor:
        nan = executor.execute("bad_progress", {})
        nested = executor.execute("bad_question", {})
    assert "progress must be a finite number" in nan.message
    assert "must be a string, number, integer, boolean or array" in nested.message


def test_a_huge_question_is_refused_before_anyone_is_asked():
    user = ScriptedInteraction([True])
    context = ToolContext(
        prompt=Prompt(ns="t", key="p"),
        rendered_prompt=None,
        session=Session(),
        resources=None,  # type: ignore[arg-type]
        interaction=user,
    )
    with pytest.raises(InteractionError, match="at most 20000 characters"):
        context.ask("x" * 20_001)
    assert user.questions == []
