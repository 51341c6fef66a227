"""Slice policies, read-only slice views and the operations reducers return."""

from __future__ import annotations

import enum
from collections.abc import Callable, Iterable, Iterator
from dataclasses import dataclass
from typing import Generic, TypeAlias, TypeVar, Union

from ._chain import Chain

__all__ = [
    "Append",
    "Clear",
    "Extend",
    "Reducer",
    "Replace",
    "SliceOp",
    "SlicePolicy",
    "SliceView",
]

T = TypeVar("T")
E = TypeVar("E")


class SlicePolicy(enum.Enum):
    """What happens to a slice when a failed tool call is rolled back."""

    STATE = "state"
    """Working state (plans, policy bookkeeping): part of snapshots, restored on rollback."""
    LOG = "log"
    """Telemetry (tool invocations, rendered prompts): never snapshotted, kept on rollback."""


class SliceView(Generic[T]):
    """A read-only view of one slice as it was when the view was made."""

    __slots__ = ("_chain", "_type")

    def __init__(self, slice_type: type[T], chain: Chain[T]) -> None:
        self._type = slice_type
        self._chain = chain

    @property
    def slice_type(self) -> type[T]:
        """The dataclass type this slice holds."""
        return self._type

    def _contents(self) -> Chain[T]:
        return self._chain

    def latest(self) -> T | None:
        """The most recently added item, or ``None`` when the slice is empty (O(1))."""
        return self._contents().latest()

    def all(self) -> tuple[T, ...]:
        """Every item, oldest first."""
        return self._contents().items()

    def where(self, predicate: Callable[[T], bool]) -> tuple[T, ...]:
        """The items for which ``predicate`` is true, oldest first."""
        return tuple(item for item in self._contents().items() if predicate(item))

    def __len__(self) -> int:
        return len(self._contents())

    def __iter__(self) -> Iterator[T]:
        return iter(self._contents().items())

    def __repr__(self) -> str:
        return f"SliceView({self._type.__qualname__}, {len(self)} items)"


@dataclass(frozen=True, slots=True)
class Append(Generic[T]):
    """Reducer result: add ``item`` after the existing items."""

    item: T


@dataclass(frozen=True, slots=True, init=False)
class Extend(Generic[T]):
    """Reducer result: add ``items`` after the existing items, in order."""

    items: tuple[T, ...]

    def __init__(self, items: Iterable[T]) -> None:
        object.__setattr__(self, "items", tuple(items))


@dataclass(frozen=True, slots=True, init=False)
class Replace(Generic[T]):
    """Reducer result: the slice becomes exactly ``items``."""

    items: tuple[T, ...]

    def __init__(self, items: Iterable[T]) -> None:
        object.__setattr__(self, "items", tuple(items))


@dataclass(frozen=True, slots=True)
class Clear(Generic[T]):
    """Reducer result: remove the items matching ``where``, or every item when it is ``None``."""

    where: Callable[[T], bool] | None = None


SliceOp: TypeAlias = Union[Append[T], Extend[T], Replace[T], Clear[T]]  # noqa: UP007
"""What a reducer returns to change its slice (``None`` means no change)."""

Reducer: TypeAlias = Callable[[SliceView[T], E], "SliceOp[T] | None"]
"""A pure function from the slice's current view and an event to a :data:`SliceOp`.

Returning an operation instead of a new tuple keeps appends O(1) however long the slice is.
"""
