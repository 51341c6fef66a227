"""``ToolExecutor``: a model's tool call becomes a safe, recorded, reversible action."""

from __future__ import annotations

import dataclasses
import threading
import time
from collections.abc import Callable, Sequence
from contextlib import ExitStack
from typing import TYPE_CHECKING, Any, NoReturn

from ._arguments import ArgumentParser, Arguments
from ._call_lock import CallLock
from ._context import ToolContext
from ._events import CallOutcome, ToolInvoked, ToolLog
from ._interrupt import GATES
from ._result import ToolResult, render_once
from .errors import ApprovalError, HaversackError, PromptEvaluationError, ToolValidationError
from .filesystem._protocol import RollbackReport, Snapshottable

if TYPE_CHECKING:
    from ._approval import Approval, PendingApproval
    from ._bindings import ResourceRegistry
    from ._deadline import Deadline
    from ._interaction import Interaction
    from ._policy import ToolPolicy
    from ._prompt import RenderedPrompt
    from ._resources import Resources
    from ._resources._live import ToolCallScope
    from ._session import Session, SessionSnapshot
    from ._tool import Tool

__all__ = ["ToolExecutor"]

_clock = time.perf_counter


class _Entry:
    """What the executor knows of one tool before any call, built when it is created."""

    __slots__ = ("context", "parse", "policies", "shared", "tool")

    def __init__(self, tool: Tool[Any, Any], policies: tuple[ToolPolicy, ...]) -> None:
        self.tool = tool
        self.parse = ArgumentParser(tool)
        self.policies = policies
        # Read-only calls share the call lock and take no snapshot.
        self.shared = tool.annotations.read_only
        # The context of this tool's calls without a call id: immutable, so built once.
        self.context: ToolContext | None = None


class _Call:
    """The state of one call as it moves through the pipeline."""

    __slots__ = (
        "approved",
        "arguments",
        "call_id",
        "context",
        "entry",
        "interaction",
        "name",
        "params",
        "result",
        "saved",
        "scope",
        "shared",
        "snapshots",
        "start",
        "tool",
    )

    def __init__(
        self,
        entry: _Entry | None,
        name: object,
        arguments: Arguments,
        call_id: str | None,
        interaction: Interaction | None,
    ) -> None:
        self.start = _clock()
        self.interaction = interaction
        self.entry = entry
        self.name = name
        self.arguments = arguments
        self.call_id = call_id
        # An unknown tool changes nothing (its call is only logged): it needs no turn alone.
        if entry is None:
            self.shared = True
            self.tool: Tool[Any, Any] | None = None
        else:
            self.shared = entry.shared
            self.tool = entry.tool
        self.params: Any = None
        self.context: ToolContext | None = None
        # The transaction: the session's snapshot (None: nothing to roll back) and those
        # of the snapshottable resources, restored together by _rollback.
        self.saved: SessionSnapshot | None = None
        self.snapshots: list[tuple[Snapshottable, object]] | None = None
        self.scope: ToolCallScope | _SharedScope | None = None
        self.approved = False  # a human approved: policies that ask are answered
        self.result: ToolResult[Any] | None = None  # decided without running (a denial)


def _restore(
    session: Session,
    saved: SessionSnapshot,
    snapshots: Sequence[tuple[Snapshottable, object]] | None,
) -> str:
    """Put back the session and every snapshottable resource as a call found them; return
    what the model must hear about paths that others changed since (``""`` for nothing)."""
    # Every restore is attempted even if one fails; the session's cannot fail.
    failures: list[tuple[Snapshottable, Exception]] = []
    notes: list[str] = []
    for resource, snapshot in snapshots or ():
        try:
            report = resource.restore(snapshot)
        except Exception as exc:  # noqa: BLE001 - reported together below
            failures.append((resource, exc))
            continue
        if isinstance(report, RollbackReport) and report.kept:
            mount = getattr(resource, "mount_point", "/workspace")
            notes.append(report.describe(mount if isinstance(mount, str) else "/workspace"))
    session.restore(saved)
    if failures:
        broken, error = failures[0]
        raise PromptEvaluationError(
            f"Rolling back a failed tool call left {type(broken).__qualname__} in an "
            f"unknown state (its restore() raised {type(error).__name__}: {error}); the "
            "evaluation cannot continue safely."
        ) from error
    return " ".join(notes)


def _noted(message: str, note: str) -> str:
    return f"{message}\n\n{note}" if note else message


class _SharedScope:
    """One tool-call resource scope shared by the read-only calls in flight in one thread.

    A scope is per thread and does not nest, while asyncio readers overlap in one thread:
    the first reader opens it, the last one closes it.
    """

    __slots__ = ("scope", "thread", "users")

    def __init__(self, scope: ToolCallScope, thread: int) -> None:
        self.scope = scope
        self.thread = thread
        self.users = 0


class ToolExecutor:
    """Runs tool calls of a rendered prompt against one session, transactionally.

    Every call goes through the same pipeline: look up the tool, parse the arguments
    strictly, check the deadline, snapshot the session's STATE slices and every
    snapshottable resource (skipped for read-only tools), ask every governing policy, run
    the handler, let policies record a success, restore everything on any failure, and
    publish a :class:`ToolInvoked` event to the session on every path. A policy answering
    :meth:`PolicyDecision.ask` holds the call for a human instead (outcome ``pending``,
    nothing runs); :meth:`resume` then runs or refuses it.

    A failing tool never raises: it returns ``ToolResult.error`` with a message the model
    can act on. Only :class:`PromptEvaluationError` (including an expired deadline) is
    raised, after the restore, because it ends the evaluation.

    Calls of tools annotated ``read_only`` may run at the same time (threads, and
    ``aexecute`` tasks); any other call runs alone, because a failing call's restore would
    otherwise undo another call's committed work; see :mod:`haversack._call_lock`.

    ``resources`` may be live resources the caller manages, or ``None`` to open the
    prompt's own registry; resources the executor opened are closed by :meth:`close`
    (or by leaving the executor's ``with`` block).

    ``log`` says how much of each call the session's ``ToolInvoked`` log keeps
    (default :class:`ToolLog`: the newest 1,000 calls, each as a bounded preview).

    ``interaction`` carries handlers' :meth:`ToolContext.ask` and
    :meth:`ToolContext.report_progress` (default: nobody to ask); a call may bring its own
    (``interaction=`` of :meth:`execute`, :meth:`aexecute`, :meth:`resume`, :meth:`aresume`),
    as the MCP server does for each request.

    ``before_commit`` is asked after the handler of a call that may change state succeeded,
    before the call is committed; a message it returns fails the call, rolled back like
    any failed call, with that message (the HTTP server keeps its sessions within its
    memory budget so). It runs in the calling thread, inside the call's turn.
    """

    def __init__(
        self,
        rendered_prompt: RenderedPrompt,
        *,
        session: Session,
        resources: Resources | ResourceRegistry | None = None,
        deadline: Deadline | None = None,
        log: ToolLog | None = None,
        interaction: Interaction | None = None,
        before_commit: Callable[[], str | None] | None = None,
    ) -> None:
        from ._bindings import ResourceRegistry

        self.interaction = interaction
        self.before_commit = before_commit
        self.rendered_prompt = rendered_prompt
        self.prompt = rendered_prompt.prompt
        self.session = session
        self.deadline = deadline
        self._owned = ExitStack()
        if resources is None:
            resources = self.prompt.resources or ResourceRegistry.of()
        # Caller-managed resources may build singletons later, so ask them on every call.
        self._fixed_snapshottables: tuple[Snapshottable, ...] | None = None
        later = self.prompt.deferred_resources
        # Resources it opens itself are the executor's to build (eagerly, or on a load).
        self._owned_registry = isinstance(resources, ResourceRegistry)
        if isinstance(resources, ResourceRegistry) and later:
            # A deferred pack's singletons (a sandbox, say) are built when it is loaded, the
            # others now; until then, ask for the snapshottables on every call.
            resources = self._owned.enter_context(resources.open())
            try:
                _build_singletons(resources, lambda tp: tp not in later)
            except BaseException:
                self._owned.close()  # as an eager open closes what it built
                raise
        elif isinstance(resources, ResourceRegistry):
            # Eager: a singleton first built inside a failing call would miss its snapshot.
            resources = self._owned.enter_context(resources.open(eager=True))
            # Every singleton now exists, so the snapshottables are fixed: find them once.
            self._fixed_snapshottables = resources.snapshottables()
        self.resources: Resources = resources
        self._entries: dict[str, _Entry] = {}
        self._recorders: tuple[ToolPolicy, ...] = ()
        self._use(rendered_prompt)
        self._lock = CallLock(f"the executor of prompt {self.prompt.ns}/{self.prompt.key}")
        # Held by read-only calls while they record and publish (they may overlap), and by
        # anyone changing the pending approvals or the shared resource scopes.
        self._commit = threading.RLock()
        self._scopes: dict[int, _SharedScope] = {}
        self._pending: dict[str, PendingApproval] = {}
        self._anonymous = 0
        # Bounded by default (the newest calls, previews): a long session's memory stays flat.
        (log if log is not None else ToolLog()).install(session)

    def _use(self, rendered_prompt: RenderedPrompt) -> None:
        """Run the tools of ``rendered_prompt`` from now on (at creation, or a pack loaded)."""
        # Parsers (and the validators under them) are built now, not by each tool's first call.
        self._entries = {
            tool.name: _Entry(tool, rendered_prompt.policies_for(tool.name))
            for tool in rendered_prompt.tools
        }
        # A policy object attached in two places still records each call once.
        unique: dict[int, ToolPolicy] = {}
        for policy in rendered_prompt.policies:
            unique.setdefault(id(policy), policy)
        self._recorders = tuple(unique.values())
        self.rendered_prompt = rendered_prompt
        self.prompt = rendered_prompt.prompt

    # ------------------------------------------------------------------ deferred packs
    def load_pack(self, name: str) -> str:
        """Add the deferred pack ``name`` (see ``compose(deferred=...)``) to the tools this
        executor runs, and return the text of its sections (what the model must read).

        The resources stay as they are: the pack's were bound when the prompt was composed.
        Its prompt-wide policies govern every tool from the next call on. Loading a loaded
        pack changes nothing and returns ``""``; a name that is not a deferred pack raises
        :class:`~haversack.errors.PackLoadError`. Calls wait for the calls in flight.
        """
        held = self._lock.acquire(False)
        try:
            return self._load_pack(name)
        finally:
            self._lock.release(False, held)

    def _load_pack(self, name: str) -> str:
        old = self.rendered_prompt
        grown = old.prompt.with_pack(name)
        if grown is old.prompt:
            return ""
        rendered = grown.render()
        if self._owned_registry:
            # Its singletons now, before any call of its tools needs a snapshot of them.
            mine = set(old.prompt.deferred_resources) - set(grown.deferred_resources)
            _build_singletons(self.resources, mine.__contains__)
            if not grown.deferred_resources:
                self._fixed_snapshottables = self.resources.snapshottables()
        self._use(rendered)
        text = rendered.text
        if text.startswith(old.text):
            text = text[len(old.text) :].strip()
        return text

    # ------------------------------------------------------------------ lifetime
    def close(self) -> None:
        """Close the resources this executor opened (idempotent)."""
        self._owned.close()

    def __enter__(self) -> ToolExecutor:
        return self

    def __exit__(self, *exc: object) -> None:
        self.close()

    # ------------------------------------------------------------------ calls
    def execute(
        self,
        name: str,
        arguments: Arguments = None,
        *,
        call_id: str | None = None,
        interaction: Interaction | None = None,
    ) -> ToolResult[Any]:
        """Run one call; ``arguments`` is the model's JSON text or an already-decoded mapping.

        An async handler is run to completion on a fresh event loop; inside a running loop
        use :meth:`aexecute`. A call a policy holds for approval returns a failed result
        whose ``value`` is a :class:`~haversack.PendingApproval`; see :meth:`resume`.
        """
        call = self._call(name, arguments, call_id, interaction)
        gate = GATES.gate
        if gate is None:
            return self._locked_run(call)
        with gate.closed():  # a cancellable thread: only the handler may be interrupted
            return self._locked_run(call)

    def _locked_run(self, call: _Call) -> ToolResult[Any]:
        shared = call.shared
        held = self._lock.acquire(shared)
        try:
            return self._run(call)
        finally:
            self._lock.release(shared, held)

    async def aexecute(
        self,
        name: str,
        arguments: Arguments = None,
        *,
        call_id: str | None = None,
        interaction: Interaction | None = None,
    ) -> ToolResult[Any]:
        """:meth:`execute` for asynchronous callers; sync and async handlers both work.

        Runs on the caller's event loop. Calls of read-only tools gathered together overlap.
        """
        call = self._call(name, arguments, call_id, interaction)
        held = await self._lock.aacquire(call.shared)
        try:
            return await self._arun(call)
        finally:
            self._lock.release(call.shared, held)

    async def aexecute_many(
        self, calls: Sequence[tuple[str, Arguments, str | None]]
    ) -> list[ToolResult[Any]]:
        """Run the calls ``(name, arguments, call_id)`` of one model turn; results in order.

        When every call is of a known tool annotated ``read_only``, they share one turn and
        one tool-call scope: each is parsed and checked by the policies, in order, then the
        handlers run concurrently (async handlers are awaited together; a sync handler runs
        to completion when started), then results are recorded and published in order.
        Otherwise the calls run one after another, exactly like :meth:`aexecute`.
        """
        entries = [
            self._entries.get(name) if isinstance(name, str) else None for name, _, _ in calls
        ]
        if len(calls) < 2 or not all(entry is not None and entry.shared for entry in entries):
            return [
                await self.aexecute(name, arguments, call_id=cid) for name, arguments, cid in calls
            ]
        import asyncio

        results: list[ToolResult[Any] | None] = [None] * len(calls)
        ready: list[tuple[int, _Call]] = []
        held = await self._lock.aacquire(True)
        try:
            for index, (name, arguments, call_id) in enumerate(calls):
                call = self._call(name, arguments, call_id, None)
                early = self._begin(call)
                if early is None:
                    ready.append((index, call))
                else:
                    results[index] = early
            outcomes = await asyncio.gather(*(_handle(call) for _, call in ready))
            for (index, call), (outcome, error) in zip(ready, outcomes, strict=True):
                results[index] = self._end(call, outcome, error)
        except BaseException as exc:
            for _, call in ready:  # the calls that never ended give their scope back
                self._close_scope(call, exc)
            raise
        finally:
            self._lock.release(True, held)
        return [result for result in results if result is not None]

    @property
    def pending(self) -> tuple[PendingApproval, ...]:
        """The calls awaiting a human's answer, oldest first."""
        return tuple(self._pending.values())

    def resume(
        self, call_id: str, approval: Approval, *, interaction: Interaction | None = None
    ) -> ToolResult[Any]:
        """Answer a pending call: run it (approved or edited) or refuse it (denied).

        The call goes through the whole pipeline again (parsing, snapshot, every policy,
        rollback on failure); the approval only answers the policies that asked. An
        approval given for other arguments than the pending call's is void: the call is
        refused and nothing runs. Raises :class:`~haversack.ApprovalError` if no call
        ``call_id`` awaits approval.
        """
        gate = GATES.gate
        if gate is None:
            return self._resume(call_id, approval, interaction)
        with gate.closed():  # see execute()
            return self._resume(call_id, approval, interaction)

    def _resume(
        self, call_id: str, approval: Approval, interaction: Interaction | None
    ) -> ToolResult[Any]:
        call = self._resumed(call_id, approval, interaction)
        held = self._lock.acquire(call.shared)
        try:
            return call.result if call.result is not None else self._run(call)
        finally:
            self._lock.release(call.shared, held)

    async def aresume(
        self, call_id: str, approval: Approval, *, interaction: Interaction | None = None
    ) -> ToolResult[Any]:
        """:meth:`resume` for asynchronous callers."""
        call = self._resumed(call_id, approval, interaction)
        held = await self._lock.aacquire(call.shared)
        try:
            return call.result if call.result is not None else await self._arun(call)
        finally:
            self._lock.release(call.shared, held)

    # The one pipeline, driven two ways: the sync and async drivers differ only in how an
    # awaitable handler result is awaited.
    def _run(self, call: _Call) -> ToolResult[Any]:
        early = self._begin(call)
        if early is not None:
            return early
        gate = GATES.gate
        try:
            outcome = _handle_sync(call) if gate is None else gate.call(_handle_sync, call)
        except BaseException as exc:  # noqa: BLE001 - mapped by _end
            return self._end(call, None, exc)
        return self._end(call, outcome, None)

    async def _arun(self, call: _Call) -> ToolResult[Any]:
        early = self._begin(call)
        if early is not None:
            return early
        try:
            outcome = call.tool.handler(call.params, context=call.context)  # type: ignore[union-attr, misc, arg-type]
            if hasattr(outcome, "__await__"):
                outcome = await outcome
        except BaseException as exc:  # noqa: BLE001 - mapped by _end
            return self._end(call, None, exc)
        return self._end(call, outcome, None)

    # ------------------------------------------------------------------ approval
    def _resumed(self, call_id: str, approval: Approval, interaction: Interaction | None) -> _Call:
        """The call to run for ``approval``, or one whose ``result`` is already decided."""
        from ._approval import ApprovalVerdict

        with self._commit:
            pending = self._pending.pop(call_id, None)
            waiting = ", ".join(repr(key) for key in self._pending) or "none"
        if pending is None:
            raise ApprovalError(
                f"No call {call_id!r} awaits approval on the executor of prompt "
                f"{self.prompt.ns}/{self.prompt.key}; calls awaiting "
                f"approval: {waiting}. Resume only call ids from executor.pending."
            )
        name = pending.tool_name
        verdict = approval.verdict
        arguments = approval.arguments if verdict is ApprovalVerdict.EDIT else pending.arguments
        call = self._call(name, arguments, call_id, interaction)
        call.approved = True
        if (approval.call_id is not None and approval.call_id != call_id) or (
            approval.tool_name is not None and approval.tool_name != name
        ):
            # An answer to another held call (another tool, perhaps with the same
            # arguments) never runs this one.
            given = f"{approval.tool_name or '?'} (call {approval.call_id or '?'})"
            message = (
                f"The call of {name!r} was not run: the approval given was for another call, "
                f"{given}, so it is void. Call the tool again to ask for a new approval."
            )
        elif verdict is ApprovalVerdict.DENY:
            message = f"The call of {name!r} was not approved: {approval.reason}"
        elif (
            verdict is ApprovalVerdict.APPROVE
            and approval.arguments_hash is not None
            and approval.arguments_hash != pending.arguments_hash
        ):
            message = (
                f"The call of {name!r} was not run: its approval was given for other "
                "arguments than these, so it is void. Call the tool again to ask for a new "
                "approval."
            )
        else:
            return call
        call.result = self._publish(
            call, ToolResult.error(message), CallOutcome.DENIED, tool_name=name
        )
        return call

    def _hold(self, call: _Call, policy: str, reason: str) -> ToolResult[Any]:
        """Keep the call for a human's answer: nothing ran, so roll back the snapshot."""
        from ._approval import PendingApproval, arguments_hash

        tool = call.tool
        assert tool is not None
        self._rollback(call)
        with self._commit:
            if call.call_id is None:
                self._anonymous += 1
                call.call_id = f"pending-{self._anonymous}"
            pending = PendingApproval(
                call_id=call.call_id,
                tool_name=tool.name,
                arguments=call.arguments,
                arguments_hash=arguments_hash(call.arguments),
                policy=policy,
                reason=reason,
            )
            # The same call id asked again (say, with new arguments) replaces the old request.
            self._pending.pop(call.call_id, None)
            self._pending[call.call_id] = pending
        result: ToolResult[Any] = ToolResult.error(
            f"Tool {tool.name!r} was not run: it needs a human's approval (policy "
            f"{policy!r}: {reason}).",
            pending,
        )
        return self._publish(call, result, CallOutcome.PENDING)

    # ------------------------------------------------------------------ pipeline
    def _call(
        self,
        name: object,
        arguments: Arguments,
        call_id: str | None,
        interaction: Interaction | None,
    ) -> _Call:
        entry = self._entries.get(name) if isinstance(name, str) else None
        if interaction is None:
            interaction = self.interaction
        return _Call(entry, name, arguments, call_id, interaction)

    def _begin(self, call: _Call) -> ToolResult[Any] | None:
        """Everything before the handler: parse, check the deadline, open the tool-call
        scope, snapshot and ask the policies. Returns the result of a call that ends here."""
        entry = call.entry
        if entry is None:
            names = ", ".join(t.name for t in self.rendered_prompt.tools) or "none"
            return self._publish(
                call,
                ToolResult.error(f"Unknown tool {call.name!r}. Available tools: {names}."),
                CallOutcome.INVALID,
                tool_name=str(call.name),
            )
        tool = entry.tool
        try:
            call.params = entry.parse(call.arguments)
        except ToolValidationError as exc:
            return self._publish(call, ToolResult.error(exc.message), CallOutcome.INVALID)
        deadline = self.deadline
        if deadline is not None and deadline.expired:
            self._publish(
                call,
                ToolResult.error("The evaluation's deadline has passed; the call was not run."),
                CallOutcome.ABORTED,
            )
            deadline.check(f"tool call {tool.name!r}")
        if tool.handler is None:
            return self._publish(
                call,
                ToolResult.error(f"Tool {tool.name!r} has no handler and cannot be run."),
                CallOutcome.ERROR,
            )
        if call.shared:
            self._open_shared_scope(call)
        else:
            scope = self.resources.tool_call()
            scope.__enter__()
            call.scope = scope
        try:
            early = self._enter(call)
        except BaseException as exc:
            self._close_scope(call, exc)
            raise
        if early is not None:
            self._close_scope(call, None)
        return early

    def _enter(self, call: _Call) -> ToolResult[Any] | None:
        """Inside the tool-call resource scope: snapshot, build the context, run policies."""
        entry = call.entry
        assert entry is not None
        tool = entry.tool
        if not entry.shared:
            try:
                fixed = self._fixed_snapshottables
                snapshots = []
                for resource in fixed if fixed is not None else self.resources.snapshottables():
                    snapshots.append((resource, resource.snapshot()))
                call.snapshots = snapshots
                call.saved = self.session.snapshot()  # last: set, it says there is a transaction
            except Exception as exc:  # noqa: BLE001 - no snapshot, no call
                return self._fail(
                    call,
                    f"Tool {tool.name!r} was not run: taking the transaction snapshot failed "
                    f"({type(exc).__name__}: {exc}).",
                    CallOutcome.ERROR,
                )
        context = entry.context if call.call_id is None else None
        session, resources, deadline = self.session, self.resources, self.deadline
        interaction = call.interaction
        if (
            context is None
            or context.session is not session
            or context.resources is not resources
            or context.deadline is not deadline
            or context.interaction is not interaction
        ):
            context = ToolContext(
                self.prompt,
                self.rendered_prompt,
                session,
                resources,
                deadline,
                tool,
                call.call_id,
                interaction,
            )
            if call.call_id is None:
                entry.context = context
        call.context = context
        asked: tuple[str, str] | None = None
        params = call.params
        for policy in entry.policies:
            try:
                decision = policy.check(tool, params, context=context)
            except PromptEvaluationError as exc:
                self._abort(call, exc)
            except Exception as exc:  # noqa: BLE001 - a broken policy denies, it never crashes
                return self._fail(
                    call,
                    f"Policy {policy.name!r} could not check the call ({type(exc).__name__}: "
                    f"{exc}); the call was not run.",
                    CallOutcome.DENIED,
                )
            if not decision.allowed:
                if decision.needs_approval:
                    # Later policies may still deny outright, which beats asking a human.
                    if asked is None and not call.approved:
                        asked = (policy.name, decision.reason)
                    continue
                return self._fail(
                    call, f"Denied by policy {policy.name!r}: {decision.reason}", CallOutcome.DENIED
                )
        if asked is not None:
            return self._hold(call, *asked)
        return None

    def _end(self, call: _Call, outcome: Any, error: BaseException | None) -> ToolResult[Any]:
        """Everything after the handler: record or roll back, publish, close the scope."""
        try:
            if call.shared:
                # Overlapping readers record one at a time: a reader whose recording fails
                # restores the session, which must not take another reader's records along.
                with self._commit:
                    result = (
                        self._finish(call, outcome)
                        if error is None
                        else self._handler_raised(call, error)
                    )
            elif error is None:
                result = self._finish(call, outcome)
            else:
                result = self._handler_raised(call, error)
        except BaseException as exc:
            self._close_scope(call, exc)
            raise
        scope = call.scope
        if isinstance(scope, _SharedScope):
            self._close_scope(call, None)
        elif scope is not None:
            call.scope = None
            scope.__exit__(None, None, None)
        return result

    def _open_shared_scope(self, call: _Call) -> None:
        thread = threading.get_ident()
        with self._commit:
            shared = self._scopes.get(thread)
            if shared is None:
                opened = self.resources.tool_call()
                opened.__enter__()
                shared = self._scopes[thread] = _SharedScope(opened, thread)
            shared.users += 1
        call.scope = shared

    def _close_scope(self, call: _Call, exc: BaseException | None) -> None:
        scope, call.scope = call.scope, None
        if scope is None:
            return
        kind = None if exc is None else type(exc)
        if isinstance(scope, _SharedScope):
            with self._commit:
                scope.users -= 1
                if scope.users:
                    return
                del self._scopes[scope.thread]
            scope.scope.__exit__(kind, exc, None)
        else:
            scope.__exit__(kind, exc, None)

    def _finish(self, call: _Call, outcome: Any) -> ToolResult[Any]:
        tool = call.tool
        assert tool is not None
        assert call.context is not None
        if not isinstance(outcome, ToolResult):
            return self._fail(
                call,
                f"Tool {tool.name!r} returned {type(outcome).__name__}, not a ToolResult; this "
                "is a bug in the tool.",
                CallOutcome.ERROR,
            )
        if type(outcome.message) is not str:
            # The log, the adapters and every client take the message as text.
            return self._fail(
                call,
                f"Tool {tool.name!r} returned a ToolResult whose message is a "
                f"{type(outcome.message).__name__}, not a string; this is a bug in the tool.",
                CallOutcome.ERROR,
            )
        try:
            rendered = render_once(outcome)  # the text the log, the adapters and the CLI send
        except Exception as exc:  # noqa: BLE001 - a broken render() is the tool's failure
            return self._fail(
                call,
                f"Tool {tool.name!r} produced a result that cannot be rendered "
                f"({type(exc).__name__}: {exc}).",
                CallOutcome.ERROR,
            )
        if not outcome.success:
            note = self._rollback(call)
            if note:
                outcome = dataclasses.replace(outcome, message=_noted(outcome.message, note))
                rendered = render_once(outcome)
            return self._publish(call, outcome, CallOutcome.FAILED, rendered=rendered)
        check = self.before_commit
        if check is not None and call.saved is not None:
            try:
                refusal = check()
            except Exception as exc:  # noqa: BLE001 - an unchecked call is not committed
                refusal = (
                    f"Tool {tool.name!r} ran, but its effects could not be checked before they "
                    f"were kept ({type(exc).__name__}: {exc}); they were rolled back."
                )
            if refusal is not None:
                return self._fail(call, refusal, CallOutcome.ERROR)
        recorders = self._recorders
        if recorders and call.saved is None:
            # A read-only call took no snapshot, but policies record into the session: if one
            # of them fails, what the others recorded must go too.
            call.saved = self.session.snapshot()
        for policy in recorders:
            try:
                policy.on_result(tool, call.params, outcome, context=call.context)
            except Exception as exc:  # noqa: BLE001 - keep state consistent: undo the call
                return self._fail(
                    call,
                    f"Policy {policy.name!r} failed to record the call ({type(exc).__name__}: "
                    f"{exc}); the call's effects were rolled back.",
                    CallOutcome.ERROR,
                )
        prompt = self.prompt
        if prompt.deferred_packs or prompt.loaded_packs:
            from ._deferred import LOAD_TOOL, LoadPackParams  # only with deferred packs

            if tool.name == LOAD_TOOL and isinstance(call.params, LoadPackParams):
                # The core's load tool (its handler checked the name): the tool set grows
                # now, inside this call, which runs alone.
                try:
                    text = self._load_pack(call.params.pack)
                except HaversackError as exc:
                    return self._fail(
                        call,
                        f"Pack {call.params.pack!r} could not be loaded: {exc}",
                        CallOutcome.ERROR,
                    )
                if text:
                    outcome = ToolResult.ok(message=f"{outcome.message}\n\n{text}")
                    rendered = render_once(outcome)
        return self._publish(call, outcome, CallOutcome.OK, rendered=rendered)

    def _handler_raised(self, call: _Call, exc: BaseException) -> ToolResult[Any]:
        tool_name = call.tool.name if call.tool is not None else "?"
        if isinstance(exc, PromptEvaluationError) or not isinstance(exc, Exception):
            # PromptEvaluationError ends the evaluation; KeyboardInterrupt, SystemExit and
            # the like are not ours to map. Either way: undo, record, re-raise.
            self._abort(call, exc)
        if isinstance(exc, HaversackError):
            message = str(exc)
        elif isinstance(exc, TypeError):
            message = f"Tool {tool_name!r} was called incorrectly or misbehaved: TypeError: {exc}"
        else:
            message = f"Tool {tool_name!r} failed: {type(exc).__name__}: {exc}"
        return self._fail(call, message, CallOutcome.ERROR)

    def _fail(self, call: _Call, message: str, outcome: CallOutcome) -> ToolResult[Any]:
        note = self._rollback(call)
        return self._publish(call, ToolResult.error(_noted(message, note)), outcome)

    def _abort(self, call: _Call, exc: BaseException) -> NoReturn:
        """Roll back, publish an ABORTED event and re-raise ``exc``."""
        self._rollback(call)
        text = str(exc) or type(exc).__name__
        self._publish(call, ToolResult.error(text), CallOutcome.ABORTED)
        raise exc

    def _rollback(self, call: _Call) -> str:
        """Undo the call; what the model must hear about paths others changed since."""
        saved, call.saved = call.saved, None
        if saved is None:
            return ""
        try:
            return _restore(self.session, saved, call.snapshots)
        except PromptEvaluationError as exc:
            self._publish(call, ToolResult.error(str(exc)), CallOutcome.ABORTED)
            raise

    def _publish(
        self,
        call: _Call,
        result: ToolResult[Any],
        outcome: CallOutcome,
        *,
        rendered: str | None = None,
        tool_name: str | None = None,
    ) -> ToolResult[Any]:
        prompt = self.prompt
        event = ToolInvoked(
            prompt.ns,
            prompt.key,
            tool_name if tool_name is not None else call.tool.name,  # type: ignore[union-attr]
            call.params,
            call.arguments,
            result,
            render_once(result) if rendered is None else rendered,
            outcome,
            call.call_id,
            _clock() - call.start,
        )
        if call.shared:
            with self._commit:  # see _end: a reader's rollback must not meet this dispatch
                self.session.dispatch(event)
        else:
            self.session.dispatch(event)
        return result


def _build_singletons(resources: Resources, wanted: Callable[[type], bool]) -> None:
    """Build the singletons of ``resources`` whose type is ``wanted`` (an eager open, in part)."""
    from ._bindings import Scope

    for binding in resources.registry.bindings:
        if binding.scope is Scope.SINGLETON and wanted(binding.provides):
            resources.get(binding.provides)


def _handle_sync(call: _Call) -> Any:
    """Run one handler to its end (an async one on a fresh event loop)."""
    outcome = call.tool.handler(call.params, context=call.context)  # type: ignore[union-attr, misc, arg-type]
    if hasattr(outcome, "__await__"):
        outcome = _run_to_completion(outcome)
    return outcome


async def _handle(call: _Call) -> tuple[Any, BaseException | None]:
    """Run one handler of a concurrent batch; what it raised is returned, to map in order."""
    try:
        outcome = call.tool.handler(call.params, context=call.context)  # type: ignore[union-attr, misc, arg-type]
        if hasattr(outcome, "__await__"):
            outcome = await outcome
    except BaseException as exc:  # noqa: BLE001 - mapped by _end, in order
        return None, exc
    return outcome, None


def _run_to_completion(awaitable: Any) -> Any:
    import asyncio  # only async handlers need it; keeps import haversack light

    try:
        asyncio.get_running_loop()
    except RuntimeError:
        pass
    else:
        if hasattr(awaitable, "close"):
            awaitable.close()
        raise _AsyncInLoopError(
            "This tool is asynchronous and execute() was called inside a running event loop; "
            "the caller must use aexecute()."
        )

    async def runner() -> Any:
        return await awaitable

    return asyncio.run(runner())


class _AsyncInLoopError(HaversackError):
    """execute() met an async handler inside a running loop (a caller mistake, reported)."""
