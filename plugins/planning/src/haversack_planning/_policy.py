"""``PlanRequiredPolicy``: the planning tools other than setup need a plan to exist."""

from __future__ import annotations

from typing import TYPE_CHECKING, Any

from haversack import PolicyDecision

from ._store import current_plan

if TYPE_CHECKING:
    from haversack import Tool, ToolContext, ToolResult

__all__ = ["PLAN_REQUIRED_POLICY", "PlanRequiredPolicy"]

PLAN_REQUIRED_POLICY = "planning-plan-required"
_SETUP = "planning_setup_plan"
_GATED = frozenset({"planning_add_step", "planning_update_step", "planning_read_plan"})


class PlanRequiredPolicy:
    """Deny adding, updating and reading until the session holds a plan.

    A sequential dependency on ``planning_setup_plan`` whose state is the plan itself: the
    session's ``Plan`` slice, so a rolled-back setup leaves nothing behind and a plan seeded
    by the application counts. Tools are recognised by their original names, so the policy
    keeps working when the pack's tools are prefixed or renamed.
    """

    __slots__ = ("_name",)

    def __init__(self, *, name: str = PLAN_REQUIRED_POLICY) -> None:
        self._name = name

    @property
    def name(self) -> str:
        """The policy's name, unique within a prompt."""
        return self._name

    def check(self, tool: Tool[Any, Any], params: Any, *, context: ToolContext) -> PolicyDecision:
        """Allow setup and unrelated tools; allow the others once a plan exists."""
        if tool.original_name not in _GATED or current_plan(context.session) is not None:
            return PolicyDecision.allow()
        if not context.offers(_SETUP):  # exclude_tools removed it: name no absent tool
            return PolicyDecision.deny(
                f"there is no plan yet, so {tool.name} cannot run, and no tool here starts "
                "one: tell the user."
            )
        setup = context.tool_name(_SETUP)
        return PolicyDecision.deny(
            f"there is no plan yet, so {tool.name} cannot run. Call {setup} with an objective "
            "(and, optionally, the first steps), then retry."
        )

    def on_result(
        self, tool: Tool[Any, Any], params: Any, result: ToolResult[Any], *, context: ToolContext
    ) -> None:
        """Nothing to record: the plan in the session is the state."""

    def __repr__(self) -> str:
        return f"PlanRequiredPolicy(name={self._name!r})"
