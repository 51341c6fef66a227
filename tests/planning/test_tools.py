"""The four tools through the executor: effects on the session plan and the text returned."""

from __future__ import annotations

from haversack_planning import FULL_PLAN_STEPS, Plan, PlanStep, PlanUpdate


def test_setup_creates_plan_with_ids_from_one(planner):
    result = planner.ok("planning_setup_plan", {"objective": "Ship", "steps": ["A", "B"]})
    assert planner.plan == Plan("Ship", (PlanStep(1, "A"), PlanStep(2, "B")))
    assert result.value == planner.plan
    assert result.message == "Plan set up with 2 steps."
    assert result.render() == (
        "Plan set up with 2 steps.\n"
        "Objective: Ship\n"
        "Status: active (0 of 2 steps done)\n"
        "[ ] 1. A\n"
        "[ ] 2. B"
    )


def test_setup_without_steps_points_to_add(planner):
    result = planner.ok("planning_setup_plan", {"objective": "Ship"})
    assert planner.plan.steps == ()
    assert "planning_add_step" in result.message
    assert result.render().endswith("(no steps yet)")


def test_setup_normalises_whitespace(planner):
    planner.ok("planning_setup_plan", {"objective": "  Ship\n the  thing ", "steps": [" a\tb "]})
    assert planner.plan.objective == "Ship the thing"
    assert planner.plan.steps[0].title == "a b"


def test_setup_replaces_existing_plan_and_restarts_ids(planner):
    planner.ok("planning_setup_plan", {"objective": "Old", "steps": ["x", "y", "z"]})
    planner.ok("planning_update_step", {"step_id": 1, "status": "done"})
    result = planner.ok("planning_setup_plan", {"objective": "New", "steps": ["first"]})
    assert result.message.startswith("Replaced the previous plan.")
    assert planner.session[Plan].all() == (Plan("New", (PlanStep(1, "first"),)),)


def test_add_appends_with_next_ids(planner):
    planner.ok("planning_setup_plan", {"objective": "Ship", "steps": ["A"]})
    result = planner.ok("planning_add_step", {"steps": ["B", "C"]})
    assert [s.step_id for s in planner.plan.steps] == [1, 2, 3]
    assert [s.title for s in planner.plan.steps] == ["A", "B", "C"]
    assert all(s.status == "pending" for s in planner.plan.steps)
    assert result.message == "Added steps 2-3."
    assert result.value == PlanUpdate(planner.plan, (2, 3))
    assert planner.ok("planning_add_step", {"steps": ["D"]}).message == "Added step 4."


def test_session_keeps_exactly_one_plan(planner):
    planner.ok("planning_setup_plan", {"objective": "Ship", "steps": ["A"]})
    planner.ok("planning_add_step", {"steps": ["B"]})
    planner.ok("planning_update_step", {"step_id": 2, "title": "B2"})
    planner.ok("planning_read_plan")
    assert len(planner.session[Plan].all()) == 1


def test_update_status_and_title(planner):
    planner.ok("planning_setup_plan", {"objective": "Ship", "steps": ["A", "B"]})
    result = planner.ok("planning_update_step", {"step_id": 1, "status": "in_progress"})
    assert result.message == "Step 1: now in_progress."
    assert planner.plan.steps[0] == PlanStep(1, "A", "in_progress")
    result = planner.ok("planning_update_step", {"step_id": 2, "title": " Better  B "})
    assert result.message == "Step 2: renamed."
    assert planner.plan.steps[1] == PlanStep(2, "Better B", "pending")
    result = planner.ok("planning_update_step", {"step_id": 2, "title": "C", "status": "done"})
    assert result.message == "Step 2: renamed and now done."
    assert planner.plan.done == 1
    assert "[~] 1. A\n[x] 2. C" in result.render()


def test_update_to_same_values_is_allowed(planner):
    planner.ok("planning_setup_plan", {"objective": "Ship", "steps": ["A", "B"]})
    result = planner.ok("planning_update_step", {"step_id": 1, "status": "pending"})
    assert result.message == "Step 1: unchanged."


def test_done_count_follows_status_changes(planner):
    planner.ok("planning_setup_plan", {"objective": "Ship", "steps": ["A", "B", "C"]})
    planner.ok("planning_update_step", {"step_id": 1, "status": "done"})
    planner.ok("planning_update_step", {"step_id": 2, "status": "done"})
    planner.ok("planning_update_step", {"step_id": 1, "status": "in_progress"})
    assert planner.plan.done == 1
    assert "Status: active (1 of 3 steps done)" in planner.ok("planning_read_plan").render()


def test_plan_completes_when_every_step_is_done(planner):
    planner.ok("planning_setup_plan", {"objective": "Ship", "steps": ["A", "B"]})
    planner.ok("planning_update_step", {"step_id": 1, "status": "done"})
    assert planner.plan.status == "active"
    result = planner.ok("planning_update_step", {"step_id": 2, "status": "done"})
    assert planner.plan.status == "completed"
    assert "the plan is completed" in result.message
    assert "Status: completed (2 of 2 steps done)" in result.render()


def test_read_returns_plan_and_changes_nothing(planner):
    planner.ok("planning_setup_plan", {"objective": "Ship", "steps": ["A"]})
    before = planner.session[Plan].all()
    result = planner.ok("planning_read_plan")
    assert result.value == planner.plan
    assert planner.session[Plan].all() == before
    assert result.render() == (
        "The current plan:\nObjective: Ship\nStatus: active (0 of 1 step done)\n[ ] 1. A"
    )


def test_read_tool_is_annotated_read_only(planner):
    tools = {t.name: t for t in planner.rendered.tools}
    assert tools["planning_read_plan"].annotations.read_only
    assert not any(
        tools[n].annotations.read_only
        for n in ("planning_setup_plan", "planning_add_step", "planning_update_step")
    )


def test_long_plan_changes_render_only_changed_steps(planner):
    titles = [f"s{i}" for i in range(1, FULL_PLAN_STEPS + 1)]
    planner.ok("planning_setup_plan", {"objective": "Big", "steps": titles})
    small = planner.ok("planning_update_step", {"step_id": 3, "status": "done"})
    assert small.render().count("\n[") == FULL_PLAN_STEPS  # still the whole plan
    result = planner.ok("planning_add_step", {"steps": ["extra"]})
    assert result.render() == (
        f"Added step {FULL_PLAN_STEPS + 1}. Call planning_read_plan to see every step.\n"
        "Objective: Big\n"
        f"Status: active (1 of {FULL_PLAN_STEPS + 1} steps done)\n"
        f"[ ] {FULL_PLAN_STEPS + 1}. extra\n"
        f"({FULL_PLAN_STEPS} other steps not shown)"
    )
    full = planner.ok("planning_read_plan").render()
    assert full.count("\n[") == FULL_PLAN_STEPS + 1


def test_tool_order_and_descriptions(planner):
    assert [t.name for t in planner.rendered.tools] == [
        "planning_setup_plan",
        "planning_add_step",
        "planning_update_step",
        "planning_read_plan",
    ]
    for t in planner.rendered.tools:
        assert t.description
        assert t.examples
