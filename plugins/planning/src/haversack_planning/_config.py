"""``PlanningConfig``: the pack's options (strategy and limits)."""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Literal

__all__ = [
    "DEFAULT_MAX_OBJECTIVE_CHARS",
    "DEFAULT_MAX_STEPS",
    "DEFAULT_MAX_TITLE_CHARS",
    "PlanningConfig",
    "PlanningStrategy",
]

PlanningStrategy = Literal["react", "plan_act_reflect", "goal_decompose_route_synthesise"]
"""How the section tells the model to plan; see ``docs/packs/planning.md``."""

DEFAULT_MAX_OBJECTIVE_CHARS = 500
DEFAULT_MAX_TITLE_CHARS = 200
# A plan is re-rendered into the model's context after every change, so its size is bounded.
DEFAULT_MAX_STEPS = 100
_HARD_MAX_STEPS = 1_000
_HARD_MAX_CHARS = 10_000


@dataclass(frozen=True, slots=True)
class PlanningConfig:
    """Options of the planning pack (``config={"planning": {...}}`` or the config file).

    Lengths count characters after whitespace is collapsed. Every option has a default, so
    the pack works unconfigured.
    """

    strategy: PlanningStrategy = field(
        default="react",
        metadata={
            "description": "How the section tells the model to plan: react, plan_act_reflect "
            "or goal_decompose_route_synthesise."
        },
    )
    max_steps: int = field(
        default=DEFAULT_MAX_STEPS,
        metadata={"description": f"Most steps one plan may hold (1-{_HARD_MAX_STEPS})."},
    )
    max_objective_chars: int = field(
        default=DEFAULT_MAX_OBJECTIVE_CHARS,
        metadata={"description": f"Longest objective, in characters (1-{_HARD_MAX_CHARS})."},
    )
    max_title_chars: int = field(
        default=DEFAULT_MAX_TITLE_CHARS,
        metadata={"description": f"Longest step title, in characters (1-{_HARD_MAX_CHARS})."},
    )

    def __post_init__(self) -> None:
        _check_range("max_steps", self.max_steps, _HARD_MAX_STEPS)
        _check_range("max_objective_chars", self.max_objective_chars, _HARD_MAX_CHARS)
        _check_range("max_title_chars", self.max_title_chars, _HARD_MAX_CHARS)


def _check_range(name: str, value: int, high: int) -> None:
    # bool is an int subclass; True as a limit is a mistake, not 1.
    if isinstance(value, bool) or not isinstance(value, int) or not 1 <= value <= high:
        raise ValueError(f"{name} must be an integer from 1 to {high}, got {value!r}")
