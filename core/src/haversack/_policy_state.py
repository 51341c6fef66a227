"""Per-policy state kept in the session beside its STATE slices and rolled back with them,
so a rolled-back call leaves no trace.

Each policy's values are one persistent :class:`ValueSet` in the session's policy records
(``Session._policy_state``), which every session snapshot references: recording a value is
an O(log n) set insert and one small dict copy, with no slice write per call.
"""

from __future__ import annotations

import functools
from collections.abc import Iterable, Iterator, Set
from typing import TYPE_CHECKING

if TYPE_CHECKING:
    from immutables import Map

    from ._session import Session

__all__ = ["ValueSet", "add_policy_value", "policy_values", "set_policy_values"]


class ValueSet(Set[str]):
    """An immutable set of strings whose :meth:`add` returns a new set sharing structure.

    Backed by ``immutables.Map`` (a hash array mapped trie in C): ``in`` and :meth:`add` cost
    O(log n) and the old version stays valid, which is what session snapshots need; a call
    that records a value never copies the whole set.
    """

    __slots__ = ("_map",)

    def __init__(self, values: Iterable[str] = ()) -> None:
        # Imported here, not at module level: composing a prompt with a policy (as
        # `haversack render` does) must not pay for it; add() needs no import.
        from immutables import Map

        mapping: Map[str, None] = Map()
        with mapping.mutate() as building:
            for value in values:
                _check(value)
                building[value] = None
            self._map = building.finish()

    def add(self, value: str) -> ValueSet:
        """This set with ``value`` (``self`` when it is already there)."""
        if type(value) is not str:
            _check(value)
        if value in self._map:
            return self
        grown = ValueSet.__new__(ValueSet)
        grown._map = self._map.set(value, None)
        return grown

    def __contains__(self, value: object) -> bool:
        return type(value) is str and value in self._map

    def __iter__(self) -> Iterator[str]:
        return iter(self._map)

    def __len__(self) -> int:
        return len(self._map)

    __hash__ = Set._hash

    def __repr__(self) -> str:
        return f"ValueSet({sorted(self)!r})"


def _check(value: object) -> None:
    if not isinstance(value, str):
        raise TypeError(f"Policy state holds strings, got {type(value).__name__}.")


@functools.cache
def _no_values() -> ValueSet:
    """The shared empty set, built on first use."""
    return ValueSet()


def policy_values(session: Session, policy: str) -> ValueSet:
    """What ``policy`` has recorded in ``session`` so far."""
    values = session._policy_state.get(policy)
    return values if type(values) is ValueSet else _no_values()


def add_policy_value(session: Session, policy: str, value: str) -> None:
    """Record ``value`` for ``policy`` in ``session`` (O(log n); nothing if already there)."""
    if type(value) is not str:
        _check(value)
    with session._lock:  # read, grow and store as one step: concurrent recorders lose nothing
        current = session._policy_state.get(policy)
        if type(current) is not ValueSet:
            current = _no_values()
        mapping = current._map
        if value in mapping:
            return
        grown = ValueSet.__new__(ValueSet)  # ValueSet.add, minus its checks done above
        grown._map = mapping.set(value, None)
        session._set_policy_state(policy, grown)


def set_policy_values(session: Session, policy: str, values: Iterable[str]) -> None:
    """Replace what ``policy`` has recorded in ``session``."""
    replacement = ValueSet(values)
    with session._lock:
        session._set_policy_state(policy, replacement)
