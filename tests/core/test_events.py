"""ToolInvoked and CallOutcome: what every call publishes, and how it can be consumed."""

from __future__ import annotations

import dataclasses
from dataclasses import dataclass

import pytest

from haversack import (
    CallOutcome,
    MarkdownSection,
    Prompt,
    Session,
    SlicePolicy,
    Tool,
    ToolContext,
    ToolExecutor,
    ToolInvoked,
    ToolResult,
)


@dataclass(frozen=True)
class Args:
    n: int


def _handler(params: Args, *, context: ToolContext) -> ToolResult[None]:
    if params.n < 0:
        return ToolResult.error("negative")
    return ToolResult.ok(None, f"n={params.n}")


def _executor(session: Session) -> ToolExecutor:
    prompt = Prompt(
        ns="ev",
        key="events",
        sections=[
            MarkdownSection(
                title="T",
                key="t",
                template="t",
                tools=[Tool[Args, None](name="num", description="n", handler=_handler)],
            )
        ],
    )
    return ToolExecutor(prompt.render(), session=session)


def test_outcomes_have_stable_string_values() -> None:
    assert [o.value for o in CallOutcome] == [
        "ok",
        "failed",
        "denied",
        "invalid",
        "error",
        "aborted",
        "pending",
    ]
    assert str(CallOutcome.OK) == "ok"


def test_tool_invoked_is_frozen_and_reports_success() -> None:
    event = ToolInvoked(
        prompt_ns="a",
        prompt_key="b",
        tool_name="t",
        params=None,
        arguments="{",
        result=ToolResult.error("bad"),
        rendered="bad",
        outcome=CallOutcome.INVALID,
        call_id=None,
        duration_s=0.0,
    )
    assert event.success is False
    with pytest.raises(dataclasses.FrozenInstanceError):
        event.tool_name = "other"  # type: ignore[misc]


def test_events_go_to_a_log_slice_and_to_subscribers() -> None:
    session = Session()
    seen: list[ToolInvoked] = []
    session.subscribe(ToolInvoked, seen.append)
    executor = _executor(session)
    assert session[ToolInvoked].policy is SlicePolicy.LOG
    executor.execute("num", {"n": 1}, call_id="a")
    executor.execute("num", {"n": -1}, call_id="b")
    executor.execute("num", '{"n": "x"}', call_id="c")
    assert [e.call_id for e in seen] == ["a", "b", "c"]
    assert session[ToolInvoked].all() == tuple(seen)
    assert [e.outcome for e in seen] == [CallOutcome.OK, CallOutcome.FAILED, CallOutcome.INVALID]
    assert [e.rendered for e in seen][:2] == ["n=1", "negative"]
    assert seen[2].params is None
    assert seen[2].arguments == '{"n": "x"}'


def test_two_executors_on_one_session_register_the_log_once() -> None:
    session = Session()
    _executor(session).execute("num", {"n": 1})
    _executor(session).execute("num", {"n": 2})
    assert [e.rendered for e in session[ToolInvoked].all()] == ["n=1", "n=2"]


def test_events_survive_rollback_of_later_calls() -> None:
    session = Session()
    executor = _executor(session)
    snapshot = session.snapshot()
    executor.execute("num", {"n": 1})
    session.restore(snapshot)
    assert len(session[ToolInvoked].all()) == 1
