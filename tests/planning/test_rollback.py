"""A failed call leaves the plan exactly as it was, even after the handler saved a new one."""

from __future__ import annotations

from typing import Any

from haversack import Prompt, Session, ToolExecutor
from haversack_planning import Plan, PlanStep, planning_section


class _FailOn:
    """A prompt-wide policy whose on_result raises for one tool: the executor must roll back."""

    name = "fail-on"

    def __init__(self, tool: str) -> None:
        self.tool = tool

    def check(self, tool: Any, params: Any, *, context: Any) -> Any:
        from haversack import PolicyDecision

        return PolicyDecision.allow()

    def on_result(self, tool: Any, params: Any, result: Any, *, context: Any) -> None:
        if tool.name == self.tool:
            raise RuntimeError("recording failed")


def _executor(session: Session, failing: str) -> ToolExecutor:
    prompt = Prompt(ns="t", key="p", sections=[planning_section()], policies=[_FailOn(failing)])
    return ToolExecutor(prompt.render(), session=session)


def test_setup_saved_then_failed_is_rolled_back():
    session = Session()
    with _executor(session, "planning_setup_plan") as executor:
        result = executor.execute("planning_setup_plan", {"objective": "Ship"})
    assert not result.success
    assert "rolled back" in result.message
    assert session[Plan].all() == ()


def test_add_and_update_saved_then_failed_are_rolled_back():
    for failing, args in [
        ("planning_add_step", {"steps": ["B"]}),
        ("planning_update_step", {"step_id": 1, "status": "done"}),
        ("planning_setup_plan", {"objective": "Other"}),
    ]:
        session = Session()
        session[Plan].seed((Plan("Ship", (PlanStep(1, "A"),)),))
        before = session[Plan].all()
        with _executor(session, failing) as executor:
            assert not executor.execute(failing, args).success
        assert session[Plan].all() == before, failing


def test_validation_failures_keep_the_plan(planner):
    planner.ok("planning_setup_plan", {"objective": "Ship", "steps": ["A", "B"]})
    planner.ok("planning_update_step", {"step_id": 1, "status": "in_progress"})
    snapshot = planner.session[Plan].all()
    for name, args in [
        ("planning_setup_plan", {"objective": ""}),
        ("planning_setup_plan", {"objective": "x", "steps": ["ok", ""]}),
        ("planning_add_step", {"steps": ["ok", "y" * 300]}),
        ("planning_update_step", {"step_id": 7, "status": "done"}),
        ("planning_update_step", {"step_id": 2, "title": ""}),
        ("planning_update_step", {"step_id": 2, "status": "nope"}),
        ("planning_add_step", {"steps": "not a list"}),
    ]:
        planner.fail(name, args)
    assert planner.session[Plan].all() == snapshot
