"""The planning section's text for each strategy, referring to tools as ``${tool:name}``
and keeping each tool's sentences inside ``${if tool:name}`` blocks."""

from __future__ import annotations

from ._config import PlanningConfig, PlanningStrategy

__all__ = ["guidance"]

_INTRO = """\
Keep a short plan with the planning tools when a task takes several steps or several tool
calls; skip planning for a task you can finish in one step.
"""

_STRATEGIES: dict[PlanningStrategy, str] = {
    "react": """\
Work in short cycles: decide the next step, run one tool, read its result, and let what you
learned choose the following step. Keep the plan in step with the work: mark a step
`in_progress` when you start it and `done` as soon as it is finished, and add steps when a
result uncovers more work.
""",
    "plan_act_reflect": """\
Plan, act, reflect:

1. Plan: before running any other tool, write the whole plan${if tool:planning_setup_plan} with
   ${tool:planning_setup_plan}${endif}, one step per concrete action.
2. Act: work through the steps in order; mark each step `in_progress` when you start it and
   `done` when it is finished.
3. Reflect: after each step, compare what happened with the objective. If the plan no longer
   fits, retitle or add steps before you continue.
""",
    "goal_decompose_route_synthesise": """\
Goal, decompose, route, synthesise:

1. Goal: restate the goal in one sentence; it becomes the plan's objective.
2. Decompose: break the goal into concrete sub-problems, one step each, and record
   them${if tool:planning_setup_plan} with ${tool:planning_setup_plan}${endif}.
3. Route: handle each sub-problem with the tool (or the reasoning) that suits it best; mark
   its step `in_progress` while you work on it and `done` when you have its result.
4. Synthesise: once every step is done, combine the results into one answer to the original
   goal.
""",
}

_TOOLS = """\
How to use the tools:

${if tool:planning_setup_plan}
- ${tool:planning_setup_plan} starts a plan from an objective and, optionally, its first
  steps. It replaces any existing plan.
${endif}
${if tool:planning_add_step}
- ${tool:planning_add_step} appends one or more steps when you find more work.
${endif}
${if tool:planning_update_step}
- ${tool:planning_update_step} changes a step's title or status (`pending`, `in_progress`,
  `done`), by step id.
${endif}
${if tool:planning_read_plan}
- ${tool:planning_read_plan} shows the plan and its progress.
${endif}
- Step ids are 1, 2, 3... in the order steps were added. When every step is done the plan is
  completed and can no longer change; start a new plan for new work.
"""


def guidance(config: PlanningConfig) -> str:
    """The section body for ``config``: intro, the strategy's method, the tools and limits."""
    limits = (
        f"- Limits: at most {config.max_steps} steps, objectives up to "
        f"{config.max_objective_chars} characters, step titles up to {config.max_title_chars}."
    )
    return "\n".join((_INTRO, _STRATEGIES[config.strategy], _TOOLS + limits))
