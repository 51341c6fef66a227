"""The repository's own packs pass the conformance suite, both ways of running it."""

from __future__ import annotations

from typing import Any, ClassVar

from haversack.testing import PackConformance, assert_pack_conforms


class TestPlanningConforms(PackConformance):
    pack = "planning"


class TestPlanningWithAPlanConforms(PackConformance):
    """With a plan set up first, the battery reaches the handlers past the policy."""

    pack = "planning"
    config: ClassVar[dict[str, Any]] = {"strategy": "plan_act_reflect", "max_steps": 5}
    setup = (("planning_setup_plan", {"objective": "Ship it", "steps": ["a", "b"]}),)


def test_planning_conforms_in_one_call():
    assert_pack_conforms("planning", config={"max_steps": 3})


class TestVfsConforms(PackConformance):
    pack = "vfs"
