"""ToolExecutor.aexecute_many: the read-only calls of one turn run together, the rest in order."""

from __future__ import annotations

import asyncio

from haversack import (
    ApprovalPolicy,
    CallOutcome,
    PendingApproval,
    PolicyDecision,
    Session,
    ToolExecutor,
    ToolInvoked,
)

from ._kit import RENDEZVOUS, Note, prompt


class Recorder:
    """Records every successful call in the session; fails to record 'fail-me'."""

    name = "recorder"

    def check(self, tool, params, *, context):
        return PolicyDecision.allow()

    def on_result(self, tool, params, result, *, context):
        path = getattr(params, "path", None)
        if path == "fail-me":
            raise RuntimeError("cannot record")
        context.session[Note].append(Note(f"seen:{tool.name}", str(path)))


def _run(executor, calls):
    return asyncio.run(executor.aexecute_many(calls))


def test_read_only_handlers_run_together_and_results_keep_call_order():
    RENDEZVOUS.events.clear()
    session = Session()
    executor = ToolExecutor(prompt().render(), session=session)
    results = _run(executor, [("right", None, "r"), ("left", "{}", "l")])
    assert [r.message for r in results] == ["right met left", "left met right"]
    events = session[ToolInvoked].all()
    assert [e.call_id for e in events] == ["r", "l"]
    assert all(e.outcome is CallOutcome.OK for e in events)


def test_a_mixed_turn_runs_in_order_as_separate_transactions():
    session = Session()
    executor = ToolExecutor(prompt().render(), session=session)
    results = _run(
        executor,
        [
            ("write_note", {"path": "a", "text": "1"}, "w1"),
            ("read_note", {"path": "a"}, "r1"),
            ("write_note", {"path": "b", "text": "boom"}, "w2"),
            ("read_note", {"path": "b"}, "r2"),
        ],
    )
    assert [r.success for r in results] == [True, True, False, False]
    assert results[1].message == "1"  # saw the committed write before it
    assert results[3].message == "No note 'b'."  # the failed write was rolled back
    assert session[Note].all() == (Note("a", "1"),)


def test_failures_in_a_concurrent_batch_stay_with_their_call():
    session = Session()
    session[Note].extend([Note("a", "x"), Note("fail-me", "y")])
    executor = ToolExecutor(prompt(policies=[Recorder()]).render(), session=session)
    results = _run(
        executor,
        [
            ("read_note", {"path": "a"}, "1"),
            ("read_note", '{"path": ', "2"),
            ("read_note", {"path": "fail-me"}, "3"),
            ("fetch", {"path": "p"}, "4"),
        ],
    )
    assert results[0].message == "x"
    assert results[1].message.startswith("Invalid arguments for 'read_note'")
    assert results[2].message.startswith("Policy 'recorder' failed to record the call")
    assert results[3].message == "page p"
    # What the recorder kept: the two successful calls, not the one it failed on.
    assert session[Note].all() == (
        Note("a", "x"),
        Note("fail-me", "y"),
        Note("seen:read_note", "a"),
        Note("seen:fetch", "p"),
    )
    outcomes = [e.outcome for e in session[ToolInvoked].all()]
    assert outcomes == [CallOutcome.INVALID, CallOutcome.OK, CallOutcome.ERROR, CallOutcome.OK]


def test_a_held_call_in_a_concurrent_batch_waits_alone():
    session = Session()
    session[Note].append(Note("a", "x"))
    executor = ToolExecutor(prompt(policies=[ApprovalPolicy(["fetch"])]).render(), session=session)
    results = _run(executor, [("read_note", {"path": "a"}, "1"), ("fetch", {"path": "p"}, "2")])
    assert results[0].message == "x"
    assert isinstance(results[1].value, PendingApproval)
    resumed = asyncio.run(executor.aresume("2", results[1].value.approve()))
    assert resumed.message == "page p"
