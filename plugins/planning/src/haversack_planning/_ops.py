"""Pure plan transitions: validate a request against the current plan, return the new plan.

Every check runs before anything is built, so a rejected request changes nothing even when
called outside the executor's transaction.
"""

from __future__ import annotations

from collections.abc import Callable, Sequence
from dataclasses import dataclass, replace

from haversack import ToolValidationError

from ._config import PlanningConfig
from ._model import Plan, PlanStep
from ._params import AddStepParams, SetupPlanParams, UpdateStepParams

__all__ = ["Change", "NameOf", "add_steps", "require_plan", "setup_plan", "update_step"]

#: The current name of the pack's tool originally called so, or ``None`` when this
#: composition does not offer it (``exclude_tools`` may remove any tool): messages name a
#: tool only while it exists.
NameOf = Callable[[str], str | None]
"""Maps a tool's original name to its name in the current prompt (packs may be renamed)."""


@dataclass(frozen=True, slots=True)
class Change:
    """A transition's outcome: the new plan, a one-line summary and the changed step ids."""

    plan: Plan
    message: str
    changed: tuple[int, ...] = ()


# Text longer than this many times its limit is refused before whitespace is collapsed:
# collapsing "a a a ..." splits it into one string per word (a 3 MB argument built ~70 MB),
# and no honest text is 15/16 whitespace.
_RAW_FACTOR = 16
_OBJECTIVE_HINT = "Shorten it to one sentence and put the details into steps."
_TITLE_HINT = "Shorten it, or split the work into several steps."


def _one_line(text: str) -> str:
    # Each step renders on one line, so runs of whitespace (newlines too) become one space.
    return " ".join(text.split())


def _check_raw(raw: str, limit: int, label: str, field_path: str, hint: str) -> None:
    if len(raw) > _RAW_FACTOR * limit + 64:
        raise ToolValidationError(
            f"{label} is {len(raw)} characters long; the limit is {limit}. {hint}",
            field_path=field_path,
        )


def _objective(raw: str, config: PlanningConfig) -> str:
    _check_raw(raw, config.max_objective_chars, "The objective", "objective", _OBJECTIVE_HINT)
    text = _one_line(raw)
    if not text:
        raise ToolValidationError(
            "The objective is empty: say in one sentence what the plan should achieve.",
            field_path="objective",
        )
    if len(text) > config.max_objective_chars:
        raise ToolValidationError(
            f"The objective is {len(text)} characters long; the limit is "
            f"{config.max_objective_chars}. {_OBJECTIVE_HINT}",
            field_path="objective",
        )
    return text


def _title(raw: str, config: PlanningConfig, *, field_path: str, label: str) -> str:
    _check_raw(raw, config.max_title_chars, label, field_path, _TITLE_HINT)
    text = _one_line(raw)
    if not text:
        raise ToolValidationError(
            f"{label} is empty: every step needs a short title.", field_path=field_path
        )
    if len(text) > config.max_title_chars:
        raise ToolValidationError(
            f"{label} is {len(text)} characters long; the limit is {config.max_title_chars}. "
            f"{_TITLE_HINT}",
            field_path=field_path,
        )
    return text


def _titles(raw: Sequence[str], config: PlanningConfig, field: str) -> list[str]:
    many = len(raw) > 1
    return [
        _title(
            item,
            config,
            field_path=f"{field}.{index}",
            label=f"Step title {index + 1} of {len(raw)}" if many else "The step title",
        )
        for index, item in enumerate(raw)
    ]


def _too_many(total: int, config: PlanningConfig, name_of: NameOf) -> ToolValidationError:
    setup = name_of("planning_setup_plan")
    then = f", or finish this plan and start the next with {setup}" if setup else ""
    return ToolValidationError(
        f"That would make {total} steps; a plan holds at most {config.max_steps}. Merge related "
        f"steps{then}.",
        field_path="steps",
    )


def _plural(count: int) -> str:
    return "step" if count == 1 else "steps"


def require_plan(plan: Plan | None, name_of: NameOf) -> Plan:
    """The plan, or a validation error telling the model to set one up first."""
    if plan is None:
        setup = name_of("planning_setup_plan")
        raise ToolValidationError(
            f"There is no plan yet. Call {setup} with an objective (and, optionally, the first "
            "steps) first."
            if setup
            else "There is no plan yet, and no tool here starts one: tell the user."
        )
    return plan


def _require_active(plan: Plan, name_of: NameOf) -> None:
    if plan.status == "completed":
        setup = name_of("planning_setup_plan")
        raise ToolValidationError(
            f"The plan is already completed (all {len(plan.steps)} {_plural(len(plan.steps))} "
            "are done) and can no longer change."
            + (f" To continue, start a new plan with {setup}." if setup else "")
        )


def setup_plan(
    previous: Plan | None, params: SetupPlanParams, config: PlanningConfig, name_of: NameOf
) -> Change:
    """A new plan replacing ``previous``; step ids restart at 1."""
    objective = _objective(params.objective, config)
    if len(params.steps) > config.max_steps:
        raise _too_many(len(params.steps), config, name_of)
    titles = _titles(params.steps, config, "steps")
    plan = Plan(
        objective=objective,
        steps=tuple(PlanStep(i, title) for i, title in enumerate(titles, start=1)),
    )
    count = len(titles)
    if count:
        message = f"Plan set up with {count} {_plural(count)}."
    else:
        add = name_of("planning_add_step")
        message = (
            f"Plan set up with no steps yet; add them with {add}."
            if add
            else ("Plan set up with no steps.")
        )
    if previous is not None:
        message = "Replaced the previous plan. " + message
    return Change(plan, message)


def add_steps(
    current: Plan | None, params: AddStepParams, config: PlanningConfig, name_of: NameOf
) -> Change:
    """``current`` with the given steps appended as ``pending``."""
    plan = require_plan(current, name_of)
    _require_active(plan, name_of)
    if not params.steps:
        raise ToolValidationError(
            "No steps given: pass at least one step title in steps.", field_path="steps"
        )
    total = len(plan.steps) + len(params.steps)
    if total > config.max_steps:
        raise _too_many(total, config, name_of)
    titles = _titles(params.steps, config, "steps")
    first = len(plan.steps) + 1
    new = tuple(PlanStep(i, title) for i, title in enumerate(titles, start=first))
    # Adding work to a plan reopens nothing: a completed plan was rejected above.
    updated = replace(plan, steps=plan.steps + new)
    if len(new) == 1:
        message = f"Added step {first}."
    else:
        message = f"Added steps {first}-{first + len(new) - 1}."
    return Change(updated, message, tuple(step.step_id for step in new))


def update_step(
    current: Plan | None, params: UpdateStepParams, config: PlanningConfig, name_of: NameOf
) -> Change:
    """``current`` with one step's title and/or status changed."""
    plan = require_plan(current, name_of)
    if params.title is None and params.status is None:
        raise ToolValidationError(
            "Nothing to update: give a new title, a new status, or both, for the step."
        )
    _require_active(plan, name_of)
    step = plan.step(params.step_id)
    if step is None:
        count = len(plan.steps)
        if count == 0:
            add = name_of("planning_add_step")
            hint = "the plan has no steps yet" + (f"; add some with {add}" if add else "")
        else:
            ids = "step 1 only" if count == 1 else f"steps 1-{count}"
            read = name_of("planning_read_plan")
            hint = f"the plan has {ids}" + (f"; call {read} to see them" if read else "")
        raise ToolValidationError(
            f"There is no step {params.step_id}: {hint}.", field_path="step_id"
        )
    title = (
        step.title
        if params.title is None
        else _title(params.title, config, field_path="title", label="The new title")
    )
    status = step.status if params.status is None else params.status
    new_step = PlanStep(step.step_id, title, status)
    index = step.step_id - 1
    done = plan.done + (status == "done") - (step.status == "done")
    steps = (*plan.steps[:index], new_step, *plan.steps[index + 1 :])
    completed = done == len(steps)
    updated = Plan(plan.objective, steps, "completed" if completed else "active", done)
    message = f"Step {step.step_id}: " + _describe(step, new_step)
    if completed:
        message += " Every step is done: the plan is completed."
    return Change(updated, message, (step.step_id,))


def _describe(old: PlanStep, new: PlanStep) -> str:
    parts = []
    if new.title != old.title:
        parts.append("renamed")
    if new.status != old.status:
        parts.append(f"now {new.status}")
    return (" and ".join(parts) if parts else "unchanged") + "."
