"""The four planning tools, built for one configuration."""

from __future__ import annotations

from typing import Any

from haversack import Tool, ToolAnnotations, ToolContext, ToolExample, ToolResult

from ._config import PlanningConfig
from ._model import FULL_PLAN_STEPS, Plan, PlanStep, PlanUpdate
from ._ops import Change, NameOf, add_steps, require_plan, setup_plan, update_step
from ._params import AddStepParams, SetupPlanParams, UpdateStepParams
from ._store import current_plan, save_plan

__all__ = ["TOOL_NAMES", "planning_tools"]

#: The tools' original names, in the order the section lists them.
TOOL_NAMES = (
    "planning_setup_plan",
    "planning_add_step",
    "planning_update_step",
    "planning_read_plan",
)

_EXAMPLE_PLAN = Plan(
    objective="Fix the failing date parser test",
    steps=(
        PlanStep(1, "Reproduce the failure", "done"),
        PlanStep(2, "Fix the parser", "in_progress"),
        PlanStep(3, "Run the whole test suite"),
    ),
    done=1,
)


def _name_of(context: ToolContext) -> NameOf:
    """What messages call the pack's tools: ``None`` for one this composition lacks."""
    return lambda original: context.tool_name(original) if context.offers(original) else None


def _commit(change: Change, context: ToolContext) -> ToolResult[PlanUpdate]:
    save_plan(context.session, change.plan)
    message = change.message
    if len(change.plan.steps) > FULL_PLAN_STEPS:
        read = _name_of(context)("planning_read_plan")
        message += f" Call {read} to see every step." if read else ""
    return ToolResult.ok(PlanUpdate(change.plan, change.changed), message)


def planning_tools(config: PlanningConfig | None = None) -> tuple[Tool[Any, Any], ...]:
    """``planning_setup_plan``, ``planning_add_step``, ``planning_update_step`` and
    ``planning_read_plan``, enforcing the limits of ``config`` (defaults when ``None``).

    Setup and read return the :class:`Plan`; add and update return a :class:`PlanUpdate`
    (the plan plus the changed step ids). Both render one line per step. A rejected call raises
    :class:`haversack.ToolValidationError` before the session is touched.
    """
    cfg = config if config is not None else PlanningConfig()

    def setup(params: SetupPlanParams, *, context: ToolContext) -> ToolResult[Plan]:
        previous = current_plan(context.session)
        change = setup_plan(previous, params, cfg, _name_of(context))
        save_plan(context.session, change.plan)
        return ToolResult.ok(change.plan, change.message)

    def add(params: AddStepParams, *, context: ToolContext) -> ToolResult[PlanUpdate]:
        plan = current_plan(context.session)
        return _commit(add_steps(plan, params, cfg, _name_of(context)), context)

    def update(params: UpdateStepParams, *, context: ToolContext) -> ToolResult[PlanUpdate]:
        plan = current_plan(context.session)
        return _commit(update_step(plan, params, cfg, _name_of(context)), context)

    def read(params: None, *, context: ToolContext) -> ToolResult[Plan]:
        plan = require_plan(current_plan(context.session), _name_of(context))
        return ToolResult.ok(plan, "The current plan:")

    tools: tuple[Tool[Any, Any], ...] = (
        Tool[SetupPlanParams, Plan](
            name="planning_setup_plan",
            description="Start a plan: an objective and optional first steps. Replaces any "
            "existing plan; step ids restart at 1.",
            handler=setup,
            annotations=ToolAnnotations(destructive=True, idempotent=True),
            examples=(
                ToolExample(
                    "Plan a bug fix in three steps.",
                    SetupPlanParams(
                        objective="Fix the failing date parser test",
                        steps=(
                            "Reproduce the failure",
                            "Fix the parser",
                            "Run the whole test suite",
                        ),
                    ),
                    Plan(
                        objective="Fix the failing date parser test",
                        steps=(
                            PlanStep(1, "Reproduce the failure"),
                            PlanStep(2, "Fix the parser"),
                            PlanStep(3, "Run the whole test suite"),
                        ),
                    ),
                ),
            ),
        ),
        Tool[AddStepParams, PlanUpdate](
            name="planning_add_step",
            description="Append one or more steps to the plan, as pending; they get the next ids.",
            handler=add,
            annotations=ToolAnnotations(destructive=False, idempotent=False),
            examples=(
                ToolExample(
                    "Add a step found while working.",
                    AddStepParams(steps=("Update the changelog",)),
                    PlanUpdate(_with_step(_EXAMPLE_PLAN, "Update the changelog"), (4,)),
                ),
            ),
        ),
        Tool[UpdateStepParams, PlanUpdate](
            name="planning_update_step",
            description="Change a step's title and/or status (pending, in_progress, done) by "
            "its id. The plan completes when every step is done.",
            handler=update,
            annotations=ToolAnnotations(destructive=False, idempotent=True),
            examples=(
                ToolExample(
                    "Mark step 2 as done.",
                    UpdateStepParams(step_id=2, status="done"),
                    PlanUpdate(
                        Plan(
                            objective=_EXAMPLE_PLAN.objective,
                            steps=(
                                _EXAMPLE_PLAN.steps[0],
                                PlanStep(2, "Fix the parser", "done"),
                                _EXAMPLE_PLAN.steps[2],
                            ),
                            done=2,
                        ),
                        (2,),
                    ),
                ),
            ),
        ),
        Tool[None, Plan](
            name="planning_read_plan",
            description="Show the current plan: objective, status and every step.",
            handler=read,
            annotations=ToolAnnotations(read_only=True, destructive=False, idempotent=True),
            examples=(ToolExample("Check progress.", None, _EXAMPLE_PLAN),),
        ),
    )
    return tools


def _with_step(plan: Plan, title: str) -> Plan:
    step = PlanStep(len(plan.steps) + 1, title)
    return Plan(plan.objective, (*plan.steps, step), plan.status, plan.done)
