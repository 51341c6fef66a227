"""Executors in parallel threads share nothing; calls on one shared executor take turns."""

from __future__ import annotations

import threading
from dataclasses import dataclass

import pytest

from haversack import (
    Binding,
    Filesystem,
    MarkdownSection,
    Prompt,
    ReadBeforeWritePolicy,
    ResourceRegistry,
    SequentialDependencyPolicy,
    Session,
    Tool,
    ToolContext,
    ToolExecutor,
    ToolResult,
)
from haversack._policy_state import policy_values  # no public reader of policy state
from haversack_vfs import InMemoryFilesystem


def _rbw(**overrides):
    """The read-before-write policy over the file tools these tests define."""
    names = {"read_tools": ["read_file"], "write_tools": ["write_file", "edit_file"]}
    return ReadBeforeWritePolicy(**{**names, **overrides})


@dataclass(frozen=True)
class Mark:
    owner: str
    step: int


@dataclass(frozen=True)
class Step:
    owner: str
    step: int


@dataclass(frozen=True)
class PathArgs:
    path: str


def _step(params: Step, *, context: ToolContext) -> ToolResult[None]:
    context.session[Mark].append(Mark(params.owner, params.step))
    return ToolResult.ok(None)


def _read(params: PathArgs, *, context: ToolContext) -> ToolResult[None]:
    return ToolResult.ok(None)


def test_parallel_sessions_never_see_each_others_state() -> None:
    prompt = Prompt(
        ns="t",
        key="par",
        policies=[
            SequentialDependencyPolicy({"deploy": {"build"}}),
            # Only tools the prompt has: a name meaning none is refused.
            ReadBeforeWritePolicy(read_tools=["read_file"], write_tools=["write_file"]),
        ],
        sections=[
            MarkdownSection(
                title="S",
                key="s",
                template="s",
                tools=[
                    Tool[Step, None](name="build", description="b", handler=_step),
                    Tool[Step, None](name="deploy", description="d", handler=_step),
                    Tool[PathArgs, None](name="read_file", description="r", handler=_read),
                    Tool[PathArgs, None](name="write_file", description="w", handler=_read),
                ],
            )
        ],
    )
    rendered = prompt.render()  # one rendered prompt shared by both threads
    rounds = 200
    barrier = threading.Barrier(2)
    outcome: dict[str, tuple[Session, list[bool], list[BaseException]]] = {}

    def worker(owner: str, builds: bool) -> None:
        session = Session(session_id=owner)
        denials: list[bool] = []
        errors: list[BaseException] = []
        outcome[owner] = (session, denials, errors)
        registry = ResourceRegistry.of(Binding.instance(Filesystem, InMemoryFilesystem()))
        try:
            with ToolExecutor(rendered, session=session, resources=registry) as executor:
                barrier.wait()
                for i in range(rounds):
                    if builds:
                        executor.execute("build", {"owner": owner, "step": i})
                    executor.execute("read_file", {"path": f"{owner}/{i}.txt"})
                    result = executor.execute("deploy", {"owner": owner, "step": i})
                    denials.append(not result.success)
        except BaseException as exc:
            errors.append(exc)

    threads = [
        threading.Thread(target=worker, args=("builder", True)),
        threading.Thread(target=worker, args=("idle", False)),
    ]
    for thread in threads:
        thread.start()
    for thread in threads:
        thread.join()

    builder, builder_denials, builder_errors = outcome["builder"]
    idle, idle_denials, idle_errors = outcome["idle"]
    assert builder_errors == []
    assert idle_errors == []
    # The builder's successful builds never unlock the idle session's deploy.
    assert not any(builder_denials)
    assert all(idle_denials)
    assert {m.owner for m in builder[Mark].all()} == {"builder"}
    assert len(builder[Mark].all()) == 2 * rounds
    assert idle[Mark].all() == ()
    assert set(policy_values(builder, "sequential-dependency")) == {"build"}
    assert len(policy_values(idle, "sequential-dependency")) == 0
    assert {p.split("/")[0] for p in policy_values(builder, "read-before-write")} == {"builder"}
    assert {p.split("/")[0] for p in policy_values(idle, "read-before-write")} == {"idle"}
    assert len(policy_values(idle, "read-before-write")) == rounds


@dataclass(frozen=True)
class Slow:
    owner: str
    fail: bool


def _shared_executor(handler: object) -> ToolExecutor:
    fs = InMemoryFilesystem()
    tool = Tool[Slow, None](name="work", description="w", handler=handler)  # type: ignore[arg-type]
    section = MarkdownSection(title="S", key="s", template="s", tools=[tool])
    prompt = Prompt(ns="t", key="one", sections=[section])
    registry = ResourceRegistry.of(Binding.instance(Filesystem, fs))
    return ToolExecutor(prompt.render(), session=Session(), resources=registry)


def _effects(executor: ToolExecutor) -> tuple[set[str], set[str]]:
    fs = executor.resources.get(Filesystem)  # type: ignore[type-abstract]
    marks = {m.owner for m in executor.session[Mark].all()}
    return marks, {entry for entry in ("a.txt", "b.txt") if fs.exists(entry)}


def test_threads_sharing_one_executor_never_undo_each_others_work() -> None:
    # A fails after B has committed: A's rollback must not take B's writes with it.
    a_started = threading.Event()

    def handler(params: Slow, *, context: ToolContext) -> ToolResult[None]:
        context.session[Mark].append(Mark(params.owner, 0))
        context.resources.get(Filesystem).write(  # type: ignore[type-abstract]
            f"{params.owner}.txt", "x", mode="create"
        )
        if params.fail:
            a_started.set()
            b_done.wait(timeout=0.5)  # gives B the chance to commit in the middle of A
            return ToolResult.error("a failed")
        return ToolResult.ok(None)

    b_done = threading.Event()
    with _shared_executor(handler) as executor:
        results: dict[str, ToolResult[None]] = {}

        def call_a() -> None:
            results["a"] = executor.execute("work", {"owner": "a", "fail": True})

        def call_b() -> None:
            a_started.wait(timeout=5)
            results["b"] = executor.execute("work", {"owner": "b", "fail": False})
            b_done.set()

        threads = [threading.Thread(target=call_a), threading.Thread(target=call_b)]
        for thread in threads:
            thread.start()
        for thread in threads:
            thread.join(timeout=10)
        assert not results["a"].success
        assert results["b"].success
        assert _effects(executor) == ({"b"}, {"b.txt"})


def test_tasks_sharing_one_executor_run_their_calls_one_at_a_time() -> None:
    import asyncio

    running: list[str] = []
    overlaps: list[tuple[str, ...]] = []

    async def handler(params: Slow, *, context: ToolContext) -> ToolResult[None]:
        running.append(params.owner)
        overlaps.append(tuple(running))
        context.session[Mark].append(Mark(params.owner, 0))
        context.resources.get(Filesystem).write(  # type: ignore[type-abstract]
            f"{params.owner}.txt", "x", mode="create"
        )
        await asyncio.sleep(0.01)
        running.remove(params.owner)
        return ToolResult.error("failed") if params.fail else ToolResult.ok(None)

    async def main(executor: ToolExecutor) -> list[ToolResult[None]]:
        return await asyncio.gather(
            executor.aexecute("work", {"owner": "a", "fail": True}),
            executor.aexecute("work", {"owner": "b", "fail": False}),
        )

    with _shared_executor(handler) as executor:
        first, second = asyncio.run(main(executor))
        assert not first.success
        assert second.success, second.message
        assert overlaps == [("a",), ("b",)]
        assert _effects(executor) == ({"b"}, {"b.txt"})


def test_a_handler_calling_its_own_executor_is_refused_not_deadlocked() -> None:
    box: list[ToolExecutor] = []

    def handler(params: Slow, *, context: ToolContext) -> ToolResult[None]:
        context.session[Mark].append(Mark(params.owner, 0))
        if params.owner == "outer":
            return box[0].execute("work", {"owner": "inner", "fail": False})
        return ToolResult.ok(None)

    with _shared_executor(handler) as executor:
        box.append(executor)
        result = executor.execute("work", {"owner": "outer", "fail": False})
        assert not result.success
        assert "tool calls do not nest" in result.message
        assert executor.session[Mark].all() == ()  # the outer call was rolled back
        # The turn was given back: the executor still works.
        assert executor.execute("work", {"owner": "after", "fail": False}).success


def test_a_blocking_execute_inside_the_loop_is_refused_while_a_task_holds_the_turn() -> None:
    import asyncio

    from haversack.errors import ResourceError

    async def slow(params: Slow, *, context: ToolContext) -> ToolResult[None]:
        await asyncio.sleep(0.05)
        return ToolResult.ok(None)

    async def main(executor: ToolExecutor) -> ToolResult[None]:
        pending = asyncio.ensure_future(executor.aexecute("work", {"owner": "a", "fail": False}))
        await asyncio.sleep(0.01)  # the task now holds the turn, awaiting its handler
        with pytest.raises(ResourceError, match=r"use aexecute\(\) there"):
            executor.execute("work", {"owner": "b", "fail": False})
        return await pending

    with _shared_executor(slow) as executor:
        assert asyncio.run(main(executor)).success
