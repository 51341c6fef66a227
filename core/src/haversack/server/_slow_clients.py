"""Drops HTTP clients that send a request's headers too slowly (slowloris)."""

from __future__ import annotations

from typing import Any

__all__ = ["header_timeout_protocol"]


def header_timeout_protocol(seconds: float) -> type[Any]:
    """uvicorn's h11 protocol, closing a connection whose request headers have not all
    arrived ``seconds`` after its first byte (or after it was opened).

    uvicorn times out only idle keep-alive connections: a client that sends a request's
    headers a byte at a time keeps its connection, and a few thousand such clients use up
    the process's descriptors and starve the real ones.
    """
    import h11
    from uvicorn.protocols.http.h11_impl import H11Protocol

    class HeaderTimeoutProtocol(H11Protocol):
        _header_timer: Any = None

        def connection_made(self, transport: Any) -> None:
            super().connection_made(transport)
            self._arm()

        def data_received(self, data: bytes) -> None:
            super().data_received(data)
            if self.conn.their_state is h11.IDLE:
                self._arm()  # still waiting for a request's headers
            else:
                self._disarm()

        def connection_lost(self, exc: Exception | None) -> None:
            self._disarm()
            super().connection_lost(exc)

        def _arm(self) -> None:
            if self._header_timer is None:
                self._header_timer = self.loop.call_later(seconds, self._too_slow)

        def _disarm(self) -> None:
            if self._header_timer is not None:
                self._header_timer.cancel()
                self._header_timer = None

        def _too_slow(self) -> None:
            self._header_timer = None
            # Only between requests: a request being answered is never cut here.
            idle = self.cycle is None or self.cycle.response_complete
            if self.conn.their_state is h11.IDLE and idle:
                self.transport.close()

    return HeaderTimeoutProtocol
