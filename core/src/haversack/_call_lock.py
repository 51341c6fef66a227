"""One call at a time per executor, for threads and asyncio tasks alike.

A call snapshots the session and the resources before it runs and restores them if it
fails. Two calls in flight on the same executor would each restore over the other's
committed work, so calls take turns: threads wait on a lock, tasks on an ``asyncio.Lock`` of
their loop (first come, first served) and then on the same lock without blocking the loop.
A call made from inside a call of the same executor is refused instead of waiting forever.
"""

from __future__ import annotations

import sys
import threading
import weakref
from collections.abc import AsyncIterator
from contextlib import asynccontextmanager
from contextvars import ContextVar, Token
from typing import TYPE_CHECKING, Any

from .errors import ResourceError

if TYPE_CHECKING:
    import asyncio

__all__ = ["Turns"]

#: Executors (by id) with a call in progress in this thread or task: a nested call is a bug.
_IN_CALL: ContextVar[frozenset[int]] = ContextVar("haversack_in_call", default=frozenset())
_POLL_S = 0.0005


class Turns:
    """The turn-taking of one executor's calls."""

    __slots__ = ("_async_locks", "_lock", "_owner", "_who")

    def __init__(self, owner: str) -> None:
        self._lock = threading.Lock()
        self._async_locks: weakref.WeakKeyDictionary[Any, asyncio.Lock] = (
            weakref.WeakKeyDictionary()
        )
        self._owner = id(self)
        self._who = owner

    def _not_nested(self) -> frozenset[int]:
        active = _IN_CALL.get()
        if self._owner in active:
            raise ResourceError(
                f"A tool call on {self._who} was made from inside another call of the same "
                "executor; tool calls do not nest (return a result and let the model call "
                "the next tool)."
            )
        return active

    def enter(self) -> Token[frozenset[int]]:
        """Take the turn for a call made with ``execute``; give it back with :meth:`leave`."""
        active = self._not_nested()
        if not self._lock.acquire(blocking=False):
            if _loop_running():
                raise ResourceError(
                    f"execute() on {self._who} would block the running event loop while "
                    "another call of this executor is in progress; use aexecute() there."
                )
            self._lock.acquire()
        return _IN_CALL.set(active | {self._owner})

    def leave(self, token: Token[frozenset[int]]) -> None:
        """Give back the turn taken by :meth:`enter`."""
        _IN_CALL.reset(token)
        self._lock.release()

    @asynccontextmanager
    async def async_(self) -> AsyncIterator[None]:
        """Hold the turn for a call made with ``aexecute``."""
        import asyncio

        active = self._not_nested()
        loop = asyncio.get_running_loop()
        queue = self._async_locks.get(loop)
        if queue is None:
            queue = self._async_locks.setdefault(loop, asyncio.Lock())
        async with queue:  # tasks of this loop: in arrival order
            while not self._lock.acquire(blocking=False):  # a thread's execute() holds it
                await asyncio.sleep(_POLL_S)
            token = _IN_CALL.set(active | {self._owner})
            try:
                yield
            finally:
                _IN_CALL.reset(token)
                self._lock.release()


def _loop_running() -> bool:
    asyncio = sys.modules.get("asyncio")
    if asyncio is None:  # never imported: no loop can be running
        return False
    try:
        asyncio.get_running_loop()
    except RuntimeError:
        return False
    return True
