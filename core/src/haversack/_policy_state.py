"""Per-policy state kept in a session STATE slice, so rolled-back calls leave no trace."""

from __future__ import annotations

from collections.abc import Iterable, Iterator, Set
from dataclasses import dataclass, field
from typing import TYPE_CHECKING, Any

if TYPE_CHECKING:
    from ._session import Session

__all__ = ["PolicyState", "ValueSet", "add_policy_value", "policy_values", "set_policy_values"]

# A hash trie (HAMT) of plain tuples: 32 slots per node, each ``None``, a ``str`` value, a child
# node (tuple) or, once the 64 hash bits are used up, a frozenset bucket of colliding values.
# Adding copies one 32-slot tuple per level (log32 n levels) and shares everything else, so a
# snapshot of the session keeps the old version for free and a call that records a value costs
# O(log n), not the O(n) of copying a frozenset. Iteration order is unspecified.
_BITS = 5
_MASK = (1 << _BITS) - 1
_HASH_BITS = 64
_HASH_MASK = (1 << _HASH_BITS) - 1
_EMPTY_NODE: tuple[Any, ...] = (None,) * (1 << _BITS)


def _hash(value: str) -> int:
    return hash(value) & _HASH_MASK


def _add_root(root: tuple[Any, ...], value: str, h: int) -> tuple[Any, ...]:
    """``_add(root, value, h, 0)`` without recursion on the common path (same result)."""
    path: list[tuple[tuple[Any, ...], int]] = []
    node = root
    shift = 0
    while True:
        index = (h >> shift) & _MASK
        slot = node[index]
        if slot is None:
            new: Any = value
            break
        kind = type(slot)
        if kind is tuple:
            path.append((node, index))
            node = slot
            shift += _BITS
            continue
        new = _add(node, value, h, shift)  # a value or bucket here: the rare cases
        if new is node:
            return root
        index = -1
        break
    if index >= 0:
        copy = list(node)  # list, set, tuple: fewer allocations than slicing and concatenating
        copy[index] = new
        node = tuple(copy)
    else:
        node = new
    for parent, at in reversed(path):
        copy = list(parent)
        copy[at] = node
        node = tuple(copy)
    return node


def _add(node: tuple[Any, ...], value: str, h: int, shift: int) -> tuple[Any, ...]:
    index = (h >> shift) & _MASK
    slot = node[index]
    if slot is None:
        new: Any = value
    elif type(slot) is str:
        if slot == value:
            return node
        if shift + _BITS >= _HASH_BITS:
            new = frozenset((slot, value))
        else:
            child = _add(_EMPTY_NODE, slot, _hash(slot), shift + _BITS)
            new = _add(child, value, h, shift + _BITS)
    elif type(slot) is frozenset:
        if value in slot:
            return node
        new = slot | {value}
    else:
        new = _add(slot, value, h, shift + _BITS)
        if new is slot:
            return node
    return node[:index] + (new,) + node[index + 1 :]  # noqa: RUF005 - faster than unpacking


def _walk(node: tuple[Any, ...]) -> Iterator[str]:
    for slot in node:
        if slot is None:
            continue
        if type(slot) is str:
            yield slot
        elif type(slot) is frozenset:
            yield from slot
        else:
            yield from _walk(slot)


class ValueSet(Set[str]):
    """An immutable set of strings whose :meth:`add` returns a new set sharing structure.

    ``in`` and :meth:`add` cost O(log n); the old version stays valid, which is what session
    snapshots need.
    """

    __slots__ = ("_root", "_size")

    def __init__(self, values: Iterable[str] = ()) -> None:
        root, size = _EMPTY_NODE, 0
        for value in values:
            grown = _add(root, value, _hash(value), 0)
            if grown is not root:
                root, size = grown, size + 1
        self._root = root
        self._size = size

    def add(self, value: str) -> ValueSet:
        """This set with ``value`` (``self`` when it is already there)."""
        if not isinstance(value, str):
            raise TypeError(f"Policy state holds strings, got {type(value).__name__}.")
        root = _add_root(self._root, value, _hash(value))
        if root is self._root:
            return self
        grown = ValueSet.__new__(ValueSet)
        grown._root = root
        grown._size = self._size + 1
        return grown

    def __contains__(self, value: object) -> bool:
        if type(value) is not str:
            return False
        h = _hash(value)
        node = self._root
        shift = 0
        while True:
            slot = node[(h >> shift) & _MASK]
            if slot is None:
                return False
            if type(slot) is str:
                return slot == value
            if type(slot) is frozenset:
                return value in slot
            node = slot
            shift += _BITS

    def __iter__(self) -> Iterator[str]:
        return _walk(self._root)

    def __len__(self) -> int:
        return self._size

    __hash__ = Set._hash

    def __repr__(self) -> str:
        return f"ValueSet({sorted(self)!r})"


_NO_VALUES = ValueSet()


@dataclass(frozen=True, slots=True)
class PolicyState:
    """The remembered values (tool names, paths) of the policy called ``policy``.

    One entry per policy name: two policies never share or overwrite each other's state.
    """

    policy: str
    values: ValueSet = field(default=_NO_VALUES)


def policy_values(session: Session, policy: str) -> ValueSet:
    """What ``policy`` has recorded in ``session`` so far."""
    for state in session._items(PolicyState):
        if state.policy == policy:
            return state.values
    return _NO_VALUES


def add_policy_value(session: Session, policy: str, value: str) -> None:
    """Record ``value`` for ``policy`` in ``session`` (O(log n); nothing if already there)."""
    # session._items / _seed: seed() without building a Slice and a Replace on every call.
    current = session._items(PolicyState)
    for index, state in enumerate(current):
        if state.policy == policy:
            grown = state.values.add(value)
            if grown is not state.values:
                session._seed(
                    PolicyState,
                    (*current[:index], PolicyState(policy, grown), *current[index + 1 :]),
                )
            return
    session._seed(PolicyState, (*current, PolicyState(policy, _NO_VALUES.add(value))))


def set_policy_values(session: Session, policy: str, values: Iterable[str]) -> None:
    """Replace what ``policy`` has recorded in ``session``."""
    others = tuple(s for s in session[PolicyState].all() if s.policy != policy)
    session[PolicyState].seed((*others, PolicyState(policy, ValueSet(values))))
