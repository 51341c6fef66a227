"""The read-only calls of one model turn run together, the rest in order: in
ToolExecutor.aexecute_many, in Agent.arun and in the adapters' async run-all helpers."""

from __future__ import annotations

import asyncio
import json

import pytest

from haversack import (
    ApprovalPolicy,
    CallOutcome,
    PendingApproval,
    PolicyDecision,
    Session,
    ToolContext,
    ToolExecutor,
    ToolInvoked,
    ToolResult,
    tool,
)
from haversack.agent import Agent
from haversack.testing import FakeCall, FakeProvider, FakeReply

from ._kit import (
    MEET_TIMEOUT_S,
    PROVIDERS,
    READ_ONLY,
    RENDEZVOUS,
    Note,
    PathArgs,
    prompt,
    provider,
)


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


# ---------------------------------------------------------------------- the agent loop
class Relay:
    """Read-only calls that finish in reverse order, each after the next call of its turn:
    they can finish at all only if they run concurrently (one after the other, the first
    gives up after a bounded wait)."""

    def __init__(self) -> None:
        self.done: dict[int, asyncio.Event] = {}
        self.finished: list[int] = []

    def event(self, index: int) -> asyncio.Event:
        return self.done.setdefault(index, asyncio.Event())


RELAY = Relay()


@tool(annotations=READ_ONLY)
async def relay(params: PathArgs, *, context: ToolContext) -> ToolResult[None]:
    """Finish after the next call ('index/count')."""
    index, count = (int(part) for part in params.path.split("/"))
    if index + 1 < count:
        try:
            await asyncio.wait_for(RELAY.event(index + 1).wait(), MEET_TIMEOUT_S)
        except TimeoutError:
            return ToolResult.error(f"relay {index} waited in vain: the calls ran in turn.")
    RELAY.finished.append(index)
    RELAY.event(index).set()
    return ToolResult.ok(None, f"relay {index}")


@tool(annotations=READ_ONLY)
async def broken(params: PathArgs, *, context: ToolContext) -> ToolResult[None]:
    """Fail after the others started."""
    await asyncio.sleep(0)
    raise RuntimeError(f"cannot read {params.path}")


def _relay_prompt(policies=None):
    RELAY.done.clear()
    RELAY.finished.clear()
    return prompt(policies=policies, extra_tools=(relay, broken))


def _relays(count: int) -> list[FakeCall]:
    return [FakeCall("relay", {"path": f"{i}/{count}"}, call_id=f"c{i}") for i in range(count)]


@pytest.mark.parametrize("kind", PROVIDERS)
def test_read_only_calls_run_together_results_and_records_in_call_order(kind):
    events = []
    session = Session()
    script = [FakeReply(calls=_relays(3)), FakeReply("done")]
    with FakeProvider(script) as fake:
        agent = Agent(_relay_prompt(), provider(kind, fake), on_event=events.append)
        result = asyncio.run(agent.arun("go", session=session))
    assert RELAY.finished == [2, 1, 0]  # they finished last first
    # The model gets every result under its call id, in the order of its calls.
    sent = fake.requests[1].tool_results
    assert list(sent.items()) == [("c0", "relay 0"), ("c1", "relay 1"), ("c2", "relay 2")]
    # The session records them in call order, not in the order they finished.
    assert [e.call_id for e in session[ToolInvoked].all()] == ["c0", "c1", "c2"]
    assert [c.call_id for c in result.calls] == ["c0", "c1", "c2"]
    kinds = [(type(e).__name__, getattr(getattr(e, "call", None), "call_id", None)) for e in events]
    calls = [k for k in kinds if k[0] in ("ToolCallStarted", "ToolCallFinished")]
    assert calls == [
        ("ToolCallStarted", "c0"),
        ("ToolCallStarted", "c1"),
        ("ToolCallStarted", "c2"),
        ("ToolCallFinished", "c0"),
        ("ToolCallFinished", "c1"),
        ("ToolCallFinished", "c2"),
    ]


def test_a_turn_with_a_writing_call_runs_in_order():
    events = []
    session = Session()
    script = [
        FakeReply(
            calls=[
                FakeCall("read_note", {"path": "a"}, call_id="r1"),
                FakeCall("write_note", {"path": "a", "text": "hi"}, call_id="w"),
                FakeCall("read_note", {"path": "a"}, call_id="r2"),
                FakeCall("relay", {"path": "0/2"}, call_id="x0"),
                FakeCall("relay", {"path": "1/2"}, call_id="x1"),
            ]
        ),
        FakeReply("done"),
    ]
    with FakeProvider(script) as fake:
        agent = Agent(_relay_prompt(), provider("openai", fake), on_event=events.append)
        asyncio.run(agent.arun("go", session=session))
    sent = fake.requests[1].tool_results
    assert sent["r1"] == "No note 'a'."  # ran before the write
    assert sent["r2"] == "hi"  # ran after it
    # The two relays ran one after the other: the first waited in vain for the second.
    assert sent["x0"].startswith("relay 0 waited in vain")
    assert sent["x1"] == "relay 1"
    names = [type(e).__name__ for e in events if type(e).__name__.startswith("ToolCall")]
    assert names == ["ToolCallStarted", "ToolCallFinished"] * 5
    assert [e.call_id for e in session[ToolInvoked].all()] == ["r1", "w", "r2", "x0", "x1"]


def test_a_failing_read_only_call_leaves_the_others_alone():
    session = Session()
    session[Note].append(Note("a", "kept"))
    script = [
        FakeReply(
            calls=[
                FakeCall("relay", {"path": "0/2"}, call_id="c0"),
                FakeCall("broken", {"path": "x"}, call_id="b"),
                FakeCall("read_note", '{"path": ', call_id="bad"),
                FakeCall("relay", {"path": "1/2"}, call_id="c1"),
                FakeCall("read_note", {"path": "a"}, call_id="r"),
            ]
        ),
        FakeReply("done"),
    ]
    with FakeProvider(script) as fake:
        agent = Agent(_relay_prompt(), provider("anthropic", fake))
        result = asyncio.run(agent.arun("go", session=session))
    sent = fake.requests[1].tool_results
    assert sent["c0"] == "relay 0"  # ran together with c1, though b failed between them
    assert sent["c1"] == "relay 1"
    assert sent["b"] == "Tool 'broken' failed: RuntimeError: cannot read x"
    assert sent["bad"].startswith("Invalid arguments for 'read_note'")
    assert sent["r"] == "kept"
    outcomes = {c.call_id: c.outcome for c in result.calls}
    assert outcomes == {
        "c0": CallOutcome.OK,
        "b": CallOutcome.ERROR,
        "bad": CallOutcome.INVALID,
        "c1": CallOutcome.OK,
        "r": CallOutcome.OK,
    }
    # Deterministic: a call refused before running (here the malformed one) is recorded
    # when it is refused, then the calls that ran, in call order.
    assert [e.call_id for e in session[ToolInvoked].all()] == ["bad", "c0", "b", "c1", "r"]


def test_calls_of_sync_read_only_tools_alone_run_in_turn():
    """Sync handlers run to completion once started: nothing to overlap, so no tasks."""
    events = []
    script = [
        FakeReply(
            calls=[
                FakeCall("read_note", {"path": "a"}, call_id="r1"),
                FakeCall("read_note", {"path": "b"}, call_id="r2"),
                FakeCall("fetch", {"path": "p"}, call_id="f"),  # one async call is not two
            ]
        ),
        FakeReply("done"),
    ]
    with FakeProvider(script) as fake:
        agent = Agent(_relay_prompt(), provider("openai", fake), on_event=events.append)
        asyncio.run(agent.arun("go"))
    names = [type(e).__name__ for e in events if type(e).__name__.startswith("ToolCall")]
    assert names == ["ToolCallStarted", "ToolCallFinished"] * 3
    assert fake.requests[1].tool_results["f"] == "page p"


def test_run_keeps_every_turn_in_order():
    """The synchronous loop has no concurrency: read-only calls too run one at a time."""
    script = [FakeReply(calls=_relays(2)), FakeReply("done")]
    with FakeProvider(script) as fake:
        Agent(_relay_prompt(), provider("openai", fake)).run("go")
    assert fake.requests[1].tool_results["c0"].startswith("relay 0 waited in vain")


# ---------------------------------------------------------------------- the adapters
def _chat_response(calls: list[FakeCall]) -> dict:
    return {
        "tool_calls": [
            {
                "id": c.call_id,
                "type": "function",
                "function": {"name": c.name, "arguments": json.dumps(c.arguments)},
            }
            for c in calls
        ]
    }


def test_the_adapters_async_helpers_run_a_read_only_turn_together():
    from haversack.adapters import anthropic, openai

    relays = _relays(3)
    uses = {
        "content": [
            {"type": "tool_use", "id": c.call_id, "name": c.name, "input": c.arguments}
            for c in relays
        ]
    }
    items = [
        {
            "type": "function_call",
            "call_id": c.call_id,
            "name": c.name,
            "arguments": json.dumps(c.arguments),
        }
        for c in relays
    ]
    for helper, response, read in [
        (openai.arun_chat_tool_calls, _chat_response(relays), lambda m: m["content"]),
        (openai.arun_response_function_calls, items, lambda m: m["output"]),
        (anthropic.arun_tool_uses, uses, None),
    ]:
        session = Session()
        executor = ToolExecutor(_relay_prompt().render(), session=session)
        out = asyncio.run(helper(executor, response))
        texts = [b["content"] for b in out[0]["content"]] if read is None else map(read, out)
        assert list(texts) == ["relay 0", "relay 1", "relay 2"], helper.__name__
        assert RELAY.finished == [2, 1, 0], helper.__name__
        assert [e.call_id for e in session[ToolInvoked].all()] == ["c0", "c1", "c2"]


def test_the_adapters_async_helpers_keep_a_mixed_turn_in_order():
    from haversack.adapters import openai

    calls = [
        FakeCall("write_note", {"path": "a", "text": "hi"}, call_id="w"),
        FakeCall("read_note", {"path": "a"}, call_id="r"),
        *_relays(2),
    ]
    executor = ToolExecutor(_relay_prompt().render(), session=Session())
    out = asyncio.run(openai.arun_chat_tool_calls(executor, _chat_response(calls)))
    assert [m["tool_call_id"] for m in out] == ["w", "r", "c0", "c1"]
    assert out[1]["content"] == "hi"
    assert out[2]["content"].startswith("relay 0 waited in vain")
