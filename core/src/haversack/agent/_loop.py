"""``Agent``: run a rendered prompt against a model until it stops calling tools."""

from __future__ import annotations

import inspect
import time
from collections.abc import Awaitable, Callable
from typing import TYPE_CHECKING, Any

from haversack._approval import PendingApproval
from haversack._events import CallOutcome, ToolInvoked
from haversack._executor import ToolExecutor
from haversack._prompt import Prompt
from haversack._result import ToolResult
from haversack._session import Session
from haversack.adapters._common import NO_APPROVER as _NO_APPROVER
from haversack.adapters._common import pending_of as _pending_of
from haversack.adapters._common import run_together
from haversack.errors import HaversackError

from ._provider import Conversation, Provider, Reply
from ._records import (
    AgentEvent,
    ApprovalRequested,
    ModelTurn,
    RunResult,
    StopReason,
    TextDelta,
    ToolCallFinished,
    ToolCallStarted,
    Usage,
)

if TYPE_CHECKING:
    from haversack._approval import Approval
    from haversack._bindings import ResourceRegistry
    from haversack._deadline import Deadline
    from haversack._prompt import RenderedPrompt
    from haversack._resources import Resources
    from haversack.adapters import ToolCall

__all__ = ["Agent", "ApproveCallback", "EventCallback"]

#: Asked about each call a policy holds; returns the human's answer (or awaits it, in arun).
ApproveCallback = Callable[["PendingApproval"], "Approval | Awaitable[Approval]"]
#: Receives every :data:`AgentEvent` of a run, in order.
EventCallback = Callable[[AgentEvent], None]


class Agent:
    """Runs a prompt's tools for a model until the model answers without calling one.

    Each turn asks the provider for the next model response (recorded in the session as a
    :class:`ModelTurn`), runs its tool calls through a :class:`~haversack.ToolExecutor`
    (each recorded as a ``ToolInvoked``) and sends the results back. ``max_turns`` caps the
    model responses of one run and ``max_calls_per_turn`` the calls run per response (the
    rest are answered "not run" with the reason). ``approve`` answers the calls a policy
    holds for a human (without it they are refused, and the model is told so);
    ``on_event`` sees text as it arrives and every tool call, for a UI.

    In :meth:`arun`, tool calls of one turn that are all of ``read_only`` tools run
    concurrently; everything else runs in call order, one transaction at a time.
    """

    def __init__(
        self,
        prompt: Prompt | RenderedPrompt,
        model: Provider | str,
        *,
        max_turns: int = 20,
        max_calls_per_turn: int = 64,
        approve: ApproveCallback | None = None,
        on_event: EventCallback | None = None,
        **provider_options: Any,
    ) -> None:
        if max_turns < 1:
            raise ValueError(f"max_turns must be at least 1, got {max_turns}.")
        if max_calls_per_turn < 1:
            raise ValueError(f"max_calls_per_turn must be at least 1, got {max_calls_per_turn}.")
        self.rendered: RenderedPrompt = prompt.render() if isinstance(prompt, Prompt) else prompt
        if isinstance(model, str):
            from ._spec import model as from_spec

            model = from_spec(model, **provider_options)
        elif provider_options:
            raise TypeError(
                f"Provider options ({', '.join(provider_options)}) only apply to a model "
                "given as 'provider:name'; pass them to the provider object instead."
            )
        self.provider: Provider = model
        self.max_turns = max_turns
        self.max_calls_per_turn = max_calls_per_turn
        self.approve = approve
        self.on_event = on_event

    # ------------------------------------------------------------------ sync
    def run(
        self,
        task: str,
        *,
        session: Session | None = None,
        resources: Resources | ResourceRegistry | None = None,
        deadline: Deadline | None = None,
    ) -> RunResult:
        """Run ``task`` to the end (blocking); see the class docstring.

        ``deadline`` bounds the whole run: it is checked before every model call and by the
        executor before every tool call, and raises ``DeadlineExceededError`` once passed.
        Inside a running event loop (an async app), use :meth:`arun`.
        """
        if _loop_running() and any(tool.is_async for tool in self.rendered.tools):
            raise HaversackError(
                "Agent.run() was called inside a running event loop and the prompt has async "
                "tools, which cannot run there; use `await agent.arun(...)`."
            )
        run = _Run(self, session, task, deadline)
        try:
            with ToolExecutor(
                self.rendered, session=run.session, resources=resources, deadline=deadline
            ) as executor:
                while run.next_turn():
                    started = time.perf_counter()
                    reply = self.provider.complete(
                        run.conversation, run.tools, run.on_text, deadline=deadline
                    )
                    if run.record(reply, started):
                        break
                    calls, extra = self._split(reply.calls)
                    results = [self._call(executor, call) for call in calls]
                    results += self._refuse(extra, len(reply.calls))
                    self.provider.add_results(run.conversation, results)
        finally:
            self.provider.close()
        return run.result()

    def _call(self, executor: ToolExecutor, call: ToolCall) -> tuple[ToolCall, ToolResult[Any]]:
        self._emit(ToolCallStarted(call))
        result = executor.execute(call.name, call.arguments, call_id=call.call_id)
        pending = _pending_of(result)
        while pending is not None:
            self._emit(ApprovalRequested(pending))
            if self.approve is None:
                result = executor.resume(pending.call_id, pending.deny(_NO_APPROVER))
            else:
                answer = self.approve(pending)
                if inspect.isawaitable(answer):
                    _close(answer)
                    raise TypeError(
                        "The approve callback returned an awaitable; Agent.run() needs a "
                        "plain function. Use `await agent.arun(...)` for an async callback."
                    )
                result = executor.resume(pending.call_id, answer)
            pending = _pending_of(result)
        self._emit(ToolCallFinished(call, result))
        return call, result

    # ------------------------------------------------------------------ async
    async def arun(
        self,
        task: str,
        *,
        session: Session | None = None,
        resources: Resources | ResourceRegistry | None = None,
        deadline: Deadline | None = None,
    ) -> RunResult:
        """:meth:`run` for asynchronous apps: async tools and async callbacks are awaited."""
        run = _Run(self, session, task, deadline)
        try:
            with ToolExecutor(
                self.rendered, session=run.session, resources=resources, deadline=deadline
            ) as executor:
                while run.next_turn():
                    started = time.perf_counter()
                    reply = await self.provider.acomplete(
                        run.conversation, run.tools, run.on_text, deadline=deadline
                    )
                    if run.record(reply, started):
                        break
                    calls, extra = self._split(reply.calls)
                    results = await self._acalls(executor, calls)
                    results += self._refuse(extra, len(reply.calls))
                    self.provider.add_results(run.conversation, results)
        finally:
            await self.provider.aclose()
        return run.result()

    async def _acalls(
        self, executor: ToolExecutor, calls: tuple[ToolCall, ...]
    ) -> list[tuple[ToolCall, ToolResult[Any]]]:
        if not run_together(self.rendered, calls):
            # In order, each held call answered before the next runs: a later call sees
            # exactly what an approved earlier one did.
            return [await self._acall(executor, call) for call in calls]
        for call in calls:
            self._emit(ToolCallStarted(call))
        batch = [(call.name, call.arguments, call.call_id) for call in calls]
        first = await executor.aexecute_many(batch)
        return [
            await self._aresolve(executor, call, result)
            for call, result in zip(calls, first, strict=True)
        ]

    async def _acall(
        self, executor: ToolExecutor, call: ToolCall
    ) -> tuple[ToolCall, ToolResult[Any]]:
        self._emit(ToolCallStarted(call))
        result = await executor.aexecute(call.name, call.arguments, call_id=call.call_id)
        return await self._aresolve(executor, call, result)

    async def _aresolve(
        self, executor: ToolExecutor, call: ToolCall, result: ToolResult[Any]
    ) -> tuple[ToolCall, ToolResult[Any]]:
        pending = _pending_of(result)
        while pending is not None:
            self._emit(ApprovalRequested(pending))
            if self.approve is None:
                answer: Approval = pending.deny(_NO_APPROVER)
            else:
                given = self.approve(pending)
                answer = await given if inspect.isawaitable(given) else given
            result = await executor.aresume(pending.call_id, answer)
            pending = _pending_of(result)
        self._emit(ToolCallFinished(call, result))
        return call, result

    def _split(
        self, calls: tuple[ToolCall, ...]
    ) -> tuple[tuple[ToolCall, ...], tuple[ToolCall, ...]]:
        cap = self.max_calls_per_turn
        return calls[:cap], calls[cap:]

    def _refuse(
        self, extra: tuple[ToolCall, ...], made: int
    ) -> list[tuple[ToolCall, ToolResult[Any]]]:
        """Answer the calls past the per-turn cap without running them (a model that sends
        thousands of calls in one response gets bounded work, and is told why)."""
        out: list[tuple[ToolCall, ToolResult[Any]]] = []
        for call in extra:
            result: ToolResult[Any] = ToolResult.error(
                f"Not run: this response made {made} tool calls and at most "
                f"{self.max_calls_per_turn} are run per turn; make fewer calls at a time."
            )
            self._emit(ToolCallFinished(call, result))
            out.append((call, result))
        return out

    def _emit(self, event: AgentEvent) -> None:
        if self.on_event is not None:
            self.on_event(event)


class _Run:
    """The state of one run: conversation, turn count, usage and the records so far."""

    __slots__ = (
        "agent",
        "conversation",
        "deadline",
        "first_call",
        "on_text",
        "session",
        "stop",
        "streamed",
        "tools",
        "turns",
        "usage",
    )

    def __init__(
        self, agent: Agent, session: Session | None, task: str, deadline: Deadline | None
    ) -> None:
        self.agent = agent
        self.deadline = deadline
        self.session = session if session is not None else Session()
        self.session.register_log(ModelTurn)
        self.session.register_log(ToolInvoked)
        self.first_call = len(self.session[ToolInvoked].all())
        provider = agent.provider
        self.tools = provider.tools(agent.rendered)
        self.conversation: Conversation = provider.start(agent.rendered.text, task)
        self.turns: list[ModelTurn] = []
        self.usage = Usage()
        self.stop = StopReason.MAX_TURNS
        emit = agent.on_event
        self.streamed = False  # did the provider stream this turn's text through on_text?
        self.on_text = None if emit is None else self._text

    def _text(self, text: str) -> None:
        self.streamed = True
        self.agent._emit(TextDelta(text))

    def next_turn(self) -> bool:
        if len(self.turns) >= self.agent.max_turns:
            return False
        if self.deadline is not None:
            self.deadline.check(f"model turn {len(self.turns) + 1}")
        return True

    def record(self, reply: Reply, started: float) -> bool:
        """Record the reply; True when the run is over."""
        agent = self.agent
        provider = agent.provider
        if reply.text and not self.streamed and self.on_text is not None:
            self.on_text(reply.text)  # not streamed: the UI gets the turn's text whole
        self.streamed = False
        turn = ModelTurn(
            provider=provider.name,
            model=provider.model,
            index=len(self.turns),
            text=reply.text,
            tool_calls=reply.calls,
            usage=reply.usage,
            stop=reply.stop,
            duration_s=time.perf_counter() - started,
        )
        self.turns.append(turn)
        self.usage = self.usage + reply.usage
        self.session.dispatch(turn)
        agent._emit(turn)
        provider.add_reply(self.conversation, reply)
        if reply.calls:
            return False
        self.stop = StopReason.TRUNCATED if reply.truncated else StopReason.COMPLETED
        return True

    def result(self) -> RunResult:
        calls = self.session[ToolInvoked].all()[self.first_call :]
        return RunResult(
            output=self.turns[-1].text if self.turns else "",
            stop_reason=self.stop,
            usage=self.usage,
            turns=tuple(self.turns),
            calls=tuple(c for c in calls if c.outcome is not CallOutcome.PENDING),
            messages=self.conversation.messages,
        )


def _loop_running() -> bool:
    import asyncio

    try:
        asyncio.get_running_loop()
    except RuntimeError:
        return False
    return True


def _close(awaitable: object) -> None:
    close = getattr(awaitable, "close", None)
    if callable(close):
        close()
