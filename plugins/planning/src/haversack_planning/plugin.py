"""Hook implementations of the planning pack (entry point ``planning``)."""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

import haversack

# The same marker as ``haversack.hookimpl``; imported by name because the lazy attribute is
# typed Any, which mypy --strict rejects as an untyped decorator.
from haversack.hookspecs import hookimpl

from ._config import PlanningConfig
from ._section import planning_section


@hookimpl
def config_type() -> type[PlanningConfig]:
    """The pack's options: strategy and limits."""
    return PlanningConfig


@hookimpl
def register_sections(
    register: Callable[[haversack.Section[Any]], None], config: PlanningConfig | None
) -> None:
    """Register the ``planning`` section, built for the pack's configuration."""
    register(planning_section(config))
