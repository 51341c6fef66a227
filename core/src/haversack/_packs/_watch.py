"""Slow pack imports: a notice naming the pack, and a per-pack time budget for listings.

A pack whose import never returns cannot be interrupted from Python. Two answers: every
command gets a notice on stderr naming the pack once a step runs past
``HAVERSACK_IMPORT_NOTICE`` seconds (a daemon thread watches; nothing is interrupted), and
listing commands (``packs``, ``check``, ``tools``) import each pack in a daemon thread and
stop waiting after ``HAVERSACK_IMPORT_BUDGET`` seconds, reporting the pack as timed out.
"""

from __future__ import annotations

import os
import sys
import threading
from collections.abc import Callable, Iterator
from contextlib import contextmanager
from typing import TextIO, TypeVar

__all__ = [
    "DEFAULT_BUDGET",
    "DEFAULT_NOTICE",
    "ENV_BUDGET",
    "ENV_NOTICE",
    "budget_from_env",
    "expect_slow",
    "notice_delay",
    "watching",
    "within",
]

T = TypeVar("T")

#: Seconds a pack's import or hook may run before stderr names it.
ENV_NOTICE = "HAVERSACK_IMPORT_NOTICE"
DEFAULT_NOTICE = 2.0
#: Seconds the listing commands wait for one pack's import before reporting it timed out.
ENV_BUDGET = "HAVERSACK_IMPORT_BUDGET"
DEFAULT_BUDGET = 10.0


def _seconds(name: str, default: float) -> float:
    raw = os.environ.get(name, "").strip()
    if not raw:
        return default
    try:
        value = float(raw)
    except ValueError:
        return default
    return value if value >= 0 else default


def notice_delay() -> float:
    """``$HAVERSACK_IMPORT_NOTICE`` seconds, default :data:`DEFAULT_NOTICE`."""
    return _seconds(ENV_NOTICE, DEFAULT_NOTICE)


def budget_from_env() -> float:
    """``$HAVERSACK_IMPORT_BUDGET`` seconds, default :data:`DEFAULT_BUDGET`."""
    return _seconds(ENV_BUDGET, DEFAULT_BUDGET)


def _notice(what: str, seconds: float, stream: TextIO | None) -> None:
    print(
        f"haversack: still {what} after {seconds:g} s; if it never finishes, leave the pack "
        "out (HAVERSACK_DISABLE=NAME or --disable NAME) and report it to its authors.",
        file=stream or sys.stderr,
        flush=True,
    )


class _Watchdog:
    """One daemon thread that prints a notice when the current step outlasts the delay."""

    def __init__(self) -> None:
        self._cv = threading.Condition()
        self._step: tuple[int, str, float, TextIO | None] | None = None
        self._serial = 0
        self._thread: threading.Thread | None = None

    def begin(self, what: str, delay: float, stream: TextIO | None) -> int:
        with self._cv:
            self._serial += 1
            self._step = (self._serial, what, delay, stream)
            # Not alive after a fork: the child has the object but not the thread.
            if self._thread is None or not self._thread.is_alive():
                self._thread = threading.Thread(
                    target=self._run, name="haversack-pack-watchdog", daemon=True
                )
                self._thread.start()
            self._cv.notify()
            return self._serial

    def extend(self, delay: float) -> None:
        """Give the current step ``delay`` seconds from now before its notice."""
        with self._cv:
            if self._step is not None:
                serial, what, old, stream = self._step
                # A new tuple: the watching thread sees a new step and restarts its wait.
                self._step = (serial, what, max(delay, old), stream)
                self._cv.notify()

    def end(self, serial: int) -> None:
        with self._cv:
            if self._step is not None and self._step[0] == serial:
                self._step = None
                self._cv.notify()

    def _run(self) -> None:
        with self._cv:
            while True:
                step = self._step
                if step is None:
                    self._cv.wait()
                    continue
                _serial, what, delay, stream = step
                if self._cv.wait_for(lambda s=step: self._step is not s, timeout=delay):  # type: ignore[misc]
                    continue
                _notice(what, delay, stream)
                self._cv.wait_for(lambda s=step: self._step is not s)  # type: ignore[misc]


_WATCHDOG = _Watchdog()


@contextmanager
def watching(
    what: str, *, delay: float | None = None, stream: TextIO | None = None
) -> Iterator[None]:
    """Name ``what`` ("importing pack 'x' ...") on stderr if the block outlasts ``delay``."""
    delay = notice_delay() if delay is None else delay
    serial = _WATCHDOG.begin(what, delay, stream)
    try:
        yield
    finally:
        _WATCHDOG.end(serial)


def expect_slow(seconds: float) -> None:
    """Tell the slow-pack notice that the running hook may take ``seconds`` from now.

    For a hook whose normal work is slow and already bounded by its own timeout (a pack
    starting external servers): the notice, meant for a hook that hangs, then waits that
    long (a notice already due is not printed early). Does nothing outside a watched step.
    """
    _WATCHDOG.extend(seconds)


def within(
    fn: Callable[[], T],
    what: str,
    budget: float,
    *,
    delay: float | None = None,
    stream: TextIO | None = None,
) -> tuple[bool, T | None]:
    """Run ``fn`` in a daemon thread; ``(True, result)``, or ``(False, None)`` past ``budget``.

    ``fn``'s exception is re-raised here. A thread past its budget is left running (Python
    cannot stop it); it ends with the process.
    """
    delay = notice_delay() if delay is None else delay
    box: dict[str, object] = {}

    def target() -> None:
        try:
            box["value"] = fn()
        except BaseException as exc:  # noqa: BLE001 - handed to the waiting thread
            box["error"] = exc

    thread = threading.Thread(target=target, name="haversack-pack-import", daemon=True)
    thread.start()
    if delay < budget:
        thread.join(delay)
        if thread.is_alive():
            _notice(what, delay, stream)
    thread.join(max(budget - delay, 0.0) if delay < budget else budget)
    if thread.is_alive():
        return False, None
    if "error" in box:
        raise box["error"]  # type: ignore[misc]
    return True, box.get("value")  # type: ignore[return-value]
