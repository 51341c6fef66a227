"""``@tool``: a ``Tool`` from a handler's name, docstring and (postponed) annotations."""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any

import pytest

from haversack import Tool, ToolAnnotations, ToolExample, ToolResult, tool
from haversack.errors import PromptValidationError


@dataclass(frozen=True)
class Query:
    text: str


@dataclass(frozen=True)
class Hit:
    title: str


@tool
def search_docs(params: Query, *, context: Any) -> ToolResult[list[Hit]]:
    """Search the documentation
    for a phrase.

    Returns matching page titles; this second paragraph is not part of the description.
    """
    return ToolResult.ok([Hit(params.text)])


@tool(
    name="find",
    description="Find things.",
    examples=[ToolExample("Find a cat.", Query("cat"), Hit("Cats"))],
    annotations=ToolAnnotations(read_only=True),
)
async def find_one(params: Query, *, context: Any) -> ToolResult[Hit]:
    return ToolResult.ok(Hit(params.text))


@tool
def ping(params: None, *, context: Any) -> ToolResult[None]:
    """Check the service is up."""
    return ToolResult.ok()


def test_bare_decorator_builds_a_tool() -> None:
    assert isinstance(search_docs, Tool)
    assert search_docs.name == "search_docs"
    assert search_docs.params_type is Query
    assert search_docs.result_type is Hit
    assert search_docs.result_is_sequence is True
    assert search_docs.is_async is False


def test_description_is_the_first_docstring_paragraph_joined() -> None:
    assert search_docs.description == "Search the documentation for a phrase."


def test_handler_is_the_function() -> None:
    result = search_docs.handler(Query("x"), context=None)  # type: ignore[misc,arg-type]
    assert result == ToolResult.ok([Hit("x")])


def test_decorator_with_arguments() -> None:
    assert find_one.name == "find"
    assert find_one.description == "Find things."
    assert find_one.annotations.read_only is True
    assert len(find_one.examples) == 1
    assert find_one.is_async is True
    assert find_one.result_type is Hit


def test_none_params_and_result() -> None:
    assert ping.params_type is None
    assert ping.result_type is None


def test_postponed_annotations_are_resolved() -> None:
    # This module uses ``from __future__ import annotations``: every annotation is a string.
    assert search_docs.handler is not None
    assert search_docs.handler.__annotations__["params"] == "Query"
    assert search_docs.params_type is Query


def test_missing_docstring_raises() -> None:
    def undocumented(params: Query, *, context: Any) -> ToolResult[Hit]:
        return ToolResult.ok()

    with pytest.raises(PromptValidationError, match="@tool needs a docstring") as info:
        tool(undocumented)
    assert info.value.tool_name == "undocumented"


def test_description_argument_replaces_the_docstring() -> None:
    def undocumented(params: Query, *, context: Any) -> ToolResult[Hit]:
        return ToolResult.ok()

    assert tool(description="Explicit.")(undocumented).description == "Explicit."


def test_missing_params_annotation_raises() -> None:
    def no_params_hint(params, *, context: Any) -> ToolResult[Hit]:  # type: ignore[no-untyped-def]
        """Doc."""
        return ToolResult.ok()

    with pytest.raises(PromptValidationError, match="Annotate the params argument 'params'") as i:
        tool(no_params_hint)
    assert i.value.tool_name == "no_params_hint"


def test_missing_return_annotation_raises() -> None:
    def no_return(params: Query, *, context: Any):  # type: ignore[no-untyped-def]
        """Doc."""

    with pytest.raises(PromptValidationError, match=r"return type .* as ToolResult\[ResultType\]"):
        tool(no_return)


def test_return_annotation_must_be_a_tool_result() -> None:
    def returns_hit(params: Query, *, context: Any) -> Hit:
        """Doc."""
        return Hit("x")

    with pytest.raises(PromptValidationError, match="as ToolResult") as info:
        tool(returns_hit)
    assert info.value.tool_name == "returns_hit"


def test_unresolvable_annotations_raise() -> None:
    def dangling(params: Nowhere, *, context: Any) -> ToolResult[Hit]:  # type: ignore[name-defined]  # noqa: F821
        """Doc."""
        return ToolResult.ok()

    with pytest.raises(PromptValidationError, match="Cannot resolve the annotations") as info:
        tool(dangling)
    assert "Nowhere" in str(info.value)


def test_function_without_positional_parameter_raises() -> None:
    def keyword_only(*, context: Any) -> ToolResult[Hit]:
        """Doc."""
        return ToolResult.ok()

    with pytest.raises(PromptValidationError, match="takes no positional params argument"):
        tool(keyword_only)


def test_tool_rules_still_apply() -> None:
    def BadName(params: Query, *, context: Any) -> ToolResult[Hit]:
        """Doc."""
        return ToolResult.ok()

    with pytest.raises(PromptValidationError, match="Tool name 'BadName' is invalid"):
        tool(BadName)
    assert tool(name="good_name")(BadName).name == "good_name"


def test_params_annotation_must_be_a_dataclass() -> None:
    def takes_int(params: int, *, context: Any) -> ToolResult[Hit]:
        """Doc."""
        return ToolResult.ok()

    with pytest.raises(
        PromptValidationError, match="params type must be a dataclass or None, got int"
    ):
        tool(takes_int)
