"""``planning_section``: the section holding the planning guidance, tools and policy."""

from __future__ import annotations

from haversack import MarkdownSection

from ._config import PlanningConfig
from ._guidance import guidance
from ._policy import PlanRequiredPolicy
from ._tools import planning_tools

__all__ = ["SECTION_KEY", "planning_section"]

#: The planning section's key in a composed prompt.
SECTION_KEY = "planning"


def planning_section(config: PlanningConfig | None = None) -> MarkdownSection[None]:
    """The ``planning`` section for ``config`` (defaults when ``None``).

    Its text depends on ``config.strategy``; it carries the four planning tools and a
    :class:`PlanRequiredPolicy` governing them.
    """
    cfg = config if config is not None else PlanningConfig()
    return MarkdownSection[None](
        title="Planning",
        key=SECTION_KEY,
        template=guidance(cfg),
        tools=planning_tools(cfg),
        policies=(PlanRequiredPolicy(),),
    )
