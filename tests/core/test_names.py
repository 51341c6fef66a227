"""Name uniqueness is decided once (``haversack._names``): a prompt's own validation, a pack's
check of what it contributes, and the conflict report between contributors agree."""

from __future__ import annotations

from typing import Any

import pytest

from haversack import MarkdownSection, Prompt, PromptValidationError, Tool, ToolResult
from haversack._packs._conflicts import check_internal, find_conflicts
from haversack._packs._contribution import Contribution
from haversack._policy import PolicyDecision
from haversack.errors import PackLoadError


def _handler(params: None, *, context: Any) -> ToolResult[None]:
    return ToolResult.ok()


def tool(name: str) -> Tool[None, None]:
    return Tool[None, None](name=name, description=f"The {name} tool.", handler=_handler)


class Policy:
    def __init__(self, name: str) -> None:
        self.name = name

    def check(self, tool: Any, params: Any, *, context: Any) -> PolicyDecision:
        return PolicyDecision.allow()

    def on_result(self, tool: Any, params: Any, result: Any, *, context: Any) -> None:
        return None


def md(key: str, **kwargs: Any) -> MarkdownSection[Any]:
    return MarkdownSection(title=key.title(), key=key, template="", **kwargs)


SHARED = Policy("shared")

#: (id, first half, second half, what clashes or None); each half is a list of sections.
CASES: list[tuple[str, list[Any], list[Any], tuple[str, str] | None]] = [
    ("tool", [md("a", tools=[tool("x")])], [md("b", tools=[tool("x")])], ("tool", "x")),
    (
        "nested-tool",
        [md("a", children=[md("deep", tools=[tool("x")])])],
        [md("b", tools=[tool("x")])],
        ("tool", "x"),
    ),
    ("section", [md("a")], [md("a")], ("section", "a")),
    (
        "policy",
        [md("a", policies=[Policy("p")])],
        [md("b", policies=[Policy("p")])],
        ("policy", "p"),
    ),
    ("same-policy-object", [md("a", policies=[SHARED])], [md("b", policies=[SHARED])], None),
    (
        "same-child-key-under-different-parents",
        [md("a", children=[md("c")])],
        [md("b", children=[md("c")])],
        None,
    ),
    ("distinct", [md("a", tools=[tool("x")])], [md("b", tools=[tool("y")])], None),
]


@pytest.mark.parametrize(
    ("first", "second", "clash"), [c[1:] for c in CASES], ids=[c[0] for c in CASES]
)
def test_the_prompt_a_pack_and_the_conflict_report_agree(first, second, clash) -> None:
    both = Contribution("both", "pack 'both' (both 1.0)", sections=[*first, *second])
    one = Contribution("one", "pack 'one' (one 1.0)", sections=first)
    two = Contribution("two", "pack 'two' (two 1.0)", sections=second)
    if clash is None:
        Prompt(ns="t", key="k", sections=[*first, *second])
        check_internal(both)
        assert find_conflicts([one, two]) == []
        return
    kind, name = clash
    with pytest.raises(PromptValidationError) as in_prompt:
        Prompt(ns="t", key="k", sections=[*first, *second])
    with pytest.raises(PackLoadError, match=f"contributes two {kind}s named {name!r}"):
        check_internal(both)
    (conflict,) = find_conflicts([one, two])
    assert (conflict.kind, conflict.name) == clash
    assert conflict.contributors == (one.label, two.label)
    assert repr(name) in str(in_prompt.value)


def test_a_contributions_loose_tools_section_is_one_of_its_sections() -> None:
    c = Contribution("files", "pack 'files' (files 1.0)", sections=[md("files")], tools=[tool("x")])
    with pytest.raises(
        PackLoadError, match="its loose tools go in a section keyed by the pack name"
    ):
        check_internal(c)


def test_a_pack_tool_clash_says_how_to_fix_it_and_the_callers_says_rename() -> None:
    caller = Contribution(
        "your code", "your code", sections=[md("a", tools=[tool("x")])], builtin=True
    )
    pack = Contribution("vfs", "pack 'vfs' (hvt 1.0)", sections=[md("b", tools=[tool("x")])])
    (with_pack,) = find_conflicts([caller, pack])
    assert '[tool.haversack.packs.vfs] prefix = "vfs_"' in with_pack.message
    assert "HAVERSACK_DISABLE=vfs" in with_pack.message
    again = Contribution(
        "your code", "your code", sections=[md("c", tools=[tool("x")])], builtin=True
    )
    (only_caller,) = find_conflicts([caller, again])
    assert only_caller.message.endswith("Rename one of them.")
