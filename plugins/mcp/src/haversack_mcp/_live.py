"""The cap on server sets running at once in a process (each ``serve`` session has one)."""

from __future__ import annotations

import threading
import time
from typing import TYPE_CHECKING

from ._errors import McpServerError

if TYPE_CHECKING:
    from ._connection import McpConnections

__all__ = ["LiveSets", "LIVE"]


class LiveSets:
    """The :class:`McpConnections` whose servers run, least recently used first.

    Every executor has its own connections, so a process serving many sessions (``haversack
    serve`` over HTTP) would run a server process per session and server for as long as the
    session lives. Starting a server in a set not running yet first makes room: past the
    limit, the least recently used set with no call in flight has its servers stopped (they
    start again on its next call).
    """

    def __init__(self) -> None:
        self._lock = threading.Lock()
        self._running: dict[McpConnections, float] = {}  # insertion order is not use order

    def touch(self, owner: McpConnections) -> None:
        """Note a use of ``owner`` (a running set) now."""
        with self._lock:
            if owner in self._running:
                self._running[owner] = time.monotonic()

    def admit(self, owner: McpConnections, limit: int) -> list[McpConnections]:
        """Count ``owner`` as running; the sets to stop to stay within ``limit`` (the caller
        stops them). Raises :class:`McpServerError` when every other running set is busy."""
        with self._lock:
            self._running[owner] = time.monotonic()
            excess = len(self._running) - limit
            if excess <= 0:
                return []
            idle = sorted(
                (used, id(other), other)
                for other, used in self._running.items()
                if other is not owner and not other.busy
            )
            if len(idle) < excess:
                del self._running[owner]
                raise McpServerError(
                    f"{len(self._running)} sessions of this process have their MCP servers "
                    f"running, the limit (max_live_sessions = {limit} in the mcp pack's "
                    "options), and each is serving a call: try again when one finishes, "
                    "or raise max_live_sessions.",
                    pack="mcp",
                )
            victims = [other for _used, _id, other in idle[:excess]]
            for other in victims:
                del self._running[other]
            return victims

    def forget(self, owner: McpConnections) -> None:
        """``owner`` runs no server any more (closed)."""
        with self._lock:
            self._running.pop(owner, None)

    def running(self) -> int:
        """How many sets are counted as running."""
        with self._lock:
            return len(self._running)


LIVE = LiveSets()
