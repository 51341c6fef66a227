"""The params dataclasses of the planning tools (what the model sends)."""

from __future__ import annotations

from dataclasses import dataclass, field

from ._model import StepStatus

__all__ = ["AddStepParams", "SetupPlanParams", "UpdateStepParams"]


@dataclass(frozen=True, slots=True)
class SetupPlanParams:
    """Start a plan: the objective and, optionally, the first steps."""

    objective: str = field(
        metadata={"description": "What the plan should achieve, in one sentence."}
    )
    steps: tuple[str, ...] = field(
        default=(),
        metadata={"description": "Optional first steps, as short one-line titles, in order."},
    )


@dataclass(frozen=True, slots=True)
class AddStepParams:
    """Steps to append to the plan."""

    steps: tuple[str, ...] = field(
        metadata={"description": "One or more step titles to append to the plan, in order."}
    )


@dataclass(frozen=True, slots=True)
class UpdateStepParams:
    """A change to one step: a new title, a new status, or both."""

    step_id: int = field(metadata={"description": "The id of the step to change (1, 2, 3...)."})
    title: str | None = field(
        default=None, metadata={"description": "A new one-line title for the step."}
    )
    status: StepStatus | None = field(
        default=None, metadata={"description": "The new status: pending, in_progress or done."}
    )
