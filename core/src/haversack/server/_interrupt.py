"""Running a blocking call in its own thread so that cancelling the caller stops it."""

from __future__ import annotations

import ctypes
import threading
from collections.abc import Callable
from typing import Any, TypeVar

__all__ = ["ToolCallCancelled", "run_interruptibly"]

T = TypeVar("T")


class ToolCallCancelled(BaseException):
    """Raised inside a tool running in a worker thread when its MCP call is cancelled.

    A ``BaseException`` like :class:`asyncio.CancelledError`, so a tool's ``except
    Exception`` does not swallow it; the executor treats it as an abort (rolls the call
    back, records it, re-raises). A tool that holds outside resources (processes,
    connections) releases them in ``finally`` or ``except BaseException``.
    """


def _raise_in(thread: threading.Thread) -> None:
    # CPython delivers an asynchronous exception at the thread's next bytecode: pure-Python
    # work stops at once, a blocking C call (a read, a sleep) when it returns.
    ident = thread.ident
    if ident is not None and thread.is_alive():
        ctypes.pythonapi.PyThreadState_SetAsyncExc(
            ctypes.c_ulong(ident), ctypes.py_object(ToolCallCancelled)
        )


async def run_interruptibly(fn: Callable[[], T], *, name: str, grace_s: float) -> T:
    """``fn()`` in a fresh thread; if the awaiting task is cancelled, raise
    :class:`ToolCallCancelled` in that thread and wait up to ``grace_s`` for it to finish
    (so the call's rollback happens before the cancellation propagates)."""
    import anyio

    finished = threading.Event()
    outcome: dict[str, Any] = {}

    def target() -> None:
        try:
            try:
                outcome["value"] = fn()
            except BaseException as exc:  # noqa: BLE001 - handed to the awaiting task
                outcome["error"] = exc
            finally:
                finished.set()
        except ToolCallCancelled:  # arrived after fn() returned: nothing left to stop
            finished.set()

    thread = threading.Thread(target=target, name=name, daemon=True)
    thread.start()
    try:
        await anyio.to_thread.run_sync(finished.wait, abandon_on_cancel=True)
    except anyio.get_cancelled_exc_class():
        if not finished.is_set():
            _raise_in(thread)
        with anyio.CancelScope(shield=True):
            await anyio.to_thread.run_sync(finished.wait, grace_s)
        raise
    if "error" in outcome:
        raise outcome["error"]
    return outcome["value"]  # type: ignore[no-any-return]
