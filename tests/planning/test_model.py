"""Plan rendering, PlanUpdate rendering, params field descriptions, and the config."""

from __future__ import annotations

import dataclasses

import pytest

from haversack import ToolValidationError, serde
from haversack_planning import (
    FULL_PLAN_STEPS,
    AddStepParams,
    Plan,
    PlanningConfig,
    PlanStep,
    PlanUpdate,
    SetupPlanParams,
    UpdateStepParams,
)


def test_step_lines_use_one_mark_per_status():
    assert PlanStep(1, "Plan", "in_progress").render() == "[~] 1. Plan"
    assert PlanStep(2, "Write tests", "done").render() == "[x] 2. Write tests"
    assert PlanStep(3, "Ship").render() == "[ ] 3. Ship"


def test_plan_render():
    plan = Plan("Ship", (PlanStep(1, "A", "done"), PlanStep(2, "B")), "active", 1)
    assert plan.render() == (
        "Objective: Ship\nStatus: active (1 of 2 steps done)\n[x] 1. A\n[ ] 2. B"
    )
    assert (
        Plan("Empty").render()
        == "Objective: Empty\nStatus: active (0 of 0 steps done)\n(no steps yet)"
    )


def test_plan_step_lookup():
    plan = Plan("Ship", (PlanStep(1, "A"), PlanStep(2, "B")))
    assert plan.step(2) == PlanStep(2, "B")
    assert plan.step(0) is None
    assert plan.step(3) is None


def test_plan_update_renders_whole_small_plan():
    plan = Plan("Ship", (PlanStep(1, "A"), PlanStep(2, "B")))
    assert PlanUpdate(plan, (2,)).render() == plan.render()


def test_plan_update_renders_changed_steps_of_long_plan():
    steps = tuple(PlanStep(i, f"s{i}") for i in range(1, FULL_PLAN_STEPS + 3))
    text = PlanUpdate(Plan("Big", steps), (2, 5)).render()
    assert text.splitlines()[2:] == [
        "[ ] 2. s2",
        "[ ] 5. s5",
        f"({FULL_PLAN_STEPS} other steps not shown)",
    ]


@pytest.mark.parametrize(
    "cls",
    [SetupPlanParams, AddStepParams, UpdateStepParams, Plan, PlanStep, PlanUpdate, PlanningConfig],
)
def test_every_field_has_a_description(cls):
    for f in dataclasses.fields(cls):
        assert f.metadata.get("description"), f"{cls.__name__}.{f.name}"


@pytest.mark.parametrize("cls", [SetupPlanParams, AddStepParams, UpdateStepParams])
def test_schema_carries_descriptions_and_forbids_extra_fields(cls):
    schema = serde.schema(cls)
    assert schema["additionalProperties"] is False
    assert all(prop.get("description") for prop in schema["properties"].values())


def test_update_schema_lists_the_statuses():
    status = serde.schema(UpdateStepParams)["properties"]["status"]
    assert {"enum": ["pending", "in_progress", "done"], "type": "string"} in status["anyOf"]


def test_config_defaults():
    config = PlanningConfig()
    assert (
        config.strategy,
        config.max_steps,
        config.max_objective_chars,
        config.max_title_chars,
    ) == (
        "react",
        100,
        500,
        200,
    )


def test_config_parses_strictly():
    assert serde.parse(PlanningConfig, {"strategy": "plan_act_reflect", "max_steps": 10}) == (
        PlanningConfig(strategy="plan_act_reflect", max_steps=10)
    )
    with pytest.raises(ToolValidationError, match="strategy"):
        serde.parse(PlanningConfig, {"strategy": "waterfall"})
    with pytest.raises(ToolValidationError, match="unknown field"):
        serde.parse(PlanningConfig, {"max_step": 3})


@pytest.mark.parametrize(
    ("field", "value"),
    [("max_steps", 0), ("max_steps", 1001), ("max_title_chars", -1), ("max_objective_chars", True)],
)
def test_config_rejects_out_of_range_limits(field, value):
    with pytest.raises(ValueError, match=f"{field} must be an integer from 1 to"):
        PlanningConfig(**{field: value})


def test_config_is_frozen():
    with pytest.raises(dataclasses.FrozenInstanceError):
        PlanningConfig().max_steps = 3  # type: ignore[misc]
