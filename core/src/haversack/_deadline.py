"""``Deadline``: a point on the monotonic clock by which an evaluation must finish."""

from __future__ import annotations

import math
import time
from collections.abc import Callable
from dataclasses import dataclass, field

from .errors import DeadlineExceededError

__all__ = ["Deadline"]


@dataclass(frozen=True, slots=True)
class Deadline:
    """An instant on ``clock`` (``time.monotonic`` by default) after which work must stop.

    Build one with :meth:`after` or :meth:`at`. The monotonic clock is used because wall-clock
    time can jump (NTP, DST) and a deadline must never move.
    """

    expires_at: float
    budget: float | None = None
    """The seconds given to :meth:`after`, kept only to make messages informative."""
    clock: Callable[[], float] = field(default=time.monotonic, compare=False, repr=False)

    def __post_init__(self) -> None:
        if math.isnan(self.expires_at):
            raise ValueError("A deadline cannot expire at NaN.")

    @classmethod
    def after(cls, seconds: float, *, clock: Callable[[], float] = time.monotonic) -> Deadline:
        """A deadline ``seconds`` from now; ``0`` gives one that has already expired."""
        if math.isnan(seconds) or seconds < 0:
            raise ValueError(
                f"Deadline.after needs a non-negative number of seconds, got {seconds}."
            )
        return cls(clock() + seconds, float(seconds), clock)

    @classmethod
    def at(cls, monotonic_time: float, *, clock: Callable[[], float] = time.monotonic) -> Deadline:
        """A deadline at ``monotonic_time``, a reading of ``clock`` (not a wall-clock time)."""
        return cls(float(monotonic_time), None, clock)

    def remaining(self) -> float:
        """Seconds left, never negative: ``0.0`` once expired."""
        return max(0.0, self.expires_at - self.clock())

    @property
    def expired(self) -> bool:
        """Whether the deadline has passed (reaching it exactly counts as passed)."""
        return self.clock() >= self.expires_at

    def check(self, what: str = "the evaluation") -> None:
        """Raise :class:`DeadlineExceededError` naming ``what`` if the deadline has passed."""
        now = self.clock()
        if now < self.expires_at:
            return
        overrun = now - self.expires_at
        budget = f" of {self.budget:g}s" if self.budget is not None else ""
        raise DeadlineExceededError(
            f"Deadline exceeded: {what} ran out of time (the deadline{budget} passed "
            f"{overrun:.3f}s ago)."
        )
