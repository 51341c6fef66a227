"""PlanRequiredPolicy: adding, updating and reading need a plan; setup is always allowed."""

from __future__ import annotations

import dataclasses

import pytest

from haversack import (
    CallOutcome,
    Prompt,
    Section,
    Session,
    ToolExecutor,
    ToolInvoked,
    ToolPolicy,
    ToolResult,
    tool,
)
from haversack_planning import (
    PLAN_REQUIRED_POLICY,
    Plan,
    PlanRequiredPolicy,
    planning_section,
    planning_tools,
)


@tool
def echo(params: None, *, context) -> ToolResult[None]:
    """Say hello."""
    return ToolResult.ok(None, "hello")


GATED = [
    ("planning_add_step", {"steps": ["a"]}),
    ("planning_update_step", {"step_id": 1, "status": "done"}),
    ("planning_read_plan", {}),
]


def test_is_a_tool_policy():
    policy = PlanRequiredPolicy()
    assert isinstance(policy, ToolPolicy)
    assert policy.name == PLAN_REQUIRED_POLICY
    assert PlanRequiredPolicy(name="custom").name == "custom"


@pytest.mark.parametrize(("tool", "args"), GATED)
def test_denies_before_setup_with_an_actionable_message(planner, tool, args):
    result = planner.fail(tool, args)
    assert result.message == (
        f"Denied by policy '{PLAN_REQUIRED_POLICY}': there is no plan yet, so {tool} cannot "
        "run. Call planning_setup_plan with an objective (and, optionally, the first steps), "
        "then retry."
    )
    event = planner.session[ToolInvoked].latest()
    assert event is not None
    assert event.outcome is CallOutcome.DENIED


@pytest.mark.parametrize(("tool", "args"), GATED)
def test_allows_after_setup(planner, tool, args):
    planner.ok("planning_setup_plan", {"objective": "Ship", "steps": ["A"]})
    planner.ok(tool, args)


def test_setup_is_never_denied(planner):
    planner.ok("planning_setup_plan", {"objective": "Ship"})
    planner.ok("planning_setup_plan", {"objective": "Again"})


def test_failed_setup_does_not_unlock(planner):
    planner.fail("planning_setup_plan", {"objective": ""})
    assert "Denied by policy" in planner.fail("planning_read_plan").message


def test_state_is_the_session_plan(planner):
    # A plan placed in the session by the application counts as set up.
    planner.session[Plan].seed((Plan("Seeded"),))
    assert planner.ok("planning_read_plan").value == Plan("Seeded")
    # And another session knows nothing of it.
    other = Session()
    with ToolExecutor(planner.rendered, session=other) as executor:
        assert not executor.execute("planning_read_plan", {}).success


def test_recognises_renamed_tools_and_names_the_renamed_setup():
    section = planning_section()
    section.tools = tuple(dataclasses.replace(t, name="p_" + t.name) for t in section.tools)
    rendered = Prompt(ns="t", key="p", sections=[section]).render()
    session = Session()
    with ToolExecutor(rendered, session=session) as executor:
        denied = executor.execute("p_planning_add_step", {"steps": ["a"]})
        assert not denied.success
        assert "so p_planning_add_step cannot run. Call p_planning_setup_plan" in denied.message
        assert executor.execute("p_planning_setup_plan", {"objective": "o"}).success
        assert executor.execute("p_planning_add_step", {"steps": ["a"]}).success


def test_leaves_other_tools_alone():
    # As a prompt-wide policy it governs every tool, but only gates the planning ones.
    prompt = Prompt(
        ns="t",
        key="p",
        sections=[Section(title="Tools", key="tools", tools=[echo, *planning_tools()])],
        policies=[PlanRequiredPolicy()],
    )
    with ToolExecutor(prompt.render(), session=Session()) as executor:
        assert executor.execute("echo", {}).success
        assert not executor.execute("planning_read_plan", {}).success
