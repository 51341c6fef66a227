"""Deadline: monotonic budget, remaining time, expiry and the error it raises."""

from __future__ import annotations

import math
import time

import pytest

from haversack import Deadline
from haversack.errors import DeadlineExceededError, PromptEvaluationError


class FakeClock:
    def __init__(self, now: float = 100.0) -> None:
        self.now = now

    def __call__(self) -> float:
        return self.now


def test_after_counts_down_on_the_given_clock():
    clock = FakeClock()
    deadline = Deadline.after(5, clock=clock)
    assert deadline.expires_at == 105.0
    assert deadline.remaining() == 5.0
    clock.now = 103.5
    assert deadline.remaining() == 1.5
    assert not deadline.expired
    deadline.check("the planning call")


def test_expired_at_and_past_the_instant_and_remaining_never_negative():
    clock = FakeClock()
    deadline = Deadline.after(2, clock=clock)
    clock.now = 102.0
    assert deadline.expired
    assert deadline.remaining() == 0.0
    clock.now = 110.0
    assert deadline.remaining() == 0.0


def test_check_names_what_ran_out_and_the_budget():
    clock = FakeClock()
    deadline = Deadline.after(2, clock=clock)
    clock.now = 102.25
    with pytest.raises(DeadlineExceededError) as info:
        deadline.check("tool 'grep'")
    assert str(info.value) == (
        "Deadline exceeded: tool 'grep' ran out of time (the deadline of 2s passed 0.250s ago)."
    )
    assert isinstance(info.value, PromptEvaluationError)


def test_check_default_subject_and_at_without_budget():
    clock = FakeClock(50.0)
    deadline = Deadline.at(40.0, clock=clock)
    with pytest.raises(
        DeadlineExceededError,
        match=r"^Deadline exceeded: the evaluation ran "
        r"out of time \(the deadline passed 10\.000s ago\)\.$",
    ):
        deadline.check()


def test_default_clock_is_monotonic():
    before = time.monotonic()
    deadline = Deadline.after(60)
    assert before + 60 <= deadline.expires_at <= time.monotonic() + 60
    assert 0 < deadline.remaining() <= 60
    assert Deadline.at(time.monotonic() - 1).expired
    assert Deadline.after(0).expired


@pytest.mark.parametrize("seconds", [-1, math.nan])
def test_after_rejects_negative_and_nan(seconds):
    with pytest.raises(ValueError, match="non-negative number of seconds"):
        Deadline.after(seconds)


def test_at_rejects_nan_and_deadline_is_immutable():
    with pytest.raises(ValueError, match="NaN"):
        Deadline.at(math.nan)
    deadline = Deadline.at(1.0)
    with pytest.raises(AttributeError):
        deadline.expires_at = 2.0  # type: ignore[misc]
