"""The HTTP server's memory budget: what its sessions' resources hold, kept under a limit."""

from __future__ import annotations

import threading
from collections.abc import Callable
from typing import TYPE_CHECKING, Any

if TYPE_CHECKING:
    from haversack._executor import ToolExecutor

__all__ = ["MemoryBudget"]

_MIB = 1 << 20


def _amount(n: int) -> str:
    return f"{n / _MIB:.1f} MiB" if n >= _MIB else f"{n} bytes"


class MemoryBudget:
    """The bytes every open session's resources hold (:class:`haversack.HoldsMemory`),
    kept within ``limit``.

    Checked after each changing call, before it is committed (the executor's
    ``before_commit``): by then the call's writes are in memory, so the sum is exact, and
    a call that leaves it over the limit is rolled back like any failed call. A write-time
    check inside each resource would need the core to reach into every pack's resource;
    this one asks one O(1) number per open session (at most ``--max-sessions``) and only
    goes to the event loop, to close idle sessions, when the sum is over the limit.
    """

    def __init__(self, limit: int) -> None:
        self.limit = limit
        self.sessions: dict[str, ToolExecutor] = {}
        # Set by the HTTP layer: the idle sessions' ids, idlest first, and how to close one.
        self.idle_order: Callable[[], list[str]] = list
        self.evict: Callable[[str], bool] = lambda session_id: False
        # Whether a session is still open: one the client deleted stops counting at once,
        # before its resources finish closing.
        self.alive: Callable[[str], bool] = lambda session_id: True
        self._token: Any = None
        self._loop_thread: int | None = None

    def attach(self, session_id: str, executor: ToolExecutor) -> None:
        """Count ``executor``'s resources from now on (called on the event loop)."""
        import anyio.lowlevel

        if self._token is None:
            self._token = anyio.lowlevel.current_token()
            self._loop_thread = threading.get_ident()
        self.sessions[session_id] = executor

    def detach(self, session_id: str, executor: ToolExecutor) -> None:
        if self.sessions.get(session_id) is executor:
            del self.sessions[session_id]

    def held(self) -> int:
        """What the open sessions hold now, in bytes."""
        alive = self.alive
        return sum(
            executor.resources.held_bytes()
            for session_id, executor in tuple(self.sessions.items())
            if alive(session_id)
        )

    def check(self) -> str | None:
        """``None`` when the sessions fit (after closing idle ones if needed), else why not."""
        if self.held() <= self.limit:
            return None
        if threading.get_ident() == self._loop_thread:
            full = self.make_room()
        else:
            import anyio.from_thread

            full = anyio.from_thread.run_sync(self.make_room, token=self._token)
        if full is None:
            return None
        return (
            f"{full} The call was rolled back: delete files you no longer need, or ask the "
            "server's operator to raise --max-memory."
        )

    def make_room(self, needed: int = 0) -> str | None:
        """Close idle sessions holding memory, idlest first, until the sessions hold at most
        ``limit - needed``; ``None`` if they then do, else the refusal. On the event loop."""
        total = self.held()
        for session_id in self.idle_order():
            if total + needed <= self.limit:
                break
            executor = self.sessions.get(session_id)
            held = 0 if executor is None else executor.resources.held_bytes()
            if held and self.evict(session_id):
                self.sessions.pop(session_id, None)
                total -= held
        if total + needed <= self.limit:
            return None
        return (
            f"The server's memory budget is used up: its sessions hold {_amount(total)} and "
            f"the limit is {_amount(self.limit)} (haversack serve --max-memory, in MiB); no "
            "idle session holding memory could be closed to make room."
        )
