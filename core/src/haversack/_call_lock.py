"""The call lock of one executor: read-only calls share it, any other call holds it alone.

A call that may change something snapshots the session and the resources before it runs and
restores them if it fails; two such calls in flight would each restore over the other's
committed work, and a reader in flight would see a writer's half-done work. A call of a tool
annotated read-only takes no snapshot and changes no resource, so readers may overlap with
each other, never with a writer.

Threads (``execute``) and asyncio tasks (``aexecute``) queue in one first-come, first-served
line: a caller takes the lock at once only when nobody waits and the holders are compatible,
so a waiting writer is never starved by a stream of readers, and readers behind a writer wait
for it. A call made from inside a call of the same executor is refused instead of waiting
forever.
"""

from __future__ import annotations

import sys
import threading
from collections import deque
from contextvars import ContextVar, Token
from typing import TYPE_CHECKING

from .errors import ResourceError

if TYPE_CHECKING:
    import asyncio

__all__ = ["CallLock"]

#: Executors (by lock id) with a call in progress in this thread or task: a nested call is a
#: bug (it would wait for itself).
_IN_CALL: ContextVar[frozenset[int]] = ContextVar("haversack_in_call", default=frozenset())

InCall = Token[frozenset[int]]


class _Waiter:
    """One caller in line: a thread blocked on a lock, or a task awaiting a future."""

    __slots__ = ("future", "granted", "loop", "shared", "wakeup")

    def __init__(
        self,
        shared: bool,
        loop: asyncio.AbstractEventLoop | None = None,
        future: asyncio.Future[None] | None = None,
    ) -> None:
        self.shared = shared
        self.granted = False
        self.loop = loop
        self.future = future
        self.wakeup: threading.Lock | None = None
        if future is None:
            self.wakeup = threading.Lock()
            self.wakeup.acquire()  # released by wake()

    def wake(self) -> bool:
        """Tell the waiter it holds the lock; ``False`` if it can no longer be told."""
        if self.wakeup is not None:
            self.wakeup.release()
            return True
        assert self.loop is not None
        try:
            self.loop.call_soon_threadsafe(_resolve, self.future)
        except RuntimeError:  # its loop is closed: nobody will take the grant
            return False
        return True


def _resolve(future: asyncio.Future[None] | None) -> None:
    if future is not None and not future.done():
        future.set_result(None)


class CallLock:
    """Readers share, a writer holds it alone; one first-come, first-served line for both."""

    __slots__ = ("_alone", "_mutex", "_queue", "_readers", "_self", "_who", "_writing")

    def __init__(self, owner: str) -> None:
        self._mutex = threading.Lock()
        self._readers = 0
        self._writing = False
        self._queue: deque[_Waiter] = deque()
        self._self = id(self)
        self._alone = frozenset({self._self})  # what _IN_CALL holds in a call of no other
        self._who = owner

    @property
    def readers(self) -> int:
        """How many read-only calls hold the lock now."""
        return self._readers

    @property
    def waiting(self) -> int:
        """How many calls wait in line for the lock now."""
        return len(self._queue)

    def _inside(self) -> frozenset[int]:
        """What ``_IN_CALL`` holds during this call; refuses a call nested in one of ours."""
        active = _IN_CALL.get()
        if not active:
            return self._alone
        if self._self in active:
            raise ResourceError(
                f"A tool call on {self._who} was made from inside another call of the same "
                "executor; tool calls do not nest (return a result and let the model call "
                "the next tool)."
            )
        return active | self._alone

    def _take(self, shared: bool) -> bool:
        """Take the lock if nobody waits and the holders allow it (the mutex is held)."""
        if self._queue:
            return False
        if shared:
            if self._writing:
                return False
            self._readers += 1
            return True
        if self._writing or self._readers:
            return False
        self._writing = True
        return True

    def acquire(self, shared: bool) -> InCall:
        """Take the lock for a call made with ``execute`` (blocking); give it back with
        :meth:`release`. ``shared``: the call is read-only."""
        inside = self._alone if not _IN_CALL.get() else self._inside()
        with self._mutex:
            if self._take(shared):
                waiter = None
            else:
                if _loop_running():
                    raise ResourceError(
                        f"execute() on {self._who} would block the running event loop while "
                        "another call of this executor is in progress; use aexecute() there."
                    )
                waiter = _Waiter(shared)
                self._queue.append(waiter)
        if waiter is not None:
            assert waiter.wakeup is not None
            try:
                waiter.wakeup.acquire()
            except BaseException:  # interrupted while in line: leave it, or give the grant back
                self._leave_line(waiter)
                raise
        return _IN_CALL.set(inside)

    async def aacquire(self, shared: bool) -> InCall:
        """Take the lock for a call made with ``aexecute``, waiting without blocking the loop."""
        inside = self._inside()
        with self._mutex:
            if self._take(shared):
                waiter = None
            else:
                import asyncio

                loop = asyncio.get_running_loop()
                waiter = _Waiter(shared, loop, loop.create_future())
                self._queue.append(waiter)
        if waiter is not None:
            assert waiter.future is not None
            try:
                await waiter.future
            except BaseException:  # cancelled while in line: leave it, or give the grant back
                self._leave_line(waiter)
                raise
        return _IN_CALL.set(inside)

    def release(self, shared: bool, token: InCall) -> None:
        """Give back the lock taken by :meth:`acquire` or :meth:`aacquire`."""
        _IN_CALL.reset(token)
        with self._mutex:
            if shared:
                self._readers -= 1
            else:
                self._writing = False
            if self._queue:
                self._grant()

    def _leave_line(self, waiter: _Waiter) -> None:
        with self._mutex:
            if waiter.granted:
                self._give_back(waiter.shared)
            else:
                self._queue.remove(waiter)
            self._grant()

    def _give_back(self, shared: bool) -> None:
        if shared:
            self._readers -= 1
        else:
            self._writing = False

    def _grant(self) -> None:
        """Hand the lock to the head of the line, and to every reader right behind it."""
        queue = self._queue
        while queue:
            waiter = queue[0]
            if waiter.shared:
                if self._writing:
                    return
                self._readers += 1
            else:
                if self._writing or self._readers:
                    return
                self._writing = True
            queue.popleft()
            waiter.granted = True
            if not waiter.wake():
                self._give_back(waiter.shared)


def _loop_running() -> bool:
    asyncio = sys.modules.get("asyncio")
    if asyncio is None:  # never imported: no loop can be running
        return False
    try:
        asyncio.get_running_loop()
    except RuntimeError:
        return False
    return True
