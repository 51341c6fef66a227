"""Ready-made reducers for :meth:`Session.register_reducer`."""

from __future__ import annotations

from collections.abc import Callable, Hashable
from typing import TypeVar

from ._slices import Append, Reducer, Replace, SliceView

__all__ = ["append", "replace_latest", "upsert_by"]

T = TypeVar("T")


def append(view: SliceView[T], event: T) -> Append[T]:
    """Add the event itself to the slice: the ledger behaviour, O(1)."""
    return Append(event)


def replace_latest(view: SliceView[T], event: T) -> Replace[T]:
    """Keep only the event: the slice holds a single current value."""
    return Replace((event,))


def upsert_by(key: Callable[[T], Hashable]) -> Reducer[T, T]:
    """A reducer that replaces the item whose ``key`` equals the event's, or appends the event.

    Replacing keeps the item's position; it is O(n) in the slice length.
    """

    def reduce(view: SliceView[T], event: T) -> Append[T] | Replace[T]:
        wanted = key(event)
        items = view.all()
        for index, item in enumerate(items):
            if key(item) == wanted:
                return Replace((*items[:index], event, *items[index + 1 :]))
        return Append(event)

    reduce.__qualname__ = f"upsert_by({getattr(key, '__qualname__', repr(key))})"
    return reduce
