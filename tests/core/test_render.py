"""``Prompt.render`` / ``bind`` and ``RenderedPrompt``: text, numbering, tools, params, policies."""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any

import pytest

from haversack import MarkdownSection, PolicyDecision, Prompt, RenderedPrompt, Tool, ToolResult
from haversack.errors import PromptRenderError, PromptValidationError


@dataclass(frozen=True)
class User:
    name: str = "anon"


@dataclass(frozen=True)
class Task:
    goal: str
    steps: int = 3


@dataclass(frozen=True)
class Unused:
    x: int = 0


@dataclass(frozen=True)
class Flags:
    on: bool = True


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
    return MarkdownSection(title=key.upper(), key=key, template=template, **kwargs)


def test_render_returns_text_and_tools() -> None:
    x = make_tool("x")
    rendered = Prompt(ns="t", key="p", sections=[md("a", "Body.", tools=[x])]).render()
    assert isinstance(rendered, RenderedPrompt)
    assert rendered.text == "## 1. A\n\nBody."
    assert rendered.tools == (x,)


def test_headings_are_hierarchically_numbered() -> None:
    prompt = Prompt(
        ns="t",
        key="p",
        sections=[
            md("a", "a body", children=[md("b", "b body", children=[md("c")]), md("d")]),
            md("e"),
        ],
    )
    assert prompt.render().text == (
        "## 1. A\n\na body\n\n### 1.1. B\n\nb body\n\n#### 1.1.1. C\n\n### 1.2. D\n\n## 2. E"
    )


def test_heading_level_is_capped_at_six() -> None:
    deepest = md("f")
    for key in "edcba":
        deepest = md(key, children=[deepest])
    text = Prompt(ns="t", key="p", sections=[deepest]).render().text
    assert "###### 1.1.1.1.1. E" in text
    assert "###### 1.1.1.1.1.1. F" in text


def test_numbers_stay_contiguous_when_a_section_is_disabled() -> None:
    prompt = Prompt(
        ns="t",
        key="p",
        sections=[
            md("a", children=[md("off", enabled=False), md("b"), md("c")]),
            md("gone", enabled=False),
            md("d"),
        ],
    )
    assert prompt.render().text == "## 1. A\n\n### 1.1. B\n\n### 1.2. C\n\n## 2. D"


def test_disabled_section_drops_its_text_tools_and_childrens() -> None:
    kept, dropped, child_tool = make_tool("kept"), make_tool("dropped"), make_tool("child")
    prompt = Prompt(
        ns="t",
        key="p",
        sections=[
            md("a", tools=[kept]),
            md(
                "b",
                "secret",
                enabled=False,
                tools=[dropped],
                children=[md("c", tools=[child_tool])],
            ),
        ],
    )
    rendered = prompt.render()
    assert "secret" not in rendered.text
    assert "C" not in rendered.text
    assert rendered.tools == (kept,)
    assert rendered.tool("dropped") is None
    assert rendered.tool("child") is None


def test_tools_are_depth_first_in_declaration_order() -> None:
    t = {n: make_tool(n) for n in ["a1", "a2", "b1", "c1", "d1"]}
    prompt = Prompt(
        ns="t",
        key="p",
        sections=[
            md("a", tools=[t["a1"], t["a2"]], children=[md("b", tools=[t["b1"]])]),
            md("c", tools=[t["c1"]], children=[md("d", tools=[t["d1"]])]),
        ],
    )
    assert [tool.name for tool in prompt.render().tools] == ["a1", "a2", "b1", "c1", "d1"]


def test_params_are_looked_up_by_type() -> None:
    prompt = Prompt(
        ns="t",
        key="p",
        sections=[
            MarkdownSection[User](title="U", key="u", template="user=$name"),
            MarkdownSection[Task](title="T", key="t", template="goal=$goal steps=$steps"),
        ],
    )
    text = prompt.render(Task("ship"), User("ada")).text
    assert "user=ada" in text
    assert "goal=ship steps=3" in text


def test_bind_returns_a_new_prompt_and_leaves_the_original_alone() -> None:
    prompt = Prompt(
        ns="t", key="p", sections=[MarkdownSection[Task](title="T", key="t", template="$goal")]
    )
    bound = prompt.bind(Task("bound"))
    assert bound is not prompt
    assert bound.render().text.endswith("bound")
    with pytest.raises(PromptRenderError):
        prompt.render()  # the original has nothing bound
    rebound = bound.bind(Task("again"))
    assert rebound.render().text.endswith("again")
    assert bound.render().text.endswith("bound")


def test_render_params_override_bound_params() -> None:
    prompt = Prompt(
        ns="t", key="p", sections=[MarkdownSection[Task](title="T", key="t", template="$goal")]
    ).bind(Task("bound"))
    assert prompt.render(Task("given")).text.endswith("given")
    assert prompt.render().text.endswith("bound")


def test_default_params_fill_in() -> None:
    section = MarkdownSection[Task](
        title="T", key="t", template="$goal", default_params=Task("default")
    )
    prompt = Prompt(ns="t", key="p", sections=[section])
    assert prompt.render().text.endswith("default")
    assert prompt.render(Task("given")).text.endswith("given")


def test_zero_argument_construction_fills_in() -> None:
    prompt = Prompt(
        ns="t", key="p", sections=[MarkdownSection[User](title="U", key="u", template="$name")]
    )
    assert prompt.render().text.endswith("anon")


def test_missing_required_params_raise_naming_section_and_field() -> None:
    prompt = Prompt(
        ns="t",
        key="p",
        sections=[
            md("root", children=[MarkdownSection[Task](title="T", key="task", template="$goal")])
        ],
    )
    with pytest.raises(PromptRenderError, match="required fields without defaults: goal") as info:
        prompt.render()
    assert info.value.section_path == ("root", "task")
    assert info.value.dataclass_type is Task
    assert info.value.placeholder == "goal"
    assert "section 'root.task'" in str(info.value)


def test_params_no_section_uses_raise() -> None:
    prompt = Prompt(ns="t", key="prompt", sections=[md("a")])
    with pytest.raises(PromptValidationError, match="No section of prompt t/prompt uses") as info:
        prompt.render(Unused())
    assert info.value.dataclass_type is Unused
    with pytest.raises(PromptValidationError, match="uses params of type Unused"):
        prompt.bind(Unused())


def test_two_params_of_one_type_raise() -> None:
    prompt = Prompt(
        ns="t", key="p", sections=[MarkdownSection[User](title="U", key="u", template="$name")]
    )
    with pytest.raises(PromptValidationError, match="Two params objects of type User") as info:
        prompt.render(User("a"), User("b"))
    assert info.value.dataclass_type is User


@pytest.mark.parametrize("bad", [{"name": "x"}, "text", 3, User])
def test_non_dataclass_params_raise(bad: object) -> None:
    prompt = Prompt(
        ns="t", key="p", sections=[MarkdownSection[User](title="U", key="u", template="$name")]
    )
    with pytest.raises(PromptValidationError, match="must be dataclass instances"):
        prompt.render(bad)


def test_enabled_bool() -> None:
    prompt = Prompt(ns="t", key="p", sections=[md("a", enabled=True), md("b", enabled=False)])
    assert prompt.render().text == "## 1. A"


def test_enabled_zero_argument_callable_is_called_at_render_time() -> None:
    switch = {"on": False}
    prompt = Prompt(ns="t", key="p", sections=[md("a", enabled=lambda: switch["on"])])
    assert prompt.render().text == ""
    switch["on"] = True
    assert prompt.render().text == "## 1. A"


def test_enabled_one_argument_callable_receives_the_params() -> None:
    seen: list[object] = []

    def enabled(flags: Flags) -> bool:
        seen.append(flags)
        return flags.on

    section = MarkdownSection[Flags](title="F", key="f", template="on", enabled=enabled)
    prompt = Prompt(ns="t", key="p", sections=[section])
    assert prompt.render(Flags(on=False)).text == ""
    assert prompt.render(Flags(on=True)).text == "## 1. F\n\non"
    assert seen == [Flags(on=False), Flags(on=True)]


def test_rendered_tool_lookup_and_section_path() -> None:
    x = make_tool("x")
    prompt = Prompt(ns="t", key="p", sections=[md("a", children=[md("b", tools=[x])])])
    rendered = prompt.render()
    assert rendered.tool("x") is x
    assert rendered.tool("nope") is None
    assert rendered.section_path("x") == ("a", "b")
    assert rendered.section_path("nope") == ()
    assert rendered.prompt is prompt


def test_policies_for_goes_prompt_wide_then_root_down() -> None:
    wide, outer, inner, sibling = Policy("wide"), Policy("outer"), Policy("inner"), Policy("sib")
    prompt = Prompt(
        ns="t",
        key="p",
        policies=[wide],
        sections=[
            md(
                "a",
                policies=[outer],
                tools=[make_tool("top")],
                children=[md("b", policies=[inner], tools=[make_tool("deep")])],
            ),
            md("c", policies=[sibling], tools=[make_tool("other")]),
        ],
    )
    rendered = prompt.render()
    assert rendered.policies_for("deep") == (wide, outer, inner)
    assert rendered.policies_for("top") == (wide, outer)
    assert rendered.policies_for("other") == (wide, sibling)
    assert rendered.policies_for("unknown") == ()
    assert rendered.policies == (wide, outer, inner, sibling)


def test_disabled_sections_policies_are_inactive() -> None:
    off = Policy("off")
    prompt = Prompt(ns="t", key="p", sections=[md("a"), md("b", enabled=False, policies=[off])])
    assert prompt.render().policies == ()


def test_tool_reference_renders_the_current_name() -> None:
    base = make_tool("read")
    renamed = Tool[None, None](
        name="fs_read", description="Read.", handler=handler, original_name="read"
    )
    prompt = Prompt(ns="t", key="p", sections=[md("a", "Call ${tool:read}.", tools=[renamed])])
    assert prompt.render().text.endswith("Call fs_read.")
    assert base.original_name == "read"


def test_rendering_twice_gives_the_same_result() -> None:
    prompt = Prompt(ns="t", key="p", sections=[md("a", "x", tools=[make_tool("x")])])
    first, second = prompt.render(), prompt.render()
    assert (first.text, first.tools) == (second.text, second.tools)


@dataclass(frozen=True)
class WithFactory:
    items: list[str] = field(default_factory=lambda: ["a"])


def test_default_factories_count_as_defaults() -> None:
    prompt = Prompt(
        ns="t",
        key="p",
        sections=[MarkdownSection[WithFactory](title="W", key="w", template="$items")],
    )
    assert prompt.render().text.endswith("['a']")


def _cond_tool(name: str) -> Tool[None, None]:
    return Tool[None, None](
        name=name, description="d", handler=lambda p, *, context: ToolResult.ok(None)
    )


COND = """\
Intro with ${tool:ls}.
${if tool:rm}
- ${tool:rm} removes files ($$1).
  ${if tool:ls}
  - nested: ${tool:ls} then ${tool:rm}.
  ${endif}
${endif}
Inline: ${tool:ls}${if tool:rm} and ${tool:rm}${endif}.
"""


def test_text_conditional_on_a_tool_exists_only_with_it() -> None:
    both = Prompt(
        ns="t",
        key="k",
        sections=[
            MarkdownSection(
                title="T", key="t", template=COND, tools=[_cond_tool("ls"), _cond_tool("rm")]
            )
        ],
    ).render()
    assert both.text.endswith(
        "Intro with ls.\n- rm removes files ($1).\n  - nested: ls then rm.\nInline: ls and rm."
    )
    alone = Prompt(
        ns="t",
        key="k",
        sections=[MarkdownSection(title="T", key="t", template=COND, tools=[_cond_tool("ls")])],
    ).render()
    assert alone.text.endswith("Intro with ls.\nInline: ls.")
    # A tool whose section is disabled counts as absent too (instead of refusing the render).
    off = Prompt(
        ns="t",
        key="k",
        sections=[
            MarkdownSection(title="T", key="t", template=COND, tools=[_cond_tool("ls")]),
            MarkdownSection(
                title="R", key="r", template="r", tools=[_cond_tool("rm")], enabled=False
            ),
        ],
    ).render()
    assert "rm" not in off.text


@pytest.mark.parametrize(
    ("template", "match"),
    [
        ("a ${endif}", "closes no"),
        ("${if tool:rm} a", "never closed"),
        ("${if tool:rm}\n${tool:nope}\n${endif}", "nope"),
    ],
)
def test_conditional_blocks_are_checked(template: str, match: str) -> None:
    def build() -> None:
        Prompt(
            ns="t",
            key="k",
            sections=[
                MarkdownSection(title="T", key="t", template=template, tools=[_cond_tool("rm")])
            ],
        ).render()

    with pytest.raises((PromptValidationError, PromptRenderError), match=match):
        build()
