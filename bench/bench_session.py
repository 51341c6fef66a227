"""Session benchmark: snapshot + append + restore, and appends, at history 10 / 1,000 / 10,000.

The reference library's session snapshot grew with history (its planning calls slowed 10-25x
over 1,000 calls). Here a snapshot shares the slices' immutable contents, so the per-call cost
must stay flat as history grows: the targets compare each length with length 10 measured in the
same run. Each timed run does a batch of ``BATCH`` operations; figures are per batch.
"""

from __future__ import annotations

import sys
from dataclasses import dataclass
from functools import partial
from pathlib import Path

from haversack._session import Session

if str(Path(__file__).resolve().parent) not in sys.path:
    sys.path.insert(0, str(Path(__file__).resolve().parent))

from _harness import Result, Sample, measure, result

SUITE = "session"
BATCH = 1_000
LENGTHS = (10, 1_000, 10_000)
MAX_RATIO = 3.0  # vs length 10; generous for noise, far below the O(n) growth it guards against


@dataclass(frozen=True, slots=True)
class PlanStep:
    """A STATE item (rolled back on failure)."""

    title: str


@dataclass(frozen=True, slots=True)
class ToolCalled:
    """A LOG event (kept on rollback), one per tool call."""

    name: str


def _session(history: int) -> Session:
    session = Session()
    session.register_log(ToolCalled)
    session[PlanStep].seed(PlanStep(f"step {i}") for i in range(history))
    for i in range(history):
        session.dispatch(ToolCalled(f"tool {i}"))
    return session


def _tool_call_cycle(session: Session) -> None:
    """What the executor does around one failing mutating call, ``BATCH`` times."""
    step, event = PlanStep("new"), ToolCalled("edit")
    steps = session[PlanStep]
    for _ in range(BATCH):
        snapshot = session.snapshot()
        steps.append(step)
        session.dispatch(event)
        session.restore(snapshot)


def _state_appends(session: Session) -> None:
    steps, step = session[PlanStep], PlanStep("new")
    snapshot = session.snapshot()
    for _ in range(BATCH):
        steps.append(step)
    session.restore(snapshot)  # keep the history at its nominal length for the next run


def _log_dispatches(session: Session) -> None:
    event = ToolCalled("edit")
    for _ in range(BATCH):
        session.dispatch(event)


def _tuple_copy_appends(history: int) -> None:
    """What a tuple-per-append slice would cost: the O(n) design this replaced (reference)."""
    items = tuple(range(history))
    for _ in range(BATCH):
        items = (*items, 0)


def samples(quick: bool) -> dict[str, Sample]:
    """Raw samples keyed by name (usable without the results machinery)."""
    repeats = 5 if quick else 30
    out: dict[str, Sample] = {}
    for n in LENGTHS:
        # The LOG slice grows during the runs; that is the realistic case (one event per call).
        cycle_session, append_session, log_session = _session(n), _session(n), _session(n)
        out[f"cycle@{n}"] = measure(partial(_tool_call_cycle, cycle_session), repeats=repeats)
        out[f"state@{n}"] = measure(partial(_state_appends, append_session), repeats=repeats)
        out[f"log@{n}"] = measure(partial(_log_dispatches, log_session), repeats=repeats)
        out[f"tuple@{n}"] = measure(partial(_tuple_copy_appends, n), repeats=repeats)
    return out


LONG_CALLS = 10_000
LONG_FILE_BYTES = 260 * 1024  # the 260 KB file: 1,000 reads grew memory by 410 MiB
FLAT_MEMORY_TARGET = 1.1


def long_session(calls: int = LONG_CALLS) -> tuple[list[int], float]:
    """``calls`` read_file calls of a 260 KB file through one executor with the default log.

    Returns the Python memory held (``tracemalloc``, after a collection) at the end of each
    thousand calls, and the seconds per call of the whole run.
    """
    import gc
    import time
    import tracemalloc

    from haversack import Filesystem, ToolExecutor
    from haversack._packs import compose

    prompt = compose(ns="bench", key="long", packs=["vfs"], config={"vfs": {}})
    executor = ToolExecutor(prompt.render(), session=Session())
    fs: Filesystem = executor.resources.get(Filesystem)  # type: ignore[type-abstract]
    line = "x" * 99 + "\n"
    fs.write("big.txt", line * (LONG_FILE_BYTES // len(line)))
    marks: list[int] = []
    gc.collect()
    tracemalloc.start()
    start = time.perf_counter()
    try:
        for index in range(1, calls + 1):
            outcome = executor.execute("read_file", {"path": "big.txt"})
            if not outcome.success:
                raise RuntimeError(outcome.message)
            if index % 1000 == 0:
                gc.collect()
                marks.append(tracemalloc.get_traced_memory()[0])
    finally:
        tracemalloc.stop()
        executor.close()
    return marks, (time.perf_counter() - start) / calls


def _long_session_results() -> list[Result]:
    marks, per_call = long_session()
    first, last = marks[0], marks[-1]
    ratio = last / first
    return [
        Result(
            suite=SUITE,
            name=f"{LONG_CALLS:,} read_file calls of a 260 KB file: memory after the last "
            "thousand / after the first",
            value=round(ratio, 3),
            unit="x",
            target=f"≤ {FLAT_MEMORY_TARGET}x",
            passed=ratio <= FLAT_MEMORY_TARGET,
            notes=f"Python memory held: {first / 2**20:.1f} MiB after 1,000 calls, "
            f"{last / 2**20:.1f} MiB after {LONG_CALLS:,} (default ToolLog: newest 1,000 "
            f"calls as previews); {per_call * 1e6:.0f} µs per call under tracemalloc",
        )
    ]


def run(quick: bool) -> list[Result]:
    """The suite's figures for ``bench/run.py``."""
    s = samples(quick)
    results: list[Result] = _long_session_results()
    labels = {
        "cycle": "snapshot + append + log event + restore",
        "state": "STATE slice append",
        "log": "LOG event dispatch (append reducer)",
    }
    for kind, label in labels.items():
        floor_name = f"{BATCH:,} x {label}, history 10"
        results.append(result(SUITE, floor_name, s[f"{kind}@10"], notes="floor for this row group"))
        for n in LENGTHS[1:]:
            results.append(
                result(
                    SUITE,
                    f"{BATCH:,} x {label}, history {n:,}",
                    s[f"{kind}@{n}"],
                    floor=(floor_name, s[f"{kind}@10"]),
                    max_ratio=MAX_RATIO,
                    notes="flat in history: structural sharing",
                )
            )
    for n in LENGTHS:
        results.append(
            result(
                SUITE,
                f"{BATCH:,} x tuple-copy append, history {n:,}",
                s[f"tuple@{n}"],
                notes="reference: the O(n) per-append design avoided",
            )
        )
    return results


if __name__ == "__main__":
    for name, sample in samples(quick="--quick" in sys.argv).items():
        per_op_us = sample.median_s / BATCH * 1e6
        print(
            f"{name:>12}: {sample.median_s * 1e3:8.3f} ms per {BATCH} ops ({per_op_us:.3f} µs/op)"
        )
