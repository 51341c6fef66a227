"""``ToolContext``: a frozen bundle whose ``filesystem`` comes from the resources."""

from __future__ import annotations

import dataclasses
from typing import Any, TypeVar, cast

import pytest

from haversack import Filesystem, Prompt, ToolContext, ToolResult
from haversack.errors import ResourceError

T = TypeVar("T")


class FakeResources:
    """The smallest ResourceResolver: a dict from type to instance."""

    def __init__(self, items: dict[type, object]) -> None:
        self.items = items
        self.asked: list[type] = []

    def get(self, tp: type[T], /) -> T:
        self.asked.append(tp)
        if tp not in self.items:
            raise ResourceError(f"No resource of type {tp.__name__} is bound.")
        return cast(T, self.items[tp])

    def get_optional(self, tp: type[T], /) -> T | None:
        return cast(T | None, self.items.get(tp))


def make_context(resources: FakeResources) -> ToolContext:
    return ToolContext(
        prompt=Prompt(ns="t", key="p"),
        rendered_prompt=None,
        session=cast(Any, object()),
        resources=resources,
    )


def test_fields_and_defaults() -> None:
    prompt = Prompt(ns="t", key="p")
    rendered = prompt.render()
    session = cast(Any, object())
    resources = FakeResources({})
    context = ToolContext(
        prompt=prompt, rendered_prompt=rendered, session=session, resources=resources
    )
    assert context.prompt is prompt
    assert context.rendered_prompt is rendered
    assert context.session is session
    assert context.resources is resources
    assert context.deadline is None
    assert context.tool is None
    assert context.call_id is None
    with_call = dataclasses.replace(context, call_id="call_1")
    assert with_call.call_id == "call_1"


def test_context_is_frozen() -> None:
    context = make_context(FakeResources({}))
    with pytest.raises(dataclasses.FrozenInstanceError):
        context.call_id = "x"  # type: ignore[misc]


def test_filesystem_comes_from_the_resources() -> None:
    filesystem = object()
    resources = FakeResources({Filesystem: filesystem})
    assert make_context(resources).filesystem is filesystem
    assert resources.asked == [Filesystem]


def test_filesystem_without_binding_raises_resource_error() -> None:
    with pytest.raises(ResourceError, match="No resource of type Filesystem"):
        _ = make_context(FakeResources({})).filesystem


def test_tool_name_and_identity_follow_the_calling_contributor() -> None:
    from haversack import MarkdownSection, Prompt, Session, Tool, ToolExecutor, ToolIdentity

    seen: list[tuple[str | None, ToolIdentity | None, str]] = []

    def handler(params: None, *, context: ToolContext) -> ToolResult[None]:
        seen.append((context.name, context.identity, context.tool_name("read")))
        return ToolResult.ok(None)

    def tool(name: str, original: str) -> Tool[None, None]:
        return Tool[None, None](name=name, description="d", handler=handler, original_name=original)

    prompt = Prompt(
        ns="t",
        key="k",
        sections=[
            MarkdownSection(title="A", key="a", template="a", tools=[tool("read", "read")]),
            MarkdownSection(
                title="B", key="b", template="b", tools=[tool("b_read", "read"), tool("b_go", "go")]
            ),
        ],
        contributors={"b": "pack-b"},
    )
    executor = ToolExecutor(prompt.render(), session=Session())
    assert executor.execute("b_go").success
    assert executor.execute("read").success
    assert seen == [
        ("b_go", ToolIdentity("pack-b", "go"), "b_read"),  # its own pack's tool, not the first
        ("read", ToolIdentity("your code", "read"), "read"),
    ]
    assert prompt.tool_named(ToolIdentity("pack-b", "read")) == "b_read"


def test_tool_name_never_names_another_contributors_tool() -> None:
    # Issue 26: when the calling pack's own tool was removed (exclude_tools), tool_name gave
    # the only other tool of that original name: a hint sent the model to another pack's tool.
    from haversack import MarkdownSection, Session, Tool, ToolExecutor

    said: list[tuple[str, bool]] = []

    def handler(params: None, *, context: ToolContext) -> ToolResult[None]:
        said.append((context.tool_name("read"), context.offers("read")))
        return ToolResult.ok(None)

    def tool(name: str, original: str) -> Tool[None, None]:
        return Tool[None, None](name=name, description="d", handler=handler, original_name=original)

    prompt = Prompt(
        ns="t",
        key="k",
        sections=[
            MarkdownSection(title="A", key="a", template="a", tools=[tool("a_go", "go")]),
            MarkdownSection(title="B", key="b", template="b", tools=[tool("b_read", "read")]),
        ],
        contributors={"a": "pack-a", "b": "pack-b"},
    )
    with ToolExecutor(prompt.render(), session=Session()) as executor:
        assert executor.execute("a_go").success
    assert said == [("read", False)]  # not b_read: pack-a has no read of its own
