"""ToolExecutor: the pipeline, the failure mapping (message, rollback, event) and async calls."""

from __future__ import annotations

import asyncio
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import pytest

from haversack import (
    Binding,
    CallOutcome,
    Deadline,
    DeadlineExceededError,
    Filesystem,
    MarkdownSection,
    PolicyDecision,
    Prompt,
    PromptEvaluationError,
    ResourceRegistry,
    Session,
    SlicePolicy,
    Tool,
    ToolAnnotations,
    ToolContext,
    ToolExecutor,
    ToolInvoked,
    ToolResult,
    ToolValidationError,
)
from haversack_vfs import InMemoryFilesystem

# ----------------------------------------------------------------------------- fixtures


@dataclass(frozen=True)
class Note:
    """A STATE slice every mutating tool appends to."""

    text: str


@dataclass(frozen=True)
class Ran:
    """A LOG slice (kept on rollback): proves which handlers and policy hooks ran."""

    what: str


@dataclass(frozen=True)
class Args:
    path: str
    count: int = 1


@dataclass(frozen=True)
class Out:
    path: str


class Ledger:
    """A small snapshotting resource that counts its snapshots and restores."""

    def __init__(self) -> None:
        self.items: list[str] = []
        self.snapshots = 0
        self.restores = 0

    def snapshot(self) -> object:
        self.snapshots += 1
        return tuple(self.items)

    def restore(self, snapshot: object) -> None:
        assert isinstance(snapshot, tuple)
        self.restores += 1
        self.items = list(snapshot)


def _mutate(context: ToolContext, tag: str) -> None:
    """Change every transactional thing: a STATE slice, the filesystem and the ledger."""
    context.session[Note].append(Note(tag))
    context.filesystem.write(f"{tag}.txt", tag, mode="overwrite")
    context.resources.get(Ledger).items.append(tag)
    context.session[Ran].append(Ran(tag))


class _Unrenderable:
    def render(self) -> str:
        raise ValueError("cannot draw this")


def _handler(params: Args, *, context: ToolContext) -> Any:
    assert context.tool is not None
    name = context.tool.name
    _mutate(context, name)
    if name == "returns_failure":
        return ToolResult.error(f"Nothing to do at {params.path}; pick another path.")
    if name == "raises_validation":
        raise ToolValidationError(f"{params.path!r} is not a valid target; use a .txt path.")
    if name == "raises_type_error":
        raise TypeError("unsupported operand")
    if name == "raises_other":
        raise RuntimeError("disk on fire")
    if name == "returns_dict":
        return {"path": params.path}
    if name == "returns_path_message":
        return ToolResult.ok(message=Path(params.path))  # type: ignore[arg-type]
    if name == "unrenderable":
        return ToolResult.ok(_Unrenderable())
    if name == "raises_evaluation":
        raise PromptEvaluationError("the operator stopped the run")
    return ToolResult.ok(Out(params.path), message=f"did {name}")


def _no_params(params: None, *, context: ToolContext) -> ToolResult[None]:
    _mutate(context, "no_params")
    return ToolResult.ok(None, "done")


async def _async_handler(params: Args, *, context: ToolContext) -> ToolResult[Out]:
    await asyncio.sleep(0)
    _mutate(context, "async_tool")
    return ToolResult.ok(Out(params.path))


class Gate:
    """A prompt-wide policy that misbehaves for some tools (after changing state)."""

    name = "gate"

    def check(self, tool: Tool[Any, Any], params: Any, *, context: ToolContext) -> PolicyDecision:
        context.session[Ran].append(Ran(f"check:{tool.name}"))
        if tool.name == "denied":
            _mutate(context, "gate-check")
            return PolicyDecision.deny("denied is off limits today; use allowed instead.")
        if tool.name == "check_raises":
            _mutate(context, "gate-check")
            raise KeyError("missing rule table")
        if tool.name == "check_aborts":
            raise PromptEvaluationError("the policy engine is gone")
        return PolicyDecision.allow()

    def on_result(
        self, tool: Tool[Any, Any], params: Any, result: ToolResult[Any], *, context: ToolContext
    ) -> None:
        context.session[Ran].append(Ran(f"on_result:{tool.name}"))
        context.session[Note].append(Note(f"recorded:{tool.name}"))
        if tool.name == "on_result_raises":
            raise LookupError("bookkeeping broke")


HANDLED = (
    "allowed",
    "denied",
    "returns_failure",
    "raises_validation",
    "raises_type_error",
    "raises_other",
    "returns_dict",
    "returns_path_message",
    "unrenderable",
    "raises_evaluation",
    "check_raises",
    "check_aborts",
    "on_result_raises",
)


def _tools() -> list[Tool[Any, Any]]:
    tools: list[Tool[Any, Any]] = [
        Tool[Args, Out](name=name, description=f"Tool {name}.", handler=_handler)
        for name in HANDLED
    ]
    tools.append(Tool[None, None](name="no_params", description="No params.", handler=_no_params))
    tools.append(Tool[Args, Out](name="async_tool", description="Async.", handler=_async_handler))
    tools.append(
        Tool[Args, Out](
            name="reader",
            description="Reads.",
            handler=_handler,
            annotations=ToolAnnotations(read_only=True),
        )
    )
    return tools


@dataclass
class Rig:
    """One test's own session, filesystem, ledger and executor."""

    session: Session = field(default_factory=lambda: Session(session_id="rig"))
    fs: InMemoryFilesystem = field(default_factory=InMemoryFilesystem)
    ledger: Ledger = field(default_factory=Ledger)
    deadline: Deadline | None = None
    executor: ToolExecutor = field(init=False)

    def __post_init__(self) -> None:
        prompt = Prompt(
            ns="test",
            key="executor",
            sections=[
                MarkdownSection(title="Tools", key="tools", template="Use them.", tools=_tools())
            ],
            policies=[Gate()],
            resources=ResourceRegistry.of(
                Binding.instance(Filesystem, self.fs), Binding.instance(Ledger, self.ledger)
            ),
        )
        self.session.register_log(Ran)
        assert self.session[Ran].policy is SlicePolicy.LOG
        self.executor = ToolExecutor(prompt.render(), session=self.session, deadline=self.deadline)
        # Prior state that every failure must leave exactly as it is.
        self.session[Note].append(Note("before"))
        self.fs.write("before.txt", "kept", mode="create")
        self.ledger.items.append("before")

    def state(self) -> tuple[object, ...]:
        files = {p: self.fs.read_text(p) for p in self.fs.glob("**")}
        return self.session[Note].all(), files, tuple(self.ledger.items)

    def events(self) -> tuple[ToolInvoked, ...]:
        return self.session[ToolInvoked].all()

    def ran(self) -> tuple[str, ...]:
        return tuple(r.what for r in self.session[Ran].all())


# ----------------------------------------------------------------------------- success


def test_success_keeps_effects_records_and_publishes() -> None:
    rig = Rig()
    result = rig.executor.execute("allowed", '{"path": "a.txt", "count": 2}', call_id="c1")
    assert result.success
    assert result.value == Out("a.txt")
    assert rig.fs.read_text("allowed.txt") == "allowed"
    assert rig.ledger.items == ["before", "allowed"]
    assert rig.session[Note].all() == (Note("before"), Note("allowed"), Note("recorded:allowed"))
    (event,) = rig.events()
    assert event.outcome is CallOutcome.OK
    assert event.success
    assert (event.prompt_ns, event.prompt_key, event.tool_name) == ("test", "executor", "allowed")
    assert event.params == Args("a.txt", 2)
    assert event.arguments == '{"path": "a.txt", "count": 2}'
    assert event.result is result
    assert event.rendered == result.render() == 'did allowed\n{"path":"a.txt"}'
    assert event.call_id == "c1"
    assert event.duration_s >= 0
    assert rig.ran() == ("check:allowed", "allowed", "on_result:allowed")


def test_arguments_may_be_a_mapping_or_bytes() -> None:
    rig = Rig()
    assert rig.executor.execute("allowed", {"path": "m"}).value == Out("m")
    assert rig.executor.execute("allowed", b'{"path": "b"}').value == Out("b")
    assert [e.params for e in rig.events()] == [Args("m"), Args("b")]


@pytest.mark.parametrize("arguments", [None, "", "{}", "{ }", " {\n} ", "null", {}, b"{}"])
def test_tool_without_params_accepts_every_spelling_of_no_arguments(arguments: Any) -> None:
    rig = Rig()
    result = rig.executor.execute("no_params", arguments)
    assert result.success, result.message
    assert rig.events()[-1].params is None


# ----------------------------------------------------------------------------- failure mapping


@dataclass(frozen=True)
class Row:
    tool: str
    arguments: Any
    outcome: CallOutcome
    message: tuple[str, ...]  # every fragment must appear in the result message
    handler_ran: bool
    parsed: bool = True


ROWS = {
    "unknown tool": Row(
        "nope",
        "{}",
        CallOutcome.INVALID,
        ("Unknown tool 'nope'", "Available tools: allowed, denied", "no_params", "reader"),
        handler_ran=False,
        parsed=False,
    ),
    "malformed json": Row(
        "allowed",
        '{"path": ',
        CallOutcome.INVALID,
        ("Invalid arguments for 'allowed'", "not valid JSON"),
        handler_ran=False,
        parsed=False,
    ),
    "unknown field": Row(
        "allowed",
        '{"path": "a", "colour": "red"}',
        CallOutcome.INVALID,
        ("unknown field 'colour'", "allowed fields: path, count"),
        handler_ran=False,
        parsed=False,
    ),
    "mistyped field": Row(
        "allowed",
        '{"path": "a", "count": "2"}',
        CallOutcome.INVALID,
        ("Invalid arguments for 'allowed'", "field 'count'", "'2'"),
        handler_ran=False,
        parsed=False,
    ),
    "arguments to a tool without params": Row(
        "no_params",
        '{"path": "a"}',
        CallOutcome.INVALID,
        ("Invalid arguments for 'no_params'", "takes no arguments", "call it with {}"),
        handler_ran=False,
        parsed=False,
    ),
    "policy denial": Row(
        "denied",
        '{"path": "a"}',
        CallOutcome.DENIED,
        ("Denied by policy 'gate'", "use allowed instead"),
        handler_ran=False,
    ),
    "handler returns success=False": Row(
        "returns_failure",
        '{"path": "a"}',
        CallOutcome.FAILED,
        ("Nothing to do at a; pick another path.",),
        handler_ran=True,
    ),
    "handler raises ToolValidationError": Row(
        "raises_validation",
        '{"path": "a"}',
        CallOutcome.ERROR,
        ("'a' is not a valid target; use a .txt path.",),
        handler_ran=True,
    ),
    "handler raises TypeError": Row(
        "raises_type_error",
        '{"path": "a"}',
        CallOutcome.ERROR,
        ("'raises_type_error'", "TypeError: unsupported operand"),
        handler_ran=True,
    ),
    "handler raises another exception": Row(
        "raises_other",
        '{"path": "a"}',
        CallOutcome.ERROR,
        ("Tool 'raises_other' failed", "RuntimeError: disk on fire"),
        handler_ran=True,
    ),
    "handler returns a non-ToolResult": Row(
        "returns_dict",
        '{"path": "a"}',
        CallOutcome.ERROR,
        ("'returns_dict' returned dict, not a ToolResult",),
        handler_ran=True,
    ),
    "handler returns a message that is not text": Row(
        "returns_path_message",
        '{"path": "a"}',
        CallOutcome.ERROR,
        ("'returns_path_message' returned a ToolResult whose message is a PosixPath",),
        handler_ran=True,
    ),
    "result render raises": Row(
        "unrenderable",
        '{"path": "a"}',
        CallOutcome.ERROR,
        ("'unrenderable' produced a result that cannot be rendered", "cannot draw this"),
        handler_ran=True,
    ),
    "policy check raises": Row(
        "check_raises",
        '{"path": "a"}',
        CallOutcome.DENIED,
        ("Policy 'gate' could not check the call", "KeyError", "was not run"),
        handler_ran=False,
    ),
    "policy on_result raises": Row(
        "on_result_raises",
        '{"path": "a"}',
        CallOutcome.ERROR,
        ("Policy 'gate' failed to record the call", "bookkeeping broke", "rolled back"),
        handler_ran=True,
    ),
}


@pytest.mark.parametrize("row", ROWS.values(), ids=ROWS.keys())
def test_failure_mapping(row: Row) -> None:
    rig = Rig()
    before = rig.state()
    snapshots_before = rig.ledger.snapshots

    result = rig.executor.execute(row.tool, row.arguments, call_id="failing")

    # The model gets an error result it can act on.
    assert result.success is False
    for fragment in row.message:
        assert fragment in result.message
    # Everything transactional is exactly as it was.
    assert rig.state() == before
    assert (row.tool in rig.ran()) is row.handler_ran
    if row.handler_ran or row.outcome is CallOutcome.DENIED:
        assert rig.ledger.snapshots == snapshots_before + 1
        assert rig.ledger.restores == 1
    # One event, on this path too.
    (event,) = rig.events()
    assert event.outcome is row.outcome
    assert event.tool_name == row.tool
    assert event.result is result
    assert event.rendered == result.render()
    assert event.arguments == row.arguments
    assert event.call_id == "failing"
    assert (event.params is not None) is row.parsed
    # A failing tool never ends the evaluation: the next call works.
    assert rig.executor.execute("allowed", {"path": "next"}).success
    assert rig.events()[-1].outcome is CallOutcome.OK


def test_failure_rows_really_mutate_before_failing() -> None:
    # Guards the rollback assertions above: these calls do change state when they succeed.
    rig = Rig()
    before = rig.state()
    rig.executor.execute("allowed", {"path": "x"})
    assert rig.state() != before


def test_denying_policy_never_runs_the_handler() -> None:
    rig = Rig()
    rig.executor.execute("denied", {"path": "a"})
    assert rig.ran() == ("check:denied", "gate-check")
    assert not rig.fs.exists("denied.txt")


def test_failed_calls_are_not_recorded_by_policies() -> None:
    rig = Rig()
    rig.executor.execute("returns_failure", {"path": "a"})
    assert "on_result:returns_failure" not in rig.ran()


def test_unknown_tool_that_is_not_a_string() -> None:
    rig = Rig()
    result = rig.executor.execute(None, "{}")  # type: ignore[arg-type]
    assert "Unknown tool None" in result.message
    assert rig.events()[0].tool_name == "None"


# ----------------------------------------------------------------------------- aborting


def test_prompt_evaluation_error_from_handler_is_raised_after_restore() -> None:
    rig = Rig()
    before = rig.state()
    with pytest.raises(PromptEvaluationError, match="operator stopped"):
        rig.executor.execute("raises_evaluation", {"path": "a"})
    assert rig.state() == before
    assert "raises_evaluation" in rig.ran()
    (event,) = rig.events()
    assert event.outcome is CallOutcome.ABORTED
    assert "operator stopped" in event.rendered


def test_prompt_evaluation_error_from_policy_check_is_raised_and_published() -> None:
    rig = Rig()
    before = rig.state()
    with pytest.raises(PromptEvaluationError, match="policy engine is gone"):
        rig.executor.execute("check_aborts", {"path": "a"})
    assert rig.state() == before
    (event,) = rig.events()
    assert event.outcome is CallOutcome.ABORTED
    assert event.tool_name == "check_aborts"


def test_expired_deadline_aborts_before_anything_runs() -> None:
    rig = Rig(deadline=Deadline.after(0))
    before = rig.state()
    with pytest.raises(DeadlineExceededError, match="tool call 'allowed'") as info:
        rig.executor.execute("allowed", {"path": "a"}, call_id="late")
    assert isinstance(info.value, PromptEvaluationError)
    assert rig.state() == before
    assert rig.ran() == ()
    assert rig.ledger.snapshots == 0
    (event,) = rig.events()
    assert event.outcome is CallOutcome.ABORTED
    assert event.call_id == "late"
    assert event.params == Args("a")
    assert "deadline has passed" in event.rendered


def test_deadline_is_checked_after_parsing() -> None:
    rig = Rig(deadline=Deadline.after(0))
    result = rig.executor.execute("allowed", "{broken")
    assert rig.events()[0].outcome is CallOutcome.INVALID
    assert not result.success


def test_unexpired_deadline_lets_calls_run() -> None:
    now = [0.0]
    rig = Rig(deadline=Deadline.after(10, clock=lambda: now[0]))
    assert rig.executor.execute("allowed", {"path": "a"}).success
    now[0] = 10.0
    with pytest.raises(DeadlineExceededError):
        rig.executor.execute("allowed", {"path": "b"})


def test_keyboard_interrupt_is_re_raised_after_restore_and_published() -> None:
    def interrupted(params: Args, *, context: ToolContext) -> ToolResult[Out]:
        context.session[Note].append(Note("half"))
        raise KeyboardInterrupt

    prompt = Prompt(
        ns="t",
        key="k",
        sections=[
            MarkdownSection(
                title="T",
                key="t",
                template="t",
                tools=[Tool[Args, Out](name="ki", description="d", handler=interrupted)],
            )
        ],
    )
    session = Session()
    executor = ToolExecutor(prompt.render(), session=session)
    with pytest.raises(KeyboardInterrupt):
        executor.execute("ki", {"path": "a"})
    assert session[Note].all() == ()
    assert session[ToolInvoked].latest().outcome is CallOutcome.ABORTED  # type: ignore[union-attr]


# ----------------------------------------------------------------------------- snapshots


def test_read_only_tools_take_no_snapshot() -> None:
    rig = Rig()
    assert rig.executor.execute("reader", {"path": "r"}).success
    assert rig.ledger.snapshots == 0
    rig.executor.execute("allowed", {"path": "w"})
    assert rig.ledger.snapshots == 1


def test_read_only_call_whose_recording_fails_leaves_no_policy_trace() -> None:
    class Recorder:
        name = "recorder"

        def check(self, tool: Any, params: Any, *, context: ToolContext) -> PolicyDecision:
            return PolicyDecision.allow()

        def on_result(self, tool: Any, params: Any, result: Any, *, context: ToolContext) -> None:
            context.session[Note].append(Note("recorded"))

    class Broken(Recorder):
        name = "broken"

        def on_result(self, tool: Any, params: Any, result: Any, *, context: ToolContext) -> None:
            raise RuntimeError("no")

    def look(params: Args, *, context: ToolContext) -> ToolResult[Out]:
        return ToolResult.ok(Out(params.path))

    reader = Tool[Args, Out](
        name="look", description="d", handler=look, annotations=ToolAnnotations(read_only=True)
    )
    prompt = Prompt(
        ns="t",
        key="k",
        sections=[MarkdownSection(title="T", key="t", template="t", tools=[reader])],
        policies=[Recorder(), Broken()],
    )
    session = Session()
    result = ToolExecutor(prompt.render(), session=session).execute("look", {"path": "a"})
    assert "failed to record" in result.message
    assert session[Note].all() == ()


def test_snapshot_failure_fails_the_call_without_running_it() -> None:
    class Fragile(Ledger):
        def snapshot(self) -> object:
            raise OSError("snapshot store full")

    fragile = Fragile()
    ran: list[str] = []

    def handler(params: Args, *, context: ToolContext) -> ToolResult[Out]:
        ran.append(params.path)
        return ToolResult.ok(Out(params.path))

    prompt = Prompt(
        ns="t",
        key="k",
        sections=[
            MarkdownSection(
                title="T",
                key="t",
                template="t",
                tools=[Tool[Args, Out](name="w", description="d", handler=handler)],
            )
        ],
        resources=ResourceRegistry.of(Binding.instance(Fragile, fragile)),
    )
    session = Session()
    result = ToolExecutor(prompt.render(), session=session).execute("w", {"path": "a"})
    assert not result.success
    assert "snapshot failed" in result.message
    assert "snapshot store full" in result.message
    assert ran == []
    assert session[ToolInvoked].latest().outcome is CallOutcome.ERROR  # type: ignore[union-attr]


def test_restore_failure_aborts_the_evaluation_and_still_restores_the_session() -> None:
    class Stuck(Ledger):
        def restore(self, snapshot: object) -> None:
            raise OSError("device gone")

    def handler(params: Args, *, context: ToolContext) -> ToolResult[Out]:
        context.session[Note].append(Note("partial"))
        return ToolResult.error("failed")

    prompt = Prompt(
        ns="t",
        key="k",
        sections=[
            MarkdownSection(
                title="T",
                key="t",
                template="t",
                tools=[Tool[Args, Out](name="w", description="d", handler=handler)],
            )
        ],
        resources=ResourceRegistry.of(Binding.instance(Stuck, Stuck())),
    )
    session = Session()
    executor = ToolExecutor(prompt.render(), session=session)
    with pytest.raises(PromptEvaluationError, match="Stuck in an unknown state"):
        executor.execute("w", {"path": "a"})
    assert session[Note].all() == ()
    assert session[ToolInvoked].latest().outcome is CallOutcome.ABORTED  # type: ignore[union-attr]


def test_caller_managed_resources_are_snapshotted_even_when_built_late() -> None:
    built: list[Ledger] = []

    def make(resolver: object) -> Ledger:
        built.append(Ledger())
        return built[-1]

    def handler(params: Args, *, context: ToolContext) -> ToolResult[Out]:
        context.resources.get(Ledger).items.append(params.path)
        return ToolResult.error("undo me")

    registry = ResourceRegistry.of(Binding(Ledger, make))
    prompt = Prompt(
        ns="t",
        key="k",
        sections=[
            MarkdownSection(
                title="T",
                key="t",
                template="t",
                tools=[Tool[Args, Out](name="w", description="d", handler=handler)],
            )
        ],
    )
    with registry.open() as resources:
        executor = ToolExecutor(prompt.render(), session=Session(), resources=resources)
        resources.get(Ledger).items.append("kept")  # built after the executor was made
        executor.execute("w", {"path": "a"})
        assert built[0].items == ["kept"]
        assert built[0].restores == 1


def test_executor_opens_and_closes_the_prompts_registry() -> None:
    closed: list[str] = []

    class Conn:
        def close(self) -> None:
            closed.append("conn")

    def handler(params: Args, *, context: ToolContext) -> ToolResult[Out]:
        context.resources.get(Conn)
        return ToolResult.ok(Out(params.path))

    prompt = Prompt(
        ns="t",
        key="k",
        sections=[
            MarkdownSection(
                title="T",
                key="t",
                template="t",
                tools=[Tool[Args, Out](name="w", description="d", handler=handler)],
            )
        ],
        resources=ResourceRegistry.of(Binding(Conn, lambda r: Conn())),
    )
    with ToolExecutor(prompt.render(), session=Session()) as executor:
        assert executor.execute("w", {"path": "a"}).success
        assert closed == []
    assert closed == ["conn"]


# ----------------------------------------------------------------------------- async


def test_execute_runs_an_async_handler_outside_a_loop() -> None:
    rig = Rig()
    result = rig.executor.execute("async_tool", {"path": "a"})
    assert result.success
    assert result.value == Out("a")
    assert rig.fs.read_text("async_tool.txt") == "async_tool"


def test_execute_inside_a_running_loop_asks_for_aexecute() -> None:
    rig = Rig()
    before = rig.state()

    async def main() -> ToolResult[Any]:
        return rig.executor.execute("async_tool", {"path": "a"})

    result = asyncio.run(main())
    assert not result.success
    assert "use aexecute()" in result.message
    assert rig.state() == before
    assert rig.events()[0].outcome is CallOutcome.ERROR


def test_aexecute_runs_async_and_sync_handlers_with_the_same_mapping() -> None:
    rig = Rig()
    before = rig.state()

    async def main() -> list[ToolResult[Any]]:
        return [
            await rig.executor.aexecute("async_tool", {"path": "a"}),
            await rig.executor.aexecute("allowed", '{"path": "b"}'),
            await rig.executor.aexecute("raises_other", {"path": "c"}),
            await rig.executor.aexecute("denied", {"path": "d"}),
        ]

    ok_async, ok_sync, failed, denied = asyncio.run(main())
    assert ok_async.value == Out("a")
    assert ok_sync.value == Out("b")
    assert "disk on fire" in failed.message
    assert "Denied by policy 'gate'" in denied.message
    assert [e.outcome for e in rig.events()] == [
        CallOutcome.OK,
        CallOutcome.OK,
        CallOutcome.ERROR,
        CallOutcome.DENIED,
    ]
    assert rig.fs.read_text("async_tool.txt") == "async_tool"
    assert rig.state() != before


def test_aexecute_re_raises_prompt_evaluation_error() -> None:
    rig = Rig()
    before = rig.state()
    with pytest.raises(PromptEvaluationError):
        asyncio.run(rig.executor.aexecute("raises_evaluation", {"path": "a"}))
    assert rig.state() == before
    assert rig.events()[0].outcome is CallOutcome.ABORTED


# ----------------------------------------------------------------------------- memory


def _writer_prompt(registry: ResourceRegistry) -> Prompt:
    def write(params: Args, *, context: ToolContext) -> ToolResult[Out]:
        context.resources.get(Filesystem).write(params.path, "x" * params.count, mode="create")
        return ToolResult.ok(Out(params.path))

    def peek(params: Args, *, context: ToolContext) -> ToolResult[Out]:
        return ToolResult.ok(Out(params.path))

    return Prompt(
        ns="t",
        key="k",
        sections=[
            MarkdownSection(
                title="T",
                key="t",
                template="t",
                tools=[
                    Tool[Args, Out](name="w", description="d", handler=write),
                    Tool[Args, Out](
                        name="peek",
                        description="d",
                        handler=peek,
                        annotations=ToolAnnotations(read_only=True),
                    ),
                ],
            )
        ],
        resources=registry,
    )


def test_resources_held_bytes_sums_the_memory_holders_they_built() -> None:
    from haversack import HoldsMemory

    shared = InMemoryFilesystem()
    shared.write("shared.txt", "s" * 100, mode="create")
    registry = ResourceRegistry.of(
        Binding(Filesystem, lambda r: InMemoryFilesystem()), Binding.instance(Ledger, Ledger())
    )
    assert isinstance(InMemoryFilesystem(), HoldsMemory)
    with registry.open(eager=True) as resources:
        assert resources.held_bytes() == 0
        resources.get(Filesystem).write("a.txt", "é" * 10, mode="create")
        assert resources.held_bytes() == 20  # UTF-8 bytes
    assert resources.held_bytes() == 0  # closed
    # A pre-built instance is shared, not the session's own: not counted.
    with ResourceRegistry.of(Binding.instance(Filesystem, shared)).open(eager=True) as resources:
        assert resources.held_bytes() == 0


def test_before_commit_refusal_fails_the_call_and_rolls_it_back() -> None:
    refusals: list[str | None] = [None, "over the budget (--max-memory)"]
    asked: list[int] = []

    def check() -> str | None:
        asked.append(executor.resources.held_bytes())
        return refusals[min(len(asked), 2) - 1]

    registry = ResourceRegistry.of(Binding(Filesystem, lambda r: InMemoryFilesystem()))
    executor = ToolExecutor(
        _writer_prompt(registry).render(), session=Session(), before_commit=check
    )
    with executor:
        fs = executor.resources.get(Filesystem)
        assert executor.execute("w", {"path": "a", "count": 5}).success
        refused = executor.execute("w", {"path": "b", "count": 7})
        assert not refused.success
        assert refused.message.startswith("over the budget (--max-memory)")
        assert asked == [5, 12]  # asked after the write, before the commit
        assert not fs.exists("b")
        assert fs.read_text("a") == "xxxxx"
        latest = executor.session[ToolInvoked].latest()
        assert latest is not None
        assert latest.outcome is CallOutcome.ERROR
        # A read-only call changes nothing: not asked.
        assert executor.execute("peek", {"path": "a"}).success
        assert asked == [5, 12]


def test_before_commit_that_raises_rolls_the_call_back() -> None:
    def check() -> str | None:
        raise RuntimeError("budget unreachable")

    registry = ResourceRegistry.of(Binding(Filesystem, lambda r: InMemoryFilesystem()))
    with ToolExecutor(
        _writer_prompt(registry).render(), session=Session(), before_commit=check
    ) as executor:
        result = executor.execute("w", {"path": "a"})
        assert not result.success
        assert "RuntimeError: budget unreachable" in result.message
        assert not executor.resources.get(Filesystem).exists("a")
