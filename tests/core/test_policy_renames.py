"""Name-keyed policies keep working when a pack's tools are prefixed or renamed."""

from __future__ import annotations

import dataclasses
from dataclasses import dataclass

import pytest

from haversack import (
    MarkdownSection,
    Prompt,
    SequentialDependencyPolicy,
    Session,
    Tool,
    ToolContext,
    ToolExecutor,
    ToolResult,
    serde,
)


def _ok(params: None, *, context: ToolContext) -> ToolResult[None]:
    return ToolResult.ok(None, message="done")


def _renamed(tool: Tool, prefix: str) -> Tool:
    return dataclasses.replace(tool, name=prefix + tool.name, original_name=tool.original_name)


def _executor(prefix: str) -> ToolExecutor:
    build = Tool[None, None](name="build", description="Build.", handler=_ok)
    deploy = Tool[None, None](name="deploy", description="Deploy.", handler=_ok)
    policy = SequentialDependencyPolicy({"deploy": {"build"}})
    section = MarkdownSection(
        title="Ops",
        key="ops",
        template="Build with ${tool:build}.",
        tools=[_renamed(build, prefix), _renamed(deploy, prefix)],
        policies=[policy],
    )
    return ToolExecutor(Prompt(ns="t", key="t", sections=[section]).render(), session=Session())


def test_dependencies_written_with_original_names_apply_to_prefixed_tools():
    executor = _executor("ops_")
    denied = executor.execute("ops_deploy", {})
    assert not denied.success
    # The model is told the prerequisite's current name, not the pack's internal one.
    assert "needs a successful call of ops_build first" in denied.message
    assert executor.execute("ops_build", {}).success
    assert executor.execute("ops_deploy", {}).success


def test_unprefixed_tools_behave_as_before():
    executor = _executor("")
    assert "needs a successful call of build first" in executor.execute("deploy", {}).message
    assert executor.execute("build", {}).success
    assert executor.execute("deploy", {}).success


@dataclass(frozen=True)
class Limits:
    max_steps: int = 10

    def __post_init__(self) -> None:
        if self.max_steps < 1:
            raise ValueError(f"max_steps must be at least 1, got {self.max_steps}")


def test_post_init_refusals_read_as_the_dataclass_wrote_them():
    with pytest.raises(
        ValueError, match=r"^Invalid arguments: max_steps must be at least 1, got 0\.$"
    ):
        serde.parse(Limits, {"max_steps": 0})
