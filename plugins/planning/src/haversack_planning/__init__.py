"""haversack-planning: a session-scoped plan the model keeps with four tools.

Use it as a pack (``haversack.compose(..., packs=["planning"])``) or directly:
``planning_section(PlanningConfig(strategy="plan_act_reflect"))``. The plan is
``session[Plan].latest()``.

Names are imported on first use (PEP 562), so importing the entry-point module loads only
what the hooks need.
"""

from __future__ import annotations

from typing import TYPE_CHECKING

from haversack.lazy import lazy_exports

if TYPE_CHECKING:
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

_EXPORTS: dict[str, str] = {
    "AddStepParams": "._params",
    "DEFAULT_MAX_OBJECTIVE_CHARS": "._config",
    "DEFAULT_MAX_STEPS": "._config",
    "DEFAULT_MAX_TITLE_CHARS": "._config",
    "FULL_PLAN_STEPS": "._model",
    "PLAN_REQUIRED_POLICY": "._policy",
    "Plan": "._model",
    "PlanRequiredPolicy": "._policy",
    "PlanStatus": "._model",
    "PlanStep": "._model",
    "PlanUpdate": "._model",
    "PlanningConfig": "._config",
    "PlanningStrategy": "._config",
    "SECTION_KEY": "._section",
    "SetupPlanParams": "._params",
    "StepStatus": "._model",
    "TOOL_NAMES": "._tools",
    "UpdateStepParams": "._params",
    "planning_section": "._section",
    "planning_tools": "._tools",
}

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


__getattr__, __dir__ = lazy_exports(globals(), _EXPORTS)
