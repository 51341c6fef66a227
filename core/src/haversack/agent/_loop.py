"""``Agent``: run a rendered prompt against a model until it stops calling tools."""

from __future__ import annotations

import inspect
import os
import time
from collections.abc import Awaitable, Callable, Sequence
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
from haversack.errors import CheckpointError, HaversackError

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
    from haversack._interaction import Interaction
    from haversack._prompt import RenderedPrompt
    from haversack._resources import Resources
    from haversack.adapters import ToolCall

    from ._checkpoint import Checkpoint

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
    ``on_event`` sees text as it arrives and every tool call, for a UI. ``interaction``
    carries the tools' questions to the user and their progress reports
    (:meth:`ToolContext.ask`; without it, a tool that asks is told nobody can answer).

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
        interaction: Interaction | None = None,
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
        self.interaction = interaction

    # ------------------------------------------------------------------ sync
    def run(
        self,
        task: str,
        *,
        session: Session | None = None,
        resources: Resources | ResourceRegistry | None = None,
        deadline: Deadline | None = None,
        checkpoint: str | os.PathLike[str] | None = None,
        resume: Checkpoint | None = None,
        checkpoint_extra: Callable[[], dict[str, Any]] | None = None,
    ) -> RunResult:
        """Run ``task`` to the end (blocking); see the class docstring.

        ``deadline`` bounds the whole run: it is checked before every model call and by the
        executor before every tool call, and raises ``DeadlineExceededError`` once passed.
        Inside a running event loop (an async app), use :meth:`arun`.

        With ``checkpoint`` (a directory), a :class:`Checkpoint` is written there after every
        turn (``checkpoint_extra()`` is stored in its ``extra``); ``resume`` continues the
        run a :func:`load_checkpoint` read (``task`` is then ignored: the checkpoint's is
        used) in a fresh session, after checking the prompt, provider and workspace match.
        """
        if _loop_running() and any(tool.is_async for tool in self.rendered.tools):
            raise HaversackError(
                "Agent.run() was called inside a running event loop and the prompt has async "
                "tools, which cannot run there; use `await agent.arun(...)`."
            )
        run = _Run(self, session, task, deadline, checkpoint, resume, checkpoint_extra)
        try:
            with ToolExecutor(
                self.rendered,
                session=run.session,
                resources=resources,
                deadline=deadline,
                interaction=self.interaction,
            ) as executor:
                run.attach(executor)
                if run.open_turn:
                    self._answer(executor, run, run.turns[-1].tool_calls, run.answered)
                    run.follow(executor)
                while run.next_turn():
                    started = time.perf_counter()
                    reply = self.provider.complete(
                        run.conversation, run.tools, run.on_text, deadline=deadline
                    )
                    if run.record(reply, started):
                        break
                    self._answer(executor, run, reply.calls)
                    run.follow(executor)
                run.save(final=True)
        finally:
            self.provider.close()
        return run.result()

    def _answer(
        self,
        executor: ToolExecutor,
        run: _Run,
        made: tuple[ToolCall, ...],
        answered: Sequence[tuple[ToolCall, ToolResult[Any]]] = (),
    ) -> None:
        """Run the turn's calls after the ``answered`` ones and send all the results back."""
        calls, extra = self._split(made)
        results = list(answered)
        for call in calls[len(answered) :]:
            results.append(self._call(executor, call, run.holding(results)))
        results += self._refuse(extra, len(made))
        self.provider.add_results(run.conversation, results)
        run.save()

    def _call(
        self, executor: ToolExecutor, call: ToolCall, holding: Callable[[], None]
    ) -> tuple[ToolCall, ToolResult[Any]]:
        self._emit(ToolCallStarted(call))
        result = executor.execute(call.name, call.arguments, call_id=call.call_id)
        pending = _pending_of(result)
        while pending is not None:
            if self.approve is not None:
                holding()  # before the event: a resumed run emits it again
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
        checkpoint: str | os.PathLike[str] | None = None,
        resume: Checkpoint | None = None,
        checkpoint_extra: Callable[[], dict[str, Any]] | None = None,
    ) -> RunResult:
        """:meth:`run` for asynchronous apps: async tools and async callbacks are awaited."""
        run = _Run(self, session, task, deadline, checkpoint, resume, checkpoint_extra)
        try:
            with ToolExecutor(
                self.rendered,
                session=run.session,
                resources=resources,
                deadline=deadline,
                interaction=self.interaction,
            ) as executor:
                run.attach(executor)
                if run.open_turn:
                    await self._aanswer(executor, run, run.turns[-1].tool_calls, run.answered)
                    run.follow(executor)
                while run.next_turn():
                    started = time.perf_counter()
                    reply = await self.provider.acomplete(
                        run.conversation, run.tools, run.on_text, deadline=deadline
                    )
                    if run.record(reply, started):
                        break
                    await self._aanswer(executor, run, reply.calls)
                    run.follow(executor)
                run.save(final=True)
        finally:
            await self.provider.aclose()
        return run.result()

    async def _aanswer(
        self,
        executor: ToolExecutor,
        run: _Run,
        made: tuple[ToolCall, ...],
        answered: Sequence[tuple[ToolCall, ToolResult[Any]]] = (),
    ) -> None:
        """:meth:`_answer` for :meth:`arun`: a turn of read-only calls runs concurrently."""
        calls, extra = self._split(made)
        results = list(answered)
        calls = calls[len(answered) :]
        if not run_together(executor.rendered_prompt, calls):
            # In order, each held call answered before the next runs: a later call sees
            # exactly what an approved earlier one did.
            for call in calls:
                self._emit(ToolCallStarted(call))
                result = await executor.aexecute(call.name, call.arguments, call_id=call.call_id)
                results.append(await self._aresolve(executor, call, result, run.holding(results)))
        else:
            for call in calls:
                self._emit(ToolCallStarted(call))
            batch = [(call.name, call.arguments, call.call_id) for call in calls]
            first = await executor.aexecute_many(batch)
            for call, result in zip(calls, first, strict=True):
                results.append(await self._aresolve(executor, call, result, run.holding(results)))
        results += self._refuse(extra, len(made))
        self.provider.add_results(run.conversation, results)
        run.save()

    async def _aresolve(
        self,
        executor: ToolExecutor,
        call: ToolCall,
        result: ToolResult[Any],
        holding: Callable[[], None],
    ) -> tuple[ToolCall, ToolResult[Any]]:
        pending = _pending_of(result)
        while pending is not None:
            if self.approve is not None:
                holding()  # before the event: a resumed run emits it again
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
        "answered",
        "checkpoint_dir",
        "checkpoint_extra",
        "conversation",
        "deadline",
        "executor",
        "finished",
        "first_call",
        "on_text",
        "open_turn",
        "prompt_digest",
        "restored",
        "resume",
        "sent",
        "session",
        "stop",
        "streamed",
        "task",
        "tools",
        "turns",
        "usage",
    )

    def __init__(
        self,
        agent: Agent,
        session: Session | None,
        task: str,
        deadline: Deadline | None,
        checkpoint: str | os.PathLike[str] | None = None,
        resume: Checkpoint | None = None,
        checkpoint_extra: Callable[[], dict[str, Any]] | None = None,
    ) -> None:
        self.agent = agent
        self.deadline = deadline
        self.checkpoint_dir = checkpoint
        self.checkpoint_extra = checkpoint_extra
        self.resume = resume
        self.executor: ToolExecutor | None = None
        provider = agent.provider
        self.tools = provider.tools(agent.rendered)
        self.sent: RenderedPrompt = agent.rendered
        self.prompt_digest = _digest(agent.rendered.text, self.tools)
        # Everything a resume needs is parsed and checked before the session is touched.
        self.restored = [] if resume is None else self._check_resume(resume, session)
        self.session = session if session is not None else Session()
        self.session.register_log(ModelTurn)
        self.session.register_log(ToolInvoked)
        self.first_call = len(self.session[ToolInvoked].all())
        self.turns: list[ModelTurn] = []
        self.usage = Usage()
        self.stop = StopReason.MAX_TURNS
        self.finished = False
        # A checkpoint written while a held call waited: its turn is answered first.
        self.open_turn = resume is not None and resume.open_turn is not None
        self.answered = [] if resume is None else resume.answered()
        if resume is None:
            self.task = task
            self.conversation: Conversation = provider.start(agent.rendered.text, task)
        else:
            self.task = resume.task
            self.conversation = Conversation(resume.system, list(resume.messages))
        emit = agent.on_event
        self.streamed = False  # did the provider stream this turn's text through on_text?
        self.on_text = None if emit is None else self._text

    def _check_resume(
        self, resume: Checkpoint, session: Session | None
    ) -> list[tuple[type, tuple[Any, ...]]]:
        from ._checkpoint import check_workspace, resolve_slices

        provider = self.agent.provider
        if resume.provider != provider.name:
            raise CheckpointError(
                f"The checkpoint is of a run with provider {resume.provider!r}; this one uses "
                f"{provider.name!r}, whose messages differ. Resume with the same provider."
            )
        if resume.prompt_digest != self.prompt_digest:
            raise CheckpointError(
                "The checkpoint was written for another prompt or tool set (the composed "
                "prompt's text or tools differ); resume with the same packs and options."
            )
        if session is not None and any(
            len(session[tp]) for tp in session.slice_types if tp not in (ModelTurn, ToolInvoked)
        ):
            raise CheckpointError(
                "A checkpoint can only be resumed into a fresh session; this one already "
                "holds state."
            )
        check_workspace(resume)
        loadable = self.agent.rendered.prompt.deferred_packs
        missing = [name for name in resume.loaded_packs if name not in loadable]
        if missing:
            raise CheckpointError(
                f"The run had loaded the deferred pack {missing[0]!r}, which this prompt "
                f"cannot load (deferred here: {', '.join(loadable) or 'none'}); resume with "
                "the same packs and --defer options."
            )
        return resolve_slices(resume)

    def _restore(self, resume: Checkpoint, restored: list[tuple[type, tuple[Any, ...]]]) -> None:
        from haversack._policy_state import set_policy_values

        session = self.session
        for slice_type, items in restored:
            session[slice_type].seed(items)
        for policy, values in resume.policy_records.items():
            set_policy_values(session, policy, values)
        self.turns = list(resume.model_turns())
        session[ModelTurn].extend(self.turns)
        session[ToolInvoked].extend(resume.tool_records())
        for turn in self.turns:
            self.usage = self.usage + turn.usage
        if resume.stop_reason is not None:
            self.stop = StopReason(resume.stop_reason)
            # A run the turn cap stopped may go on under a higher cap; the others are over.
            self.finished = self.stop is not StopReason.MAX_TURNS

    def attach(self, executor: ToolExecutor) -> None:
        """Use ``executor``'s workspace: written back or checked when resuming."""
        self.executor = executor
        if self.resume is not None:
            from ._checkpoint import restore_workspace

            for name in self.resume.loaded_packs:
                executor.load_pack(name)
            self.follow(executor)

            # The workspace first: a workspace that does not match leaves the session as it was.
            restore_workspace(self.resume, self._filesystem())
            self._restore(self.resume, self.restored)

    def follow(self, executor: ToolExecutor) -> None:
        """Send the tools ``executor`` runs now: a deferred pack loaded adds its own from
        the next turn on (the system text stays; the load's result gave its instructions)."""
        if executor.rendered_prompt is not self.sent:
            self.sent = executor.rendered_prompt
            self.tools = self.agent.provider.tools(self.sent)

    def _filesystem(self) -> Any:
        from haversack.filesystem import Filesystem

        assert self.executor is not None
        return self.executor.resources.get_optional(Filesystem)

    def holding(self, answered: list[tuple[ToolCall, ToolResult[Any]]]) -> Callable[[], None]:
        """What to do before asking a human about a held call: write a checkpoint with the
        turn's calls answered so far, so a run that dies while the human thinks resumes
        with the same question."""
        return lambda: self.save(answered=tuple(answered))

    def save(
        self,
        *,
        final: bool = False,
        answered: Sequence[tuple[ToolCall, ToolResult[Any]]] | None = None,
    ) -> None:
        """Write a checkpoint of the run so far (when the run has a checkpoint directory);
        ``answered`` marks the last turn as open, with these of its calls answered."""
        if self.checkpoint_dir is None or self.executor is None:
            return
        from ._checkpoint import (
            Checkpoint,
            invoked_data,
            open_turn_data,
            pending_data,
            save_checkpoint,
            session_state,
            turn_data,
            workspace_data,
        )

        slices, records = session_state(self.session)
        provider = self.agent.provider
        calls = self.session[ToolInvoked].all()[self.first_call :]
        save_checkpoint(
            self.checkpoint_dir,
            Checkpoint(
                task=self.task,
                provider=provider.name,
                model=provider.model,
                prompt_digest=self.prompt_digest,
                system=self.conversation.system,
                messages=tuple(self.conversation.messages),
                turns=tuple(turn_data(t) for t in self.turns),
                stop_reason=self.stop.value if final else None,
                session_id=self.session.session_id,
                slices=slices,
                policy_records=records,
                calls=tuple(invoked_data(c) for c in calls if c.outcome is not CallOutcome.PENDING),
                pending=tuple(pending_data(p) for p in self.executor.pending),
                workspace=workspace_data(self._filesystem()),
                extra=dict(self.checkpoint_extra()) if self.checkpoint_extra else {},
                open_turn=None if answered is None else open_turn_data(answered),
                loaded_packs=self.executor.prompt.loaded_packs,
            ),
        )

    def _text(self, text: str) -> None:
        self.streamed = True
        self.agent._emit(TextDelta(text))

    def next_turn(self) -> bool:
        if self.finished or len(self.turns) >= self.agent.max_turns:
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
        self.finished = True
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


def _digest(system: str, tools: list[dict[str, Any]]) -> str:
    """What a checkpoint's prompt must match: the system text and the tools as sent."""
    import hashlib
    import json

    text = json.dumps([system, tools], sort_keys=True, ensure_ascii=False, default=repr)
    return hashlib.sha256(text.encode("utf-8", "surrogatepass")).hexdigest()


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
