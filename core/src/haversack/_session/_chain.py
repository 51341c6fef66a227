"""``Chain``: an immutable sequence with O(1) append whose versions share structure."""

from __future__ import annotations

from collections.abc import Iterable, Iterator
from typing import Any, Generic, TypeVar

__all__ = ["EMPTY", "Chain"]

T = TypeVar("T")

# A cell is ``(previous_cell, item)`` or ``None`` for the empty chain. Appending allocates one
# cell and shares every older one, so any number of versions (snapshots) cost O(1) each and
# appending never copies history. Nested tuples are freed through CPython's "trashcan", so even
# very long chains deallocate without deep recursion.
_Cell = tuple[Any, Any] | None


class Chain(Generic[T]):
    """An immutable sequence: O(1) ``append`` and ``latest``, O(n) ``items`` (then cached).

    :meth:`append_bounded` keeps only the newest items (a ring): the chain then holds up to
    twice the bound in cells and shows exactly the newest ``bound``.
    """

    __slots__ = ("_cell", "_depth", "_items", "_size")

    def __init__(
        self,
        cell: _Cell,
        size: int,
        items: tuple[T, ...] | None = None,
        depth: int | None = None,
    ) -> None:
        self._cell = cell
        self._size = size
        # Cells reachable from ``_cell``; more than ``_size`` once a bound hides older ones.
        self._depth = size if depth is None else depth
        # Filled on first ``items()``: the chain is immutable, so the cache never goes stale.
        self._items = items

    @classmethod
    def of(cls, items: Iterable[T]) -> Chain[T]:
        """A chain holding ``items`` in order."""
        materialised = tuple(items)
        cell: _Cell = None
        for item in materialised:
            cell = (cell, item)
        return cls(cell, len(materialised), materialised)

    def append(self, item: T) -> Chain[T]:
        """A new chain with ``item`` after the last item; this one is unchanged."""
        return Chain((self._cell, item), self._size + 1)

    def append_bounded(self, item: T, bound: int) -> Chain[T]:
        """A new chain with ``item`` last that shows only the newest ``bound`` items.

        Amortised O(1): the hidden older cells are dropped (the newest ``bound`` copied into
        a fresh chain) once they number ``bound``, so memory stays under ``2 x bound`` cells.
        """
        if bound < 1:
            raise ValueError(f"bound must be at least 1, got {bound}.")
        depth = self._depth + 1
        if depth >= 2 * bound:
            kept = (*self.items()[len(self) - bound + 1 :], item) if bound > 1 else (item,)
            return Chain.of(kept)
        return Chain((self._cell, item), min(self._size + 1, bound), None, depth)

    def extend(self, items: Iterable[T]) -> Chain[T]:
        """A new chain with ``items`` appended in order."""
        cell, size, depth = self._cell, self._size, self._depth
        for item in items:
            cell, size, depth = (cell, item), size + 1, depth + 1
        return self if size == self._size else Chain(cell, size, None, depth)

    def latest(self) -> T | None:
        """The last item, or ``None`` when empty."""
        return None if self._cell is None else self._cell[1]

    def items(self) -> tuple[T, ...]:
        """Every item, oldest first."""
        if self._items is None:
            out: list[T] = []
            cell = self._cell
            for _ in range(self._size):  # a bounded chain hides the cells past its size
                assert cell is not None
                out.append(cell[1])
                cell = cell[0]
            out.reverse()
            self._items = tuple(out)
        return self._items

    def __len__(self) -> int:
        return self._size

    def __iter__(self) -> Iterator[T]:
        return iter(self.items())


EMPTY: Chain[Any] = Chain(None, 0, ())
