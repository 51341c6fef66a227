"""``Section``: keys, titles, params type, children, tools, policies and ``enabled``."""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any

import pytest

from haversack import PolicyDecision, Prompt, Section, Tool, ToolResult
from haversack.errors import PromptValidationError


@dataclass(frozen=True)
class Params:
    name: str = "n"


@dataclass(frozen=True)
class Other:
    value: int = 0


def handler(params: None, *, context: Any) -> ToolResult[None]:
    return ToolResult.ok()


class Policy:
    def __init__(self, name: str) -> None:
        self._name = name

    @property
    def name(self) -> str:
        return self._name

    def check(self, tool: Any, params: Any, *, context: Any) -> PolicyDecision:
        return PolicyDecision.allow()

    def on_result(self, tool: Any, params: Any, result: Any, *, context: Any) -> None:
        return None


@pytest.mark.parametrize(
    "key", ["a", "0", "abc", "a.b", "a_b", "a-b", "v1.2-rc_3", "a" * 64, "9lives"]
)
def test_valid_keys_are_kept_verbatim(key: str) -> None:
    assert Section(title="T", key=key).key == key


@pytest.mark.parametrize(
    "key", ["", "A", "Intro", "-a", ".a", "_a", "a b", "a/b", "a" * 65, "é", "a\n", " a"]
)
def test_invalid_keys_raise_and_are_not_lowercased(key: str) -> None:
    with pytest.raises(PromptValidationError, match="Section key") as info:
        Section(title="T", key=key)
    assert repr(key) in str(info.value)
    assert info.value.section_path == (key,)


def test_non_string_key_raises() -> None:
    with pytest.raises(PromptValidationError, match="Section key 5 is invalid") as info:
        Section(title="T", key=5)  # type: ignore[arg-type]
    assert info.value.section_path == ()


@pytest.mark.parametrize("title", ["", "   ", None])
def test_title_must_be_non_empty_string(title: Any) -> None:
    with pytest.raises(PromptValidationError, match="title must be a non-empty") as info:
        Section(title=title, key="k")
    assert info.value.section_path == ("k",)


def test_title_is_stripped() -> None:
    assert Section(title="  Hello  ", key="k").title == "Hello"


def test_bare_section_takes_no_params() -> None:
    assert Section(title="T", key="k").params_type is None


def test_bare_section_rejects_default_params() -> None:
    with pytest.raises(PromptValidationError, match="takes no params") as info:
        Section(title="T", key="k", default_params=Params())
    assert info.value.section_path == ("k",)
    assert info.value.dataclass_type is Params


def test_subscripted_section_records_params_type() -> None:
    section = Section[Params](title="T", key="k", default_params=Params("x"))
    assert section.params_type is Params
    assert section.default_params == Params("x")
    assert isinstance(section, Section)


def test_subscripting_twice_gives_the_same_class() -> None:
    assert Section[Params] is Section[Params]
    assert Section[Params] is not Section[Other]  # type: ignore[comparison-overlap]


def test_section_of_none_takes_no_params() -> None:
    assert Section[None](title="T", key="k").params_type is None


def test_default_params_of_wrong_type_raise() -> None:
    with pytest.raises(PromptValidationError, match="default_params must be a Params, got Other"):
        Section[Params](title="T", key="k", default_params=Other())  # type: ignore[arg-type]


@pytest.mark.parametrize("tp", [int, str, dict, "Params"])
def test_params_type_must_be_a_dataclass(tp: Any) -> None:
    with pytest.raises(PromptValidationError, match="must be a dataclass") as info:
        Section[tp](title="T", key="k")
    assert info.value.section_path == ("k",)


def test_params_type_takes_one_argument() -> None:
    with pytest.raises(PromptValidationError, match="exactly one type argument"):
        Section[Params, Other](title="T", key="k")  # type: ignore[misc]


def test_children_must_be_sections() -> None:
    with pytest.raises(PromptValidationError, match="children must be Section instances, got str"):
        Section(title="T", key="k", children=["nope"])  # type: ignore[list-item]


def test_tools_must_be_tools() -> None:
    with pytest.raises(PromptValidationError, match="tools must be Tool instances, got function"):
        Section(title="T", key="k", tools=[handler])  # type: ignore[list-item]


def test_policies_must_implement_tool_policy() -> None:
    with pytest.raises(PromptValidationError, match="must implement ToolPolicy") as info:
        Section(title="T", key="k", policies=[object()])  # type: ignore[list-item]
    assert info.value.section_path == ("k",)


def test_sequences_are_frozen_into_tuples() -> None:
    tool = Tool[None, None](name="t", description="d", handler=handler)
    child: Section[None] = Section(title="C", key="c")
    policy = Policy("p")
    section: Section[None] = Section(
        title="T", key="k", children=[child], tools=[tool], policies=[policy]
    )
    assert section.children == (child,)
    assert section.tools == (tool,)
    assert section.policies == (policy,)


def test_enabled_rejects_non_callables() -> None:
    with pytest.raises(PromptValidationError, match="enabled must be None, a bool or a callable"):
        Section(title="T", key="k", enabled="yes")  # type: ignore[arg-type]


def test_enabled_predicate_with_two_arguments_raises() -> None:
    with pytest.raises(PromptValidationError, match="takes 2 arguments") as info:
        Section(title="T", key="k", enabled=lambda a, b: True)  # type: ignore[arg-type]
    assert info.value.section_path == ("k",)


@pytest.mark.parametrize(
    ("enabled", "needs_params", "result"),
    [
        (None, False, True),
        (True, False, True),
        (False, False, False),
        (lambda: False, False, False),
        (lambda p: p.name == "on", True, True),
        (lambda p, extra=1: False, True, False),
    ],
)
def test_enabled_forms(enabled: Any, needs_params: bool, result: bool) -> None:
    section = Section[Params](title="T", key="k", enabled=enabled)
    assert section.enabled_needs_params is needs_params
    assert section.is_enabled(Params("on")) is result


def test_base_section_renders_only_its_heading() -> None:
    section: Section[None] = Section(
        title="Group", key="g", children=[Section(title="Leaf", key="l")]
    )
    assert section.placeholders() == frozenset()
    assert section.tool_references() == frozenset()
    assert section.render_body(None, {}) == ""
    text = Prompt(ns="t", key="p", sections=[section]).render().text
    assert text == "## 1. Group\n\n### 1.1. Leaf"


def test_repr_names_key_and_title() -> None:
    assert repr(Section(title="T", key="k")) == "Section(key='k', title='T')"
