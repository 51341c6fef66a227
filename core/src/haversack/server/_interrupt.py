"""Running a blocking call in its own thread so that cancelling the caller stops it."""

from __future__ import annotations

import _imp
import ctypes
import sys
import threading
import time
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


# Frames of the import machinery: a module body runs below them.
_IMPORT_FILES = frozenset(
    {"<frozen importlib._bootstrap>", "<frozen importlib._bootstrap_external>"}
)
_POLL_S = 0.005


def _importing(ident: int) -> bool:
    frame = sys._current_frames().get(ident)
    while frame is not None:
        if frame.f_code.co_filename in _IMPORT_FILES:
            return True
        frame = frame.f_back
    return False


def _interrupt(thread: threading.Thread, finished: threading.Event, wait_s: float) -> None:
    """Raise :class:`ToolCallCancelled` in ``thread``, but never while it imports a module.

    An exception inside a module body leaves that module half-initialised for every later
    user in the process (CI saw the next call fail with "module 'urllib3' has no attribute
    'connection'" after a cancellation landed in the sandbox's first, lazy import of its
    HTTP client). So wait, up to ``wait_s``, for the import to end. The global import lock
    is held between the check and the raise, so the thread cannot start a module body in
    between; an exception while it waits for that lock stops the import before it begins.
    """
    ident = thread.ident
    deadline = time.monotonic() + wait_s
    while ident is not None and thread.is_alive() and not finished.is_set():
        _imp.acquire_lock()
        try:
            if not _importing(ident):
                # CPython delivers an asynchronous exception at the thread's next bytecode:
                # pure-Python work stops at once, a blocking C call (a read, a sleep) when it
                # returns.
                ctypes.pythonapi.PyThreadState_SetAsyncExc(
                    ctypes.c_ulong(ident), ctypes.py_object(ToolCallCancelled)
                )
                return
        finally:
            _imp.release_lock()
        if time.monotonic() >= deadline:
            return  # still importing: the call is left to finish, as one past its grace would be
        time.sleep(_POLL_S)


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
        with anyio.CancelScope(shield=True):
            if not finished.is_set():
                await anyio.to_thread.run_sync(_interrupt, thread, finished, grace_s)
            await anyio.to_thread.run_sync(finished.wait, grace_s)
        raise
    if "error" in outcome:
        raise outcome["error"]
    return outcome["value"]  # type: ignore[no-any-return]
