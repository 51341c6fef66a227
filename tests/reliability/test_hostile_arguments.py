"""Hostile arguments against every tool of every installed pack (Podman's in the podman set).

Tools are enumerated from the composed prompt, so a new tool is covered without an edit. Each
tool gets the conformance kit's fixed battery (``haversack.testing.bad_arguments``) plus
hypothesis-generated hostile calls. Every call must return a ``ToolResult`` (never raise); an
error result must carry a message; a failed call must leave the session's STATE slices and
the workspace (a full dump of the bound ``Filesystem``) exactly as they were.
"""

from __future__ import annotations

from typing import Any

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from haversack import serde
from haversack.testing import bad_arguments

from ._harness import PODMAN_PACKS, Harness, budget, compose_all, loaded_packs
from ._hostile import hostile_call

#: Calls played before the hostile ones, when the tool exists, so deeper code runs.
SETUP: tuple[tuple[str, dict[str, Any]], ...] = (
    ("planning_setup_plan", {"objective": "reliability", "steps": ["one", "two"]}),
    ("write_file", {"path": "notes/a.txt", "content": "alpha\nbeta\ngamma\n"}),
    ("write_file", {"path": "evil.txt", "content": "a" * 64 + "!\n" + "x" * 200 + "\n"}),
    ("read_file", {"path": "notes/a.txt"}),
    ("read_file", {"path": "evil.txt"}),
)
KNOWN = ("notes/a.txt", "evil.txt", "notes", "/workspace/notes/a.txt", "alpha", "1", "a" * 64)


def _tool_names() -> list[str]:
    try:
        return [t.name for t in compose_all(exclude=sorted(PODMAN_PACKS)).render().tools]
    except Exception as exc:
        return [f"<compose failed: {type(exc).__name__}>"]


def harness() -> Harness:
    h = Harness(compose_all(exclude=sorted(PODMAN_PACKS)))
    names = {t.name for t in h.rendered.tools}
    for name, arguments in SETUP:
        if name in names:
            h.ok(name, arguments)
    h.mark_baseline()
    return h


def test_every_installed_pack_is_fuzzed() -> None:
    packs = loaded_packs(exclude=sorted(PODMAN_PACKS))
    assert {"planning", "vfs"} <= set(packs), packs
    assert not _tool_names()[0].startswith("<compose failed")


@pytest.mark.parametrize("tool_name", _tool_names())
def test_hostile_arguments(tool_name: str, figure) -> None:
    fig = figure("hostile-arguments", tool_name)
    h = harness()
    try:
        tool = h.rendered.tool(tool_name)
        assert tool is not None
        schema = serde.schema(tool.params_type)
        takes_params = tool.params_type is not None
        for case in bad_arguments(schema, takes_params=takes_params):
            h.hostile(fig, tool_name, case.arguments, case.label, must_fail=case.must_fail)

        @settings(
            max_examples=budget(25, 600),
            deadline=None,
            database=None,
            suppress_health_check=list(HealthCheck),
        )
        @given(call=hostile_call(schema, takes_params, KNOWN))
        def fuzz(call: tuple[str, Any, bool]) -> None:
            label, arguments, must_fail = call
            h.hostile(fig, tool_name, arguments, label, must_fail=must_fail)

        fuzz()
    finally:
        h.close()
    fig.assert_clean()


def test_hostile_strategies_produce_every_kind() -> None:
    """Guard: the generator still yields each family of attack (not all filtered out)."""
    seen: set[str] = set()

    schema = {"type": "object", "properties": {"path": {"type": "string"}}}

    @settings(max_examples=200, deadline=None, database=None, derandomize=True)
    @given(call=hostile_call(schema, True, ()))
    def collect(call: tuple[str, Any, bool]) -> None:
        seen.add(call[0].split(" ")[0])

    collect()
    assert {"hostile", "an", "JSON", "raw", "truncated"} <= seen, seen
    assert st is not None
