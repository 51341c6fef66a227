"""``MarkdownSection`` templates: placeholders, tool references, ``$$``, dedent, bad ``$``."""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any

import pytest

from haversack import MarkdownSection, Prompt, Tool, ToolResult
from haversack.errors import PromptValidationError


@dataclass(frozen=True)
class Params:
    name: str = "world"
    count: int = 3


def handler(params: None, *, context: Any) -> ToolResult[None]:
    return ToolResult.ok()


def render(section: MarkdownSection[Any], *params: object) -> str:
    return Prompt(ns="t", key="p", sections=[section]).render(*params).text


def test_dollar_name_and_braced_name_insert_fields() -> None:
    section = MarkdownSection[Params](
        title="Greeting", key="g", template="Hello $name, ${count}x over."
    )
    assert section.placeholders() == {"name", "count"}
    assert render(section, Params("Ada", 2)) == "## 1. Greeting\n\nHello Ada, 2x over."


def test_braced_name_can_touch_following_text() -> None:
    section = MarkdownSection[Params](title="T", key="k", template="${name}s")
    assert render(section, Params("cat")).endswith("cats")


def test_double_dollar_is_a_literal_dollar() -> None:
    section: MarkdownSection[None] = MarkdownSection(
        title="T", key="k", template="Costs $$5, not $$$$."
    )
    assert section.placeholders() == frozenset()
    assert render(section).endswith("Costs $5, not $$.")


def test_double_dollar_next_to_placeholders() -> None:
    section = MarkdownSection[Params](title="T", key="k", template="$$$count for $name")
    assert render(section, Params("x", 7)).endswith("$7 for x")


def test_tool_reference_is_recorded_and_rendered() -> None:
    tool = Tool[None, None](name="read-file_2", description="Read.", handler=handler)
    section: MarkdownSection[None] = MarkdownSection(
        title="T", key="k", template="Call ${tool:read-file_2} first.", tools=[tool]
    )
    assert section.tool_references() == {"read-file_2"}
    assert section.placeholders() == frozenset()
    assert render(section).endswith("Call read-file_2 first.")


def test_template_is_dedented_and_stripped() -> None:
    section: MarkdownSection[None] = MarkdownSection(
        title="T",
        key="k",
        template="""

            First line
              indented

        """,
    )
    assert section.template == "First line\n  indented"
    assert render(section) == "## 1. T\n\nFirst line\n  indented"


def test_bare_markdown_section_takes_no_params() -> None:
    section: MarkdownSection[None] = MarkdownSection(title="T", key="k", template="plain")
    assert section.params_type is None


def test_empty_template_renders_heading_only() -> None:
    assert render(MarkdownSection(title="T", key="k", template="   ")) == "## 1. T"


@pytest.mark.parametrize(
    ("template", "line"),
    [
        ("Costs 5$", 1),
        ("Costs $5", 1),
        ("a $ b", 1),
        ("one\ntwo ${bad-name}", 2),
        ("one\ntwo\n${ name }", 3),
        ("${tool:bad name}", 1),
        ("${}", 1),
    ],
)
def test_invalid_dollar_is_rejected_at_construction(template: str, line: int) -> None:
    with pytest.raises(PromptValidationError, match=rf"Invalid '\$' at line {line}") as info:
        MarkdownSection(title="T", key="tpl", template=template)
    assert info.value.section_path == ("tpl",)
    assert "$$ for a literal dollar" in str(info.value)


def test_template_must_be_a_string() -> None:
    with pytest.raises(PromptValidationError, match="template must be a string") as info:
        MarkdownSection(title="T", key="k", template=None)  # type: ignore[arg-type]
    assert info.value.section_path == ("k",)


def test_markdown_section_checks_base_rules_too() -> None:
    with pytest.raises(PromptValidationError, match="Section key 'Bad'"):
        MarkdownSection(title="T", key="Bad", template="x")


def test_rendered_values_use_str_of_the_field() -> None:
    @dataclass(frozen=True)
    class Items:
        items: tuple[str, ...] = ("a", "b")

    section = MarkdownSection[Items](title="T", key="k", template="$items")
    assert render(section).endswith("('a', 'b')")
