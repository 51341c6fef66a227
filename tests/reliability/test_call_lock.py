"""Readers and writers on one executor (area ``concurrency``): read-only calls may overlap,
a writer never overlaps anything, and no rollback is inconsistent.

Hypothesis generates hostile mixes of calls on ONE executor from threads (``execute``),
asyncio tasks (``aexecute``) and read-only turns (``aexecute_many``): instrumented readers
and writers (sync and async handlers, some failing after they changed the session) and the
real file tools (a new file, a refused overwrite, reads and listings). A monitor inside the
handlers records who runs at once. A failure is a writer running beside any other call, a
committed writer's mark or file lost, a failed writer's mark or file left behind, or a log
that does not hold each finished call exactly once with its outcome. Two readers that can
only finish together (each waits for the other) prove that readers do overlap.
"""

from __future__ import annotations

import asyncio
import sys
import threading
from concurrent.futures import ThreadPoolExecutor
from dataclasses import dataclass, field
from typing import Any

from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from haversack import (
    MarkdownSection,
    Session,
    Tool,
    ToolAnnotations,
    ToolContext,
    ToolExecutor,
    ToolInvoked,
    ToolResult,
)
from haversack.testing import compose_packs

from ._harness import budget

HANG_GUARD_S = 30.0  # only bounds a broken run


class Monitor:
    """Who is inside a handler right now; every overlap a writer takes part in."""

    def __init__(self) -> None:
        self.lock = threading.Lock()
        self.readers = 0
        self.writers = 0
        self.max_readers = 0
        self.violations: list[str] = []

    def enter(self, writer: bool, tag: str) -> None:
        with self.lock:
            if writer and (self.readers or self.writers):
                self.violations.append(f"writer {tag} ran beside {self.readers}r/{self.writers}w")
            if not writer and self.writers:
                self.violations.append(f"reader {tag} ran beside a writer")
            if writer:
                self.writers += 1
            else:
                self.readers += 1
                self.max_readers = max(self.max_readers, self.readers)

    def leave(self, writer: bool) -> None:
        with self.lock:
            if writer:
                self.writers -= 1
            else:
                self.readers -= 1


MONITOR: dict[int, Monitor] = {}  # one per executor (the tools find it by the session)
MEETING: dict[int, threading.Barrier] = {}


@dataclass(frozen=True)
class Params:
    tag: str = field(metadata={"description": "Who calls."})
    fail: bool = False


@dataclass(frozen=True)
class Mark:
    tag: str


def _monitor(context: ToolContext) -> Monitor:
    return MONITOR[id(context.session)]


def _work(context: ToolContext, params: Params, writer: bool) -> ToolResult[None]:
    monitor = _monitor(context)
    monitor.enter(writer, params.tag)
    try:
        if writer:
            context.session[Mark].append(Mark(params.tag))
        for _ in range(50):  # a window for others to come in (they must not)
            pass
        if params.fail:
            raise RuntimeError(f"{params.tag} failed after its change")
        return ToolResult.ok(None, message=params.tag)
    finally:
        monitor.leave(writer)


async def _awork(context: ToolContext, params: Params, writer: bool) -> ToolResult[None]:
    monitor = _monitor(context)
    monitor.enter(writer, params.tag)
    try:
        if writer:
            context.session[Mark].append(Mark(params.tag))
        await asyncio.sleep(0)
        await asyncio.sleep(0)
        if params.fail:
            raise RuntimeError(f"{params.tag} failed after its change")
        return ToolResult.ok(None, message=params.tag)
    finally:
        monitor.leave(writer)


def look(params: Params, *, context: ToolContext) -> ToolResult[None]:
    return _work(context, params, writer=False)


def mark(params: Params, *, context: ToolContext) -> ToolResult[None]:
    return _work(context, params, writer=True)


async def alook(params: Params, *, context: ToolContext) -> ToolResult[None]:
    return await _awork(context, params, writer=False)


async def amark(params: Params, *, context: ToolContext) -> ToolResult[None]:
    return await _awork(context, params, writer=True)


def meet(params: Params, *, context: ToolContext) -> ToolResult[None]:
    """Read-only; returns only once another ``meet`` call is running too."""
    MEETING[id(context.session)].wait(HANG_GUARD_S)
    return ToolResult.ok(None, message="met")


READ_ONLY = ToolAnnotations(read_only=True)
SECTION = MarkdownSection(
    title="Lock",
    key="lock",
    template="Calls.",
    tools=[
        Tool[Params, None](name="look", description="Read.", handler=look, annotations=READ_ONLY),
        Tool[Params, None](name="alook", description="Read.", handler=alook, annotations=READ_ONLY),
        Tool[Params, None](name="mark", description="Write.", handler=mark),
        Tool[Params, None](name="amark", description="Write.", handler=amark),
        Tool[Params, None](name="meet", description="Meet.", handler=meet, annotations=READ_ONLY),
    ],
)

#: What one call is: (tool, fail). The file tools take their arguments from the tag.
CALL = st.tuples(
    st.sampled_from(("look", "alook", "mark", "amark", "write", "clobber", "read", "ls")),
    st.booleans(),
)
WORKER = st.tuples(
    st.sampled_from(("thread", "task", "turn")), st.lists(CALL, min_size=1, max_size=6)
)


def _arguments(tool: str, fail: bool, tag: str) -> tuple[str, dict[str, Any]]:
    """The tool name and arguments of one generated call."""
    if tool == "write":
        return "write_file", {"path": f"files/{tag}.txt", "content": tag}
    if tool == "clobber":
        return "write_file", {"path": "seed.txt", "content": tag}
    if tool == "read":
        return "read_file", {"path": "seed.txt"}
    if tool == "ls":
        return "ls", {"path": ""}
    return tool, {"tag": tag, "fail": fail}


def _run_mix(prompt: Any, workers: list[tuple[str, list[tuple[str, bool]]]]) -> list[str]:
    """Every worker's calls on one executor at once; the problems found."""
    session = Session()
    MONITOR[id(session)] = monitor = Monitor()
    outcomes: dict[str, tuple[str, bool]] = {}  # call id -> (tool, success)
    problems: list[str] = []
    with ToolExecutor(prompt.render(), session=session) as executor:
        executor.execute("write_file", {"path": "seed.txt", "content": "seed\n"})
        executor.execute("read_file", {"path": "seed.txt"})

        def plan(w: int) -> list[tuple[str, str, dict[str, Any]]]:
            out = []
            for i, (tool, fail) in enumerate(workers[w][1]):
                name, arguments = _arguments(tool, fail, f"w{w}c{i}")
                out.append((f"w{w}c{i}", name, arguments))
            return out

        def record(cid: str, name: str, result: Any) -> None:
            outcomes[cid] = (name, result.success)

        def in_thread(w: int) -> None:
            for cid, name, arguments in plan(w):
                record(cid, name, executor.execute(name, arguments, call_id=cid))

        async def in_task(w: int) -> None:
            for cid, name, arguments in plan(w):
                record(cid, name, await executor.aexecute(name, arguments, call_id=cid))
                await asyncio.sleep(0)

        async def in_turn(w: int) -> None:
            calls = plan(w)
            results = await executor.aexecute_many([(n, a, c) for c, n, a in calls])
            for (cid, name, _), result in zip(calls, results, strict=True):
                record(cid, name, result)

        async def tasks() -> None:
            await asyncio.gather(
                *(
                    (in_task if kind == "task" else in_turn)(w)
                    for w, (kind, _) in enumerate(workers)
                    if kind != "thread"
                )
            )

        interval = sys.getswitchinterval()
        sys.setswitchinterval(1e-6)  # switch threads often, in the middle of calls
        try:
            with ThreadPoolExecutor(max_workers=len(workers) + 1) as pool:
                futures = [
                    pool.submit(in_thread, w)
                    for w, (kind, _) in enumerate(workers)
                    if kind == "thread"
                ]
                futures.append(pool.submit(asyncio.run, tasks()))
                for future in futures:
                    future.result(timeout=HANG_GUARD_S * 4)
        finally:
            sys.setswitchinterval(interval)

        problems += monitor.violations
        marks = [m.tag for m in session[Mark].all()]
        files = executor.execute("ls", {"path": "files"}).render()
        seed = executor.execute("read_file", {"path": "seed.txt"}).render()
        logged: dict[str, list[bool]] = {}
        for event in session[ToolInvoked].all():
            if event.call_id in outcomes:
                logged.setdefault(event.call_id, []).append(event.result.success)
    for cid, (name, success) in sorted(outcomes.items()):
        if logged.get(cid) != [success]:
            problems.append(f"{cid} {name}: returned success={success}, logged {logged.get(cid)}")
        if name in ("mark", "amark") and (cid in marks) != success:
            problems.append(f"{cid} {name}: success={success} but its mark is {cid in marks}")
        # A new file is there exactly when its call succeeded (an overwrite of the seed is
        # always refused: write_file never overwrites, and it names no file of its own).
        if name == "write_file" and (f"{cid}.txt" in files) != success:
            problems.append(f"{cid}: success={success}, file present={f'{cid}.txt' in files}")
    if "seed" not in seed:
        problems.append(f"seed.txt lost its content: {seed[:100]}")
    if len(marks) != len(set(marks)):
        problems.append(f"marks recorded twice: {marks}")
    del MONITOR[id(session)]
    return problems


def test_hostile_mixes_of_readers_and_writers_on_one_executor(figure) -> None:
    fig = figure("concurrency", "readers/writer lock: hostile mixes on one executor")
    prompt = compose_packs(["vfs"], sections=[SECTION])
    calls = 0

    @settings(
        max_examples=budget(25, 400),
        deadline=None,
        database=None,
        suppress_health_check=list(HealthCheck),
    )
    @given(workers=st.lists(WORKER, min_size=2, max_size=6))
    def case(workers) -> None:
        nonlocal calls
        fig.case()
        calls += sum(len(w[1]) for w in workers)
        for problem in _run_mix(prompt, workers):
            fig.problem(f"{[(k, c) for k, c in workers]}: {problem}")

    case()
    fig.note("calls", calls)
    fig.assert_clean()


def test_read_only_calls_overlap(figure) -> None:
    # Each call returns only once the other runs too: serialised readers would wait for
    # each other until the guard and fail.
    fig = figure("concurrency", "readers/writer lock: read-only calls overlap")
    prompt = compose_packs(["vfs"], sections=[SECTION])
    for _ in range(budget(5, 50)):
        fig.case()
        session = Session()
        MEETING[id(session)] = threading.Barrier(2)
        try:
            with (
                ToolExecutor(prompt.render(), session=session) as executor,
                ThreadPoolExecutor(max_workers=2) as pool,
            ):
                futures = [pool.submit(executor.execute, "meet", {"tag": str(i)}) for i in range(2)]
                results = [f.result(timeout=HANG_GUARD_S * 2) for f in futures]
            for result in results:
                fig.check(result.success, f"a meeting reader failed: {result.render()[:200]}")
        finally:
            del MEETING[id(session)]
    fig.assert_clean()
