"""``Plan`` and ``PlanStep``: the session state the planning tools keep, and its rendering."""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Literal

__all__ = ["FULL_PLAN_STEPS", "Plan", "PlanStatus", "PlanStep", "PlanUpdate", "StepStatus"]

StepStatus = Literal["pending", "in_progress", "done"]
"""A step's progress."""

PlanStatus = Literal["active", "completed"]
"""``completed`` once the plan has steps and every one is ``done``; it then stays frozen."""

_MARKS: dict[str, str] = {"pending": " ", "in_progress": "~", "done": "x"}

#: Up to this many steps, a change shows the whole plan; beyond it, only the changed steps,
#: so a call's cost and its share of the model's context do not grow with the plan.
FULL_PLAN_STEPS = 20


@dataclass(frozen=True, slots=True)
class PlanStep:
    """One step of the plan; ``step_id`` is its 1-based position, fixed once added."""

    step_id: int = field(metadata={"description": "The step's id: 1, 2, 3... in order added."})
    title: str = field(metadata={"description": "What the step does, on one line."})
    status: StepStatus = field(
        default="pending", metadata={"description": "pending, in_progress or done."}
    )

    def render(self) -> str:
        """One line: ``[x] 2. Write tests`` (``[ ]`` pending, ``[~]`` in progress)."""
        return f"[{_MARKS[self.status]}] {self.step_id}. {self.title}"


@dataclass(frozen=True, slots=True)
class Plan:
    """The session's plan: ``session[Plan].latest()``; the slice holds at most one.

    ``done`` counts the steps whose status is ``done`` (kept so progress is O(1) to report).
    """

    objective: str = field(metadata={"description": "What the plan should achieve."})
    steps: tuple[PlanStep, ...] = field(
        default=(), metadata={"description": "The steps, ordered by id."}
    )
    status: PlanStatus = field(default="active", metadata={"description": "active or completed."})
    done: int = field(default=0, metadata={"description": "How many steps are done."})

    def step(self, step_id: int) -> PlanStep | None:
        """The step with ``step_id``, or ``None``."""
        if 1 <= step_id <= len(self.steps):
            return self.steps[step_id - 1]
        return None

    def header(self) -> list[str]:
        """The objective line and the status line with progress."""
        total = len(self.steps)
        return [
            f"Objective: {self.objective}",
            f"Status: {self.status} ({self.done} of {total} step{'' if total == 1 else 's'} done)",
        ]

    def render(self) -> str:
        """The plan as the model sees it: objective, status with progress, one line per step."""
        lines = self.header()
        if self.steps:
            lines.extend(step.render() for step in self.steps)
        else:
            lines.append("(no steps yet)")
        return "\n".join(lines)


@dataclass(frozen=True, slots=True)
class PlanUpdate:
    """What adding or updating steps returns: the new plan and the ids of the changed steps.

    Renders as the whole plan while it has at most :data:`FULL_PLAN_STEPS` steps; a longer
    plan renders its objective, status and the changed steps only.
    """

    plan: Plan = field(metadata={"description": "The plan after the change."})
    changed: tuple[int, ...] = field(
        metadata={"description": "Ids of the steps this call added or changed."}
    )

    def render(self) -> str:
        """The whole plan, or for a long plan the header and the changed steps."""
        plan = self.plan
        if len(plan.steps) <= FULL_PLAN_STEPS:
            return plan.render()
        lines = plan.header()
        lines.extend(plan.steps[step_id - 1].render() for step_id in self.changed)
        hidden = len(plan.steps) - len(self.changed)
        lines.append(f"({hidden} other step{'' if hidden == 1 else 's'} not shown)")
        return "\n".join(lines)
