"""Agent loop: its own cost per turn, beside the tool call and the provider round trip.

A turn of ``Agent.run`` is: ask the provider, record the ``ModelTurn`` (session dispatch,
events), append the reply to the conversation, run the tool calls through the executor and
append the results. To see the loop's share, the provider here is ``OpenAIChat`` with only
its network call replaced by a pre-built reply: the real conversation building (assistant
and tool messages in the Chat Completions format) stays in. Each run is ``TURNS`` turns, one
tool call per turn but the last. The loop overhead per turn is then

    (median run - (TURNS - 1) x median executor.execute of the same call) / TURNS

and is compared with the 1 ms target. The same is measured for turns of ``BATCH`` calls of
an async read-only tool, which ``arun`` runs concurrently (``ToolExecutor.aexecute_many``),
against ``BATCH`` awaited ``aexecute`` calls per turn. For scale, the same suite times one
Chat Completions round trip through the real ``openai`` client to
``haversack.testing.FakeProvider`` on localhost (the floor any real provider adds: no
model, no network beyond loopback), and a whole run through it.
"""

from __future__ import annotations

import asyncio
import statistics
import time
from dataclasses import dataclass
from typing import Any

from _harness import Result, Sample, measure, result

from haversack import (
    MarkdownSection,
    Prompt,
    Session,
    ToolAnnotations,
    ToolContext,
    ToolExecutor,
    ToolResult,
    tool,
)
from haversack.adapters import ToolCall
from haversack.agent import Agent, Conversation, OpenAIChat, Reply, Usage
from haversack.testing import FakeCall, FakeProvider, FakeReply

SUITE = "agent"
TURNS = 50
BATCH = 4
OVERHEAD_TARGET_S = 1e-3
ARGUMENTS = '{"path": "src/app.py", "limit": 10}'


@dataclass(frozen=True)
class ReadArgs:
    path: str
    limit: int = 10


@dataclass(frozen=True)
class ReadOut:
    path: str
    lines: int


@tool(annotations=ToolAnnotations(read_only=True))
def read_file(params: ReadArgs, *, context: ToolContext) -> ToolResult[ReadOut]:
    """Read a file."""
    return ToolResult.ok(ReadOut(params.path, params.limit))


@tool(annotations=ToolAnnotations(read_only=True))
async def aread_file(params: ReadArgs, *, context: ToolContext) -> ToolResult[ReadOut]:
    """Read a file (async)."""
    return ToolResult.ok(ReadOut(params.path, params.limit))


PROMPT = Prompt(
    ns="bench",
    key="agent",
    sections=[
        MarkdownSection(title="Files", key="files", template="Read.", tools=[read_file, aread_file])
    ],
)
RENDERED = PROMPT.render()


def _replies(per_turn: int = 1, name: str = "read_file") -> list[Reply]:
    usage = Usage(100, 20)
    calls = [
        Reply(
            "",
            tuple(ToolCall(f"call_{i}_{j}", name, ARGUMENTS) for j in range(per_turn)),
            usage,
            "tool_calls",
            False,
        )
        for i in range(TURNS - 1)
    ]
    return [*calls, Reply("Done.", (), usage, "stop", False)]


class _Replayed(OpenAIChat):
    """``OpenAIChat`` whose API call returns the next pre-built reply (no SDK, no socket)."""

    def __init__(self) -> None:
        super().__init__("bench-model", api_key="unused")
        self.replies: list[Reply] = []

    def complete(
        self, conversation: Conversation, tools: Any, on_text: Any, deadline: Any = None
    ) -> Reply:
        return self.replies.pop()

    async def acomplete(
        self, conversation: Conversation, tools: Any, on_text: Any, deadline: Any = None
    ) -> Reply:
        return self.replies.pop()


def _run_once(agent: Agent, provider: _Replayed) -> None:
    provider.replies = _replies()[::-1]
    result = agent.run("read it", session=Session())
    assert len(result.turns) == TURNS, result.stop_reason


def _arun_once(
    loop: asyncio.AbstractEventLoop, agent: Agent, provider: _Replayed, per_turn: int = 1
) -> None:
    provider.replies = _replies(per_turn, "aread_file" if per_turn > 1 else "read_file")[::-1]
    result = loop.run_until_complete(agent.arun("read it", session=Session()))
    assert len(result.turns) == TURNS, result.stop_reason
    assert len(result.calls) == (TURNS - 1) * per_turn


def _execute_per_call(calls: int) -> Sample:
    """Median seconds of one ``execute`` of the loop's call, batch by batch."""
    medians = []
    for _ in range(calls // 200):
        with ToolExecutor(RENDERED, session=Session()) as executor:
            times = []
            for _ in range(200):
                start = time.perf_counter_ns()
                executor.execute("read_file", ARGUMENTS, call_id="c")
                times.append(time.perf_counter_ns() - start)
        medians.append(statistics.median(times) / 1e9)
    return Sample(tuple(medians))


def _aexecute_per_call(loop: asyncio.AbstractEventLoop, calls: int) -> Sample:
    """Median seconds of one awaited ``aexecute`` of the async read-only tool."""

    async def batch() -> float:
        with ToolExecutor(RENDERED, session=Session()) as executor:
            times = []
            for _ in range(200):
                start = time.perf_counter_ns()
                await executor.aexecute("aread_file", ARGUMENTS, call_id="c")
                times.append(time.perf_counter_ns() - start)
        return statistics.median(times) / 1e9

    return Sample(tuple(loop.run_until_complete(batch()) for _ in range(calls // 200)))


def _per_turn(runs: Sample, execute: Sample, per_turn: int = 1) -> Sample:
    tool_time = (TURNS - 1) * per_turn * execute.median_s
    return Sample(tuple(max(0.0, (t - tool_time) / TURNS) for t in runs.times_s))


def _round_trips(repeats: int) -> tuple[Sample, Sample]:
    """One Chat Completions round trip through the real client, and a whole run, over HTTP."""
    conversation_script = [
        FakeReply(calls=[FakeCall("read_file", ARGUMENTS)]) for _ in range(TURNS - 1)
    ]
    with FakeProvider() as fake:
        provider = OpenAIChat("bench-model", base_url=fake.openai_base_url, api_key="k")
        tools = provider.tools(RENDERED)
        conversation = provider.start(RENDERED.text, "read it")
        fake.add(*[FakeReply("hi")] * (repeats + 2))
        trip = measure(
            lambda: provider.complete(conversation, tools, None), repeats=repeats, warmup=2
        )
        assert fake.remaining == 0
        provider.close()
        agent = Agent(RENDERED, provider, max_turns=TURNS)

        def whole_run() -> None:
            fake.add(*conversation_script, FakeReply("Done."))
            result = agent.run("read it", session=Session())
            assert len(result.turns) == TURNS, result.stop_reason

        runs = measure(whole_run, repeats=max(3, repeats // 10), warmup=1)
    return trip, Sample(tuple(t / TURNS for t in runs.times_s))


def run(quick: bool) -> list[Result]:
    """Harness entry point."""
    repeats = 10 if quick else 40
    provider = _Replayed()
    agent = Agent(RENDERED, provider, max_turns=TURNS)
    runs = measure(lambda: _run_once(agent, provider), repeats=repeats, warmup=2)
    loop = asyncio.new_event_loop()
    try:
        aruns = measure(lambda: _arun_once(loop, agent, provider), repeats=repeats, warmup=2)
        batches = measure(
            lambda: _arun_once(loop, agent, provider, BATCH), repeats=repeats, warmup=2
        )
        aexecute = _aexecute_per_call(loop, 2_000 if quick else 10_000)
    finally:
        loop.close()
    execute = _execute_per_call(2_000 if quick else 10_000)
    per_turn = _per_turn(runs, execute)
    per_turn_async = _per_turn(aruns, execute)
    per_batch = _per_turn(batches, aexecute, BATCH)
    trip, http_turn = _round_trips(50 if quick else 200)
    note = f"{TURNS}-turn runs; (run - {TURNS - 1} x execute) / {TURNS}"
    return [
        result(SUITE, "executor.execute of the turn's call", execute, notes="the tool call alone"),
        result(
            SUITE,
            "loop overhead per turn (run)",
            per_turn,
            max_median_s=OVERHEAD_TARGET_S,
            notes=note,
        ),
        result(
            SUITE,
            "loop overhead per turn (arun)",
            per_turn_async,
            max_median_s=OVERHEAD_TARGET_S,
            notes=note + "; one event loop for every run",
        ),
        result(
            SUITE,
            "executor.aexecute of an async read-only call",
            aexecute,
            notes="awaited on the runs' event loop",
        ),
        result(
            SUITE,
            f"loop overhead per turn of {BATCH} async read-only calls (arun, concurrent)",
            per_batch,
            max_median_s=OVERHEAD_TARGET_S,
            notes=f"{TURNS}-turn runs; (run - {TURNS - 1} x {BATCH} x aexecute) / {TURNS}; "
            "the calls run together (tasks, gather)",
        ),
        result(
            SUITE,
            "Chat Completions round trip to FakeProvider",
            trip,
            notes="real openai client, localhost HTTP, no model, a 1-message conversation",
        ),
        result(
            SUITE,
            "whole turn through FakeProvider (run)",
            http_turn,
            floor=("Chat Completions round trip to FakeProvider", trip),
            notes=f"{TURNS}-turn runs over HTTP, per turn; the client re-encodes the whole "
            "conversation (up to 100 messages) on every request",
        ),
    ]
