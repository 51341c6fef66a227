"""The pack as installed: entry point, hook implementations, and end-to-end runs.

``test_compose_*`` go through ``haversack.compose`` (the pack system discovering the installed
distribution); the ``test_hooks_*`` tests build the same prompt from the pack's hook
implementations directly.
"""

from __future__ import annotations

import importlib.metadata
import subprocess
import sys
from typing import Any

import pluggy
import pytest

import haversack
from haversack import Prompt, Section, Session, ToolExecutor, compose, hookspecs
from haversack_planning import Plan, PlanningConfig, PlanRequiredPolicy


def _entry_point() -> importlib.metadata.EntryPoint:
    (ep,) = [
        ep for ep in importlib.metadata.entry_points(group="haversack") if ep.name == "planning"
    ]
    return ep


def _sections(config: Any) -> list[Section[Any]]:
    from haversack_planning import plugin

    registered: list[Section[Any]] = []
    plugin.register_sections(registered.append, config)
    return registered


def _run_session(executor: ToolExecutor, session: Session, prefix: str = "") -> None:
    """A whole planning session, as a model would drive it."""

    def call(name: str, args: dict[str, Any]) -> Any:
        return executor.execute(prefix + name, args)

    denied = call("planning_add_step", {"steps": ["too early"]})
    assert not denied.success
    assert f"Call {prefix}planning_setup_plan" in denied.message
    assert call(
        "planning_setup_plan", {"objective": "Release 1.2", "steps": ["Test", "Tag"]}
    ).success
    assert call("planning_add_step", {"steps": ["Announce"]}).success
    assert call("planning_update_step", {"step_id": 3, "title": "Announce on the list"}).success
    for step_id in (1, 2):
        assert call("planning_update_step", {"step_id": step_id, "status": "done"}).success
    assert not call("planning_update_step", {"step_id": 9, "status": "done"}).success
    last = call("planning_update_step", {"step_id": 3, "status": "done"})
    assert "the plan is completed" in last.message
    read = call("planning_read_plan", {})
    assert read.render() == (
        "The current plan:\n"
        "Objective: Release 1.2\n"
        "Status: completed (3 of 3 steps done)\n"
        "[x] 1. Test\n"
        "[x] 2. Tag\n"
        "[x] 3. Announce on the list"
    )
    assert len(session[Plan].all()) == 1
    assert session[Plan].latest() == read.value


def test_entry_point_is_installed():
    ep = _entry_point()
    assert ep.value == "haversack_planning.plugin"
    assert ep.dist is not None
    assert ep.dist.metadata["Name"] == "haversack-planning"


def test_plugin_hooks_match_the_specs():
    module = _entry_point().load()
    pm = pluggy.PluginManager(hookspecs.PROJECT)
    pm.add_hookspecs(hookspecs)
    pm.register(module, name="planning")  # validates every hookimpl against its spec
    assert module.config_type is not None
    assert pm.hook.config_type() == [PlanningConfig]
    assert haversack.hookimpl is hookspecs.hookimpl


def test_hooks_register_one_section_per_config():
    (section,) = _sections(PlanningConfig(strategy="plan_act_reflect", max_steps=5))
    assert section.key == "planning"
    assert any(isinstance(p, PlanRequiredPolicy) for p in section.policies)
    text = Prompt(ns="t", key="p", sections=[section]).render().text
    assert "Plan, act, reflect" in text
    assert "at most 5 steps" in text


def test_hooks_accept_missing_config():
    (section,) = _sections(None)
    text = Prompt(ns="t", key="p", sections=[section]).render().text
    assert "Work in short cycles" in text


def test_hooks_end_to_end_through_the_executor():
    prompt = Prompt(ns="tests", key="e2e", sections=_sections(PlanningConfig()))
    session = Session()
    with ToolExecutor(prompt.render(), session=session) as executor:
        _run_session(executor, session)


def test_import_has_no_side_effects():
    code = (
        "import sys, haversack_planning;"
        "print(sorted(m for m in ('pluggy', 'pydantic', 'haversack_planning.plugin') "
        "if m in sys.modules))"
    )
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, check=True)
    assert out.stdout.strip() == "[]"


def test_compose_end_to_end():
    prompt = compose(
        ns="tests",
        key="e2e",
        packs=["planning"],
        config={"planning": {"strategy": "goal_decompose_route_synthesise"}},
        strict=True,
    )
    rendered = prompt.render()
    assert "Goal, decompose, route, synthesise" in rendered.text
    session = Session()
    with ToolExecutor(rendered, session=session) as executor:
        _run_session(executor, session)


def test_compose_with_prefix_keeps_policy_and_references_right():
    prompt = compose(
        ns="tests",
        key="e2e",
        packs=["planning"],
        config={"planning": {"prefix": "p_"}},
        strict=True,
    )
    rendered = prompt.render()
    assert "- p_planning_setup_plan starts a plan" in rendered.text
    session = Session()
    with ToolExecutor(rendered, session=session) as executor:
        _run_session(executor, session, prefix="p_")


def test_compose_rejects_bad_options():
    with pytest.raises(haversack.errors.PackConfigError, match="max_steps"):
        compose(
            ns="t", key="k", packs=["planning"], config={"planning": {"max_steps": 0}}, strict=True
        )
