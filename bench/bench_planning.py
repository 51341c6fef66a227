"""Planning pack: 1,000 add/update calls through the ToolExecutor in one session.

The reference library's planning calls slowed 10-25x over 1,000 calls (its snapshot
serialised history, and every result re-rendered the whole plan). Here the per-call cost must
stay flat: the median of calls 901-1,000 within 1.2x of calls 1-100, measured in the same
session. Two configurations: the default limits (the plan fills to its 100-step cap) and
``max_steps=1000`` (the plan grows to 500 steps). Each session is run several times and each
call's time is the median over the runs, so one slow moment does not decide the figure.
"""

from __future__ import annotations

import gc
import statistics
import sys
import time
from pathlib import Path
from typing import Any

from haversack import Prompt, Section, Session, ToolExecutor, ToolResult, tool
from haversack_planning import PlanningConfig, planning_section

if str(Path(__file__).resolve().parent) not in sys.path:
    sys.path.insert(0, str(Path(__file__).resolve().parent))

from _harness import Result, Sample, result

SUITE = "planning"
CALLS = 1_000
WINDOW = 100
MAX_RATIO = 1.2


@tool
def noop(params: None, *, context: Any) -> ToolResult[None]:
    """Do nothing (the executor's fixed cost per call)."""
    return ToolResult.ok(None, "ok")


def _calls(max_steps: int) -> list[tuple[str, dict[str, Any]]]:
    """Alternate adding one step and updating one while the plan can grow, then only update.

    Updates cycle through statuses and titles but never finish every step, so the plan stays
    active for all 1,000 calls.
    """
    out: list[tuple[str, dict[str, Any]]] = []
    steps = 0
    for i in range(CALLS):
        if i % 2 == 0 and steps < max_steps:
            steps += 1
            out.append(("planning_add_step", {"steps": [f"Step number {steps}"]}))
        elif i % 3 == 0:
            out.append(
                ("planning_update_step", {"step_id": 1 + i % steps, "title": f"Renamed {i}"})
            )
        else:
            status = "in_progress" if i % 5 else "done"
            out.append(("planning_update_step", {"step_id": 1 + (i * 7) % steps, "status": status}))
    return out


def _one_session(config: PlanningConfig, calls: list[tuple[str, dict[str, Any]]]) -> list[float]:
    rendered = Prompt(ns="bench", key="planning", sections=[planning_section(config)]).render()
    session = Session()
    times: list[float] = []
    with ToolExecutor(rendered, session=session) as executor:
        executor.execute("planning_setup_plan", {"objective": "Benchmark the planning pack"})
        gc.collect()
        gc.disable()
        try:
            for name, arguments in calls:
                start = time.perf_counter_ns()
                outcome = executor.execute(name, arguments)
                times.append((time.perf_counter_ns() - start) / 1e9)
                if not outcome.success:
                    raise RuntimeError(f"{name} {arguments} failed: {outcome.message}")
        finally:
            gc.enable()
    return times


def per_call(config: PlanningConfig, repeats: int) -> list[float]:
    """For each of the 1,000 calls, its median time over ``repeats`` fresh sessions."""
    calls = _calls(config.max_steps)
    runs = [_one_session(config, calls) for _ in range(repeats)]
    return [statistics.median(run[i] for run in runs) for i in range(CALLS)]


def _noop_floor(repeats: int) -> Sample:
    rendered = Prompt(
        ns="bench", key="noop", sections=[Section(title="Noop", key="noop", tools=[noop])]
    ).render()
    with ToolExecutor(rendered, session=Session()) as executor:
        for _ in range(20):
            executor.execute("noop", {})
        gc.collect()
        gc.disable()
        times = []
        try:
            for _ in range(repeats * WINDOW):
                start = time.perf_counter_ns()
                executor.execute("noop", {})
                times.append((time.perf_counter_ns() - start) / 1e9)
        finally:
            gc.enable()
    return Sample(tuple(times))


def run(quick: bool) -> list[Result]:
    """The suite's figures for ``bench/run.py``."""
    repeats = 3 if quick else 15
    floor = _noop_floor(repeats)
    floor_name = "executor call of a no-op tool"
    results = [result(SUITE, floor_name, floor, notes="floor: the executor's fixed cost")]
    configs = {
        "default limits (plan fills to 100 steps)": PlanningConfig(),
        "max_steps=1000 (plan grows to 500 steps)": PlanningConfig(max_steps=1_000),
    }
    for label, config in configs.items():
        times = per_call(config, repeats)
        first = Sample(tuple(times[:WINDOW]))
        last = Sample(tuple(times[-WINDOW:]))
        first_name = f"planning call, calls 1-{WINDOW}, {label}"
        results.append(
            result(
                SUITE,
                first_name,
                first,
                floor=(floor_name, floor),
                notes="per call; median over runs of the same session",
            )
        )
        results.append(
            result(
                SUITE,
                f"planning call, calls {CALLS - WINDOW + 1}-{CALLS}, {label}",
                last,
                floor=(first_name, first),
                max_ratio=MAX_RATIO,
                notes="flat: long plans render only the changed steps",
            )
        )
    return results


if __name__ == "__main__":
    for r in run(quick="--quick" in sys.argv):
        ratio = f"{r.ratio:.2f}x" if r.ratio is not None else ""
        median = f"{(r.median_s or 0) * 1e6:8.1f} µs"
        print(f"{r.name:<80} {median} {ratio} {r.passed}")
