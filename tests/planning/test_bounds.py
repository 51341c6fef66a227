"""Hostile sizes cost the planning tools bounded memory (issue 14)."""

from __future__ import annotations

import tracemalloc

import pytest

from haversack_planning._ops import _one_line


@pytest.mark.parametrize(
    ("tool", "arguments", "fragment"),
    [
        ("planning_setup_plan", {"objective": "ab " * 1_000_000}, "The objective is 3000000"),
        (
            "planning_setup_plan",
            {"objective": "o", "steps": ["ab " * 1_000_000]},
            "The step title is 3000000",
        ),
    ],
)
def test_huge_text_is_refused_before_whitespace_is_collapsed(
    planner, tool: str, arguments: dict[str, object], fragment: str
) -> None:
    planner.fail(tool, {"objective": ""})  # loads the argument parser: not what is measured
    tracemalloc.start()
    result = planner.fail(tool, arguments)
    peak = tracemalloc.get_traced_memory()[1]
    tracemalloc.stop()
    assert fragment in result.message
    # Collapsing first splits 1 M words into 1 M strings (~70 MB).
    assert peak < 16 * 1024 * 1024


def test_text_within_the_raw_bound_is_still_measured_after_collapsing(planner) -> None:
    objective = "x" + " " * 7000 + "y"  # 7002 raw characters, 3 once collapsed
    planner.ok("planning_setup_plan", {"objective": objective})
    assert planner.plan.objective == "x y"
    assert _one_line(" a \n b ") == "a b"
