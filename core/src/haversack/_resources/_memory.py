"""``HoldsMemory``: a resource that can tell how much memory its content takes."""

from __future__ import annotations

from typing import Protocol, runtime_checkable

__all__ = ["HoldsMemory"]


@runtime_checkable
class HoldsMemory(Protocol):
    """A resource whose content lives in this process's memory and can say how big it is.

    ``held_bytes`` is the size of what the resource holds for its session (an in-memory
    workspace: its files' bytes), not Python's overhead; it must be cheap (O(1)), because
    a server asks every live session's resources after each changing call to keep them
    within its memory budget (``haversack serve --max-memory``).
    :meth:`Resources.held_bytes` sums it over a session's live resources.
    """

    def held_bytes(self) -> int: ...
