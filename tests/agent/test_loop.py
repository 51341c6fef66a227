"""The agent loop through the real openai and anthropic clients, against the fake provider."""

from __future__ import annotations

import asyncio
import json

import pytest

from haversack import (
    Approval,
    ApprovalPolicy,
    CallOutcome,
    PendingApproval,
    ProviderError,
    Session,
    ToolInvoked,
)
from haversack.agent import (
    Agent,
    ApprovalRequested,
    ModelTurn,
    StopReason,
    TextDelta,
    ToolCallFinished,
    ToolCallStarted,
    Usage,
)
from haversack.testing import FakeCall, FakeProvider, FakeReply

from ._kit import PROVIDERS, RENDEZVOUS, Note, prompt, provider

MODES = ("sync", "async")


def run(agent: Agent, task: str, mode: str, **kwargs):
    if mode == "sync":
        return agent.run(task, **kwargs)
    return asyncio.run(agent.arun(task, **kwargs))


@pytest.fixture(params=PROVIDERS)
def kind(request):
    return request.param


@pytest.fixture(params=MODES)
def mode(request):
    return request.param


def test_a_tool_call_round_trip(kind, mode):
    script = [
        FakeReply(
            "I will write.",
            calls=[FakeCall("write_note", {"path": "a", "text": "hi"})],
            input_tokens=100,
            output_tokens=20,
        ),
        FakeReply("Written.", input_tokens=130, output_tokens=7),
    ]
    session = Session()
    with FakeProvider(script) as fake:
        agent = Agent(prompt(), provider(kind, fake))
        result = run(agent, "Write a note.", mode, session=session)
    assert result.output == "Written."
    assert result.stop_reason is StopReason.COMPLETED
    assert result.usage == Usage(230, 27)
    assert len(result.turns) == 2
    assert session[Note].all() == (Note("a", "hi"),)
    # What the model was sent: the prompt's text and tools, then the tool's result.
    first, second = fake.requests
    assert "Keep notes." in first.system
    assert first.tool_names == ["read_note", "write_note", "fetch", "left", "right"]
    (call_id,) = second.tool_results
    assert second.tool_results[call_id] == "Wrote a."
    # Every model turn and every tool call is in the session.
    turns = session[ModelTurn].all()
    assert [t.text for t in turns] == ["I will write.", "Written."]
    assert turns[0].tool_calls[0].name == "write_note"
    assert [e.outcome for e in session[ToolInvoked].all()] == [CallOutcome.OK]
    assert result.calls == session[ToolInvoked].all()


def test_malformed_arguments_reach_the_model_as_an_error(kind, mode):
    bad = '{"path": "a", "text": ' if kind != "anthropic" else {"path": "a", "text": 3}
    script = [
        FakeReply(calls=[FakeCall("write_note", bad, call_id="c1")]),
        FakeReply("Sorry."),
    ]
    session = Session()
    with FakeProvider(script) as fake:
        result = run(Agent(prompt(), provider(kind, fake)), "go", mode, session=session)
    sent = fake.requests[1].tool_results["c1"]
    assert sent.startswith("Invalid arguments for 'write_note'")
    assert ("not valid JSON" in sent) if kind != "anthropic" else ("field 'text'" in sent)
    assert result.stop_reason is StopReason.COMPLETED
    assert session[Note].all() == ()
    assert session[ToolInvoked].all()[0].outcome is CallOutcome.INVALID


def test_parallel_calls_of_one_turn_answer_each_call_id(kind, mode):
    script = [
        FakeReply(
            calls=[
                FakeCall("write_note", {"path": "a", "text": "1"}, call_id="w1"),
                FakeCall("write_note", {"path": "b", "text": "2"}, call_id="w2"),
                FakeCall("read_note", {"path": "a"}, call_id="r1"),
                FakeCall("no_such_tool", {}, call_id="x1"),
            ]
        ),
        FakeReply("ok"),
    ]
    session = Session()
    with FakeProvider(script) as fake:
        run(Agent(prompt(), provider(kind, fake)), "go", mode, session=session)
    sent = fake.requests[1].tool_results
    assert list(sent) == ["w1", "w2", "r1", "x1"]  # in call order
    assert sent["w1"] == "Wrote a."
    assert sent["r1"] == "1"  # the read saw the earlier write of the same turn
    assert sent["x1"].startswith("Unknown tool 'no_such_tool'")
    assert session[Note].all() == (Note("a", "1"), Note("b", "2"))


def test_the_turn_cap_stops_a_model_that_never_stops(kind, mode):
    always = FakeReply(calls=[FakeCall("read_note", {"path": "zz"})])
    with FakeProvider([always] * 5) as fake:
        result = run(Agent(prompt(), provider(kind, fake), max_turns=3), "go", mode)
    assert result.stop_reason is StopReason.MAX_TURNS
    assert len(fake.requests) == 3
    assert len(result.turns) == 3
    assert len(result.calls) == 3
    assert fake.remaining == 2


def test_a_truncated_answer_stops_the_run(kind, mode):
    with FakeProvider([FakeReply("Half an ans", stop="length")]) as fake:
        result = run(Agent(prompt(), provider(kind, fake)), "go", mode)
    assert result.stop_reason is StopReason.TRUNCATED
    assert result.output == "Half an ans"


# ---------------------------------------------------------------------- approval
def _approval_script():
    return [
        FakeReply(calls=[FakeCall("write_note", {"path": "a", "text": "hi"}, call_id="c1")]),
        FakeReply("done"),
    ]


def test_approved_calls_run(kind, mode):
    asked: list[PendingApproval] = []

    def approve(pending):
        asked.append(pending)
        return pending.approve()

    session = Session()
    with FakeProvider(_approval_script()) as fake:
        agent = Agent(
            prompt(policies=[ApprovalPolicy(["write_*"])]), provider(kind, fake), approve=approve
        )
        run(agent, "go", mode, session=session)
    assert [p.call_id for p in asked] == ["c1"]
    assert asked[0].tool_name == "write_note"
    assert session[Note].all() == (Note("a", "hi"),)
    assert fake.requests[1].tool_results["c1"] == "Wrote a."
    outcomes = [e.outcome for e in session[ToolInvoked].all()]
    assert outcomes == [CallOutcome.PENDING, CallOutcome.OK]


def test_denied_calls_tell_the_model_why(kind, mode):
    session = Session()
    with FakeProvider(_approval_script()) as fake:
        agent = Agent(
            prompt(policies=[ApprovalPolicy(["write_*"])]),
            provider(kind, fake),
            approve=lambda p: p.deny("ask the owner first"),
        )
        run(agent, "go", mode, session=session)
    assert session[Note].all() == ()
    sent = fake.requests[1].tool_results["c1"]
    assert sent == "The call of 'write_note' was not approved: ask the owner first"


def test_edited_calls_run_with_the_humans_arguments(kind, mode):
    session = Session()
    with FakeProvider(_approval_script()) as fake:
        agent = Agent(
            prompt(policies=[ApprovalPolicy(["write_*"])]),
            provider(kind, fake),
            approve=lambda p: p.edit({"path": "a", "text": "HI!"}),
        )
        run(agent, "go", mode, session=session)
    assert session[Note].all() == (Note("a", "HI!"),)


def test_an_approval_for_other_arguments_is_void(kind, mode):
    other = Approval.approve(
        PendingApproval(
            "c1", "write_note", {"path": "a", "text": "harmless"}, "0" * 64, "approval", "x"
        ).arguments_hash
    )
    session = Session()
    with FakeProvider(_approval_script()) as fake:
        agent = Agent(
            prompt(policies=[ApprovalPolicy(["write_*"])]),
            provider(kind, fake),
            approve=lambda p: other,
        )
        run(agent, "go", mode, session=session)
    assert session[Note].all() == ()
    assert "approval was given for other arguments" in fake.requests[1].tool_results["c1"]


def test_without_an_approver_held_calls_are_refused(kind, mode):
    session = Session()
    with FakeProvider(_approval_script()) as fake:
        agent = Agent(prompt(policies=[ApprovalPolicy(not_read_only=True)]), provider(kind, fake))
        run(agent, "go", mode, session=session)
    assert session[Note].all() == ()
    assert "No one is available to approve this call" in fake.requests[1].tool_results["c1"]


def test_an_async_approver_is_awaited_in_arun(kind):
    async def approve(pending):
        await asyncio.sleep(0)
        return pending.approve()

    session = Session()
    with FakeProvider(_approval_script()) as fake:
        agent = Agent(
            prompt(policies=[ApprovalPolicy(["write_*"])]), provider(kind, fake), approve=approve
        )
        asyncio.run(agent.arun("go", session=session))
    assert session[Note].all() == (Note("a", "hi"),)


def test_an_async_approver_in_run_is_a_clear_error():
    async def approve(pending):
        return pending.approve()

    with FakeProvider(_approval_script()) as fake:
        agent = Agent(
            prompt(policies=[ApprovalPolicy(["write_*"])]),
            provider("openai", fake),
            approve=approve,
        )
        with pytest.raises(TypeError, match=r"Use `await agent\.arun"):
            agent.run("go")


# ---------------------------------------------------------------------- async tools
def test_async_tools_work_in_an_async_app(kind):
    script = [FakeReply(calls=[FakeCall("fetch", {"path": "p1"}, call_id="f1")]), FakeReply("ok")]

    async def app():
        with FakeProvider(script) as fake:
            await Agent(prompt(), provider(kind, fake)).arun("go")
        return fake.requests[1].tool_results["f1"]

    assert asyncio.run(app()) == "page p1"


def test_read_only_calls_of_one_turn_run_concurrently(kind):
    RENDEZVOUS.events.clear()
    script = [
        FakeReply(calls=[FakeCall("left", {}, call_id="l"), FakeCall("right", {}, call_id="r")]),
        FakeReply("ok"),
    ]
    with FakeProvider(script) as fake:
        asyncio.run(Agent(prompt(), provider(kind, fake)).arun("go"))
    # Each tool waits for the other: run one after the other, the first would give up.
    assert fake.requests[1].tool_results == {"l": "left met right", "r": "right met left"}


# ---------------------------------------------------------------------- events, streaming
@pytest.mark.parametrize("stream", [False, True], ids=["whole", "stream"])
def test_events_for_a_ui(kind, mode, stream):
    events = []
    text = "A longer answer, streamed in pieces."
    script = [
        FakeReply("Reading.", calls=[FakeCall("read_note", {"path": "a"}, call_id="c1")]),
        FakeReply(text),
    ]
    with FakeProvider(script) as fake:
        agent = Agent(prompt(), provider(kind, fake, stream=stream), on_event=events.append)
        result = run(agent, "go", mode)
    assert result.output == text
    assert fake.requests[0].body.get("stream", False) is stream
    kinds = [type(e).__name__ for e in events]
    # Text of turn 1, its record, the call, then turn 2's text and record.
    deltas = [e.text for e in events if isinstance(e, TextDelta)]
    assert "".join(deltas) == "Reading." + text
    if stream:
        assert len(deltas) > 2  # the text arrived in pieces
    first_turn = kinds.index("ModelTurn")
    assert kinds[first_turn + 1 : first_turn + 3] == ["ToolCallStarted", "ToolCallFinished"]
    assert kinds[-1] == "ModelTurn"
    finished = next(e for e in events if isinstance(e, ToolCallFinished))
    assert finished.call.call_id == "c1"
    assert finished.result.message == "No note 'a'."
    assert isinstance(next(e for e in events if isinstance(e, ToolCallStarted)).call.name, str)


def test_approval_events_come_before_the_result(kind):
    events = []
    with FakeProvider(_approval_script()) as fake:
        agent = Agent(
            prompt(policies=[ApprovalPolicy(["write_*"])]),
            provider(kind, fake),
            approve=lambda p: p.approve(),
            on_event=events.append,
        )
        agent.run("go")
    kinds = [type(e).__name__ for e in events]
    assert kinds.index("ApprovalRequested") < kinds.index("ToolCallFinished")
    requested = next(e for e in events if isinstance(e, ApprovalRequested))
    assert requested.pending.call_id == "c1"


# ---------------------------------------------------------------------- errors
def test_a_provider_failure_is_a_provider_error(kind):
    with FakeProvider([]) as fake, pytest.raises(ProviderError, match="script is exhausted"):
        Agent(prompt(), provider(kind, fake)).run("go")


@pytest.mark.parametrize(
    ("spec", "variable"),
    [
        ("openai:gpt-4o", "OPENAI_API_KEY"),
        ("openai-responses:gpt-4.1", "OPENAI_API_KEY"),
        ("anthropic:claude-sonnet-5", "ANTHROPIC_API_KEY"),
    ],
)
def test_a_missing_key_names_the_variable(monkeypatch, spec, variable):
    monkeypatch.delenv(variable, raising=False)
    agent = Agent(prompt(), spec)
    with pytest.raises(ProviderError, match=f"set the environment variable {variable}"):
        agent.run("go")


def test_a_bad_model_spec_says_how_to_write_it():
    with pytest.raises(ProviderError, match="openai:MODEL, openai-responses:MODEL"):
        Agent(prompt(), "gpt-4o")


def test_keys_come_from_the_environment(monkeypatch):
    monkeypatch.setenv("OPENAI_API_KEY", "sk-from-env")
    with FakeProvider([FakeReply("hi")]) as fake:
        Agent(prompt(), "openai:gpt-test", base_url=fake.openai_base_url).run("go")
    assert fake.requests[0].headers["authorization"] == "Bearer sk-from-env"
    assert fake.requests[0].body["model"] == "gpt-test"


def test_the_conversation_can_be_read_back():
    with FakeProvider(_approval_script()) as fake:
        result = Agent(prompt(), provider("openai", fake)).run("go")
    roles = [m["role"] for m in result.messages]
    assert roles == ["system", "user", "assistant", "tool", "assistant"]
    assert json.loads(result.messages[2]["tool_calls"][0]["function"]["arguments"]) == {
        "path": "a",
        "text": "hi",
    }


def test_a_held_call_is_answered_before_the_next_call_runs(kind, mode):
    script = [
        FakeReply(
            calls=[
                FakeCall("write_note", {"path": "a", "text": "approved"}, call_id="w"),
                FakeCall("read_note", {"path": "a"}, call_id="r"),
            ]
        ),
        FakeReply("done"),
    ]
    with FakeProvider(script) as fake:
        agent = Agent(
            prompt(policies=[ApprovalPolicy(["write_*"])]),
            provider(kind, fake),
            approve=lambda p: p.approve(),
        )
        run(agent, "go", mode)
    assert fake.requests[1].tool_results == {"w": "Wrote a.", "r": "approved"}


def test_a_call_id_repeated_in_one_turn_is_answered_twice(mode):
    session = Session()
    session[Note].append(Note("a", "x"))
    asked = []
    script = [
        FakeReply(
            calls=[
                FakeCall("read_note", {"path": "a"}, call_id="dup"),
                FakeCall("read_note", {"path": "zz"}, call_id="dup"),
            ]
        ),
        FakeReply("done"),
    ]
    with FakeProvider(script) as fake:
        agent = Agent(
            prompt(policies=[ApprovalPolicy(["read_*"])]),
            provider("openai", fake),
            approve=lambda p: asked.append(p.arguments) or p.approve(),
        )
        result = run(agent, "go", mode, session=session)
    assert asked == ['{"path": "a"}', '{"path": "zz"}']
    assert [c.rendered for c in result.calls] == ["x", "No note 'zz'."]


def test_the_deadline_is_checked_before_every_model_call(mode):
    from haversack import Deadline, DeadlineExceededError

    now = [0.0]
    deadline = Deadline.at(10.0, clock=lambda: now[0])

    def slow_model(request):  # the first turn "takes" 20 seconds
        now[0] = 20.0
        return FakeReply(calls=[FakeCall("read_note", {"path": "a"})])

    with FakeProvider([slow_model, FakeReply("never sent")]) as fake:
        agent = Agent(prompt(), provider("anthropic", fake))
        with pytest.raises(DeadlineExceededError):
            run(agent, "go", mode, deadline=deadline)
    assert len(fake.requests) == 1  # the tool call was refused and no second turn was asked


def test_run_inside_an_event_loop_with_async_tools_says_to_use_arun():
    from haversack import HaversackError

    async def app():
        with FakeProvider([]) as fake:
            Agent(prompt(), provider("openai", fake)).run("go")

    with pytest.raises(HaversackError, match=r"use `await agent\.arun"):
        asyncio.run(app())


class _PieceProvider:
    """A custom provider (no SDK): streams its answer in two pieces through on_text."""

    name = "pieces"
    model = "pieces-1"

    def tools(self, rendered):
        return [{"name": t.name} for t in rendered.tools]

    def start(self, system, task):
        from haversack.agent import Conversation

        return Conversation(system, [task])

    def complete(self, conversation, tools, on_text, deadline=None):
        from haversack.agent import Reply

        for piece in ("Hel", "lo"):
            if on_text is not None:
                on_text(piece)
        return Reply("Hello", (), Usage(1, 2), "stop", False)

    async def acomplete(self, conversation, tools, on_text, deadline=None):
        return self.complete(conversation, tools, on_text)

    def add_reply(self, conversation, reply):
        conversation.messages.append(reply.text)

    def add_results(self, conversation, results):
        raise AssertionError("no tool was called")

    def close(self):
        pass

    async def aclose(self):
        pass


def test_a_custom_provider_that_streams_is_not_echoed_twice(mode):
    from haversack.agent import Provider

    provider_ = _PieceProvider()
    assert isinstance(provider_, Provider)
    events = []
    result = run(Agent(prompt(), provider_, on_event=events.append), "hi", mode)
    assert [e.text for e in events if isinstance(e, TextDelta)] == ["Hel", "lo"]
    assert result.messages == ["hi", "Hello"]
    assert result.usage == Usage(1, 2)


def test_calls_past_the_per_turn_cap_are_answered_not_run(kind, mode):
    flood = [FakeCall("read_note", {"path": f"n{i}"}, call_id=f"c{i}") for i in range(7)]
    session = Session()
    with FakeProvider([FakeReply(calls=flood), FakeReply("ok")]) as fake:
        agent = Agent(prompt(), provider(kind, fake), max_calls_per_turn=3)
        result = run(agent, "go", mode, session=session)
    sent = fake.requests[1].tool_results
    assert list(sent) == [f"c{i}" for i in range(7)]  # every call is answered, in order
    assert [sent[f"c{i}"] for i in range(3)] == ["No note 'n0'.", "No note 'n1'.", "No note 'n2'."]
    assert sent["c3"] == (
        "Not run: this response made 7 tool calls and at most 3 are run per turn; "
        "make fewer calls at a time."
    )
    assert len(session[ToolInvoked].all()) == 3  # the rest never reached the executor
    assert result.stop_reason is StopReason.COMPLETED


def test_a_local_server_needs_no_key(monkeypatch):
    monkeypatch.delenv("OPENAI_API_KEY", raising=False)
    with FakeProvider([FakeReply("hi")]) as fake:
        result = Agent(prompt(), "openai:llama3", base_url=fake.openai_base_url).run("go")
    assert result.output == "hi"
    assert fake.requests[0].headers["authorization"] == "Bearer unused"
