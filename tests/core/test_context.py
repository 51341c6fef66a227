"""``ToolContext``: a frozen bundle whose ``filesystem`` comes from the resources."""

from __future__ import annotations

import dataclasses
from typing import Any, TypeVar, cast

import pytest

from haversack import Filesystem, Prompt, ToolContext
from haversack.errors import ResourceError

T = TypeVar("T")


class FakeResources:
    """The smallest ResourceLookup: a dict from type to instance."""

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
