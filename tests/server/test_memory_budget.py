"""The HTTP server's memory budget on its own: asked on the event loop (an async handler)
and from a tool's thread (a sync one), closing idle sessions idlest first, then refusing."""

from __future__ import annotations

from dataclasses import dataclass

import anyio

from haversack import (
    Binding,
    Filesystem,
    MarkdownSection,
    Prompt,
    ResourceRegistry,
    Session,
    Tool,
    ToolContext,
    ToolExecutor,
    ToolResult,
)
from haversack.server._memory_budget import MemoryBudget
from haversack_vfs import InMemoryFilesystem


@dataclass(frozen=True)
class Write:
    path: str
    size: int


def _executor(budget: MemoryBudget) -> ToolExecutor:
    def write(params: Write, *, context: ToolContext) -> ToolResult[None]:
        context.resources.get(Filesystem).write(params.path, "x" * params.size, mode="create")
        return ToolResult.ok(None)

    async def awrite(params: Write, *, context: ToolContext) -> ToolResult[None]:
        return write(params, context=context)

    prompt = Prompt(
        ns="t",
        key="k",
        sections=[
            MarkdownSection(
                title="T",
                key="t",
                template="t",
                tools=[
                    Tool[Write, None](name="write", description="d", handler=write),
                    Tool[Write, None](name="awrite", description="d", handler=awrite),
                ],
            )
        ],
        resources=ResourceRegistry.of(Binding(Filesystem, lambda r: InMemoryFilesystem())),
    )
    return ToolExecutor(prompt.render(), session=Session(), before_commit=budget.check)


def test_idle_sessions_are_closed_idlest_first_then_calls_are_refused() -> None:
    budget = MemoryBudget(1000)
    executors = {name: _executor(budget) for name in ("old", "newer", "busy")}
    idle = ["old", "newer"]  # idlest first; "busy" serves the calls below
    evicted: list[str] = []

    def evict(session_id: str) -> bool:
        idle.remove(session_id)
        evicted.append(session_id)
        return True

    budget.idle_order = lambda: list(idle)
    budget.evict = evict

    async def scenario() -> None:
        for name, executor in executors.items():
            budget.attach(name, executor)
        assert (await executors["old"].aexecute("awrite", {"path": "a", "size": 400})).success
        assert executors["newer"].execute("write", {"path": "a", "size": 400}).success
        busy = executors["busy"]
        # On the loop (async handler): 1,200 bytes: the idlest ("old") is closed.
        assert (await busy.aexecute("awrite", {"path": "a", "size": 400})).success
        assert evicted == ["old"]
        # From the tool's thread (sync handler): "newer" is closed next.
        grew = await anyio.to_thread.run_sync(
            lambda: busy.execute("write", {"path": "b", "size": 500})
        )
        assert grew.success, grew.message
        assert evicted == ["old", "newer"]
        assert budget.held() == 900
        # Nothing idle is left: the call fails, is rolled back, and says why.
        refused = await anyio.to_thread.run_sync(
            lambda: busy.execute("write", {"path": "c", "size": 200})
        )
        assert not refused.success
        assert "--max-memory" in refused.message
        assert "rolled back" in refused.message
        assert not busy.resources.get(Filesystem).exists("c")
        assert budget.held() == 900

    try:
        anyio.run(scenario)
    finally:
        for executor in executors.values():
            executor.close()
