"""Token estimates: the figure of the schema JSON, served from the schema cache when current."""

from __future__ import annotations

import json
import sys

from haversack import Tool, ToolResult, json_schema_params, serde
from haversack._packs import _tokens, discover

PARAMS = """
from dataclasses import dataclass, field

from haversack import Tool, ToolResult
from haversack.hookspecs import hookimpl


@dataclass(frozen=True)
class Params:
    path: str = field(metadata={{"description": "{description}"}})


def _ok(params, *, context):
    return ToolResult.ok()


@hookimpl
def register_tools(register):
    register(Tool[Params, None](name="sized", description="A tool.", handler=_ok))
"""


def _ok(params: object, *, context: object) -> ToolResult[None]:
    return ToolResult.ok()


def _formula(tools: list[Tool]) -> int:
    """The estimate as it was defined before the cache: the schema JSON built each time."""
    total = 0
    for tool in tools:
        payload = {
            "name": tool.name,
            "description": tool.description,
            "parameters": serde.schema(tool.params_type),
        }
        total += len(json.dumps(payload, separators=(",", ":"))) // 4
    return total


def test_estimate_is_the_schema_json_figure(cache_dir):
    from haversack_vfs import vfs_tools

    tools = [*vfs_tools(), Tool[None, None](name="bare", description="No params.", handler=_ok)]
    cold = _tokens.token_estimate(tools)
    warm = _tokens.token_estimate(tools)  # from the cache file now
    assert cold == warm == _formula(tools)
    assert list(cache_dir.glob("schemas-*.json"))


def test_warm_estimate_builds_no_schema_and_a_changed_module_is_rebuilt(
    site, cache_dir, monkeypatch, age
):
    site.add("sized", PARAMS.format(description="short"))
    age(site.root)
    cold = discover(load=True)["sized"].token_estimate

    def fail(tp: object) -> str:
        raise AssertionError("the schema cache should have answered")

    with monkeypatch.context() as patch:
        patch.setattr(_tokens, "_build", fail)
        assert discover(load=True)["sized"].token_estimate == cold

    # An edit to the pack's source (an editable install: no version change) is seen.
    module = next(site.root.rglob("*.py"))
    module.write_text(PARAMS.format(description="a much longer description " * 8))
    age(site.root, seconds=50.0)
    for name in [m for m in list(sys.modules) if m.startswith("hvt_")]:
        del sys.modules[name]
    monkeypatch.setattr(_tokens, "_folder_stamps", {})
    assert discover(load=True)["sized"].token_estimate > cold


def test_run_time_params_types_are_not_cached(cache_dir):
    made = json_schema_params("made", {"type": "object", "properties": {"q": {"type": "string"}}})
    tool = Tool[made, None](name="made", description="Made at run time.", handler=_ok)
    assert _tokens._name(made) is None
    assert _tokens.token_estimate([tool]) == _formula([tool])
    assert not list(cache_dir.glob("schemas-*.json"))
