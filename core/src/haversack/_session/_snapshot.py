"""``SessionSnapshot``: the STATE slices of one session at one moment."""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any, TypeVar

from ._chain import EMPTY, Chain

__all__ = ["SessionSnapshot"]

T = TypeVar("T")


class SessionSnapshot:
    """An opaque, immutable record of a session's STATE slices (and of what its policies
    have recorded), made by ``Session.snapshot``.

    It holds references to the slices' immutable contents, so taking one costs O(number of
    slice types) however long the history is. It can only be restored into the session that
    took it.
    """

    __slots__ = ("_owner", "_policy_state", "_session_id", "_slices")

    def __init__(
        self,
        owner: object,
        session_id: str,
        slices: Mapping[type, Chain[Any]],
        policy_state: Mapping[str, object],
    ) -> None:
        self._owner = owner
        self._session_id = session_id
        # Read-only views the session never changes (it replaces them), so no copies.
        self._slices = slices
        self._policy_state = policy_state

    @property
    def session_id(self) -> str:
        """The id of the session that took the snapshot."""
        return self._session_id

    @property
    def slice_types(self) -> tuple[type, ...]:
        """The STATE slice types the session knew when the snapshot was taken."""
        return tuple(self._slices)

    def items(self, slice_type: type[T]) -> tuple[T, ...]:
        """The items ``slice_type`` held at snapshot time (empty if it was not a STATE slice)."""
        return self._slices.get(slice_type, EMPTY).items()

    def __repr__(self) -> str:
        sizes = ", ".join(f"{tp.__qualname__}: {len(ch)}" for tp, ch in self._slices.items())
        return f"SessionSnapshot(session_id={self._session_id!r}, {{{sizes}}})"
