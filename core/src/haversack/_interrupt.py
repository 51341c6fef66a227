"""Stopping a sync tool call that runs in a thread of its own, only where that is safe.

CPython can raise an exception in another thread (``PyThreadState_SetAsyncExc``); it lands at
that thread's next bytecode, wherever that is. Landing in the executor's bookkeeping is not
safe: between taking the call lock and entering the ``try`` that gives it back, it left the
lock held and every later call of the session hung; inside a rollback it would leave the
session half restored; inside a module body, a half-initialised module for the whole process.

So a thread run by :func:`run_interruptibly` carries an :class:`Interruptible` gate. The gate
is open while caller code and a tool's handler run, and the executor closes it around its
own work (lock, snapshot, policies, rollback, publishing). An interrupt is raised at once only
through an open gate and outside an import; otherwise it is remembered, and the next opening
of the gate raises it there, at a safe point.
"""

from __future__ import annotations

import sys
import threading
import time
from collections.abc import Callable, Iterator
from contextlib import contextmanager
from typing import Any, TypeVar

from .errors import ToolCallCancelled

__all__ = [
    "GATES",
    "Interruptible",
    "check_cancelled",
    "run_interruptibly",
    "uninterruptible",
]

T = TypeVar("T")

# Frames of the import machinery: a module body runs below them.
_IMPORT_FILES = frozenset(
    {"<frozen importlib._bootstrap>", "<frozen importlib._bootstrap_external>"}
)
_POLL_S = 0.005


class _Gates(threading.local):
    #: The gate of the calling thread, or ``None`` if nothing may interrupt it.
    gate: Interruptible | None = None


#: Read on every call by the executor (an attribute, not a function: it is the hot path).
GATES = _Gates()


@contextmanager
def uninterruptible() -> Iterator[None]:
    """Run the block to its end even if the call is cancelled meanwhile.

    For a tool's work that must not be cut short: cleaning up after a command, a write that
    must finish or not start. A cancellation that arrives inside the block is raised when it
    ends; inside it, :func:`check_cancelled` lets a long wait stop early, at a point the tool
    chooses. Outside a cancellable call (no MCP server, a plain ``execute``) it does nothing.
    """
    gate = GATES.gate
    if gate is None:
        yield
        return
    with gate.closed():
        yield


def check_cancelled() -> None:
    """Raise :class:`~haversack.errors.ToolCallCancelled` if the running call was cancelled.

    The cooperative check for work inside :func:`uninterruptible` (a loop that waits on a
    process or a socket); cheap enough to call on every wake-up.
    """
    gate = GATES.gate
    if gate is not None and gate.requested:
        raise ToolCallCancelled


class Interruptible:
    """Whether one thread may be interrupted now, and whether someone asked to."""

    __slots__ = ("_ctypes", "_delivered", "_ident", "_mutex", "_open", "requested")

    def __init__(self) -> None:
        import ctypes  # only threads that can be interrupted pay for it

        self._ctypes = ctypes
        self._mutex = threading.Lock()
        self._open = False
        self._delivered = False
        self._ident: int | None = None
        self.requested = False

    def install(self) -> None:
        """Make this the gate of the calling thread (closed until :meth:`open`)."""
        self._ident = threading.get_ident()
        GATES.gate = self

    def open(self) -> None:
        """Let interrupts in; raises :class:`ToolCallCancelled` here if one is waiting."""
        with self._mutex:
            if self.requested:
                raise ToolCallCancelled
            self._open = True

    def close(self) -> bool:
        """Keep interrupts out; returns whether the gate was open.

        An interrupt raised but not yet delivered would land in the code that follows: it
        is taken here and dropped; it stays requested, so the next :meth:`open` raises it.
        """
        with self._mutex:
            was, self._open = self._open, False
            delivered, self._delivered = self._delivered, False
        if delivered:
            # Withdrawing it (SetAsyncExc with NULL) leaves CPython's eval breaker set: the
            # next thread to check it spins for ever. So let it land, in a loop whose every
            # backward jump checks for it.
            try:
                for _ in range(10_000):
                    pass
            except ToolCallCancelled:
                pass
        return was

    def call(self, fn: Callable[..., T], *args: Any) -> T:
        """``fn(*args)`` with the gate open (a tool's handler)."""
        self.open()
        try:
            return fn(*args)
        finally:
            self.close()

    @contextmanager
    def closed(self) -> Iterator[None]:
        """The block with the gate closed (the executor's own work, a tool's clean-up); an
        interrupt asked for meanwhile is raised when it ends, if the gate was open before."""
        reopen = self.close()
        try:
            yield
        finally:
            if reopen:
                self.open()

    def interrupt(self, finished: threading.Event, wait_s: float) -> None:
        """Ask the thread to stop: raise :class:`ToolCallCancelled` in it now if the gate is
        open, or at its next opening.

        Never inside an import: an exception in a module body leaves that module
        half-initialised for every later user in the process (CI saw "module 'urllib3' has
        no attribute 'connection'" after a cancellation landed in the sandbox's first, lazy
        import of its HTTP client). So wait, up to ``wait_s``, for the import to end. The
        global import lock is held between the check and the raise, so the thread cannot
        start a module body in between.
        """
        import _imp

        with self._mutex:
            self.requested = True
        ident = self._ident
        deadline = time.monotonic() + wait_s
        while ident is not None and not finished.is_set():
            _imp.acquire_lock()
            try:
                with self._mutex:
                    if not self._open:
                        return  # the next open() raises it, at a safe point
                    if not _importing(ident):
                        # Delivered at the thread's next bytecode: pure-Python work stops at
                        # once, a blocking C call (a read, a sleep) when it returns.
                        self._open = False  # one delivery; close() takes it if it is late
                        self._delivered = True
                        self._set_async()
                        return
            finally:
                _imp.release_lock()
            if time.monotonic() >= deadline:
                return  # still importing: left to finish, as a call past its grace would be
            time.sleep(_POLL_S)

    def _set_async(self) -> None:
        """Raise :class:`ToolCallCancelled` in the thread at its next bytecode."""
        ctypes = self._ctypes
        ctypes.pythonapi.PyThreadState_SetAsyncExc(
            ctypes.c_ulong(self._ident), ctypes.py_object(ToolCallCancelled)
        )


def _importing(ident: int) -> bool:
    frame = sys._current_frames().get(ident)
    while frame is not None:
        if frame.f_code.co_filename in _IMPORT_FILES:
            return True
        frame = frame.f_back
    return False


async def run_interruptibly(fn: Callable[[], T], *, name: str, grace_s: float) -> T:
    """``fn()`` in a fresh thread; if the awaiting task is cancelled, raise
    :class:`ToolCallCancelled` in that thread (see :class:`Interruptible`) and wait up to
    ``grace_s`` for it to finish, so the call's rollback happens before the cancellation
    propagates."""
    import anyio

    finished = threading.Event()
    gate = Interruptible()
    outcome: dict[str, Any] = {}

    def target() -> None:
        gate.install()
        try:
            outcome["value"] = gate.call(fn)
        except BaseException as exc:  # noqa: BLE001 - handed to the awaiting task
            outcome["error"] = exc
        finally:
            finished.set()

    thread = threading.Thread(target=target, name=name, daemon=True)
    thread.start()
    try:
        await anyio.to_thread.run_sync(finished.wait, abandon_on_cancel=True)
    except anyio.get_cancelled_exc_class():
        with anyio.CancelScope(shield=True):
            if not finished.is_set():
                await anyio.to_thread.run_sync(gate.interrupt, finished, grace_s)
            await anyio.to_thread.run_sync(finished.wait, grace_s)
        raise
    if "error" in outcome:
        raise outcome["error"]
    return outcome["value"]  # type: ignore[no-any-return]
