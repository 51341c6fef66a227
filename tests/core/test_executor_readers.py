"""Read-only calls on one executor overlap; any other call runs alone (readers/writer).

Every ordering here is proven with events, never with timing: a handler that must overlap
another waits for the other's event (and gives up, failing the test, after a bounded wait).
"""

from __future__ import annotations

import asyncio
import threading
from collections.abc import Callable
from dataclasses import dataclass
from typing import Any

import pytest

from haversack import (
    Binding,
    Filesystem,
    MarkdownSection,
    PolicyDecision,
    Prompt,
    ReadBeforeWritePolicy,
    ResourceRegistry,
    Scope,
    Session,
    Tool,
    ToolAnnotations,
    ToolContext,
    ToolExecutor,
    ToolResult,
)
from haversack._policy_state import policy_values
from haversack_vfs import InMemoryFilesystem

READ_ONLY = ToolAnnotations(read_only=True)
WAIT_S = 5.0  # a bound on waiting for an event that the code under test must set


@dataclass(frozen=True)
class PathArgs:
    path: str


@dataclass(frozen=True)
class Mark:
    text: str


class Gates:
    """Named asyncio events, created on the running loop."""

    def __init__(self) -> None:
        self._events: dict[str, asyncio.Event] = {}

    def __getitem__(self, name: str) -> asyncio.Event:
        return self._events.setdefault(name, asyncio.Event())

    async def wait(self, name: str) -> bool:
        try:
            await asyncio.wait_for(self[name].wait(), WAIT_S)
        except TimeoutError:
            return False
        return True


def _executor(
    tools: list[Tool[Any, Any]], *, policies: list[Any] | None = None, fs: Filesystem | None = None
) -> ToolExecutor:
    prompt = Prompt(
        ns="t",
        key="readers",
        sections=[MarkdownSection(title="S", key="s", template="s", tools=tools)],
        policies=policies or [],
    )
    registry = ResourceRegistry.of(
        Binding.instance(Filesystem, fs if fs is not None else InMemoryFilesystem())
    )
    return ToolExecutor(prompt.render(), session=Session(), resources=registry)


def _reader(name: str, handler: Callable[..., Any]) -> Tool[PathArgs, None]:
    return Tool[PathArgs, None](name=name, description="r", handler=handler, annotations=READ_ONLY)


def _writer(name: str, handler: Callable[..., Any]) -> Tool[PathArgs, None]:
    return Tool[PathArgs, None](name=name, description="w", handler=handler)


async def _turns(count: int = 20) -> None:
    """Let every ready task run a few steps (no clock involved)."""
    for _ in range(count):
        await asyncio.sleep(0)


def _until(condition: Callable[[], bool]) -> None:
    """Wait for another thread to bring ``condition`` about (bounded; no timing asserted)."""
    done = threading.Event()
    for _ in range(int(WAIT_S / 0.001)):
        if condition():
            return
        done.wait(0.001)
    raise AssertionError("the condition never came about")


def test_two_async_read_only_calls_overlap() -> None:
    gates = Gates()

    async def left(params: PathArgs, *, context: ToolContext) -> ToolResult[None]:
        gates["left"].set()
        met = await gates.wait("right")
        return ToolResult.ok(None, "met" if met else "alone")

    async def right(params: PathArgs, *, context: ToolContext) -> ToolResult[None]:
        gates["right"].set()
        met = await gates.wait("left")
        return ToolResult.ok(None, "met" if met else "alone")

    executor = _executor([_reader("left", left), _reader("right", right)])

    async def main() -> list[ToolResult[Any]]:
        return await asyncio.gather(
            executor.aexecute("left", {"path": "a"}), executor.aexecute("right", {"path": "b"})
        )

    assert [r.message for r in asyncio.run(main())] == ["met", "met"]


def test_a_writer_waits_for_the_readers_in_flight() -> None:
    gates = Gates()
    order: list[str] = []

    async def read(params: PathArgs, *, context: ToolContext) -> ToolResult[None]:
        order.append(f"read {params.path} start")
        await gates.wait(f"finish {params.path}")
        order.append(f"read {params.path} end")
        return ToolResult.ok(None)

    async def write(params: PathArgs, *, context: ToolContext) -> ToolResult[None]:
        order.append("write")
        return ToolResult.ok(None)

    executor = _executor([_reader("read", read), _writer("write", write)])

    async def main() -> None:
        first = asyncio.ensure_future(executor.aexecute("read", {"path": "1"}))
        second = asyncio.ensure_future(executor.aexecute("read", {"path": "2"}))
        await _turns()
        assert order == ["read 1 start", "read 2 start"]
        writer = asyncio.ensure_future(executor.aexecute("write", {"path": "w"}))
        await _turns()
        assert "write" not in order  # both readers still hold the lock
        gates["finish 1"].set()
        await _turns()
        assert "write" not in order  # one reader still does
        gates["finish 2"].set()
        results = await asyncio.gather(first, second, writer)
        assert all(r.success for r in results)

    asyncio.run(main())
    assert order[-1] == "write"


def test_readers_wait_for_a_writer_and_a_waiting_writer_is_not_starved() -> None:
    gates = Gates()
    order: list[str] = []

    async def read(params: PathArgs, *, context: ToolContext) -> ToolResult[None]:
        order.append(f"read {params.path}")
        await gates.wait(f"finish {params.path}")
        return ToolResult.ok(None)

    async def write(params: PathArgs, *, context: ToolContext) -> ToolResult[None]:
        order.append(f"write {params.path}")
        await gates.wait(f"finish {params.path}")
        return ToolResult.ok(None)

    executor = _executor([_reader("read", read), _writer("write", write)])

    async def main() -> None:
        calls = [asyncio.ensure_future(executor.aexecute("read", {"path": "r1"}))]
        await _turns()
        calls.append(asyncio.ensure_future(executor.aexecute("write", {"path": "w"})))
        await _turns()
        # A reader arriving while the writer waits queues behind it (no starvation).
        calls.append(asyncio.ensure_future(executor.aexecute("read", {"path": "r2"})))
        await _turns()
        assert order == ["read r1"]
        gates["finish r1"].set()
        await _turns()
        assert order == ["read r1", "write w"]  # the writer runs alone: r2 still waits
        gates["finish w"].set()
        await _turns()
        assert order == ["read r1", "write w", "read r2"]
        gates["finish r2"].set()
        assert all(r.success for r in await asyncio.gather(*calls))

    asyncio.run(main())


def test_read_only_calls_in_threads_overlap_and_a_writer_thread_waits() -> None:
    entered = {name: threading.Event() for name in ("a", "b")}
    release = threading.Event()
    wrote = threading.Event()

    def read(params: PathArgs, *, context: ToolContext) -> ToolResult[None]:
        entered[params.path].set()
        other = entered["b" if params.path == "a" else "a"]
        met = other.wait(WAIT_S)
        release.wait(WAIT_S)
        return ToolResult.ok(None, "met" if met else "alone")

    def write(params: PathArgs, *, context: ToolContext) -> ToolResult[None]:
        wrote.set()
        return ToolResult.ok(None, "wrote")

    executor = _executor([_reader("read", read), _writer("write", write)])
    results: dict[str, ToolResult[Any]] = {}

    def run(key: str, tool: str, path: str) -> None:
        results[key] = executor.execute(tool, {"path": path})

    readers = [threading.Thread(target=run, args=(p, "read", p)) for p in ("a", "b")]
    for thread in readers:
        thread.start()
    assert entered["a"].wait(WAIT_S)
    assert entered["b"].wait(WAIT_S)
    writer = threading.Thread(target=run, args=("w", "write", "w"))
    writer.start()
    _until(lambda: executor._lock.waiting == 1)  # the writer is in line behind the readers
    assert not wrote.is_set()
    assert executor._lock.readers == 2
    release.set()
    for thread in [*readers, writer]:
        thread.join(WAIT_S)
    assert results["a"].message == "met"
    assert results["b"].message == "met"
    assert results["w"].message == "wrote"


def test_reads_recorded_by_overlapping_readers_survive_a_failing_writer() -> None:
    fs = InMemoryFilesystem()
    for name in ("a.txt", "b.txt", "c.txt"):
        fs.write(name, "old", mode="create")
    gates = Gates()

    async def read_file(params: PathArgs, *, context: ToolContext) -> ToolResult[None]:
        gates[params.path].set()
        other = "b.txt" if params.path == "a.txt" else "a.txt"
        await gates.wait(other)  # both reads are in flight together
        return ToolResult.ok(None, context.filesystem.read_text(params.path))

    def write_file(params: PathArgs, *, context: ToolContext) -> ToolResult[None]:
        context.filesystem.write(params.path, "new", mode="overwrite")
        return ToolResult.error("the write failed after changing the file")

    policy = ReadBeforeWritePolicy(read_tools=["read_file"], write_tools=["write_file"])
    executor = _executor(
        [_reader("read_file", read_file), _writer("write_file", write_file)],
        policies=[policy],
        fs=fs,
    )

    async def main() -> list[ToolResult[Any]]:
        return await asyncio.gather(
            executor.aexecute("read_file", {"path": "a.txt"}),
            executor.aexecute("read_file", {"path": "b.txt"}),
        )

    assert all(r.success for r in asyncio.run(main()))
    assert set(policy_values(executor.session, "read-before-write")) == {"a.txt", "b.txt"}
    failed = executor.execute("write_file", {"path": "a.txt"})
    assert not failed.success
    # The writer's effects are undone; what the readers recorded before it stays.
    assert fs.read_text("a.txt") == "old"
    assert set(policy_values(executor.session, "read-before-write")) == {"a.txt", "b.txt"}
    # c.txt was never read, so writing it is still refused.
    denied = executor.execute("write_file", {"path": "c.txt"})
    assert "has not been read" in denied.message


def test_a_reader_whose_recording_fails_does_not_undo_an_overlapping_readers_records() -> None:
    class Recorder:
        name = "recorder"

        def check(self, tool: Any, params: Any, *, context: ToolContext) -> PolicyDecision:
            return PolicyDecision.allow()

        def on_result(self, tool: Any, params: Any, result: Any, *, context: ToolContext) -> None:
            context.session[Mark].append(Mark(params.path))
            if params.path == "fail-me":
                raise RuntimeError("cannot record")

    entered = {name: threading.Event() for name in ("kept", "fail-me")}

    def read(params: PathArgs, *, context: ToolContext) -> ToolResult[None]:
        entered[params.path].set()
        other = "fail-me" if params.path == "kept" else "kept"
        return ToolResult.ok(None, "met" if entered[other].wait(WAIT_S) else "alone")

    executor = _executor([_reader("read", read)], policies=[Recorder()])
    results: dict[str, ToolResult[Any]] = {}

    def run(path: str) -> None:
        results[path] = executor.execute("read", {"path": path})

    threads = [threading.Thread(target=run, args=(path,)) for path in entered]
    for thread in threads:
        thread.start()
    for thread in threads:
        thread.join(WAIT_S)
    assert results["kept"].success
    assert results["kept"].message == "met"
    assert "failed to record" in results["fail-me"].message
    assert executor.session[Mark].all() == (Mark("kept"),)


def test_overlapping_readers_share_one_tool_call_scope_closed_by_the_last() -> None:
    made: list[Conn] = []

    class Conn:
        def __init__(self) -> None:
            self.closed = False
            made.append(self)

        def close(self) -> None:
            self.closed = True

    gates = Gates()

    async def use(params: PathArgs, *, context: ToolContext) -> ToolResult[None]:
        conn = context.resources.get(Conn)
        gates[params.path].set()
        await gates.wait("b" if params.path == "a" else "a")
        return ToolResult.ok(None, "open" if not conn.closed else "closed")

    prompt = Prompt(
        ns="t",
        key="scope",
        sections=[MarkdownSection(title="S", key="s", template="s", tools=[_reader("use", use)])],
        resources=ResourceRegistry.of(Binding(Conn, lambda _: Conn(), scope=Scope.TOOL_CALL)),
    )
    executor = ToolExecutor(prompt.render(), session=Session())

    async def main() -> list[ToolResult[Any]]:
        return await asyncio.gather(
            executor.aexecute("use", {"path": "a"}), executor.aexecute("use", {"path": "b"})
        )

    assert [r.message for r in asyncio.run(main())] == ["open", "open"]
    assert len(made) == 1
    assert made[0].closed
    # The scope is gone with its last reader: the next call gets a fresh one.
    assert executor.execute("use", {"path": "x"}).message == "open"
    assert len(made) == 2
    assert made[1].closed


def test_a_read_only_handler_calling_its_own_executor_is_refused() -> None:
    box: list[ToolExecutor] = []

    async def outer(params: PathArgs, *, context: ToolContext) -> ToolResult[None]:
        return await box[0].aexecute("inner", {"path": "x"})

    async def inner(params: PathArgs, *, context: ToolContext) -> ToolResult[None]:
        return ToolResult.ok(None)

    executor = _executor([_reader("outer", outer), _reader("inner", inner)])
    box.append(executor)
    result = asyncio.run(executor.aexecute("outer", {"path": "x"}))
    assert not result.success
    assert "tool calls do not nest" in result.message
    assert executor.execute("inner", {"path": "x"}).success  # the lock was given back


def test_a_cancelled_waiter_leaves_the_line() -> None:
    gates = Gates()

    async def write(params: PathArgs, *, context: ToolContext) -> ToolResult[None]:
        await gates.wait(f"finish {params.path}")
        return ToolResult.ok(None, params.path)

    executor = _executor([_writer("write", write)])

    async def main() -> None:
        first = asyncio.ensure_future(executor.aexecute("write", {"path": "1"}))
        await _turns()
        waiting = asyncio.ensure_future(executor.aexecute("write", {"path": "2"}))
        await _turns()
        waiting.cancel()
        with pytest.raises(asyncio.CancelledError):
            await waiting
        gates["finish 1"].set()
        assert (await first).message == "1"
        gates["finish 3"].set()
        assert (await executor.aexecute("write", {"path": "3"})).message == "3"

    asyncio.run(main())
