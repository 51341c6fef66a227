"""Per-policy state kept in a session STATE slice, so rolled-back calls leave no trace."""

from __future__ import annotations

import functools
from collections.abc import Iterable, Iterator, Set
from dataclasses import dataclass, field
from typing import TYPE_CHECKING

if TYPE_CHECKING:
    from immutables import Map

    from ._session import Session

__all__ = ["PolicyState", "ValueSet", "add_policy_value", "policy_values", "set_policy_values"]


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


@dataclass(frozen=True, slots=True)
class PolicyState:
    """The remembered values (tool names, paths) of the policy called ``policy``.

    One entry per policy name: two policies never share or overwrite each other's state.
    """

    policy: str
    values: ValueSet = field(default_factory=_no_values)


def policy_values(session: Session, policy: str) -> ValueSet:
    """What ``policy`` has recorded in ``session`` so far."""
    for state in session._items(PolicyState):
        if state.policy == policy:
            return state.values
    return _no_values()


def add_policy_value(session: Session, policy: str, value: str) -> None:
    """Record ``value`` for ``policy`` in ``session`` (O(log n); nothing if already there)."""
    if type(value) is not str:
        _check(value)
    # session._items / _seed: seed() without building a Slice and a Replace on every call.
    current = session._items(PolicyState)
    for index, state in enumerate(current):
        if state.policy == policy:
            mapping = state.values._map
            if value in mapping:
                return
            grown = ValueSet.__new__(ValueSet)  # ValueSet.add, minus its checks done above
            grown._map = mapping.set(value, None)
            changed = PolicyState(policy, grown)
            session._seed(
                PolicyState,
                (changed,)
                if len(current) == 1
                else (*current[:index], changed, *current[index + 1 :]),
            )
            return
    session._seed(PolicyState, (*current, PolicyState(policy, _no_values().add(value))))


def set_policy_values(session: Session, policy: str, values: Iterable[str]) -> None:
    """Replace what ``policy`` has recorded in ``session``."""
    others = tuple(s for s in session[PolicyState].all() if s.policy != policy)
    session[PolicyState].seed((*others, PolicyState(policy, ValueSet(values))))
