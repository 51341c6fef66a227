"""Hook implementations of the planning pack (entry point ``planning``)."""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

import haversack

from ._config import PlanningConfig
from ._section import planning_section


@haversack.hookimpl
def config_type() -> type[PlanningConfig]:
    """The pack's options: strategy and limits."""
    return PlanningConfig


@haversack.hookimpl
def register_sections(
    register: Callable[[haversack.Section[Any]], None], config: PlanningConfig | None
) -> None:
    """Register the ``planning`` section, built for the pack's configuration."""
    register(planning_section(config))
