"""ToolExecutor: per-call overhead of ``execute`` and whether it grows over a long session.

The workload is a trivial tool (small dataclass params, small dataclass result) called with
JSON arguments, under one policy (``ReadBeforeWritePolicy``, which records every call's path
in the session) with snapshots on: a session with a few STATE slices and one snapshotting
resource (an ``InMemoryFilesystem`` bound as the workspace). Each call uses a new path, so
the policy's state, the ``ToolInvoked`` log and the session all grow as the session does.
The floor is the handler called directly, in the same run.
"""

from __future__ import annotations

import gc
import statistics
import time
from dataclasses import dataclass
from typing import Any

from _harness import Result, Sample, result

from haversack import (
    Binding,
    Filesystem,
    MarkdownSection,
    Prompt,
    ReadBeforeWritePolicy,
    ResourceRegistry,
    Session,
    Tool,
    ToolContext,
    ToolExecutor,
    ToolResult,
)
from haversack_vfs import InMemoryFilesystem

SUITE = "executor"
OVERHEAD_TARGET_S = 15e-6
GROWTH_TARGET = 1.2
WINDOW = 100


@dataclass(frozen=True)
class ReadArgs:
    path: str
    limit: int = 10


@dataclass(frozen=True)
class ReadOut:
    path: str
    lines: int


@dataclass(frozen=True)
class Plan:
    goal: str


@dataclass(frozen=True)
class Step:
    title: str


@dataclass(frozen=True)
class Budget:
    left: int


def read_file(params: ReadArgs, *, context: Any) -> ToolResult[ReadOut]:
    return ToolResult.ok(ReadOut(params.path, params.limit))


def _prompt() -> Prompt:
    tool = Tool[ReadArgs, ReadOut](name="read_file", description="Read a file.", handler=read_file)
    return Prompt(
        ns="bench",
        key="executor",
        sections=[MarkdownSection(title="Files", key="files", template="Read.", tools=[tool])],
        policies=[ReadBeforeWritePolicy(read_tools=["read_file"], write_tools=["write_file"])],
    )


RENDERED = _prompt().render()


def _executor() -> ToolExecutor:
    """A fresh session (a few STATE slices) and filesystem, and an executor over them."""
    session = Session()
    session[Plan].seed([Plan("ship it")])
    session[Step].extend([Step("read"), Step("edit"), Step("test")])
    session[Budget].append(Budget(100))
    fs = InMemoryFilesystem()
    fs.write("README.md", "hello\n", mode="create")
    registry = ResourceRegistry.of(Binding.instance(Filesystem, fs))
    return ToolExecutor(RENDERED, session=session, resources=registry)


def _arguments(count: int) -> list[str]:
    return [f'{{"path": "src/file{i}.py", "limit": 10}}' for i in range(count)]


def _timed_each(fn: Any, items: list[Any]) -> float:
    """Median seconds of ``fn(item)`` over ``items``, each call timed on its own.

    The median per call (not a batch mean) keeps preemption by other processes out of
    the figure, which matters on shared machines.
    """
    clock = time.perf_counter_ns
    times = []
    for item in items:
        start = clock()
        fn(item)
        times.append(clock() - start)
    return statistics.median(times) / 1e9


def _per_call(batch: int, repeats: int) -> tuple[Sample, Sample]:
    """Per-call medians of ``execute`` and of the direct handler call, batch by batch."""
    executor = _executor()
    context = ToolContext(
        prompt=RENDERED.prompt,
        rendered_prompt=RENDERED,
        session=Session(),
        resources=executor.resources,
    )
    arguments = _arguments(batch * (repeats + 1))
    params = [ReadArgs(f"src/file{i}.py") for i in range(batch)]

    def execute(text: str) -> None:
        executor.execute("read_file", text)

    def direct(item: ReadArgs) -> None:
        read_file(item, context=context)

    executed: list[float] = []
    floor: list[float] = []
    gc_was_enabled = gc.isenabled()
    gc.disable()
    try:
        for rep in range(repeats + 1):  # the first batch warms up
            chunk = arguments[rep * batch : (rep + 1) * batch]
            e, d = _timed_each(execute, chunk), _timed_each(direct, params)
            if rep:
                executed.append(e)
                floor.append(d)
    finally:
        if gc_was_enabled:
            gc.enable()
    executor.close()
    return Sample(tuple(executed)), Sample(tuple(floor))


def _call_times(calls: int) -> list[float]:
    """Seconds taken by each call of one fresh session, in order."""
    executor = _executor()
    arguments = _arguments(calls)
    times: list[float] = []
    clock = time.perf_counter_ns
    gc_was_enabled = gc.isenabled()
    gc.disable()
    try:
        for text in arguments:
            start = clock()
            executor.execute("read_file", text)
            times.append((clock() - start) / 1e9)
    finally:
        if gc_was_enabled:
            gc.enable()
    executor.close()
    return times


def _growth(calls: int, repetitions: int) -> tuple[float, Sample, Sample]:
    """Median of the first ``WINDOW`` calls vs the last ``WINDOW``, over fresh sessions."""
    early: list[float] = []
    late: list[float] = []
    for _ in range(repetitions):
        times = _call_times(calls)
        early.append(statistics.median(times[:WINDOW]))
        late.append(statistics.median(times[-WINDOW:]))
    early_sample, late_sample = Sample(tuple(early)), Sample(tuple(late))
    return late_sample.median_s / early_sample.median_s, early_sample, late_sample


def run(quick: bool) -> list[Result]:
    """Harness entry point."""
    batch, repeats = (200, 5) if quick else (500, 20)
    executed, direct = _per_call(batch, repeats)
    overhead = Sample(
        tuple(max(0.0, e - d) for e, d in zip(executed.times_s, direct.times_s, strict=True))
    )
    results = [
        result(SUITE, "handler called directly", direct, notes="the floor, per call"),
        result(
            SUITE,
            "execute() per call",
            executed,
            floor=("handler called directly", direct),
            notes="1 policy (ReadBeforeWrite), snapshots on (3 STATE slices + InMemoryFilesystem)",
        ),
        result(
            SUITE,
            "execute() overhead per call",
            overhead,
            max_median_s=OVERHEAD_TARGET_S,
            notes="median execute() minus median direct call, batch by batch; 39 µs when "
            "issue 18 was filed, 18.9 µs before policy state left the session slices",
        ),
    ]
    for calls, reps in ((1_000, 3 if quick else 10), (10_000, 1 if quick else 3)):
        _ratio, early, late = _growth(calls, reps)
        label = f"{calls:,}"
        results.append(result(SUITE, f"calls 1-{WINDOW} of {label} (median per call)", early))
        results.append(
            result(
                SUITE,
                f"calls {calls - WINDOW + 1:,}-{label} of {label} (median per call)",
                late,
                floor=(f"calls 1-{WINDOW} of {label}", early),
                max_ratio=GROWTH_TARGET,
                notes=f"{reps} fresh session(s); each call records a new path",
            )
        )
    return results
