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

# For type checkers only: each public name imported as itself (``X as X``), which marks it
# re-exported under mypy --strict and pyright; a test checks this list against ``_EXPORTS``.
if TYPE_CHECKING:
    from ._config import DEFAULT_MAX_OBJECTIVE_CHARS as DEFAULT_MAX_OBJECTIVE_CHARS
    from ._config import DEFAULT_MAX_STEPS as DEFAULT_MAX_STEPS
    from ._config import DEFAULT_MAX_TITLE_CHARS as DEFAULT_MAX_TITLE_CHARS
    from ._config import PlanningConfig as PlanningConfig
    from ._config import PlanningStrategy as PlanningStrategy
    from ._model import FULL_PLAN_STEPS as FULL_PLAN_STEPS
    from ._model import Plan as Plan
    from ._model import PlanStatus as PlanStatus
    from ._model import PlanStep as PlanStep
    from ._model import PlanUpdate as PlanUpdate
    from ._model import StepStatus as StepStatus
    from ._params import AddStepParams as AddStepParams
    from ._params import SetupPlanParams as SetupPlanParams
    from ._params import UpdateStepParams as UpdateStepParams
    from ._policy import PLAN_REQUIRED_POLICY as PLAN_REQUIRED_POLICY
    from ._policy import PlanRequiredPolicy as PlanRequiredPolicy
    from ._section import SECTION_KEY as SECTION_KEY
    from ._section import planning_section as planning_section
    from ._tools import TOOL_NAMES as TOOL_NAMES
    from ._tools import planning_tools as planning_tools

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

# Derived from the table so there is no third list to keep; hidden from type checkers, which
# take the ``X as X`` imports above (a computed ``__all__`` would make every name private).
if not TYPE_CHECKING:
    __all__ = sorted(_EXPORTS)

__getattr__, __dir__ = lazy_exports(globals(), _EXPORTS)
