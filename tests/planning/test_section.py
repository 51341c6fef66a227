"""The planning section: key, tools, policy and the text of each strategy."""

from __future__ import annotations

import dataclasses

import pytest

from haversack import Prompt
from haversack_planning import (
    SECTION_KEY,
    TOOL_NAMES,
    PlanningConfig,
    PlanRequiredPolicy,
    planning_section,
)


def _text(config: PlanningConfig | None = None) -> str:
    return Prompt(ns="t", key="p", sections=[planning_section(config)]).render().text


def test_section_shape():
    section = planning_section()
    assert section.key == SECTION_KEY == "planning"
    assert tuple(t.name for t in section.tools) == TOOL_NAMES
    assert [type(p) for p in section.policies] == [PlanRequiredPolicy]
    # Every tool is named only inside its ${if tool:x} block, so any of them may be excluded.
    assert section.tool_references() == frozenset()
    assert section.conditional_tool_references() == frozenset(TOOL_NAMES)


def test_default_strategy_is_react():
    assert _text() == _text(PlanningConfig(strategy="react"))


def test_common_text_names_every_tool_and_the_rules():
    text = _text()
    for name in TOOL_NAMES:
        assert name in text
    assert "${tool:" not in text
    for phrase in ("several steps", "replaces any existing plan", "`in_progress`", "1, 2, 3"):
        assert phrase in text
    assert "completed and can no longer change" in text


def test_react_text():
    text = _text(PlanningConfig(strategy="react"))
    assert "Work in short cycles" in text
    assert "run one tool, read its result" in text
    assert "Plan, act, reflect" not in text
    assert "Synthesise" not in text


def test_plan_act_reflect_text():
    text = _text(PlanningConfig(strategy="plan_act_reflect"))
    assert "Plan, act, reflect:" in text
    assert (
        "before running any other tool, write the whole plan with\n   planning_setup_plan" in text
    )
    assert "3. Reflect:" in text
    assert "Work in short cycles" not in text


def test_goal_decompose_route_synthesise_text():
    text = _text(PlanningConfig(strategy="goal_decompose_route_synthesise"))
    assert "Goal, decompose, route, synthesise:" in text
    for phrase in ("restate the goal", "sub-problems", "3. Route:", "4. Synthesise:"):
        assert phrase in text
    assert "Work in short cycles" not in text


def test_strategies_give_different_texts():
    texts = {
        _text(PlanningConfig(strategy=s))
        for s in ("react", "plan_act_reflect", "goal_decompose_route_synthesise")
    }
    assert len(texts) == 3


def test_text_states_the_configured_limits():
    text = _text(PlanningConfig(max_steps=7, max_objective_chars=80, max_title_chars=40))
    assert "Limits: at most 7 steps, objectives up to 80 characters, step titles up to 40." in text


@pytest.mark.parametrize(
    "strategy", ["react", "plan_act_reflect", "goal_decompose_route_synthesise"]
)
def test_tool_references_follow_renames(strategy):
    section = planning_section(PlanningConfig(strategy=strategy))
    section.tools = tuple(dataclasses.replace(t, name="x_" + t.name) for t in section.tools)
    text = Prompt(ns="t", key="p", sections=[section]).render().text
    for name in TOOL_NAMES:
        assert "x_" + name in text
    assert "- planning_" not in text
