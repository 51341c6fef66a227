"""``Prompt`` construction: every tree rule is checked up front, with the culprit named."""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any

import pytest

from haversack import MarkdownSection, PolicyDecision, Prompt, Section, Tool, ToolResult
from haversack.errors import PromptRenderError, PromptValidationError


@dataclass(frozen=True)
class Params:
    name: str = "n"
    count: int = 1


def handler(params: None, *, context: Any) -> ToolResult[None]:
    return ToolResult.ok()


def make_tool(name: str) -> Tool[None, None]:
    return Tool[None, None](name=name, description=f"The {name} tool.", handler=handler)


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


def md(key: str, template: str = "", **kwargs: Any) -> MarkdownSection[Any]:
    return MarkdownSection(title=key.title(), key=key, template=template, **kwargs)


def test_basic_attributes() -> None:
    a = md("a", tools=[make_tool("x")])
    prompt = Prompt(ns="acme", key="review", sections=[a])
    assert (prompt.ns, prompt.key, prompt.name) == ("acme", "review", "review")
    assert prompt.sections == (a,)
    assert prompt.policies == ()
    assert Prompt(ns="acme", key="review", name="Code review").name == "Code review"
    assert repr(prompt) == "Prompt(ns='acme', key='review', sections=1)"


@pytest.mark.parametrize(
    ("ns", "key", "label"),
    [("", "k", "namespace"), (" ns", "k", "namespace"), ("ns", "", "key"), ("ns", "k ", "key")],
)
def test_ns_and_key_must_be_clean_strings(ns: str, key: str, label: str) -> None:
    with pytest.raises(PromptValidationError, match=f"Prompt {label}"):
        Prompt(ns=ns, key=key)


def test_placeholder_not_a_field_raises_with_context() -> None:
    section = MarkdownSection[Params](title="T", key="bad", template="Hi $nmae")
    with pytest.raises(PromptValidationError, match=r"placeholder \$nmae is not a field") as info:
        Prompt(ns="t", key="p", sections=[md("root", children=[section])])
    assert info.value.section_path == ("root", "bad")
    assert info.value.dataclass_type is Params
    assert info.value.placeholder == "nmae"
    assert "of Params (fields: count, name)" in str(info.value)


def test_placeholder_in_section_without_params_raises() -> None:
    section = md("plain", "Price: $amount")
    with pytest.raises(PromptValidationError, match="takes no params") as info:
        Prompt(ns="t", key="p", sections=[section])
    assert info.value.section_path == ("plain",)
    assert info.value.placeholder == "amount"
    assert "$$ for a literal dollar" in str(info.value)


def test_duplicate_sibling_keys_raise() -> None:
    with pytest.raises(PromptValidationError, match="sibling sections share the key 'a'") as info:
        Prompt(ns="t", key="p", sections=[md("root", children=[md("a"), md("b"), md("a")])])
    assert info.value.section_path == ("root", "a")


def test_duplicate_top_level_keys_raise() -> None:
    with pytest.raises(PromptValidationError, match="share the key 'a'"):
        Prompt(ns="t", key="p", sections=[md("a"), md("a")])


def test_same_key_under_different_parents_is_fine() -> None:
    prompt = Prompt(
        ns="t", key="p", sections=[md("x", children=[md("a")]), md("y", children=[md("a")])]
    )
    assert [path for path, _ in prompt.walk()] == [("x",), ("x", "a"), ("y",), ("y", "a")]


def test_duplicate_tool_names_anywhere_raise_naming_both_paths() -> None:
    tree = [
        md("one", children=[md("deep", tools=[make_tool("search")])]),
        md("two", tools=[make_tool("search")]),
    ]
    with pytest.raises(PromptValidationError, match="'search' is declared twice") as info:
        Prompt(ns="t", key="p", sections=tree)
    message = str(info.value)
    assert "'one.deep'" in message
    assert "'two'" in message
    assert info.value.tool_name == "search"
    assert info.value.section_path == ("two",)


def test_duplicate_tool_names_in_one_section_raise() -> None:
    with pytest.raises(PromptValidationError, match="'x' is declared twice") as info:
        Prompt(ns="t", key="p", sections=[md("a", tools=[make_tool("x"), make_tool("x")])])
    assert info.value.tool_name == "x"


def test_duplicate_policy_names_raise() -> None:
    sections = [md("a", policies=[Policy("limit")])]
    with pytest.raises(PromptValidationError, match="policies are named 'limit'") as info:
        Prompt(ns="t", key="p", sections=sections, policies=[Policy("limit")])
    assert info.value.section_path == ("a",)


def test_duplicate_policy_names_between_sections_raise() -> None:
    sections = [
        md("a", policies=[Policy("p")]),
        md("b", children=[md("c", policies=[Policy("p")])]),
    ]
    with pytest.raises(PromptValidationError, match="policies are named 'p'") as info:
        Prompt(ns="t", key="p", sections=sections)
    assert info.value.section_path == ("b", "c")


def test_the_same_policy_object_may_be_attached_twice() -> None:
    policy = Policy("shared")
    prompt = Prompt(ns="t", key="p", sections=[md("a", policies=[policy])], policies=[policy])
    assert prompt.policies == (policy,)


def test_prompt_policies_must_implement_tool_policy() -> None:
    with pytest.raises(PromptValidationError, match="must implement ToolPolicy, got int"):
        Prompt(ns="t", key="p", policies=[1])  # type: ignore[list-item]


def test_sections_must_be_sections() -> None:
    with pytest.raises(PromptValidationError, match="must be Section instances, got dict"):
        Prompt(ns="t", key="p", sections=[{}])  # type: ignore[list-item]


def test_unresolved_tool_reference_raises() -> None:
    with pytest.raises(PromptValidationError, match=r"\$\{tool:missing\}") as info:
        Prompt(ns="t", key="p", sections=[md("a", "Use ${tool:missing}.")])
    assert info.value.tool_name == "missing"
    assert info.value.section_path == ("a",)


def test_tool_reference_resolves_anywhere_in_the_tree() -> None:
    prompt = Prompt(
        ns="t",
        key="p",
        sections=[md("a", "Use ${tool:find}."), md("b", tools=[make_tool("find")])],
    )
    assert "Use find." in prompt.render().text


@pytest.mark.parametrize("off", ["b", "parent"])
def test_text_naming_a_tool_whose_section_is_off_does_not_render(off: str) -> None:
    tools = md("b", tools=[make_tool("find")], enabled=off != "b")
    prompt = Prompt(
        ns="t",
        key="p",
        sections=[
            md("a", "Use ${tool:find}."),
            md("parent", children=[tools], enabled=off != "parent"),
        ],
    )
    with pytest.raises(
        PromptRenderError, match=r"names the tool 'find' \(\$\{tool:find\}\)"
    ) as info:
        prompt.render()
    assert info.value.section_path == ("a",)
    assert info.value.tool_name == "find"


def test_text_naming_a_tool_renders_when_both_sections_are_on_or_both_off() -> None:
    def prompt(enabled: bool) -> Prompt:
        return Prompt(
            ns="t",
            key="p",
            sections=[
                md("a", "Use ${tool:find}.", enabled=enabled),
                md("b", tools=[make_tool("find")], enabled=enabled),
            ],
        )

    assert "Use find." in prompt(True).render().text
    assert "find" not in prompt(False).render().text


def test_tools_walk_and_params_types() -> None:
    x, y, z = make_tool("x"), make_tool("y"), make_tool("z")
    prompt = Prompt(
        ns="t",
        key="p",
        sections=[
            md("a", tools=[x], children=[md("b", tools=[y], enabled=False)]),
            MarkdownSection[Params](title="C", key="c", template="$name", tools=[z]),
        ],
    )
    assert prompt.tools == (x, y, z)  # declared tools, enabled or not, depth-first
    assert prompt.params_types == frozenset({Params})
    assert [path for path, _ in prompt.walk()] == [("a",), ("a", "b"), ("c",)]


def test_base_sections_are_accepted_as_groups() -> None:
    prompt = Prompt(ns="t", key="p", sections=[Section(title="G", key="g", children=[md("a")])])
    assert [path for path, _ in prompt.walk()] == [("g",), ("g", "a")]


def described(name: str, description: str) -> Tool[None, None]:
    return Tool[None, None](name=name, description=description, handler=handler)


def test_tool_descriptions_name_tools_by_their_current_names() -> None:
    writer = described("write", "Create files; change existing ones with ${tool:edit}. Costs $0.")
    editor = Tool[None, None](
        name="fs_edit", description="Edit.", handler=handler, original_name="edit"
    )
    prompt = Prompt(ns="t", key="p", sections=[md("a", tools=[writer, editor])])
    rendered = prompt.render()
    shown = rendered.tool("write")
    assert shown is not None
    assert shown.description == "Create files; change existing ones with fs_edit. Costs $0."
    assert shown.handler is writer.handler
    assert shown.original_name == "write"
    assert rendered.tool("fs_edit") is editor  # descriptions without references are kept as-is
    assert writer.tool_references() == frozenset({"edit"})
    assert prompt.tools == (writer, editor)  # the declared tools are untouched


def test_an_unresolvable_reference_in_a_description_names_the_tool() -> None:
    with pytest.raises(
        PromptValidationError, match="description of tool 'write' refers to"
    ) as info:
        Prompt(ns="t", key="p", sections=[md("a", tools=[described("write", "See ${tool:nope}.")])])
    assert info.value.tool_name == "nope"
    assert info.value.section_path == ("a",)


def test_a_description_too_long_once_filled_in_is_refused_at_construction() -> None:
    long_name = "x" * 64
    text = "y" * 1004 + " ${tool:e}"  # 1014 characters; 1068 once filled in
    editor = Tool[None, None](name=long_name, description="E.", handler=handler, original_name="e")
    with pytest.raises(
        PromptValidationError, match=r"once its \$\{tool:\.\.\.\} names are filled in"
    ) as info:
        Prompt(ns="t", key="p", sections=[md("a", tools=[described("w", text), editor])])
    assert info.value.tool_name == "w"


def test_a_description_naming_a_disabled_tool_does_not_render() -> None:
    prompt = Prompt(
        ns="t",
        key="p",
        sections=[
            md("a", tools=[described("write", "Then call ${tool:edit}.")]),
            md("b", tools=[make_tool("edit")], enabled=False),
        ],
    )
    with pytest.raises(
        PromptRenderError, match="description of tool 'write' names the tool 'edit'"
    ):
        prompt.render()


def test_a_description_keeps_its_conditional_text_only_with_the_tool_it_names() -> None:
    # Issue 26: a description naming a tool made that tool impossible to exclude; text in
    # ${if tool:x} ... ${endif} now goes with the tool, as in a section.
    def writer(description: str) -> Tool[None, None]:
        return Tool[None, None](name="write", description=description, handler=handler)

    text = "Create a file${if tool:edit}: change one with ${tool:edit}${endif}."
    both = Prompt(ns="t", key="p", sections=[md("a", tools=[writer(text), make_tool("edit")])])
    alone = Prompt(ns="t", key="p", sections=[md("a", tools=[writer(text)])])
    described = both.render().tool("write")
    assert described is not None
    assert described.description == "Create a file: change one with edit."
    bare = alone.render().tool("write")
    assert bare is not None
    assert bare.description == "Create a file."
    # Unbalanced markers are refused, as in a template.
    with pytest.raises(PromptValidationError, match="never closed"):
        Prompt(ns="t", key="p", sections=[md("a", tools=[writer("A ${if tool:edit} b.")])])
