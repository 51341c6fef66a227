"""Every rejected call: its message, and that the plan is left exactly as it was."""

from __future__ import annotations

import pytest

from haversack import Prompt, Section, Session, ToolExecutor
from haversack_planning import (
    DEFAULT_MAX_OBJECTIVE_CHARS,
    DEFAULT_MAX_STEPS,
    DEFAULT_MAX_TITLE_CHARS,
    Plan,
    PlanningConfig,
    planning_tools,
)


@pytest.fixture
def started(planner):
    planner.ok("planning_setup_plan", {"objective": "Ship", "steps": ["A", "B"]})
    return planner


@pytest.mark.parametrize("objective", ["", "   ", "\n\t"])
def test_empty_objective(planner, objective):
    result = planner.fail("planning_setup_plan", {"objective": objective})
    assert result.message.startswith("The objective is empty")


def test_objective_over_limit(planner):
    planner.ok("planning_setup_plan", {"objective": "x" * DEFAULT_MAX_OBJECTIVE_CHARS})
    result = planner.fail("planning_setup_plan", {"objective": "x" * 501})
    assert result.message.startswith("The objective is 501 characters long; the limit is 500.")


def test_objective_limit_counts_after_whitespace_collapse(planner):
    objective = "  " + "x" * 250 + " \n\n   " + "x" * 249 + "  "
    planner.ok("planning_setup_plan", {"objective": objective})
    assert len(planner.plan.objective) == DEFAULT_MAX_OBJECTIVE_CHARS


@pytest.mark.parametrize("tool", ["planning_setup_plan", "planning_add_step"])
def test_empty_title_in_list_names_its_position(started, tool):
    args = {"steps": ["ok", "  "]}
    if tool == "planning_setup_plan":
        args["objective"] = "Other"
    result = started.fail(tool, args)
    assert result.message == "Step title 2 of 2 is empty: every step needs a short title."


def test_single_empty_title(started):
    result = started.fail("planning_add_step", {"steps": [""]})
    assert result.message == "The step title is empty: every step needs a short title."


def test_title_over_limit(started):
    started.ok("planning_add_step", {"steps": ["t" * DEFAULT_MAX_TITLE_CHARS]})
    result = started.fail("planning_add_step", {"steps": ["t" * 201]})
    assert result.message.startswith("The step title is 201 characters long; the limit is 200.")


def test_new_title_empty_or_too_long(started):
    result = started.fail("planning_update_step", {"step_id": 1, "title": " "})
    assert result.message.startswith("The new title is empty")
    result = started.fail("planning_update_step", {"step_id": 1, "title": "t" * 201})
    assert result.message.startswith("The new title is 201 characters long")


@pytest.mark.parametrize("step_id", [0, -1, 3, 99])
def test_unknown_step_id(started, step_id):
    result = started.fail("planning_update_step", {"step_id": step_id, "status": "done"})
    assert result.message == (
        f"There is no step {step_id}: the plan has steps 1-2; call planning_read_plan to see them."
    )


def test_unknown_step_id_in_plan_without_steps(planner):
    planner.ok("planning_setup_plan", {"objective": "Ship"})
    result = planner.fail("planning_update_step", {"step_id": 1, "status": "done"})
    assert result.message == (
        "There is no step 1: the plan has no steps yet; add some with planning_add_step."
    )


def test_unknown_step_id_in_plan_with_one_step(planner):
    planner.ok("planning_setup_plan", {"objective": "Ship", "steps": ["A"]})
    result = planner.fail("planning_update_step", {"step_id": 2, "title": "B"})
    assert "the plan has step 1 only" in result.message


def test_nothing_to_update(started):
    result = started.fail("planning_update_step", {"step_id": 1})
    assert result.message == (
        "Nothing to update: give a new title, a new status, or both, for the step."
    )


def test_invalid_status_is_rejected_by_parsing(started):
    result = started.fail("planning_update_step", {"step_id": 1, "status": "finished"})
    assert "'pending', 'in_progress' or 'done'" in result.message


def test_adding_zero_steps(started):
    result = started.fail("planning_add_step", {"steps": []})
    assert result.message == "No steps given: pass at least one step title in steps."


@pytest.mark.parametrize(
    ("tool", "args"),
    [
        ("planning_add_step", {"steps": ["C"]}),
        ("planning_update_step", {"step_id": 1, "status": "pending"}),
        ("planning_update_step", {"step_id": 2, "title": "renamed"}),
    ],
)
def test_completed_plan_cannot_change(started, tool, args):
    started.ok("planning_update_step", {"step_id": 1, "status": "done"})
    started.ok("planning_update_step", {"step_id": 2, "status": "done"})
    result = started.fail(tool, args)
    assert result.message == (
        "The plan is already completed (all 2 steps are done) and can no longer change. To "
        "continue, start a new plan with planning_setup_plan."
    )


def test_completed_plan_can_be_read_and_replaced(started):
    started.ok("planning_update_step", {"step_id": 1, "status": "done"})
    started.ok("planning_update_step", {"step_id": 2, "status": "done"})
    started.ok("planning_read_plan")
    started.ok("planning_setup_plan", {"objective": "Next"})
    assert started.plan.status == "active"


def test_too_many_steps_at_setup(planner):
    steps = [f"s{i}" for i in range(DEFAULT_MAX_STEPS + 1)]
    result = planner.fail("planning_setup_plan", {"objective": "Big", "steps": steps})
    assert result.message.startswith(
        f"That would make {DEFAULT_MAX_STEPS + 1} steps; a plan holds at most {DEFAULT_MAX_STEPS}."
    )


def test_too_many_steps_when_adding(make_planner):
    p = make_planner(PlanningConfig(max_steps=3))
    p.ok("planning_setup_plan", {"objective": "Small", "steps": ["a", "b"]})
    p.ok("planning_add_step", {"steps": ["c"]})
    result = p.fail("planning_add_step", {"steps": ["d"]})
    assert result.message == (
        "That would make 4 steps; a plan holds at most 3. Merge related steps, or finish this "
        "plan and start the next with planning_setup_plan."
    )


def test_configured_length_limits(make_planner):
    p = make_planner(PlanningConfig(max_objective_chars=5, max_title_chars=3))
    assert "the limit is 5" in p.fail("planning_setup_plan", {"objective": "123456"}).message
    p.ok("planning_setup_plan", {"objective": "12345", "steps": ["abc"]})
    assert "the limit is 3" in p.fail("planning_add_step", {"steps": ["abcd"]}).message


def test_unknown_argument_is_rejected(planner):
    result = planner.fail("planning_setup_plan", {"objective": "x", "initial_steps": ["a"]})
    assert "unknown field 'initial_steps'" in result.message


def test_handlers_reject_missing_plan_without_the_policy():
    # The tools used without the section (so without its policy) still refuse to act on no plan.
    prompt = Prompt(
        ns="tests", key="bare", sections=[Section(title="Bare", key="bare", tools=planning_tools())]
    )
    session = Session()
    with ToolExecutor(prompt.render(), session=session) as executor:
        for name, args in [
            ("planning_add_step", {"steps": ["a"]}),
            ("planning_update_step", {"step_id": 1, "status": "done"}),
            ("planning_read_plan", {}),
        ]:
            result = executor.execute(name, args)
            assert not result.success
            assert result.message.startswith("There is no plan yet. Call planning_setup_plan")
    assert session[Plan].all() == ()
