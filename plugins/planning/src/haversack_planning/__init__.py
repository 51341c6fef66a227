"""haversack-planning: a session-scoped plan the model keeps with four tools.

Use it as a pack (``haversack.compose(..., packs=["planning"])``) or directly:
``planning_section(PlanningConfig(strategy="plan_act_reflect"))``. The plan is
``session[Plan].latest()``.
"""

from __future__ import annotations

from ._config import (
    DEFAULT_MAX_OBJECTIVE_CHARS,
    DEFAULT_MAX_STEPS,
    DEFAULT_MAX_TITLE_CHARS,
    PlanningConfig,
    PlanningStrategy,
)
from ._model import FULL_PLAN_STEPS, Plan, PlanStatus, PlanStep, PlanUpdate, StepStatus
from ._params import AddStepParams, SetupPlanParams, UpdateStepParams
from ._policy import PLAN_REQUIRED_POLICY, PlanRequiredPolicy
from ._section import SECTION_KEY, planning_section
from ._tools import TOOL_NAMES, planning_tools

__all__ = [
    "DEFAULT_MAX_OBJECTIVE_CHARS",
    "DEFAULT_MAX_STEPS",
    "DEFAULT_MAX_TITLE_CHARS",
    "FULL_PLAN_STEPS",
    "PLAN_REQUIRED_POLICY",
    "SECTION_KEY",
    "TOOL_NAMES",
    "AddStepParams",
    "Plan",
    "PlanRequiredPolicy",
    "PlanStatus",
    "PlanStep",
    "PlanUpdate",
    "PlanningConfig",
    "PlanningStrategy",
    "SetupPlanParams",
    "StepStatus",
    "UpdateStepParams",
    "planning_section",
    "planning_tools",
]
