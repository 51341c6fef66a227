"""A Binding's factory is checked when the binding is made, as a tool's handler is."""

from __future__ import annotations

import functools

import pytest

from haversack import Binding


class Thing:
    pass


class NeedsResolver:
    def __init__(self, resolver: object) -> None:
        self.resolver = resolver


def two(a: object, b: object) -> Thing:
    return Thing()


async def coro(resolver: object) -> Thing:
    return Thing()


@pytest.mark.parametrize(
    "factory",
    [
        lambda r: Thing(),
        lambda r, extra=1: Thing(),
        lambda *args: Thing(),
        NeedsResolver,
        functools.partial(two, 1),
        print,  # a builtin: its signature is trusted
    ],
)
def test_factories_callable_with_the_resolver_are_accepted(factory):
    Binding(Thing, factory)


@pytest.mark.parametrize(
    ("factory", "detail"),
    [
        (lambda: Thing(), "too many positional arguments"),
        (two, "missing a required argument: 'b'"),
        (Thing, "too many positional arguments"),
        # Python 3.12 says "keyword-only argument": the detail is the interpreter's own.
        (lambda r, *, key: Thing(), "argument: 'key'"),
    ],
)
def test_factories_that_cannot_take_the_resolver_are_refused(factory, detail):
    with pytest.raises(TypeError) as info:
        Binding(Thing, factory)
    message = str(info.value)
    assert f"The factory of the binding for {__name__}.Thing" in message
    assert detail in message
    assert "factory(resolver) -> instance" in message
    assert "Binding.instance(Thing, obj)" in message


def test_a_coroutine_factory_is_refused():
    with pytest.raises(TypeError, match="is a coroutine function; factories are called"):
        Binding(Thing, coro)


def test_instance_bindings_skip_the_check():
    assert Binding.instance(Thing, Thing()).prebuilt
