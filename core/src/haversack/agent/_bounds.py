"""Bounds a provider request by the run's ``Deadline``: connect, every read, the whole stream."""

from __future__ import annotations

import asyncio
import contextlib
import socket
import threading
import time
from collections.abc import Awaitable, Callable
from typing import TYPE_CHECKING, Any, TypeVar

from haversack.errors import DeadlineExceededError, HaversackError, ProviderError

if TYPE_CHECKING:
    from haversack._deadline import Deadline

__all__ = ["RETRIES", "Sockets", "abounded", "bounded"]

T = TypeVar("T")

#: Attempts after the first for a transient failure (connection lost, 408/409/429/5xx) when
#: a deadline bounds the request: the SDK's own retries are turned off then, because its
#: back-off sleeps (up to a minute on a Retry-After header) ignore the deadline.
RETRIES = 2
_BACKOFF_S = 0.5


class Sockets:
    """The sockets of the HTTP clients a provider built (found by an httpx ``trace`` hook),
    so a watchdog can shut them down at the deadline: a shutdown wakes a blocked read,
    where closing the descriptor from another thread would not."""

    def __init__(self) -> None:
        self._lock = threading.Lock()
        self._open: set[socket.socket] = set()

    def hooks(self) -> dict[str, list[Callable[[Any], Any]]]:
        """``event_hooks`` for a sync ``httpx`` client."""
        return {"request": [self._on_request]}

    def _on_request(self, request: Any) -> None:
        request.extensions["trace"] = self._trace

    def _trace(self, name: str, info: dict[str, Any]) -> None:
        if name != "connection.connect_tcp.complete":
            return
        stream = info.get("return_value")
        sock = getattr(stream, "get_extra_info", lambda _: None)("socket")
        if isinstance(sock, socket.socket):
            with self._lock:
                self._open = {s for s in self._open if s.fileno() != -1}
                self._open.add(sock)

    def shut_down(self) -> None:
        """Shut down every open socket: any read blocked on one returns at once."""
        with self._lock:
            open_ = [s for s in self._open if s.fileno() != -1]
        for sock in open_:
            with contextlib.suppress(OSError):
                sock.shutdown(socket.SHUT_RDWR)


def bounded(
    attempt: Callable[[bool], T],
    *,
    deadline: Deadline | None,
    sockets: Sockets,
    what: str,
    failed: Callable[[Exception], ProviderError],
    retryable: Callable[[Exception], bool],
) -> T:
    """``attempt(bounded)`` within ``deadline``; transient failures retried while time is left.

    ``attempt`` receives whether a deadline applies (then it must turn the SDK's retries off
    and pass the remaining time as the request timeout). A watchdog shuts the provider's
    sockets down when the deadline passes, so a server that stops answering, or trickles a
    stream that never ends, is cut there. ``what`` names the request in the deadline error.
    """
    if deadline is None:
        return _translated(lambda: attempt(False), failed)
    tries = 0
    while True:
        deadline.check(what)
        timer = threading.Timer(deadline.remaining(), sockets.shut_down)
        timer.daemon = True
        timer.start()
        try:
            return attempt(True)
        except HaversackError:
            raise
        except Exception as exc:
            deadline.check(what)
            pause = _BACKOFF_S * 2**tries
            if tries >= RETRIES or not retryable(exc) or pause >= deadline.remaining():
                raise failed(exc) from exc
        finally:
            timer.cancel()
        time.sleep(pause)
        tries += 1


async def abounded(
    attempt: Callable[[bool], Awaitable[T]],
    *,
    deadline: Deadline | None,
    what: str,
    failed: Callable[[Exception], ProviderError],
    retryable: Callable[[Exception], bool],
) -> T:
    """:func:`bounded` for async clients: the attempt is cancelled at the deadline."""
    if deadline is None:
        try:
            return await attempt(False)
        except HaversackError:
            raise
        except Exception as exc:
            raise failed(exc) from exc
    tries = 0
    while True:
        deadline.check(what)
        try:
            async with asyncio.timeout(deadline.remaining()):
                return await attempt(True)
        except HaversackError:
            raise
        except Exception as exc:
            deadline.check(what)
            if isinstance(exc, TimeoutError):
                # asyncio's timer and the deadline's clock can disagree by a hair.
                raise DeadlineExceededError(f"Deadline exceeded: {what} ran out of time.") from exc
            pause = _BACKOFF_S * 2**tries
            if tries >= RETRIES or not retryable(exc) or pause >= deadline.remaining():
                raise failed(exc) from exc
        await asyncio.sleep(pause)
        tries += 1


def _translated(call: Callable[[], T], failed: Callable[[Exception], ProviderError]) -> T:
    try:
        return call()
    except HaversackError:
        raise
    except Exception as exc:
        raise failed(exc) from exc
