"""Fixtures for the planning pack: a fresh session and executor per test."""

from __future__ import annotations

from collections.abc import Iterator
from typing import Any

import pytest

from haversack import Prompt, Session, ToolExecutor, ToolResult
from haversack_planning import Plan, PlanningConfig, planning_section


class Planner:
    """One session plus an executor over a prompt holding only the planning section."""

    def __init__(self, config: PlanningConfig | None = None) -> None:
        prompt = Prompt(ns="tests", key="planning", sections=[planning_section(config)])
        self.rendered = prompt.render()
        self.session = Session()
        self.executor = ToolExecutor(self.rendered, session=self.session)

    def call(self, name: str, arguments: dict[str, Any] | None = None) -> ToolResult[Any]:
        return self.executor.execute(name, arguments if arguments is not None else {})

    def ok(self, name: str, arguments: dict[str, Any] | None = None) -> ToolResult[Any]:
        result = self.call(name, arguments)
        assert result.success, result.message
        return result

    def fail(self, name: str, arguments: dict[str, Any] | None = None) -> ToolResult[Any]:
        """Call and assert the call failed and left the plan slice exactly as it was."""
        before = self.session[Plan].all()
        result = self.call(name, arguments)
        assert not result.success, result.render()
        assert self.session[Plan].all() == before
        return result

    @property
    def plan(self) -> Plan:
        plan = self.session[Plan].latest()
        assert plan is not None
        return plan

    def close(self) -> None:
        self.executor.close()


@pytest.fixture
def planner() -> Iterator[Planner]:
    p = Planner()
    yield p
    p.close()


@pytest.fixture
def make_planner() -> Iterator[Any]:
    made: list[Planner] = []

    def make(config: PlanningConfig | None = None) -> Planner:
        p = Planner(config)
        made.append(p)
        return p

    yield make
    for p in made:
        p.close()
